"""The run's refine stage: the triangle test of the pairs whose hulls do not decide them, on every
core the run's `jobs` gives.

From PARALLEL_FROM pairs, with jobs > 1 and a process that may fork
(`gjkcli.engine.shapes.can_fork`), the pairs are cut into contiguous shares handed to forked
workers, as the hulls (`gjkcli.engine.shapes.build_hulls`) and the overlap volumes
(`gjkcli.mesh.overlap.overlaps`) are: the parts prepared before the fork are the workers' too
(copy-on-write), each worker builds the triangle hierarchies of its share's parts and hands back
its pairs' answers, and the answers are put together in pair order, the same as one process
gives. Shares are contiguous so that a part's pairs, which the broad phase lists together, mostly
fall in one share and its hierarchy is built once.

The fits the triangle test leaves undecided (`by_thickness`). A part wedged between faces of the
other, a pipe in its sleeve or a round window in its opening that interfere by less than the band
all round: no point of one lies deeper than the band inside the other, and no move within the band
parts them (the way out is the fit's whole length), so the triangle test ends undecided. Such a
pair of closed parts is judged by the rule STEP's exact solids follow (`gjkcli.pipeline.
tessellated`, BRepAlgoAPI_Common there): the solid both parts occupy, here manifold3d's boolean of
their triangles (`gjkcli.mesh.overlap`), with volume V and surface area S has the mean thickness
t = 2V/S (exact for a slab, the interference of a sleeve or a wedge; 0 when they share no volume).
t within the band: touching, with no certificate (the common solid is the evidence, as STEP's
B-rep touching has none), the exit and the note saying so. t beyond the band proves no depth (a
mean is no point that deep): the pair stays undecided, its note giving t.

A part that bounds no volume (an open surface: an eaves, a window's glazing) against a closed
one counts by its surface only, and its depth is that of its deepest point inside the closed part
(`gjkcli.engine.sheet.sheet_depth`, a branch and bound over its triangles): bounded within the
band, touching (`EXIT_SHEET`, the bound as `depth_upper`); a point deeper than the band found,
a collision with that point as its certificate; neither within the search's budget, undecided
still, the note saying so. Two open parts whose crossing the triangle test leaves undecided: a
collision where a point of one lies deeper than the band inside the other with its holes closed
and the holes lie farther than the band (`crossing_verdict`: their surfaces then cross after any
move within the band); else undecided still.

The policy lives in `gjkcli.pipeline.policy` (`settle`, `thickness_verdict`, `sheet_verdict`),
one pair at a time, used by every route that asks the triangle test (the
run's pairs through `by_thickness`, poses and motions through `gjkcli.pipeline.pairs.exact_pair`,
the collision manager): an undecided pair is settled the same way whichever way it came.
"""
from __future__ import annotations

import numpy as np

from gjkcli.pipeline.pairs import with_part_certificate
from gjkcli.pipeline.policy import (EXIT_SHEET, EXIT_SHEET_DEEP, EXIT_THIN, mean_thickness, settle,
                                    sheet_verdict, thickness_verdict)

__all__ = ["triangles", "by_thickness", "settle", "thickness_verdict", "sheet_verdict",
           "mean_thickness", "EXIT_THIN", "EXIT_SHEET", "EXIT_SHEET_DEEP", "PARALLEL_FROM",
           "SHARES_PER_JOB"]


# The fewest pairs worth forked workers: a fork, and each answer's way back (about 0.1 ms, where a
# pair's triangle test takes about 0.5 ms on the Great Court roof), are repaid from here.
PARALLEL_FROM = 512
# Shares per worker: a few, so that a worker done early takes another share and the progress bar
# moves, few enough that a part's pairs are rarely cut between two shares.
SHARES_PER_JOB = 4

_WORK: tuple = ()  # (parts, i, j, tolerance, measure, todo), set before the fork for the workers


def triangles(parts, i, j, tolerance, measure, todo, jobs: int = 1, tell=None) -> dict:
    """{pair index k: the triangle test's Result, with the parts' certificate} for k in `todo`.

    parts : `gjkcli.pipeline.stages.Parts`; i, j : (m,) int64 the checked pairs' parts;
    tolerance : (m,) float64 each pair's band; measure : (m,) bool the pairs whose collision
    depth is measured (else the search stops at the first point deeper than the band); todo :
    (t,) int64 the pairs to test; jobs : worker processes; tell : progress(stage, done, total).
    """
    from gjkcli.engine.shapes import can_fork

    tell = tell or (lambda stage, done, total: None)
    n = len(todo)
    tell("refine", 0, n)
    if jobs <= 1 or n < max(2, PARALLEL_FROM) or not can_fork():
        got = _share(parts, i, j, tolerance, measure, todo, lambda done: tell("refine", done, n))
        return dict(zip(todo.tolist(), got))
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    global _WORK
    bounds = np.linspace(0, n, min(n, jobs * SHARES_PER_JOB) + 1).astype(int).tolist()
    shares = list(zip(bounds[:-1], bounds[1:]))
    out: dict = {}
    _WORK = (parts, i, j, tolerance, measure, todo)
    try:
        with ProcessPoolExecutor(min(jobs, len(shares)), mp_context=multiprocessing.get_context("fork")) as pool:
            for (start, end), got in zip(shares, pool.map(_forked_share, shares)):
                out.update(zip(todo[start:end].tolist(), got))
                tell("refine", end, n)
    finally:
        _WORK = ()
    return out


def _forked_share(bounds) -> list:
    """In a forked worker: the answers of _WORK's pairs todo[start:end], in order."""
    start, end = bounds
    parts, i, j, tolerance, measure, todo = _WORK
    return _share(parts, i, j, tolerance, measure, todo[start:end], None)


def _share(parts, i, j, tolerance, measure, todo, done) -> list:
    """The answers of the pairs `todo`, in order; done(n) after each n-th pair when given."""
    from gjkcli.engine.primitive import pair_query

    # a part's triangle hierarchy is dropped after its last pair here (built again if a later
    # stage asks): held for every part at once, they were most of a large model's memory
    ks = todo.tolist()
    last = {}
    for n, k in enumerate(ks):
        last[int(i[k])] = last[int(j[k])] = n
    out = []
    for n, k in enumerate(ks):
        a, b = int(i[k]), int(j[k])
        r = pair_query(parts.body(a), parts.body(b), tolerance=float(tolerance[k]), measure=bool(measure[k]))
        out.append(with_part_certificate(r))
        for part in (a, b):
            if last[part] == n:
                parts.forget(part)
        if done is not None:
            done(n + 1)
    return out


def by_thickness(parts, i, j, answers: dict, jobs: int = 1) -> dict:
    """`answers` ({pair index: the triangle test's Result}) with each undecided pair settled by
    `settle`'s policy: two closed parts judged by their common solid (`thickness_verdict`),
    the common solids on every core (`gjkcli.mesh.overlap.overlaps`); an open part against a
    closed one by how deep it reaches (`sheet_verdict`); two open parts by a point deep inside
    the other closed (`crossing_verdict`)."""
    from gjkcli.engine.exact import Mesh
    from gjkcli.engine.results import Status

    answers = dict(answers)
    for k, r in answers.items():
        if r.status is Status.UNDECIDED and not (getattr(r, "solid_a", False) and getattr(r, "solid_b", False)):
            a, b = parts.body(int(i[k])), parts.body(int(j[k]))
            if isinstance(a, Mesh) and isinstance(b, Mesh):  # an open part: settled on its own
                answers[k] = settle(r, a, b)
    todo = [k for k, r in answers.items() if r.status is Status.UNDECIDED
            and getattr(r, "solid_a", False) and getattr(r, "solid_b", False)]
    work = []
    for k in todo:
        a, b = int(i[k]), int(j[k])
        ta, tb = parts.triangles(a), parts.triangles(b)
        if ta is not None and tb is not None:  # a curved primitive has no triangles to intersect
            work.append((k, (parts.names[a], *ta, parts.names[b], *tb)))
    if not work:
        return answers
    from gjkcli.mesh.overlap import overlaps

    out = dict(answers)
    for (k, _), o in zip(work, overlaps([pair for _, pair in work], jobs)):
        out[k] = thickness_verdict(answers[k], o)
    return out
