"""Where a URDF's package://NAME meshes are found: a ROS 1 ROS_PACKAGE_PATH crawled as rospack
does, a ROS 2 ament index (AMENT_PREFIX_PATH), a workspace reached through a symbolic link (the
robot found each way, at a planner's poses, against yourdfpy and python-fcl); a mesh missing from
a package that is there; and COLLADA meshes (pycollada), whose absence is one line."""
from __future__ import annotations

import itertools
import os
import subprocess
import sys

import numpy as np
import pytest

from gjkcli.errors import InputError
from gjkcli.scene import urdf

PACKAGE = "moveit_resources_panda_description"


@pytest.fixture
def no_ros(monkeypatch):
    monkeypatch.delenv("ROS_PACKAGE_PATH", raising=False)
    monkeypatch.delenv("AMENT_PREFIX_PATH", raising=False)


def _panda_install(panda_dir, prefix):
    """A ROS 2 install prefix as colcon makes it: PREFIX/share/PACKAGE/{urdf,meshes/collision}
    and the package's marker in PREFIX/share/ament_index/resource_index/packages."""
    share = prefix / "share" / PACKAGE
    (share / "meshes" / "collision").mkdir(parents=True)
    (share / "urdf").mkdir()
    for stl in panda_dir.glob("*.stl"):
        (share / "meshes" / "collision" / stl.name).symlink_to(stl)
    index = prefix / "share" / "ament_index" / "resource_index" / "packages"
    index.mkdir(parents=True)
    (index / PACKAGE).write_text("")
    return share


def test_ament_index_finds_the_package(panda_dir, tmp_path, no_ros, monkeypatch):
    """The URDF alone in a folder elsewhere: only the index says where its meshes are."""
    empty = tmp_path / "empty_prefix"
    (empty / "share").mkdir(parents=True)
    share = _panda_install(panda_dir, tmp_path / "ws" / "install")  # not in a folder above the URDF
    alone = tmp_path / "elsewhere" / "panda.urdf"
    alone.parent.mkdir()
    alone.write_text((panda_dir / "panda.urdf").read_text())
    with pytest.raises(InputError, match="AMENT_PREFIX_PATH is unset"):
        urdf.load(alone)
    monkeypatch.setenv("AMENT_PREFIX_PATH", os.pathsep.join([str(empty), str(tmp_path / "ws" / "install")]))
    robot = urdf.load(alone)
    assert {c.mesh.parent for c in robot.collisions} == {share / "meshes" / "collision"}
    # a prefix whose index does not list the package is passed over, as ament_index_python does
    (tmp_path / "ws" / "install" / "share" / "ament_index" / "resource_index" / "packages" / PACKAGE).unlink()
    with pytest.raises(InputError, match="not in the ament index of AMENT_PREFIX_PATH"):
        urdf.load(alone)


def test_ros_package_path_is_crawled_into_a_workspace(panda_package, tmp_path, no_ros, monkeypatch):
    """ROS_PACKAGE_PATH names a workspace's src/; the package sits in a repository folder below."""
    ws = tmp_path / "ws" / "src"
    (ws / "franka_ros").mkdir(parents=True)
    (ws / "franka_ros" / PACKAGE).symlink_to(panda_package, target_is_directory=True)
    alone = tmp_path / "panda.urdf"
    alone.write_text((panda_package / "urdf" / "panda.urdf").read_text())
    monkeypatch.setenv("ROS_PACKAGE_PATH", str(ws))
    robot = urdf.load(alone)
    assert robot.collisions[0].mesh == ws / "franka_ros" / PACKAGE / "meshes" / "collision" / "link0.stl"


def test_symlinked_folder_resolves_to_the_workspace(panda_package, tmp_path, no_ros):
    """The user reaches the URDF through a link to its folder: walking up the path as typed
    finds no package; walking up the resolved one does."""
    link = tmp_path / "my_robot"
    link.symlink_to(panda_package / "urdf", target_is_directory=True)
    robot = urdf.load(link / "panda.urdf")
    mesh = robot.collisions[0].mesh
    assert mesh.is_file() and mesh.name == "link0.stl" and PACKAGE in mesh.parts


def test_packages_found_agree_with_yourdfpy(panda_dir, tmp_path, no_ros, monkeypatch):
    """The meshes the ament index leads to, posed by our kinematics, are yourdfpy's collision
    scene of the same URDF (its own package:// handler pointed at the same prefix)."""
    yourdfpy = pytest.importorskip("yourdfpy")
    share = _panda_install(panda_dir, tmp_path / "install")
    alone = tmp_path / "panda.urdf"
    alone.write_text((panda_dir / "panda.urdf").read_text())
    monkeypatch.setenv("AMENT_PREFIX_PATH", str(tmp_path / "install"))
    robot = urdf.load(alone)

    def handler(fname: str) -> str:
        return str(share / fname.split(PACKAGE + "/", 1)[1])

    other = yourdfpy.URDF.load(str(alone), load_meshes=False, load_collision_meshes=True,
                               build_collision_scene_graph=True, filename_handler=handler)
    q = np.random.default_rng(3).uniform(robot.lower, robot.upper, robot.dof)
    other.update_cfg(q)
    geoms = urdf.read_geometries(robot, q, shown="panda.urdf")
    theirs = other.collision_scene.dump(concatenate=False)
    for g, c in zip(geoms, robot.collisions):
        found = [m for m in theirs if m.vertices.shape == g.vertices.shape
                 and np.abs(np.sort(m.vertices, axis=0) - np.sort(g.vertices, axis=0)).max() < 1e-6]
        assert found, c.name


def test_collada_mesh_of_a_urdf(tmp_path, no_ros):
    """A .dae link mesh (pycollada, the robots extra) reads as the box it holds."""
    pytest.importorskip("collada")
    import trimesh

    folder = tmp_path / "desc" / "meshes"
    folder.mkdir(parents=True)
    (folder / "box.dae").write_bytes(trimesh.exchange.dae.export_collada(trimesh.creation.box([1, 2, 3])))
    path = tmp_path / "desc" / "robot.urdf"
    path.write_text('<robot name="r"><link name="a"><collision><geometry><mesh '
                    'filename="package://desc/meshes/box.dae"/></geometry></collision></link></robot>')
    (V, *_), = urdf.local_meshes(urdf.load(path))
    np.testing.assert_allclose(np.ptp(V, axis=0), [1, 2, 3], rtol=1e-6)


def test_collada_without_pycollada_is_one_line(tmp_path):
    """Without pycollada the error names the package to install, once, on one line."""
    import trimesh

    (tmp_path / "box.dae").write_bytes(trimesh.exchange.dae.export_collada(trimesh.creation.box()))
    path = tmp_path / "robot.urdf"
    path.write_text('<robot name="r"><link name="a"><collision><geometry><mesh filename="box.dae"/>'
                    '</geometry></collision></link><link name="b"/><joint name="j" type="fixed">'
                    '<parent link="a"/><child link="b"/></joint></robot>')
    script = ("import sys; sys.modules['collada'] = None\n"
              "from gjkcli.cli import main\n"
              f"main(['scan', {str(path)!r}, '-q'])\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                         cwd=tmp_path)
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert 'needs pycollada: pip install "gjk[robots]"' in lines[0]
    assert "missing" not in lines[0] and "Error" not in lines[0]


def test_a_mesh_missing_from_a_found_package_is_left_out(tmp_path, no_ros):
    """The package is found (a folder called NAME above the URDF) but one file is not in it: a
    MissingMesh naming the link and the file looked for; with missing="skip" the element is
    left out, the link's other element read (named after the link alone), and listed."""
    import trimesh

    package = tmp_path / "ws" / "src" / "desc"
    (package / "meshes").mkdir(parents=True)
    (package / "urdf").mkdir()
    trimesh.creation.box([1, 1, 1]).export(package / "meshes" / "box.stl")
    path = package / "urdf" / "robot.urdf"
    path.write_text('<robot name="r"><link name="a">'
                    '<collision><geometry><mesh filename="package://desc/meshes/gone.stl"/></geometry></collision>'
                    '<collision><geometry><mesh filename="package://desc/meshes/box.stl"/></geometry></collision>'
                    '<collision><geometry><sphere radius="1"/></geometry></collision>'
                    '</link></robot>')
    with pytest.raises(urdf.MissingMesh, match=r"robot.urdf:1: link 'a': the mesh package://desc/meshes/"
                                                r"gone.stl is not at .*ws/src/desc/meshes/gone.stl"):
        urdf.load(path)
    robot = urdf.load(path, missing="skip")
    assert [(c.name, c.kind) for c in robot.collisions] == [("a:1", "mesh"), ("a:2", "sphere")]
    (m,) = robot.missing
    assert (m.link, m.filename, m.looked) == ("a", "package://desc/meshes/gone.stl",
                                              str(package / "meshes" / "gone.stl"))
    (u,), fails = urdf.missing_notes(robot, "robot.urdf", None)
    assert fails and u.file == "robot.urdf:1" and "that geometry is not checked" in u.message
    assert urdf.missing_notes(robot, "robot.urdf", urdf.RobotOptions(skip_missing=True))[1] is False
    # a package found nowhere is still the file's error: the user says where it is
    path.write_text(path.read_text().replace("package://desc/meshes/gone", "package://other/gone"))
    with pytest.raises(InputError, match="cannot find package://other/gone.stl") as exc:
        urdf.load(path, missing="skip")
    assert not isinstance(exc.value, urdf.MissingMesh)


@pytest.mark.parametrize("setup, layout", [("ament index", "JointTrajectory JSON"),
                                           ("symlinked workspace", "RobotTrajectory YAML")])
def test_a_workspace_robot_at_a_planners_poses_agrees_with_yourdfpy_and_fcl(
        panda_dir, panda_package, tmp_path, no_ros, monkeypatch, setup, layout):
    """The Panda found through a ROS 2 install prefix (AMENT_PREFIX_PATH) or through a link to its
    workspace folder, at the poses of a trajectory as ROS writes it: the colliding pairs of links
    at each waypoint are python-fcl's on the shared meshes posed by yourdfpy, and each finding
    carries its waypoint's time_from_start."""
    import json

    import yaml
    from click.testing import CliRunner

    from gjkcli.cli import main

    fcl = pytest.importorskip("fcl")
    yourdfpy = pytest.importorskip("yourdfpy")
    import trimesh

    if setup == "ament index":
        _panda_install(panda_dir, tmp_path / "install")
        path = tmp_path / "elsewhere" / "panda.urdf"
        path.parent.mkdir()
        path.write_text((panda_dir / "panda.urdf").read_text())
        monkeypatch.setenv("AMENT_PREFIX_PATH", str(tmp_path / "install"))
    else:
        (tmp_path / "my_robot").symlink_to(panda_package / "urdf", target_is_directory=True)
        path = tmp_path / "my_robot" / "panda.urdf"
    robot = urdf.load(path)
    poses = np.random.default_rng(29).uniform(robot.lower, robot.upper, size=(16, robot.dof))
    message = {"joint_names": list(robot.variables), "points": [
        {"positions": q.tolist(), "time_from_start": {"sec": k // 2, "nanosec": 500_000_000 * (k % 2)}}
        for k, q in enumerate(poses)]}
    plan = tmp_path / ("plan.json" if layout == "JointTrajectory JSON" else "plan.yaml")
    if layout == "JointTrajectory JSON":
        plan.write_text(json.dumps(message))
    else:  # as `ros2 topic echo` prints a moveit_msgs/RobotTrajectory
        plan.write_text(yaml.safe_dump({"joint_trajectory": message, "multi_dof_joint_trajectory": {
            "joint_names": [], "points": []}}, sort_keys=False) + "---\n")
    r = CliRunner().invoke(main, ["scan", str(path), "--poses", str(plan), "--format", "json"],
                           catch_exceptions=False)
    assert r.exit_code in (0, 1), r.stderr
    found = json.loads(r.stdout)["pairs"]
    assert all(p["time_from_start"] == pytest.approx(0.5 * p["waypoint"]) for p in found)
    ours = {(p["waypoint"], frozenset((p["a"], p["b"]))) for p in found
            if p["status"] == "collision" and not p["allowed"]}

    models = {}
    for c in robot.collisions:  # the shared files themselves, not the ones gjk found
        mesh = trimesh.load(panda_dir / c.mesh.name, force="mesh")
        m = fcl.BVHModel()
        m.beginModel(len(mesh.vertices), len(mesh.faces))
        m.addSubModel(mesh.vertices, mesh.faces)
        m.endModel()
        models[c.link] = (m, c.origin)
    other = yourdfpy.URDF.load(str(panda_dir / "panda.urdf"), load_meshes=False, build_scene_graph=True)
    adjacent = {frozenset((a, b)) for a, b, _ in urdf.adjacent_links(robot)}
    theirs = set()
    for k, q in enumerate(poses):
        other.update_cfg(dict(zip(robot.variables, q)))
        objs = {}
        for link, (m, origin) in models.items():
            T = other.get_transform(frame_to=link, frame_from=other.base_link) @ origin
            objs[link] = fcl.CollisionObject(m, fcl.Transform(T[:3, :3], T[:3, 3]))
        for a, b in itertools.combinations(objs, 2):
            if frozenset((a, b)) not in adjacent and fcl.collide(
                    objs[a], objs[b], fcl.CollisionRequest(), fcl.CollisionResult()):
                theirs.add((k, frozenset((a, b))))
    assert ours == theirs
    assert 2 <= len({k for k, _ in theirs}) <= 14  # some poses collide (4 of 16), some do not
