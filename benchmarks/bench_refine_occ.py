"""A STEP scan's refinement on the exact solids against OpenCASCADE's own calls on the same pairs
(issue 43: a pair that needs the exact solids costs no more than OpenCASCADE's distance and
common part on its two solids).

For each file, in this one process (one job: no fork, so that CPU time is the whole work):

    gjk     `gjkcli.pipeline.run.scan` of the file from empty caches, the CPU time of its
            refinement of pairs with exact solids (`gjkcli.pipeline.tessellated.decide_all`:
            the triangles' distance of every pair it is handed, meshes made finer, OpenCASCADE's
            distances and common parts, canonical copies); the pairs that reached OpenCASCADE
            (a common part asked: `gjkcli.mesh.cad.common_part`) are recorded
    common  for those pairs, BRepAlgoAPI_Common of the file's two placed solids, then GProp's
            volume and area of the result, as a plain loop
    dist    for those pairs, BRepExtrema_DistShapeShape of the two solids (--no-distance: left
            out; on the SolidWorks 2017 assembly it is 25 s of CPU for 21 pairs)

CPU time (time.process_time), medians of --runs runs, gjk and OpenCASCADE's loop alternating.
Printed per file: the pairs, the three CPU times and gjk / (common + dist), and gjk's own
OpenCASCADE calls (common parts and their CPU). Where the machine is shared, CPU time still
moves with the other work (caches, hyper-threads): compare runs made together.

Usage:
    python benchmarks/bench_refine_occ.py FILE [FILE ...] [--runs 3] [--no-distance]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

os.environ.setdefault("GJK_NO_CACHE", "1")


def gjk_refine(path: str):
    """(CPU seconds of the scan's refinement, [(refs_a, refs_b)] of the pairs whose common part
    was asked, CPU seconds of those common parts)."""
    from gjkcli import clock
    from gjkcli.mesh import cad
    from gjkcli.pipeline import run, tessellated

    cad.forget_answers()
    refined, asked, spent = [], [], []
    common_part = cad.common_part

    def recorded(refs_a, refs_b, *args, **kwargs):
        asked.append((refs_a, refs_b))
        return common_part(refs_a, refs_b, *args, **kwargs)

    cad.common_part = recorded
    try:
        with clock.cpu_timed(tessellated, "decide_all", refined), clock.cpu_timed(cad, "common_part", spent):
            found = run.scan([path], run.Options(jobs=1))
    finally:
        cad.common_part = common_part
    if found.errors:
        raise SystemExit(f"{path}: {found.errors[0]}")
    seen, pairs = set(), []
    for refs in asked:  # once a pair (a canonical copy's and the file's solids' ask it twice)
        if refs not in seen:
            seen.add(refs)
            pairs.append(refs)
    return sum(refined), pairs, sum(spent)


def opencascade(pairs, distance: bool) -> tuple[float, float]:
    """(CPU seconds of BRepAlgoAPI_Common + volume and area, of BRepExtrema_DistShapeShape)
    over `pairs`, on the file's placed solids."""
    from OCP.BRepAlgoAPI import BRepAlgoAPI_Common
    from OCP.BRepExtrema import BRepExtrema_DistShapeShape
    from OCP.BRepGProp import BRepGProp
    from OCP.GProp import GProp_GProps

    from gjkcli.mesh import cad

    solids = [(cad.placed_solid(a[0]), cad.placed_solid(b[0])) for a, b in pairs]
    started = time.process_time()
    for a, b in solids:
        shape = BRepAlgoAPI_Common(a, b).Shape()
        BRepGProp.VolumeProperties_s(shape, GProp_GProps())
        BRepGProp.SurfaceProperties_s(shape, GProp_GProps())
    common = time.process_time() - started
    dist = 0.0
    if distance:
        started = time.process_time()
        for a, b in solids:
            BRepExtrema_DistShapeShape(a, b).Value()
        dist = time.process_time() - started
    return common, dist


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--no-distance", action="store_true",
                    help="leave BRepExtrema_DistShapeShape out of OpenCASCADE's loop")
    args = ap.parse_args(argv)
    import OCP.BRepAlgoAPI  # noqa: F401 - imported before any timing

    print("| file | pairs | gjk refine (CPU s) | of it, gjk's common parts | common (CPU s) "
          "| dist (CPU s) | gjk / (common + dist) |")
    print("|---|---|---|---|---|---|---|")
    for path in args.files:
        gjk_refine(path)  # the file read, OpenCASCADE's code paged in
        ours, theirs_common, theirs_dist, commons = [], [], [], []
        pairs = []
        for k in range(args.runs):
            first = k % 2 == 0
            if not first:
                c, d = opencascade(pairs, not args.no_distance)
                theirs_common.append(c)
                theirs_dist.append(d)
            cpu, pairs, spent = gjk_refine(path)
            ours.append(cpu)
            commons.append(spent)
            if first:
                c, d = opencascade(pairs, not args.no_distance)
                theirs_common.append(c)
                theirs_dist.append(d)
        g, c, d = (statistics.median(x) for x in (ours, theirs_common, theirs_dist))
        dist = "left out" if args.no_distance else f"{d:.3f}"
        print(f"| {os.path.basename(path)} | {len(pairs)} | {g:.3f} | "
              f"{statistics.median(commons):.3f} | {c:.3f} | {dist} | "
              f"{g / (c + d) if c + d > 0 else float('nan'):.2f} |")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
