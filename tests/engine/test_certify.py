"""gjkcli.engine.certify: the checker must accept what is true and refuse what is not.

Every other test file runs `check_certificate` on every answer it gets from an oracle case; here
the checker itself is put to the test: its analytic extents against dense samples, its point
distances against closed forms, and its verdict on certificates that were tampered with.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from conftest import fibonacci_directions, random_cloud, random_rigid, rigid, rng_for, segment_distance
from gjkcli.engine.certify import (
    check_certificate,
    closest_on_triangle,
    default_slack,
    distance_to_shape,
    hull_point_distance,
    support_value,
    verify,
)
from gjkcli.engine.query import query
from gjkcli.engine.results import PlaneCertificate, PointCertificate, Status
from gjkcli.engine.shapes import Shape
from gjkcli.tolerances import DEFAULT


def samples(shape: Shape, n: int = 100000, seed: int = 0) -> np.ndarray:
    """World points filling a primitive's core (solid), for brute-force extents and distances."""
    rng = np.random.default_rng(seed)
    dims = shape.dims
    if shape.kind == "box":
        local = rng.uniform(-1, 1, (n, 3)) * dims
        local = np.vstack([local, np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]) * dims])
    elif shape.kind in ("cylinder", "cone"):
        r, h = dims[0], dims[1]
        z = rng.uniform(-h, h, n)
        radius = r * np.sqrt(rng.uniform(0, 1, n))
        if shape.kind == "cone":
            radius *= (h - z) / (2 * h)
        theta = rng.uniform(0, 2 * np.pi, n)
        local = np.column_stack([radius * np.cos(theta), radius * np.sin(theta), z])
        rim = np.linspace(0, 2 * np.pi, 4000, endpoint=False)
        zr = [-h, h] if shape.kind == "cylinder" else [-h]
        rims = [np.column_stack([r * np.cos(rim), r * np.sin(rim), np.full_like(rim, zz)]) for zz in zr]
        local = np.vstack([local, *rims, [[0, 0, h]]])
    elif shape.kind == "segment":
        local = np.column_stack([np.zeros((n, 2)), np.linspace(-dims[0], dims[0], n)])
    else:
        local = np.zeros((1, 3))
    return local @ shape.rotation.T + shape.translation


KINDS = {
    "box": lambda T: Shape.box([0.6, 1.4, 2.2], T),
    "cylinder": lambda T: Shape.cylinder(0.7, 1.8, T),
    "cone": lambda T: Shape.cone(0.9, 1.4, T),
    "segment": lambda T: Shape.capsule(0.0, 1.6, T),
    "capsule": lambda T: Shape.capsule(0.3, 1.6, T),
    "sphere": lambda T: Shape.sphere(0.8, T[:3, 3]),
    "point": lambda T: Shape.point(T[:3, 3]),
    "rounded box": lambda T: Shape.box([0.6, 1.4, 2.2], T, radius=0.2),
}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_support_value_against_samples(kind):
    rng = rng_for(f"cert support {kind}")
    shape = KINDS[kind](random_rigid(rng, reach=2.0))
    P = samples(shape)
    D = np.vstack([rng.normal(size=(500, 3)), np.eye(3), -np.eye(3), shape.rotation.T, -shape.rotation.T])
    brute = np.max(D @ P.T, axis=1) + shape.radius * np.linalg.norm(D, axis=1)
    got = support_value(shape, D)
    scale = np.linalg.norm(D, axis=1) * (np.max(np.abs(shape.bounds)) + 1)
    assert np.all(got >= brute - 1e-12 * scale)  # nothing of the shape beyond its extent
    assert np.all(got - brute <= 2e-3 * scale)  # and the extent is reached (to the sampling)
    assert support_value(shape, D[0]) == pytest.approx(got[0])


def test_support_value_of_hulls_is_brute_force():
    rng = rng_for("cert hull support")
    for _ in range(20):
        V = random_cloud(rng, 40)
        shape = Shape.hull(V, transform=random_rigid(rng), radius=rng.uniform(0, 0.5))
        D = rng.normal(size=(200, 3))
        want = np.max(D @ shape.world_vertices.T, axis=1) + shape.radius * np.linalg.norm(D, axis=1)
        np.testing.assert_allclose(support_value(shape, D), want, rtol=1e-14, atol=1e-14)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_distance_to_shape_against_samples(kind):
    """Outside: the distance to the nearest sample (within the sampling's spacing). Inside: 0."""
    rng = rng_for(f"cert dist {kind}")
    shape = KINDS[kind](random_rigid(rng, reach=1.0))
    P = samples(shape, 60000)
    centre = shape.translation
    for k in range(60):
        p = centre + rng.normal(size=3) * 1.5
        d = distance_to_shape(shape, p)
        nearest = float(np.min(np.linalg.norm(P - p, axis=1))) - shape.radius
        assert d >= 0.0
        assert d <= max(nearest, 0.0) + 1e-12  # never more than some point of the shape is away
        assert d >= nearest - 0.05  # and not much less than the sampled nearest point
    for k in range(40):  # points of the shape itself are at distance 0
        p = P[rng.integers(len(P))]
        assert distance_to_shape(shape, p) <= 1e-12


def test_hull_point_distance_exact_on_triangles_segments_points():
    rng = rng_for("nnls")
    for _ in range(200):
        tri = rng.normal(size=(3, 3))
        p = rng.normal(size=3) * 2
        exact = float(np.linalg.norm(closest_on_triangle(p, *tri) - p))
        assert hull_point_distance(tri, p) == pytest.approx(exact, abs=1e-9)
        seg = rng.normal(size=(2, 3))
        assert hull_point_distance(seg, p) == pytest.approx(segment_distance(seg[0], seg[1], p, p), abs=1e-9)
        assert hull_point_distance(seg[:1], p) == pytest.approx(float(np.linalg.norm(seg[0] - p)), abs=1e-12)
        # a point of the triangle is on it
        w = rng.dirichlet([1, 1, 1])
        assert hull_point_distance(tri, w @ tri) <= 1e-12


def test_flat_and_inflated_hulls_use_the_exact_distance():
    square = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]], dtype=float)
    plate = Shape.hull(square)
    assert plate.dimension == 2
    assert distance_to_shape(plate, [0.5, 0.5, 0.3]) == pytest.approx(0.3)
    assert distance_to_shape(plate, [2.0, 0.5, 0.0]) == pytest.approx(1.0)
    # A point on the plate: the NNLS answer (a 1e4-weighted row for sum(weights) = 1) is exact up
    # to rounding amplified by that weight, whichever BLAS kernel runs: eps x 1e4 x size, with room.
    size = float(np.linalg.norm(square.max(axis=0) - square.min(axis=0)))
    assert distance_to_shape(plate, [0.5, 0.5, 0.0]) <= 100 * 1e4 * np.finfo(float).eps * size
    rounded = Shape.hull(random_cloud(np.random.default_rng(1), 30), radius=0.25)
    far = rounded.world_vertices[0] * 10
    bare = hull_point_distance(rounded.world_vertices, far)
    assert distance_to_shape(rounded, far) == pytest.approx(bare - 0.25, rel=1e-9)


# -- the checker refuses what is false ---------------------------------------------------------------


def pair_apart():
    a = Shape.hull(random_cloud(np.random.default_rng(5), 20))
    b = Shape.box([1, 1, 1], rigid(t=[4.0, 0.0, 0.0]))
    return a, b, query(a, b)


def pair_overlapping():
    a = Shape.hull(random_cloud(np.random.default_rng(6), 20))
    b = Shape.box([1, 1, 1], rigid(t=[0.4, 0.0, 0.0]))
    return a, b, query(a, b)


def test_true_certificates_pass():
    for make in (pair_apart, pair_overlapping):
        a, b, r = make()
        assert r.status in (Status.CLEAR, Status.COLLISION)
        assert check_certificate(a, b, r) is None
        assert verify(a, b, r)


def tamper(result, **changes):
    return dataclasses.replace(result, **changes)


def test_tampered_planes_are_refused():
    a, b, r = pair_apart()
    cert = r.certificate
    assert isinstance(cert, PlaneCertificate)
    gap = r.distance_lower
    slack = default_slack(a, b)
    # an offset moved into A or into B by more than half the gap and the slack
    for shift in (+0.5 * gap + 10 * slack, -0.5 * gap - 10 * slack):
        bad = tamper(r, certificate=PlaneCertificate(cert.normal, cert.offset + shift))
        assert not verify(a, b, bad)
    # a turned normal
    turned = cert.normal + np.array([0.0, 0.3, 0.0])
    assert not verify(a, b, tamper(r, certificate=PlaneCertificate(turned / np.linalg.norm(turned), cert.offset)))
    # a flipped normal
    assert not verify(a, b, tamper(r, certificate=PlaneCertificate(-cert.normal, -cert.offset)))
    # a normal that is not unit
    assert "unit" in check_certificate(a, b, tamper(r, certificate=PlaneCertificate(2 * cert.normal, 2 * cert.offset)))
    # a lower bound beyond the plane's gap
    assert "gap" in check_certificate(a, b, tamper(r, distance_lower=gap * 1.01 + slack))
    # a clear verdict with no plane, or with a point
    assert not verify(a, b, tamper(r, certificate=None))
    assert not verify(a, b, tamper(r, certificate=PointCertificate(r.point_a)))
    # witnesses that are not on the shapes, or do not span the distance
    assert "witness" in check_certificate(a, b, tamper(r, point_a=r.point_a + r.normal * 0.1))
    assert "distance" in check_certificate(a, b, tamper(r, distance=r.distance * 0.9))
    # a clear verdict whose lower bound is not positive
    assert not verify(a, b, tamper(r, distance_lower=0.0))
    # NaN anywhere
    assert "NaN" in check_certificate(a, b, tamper(r, distance=float("nan")))


def test_tampered_points_and_depths_are_refused():
    a, b, r = pair_overlapping()
    cert = r.certificate
    assert isinstance(cert, PointCertificate)
    # a point outside B (beyond its far face), and one outside A
    outside_b = cert.point + np.array([5.0, 0.0, 0.0])
    assert "outside" in check_certificate(a, b, tamper(r, certificate=PointCertificate(outside_b)))
    far = a.world_vertices[np.argmax(a.world_vertices @ [-1.0, 0, 0])] + np.array([-0.1, 0.0, 0.0])
    assert not verify(a, b, tamper(r, certificate=PointCertificate(far)))
    # a depth larger than the overlap along the normal
    assert "depth" in check_certificate(a, b, tamper(r, depth=r.depth * 1.1 + 1e-3))
    # a collision verdict with a plane
    assert not verify(a, b, tamper(r, certificate=PlaneCertificate(r.normal, 0.0)))
    # a normal that does not separate by the depth: the overlap along it is larger, so the depth
    # check alone cannot catch every wrong normal, but a turned one with the same depth is caught
    # when the overlap along it is smaller
    sideways = np.cross(r.normal, [0.0, 0.0, 1.0])
    sideways /= np.linalg.norm(sideways)
    along = support_value(a, sideways) + support_value(b, -sideways)
    if along < r.depth:
        assert not verify(a, b, tamper(r, normal=sideways))


def test_slack_scales_and_covers_rounding_far_away():
    """verify_rel x pair size, plus the rounding of world coordinates 1e9 away from the origin."""
    a, b, _ = pair_apart()
    size = max(a.size, b.size)
    assert default_slack(a, b) == pytest.approx(DEFAULT.verify_rel * size, rel=1e-3)
    T = rigid(t=[1e9, -2e9, 0.0])
    far_a, far_b = a.moved(T), b.moved(T)
    r = query(far_a, far_b)
    assert r.status is Status.CLEAR
    assert verify(far_a, far_b, r)
    assert default_slack(far_a, far_b) > 1e-7  # the world's rounding there is about 2e9 x 1.1e-16
    # with only the relative slack the rounding of the coordinates would fail a true certificate
    # now and then; the default is the one to use, and it stays far below any real error
    assert default_slack(far_a, far_b) < 1e-5


def test_every_kind_of_answer_verifies():
    """One answer of every kind: clear, touching, collision; plane, point, no certificate."""
    rng = rng_for("kinds of answers")
    seen = set()
    for _ in range(300):
        a = Shape.hull(random_cloud(rng, 10), transform=random_rigid(rng, 0.5))
        b = [Shape.sphere(0.5, rng.normal(size=3)), Shape.box([1, 1, 1], random_rigid(rng)),
             Shape.capsule(0.2, 1.0, random_rigid(rng))][int(rng.integers(3))]
        for want in ("verdict", "distance", "intersect"):
            r = query(a, b, want=want)
            assert verify(a, b, r), check_certificate(a, b, r)
            seen.add((r.status, type(r.certificate).__name__))
    touching_a = Shape.box([1, 1, 1])
    touching_b = Shape.box([1, 1, 1], rigid(t=[1.0, 0.3, 0.0]))
    r = query(touching_a, touching_b)
    assert r.status is Status.TOUCHING and verify(touching_a, touching_b, r)
    seen.add((r.status, type(r.certificate).__name__))
    assert (Status.CLEAR, "PlaneCertificate") in seen
    assert (Status.COLLISION, "PointCertificate") in seen
    assert any(status is Status.TOUCHING for status, _ in seen)


def test_fibonacci_directions_are_unit_and_spread():
    D = fibonacci_directions(1000)
    np.testing.assert_allclose(np.linalg.norm(D, axis=1), 1.0)
    assert np.max(np.min(np.arccos(np.clip(D @ fibonacci_directions(50).T, -1, 1)), axis=0)) < 0.1
