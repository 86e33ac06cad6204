"""URDFs looser than the format, as yourdfpy and pybullet read them (each with a note saying what gjk
assumed), and the floating, planar and spherical joints, each checked against yourdfpy's forward
kinematics and, where geometry meets, python-fcl."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from gjkcli.errors import InputError
from gjkcli.scene import urdf

# base (a slab) - j1 (revolute about y) - arm (a rod) - j2 (revolute about x) - tip (a ball)
ARM = """<robot name="r">
<link name="base"><collision><geometry><box size="1 1 0.2"/></geometry></collision></link>
<link name="arm"><collision><origin xyz="0 0 0.5"/><geometry><cylinder radius="0.1" length="1"/>
  </geometry></collision></link>
<link name="tip"><collision><origin xyz="0 0.3 0"/><geometry><sphere radius="0.1"/></geometry>
  </collision></link>
<joint name="j1" type="revolute"><parent link="base"/><child link="arm"/><origin xyz="0 0 0.2"/>
  <axis xyz="0 1 0"/><limit lower="LOWER" upper="UPPER" velocity="1"/></joint>
<joint name="j2" type="revolute"><parent link="arm"/><child link="tip"/><origin xyz="0 0 1"/>
  <axis xyz="1 0 0"/><limit lower="-1" upper="1"/>MIMIC</joint>
</robot>
"""


def _arm(lower="-1", upper="1", mimic="", head='<?xml version="1.0"?>\n') -> str:
    return head + ARM.replace("LOWER", lower).replace("UPPER", upper).replace("MIMIC", mimic)


def _yourdfpy_frames(path, robot, q: np.ndarray) -> np.ndarray:
    """(L, 4, 4) yourdfpy's frames of the robot's real links (virtual ones skipped) at q."""
    yourdfpy = pytest.importorskip("yourdfpy")
    other = yourdfpy.URDF.load(str(path), load_meshes=False, load_collision_meshes=False,
                               build_scene_graph=True)
    other.update_cfg(dict(zip(other.actuated_joint_names, q)))
    return np.array([other.get_transform(frame_to=link, frame_from=other.base_link)
                     for link in robot.links if link not in robot.virtual])


def _ours(robot, q) -> np.ndarray:
    real = [k for k, link in enumerate(robot.links) if link not in robot.virtual]
    return robot.fk(np.asarray(q, dtype=float)[None])[0][real]


LENIENT = {
    "version 0.0": (_arm(head='<?xml version="0.0"?>\n'), "XML version '0.0'"),
    "declaration after a comment": (_arm(head='<!-- made by hand -->\n<?xml version="1.0"?>\n'),
                                    "not at the start of the file (line 2)"),
    "declaration after a blank line": (_arm(head='\n\n<?xml version="1.0" encoding="utf-8"?>\n'),
                                       "not at the start of the file (line 3)"),
    "lower above upper": (_arm(lower="1", upper="-1"), "lower limit 1 is above the upper -1: read as no limit"),
    "mimic of a missing joint": (_arm(mimic='<mimic joint="gone" multiplier="2" offset="0.3"/>'),
                                 "mimics 'gone', which is not a joint of this URDF: held at its offset 0.3"),
}


@pytest.mark.parametrize("case", list(LENIENT))
def test_lenient_urdfs_read_with_a_note_and_agree_with_yourdfpy(tmp_path, case):
    text, note = LENIENT[case]
    path = tmp_path / "robot.urdf"
    path.write_text(text)
    robot = urdf.load(path)
    assert any(note in n for n in robot.notes), robot.notes
    rng = np.random.default_rng(7)
    lower = np.where(np.isfinite(robot.lower), robot.lower, -3)
    for q in rng.uniform(lower, np.where(np.isfinite(robot.upper), robot.upper, 3), size=(5, robot.dof)):
        # yourdfpy's configuration is its actuated joints, the same as ours here
        np.testing.assert_allclose(_ours(robot, q), _yourdfpy_frames(path, robot, q), atol=1e-12)


@pytest.mark.parametrize("origin, note", [
    ('<origin xyz="0, 0, 0.2" rpy="0.3,0.2,0.1"/>', "separates its numbers with commas"),
    ('<origin xyz="0 0 0.2" rpy="0.3 0.2 0.1 0"/>', "rpy '0.3 0.2 0.1 0' has 4 numbers: took the first three"),
])
def test_origins_as_pybullet_reads_them(tmp_path, origin, note):
    """pybullet's reading of an <origin> with commas or a fourth number, against yourdfpy's
    frames of the same URDF written strictly."""
    strict = _arm().replace('<origin xyz="0 0 0.2"/>', '<origin xyz="0 0 0.2" rpy="0.3 0.2 0.1"/>')
    loose = _arm().replace('<origin xyz="0 0 0.2"/>', origin)
    (tmp_path / "strict.urdf").write_text(strict)
    (tmp_path / "loose.urdf").write_text(loose)
    robot = urdf.load(tmp_path / "loose.urdf")
    assert any(note in n for n in robot.notes), robot.notes
    q = [0.4, -0.3]
    np.testing.assert_allclose(_ours(robot, q), _yourdfpy_frames(tmp_path / "strict.urdf", robot, q), atol=1e-12)


def test_strict_urdf_has_no_notes(tmp_path):
    path = tmp_path / "robot.urdf"
    path.write_text(_arm())
    assert urdf.load(path).notes == ()


def test_lower_above_upper_is_unlimited(tmp_path):
    path = tmp_path / "robot.urdf"
    path.write_text(_arm(lower="1", upper="-1"))
    robot = urdf.load(path)
    # any value is a pose; samples take one turn, as for a continuous joint
    robot.check_pose(np.array([2.5, 0.0]), "test")
    assert (robot.lower[0], robot.upper[0]) == urdf.CONTINUOUS_RANGE
    with pytest.raises(InputError, match="outside its limits"):
        robot.check_pose(np.array([0.0, 2.5]), "test")  # j2 keeps its limits


def test_mimic_of_a_missing_joint_is_held_at_its_offset(tmp_path):
    path = tmp_path / "robot.urdf"
    path.write_text(_arm(mimic='<mimic joint="gone" multiplier="2" offset="0.3"/>'))
    robot = urdf.load(path)
    assert robot.variables == ("j1",)
    np.testing.assert_allclose(robot.joint_values(np.array([[0.5], [-0.5]])), [[0.5, 0.3], [-0.5, 0.3]])
    with pytest.raises(InputError, match="mimics a joint that is not there: it is held at 0.3"):
        urdf.parse_joints(robot, "j2=0.1", None)


@pytest.fixture
def tool_mesh(tmp_path):
    import trimesh

    folder = tmp_path / "ws" / "src" / "tools" / "meshes"
    folder.mkdir(parents=True)
    trimesh.creation.box([0.1, 0.2, 0.3]).export(folder / "tip.stl")
    return folder / "tip.stl"


@pytest.mark.parametrize("filename, scale, note, size", [
    ("package:///tools/meshes/tip.stl", "1 1 1", "a slash too many after package://", [0.1, 0.2, 0.3]),
    ("package://tools/meshes/tip.stl", "2 2 2 1", "has 4 numbers: took the first three", [0.2, 0.4, 0.6]),
    ("package://tools/meshes/tip.stl", "0.5", "is one number: the same on every axis", [0.05, 0.1, 0.15]),
    ("package://tools/meshes/tip.stl", "1,2,1", "commas", [0.1, 0.4, 0.3]),
])
def test_mesh_paths_and_scales_as_pybullet_reads_them(tmp_path, tool_mesh, filename, scale, note, size):
    path = tmp_path / "ws" / "src" / "tools" / "robot.urdf"
    path.write_text(f'<robot name="r"><link name="a"><collision><geometry><mesh filename="{filename}" '
                    f'scale="{scale}"/></geometry></collision></link></robot>')
    robot = urdf.load(path)
    assert robot.collisions[0].mesh == tool_mesh
    assert any(note in n for n in robot.notes), robot.notes
    (V, *_), = urdf.local_meshes(robot)
    np.testing.assert_allclose(np.ptp(V, axis=0), size, rtol=1e-6)  # STL: float32


def test_a_scale_that_is_not_numbers_is_refused(tmp_path, tool_mesh):
    path = tmp_path / "ws" / "src" / "tools" / "robot.urdf"
    path.write_text('<robot name="r"><link name="a"><collision><geometry><mesh '
                    'filename="package://tools/meshes/tip.stl" scale="1 x 1 1"/></geometry></collision>'
                    '</link></robot>')
    with pytest.raises(InputError, match=r"robot.urdf:1.*scale must be 3 finite numbers, got '1 x 1 1'"):
        urdf.load(path)
    path.write_text('<robot name="r"><link name="a"><collision><origin xyz="$(optenv IMU_XYZ 0 0 1)"/>'
                    '<geometry><box size="1 1 1"/></geometry></collision></link></robot>')
    with pytest.raises(InputError, match=r"unexpanded xacro or roslaunch substitution: expand"):
        urdf.load(path)


@pytest.mark.parametrize("root, what", [("mujoco", "MJCF"), ("sdf", "SDF")])
def test_other_robot_formats_are_named(tmp_path, root, what):
    path = tmp_path / "model.xml"
    path.write_text(f'<?xml version="1.0"?>\n<{root} model="m"><worldbody/></{root}>\n')
    assert urdf.is_urdf(path)
    with pytest.raises(InputError, match=f"{what}.*unsupported robot format"):
        urdf.load(path)
    mesh = tmp_path / "part.xml"
    mesh.write_text("<COLLADA/>")
    assert not urdf.is_urdf(mesh)


# -- joints of several degrees of freedom ------------------------------------------------------------

# a floating-base robot: the base flies (pinocchio's free flyer), two links on revolute joints
FLYER = """<?xml version="1.0"?>
<robot name="flyer">
<link name="world"/>
<link name="body"><collision><geometry><box size="0.4 0.2 0.1"/></geometry></collision></link>
<link name="leg"><collision><origin xyz="0 0 -0.25"/><geometry><box size="0.05 0.05 0.5"/></geometry>
  </collision></link>
<link name="head"><collision><geometry><sphere radius="0.08"/></geometry></collision></link>
<joint name="base" type="JOINT_TYPE"><parent link="world"/><child link="body"/>ORIGIN AXIS</joint>
<joint name="hip" type="revolute"><parent link="body"/><child link="leg"/><origin xyz="0.15 0 0"/>
  <axis xyz="0 1 0"/><limit lower="-2" upper="2"/></joint>
<joint name="neck" type="fixed"><parent link="body"/><child link="head"/><origin xyz="-0.2 0 0.12"/>
</joint>
</robot>
"""


def _flyer(kind: str, origin: str = "", axis: str = "") -> str:
    return FLYER.replace("JOINT_TYPE", kind).replace("ORIGIN", origin).replace("AXIS", axis)


def _frozen(kind: str, values: dict, origin: str = "") -> str:
    """The flyer with its base joint fixed where the values put it (an <origin> yourdfpy reads)."""
    x, y, z = (values.get(f"base/{c}", 0.0) for c in "xyz")
    if kind == "planar":
        rpy = (0.0, 0.0, values["base/theta"])
    else:
        rpy = tuple(values.get(f"base/{c}", 0.0) for c in ("roll", "pitch", "yaw"))
    assert not origin
    return _flyer("fixed", f'<origin xyz="{x!r} {y!r} {z!r}" rpy="{rpy[0]!r} {rpy[1]!r} {rpy[2]!r}"/>')


@pytest.mark.parametrize("kind, columns", [
    ("floating", ("base/x", "base/y", "base/z", "base/yaw", "base/pitch", "base/roll")),
    ("planar", ("base/x", "base/y", "base/theta")),
    ("spherical", ("base/yaw", "base/pitch", "base/roll")),
])
def test_compound_joints_against_yourdfpy_with_the_joint_fixed_at_the_pose(tmp_path, kind, columns):
    """Each sampled pose of the compound joint agrees with yourdfpy's frames of the same robot
    whose joint is fixed at an <origin xyz rpy> of those values (yourdfpy holds floating and
    planar joints still, so it cannot move them itself)."""
    path = tmp_path / "flyer.urdf"
    path.write_text(_flyer(kind, axis='<axis xyz="0 0 1"/>' if kind == "planar" else ""))
    robot = urdf.load(path)
    assert robot.compound == {"base": columns}
    assert set(robot.variables) == {*columns, "hip"}
    assert robot.notes == ()
    # the default pose is the identity: every link where the joint fixed at rest puts it
    # (yourdfpy reads a spherical joint but cannot pose it: the fixed twin stands in)
    rest = tmp_path / "rest.urdf"
    rest.write_text(_frozen(kind, {c: 0.0 for c in columns}))
    np.testing.assert_allclose(_ours(robot, robot.default_pose()),
                               _yourdfpy_frames(rest, robot, np.zeros(1)), atol=1e-12)
    rng = np.random.default_rng(11)
    for _ in range(6):
        values = {c: float(rng.uniform(-2, 2)) for c in columns}
        q = urdf.pose_from(robot, {**values, "hip": 0.7}, "test")
        frozen = tmp_path / "frozen.urdf"
        frozen.write_text(_frozen(kind, values))
        np.testing.assert_allclose(_ours(robot, q), _yourdfpy_frames(frozen, robot, [0.7]), atol=1e-12)


def test_planar_joint_moves_in_the_plane_normal_to_its_axis(tmp_path):
    path = tmp_path / "flyer.urdf"
    path.write_text(_flyer("planar", axis='<axis xyz="1 0 0"/>'))
    robot = urdf.load(path)
    body = robot.links.index("body")
    q = urdf.pose_from(robot, {"base/x": 0.3, "base/y": -0.4, "base/theta": 0.9}, "test")
    T = robot.fk(q[None])[0, body]
    assert abs(T[0, 3]) < 1e-15 and np.hypot(T[1, 3], T[2, 3]) == pytest.approx(0.5)
    np.testing.assert_allclose(T[:3, :3] @ [1, 0, 0], [1, 0, 0], atol=1e-15)  # turned about x
    assert T[1, 1] == pytest.approx(np.cos(0.9))
    without = tmp_path / "no_axis.urdf"
    without.write_text(_flyer("planar"))
    assert any("moves in its frame's x-y plane" in n for n in urdf.load(without).notes)


def test_compound_joint_addressed_by_its_columns(tmp_path):
    path = tmp_path / "flyer.urdf"
    path.write_text(_flyer("floating", origin='<origin xyz="0 0 1"/>'))
    robot = urdf.load(path)
    with pytest.raises(InputError, match=r"'base' has 6 degrees of freedom: set base/x, base/y"):
        urdf.parse_joints(robot, "base=1", None)
    q = urdf.parse_joints(robot, "base/z=2.5, base/yaw=0.5", None)
    frames = robot.fk(q[None])[0]
    np.testing.assert_allclose(frames[robot.links.index("body"), :3, 3], [0, 0, 3.5], atol=1e-15)
    # the floating base's links are adjacent to nothing but their own chain: body-leg, body-head
    assert {(a, b) for a, b, _ in urdf.adjacent_links(robot)} == {("body", "leg"), ("body", "head")}
    # sampled poses hold an unlimited translation at 0 and turn the rotations once
    assert robot.lower[robot.variables.index("base/x")] == robot.upper[robot.variables.index("base/x")] == 0


def test_floating_base_collisions_agree_with_fcl(tmp_path):
    """The leg against the head over random hip angles and base poses: gjk's scan against
    python-fcl on the same boxes and sphere (the base pose must not change the answer)."""
    fcl = pytest.importorskip("fcl")
    from gjkcli.engine.results import Status
    from gjkcli.pipeline import run

    path = tmp_path / "flyer.urdf"
    path.write_text(_flyer("floating").replace('xyz="-0.2 0 0.12"', 'xyz="-0.2 0 -0.3"'))
    robot = urdf.load(path)
    rng = np.random.default_rng(5)
    hits = 0
    for _ in range(24):
        values = {c: float(rng.uniform(-3, 3)) for c in robot.compound["base"]}
        values["hip"] = float(rng.uniform(0, 1.5))  # the head is near 0.86
        q = urdf.pose_from(robot, values, "test")
        joints = ",".join(f"{k}={v!r}" for k, v in values.items())
        found = run.scan([path], run.Options(jobs=1, robot=urdf.RobotOptions(joints=joints)))
        ours = {frozenset((p.a, p.b)) for p in found.pairs
                if p.status is Status.COLLISION and not p.allowed}
        frames = dict(zip(robot.links, robot.fk(q[None])[0]))
        objs = {}
        for c in robot.collisions:
            T = frames[c.link] @ c.origin
            shape = (fcl.Box(*c.params["size"]) if c.kind == "box" else fcl.Sphere(c.params["radius"]))
            objs[c.name] = fcl.CollisionObject(shape, fcl.Transform(T[:3, :3], T[:3, 3]))
        theirs = {frozenset((a, b)) for a, b in itertools.combinations(objs, 2)
                  if fcl.collide(objs[a], objs[b], fcl.CollisionRequest(), fcl.CollisionResult())}
        adjacent = {frozenset((a, b)) for a, b, _ in urdf.adjacent_links(robot)}
        assert ours == theirs - adjacent, (values, ours, theirs)
        hits += frozenset(("leg", "head")) in theirs
    assert 3 <= hits <= 21  # the sample sees the leg both meet and miss the head
