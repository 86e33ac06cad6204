"""What a user says about the robots of a run (`RobotOptions`), apart from the URDF reader
(`gjkcli.scene.urdf`, which imports NumPy and lxml): the command line makes it before it knows
whether the cache replays the run's whole report."""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["RobotOptions"]


@dataclass(frozen=True)
class RobotOptions:
    """What a user says about the robots of a run.

    packages : ((NAME, DIR), ...) from --package, tried before ROS_PACKAGE_PATH
    srdf : an SRDF whose disabled pairs are allowed and whose group states name poses
    joints : "NAME=VALUE,...", a group state's name, or {NAME: VALUE} (None: every joint at 0
        within its limits)
    poses, trajectory : a CSV of poses (`read_pose_table`) to check each, or as one motion
    skip_missing : a link whose mesh file is not there is checked without it and the run passes
        on its findings (a note names it); by default that link's geometry is not checked and
        the run fails (exit 1), so that CI notices (`missing_notes`)
    """

    packages: tuple = ()
    srdf: str | None = None
    joints: object = None
    poses: str | None = None
    trajectory: str | None = None
    skip_missing: bool = False
