"""gjk against coal, side by side in one process, on identical pairs of random hulls.

For hulls of 100 and 1,000 vertices (points on random ellipsoids, so that every point is a hull
vertex), random rotations and offsets give a pool of pairs, about half of them overlapping.
Three queries are timed, each on the same pairs for both engines:

    intersection  all pairs        gjk batch(want="intersect")  coal.collide, enable_contact=False
    distance      separated pairs  gjk batch(want="distance")   coal.distance (default request)
    depth         overlapping      gjk batch(want="verdict")    coal.collide, enable_contact=True

The pairs are timed in chunks of about a millisecond of gjk work: each chunk once through gjk's
batch() (one compiled call for the chunk's pairs) and then through coal called per pair from
Python, as a Python user calls it, interleaved so that both see the same machine load; several
passes over all chunks. coal's calls are timed one by one (results cleared outside the clock, the
clock's own cost taken off). The table gives us per pair over all the pairs from each chunk's
(gjk) or each call's (coal) fastest pass, which removes the load of other processes (they only
ever add time), with batch()'s fixed cost per call counted once, as for one batch over all the
pairs; beside it, the median over passes of a whole pass (what a loaded machine shows) and
coal's median call. coal 3.0.3's default CollisionRequest has enable_contact=True, which runs
EPA on overlapping pairs: that is the depth query, so the boolean one turns it off.

The answers are compared: the intersection verdicts, the distances and the depths (max relative
difference). coal stops at its default tolerances (gjk_tolerance = epa_tolerance = 1e-6,
relative) while gjk certifies its bounds to gjk_rel = 1e-13 and epa_rel = 1e-10 of the pair
size; the diagnostics table shows what the tighter tolerances cost, and what the Python wrapper
around the compiled batch costs.

Usage:
    python benchmarks/bench_engine.py [--quick] [--json FILE] [--pairs M] [--repeats R]
                                      [--chunk-us T] [--single K] [--seed S]
"""
from __future__ import annotations

import argparse
import os
import sys
import time

# One BLAS thread, set before NumPy loads OpenBLAS: its idle threads spin on the other core of a
# small machine, which is noise in the timings.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np

from _common import (
    best_of,
    ellipsoid_hulls,
    machine,
    markdown_table,
    no_gc,
    pack_poses,
    place_pairs,
    timer_overhead_ns,
    to_coal,
    tolerances,
    write_json,
)
from gjkcli.engine import _core
from gjkcli.engine.query import WANT, batch, query
from gjkcli.engine.results import STATUS_CODES, Status
from gjkcli.engine.shapes import ShapeSet
from gjkcli.tolerances import DEFAULT

# Timed runs are fresh runs: the gjk processes started here neither read nor write a cache
# (benchmarks/bench_cache.py times the cache).
os.environ.setdefault("GJK_NO_CACHE", "1")

try:
    import coal
except ImportError:  # pragma: no cover - the benchmark needs coal
    sys.exit("bench_engine.py needs coal (pip install coal): it times gjk against it")

HULL_SIZES = (100, 1000)
HULLS_PER_SIZE = 6
# Centre offset as a fraction of the sum of the two hulls' extents: about half the pairs overlap.
OFFSET_RANGE = (0.42, 1.24)
# Status codes of the compiled core (gjkcli.engine.results.STATUS_CODES): collision has two, with and
# without a depth.
CLEAR = [k for k, s in STATUS_CODES.items() if s is Status.CLEAR]
COLLISION = [k for k, s in STATUS_CODES.items() if s is Status.COLLISION]


# -- the pairs -----------------------------------------------------------------------------------


class Pool:
    """Hulls of one vertex count and m random placements of pairs of them.

    shapes : the gjk hulls (local vertices centred on their box, pose = that centre)
    convex : the same vertices and triangles as coal.Convex
    ia, ib : (m,) hull indices; pose_a, pose_b : (m, 4, 4) placements on top of each hull's pose
    tf_a, tf_b : the resulting world transforms as coal.Transform3s
    """

    def __init__(self, rng: np.random.Generator, n: int, m: int):
        self.n = n
        self.shapes = ellipsoid_hulls(rng, n, HULLS_PER_SIZE)
        self.shapeset = ShapeSet(self.shapes)
        self.convex = [to_coal(s) for s in self.shapes]
        self.ia, self.ib, self.pose_a, self.pose_b = place_pairs(rng, self.shapes, m, OFFSET_RANGE)
        self.tf_a = [world_transform(self.pose_a[j], self.shapes[self.ia[j]]) for j in range(m)]
        self.tf_b = [world_transform(self.pose_b[j], self.shapes[self.ib[j]]) for j in range(m)]

    def subset(self, mask: np.ndarray) -> "Subset":
        return Subset(self, np.flatnonzero(mask))


class Subset:
    """Some of a pool's pairs, in the arrays both engines take."""

    def __init__(self, pool: Pool, index: np.ndarray):
        self.pool, self.index = pool, index
        self.m = len(index)
        self.ia, self.ib = pool.ia[index], pool.ib[index]
        self.pose_a, self.pose_b = pool.pose_a[index], pool.pose_b[index]
        self.coal_args = [(pool.convex[pool.ia[j]], pool.tf_a[j], pool.convex[pool.ib[j]], pool.tf_b[j])
                          for j in index]

    def ours(self, want: str, index=slice(None)):
        """gjk's batch() over the subset's pairs, or over some of them (index)."""
        return batch(self.pool.shapeset, self.ia[index], self.ib[index], pose_a=self.pose_a[index],
                     pose_b=self.pose_b[index], want=want)


def world_transform(pose: np.ndarray, shape) -> "coal.Transform3s":
    """coal's transform of the hull's local vertices: pose applied on top of the shape's pose."""
    T = pose @ shape.transform
    return coal.Transform3s(np.ascontiguousarray(T[:3, :3]), np.ascontiguousarray(T[:3, 3]))


# -- coal per pair from Python --------------------------------------------------------------------


def coal_collide(enable_contact: bool):
    request = coal.CollisionRequest()
    request.enable_contact = enable_contact
    result = coal.CollisionResult()

    def answer():
        if not result.isCollision():
            return 0.0, False
        depth = -result.getContact(0).penetration_depth if enable_contact else np.nan
        return depth, True

    return coal.collide, request, result, answer


def coal_distance():
    request = coal.DistanceRequest()
    result = coal.DistanceResult()
    return coal.distance, request, result, lambda: (result.min_distance, result.min_distance <= 0.0)


def chunks_of(m: int, size: int) -> list:
    """0..m-1 cut into consecutive chunks of about `size`: a chunk is one timed unit."""
    count = max(1, round(m / size))
    return [c for c in np.array_split(np.arange(m), count) if len(c)]


def time_side_by_side(sub: Subset, make, variants: dict, chunk_us: float, passes: int):
    """Interleaved timing of gjk and coal on the same chunks of pairs.

    variants : {name: fn(index)}, gjk calls over some of the subset's pairs ("gjk" first).
    Each chunk is timed through every gjk variant and then as coal calls from Python, one pair
    after the other, so that all see the same load; `passes` times over all chunks. A chunk holds
    about chunk_us of gjk work (25 to 500 pairs): short enough that most chunks run between two
    preemptions. coal's calls are timed one by one, their results cleared outside the clock and
    the clock's own cost taken off.

    gjk's figures are those of one batch over all the pairs: the fixed cost of a call (timed on an
    empty batch) is counted once, not once per chunk. Two statistics, us per pair:
      best    each chunk's (gjk) or each call's (coal) fastest pass, summed: other processes only
              ever add time, so this is the quiet-machine figure;
      median  the median over passes of a whole pass (what a loaded machine shows).
    Returns ({name: {"best", "median", "fixed_us"}}, coal's best time of each call, coal's answers,
    the chunk size).
    """
    call, request, result, answer = make()
    clock = time.perf_counter_ns
    clear = result.clear
    args = sub.coal_args
    answers = []
    for g1, t1, g2, t2 in args:  # warm-up, which also records the answers
        clear()
        call(g1, t1, g2, t2, request, result)
        answers.append(answer())
    overhead = timer_overhead_ns()
    gjk = variants["gjk"]
    pilot = np.arange(min(50, sub.m))
    fixed = best_of(lambda: gjk(pilot[:0]), 50)
    per_pair = max(best_of(lambda: gjk(pilot), 5) - fixed, 1e-3) / len(pilot)
    size = int(np.clip(round(chunk_us / per_pair), 25, 500))
    parts = chunks_of(sub.m, size)
    t_ours = {name: np.empty((passes, len(parts))) for name in variants}
    t_coal = np.empty((passes, sub.m))
    for p in range(passes):
        for c, index in enumerate(parts):
            for name, fn in variants.items():
                t0 = clock()
                fn(index)
                t_ours[name][p, c] = (clock() - t0) * 1e-3
            for j in index:
                g1, t1, g2, t2 = args[j]
                clear()
                t0 = clock()
                call(g1, t1, g2, t2, request, result)
                t_coal[p, j] = (clock() - t0 - overhead) * 1e-3
    stats = {}
    for name, fn in variants.items():
        f = best_of(lambda: fn(pilot[:0]), 100)
        extra = (len(parts) - 1) * f  # the fixed cost is paid once by one batch over all pairs
        t = t_ours[name]
        stats[name] = {"best": float(t.min(axis=0).sum() - extra) / sub.m,
                       "median": float(np.median(t.sum(axis=1)) - extra) / sub.m, "fixed_us": f}
    best_call = t_coal.min(axis=0)
    stats["coal"] = {"best": float(best_call.mean()), "median": float(np.median(t_coal.mean(axis=1)))}
    return stats, best_call, answers, size


# -- diagnostics ----------------------------------------------------------------------------------


def core_runner(sub: Subset, want: str, tol: dict):
    """The compiled batch alone on some of the pairs (poses pre-packed, no result objects)."""
    pa = pack_poses(sub.pose_a)
    pb = pack_poses(sub.pose_b)
    ss = sub.pool.shapeset

    def run(index):
        _core.batch(ss, sub.ia[index], sub.ib[index], pa[index], pb[index], None, DEFAULT.touching_rel,
                    tol, WANT[want], 0)

    return run


def per_pair_python(sub: Subset, want: str, count: int) -> float:
    """gjk called per pair from Python (query() on moved shapes), us per call, median call."""
    shapes = sub.pool.shapes
    pairs = [(shapes[sub.ia[k]].moved(sub.pose_a[k]), shapes[sub.ib[k]].moved(sub.pose_b[k]))
             for k in range(min(count, sub.m))]
    for a, b in pairs[:10]:
        query(a, b, want=want)
    times = []
    for a, b in pairs:
        t0 = time.perf_counter_ns()
        query(a, b, want=want)
        times.append(time.perf_counter_ns() - t0)
    return float(np.median(times)) * 1e-3


def relative_difference(a: np.ndarray, b: np.ndarray) -> float:
    a, b = np.asarray(a, float), np.asarray(b, float)
    if len(a) == 0:
        return float("nan")
    return float(np.max(np.abs(a - b) / np.maximum(np.maximum(np.abs(a), np.abs(b)), 1e-300)))


# -- the run --------------------------------------------------------------------------------------


def run(args) -> dict:
    rng = np.random.default_rng(args.seed)
    rows, checks, diag_rows, records = [], [], [], []
    loose = tolerances(gjk_rel=1e-6, epa_rel=1e-6)
    for n in HULL_SIZES:
        pool = Pool(rng, n, args.pairs)
        every = pool.subset(np.ones(args.pairs, bool))
        verdict = every.ours("verdict")
        separated = np.isin(verdict.status, CLEAR)
        overlapping = np.isin(verdict.status, COLLISION)
        other = args.pairs - separated.sum() - overlapping.sum()
        share = f"{separated.mean():.0%} separated, {overlapping.mean():.0%} overlapping" + (
            f", {other} touching or undecided" if other else "")
        print(f"hulls of {n} vertices: {args.pairs} pairs, {share}", flush=True)
        sep, over = pool.subset(separated), pool.subset(overlapping)

        plan = [
            ("intersection", every, "intersect", lambda: coal_collide(False)),
            ("distance", sep, "distance", coal_distance),
            ("depth", over, "verdict", lambda: coal_collide(True)),
        ]
        for name, sub, want, make in plan:
            if sub.m == 0:
                continue
            variants = {"gjk": lambda index, sub=sub, want=want: sub.ours(want, index),
                        "core": core_runner(sub, want, tolerances()),
                        "core, tol 1e-6": core_runner(sub, want, loose)}
            with no_gc():
                stats, coal_calls, answers, size = time_side_by_side(sub, make, variants, args.chunk_us,
                                                                     args.repeats)
            ours, theirs = stats["gjk"]["best"], stats["coal"]["best"]
            res = sub.ours(want)
            rec = {
                "query": name, "hull_vertices": n, "pairs": sub.m, "gjk_us": ours, "coal_us": theirs,
                "ratio": ours / theirs, "coal_median_call_us": float(np.median(coal_calls)),
                "gjk_median_pass_us": stats["gjk"]["median"], "coal_median_pass_us": stats["coal"]["median"],
                "ratio_median_pass": stats["gjk"]["median"] / stats["coal"]["median"],
                "core_us": stats["core"]["best"], "core_loose_us": stats["core, tol 1e-6"]["best"],
                "batch_fixed_us": stats["gjk"]["fixed_us"], "core_fixed_us": stats["core"]["fixed_us"],
                "chunk": size,
                "gjk_iterations_mean": float(res.iterations.mean()),
                "epa_iterations_mean": float(res.epa_iterations.mean()),
            }
            values = np.array([a[0] for a in answers])
            hits = np.array([a[1] for a in answers])
            if name == "intersection":
                ours_hit = ~np.isin(res.status, CLEAR)
                rec["agree"] = int((ours_hit == hits).sum())
                checks.append([name, n, f"verdicts agree on {rec['agree']} of {sub.m}", "", ""])
            elif name == "distance":
                rec["max_rel_diff"] = relative_difference(res.distance, values)
                rec["max_abs_diff"] = float(np.max(np.abs(res.distance - values))) if sub.m else np.nan
                checks.append([name, n, f"{sub.m} pairs", rec["max_rel_diff"], rec["max_abs_diff"]])
            else:
                rec["max_rel_diff"] = relative_difference(res.depth, values)
                rec["max_abs_diff"] = float(np.max(np.abs(res.depth - values))) if sub.m else np.nan
                rec["coal_says_collision"] = int(hits.sum())
                checks.append([name, n, f"{sub.m} pairs, coal: {hits.sum()} in collision",
                               rec["max_rel_diff"], rec["max_abs_diff"]])
            rows.append([name, n, ours, theirs, ours / theirs, rec["coal_median_call_us"],
                         f"{rec['gjk_median_pass_us']:.3g} / {rec['coal_median_pass_us']:.3g}",
                         rec["ratio_median_pass"]])
            with no_gc():
                rec["per_pair_python_us"] = per_pair_python(sub, want, args.single)
            diag_rows.append([name, n, size, ours, rec["core_us"], rec["core_loose_us"], rec["batch_fixed_us"],
                              rec["core_fixed_us"], rec["per_pair_python_us"], rec["gjk_iterations_mean"],
                              rec["epa_iterations_mean"]])
            records.append(rec)
            print(f"  {name}: gjk {ours:.3g} us, coal {theirs:.3g} us", flush=True)

    print()
    print(markdown_table(
        ["query", "hull vertices", "gjk (us)", "coal (us)", "ratio gjk/coal", "coal median call (us)",
         "median pass gjk / coal (us)", "ratio, median pass"], rows))
    print()
    print("gjk and coal: us per pair over the same pairs, each chunk's (gjk) or call's (coal) best "
          "pass;\nthe median pass carries the load of other processes.")
    print()
    print("Agreement (same pairs, coal at its default tolerances):")
    print()
    print(markdown_table(["query", "hull vertices", "pairs", "max rel diff", "max abs diff"], checks))
    print()
    print("Diagnostics: pairs per timed chunk; gjk batch() per pair; the compiled batch alone "
          "(_core.batch, poses\npre-packed) at the default tolerances and at gjk_rel = epa_rel = 1e-6; "
          "the fixed cost of one call of\neach (empty batch); query() per pair from Python (median call); "
          "mean iterations.")
    print()
    print(markdown_table(
        ["query", "hull vertices", "chunk", "batch() (us)", "core (us)", "core, tol 1e-6 (us)",
         "batch() fixed (us)", "core fixed (us)", "query() per pair (us)", "GJK iterations",
         "EPA iterations"], diag_rows))
    print()
    overhead = timer_overhead_ns()
    print(f"Clock cost taken off each coal call: about {overhead:.0f} ns. Targets: gjk <= coal on each "
          "query: " + ", ".join(f"{r['query']} {r['hull_vertices']} {'met' if r['ratio'] <= 1 else 'NOT met'}"
                              for r in records))
    return {"machine": machine(), "coal": coal.__version__, "seed": args.seed, "pairs": args.pairs,
            "repeats": args.repeats, "chunk_us": args.chunk_us, "timer_overhead_ns": overhead, "results": records}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a short run: fewer pairs and repeats")
    parser.add_argument("--json", metavar="FILE", help="write the numbers to FILE")
    parser.add_argument("--pairs", type=int, help="pairs per hull size (default 4000, quick 500)")
    parser.add_argument("--repeats", type=int, help="timed passes over the pairs (default 15, quick 3)")
    parser.add_argument("--chunk-us", type=float, default=2000.0,
                        help="gjk work per timed chunk, us (default 2000)")
    parser.add_argument("--single", type=int, default=500, help="pairs timed through query() one by one")
    parser.add_argument("--seed", type=int, default=20240601)
    args = parser.parse_args(argv)
    args.pairs = args.pairs or (500 if args.quick else 4000)
    args.repeats = args.repeats or (3 if args.quick else 15)
    if args.quick:
        args.single = min(args.single, 100)
    start = time.perf_counter()
    payload = run(args)
    payload["wall_seconds"] = time.perf_counter() - start
    print(f"({payload['wall_seconds']:.0f} s)")
    if args.json:
        write_json(args.json, payload)


if __name__ == "__main__":
    main()
