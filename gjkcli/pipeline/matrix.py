"""The self-collision matrix of a robot, as MoveIt's setup assistant makes it, and its audit.

`collision_matrix` sorts every pair of links with collision geometry into:

- ``Adjacent``: joined by a joint (also through fixed joints past links without geometry);
- ``Default``: in collision at the default pose (every joint at 0 within its limits);
- ``Always``: in collision in at least `ALWAYS` of the random samples;
- ``Never``: in collision in none of the N random samples (uniform within the joint limits);
- enabled: everything else (it collides sometimes: a planner must check it).

Speed: the samples' link frames come from one vectorised forward kinematics per chunk; every
(sample, pair) row goes first to the engine's batch call on the hulls (`gjkcli.engine.query.batch`,
no Python per row); rows whose hulls meet go to the triangle test (the links are not their
hulls; a primitive against a mesh goes to the mesh's triangles). A pair leaves the sampling as
soon as its class is settled: once it has collided (it is not Never) and has missed more than
1 - ALWAYS of the samples (it is not Always). With `jobs` > 1 each chunk's samples are split
over forked worker processes (the checker is built once, before the fork); the matrix is the
same for any number of them.

`audit` checks an SRDF's ``Never`` lines the same way and returns, per pair that does collide,
the first sample that shows it.
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from gjkcli.engine.results import Status

__all__ = ["Matrix", "collision_matrix", "audit", "sample_collisions", "ALWAYS"]

# A pair in collision in at least this share of the samples is "Always" (MoveIt's setup assistant
# uses 95% too).
ALWAYS = 0.95
# Samples per batch: the rows of one engine call are this times the undecided pairs.
CHUNK = 1000


@dataclass(frozen=True)
class Matrix:
    """The sorted pairs. reasons : {(link, link): "Adjacent" | "Default" | "Always" | "Never"}
    for the disabled pairs; enabled : pairs that collide sometimes; hits : {pair: collisions seen}
    (over the samples checked before the pair was settled); samples, seed : the sampling."""

    robot: str
    reasons: dict
    enabled: tuple
    hits: dict
    samples: int
    seed: int


class _Checker:
    """Collision of link pairs at many poses: hulls in one batch, the triangles where they meet."""

    def __init__(self, robot):
        from gjkcli.pipeline.motion import Motion

        self.robot = robot
        self.motion = Motion.build(robot, None, None)
        links = [c.link for c in robot.collisions]
        self.element_link = links
        self.links = list(dict.fromkeys(links))
        # every pair of elements of different links (Motion.build left out adjacent ones)
        E = len(links)
        ia, ib = np.triu_indices(E, 1)
        keep = np.array([links[a] != links[b] for a, b in zip(ia, ib)], dtype=bool)
        self.ia, self.ib = ia[keep], ib[keep]
        self.link_pairs = list(dict.fromkeys(_key(links[a], links[b]) for a, b in zip(self.ia, self.ib)))
        self.pair_of = np.array([self.link_pairs.index(_key(links[a], links[b]))
                                 for a, b in zip(self.ia, self.ib)], dtype=np.int64)

    def collide(self, q: np.ndarray, pairs: np.ndarray) -> np.ndarray:
        """(n, len(pairs)) bool: link pair `pairs[j]` (indices into link_pairs) collides at q[i]."""
        from gjkcli.engine.query import batch
        from gjkcli.pipeline.pairs import exact_pair

        rows = np.flatnonzero(np.isin(self.pair_of, pairs))
        column = np.searchsorted(pairs, self.pair_of[rows])
        n = len(q)
        out = np.zeros((n, len(pairs)), dtype=bool)
        if n == 0 or len(rows) == 0:
            return out
        F = self.motion.frames(q)  # (n, E, 4, 4)
        ia, ib = self.ia[rows], self.ib[rows]
        sample = np.repeat(np.arange(n), len(rows))
        ea, eb = np.tile(ia, n), np.tile(ib, n)
        got = batch(self.motion.shapes, ea, eb, pose_a=F[sample, ea], pose_b=F[sample, eb], want="intersect")
        meet = np.flatnonzero(got.status != _CODE_CLEAR)
        col = np.tile(column, n)
        for k in meet.tolist():
            s, a, b = int(sample[k]), int(ea[k]), int(eb[k])
            if out[s, col[k]]:
                continue  # another element pair of these links already collides here
            shapes = self.motion.shapes.shapes
            r = exact_pair(self.motion.meshes[a], shapes[a], self.motion.meshes[b], shapes[b],
                           pose_a=F[s, a], pose_b=F[s, b], want="intersect")
            if r is None:  # two primitives: each is its own hull
                hit = got.status[k] == _CODE_COLLISION
            else:  # a primitive against a mesh goes to the mesh's triangles
                hit = r.status is Status.COLLISION
            out[s, col[k]] = hit
        return out


def _key(a: str, b: str) -> tuple:
    return (a, b) if a <= b else (b, a)


# The checker this process built for a Dask sampling, by the sampling's token
# (`sample_collisions`): one sampling at a time, so one kept.
_CHECKER: dict = {}


def sample_collisions(token: str, robot, q, pairs):
    """(len(q), len(pairs)) bool: `_Checker.collide` of the link pairs `pairs` at the sample
    poses q, on a Dask worker (`gjkcli.pipeline.distributed.sample_collider`), the robot's checker
    built the first time this worker sees the sampling's `token`."""
    check = _CHECKER.get(token)
    if check is None:
        _CHECKER.clear()
        check = _CHECKER[token] = _Checker(robot)
    return check.collide(q, pairs)


@contextmanager
def _collider(check: _Checker, jobs: int, dask=None):
    """(check.collide, samples a chunk per CHUNK): its samples split over `jobs` forked worker
    processes (each holds the checker it was forked with), or over the workers of the Dask
    cluster `dask` ((address, time-out): `gjkcli.pipeline.distributed.sample_collider`, each
    worker building the checker once); the answers are the same, in sample order."""
    from gjkcli.engine.shapes import can_fork

    if dask is not None:
        from gjkcli.pipeline.distributed import sample_collider

        with sample_collider(*dask, check.robot, sample_collisions) as got:
            yield got
        return
    if jobs <= 1 or not can_fork():
        yield check.collide, jobs
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    global _FORKED
    _FORKED = check  # what the workers inherit when forked
    try:
        with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork")) as pool:
            def collide(q, pairs):
                parts = [p for p in np.array_split(q, jobs) if len(p)]
                if len(parts) < 2:
                    return check.collide(q, pairs)
                return np.concatenate(list(pool.map(_collide_forked, [(p, pairs) for p in parts])))

            yield collide, jobs
    finally:
        _FORKED = None


_FORKED: _Checker | None = None


def _collide_forked(arg):
    q, pairs = arg
    assert _FORKED is not None
    return _FORKED.collide(q, pairs)


def collision_matrix(robot, *, samples: int = 10_000, seed: int = 0, progress=None,
                     settle: bool = True, jobs: int = 1, dask=None) -> Matrix:
    """Adjacent, Default, Always and Never pairs of a `gjkcli.scene.urdf.Robot`; deterministic
    for a seed (and the same for any `jobs`).

    settle : a pair leaves the sampling once its class is known (False: every pair at every
        pose, the same classes; benchmarks/bench_matrix.py times both)
    jobs : worker processes the samples of each chunk are split over
    dask : (scheduler address or "local[:N]", time-out in seconds): the samples of each chunk
        split over the Dask cluster's workers instead
    """
    from gjkcli.scene import urdf

    tell = progress or (lambda stage, done, total: None)
    check = _Checker(robot)
    reasons = {}
    for a, b, _ in urdf.adjacent_links(robot):
        reasons[_key(a, b)] = "Adjacent"
    todo = np.array([k for k, p in enumerate(check.link_pairs) if p not in reasons], dtype=np.int64)
    at_default = check.collide(robot.default_pose()[None], todo)[0]
    for k in todo[at_default]:
        reasons[check.link_pairs[k]] = "Default"
    todo = todo[~at_default]
    hits = np.zeros(len(check.link_pairs), dtype=np.int64)
    misses = np.zeros(len(check.link_pairs), dtype=np.int64)
    rng = np.random.default_rng(seed)
    Q = rng.uniform(robot.lower, robot.upper, size=(samples, robot.dof))
    allowed_misses = int(np.floor((1.0 - ALWAYS) * samples))  # more misses: not Always
    stop_after = allowed_misses if settle else samples
    done = 0
    tell("samples", 0, samples)
    with _collider(check, jobs, dask) as (collide, width):
        while done < samples and len(todo):
            q = Q[done: done + CHUNK * width]
            got = collide(q, todo)
            # settle pairs in sample order, so the counts do not depend on the chunk size
            for j, k in enumerate(todo.tolist()):
                column = got[:, j]
                hits_before = hits[k]
                # the sample at which the pair is settled (hit once and missed too often), if any
                cum_hits = hits_before + np.cumsum(column)
                cum_miss = misses[k] + np.cumsum(~column)
                settled = np.flatnonzero((cum_hits > 0) & (cum_miss > stop_after))
                upto = settled[0] + 1 if len(settled) else len(column)
                hits[k] = hits_before + column[:upto].sum()
                misses[k] += (~column[:upto]).sum()
            done += len(q)
            todo = todo[~((hits[todo] > 0) & (misses[todo] > stop_after))]
            tell("samples", done, samples)
    for k, p in enumerate(check.link_pairs):
        if p in reasons:
            continue
        if hits[k] == 0:
            reasons[p] = "Never"
        elif misses[k] <= allowed_misses:
            reasons[p] = "Always"
    enabled = tuple(p for p in check.link_pairs if p not in reasons)
    return Matrix(robot=robot.name, reasons=reasons, enabled=enabled,
                  hits={p: int(hits[k]) for k, p in enumerate(check.link_pairs)},
                  samples=samples, seed=seed)


def prove_never(robot, m: Matrix, *, max_boxes: int, progress=None) -> tuple[Matrix, dict]:
    """(the matrix with only proven Never pairs disabled as Never, {pair: Proof} of every Never
    pair of `m`): branch and bound over each pair's joint box (`gjkcli.pipeline.prove`)."""
    import dataclasses

    from gjkcli.pipeline.motion import Motion
    from gjkcli.pipeline.prove import prove_pair

    tell = progress or (lambda stage, done, total: None)
    motion = Motion.build(robot, None, None)
    never = sorted(p for p, r in m.reasons.items() if r == "Never")
    proofs = {}
    tell("prove", 0, len(never))
    for n, (a, b) in enumerate(never):
        proofs[(a, b)] = prove_pair(motion, a, b, max_boxes=max_boxes)
        tell("prove", n + 1, len(never))
    reasons = {p: r for p, r in m.reasons.items()
               if r != "Never" or proofs[p].verdict == "proven"}
    enabled = m.enabled + tuple(p for p in never if proofs[p].verdict != "proven")
    return dataclasses.replace(m, reasons=reasons, enabled=enabled), proofs


@dataclass(frozen=True)
class Counterexample:
    """A pair an SRDF disables as Never that collides: the pose (joint values) and the depth."""

    a: str
    b: str
    pose: dict
    depth: float | None
    sample: int


def audit(robot, never_pairs, *, samples: int = 10_000, seed: int = 0, progress=None,
          jobs: int = 1, dask=None) -> list:
    """Counterexample per pair of `never_pairs` ((link, link), ...) found colliding in the
    sampling of `collision_matrix` (the same poses for a seed), the first sample that shows it;
    `jobs` worker processes, or `dask`, as there."""
    from gjkcli.engine.primitive import pair_query

    tell = progress or (lambda stage, done, total: None)
    check = _Checker(robot)
    index = {p: k for k, p in enumerate(check.link_pairs)}
    todo = np.array(sorted({index[_key(a, b)] for a, b in never_pairs if _key(a, b) in index}),
                    dtype=np.int64)
    rng = np.random.default_rng(seed)
    Q = rng.uniform(robot.lower, robot.upper, size=(samples, robot.dof))
    found = []
    done = 0
    tell("samples", 0, samples)
    with _collider(check, jobs, dask) as (collide, width):
        while done < samples and len(todo):
            q = Q[done: done + CHUNK * width]
            got = collide(q, todo)
            hit_any = got.any(axis=0)
            for j in np.flatnonzero(hit_any).tolist():
                k = int(todo[j])
                s = int(np.flatnonzero(got[:, j])[0])
                a, b = check.link_pairs[k]
                depth = _deepest(check, a, b, q[s], pair_query)
                found.append(Counterexample(a=a, b=b, pose=dict(zip(robot.variables, q[s].tolist())),
                                            depth=depth, sample=done + s))
            todo = todo[~hit_any]
            done += len(q)
            tell("samples", done, samples)
    return sorted(found, key=lambda c: (c.a, c.b))


def _deepest(check: _Checker, a: str, b: str, q, pair_query) -> float | None:
    """The deepest overlap the exact test finds between links a and b at pose q (primitives
    against meshes included; two primitives, which the hulls answer, are left out)."""
    from gjkcli.engine.primitive import exact_body
    from gjkcli.pipeline.policy import settle

    F = check.motion.frames(q[None])[0]
    best = None
    for ea, eb in zip(check.ia.tolist(), check.ib.tolist()):
        if {check.element_link[ea], check.element_link[eb]} != {a, b}:
            continue
        ma, mb = check.motion.meshes[ea], check.motion.meshes[eb]
        if ma is None and mb is None:
            continue
        shapes = check.motion.shapes.shapes
        body_a, body_b = exact_body(ma, shapes[ea]), exact_body(mb, shapes[eb])
        r = settle(pair_query(body_a, body_b, pose_a=F[ea], pose_b=F[eb]), body_a, body_b, F[ea], F[eb])
        if r.status is Status.COLLISION and r.depth is not None:
            best = r.depth if best is None else max(best, r.depth)
    return best


def _codes():
    from gjkcli.engine.results import STATUS_CODES

    code = {s: c for c, s in STATUS_CODES.items()}
    return code[Status.CLEAR], code[Status.COLLISION]


_CODE_CLEAR, _CODE_COLLISION = _codes()
