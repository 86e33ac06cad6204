"""Shapes: hulls of every dimension, poses, bounds, sizes, adjacency, and the errors users meet."""
from __future__ import annotations

import collections
import dataclasses

import numpy as np
import pytest
from scipy.spatial import ConvexHull

from conftest import random_cloud, random_rigid, random_rotation, rigid, rng_for
from gjkcli.engine import shapes
from gjkcli.engine.certify import support_value
from gjkcli.errors import ShapeError
from gjkcli.engine.shapes import Shape, ShapeSet


def hull_contains(shape: Shape, points, rel=1e-12) -> bool:
    """Every point lies inside the hull of the shape's world vertices (qhull's facets)."""
    eq = ConvexHull(shape.world_vertices).equations
    scale = float(np.max(np.abs(shape.world_vertices)))
    return bool(np.all(np.asarray(points) @ eq[:, :3].T + eq[:, 3] <= rel * scale))


# -- dimension --------------------------------------------------------------------------------------


def test_solid_hull_keeps_every_point_inside():
    rng = rng_for("solid")
    for n in (4, 10, 100, 5000):
        points = random_cloud(rng, n)
        shape = Shape.hull(points)
        assert shape.dimension == 3 and shape.faces is not None
        assert hull_contains(shape, points)
        # the vertices are some of the points, moved to the local frame and back
        W = shape.world_vertices
        gaps = np.min(np.linalg.norm(W[:, None, :] - points[None, :, :], axis=2), axis=1)
        assert np.all(gaps <= 1e-12 * np.max(np.abs(points)))


@pytest.mark.parametrize("points,dimension,count", [
    ([[1.0, 2.0, 3.0]], 0, 1),
    ([[1.0, 2.0, 3.0]] * 7, 0, 1),
    ([[0.0, 0.0, 0.0], [1.0, 2.0, 3.0]], 1, 2),  # regression: two points crashed the flatness test
    ([[0.0, 0.0, 0.0], [1.0, 2.0, 3.0], [1.0, 2.0, 3.0]], 1, 2),
    ([[t, 2 * t, 3 * t] for t in np.linspace(-1, 1, 40)], 1, 2),
    ([[0, 0, 0], [1, 0, 0], [0, 1, 0]], 2, 3),
    ([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0], [0.5, 0.5, 0]], 2, 4),
    ([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], 3, 4),
])
def test_dimension_of_degenerate_point_sets(points, dimension, count):
    shape = Shape.hull(points)
    assert shape.dimension == dimension
    assert shape.n_vertices == count
    assert (shape.faces is not None) == (dimension == 3)
    # the support of every kept hull is the brute-force maximum over the input points
    D = np.random.default_rng(0).normal(size=(200, 3))
    np.testing.assert_allclose(support_value(shape, D), np.max(D @ np.asarray(points, float).T, axis=1), atol=1e-12)


def test_flatness_threshold():
    """Thinner than flat_rel (1e-9) of the extent: a polygon; thicker: a solid."""
    rng = rng_for("flat")
    base = rng.normal(size=(30, 3)) * [1.0, 1.0, 0.0]
    R = random_rotation(rng)
    thin = (base + np.outer(rng.uniform(-1, 1, 30), [0, 0, 1e-11])) @ R.T
    thick = (base + np.outer(rng.uniform(-1, 1, 30), [0, 0, 1e-6])) @ R.T
    assert Shape.hull(thin).dimension == 2
    assert Shape.hull(thick).dimension == 3
    assert hull_contains(Shape.hull(thick), thick)


# -- pose, bounds, size ------------------------------------------------------------------------------


def test_rigid_transform_becomes_the_pose():
    rng = rng_for("pose")
    points = random_cloud(rng, 50)
    T = random_rigid(rng, reach=100.0)
    moved = Shape.hull(points, transform=T)
    here = Shape.hull(points)
    np.testing.assert_allclose(moved.vertices, here.vertices)  # the local hull is the same
    world = points @ T[:3, :3].T + T[:3, 3]
    assert hull_contains(moved, world)
    np.testing.assert_allclose(np.sort(moved.world_vertices, axis=0),
                               np.sort(here.world_vertices @ T[:3, :3].T + T[:3, 3], axis=0), atol=1e-12)
    assert moved.size == pytest.approx(here.size)


def test_non_rigid_transform_is_baked_in():
    rng = rng_for("scale")
    points = random_cloud(rng, 50)
    for M in (np.diag([2.0, 0.5, 3.0, 1.0]), np.diag([-1.0, 1.0, 1.0, 1.0])):
        M = M.copy()
        M[:3, 3] = [1.0, 2.0, 3.0]
        shape = Shape.hull(points, transform=M)
        world = points @ M[:3, :3].T + M[:3, 3]
        np.testing.assert_allclose(shape.rotation, np.eye(3))
        assert hull_contains(shape, world)
        D = rng.normal(size=(100, 3))
        np.testing.assert_allclose(support_value(shape, D), np.max(D @ world.T, axis=1), atol=1e-12)


def test_moved_composes_and_keeps_the_core():
    rng = rng_for("moved")
    for shape in (Shape.hull(random_cloud(rng, 20), radius=0.1), Shape.box([1, 2, 3], random_rigid(rng)),
                  Shape.cylinder(0.5, 2.0), Shape.capsule(0.2, 1.0), Shape.sphere(0.5, [1, 2, 3])):
        A, B = random_rigid(rng, 5.0), random_rigid(rng, 5.0)
        twice = shape.moved(A).moved(B)
        once = shape.moved(B @ A)
        np.testing.assert_allclose(twice.transform, once.transform, atol=1e-12)
        np.testing.assert_allclose(twice.transform, B @ A @ shape.transform, atol=1e-12)
        assert twice.size == shape.size and twice.radius == shape.radius and twice.kind == shape.kind
        D = rng.normal(size=(50, 3))
        # moving the shape moves its support: h_{TX}(d) = h_X(R^T d) + d.t
        R, t = (B @ A)[:3, :3], (B @ A)[:3, 3]
        np.testing.assert_allclose(support_value(twice, D), support_value(shape, D @ R) + D @ t, atol=1e-10)


def test_moved_by_non_rigid():
    rng = rng_for("moved scale")
    hull = Shape.hull(random_cloud(rng, 20))
    M = np.diag([2.0, 1.0, 1.0, 1.0])
    scaled = hull.moved(M)
    np.testing.assert_allclose(support_value(scaled, [1.0, 0, 0]), 2 * support_value(hull, [1.0, 0, 0]))
    with pytest.raises(ShapeError, match="rigid"):
        Shape.box([1, 1, 1]).moved(M)


@pytest.mark.parametrize("make", [
    lambda T: Shape.hull(np.random.default_rng(1).normal(size=(30, 3)), transform=T, radius=0.2),
    lambda T: Shape.box([0.5, 1.0, 2.0], T, radius=0.1),
    lambda T: Shape.cylinder(0.4, 1.5, T),
    lambda T: Shape.cone(0.4, 1.5, T),
    lambda T: Shape.capsule(0.3, 1.2, T),
    lambda T: Shape.sphere(0.7, T[:3, 3]),
    lambda T: Shape.point(T[:3, 3]),
    lambda T: Shape.segment(T[:3, 3], T[:3, 3] + [1.0, 2.0, -1.0]),
], ids=["hull", "box", "cylinder", "cone", "capsule", "sphere", "point", "segment"])
def test_bounds_hold_the_shape(make):
    """The box bounds contain the shape's extent along every axis; hulls' bounds are tight."""
    rng = rng_for("bounds")
    for _ in range(10):
        shape = make(random_rigid(rng, 3.0))
        lo, hi = shape.bounds
        top = np.array([support_value(shape, e) for e in np.eye(3)])
        bottom = np.array([-support_value(shape, -e) for e in np.eye(3)])
        assert np.all(hi >= top - 1e-12) and np.all(lo <= bottom + 1e-12)
        if shape.kind in ("hull", "box", "point", "segment"):
            np.testing.assert_allclose(hi, top, atol=1e-12)
            np.testing.assert_allclose(lo, bottom, atol=1e-12)
        assert shape.size > 0 or shape.kind == "point"


def test_size_is_the_local_box_diagonal_with_inflation():
    assert Shape.box([1, 2, 2]).size == pytest.approx(3.0)
    assert Shape.box([1, 2, 2], radius=0.5).size == pytest.approx(np.linalg.norm([2, 3, 3]))
    assert Shape.sphere(1.0).size == pytest.approx(2 * np.sqrt(3))
    assert Shape.capsule(0.5, 2.0).size == pytest.approx(np.linalg.norm([1, 1, 3]))
    assert Shape.point([1, 2, 3]).size == 0.0
    assert Shape.inflated(Shape.box([1, 2, 2]), 0.5).size == pytest.approx(np.linalg.norm([2, 3, 3]))


def test_segment_and_capsule_ends():
    p, q = np.array([1.0, -2.0, 0.5]), np.array([-3.0, 4.0, 2.0])
    seg = Shape.segment(p, q, radius=0.25)
    for d in np.random.default_rng(2).normal(size=(50, 3)):
        want = max(d @ p, d @ q) + 0.25 * np.linalg.norm(d)
        assert support_value(seg, d) == pytest.approx(want)
    assert Shape.segment(p, p).dimension == 1  # a zero-length segment is still a segment shape


# -- adjacency ----------------------------------------------------------------------------------------


def test_adjacency_is_the_hull_graph():
    rng = rng_for("adjacency")
    for points in (random_cloud(rng, 200), rng.normal(size=(12, 3)) * [1, 1, 0]):
        shape = Shape.hull(points)
        n = shape.n_vertices
        start, adj = shape.adj_start, shape.adj
        assert len(start) == n + 1 and start[0] == 0 and start[-1] == len(adj)
        assert np.all(np.diff(start) >= 2)  # every vertex of a polygon or a solid has two neighbours
        pairs = {(i, int(j)) for i in range(n) for j in adj[start[i]:start[i + 1]]}
        assert all((j, i) in pairs for i, j in pairs)  # symmetric
        assert all(i != j for i, j in pairs)
        if shape.faces is not None:
            F = shape.faces
            edges = [(int(a), int(b)) for f in F for a, b in ((f[0], f[1]), (f[1], f[2]), (f[2], f[0]))]
            assert set(edges) <= pairs
            # the triangles close a surface: every edge belongs to exactly two of them
            counts = collections.Counter(tuple(sorted(e)) for e in edges)
            assert set(counts.values()) == {2}


def test_shapeset_packs_offsets():
    rng = rng_for("shapeset")
    shapes = [Shape.hull(random_cloud(rng, 10)), Shape.box([1, 1, 1]), Shape.hull(random_cloud(rng, 30)),
              Shape.sphere(1.0)]
    packed = ShapeSet(shapes)
    assert len(packed) == 4
    for k, s in enumerate(shapes):
        n = s.n_vertices
        np.testing.assert_array_equal(packed.vertices[packed.voff[k]: packed.voff[k] + n], s.vertices)
        np.testing.assert_array_equal(packed.adj[packed.aoff[k]: packed.aoff[k] + len(s.adj)], s.adj)
    with pytest.raises(ShapeError):
        ShapeSet([])


# -- errors --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("call,match", [
    (lambda: Shape.hull([]), "shape"),
    (lambda: Shape.hull(np.zeros((0, 3))), "no points"),
    (lambda: Shape.hull([[0, 0, np.nan]] * 4), "NaN"),
    (lambda: Shape.hull([[0, 0, np.inf]] * 4), "NaN or infinite"),
    (lambda: Shape.hull(np.zeros((4, 2))), "shape"),
    (lambda: Shape.hull([["a", "b", "c"]]), "numbers"),
    (lambda: Shape.hull(np.zeros((4, 3)), transform=np.eye(3)), "4x4"),
    (lambda: Shape.hull(np.zeros((4, 3)), transform=np.ones((4, 4))), "last row"),
    (lambda: Shape.hull(np.zeros((4, 3)), radius=-1.0), "radius"),
    (lambda: Shape.hull(np.zeros((4, 3)), radius=np.nan), "radius"),
    (lambda: Shape.box([1, -1, 1]), "extents"),
    (lambda: Shape.box([1, 1]), "extents"),
    (lambda: Shape.cylinder(1.0, 2.0, np.diag([2.0, 1.0, 1.0, 1.0])), "rigid"),
    (lambda: Shape.sphere(1.0, [0, 0]), "position"),
])
def test_errors_say_what_is_wrong(call, match):
    with pytest.raises(ShapeError, match=match):
        call()


@pytest.mark.shared
def test_real_mesh_hulls_hold_their_meshes(real_meshes):
    for name, vertices in real_meshes:
        shape = Shape.hull(vertices)
        assert shape.dimension == 3, name
        assert hull_contains(shape, vertices, rel=1e-9), name
        T = rigid(random_rotation(np.random.default_rng(0)), [10.0, 0.0, 0.0])
        assert hull_contains(shape.moved(T), vertices @ T[:3, :3].T + T[:3, 3], rel=1e-9), name


# -- many hulls at once ---------------------------------------------------------------------------


def test_build_hulls_is_shape_hull_bit_for_bit(monkeypatch):
    # small chunks, and worker processes from the first part: the parallel path runs here too
    monkeypatch.setattr(shapes, "_HULL_CHUNK", 64)
    monkeypatch.setattr(shapes, "_PARALLEL_HULLS_FROM", 1)
    rng = np.random.default_rng(0)
    points = [rng.normal(size=(int(rng.integers(4, 60)), 3)) * rng.uniform(0.01, 10, 3) + rng.normal(size=3) * 100
              for _ in range(400)]
    points += [
        np.zeros((5, 3)),                                               # one point, repeated
        np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0.0]]),       # flat
        np.array([[0, 0, 0], [1, 1, 1], [2, 2, 2.0]]),                  # a segment
        np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1e-12]]),     # nearly flat
        np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [0.2, 0.2, 0.2]]),  # an inner point
        np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [np.nan, 0, 0]]),    # NaN: the error Shape.hull raises
        np.zeros((0, 3)),
    ]
    for jobs in (1, 2):
        hulls = shapes.build_hulls(points, jobs=jobs)
        for k, p in enumerate(points):
            got = hulls.shapes[k]
            try:
                want = Shape.hull(p)
            except Exception as exc:  # noqa: BLE001 - the same failure, as a ShapeError
                assert isinstance(got, Exception), (k, exc)
                continue
            for field in dataclasses.fields(Shape):  # every field, whatever shapes.py adds
                a, b = getattr(got, field.name), getattr(want, field.name)
                if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
                    assert a.dtype == b.dtype and np.array_equal(a, b), (k, field.name)
                else:
                    assert a == b, (k, field.name)
            assert np.array_equal(np.array([hulls.lo[k], hulls.hi[k]]), want.bounds)
