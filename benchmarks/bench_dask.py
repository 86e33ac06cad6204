"""`gjk scan` in one process (`-j 2`) against `gjk scan --dask local:N`, side by side in one run.

Five scenes, each scanned end to end by the installed command in a fresh process:

    one process   gjk scan INPUTS... -j 2 --format json -o one.json --timings
    local:N       gjk scan INPUTS... --dask local:N --format json -o dask.json --timings

(a) split: scripts/make_scan_scene.py's scene of --parts parts (40-point convex hulls, about 0.8
    colliding pairs per part) over --files GLB files, part k in file k mod F, one world;
(b) one GLB: --one-glb parts in a single GLB, which the cluster reads in several load tasks
    (ranges of its nodes: two a worker, each reading only its nodes' meshes where no two
    meshes are alike; a worker parses the file's document once for both);
(c) IFC: the model --ifc (default: ../corpus/ifc/geometrygym_great_court_roof.ifc, the Great
    Court roof, 5,178 beams and 25,646 candidate pairs, the model issue 46 names; from
    IfcOpenShell's test files, test/input/ of github.com/IfcOpenShell/IfcOpenShell, LGPL-3.0, or
    the copy in github.com/aothms/IfcOpenShell_PythonWrapper), meshed by the cluster in a task
    per worker (shares of its elements, dealt over the whole file, each share's hulls built where
    it was meshed), its non-convex pairs refined on the triangles by the workers (tasks cut by
    their parts' triangles);
(d) more workers: scene (a) on local:N for each N of --check-workers: the same JSON;
(e) STEP: each assembly --step (default: ../corpus/step/bug31670_russian.stp, SolidWorks 2017,
    17 solids, 3 MB, from OpenCASCADE's test data: benchmarks/step_corpus.json), which the
    cluster reads in a task per worker (each reading the file and meshing a share of its
    products), and once more on local:2 read in one task (the split turned off in that run's
    client, `distributed.STEP_SPLIT_FROM_BYTES`): what the split gains.

Rounds: the IFC and STEP scenes' runs are short (seconds), so a machine's drift moves their
ratio by half of it from one run to the next; they run --repeat rounds (5), one process then
each local:N in turn, and each figure is the median of the rounds, a ratio the median of the
rounds' own ratios (printed each, after the table). The large scenes run once.

CPU: the user and system seconds of every process of the command's tree (itself, its forked
loaders, its Dask workers), each its own (never its children's), as last sampled every 0.1 s with
psutil: up to 0.1 s a process short, the same way for both kinds of run.

The client's memory: each command runs through a small entry that writes its own process's
peak resident memory when it exits (VmHWM: the process alone, never its children, nor this
script's memory that getrusage's ru_maxrss keeps across the fork and exec). With
--dask the client is that process (the scheduler's threads live in it, the workers are processes
of their own); in one process it is the command itself (its forked loaders, children, are not
counted). The process tree is also sampled every 0.1 s with psutil for the largest other process
(a Dask worker). The JSON reports are compared, timings blanked: the cluster must give the same
findings. The targets (issue 46) are printed beside the ratios.

The model (--model, on by default): scene (a) through the Python API on a LocalCluster of 2
workers, with Dask's task stream recorded: per kind of task (load, summary, pick, tile, part,
refine, refined, rows, bounded, overlap, reasons) the count, compute seconds, longest task, and the bytes of
its results; the client's own stages. Time on W workers is modelled as
client + max(sum(load) / W, longest load) + sum(the other tasks) / W, never below the longest
task; the client's memory as what it receives (summaries and pairs: bytes per object and per
pair, independent of W); a worker's as the parts' bytes over W. The one-GLB scene's load tasks
per worker are counted from a task stream of the same kind.

At the issue's sizes (the defaults: 200,000 parts over 10 files, 100,000 in one GLB) the whole
run, the model and the checks of more workers included, took 458 s on 2 cores with nothing else
running (each scan of (a) about 42 s; --keep reuses the scenes); benchmarks/tables.py runs it at
these sizes, and at 20,000 parts with --quick.

Usage:
    python benchmarks/bench_dask.py [--parts 200000] [--files 10] [--one-glb 100000]
                                    [--ifc PATH] [--workers 2] [--check-workers 4,8]
                                    [--seed S] [--repeat 5] [--keep DIR] [--json FILE] [--no-model]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from _entry import MEASURED

# Timed runs are fresh runs: the gjk processes started here neither read nor write a cache
# (benchmarks/bench_cache.py times the cache).
os.environ.setdefault("GJK_NO_CACHE", "1")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
# IFC models gathered from public repositories (benchmarks/ifc_corpus.csv), kept outside the
# repository: GJK_IFC_CORPUS, else ../corpus/ifc (as benchmarks/tables.py)
DEFAULT_IFC = Path(os.environ.get("GJK_IFC_CORPUS", ROOT.parent / "corpus" / "ifc")) / "geometrygym_great_court_roof.ifc"

ENTRY = MEASURED  # the command, writing its peak memory and CPU time (_entry.py)
# the same, a STEP assembly read by the cluster in one task, as before it was split: the
# module's threshold raised as the command imports it (not imported here ahead of the command's
# own start, which would slow that start)
WHOLE_STEP = ("import importlib.util, sys\n"
              "class _Whole:\n"
              "    def find_spec(self, name, path=None, target=None):\n"
              "        if name != 'gjkcli.pipeline.distributed':\n"
              "            return None\n"
              "        sys.meta_path.remove(self)\n"
              "        spec = importlib.util.find_spec(name)\n"
              "        run = spec.loader.exec_module\n"
              "        def exec_module(module):\n"
              "            run(module)\n"
              "            module.STEP_SPLIT_FROM_BYTES = 1 << 62\n"
              "        spec.loader.exec_module = exec_module\n"
              "        return spec\n"
              "sys.meta_path.insert(0, _Whole())\n" + MEASURED)
DEFAULT_STEP = Path(os.environ.get("GJK_STEP_CORPUS", ROOT.parent / "corpus" / "step")) / "bug31670_russian.stp"

TARGETS = {"split": {"wall": 1.3, "client": 0.25}, "one GLB": {"wall": 1.3}, "IFC": {"wall": 1.2, "client": 0.5}}


class PeakMemory:
    """Peak resident memory of a process and all its descendants, sampled in a thread."""

    def __init__(self, pid: int, every: float = 0.1):
        import psutil

        self.root = psutil.Process(pid)
        self.every = every
        self.peak: dict[int, int] = {}
        self.cpu: dict[int, float] = {}  # per process, its own user + system seconds, last seen
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        import psutil

        while not self._stop.is_set():
            try:
                procs = [self.root] + self.root.children(recursive=True)
            except psutil.Error:
                break
            for p in procs:
                try:
                    rss = p.memory_info().rss
                    times = p.cpu_times()
                except psutil.Error:
                    continue
                self.cpu[p.pid] = times.user + times.system
                if rss > self.peak.get(p.pid, 0):
                    self.peak[p.pid] = rss
            time.sleep(self.every)

    def stop(self) -> dict:
        self._stop.set()
        self._thread.join()
        return self.peak


def run(args: list[str], cwd: Path, out: Path, entry: str = ENTRY) -> dict:
    rss = cwd / f"{out.stem}.rss"
    cmd = [sys.executable, "-c", entry, str(rss), "scan", *args, "--timings", "--format", "json", "-o", str(out)]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    mem = PeakMemory(proc.pid)
    _, err = proc.communicate()
    wall = time.perf_counter() - start
    peak = mem.stop()
    cpu = sum(mem.cpu.values())
    timings = {}
    for line in err.splitlines():
        if line.startswith("gjk: timings: "):
            for item in line[len("gjk: timings: "):].split(", "):
                name, value, _ = item.split(" ")
                timings[name] = float(value)
    others = sorted((r for pid, r in peak.items() if pid != proc.pid), reverse=True)
    return {"cmd": "gjk scan " + " ".join(args), "exit": proc.returncode, "wall_s": wall, "cpu_s": cpu,
            "timings": timings,
            "client_mb": int(rss.read_text().split()[0]) / 1024 if rss.exists() else float("nan"),
            "largest_other_mb": (others[0] if others else 0) / 2**20, "processes": len(peak),
            "stderr": [line for line in err.splitlines() if not line.startswith("gjk: timings")]}


def untimed(doc):
    if isinstance(doc, dict):
        return {k: 0 if k == "elapsed" else {} if k == "timings" else untimed(v) for k, v in doc.items()}
    if isinstance(doc, list):
        return [untimed(v) for v in doc]
    return doc


def differences(one: dict, other: dict) -> dict:
    """{section of the report: how many of its entries differ} (objects, pairs, ...)."""
    out = {}
    for key in one.keys() | other.keys():
        a, b = one.get(key), other.get(key)
        if a == b:
            continue
        if isinstance(a, list) and isinstance(b, list):
            out[key] = sum(x != y for x, y in zip(a, b)) + abs(len(a) - len(b))
        else:
            out[key] = 1
    return out


def compare(name: str, inputs: list[str], tmp: Path, workers: list[int], extra=(), repeat: int = 1) -> dict:
    """One process -j 2, then local:N for each N: wall, memory, same JSON. repeat : that many
    rounds, one process and each local:N in turn; each figure is then the median of the rounds,
    and a ratio to one process the median of the rounds' own ratios (a round's runs are
    seconds apart: the machine's drift cancels in them)."""
    rounds = []
    for _ in range(max(1, repeat)):
        runs = {"one process -j 2": run([*inputs, *extra, "-j", "2"], tmp, tmp / f"{name}-one.json")}
        one = untimed(json.loads((tmp / f"{name}-one.json").read_text()))
        for n in workers:
            out = tmp / f"{name}-dask{n}.json"
            r = run([*inputs, *extra, "--dask", f"local:{n}"], tmp, out)
            other = untimed(json.loads(out.read_text())) if out.exists() else {}
            r["same_json"] = other == one
            r["differs"] = differences(one, other)
            runs[f"local:{n}"] = r
        rounds.append(runs)
    if len(rounds) == 1:
        return {"runs": rounds[0], "summary": one["summary"]}
    runs = {}
    for key in rounds[0]:
        these = [r[key] for r in rounds]
        bases = [r["one process -j 2"] for r in rounds]
        merged = dict(these[len(these) // 2])  # a round's own run, for what is not a figure
        for figure in ("wall_s", "cpu_s", "client_mb", "largest_other_mb"):
            merged[figure] = statistics.median(r[figure] for r in these)
        merged["wall_ratio"] = statistics.median(r["wall_s"] / b["wall_s"] for r, b in zip(these, bases))
        merged["client_ratio"] = statistics.median(r["client_mb"] / b["client_mb"] for r, b in zip(these, bases))
        merged["walls"] = [r["wall_s"] for r in these]
        merged["ratios"] = [r["wall_s"] / b["wall_s"] for r, b in zip(these, bases)]
        if "same_json" in merged:
            merged["same_json"] = all(r["same_json"] for r in these)
            merged["differs"] = next((r["differs"] for r in these if r["differs"]), {})
        runs[key] = merged
    return {"runs": runs, "summary": one["summary"], "repeat": len(rounds)}


def task_stream(inputs: list, workers: int, extra: dict | None = None) -> dict:
    """Per kind of task: count, compute seconds, longest, result bytes, tasks per worker; and the
    client's stage timings, of one scan on a LocalCluster of `workers` processes."""
    from distributed import Client, LocalCluster, get_task_stream

    from gjkcli.pipeline import run as pipeline

    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                      memory_limit=0, silence_logs=50) as cluster, \
            Client(cluster, set_as_default=False) as client:
        client.wait_for_workers(workers)
        start = time.perf_counter()
        with get_task_stream(client=client) as stream:
            found = pipeline.scan(inputs, pipeline.Options(dask=cluster.scheduler_address, **(extra or {})))
        wall = time.perf_counter() - start
        records = stream.data
    kinds: dict[str, dict] = {}
    for rec in records:
        kind = str(rec["key"]).split("-")[1]  # gjk-load-..., gjk-tile-..., gjk-refine-...
        k = kinds.setdefault(kind, {"count": 0, "sum_s": 0.0, "max_s": 0.0, "bytes": 0, "transfer_s": 0.0,
                                    "per_worker": {}})
        compute = sum(s["stop"] - s["start"] for s in rec["startstops"] if s["action"] == "compute")
        k["count"] += 1
        k["sum_s"] += compute
        k["max_s"] = max(k["max_s"], compute)
        k["bytes"] += int(rec.get("nbytes") or 0)
        k["transfer_s"] += sum(s["stop"] - s["start"] for s in rec["startstops"] if s["action"] == "transfer")
        k["per_worker"][rec["worker"]] = k["per_worker"].get(rec["worker"], 0) + 1
    client_s = sum(v for k, v in found.timings.items() if k not in ("load", "broad", "narrow", "refine", "overlap"))
    return {"wall_s": wall, "client_s": client_s, "timings": found.timings, "objects": len(found.objects),
            "pairs": found.checked, "tasks": kinds}


# what the client receives (the others stay on the workers, or move between them): of a tile,
# its pairs and facts, and the rest of the answers of the pairs a finding lists on their hulls;
# of a refinement task, its answers' facts, and the answers themselves in pages (the Python API's
# scan, as here: all of them as the scan ends)
TO_CLIENT = ("summary", "facts", "rest", "refined", "rows", "bounded", "overlap", "reasons")


def modelled(model: dict, w: int) -> float:
    t = model["tasks"]
    load = max(t["load"]["sum_s"] / w, t["load"]["max_s"]) if "load" in t else 0.0
    rest = [v for k, v in t.items() if k != "load"]
    other = max(sum(v["sum_s"] for v in rest) / w, max((v["max_s"] for v in rest), default=0.0))
    return model["client_s"] + load + other


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--parts", type=int, default=200_000, help="parts of scene (a) (0: skip it)")
    parser.add_argument("--files", type=int, default=10)
    parser.add_argument("--one-glb", type=int, default=100_000, help="parts of the one-GLB scene (0: skip)")
    parser.add_argument("--ifc", type=Path, default=DEFAULT_IFC, help="the IFC model (skipped when absent)")
    parser.add_argument("--step", type=Path, action="append", help="a STEP assembly for (e), again for "
                        "more (default: bug31670_russian.stp of the STEP corpus; skipped when absent)")
    parser.add_argument("--workers", default="2", help="comma-separated N of --dask local:N")
    parser.add_argument("--check-workers", default="4,8", help="N of local:N that must give the same JSON")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=5,
                        help="rounds of the IFC and STEP scenes (short runs, in turn), medians")
    parser.add_argument("--keep", type=Path, help="write the scenes here and keep them (reused if there)")
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument("--no-model", dest="model", action="store_false", help="skip the task-stream runs")
    args = parser.parse_args(argv)
    from make_scan_scene import make, make_split

    workers = [int(w) for w in args.workers.split(",")]
    checks = [int(w) for w in args.check_workers.split(",") if w]
    results: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        folder = args.keep or tmp
        folder.mkdir(parents=True, exist_ok=True)
        files = [folder / f"scene{args.parts}_{k}.glb" for k in range(args.files)]
        if args.parts and not all(f.exists() for f in files):
            t = time.perf_counter()
            files = make_split(args.parts, folder / f"scene{args.parts}.glb", args.files, args.seed)
            print(f"scene: {args.parts:,} parts over {args.files} files in {time.perf_counter() - t:.0f} s",
                  file=sys.stderr)
        split = [str(f) for f in files]
        if args.parts:
            results["split"] = compare("split", split, tmp, workers, ("--together",))
        if args.one_glb:
            one_glb = folder / f"one{args.one_glb}.glb"
            if not one_glb.exists():
                make(args.one_glb, one_glb, args.seed + 1)
            results["one GLB"] = compare("glb", [str(one_glb)], tmp, workers)
        if args.ifc and args.ifc.exists():
            results["IFC"] = compare("ifc", [str(args.ifc)], tmp, workers, repeat=args.repeat)
            results["IFC"]["model"] = str(args.ifc)
        for step in args.step or [DEFAULT_STEP]:
            if step.exists():
                name = f"STEP {step.name}"
                results[name] = compare("step", [str(step)], tmp, workers, repeat=args.repeat)
                out = tmp / "step-whole.json"
                r = run([str(step), "--dask", "local:2"], tmp, out, WHOLE_STEP)
                r["same_json"] = out.exists() and untimed(json.loads(out.read_text())) == untimed(
                    json.loads((tmp / "step-one.json").read_text()))
                results[name]["runs"]["local:2, read in one task"] = r
        if checks and args.parts:
            one = untimed(json.loads((tmp / "split-one.json").read_text()))
            results["more workers"] = {"runs": {}}
            for n in checks:
                out = tmp / f"split-check{n}.json"
                r = run([*split, "--together", "--dask", f"local:{n}"], tmp, out)
                r["same_json"] = out.exists() and untimed(json.loads(out.read_text())) == one
                results["more workers"]["runs"][f"local:{n}"] = r
        model = glb_stream = None
        if args.model and args.parts:
            model = task_stream(split, 2)
        if args.model and args.one_glb:
            glb_stream = task_stream([str(one_glb)], 2)

    print(f"\n{args.parts:,} parts over {args.files} GLB files (a), {args.one_glb:,} parts in one GLB (b), "
          f"{args.ifc.name if args.ifc else '-'} (c), STEP assemblies (e); {os.cpu_count()} cores\n")
    print("| scene | run | pairs | wall s | wall / one process | CPU s (all processes) | client peak MB (VmHWM) "
          "| client / one process | largest worker MB | same JSON | target |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for scene, got in results.items():
        runs = got["runs"]
        base = runs.get("one process -j 2") or results["split"]["runs"]["one process -j 2"]
        pairs = (got.get("summary") or results["split"]["summary"])["pairs"]
        for name, r in runs.items():
            target = TARGETS.get(scene, {})
            said = "-" if name.startswith("one") else (
                ", ".join(f"{what} <= {v}" for what, v in target.items()) or "same JSON")
            wall = r.get("wall_ratio", r["wall_s"] / base["wall_s"])
            client = r.get("client_ratio", r["client_mb"] / base["client_mb"])
            print(f"| {scene} | {name} | {pairs:,} | {r['wall_s']:.1f} | {wall:.2f} | "
                  f"{r['cpu_s']:.1f} | {r['client_mb']:.0f} | {client:.2f} | "
                  f"{r['largest_other_mb']:.0f} | {r.get('same_json', '-')} | {said} |")
    repeated = {scene: got for scene, got in results.items() if got.get("repeat", 1) > 1}
    if repeated:
        print(f"\n{', '.join(repeated)}: each figure the median of {args.repeat} rounds (one process, then "
              f"each local:N, in turn), a ratio the median of the rounds' own ratios; the rounds' walls / "
              f"one process:")
        for scene, got in repeated.items():
            for name, r in got["runs"].items():
                if "ratios" in r and not name.startswith("one"):
                    print(f"  {scene} {name}: " + ", ".join(f"{x:.2f}" for x in r["ratios"]))
    if glb_stream is not None:
        per = glb_stream["tasks"].get("load", {}).get("per_worker", {})
        print(f"\nOne GLB on local:2: load tasks per worker {sorted(per.values())} "
              f"(the file read as {sum(per.values())} ranges of its nodes).")
    if model is not None:
        t = model["tasks"]
        n = model["objects"] or 1
        print(f"\nTask stream of scene (a) on local:2 ({model['objects']:,} objects listed, {model['pairs']:,} "
              f"pairs checked; the client's own stages {model['client_s']:.1f} s):\n")
        print("| task | count | compute s | longest s | result MB | to the client |")
        print("|---|---|---|---|---|---|")
        for kind, v in t.items():
            print(f"| {kind} | {v['count']} | {v['sum_s']:.1f} | {v['max_s']:.2f} | {v['bytes'] / 2**20:.1f} | "
                  f"{'yes' if kind in TO_CLIENT else 'no (stays on the workers)'} |")
        to_client = sum(v["bytes"] for k, v in t.items() if k in TO_CLIENT)
        parts = t.get("load", {}).get("bytes", 0)
        print(f"\nThe client received {to_client / 2**20:.1f} MB ({to_client / args.parts:.0f} bytes a part); "
              f"the load tasks' answers (the parts) were {parts / 2**20:.1f} MB on the workers.\n")
        print("| workers W | modelled scan s | client's share of it | parts a worker holds MB | client receives MB |")
        print("|---|---|---|---|---|")
        for w in (1, 2, 8, 32, 128):
            s = modelled(model, w)
            print(f"| {w} | {s:.1f} | {model['client_s'] / s:.0%} | {parts / w / 2**20:.0f} | {to_client / 2**20:.1f} |")
    for scene, got in results.items():
        for name, r in got["runs"].items():
            if r.get("differs"):
                print(f"{scene}, {name}: the report differs from one process's in "
                      + ", ".join(f"{n} {key}" for key, n in sorted(r["differs"].items())))
    for scene, got in results.items():
        for name, r in got["runs"].items():
            if r["exit"] not in (0, 1) or r["stderr"]:
                print(f"{scene} {name}: exit {r['exit']}: {r['stderr'][:5]}", file=sys.stderr)
    if args.json:
        args.json.write_text(json.dumps({"parts": args.parts, "files": args.files, "results": results,
                                         "model": model, "one_glb_stream": glb_stream}, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
