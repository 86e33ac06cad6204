"""What the readers of the scene's sources know of which pairs may meet, handed to the run as
data: allowed pairs with their reasons, and notes. The run applies them as it applies a
manifest's `[[allow]]` tables, without knowing the format they came from.

- A URDF robot: its adjacent links and its SRDF's disabled pairs (`gjkcli.scene.urdf`).
- An IFC element that fills an opening in its host comes as data on the object itself
  (`gjkcli.mesh.ifc.Element.allowed_with`), as do the fields it adds to the object's record.
- A drawing's sheet is an object of its own, the frame (`gjkcli.mesh.flat`).
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

__all__ = ["with_reader_rules"]


def with_reader_rules(manifest, sources, robot_options, had_problems: bool):
    """(the manifest with the sources' allowed pairs added, notes, unchecked): each robot's
    adjacent links and SRDF pairs, a note of its pose and of what reading it assumed, and the
    geometry it could not check (a link whose mesh file is not there: `errors.Unchecked`, which
    fails the run unless the robot options skip missing meshes). A manifest is made to hold the
    pairs when none was given.

    InputError when robot options are given and no input is a robot (unless an input failed to
    load: it may have been the robot)."""
    robots = [s for s in sources if s.robot is not None]
    if not robots:
        given = robot_options is not None and (robot_options.srdf or robot_options.joints
                                               or robot_options.packages)
        if given and not had_problems:
            from gjkcli.errors import InputError

            raise InputError("--srdf/--joints/--package", "apply to URDF inputs, and no input is a "
                                                          "URDF; give robot.urdf")
        return manifest, [], []
    from gjkcli.scene import manifest as manifests  # a robot's readers, only for a robot
    from gjkcli.scene import urdf
    allows, notes, unchecked = [], [], []
    for s in robots:
        allows.extend(urdf.allowed_pairs(s.robot, s.srdf, s.prefix))
        notes.append(f"{s.shown}: pose {urdf.pose_text(s.robot, s.pose)}")
        notes.extend(f"{s.shown}: {note}" for note in s.robot.notes)
        missing, fails = urdf.missing_notes(s.robot, s.shown, robot_options)
        notes.extend(str(m) for m in missing)
        unchecked.extend(missing if fails else ())
    if manifest is None:
        return manifests.Manifest(path=Path(robots[0].shown), allows=tuple(allows)), notes, unchecked
    return dataclasses.replace(manifest, allows=manifest.allows + tuple(allows)), notes, unchecked
