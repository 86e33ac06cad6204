"""A manifest's [[robot]]: a URDF placed in a cell among other objects, checked as a whole."""
from __future__ import annotations

import numpy as np
import pytest

from gjkcli.engine.results import Status
from gjkcli.pipeline import run
from gjkcli.scene import manifest as manifests
from gjkcli.scene import urdf


def _cell(tmp_path, panda_package, extra: str, joints='joints = "ready"') -> object:
    text = f"""
[[robot]]
urdf = "{panda_package / 'urdf' / 'panda.urdf'}"
name = "arm"
srdf = "{panda_package / 'urdf' / 'panda.srdf'}"
{joints}
translate = [1.0, 2.0, 0.5]
rotate = [0, 0, 90]
{extra}
"""
    p = tmp_path / "cell.toml"
    p.write_text(text)
    return p


def test_a_post_at_the_hand_collides_and_nothing_else_fails(tmp_path, panda_package, fcl_robot):
    robot = urdf.load(panda_package / "urdf" / "panda.urdf")
    q = urdf.parse_joints(robot, "ready", panda_package / "urdf" / "panda.srdf")
    place = manifests.placement([1.0, 2.0, 0.5], [0, 0, 90])
    hand = place @ robot.fk(q[None])[0][robot.links.index("panda_hand")]
    x, y, z = hand[:3, 3]
    cell = _cell(tmp_path, panda_package, f"""
[[object]]
name = "post"
sphere = 0.03
translate = [{x}, {y}, {z}]

[[object]]
name = "far"
box = [0.1, 0.1, 0.1]
translate = [{x + 1.0}, {y}, {z}]
""")
    found = run.scan([], run.Options(jobs=1), manifest=cell)
    assert not found.errors
    failing = {frozenset((p.a, p.b)) for p in found.failures}
    assert frozenset(("arm:panda_hand", "post")) in failing
    assert all("post" in pair for pair in failing)  # the far box and the arm's own pairs pass
    assert all(p.status is not Status.COLLISION or p.allowed or "post" in (p.a, p.b) for p in found.pairs)
    # (a sphere, not a box: this branch predates main's fix for a box primitive's triangles)
    # the hand's mesh in the cell meets the post in python-fcl too
    fcl = pytest.importorskip("fcl")
    V, F = [g for g in urdf.read_geometries(robot, q, shown="x", transform=place) if g.name == "panda_hand"][0].vertices, \
        urdf.local_meshes(robot)[robot.links.index("panda_hand") - 2][1]
    m = fcl.BVHModel()
    m.beginModel(len(V), len(F))
    m.addSubModel(V, F)
    m.endModel()
    post = fcl.CollisionObject(fcl.Sphere(0.03), fcl.Transform(np.eye(3), hand[:3, 3]))
    assert fcl.collide(fcl.CollisionObject(m, fcl.Transform()), post, fcl.CollisionRequest(), fcl.CollisionResult())


def test_the_robots_pose_errors_name_the_manifest_line(tmp_path, panda_package):
    cell = _cell(tmp_path, panda_package, "", joints="joints = {panda_joint4 = 1.0}")
    with pytest.raises(manifests.ManifestError) as e:
        run.scan([], run.Options(jobs=1), manifest=cell)
    assert e.value.line == 2
    assert "panda_joint4 = 1 is outside its limits" in e.value.message


def test_a_robot_takes_a_rigid_transform(tmp_path, panda_package):
    p = tmp_path / "cell.toml"
    p.write_text(f'[[robot]]\nurdf = "{panda_package / "urdf" / "panda.urdf"}"\n'
                 f'transform = [[2,0,0,0],[0,1,0,0],[0,0,1,0],[0,0,0,1]]\n')
    with pytest.raises(manifests.ManifestError, match="a robot takes a rigid transform"):
        manifests.load(p)
