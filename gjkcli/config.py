"""gjk's settings, found as ruff finds its own: `[tool.gjk]` in a `pyproject.toml`, or a
`gjk.toml`, the nearest to the working folder first.

From the working folder up to the root, the first folder holding a `gjk.toml`, or a
`pyproject.toml` with a `[tool.gjk]` table (a `gjk.toml` first in one folder, as ruff prefers
`ruff.toml`), gives the settings; a `pyproject.toml` without the table is passed over. `gjk scan
--config FILE` reads FILE instead (a `gjk.toml`, or a `pyproject.toml`'s `[tool.gjk]`), `--isolated`
reads none. Options on the command line override the settings.

Keys (any other is an error naming the file and the line, so that a typo is never dropped)::

    files = ["parts/", "cell.glb"]     # what `gjk scan` with no argument scans
    tolerance = "0.01 mm"              # the options, as the command line writes them: lengths
    clearance = 0.5                    #   with a unit or in the model's units
    group_within = "3 m"
    fail_on = ["collision", "clearance"]
    mode = "auto"                      # auto, hull, exact
    format = "sarif"                   # table, json, junit, github, sarif, bcf
    output = "gjk.sarif"
    color = "auto"
    units = "mm"                       # the unit of inputs that state none (--units)
    together = false                   # the files as one world (--together)
    recurse = true                     # false: --no-recurse
    split_bodies = false
    all_pairs = false
    show_allowed = false
    baseline = "gjk-baseline.json"
    jobs = 2
    dask = "local:4"
    limits = {triangles = 50000000, pngs = 10}   # --limit NAME=VALUE
    cache = true                       # false: --no-cache
    cache_dir = ".gjk_cache"           # --cache-dir (default: beside this file)

    # and every table of a manifest (gjkcli.scene.manifest): srdf, [[include]], [[object]],
    # [[group]], [[check]], [[allow]], [[robot]]

Paths (files, output, baseline and the manifest's) are relative to the settings file's folder.
`gjk scan` with no file scans what the settings name: `files`, and the manifest's tables; a
settings file whose tables place objects ([[include]], [[object]], [[robot]]) is a scene, scanned
as one world as a manifest is. Given files, `gjk scan` scans those with the settings' options,
without their manifest tables.

A bottom layer for the command line only: the standard library, and the manifest's reader for the
manifest's tables. The values are handed to the command line as it would have parsed them
(click's `default_map`), so an option and a setting are checked by the same code.
"""
from __future__ import annotations

import contextlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from gjkcli.errors import InputError

__all__ = ["Settings", "Defaults", "ConfigError", "OPTIONS", "MANIFEST_KEYS", "find", "load", "settings"]


# setting -> (the command's parameter name, the kind of value)
OPTIONS = {
    "tolerance": ("tolerance", "length"),
    "clearance": ("clearance", "length"),
    "group_within": ("group_within", "length"),
    "fail_on": ("fail_on", "words"),
    "mode": ("mode", "word"),
    "format": ("output_format", "word"),
    "output": ("output", "path"),
    "color": ("color", "word"),
    "units": ("units", "word"),
    "together": ("together", "flag"),
    "recurse": ("no_recurse", "not flag"),
    "split_bodies": ("split_bodies", "flag"),
    "all_pairs": ("all_pairs", "flag"),
    "show_allowed": ("show_allowed", "flag"),
    "baseline": ("baseline", "path"),
    "jobs": ("jobs", "count"),
    "dask": ("dask", "word"),
    "limits": ("limit", "limits"),
    "cache": ("no_cache", "not flag"),
    "cache_dir": ("cache_dir", "path"),
}
# The manifest's own keys a settings file may hold (its tolerance, clearance, fail_on,
# group_within and dask are the options above).
MANIFEST_KEYS = ("srdf", "include", "object", "group", "check", "allow", "robot")
KEYS = ("files", *OPTIONS, *MANIFEST_KEYS)


class ConfigError(InputError):
    """A settings file that cannot be used: `source` is "<file>:<line>" when the line is known."""

    def __init__(self, path, line: int | None, message: str):
        self.path = str(path)
        self.line = line
        super().__init__(f"{path}:{line}" if line else str(path), message)

    def __reduce__(self):
        return (type(self), (self.path, self.line, self.message))


@dataclass(frozen=True)
class Settings:
    """What a settings file says.

    path : the file read (None: none was found, or --isolated)
    options : the command's parameter name -> its value as the command line gives it (strings,
        tuples of strings for repeatable options, booleans for flags, int for jobs)
    files : what `gjk scan` with no argument scans, relative to the working folder where they can be
    manifest : a `gjkcli.scene.manifest.Manifest` of the file's manifest tables, or None
    """

    path: Path | None = None
    options: dict = field(default_factory=dict)
    files: tuple = ()
    manifest: object = None

    @property
    def scene(self) -> bool:
        """The file names objects: its scan is one world, as a manifest's is."""
        m = self.manifest
        return m is not None and bool(m.includes or m.objects or m.robots)


def find(start=None) -> Path | None:
    """The nearest settings file from `start` (the working folder) up to the root, or None: in
    one folder the first of `gjkcli.mesh.SETTINGS_FILES` that holds gjk's settings."""
    from gjkcli.mesh import SETTINGS_FILES

    try:
        folder = Path(start if start is not None else os.getcwd()).absolute()
    except OSError:  # the working folder was removed under the process: nothing to find
        return None
    for here in (folder, *folder.parents):
        for name in SETTINGS_FILES:
            candidate = here / name
            try:
                if not candidate.is_file():
                    continue
            except OSError:
                continue
            if name == "gjk.toml" or _has_gjk_table(candidate):
                return candidate
    return None


def _has_gjk_table(path: Path) -> bool:
    """A pyproject.toml with a [tool.gjk] table (by its text: a broken one is reported on load)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return re.search(r"^\s*\[\[?\s*tool\s*\.\s*gjk\s*[\].]", text, re.MULTILINE) is not None


def settings(config=None, isolated: bool = False, start=None) -> Settings:
    """The settings of a run: `config` (a file the user named), none with `isolated`, else the
    nearest found from `start` (the working folder)."""
    if isolated:
        return Settings()
    if config is not None:
        return load(config)
    found = find(start)
    return load(found) if found is not None else Settings()


def load(path) -> Settings:
    """Read and check a settings file: a gjk.toml, or a pyproject.toml's [tool.gjk] (any other
    name is read as a gjk.toml). ConfigError naming the file, and the line where it is known."""
    from gjkcli.scene.manifest import read_small_text

    path = Path(path)
    if path.is_absolute():  # named as the working folder reaches it, when that is shorter
        with contextlib.suppress(ValueError, OSError):
            relative = os.path.relpath(path)
            if len(relative) < len(str(path)):
                path = Path(relative)
    try:
        text = read_small_text(path, "settings")
    except FileNotFoundError:
        raise ConfigError(path, None, "no such settings file; check the path") from None
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        raise ConfigError(path, None, f"cannot read it: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        at = re.search(r"\(at line (\d+), column (\d+)\)", message)
        message = re.sub(r"\s*\(at line \d+, column \d+\)", "", message)
        raise ConfigError(path, int(at.group(1)) if at else None, f"not valid TOML: {message}") from None
    except RecursionError:
        raise ConfigError(path, None, "not valid TOML: nested deeper than any settings are") from None
    pyproject = path.name == "pyproject.toml"
    if pyproject:
        tool = data.get("tool")
        data = tool.get("gjk") if isinstance(tool, dict) else None
        if not isinstance(data, dict):
            raise ConfigError(path, None, "has no [tool.gjk] table: give a file with gjk's settings")
    return _Reader(path, text, pyproject).read(data)


class _Reader:
    """A settings file's table to Settings, every value checked (ConfigError with its line)."""

    def __init__(self, path: Path, text: str, pyproject: bool):
        self.path = path
        self.base = path.absolute().parent
        self.lines = text.splitlines()
        self.start = 0  # the line the settings start after: [tool.gjk]'s header in a pyproject
        if pyproject:
            header = re.compile(r"^\s*\[\s*tool\s*\.\s*gjk\s*\]")
            self.start = next((k + 1 for k, line in enumerate(self.lines) if header.match(line)), 0)

    def line(self, key: str) -> int | None:
        """The line of a top-level key (its first `key =` after the settings start)."""
        pattern = re.compile(r"^\s*\"?" + re.escape(key) + r"\"?\s*=")
        for k in range(self.start, len(self.lines)):
            if pattern.match(self.lines[k]):
                return k + 1
        return None

    def fail(self, key: str, message: str):
        raise ConfigError(self.path, self.line(key), message)

    def read(self, data: dict) -> Settings:
        import difflib

        for key in data:
            if key not in KEYS:
                near = difflib.get_close_matches(key, KEYS, n=1)
                hint = f"; did you mean '{near[0]}'?" if near else f"; expected one of {', '.join(KEYS)}"
                self.fail(key, f"unknown key '{key}'{hint}")
        options = {}
        for key, (name, kind) in OPTIONS.items():
            if key in data:
                options[name] = self.value(key, kind, data[key])
        files = ()
        if "files" in data:
            files = self.value("files", "paths", data["files"])
        manifest = None
        tables = {k: data[k] for k in MANIFEST_KEYS if k in data}
        if tables:
            from gjkcli.scene.manifest import ManifestError, from_data

            try:
                manifest = from_data(tables, self.path)
            except ManifestError as exc:  # its line is unknown here: the message names the table
                raise ConfigError(self.path, exc.line, exc.message) from None
        return Settings(path=self.path, options=options, files=files, manifest=manifest)

    def value(self, key: str, kind: str, v):
        """A setting as the command line writes it."""
        if kind in ("flag", "not flag"):
            if not isinstance(v, bool):
                self.fail(key, f"{key} is true or false, got {v!r}")
            return v if kind == "flag" else not v
        if kind == "length":
            if isinstance(v, bool) or not isinstance(v, (int, float, str)):
                self.fail(key, f"{key} is a number in the model's units or a string with a unit "
                               f"(\"0.1 mm\"), got {v!r}")
            return v if isinstance(v, str) else repr(v)
        if kind == "word":
            if not isinstance(v, str):
                self.fail(key, f"{key} is a string, got {v!r}")
            return v
        if kind == "words":
            words = [v] if isinstance(v, str) else v
            if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
                self.fail(key, f"{key} is a list of strings, got {v!r}")
            return tuple(words)
        if kind == "count":
            if isinstance(v, bool) or not isinstance(v, int):
                self.fail(key, f"{key} is a whole number, got {v!r}")
            return v
        if kind == "limits":
            if not isinstance(v, dict) or not all(isinstance(x, (int, float, str)) and not isinstance(x, bool)
                                                  for x in v.values()):
                self.fail(key, f"{key} is a table of limits, {{triangles = 50000000, pngs = 10}}, got {v!r}")
            given = tuple(f"{name.replace('_', '-')}={x}" for name, x in v.items())
            from gjkcli import limits

            try:
                limits.parse(given)
            except ValueError as e:
                self.fail(key, f"{key}: {e}")
            return given
        if kind == "path":
            if not isinstance(v, str) or not v:
                self.fail(key, f"{key} is a file name, got {v!r}")
            return self.path_of(v)
        # "paths"
        items = [v] if isinstance(v, str) else v
        if not isinstance(items, list) or not items or not all(isinstance(x, str) and x for x in items):
            self.fail(key, f"{key} is a list of files and folders, got {v!r}")
        return tuple(self.path_of(x) for x in items)

    def path_of(self, name: str) -> str:
        """A path of the file, relative to its folder, as the working folder reaches it (relative
        when it can be written so without leaving the working folder's tree upward)."""
        full = self.base / Path(name).expanduser()
        try:
            return str(full.relative_to(Path.cwd()))
        except ValueError:
            return str(full)


class Defaults:
    """The settings as the command line's defaults (click's `default_map`), read the first time an
    option asks for its default, by then `config` and `isolated` (eager options) are known. Only the
    options a setting can give are looked up here: `--help` never reads a settings file."""

    def __init__(self):
        self.config: str | None = None
        self.isolated = False
        self.start = None  # the folder the search starts from (None: the working folder)
        self.lenient = False  # --help: settings that cannot be read are none, not an error
        self._found: Settings | None = None
        self._names = frozenset(name for name, _ in OPTIONS.values())

    @property
    def found(self) -> Settings:
        if self._found is None:
            try:
                self._found = settings(self.config, self.isolated, self.start)
            except ConfigError:
                if not self.lenient:
                    raise
                return Settings()
        return self._found

    def __contains__(self, name) -> bool:
        return name in self._names and name in self.found.options

    def __getitem__(self, name):
        if name not in self._names:
            raise KeyError(name)
        return self.found.options[name]

    def get(self, name, default=None):
        return self[name] if name in self else default
