"""A longer hunt with the property tests of tests/fuzz, beyond the fixed budget CI runs.

CI runs each property test on a fixed, derandomized set of examples (the same run every time).
This script runs the same tests on random examples for as long as you give it:

    python scripts/fuzz.py                      # 10 minutes, a random seed
    python scripts/fuzz.py --minutes 60 --seed 7
    python scripts/fuzz.py --minutes 5 -k engine_invariants

The time is shared out between the selected tests (each stops drawing new work once its share is
spent); every test gets up to --examples examples. A failure prints Hypothesis's shrunk example
and the seed, so `--seed N` with the same `-k` replays the run. The exit code is pytest's: 0 when
nothing was found.
"""
from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The property tests (the "mixed" checks that follow them count what these saw).
PROPERTY_TESTS = 7


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0, help="the whole hunt's time (default 10)")
    parser.add_argument("--seed", type=int, default=None, help="Hypothesis's seed (default: a random one, printed)")
    parser.add_argument("--examples", type=int, default=100_000, help="examples per test at most (default 100,000)")
    parser.add_argument("-k", dest="select", default=None, help="pytest -k expression: which tests")
    args = parser.parse_args(argv)

    seed = args.seed if args.seed is not None else random.randrange(2**31)
    share = 60.0 * args.minutes / (1 if args.select else PROPERTY_TESTS)
    env = dict(os.environ, GJK_FUZZ_RANDOM="1", GJK_FUZZ_EXAMPLES=str(args.examples),
               GJK_FUZZ_TEST_SECONDS=f"{share:.0f}")
    command = [sys.executable, "-m", "pytest", "tests/fuzz", "-q", "-x", "-p", "no:cacheprovider",
               f"--hypothesis-seed={seed}"]
    if args.select:
        command += ["-k", args.select]
    print(f"fuzz: seed {seed}, {args.minutes:g} min, up to {share:.0f} s per test", flush=True)
    code = subprocess.call(command, cwd=ROOT, env=env)
    print(f"fuzz: {'nothing found' if code == 0 else 'a failure (above)'}; replay with --seed {seed}"
          + (f" -k {args.select!r}" if args.select else ""))
    return code


if __name__ == "__main__":
    sys.exit(main())
