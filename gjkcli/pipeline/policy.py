"""Which engine answers a pair, and what its answer means: the one mode policy of every command.

The hulls answer first, for every candidate pair (GJK and EPA in one batch call). What a hull
answer says about the parts:

- *clear* always stands: parts lie inside their hulls, so the parts are at least as far apart
  as the hulls. Only the distance may be a lower bound.
- every other answer (collision, touching, undecided, closer than the clearance), and the
  distance as the parts' distance, stands only when both parts *coincide* with their hulls
  within the pair's touching band (`gjkcli.mesh.convexity.hull_gaps`: every face on the hull's
  surface within the band, the hull's surface covered).

So, per mode:

=========  ==========================================================================
``hull``   the hulls' answer, always; `conservative` when a part does not coincide (a clear
           verdict still stands, its distance is then a lower bound)
``auto``   the hulls' answer where it stands; the triangles for every pair whose hulls are not
           clear (clearance applied) and whose parts do not both coincide, and for listed pairs
           whose parts do not coincide (so a listed distance is the parts')
``exact``  the triangles for every pair whose hulls are not clear and for every listed pair;
           the hulls only for pairs they show clear and that are not listed
=========  ==========================================================================

A curved primitive (sphere, capsule, cylinder, cone) has no triangles of its own: against a part
with triangles the triangle test answers it exactly, the primitive against the other part's
triangles (`gjkcli.engine.primitive`); two primitives are their own hulls, so the hulls' answer
is theirs. Only ``hull`` mode leaves a primitive's pair on a hull that is not its part, marked
conservative.
"""
from __future__ import annotations

import numpy as np

__all__ = ["MODES", "coincide", "needs_triangles", "conservative"]

MODES = ("auto", "hull", "exact")


def coincide(gap_a: np.ndarray, gap_b: np.ndarray, band: np.ndarray) -> np.ndarray:
    """(m,) bool: both parts of each pair are their hulls within the pair's touching band.

    gap_a, gap_b : (m,) `hull_gaps` of each pair's parts (inf: not its hull; 0: a primitive)
    band : (m,) the pair's touching band half-width, model units
    """
    return (np.asarray(gap_a) <= band) & (np.asarray(gap_b) <= band)


def needs_triangles(mode: str, hull_clear: np.ndarray, coincident: np.ndarray,
                    listed: np.ndarray, meshed: np.ndarray) -> np.ndarray:
    """(m,) bool: the pairs the triangle test must answer.

    mode : "auto", "hull" or "exact"
    hull_clear : (m,) the hulls are clear (and not closer than the pair's clearance)
    coincident : (m,) `coincide` of the pair
    listed : (m,) the report lists the pair (check lists every pair; scan with --all-pairs)
    meshed : (m,) a part of the pair has triangles (the other may be a curved primitive)
    """
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; use one of {', '.join(MODES)}")
    if mode == "hull":
        return np.zeros(len(hull_clear), dtype=bool)
    if mode == "exact":
        return meshed & (~hull_clear | listed)
    return meshed & ~coincident & (~hull_clear | listed)


def conservative(answered_by_hulls: np.ndarray, coincident: np.ndarray) -> np.ndarray:
    """(m,) bool: the answer is the hulls' and a part is not its hull."""
    return answered_by_hulls & ~coincident
