"""The compiled supporting-plane test (`gjkcli.engine._mesh.face_gaps`, gjkcli/engine/csrc/gaps.c)
against the NumPy it replaced in `gjkcli.mesh.convexity.hull_gaps`: every face's plane against
every hull vertex, max(n . h) - d, then the largest per part, at least 0."""
from __future__ import annotations

import numpy as np
import pytest

from gjkcli.engine._mesh import face_gaps


def _numpy_gaps(normal, offset, t_start, n_tri, hull, h_start, n_hull):
    out = np.zeros(len(t_start))
    for p in range(len(t_start)):
        N = normal[t_start[p]: t_start[p] + n_tri[p]]
        D = offset[t_start[p]: t_start[p] + n_tri[p]]
        H = hull[h_start[p]: h_start[p] + n_hull[p]]
        if len(N) and len(H):
            out[p] = max(float((N @ H.T).max(axis=1).__sub__(D).max()), 0.0)
    return out


def _parts(rng, count):
    """Random parts: points on an ellipsoid (their hull's vertices), and as faces the planes
    through random triples of them, some pushed outward (the part then lies inside every plane:
    gap 0), the others not (a vertex lies beyond: gap > 0); a few faces without area."""
    normals, offsets, hulls, n_tri, n_hull = [], [], [], [], []
    for _ in range(count):
        n = int(rng.integers(1, 60))
        H = rng.normal(size=(n, 3)) * rng.uniform(0.1, 5.0, 3)
        m = int(rng.integers(0, 90))
        N = rng.normal(size=(m, 3))
        N /= np.linalg.norm(N, axis=1)[:, None]
        corner = H[rng.integers(0, n, m)] if m else np.zeros((0, 3))
        D = np.einsum("ij,ij->i", N, corner)
        if rng.random() < 0.4:  # supporting planes: no vertex beyond any of them
            D = (N @ H.T).max(axis=1) if m else D
        flat = rng.random(m) < 0.05  # faces without area: zero normal and offset
        N[flat], D[flat] = 0.0, 0.0
        normals.append(N)
        offsets.append(D)
        hulls.append(H)
        n_tri.append(m)
        n_hull.append(n)
    n_tri, n_hull = np.array(n_tri, dtype=np.int64), np.array(n_hull, dtype=np.int64)
    t_start = np.concatenate([[0], np.cumsum(n_tri)[:-1]])
    h_start = np.concatenate([[0], np.cumsum(n_hull)[:-1]])
    return (np.concatenate(normals), np.concatenate(offsets), t_start, n_tri,
            np.concatenate(hulls), h_start, n_hull)


def test_face_gaps_match_numpy_on_random_parts():
    args = _parts(np.random.default_rng(2026), 400)
    ours = face_gaps(*args)
    theirs = _numpy_gaps(*args)
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)
    # both outcomes are present: parts within their planes, and parts with a vertex beyond
    zero = np.mean(theirs == 0.0)
    assert 0.2 < zero < 0.7, zero
    assert np.all(ours >= 0.0)


def test_face_gaps_of_a_cube_and_a_dented_cube():
    trimesh = pytest.importorskip("trimesh")
    box = trimesh.creation.box([1.0, 2.0, 3.0])
    V = np.asarray(box.vertices, dtype=np.float64)
    cross = np.cross(V[box.faces[:, 1]] - V[box.faces[:, 0]], V[box.faces[:, 2]] - V[box.faces[:, 0]])
    N = cross / np.linalg.norm(cross, axis=1)[:, None]
    D = np.einsum("ij,ij->i", N, V[box.faces[:, 0]])
    dented = V.copy()
    dented[0] *= 0.8  # a corner pushed in by 0.2 of its coordinates: a face plane through it dips
    cross_d = np.cross(dented[box.faces[:, 1]] - dented[box.faces[:, 0]],
                       dented[box.faces[:, 2]] - dented[box.faces[:, 0]])
    N_d = cross_d / np.linalg.norm(cross_d, axis=1)[:, None]
    D_d = np.einsum("ij,ij->i", N_d, dented[box.faces[:, 0]])
    zero = np.zeros(1, dtype=np.int64)
    twelve, eight = np.array([12]), np.array([8])
    assert face_gaps(N, D, zero, twelve, V, zero, eight)[0] == pytest.approx(0.0, abs=1e-15)
    got = face_gaps(N_d, D_d, zero, twelve, dented, zero, eight)[0]
    assert got > 0.05
    assert got == pytest.approx(_numpy_gaps(N_d, D_d, zero, twelve, dented, zero, eight)[0], rel=1e-12)


def test_face_gaps_refuses_rows_outside_the_arrays():
    with pytest.raises(ValueError):
        face_gaps(np.zeros((2, 3)), np.zeros(2), np.array([1]), np.array([2]), np.zeros((1, 3)),
                  np.array([0]), np.array([1]))
    assert face_gaps(np.zeros((0, 3)), np.zeros(0), np.zeros(0, np.int64), np.zeros(0, np.int64),
                     np.zeros((0, 3)), np.zeros(0, np.int64), np.zeros(0, np.int64)).shape == (0,)
