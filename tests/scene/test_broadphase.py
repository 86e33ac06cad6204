"""The broad phase against brute force: the same candidate set, pair for pair, for every method.

Brute force here is the O(n^2) overlap test of every pair of grown boxes, written independently
of gjkcli.scene.broadphase (closed intervals: boxes that share a face are a pair).
"""
from __future__ import annotations

import numpy as np
import pytest

from gjkcli.scene.broadphase import METHODS, candidate_pairs, grown_bounds, morton_order, select_pairs


def brute_force(lo, hi, grow=0.0):
    g = np.asarray(grow, dtype=float)
    if g.ndim == 1:
        g = g[:, None]
    lo, hi = np.asarray(lo) - g, np.asarray(hi) + g
    overlap = np.all((lo[:, None, :] <= hi[None, :, :]) & (lo[None, :, :] <= hi[:, None, :]), axis=2)
    i, j = np.nonzero(np.triu(overlap, 1))
    return i, j


def random_boxes(rng, n, side=10.0, small=0.1, large=2.0):
    centre = rng.uniform(0.0, side, size=(n, 3))
    extent = rng.uniform(small, large, size=(n, 3))
    return centre - extent / 2, centre + extent / 2


def assert_same(got, want):
    gi, gj = got
    wi, wj = want
    assert gi.dtype == np.int64 and gj.dtype == np.int64
    assert np.array_equal(gi, wi) and np.array_equal(gj, wj), (len(gi), len(wi))


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("n", [0, 1, 2, 3, 7, 64, 65, 300, 1500])
def test_random_boxes_match_brute_force(method, n):
    rng = np.random.default_rng(n)
    lo, hi = random_boxes(rng, n)
    want = brute_force(lo, hi)
    assert_same(candidate_pairs(lo, hi, method=method), want)
    if n == 1500:
        # the test can fail: a fair share of pairs, neither none nor all of them
        assert 0.002 < len(want[0]) / (n * (n - 1) / 2) < 0.2


@pytest.mark.parametrize("method", METHODS)
def test_clearance_growth_scalar_and_per_box(method):
    rng = np.random.default_rng(7)
    lo, hi = random_boxes(rng, 800, side=20.0, small=0.05, large=0.8)
    for grow in (0.0, 0.05, 0.3):
        want = brute_force(lo, hi, grow)
        assert_same(candidate_pairs(lo, hi, grow=grow, method=method), want)
    per_box = rng.uniform(0.0, 0.5, size=800)
    assert_same(candidate_pairs(lo, hi, grow=per_box, method=method), brute_force(lo, hi, per_box))
    # growing only adds pairs
    base = set(zip(*candidate_pairs(lo, hi, method=method)))
    grown = set(zip(*candidate_pairs(lo, hi, grow=0.3, method=method)))
    assert base < grown


@pytest.mark.parametrize("method", METHODS)
def test_gap_exactly_twice_the_growth_is_a_pair(method):
    # boxes [0, 1] and [1 + 2g, 2 + 2g] along x: grown by g each, they share a face
    g = 0.25
    lo = np.array([[0.0, 0.0, 0.0], [1.5, 0.0, 0.0], [3.0, 0.0, 0.0]])
    hi = lo + 1.0
    i, j = candidate_pairs(lo, hi, grow=g, method=method)
    assert list(zip(i.tolist(), j.tolist())) == [(0, 1), (1, 2)]
    i, j = candidate_pairs(lo, hi, grow=g * 0.999, method=method)
    assert len(i) == 0


@pytest.mark.parametrize("method", METHODS)
def test_touching_identical_and_degenerate_boxes(method):
    lo = np.array([[0, 0, 0], [1, 0, 0], [0, 0, 0], [5, 5, 5], [5, 5, 5], [1, 1, 1]], dtype=float)
    hi = np.array([[1, 1, 1], [2, 1, 1], [1, 1, 1], [5, 5, 5], [5, 5, 5], [1, 1, 1]], dtype=float)
    # face-sharing (0, 1), identical (0, 2), zero-size points (3, 4), a corner point (5)
    assert_same(candidate_pairs(lo, hi, method=method), brute_force(lo, hi))
    pairs = set(zip(*(a.tolist() for a in candidate_pairs(lo, hi, method=method))))
    assert {(0, 1), (0, 2), (3, 4), (0, 5), (1, 5), (2, 5)} <= pairs


@pytest.mark.parametrize("method", METHODS)
def test_sizes_that_vary_a_lot(method):
    # a base plate under many small parts, plus clusters: the case a single grid handles badly
    rng = np.random.default_rng(3)
    lo, hi = random_boxes(rng, 1200, side=100.0, small=0.2, large=3.0)
    lo = np.vstack([lo, [[-1.0, -1.0, -1.0]], [[40.0, 40.0, 40.0]]])
    hi = np.vstack([hi, [[101.0, 101.0, 1.0]], [[60.0, 60.0, 60.0]]])
    assert_same(candidate_pairs(lo, hi, method=method), brute_force(lo, hi))


def test_methods_agree_on_a_dense_cluster():
    rng = np.random.default_rng(11)
    lo, hi = random_boxes(rng, 600, side=3.0, small=0.5, large=1.5)
    a = candidate_pairs(lo, hi, method="bvh")
    assert_same(a, candidate_pairs(lo, hi, method="sap"))
    assert len(a[0]) > 0.1 * 600 * 599 / 2  # many pairs overlap: the output itself is O(n^2)


@pytest.mark.parametrize("method", ["grid", "sweep"])
@pytest.mark.parametrize("n", [9, 400, 3000])
def test_2d_boxes_match_brute_force(method, n):
    """The 2D run's broad phase: sheet-part boxes, some wide (a long strip, a plate under many
    parts), some touching exactly and some degenerate (a point, a segment)."""
    rng = np.random.default_rng(100 + n)
    centre = rng.uniform(0.0, 50.0, size=(n, 2))
    extent = rng.uniform(0.2, 2.0, size=(n, 2))
    extent[rng.random(n) < 0.02] *= 20.0  # wide boxes
    extent[rng.random(n) < 0.02] = 0.0  # points
    lo, hi = centre - extent / 2, centre + extent / 2
    if n >= 9:
        lo[1], hi[1] = hi[0], hi[0] + 1.0  # corner to corner with box 0
        lo[2], hi[2] = [lo[0, 0], hi[0, 1]], [hi[0, 0], hi[0, 1] + 0.5]  # on box 0's top edge
    want = brute_force(lo, hi, 0.3)
    got = candidate_pairs(lo, hi, grow=0.3, method=method)
    assert_same(got, want)
    assert len(want[0]) > 0 and len(want[0]) < n * (n - 1) / 2  # pairs and non-pairs both


@pytest.mark.parametrize("method", ["grid", "sweep"])
def test_2d_when_every_box_is_a_point_or_one_is_huge(method):
    lo = np.array([[0.0, 0.0], [0.0, 0.0], [1.0, 1.0], [-100.0, -100.0], [5.0, 5.0]])
    hi = np.array([[0.0, 0.0], [0.0, 0.0], [1.0, 1.0], [100.0, 100.0], [5.0, 5.0]])
    assert_same(candidate_pairs(lo, hi, method=method), brute_force(lo, hi))
    assert_same(candidate_pairs(lo[:3], hi[:3], method=method), brute_force(lo[:3], hi[:3]))


@pytest.mark.parametrize("seed", range(6))
def test_sweep_on_a_lattice_of_touching_boxes(seed):
    """Boxes on an integer lattice (exact in binary), so many share an edge or a corner exactly
    and many are exactly one unit apart: closed intervals at their boundary, in both axes and
    whichever axis the sweep takes. Some boxes are points, some segments, one is huge."""
    rng = np.random.default_rng(200 + seed)
    n = 500
    lo = rng.integers(0, 40, size=(n, 2)).astype(float)
    size = rng.integers(0, 3, size=(n, 2)).astype(float)  # 0: a point or a segment
    if seed % 2:
        lo[:, 1] *= 3.0  # spread along y: the sweep runs along y
    hi = lo + size
    lo[7], hi[7] = [-1e6, -1e6], [1e6, 1e6]  # one box over all the others
    want = brute_force(lo, hi)
    got = candidate_pairs(lo, hi, method="sweep")
    assert_same(got, want)
    # the test can fail: hits and misses both, and pairs that only touch
    assert 0.002 < len(want[0]) / (n * (n - 1) / 2) < 0.2
    touching = np.any((hi[want[0]] == lo[want[1]]) | (lo[want[0]] == hi[want[1]]), axis=1)
    assert touching.sum() > 50


def test_sweep_empty_and_bad_input():
    for n in (0, 1):
        i, j = candidate_pairs(np.zeros((n, 2)), np.ones((n, 2)), method="sweep")
        assert i.dtype == np.int64 and len(i) == 0 and len(j) == 0
    far = candidate_pairs(np.array([[0.0, 0.0], [5.0, 5.0]]), np.array([[1.0, 1.0], [6.0, 6.0]]),
                          method="sweep")
    assert len(far[0]) == 0
    with pytest.raises(ValueError, match=r"\(n, 2\) arrays"):
        candidate_pairs(np.zeros((3, 3)), np.ones((3, 3)), method="sweep")
    with pytest.raises(ValueError, match="finite"):
        candidate_pairs(np.array([[0, np.inf], [0, 0]]), np.ones((2, 2)), method="sweep")


def test_pairs_are_sorted_and_ordered():
    rng = np.random.default_rng(5)
    lo, hi = random_boxes(rng, 500)
    i, j = candidate_pairs(lo, hi)
    assert np.all(i < j)
    assert np.all(np.diff(i * 500 + j) > 0)


def test_bad_input():
    lo = np.zeros((3, 3))
    with pytest.raises(ValueError, match="method"):
        candidate_pairs(lo, lo + 1, method="octree")
    with pytest.raises(ValueError, match=r"\(n, 3\) arrays"):
        candidate_pairs(np.zeros((3, 2)), np.ones((3, 2)), method="bvh")
    with pytest.raises(ValueError, match="finite"):
        candidate_pairs(np.array([[0, 0, np.nan], [0, 0, 0]]), np.ones((2, 3)))
    with pytest.raises(ValueError, match=">= 0"):
        grown_bounds(lo, lo + 1, -1.0)


def test_select_pairs():
    i = np.array([0, 0, 1, 2])
    j = np.array([1, 2, 2, 3])
    in_a = np.array([True, False, False, False])
    in_b = np.array([False, False, True, True])
    assert select_pairs(i, j, []).all()
    assert select_pairs(i, j, [(in_a, in_b)]).tolist() == [False, True, False, False]
    assert select_pairs(i, j, [(in_b, in_a)]).tolist() == [False, True, False, False]
    assert select_pairs(i, j, [(in_b, in_b)]).tolist() == [False, False, False, True]


def test_morton_order_is_a_permutation_that_groups_neighbours():
    rng = np.random.default_rng(2)
    points = rng.uniform(0, 1, size=(4096, 3))
    order = morton_order(points)
    assert np.array_equal(np.sort(order), np.arange(4096))
    step = np.linalg.norm(np.diff(points[order], axis=0), axis=1).mean()
    shuffled = np.linalg.norm(np.diff(points, axis=0), axis=1).mean()
    assert step < 0.25 * shuffled
