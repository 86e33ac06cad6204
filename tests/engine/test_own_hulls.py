"""build_hulls with `triangles`: a closed convex mesh's own triangles as its hull (no qhull). The
hull they make has qhull's support function; a mesh that is not convex is caught by hull_gaps
(the caller's check), and its hull then comes from qhull."""
from __future__ import annotations

import numpy as np
import pytest

trimesh = pytest.importorskip("trimesh")

from gjkcli.engine.query import support  # noqa: E402
from gjkcli.engine.shapes import Shape, build_hulls  # noqa: E402
from gjkcli.mesh.convexity import hull_gaps  # noqa: E402


def _meshes():
    return [trimesh.creation.box([1.0, 2.0, 3.0]), trimesh.creation.icosphere(2, radius=0.7),
            trimesh.creation.cylinder(0.5, 2.0, sections=20), trimesh.creation.capsule(1.0, 0.4),
            trimesh.creation.annulus(0.3, 0.6, 0.5)]


def test_own_triangles_give_qhulls_support_and_the_gap_tells_convex_from_not():
    meshes = _meshes()
    V = [np.asarray(m.vertices) for m in meshes]
    F = [np.asarray(m.faces) for m in meshes]
    own = build_hulls(V, triangles=F)
    ref = build_hulls(V)
    gaps = hull_gaps(own, F, V)
    size = np.linalg.norm(own.hi - own.lo, axis=1)
    dirs = np.random.default_rng(5).normal(size=(200, 3))
    for k, m in enumerate(meshes):
        if m.is_convex:
            assert gaps[k] <= 1e-12 * size[k], k
            p_own = support(own.shapes[k], dirs)[0]
            p_ref = support(ref.shapes[k], dirs)[0]
            np.testing.assert_allclose(np.einsum("ij,ij->i", p_own, dirs),
                                       np.einsum("ij,ij->i", p_ref, dirs), rtol=0, atol=1e-12)
            np.testing.assert_allclose(own.lo[k], ref.lo[k], atol=1e-12)
            assert own.area[k] == pytest.approx(ref.area[k], rel=1e-9)
        else:  # the annulus: its own triangles are not its hull, and the gap says so
            assert not gaps[k] <= 1e-12 * size[k]
    assert sum(m.is_convex for m in meshes) == 4


def test_parts_without_triangles_still_go_through_qhull():
    meshes = _meshes()
    V = [np.asarray(m.vertices) for m in meshes]
    mixed = build_hulls(V, triangles=[None, np.asarray(meshes[1].faces), None, None, None])
    ref = build_hulls(V)
    for k in (0, 2, 3, 4):
        np.testing.assert_array_equal(mixed.shapes[k].vertices, ref.shapes[k].vertices)


# -- the compiled path (gjkcli/engine/csrc/ownhull.c) against the NumPy assembly it replaced --------


def _closed_meshes(rng, count):
    """Closed, outward-wound triangle meshes: hulls of random clouds (qhull), some with points no
    triangle uses (inner points, which the hull must leave out), in random order and places."""
    from scipy.spatial import ConvexHull

    out = []
    for _ in range(count):
        n = int(rng.integers(4, 300))
        p = rng.normal(size=(n, 3))
        if rng.random() < 0.5:  # on a sphere, then squashed: every point a hull vertex, but a few inside
            p /= np.linalg.norm(p, axis=1)[:, None]
            p[: n // 10] *= 0.5
        p = p * rng.uniform(0.05, 20.0, 3) + rng.normal(size=3) * 100
        hull = ConvexHull(p)
        f = hull.simplices.copy()
        # outward winding: the normal points away from the centroid
        c = p.mean(axis=0)
        nrm = np.cross(p[f[:, 1]] - p[f[:, 0]], p[f[:, 2]] - p[f[:, 0]])
        flip = np.einsum("ij,ij->i", nrm, p[f[:, 0]] - c) < 0
        f[flip] = f[flip][:, ::-1]
        out.append((p, f))
    return out


def test_own_triangles_assemble_as_the_numpy_assembly_does():
    from gjkcli.engine import shapes
    from gjkcli.tolerances import DEFAULT

    rng = np.random.default_rng(14)
    meshes = _closed_meshes(rng, 120)
    # unusable sets of triangles: too few, an index out of range, no volume (flat); they go
    # through Shape.hull, as a part qhull could not build
    square = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0.0]])
    out_of_range = meshes[1][1].copy()
    out_of_range[0, 0] = len(meshes[1][0])
    bad = [(meshes[0][0], meshes[0][1][:3]), (meshes[1][0], out_of_range),
           (square, np.array([[0, 1, 2], [1, 3, 2], [0, 2, 1], [1, 2, 3]]))]
    cases = meshes + bad
    got = build_hulls([p for p, _ in cases], triangles=[f for _, f in cases])
    for k, (p, f) in enumerate(meshes):
        # the NumPy assembly of qhull's path, handed these triangles as qhull's
        centre = 0.5 * (p.min(axis=0) + p.max(axis=0))
        local = p - centre
        made, lo, hi = shapes._assemble(local, centre[None], np.array([0]), np.array([len(p)]),
                                        f.astype(np.int32), np.array([len(f)]), np.array([True]))
        want, have = made[0], got.shapes[k]
        for name in ("vertices", "adj_start", "adj", "faces", "dims", "rotation", "translation"):
            a, b = getattr(have, name), getattr(want, name)
            assert a.dtype == b.dtype and np.array_equal(a, b), (k, name)
        assert have.kind == want.kind and have.dimension == want.dimension and have.radius == want.radius
        assert have._extent == want._extent and have._size == want._size, k
        np.testing.assert_array_equal(got.lo[k], lo[0])
        np.testing.assert_array_equal(got.hi[k], hi[0])
        tri = local[f]
        area = 0.5 * np.linalg.norm(np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0]), axis=1).sum()
        assert got.area[k] == pytest.approx(area, rel=1e-12)
        # the cold-start table: NumPy's first maximum, or a vertex as far along the cell's direction
        if len(want.vertices) >= DEFAULT.brute_force_below:
            assert len(have._cube) == len(want._cube) > 0
            dirs = shapes._cube_directions(int(round(np.sqrt(len(want._cube) / 6))))
            v = want.vertices
            a = np.einsum("ij,ij->i", dirs, v[have._cube])
            b = np.einsum("ij,ij->i", dirs, v[want._cube])
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-12 * np.abs(v).max())
            assert np.mean(have._cube == want._cube) > 0.99
        else:
            assert len(have._cube) == 0 and len(want._cube) == 0
    assert sum(len(s.vertices) >= DEFAULT.brute_force_below for s in got.shapes[:len(meshes)]) > 10
    assert any(len(got.shapes[k].vertices) < len(p) for k, (p, _) in enumerate(meshes))  # inner points left out
    for k, (p, _) in enumerate(bad, start=len(meshes)):
        try:
            want = Shape.hull(p)
        except Exception:  # noqa: BLE001 - the square: no solid hull either way
            assert isinstance(got.shapes[k], Exception)
            continue
        np.testing.assert_array_equal(got.shapes[k].vertices, want.vertices)
        np.testing.assert_array_equal(got.shapes[k].faces, want.faces)
        assert np.isnan(got.area[k])
