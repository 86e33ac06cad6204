"""`gjk scan`: every pair of objects across scene files, a broad phase, then the batch narrow phase.

The pipeline of `run`:

1. **Load** every file into named objects in world coordinates (`read_objects`): each scene node
   that holds triangles is an object, moved by its full world transform, scale included. A file
   that fails to load becomes an error entry; the others are still checked. Manifest objects
   (whole files or primitives) and includes join them. Files load in worker processes.
2. **Hulls** (`build_hulls`): one qhull call per part and nothing else per part in Python; the
   vertex selection, the adjacency and the bounds of all parts are computed at once in NumPy.
   The result is bit for bit what `Shape.hull` builds (tests/test_scan.py checks it). Whether
   each part is its own hull (`convex_parts`) is decided the same way, for all parts at once.
3. **Broad phase** (`gjkcli.broadphase`): a BVH over the world boxes grown by the clearance and
   the touching band: O(n log n + k), never all n^2 pairs. `[[check]]` selections filter it.
4. **Narrow phase**: the engine's batch call (which releases the GIL) over the candidate pairs,
   split across threads.
5. **Refinement** (pluggable): in `auto` and `exact` mode, pairs whose hulls are not clear and
   that involve a non-convex part go to a refiner (`refine=`), which answers for the parts
   themselves. Without one, the hull verdict stands, marked conservative.
6. **Verdicts**: clearance, `fail_on`, allowed pairs (`[[allow]]`, SRDF), the baseline.

Per-part Python work is the cost that decides scans of many small parts, so nothing here loops
over parts in Python except the qhull call, trimesh's own parsing, and making one small record
per part (a Shape, an object of the report); pairs are looped over only to make the listed ones.

Exact refinement plugs in through `refine=`: a callable taking a list of `RefineRequest` (both
parts' world vertices and faces, the hull verdict, the tolerance and clearance) and returning a
`Result` per request (or None to keep the hull's). gjkcli.exact is meant to provide it; the
command then passes `refine=gjkcli.exact.<its function>` (or a wrapper) for modes auto and exact.
"""
from __future__ import annotations

import dataclasses
import gc
import math
import os
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from gjkcli.errors import GjkError, InputError, ShapeError
from gjkcli.report import EXIT_ERROR, EXIT_OK, EXIT_VIOLATION, InputProblem, PairReport
from gjkcli.results import Result, Status

__all__ = ["run", "ScanReport", "ScanPair", "ScanObject", "Geometry", "RefineRequest", "Refiner",
           "exact_refiner", "build_hulls", "convex_parts", "read_objects", "MODES", "SEVERITY"]

MODES = ("auto", "hull", "exact")

# Report order: collisions (deepest first), then undecided, touching, clearance (closest first).
SEVERITY = {Status.COLLISION: 0, Status.UNDECIDED: 1, Status.TOUCHING: 2, Status.CLEARANCE: 3,
            Status.CLEAR: 4}

# Parts per chunk of hull building and pairs per chunk of the narrow phase: large enough that a
# chunk's fixed cost (a process round trip, a batch call) is small against its work.
_HULL_CHUNK = 2000
_PAIR_CHUNK = 4096
# Below this many parts, hull building stays in this process (forking costs ~10 ms per worker).
_PARALLEL_HULLS_FROM = 4000


# -- records --------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Geometry:
    """One object before its hull: what the refiner sees of it.

    vertices : (n, 3) float64, world coordinates (None for a primitive)
    faces : (m, 3) int64, indices into vertices (None for a primitive)
    primitive : the Shape of a manifest primitive, else None
    watertight, bodies : known when the object came through `gjkcli.load.load_objects`, else None
    """

    name: str
    file: str
    vertices: np.ndarray | None = None
    faces: np.ndarray | None = None
    units: str | None = None
    watertight: bool | None = None
    bodies: int | None = None
    primitive: object | None = None


@dataclass(frozen=True)
class ScanObject:
    """One object as the report describes it (the fields of `gjkcli.report.ObjectInfo`).

    watertight and bodies are None when the loader did not compute them (the fast path of scene
    files computes no topology). convex: the part is its own hull, so a hull verdict is the
    part's: True when `convex_parts` (within the touching band, for all parts at once) or
    gjkcli.convexity (the definition `gjk check` uses, about 1 ms a part) says so; False when
    gjkcli.convexity says it is not; None when undecided: the fast test did not show it convex
    and no finding involves the part, so nothing depended on it.
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
    bodies: int | None = None
    dimension: int = 3
    primitive: str | None = None
    convexity: str | None = None  # one line on why the part is or is not convex


@dataclass(frozen=True)
class ScanPair(PairReport):
    """A checked pair: `gjkcli.report.PairReport` (so the JSON renderer takes it) and the scan's say.

    violation : the status is one `fail_on` lists (undecided always is)
    allowed, reason : an [[allow]] or SRDF entry covers the pair, and why
    known : the baseline holds the pair's key
    key : (file, a, b), the baseline key
    fails : a violation neither allowed nor known: exit code 1
    """

    allowed: bool = False
    reason: str | None = None
    known: bool = False
    file_a: str = ""
    file_b: str = ""
    key: tuple = ()

    @property
    def fails(self) -> bool:
        return self.violation and not self.allowed and not self.known


@dataclass(frozen=True)
class RefineRequest:
    """A pair whose hulls are not clear and of which a part is not convex: the refiner's input.

    hull : the engine's verdict for the hulls (clearance already applied)
    tolerance : the touching band used, model units; clearance : the required gap or None
    """

    a: Geometry
    b: Geometry
    hull: Result
    tolerance: float
    clearance: float | None
    nonconvex: tuple


# A refiner answers for the parts themselves: one Result (or None to keep the hull verdict) per
# request, in order. gjkcli.exact provides one; see `run`.
Refiner = Callable[[Sequence[RefineRequest]], Sequence[Result | None]]


@dataclass(frozen=True)
class ScanReport:
    """Everything one scan found.

    objects : ScanObject per loaded object, in scan order
    pairs : the listed pairs, most severe first: every finding (status not clear), or every
        checked pair with all_pairs
    errors : InputProblem per file that failed to load (exit code 2)
    counts : pairs per status over every checked pair
    checked : pairs the narrow phase ran on; candidates : pairs the broad phase found
    gone : baseline entries (gjkcli.baseline.Entry) that are no longer findings
    notes : plain sentences for the report (one object: no pairs; SRDF links without objects)
    timings : seconds per stage (load, hulls, broad, narrow, objects: convexity of the parts of
        findings and the report's objects, refine, verdicts)
    """

    objects: tuple = ()
    pairs: tuple = ()
    errors: tuple = ()
    counts: dict = field(default_factory=dict)
    checked: int = 0
    candidates: int = 0
    mode: str = "hull"
    requested: str = "auto"
    tolerance: float | None = None
    clearance: float | None = None
    fail_on: tuple = ()
    all_pairs: bool = False
    baseline: str | None = None
    baseline_written: str | None = None
    gone: tuple = ()
    notes: tuple = ()
    timings: dict = field(default_factory=dict)
    elapsed: float = 0.0
    version: str = "unknown"
    _index: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def exit_code(self) -> int:
        if self.errors:
            return EXIT_ERROR
        if any(p.fails for p in self.pairs):
            return EXIT_VIOLATION
        return EXIT_OK

    @property
    def failures(self) -> tuple:
        """The pairs that fail the scan."""
        return tuple(p for p in self.pairs if p.fails)

    @property
    def allowed(self) -> tuple:
        return tuple(p for p in self.pairs if p.allowed and p.status is not Status.CLEAR)

    @property
    def known(self) -> tuple:
        return tuple(p for p in self.pairs if p.known and p.violation and not p.allowed)

    def object(self, name: str) -> ScanObject | None:
        k = self._index.get(name)
        return self.objects[k] if k is not None else None


# -- run ------------------------------------------------------------------------------------------


def run(paths=(), *, manifest=None, mode: str = "auto", tolerance: float | None = None,
        clearance: float | None = None, fail_on=None, all_pairs: bool = False, baseline=None,
        write_baseline=None, split_bodies: bool = False, jobs: int | None = None,
        refine: Refiner | None = None, progress: Callable[[str, int, int], None] | None = None,
        broadphase: str = "bvh") -> ScanReport:
    """Scan every pair of objects of the given files (and manifest) for collisions.

    Parameters
    ----------
    paths : iterable of str or Path
        Scene files and directories (a directory gives the mesh files directly in it).
    manifest : str, Path or gjkcli.manifest.Manifest, optional
        Includes, objects, groups, checks, allowed pairs, defaults (see gjkcli/manifest.py).
    mode : {"auto", "hull", "exact"}
        hull: verdicts for the convex hulls (conservative for non-convex parts). auto: hulls, then
        `refine` for pairs with a non-convex part whose hulls are not clear. exact: as auto, and
        an error without a refiner.
    tolerance : float, optional
        Touching band, model units (default: the manifest's, else 1e-7 of each pair's size).
    clearance : float, optional
        Required gap, model units (default: the manifest's). [[check]] tables may set their own.
    fail_on : iterable of {"collision", "touching", "clearance"}, optional
        Findings that fail the scan (default: the manifest's, else collision and clearance).
        Undecided pairs always fail; touching pairs fail a positive clearance as "clearance".
    all_pairs : bool
        List every pair the narrow phase checked, not only the findings.
    baseline : str or Path, optional
        A baseline file: findings recorded there do not fail the scan; the report lists the
        recorded ones that are gone.
    write_baseline : str or Path, optional
        Record today's failing findings there (after the scan).
    split_bodies : bool
        Each connected body of an object of the given files is its own object.
    jobs : int, optional
        Worker processes for loading files and building hulls, threads for the narrow phase
        (default: every core). 1 runs everything in this process.
    refine : callable, optional
        The refinement step (see `Refiner`); None keeps hull verdicts.
    progress : callable(stage, done, total), optional
        Called as work advances; stages "load", "hulls", "narrow", "refine".

    Returns
    -------
    ScanReport

    Raises
    ------
    ManifestError
        The manifest cannot be used (with its line number).
    InputError
        The baseline cannot be read or written.
    GjkError
        mode "exact" without a refiner.
    """
    from gjkcli import baseline as baselines
    from gjkcli import manifest as manifests
    from gjkcli.tolerances import DEFAULT

    started = time.perf_counter()
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; use one of {', '.join(MODES)}")
    if mode == "exact" and refine is None:
        raise GjkError("--mode exact needs the exact refinement of non-convex parts, which is not "
                       "available yet; use --mode hull or auto")
    jobs = _jobs(jobs)
    tell = progress or (lambda stage, done, total: None)
    timings = {}

    m = manifests.load(manifest) if isinstance(manifest, (str, os.PathLike)) else manifest
    if m is not None:
        tolerance = tolerance if tolerance is not None else m.tolerance
        clearance = clearance if clearance is not None else m.clearance
        fail_on = fail_on if fail_on is not None else m.fail_on
    fail_on = tuple(fail_on) if fail_on is not None else manifests.DEFAULT_FAIL_ON
    for v in fail_on:
        if v not in manifests.FAIL_ON:
            raise ValueError(f"unknown fail_on value {v!r}; use {', '.join(manifests.FAIL_ON)}")
    for what, value in (("tolerance", tolerance), ("clearance", clearance)):
        if value is not None and not (value >= 0 and np.isfinite(value)):
            raise ValueError(f"{what} must be a finite number >= 0, got {value}")
    old = baselines.read(baseline) if baseline is not None else None

    # 1. load -------------------------------------------------------------------------------------
    t = time.perf_counter()
    errors: list[InputProblem] = []
    geoms = _load_all(paths, m, split_bodies, jobs, errors, tell)
    timings["load"] = time.perf_counter() - t

    # 2. hulls ------------------------------------------------------------------------------------
    t = time.perf_counter()
    shapes, convex, lo, hi, geoms = _shapes(geoms, jobs, errors, tell)
    timings["hulls"] = time.perf_counter() - t
    names = [g.name for g in geoms]
    notes = []
    n = len(geoms)
    if n == 0:
        notes.append("no objects were loaded: there is nothing to check")
    elif n == 1:
        notes.append(f"only one object ({names[0]}): there are no pairs to check")

    resolved = None
    if m is not None and n > 0:
        try:
            resolved = m.resolve(names)
        except manifests.ManifestError as exc:
            if not errors:
                raise
            # a file that failed to load may be what the selection was meant to match
            errors.append(InputProblem(file=exc.source, message=exc.message))
            resolved = manifests.Resolved()
        notes.extend(resolved.notes)

    # 3. broad phase ------------------------------------------------------------------------------
    t = time.perf_counter()
    i, j, pair_clearance, candidates = _candidates(lo, hi, resolved, clearance, tolerance, DEFAULT,
                                                   broadphase)
    timings["broad"] = time.perf_counter() - t

    # 4. narrow phase -----------------------------------------------------------------------------
    t = time.perf_counter()
    batch = _narrow(shapes, i, j, tolerance, jobs, tell)
    timings["narrow"] = time.perf_counter() - t

    # 5. statuses, refinement ---------------------------------------------------------------------
    t = time.perf_counter()
    status = np.zeros(0, dtype=np.int8)
    if len(i):
        status = _ENGINE_TO_CODE[batch.status]
        closer = (status == _CODE[Status.CLEAR]) & (batch.distance < pair_clearance)
        status[closer] = _CODE[Status.CLEARANCE]
    # the parts of listed pairs that the fast test did not show convex get gjkcli.convexity's
    # verdict (the one `gjk check` gives); the others keep None: nothing depends on it
    decided: list = [True if c else None for c in convex.tolist()]
    why: list = [_FAST_REASON if c else None for c in convex.tolist()]
    for k, g in enumerate(geoms):
        if g.primitive is not None:
            why[k] = "a primitive"
    if len(i):
        listed = np.ones(len(i), dtype=bool) if all_pairs else status != _CODE[Status.CLEAR]
        involved = np.unique(np.concatenate([i[listed], j[listed]]))
        for k in involved[~convex[involved]].tolist():
            decided[k], why[k] = _convexity(geoms[k])
    nonconvex = np.array([c is not True for c in decided], dtype=bool)
    objects = _object_infos(geoms, shapes, decided, why, lo, hi)
    timings["objects"] = time.perf_counter() - t
    t = time.perf_counter()
    refined: dict[int, Result] = {}
    if mode != "hull" and refine is not None and len(i):
        todo = np.flatnonzero((status != _CODE[Status.CLEAR]) & (nonconvex[i] | nonconvex[j]))
        refined = _refine(refine, todo, geoms, i, j, batch, status, pair_clearance, nonconvex, tell)
    timings["refine"] = time.perf_counter() - t

    # 6. verdicts ---------------------------------------------------------------------------------
    t = time.perf_counter()
    base_new = Path(write_baseline).resolve().parent if write_baseline is not None else None
    key_of = _KeyMaker(old.base if old is not None else base_new or Path.cwd())
    verdict = _Verdicts(names=names, files=[g.file for g in geoms], nonconvex=nonconvex,
                        clearance=clearance, fail_on=fail_on, requested=mode,
                        allow=_allowed(resolved, i, j), key_of=key_of,
                        known=old.keys if old is not None else None)
    counts = {s.value: 0 for s in Status}
    for code, c in zip(*np.unique(status, return_counts=True)):
        counts[_STATUS[int(code)].value] += int(c)
    listed = np.arange(len(i)) if all_pairs else np.flatnonzero(status != _CODE[Status.CLEAR])
    pairs = []
    for k in listed.tolist():
        hull_status = _STATUS[int(status[k])]
        if k in refined:
            pair = verdict(k, int(i[k]), int(j[k]), refined[k], None, float(pair_clearance[k]), "exact")
            counts[hull_status.value] -= 1
            counts[pair.status.value] += 1
            if pair.status is Status.CLEAR and not all_pairs:
                continue  # the hulls meet, the parts do not: not a finding
        else:
            pair = verdict(k, int(i[k]), int(j[k]), batch.result(k), hull_status,
                           float(pair_clearance[k]), "hull")
        pairs.append(pair)
    pairs.sort(key=_severity)
    gone = ()
    if old is not None:
        today = {p.key for p in pairs if p.violation and not p.allowed}
        gone = tuple(e for e in old.entries if e.key not in today)
    timings["verdicts"] = time.perf_counter() - t

    report = ScanReport(
        objects=objects, pairs=tuple(pairs), errors=tuple(errors), counts=counts, checked=len(i),
        candidates=candidates, mode="hull" if mode == "hull" or refine is None else "auto",
        requested=mode, tolerance=tolerance, clearance=clearance, fail_on=fail_on,
        all_pairs=all_pairs, baseline=str(baseline) if baseline is not None else None,
        gone=gone, notes=tuple(notes), timings=timings, version=_version(),
        elapsed=time.perf_counter() - started, _index={name: k for k, name in enumerate(names)})
    if write_baseline is not None:
        entries = _baseline_entries(report, base_new)
        baselines.write(write_baseline, entries)
        report = dataclasses.replace(report, baseline_written=str(write_baseline))
    return report


def _jobs(jobs: int | None) -> int:
    if jobs is None:
        return max(1, os.cpu_count() or 1)
    if int(jobs) < 1:
        raise ValueError(f"jobs must be >= 1, got {jobs}")
    return int(jobs)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("gjk")
    except PackageNotFoundError:
        return "unknown (not installed)"


# -- statuses -------------------------------------------------------------------------------------

_STATUS = {0: Status.CLEAR, 1: Status.TOUCHING, 2: Status.COLLISION, 3: Status.UNDECIDED,
           4: Status.CLEARANCE}
_CODE = {s: c for c, s in _STATUS.items()}


# engine status codes (gjkcli.results.STATUS_CODES; 4 is "intersecting", a collision) to the above
_ENGINE_TO_CODE = np.array([0, 1, 2, 3, 2], dtype=np.int8)


@dataclass
class _Verdicts:
    """Makes the ScanPair of a checked pair: clearance, violation, allowed, baseline key."""

    names: list
    files: list
    nonconvex: np.ndarray
    clearance: float | None
    fail_on: tuple
    requested: str
    allow: dict
    key_of: Callable
    known: frozenset | None

    def __call__(self, k: int, a: int, b: int, result: Result, status: Status | None,
                 pair_clearance: float, mode: str) -> ScanPair:
        """Pair k of objects a, b; `status` overrides the result's (clearance applied), else the
        refined result's status gets the clearance here."""
        if status is None:
            status = result.status
            if status is Status.CLEAR and pair_clearance > 0 and result.distance < pair_clearance:
                status = Status.CLEARANCE
        if status is not result.status:
            result = dataclasses.replace(result, status=status)
        clearance = pair_clearance if pair_clearance > 0 or self.clearance is not None else None
        reason = self.allow.get(k)
        key = self.key_of(self.names[a], self.names[b], self.files[a], self.files[b])
        violation = _violates(status, clearance, self.fail_on)
        known = self.known is not None and violation and reason is None and key in self.known
        conservative = mode == "hull" and status is not Status.CLEAR \
            and bool(self.nonconvex[a] or self.nonconvex[b])
        return ScanPair(a=self.names[a], b=self.names[b], result=result, mode=mode,
                        requested=self.requested, clearance=clearance, conservative=conservative,
                        violation=violation, allowed=reason is not None, reason=reason,
                        known=bool(known), file_a=self.files[a], file_b=self.files[b], key=key)


def _violates(status: Status, clearance: float | None, fail_on) -> bool:
    """Whether a pair with this status fails the scan under `fail_on`.

    As in `gjk check`: undecided always fails (no verdict is not a pass); touching parts are
    closer than any positive clearance, so they fail a required clearance as "clearance".
    """
    if status is Status.UNDECIDED:
        return True
    if status is Status.COLLISION:
        return "collision" in fail_on
    if status is Status.CLEARANCE:
        return "clearance" in fail_on
    if status is Status.TOUCHING:
        return "touching" in fail_on or (clearance is not None and clearance > 0 and "clearance" in fail_on)
    return False


def _severity(pair: ScanPair):
    r = pair.result
    status = pair.status
    if status is Status.COLLISION:
        size = -(r.depth if r.depth is not None else 0.0)
    elif status in (Status.CLEARANCE, Status.CLEAR, Status.UNDECIDED):
        size = r.distance
    else:
        size = r.signed_distance
    return (pair.allowed, pair.known, SEVERITY[status], size, pair.a, pair.b)


def _allowed(resolved, i, j) -> dict:
    """{pair index: reason} for pairs an allow rule covers (the first rule that does)."""
    out: dict[int, str] = {}
    if resolved is None or not resolved.allows or len(i) == 0:
        return out
    for in_a, in_b, reason, _line in resolved.allows:
        hit = (in_a[i] & in_b[j]) | (in_b[i] & in_a[j])
        for k in np.flatnonzero(hit).tolist():
            out.setdefault(k, reason)
    return out


class _KeyMaker:
    """Baseline keys, with each file's relative path worked out once (not once per pair)."""

    def __init__(self, base: Path):
        self.base = base
        self.files: dict[str, str] = {}

    def rel(self, file: str) -> str:
        from gjkcli.baseline import relative_file

        if file not in self.files:
            self.files[file] = relative_file(file, self.base)
        return self.files[file]

    def __call__(self, a: str, b: str, file_a: str, file_b: str) -> tuple:
        # the key holds the file, so names drop the "file:" prefix a scan of several files adds:
        # a baseline written for one file still matches when another file joins the scan
        a, b = _local_name(a, file_a), _local_name(b, file_b)
        if b < a:
            a, b, file_a, file_b = b, a, file_b, file_a
        fa, fb = self.rel(file_a), self.rel(file_b)
        return (fa if fa == fb else f"{fa} + {fb}", a, b)


def _local_name(name: str, file: str) -> str:
    prefix = f"{Path(file).name}:"
    return name[len(prefix):] if name.startswith(prefix) else name


def _baseline_entries(report: ScanReport, base: Path):
    from gjkcli.baseline import Entry

    key_of = _KeyMaker(base)
    entries = []
    for p in report.pairs:
        if not (p.violation and not p.allowed):
            continue
        file, a, b = key_of(p.a, p.b, p.file_a, p.file_b)
        r = p.result
        entries.append(Entry(file=file, a=a, b=b, status=Status(p.status).value,
                             depth=None if r.depth is None else float(r.depth),
                             distance=float(r.distance)))
    return entries


# -- loading --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Source:
    """A file to read: every object of it (`whole` False) or the whole file as one object."""

    path: Path
    shown: str
    prefix: str | None
    transform: np.ndarray | None = None
    split_bodies: bool = False
    whole: bool = False
    name: str | None = None


def _sources(paths, m, split_bodies, errors) -> tuple[list[_Source], list]:
    from gjkcli.load import expand_paths

    files: list[tuple[Path, np.ndarray | None, bool]] = []
    seen = set()
    for given in ([paths] if isinstance(paths, (str, os.PathLike)) else list(paths)):
        try:
            found = expand_paths([given])
        except InputError as exc:  # a missing path is an error entry; the others are still read
            errors.append(InputProblem(file=exc.source, message=exc.message))
            continue
        for p in found:
            if p.resolve() not in seen:  # a file reached twice (itself and its folder) is read once
                seen.add(p.resolve())
                files.append((p, None, split_bodies))
    if m is not None:
        files.extend((inc.file, inc.transform, inc.split_bodies) for inc in m.includes)
    # several files share world coordinates; their objects are told apart by the file's name
    several = len(files) > 1
    shown = [str(p) for p, _, _ in files]
    base_names = [Path(p).name for p, _, _ in files]
    prefixes = []
    for k, name in enumerate(base_names):
        prefixes.append(name if base_names.count(name) == 1 else Path(shown[k]).as_posix())
    sources = [_Source(path=Path(p), shown=shown[k], prefix=prefixes[k] if several else None,
                       transform=T, split_bodies=split)
               for k, (p, T, split) in enumerate(files)]
    primitives = []
    if m is not None:
        for spec in m.objects:
            if spec.file is not None:
                sources.append(_Source(path=spec.file, shown=str(spec.file), prefix=None,
                                       transform=spec.transform, whole=True, name=spec.name))
            else:
                primitives.append(spec)
    return sources, primitives


def _load_all(paths, m, split_bodies, jobs, errors, tell) -> list[Geometry]:
    sources, primitives = _sources(paths, m, split_bodies, errors)
    results: list = [None] * len(sources)
    tell("load", 0, len(sources))
    if jobs > 1 and len(sources) > 1 and _can_fork():
        from concurrent.futures import ProcessPoolExecutor
        import multiprocessing

        with ProcessPoolExecutor(min(jobs, len(sources)),
                                 mp_context=multiprocessing.get_context("fork")) as pool:
            futures = [pool.submit(_read_source, s) for s in sources]
            for k, f in enumerate(futures):
                results[k] = f.result()
                tell("load", k + 1, len(sources))
    else:
        for k, s in enumerate(sources):
            results[k] = _read_source(s)
            tell("load", k + 1, len(sources))
    geoms: list[Geometry] = []
    for s, got in zip(sources, results):
        if isinstance(got, InputProblem):
            errors.append(got)
        else:
            geoms.extend(got)
    geoms.extend(_primitive(spec, m) for spec in primitives)
    return _unique_names(geoms)


def _can_fork() -> bool:
    import multiprocessing

    return "fork" in multiprocessing.get_all_start_methods()


def _read_source(s: _Source):
    """A source's objects, or an InputProblem naming the file (never raises an InputError)."""
    try:
        if s.whole:
            from gjkcli.load import load_part

            part = load_part(s.path)
            geoms = [Geometry(name=s.name, file=s.shown, vertices=part.vertices, faces=part.faces,
                              units=part.units, watertight=part.watertight, bodies=part.bodies)]
        else:
            geoms = read_objects(s.path, split_bodies=s.split_bodies, prefix=s.prefix, shown=s.shown)
        if s.transform is not None:
            geoms = [_moved(g, s.transform) for g in geoms]
        return geoms
    except InputError as exc:
        return InputProblem(file=s.shown, message=_one_line(exc.message))
    except Exception as exc:  # noqa: BLE001 - a file trimesh chokes on must not stop the scan
        return InputProblem(file=s.shown, message=f"cannot read it ({type(exc).__name__}: "
                                                  f"{_one_line(exc)}); re-export it")


def _moved(g: Geometry, T: np.ndarray) -> Geometry:
    """The geometry with a further 4x4 transform (scale and shear too) applied to its vertices."""
    vertices = g.vertices @ T[:3, :3].T + T[:3, 3]
    faces = g.faces[:, [0, 2, 1]] if np.linalg.det(T[:3, :3]) < 0 else g.faces
    return dataclasses.replace(g, vertices=vertices, faces=faces)


def _primitive(spec, m) -> Geometry:
    from gjkcli.shapes import Shape

    p = spec.params
    try:
        if spec.primitive == "box":
            shape = Shape.box(p["extents"], transform=spec.transform)
        elif spec.primitive == "sphere":
            shape = Shape.sphere(p["radius"], center=spec.transform[:3, 3])
        elif spec.primitive == "capsule":
            shape = Shape.capsule(p["radius"], p["length"], transform=spec.transform)
        else:
            shape = Shape.cylinder(p["radius"], p["height"], transform=spec.transform)
    except ShapeError as exc:
        raise m.error(spec.line, f"[[object]] {spec.name!r}: {exc}") from exc
    return Geometry(name=spec.name, file=str(m.path), primitive=shape, watertight=True, bodies=1)


def _unique_names(geoms: list[Geometry]) -> list[Geometry]:
    """Objects of one name get "#2", "#3", ... after the first (as `gjk check` does)."""
    seen: dict[str, int] = {}
    taken = {g.name for g in geoms}
    out = []
    for g in geoms:
        if g.name in seen:
            k = seen[g.name] + 1
            while f"{g.name}#{k}" in taken:
                k += 1
            seen[g.name] = k
            taken.add(f"{g.name}#{k}")
            g = dataclasses.replace(g, name=f"{g.name}#{k}")
        else:
            seen[g.name] = 1
        out.append(g)
    return out


def read_objects(path, *, split_bodies: bool = False, prefix: str | None = None,
                 shown: str | None = None) -> list[Geometry]:
    """Every object of a file in world coordinates, named as `gjkcli.load.load_objects` names them.

    The fast path of scans. trimesh reads the file (through gjkcli.load, with its options and
    error messages), and each scene node gives its mesh's vertices moved by the node's full world
    transform (scale included); the transforms are applied to all nodes at once in NumPy and each
    mesh is checked once however many nodes instance it. Nothing else is computed per part: no
    vertex merging and no topology (`watertight` and `bodies` are None). glTF and GLB files are
    read by trimesh's glTF parser without building a trimesh.Trimesh per mesh, which is most of
    trimesh's loading time for scenes of many small parts. With split_bodies, the bodies come
    from `gjkcli.load.load_objects`, which computes them.

    prefix : names become "<prefix>:<name>" (a scan of several files), except the name of a
    file's only object, which is the file's name already.

    Raises InputError as load_objects does.
    """
    from gjkcli import load

    shown = str(path) if shown is None else shown
    path = Path(path)

    def named(name: str) -> str:
        # a file of one object is named after the file already: "link0.stl", not
        # "link0.stl:link0.stl" (and its bodies "link0.stl#2")
        if prefix is None or name == path.name or name.startswith(path.name + "#"):
            return name
        return f"{prefix}:{name}"

    if split_bodies:
        parts = load.load_objects(path, split_bodies=True)
        return [Geometry(name=named(p.name), file=shown, vertices=p.vertices, faces=p.faces,
                         units=p.units, watertight=p.watertight, bodies=p.bodies) for p in parts]
    load._check_file(path)
    file_type = load._file_type(path)
    scenes = None
    if file_type in ("glb", "gltf"):
        try:
            scenes = [(None, _read_gltf(path))]
        except Exception:  # noqa: BLE001 - gjkcli.load reads it again and words the error
            scenes = None
    if scenes is None:
        scenes = [(member, _trimesh_nodes(scene)) for member, scene in load._read(path)]
    out = []
    for member, (nodes, geometry) in scenes:
        if not nodes:
            where = f"member {member}" if member else "file"
            raise InputError(path, f"{where} holds no triangles (an empty mesh); re-export it with "
                                   f"its geometry")
        names = [named(load._object_name(path, member, node, len(nodes))) for node, _, _ in nodes]
        out.extend(_placed(path, shown, names, nodes, geometry))
    return out


def _trimesh_nodes(scene):
    """([(node, world transform, geometry name)], {geometry name: geometry}) of a trimesh Scene."""
    graph = scene.graph
    nodes = []
    for node in graph.nodes_geometry:
        transform, geometry_name = graph[node]
        nodes.append((node, transform, geometry_name))
    return nodes, scene.geometry


class _GltfMesh:
    """The fields of a trimesh geometry that `_mesh_arrays` reads, from trimesh's glTF kwargs."""

    def __init__(self, kwargs: dict):
        self.vertices = kwargs.get("vertices")
        self.faces = kwargs.get("faces")
        metadata = kwargs.get("metadata") or {}
        self.units = metadata.get("units")


def _read_gltf(path: Path):
    """A glTF or GLB file's nodes and meshes through trimesh's glTF parser, without a Scene.

    trimesh.load_scene does the same and then builds a trimesh.Trimesh per mesh and a SceneGraph
    (half its time on scenes of small parts). Node names, the order of the nodes, the merging of
    a mesh's primitives and the meshes' units are trimesh's: node names are the graph edges'
    `frame_to` (made unique by trimesh's parser), in the order the parser lists them, and each
    node's world transform is the product of the edge matrices from the base frame down.
    Any failure here sends the file through gjkcli.load instead, which words the error.
    """
    import trimesh
    from trimesh.exchange import gltf

    loader = gltf.load_glb if path.suffix.lower() == ".glb" else gltf.load_gltf
    with open(path, "rb") as stream:
        kwargs = loader(stream, resolver=trimesh.resolvers.FilePathResolver(path),
                        merge_primitives=True)
    base = kwargs.get("base_frame", "world")
    parent: dict = {}
    nodes, seen = [], set()
    for edge in kwargs.get("graph") or []:
        child = edge["frame_to"]
        matrix = edge.get("matrix")
        parent[child] = (edge.get("frame_from", base),
                         np.eye(4) if matrix is None else np.asarray(matrix, dtype=np.float64))
        if edge.get("geometry") is not None and child not in seen:
            seen.add(child)
            nodes.append((child, edge["geometry"]))
    world: dict = {base: np.eye(4)}

    def transform(node):
        chain = []
        while node not in world:
            if node not in parent or len(chain) > len(parent):
                raise InputError(path, f"node '{node}' is not connected to the scene's root; "
                                       f"re-export the file")
            chain.append(node)
            node = parent[node][0]
        for child in reversed(chain):
            world[child] = world[parent[child][0]] @ parent[child][1]
        return world[chain[0]] if chain else world[node]

    geometry = {name: _GltfMesh(kw) for name, kw in (kwargs.get("geometry") or {}).items()}
    return [(node, transform(node), name) for node, name in nodes], geometry


def _placed(path, shown: str, names, nodes, geometry) -> list[Geometry]:
    """Geometry per node: its mesh (checked once per mesh) moved by its world transform.

    Both the checks and the transforms run on all meshes and nodes at once: world = R v + t,
    row by row, for every node's vertices.
    """
    first_user: dict = {}
    for name, (_, _, geometry_name) in zip(names, nodes):
        first_user.setdefault(geometry_name, name)
    order = list(first_user)
    meshes = _mesh_arrays(path, [first_user[key] for key in order], [geometry[key] for key in order])
    slot = {key: k for k, key in enumerate(order)}
    mesh_of = np.array([slot[key] for _, _, key in nodes], dtype=np.int64)
    counts = np.array([len(v) for v, _, _ in meshes], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(counts)[:-1]])
    V = np.concatenate([v for v, _, _ in meshes])
    T = np.array([t for _, t, _ in nodes], dtype=np.float64).reshape(-1, 4, 4)
    n_rows = counts[mesh_of]
    row_start = np.concatenate([[0], np.cumsum(n_rows)[:-1]])
    node_of_row = np.repeat(np.arange(len(nodes)), n_rows)
    rows = offsets[mesh_of][node_of_row] + np.arange(n_rows.sum()) - row_start[node_of_row]
    R, t = T[node_of_row, :3, :3], T[node_of_row, :3, 3]
    v = V[rows]
    world = R[:, :, 0] * v[:, 0:1] + R[:, :, 1] * v[:, 1:2] + R[:, :, 2] * v[:, 2:3] + t
    finite = np.isfinite(world).all(axis=1)
    if not finite.all():
        bad = int(node_of_row[np.argmin(finite)])
        raise InputError(path, f"object '{names[bad]}' has NaN or infinite coordinates after its "
                               f"node transform; fix the export")
    mirrored = (np.linalg.det(T[:, :3, :3]) < 0).tolist()
    starts, ends = row_start.tolist(), (row_start + n_rows).tolist()
    out = []
    for k, (name, m) in enumerate(zip(names, mesh_of.tolist())):
        _, faces, units = meshes[m]
        if mirrored[k]:
            faces = faces[:, [0, 2, 1]]  # a mirror turns the mesh inside out: undo it
        out.append(Geometry(name=name, file=shown, vertices=world[starts[k]: ends[k]], faces=faces,
                            units=units))
    return out


def _mesh_arrays(path, names, geometries) -> list:
    """[(vertices a triangle uses, faces into them, units)] of trimesh geometries, checked together.

    names : the object named in an error about each geometry (its first node)
    Errors as gjkcli.load's: no triangles, triangles pointing past the vertices, NaN or infinite
    coordinates (of vertices a triangle uses); vertices no triangle uses are dropped.
    """
    raw = []
    for name, g in zip(names, geometries):
        faces = getattr(g, "faces", None)
        if faces is None:
            kind = "a point cloud" if type(g).__name__ == "PointCloud" else "lines or points"
            raise InputError(path, f"object '{name}' is {kind} with no triangles; gjk needs "
                                   f"triangle meshes: export it as a mesh")
        raw.append((np.asarray(g.vertices, dtype=np.float64).reshape(-1, 3),
                    np.asarray(faces, dtype=np.int64).reshape(-1, 3), getattr(g, "units", None)))
    n_v = np.array([len(v) for v, _, _ in raw], dtype=np.int64)
    n_f = np.array([len(f) for _, f, _ in raw], dtype=np.int64)
    if np.any(n_f == 0):
        name = names[int(np.argmax(n_f == 0))]
        raise InputError(path, f"object '{name}' has no triangles; gjk needs triangle meshes: "
                               f"export it as a mesh")
    F = np.concatenate([f for _, f, _ in raw])
    mesh_of_face = np.repeat(np.arange(len(raw)), n_f)
    f_starts = np.concatenate([[0], np.cumsum(n_f)[:-1]])
    out_of_range = (np.minimum.reduceat(F.min(axis=1), f_starts) < 0) \
        | (np.maximum.reduceat(F.max(axis=1), f_starts) >= n_v)
    if out_of_range.any():
        k = int(np.argmax(out_of_range))
        raise InputError(path, f"object '{names[k]}' has triangles that point past its "
                               f"{n_v[k]} vertices; re-export it")
    v_starts = np.concatenate([[0], np.cumsum(n_v)[:-1]])
    used = np.bincount((F + v_starts[mesh_of_face][:, None]).ravel(), minlength=int(n_v.sum())) > 0
    V = np.concatenate([v for v, _, _ in raw])
    bad = ~np.isfinite(V).all(axis=1) & used
    if bad.any():
        k = int(np.searchsorted(v_starts, np.argmax(bad), side="right") - 1)
        count = int(bad[v_starts[k]: v_starts[k] + n_v[k]].sum())
        raise InputError(path, f"object '{names[k]}' has NaN or infinite coordinates in {count} of "
                               f"{n_v[k]} vertices; fix the export")
    unused = np.add.reduceat(~used, v_starts) > 0 if len(V) else np.zeros(len(raw), dtype=bool)
    out = []
    for k, (vertices, faces, units) in enumerate(raw):
        if unused[k]:  # vertices no triangle uses are not part of the object
            keep = used[v_starts[k]: v_starts[k] + n_v[k]]
            index = np.cumsum(keep) - 1
            vertices, faces = vertices[keep], index[faces]
        out.append((vertices, faces, units))
    return out


def _one_line(text) -> str:
    return " ".join(str(text).split())


# -- hulls ----------------------------------------------------------------------------------------


def _shapes(geoms, jobs, errors, tell):
    """(shapes, convex flags, lo, hi, geometries kept): hulls of meshes, primitives as they are.

    An object whose geometry makes no shape becomes an error entry of its file.
    """
    mesh_index = [k for k, g in enumerate(geoms) if g.primitive is None]
    hulls = build_hulls([geoms[k].vertices for k in mesh_index], jobs=jobs, progress=tell)
    n = len(geoms)
    shapes: list = [g.primitive for g in geoms]
    lo, hi = np.empty((n, 3)), np.empty((n, 3))
    for k, g in enumerate(geoms):
        if g.primitive is not None:
            lo[k], hi[k] = g.primitive.bounds
    index = np.asarray(mesh_index, dtype=np.int64)
    for slot, k in enumerate(mesh_index):
        shapes[k] = hulls.shapes[slot]
    if len(index):
        lo[index], hi[index] = hulls.lo, hulls.hi
    convex = np.array([g.primitive is not None for g in geoms], dtype=bool)
    if len(index):
        convex[index] = convex_parts(hulls, [geoms[k].faces for k in mesh_index],
                                     [geoms[k].vertices for k in mesh_index])
    keep = []
    for k, shape in enumerate(shapes):
        if isinstance(shape, ShapeError):
            g = geoms[k]
            errors.append(InputProblem(file=g.file, message=f"object '{g.name}': unusable "
                                                            f"geometry: {_one_line(shape)}"))
        else:
            keep.append(k)
    if len(keep) < n:
        geoms = [geoms[k] for k in keep]
        shapes = [shapes[k] for k in keep]
        convex, lo, hi = convex[keep], lo[keep], hi[keep]
    return shapes, convex, lo, hi, geoms


@dataclass(frozen=True, eq=False)
class Hulls:
    """The hulls of many parts (see `build_hulls`).

    shapes : list of Shape, or of the ShapeError a part's points raise
    lo, hi : (n, 3) float64 world bounds of each hull (NaN where there is none); exactly
        Shape.bounds
    area : (n,) float64 surface area of each solid hull (qhull's), NaN for flat hulls and errors
    """

    shapes: list
    lo: np.ndarray
    hi: np.ndarray
    area: np.ndarray


@contextmanager
def _no_gc():
    """Pause the cyclic garbage collector: loops that make thousands of objects otherwise trigger
    collections that walk every object alive (measured: a quarter of the per-part qhull time)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def build_hulls(points, *, jobs: int = 1, progress=None) -> Hulls:
    """Convex hulls of many parts at once, each exactly what `Shape.hull(points_i)` builds.

    Parameters
    ----------
    points : sequence of (n_i, 3) float64
        Each part's vertices in world coordinates.
    jobs : int
        Worker processes for qhull (forked, and only from _PARALLEL_HULLS_FROM parts).

    How: per part, one qhull call (scipy's ConvexHull) on the points centred as Shape.hull centres
    them; then, for all parts at once in NumPy, the hull vertex selection, the re-indexed
    triangles, the CSR vertex adjacency (in the sorted order of shapes._csr) and the bounds; each
    Shape is then made by Shape._make, which derives the rest (extent, size, the cold-start
    table). Parts for which qhull fails, or that are nearly flat (volume <= 4 pi flat_rel
    extent^3, where Shape.hull's flatness test could decide otherwise), go through Shape.hull.
    """
    from gjkcli.shapes import Shape
    from gjkcli.tolerances import DEFAULT

    tell = progress or (lambda stage, done, total: None)
    count = len(points)
    lo, hi = np.full((count, 3), np.nan), np.full((count, 3), np.nan)
    area = np.full(count, np.nan)
    out: list = [None] * count
    if count == 0:
        return Hulls(out, lo, hi, area)
    pts = [np.ascontiguousarray(p, dtype=np.float64).reshape(-1, 3) for p in points]
    sizes = np.fromiter((len(p) for p in pts), dtype=np.int64, count=count)
    for k in np.flatnonzero(sizes == 0).tolist():
        out[k] = ShapeError("no points to build a hull from")
    good = np.flatnonzero(sizes > 0)
    if len(good) == 0:
        return Hulls(out, lo, hi, area)
    flat_pts = np.concatenate([pts[k] for k in good.tolist()])
    n_pts = sizes[good]
    starts = np.concatenate([[0], np.cumsum(n_pts)[:-1]])
    finite = np.isfinite(flat_pts).all(axis=1)
    p_lo = np.minimum.reduceat(flat_pts, starts, axis=0)
    p_hi = np.maximum.reduceat(flat_pts, starts, axis=0)
    centre = 0.5 * (p_lo + p_hi)
    local = flat_pts - np.repeat(centre, n_pts, axis=0)

    # qhull chunk by chunk, in worker processes when there are many parts; each chunk is
    # assembled here as it comes back, while the workers run the next ones. Chunks keep arrays
    # in cache and memory flat: one 22M-element pass at 100,000 parts was 3.5x slower per part.
    chunks = [(a, min(a + _HULL_CHUNK, len(good))) for a in range(0, len(good), _HULL_CHUNK)]
    args = [(local[starts[a]: starts[b - 1] + n_pts[b - 1]], n_pts[a:b], DEFAULT.flat_rel)
            for a, b in chunks]
    all_finite = np.add.reduceat(finite.astype(np.int64), starts) == n_pts
    solid = np.zeros(len(good), dtype=bool)
    shapes = []
    tell("hulls", 0, len(good))
    with _hull_results(args, jobs if len(good) >= _PARALLEL_HULLS_FROM else 1) as results:
        for (a, b), (simplices, n_simp, chunk_solid, hull_area) in zip(chunks, results):
            solid[a:b] = chunk_solid & all_finite[a:b]
            s0 = starts[a]
            made, h_lo, h_hi = _assemble(local[s0: starts[b - 1] + n_pts[b - 1]], centre[a:b],
                                         starts[a:b] - s0, n_pts[a:b], simplices, n_simp, solid[a:b])
            shapes.extend(made)
            ok = good[a:b][solid[a:b]]
            lo[ok], hi[ok] = h_lo, h_hi
            area[ok] = hull_area[solid[a:b]]
            tell("hulls", b, len(good))
    made = iter(shapes)  # the solid parts' shapes, in order
    for slot, k in enumerate(good.tolist()):
        if solid[slot]:
            out[k] = next(made)
            continue
        try:
            out[k] = Shape.hull(pts[k])
            lo[k], hi[k] = out[k].bounds
        except ShapeError as exc:
            out[k] = exc
        except (IndexError, ValueError) as exc:  # seen from 2 distinct points in an older shapes.py
            out[k] = ShapeError(f"no hull could be built ({type(exc).__name__}: {exc})")
    return Hulls(out, lo, hi, area)


@contextmanager
def _hull_results(args, jobs: int):
    """The `_qhull_chunk` results of `args`, in order: from forked workers when jobs > 1."""
    if jobs > 1 and len(args) > 1 and _can_fork():
        from concurrent.futures import ProcessPoolExecutor
        import multiprocessing

        with ProcessPoolExecutor(min(jobs, len(args)),
                                 mp_context=multiprocessing.get_context("fork")) as pool:
            yield pool.map(_qhull_chunk, args)
    else:
        yield map(_qhull_chunk, args)


def _qhull_chunk(arg):
    """Worker: qhull per part of a chunk. Returns (simplices, counts, solid, area).

    simplices : (F, 3) int32, point indices local to each part, parts one after the other
    counts : (m,) int64 simplices per part (0 where the part is not solid)
    solid : (m,) bool qhull built a solid hull that Shape.hull would build too
    area : (m,) float64 the hull's surface area (0 where not solid)
    """
    from scipy.spatial import ConvexHull, QhullError

    local, n_pts, flat_rel = arg
    m = len(n_pts)
    ends = np.cumsum(n_pts).tolist()
    begins = [0] + ends[:-1]
    extent = np.maximum.reduceat(np.abs(local).max(axis=1), begins) if m else np.zeros(0)
    ok = np.isfinite(local).all(axis=1)
    finite = np.add.reduceat(ok.astype(np.int64), begins) == n_pts if m else np.zeros(0, bool)
    # the points' thickness along any axis is at least V / (3 pi extent^2) (they lie in a ball of
    # radius sqrt(3) extent); above flat_rel extent, Shape.hull builds this very hull
    min_volume = (4.0 * np.pi * flat_rel * extent**3).tolist()
    out, counts = [], np.zeros(m, dtype=np.int64)
    solid = np.zeros(m, dtype=bool)
    area = np.zeros(m)
    with _no_gc():
        for k in range(m):
            if n_pts[k] < 4 or not finite[k]:
                continue
            try:
                hull = ConvexHull(local[begins[k]: ends[k]])
            except QhullError:
                continue
            if not hull.volume > min_volume[k]:
                continue
            out.append(hull.simplices)
            counts[k] = len(out[-1])
            solid[k] = True
            area[k] = hull.area
    simplices = np.concatenate(out).astype(np.int32) if out else np.zeros((0, 3), dtype=np.int32)
    return simplices, counts, solid, area


def _assemble(local, centre, starts, n_pts, simplices, n_simp, solid):
    """Shapes of the solid parts from their qhull simplices, every step vectorized over parts.

    Mirrors shapes._convex_hull + Shape._make: hull vertices are the sorted unique simplex
    indices (scipy's ConvexHull.vertices), faces are the simplices re-indexed to them, the
    adjacency is the sorted unique directed edge list in CSR form. Returns (shapes, lo, hi):
    the solid parts' shapes in order, and their world bounds (Shape.bounds: min and max of
    vertices + translation, which rounding keeps equal to min(vertices) + translation).
    """
    from gjkcli.shapes import Shape

    m = int(solid.sum())
    n_simp = n_simp[solid]
    centre = centre[solid]
    if m == 0:
        return [], np.zeros((0, 3)), np.zeros((0, 3))
    part_of_simplex = np.repeat(np.arange(m), n_simp)
    g = simplices.astype(np.int64) + starts[solid][part_of_simplex][:, None]  # global point ids
    index = _sorted_unique(g.ravel())  # per part, its hull vertices in increasing local order
    part_of_vertex = np.searchsorted(starts[solid], index, side="right") - 1
    n_hull = np.bincount(part_of_vertex, minlength=m)
    h_starts = np.concatenate([[0], np.cumsum(n_hull)[:-1]])
    gid = np.full(len(local), -1, dtype=np.int64)
    gid[index] = np.arange(len(index))
    faces_g = gid[g]  # (F, 3) global hull vertex ids
    faces_local = (faces_g - h_starts[part_of_simplex][:, None]).astype(np.int32)
    vertices = local[index]
    # adjacency: both directions of every triangle edge, unique, sorted by (source, target)
    src, adj_local = _adjacency(faces_local, part_of_simplex, n_hull, h_starts)
    total = len(index)
    degree = np.bincount(src, minlength=total)
    # per part CSR offsets: n_hull + 1 entries starting at 0, laid out one part after another
    csum = np.concatenate([[0], np.cumsum(degree)])
    a_starts = csum[h_starts]  # where each part's neighbours begin in adj
    a_ends = csum[h_starts + n_hull]
    part_of_row = np.repeat(np.arange(m), n_hull + 1)
    row_start = np.concatenate([[0], np.cumsum(n_hull + 1)[:-1]])
    vertex_of_row = h_starts[part_of_row] + (np.arange(total + m) - row_start[part_of_row])
    adj_start = (csum[vertex_of_row] - a_starts[part_of_row]).astype(np.int32)
    v_lo = np.minimum.reduceat(vertices, h_starts, axis=0)
    v_hi = np.maximum.reduceat(vertices, h_starts, axis=0)
    f_starts = np.concatenate([[0], np.cumsum(n_simp)[:-1]]).tolist()
    zeros3, eye = np.zeros(3), np.eye(3)
    hs, he = h_starts.tolist(), (h_starts + n_hull).tolist()
    rs, re_ = row_start.tolist(), (row_start + n_hull + 1).tolist()
    as_, ae = a_starts.tolist(), a_ends.tolist()
    fe = (np.asarray(f_starts) + n_simp).tolist()
    centres = list(centre.copy())
    shapes = []
    if not _direct_shapes():
        # Shape has fields this code does not know: Shape._make derives them (slower)
        with _no_gc():
            for k in range(m):
                shapes.append(Shape._make("hull", vertices[hs[k]: he[k]], adj_start[rs[k]: re_[k]],
                                          adj_local[as_[k]: ae[k]], faces_local[f_starts[k]: fe[k]],
                                          3, zeros3, 0.0, eye, centres[k]))
        return shapes, v_lo + centre, v_hi + centre
    # what Shape._make derives, for all parts at once: extent = max |v| (row norms, as _make takes
    # them); size = |hi - lo| per part as np.linalg.norm takes a vector's (sqrt of a dot), to be
    # bit-identical; the cold-start tables of shapes._cube_map
    extent = np.maximum.reduceat(np.linalg.norm(vertices, axis=1), h_starts).tolist()
    span = v_hi - v_lo
    cubes = _cube_maps(vertices, h_starts, n_hull)
    zeros3.flags.writeable = False
    eye.flags.writeable = False
    with _no_gc():
        for k in range(m):
            shapes.append(Shape("hull", vertices[hs[k]: he[k]], adj_start[rs[k]: re_[k]],
                                adj_local[as_[k]: ae[k]], faces_local[f_starts[k]: fe[k]], 3, zeros3,
                                0.0, eye, centres[k], extent[k], math.sqrt(span[k] @ span[k]),
                                cubes[k]))
    return shapes, v_lo + centre, v_hi + centre


# The fields of gjkcli.shapes.Shape that `_assemble` fills itself, in order. When shapes.py adds
# or changes one, `_direct_shapes` turns False and every Shape is made by Shape._make instead
# (correct, slower); tests/test_scan.py fails until this list and `_cube_maps` follow.
_SHAPE_FIELDS = ("kind", "vertices", "adj_start", "adj", "faces", "dimension", "dims", "radius",
                 "rotation", "translation", "_extent", "_size", "_cube")


def _direct_shapes() -> bool:
    from gjkcli import shapes

    return tuple(f.name for f in dataclasses.fields(shapes.Shape)) == _SHAPE_FIELDS


def _cube_directions(k: int) -> np.ndarray:
    """The (6 k k, 3) cell-centre directions of shapes._cube_map, in its layout."""
    centre = -1.0 + (2.0 * np.arange(k) + 1.0) / k
    u, v = np.meshgrid(centre, centre, indexing="ij")
    dirs = np.empty((6, k, k, 3))
    for face in range(6):
        a = face // 2
        dirs[face, :, :, a] = -1.0 if face % 2 else 1.0
        dirs[face, :, :, (a + 1) % 3] = u
        dirs[face, :, :, (a + 2) % 3] = v
    return dirs.reshape(-1, 3)


def _cube_maps(vertices, h_starts, n_hull) -> list:
    """shapes._cube_map of every part's hull vertices, parts of one size class at once.

    Each table entry is the first vertex of largest dot product with a cell's direction
    (np.argmax); padding a part's vertices with copies of its vertex 0 changes no first maximum.
    """
    from gjkcli.tolerances import DEFAULT

    m = len(n_hull)
    empty = np.zeros(0, dtype=np.int32)
    out = [empty] * m
    n = n_hull.astype(np.int64)
    k = np.where(n < DEFAULT.brute_force_below, 0,
                 np.minimum(16, np.maximum(1, np.ceil(np.sqrt(n) / 4.0)))).astype(np.int64)
    for kk in np.unique(k[k > 0]).tolist():
        dirs = _cube_directions(kk)
        members = np.flatnonzero(k == kk)
        width = _ceil_bucket(n[members])
        for w in np.unique(width).tolist():
            group = members[width == w]
            step = max(1, (4 << 20) // (w * len(dirs)))
            for c in range(0, len(group), step):
                g = group[c: c + step]
                H = vertices[h_starts[g][:, None] + _padded_rows(n[g], w)]  # (B, w, 3)
                # (B, 6 k k, w): the argmax runs along contiguous rows
                best = np.argmax(np.matmul(dirs, H.transpose(0, 2, 1)), axis=2).astype(np.int32)
                for slot, part in enumerate(g.tolist()):
                    out[part] = best[slot]
    return out


def convex_parts(hulls: Hulls, faces, vertices) -> np.ndarray:
    """(n,) bool: each part is its own hull to within the touching band.

    A part is convex here when its triangles cover its hull's surface: every triangle lies in a
    supporting plane of the hull (its unit normal n, taken from its winding, has
    max over hull vertices of n.v - n.a <= DEFAULT.touching_rel x size, a a corner), and the
    triangles' total area equals the hull's (qhull's) to 1e-6, so no face is missing and none is
    doubled. A dent shallower than the touching band passes: the hull's verdict is then the
    part's to within the band. Parts with a flat hull (or none) are not called convex, so their
    verdicts are marked conservative.

    The supporting-plane test costs (triangles x hull vertices) per part; it runs in NumPy for
    many small parts at once, bucketed by size (at most 25% padding; the padding repeats a real
    vertex or triangle, which changes no maximum), and through the engine's support map (hill
    climbing in C) for large parts. Parts go through in chunks of a few thousand.
    """
    n = len(hulls.shapes)
    convex = np.zeros(n, dtype=bool)
    solid = [k for k in range(n) if not isinstance(hulls.shapes[k], ShapeError)
             and hulls.shapes[k].dimension == 3 and np.isfinite(hulls.area[k])]
    for c in range(0, len(solid), _HULL_CHUNK):
        chunk = solid[c: c + _HULL_CHUNK]
        convex[chunk] = _covers_hull([hulls.shapes[k] for k in chunk], hulls.area[chunk],
                                     [faces[k] for k in chunk], [vertices[k] for k in chunk])
    return convex


def _covers_hull(shapes, hull_area, faces, vertices) -> np.ndarray:
    """(m,) bool: `convex_parts` for solid hulls `shapes` of meshes (faces, vertices)."""
    from gjkcli.tolerances import DEFAULT

    solid = range(len(shapes))
    # mesh areas and face planes for all parts at once (world coordinates)
    n_tri = np.array([len(faces[k]) for k in solid])
    n_ver = np.array([len(vertices[k]) for k in solid])
    v_starts = np.concatenate([[0], np.cumsum(n_ver)[:-1]])
    V = np.concatenate([vertices[k] for k in solid])
    F = np.concatenate([faces[k] for k in solid]) + np.repeat(v_starts, n_tri)[:, None]
    a = V[F[:, 0]]
    cross = np.cross(V[F[:, 1]] - a, V[F[:, 2]] - a)
    twice = np.linalg.norm(cross, axis=1)
    t_starts = np.concatenate([[0], np.cumsum(n_tri)[:-1]])
    mesh_area = 0.5 * np.add.reduceat(twice, t_starts)
    covered = np.abs(mesh_area - hull_area) <= 1e-6 * hull_area
    with np.errstate(invalid="ignore", divide="ignore"):
        normal = cross / twice[:, None]
    real = twice > 0  # zero-area triangles have no plane, and add nothing
    normal[~real] = 0.0
    # the offset of each triangle's plane in its hull's local frame: n.(a - translation)
    translation = np.stack([s.translation for s in shapes])
    offset = np.einsum("ij,ij->i", normal, a - np.repeat(translation, n_tri, axis=0))
    band = DEFAULT.touching_rel * np.array([s.size for s in shapes])
    n_hull = np.array([s.n_vertices for s in shapes])
    ok = covered.copy()
    small = np.flatnonzero(covered & (n_hull <= 256) & (n_tri <= 4096))
    large = np.flatnonzero(covered & ~((n_hull <= 256) & (n_tri <= 4096)))
    bucket = (_ceil_bucket(n_hull[small]) << 20) | _ceil_bucket(n_tri[small])
    for key in np.unique(bucket).tolist():
        members = small[bucket == key]
        vb, fb = key >> 20, key & ((1 << 20) - 1)
        step = max(1, (4 << 20) // (vb * fb))
        for c in range(0, len(members), step):
            group = members[c: c + step]
            # rows padded by repeating index 0 of each part: a real vertex, a real triangle
            hv = _padded_rows(n_hull[group], vb)
            H = np.concatenate([shapes[s].vertices for s in group.tolist()])
            h_off = np.concatenate([[0], np.cumsum(n_hull[group])[:-1]])
            H = H[(h_off[:, None] + hv)]  # (B, vb, 3)
            tv = _padded_rows(n_tri[group], fb) + t_starts[group][:, None]
            N, D, R = normal[tv], offset[tv], real[tv]  # (B, fb, 3), (B, fb), (B, fb)
            gap = np.matmul(N, H.transpose(0, 2, 1)).max(axis=2) - D  # BLAS: 5x einsum
            ok[group] = np.all((gap <= band[group][:, None]) | ~R, axis=1)
    if len(large):
        from gjkcli.query import support

        for s in large.tolist():
            sl = slice(t_starts[s], t_starts[s] + n_tri[s])
            keep = real[sl]
            shape = shapes[s]
            pts, _, _ = support(shape, np.ascontiguousarray(normal[sl][keep]))
            gap = np.einsum("ij,ij->i", normal[sl][keep], pts - shape.translation) - offset[sl][keep]
            ok[s] = bool(np.all(gap <= band[s]))
    return ok


def _ceil_bucket(x: np.ndarray) -> np.ndarray:
    """x rounded up to a bucket size: 16, or a multiple of a quarter of x's octave (at most 25%
    of padding, and at most 4 sizes per octave), as int64."""
    x = np.maximum(np.asarray(x, dtype=np.int64), 16)
    step = 1 << np.maximum(np.floor(np.log2(x)).astype(np.int64) - 2, 0)
    return (x + step - 1) // step * step


def _padded_rows(counts: np.ndarray, width: int) -> np.ndarray:
    """(B, width) indices 0..count-1 per row, then 0 repeated: padding by a real element."""
    cols = np.arange(width)[None, :]
    return np.where(cols < counts[:, None], cols, 0)


def _adjacency(faces, part_of_face, n_hull, h_starts, cells: int = 1 << 24):
    """The directed edges of many hulls' triangles, unique, ordered by part, source, target.

    faces : (F, 3) vertex indices local to each part; part_of_face : (F,) nondecreasing
    Returns (source, target): the source as a global hull vertex id (h_starts[part] + local),
    the target local to its part.

    Per part, an edge is the cell source * n + target of an n x n grid; the grids of consecutive
    parts are laid end to end in a boolean map of at most `cells` cells, the edges' cells are set,
    and the set cells, read in order, are the unique edges already sorted: no sort of the 6F keys
    (a sort was 70% of the assembly). A part whose own grid exceeds 4 x `cells` is sorted instead.
    """
    m = len(n_hull)
    n2 = n_hull.astype(np.int64) ** 2
    cum = np.cumsum(n2)
    f_start = np.searchsorted(part_of_face, np.arange(m + 1))
    sources, targets = [], []
    p0 = 0
    while p0 < m:
        base = cum[p0 - 1] if p0 else 0
        p1 = max(int(np.searchsorted(cum, base + cells, side="right")), p0 + 1)
        part = part_of_face[f_start[p0]: f_start[p1]]
        f = faces[f_start[p0]: f_start[p1]].astype(np.int64)
        n = n_hull[part].astype(np.int64)
        grid0 = np.concatenate([[0], np.cumsum(n2[p0:p1])[:-1]])  # where each part's grid starts
        at = grid0[part - p0]
        a, b, c = f[:, 0], f[:, 1], f[:, 2]
        keys = np.concatenate([at + a * n + b, at + b * n + c, at + c * n + a,
                               at + b * n + a, at + c * n + b, at + a * n + c])
        size = int(grid0[-1] + n2[p1 - 1])
        if size <= 4 * cells:
            marked = np.zeros(size, dtype=bool)
            marked[keys] = True
            cell = np.flatnonzero(marked)
        else:
            cell = _sorted_unique(keys)
        owner = p0 + np.searchsorted(grid0, cell, side="right") - 1
        rest = cell - grid0[owner - p0]
        sources.append(h_starts[owner] + rest // n_hull[owner])
        targets.append(rest % n_hull[owner])
        p0 = p1
    return np.concatenate(sources), np.concatenate(targets).astype(np.int32)


def _sorted_unique(x: np.ndarray) -> np.ndarray:
    """np.unique(x) for 1-D integers, by sorting: numpy 2.x's np.unique hashes first, which on
    millions of int64 keys measured 10x slower than a sort here. The stable sort (timsort) is
    2-3x faster than quicksort on keys that come part by part: it merges the sorted runs."""
    s = np.sort(x, kind="stable")
    keep = np.ones(len(s), dtype=bool)
    keep[1:] = s[1:] != s[:-1]
    return s[keep]


_FAST_REASON = "its faces lie on its hull's surface (within the touching band)"


def _convexity(g: Geometry) -> tuple[bool, str]:
    """gjkcli.convexity's verdict and reason (vertices merged as gjkcli.load merges them)."""
    from gjkcli import load
    from gjkcli.convexity import convexity

    if g.watertight is not None and g.bodies is not None:  # loaded by gjkcli.load: merged
        judged = convexity(g.vertices, g.faces, watertight=g.watertight, bodies=g.bodies)
    else:
        judged = convexity(*load._merge_close(g.vertices, g.faces))
    return bool(judged.convex), judged.reason


def _object_infos(geoms, shapes, convex, why, lo, hi) -> tuple:
    lo_l, hi_l = lo.tolist(), hi.tolist()
    return tuple(ScanObject(
        name=g.name, file=g.file,
        vertices=0 if g.vertices is None else len(g.vertices),
        faces=0 if g.faces is None else len(g.faces),
        hull_vertices=int(shape.n_vertices), convex=c, watertight=g.watertight,
        bounds=(tuple(lo_l[k]), tuple(hi_l[k])), units=g.units, bodies=g.bodies,
        dimension=int(shape.dimension), primitive=None if g.primitive is None else shape.kind,
        convexity=why[k])
        for k, (g, shape, c) in enumerate(zip(geoms, shapes, convex)))


# -- broad and narrow phase -----------------------------------------------------------------------


def _candidates(lo, hi, resolved, clearance, tolerance, tol, method):
    """(i, j, clearance per pair, broad-phase pair count) of the pairs the narrow phase checks.

    lo, hi : (n, 3) world bounds of the shapes.
    """
    from gjkcli.broadphase import candidate_pairs, select_pairs

    n = len(lo)
    if n < 2:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, np.zeros(0), 0
    size = np.linalg.norm(hi - lo, axis=1)
    clearances = [clearance or 0.0]
    if resolved is not None:
        clearances += [c if c is not None else (clearance or 0.0) for _, _, c, _ in resolved.checks]
    reach = max(clearances)
    # the touching band of a pair is tolerance, or touching_rel x the larger size: growing each box
    # by its own share covers it; 1e-12 of the scene pads the rounding of the bounds
    touch = np.full(n, tolerance) if tolerance is not None else tol.touching_rel * size
    pad = 1e-12 * float(np.abs(np.concatenate([lo, hi])).max() + size.max())
    grow = 0.5 * reach + touch + pad
    i, j = candidate_pairs(lo, hi, grow=grow, method=method)
    i, j = np.minimum(i, j), np.maximum(i, j)  # a pair reads in the objects' order
    candidates = len(i)
    pair_clearance = np.full(len(i), clearance or 0.0)
    if resolved is not None and resolved.checks:
        keep = select_pairs(i, j, [(a, b) for a, b, _, _ in resolved.checks])
        i, j = i[keep], j[keep]
        pair_clearance = np.zeros(len(i))
        for in_a, in_b, c, _ in resolved.checks:
            hit = (in_a[i] & in_b[j]) | (in_b[i] & in_a[j])
            value = c if c is not None else (clearance or 0.0)
            pair_clearance[hit] = np.maximum(pair_clearance[hit], value)
    return i, j, pair_clearance, candidates


def _narrow(shapes, i, j, tolerance, jobs, tell):
    """The engine's verdicts for pairs (i, j): one BatchResult, chunks run on `jobs` threads."""
    from gjkcli.query import batch
    from gjkcli.results import BatchResult
    from gjkcli.shapes import ShapeSet

    m = len(i)
    tell("narrow", 0, m)
    if m == 0:
        return None
    packed = ShapeSet(shapes)
    chunks = [(a, min(a + _PAIR_CHUNK, m)) for a in range(0, m, _PAIR_CHUNK)]

    def one(chunk):
        a, b = chunk
        return batch(packed, i[a:b], j[a:b], tolerance=tolerance, want="verdict")

    parts = []
    if jobs > 1 and len(chunks) > 1:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(min(jobs, len(chunks))) as pool:
            for (a, b), res in zip(chunks, pool.map(one, chunks)):
                parts.append(res)
                tell("narrow", b, m)
    else:
        for chunk in chunks:
            parts.append(one(chunk))
            tell("narrow", chunk[1], m)
    if len(parts) == 1:
        return parts[0]
    fields = [f.name for f in dataclasses.fields(BatchResult)]
    return BatchResult(**{name: np.concatenate([getattr(p, name) for p in parts]) for name in fields})


def exact_refiner(requests: Sequence[RefineRequest]) -> list:
    """A `Refiner` over gjkcli.exact: the exact answer for each pair's triangles.

    Each part's mesh (vertices merged as gjkcli.load merges them, so that a closed part reads as
    a solid and containment can be decided) and its hierarchy are built once per call, however
    many pairs the part is in. Pass it as `run(..., refine=exact_refiner)` for modes auto and
    exact.
    """
    from gjkcli import load
    from gjkcli.exact import Mesh, exact_query

    meshes: dict[int, object] = {}

    def mesh(g: Geometry):
        if id(g) not in meshes:
            if g.watertight is not None:  # loaded by gjkcli.load: merged already
                meshes[id(g)] = Mesh(g.vertices, g.faces, watertight=g.watertight, name=g.name)
            else:
                meshes[id(g)] = Mesh(*load._merge_close(g.vertices, g.faces), name=g.name)
        return meshes[id(g)]

    return [exact_query(mesh(r.a), mesh(r.b), tolerance=r.tolerance) for r in requests]


def _refine(refine, todo, geoms, i, j, batch, status, pair_clearance, nonconvex, tell) -> dict:
    """Hand the pairs `todo` to the refiner; {pair index: its Result} for those it answered."""
    requests = []
    for k in todo.tolist():
        a, b = int(i[k]), int(j[k])
        hull = batch.result(k)
        st = _STATUS[int(status[k])]
        if st is not Status(hull.status):
            hull = dataclasses.replace(hull, status=st)
        requests.append(RefineRequest(
            a=geoms[a], b=geoms[b], hull=hull, tolerance=float(batch.tolerance[k]),
            clearance=float(pair_clearance[k]) if pair_clearance[k] > 0 else None,
            nonconvex=(bool(nonconvex[a]), bool(nonconvex[b]))))
    tell("refine", 0, len(requests))
    answers = list(refine(requests)) if requests else []
    if len(answers) != len(requests):
        raise GjkError(f"the refiner answered {len(answers)} of {len(requests)} pairs")
    tell("refine", len(requests), len(requests))
    return {k: r for k, r in zip(todo.tolist(), answers) if r is not None}
