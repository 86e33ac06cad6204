"""What each machine-readable report costs beside the JSON one: the same scan written as JSON,
SARIF, JUnit and GitHub annotations, whole processes, alternating.

    gjk scan INPUT --format FORMAT -o OUT      (FORMAT: json, sarif, junit, github)

Inputs: scripts/make_scan_scene.py's scene of --parts parts (about 0.8 colliding pairs a part,
so that the reports hold thousands of failing pairs), and the Great Court roof of the gathered
IFC corpus (--ifc, default ../corpus/ifc/geometrygym_great_court_roof.ifc: 25,000 listed pairs,
skipped when absent; benchmarks/ifc_corpus.csv says where it comes from). The CI formats are
what a CI job writes (the README's example is SARIF): a report that costs much more than the
JSON of the same findings is the report's own cost, not the scan's.

Each run is the command in a fresh process through benchmarks/_entry.py, which writes its own
peak resident memory (VmHWM) and CPU seconds; the cache is off (GJK_NO_CACHE: every run scans).
Medians of --repeat runs of each format, the formats taken in turn within each repeat, each
repeat starting with the next format. Printed: per input and format, wall and CPU seconds, peak
memory, the report's size, and each figure over the JSON run's.

Usage:
    python benchmarks/bench_reports.py [--parts 20000] [--ifc PATH] [--repeat 3] [--keep DIR]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from _entry import measured

os.environ.setdefault("GJK_NO_CACHE", "1")

ROOT = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("GJK_IFC_CORPUS", ROOT.parent / "corpus" / "ifc"))
FORMATS = ("json", "sarif", "junit", "github")


def scene(parts: int, folder: Path) -> Path:
    path = folder / f"scene_{parts}.glb"
    if not path.exists():
        subprocess.run([sys.executable, str(ROOT / "scripts" / "make_scan_scene.py"), str(parts), str(path),
                        "--seed", "0"], check=True, stdout=subprocess.DEVNULL)
    return path


def run(path: Path, fmt: str, folder: Path) -> dict:
    out, stats = folder / f"{path.stem}.{fmt}", folder / f"{path.stem}.{fmt}.peak"
    wall, peak, cpu, _ = measured(["scan", path, "--format", fmt, "-o", out], stats)
    return {"wall": wall, "cpu": cpu, "peak": peak / 1024, "size": out.stat().st_size / 2**20}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--parts", type=int, default=20000, help="parts of the generated scene (0: skip it)")
    ap.add_argument("--ifc", type=Path, default=CORPUS / "geometrygym_great_court_roof.ifc",
                    help="an IFC model (skipped when absent)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--keep", type=Path, help="write the scene and the reports here")
    args = ap.parse_args(argv)
    # the bytecode an installed package has: no run compiles gjk's modules
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "gjkcli")], capture_output=True,
                   env={k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"})
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        inputs = []
        if args.parts:
            inputs.append((f"generated scene, {args.parts:,} parts", scene(args.parts, folder)))
        if args.ifc.is_file():
            inputs.append((args.ifc.name, args.ifc))
        else:
            print(f"{args.ifc}: not found, skipped (set --ifc or GJK_IFC_CORPUS)")
        print("| input | format | wall s | CPU s | peak MB | report MB | wall / JSON | CPU / JSON | peak / JSON |")
        print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
        for name, path in inputs:
            got: dict = {f: [] for f in FORMATS}
            for r in range(args.repeat):  # each repeat starts with another format
                for fmt in FORMATS[r % len(FORMATS):] + FORMATS[:r % len(FORMATS)]:
                    got[fmt].append(run(path, fmt, folder))
            med = {f: {k: statistics.median(r[k] for r in rows) for k in rows[0]} for f, rows in got.items()}
            base = med["json"]
            for fmt in FORMATS:
                m = med[fmt]
                print(f"| {name} | {fmt} | {m['wall']:.2f} | {m['cpu']:.2f} | {m['peak']:.0f} | {m['size']:.1f} | "
                      f"{m['wall'] / base['wall']:.2f} | {m['cpu'] / base['cpu']:.2f} | "
                      f"{m['peak'] / base['peak']:.2f} |", flush=True)


if __name__ == "__main__":
    main()
