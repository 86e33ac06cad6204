"""Support maps against brute force: hill climbing must find max(V @ d) on every hull, plateaus too.

A hull's support value is checked against the maximum over its own vertices and over the points
it was built from (qhull keeps the points it drops inside the hull); a primitive's against its
analytic extent and against dense samples of its surface. Directions: thousands of random ones,
the axes, and the hull's own face normals, which put whole faces on a plateau.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from conftest import random_rigid, rigid, rng_for
from gjkcli.engine.certify import distance_to_shape, support_value
from gjkcli.engine.query import support
from gjkcli.engine.shapes import Shape
from gjkcli.tolerances import DEFAULT

REL = 1e-12


def face_normals(shape: Shape) -> np.ndarray:
    """World unit normals of a solid hull's triangles: directions that sit on a plateau."""
    W = shape.world_vertices
    F = shape.faces
    n = np.cross(W[F[:, 1]] - W[F[:, 0]], W[F[:, 2]] - W[F[:, 0]])
    return n / np.linalg.norm(n, axis=1)[:, None]


def directions_for(shape: Shape, rng, count: int) -> np.ndarray:
    """Random directions of random lengths, the world axes both ways, the hull's face normals."""
    random = rng.normal(size=(count, 3)) * rng.uniform(0.01, 100.0, size=(count, 1))
    axes = np.vstack([np.eye(3), -np.eye(3)])
    local_axes = np.vstack([shape.rotation.T, -shape.rotation.T])  # rows: the shape's own axes
    parts = [random, axes, local_axes]
    if shape.faces is not None:
        normals = face_normals(shape)
        parts += [normals, -normals]
    return np.vstack(parts)


def brute_max(points: np.ndarray, D: np.ndarray, chunk: int = 256) -> np.ndarray:
    """max over points of d . p for each direction, in chunks to bound memory."""
    out = np.empty(len(D))
    for k in range(0, len(D), chunk):
        out[k:k + chunk] = np.max(D[k:k + chunk] @ points.T, axis=1)
    return out


def assert_support_exact(shape: Shape, source_points: np.ndarray, D: np.ndarray):
    """Support values equal brute force (relative to |d| x extent), warm and cold; points are vertices."""
    W = shape.world_vertices
    scale = np.linalg.norm(D, axis=1) * max(float(np.max(np.abs(W))), 1e-300)
    want = brute_max(W, D)
    want_source = brute_max(source_points, D)
    for warm in (True, False):
        P, idx, steps = support(shape, D, warm=warm)
        got = np.einsum("ij,ij->i", P, D)
        assert np.all(np.abs(got - want) <= REL * scale), (warm, np.max(np.abs(got - want) / scale))
        # the dropped points lie inside the hull, to qhull's precision
        assert np.all(got >= want_source - REL * scale), (warm, np.max((want_source - got) / scale))
        assert np.all((idx >= 0) & (idx < len(W)))
        np.testing.assert_allclose(P, W[idx], rtol=0, atol=1e-12 * float(np.max(np.abs(W))))
    return steps


def prism(sides: int, radius: float = 1.0, height: float = 2.0) -> np.ndarray:
    """Points of a regular prism: two coplanar rings of `sides` vertices (big plateaus)."""
    theta = np.linspace(0.0, 2.0 * np.pi, sides, endpoint=False)
    ring = radius * np.column_stack([np.cos(theta), np.sin(theta)])
    return np.vstack([np.column_stack([ring, np.full(sides, -height / 2)]),
                      np.column_stack([ring, np.full(sides, height / 2)])])


def box_grid(extents, steps: int = 9) -> np.ndarray:
    """Points on a box's faces on a grid: many coplanar points, of which qhull keeps the corners."""
    g = np.linspace(-1.0, 1.0, steps)
    G = np.array(np.meshgrid(g, g, g)).reshape(3, -1).T
    G = G[np.any(np.abs(G) == 1.0, axis=1)]
    return G * (0.5 * np.asarray(extents))


@pytest.mark.parametrize("n", [4, 5, 10, 30, 200, 1000, 20000, 100000])
def test_random_clouds(n):
    rng = rng_for(f"cloud{n}")
    points = rng.normal(size=(n, 3)) * rng.uniform(0.1, 3.0, 3)
    T = random_rigid(rng, reach=5.0)
    shape = Shape.hull(points, transform=T)
    world = points @ T[:3, :3].T + T[:3, 3]
    assert_support_exact(shape, world, directions_for(shape, rng, 3000 if n < 100000 else 800))


def test_hull_of_100000_vertices(big_sphere_hull):
    """Every one of 100,000 points on a sphere is a hull vertex: hill climbing, not a scan."""
    shape, points = big_sphere_hull
    assert shape.n_vertices == len(points) == 100000
    rng = rng_for("big")
    D = directions_for(shape, rng, 1000)[:1000]
    # without its cold-start table (Shape._cube) the climb starts at vertex 0 and really walks the
    # adjacency; with it, cold climbs stay exact and start within a few steps of the answer
    bare = dataclasses.replace(shape, _cube=np.zeros(0, np.int32))
    steps = assert_support_exact(bare, points, D)
    assert np.mean(steps) > 10  # the climb really walks the adjacency
    seeded = assert_support_exact(shape, points, D)
    assert len(shape._cube) > 0 and 0 < np.mean(seeded) < np.mean(steps) / 4


@pytest.mark.parametrize("sides", [24, 64, 400])
@pytest.mark.parametrize("posed", [False, True])
def test_prism_plateaus(sides, posed):
    """Cylinders of coplanar rings: the cap normals put `sides` vertices on one plateau."""
    rng = rng_for(f"prism{sides}{posed}")
    points = prism(sides)
    T = random_rigid(rng, reach=3.0) if posed else np.eye(4)
    shape = Shape.hull(points, transform=T)
    assert shape.n_vertices == 2 * sides
    world = points @ T[:3, :3].T + T[:3, 3]
    D = directions_for(shape, rng, 2000)
    # the ring's own radial directions hit edges of the side faces exactly
    theta = np.linspace(0.0, 2.0 * np.pi, 4 * sides, endpoint=False)
    radial = np.column_stack([np.cos(theta), np.sin(theta), np.zeros_like(theta)]) @ T[:3, :3].T
    steps = assert_support_exact(shape, world, np.vstack([D, radial]))
    assert np.max(steps) > 0


@pytest.mark.parametrize("posed", [False, True])
def test_box_plateaus(posed):
    """Boxes from grids of coplanar face points: axis directions tie four corners."""
    rng = rng_for(f"box{posed}")
    points = box_grid([1.0, 2.0, 3.0])
    T = random_rigid(rng) if posed else np.eye(4)
    shape = Shape.hull(points, transform=T)
    assert shape.n_vertices == 8
    world = points @ T[:3, :3].T + T[:3, 3]
    assert_support_exact(shape, world, directions_for(shape, rng, 2000))


def test_plateau_climb_past_ties():
    """A hull of more vertices than the linear-scan threshold, with a face of exactly tied vertices.

    A flat cap of many vertices in a circle sits above a cone of others: from a cap vertex in the
    cap's normal direction every neighbour ties, and the climb must explore the plateau, not stop.
    """
    n = 4 * DEFAULT.brute_force_below
    points = prism(n, height=1.0)
    shape = Shape.hull(points)
    D = np.tile([0.0, 0.0, 1.0], (50, 1)) + np.random.default_rng(1).normal(size=(50, 3)) * 1e-14
    assert_support_exact(shape, points, np.vstack([D, [[0.0, 0.0, 1.0], [0.0, 0.0, -1.0]]]))


def test_flat_segment_point_hulls():
    """Flat polygons, segments and points climb their own small adjacency exactly."""
    rng = rng_for("flat")
    ring = prism(60)[:60]  # one ring: a flat 60-gon
    for points, dimension in [(ring, 2), (rng.normal(size=(2, 3)), 1),
                              (np.outer(np.linspace(0, 1, 50), [1.0, 2.0, 3.0]), 1),
                              (np.tile([1.0, 2.0, 3.0], (5, 1)), 0)]:
        T = random_rigid(rng, reach=2.0)
        shape = Shape.hull(points, transform=T)
        assert shape.dimension == dimension
        world = points @ T[:3, :3].T + T[:3, 3]
        assert_support_exact(shape, world, directions_for(shape, rng, 1000))


@pytest.mark.shared
def test_real_mesh_hulls(real_meshes):
    rng = rng_for("meshes")
    assert len(real_meshes) >= 20
    for name, vertices in real_meshes:
        shape = Shape.hull(vertices)
        D = directions_for(shape, rng, 500)
        try:
            assert_support_exact(shape, vertices, D)
        except AssertionError as exc:
            raise AssertionError(f"{name}: {exc}") from exc


def test_inflated_hull_adds_radius():
    rng = rng_for("inflated")
    points = rng.normal(size=(50, 3))
    shape = Shape.hull(points, radius=0.25)
    D = rng.normal(size=(500, 3))
    P, _, _ = support(shape, D)
    got = np.einsum("ij,ij->i", P, D)
    want = brute_max(points, D) + 0.25 * np.linalg.norm(D, axis=1)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12 * np.max(np.abs(want)))


# -- primitives ------------------------------------------------------------------------------------


def core_samples(shape: Shape, n: int = 200000, seed: int = 0) -> np.ndarray:
    """World points densely covering a primitive's core surface (inflation left out)."""
    rng = np.random.default_rng(seed)
    kind, dims = shape.kind, shape.dims
    if kind == "box":
        pts = rng.uniform(-1.0, 1.0, size=(n, 3))
        face = rng.integers(3, size=n)
        pts[np.arange(n), face] = np.sign(pts[np.arange(n), face])
        corners = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], dtype=float)
        local = np.vstack([pts, corners]) * dims
    elif kind in ("cylinder", "cone"):
        r, h = dims[0], dims[1]
        theta = rng.uniform(0.0, 2.0 * np.pi, n)
        z = rng.choice([-h, h], n) if kind == "cylinder" else np.full(n, -h)
        rim = np.column_stack([r * np.cos(theta), r * np.sin(theta), z])
        axis = np.array([[0.0, 0.0, h], [0.0, 0.0, -h]])
        local = np.vstack([rim, axis])
    elif kind == "segment":
        local = np.column_stack([np.zeros((2, 2)), [-dims[0], dims[0]]])
    else:
        local = np.zeros((1, 3))
    return local @ shape.rotation.T + shape.translation


PRIMITIVES = {
    "box": lambda T: Shape.box([0.5, 1.2, 2.0], T),
    "cylinder": lambda T: Shape.cylinder(0.7, 1.6, T),
    "cone": lambda T: Shape.cone(0.8, 1.5, T),
    "segment": lambda T: Shape.segment(T[:3, 3], T[:3, 3] + T[:3, :3] @ [0.3, -0.4, 1.2]),
    "capsule": lambda T: Shape.capsule(0.4, 1.5, T),
    "sphere": lambda T: Shape.sphere(0.6, T[:3, 3]),
    "point": lambda T: Shape.point(T[:3, 3]),
    "rounded box": lambda T: Shape.box([0.5, 1.2, 2.0], T, radius=0.1),
}


@pytest.mark.parametrize("kind", sorted(PRIMITIVES))
def test_primitive_support(kind):
    """Against the analytic extent (gjkcli.engine.certify) and dense surface samples; never NaN."""
    rng = rng_for(f"prim {kind}")
    T = random_rigid(rng, reach=2.0)
    shape = PRIMITIVES[kind](T)
    local = np.vstack([np.eye(3), -np.eye(3), [[0.0, 0.0, 0.0]]]) @ shape.rotation.T  # the shape's axes
    D = np.vstack([rng.normal(size=(2000, 3)), np.eye(3), -np.eye(3), local])
    P, _, _ = support(shape, D)
    assert np.all(np.isfinite(P)), "support returned NaN or infinity"
    got = np.einsum("ij,ij->i", P, D)
    scale = np.linalg.norm(D, axis=1) * (np.max(np.abs(shape.bounds)) + 1.0)
    np.testing.assert_array_less(np.abs(got - support_value(shape, D)), 1e-12 * scale + 1e-300)
    # every support point lies on the shape
    for p in P[::50]:
        assert distance_to_shape(shape, p) <= 1e-12 * np.max(np.abs(shape.bounds))
    # no sample beats the support, and the support is not far above the best sample
    sampled = brute_max(core_samples(shape), D[:300]) + shape.radius * np.linalg.norm(D[:300], axis=1)
    assert np.all(sampled <= got[:300] + 1e-12 * scale[:300])
    assert np.all(got[:300] - sampled <= 2e-3 * scale[:300])


def test_cone_support_straight_down_the_axis():
    """Regression: the cone's support along its -axis divided by a zero radial length (NaN)."""
    cone = Shape.cone(1.0, 2.0, rigid(t=[1.0, 2.0, 3.0]))
    P, _, _ = support(cone, [[0.0, 0.0, -1.0], [0.0, 0.0, -5.0]])
    np.testing.assert_allclose(P[:, 2], 2.0)
    assert np.all(np.isfinite(P))
    assert support_value(cone, [0.0, 0.0, -1.0]) == pytest.approx(-2.0)


def test_support_of_zero_direction_is_a_point_of_the_shape():
    for kind, make in PRIMITIVES.items():
        shape = make(np.eye(4))
        P, _, _ = support(shape, [[0.0, 0.0, 0.0]])
        assert np.all(np.isfinite(P)), kind
        assert distance_to_shape(shape, P[0]) <= 1e-12, kind
