"""Read every URDF under some folders with yourdfpy and with `gjk scan`, and count who reads what.

    python scripts/robot_corpus.py FOLDER... [--skip PART]...

For each *.urdf file: does yourdfpy parse it (meshes not loaded, as its own `load` checks a file),
and what is `gjk scan FILE -q`'s exit code (0 or 1: read and checked; 2: refused, with its one
line). Prints one line per file gjk refuses or yourdfpy cannot read, then the counts. The
README's figures for example-robot-data (the PyPI wheel's cmeel.prefix/share/example-robot-data/
robots) and pybullet_data (inside the pybullet wheel, less its 1,000 generated random_urdfs) come
from this script; it downloads nothing.
"""
from __future__ import annotations

import argparse
import logging
import subprocess
import sys
import warnings
from collections import Counter
from pathlib import Path


def yourdfpy_reads(path: Path) -> bool:
    import yourdfpy

    try:
        yourdfpy.URDF.load(str(path), load_meshes=False, build_scene_graph=False)
    except Exception:  # any refusal of the reference reader counts as "does not read"
        return False
    return True


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--skip", action="append", default=[], metavar="PART",
                        help="leave out files whose path holds this folder name (repeatable)")
    args = parser.parse_args()
    logging.disable(logging.CRITICAL)
    warnings.simplefilter("ignore")
    gjk = [sys.executable, "-m", "gjkcli"]
    counts: Counter = Counter()
    for folder in args.folders:
        for path in sorted(folder.rglob("*.urdf")):
            if any(part in path.parts for part in args.skip):
                continue
            theirs = yourdfpy_reads(path)
            run = subprocess.run([*gjk, "scan", str(path), "-q"], capture_output=True, text=True,
                                 timeout=600)
            ours = "read" if run.returncode in (0, 1) else "refused"
            counts[(theirs, ours)] += 1
            if ours == "refused" or not theirs:
                why = run.stderr.strip().splitlines()[-1] if run.stderr.strip() else ""
                print(f"{'yourdfpy reads' if theirs else 'yourdfpy fails'}; gjk {ours} "
                      f"(exit {run.returncode}): {path} {why}")
    total = sum(counts.values())
    readable = counts[(True, "read")] + counts[(True, "refused")]
    print(f"{total} URDFs; yourdfpy reads {readable}; gjk reads {counts[(True, 'read')]} of those "
          f"and {counts[(False, 'read')]} of the {total - readable} others")
    return 0


if __name__ == "__main__":
    sys.exit(main())
