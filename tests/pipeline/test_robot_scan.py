"""`gjk scan robot.urdf` through the one pipeline: the Panda's colliding link pairs at random poses
agree with trimesh + python-fcl on the exact link meshes (not their hulls: the Panda's links fill
their hulls to 3e-4 of the volume but are not them, so the policy sends meeting hulls to the
triangles)."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from gjkcli.engine.results import Status
from gjkcli.pipeline import run
from gjkcli.scene import urdf

PACKAGE = "moveit_resources_panda_description"


def _fcl_collisions(robot, q) -> set:
    """{(a, b)} of the link meshes python-fcl finds in collision at pose q, on the triangles."""
    fcl = pytest.importorskip("fcl")
    geoms = urdf.read_geometries(robot, q, shown="panda.urdf")
    objects = []
    for g in geoms:
        model = fcl.BVHModel()
        model.beginModel(len(g.vertices), len(g.faces))
        model.addSubModel(g.vertices, g.faces)
        model.endModel()
        objects.append((g.name, fcl.CollisionObject(model, fcl.Transform())))
    out = set()
    for (na, oa), (nb, ob) in itertools.combinations(objects, 2):
        if fcl.collide(oa, ob, fcl.CollisionRequest(), fcl.CollisionResult()):
            out.add(frozenset((na, nb)))
    return out


def test_colliding_link_pairs_agree_with_fcl(panda_package):
    path = panda_package / "urdf" / "panda.urdf"
    robot = urdf.load(path)
    rng = np.random.default_rng(2026)
    # random poses, and the default one (every joint at 0), where the hand folds onto link5
    poses = np.vstack([rng.uniform(robot.lower, robot.upper, size=(10, robot.dof)),
                       robot.default_pose()])
    non_adjacent_hits = 0
    clear_pairs = 0
    for q in poses:
        joints = ",".join(f"{name}={float(v)!r}" for name, v in zip(robot.variables, q))
        options = run.Options(jobs=1, robot=urdf.RobotOptions(joints=joints))
        found = run.scan([path], options)
        assert not found.errors
        ours = {frozenset((p.a, p.b)) for p in found.pairs if p.status is Status.COLLISION}
        touching = {frozenset((p.a, p.b)) for p in found.pairs if p.status is Status.TOUCHING}
        theirs = _fcl_collisions(robot, q)
        # a touching pair (within the band) may read either way in FCL; nothing else may differ
        assert ours - touching == theirs - touching, (q, ours ^ theirs)
        adjacent = {frozenset((a, b)) for a, b, _ in urdf.adjacent_links(robot)}
        non_adjacent_hits += len(theirs - adjacent)
        clear_pairs += 55 - len(theirs)
        assert all(p.mode == "exact" for p in found.pairs if p.status is Status.COLLISION)
    # the poses include self-collisions beyond adjacent links, and clear pairs
    assert non_adjacent_hits >= 1
    assert clear_pairs > 100


def test_srdf_pairs_are_allowed_with_their_reasons(panda_package):
    path = panda_package / "urdf" / "panda.urdf"
    options = run.Options(jobs=1, robot=urdf.RobotOptions(srdf=str(panda_package / "urdf" / "panda.srdf"),
                                                          joints="ready"))
    found = run.scan([path], options)
    assert found.exit_code == 0
    reasons = {frozenset((p.a, p.b)): p.reason for p in found.pairs if p.allowed}
    assert reasons[frozenset(("panda_link1", "panda_link2"))].startswith("adjacent: joint panda_joint2")
    assert any(r == "SRDF: Default" for r in reasons.values())  # the fingers
    assert any("pose panda_joint1=0, panda_joint2=-0.785" in n for n in found.notes)


def test_default_pose_without_srdf_fails_on_the_hand(panda_package):
    path = panda_package / "urdf" / "panda.urdf"
    found = run.scan([path], run.Options(jobs=1))
    assert found.exit_code == 1
    failing = {frozenset((p.a, p.b)) for p in found.failures}
    assert frozenset(("panda_link5", "panda_hand")) in failing
    # adjacent links are allowed, not failing
    assert frozenset(("panda_link1", "panda_link2")) not in failing
