"""`gjk collision-matrix --prove`: branch and bound over a pair's joint box. A proof stands on the
motion bound (tested against sampled vertex paths in test_robot_motion.py); here: proven pairs stay
clear in python-fcl over many poses of their box, the pair the shipped SRDF gets wrong is refuted
with a pose python-fcl confirms, and a budget too small says "not proven"."""
from __future__ import annotations

import numpy as np
import pytest

from gjkcli.pipeline import prove
from gjkcli.pipeline.motion import Motion
from gjkcli.scene import urdf


@pytest.fixture(scope="module")
def panda(panda_package):
    robot = urdf.load(panda_package / "urdf" / "panda.urdf")
    return robot, Motion.build(robot, None, None)


def test_the_joints_between_two_links(panda):
    robot, _ = panda
    moving, _ = prove.moving_variables(robot, "panda_link2", "panda_link6")
    assert [v for v, m in zip(robot.variables, moving) if m] == [
        "panda_joint3", "panda_joint4", "panda_joint5", "panda_joint6"]


@pytest.mark.parametrize("a, b", [("panda_link4", "panda_link6"), ("panda_hand", "panda_link6"),
                                  ("panda_link1", "panda_link3")])
def test_proven_pairs_stay_clear_in_fcl(panda, a, b, fcl_robot):
    robot, motion = panda
    proof = prove.prove_pair(motion, a, b, max_boxes=5000)
    assert proof.verdict == "proven"
    oracle = fcl_robot(robot)
    rng = np.random.default_rng(11)
    poses = rng.uniform(robot.lower, robot.upper, size=(1500, robot.dof))
    assert not any(oracle.colliding(q, [(a, b)]) for q in poses)


def test_link2_link6_is_refuted_with_a_pose_fcl_confirms(panda, fcl_robot):
    robot, motion = panda
    proof = prove.prove_pair(motion, "panda_link2", "panda_link6", max_boxes=20_000)
    assert proof.verdict == "collides"
    q = np.array([proof.pose[name] for name in robot.variables])
    assert np.all((robot.lower <= q) & (q <= robot.upper))
    assert fcl_robot(robot).colliding(q, [("panda_link2", "panda_link6")])


def test_a_small_budget_is_not_proven(panda):
    _, motion = panda
    proof = prove.prove_pair(motion, "panda_link0", "panda_link4", max_boxes=50)
    assert proof.verdict == "not proven" and proof.boxes >= 50
