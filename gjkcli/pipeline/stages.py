"""The stages of the one run (`gjkcli.pipeline.run` chooses the route): inputs -> objects ->
candidate pairs -> narrow phase -> findings. `Run` is the run in this process; the routes
around it (a Dask cluster, poses, 2D drawings) import its public names from here.

1. **Objects** (`gjkcli.scene.objects.gather`): every input as named objects in world
   coordinates, moved by their full transforms (scale included). An input that fails to load
   becomes a `Problem`; the others are still checked.
2. **Hulls** (`hulls`, standing on the prepared scene of `gjkcli.pipeline.prepared`): one
   hull per distinct mesh (by content), however many parts place it: the hulls of small parts
   (up to 1,024 points) in the compiled core, all in one call and each checked there; one qhull
   call per larger part (or per part the core could not prove); everything else for all parts
   at once in NumPy; and how far each part is from its hull
   (`gjkcli.mesh.convexity.hull_gaps`), also for all parts at once. Parts that place one mesh
   rigidly (the instances of a STEP product, the elements placing an IFC representation map:
   `gjkcli.mesh.load.Instance`) share one hull, built in the mesh's frame (by the compiled core
   up to SHARED_HULL_POINTS) and moved to each, one convexity reason, and one triangle
   hierarchy that the refine stage tests in each part's pose.
3. **Candidate pairs**: `check` pairs every object of A with every object of B; with
   --split-bodies, and in `scan`, a BVH over the world boxes grown by the clearance and the
   touching band picks them (`gjkcli.scene.broadphase`), never all n^2; manifest `[[check]]`
   selections filter them.
4. **Narrow phase**: the engine's batch call over the candidate pairs (it releases the GIL),
   split across threads.
5. **Policy** (`gjkcli.pipeline.policy`): which pairs the hulls' answer stands for, which go to
   the triangles (`gjkcli.engine.exact`), which are marked conservative.
6. **Findings** (`gjkcli.pipeline.findings`): clearance, fail_on, allowed pairs, the baseline.

Per-part Python work decides the speed of scans of many small parts, so nothing here loops over
parts in Python but the qhull call, trimesh's parsing and one small record per part; pairs are
looped over only to make the listed ones.
"""
from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import functools
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from gjkcli.engine.results import Result, Status
from gjkcli import clock, limits
from gjkcli.errors import Problem, ShapeError, one_line
from gjkcli.pipeline import elements, policy, streamed
from gjkcli.pipeline.findings import (Finding, Findings, LazyRecords, ListedPairs, ObjectRecord, severity_key,
                                      violates)
from gjkcli.pipeline.pairs import primitive_note
from gjkcli.units import Length, UnitError, canonical, factor, written_unit

__all__ = ["Run", "Parts", "KeyMaker", "PAIR_CHUNK", "ALL_PAIRS_UP_TO", "parted_note", "LENGTHS", "Progress", "plain_lengths",
           "run_options", "scan_here", "placement_key", "allowed_reasons", "hulls", "overlap_cap_note", "involved",
           "reporting", "reporting_scope"]

# The cache keeps the hull of each mesh of more vertices than this (`hulls`), one row per mesh:
# smaller ones' hulls (the compiled core's, tens of microseconds each) cost less than reading them
# back (10,000 parts of 40 points made a 36 MB entry whose reading cost more than the hulls). A
# hull is a function of its mesh alone (the hull builder picks its route per part), so the rows
# of unchanged meshes are taken and only the others' hulls built.
KEEP_HULLS_FROM_VERTICES = 256

# Pairs per chunk of the narrow phase: large enough that a chunk's fixed cost (a batch call) is
# small against its work.
PAIR_CHUNK = 4096

Progress = Callable[[str, int, int], None]

# --all-pairs (and JUnit, which lists every pair as a test case) checks every pair of a scan up
# to this many, the ones whose boxes the broad phase parts too: each is listed with its
# distance. Beyond, the broad phase's pairs are listed and a note says the others are clear by
# their boxes.
ALL_PAIRS_UP_TO = 10_000


def overlap_cap_note(cap: int) -> str:
    """The overlap reason of a listed collision past the overlap-volumes limit."""
    return f"not computed: over the {cap:,} deepest collisions (--limit overlap-volumes=N)"


def parted_note(count: int) -> str:
    """The note of a run that lists every pair but has more than ALL_PAIRS_UP_TO of them."""
    return (f"{count:,} pairs: more than {ALL_PAIRS_UP_TO:,}, so only the pairs whose boxes come "
            f"within reach are checked and listed; the others are clear by their boxes")

# The options that are lengths: a number in the model's units, or a `Length` with its unit.
LENGTHS = ("tolerance", "clearance", "group_within")


def run_options(options):
    """The options as a run holds them: the mode and fail_on checked (ValueError), fail_on and
    jobs filled in, lengths written without a unit as plain numbers."""
    return Run(options, "scan", None).options


def plain_lengths(options):
    """Lengths written without a unit are plain floats in the model's units."""
    out = {}
    for what in LENGTHS:
        value = getattr(options, what)
        if isinstance(value, Length) and value.unit is None:
            out[what] = value.value
    return dataclasses.replace(options, **out) if out else options


# Where a report reads a run's findings within `reporting`: what the run keeps up for it is
# closed as the block ends (`reporting_scope`).
_REPORTING: contextvars.ContextVar = contextvars.ContextVar("gjk_reporting", default=None)


@contextlib.contextmanager
def reporting():
    """Within the block, the runs it makes may keep what their findings read up until the block
    ends: a Dask scan its cluster, from whose workers the report then fetches the triangles'
    answers as it writes them (`gjkcli.pipeline.distributed`), instead of the client holding
    them all. A run outside such a block gives findings that need nothing kept."""
    with contextlib.ExitStack() as stack:
        token = _REPORTING.set(stack)
        try:
            yield
        finally:
            _REPORTING.reset(token)


def reporting_scope() -> contextlib.ExitStack | None:
    """The innermost `reporting` block's ExitStack (what it closes at its end), or None."""
    return _REPORTING.get()


def scan_here(paths, options, manifest, progress: Progress | None = None) -> Findings:
    """A scan in this process (no cluster, no poses): the scene's sources, the robots' allowed
    pairs, then the run. `manifest` is a read `gjkcli.scene.manifest.Manifest` or None, already
    merged into the options."""
    from gjkcli.scene.objects import scene_sources
    from gjkcli.scene.rules import with_reader_rules

    run = Run(options, "scan", progress)
    sources, primitives = scene_sources(paths, manifest, options.split_bodies, run.problems, options.robot,
                                        recurse=options.recurse, notes=run.notes)
    if getattr(options, "cache", None) is not None:  # a kept report depends on robots' meshes too
        from gjkcli.pipeline.cache import depend_on_robot

        for s in sources:
            depend_on_robot(options.cache, getattr(s, "robot", None))
    manifest, notes, unchecked = with_reader_rules(manifest, sources, options.robot, bool(run.problems))
    run.notes.extend(notes)
    run.unchecked.extend(unchecked)
    return run.findings(sources, primitives, manifest, across=False, every_pair=0)


class Run:
    """One run: the options, what went wrong so far, and the time spent per stage."""

    def __init__(self, options, command: str, progress: Progress | None):
        """options : `gjkcli.pipeline.run.Options`; command : "check" or "scan"."""
        from gjkcli.tolerances import DEFAULT_FAIL_ON, FAIL_ON

        if options.mode not in policy.MODES:
            raise ValueError(f"unknown mode {options.mode!r}; use one of {', '.join(policy.MODES)}")
        fail_on = tuple(options.fail_on) if options.fail_on is not None else DEFAULT_FAIL_ON
        for v in fail_on:
            if v not in FAIL_ON:
                raise ValueError(f"unknown fail_on value {v!r}; use {', '.join(FAIL_ON)}")
        options = plain_lengths(options)
        for what, value in ((what, getattr(options, what)) for what in LENGTHS):
            if isinstance(value, Length):  # converted once the inputs' unit is known
                continue
            if value is not None and not (value >= 0 and np.isfinite(value)):
                raise ValueError(f"{what} must be a finite number >= 0, got {value}")
        # a report of one test case per pair (JUnit): every checked pair listed, up to a limit
        self._passing = bool(getattr(options, "list_passing", False)) and not options.all_pairs
        if self._passing:
            options = dataclasses.replace(options, all_pairs=True)
        jobs = max(1, os.cpu_count() or 1) if options.jobs is None else int(options.jobs)
        if jobs < 1:
            raise ValueError(f"jobs must be >= 1, got {options.jobs}")
        self.options = dataclasses.replace(options, fail_on=fail_on, jobs=jobs)
        self.command = command
        self.tell = progress or (lambda stage, done, total: None)
        self.problems: list[Problem] = []
        self.notes: list[str] = []
        self.unchecked: list = []  # errors.Unchecked: geometry read but not checked
        self.timings: dict[str, float] = {}
        self.units: str | None = None  # the scene's length unit, once the inputs are read
        self._volumes: dict = {}  # (a, b) -> the exact solids' common volume, when refined
        self.sets = None  # the checked pairs' clash sets (gjkcli.pipeline.clashsets), if any
        self.parted = None  # (m,) bool: checked pairs the broad phase parts (listed for --all-pairs)
        self.started = time.perf_counter()
        self._tables: dict = {}  # the cache's tables this run reads and writes (`table`)
        self._part_keys: list | None = None  # the cache's key of each object (`pair_keys`)

    def stage(self, name: str, since: float) -> float:
        """Book the time since `since` under `name`, the imports made meanwhile under "imports"
        (gjkcli.clock); return now."""
        return clock.stage(self.timings, name, since)

    def findings(self, sources, primitives, manifest, *, across: bool, every_pair: int) -> Findings:
        """The run over `sources` (then `primitives`, a manifest's): findings.

        across : pair only objects of different sources (a check of A against B)
        every_pair : list every pair when there are at most this many, without a broad phase

        The stages a dimension's run gives (`load_parts`, `candidates`, `narrow`, `verdicts`,
        `objects`) are methods: this class's are the solids', `gjkcli.pipeline.flat.FlatRun`'s
        the plane's; what they share (the manifest's selections, allowed pairs, clash sets, the
        baseline, the findings) is here.
        """
        o = self.options
        if o.baseline is not None or o.write_baseline is not None:
            from gjkcli.pipeline import baseline as baselines
        old = baselines.read(o.baseline) if o.baseline is not None else None
        parts = self.load_parts(sources, primitives, manifest)
        o = self.options  # the lengths in the scene's unit now
        t = time.perf_counter()
        self._name_notes(parts)
        resolved = self.resolve(parts, manifest)
        i, j, clearance, candidates = self.candidates(parts, resolved, across, every_pair)
        if self._passing and len(i) > ALL_PAIRS_UP_TO:
            self.options = o = dataclasses.replace(o, all_pairs=False)
            self.notes.append(f"{len(i):,} pairs checked: more than {ALL_PAIRS_UP_TO:,}, so the "
                              f"report lists the findings, not the passing pairs")
        t = self.stage("broad", t)
        batch = self.narrow(parts, i, j)
        t = self.stage("narrow", t)
        # baseline keys only when a baseline is read or written: a relative path per file
        key_of = None
        if old is not None or o.write_baseline is not None:
            key_of = KeyMaker(old.base if old is not None else Path(o.write_baseline).resolve().parent)
        known = old.keys if old is not None else None
        pairs, counts = self.verdicts(parts, i, j, clearance, batch, resolved, key_of, known)
        self._inward_note(parts, pairs)
        if o.rescan is not None:  # a re-scan's record (`gjkcli.pipeline.rescan`)
            o.rescan.ran(parts, i, j, self.statuses, self.grow(parts, resolved), pairs)
        t = time.perf_counter()
        pairs = self._grouped(pairs, resolved)
        objects, pairs, counts, checked, index = self.objects(parts, pairs, counts, i, j, key_of, known)
        gone = ()
        if old is not None:
            today = {p.key for p in pairs if p.violation}  # allowed or not, still there
            gone = tuple(e for e in old.entries if e.key not in today)
        self.stage("verdicts", t)
        self.cache_done()
        o = self.options
        found = Findings(
            command=self.command, objects=objects,
            pairs=pairs if isinstance(pairs, ListedPairs) else tuple(pairs), errors=tuple(self.problems),
            counts=counts, checked=checked, candidates=candidates, requested=o.mode,
            tolerance=o.tolerance, clearance=o.clearance, fail_on=o.fail_on, all_pairs=o.all_pairs,
            units=self.units,
            baseline=str(o.baseline) if o.baseline is not None else None, gone=gone,
            notes=tuple(self.notes), unchecked=tuple(self.unchecked), timings=dict(self.timings),
            version=_version(), together=self.worlds(sources, manifest),
            elapsed=time.perf_counter() - self.started, geometry=parts.geometry,
            dimension=parts.dimension, _index=index)
        if o.write_baseline is not None:
            baselines.write(o.write_baseline, baselines.entries(found.pairs))
            found = dataclasses.replace(found, baseline_written=str(o.write_baseline))
        return found

    def worlds(self, sources, manifest) -> bool | None:
        """Whether a scan of several files checked them together (True) or each by itself
        (False); None for a check, a scan of one file, or a manifest's scene (one world, as it
        places its parts)."""
        placed = manifest is not None and bool(manifest.includes or manifest.objects or manifest.robots)
        if self.command != "scan" or placed or not isinstance(sources, (list, tuple)) or len(sources) < 2:
            return None
        return bool(self.options.together)

    def resolve(self, parts, manifest):
        """The manifest's selections over the parts (`gjkcli.scene.manifest.Resolved`), by the
        objects' names and what their readers say they are (`Parts.kinds`: an IFC element's
        classes, a drawing part's layer); None without a manifest."""
        if manifest is None or parts.n == 0:
            return None
        from gjkcli.scene.manifest import ManifestError, Resolved

        try:
            classes, ids = parts.kinds()
            resolved = manifest.resolve(parts.names, classes, ids)
        except ManifestError as exc:
            if not self.problems:
                raise
            # an input that failed to load may be what the selection was meant to match
            self.problems.append(Problem(file=exc.source, message=exc.message))
            resolved = Resolved()
        self.notes.extend(resolved.notes)
        return self._in_unit(resolved, manifest)

    def _in_unit(self, resolved, manifest):
        """The [[check]]s' lengths written with a unit ("2 mm") in the scene's unit."""
        from gjkcli.errors import InputError

        specs = [(k, s) for k, s in enumerate(resolved.sets)
                 if any(isinstance(getattr(s, w), Length) for w in ("clearance", "tolerance", "group_within"))]
        if not specs:
            return resolved
        sets, checks = list(resolved.sets), list(resolved.checks)
        for k, spec in specs:
            change = {}
            for what in ("clearance", "tolerance", "group_within"):
                value = getattr(spec, what)
                if isinstance(value, Length):
                    try:
                        change[what] = value.to(self.units)
                    except UnitError as e:
                        raise InputError(manifest.path, f"line {spec.line}: {what} {value}: {e}") from None
            sets[k] = dataclasses.replace(spec, **change)
            in_a, in_b, _, line = checks[k]
            checks[k] = (in_a, in_b, sets[k].clearance, line)
        return dataclasses.replace(resolved, sets=tuple(sets), checks=tuple(checks))

    def verdicts(self, parts, i, j, clearance, batch, resolved, key_of, known):
        """(listed Findings most severe first, counts per status over every checked pair): the
        policy on the narrow phase's answers, the triangles where it asks for them, the listed
        pairs with their allowed reasons and baseline keys, the collisions' overlap volumes."""
        t = time.perf_counter()
        answers = self._answer(parts, i, j, clearance, batch)
        t = self.stage("refine", t)
        from gjkcli.collector import no_gc

        with no_gc():  # a Finding a listed pair (the Great Court roof's 25,000): collections walking them all
            pairs, counts = self._listed(parts, i, j, clearance, answers, resolved, key_of, known)
        t = self.stage("verdicts", t)
        # before the overlap volumes (manifold3d, after which nothing forks)
        parts.reasons_ahead(involved(parts, pairs), self.options.jobs)
        pairs = self._overlaps(parts, pairs)
        self.stage("overlap", t)
        return pairs, counts

    def objects(self, parts, pairs, counts, i, j, key_of, known):
        """(object records, pairs, counts, pairs checked, name -> record index): one record per
        part, or per object where parts are elements of one (a URDF link's)."""
        objects = parts.records(involved(parts, pairs), lambda: self.table("reasons"))
        checked = len(i)
        if not parts.owned:
            return objects, pairs, counts, checked, dict(parts.index)
        # findings, counts and records per object, not per element
        pairs, counts, checked = elements.by_object(pairs, parts.owned, parts.owner_ids, i, j, key_of, known)
        objects = elements.merged_records(objects, parts.owned)
        return objects, pairs, counts, checked, {r.name: k for k, r in enumerate(objects)}

    def load_parts(self, sources, primitives, manifest) -> "Parts":
        """Load the sources, then build the hulls (`gjkcli.pipeline.distributed` does both on
        a cluster)."""
        from gjkcli.scene.objects import gather

        o = self.options
        t = time.perf_counter()
        with limits.active(o.limits or limits.DEFAULT), self.kept_meshes(sources):
            geoms = gather(sources, primitives, manifest, jobs=o.jobs, problems=self.problems,
                           tell=self.tell, strict=o.strict, notes=self.notes)
        geoms = self.one_unit(geoms)
        t = self.stage("load", t)
        parts = Parts.build(geoms, o.jobs, self.problems, self.tell, self.table("hulls"))
        self.stage("hulls", t)
        return parts

    # -- the cache (gjkcli.pipeline.cache) ----------------------------------------------------

    def table(self, kind: str):
        """The cache's table of `kind` ("hulls", "pairs", "overlaps"), read once; None without a
        cache (or with --trace, whose steps are not kept)."""
        cache = getattr(self.options, "cache", None)
        if cache is None or self.options.trace:
            return None
        if kind not in self._tables:
            from gjkcli.pipeline.cache import Table

            self._tables[kind] = Table(cache, kind)
        return self._tables[kind]

    def kept_meshes(self, sources):
        """The IFC reader's element meshes from the cache (`gjkcli.mesh.ifc.kept_meshes`) while
        IFC models are read, a STEP file's products (`gjkcli.mesh.stepkeep.kept_solids`) while
        STEP files are; a block that does nothing without them."""
        import contextlib

        from gjkcli.mesh.cad_process import STEP_TYPES

        ifc_models = any(str(getattr(s, "path", "")).lower().endswith((".ifc", ".ifczip")) for s in sources)
        step_files = any(str(getattr(s, "path", "")).lower().endswith(tuple(f".{t}" for t in STEP_TYPES))
                         for s in sources)
        cached = getattr(self.options, "cache", None) is not None and not self.options.trace
        steps = self.table("step") if step_files else None
        if not (cached and ifc_models) and steps is None:
            return contextlib.nullcontext()
        from gjkcli.pipeline.cache import prefix

        block = contextlib.ExitStack()
        if cached and ifc_models:  # opened when a model is read here, not read ahead
            from gjkcli.mesh import ifc

            block.enter_context(ifc.kept_meshes(lambda: self.table("ifc"), prefix()))
        if steps is not None:  # a STEP file whose placements alone changed (`gjkcli.mesh.stepkeep`)
            from gjkcli.mesh import stepkeep

            block.enter_context(stepkeep.kept_solids(steps, prefix()))
        return block

    def cache_done(self) -> None:
        """Write the tables' new rows; the cache's notes (entries not believed) to the run's."""
        cache = getattr(self.options, "cache", None)
        if cache is None:
            return
        for table in self._tables.values():
            table.save()
        self.notes.extend(n for n in cache.notes if n not in self.notes)

    def caching(self, todo) -> bool:
        """The cache keeps the answers of the pairs `todo` (some, and a cache)."""
        return bool(len(todo)) and self.table("pairs") is not None

    def pair_keys(self, parts, i, j, clearance, batch, todo, kind: str, context=None) -> list:
        """The cache's key of each pair `todo` for the answers of `kind`: both objects' keys
        (`gjkcli.pipeline.cache.PartKeys`: their triangles, hulls and what their loaders say),
        the pair's band and clearance, every option that changes the answer, and what
        `context` holds for it ({pair index: bytes}: an exact pair's scene, `_exact_scene`)."""
        from gjkcli.pipeline.cache import PartKeys, pair_key
        from gjkcli.tolerances import DEFAULT

        if not len(todo):
            return []
        if self._part_keys is None:
            self._part_keys = PartKeys(parts.geoms, parts.shapes)
        o = self.options
        owners = parts.owner_ids
        several = (np.bincount(owners)[owners] > 1).tolist()
        modes = self.sets.modes(o.mode) if self.sets is not None else None
        common = repr((kind, self.command, o.mode, o.all_pairs, self.units, repr(DEFAULT))).encode()
        pk = self._part_keys
        tolerance, clear = batch.tolerance.tolist(), clearance.tolist()
        out = []
        for k in todo.tolist():
            a, b = int(i[k]), int(j[k])
            ga, gb = parts.geoms[a], parts.geoms[b]
            flip = bool(ga.instance and gb.instance and repr(gb.instance.key) < repr(ga.instance.key))
            out.append(pair_key(common, pk[a], pk[b], tolerance[k], clear[k], several[a] or several[b],
                                None if modes is None else str(modes[k]), flip,
                                None if self.parted is None else bool(self.parted[k]),
                                None if context is None else context.get(k)))
        return out

    def kept_answers(self, kind: str, keys: list, todo) -> tuple:
        """({pair index: answer} the cache holds for the pairs `todo` of these keys, the pairs
        it does not hold)."""
        table = self.table("pairs")
        if table is None or not len(todo):
            return {}, todo
        from gjkcli.pipeline.cache import CacheError

        kept, rest = {}, []
        for k, pair_key in zip(todo.tolist(), keys):
            try:
                got = table.value(pair_key)
            except CacheError as e:
                table.cache.notes.append(f"cache: ignored a {kind} answer: {e}")
                got = None
            if got is not None:
                kept[k] = _unclocked(got)
            else:
                rest.append(k)
        return kept, np.asarray(rest, dtype=np.int64)

    def keep_answers(self, keys: list, todo, answers: dict) -> None:
        """Keep the answers of the pairs `todo` (of these keys) that were computed."""
        table = self.table("pairs")
        if table is None:
            return
        for k, pair_key in zip(todo.tolist(), keys):
            if k in answers:
                table.put_value(pair_key, answers[k])

    # -- units ---------------------------------------------------------------------------------

    def one_unit(self, geoms: list, convert: bool = True) -> list:
        """The objects in one length unit, and the options' lengths in it.

        The scene's unit is the first unit an input states (in input order). An object whose
        file states another unit of the table (`gjkcli.units`) is scaled into it, with a note
        naming both; an object whose file states no unit is taken to be in the scene's unit
        (STL states none). A unit name outside the table cannot be converted: the numbers then
        mix units, and a note says so. A length the user wrote with a unit is converted into
        the scene's unit; when no input states a unit gjk knows, that is an InputError.
        convert : False where the hulls are built already (on a cluster): inputs in different
        units are then an InputError.
        """
        from gjkcli.errors import InputError

        declared = self.options.units
        if declared is not None and any(not g.units for g in geoms):
            geoms = [g if g.units else dataclasses.replace(g, units=declared) for g in geoms]
        stated = [(g, canonical(g.units)) for g in geoms if g.units]
        known = [(g, u) for g, u in stated if u is not None]
        unit = known[0][1] if known else None
        out, scaled = [], {}
        for g in geoms:
            u = canonical(g.units)
            if unit is None or u is None or u == unit or g.primitive is not None:
                out.append(g)
                continue
            k = factor(u, unit)
            if not convert:
                raise InputError(g.file, f"states {u} and {known[0][0].file} states {unit}; "
                                         f"--dask does not convert units: scan them in this "
                                         f"process, or convert one")
            scaled.setdefault(g.file, (u, k))
            out.append(dataclasses.replace(g, vertices=g.vertices * k, units=unit,
                                           eps=g.eps * k, instance=None if g.instance is None else g.instance.scaled(k)))
        for file, (u, k) in scaled.items():
            self.notes.append(f"{file} states {u}: converted to {unit} (x {k:g}), the unit of "
                              f"{known[0][0].file}")
        unknown = sorted({g.units for g, u in stated if u is None})
        if unknown and (unit is not None or len(unknown) > 1):
            self.notes.append(f"warning: unit {', '.join(map(repr, unknown))} is not one gjk "
                              f"knows, so it is not converted and the numbers may mix units")
        o, change = self.options, {}
        if unit is None and not geoms:  # nothing loaded (each input refused, said already)
            unit = written_unit(getattr(o, w) for w in LENGTHS)
        self.units = unit
        for what in LENGTHS:
            value = getattr(o, what)
            if isinstance(value, Length):
                try:
                    change[what] = value.to(unit)
                except UnitError as e:
                    # the inputs refused are the reason: they are said first
                    raise InputError(f"--{what.replace('_', '-')} {value}", str(e),
                                     before=self.problems) from None
        if change:
            self.options = dataclasses.replace(o, **change)
        return out

    # -- notes ---------------------------------------------------------------------------------

    def _name_notes(self, parts: "Parts") -> None:
        if parts.n == 0:
            self.notes.append("no objects were loaded: there is nothing to check")
        elif parts.n == 1 and self.command == "scan":
            self.notes.append(f"only one object ({parts.names[0]}): there are no pairs to check")

    def _inward_note(self, parts: "Parts", pairs) -> None:
        """A note naming the objects of the listed collisions whose meshes are wound inwards
        (`Parts.inward`) and were read so, as the solids they enclose, turned outwards (closed:
        by every test; else by a hull's answer), though a room or a box modelled from the inside
        (a game level's walls) is wound so that its inside is empty: what stands in it collides
        with it."""
        inward = getattr(parts, "inward", None)
        if inward is None or not inward.any():
            return
        # only now: a Dask client imports nothing of the prepared scene's building otherwise
        from gjkcli.pipeline.prepared import TURNED_CLOSED, TURNED_HULL

        named = set()
        for p in pairs.notable if isinstance(pairs, ListedPairs) else pairs:
            if p.status is Status.COLLISION:
                for name in (p.a, p.b):
                    k = parts.index.get(name)
                    if k is not None and (inward[k] == TURNED_CLOSED
                                          or (inward[k] == TURNED_HULL and p.mode == "hull")):
                        named.add(parts.geoms[k].owner or name)
        if isinstance(pairs, ListedPairs):  # the rows' collisions, from their arrays
            facts = pairs.facts
            collision = facts.status == Status.COLLISION.value
            seen = np.zeros(parts.n, dtype=bool)
            for side in pairs.plain_objects():
                turned = (inward[side] == TURNED_CLOSED) | ((inward[side] == TURNED_HULL) & ~facts.exact)
                seen[side[collision & turned]] = True
            named.update(parts.geoms[k].owner or parts.names[k] for k in np.flatnonzero(seen).tolist())
        if not named:
            return
        shown = sorted(named)
        listed = ", ".join(f"'{name}'" for name in shown[:INWARD_NAMED])
        if len(shown) > INWARD_NAMED:
            listed += f" and {len(shown) - INWARD_NAMED:,} more"
        if len(shown) == 1:
            are, their, enclose, one, ones = "is", "its", "solid it encloses", "it", "its"
        else:
            are, their, enclose, one, ones = "are", "their", "solids they enclose", "one", "one's"
        self.notes.append(
            f"{listed} {are} wound inwards ({their} faces' normals point in): read as the "
            f"{enclose}, turned outwards, so what lies inside {one} collides with it (a room modelled from "
            f"the inside is a solid here; --allow 'NAME,*' passes {ones} pairs)")

    # -- candidate pairs -----------------------------------------------------------------------

    def candidates(self, parts: "Parts", resolved, across: bool, every_pair: int):
        """(i, j, clearance per pair, broad-phase pair count): the pairs the narrow phase checks."""
        from gjkcli.scene.broadphase import candidate_pairs

        n = parts.n
        empty = np.zeros(0, dtype=np.int64)
        if n < 2:
            return empty, empty, np.zeros(0), 0
        if across:
            sides = np.bincount(parts.source)
            count = int(sides.sum() ** 2 - (sides ** 2).sum()) // 2
        else:
            count = n * (n - 1) // 2
        # every pair listed (--all-pairs, JUnit): the ones the broad phase parts too, each with
        # its hulls' distance, a lower bound of the parts' (the triangles are not asked)
        parting = self.options.all_pairs and count > every_pair and count <= ALL_PAIRS_UP_TO
        if parting:
            every_pair = ALL_PAIRS_UP_TO
        if count <= every_pair:
            i, j = np.triu_indices(n, 1)
        else:
            if self.options.all_pairs and self.command == "check":
                # millions of pairs are not a report: list the findings, as a scan does
                self.options = dataclasses.replace(self.options, all_pairs=False)
                self.notes.append(f"{count:,} pairs: more than {every_pair:,}, so the pairs whose "
                                  f"boxes are apart are clear by their boxes and only findings are "
                                  f"listed")
            elif self.options.all_pairs and not self._passing:
                self.notes.append(parted_note(count))
            i, j = candidate_pairs(parts.lo, parts.hi, grow=self.grow(parts, resolved))
            i, j = np.minimum(i, j), np.maximum(i, j)
            order = np.lexsort((j, i))  # pairs read in the objects' order
            i, j = i[order], j[order]
        if across:
            keep = parts.source[i] != parts.source[j]
            i, j = i[keep], j[keep]
        keep = self.own_worlds(parts, i, j)
        if keep is not None:
            i, j = i[keep], j[keep]
        if parts.owned:  # a link's elements are one object: never checked against each other
            keep = ~elements.same_object(parts.owner_ids, i, j)
            i, j = i[keep], j[keep]
        kept = None
        if parting:  # the pairs the broad phase keeps, as keys a * n + b
            bi, bj = candidate_pairs(parts.lo, parts.hi, grow=self.grow(parts, resolved))
            kept = np.minimum(bi, bj).astype(np.int64) * n + np.maximum(bi, bj)
        candidates = len(i) if kept is None else int(np.isin(i.astype(np.int64) * n + j, kept).sum())
        i, j, clearance = self.select(resolved, i, j)
        self.parted = None if kept is None else ~np.isin(i.astype(np.int64) * n + j, kept)
        return i.astype(np.int64), j.astype(np.int64), clearance, candidates

    def own_worlds(self, parts, i, j):
        """The pairs (i, j) a scan of files each in its own world keeps (those of one file, and
        a drawing's parts with its sheet), as a mask; None when the files are one world, or when
        it keeps every pair (a scan of one file: a Dask client then makes no copy of the pairs'
        verdicts)."""
        if self.options.together or self.command != "scan":
            return None
        keep = parts.source[i] == parts.source[j]
        frame = getattr(parts, "frame", None)
        if frame is not None:  # the sheet holds the parts of every drawing
            keep |= j == parts.n - 1
        return None if keep.all() else keep

    def grow(self, parts: "Parts", resolved) -> np.ndarray:
        """(n,) how far the broad phase grows each object's box: half the largest clearance asked
        for, the object's share of the touching band, and a hair of the scene."""
        from gjkcli.tolerances import DEFAULT

        o = self.options
        if parts.n == 0:  # every input refused: nothing to grow (a re-scan's record of no parts)
            return np.zeros(0)
        lo, hi = parts.lo, parts.hi
        size = np.linalg.norm(hi - lo, axis=1)
        reach = max([o.clearance or 0.0] + [c for _, _, c, _ in (resolved.checks if resolved else ())
                                             if c is not None])
        # the touching band of a pair is the tolerance, or touching_rel x the larger size:
        # growing each box by its own share covers it; a hair of the scene pads the bounds'
        # rounding
        touch = np.full(parts.n, o.tolerance) if o.tolerance is not None else DEFAULT.touching_rel * size
        bands = [s.tolerance for s in (resolved.sets if resolved else ()) if s.tolerance is not None]
        if bands:  # a clash set's own band
            touch = np.maximum(touch, max(bands))
        extent = (np.abs(np.concatenate([lo, hi])).max(), size.max())
        if o.rescan is not None:  # the parts a re-scan left out count too
            extent = o.rescan.extent(*extent)
        pad = DEFAULT.bounds_pad_rel * float(extent[0] + extent[1])
        # a tessellated part's true surface lies up to eps beyond its triangles
        return 0.5 * reach + touch + pad + parts.eps

    def select(self, resolved, i, j):
        """(i, j, clearance per pair): the pairs manifest [[check]] selections keep (all without
        them), each with the largest clearance asked of it."""
        from gjkcli.scene.broadphase import select_pairs

        from gjkcli.pipeline.clashsets import assign

        o = self.options
        clearance = np.full(len(i), o.clearance or 0.0)
        if resolved is not None and resolved.checks:
            keep = select_pairs(i, j, [(a, b) for a, b, _, _ in resolved.checks])
            i, j = i[keep], j[keep]
            clearance = np.zeros(len(i))
            for in_a, in_b, c, _ in resolved.checks:
                hit = (in_a[i] & in_b[j]) | (in_b[i] & in_a[j])
                clearance[hit] = np.maximum(clearance[hit], c if c is not None else (o.clearance or 0.0))
        self.sets = assign(resolved, i, j)
        return i, j, clearance

    # -- narrow phase --------------------------------------------------------------------------

    def narrow(self, parts: "Parts", i, j):
        """The hulls' verdicts for pairs (i, j): one BatchResult, chunks on `jobs` threads."""
        from gjkcli.engine.query import batch
        from gjkcli.engine.results import BatchResult
        from gjkcli.engine.shapes import ShapeSet

        m = len(i)
        self.tell("narrow", 0, m)
        if m == 0:
            return None
        packed = ShapeSet(parts.shapes)
        chunks = [(a, min(a + PAIR_CHUNK, m)) for a in range(0, m, PAIR_CHUNK)]
        bands = self.sets.tolerance(self.options.tolerance) if self.sets is not None else None

        def one(chunk):
            a, b = chunk
            if bands is None:
                return batch(packed, i[a:b], j[a:b], tolerance=self.options.tolerance, want="verdict")
            return _banded(packed, i[a:b], j[a:b], bands[a:b])

        done = []
        if self.options.jobs > 1 and len(chunks) > 1:
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(min(self.options.jobs, len(chunks))) as pool:
                for (_, b), res in zip(chunks, pool.map(one, chunks)):
                    done.append(res)
                    self.tell("narrow", b, m)
        else:
            for chunk in chunks:
                done.append(one(chunk))
                self.tell("narrow", chunk[1], m)
        if len(done) == 1:
            return done[0]
        # joined a field at a time, each chunk's arrays of a field let go once joined: the
        # answers held about once, not twice (a listing of millions of pairs)
        fields = [f.name for f in dataclasses.fields(BatchResult)]
        pieces = [{name: getattr(p, name) for name in fields} for p in done]
        done.clear()
        return BatchResult(**{name: np.concatenate([p.pop(name) for p in pieces]) for name in fields})

    def whole_answers(self, batch, rows):
        """`batch` with the whole answers (vectors, certificates) of the pairs `rows` at hand:
        the pairs whose finding may be their hulls' answer. One process has every pair's; a
        cluster's client has only the facts the policy reads of the others."""
        return batch

    # -- the policy and the triangles ----------------------------------------------------------

    def _answer(self, parts: "Parts", i, j, clearance, batch) -> "_Answers":
        """Statuses of every checked pair with the clearance applied, and the triangle test's
        answers where the policy asks for it."""
        m = len(i)
        if m == 0:
            return _Answers(np.zeros(0, dtype=object), np.zeros(0, dtype=bool), np.zeros(0, dtype=bool),
                            np.zeros(0, dtype=bool), {}, None)
        status = _STATUS_OF_ENGINE[batch.status]
        closer = (status == _CLEAR) & (batch.distance < clearance)
        status[closer] = _CLEARANCE
        hull_clear = status == _CLEAR
        coincident = policy.coincide(parts.gap[i], parts.gap[j], batch.tolerance)
        listed = np.ones(m, dtype=bool) if self.options.all_pairs else ~hull_clear
        # the pairs the broad phase parts, listed: their hulls' distance, not the triangles'
        asked = listed if self.parted is None else listed & ~self.parted
        # a pair with triangles on one side at least: a curved primitive goes to the triangles
        # against the other part's (gjkcli.engine.primitive); two primitives are their hulls
        meshed = parts.meshed[i] | parts.meshed[j]
        modes = self.sets.modes(self.options.mode) if self.sets is not None else None
        # tessellated (CAD) parts: clear only when the lower bound of the true distance clears
        # the band and the clearance; every other such pair is decided on the exact solids
        # (gjkcli.pipeline.tessellated)
        e = parts.eps[i] + parts.eps[j]
        lower = batch.distance_lower - e
        bounded = (e > 0) & ~(hull_clear & (lower > batch.tolerance) & (lower >= clearance))
        status[bounded] = Status.UNDECIDED.value  # until _bounded decides
        listed |= bounded
        asked = asked | bounded
        if modes is None:
            refine = policy.needs_triangles(self.options.mode, hull_clear, coincident, asked, meshed)
        else:  # each clash set's own mode
            refine = np.zeros(m, dtype=bool)
            for mode in set(modes.tolist()):
                mine = modes == mode
                refine[mine] = policy.needs_triangles(mode, hull_clear, coincident, asked, meshed)[mine]
        refine &= ~bounded
        # a listed pair the triangles do not answer is its hulls' answer (or is decided from it)
        batch = self.whole_answers(batch, np.flatnonzero(listed & ~refine))
        self.listed_known(parts, i, j, listed)
        todo = np.flatnonzero(refine)
        keys = self.pair_keys(parts, i, j, clearance, batch, todo, "exact") if self.caching(todo) else []
        kept, rest = self.kept_answers("exact", keys, todo)
        exact = self._triangles(parts, i, j, batch, rest)
        b_todo = np.flatnonzero(bounded)
        b_keys, scene, member = [], None, {}
        if self.caching(b_todo):  # an exact pair's answer under its group's context (`_exact_scene`)
            scene, context, member = self._exact_scene(parts, i, j, batch, e, b_todo)
            b_keys = self.pair_keys(parts, i, j, clearance, batch, b_todo, "bounded", context)
        b_kept, b_rest = self.kept_answers("bounded", b_keys, b_todo)
        missing = {member[k] for k in b_rest.tolist() if k in member}
        if b_kept and missing:  # a group measured whole, on its first pair, as without the cache
            back = [k for k in b_kept if member.get(k) in missing]
            for k in back:
                del b_kept[k]
            b_rest = np.sort(np.concatenate([b_rest, np.asarray(back, dtype=np.int64)]))
        # beside kept ones, the pairs measured decide canonical copies over every group of the
        # run, as a run without the cache does
        decided = self._bounded(parts, i, j, batch, clearance, e, b_rest, scene if b_kept else None)
        if keys or b_keys:  # the cache's answers beside those computed now, which it keeps
            self.keep_answers(keys, todo, exact)
            self.keep_answers(b_keys, b_todo, decided)
            exact, decided = dict(sorted({**exact, **kept}.items())), dict(sorted({**decided, **b_kept}.items()))
        self._volumes = {(parts.names[int(i[k])], parts.names[int(j[k])]): got.volume
                         for k, got in decided.items() if got.volume is not None}
        for k, got in decided.items():
            status[k] = got.result.status.value
            if got.result.status is Status.CLEAR and not self.options.all_pairs:
                listed[k] = False
        return _Answers(status, hull_clear, policy.conservative(~refine & ~bounded, coincident),
                        listed, exact, batch, decided, e)

    def _bounded(self, parts: "Parts", i, j, batch, clearance, e, todo, scene=None) -> dict:
        """{pair index: tessellated.Bounded} for pairs of tessellated parts the triangles'
        bound does not clear: their triangles' answer, then the exact solids (on every core).
        scene: `exact_groups` of every tessellated pair of the run where `todo` are some of
        them (else `exact_scene`)."""
        if not len(todo):  # nothing to import either (start-up)
            return {}
        from gjkcli.pipeline import tessellated

        out, pending = {}, {}
        for k, deep, first, second, flip in self._tessellated(parts, i, j, batch, e, todo):
            if deep is not None:
                out[k] = deep
                continue
            a, b = int(i[k]), int(j[k])
            ga, gb = parts.geoms[a], parts.geoms[b]
            tol = float(batch.tolerance[k])
            hull = batch.result(k)
            pending[k] = tessellated.Pending(
                parts.body(a), parts.body(b), float(e[k]), tol, float(clearance[k]),
                (ga.brep, gb.brep) if ga.brep and gb.brep else None,
                self.units if ga.units == gb.units else None, same=placement_key(first, second),
                pose=None if first.instance is None else first.instance.pose, flip=flip,
                # the hulls' depth less the parts' hull gaps bounds the triangles' from below
                deep_first=bool(hull.status is Status.COLLISION and hull.depth is not None
                                and float(hull.depth) - float(parts.gap[a] + parts.gap[b]) > tol))
        if any(item.exact for item in pending.values()):
            # with exact solids: where OpenCASCADE is (gjkcli.mesh.cad_process)
            from gjkcli.mesh import cad_process

            out.update(cad_process.ask(tessellated.decide_all, pending, self.options.jobs,
                                       scene=self.exact_scene if scene is None else scene))
        else:
            out.update(tessellated.decide_all(pending, self.options.jobs))
        return out

    # The exact solids of every group of the run's tessellated pairs (`exact_groups`) where this
    # run refines a share of them (a Dask task's), else None.
    exact_scene = None

    def _tessellated(self, parts: "Parts", i, j, batch, e, todo):
        """(k, deep, first, second, flip) per pair k of `todo` of tessellated parts: deep, the
        collision its hulls show deeper than every error allows (`tessellated.deep_on_hulls`),
        else None; first and second its geometries in the order that names the two products
        one way whichever the pair lists first (flip: the pair's order reversed). Needs no
        part's triangles: a Dask client asks it too."""
        from gjkcli.pipeline import tessellated

        modes = self.sets.modes(self.options.mode) if self.sets is not None else None
        for k in todo.tolist():
            a, b = int(i[k]), int(j[k])
            deep = None
            if (self.options.mode if modes is None else modes[k]) != "exact":  # deep on the hulls: no triangles needed
                deep = tessellated.deep_on_hulls(batch.result(k), float(e[k]),
                                                 float(parts.gap[a] + parts.gap[b]),
                                                 float(batch.tolerance[k]))
            ga, gb = parts.geoms[a], parts.geoms[b]
            flip = bool(ga.instance and gb.instance
                        and repr(gb.instance.key) < repr(ga.instance.key))
            first, second = (gb, ga) if flip else (ga, gb)
            yield k, deep, first, second, flip

    def exact_groups(self, parts: "Parts", i, j, batch, e, todo) -> list:
        """The exact solids of each group `tessellated.decide_all` would refine the pairs `todo`
        in, from the geometries alone (no triangles)."""
        return self._exact_scene(parts, i, j, batch, e, todo)[0]

    def _exact_scene(self, parts: "Parts", i, j, batch, e, todo) -> tuple[list, dict, dict]:
        """(`exact_groups`, {pair index: its group's context} and {pair index: its group's
        number} for the pairs of `todo` in them; the contexts only where the run has a cache).

        Two choices of `tessellated.decide_all` reach past a pair, and both change the last
        digits of its answer (a common volume's fourth, a witness point's rounding), never its
        verdict: a group's pairs are measured on their products' canonical copies where every
        product of its first pair is met in two groups or more and their B-spline faces are
        met often enough (`gjkcli.mesh.cad.copies_repaid`, counted over every group of the
        run), and a group is measured once, on its first pair, the others placed from it
        (`tessellated.ExactMemo`). An exact pair's answer is therefore kept in the cache under
        its group's context: for each product of the group's first pair, every group of the
        run that product is in, each by its first pair's objects' keys and products. A kept
        answer is taken where the groups that decide its group's copies are those of the run
        that kept it, and a group is taken whole or measured whole (`_answers`).
        (`benchmarks/cache_corpus.py` found an AP214 AS1 whose rod was moved given other common
        volumes by the cache than by a run without it.) A first pair's part of no shared product
        (a mirrored or scaled placement: which solid it shares is not told here) makes every
        context this run's own."""
        from gjkcli.digests import blake2b
        from gjkcli.pipeline.cache import PartKeys
        from gjkcli.pipeline.tessellated import group_of

        groups: dict = {}  # group -> the exact solids of its pairs
        number: dict = {}  # group -> its number, in the order of first pairs
        member: dict = {}  # pair index -> its group's number
        first: list = []  # per group number: the objects of its first pair
        for k, deep, one, other, _ in self._tessellated(parts, i, j, batch, e, todo):
            a, b = int(i[k]), int(j[k])
            ga, gb = parts.geoms[a], parts.geoms[b]
            if deep is None and ga.brep and gb.brep and ga.units == gb.units and self.units is not None:
                group = group_of(k, placement_key(one, other))
                if group not in number:
                    number[group] = len(first)
                    first.append((a, b))
                member[k] = number[group]
                groups.setdefault(group, []).append((tuple(ga.brep), tuple(gb.brep)))
        if not member or self.table("pairs") is None:
            return list(groups.values()), {}, member
        if any(parts.geoms[x].instance is None for pair in first for x in pair):
            mine = os.urandom(16)
            return list(groups.values()), dict.fromkeys(member, mine), member
        if self._part_keys is None:
            self._part_keys = PartKeys(parts.geoms, parts.shapes)
        pk = self._part_keys

        def product(x: int):  # the solid the object's instance shares: its product's number
            return parts.geoms[x].instance.key[1]

        told = [pk[a] + pk[b] + repr((product(a), product(b))).encode() for a, b in first]
        met: dict = {}  # product -> the groups it is in, told
        for n, (a, b) in enumerate(first):
            for p in {product(a), product(b)}:
                met.setdefault(p, []).append(told[n])
        context = []
        for a, b in first:
            h = blake2b(digest_size=20)
            for p in sorted({product(a), product(b)}, key=repr):
                h.update(repr(p).encode())
                for t in sorted(met[p]):
                    h.update(t)
            context.append(h.digest())
        return list(groups.values()), {k: context[n] for k, n in member.items()}, member

    def listed_known(self, parts: "Parts", i, j, listed) -> None:
        """Told which checked pairs a report may list (`listed`, before the triangles decide
        them), as soon as that is known: nothing here (a cluster's run asks its workers for what
        the report will read of their parts, while they refine)."""

    def _triangles(self, parts: "Parts", i, j, batch, todo) -> dict:
        """{pair index: the triangle test's Result} for the pairs `todo`, on every core the run's
        jobs gives (`gjkcli.pipeline.refine`)."""
        if not len(todo):  # nothing to import either (start-up)
            return {}
        # a scan's collisions are proved, not measured: its depth search ends at the first point
        # deeper than the band (thousands of colliding pairs: measuring on from it was most of
        # a scan's time); a check measures its pairs' depths, and so does a scan the pairs of an
        # object made of several elements (a URDF link), whose deepest element pair answers
        # (gjkcli.pipeline.elements)
        owners = parts.owner_ids
        several = np.bincount(owners)[owners] > 1
        measure = np.ones(len(i), dtype=bool) if self.command != "scan" else several[i] | several[j]
        return self._refined(parts, i, j, batch.tolerance, measure, todo)

    def _refined(self, parts: "Parts", i, j, tolerance, measure, todo) -> dict:
        """`_triangles`' answers: the triangle test (`gjkcli.pipeline.refine.triangles`), then
        the fits it leaves undecided judged by their common solid's mean thickness
        (`refine.by_thickness`). A cluster's run (`gjkcli.pipeline.distributed`) runs both on its
        workers, where the parts are."""
        from gjkcli.pipeline import refine

        exact = refine.triangles(parts, i, j, tolerance, measure, todo, self.options.jobs, self.tell)
        return refine.by_thickness(parts, i, j, exact, self.options.jobs) if exact else exact

    # -- findings ------------------------------------------------------------------------------

    def _listed(self, parts, i, j, clearance, ans: "_Answers", resolved, key_of, known):
        """(listed Findings most severe first, counts per status over every checked pair)."""
        o = self.options
        modes = self.sets.modes(o.mode) if self.sets is not None else None
        counts = {s.value: 0 for s in Status}
        for code in counts:  # a mask a status (not the statuses as text, sorted: 72 bytes a pair)
            counts[code] += int(np.count_nonzero(ans.status == code))
        allow = {**_reader_allowed(parts, i, j), **allowed_reasons(resolved, i, j)}  # the manifest's reason first
        trace = {}
        pairs = []
        # each checked pair's status, as counted, for a re-scan's record (`Options.rescan`)
        self.statuses = ans.status.astype(str).tolist() if o.rescan is not None else None
        listed = np.flatnonzero(ans.listed)
        picked = streamed.listed_rows(self, parts, listed, clearance, ans, allow)  # rows, not Findings
        rows = [] if picked is None else picked.rows
        notable = listed if picked is None else listed[~picked.kept]
        if picked is not None:  # the exact rows (and the clear ones left out) counted as the triangles answered
            for before, now in zip(picked.hull_status.tolist(), picked.status.tolist()):
                counts[before] -= 1
                counts[now] += 1
            notable = np.setdiff1d(notable, picked.dropped, assume_unique=True)
        at = []  # the checked pair of each Finding
        for k in notable.tolist():
            a, b = int(i[k]), int(j[k])
            hull_status = Status(ans.status[k])
            lower = upper = None
            if k in ans.bounded:  # tessellated parts, decided on their bounds or exact solids
                got = ans.bounded[k]
                result, mode, lower, upper = got.result, got.mode, got.lower, got.upper
            elif k in ans.exact:
                result, mode = _exact_answer(ans, k, clearance), "exact"
                counts[hull_status.value] -= 1
                counts[result.status.value] += 1
                if self.statuses is not None:
                    self.statuses[k] = result.status.value
                if result.status is Status.CLEAR and not o.all_pairs:
                    continue  # the hulls meet, the parts do not: not a finding
            else:
                result, mode = ans.batch.result(k), "hull"
                if result.status is not hull_status:
                    result = dataclasses.replace(result, status=hull_status)
            if ans.tessellation is not None and ans.tessellation[k] > 0 and k not in ans.bounded:
                lower = float(result.distance_lower - ans.tessellation[k])  # clear on its bound
            if o.trace:
                trace[len(pairs)] = self._trace(parts, a, b)
                result = dataclasses.replace(result, trace=trace[len(pairs)])
            at.append(k)
            pairs.append(self._finding(parts, k, result, mode, lower, upper, i, j, clearance, ans, allow,
                                       key_of, known, modes))
        if len(rows):
            exact_rows = picked.exact

            def make(k: int) -> Finding:  # a row: the hulls' answer, its status the run's, or the triangles'
                if exact_rows[k]:
                    return self._finding(parts, k, _exact_answer(ans, k, clearance), "exact", None, None, i, j,
                                         clearance, ans, allow, key_of, known, modes)
                result = ans.batch.result(k)
                if result.status.value != ans.status[k]:
                    result = dataclasses.replace(result, status=Status(ans.status[k]))
                return self._finding(parts, k, result, "hull", None, None, i, j, clearance, ans, allow,
                                     key_of, known, modes)

            # the Findings were read in the checked pairs' order (`at` ascending), as the rows
            keyed = sorted(range(len(pairs)), key=lambda x: severity_key(pairs[x]))
            # a cluster's answers made a block of the report's rows at a time (`ColumnResults`)
            merged = streamed.listed_pairs(parts, i, j, [pairs[x] for x in keyed],
                                           np.asarray(at, dtype=np.int64)[keyed], picked, make,
                                           getattr(ans.exact, "read_ahead", None))
            if merged is not None:
                return merged, counts
            # a size that is not a number: Python's sort over every Finding, read in order
            made = dict(zip(at, pairs))
            made.update((k, make(k)) for k in rows.tolist())
            pairs = [made[k] for k in sorted(made)]
        pairs.sort(key=severity_key)
        return pairs, counts

    def _finding(self, parts, k, result, mode, lower, upper, i, j, clearance, ans, allow, key_of, known,
                 modes) -> Finding:
        """The Finding of checked pair k with its answer `result` from `mode`."""
        o = self.options
        a, b = int(i[k]), int(j[k])
        pair_clearance = float(clearance[k]) if clearance[k] > 0 or o.clearance is not None else None
        reason = allow.get(k)
        fail_on = o.fail_on if self.sets is None else self.sets.fail_on(k, o.fail_on)
        violation = violates(result.status, pair_clearance, fail_on)
        key = () if key_of is None else key_of(parts.names[a], parts.names[b], parts.geoms[a].file,
                                               parts.geoms[b].file)
        return Finding(
            a=parts.names[a], b=parts.names[b], result=result, mode=mode,
            requested=o.mode if modes is None else str(modes[k]),
            clash_set=self.sets.name(k) if self.sets is not None else None,
            clearance=pair_clearance, conservative=bool(ans.conservative[k]),
            violation=violation, allowed=reason is not None, reason=reason,
            known=bool(known is not None and violation and reason is None and key in known),
            file_a=parts.geoms[a].file, file_b=parts.geoms[b].file, key=key,
            note=(ans.bounded[k].note if k in ans.bounded else None) or getattr(result, "note", None)
            or _primitive_note(parts, a, b, ans.conservative[k]),
            distance_lower=lower, distance_upper=upper,
            tessellation=float(ans.tessellation[k]) if ans.tessellation is not None
            and ans.tessellation[k] > 0 else None)

    def _overlaps(self, parts: "Parts", pairs: list) -> list:
        """The listed collisions with the volume both parts occupy (manifold3d, on the parts), the
        deepest first (pairs come sorted), up to the overlap-volumes limit: only the findings
        the report shows (`gjkcli.pipeline.run.Options.shown`) are given one, and none with the limit at 0."""
        cap = (self.options.limits or limits.DEFAULT).overlap_volumes
        shown = len(pairs) if self.options.shown is None else self.options.shown
        if isinstance(pairs, ListedPairs):
            return self._listed_overlaps(parts, pairs, cap, shown)
        if cap == 0 or shown <= 0:  # none asked for (--limit overlap-volumes=0, -q): none computed
            return pairs
        wanted = getattr(self.options.rescan, "wants_volume", None)
        if wanted is not None:  # a re-scan (`gjkcli.pipeline.rescan`): the volumes its patch needs
            needed = [wanted(p) for p in pairs]
            done = iter(self._kept_overlaps(parts, [p for p, n in zip(pairs, needed) if n], cap))
            return [next(done) if n else p for p, n in zip(pairs, needed)]
        if shown < len(pairs):  # the pairs the report does not show get none
            return self._kept_overlaps(parts, pairs[:shown], cap) + pairs[shown:]
        return self._kept_overlaps(parts, pairs, cap)

    def _listed_overlaps(self, parts: "Parts", pairs: ListedPairs, cap: int, shown: int) -> ListedPairs:
        """`_overlaps` of pairs kept as rows: of the collisions the report shows, in its order,
        the first `cap` given their volumes (a notable one's Finding replaced; a row measured from
        its objects and status, `ListedPairs.overlap_pairs`, its overlap kept and set on it as the
        report makes it), the others noted past the limit, a row as the report reads it."""
        pairs.ask_ahead()  # the report's reading, next
        codes = pairs.order[:max(0, shown)] if cap > 0 else pairs.order[:0]
        hit = codes[pairs.collisions(codes)]
        if not len(hit):
            return pairs
        first, past = hit[:cap].tolist(), hit[cap:]
        # a row's objects and status, its Finding not made (a Dask scan sends them to the overlap tasks)
        measured = self._kept_overlaps(parts, pairs.overlap_pairs(first, parts.names), cap)
        e = len(pairs.notable)
        notable = list(pairs.notable)
        overlaps = {}  # a row's overlap, not its Finding (each made again as the report reads it)
        for c, p in zip(first, measured):
            if c < e:
                notable[c] = p
            else:
                overlaps[c - e] = (p.overlap_volume, p.overlap_reason, p.overlap_mesh)
        beyond = overlap_cap_note(cap)
        for c in past[past < e].tolist():
            notable[c] = notable[c].but(overlap_reason=beyond)
        noted = np.zeros(pairs.plain, dtype=bool)
        noted[past[past >= e] - e] = True
        return pairs.with_overlaps(notable, overlaps, (beyond, noted) if noted.any() else None)

    def _kept_overlaps(self, parts: "Parts", pairs: list, cap: int) -> list:
        """`_overlaps_of`, the volumes the cache holds taken from it and the others kept: a
        collision's volume, its reason and its solid, by both objects' keys (where they are) and
        the volume the refinement gave."""
        table = self.table("overlaps") if any(p.status is Status.COLLISION for p in pairs) else None
        if table is None:
            return self._overlaps_of(parts, pairs, cap)
        from gjkcli.pipeline.cache import PartKeys, pair_key

        if self._part_keys is None:
            self._part_keys = PartKeys(parts.geoms, parts.shapes)
        pk, common = self._part_keys, repr(("overlap", self.units, cap)).encode()
        keys, kept, todo = {}, {}, []
        collisions = [at for at, p in enumerate(pairs) if p.status is Status.COLLISION][:cap]
        for at in collisions:
            p = pairs[at]
            a, b = parts.index[p.a], parts.index[p.b]
            keys[at] = pair_key(common, pk[a], pk[b], self._volumes.get((p.a, p.b)))
            row = table.get(keys[at])
            if row is not None:
                data, arrays = row
                mesh = (arrays["v"], arrays["f"]) if "v" in arrays else None
                kept[at] = p.but(overlap_volume=data["volume"], overlap_reason=data["reason"], overlap_mesh=mesh)
            else:
                todo.append(at)
        if not kept:
            out = self._overlaps_of(parts, pairs, cap)
        else:  # the collisions the cache does not hold, in their order, then all in place
            rest = [p for at, p in enumerate(pairs) if at not in kept]
            done = iter(self._overlaps_of(parts, rest, cap, done=len(kept)))
            out = [kept[at] if at in kept else next(done) for at in range(len(pairs))]
        for at in todo:
            p = out[at]
            arrays = {} if p.overlap_mesh is None else {"v": np.asarray(p.overlap_mesh[0], dtype=np.float64),
                                                        "f": np.asarray(p.overlap_mesh[1], dtype=np.int64)}
            table.put(keys[at], {"volume": p.overlap_volume, "reason": p.overlap_reason}, arrays)
        return out

    def _overlaps_of(self, parts: "Parts", pairs: list, cap: int, done: int = 0) -> list:
        """done : collisions before these that got their volume (the cache's). `pairs` (a list) is
        given back, each finding replaced in place: the one it replaces is let go at once (with
        both lists held, the Great Court roof's overlap stage grew the process by 11 MB, now by 3)."""
        commons: dict = {}  # `placement_key` -> the exact solids' common volume
        # one string for every pair past the cap (the roof's 23,500: 7 MB as a string each)
        beyond = overlap_cap_note(cap)
        pending = []  # (place in pairs, pair, its triangles): intersected all at once below
        for at, p in enumerate(pairs):
            if p.status is Status.COLLISION and done >= cap:
                p = p.but(overlap_reason=beyond)
            elif p.status is Status.COLLISION:
                from gjkcli.mesh.overlap import overlap  # a run without collisions does not import it

                done += 1
                a, b = parts.index[p.a], parts.index[p.b]
                ta, tb = parts.triangles(a), parts.triangles(b)
                ga, gb = parts.geoms[a], parts.geoms[b]
                volume = self._volumes.get((p.a, p.b))  # the refinement's, if it ran
                brep = bool(ga.brep and gb.brep and self.units is not None)  # exact solids (STEP)
                if brep and volume is None and parts.eps[a] == 0 and parts.eps[b] == 0 \
                        and ta is not None and tb is not None:
                    # solids of planar faces and straight edges are their triangles (eps 0):
                    # the triangles' boolean is the solids' own, at a fraction of the B-rep's cost
                    o = overlap(p.a, *ta, p.b, *tb)
                    if o.volume is not None:
                        pairs[at] = dataclasses.replace(p, overlap_volume=o.volume, overlap_reason=o.reason,
                                                        overlap_mesh=(o.vertices, o.faces))
                        continue
                if brep:
                    from gjkcli.mesh import cad, cad_process

                    same = placement_key(ga, gb) if volume is None else None
                    try:
                        if volume is None:
                            volume = commons.get(same) if same is not None else None
                        if volume is None:
                            volume = cad_process.ask(cad.common_volume, ga.brep, gb.brep, self.units)
                            if same is not None and volume is not None:
                                commons[same] = volume
                    except Exception:  # noqa: BLE001 - fall back to the triangles' boolean
                        volume = None
                    if volume is not None:
                        pairs[at] = dataclasses.replace(p, overlap_volume=volume)
                        continue
                if ta is None or tb is None:
                    curved = " and ".join(parts.names[k] for k, t in ((a, ta), (b, tb)) if t is None)
                    p = dataclasses.replace(p, overlap_reason=f"{curved}: a curved primitive has "
                                                              f"no triangles to intersect")
                else:
                    pending.append((at, p, (p.a, *ta, p.b, *tb), parts.own_hull(a) and parts.own_hull(b)))
            pairs[at] = p
        if pending:  # two convex parts cut, others intersected, on every core (`overlaps`)
            from gjkcli.mesh.overlap import overlaps

            found = overlaps([t for _, _, t, _ in pending], self.options.jobs, [c for *_, c in pending])
            for (at, p, _, _), o in zip(pending, found):
                pairs[at] = p.but(overlap_volume=o.volume, overlap_reason=o.reason,
                                  overlap_mesh=(o.vertices, o.faces) if o.volume is not None else None)
        return pairs

    def _grouped(self, pairs: list, resolved) -> list:
        """The pairs with their groups of clashes at one place, where the run groups
        (--group-within, the manifest's group_within, a [[check]]'s own)."""
        own = {s.name: s.group_within for s in (resolved.sets if resolved is not None else ())
               if s.group_within is not None}
        every = self.options.group_within
        if every is None and not own:
            return pairs
        from gjkcli.pipeline.grouping import group_pairs
        return list(group_pairs(pairs, lambda name: own.get(name, every)))

    def _trace(self, parts, a, b):
        """GJK and EPA on the hulls of the pair, step by step (what led to the answer)."""
        from gjkcli.engine.query import query

        return query(parts.shapes[a], parts.shapes[b], tolerance=self.options.tolerance, trace=True).trace


def _merged_mesh(vertices, faces, name: str):
    """The triangle test's `Mesh` of a part's triangles as read: merged (`merge_close`), and
    where that leaves it open, the closed solids the file keeps apart kept apart
    (`gjkcli.mesh.load.solids_apart`, as the loader's `merge_solids`); asked after the merged
    mesh's own edges say it is open, so a closed part pays nothing more."""
    from gjkcli.engine.exact import Mesh
    from gjkcli.mesh.load import merge_close, solids_apart

    mesh = Mesh(*merge_close(vertices, faces), name=name)
    if not mesh.watertight:
        apart = solids_apart(vertices, faces)
        if apart is not None:
            return Mesh(*apart, name=name)
    return mesh


def involved(parts, pairs) -> np.ndarray:
    """(k,) int64: the listed pairs' parts, sorted and each once (np.unique would import
    numpy.ma)."""
    if not pairs:
        return np.zeros(0, dtype=np.int64)
    if isinstance(pairs, ListedPairs):  # the plain rows' objects from their arrays
        seen = np.zeros(parts.n, dtype=bool)
        for side in pairs.plain_objects():
            seen[side] = True
        for p in pairs.notable:
            seen[parts.index[p.a]] = seen[parts.index[p.b]] = True
        return np.flatnonzero(seen).astype(np.int64)
    return np.array(sorted({parts.index[p.a] for p in pairs} | {parts.index[p.b] for p in pairs}), dtype=np.int64)


# The objects a note names at most (`Run._inward_note`): the others are counted.
INWARD_NAMED = 5


# The fewest triangles of the parts whose convexity reasons `Parts.reasons_ahead` shares with a
# forked worker: a fork (about 10 ms) against 0.15 s for ArchiCAD 11's institute (338 parts) or
# Revit's sample project (47 parts, 28 of them chairs of 2,184 triangles).
REASONS_AHEAD_FACES = 20_000


# -- parts: hulls, gaps, meshes ----------------------------------------------------------------


@dataclass
class Parts:
    """The objects of a run with their hulls: what every later stage indexes by object."""

    geoms: list
    shapes: list
    lo: np.ndarray
    hi: np.ndarray
    gap: np.ndarray  # (n,) hull_gaps; 0 for primitives
    inward: np.ndarray  # (n,) uint8 wound inwards (`gjkcli.pipeline.prepared.Geometry.inward`)
    source: np.ndarray  # (n,) input each object came from
    meshed: np.ndarray  # (n,) the object has triangles (a mesh or a box; not a curved primitive)
    names: list
    index: dict
    _meshes: dict
    # (the reasons records() will measure, their shares, the counter handing them out, the
    # worker measuring them), from `reasons_ahead`
    _ahead: list = dataclasses.field(default_factory=list)

    @property
    def n(self) -> int:
        return len(self.geoms)

    dimension = 3

    def kinds(self) -> tuple:
        """(classes per object or None, (file, id) per object or None): what each object's reader
        says it is, for manifest selections (an IFC element's class and supertypes, its
        GlobalId); None when no object's reader says anything."""
        classes = [g.element.classes if g.element is not None else () for g in self.geoms]
        if not any(classes):
            return None, None
        return classes, [(g.file, g.element.ident) if g.element is not None else None for g in self.geoms]

    @property
    def geometry(self):
        """Findings.geometry: name -> the object's triangles (`triangles_of`)."""
        return self.triangles_of

    @functools.cached_property
    def eps(self) -> np.ndarray:
        """(n,) each object's tessellation error bound (0 for a mesh file or a primitive)."""
        return np.array([float(getattr(g, "eps", 0.0) or 0.0) for g in self.geoms])

    @classmethod
    def build(cls, geoms, jobs: int, problems: list, tell, table=None) -> "Parts":
        """Hulls of the meshes (primitives as they are, `hulls`; table: the cache's); an object
        whose geometry makes no shape becomes a problem of its file."""
        return cls.assemble(geoms, *hulls(geoms, jobs, tell, table), problems)[0]

    @classmethod
    def assemble(cls, geoms, shapes, lo, hi, gap, inward, problems: list) -> tuple["Parts", list]:
        """(the parts, the indices of `geoms` kept): objects with their hulls, bounds, gaps and
        winding; one whose shape is a ShapeError or whose coordinates overflow becomes a problem
        of its file."""
        from gjkcli.tolerances import DEFAULT

        n = len(geoms)
        with np.errstate(invalid="ignore"):
            extent = np.maximum(np.abs(lo), np.abs(hi)).max(axis=1) if n else np.zeros(0)
        keep = []
        for k, shape in enumerate(shapes):
            g = geoms[k]
            if isinstance(shape, ShapeError):
                problems.append(Problem(file=g.file, message=f"object '{g.name}': unusable "
                                                             f"geometry: {one_line(shape)}"))
            elif not extent[k] <= DEFAULT.max_coordinate:
                problems.append(Problem(file=g.file, message=(
                    f"object '{g.name}' has coordinates up to {extent[k]:.3g}: beyond "
                    f"{DEFAULT.max_coordinate:.0e}, distances overflow double precision; check "
                    f"the file's scale and units")))
            else:
                keep.append(k)
        if len(keep) < n:
            geoms = [geoms[k] for k in keep]
            shapes = [shapes[k] for k in keep]
            lo, hi, gap, inward = lo[keep], hi[keep], gap[keep], inward[keep]
        names = [g.name for g in geoms]
        return cls(geoms=geoms, shapes=shapes, lo=lo, hi=hi, gap=gap, inward=np.asarray(inward, dtype=np.uint8),
                   source=np.array([g.source for g in geoms], dtype=np.int64),
                   meshed=np.array([g.primitive is None or g.primitive.kind == "box" for g in geoms],
                                   dtype=bool),
                   names=names, index={name: k for k, name in enumerate(names)}, _meshes={}), keep

    def mesh(self, k: int):
        """Object k's triangles and their hierarchy (`gjkcli.engine.exact.Mesh`), built once."""
        if k not in self._meshes:
            from gjkcli.engine.exact import Mesh

            g = self.geoms[k]
            if g.primitive is not None:  # a box: its 12 triangles are the box exactly
                self._meshes[k] = Mesh(*self.triangles(k), watertight=True, name=g.name)
            elif g.watertight is not None:  # loaded by gjkcli.mesh.load: merged already
                self._meshes[k] = Mesh(g.vertices, g.faces, watertight=g.watertight, name=g.name)
            else:
                self._meshes[k] = _merged_mesh(g.vertices, g.faces, g.name)
        return self._meshes[k]

    def forget(self, k) -> None:
        """Drop object k's triangle hierarchy (`mesh` builds it again when asked), or the shared
        one `held` names."""
        self._meshes.pop(k, None)

    def placed_body(self, k: int) -> tuple:
        """(what the exact test reads of object k, the 4x4 pose that places it, or None): for an
        object placing a mesh rigidly (an Instance, however many objects of this run place it: a
        Dask worker's share of a file places it as one process does), that mesh's triangles and
        hierarchy in its own frame, built once for all of them (with its probes), under the
        object's name; else `body(k)`, where it lies."""
        instance = self.geoms[k].instance
        if instance is None or instance.local is None or self.geoms[k].primitive is not None:
            return self.body(k), None
        held = self.held(k)
        shared = self._meshes.get(held)
        g = self.geoms[k]
        if shared is None:
            from gjkcli.engine.exact import Mesh

            if g.watertight is not None:  # loaded by gjkcli.mesh.load: merged already
                shared = Mesh(instance.local, g.faces, watertight=g.watertight, name=g.name)
            else:
                shared = _merged_mesh(instance.local, g.faces, g.name)
            shared.labelled_probes()  # found once, for every object placing it
            self._meshes[held] = shared
        return shared.named(g.name), instance.pose

    def held(self, k: int):
        """What `forget` drops once object k's last pair is tested: k, or the mesh it shares with
        other objects (`placed_body`)."""
        g = self.geoms[k]
        placed = g.instance is not None and g.instance.local is not None and g.primitive is None
        return ("placed", g.instance.key) if placed else k

    def body(self, k: int):
        """What the exact test reads of object k: its triangles (`mesh`), or the Shape of a
        curved primitive (sphere, capsule, cylinder: `gjkcli.engine.primitive` answers it
        against the other part's triangles)."""
        if not self.meshed[k]:
            return self.shapes[k]
        return self.mesh(k)

    def own_hull(self, k: int) -> bool:
        """Object k's triangles cover its convex hull's boundary once, to rounding (its hull
        gap within `prepared.OWN_HULL_REL` of its size): a convex solid, or a flat part."""
        from gjkcli.pipeline.prepared import OWN_HULL_REL

        return bool(self.gap[k] <= OWN_HULL_REL * np.linalg.norm(self.hi[k] - self.lo[k]))

    def triangles(self, k: int):
        """Object k's ((n, 3) world vertices, (m, 3) faces), or None for a curved primitive."""
        g = self.geoms[k]
        if g.primitive is None:
            return g.vertices, g.faces
        from gjkcli.pipeline.pairs import box_triangles

        return box_triangles(self.shapes[k])  # a box's 12 triangles are the box; None if curved

    def triangles_of(self, name: str):
        """`triangles` by object name, an owner's its elements' together (None for a name the
        run does not hold)."""
        k = self.index.get(name)
        if k is None and name in self.owned.values():
            members = [k for k, g in enumerate(self.geoms) if g.owner == name]
            return elements.merged_triangles(self.triangles, members)
        return None if k is None else self.triangles(k)

    @functools.cached_property
    def owned(self) -> dict:
        """{element name: its object's name} of the parts that are elements of an object (a URDF
        link's collision elements), `gjkcli.pipeline.elements`."""
        return {g.name: g.owner for g in self.geoms if g.owner is not None}

    @functools.cached_property
    def owner_ids(self) -> np.ndarray:
        return elements.owner_ids([g.owner or g.name for g in self.geoms])

    def convexity(self, involved: np.ndarray, vertices, faces, watertight, bodies) -> tuple:
        """(convex, why) per object: a primitive is convex; a mesh's verdict comes from its hull
        gap (`gjkcli.mesh.convexity.part_verdicts`, unmeasured: a reason it leaves None is
        measured later, by the caller); vertices, faces, watertight, bodies: per object."""
        from gjkcli.mesh.convexity import part_verdicts
        from gjkcli.tolerances import DEFAULT

        size = np.linalg.norm(self.hi - self.lo, axis=1)
        meshes = [k for k, g in enumerate(self.geoms) if g.primitive is None]
        convex: list = [True] * self.n
        why: list = ["a primitive"] * self.n
        if meshes:
            sub = np.asarray(meshes)
            pos = {k: s for s, k in enumerate(meshes)}
            decided, reasons = part_verdicts(
                self.gap[sub], DEFAULT.touching_rel * size[sub],
                [pos[k] for k in involved.tolist() if k in pos], [vertices[k] for k in meshes],
                [faces[k] for k in meshes], [watertight[k] for k in meshes],
                [bodies[k] for k in meshes], measure=False)
            for s, k in enumerate(meshes):
                convex[k], why[k] = decided[s], reasons[s]
        return convex, why

    def record(self, k: int, vertices: int, faces: int, convex: bool, why) -> ObjectRecord:
        """Object k's ObjectRecord, with its mesh's counts and its convexity verdict and reason."""
        g, shape = self.geoms[k], self.shapes[k]
        lo, hi = self.lo[k].tolist(), self.hi[k].tolist()
        return ObjectRecord(
            name=g.name, file=g.file, vertices=vertices, faces=faces, hull_vertices=int(shape.n_vertices),
            convex=convex, watertight=g.watertight, bounds=(tuple(lo), tuple(hi)),
            units=g.units, bodies=g.bodies, dimension=int(shape.dimension),
            primitive=None if g.primitive is None else shape.kind, convexity=why,
            hull_gap=None if g.primitive is not None or not np.isfinite(self.gap[k]) else float(self.gap[k]),
            **(g.element.record_fields if g.element is not None else {}))

    @functools.cached_property
    def placed_meshes(self) -> dict:
        """{object: its Instance} for the objects that place a mesh other objects place too
        (`shared_uses`: their hull was built once, in the mesh's frame, `hulls`)."""
        uses = shared_uses(self.geoms)
        return {k: g.instance for k, g in enumerate(self.geoms)
                if g.primitive is None and g.instance is not None and uses.get(g.instance.key, 0) > 1}

    def reasons_to_measure(self, why: list, convex: list) -> tuple:
        """(the objects whose convexity reason is to be measured, {object: the object whose
        reason it takes}): of the objects with none yet that are not convex, those placing one
        mesh (`placed_meshes`) take the reason measured once, for the first of them, on the
        mesh in its own frame (a reason does not change with a rotation and a translation)."""
        first: dict = {}
        unmeasured, taken = [], {}
        placed = self.placed_meshes
        for k in range(self.n):
            if why[k] is not None or convex[k] is not False:
                continue
            instance = placed.get(k)
            if instance is None:
                unmeasured.append(k)
            elif instance.key in first:
                taken[k] = first[instance.key]
            else:
                first[instance.key] = k
                unmeasured.append(k)
        return unmeasured, taken

    def reason_mesh(self, k: int) -> tuple:
        """(vertices, faces) object k's convexity reason is measured on: its mesh in its own
        frame for an object placing a mesh others place too, else its world vertices."""
        g = self.geoms[k]
        instance = self.placed_meshes.get(k)
        return (g.vertices if instance is None else instance.local), g.faces

    def reason_hull_points(self, k: int) -> int | None:
        """The most points whose hull the core builds for object k's reason (`convexity`'s
        hull_points): SHARED_HULL_POINTS for a mesh placed by several objects, as its hull."""
        from gjkcli.engine.shapes import SHARED_HULL_POINTS

        return SHARED_HULL_POINTS if k in self.placed_meshes else None

    def measure_reasons(self, which: list, part_reasons=None) -> list:
        """The convexity reasons of the objects `which`, in order (`part_reasons`, the one given
        or `gjkcli.mesh.convexity`'s), each measured on `reason_mesh` with `reason_hull_points`."""
        if part_reasons is None:
            from gjkcli.mesh.convexity import part_reasons
        if not which:
            return []
        g = self.geoms
        meshes = {k: self.reason_mesh(k) for k in which}
        vertices, faces = [None] * self.n, [None] * self.n
        for k, (v, f) in meshes.items():
            vertices[k], faces[k] = v, f
        watertight, bodies = [p.watertight for p in g], [p.bodies for p in g]
        out: dict = {}
        for points in dict.fromkeys(self.reason_hull_points(k) for k in which):
            mine = [k for k in which if self.reason_hull_points(k) == points]
            out.update(zip(mine, part_reasons(self.gap, mine, vertices, faces, watertight, bodies, points)))
        return [out[k] for k in which]

    def reasons_ahead(self, involved: np.ndarray, jobs: int) -> None:
        """With jobs > 1 in a process that may fork, and parts of REASONS_AHEAD_FACES triangles or
        more whose reasons `records(involved)` will measure: a forked worker (`gjkcli.forks`)
        measures them now, share after share (`gjkcli.pipeline.refine.guided`: large ones first,
        then smaller) taken from a counter, while this process goes on with the overlap volumes
        and the report, which takes the shares left when it first reads a record (`records`),
        then waits for the one the worker measures (given less of a core on a busy machine, it
        holds this process up by a share, never has its whole half measured twice). The
        reasons are each part's own, whichever process measures them."""
        from gjkcli.engine.shapes import can_fork

        if jobs <= 1 or not can_fork():
            return
        g = self.geoms
        convex, why = self.convexity(involved, [p.vertices for p in g], [p.faces for p in g],
                                     [p.watertight for p in g], [p.bodies for p in g])
        unmeasured = self.reasons_to_measure(why, convex)[0]
        if len(unmeasured) < 2 or sum(len(g[k].faces) for k in unmeasured) < REASONS_AHEAD_FACES:
            return
        from gjkcli import forks
        from gjkcli.pipeline.refine import guided

        shares, counter = guided(0, len(unmeasured), jobs), forks.Counter()

        def measured(_parent) -> dict:
            out = {}
            while (n := counter.take()) < len(shares):
                which = unmeasured[shares[n][0]:shares[n][1]]
                out.update(zip(which, self.measure_reasons(which)))
            return out

        try:
            worker = forks.Worker(measured)
        except OSError:  # no process left to fork: records() measures them all
            counter.close()
            return
        self._ahead[:] = [(unmeasured, shares, counter, worker)]
        # a report that reads no record (a table) leaves it: it ends with this process
        import atexit

        atexit.register(worker.close, wait=False)

    def records(self, involved: np.ndarray, reasons=None) -> LazyRecords:
        """ObjectRecord per object, each made when a report reads it (`LazyRecords`); the objects
        of listed pairs get their convexity reason, measured when a report first reads one: a
        table, which lists no object, never pays for it; a report that lists objects has them
        measured all at once (`gjkcli.mesh.convexity.part_reasons`: 0.9 s on the Great Court
        roof, where one by one took 5 s). reasons : a callable giving the cache's table of
        reasons (`gjkcli.pipeline.cache.reason_key`), or None: a reason it holds is taken, the
        others measured and kept."""
        from gjkcli.mesh.convexity import part_reasons

        g = self.geoms
        convex, why = self.convexity(involved, [p.vertices for p in g], [p.faces for p in g],
                                     [p.watertight for p in g], [p.bodies for p in g])
        unmeasured, taken = self.reasons_to_measure(why, convex)
        # read now, so that a kept pack that is not believed is in the run's notes
        table = reasons() if reasons is not None and unmeasured else None
        ahead = self._ahead.pop() if self._ahead else None

        def measured(which: list) -> list:
            return self.measure_reasons(which, part_reasons)

        def measure() -> None:  # every reason part_verdicts left to measure, at once
            nonlocal ahead
            keys, todo = {}, list(unmeasured)
            if table is not None:
                from gjkcli.pipeline.cache import reason_key

                todo = []
                for k in unmeasured:
                    keys[k] = reason_key(*self.reason_mesh(k), g[k].watertight, g[k].bodies, self.gap[k],
                                         self.reason_hull_points(k))
                    row = table.get(keys[k])
                    if row is not None and isinstance(row[0], str):
                        why[k] = row[0]
                    else:
                        todo.append(k)
            got = {}
            if ahead is not None and ahead[0] == unmeasured:  # shared with the worker meanwhile
                _, shares, counter, worker = ahead
                wanted = set(todo)
                while (n := counter.take()) < len(shares):  # the shares it has not taken
                    which = [k for k in unmeasured[shares[n][0]:shares[n][1]] if k in wanted]
                    got.update(zip(which, measured(which)))
                try:  # its shares, the one it measures now waited for
                    got.update(worker.result())
                except Exception:  # noqa: BLE001 - the worker lost or failed: measured here
                    pass
            if ahead is not None:
                ahead[3].close(wait=False)
                ahead[2].close()
                ahead = None
            left = [k for k in todo if k not in got]
            got.update(zip(left, measured(left)))
            for k in todo:
                reason = got[k]
                why[k] = reason
                if table is not None:
                    table.put(keys[k], reason)
            if table is not None and todo:
                table.save()  # measured as the report is written, after the run saved its tables
            for k, first in taken.items():  # a mesh several objects place: measured once
                why[k] = why[first]
            unmeasured.clear()
            taken.clear()

        def record(k: int) -> ObjectRecord:
            if why[k] is None and convex[k] is False:
                measure()
            v, f = g[k].vertices, g[k].faces
            return self.record(k, 0 if v is None else len(v), 0 if f is None else len(f), convex[k], why[k])

        return LazyRecords(self.n, record)


def shared_uses(geoms) -> dict:
    """{Instance key: how many objects place that mesh} of the objects `geoms` that place a
    mesh rigidly (`gjkcli.mesh.load.Instance`; a share of a file's parts, a cluster's task: the
    whole file's count, `Instance.placed`, where more)."""
    return instance_uses(g.instance for g in geoms if g.primitive is None)


def instance_uses(instances) -> dict:
    """`shared_uses` of the objects' instances (None for an object placing no mesh)."""
    uses: dict = {}
    placed: dict = {}
    for instance in instances:
        if instance is not None:
            uses[instance.key] = uses.get(instance.key, 0) + 1
            placed[instance.key] = max(placed.get(instance.key, 0), instance.placed)
    return {key: max(n, placed[key]) for key, n in uses.items()}


def hulls(geoms, jobs: int = 1, tell=None, table=None) -> tuple:
    """(shapes, lo, hi, gap, inward) of the objects `geoms` (`gjkcli.scene.objects.Geometry`),
    from the prepared scene (`gjkcli.pipeline.prepared`): one hull per distinct mesh however many
    objects place it, a primitive as it is (gap 0). shapes : a Shape, or the ShapeError of an
    object whose geometry makes none (its bounds NaN); lo, hi : (n, 3) world boxes; gap : (n,)
    `hull_gaps`; inward : (n,) uint8 its mesh wound inwards (`prepared.Geometry.inward`). One process
    (`Parts.build`) and a cluster's load task (`gjkcli.pipeline.distributed`) both build them
    here. table : the cache's hulls (`gjkcli.pipeline.cache.Table`), or None."""
    from gjkcli.pipeline import prepared

    n = len(geoms)
    shapes: list = [g.primitive for g in geoms]
    lo, hi = np.full((n, 3), np.nan), np.full((n, 3), np.nan)
    gap = np.zeros(n)
    inward = np.zeros(n, dtype=np.uint8)
    # objects that place one mesh rigidly (a STEP product's instances, a scene's nodes) share
    # its hull: prepared in the mesh's frame, then moved to each (a hull commutes with rigid
    # motions); an instance placed once is prepared where it lies, as any other mesh
    uses = shared_uses(geoms)
    meshes = []
    for k, g in enumerate(geoms):
        if g.primitive is not None:
            lo[k], hi[k] = g.primitive.bounds
        else:
            meshes.append((k, g.instance.pose if g.instance is not None and uses[g.instance.key] > 1 else None))
    made = prepared.geometries([geoms[k].vertices if pose is None else geoms[k].instance.local for k, pose in meshes],
                               [geoms[k].faces for k, _ in meshes])
    placed: dict = {}  # object -> (its prepared Geometry, the pose that places it or None)
    for (k, pose), pg in zip(meshes, made):
        if isinstance(pg, ShapeError):
            shapes[k] = pg
        else:
            placed[k] = (pg, pose)
    # a mesh several objects place is prepared once for them all: the compiled core builds its
    # hull up to SHARED_HULL_POINTS points (a few ms, once), not qhull (scipy's import)
    from gjkcli.engine.shapes import SHARED_HULL_POINTS

    shared = {id(pg): pg for pg, pose in placed.values() if pose is not None}
    fresh: list = []  # the meshes whose hulls this run builds and the cache is to keep
    if table is not None:  # the cache's hulls, of the meshes large enough to keep
        from gjkcli.pipeline import cache

        for pg in {id(pg): pg for pg, _ in placed.values()}.values():
            if pg.hull is not None or pg.error is not None or len(pg.vertices) <= KEEP_HULLS_FROM_VERTICES:
                continue
            k = cache.hull_key(pg.content, SHARED_HULL_POINTS if id(pg) in shared else None)
            row = table.get(k)
            if row is None or not cache.set_hull(pg, row, table.cache.notes):
                fresh.append((k, pg))
    if shared:
        prepared.prepare(list(shared.values()), jobs=jobs, small_points=SHARED_HULL_POINTS)
    prepared.prepare([pg for pg, _ in placed.values()], jobs=jobs, progress=tell, small_points=None)
    for k, pg in fresh:
        table.put(k, *cache.hull_row(pg))
    where, boxes, gaps = [], [], []  # the objects' boxes and gaps, set for all at once
    for k, (pg, pose) in placed.items():
        if pg.hull is None:
            shapes[k] = pg.error
            continue
        shapes[k] = pg.hull if pose is None else pg.hull.moved(pose)
        inward[k] = pg.inward
        where.append(k)
        boxes.append(pg.bounds if pose is None else shapes[k].bounds)
        gaps.append(pg.gap)
    if where:
        boxes = np.array(boxes)
        lo[where], hi[where], gap[where] = boxes[:, 0], boxes[:, 1], gaps
    return shapes, lo, hi, gap, inward


def _banded(packed, i, j, bands):
    """`batch` of pairs (i, j) at their own touching bands (NaN: relative to the pair's size),
    in two calls when some pairs have a band and some the relative one."""
    from gjkcli.engine.query import batch
    from gjkcli.engine.results import BatchResult

    relative = np.isnan(bands)
    if not relative.any():
        return batch(packed, i, j, tolerance=bands, want="verdict")
    if relative.all():
        return batch(packed, i, j, tolerance=None, want="verdict")
    parts = [(relative, batch(packed, i[relative], j[relative], tolerance=None, want="verdict")),
             (~relative, batch(packed, i[~relative], j[~relative], tolerance=bands[~relative],
                               want="verdict"))]
    out = {}
    for f in dataclasses.fields(BatchResult):
        first = getattr(parts[0][1], f.name)
        merged = np.empty((len(i),) + first.shape[1:], dtype=first.dtype)
        for mask, got in parts:
            merged[mask] = getattr(got, f.name)
        out[f.name] = merged
    return BatchResult(**out)


@dataclass
class _Answers:
    status: np.ndarray  # (m,) Status values (str), clearance applied: the hulls' verdicts
    hull_clear: np.ndarray
    conservative: np.ndarray  # (m,) the hulls answer and a part is not its hull
    listed: np.ndarray
    exact: dict  # pair index -> the triangle test's Result
    batch: object
    bounded: dict = dataclasses.field(default_factory=dict)  # pair index -> tessellated.Bounded
    tessellation: np.ndarray | None = None  # (m,) eps_a + eps_b per pair


def _exact_answer(ans: _Answers, k: int, clearance) -> Result:
    """The triangles' answer of checked pair k, clear within its required clearance read as
    clearance."""
    result = ans.exact[k]
    if result.status is Status.CLEAR and clearance[k] > 0 and result.distance < clearance[k]:
        result = dataclasses.replace(result, status=Status.CLEARANCE)
    return result


def _primitive_note(parts, a: int, b: int, conservative: bool) -> str | None:
    return primitive_note(parts.names, parts.meshed, a, b, conservative)


# -- statuses ------------------------------------------------------------------------------------

_CLEAR, _CLEARANCE = Status.CLEAR.value, Status.CLEARANCE.value


def _engine_statuses() -> np.ndarray:
    """Engine status code -> Status value, from the engine's own table."""
    from gjkcli.engine.results import STATUS_CODES

    table = np.empty(max(STATUS_CODES) + 1, dtype=object)
    for code, status in STATUS_CODES.items():
        table[code] = status.value
    return table


_STATUS_OF_ENGINE = _engine_statuses()


def allowed_reasons(resolved, i, j) -> dict:
    """{pair index: reason} for pairs an allow rule covers (the first rule that does)."""
    out: dict[int, str] = {}
    if resolved is None or not resolved.allows or len(i) == 0:
        return out
    for in_a, in_b, reason, _line in resolved.allows:
        hit = (in_a[i] & in_b[j]) | (in_b[i] & in_a[j])
        for k in np.flatnonzero(hit).tolist():
            out.setdefault(k, reason)
    return out


def placement_key(ga, gb):
    """A key equal for two pairs of objects of one exact solid each exactly when they are the
    same two shared meshes in the same relative pose (`gjkcli.mesh.load.Instance.relative_key`),
    so that their common volume is computed once; None when either is not one placed solid."""
    ia, ib = ga.instance, gb.instance
    if ia is None or ib is None or len(ga.brep) != 1 or len(gb.brep) != 1:
        return None
    return ia.relative_key(ib)


def _reader_allowed(parts, i, j) -> dict:
    """{pair index: reason} for pairs the objects' readers allow: an object's element names the
    objects of its file it may meet (`allowed_with`: an IFC filler and the host whose opening
    it fills), by their ids within the file."""
    said = [(k, g) for k, g in enumerate(parts.geoms) if g.element is not None and g.element.allowed_with]
    if not said or len(i) == 0:
        return {}
    where = {(g.file, g.element.ident): k for k, g in enumerate(parts.geoms) if g.element is not None}
    reasons = {}
    for k, g in said:
        for other, reason in g.element.allowed_with:
            h = where.get((g.file, other))
            if h is not None:
                reasons.setdefault((min(k, h), max(k, h)), reason)
    if not reasons:
        return {}
    lo, hi = np.minimum(i, j).tolist(), np.maximum(i, j).tolist()
    return {k: reasons[pair] for k, pair in enumerate(zip(lo, hi)) if pair in reasons}


class KeyMaker:
    """Baseline keys (`gjkcli.pipeline.baseline.pair_key`), each file's relative path worked
    out once, not once per pair."""

    def __init__(self, base: Path):
        self.base = base
        self.files: dict[str, str] = {}

    def rel(self, file: str) -> str:
        from gjkcli.pipeline.baseline import relative_file

        if file not in self.files:
            self.files[file] = relative_file(file, self.base)
        return self.files[file]

    def __call__(self, a: str, b: str, file_a: str, file_b: str) -> tuple:
        from gjkcli.pipeline.baseline import key

        return key(a, b, file_a, file_b, self.rel)


def _unclocked(answer):
    """A kept answer as one that took no time now (`--timings` shows the time spent)."""
    if getattr(answer, "elapsed", None):
        return dataclasses.replace(answer, elapsed=0.0)
    inner = getattr(answer, "result", None)
    if getattr(inner, "elapsed", None):
        return dataclasses.replace(answer, result=dataclasses.replace(inner, elapsed=0.0))
    return answer


def _version() -> str:
    from gjkcli import __version__

    return __version__



