"""Listings of many pairs without a Finding per pair: the pairs whose Finding is the run's answer
and nothing it adds kept as rows of the run's arrays, the report's order computed over the
arrays, each row made a Finding only when a report reads it
(`gjkcli.pipeline.findings.ListedPairs`).

A row is a listed pair that is neither allowed nor known to a baseline, has no trace, clash set
or group, and is answered either

- by its hulls (a plain pair), not refined on the triangles or the exact solids: clear,
  clearance, touching or a collision (convex parts), a violation or not; or
- by the triangles (an exact pair), whatever its verdict.

A row that fails the run is counted as a violation by its `RowFacts`; a collision is given its
overlap volume as the report reads it (`gjkcli.pipeline.stages.Run._overlaps`: the few the limit
measures are made and kept). Every other pair (an undecided one among them) is notable and made
a Finding as before. The Findings a report reads are made
by the run's own code (`Run._finding`), so a report is the same bytes either way; only the
memory differs: a row costs its share of the run's arrays and two int64 (the order and its
row), not a Finding, its Result and their arrays (about 1.5 kB). A Dask scan's client keeps the
triangles' answers as their tasks' columns too (`gjkcli.pipeline.worktasks.ColumnResults`): an
exact row is then its share of arrays there, where one process holds each answer as a Result.

Used by one process and a Dask scan's client alike (`gjkcli.pipeline.stages.Run._listed`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gjkcli.engine.results import Status
from gjkcli.pipeline.findings import SEVERITY, ListedPairs, RowFacts, severity_key, violates

__all__ = ["Rows", "listed_rows", "listed_pairs", "STREAM_FROM"]

# Listings of at least this many pairs keep their rows as rows (fewer: Findings, as before; the
# same report either way).
STREAM_FROM = 2_000

# The hulls' answers a row may have: every verdict but undecided (whose Finding says why).
_HULL_ROWS = (Status.CLEAR.value, Status.CLEARANCE.value, Status.TOUCHING.value, Status.COLLISION.value)
_SEVERITY_OF = {s.value: v for s, v in SEVERITY.items()}


@dataclass
class Rows:
    """The listed pairs a run keeps as rows (`listed_rows`).

    rows : (p,) int64 ascending, the rows' checked pairs
    kept : (len(listed),) bool, which listed pairs are rows
    dropped : (d,) int64 the exact pairs the triangles found clear, listed by neither (a
        listing without --all-pairs)
    hull_status, status : the exact pairs' statuses (rows then dropped) by the hulls and as
        counted (str values), for the run's counts
    facts : `RowFacts` of the rows
    size : (p,) float64 `severity_key`'s size of each row
    exact : (m,) bool over the checked pairs, the rows the triangles answered (an array, not
        a set of Python ints: tens of thousands of them were megabytes)
    """

    rows: np.ndarray
    kept: np.ndarray
    dropped: np.ndarray
    hull_status: np.ndarray
    status: np.ndarray
    facts: RowFacts
    size: np.ndarray
    exact: np.ndarray


def listed_rows(run, parts, listed, clearance, ans, allow) -> Rows | None:
    """The listed pairs (indices of the run's checked pairs) the run keeps as rows; None when
    the run lists its pairs as Findings (a short listing, or one whose pairs the run changes
    later: a trace, clash sets, groups, a baseline, a re-scan, objects of elements)."""
    o = run.options
    if (len(listed) < STREAM_FROM or o.trace or run.sets is not None
            or o.baseline is not None or o.write_baseline is not None or o.rescan is not None
            or o.group_within is not None or parts.owned):
        return None
    status = ans.status[listed]
    free = np.ones(len(listed), dtype=bool)  # neither bounded, tessellated nor allowed
    if ans.bounded:
        free &= ~np.isin(listed, np.fromiter(ans.bounded, dtype=np.int64, count=len(ans.bounded)))
    if ans.tessellation is not None:
        free &= ~(ans.tessellation[listed] > 0)
    if allow:
        free &= ~np.isin(listed, np.fromiter(allow, dtype=np.int64, count=len(allow)))
    exact = np.zeros(len(listed), dtype=bool)
    if ans.exact:
        exact = np.isin(listed, np.fromiter(ans.exact, dtype=np.int64, count=len(ans.exact)))

    decided = np.zeros(len(listed), dtype=bool)
    for value in _HULL_ROWS:
        decided |= status == value
    plain = free & ~exact & decided
    del status, decided
    at = np.flatnonzero(free & exact)  # the triangles' answers, read from their arrays
    if not len(at) and not plain.any():
        return None  # no row: the listing's pairs all notable (allowed, undecided, bounded), as Findings
    ex = listed[at]
    hull_status = ans.status[ex]
    ex_status, ex_distance, ex_depth, has_depth = _exact_facts(ans.exact, ex)
    closer = (ex_status == Status.CLEAR.value) & (clearance[ex] > 0) & (ex_distance < clearance[ex])
    ex_status[closer] = Status.CLEARANCE.value
    gone = (ex_status == Status.CLEAR.value) if not o.all_pairs else np.zeros(len(ex), dtype=bool)
    kept = plain
    kept[at[~gone]] = True
    rows = listed[kept]
    # the rows' statuses, sizes and violations: a plain row's the hulls', an exact row's the triangles'
    mine = np.searchsorted(rows, ex[~gone])
    status = ans.status[rows]
    status[mine] = ex_status[~gone]
    size = np.empty(len(rows))
    is_exact = np.zeros(len(rows), dtype=bool)
    is_exact[mine] = True
    size[~is_exact] = _plain_sizes(ans, rows[~is_exact])
    size[mine] = _exact_sizes(ex_status[~gone], ex_distance[~gone], ex_depth[~gone], has_depth[~gone])
    if not np.isfinite(size).all():
        return None  # an order Python's sort gives only on the Findings themselves
    violation = _violations(status, clearance[rows], o.fail_on)
    return Rows(rows=rows, kept=kept, dropped=ex[gone],
                hull_status=np.concatenate([hull_status[~gone], hull_status[gone]]),
                status=np.concatenate([ex_status[~gone], ex_status[gone]]),
                facts=RowFacts(status=status, violation=violation, exact=is_exact), size=size,
                exact=_marked(len(ans.status), ex[~gone]))


def _violations(status: np.ndarray, clearance: np.ndarray, fail_on) -> np.ndarray:
    """`violates` of each row, over arrays: its status (str values) and the clearance its pair
    is held to (0 where none)."""
    out = status == Status.UNDECIDED.value
    for value in (Status.COLLISION, Status.CLEARANCE, Status.TOUCHING):
        here = status == value.value
        if violates(value, None, fail_on):
            out |= here
        elif value is Status.TOUCHING and violates(value, 1.0, fail_on):  # touching fails a clearance
            out |= here & (clearance > 0)
    return out


def _marked(m: int, at: np.ndarray) -> np.ndarray:
    """(m,) bool, True at `at`."""
    out = np.zeros(m, dtype=bool)
    out[at] = True
    return out


def _exact_facts(exact, ks) -> tuple:
    """(status str values (object), distance, depth, whether there is a depth) of the
    triangles' answers of the pairs `ks`: from their columns where the answers are kept so
    (`gjkcli.pipeline.worktasks.ColumnResults.facts`), else read one by one."""
    columns = getattr(exact, "facts", None)
    if columns is not None:
        return columns(ks)
    status = np.empty(len(ks), dtype=object)
    distance, depth = np.empty(len(ks)), np.zeros(len(ks))
    has = np.zeros(len(ks), dtype=bool)
    for n, k in enumerate(ks.tolist()):
        r = exact[k]
        status[n], distance[n] = r.status.value, r.distance
        if r.depth is not None:
            depth[n], has[n] = r.depth, True
    return status, distance, depth, has


def _exact_sizes(status, distance, depth, has) -> np.ndarray:
    """`severity_key`'s size of the triangles' answers: minus the depth of a collision (0
    without one), the distance apart, the signed distance touching."""
    size = distance.astype(np.float64)
    collision = status == Status.COLLISION.value
    size[collision] = np.where(has[collision], -depth[collision], 0.0)
    touching = (status == Status.TOUCHING.value) & has
    size[touching] = -depth[touching]
    return size


def _plain_sizes(ans, rows) -> np.ndarray:
    """`severity_key`'s size of the hulls' answers: minus the depth of a collision (0 without
    one), the distance apart, the signed distance touching."""
    batch = ans.batch
    size = batch.distance[rows].astype(np.float64)
    status = ans.status[rows]
    touching = status == Status.TOUCHING.value
    if touching.any():
        depth = batch.depth[rows[touching]]
        size[touching] = np.where(np.isnan(depth), size[touching], -depth)
    collision = status == Status.COLLISION.value
    if collision.any():
        depth = batch.depth[rows[collision]]
        size[collision] = np.where(np.isnan(depth), 0.0, -depth)
    return size


def listed_pairs(parts, i, j, notable: list, notable_rows: np.ndarray, picked: Rows, make, ahead=None):
    """`ListedPairs` of the notable Findings (sorted, each with its checked pair's index in
    `notable_rows`) and the rows `picked`, in the order `severity_key` sorts them all (ties in
    the pairs' order, as a stable sort of the pairs read in order); `make(row)` makes a row's
    Finding; `ahead(pairs, then)`, if given, is told the checked pairs of the rows a reading is
    about to make and of those it makes next, or None (`ListedPairs`' ahead). None when a
    notable pair's size is not a number (Python's sort is then the only order that is the
    same)."""
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
    rows = picked.rows
    sev = np.empty(len(rows), dtype=np.int64)
    for value, level in _SEVERITY_OF.items():
        sev[picked.facts.status == value] = level
    allowed = np.concatenate([np.array([k[0] for k in keys], dtype=bool), np.zeros(len(rows), dtype=bool)])
    known = np.concatenate([np.array([k[1] for k in keys], dtype=bool), np.zeros(len(rows), dtype=bool)])
    severity = np.concatenate([np.array([k[2] for k in keys], dtype=np.int64), sev])
    size = np.concatenate([n_size, picked.size])
    size += 0.0  # -0.0 sorts as 0.0, as Python compares them
    a = np.concatenate([rank[np.array([index[p.a] for p in notable], dtype=np.int64)], rank[i[rows]]])
    b = np.concatenate([rank[np.array([index[p.b] for p in notable], dtype=np.int64)], rank[j[rows]]])
    at = np.concatenate([np.asarray(notable_rows, dtype=np.int64), rows])
    order = np.lexsort((at, b, a, size, severity, known, allowed))
    del allowed, known, severity, size, a, b, at
    return ListedPairs(notable, order, lambda: (i[rows], j[rows]), lambda r: make(int(rows[r])),
                       picked.facts, ahead=None if ahead is None else
                       (lambda r, then: ahead(rows[r], None if then is None else rows[then])))
