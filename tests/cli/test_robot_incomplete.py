"""URDFs gjk reads without all of their geometry: a link whose mesh file is not there (the rest is
checked, a note names the link and the file, and the run fails with exit 1 unless
--skip-missing-meshes), and a URDF without rigid links (pybullet's soft bodies: a note, exit 0).
The geometry that is checked is judged by python-fcl."""
from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from gjkcli.cli import main

# base (a slab) - j1 about y - arm (a rod) - j2 about y - tip (a ball held off the rod's end);
# the camera, fixed on the base, names a mesh file that is not there
ROBOT = """<?xml version="1.0"?>
<robot name="arm">
<link name="base"><collision><geometry><mesh filename="meshes/base.stl"/></geometry></collision></link>
<link name="camera"><collision><origin xyz="0.3 0 0.2"/><geometry><mesh filename="meshes/camera.stl"/>
  </geometry></collision></link>
<link name="arm"><collision><origin xyz="0 0 0.5"/><geometry><mesh filename="meshes/arm.stl"/></geometry>
  </collision></link>
<link name="tip"><collision><origin xyz="0.3 0 0"/><geometry><sphere radius="0.15"/></geometry></collision>
  </link>
<joint name="mount" type="fixed"><parent link="base"/><child link="camera"/></joint>
<joint name="j1" type="revolute"><parent link="base"/><child link="arm"/><origin xyz="0 0 0.1"/>
  <axis xyz="0 1 0"/><limit lower="-2.5" upper="2.5"/></joint>
<joint name="j2" type="revolute"><parent link="arm"/><child link="tip"/><origin xyz="0 0 1"/>
  <axis xyz="0 1 0"/><limit lower="-2.5" upper="2.5"/></joint>
</robot>
"""
SIZES = {"base": (2.0, 2.0, 0.2), "arm": (0.1, 0.1, 1.0)}


def gjk(*args, code=None):
    result = CliRunner(catch_exceptions=False).invoke(main, [str(a) for a in args])
    if code is not None:
        assert result.exit_code == code, (result.exit_code, result.stdout, result.stderr)
    return result


@pytest.fixture
def robot(tmp_path):
    import trimesh

    (tmp_path / "meshes").mkdir()
    for name, size in SIZES.items():
        trimesh.creation.box(size).export(tmp_path / "meshes" / f"{name}.stl")
    path = tmp_path / "arm.urdf"
    path.write_text(ROBOT)
    return path


def _fcl_base_meets_tip(robot_path, q) -> bool:
    """python-fcl on the base slab and the tip ball, posed by yourdfpy's kinematics."""
    fcl = pytest.importorskip("fcl")
    yourdfpy = pytest.importorskip("yourdfpy")
    model = yourdfpy.URDF.load(str(robot_path), load_meshes=False, build_scene_graph=True)
    model.update_cfg(dict(zip(model.actuated_joint_names, q)))
    base = model.get_transform(frame_to="base", frame_from="base")
    tip = model.get_transform(frame_to="tip", frame_from="base") @ np.array(
        [[1, 0, 0, 0.3], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1.0]])
    a = fcl.CollisionObject(fcl.Box(*SIZES["base"]), fcl.Transform(base[:3, :3], base[:3, 3]))
    b = fcl.CollisionObject(fcl.Sphere(0.15), fcl.Transform(tip[:3, :3], tip[:3, 3]))
    return fcl.collide(a, b, fcl.CollisionRequest(), fcl.CollisionResult()) > 0


def test_a_missing_mesh_fails_the_run_and_the_rest_is_checked(robot, tmp_path):
    """Poses of the robot without its camera: the note names the link and the file, the run
    exits 1, and the base against the tip collides where python-fcl says it does."""
    rng = np.random.default_rng(23)
    poses = rng.uniform([0.8, -2.5], [2.5, 2.5], size=(40, 2))
    table = tmp_path / "poses.csv"
    table.write_text("j1,j2\n" + "".join(f"{a!r},{b!r}\n" for a, b in poses.tolist()))
    r = gjk("scan", robot, "--poses", table, "--format", "json", code=1)
    doc = json.loads(r.stdout)
    missing = [n for n in doc["notes"] if "camera" in n]
    assert missing == [f"{robot}:4: link 'camera': its mesh meshes/camera.stl is not at "
                       f"{tmp_path / 'meshes' / 'camera.stl'}: that geometry is not checked"]
    assert doc["summary"]["exit_code"] == 1
    assert not any("camera" in (p["a"], p["b"]) for p in doc["pairs"])
    ours = {p["waypoint"] for p in doc["pairs"] if {p["a"], p["b"]} == {"base", "tip"}
            and p["status"] == "collision"}
    theirs = {k for k, q in enumerate(poses) if _fcl_base_meets_tip(robot, q)}
    assert ours == theirs
    assert 4 <= len(theirs) <= 36  # the sample sees the tip both meet and miss the base


def test_the_missing_mesh_fails_every_format(robot):
    r = gjk("scan", robot, code=1)  # the default pose: the arm upright, nothing collides
    assert "link 'camera': its mesh meshes/camera.stl is not at" in r.stdout
    assert "1 not checked" in r.stdout and "0 failing" in r.stdout
    junit = gjk("scan", robot, "--format", "junit", code=1).stdout
    assert 'type="not checked"' in junit and 'failures="1"' in junit
    github = gjk("scan", robot, "--format", "github", code=1).stdout
    assert github.startswith(f"::error file={robot},line=4,title=gjk scan%3A not checked::link 'camera'")
    assert gjk("scan", robot, "--trajectory", _two_poses(robot), "-q").exit_code == 1


def _two_poses(robot):
    table = robot.parent / "motion.csv"
    table.write_text("j1,j2\n0,0\n0.3,0.2\n")
    return table


def test_skip_missing_meshes_passes_on_the_rest(robot):
    r = gjk("scan", robot, "--skip-missing-meshes", code=0)
    assert "that geometry is not checked (--skip-missing-meshes)" in r.stdout
    gjk("scan", robot, "--skip-missing-meshes", "--trajectory", _two_poses(robot), "-q", code=0)
    # the rest still fails on its own findings: the tip bent onto the base
    r = gjk("scan", robot, "--skip-missing-meshes", "--joints", "j1=2.0,j2=1.5", "--format", "json", code=1)
    assert {(p["a"], p["b"]) for p in json.loads(r.stdout)["pairs"] if p["fails"]} == {("base", "tip")}
    assert _fcl_base_meets_tip(robot, [2.0, 1.5])


def test_a_missing_mesh_in_a_batch(robot, tmp_path):
    """One bad file does not stop the batch: the robot's missing mesh is its note, the STL that
    cannot be read its error line (exit 2 for it), the good STL is checked against the robot."""
    import trimesh

    trimesh.creation.box([0.2, 0.2, 0.2]).export(tmp_path / "block.stl")
    (tmp_path / "broken.stl").write_bytes(b"solid x\nfacet normal 0 0 nonsense\n")
    r = gjk("scan", robot, tmp_path / "block.stl", tmp_path / "broken.stl", "--format", "json", "--together",
            code=2)
    doc = json.loads(r.stdout)
    assert any("link 'camera'" in n for n in doc["notes"])
    assert [e["file"] for e in doc["errors"]] == [str(tmp_path / "broken.stl")]
    assert {frozenset((p["a"], p["b"])) for p in doc["pairs"] if p["fails"]} == {
        frozenset(("arm.urdf:base", "block.stl"))}  # the block sits in the base's slab


def test_the_collision_matrix_needs_every_mesh(robot):
    """A matrix without the camera would call its pairs Never: an error, one line."""
    r = gjk("collision-matrix", robot, "--samples", "10", code=2)
    assert r.stderr.count("\n") == 1
    assert "link 'camera': the mesh meshes/camera.stl is not at" in r.stderr


SOFT = """<?xml version="1.0"?>
<robot name="cloth">
  <deformable name="cloth">
    <inertial><mass value="0.5"/><inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/></inertial>
    <collision_margin value="0.006"/>
    <visual filename="cloth.obj"/>
  </deformable>
</robot>
"""


def test_a_urdf_without_rigid_links_is_a_note(tmp_path):
    """pybullet's soft body (a <deformable> and no <link>): yourdfpy reads it, gjk has no rigid
    geometry to check in it: a note, exit 0, as for a URDF whose links have no <collision>."""
    path = tmp_path / "cloth.urdf"
    path.write_text(SOFT)
    yourdfpy = pytest.importorskip("yourdfpy")
    assert yourdfpy.URDF.load(str(path), load_meshes=False, build_scene_graph=False).link_map == {}
    r = gjk("scan", path, "--format", "json", code=0)
    notes = json.loads(r.stdout)["notes"]
    assert f"{path}: no rigid links to check: the URDF has no <link>" in notes
    assert any("<deformable name='cloth'> is a soft body" in n for n in notes)
    (tmp_path / "empty.urdf").write_text('<robot name="nothing"/>')
    assert "no rigid links to check" in gjk("scan", tmp_path / "empty.urdf", code=0).stdout
    (tmp_path / "joints.urdf").write_text('<robot name="j"><joint name="a" type="fixed"/></robot>')
    r = gjk("scan", tmp_path / "joints.urdf", code=2)
    assert "has joints and no <link>" in r.stderr


def test_a_deformable_beside_links_is_named(robot, tmp_path):
    path = tmp_path / "with_cloth.urdf"
    path.write_text(ROBOT.replace("</robot>", '<deformable name="flag"><visual filename="f.obj"/>'
                                              '</deformable></robot>'))
    r = gjk("scan", path, "--skip-missing-meshes", code=0)
    assert "<deformable name='flag'> is a soft body" in r.stdout


def test_a_manifest_robot_with_a_missing_mesh(robot, tmp_path):
    """A manifest's [[robot]] is read the same way: its links' names carry the robot's name, the
    camera is a note and the run exits 1."""
    cell = tmp_path / "cell.toml"
    cell.write_text(f'[[robot]]\nurdf = "{robot}"\nname = "left"\ntranslate = [3, 0, 0]\n\n'
                    '[[object]]\nname = "crate"\nbox = [0.2, 0.2, 0.2]\n')
    r = gjk("scan", "--manifest", cell, "--format", "json", code=1)
    doc = json.loads(r.stdout)
    assert any(n.startswith(f"{robot}:4: link 'camera'") for n in doc["notes"])
    assert sorted(o["name"] for o in doc["objects"]) == ["crate", "left:arm", "left:base", "left:tip"]
    assert gjk("scan", "--manifest", cell, "--skip-missing-meshes", "-q").exit_code == 0
