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
mean is no point that deep): the pair stays undecided, its note giving t. A part that bounds no
volume leaves it undecided, the note saying why.
"""
from __future__ import annotations

import numpy as np

from gjkcli.pipeline.pairs import with_part_certificate

__all__ = ["triangles", "by_thickness", "thickness_verdict", "mean_thickness", "EXIT_THIN",
           "PARALLEL_FROM", "SHARES_PER_JOB"]

# The exit of a pair `by_thickness` settles as touching.
EXIT_THIN = "common solid's mean thickness t (2 x volume / area, manifold3d) within the band"

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


def mean_thickness(o) -> float | None:
    """2 x volume / surface area of the common solid `o` (`gjkcli.mesh.overlap.Overlap`): the
    thickness of a slab, 0 when the parts share no volume; None when a part bounds no volume.

    Where the parts' faces lie on one plane (a bar's top on its slot's ceiling) manifold3d's
    common solid keeps a sheet of no thickness there, its two sides back to back: such area
    bounds no volume and is not counted (`bounding_area`)."""
    if o.volume is None:
        return None
    if o.volume <= 0.0 or len(o.faces) == 0:
        return 0.0
    area = bounding_area(o.vertices, o.faces)
    return 2.0 * o.volume / area if area > 0.0 else 0.0


def bounding_area(vertices, faces) -> float:
    """The area of a closed surface less its sheets of no thickness: on each plane, the area
    facing one way less the area facing the other (a face's back-to-back twin cancels it).

    Planes are told apart to THICKNESS_PLANE_REL of the solid's size; the triangles are binned
    twice, the second time by grids shifted half a bin, and the smaller area is kept (a pair of
    twins split by a bin's edge is cancelled in one of the two): the area errs low, the
    thickness high (towards undecided, never towards touching)."""
    from gjkcli.tolerances import DEFAULT

    corners = np.asarray(vertices, dtype=np.float64)[np.asarray(faces)]
    cross = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
    double = np.linalg.norm(cross, axis=1)
    keep = double > 0.0
    if not keep.any():
        return 0.0
    corners, cross, double = corners[keep], cross[keep], double[keep]
    normal = cross / double[:, None]
    # one orientation per plane: the largest component of the normal positive
    big = np.abs(normal).argmax(axis=1)
    side = np.sign(normal[np.arange(len(normal)), big])
    normal = normal * side[:, None]
    offset = np.einsum("ij,ij->i", normal, corners.mean(axis=1))
    size = float(np.ptp(corners.reshape(-1, 3), axis=0).max()) or 1.0
    step = DEFAULT.thickness_plane_rel
    best = None
    for shift in (0.0, 0.5):
        key = np.column_stack([np.floor(normal / step + shift), np.floor(offset / (step * size) + shift)])
        _, group = np.unique(key, axis=0, return_inverse=True)
        net = np.bincount(group.ravel(), weights=0.5 * double * side)
        area = float(np.abs(net).sum())
        best = area if best is None else min(best, area)
    return best


def thickness_verdict(r, o):
    """The triangle test's undecided answer `r` (an `ExactResult`) judged by the parts' common
    solid `o` (`gjkcli.mesh.overlap.Overlap`): touching when its mean thickness is within the
    band, else `r` undecided still, its note saying what the common solid showed."""
    import dataclasses

    from gjkcli.engine.results import Status

    t = mean_thickness(o)
    band = float(r.tolerance)
    if t is None:
        return dataclasses.replace(r, note=_joined(r.note, f"the common solid was not measured: {o.reason}"))
    if t > band:
        return dataclasses.replace(r, note=_joined(
            r.note, f"the parts' common solid (manifold3d) has volume {o.volume:.6g} and a mean "
                    f"thickness 2 x volume / area of {t:.6g}, beyond the band: a mean proves no depth"))
    shared = "share no volume" if t == 0.0 else f"share a volume of {o.volume:.6g}"
    return dataclasses.replace(
        r, status=Status.TOUCHING, distance=0.0, distance_lower=0.0, depth=None, depth_upper=None,
        certificate=None, exit=EXIT_THIN,
        note=f"touching: the parts {shared} (manifold3d), a common solid of mean thickness "
             f"2 x volume / area {t:.6g} within the band ({band:.6g}), the rule STEP's exact "
             f"solids follow; no point deeper than the band and no move within it was found "
             f"(a fit: the way out is longer than the band)")


def by_thickness(parts, i, j, answers: dict, jobs: int = 1) -> dict:
    """`answers` ({pair index: the triangle test's Result}) with each undecided pair of two
    closed parts judged by its common solid (`thickness_verdict`), the common solids on every
    core (`gjkcli.mesh.overlap.overlaps`)."""
    from gjkcli.engine.results import Status

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


def _joined(note: str, more: str) -> str:
    return f"{note}; {more}" if note else more
