"""The one mode policy, on its own: which pairs the triangles answer and which hull answers are
marked conservative, for every combination of the inputs it reads."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from gjkcli.pipeline import policy

# every combination of (hulls clear, parts coincide with their hulls, listed, both meshed)
COMBOS = np.array(list(itertools.product([False, True], repeat=4)), dtype=bool)
CLEAR, COINCIDE, LISTED, MESHED = COMBOS.T


def expected(mode: str, clear: bool, coincide: bool, listed: bool, meshed: bool) -> bool:
    """The table of docs/certified.md (which engine answers), written out case by case."""
    if mode == "hull" or not meshed:
        return False
    if mode == "exact":
        return (not clear) or listed
    return (not coincide) and ((not clear) or listed)  # auto


@pytest.mark.parametrize("mode", policy.MODES)
def test_which_pairs_go_to_the_triangles(mode):
    got = policy.needs_triangles(mode, CLEAR, COINCIDE, LISTED, MESHED)
    want = [expected(mode, *row) for row in COMBOS.tolist()]
    assert got.tolist() == want
    if mode == "hull":
        assert not got.any()
    else:  # both outcomes occur, so the table is exercised
        assert 0 < got.sum() < len(got)


def test_auto_never_sends_a_pair_of_parts_that_are_their_hulls_and_exact_always_answers_listed_pairs():
    auto = policy.needs_triangles("auto", CLEAR, COINCIDE, LISTED, MESHED)
    exact = policy.needs_triangles("exact", CLEAR, COINCIDE, LISTED, MESHED)
    assert not auto[COINCIDE].any()
    assert exact[LISTED & MESHED].all() and exact[~CLEAR & MESHED].all()
    assert not (auto & ~exact).any()  # auto asks the triangles no more than exact does


def test_coincide_is_within_the_pairs_band():
    band = np.array([1e-7, 1e-7, 1e-7, 1e-3])
    gap_a = np.array([0.0, 1e-7, 2e-7, np.inf])
    gap_b = np.array([0.0, 0.0, 0.0, 0.0])
    assert policy.coincide(gap_a, gap_b, band).tolist() == [True, True, False, False]
    assert policy.coincide(gap_b, gap_a, band).tolist() == [True, True, False, False]


def test_conservative_is_a_hull_answer_on_parts_that_are_not_their_hulls():
    by_hulls = np.array([True, True, False, False])
    coincident = np.array([True, False, True, False])
    assert policy.conservative(by_hulls, coincident).tolist() == [False, True, False, False]


def test_an_unknown_mode_is_refused():
    with pytest.raises(ValueError, match="mode"):
        policy.needs_triangles("fast", CLEAR, COINCIDE, LISTED, MESHED)
