"""How often a pair ends undecided, band by band: the seeded sweep of issue 40 (tests/sweep.py
builds and judges it; tests/pipeline/test_undecided_sweep.py runs a small sample of it).

Pairs of non-convex parts (tori, a gear, boxes with a pocket and a void, and the closed real
meshes of ../shared/meshes when there), each scaled to a size of 1, placed along seeded
directions just under and over the band into each other (0.5 to 20 bands deep) and apart (0.5
to 2 bands), and each part with its copy in place and moved off it by 0.5 and 2 bands (a
duplicated element), at bands from 1e-6 to 5e-2 of the size; each answered by the triangle test and the
run's settling policy and judged by python-fcl's distance, the exact signed distance of
tests/exact_distance.py and the construction. Printed per band: cases, undecided (and its
share), wrong verdicts, cases the oracles could not judge (a depth just over the band that no
sampled point reaches, where gjk's own evidence could not be judged either: a fit settled by its
common solid's mean thickness; `sweep.certified`), and how many the triangle test alone leaves undecided (before the
settling policy); then the undecided cases. Exit 1 when a verdict is wrong or undecided
exceeds 0.1% at some band.

Usage:
    python benchmarks/sweep_undecided.py [--places N] [--seed S] [--pairs K]
"""
from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import sweep  # noqa: E402

TARGET = 1e-3


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--places", type=int, default=3, help="placements per pair (default 3)")
    parser.add_argument("--seed", type=int, default=40)
    parser.add_argument("--pairs", type=int, default=0, help="at most this many pairs (0: all)")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    parts = sweep.generated() + sweep.real()
    pairs = [(a, b) for k, a in enumerate(parts) for b in parts[k:]]
    if args.pairs:
        pairs = [pairs[k] for k in sorted(rng.choice(len(pairs), size=min(args.pairs, len(pairs)), replace=False))]
    print(f"{len(parts)} parts ({', '.join(p.name for p in parts)}), {len(pairs)} pairs, "
          f"{args.places} placements each, seed {args.seed}")
    count = defaultdict(lambda: defaultdict(int))
    undecided, wrong = [], []
    start = time.perf_counter()
    every = [case for a, b in pairs for case in sweep.cases(a, b, rng, args.places)]
    every += [case for part in parts for case in sweep.copies(part, rng)]
    copies = defaultdict(int)
    for case in every:
        raw, r = sweep.answer(case)
        status = r.status.value
        row = count[case.rel]
        row["cases"] += 1
        row["raw"] += raw.status.value == "undecided"
        verified = sweep.certified(case, r) if case.truth is None and status != "undecided" else None
        row["unjudged"] += case.truth is None and verified is None
        if case.kind == "copy":
            copies["cases"] += 1
            copies[status] += 1
            copies["unjudged"] += case.truth is None and verified is None
        if verified is False:
            row["wrong"] += 1
            wrong.append((case, status))
        if status == "undecided":
            row["undecided"] += 1
            undecided.append((case, r))
        elif sweep.wrong(case, status):
            row["wrong"] += 1
            wrong.append((case, status))
    print(f"{'band / size':>12} {'cases':>7} {'undecided':>10} {'share':>8} {'wrong':>6} {'unjudged':>9} "
          f"{'triangle test alone':>20}")
    failed = bool(wrong)
    for rel in sorted(count):
        row = count[rel]
        share = row["undecided"] / row["cases"]
        failed |= share > TARGET
        print(f"{rel:>12.0e} {row['cases']:>7} {row['undecided']:>10} {share:>8.2%} {row['wrong']:>6} "
              f"{row['unjudged']:>9} {row['raw']:>20}")
    total = sum(r["cases"] for r in count.values())
    print(f"of which a part and its copy (in place, and moved off by 0.5 and 2 bands): {copies['cases']} cases, "
          f"{copies['collision']} collisions, {copies['touching']} touching, {copies['undecided']} undecided, "
          f"{copies['unjudged']} unjudged")
    print(f"{total} cases, {len(undecided)} undecided, {len(wrong)} wrong, in {time.perf_counter() - start:.0f} s")
    for case, r in undecided:
        print(f"undecided: {case.a.name} / {case.b.name} band {case.rel:.0e} {case.kind} {case.amount} "
              f"bands (truth {case.truth}): {r.note[:200]}")
    for case, status in wrong:
        print(f"WRONG: {case.a.name} / {case.b.name} band {case.rel:.0e} {case.kind} {case.amount} "
              f"bands: {status}, truth {case.truth}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
