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

Repeated pairs. An assembly places the same two products in the same relative pose many times
(six bolts in six holes). OpenCASCADE's answers depend only on that relative pose, so an
`ExactMemo` keeps them by `same`, a key naming the two products and their relative pose
(`gjkcli.pipeline.run`'s `_placement_key`, equal only for relative poses equal as floats,
its two products in one order whichever the pair lists first): the distance once, its closest
points stored in the first product's frame and placed again with each pair's pose of it; the
common part's volume and thickness as they are.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gjkcli.engine.results import Result, Status

__all__ = ["Bounded", "ExactMemo", "decide", "bounds_of", "deep_on_hulls"]


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
        self.computed = 0
        self.reused = 0

    def distance(self, refs, unit: str, same=None, pose=None, flip: bool = False):
        """`gjkcli.mesh.cad.exact_distance` of refs = (refs_a, refs_b); with `same` (the pair's
        key) and `pose` (the 4x4 rigid pose of the key's first product) the answer of an earlier
        pair of that key, its points placed with this pose. flip: the key names B's product
        first (A's and B's roles swap, so that B against A meets A against B)."""
        from gjkcli.mesh import cad

        if same is None or pose is None:
            self.computed += 1
            return cad.exact_distance(refs[0], refs[1], unit)
        R, t = pose[:3, :3], pose[:3, 3]
        hit = self._distance.get(same)
        if hit is None:
            self.computed += 1
            first, second = (refs[1], refs[0]) if flip else refs
            d, p1, p2, inside = cad.exact_distance(first, second, unit)
            hit = self._distance[same] = (d, (p1 - t) @ R, (p2 - t) @ R, inside)  # R^T (p - t)
        else:
            self.reused += 1
        d, l1, l2, inside = hit
        p1, p2 = l1 @ R.T + t, l2 @ R.T + t
        return (d, p2, p1, inside) if flip else (d, p1, p2, inside)

    def common(self, refs, unit: str, same=None):
        """`gjkcli.mesh.cad.common_part` of refs = (refs_a, refs_b), once per key `same`."""
        from gjkcli.mesh import cad

        if same is not None and same in self._common:
            self.reused += 1
            return self._common[same]
        self.computed += 1
        got = cad.common_part(refs[0], refs[1], unit)
        if same is not None:
            self._common[same] = got
        return got


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
    import dataclasses

    r = dataclasses.replace(hull, distance=0.0, distance_lower=0.0)
    return Bounded(r, "hull", None, None, "the hulls overlap deeper than the tessellation's error "
                                          "allows; depth from the hulls")


def decide(mesh: Result, e: float, tol: float, clearance: float, refs, unit: str | None, *,
           memo: ExactMemo | None = None, same=None, pose=None, flip: bool = False,
           deepest=None, deep_first: bool = False) -> Bounded:
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
    """
    exact = refs is not None and bool(refs[0]) and bool(refs[1]) and unit is not None
    unknown = deepest is not None and mesh.status is Status.COLLISION and mesh.depth is None
    if unknown and (deep_first or not exact):
        mesh, unknown = deepest(), False
    if not unknown:  # the interval [s' - e, s' + e] first
        lower, upper = bounds_of(float(mesh.signed_distance), e)
        decided = _from_interval(mesh, lower, upper, tol, clearance, None)
        if decided.result.status is not Status.UNDECIDED:
            return decided
    # crossing triangles without their depth: s' <= 0, so the interval cannot clear the pair,
    # and a depth beyond e is what the hulls did not suggest: the exact solids decide
    if exact:
        try:
            return _exact(mesh, tol, clearance, refs, unit, ExactMemo() if memo is None else memo,
                          same, pose, flip, deepest)
        except Exception as exc:  # noqa: BLE001 - OpenCASCADE's failure leaves the interval
            note = f"the exact solids could not be compared ({type(exc).__name__}: {exc})"
    else:
        note = ("no exact solid for one of the parts (a manifest primitive has none; a part moved "
                "after reading loses its own)")
    if unknown:
        mesh = deepest()
    lower, upper = bounds_of(float(mesh.signed_distance), e)
    return _from_interval(mesh, lower, upper, tol, clearance, note)


def _from_interval(mesh: Result, lower, upper, tol, clearance, note) -> Bounded:
    import dataclasses

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


def _exact(mesh: Result, tol: float, clearance: float, refs, unit: str, memo: ExactMemo, same,
           pose, flip: bool, deepest=None) -> Bounded:
    """The pair on its exact solids (OpenCASCADE); `deepest` as in `decide`."""
    import dataclasses

    d, pa, pb, inside = memo.distance(refs, unit, same, pose, flip)
    gap = pb - pa
    length = float(np.linalg.norm(gap))
    normal = gap / length if length > 0 else np.asarray(mesh.normal, dtype=np.float64)
    base = dict(point_a=pa, point_b=pb, normal=normal, certificate=None, iterations=0,
                epa_iterations=0, exit="B-rep distance (BRepExtrema_DistShapeShape)",
                epa_exit=None, tolerance=tol, trace=None)
    if d > tol:
        status = Status.CLEARANCE if d < clearance else Status.CLEAR
        r = dataclasses.replace(mesh, status=status, distance=d, distance_lower=d, depth=None, **base)
        return Bounded(r, "brep", d, d)
    common = memo.common(refs, unit, same)
    thickness = None if common is None else common[1]
    if inside or (thickness is not None and thickness > tol):
        if deepest is not None and mesh.depth is None and mesh.status is Status.COLLISION:
            mesh = deepest()  # the depth the collision reports
        depth = float(mesh.depth) if mesh.depth is not None and mesh.status is Status.COLLISION \
            else (thickness if thickness is not None else 0.0)
        r = dataclasses.replace(mesh, status=Status.COLLISION, distance=0.0, distance_lower=0.0,
                                depth=depth, **{**base, "exit": "B-rep overlap (BRepAlgoAPI_Common)"})
        return Bounded(r, "brep", None, None,
                       "the solids overlap (OpenCASCADE); depth from the triangles",
                       volume=None if common is None else common[0])
    r = dataclasses.replace(mesh, status=Status.TOUCHING, distance=d, distance_lower=d, depth=None,
                            **base)
    return Bounded(r, "brep", d, d)
