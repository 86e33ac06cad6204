"""A closed mesh's flat convex faces (`gjkcli.engine.flatfaces`) and the depth bounds made of them.

Judged by brute force: a face's distance is the least of its triangles' exact point-triangle
distances; the bound of a piece is checked against the depth's definition (the distance to
the nearest boundary point, the least over every triangle) at points sampled over the piece,
and against the analytic depth of a slab's middle.
"""
from __future__ import annotations

import numpy as np
import pytest

trimesh = pytest.importorskip("trimesh")

from gjkcli.engine.flatfaces import ConvexFaces  # noqa: E402
from gjkcli.engine.sheet import point_triangle_distance  # noqa: E402


def _faces(mesh):
    tris = mesh.vertices[mesh.faces]
    cross = np.cross(tris[:, 1] - tris[:, 0], tris[:, 2] - tris[:, 0])
    outward = cross / np.linalg.norm(cross, axis=1)[:, None]
    return tris, ConvexFaces(tris, outward, np.asarray(mesh.faces), float(np.linalg.norm(mesh.extents)))


def _least(points, tris):
    """(N,) each point's distance to the nearest of the triangles, by brute force."""
    n, m = len(points), len(tris)
    d = point_triangle_distance(np.repeat(points, m, axis=0), np.tile(tris, (n, 1, 1)))
    return d.reshape(n, m).min(axis=1)


def _box(extents, at):
    box = trimesh.creation.box(extents=extents)
    box.apply_translation(at)
    return box


def test_a_box_has_six_convex_faces_and_their_distance_is_the_triangles_least():
    rng = np.random.default_rng(7)
    box = _box((0.1, 16.885, 3.0), (3.1669568982194096, 0.9424829278774, 1.5))
    tris, flat = _faces(box)
    assert len(np.unique(flat.group)) == 6
    for g in np.unique(flat.group).tolist():
        face = flat.face(g)
        assert face is not None
        members = tris[flat.group == g]
        points = box.bounds[0] + rng.uniform(-0.5, 1.5, size=(400, 3)) * box.extents
        exact = _least(points, members)
        got = face.distance(points)
        assert (got >= exact - 1e-12).all()  # an upper bound...
        assert (got <= exact + face.margin + 1e-12).all()  # ...and the face's own distance
        assert face.margin < 1e-12


def _prism(outline, height):
    """A closed prism over a 2D outline (counter-clockwise), its caps triangulated by trimesh."""
    from shapely.geometry import Polygon

    return trimesh.creation.extrude_polygon(Polygon(outline), height)


def test_an_l_shaped_or_holed_face_is_not_taken_for_convex():
    pytest.importorskip("shapely")
    ell = _prism([(0, 0), (2, 0), (2, 1), (1, 1), (1, 2), (0, 2)], 0.5)
    tris, flat = _faces(ell)
    caps = [g for g in np.unique(flat.group).tolist() if (flat.group == g).sum() > 2]
    assert len(caps) == 2  # the L's top and bottom, four triangles each
    assert all(flat.face(g) is None for g in caps)
    sides = [g for g in np.unique(flat.group).tolist() if (flat.group == g).sum() == 2]
    assert len(sides) == 6 and all(flat.face(g) is not None for g in sides)

    from shapely.geometry import Polygon

    ring = trimesh.creation.extrude_polygon(
        Polygon([(0, 0), (3, 0), (3, 3), (0, 3)], [[(1, 1), (1, 2), (2, 2), (2, 1)]]), 0.5)
    tris, flat = _faces(ring)
    big = [g for g in np.unique(flat.group).tolist() if (flat.group == g).sum() > 2]
    assert len(big) == 2 and all(flat.face(g) is None for g in big)  # the holed top and bottom


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_piece_across_a_slabs_middle_is_bounded_by_half_its_thickness(seed):
    """No one side bounds a piece whose corners lie nearer to either side; the mean of the two
    sides' distances does, at half the slab's thickness where the corners lie within both
    faces. Every bound is checked against the depth at points sampled over the piece."""
    rng = np.random.default_rng(seed)
    t = 0.02 + 1e-3 * rng.uniform()
    at = rng.uniform(-50, 50, size=3)
    slab = _box((1.0, t, 1.0), at)
    tris, flat = _faces(slab)
    pieces = []
    for _ in range(64):
        centre = at + np.array([rng.uniform(-0.3, 0.3), rng.uniform(-0.2, 0.2) * t, rng.uniform(-0.3, 0.3)])
        span = rng.uniform(0.1, 0.9) * t
        corners = centre + rng.normal(size=(3, 3)) * np.array([0.01, span, 0.01])
        pieces.append(corners)
    pieces = np.array(pieces)
    corners = pieces.reshape(-1, 3)
    near = np.array([int(np.argmin(point_triangle_distance(np.repeat(c[None], len(tris), axis=0), tris)))
                     for c in corners]).reshape(-1, 3)
    got = flat.bound(pieces, near, point_triangle_distance)
    one = np.array([[point_triangle_distance(p, np.repeat(tris[j][None], 3, axis=0)).max() for j in row]
                    for p, row in zip(pieces, near)]).min(axis=1)
    straddle = np.array([len(set(((slab.vertices[slab.faces[row]] @ [0, 1, 0]).mean(axis=1) > at[1]).tolist())) == 2
                         for row in near])
    assert straddle.any()
    assert (got <= one + 1e-12).all()  # a face holds its triangles (to its margin)
    # inside the slab, within both faces: the bound is half the thickness
    inside = (np.abs(corners[:, 1] - at[1]) < t / 2).reshape(-1, 3).all(axis=1) & straddle
    assert inside.any()
    assert np.allclose(got[inside], t / 2, rtol=0, atol=1e-12)
    assert (one[inside] > t / 2 + 1e-6).any()  # what one side alone gave
    # an upper bound of the depth over each piece (sampled: barycentric points)
    w = rng.dirichlet(np.ones(3), size=200)
    for piece, bound in zip(pieces, got):
        points = w @ piece
        depth = np.where(np.abs(points[:, 1] - at[1]) < t / 2, _least(points, tris), 0.0)
        assert (depth <= bound + 1e-12).all()
