"""`gjk scan --watch` at a terminal: the re-run after a saved change, against the same scan as a
whole process without the cache.

bench_cache.py times re-runs as whole processes: each pays Python's start and its imports, and a
STEP re-run that needs OpenCASCADE pays its import (most of a fresh scan of the committed
assemblies). An engineer at a terminal runs `gjk scan FILE --watch` instead: one process scans,
then scans again each time the file is saved, with the cache, and says each run's wall time on
stderr (`gjk: exit CODE; scanned in SECONDS s; ...`). This measures that time on bench_cache.py's
changed inputs (the 10,000-part GLB with 1% of its parts moved, the five STEP assemblies with
one part instance placed elsewhere and with one solid edited, the Panda's poses with 10% new),
each saved over one file in place, as an editor saves it:

    watch   `gjk scan FILE --watch --format json -o REPORT --cache-dir NEW` on the file as it
            was; once its first run ended, the file saved with its change: the re-run's time as
            the command says it (its scan and report, not the look at the files' times, three
            times a second); a new process and cache each of --repeat times
    fresh   `gjk scan FILE --format json --no-cache`, a whole process, on the changed file,
            --repeat times

Medians, their ratio (watch re-run / fresh), and whether each re-run's report is the fresh
runs' bytes. A STEP re-run in the watching process finds OpenCASCADE imported by its first run
(in the process gjk forks to read STEP, which serves the command until it ends).

Usage:
    python benchmarks/bench_watch.py [--parts 10000] [--poses 10000] [--repeat 3]
                                     [--only glb,step,poses]
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import bench_cache
from bench_cache import ROOT, gjk

# the line `gjk scan --watch` writes on stderr after each run
_DONE = re.compile(rb"gjk: exit (\d+); scanned in ([0-9.]+) s; watching")


def scenarios(work: Path, parts: int, poses: int, only=("glb", "step", "poses")):
    """(name, gjk's arguments with the changed file, that file, its bytes before, after): the
    changed inputs of bench_cache.py."""
    found = []
    if "glb" in only:
        found += [s for s in bench_cache.glb_scenarios(work, parts) if s[0] == "glb-moved"]
    if "step" in only:
        found += [s for s in bench_cache.step_scenarios(work, True, ("step-moved", "step-edited"))]
    if "poses" in only:
        found += [s for s in bench_cache.poses_scenario(work, poses) if not s[0].endswith("unchanged")]
    for name, before, after in found:
        at = [k for k, (x, y) in enumerate(zip(before, after)) if x != y]
        if len(at) != 1:
            continue
        k = at[0]
        place = work / "watched" / re.sub(r"[^A-Za-z0-9_.-]", "_", name) / Path(after[k]).name
        place.parent.mkdir(parents=True, exist_ok=True)
        args = list(after)
        args[k] = place
        yield name, args, place, Path(before[k]).read_bytes(), Path(after[k]).read_bytes()


def watched(args: list, place: Path, old: bytes, new: bytes, work: Path) -> tuple[float, int, bytes]:
    """One watching process on a new cache: its first run on the file as it was (`old`), then
    the file saved with its change (`new`): that re-run's time as the command says it, its exit
    code and its report."""
    place.write_bytes(old)
    report = work / "watch-report.json"
    cache = work / "watch-cache"
    shutil.rmtree(cache, ignore_errors=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("GJK_NO_CACHE", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    proc = subprocess.Popen([sys.executable, "-m", "gjkcli", *map(str, args), "--watch", "--format", "json",
                             "-o", str(report), "--cache-dir", str(cache)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    said: list = []
    reader = threading.Thread(target=lambda: said.extend(iter(proc.stderr.readline, b"")), daemon=True)
    reader.start()

    def run_done(count: int) -> tuple[int, float]:
        deadline = time.monotonic() + 600
        while True:
            done = [m for m in map(_DONE.match, list(said)) if m]
            if len(done) >= count:
                return int(done[count - 1].group(1)), float(done[count - 1].group(2))
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"gjk --watch stopped: {b''.join(said).decode()[-2000:]}")
            time.sleep(0.02)

    try:
        run_done(1)
        time.sleep(0.4)  # past the file system's clock tick: the save is seen
        place.write_bytes(new)
        code, seconds = run_done(2)
        return seconds, code, report.read_bytes()
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--parts", type=int, default=10000, help="parts of the generated GLB (default 10000)")
    parser.add_argument("--poses", type=int, default=10000, help="the Panda's poses (default 10000)")
    parser.add_argument("--repeat", type=int, default=3, help="re-runs and fresh runs of each (default 3)")
    parser.add_argument("--only", default="glb,step,poses", help="glb, step, poses (default all)")
    args = parser.parse_args(argv)
    from _common import markdown_table

    # the bytecode an installed package has (as bench_cache.py): no side compiles gjk's modules
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "gjkcli")], env=env, capture_output=True)
    work = Path(tempfile.mkdtemp(prefix="gjk-bench-watch-"))
    rows, same_all = [], True
    try:
        for name, gjk_args, place, old, new in scenarios(work, args.parts, args.poses, tuple(args.only.split(","))):
            runs = [watched(gjk_args, place, old, new, work) for _ in range(args.repeat)]
            place.write_bytes(new)
            fresh, outs = [], set()
            for _ in range(args.repeat):
                t, code, out, _ = gjk(gjk_args, None)
                fresh.append(t)
                outs.add((code, out))
            f, w = statistics.median(fresh), statistics.median(r[0] for r in runs)
            same = outs == {(code, out) for _, code, out in runs}
            same_all &= same
            print(f"{name}: fresh {f:.2f} s, watch re-run {w:.3f} s (ratio {w / f:.2f}), same JSON {same}",
                  flush=True)
            rows.append([name, f"{f:.2f}", f"{w:.3f}", f"{w / f:.2f}", "yes" if same else "NO"])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print()
    print(f"The re-run of a `gjk scan FILE --watch --format json` process (on a new cache) after the "
          f"file is saved with its change (the time the command says for the run; one process "
          f"each time, {args.repeat} times) against whole `gjk scan FILE --format json --no-cache` "
          f"processes on the changed file ({args.repeat} times); medians.")
    print()
    print(markdown_table(["scenario", "fresh process (s)", "watch re-run (s)", "re-run / fresh", "same JSON"],
                         rows))
    return 0 if same_all else 1


if __name__ == "__main__":
    sys.exit(main())
