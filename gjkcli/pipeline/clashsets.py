"""Clash sets: what each manifest [[check]] asks of the pairs it selects.

A [[check]] (`gjkcli.scene.manifest.CheckSpec`) may give its pairs their own touching band,
fail_on and mode; a named check is a clash set. A pair that several checks select answers to the
strictest of them: the smallest tolerance any of them gives, every fail_on, the most exact mode
(a check that gives no fail_on or mode stands for the run's); it is reported under the first
named one (manifest order).
Clearances are the run's business already (`_Run._select`: the largest).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["PairSets", "assign"]


@dataclass(frozen=True)
class PairSets:
    """The clash sets of m pairs.

    hits : (k, m) bool, check c selects pair p
    specs : the k CheckSpecs, in manifest order
    """

    hits: np.ndarray
    specs: tuple

    def name(self, p: int) -> str | None:
        """The clash set pair p is reported under: the first named check selecting it."""
        for c, s in enumerate(self.specs):
            if s.name and self.hits[c, p]:
                return s.name
        return None

    def take(self, keep) -> "PairSets":
        return PairSets(self.hits[:, keep], self.specs)

    def tolerance(self, run_tolerance) -> np.ndarray | None:
        """(m,) the pairs' touching bands: the smallest a selecting check gives, else the run's
        (NaN where the run's is relative to the pair's size); None when no check gives one."""
        given = [(c, s.tolerance) for c, s in enumerate(self.specs) if s.tolerance is not None]
        if not given:
            return None
        m = self.hits.shape[1]
        out = np.full(m, np.inf)
        for c, t in given:
            out[self.hits[c]] = np.minimum(out[self.hits[c]], t)
        out[np.isinf(out)] = np.nan if run_tolerance is None else float(run_tolerance)
        return out

    def modes(self, run_mode: str) -> np.ndarray | None:
        """(m,) the pairs' modes (the most exact of their checks'), None when no check gives one."""
        from gjkcli.scene.manifest import MODES

        if not any(s.mode for s in self.specs):
            return None
        rank = np.full(self.hits.shape[1], MODES.index(run_mode))
        selected = self.hits.any(axis=0)
        rank[selected] = -1
        for c, s in enumerate(self.specs):
            rank[self.hits[c]] = np.maximum(rank[self.hits[c]], MODES.index(s.mode or run_mode))
        return np.asarray(MODES, dtype=object)[rank]

    def fail_on(self, p: int, run_fail_on: tuple) -> tuple:
        """The statuses pair p fails on: every selecting check's (the run's for a check that
        gives none)."""
        chosen = [s.fail_on if s.fail_on is not None else run_fail_on
                  for c, s in enumerate(self.specs) if self.hits[c, p]]
        if not chosen:
            return tuple(run_fail_on)
        return tuple(dict.fromkeys(v for f in chosen for v in f))


def assign(resolved, i: np.ndarray, j: np.ndarray) -> PairSets | None:
    """The clash sets of pairs (i, j) from a resolved manifest; None without [[check]]s."""
    if resolved is None or not resolved.checks:
        return None
    hits = np.zeros((len(resolved.checks), len(i)), dtype=bool)
    for c, (in_a, in_b, _, _) in enumerate(resolved.checks):
        hits[c] = (in_a[i] & in_b[j]) | (in_b[i] & in_a[j])
    specs = tuple(resolved.sets) if len(resolved.sets) == len(resolved.checks) else ()
    if not specs:
        return None
    return PairSets(hits, specs)
