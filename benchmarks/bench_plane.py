"""The plane's narrow phase against shapely 2, side by side in one run: the distance of many pairs.

For each case: m seeded pairs of 2D parts, about half of them overlapping. Both tools get the
same polygons, built beforehand and out of the timings (gjk: one `plane.PartSet`, its segment
hierarchies included; shapely: one `shapely.Polygon` per part). Timed, best of --repeat runs,
alternating:

    gjk      plane.batch(parts, ia, ib, want="distance"): the verdict and the distance of every
             pair in one compiled call (GJK for convex pairs, the edges for the others)
    shapely  shapely.distance(polygons[ia], polygons[ib]), vectorised over the pairs (GEOS)

The distances must agree to 1e-9 of the parts' size, or the script exits 1.

Usage:
    python benchmarks/bench_plane.py [--pairs 5000] [--repeat 3] [--seed 0]
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np


def convex_parts(rng, count: int, n: int):
    """Ellipses of n vertices, random sizes and angles, spread so that about half the
    neighbouring pairs overlap."""
    t = np.linspace(0, 2 * np.pi, n, endpoint=False)
    out = []
    for _ in range(count):
        ax, ay, phi = rng.uniform(0.5, 1.5), rng.uniform(0.5, 1.5), rng.uniform(0, np.pi)
        c, s = np.cos(phi), np.sin(phi)
        ring = np.c_[ax * np.cos(t), ay * np.sin(t)] @ np.array([[c, s], [-s, c]])
        out.append([ring + rng.uniform(0, 4.5, size=2)])
    return out


def holed_parts(rng, count: int, n: int):
    """Star-shaped plates of n vertices with a hole of n / 2 vertices."""
    out = []
    for _ in range(count):
        centre = rng.uniform(0, 3.6, size=2)
        t = (np.arange(n) + rng.uniform(0, 0.8, n)) * 2 * np.pi / n
        r = rng.uniform(0.7, 1.0, n)
        outer = centre + np.c_[r * np.cos(t), r * np.sin(t)]
        th = np.linspace(0, 2 * np.pi, n // 2, endpoint=False)
        hole = centre + 0.4 * np.c_[np.cos(th), np.sin(th)]
        out.append([outer, hole])
    return out


def run_case(name, rings, pairs, repeat):
    import shapely

    from gjkcli.engine import plane

    parts = plane.PartSet.from_arrays(
        np.concatenate([r for p in rings for r in p]),
        np.r_[0, np.cumsum([len(r) for p in rings for r in p])],
        np.r_[0, np.cumsum([len(p) for p in rings])])
    polygons = np.array([shapely.Polygon(p[0], holes=p[1:]) for p in rings])
    ia, ib = pairs
    best_gjk = best_geos = np.inf
    for _ in range(repeat):
        t = time.perf_counter()
        rs = plane.batch(parts, ia, ib, want="distance")
        best_gjk = min(best_gjk, time.perf_counter() - t)
        t = time.perf_counter()
        d = shapely.distance(polygons[ia], polygons[ib])
        best_geos = min(best_geos, time.perf_counter() - t)
    size = float(parts.sizes.max())
    err = float(np.abs(rs.distance - d).max())
    overlapping = float(np.mean(d == 0))
    return dict(case=name, pairs=len(ia), overlapping=overlapping, gjk=best_gjk, shapely=best_geos,
                ok=err <= 1e-9 * size, err=err)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=5_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    import shapely

    rng = np.random.default_rng(args.seed)
    rows = []
    m = args.pairs
    for label, rings in (("convex, 8 vertices", convex_parts(rng, 2000, 8)),
                         ("convex, 64 vertices", convex_parts(rng, 2000, 64)),
                         ("convex, 512 vertices", convex_parts(rng, 2000, 512)),
                         ("plate with a hole, 48 + 24 vertices", holed_parts(rng, 2000, 48)),
                         ("plate with a hole, 400 + 200 vertices", holed_parts(rng, 2000, 400))):
        ia = rng.integers(0, len(rings), m)
        ib = (ia + rng.integers(1, len(rings), m)) % len(rings)
        rows.append(run_case(label, rings, (ia, ib), args.repeat))
    print(f"shapely {shapely.__version__} (GEOS {shapely.geos_version_string}); {m:,} pairs a case, "
          f"best of {args.repeat}\n")
    print("| parts | overlapping | gjk (plane.batch) | shapely.distance | gjk / shapely |")
    print("|---|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['case']} | {r['overlapping']:.0%} | {r['gjk'] * 1e3:.1f} ms | {r['shapely'] * 1e3:.1f} ms "
              f"| {r['gjk'] / r['shapely']:.2f} |")
    bad = [r for r in rows if not r["ok"]]
    for r in bad:
        print(f"distances disagree in '{r['case']}': max |gjk - shapely| = {r['err']:.3g}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
