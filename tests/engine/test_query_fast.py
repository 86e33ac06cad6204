"""`query` of one pair (the fast path: each Shape's packed form kept, one compiled call) answers
exactly what the batch call answers for the same pair."""
from __future__ import annotations

import pickle

import numpy as np
import pytest

from gjkcli.engine.query import batch, query
from gjkcli.engine.results import Result, Status
from gjkcli.engine.shapes import Shape


def _shapes(rng):
    pts = rng.normal(size=(60, 3)) * rng.uniform(0.5, 1.5, 3)
    return [Shape.hull(pts), Shape.box(rng.uniform(0.5, 2.0, 3)), Shape.sphere(0.7),
            Shape.capsule(0.3, 1.2), Shape.cylinder(0.5, 1.0), Shape.cone(0.6, 1.1)]


def _rigid(rng, spread):
    q = rng.normal(size=4)
    w, x, y, z = q / np.linalg.norm(q)
    T = np.eye(4)
    T[:3, :3] = [[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                 [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                 [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]]
    T[:3, 3] = rng.uniform(-spread, spread, 3)
    return T


@pytest.mark.parametrize("want", ["verdict", "distance", "intersect"])
def test_query_is_the_batch_answer(want):
    rng = np.random.default_rng(14)
    base = _shapes(rng)
    statuses = []
    for _ in range(300):
        a = base[rng.integers(len(base))].moved(_rigid(rng, 1.5))
        b = base[rng.integers(len(base))].moved(_rigid(rng, 1.5))
        r = query(a, b, want=want)
        ref = batch([a, b], [0], [1], want=want).result(0)
        assert isinstance(r, Result)
        statuses.append(r.status)
        for field in ("status", "exit", "epa_exit", "iterations", "epa_iterations", "distance",
                      "distance_lower", "tolerance", "depth"):
            assert getattr(r, field) == getattr(ref, field), field
        for field in ("normal", "point_a", "point_b"):
            np.testing.assert_array_equal(getattr(r, field), getattr(ref, field))
        assert type(r.certificate) is type(ref.certificate)
        if ref.certificate is not None:
            assert r.certificate.as_dict() == ref.certificate.as_dict()
    # the random pairs hold both answers, so the comparison covers both paths of the core
    clear = sum(s is Status.CLEAR for s in statuses)
    assert 60 <= clear <= 240, clear


def test_a_given_tolerance_and_bad_arguments():
    a, b = Shape.sphere(1.0), Shape.sphere(1.0, center=[2.001, 0, 0])
    assert query(a, b).status is Status.CLEAR
    assert query(a, b, tolerance=0.01).status is Status.TOUCHING
    with pytest.raises(ValueError):
        query(a, b, tolerance=-1.0)
    with pytest.raises(ValueError):
        query(a, b, want="everything")
    with pytest.raises(TypeError):
        query(a, np.zeros((4, 3)))


def test_a_queried_shape_pickles_and_answers_the_same():
    a = Shape.hull(np.random.default_rng(1).normal(size=(80, 3)))
    b = Shape.box([1, 1, 1], transform=np.diag([1.0, 1.0, 1.0, 1.0]) + np.eye(4, k=3) * 0)
    before = query(a, b.moved(np.eye(4) + np.eye(4, k=3) * 3))
    a2 = pickle.loads(pickle.dumps(a))
    after = query(a2, b.moved(np.eye(4) + np.eye(4, k=3) * 3))
    assert before.distance == after.distance and before.status is after.status
