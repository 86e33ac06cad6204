"""`gjk scan --dask ADDRESS`: the scan of `gjkcli.pipeline.run` on a dask.distributed cluster,
with the same findings as one process.

The run is `gjkcli.pipeline.stages.Run`'s, stage for stage; three stages go to the workers:

1. **Loading and hulls**, one task per source (a scene file, a whole-file object): the task
   reads the file, builds its objects' hulls and hull gaps, and returns them packed in flat
   arrays (vertices, faces, hull vertices, adjacency, poses), never trimesh objects. The client
   unpacks them in input order and names the objects as `gjkcli.scene.objects.gather` does; the
   results stay on the workers for step 2.
2. **Broad and narrow phase by spatial tiles**: a grid cuts the bounding box of the objects'
   boxes, each grown as the run grows it for its broad phase (half the clearance, the touching
   band, a hair of the scene). An object goes to every tile its grown box meets: each tile
   sees the objects within a halo of its border as wide as their reach. Two objects are a
   candidate pair when their grown boxes overlap; the pair belongs to the one tile that holds
   the lower corner of the two boxes' intersection, a point inside both boxes, so both objects
   are in that tile and every other tile that sees the pair drops it: each pair is checked
   exactly once. A tile's task picks its objects' hulls from step 1's results (a small task
   per source on the worker that holds it), runs the broad phase, the manifest's [[check]]
   selections and the engine's batch call.
3. The client gathers the tiles' pairs and verdicts in the order one process reads them
   (by object, then partner); the policy, the triangles of non-convex parts (on the client,
   which holds every part's triangles from step 1), the baseline and the findings are `Run`'s.

A worker lost mid-scan loses its results; Dask re-runs the tasks that made them (a load task
is a function of its file), so the scan completes. A scheduler out of reach is a
`ClusterError` after the connect time-out.

Nothing here is imported unless a scan asks for a cluster.
"""
from __future__ import annotations

import contextlib
import dataclasses
import logging
import time
from dataclasses import dataclass

import numpy as np

from gjkcli import limits
from gjkcli.errors import GjkError, Problem, ShapeError, one_line
from gjkcli.pipeline import elements, stages
from gjkcli.pipeline.stages import PAIR_CHUNK, Parts, Run, hulls

__all__ = ["scan_on_cluster", "connect", "parse_address", "ClusterError", "LOCAL_WORKERS"]

# `local` without a count: a LocalCluster of this many worker processes.
LOCAL_WORKERS = 2
# Tiles: at least this many per worker (so that a slow or lost worker's share is small), and
# at most about this many objects per tile (so that a tile's arrays stay small to send).
TILES_PER_WORKER = 4
TILE_OBJECTS = 20_000
# While waiting for tasks, how often to ask the scheduler whether any worker is left (seconds).
_WATCH_EVERY = 1.0


class ClusterError(GjkError):
    """The cluster cannot run the scan: its scheduler is out of reach, it has no worker, or it
    lost the scan's work for good."""


def parse_address(address: str) -> tuple[str, int | None]:
    """("local", N) for "local" or "local:N"; (address, None) for a scheduler's address.

    Raises ValueError for anything else (the manifest's `DASK_ADDRESS` is the grammar).
    """
    from gjkcli.scene.manifest import DASK_ADDRESS

    text = str(address).strip()
    if not DASK_ADDRESS.fullmatch(text):
        raise ValueError(f"{address!r} is not a Dask scheduler address: give tcp://host:8786, "
                         f"local or local:N")
    if text == "local":
        return "local", LOCAL_WORKERS
    if text.startswith("local:"):
        return "local", int(text[len("local:"):])
    return text, None


@contextlib.contextmanager
def connect(address: str, timeout: float = 10.0, *, quiet: bool = True):
    """A dask.distributed Client on `address` with at least one worker, closed on exit (and the
    LocalCluster with it, for "local[:N]").

    Raises ClusterError naming the address when the scheduler cannot be reached, or no worker
    joins it, within `timeout` seconds.
    """
    where, workers = parse_address(address)
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise ClusterError(f"a scan on a Dask cluster ({address}) needs dask.distributed, which is "
                           f"not installed: pip install 'gjk[dask]'") from None
    with _quiet_dask(quiet):
        cluster = None
        try:
            if workers is not None:
                # no memory limit: a paused worker would stall the scan (the machine's memory
                # is the limit, as for one process); logs below errors stay in the workers
                cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                       dashboard_address=None, memory_limit=0,
                                       silence_logs=logging.CRITICAL if quiet else logging.WARNING)
                client = Client(cluster, timeout=timeout, set_as_default=False)
            else:
                client = Client(where, timeout=timeout, set_as_default=False)
        except ClusterError:
            raise
        except Exception as exc:  # noqa: BLE001 - OSError, TimeoutError, a refused handshake
            if cluster is not None:
                cluster.close()
            raise ClusterError(f"cannot reach the Dask scheduler at {address} within {timeout:g} s "
                               f"({one_line(exc)}); check the address and that the scheduler "
                               f"runs (--dask-timeout sets the wait)") from None
        try:
            try:
                client.wait_for_workers(1, timeout=timeout)
            except Exception:  # noqa: BLE001 - TimeoutError, under several names
                raise ClusterError(f"the Dask scheduler at {address} has no worker (none joined "
                                   f"within {timeout:g} s); start workers with dask worker "
                                   f"{where}") from None
            yield client
        finally:
            client.close()
            if cluster is not None:
                cluster.close()


@contextlib.contextmanager
def _quiet_dask(quiet: bool):
    """distributed's own log lines (a lost worker, a retried connection) stay off stderr, where
    gjk's one line per problem is; --debug lets them through."""
    if not quiet:
        yield
        return
    # distributed's configuration gives some of its loggers their own level
    # (distributed.client: warning): each one is silenced, not only the parent
    names = ["distributed"] + [name for name in logging.root.manager.loggerDict
                               if name.startswith("distributed.")]
    loggers = [logging.getLogger(name) for name in names]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels):
            logger.setLevel(level)


def scan_on_cluster(paths, options, manifest, progress):
    """`gjkcli.pipeline.run.scan` on the cluster at `options.dask` (the manifest already read
    and merged into the options by `run.scan`, which calls this)."""
    from gjkcli.scene.objects import scene_sources
    from gjkcli.scene.rules import with_reader_rules

    run = _ClusterRun(options, progress)
    with connect(options.dask, options.dask_timeout, quiet=not options.strict) as client:
        run.client = client
        sources, primitives = scene_sources(paths, manifest, options.split_bodies, run.problems,
                                            options.robot, recurse=options.recurse, notes=run.notes)
        # a robot's pose, allowed pairs, notes and geometry left unchecked, as in one process
        manifest, notes, unchecked = with_reader_rules(manifest, sources, options.robot, bool(run.problems))
        run.notes.extend(notes)
        run.unchecked.extend(unchecked)
        return run.findings(sources, primitives, manifest, across=False, every_pair=0)


def plane_batch(options, vertices, ring_start, part_ring, ia, ib, band):
    """`gjkcli.engine.plane.batch` of pairs (ia, ib) of the packed parts
    (`gjkcli.engine.plane.PartSet.from_arrays`'s arrays), each within its band, in chunks on the
    cluster at `options.dask`: the 2D run's narrow phase (`gjkcli.pipeline.flat.FlatRun.narrow`).
    The parts go to every worker once; each task packs them for the core and answers its chunk;
    the answers come back in the pairs' order, the same as one process's."""
    from gjkcli.engine.plane import PlaneBatchResult

    with connect(options.dask, options.dask_timeout, quiet=not options.strict) as client:
        workers = max(1, len(client.nthreads()))
        size = max(PAIR_CHUNK, -(-len(ia) // (4 * workers)))
        arrays = client.scatter((vertices, ring_start, part_ring), broadcast=True)
        futures = [client.submit(_plane_chunk, arrays, ia[a:a + size], ib[a:a + size],
                                 band[a:a + size], pure=False)
                   for a in range(0, len(ia), size)]
        try:
            done = client.gather(futures)
        except GjkError:
            raise
        except Exception as exc:  # noqa: BLE001 - KilledWorker, CancelledError, a lost scheduler
            raise ClusterError(f"the Dask cluster at {options.dask} could not finish the scan: "
                               f"{type(exc).__name__}: {one_line(exc)}") from exc
    if len(done) == 1:
        return done[0]
    return PlaneBatchResult(**{f.name: np.concatenate([getattr(d, f.name) for d in done])
                               for f in dataclasses.fields(PlaneBatchResult)})


def _plane_chunk(arrays, ia, ib, band):
    from gjkcli.engine import plane

    packed = plane.PartSet.from_arrays(*arrays)
    return plane.batch(packed, ia, ib, tolerance=band, want="verdict")


# -- the run on a cluster --------------------------------------------------------------------------


class _ClusterRun(Run):
    """`Run` with loading, hulls, the broad and the narrow phase on the cluster's workers."""

    def __init__(self, options, progress):
        super().__init__(options, "scan", progress)
        self.client = None
        self._loads: list = []  # futures of the load tasks, kept while tiles read them
        self._where = None  # (n, 2) int64: (source, position in its load result) per object
        self._primitives = None  # _PackedShapes of the manifest's primitives
        self._batch = None

    def load_parts(self, sources, primitives, manifest) -> Parts:
        from gjkcli.scene.objects import assemble

        o = self.options
        t = time.perf_counter()
        lim = o.limits or limits.DEFAULT
        self._loads = [self.client.submit(_load, s, o.strict, lim, key=f"gjk-load-{k}-{_token()}")
                       for k, s in enumerate(sources)]
        loaded = self._results(self._loads, "load")
        t = self.stage("load", t)

        answers = [got.problem if got.problem is not None else got.geometries() + got.skipped
                   for got in loaded]
        geoms = assemble(answers, primitives, manifest, problems=self.problems, notes=self.notes)
        self.one_unit(geoms, convert=False)  # the run's unit; the hulls are the workers'
        n = len(geoms)
        shapes: list = []
        lo, hi, gap = np.empty((n, 3)), np.empty((n, 3)), np.zeros(n)
        where = np.empty((n, 2), dtype=np.int64)
        k = 0
        for s, got in enumerate(loaded):
            if got.problem is not None:
                continue
            m = got.count
            shapes.extend(got.shapes.unpack())
            lo[k:k + m], hi[k:k + m], gap[k:k + m] = got.lo, got.hi, got.gap
            where[k:k + m, 0], where[k:k + m, 1] = s, np.arange(m)
            k += m
        prims = [g.primitive for g in geoms[k:]]
        for p, g in enumerate(geoms[k:]):
            lo[k + p], hi[k + p] = g.primitive.bounds
        where[k:, 0], where[k:, 1] = len(loaded), np.arange(n - k)
        shapes.extend(prims)
        self._primitives = _PackedShapes.pack(prims)
        parts, keep = Parts.assemble(geoms, shapes, lo, hi, gap, self.problems)
        self._where = where[keep]
        self.stage("hulls", t)
        return parts

    def candidates(self, parts: Parts, resolved, across: bool, every_pair: int):
        """The tiles' pairs and their verdicts, in the order of one process's broad phase."""
        from gjkcli.engine.results import BatchResult
        from gjkcli.scene.broadphase import grown_bounds

        n = parts.n
        empty = np.zeros(0, dtype=np.int64)
        if n < 2:
            self._release()
            return empty, empty, np.zeros(0), 0
        if self.options.all_pairs and not self._passing:  # the tiles' pairs only: one process lists the others too
            count = n * (n - 1) // 2
            self.notes.append(stages.parted_note(count) if count > stages.ALL_PAIRS_UP_TO else
                              "on a Dask cluster, --all-pairs lists the pairs whose boxes come "
                              "within reach; the others are clear by their boxes")
        glo, ghi = grown_bounds(parts.lo, parts.hi, self.grow(parts, resolved))
        grid = _Grid.fit(glo, ghi, self._tile_count(n))
        tile_ids, members = grid.assign(glo, ghi)
        checks = [(a, b) for a, b, _, _ in resolved.checks] if resolved is not None and resolved.checks else []
        futures = []
        for tile, ids in zip(tile_ids.tolist(), members):
            src, pos = self._where[ids, 0], self._where[ids, 1]
            packs = []
            for s in np.unique(src).tolist():
                at = pos[src == s]
                if s == len(self._loads):
                    packs.append(self._primitives.take(at))
                else:
                    packs.append(self.client.submit(_pick, self._loads[s], at,
                                                    key=f"gjk-pick-{tile}-{s}-{_token()}"))
            sets = [(a[ids], b[ids]) for a, b in checks]
            futures.append(self.client.submit(
                _tile, grid, tile, ids, glo[ids], ghi[ids], sets, self.options.tolerance, *packs,
                key=f"gjk-tile-{tile}-{_token()}"))
        done = self._results(futures, "narrow")
        self._release()
        i = np.concatenate([d[0] for d in done])
        j = np.concatenate([d[1] for d in done])
        candidates = sum(d[2] for d in done)
        order = np.lexsort((j, i))  # pairs read in the objects' order, as one process reads them
        i, j = i[order], j[order]
        if len(i):
            fields = [f.name for f in dataclasses.fields(BatchResult)]
            self._batch = BatchResult(**{name: np.concatenate([d[3][name] for d in done if len(d[0])])[order]
                                         for name in fields})
        keep = self.own_worlds(parts, i, j) if len(i) else None  # each file its own world
        if keep is not None:  # those pairs are no candidates, as in one process
            candidates -= int(np.count_nonzero(~keep))
            i, j = i[keep], j[keep]
            self._batch = BatchResult(**{f.name: getattr(self._batch, f.name)[keep]
                                         for f in dataclasses.fields(BatchResult)})
        if parts.owned and len(i):  # a link's elements are one object: never checked against each other
            keep = ~elements.same_object(parts.owner_ids, i, j)
            i, j = i[keep], j[keep]
            self._batch = BatchResult(**{f.name: getattr(self._batch, f.name)[keep]
                                         for f in dataclasses.fields(BatchResult)})
        i, j, clearance = self.select(resolved, i, j)  # the tiles kept only selected pairs
        if self.sets is not None and self.sets.tolerance(None) is not None:
            from gjkcli.errors import InputError

            raise InputError("--dask", "a [[check]] with its own tolerance is not scanned on a Dask "
                                       "cluster (the tiles answer at the run's band); scan without --dask")
        return i.astype(np.int64), j.astype(np.int64), clearance, candidates

    def narrow(self, parts: Parts, i, j):
        """The tiles' verdicts (`_candidates` gathered them with the pairs)."""
        return self._batch if len(i) else None

    def _tile_count(self, n: int) -> int:
        workers = max(1, len(self.client.nthreads()))
        return max(TILES_PER_WORKER * workers, -(-n // TILE_OBJECTS))

    def _results(self, futures: list, stage: str) -> list:
        """The futures' results in order, the progress told as each completes.

        Never waits forever: a cluster without a worker, or a scheduler out of reach, for longer
        than the connect time-out is a ClusterError, and so is a task the cluster could not run
        (its workers died too often: Dask's KilledWorker).
        """
        from distributed import as_completed

        total = len(futures)
        self.tell(stage, 0, total)
        try:
            pending = as_completed(futures, loop=self.client.loop)
            done, stranded, checked = 0, None, 0.0
            while not pending.is_empty():
                if pending.has_ready():
                    done += len(pending.next_batch(block=False))
                    self.tell(stage, done, total)
                    continue
                now = time.monotonic()
                if now - checked >= _WATCH_EVERY:
                    checked = now
                    alive = self.client.status == "running" and len(self.client.nthreads()) > 0
                    stranded = None if alive else (stranded or now)
                    if stranded is not None and now - stranded > self.options.dask_timeout:
                        raise ClusterError(
                            f"the Dask cluster at {self.options.dask} has had no worker (or no "
                            f"scheduler) for {self.options.dask_timeout:g} s; the scan stopped")
                time.sleep(0.02)
            return [f.result() for f in futures]
        except GjkError:
            raise  # an input error of --debug's strict mode, raised on a worker
        except Exception as exc:  # noqa: BLE001 - KilledWorker, CancelledError, a lost scheduler
            raise ClusterError(f"the Dask cluster at {self.options.dask} could not finish the scan: "
                               f"{type(exc).__name__}: {one_line(exc)}") from exc

    def _release(self) -> None:
        for f in self._loads:
            f.release()
        self._loads = []


def _token() -> str:
    import uuid

    return uuid.uuid4().hex


# -- tasks on the workers ----------------------------------------------------------------------------


def _load(source, strict: bool, lim) -> "_Loaded":
    """One source read, its objects' hulls and hull gaps (`gjkcli.pipeline.stages.hulls`, the
    prepared scene's, as in one process): packed in flat arrays. A robot's primitive links
    (a box, cylinder or sphere in the URDF) travel as their shapes."""
    from gjkcli.scene.objects import read_source, split_problems

    with limits.active(lim):
        got = read_source(source, strict)
    if isinstance(got, Problem):
        return _Loaded(problem=got)
    got, skipped = split_problems(got)
    shapes, lo, hi, gap = hulls(got)
    return _Loaded(
        meta=[(g.name, g.file, g.units, g.watertight, g.bodies, g.element, g.owner, g.eps, g.brep,
               g.instance) for g in got],
        skipped=skipped,
        vertices=_Ragged.pack([g.vertices for g in got]), faces=_Ragged.pack([g.faces for g in got]),
        shapes=_PackedShapes.pack(shapes), lo=lo, hi=hi, gap=gap,
        primitive=np.array([g.primitive is not None for g in got], dtype=bool))


def _pick(loaded: "_Loaded", positions) -> "_PackedShapes":
    """The hulls of some of a source's objects (for a tile), still packed."""
    return loaded.shapes.take(positions)


def _tile(grid: "_Grid", tile: int, ids, glo, ghi, sets, tolerance, *packs):
    """A tile's pairs and their verdicts: (i, j) global indices, i < j, the tile's broad-phase
    pair count before selections, and the batch call's fields (name -> (m,) array).

    ids : (k,) int64 the tile's objects, ascending; glo, ghi : (k, 3) their grown boxes;
    sets : [(in_a, in_b)] the manifest's [[check]] selections over the tile's objects;
    packs : _PackedShapes of the objects, in the order of ids.
    """
    from gjkcli.engine.query import batch
    from gjkcli.engine.shapes import ShapeSet
    from gjkcli.scene.broadphase import candidate_pairs, select_pairs

    li, lj = candidate_pairs(glo, ghi)  # the boxes are grown already
    # the pair's canonical point: the lower corner of the two grown boxes' intersection
    own = grid.tile_of(np.maximum(glo[li], glo[lj])) == tile
    li, lj = li[own], lj[own]
    candidates = len(li)
    if sets:
        keep = select_pairs(li, lj, sets)
        li, lj = li[keep], lj[keep]
    fields: dict = {}
    if len(li):
        shapes = ShapeSet([s for p in packs for s in p.unpack()])
        done = [batch(shapes, li[a:a + PAIR_CHUNK], lj[a:a + PAIR_CHUNK], tolerance=tolerance,
                      want="verdict") for a in range(0, len(li), PAIR_CHUNK)]
        fields = {f.name: np.concatenate([getattr(d, f.name) for d in done])
                  for f in dataclasses.fields(done[0])}
    return ids[li], ids[lj], candidates, fields


# -- the grid of tiles -------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Grid:
    """A regular grid of tiles over a box: origin (3,), cell (3,) > 0, counts (3,) int."""

    origin: np.ndarray
    cell: np.ndarray
    counts: np.ndarray

    @classmethod
    def fit(cls, glo, ghi, target: int) -> "_Grid":
        """About `target` cubic-ish tiles over the boxes' bounding box (one along a flat axis)."""
        origin = glo.min(axis=0)
        extent = ghi.max(axis=0) - origin
        solid = extent > 0
        counts = np.ones(3, dtype=np.int64)
        if solid.any():
            side = (np.prod(extent[solid]) / target) ** (1.0 / solid.sum())
            counts[solid] = np.clip(np.round(extent[solid] / side), 1, target).astype(np.int64)
        cell = np.where(solid, extent / counts, 1.0)
        return cls(origin, cell, counts)

    def cells(self, x) -> np.ndarray:
        """(m, 3) int64 the cell of each point (m, 3): monotone in every coordinate."""
        return np.clip(np.floor((x - self.origin) / self.cell), 0, self.counts - 1).astype(np.int64)

    def tile_of(self, x) -> np.ndarray:
        c = self.cells(x)
        return (c[:, 0] * self.counts[1] + c[:, 1]) * self.counts[2] + c[:, 2]

    def assign(self, glo, ghi) -> tuple[np.ndarray, list]:
        """(tile numbers, [ids ascending per tile]): each object in every tile its box meets.

        An object's cells run from its box's lower corner's to its upper corner's; a point of
        the box lies in one of them, since `cells` is monotone, so a pair's canonical point
        (inside both boxes) lies in a tile both objects are in.
        """
        c0, c1 = self.cells(glo), self.cells(ghi)
        span = c1 - c0 + 1
        many = np.prod(span, axis=1)
        obj = np.repeat(np.arange(len(glo)), many)
        r = np.arange(many.sum()) - np.repeat(np.cumsum(many) - many, many)
        sy, sz = span[obj, 1], span[obj, 2]
        cx = c0[obj, 0] + r // (sy * sz)
        cy = c0[obj, 1] + (r // sz) % sy
        cz = c0[obj, 2] + r % sz
        tile = (cx * self.counts[1] + cy) * self.counts[2] + cz
        order = np.lexsort((obj, tile))
        tile, obj = tile[order], obj[order]
        cuts = np.flatnonzero(np.diff(tile)) + 1
        starts = np.concatenate([[0], cuts])
        return tile[starts], np.split(obj, cuts)


# -- objects as flat arrays --------------------------------------------------------------------------


@dataclass
class _Ragged:
    """Arrays of one dtype and row shape end to end: item k is data[off[k]:off[k + 1]], or None
    where `none[k]`. Arrays of mixed dtypes or shapes stay a list."""

    data: object
    off: np.ndarray | None
    none: np.ndarray

    @classmethod
    def pack(cls, arrays) -> "_Ragged":
        arrays = list(arrays)
        none = np.array([a is None for a in arrays], dtype=bool)
        real = [a for a in arrays if a is not None]
        if len({(a.dtype, a.shape[1:]) for a in real}) > 1:
            return cls(arrays, None, none)
        lengths = np.array([0 if a is None else len(a) for a in arrays], dtype=np.int64)
        off = np.concatenate([[0], np.cumsum(lengths)])
        data = np.concatenate(real) if real else np.zeros(0)
        return cls(data, off, none)

    def __len__(self) -> int:
        return len(self.none)

    def __getitem__(self, k: int):
        if self.off is None:
            return self.data[k]
        return None if self.none[k] else self.data[self.off[k]:self.off[k + 1]]

    def take(self, positions) -> "_Ragged":
        return _Ragged.pack([self[k] for k in np.asarray(positions).tolist()])


@dataclass
class _PackedShapes:
    """Shapes (or the ShapeErrors that stand for them) as arrays: their kinds, hull vertices,
    CSR adjacency, hull faces, dimensions, inflation, poses and cold-start tables."""

    errors: list  # str where the shape is a ShapeError, else None
    kind: list
    vertices: _Ragged
    adj_start: _Ragged
    adj: _Ragged
    faces: _Ragged
    cube: _Ragged
    dimension: np.ndarray
    dims: np.ndarray
    radius: np.ndarray
    rotation: np.ndarray
    translation: np.ndarray
    extent: np.ndarray
    size: np.ndarray

    @classmethod
    def pack(cls, shapes) -> "_PackedShapes":
        from gjkcli.engine.shapes import Shape

        shapes = list(shapes)
        stand_in = Shape.point((0.0, 0.0, 0.0))
        real = [stand_in if isinstance(s, ShapeError) else s for s in shapes]
        return cls(
            errors=[str(s) if isinstance(s, ShapeError) else None for s in shapes],
            kind=[s.kind for s in real],
            vertices=_Ragged.pack([s.vertices for s in real]),
            adj_start=_Ragged.pack([s.adj_start for s in real]),
            adj=_Ragged.pack([s.adj for s in real]),
            faces=_Ragged.pack([s.faces for s in real]),
            cube=_Ragged.pack([s._cube for s in real]),
            dimension=np.array([s.dimension for s in real], dtype=np.int64),
            dims=np.array([s.dims for s in real], dtype=np.float64).reshape(-1, 3),
            radius=np.array([s.radius for s in real], dtype=np.float64),
            rotation=np.array([s.rotation for s in real], dtype=np.float64).reshape(-1, 3, 3),
            translation=np.array([s.translation for s in real], dtype=np.float64).reshape(-1, 3),
            extent=np.array([s._extent for s in real], dtype=np.float64),
            size=np.array([s._size for s in real], dtype=np.float64))

    def __len__(self) -> int:
        return len(self.kind)

    def unpack(self) -> list:
        """The Shapes, as they were packed (bit for bit)."""
        from gjkcli.engine.shapes import Shape

        out: list = []
        for k in range(len(self)):
            if self.errors[k] is not None:
                out.append(ShapeError(self.errors[k]))
                continue
            out.append(Shape(self.kind[k], self.vertices[k], self.adj_start[k], self.adj[k],
                             self.faces[k], int(self.dimension[k]), self.dims[k].copy(),
                             float(self.radius[k]), self.rotation[k].copy(), self.translation[k].copy(),
                             float(self.extent[k]), float(self.size[k]), self.cube[k]))
        return out

    def take(self, positions) -> "_PackedShapes":
        at = np.asarray(positions, dtype=np.int64)
        listed = at.tolist()
        return _PackedShapes(
            errors=[self.errors[k] for k in listed], kind=[self.kind[k] for k in listed],
            vertices=self.vertices.take(at), adj_start=self.adj_start.take(at),
            adj=self.adj.take(at), faces=self.faces.take(at), cube=self.cube.take(at),
            dimension=self.dimension[at], dims=self.dims[at], radius=self.radius[at],
            rotation=self.rotation[at], translation=self.translation[at], extent=self.extent[at],
            size=self.size[at])


@dataclass
class _Loaded:
    """A load task's answer: a Problem, or the source's objects and their hulls as arrays.

    meta : [(name, file, units, watertight, bodies, IFC element, owner, eps, brep, instance)] per
    object (a STEP part's tessellation error, where its exact solids are and its product's shared
    mesh and pose: the client refines its pairs on them as one process does); vertices,
    faces : their meshes (None for a primitive); shapes : their hulls (a primitive's own shape);
    lo, hi : (n, 3) hull bounds; gap : (n,) hull gaps; primitive : (n,) bool the object is a
    primitive (a robot's box, cylinder or sphere link); skipped : a Problem per IFC element whose
    geometry failed
    """

    problem: Problem | None = None
    meta: list = dataclasses.field(default_factory=list)
    skipped: list = dataclasses.field(default_factory=list)
    vertices: _Ragged | None = None
    faces: _Ragged | None = None
    shapes: _PackedShapes | None = None
    lo: np.ndarray | None = None
    hi: np.ndarray | None = None
    gap: np.ndarray | None = None
    primitive: np.ndarray | None = None

    @property
    def count(self) -> int:
        return len(self.meta)

    def geometries(self) -> list:
        from gjkcli.scene.objects import Geometry

        at = np.flatnonzero(self.primitive).tolist()
        primitives = dict(zip(at, self.shapes.take(at).unpack())) if at else {}
        return [Geometry(name=name, file=file, vertices=self.vertices[k], faces=self.faces[k],
                         units=units, watertight=watertight, bodies=bodies, element=element,
                         owner=owner, primitive=primitives.get(k), eps=eps, brep=brep,
                         instance=instance)
                for k, (name, file, units, watertight, bodies, element, owner, eps, brep, instance)
                in enumerate(self.meta)]
