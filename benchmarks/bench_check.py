"""Wall time of `gjk check` on the samples and of importing the CLI, against the issue's budgets.

Targets: `gjk check` on two samples takes at most 1 s of wall time, the first run after install
included; importing the CLI takes at most 0.3 s. Each run is a fresh process, as a user's is; the
first run is reported on its own (no warm file cache for the package's bytecode can be assumed).

    python benchmarks/bench_check.py [--runs 10]
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

# Timed runs are fresh runs: the gjk processes started here neither read nor write a cache
# (benchmarks/bench_cache.py times the cache).
os.environ.setdefault("GJK_NO_CACHE", "1")

ROOT = Path(__file__).resolve().parents[1]
PAIRS = [("clear_a.stl", "clear_b.stl"), ("touch_a.stl", "touch_b.stl"),
         ("collide_a.stl", "collide_b.stl"), ("ring.stl", "peg.stl"), ("pocket_box.stl", "pocket_cube.stl")]


def wall(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, cwd="/", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    gjk = shutil.which("gjk") or str(Path(sys.executable).parent / "gjk")
    samples = ROOT / "samples"

    print("| what | first run (s) | median of the next runs (s) | budget (s) |")
    print("|---|---|---|---|")
    import_cmd = [sys.executable, "-c", "import gjkcli.cli"]
    first = wall(import_cmd)
    rest = [wall(import_cmd) for _ in range(args.runs)]
    print(f"| import gjkcli.cli | {first:.3f} | {statistics.median(rest):.3f} | 0.3 |")
    for a, b in PAIRS:
        cmd = [gjk, "check", str(samples / a), str(samples / b), "-q"]
        first = wall(cmd)
        rest = [wall(cmd) for _ in range(args.runs)]
        print(f"| gjk check {a} {b} | {first:.3f} | {statistics.median(rest):.3f} | 1.0 |")
    bare = statistics.median(wall([sys.executable, "-c", "pass"]) for _ in range(args.runs))
    print(f"\nbare interpreter start: {bare:.3f} s")


if __name__ == "__main__":
    main()
