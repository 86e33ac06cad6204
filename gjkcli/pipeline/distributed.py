"""`gjk scan --dask ADDRESS`: the scan of `gjkcli.pipeline.run` on a dask.distributed cluster,
with the same findings as one process.

The run is `gjkcli.pipeline.stages.Run`'s, stage for stage. The parts (meshes, hulls, triangle
hierarchies, STEP's exact solids) stay on the workers that read them, as the answers of the load
tasks; the client holds the objects' names, boxes and what their readers say, the pairs and the
findings. The tasks themselves are in `gjkcli.pipeline.worktasks`.

1. **Loading and hulls**, one task per source (a scene file, a whole-file object), or several
   for a large file when the sources are few (`_ClusterRun._split`: shares of an IFC model's
   elements or of a STEP assembly's products, ranges of a glTF's nodes): the task reads it and builds its
   objects' hulls and hull gaps, packed in flat arrays. Its answer stays on its worker; the client receives its summary
   (`worktasks.Summary`) and names the objects as `gjkcli.scene.objects.gather` does.
2. **Broad and narrow phase by spatial tiles**: a grid cuts the bounding box of the objects'
   boxes, each grown as the run grows it for its broad phase (half the clearance, the touching
   band, a hair of the scene). An object goes to every tile its grown box meets: each tile
   sees the objects within a halo of its border as wide as their reach. Two objects are a
   candidate pair when their grown boxes overlap; the pair belongs to the one tile that holds
   the lower corner of the two boxes' intersection, a point inside both boxes, so both objects
   are in that tile and every other tile that sees the pair drops it: each pair is checked
   exactly once. A tile's task takes its objects' hulls as picks of step 1's answers (a small
   task per source, on the worker that holds it; Dask moves the picks; where the loads are
   small, WHOLE_LOADS_BYTES, the task takes the answers whole and picks them itself), runs the
   broad phase, the manifest's [[check]] selections and the engine's batch call. Its answer
   stays on its worker: the client receives the pairs and the facts the policy reads
   (`worktasks.tile_facts`), and the rest of a pair's answer (its vectors and certificate) only
   where a finding may be the hulls' answer (`_ClusterRun.whole_answers`).
3. **Refinement where the parts are**: the client runs the policy on the tiles' verdicts, in
   the order one process reads the pairs; the pairs it sends to the triangles, to STEP's exact
   solids and to the overlap volumes go to tasks by the tile that owns them (`_on_workers`),
   each given its parts as picks of step 1's answers, as the tiles are; the convexity reasons
   of the parts of the pairs a report may list asked as soon as the hulls' verdicts say which
   (`listed_known`), the others where the findings list more (`objects`). The triangles'
   answers stay on the workers: the client receives their facts, and a report fetches them in
   pages as it writes them (`_WorkerAnswers`; the command line keeps the cluster up until its
   reports are written: `gjkcli.pipeline.stages.reporting`). Allowed pairs, the
   baseline and the findings are `Run`'s.

4. **Pictures**: when --png or --html asks for them (`Options.pictures`), the client fetches
   the triangles of the parts they draw, and only those (`_Pictured`), before the cluster
   closes.

A robot at many poses runs in chunks of poses (`pose_runs`; among other objects,
`scene_pose_runs`), the motions of its trajectory in
ranges of waypoints (`segment_runs`); a 2D run's narrow phase in chunks of pairs (`plane_batch`).

A worker lost mid-scan loses its results; Dask re-runs the tasks that made them (a load task
is a function of its file, every later task of the load tasks' answers), so the scan completes.
A scheduler out of reach is a `ClusterError` after the connect time-out.

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
from gjkcli.engine.results import BatchResult, Status
from gjkcli.errors import GjkError, Problem, one_line
from gjkcli.mesh import cad_process
from gjkcli.pipeline import elements, stages, workerserver, worktasks
from gjkcli.pipeline.findings import LazyRecords, ObjectRecord
from gjkcli.pipeline.stages import PAIR_CHUNK, Parts, Run, reporting_scope

__all__ = ["scan_on_cluster", "connect", "parse_address", "ClusterError", "LOCAL_WORKERS"]

# `local` without a count: a LocalCluster of this many worker processes.
LOCAL_WORKERS = 2
# Tiles: at least this many per worker (so that a slow or lost worker's share is small), and
# at most about this many objects per tile (so that a tile's arrays stay small to send).
TILES_PER_WORKER = 4
TILE_OBJECTS = 20_000
# Files this large or larger are read in several tasks when the scan has fewer files than
# LOAD_TASKS_PER_WORKER a worker (`_ClusterRun._split`): an IFC model (each task opens it and
# meshes a share of its elements: about 0.4 s of parsing per task on a 4 MB model), a glTF or
# GLB (each task reads its meshes and places a range of its nodes). A glTF is read in at most
# GLTF_TASKS_PER_WORKER tasks a worker: each task needs the whole document (its JSON, its nodes'
# world transforms), which a worker process parses once and keeps for its next range
# (`gjkcli.mesh.gltf.read_share`) until the files are loaded (`_forget_documents`).
IFC_SPLIT_FROM_BYTES = 1 << 20
# A STEP assembly this large or larger likewise, each task reading the file with OpenCASCADE
# and meshing a share of its products: the other workers would otherwise wait, then read the
# file for the pairs refined there (benchmarks/bench_dask.py's STEP rows, split and in one
# task, `--step FILE` for others: the split gains down to the 100 KB AS1).
STEP_SPLIT_FROM_BYTES = 64 << 10
GLTF_SPLIT_FROM_BYTES = 8 << 20
LOAD_TASKS_PER_WORKER = 2
GLTF_TASKS_PER_WORKER = 2
# A robot's poses (--poses, --trajectory's waypoints) in this many chunks a worker.
POSE_CHUNKS_PER_WORKER = 2
# Pairs per refinement or overlap task, at most (a tile's pairs are cut into tasks of this many).
WORK_PAIRS = 1024
# A stage's pair work (the refinement, STEP's exact solids, the overlap volumes) in about this
# many tasks a worker, cut by their estimated cost (`_ClusterRun._work_chunks`); a pair costs its
# parts' triangles and this many more.
WORK_TASKS_PER_WORKER = 4
PAIR_WORK_FACES = 64
# Dask's priorities (a higher one runs first among the tasks ready): the overlap volumes, which
# the client waits for, ahead of the reasons asked ahead (`listed_known`), which a report reads last.
OVERLAP_PRIORITY = 1
AHEAD_PRIORITY = -1
# The reasons asked ahead in tasks of at most this many objects (and at least AHEAD_PARTS_MIN,
# in about AHEAD_TASKS_PER_WORKER tasks a worker): a worker that takes one while the
# refinement's parts are picked is free again for the refinement within tens of milliseconds.
AHEAD_TASKS_PER_WORKER = 8
AHEAD_PARTS_MIN = 128
# Loads whose meshes come to at most this many bytes in all (vertices and faces, as the
# summaries count them) are taken whole by the tasks that read their parts (each task picks its
# own; Dask moves a load to a worker once): no pick task per tile and load, nor their
# transfers. Larger scenes pick (a worker never holds every load).
WHOLE_LOADS_BYTES = 128 * 2**20
# A report fetches the refinement's answers from the workers in pages of this many pairs, in its
# order (`_WorkerAnswers`: about 0.4 MB of them), this many pages asked for ahead of the one it
# writes (the workers keep them until fetched).
ANSWER_PAGE = 2048
AHEAD_PAGES = 3
# The pictures' triangles (`_Pictured`): at most this many objects, or triangles, a fetch.
FETCH_OBJECTS = 256
FETCH_TRIANGLES = 2_000_000
# While waiting for tasks, how often to ask the scheduler whether any worker is left (seconds).
_WATCH_EVERY = 1.0
# glibc's mallopt parameter for the number of malloc arenas (malloc.h).
_M_ARENA_MAX = -8


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
    _one_arena()
    try:
        from distributed import Client, Nanny, SpecCluster
    except ImportError:
        raise ClusterError(f"a scan on a Dask cluster ({address}) needs dask.distributed, which is "
                           f"not installed: pip install 'gjk[dask]'") from None
    import dask

    # no copy of the last thousand messages to the scheduler kept for Dask's developers (the
    # client's stream's log): they are the tasks' specifications, arguments and all
    with _quiet_dask(quiet), _forked_workers(workers is not None), \
            dask.config.set({"distributed.admin.low-level-log-length": 0}):
        cluster = None
        try:
            if workers is not None:
                # no memory limit: a paused worker would stall the scan (the machine's memory
                # is the limit, as for one process); logs below errors stay in the workers
                level = logging.CRITICAL if quiet else logging.WARNING
                worker = {"cls": Nanny, "options": {
                    "host": "127.0.0.1", "protocol": "tcp://", "nthreads": 1, "memory_limit": 0,
                    "dashboard": False, "dashboard_address": None, "silence_logs": level}}
                cluster = SpecCluster(scheduler=_scheduler_process(level, timeout),
                                      workers={n: worker for n in range(workers)}, silence_logs=level)
                # answers fetched from the workers themselves (local processes, in reach), not
                # through the scheduler (each answer crossed its event loop twice when it ran
                # in this process). A scheduler's address keeps Dask's default: its workers may
                # be out of the client's reach.
                client = Client(cluster, timeout=timeout, set_as_default=False, direct_to_workers=True)
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


def _one_arena() -> None:
    """The client's threads allocate from one malloc arena (glibc's mallopt M_ARENA_MAX, set
    before the Client starts its event loop's thread): that thread receives every answer of the
    workers, and with an arena of its own (glibc gives each thread one) what it freed stayed in
    it, the process's resident memory holding the peak of both arenas. Nothing where the C
    library is not glibc."""
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (AttributeError, OSError):  # not glibc (musl, macOS)
        return
    mallopt(_M_ARENA_MAX, 1)


def _scheduler_process(log_level: int, timeout: float) -> dict:
    """The scheduler of a `local[:N]` cluster (a SpecCluster's spec of it), in a process of its
    own (`workerserver.serve_scheduler`), forked as the workers are: LocalCluster runs it in the
    client's process, where its state (every task's specification, its messages with the
    workers) grew with the scan, beside the client's own, and its event loop took the
    client's interpreter lock. Ended when the cluster closes, or when this process ends."""
    import asyncio

    from distributed.deploy.spec import ProcessInterface
    from distributed.utils import get_mp_context

    class ForkedScheduler(ProcessInterface):
        async def start(self) -> None:
            context = get_mp_context()
            self.pipe, child = context.Pipe()
            self.process = context.Process(target=workerserver.serve_scheduler, args=(child, log_level),
                                           name="gjk-dask-scheduler", daemon=True)
            self.process.start()
            child.close()
            loop = asyncio.get_running_loop()
            if not await loop.run_in_executor(None, self.pipe.poll, timeout):
                raise TimeoutError(f"no scheduler within {timeout:g} s")
            try:
                self.address = self.pipe.recv()
            except EOFError:
                raise RuntimeError("the scheduler's process ended as it started") from None
            await super().start()

        async def close(self) -> None:
            self.pipe.close()
            loop = asyncio.get_running_loop()
            await loop.run_in_executor(None, self.process.join, timeout)
            if self.process.is_alive():
                self.process.kill()
                await loop.run_in_executor(None, self.process.join)
            await super().close()

    return {"cls": ForkedScheduler, "options": {}}


# What a LocalCluster's worker processes import before their first task (`_forked_workers`).
WORKER_MODULES = workerserver.WORKER_MODULES


@contextlib.contextmanager
def _forked_workers(local: bool):
    """Within the block, a LocalCluster's worker processes (and a nanny's restart of one) are
    forked from one server process that imported WORKER_MODULES once (multiprocessing's
    forkserver, `gjkcli.pipeline.workerserver`; started as the command started where its
    command line asked for the cluster), instead of each started afresh (distributed's default,
    spawn) and importing Python, distributed, NumPy and gjk by itself: on a machine with as many
    cores as workers, those imports took the cores the scan needed. Nothing changes for a
    scheduler's address (its workers are started elsewhere) or where forkserver is not
    available."""
    import multiprocessing

    if not local or "forkserver" not in multiprocessing.get_all_start_methods():
        yield
        return
    import dask
    from distributed.utils import get_mp_context

    with workerserver.server_env(), \
            dask.config.set({"distributed.worker.multiprocessing-method": "forkserver"}):
        # distributed names its own modules once (the first call); a server not yet running
        # starts with the first worker, importing these
        workerserver.preload(get_mp_context())
        yield


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
    scope = reporting_scope()
    with contextlib.ExitStack() as here:
        # where a report reads the findings while the cluster is up, it closes after the report
        client = (here if scope is None else scope).enter_context(
            connect(options.dask, options.dask_timeout, quiet=not options.strict))
        if scope is not None:
            scope.callback(run.release_answers)
            run.reported = True
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


def pose_runs(options, source, srdf, run_options, poses):
    """(a Findings per pose, the allowed link pairs) of a robot prepared once
    (`gjkcli.pipeline.poses.Prepared.runs`) at the poses (n, d), in chunks of consecutive poses
    on the cluster at `options.dask` (POSE_CHUNKS_PER_WORKER a worker), each task preparing the
    robot itself; the object records made once, at the first pose, with the convexity reasons of
    the objects of every chunk's findings, as one process makes them. None when the robot
    cannot be prepared (the per-pose run then reports it)."""
    with connect(options.dask, options.dask_timeout, quiet=not options.strict) as client:
        workers = max(1, len(client.nthreads()))
        n = len(poses)
        bounds = np.linspace(0, n, min(n, POSE_CHUNKS_PER_WORKER * workers) + 1).astype(int).tolist()
        futures = [client.submit(worktasks.pose_runs, source, srdf, run_options, poses[a:b],
                                 key=f"gjk-poses-{a}-{_token()}") for a, b in zip(bounds[:-1], bounds[1:])]
        done = _gathered(client, futures, options)
        if any(d is None for d in done):
            return None
        runs = [f for d in done for f in d[0]]
        involved = {name for f in runs for p in f.pairs for name in (p.a, p.b)}
        records = _gathered(client, [client.submit(worktasks.pose_records, source, srdf, run_options,
                                                   poses[:1], involved, key=f"gjk-records-{_token()}")],
                            options)[0]
    index = {r.name: k for k, r in enumerate(records)}
    made: dict = {}  # a Findings a chunk repeats (its poses without findings) stays one
    out = []
    for f in runs:
        if id(f) not in made:
            made[id(f)] = dataclasses.replace(f, objects=records, _index=index)
        out.append(made[id(f)])
    return out, done[0][1]


def scene_pose_runs(options, paths, manifest, variables, poses, task) -> list:
    """A Findings per pose of `poses` (n, d) of a robot scanned among other objects (where the
    robot alone is not prepared once: `pose_runs`), in ranges of consecutive poses on the cluster
    at `options.dask` (POSE_CHUNKS_PER_WORKER a worker), each pose's scan one process's on its
    worker (`task(paths, options, manifest, variables, poses)`: `gjkcli.pipeline.motion.pose_scans`;
    no cache, one core: the worker is the unit), in the poses' order."""
    work = dataclasses.replace(options, dask=None, jobs=1, cache=None, pictures=None)
    with connect(options.dask, options.dask_timeout, quiet=not options.strict) as client:
        workers = max(1, len(client.nthreads()))
        starts, stops = _ranges(len(poses), min(len(poses), POSE_CHUNKS_PER_WORKER * workers))
        futures = [client.submit(task, paths, work, manifest, variables, poses[a:b],
                                 key=f"gjk-scene-poses-{a}-{_token()}") for a, b in zip(starts, stops)]
        return [f for done in _gathered(client, futures, options) for f in done]


def segment_runs(options, scene, poses, task) -> list:
    """The Findings of a robot's motions between consecutive waypoints of `poses` (--trajectory),
    in ranges of consecutive motions on the cluster at `options.dask` (POSE_CHUNKS_PER_WORKER a
    worker), each task building the motion itself (`task(scene, poses, first, last)`:
    `gjkcli.pipeline.motion.segment_findings`); in the waypoints' order, as one process lists
    them."""
    with connect(options.dask, options.dask_timeout, quiet=not options.strict) as client:
        workers = max(1, len(client.nthreads()))
        n = len(poses) - 1
        bounds = np.linspace(0, n, min(n, POSE_CHUNKS_PER_WORKER * workers) + 1).astype(int).tolist()
        futures = [client.submit(task, scene, poses, a, b, key=f"gjk-segments-{a}-{_token()}")
                   for a, b in zip(bounds[:-1], bounds[1:])]
        return [f for done in _gathered(client, futures, options) for f in done]


@contextlib.contextmanager
def sample_collider(address: str, timeout: float, robot, task):
    """(collide(q, pairs), workers): `gjk collision-matrix`'s check of link pairs at the
    sample poses q (n, d), split in one range of consecutive samples a worker of the cluster at
    `address`, each worker building the robot's checker once for the whole sampling
    (`task(token, robot, q, pairs)`: `gjkcli.pipeline.matrix.sample_collisions`); the rows in the samples' order, as one process answers them."""
    from types import SimpleNamespace

    told = SimpleNamespace(dask=address)
    with connect(address, timeout) as client:
        workers = max(1, len(client.nthreads()))
        token = _token()
        [shared] = client.scatter([robot], broadcast=True, hash=False)

        def collide(q, pairs):
            parts = [(a, b) for a, b in zip(*_ranges(len(q), workers)) if b > a]
            futures = [client.submit(task, token, shared, q[a:b], pairs,
                                     key=f"gjk-samples-{a}-{_token()}") for a, b in parts]
            done = _gathered(client, futures, told)
            return np.concatenate(done) if done else np.zeros((0, len(pairs)), dtype=bool)

        yield collide, workers


def _ranges(n: int, parts: int) -> tuple:
    """(starts, stops) of `parts` ranges of about equal length over n items, in order."""
    bounds = np.linspace(0, n, max(1, parts) + 1).astype(int).tolist()
    return bounds[:-1], bounds[1:]


def _gathered(client, futures, options) -> list:
    try:
        return client.gather(futures)
    except GjkError:
        raise
    except Exception as exc:  # noqa: BLE001 - KilledWorker, CancelledError, a lost scheduler
        raise ClusterError(f"the Dask cluster at {options.dask} could not finish the scan: "
                           f"{type(exc).__name__}: {one_line(exc)}") from exc


def _plane_chunk(arrays, ia, ib, band):
    from gjkcli.engine import plane

    packed = plane.PartSet.from_arrays(*arrays)
    return plane.batch(packed, ia, ib, tolerance=band, want="verdict")


# -- the run on a cluster --------------------------------------------------------------------------


class _ClusterRun(Run):
    """`Run` with every stage that touches a part on the cluster's workers: loading and hulls,
    the broad and narrow phase by tiles, the triangle test and the fit-thickness rule, STEP's
    exact solids, the overlap volumes and the convexity reasons. The client holds the objects'
    names, boxes and what their readers say, the pairs and the findings."""

    def __init__(self, options, progress):
        super().__init__(options, "scan", progress)
        self.client = None
        self._loads: list = []  # futures of the load tasks, kept until the findings are made
        self._where = None  # (n, 2) int64: (source, position in its load result) per object
        self._manifest = None  # worktasks.Loaded of the manifest's primitives
        self._batch = None  # the tiles' verdicts: their facts, the rest fetched for some pairs
        self._tiles: list = []  # futures of the tiles' answers, until `whole_answers` reads them
        self._in_tile = None  # (m, 2) int32: each pair's tile and its place in the tile's answer
        self._grid = None  # the tiles' grid and the objects' grown boxes: a pair's tile
        self._glo = None
        self._parts = None  # the client's _ClusterParts, for the pictures' fetches
        self._ahead = None  # (objects, `_per_load_tasks`) of the reasons asked ahead (`listed_known`)
        self._whole = False  # the tasks take whole loads and pick their parts (WHOLE_LOADS_BYTES)
        self._fetched: list = []  # futures of the tasks that have every worker hold each load (`_spread`)
        self._answers: _WorkerAnswers | None = None  # the refinement's, on the workers
        # a report reads the findings while the cluster is up (`gjkcli.pipeline.run.reporting`):
        # the refinement's answers are fetched as it reads them, else before the cluster closes
        self.reported = False

    def findings(self, *args, **kwargs):
        try:
            found = super().findings(*args, **kwargs)
            if self.options.pictures is not None and self._parts is not None and found.dimension == 3:
                found = self._pictured(found)
            if self._answers is not None and not self.reported:  # the cluster closes with the run
                self._answers.fetch_all()
            return found
        finally:
            self._release()

    def release_answers(self) -> None:
        """The refinement's answers let go on the workers (a report read them)."""
        if self._answers is not None:
            self._answers.release()

    def table(self, kind: str):
        """None: the cache is neither read nor written by a scan on a cluster. Its keys are made
        of the parts' triangles and hulls (`gjkcli.pipeline.cache.PartKeys`), which the client
        never holds: keyed by names alone, a moved part would be given the answers of where it
        was (and a kept overlap volume sent the cluster's overlap stage a keyword it has not)."""
        return None

    def _pictured(self, found):
        """The findings with the triangles of the objects their pictures draw, fetched from the
        workers while the cluster is up (`options.pictures` reads them as the pictures do), so
        that they draw each part as one process draws it; the other parts stay on the workers."""
        geometry = _Pictured(self, self._parts)
        found = dataclasses.replace(found, geometry=geometry)
        try:
            self.options.pictures(found)
        finally:
            geometry.close()  # the cluster closes after this run: no more fetching
        return found

    def _triangles_of(self, objects) -> dict:
        """{object: ((n, 3) world vertices, (m, 3) faces) or None} of the objects (ascending
        int64): a mesh's from the worker that holds it (`worktasks.triangles`), a box
        primitive's made here from its shape (None for a curved one), as `Parts.triangles`."""
        from gjkcli.pipeline.pairs import box_triangles

        parts = self._parts
        out: dict = {}
        meshes = []
        for k in objects.tolist():
            if parts.geoms[k].primitive is not None:
                out[k] = box_triangles(parts.shapes[k])
            else:
                meshes.append(k)
        meshes = np.asarray(meshes, dtype=np.int64)
        for rows, got in self._per_load(worktasks.triangles, meshes, "pictures"):
            out.update(zip(rows, got))
        return out

    def load_parts(self, sources, primitives, manifest) -> Parts:
        from gjkcli.scene.objects import assemble

        o = self.options
        t = time.perf_counter()
        lim = o.limits or limits.DEFAULT
        tasks = self._split(sources)  # [(source index, its Source or a share of it)]
        self._loads = [self.client.submit(worktasks.load, share, o.strict, lim, key=f"gjk-load-{k}-{_token()}")
                       for k, (_, share) in enumerate(tasks)]
        # the client receives what the readers know and the hulls' boxes, never a part
        loaded = self._results([self.client.submit(worktasks.summary, f, key=f"gjk-summary-{k}-{_token()}")
                                for k, f in enumerate(self._loads)], "load")
        self._spread(loaded)
        self._forget_documents(tasks)
        t = self.stage("load", t)
        loaded, moved = _in_file_order(tasks, loaded)  # an IFC model's interleaved shares

        answers: list = [[] for _ in sources]  # a source's tasks' objects end to end, then their problems
        for (s, _), got in zip(tasks, loaded):
            if isinstance(answers[s], Problem):
                continue
            answers[s] = got.problem if got.problem is not None else answers[s] + got.geometries(s)
        for (s, _), got in zip(tasks, loaded):
            if not isinstance(answers[s], Problem):
                answers[s] = answers[s] + got.skipped
        geoms = assemble(answers, primitives, manifest, problems=self.problems, notes=self.notes)
        self.one_unit(geoms, convert=False)  # the run's unit; the hulls are the workers'
        n = len(geoms)
        shapes: list = []
        lo, hi, gap, inward = np.empty((n, 3)), np.empty((n, 3)), np.zeros(n), np.zeros(n, dtype=np.uint8)
        counts = np.zeros((n, 2), dtype=np.int64)
        where = np.empty((n, 2), dtype=np.int64)
        k = 0
        for s, got in enumerate(loaded):
            if isinstance(answers[tasks[s][0]], Problem):  # a share of its file failed: the file did
                continue
            m = got.count
            shapes.extend(got.shapes)
            lo[k:k + m], hi[k:k + m], gap[k:k + m], inward[k:k + m] = got.lo, got.hi, got.gap, got.inward
            counts[k:k + m] = got.counts
            where[k:k + m, 0], where[k:k + m, 1] = s, np.arange(m)
            if s in moved:  # the shares' objects joined in the file's order: where each one is
                where[k:k + m] = moved[s]
            k += m
        prims = geoms[k:]
        for p, g in enumerate(prims):
            lo[k + p], hi[k + p] = g.primitive.bounds
        where[k:, 0], where[k:, 1] = len(loaded), np.arange(n - k)
        shapes.extend(g.primitive for g in prims)
        self._manifest = worktasks.Loaded.of_primitives(prims)
        parts, keep = _ClusterParts.assemble(geoms, shapes, lo, hi, gap, inward, self.problems)
        parts.counts = counts[keep]
        self._where = where[keep]
        self._whole = _whole(counts.sum())
        self._parts = parts
        self.stage("hulls", t)
        return parts

    def _spread(self, loaded) -> None:
        """Where the tasks will take the loads whole (`_whole`), every worker fetches each of them
        now, while the client makes the objects and the tiles, instead of at its first tile."""
        workers = list(self.client.nthreads())
        counts = sum(int(got.counts.sum()) for got in loaded if got.counts is not None)
        if len(workers) < 2 or len(self._loads) < 2 or not _whole(counts):
            return
        self._fetched = [self.client.submit(worktasks.held, f, workers=[w], allow_other_workers=False,
                                            key=f"gjk-held-{k}-{n}-{_token()}")
                         for k, f in enumerate(self._loads) for n, w in enumerate(workers)]

    def _split(self, sources) -> list:
        """[(source index, Source)]: a load task per source; a large file, when the
        sources are fewer than LOAD_TASKS_PER_WORKER a worker, read in several tasks, each a
        share of its objects (`gjkcli.mesh.load.read_objects`' share):

        - an IFC model of IFC_SPLIT_FROM_BYTES or more: up to a task per worker, each opening
          the file, meshing its share of the elements (most of an IFC model's time) and building
          their hulls, which stay on that worker with the meshes (a hull is its part's own,
          whatever batch builds it: `gjkcli.engine.shapes.build_hulls`; a map several elements
          place is told by the whole model's count, `Instance.placed`);
        - a glTF or GLB of GLTF_SPLIT_FROM_BYTES or more: up to GLTF_TASKS_PER_WORKER a worker,
          each reading the file's meshes, placing its range of nodes and building their hulls;
        - a STEP assembly of STEP_SPLIT_FROM_BYTES or more: up to a task per worker, each
          reading the file with OpenCASCADE and meshing its share of the products
          (`gjkcli.mesh.cad.shares`), whose exact solids that worker then holds too.
        """
        workers = max(1, len(self.client.nthreads()))
        wanted = -(-LOAD_TASKS_PER_WORKER * workers // max(1, len(sources)))
        out = []
        for k, s in enumerate(sources):
            shares = 1
            kind = s.path.suffix.lower().lstrip(".")
            if wanted > 1 and not s.whole and not s.split_bodies and s.robot is None \
                    and kind in ("ifc", "ifczip", "glb", "gltf", *cad_process.STEP_TYPES):
                try:
                    size = s.path.stat().st_size
                except OSError:  # the load task says what is wrong with it
                    size = 0
                if kind in ("glb", "gltf") and size >= GLTF_SPLIT_FROM_BYTES:
                    shares = min(wanted, GLTF_TASKS_PER_WORKER * workers)
                elif kind in ("ifc", "ifczip") and size >= IFC_SPLIT_FROM_BYTES:
                    shares = min(wanted, workers)
                elif kind in cad_process.STEP_TYPES and size >= STEP_SPLIT_FROM_BYTES \
                        and s.transform is None:  # moved, its solids are not joined in order by their place
                    shares = min(wanted, workers)
            if shares == 1:
                out.append((k, s))
            else:
                out.extend((k, dataclasses.replace(s, share=(n, shares))) for n in range(shares))
        return out

    def _forget_documents(self, tasks) -> None:
        """Once a glTF read in ranges is loaded, its workers drop the documents they kept for
        their next range (`gjkcli.mesh.gltf.forget_documents`): best effort, a lost worker kept
        nothing."""
        if not any(s.share is not None and s.path.suffix.lower() in (".glb", ".gltf")
                   for _, s in tasks):
            return
        from gjkcli.mesh import gltf

        try:
            self.client.run(gltf.forget_documents, on_error="ignore")
        except Exception:  # noqa: BLE001 - the scan goes on; a worker keeps at most two
            pass

    def candidates(self, parts: Parts, resolved, across: bool, every_pair: int):
        """The tiles' pairs and their verdicts, in the order of one process's broad phase."""
        from gjkcli.scene.broadphase import grown_bounds

        n = parts.n
        empty = np.zeros(0, dtype=np.int64)
        if n < 2:
            return empty, empty, np.zeros(0), 0
        if self.options.all_pairs and not self._passing:  # the tiles' pairs only: one process lists the others too
            count = n * (n - 1) // 2
            self.notes.append(stages.parted_note(count) if count > stages.ALL_PAIRS_UP_TO else
                              "on a Dask cluster, --all-pairs lists the pairs whose boxes come "
                              "within reach; the others are clear by their boxes")
        glo, ghi = grown_bounds(parts.lo, parts.hi, self.grow(parts, resolved))
        grid = _Grid.fit(glo, ghi, self._tile_count(n))
        self._grid, self._glo = grid, glo
        tile_ids, members = grid.assign(glo, ghi)
        checks = [(a, b) for a, b, _, _ in resolved.checks] if resolved is not None and resolved.checks else []
        futures = []
        for tile, ids in zip(tile_ids.tolist(), members):
            src, pos = self._where[ids, 0], self._where[ids, 1]
            packs = []
            for s in np.unique(src).tolist():
                at = pos[src == s]
                if s == len(self._loads):
                    packs.append(self._manifest.shapes.take(at))
                elif self._whole:
                    packs.append((self._loads[s], at))
                else:
                    packs.append(self.client.submit(worktasks.pick_hulls, self._loads[s], at,
                                                    key=f"gjk-pick-{tile}-{s}-{_token()}"))
            sets = [(a[ids], b[ids]) for a, b in checks]
            futures.append(self.client.submit(
                worktasks.tile, grid, tile, ids, glo[ids], ghi[ids], sets, self.options.tolerance, *packs,
                order=_packed_order(ids, src), key=f"gjk-tile-{tile}-{_token()}"))
        # the tiles' answers stay on the workers: the client receives their pairs and the facts
        # the policy reads, the rest of a pair's answer only where a finding reads it
        self._tiles = futures
        done = self._results([self.client.submit(worktasks.tile_facts, f, key=f"gjk-facts-{k}-{_token()}")
                              for k, f in enumerate(futures)], "narrow")
        i = np.concatenate([d[0] for d in done])
        j = np.concatenate([d[1] for d in done])
        candidates = sum(d[2] for d in done)
        order = np.lexsort((j, i))  # pairs read in the objects' order, as one process reads them
        i, j = i[order], j[order]
        # each pair's tile and its place in that tile's answer
        self._in_tile = np.stack([np.repeat(np.arange(len(done), dtype=np.int32), [len(d[0]) for d in done]),
                                  np.concatenate([np.arange(len(d[0]), dtype=np.int32) for d in done])], axis=1)[order]
        if len(i):
            self._batch = _joined(done, order)
        keep = self.own_worlds(parts, i, j) if len(i) else None  # each file its own world
        if keep is not None:  # those pairs are no candidates, as in one process
            candidates -= int(np.count_nonzero(~keep))
            i, j = i[keep], j[keep]
            self._kept(keep)
        if parts.owned and len(i):  # a link's elements are one object: never checked against each other
            keep = ~elements.same_object(parts.owner_ids, i, j)
            i, j = i[keep], j[keep]
            self._kept(keep)
        i, j, clearance = self.select(resolved, i, j)  # the tiles kept only selected pairs
        if self.sets is not None and self.sets.tolerance(None) is not None:
            from gjkcli.errors import InputError

            raise InputError("--dask", "a [[check]] with its own tolerance is not scanned on a Dask "
                                       "cluster (the tiles answer at the run's band); scan without --dask")
        return i.astype(np.int64), j.astype(np.int64), clearance, candidates

    def _kept(self, keep: np.ndarray) -> None:
        """The tiles' pairs `keep` (a mask) only."""
        self._in_tile = self._in_tile[keep]
        self._batch = dataclasses.replace(self._batch, **{name: getattr(self._batch, name)[keep]
                                                          for name in worktasks.TILE_FACTS})

    def narrow(self, parts: Parts, i, j):
        """The tiles' verdicts (`candidates` gathered their facts with the pairs)."""
        return self._batch if len(i) else None

    def whole_answers(self, batch, rows):
        """`Run.whole_answers`: the rest of the tiles' answers of the pairs `rows` fetched from
        the tiles' tasks, which are then let go (on the Great Court roof the triangles answer
        every listed pair: 3.2 MB of vectors the client never received)."""
        tiles, at = self._in_tile[rows, 0], self._in_tile[rows, 1]
        asked = []
        for t in np.unique(tiles).tolist():
            mine = np.flatnonzero(tiles == t)
            asked.append((mine, self.client.submit(worktasks.tile_rest, self._tiles[t], at[mine],
                                                   key=f"gjk-rest-{t}-{_token()}")))
        got = self._results([f for _, f in asked], "answers") if asked else []
        for f in self._tiles:
            f.release()
        self._tiles, self._in_tile = [], None
        if not len(rows):
            return batch
        # a quarter of the pairs or more (a listing of convex parts): each field whole, as one
        # process has it, read at no cost (a report reads ten fields a pair); else the fetched
        # rows and where each pair's is
        whole = 4 * len(rows) >= len(batch)
        at = None
        if not whole:
            at = np.full(len(batch), -1, dtype=np.int32 if len(rows) < 1 << 31 else np.int64)
            at[rows] = np.arange(len(rows))
        fields: dict = {}
        for (mine, _), answer in zip(asked, got):
            for name, values in answer.items():
                if name not in fields:
                    fields[name] = np.zeros((len(batch) if whole else len(rows),) + values.shape[1:],
                                            dtype=values.dtype)
                fields[name][rows[mine] if whole else mine] = values
        return dataclasses.replace(batch, **{name: values if whole else _PairRows(at, values)
                                            for name, values in fields.items()})

    # -- the refinement and the overlaps, where the parts are ---------------------------------------

    def _refined(self, parts: Parts, i, j, tolerance, measure, todo) -> "_WorkerAnswers":
        """The triangle test and the fit-thickness rule of the pairs `todo`, on the workers:
        their answers stay there, the client receiving the facts the listing reads
        (`_WorkerAnswers`)."""
        a, b = i[todo], j[todo]
        kept = []

        def task(at, names, li, lj, picks):
            k = todo[at]
            kept.append(self.client.submit(worktasks.refine_pairs, names, li, lj, tolerance[k], measure[k],
                                           *picks, key=f"gjk-refine-{_token()}"))
            return self.client.submit(worktasks.refined_facts, kept[-1], key=f"gjk-refined-{_token()}")

        out = _WorkerAnswers(self)
        for (at, facts), answer in zip(self._on_workers("refine", parts, a, b, task), kept):
            out.add(answer, facts, todo[at])
        self._answers = out
        return out

    def _bounded(self, parts: Parts, i, j, batch, clearance, e, todo, scene=None) -> dict:
        """Tessellated (STEP) pairs on their bounds and exact solids, on the workers (each reads
        the STEP file itself). scene: None (a cluster's run reads no cache: its every pair is
        refined, and each task decides canonical copies over all of them below)."""
        if not len(todo):
            return {}
        a, b = i[todo], j[todo]
        modes = self.sets.modes(self.options.mode) if self.sets is not None else None
        keys = []  # OpenCASCADE's answers are kept per key (`tessellated.decide_all`)
        for x, y in zip(a.tolist(), b.tolist()):
            ga, gb = parts.geoms[x], parts.geoms[y]
            flip = bool(ga.instance and gb.instance and repr(gb.instance.key) < repr(ga.instance.key))
            keys.append(stages.placement_key(*((gb, ga) if flip else (ga, gb))) if ga.brep and gb.brep else None)

        # every task decides the products' canonical copies as the whole run does
        scene = self.exact_groups(parts, i, j, batch, e, todo) or None

        def task(at, names, li, lj, picks):
            k = todo[at]
            return self.client.submit(worktasks.bounded_pairs, self.options, self.units, names, li, lj,
                                      worktasks.sub_batch(batch, k), clearance[k], e[k],
                                      None if modes is None else modes[k], scene, *picks,
                                      key=f"gjk-bounded-{_token()}")

        out = {}
        for at, got in self._on_workers("refine", parts, a, b, task, keys):
            for k, r in got.items():
                out[int(todo[at[k]])] = r
        return dict(sorted(out.items()))

    def _overlaps_of(self, parts: Parts, pairs: list, cap: int, done: int = 0) -> list:
        """The listed collisions with their overlap volumes, up to `cap` of them (the rest with
        the note that says so), computed on the workers; done : collisions before these that
        got their volume. `pairs` is given back, each finding replaced in place (the one it
        replaces let go at once: with both lists held, the Great Court roof's overlap stage grew
        the client by 15 MB, now by 7); the collisions past the cap are noted while the workers
        measure the others."""
        todo, past = [], []
        for at, p in enumerate(pairs):
            if p.status is Status.COLLISION:
                (past if done + len(todo) >= cap else todo).append(at)

        def noted() -> None:  # the collisions past the cap, while the workers measure the others
            beyond = stages.overlap_cap_note(cap)
            for at in past:
                pairs[at] = pairs[at].but(overlap_reason=beyond)

        if not todo:
            noted()
            return pairs
        a = np.array([parts.index[pairs[t].a] for t in todo], dtype=np.int64)
        b = np.array([parts.index[pairs[t].b] for t in todo], dtype=np.int64)

        # the overlap solids themselves only where something reads them: the pictures draw them,
        # grouping places a clash at their centroid (`gjkcli.pipeline.groups.contact`); else they
        # stay on the workers (the Great Court roof's 1,000: 1.9 MB the client held for nothing)
        meshes = (self.options.pictures is not None or self.options.group_within is not None
                  or (self.sets is not None and any(s.group_within is not None for s in self.sets.specs)))

        def task(at, names, li, lj, picks):
            mine = [pairs[todo[k]] for k in at.tolist()]
            volumes = {(p.a, p.b): self._volumes[(p.a, p.b)] for p in mine if (p.a, p.b) in self._volumes}
            return self.client.submit(worktasks.overlap_fields, self.options, self.units, volumes, meshes,
                                      names, mine, *picks, key=f"gjk-overlap-{_token()}",
                                      priority=OVERLAP_PRIORITY)

        keys = [stages.placement_key(ga, gb) if ga.brep and gb.brep else None  # STEP solids' volumes
                for ga, gb in ((parts.geoms[x], parts.geoms[y]) for x, y in zip(a.tolist(), b.tolist()))]
        for at, got in self._on_workers("overlap", parts, a, b, task, keys, meanwhile=noted):
            for k, (volume, reason, mesh) in zip(at.tolist(), got):  # the client's findings, with them
                p = pairs[todo[k]]
                pairs[todo[k]] = p.but(overlap_volume=volume, overlap_reason=reason, overlap_mesh=mesh)
        return pairs

    def _trace(self, parts, a, b):
        """GJK and EPA on the hulls of the pair, step by step, on a worker."""
        ids, picks = self._parts_of(np.unique(np.array([a, b], dtype=np.int64)))
        at = {int(g): k for k, g in enumerate(ids.tolist())}
        future = self.client.submit(worktasks.trace_pair, self.options.tolerance, at[a], at[b], *picks,
                                    key=f"gjk-trace-{_token()}")
        return self._results([future], "trace")[0]

    def objects(self, parts, pairs, counts, i, j, key_of, known):
        """`Run.objects`, the convexity reasons of the listed pairs' parts that are not their
        hulls measured on the workers first (one process measures them when a report reads
        them; the cluster is gone by then). Those `listed_known` asked for were measured meanwhile;
        the others are asked for now."""
        todo = self._reasons_todo(parts, stages.involved(parts, pairs))
        asked, ahead = self._ahead if self._ahead is not None else (np.zeros(0, dtype=np.int64), [])
        self._ahead = None
        wanted = set(todo.tolist())
        rest = self._per_load_tasks(worktasks.reasons, np.setdiff1d(todo, asked))
        for rows, got in self._per_load_answers(ahead + rest, "verdicts"):
            parts.reasons.update((k, reason) for k, reason in zip(rows, got) if k in wanted)
        return super().objects(parts, pairs, counts, i, j, key_of, known)

    def listed_known(self, parts, i, j, listed) -> None:
        """`Run.listed_known`: the convexity reasons of the parts of the pairs a report may list
        (those the triangles or STEP's exact solids then find clear among them) asked of the
        workers at once, in small tasks below the refinement in priority: they are measured in
        the workers' idle moments (while the refinement's first tasks are submitted; its last
        tasks leave a worker idle), not after the refinement while the overlap volumes wait;
        `objects` receives them, and asks for any part the findings list beyond these."""
        at = np.flatnonzero(listed)
        todo = self._reasons_todo(parts, np.unique(np.concatenate([i[at], j[at]])))
        workers = max(1, len(self.client.nthreads()))
        most = max(AHEAD_PARTS_MIN, -(-len(todo) // (AHEAD_TASKS_PER_WORKER * workers)))
        self._ahead = (todo, self._per_load_tasks(worktasks.reasons, todo, priority=AHEAD_PRIORITY, most=most))

    @staticmethod
    def _reasons_todo(parts, involved: np.ndarray) -> np.ndarray:
        """The parts of `involved` whose convexity reason is measured (no primitive, not a hull)."""
        return np.array([k for k in involved.tolist()
                         if parts.geoms[k].primitive is None and not np.isfinite(parts.gap[k])], dtype=np.int64)

    def _per_load(self, task, objects: np.ndarray, stage: str) -> list:
        """[(objects, answer)]: `task(load, rows)` run on the workers once per load task that holds
        some of the objects (their parts stay there), each with the objects it was asked for."""
        return self._per_load_answers(self._per_load_tasks(task, objects), stage)

    def _per_load_tasks(self, task, objects: np.ndarray, priority: int = 0, most: int | None = None) -> list:
        """[(objects, future)]: `_per_load`'s tasks, submitted (at Dask's `priority`); most : at
        most that many objects a task (None: one task a load)."""
        if not len(objects):
            return []
        src, pos = self._where[objects, 0], self._where[objects, 1]
        out = []
        for s in np.unique(src).tolist():
            mine = np.flatnonzero(src == s)
            for piece in np.array_split(mine, 1 if most is None else -(-len(mine) // most)):
                out.append((objects[piece].tolist(),
                            self.client.submit(task, self._loads[s], pos[piece], priority=priority,
                                               key=f"gjk-{task.__name__}-{s}-{_token()}")))
        return out

    def _per_load_answers(self, tasks: list, stage: str) -> list:
        """[(objects, answer)] of `_per_load_tasks`' tasks."""
        if not tasks:
            return []
        return list(zip([rows for rows, _ in tasks], self._results([f for _, f in tasks], stage)))

    def _on_workers(self, stage: str, parts: Parts, a, b, task, keys=None, meanwhile=None,
                    opened: bool = True) -> list:
        """[(positions in a and b, the task's answer)]: the pairs (a[k], b[k]) in groups by the
        tile that owns them, at most WORK_PAIRS each and cut by their cost (`_work_chunks`),
        each group's task given its parts as picks of the load tasks' answers
        (`task(positions, names, local a, local b, picks)`).

        keys : per pair a key (or None): the pairs of one key go to one task, in their order,
        with the first one's tile (what a task measures once per key, as one process does, is
        then the same number). meanwhile : called once the tasks are submitted, before their
        answers are waited for (the client's own work, while the workers run). opened : False
        gives each answer as it travelled (`_results`)."""
        tiles = self._grid.tile_of(np.maximum(self._glo[a], self._glo[b]))
        cost = _pair_costs(parts, a, b)
        if keys is None or all(key is None for key in keys):
            chunks = self._pair_chunks(tiles, cost)
        else:
            units: dict = {}  # tile -> {key or own position: positions, in the pairs' order}
            first: dict = {}
            for k, (t, key) in enumerate(zip(tiles.tolist(), keys)):
                if key is not None:
                    t = first.setdefault(key, t)
                units.setdefault(t, {}).setdefault(("key", key) if key is not None else ("pair", k), []).append(k)
            chunks = self._work_chunks(units, cost)
        groups, futures = [], []
        for chunk in chunks:
            at = np.sort(np.asarray(chunk, dtype=np.int64))
            ids, picks = self._parts_of(np.unique(np.concatenate([a[at], b[at]])))
            sort = np.argsort(ids)
            local = sort[np.searchsorted(ids[sort], a[at])], sort[np.searchsorted(ids[sort], b[at])]
            groups.append(at)
            futures.append(task(at, [parts.names[k] for k in ids.tolist()], *local, picks))
        if meanwhile is not None:
            meanwhile()
        return list(zip(groups, self._results(futures, stage, opened)))

    def _budget(self, cost: np.ndarray) -> float:
        """A task's share of a stage's estimated cost: WORK_TASKS_PER_WORKER tasks a worker."""
        return float(cost.sum()) / (WORK_TASKS_PER_WORKER * max(1, len(self.client.nthreads())))

    def _pair_chunks(self, tiles: np.ndarray, cost: np.ndarray) -> list:
        """`_work_chunks` of pairs each its own unit (no key), over arrays: a tile's pairs, in
        their order, cut where a chunk would pass WORK_PAIRS pairs or the budget (at least one
        pair a chunk), the costliest chunk first: a Python loop over the Great Court roof's
        25,000 pairs had the workers wait for the refinement's first task."""
        budget = self._budget(cost)
        order = np.argsort(tiles, kind="stable")
        edges = np.concatenate([[0], np.flatnonzero(np.diff(tiles[order])) + 1, [len(order)]]).tolist()
        spent = np.concatenate([[0.0], np.cumsum(cost[order])])  # cost of order[:n]
        chunks: list = []
        for start, end in zip(edges[:-1], edges[1:]):
            s = start
            while s < end:
                e = int(np.searchsorted(spent, spent[s] + budget, side="right")) - 1
                e = min(max(e, s + 1), end, s + WORK_PAIRS)
                chunks.append((float(spent[e] - spent[s]), order[s:e]))
                s = e
        return [chunk for _, chunk in sorted(chunks, key=lambda c: -c[0])]

    def _work_chunks(self, units: dict, cost: np.ndarray) -> list:
        """[[positions]]: the groups of `_on_workers`' pairs, costliest first. A tile's pairs
        (`units`: tile -> its groups of positions, a key's kept whole) are cut where a group would
        pass WORK_PAIRS pairs or the cost budget, the stage's estimated cost (`_pair_costs`) over
        WORK_TASKS_PER_WORKER tasks a worker: a tile dense with large parts is then several tasks,
        not one that the other workers wait for; the costliest sent first, the cheap ones fill
        in at the end."""
        budget = self._budget(cost)
        chunks: list = []
        for tile in sorted(units):
            chunk: list = []
            spent = 0.0
            for members in units[tile].values():
                more = float(cost[members].sum())
                if chunk and (len(chunk) + len(members) > WORK_PAIRS or spent + more > budget):
                    chunks.append((spent, chunk))
                    chunk, spent = [], 0.0
                chunk.extend(members)
                spent += more
            chunks.append((spent, chunk))
        return [chunk for _, chunk in sorted(chunks, key=lambda c: -c[0])]

    def _parts_of(self, objects) -> tuple:
        """(the objects in the picks' order, the picks): `worktasks.pick`s of the load tasks'
        answers (futures: the parts stay on the workers), or where the loads are small a load
        task's answer and the positions the task picks itself (`worktasks.picked`), a
        manifest's primitives packed here."""
        src, pos = self._where[objects, 0], self._where[objects, 1]
        ids, picks = [], []
        for s in np.unique(src).tolist():
            mine = src == s
            ids.append(objects[mine])
            if s == len(self._loads):
                picks.append(self._manifest.take(pos[mine]))
            elif self._whole:
                picks.append((self._loads[s], pos[mine]))
            else:
                picks.append(self.client.submit(worktasks.pick, self._loads[s], pos[mine],
                                                key=f"gjk-part-{s}-{_token()}"))
        return np.concatenate(ids), picks

    def _tile_count(self, n: int) -> int:
        workers = max(1, len(self.client.nthreads()))
        return max(TILES_PER_WORKER * workers, -(-n // TILE_OBJECTS))

    def _results(self, futures: list, stage: str, opened: bool = True) -> list:
        """The futures' results in order, the progress told as each completes.

        Each answer is fetched as its task finishes and opened then (`worktasks.Packed`): the
        client unpickles the first answers while the workers compute the last (the Great Court
        roof's 25,000 refined pairs: 0.6 s of unpickling, which followed the last task).
        opened : False leaves a packed answer as it travelled (`Packed.unpacked`: its columns).

        Never waits forever: a cluster without a worker, or a scheduler out of reach, for longer
        than the connect time-out is a ClusterError, and so is a task the cluster could not run
        (its workers died too often: Dask's KilledWorker).
        """
        from distributed import as_completed

        total = len(futures)
        self.tell(stage, 0, total)
        try:
            pending = as_completed(futures, loop=self.client.loop, with_results=True)
            got: dict = {}
            stranded, checked = None, 0.0
            while not pending.is_empty():
                if pending.has_ready():
                    for future, answer in pending.next_batch(block=False):
                        if future.status != "finished":  # erred or cancelled: raised as such
                            future.result()
                        if isinstance(answer, worktasks.Packed):
                            answer = answer.open() if opened else answer.unpacked()
                        got[future.key] = answer
                    self.tell(stage, len(got), total)
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
                # woken as an answer comes (as_completed notifies its thread condition once the
                # answer is queued, under that lock), else at the watch's next look
                with pending.thread_condition:
                    if not pending.has_ready():
                        pending.thread_condition.wait(timeout=0.02)
            return [got[f.key] for f in futures]
        except GjkError:
            raise  # an input error of --debug's strict mode, raised on a worker
        except Exception as exc:  # noqa: BLE001 - KilledWorker, CancelledError, a lost scheduler
            raise ClusterError(f"the Dask cluster at {self.options.dask} could not finish the scan: "
                               f"{type(exc).__name__}: {one_line(exc)}") from exc

    def _release(self) -> None:
        for f in self._loads + self._tiles + self._fetched:
            f.release()
        self._loads, self._tiles, self._fetched, self._ahead = [], [], [], None


def _whole(counts: int) -> bool:
    """Whether the tasks take the load tasks' answers whole: their meshes' `counts` vertices and
    faces (float64 and int64, 24 bytes each) at most WHOLE_LOADS_BYTES."""
    return 24 * int(counts) <= WHOLE_LOADS_BYTES


def _joined(done: list, order) -> "BatchResult":
    """The tiles' verdicts (`worktasks.tile_facts`' answers) as one BatchResult in `order`, a
    field at a time, each tile's arrays of a field let go once joined: the client holds the
    pairs' answers about once, not twice (a listing of millions of pairs:
    `gjkcli.pipeline.streamed`). The fields not among the facts hold no pair's yet
    (`_ClusterRun.whole_answers`)."""
    out = {}
    for name in worktasks.TILE_FACTS:
        pieces = [d[3].pop(name) for d in done if len(d[0])]
        joined = np.concatenate(pieces)
        del pieces
        out[name] = joined[order]
        del joined
    none = _PairRows(None, None)
    return BatchResult(**{f.name: out.get(f.name, none) for f in dataclasses.fields(BatchResult)})


class _PairRows:
    """A field of a BatchResult held for some of its pairs only, read as the whole field is: at a
    pair's index, at (an index, the columns), or at an array of indices. at : (m,) each pair's
    row of `data`, -1 for a pair it does not hold (None: it holds none). A pair it does not hold
    is a KeyError."""

    def __init__(self, at: np.ndarray | None, data: np.ndarray | None):
        self.at, self.data = at, data

    def __getitem__(self, key):
        if type(key) is tuple:
            return self.data[(self._row(key[0]), *key[1:])]
        return self.data[self._row(key)]

    def _row(self, k):
        n = None if self.at is None else self.at[k]
        if n is None or ((n < 0).any() if isinstance(n, np.ndarray) else n < 0):
            raise KeyError(f"no answer fetched for pair {k}")
        return n


class _WorkerAnswers(worktasks.SortedKeys):
    """{pair index: the triangle test's answer} of refinement tasks whose answers stay on their
    workers (`worktasks.refine_pairs`). The client holds each pair's facts the listing reads
    (`facts`: status, distance, depth; `worktasks.refined_facts`) and fetches the answers
    themselves as a report reads them, in pages of its order (`read_ahead`: a task a worker a
    page, `worktasks.refined_rows`), the next pages asked for while it writes one: the vectors
    and certificates of the Great Court roof's 25,000 refined pairs are never on the client at
    once.

    Where no report reads it while the cluster is up (`gjkcli.pipeline.run.reporting`), the
    run fetches every answer before the cluster closes (`fetch_all`), kept by columns
    (`worktasks.ColumnResults`), as it does for a pair read other than a block at a time. Reads
    like the dict it stands for."""

    def __init__(self, run: "_ClusterRun"):
        self._run = run
        self._futures: list = []  # the tasks' answers, on their workers
        self._pieces: list = []  # (pair indices, task, facts) a task
        self._keys = None  # (p,) int64 the pairs, ascending; then each one's task, position, facts
        self._task = self._at = self._codes = self._distance = self._depth = self._has = None
        self._table: list = []  # the statuses' values, by code
        self._near: dict = {}  # pair index -> its answer, fetched for the block being read
        self._pages: dict = {}  # page -> its answers (`_fetched`), those a report reads now
        self._coming: list = []  # [(page, its pairs, `_asked`)]: the pages asked for, not fetched, in order
        self._page_of = None  # (p,) int32: each pair's page, -1 where not asked for
        self._pid = 0  # the next page's number
        self._home: tuple | None = None  # `_homes`
        self._local: worktasks.ColumnResults | None = None  # every answer, once fetched

    def add(self, future, facts, pairs) -> None:
        """A task's answer (`future`, on its worker) and its facts (`refined_facts`), its key k
        being pair pairs[k]."""
        keys, codes, table, distance, depth, has = facts
        t = len(self._futures)
        self._futures.append(future)
        if len(keys):
            recode = np.array([self._code(v) for v in table], dtype=np.uint8)
            self._pieces.append((np.asarray(pairs, dtype=np.int64)[keys], t, recode[codes] if len(table) else codes,
                                 distance, depth, has))
        self._keys = None

    def _code(self, value) -> int:
        if value not in self._table:
            self._table.append(value)
        return self._table.index(value)

    def _index(self) -> None:
        if self._keys is not None:
            return
        if self._pieces:
            pairs = np.concatenate([p[0] for p in self._pieces])
            task = np.concatenate([np.full(len(p[0]), p[1], dtype=np.int32) for p in self._pieces])
            at = np.concatenate([np.arange(len(p[0]), dtype=np.int32) for p in self._pieces])  # WORK_PAIRS at most
            codes, distance, depth, has = (np.concatenate([p[n] for p in self._pieces]) for n in (2, 3, 4, 5))
        else:
            pairs = np.zeros(0, dtype=np.int64)
            task = at = np.zeros(0, dtype=np.int32)
            codes, distance, depth, has = np.zeros(0, dtype=np.uint8), np.zeros(0), np.zeros(0), np.zeros(0, dtype=bool)
        order = np.argsort(pairs, kind="stable")
        self._keys, self._task, self._at = pairs[order], task[order], at[order]
        self._codes, self._distance, self._depth, self._has = codes[order], distance[order], depth[order], has[order]
        self._page_of = np.full(len(pairs), -1, dtype=np.int32)
        self._pieces = []
        if len(self._keys) > 1 and (self._keys[1:] == self._keys[:-1]).any():
            raise ValueError("a pair answered twice")

    def _found(self, ks: np.ndarray) -> np.ndarray:
        """Each pair's place among the keys (KeyError for a pair without an answer)."""
        self._index()
        n = np.searchsorted(self._keys, ks)
        if len(ks) and ((n >= len(self._keys)).any() or (self._keys[np.minimum(n, len(self._keys) - 1)] != ks).any()):
            raise KeyError("a pair without an answer")
        return n

    def facts(self, ks) -> tuple:
        """`worktasks.ColumnResults.facts`, from the facts held here."""
        n = self._found(np.asarray(ks, dtype=np.int64))
        table = np.empty(len(self._table), dtype=object)
        table[:] = self._table
        return table[self._codes[n]], self._distance[n], self._depth[n], self._has[n]

    def __getitem__(self, k):
        got = self._near.pop(k, None) if self._near else None
        if got is not None:
            return got
        if k not in self:
            raise KeyError(k)
        return self.fetch_all()[k]  # a pair read apart: every answer fetched once, kept by columns

    def read_ahead(self, ks, then=None) -> None:
        """The answers of the pairs `ks` made and kept until each is read (those made before let
        go), from the pages of answers that hold them, fetched as they are needed (the pages
        before them let go). then : the pairs read after these, in order: the pages of them
        asked for ahead, AHEAD_PAGES of ANSWER_PAGE pairs (the workers cut them out and keep
        them while the report writes these)."""
        self._near = {}
        if self._local is not None:
            self._local.read_ahead(ks)
            self._near = {k: self._local[k] for k in np.asarray(ks, dtype=np.int64).tolist() if k in self._local}
            return
        ks = self._answered(np.asarray(ks, dtype=np.int64))
        then = np.zeros(0, dtype=np.int64) if then is None else np.asarray(then, dtype=np.int64)
        if not len(ks):  # only told what comes: its first pages asked for
            self._ask_ahead(then)
            return
        n = np.searchsorted(self._keys, ks)
        known = list(self._pages) + [pid for pid, _, _ in self._coming]
        lost = ~np.isin(self._page_of[n], known)  # not asked for (-1), or let go
        if lost.any():  # these and the next ones not asked for, now
            more = self._unasked(then)
            more = more[~np.isin(more, ks[lost])][:max(0, ANSWER_PAGE - int(lost.sum()))]
            self._ask(np.concatenate([ks[lost], more]))
        page_of = self._page_of[n]
        wanted = np.unique(page_of).tolist()
        while not set(wanted) <= self._pages.keys():  # the pages asked before them fetched, in order
            pid, rows, asked = self._coming.pop(0)
            self._pages[pid] = self._fetched(rows, asked)
        for pid in [pid for pid in self._pages if pid < wanted[0]]:
            del self._pages[pid]
        self._ask_ahead(then)
        for pid in wanted:
            mine = ks[page_of == pid]
            page = self._pages[pid]
            page.read_ahead(mine)
            self._near.update((k, page[k]) for k in mine.tolist())

    def _ask_ahead(self, then: np.ndarray) -> None:
        """The pages of the pairs `then` (in order) not asked for, up to AHEAD_PAGES asked for;
        none where the run fetches every answer as it ends (no report reads them on the
        cluster: `fetch_all`)."""
        if not self._run.reported or len(self._coming) >= AHEAD_PAGES:
            return
        rest = self._unasked(then)
        for start in range(0, ANSWER_PAGE * (AHEAD_PAGES - len(self._coming)), ANSWER_PAGE):
            if start >= len(rest):
                break
            self._ask(rest[start:start + ANSWER_PAGE])

    def _ask(self, rows: np.ndarray) -> None:
        """A page of the answers of the pairs `rows` asked for (`_asked`), last in the queue."""
        self._page_of[np.searchsorted(self._keys, rows)] = self._pid
        self._coming.append((self._pid, rows, self._asked(rows)))
        self._pid += 1

    def _answered(self, rows: np.ndarray) -> np.ndarray:
        """The pairs of `rows` with an answer here, in their order."""
        self._index()
        if not len(self._keys):
            return rows[:0]
        n = np.minimum(np.searchsorted(self._keys, rows), len(self._keys) - 1)
        return rows[self._keys[n] == rows]

    def _unasked(self, rows: np.ndarray) -> np.ndarray:
        """The pairs of `rows` with an answer not yet asked for, in their order."""
        rows = self._answered(rows)
        return rows[self._page_of[np.searchsorted(self._keys, rows)] < 0]

    def _fetched(self, ks: np.ndarray, asked: list) -> "worktasks.ColumnResults":
        """The answers of the pairs ks by columns, received from `_asked`'s tasks `asked`."""
        got = [x.unpacked() for x in _gathered(self._run.client, [f for _, f in asked], self._run.options)]
        page = worktasks.ColumnResults()
        for (order, _), answers in zip(asked, got):
            page.add(answers, ks[order])
        return page

    def _asked(self, ks: np.ndarray) -> list:
        """[(positions among ks, future)]: a task a worker cutting the answers of the pairs ks
        out of the refinement's answers it holds (`worktasks.refined_rows`)."""
        if not len(ks):
            return []
        n = self._found(ks)
        task, at = self._task[n], self._at[n]
        workers, where = self._homes()
        where = where[task]
        out = []
        for w in np.unique(where).tolist():
            mine = np.flatnonzero(where == w)
            tasks = np.unique(task[mine]).tolist()
            order = np.concatenate([mine[task[mine] == t] for t in tasks])
            wanted = [at[mine[task[mine] == t]] for t in tasks]
            future = self._run.client.submit(
                worktasks.refined_rows, wanted, *[self._futures[t] for t in tasks],
                workers=None if workers[w] is None else [workers[w]], allow_other_workers=True,
                key=f"gjk-rows-{_token()}")
            out.append((order, future))
        return out

    def _homes(self) -> tuple:
        """(the workers, each task's answer's worker among them): asked once; a worker None
        where the scheduler knows none (Dask then places the task that reads it)."""
        if self._home is None:
            held = self._run.client.who_has(self._futures)
            home = [(held.get(f.key) or [None])[0] for f in self._futures]
            workers = list(dict.fromkeys(home))
            self._home = (workers, np.array([workers.index(w) for w in home], dtype=np.int64))
        return self._home

    def fetch_all(self) -> "worktasks.ColumnResults":
        """Every answer, fetched once and kept by columns (each made as it is read)."""
        if self._local is None:
            self._index()
            self._local = self._fetched(self._keys, self._asked(self._keys))
            self.release()
        return self._local

    def release(self) -> None:
        """The tasks' answers let go on the workers."""
        for f in self._futures:
            f.release()
        self._futures, self._pages, self._coming = [], {}, []


@dataclass
class _ClusterParts(Parts):
    """The client's `Parts`: names, boxes, hull gaps and what the readers say of each object,
    its vertex and face counts (`counts`, (n, 2)) and the convexity reasons measured on the
    workers (`reasons`); no triangles, no hull."""

    counts: np.ndarray | None = None
    reasons: dict = dataclasses.field(default_factory=dict)

    @property
    def geometry(self):
        """None: the parts' triangles stay on the workers (the pictures' are fetched apart:
        `_ClusterRun._pictured`)."""
        return None

    def mesh(self, k: int):
        raise RuntimeError(f"the client of a Dask scan holds no triangles ({self.names[k]})")

    def triangles(self, k: int):
        raise RuntimeError(f"the client of a Dask scan holds no triangles ({self.names[k]})")

    def reasons_ahead(self, involved: np.ndarray, jobs: int) -> None:
        """Nothing: the workers measure the reasons (`_ClusterRun.listed_known` asks for them)."""

    def records(self, involved: np.ndarray, reasons=None) -> LazyRecords:
        """`Parts.records` from what the client holds: the counts, the hulls' facts, and the
        reasons the workers measured (`_ClusterRun.objects`; reasons, the cache's table, is not
        read: the client holds no triangles to key them by)."""
        none = [None] * self.n  # a finite gap is its own reason; the others are measured
        convex, why = self.convexity(involved, none, none, none, none)
        for k, reason in self.reasons.items():
            why[k] = reason

        def record(k: int) -> ObjectRecord:
            return self.record(k, int(self.counts[k, 0]), int(self.counts[k, 1]), convex[k], why[k])

        return LazyRecords(self.n, record)


class _Pictured:
    """`Findings.geometry` of a Dask scan with pictures: name -> the object's triangles (an
    owner's, its elements' together, as `Parts.triangles_of`), fetched from the workers when
    first read, or in rounds when the pictures say what they read next (`read_ahead`); once
    `closed` (the cluster gone), an object never fetched has none (None: a picture draws its
    box)."""

    def __init__(self, run: _ClusterRun, parts: "_ClusterParts"):
        self.run, self.parts = run, parts
        self.got: dict = {}  # object -> its triangles or None
        self.closed = False
        self.owners: dict = {}
        for k, g in enumerate(parts.geoms):
            if g.owner is not None:
                self.owners.setdefault(g.owner, []).append(k)

    def members(self, name: str) -> list:
        k = self.parts.index.get(name)
        if k is not None:
            return [k]
        return self.owners.get(name, [])

    def __call__(self, name: str):
        members = self.members(name)
        if not members:
            return None
        if not self.closed and any(k not in self.got for k in members):
            self.fetch(name)
        if any(k not in self.got for k in members):
            return None
        if len(members) == 1 and self.parts.index.get(name) is not None:
            return self.got[members[0]]
        return elements.merged_triangles(self.got.get, members)

    def close(self) -> None:
        self.closed, self.run = True, None

    def fetch(self, name: str) -> None:
        """The triangles of `name`'s objects, in one round of tasks."""
        self.read_ahead([name])

    def read_ahead(self, names) -> None:
        """The triangles of the objects `names` not fetched yet, in rounds of at most
        FETCH_OBJECTS objects or FETCH_TRIANGLES triangles (`Findings.read_ahead`)."""
        if self.closed:
            return
        counts = self.parts.counts
        want: list = []
        wanted: set = set()
        faces = 0
        for n in names:
            mine = [k for k in dict.fromkeys(self.members(n)) if k not in self.got and k not in wanted]
            size = int(counts[mine, 1].sum()) if mine else 0
            if want and (len(want) + len(mine) > FETCH_OBJECTS or faces + size > FETCH_TRIANGLES):
                self.got.update(self.run._triangles_of(np.unique(np.asarray(want, dtype=np.int64))))
                want, wanted, faces = [], set(), 0
            want.extend(mine)
            wanted.update(mine)
            faces += size
        if want:
            self.got.update(self.run._triangles_of(np.unique(np.asarray(want, dtype=np.int64))))


def _in_file_order(tasks: list, loaded: list) -> tuple:
    """(loaded, moved): the load tasks' summaries (`worktasks.Summary`), those of a file read in
    several tasks whose objects carry their place in it (an IFC model's elements,
    `gjkcli.mesh.ifc.Element.step`: `ifc.read_share` interleaves its shares; a STEP assembly's
    solids, `gjkcli.mesh.cad.SolidRef.index`: its shares are products) joined in the
    file's order on the file's first task, its other tasks then holding none; their problems in
    one reader's order (`Problem.order`), then their notes, as one process lists them. moved:
    {task: (m, 2) int64 the (task, position in its answer) of each object of its joined
    summary}. A file one of whose tasks failed is left as it is (the file is a Problem)."""
    from gjkcli.pipeline.worktasks import Summary

    by_source: dict = {}
    for t, (s, _) in enumerate(tasks):
        by_source.setdefault(s, []).append(t)
    out, moved = list(loaded), {}
    for group in by_source.values():
        got = [loaded[t] for t in group]
        if len(group) < 2 or any(g.problem is not None for g in got):
            continue
        meta = [m for g in got for m in g.meta]
        steps = [m[8][0].index + 1 if m[8] else getattr(m[5], "step", 0) for m in meta]
        if not meta or not all(steps):
            continue
        order = np.argsort(np.asarray(steps, dtype=np.int64), kind="stable")
        rows = np.concatenate([np.column_stack([np.full(g.count, t), np.arange(g.count)]).astype(np.int64)
                               for t, g in zip(group, got)])
        shapes = [s for g in got for s in g.shapes]
        skipped = [p for g in got for p in g.skipped]
        problems = sorted((p for p in skipped if isinstance(p, Problem)), key=lambda p: p.order)
        notes = [p for p in skipped if not isinstance(p, Problem)]
        notes = [p for p in notes if not getattr(p, "order", ())] + \
            sorted((p for p in notes if getattr(p, "order", ())), key=lambda p: p.order)
        joined = Summary(meta=[meta[k] for k in order.tolist()], shapes=[shapes[k] for k in order.tolist()],
                         skipped=problems + notes,
                         lo=np.concatenate([g.lo for g in got])[order], hi=np.concatenate([g.hi for g in got])[order],
                         gap=np.concatenate([g.gap for g in got])[order],
                         inward=np.concatenate([g.inward for g in got])[order],
                         counts=np.concatenate([g.counts for g in got])[order])
        out[group[0]], moved[group[0]] = joined, rows[order]
        for t in group[1:]:
            out[t] = Summary(lo=np.zeros((0, 3)), hi=np.zeros((0, 3)), gap=np.zeros(0), inward=np.zeros(0, dtype=np.uint8),
                             counts=np.zeros((0, 2), dtype=np.int64))
    return out, moved


def _packed_order(ids: np.ndarray, src: np.ndarray):
    """`worktasks.tile`'s order: where the object ids[k] (ascending) is among the tile's packs,
    which hold the objects load task by load task; None where that is the ids' own order (each
    load task's objects a run of ids)."""
    grouped = np.argsort(src, kind="stable")
    if (grouped == np.arange(len(ids))).all():
        return None
    return np.argsort(grouped)


def _pair_costs(parts, a, b) -> np.ndarray:
    """(m,) the estimated cost of each pair (a[k], b[k])'s work on a worker: its parts' triangles
    (what their hierarchies, booleans and exact solids grow with), and a little for the pair
    itself. A `_ClusterParts` counts them; other parts weigh alike."""
    counts = getattr(parts, "counts", None)
    if counts is None:
        return np.ones(len(a))
    faces = counts[:, 1].astype(np.float64)
    return faces[a] + faces[b] + PAIR_WORK_FACES


def _token() -> str:
    import uuid

    return uuid.uuid4().hex


# -- the grid of tiles -------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Grid:
    """A regular grid of tiles over a box: origin (3,), cell (3,) > 0, counts (3,) int."""

    origin: np.ndarray
    cell: np.ndarray
    counts: np.ndarray

    @classmethod
    def fit(cls, glo, ghi, target: int) -> "_Grid":
        """At most `target` cubic-ish tiles over the boxes' bounding box (one along a flat
        axis): each axis's count rounded, then the thinnest cells' axis cut in fewer while
        there are more (rounded, the Great Court roof's 8 were 20, each a task and its
        scheduling: the tiles took the workers 0.15 to 0.2 s, 0.1 s as 8)."""
        origin = glo.min(axis=0)
        extent = ghi.max(axis=0) - origin
        solid = extent > 0
        counts = np.ones(3, dtype=np.int64)
        if solid.any():
            side = (np.prod(extent[solid]) / target) ** (1.0 / solid.sum())
            counts[solid] = np.clip(np.round(extent[solid] / side), 1, target).astype(np.int64)
            while counts.prod() > target:
                thin = np.where(counts > 1, extent / counts, np.inf)
                counts[np.argmin(thin)] -= 1
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
