"""`exact_query(..., depth=False)`: the verdict of a sweep of many poses, without the search for
the deepest point. The status must be the one `depth=True` gives on every pair; only the depth
(a measurement) of a collision where surfaces cross beyond the band is left out: the first point
found deeper than the band proves it.

Oracles besides the engine's own full answer: python-fcl's triangle test (crossing surfaces)
and trimesh's `contains` (a part inside the other), on seeded random poses whose share of
collisions is asserted, so that the sweep can fail.
"""
from __future__ import annotations

import numpy as np
import pytest
import trimesh

from gjkcli.engine.exact import Mesh, exact_query
from gjkcli.engine.results import Status
from gjkcli.tolerances import touching_tolerance

fcl = pytest.importorskip("fcl")


def _rotation(rng) -> np.ndarray:
    q = rng.normal(size=4)
    w, x, y, z = q / np.linalg.norm(q)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def _fcl(mesh: trimesh.Trimesh, T: np.ndarray):
    model = fcl.BVHModel()
    model.beginModel(len(mesh.vertices), len(mesh.faces))
    model.addSubModel(np.asarray(mesh.vertices, dtype=np.float64), np.asarray(mesh.faces, dtype=np.int64))
    model.endModel()
    return fcl.CollisionObject(model, fcl.Transform(T[:3, :3], T[:3, 3]))


LEG, UP = ([0.0, 0.0, 0.0], [0.6, 0.125, 0.125]), ([0.475, 0.0, 0.625], [0.125, 0.125, 0.5])


def _depth_in_bar(point, T) -> float:
    """How far a world point lies inside the bar placed by T (analytic: the bar is the union of
    its two boxes, which overlap; trimesh's ray parity calls their common part outside)."""
    x = np.linalg.solve(T, np.append(point, 1.0))[:3]
    return max(float(np.min(np.array(half) - np.abs(x - centre))) for centre, half in (LEG, UP))


@pytest.fixture(scope="module")
def parts():
    """A torus (not convex: its hole) and a bent bar (an L of two boxes, not convex)."""
    torus = trimesh.creation.torus(major_radius=1.0, minor_radius=0.3, major_sections=24, minor_sections=12)
    leg = trimesh.creation.box(2 * np.array(LEG[1]))
    up = trimesh.creation.box(2 * np.array(UP[1]))
    up.apply_translation(UP[0])
    bar = trimesh.util.concatenate([leg, up])
    return torus, bar


def test_the_status_is_the_full_verdicts_at_random_poses(parts):
    torus, bar = parts
    a, b = Mesh(torus.vertices, torus.faces, name="torus"), Mesh(bar.vertices, bar.faces, name="bar")
    rng = np.random.default_rng(22)
    statuses, unmeasured = [], 0
    for _ in range(300):
        T = np.eye(4)
        T[:3, :3], T[:3, 3] = _rotation(rng), rng.uniform(-1.4, 1.4, size=3)
        full = exact_query(a, b, pose_b=T)
        quick = exact_query(a, b, pose_b=T, depth=False)
        assert quick.status is full.status, (T, full.exit, quick.exit)
        assert quick.exit == full.exit
        if full.status is Status.COLLISION:
            if quick.depth is None:
                unmeasured += 1
                assert full.exit == "a point inside the other part beyond the band"
                assert full.depth > full.tolerance
                # the proving point lies inside the other part, beyond the band
                if quick.contained == "a in b":
                    assert _depth_in_bar(quick.point_a, T) > full.tolerance
                else:
                    assert trimesh.proximity.signed_distance(torus, [quick.point_b])[0] > full.tolerance
                # crossing surfaces: fcl's triangle test sees them too
                hit = fcl.collide(_fcl(torus, np.eye(4)), _fcl(bar, T), fcl.CollisionRequest())
                assert hit
            else:
                assert quick.depth == full.depth  # the verdict rested on the deepest point found
        statuses.append(full.status)
    share = sum(s is Status.COLLISION for s in statuses) / len(statuses)
    assert 0.15 < share < 0.85, share  # both outcomes drawn: the sweep can fail
    assert unmeasured > 10


def test_the_band_sweep_is_unchanged(parts):
    """A bar pushed through a box face by depths just under and over the band, and gaps around
    it: the same statuses with and without the depth search."""
    box = trimesh.creation.box([2.0, 2.0, 2.0])
    _, bar = parts
    a, b = Mesh(box.vertices, box.faces, name="box"), Mesh(bar.vertices, bar.faces, name="bar")
    tol = touching_tolerance(max(a.size, b.size), None)
    seen = set()
    for d in (-0.3, -3 * tol, -1.5 * tol, -tol, -0.5 * tol, 0.0, 0.5 * tol, 1.5 * tol, 0.01):
        T = np.eye(4)
        T[0, 3] = 1.0 + 0.6 - d  # the bar's leg reaches 0.6 along x from its centre
        full, quick = exact_query(a, b, pose_b=T), exact_query(a, b, pose_b=T, depth=False)
        assert quick.status is full.status, (d, full.exit, quick.exit)
        seen.add(full.status)
    assert {Status.COLLISION, Status.TOUCHING, Status.CLEAR} <= seen


def test_a_part_inside_is_still_a_collision_without_the_depth_search(parts):
    """No surface crosses: the verdict rests on the point found inside, searched for as before."""
    box = trimesh.creation.box([4.0, 4.0, 4.0])
    torus, _ = parts
    a, b = Mesh(box.vertices, box.faces, name="box"), Mesh(torus.vertices, torus.faces, name="torus")
    assert box.contains(torus.vertices).all()
    quick = exact_query(a, b, depth=False)
    assert quick.status is Status.COLLISION and quick.contained == "b in a"
    assert quick.depth == exact_query(a, b).depth
