"""The `gjk scan --manifest FILE`: what scene files cannot say, in TOML (or JSON with the same keys).

Keys (the contract; any other key is an error, so that a typo is never silently dropped)::

    tolerance = 0.01                  # touching band, model units
    clearance = 0.5                   # required gap, model units (or with a unit: "0.5 mm")
    fail_on = ["collision", "clearance"]   # which findings fail the scan
    srdf = "robot.srdf"               # a MoveIt SRDF's <disable_collisions> as allowed pairs
    dask = "tcp://scheduler:8786"     # scan on a Dask cluster, or "local" / "local:4" (gjk scan --dask)

    [[include]]                       # every object of a scene file
    file = "cell.glb"
    transform = [[1,0,0,0],[0,1,0,0],[0,0,1,0],[0,0,0,1]]   # optional, 4x4 row-major
    split_bodies = false              # optional: each connected body its own object

    [[object]]                        # one object: a whole file, or a primitive
    name = "fixture"
    file = "fixture.stl"              # or: box = [x, y, z] (full extents), sphere = r,
                                      #     capsule = {radius = r, length = l} (along local z),
                                      #     cylinder = {radius = r, height = h} (along local z)
    translate = [0, 0, 10]            # or transform = 4x4; rotate = [rx, ry, rz] degrees about
    rotate = [0, 0, 90]               # the fixed x, y, z axes, in that order

    group_within = 3.0                # group the clashes lying within this of each other (chained)

    [[group]]
    name = "robot"
    members = ["panda_*"]             # globs over object names, or IFC classes ("IfcDuct*")
    select = "IfcBeam, IfcMember"     # and/or IFC elements by IfcOpenShell's selector syntax

    [[check]]                         # only these pairs are checked (default: all against all);
    name = "structure / walls"        # named, a clash set: reports, groups and BCFs by set
    a = "robot"                       # a group name or a glob
    b = "fixtures"
    clearance = 2.0                   # optional, for these pairs; so are the next four
    tolerance = 0.002                 # its touching band
    fail_on = ["collision"]           # which of its findings fail the scan
    mode = "exact"                    # auto, hull or exact
    group_within = 1.0                # its clashes' grouping distance

    [[allow]]                         # pairs that may touch or overlap
    a = "gripper*"
    b = "part"
    reason = "grasp"

    [[robot]]                         # a URDF robot in the cell (gjkcli.scene.urdf)
    urdf = "panda.urdf"
    name = "arm"                      # optional: its objects are "arm:<link>" (default: the file's stem)
    srdf = "panda.srdf"               # optional: its disabled pairs allowed, its group states
    joints = "ready"                  # optional: a group state, or {panda_joint1 = 0.5, ...}
    translate = [0, 0, 0.8]           # or transform = 4x4 (rigid), rotate = [rx, ry, rz]
    packages = {moveit_resources_panda_description = "description"}   # optional package:// folders

Paths are relative to the manifest's folder. Top-level keys must come before the first table.

Errors name the manifest, the line and what is wrong: ``cell.toml:12: [[object]] 2 ("base"):
unknown key 'trasform'; expected one of ...``. TOML syntax errors keep tomllib's line; JSON syntax
errors keep json's. Lines of semantic errors are found in the source text (the k-th ``[[object]]``
header, then the key's line inside that table); a construct the finder does not know (an inline
array of tables) falls back to the nearest line it can name.

Object selections (group members, check and allow sides) are checked against the loaded objects
by `Manifest.resolve`: a glob that matches no object is an error too, on its line. A group's
`select` is a query of IfcOpenShell's selector (`ifcopenshell.util.selector.filter_elements`:
classes, ``! IfcSpace`` to leave out, ``/Pset_WallCommon/.IsExternal=TRUE``, types, materials,
storeys), run on every IFC model of the scan; it takes the elements it returns and nothing else
(objects of other files never). Its syntax is checked when the manifest is read; a query that
selects no object is an error like a glob's.

Each [[check]] may give its own clearance, tolerance, fail_on, mode and group_within (the
command line's, then the top-level values, where it gives none); a named one is a clash set,
whose name its findings carry (reports, grouping, one BCF file per set). A pair that several
checks select answers to the strictest of them: the largest clearance, the smallest tolerance,
every fail_on, the most exact mode; it is reported under the first named one. A glob selects
an object by its name, or, for an element of an IFC model, by its class or one of its supertypes
(the object's `element.classes`, never parsed from its name; case-insensitive, as IFC's entity
names are): ``"IfcDuct*"`` takes every duct segment and fitting, ``"IfcWall"`` takes
IfcWallStandardCase too, as IfcClash's clash sets select elements.

SRDF: every ``<disable_collisions link1= link2= reason=>`` is an allowed pair with reason
"SRDF: <reason>". A link names the object of that exact name, or an object of a prefixed scene
("file.glb:<link>"); links without an object (a link with no collision geometry, like
panda_link8) are skipped and listed in `Resolved.notes`.
"""
from __future__ import annotations

import fnmatch
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from gjkcli.errors import InputError
from gjkcli.tolerances import DEFAULT, DEFAULT_FAIL_ON, FAIL_ON

__all__ = ["Manifest", "ManifestError", "Include", "ObjectSpec", "Group", "CheckSpec", "AllowSpec",
           "Resolved", "load", "parse", "FAIL_ON", "DEFAULT_FAIL_ON", "MODES", "rotation_matrix",
           "placement", "ALLOW_FLAG", "allow_flag", "with_allows", "from_data"]

# A check's mode, least exact first (gjkcli.pipeline.policy.MODES): a pair of several checks
# takes the last of theirs.
MODES = ("hull", "auto", "exact")

PRIMITIVES = ("box", "sphere", "capsule", "cylinder")

TOP_KEYS = ("tolerance", "clearance", "fail_on", "group_within", "srdf", "dask", "include", "object",
            "group", "check", "allow", "robot")
TABLE_KEYS = {
    "include": ("file", "transform", "split_bodies"),
    "object": ("name", "file", *PRIMITIVES, "transform", "translate", "rotate"),
    "group": ("name", "members", "select"),
    "check": ("name", "a", "b", "clearance", "tolerance", "fail_on", "mode", "group_within"),
    "allow": ("a", "b", "reason"),
    "robot": ("urdf", "name", "srdf", "joints", "transform", "translate", "rotate", "packages"),
}
# A Dask scheduler: "local" or "local:N" (a LocalCluster of N worker processes), or an address
# with its protocol ("tcp://host:8786", "tls://...", "inproc://...").
DASK_ADDRESS = re.compile(r"local(:[1-9][0-9]*)?|[a-z][a-z0-9+.-]*://\S+")

PRIMITIVE_KEYS = {"capsule": ("radius", "length"), "cylinder": ("radius", "height")}


class ManifestError(InputError):
    """A manifest that cannot be used: `source` is "<manifest>:<line>" when the line is known."""

    def __init__(self, path, line: int | None, message: str):
        self.path = str(path)
        self.line = line
        super().__init__(f"{path}:{line}" if line else path, message)

    def __reduce__(self):
        return (type(self), (self.path, self.line, self.message))


# -- the parsed manifest --------------------------------------------------------------------------


@dataclass(frozen=True)
class Include:
    """Every object of a scene file. transform : (4, 4) float64 or None; line : of its table."""

    file: Path
    transform: np.ndarray | None
    split_bodies: bool
    line: int


@dataclass(frozen=True)
class ObjectSpec:
    """One named object: a whole file (`file`) or a primitive (`primitive` with `params`).

    transform : (4, 4) float64, placing the file's coordinates or the primitive's frame.
    params : box {"extents": [x, y, z]}; sphere {"radius"}; capsule {"radius", "length"};
        cylinder {"radius", "height"}.
    """

    name: str
    file: Path | None
    primitive: str | None
    params: dict
    transform: np.ndarray
    line: int


@dataclass(frozen=True)
class Group:
    """Objects by name or IFC class globs (`members`) and IFC elements by a selector query
    (`select`, IfcOpenShell's syntax); either may be empty, not both."""

    name: str
    members: tuple
    line: int
    select: str | None = None


@dataclass(frozen=True)
class CheckSpec:
    """A clash set: the pairs of an object of `a` and one of `b`, with what it asks of them
    (None: the run's own)."""

    a: str
    b: str
    clearance: float | None
    line: int
    name: str | None = None
    tolerance: float | None = None
    fail_on: tuple | None = None
    mode: str | None = None
    group_within: float | None = None


# An SRDF's <disable_default_collisions link=L>: L may meet any other object.
ANY_LINK = "*"


@dataclass(frozen=True)
class AllowSpec:
    """A pair that may touch or overlap. `literal`: a and b are exact (SRDF link) names."""

    a: str
    b: str
    reason: str
    line: int
    source: str
    literal: bool = False


@dataclass(frozen=True)
class RobotSpec:
    """A URDF robot placed in the cell: its objects are "<name>:<link>".

    transform : (4, 4) rigid, the robot's root in the cell; joints : a group state's name,
    {joint: value}, or None (the default pose); packages : ((NAME, DIR), ...)
    """

    urdf: Path
    name: str
    srdf: Path | None
    joints: object
    transform: np.ndarray
    packages: tuple
    line: int


@dataclass(frozen=True)
class Manifest:
    path: Path
    tolerance: float | None = None
    clearance: float | None = None
    fail_on: tuple | None = None
    group_within: float | None = None
    srdf: Path | None = None
    dask: str | None = None
    includes: tuple = ()
    objects: tuple = ()
    groups: tuple = ()
    checks: tuple = ()
    allows: tuple = ()
    robots: tuple = ()

    def error(self, line: int | None, message: str) -> ManifestError:
        return ManifestError(self.path, line, message)

    def resolve(self, names, classes=None, elements=None) -> "Resolved":
        """Object selections against the loaded objects' names (in scan order).

        classes : per object, the IFC classes it is an instance of (its class, then its
            supertypes; empty for objects of other files), or None when no object is IFC.
        elements : per object, (IFC file, GlobalId) for an IFC element, else None; what a
            group's `select` query is run against (None: no object is IFC)

        Raises ManifestError when a group member, a check side or an allow side matches nothing.
        """
        return _resolve(self, list(names), None if classes is None else [tuple(c) for c in classes],
                        None if elements is None else list(elements))


@dataclass(frozen=True)
class Resolved:
    """Selections as boolean masks over the objects (n,).

    checks : ((in_a, in_b, clearance or None, line), ...); empty means all against all
    allows : ((in_a, in_b, reason, line), ...)
    notes : things said about the manifest (SRDF links without objects)
    sets : the CheckSpec of each entry of `checks`, in the same order (the clash sets' names,
        tolerances, fail_on, modes)
    """

    checks: tuple = ()
    allows: tuple = ()
    notes: tuple = field(default=())
    sets: tuple = ()


# -- reading --------------------------------------------------------------------------------------


def load(path) -> Manifest:
    """Read and validate a manifest file (TOML, or JSON when it ends in .json or starts with '{')."""
    path = Path(path)
    try:
        text = read_small_text(path, "manifest")
    except FileNotFoundError:
        raise ManifestError(path, None, "no such manifest file; check the path") from None
    except ValueError as exc:
        raise ManifestError(path, None, str(exc)) from None
    except (OSError, UnicodeDecodeError) as exc:
        why = getattr(exc, "strerror", None) or exc
        raise ManifestError(path, None, f"cannot read the manifest: {why}") from exc
    return parse(text, path)


# A manifest or a baseline is text a person or gjk wrote: far below this.
SMALL_TEXT_BYTES = 16 << 20


def read_small_text(path: Path, what: str) -> str:
    """The text of a small regular file (a manifest, a baseline, an SRDF): ValueError with the
    reason for a device, a pipe or a file over SMALL_TEXT_BYTES, which is no such file."""
    import stat

    info = path.stat()  # FileNotFoundError, OSError as they are
    if not stat.S_ISREG(info.st_mode):
        raise ValueError(f"is not a regular file (a device, a pipe or a folder); give a {what} file")
    if info.st_size > SMALL_TEXT_BYTES:
        raise ValueError(f"is {info.st_size >> 20} MiB: no {what} is that big; check the path")
    return path.read_text(encoding="utf-8")


def read_input_text(path: Path, what: str) -> str:
    """read_small_text, its failures an InputError naming the file ("no such CSV file; check the
    path", "cannot read it: ..."): for files a command reads in full before parsing them."""
    try:
        return read_small_text(path, what)
    except FileNotFoundError:
        raise InputError(path, f"no such {what} file; check the path") from None
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        raise InputError(path, f"cannot read it: {getattr(exc, 'strerror', None) or exc}") from None


def parse(text: str, path) -> Manifest:
    """Validate manifest text; `path` names it in errors and anchors relative paths."""
    path = Path(path)
    is_json = path.suffix.lower() == ".json" or text.lstrip().startswith("{")
    data = _parse_json(text, path) if is_json else _parse_toml(text, path)
    lines = _JsonLines(text) if is_json else _TomlLines(text)
    return _Builder(path, lines).build(data)


def from_data(data: dict, path) -> Manifest:
    """A manifest from tables already read (a settings file's, `gjkcli.config`): `path` names it
    in errors and anchors relative paths; errors name the table, not the line."""
    return _Builder(Path(path), _NoLines()).build(data)


class _NoLines:
    """Where things are, when the text is not at hand: nowhere known."""

    def top(self, key: str) -> None:
        return None

    def table(self, name: str, k: int) -> None:
        return None

    def key(self, name: str, k: int, key: str) -> None:
        return None


def _parse_toml(text: str, path: Path) -> dict:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    try:
        return tomllib.loads(text)
    except RecursionError:
        raise ManifestError(path, None, "not a manifest: nested deeper than any manifest is "
                                        "(arrays or tables inside each other)") from None
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        found = re.search(r"\(at line (\d+), column (\d+)\)", message)
        line = int(found.group(1)) if found else None
        message = re.sub(r"\s*\(at line \d+, column \d+\)", "", message)
        if found:
            message += f" (column {found.group(2)})"
        raise ManifestError(path, line, f"not valid TOML: {message}") from exc


def _parse_json(text: str, path: Path) -> dict:
    try:
        data = json.loads(text)
    except RecursionError:
        raise ManifestError(path, None, "not a manifest: nested deeper than any manifest is "
                                        "(arrays or objects inside each other)") from None
    except json.JSONDecodeError as exc:
        raise ManifestError(path, exc.lineno, f"not valid JSON: {exc.msg} (column {exc.colno})") from exc
    if not isinstance(data, dict):
        raise ManifestError(path, 1, "a JSON manifest must be an object with the manifest's keys")
    return data


class _TomlLines:
    """Where things are in TOML text: the k-th [[table]] header, a key inside it, a top-level key."""

    _HEADER = re.compile(r"^\s*\[\[\s*([A-Za-z0-9_-]+)\s*\]\]")
    _TABLE = re.compile(r"^\s*\[\s*([A-Za-z0-9_.-]+)\s*\]")
    _KEY = re.compile(r"^\s*\"?([A-Za-z0-9_-]+)\"?\s*[=.]")

    def __init__(self, text: str):
        self.lines = text.splitlines()
        self.headers: dict[str, list[int]] = {}
        self.first_table = len(self.lines) + 1
        for number, line in enumerate(self.lines, start=1):
            found = self._HEADER.match(line) or self._TABLE.match(line)
            if found:
                self.first_table = min(self.first_table, number)
                self.headers.setdefault(found.group(1), []).append(number)

    def top(self, key: str) -> int | None:
        for number in range(1, self.first_table):
            found = self._KEY.match(self.lines[number - 1])
            if found and found.group(1) == key:
                return number
        return self.headers.get(key, [None])[0]

    def table(self, name: str, k: int) -> int | None:
        """Line of the header of the k-th (from 0) [[name]] table."""
        headers = self.headers.get(name, [])
        return headers[k] if k < len(headers) else self.top(name)

    def key(self, name: str, k: int, key: str) -> int | None:
        start = self.table(name, k)
        if start is None:
            return None
        for number in range(start + 1, len(self.lines) + 1):
            line = self.lines[number - 1]
            if self._HEADER.match(line) or self._TABLE.match(line):
                break
            found = self._KEY.match(line)
            if found and found.group(1) == key:
                return number
        return start


class _JsonLines:
    """Where things are in JSON text, found by searching for the quoted keys."""

    def __init__(self, text: str):
        self.text = text

    def _line_of(self, offset: int) -> int:
        return self.text.count("\n", 0, offset) + 1

    def _find(self, key: str, start: int = 0) -> int | None:
        found = re.compile(r'"' + re.escape(key) + r'"\s*:').search(self.text, start)
        return found.start() if found else None

    def top(self, key: str) -> int | None:
        offset = self._find(key)
        return self._line_of(offset) if offset is not None else None

    def _entry(self, name: str, k: int) -> int | None:
        """Offset of the k-th '{' inside the array of key `name`."""
        offset = self._find(name)
        if offset is None:
            return None
        depth, count, pos = 0, -1, self.text.index(":", offset) + 1
        in_string = False
        while pos < len(self.text):
            ch = self.text[pos]
            if in_string:
                if ch == "\\":
                    pos += 1
                elif ch == '"':
                    in_string = False
            elif ch == '"':
                in_string = True
            elif ch in "[{":
                depth += 1
                if ch == "{" and depth == 2:
                    count += 1
                    if count == k:
                        return pos
            elif ch in "]}":
                depth -= 1
                if depth <= 0:
                    break
            pos += 1
        return offset

    def table(self, name: str, k: int) -> int | None:
        offset = self._entry(name, k)
        return self._line_of(offset) if offset is not None else None

    def key(self, name: str, k: int, key: str) -> int | None:
        offset = self._entry(name, k)
        if offset is None:
            return None
        inner = self._find(key, offset)
        end = self.text.find("}", offset)
        if inner is not None and (end < 0 or inner < end or key in ("capsule", "cylinder")):
            return self._line_of(inner)
        return self._line_of(offset)


class _Builder:
    """Turns the parsed dict into a Manifest, raising ManifestError with a line on any problem."""

    def __init__(self, path: Path, lines):
        self.path = path
        self.base = path.parent
        self.lines = lines

    def fail(self, line, message):
        raise ManifestError(self.path, line, message)

    # -- top level

    def build(self, data: dict) -> Manifest:
        for key in data:
            if key not in TOP_KEYS:
                hint = ""
                if key in {k for keys in TABLE_KEYS.values() for k in keys}:
                    hint = " (a key of a table? tables are written [[include]], [[object]], ...)"
                self.fail(self.lines.top(key), f"unknown top-level key '{key}'{hint}; expected one of "
                                               f"{', '.join(TOP_KEYS)}")
        tolerance = self.length(data, "tolerance", self.lines.top("tolerance"), "tolerance")
        clearance = self.length(data, "clearance", self.lines.top("clearance"), "clearance")
        fail_on = None
        if "fail_on" in data:
            fail_on = self.fail_on(data["fail_on"], self.lines.top("fail_on"))
        group_within = self.length(data, "group_within", self.lines.top("group_within"), "group_within")
        srdf = None
        if "srdf" in data:
            srdf = self.file(data["srdf"], self.lines.top("srdf"), "srdf")
        dask = None
        if "dask" in data:
            dask = data["dask"]
            if not isinstance(dask, str) or not DASK_ADDRESS.fullmatch(dask):
                self.fail(self.lines.top("dask"), f"dask must be a scheduler address like "
                                                  f"'tcp://host:8786', or 'local' or 'local:N', got "
                                                  f"{dask!r}")
        tables = {name: self.tables(data, name) for name in TABLE_KEYS}
        includes = tuple(self.include(t, k) for k, t in enumerate(tables["include"]))
        objects = tuple(self.object(t, k) for k, t in enumerate(tables["object"]))
        groups = tuple(self.group(t, k) for k, t in enumerate(tables["group"]))
        checks = tuple(self.check(t, k) for k, t in enumerate(tables["check"]))
        allows = tuple(self.allow(t, k) for k, t in enumerate(tables["allow"]))
        robots = tuple(self.robot(t, k) for k, t in enumerate(tables["robot"]))
        self.unique(objects, "object", "objects")
        self.unique(robots, "robot", "robots")
        self.unique(groups, "group", "groups")
        if srdf is not None:
            allows += tuple(read_srdf(srdf, self.path, self.lines.top("srdf")))
        return Manifest(path=self.path, tolerance=tolerance, clearance=clearance, fail_on=fail_on,
                        group_within=group_within, srdf=srdf, dask=dask, includes=includes, objects=objects, groups=groups, checks=checks,
                        allows=allows, robots=robots)

    def tables(self, data: dict, name: str) -> list:
        value = data.get(name, [])
        if isinstance(value, dict):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(t, dict) for t in value):
            self.fail(self.lines.top(name), f"'{name}' must be an array of tables, written [[{name}]]")
        for k, table in enumerate(value):
            for key in table:
                if key not in TABLE_KEYS[name]:
                    self.fail(self.lines.key(name, k, key),
                              f"{self.where(name, k, table)}: unknown key '{key}'; expected one of "
                              f"{', '.join(TABLE_KEYS[name])}")
        return value

    @staticmethod
    def where(name: str, k: int, table: dict) -> str:
        label = table.get("name") if isinstance(table.get("name"), str) else None
        return f"[[{name}]] {k + 1}" + (f" ({label!r})" if label else "")

    def unique(self, items, name: str, plural: str):
        seen = {}
        for k, item in enumerate(items):
            if item.name in seen:
                self.fail(item.line, f"[[{name}]] {k + 1}: the name {item.name!r} is taken by "
                                     f"[[{name}]] {seen[item.name] + 1}; {plural} need distinct names")
            seen[item.name] = k

    # -- values

    def number(self, value, line, what) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            self.fail(line, f"{what} must be a finite number, got {value!r}")
        return float(value)

    def length(self, table: dict, key: str, line, what):
        """A length: a number in the model's units, or a string with a unit ("0.5 mm", a
        `gjkcli.units.Length` the run converts into the scene's unit)."""
        if key not in table:
            return None
        if isinstance(table[key], str):
            from gjkcli.units import UnitError, parse_length

            try:
                value = parse_length(table[key].strip())
            except UnitError as e:
                self.fail(line, f"{what} must be a finite number, or a length with a unit "
                                f"(\"0.5 mm\"), got {table[key]!r}: {e}")
            return value.value if value.unit is None else value
        value = self.number(table[key], line, what)
        if value < 0:
            self.fail(line, f"{what} must be >= 0, got {value!r}")
        return value

    def positive(self, value, line, what) -> float:
        value = self.number(value, line, what)
        if value <= 0:
            self.fail(line, f"{what} must be > 0, got {value!r}")
        return value

    def text(self, table: dict, key: str, line, what, required=True) -> str | None:
        if key not in table:
            if required:
                self.fail(line, f"{what}: the key '{key}' is missing")
            return None
        value = table[key]
        if not isinstance(value, str) or not value:
            self.fail(line, f"{what}: '{key}' must be a non-empty string, got {value!r}")
        return value

    def vector(self, value, line, what) -> np.ndarray:
        if not isinstance(value, list) or len(value) != 3:
            self.fail(line, f"{what} must be a list of 3 numbers, got {value!r}")
        return np.array([self.number(x, line, what) for x in value])

    def fail_on(self, value, line) -> tuple:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            self.fail(line, f"fail_on must be a list of strings from {', '.join(FAIL_ON)}, got {value!r}")
        for v in value:
            if v not in FAIL_ON:
                self.fail(line, f"fail_on: unknown finding {v!r}; use {', '.join(FAIL_ON)}")
        return tuple(dict.fromkeys(value))

    def file(self, value, line, what) -> Path:
        if not isinstance(value, str) or not value:
            self.fail(line, f"{what} must be a file path (a string), got {value!r}")
        resolved = (self.base / value) if not Path(value).is_absolute() else Path(value)
        if not resolved.exists():
            self.fail(line, f"{what}: no such file {value!r} (paths are relative to the manifest's "
                            f"folder, {self.base})")
        return resolved

    def transform(self, value, line, what) -> np.ndarray:
        rows = value
        if isinstance(value, list) and len(value) == 16 and not any(isinstance(x, list) for x in value):
            rows = [value[4 * r: 4 * r + 4] for r in range(4)]
        if not (isinstance(rows, list) and len(rows) == 4
                and all(isinstance(r, list) and len(r) == 4 for r in rows)):
            self.fail(line, f"{what} must be a 4x4 matrix, row-major: a list of 4 rows of 4 numbers")
        T = np.array([[self.number(x, line, what) for x in r] for r in rows])
        if not np.allclose(T[3], [0.0, 0.0, 0.0, 1.0], rtol=0.0, atol=DEFAULT.rigid_rel):
            self.fail(line, f"{what}: the last row must be [0, 0, 0, 1], got {T[3].tolist()}")
        if abs(np.linalg.det(T[:3, :3])) < 1e-300:
            self.fail(line, f"{what}: the matrix is singular (it flattens the geometry)")
        return T

    # -- tables

    def include(self, table: dict, k: int) -> Include:
        where = self.where("include", k, table)
        line = self.lines.table("include", k)
        if "file" not in table:
            self.fail(line, f"{where}: the key 'file' is missing")
        path = self.file(table["file"], self.lines.key("include", k, "file"), f"{where}: file")
        transform = None
        if "transform" in table:
            transform = self.transform(table["transform"], self.lines.key("include", k, "transform"),
                                       f"{where}: transform")
        split = table.get("split_bodies", False)
        if not isinstance(split, bool):
            self.fail(self.lines.key("include", k, "split_bodies"),
                      f"{where}: split_bodies must be true or false, got {split!r}")
        return Include(file=path, transform=transform, split_bodies=split, line=line)

    def object(self, table: dict, k: int) -> ObjectSpec:
        where = self.where("object", k, table)
        line = self.lines.table("object", k)
        name = self.text(table, "name", self.lines.key("object", k, "name"), where)
        given = [key for key in ("file", *PRIMITIVES) if key in table]
        if len(given) != 1:
            what = "neither" if not given else "both " + " and ".join(given)
            self.fail(line, f"{where}: an object is a file or one primitive "
                            f"({', '.join(PRIMITIVES)}), {what} given")
        kind = given[0]
        key_line = self.lines.key("object", k, kind)
        file, primitive, params = None, None, {}
        if kind == "file":
            file = self.file(table["file"], key_line, f"{where}: file")
        else:
            primitive = kind
            params = self.primitive(kind, table[kind], key_line, where)
        return ObjectSpec(name=name, file=file, primitive=primitive, params=params,
                          transform=self.placement(table, k, where, rigid=primitive is not None),
                          line=line)

    def primitive(self, kind: str, value, line, where) -> dict:
        if kind == "box":
            extents = self.vector(value, line, f"{where}: box extents")
            if np.any(extents <= 0):
                self.fail(line, f"{where}: box extents must be > 0, got {extents.tolist()}")
            return {"extents": extents.tolist()}
        if kind == "sphere":
            return {"radius": self.positive(value, line, f"{where}: sphere radius")}
        keys = PRIMITIVE_KEYS[kind]
        if not isinstance(value, dict) or set(value) != set(keys):
            got = sorted(value) if isinstance(value, dict) else repr(value)
            self.fail(line, f"{where}: {kind} must be a table with exactly the keys "
                            f"{', '.join(keys)}, got {got}")
        return {key: self.positive(value[key], line, f"{where}: {kind} {key}") for key in keys}

    def robot(self, table: dict, k: int) -> RobotSpec:
        where = self.where("robot", k, table)
        line = self.lines.table("robot", k)
        if "urdf" not in table:
            self.fail(line, f"{where}: the key 'urdf' is missing")
        urdf = self.file(table["urdf"], self.lines.key("robot", k, "urdf"), f"{where}: urdf")
        name = self.text(table, "name", self.lines.key("robot", k, "name"), where, required=False) or urdf.stem
        srdf = None
        if "srdf" in table:
            srdf = self.file(table["srdf"], self.lines.key("robot", k, "srdf"), f"{where}: srdf")
        joints = table.get("joints")
        jline = self.lines.key("robot", k, "joints")
        if isinstance(joints, dict):
            joints = {str(j): self.number(v, jline, f"{where}: joints.{j}") for j, v in joints.items()}
        elif joints is not None and not (isinstance(joints, str) and joints):
            self.fail(jline, f"{where}: joints must be a group state's name or a table of joint "
                             f"values, got {joints!r}")
        packages = table.get("packages", {})
        pline = self.lines.key("robot", k, "packages")
        if not isinstance(packages, dict) or not all(isinstance(v, str) and v for v in packages.values()):
            self.fail(pline, f"{where}: packages must be a table NAME = \"folder\", got {packages!r}")
        folders = tuple((str(n), str(self.base / v) if not Path(v).is_absolute() else v)
                        for n, v in packages.items())
        return RobotSpec(urdf=urdf, name=name, srdf=srdf, joints=joints,
                         transform=self.placement(table, k, where, rigid=True, name="robot"),
                         packages=folders, line=line)

    def placement(self, table: dict, k: int, where: str, rigid: bool, name: str = "object") -> np.ndarray:
        if "transform" in table:
            line = self.lines.key(name, k, "transform")
            if "translate" in table or "rotate" in table:
                self.fail(line, f"{where}: give transform, or translate and rotate, not both")
            T = self.transform(table["transform"], line, f"{where}: transform")
            if rigid:
                R = T[:3, :3]
                if not (np.allclose(R.T @ R, np.eye(3), rtol=0.0, atol=DEFAULT.rigid_rel) and np.linalg.det(R) > 0):
                    what = ("a robot takes a rigid transform (rotation and translation only)" if name == "robot"
                            else "a primitive takes a rigid transform (rotation and translation "
                                 "only); give the size in the primitive instead")
                    self.fail(line, f"{where}: {what}")
            return T
        translate = np.zeros(3)
        rotate = np.zeros(3)
        if "translate" in table:
            translate = self.vector(table["translate"], self.lines.key(name, k, "translate"),
                                    f"{where}: translate")
        if "rotate" in table:
            rotate = self.vector(table["rotate"], self.lines.key(name, k, "rotate"),
                                 f"{where}: rotate (degrees)")
        return placement(translate, rotate)

    def group(self, table: dict, k: int) -> Group:
        where = self.where("group", k, table)
        name = self.text(table, "name", self.lines.key("group", k, "name"), where)
        line = self.lines.key("group", k, "members")
        members = table.get("members")
        select = self.text(table, "select", self.lines.key("group", k, "select"), where, required=False)
        if members is None and select is None:
            self.fail(self.lines.table("group", k), f"{where}: the key 'members' is missing (globs; "
                                                    f"or 'select', an IFC selector query)")
        if members is None:
            members = []
        elif isinstance(members, str):
            members = [members]
        if not isinstance(members, list) or not (members or select) or \
                not all(isinstance(m, str) and m for m in members):
            self.fail(line, f"{where}: members must be a non-empty list of globs, got {members!r}")
        if select is not None:
            self.selector(select, self.lines.key("group", k, "select"), where)
        return Group(name=name, members=tuple(members), line=self.lines.table("group", k), select=select)

    def selector(self, query: str, line, where) -> None:
        """A syntax error in an IFC selector query, on its line (IfcOpenShell's own grammar)."""
        from gjkcli.extras import message, missing

        try:
            import ifcopenshell.util.selector as selector
        except ImportError as exc:  # a core install: gjk[bim] brings it, as for an IFC file
            if not missing("bim", exc):
                raise
            self.fail(line, f"{where}: {message('a group with select', 'bim')}")
        try:
            selector.filter_elements_grammar.parse(query)
        except Exception as exc:  # noqa: BLE001 - lark's several parse errors
            why = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            self.fail(line, f"{where}: select {query!r} is not a selector query IfcOpenShell "
                            f"reads ({why}); see ifcopenshell.util.selector")

    def check(self, table: dict, k: int) -> CheckSpec:
        where = self.where("check", k, table)
        line = self.lines.table("check", k)
        a = self.text(table, "a", self.lines.key("check", k, "a") if "a" in table else line, where)
        b = self.text(table, "b", self.lines.key("check", k, "b") if "b" in table else line, where)
        name = self.text(table, "name", self.lines.key("check", k, "name"), where, required=False)
        lengths = {key: self.length(table, key, self.lines.key("check", k, key), f"{where}: {key}")
                   for key in ("clearance", "tolerance", "group_within")}
        fail_on = None
        if "fail_on" in table:
            fail_on = self.fail_on(table["fail_on"], self.lines.key("check", k, "fail_on"))
        mode = table.get("mode")
        if mode is not None and mode not in MODES:
            self.fail(self.lines.key("check", k, "mode"), f"{where}: mode must be one of "
                                                          f"{', '.join(MODES)}, got {mode!r}")
        return CheckSpec(a=a, b=b, line=line, name=name, fail_on=fail_on, mode=mode,
                         **lengths)

    def allow(self, table: dict, k: int) -> AllowSpec:
        where = self.where("allow", k, table)
        line = self.lines.table("allow", k)
        a, b, reason = (self.text(table, key, self.lines.key("allow", k, key) if key in table else line, where)
                        for key in ("a", "b", "reason"))
        return AllowSpec(a=a, b=b, reason=reason, line=line, source=str(self.path))


# -- allowed pairs from the command line ---------------------------------------------------------

# The source of an allowed pair given by a flag (`AllowSpec.source`): its errors name the flag.
ALLOW_FLAG = "--allow"


def _split_outside_brackets(text: str, sep: str) -> tuple[str, str | None]:
    """(before, after) at the first `sep` not inside a glob's [...] (after: None without one)."""
    depth = 0
    for k, ch in enumerate(text):
        if ch == "[":
            depth += 1
        elif ch == "]" and depth:
            depth -= 1
        elif ch == sep and not depth:
            return text[:k], text[k + 1:]
    return text, None


def allow_flag(value: str) -> AllowSpec:
    """An `--allow A,B[:REASON]` value as an allowed pair: A and B are globs (or group names)
    matched as a manifest's [[allow]] sides; the reason starts at the first ':' after the comma
    outside [...] (so ``a.glb[:]bolt`` names the object ``a.glb:bolt``). ValueError with what to
    write instead when the value is not of that form."""
    a, rest = _split_outside_brackets(value, ",")
    b, reason = _split_outside_brackets(rest or "", ":")
    a, b = a.strip(), b.strip()
    if rest is None or not a or not b or "," in b:
        raise ValueError(f"{value!r}: give two objects (names or globs) and an optional reason, "
                         f"as A,B or A,B:REASON (e.g. 'gripper*,part:grasp')")
    reason = (reason or "").strip() or f"{ALLOW_FLAG} {a},{b}"
    return AllowSpec(a=a, b=b, reason=reason, line=0, source=ALLOW_FLAG)


def with_allows(m: "Manifest | None", allows) -> "Manifest | None":
    """The manifest with `allows` (`allow_flag`'s) after its own [[allow]] tables, so that a pair
    both allow carries the manifest's reason; a manifest of them alone when there is none."""
    allows = tuple(allows or ())
    if not allows:
        return m
    if m is None:
        return Manifest(path=Path(ALLOW_FLAG), allows=allows)
    import dataclasses

    return dataclasses.replace(m, allows=m.allows + allows)


# -- placement ------------------------------------------------------------------------------------


def rotation_matrix(degrees) -> np.ndarray:
    """Rotation by rx, ry, rz degrees about the fixed x, y and z axes, in that order: Rz Ry Rx."""
    rx, ry, rz = np.radians(np.asarray(degrees, dtype=np.float64))
    cx, sx, cy, sy, cz, sz = np.cos(rx), np.sin(rx), np.cos(ry), np.sin(ry), np.cos(rz), np.sin(rz)
    Rx = np.array([[1, 0, 0], [0, cx, -sx], [0, sx, cx]])
    Ry = np.array([[cy, 0, sy], [0, 1, 0], [-sy, 0, cy]])
    Rz = np.array([[cz, -sz, 0], [sz, cz, 0], [0, 0, 1]])
    return Rz @ Ry @ Rx


def placement(translate=(0.0, 0.0, 0.0), rotate=(0.0, 0.0, 0.0)) -> np.ndarray:
    """(4, 4): rotate (degrees, fixed axes x then y then z), then translate."""
    T = np.eye(4)
    T[:3, :3] = rotation_matrix(rotate)
    T[:3, 3] = np.asarray(translate, dtype=np.float64)
    return T


# -- SRDF -----------------------------------------------------------------------------------------


def read_srdf(path: Path, manifest: Path, line: int | None) -> list[AllowSpec]:
    """The <disable_collisions> entries of a MoveIt SRDF as literal allowed pairs, less its
    <enable_collisions> pairs; a <disable_default_collisions link=L> as (L, `ANY_LINK`): L with
    every other object (a robot's own SRDF is read in full by `gjkcli.scene.urdf`)."""
    from lxml import etree

    # entities are never expanded, no DTD is loaded, nothing is fetched
    parser = etree.XMLParser(resolve_entities=False, load_dtd=False, no_network=True)
    try:
        root = etree.fromstring(read_small_text(Path(path), "SRDF").encode("utf-8"), parser)
    except (OSError, ValueError, etree.XMLSyntaxError) as exc:
        why = getattr(exc, "strerror", None) or exc
        raise ManifestError(manifest, line, f"srdf: cannot read {path}: {why}") from exc
    allows = []
    enabled = {frozenset((e.get("link1"), e.get("link2"))) for e in root.iter("enable_collisions")}
    for element in root.iter("disable_default_collisions"):
        if element.get("link"):
            allows.append(AllowSpec(a=element.get("link"), b=ANY_LINK, reason="SRDF: Default link",
                                    line=element.sourceline or 0, source=str(path), literal=True))
    for element in root.iter("disable_collisions"):
        a, b = element.get("link1"), element.get("link2")
        if frozenset((a, b)) in enabled:
            continue
        if not a or not b:
            raise ManifestError(manifest, line, f"srdf: {path}:{element.sourceline}: "
                                                f"<disable_collisions> needs link1 and link2")
        reason = element.get("reason") or "disabled"
        allows.append(AllowSpec(a=a, b=b, reason=f"SRDF: {reason}", line=element.sourceline or 0,
                                source=str(path), literal=True))
    return allows


# -- resolution against object names --------------------------------------------------------------


def match(pattern: str, names: list[str]) -> np.ndarray:
    """(n,) bool: names equal to the pattern or matching it as a glob (case-sensitive)."""
    if not any(ch in pattern for ch in "*?["):
        return np.fromiter((name == pattern for name in names), dtype=bool, count=len(names))
    rx = re.compile(fnmatch.translate(pattern))
    return np.fromiter((name == pattern or rx.match(name) is not None for name in names),
                       dtype=bool, count=len(names))


def match_link(link: str, names: list[str]) -> np.ndarray:
    """(n,) bool: objects named `link`, "<file>:<link>" from a prefixed scene, or a URDF link's
    k-th collision element ("<link>:<k>", prefixed or not)."""
    rx = re.compile(r"(?:.*:)?" + re.escape(link) + r"(?::\d+)?")
    return np.fromiter((rx.fullmatch(name) is not None for name in names),
                       dtype=bool, count=len(names))


def match_class(pattern: str, classes: list[tuple] | None) -> np.ndarray | None:
    """(n,) bool: objects whose IFC class or a supertype matches the pattern (a glob, or a name),
    ignoring case; None when no object has classes."""
    if not classes or not any(classes):
        return None
    rx = re.compile(fnmatch.translate(pattern), re.IGNORECASE)
    return np.fromiter((any(rx.match(c) is not None for c in cs) for cs in classes),
                       dtype=bool, count=len(classes))


def match_selector(queries: list[str], elements: list | None) -> dict:
    """{query: (n,) bool}: the IFC elements each IfcOpenShell selector query returns, run on
    every IFC file the objects come from (each file opened once); objects that are not IFC
    elements are never selected."""
    n = len(elements or ())
    out = {q: np.zeros(n, dtype=bool) for q in queries}
    if not queries or not elements:
        return out
    from gjkcli.mesh import ifc

    by_file: dict = {}
    for k, e in enumerate(elements):
        if e is not None and e[1]:
            by_file.setdefault(str(e[0]), []).append(k)
    for file, ks in by_file.items():
        chosen = ifc.select(file, queries)
        for q in queries:
            out[q][ks] = [elements[k][1] in chosen[q] for k in ks]
    return out


def _resolve(m: Manifest, names: list[str], classes: list[tuple] | None = None,
             elements: list | None = None) -> Resolved:
    def select(pattern: str) -> np.ndarray:
        hit = match(pattern, names)
        by_class = match_class(pattern, classes)
        return hit if by_class is None else hit | by_class

    queried = match_selector([g.select for g in m.groups if g.select], elements)
    groups = {}
    for g in m.groups:
        mask = np.zeros(len(names), dtype=bool)
        for pattern in g.members:
            hit = select(pattern)
            if not hit.any():
                raise m.error(g.line, f"[[group]] {g.name!r}: member {pattern!r} matches no object")
            mask |= hit
        if g.select:
            hit = queried.get(g.select, np.zeros(len(names), dtype=bool))
            if not hit.any():
                what = "IFC element of the scan" if elements and any(elements) else \
                    "object: no object of the scan is an IFC element"
                raise m.error(g.line, f"[[group]] {g.name!r}: select {g.select!r} matches no {what}")
            mask |= hit
        groups[g.name] = mask

    def side(pattern: str, line: int, what: str) -> np.ndarray:
        if pattern in groups:
            return groups[pattern]
        hit = select(pattern)
        if not hit.any():
            raise m.error(line, f"{what}: {pattern!r} is neither a group nor a glob matching an object")
        return hit

    checks = tuple((side(c.a, c.line, f"[[check]] {k + 1}"), side(c.b, c.line, f"[[check]] {k + 1}"),
                    c.clearance, c.line) for k, c in enumerate(m.checks))
    allows, notes, missing = [], [], []
    for k, a in enumerate(m.allows):
        if a.literal:
            in_a = match_link(a.a, names)
            in_b = ~in_a if a.b == ANY_LINK else match_link(a.b, names)
            for link, hit in ((a.a, in_a), (a.b, in_b)):
                if not hit.any():
                    missing.append(link)
            if in_a.any() and in_b.any():
                allows.append((in_a, in_b, a.reason, a.line))
            continue
        if a.source == ALLOW_FLAG:  # a flag's side that matches nothing is the flag's error
            for pattern in (a.a, a.b):
                if pattern not in groups and not select(pattern).any():
                    raise ManifestError(ALLOW_FLAG, None, f"'{a.a},{a.b}': {pattern!r} is neither a "
                                                          f"group nor a glob matching an object")
        allows.append((side(a.a, a.line, f"[[allow]] {k + 1}"), side(a.b, a.line, f"[[allow]] {k + 1}"),
                       a.reason, a.line))
    if missing:
        links = ", ".join(sorted(set(missing)))
        notes.append(f"SRDF links without an object (their pairs are skipped): {links}")
    return Resolved(checks=checks, allows=tuple(allows), notes=tuple(notes), sets=tuple(m.checks))
