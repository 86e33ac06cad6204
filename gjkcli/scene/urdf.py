"""A URDF robot as a scene: its links' collision geometry at a pose, and the kinematics behind it.

- **Parsing** (`load`): lxml with entities off, no DTD, no network, as the SRDF reader of
  `gjkcli.scene.manifest`. Links, their ``<collision>`` elements (a ``mesh`` with its
  ``scale``, a ``box``, ``cylinder`` or ``sphere``, each at its ``origin``), and joints
  (revolute, continuous, prismatic, fixed; ``limit`` and ``mimic``). xacro is out of scope: a
  xacro file is refused with a line saying how to expand it.
- **Mesh paths**: ``package://NAME/rest`` through ``--package NAME=DIR``, then each folder of
  ROS_PACKAGE_PATH (``DIR/NAME`` or a folder called NAME itself), then the URDF's own folders
  walking up (a folder called NAME, or NAME beside one: a workspace's ``src/``); ``file://`` and
  plain paths are relative to the URDF's folder. A package found nowhere is an error of the file;
  a mesh file that is not where its path leads is a `MissingMesh`: with ``missing="skip"`` that
  element is left out and listed in `Robot.missing`, the rest of the robot is read.
- **Forward kinematics** (`Robot.fk`): link frames for many poses at once, one NumPy step per
  joint over every sample (a pose is a row of the robot's independent joints; mimic joints
  follow theirs).
- **Objects** (`read_geometries`): one `Geometry` per collision element, named by its link
  (``link:k`` for the k-th of a link with several, k from 1, owned by the link: a link is one
  object, its elements never checked against each other, `gjkcli.pipeline.elements`); boxes,
  cylinders and spheres are the engine's exact primitives, meshes their triangles moved to the
  pose.
"""
from __future__ import annotations

import dataclasses
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from gjkcli.errors import InputError, Unchecked
from gjkcli.scene.robotoptions import RobotOptions

__all__ = ["Robot", "Joint", "Collision", "RobotOptions", "MissingMesh", "load", "read_geometries",
           "is_urdf", "group_states", "parse_joints", "allowed_pairs", "object_names", "link_names",
           "missing_notes", "read_pose_table", "pose_rows", "PoseRows", "joints_above"]

JOINT_KINDS = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar", "spherical")
# A joint of several degrees of freedom is read as a chain of one-DOF joints through links without
# geometry, one pose column each, named JOINT/COLUMN. Rotations are URDF's roll, pitch, yaw (about
# the joint frame's fixed x, y, z: the chain turns yaw, then pitch, then roll), as in <origin rpy>.
# planar: x and y in the plane normal to the axis, theta about it (MoveIt's variables).
COMPOUND_COLUMNS = {
    "floating": (("x", "prismatic", (1, 0, 0)), ("y", "prismatic", (0, 1, 0)),
                 ("z", "prismatic", (0, 0, 1)), ("yaw", "continuous", (0, 0, 1)),
                 ("pitch", "continuous", (0, 1, 0)), ("roll", "continuous", (1, 0, 0))),
    "planar": (("x", "prismatic", (1, 0, 0)), ("y", "prismatic", (0, 1, 0)),
               ("theta", "continuous", (0, 0, 1))),
    "spherical": (("yaw", "continuous", (0, 0, 1)), ("pitch", "continuous", (0, 1, 0)),
                  ("roll", "continuous", (1, 0, 0))),
}
XACRO_NS = "http://www.ros.org/wiki/xacro"
# A continuous joint has no limits; sampling and proofs take one turn of it.
CONTINUOUS_RANGE = (-np.pi, np.pi)


@dataclass(frozen=True)
class Collision:
    """One collision element of a link.

    kind : "mesh", "box", "cylinder" or "sphere"
    origin : (4, 4) float64, the element in its link's frame
    params : box {"size": [x, y, z]}; cylinder {"radius", "length"}; sphere {"radius"}
    mesh : the resolved mesh file (kind "mesh"), scale : (3,) float64
    """

    link: str
    name: str
    kind: str
    origin: np.ndarray
    params: dict = field(default_factory=dict)
    mesh: Path | None = None
    scale: np.ndarray = field(default_factory=lambda: np.ones(3))


@dataclass(frozen=True)
class Joint:
    """One joint. origin : (4, 4) parent frame to joint frame; axis : (3,) unit vector.

    lower, upper : the limits (continuous: none, +-inf); mimic : (joint, multiplier, offset)
    """

    name: str
    kind: str
    parent: str
    child: str
    origin: np.ndarray
    axis: np.ndarray
    lower: float
    upper: float
    velocity: float
    mimic: tuple | None
    line: int


@dataclass(frozen=True, eq=False)
class Robot:
    """A parsed URDF.

    links : link names, the root first, every parent before its children
    joints : Joint per child link in `links[1:]` order (so joint k moves links[k + 1])
    variables : names of the independent joints: the columns of a pose
    lower, upper : (d,) their limits (continuous: one turn)
    collisions : Collision per element, in link order
    notes : what the reader assumed where the file was looser than URDF (one line each)
    compound : {joint: its pose columns} of the floating, planar and spherical joints
    virtual : links the reader made between a compound joint's one-DOF steps (no geometry)
    missing : MissingMesh per collision element left out because its mesh file is not there
        (`load` with missing="skip"); the robot is checked without them
    """

    name: str
    path: Path
    links: tuple
    joints: tuple
    variables: tuple
    lower: np.ndarray
    upper: np.ndarray
    collisions: tuple
    notes: tuple = ()
    compound: dict = field(default_factory=dict)
    virtual: frozenset = frozenset()
    missing: tuple = ()

    @property
    def dof(self) -> int:
        return len(self.variables)

    def default_pose(self) -> np.ndarray:
        """(d,): every joint at 0, clipped to its limits."""
        return np.clip(np.zeros(self.dof), self.lower, self.upper)

    def joint_values(self, q: np.ndarray) -> np.ndarray:
        """(n, J) the value of every joint (fixed 0, mimic from its leader) for poses (n, d)."""
        q = np.atleast_2d(np.asarray(q, dtype=np.float64))
        col = {name: k for k, name in enumerate(self.variables)}
        byname = {jj.name: jj for jj in self.joints}
        out = np.zeros((len(q), len(self.joints)))
        for k, j in enumerate(self.joints):
            if j.kind == "fixed":
                continue
            name, mult, offset = j.name, 1.0, 0.0
            seen = set()
            while name is not None and byname[name].mimic is not None and name not in seen:
                seen.add(name)  # a mimic of a mimic
                leader, m, o = byname[name].mimic
                mult, offset = mult * m, mult * o + offset
                name = leader
            # a mimic of a joint that is not there (leader None): 0 plus its offset, as yourdfpy
            out[:, k] = offset if name is None else mult * q[:, col[name]] + offset
        return out

    def fk(self, q: np.ndarray) -> np.ndarray:
        """(n, L, 4, 4) world frames of the links (in `links` order) for poses q (n, d)."""
        values = self.joint_values(q)
        n = len(values)
        frames = np.empty((n, len(self.links), 4, 4))
        frames[:, :1] = np.eye(4)  # the root's frame (a URDF without links has none)
        index = {name: k for k, name in enumerate(self.links)}
        for k, j in enumerate(self.joints):
            motion = _motion(j, values[:, k])
            frames[:, k + 1] = frames[:, index[j.parent]] @ j.origin @ motion
        return frames

    def check_pose(self, q: np.ndarray, where: str) -> None:
        """InputError naming the joint when a pose (d,) is outside the limits or not finite."""
        for k, name in enumerate(self.variables):
            v = float(q[k])
            if not np.isfinite(v):
                raise InputError(self.path, f"{where}: joint {name} = {v} is not a finite number")
            j = next(jj for jj in self.joints if jj.name == name)
            slack = 1e-9 * max(1.0, abs(j.lower), abs(j.upper))
            if j.kind != "continuous" and not (j.lower - slack <= v <= j.upper + slack):
                raise InputError(self.path, f"{where}: joint {name} = {v:g} is outside its limits "
                                            f"[{j.lower:g}, {j.upper:g}]")

    def link_parents(self) -> dict:
        """{child link: (parent link, joint)}."""
        return {j.child: (j.parent, j) for j in self.joints}


def is_urdf(path) -> bool:
    """A file the scan reads as a robot: .urdf; .xacro, .sdf and .mjcf to refuse with a reason;
    an .xml file whose root element is <robot>, <mujoco> or <sdf>."""
    suffix = Path(path).suffix.lower()
    if suffix in (".urdf", ".xacro", ".sdf", ".mjcf"):
        return True
    return suffix == ".xml" and _root_tag(Path(path)) in ("robot", *OTHER_ROBOT_FORMATS)


def _root_tag(path: Path) -> str | None:
    """The root element's name of an XML file (None when it cannot be read as XML)."""
    from lxml import etree

    try:
        for _, element in etree.iterparse(str(path), events=("start",), resolve_entities=False,
                                          load_dtd=False, no_network=True, recover=True):
            return element.tag if isinstance(element.tag, str) else None
    except (OSError, etree.Error):
        return None
    return None


# -- parsing ----------------------------------------------------------------------------------------


_DECLARATION = re.compile(r"<\?xml\s[^>]*?\?>")
_VERSION = re.compile(r"""version\s*=\s*["']([^"']*)["']""")


def _lenient_declaration(text: str, notes: list) -> str:
    """The text with an XML declaration libxml2 refuses blanked out (same length, so lines and
    columns stay): one not at the very start (after a comment or a blank line) or of a version
    other than 1.x; the readers robotics users have (yourdfpy, pybullet, urdfdom) take both."""
    m = _DECLARATION.search(text)
    if m is None:
        return text
    version = _VERSION.search(m.group(0))
    if m.start() > 0:
        line = text.count("\n", 0, m.start()) + 1
        notes.append(f"the XML declaration is not at the start of the file (line {line}): ignored it")
    elif version is not None and not version.group(1).startswith("1."):
        notes.append(f"XML version {version.group(1)!r} is not one XML has: read it as 1.0")
    else:
        return text
    return text[:m.start()] + " " * len(m.group(0)) + text[m.end():]


def _parse_xml(path: Path, what: str, notes: list | None = None):
    """The root element; with `notes`, a declaration libxml2 refuses is passed over with a note."""
    from lxml import etree

    from gjkcli.scene.manifest import read_small_text

    # entities are never expanded, no DTD is loaded, nothing is fetched
    parser = etree.XMLParser(resolve_entities=False, load_dtd=False, no_network=True)
    try:
        text = read_small_text(path, what)
        if notes is not None:
            text = _lenient_declaration(text, notes)
        return etree.fromstring(text.encode("utf-8"), parser)
    except FileNotFoundError:
        raise InputError(path, f"no such {what} file; check the path") from None
    except (OSError, ValueError, UnicodeDecodeError, etree.XMLSyntaxError) as exc:
        # lxml's message as `msg`, without its own place in its input ("(<string>, line 181)")
        why = getattr(exc, "strerror", None) or (exc.msg if isinstance(exc, SyntaxError) else None) or exc
        raise InputError(path, f"cannot read the {what}: {why}") from exc


def load(path, packages=(), missing: str = "error") -> Robot:
    """Parse a URDF and resolve its mesh paths.

    packages : ((NAME, DIR), ...) tried first for package://NAME/...
    missing : "error": a mesh file that is not there is a `MissingMesh` (an InputError);
        "skip": its collision element is left out and listed in the Robot's `missing`

    Raises InputError (naming the file, the line and what is wrong) for xacro, MJCF or SDF, a
    malformed or unsupported element, a cycle or a second root, or a package found nowhere.
    Where the file is looser than URDF and the readers robotics users have take it (yourdfpy,
    pybullet), the Robot's `notes` say what was assumed. A URDF without a <link> (pybullet's
    soft bodies are a <deformable> alone) is a Robot without links and a note: nothing to check.
    """
    path = Path(path)
    xacro_hint = ("xacro is out of scope for gjk: expand it first (`xacro robot.urdf.xacro > "
                  "robot.urdf`) and scan the URDF")
    if path.suffix.lower() == ".xacro":
        raise InputError(path, f"is a xacro file; {xacro_hint}")
    notes: list[str] = []
    root = _parse_xml(path, "URDF", notes)
    if any(isinstance(e.tag, str) and e.tag.startswith("{" + XACRO_NS + "}") for e in root.iter()):
        raise InputError(path, f"holds xacro macros or properties; {xacro_hint}")
    if root.tag in OTHER_ROBOT_FORMATS:
        raise InputError(path, f"is {OTHER_ROBOT_FORMATS[root.tag]}, an unsupported robot format: "
                               f"gjk reads URDF (convert it to URDF, or scan its meshes)")
    if root.tag != "robot":
        raise InputError(path, f"is not a URDF: the root element is <{root.tag}>, not <robot>")

    def fail(element, message):
        raise InputError(f"{path}:{element.sourceline}", message)

    def note(element, message):
        notes.append(f"line {element.sourceline}: {message}")

    for d in root.findall("deformable"):  # pybullet's soft body: no rigid geometry to check
        note(d, f"<deformable name={d.get('name')!r}> is a soft body (pybullet's extension): "
                f"gjk checks the rigid links' <collision> elements and leaves it out")
    links, collisions = [], {}
    for link in root.findall("link"):
        name = link.get("name")
        if not name:
            fail(link, "<link> needs a name")
        if name in collisions:
            fail(link, f"the link name {name!r} is used twice")
        links.append(name)
        collisions[name] = [c for c in link.findall("collision")]
    if not links:
        if root.findall("joint"):
            raise InputError(path, "the URDF has joints and no <link>")
        notes.append("no rigid links to check: the URDF has no <link>")
        return Robot(name=root.get("name") or path.stem, path=path, links=(), joints=(),
                     variables=(), lower=np.zeros(0), upper=np.zeros(0), collisions=(),
                     notes=tuple(dict.fromkeys(notes)))

    joints = []
    children = set()
    compound, virtual = {}, set()
    for e in root.findall("joint"):
        steps = _joint(e, set(links), fail, note)
        if steps[-1].child in children:
            fail(e, f"link {steps[-1].child!r} has two parent joints")
        children.update(j.child for j in steps)
        if len(steps) > 1:
            compound[e.get("name")] = tuple(j.name for j in steps)
            virtual.update(j.child for j in steps[:-1])
            if virtual & set(links):
                fail(e, f"joint {e.get('name')!r}: a link is named like one of its steps "
                        f"({', '.join(sorted(virtual & set(links)))})")
        joints.extend(steps)
    links.extend(sorted(virtual))
    names = [j.name for j in joints]
    byname = {j.name: j for j in joints}
    for k, j in enumerate(joints):
        if names.count(j.name) > 1:
            raise InputError(f"{path}:{j.line}", f"the joint name {j.name!r} is used twice")
        if j.mimic is None:
            continue
        leader = j.mimic[0]
        why = ("which is not a joint of this URDF" if leader not in byname else
               "which is fixed" if byname[leader].kind == "fixed" else None)
        if leader in compound:
            why = f"which is {len(compound[leader])}-DOF"
        if why is not None:  # yourdfpy assumes 0 plus the offset, with a warning
            notes.append(f"line {j.line}: joint {j.name!r} mimics {leader!r}, {why}: held at its "
                         f"offset {j.mimic[2]:g}")
            joints[k] = dataclasses.replace(j, mimic=(None, j.mimic[1], j.mimic[2]))
    roots = [name for name in links if name not in children]
    if len(roots) != 1:
        raise InputError(path, f"a URDF is one tree with one root link; roots here: "
                               f"{', '.join(roots) or 'none (a cycle)'}")
    order, ordered_joints = _tree_order(roots[0], joints)
    if len(order) != len(links):
        missing = sorted(set(links) - set(order))
        raise InputError(path, f"links not reachable from {roots[0]} (a cycle?): {', '.join(missing)}")

    byname = {j.name: j for j in joints}
    for j in joints:  # a mimic chain ends in an independent joint or in a missing one
        seen, name = set(), j.name
        while name is not None and byname[name].mimic is not None:
            if name in seen:
                raise InputError(f"{path}:{j.line}", f"joint {j.name!r}: its mimic joints form a cycle")
            seen.add(name)
            name = byname[name].mimic[0]
    variables = tuple(j.name for j in ordered_joints if j.kind != "fixed" and j.mimic is None)
    ranges = [_sampled_range(byname[v]) for v in variables]
    lower = np.array([lo for lo, _ in ranges])
    upper = np.array([hi for _, hi in ranges])

    if missing not in ("error", "skip"):
        raise ValueError(f"missing must be 'error' or 'skip', got {missing!r}")
    resolver = _Packages(path, dict(packages), notes)
    elements, left_out = [], []
    for name in order:
        found = []
        for c in collisions.get(name, []):
            try:
                found.append(_collision(c, name, name, resolver, fail, note))
            except MissingMesh as exc:
                if missing == "error":
                    raise
                left_out.append(exc)
        # "link:k" counts the elements read (a link left with one is the link itself)
        elements.extend(c if len(found) == 1 else dataclasses.replace(c, name=f"{name}:{k + 1}")
                        for k, c in enumerate(found))
    return Robot(name=root.get("name") or path.stem, path=path, links=tuple(order),
                 joints=tuple(ordered_joints), variables=variables, lower=lower, upper=upper,
                 collisions=tuple(elements), notes=tuple(dict.fromkeys(notes)), compound=compound,
                 virtual=frozenset(virtual), missing=tuple(left_out))


class MissingMesh(InputError):
    """A mesh file a URDF names is not where its path leads (the package, if any, was found).

    link, filename : the link and its <mesh filename=...>; looked : the file gjk looked for;
    line : the <mesh> element's line in the URDF
    """

    def __init__(self, source, message, link: str = "", filename: str = "", looked: str = "",
                 line: int = 0):
        super().__init__(source, message)
        self.link, self.filename, self.looked, self.line = link, filename, looked, line

    def __reduce__(self):
        return (type(self), (self.source, self.message, self.link, self.filename, self.looked,
                             self.line))


def missing_notes(robot: Robot, shown: str, options: RobotOptions | None) -> tuple[list, bool]:
    """(an `Unchecked` per collision element left out because its mesh file is not there,
    whether they fail the run): the URDF as the user named it and the line, the link, the file
    looked for. They fail it unless the user chose `RobotOptions.skip_missing`
    (--skip-missing-meshes); either way each is a note."""
    skip = options is not None and options.skip_missing
    how = " (--skip-missing-meshes)" if skip else ""
    out = []
    for m in robot.missing:
        where = "is not there" if m.looked == m.filename else f"is not at {m.looked}"
        out.append(Unchecked(f"{shown}:{m.line}", f"link {m.link!r}: its mesh {m.filename} {where}: "
                                                 f"that geometry is not checked{how}"))
    return out, bool(out) and not skip


# The robot formats gjk does not read, by their root element, as a user would name them.
OTHER_ROBOT_FORMATS = {"mujoco": "an MJCF (MuJoCo) model", "sdf": "an SDF (Gazebo) model"}


def _sampled_range(j: Joint) -> tuple[float, float]:
    """The range poses are drawn from (the collision matrix, its proofs) and a default pose is
    clipped to: the limits; one turn for a rotation without limits; 0 for a slide without
    limits (a floating base's translation: self-collision does not depend on it)."""
    if np.isfinite(j.lower) and np.isfinite(j.upper) and j.kind != "continuous":
        return j.lower, j.upper
    if j.kind in ("revolute", "continuous"):
        return CONTINUOUS_RANGE
    return 0.0, 0.0


def _tree_order(root: str, joints: list) -> tuple[list, list]:
    """Links parents first (breadth-first from the root), and the joint of each non-root link."""
    by_parent: dict[str, list] = {}
    for j in joints:
        by_parent.setdefault(j.parent, []).append(j)
    order, ordered, queue = [root], [], [root]
    while queue:
        parent = queue.pop(0)
        for j in by_parent.get(parent, []):
            if j.child in order:
                continue
            order.append(j.child)
            ordered.append(j)
            queue.append(j.child)
    return order, ordered


def _floats(text, count: int, element, what: str, fail) -> np.ndarray:
    try:
        values = [float(x) for x in (text or "").split()]
    except ValueError:
        values = []
    if len(values) != count or not all(np.isfinite(values)):
        fail(element, f"{what} must be {count} finite numbers, got {text!r}")
    return np.array(values)


def _number(element, key: str, fail, default=None) -> float:
    text = element.get(key)
    if text is None:
        if default is None:
            fail(element, f"<{element.tag}> needs {key}")
        return default
    return float(_floats(text, 1, element, f"<{element.tag}> {key}", fail)[0])


def _origin(element, fail, note) -> np.ndarray:
    """(4, 4) from an <origin xyz= rpy=> child (identity when absent)."""
    T = np.eye(4)
    o = element.find("origin")
    if o is None:
        return T
    xyz = _three(o, "xyz", "0 0 0", "<origin> xyz", fail, note)
    rpy = _three(o, "rpy", "0 0 0", "<origin> rpy", fail, note)
    T[:3, :3] = rpy_matrix(rpy)
    T[:3, 3] = xyz
    return T


def rpy_matrix(rpy) -> np.ndarray:
    """URDF's roll, pitch, yaw: rotations about the fixed x, y, z axes in that order (Rz Ry Rx)."""
    r, p, y = rpy
    cr, sr, cp, sp, cy, sy = np.cos(r), np.sin(r), np.cos(p), np.sin(p), np.cos(y), np.sin(y)
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


def _joint(e, links: set, fail, note) -> list[Joint]:
    """The joint, or the chain of one-DOF steps a floating, planar or spherical joint is read as
    (`COMPOUND_COLUMNS`: its first step at the joint's origin, its last moving the child)."""
    name = e.get("name")
    if not name:
        fail(e, "<joint> needs a name")
    kind = e.get("type")
    if kind not in JOINT_KINDS:
        fail(e, f"joint {name!r}: type {kind!r} is not supported; gjk reads "
                f"{', '.join(JOINT_KINDS)} joints")
    ends = {}
    for end in ("parent", "child"):
        sub = e.find(end)
        link = sub.get("link") if sub is not None else None
        if not link:
            fail(e, f"joint {name!r} needs <{end} link=...>")
        if link not in links:
            fail(e, f"joint {name!r}: its {end} {link!r} is not a link of this URDF")
        ends[end] = link
    axis = np.array([1.0, 0.0, 0.0])
    a = e.find("axis")
    if a is not None and kind not in ("fixed", "floating", "spherical"):
        axis = _floats(a.get("xyz", "1 0 0"), 3, a, f"joint {name!r}: <axis> xyz", fail)
        norm = np.linalg.norm(axis)
        if norm == 0:
            fail(a, f"joint {name!r}: the axis is zero")
        axis = axis / norm
    elif kind == "planar":
        axis = np.array([0.0, 0.0, 1.0])
        note(e, f"planar joint {name!r} has no <axis>: moves in its frame's x-y plane, as MoveIt's")
    lower, upper, velocity = -np.inf, np.inf, np.inf
    limit = e.find("limit")
    if kind in ("revolute", "prismatic"):
        if limit is None:
            fail(e, f"joint {name!r}: a {kind} joint needs <limit lower= upper=>")
        lower = _number(limit, "lower", fail, 0.0)
        upper = _number(limit, "upper", fail, 0.0)
        if lower > upper:  # pybullet's reading
            note(limit, f"joint {name!r}: lower limit {lower:g} is above the upper {upper:g}: "
                        f"read as no limit, as pybullet does")
            lower, upper = -np.inf, np.inf
    if limit is not None and limit.get("velocity") is not None:
        velocity = _number(limit, "velocity", fail)
    mimic = None
    m = e.find("mimic")
    if m is not None and kind in ("revolute", "continuous", "prismatic"):
        if not m.get("joint"):
            fail(m, f"joint {name!r}: <mimic> needs joint=")
        mimic = (m.get("joint"), _number(m, "multiplier", fail, 1.0), _number(m, "offset", fail, 0.0))
    origin = _origin(e, fail, note)
    line = e.sourceline or 0
    if kind not in COMPOUND_COLUMNS:
        return [Joint(name=name, kind=kind, parent=ends["parent"], child=ends["child"],
                      origin=origin, axis=axis, lower=lower, upper=upper, velocity=velocity,
                      mimic=mimic, line=line)]
    # planar: x and y span the plane normal to the axis (the turn taking z to the axis)
    basis = _turn_z_to(axis) if kind == "planar" else np.eye(3)
    steps, parent = [], ends["parent"]
    columns = COMPOUND_COLUMNS[kind]
    for k, (column, step_kind, step_axis) in enumerate(columns):
        child = ends["child"] if k == len(columns) - 1 else f"{name}/{column}"
        steps.append(Joint(name=f"{name}/{column}", kind=step_kind, parent=parent, child=child,
                           origin=origin if k == 0 else np.eye(4),
                           axis=basis @ np.array(step_axis, dtype=np.float64), lower=-np.inf,
                           upper=np.inf, velocity=velocity, mimic=None, line=line))
        parent = child
    return steps


def _turn_z_to(axis: np.ndarray) -> np.ndarray:
    """(3, 3) the shortest turn taking z to the unit vector `axis` (a half turn about x for -z)."""
    z = np.array([0.0, 0.0, 1.0])
    c = float(axis @ z)
    if c < -1.0 + 1e-12:
        return np.diag([1.0, -1.0, -1.0])
    v = np.cross(z, axis)
    K = np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])
    return np.eye(3) + K + K @ K / (1.0 + c)  # Rodrigues with sin = |v|, 1 - cos = |v|^2 / (1 + c)


def _collision(c, link: str, label: str, resolver: "_Packages", fail, note) -> Collision:
    g = c.find("geometry")
    shapes = [s for s in (g if g is not None else []) if isinstance(s.tag, str)]
    if len(shapes) != 1:
        fail(c, f"link {link!r}: a <collision> holds one <geometry> with one shape")
    s = shapes[0]
    origin = _origin(c, fail, note)
    if s.tag == "mesh":
        filename = s.get("filename")
        if not filename:
            fail(s, f"link {link!r}: <mesh> needs filename=")
        scale = _scale(s, link, fail, note)
        if np.any(scale == 0):
            fail(s, f"link {link!r}: <mesh> scale {scale.tolist()} flattens the mesh")
        return Collision(link=link, name=label, kind="mesh", origin=origin,
                         mesh=resolver.find(filename, s.sourceline, link), scale=scale)
    if s.tag == "box":
        size = _floats(s.get("size"), 3, s, f"link {link!r}: <box> size", fail)
        if np.any(size <= 0):
            fail(s, f"link {link!r}: <box> size must be > 0, got {size.tolist()}")
        return Collision(link=link, name=label, kind="box", origin=origin, params={"size": size.tolist()})
    if s.tag in ("cylinder", "sphere"):
        keys = ("radius", "length") if s.tag == "cylinder" else ("radius",)
        params = {key: _number(s, key, fail) for key in keys}
        if any(v <= 0 for v in params.values()):
            fail(s, f"link {link!r}: <{s.tag}> sizes must be > 0, got {params}")
        return Collision(link=link, name=label, kind=s.tag, origin=origin, params=params)
    fail(s, f"link {link!r}: <{s.tag}> is not a collision shape gjk reads (mesh, box, cylinder, sphere)")


def _three(e, key: str, default: str, what: str, fail, note, uniform: bool = False) -> np.ndarray:
    """(3,) an attribute of three numbers; as pybullet reads it, also with commas between them or
    more than three (the first three), and with `uniform` one number (the same on every axis),
    each with a note."""
    text = e.get(key, default)
    if "$(" in text or "${" in text:
        fail(e, f"{what} {text!r} is an unexpanded xacro or roslaunch substitution: expand the file "
                f"first (`xacro robot.urdf.xacro > robot.urdf`)")
    cells = text.replace(",", " ").split()
    if uniform and len(cells) == 1:
        value = _floats(cells[0], 1, e, what, fail)
        note(e, f"{what} {text!r} is one number: the same on every axis")
        return np.repeat(value, 3)
    if len(cells) > 3:
        try:
            extra = [float(c) for c in cells]
        except ValueError:
            extra = [np.nan]
        if not all(np.isfinite(extra)):
            fail(e, f"{what} must be 3 finite numbers, got {text!r}")
        note(e, f"{what} {text!r} has {len(cells)} numbers: took the first three, as pybullet does")
        cells = cells[:3]
    elif "," in text:
        note(e, f"{what} {text!r} separates its numbers with commas: read them as spaces")
    return _floats(" ".join(cells), 3, e, what, fail)


def _scale(s, link: str, fail, note) -> np.ndarray:
    """(3,) a mesh's scale: three numbers, or as yourdfpy and pybullet read it (`_three`)."""
    return _three(s, "scale", "1 1 1", f"link {link!r}: <mesh> scale", fail, note, uniform=True)


class _Packages:
    """Resolves a mesh filename of a URDF: package://, file:// or a relative path.

    package://NAME/REST is looked for, in order: --package NAME=DIR; each folder of
    ROS_PACKAGE_PATH (a folder NAME holding REST, up to `PACKAGE_DEPTH` folders down, as rospack
    crawls); each prefix of AMENT_PREFIX_PATH whose ament index lists NAME (ROS 2:
    PREFIX/share/ament_index/resource_index/packages/NAME, the package in PREFIX/share/NAME), then
    this Python's prefixes (`_python_prefixes`: a robot installed by pip with its index, as
    example-robot-data is); a
    folder NAME (or NAME beside one) above the URDF, as its path was typed, with its folder's
    symbolic links resolved, and beside the file a link to the URDF leads to; last, the ament
    index of a colcon workspace's `install/` in a folder above the URDF (the workspace not
    sourced: a note says where the package was found).
    """

    def __init__(self, urdf: Path, packages: dict, notes: list):
        self.urdf = urdf
        self.packages = packages
        self.notes = notes
        self.found: dict[str, Path] = {}
        self._workspaces: dict[Path, Path] = {}  # a package found in a workspace -> its install/

    def find(self, filename: str, line, link: str) -> Path:
        """The mesh file. MissingMesh when it is not where the path leads; InputError when the
        package is found nowhere."""
        where = f"{self.urdf}:{line}"

        def exists(p: Path, how: str = "") -> Path:
            return self._exists(p, where, filename, link, line, how)

        if filename.startswith("file://"):
            p = Path(filename[len("file://"):])
            return exists(p if p.is_absolute() else self.urdf.parent / p)
        if not filename.startswith("package://"):
            p = Path(filename)
            return exists(p if p.is_absolute() else self.urdf.parent / p)
        tail = filename[len("package://"):]
        if tail.startswith("/"):  # package:///NAME/...: yourdfpy and pybullet take it
            self.notes.append(f"line {line}: {filename!r} has a slash too many after package://: "
                              f"read as package://{tail.lstrip('/')}")
            tail = tail.lstrip("/")
        name, _, rest = tail.partition("/")
        if not name or not rest:
            raise InputError(where, f"link {link!r}: {filename!r} is not package://NAME/PATH")
        if name in self.packages:
            return exists(Path(self.packages[name]) / rest,
                          f" (from --package {name}={self.packages[name]})")
        if name in self.found and (self.found[name] / rest).is_file():
            return self.found[name] / rest
        first = None  # the first folder that is the package, when none holds the file
        for folder in self._candidates(name):
            if (folder / rest).is_file():
                self.found[name] = folder
                workspace = self._workspaces.get(folder)
                if workspace is not None:  # found leniently: say where
                    self.notes.append(f"package://{name} found in the workspace's install folder "
                                      f"{workspace} (its ament index), AMENT_PREFIX_PATH holding "
                                      f"no {name}; `source {workspace}/setup.bash` or give "
                                      f"--package {name}=DIR to say where it is")
                return folder / rest
            if first is None and folder.is_dir():
                first = folder
        if first is not None:  # the package is there, the file is not
            return exists(first / rest)
        ros = "not under ROS_PACKAGE_PATH" if os.environ.get("ROS_PACKAGE_PATH") else "ROS_PACKAGE_PATH is unset"
        ament = ("not in the ament index of AMENT_PREFIX_PATH" if os.environ.get("AMENT_PREFIX_PATH")
                 else "AMENT_PREFIX_PATH is unset")
        raise InputError(where, f"link {link!r}: cannot find {filename}: no --package {name}=DIR, "
                                f"{ros}, {ament}, and no folder named {name} above {self.urdf.parent}; "
                                f"give --package {name}=DIR")

    def _candidates(self, name: str):
        """Folders that may be the package NAME, in the order of the class's docstring."""
        for folder in _path_list("ROS_PACKAGE_PATH"):
            yield from _named_below(Path(folder), name, PACKAGE_DEPTH)
        for prefix in [*_path_list("AMENT_PREFIX_PATH"), *_python_prefixes()]:
            if (Path(prefix) / AMENT_INDEX / name).is_file():
                yield Path(prefix) / "share" / name
        # the folder as typed, with its links resolved, and the file's own target's folder
        typed = Path(os.path.abspath(self.urdf))
        for start in dict.fromkeys([typed.parent, typed.parent.resolve(), typed.resolve().parent]):
            for folder in (start, *start.parents):
                for candidate in (folder, folder / name):
                    if candidate.name == name:
                        yield candidate
        # a colcon workspace the URDF is in, its install folder not sourced (merged or
        # isolated install): ament's index there lists the package
        for folder in (typed.parent, *typed.parent.parents):
            install = folder / "install"
            for prefix in (install, install / name):
                if (prefix / AMENT_INDEX / name).is_file():
                    self._workspaces[prefix / "share" / name] = Path(os.path.relpath(install))
                    yield prefix / "share" / name

    @staticmethod
    def _exists(p: Path, where: str, filename: str, link: str, line, how: str = "") -> Path:
        if not p.is_file():
            looked = f"{p}{how}"
            at = "is not there" if looked == filename else f"is not at {looked}"
            raise MissingMesh(where, f"link {link!r}: the mesh {filename} {at}; check the path",
                              link=link, filename=filename, looked=looked, line=line or 0)
        return p


# ROS 2's index of installed packages under a prefix (ament_index_python reads the same).
AMENT_INDEX = Path("share") / "ament_index" / "resource_index" / "packages"
# How deep below a ROS_PACKAGE_PATH folder a package is looked for (a workspace's src/REPO/PKG).
PACKAGE_DEPTH = 3


def _python_prefixes() -> list[str]:
    """Where robots installed by pip keep their ament index: this Python's prefix, and the
    `cmeel.prefix` folder that cmeel wheels (example-robot-data, pinocchio) install into."""
    import sysconfig

    return [sys.prefix, *(str(Path(sysconfig.get_paths()[k]) / "cmeel.prefix") for k in ("purelib", "platlib"))]


def _path_list(variable: str) -> list[str]:
    return [p for p in os.environ.get(variable, "").split(os.pathsep) if p]


def _named_below(top: Path, name: str, depth: int):
    """`top` itself when it is called `name`, then folders called `name` below it, breadth
    first, at most `depth` levels down; hidden folders skipped."""
    if top.name == name:
        yield top
    level = [top]
    for _ in range(depth):
        below = []
        for folder in level:
            try:
                entries = sorted(os.scandir(folder), key=lambda d: d.name)
            except OSError:
                continue
            for d in entries:
                if d.name.startswith(".") or not d.is_dir():
                    continue
                if d.name == name:
                    yield Path(d.path)
                below.append(Path(d.path))
        level = below


# -- kinematics -----------------------------------------------------------------------------------


def _motion(j: Joint, values: np.ndarray) -> np.ndarray:
    """(n, 4, 4) the joint's motion for values (n,): a rotation about or a slide along its axis."""
    n = len(values)
    T = np.broadcast_to(np.eye(4), (n, 4, 4)).copy()
    if j.kind == "prismatic":
        T[:, :3, 3] = values[:, None] * j.axis
    elif j.kind in ("revolute", "continuous"):
        # Rodrigues: R = I + sin(q) K + (1 - cos(q)) K^2, K the cross-product matrix of the axis
        x, y, z = j.axis
        K = np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])
        s, c = np.sin(values)[:, None, None], np.cos(values)[:, None, None]
        T[:, :3, :3] = np.eye(3) + s * K + (1.0 - c) * (K @ K)
    return T


# -- poses ----------------------------------------------------------------------------------------


def group_states(srdf) -> dict:
    """{name: {joint: value}} of an SRDF's <group_state>s."""
    root = _parse_xml(Path(srdf), "SRDF")
    out = {}
    for g in root.iter("group_state"):
        values = {}
        for j in g.findall("joint"):
            try:
                values[j.get("name")] = float(j.get("value"))
            except (TypeError, ValueError):
                raise InputError(f"{srdf}:{j.sourceline}", f"group_state {g.get('name')!r}: joint "
                                                           f"{j.get('name')!r} has no numeric value") from None
        out[g.get("name")] = values
    return out


def parse_joints(robot: Robot, text: str | None, srdf=None, where: str = "--joints") -> np.ndarray:
    """(d,) the pose `text` names: "NAME=VALUE,..." (others at the default) or an SRDF group
    state's name. InputError for an unknown joint, a fixed or mimic one, a value outside the limits."""
    q = robot.default_pose()
    if isinstance(text, dict):
        return pose_from(robot, text, where)
    if text is None or not text.strip():
        return q
    text = text.strip()
    states = group_states(srdf) if srdf is not None else {}
    if "=" not in text:
        if text not in states:
            known = ", ".join(states) if states else "none (give --srdf FILE)"
            raise InputError(robot.path, f"{where}: {text!r} is neither NAME=VALUE,... nor a group "
                                         f"state of the SRDF (group states: {known})")
        values = states[text]
        where = f"{where} {text}"
    else:
        values = {}
        for item in filter(None, (s.strip() for s in text.split(","))):
            name, eq, value = item.partition("=")
            try:
                values[name.strip()] = float(value)
            except ValueError:
                raise InputError(robot.path, f"{where}: {item!r} is not NAME=VALUE (a number)") from None
    return pose_from(robot, values, where)


def pose_from(robot: Robot, values: dict, where: str) -> np.ndarray:
    """(d,) from {joint: value}; the others at the default pose."""
    q = robot.default_pose()
    col = {name: k for k, name in enumerate(robot.variables)}
    byname = {j.name: j for j in robot.joints}
    for name, v in values.items():
        if name not in col:
            if name in robot.compound:
                why = (f"has {len(robot.compound[name])} degrees of freedom: set "
                       f"{', '.join(robot.compound[name])}")
            elif name in byname and byname[name].kind == "fixed":
                why = "is fixed"
            elif name in byname and byname[name].mimic[0] is None:
                why = f"mimics a joint that is not there: it is held at {byname[name].mimic[2]:g}"
            elif name in byname:
                why = f"follows {byname[name].mimic[0]} (mimic): set that one"
            else:
                why = "is not a joint of this URDF"
            raise InputError(robot.path, f"{where}: joint {name!r} {why}")
        q[col[name]] = v
    robot.check_pose(q, where)
    return q


# -- objects --------------------------------------------------------------------------------------


def object_names(robot: Robot, prefix: str | None = None) -> list[str]:
    """Per collision element, its name ("link", or "link:k" for the k-th of several)."""
    return [c.name if prefix is None else f"{prefix}:{c.name}" for c in robot.collisions]


def link_names(robot: Robot, prefix: str | None = None) -> list[str]:
    """Per collision element, the name of the object it is part of: its link (MoveIt's one body)."""
    return [c.link if prefix is None else f"{prefix}:{c.link}" for c in robot.collisions]


def local_meshes(robot: Robot) -> list:
    """Per collision element: (vertices (n, 3) in the link's frame, faces, watertight, bodies,
    units) for meshes, None for primitives; each file read once."""
    from gjkcli.mesh.load import load_part

    cache = {}
    out = []
    for c in robot.collisions:
        if c.kind != "mesh":
            out.append(None)
            continue
        key = c.mesh.resolve()
        if key not in cache:
            try:
                cache[key] = load_part(c.mesh)
            except InputError as exc:
                raise InputError(robot.path, f"link {c.link!r}: {exc.source}: {exc.message}") from None
        part = cache[key]
        V = (part.vertices * c.scale) @ c.origin[:3, :3].T + c.origin[:3, 3]
        F = part.faces[:, [0, 2, 1]] if np.prod(c.scale) < 0 else part.faces
        out.append((V, F, part.watertight, part.bodies, part.units))
    return out


def primitive(c: Collision, frame: np.ndarray):
    """The engine Shape of a primitive element whose link is at `frame` (4, 4)."""
    from gjkcli.engine.shapes import Shape

    T = frame @ c.origin
    if c.kind == "box":
        return Shape.box(c.params["size"], transform=T)
    if c.kind == "cylinder":
        return Shape.cylinder(c.params["radius"], c.params["length"], transform=T)
    return Shape.sphere(c.params["radius"], center=T[:3, 3])


def read_geometries(robot: Robot, q: np.ndarray, *, shown: str, prefix: str | None = None,
                    transform: np.ndarray | None = None) -> list:
    """Geometry records (`gjkcli.scene.objects.Geometry`) of the robot's collision elements at
    pose q (d,), in world coordinates (`transform` places the robot's root)."""
    from gjkcli.scene.objects import Geometry

    frames = robot.fk(q[None, :])[0]
    if transform is not None:
        frames = transform @ frames
    link_index = {name: k for k, name in enumerate(robot.links)}
    names = object_names(robot, prefix)
    geoms = []
    links = link_names(robot, prefix)
    for c, name, link, mesh in zip(robot.collisions, names, links, local_meshes(robot)):
        F = frames[link_index[c.link]]
        owner = link if link != name else None  # an element of a link with several
        if mesh is None:
            geoms.append(Geometry(name=name, file=shown, primitive=primitive(c, F), watertight=True,
                                  bodies=1, owner=owner))
            continue
        V, faces, watertight, bodies, units = mesh
        geoms.append(Geometry(name=name, file=shown, vertices=V @ F[:3, :3].T + F[:3, 3], faces=faces,
                              units=units, watertight=watertight, bodies=bodies, owner=owner))
    return geoms


# -- allowed pairs --------------------------------------------------------------------------------


def adjacent_links(robot: Robot) -> list[tuple[str, str, str]]:
    """(link, link, joint) for links joined by a joint, as MoveIt's setup assistant counts them:
    through fixed joints to links without geometry too (panda_link7 and panda_hand through the
    geometry-less panda_link8)."""
    has_geometry = {c.link for c in robot.collisions}
    parents = robot.link_parents()

    def carrier(link: str) -> tuple[str | None, str]:
        """The link with geometry a link hangs from: its parent, or up through fixed joints past
        parents without geometry; and the joints between, parent side first."""
        parent, joint = parents[link]
        joint_names = [joint.name]
        while (parent not in has_geometry and parent in parents
               and (parents[parent][1].kind == "fixed" or parent in robot.virtual)):
            parent, joint = parents[parent]
            joint_names.insert(0, joint.name)
        return (parent if parent in has_geometry else None), " and ".join(joint_names)

    out = []
    for link in robot.links[1:]:
        if link not in has_geometry:
            continue
        parent, joints = carrier(link)
        if parent is not None:
            out.append((parent, link, joints))
    return out


@dataclass(frozen=True)
class SrdfRules:
    """The collision entries of a MoveIt SRDF, as MoveIt applies them to its allowed collision
    matrix: a link's default first, then the disabled pairs, then the enabled pairs over both.

    disabled : ((link, link, reason or None, line), ...) of <disable_collisions>
    defaults : ((link, line), ...) of <disable_default_collisions link=...>: every pair of the
        link is allowed unless enabled
    enabled : ((link, link, line), ...) of <enable_collisions>
    """

    disabled: tuple
    defaults: tuple
    enabled: tuple

    def enabled_keys(self) -> set:
        return {frozenset((a, b)) for a, b, _ in self.enabled}


def read_srdf_rules(srdf) -> SrdfRules:
    """The SRDF's collision entries. InputError naming the line of an entry without its links."""
    path = Path(srdf)
    root = _parse_xml(path, "SRDF")
    disabled, defaults, enabled = [], [], []
    for e in root.iter("disable_collisions", "enable_collisions", "disable_default_collisions"):
        where = f"{path}:{e.sourceline}"
        if e.tag == "disable_default_collisions":
            if not e.get("link"):
                raise InputError(where, "<disable_default_collisions> needs link=")
            defaults.append((e.get("link"), e.sourceline or 0))
            continue
        a, b = e.get("link1"), e.get("link2")
        if not a or not b:
            raise InputError(where, f"<{e.tag}> needs link1 and link2")
        if e.tag == "enable_collisions":
            enabled.append((a, b, e.sourceline or 0))
        else:
            disabled.append((a, b, e.get("reason") or None, e.sourceline or 0))
    return SrdfRules(disabled=tuple(disabled), defaults=tuple(defaults), enabled=tuple(enabled))


DEFAULT_REASON = "Default link"  # the reason of a pair allowed by <disable_default_collisions>


def srdf_disabled(robot: Robot, rules: SrdfRules) -> list[tuple[str, str, str | None, int]]:
    """(link, link, reason, line) of every pair the SRDF allows, as MoveIt reads it: the
    <disable_collisions> pairs, and each pair of a <disable_default_collisions> link with the
    robot's other links with geometry (reason `DEFAULT_REASON`), less the <enable_collisions>
    pairs; each pair once (its <disable_collisions> entry first)."""
    enabled = rules.enabled_keys()
    seen, out = set(), []
    for a, b, reason, line in rules.disabled:
        key = frozenset((a, b))
        if key not in enabled and key not in seen:
            seen.add(key)
            out.append((a, b, reason, line))
    with_geometry = list(dict.fromkeys(c.link for c in robot.collisions))
    for link, line in rules.defaults:
        for other in with_geometry:
            key = frozenset((link, other))
            if other != link and key not in enabled and key not in seen:
                seen.add(key)
                out.append((link, other, DEFAULT_REASON, line))
    return out


def allowed_pairs(robot: Robot, srdf=None, prefix: str | None = None) -> list:
    """AllowSpec (`gjkcli.scene.manifest`) per pair the robot itself allows: adjacent links
    ("adjacent: joint NAME"), then the SRDF's (`srdf_disabled`: "SRDF: <reason>", "SRDF:
    disabled" for an entry without one). An SRDF's <enable_collisions> pair is checked even when
    its links are adjacent: the user asked for it."""
    from gjkcli.scene.manifest import AllowSpec

    full = (lambda link: link) if prefix is None else (lambda link: f"{prefix}:{link}")
    rules = read_srdf_rules(srdf) if srdf is not None else SrdfRules((), (), ())
    enabled = rules.enabled_keys()
    out = [AllowSpec(a=full(a), b=full(b), reason=f"adjacent: joint {joints}", line=0,
                     source=str(robot.path), literal=True) for a, b, joints in adjacent_links(robot)
           if frozenset((a, b)) not in enabled]
    for a, b, reason, line in srdf_disabled(robot, rules):
        out.append(AllowSpec(a=full(a), b=full(b), reason=f"SRDF: {reason or 'disabled'}", line=line,
                             source=str(srdf), literal=True))
    return out


def pose_text(robot: Robot, q: np.ndarray) -> str:
    """"name=value, ..." of a pose, for notes and findings."""
    if not robot.variables:
        return "(no moving joints)"
    return ", ".join(f"{name}={float(v):.6g}" for name, v in zip(robot.variables, q))


# -- poses from a table -----------------------------------------------------------------------------


def read_pose_table(robot: Robot, path) -> np.ndarray:
    """(n, d) poses from a CSV file: a header of joint names (any subset of the robot's
    independent joints, the others at the default pose), then one pose a row.

    Raises InputError naming the file and the line: an unknown, fixed or mimic joint, a cell that
    is not a number, a row of the wrong length, a value outside the joint's limits, no rows.
    """
    from gjkcli.scene.manifest import read_input_text

    path = Path(path)
    return _pose_table(robot, path, read_input_text(path, "CSV"))


def _pose_table(robot: Robot, path: Path, text: str) -> np.ndarray:
    """`read_pose_table` of the file's text."""
    fast = _plain_table(text)  # most tables: no quotes, every row whole, a number in every cell
    if fast is not None:
        header, values = fast
    else:
        numbered = _table_rows(text)
        if not numbered:
            raise InputError(path, "is empty: give a header of joint names and one pose a row")
        (_, header), body = numbered[0], numbered[1:]
    _check_header(robot, path, header)
    if fast is None:
        values = _table_values(path, header, body)
    return _filled(robot, path, header, values, lambda n: _table_rows(text)[1:][n])


def _check_header(robot: Robot, path: Path, header: list) -> None:
    """InputError where a pose table's header names a joint that is not one of the robot's
    independent joints, or one twice."""
    col = set(robot.variables)
    for name in header:
        if name not in col:
            pose_from(robot, {name: 0.0}, f"{path}:1")  # raises with the reason
    if len(set(header)) != len(header):
        raise InputError(f"{path}:1", "a joint is named twice in the header")


def _filled(robot: Robot, path: Path, header: list, values: np.ndarray, numbered) -> np.ndarray:
    """(n, d) poses of a table's values (n, k) in the columns `header` names, the other joints
    at the default pose. The limits are checked for every row at once; the first row outside
    them says why, as pose_from does (numbered(row) -> (its line number, its cells))."""
    col = {name: k for k, name in enumerate(robot.variables)}
    out = np.tile(robot.default_pose(), (len(values), 1))
    out[:, [col[name] for name in header]] = values
    continuous = np.array([next(j for j in robot.joints if j.name == v).kind == "continuous"
                           for v in robot.variables], dtype=bool)
    slack = 1e-9 * np.maximum(1.0, np.maximum(np.abs(robot.lower), np.abs(robot.upper)))
    inside = (out >= robot.lower - slack) & (out <= robot.upper + slack)
    bad = ~np.isfinite(out).all(axis=1) | ~(inside | continuous).all(axis=1)
    for n in np.flatnonzero(bad)[:1].tolist():
        line, cells = numbered(n)
        pose_from(robot, {name: float(c) for name, c in zip(header, cells)}, f"{path}:{line}")
    return out


# A blank line between rows (white space and commas: the csv reader drops it as a row, so a table
# with one is not read as `PoseRows`, whose rows are one a line), and the line ends splitlines
# takes besides "\n" and "\r\n".
_BLANK_LINE = re.compile(r"\n[\s,]*?\n")
_ODD_ENDS = "\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


def _odd_lines(text: str) -> bool:
    """Whether a table's text has a blank line between rows (blank lines at its end are not
    rows either way) or a line end other than "\n" or "\r\n" (each a few calls over the text:
    a regex with both took 0.1 s on 100,000 rows)."""
    end = len(text)
    while end and (text[end - 1] == "," or text[end - 1].isspace()):
        end -= 1
    return bool(_BLANK_LINE.search(text, 0, end)) or any(c in text for c in _ODD_ENDS) \
        or "\r" in text and text.count("\r") != text.count("\r\n")


class PoseRows:
    """A CSV pose table whose rows are read into values only where asked (`values`), so that a
    run with the cache looks its rows up by their text (`lines`, with `header`: what a pose's
    values are made of) and reads only those it has not seen (a planner's table of 100,000
    rows: NumPy's reader took a fifth of a cached run with 10% of them new). Made by
    `pose_rows` for a table without quotes or blank lines, whose row r is line r + 2.

    values(rows) raises the InputError `read_pose_table` raises for the first bad one of those
    rows (lengths first, then numbers, then limits), naming its line; `values()` is
    `read_pose_table` of the whole table."""

    __slots__ = ("robot", "path", "text", "header", "lines")

    def __init__(self, robot: Robot, path: Path, text: str, header: list, lines: list):
        self.robot, self.path, self.text, self.header, self.lines = robot, path, text, header, lines

    def __len__(self) -> int:
        return len(self.lines)

    def values(self, rows=None) -> np.ndarray:
        if rows is None:
            return _pose_table(self.robot, self.path, self.text)
        rows = [int(r) for r in rows]
        if not rows:
            return np.zeros((0, self.robot.dof))
        body = [self.lines[r] for r in rows]
        k = len(self.header)
        for r, line in zip(rows, body):  # every row's length before any value (`_table_values`)
            if line.count(",") != k - 1:
                raise InputError(f"{self.path}:{r + 2}", f"{line.count(',') + 1} values for {k} joints in the header")
        values = _plain_values(body, k)
        if values is None:
            for r, line in zip(rows, body):
                try:
                    [float(c) for c in line.split(",")]
                except ValueError:
                    cells = ",".join(c.strip() for c in line.split(","))
                    raise InputError(f"{self.path}:{r + 2}", f"a value is not a number: {cells}") from None
            values = np.array([[float(c) for c in line.split(",")] for line in body], dtype=np.float64)
        return _filled(self.robot, self.path, self.header, values,
                       lambda n: (rows[n] + 2, [c.strip() for c in body[n].split(",")]))


def pose_rows(robot: Robot, path):
    """A CSV pose table as `PoseRows`, each row read when asked; or, for a table with quotes,
    blank lines between rows or odd line ends, `read_pose_table`'s (n, d) poses. Raises
    InputError for its header as read_pose_table does."""
    from gjkcli.scene.manifest import read_input_text

    path = Path(path)
    text = read_input_text(path, "CSV")
    if '"' in text or "\0" in text or _odd_lines(text):
        return _pose_table(robot, path, text)
    lines = text.splitlines()
    while lines and not lines[-1].replace(",", "").strip():  # blank lines at the end
        lines.pop()
    if len(lines) < 2 or not lines[0].replace(",", "").strip():
        return _pose_table(robot, path, text)
    header = [c.strip() for c in lines[0].split(",")]
    _check_header(robot, path, header)
    return PoseRows(robot, path, text, header, lines[1:])


def _plain_table(text: str):
    """(header, (n, k) values) of a CSV table without quotes whose rows all have the header's
    length and a number in every cell, read with a few calls over the whole text (a planner's
    table has 100,000 rows: `csv` and a list per row took most of a cached run's time); None
    for any other table (`_table_rows` and `_table_values` read it, and say what is wrong
    where)."""
    if '"' in text or "\0" in text:
        return None
    lines = text.splitlines()
    if _odd_lines(text) or not lines or not lines[0].replace(",", "").strip():
        lines = [line for line in lines if line.replace(",", "").strip()]  # blank rows dropped, as csv's
    else:  # blank lines at the end alone: no pass over every line in Python
        while lines and not lines[-1].replace(",", "").strip():
            lines.pop()
    if len(lines) < 2:
        return None
    header = [c.strip() for c in lines[0].split(",")]
    body = lines[1:]
    k = len(header)
    try:  # most tables: NumPy's reader checks every row's length as it reads
        values = np.loadtxt(body, delimiter=",", dtype=np.float64, comments=None, ndmin=2)
        if values.shape == (len(body), k):
            return header, values
    except ValueError:
        pass
    if any(line.count(",") != k - 1 for line in body):
        return None
    values = _plain_values(body, k)
    return None if values is None else (header, values)


def _plain_values(body: list, k: int):
    """(n, k) the values of rows `body` (lines of k cells, without quotes), or None where a
    cell is not a number."""
    try:  # NumPy's reader: the numbers float() reads (CPython's own conversion), in C
        values = np.loadtxt(body, delimiter=",", dtype=np.float64, comments=None, ndmin=2)
        if values.shape == (len(body), k):
            return values
    except ValueError:  # what float() reads besides (digits grouped by "_"), or says is wrong
        pass
    try:  # float() skips the spaces around a cell, as the csv reader's strip does
        values = np.array(list(map(float, ",".join(body).split(","))), dtype=np.float64)
    except ValueError:
        return None
    return values.reshape(len(body), k)


def _table_rows(text: str) -> list:
    """[(line number, [cell])] of a CSV table's rows that are not blank, the header first."""
    import csv

    rows = csv.reader(text.splitlines())
    return [(k + 1, [c.strip() for c in r]) for k, r in enumerate(rows) if any(c.strip() for c in r)]


def _table_values(path, header: list, body: list) -> np.ndarray:
    """(n, k) the values of a table's rows `body` ([(line number, [cell])]); InputError naming
    the line that is wrong."""
    if not body:
        raise InputError(path, "has a header and no poses: give one pose a row")
    for line, cells in body:
        if len(cells) != len(header):
            raise InputError(f"{path}:{line}", f"{len(cells)} values for {len(header)} joints in the header")
    try:  # every cell at once; the bad row found after
        return np.array([float(c) for _, cells in body for c in cells]).reshape(len(body), -1)
    except ValueError:
        for line, cells in body:
            try:
                [float(c) for c in cells]
            except ValueError:
                raise InputError(f"{path}:{line}", f"a value is not a number: {','.join(cells)}") from None
        raise


# -- motion bounds ----------------------------------------------------------------------------------


def element_radius(c: Collision, local_vertices: np.ndarray | None) -> float:
    """The largest distance of any point of a collision element from its link's frame origin."""
    if local_vertices is not None:
        return float(np.linalg.norm(local_vertices, axis=1).max())
    centre = float(np.linalg.norm(c.origin[:3, 3]))
    if c.kind == "box":
        return centre + 0.5 * float(np.linalg.norm(c.params["size"]))
    if c.kind == "cylinder":
        return centre + float(np.hypot(c.params["radius"], 0.5 * c.params["length"]))
    return centre + c.params["radius"]


def joints_above(robot: Robot, link: str) -> frozenset:
    """The indices of the joints between the root and `link`: those that move it."""
    parent = {j.child: (j.parent, k) for k, j in enumerate(robot.joints)}
    out = set()
    while link in parent:
        link, k = parent[link]
        out.add(k)
    return frozenset(out)


def motion_radii(robot: Robot, element_radii: np.ndarray) -> np.ndarray:
    """(J, E) how fast any point of element e can move per unit speed of joint k, for any pose.

    Joint k turning at speed w moves a point p at |w| |p - o_k| at most (o_k on its axis, the
    origin of its child's frame); prismatic joint k moves every point below it at |w|. |p - o_k|
    is bounded without the pose by the triangle inequality along the chain: the lengths of the
    joint origins between k and the element's link (plus any prismatic travel), plus the
    element's radius about its link's origin (Schwarzer, Saha and Latombe 2005 bound the motion
    of a link over a path segment the same way). Joints not above an element's link: 0.
    """
    parent = {j.child: k for k, j in enumerate(robot.joints)}
    link_of_element = [c.link for c in robot.collisions]
    out = np.zeros((len(robot.joints), len(robot.collisions)))
    for e, link in enumerate(link_of_element):
        reach = float(element_radii[e])  # bound on |p - origin of the current link|
        while link in parent:
            k = parent[link]
            j = robot.joints[k]
            if j.kind in ("revolute", "continuous"):
                out[k, e] = reach
            elif j.kind == "prismatic":
                out[k, e] = 1.0
            travel = max(abs(j.lower), abs(j.upper)) if j.kind == "prismatic" else 0.0
            reach += float(np.linalg.norm(j.origin[:3, 3])) + travel
            link = j.parent
    return out
