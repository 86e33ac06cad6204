"""`gjk scan` in one process against `gjk scan --dask local:N`, side by side in one run.

scripts/make_scan_scene.py writes an n-part scene (40-point convex hulls, about 0.8 colliding
pairs per part) split over F GLB files, part k in file k mod F, into a temporary folder. Then
each configuration runs as the installed command, end to end, in a fresh process:

    one process   gjk scan FILES... --format json -o one.json --timings
    local:N       gjk scan FILES... --format json -o dask.json --timings --dask local:N

(for each N of --workers). While a command runs, its process tree is sampled every 0.1 s with
psutil: the peak resident memory of every process (the command itself, the forked loaders of
one process, the Dask scheduler's threads live in the command; the nannies and the workers are
processes of their own). Printed per configuration: the wall time, the stage timings the
command reports (--timings), the peak memory of the command and of the largest other process,
and the sum of the peaks (an upper bound of the memory the run needed at once). The JSON
reports are compared, timings blanked: the cluster must give the same findings.

The model (--model, on by default): the same scan through the Python API on a LocalCluster of one
worker, with Dask's task stream recorded: the compute time of every task by kind (load: read a
file, build its hulls; pick: a tile's hulls from a file's results; tile: broad and narrow phase of
a tile) and the client's own stages (unpacking, policy, verdicts). The time on W workers is then
modelled as client + connect + sum(load) / W + sum(pick + tile) / W, never below the longest
single task of each stage, and printed next to what local:N measured here.

Usage:
    python benchmarks/bench_dask.py [--parts 200000] [--files 8] [--workers 1,2] [--seed S]
                                    [--keep DIR] [--json FILE]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))


class PeakMemory:
    """Peak resident memory of a process and all its descendants, sampled in a thread."""

    def __init__(self, pid: int, every: float = 0.1):
        import psutil

        self.root = psutil.Process(pid)
        self.every = every
        self.peak: dict[int, tuple[str, int]] = {}
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
                    role = self._role(p)
                except psutil.Error:
                    continue
                if rss > self.peak.get(p.pid, ("", 0))[1]:
                    self.peak[p.pid] = (role, rss)
            time.sleep(self.every)

    def _role(self, p) -> str:
        if p.pid == self.root.pid:
            return "gjk"
        cmd = " ".join(p.cmdline())
        if "spawn_main" in cmd or "multiprocessing" in cmd:
            return "dask worker/nanny"
        return "child"

    def stop(self) -> dict:
        self._stop.set()
        self._thread.join()
        return self.peak


def run(cmd: list[str], cwd: Path) -> dict:
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    mem = PeakMemory(proc.pid)
    out, err = proc.communicate()
    wall = time.perf_counter() - start
    peak = mem.stop()
    timings = {}
    for line in err.splitlines():
        if line.startswith("gjk: timings: "):
            for item in line[len("gjk: timings: "):].split(", "):
                name, value, _ = item.split(" ")
                timings[name] = float(value)
    others = sorted((rss for pid, (role, rss) in peak.items() if pid != proc.pid), reverse=True)
    return {"cmd": " ".join(cmd), "exit": proc.returncode, "wall_s": wall, "timings": timings,
            "peak_gjk_mb": peak.get(proc.pid, ("gjk", 0))[1] / 2**20,
            "peak_other_max_mb": (others[0] if others else 0) / 2**20,
            "processes": len(peak), "peak_sum_mb": sum(r for _, r in peak.values()) / 2**20,
            "stderr": [line for line in err.splitlines() if not line.startswith("gjk: timings")]}


def task_model(files: list, workers: int = 1) -> dict:
    """Compute seconds per task kind and the client's stage timings of one scan on a LocalCluster."""
    from distributed import Client, LocalCluster, get_task_stream

    from gjkcli.pipeline import run as pipeline

    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                      memory_limit=0, silence_logs=50) as cluster, \
            Client(cluster, set_as_default=False) as client:
        client.wait_for_workers(workers)
        start = time.perf_counter()
        with get_task_stream(client=client) as stream:
            found = pipeline.scan(files, pipeline.Options(dask=cluster.scheduler_address))
        wall = time.perf_counter() - start
        records = stream.data
    kinds: dict[str, list] = {}
    for rec in records:
        kind = str(rec["key"]).split("-")[1]  # gjk-load-..., gjk-pick-..., gjk-tile-...
        compute = sum(s["stop"] - s["start"] for s in rec["startstops"] if s["action"] == "compute")
        kinds.setdefault(kind, []).append(compute)
    client_s = sum(v for k, v in found.timings.items() if k not in ("load", "broad", "narrow"))
    return {"wall_s": wall, "client_s": client_s, "timings": found.timings,
            "tasks": {k: {"count": len(v), "sum_s": sum(v), "max_s": max(v)} for k, v in kinds.items()}}


def modelled(model: dict, w: int) -> float:
    t = model["tasks"]
    load = max(t["load"]["sum_s"] / w, t["load"]["max_s"])
    tiles = sum(t[k]["sum_s"] for k in ("pick", "tile") if k in t)
    tile = max(tiles / w, t.get("tile", {"max_s": 0})["max_s"])
    return model["client_s"] + load + tile


def untimed(doc):
    if isinstance(doc, dict):
        return {k: 0 if k == "elapsed" else {} if k == "timings" else untimed(v) for k, v in doc.items()}
    if isinstance(doc, list):
        return [untimed(v) for v in doc]
    return doc


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--parts", type=int, default=200_000)
    parser.add_argument("--files", type=int, default=8)
    parser.add_argument("--workers", default="2", help="comma-separated N of --dask local:N")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--keep", type=Path, help="write the scene here and keep it (reused if there)")
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument("--no-model", dest="model", action="store_false",
                        help="skip the task-stream model run")
    args = parser.parse_args(argv)
    from make_scan_scene import make_split

    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        files = [folder / f"scene{args.parts}_{k}.glb" for k in range(args.files)]
        if not all(f.exists() for f in files):
            t = time.perf_counter()
            files = make_split(args.parts, folder / f"scene{args.parts}.glb", args.files, args.seed)
            print(f"scene: {args.parts:,} parts over {args.files} files in "
                  f"{time.perf_counter() - t:.0f} s", file=sys.stderr)
        # one scene split over files: one world
        gjk = [sys.executable, "-m", "gjkcli", "scan", *map(str, files), "--together", "--timings",
               "--format", "json"]
        runs = {"one process": run(gjk + ["-o", str(Path(tmp) / "one.json")], Path(tmp))}
        for n in [int(w) for w in args.workers.split(",")]:
            runs[f"local:{n}"] = run(gjk + ["-o", str(Path(tmp) / f"dask{n}.json"), "--dask", f"local:{n}"],
                                     Path(tmp))
        one = untimed(json.loads((Path(tmp) / "one.json").read_text()))
        for name, r in runs.items():
            if name != "one process":
                other = untimed(json.loads((Path(tmp) / f"dask{name.split(':')[1]}.json").read_text()))
                r["same_json_as_one_process"] = other == one
        summary = one["summary"]
        model = task_model(files) if args.model else None

    print(f"\n{args.parts:,} parts over {args.files} files: {summary['pairs']:,} pairs checked, "
          f"{summary['collision']:,} collisions; {os.cpu_count()} cores\n")
    print("| run | wall s | load+hulls s | broad+narrow s | peak RSS gjk MB | largest other process MB "
          "| processes | sum of peaks MB | same JSON |")
    print("|---|---|---|---|---|---|---|---|---|")
    base = runs["one process"]["wall_s"]
    for name, r in runs.items():
        t = r["timings"]
        print(f"| {name} | {r['wall_s']:.1f} ({r['wall_s'] / base:.2f}x) | "
              f"{t.get('load', 0) + t.get('hulls', 0):.1f} | {t.get('broad', 0) + t.get('narrow', 0):.1f} | "
              f"{r['peak_gjk_mb']:.0f} | {r['peak_other_max_mb']:.0f} | {r['processes']} | "
              f"{r['peak_sum_mb']:.0f} | {r.get('same_json_as_one_process', '-')} |")
    if model is not None:
        t = model["tasks"]
        print(f"\nTask stream on one worker (compute seconds): "
              + ", ".join(f"{k} {v['count']} tasks {v['sum_s']:.1f} s (longest {v['max_s']:.2f} s)"
                          for k, v in t.items())
              + f"; the client's own stages {model['client_s']:.1f} s.\n")
        print("| workers W | modelled scan s (client + load/W + tiles/W) | speed-up over W = 1 |")
        print("|---|---|---|")
        for w in (1, 2, 4, 8, 16, 32):
            print(f"| {w} | {modelled(model, w):.1f} | {modelled(model, 1) / modelled(model, w):.2f}x |")
    for name, r in runs.items():
        if r["exit"] not in (0, 1) or r["stderr"]:
            print(f"{name}: exit {r['exit']}: {r['stderr'][:5]}", file=sys.stderr)
    if args.json:
        args.json.write_text(json.dumps({"parts": args.parts, "files": args.files, "summary": summary,
                                         "runs": runs, "model": model}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
