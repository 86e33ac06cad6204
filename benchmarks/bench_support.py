"""Cost of one support call against hull size, and where the linear scan beats hill climbing.

(a) Scaling. Hulls of 100; 1,000; 10,000 and 100,000 vertices: points on a sphere (every point
    a hull vertex) and points uniform in a ball (a cloud: only its outer points are vertices; the
    table gives the hull's vertex count). Each hull answers streams of directions through the
    compiled loop of gjkcli.engine._core.support:
      walk 0.03 / walk 0.3   each direction the previous one turned by 0.03 or 0.3 rad, the climb
                             warm-started where the last one ended, as inside GJK (0.3 rad is
                             the median turn between GJK iterations on the bench_engine pairs,
                             0.03 rad its converging tail);
      cold                   uniform random directions, each climb from the core's cold start (as
                             EPA calls it today);
      brute                  the linear scan max(V @ d) (brute_force_below set above n).
    "steps" is the engine's own count per call (climb moves and plateau checks). Target (the
    issue): support on a 100,000-vertex hull costs at most 20 times what it costs on a 100-vertex
    hull; brute force costs 1,000 times.

(b) Crossover. Hulls of 8 to 256 vertices (points on ellipsoids): hill climbing against the
    linear scan per call, and per query (GJK + EPA verdicts of random pairs through
    gjkcli.engine._core.batch, brute_force_below at 0 and above n). The smallest n from which hill
    climbing stays faster is the value for brute_force_below in gjkcli/tolerances.py.

Times are per call, from chunks of about a millisecond each timed several times: each chunk's
fastest pass, summed, with the fixed cost of a call counted once (_common.chunked_time). Other
processes only ever add time, so this is the quiet-machine figure; the JSON also holds the median
pass.

Usage:
    python benchmarks/bench_support.py [--quick] [--json FILE] [--seed S]
"""
from __future__ import annotations

import argparse
import os
import time

# One BLAS thread, set before NumPy loads OpenBLAS: its idle threads spin on the other core of a
# small machine, which is noise in the timings.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np

from _common import (
    chunked_time,
    cloud_points,
    ellipsoid_hulls,
    hull_of,
    machine,
    markdown_table,
    pack_poses,
    place_pairs,
    sphere_points,
    tolerances,
    unit_vectors,
    walk_directions,
    write_json,
)
from gjkcli.engine import _core
from gjkcli.engine.query import WANT
from gjkcli.engine.shapes import ShapeSet
from gjkcli.tolerances import DEFAULT

SCALING_SIZES = (100, 1_000, 10_000, 100_000)
CROSSOVER_SIZES = (8, 12, 16, 20, 24, 28, 32, 40, 48, 64, 96, 128, 192, 256)
WALK_STEPS = (0.03, 0.3)
CLIMB = tolerances(brute_force_below=0)        # always hill climbing
SCAN = tolerances(brute_force_below=2**31 - 1)  # always the linear scan


def per_call(shapeset: ShapeSet, directions: np.ndarray, tol: dict, warm: bool, passes: int):
    """us per support call through the compiled loop (_core.support over chunks of the directions;
    each chunk's fastest pass), the same as the median pass, and the mean climb steps."""
    best, median = chunked_time(lambda index: _core.support(shapeset, 0, directions[index], tol, warm),
                                len(directions), passes)
    steps = _core.support(shapeset, 0, directions, tol, warm)[2]
    return best, median, float(steps.mean())


def check_same_support(shapeset, directions):
    """Hill climbing and the scan must find the same support value (ties may pick other vertices)."""
    v = shapeset.vertices
    climb = _core.support(shapeset, 0, directions, CLIMB, True)[1]
    scan = _core.support(shapeset, 0, directions, SCAN, True)[1]
    a = np.einsum("ij,ij->i", v[climb], directions)
    b = np.einsum("ij,ij->i", v[scan], directions)
    return float(np.max(np.abs(a - b)))


# -- (a) scaling ----------------------------------------------------------------------------------


def scaling(rng, args):
    streams = {f"walk {s:g}": (walk_directions(rng, args.directions, s), True) for s in WALK_STEPS}
    streams["cold"] = (unit_vectors(rng, args.directions), False)
    rows, records = [], []
    for kind in ("sphere", "cloud"):
        for n in SCALING_SIZES:
            t0 = time.perf_counter()
            pts = sphere_points(rng, n) if kind == "sphere" else cloud_points(rng, n)
            shape = hull_of(pts, expect=n if kind == "sphere" else None)
            ss = ShapeSet([shape])
            rec = {"kind": kind, "points": n, "hull_vertices": shape.n_vertices}
            row = [kind, n, shape.n_vertices]
            for name, (dirs, warm) in streams.items():
                us, median, steps = per_call(ss, dirs, CLIMB, warm, args.repeats)
                rec[name] = {"us": us, "median_pass_us": median, "steps": steps}
                row += [us, steps]
            # the scan touches every vertex: fewer directions keep the big hulls' runs short
            m = int(np.clip(args.scan_budget / shape.n_vertices, 200, args.directions))
            us, median, _ = per_call(ss, streams["cold"][0][:m], SCAN, False, args.repeats)
            rec["brute"] = {"us": us, "median_pass_us": median, "directions": m}
            rec["max_support_diff"] = check_same_support(ss, streams["walk 0.3"][0][:2000])
            row += [us]
            rows.append(row)
            records.append(rec)
            print(f"  {kind} {n}: {shape.n_vertices} hull vertices ({time.perf_counter() - t0:.1f} s)",
                  flush=True)
    return rows, records


def scaling_ratios(records):
    """cost(100,000 points) / cost(100 points) per stream, for the sphere and the cloud."""
    out = []
    for kind in ("sphere", "cloud"):
        small = next(r for r in records if r["kind"] == kind and r["points"] == SCALING_SIZES[0])
        big = next(r for r in records if r["kind"] == kind and r["points"] == SCALING_SIZES[-1])
        row = [kind, f"{small['hull_vertices']} -> {big['hull_vertices']}"]
        for name in [f"walk {s:g}" for s in WALK_STEPS] + ["cold", "brute"]:
            row.append(big[name]["us"] / small[name]["us"])
        out.append(row)
    return out


# -- (b) crossover --------------------------------------------------------------------------------


def crossover(rng, args):
    warm_dirs = walk_directions(rng, args.small_directions, 0.3)
    cold_dirs = unit_vectors(rng, args.small_directions)
    rows, records = [], []
    for n in CROSSOVER_SIZES:
        hulls = ellipsoid_hulls(rng, n, args.hulls)
        t = {"walk climb": [], "walk scan": [], "cold climb": [], "cold scan": []}
        for shape in hulls:  # per-call times, averaged over a few hulls of the same size
            ss = ShapeSet([shape])
            t["walk climb"].append(per_call(ss, warm_dirs, CLIMB, True, args.repeats)[0])
            t["walk scan"].append(per_call(ss, warm_dirs, SCAN, True, args.repeats)[0])
            t["cold climb"].append(per_call(ss, cold_dirs, CLIMB, False, args.repeats)[0])
            t["cold scan"].append(per_call(ss, cold_dirs, SCAN, False, args.repeats)[0])
        rec = {"vertices": n, **{f"{k} ns": float(np.mean(v)) * 1e3 for k, v in t.items()}}
        # whole queries: GJK + EPA verdicts on random pairs of these hulls
        ss = ShapeSet(hulls)
        ia, ib, pose_a, pose_b = place_pairs(rng, hulls, args.query_pairs)
        pa, pb = pack_poses(pose_a), pack_poses(pose_b)
        for name, tol in (("query climb us", CLIMB), ("query scan us", SCAN)):
            rec[name] = chunked_time(
                lambda index, tol=tol: _core.batch(ss, ia[index], ib[index], pa[index], pb[index], None,
                                                   DEFAULT.touching_rel, tol, WANT["verdict"], 0),
                len(ia), args.repeats)[0]
        records.append(rec)
        rows.append([n] + [rec[k] for k in ("walk climb ns", "walk scan ns", "cold climb ns", "cold scan ns",
                                            "query climb us", "query scan us")]
                    + [rec["query scan us"] / rec["query climb us"]])
    return rows, records


def first_win(records, climb, scan):
    """Smallest n of the sweep from which hill climbing is faster at every larger n."""
    win = None
    for rec in reversed(records):
        if rec[climb] < rec[scan]:
            win = rec["vertices"]
        else:
            break
    return win


# -- the run --------------------------------------------------------------------------------------


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a short run: fewer directions and repeats")
    parser.add_argument("--json", metavar="FILE", help="write the numbers to FILE")
    parser.add_argument("--seed", type=int, default=20240602)
    args = parser.parse_args(argv)
    args.repeats = 3 if args.quick else 7
    args.directions = 5_000 if args.quick else 20_000         # per stream, scaling
    args.scan_budget = 2e6 if args.quick else 1e7             # vertex visits per scan run
    args.small_directions = 20_000 if args.quick else 100_000  # per stream, crossover
    args.hulls = 2 if args.quick else 4                       # hulls per size, crossover
    args.query_pairs = 500 if args.quick else 3000
    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()

    print("(a) support cost against hull size", flush=True)
    rows, scale_records = scaling(rng, args)
    print()
    header = ["kind", "points", "hull vertices"]
    for s in WALK_STEPS:
        header += [f"walk {s:g} (us)", "steps"]
    header += ["cold (us)", "steps", "brute (us)"]
    print(markdown_table(header, rows))
    print()
    print(f"cost({SCALING_SIZES[-1]:,} points) / cost({SCALING_SIZES[0]} points); target <= 20 "
          "(hill climbing), brute force is 1,000 on the sphere:")
    print()
    ratio_rows = scaling_ratios(scale_records)
    print(markdown_table(["kind", "hull vertices"] + [f"walk {s:g}" for s in WALK_STEPS] + ["cold", "brute"],
                         ratio_rows))
    worst = max(r["max_support_diff"] for r in scale_records)
    print(f"\nHill climbing and the scan agree on the support value to {worst:.1e}.")

    print(f"\n(b) crossover: ns per support call (mean over {args.hulls} hulls per size), and us per query "
          "(GJK + EPA verdict of random pairs)", flush=True)
    print()
    rows, cross_records = crossover(rng, args)
    print(markdown_table(["vertices", "walk climb (ns)", "walk scan (ns)", "cold climb (ns)",
                          "cold scan (ns)", "query climb (us)", "query scan (us)", "scan/climb"], rows))
    found = {
        "walk": first_win(cross_records, "walk climb ns", "walk scan ns"),
        "cold": first_win(cross_records, "cold climb ns", "cold scan ns"),
        "query": first_win(cross_records, "query climb us", "query scan us"),
    }
    print()
    print("Hill climbing wins from (smallest n of the sweep from which it stays faster): "
          + ", ".join(f"{k} {v if v is not None else 'never'}" for k, v in found.items())
          + f". gjkcli/tolerances.py has brute_force_below = {DEFAULT.brute_force_below}.")
    wall = time.perf_counter() - start
    print(f"({wall:.0f} s)")
    if args.json:
        write_json(args.json, {"machine": machine(), "seed": args.seed, "wall_seconds": wall,
                               "scaling": scale_records, "crossover": cross_records,
                               "crossover_found": found,
                               "brute_force_below": DEFAULT.brute_force_below})


if __name__ == "__main__":
    main()
