"""The compiled supporting-plane test (`gjkcli.engine._mesh.face_gaps`, gjkcli/engine/csrc/gaps.c)
against the NumPy it replaced in `gjkcli.mesh.convexity.hull_gaps`: each triangle's unit normal
and plane offset, the triangles' area, and every face's plane against every hull vertex,
max(n . h) - d, the largest per part, at least 0; inf where the areas differ."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial import ConvexHull

from gjkcli.engine._mesh import face_gaps

AREA_REL = 1e-6


def _numpy_gaps(V, F, t_start, n_tri, translation, hull_area, H, h_start, n_hull):
    """The NumPy of hull_gaps before the C kernel (one part at a time here)."""
    area = np.zeros(len(t_start))
    gap = np.zeros(len(t_start))
    for p in range(len(t_start)):
        T = F[t_start[p]: t_start[p] + n_tri[p]]
        a = V[T[:, 0]]
        cross = np.cross(V[T[:, 1]] - a, V[T[:, 2]] - a)
        twice = np.linalg.norm(cross, axis=1)
        area[p] = 0.5 * twice.sum()
        if not abs(area[p] - hull_area[p]) <= AREA_REL * hull_area[p]:
            gap[p] = np.inf
            continue
        with np.errstate(invalid="ignore", divide="ignore"):
            normal = cross / twice[:, None]
        normal[twice == 0] = 0.0
        offset = np.einsum("ij,ij->i", normal, a - translation[p])
        hull = H[h_start[p]: h_start[p] + n_hull[p]]
        gap[p] = max(float(((normal @ hull.T).max(axis=1) - offset).max(initial=0.0)), 0.0)
    return area, gap


def _parts(rng, count):
    """Closed meshes (qhull's triangles of random clouds, wound outward) with their hulls' vertices
    in the hull's frame: as they are (gap 0 up to rounding), with a vertex pushed inward (a dent:
    the area changes a little, the gap is positive), or with a face doubled (the area is off: inf)."""
    V, F, H, n_ver, n_tri, n_hull, translation, hull_area = [], [], [], [], [], [], [], []
    kinds = []
    for _ in range(count):
        n = int(rng.integers(4, 80))
        p = rng.normal(size=(n, 3)) * rng.uniform(0.1, 5.0, 3) + rng.normal(size=3) * 10
        hull = ConvexHull(p)
        f = hull.simplices.copy()
        nrm = np.cross(p[f[:, 1]] - p[f[:, 0]], p[f[:, 2]] - p[f[:, 0]])
        flip = np.einsum("ij,ij->i", nrm, p[f[:, 0]] - p.mean(axis=0)) < 0
        f[flip] = f[flip][:, ::-1]
        centre = 0.5 * (p.min(axis=0) + p.max(axis=0))
        verts = p[np.unique(f)] - centre
        area = hull.area
        kind = int(rng.integers(0, 3))
        q = p.copy()
        if kind == 1:  # a dent: one used vertex moved towards the centre
            k = int(f[0, 0])
            q[k] = centre + (q[k] - centre) * 0.9
            t = q[f]
            area = 0.5 * np.linalg.norm(np.cross(t[:, 1] - t[:, 0], t[:, 2] - t[:, 0]), axis=1).sum()
        elif kind == 2:  # a face doubled
            f = np.concatenate([f, f[:1]])
        kinds.append(kind)
        V.append(q)
        F.append(f + sum(n_ver))
        H.append(verts)
        n_ver.append(n)
        n_tri.append(len(f))
        n_hull.append(len(verts))
        translation.append(centre)
        hull_area.append(area)
    n_tri, n_hull = np.array(n_tri, dtype=np.int64), np.array(n_hull, dtype=np.int64)
    t_start = np.concatenate([[0], np.cumsum(n_tri)[:-1]])
    h_start = np.concatenate([[0], np.cumsum(n_hull)[:-1]])
    return (np.concatenate(V), np.concatenate(F).astype(np.int64), t_start, n_tri,
            np.array(translation), np.array(hull_area), np.concatenate(H), h_start, n_hull), np.array(kinds)


def test_face_gaps_match_numpy_on_random_parts():
    args, kinds = _parts(np.random.default_rng(2026), 300)
    V, F, t_start, n_tri, translation, hull_area, H, h_start, n_hull = args
    brute = np.ones(len(t_start), dtype=bool)
    area, gap = face_gaps(V, F, t_start, n_tri, translation, hull_area, AREA_REL, H, h_start, n_hull, brute)
    want_area, want_gap = _numpy_gaps(*args)
    np.testing.assert_allclose(area, want_area, rtol=1e-12)
    assert np.array_equal(np.isinf(gap), np.isinf(want_gap))
    finite = np.isfinite(want_gap)
    np.testing.assert_allclose(gap[finite], want_gap[finite], rtol=1e-12, atol=1e-12)
    # every outcome is present: parts on their hull (gap at rounding), dented ones, doubled faces
    size = np.linalg.norm(np.ptp(H, axis=0))
    assert np.all(gap[kinds == 0] <= 1e-12 * size)
    assert np.all(gap[kinds == 1] > 1e-6) and np.all(np.isinf(gap[kinds == 2]))
    assert 0.2 < np.mean(kinds == 0) < 0.5 and 0.2 < np.mean(kinds == 1) < 0.5
    # a part not asked about keeps NaN, its area is still measured
    brute[::2] = False
    area2, gap2 = face_gaps(V, F, t_start, n_tri, translation, hull_area, AREA_REL, H, h_start, n_hull, brute)
    assert np.all(np.isnan(gap2[::2])) and np.array_equal(gap2[1::2], gap[1::2])
    np.testing.assert_array_equal(area2, area)


def test_face_gaps_refuses_rows_outside_the_arrays():
    one = np.array([0], dtype=np.int64)
    with pytest.raises(ValueError):
        face_gaps(np.zeros((3, 3)), np.array([[0, 1, 2]]), np.array([1]), np.array([1]), np.zeros((1, 3)),
                  np.ones(1), AREA_REL, np.zeros((1, 3)), one, one, np.ones(1, bool))
    with pytest.raises(ValueError):
        face_gaps(np.zeros((3, 3)), np.array([[0, 1, 5]]), one, np.array([1]), np.zeros((1, 3)),
                  np.ones(1), AREA_REL, np.zeros((1, 3)), one, one, np.ones(1, bool))
    area, gap = face_gaps(np.zeros((0, 3)), np.zeros((0, 3), np.int64), np.zeros(0, np.int64),
                          np.zeros(0, np.int64), np.zeros((0, 3)), np.zeros(0), AREA_REL, np.zeros((0, 3)),
                          np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, bool))
    assert area.shape == gap.shape == (0,)
