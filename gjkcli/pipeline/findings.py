"""The findings model: what one run found, for `gjk check` and `gjk scan` alike.

Every renderer (table, JSON, JUnit, GitHub, SARIF, baselines) reads these records and nothing
else of the run, as a linter's emitters read one diagnostic. A new format is a new renderer,
never a new pipeline.

- `ObjectRecord`: one object (a file, a scene node, a body, a primitive) as checked.
- `Finding`: one checked pair: the engine's `Result`, which engine answered (`mode`), whether
  the answer holds for the parts or only for their hulls (`conservative`), the verdict around it
  (violation, allowed, in the baseline).
- `Problem`: an input the run could not use (exit code 2; the rest is still checked).
- `Findings`: the whole run.

Imports only `gjkcli.engine.results` (numpy): renderers pay nothing more for the model.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import MISSING, dataclass, field, fields

import numpy as np

from gjkcli.engine.results import Result, Status
from gjkcli.errors import Problem

__all__ = ["ObjectRecord", "LazyRecords", "RowFacts", "OverlapAsk", "ListedPairs", "Finding", "Problem", "Findings",
           "EXIT_OK", "EXIT_VIOLATION", "EXIT_ERROR", "SEVERITY", "severity_key", "notable", "violates", "pair_note",
           "hull_note"]

# Exit codes (gjkcli.cli keeps its own copy, to stay importable without numpy).
EXIT_OK = 0
EXIT_VIOLATION = 1
EXIT_ERROR = 2

# Report order: collisions (deepest first), then undecided, touching, clearance (closest first).
SEVERITY = {Status.COLLISION: 0, Status.UNDECIDED: 1, Status.TOUCHING: 2, Status.CLEARANCE: 3,
            Status.CLEAR: 4}


@dataclass(frozen=True)
class ObjectRecord:
    """One object as the run checked it.

    bounds : ((3,), (3,)) world-frame minimum and maximum corners, plain floats
    hull_gap : how far the part's faces lie inside its hull, model units: 0 for a part that is
        its hull, None when the part does not cover its hull's surface (a pocket, a cavity, an
        open or flat part) or for a primitive (exact as it is)
    convex : the part is its hull within its own touching band (hull_gap within it): hull
        answers are then the part's. None when the run did not need to know
    convexity : one line on why the part is or is not convex (None when not asked)
    watertight, bodies : None when the loader did not compute them (a scan's fast path)
    dimension : of the hull: 3 solid, 2 flat, 1 segment, 0 point
    primitive : the kind of a manifest primitive, else None
    ifc_class, global_id, ifc_name : an IFC element's class ("IfcWall"), GlobalId and Name
        (None for objects of other files, and for a Name the file leaves out)
    layer, flattening : a 2D part's DXF layer (None: SVG, a whole file) and how far its
        outline may lie from the curves it flattens (0: straight edges only); None in 3D
    """

    name: str
    file: str
    vertices: int
    faces: int
    hull_vertices: int
    convex: bool | None
    watertight: bool | None
    bounds: tuple
    units: str | None = None
    bodies: int | None = 1
    dimension: int = 3
    primitive: str | None = None
    convexity: str | None = None
    hull_gap: float | None = None
    ifc_class: str | None = None
    global_id: str | None = None
    ifc_name: str | None = None
    layer: str | None = None
    flattening: float | None = None


class LazyRecords(Sequence):
    """`Findings.objects` of a run with many objects: a read-only sequence whose record k is made
    by `make(k)` when a report reads it. A record read by its index is kept (a pair's note reads
    its two objects' records again); one read by iterating, as a report lists the objects, is
    made and let go, unless kept already: a report of many objects holds one record at a time,
    not all of them. A 10,000-part nest's scan then pays for records only when a report lists
    them (a summary reads only the count). Reads like the tuple it stands for (len, index,
    slice, iteration, ==), and pickles as that tuple."""

    __slots__ = ("_make", "_made")

    def __init__(self, n: int, make):
        self._make = make
        self._made = [None] * n

    def __len__(self) -> int:
        return len(self._made)

    def __getitem__(self, k):
        if isinstance(k, slice):
            return tuple(self[i] for i in range(*k.indices(len(self._made))))
        rec = self._made[k]  # IndexError past the end, as a tuple
        if rec is None:
            k = k % len(self._made)
            rec = self._made[k] = self._make(k)
        return rec

    def __iter__(self):
        make = self._make
        return (make(k) if rec is None else rec for k, rec in enumerate(self._made))

    def __eq__(self, other) -> bool:
        return isinstance(other, Sequence) and tuple(self) == tuple(other)

    __hash__ = None

    def __reduce__(self):
        return tuple, (tuple(self),)

    def __repr__(self) -> str:
        return f"LazyRecords({len(self._made)} objects)"


@dataclass(frozen=True)
class RowFacts:
    """What a summary counts of `ListedPairs`' rows, without making their Findings: per row, its
    status (the run's, str values of `Status`), whether it is a violation (a row is never
    allowed nor known, so a violation fails the run) and whether the triangles answered it
    (mode "exact"; else its hulls')."""

    status: object
    violation: object
    exact: object


@dataclass(frozen=True)
class OverlapAsk:
    """A listed row's pair as the overlap stage reads it (`ListedPairs.overlap_pairs`): its
    objects' names, its status and the overlap fields the stage sets (`but`), as a Finding has
    them."""

    a: str
    b: str
    status: Status
    overlap_volume: float | None = None
    overlap_reason: str | None = None
    overlap_mesh: object = None

    def but(self, **changes) -> "OverlapAsk":
        return dataclasses.replace(self, **changes)


# A reading of `ListedPairs` in order makes its rows this many at a time (`ahead`).
READ_AHEAD = 512


class ListedPairs(Sequence):
    """`Findings.pairs` of a run that lists many pairs: the notable pairs as Findings, and the
    others as rows the run keeps in arrays, each made a Finding by `make(row)` when a report
    reads it and never kept. A row is a pair whose Finding is the run's answer and nothing it
    adds: a hull's answer, or in a listing of many pairs the triangles' (neither allowed, known,
    grouped nor traced). `order` (int64, one entry per pair, in the report's order,
    `severity_key`'s) holds a notable pair's index, or len(notable) + a row's. A report written
    row by row (`gjkcli.report.jsonout.encoded`) then holds one pair at a time, whatever their
    number. Reads like the tuple it stands for, and pickles as that tuple.

    notable : the notable Findings, in the report's order (every pair allowed, known or grouped
        is one of them)
    plain_objects : () -> ((p,), (p,)) int64 the rows' objects (indices into the run's parts),
        made when asked
    facts : `RowFacts` of the rows
    overlaps : {row: (overlap_volume, overlap_reason, overlap_mesh)} the rows given their
        overlap (a collision among the overlap volumes' first), set on the row as it is made
    beyond : (note, (p,) bool) the rows given the note `note` as their overlap's reason (the
        collisions past the overlap volumes' limit), or None
    ahead : told the rows (an int64 array) a reading in order is about to make, READ_AHEAD
        of them at a time, and the rows it reads after them (None where it reads no more in
        order), or None (what makes them may make them together, or fetch them, the next ones
        asked for ahead)
    """

    __slots__ = ("notable", "order", "plain_objects", "_make", "facts", "_overlaps", "_beyond", "_ahead")

    def __init__(self, notable: tuple, order, plain_objects, make, facts: RowFacts, overlaps=None, beyond=None,
                 ahead=None):
        self.notable = tuple(notable)
        self.order = order
        self.plain_objects = plain_objects
        self._make = make
        self.facts = facts
        self._overlaps = overlaps or {}
        self._beyond = beyond
        self._ahead = ahead

    @property
    def plain(self) -> int:
        """How many pairs are rows."""
        return len(self.order) - len(self.notable)

    def __len__(self) -> int:
        return len(self.order)

    def _at(self, code: int):
        e = len(self.notable)
        if code < e:
            return self.notable[code]
        row = code - e
        out = self._make(row)
        overlap = self._overlaps.get(row)
        if overlap is not None:  # the Finding kept only until the overlap stage: its fields here
            out = out.but(overlap_volume=overlap[0], overlap_reason=overlap[1], overlap_mesh=overlap[2])
        elif self._beyond is not None and self._beyond[1][row]:
            out = out.but(overlap_reason=self._beyond[0])
        return out

    def __getitem__(self, k):
        if isinstance(k, slice):
            return tuple(self._read(self.order[k]))
        return self._at(int(self.order[k]))

    def __iter__(self):
        return self._read(self.order)

    def _read(self, order, wanted=None):
        e = len(self.notable)
        for start in range(0, len(order), READ_AHEAD):  # a list of a block's codes, not of all
            codes = [code for code in order[start:start + READ_AHEAD].tolist() if wanted is None or wanted(code, e)]
            if self._ahead is not None:
                rows = np.array([code - e for code in codes if code >= e], dtype=np.int64)
                if len(rows):  # and the rows read after them, in order (those of the reading in order)
                    rest = order[start + READ_AHEAD:] if wanted is None else order[:0]
                    self._ahead(rows, rest[rest >= e] - e)
            for code in codes:
                yield self._at(code)

    def ask_ahead(self) -> None:
        """Told that a reading in order will come (a report's): what makes the rows is told the
        rows it reads, in order, none of them to make yet (a Dask scan's client asks its workers
        for the first pages of their answers while its overlap stage waits)."""
        e = len(self.notable)
        if self._ahead is not None and self.plain:
            self._ahead(np.zeros(0, dtype=np.int64), self.order[self.order >= e] - e)

    def __bool__(self) -> bool:
        return len(self.order) > 0

    def __eq__(self, other) -> bool:
        return isinstance(other, Sequence) and len(self) == len(other) and \
            all(x == y for x, y in zip(self, other))

    __hash__ = None

    def __reduce__(self):
        return tuple, (tuple(self),)

    def __repr__(self) -> str:
        return f"ListedPairs({len(self.notable)} notable, {self.plain} rows)"

    @property
    def row_violations(self) -> int:
        """How many rows are violations (each fails the run)."""
        return int(self.facts.violation.sum())

    @property
    def exact_rows(self) -> int:
        """How many rows the triangles answered."""
        return int(self.facts.exact.sum())

    def failing(self) -> tuple:
        """The pairs that fail the run, in the report's order: the rows among them made."""
        violation = self.facts.violation
        return tuple(self._read(self.order, lambda code, e: self.notable[code].fails if code < e
                                else bool(violation[code - e])))

    def collisions(self, codes) -> object:
        """(len(codes),) bool: which of the pairs `codes` (entries of `order`) are collisions."""
        codes = np.asarray(codes, dtype=np.int64)
        e = len(self.notable)
        out = np.zeros(len(codes), dtype=bool)
        rows = codes >= e
        out[rows] = self.facts.status[codes[rows] - e] == Status.COLLISION.value
        out[~rows] = [self.notable[c].status is Status.COLLISION for c in codes[~rows].tolist()]
        return out

    def code(self, code: int):
        """The pair of an entry of `order`."""
        return self._at(int(code))

    def overlap_pairs(self, codes, names) -> list:
        """What the overlap stage reads of the pairs of entries `codes` of `order`: a notable
        pair's Finding, a row's objects' names (`names`: the run's, by object) and its status
        (an `OverlapAsk`), its Finding not made."""
        e = len(self.notable)
        a, b = self.plain_objects() if any(code >= e for code in codes) else ((), ())
        return [self.notable[code] if code < e else
                OverlapAsk(names[int(a[code - e])], names[int(b[code - e])], Status(self.facts.status[code - e]))
                for code in codes]

    def with_overlaps(self, notable, overlaps: dict, beyond) -> "ListedPairs":
        """The same pairs in the same order (an overlap volume does not move a pair in it), the
        notable ones replaced one for one, the rows of `overlaps` given theirs and those of
        `beyond` noted (`ListedPairs`' own arguments)."""
        notable = tuple(notable)
        if len(notable) != len(self.notable):
            raise ValueError("the notable pairs are replaced one for one")
        return ListedPairs(notable, self.order, self.plain_objects, self._make, self.facts, overlaps, beyond,
                           self._ahead)


def notable(pairs):
    """The pairs a summary reads one by one (allowed, known, groups): `ListedPairs.notable`,
    or every pair of a plain sequence. A summary counts the rows' violations and answers by
    their `RowFacts` (`Findings.violations`, `failure_count`, `modes`)."""
    return pairs.notable if isinstance(pairs, ListedPairs) else pairs


@dataclass(frozen=True)
class Finding:
    """One checked pair.

    a, b : object names, as in `ObjectRecord.name`; file_a, file_b : their files
    result : the engine's answer (status with the clearance applied)
    mode : what answered: "hull" (GJK/EPA on the convex hulls) or "exact" (the triangles)
    requested : the mode the user asked for ("auto", "hull", "exact")
    clearance : the required gap for this pair (model units), or None
    conservative : the answer is the hulls' and a part is not its hull: a clear verdict holds
        for the parts (their distance is at least this one), any other verdict may not
    violation : the status is one the run fails on (undecided always is)
    allowed, reason : an [[allow]] or SRDF entry covers the pair, and why
    known : the baseline holds the pair's key
    key : (file, a, b), the baseline key; () when the run neither reads nor writes a baseline
    note : what an exact answer does not cover (only surfaces count for an open part), or None
    overlap_volume : the volume both parts occupy (the parts', not the hulls': manifold3d's
        boolean, or the compiled cut of two convex parts), model units cubed; for collisions only, None elsewhere and where a part bounds no
        volume (then `overlap_reason` says which part and why)
    overlap_mesh : ((n, 3) float64, (m, 3) int64) the overlap solid in world coordinates, for
        pictures; None where no volume was computed
    distance_lower, distance_upper : bounds of the true solids' distance where the parts are
        tessellations of exact solids (STEP; `gjkcli.pipeline.tessellated`): None where the
        answer is the triangles' own (a mesh file) or a bound is unknown; equal for an exact
        B-rep answer. Negative values are depths (signed distance)
    tessellation : eps_a + eps_b, how far the pair's triangles may lie from the true surfaces
        (model units), or None for parts that are their triangles
    waypoint : the row of --poses or --trajectory the pair was found at (None: one pose)
    segment, t : a contact on the motion from waypoint `segment` to the next, first at t in
        [0, 1] (--trajectory; None otherwise)
    time_from_start : seconds into a ROS trajectory the pair was found at (a JointTrajectory or
        RobotTrajectory file; None otherwise)
    clash_set : the name of the manifest [[check]] the pair is reported under (None: no checks)
    group : the number of the group of clashes at one place the pair is in (1, 2, ...;
        `gjkcli.pipeline.grouping`), None when the run does not group or the pair does not fail
    """

    a: str
    b: str
    result: Result
    mode: str = "hull"
    requested: str = "auto"
    clearance: float | None = None
    conservative: bool = False
    violation: bool = False
    allowed: bool = False
    reason: str | None = None
    known: bool = False
    file_a: str = ""
    file_b: str = ""
    key: tuple = ()
    note: str | None = None
    overlap_volume: float | None = None
    overlap_reason: str | None = None
    overlap_mesh: tuple | None = field(default=None, repr=False, compare=False)
    waypoint: int | None = None
    segment: int | None = None
    t: float | None = None
    time_from_start: float | None = None
    distance_lower: float | None = None
    distance_upper: float | None = None
    tessellation: float | None = None
    clash_set: str | None = None
    group: int | None = None

    @property
    def status(self) -> Status:
        return self.result.status

    @classmethod
    def made(cls, **values) -> "Finding":
        """`Finding(**values)` without the frozen __init__'s work per field (a nest's verdicts
        make hundreds): the same finding, the fields not given at their defaults."""
        unknown = values.keys() - _FINDING_FIELDS
        if unknown:
            raise TypeError(f"Finding has no field {sorted(unknown)[0]!r}")
        if not _FINDING_REQUIRED <= values.keys():
            raise TypeError(f"Finding needs {', '.join(sorted(_FINDING_REQUIRED - values.keys()))}")
        for f in _FINDING_FACTORIES:
            values.setdefault(f.name, f.default_factory())
        out = object.__new__(Finding)
        out.__dict__.update(_FINDING_DEFAULTS, **values)
        return out

    def but(self, **changes) -> "Finding":
        """This finding with the fields `changes` names changed: `dataclasses.replace` without
        its work per field (a scan's overlap stage changes thousands of findings)."""
        unknown = changes.keys() - _FINDING_FIELDS
        if unknown:
            raise TypeError(f"Finding has no field {sorted(unknown)[0]!r}")
        out = object.__new__(Finding)
        out.__dict__.update(self.__dict__, **changes)
        return out

    @property
    def fails(self) -> bool:
        """A violation neither allowed nor in the baseline: the run exits 1."""
        return self.violation and not self.allowed and not self.known

    @property
    def distance_is_lower_bound(self) -> bool:
        """The reported distance is the hulls': the parts are at least this far apart. Not of
        tessellated parts (STEP): their hulls are the triangles', which the true solids may
        pass by up to the tessellation's error; `distance_lower` bounds those."""
        return self.conservative and not self.tessellation


_FINDING_FIELDS = frozenset(f.name for f in fields(Finding))
# every field in order (the required ones' placeholders replaced by `made`), so that a made
# finding's __dict__ is in the order Finding(...) gives it
_FINDING_DEFAULTS = {f.name: None if f.default is MISSING else f.default for f in fields(Finding)}
_FINDING_REQUIRED = frozenset(f.name for f in fields(Finding)
                              if f.default is MISSING and f.default_factory is MISSING)
_FINDING_FACTORIES = tuple(f for f in fields(Finding) if f.default_factory is not MISSING)


@dataclass(frozen=True)
class Findings:
    """Everything one run found.

    command : "check" or "scan"
    objects : ObjectRecord per object, in input order (a tuple, or `LazyRecords`)
    pairs : the listed findings, most severe first: every pair that is not clear, or every
        checked pair (`all_pairs`; always for check)
    errors : Problem per input that could not be used
    counts : pairs per status over every checked pair
    checked : pairs the narrow phase ran on; candidates : pairs the broad phase found
    gone : baseline entries (gjkcli.pipeline.baseline.Entry) that are no longer findings
    notes : plain sentences for the report
    units : the length unit of every distance, bound, tolerance and clearance of the run
        ("mm", "in", "m", ... of `gjkcli.units`), None when no input states one
    timings : seconds per stage (load, hulls, broad, narrow, objects, refine, verdicts)
    elapsed, timed : seconds, and what they timed: "run" (the run's stages, from loading the
        inputs to the findings) or "process" (since the `gjk` process started, the interpreter's
        start included: set by the command, `gjkcli.clock.since_start`)
    dimension : 3 for solids, 2 for a run on 2D drawings (vectors then have two coordinates;
        `geometry` then gives an object's outlines, read through `rings`)
    show_allowed : listings (the table, JSON) show the allowed pairs too; without it they are
        counted, not listed (`listed`), as ruff counts the diagnostics it ignores
    unchecked : `gjkcli.errors.Unchecked` per piece of geometry the run did not check though its
        input was read (a URDF link whose mesh file is not there; each also a note): the run
        fails (exit 1)
    geometry : how a picture gets an object's triangles: name -> ((n, 3) float64 world vertices,
        (m, 3) int64 faces), or None for an object with no triangles (a curved primitive); the
        pipeline hands it over so that reports never reach into the run. None when the run
        kept no geometry. It may have `read_ahead(names)` (`Findings.read_ahead`)
    together : a scan of several files checked them as one world (True) or each file by itself,
        pairs within a file only (False); None for a check, a scan of one file or a manifest's
        scene (one world by its nature)
    """

    command: str = "scan"
    objects: tuple = ()
    pairs: tuple = ()
    errors: tuple = ()
    counts: dict = field(default_factory=dict)
    checked: int = 0
    candidates: int = 0
    requested: str = "auto"
    tolerance: float | None = None
    clearance: float | None = None
    fail_on: tuple = ()
    all_pairs: bool = False
    baseline: str | None = None
    baseline_written: str | None = None
    gone: tuple = ()
    notes: tuple = ()
    units: str | None = None
    timings: dict = field(default_factory=dict)
    elapsed: float = 0.0
    timed: str = "run"
    version: str = "unknown"
    dimension: int = 3
    show_allowed: bool = False
    unchecked: tuple = ()
    together: bool | None = None
    geometry: object = field(default=None, repr=False, compare=False)
    _index: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def exit_code(self) -> int:
        if self.errors:
            return EXIT_ERROR
        if self.unchecked:  # a pass would claim geometry nobody looked at
            return EXIT_VIOLATION
        if self.baseline_written is not None:  # today's state recorded: a success (ruff --add-noqa)
            return EXIT_OK
        if any(p.fails for p in notable(self.pairs)):
            return EXIT_VIOLATION
        if isinstance(self.pairs, ListedPairs) and self.pairs.row_violations:
            return EXIT_VIOLATION
        return EXIT_OK

    @property
    def failures(self) -> tuple:
        """The pairs that fail the run (`failure_count` counts them without making them)."""
        if isinstance(self.pairs, ListedPairs) and self.pairs.row_violations:
            return self.pairs.failing()
        return tuple(p for p in notable(self.pairs) if p.fails)

    @property
    def failure_count(self) -> int:
        """How many pairs fail the run."""
        rows = self.pairs.row_violations if isinstance(self.pairs, ListedPairs) else 0
        return rows + sum(1 for p in notable(self.pairs) if p.fails)

    @property
    def allowed(self) -> tuple:
        """The pairs an [[allow]] or SRDF entry covers: violations it allows, and pairs within
        the rule that are no violation (a door touching its host wall), which a listing leaves out
        too (`listed`): the summary counts every pair it does not list."""
        return tuple(p for p in notable(self.pairs) if p.allowed)

    @property
    def listed(self) -> tuple:
        """The pairs a listing shows: every one with `show_allowed` or `all_pairs`, else all but
        the allowed ones (the summary counts those)."""
        if self.show_allowed or self.all_pairs:
            return self.pairs
        if isinstance(self.pairs, ListedPairs):  # a row is never allowed
            return self.pairs if not any(p.allowed for p in self.pairs.notable) else \
                tuple(p for p in self.pairs if not p.allowed)
        return tuple(p for p in self.pairs if not p.allowed)

    @property
    def unlisted(self) -> int:
        """Allowed pairs `listed` leaves out."""
        return len(self.pairs) - len(self.listed)

    @property
    def known(self) -> tuple:
        return tuple(p for p in notable(self.pairs) if p.known and p.violation and not p.allowed)

    @property
    def violations(self) -> int:
        rows = self.pairs.row_violations if isinstance(self.pairs, ListedPairs) else 0
        return rows + sum(1 for p in notable(self.pairs) if p.violation)

    @property
    def modes(self) -> dict:
        """Listed pairs per answering mode: {"hull": n, "exact": m}."""
        out = {"hull": 0, "exact": 0}
        if isinstance(self.pairs, ListedPairs):  # a row is a hull's answer or the triangles'
            exact = self.pairs.exact_rows
            out["hull"] += self.pairs.plain - exact
            out["exact"] += exact
        for p in notable(self.pairs):
            out[p.mode] = out.get(p.mode, 0) + 1
        return out

    def triangles(self, name: str):
        """Object `name`'s ((n, 3) vertices, (m, 3) faces) in world coordinates, or None."""
        return None if self.geometry is None else self.geometry(name)

    def read_ahead(self, names) -> None:
        """Say that the triangles of `names` are read next: a run whose parts are elsewhere (a
        Dask scan's, `geometry.read_ahead`) fetches them in one round; others hold them."""
        ahead = getattr(self.geometry, "read_ahead", None)
        if ahead is not None:
            ahead(list(names))

    def rings(self, name: str):
        """2D runs: object `name`'s outlines, a tuple of (n, 2) float64 rings (outer rings
        counter-clockwise, holes clockwise; the sheet's outline for the sheet), or None."""
        return None if self.geometry is None or self.dimension != 2 else self.geometry(name)

    def object(self, name: str) -> ObjectRecord | None:
        k = self._index.get(name)
        if k is None and not self._index:
            return next((o for o in self.objects if o.name == name), None)
        return self.objects[k] if k is not None else None


def violates(status: Status, clearance: float | None, fail_on) -> bool:
    """Whether a pair with this status fails the run under `fail_on`.

    Undecided always fails (no verdict is not a pass); touching parts are closer than any
    positive clearance, so they fail a required clearance as "clearance".
    """
    status = Status(status)
    if status is Status.UNDECIDED:
        return True
    if status is Status.COLLISION:
        return "collision" in fail_on
    if status is Status.CLEARANCE:
        return "clearance" in fail_on
    if status is Status.TOUCHING:
        return "touching" in fail_on or (clearance is not None and clearance > 0 and "clearance" in fail_on)
    return False


def pair_note(pair: Finding, a: ObjectRecord | None, b: ObjectRecord | None) -> str | None:
    """The caveat of a verdict: what a hull answer means for parts that are not their hulls, or
    what an exact answer does not cover; None when the verdict holds for the parts as they are."""
    return hull_note(pair, a, b) or pair.note or None


def hull_note(pair: Finding, a: ObjectRecord | None, b: ObjectRecord | None) -> str | None:
    """What a hull answer means for parts that are not their hulls; None when it is the parts'."""
    if not pair.conservative:
        return None
    concave = [o.name for o in (a, b) if o is not None and not o.convex] or [pair.a, pair.b]
    which = " and ".join(concave) + (" is" if len(concave) == 1 else " are")
    status = Status(pair.status)
    if status is Status.CLEAR:
        if pair.tessellation and pair.distance_lower is not None:  # the triangles' hulls, not the solids'
            return (f"{which} not convex: the hulls are apart, so the parts are; the solids are at "
                    f"least {max(pair.distance_lower, 0.0):.6g} apart (distance_lower: the hulls are of "
                    f"triangles up to {pair.tessellation:.3g} from them)")
        return (f"{which} not convex: the hulls are apart, so the parts are; the parts are at "
                f"least this far apart")
    if status is Status.COLLISION:
        return f"{which} not convex: collision between hulls; the parts themselves may not touch"
    if status is Status.TOUCHING:
        return f"{which} not convex: the hulls touch; the parts themselves may be apart"
    if status is Status.CLEARANCE:
        return (f"{which} not convex: the hulls are closer than the clearance; the parts may be "
                f"further apart")
    return f"{which} not convex: undecided for the hulls"


def severity_key(pair: Finding):
    """The report's order: failing before allowed and known, then by status, the deepest
    collision and the closest gap first."""
    r = pair.result
    status = pair.status
    if status is Status.COLLISION:
        size = -(r.depth if r.depth is not None else 0.0)
    elif status in (Status.CLEARANCE, Status.CLEAR, Status.UNDECIDED):
        size = r.distance
    else:
        size = r.signed_distance
    return (pair.allowed, pair.known, SEVERITY[status], size, pair.a, pair.b)
