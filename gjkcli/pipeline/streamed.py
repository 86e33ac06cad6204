"""Listings of millions of pairs (--all-pairs) without a Finding per pair: the plain pairs kept
as rows of the run's arrays, the report's order computed over the arrays, each row made a
Finding only when a report reads it (`gjkcli.pipeline.findings.ListedPairs`).

A plain pair is one whose Finding is the hulls' answer and nothing else the run adds: clear,
clearance or touching, not a violation, not allowed, not known to a baseline, not refined on
the triangles or the exact solids, no trace, no clash set, no group, no overlap volume. Every
other pair is notable and made a Finding as before. The Findings a report reads are made by the
run's own code (`Run._finding`), so a report is the same bytes either way; only the memory
differs: a plain pair costs its share of the run's arrays and two int64 (the order and its
row), not a Finding, its Result and their arrays (about 1.5 kB).

Used by one process and a Dask scan's client alike (`gjkcli.pipeline.stages.Run._listed`).
"""
from __future__ import annotations

import numpy as np

from gjkcli.engine.results import Status
from gjkcli.pipeline.findings import SEVERITY, ListedPairs, severity_key

__all__ = ["plain_pairs", "listed_pairs", "STREAM_FROM"]

# Listings of at least this many pairs keep their plain pairs as rows (fewer: Findings, as
# before; the same report either way).
STREAM_FROM = 2_000

_SIZED = (Status.CLEAR.value, Status.CLEARANCE.value, Status.TOUCHING.value)


def plain_pairs(run, parts, listed, clearance, ans, allow) -> np.ndarray | None:
    """(len(listed),) bool: the listed pairs (indices of the run's checked pairs) that are plain;
    None when the run lists its pairs as Findings (a short listing, or one whose pairs the run
    changes later: a trace, clash sets, groups, a baseline, a re-scan, objects of elements)."""
    o = run.options
    if (len(listed) < STREAM_FROM or not o.all_pairs or o.trace or run.sets is not None
            or o.baseline is not None or o.write_baseline is not None or o.rescan is not None
            or o.group_within is not None or parts.owned):
        return None
    status = ans.status[listed]
    plain = np.zeros(len(listed), dtype=bool)
    for value in _SIZED:
        plain |= status == value
    fail_on = o.fail_on
    c = clearance[listed]
    if "clearance" in fail_on:
        plain &= status != Status.CLEARANCE.value
        plain &= ~((status == Status.TOUCHING.value) & (c > 0))
    if "touching" in fail_on:
        plain &= status != Status.TOUCHING.value
    if ans.exact:
        plain &= ~np.isin(listed, np.fromiter(ans.exact, dtype=np.int64, count=len(ans.exact)))
    if ans.bounded:
        plain &= ~np.isin(listed, np.fromiter(ans.bounded, dtype=np.int64, count=len(ans.bounded)))
    if ans.tessellation is not None:
        plain &= ~(ans.tessellation[listed] > 0)
    if allow:
        plain &= ~np.isin(listed, np.fromiter(allow, dtype=np.int64, count=len(allow)))
    if not np.isfinite(_plain_sizes(ans, listed[plain])).all():
        return None  # an order Python's sort gives only on the Findings themselves
    return plain


def _plain_sizes(ans, rows) -> np.ndarray:
    """`severity_key`'s size of plain pairs: the distance apart, the signed distance touching."""
    batch = ans.batch
    size = batch.distance[rows].astype(np.float64)
    touching = ans.status[rows] == Status.TOUCHING.value
    if touching.any():
        depth = batch.depth[rows[touching]]
        size[touching] = np.where(np.isnan(depth), size[touching], -depth)
    return size


def listed_pairs(parts, i, j, ans, notable: list, notable_rows: np.ndarray, rows: np.ndarray, make):
    """`ListedPairs` of the notable Findings (sorted, each with its checked pair's index in
    `notable_rows`) and the plain pairs `rows` (ascending indices of the run's checked pairs),
    in the order `severity_key` sorts them all (ties in the pairs' order, as a stable sort of
    the pairs read in order); `make(row)` makes a plain pair's Finding. None when a notable
    pair's size is not a number (Python's sort is then the only order that is the same)."""
    keys = [severity_key(p) for p in notable]
    n_size = np.array([k[3] for k in keys], dtype=np.float64)
    if not np.isfinite(n_size).all():
        return None
    # names by rank: equal names equal ranks, and ranks ordered as Python orders the strings
    names = parts.names
    ranked = sorted(range(len(names)), key=names.__getitem__)
    rank = np.empty(len(names), dtype=np.int64)
    previous, r = None, -1
    for k in ranked:
        if names[k] != previous:
            previous, r = names[k], r + 1
        rank[k] = r
    index = parts.index
    status = ans.status[rows]
    sev = np.empty(len(rows), dtype=np.int64)
    for value in _SIZED:
        sev[status == value] = SEVERITY[Status(value)]
    allowed = np.concatenate([np.array([k[0] for k in keys], dtype=bool), np.zeros(len(rows), dtype=bool)])
    known = np.concatenate([np.array([k[1] for k in keys], dtype=bool), np.zeros(len(rows), dtype=bool)])
    severity = np.concatenate([np.array([k[2] for k in keys], dtype=np.int64), sev])
    size = np.concatenate([n_size, _plain_sizes(ans, rows)])
    size += 0.0  # -0.0 sorts as 0.0, as Python compares them
    a = np.concatenate([rank[np.array([index[p.a] for p in notable], dtype=np.int64)], rank[i[rows]]])
    b = np.concatenate([rank[np.array([index[p.b] for p in notable], dtype=np.int64)], rank[j[rows]]])
    at = np.concatenate([np.asarray(notable_rows, dtype=np.int64), rows])
    order = np.lexsort((at, b, a, size, severity, known, allowed))
    del allowed, known, severity, size, a, b, at
    return ListedPairs(notable, order, lambda: (i[rows], j[rows]), lambda r: make(int(rows[r])))
