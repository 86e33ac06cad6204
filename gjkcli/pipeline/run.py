"""`gjk scan`: every pair of objects across scene files, a broad phase, then the batch narrow phase.

The pipeline of `run`:

1. **Load** every file into named objects in world coordinates (`gjkcli.mesh.load.read_objects`):
   each scene node that holds triangles is an object, moved by its full world transform, scale
   included. A file that fails to load becomes an error entry; the others are still checked.
   Manifest objects (whole files or primitives) and includes join them. Files load in worker
   processes.
2. **Hulls** (`gjkcli.engine.shapes.build_hulls`): one qhull call per part and nothing else per part in
   Python; the vertex selection, the adjacency and the bounds of all parts are computed at once
   in NumPy. The result is bit for bit what `Shape.hull` builds (tests/test_shapes.py checks
   it). Whether each part is its own hull (`gjkcli.mesh.convexity.convex_parts`) is decided the same
   way, for all parts at once.
3. **Broad phase** (`gjkcli.scene.broadphase`): a BVH over the world boxes grown by the clearance and
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
`Result` per request (or None to keep the hull's). gjkcli.engine.exact is meant to provide it; the
command then passes `refine=gjkcli.engine.exact.<its function>` (or a wrapper) for modes auto and exact.
"""
from __future__ import annotations

import dataclasses
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from gjkcli.errors import GjkError, InputError, ShapeError
from gjkcli.pipeline.findings import EXIT_ERROR, EXIT_OK, EXIT_VIOLATION, InputProblem, PairReport
from gjkcli.engine.results import Result, Status

__all__ = ["run", "ScanReport", "ScanPair", "ScanObject", "Geometry", "RefineRequest", "Refiner",
           "exact_refiner", "MODES", "SEVERITY"]

MODES = ("auto", "hull", "exact")

# Report order: collisions (deepest first), then undecided, touching, clearance (closest first).
SEVERITY = {Status.COLLISION: 0, Status.UNDECIDED: 1, Status.TOUCHING: 2, Status.CLEARANCE: 3,
            Status.CLEAR: 4}

# Pairs per chunk of the narrow phase: large enough that a chunk's fixed cost (a batch call) is
# small against its work.
_PAIR_CHUNK = 4096


# -- records --------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Geometry:
    """One object before its hull: what the refiner sees of it.

    vertices : (n, 3) float64, world coordinates (None for a primitive)
    faces : (m, 3) int64, indices into vertices (None for a primitive)
    primitive : the Shape of a manifest primitive, else None
    watertight, bodies : known when the object came through `gjkcli.mesh.load.load_objects`, else None
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
    part's: True when `gjkcli.mesh.convexity.convex_parts` (within the touching band, for all parts
    at once) or `gjkcli.mesh.convexity.convexity` (the definition `gjk check` uses, about 1 ms a part)
    says so; False when the latter says it is not; None when undecided: the fast test did not
    show it convex and no finding involves the part, so nothing depended on it (see
    `gjkcli.mesh.convexity.part_verdicts`).
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
# request, in order. gjkcli.engine.exact provides one; see `run`.
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
    gone : baseline entries (gjkcli.pipeline.baseline.Entry) that are no longer findings
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
    manifest : str, Path or gjkcli.scene.manifest.Manifest, optional
        Includes, objects, groups, checks, allowed pairs, defaults (see gjkcli/scene/manifest.py).
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
    from gjkcli.pipeline import baseline as baselines
    from gjkcli.scene import manifest as manifests
    from gjkcli.mesh.convexity import part_verdicts
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
    # the parts of listed pairs that the fast test did not show convex get gjkcli.mesh.convexity's
    # verdict (the one `gjk check` gives); the others keep None: nothing depends on it
    involved = np.zeros(0, dtype=np.int64)
    if len(i):
        listed = np.ones(len(i), dtype=bool) if all_pairs else status != _CODE[Status.CLEAR]
        involved = np.unique(np.concatenate([i[listed], j[listed]]))
    decided, why = part_verdicts(convex, involved, [g.vertices for g in geoms],
                                 [g.faces for g in geoms], [g.watertight for g in geoms],
                                 [g.bodies for g in geoms])
    for k, g in enumerate(geoms):
        if g.primitive is not None:
            why[k] = "a primitive"
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


# engine status codes (gjkcli.engine.results.STATUS_CODES; 4 is "intersecting", a collision) to the above
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
        from gjkcli.pipeline.baseline import relative_file

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
    from gjkcli.pipeline.baseline import Entry

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
    from gjkcli.mesh.load import expand_paths

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
    from gjkcli.mesh.load import load_part, read_objects

    try:
        if s.whole:
            part = load_part(s.path)
            geoms = [Geometry(name=s.name, file=s.shown, vertices=part.vertices, faces=part.faces,
                              units=part.units, watertight=part.watertight, bodies=part.bodies)]
        else:
            geoms = [Geometry(name=p.name, file=p.source, vertices=p.vertices, faces=p.faces,
                              units=p.units, watertight=p.watertight, bodies=p.bodies)
                     for p in read_objects(s.path, split_bodies=s.split_bodies, prefix=s.prefix,
                                           shown=s.shown)]
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
    from gjkcli.engine.shapes import Shape

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


def _one_line(text) -> str:
    return " ".join(str(text).split())


# -- hulls ----------------------------------------------------------------------------------------


def _shapes(geoms, jobs, errors, tell):
    """(shapes, convex flags, lo, hi, geometries kept): hulls of meshes, primitives as they are.

    An object whose geometry makes no shape becomes an error entry of its file.
    """
    from gjkcli.mesh.convexity import convex_parts
    from gjkcli.engine.shapes import build_hulls

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
    from gjkcli.scene.broadphase import candidate_pairs, select_pairs

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
    from gjkcli.engine.query import batch
    from gjkcli.engine.results import BatchResult
    from gjkcli.engine.shapes import ShapeSet

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
    """A `Refiner` over gjkcli.engine.exact: the exact answer for each pair's triangles.

    Each part's mesh (vertices merged as gjkcli.mesh.load merges them, so that a closed part reads as
    a solid and containment can be decided) and its hierarchy are built once per call, however
    many pairs the part is in. Pass it as `run(..., refine=exact_refiner)` for modes auto and
    exact.
    """
    from gjkcli.mesh import load
    from gjkcli.engine.exact import Mesh, exact_query

    meshes: dict[int, object] = {}

    def mesh(g: Geometry):
        if id(g) not in meshes:
            if g.watertight is not None:  # loaded by gjkcli.mesh.load: merged already
                meshes[id(g)] = Mesh(g.vertices, g.faces, watertight=g.watertight, name=g.name)
            else:
                meshes[id(g)] = Mesh(*load.merge_close(g.vertices, g.faces), name=g.name)
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
