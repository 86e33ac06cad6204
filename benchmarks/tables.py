"""Run the benchmark scripts and write the tables the docs include.

Each script in this folder prints Markdown tables that set gjk beside its peer's lean path (coal,
python-fcl through trimesh, shapely, IfcClash), measured side by side in one run. This script runs
a selection of them, each as its own process, and writes what they print as data:

    docs/benchmarks/<name>.md    the tables the script printed, its other output in a text block,
                                 and the exact command that produced them
    docs/benchmarks/<name>-<k>.csv  each table as CSV
    docs/benchmarks/machine.md   the machine (CPU, cores, memory, load), Python and the versions
                                 of gjk and of every library the scripts compare against

Usage:
    python benchmarks/tables.py [--quick] [--only NAME ...] [--out docs/benchmarks]

--quick runs each script at the small size listed in SUITE (the docs page says which sizes); the
full sizes are each script's defaults. Scripts whose inputs are missing (../shared, a browser,
an extra) are listed in machine.md as skipped, with the reason, instead of failing the run.
"""
from __future__ import annotations

import argparse
import csv
import datetime as dt
import importlib.metadata
import os
import platform
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"


@dataclass(frozen=True)
class Bench:
    name: str
    title: str
    script: str
    quick: tuple[str, ...]
    full: tuple[str, ...] = ()
    needs: tuple[str, ...] = ()  # importable modules, "shared" or "chromium"


SUITE = (
    Bench("engine", "The engine against coal", "bench_engine.py", ("--quick",), (), ("coal",)),
    Bench("support", "Support maps against hull size", "bench_support.py", ("--quick",)),
    Bench("exact", "The triangle test against python-fcl", "bench_exact.py", ("--quick",), (),
          ("fcl", "shared")),
    Bench("primitive", "A primitive against a mesh, beside python-fcl", "bench_primitive.py",
          ("--poses", "50"), (), ("fcl", "shared")),
    Bench("api", "The Python API against trimesh's CollisionManager", "bench_api.py",
          ("--objects", "300", "--repeats", "1", "--moving", "100", "--steps", "20"), (), ("fcl",)),
    Bench("scan", "gjk scan against trimesh + python-fcl", "bench_scan.py", ("--sizes", "1000"),
          ("--sizes", "1000,10000"), ("fcl",)),
    Bench("plane", "The plane's narrow phase against shapely", "bench_plane.py",
          ("--pairs", "1000"), (), ("shapely",)),
    Bench("nest", "A 2D nest against shapely", "bench_nest.py", ("--parts", "1000"), (),
          ("shapely", "ezdxf")),
    Bench("matrix", "The self-collision matrix against trimesh + python-fcl", "bench_matrix.py",
          ("--samples", "2000"), (), ("fcl", "shared")),
    Bench("check", "gjk check's wall time", "bench_check.py", ("--runs", "3")),
)

# The libraries whose versions the tables depend on.
LIBRARIES = ("numpy", "scipy", "trimesh", "manifold3d", "coal", "python-fcl", "shapely", "ezdxf",
             "ifcopenshell", "cadquery-ocp-novtk", "dask", "plotly", "matplotlib")


def missing(bench: Bench) -> str | None:
    """Why the benchmark cannot run here, or None."""
    for need in bench.needs:
        if need == "shared":
            if not SHARED.is_dir():
                return f"{SHARED} (the real-world meshes and robots) is absent"
        elif need == "chromium":
            if shutil.which("chromium") is None:
                return "no chromium on PATH"
        else:
            try:
                __import__(need)
            except ImportError:
                return f"{need} is not installed"
    return None


def split_output(text: str) -> tuple[list[list[str]], list[str]]:
    """The Markdown tables in a script's output (each a list of lines) and its other lines."""
    tables: list[list[str]] = []
    other: list[str] = []
    current: list[str] = []
    for line in text.splitlines():
        if line.lstrip().startswith("|"):
            current.append(line.strip())
            continue
        if current:
            tables.append(current)
            current = []
        if line.strip():
            other.append(line.rstrip())
    if current:
        tables.append(current)
    return tables, other


def table_rows(table: list[str]) -> list[list[str]]:
    """A Markdown table's cells, the separator row left out."""
    rows = []
    for line in table:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if all(set(c) <= set("-: ") for c in cells):
            continue
        rows.append(cells)
    return rows


def run(bench: Bench, quick: bool, out: Path) -> tuple[str, float]:
    """Run one script, write its tables; return its status line and its wall time."""
    args = bench.quick if quick else bench.full
    cmd = [sys.executable, str(ROOT / "benchmarks" / bench.script), *args]
    shown = " ".join(["python", f"benchmarks/{bench.script}", *args])
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=ROOT / "benchmarks", capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return f"failed (exit {done.returncode}: {tail})", seconds
    tables, other = split_output(done.stdout)
    page = [f"<!-- written by `python benchmarks/tables.py{' --quick' if quick else ''}`; do not edit -->",
            "", f"Command: `{shown}` ({seconds:.0f} s).", ""]
    for k, table in enumerate(tables, 1):
        page += [*table, ""]
        with open(out / f"{bench.name}-{k}.csv", "w", newline="", encoding="utf-8") as f:
            csv.writer(f).writerows(table_rows(table))
    if other:
        page += ["The script's other output:", "", "```text", *other, "```", ""]
    (out / f"{bench.name}.md").write_text("\n".join(page), encoding="utf-8")
    return f"{len(tables)} table(s)", seconds


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def memory_gb() -> str:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                return f"{int(line.split()[1]) / 2**20:.1f} GB"
    except OSError:
        pass
    return "unknown"


def load() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


def version(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def commit() -> str:
    done = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True)
    return done.stdout.strip() or "unknown"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the small sizes of SUITE")
    ap.add_argument("--only", nargs="*", choices=[b.name for b in SUITE], help="these benchmarks")
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "benchmarks")
    ap.add_argument("--note", default="", help="a line about the machine's state, written as given")
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    chosen = [b for b in SUITE if not a.only or b.name in a.only]
    load_before = load()
    status = []
    for bench in chosen:
        reason = missing(bench)
        if reason:
            status.append((bench, f"skipped: {reason}", 0.0))
            print(f"{bench.name}: skipped ({reason})", flush=True)
            continue
        said, seconds = run(bench, a.quick, a.out)
        status.append((bench, said, seconds))
        print(f"{bench.name}: {said}, {seconds:.0f} s", flush=True)
    lines = [f"<!-- written by `python benchmarks/tables.py{' --quick' if a.quick else ''}`; do not edit -->", "",
             "| | |", "|---|---|",
             f"| date (UTC) | {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} |",
             f"| gjk | {version('gjk')} (commit {commit()}) |",
             f"| CPU | {cpu_model()}, {os.cpu_count()} logical cores |",
             f"| memory | {memory_gb()} |",
             f"| load average (1, 5, 15 min) | before: {load_before}; after: {load()} |",
             f"| system | {platform.system()} {platform.release()} |",
             f"| Python | {platform.python_version()} ({platform.python_implementation()}) |",
             *[f"| {name} | {version(name)} |" for name in LIBRARIES],
             f"| sizes | {'quick (each script below with the arguments shown)' if a.quick else 'the scripts defaults'} |"]
    if a.note:
        lines.append(f"| note | {a.note} |")
    lines += ["", "| benchmark | result | wall time (s) |", "|---|---|---:|"]
    lines += [f"| {b.name} | {said} | {sec:.0f} |" for b, said, sec in status]
    (a.out / "machine.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return 0 if all(not s.startswith("failed") for _, s, _ in status) else 1


if __name__ == "__main__":
    sys.exit(main())
