"""Clashes grouped by place: the failing pairs of each clash set whose contacts lie within a
distance of each other, in a chain, are one group (a coordinator resolves one place at a time,
as IfcClash's smart grouping and Navisworks' "group by proximity" present them).

The grouping is single-linkage agglomerative clustering cut at the distance `within`
(scipy.cluster.hierarchy's ``fcluster(linkage(points, "single"), within, "distance")``, which
is also DBSCAN with ``min_samples=1``): two contacts closer than `within` share a group, and
groups chain through their members. Its linkage matrix takes n^2 memory (24,449 clashes of a
roof: 2.4 GB), so the same clusters are found as the connected components of the graph whose
edges join contacts within `within` (scipy.spatial.cKDTree.query_pairs, then
scipy.sparse.csgraph.connected_components), in n log n.

The contacts are `gjkcli.pipeline.groups.contact`; the groups as the reports read them,
`gjkcli.pipeline.groups.groups`.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from gjkcli.pipeline.findings import Finding
from gjkcli.pipeline.groups import contact

__all__ = ["clusters", "group_pairs", "grouped"]


def clusters(points: np.ndarray, within: float) -> np.ndarray:
    """(n,) cluster labels 0, 1, ...: single linkage cut at `within` (points closer than it, or
    chained through such points, share a label), numbered by first appearance.

    points : (n, 3) float64
    """
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components
    from scipy.spatial import cKDTree

    n = len(points)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    edges = cKDTree(points).query_pairs(float(within), output_type="ndarray")
    graph = coo_matrix((np.ones(len(edges)), (edges[:, 0], edges[:, 1])), shape=(n, n))
    _, labels = connected_components(graph, directed=False)
    _, first = np.unique(labels, return_index=True)
    order = np.empty(len(first), dtype=np.int64)
    order[np.argsort(np.argsort(first))] = np.arange(len(first))  # by first appearance
    return order[labels]


def grouped(pair: Finding) -> bool:
    """A pair that is grouped: a failure no rule allows (what becomes a BCF topic)."""
    return pair.violation and not pair.allowed


def group_pairs(pairs, within) -> tuple:
    """The pairs with their `group` numbers: the failing pairs no rule allows, clustered per
    clash set by their contacts (`clusters`); the other pairs keep None.

    within : the grouping distance, model units: a float for every clash set, or a callable
        clash set name -> float or None (None: that set's pairs are not grouped)
    """
    pairs = list(pairs)
    distance = within if callable(within) else (lambda _name: within)
    by_set: dict = {}
    for k, p in enumerate(pairs):
        if grouped(p):
            by_set.setdefault(p.clash_set, []).append(k)
    labels = {}  # pair index -> (first pair index of its group)
    for name, ks in by_set.items():
        w = distance(name)
        if w is None:
            continue
        found = clusters(np.array([contact(pairs[k]) for k in ks]), w)
        heads = {}
        for k, label in zip(ks, found.tolist()):
            heads.setdefault(label, k)
            labels[k] = heads[label]
    numbers = {head: n for n, head in enumerate(sorted(set(labels.values())), start=1)}
    return tuple(dataclasses.replace(p, group=numbers[labels[k]]) if k in labels else p
                 for k, p in enumerate(pairs))
