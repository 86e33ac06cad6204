"""A window's frame in the opening of a curved wall, as VectorWorks exports it
(06-03-01_windows_in_curved_wall_vw.ifc, issue 40): the frame is open surfaces, each triangle
written twice (both windings), lying on the opening's head, sill and jambs; the wall is a faceted
curve, so the opening's faces are cut into many triangles. The triangle test alone leaves the
pair undecided, and the open part's depth bound (`gjkcli.engine.sheet.sheet_depth`) split the
frame's faces down to the band along every edge of the wall's triangles they lie across: at half
a millimetre it gave up after 200,000 pieces. A piece lying on a face is now moved off it
(half the band along the nearest triangles' outward normals) and, wholly outside then, proves
no point of it deeper than the move.

The wall is made here by manifold3d (a faceted ring less a box), the frame by hand, in metres.
The frame pushed into the wall by e reaches e deep by construction: judged again by the exact
signed distance of tests/exact_distance.py on points of the frame (touching: none deeper than
the bound; a collision: its witness deeper than the band).
"""
from __future__ import annotations

import numpy as np
import pytest

manifold3d = pytest.importorskip("manifold3d")

from exact_distance import signed_distance, unsigned_distance, winding_number  # noqa: E402
from fits import checked_pair  # noqa: E402
from gjkcli.engine.exact import Mesh, exact_query  # noqa: E402
from gjkcli.engine.results import Status  # noqa: E402
from gjkcli.engine.sheet import sheet_depth  # noqa: E402
from gjkcli.pipeline.policy import EXIT_SHEET  # noqa: E402

# the ring's radius, thickness, height and facets; the opening's half width and sill and head
# heights; the frame's depth within the wall
R, T, H, FACETS = 5.0, 0.15, 2.5, 180
W, SILL, HEAD = 0.38, 0.8, 2.044
Y0, Y1 = 4.88, 4.96
FINE = 0.0005  # the band at which the old bound gave up
BAND = 0.002


class _Part:
    def __init__(self, vertices, faces):
        self.vertices = np.asarray(vertices, dtype=np.float64)
        self.faces = np.asarray(faces, dtype=np.int64)


def _wall() -> _Part:
    outer = manifold3d.Manifold.cylinder(H, R, R, FACETS)
    inner = manifold3d.Manifold.cylinder(H + 1.0, R - T, R - T, FACETS).translate((0.0, 0.0, -0.5))
    hole = manifold3d.Manifold.cube((2 * W, 1.0, HEAD - SILL)).translate((-W, R - 0.5, SILL))
    m = (outer - inner - hole).to_mesh64()
    return _Part(np.asarray(m.vert_properties)[:, :3], np.asarray(m.tri_verts))


def _frame(shift=(0.0, 0.0, 0.0)) -> _Part:
    """The frame's head, sill and jambs on the opening's faces and a pane across it, moved by
    `shift`; every triangle twice, once per winding."""
    x, y, z = (-W, W), (Y0, Y1), (SILL, HEAD)
    quads = [[(x[0], y[0], h), (x[1], y[0], h), (x[1], y[1], h), (x[0], y[1], h)] for h in z]
    quads += [[(s, y[0], z[0]), (s, y[1], z[0]), (s, y[1], z[1]), (s, y[0], z[1])] for s in x]
    mid = 0.5 * (Y0 + Y1)
    quads.append([(x[0], mid, z[0]), (x[1], mid, z[0]), (x[1], mid, z[1]), (x[0], mid, z[1])])
    v = np.array(quads, dtype=np.float64).reshape(-1, 3) + np.asarray(shift, dtype=np.float64)
    faces = []
    for q in range(len(quads)):
        a, b, c, d = 4 * q + np.arange(4)
        faces += [(a, b, c), (a, c, d), (a, c, b), (a, d, c)]
    return _Part(v, faces)


def _mesh(part, name):
    return Mesh(part.vertices, part.faces, name=name)


def _surface_points(part, per_edge: int = 10) -> np.ndarray:
    """Points spread over every triangle of the part (a grid in barycentric coordinates)."""
    i, j = np.meshgrid(np.arange(per_edge + 1), np.arange(per_edge + 1))
    keep = i + j <= per_edge
    u, v = i[keep] / per_edge, j[keep] / per_edge
    tris = part.vertices[part.faces]
    pts = tris[:, None, 0] + u[None, :, None] * (tris[:, None, 1] - tris[:, None, 0]) \
        + v[None, :, None] * (tris[:, None, 2] - tris[:, None, 0])
    return np.unique(pts.reshape(-1, 3), axis=0)


@pytest.fixture(scope="module")
def wall():
    return _wall()


def test_the_triangle_test_alone_leaves_the_frame_undecided(wall):
    w, f = _mesh(wall, "wall"), _mesh(_frame(), "frame")
    assert w.solid and not f.solid
    assert exact_query(w, f, tolerance=FINE).status is Status.UNDECIDED


def test_a_frame_on_its_opening_s_faces_is_bounded_within_half_a_millimetre(wall):
    got = sheet_depth(_mesh(_frame(), "frame"), _mesh(wall, "wall"), band=FINE)
    assert got.deep is None and got.upper is not None and got.upper <= FINE
    # settled by moving the pieces off the faces, not by splitting them down to the band
    assert got.pieces < 20_000


def test_the_run_answers_the_frame_in_its_opening_touching(tmp_path, wall):
    pair = checked_pair(tmp_path, wall, _frame(), FINE, ("wall", "frame"))
    assert pair.status is Status.TOUCHING, pair.note
    assert pair.result.exit == EXIT_SHEET and not pair.violation


@pytest.mark.parametrize("way", [(1, 0, 0), (-1, 0, 0), (0, 0, 1), (0, 0, -1)])
@pytest.mark.parametrize("depth", [0.5, 0.9, 1.1, 2.0])
def test_a_frame_pushed_into_the_wall_is_touching_under_the_band_and_a_collision_over(wall, way, depth):
    e = depth * BAND
    frame = _frame(np.asarray(way, dtype=np.float64) * e)
    got = sheet_depth(_mesh(frame, "frame"), _mesh(wall, "wall"), band=BAND)
    judge = _Judge(wall)
    if depth < 1:
        assert got.deep is None and got.upper is not None, got
        assert got.upper <= BAND
        # no point of the frame is deeper than the bound, and some are as deep as the push
        deepest = judge.deepest(frame)
        assert e * (1 - 1e-6) <= deepest <= got.upper
    else:
        assert got.deep is not None, got
        found, point = got.deep[0], got.deep[1]
        assert BAND < found <= e * (1 + 1e-9)
        assert judge.depth(point) > BAND


def _widened(e: float) -> _Part:
    """The frame wider than its opening by e on each side: its jambs e deep in the wall's, its
    head and sill across the jambs' planes into the wall (as ArchiCAD 9 exports a window in
    AC90R1-niedriha, 0.96 um past its opening's jamb at a band of 0.98 um)."""
    f = _frame()
    v = f.vertices.copy()
    v[:, 0] += np.sign(v[:, 0]) * e
    return _Part(v, f.faces)


@pytest.mark.parametrize("band", ["2 mm", "0.5 mm", "default"])
@pytest.mark.parametrize("depth", [0.5, 0.98, 1.02, 1.5])
def test_a_frame_wider_than_its_opening_is_touching_under_the_band_and_a_collision_over(wall, band, depth):
    """The frame's pieces across a jamb's plane, at the corner of the opening's head or sill: a
    move off the planes of the triangles nearest to them (the jamb's, then the head's it meets)
    settles them; the band the run takes by default (1e-7 of the pair's size) split them past
    the budget before, 300,000 pieces undecided."""
    w = _mesh(wall, "wall")
    band = {"2 mm": BAND, "0.5 mm": FINE, "default": 1e-7 * w.size}[band]
    e = depth * band
    frame = _widened(e)
    got = sheet_depth(_mesh(frame, "frame"), w, band=band)
    judge = _Judge(wall)
    if depth < 1:
        assert got.deep is None and got.upper is not None and got.upper <= band, got
        assert e * (1 - 1e-6) <= judge.deepest(frame) <= got.upper
        assert got.pieces <= 1_000
    else:
        assert got.deep is not None, got
        assert band < got.deep[0] <= e * (1 + 1e-9)
        assert judge.depth(got.deep[1]) > band


class _Judge:
    """Depths inside the wall by the exact signed distance, over the wall's triangles near the
    opening only (the far side of the ring lies metres away)."""

    def __init__(self, wall):
        tris = wall.vertices[wall.faces]
        near = np.abs(tris[:, :, 0]).min(axis=1) < 3 * W
        near &= tris[:, :, 1].max(axis=1) > 0
        self.whole = wall
        self.near = _Part(wall.vertices, wall.faces[near])

    def depth(self, point) -> float:
        return float(signed_distance(self.whole, np.atleast_2d(point))[0])

    def deepest(self, frame) -> float:
        pts = _surface_points(frame)
        # inside is decided by the whole wall, the distance by its triangles near the opening
        # (every nearer triangle is among them)
        inside = winding_number(self.whole.vertices, self.whole.faces, pts) > 0.5
        if not inside.any():
            return 0.0
        d = unsigned_distance(self.near.vertices, self.near.faces, pts[inside])
        return float(d.max())


def test_a_bound_that_gives_up_says_what_it_tried_and_what_would_settle_it(wall, monkeypatch):
    from gjkcli.engine import sheet
    from gjkcli.pipeline.policy import settle

    monkeypatch.setattr(sheet, "PIECES", 20)  # under the 34 it takes
    w, f = _mesh(wall, "wall"), _mesh(_frame(), "frame")
    got = settle(exact_query(w, f, tolerance=FINE), w, f)
    assert got.status is Status.UNDECIDED
    assert "pieces of it" in got.note and "move of half the band" in got.note
    assert "would settle it" in got.note


def test_a_triangle_written_twice_is_one_piece_whichever_vertices_hold_it(wall):
    frame = _frame()
    once = _Part(frame.vertices, np.concatenate([frame.faces[0::4], frame.faces[1::4]]))
    # the same triangles again, on a copy of the vertices, wound the other way
    n = len(frame.vertices)
    twice = _Part(np.concatenate([frame.vertices, frame.vertices]),
                  np.concatenate([once.faces, once.faces[:, ::-1] + n]))
    w = _mesh(wall, "wall")
    a = sheet_depth(_mesh(once, "once"), w, band=FINE)
    b = sheet_depth(_mesh(twice, "twice"), w, band=FINE)
    assert a.upper is not None and b.upper == a.upper and b.pieces == a.pieces


def _counted(monkeypatch):
    """Lists that grow by one at each call of the triangle test's depth search on the triangles
    and on the edges (`exact._deepest_on_triangles`, `exact._deepest_on_segments`), and of the
    open-surface bound's work (`sheet._sheet_depth`, not a call its kept answer serves)."""
    from gjkcli.engine import exact, sheet

    calls = {"triangles": [], "edges": [], "bound": []}
    for module, name, key in ((exact, "_deepest_on_triangles", "triangles"),
                              (exact, "_deepest_on_segments", "edges"), (sheet, "_sheet_depth", "bound")):
        inner = getattr(module, name, None)

        def wrapped(*args, _inner=inner, _key=key, **kwargs):
            calls[_key].append(1)
            return _inner(*args, **kwargs)

        monkeypatch.setattr(module, name, wrapped, raising=False)
    return calls


def test_the_open_surface_bound_is_asked_before_the_triangle_test_s_depth_search(tmp_path, wall, monkeypatch):
    """Issue 40 (speed): the frame lies on its opening's faces, its surfaces crossing the wall's
    within the band only. The open-surface bound, asked first, settles it: the triangle test's
    search of the frame's crossing triangles and edges for a point deeper than the band (its
    proving rounds, most of the pair's time) does not run, and the run's policy is given the
    bound's answer instead of bounding again. The answer is the same."""
    calls = _counted(monkeypatch)
    pair = checked_pair(tmp_path, wall, _frame(), BAND, ("wall", "frame"))
    assert pair.status is Status.TOUCHING and pair.result.exit == EXIT_SHEET, pair.note
    assert pair.result.depth_upper <= BAND
    assert calls == {"triangles": [], "edges": [], "bound": [1]}


def test_a_frame_pushed_through_the_band_is_still_searched_and_measured(tmp_path, wall, monkeypatch):
    """Surfaces crossing beyond the band mostly hide a point deeper than it: there the triangle
    test's own search runs first, as before, and finds it; the bound is not asked."""
    calls = _counted(monkeypatch)
    frame = _frame((0.0, 0.0, -3.0 * BAND))
    pair = checked_pair(tmp_path, wall, frame, BAND, ("wall", "frame"))
    assert pair.status is Status.COLLISION, pair.note
    assert pair.result.depth > BAND and _Judge(wall).depth(pair.result.point_b) > BAND
    assert calls["bound"] == [] and calls["triangles"]


def test_the_bound_s_kept_answer_serves_only_the_same_meshes_poses_and_band(wall, monkeypatch):
    calls = _counted(monkeypatch)
    w = _mesh(wall, "wall")
    on = sheet_depth(_mesh(_frame(), "frame"), w, band=BAND)
    assert on.upper is not None and len(calls["bound"]) == 1
    # the same arrays in new meshes (a run builds a part's mesh again after a while): kept
    assert sheet_depth(_mesh(_frame(), "frame"), _mesh(wall, "wall"), band=BAND) is on
    assert len(calls["bound"]) == 1
    down = np.eye(4)
    down[2, 3] = -1.5 * BAND
    assert sheet_depth(_mesh(_frame(), "frame"), w, pose_sheet=down, band=BAND).deep is not None
    assert sheet_depth(_mesh(_frame((0.0, 0.0, -1.5 * BAND)), "frame"), w, band=BAND).deep is not None
    assert sheet_depth(_mesh(_frame(), "frame"), w, band=FINE).upper <= FINE
    assert len(calls["bound"]) == 4
