"""Trajectories as ROS writes them: a JointTrajectory as JSON or YAML, MoveIt's RobotTrajectory and
DisplayTrajectory as `ros2 topic echo` prints them (ROS 1's {secs, nsecs} too), a floating base's
multi-DOF points; the poses read against yourdfpy's forward kinematics, the motion's contact
against python-fcl, and each finding's time_from_start."""
from __future__ import annotations

import json

import numpy as np
import pytest
import yaml

from gjkcli.errors import InputError
from gjkcli.scene import trajectory, urdf

ARM = [f"panda_joint{k}" for k in range(1, 8)]
# the grazing motion of tests/pipeline/test_robot_motion.py: the hand sweeps past link5 in the
# first segment (t about 0.48), then a small step
WAYPOINTS = [
    {"panda_joint6": 0.7, "panda_joint7": -1.6},
    {"panda_joint1": 0.3, "panda_joint2": -0.2, "panda_joint6": 0.7, "panda_joint7": 0.2},
    {"panda_joint1": 0.3, "panda_joint2": -0.2, "panda_joint6": 0.7, "panda_joint7": 0.25},
]
TIMES = [0.0, 2.0, 2.5]


@pytest.fixture(scope="module")
def panda(panda_package):
    path = panda_package / "urdf" / "panda.urdf"
    return path, panda_package / "urdf" / "panda.srdf", urdf.load(path)


def _joint_trajectory(ros1: bool = False) -> dict:
    def stamp(t):
        sec = int(t)
        nano = int(round((t - sec) * 1e9))
        return {"secs": sec, "nsecs": nano} if ros1 else {"sec": sec, "nanosec": nano}

    points = [{"positions": [w.get(name, 0.0) for name in ARM], "velocities": [], "accelerations": [],
               "effort": [], "time_from_start": stamp(t)} for w, t in zip(WAYPOINTS, TIMES)]
    return {"header": {"stamp": stamp(0), "frame_id": "panda_link0"}, "joint_names": list(ARM),
            "points": points}


def _robot_trajectory() -> dict:
    empty = {"header": {"stamp": {"sec": 0, "nanosec": 0}, "frame_id": ""}, "joint_names": [],
             "points": []}
    return {"joint_trajectory": _joint_trajectory(), "multi_dof_joint_trajectory": empty}


def _echo(message: dict) -> str:
    """A message as `ros2 topic echo` prints it: block YAML, then a line of ---."""
    return yaml.safe_dump(message, sort_keys=False, default_flow_style=False) + "---\n"


def _expected(robot) -> np.ndarray:
    return np.array([urdf.pose_from(robot, w, "test") for w in WAYPOINTS])


@pytest.mark.parametrize("name, text", [
    ("joint.json", lambda: json.dumps(_joint_trajectory(), indent=2)),
    ("joint.yaml", lambda: yaml.safe_dump(_joint_trajectory())),
    ("ros1.yaml", lambda: yaml.safe_dump(_joint_trajectory(ros1=True))),
    ("robot.yaml", lambda: _echo(_robot_trajectory())),
    ("display.yaml", lambda: _echo({"model_id": "panda", "trajectory": [_robot_trajectory()],
                                    "trajectory_start": {"joint_state": {"name": [], "position": []}}})),
    ("plan.json", lambda: json.dumps({"trajectory": _robot_trajectory(), "planning_time": 0.1})),
])
def test_every_layout_reads_the_same_poses_and_times(panda, tmp_path, name, text):
    """Each layout gives the waypoints and times it was written from, and the link frames at
    those poses are yourdfpy's."""
    yourdfpy = pytest.importorskip("yourdfpy")
    path, _, robot = panda
    f = tmp_path / name
    f.write_text(text())
    read = trajectory.read_poses(robot, f)
    np.testing.assert_array_equal(read.poses, _expected(robot))
    np.testing.assert_allclose(read.times, TIMES, atol=1e-9)
    other = yourdfpy.URDF.load(str(path), load_meshes=False, load_collision_meshes=False,
                               build_scene_graph=True)
    frames = robot.fk(read.poses)
    for n, q in enumerate(read.poses):
        other.update_cfg(dict(zip(robot.variables, q)))
        for k, link in enumerate(robot.links):
            T = other.get_transform(frame_to=link, frame_from=other.base_link)
            np.testing.assert_allclose(frames[n, k], T, atol=1e-9)


def test_the_sample_plan_is_the_sample_motion(panda):
    """samples/panda_plan.yaml (the README's planner trajectory) holds the waypoints of
    samples/panda_motion.csv, at 0, 2 and 3.5 s."""
    from pathlib import Path

    samples = Path(__file__).resolve().parents[2] / "samples"
    _, _, robot = panda
    plan = trajectory.read_poses(robot, samples / "panda_plan.yaml")
    np.testing.assert_array_equal(plan.poses, trajectory.read_poses(robot, samples / "panda_motion.csv").poses)
    assert plan.times.tolist() == [0.0, 2.0, 3.5]


def test_a_csv_still_reads_without_times(panda, tmp_path):
    _, _, robot = panda
    table = tmp_path / "motion.csv"
    table.write_text("panda_joint1,panda_joint2,panda_joint6,panda_joint7\n"
                     "0,0,0.7,-1.6\n0.3,-0.2,0.7,0.2\n0.3,-0.2,0.7,0.25\n")
    read = trajectory.read_poses(robot, table)
    assert read.times is None
    np.testing.assert_array_equal(read.poses, _expected(robot))


@pytest.mark.parametrize("rows, message", [
    ("0,0,0.7,-1.6\n0.3,x,0.7,0.2\n0.3,-0.2,0.7,0.25\n", r"motion.csv:3: a value is not a number: 0.3,x,0.7,0.2"),
    ("0,0,0.7,-1.6\n0.3,-0.2,0.7,0.2\n0.3,-0.2\n", r"motion.csv:4: 2 values for 4 joints in the header"),
    ("0,0,0.7,-1.6\n0.3,-0.2,0.7,0.2\n0.3,-0.2,0.7,nan\n", r"motion.csv:4: .*panda_joint7"),
])
def test_a_bad_csv_row_is_named_by_its_line(panda, tmp_path, rows, message):
    """The cells are read all at once; the line of the first bad row is still the one named."""
    _, _, robot = panda
    table = tmp_path / "motion.csv"
    table.write_text("panda_joint1,panda_joint2,panda_joint6,panda_joint7\n" + rows)
    with pytest.raises(InputError, match=message):
        trajectory.read_poses(robot, table)


def test_a_plain_csv_reads_as_the_csv_reader_reads_it(panda, tmp_path):
    """A table without quotes is read with a few calls over its text (`_plain_table`), any
    other with the csv reader: blank rows, spaces around cells and a blank line at the end give
    the same poses both ways, and the same line is named for a value outside the limits."""
    _, _, robot = panda
    rows = " 0 , 0,0.7 ,-1.6\n\n0.3,-0.2,0.7,0.2\n , ,,\n0.3,-0.2e0,0.7,0.25\n\n"
    plain, quoted = tmp_path / "plain.csv", tmp_path / "quoted.csv"
    plain.write_text("panda_joint1, panda_joint2,panda_joint6,panda_joint7\n" + rows)
    quoted.write_text('"panda_joint1", panda_joint2,panda_joint6,panda_joint7\n' + rows)
    assert urdf._plain_table(quoted.read_text()) is None and urdf._plain_table(plain.read_text()) is not None
    np.testing.assert_array_equal(trajectory.read_poses(robot, plain).poses, _expected(robot))
    np.testing.assert_array_equal(trajectory.read_poses(robot, quoted).poses, _expected(robot))
    for table in (plain, quoted):
        table.write_text(table.read_text().replace("0.3,-0.2e0", "0.3,-9"))
        with pytest.raises(InputError, match=rf"{table.name}:6: .*panda_joint2"):
            trajectory.read_poses(robot, table)


def _error(read):
    """The message of the InputError `read()` raises, or None."""
    try:
        read()
    except InputError as e:
        return str(e)
    return None


def _cell(k, text):
    return lambda cells: cells[:k] + [text] + cells[k + 1:]


@pytest.mark.parametrize("bad", [None, _cell(1, "x"), lambda cells: cells[:2], lambda cells: cells + ["1"],
                                 _cell(6, "nan"), _cell(1, "-9"), _cell(0, "1_0e-1"), _cell(2, " 0.3 ")])
def test_a_tables_rows_read_when_asked_are_its_rows(panda, tmp_path, bad):
    """`PoseRows` (the rows a run with the cache reads only where it has not seen them): any
    rows asked give `read_pose_table`'s poses, and asking for a bad row raises its error, word
    for word, naming its line (a row of the wrong length before any value, as the whole
    table's reading does)."""
    _, _, robot = panda
    rng = np.random.default_rng(46)
    Q = rng.uniform(robot.lower, robot.upper, size=(40, robot.dof))
    lines = [",".join(repr(v) for v in q) for q in Q.tolist()]
    if bad is not None:
        lines[17] = ",".join(bad(lines[17].split(",")))
        lines[30] = "0.3,x"  # a later row of the wrong length is named before an earlier non-number
    table = tmp_path / "poses.csv"
    table.write_text(",".join(robot.variables) + "\n" + "\n".join(lines) + "\n")
    rows = trajectory.read_poses(robot, table, rows=True).poses
    assert isinstance(rows, urdf.PoseRows) and len(rows) == 40
    whole = _error(lambda: urdf.read_pose_table(robot, table))
    assert _error(lambda: rows.values()) == whole
    if bad is None:
        np.testing.assert_array_equal(rows.values(np.arange(40)), Q)
        np.testing.assert_array_equal(rows.values([5, 2, 39]), Q[[5, 2, 39]])
        assert rows.values([]).shape == (0, robot.dof)
        return
    short = lines[17].count(",") != robot.dof - 1
    assert whole.startswith(f"{table}:19: " if short else f"{table}:32: 2 values for {robot.dof} joints")
    assert _error(lambda: rows.values(range(40))) == whole
    # without row 30: the whole table's error is row 17's (line 19), or there is none
    lines[30] = ",".join(repr(v) for v in Q[30].tolist())
    alone = tmp_path / "alone.csv"
    alone.write_text(table.read_text().replace("\n0.3,x\n", "\n" + lines[30] + "\n"))
    expected = _error(lambda: urdf.read_pose_table(robot, alone))
    assert expected is None or f"{alone}:19: " in expected
    assert _error(lambda: rows.values([3, 17, 20])) == (None if expected is None else expected.replace(str(alone), str(table)))
    if expected is None:
        np.testing.assert_array_equal(rows.values([3, 17]), urdf.read_pose_table(robot, alone)[[3, 17]])
    np.testing.assert_array_equal(rows.values([0, 1]), Q[:2])  # the good rows still read


def test_random_tables_read_by_rows_as_whole(panda, tmp_path):
    """Seeded random tables of good rows, rows with spaces, blank lines of every kind, short
    and long rows, words and trailing commas: wherever `pose_rows` reads a table by its rows,
    every row read gives `read_pose_table`'s poses, or its error word for word."""
    _, _, robot = panda
    rng = np.random.default_rng(461)
    header = "panda_joint1, panda_joint2,panda_joint3"

    def good():
        return ",".join(f"{v:.6g}" for v in rng.uniform(-1.5, 1.5, 3))

    kinds = [good, good, good, lambda: " " + good().replace(",", " , ") + " ", lambda: "", lambda: " , ,",
             lambda: "\xa0", lambda: good()[:3], lambda: good() + ",", lambda: good() + ",0.1",
             lambda: good().replace(",", ",x", 1), lambda: good() + "\x0c" + good(), lambda: "1_0e-1,0,0"]
    by_rows = 0
    for n in range(150):
        lines = [kinds[k]() for k in rng.choice(len(kinds), size=int(rng.integers(1, 8)),
                                                 p=[.25, .25, .2, .1, .03, .02, .02, .02, .02, .02, .02, .02, .03])]
        table = tmp_path / f"t{n}.csv"
        table.write_text(header + "\n" + "\n".join(lines) + ("\n" if n % 2 else ""))
        whole = _error(lambda: urdf.read_pose_table(robot, table))
        try:
            rows = urdf.pose_rows(robot, table)
        except InputError as e:  # the header's error, as the whole table's reading says it
            assert str(e) == whole
            continue
        if not isinstance(rows, urdf.PoseRows):
            continue
        by_rows += 1
        assert _error(lambda: rows.values(range(len(rows)))) == whole, table.read_text()
        if whole is None:
            np.testing.assert_array_equal(rows.values(range(len(rows))), urdf.read_pose_table(robot, table))
    assert by_rows > 50


@pytest.mark.parametrize("text", ['"panda_joint1",panda_joint2\n0.1,0.2\n', "panda_joint1,panda_joint2\n0.1,0.2\n\n0.3,0.1\n",
                                  "panda_joint1,panda_joint2\n0.1,0.2\n , ,\n0.3,0.1\n",
                                  "panda_joint1,panda_joint2\n0.1,0.2\n\xa0\n0.3,0.1\n",
                                  "panda_joint1,panda_joint2\n0.1,0.2\x0c0.3,0.1\n",
                                  "\npanda_joint1,panda_joint2\n0.1,0.2\n"])
def test_a_table_whose_rows_are_not_one_a_line_is_read_whole(panda, tmp_path, text):
    """Quotes, a blank line between rows, a line end other than a newline (a form feed), a blank
    first line: the rows are not the lines after the header, so the table is read whole."""
    _, _, robot = panda
    table = tmp_path / "poses.csv"
    table.write_bytes(text.encode())
    got = urdf.pose_rows(robot, table)
    assert isinstance(got, np.ndarray)
    np.testing.assert_array_equal(got, urdf.read_pose_table(robot, table))


@pytest.mark.parametrize("text", [b"panda_joint1,panda_joint2\r\n0.1,0.2\r\n0.3,0.1\r\n\r\n , \xc2\xa0\n",
                                  b"panda_joint1,panda_joint2\r0.1,0.2\r0.3,0.1\r"])
def test_a_tables_rows_end_as_windows_or_old_macs_write_them_or_with_blank_lines(panda, tmp_path, text):
    """The text is read with universal newlines; blank lines at the end are not rows."""
    _, _, robot = panda
    table = tmp_path / "poses.csv"
    table.write_bytes(text)
    rows = urdf.pose_rows(robot, table)
    assert isinstance(rows, urdf.PoseRows) and rows.lines == ["0.1,0.2", "0.3,0.1"]
    np.testing.assert_array_equal(rows.values([0, 1]), urdf.read_pose_table(robot, table))


@pytest.mark.parametrize("change, message", [
    (lambda m: m["points"][1].update(positions=[0.0] * 3), "point 1: positions must be 7 numbers"),
    (lambda m: m["points"][2].update(time_from_start={"sec": 1, "nanosec": 0}),
     "point 2: time_from_start 1 s is before point 1's 2 s"),
    (lambda m: m["joint_names"].__setitem__(0, "elbow"), "bad.yaml: point 0: joint 'elbow' is not a joint"),
    (lambda m: m["points"][0]["positions"].__setitem__(3, 1.0),
     "bad.yaml: point 0: joint panda_joint4 = 1 is outside its limits"),
    (lambda m: m["points"][1].pop("time_from_start"), "point 1 has no time_from_start, and others do"),
    (lambda m: m["points"][0].update(time_from_start="soon"), "neither seconds nor"),
])
def test_bad_trajectories_name_the_point(panda, tmp_path, change, message):
    _, _, robot = panda
    msg = _joint_trajectory()
    change(msg)
    f = tmp_path / "bad.yaml"
    f.write_text(yaml.safe_dump(msg))
    with pytest.raises(InputError, match=message):
        trajectory.read_poses(robot, f)


@pytest.mark.parametrize("text, message", [
    ("a: [1, 2\n", "bad.yaml:2: is not YAML"),
    ("header: {frame_id: x}\n", "holds no trajectory"),
    ("", "holds no trajectory"),
])
def test_not_a_trajectory(panda, tmp_path, text, message):
    _, _, robot = panda
    f = tmp_path / "bad.yaml"
    f.write_text(text)
    with pytest.raises(InputError, match=message):
        trajectory.read_poses(robot, f)


def test_motion_findings_carry_time_from_start(panda, tmp_path):
    """The grazing motion as a RobotTrajectory: the contact on segment 0 at t (python-fcl's first
    contact, as tests/pipeline/test_robot_motion.py checks it) is at 2 t seconds; each
    waypoint's findings at its own time."""
    from click.testing import CliRunner

    from gjkcli.cli import main

    path, srdf, _ = panda
    f = tmp_path / "planned.yaml"
    f.write_text(_echo(_robot_trajectory()))
    r = CliRunner().invoke(main, ["scan", str(path), "--srdf", str(srdf), "--trajectory", str(f),
                                  "--format", "json", "--show-allowed"], catch_exceptions=False)
    assert r.exit_code == 1, r.stderr
    doc = json.loads(r.stdout)
    failing = [p for p in doc["pairs"] if p["fails"]]
    assert [(p["a"], p["b"], p["segment"]) for p in failing] == [("panda_link5", "panda_hand", 0)]
    assert failing[0]["time_from_start"] == pytest.approx(2.0 * failing[0]["t"], abs=1e-12)
    assert 0.94 < failing[0]["time_from_start"] < 0.98
    at = {p["waypoint"]: p["time_from_start"] for p in doc["pairs"] if "waypoint" in p}
    assert at == {0: 0.0, 1: 2.0, 2: 2.5}
    r = CliRunner(env={"COLUMNS": "240"}).invoke(main, ["scan", str(path), "--srdf", str(srdf),
                                                       "--trajectory", str(f)], catch_exceptions=False)
    seconds = f"{failing[0]['time_from_start']:.3f} s"
    assert f"motion 0->1 at t={failing[0]['t']:.4f} ({seconds})" in r.stdout, r.stdout


def test_a_clearance_on_a_motion_is_said_to_hold_between_waypoints(panda, tmp_path):
    """--clearance with --trajectory: the waypoints and the motions between them are held to it,
    and the run's note says so. Without a clearance the note is as it was."""
    from click.testing import CliRunner

    from gjkcli.cli import main

    path, srdf, _ = panda
    f = tmp_path / "planned.yaml"
    f.write_text(_echo(_robot_trajectory()))
    notes = {}
    for extra in ((), ("--clearance", "0.007")):
        r = CliRunner().invoke(main, ["scan", str(path), "--srdf", str(srdf), "--trajectory", str(f),
                                      "--format", "json", *extra], catch_exceptions=False)
        notes[extra] = [n for n in json.loads(r.stdout)["notes"] if "waypoints from" in n]
    assert notes[()] == [f"3 waypoints from {f}; the motions between them checked continuously"]
    assert notes[("--clearance", "0.007")] == [f"3 waypoints from {f}; the motions between them checked "
                                               f"continuously for contact and the clearance"]


FLYER = """<?xml version="1.0"?>
<robot name="flyer">
<link name="world"/>
<link name="body"><collision><geometry><box size="0.4 0.2 0.1"/></geometry></collision></link>
<link name="leg"><collision><origin xyz="0 0 -0.25"/><geometry><box size="0.05 0.05 0.5"/></geometry>
  </collision></link>
<joint name="base" type="floating"><parent link="world"/><child link="body"/></joint>
<joint name="hip" type="revolute"><parent link="body"/><child link="leg"/><origin xyz="0.15 0 0"/>
  <axis xyz="0 1 0"/><limit lower="-2" upper="2"/></joint>
</robot>
"""


def test_multi_dof_points_move_a_floating_base(tmp_path):
    """MoveIt's multi_dof_joint_trajectory: a translation and a quaternion per point, read as the
    floating joint's columns; the body's frame is the transform."""
    from scipy.spatial.transform import Rotation

    path = tmp_path / "flyer.urdf"
    path.write_text(FLYER)
    robot = urdf.load(path)
    turns = Rotation.from_rotvec([[0, 0, 0], [0.3, -0.2, 1.1], [-1.0, 0.4, 0.2]])
    shifts = [[0, 0, 0], [1.0, -2.0, 0.5], [0.2, 0.1, -3.0]]
    msg = {"joint_trajectory": {"joint_names": ["hip"], "points": [
               {"positions": [h], "time_from_start": {"sec": k, "nanosec": 0}}
               for k, h in enumerate([0.0, 0.5, -0.5])]},
           "multi_dof_joint_trajectory": {"joint_names": ["base"], "points": [
               {"transforms": [{"translation": dict(zip("xyz", s)),
                                "rotation": dict(zip("xyzw", r.as_quat().tolist()))}],
                "time_from_start": {"sec": k, "nanosec": 0}}
               for k, (s, r) in enumerate(zip(shifts, turns))]}}
    f = tmp_path / "fly.yaml"
    f.write_text(_echo(msg))
    read = trajectory.read_poses(robot, f)
    frames = robot.fk(read.poses)
    body = robot.links.index("body")
    for k in range(3):
        np.testing.assert_allclose(frames[k, body, :3, 3], shifts[k], atol=1e-12)
        np.testing.assert_allclose(frames[k, body, :3, :3], turns[k].as_matrix(), atol=1e-12)
    assert read.poses[:, robot.variables.index("hip")].tolist() == [0.0, 0.5, -0.5]
    msg["multi_dof_joint_trajectory"]["joint_names"] = ["hip"]
    f.write_text(_echo(msg))
    with pytest.raises(InputError, match="'hip' is not a floating or planar joint"):
        trajectory.read_poses(robot, f)


def test_the_ros2_sample_workspace_and_its_plan(tmp_path, monkeypatch):
    """samples/ros2_ws (the README's ROS 2 example): arm.urdf's meshes are found only through the
    ament index of install/; its plan (a RobotTrajectory as `ros2 topic echo` prints it) swings
    the arm through the post between waypoints 0 and 1. The first contact is at the t where the
    arm's side meets the post's corner (tan(a/2) = 0.03/0.42, turn = -1.2 + 2.4 t = -a), 2 t
    seconds into the plan, and python-fcl on the frames yourdfpy gives agrees on either side."""
    from pathlib import Path

    from click.testing import CliRunner

    from gjkcli.cli import main

    fcl = pytest.importorskip("fcl")
    yourdfpy = pytest.importorskip("yourdfpy")
    import trimesh

    ws = Path(__file__).resolve().parents[2] / "samples" / "ros2_ws"
    args = ["scan", str(ws / "arm.urdf"), "--trajectory", str(ws / "arm_plan.yaml"), "--format", "json"]
    monkeypatch.delenv("ROS_PACKAGE_PATH", raising=False)
    monkeypatch.delenv("AMENT_PREFIX_PATH", raising=False)
    # away from its workspace, the URDF's package is found nowhere: one line saying where it looked
    (tmp_path / "arm.urdf").write_bytes((ws / "arm.urdf").read_bytes())
    alone = ["scan", str(tmp_path / "arm.urdf"), "--trajectory", str(ws / "arm_plan.yaml")]
    r = CliRunner().invoke(main, alone, catch_exceptions=False)
    assert r.exit_code == 2 and "AMENT_PREFIX_PATH is unset" in r.stderr
    # in its workspace, not sourced: found in the workspace's install/, and a note says so
    r = CliRunner().invoke(main, args, catch_exceptions=False)
    assert r.exit_code == 1, r.stderr
    unsourced = json.loads(r.stdout)
    assert any("found in the workspace's install folder" in n for n in unsourced["notes"]), unsourced["notes"]
    monkeypatch.setenv("AMENT_PREFIX_PATH", str(ws / "install"))
    r = CliRunner().invoke(main, args, catch_exceptions=False)
    assert r.exit_code == 1, r.stderr
    assert not any("workspace's install" in n for n in json.loads(r.stdout)["notes"])
    assert unsourced["pairs"] == json.loads(r.stdout)["pairs"]
    (hit,) = [p for p in json.loads(r.stdout)["pairs"] if p["fails"]]
    assert (hit["a"], hit["b"], hit["status"], hit["segment"]) == ("post", "arm", "collision", 0)
    a = 2 * np.arctan(0.03 / 0.42)
    assert hit["t"] == pytest.approx((1.2 - a) / 2.4, abs=1e-5)
    assert hit["time_from_start"] == pytest.approx(2 * hit["t"], abs=1e-12)

    share = ws / "install" / "share" / "gjk_demo_arm" / "meshes" / "collision"
    model = yourdfpy.URDF.load(str(ws / "arm.urdf"), load_meshes=False, build_scene_graph=True)

    def meets(t: float) -> bool:
        model.update_cfg({"turn": -1.2 + 2.4 * t, "lift": 0.0})
        objs = []
        for link, name, offset in (("post", "post", [0, 0, 0.3]), ("arm", "arm", [0.3, 0, 0])):
            mesh = trimesh.load(share / f"{name}.stl")
            m = fcl.BVHModel()
            m.beginModel(len(mesh.vertices), len(mesh.faces))
            m.addSubModel(mesh.vertices, mesh.faces)
            m.endModel()
            T = model.get_transform(frame_to=link, frame_from="base_link")
            objs.append(fcl.CollisionObject(m, fcl.Transform(T[:3, :3], T[:3, :3] @ offset + T[:3, 3])))
        return fcl.collide(*objs, fcl.CollisionRequest(), fcl.CollisionResult()) > 0

    assert not meets(0.0) and not meets(hit["t"] - 1e-3) and meets(hit["t"] + 1e-3) and meets(0.5)
