"""The exact verdict's depth search on long, thin triangles: the measuring phase against the
wide one, side by side in one process.

Seeded crossings of two 4 m beams of 0.1 m section (12 triangles each, metres long; B rolled and
turned a little, pressed into A by 0.3 to 20 touching bands of 2 mm): `exact_query` as shipped
against the same query with the measuring phase as wide as the proving phase and no early stop
(exact.WITNESS_LIVE_DEPTH = WITNESS_LIVE, WITNESS_FLAT > WITNESS_ROUNDS), which is how every
search ran before the measuring phase. Printed: CPU seconds of each (best of --repeats,
alternating), their ratio, verdicts that differ (must be 0) and the distribution of the depth
ratio (shipped / wide; a depth is always one reached by a point inside, a lower bound).

Usage:
    python benchmarks/bench_depth.py [--pairs N] [--repeats R] [--seed S]
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from gjkcli.engine import exact
from gjkcli.engine.exact import Mesh, exact_query

TOL = 0.002


def rotation(axis, angle):
    axis = np.asarray(axis, dtype=np.float64) / np.linalg.norm(axis)
    k = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + np.sin(angle) * k + (1 - np.cos(angle)) * k @ k


def box(extents, R, centre):
    corners = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], dtype=float)
    faces = np.array([[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
                      [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]])
    return Mesh.from_arrays((0.5 * corners * extents) @ R.T + centre, faces)


def beams(rng):
    a = box([4.0, 0.1, 0.1], rotation(rng.normal(size=3), rng.uniform(0, 0.05)), np.zeros(3))
    R = rotation([0, 0, 1], np.pi / 2 + rng.uniform(-0.3, 0.3)) @ rotation([1, 0, 0], rng.uniform(-0.05, 0.05))
    d = TOL * rng.uniform(0.3, 20.0)
    b = box([4.0, 0.1, 0.1], R, np.array([rng.uniform(-1, 1), rng.uniform(-1, 1), 0.1 - d]))
    return a, b


def run(pairs, wide: bool):
    saved = exact.WITNESS_LIVE_DEPTH, exact.WITNESS_FLAT
    if wide:
        exact.WITNESS_LIVE_DEPTH, exact.WITNESS_FLAT = exact.WITNESS_LIVE, exact.WITNESS_ROUNDS + 1
    try:
        start = time.process_time()
        out = [exact_query(a, b, tolerance=TOL) for a, b in pairs]
        return time.process_time() - start, out
    finally:
        exact.WITNESS_LIVE_DEPTH, exact.WITNESS_FLAT = saved


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seed", type=int, default=20261125)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    pairs = [beams(rng) for _ in range(args.pairs)]
    best = {False: float("inf"), True: float("inf")}
    results = {}
    for _ in range(args.repeats):
        for wide in (False, True):
            t, results[wide] = run(pairs, wide)
            best[wide] = min(best[wide], t)
    quick, full = results[False], results[True]
    changed = sum(q.status != f.status for q, f in zip(quick, full))
    ratio = np.array([q.depth / f.depth for q, f in zip(quick, full)
                      if q.depth is not None and f.depth is not None])
    print(f"{len(pairs)} beam crossings, CPU seconds (best of {args.repeats})")
    print("| search | seconds | ms a pair |\n|---|---|---|")
    for name, wide in (("shipped (measuring phase)", False), ("wide (no measuring phase)", True)):
        print(f"| {name} | {best[wide]:.3f} | {1000 * best[wide] / len(pairs):.2f} |")
    print(f"shipped / wide: {best[False] / best[True]:.2f}")
    print(f"verdicts that differ: {changed}")
    if len(ratio):
        p = np.percentile(ratio, [0, 5, 25, 50, 100])
        print(f"depth ratio shipped / wide over {len(ratio)} depths: min {p[0]:.3f} p5 {p[1]:.3f} "
              f"p25 {p[2]:.3f} median {p[3]:.3f} max {p[4]:.3f}")


if __name__ == "__main__":
    main()
