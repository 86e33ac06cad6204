"""The groups of clashes at one place in a run's findings, as the reports read them: which
pairs, which elements, where (`gjkcli.pipeline.grouping` numbers the pairs' `group`).

A pair's contact is where its clash is: the centroid of the overlap solid when one was computed
(the same point whichever way the solid was triangulated: manifold3d's boolean and the convex
cut of `gjkcli.mesh.overlap` give it alike), else the midpoint of its witness points.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gjkcli.engine.volume import centroid
from gjkcli.pipeline.findings import Finding

__all__ = ["Group", "contact", "groups"]


@dataclass(frozen=True)
class Group:
    """The failing pairs of one clash set at one place.

    number : 1, 2, ... in the order of each group's most severe pair
    clash_set : the [[check]]'s name, None without clash sets
    pairs : indices into the findings' pairs
    elements : the objects of the pairs, each once, in the pairs' order
    centre : (3,) the mean of the pairs' contacts, model units
    """

    number: int
    clash_set: str | None
    pairs: tuple
    elements: tuple
    centre: tuple


def contact(pair: Finding) -> np.ndarray:
    """(3,) the point the pair's clash is at, model units: the centroid of the solid both parts
    occupy (whichever way it was triangulated), else the middle of the closest points."""
    if pair.overlap_mesh is not None and len(pair.overlap_mesh[1]):
        centre = centroid(*pair.overlap_mesh)
        if centre is not None:
            return centre
    r = pair.result
    return (np.asarray(r.point_a, dtype=np.float64) + np.asarray(r.point_b, dtype=np.float64)) / 2.0


def groups(pairs) -> list[Group]:
    """The groups of pairs numbered by `group_pairs`, by number."""
    members: dict = {}
    for k, p in enumerate(pairs):
        if p.group is not None:
            members.setdefault(p.group, []).append(k)
    out = []
    for number in sorted(members):
        ks = members[number]
        elements = tuple(dict.fromkeys(name for k in ks for name in (pairs[k].a, pairs[k].b)))
        centre = np.mean([contact(pairs[k]) for k in ks], axis=0)
        out.append(Group(number=number, clash_set=pairs[ks[0]].clash_set, pairs=tuple(ks),
                         elements=elements, centre=tuple(float(x) for x in centre)))
    return out
