"""How much of a file gjk reads before it refuses (sizes and counts checked before reading), and
how many overlap volumes and pictures a run makes.

Files come from anywhere (vendors' exports, pull requests, archives). A file over a limit is an
error of that file, one line naming the limit and how to raise it; the other inputs are still
checked. The defaults leave a 2-core, 24 GB machine room to spare (the largest input a default
admits costs a few GB while it is read). `gjk check` and `gjk scan` take `--limit NAME=VALUE`.
"""
from __future__ import annotations

import contextlib
import dataclasses
from dataclasses import dataclass

__all__ = ["Limits", "DEFAULT", "active", "current", "parse", "NAMES"]


@dataclass(frozen=True)
class Limits:
    """Attributes
    ----------
    file_bytes
        The largest input file, in bytes (default 1 GiB: a binary STL of 21 million triangles).
    triangles
        The most triangles one file may hold (default 20 million); a binary STL's header is
        checked against it before any triangle is read.
    archive_members
        The most members an archive (ZIP, 3MF, 3DXML, tar) may hold (default 10,000).
    archive_bytes
        The most bytes an archive may hold once decompressed, all members together (default
        1 GiB); zip headers are read first, gzip and bz2 streams are counted as they inflate
        and abandoned at the limit.
    ratio
        The largest compression ratio of a member over 1 MiB (default 1,000: real meshes
        compress 3 to 20 times; a zip bomb, millions of times).
    overlap_volumes
        The most collisions of one run that get an overlap_volume (default 1,000, the deepest
        first: a manifold3d boolean costs about a millisecond a pair, so a scene of thousands of
        collisions would spend most of its time on volumes); the others say why theirs is null.
        0 computes none, and says nothing of them (a run that only wants the verdicts).
    pngs
        The most pictures `scan --png DIR` draws (default 100, the most severe violations first:
        a picture costs about a tenth of a second and 100 KB, so a scene of thousands of
        collisions would otherwise fill a disk); a note says how many were drawn of how many.
    cache
        The most bytes the cache folder may hold (default 1 GiB, `gjkcli.pipeline.cache`): after
        a run that wrote to it, the entries read least recently are removed until it fits.
    """

    file_bytes: int = 1 << 30
    triangles: int = 20_000_000
    archive_members: int = 10_000
    archive_bytes: int = 1 << 30
    ratio: float = 1000.0
    overlap_volumes: int = 1000
    pngs: int = 100
    cache: int = 1 << 30


DEFAULT = Limits()

# The limits that may be 0: a count of work done on request (overlap-volumes=0: none computed).
_MAY_BE_ZERO = frozenset({"overlap_volumes"})

# Command-line names of the limits.
NAMES = {f.name.replace("_", "-"): f.name for f in dataclasses.fields(Limits)}

_active = [DEFAULT]


def current() -> Limits:
    """The limits in force (those of the run in progress)."""
    return _active[-1]


@contextlib.contextmanager
def active(limits: Limits):
    """Put `limits` in force while the block runs (worker processes forked in it inherit them)."""
    _active.append(limits)
    try:
        yield limits
    finally:
        _active.pop()


def parse(specs, base: Limits = DEFAULT) -> Limits:
    """Limits from "name=value" strings ("file-bytes=2e9", "triangles=5e7", "overlap-volumes=0");
    ValueError with the reason for an unknown name or a value that is not a positive number
    (or 0, for overlap-volumes)."""
    changes = {}
    for spec in specs:
        name, sep, value = str(spec).partition("=")
        field = NAMES.get(name.strip())
        if not sep or field is None:
            raise ValueError(f"'{spec}': use NAME=VALUE with NAME one of {', '.join(NAMES)}")
        try:
            number = float(value)
        except ValueError:
            raise ValueError(f"'{spec}': {value!r} is not a number") from None
        if field in _MAY_BE_ZERO and number == 0:
            pass
        elif not number > 0 or number == float("inf"):
            zero = " (or 0)" if field in _MAY_BE_ZERO else ""
            raise ValueError(f"'{spec}': the value must be a positive finite number{zero}")
        changes[field] = number if field == "ratio" else int(number)
    return dataclasses.replace(base, **changes)
