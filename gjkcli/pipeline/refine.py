"""The run's refine stage: the triangle test of the pairs whose hulls do not decide them, on every
core the run's `jobs` gives.

With jobs > 1 and a process that may fork (`gjkcli.engine.shapes.can_fork`), from PARALLEL_FROM
pairs or once the pairs prove slow (`triangles`), the pairs are cut into contiguous shares that
this process and forked workers take, as the hulls (`gjkcli.engine.shapes.build_hulls`) and the
overlap volumes (`gjkcli.mesh.overlap.overlaps`) are: the parts prepared before the fork are the workers' too
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
mean is no point that deep): the pair stays undecided, its note giving t. Either way, a point
inside both parts whose distances to their surfaces add up to more than the band makes the pair
a collision (`deeper_in_common`: two copies of one solid in one place, every point of each
surface 0 deep in the other).

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
run's pairs through `triangles` (a pair with an open part, as it is tested, while the open-surface
bound the triangle test asks first is at hand) and `by_thickness` (two closed parts, their
common solids on every core), poses and motions through `gjkcli.pipeline.pairs.exact_pair`,
the collision manager): an undecided pair is settled the same way whichever way it came.
"""
from __future__ import annotations

from gjkcli.pipeline.pairs import with_part_certificate
from gjkcli.pipeline.policy import (EXIT_SHEET, EXIT_SHEET_DEEP, EXIT_THIN, common_verdict, mean_thickness,
                                    settle, sheet_verdict, thickness_verdict)

__all__ = ["triangles", "by_thickness", "settle", "thickness_verdict", "sheet_verdict",
           "mean_thickness", "EXIT_THIN", "EXIT_SHEET", "EXIT_SHEET_DEEP", "PARALLEL_FROM",
           "FORK_AFTER", "FORK_WORTH"]


# Pairs from which the refinement is shared with forked workers at once: a fork, and each
# answer's way back (about 0.1 ms, where a pair's triangle test takes about 0.5 ms on the Great
# Court roof), are repaid from here. Fewer are started in this process, and shared only once
# they prove slow: after FORK_AFTER seconds, when the pairs left would take FORK_WORTH seconds
# more at the pace so far (Revit's sample project: 85 pairs of furniture of 1,106 vertices, 0.44 s
# in one process); a small model's few pairs (a few ms) never pay for a fork.
PARALLEL_FROM = 512
FORK_AFTER = 0.03
FORK_WORTH = 0.1
# Pairs this process tests between two looks at the clock before sharing.
_LOOK_EVERY = 4

_WORK: tuple = ()  # (parts, i, j, tolerance, measure, todo, last, shares), set before the fork
_NEXT = None  # the forks.Counter handing out _WORK's shares


def triangles(parts, i, j, tolerance, measure, todo, jobs: int = 1, tell=None) -> dict:
    """{pair index k: the triangle test's Result, with the parts' certificate} for k in `todo`,
    a pair with an open part that it leaves undecided settled by `settle`'s policy.

    parts : `gjkcli.pipeline.stages.Parts`; i, j : (m,) int64 the checked pairs' parts;
    tolerance : (m,) float64 each pair's band; measure : (m,) bool the pairs whose collision
    depth is measured (else the search stops at the first point deeper than the band); todo :
    (t,) int64 the pairs to test; jobs : processes; tell : progress(stage, done, total).

    With jobs > 1 in a process that may fork (`gjkcli.engine.shapes.can_fork`), the pairs left
    are cut into contiguous shares (`guided`) that this process and jobs - 1 forked workers
    (`gjkcli.forks`) take from a shared counter: from the start for PARALLEL_FROM pairs or more, else once the
    pairs tested here prove slow (FORK_AFTER, FORK_WORTH). The answers are each pair's own,
    whichever process tests it.
    """
    import time

    from gjkcli.engine.shapes import can_fork

    tell = tell or (lambda stage, done, total: None)
    n = len(todo)
    tell("refine", 0, n)
    ks = todo.tolist()
    # a part's triangle hierarchy is dropped after its last pair (built again if a later stage
    # asks): held for every part at once, they were most of a large model's memory
    last: dict = {}
    for pos, k in enumerate(ks):
        last[parts.held(int(i[k]))] = last[parts.held(int(j[k]))] = pos
    shared = jobs > 1 and n >= 2 and can_fork()
    out: list = []
    started = time.perf_counter()
    while len(out) < n:
        spent, done = time.perf_counter() - started, len(out)
        if shared and n - done >= 2 and (n >= PARALLEL_FROM or (
                spent >= FORK_AFTER and spent / max(done, 1) * (n - done) >= FORK_WORTH)):
            got = _shared(parts, i, j, tolerance, measure, ks, last, done, jobs)
            out += got
            break
        step = n - done if not shared else min(_LOOK_EVERY, n - done)
        out += _share(parts, i, j, tolerance, measure, ks, last, done, done + step)
        tell("refine", len(out), n)
    tell("refine", n, n)
    return dict(zip(ks, out))


def _shared(parts, i, j, tolerance, measure, ks, last, start, jobs) -> list:
    """The answers of the pairs ks[start:], in order, from this process and jobs - 1 forked
    workers, each taking the next contiguous share from a shared counter."""
    from gjkcli import forks

    global _WORK, _NEXT
    shares = guided(start, len(ks), jobs)
    _WORK, _NEXT = (parts, i, j, tolerance, measure, ks, last, shares), forks.Counter()
    crew: list = []
    try:
        for _ in range(min(jobs, len(shares)) - 1):
            try:
                crew.append(forks.Worker(_drain))
            except OSError:  # no process left to fork (a limit): this process does the rest
                break
        got = _drain(None)
        for worker in crew:
            got.update(worker.result())
    finally:
        for worker in crew:
            worker.close()
        _NEXT.close()
        _WORK, _NEXT = (), None
    return [answer for share in shares for answer in got[share]]


def guided(start: int, end: int, jobs: int) -> list:
    """[(start, end), ...]: positions start to end cut into contiguous shares, each 1 / (2 jobs)
    of those left and at least one (guided self-scheduling, Polychronopoulos and Kuck 1987):
    large shares first, so that a part's pairs are rarely cut between two, then smaller ones,
    so that a process given less of a core (a busy machine) holds the others up by a pair or
    two at the end, not by a whole share."""
    bounds = [start]
    while bounds[-1] < end:
        bounds.append(bounds[-1] + max(1, (end - bounds[-1]) // (2 * jobs)))
    return list(zip(bounds[:-1], bounds[1:]))


def _drain(_parent) -> dict:
    """{(start, end): the answers of _WORK's pairs ks[start:end]} of the shares this process
    takes from _NEXT until none is left (in a forked worker, or in the process that forked it)."""
    parts, i, j, tolerance, measure, ks, last, shares = _WORK
    out: dict = {}
    while True:
        n = _NEXT.take()
        if n >= len(shares):
            return out
        start, end = shares[n]
        out[shares[n]] = _share(parts, i, j, tolerance, measure, ks, last, start, end)


def _share(parts, i, j, tolerance, measure, ks, last, start, end) -> list:
    """The answers of the pairs ks[start:end], in order; a part is forgotten after the pair at
    its `last` position."""
    from gjkcli.engine.primitive import pair_query

    out = []
    for pos in range(start, end):
        k = ks[pos]
        a, b = int(i[k]), int(j[k])
        # an object placing a mesh others place too: that mesh, prepared once, and its pose
        (body_a, pose_a), (body_b, pose_b) = parts.placed_body(a), parts.placed_body(b)
        r = with_part_certificate(pair_query(body_a, body_b, pose_a=pose_a, pose_b=pose_b,
                                             tolerance=float(tolerance[k]), measure=bool(measure[k])))
        if _open_undecided(r):
            # settled at once, while the open-surface bound the triangle test asked first is
            # the thread's last answer (`gjkcli.engine.sheet.sheet_depth`)
            r = settle(r, body_a, body_b, pose_a, pose_b)
        out.append(r)
        for held in {parts.held(a), parts.held(b)}:
            if last[held] == pos:
                parts.forget(held)
    return out


def _open_undecided(r) -> bool:
    """The triangle test left the pair undecided and a part of it is open (bounds no volume)."""
    from gjkcli.engine.results import Status

    return r.status is Status.UNDECIDED and not (getattr(r, "solid_a", False) and getattr(r, "solid_b", False))


def by_thickness(parts, i, j, answers: dict, jobs: int = 1) -> dict:
    """`answers` ({pair index: the triangle test's Result}, from `triangles`) with each
    undecided pair of two closed parts settled by `settle`'s policy: judged by their common
    solid (`common_verdict`), the common solids and the searches over them on every core
    (`gjkcli.mesh.overlap.overlaps`, each pair's verdict made where its common solid is). A
    pair with an open part was settled as `triangles` tested it: an open part against a closed
    one by how deep it reaches (`sheet_verdict`), two open parts by a point deep inside the
    other closed (`crossing_verdict`)."""
    from gjkcli.engine.results import Status

    answers = dict(answers)
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

    def verdict(n: int, o):  # where the common solid was made: a forked worker's answer is small
        k = work[n][0]
        (body_a, pose_a), (body_b, pose_b) = parts.placed_body(int(i[k])), parts.placed_body(int(j[k]))
        return common_verdict(answers[k], o, body_a, body_b, pose_a, pose_b)

    out = dict(answers)
    for (k, _), v in zip(work, overlaps([pair for _, pair in work], jobs, then=verdict)):
        out[k] = v
    return out
