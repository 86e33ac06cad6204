"""`gjk scan nest.dxf --clearance K` against shapely 2, side by side in one run.

scripts/make_nest.py writes a DXF nest of N sheet parts (default 10,000: rectangles, slots with
bulges, discs, L brackets, plates with holes, some with a slug in the hole; some neighbours
planted touching, within the kerf or overlapping). The question both answer: which pairs of parts
are closer than the kerf K, overlapping and touching pairs included.

The DXF is read once by gjk's reader (gjkcli.mesh.flat.read_flat_objects: ezdxf, flattening,
nesting); loading is OUT of all timings, and all get the same rings. The reader hands gjk its
parts with every ring also packed into one vertex array and two offset arrays (FlatParts); the
same packed arrays, with each ring closed as shapely wants it, are made for shapely's packed
row before the clock starts. Then, alternating, best of --repeat runs each:

    gjk              the run's plane stages (gjkcli.pipeline.flat.FlatRun) on the parts: boxes from the packed arrays,
                     the broad phase on the boxes, the candidates' parts packed for the compiled
                     core (segment hierarchies), plane.batch on the candidate pairs, the verdicts
                     and the Findings (object records made when a report reads them)
    shapely          shapely.Polygon per part from its rings (shell and holes) and an STRtree
                     built over them, then tree.query(polygons, predicate="dwithin",
                     distance=D) for candidate pairs, then shapely.distance on each candidate
                     pair (vectorised), keeping those below D
    shapely packed   the same, with the polygons made in one call from the packed arrays
                     (shapely.from_ragged_array): shapely given what gjk's reader gives gjk

D is K plus the pair's two flattening bounds (each part its own: 0 for straight edges), the
threshold gjk's clearance applies (a pair the flattening could hide is not passed; gjk also
lets a gap within the touching band's rounding of K pass), so the two answer the same question
on the same polygons. A pair whose polygons are K apart or more but within their bounds of it is
settled as gjk settles it: its arcs cut finer (the new points on the circle through the
flattened vertices), shapely's distance between the finer polygons less their finer bounds at
least K, or it fails. The pair sets must be equal, or the script exits 1.

Usage:
    python benchmarks/bench_nest.py [--parts 10000] [--kerf 0.5] [--seed 0] [--repeat 3]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

# Timed runs are fresh runs: the gjk processes started here neither read nor write a cache
# (benchmarks/bench_cache.py times the cache).
os.environ.setdefault("GJK_NO_CACHE", "1")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))


def gjk_pairs(parts, kerf: float):
    from gjkcli.pipeline import flat
    from gjkcli.pipeline.run import Options

    options = Options(clearance=kerf)
    run = flat.FlatRun(options, "scan", None)
    found = run.findings(parts, (), None, across=False, every_pair=0)
    return {tuple(sorted((p.a, p.b))) for p in found.pairs if p.violation}, found


def shapely_pairs(parts, kerf: float):
    import shapely

    polygons = np.array([shapely.Polygon(p.rings[0], holes=list(p.rings[1:])) for p in parts])
    chord = np.array([p.chord for p in parts])
    tree = shapely.STRtree(polygons)
    a, b = tree.query(polygons, predicate="dwithin", distance=kerf + 2 * chord.max())
    keep = a < b
    a, b = a[keep], b[keep]
    d = shapely.distance(polygons[a], polygons[b])
    close = d < kerf + chord[a] + chord[b]
    close[close & (d >= kerf)] = [not _arcs_pass(parts[i], parts[j], kerf)
                                  for i, j in zip(a[close & (d >= kerf)].tolist(), b[close & (d >= kerf)].tolist())]
    names = [p.name for p in parts]
    return {tuple(sorted((names[i], names[j]))) for i, j in zip(a[close].tolist(), b[close].tolist())}


def _arcs_pass(pa, pb, kerf: float) -> bool:
    """Whether a pair whose polygons are at least the kerf apart but within their flattening
    bounds of it is truly the kerf apart: its arcs cut 8, then 64 times finer (the new points on
    the circle through the flattened vertices, `gjkcli.mesh.flat.refined_arcs`, as gjk does),
    and shapely's distance between the finer polygons, less their finer bounds, at least the
    kerf (less the touching band's rounding of it, as gjk's at-K rule)."""
    import shapely

    from gjkcli.mesh.flat import refined_arcs
    from gjkcli.tolerances import DEFAULT

    # at K is not closer than K: a gap within the touching band's rounding of K passes
    size = max(float(np.linalg.norm(np.ptp(p.bounds, axis=0))) for p in (pa, pb))
    at_least = kerf - DEFAULT.touching_rel * size
    for times in (8, 64):
        fa, fb = refined_arcs(pa, times), refined_arcs(pb, times)
        if fa is None or fb is None:
            return False
        d = shapely.distance(shapely.Polygon(fa.rings[0], holes=list(fa.rings[1:])),
                             shapely.Polygon(fb.rings[0], holes=list(fb.rings[1:])))
        if d - fa.chord - fb.chord >= at_least:
            return True
    return False


def packed_for_shapely(parts):
    """(coords, (ring_offsets, part_offsets)) for shapely.from_ragged_array: the reader's packed
    arrays with each ring's first point repeated at its end (shapely's rings are closed)."""
    start, count = parts.ring_start[:-1], np.diff(parts.ring_start)
    end = np.cumsum(count + 1)
    index = np.repeat(start - (end - count - 1), count + 1) + np.arange(end[-1])
    index[end - 1] = start
    return parts.vertices[index], (np.concatenate([[0], end]), parts.part_ring)


def shapely_packed_pairs(parts, packed, kerf: float):
    import shapely

    polygons = shapely.from_ragged_array(shapely.GeometryType.POLYGON, *packed)
    chord = np.array([p.chord for p in parts])
    tree = shapely.STRtree(polygons)
    a, b = tree.query(polygons, predicate="dwithin", distance=kerf + 2 * chord.max())
    keep = a < b
    a, b = a[keep], b[keep]
    d = shapely.distance(polygons[a], polygons[b])
    close = d < kerf + chord[a] + chord[b]
    close[close & (d >= kerf)] = [not _arcs_pass(parts[i], parts[j], kerf)
                                  for i, j in zip(a[close & (d >= kerf)].tolist(), b[close & (d >= kerf)].tolist())]
    names = [p.name for p in parts]
    return {tuple(sorted((names[i], names[j]))) for i, j in zip(a[close].tolist(), b[close].tolist())}


def main(argv=None) -> int:
    from make_nest import make_nest

    from gjkcli.mesh.flat import read_flat_objects

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--parts", type=int, default=10_000)
    ap.add_argument("--kerf", type=float, default=0.5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    import shapely

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "nest.dxf"
        planted = make_nest(path, args.parts, args.seed, kerf=args.kerf, off_sheet=0)
        t = time.perf_counter()
        parts, _ = read_flat_objects(path, sheet_layer="SHEET")  # the sheet: not a part
        load = time.perf_counter() - t
    print(f"nest: {len(parts):,} parts ({args.parts:,} cells; planted {planted}), "
          f"{sum(p.n_vertices for p in parts):,} vertices; read in {load:.2f} s (not timed below)")
    packed = packed_for_shapely(parts)
    best = {"gjk": float("inf"), "shapely": float("inf"), "packed": float("inf")}
    for _ in range(args.repeat):
        t = time.perf_counter()
        ours, found = gjk_pairs(parts, args.kerf)
        best["gjk"] = min(best["gjk"], time.perf_counter() - t)
        t = time.perf_counter()
        theirs = shapely_pairs(parts, args.kerf)
        best["shapely"] = min(best["shapely"], time.perf_counter() - t)
        t = time.perf_counter()
        theirs_packed = shapely_packed_pairs(parts, packed, args.kerf)
        best["packed"] = min(best["packed"], time.perf_counter() - t)
    stages = ", ".join(f"{k} {v * 1e3:.0f} ms" for k, v in found.timings.items())
    print(f"gjk: {len(ours):,} pairs closer than the kerf ({found.candidates:,} candidates; {stages})")
    print(f"shapely {shapely.__version__}: {len(theirs):,} pairs")
    for what, other in (("shapely", theirs), ("shapely packed", theirs_packed)):
        if ours != other:
            print(f"DISAGREE: {len(ours - other)} only gjk, {len(other - ours)} only {what}; "
                  f"e.g. {sorted(ours ^ other)[:5]}")
            return 1
    ms = {k: f"{v * 1e3:.0f} ms" for k, v in best.items()}
    print()
    print("| parts | pairs closer than the kerf | gjk | shapely 2 | gjk / shapely "
          "| shapely 2, packed | gjk / shapely packed |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    print(f"| {len(parts):,} | {len(ours):,} | {ms['gjk']} | {ms['shapely']} | "
          f"{best['gjk'] / best['shapely']:.2f} | {ms['packed']} | "
          f"{best['gjk'] / best['packed']:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
