"""The exact mesh test (gjkcli.engine.exact over gjkcli.engine._mesh).

Oracles that are not the engine: brute force over all triangles in NumPy, python-fcl's BVH
(`fcl.collide`, `fcl.distance`) and trimesh's CollisionManager for the scenes in ../shared,
ray-crossing parity in NumPy for containment, manifold3d's boolean intersection volume for
touching pairs (when installed), analytic boxes and spheres, and the hull engine on convex parts.
"""
from __future__ import annotations

import itertools
import zlib
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest
import trimesh
from fresh import python_c

from gjkcli.engine import _mesh
from gjkcli.engine.exact import Mesh, exact_query
from gjkcli.engine.results import PointCertificate, Status

fcl = pytest.importorskip("fcl")

SHARED = Path(__file__).resolve().parents[3] / "shared"
needs_shared = pytest.mark.skipif(not (SHARED / "meshes").is_dir(),
                                  reason=f"the shared real-world meshes are not at {SHARED}")


# ------------------------------------------------------------------------------------------------
# helpers
# ------------------------------------------------------------------------------------------------

def random_rotation(rng) -> np.ndarray:
    q = rng.normal(size=4)
    q /= np.linalg.norm(q)
    w, x, y, z = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def pose(R=None, t=(0.0, 0.0, 0.0)) -> np.ndarray:
    T = np.eye(4)
    if R is not None:
        T[:3, :3] = R
    T[:3, 3] = t
    return T


def fcl_object(vertices, faces, T=None):
    model = fcl.BVHModel()
    model.beginModel(len(vertices), len(faces))
    model.addSubModel(np.asarray(vertices, dtype=np.float64), np.asarray(faces, dtype=np.int64))
    model.endModel()
    obj = fcl.CollisionObject(model)
    if T is not None:
        obj.setTransform(fcl.Transform(T[:3, :3], T[:3, 3]))
    return obj


def fcl_collide(a, b) -> bool:
    return fcl.collide(a, b, fcl.CollisionRequest(), fcl.CollisionResult()) > 0


def fcl_distance(a, b) -> float:
    return fcl.distance(a, b, fcl.DistanceRequest(), fcl.DistanceResult())


def brute_closest(q, vertices, faces):
    """Distance from q to the nearest triangle, by Ericson's point-triangle test in NumPy."""
    best = np.inf
    for tri in vertices[faces]:
        best = min(best, np.linalg.norm(q - _closest_on_triangle(q, *tri)))
    return best


def _closest_on_triangle(p, a, b, c):
    ab, ac, ap = b - a, c - a, p - a
    d1, d2 = ab @ ap, ac @ ap
    if d1 <= 0 and d2 <= 0:
        return a
    bp = p - b
    d3, d4 = ab @ bp, ac @ bp
    if d3 >= 0 and d4 <= d3:
        return b
    vc = d1 * d4 - d3 * d2
    if vc <= 0 and d1 >= 0 and d3 <= 0:
        return a + d1 / (d1 - d3) * ab
    cp = p - c
    d5, d6 = ab @ cp, ac @ cp
    if d6 >= 0 and d5 <= d6:
        return c
    vb = d5 * d2 - d1 * d6
    if vb <= 0 and d2 >= 0 and d6 <= 0:
        return a + d2 / (d2 - d6) * ac
    va = d3 * d6 - d5 * d4
    if va <= 0 and d4 - d3 >= 0 and d5 - d6 >= 0:
        return b + (d4 - d3) / ((d4 - d3) + (d5 - d6)) * (c - b)
    denom = 1.0 / (va + vb + vc)
    return a + ab * vb * denom + ac * vc * denom


def inside_by_rays(points, vertices, faces, seed=0) -> np.ndarray:
    """Inside a closed mesh by the parity of ray crossings (Moller-Trumbore in NumPy), the
    majority over three random directions."""
    rng = np.random.default_rng(seed)
    tri = np.asarray(vertices, dtype=np.float64)[np.asarray(faces)]
    a, e1, e2 = tri[:, 0], tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0]
    votes = np.zeros(len(points), dtype=int)
    for _ in range(3):
        d = rng.normal(size=3)
        d /= np.linalg.norm(d)
        h = np.cross(d, e2)
        det = np.einsum("ij,ij->i", e1, h)
        ok = np.abs(det) > 1e-300
        for k, p in enumerate(np.atleast_2d(points)):
            s = p - a
            u = np.einsum("ij,ij->i", s, h) / np.where(ok, det, 1.0)
            q = np.cross(s, e1)
            v = (q @ d) / np.where(ok, det, 1.0)
            t = np.einsum("ij,ij->i", e2, q) / np.where(ok, det, 1.0)
            hits = ok & (u >= 0) & (v >= 0) & (u + v <= 1) & (t > 0)
            votes[k] += int(hits.sum()) % 2
    return votes >= 2


def box(extents=(1.0, 1.0, 1.0), at=(0.0, 0.0, 0.0)) -> trimesh.Trimesh:
    m = trimesh.creation.box(extents=extents)
    m.apply_translation(at)
    return m


def mesh(m: trimesh.Trimesh, name="mesh") -> Mesh:
    return Mesh.from_arrays(m.vertices, m.faces, name=name)


@lru_cache(maxsize=None)
def shared_mesh(name: str) -> trimesh.Trimesh:
    return trimesh.load(SHARED / name, force="mesh")


# ------------------------------------------------------------------------------------------------
# the compiled pieces: triangles, hierarchy, closest point, winding number
# ------------------------------------------------------------------------------------------------

def test_triangles_that_cross_give_a_point_of_both_and_their_depth():
    P = np.array([[-1.0, -1.0, 0.0], [1.0, -1.0, 0.0], [0.0, 1.0, 0.0]])
    Q = np.array([[0.0, 0.0, -0.5], [0.0, 0.2, 0.5], [0.0, -0.2, 0.5]])
    hit, x, straddle, *_ = _mesh.tri_tri(P, Q)
    assert hit
    assert abs(x[2]) < 1e-15 and abs(x[0]) < 1e-15  # on P's plane and Q's plane
    # Q reaches 0.5 beyond P's plane, P 1.0 beyond Q's; they share a cut 0.2 long: the least
    assert straddle == pytest.approx(0.2)
    assert _mesh.tri_tri(P, Q + [0.0, 0.0, 0.6])[0] is False  # Q's plane separates


def test_triangles_that_only_touch_cross_by_zero():
    P = np.array([[-1.0, -1.0, 0.0], [1.0, -1.0, 0.0], [0.0, 1.0, 0.0]])
    coplanar = P * 0.5 + [0.2, 0.0, 0.0]
    corner_on_face = np.array([[0.0, 0.0, 0.0], [0.3, 0.0, 1.0], [0.0, 0.3, 1.0]])
    edge_on_face = np.array([[-0.2, 0.0, 0.0], [0.2, 0.0, 0.0], [0.0, 0.0, 1.0]])
    for Q in (coplanar, corner_on_face, edge_on_face):
        hit, _, straddle, *_ = _mesh.tri_tri(P, Q, 1e-12)
        assert hit and straddle == 0.0
    # two edges crossing at a single point: each triangle pierces the other's plane, beside it
    Q = np.array([[0.5, -2.0, 0.0], [0.5, 0.0, 0.0], [0.5, -1.0, -1.0]])
    P2 = np.array([[0.0, -1.0, 0.0], [1.0, -1.0, 0.0], [0.5, -1.0, 1.0]])
    hit, _, straddle, *_ = _mesh.tri_tri(P2, Q, 1e-12)
    assert hit and straddle == 0.0


def test_triangle_distance_matches_dense_sampling():
    rng = np.random.default_rng(7)
    for _ in range(100):
        P = rng.normal(size=(3, 3))
        Q = rng.normal(size=(3, 3)) + rng.normal(size=3) * 3
        hit, _, _, d, pp, qq = _mesh.tri_tri(P, Q)
        if hit:
            continue
        assert np.linalg.norm(pp - qq) == pytest.approx(d, rel=1e-12)
        # samples of both triangles never come closer than the computed distance
        u = rng.dirichlet([1, 1, 1], size=200)
        sp, sq = u @ P, u @ Q
        assert np.min(np.linalg.norm(sp[:, None] - sq[None], axis=2)) >= d - 1e-12


def test_every_triangle_lies_in_its_leaf_box_and_leaves_in_their_ancestors():
    m = shared_mesh_or_torus()
    bvh = _mesh.BVH(m.vertices - m.bounds.mean(axis=0), m.faces)
    nodes = bvh.nodes()
    local = m.vertices - m.bounds.mean(axis=0)
    order = bvh.order()
    corners = local[m.faces[order]]  # leaf slot order

    def inside(k, pts):
        rel = (pts - nodes["centre"][k]) @ nodes["axes"][k].T
        return np.all(np.abs(rel) <= nodes["extents"][k] * (1 + 1e-12) + 1e-12)

    stack = [(0, [])]
    while stack:
        k, ancestors = stack.pop()
        if nodes["count"][k]:
            pts = corners[nodes["first"][k]: nodes["first"][k] + nodes["count"][k]].reshape(-1, 3)
            assert inside(k, pts)
            assert all(inside(a, pts) for a in ancestors)
        else:
            stack += [(nodes["first"][k], ancestors + [k]), (nodes["first"][k] + 1, ancestors + [k])]
    assert nodes["count"].sum() == len(m.faces)
    assert bvh.depth < 64


def shared_mesh_or_torus():
    if (SHARED / "meshes" / "featuretype.STL").exists():
        return shared_mesh("meshes/featuretype.STL")
    return trimesh.creation.torus(major_radius=2.0, minor_radius=0.5)


def test_closest_point_matches_brute_force():
    m = trimesh.creation.torus(major_radius=2.0, minor_radius=0.5, major_sections=24, minor_sections=12)
    bvh = _mesh.BVH(m.vertices, m.faces)
    rng = np.random.default_rng(3)
    q = rng.uniform(-3, 3, size=(40, 3))
    dist, near, tri = _mesh.closest(bvh, q)
    for k in range(len(q)):
        assert dist[k] == pytest.approx(brute_closest(q[k], m.vertices, m.faces), rel=1e-12, abs=1e-14)
        assert np.linalg.norm(near[k] - q[k]) == pytest.approx(dist[k], rel=1e-12)


def test_winding_number_by_caps_equals_the_sum_over_all_triangles():
    m = trimesh.creation.torus(major_radius=2.0, minor_radius=0.5)
    bvh = _mesh.BVH(m.vertices, m.faces)
    bvh.prepare_winding()
    rng = np.random.default_rng(4)
    q = rng.uniform(-3, 3, size=(300, 3))
    fast = _mesh.winding(bvh, q)
    slow = _mesh.winding(bvh, q, brute=True)
    np.testing.assert_allclose(fast, slow, atol=1e-9)
    np.testing.assert_array_equal(np.abs(fast) > 0.5, inside_by_rays(q, m.vertices, m.faces))
    # an open mesh: the generalized winding number is fractional, caps still agree
    open_bvh = _mesh.BVH(m.vertices, m.faces[: len(m.faces) // 2])
    open_bvh.prepare_winding()
    np.testing.assert_allclose(_mesh.winding(open_bvh, q), _mesh.winding(open_bvh, q, brute=True), atol=1e-9)


# ------------------------------------------------------------------------------------------------
# exact_query: verdicts, containment, touching band, poses
# ------------------------------------------------------------------------------------------------

def test_ball_inside_the_tube_of_a_torus_collides_where_fcl_sees_nothing():
    torus = trimesh.creation.torus(major_radius=2.0, minor_radius=0.5)
    ball = trimesh.creation.icosphere(subdivisions=2, radius=0.2)
    T = pose(t=(2.0, 0.0, 0.0))
    # FCL (and trimesh's CollisionManager on top of it) only tests surfaces: no collision
    assert not fcl_collide(fcl_object(torus.vertices, torus.faces), fcl_object(ball.vertices, ball.faces, T))
    a, b = mesh(torus, "torus"), mesh(ball, "ball")
    for want in ("verdict", "distance", "intersect"):
        r = exact_query(a, b, pose_b=T, want=want)
        assert r.status is Status.COLLISION, want
        assert r.contained == "b in a"
        assert isinstance(r.certificate, PointCertificate)
        assert inside_by_rays(r.certificate.point, torus.vertices, torus.faces)[0]  # another method
    r = exact_query(a, b, pose_b=T)
    # depth: a lower bound of the penetration; the ball's points are at most 0.5 - 0 deep
    assert 0.25 < r.depth <= 0.5
    assert np.linalg.norm(r.point_a - r.point_b) == pytest.approx(r.depth)
    # the other way round: the torus is not inside the ball, the ball is inside the torus
    assert exact_query(b, a, pose_a=T).contained == "a in b"


def test_surfaces_only_for_a_part_that_is_not_watertight():
    torus = trimesh.creation.torus(major_radius=2.0, minor_radius=0.5)
    shell = trimesh.Trimesh(torus.vertices, torus.faces[:-4], process=False)  # four faces missing
    ball = trimesh.creation.icosphere(subdivisions=2, radius=0.2)
    a, b = mesh(shell, "shell"), mesh(ball, "ball")
    assert not a.solid and b.solid
    r = exact_query(a, b, pose_b=pose(t=(2.0, 0.0, 0.0)))
    assert r.status is Status.CLEAR
    assert r.distance == pytest.approx(0.5 - 0.2, abs=0.02)
    assert not r.solid_a and r.solid_b
    assert "'shell' is not watertight" in r.note and "only its surface counts" in r.note


def test_identical_parts_in_one_place_collide():
    a = mesh(box((1.0, 2.0, 3.0)))
    r = exact_query(a, a)
    assert r.status is Status.COLLISION
    assert r.depth is not None and r.depth > 1e-4


def test_a_drill_flush_with_both_faces_of_a_plate_collides():
    plate = box((4.0, 4.0, 1.0))
    drill = trimesh.creation.cylinder(radius=0.5, height=1.0, sections=32)  # same thickness
    r = exact_query(mesh(plate), mesh(drill))
    assert r.status is Status.COLLISION
    assert r.contained == "b in a"
    # a lower bound: the deepest point, the axis's middle, lies 0.5 deep; the points examined
    # (corners, centroids, probes) reach a side face's centroid, 1/3 deep
    assert 1.0 / 3.0 - 1e-9 <= r.depth <= 0.5


@pytest.mark.parametrize("gap, expected", [
    (0.1, Status.CLEAR), (1e-3, Status.CLEAR), (1e-12, Status.TOUCHING), (0.0, Status.TOUCHING),
    (-1e-12, Status.TOUCHING), (-1e-3, Status.COLLISION), (-0.3, Status.COLLISION),
])
def test_touching_band_sweep_of_stacked_boxes(gap, expected):
    a = mesh(box((2.0, 2.0, 1.0)))
    b = mesh(box((1.0, 1.0, 1.0), at=(0.3, 0.2, 1.0 + gap)))
    r = exact_query(a, b)
    assert r.status is expected
    if expected is Status.CLEAR:
        assert r.distance == pytest.approx(gap, rel=1e-12)
        np.testing.assert_allclose(r.normal, [0.0, 0.0, 1.0], atol=1e-12)
    if expected is Status.COLLISION:
        assert r.depth == pytest.approx(-gap, rel=1e-9)
        np.testing.assert_allclose(r.normal, [0.0, 0.0, 1.0], atol=1e-9)


def test_boxes_side_by_side_and_half_overlapping():
    a = mesh(box())
    assert exact_query(a, mesh(box(at=(1.0, 0.0, 0.0)))).status is Status.TOUCHING
    # overlapping by half, all other faces flush: the crossings are flush, the probes find it
    r = exact_query(a, mesh(box(at=(0.5, 0.0, 0.0))))
    assert r.status is Status.COLLISION
    assert 0.25 <= r.depth <= 0.5  # a lower bound of the penetration, 0.5


def test_same_answer_under_a_rigid_transform_of_both():
    rng = np.random.default_rng(11)
    torus = mesh(trimesh.creation.torus(major_radius=2.0, minor_radius=0.5))
    ring = mesh(trimesh.creation.torus(major_radius=1.0, minor_radius=0.2))
    Tb = pose(random_rotation(rng), (1.9, 0.2, 0.3))
    base = exact_query(torus, ring, pose_b=Tb)
    for _ in range(5):
        G = pose(random_rotation(rng), rng.normal(size=3) * 100)
        r = exact_query(torus, ring, pose_a=G, pose_b=G @ Tb)
        assert r.status is base.status
        assert r.distance == pytest.approx(base.distance, rel=1e-9, abs=1e-12)
        np.testing.assert_allclose(r.point_a, G[:3, :3] @ base.point_a + G[:3, 3], atol=1e-9)


def test_poses_equal_vertices_moved_beforehand():
    rng = np.random.default_rng(12)
    m = trimesh.creation.torus(major_radius=2.0, minor_radius=0.5)
    a = mesh(m)
    for _ in range(10):
        T = pose(random_rotation(rng), rng.normal(size=3) * 2)
        moved = mesh(m.copy().apply_transform(T))
        r1 = exact_query(a, a, pose_b=T, want="distance")
        r2 = exact_query(a, moved, want="distance")
        assert r1.status is r2.status
        assert r1.distance == pytest.approx(r2.distance, rel=1e-9, abs=1e-12)


def test_rejects_a_pose_that_is_not_rigid():
    a = mesh(box())
    with pytest.raises(ValueError, match="rigid"):
        exact_query(a, a, pose_b=np.diag([2.0, 1.0, 1.0, 1.0]))
    with pytest.raises(ValueError, match="want"):
        exact_query(a, a, want="depth")


def test_intersect_mode_stops_at_the_first_crossing_and_does_not_measure_a_gap():
    a = mesh(box())
    hit = exact_query(a, mesh(box(at=(0.9, 0.1, 0.0))), want="intersect")
    assert hit.status is Status.COLLISION and hit.depth is None
    apart = exact_query(a, mesh(box(at=(3.0, 0.0, 0.0))), want="intersect")
    assert apart.status is Status.CLEAR
    assert apart.distance == float("inf") and apart.distance_lower == apart.tolerance


def test_bad_meshes_are_refused_with_their_name():
    with pytest.raises(ValueError, match="plate: a mesh needs at least one triangle"):
        Mesh.from_arrays(np.zeros((3, 3)), np.zeros((0, 3), dtype=int), name="plate")
    with pytest.raises(ValueError, match="faces point past"):
        Mesh.from_arrays(np.zeros((3, 3)), [[0, 1, 3]], name="plate")


def test_threads_share_meshes_and_get_the_serial_answers():
    from concurrent.futures import ThreadPoolExecutor

    rng = np.random.default_rng(9)
    torus = mesh(trimesh.creation.torus(major_radius=2.0, minor_radius=0.5))
    ring = mesh(trimesh.creation.torus(major_radius=1.0, minor_radius=0.2))
    poses = [pose(random_rotation(rng), rng.normal(size=3) * 1.5) for _ in range(40)]
    serial = [exact_query(torus, ring, pose_b=T) for T in poses]
    with ThreadPoolExecutor(4) as pool:
        threaded = list(pool.map(lambda T: exact_query(torus, ring, pose_b=T), poses))
    for r, s in zip(serial, threaded):
        assert (r.status, r.distance, r.depth) == (s.status, s.distance, s.depth)


def test_hull_and_exact_agree_on_convex_parts():
    from gjkcli.engine.query import query
    from gjkcli.engine.shapes import Shape

    rng = np.random.default_rng(5)
    sphere = trimesh.creation.icosphere(subdivisions=3, radius=1.0)
    cube = box((1.5, 1.0, 0.5))
    a, b = mesh(sphere), mesh(cube)
    statuses = []
    for _ in range(60):
        T = pose(random_rotation(rng), rng.normal(size=3) * 1.2)
        hull = query(Shape.hull(sphere.vertices), Shape.hull(cube.vertices, transform=T))
        exact = exact_query(a, b, pose_b=T)
        if abs(hull.signed_distance) <= 10 * exact.tolerance:
            continue
        assert exact.status is hull.status
        if hull.status is Status.CLEAR:
            assert exact.distance == pytest.approx(hull.distance, rel=1e-9)
        statuses.append(hull.status)
    assert 10 <= statuses.count(Status.COLLISION) <= len(statuses) - 10  # both kinds were met


# ------------------------------------------------------------------------------------------------
# against python-fcl on real non-convex parts
# ------------------------------------------------------------------------------------------------

REAL = ["meshes/featuretype.STL", "meshes/fandisk.obj", "meshes/ADIS16480.STL",
        "meshes/idler_riser.STL", "meshes/bunny.ply", "robots/ur5/forearm.stl"]


@needs_shared
@pytest.mark.shared
@pytest.mark.parametrize("name", REAL)
def test_random_poses_intersection_and_distance_match_fcl(name):
    m = shared_mesh(name)
    v = m.vertices - m.bounds.mean(axis=0)
    a = Mesh.from_arrays(v, m.faces, name=name)
    size = a.size
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    fa = fcl_object(v, m.faces)
    hits = checked = 0
    for _ in range(60):
        T = pose(random_rotation(rng), rng.normal(size=3))
        T[:3, 3] *= size * rng.uniform(0.3, 0.9) / np.linalg.norm(T[:3, 3])
        fb = fcl_object(v, m.faces, T)
        theirs = fcl_collide(fa, fb)
        ours = exact_query(a, a, pose_b=T, want="distance")
        if theirs:
            hits += 1
            assert ours.status is Status.COLLISION
            continue
        d = fcl_distance(fa, fb)
        # contained parts aside (FCL misses them), the distances agree to 1e-9 relative
        if ours.contained is None:
            assert ours.status is (Status.CLEAR if d > ours.tolerance else Status.TOUCHING)
            assert ours.distance == pytest.approx(d, rel=1e-9), (name, ours.distance, d)
            assert np.linalg.norm(ours.point_a - ours.point_b) == pytest.approx(d, rel=1e-9)
            # the witnesses lie on the surfaces
            assert brute_closest_bvh(a, ours.point_a) <= 1e-12 * size
            assert brute_closest_bvh(a, np.linalg.solve(T, np.r_[ours.point_b, 1.0])[:3]) <= 1e-12 * size
            checked += 1
    assert 0.05 * 60 <= hits <= 0.9 * 60  # the poses meet both answers (forearm: 10% to 35%)
    assert checked >= 5


def brute_closest_bvh(a: Mesh, p) -> float:
    return float(_mesh.closest(a.bvh, np.asarray(p)[None] - a.centre)[0][0])


# ------------------------------------------------------------------------------------------------
# scenes in ../shared: colliding pairs against FCL through trimesh's CollisionManager
# ------------------------------------------------------------------------------------------------

SCENES = [
    # (file, split bodies, FCL pairs from ../shared/meshes/README.md with this project's loader)
    ("meshes/pins.glb", False),
    ("meshes/boolean.glb", False),
    ("meshes/simple_pole.glb", False),
    ("meshes/chair_model.obj", False),
    ("meshes/kinematic.tar.gz", False),
    ("meshes/FM1_satellite.3DXML", False),
    ("meshes/TestScene.gltf", False),
    ("meshes/CesiumMilkTruck.glb", False),
    ("meshes/multibody.stl", False),
    ("meshes/nested.glb", False),
    ("meshes/two_objects_mixed_case_names.stl", False),
    ("meshes/pyramids.3mf", False),
    ("3mf/dodeca_chain_loop.3mf", True),
]


def scene_answers(path: str, split: bool):
    from gjkcli.mesh.load import load_objects

    parts = load_objects(SHARED / path, split_bodies=split)
    manager = trimesh.collision.CollisionManager()
    for p in parts:  # every part already moved by its node's full world transform
        manager.add_object(p.name, trimesh.Trimesh(p.vertices, p.faces, process=False))
    _, names = manager.in_collision_internal(return_names=True)
    theirs = {frozenset(n) for n in names}
    meshes = {p.name: Mesh.from_part(p) for p in parts}
    ours = {}
    for p, q in itertools.combinations(parts, 2):
        lo = np.maximum(p.bounds[0], q.bounds[0])
        hi = np.minimum(p.bounds[1], q.bounds[1])
        if np.any(lo > hi + 1e-6 * max(p.diagonal, q.diagonal)):
            continue  # boxes apart by more than any band: clear for both
        ours[frozenset((p.name, q.name))] = (exact_query(meshes[p.name], meshes[q.name]), p, q)
    return parts, theirs, ours


@needs_shared
@pytest.mark.shared
@pytest.mark.parametrize("path, split", SCENES, ids=[s[0].split("/")[-1] for s in SCENES])
def test_scene_colliding_pairs_equal_fcl_except_containment_and_touching(path, split):
    parts, theirs, ours = scene_answers(path, split)
    collide = {k for k, (r, _, _) in ours.items() if r.status is Status.COLLISION}
    for key in collide - theirs:  # ours only: a part inside the other, which FCL cannot see
        r, p, q = ours[key]
        assert r.contained is not None, (sorted(key), r.exit)
        container = p if r.contained == "b in a" else q
        assert inside_by_rays(r.certificate.point, container.vertices, container.faces)[0], sorted(key)
    for key in theirs - collide:  # FCL only: touching (faces flush), shown within the band
        r, p, q = ours[key]
        assert r.status is Status.TOUCHING, (sorted(key), r.status, r.exit)
        assert touching_shown(r, p, q), sorted(key)


def touching_shown(r, p, q) -> bool:
    """Independent evidence that a pair FCL calls colliding is within the touching band: their
    boxes overlap by at most the band along an axis; or, for solids, no volume in common
    (manifold3d's boolean intersection, else no sample point inside both by ray parity); or a
    move of 10 bands along an axis or the normal after which FCL sees them apart; or every
    contact FCL reports is between triangles one of which lies on one side of the other."""
    tol = r.tolerance
    lo, hi = np.maximum(p.bounds[0], q.bounds[0]), np.minimum(p.bounds[1], q.bounds[1])
    if np.any(hi - lo <= tol):
        return True  # a plane x, y or z = c separates them within the band
    if p.watertight and q.watertight:
        common = _common_volume(p, q)
        if common is not None:
            return common <= tol * min(trimesh.Trimesh(m.vertices, m.faces, process=False).area
                                       for m in (p, q))
        samples = np.random.default_rng(0).uniform(lo, hi, size=(300, 3))
        inside_p = inside_by_rays(samples, p.vertices, p.faces)
        inside_both = inside_p.copy()
        inside_both[inside_p] = inside_by_rays(samples[inside_p], q.vertices, q.faces)
        if not inside_both.any():
            return True
    fa = fcl_object(p.vertices, p.faces)
    for d in [r.normal, *np.eye(3), *-np.eye(3)]:
        if not fcl_collide(fa, fcl_object(q.vertices + 10 * tol * d, q.faces)):
            return True
    request = fcl.CollisionRequest(num_max_contacts=100000, enable_contact=True)
    result = fcl.CollisionResult()
    fcl.collide(fa, fcl_object(q.vertices, q.faces), request, result)
    for c in result.contacts:
        P, Q = p.vertices[p.faces[c.b1]], q.vertices[q.faces[c.b2]]
        if not (_one_side(P, Q, tol) or _one_side(Q, P, tol)):
            return False
    return len(result.contacts) > 0


def _common_volume(p, q):
    """Volume of the intersection by manifold3d, or None without it."""
    try:
        import manifold3d  # noqa: F401
    except ImportError:
        return None
    ma = trimesh.Trimesh(p.vertices, p.faces, process=False)
    mb = trimesh.Trimesh(q.vertices, q.faces, process=False)
    try:
        with np.errstate(all="ignore"):  # trimesh divides by an empty result's volume
            return trimesh.boolean.intersection([ma, mb], engine="manifold").volume
    except ValueError:  # manifold3d refuses a mesh it does not take for a volume
        return None


def _one_side(P, Q, tol) -> bool:
    """P lies on one side of Q's plane, within tol: the triangles can only touch."""
    n = np.cross(Q[1] - Q[0], Q[2] - Q[0])
    n /= np.linalg.norm(n)
    d = (P - Q[0]) @ n
    return bool(d.max() <= tol or d.min() >= -tol)


@needs_shared
@pytest.mark.shared
def test_chain_links_never_touch_and_their_closest_gap_matches_fcl():
    from gjkcli.mesh.load import load_objects

    links = load_objects(SHARED / "3mf/dodeca_chain_loop.3mf", split_bodies=True)
    assert len(links) == 40
    assert all("#" in p.name for p in links)  # names say which body
    meshes = [Mesh.from_part(p) for p in links]
    objects = [fcl_object(p.vertices, p.faces) for p in links]
    gaps = []
    for i, j in itertools.combinations(range(len(links)), 2):
        lo = np.maximum(links[i].bounds[0], links[j].bounds[0])
        hi = np.minimum(links[i].bounds[1], links[j].bounds[1])
        if np.any(lo > hi):
            continue
        r = exact_query(meshes[i], meshes[j])
        assert r.status is Status.CLEAR
        d = fcl_distance(objects[i], objects[j])
        assert r.distance == pytest.approx(d, rel=1e-9)
        gaps.append(r.distance)
    assert len(gaps) >= 40  # each link's hull overlaps its neighbours'
    assert min(gaps) == pytest.approx(0.020, abs=5e-4)


def test_distinct_indices_are_np_unique_s_dense_or_sparse(tmp_path):
    """exact.distinct (counting where the indices are dense, sorting where a few indices of a
    large mesh, or edge keys a * n + b, would make the count that large) answers as np.unique,
    and a run that uses it alone never imports numpy.ma (np.unique's first call does)."""
    from gjkcli.engine.exact import distinct

    rng = np.random.default_rng(3)
    for ints in (np.zeros(0, dtype=np.int64), rng.integers(0, 50, 200), rng.integers(0, 20_000_000, 7),
                 np.array([[4, 1], [4, 9]]), rng.integers(0, 10**12, 5000), np.array([7, 7, 7])):
        assert np.array_equal(distinct(ints), np.unique(ints))
    code = ("import sys, numpy as np\n"
            "from gjkcli.engine.exact import distinct\n"
            "distinct(np.array([3, 10**9, 3]))\n"
            "distinct(np.array([1, 2, 2]))\n"
            "print('numpy.ma' in sys.modules)\n")
    assert python_c(code, cwd=tmp_path).split() == ["False"]
