"""Objects made of several elements: a URDF link with several ``<collision>`` elements is one
body, as MoveIt treats it (an SRDF cannot even name a link against itself).

The run checks the elements as parts (each has its own hull and triangles) but never pairs two
elements of one object (`same_object`), and reports under the object's name: the findings of
the element pairs of two objects become one, the most severe (the deepest collision, the
closest gap), with the elements it came from in its note; counts are per pair of objects; an
object's record sums its elements'.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from gjkcli.engine.results import Status
from gjkcli.pipeline.findings import Finding, ObjectRecord

__all__ = ["owner_ids", "same_object", "by_object", "object_pairs", "merged_records", "merged_triangles"]


def owner_ids(owners: list) -> np.ndarray:
    """(n,) int: equal for the parts of one object (`owners[k]`: the object part k belongs to)."""
    index: dict = {}
    return np.array([index.setdefault(o, len(index)) for o in owners], dtype=np.int64)


def same_object(ids: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """(m,) bool: pairs (i, j) of parts that are elements of one object."""
    return ids[i] == ids[j]


def by_object(pairs: list, owner: dict, ids: np.ndarray, i: np.ndarray, j: np.ndarray,
              key_of=None, known=None, objects_checked: int | None = None) -> tuple[list, dict, int]:
    """(findings, counts per status, pairs of objects checked) with each pair of objects once.

    pairs : the element pairs' Findings, most severe first (the run's order): the first of each
        pair of objects is its finding
    owner : {part name: object name} for the parts that are elements
    ids, i, j : `owner_ids` and the checked pairs: a pair of objects none of whose element
        pairs is listed is clear (the run lists every pair that is not)
    key_of, known : the baseline key maker and the baseline's keys, or None
    objects_checked : `object_pairs(ids, i, j)`, when the caller knows it already
    """
    out, seen = [], {}
    for p in pairs:
        a, b = owner.get(p.a, p.a), owner.get(p.b, p.b)
        pair = frozenset((a, b))
        if pair in seen:
            seen[pair] += 1
            continue
        seen[pair] = 1
        if (a, b) != (p.a, p.b):
            p = _renamed(p, a, b, key_of, known)
        out.append(p)
    n = object_pairs(ids, i, j) if objects_checked is None else objects_checked
    counts = {s.value: 0 for s in Status}
    for p in out:
        counts[p.status.value] += 1
    counts[Status.CLEAR.value] += n - len(out)
    return out, counts, n


def object_pairs(ids: np.ndarray, i: np.ndarray, j: np.ndarray) -> int:
    """How many pairs of objects the part pairs (i, j) make."""
    if not len(i):
        return 0
    # a set, not np.unique(axis=1): that imports numpy.ma (about 15 ms of a robot's start)
    return len(set(zip(np.minimum(ids[i], ids[j]).tolist(), np.maximum(ids[i], ids[j]).tolist())))


def _renamed(p: Finding, a: str, b: str, key_of, known) -> Finding:
    note = f"{p.a} against {p.b}, the most severe of their elements' pairs"
    change: dict = dict(a=a, b=b, note=note if not p.note else f"{p.note}; {note}")
    if key_of is not None:
        change["key"] = key_of(a, b, p.file_a, p.file_b)
        change["known"] = bool(known is not None and p.violation and not p.allowed
                               and change["key"] in known)
    return dataclasses.replace(p, **change)


def merged_records(records, owner: dict) -> tuple:
    """The ObjectRecords with each object's elements as one record under the object's name:
    sizes summed, bounds joined; an object of several elements is not taken for convex."""
    out: list = []
    groups: dict = {}
    for r in records:
        name = owner.get(r.name)
        if name is None:
            out.append(r)
        else:
            if name not in groups:
                groups[name] = []
                out.append(name)
            groups[name].append(r)
    return tuple(r if isinstance(r, ObjectRecord) else _one(r, groups[r]) for r in out)


def _one(name: str, rs: list) -> ObjectRecord:
    if len(rs) == 1:
        return dataclasses.replace(rs[0], name=name)
    lo = tuple(min(r.bounds[0][d] for r in rs) for d in range(3))
    hi = tuple(max(r.bounds[1][d] for r in rs) for d in range(3))
    bodies = [r.bodies for r in rs]
    watertight = [r.watertight for r in rs]
    return ObjectRecord(
        name=name, file=rs[0].file, vertices=sum(r.vertices for r in rs), faces=sum(r.faces for r in rs),
        hull_vertices=sum(r.hull_vertices for r in rs), convex=False,
        watertight=None if None in watertight else all(watertight), bounds=(lo, hi), units=rs[0].units,
        bodies=None if None in bodies else sum(bodies), dimension=max(r.dimension for r in rs),
        convexity=f"{len(rs)} collision elements ({', '.join(r.name for r in rs)}), checked as one "
                  f"object")


def merged_triangles(triangles, members: list):
    """((n, 3) vertices, (m, 3) faces) of the elements' triangles together (curved primitives,
    which have none, left out), or None when no element has any. triangles(k) -> (V, F) or None."""
    got = [t for t in (triangles(k) for k in members) if t is not None]
    if not got:
        return None
    offsets = np.cumsum([0] + [len(V) for V, _ in got])
    return (np.concatenate([V for V, _ in got]),
            np.concatenate([F + offsets[n] for n, (_, F) in enumerate(got)]))
