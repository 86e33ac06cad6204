"""Clashes grouped by place (gjkcli.pipeline.grouping).

Oracle of the clustering: scipy's own single-linkage hierarchy cut at the distance
(``fcluster(linkage(points, "single"), within, "distance")``), which the grouping must equal as a
partition, on seeded random contacts at distances swept around the typical spacing.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from scipy.cluster.hierarchy import fcluster, linkage

from gjkcli.engine.results import Result, Status
from gjkcli.pipeline.findings import Finding
from gjkcli.pipeline.grouping import clusters, group_pairs
from gjkcli.pipeline.groups import contact, groups


def _partition(labels) -> set:
    out: dict = {}
    for k, label in enumerate(np.asarray(labels).tolist()):
        out.setdefault(label, []).append(k)
    return {frozenset(v) for v in out.values()}


@pytest.mark.parametrize("within", [0.05, 0.1, 0.2, 0.4])
def test_clusters_are_scipys_single_linkage_cut_at_the_distance(within):
    rng = np.random.default_rng(24)
    points = rng.uniform(0.0, 1.0, size=(300, 3))
    ours = clusters(points, within)
    theirs = fcluster(linkage(points, method="single"), within, criterion="distance")
    assert _partition(ours) == _partition(theirs)
    # labels 0, 1, ... by first appearance
    _, first = np.unique(ours, return_index=True)
    assert np.array_equal(ours[np.sort(first)], np.arange(len(first)))
    # the sweep spans the regimes: mostly singletons at the smallest distance, one cluster at the
    # largest (300 points in a unit cube are about 0.15 apart on average)
    low, high = {0.05: (0.7, 1.0), 0.1: (0.3, 0.95), 0.2: (0.0, 0.2), 0.4: (0.0, 0.01)}[within]
    assert low <= len(first) / len(points) <= high


def _pair(a: str, b: str, at, status=Status.COLLISION, violation=True, clash_set=None, allowed=False):
    at = np.asarray(at, dtype=float)
    r = Result(status=status, distance=0.0, distance_lower=0.0, depth=1.0, normal=np.array([1.0, 0, 0]),
               point_a=at - [0.5, 0, 0], point_b=at + [0.5, 0, 0], certificate=None, iterations=1,
               epa_iterations=1, exit="converged", epa_exit=None, tolerance=1e-7)
    return Finding(a=a, b=b, result=r, violation=violation, clash_set=clash_set, allowed=allowed)


def test_groups_are_per_clash_set_and_only_of_failures():
    pairs = [_pair("d1", "beam", (0, 0, 0), clash_set="beams"),
             _pair("d2", "beam", (0, 0.7, 0), clash_set="beams"),
             _pair("d1", "wall", (0, 0.1, 0), clash_set="walls"),  # same place, another set
             _pair("d3", "beam", (50, 0, 0), clash_set="beams"),
             _pair("d4", "beam", (0, 0.3, 0), status=Status.TOUCHING, violation=False, clash_set="beams"),
             _pair("d5", "beam", (0, 0.2, 0), clash_set="beams", allowed=True)]
    assert contact(pairs[1]).tolist() == [0.0, 0.7, 0.0]
    out = group_pairs(pairs, 1.0)
    assert [p.group for p in out] == [1, 1, 2, 3, None, None]
    found = groups(out)
    assert [(g.number, g.clash_set, g.pairs, g.elements) for g in found] == [
        (1, "beams", (0, 1), ("d1", "beam", "d2")), (2, "walls", (2,), ("d1", "wall")),
        (3, "beams", (3,), ("d3", "beam"))]
    assert found[0].centre == pytest.approx((0.0, 0.35, 0.0))
    # just under the spacing, the two beam clashes part
    assert [p.group for p in group_pairs(pairs, 0.69)] == [1, 2, 3, 4, None, None]
    # a set whose distance is None is not grouped
    assert [p.group for p in group_pairs(pairs, lambda s: None if s == "walls" else 1.0)] == \
        [1, 1, None, 2, None, None]
    # the overlap solid's centroid is the contact when there is one, however it is triangulated
    # (one face of the box split into many triangles moves the mean of its corners, not this)
    import trimesh

    cube = trimesh.creation.box(extents=(2, 2, 2))
    cube.apply_translation((10, 10, 10))
    v, f = trimesh.remesh.subdivide(cube.vertices, cube.faces, face_index=[0, 1])
    v, f = trimesh.remesh.subdivide(v, f, face_index=np.arange(len(f) - 6, len(f)))
    assert not np.allclose(v.mean(axis=0), 10.0)
    solid = dataclasses.replace(pairs[0], overlap_mesh=(v, f))
    assert contact(solid) == pytest.approx([10.0, 10.0, 10.0], abs=1e-12)
    # a solid without triangles (none was computed): the witness points' middle
    empty = dataclasses.replace(pairs[0], overlap_mesh=(np.array([[9.0, 9, 9]]), np.zeros((0, 3), int)))
    assert contact(empty).tolist() == [0.0, 0.0, 0.0]
