"""A robot's poses or motion from a file, as gjk writes it or as ROS does: `read_poses`.

- **CSV** (`gjkcli.scene.urdf.read_pose_table`): a header of joint names, one pose a row.
- **JointTrajectory** (trajectory_msgs), JSON or YAML: ``joint_names``, ``points[].positions``
  and ``points[].time_from_start`` (``{sec, nanosec}`` as ROS 2 prints it, ``{secs, nsecs}`` as
  ROS 1 does, or seconds).
- **RobotTrajectory** (moveit_msgs) as ``ros2 topic echo`` prints it: ``joint_trajectory`` as
  above and ``multi_dof_joint_trajectory`` (``points[].transforms[]``: a translation and a
  quaternion per floating or planar joint, read as its JOINT/x ... columns); also inside a
  DisplayTrajectory (``trajectory: [...]``, the first) or a planner's response (``trajectory:``).
  A file of several YAML documents (``---`` between them): the first that holds a trajectory.

Joints a trajectory does not name stay at the default pose; every pose is checked against the
limits (`gjkcli.scene.urdf.pose_from`). Times must not decrease.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gjkcli.errors import InputError

__all__ = ["Poses", "read_poses", "TRAJECTORY_SUFFIXES"]

TRAJECTORY_SUFFIXES = (".json", ".yaml", ".yml")


@dataclass(frozen=True)
class Poses:
    """poses : (n, d) one pose a row, the robot's variables as columns (or, read with
        `read_poses(..., rows=True)`, a CSV table's `gjkcli.scene.urdf.PoseRows`)
    times : (n,) each pose's time_from_start in seconds, or None (a CSV)
    notes : what the reader assumed (one line each)
    """

    poses: object
    times: np.ndarray | None = None
    notes: tuple = ()


def read_poses(robot, path, rows: bool = False) -> Poses:
    """The poses of a CSV table, a JointTrajectory or a RobotTrajectory file (by its suffix).
    With `rows`, a CSV table's poses are `urdf.pose_rows`' (rows read into values when asked).

    Raises InputError naming the file (and the point) and what is wrong.
    """
    from gjkcli.scene import urdf

    path = Path(path)
    if path.suffix.lower() not in TRAJECTORY_SUFFIXES:
        return Poses(poses=urdf.pose_rows(robot, path) if rows else urdf.read_pose_table(robot, path))
    documents = _documents(path)
    notes: list[str] = []
    found = [t for t in (_trajectory(doc, notes) for doc in documents) if t is not None]
    if not found:
        raise InputError(path, "holds no trajectory: give a JointTrajectory (joint_names, points) or "
                               "a RobotTrajectory (joint_trajectory), as JSON or YAML")
    if len(found) > 1:
        notes.append(f"{len(found)} trajectories in the file: checked the first")
    joint, multi = found[0]
    return _poses(robot, path, joint, multi, notes)


def _documents(path: Path) -> list:
    """The file's JSON value, or its YAML documents (None ones dropped)."""
    from gjkcli.scene.manifest import read_input_text

    text = read_input_text(path, "trajectory")
    if path.suffix.lower() == ".json":
        import json

        try:
            return [json.loads(text)]
        except ValueError as exc:
            raise InputError(path, f"is not JSON: {exc}") from None
    import yaml

    try:
        return [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        problem = getattr(exc, "problem", None) or "not YAML"
        raise InputError(where, f"is not YAML: {problem}") from None


def _trajectory(doc, notes: list):
    """(JointTrajectory dict or None, MultiDOFJointTrajectory dict or None) of a document, or
    None when it holds neither."""
    if not isinstance(doc, dict):
        return None
    if "joint_names" in doc and "points" in doc:
        if any(isinstance(p, dict) and "transforms" in p for p in doc.get("points") or ()):
            return None, doc
        return doc, None
    if "joint_trajectory" in doc or "multi_dof_joint_trajectory" in doc:
        joint, multi = doc.get("joint_trajectory"), doc.get("multi_dof_joint_trajectory")
        joint = joint if isinstance(joint, dict) and joint.get("points") else None
        multi = multi if isinstance(multi, dict) and multi.get("points") else None
        return (joint, multi) if joint is not None or multi is not None else None
    inner = doc.get("trajectory")  # DisplayTrajectory: a list; a planner's response: one
    if isinstance(inner, list):
        got = [t for t in (_trajectory(d, notes) for d in inner) if t is not None]
        if len(got) > 1:
            notes.append(f"a DisplayTrajectory of {len(got)} trajectories: checked the first")
        return got[0] if got else None
    if isinstance(inner, dict):
        return _trajectory(inner, notes)
    return None


def _seconds(value, where: str) -> float:
    """time_from_start as ROS 2 ({sec, nanosec}), ROS 1 ({secs, nsecs}) or plain seconds."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, dict):
        sec = value.get("sec", value.get("secs", 0))
        nano = value.get("nanosec", value.get("nsecs", 0))
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (sec, nano)):
            return float(sec) + float(nano) * 1e-9
    raise InputError(where, f"time_from_start {value!r} is neither seconds nor {{sec, nanosec}}")


def _points(msg: dict, path: Path, what: str) -> tuple[list, list]:
    names = msg.get("joint_names")
    points = msg.get("points")
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise InputError(path, f"{what}: joint_names must be a list of joint names")
    if not isinstance(points, list) or not points or not all(isinstance(p, dict) for p in points):
        raise InputError(path, f"{what}: points must be a list of points, each with positions")
    return names, points


def _poses(robot, path: Path, joint, multi, notes: list) -> Poses:
    from gjkcli.scene import urdf

    columns: list[dict] = []
    times: list[float | None] = []
    if joint is not None:
        names, points = _points(joint, path, "joint_trajectory")
        for k, p in enumerate(points):
            where = f"{path}: point {k}"
            values = p.get("positions")
            if not isinstance(values, list) or len(values) != len(names):
                raise InputError(path, f"point {k}: positions must be {len(names)} numbers, one per "
                                       f"joint name, got {values!r}")
            try:
                columns.append({n: float(v) for n, v in zip(names, values)})
            except (TypeError, ValueError):
                raise InputError(path, f"point {k}: a position is not a number: {values!r}") from None
            times.append(_seconds(p["time_from_start"], where) if "time_from_start" in p else None)
    if multi is not None:
        names, points = _points(multi, path, "multi_dof_joint_trajectory")
        if columns and len(points) != len(columns):
            raise InputError(path, f"multi_dof_joint_trajectory has {len(points)} points and "
                                   f"joint_trajectory {len(columns)}: they must match")
        for k, p in enumerate(points):
            values = _transforms(robot, names, p.get("transforms"), path, k)
            if k < len(columns):
                columns[k].update(values)
            else:
                columns.append(values)
                times.append(_seconds(p["time_from_start"], f"{path}: point {k}")
                             if "time_from_start" in p else None)
    try:  # the error is the trajectory's, on its point
        poses = np.array([urdf.pose_from(robot, c, f"point {k}") for k, c in enumerate(columns)])
    except InputError as exc:
        raise InputError(path, exc.message) from None
    if all(t is None for t in times):
        notes.append("no time_from_start: findings carry the waypoint only")
        return Poses(poses=poses, notes=tuple(notes))
    if any(t is None for t in times):
        missing = next(k for k, t in enumerate(times) if t is None)
        raise InputError(path, f"point {missing} has no time_from_start, and others do")
    t = np.array(times, dtype=np.float64)
    if not np.all(np.isfinite(t)):
        raise InputError(path, "a time_from_start is not a finite number")
    back = np.flatnonzero(np.diff(t) < 0)
    if len(back):
        k = int(back[0]) + 1
        raise InputError(path, f"point {k}: time_from_start {t[k]:g} s is before point {k - 1}'s "
                               f"{t[k - 1]:g} s")
    return Poses(poses=poses, times=t, notes=tuple(notes))


def _transforms(robot, names: list, transforms, path: Path, k: int) -> dict:
    """{column: value} of one multi-DOF point: each named joint's transform as its columns
    (floating: x, y, z, roll, pitch, yaw; planar: x, y, theta)."""
    from scipy.spatial.transform import Rotation

    if not isinstance(transforms, list) or len(transforms) != len(names):
        raise InputError(path, f"multi-DOF point {k}: transforms must be {len(names)}, one per joint name")
    out = {}
    for name, tf in zip(names, transforms):
        columns = robot.compound.get(name)
        if columns is None:
            raise InputError(path, f"multi-DOF point {k}: {name!r} is not a floating or planar joint "
                                   f"of the URDF")
        try:
            x, y, z = (float(tf["translation"][c]) for c in "xyz")
            quat = [float(tf["rotation"][c]) for c in "xyzw"]
        except (KeyError, TypeError, ValueError):
            raise InputError(path, f"multi-DOF point {k}: the transform of {name!r} needs translation "
                                   f"{{x, y, z}} and rotation {{x, y, z, w}}") from None
        if not np.isfinite(quat).all() or np.linalg.norm(quat) == 0:
            raise InputError(path, f"multi-DOF point {k}: the rotation of {name!r} is not a quaternion")
        # URDF's roll, pitch, yaw are turns about the fixed x, y, z axes: scipy's extrinsic "xyz"
        roll, pitch, yaw = Rotation.from_quat(quat).as_euler("xyz")
        short = [c.rsplit("/", 1)[1] for c in columns]
        given = {"x": x, "y": y, "z": z, "roll": roll, "pitch": pitch, "yaw": yaw, "theta": yaw}
        if "theta" in short:  # planar: the motion stays in the plane
            given.update(x=x, y=y)
        out.update({column: given[s] for column, s in zip(columns, short)})
    return out
