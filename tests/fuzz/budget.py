"""The property tests' budget: a fixed, derandomized run in CI; a longer random hunt from
scripts/fuzz.py, which sets the environment read here.

GJK_FUZZ_EXAMPLES     examples per test (default: each test's own number)
GJK_FUZZ_RANDOM=1     random examples, seeded by pytest's --hypothesis-seed (default: derandomized,
                      the same examples every run)
GJK_FUZZ_TEST_SECONDS each test's share of a hunt's time: once spent, the test ends as skipped,
                      saying how many examples it ran
"""
from __future__ import annotations

import os
import time

import pytest
from hypothesis import HealthCheck, settings


def examples(n: int) -> int:
    """The examples a test runs: its own n, or GJK_FUZZ_EXAMPLES for a longer hunt."""
    return int(os.environ.get("GJK_FUZZ_EXAMPLES", n))


def fuzz_settings(n: int) -> settings:
    """n derandomized examples (the CI run is the same run every time), or a hunt's random ones."""
    randomized = os.environ.get("GJK_FUZZ_RANDOM") == "1"
    return settings(max_examples=examples(n), deadline=None, derandomize=not randomized,
                    database=None, print_blob=randomized,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much, HealthCheck.large_base_example,
                                           HealthCheck.function_scoped_fixture])


_STARTED: dict[str, float] = {}
_RUN: dict[str, int] = {}


def spend(test: str) -> None:
    """Count one example of `test`; in a hunt, end the test (skipped, with its count) once its
    share of the time is spent. Hypothesis lets a skip through and stops drawing examples."""
    share = os.environ.get("GJK_FUZZ_TEST_SECONDS")
    started = _STARTED.setdefault(test, time.monotonic())
    _RUN[test] = _RUN.get(test, 0) + 1
    if share is not None and time.monotonic() - started > float(share):
        pytest.skip(f"{test}: time share spent after {_RUN[test] - 1} examples, none failed")
