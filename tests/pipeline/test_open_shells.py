"""A window whose frame sits 30 mm into its wall, both exported open, as Vectorworks 2013 writes
them (issue 40: the one undecided pair left of a Vectorworks model at a 2 mm band). Made here,
in metres, with the same topology as that export (the model itself is GPL and not committed):

- the wall: a box whose window opening is filled by two plugs sharing the opening's rims, one
  per wall layer (its faces: the box with a hole in each face, the rims closed by a face each,
  the opening's sides, and one face between the layers): 12 edges used by three faces, so the
  wall is neither watertight nor oriented;
- the window: a frame, a ring around the opening 30 mm wider on every side and as deep as the
  wall, whose front face carries a vertex on the inside of an edge of a side face (a
  T-junction: a hole of no width), and a pane, a sheet in the opening.

Only the surfaces of open parts count for the triangle test: the frame's faces lie on the wall's
(the front and back faces, the opening's sides) and cross none of them, so it ends undecided, and
no crossing settles it. The closed shells the faces hold (`gjkcli.engine.shells`) do: the frame
is a closed ring once its T-junction is split, the wall a closed box (and its plugs), and a point
of the ring lies in both, its distances to the faces of each adding up to more than the band: a
collision. A frame only 1.5 mm
into the wall is not called one.
"""
from __future__ import annotations

import numpy as np
import pytest

trimesh = pytest.importorskip("trimesh")
shapely_geometry = pytest.importorskip("shapely.geometry")

from fits import checked_pair  # noqa: E402
from gjkcli.engine.exact import Mesh, exact_query  # noqa: E402
from gjkcli.engine.results import Status  # noqa: E402
from gjkcli.engine.shells import closed_shells, material, welded  # noqa: E402
from gjkcli.engine.sheet import open_crossing  # noqa: E402
from gjkcli.pipeline.policy import EXIT_SHELLS_DEEP  # noqa: E402

BAND = 0.002
# the wall: x along it, y through it (two layers, 0.14 and 0.06), z up; the opening
L, T, LAYER, H = 10.0, 0.2, 0.14, 3.0
X0, X1, Z0, Z1 = 4.0, 6.0, 0.9, 2.1
ORIGIN = np.array([1877.25, 873.15, 3000.0]) * 1e-3

# the wall's faces as the export writes them (vertex roles below)
WALL_FACES = [
    [0, 1, 2], [0, 2, 3], [2, 1, 4], [2, 4, 5], [6, 5, 4], [6, 4, 7], [7, 0, 3], [7, 3, 6],
    [0, 7, 8], [0, 8, 9], [7, 4, 10], [7, 10, 8], [4, 1, 11], [4, 11, 10], [9, 11, 1], [9, 1, 0],
    [11, 9, 8], [11, 8, 10], [11, 12, 13], [11, 13, 9], [10, 14, 12], [10, 12, 11], [9, 13, 15],
    [9, 15, 8], [15, 13, 12], [15, 12, 14], [8, 15, 14], [8, 14, 10], [2, 5, 16], [2, 16, 17],
    [5, 6, 18], [5, 18, 16], [6, 3, 19], [6, 19, 18], [17, 19, 3], [17, 3, 2], [19, 13, 12],
    [19, 12, 17], [17, 12, 14], [17, 14, 16], [18, 15, 13], [18, 13, 19], [16, 14, 15],
    [16, 15, 18], [19, 17, 16], [19, 16, 18]]


def _wall() -> trimesh.Trimesh:
    v = np.array([
        (L, T, 0), (L, T, H), (L, 0, H), (L, 0, 0), (0, T, H), (0, 0, H), (0, 0, 0), (0, T, 0),
        (X0, T, Z0), (X1, T, Z0), (X0, T, Z1), (X1, T, Z1),
        (X1, LAYER, Z1), (X1, LAYER, Z0), (X0, LAYER, Z1), (X0, LAYER, Z0),
        (X0, 0, Z1), (X1, 0, Z1), (X0, 0, Z0), (X1, 0, Z0)], dtype=float)
    return trimesh.Trimesh(v + ORIGIN, WALL_FACES, process=False)


# the frame's inner sides lie this far inside the opening, as the export's rounding put them
# (0.01 um: 6019.33161 against the wall's 6019.3316 mm); flush to the last digit, the surfaces
# meet without crossing and the triangle test calls them touching
RIM = 1e-8


def _window(into: float) -> trimesh.Trimesh:
    """A frame reaching `into` past the opening on every side, through the wall's depth, with a
    T-junction on its front face, and a pane in the opening at mid-depth."""
    Polygon = shapely_geometry.Polygon
    ring = Polygon([(X0 - into, Z0 - into), (X1 + into, Z0 - into), (X1 + into, Z1 + into),
                    (X0 - into, Z1 + into)], [[(X0 + RIM, Z0), (X1 - RIM, Z0), (X1 - RIM, Z1), (X0 + RIM, Z1)]])
    m = trimesh.creation.extrude_polygon(ring, T)
    v = m.vertices[:, [0, 2, 1]]  # the extrusion's axis through the wall
    f = m.faces[:, ::-1]  # the axes swapped: wound back outward
    # a T-junction: the front face's triangle on the frame's outer top edge split at its midpoint
    top = np.flatnonzero(np.all(np.isclose(v[f][:, :, 1], T), axis=1)
                         & (np.isclose(v[f][:, :, 2], Z1 + into).sum(axis=1) == 2))[0]
    a, b, c = f[top]
    corners = [(a, b, c), (b, c, a), (c, a, b)]
    a, b, c = next(t for t in corners if np.isclose(v[t[0], 2], Z1 + into) and np.isclose(v[t[1], 2], Z1 + into))
    mid = len(v)
    v = np.vstack([v, 0.5 * (v[a] + v[b])])
    f = np.vstack([np.delete(f, top, axis=0), [(a, mid, c), (mid, b, c)]])
    # the pane
    p = len(v)
    v = np.vstack([v, [(X0, T / 2, Z0), (X1, T / 2, Z0), (X1, T / 2, Z1), (X0, T / 2, Z1)]])
    f = np.vstack([f, [(p, p + 1, p + 2), (p, p + 2, p + 3)]])
    return trimesh.Trimesh(v + ORIGIN, f, process=False)


def _meshes(into: float):
    w, g = _wall(), _window(into)
    return Mesh(w.vertices, w.faces, name="wall"), Mesh(g.vertices, g.faces, name="window")


def test_both_parts_are_open_and_their_faces_hold_closed_shells():
    wall, window = _meshes(0.03)
    assert not wall.solid and not window.solid
    # the wall: the box, the outer plug and both plugs together; the window: its frame
    shells = closed_shells(*welded(wall.vertices, wall.faces, wall.size))
    assert sorted(len(s) for s in shells) == [12, 20, 28]
    shells = closed_shells(*welded(window.vertices, window.faces, window.size))
    assert len(shells) == 1
    # the frame's material, the wall's (the box and its plugs), and the space beside the wall
    inside_frame = ORIGIN + (X0 - 0.015, T / 2, 1.5)
    assert material(window, [inside_frame]).all() and material(wall, [inside_frame]).all()
    assert not material(window, [ORIGIN + (5.0, T / 2, 1.5)]).any()
    assert not material(wall, [ORIGIN + (5.0, T + 0.01, 1.5)]).any()


def test_the_triangle_test_and_the_crossing_alone_leave_it_undecided():
    wall, window = _meshes(0.03)
    r = exact_query(wall, window, tolerance=BAND)
    assert r.status is Status.UNDECIDED
    assert open_crossing(wall, window, band=BAND) is None


def _checked(tmp_path, into: float):
    return checked_pair(tmp_path, _wall(), _window(into), BAND, ("wall", "window"))


def test_a_frame_30_mm_into_its_wall_is_a_collision(tmp_path):
    pair = _checked(tmp_path, 0.03)
    assert pair.status is Status.COLLISION, pair.note
    assert pair.result.exit == EXIT_SHELLS_DEEP
    # the witness, judged by the construction: inside the frame's ring and the wall's box, its
    # distances to the frame's faces and to the wall's (its outer faces, the opening) adding up
    # to more than the band (each bounded below: the opening's rectangle by its farthest side)
    p = np.asarray(pair.result.certificate.point) - ORIGIN
    x, y, z = p
    in_ring = (X0 - 0.03 < x < X1 + 0.03) and (Z0 - 0.03 < z < Z1 + 0.03) and not (X0 < x < X1 and Z0 < z < Z1)
    assert in_ring and 0 < y < T
    to_opening = max(X0 - x, x - X1, Z0 - z, z - Z1)
    to_frame = min(y, T - y, abs(x - (X0 - 0.03)), abs(x - (X1 + 0.03)), abs(z - (Z0 - 0.03)),
                   abs(z - (Z1 + 0.03)), to_opening)
    to_wall = min(y, T - y, to_opening)
    assert to_frame + to_wall > BAND
    assert pair.result.depth > BAND
    # python-fcl's distance from the point to each part's triangles, an independent judge: they
    # add up to the depth reported
    fcl = pytest.importorskip("fcl")
    judged = 0.0
    for mesh in (_wall(), _window(0.03)):
        bvh = fcl.BVHModel()
        bvh.beginModel(len(mesh.vertices), len(mesh.faces))
        bvh.addSubModel(mesh.vertices, mesh.faces)
        bvh.endModel()
        judged += fcl.distance(fcl.CollisionObject(bvh), fcl.CollisionObject(fcl.Sphere(1e-9), fcl.Transform(
            np.asarray(pair.result.certificate.point))), fcl.DistanceRequest(), fcl.DistanceResult())
    assert judged > pair.result.depth - 1e-6


def test_a_frame_one_and_a_half_bands_into_its_wall_is_a_collision(tmp_path):
    """3 mm into the wall at a 2 mm band: where the frame overlaps the wall, a strip 3 mm wide,
    no point lies farther than 1.5 mm from the faces of both (the strip's middle), but there its
    distances to the frame's faces and to the wall's add up to 3 mm: a move of the frame shorter
    than that leaves the two balls about it overlapping (the move that parts them is the wall's
    thickness). The shells' search asked for a point farther than the band from both before."""
    pair = _checked(tmp_path, 0.003)
    assert pair.status is Status.COLLISION, pair.note
    assert pair.result.exit == EXIT_SHELLS_DEEP
    assert BAND < pair.result.depth <= 0.003 * (1 + 1e-9)
    p = np.asarray(pair.result.certificate.point) - ORIGIN
    x, y, z = p
    to_opening = max(X0 - x, x - X1, Z0 - z, z - Z1)
    assert 0 < to_opening < 0.003 and 0 < y < T  # in the strip
    fcl = pytest.importorskip("fcl")
    judged = []
    for mesh in (_wall(), _window(0.003)):
        bvh = fcl.BVHModel()
        bvh.beginModel(len(mesh.vertices), len(mesh.faces))
        bvh.addSubModel(mesh.vertices, mesh.faces)
        bvh.endModel()
        judged.append(fcl.distance(fcl.CollisionObject(bvh), fcl.CollisionObject(fcl.Sphere(1e-9), fcl.Transform(
            np.asarray(pair.result.certificate.point))), fcl.DistanceRequest(), fcl.DistanceResult()))
    assert min(judged) <= BAND  # no point of the strip is farther than the band from both
    assert sum(judged) > BAND and abs(sum(judged) - pair.result.depth) < 1e-6


def test_a_frame_within_the_band_of_its_wall_is_no_collision(tmp_path):
    pair = _checked(tmp_path, 0.0015)
    assert pair.status is not Status.COLLISION, pair.note


def _ring(into: float) -> tuple:
    """(volume, mean thickness 2 x volume / area) of the frame's ring, `into` wide about the
    opening and as deep as the wall: the solid the window's and the wall's shells share."""
    section = (X1 - X0 + 2 * into) * (Z1 - Z0 + 2 * into) - (X1 - X0) * (Z1 - Z0)
    volume = section * T
    area = 2 * section + T * (2 * (X1 - X0 + Z1 - Z0 + 4 * into) + 2 * (X1 - X0 + Z1 - Z0))
    return volume, 2 * volume / area


@pytest.mark.parametrize("band", [0.03, 0.05, 0.1])
def test_a_frame_30_mm_into_its_wall_at_a_wider_band_is_a_fit(band):
    """At bands from the strip's width up (coordinators' 30 and 50 mm), no point and no pair of
    balls proves a depth beyond the band, and no move within it parts them (the way out is the
    wall's thickness): undecided before. Judged as two closed parts are, by the mean thickness of
    the common solid of the shells' material: the frame's ring (the wall's material, its box,
    holds the whole frame), 26.1 mm, within the band: touching, as VectorWorks 2013's window AW6
    in wall W1 (whose numbers these are)."""
    from gjkcli.pipeline.policy import EXIT_SHELLS_THIN, settle

    wall, window = _meshes(0.03)
    raw = exact_query(wall, window, tolerance=band)
    r = settle(raw, wall, window)
    assert raw.status is Status.UNDECIDED
    assert r.status is Status.TOUCHING, r.note
    assert r.exit == EXIT_SHELLS_THIN and r.certificate is None
    volume, thickness = _ring(0.03)
    assert f"share a volume of {volume:.6g}" in r.note
    assert f"mean thickness 2 x volume / area {thickness:.6g} within the band" in r.note
    assert "the closed shells of 'wall' (3) and 'window' (1)" in r.note


def test_a_frame_30_mm_into_its_wall_at_a_band_between_its_mean_and_its_width_is_a_collision():
    """A band between the strip's mean thickness (26.1 mm) and its width (30 mm): the balls
    about a point of the strip reach its width, beyond the band, before the mean is asked."""
    from gjkcli.pipeline.policy import settle

    wall, window = _meshes(0.03)
    r = settle(exact_query(wall, window, tolerance=0.028), wall, window)
    assert r.status is Status.COLLISION and r.exit == EXIT_SHELLS_DEEP, r.note
