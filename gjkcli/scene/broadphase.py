"""Candidate pairs: the objects whose world bounding boxes, grown by a margin, overlap.

The narrow phase (the engine's batch call) runs only on these pairs, so the broad phase must never
miss a pair whose shapes can be closer than the margin, and must not look at all n^2 pairs.

Three methods, the same answer (tests/scene/test_broadphase.py checks each against brute force):

- ``"bvh"`` (the default): a linear bounding volume hierarchy. Boxes are sorted along a Morton
  (Z-order) curve through their centres, which puts nearby boxes next to each other; the sorted
  leaves form a complete binary tree whose node boxes are the unions of their children's (Lauterbach
  et al. 2009, "Fast BVH construction on GPUs"; Karras 2012). The tree is traversed against itself
  one level at a time, with every surviving node pair of a level held in one array, so that the
  Python cost is per level (about log2 n of them), not per box or per pair (Ericson 2005, 6.3,
  "simultaneous traversal"). Work is O(n log n + k) for scenes whose boxes are not much larger
  than their spacing, k being the number of overlapping node pairs.
- ``"sap"``: sweep and prune along the axis on which the boxes' centres spread the most (Baraff
  1992; Ericson 2005, 7.5.1): sort by the lower ends, pair every box with the boxes that start
  before it ends, then test the two other axes. Its work grows with the pairs that overlap on the
  sweep axis alone, which for a cloud of n parts is O(n^(5/3)): fine for small scenes and as a
  second opinion, not for 100,000 parts.
- ``"grid"``: a uniform grid of cells about as wide as most boxes (the 90th percentile of the
  boxes' widest sides), for boxes of 2 or 3 dimensions (the 2D run's parts). Each box is listed
  in the few cells it covers, every pair sharing a cell is a candidate, and a pair is kept only
  in the one cell holding the larger of their minimum corners, so no pair comes out twice
  (Ericson 2005, 7.1). The few boxes much wider than a cell are tested against every box. All
  of it is array work (sorts and repeats): about 10 ms for 10,000 sheet parts, where the BVH's
  levels cost several times that.

- ``"sweep"``: for boxes of 2 dimensions only (the 2D run's parts): the same sweep as ``"sap"``,
  in the compiled core (`gjkcli.engine.plane.box_pairs`), one pass in C with no arrays of
  candidate pairs in between: several times faster than the grid on bench_nest.py's 10,641
  sheet-part boxes.

Boxes are closed: boxes that share only a face or a corner are a candidate pair (touching parts
must reach the narrow phase).
"""
from __future__ import annotations

import numpy as np

__all__ = ["candidate_pairs", "grown_bounds", "select_pairs"]

METHODS = ("bvh", "sap", "grid")  # the methods for 3D boxes; "grid" and "sweep" take 2D ones
_ALL = METHODS + ("sweep",)


def grown_bounds(lo, hi, grow=0.0) -> tuple[np.ndarray, np.ndarray]:
    """Boxes grown on every side: lo - grow, hi + grow.

    lo, hi : (n, 3) float64; grow : float or (n,) float64, each >= 0.
    """
    lo = np.asarray(lo, dtype=np.float64)
    hi = np.asarray(hi, dtype=np.float64)
    g = np.asarray(grow, dtype=np.float64)
    if np.any(g < 0) or not np.all(np.isfinite(g)):
        raise ValueError("box growth must be finite and >= 0")
    if g.ndim == 1:
        g = g[:, None]
    return lo - g, hi + g


def candidate_pairs(lo, hi, *, grow=0.0, method: str = "bvh") -> tuple[np.ndarray, np.ndarray]:
    """Every pair of boxes that overlap once grown by `grow`.

    Parameters
    ----------
    lo, hi : (n, 3) float64, or (n, 2) with method "grid" or "sweep"
        Minimum and maximum corners of the world boxes.
    grow : float or (n,) float64
        Growth of each box on every side. Two boxes grown by g_i and g_j overlap exactly when
        their gap (the largest per-axis gap) is at most g_i + g_j; to catch every pair closer than
        a clearance c, grow each box by c / 2.
    method : {"bvh", "sap", "grid", "sweep"}

    Returns
    -------
    i, j : (k,) int64
        The pairs, i < j, sorted by i then j.
    """
    if method not in _ALL:
        raise ValueError(f"unknown broad-phase method {method!r}; use one of {', '.join(_ALL)}")
    lo, hi = grown_bounds(lo, hi, grow)
    dims = {"grid": (2, 3), "sweep": (2,)}.get(method, (3,))
    if lo.shape != hi.shape or lo.ndim != 2 or lo.shape[1] not in dims:
        shapes = " or ".join(f"(n, {d})" for d in dims)
        raise ValueError(f"boxes must be {shapes} arrays, got {lo.shape} and {hi.shape}")
    if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))):
        raise ValueError("box corners must be finite")
    if len(lo) < 2:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty.copy()
    if method == "sweep":  # already i < j, sorted
        from gjkcli.engine.plane import box_pairs

        return box_pairs(lo, hi)
    i, j = {"bvh": _bvh_pairs, "sap": _sap_pairs, "grid": _grid_pairs}[method](lo, hi)
    i, j = np.minimum(i, j), np.maximum(i, j)
    order = np.lexsort((j, i))
    return i[order].astype(np.int64), j[order].astype(np.int64)


def select_pairs(i, j, sets) -> np.ndarray:
    """Which pairs some (A, B) selection covers: i in A and j in B, or i in B and j in A.

    sets : sequence of (in_a, in_b), each (n,) bool over the objects.
    Returns (k,) bool; with no selections, every pair is covered.
    """
    i = np.asarray(i)
    j = np.asarray(j)
    if not sets:
        return np.ones(len(i), dtype=bool)
    keep = np.zeros(len(i), dtype=bool)
    for in_a, in_b in sets:
        keep |= (in_a[i] & in_b[j]) | (in_b[i] & in_a[j])
    return keep


# -- sweep and prune ------------------------------------------------------------------------------


def _overlap(lo, hi, i, j, axes=None) -> np.ndarray:
    """(k,) bool: boxes i and j overlap on every axis of `axes` (closed intervals; default all)."""
    keep = np.ones(len(i), dtype=bool)
    for ax in range(lo.shape[1]) if axes is None else axes:
        keep &= (lo[i, ax] <= hi[j, ax]) & (lo[j, ax] <= hi[i, ax])
    return keep


def _sap_pairs(lo, hi):
    centres = 0.5 * (lo + hi)
    axis = int(np.argmax(centres.var(axis=0)))
    order = np.argsort(lo[:, axis], kind="stable")
    start = lo[order, axis]
    # box order[s] pairs with order[s+1 .. end[s]-1]: those that start before it ends
    end = np.searchsorted(start, hi[order, axis], side="right")
    count = np.maximum(end - np.arange(len(order)) - 1, 0)
    first = np.repeat(np.arange(len(order)), count)
    offset = np.arange(count.sum()) - np.repeat(np.cumsum(count) - count, count)
    a, b = order[first], order[first + 1 + offset]
    others = tuple(ax for ax in range(3) if ax != axis)
    keep = _overlap(lo, hi, a, b, others)
    return a[keep], b[keep]


# -- linear BVH -----------------------------------------------------------------------------------


def _spread_bits(x: np.ndarray) -> np.ndarray:
    """Insert two zero bits between the low 21 bits of x (uint64): the Morton code's spacing."""
    x = x & np.uint64(0x1FFFFF)
    x = (x | (x << np.uint64(32))) & np.uint64(0x1F00000000FFFF)
    x = (x | (x << np.uint64(16))) & np.uint64(0x1F0000FF0000FF)
    x = (x | (x << np.uint64(8))) & np.uint64(0x100F00F00F00F00F)
    x = (x | (x << np.uint64(4))) & np.uint64(0x10C30C30C30C30C3)
    x = (x | (x << np.uint64(2))) & np.uint64(0x1249249249249249)
    return x


def morton_order(points) -> np.ndarray:
    """Indices sorting points (n, 3) along a 63-bit Z-order curve over their bounding box."""
    p = np.asarray(points, dtype=np.float64)
    lo, hi = p.min(axis=0), p.max(axis=0)
    span = np.where(hi > lo, hi - lo, 1.0)
    q = np.clip((p - lo) / span * (2**21 - 1), 0, 2**21 - 1).astype(np.uint64)
    code = (_spread_bits(q[:, 0]) << np.uint64(2)) | (_spread_bits(q[:, 1]) << np.uint64(1)) \
        | _spread_bits(q[:, 2])
    return np.argsort(code, kind="stable")


def _bvh_pairs(lo, hi):
    n = len(lo)
    order = morton_order(0.5 * (lo + hi))
    levels = max(1, int(np.ceil(np.log2(n))))
    width = 1 << levels
    # padded leaves are empty boxes (lo = +inf, hi = -inf): they overlap nothing
    leaf_lo = np.full((width, 3), np.inf)
    leaf_hi = np.full((width, 3), -np.inf)
    leaf_lo[:n] = lo[order]
    leaf_hi[:n] = hi[order]
    los, his = [leaf_lo], [leaf_hi]
    for _ in range(levels):
        los.append(np.minimum(los[-1][0::2], los[-1][1::2]))
        his.append(np.maximum(his[-1][0::2], his[-1][1::2]))
    # node pairs (a, b), a <= b, both at the current level; the root against itself first
    a = np.zeros(1, dtype=np.int64)
    b = np.zeros(1, dtype=np.int64)
    for level in range(levels, 0, -1):
        keep = _overlap(los[level], his[level], a, b)
        a, b = a[keep], b[keep]
        same = a == b
        # a node against itself: its two children against themselves and against each other;
        # two different nodes: the four pairs of their children (2a + x < 2b + y since a < b)
        sa, da, db = a[same], a[~same], b[~same]
        a = np.concatenate([2 * sa, 2 * sa, 2 * sa + 1,
                            2 * da, 2 * da, 2 * da + 1, 2 * da + 1])
        b = np.concatenate([2 * sa, 2 * sa + 1, 2 * sa + 1,
                            2 * db, 2 * db + 1, 2 * db, 2 * db + 1])
    keep = (a != b) & (b < n)
    a, b = a[keep], b[keep]
    keep = _overlap(leaf_lo, leaf_hi, a, b)
    return order[a[keep]], order[b[keep]]


# -- uniform grid ---------------------------------------------------------------------------------

# A box wider than this many cells on some axis is "wide": tested against every box instead of
# being listed in its cells.
_WIDE_CELLS = 4


def _grid_pairs(lo, hi):
    n, d = lo.shape
    widest = (hi - lo).max(axis=1)
    span = float((hi.max(axis=0) - lo.min(axis=0)).max())
    # cells as wide as 90% of the boxes, and no more than 2^20 of them along an axis (keys fit
    # int64 in 3D)
    cell = max(float(np.percentile(widest, 90)), span / 2.0**20, np.finfo(float).tiny)
    origin = lo.min(axis=0)
    c0 = np.floor((lo - origin) / cell).astype(np.int64)
    c1 = np.floor((hi - origin) / cell).astype(np.int64)
    across = c1 - c0 + 1  # cells covered along each axis
    wide = (across > _WIDE_CELLS).any(axis=1)
    dims = c1.max(axis=0) + 1

    def key(c):  # a cell's index in the grid, row-major
        k = c[:, 0].copy()
        for ax in range(1, d):
            k = k * dims[ax] + c[:, ax]
        return k

    # (box, cell) for every cell of every narrow box: box k's t-th cell counts through its
    # cells with axis 0 slowest
    boxes = np.flatnonzero(~wide)
    count = np.prod(across[boxes], axis=1)
    box = np.repeat(boxes, count)
    t = np.arange(count.sum()) - np.repeat(np.cumsum(count) - count, count)
    cells = np.empty((len(box), d), dtype=np.int64)
    for ax in range(d - 1, -1, -1):
        step = across[box, ax]
        cells[:, ax] = c0[box, ax] + t % step
        t = t // step
    cell_key = key(cells)
    order = np.argsort(cell_key, kind="stable")  # within a cell, boxes in increasing order
    cell_key, box = cell_key[order], box[order]
    # entry s pairs with the entries after it in its cell: s+1 .. end[s]-1
    end = np.searchsorted(cell_key, cell_key, side="right")
    count = end - np.arange(len(box)) - 1
    first = np.repeat(np.arange(len(box)), count)
    offset = np.arange(count.sum()) - np.repeat(np.cumsum(count) - count, count)
    a, b = box[first], box[first + 1 + offset]
    # keep each overlapping pair once: in the cell of the larger of the two minimum corners (a
    # cell both boxes cover when they overlap)
    meet = np.floor((np.maximum(lo[a], lo[b]) - origin) / cell).astype(np.int64)
    keep = _overlap(lo, hi, a, b) & (key(meet) == cell_key[first])
    a, b = a[keep], b[keep]
    # the wide boxes against every box (a wide pair once: from its lower index)
    extra_a, extra_b = [a], [b]
    everyone = np.arange(n)
    for w in np.flatnonzero(wide).tolist():
        hit = everyone[_overlap(lo, hi, np.full(n, w), everyone)]
        hit = hit[(hit != w) & ~(wide[hit] & (hit < w))]
        extra_a.append(np.full(len(hit), w))
        extra_b.append(hit)
    return np.concatenate(extra_a), np.concatenate(extra_b)
