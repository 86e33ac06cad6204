"""The checker of part certificates (gjkcli.engine.certify: winding_number, triangles_cross,
verify_part_certificate) against references that share nothing with it: ray parity by brute force
(and trimesh's `contains` where its ray engine is installed), a linear programme for whether two
triangles meet, a convex programme for their distance, and parts whose truth is known by
construction (trimesh.creation boxes, spheres and tori, pockets, cavities and holes cut with
manifold3d booleans). True certificates must be accepted, tampered ones refused.
"""
from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from scipy.optimize import linprog, minimize

from gjkcli.engine.certify import (
    MAX_TRIANGLE_PAIRS,
    closest_points_on_triangles,
    part_slack,
    point_mesh_distance,
    triangle_pair_distance,
    triangles_cross,
    verify_part_certificate,
    winding_number,
)
from gjkcli.tolerances import DEFAULT

trimesh = pytest.importorskip("trimesh")


def need_manifold():
    pytest.importorskip("manifold3d", reason="manifold3d cuts the pockets, cavities and holes (a test dependency)")


# -- references -----------------------------------------------------------------------------------


def ray_parity(triangles: np.ndarray, points: np.ndarray, direction: np.ndarray) -> np.ndarray:
    """Inside by the parity of a ray's crossings (Moller-Trumbore against every triangle)."""
    a, e1, e2 = triangles[:, 0], triangles[:, 1] - triangles[:, 0], triangles[:, 2] - triangles[:, 0]
    h = np.cross(direction, e2)
    det = np.einsum("ij,ij->i", e1, h)
    out = np.zeros(len(points), dtype=bool)
    with np.errstate(divide="ignore", invalid="ignore"):
        for k, p in enumerate(points):
            s = p - a
            u = np.einsum("ij,ij->i", s, h) / det
            q = np.cross(s, e1)
            v = (q @ direction) / det
            t = np.einsum("ij,ij->i", e2, q) / det
            out[k] = np.count_nonzero((det != 0) & (u >= 0) & (v >= 0) & (u + v <= 1) & (t > 0)) % 2 == 1
    return out


def lp_margin(P: np.ndarray, Q: np.ndarray) -> float:
    """max t over barycentric weights l of P and m of Q with sum l P = sum m Q, every weight >= t:
    > 0 when the triangles share a point inside both, < 0 when they share none."""
    A_eq = np.zeros((5, 7))
    A_eq[:3, :3], A_eq[:3, 3:6] = P.T, -Q.T
    A_eq[3, :3] = A_eq[4, 3:6] = 1.0
    b_eq = np.array([0.0, 0.0, 0.0, 1.0, 1.0])
    A_ub = np.zeros((6, 7))
    A_ub[np.arange(6), np.arange(6)] = -1.0
    A_ub[:, 6] = 1.0
    res = linprog(np.r_[np.zeros(6), -1.0], A_ub=A_ub, b_ub=np.zeros(6), A_eq=A_eq, b_eq=b_eq,
                  bounds=[(None, None)] * 6 + [(None, 1.0)], method="highs")
    assert res.status == 0, res.message
    return -float(res.fun)


def qp_distance(P: np.ndarray, Q: np.ndarray) -> float:
    """Distance of two triangles by a convex programme over both barycentric weights."""
    def f(x):
        d = x[:3] @ P - x[3:] @ Q
        return d @ d

    cons = [{"type": "eq", "fun": lambda x: x[:3].sum() - 1.0}, {"type": "eq", "fun": lambda x: x[3:].sum() - 1.0}]
    best = np.inf
    for start in (np.full(6, 1 / 3), np.array([1.0, 0, 0, 0, 1.0, 0])):
        res = minimize(f, start, method="SLSQP", bounds=[(0, 1)] * 6, constraints=cons,
                       options={"ftol": 1e-16, "maxiter": 500})
        best = min(best, float(np.sqrt(max(res.fun, 0.0))))
    return best


def box(lo, hi):
    lo, hi = np.asarray(lo, float), np.asarray(hi, float)
    return trimesh.creation.box(extents=hi - lo, transform=trimesh.transformations.translation_matrix((lo + hi) / 2))


def level(mesh, z: float) -> float:
    """The mesh's vertex height nearest z (manifold3d rounds to float32: the truth is the file's)."""
    zs = mesh.vertices[:, 2]
    found = float(zs[np.argmin(np.abs(zs - z))])
    assert abs(found - z) <= 1e-6 * max(1.0, abs(z))
    return found


def pocket(gap: float):
    """A 10 x 10 x 10 box with a 4 x 4 pocket 0.02 deep in its top face; a unit cube `gap` above
    the pocket's floor (gap < 0: sunk into it). Returns (box, cube, floor height)."""
    need_manifold()
    body = box([-5, -5, -5], [5, 5, 5]).difference(box([-2, -2, 4.98], [2, 2, 6]), engine="manifold")
    floor = level(body, 4.98)
    cube = box([-0.5, -0.5, floor + gap], [0.5, 0.5, floor + gap + 1.0])
    return body, cube, floor


def verify(a, b, certificate, tolerance=None):
    if tolerance is None:
        size = max(np.linalg.norm(np.ptp(a.vertices, axis=0)), np.linalg.norm(np.ptp(b.vertices, axis=0)))
        tolerance = DEFAULT.touching_rel * size
    return verify_part_certificate(a.vertices, a.faces, b.vertices, b.faces, certificate, tolerance)


# -- winding numbers ------------------------------------------------------------------------------

SOLIDS = {
    "box": (lambda: trimesh.creation.box(extents=[2.0, 1.0, 0.5]), [-1.6, -0.8, -0.4], [1.6, 0.8, 0.4]),
    "sphere": (lambda: trimesh.creation.icosphere(subdivisions=3, radius=1.0), [-1.2] * 3, [1.2] * 3),
    "torus": (lambda: trimesh.creation.torus(major_radius=1.0, minor_radius=0.4), [-1.45, -1.45, -0.45],
              [1.45, 1.45, 0.45]),
}


@pytest.mark.parametrize("name", sorted(SOLIDS))
def test_winding_numbers_tell_inside_from_outside(name):
    make, lo, hi = SOLIDS[name]
    mesh = make()
    assert mesh.is_watertight and mesh.is_winding_consistent and mesh.volume > 0
    rng = np.random.default_rng([7, len(name)])
    points = rng.uniform(lo, hi, (1500, 3))
    w = winding_number(mesh.vertices, mesh.faces, points)
    assert w.shape == (len(points),)
    # off the surface the number is an integer, 0 or 1, to rounding
    assert np.max(np.minimum(np.abs(w), np.abs(w - 1.0))) < 1e-9
    inside = w > DEFAULT.winding_inside
    assert 0.2 <= inside.mean() <= 0.8, f"the sample must hold both outcomes: {inside.mean():.2f} inside"
    # two rays in different directions; where they disagree a ray grazed an edge (kept out, rare)
    d1, d2 = rng.normal(size=3), rng.normal(size=3)
    r1 = ray_parity(mesh.triangles, points, d1 / np.linalg.norm(d1))
    r2 = ray_parity(mesh.triangles, points, d2 / np.linalg.norm(d2))
    sure = r1 == r2
    assert sure.mean() > 0.99
    assert np.array_equal(inside[sure], r1[sure])
    if importlib.util.find_spec("rtree") is not None or importlib.util.find_spec("embreex") is not None:
        assert np.array_equal(inside, mesh.contains(points))  # trimesh's own ray test


def test_winding_numbers_of_inverted_hollow_and_surface_points():
    need_manifold()
    sphere = trimesh.creation.icosphere(subdivisions=2)
    centre = np.zeros((1, 3))
    assert winding_number(sphere.vertices, sphere.faces[:, ::-1], centre)[0] == pytest.approx(-1.0, abs=1e-12)
    # on a face (its centroid, rounded) the face's own solid angle is +-2 pi as the rounding
    # falls: 0, 1/2 or 1, never anything else (the checker asks the distance to the surface first)
    w = winding_number(sphere.vertices, sphere.faces, sphere.triangles_center)
    assert np.all(np.min(np.abs(w[:, None] - [0.0, 0.5, 1.0]), axis=1) < 1e-9)
    # a hollow box: the cavity is outside the part, the wall inside
    shell = box([-5, -5, -5], [5, 5, 5]).difference(box([-4, -4, -4], [4, 4, 4]), engine="manifold")
    w = winding_number(shell.vertices, shell.faces, [[0, 0, 0], [4.5, 0, 0], [6, 0, 0], [0, 0, -4.5]])
    assert np.allclose(w, [0, 1, 0, 1], atol=1e-9)
    # chunked the same as at once (more points than one block takes)
    pts = np.random.default_rng(3).uniform(-1.5, 1.5, (700, 3))
    whole = winding_number(sphere.vertices, sphere.faces, pts)
    parts = np.concatenate([winding_number(sphere.vertices, sphere.faces, pts[i:i + 7]) for i in range(0, 700, 7)])
    assert np.allclose(whole, parts, atol=1e-12)


# -- distances ------------------------------------------------------------------------------------


def test_point_triangle_and_triangle_pair_distances_against_a_convex_programme():
    rng = np.random.default_rng(11)
    for _ in range(60):
        T = rng.normal(size=(3, 3))
        p = rng.normal(size=3) * 2
        q = closest_points_on_triangles(p, *T)
        single = qp_distance(T, np.array([p, p, p]))
        assert np.linalg.norm(q - p) == pytest.approx(single, abs=1e-6)
    apart = 0
    for _ in range(60):
        P, Q = rng.uniform(0, 1, (3, 3)), rng.uniform(0, 1, (3, 3)) + [0.6, 0, 0]
        d = float(triangle_pair_distance(P, Q))
        ref = qp_distance(P, Q)
        assert d == pytest.approx(ref, abs=1e-6)
        apart += d > 1e-6
    assert 10 <= apart <= 55
    # a corner of a degenerate (flat) triangle
    flat = np.array([[0.0, 0, 0], [1, 0, 0], [2, 0, 0]])
    assert np.linalg.norm(closest_points_on_triangles([3.0, 1, 0], *flat) - [2, 0, 0]) < 1e-15
    assert point_mesh_distance(flat, [[0, 1, 2]], [[1.5, 2.0, 0]])[0] == pytest.approx(2.0)


# -- crossing triangles ---------------------------------------------------------------------------


def test_triangles_cross_agrees_with_a_linear_programme_on_random_pairs():
    rng = np.random.default_rng(5)
    crossing = apart = near = 0
    for _ in range(400):
        P, Q = rng.uniform(0, 1, (3, 3)), rng.uniform(0, 1, (3, 3))
        m = lp_margin(P, Q)
        if abs(m) < 1e-7:  # a boundary case the reference cannot call
            near += 1
            continue
        got = triangles_cross(P, Q, 1e-12)
        assert got == (m > 0), (P.tolist(), Q.tolist(), m)
        assert triangles_cross(Q, P, 1e-12) == got
        crossing += got
        apart += not got
        # meeting is distance 0 (for generic triangles, meeting is crossing)
        assert (float(triangle_pair_distance(P, Q)) == 0.0) == got
    assert near <= 4
    share = crossing / (crossing + apart)
    assert 0.1 <= share <= 0.6, f"both outcomes must be present: {share:.2f} cross"


def rigid_motion(rng, reach):
    q, r = np.linalg.qr(rng.normal(size=(3, 3)))
    q = q * np.sign(np.diag(r))
    if np.linalg.det(q) < 0:
        q[:, 0] = -q[:, 0]
    return q, rng.normal(size=3) * reach


TOUCH = {  # pairs that meet without crossing
    "coplanar, overlapping": ([[0, 0, 0], [2, 0, 0], [0, 2, 0]], [[0.5, 0.5, 0], [3, 0.5, 0], [0.5, 3, 0]]),
    "corner on a face": ([[0, 0, 0], [2, 0, 0], [0, 2, 0]], [[0.5, 0.5, 0], [1, 0.5, 1], [0.5, 1, 1]]),
    "edge on a face": ([[0, 0, 0], [2, 0, 0], [0, 2, 0]], [[0.2, 0.2, 0], [0.8, 0.2, 0], [0.5, 0.5, 1]]),
    "shared edge (a cube's corner)": ([[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 0, 0], [1, 0, 0], [0, 0, 1]]),
    "corner to corner": ([[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 0, 0], [-1, 0, 1], [0, -1, 1]]),
    "edge across an edge": ([[-1, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, -1, 0], [0, 0, 1], [0, 0, -1]]),
}


@pytest.mark.parametrize("name", sorted(TOUCH))
def test_touching_triangles_do_not_cross(name):
    P, Q = (np.array(t, dtype=float) for t in TOUCH[name])
    rng = np.random.default_rng(len(name))
    for far in (0.0, 1e4):
        R, t = rigid_motion(rng, far)
        P2, Q2 = P @ R.T + t, Q @ R.T + t
        tol = 1e-9 * (1.0 + far)
        assert not triangles_cross(P2, Q2, tol)
        assert not triangles_cross(Q2, P2, tol)
        assert float(triangle_pair_distance(P2, Q2)) <= 1e-9 * (1.0 + far)


def test_a_crossing_counts_only_beyond_the_band():
    floor = np.array([[-2.0, -2, 0], [2, -2, 0], [0, 2, 0]])
    for depth in (1e-3, 0.5):
        wall = np.array([[0.0, -0.5, -depth], [0, 0.5, -depth], [0, 0, 1]])  # sunk `depth` below the floor
        assert triangles_cross(floor, wall, 0.1 * depth)
        assert not triangles_cross(floor, wall, 2 * depth)
    # a corner poked through by 1e-3: crosses at a band of 1e-4, touches at 1e-2
    spike = np.array([[0.0, 0, -1e-3], [-1, 0, 1], [1, 0, 1]])
    assert triangles_cross(floor, spike, 1e-4) and not triangles_cross(floor, spike, 1e-2)
    # no area, nothing crosses
    assert not triangles_cross(floor, [[0, 0, -1], [0, 0, 0], [0, 0, 1]], 0.0)


# -- certificates of parts ------------------------------------------------------------------------


def test_a_distance_certificate_of_the_pocket():
    body, cube, floor = pocket(0.005)
    true = {"kind": "distance", "lower": 0.005}
    assert verify(body, cube, true) is None
    assert verify(cube, body, true) is None
    assert verify(body, cube, {**true, "lower": 0.004, "of": "parts"}) is None  # weaker still holds
    slack = part_slack(body.vertices, cube.vertices)
    for raised in (0.005 + 100 * slack, 0.006, 0.03):
        why = verify(body, cube, {"kind": "distance", "lower": raised})
        assert why is not None and "less than the lower bound" in why
    # the hulls' distance says nothing of the parts: the cube is inside the box's hull
    assert verify(body, cube, {"kind": "distance", "lower": 0.0}) is not None


def test_a_distance_certificate_far_from_the_origin():
    body, cube, _ = pocket(0.005)
    rng = np.random.default_rng(2)
    R, _ = rigid_motion(rng, 0.0)
    T = np.eye(4)
    T[:3, :3], T[:3, 3] = R, [1e4, -2e4, 3e4]
    body.apply_transform(T)
    cube.apply_transform(T)
    assert verify(body, cube, {"kind": "distance", "lower": 0.005}) is None
    assert verify(body, cube, {"kind": "distance", "lower": 0.005 + 1e-6}) is not None


def test_a_distance_certificate_needs_neither_part_inside_the_other():
    need_manifold()
    big = box([-5, -5, -5], [5, 5, 5])
    small = box([-1, -1, -1], [1, 1, 1])
    for a, b in ((big, small), (small, big)):
        why = verify(a, b, {"kind": "distance", "lower": 4.0})
        assert why is not None and "inside" in why
    # in a cavity, the cube is outside the hollow part: 3 from the cavity's walls
    shell = box([-5, -5, -5], [5, 5, 5]).difference(box([-4, -4, -4], [4, 4, 4]), engine="manifold")
    assert verify(shell, small, {"kind": "distance", "lower": 3.0}) is None
    assert verify(shell, small, {"kind": "distance", "lower": 3.1}) is not None
    # a bar through a square hole, 1 from its walls: clear, although the hulls collide
    frame = box([-5, -5, -1], [5, 5, 1]).difference(box([-2, -2, -2], [2, 2, 2]), engine="manifold")
    bar = box([-1, -1, -10], [1, 1, 10])
    assert verify(frame, bar, {"kind": "distance", "lower": 1.0}) is None
    assert verify(frame, bar, {"kind": "distance", "lower": 1.01}) is not None
    # an open surface holds nothing inside: only its surface counts
    lid = trimesh.Trimesh(big.vertices, big.faces[big.face_normals[:, 2] < 0.5], process=False)
    assert verify(lid, small, {"kind": "distance", "lower": 4.0}) is None


def test_a_point_certificate():
    body, cube, floor = pocket(-0.01)  # sunk 0.01 into the floor
    assert verify(body, cube, {"kind": "point", "point": [0.0, 0.0, floor - 0.005]}) is None
    assert verify(cube, body, {"kind": "point", "point": [0.1, 0.2, floor - 0.001]}) is None
    for moved in ([0.0, 0.0, floor + 0.005],  # in the cube, in the pocket: outside the box
                  [0.0, 0.0, floor - 0.02],  # in the box, below the cube
                  [1.5, 1.5, 4.99],  # in the pocket beside the cube: in the box's hull, in neither part
                  [0.0, 0.0, 100.0]):
        why = verify(body, cube, {"kind": "point", "point": moved})
        assert why is not None and "outside" in why
    # touching: a point on the floor under the flush cube, within the band of both surfaces
    body, cube, floor = pocket(0.0)
    band = DEFAULT.touching_rel * np.sqrt(300.0)
    assert verify(body, cube, {"kind": "point", "point": [0.2, -0.3, floor]}, band) is None
    assert verify(body, cube, {"kind": "point", "point": [0.2, -0.3, floor + 100 * band]}, band) is not None


def crossing_pair(body, cube, point, n_body, n_cube):
    """The triangles of body and cube through `point` with normals n_body and n_cube."""
    def find(mesh, normal):
        near = point_mesh_distance(mesh.vertices, mesh.faces, np.array([point]))[0]
        assert near < 1e-12
        d = np.array([np.linalg.norm(closest_points_on_triangles(point, *t) - point) for t in mesh.triangles])
        hits = np.flatnonzero((d < 1e-12) & (mesh.face_normals @ normal > 0.999))
        assert len(hits)
        return int(hits[0])
    return find(body, np.asarray(n_body, float)), find(cube, np.asarray(n_cube, float))


def test_a_triangles_certificate():
    body, cube, floor = pocket(-0.01)
    point = np.array([0.5, 0.1, floor])  # the cube's +x side through the pocket's floor
    ia, ib = crossing_pair(body, cube, point, [0, 0, 1], [1, 0, 0])
    cert = {"kind": "triangles", "a": ia, "b": ib, "point": point.tolist(), "of": "parts"}
    assert verify(body, cube, cert) is None
    top = int(np.flatnonzero(cube.face_normals[:, 2] > 0.999)[0])
    why = verify(body, cube, {**cert, "b": top})  # a pair that does not cross
    assert why is not None and "do not cross" in why
    assert verify(body, cube, {**cert, "a": ib, "b": ia}) is not None  # the indices swapped
    assert verify(cube, body, cert) is not None  # the parts swapped
    assert verify(body, cube, {**cert, "point": [0.5, 0.1, floor + 0.5]}) is not None  # the point moved
    # flush: the cube's side ends on the floor, touching, never crossing
    body, cube, floor = pocket(0.0)
    point = np.array([0.5, 0.1, floor])
    ia, ib = crossing_pair(body, cube, point, [0, 0, 1], [1, 0, 0])
    why = verify(body, cube, {"kind": "triangles", "a": ia, "b": ib, "point": point.tolist()})
    assert why is not None and "do not cross" in why


def test_a_plane_certificate():
    a = box([-1, -1, -1], [1, 1, 1])
    b = trimesh.creation.icosphere(subdivisions=2, radius=1.0)
    b.apply_translation([3.0, 0, 0])
    n = [1.0, 0.0, 0.0]
    assert verify(a, b, {"kind": "plane", "normal": n, "offset": 1.5}) is None
    assert verify(a, b, {"kind": "plane", "normal": n, "offset": 1.0}) is None  # on A's face
    assert verify(a, b, {"kind": "plane", "normal": n, "offset": 0.9}) is not None  # through A
    assert verify(a, b, {"kind": "plane", "normal": n, "offset": 2.1}) is not None  # through B
    assert verify(b, a, {"kind": "plane", "normal": n, "offset": 1.5}) is not None  # wrong side
    assert verify(a, b, {"kind": "plane", "normal": [2.0, 0, 0], "offset": 3.0}) is not None  # not unit
    # a plane between the pocket's floor and the cube is no plane between the parts: the rim
    body, cube, floor = pocket(0.005)
    why = verify(body, cube, {"kind": "plane", "normal": [0, 0, 1.0], "offset": floor + 0.0025})
    assert why is not None and "above the plane" in why


def test_malformed_and_oversized_certificates_are_refused_with_a_reason():
    a, b = box([-1, -1, -1], [1, 1, 1]), box([2, -1, -1], [4, 1, 1])
    for bad in (None, {}, {"kind": "sphere"}, {"kind": "point"}, {"kind": "point", "point": [0, 0]},
                {"kind": "point", "point": [float("nan"), 0, 0]}, {"kind": "distance", "lower": None},
                {"kind": "distance", "lower": float("inf")}, {"kind": "distance", "lower": -1.0},
                {"kind": "triangles", "a": 99, "b": 0, "point": [1.5, 0, 0]},
                {"kind": "triangles", "a": 0.5, "b": 0, "point": [1.5, 0, 0]},
                {"kind": "plane", "normal": [1, 0, 0]}):
        why = verify(a, b, bad)
        assert isinstance(why, str) and why and "\n" not in why
    assert verify(a, b, {"kind": "distance", "lower": 1.0}) is None
    big = trimesh.creation.icosphere(subdivisions=5)
    assert len(big.faces) ** 2 > MAX_TRIANGLE_PAIRS
    other = big.copy()
    other.apply_translation([5.0, 0, 0])
    why = verify(big, other, {"kind": "distance", "lower": 1.0})
    assert why is not None and "brute-force" in why
