"""Check a query's answer with half-space tests, written apart from the engine.

A `Result` carries a certificate: a plane that every point of A lies below and every point of B
above (the shapes are apart), or a point that lies in both (they intersect). This module re-checks
it from the shapes alone, with nothing of `gjkcli.engine._core`: a hull is read from its world vertices,
a primitive from its own analytic extent written here in NumPy, so that a wrong support map or a
wrong GJK cannot vouch for itself.

The checks
- plane (n, c): max over A of n.x <= c + slack and min over B of n.x >= c - slack;
- point p: p lies in A and in B (half-spaces of the hull's facets from qhull; the distance to the
  hull by non-negative least squares for flat, smaller and inflated hulls; an analytic inside test
  for primitives), each within slack;
- the numbers agree with the certificate: a clear verdict has 0 < distance_lower <= the plane's gap
  and distance_lower <= distance; the witness points lie on their shapes and |point_b - point_a| is
  the distance; a depth is no more than what moving B along the normal needs to separate the two.

>>> from gjkcli.engine.shapes import Shape
>>> from gjkcli.engine.query import query
>>> a, b = Shape.box([1, 1, 1]), Shape.sphere(0.5, center=[2, 0, 0])
>>> verify(a, b, query(a, b))
True
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from gjkcli.engine.results import PlaneCertificate, PointCertificate, Status
from gjkcli.tolerances import DEFAULT

# A world coordinate of magnitude X is known to no better than its rounding, about X * 2.2e-16; a
# certificate placed far from the origin cannot be checked more finely than a few of those.
ROUNDING_REL = 16 * np.finfo(np.float64).eps


def verify(a, b, result, slack: float | None = None) -> bool:
    """True when `result`'s certificate and numbers hold for shapes a and b (see the module doc)."""
    return check_certificate(a, b, result, slack) is None


def check_certificate(a, b, result, slack: float | None = None) -> str | None:
    """Why `result` does not hold for a and b, in one line; None when it holds.

    Parameters
    ----------
    a, b : Shape
    result : Result
        The answer of `query(a, b)` (any `want`).
    slack : float, optional
        Model units every test may miss by; default `default_slack(a, b)`.
    """
    if slack is None:
        slack = default_slack(a, b)
    values = [result.distance, result.distance_lower, *result.normal, *result.point_a, *result.point_b]
    if result.depth is not None:
        values.append(result.depth)
    if not np.all(np.isfinite(values)):
        return "the result holds NaN or infinite numbers"
    status = Status(result.status)
    cert = result.certificate

    if status is Status.CLEAR and not isinstance(cert, PlaneCertificate):
        return f"a clear verdict needs a separating plane, got {cert!r}"
    if status is Status.COLLISION and not isinstance(cert, PointCertificate):
        return f"a collision verdict needs a common point, got {cert!r}"

    for name, shape, point in (("A", a, result.point_a), ("B", b, result.point_b)):
        off = distance_to_shape(shape, point)
        if off > slack:
            return f"witness point_{name.lower()} {point.tolist()} lies {off:.3g} outside {name} (slack {slack:.3g})"

    if isinstance(cert, PlaneCertificate):
        n = np.asarray(cert.normal, dtype=np.float64)
        if not abs(np.linalg.norm(n) - 1.0) <= 1e-9:
            return f"plane normal is not unit: |n| = {np.linalg.norm(n)!r}"
        top_a = float(support_value(a, n))
        bottom_b = -float(support_value(b, -n))
        if top_a > cert.offset + slack:
            return f"A reaches n.x = {top_a!r} above the plane offset {cert.offset!r} (slack {slack:.3g})"
        if bottom_b < cert.offset - slack:
            return f"B reaches n.x = {bottom_b!r} below the plane offset {cert.offset!r} (slack {slack:.3g})"
        gap = bottom_b - top_a
        if result.distance_lower > gap + slack:
            return f"distance_lower {result.distance_lower!r} exceeds the plane's gap {gap!r}"
    if isinstance(cert, PointCertificate):
        p = np.asarray(cert.point, dtype=np.float64)
        for name, shape in (("A", a), ("B", b)):
            off = distance_to_shape(shape, p)
            if off > slack:
                return f"certificate point {p.tolist()} lies {off:.3g} outside {name} (slack {slack:.3g})"

    if status is Status.CLEAR:
        if not result.distance_lower > 0.0:
            return f"a clear verdict has distance_lower {result.distance_lower!r}, not > 0"
    if result.depth is None:
        if result.distance_lower > result.distance + slack:
            return f"distance_lower {result.distance_lower!r} exceeds the distance {result.distance!r}"
        span = float(np.linalg.norm(np.asarray(result.point_b) - np.asarray(result.point_a)))
        if abs(span - result.distance) > slack:
            return f"|point_b - point_a| = {span!r} but the distance is {result.distance!r}"
    else:
        # Moving B by s along n separates the shapes once s >= max_A n.x - min_B n.x: the depth,
        # the least such move over all directions, can be no larger.
        n = np.asarray(result.normal, dtype=np.float64)
        if not abs(np.linalg.norm(n) - 1.0) <= 1e-9:
            return f"normal is not unit: |n| = {np.linalg.norm(n)!r}"
        along = float(support_value(a, n) + support_value(b, -n))
        if result.depth > along + slack:
            return f"depth {result.depth!r} exceeds the overlap {along!r} along the reported normal"
        if result.depth < -slack:
            return f"negative depth {result.depth!r}"
    return None


def default_slack(a, b) -> float:
    """DEFAULT.verify_rel x pair size, plus the rounding of the pair's world coordinates."""
    size = max(a.size, b.size)
    reach = float(np.max(np.abs(np.concatenate([a.bounds, b.bounds]))))
    return DEFAULT.verify_rel * size + ROUNDING_REL * reach


# -- extents ----------------------------------------------------------------------------------


def support_value(shape, directions):
    """max over the shape of d . x, inflation included, for each direction d (any length).

    directions : (3,) or (m, 3) float64. Returns a float, or (m,) float64.
    """
    d = np.asarray(directions, dtype=np.float64)
    D = d.reshape(-1, 3)
    dl = D @ shape.rotation  # the directions in the shape's local frame, R^T d per row
    h = D @ shape.translation + shape.radius * np.linalg.norm(D, axis=1)
    kind = shape.kind
    if kind == "hull":
        h = np.max(D @ shape.world_vertices.T, axis=1) + shape.radius * np.linalg.norm(D, axis=1)
    elif kind == "point":
        pass
    elif kind == "segment":  # ends at +-dims[0] on local z
        h = h + shape.dims[0] * np.abs(dl[:, 2])
    elif kind == "box":  # the corner on d's side
        h = h + np.abs(dl) @ shape.dims
    elif kind in ("cylinder", "cone"):
        r, half = shape.dims[0], shape.dims[1]
        radial = np.hypot(dl[:, 0], dl[:, 1])
        if kind == "cylinder":  # the rim point of the cap on d's side
            h = h + half * np.abs(dl[:, 2]) + r * radial
        else:  # the apex (0, 0, half) or a point of the base rim at z = -half
            h = h + np.maximum(half * dl[:, 2], r * radial - half * dl[:, 2])
    else:
        raise ValueError(f"unknown shape kind {kind!r}")
    return float(h[0]) if d.ndim == 1 else h


def distance_to_shape(shape, point) -> float:
    """Euclidean distance from a world point to the shape (0 inside), inflation included.

    Solid hulls without inflation answer the largest signed distance to their facets' planes (the
    half-space test), which is 0 or less inside and at most the distance outside.
    """
    p = np.asarray(point, dtype=np.float64)
    q = shape.rotation.T @ (p - shape.translation)  # local coordinates
    kind = shape.kind
    if kind == "hull":
        core = _hull_distance(shape, p)
    elif kind == "point":
        core = float(np.linalg.norm(q))
    elif kind == "segment":
        h = shape.dims[0]
        core = float(np.linalg.norm(q - np.array([0.0, 0.0, np.clip(q[2], -h, h)])))
    elif kind == "box":
        core = float(np.linalg.norm(np.maximum(np.abs(q) - shape.dims, 0.0)))
    elif kind == "cylinder":
        r, h = shape.dims[0], shape.dims[1]
        core = float(np.hypot(max(np.hypot(q[0], q[1]) - r, 0.0), max(abs(q[2]) - h, 0.0)))
    elif kind == "cone":
        # The cone is the revolution of the triangle (0, -h), (r, -h), (0, h) in the (radial, z)
        # half-plane; the nearest point of the solid lies in the point's own half-plane.
        r, h = shape.dims[0], shape.dims[1]
        flat = np.array([np.hypot(q[0], q[1]), q[2], 0.0])
        tri = np.array([[0.0, -h, 0.0], [r, -h, 0.0], [0.0, h, 0.0]])
        core = float(np.linalg.norm(closest_on_triangle(flat, *tri) - flat))
    else:
        raise ValueError(f"unknown shape kind {kind!r}")
    return max(core - shape.radius, 0.0)


def _hull_distance(shape, p) -> float:
    if shape.dimension == 3 and shape.radius == 0.0:
        eq = _local_facets(shape.vertices.tobytes())
        if eq is not None:
            q = shape.rotation.T @ (p - shape.translation)  # facets are kept in the local frame
            return float(max(np.max(eq[:, :3] @ q + eq[:, 3]), 0.0))
    return hull_point_distance(shape.world_vertices, p)


@lru_cache(maxsize=256)
def _local_facets(vertex_bytes: bytes):
    """qhull's facet planes (f, 4) of local hull vertices: n.x + c <= 0 inside, n unit."""
    from scipy.spatial import ConvexHull, QhullError

    try:
        return ConvexHull(np.frombuffer(vertex_bytes, dtype=np.float64).reshape(-1, 3)).equations
    except QhullError:
        return None


def hull_point_distance(V, p) -> float:
    """Distance from p to the convex hull of the rows of V (n, 3), any dimension of hull.

    Non-negative least squares for the weights l >= 0 of min |V^T l - p| with a heavily weighted
    row for sum(l) = 1 (Lawson and Hanson); the weights are then normalised, so the answer is the
    distance to an actual point of the hull: never less than the true distance.
    """
    from scipy.optimize import nnls

    V = np.asarray(V, dtype=np.float64)
    p = np.asarray(p, dtype=np.float64)
    centre = V.mean(axis=0)
    scale = max(float(np.max(np.abs(V - centre))), float(np.max(np.abs(p - centre))), 1e-300)
    Vc, pc = (V - centre) / scale, (p - centre) / scale
    weight = 1e4
    M = np.vstack([Vc.T, np.full(len(V), weight)])
    rhs = np.concatenate([pc, [weight]])
    lam, _ = nnls(M, rhs, maxiter=50 * len(V) + 100)
    total = lam.sum()
    if not total > 0.0:
        return float(np.min(np.linalg.norm(V - p, axis=1)))
    best = float(np.linalg.norm(Vc.T @ (lam / total) - pc))
    # The weighted row leaves sum(l) = 1 slightly off; on the support nnls found, solve the affine
    # least squares exactly (l = base + E mu) and keep it when its weights stay non-negative.
    active = np.flatnonzero(lam > 0.0)
    base, E = Vc[active[0]], Vc[active[1:]] - Vc[active[0]]
    if len(E):
        mu = np.linalg.lstsq(E.T, pc - base, rcond=None)[0]
        if np.all(mu >= 0.0) and mu.sum() <= 1.0:
            best = min(best, float(np.linalg.norm(base + E.T @ mu - pc)))
    return best * scale


def closest_on_triangle(p, a, b, c) -> np.ndarray:
    """Closest point to p of the triangle abc (Ericson 2005, section 5.1.5)."""
    ab, ac, ap = b - a, c - a, p - a
    d1, d2 = ab @ ap, ac @ ap
    if d1 <= 0 and d2 <= 0:  # vertex a region
        return a
    bp = p - b
    d3, d4 = ab @ bp, ac @ bp
    if d3 >= 0 and d4 <= d3:  # vertex b region
        return b
    vc = d1 * d4 - d3 * d2
    if vc <= 0 and d1 >= 0 and d3 <= 0:  # edge ab region
        return a + d1 / (d1 - d3) * ab
    cp = p - c
    d5, d6 = ab @ cp, ac @ cp
    if d6 >= 0 and d5 <= d6:  # vertex c region
        return c
    vb = d5 * d2 - d1 * d6
    if vb <= 0 and d2 >= 0 and d6 <= 0:  # edge ac region
        return a + d2 / (d2 - d6) * ac
    va = d3 * d6 - d5 * d4
    if va <= 0 and d4 - d3 >= 0 and d5 - d6 >= 0:  # edge bc region
        return b + (d4 - d3) / ((d4 - d3) + (d5 - d6)) * (c - b)
    denom = 1.0 / (va + vb + vc)  # face region
    return a + ab * (vb * denom) + ac * (vc * denom)


__all__ = ["verify", "check_certificate", "default_slack", "support_value", "distance_to_shape",
           "hull_point_distance", "closest_on_triangle"]
