"""The triangle test's share of a scan, replayed: every `exact_query` a scan asks, recorded once
and asked again in this process, for CPU time and winding numbers without the reader's noise.

A scan of MODEL runs in this process (one job: the refine stage's pairs are asked here) with
`gjkcli.engine.exact.exact_query` recorded: the two meshes, their poses and the query's options.
The meshes go through pickle (a `Mesh` pickles as its arrays, its hierarchy built again), and
each distinct one is prepared once with its probes and placed under its objects' names, as the
scan's stages do (`gjkcli.pipeline.stages.Prepared.placed_body`). Then `--runs` times: the
meshes rebuilt and prepared (printed as "prepare": pickle builds every recorded copy again, more
than the scan builds), every query asked again ("queries"), the
winding numbers the queries evaluated (`gjkcli.engine.exact.winding_numbers`) and a digest of
every answer (status, distances, points, exits, notes; equal digests: the same answers).

Run it from two checkouts (PYTHONPATH=CHECKOUT) on the same models and compare the medians and
the digests; under `valgrind --tool=callgrind` with --runs 1 for instruction counts.

Usage:
    python benchmarks/replay_exact.py MODEL [MODEL ...] [--tolerance 0.002m] [--runs 5]
"""
from __future__ import annotations

import argparse
import hashlib
import io
import os
import pickle
import statistics
import sys
import tempfile
import time
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import numpy as np

os.environ.setdefault("GJK_NO_CACHE", "1")


def record(model: str, tolerance: str) -> bytes:
    """The pickled (mesh a, mesh b, options) of every exact_query of a scan of model."""
    from gjkcli.engine import exact, primitive
    from gjkcli.cli import main

    calls = []
    asked = exact.exact_query

    def recorded(a, b, **options):
        calls.append((a, b, options))
        return asked(a, b, **options)

    exact.exact_query = primitive.exact_query = recorded
    try:
        with tempfile.TemporaryDirectory() as tmp:
            argv = ["gjk", "scan", model, "--tolerance", tolerance, "--format", "json", "-o",
                    str(Path(tmp) / "out.json"), "-q", "-j", "1"]
            saved, sys.argv = sys.argv, argv
            try:
                with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
                    main()
            except SystemExit:
                pass
            finally:
                sys.argv = saved
    finally:
        exact.exact_query = primitive.exact_query = asked
    return pickle.dumps(calls)


def prepared(data: bytes) -> list:
    """The recorded calls with their meshes rebuilt, each distinct one prepared once (probes)
    and placed under each of its names."""
    from gjkcli.engine.exact import Mesh

    first = {}

    def one(m):
        if not isinstance(m, Mesh):
            return m
        key = (m.vertices.tobytes(), m.faces.tobytes(), m.watertight)
        shared = first.setdefault(key, m)
        shared.labelled_probes()
        return shared if shared is m else shared.named(m.name)

    return [(one(a), one(b), options) for a, b, options in pickle.loads(data)]


def digest(r) -> str:
    parts = []
    for field in ("status", "distance", "distance_lower", "depth", "normal", "point_a", "point_b",
                  "exit", "contained", "note", "triangle_a", "triangle_b", "depth_upper",
                  "certificate", "iterations", "triangle_pairs"):
        value = getattr(r, field, None)
        parts.append(value.tobytes().hex() if isinstance(value, np.ndarray) else repr(value))
    return "|".join(parts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="+")
    parser.add_argument("--tolerance", default="0.002m")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    from gjkcli.engine import exact

    def winding_numbers():  # a checkout that does not count them: None
        return exact.winding_numbers() if hasattr(exact, "winding_numbers") else None

    print(f"{'model':45s} {'pairs':>6s} {'prepare ms':>11s} {'queries ms':>11s} {'windings':>9s}  digest")
    for model in args.models:
        data = record(model, args.tolerance)
        prepare, queries = [], []
        for _ in range(args.runs):
            t0 = time.process_time()
            calls = prepared(data)
            t1 = time.process_time()
            w0 = winding_numbers()
            h = hashlib.sha1()
            for a, b, options in calls:
                h.update(digest(exact.exact_query(a, b, **options)).encode())
            t2 = time.process_time()
            windings = "-" if w0 is None else winding_numbers() - w0
            prepare.append(t1 - t0)
            queries.append(t2 - t1)
        print(f"{Path(model).name[:45]:45s} {len(calls):6d} {1000 * statistics.median(prepare):11.1f} "
              f"{1000 * statistics.median(queries):11.1f} {windings:>9}  {h.hexdigest()[:16]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
