"""URDF scenes: parsing, package:// resolution, poses, and forward kinematics against yourdfpy."""
from __future__ import annotations

import numpy as np
import pytest

from gjkcli.errors import InputError
from gjkcli.scene import urdf

PACKAGE = "moveit_resources_panda_description"


def _write(tmp_path, body: str, name="robot.urdf"):
    p = tmp_path / name
    p.write_text(f'<?xml version="1.0"?>\n<robot name="r">\n{body}\n</robot>\n')
    return p


TWO_LINKS = """
<link name="base"><collision><geometry><box size="1 2 3"/></geometry></collision></link>
<link name="arm">
  <collision><origin xyz="0 0 0.5"/><geometry><cylinder radius="0.1" length="1"/></geometry></collision>
  <collision><origin xyz="0 0 1"/><geometry><sphere radius="0.2"/></geometry></collision>
</link>
<link name="tip"><collision><geometry><mesh filename="package://tools/tip.stl" scale="2 2 2"/></geometry></collision></link>
<joint name="j1" type="revolute"><parent link="base"/><child link="arm"/><origin xyz="0 0 1.5"/>
  <axis xyz="0 1 0"/><limit lower="-1" upper="1" velocity="2"/></joint>
<joint name="j2" type="prismatic"><parent link="arm"/><child link="tip"/><origin xyz="0 0 1"/>
  <axis xyz="0 0 1"/><limit lower="0.1" upper="0.5" velocity="1"/></joint>
"""


@pytest.fixture
def tool_package(tmp_path):
    import trimesh

    folder = tmp_path / "pkgs" / "tools"
    folder.mkdir(parents=True)
    trimesh.creation.box([0.1, 0.1, 0.1]).export(folder / "tip.stl")
    return folder


def test_primitives_names_and_default_pose(tmp_path, tool_package):
    robot = urdf.load(_write(tmp_path, TWO_LINKS), packages=[("tools", str(tool_package))])
    assert robot.links == ("base", "arm", "tip")
    assert robot.variables == ("j1", "j2")
    assert [c.name for c in robot.collisions] == ["base", "arm:1", "arm:2", "tip"]
    # every joint at 0 clipped to its limits: j2's lower limit is 0.1
    assert robot.default_pose().tolist() == [0.0, 0.1]
    geoms = urdf.read_geometries(robot, np.array([np.pi / 2 * 0.5, 0.3]), shown="robot.urdf")
    kinds = [g.primitive.kind if g.primitive is not None else "mesh" for g in geoms]
    assert kinds == ["box", "cylinder", "point", "mesh"]
    # the sphere at the arm's z = 1 after a rotation of 45 degrees about y at height 1.5
    q = np.pi / 4
    expected = np.array([np.sin(q), 0.0, 1.5 + np.cos(q)])
    np.testing.assert_allclose(geoms[2].primitive.translation, expected, atol=1e-12)
    # the mesh scaled by 2: a 0.2 cube, 1 + 0.3 further along the arm
    tip = geoms[3].vertices
    np.testing.assert_allclose(tip.max(axis=0) - tip.min(axis=0), [0.2 * np.cos(q) + 0.2 * np.sin(q),
                                                                   0.2, 0.2 * np.cos(q) + 0.2 * np.sin(q)],
                               atol=1e-9)
    np.testing.assert_allclose(tip.mean(axis=0), [1.3 * np.sin(q), 0, 1.5 + 1.3 * np.cos(q)], atol=1e-9)


def test_package_resolution_order(tmp_path, tool_package, monkeypatch):
    path = _write(tmp_path, TWO_LINKS)
    monkeypatch.delenv("ROS_PACKAGE_PATH", raising=False)
    with pytest.raises(InputError, match=r"cannot find package://tools/tip.stl.*--package tools=DIR"):
        urdf.load(path)
    monkeypatch.setenv("ROS_PACKAGE_PATH", str(tool_package.parent))
    assert urdf.load(path).collisions[-1].mesh == tool_package / "tip.stl"
    other = tmp_path / "elsewhere"
    other.mkdir()
    with pytest.raises(InputError, match=r"is not at .*elsewhere.*--package tools="):
        urdf.load(path, packages=[("tools", str(other))])  # --package comes first, and is wrong


def test_package_found_walking_up(panda_package, monkeypatch):
    monkeypatch.delenv("ROS_PACKAGE_PATH", raising=False)
    robot = urdf.load(panda_package / "urdf" / "panda.urdf")
    assert robot.collisions[0].mesh == panda_package / "meshes" / "collision" / "link0.stl"


@pytest.mark.parametrize("body, message", [
    ('<xacro:property name="a" value="1" xmlns:xacro="http://www.ros.org/wiki/xacro"/>'
     '<link name="a"/>', "xacro is out of scope"),
    ('<link name="a"/><link name="b"/>', "one root link; roots here: a, b"),
    ('<link name="a"/><link name="b"/><joint name="j" type="screw"><parent link="a"/>'
     '<child link="b"/></joint>', "type 'screw' is not supported"),
    ('<link name="a"/><link name="b"/><joint name="j" type="revolute"><parent link="a"/>'
     '<child link="b"/></joint>', "needs <limit"),
    ('<link name="a"><collision><geometry><box size="1 2"/></geometry></collision></link>',
     "size must be 3 finite numbers"),
    ('<link name="a"/><link name="b"/><link name="c"/><joint name="j" type="revolute">'
     '<parent link="a"/><child link="b"/><limit lower="0" upper="1"/><mimic joint="k"/></joint>'
     '<joint name="k" type="revolute"><parent link="b"/><child link="c"/><limit lower="0" upper="1"/>'
     '<mimic joint="j"/></joint>', "mimic joints form a cycle"),
])
def test_bad_urdfs_say_what_is_wrong(tmp_path, body, message):
    with pytest.raises(InputError, match=message):
        urdf.load(_write(tmp_path, body))


def test_xacro_file_is_refused(tmp_path):
    p = tmp_path / "robot.urdf.xacro"
    p.write_text("<robot/>")
    with pytest.raises(InputError, match="xacro is out of scope"):
        urdf.load(p)


def test_entities_are_not_expanded(tmp_path):
    p = tmp_path / "robot.urdf"
    secret = tmp_path / "secret.txt"
    secret.write_text("SECRET")
    p.write_text(f'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file://{secret}">]>'
                 f'<robot name="r"><link name="&x;"/></robot>')
    try:
        robot = urdf.load(p)
    except InputError:
        return
    assert "SECRET" not in "".join(robot.links)


def test_joints_option(panda_package):
    robot = urdf.load(panda_package / "urdf" / "panda.urdf")
    srdf = panda_package / "urdf" / "panda.srdf"
    q = urdf.parse_joints(robot, "panda_joint2=0.5, panda_joint4=-1", None)
    assert q[robot.variables.index("panda_joint2")] == 0.5
    assert q[robot.variables.index("panda_joint4")] == -1.0
    ready = urdf.parse_joints(robot, "ready", srdf)
    assert ready[robot.variables.index("panda_joint4")] == -2.356
    with pytest.raises(InputError, match=r"panda_joint4 = 1 is outside its limits \[-3.1416, 0.0873\]"):
        urdf.parse_joints(robot, "panda_joint4=1", None)
    with pytest.raises(InputError, match="follows panda_finger_joint1"):
        urdf.parse_joints(robot, "panda_finger_joint2=0.01", None)
    with pytest.raises(InputError, match="is fixed"):
        urdf.parse_joints(robot, "panda_joint8=0", None)
    with pytest.raises(InputError, match="group states: ready, extended, transport"):
        urdf.parse_joints(robot, "nowhere", srdf)


def test_adjacent_links_pass_geometry_less_links(panda_package):
    robot = urdf.load(panda_package / "urdf" / "panda.urdf")
    pairs = {(a, b) for a, b, _ in urdf.adjacent_links(robot)}
    assert ("panda_link7", "panda_hand") in pairs  # through panda_link8, which has no geometry
    assert ("panda_hand", "panda_leftfinger") in pairs
    assert len(pairs) == 10  # link0-1 ... 6-7, 7-hand, hand-fingers


def test_forward_kinematics_agrees_with_yourdfpy(panda_package):
    """Every link frame at 200 random poses within the limits, against yourdfpy's own FK."""
    yourdfpy = pytest.importorskip("yourdfpy")
    path = panda_package / "urdf" / "panda.urdf"
    robot = urdf.load(path)
    other = yourdfpy.URDF.load(str(path), load_meshes=False, load_collision_meshes=False,
                               build_scene_graph=True)
    assert list(other.actuated_joint_names) == list(robot.variables)
    rng = np.random.default_rng(13)
    q = rng.uniform(robot.lower, robot.upper, size=(200, robot.dof))
    frames = robot.fk(q)
    worst = 0.0
    for n in range(len(q)):
        other.update_cfg(q[n])
        for k, link in enumerate(robot.links):
            T = other.get_transform(frame_to=link, frame_from=other.base_link)
            worst = max(worst, float(np.abs(T - frames[n, k]).max()))
    assert worst < 1e-9
    # the poses differ: the test sees something move
    assert np.ptp(frames[:, -1, :3, 3], axis=0).min() > 0.1


def test_a_malformed_urdf_says_what_and_where_once(tmp_path):
    """The XML parser's message names the line; its own place in its input ("(<string>, line
    3)") is left out of the one line."""
    path = tmp_path / "bad.urdf"
    path.write_text('<robot name="r">\n<link name="a">\n</robot>\n')
    with pytest.raises(InputError) as e:
        urdf.load(path)
    assert str(e.value) == (f"{path}: cannot read the URDF: Opening and ending tag mismatch: link line 2 "
                            f"and robot, line 3, column 9")
