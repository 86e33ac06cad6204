"""`gjk collision-matrix --prove`: a Never pair certified clear over the whole joint-limit box, not
only in the samples.

Branch and bound over the joints that move one link of the pair relative to the other (those
above exactly one of the two links; the others change nothing between them, so they stay at the
default pose). For a sub-box with centre c and half-widths h, every pose q in it is reached from
c by a straight joint motion along which no point of an element moves further than
sum_k |travel of joint k| x its reach from joint k's axis (`gjkcli.scene.urdf.motion_radii`,
the bound of conservative advancement). If the pair's certified distance at c exceeds the sum of
that bound for both links, the pair is clear in the whole sub-box; if the parts collide at c, c
is a counterexample; otherwise the box is halved along the joint whose share of the bound is
largest. Boxes are processed breadth-first in batches (hulls in one engine call, the triangles
where the hulls come within the bound).

A pair neither proven nor refuted within its budget of boxes is "not proven".
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gjkcli.engine.results import Status

__all__ = ["Proof", "prove_pair", "moving_variables"]

# Boxes per pair before giving up, and per batch.
MAX_BOXES = 200_000
BATCH = 4096


@dataclass(frozen=True)
class Proof:
    """verdict : "proven", "collides" or "not proven"; boxes : sub-boxes examined; pose : the
    counterexample's joint values ("collides"); joints : the joints the proof ranged over."""

    a: str
    b: str
    verdict: str
    boxes: int
    joints: tuple
    pose: dict | None = None


def moving_variables(robot, a: str, b: str) -> np.ndarray:
    """(d,) bool: the pose's variables that move link a relative to link b."""
    from gjkcli.scene.urdf import joints_above

    path = joints_above(robot, a) ^ joints_above(robot, b)
    base = robot.default_pose()
    moved = np.zeros(robot.dof, dtype=bool)
    v0 = robot.joint_values(base[None])[0]
    for v in range(robot.dof):
        q = base.copy()
        q[v] += 1.0
        changed = np.flatnonzero(robot.joint_values(q[None])[0] != v0)
        moved[v] = any(int(k) in path for k in changed)
    return moved, np.array(sorted(path), dtype=np.int64)


def prove_pair(motion, a: str, b: str, *, max_boxes: int = MAX_BOXES) -> Proof:
    """Branch and bound for links a and b of `motion` (a `gjkcli.pipeline.motion.Motion`)."""
    from gjkcli.engine.primitive import exact_body, pair_query
    from gjkcli.engine.query import batch

    robot = motion.robot
    links = [c.link for c in robot.collisions]
    elements = [(i, j) for i in range(len(links)) for j in range(len(links))
                if links[i] == a and links[j] == b]
    moving, path = moving_variables(robot, a, b)
    names = tuple(v for v, m in zip(robot.variables, moving) if m)
    lo, hi = robot.lower.copy(), robot.upper.copy()
    base = robot.default_pose()
    lo[~moving] = hi[~moving] = base[~moving]
    # reach of each element from each path joint's axis; the other joints do not count
    R = np.zeros_like(motion.radii)
    R[path] = motion.radii[path]
    # (d, E): travel of every joint per unit of each variable (mimic multipliers included)
    unit = np.abs(robot.joint_values(base[None] + np.eye(robot.dof)) - robot.joint_values(base[None]))
    per_var = unit @ R  # (d, E): reach per unit of variable v, for each element
    boxes_lo, boxes_hi = lo[None], hi[None]
    examined = 0
    while len(boxes_lo):
        if examined >= max_boxes:
            return Proof(a, b, "not proven", examined, names)
        take = min(BATCH, len(boxes_lo))
        blo, bhi = boxes_lo[:take], boxes_hi[:take]
        boxes_lo, boxes_hi = boxes_lo[take:], boxes_hi[take:]
        examined += take
        c = 0.5 * (blo + bhi)
        h = 0.5 * (bhi - blo)
        F = motion.frames(c)
        split = np.zeros(take, dtype=bool)
        share_all = np.zeros((take, robot.dof))
        for ea, eb in elements:
            share = h * (per_var[:, ea] + per_var[:, eb])  # (n, d)
            bound = share.sum(axis=1)
            rows = np.arange(take)
            got = batch(motion.shapes, np.full(take, ea), np.full(take, eb), pose_a=F[rows, ea],
                        pose_b=F[rows, eb], want="distance")
            d = np.where(got.status == _CODE_CLEAR, got.distance_lower, 0.0)
            for k in np.flatnonzero(d <= bound).tolist():
                ma, mb = motion.meshes[ea], motion.meshes[eb]
                if ma is None and mb is None:  # two primitives: each is its own hull
                    if got.status[k] == _CODE_COLLISION:
                        return Proof(a, b, "collides", examined, names, dict(zip(robot.variables, c[k].tolist())))
                    continue
                shapes = motion.shapes.shapes  # a primitive against a mesh: the mesh's triangles
                r = pair_query(exact_body(ma, shapes[ea]), exact_body(mb, shapes[eb]), pose_a=F[k, ea],
                               pose_b=F[k, eb], want="distance")
                if r.status is Status.COLLISION:
                    return Proof(a, b, "collides", examined, names, dict(zip(robot.variables, c[k].tolist())))
                d[k] = r.distance_lower if r.status is Status.CLEAR else 0.0
            undecided = d <= bound
            split |= undecided
            share_all = np.where(undecided[:, None], np.maximum(share_all, share), share_all)
        if not split.any():
            continue
        idx = np.flatnonzero(split)
        axis = np.argmax(share_all[idx], axis=1)
        mid = c[idx, axis]
        lo1, hi1 = blo[idx].copy(), bhi[idx].copy()
        hi1[np.arange(len(idx)), axis] = mid
        lo2, hi2 = blo[idx].copy(), bhi[idx].copy()
        lo2[np.arange(len(idx)), axis] = mid
        boxes_lo = np.concatenate([boxes_lo, lo1, lo2])
        boxes_hi = np.concatenate([boxes_hi, hi1, hi2])
    return Proof(a, b, "proven", examined, names)


def _codes():
    from gjkcli.engine.results import STATUS_CODES

    code = {s: c for c, s in STATUS_CODES.items()}
    return code[Status.CLEAR], code[Status.COLLISION]


_CODE_CLEAR, _CODE_COLLISION = _codes()
