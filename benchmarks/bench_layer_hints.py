"""What the DXF layer notes cost a read: `gjkcli.mesh.flat.read_drawing` on a nest with its sheet
on a layer of its own and no --sheet-layer (the case the "looks like a sheet" note is for), with
the notes and without them (the note function replaced by one that says nothing), alternating,
in one process. Prints the medians and their ratio.

Usage:
    python benchmarks/bench_layer_hints.py [--parts 10000] [--seed 0] [--repeat 5]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--parts", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)

    from make_nest import make_nest

    import gjkcli.mesh.flat as flat

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "nest.dxf"
        make_nest(path, args.parts, args.seed)
        hints = flat._layer_hints
        notes = [n for n in flat.read_drawing(path).notes if "looks like a sheet" in n]
        print(f"{args.parts:,} parts: {notes[0] if notes else 'no sheet note'}")
        times: dict = {"with the notes": [], "without": []}
        for _ in range(args.repeat):
            for name, function in (("with the notes", hints), ("without", lambda *a, **k: [])):
                flat._layer_hints = function
                started = time.perf_counter()
                flat.read_drawing(path)
                times[name].append(time.perf_counter() - started)
        flat._layer_hints = hints
    medians = {name: statistics.median(t) for name, t in times.items()}
    print("| read_drawing | median (s) |\n|---|---|")
    for name, m in medians.items():
        print(f"| {name} | {m:.3f} |")
    print(f"ratio with / without: {medians['with the notes'] / medians['without']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
