"""Undecided pairs over a corpus of models at the band `gjk scan` takes by default (or --tolerance).

Each file of the folders given (IFC models, STEP assemblies, meshes) is scanned by the installed
command in a fresh process, without the cache:

    gjk scan FILE --format json --no-cache --show-allowed -o OUT [--tolerance BAND]

and its report's summary read: the candidate pairs, the undecided ones (allowed pairs too: a
window `hosted` in its wall is answered as any other pair) and the exit code. Printed per file,
then the totals; the undecided pairs are named. Exit 1 when any pair is undecided or a file
could not be scanned.

The corpora are kept outside the repository (benchmarks/ifc_corpus.csv and step_corpus.json say
where each file comes from).

Usage:
    python benchmarks/undecided_corpus.py DIR_OR_FILE... [--tolerance BAND]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

# Fresh runs: the processes started here neither read nor write a cache.
os.environ.setdefault("GJK_NO_CACHE", "1")

SUFFIXES = {".ifc", ".ifczip", ".step", ".stp", ".stl", ".obj", ".glb", ".gltf", ".ply", ".3mf", ".off"}


def files(paths: list) -> list:
    out = []
    for p in map(Path, paths):
        if p.is_dir():
            out.extend(sorted(f for f in p.iterdir() if f.suffix.lower() in SUFFIXES))
        else:
            out.append(p)
    return out


def scan(path: Path, tolerance: str | None, out: Path) -> tuple[int, dict | None, str]:
    cmd = [sys.executable, "-m", "gjkcli", "scan", str(path), "--format", "json", "--no-cache",
           "--show-allowed", "-o", str(out)]
    if tolerance:
        cmd += ["--tolerance", tolerance]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode not in (0, 1) or not out.exists():
        return done.returncode, None, done.stderr.strip().splitlines()[-1] if done.stderr.strip() else ""
    return done.returncode, json.loads(out.read_text()), ""


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+", help="folders of models, or models")
    parser.add_argument("--tolerance", help="the band (`gjk scan --tolerance`); default: gjk's own")
    args = parser.parse_args(argv)
    total = undecided = failed = 0
    named = []
    with tempfile.TemporaryDirectory() as tmp:
        for k, path in enumerate(files(args.paths)):
            code, report, why = scan(path, args.tolerance, Path(tmp) / f"{k}.json")
            if report is None:
                failed += 1
                print(f"{path.name}: not scanned (exit {code}): {why}")
                continue
            s = report["summary"]
            total += s["pairs"]
            undecided += s["undecided"]
            named += [(path.name, p["a"], p["b"]) for p in report["pairs"] if p["status"] == "undecided"]
            print(f"{path.name}: {s['pairs']:,} candidate pairs, {s['undecided']} undecided (exit {code})")
    print(f"\n{undecided} undecided of {total:,} candidate pairs over {len(files(args.paths)) - failed} files"
          f" (band: {args.tolerance or 'the default'}); {failed} not scanned")
    for name, a, b in named:
        print(f"  undecided: {name}: {a} / {b}")
    return 1 if undecided or failed else 0


if __name__ == "__main__":
    sys.exit(main())
