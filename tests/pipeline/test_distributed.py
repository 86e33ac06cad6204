"""`gjk scan --dask`: the scan on a dask.distributed cluster gives the same JSON as one process.

The oracle is the one-process scan (itself tested against trimesh + FCL, coal and analytic shapes
in test_run.py and the engine's tests): the same documents, byte for byte apart from the timings,
on scenes split over several files with pairs across files and across tile borders (tiles are
forced small), with clearances, tolerances, manifests (includes, primitives, [[check]], [[allow]]),
baselines, and exact and auto modes on non-convex parts. One LocalCluster of two worker processes
serves the whole module.
"""
from __future__ import annotations

import collections
import contextlib
import dataclasses
import json
import os
import platform
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("distributed")

from gjkcli.engine.results import Status  # noqa: E402
from gjkcli.pipeline import distributed  # noqa: E402
from gjkcli.pipeline import run as pipeline  # noqa: E402
from gjkcli.report.jsonout import document, dumps  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


@contextlib.contextmanager
def two_workers():
    """A LocalCluster of two worker processes with its client: (scheduler address, client)."""
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      memory_limit=0, silence_logs=50) as c, Client(c, set_as_default=False) as client:
        client.wait_for_workers(2, timeout=120)
        yield c.scheduler_address, client


@pytest.fixture(scope="module")
def cluster():
    """The module's cluster. No test kills one of its workers: those that do take `doomed`."""
    with two_workers() as both:
        yield both


@pytest.fixture
def doomed():
    """A cluster of its own for a test that kills a worker: the scan must finish on the worker
    left, and no later test waits for a nanny to bring the dead one back (on a loaded machine
    that took over a minute, or never came)."""
    with two_workers() as both:
        yield both


def make_scene_module():
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_scan_scene", ROOT / "scripts" / "make_scan_scene.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def convex_files(tmp_path_factory):
    """1,200 convex parts over 4 files: neighbours in different files."""
    folder = tmp_path_factory.mktemp("convex")
    return make_scene_module().make_split(1200, folder / "cell.glb", 4, seed=5)


@pytest.fixture(scope="module")
def ring_files(tmp_path_factory):
    """Rings (non-convex: a hole), pegs and boxes over 3 GLB files, placed at random, seeded."""
    import trimesh

    folder = tmp_path_factory.mktemp("rings")
    rng = np.random.default_rng(11)
    scenes = [trimesh.Scene() for _ in range(3)]
    for k in range(60):
        kind = k % 3
        if kind == 0:
            mesh = trimesh.creation.annulus(r_min=0.6, r_max=1.0, height=0.4, sections=16)
        elif kind == 1:
            mesh = trimesh.creation.cylinder(radius=0.25, height=2.0, sections=8)
        else:
            mesh = trimesh.creation.box([0.5, 0.5, 0.5])
        T = trimesh.transformations.random_rotation_matrix(rng.uniform(size=3))
        T[:3, 3] = rng.uniform(0, 5.0, size=3)
        scenes[k % 3].add_geometry(mesh, node_name=f"obj{k:02d}", geom_name=f"g{k:02d}", transform=T)
    paths = []
    for k, s in enumerate(scenes):
        paths.append(folder / f"rings_{k}.glb")
        paths[-1].write_bytes(s.export(file_type="glb"))
    return paths


def untimed(doc):
    """The JSON document with every timing (the run's stages, each "elapsed") blanked."""
    if isinstance(doc, dict):
        return {k: 0 if k == "elapsed" else {} if k == "timings" else untimed(v) for k, v in doc.items()}
    if isinstance(doc, list):
        return [untimed(v) for v in doc]
    return doc


def dying_once(module: str, name: str, marker) -> str:
    """Code for `client.run(exec, code, {})`: the worker's `module.name` kills its own process
    the first time any worker calls it (a marker file made with O_EXCL), then works as before."""
    return f"""
import importlib, os, signal
_module = importlib.import_module({module!r})
if not hasattr(_module, "_kept_{name}"):
    _module._kept_{name} = _module.{name}
def _dying(*args, **kwargs):
    try:
        fd = os.open({str(marker)!r}, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return _module._kept_{name}(*args, **kwargs)
    os.write(fd, str(os.getpid()).encode())
    os.close(fd)
    os.kill(os.getpid(), signal.SIGKILL)
_module.{name} = _dying
"""


def same_json(a, b) -> str:
    """Both documents with the timings blanked: equal strings, byte for byte."""
    texts = [dumps(untimed(json.loads(dumps(document(found))))) for found in (a, b)]
    assert texts[0] == texts[1]
    return texts[0]


@pytest.fixture
def small_tiles(monkeypatch):
    """Tiles of about `objects` objects: many tiles, so that pairs cross their borders."""
    def tiles(objects):
        monkeypatch.setattr(distributed, "TILE_OBJECTS", objects)
    return tiles


def both(cluster, paths, *, manifest=None, **options):
    """(one process, the cluster): the same scan."""
    address, _client = cluster
    one = pipeline.scan(paths, pipeline.Options(jobs=1, **options), manifest=manifest)
    many = pipeline.scan(paths, pipeline.Options(dask=address, **options), manifest=manifest)
    return one, many


# -- the grid of tiles ----------------------------------------------------------------------------


def test_every_overlapping_pair_is_owned_by_exactly_one_tile_holding_both():
    from gjkcli.scene.broadphase import candidate_pairs

    rng = np.random.default_rng(3)
    lo = rng.uniform(0, 10, size=(400, 3))
    hi = lo + rng.uniform(0.1, 2.5, size=(400, 3))
    grid = distributed._Grid.fit(lo, hi, 64)
    tiles, members = grid.assign(lo, hi)
    spans = np.bincount(np.concatenate(members), minlength=400)
    assert 0.2 < np.mean(spans > 1) < 0.95  # many boxes cross tile borders, not all
    i, j = candidate_pairs(lo, hi)
    owner = grid.tile_of(np.maximum(lo[i], lo[j]))
    holds = {t: set(m.tolist()) for t, m in zip(tiles.tolist(), members)}
    for a, b, t in zip(i.tolist(), j.tolist(), owner.tolist()):
        assert a in holds[t] and b in holds[t]
    # a pair seen by several tiles is kept by one: the union over tiles is the pairs, once each
    kept = []
    for t, m in zip(tiles.tolist(), members):
        li, lj = candidate_pairs(lo[m], hi[m])
        own = grid.tile_of(np.maximum(lo[m][li], lo[m][lj])) == t
        kept += list(zip(m[li[own]].tolist(), m[lj[own]].tolist()))
    assert len(kept) == len(set(kept)) == len(i)
    assert set(kept) == set(zip(i.tolist(), j.tolist()))


def test_the_grid_has_at_most_its_target_of_tiles():
    """`_Grid.fit` never makes more tiles than asked (rounding each axis's count made the Great
    Court roof's 8 tiles 20), a flat scene one tile thick, a cube's k**3 tiles k a side."""
    rng = np.random.default_rng(5)
    for _ in range(300):
        extent = rng.uniform(0.1, 100.0, size=3) * rng.choice([0.0, 1.0, 1.0, 1.0], size=3)
        if not extent.any():
            continue
        target = int(rng.integers(1, 80))
        grid = distributed._Grid.fit(np.zeros((1, 3)), extent[None, :], target)
        assert 1 <= int(np.prod(grid.counts)) <= target and (grid.counts[extent == 0] == 1).all()
    roof = distributed._Grid.fit(np.zeros((1, 3)), np.array([[110.0, 85.0, 22.0]]), 8)  # rounded: 4 x 3 x 1
    assert roof.counts.tolist() == [3, 2, 1]
    for k in (1, 2, 3, 4):
        assert distributed._Grid.fit(np.zeros((1, 3)), np.full((1, 3), 7.0), k ** 3).counts.tolist() == [k] * 3


# -- the same JSON as one process ------------------------------------------------------------------


def test_pairs_without_keys_are_cut_into_tasks_as_units_of_one_pair_are():
    """`_pair_chunks` (arrays) cuts pairs into the tasks `_work_chunks` cuts them into when
    each pair is its own unit: by tile, at most WORK_PAIRS and the cost budget, the costliest
    first; seeded random tiles and costs, a pair costlier than the budget alone in its task."""
    from types import SimpleNamespace

    run = distributed._ClusterRun.__new__(distributed._ClusterRun)
    rng = np.random.default_rng(31)
    for workers, n in ((1, 1), (2, 500), (3, 5000)):
        run.client = SimpleNamespace(nthreads=lambda w=workers: dict.fromkeys(range(w), 1))
        tiles = rng.integers(0, 7, size=n)
        cost = rng.exponential(50.0, size=n) + distributed.PAIR_WORK_FACES
        cost[rng.integers(0, n)] = cost.sum()  # one pair past any budget
        units: dict = {}
        for k, t in enumerate(tiles.tolist()):
            units.setdefault(t, {})[("pair", k)] = [k]
        want = run._work_chunks(units, cost)
        got = run._pair_chunks(tiles, cost)
        assert [list(c) for c in want] == [c.tolist() for c in got]
        assert sorted(np.concatenate(got).tolist()) == list(range(n))


def test_convex_scene_over_files_and_tiles(cluster, convex_files, small_tiles):
    small_tiles(40)
    one, many = both(cluster, convex_files)
    same_json(one, many)
    statuses = {p.status for p in one.pairs}
    assert Status.COLLISION in statuses
    assert 0.2 < one.counts["collision"] / one.checked < 0.8  # colliding and clear pairs both
    assert any(p.file_a != p.file_b for p in one.pairs)  # pairs across files


def test_a_room_wound_inwards_is_named_on_the_cluster_as_in_one_process(cluster, tmp_path):
    """The winding of each part travels with its hull from the workers (`Summary.inward`): the
    run's note names the turned room on the cluster, the client holding no triangle."""
    import trimesh

    s = trimesh.Scene()
    room = trimesh.creation.box(extents=(10, 10, 4))
    room.invert()
    s.add_geometry(room, node_name="room", geom_name="room")
    for k in range(3):
        crate = trimesh.creation.box(extents=(1, 1, 1))
        crate.apply_translation((2 * k - 2, 0, 0))
        s.add_geometry(crate, node_name=f"crate{k}", geom_name=f"crate{k}")
    path = tmp_path / "room.glb"
    path.write_bytes(s.export(file_type="glb"))
    one, many = both(cluster, [path])
    same_json(one, many)
    assert [n for n in many.notes if n.startswith("'room' is wound inwards")]
    assert many.counts["collision"] == 3


def test_each_file_its_own_world_on_the_cluster_as_in_one_process(cluster, convex_files, small_tiles):
    """together=False (gjk scan's default): only the pairs within a file, on the cluster as here."""
    small_tiles(40)
    one, many = both(cluster, convex_files, together=False)
    same_json(one, many)
    assert one.pairs and all(p.file_a == p.file_b for p in one.pairs)
    assert one.together is False and json.loads(dumps(document(one)))["run"]["together"] is False
    whole, _ = both(cluster, convex_files[:1])
    assert whole.checked < one.checked  # the other files' own pairs were checked too


def test_clearance_tolerance_and_all_pairs(cluster, convex_files, small_tiles):
    small_tiles(25)
    one, many = both(cluster, convex_files[:3], clearance=0.3, tolerance=1e-3,
                     all_pairs=True, fail_on=("collision", "clearance", "touching"))
    same_json(one, many)
    assert one.counts["clearance"] > 0 and one.counts["clear"] > 0


@pytest.mark.parametrize("mode", ["exact", "auto"])
def test_non_convex_parts_exact_and_auto(cluster, ring_files, mode, small_tiles, tmp_path):
    small_tiles(8)
    bad = tmp_path / "broken.glb"
    bad.write_bytes(b"glTF\x02\x00\x00\x00 not really")
    one, many = both(cluster, [*ring_files[:2], bad, ring_files[2]], mode=mode)
    same_json(one, many)
    assert [e.file for e in one.errors] == [str(bad)]  # one bad file stops none of the others
    assert any(p.mode == "exact" for p in one.pairs)
    assert one.checked > 0 and one.counts["collision"] > 0


@pytest.mark.parametrize("whole", [True, False])
def test_small_loads_are_taken_whole_by_the_tasks_else_picked(cluster, ring_files, small_tiles, monkeypatch,
                                                              whole):
    """Loads whose meshes are small (`distributed.WHOLE_LOADS_BYTES`) are taken whole by the
    tiles' and the refinement's tasks, each picking its parts itself: no pick task, and every
    worker fetches every load as the loads are done (a `held` task a load and worker); larger
    ones are picked by a task per tile (or task) and load, and never fetched whole. The JSON is
    one process's either way, with the overlap volumes and a --trace, which take their parts
    the same way."""
    from distributed import get_task_stream

    small_tiles(8)
    if not whole:
        monkeypatch.setattr(distributed, "WHOLE_LOADS_BYTES", 0)
    address, client = cluster
    for options in ({"mode": "exact"}, {"mode": "auto", "trace": True}):
        one = pipeline.scan(ring_files, pipeline.Options(jobs=1, **options))
        with get_task_stream(client=client) as stream:
            many = pipeline.scan(ring_files, pipeline.Options(dask=address, **options))
        same_json(one, many)
        kinds = collections.Counter(str(r["key"]).split("-")[1] for r in stream.data)
        assert kinds["refine"] > 0 and kinds["overlap"] > 0 and kinds["tile"] > 0
        if whole:
            assert kinds["pick"] == kinds["part"] == 0
            assert kinds["held"] == len(ring_files) * len(client.nthreads())
        else:
            assert kinds["pick"] >= kinds["tile"] and kinds["part"] >= kinds["refine"] + kinds["overlap"]
            assert kinds["held"] == 0


def test_manifest_checks_allows_primitives_and_baseline(cluster, ring_files, tmp_path, small_tiles):
    small_tiles(6)
    m = tmp_path / "cell.toml"
    m.write_text("\n".join([
        "clearance = 0.05",
        "",
        "[[include]]",
        f"file = '{ring_files[0].as_posix()}'",
        "[[include]]",
        f"file = '{ring_files[1].as_posix()}'",
        "transform = [[1,0,0,0.3],[0,1,0,0],[0,0,1,0],[0,0,0,1]]",
        "[[object]]",
        "name = 'table'",
        "box = [6, 6, 0.5]",
        "translate = [2.5, 2.5, 2.5]",
        "[[object]]",
        "name = 'ball'",
        "sphere = 0.8",
        "translate = [2, 2, 2]",
        "[[group]]",
        "name = 'rings'",
        "members = ['*obj0*', '*obj3*']",
        "[[check]]",
        "a = 'rings'",
        "b = '*'",
        "clearance = 0.2",
        "[[check]]",
        "a = 'table'",
        "b = '*'",
        "[[allow]]",
        "a = 'ball'",
        "b = '*'",
        "reason = 'the ball rests there'",
    ]) + "\n")
    base = tmp_path / "baseline.json"
    first = pipeline.scan([ring_files[2]], pipeline.Options(jobs=1, write_baseline=base), manifest=m)
    assert first.pairs
    one, many = both(cluster, [ring_files[2]], manifest=m, baseline=base, mode="auto")
    text = same_json(one, many)
    assert one.counts["collision"] > 0
    assert any(p.allowed for p in one.pairs) and any(p.known for p in one.pairs)
    # the allowed pairs are counted, not listed, unless asked for (--show-allowed)
    assert "the ball rests there" not in text
    import dataclasses

    shown = dumps(document(dataclasses.replace(many, show_allowed=True)))
    assert "the ball rests there" in shown


# -- failures: a scheduler out of reach, a worker lost ----------------------------------------------


def test_dead_scheduler_is_one_line_and_exit_2(tmp_path, convex_files):
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "gjkcli", "scan", str(convex_files[0]), "--dask",
                           f"tcp://127.0.0.1:{port}", "--dask-timeout", "2"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert time.monotonic() - start < 20
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and f"tcp://127.0.0.1:{port}" in lines[0], done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""


def test_a_worker_killed_mid_scan_the_scan_completes(doomed, convex_files, small_tiles):
    address, client = doomed
    pids = list(client.run(os.getpid).values())
    killed = []
    told = []

    def tell(stage, done, total):
        told.append((stage, done, total))
        if stage == "narrow" and done >= 2 and not killed:
            os.kill(pids[0], signal.SIGKILL)
            killed.append(pids[0])

    small_tiles(20)
    one = pipeline.scan(convex_files, pipeline.Options(jobs=1))
    many = pipeline.scan(convex_files, pipeline.Options(dask=address), progress=tell)
    assert killed
    same_json(one, many)
    # progress as the tasks complete: the load tasks, then the tiles, counted up to their total
    for stage, total in (("load", 4), ("narrow", max(d[2] for d in told if d[0] == "narrow"))):
        counts = [d for s_, d, t in told if s_ == stage]
        assert counts[0] == 0 and counts[-1] == total and counts == sorted(set(counts))
        assert stage == "load" or (total > 20 and len(counts) > 5)


def test_a_scheduler_without_workers_and_a_failed_task_are_cluster_errors(cluster):
    from distributed import LocalCluster

    with LocalCluster(n_workers=0, processes=False, dashboard_address=":0") as empty:
        start = time.monotonic()
        with pytest.raises(distributed.ClusterError, match="has no worker"):
            with distributed.connect(empty.scheduler_address, timeout=1.0):
                pass
        assert time.monotonic() - start < 10
        # workers that are gone mid-scan for longer than the time-out: an error, never a hang
        from distributed import Client

        with Client(empty.scheduler_address, set_as_default=False) as alone:
            run = distributed._ClusterRun(pipeline.Options(dask=empty.scheduler_address,
                                                           dask_timeout=1.0), None)
            run.client = alone
            start = time.monotonic()
            with pytest.raises(distributed.ClusterError, match="no worker"):
                run._results([alone.submit(int, 1, pure=False)], "load")
            assert time.monotonic() - start < 10
    address, client = cluster
    run = distributed._ClusterRun(pipeline.Options(dask=address), None)
    run.client = client
    with pytest.raises(distributed.ClusterError, match="could not finish the scan: ZeroDivisionError"):
        run._results([client.submit(lambda: 1 / 0, pure=False)], "load")


# -- the command ---------------------------------------------------------------------------------------


def test_manifest_dask_key_through_the_command(cluster, convex_files, tmp_path):
    from click.testing import CliRunner

    from gjkcli.cli import main

    address, _client = cluster
    m = tmp_path / "m.toml"
    m.write_text(f"dask = '{address}'\n" + "".join(
        f"[[include]]\nfile = '{p.as_posix()}'\n" for p in convex_files[:2]))
    out_one, out_many = tmp_path / "one.json", tmp_path / "many.json"
    runner = CliRunner()
    r1 = runner.invoke(main, ["scan", "--manifest", str(m), "--format", "json", "-o", str(out_many)],
                       catch_exceptions=False)
    m.write_text(m.read_text().replace(f"dask = '{address}'\n", ""))
    r2 = runner.invoke(main, ["scan", "--manifest", str(m), "--format", "json", "-o", str(out_one)],
                       catch_exceptions=False)
    assert r1.exit_code == r2.exit_code == 1
    a, b = (untimed(json.loads(p.read_text())) for p in (out_one, out_many))
    assert a == b and a["pairs"]


def test_local_cluster_through_the_installed_command(tmp_path, convex_files):
    def scan(*extra):
        out = tmp_path / f"out{len(extra)}.json"
        done = subprocess.run([sys.executable, "-m", "gjkcli", "scan", str(convex_files[0]),
                               "--format", "json", "-o", str(out), *extra],
                              cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert done.returncode == 1 and done.stderr == "", done.stderr
        return untimed(json.loads(out.read_text()))

    assert scan("--dask", "local:1") == scan()


def test_local_workers_start_with_the_tasks_modules_imported():
    """`local:N` forks its workers from one process that imported distributed and the load
    and tile tasks' modules once (forkserver), instead of each worker importing them afresh:
    before any task ran, the workers have them; a plain spawned worker has not."""
    import multiprocessing

    if "forkserver" not in multiprocessing.get_all_start_methods():
        pytest.skip("no forkserver on this platform")

    def imported():
        import sys as worker_sys

        return [m for m in distributed.WORKER_MODULES if m in worker_sys.modules]

    with distributed.connect("local:2") as client:
        client.wait_for_workers(2, timeout=120)
        got = client.run(imported)
    assert len(got) == 2 and all(v == list(distributed.WORKER_MODULES) for v in got.values())
    assert "gjkcli.pipeline.worktasks" in distributed.WORKER_MODULES


def test_a_local_clusters_scheduler_runs_in_its_own_process_and_ends_with_the_client(tmp_path):
    """`local:N`'s scheduler is not in the client's process (its state and event loop grew with
    the scan there): it is a process of its own, which the cluster's close ends, and which a
    client killed outright (no close, no exit handler) ends too."""
    from fresh import wait_gone

    with distributed.connect("local:1") as client:
        scheduler = client.run_on_scheduler(os.getpid)
        assert scheduler != os.getpid() and scheduler not in client.run(os.getpid).values()
    wait_gone(scheduler, "the scheduler", within=20)
    code = ("import os, sys, time\n"
            "from gjkcli.pipeline import distributed\n"
            "with distributed.connect('local:1') as client:\n"
            "    print(client.run_on_scheduler(os.getpid), flush=True)\n"
            "    time.sleep(120)\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        scheduler = int(proc.stdout.readline())
        proc.kill()
        proc.wait(timeout=30)
        wait_gone(scheduler, "the scheduler", within=20)
    finally:
        proc.kill()


@pytest.mark.skipif(not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
                    reason="malloc arenas are glibc's")
def test_the_clients_threads_allocate_from_one_malloc_arena(tmp_path):
    """The client's event loop thread, which receives the workers' answers, allocates from the
    main thread's malloc arena, not one of its own (which kept what it freed: the Great Court
    roof's client held its peak of both): glibc's own statistics list one arena after answers
    came."""
    code = ("import ctypes\n"
            "from gjkcli.pipeline import distributed\n"
            "with distributed.connect('local:1') as client:\n"
            "    got = client.gather(client.map(lambda n: [bytes(n)] * 64, range(2000, 2100)))\n"
            "    assert len(got) == 100\n"
            "    ctypes.CDLL(None).malloc_stats()\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    arenas = [line for line in done.stderr.splitlines() if line.startswith("Arena ")]
    assert arenas == ["Arena 0:"], done.stderr


def test_the_client_keeps_no_log_of_the_messages_it_sent():
    """Dask's stream from the client to the scheduler keeps no copy of what it sent (a log of
    the last thousand messages, for Dask's developers, held every task's specification and
    arguments: the Great Court roof's client held 2 MB of them as it wrote its report)."""
    with distributed.connect("local:1") as client:
        assert client.gather(client.map(len, [b"x" * n for n in range(50)])) == list(range(50))
        log = client.scheduler_comm.recent_message_log
        assert log.maxlen == 0 and len(log) == 0


def test_bad_manifest_address_names_its_line(tmp_path):
    from gjkcli.scene import manifest as manifests

    m = tmp_path / "m.toml"
    m.write_text("tolerance = 0.1\ndask = 'scheduler:8786'\n")
    with pytest.raises(manifests.ManifestError) as e:
        manifests.load(m)
    assert e.value.line == 2 and "local:N" in e.value.message
    m.write_text("dask = 'local:3'\n")
    assert manifests.load(m).dask == "local:3"


def test_without_distributed_installed_one_line_says_what_to_install(tmp_path, convex_files):
    code = ("import sys; sys.modules['distributed'] = None\n"  # an import of it fails
            "from gjkcli.cli import main\nmain(['scan', sys.argv[1], '--dask', 'local'])")
    done = subprocess.run([sys.executable, "-c", code, str(convex_files[0])], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "pip install 'gjk[dask]'" in done.stderr


def test_bad_address_is_a_usage_error():
    from click.testing import CliRunner

    from gjkcli.cli import main

    r = CliRunner().invoke(main, ["scan", "x.glb", "--dask", "somewhere"])
    assert r.exit_code == 2 and "local:N" in r.output


def test_without_dask_nothing_of_dask_is_imported(tmp_path, convex_files):
    code = ("import sys; from gjkcli.cli import main\n"
            "try:\n    main(['scan', sys.argv[1], '-q'])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed')))")
    done = subprocess.run([sys.executable, "-c", code, str(convex_files[0])], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "[]", done.stdout + done.stderr


def test_a_link_is_one_object_on_the_cluster_too(cluster, tmp_path):
    """A URDF link of two overlapping boxes (meshes), beside another link it collides with: the
    cluster, as one process, never checks the link against itself and reports the pair under the
    links' names."""
    import trimesh

    trimesh.creation.box((1, 1, 1)).export(tmp_path / "cube.stl")
    trimesh.creation.box((0.5, 0.5, 0.5)).export(tmp_path / "small.stl")
    mesh = '<geometry><mesh filename="{}"/></geometry>'
    (tmp_path / "r.urdf").write_text(
        '<robot name="r">'
        f'<link name="a"><collision>{mesh.format("cube.stl")}</collision>'
        f'<collision><origin xyz="0.3 0 0"/>{mesh.format("cube.stl")}</collision></link>'
        f'<link name="b"><collision><origin xyz="0.9 0 0"/>{mesh.format("small.stl")}</collision></link>'
        f'<link name="c"><collision><origin xyz="5 0 0"/>{mesh.format("cube.stl")}</collision></link>'
        '<joint name="ac" type="fixed"><parent link="a"/><child link="c"/></joint>'
        '<joint name="cb" type="fixed"><parent link="c"/><child link="b"/></joint>'
        '</robot>')
    one, many = both(cluster, [tmp_path / "r.urdf"])
    for found in (one, many):
        assert [(p.a, p.b, p.status) for p in found.pairs if p.violation] == [("a", "b", Status.COLLISION)]
        assert all(p.a != p.b for p in found.pairs)
        assert sorted(o.name for o in found.objects) == ["a", "b", "c"]
        assert json.loads(dumps(document(found)))["pairs"][0]["a"] == "a"


def test_a_robot_on_the_cluster_as_in_one_process(cluster, tmp_path):
    """The robot's own rules reach the cluster: its adjacent links are allowed, its pose and
    notes are the run's, and a link whose mesh file is not there fails the run (exit 1) on the
    cluster as in one process."""
    import trimesh

    from gjkcli.scene import urdf

    trimesh.creation.box((1, 1, 0.2)).export(tmp_path / "slab.stl")
    trimesh.creation.box((0.2, 0.2, 1)).export(tmp_path / "rod.stl")
    mesh = '<geometry><mesh filename="{}"/></geometry>'
    (tmp_path / "r.urdf").write_text(
        '<robot name="r">'
        f'<link name="base"><collision>{mesh.format("slab.stl")}</collision></link>'
        f'<link name="arm"><collision><origin xyz="0 0 0.4"/>{mesh.format("rod.stl")}</collision></link>'
        f'<link name="cam"><collision>{mesh.format("gone.stl")}</collision></link>'
        '<joint name="j" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 1 0"/>'
        '<limit lower="-2" upper="2"/></joint>'
        '<joint name="m" type="fixed"><parent link="base"/><child link="cam"/></joint>'
        '</robot>')
    robot = urdf.RobotOptions(joints="j=0.5")
    one, many = both(cluster, [tmp_path / "r.urdf"], robot=robot)
    for found in (one, many):
        (pair,) = [p for p in found.pairs if p.violation]
        assert (pair.a, pair.b, pair.allowed, pair.reason) == ("base", "arm", True, "adjacent: joint j")
        assert found.exit_code == 1 and len(found.unchecked) == 1
        assert f"{tmp_path / 'r.urdf'}: pose j=0.5" in found.notes
    assert many.notes == one.notes
    one, many = both(cluster, [tmp_path / "r.urdf"], robot=dataclasses.replace(robot, skip_missing=True))
    assert one.exit_code == many.exit_code == 0


def test_primitive_links_on_the_cluster_as_in_one_process(cluster, tmp_path):
    """A URDF's box, cylinder and sphere links beside a mesh link: the cluster's load task sends
    them as their shapes, and the verdicts and distances are one process's and the analytic
    ones (a sphere of radius 0.25 centred 0.5 + 0.25 + d from the slab's face, at d = 0.1 and
    inside it by 0.05; a box and a cylinder side by side 0.2 apart)."""
    import trimesh

    trimesh.creation.box((1, 1, 1)).export(tmp_path / "slab.stl")
    (tmp_path / "r.urdf").write_text(
        '<robot name="r">'
        '<link name="slab"><collision><geometry><mesh filename="slab.stl"/></geometry></collision></link>'
        '<link name="ball"><collision><origin xyz="0.85 0 0"/><geometry><sphere radius="0.25"/></geometry>'
        '</collision></link>'
        '<link name="sunk"><collision><origin xyz="0 0.7 0"/><geometry><sphere radius="0.25"/></geometry>'
        '</collision></link>'
        '<link name="block"><collision><origin xyz="0 0 3"/><geometry><box size="1 1 1"/></geometry>'
        '</collision></link>'
        '<link name="post"><collision><origin xyz="0.9 0 3"/><geometry><cylinder radius="0.2" length="1"/>'
        '</geometry></collision></link>'
        '<joint name="a" type="fixed"><parent link="slab"/><child link="ball"/></joint>'
        '<joint name="b" type="fixed"><parent link="ball"/><child link="sunk"/></joint>'
        '<joint name="c" type="fixed"><parent link="sunk"/><child link="block"/></joint>'
        '<joint name="d" type="fixed"><parent link="block"/><child link="post"/></joint>'
        '</robot>')
    one, many = both(cluster, [tmp_path / "r.urdf"], clearance=0.5)
    same_json(one, many)
    assert not one.errors and not many.errors
    found = {frozenset((p.a, p.b)): p for p in many.pairs}
    assert found[frozenset(("slab", "ball"))].status is Status.CLEARANCE
    assert found[frozenset(("slab", "ball"))].result.distance == pytest.approx(0.1, abs=1e-9)
    assert found[frozenset(("slab", "sunk"))].status is Status.COLLISION
    assert found[frozenset(("block", "post"))].status is Status.CLEARANCE
    assert found[frozenset(("block", "post"))].result.distance == pytest.approx(0.2, abs=1e-9)


def _step_file(name: str, folder: Path) -> Path:
    """The committed STEP file `name` of tests/data/third_party, unzipped into `folder` if it is
    kept gzipped."""
    import gzip
    import shutil

    path = ROOT / "tests" / "data" / "third_party" / name
    if not name.endswith(".gz"):
        return path
    plain = folder / Path(name).stem
    with gzip.open(path, "rb") as src, open(plain, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return plain


@pytest.mark.parametrize("name", ["step/as1-oc-214.stp", "box_sides.STEP.gz"])
def test_step_assemblies_on_the_cluster_are_refined_as_in_one_process(cluster, tmp_path, name,
                                                                     client_without_parts):
    """A STEP assembly's pairs are refined on OpenCASCADE's solids on the workers, which read
    the STEP file themselves (the client process cannot read it, nor refine or measure a pair),
    the same JSON as one process (the AP214 AS1's 32 bolts in holes and nuts on bolts touching,
    not the 22 collisions the triangles alone show; box_sides' collisions, touching and clear
    pairs)."""
    pytest.importorskip("OCP", reason="STEP needs OpenCASCADE (the cad extra)")
    path = _step_file(name, tmp_path)
    one = pipeline.scan([path], pipeline.Options(jobs=1))
    received = client_without_parts()
    many = pipeline.scan([path], pipeline.Options(dask=cluster[0]))
    same_json(one, many)
    assert any(p.mode == "brep" for p in many.pairs)
    found: list = []
    _parts_in(received, found)
    assert found == [] and "refine" in received
    if "as1" in name:
        assert [p.status for p in many.pairs] == [Status.TOUCHING] * 32


# -- the parts stay on the workers --------------------------------------------------------------------


def _parts_in(value, found: list, depth: int = 0) -> None:
    """Collect the part-like objects in what the client received: a load task's answer or a
    pick of it, packed hulls, a Shape that is a hull, an object with its vertices, a triangle
    hierarchy."""
    from gjkcli.engine.shapes import Shape
    from gjkcli.pipeline import worktasks
    from gjkcli.scene.objects import Geometry

    if depth > 6:
        return
    if isinstance(value, (worktasks.Loaded, worktasks.PackedShapes)):
        found.append(type(value).__name__)
    elif isinstance(value, Shape) and value.kind == "hull":
        found.append("hull Shape")
    elif isinstance(value, Geometry) and value.vertices is not None:
        found.append("Geometry with vertices")
    elif type(value).__name__ == "Mesh":
        found.append("Mesh")
    elif isinstance(value, dict):
        for v in value.values():
            _parts_in(v, found, depth + 1)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _parts_in(v, found, depth + 1)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            _parts_in(getattr(value, f.name), found, depth + 1)


@pytest.fixture
def client_without_parts(monkeypatch):
    """From the call on, the client process cannot build a part or refine a pair: every entry
    to the hulls, the triangle test, the fit-thickness rule, STEP's exact solids, overlap
    volumes and convexity reasons raises here (the workers, other processes, are untouched);
    and everything the client receives of a task is recorded, by stage."""
    from gjkcli.mesh import cad, convexity, overlap
    from gjkcli.pipeline import prepared, refine, stages, tessellated

    def arm():
        def refuse(what):
            def refused(*args, **kwargs):
                raise AssertionError(f"{what} ran on the client")
            return refused

        for module, name in ((stages, "hulls"), (prepared, "geometries"), (prepared, "prepare"),
                             (refine, "triangles"), (refine, "by_thickness"),
                             (tessellated, "decide_all"), (overlap, "overlap"), (overlap, "overlaps"),
                             (cad, "common_volume"), (cad, "read_step"), (convexity, "part_reasons")):
            monkeypatch.setattr(module, name, refuse(f"{module.__name__}.{name}"))
        received: dict = {}
        results = distributed._ClusterRun._results

        def recorded(self, futures, stage, opened=True):
            got = results(self, futures, stage, opened)
            received.setdefault(stage, []).extend(got)
            return got

        monkeypatch.setattr(distributed._ClusterRun, "_results", recorded)
        return received

    return arm


def test_the_parts_are_never_on_the_client(cluster, ring_files, small_tiles, client_without_parts):
    """Rings, pegs and boxes (non-convex parts: the triangle test, collisions with overlap
    volumes, the convexity reasons of listed parts): with every way of building or refining a
    part refused in the client process, the cluster gives one process's JSON, and nothing the
    client received of a task is a part."""
    small_tiles(8)
    address, _ = cluster
    options = dict(mode="auto")
    one = pipeline.scan(ring_files, pipeline.Options(jobs=1, **options))
    received = client_without_parts()
    many = pipeline.scan(ring_files, pipeline.Options(dask=address, **options))
    text = same_json(one, many)
    assert any(p.mode == "exact" for p in many.pairs)
    assert any(p.overlap_volume is not None for p in many.pairs)
    assert '"convexity":' in text and any(o.convexity for o in many.objects if o.convex is False)
    assert {"load", "narrow", "refine", "overlap"} <= set(received)
    found: list = []
    _parts_in(received, found)
    assert found == []
    # the test can fail: the answers of the load tasks themselves are parts
    from gjkcli.pipeline import worktasks

    probe: list = []
    _parts_in({"x": [worktasks.Loaded(), worktasks.PackedShapes.pack([])]}, probe)
    assert probe == ["Loaded", "PackedShapes"]


def test_a_field_held_for_some_pairs_reads_as_the_whole_field_and_refuses_the_others():
    """`_PairRows`: at a pair's index, at (an index, columns) and at an array of indices, the rows
    of the pairs it holds, as the whole field gives them; any other pair is a KeyError, and so is
    every pair of a field that holds none."""
    whole = np.arange(30.0).reshape(10, 3)
    held = np.array([2, 5, 7])
    at = np.full(10, -1, dtype=np.int32)
    at[held] = np.arange(3)
    rows = distributed._PairRows(at, whole[held])
    assert np.array_equal(rows[5], whole[5]) and rows[7, 2] == whole[7, 2]
    assert np.array_equal(rows[np.array([7, 2])], whole[[7, 2]]) and np.array_equal(rows[2, :2], whole[2, :2])
    for missing in (0, np.array([2, 3])):
        with pytest.raises(KeyError):
            rows[missing]
    with pytest.raises(KeyError):
        distributed._PairRows(None, None)[2]


@pytest.mark.parametrize("mode", ["auto", "hull"])
def test_the_client_receives_of_the_tiles_the_facts_and_the_hulls_answers_it_lists(cluster, ring_files, small_tiles,
                                                                                   client_without_parts, mode):
    """The tiles' answers stay on the workers: the client receives each tile's pairs and the
    facts the policy reads, and the rest of an answer (vectors, certificate, the loops' counts)
    only for the pairs a finding lists as their hulls' answer; the JSON is one process's."""
    from gjkcli.pipeline import worktasks

    small_tiles(8)
    address, _ = cluster
    one = pipeline.scan(ring_files, pipeline.Options(jobs=1, mode=mode))
    received = client_without_parts()
    many = pipeline.scan(ring_files, pipeline.Options(dask=address, mode=mode))
    same_json(one, many)
    assert len(received["narrow"]) > 4
    for i, j, candidates, facts in received["narrow"]:
        assert set(facts) <= set(worktasks.TILE_FACTS) and all(len(v) == len(i) for v in facts.values())
    on_hulls = sum(p.mode == "hull" for p in many.pairs)
    assert on_hulls > 0 and (mode == "hull" or any(p.mode == "exact" for p in many.pairs))
    fetched = [len(answer["normal"]) for answer in received["answers"]]
    assert sum(fetched) == on_hulls and len(fetched) > 1
    assert not set(received["answers"][0]) & set(worktasks.TILE_FACTS)
    checked = sum(len(i) for i, _, _, _ in received["narrow"])
    # held as rows of the pairs that have one (auto), or whole fields (hull: most pairs listed)
    assert (4 * on_hulls < checked) == (mode == "auto"), (on_hulls, checked)

@pytest.fixture
def rows_scan(ring_files, small_tiles, monkeypatch):
    """(one process's findings of the rings in exact mode, options for the cluster's scan):
    a listing of many pairs kept as rows (collisions too, 5 with their overlap volumes, the
    others with the limit's note), and the answers each made as it is read, counted
    (`made`) and recorded (`refined`: what `_refined` gave; `received`: what the client
    received of the refinement's tasks)."""
    from gjkcli import limits
    from gjkcli.pipeline import streamed, worktasks

    small_tiles(8)
    options = dict(mode="exact", limits=limits.Limits(overlap_volumes=5))
    monkeypatch.setattr(streamed, "STREAM_FROM", 10 ** 12)
    one = pipeline.scan(ring_files, pipeline.Options(jobs=1, **options))
    monkeypatch.setattr(streamed, "STREAM_FROM", 10)
    seen = {"refined": [], "received": [], "made": []}
    refined, results = distributed._ClusterRun._refined, distributed._ClusterRun._results
    ahead = worktasks.ColumnResults.read_ahead

    def recorded(self, *args):
        seen["refined"].append(refined(self, *args))
        return seen["refined"][-1]

    def received(self, futures, stage, *args, **kwargs):
        got = results(self, futures, stage, *args, **kwargs)
        if stage == "refine":
            seen["received"].extend(got)
        return got

    def making(self, ks, then=None):
        seen["made"].extend(np.asarray(ks).tolist())
        return ahead(self, ks, then)

    monkeypatch.setattr(distributed._ClusterRun, "_refined", recorded)
    monkeypatch.setattr(distributed._ClusterRun, "_results", received)
    monkeypatch.setattr(worktasks.ColumnResults, "read_ahead", making)
    return one, options, seen


def test_the_client_receives_the_refined_answers_facts_and_a_report_fetches_the_answers_a_page_at_a_time(
        cluster, ring_files, rows_scan, monkeypatch):
    """Within `reporting` (as the command line writes its reports), the client receives of the
    triangle test's answers only the facts the listing reads; the scan ends without an answer
    fetched or made (the overlap stage reads a row's objects and status, not its answer), and
    the report fetches them from the workers in pages of its order, never more than a page
    and a block at once; the workers let them go at the block's end; the JSON is one
    process's."""
    from gjkcli.pipeline import findings

    one, options, seen = rows_scan
    monkeypatch.setattr(distributed, "ANSWER_PAGE", 8)
    monkeypatch.setattr(findings, "READ_AHEAD", 4)
    pages: list = []
    fetched = distributed._WorkerAnswers._fetched

    def counted(self, ks, asked):
        pages.append(len(ks))
        return fetched(self, ks, asked)

    monkeypatch.setattr(distributed._WorkerAnswers, "_fetched", counted)
    address, _ = cluster
    with pipeline.reporting():
        many = pipeline.scan(ring_files, pipeline.Options(dask=address, **options))
        assert pages == [] and seen["made"] == []  # nothing of an answer but its facts yet
        answers = seen["refined"][0]
        assert answers._futures  # still on the workers
        text = same_json(one, many)
    assert [type(a) for a in seen["refined"]] == [distributed._WorkerAnswers] and len(answers) > 20
    assert all(type(r) is tuple and len(r) == 6 for r in seen["received"])  # `refined_facts`, no answer
    # each listed pair's answer fetched and made once, as the report wrote it (not those the
    # triangles found clear: no finding)
    made = seen["made"]
    assert answers._local is None and sum(pages) == len(made) == len(set(made)) and set(made) <= set(answers)
    assert max(pages) <= 8 and len(pages) > 3 and len(made) > 20
    assert answers._futures == []  # let go as the block ended
    assert many.pairs.exact_rows > 20 and many.pairs.row_violations > 5
    assert '"overlap_volume":null' in text and "deepest collisions" in text
    assert many.exit_code == one.exit_code == 1 and many.failure_count == len(one.failures)


def test_without_a_report_reading_them_on_the_cluster_the_refined_answers_are_fetched_as_the_scan_ends(
        cluster, ring_files, rows_scan):
    """Outside `reporting` (the Python API), the cluster closes with the scan: every answer is
    fetched before it does, kept by columns, none made until a report reads its pair (a block
    at a time); the JSON is one process's."""
    from gjkcli.pipeline import worktasks

    one, options, seen = rows_scan
    address, _ = cluster
    many = pipeline.scan(ring_files, pipeline.Options(dask=address, **options))
    answers = seen["refined"][0]
    assert type(answers._local) is worktasks.ColumnResults and answers._futures == []
    assert seen["made"] == []
    same_json(one, many)
    made = seen["made"]
    assert len(made) == len(set(made)) > 20 and set(made) <= set(answers)


def test_the_convexity_reasons_are_asked_before_the_refinement_in_small_tasks_and_once(cluster, ring_files,
                                                                                      small_tiles, monkeypatch):
    """The workers measure the listed parts' convexity reasons while they refine: every reasons
    task is submitted before the refinement's, below it in priority and in tasks of a few
    parts (a worker free for the refinement soon), no part is asked for twice, and the JSON is
    one process's."""
    small_tiles(8)
    monkeypatch.setattr(distributed, "AHEAD_PARTS_MIN", 2)
    address, _ = cluster
    events: list = []
    submit = distributed._ClusterRun._per_load_tasks
    refined = distributed._ClusterRun._refined

    def submitting(self, task, objects, **kwargs):
        events.append((task.__name__, [int(k) for k in objects], kwargs))
        return submit(self, task, objects, **kwargs)

    def refining(self, *args, **kwargs):
        events.append(("refine", [], {}))
        return refined(self, *args, **kwargs)

    monkeypatch.setattr(distributed._ClusterRun, "_per_load_tasks", submitting)
    monkeypatch.setattr(distributed._ClusterRun, "_refined", refining)
    one = pipeline.scan(ring_files, pipeline.Options(jobs=1, mode="auto"))
    events.clear()
    many = pipeline.scan(ring_files, pipeline.Options(dask=address, mode="auto"))
    text = same_json(one, many)
    assert '"convexity":' in text
    kinds = [kind for kind, _, _ in events]
    assert "reasons" in kinds and kinds.index("reasons") < kinds.index("refine")
    ahead = events[kinds.index("reasons")][2]
    assert ahead["priority"] < 0 and ahead["most"] == 2
    asked = [k for kind, rows, _ in events if kind == "reasons" for k in rows]
    assert asked and len(asked) == len(set(asked))


def test_overlap_solids_reach_the_client_only_when_grouping_or_pictures_read_them(cluster, ring_files,
                                                                                    small_tiles):
    """The overlap volumes are one process's either way; the solids themselves (for pictures, and
    for grouping's clash centres) are sent to the client only by a run that reads them: grouped,
    the groups are one process's."""
    small_tiles(8)
    one, many = both(cluster, ring_files, mode="auto")
    same_json(one, many)
    assert any(p.overlap_mesh is not None for p in one.pairs)
    assert any(p.overlap_volume is not None for p in many.pairs)
    assert all(p.overlap_mesh is None for p in many.pairs)
    one, many = both(cluster, ring_files, mode="auto", group_within=0.5)
    text = same_json(one, many)
    assert '"groups":' in text  # each group's centre: its overlap solids' centroid
    assert any(p.overlap_mesh is not None for p in many.pairs)


def test_a_load_summary_holds_names_and_boxes_with_each_hulls_facts_once(convex_files):
    """What a load task sends the client grows with its parts by their names, boxes and counts
    only: equal hull facts (kind, vertex count, dimension) are one object, pickled once; the
    facts are each hull's; no vertex, face or hull travels."""
    import pickle

    from gjkcli import limits
    from gjkcli.pipeline import worktasks
    from gjkcli.scene.objects import Source

    loaded = worktasks.load(Source(path=convex_files[0], shown=str(convex_files[0])), False, limits.DEFAULT)
    got = pickle.loads(pickle.dumps(loaded.summary()))  # as the client receives it
    n = got.count
    assert n > 100 and got.lo.shape == (n, 3) and got.counts.shape == (n, 2)
    facts = [s for s in got.shapes if isinstance(s, worktasks.HullFacts)]
    assert len(facts) == n
    assert len({id(f) for f in facts}) == len(set(facts)) < n // 4
    shapes = loaded.shapes.unpack()
    assert [(f.kind, f.n_vertices, f.dimension) for f in facts] == \
        [(s.kind, len(s.vertices), s.dimension) for s in shapes]
    found: list = []
    _parts_in(got, found)
    assert found == [] and all(g.vertices is None for g in got.geometries(3))
    assert {g.source for g in got.geometries(3)} == {3}


def test_pictures_of_a_dask_scan_draw_each_part_as_one_process(cluster, ring_files, small_tiles,
                                                               client_without_parts):
    """With pictures asked for (`Options.pictures`, what --png and --html set), a Dask scan's
    client fetches the drawn parts' triangles from the workers: the HTML's objects (names,
    colours, triangles) and the PNGs' triangles are one process's, each part its real triangles
    (a ring's 64, not its box's 12), the first PNG the same bytes; with the PNGs alone, the
    client receives the triangles of the first violations' objects and of no other; and it
    still builds or refines no part."""
    import functools

    from gjkcli.report.pictures import choose, read_by_pictures
    from gjkcli.report.png import scan_pngs

    small_tiles(8)
    address, _ = cluster
    pictures = functools.partial(read_by_pictures, html=True, pngs=100)
    one = pipeline.scan(ring_files, pipeline.Options(jobs=1, mode="auto", pictures=pictures))
    received = client_without_parts()
    many = pipeline.scan(ring_files, pipeline.Options(dask=address, mode="auto", pictures=pictures))
    same_json(one, many)
    drawn, got = choose(one), choose(many)
    assert (drawn.names, drawn.role, drawn.colours) == (got.names, got.role, got.colours)
    assert all(m is not None for m in got.meshes)
    for (V, F), (W, G) in zip(drawn.meshes, got.meshes):
        assert np.array_equal(V, W) and np.array_equal(F, G)
    assert max(len(m[1]) for m in got.meshes) > 12  # a ring's triangles, not a box's
    violations = [p for p in many.pairs if p.violation]
    assert len(violations) > 3
    for name in {n for p in violations for n in (p.a, p.b)}:
        (V, F), (W, G) = one.triangles(name), many.triangles(name)
        assert np.array_equal(V, W) and np.array_equal(F, G)
    assert next(scan_pngs(one)) == next(scan_pngs(many))
    found: list = []
    _parts_in(received, found)
    assert found == [] and received["pictures"]

    # the PNGs of the first three violations only: their objects' triangles, no other's
    received.clear()
    few = pipeline.scan(ring_files, pipeline.Options(dask=address, mode="auto",
                                                     pictures=functools.partial(read_by_pictures, pngs=3)))
    wanted = {n for p in violations[:3] for n in (p.a, p.b)}
    assert sum(len(got) for got in received["pictures"]) == len(wanted)
    for name in wanted:
        assert np.array_equal(few.triangles(name)[1], one.triangles(name)[1])
    others = [n for p in violations for n in (p.a, p.b) if n not in wanted]
    assert others and all(few.triangles(n) is None for n in others)  # on the workers still


def test_a_worker_killed_during_refinement_loses_nothing(doomed, ring_files, small_tiles, tmp_path):
    """The first triangle test on the cluster kills its own worker process (once: a marker file
    made with O_EXCL); Dask runs its task again, and the JSON is one process's."""
    address, client = doomed
    small_tiles(8)
    marker = tmp_path / "killed"
    patch = dying_once("gjkcli.pipeline.refine", "triangles", marker)
    before = set(client.run(os.getpid).values())
    one = pipeline.scan(ring_files, pipeline.Options(jobs=1, mode="exact"))
    client.run(exec, patch, {})
    many = pipeline.scan(ring_files, pipeline.Options(dask=address, mode="exact"))
    assert marker.exists() and int(marker.read_text()) in before  # a worker died mid-refinement
    assert int(marker.read_text()) not in set(client.run(os.getpid).values())
    same_json(one, many)
    assert any(p.mode == "exact" for p in many.pairs)


def test_a_cached_dask_scan_of_a_changed_part_is_one_process_scan(cluster, tmp_path, small_tiles):
    """With a cache, a Dask scan, then the same scan after a ring grew under its name (its
    pairs' triangle tests and overlap volumes change): one process's JSON each time, never the
    answers the cache kept for the ring's old shape (the client holds no triangles to key the
    parts by, so its pairs are not kept), and a warm cache's run completes."""
    import trimesh

    from gjkcli.pipeline.cache import Cache

    def write(path, radius):
        scene = trimesh.Scene()
        scene.add_geometry(trimesh.creation.annulus(r_min=0.6, r_max=radius, height=0.4, sections=16),
                           node_name="ring", geom_name="ring")
        peg = trimesh.creation.cylinder(radius=0.25, height=2.0, sections=8)
        for k, x in enumerate((0.55, 0.8, -0.7)):
            scene.add_geometry(peg, node_name=f"peg{k}", geom_name=f"peg{k}",
                               transform=trimesh.transformations.translation_matrix([x, 0.1 * k, 0.0]))
        path.write_bytes(scene.export(file_type="glb"))

    small_tiles(2)
    address, _ = cluster
    path = tmp_path / "ring.glb"
    cache = Cache(tmp_path / "cache")
    for radius in (1.0, 1.0, 0.9):
        write(path, radius)
        one = pipeline.scan([path], pipeline.Options(jobs=1, mode="exact"))
        many = pipeline.scan([path], pipeline.Options(dask=address, mode="exact", cache=cache))
        same_json(one, many)
        assert any(p.overlap_volume for p in many.pairs) and any(p.mode == "exact" for p in many.pairs)


def test_an_ifc_model_split_by_elements_across_the_workers(cluster, monkeypatch, client_without_parts):
    """An IFC model meshed in a task per worker, each IfcOpenShell's iterator over a share of
    its elements (the file opened by each; elements dealt over the whole file) and building their
    hulls there: one process's JSON (its doors and windows in their walls' openings allowed, its
    collisions refined on the triangles)."""
    pytest.importorskip("ifcopenshell", reason="IFC needs IfcOpenShell (the ifc extra)")
    from gjkcli.mesh import ifc

    path = ROOT / "tests" / "data" / "third_party" / "project0-openings.ifc"
    address, _ = cluster
    monkeypatch.setattr(distributed, "IFC_SPLIT_FROM_BYTES", 0)
    one = pipeline.scan([path], pipeline.Options(jobs=1))
    received = client_without_parts()
    monkeypatch.setattr(ifc, "read", lambda *a, **k: pytest.fail("the client read the IFC model"))
    from distributed import get_task_stream

    with get_task_stream(client=cluster[1]) as stream:
        many = pipeline.scan([path], pipeline.Options(dask=address))
    same_json(one, many)
    # two shares of the one file, each meshed and its hulls built in a task of its own (no task
    # gathers the shares' meshes on one worker)
    loads = [r for r in stream.data if str(r["key"]).startswith("gjk-load-")]
    assert len(loads) == 2 and len(received["load"]) == 2
    assert not [r for r in stream.data if str(r["key"]).startswith("gjk-read-")]
    assert one.counts["collision"] > 0 and any(p.allowed for p in one.pairs)
    # the shares are the model's elements, each once, dealt over the file: joined in its order
    model = ifc.read_here(path)
    halves = [ifc.read_share(path, k, 2) for k in range(2)]
    assert all(len(h.parts) < len(model.parts) for h in halves)
    joined = sorted((p for h in halves for p in h.parts), key=lambda p: p[3].step)
    assert [p[0] for p in joined] == [p[0] for p in model.parts]


@pytest.mark.parametrize("name", ["step/as1-oc-214.stp", "box_sides.STEP.gz"])
def test_a_step_assembly_split_by_products_across_the_workers(cluster, monkeypatch, tmp_path, name,
                                                             client_without_parts):
    """A STEP assembly read in a task per worker, each OpenCASCADE's read of the file and the
    meshing of a share of its products (every instance of a product in the same share, so that
    its hull is built once), its pairs refined on the workers: one process's JSON. The shares
    are the file's solids, each once, the same parts as the whole file's read, joined in its
    order."""
    pytest.importorskip("OCP", reason="STEP needs OpenCASCADE (the cad extra)")
    from distributed import get_task_stream

    from gjkcli.mesh.load import read_objects

    path = _step_file(name, tmp_path)
    whole = read_objects(path)
    halves = [read_objects(path, share=(k, 2)) for k in range(2)]
    assert all(0 < len(h) < len(whole) for h in halves)
    joined = sorted((p for h in halves for p in h), key=lambda p: p.brep[0].index)
    assert [p.name for p in joined] == [p.name for p in whole]
    assert all(np.array_equal(a.vertices, b.vertices) and np.array_equal(a.faces, b.faces)
               and a.eps == b.eps and a.brep == b.brep for a, b in zip(joined, whole))
    products = [{p.instance.key for p in h if p.instance is not None} for h in halves]
    assert products[0] and products[1] and not products[0] & products[1]

    monkeypatch.setattr(distributed, "STEP_SPLIT_FROM_BYTES", 0)
    one = pipeline.scan([path], pipeline.Options(jobs=1))
    received = client_without_parts()
    with get_task_stream(client=cluster[1]) as stream:
        many = pipeline.scan([path], pipeline.Options(dask=cluster[0]))
    same_json(one, many)
    loads = [r for r in stream.data if str(r["key"]).startswith("gjk-load-")]
    assert len(loads) == 2 and len(received["load"]) == 2
    assert any(p.mode == "brep" for p in many.pairs)


def test_shares_failed_elements_are_listed_in_one_process_s_order(cluster, monkeypatch, tmp_path):
    """An IFC model whose failed elements fall in both shares (each share lists its own): the
    cluster lists them, with the rest of the report, as one process does."""
    pytest.importorskip("ifcopenshell", reason="IFC needs IfcOpenShell (the ifc extra)")
    import ifcopenshell

    from ifc_models import Box, write_model

    boxes = [Box("IfcBeam", f"B{k}", (0, 0, 1000 * k), (3000, 200, 300 + 20 * k)) for k in range(8)]
    boxes.append(Box("IfcColumn", "C", (1000, 0, 0), (200, 200, 8000)))  # through every beam
    path = write_model(tmp_path / "m.ifc", boxes)
    model = ifcopenshell.open(str(path))
    for k in (1, 2, 5):  # no solid is extruded by nothing
        beam = model.by_guid(boxes[k].guid)
        next(i for i in model.traverse(beam.Representation) if i.is_a("IfcExtrudedAreaSolid")).Depth = 0.0
    model.write(str(path))
    monkeypatch.setattr(distributed, "IFC_SPLIT_FROM_BYTES", 0)
    one = pipeline.scan([path], pipeline.Options(jobs=1))
    many = pipeline.scan([path], pipeline.Options(dask=cluster[0]))
    same_json(one, many)
    assert [e.message.split(":")[0] for e in one.errors] == [f"element IfcBeam 'B{k}' {boxes[k].guid}"
                                                            for k in (1, 2, 5)]
    assert one.counts["collision"] == 5


def test_shares_elements_cut_away_whole_are_noted_in_one_process_s_order(cluster, monkeypatch, tmp_path):
    """An IFC model whose walls its openings cut away whole fall in both shares (each share
    notes its own): the cluster notes them, with the rest of the report, as one process does."""
    pytest.importorskip("ifcopenshell", reason="IFC needs IfcOpenShell (the ifc extra)")
    from ifc_models import cut_away_model

    path, boxes = cut_away_model(tmp_path / "frames.ifc", frames=4)
    monkeypatch.setattr(distributed, "IFC_SPLIT_FROM_BYTES", 0)
    one = pipeline.scan([path], pipeline.Options(jobs=1))
    many = pipeline.scan([path], pipeline.Options(dask=cluster[0]))
    same_json(one, many)
    assert not one.errors
    assert [n.split(": ")[1] for n in one.notes if "cut its body away" in n] == [
        f"element IfcWall 'Frame {k}' {boxes[3 * k].guid}" for k in range(4)]


def test_a_cluster_scan_neither_reads_nor_writes_the_cache(cluster, ring_files, tmp_path):
    """A scan on the cluster with a cache that one process filled, of parts since moved under
    the same names: the answers are those of the moved parts, as one process without a cache
    gives them (the client holds no triangles to key a pair by), and nothing is written."""
    import shutil

    import trimesh

    from gjkcli.pipeline.cache import Cache

    address, _ = cluster
    paths = [shutil.copy(p, tmp_path / p.name) for p in ring_files]
    store = tmp_path / "cache"
    pipeline.scan(paths, pipeline.Options(jobs=1, mode="auto", cache=Cache(store)))
    kept = sorted(p.relative_to(store) for p in store.rglob("*") if p.is_file())
    assert kept  # the one-process run kept its answers
    for path in paths:  # every part moved 0.1 along x, its name kept
        scene = trimesh.load(path, force="scene")
        for k, node in enumerate(sorted(scene.graph.nodes_geometry)):
            matrix, geometry = scene.graph[node]
            moved = matrix.copy()
            moved[0, 3] += 0.1 * (k % 3)
            scene.graph.update(frame_to=node, matrix=moved, geometry=geometry)
        Path(path).write_bytes(scene.export(file_type="glb"))
    fresh = pipeline.scan(paths, pipeline.Options(jobs=1, mode="auto"))
    many = pipeline.scan(paths, pipeline.Options(dask=address, mode="auto", cache=Cache(store)))
    same_json(fresh, many)
    assert sorted(p.relative_to(store) for p in store.rglob("*") if p.is_file()) == kept


def test_the_client_never_imports_a_reader_s_kernel(cluster, tmp_path):
    """The client of a Dask scan of an IFC model split across the workers and of a STEP
    assembly refined on OpenCASCADE's solids imports neither IfcOpenShell nor OpenCASCADE
    (OCP): the workers read the files; nor the building of a prepared scene's parts
    (`gjkcli.pipeline.prepared`), where no part is wound inwards, nor the triangle test and its
    compiled core (`gjkcli.engine.exact`) to read the refined pairs' answers."""
    pytest.importorskip("ifcopenshell", reason="IFC needs IfcOpenShell (the ifc extra)")
    pytest.importorskip("OCP", reason="STEP needs OpenCASCADE (the cad extra)")
    data = ROOT / "tests" / "data" / "third_party"
    code = ("import sys\n"
            "from gjkcli.pipeline import distributed, run\n"
            "distributed.IFC_SPLIT_FROM_BYTES = 0\n"
            "for path in sys.argv[2:]:\n"
            "    found = run.scan([path], run.Options(dask=sys.argv[1]))\n"
            "    assert found.pairs and not found.errors, path\n"
            "    print(path, sorted({p.mode for p in found.pairs}))\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('ifcopenshell', 'OCP')\n"
            "             or m in ('gjkcli.pipeline.prepared', 'gjkcli.engine.exact')))\n")
    done = subprocess.run([sys.executable, "-c", code, cluster[0], str(data / "project0-openings.ifc"),
                           str(data / "step" / "as1-oc-214.stp")],
                          cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.strip().splitlines()
    assert "'exact'" in lines[0]  # the model's pairs were refined on the triangles
    assert "'brep'" in lines[1]  # the STEP pairs were refined on the exact solids
    assert lines[-1] == "[]", done.stdout


def counting_parses() -> str:
    """Code for `client.run(exec, code, {})`: the worker's glTF reader counts the documents it
    parses (`gjkcli.mesh.gltf._json_document` calls) in `gltf.parsed_in_test`, from 0."""
    return """
from gjkcli.mesh import gltf
if not hasattr(gltf, "kept_json_document"):
    gltf.kept_json_document = gltf._json_document
gltf.parsed_in_test = 0
def counted(*args, **kwargs):
    gltf.parsed_in_test += 1
    return gltf.kept_json_document(*args, **kwargs)
gltf._json_document = counted
"""


def parses(client) -> dict:
    """{worker address: documents parsed since `counting_parses`}."""
    return client.run(eval, "__import__('gjkcli.mesh.gltf', fromlist=['gltf']).parsed_in_test")


def test_one_glb_split_into_node_ranges_across_tasks(cluster, tmp_path, monkeypatch, small_tiles,
                                                     client_without_parts):
    """One GLB read by four load tasks, two a worker (by default), each placing a range of its
    nodes: a ring, a peg and a box each placed once in every range (a shared mesh whose hull one
    process prepares once and moves; a range sees one placement of it, and still moves the
    shared hull): one process's JSON. A worker parses the file's document once for both its
    ranges (counted by a spy in the worker processes)."""
    import trimesh
    from distributed import get_task_stream

    from gjkcli.mesh.load import read_objects

    rng = np.random.default_rng(23)
    scene = trimesh.Scene()
    for k in range(12):
        mesh = (trimesh.creation.annulus(r_min=0.6, r_max=1.0, height=0.4, sections=16),
                trimesh.creation.cylinder(radius=0.25, height=2.0, sections=8),
                trimesh.creation.box([0.5, 0.5, 0.5]))[k % 3]
        T = trimesh.transformations.random_rotation_matrix(rng.uniform(size=3))
        T[:3, 3] = rng.uniform(0, 2.5, size=3)
        scene.add_geometry(mesh, node_name=f"obj{k:02d}", geom_name=f"g{k:02d}", transform=T)
    ring_files = [tmp_path / "shared.glb"]
    ring_files[0].write_bytes(scene.export(file_type="glb"))
    address, client = cluster
    small_tiles(8)
    monkeypatch.setattr(distributed, "GLTF_SPLIT_FROM_BYTES", 0)
    assert distributed.GLTF_TASKS_PER_WORKER == 2  # four ranges on two workers
    ones = [pipeline.scan(ring_files[:1], pipeline.Options(jobs=1, mode="auto", together=together))
            for together in (True, False)]
    received = client_without_parts()
    for together, one in zip((True, False), ones):
        received.clear()
        client.run(exec, counting_parses(), {})
        with get_task_stream(client=client) as stream:
            many = pipeline.scan(ring_files[:1], pipeline.Options(dask=address, mode="auto", together=together))
        same_json(one, many)
        loads = [r for r in stream.data if str(r["key"]).startswith("gjk-load-")]
        assert len(received["load"]) == len(loads) == 4
        assert all(got.count > 0 for got in received["load"])
        per_worker = {w: sum(r["worker"] == w for r in loads) for w in client.nthreads()}
        # two ranges a worker as Dask deals them (2 and 2 in every run here; its balancing may
        # move one): every worker reads, each parsing the document once
        assert sum(per_worker.values()) == 4 and min(per_worker.values()) >= 1
        assert parses(client) == {w: 1 for w in per_worker}  # its document parsed once a worker
        # the workers dropped the documents once the file was loaded
        assert client.run(eval, "__import__('gjkcli.mesh.gltf', fromlist=['gltf']).kept_documents()") \
            == {w: 0 for w in per_worker}
    assert any(p.mode == "exact" for p in many.pairs) and many.counts["collision"] > 0
    # the ranges are the file's nodes, each once, in order; shared meshes know the whole file's count
    whole = read_objects(ring_files[0])
    ranges = [read_objects(ring_files[0], share=(k, 4)) for k in range(4)]
    assert [p.name for r in ranges for p in r] == [p.name for p in whole]
    shared = [p for r in ranges for p in r if p.instance is not None]
    assert shared and all(p.instance.placed == sum(q.instance is not None and q.instance.key == p.instance.key
                                                   for q in whole) for p in shared)
    assert [p.instance is not None for r in ranges for p in r] == [p.instance is not None for p in whole]


def test_a_glb_range_reads_only_its_nodes_meshes(cluster, convex_files, tmp_path, monkeypatch):
    """A GLB whose meshes are all distinct (no two alike): each range reads its own nodes' meshes
    only, and gives the parts the whole file's read gives for those nodes, bit for bit; the
    cluster's JSON is one process's. A file whose meshes are shared or alike reads them all."""
    import trimesh

    from gjkcli import limits
    from gjkcli.mesh import gltf
    from gjkcli.mesh.load import read_objects

    path = convex_files[0]
    limit = limits.DEFAULT.triangles
    whole = read_objects(path, prefix="p")
    count = len(whole)
    ranges = []
    for k in range(3):
        total, nodes, meshes = gltf.read_share(path, k, 3, limit)
        assert total == count and len(meshes) == len(nodes) == (k + 1) * count // 3 - k * count // 3
        ranges.append(read_objects(path, prefix="p", share=(k, 3)))
    got = [p for r in ranges for p in r]
    assert [p.name for p in got] == [p.name for p in whole]
    for p, q in zip(got, whole):
        assert p.vertices.tobytes() == q.vertices.tobytes() and p.faces.tobytes() == q.faces.tobytes()
        assert p.instance is None and q.instance is None
    assert gltf.read_share(path, 0, 3, count) is None  # the whole file may hold more triangles
    # a mesh two nodes place: the range cannot tell alone
    scene = trimesh.Scene()
    box = trimesh.creation.box([0.5, 0.5, 0.5])
    for k in range(4):
        scene.add_geometry(box, node_name=f"b{k}", geom_name="box",
                           transform=trimesh.transformations.translation_matrix([k, 0, 0]))
    shared = tmp_path / "shared.glb"
    shared.write_bytes(scene.export(file_type="glb"))
    assert gltf.read_share(shared, 0, 2, limit) is None
    address, _ = cluster
    monkeypatch.setattr(distributed, "GLTF_SPLIT_FROM_BYTES", 0)
    one = pipeline.scan([path], pipeline.Options(jobs=1))
    many = pipeline.scan([path], pipeline.Options(dask=address))
    same_json(one, many)
    assert many.counts["collision"] > 0


@pytest.mark.parametrize("kind", ["ifc", "step"])
def test_a_worker_killed_while_meshing_a_share_loses_nothing(doomed, monkeypatch, tmp_path, kind):
    """The first share of an IFC model's elements, or of a STEP assembly's products, that a
    worker meshes kills its own worker process (once: a marker file made with O_EXCL); Dask
    runs the load task again, and the JSON is one process's."""
    module, reader, path = {
        "ifc": ("ifcopenshell", ("gjkcli.mesh.ifc", "read_share"), "project0-openings.ifc"),
        "step": ("OCP", ("gjkcli.mesh.cad", "read_step"), "step/as1-oc-214.stp")}[kind]
    pytest.importorskip(module, reason=f"{kind.upper()} needs {module}")
    address, client = doomed
    path = ROOT / "tests" / "data" / "third_party" / path
    monkeypatch.setattr(distributed, "IFC_SPLIT_FROM_BYTES", 0)
    monkeypatch.setattr(distributed, "STEP_SPLIT_FROM_BYTES", 0)
    marker = tmp_path / "killed"
    patch = dying_once(*reader, marker)
    before = set(client.run(os.getpid).values())
    one = pipeline.scan([path], pipeline.Options(jobs=1))
    client.run(exec, patch, {})
    many = pipeline.scan([path], pipeline.Options(dask=address))
    assert marker.exists() and int(marker.read_text()) in before  # a worker died meshing
    same_json(one, many)
    assert one.counts["collision" if kind == "ifc" else "touching"] > 0


def test_robot_poses_in_chunks_on_the_workers(cluster, tmp_path):
    """A robot at 31 poses (an arm swinging into a post at some of them): the poses run in
    chunks on the workers, each preparing the robot itself, and the report is one process's
    (the pose of each finding, the records made once at the first pose)."""
    import trimesh

    from gjkcli.scene import urdf

    trimesh.creation.box((1, 1, 0.2)).export(tmp_path / "slab.stl")
    trimesh.creation.box((0.2, 0.2, 1)).export(tmp_path / "rod.stl")
    trimesh.creation.annulus(r_min=0.1, r_max=0.3, height=0.8, sections=12).export(tmp_path / "post.stl")
    mesh = '<geometry><mesh filename="{}"/></geometry>'
    (tmp_path / "r.urdf").write_text(
        '<robot name="r">'
        f'<link name="base"><collision>{mesh.format("slab.stl")}</collision></link>'
        f'<link name="arm"><collision><origin xyz="0 0 0.6"/>{mesh.format("rod.stl")}</collision></link>'
        f'<link name="post"><collision><origin xyz="0.7 0 0.6"/>{mesh.format("post.stl")}</collision></link>'
        '<joint name="j" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 1 0"/>'
        '<limit lower="-2" upper="2"/></joint>'
        '<joint name="m" type="fixed"><parent link="base"/><child link="post"/></joint>'
        '</robot>')
    table = tmp_path / "poses.csv"
    table.write_text("j\n" + "".join(f"{v:.17g}\n" for v in np.linspace(-1.5, 1.5, 31)))
    address, client = cluster
    robot = urdf.RobotOptions(poses=str(table))
    one = pipeline.scan([tmp_path / "r.urdf"], pipeline.Options(jobs=1, robot=robot))
    same_json(one, pipeline.scan([tmp_path / "r.urdf"], pipeline.Options(jobs=2, robot=robot)))
    from distributed import get_task_stream

    with get_task_stream(client=client) as stream:
        many = pipeline.scan([tmp_path / "r.urdf"], pipeline.Options(dask=address, robot=robot))
    same_json(one, many)
    assert len([r for r in stream.data if str(r["key"]).startswith("gjk-poses-")]) == 4
    hits = {p.waypoint for p in one.pairs if p.status is Status.COLLISION}
    assert 2 <= len(hits) <= 25  # some poses collide, others do not


def test_a_long_all_pairs_listing_on_the_cluster_is_one_process_json_in_rows(cluster, tmp_path, small_tiles):
    """--all-pairs over 28,680 pairs (a clearance wider than the scene): the client keeps the
    plain pairs as rows (`gjkcli.pipeline.streamed`), the JSON written row by row is one
    process's byte for byte, and each further pair costs the client a bounded number of bytes
    (tracemalloc, the slope between two sizes: a Finding a pair cost about 1,600)."""
    from gjkcli.pipeline.findings import ListedPairs
    from gjkcli.report.jsonout import encoded

    sys.path.insert(0, str(Path(__file__).parent))
    try:
        from test_streamed_pairs import BYTES_PER_PAIR, WRITER_BYTES, client_bytes
    finally:
        sys.path.pop(0)
    small_tiles(40)
    scenes = {n: make_scene_module().make(n, tmp_path / f"s{n}.glb", seed=7) for n in (120, 240)}
    options = dict(all_pairs=True, clearance=1000.0, fail_on=("collision",))
    one, many = both(cluster, [scenes[240]], **options)
    assert isinstance(many.pairs, ListedPairs) and len(many.pairs) == 240 * 239 // 2
    assert b"".join(encoded(one, timings=False)) == b"".join(encoded(many, timings=False))
    address, _ = cluster
    small = client_bytes(scenes[120], tmp_path / "small.json", dask=address)
    large = client_bytes(scenes[240], tmp_path / "large.json", dask=address)
    per_pair = (large[1] - small[1]) / (large[0] - small[0])
    assert per_pair < BYTES_PER_PAIR, f"{per_pair:.0f} bytes a pair"
    assert small[2] < WRITER_BYTES and large[2] < WRITER_BYTES


def _arm_and_post(tmp_path, waypoints: int, post_apart: bool):
    """An arm swinging about y past a post (a ring: not its hull), as a URDF; the post a link of
    the robot, or (post_apart) a scene object of its own STL file; a waypoint table."""
    import trimesh

    trimesh.creation.box((1, 1, 0.2)).export(tmp_path / "slab.stl")
    trimesh.creation.box((0.2, 0.2, 1)).export(tmp_path / "rod.stl")
    post = trimesh.creation.annulus(r_min=0.1, r_max=0.3, height=0.8, sections=12)
    mesh = '<geometry><mesh filename="{}"/></geometry>'
    links = (f'<link name="base"><collision>{mesh.format("slab.stl")}</collision></link>'
             f'<link name="arm"><collision><origin xyz="0 0 0.6"/>{mesh.format("rod.stl")}</collision></link>'
             '<joint name="j" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 1 0"/>'
             '<limit lower="-2" upper="2"/></joint>')
    inputs = [tmp_path / "r.urdf"]
    if post_apart:
        post.apply_translation((0.7, 0, 0.6))
        post.export(tmp_path / "post_part.stl")
        inputs.append(tmp_path / "post_part.stl")
    else:
        post.export(tmp_path / "post.stl")
        links += (f'<link name="post"><collision><origin xyz="0.7 0 0.6"/>{mesh.format("post.stl")}'
                  '</collision></link><joint name="m" type="fixed"><parent link="base"/><child link="post"/></joint>')
    (tmp_path / "r.urdf").write_text(f'<robot name="r">{links}</robot>')
    table = tmp_path / "waypoints.csv"
    table.write_text("j\n" + "".join(f"{v:.17g}\n" for v in np.linspace(-1.5, 1.5, waypoints)))
    return inputs, table


@pytest.mark.parametrize("post_apart, clearance", [(False, None), (True, None), (True, 0.4)])
def test_a_trajectory_s_motions_in_ranges_on_the_workers(cluster, tmp_path, post_apart, clearance):
    """--trajectory: the motions between waypoints run in ranges on the workers, each task
    building the motion (and the scan's other objects) itself, and the report is one
    process's: the same contacts between waypoints (segment, t), in the same order; with a
    clearance, the same poses closer than it."""
    from distributed import get_task_stream

    from gjkcli.scene import urdf

    inputs, table = _arm_and_post(tmp_path, 9 if post_apart else 13, post_apart)
    address, client = cluster
    robot = urdf.RobotOptions(trajectory=str(table))
    one = pipeline.scan(inputs, pipeline.Options(jobs=1, robot=robot, clearance=clearance))
    with get_task_stream(client=client) as stream:
        many = pipeline.scan(inputs, pipeline.Options(dask=address, robot=robot, clearance=clearance))
    same_json(one, many)
    if clearance is not None:
        closer = [p for p in one.pairs if p.segment is not None and p.status.value == "clearance"]
        assert closer and all(p.result.distance < clearance for p in closer)
    ranges = [r for r in stream.data if str(r["key"]).startswith("gjk-segments-")]
    assert len(ranges) == 4  # two a worker
    moving = [p for p in one.pairs if p.segment is not None]
    assert moving and min(p.segment for p in moving) > 0  # found by a task past the first
    names = {p.a for p in moving} | {p.b for p in moving}
    assert any("arm" in n for n in names) and any("post" in n for n in names)


def test_collision_matrix_samples_on_the_workers(cluster, panda_package, monkeypatch):
    """`gjk collision-matrix --dask`: each chunk's samples split over the workers, each building
    the Panda's checker once; the matrix (every pair's hits included) and the audit's
    counterexamples are one process's."""
    from distributed import get_task_stream

    from gjkcli.pipeline import matrix as matrices
    from gjkcli.scene import urdf
    from gjkcli.scene.manifest import read_srdf

    path = panda_package / "urdf" / "panda.urdf"
    srdf = panda_package / "urdf" / "panda.srdf"
    robot = urdf.load(path)
    monkeypatch.setattr(matrices, "CHUNK", 300)
    address, client = cluster
    one = matrices.collision_matrix(robot, samples=1200, seed=5)
    with get_task_stream(client=client) as stream:
        many = matrices.collision_matrix(robot, samples=1200, seed=5, dask=(address, 30.0))
    assert one == many and any(r == "Never" for r in one.reasons.values())
    tasks = [r for r in stream.data if str(r["key"]).startswith("gjk-samples-")]
    assert len(tasks) == 4  # 2 chunks of 600 samples, a range a worker
    never = [(s.a, s.b) for s in read_srdf(srdf, srdf, None) if s.reason == "SRDF: Never"]
    alone = matrices.audit(robot, never, samples=1500, seed=0)
    shared = matrices.audit(robot, never, samples=1500, seed=0, dask=(address, 30.0))
    assert [(c.a, c.b, c.sample, c.depth) for c in alone] == [(c.a, c.b, c.sample, c.depth) for c in shared]


def test_robot_poses_among_other_objects_in_ranges_on_the_workers(cluster, tmp_path):
    """--poses with a scene object beside the robot (not the robot alone, prepared once): the
    poses run in ranges on the workers, each pose's scan one process's, and the report is one
    process's."""
    from distributed import get_task_stream

    from gjkcli.scene import urdf

    inputs, table = _arm_and_post(tmp_path, 11, post_apart=True)
    address, client = cluster
    robot = urdf.RobotOptions(poses=str(table))
    one = pipeline.scan(inputs, pipeline.Options(jobs=1, robot=robot, clearance=0.05))
    with get_task_stream(client=client) as stream:
        many = pipeline.scan(inputs, pipeline.Options(dask=address, robot=robot, clearance=0.05))
    same_json(one, many)
    assert len([r for r in stream.data if str(r["key"]).startswith("gjk-scene-poses-")]) == 4
    hits = {p.waypoint for p in one.pairs if p.violation and "post" in p.a + p.b}
    assert 1 <= len(hits) < 11  # the arm reaches the post at some poses, not at others
