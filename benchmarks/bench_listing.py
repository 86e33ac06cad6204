"""The client's memory of `gjk scan --all-pairs` against the number of pairs it lists.

A scene of --parts convex parts (scripts/make_scan_scene.py), scanned with a clearance larger
than the scene (every pair within reach: parts x (parts - 1) / 2 pairs, each listed) and
`--fail-on collision` (a clearance pair is then no violation: most pairs are plain rows,
`gjkcli.pipeline.streamed`), by the installed command in a fresh process, writing the JSON to a
file:

    gjk scan SCENE.glb --all-pairs --clearance 1000 --fail-on collision --format json -o OUT
        [--dask local:N]

For each size, the command's own peak resident memory (VmHWM, as benchmarks/bench_dask.py
measures it: the process alone, not its children, so with --dask the client alone), its CPU
time, the JSON's size and the pairs listed; then the memory per pair between the two largest
sizes (the slope: what each further pair costs the client, the interpreter's and the modules'
fixed cost aside).

Usage:
    python benchmarks/bench_listing.py [--parts 300,600,1500] [--dask local:2] [--keep DIR]
                                       [--seed S] [--json FILE]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from _entry import measured

os.environ.setdefault("GJK_NO_CACHE", "1")

ROOT = Path(__file__).resolve().parents[1]



def scene(parts: int, folder: Path, seed: int) -> Path:
    path = folder / f"scene_{parts}.glb"
    if not path.exists():
        subprocess.run([sys.executable, str(ROOT / "scripts" / "make_scan_scene.py"), str(parts), str(path),
                        "--seed", str(seed)], check=True, stdout=subprocess.DEVNULL)
    return path


def measure(path: Path, folder: Path, dask: str | None) -> dict:
    out, stats = folder / f"{path.stem}.json", folder / f"{path.stem}.peak"
    args = ["scan", path, "--all-pairs", "--clearance", "1000", "--fail-on", "collision", "--format", "json",
            "-o", out] + (["--dask", dask] if dask else [])
    wall, peak, cpu, _ = measured(args, stats)
    with open(out, "rb") as f:  # the summary is at the end: read the tail, not the whole file
        f.seek(max(0, out.stat().st_size - 4096))
        tail = f.read().decode(errors="replace")
    pairs = int(tail.split('"pairs":', 1)[1].split(",", 1)[0])
    size = out.stat().st_size
    out.unlink()
    return {"pairs": pairs, "peak_kb": peak, "cpu_s": cpu, "wall_s": wall, "json_bytes": size}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--parts", default="300,600,1500")
    ap.add_argument("--dask", default=None)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep", default=None)
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    sizes = [int(x) for x in args.parts.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(args.keep or tmp)
        folder.mkdir(parents=True, exist_ok=True)
        rows = []
        print("| parts | pairs listed | client peak MB | CPU s | wall s | JSON MB |")
        print("|---:|---:|---:|---:|---:|---:|")
        for n in sizes:
            got = {"parts": n, **measure(scene(n, folder, args.seed), folder, args.dask)}
            rows.append(got)
            print(f"| {n:,} | {got['pairs']:,} | {got['peak_kb'] / 1024:.0f} | {got['cpu_s']:.1f} | "
                  f"{got['wall_s']:.1f} | {got['json_bytes'] / 2**20:.0f} |", flush=True)
    if len(rows) >= 2:
        a, b = rows[-2], rows[-1]
        slope = (b["peak_kb"] - a["peak_kb"]) * 1024 / max(1, b["pairs"] - a["pairs"])
        print(f"\nclient memory per further pair: {slope:.0f} bytes "
              f"({a['pairs']:,} -> {b['pairs']:,} pairs{', ' + args.dask if args.dask else ', one process'})")
        rows.append({"bytes_per_pair": slope})
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
