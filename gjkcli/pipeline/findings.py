"""Renderers: results in, text out. Nothing here prints or imports the engine.

The command (`gjkcli.cli`) gathers what it learnt into the plain records below and hands them to a
renderer:

- `report.table.render_check(check)`: the human report, rich renderables;
- `report.trace.render_trace(result.trace)`: GJK and EPA narrated step by step, rich renderables;
- `report.jsonout.check_document(check)`: the `--format json` document, a dict;
  `report.jsonout.trace_lines(pair)`: the `--trace-json` lines.

This module imports only `gjkcli.engine.results` (and so numpy), so importing a renderer costs only what
that renderer needs besides: rich for the table and the trace, the standard library for JSON.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from gjkcli.engine.results import Result, Status

# Statuses that fail a check: the command exits 1 when any pair has one of them.
VIOLATIONS = frozenset({Status.COLLISION, Status.CLEARANCE, Status.UNDECIDED})

# Exit codes of the command (gjkcli.cli keeps its own copy, to stay importable without numpy).
EXIT_OK = 0
EXIT_VIOLATION = 1
EXIT_ERROR = 2


@dataclass(frozen=True)
class ObjectInfo:
    """One input object as the report describes it.

    bounds : ((3,), (3,)) world-frame minimum and maximum corners, plain floats
    convex : whether the part equals its convex hull (a verdict from the hull is then exact)
    dimension : of the hull: 3 solid, 2 flat, 1 segment, 0 point
    """

    name: str
    file: str
    vertices: int
    faces: int
    hull_vertices: int
    convex: bool
    watertight: bool
    bounds: tuple
    units: str | None = None
    bodies: int = 1
    dimension: int = 3
    convexity: str | None = None  # one line on why the part is or is not convex


@dataclass(frozen=True)
class PairReport:
    """The verdict for one pair, with what the command decided around the engine's answer.

    a, b : object names, as in `ObjectInfo.name`
    mode : the mode the answer came from ("hull" or "exact"); requested : what the user asked
        ("auto", "hull", "exact")
    clearance : the required clearance (model units) or None
    conservative : the answer came from the hull of a part that is not convex, so a collision,
        touching or clearance verdict holds for the hulls and may not hold for the parts
    violation : this pair fails the check
    """

    a: str
    b: str
    result: Result
    mode: str = "hull"
    requested: str = "auto"
    clearance: float | None = None
    conservative: bool = False
    violation: bool = False
    note: str | None = None  # what an exact answer does not cover (e.g. only surfaces count)

    @property
    def status(self) -> Status:
        return self.result.status


@dataclass(frozen=True)
class InputProblem:
    """A file the command could not use: one line of the report, exit code 2."""

    file: str
    message: str


@dataclass(frozen=True)
class CheckReport:
    """Everything one `gjk check` run found."""

    objects: tuple = ()
    pairs: tuple = ()
    errors: tuple = ()
    elapsed: float = 0.0
    version: str = "unknown"
    notes: tuple = field(default=())

    @property
    def exit_code(self) -> int:
        if self.errors:
            return EXIT_ERROR
        if any(p.violation for p in self.pairs):
            return EXIT_VIOLATION
        return EXIT_OK

    def counts(self) -> dict:
        """Pairs per status, every status present (zero when none)."""
        out = {s.value: 0 for s in Status}
        for p in self.pairs:
            out[Status(p.status).value] += 1
        return out

    def object(self, name: str) -> ObjectInfo | None:
        for o in self.objects:
            if o.name == name:
                return o
        return None


def is_violation(status: Status, clearance: float | None) -> bool:
    """Whether a pair with this status fails the check.

    Touching is not a violation by itself (parts meant to sit on each other touch), but it is one
    when a positive clearance is required: touching parts are closer than any gap.
    """
    status = Status(status)
    if status in VIOLATIONS:
        return True
    return status is Status.TOUCHING and clearance is not None and clearance > 0.0


def pair_note(pair: PairReport, a: ObjectInfo | None, b: ObjectInfo | None) -> str | None:
    """The caveat of a verdict: what a hull answer means for parts that are not convex, or what
    an exact answer does not cover; None when the verdict holds for the parts as they are."""
    return hull_note(pair, a, b) or pair.note or None


def hull_note(pair: PairReport, a: ObjectInfo | None, b: ObjectInfo | None) -> str | None:
    """What a hull-mode verdict means for parts that are not convex; None when both are convex."""
    concave = [o.name for o in (a, b) if o is not None and not o.convex]
    if pair.mode != "hull" or not concave:
        return None
    which = " and ".join(concave)
    status = Status(pair.status)
    if status is Status.CLEAR:
        return f"{which} not convex: the hulls are apart, so the parts are; the parts are at least this far apart"
    if status is Status.COLLISION:
        return f"{which} not convex: collision between hulls; the parts themselves may not touch"
    if status is Status.TOUCHING:
        return f"{which} not convex: the hulls touch; the parts themselves may be apart"
    if status is Status.CLEARANCE:
        return f"{which} not convex: the hulls are closer than the clearance; the parts may be further apart"
    return f"{which} not convex: undecided for the hulls"
