"""`gjk scan --mode hull` against trimesh's collision pipeline, side by side in one run.

For each size n, scripts/make_scan_scene.py writes a GLB of n convex parts (40-point hulls, each
its own mesh and node, about 0.8 colliding pairs per part) into a temporary folder. Then, each in
a fresh Python process so that neither warms the other's caches or pays the other's memory:

    trimesh   trimesh.load_scene, CollisionManager.add_object for every node (with its world
              transform), in_collision_internal(return_names=True); timed from after the imports
    gjk cli   `gjk scan FILE --mode hull --format json` end to end, wall time of the whole process
              (interpreter start, imports, loading, hulls, broad and narrow phase, JSON); also
              with the table (into a pipe) and with -q
    gjk lib   gjkcli.pipeline.run.scan([FILE], Options(mode="hull")) timed from after the
              imports, with the time of each stage (load, hulls, broad, narrow, verdicts)

The pair sets are compared (gjk's collision and touching pairs against trimesh's), and the ratio
gjk cli (JSON) / trimesh is printed.

The scaling run (`--sizes 1000,10000,100000`) runs trimesh only up to --trimesh-up-to (default
10,000): its add_object updates FCL's tree once per object, which grows faster than linearly
(measured here: 1.7 ms per part at 1,000 parts, 3.5 ms at 10,000), so 100,000 parts would take
hours. gjk's time per part and its time over n log2 n are printed for each size.

Usage:
    python benchmarks/bench_scan.py [--sizes 10000] [--trimesh-up-to 10000] [--jobs N]
                                    [--seed S] [--keep DIR] [--json FILE]
"""
from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# Timed runs are fresh runs: the gjk processes started here neither read nor write a cache
# (benchmarks/bench_cache.py times the cache).
os.environ.setdefault("GJK_NO_CACHE", "1")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

TRIMESH_WORKER = """
import json, resource, sys, time
def cpu():
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime
t0 = time.perf_counter()
import trimesh
t1 = time.perf_counter()
c1 = cpu()
scene = trimesh.load_scene(sys.argv[1])
t2 = time.perf_counter()
manager = trimesh.collision.CollisionManager()
for node in scene.graph.nodes_geometry:
    transform, geometry = scene.graph[node]
    manager.add_object(node, scene.geometry[geometry], transform=transform)
t3 = time.perf_counter()
_, names = manager.in_collision_internal(return_names=True)
t4 = time.perf_counter()
json.dump({"import": t1 - t0, "load": t2 - t1, "add_object": t3 - t2, "collide": t4 - t3,
           "total": t4 - t1, "cpu": cpu() - c1, "pairs": sorted(sorted(n) for n in names)},
          open(sys.argv[2], "w"))
"""

GJK_WORKER = """
import json, resource, sys, time
def cpu():
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime
t0 = time.perf_counter()
from gjkcli.pipeline import run as pipeline
from gjkcli.engine.results import Status
t1 = time.perf_counter()
c1 = cpu()
jobs = None if sys.argv[3] == "all" else int(sys.argv[3])
report = pipeline.scan([sys.argv[1]], pipeline.Options(mode="hull", jobs=jobs))
t2 = time.perf_counter()
pairs = sorted(sorted((p.a, p.b)) for p in report.pairs
               if Status(p.status) in (Status.COLLISION, Status.TOUCHING))
json.dump({"import": t1 - t0, "total": t2 - t1, "cpu": cpu() - c1, "stages": report.timings, "objects": len(report.objects),
           "candidates": report.candidates, "checked": report.checked, "counts": report.counts,
           "convex": sum(o.convex for o in report.objects), "pairs": pairs}, open(sys.argv[2], "w"))
"""

def worker(code: str, *args) -> dict:
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as out:
        target = out.name
    try:
        subprocess.run([sys.executable, "-c", code, args[0], target, *args[1:]], check=True)
        with open(target) as fh:
            return json.load(fh)
    finally:
        os.unlink(target)


def children_cpu() -> float:
    import resource

    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def gjk_end_to_end(path: Path, jobs: str, output: str = "json") -> tuple[float, float, dict | None]:
    """Wall and CPU time of a whole `gjk scan` process (its workers included), and its JSON.

    output : "json" (the document, parsed), "table" (the report for people, into a pipe) or
        "quiet" (-q: the exit code only)
    """
    argv = [sys.executable, "-m", "gjkcli", "scan", str(path), "--mode", "hull"]
    argv += {"json": ["--format", "json"], "table": [], "quiet": ["-q"]}[output]
    if jobs != "all":
        argv += ["--jobs", jobs]
    t0, c0 = time.perf_counter(), children_cpu()
    done = subprocess.run(argv, capture_output=True, text=True)
    wall, cpu = time.perf_counter() - t0, children_cpu() - c0
    if done.returncode not in (0, 1):
        raise RuntimeError(f"gjk scan failed ({done.returncode}): {done.stderr[-2000:]}")
    return wall, cpu, json.loads(done.stdout) if output == "json" else None


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000", help="comma-separated part counts (default 10000)")
    parser.add_argument("--trimesh-up-to", type=int, default=10000,
                        help="run trimesh's pipeline only up to this many parts (default 10000)")
    parser.add_argument("--jobs", default="all", help="gjk's --jobs (default: every core)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--keep", type=Path, help="write the scenes here (default: a temporary folder)")
    parser.add_argument("--json", type=Path, help="write every number to this file")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s]

    from _common import machine, markdown_table
    from make_scan_scene import make

    folder = args.keep or Path(tempfile.mkdtemp(prefix="gjk-bench-scan-"))
    folder.mkdir(parents=True, exist_ok=True)
    results = []
    for n in sizes:
        path = folder / f"scan_{n}.glb"
        if not path.exists():
            t0 = time.perf_counter()
            make(n, path, seed=args.seed)
            print(f"generated {path} ({path.stat().st_size / 1e6:.1f} MB) in {time.perf_counter() - t0:.1f} s")
        row = {"n": n}
        if n <= args.trimesh_up_to:
            row["trimesh"] = worker(TRIMESH_WORKER, str(path))
        row["gjk_lib"] = worker(GJK_WORKER, str(path), args.jobs)
        row["gjk_e2e"], row["gjk_e2e_cpu"], doc = gjk_end_to_end(path, args.jobs, "json")
        row["gjk_table"] = gjk_end_to_end(path, args.jobs, "table")[0]
        row["gjk_quiet"] = gjk_end_to_end(path, args.jobs, "quiet")[0]
        e2e_pairs = sorted(sorted((p["a"], p["b"])) for p in doc["pairs"]
                           if p["status"] in ("collision", "touching"))
        row["same_pairs_e2e_lib"] = e2e_pairs == row["gjk_lib"]["pairs"]
        if "trimesh" in row:
            ours = {tuple(p) for p in row["gjk_lib"]["pairs"]}
            theirs = {tuple(p) for p in row["trimesh"]["pairs"]}
            row["same_pairs"] = ours == theirs
            row["only_gjk"], row["only_trimesh"] = len(ours - theirs), len(theirs - ours)
            row["ratio"] = row["gjk_e2e"] / row["trimesh"]["total"]
            row["ratio_cpu"] = row["gjk_e2e_cpu"] / row["trimesh"]["cpu"]
        results.append(row)
        print_row(row)

    print("\n## gjk scan --mode hull against trimesh + FCL\n")
    rows = []
    for r in results:
        t = r.get("trimesh")
        rows.append([r["n"], r["gjk_lib"]["counts"]["collision"] + r["gjk_lib"]["counts"]["touching"],
                     len(t["pairs"]) if t else "-", "yes" if r.get("same_pairs") else ("-" if not t else "NO"),
                     t["total"] if t else float("nan"), r["gjk_e2e"], r["gjk_table"], r["gjk_quiet"],
                     r["gjk_lib"]["total"],
                     r.get("ratio", float("nan")), t["cpu"] if t else float("nan"), r["gjk_e2e_cpu"],
                     r.get("ratio_cpu", float("nan"))])
    print(markdown_table(["parts", "gjk pairs", "trimesh pairs", "same", "trimesh s", "gjk scan --format json s",
                          "gjk scan (table) s", "gjk scan -q s", "gjk scan() s", "gjk / trimesh", "trimesh cpu s", "gjk scan cpu s",
                          "gjk / trimesh (cpu)"], rows))
    print("\n(wall times; cpu: user + system time of the process and its workers, less sensitive to a"
          " busy machine.\n trimesh's times start after `import trimesh`; gjk scan's include"
          " the interpreter and every import)")
    print("\n## gjk's stages (seconds) and scaling\n")
    rows = []
    for r in results:
        g = r["gjk_lib"]
        n = r["n"]
        rows.append([n, g["stages"]["load"], g["stages"]["hulls"], g["stages"]["broad"], g["stages"]["narrow"],
                     g["stages"]["verdicts"], g["total"], g["cpu"], g["total"] / n * 1e6,
                     g["total"] / (n * math.log2(n)) * 1e6, g["candidates"], g["checked"]])
    print(markdown_table(["parts", "load", "hulls", "broad", "narrow", "verdicts", "run() s", "run() cpu s",
                          "us / part", "us / (n log2 n)", "candidates", "checked"], rows))
    info = machine()
    print(f"\n{info['python']}, numpy {info['numpy']}, {info['cpus']} cpus, load average {info['load_average']}, "
          f"jobs {args.jobs}")
    if args.json:
        for r in results:  # the pair lists are long; keep the counts
            for key in ("trimesh", "gjk_lib"):
                if key in r:
                    r[key]["pairs"] = len(r[key]["pairs"])
        args.json.write_text(json.dumps({"machine": info, "results": results}, indent=2))
    bad = [r for r in results if r.get("same_pairs") is False or not r["same_pairs_e2e_lib"]]
    return 1 if bad else 0


def print_row(r: dict) -> None:
    g = r["gjk_lib"]
    line = (f"n={r['n']}: gjk scan process {r['gjk_e2e']:.2f} s (cpu {r['gjk_e2e_cpu']:.2f} s), "
            f"run() {g['total']:.2f} s "
            f"(import {g['import']:.2f} s), {g['counts']['collision']} collision, {g['counts']['touching']} touching")
    if "trimesh" in r:
        t = r["trimesh"]
        line += (f"; trimesh {t['total']:.2f} s (cpu {t['cpu']:.2f} s; load {t['load']:.2f}, "
                 f"add_object {t['add_object']:.2f}, "
                 f"collide {t['collide']:.2f}), {len(t['pairs'])} pairs; same pairs: {r['same_pairs']} "
                 f"(only gjk {r['only_gjk']}, only trimesh {r['only_trimesh']}); ratio {r['ratio']:.3f}")
    print(line, flush=True)


if __name__ == "__main__":
    sys.exit(main())
