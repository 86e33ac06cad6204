"""exact_query(hulls_apart=True): the caller knows the hulls are apart, so the containment probes
are skipped; the answer is the one without the hint."""
from __future__ import annotations

import numpy as np
import pytest

trimesh = pytest.importorskip("trimesh")

from gjkcli.engine.exact import Mesh, exact_query  # noqa: E402


def test_the_hint_changes_no_answer_for_parts_whose_hulls_are_apart():
    ring = trimesh.creation.annulus(0.5, 1.0, 0.4)
    a = Mesh(ring.vertices, ring.faces)
    b = Mesh(trimesh.creation.box([0.3, 0.3, 0.3]).vertices, trimesh.creation.box([0.3, 0.3, 0.3]).faces)
    rng = np.random.default_rng(3)
    for _ in range(20):
        T = np.eye(4)
        T[:3, 3] = rng.normal(size=3)
        T[:3, 3] *= rng.uniform(1.4, 3.0) / np.linalg.norm(T[:3, 3])  # beyond the ring's hull
        plain = exact_query(a, b, pose_b=T, want="distance")
        hinted = exact_query(a, b, pose_b=T, want="distance", hulls_apart=True)
        assert hinted.status is plain.status
        assert hinted.distance == plain.distance
        np.testing.assert_array_equal(hinted.point_a, plain.point_a)
    # inside the ring's body: a containment the probes find, which the hint (wrongly given) skips
    T = np.eye(4)
    T[0, 3] = 0.75
    small = trimesh.creation.box([0.1, 0.1, 0.1])
    c = Mesh(small.vertices, small.faces)
    assert exact_query(a, c, pose_b=T, want="distance").status.value == "collision"
    assert exact_query(a, c, pose_b=T, want="distance", hulls_apart=True).status.value == "clear"
