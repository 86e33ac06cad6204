"""Verdicts that survive tessellation: pairs of CAD parts whose triangles lie within `eps` of the
true surfaces (`gjkcli.mesh.cad`).

The bound. Let A, B be the true solids and A', B' their tessellations, with the two-sided
Hausdorff distance between each solid's boundary and its triangles at most eps_A, eps_B (every
surface point within eps of a triangle, every triangle point within eps of the surface). The
distance between two sets, and the signed distance of two solids (minus the penetration depth
when they overlap), moves by at most the Hausdorff distance each boundary moves: so with
e = eps_A + eps_B and s' the triangles' signed distance,

    s' - e  <=  s  <=  s' + e.

Which side the error falls on depends on the curvature. On a convex face the chords cut inside
the solid (the triangles are the smaller solid), so the triangles are FARTHER apart than the
solids and s <= s': a mesh-level "clear by 6.7e-3" can be a true gap of 1e-4 (issue 16's
cylinders). On a concave face (a bore, a fillet's inside) the chords bulge outside the solid, so
the triangles are closer than the solids and s >= s'. A pair can see both (a shaft in a bore),
which is why neither side of the interval is dropped.

The verdicts. With the touching band `tol` and the required clearance `c` (0 when none):

- a pair whose hulls overlap deeper than e plus the parts' hull gaps plus tol is a collision
  before any triangle test (`deep_on_hulls`: EPA's depth is a lower bound of the hulls' depth);
- the interval decides where it can: clear when the lower bound clears both (s' - e > tol and
  s' - e >= c; the hulls' certified lower bound, below s', is tried first), collision when
  the upper bound is a depth beyond the band (s' + e < -tol), closer than the clearance and
  apart when tol < s' - e and s' + e < c;
- everything else is refined on the exact solids, where the file gives them:
  BRepExtrema_DistShapeShape's distance d, and for d <= tol the solids' common part
  (BRepAlgoAPI_Common): a common solid whose mean thickness (2 x volume / area, exact for a
  slab) exceeds tol is a collision, otherwise the solids touch;
- where there is no exact solid (a manifest moved the part) or OpenCASCADE fails, the pair is
  `undecided` with both bounds.

Cheaper before exact. The triangles' distance comes first; their deepest point (most of a pair's
time where the triangles cross, as a bolt's do its hole's) only where it can decide. Apart
triangles within their error of the band or the clearance are made again, finer (`_finer`, up
to FINER_UP_TO times), where the finer bound may decide them; a part too large to mesh again
whole (FINER_TRIANGLES) has only its faces near the other part made finer
(`gjkcli.mesh.cad.finer_near`). OpenCASCADE
then measures the faces that come within the triangles' bound of each other, on the solids'
canonical copies where their products are met in two or more groups of pairs whose solids
meet their B-spline faces (`_with_copies`;
`gjkcli.mesh.cad`: B-spline faces that are cylinders, planes... within
`canonical_rel`, measured as such; within that move of the band, the clearance or the overlap's
thickness, the file's own solids decide); where the triangles cross, a point of each surface
within the band (`cad.touching_points`) shows the distance within the band, reported as an
upper bound with lower bound 0, and the common part tells touching from overlapping (one solid
inside the other by OpenCASCADE's classification, with an empty common part, is the
classification's error: the faces' distance decides). Pairs are
shared with forked workers once they prove slow (`decide_all`), a memo key's pairs together.

Repeated pairs. An assembly places the same two products in the same relative pose many times
(six bolts in six holes). OpenCASCADE's answers depend only on that relative pose, so an
`ExactMemo` keeps them by `same`, a key naming the two products and their relative pose
(`gjkcli.pipeline.stages.placement_key`, equal only for relative poses equal as floats,
its two products in one order whichever the pair lists first): the distance once, its closest
points stored in the first product's frame and placed again with each pair's pose of it; the
common part's volume and thickness as they are.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from gjkcli.engine.results import Result, Status

__all__ = ["Bounded", "ExactMemo", "Pending", "decide", "decide_all", "bounds_of", "deep_on_hulls"]

# Groups handed to forked workers (`decide_all`) and the counter they take them by: set before
# the fork, read by the children.
_WORK: list = []
_NEXT = None
_SPLIT = 0  # the first group of _WORK that needs canonical copies another process makes

# Groups of pairs from which `decide_all` forks at once. Fewer are started in this process, and
# forked only once they prove slow: after FORK_AFTER seconds, when the groups left would take
# FORK_WORTH seconds more at the pace so far. A fork (about 20 ms with OpenCASCADE's solids in
# memory) is repaid by OpenCASCADE's booleans on touching pairs (10 to 40 ms each: the AP214
# AS1's 24 bolts in holes), not by pairs the triangles decide (a millisecond).
PARALLEL_FROM = 32
FORK_AFTER = 0.05
FORK_WORTH = 0.15
# ... and at once from this many groups with exact solids: where the triangles cannot decide
# them, OpenCASCADE's answers (10 to 60 ms each) repay the fork (about 15 ms, `gjkcli.forks`)
# by the second group; groups the triangles decide (a few ms each) cost that for nothing. The
# parts at the root's three collisions (their common volumes and depths, 85, 50 and 50 ms):
# 0.157 s of refinement against 0.178 s from 4 (medians of 8 runs each, alternating).
EXACT_FROM = 3

# How much finer than the parts' own (`_finer`) the triangles of an undecided apart pair may be
# made before OpenCASCADE measures it instead: box_sides.STEP's four pairs 0.005 apart with an
# error of 0.0059 are decided 4 times finer, in a fraction of BRepExtrema_DistShapeShape's time
# on their nearest faces (0.1 s a pair).
FINER_UP_TO = 64
# ... and while the larger part's triangles times that factor stay within this many (a curved
# part's triangles grow about as its deflection shrinks): a large part goes to OpenCASCADE. A
# whole solid meshed again costs about as its triangles (BRepMesh, then its error measured):
# the CATIA spaceship's (issue 43) parts of 2,000 to 6,400 triangles made 16 and 64 times finer
# took 36 s for three pairs whose distances and common parts OpenCASCADE gave in 3.3 s
FINER_TRIANGLES = 20_000


@dataclass(frozen=True)
class Bounded:
    """One refined pair: its result, where the answer came from, and the bounds of the true
    solids' distance (lower == upper for an exact answer; None when unknown)."""

    result: Result
    mode: str
    lower: float | None
    upper: float | None
    note: str | None = None
    volume: float | None = None  # the solids' common volume, when the refinement computed it


class ExactMemo:
    """OpenCASCADE's answers for pairs of products in one relative pose, computed once (see the
    module's docstring); `computed` and `reused` count the calls each way."""

    def __init__(self):
        self._distance: dict = {}
        self._common: dict = {}
        self.finer: dict = {}  # (SolidRef, deflection_rel) -> (finer Mesh, its error), `_finer`
        self.computed = 0
        self.reused = 0

    def distance(self, refs, unit: str, same=None, pose=None, flip: bool = False, within=None,
                 canonical: bool = False, start=None, band=None):
        """`gjkcli.mesh.cad.exact_distance` of refs = (refs_a, refs_b); with `same` (the pair's
        key) and `pose` (the 4x4 rigid pose of the key's first product) the answer of an earlier
        pair of that key, its points placed with this pose. flip: the key names B's product
        first (A's and B's roles swap, so that B against A meets A against B). within,
        canonical: as `exact_distance` takes them. start, band: first try
        `gjkcli.mesh.cad.touching_points` from `start` (a world point), whose distance only
        bounds the solids' one (the last item of the answer says which: "measured" or
        "bounded")."""
        from gjkcli.mesh import cad

        def measure(first, second, start):
            if start is not None:
                got = cad.touching_points(first, second, unit, start, within, band, canonical)
                if got is not None:
                    return (*got, False, "bounded")
            return (*cad.exact_distance(first, second, unit, within, canonical), "measured")

        if same is None or pose is None:
            self.computed += 1
            return measure(refs[0], refs[1], start)
        R, t = pose[:3, :3], pose[:3, 3]
        hit = self._distance.get((same, canonical))
        if hit is None:
            self.computed += 1
            first, second = (refs[1], refs[0]) if flip else refs
            d, p1, p2, inside, how = measure(first, second, start)
            hit = self._distance[same, canonical] = (d, (p1 - t) @ R, (p2 - t) @ R, inside, how)
        else:
            self.reused += 1
        d, l1, l2, inside, how = hit
        p1, p2 = l1 @ R.T + t, l2 @ R.T + t
        return (d, p2, p1, inside, how) if flip else (d, p1, p2, inside, how)

    def common(self, refs, unit: str, same=None, canonical: bool = False):
        """`gjkcli.mesh.cad.common_part` of refs = (refs_a, refs_b), once per key `same`."""
        from gjkcli.mesh import cad

        if same is not None and (same, canonical) in self._common:
            self.reused += 1
            return self._common[same, canonical]
        self.computed += 1
        got = cad.common_part(refs[0], refs[1], unit, canonical)
        if same is not None:
            self._common[same, canonical] = got
        return got


@dataclass(frozen=True)
class Pending:
    """A pair `decide_all` refines: its two bodies (`gjkcli.engine` meshes), e = eps_A + eps_B,
    the band, the clearance, the exact solids and their unit, and the `ExactMemo` key, pose and
    flip (see `decide`); deep_first as in `decide`."""

    a: object
    b: object
    e: float
    tol: float
    clearance: float
    refs: tuple | None
    unit: str | None
    same: object = None
    pose: np.ndarray | None = None
    flip: bool = False
    deep_first: bool = False
    canonical: bool = True  # whether to measure on canonical copies first (`decide_all`)

    @property
    def exact(self) -> bool:
        """Whether the pair has exact solids to refine on (OpenCASCADE's, in a known unit)."""
        return self.refs is not None and self.unit is not None


def decide_all(pending: dict, jobs: int = 1, memo: ExactMemo | None = None, scene=None) -> dict:
    """{key: Bounded} for {key: Pending}: each pair's triangles' distance, then `decide`.

    Pairs that share an `ExactMemo` key stay together (OpenCASCADE measures their key once).
    With jobs > 1 in a process that may fork (`gjkcli.engine.shapes.can_fork`), the groups are
    shared with jobs - 1 forked workers: from the start when there are PARALLEL_FROM of them,
    EXACT_FROM with exact solids, or two products' canonical copies to make, else once this
    process has spent FORK_AFTER seconds on them and the rest would take FORK_WORTH seconds
    more at that pace. This process and the workers then take the groups left
    one at a time from a shared counter; the exact solids read before the fork are the
    workers' too, and each hands back its groups' answers, the same as one process gives.
    `memo` keeps the answers of the groups refined here, and its counts, across calls. `scene`:
    the exact solids of every group of the run (`gjkcli.pipeline.stages.Run.exact_groups`), where `pending` is a share of
    them (a Dask task's), so that canonical copies are decided as for the whole run."""
    import time

    from gjkcli.engine.shapes import can_fork

    groups: dict = {}
    for key, item in pending.items():
        groups.setdefault(group_of(key, item.same), []).append(key)
    work = _with_copies([[(key, pending[key]) for key in keys] for keys in groups.values()], scene)
    memo = ExactMemo() if memo is None else memo
    forks = jobs > 1 and len(work) >= 2 and can_fork()
    copies = _copies_to_make(work) if forks else []
    exact = sum(any(item.exact for _, item in group) for group in work)
    out: dict = {}
    started = time.perf_counter()
    for n, group in enumerate(work):
        spent, left = time.perf_counter() - started, len(work) - n
        if forks and left >= 2 and (len(work) >= PARALLEL_FROM or exact >= EXACT_FROM
                                   or len(copies) >= 2
                                   or (spent >= FORK_AFTER and spent / max(n, 1) * left >= FORK_WORTH)):
            out.update(_shared(work[n:], jobs, memo, copies if n == 0 else None))
            return out
        out.update((key, _decide_one(item, memo)) for key, item in group)
    return out


def _shared(work: list, jobs: int, memo: ExactMemo, todo: list | None = None) -> dict:
    """`work`'s answers from this process and jobs - 1 forked workers (`gjkcli.forks`), each
    taking the next group from a shared counter until none is left. The products' canonical
    copies are made first: shared out when two or more are to be made (`todo`,
    `_copies_to_make` when None: each process makes its share and sends it to this one, which
    sends them all back, `gjkcli.mesh.cad.canonical_export`), else here, before the fork.
    Shared out, the groups that need none of them are taken first, and a process waits for
    the others' copies only when it takes a group that needs them (or has none left): a
    process whose share is made sooner refines pairs meanwhile instead of waiting (Euclid's
    pm2: one process made the housing's copy, 1 s, while the other, its two small copies made,
    waited for it)."""
    import functools

    from gjkcli import forks
    from gjkcli.mesh import cad

    global _WORK, _NEXT, _SPLIT
    # the largest pairs first (their triangles), so that no process is left with a long one
    # while the others have finished
    work = sorted(work, key=lambda group: -sum(_triangle_count(item.a) + _triangle_count(item.b)
                                               for _, item in group))
    workers = min(jobs, len(work)) - 1
    todo = _copies_to_make(work) if todo is None else todo
    shares = [todo[k::workers + 1] for k in range(workers + 1)] if len(todo) >= 2 else None
    if shares is None:
        _copies_here(work)
        split = len(work)
    else:  # the groups that need no copy still to be made first, each part still largest first
        needs = [bool(_copies_to_make([group])) for group in work]
        work = [g for g, n in zip(work, needs) if not n] + [g for g, n in zip(work, needs) if n]
        split = needs.count(False)
    _WORK, _NEXT, _SPLIT = work, forks.Counter(), split
    crew: list = []
    try:
        for k in range(workers):
            share = None if shares is None else shares[k + 1]  # [] still takes part in the exchange
            try:
                crew.append(forks.Worker(functools.partial(_worker, share)))
            except OSError:  # no process left to fork (a limit): this process does the rest
                break
        exchange = None
        if shares is not None:  # this process's share, and those of workers it could not fork
            exchange = _Exchange(cad.canonical_export(
                [ref for share in (shares[0], *shares[len(crew) + 1:]) for ref in share]), crew)
        out = _drain(memo, exchange)
        for worker in crew:
            out.update(worker.result())
    finally:
        for worker in crew:
            worker.close()
        _NEXT.close()
        _WORK, _NEXT, _SPLIT = [], None, 0
    return out


class _Exchange:
    """The canonical copies made by the process that forked the workers (`made`) and by its
    workers (`crew`), each of whom sends its own once made: read as they come (`poll`, between
    groups, so that no worker waits with its copies unread), then all of them sent to each
    (called, once)."""

    def __init__(self, made: list, crew: list):
        self.everyone, self.crew, self.waiting = list(made), crew, list(crew)

    def poll(self) -> None:
        for worker in [w for w in self.waiting if w.ready()]:
            self.everyone += worker.receive()
            self.waiting.remove(worker)

    def __call__(self) -> list:
        for worker in self.waiting:
            self.everyone += worker.receive()
        self.waiting = []
        for worker in self.crew:
            worker.send(self.everyone)
        return self.everyone


def _worker(share, parent) -> dict:
    """A forked worker's answers (`_shared`): with `share`, first the canonical copies it makes,
    sent to the process that forked it, and everyone's, received from it once it needs them
    (`_drain`)."""
    if share is None:
        return _drain()
    from gjkcli.mesh import cad

    parent.send(cad.canonical_export(share))
    return _drain(exchange=parent.receive)


def group_of(key, same):
    """The group a pending pair `key` is refined in: its placement key's `same` (OpenCASCADE
    measures a key once), else its own."""
    return ("key", same) if same is not None else ("pair", key)


def _with_copies(work: list, scene=None) -> list:
    """`work` with each group's pairs told whether to measure on canonical copies
    (`Pending.canonical`): only where every product of the group with a B-spline face is in
    another group with exact solids too (`gjkcli.mesh.cad.copies_repaid`). A copy costs
    about a whole solid's faces converted, fixed and checked (Euclid's pm2 rotor housing's, 107
    B-spline faces: 1 to 2 s) and saves a part of each boolean on it (its pair with the rotor:
    7 s on the file's solid, 0.8 s on the copy); for one pair it may cost more than OpenCASCADE's
    own calls on the file's solids (the housing and a shaft: 0.8 s), for a product met again it
    is repaid where its pairs meet its B-spline faces (since the rotor's pair is decided on
    finer triangles of its nearest faces, the housing's three pairs with OpenCASCADE meet 12 of
    its 107 and cost the same on the copy as on the file's solid)."""
    exact = [n for n, group in enumerate(work) if any(item.exact for _, item in group)]
    if not exact:
        return work
    from gjkcli.mesh import cad

    try:
        repaid = cad.copies_repaid([[(item.refs[0], item.refs[1]) for _, item in work[n]
                                     if item.exact] for n in exact], scene)
    except Exception:  # noqa: BLE001 - the pairs' own refinement says what failed
        return work
    work = list(work)
    for n, ok in zip(exact, repaid):
        if not ok:
            work[n] = [(key, dataclasses.replace(item, canonical=False)) for key, item in work[n]]
    return work


def _copies_to_make(work: list) -> list:
    """`gjkcli.mesh.cad.canonical_todo` of the groups' exact solids measured on their canonical
    copies ([] when none has any)."""
    refs = [ref for group in work for _, item in group
            if item.exact and item.canonical
            for ref in (*item.refs[0], *item.refs[1])]
    if not refs:
        return []
    from gjkcli.mesh import cad

    try:
        return cad.canonical_todo(refs)
    except Exception:  # noqa: BLE001 - the pairs' own refinement says what failed
        return []


def _copies_here(work: list) -> None:
    """Each product's canonical copy made in this process, before the fork."""
    from gjkcli.mesh import cad

    for group in work:
        for _, item in group:
            if item.exact and item.canonical:
                try:
                    cad.slack(item.refs[0], item.unit) + cad.slack(item.refs[1], item.unit)
                except Exception:  # noqa: BLE001 - the pair's own refinement says what failed
                    pass


def _drain(memo: ExactMemo | None = None, exchange=None) -> dict:
    """The answers of the groups of `_WORK` this process takes from `_NEXT`, until none is
    left (in a forked worker, or in the process that forked it). exchange: () -> every
    process's canonical copies (`gjkcli.mesh.cad.canonical_export`), called once, as this
    process takes the first group from _SPLIT on (those that need them) or finds none left,
    so that every process takes part in the exchange (and no process's copies stay unread);
    they are kept here only where a group is left to use them."""
    memo = ExactMemo() if memo is None else memo
    out: dict = {}
    while True:
        if exchange is not None and hasattr(exchange, "poll"):
            exchange.poll()
        n = _NEXT.take()
        if exchange is not None and n >= _SPLIT:
            made = exchange()
            exchange = None
            if n < len(_WORK):
                from gjkcli.mesh import cad

                cad.canonical_import(made)
        if n >= len(_WORK):
            return out
        out.update((key, _decide_one(item, memo)) for key, item in _WORK[n])


def _decide_one(item: Pending, memo: ExactMemo) -> Bounded:
    import functools

    from gjkcli.engine.primitive import pair_query

    # the distance first: the deepest point of crossing triangles only where it can tell
    mesh = pair_query(item.a, item.b, tolerance=item.tol, want="distance")
    return decide(mesh, item.e, item.tol, item.clearance, item.refs, item.unit, memo=memo,
                  same=item.same, pose=item.pose, flip=item.flip,
                  deepest=functools.partial(pair_query, item.a, item.b, tolerance=item.tol),
                  deep_first=item.deep_first,
                  triangles=max(_triangle_count(item.a), _triangle_count(item.b)),
                  canonical=item.canonical, within=functools.partial(_within, item.a, item.b, item.e))


def _within(a, b, e: float, mesh: Result) -> bool:
    """Whether the triangles' answer `mesh` may have missed one part inside the other: the outer
    part's triangles are not a closed surface (OpenCASCADE's sphere gives each of its poles'
    triangles a pole of its own), so only the surfaces were compared, the inner's box lies
    within the outer's grown by `e` (eps_A + eps_B; a solid inside another lies within its box),
    and a vertex of the inner is not plainly outside the outer's triangles (their generalized
    winding number there is 0.25 or more: a few small gaps move it by little, and a part apart
    from the other reads 0). Only those pairs are asked of the exact solids (`decide`): the
    classification costs OpenCASCADE's (30 to 50 ms a pair of an AP214 rotor's parts)."""
    from gjkcli.engine._mesh import winding

    for inner, outer, closed in ((a, b, getattr(mesh, "solid_b", True)), (b, a, getattr(mesh, "solid_a", True))):
        if closed:
            continue
        lo_in, hi_in = _box(inner)
        lo_out, hi_out = _box(outer)
        if not (np.all(lo_in >= lo_out - e) and np.all(hi_in <= hi_out + e)):
            continue
        if getattr(outer, "bvh", None) is None or getattr(inner, "used", None) is None:
            return True
        outer.bvh.prepare_winding()
        point = inner.vertices[inner.used[:1]] - outer.centre
        if abs(float(winding(outer.bvh, point)[0])) >= 0.25:
            return True
    return False


def _box(body) -> tuple:
    """(lo, hi) of a mesh's vertices or a primitive's Shape."""
    if getattr(body, "local_lo", None) is not None:
        return body.centre + body.local_lo, body.centre + body.local_hi
    lo, hi = np.asarray(body.bounds, dtype=np.float64).reshape(2, 3)
    return lo, hi


def _triangle_count(body) -> int:
    """A mesh's triangles; 0 for a primitive (`gjkcli.engine.shapes.Shape`, no triangles)."""
    faces = getattr(body, "faces", None)
    return 0 if faces is None else len(faces)


def bounds_of(signed: float, e: float) -> tuple[float, float]:
    """(lower, upper) of the true signed distance from the triangles' signed distance `signed`
    and the pair's tessellation error `e` (see the module's docstring)."""
    return signed - e, signed + e


def deep_on_hulls(hull: Result, e: float, gaps: float, tol: float) -> Bounded | None:
    """The collision of a pair whose hulls overlap deeper than every error allows, without the
    triangle test; None when the hulls cannot tell (then the triangles and the exact solids do).

    hull : the hulls' answer (`gjkcli.engine`), whose `depth` is EPA's lower bound of the hulls'
        penetration depth
    e : eps_A + eps_B; gaps : the parts' `hull_gaps` summed (inf when a part is not its hull)

    Each part's triangles fill its hull and lie within its gap of the hull's boundary, so the
    triangles' depth is at least the hulls' depth less the gaps, and the true solids' signed
    distance is at most  -depth + gaps + e  (the module's bound). Below -tol it is a collision.
    """
    if hull.status is not Status.COLLISION or hull.depth is None or not np.isfinite(gaps):
        return None
    upper = -float(hull.depth) + gaps + e
    if not upper < -tol:
        return None
    r = dataclasses.replace(hull, distance=0.0, distance_lower=0.0)
    return Bounded(r, "hull", None, None, "the hulls overlap deeper than the tessellation's error "
                                          "allows; depth from the hulls")


def decide(mesh: Result, e: float, tol: float, clearance: float, refs, unit: str | None, *,
           memo: ExactMemo | None = None, same=None, pose=None, flip: bool = False,
           deepest=None, deep_first: bool = False, triangles: int = 0,
           canonical: bool = True, within=None) -> Bounded:
    """The verdict of a pair of tessellated parts the triangles alone cannot clear.

    mesh : the triangles' answer (`gjkcli.engine.exact.exact_query`), tolerance `tol`: the
        verdict, or with `deepest` given the distance query's (crossing triangles are then a
        collision without a depth)
    e : eps_A + eps_B; clearance : the required gap (0 for none)
    refs : (refs_a, refs_b) the parts' `gjkcli.mesh.cad.SolidRef`s, or None
    unit : the parts' unit (their refs are read in it)
    memo, same, pose, flip : OpenCASCADE's answers kept across pairs (`ExactMemo`), this pair's
        key (None: not shared), the rigid pose of the key's first product, and whether that
        product is B's
    deepest : () -> the triangles' verdict, whose search for the deepest point is most of a
        refined pair's time when the triangles cross (a bolt in its hole): asked for only where
        the depth can decide, that is without exact solids, when they fail, for the depth a
        collision reports, or first with `deep_first` (the hulls show the triangles overlapping
        beyond the band, so the depth may exceed the error and decide without OpenCASCADE)
    triangles : the larger part's triangle count, which bounds how much finer `_finer` may go
    canonical : whether the exact solids are measured on their canonical copies first
    within : (mesh) -> whether the triangles may have missed one part inside the other
        (`_within`; None: they may, where a part's triangles are not closed): triangles apart
        are then asked of the exact solids whether one lies inside the other
    """
    exact = refs is not None and bool(refs[0]) and bool(refs[1]) and unit is not None
    unknown = deepest is not None and mesh.status is Status.COLLISION and mesh.depth is None
    if unknown and (deep_first or not exact):
        mesh, unknown = deepest(), False
    nested = False  # the triangles apart, one exact solid inside the other
    if not unknown:  # the interval [s' - e, s' + e] first
        lower, upper = bounds_of(float(mesh.signed_distance), e)
        decided = _from_interval(mesh, lower, upper, tol, clearance, None)
        nested = (decided.result.status is not Status.UNDECIDED and exact and lower > tol
                  and _unseen(mesh, within) and _nested(refs))
        if decided.result.status is not Status.UNDECIDED and not nested:
            if exact and getattr(decided.result, "note", ""):
                # the triangles' caveat (a mesh not closed: a part inside it not detected) is not
                # this answer's: with exact solids, one inside the other is asked of them where
                # the triangles could have missed it (`_unseen`, `_nested`)
                decided = dataclasses.replace(decided, result=dataclasses.replace(decided.result, note=""))
            return decided
    # apart triangles within their error of the band or the clearance: the parts' triangles
    # made again, finer, may decide it at a fraction of OpenCASCADE's distance (not where one
    # solid lies inside the other: finer triangles miss it as these did)
    if exact and not unknown and not nested and mesh.status is not Status.COLLISION:
        try:
            got = _finer(mesh, e, tol, clearance, refs, unit,
                         ExactMemo() if memo is None else memo, triangles)
        except Exception:  # noqa: BLE001 - the exact solids decide instead
            got = None
        if got is not None:
            return got
    # crossing triangles without their depth: s' <= 0, so the interval cannot clear the pair,
    # and a depth beyond e is what the hulls did not suggest: the exact solids decide
    if exact:
        try:
            return _exact(mesh, e, tol, clearance, refs, unit,
                          ExactMemo() if memo is None else memo, same, pose, flip, deepest,
                          canonical)
        except Exception as exc:  # noqa: BLE001 - OpenCASCADE's failure leaves the interval
            note = f"the exact solids could not be compared ({type(exc).__name__}: {exc})"
    else:
        note = ("no exact solid for one of the parts (a manifest primitive has none; a part moved "
                "after reading loses its own)")
    if unknown:
        mesh = deepest()
    lower, upper = bounds_of(float(mesh.signed_distance), e)
    return _from_interval(mesh, lower, upper, tol, clearance, note)


def _finer(mesh: Result, e: float, tol: float, clearance: float, refs, unit: str,
           memo: ExactMemo, triangles: int = 0) -> Bounded | None:
    """The verdict of apart triangles from both parts tessellated again (`gjkcli.mesh.cad.finer`)
    with an error small enough to decide: the module's bound holds for any tessellation whose
    error is measured, so [s'' - e'', s'' + e''] on the finer triangles bounds the solids'
    distance as the first one did. None when it would take more than FINER_UP_TO times the
    parts' deflection (or more than FINER_TRIANGLES, `triangles` being the larger part's
    count), or when the finer interval does not decide either."""
    from gjkcli.engine.exact import Mesh
    from gjkcli.engine.primitive import pair_query
    from gjkcli.mesh import cad
    from gjkcli.mesh.load import merge_close
    from gjkcli.tolerances import DEFAULT

    if len(refs[0]) != 1 or len(refs[1]) != 1 or not e > 0:
        return None
    s = float(mesh.signed_distance)
    # how near the triangles' distance lies to the thresholds it must be told from
    margin = min(abs(s - t) for t in ((tol, clearance) if clearance > tol else (tol,)))
    if not margin > 0:
        return None
    times = 4  # the deflection divided by a power of 4, so that pairs share finer parts
    while times * margin < 2 * e:  # the finer error about half the margin
        times *= 4
    if times > FINER_UP_TO:
        return None
    # a part whose error is a small share of the pair's (its size a small share of both's, the
    # deflection being relative to each part's size) keeps its deflection: made finer too, a
    # screw's helix beside a 6 m rail passed FINER_TRIANGLES and went to OpenCASCADE's distance
    sizes = [cad.diagonal(refs[0][0]), cad.diagonal(refs[1][0])]
    rels = [DEFAULT.cad_deflection_rel / times if 4 * times * size > sum(sizes) else DEFAULT.cad_deflection_rel
            for size in sizes]
    bodies, errors = [], []
    reach = None  # the whole solids meshed again; else only their faces within reach
    if times * triangles <= FINER_TRIANGLES:
        for ref, rel in zip((refs[0][0], refs[1][0]), rels):
            key = (ref, rel)
            if key not in memo.finer:
                vertices, faces, eps = cad.finer(ref, unit, rel)
                memo.finer[key] = (Mesh(*merge_close(vertices, faces)), eps)
            bodies.append(memo.finer[key][0])
            errors.append(memo.finer[key][1])
    else:
        # a large part: only the faces that come within the triangles' bound of the other part
        # (as OpenCASCADE would measure them, `_exact`), if they are few enough
        reach = float(mesh.distance) + e + tol
        near = cad.finer_near(refs[0], refs[1], unit, reach, rels,
                              [DEFAULT.cad_deflection_rel / rel for rel in rels], FINER_TRIANGLES)
        if near is None:
            return None
        for vertices, faces, eps in near:
            bodies.append(Mesh(*merge_close(vertices, faces)))
            errors.append(eps)
    fine = pair_query(bodies[0], bodies[1], tolerance=tol, want="distance")
    if fine.status is Status.COLLISION:
        return None
    lower, upper = bounds_of(float(fine.signed_distance), errors[0] + errors[1])
    if reach is not None and not upper <= reach:
        return None  # the near faces' distance is the boundaries' only within reach
    decided = _from_interval(fine, lower, upper, tol, clearance, None)
    if decided.result.status is Status.UNDECIDED:
        return None
    if reach is not None and cad.nested(refs[0], refs[1]):
        return None  # boundaries apart, one solid inside the other: the exact solids say so
    what = "the parts' triangles" if reach is None else "the triangles of the parts' nearest faces"
    made = "" if rels[0] == rels[1] else ", the larger part's"
    note = (f"decided on {what}{made} made {times} times finer (error "
            f"{errors[0] + errors[1]:.3g} instead of {e:.3g})")
    return dataclasses.replace(decided, note=note)


def _unseen(mesh: Result, within) -> bool:
    """Whether the triangles' answer may have missed one part inside the other (`_within`, or
    without it: a part's triangles not a closed surface)."""
    if within is not None:
        return within(mesh)
    return not (getattr(mesh, "solid_a", True) and getattr(mesh, "solid_b", True))


def _nested(refs) -> bool:
    """One exact solid inside the other (a point of each classified in the other, `cad.nested`):
    triangles apart, not closed, leave it unseen (a cube buried in a hollow sphere's wall was
    clear, 0.72 mm from its faces)."""
    from gjkcli.mesh import cad

    try:
        return cad.nested(refs[0], refs[1])
    except Exception:  # noqa: BLE001 - OpenCASCADE's failure: the exact solids are asked
        return True


def _from_interval(mesh: Result, lower, upper, tol, clearance, note) -> Bounded:
    if upper < -tol:
        status = Status.COLLISION
    elif lower > tol and lower >= clearance:
        status = Status.CLEAR
    elif lower > tol and upper < clearance:
        status = Status.CLEARANCE
    else:
        status = Status.UNDECIDED
        if note is not None:
            note = (f"{note}: the true distance is between {lower:.6g} and {upper:.6g}, the "
                    f"triangles' error allows either verdict")
    r = dataclasses.replace(mesh, status=status, distance_lower=max(lower, 0.0),
                            distance=max(float(mesh.distance), 0.0))
    return Bounded(r, "exact", lower, upper, note)


def _exact(mesh: Result, e: float, tol: float, clearance: float, refs, unit: str,
           memo: ExactMemo, same, pose, flip: bool, deepest=None,
           canonical: bool = True) -> Bounded:
    """The pair on its exact solids (OpenCASCADE); `deepest`, `canonical` as in `decide`."""
    # the boundaries lie within e of the triangles: no farther apart than the triangles' distance
    # (0 when they cross) plus e, so OpenCASCADE measures only the faces that come that close
    apart = mesh.status is not Status.COLLISION
    within = (float(mesh.distance) if apart else 0.0) + e + tol
    # B-spline faces that are cylinders, planes... measured as such, 5 to 10 times faster; an
    # answer within the copies' move (both solids' slack) of the band, the clearance or the
    # thickness that tells an overlap is measured again on the file's own solids
    from gjkcli.mesh import cad

    slack = cad.slack(refs[0], unit) + cad.slack(refs[1], unit) if canonical else 0.0
    for canonical in ((True, False) if canonical else (False,)):
        # where the triangles cross, a point of each surface within the band is looked for
        # first (the solids then touch or overlap, which the common part tells)
        start = None if apart else np.asarray(mesh.point_a, dtype=np.float64)
        d, pa, pb, inside, how = memo.distance(refs, unit, same, pose, flip, within, canonical,
                                               start, tol)
        if canonical and (abs(d - tol) <= slack
                          or (d > tol and clearance > 0 and abs(d - clearance) <= slack)):
            continue
        gap = pb - pa
        length = float(np.linalg.norm(gap))
        normal = gap / length if length > 0 else np.asarray(mesh.normal, dtype=np.float64)
        base = dict(point_a=pa, point_b=pb, normal=normal, certificate=None, iterations=0,
                    epa_iterations=0, exit="B-rep distance (BRepExtrema_DistShapeShape)",
                    epa_exit=None, tolerance=tol, trace=None)
        if hasattr(mesh, "note"):  # the triangles' caveats (a mesh not watertight: only its
            base["note"] = ""  # surface counts) are not the closed solids' that answer here
        if d > tol:
            status = Status.CLEARANCE if d < clearance else Status.CLEAR
            r = dataclasses.replace(mesh, status=status, distance=d, distance_lower=d, depth=None,
                                    **base)
            return Bounded(r, "brep", d, d)
        common = memo.common(refs, unit, same, canonical)
        thickness = None if common is None else common[1]
        if canonical and not inside and (thickness is None or abs(thickness - tol) <= 2 * slack):
            continue
        break
    if inside and common is not None and common[0] <= tol ** 3:
        # one solid inside the other shares its whole volume with it: a common part of none
        # says the point OpenCASCADE classified as inside is not (BRepClass3d_SolidClassifier
        # put 48 vertices of the CATIA and Inventor spaceships' main body inside their head,
        # whose common part is empty and whose faces are 0.08 and 0.6 mm apart), so the
        # solids' distance is their boundaries', measured on the file's own faces
        d, pa, pb = cad.boundary_distance(refs[0], refs[1], unit, within)
        inside, gap = False, pb - pa
        length = float(np.linalg.norm(gap))
        base.update(point_a=pa, point_b=pb,
                    normal=gap / length if length > 0 else base["normal"])
        if d > tol:
            status = Status.CLEARANCE if d < clearance else Status.CLEAR
            r = dataclasses.replace(mesh, status=status, distance=d, distance_lower=d, depth=None,
                                    **base)
            return Bounded(r, "brep", d, d, "OpenCASCADE's classification put one solid inside "
                                            "the other, their common part is empty: the distance "
                                            "is their faces'")
        how = "measured"
    if inside or (thickness is not None and thickness > tol):
        if deepest is not None and mesh.depth is None and mesh.status is Status.COLLISION:
            mesh = deepest()  # the depth the collision reports
        if mesh.depth is not None and mesh.status is Status.COLLISION:
            depth, whence = float(mesh.depth), "depth from the triangles"
        elif thickness is not None:  # the triangles found no overlap (a mesh not watertight)
            depth, whence = thickness, "depth: their common solid's mean thickness"
        else:
            depth, whence = 0.0, "no depth measured"
        r = dataclasses.replace(mesh, status=Status.COLLISION, distance=0.0, distance_lower=0.0,
                                depth=depth, **{**base, "exit": "B-rep overlap (BRepAlgoAPI_Common)"})
        return Bounded(r, "brep", None, None, f"the solids overlap (OpenCASCADE); {whence}",
                       volume=None if common is None else common[0])
    lower = d if how == "measured" else 0.0  # touching points bound the distance only
    r = dataclasses.replace(mesh, status=Status.TOUCHING, distance=d, distance_lower=lower,
                            depth=None, **base)
    return Bounded(r, "brep", lower, d)
