"""build_hulls with `triangles`: a closed convex mesh's own triangles as its hull (no qhull). The
hull they make has qhull's support function; a mesh that is not convex is caught by hull_gaps
(the caller's check), and its hull then comes from qhull."""
from __future__ import annotations

import numpy as np
import pytest

trimesh = pytest.importorskip("trimesh")

from gjkcli.engine.query import support  # noqa: E402
from gjkcli.engine.shapes import build_hulls  # noqa: E402
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
