"""Baselines: today's findings recorded, so that a scan fails only on new ones.

``gjk scan --write-baseline FILE`` records every finding that fails the scan (a violation that no
``[[allow]]`` covers), keyed by (file, object, object); ``gjk scan --baseline FILE`` then fails only
on findings whose key is not in the file, and reports the recorded ones that are gone.

The key: the two object names in sorted order, and the file (or files) they come from. Files are
written relative to the baseline file's folder, in POSIX form, so a baseline committed next to
the scenes matches on any checkout and any operating system; a pair across two files has both,
joined by " + " in the order of its names. Matching is on the key only: a pair that went from
touching to collision is still known (its status today is in the report).

The file is JSON::

    {"version": 1, "tool": "gjk", "findings": [
        {"file": "cell.glb", "a": "cell.glb:arm", "b": "cell.glb:table", "status": "collision",
         "depth": 0.25, "distance": 0.0}, ...]}
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from gjkcli.errors import InputError, write_whole
from gjkcli.scene.manifest import read_small_text

__all__ = ["Entry", "Baseline", "read", "write", "document", "key", "pair_key", "entries", "relative_file"]

VERSION = 1


@dataclass(frozen=True)
class Entry:
    """One recorded finding. key = (file, a, b) with a <= b."""

    file: str
    a: str
    b: str
    status: str = ""
    depth: float | None = None
    distance: float | None = None

    @property
    def key(self) -> tuple:
        return (self.file, self.a, self.b)


@dataclass(frozen=True)
class Baseline:
    """A baseline file as read: its entries and their keys."""

    path: Path
    entries: tuple

    @property
    def keys(self) -> frozenset:
        return frozenset(e.key for e in self.entries)

    @property
    def base(self) -> Path:
        """The folder files are relative to."""
        return self.path.resolve().parent


def relative_file(source: str, base: Path) -> str:
    """`source` relative to `base` in POSIX form; as given when it cannot be (another drive)."""
    try:
        return Path(os.path.relpath(Path(source).resolve(), base)).as_posix()
    except ValueError:
        return Path(source).as_posix()


def key(name_a: str, name_b: str, file_a: str, file_b: str, rel) -> tuple:
    """(file, a, b): names sorted, each file through `rel` (its path relative to the baseline's
    folder), two files joined by ' + '.

    The key holds the file, so names drop the "file:" prefix a scan of several files adds: a
    baseline written for one file still matches when another file joins the scan.
    """
    name_a, name_b = _local_name(name_a, file_a), _local_name(name_b, file_b)
    if name_b < name_a:
        name_a, name_b, file_a, file_b = name_b, name_a, file_b, file_a
    fa, fb = rel(file_a), rel(file_b)
    return (fa if fa == fb else f"{fa} + {fb}", name_a, name_b)


def pair_key(name_a: str, name_b: str, file_a: str, file_b: str, base: Path) -> tuple:
    """`key` with files relative to the folder `base`."""
    return key(name_a, name_b, file_a, file_b, lambda f: relative_file(f, base))


def _local_name(name: str, file: str) -> str:
    prefix = f"{Path(file).name}:"
    return name[len(prefix):] if name.startswith(prefix) else name


def entries(pairs) -> list:
    """The baseline entries of a run's findings: every violation no allow rule covers."""
    out = []
    for p in pairs:
        if not (p.violation and not p.allowed):
            continue
        file, a, b = p.key
        r = p.result
        out.append(Entry(file=file, a=a, b=b, status=p.status.value,
                         depth=None if r.depth is None else float(r.depth), distance=float(r.distance)))
    return out


def read(path) -> Baseline:
    """Read a baseline file; InputError naming the file when it is missing or malformed."""
    path = Path(path)
    try:
        data = json.loads(read_small_text(path, "baseline"))
    except FileNotFoundError:
        raise InputError(path, "no such baseline file; write one with --write-baseline") from None
    except RecursionError:
        raise InputError(path, "not a baseline: nested deeper than any baseline is; write it again "
                               "with --write-baseline") from None
    except json.JSONDecodeError as exc:
        raise InputError(path, f"not a baseline: invalid JSON at line {exc.lineno} ({exc.msg}); "
                               f"write it again with --write-baseline") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(path, f"cannot read the baseline: {getattr(exc, 'strerror', None) or exc}") from exc
    except ValueError as exc:  # not a regular file, or far too big to be a baseline
        raise InputError(path, str(exc)) from None
    if not isinstance(data, dict) or not isinstance(data.get("findings"), list):
        raise InputError(path, "not a baseline (no 'findings' list); write it with --write-baseline")
    if data.get("version") != VERSION:
        raise InputError(path, f"baseline version {data.get('version')!r} is not {VERSION}; "
                               f"write it again with --write-baseline")
    entries = []
    for k, item in enumerate(data["findings"]):
        if not (isinstance(item, dict) and all(isinstance(item.get(key), str) for key in ("file", "a", "b"))):
            raise InputError(path, f"finding {k + 1} needs the strings 'file', 'a' and 'b'")
        a, b = sorted((item["a"], item["b"]))
        entries.append(Entry(file=item["file"], a=a, b=b, status=str(item.get("status", "")),
                             depth=item.get("depth"), distance=item.get("distance")))
    return Baseline(path=path, entries=tuple(entries))


def document(entries) -> dict:
    """The JSON document of a baseline with these entries (sorted by key)."""
    findings = [{"file": e.file, "a": e.a, "b": e.b, "status": e.status, "depth": e.depth,
                 "distance": e.distance} for e in sorted(entries, key=lambda e: e.key)]
    return {"version": VERSION, "tool": "gjk", "findings": findings}


def write(path, entries) -> None:
    """Write a baseline of `entries` (the keys must be relative to path's folder, see `pair_key`)."""
    path = Path(path)
    text = json.dumps(document(entries), indent=2, allow_nan=False) + "\n"
    try:
        write_whole(path, text)
    except OSError as exc:
        raise InputError(path, f"cannot write the baseline: {exc.strerror or exc}") from exc
