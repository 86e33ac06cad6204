"""batch(): many pairs in one compiled call must answer exactly what query() answers pair by pair."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import assert_certified, assert_sane, random_cloud, random_rigid, rigid, rng_for
from gjkcli.engine.query import batch, query
from gjkcli.engine.results import PlaneCertificate, PointCertificate, Status
from gjkcli.engine.shapes import Shape, ShapeSet


def library(rng, count=40):
    makers = [
        lambda T: Shape.hull(random_cloud(rng, int(rng.integers(4, 40))), transform=T),
        lambda T: Shape.hull(random_cloud(rng, int(rng.integers(4, 20))), transform=T, radius=0.1),
        lambda T: Shape.box(rng.uniform(0.3, 1.5, 3), T),
        lambda T: Shape.cylinder(0.4, 1.2, T),
        lambda T: Shape.cone(0.5, 1.0, T),
        lambda T: Shape.capsule(0.3, 1.0, T),
        lambda T: Shape.sphere(0.5, T[:3, 3]),
        lambda T: Shape.segment(T[:3, 3], T[:3, 3] + rng.normal(size=3)),
    ]
    return [makers[k % len(makers)](random_rigid(rng, reach=1.5)) for k in range(count)]


def assert_same(one, other, size):
    """Two results of the same pair: the same verdict, numbers equal to rounding."""
    assert one.status is other.status
    assert one.exit == other.exit and one.epa_exit == other.epa_exit
    assert one.iterations == other.iterations and one.epa_iterations == other.epa_iterations
    assert (one.depth is None) == (other.depth is None)
    tol = 1e-12 * max(size, 1.0)
    assert one.distance == pytest.approx(other.distance, abs=tol)
    assert one.distance_lower == pytest.approx(other.distance_lower, abs=tol)
    assert one.tolerance == pytest.approx(other.tolerance, rel=1e-15)
    if one.depth is not None:
        assert one.depth == pytest.approx(other.depth, abs=tol)
    for field in ("normal", "point_a", "point_b"):
        np.testing.assert_allclose(getattr(one, field), getattr(other, field), atol=tol)
    assert type(one.certificate) is type(other.certificate)


@pytest.mark.parametrize("want", ["verdict", "distance", "intersect"])
def test_batch_equals_query(want):
    rng = rng_for(f"batch {want}")
    shapes = library(rng)
    m = 1500
    ia = rng.integers(len(shapes), size=m)
    ib = rng.integers(len(shapes), size=m)
    out = batch(shapes, ia, ib, want=want)
    assert len(out) == m
    seen = set()
    for k in range(m):
        a, b = shapes[ia[k]], shapes[ib[k]]
        r = out.result(k)
        assert_sane(r)
        assert_certified(a, b, r)
        assert_same(r, query(a, b, want=want), max(a.size, b.size))
        seen.add(r.status)
    assert Status.CLEAR in seen and Status.COLLISION in seen


def test_batch_arrays_match_results():
    rng = rng_for("arrays")
    shapes = library(rng, 12)
    ia, ib = np.arange(12), np.roll(np.arange(12), 1)
    out = batch(ShapeSet(shapes), ia, ib)
    for k in range(12):
        r = out.result(k)
        assert out.distance[k] == r.distance
        if out.cert_kind[k] == 1:
            assert isinstance(r.certificate, PlaneCertificate)
            np.testing.assert_array_equal(out.plane[k, :3], r.certificate.normal)
        elif out.cert_kind[k] == 2:
            assert isinstance(r.certificate, PointCertificate)
        assert np.isnan(out.depth[k]) == (r.depth is None)


def test_poses_per_pair_equal_moved_shapes():
    """pose_a[k], pose_b[k] applied on top of each shape's pose = Shape.moved, pair by pair."""
    rng = rng_for("poses")
    shapes = library(rng, 16)
    m = 800
    ia = rng.integers(len(shapes), size=m)
    ib = rng.integers(len(shapes), size=m)
    pose_a = np.stack([random_rigid(rng, reach=2.0) for _ in range(m)])
    pose_b = np.stack([random_rigid(rng, reach=2.0) for _ in range(m)])
    out = batch(shapes, ia, ib, pose_a=pose_a, pose_b=pose_b)
    for k in range(m):
        a, b = shapes[ia[k]].moved(pose_a[k]), shapes[ib[k]].moved(pose_b[k])
        r = out.result(k)
        assert_sane(r)
        assert_certified(a, b, r)
        single = query(a, b)
        size = max(a.size, b.size)
        # the core composes the poses in C, Shape.moved in NumPy: the same to rounding
        if abs(single.signed_distance) > 1e-9 * size:
            assert r.status is single.status
        assert r.signed_distance == pytest.approx(single.signed_distance, abs=1e-9 * size)


def test_only_one_side_posed():
    rng = rng_for("one side")
    shapes = library(rng, 6)
    ia, ib = [0, 1, 2, 3], [4, 5, 4, 5]
    pose_b = np.stack([rigid(t=[0.0, 0.0, 0.5 * k]) for k in range(4)])
    out = batch(shapes, ia, ib, pose_b=pose_b)
    for k in range(4):
        single = query(shapes[ia[k]], shapes[ib[k]].moved(pose_b[k]))
        assert out.result(k).signed_distance == pytest.approx(single.signed_distance, abs=1e-12)


def test_tolerance_scalar_and_per_pair():
    a = Shape.box([1, 1, 1])
    b = Shape.box([1, 1, 1], rigid(t=[1.001, 0.0, 0.0]))  # a 1e-3 gap
    out = batch([a, b], [0, 0, 0], [1, 1, 1], tolerance=[1e-4, 1e-3, 1e-2])
    assert [out.result(k).status for k in range(3)] == [Status.CLEAR, Status.TOUCHING, Status.TOUCHING]
    np.testing.assert_allclose(out.tolerance, [1e-4, 1e-3, 1e-2])
    out = batch([a, b], [0], [1], tolerance=2e-3)
    assert out.result(0).status is Status.TOUCHING
    assert query(a, b, tolerance=2e-3).status is Status.TOUCHING
    with pytest.raises(ValueError):
        batch([a, b], [0], [1], tolerance=-1.0)


def test_default_tolerance_is_relative_to_the_pair():
    rng = rng_for("default tol")
    shapes = library(rng, 10)
    out = batch(shapes, np.arange(10), np.arange(10)[::-1])
    for k in range(10):
        a, b = shapes[k], shapes[9 - k]
        assert out.tolerance[k] == pytest.approx(1e-7 * max(a.size, b.size), rel=1e-15)


def test_bad_inputs():
    shapes = [Shape.box([1, 1, 1]), Shape.sphere(1.0, [3, 0, 0])]
    with pytest.raises(IndexError):
        batch(shapes, [0], [2])
    with pytest.raises(IndexError):
        batch(shapes, [-1], [0])
    with pytest.raises(ValueError):
        batch(shapes, [0, 1], [0])
    with pytest.raises(ValueError, match="rigid"):
        batch(shapes, [0], [1], pose_a=np.diag([2.0, 1.0, 1.0, 1.0])[None])
    assert len(batch(shapes, [], [])) == 0


def test_batch_far_from_the_origin():
    """Poses that carry pairs 1e8 away: each pair is solved in its own frame, answers come back."""
    rng = rng_for("batch far")
    shapes = library(rng, 8)
    m = 100
    ia, ib = rng.integers(8, size=m), rng.integers(8, size=m)
    shift = rigid(t=[1e8, -3e8, 2e8])
    near = batch(shapes, ia, ib)
    far = batch(shapes, ia, ib, pose_a=np.repeat(shift[None], m, 0), pose_b=np.repeat(shift[None], m, 0))
    for k in range(m):
        a, b = shapes[ia[k]].moved(shift), shapes[ib[k]].moved(shift)
        r = far.result(k)
        assert_certified(a, b, r)
        size = max(a.size, b.size)
        if abs(near.result(k).signed_distance) > 1e-6 * size:
            assert r.status is near.result(k).status
        assert r.signed_distance == pytest.approx(near.result(k).signed_distance, abs=1e-6)
        np.testing.assert_allclose(r.point_a, near.result(k).point_a + shift[:3, 3], atol=1e-6)
