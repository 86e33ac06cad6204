"""A first run with the cache (which fills it) against the same scan without it, whole processes
side by side.

The cache is on by default, so a CI job's first run, and any run after a change that touches
most pairs, writes what it computed. This measures what that writing costs: alternating,

    no cache   `gjk scan INPUTS --format json --no-cache`
    first run  `gjk scan INPUTS --format json --cache-dir EMPTY` on a new, empty folder each time

on the inputs of bench_cache.py (the generated GLB, the five STEP assemblies, the IFC model,
the Panda's poses) and on the Great Court roof of GJK_IFC_CORPUS (25,646 pairs, 24,997 of them
refined on the triangles: the most answers a run of the corpus keeps). Medians of --repeat runs
of each side, their ratio (first run / no cache), each side's CPU seconds, and whether the two
JSON reports are the same bytes.

Usage:
    python benchmarks/bench_cache_cold.py [--parts 10000] [--poses 10000] [--repeat 3]
                                          [--only glb,step,ifc,poses]
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import bench_cache
from bench_cache import IFC_CORPUS, IFC_MODEL, ROOT, gjk

ROOF = "geometrygym_great_court_roof.ifc"


def inputs(work: Path, parts: int, poses: int, only=("glb", "step", "ifc", "poses")):
    """(name, gjk's arguments) of each scenario of `only`: bench_cache.py's "before" inputs."""
    if "glb" in only:
        for name, before, _ in bench_cache.glb_scenarios(work, parts):
            if name == "glb":
                yield f"glb {parts} parts", before
    if "step" in only:
        for name, before, _ in bench_cache.step_scenarios(work, False, ("step",)):
            yield name, before
    for model in (IFC_MODEL, ROOF) if "ifc" in only else ():
        if (IFC_CORPUS / model).is_file():
            yield f"ifc:{model}", ["scan", IFC_CORPUS / model, "--tolerance", "2mm"]
        else:
            print(f"ifc:{model}: skipped, not in {IFC_CORPUS} (GJK_IFC_CORPUS)")
    for name, before, _ in bench_cache.poses_scenario(work, poses) if "poses" in only else ():
        if not name.endswith("unchanged"):
            yield name, before


def measure(args: list, work: Path, repeat: int) -> dict:
    plain, first, plain_cpu, first_cpu, same = [], [], [], [], True
    for _ in range(repeat):
        t, code, out, _ = gjk(args, None, plain_cpu)
        plain.append(t)
        empty = work / "empty-cache"
        shutil.rmtree(empty, ignore_errors=True)
        t, code2, out2, _ = gjk(args, empty, first_cpu)
        first.append(t)
        same &= out == out2 and code == code2
    p, f = statistics.median(plain), statistics.median(first)
    pc, fc = statistics.median(plain_cpu), statistics.median(first_cpu)
    return {"plain": p, "first": f, "ratio": f / p, "plain_cpu": pc, "first_cpu": fc, "cpu_ratio": fc / pc,
            "same": same}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--parts", type=int, default=10000, help="parts of the generated GLB (default 10000)")
    parser.add_argument("--poses", type=int, default=10000, help="the Panda's poses (default 10000)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs of each side (default 3)")
    parser.add_argument("--only", default="glb,step,ifc,poses", help="scenarios (default glb,step,ifc,poses)")
    args = parser.parse_args(argv)
    only = set(args.only.split(","))
    bench_cache.SUBREAPER = sys.platform.startswith("linux") and bench_cache._subreaper()
    from _common import markdown_table

    # the bytecode an installed package has (as bench_cache.py): neither side compiles gjk's modules
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "gjkcli")], env=env, capture_output=True)
    work = Path(tempfile.mkdtemp(prefix="gjk-bench-cold-"))
    rows = []
    try:
        for name, argv_ in inputs(work, args.parts, args.poses, only):
            got = measure(argv_, work, args.repeat)
            print(f"{name}: no cache {got['plain']:.2f} s, first run {got['first']:.2f} s, ratio "
                  f"{got['ratio']:.2f}, CPU {got['plain_cpu']:.2f} s against {got['first_cpu']:.2f} s, "
                  f"same JSON {got['same']}", flush=True)
            rows.append([name, f"{got['plain']:.2f}", f"{got['first']:.2f}", f"{got['ratio']:.2f}",
                         f"{got['cpu_ratio']:.2f}", "yes" if got["same"] else "NO"])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print()
    print(f"Whole `gjk scan ... --format json` processes, medians of {args.repeat} alternating runs; "
          f"the first run's cache folder new and empty each time.")
    print()
    print(markdown_table(["scenario", "no cache (s)", "first run (s)", "first run / no cache",
                          "CPU first run / no cache", "same JSON"], rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
