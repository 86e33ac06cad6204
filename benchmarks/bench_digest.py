"""The hash of gjk's cache keys, entry checksums and shared meshes (`gjkcli.digests`: BLAKE3's own
binding) against BLAKE2b (CPython's `_blake2`, what gjk used before) and SHA-256 (OpenSSL's, for
reference), on this machine, in one process.

Each row: seconds to hash bytes of the given size (seeded random bytes; one call, then the whole
digest read), the median of --repeat, and BLAKE3's ratio to BLAKE2b. "many small" is 10,000
hashes of 200 bytes each (a scene's meshes and placements: the per-call cost).

What a cached re-run hashes (benchmarks/bench_cache.py's scenarios): the 10,000-part GLB's 20 MB
as its run key, and every entry it reads and writes (a robot's 100,000 poses: about 100 MB).

Usage:
    python benchmarks/bench_digest.py [--repeat 7]
"""
from __future__ import annotations

import argparse
import hashlib
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

SIZES = (("1 MB", 1 << 20), ("20 MB", 20 << 20), ("100 MB", 100 << 20))


def timed(fn, repeat: int) -> float:
    runs = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - t)
    return statistics.median(runs)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=7, help="runs of each (default 7)")
    args = parser.parse_args(argv)
    from _common import markdown_table

    from gjkcli.digests import blake3

    rng = np.random.default_rng(7)
    hashes = {
        "BLAKE3 (gjk)": lambda data: blake3(data, digest_size=20).digest(),
        "BLAKE2b": lambda data: hashlib.blake2b(data, digest_size=20).digest(),
        "SHA-256 (OpenSSL)": lambda data: hashlib.sha256(data).digest(),
    }
    rows = []
    for label, size in SIZES:
        data = rng.bytes(size)
        got = {name: timed(lambda f=f, data=data: f(data), args.repeat) for name, f in hashes.items()}
        rows.append([label, *(f"{s:.4f}" for s in got.values()),
                     f"{got['BLAKE3 (gjk)'] / got['BLAKE2b']:.2f}"])
    small = [rng.bytes(200) for _ in range(10_000)]
    got = {name: timed(lambda f=f: [f(x) for x in small], args.repeat) for name, f in hashes.items()}
    rows.append(["many small (10,000 x 200 B)", *(f"{s:.4f}" for s in got.values()),
                 f"{got['BLAKE3 (gjk)'] / got['BLAKE2b']:.2f}"])
    print(f"Seconds to hash, medians of {args.repeat}, one thread")
    print()
    print(markdown_table(["bytes", *hashes, "BLAKE3 / BLAKE2b"], rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
