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


def not_finite(result) -> bool:
    """Whether a result (3D or 2D) holds a NaN or an infinity among its numbers."""
    values = [result.distance, result.distance_lower, *result.normal, *result.point_a, *result.point_b]
    if result.depth is not None:
        values.append(result.depth)
    return not np.all(np.isfinite(values))


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
    if not_finite(result):
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


# -- certificates of parts (their triangles, not their hulls) ------------------------------------
#
# A verdict on two parts that are not convex is certified against the parts' triangles. The checks
# below read nothing of the engine (gjkcli/engine/_mesh.pyx, gjkcli/engine/exact.py, the C core):
# winding numbers, point-triangle and triangle-triangle distances and the crossing test are
# written here again, in NumPy, by brute force over every triangle (pairs of triangles whose
# bounding boxes are farther apart than what is to be shown are skipped: a box gap is a lower
# bound of the distance of what it holds).

# Elements (points x triangles, or triangle pairs) handled per NumPy block: bounds the memory of a
# check to some tens of megabytes whatever the mesh.
PART_BLOCK = 1 << 17
# verify_part_certificate refuses a distance certificate of parts with more triangle pairs than
# this (4,000 x 4,000 triangles). A pair costs about 8 microseconds: two minutes at worst, when no
# pair's boxes are far enough apart to skip it; seconds for parts that are not nested.
MAX_TRIANGLE_PAIRS = 16_000_000


def part_slack(vertices_a, vertices_b) -> float:
    """Model units a part certificate may miss by: DEFAULT.verify_rel x the pair size (the larger
    bounding-box diagonal) plus the rounding of the largest world coordinate (ROUNDING_REL)."""
    va = np.asarray(vertices_a, dtype=np.float64).reshape(-1, 3)
    vb = np.asarray(vertices_b, dtype=np.float64).reshape(-1, 3)
    size = max(_diagonal(va), _diagonal(vb))
    reach = float(np.max(np.abs(np.concatenate([va, vb])))) if len(va) + len(vb) else 0.0
    return DEFAULT.verify_rel * size + ROUNDING_REL * reach


def _diagonal(v: np.ndarray) -> float:
    return float(np.linalg.norm(v.max(axis=0) - v.min(axis=0))) if len(v) else 0.0


def _triangles(vertices, faces) -> np.ndarray:
    v = np.asarray(vertices, dtype=np.float64).reshape(-1, 3)
    f = np.asarray(faces, dtype=np.int64).reshape(-1, 3)
    return v[f]


def _dot(x, y):
    return np.einsum("...i,...i->...", x, y)


def winding_number(vertices, faces, points) -> np.ndarray:
    """Generalized winding number of each point with respect to the triangles.

    The sum over the triangles of their signed solid angle seen from the point, over 4 pi; the
    solid angle of corners a, b, c relative to the point is 2 atan2(a.(b x c), |a||b||c| +
    (a.b)|c| + (b.c)|a| + (c.a)|b|) (Van Oosterom and Strackee 1983). For a closed, outward
    oriented surface: 1 inside and 0 outside (-1 inside an inside-out one), to rounding; on the
    surface 0, 1/2 or 1 as the rounding falls (a triangle seen edge-on from a point on it counts
    +-2 pi), so a point there is judged by its distance to the surface, not by this.

    vertices (n, 3), faces (m, 3) int, points (k, 3) or (3,). Returns (k,) float64.
    """
    tri = _triangles(vertices, faces)
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 3)
    out = np.zeros(len(pts))
    if len(tri) == 0 or len(pts) == 0:
        return out
    step = max(1, PART_BLOCK // len(tri))
    for i in range(0, len(pts), step):
        p = pts[i:i + step, None, :]
        total = np.zeros(len(p))
        for j in range(0, len(tri), PART_BLOCK):
            t = tri[j:j + PART_BLOCK]
            a, b, c = t[None, :, 0] - p, t[None, :, 1] - p, t[None, :, 2] - p
            la, lb, lc = (np.sqrt(_dot(x, x)) for x in (a, b, c))
            num = _dot(a, np.cross(b, c))
            den = la * lb * lc + _dot(a, b) * lc + _dot(b, c) * la + _dot(c, a) * lb
            total += np.sum(2.0 * np.arctan2(num, den), axis=1)
        out[i:i + step] = total / (4.0 * np.pi)
    return out


def closest_points_on_triangles(p, a, b, c) -> np.ndarray:
    """Closest point of triangle abc to p, elementwise over broadcast (..., 3) arrays.

    The Voronoi regions of the corners, then the edges, then the face (Ericson 2005, section
    5.1.5), each region by its barycentric sign tests, in NumPy. A triangle without area (the
    face region's denominator is 0) answers the nearest point of its three edges.
    """
    p, a, b, c = (np.asarray(x, dtype=np.float64) for x in (p, a, b, c))
    p, a, b, c = np.broadcast_arrays(p, a, b, c)
    ab, ac = b - a, c - a
    d1, d2 = _dot(ab, p - a), _dot(ac, p - a)
    d3, d4 = _dot(ab, p - b), _dot(ac, p - b)
    d5, d6 = _dot(ab, p - c), _dot(ac, p - c)
    va, vb, vc = d3 * d6 - d5 * d4, d5 * d2 - d1 * d6, d1 * d4 - d3 * d2
    with np.errstate(divide="ignore", invalid="ignore"):
        t_ab = d1 / (d1 - d3)
        t_ac = d2 / (d2 - d6)
        t_bc = (d4 - d3) / ((d4 - d3) + (d5 - d6))
        area = va + vb + vc
        u, w = vb / area, vc / area
    in_a = (d1 <= 0) & (d2 <= 0)
    in_b = (d3 >= 0) & (d4 <= d3)
    in_ab = (vc <= 0) & (d1 >= 0) & (d3 <= 0)
    in_c = (d6 >= 0) & (d5 <= d6)
    in_ac = (vb <= 0) & (d2 >= 0) & (d6 <= 0)
    in_bc = (va <= 0) & (d4 - d3 >= 0) & (d5 - d6 >= 0)
    face = a + ab * u[..., None] + ac * w[..., None]
    out = np.select(
        [x[..., None] for x in (in_a, in_b, in_ab, in_c, in_ac, in_bc)],
        [a, b, a + t_ab[..., None] * ab, c, a + t_ac[..., None] * ac, b + t_bc[..., None] * (c - b)],
        default=face)
    bad = ~np.all(np.isfinite(out), axis=-1)
    if np.any(bad):  # no area: the nearest point of the three edges
        edges = [_closest_on_segments(p[bad], x[bad], y[bad]) for x, y in ((a, b), (b, c), (c, a))]
        gaps = np.stack([_dot(e - p[bad], e - p[bad]) for e in edges])
        out[bad] = np.choose(np.argmin(gaps, axis=0)[:, None], edges)
    return out


def _closest_on_segments(p, a, b) -> np.ndarray:
    ab = b - a
    L = _dot(ab, ab)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(L > 0, _dot(p - a, ab) / np.where(L > 0, L, 1.0), 0.0)
    return a + np.clip(t, 0.0, 1.0)[..., None] * ab


def point_mesh_distance(vertices, faces, points) -> np.ndarray:
    """Distance of each point to the nearest of the triangles (brute force). (k,) float64."""
    tri = _triangles(vertices, faces)
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 3)
    out = np.full(len(pts), np.inf)
    if len(tri) == 0:
        return out
    step = max(1, PART_BLOCK // len(tri))
    for i in range(0, len(pts), step):
        p = pts[i:i + step, None, :]
        q = closest_points_on_triangles(p, tri[None, :, 0], tri[None, :, 1], tri[None, :, 2])
        out[i:i + step] = np.sqrt(np.min(_dot(q - p, q - p), axis=1))
    return out


def _segment_segment_distance2(p1, q1, p2, q2) -> np.ndarray:
    """Squared distance of segments p1q1 and p2q2, elementwise over (..., 3) arrays: the closest
    parameters of the two lines, clamped to the segments, the other recomputed and clamped
    (Ericson 2005, section 5.1.9); a segment of length 0 is a point."""
    d1, d2, r = q1 - p1, q2 - p2, p1 - p2
    a, e, f = _dot(d1, d1), _dot(d2, d2), _dot(d2, r)
    c, b = _dot(d1, r), _dot(d1, d2)
    denom = a * e - b * b
    safe_a, safe_e = np.where(a > 0, a, 1.0), np.where(e > 0, e, 1.0)
    s0 = np.where(denom > 0, np.clip((b * f - c * e) / np.where(denom > 0, denom, 1.0), 0.0, 1.0), 0.0)
    t0 = (b * s0 + f) / safe_e
    s1 = np.where(t0 < 0.0, np.clip(-c / safe_a, 0.0, 1.0),
                  np.where(t0 > 1.0, np.clip((b - c) / safe_a, 0.0, 1.0), s0))
    both = (a > 0) & (e > 0)
    s = np.where(both, s1, np.where(a > 0, np.clip(-c / safe_a, 0.0, 1.0), 0.0))
    t = np.where(both, np.clip(t0, 0.0, 1.0), np.where(e > 0, np.clip(f / safe_e, 0.0, 1.0), 0.0))
    x = p1 + s[..., None] * d1 - (p2 + t[..., None] * d2)
    return _dot(x, x)


def _segment_pierces(p, q, a, b, c) -> np.ndarray:
    """Whether segment pq crosses the plane of triangle abc at a point of the triangle, elementwise
    (a segment lying in the plane answers False: the distances of corners and edges cover it)."""
    n = np.cross(b - a, c - a)
    sp, sq = _dot(n, p - a), _dot(n, q - a)
    cuts = (sp * sq <= 0) & (sp != sq)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(cuts, sp / np.where(cuts, sp - sq, 1.0), 0.0)
    x = p + t[..., None] * (q - p)
    inside = ((_dot(np.cross(b - a, x - a), n) >= 0) & (_dot(np.cross(c - b, x - b), n) >= 0)
              & (_dot(np.cross(a - c, x - c), n) >= 0))
    return cuts & inside


def triangle_pair_distance(t1, t2) -> np.ndarray:
    """Distance between triangles, elementwise over (..., 3, 3) arrays of corners: 0 when an edge
    of one meets the other, else the least of the six corner-to-triangle and nine edge-to-edge
    distances (which is the distance of two triangles that do not meet)."""
    t1, t2 = np.broadcast_arrays(np.asarray(t1, dtype=np.float64), np.asarray(t2, dtype=np.float64))
    best = np.full(t1.shape[:-2], np.inf)
    meet = np.zeros(t1.shape[:-2], dtype=bool)
    for i in range(3):
        for u, v in ((t1, t2), (t2, t1)):
            q = closest_points_on_triangles(u[..., i, :], v[..., 0, :], v[..., 1, :], v[..., 2, :])
            best = np.minimum(best, _dot(q - u[..., i, :], q - u[..., i, :]))
            meet |= _segment_pierces(u[..., i, :], u[..., (i + 1) % 3, :], v[..., 0, :], v[..., 1, :], v[..., 2, :])
        for j in range(3):
            best = np.minimum(best, _segment_segment_distance2(t1[..., i, :], t1[..., (i + 1) % 3, :],
                                                              t2[..., j, :], t2[..., (j + 1) % 3, :]))
    return np.where(meet, 0.0, np.sqrt(best))


def triangles_cross(t1, t2, tol: float) -> bool:
    """Whether triangles t1 and t2 (3 x 3 corners) cross: cut through each other by more than
    `tol`, not merely touch.

    They cross when each reaches farther than `tol` to both sides of the other's plane and the two
    cuts (the segment where each meets the other's plane, both on the line common to the planes)
    overlap along that line by more than `tol`. Coplanar triangles, a corner or an edge resting on
    a face, faces meeting along an edge, and anything that meets only within `tol` touch: False.
    Triangles without area cross nothing.
    """
    P = np.asarray(t1, dtype=np.float64).reshape(3, 3)
    Q = np.asarray(t2, dtype=np.float64).reshape(3, 3)
    tol = max(float(tol), 0.0)
    n1, n2 = np.cross(P[1] - P[0], P[2] - P[0]), np.cross(Q[1] - Q[0], Q[2] - Q[0])
    l1, l2 = float(np.linalg.norm(n1)), float(np.linalg.norm(n2))
    if not (l1 > 0.0 and l2 > 0.0 and np.isfinite(l1) and np.isfinite(l2)):
        return False
    n1, n2 = n1 / l1, n2 / l2
    dp = (P - Q[0]) @ n2  # t1's corners above t2's plane
    dq = (Q - P[0]) @ n1
    for d in (dp, dq):
        if not (d.max() > tol and d.min() < -tol):
            return False
    line = np.cross(n1, n2)
    ll = float(np.linalg.norm(line))
    if not ll > 0.0:
        return False
    line /= ll

    def cut(T, d):
        """Where triangle T meets the plane its signed distances d are measured from, along line."""
        at = []
        for i in range(3):
            j = (i + 1) % 3
            if d[i] == 0.0:
                at.append(T[i] @ line)
            if (d[i] < 0.0 < d[j]) or (d[j] < 0.0 < d[i]):
                x = T[i] + (d[i] / (d[i] - d[j])) * (T[j] - T[i])
                at.append(x @ line)
        return min(at), max(at)

    lo1, hi1 = cut(P, dp)
    lo2, hi2 = cut(Q, dq)
    return bool(min(hi1, hi2) - max(lo1, lo2) > tol)


def _closed(vertices, faces) -> bool:
    """Every edge joins exactly two faces that run it in opposite directions (corners equal by
    their coordinates, so a triangle soup from an STL counts)."""
    v = np.asarray(vertices, dtype=np.float64).reshape(-1, 3)
    f = np.asarray(faces, dtype=np.int64).reshape(-1, 3)
    if len(f) == 0:
        return False
    _, ids = np.unique(v, axis=0, return_inverse=True)
    f = ids.reshape(-1)[f]
    f = f[(f[:, 0] != f[:, 1]) & (f[:, 1] != f[:, 2]) & (f[:, 2] != f[:, 0])]
    if len(f) == 0:
        return False
    directed = np.concatenate([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]])
    forward, count = np.unique(directed, axis=0, return_counts=True)
    if np.any(count != 1):
        return False
    backward = np.unique(directed[:, ::-1], axis=0)
    return len(backward) == len(forward) and bool(np.all(backward == forward))


def _mesh_distance_at_least(tri_a, tri_b, bound: float) -> tuple[float, tuple[int, int] | None]:
    """(least triangle-pair distance found below `bound`, or inf; its pair). Pairs whose boxes are
    `bound` or more apart are not computed: they are at least that far apart."""
    lo_a, hi_a = tri_a.min(axis=1), tri_a.max(axis=1)
    lo_b, hi_b = tri_b.min(axis=1), tri_b.max(axis=1)
    best, where = np.inf, None
    step = max(1, PART_BLOCK // len(tri_b))
    for i in range(0, len(tri_a), step):
        below, above = lo_b[None] - hi_a[i:i + step, None, :], lo_a[i:i + step, None, :] - hi_b[None]
        gap = np.maximum(np.maximum(below, above), 0.0)
        near = np.argwhere(np.sqrt(_dot(gap, gap)) < min(bound, best))
        for k in range(0, len(near), PART_BLOCK // 4):
            ia, ib = near[k:k + PART_BLOCK // 4, 0] + i, near[k:k + PART_BLOCK // 4, 1]
            d = triangle_pair_distance(tri_a[ia], tri_b[ib])
            m = int(np.argmin(d))
            if d[m] < best:
                best, where = float(d[m]), (int(ia[m]), int(ib[m]))
    return best, where


def verify_part_certificate(vertices_a, faces_a, vertices_b, faces_b, certificate: dict,
                            tolerance: float) -> str | None:
    """Why `certificate` does not hold for parts A and B (their triangles), in one line; None
    when it holds.

    certificate : the JSON form a report writes (extra keys such as "of" are ignored):
        {"kind": "plane", "normal", "offset"}: every corner of A has n.x <= offset and of B >=
            offset (parts lie in their hulls, so the plane separates the parts);
        {"kind": "point", "point"}: the point lies in both parts: inside (|winding number| >
            DEFAULT.winding_inside) or within `tolerance` of the surface, for each;
        {"kind": "triangles", "a", "b", "point"}: triangle a of A and triangle b of B cross
            (`triangles_cross` with `tolerance`) and the point lies within `tolerance` of both;
        {"kind": "distance", "lower"}: the parts' surfaces are at least `lower` apart (brute force
            over the triangle pairs; more than MAX_TRIANGLE_PAIRS are refused) and, for each part
            that is a closed surface, no corner of the other lies inside it;
        {"kind": "shift", "shift", "upper"} (touching): |shift| <= upper <= `tolerance`, and with
            B moved by shift no triangle pair crosses (`triangles_cross` with the slack) and, for
            each part that is a closed surface, no corner of the other, nor a point just inside
            one of its faces, lies inside it (points within the slack of the surface aside): the
            volumes are then apart, so the penetration depth is at most `upper`.
    tolerance : the touching band of the pair, model units.
    Every test may miss by `part_slack` (the rounding of the coordinates).
    """
    tri_a, tri_b = _triangles(vertices_a, faces_a), _triangles(vertices_b, faces_b)
    if len(tri_a) == 0 or len(tri_b) == 0:
        return "a part without triangles"
    if not (np.all(np.isfinite(tri_a)) and np.all(np.isfinite(tri_b))):
        return "a part has coordinates that are not finite"
    if not isinstance(certificate, dict):
        return f"no certificate: {certificate!r}"
    slack = part_slack(tri_a.reshape(-1, 3), tri_b.reshape(-1, 3))
    tol = float(tolerance)
    if not tol >= 0.0:
        return f"tolerance {tolerance!r} is not a length >= 0"
    kind = certificate.get("kind")
    try:
        if kind == "plane":
            return _verify_plane(tri_a, tri_b, certificate, slack)
        if kind == "point":
            return _verify_point(tri_a, tri_b, certificate, tol, slack)
        if kind == "triangles":
            return _verify_triangles(tri_a, tri_b, certificate, tol, slack)
        if kind == "distance":
            return _verify_distance(tri_a, tri_b, certificate, slack)
        if kind == "shift":
            return _verify_shift(tri_a, tri_b, certificate, tol, slack)
    except (KeyError, TypeError, ValueError) as exc:
        return f"malformed {kind} certificate: {exc}"
    return f"unknown certificate kind {kind!r}"


def _vector(value, name: str) -> np.ndarray:
    if value is None:
        raise ValueError(f"{name} is missing")
    v = np.asarray(value, dtype=np.float64)
    if v.shape != (3,) or not np.all(np.isfinite(v)):
        raise ValueError(f"{name} is not 3 finite numbers: {value!r}")
    return v


def _number(value, name: str) -> float:
    if value is None or isinstance(value, bool):
        raise ValueError(f"{name} is not a number: {value!r}")
    x = float(value)
    if not np.isfinite(x):
        raise ValueError(f"{name} is not finite: {value!r}")
    return x


def _verify_plane(tri_a, tri_b, cert, slack) -> str | None:
    n = _vector(cert.get("normal"), "normal")
    c = _number(cert.get("offset"), "offset")
    if not abs(np.linalg.norm(n) - 1.0) <= 1e-9:
        return f"plane normal is not unit: |n| = {np.linalg.norm(n)!r}"
    top_a = float(np.max(tri_a.reshape(-1, 3) @ n))
    bottom_b = float(np.min(tri_b.reshape(-1, 3) @ n))
    if top_a > c + slack:
        return f"a corner of A reaches n.x = {top_a!r}, above the plane offset {c!r} (slack {slack:.3g})"
    if bottom_b < c - slack:
        return f"a corner of B reaches n.x = {bottom_b!r}, below the plane offset {c!r} (slack {slack:.3g})"
    return None


def _in_part(tri, p, tol, slack) -> str | None:
    """None when p is inside the part or within tol of its surface, else how far out it is."""
    faces = np.arange(3 * len(tri)).reshape(-1, 3)
    corners = tri.reshape(-1, 3)
    off = float(point_mesh_distance(corners, faces, p)[0])
    if off <= tol + slack:
        return None
    w = float(winding_number(corners, faces, p)[0])
    if abs(w) > DEFAULT.winding_inside:
        return None
    return f"{off:.6g} from its surface and outside it (winding number {w:.3g}, band {tol:.3g})"


def _verify_point(tri_a, tri_b, cert, tol, slack) -> str | None:
    p = _vector(cert.get("point"), "point")
    for name, tri in (("A", tri_a), ("B", tri_b)):
        why = _in_part(tri, p, tol, slack)
        if why is not None:
            return f"certificate point {p.tolist()} lies {why} of part {name}"
    return None


def _index(value, count: int, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise ValueError(f"triangle {name} is not an index: {value!r}")
    if not 0 <= int(value) < count:
        raise ValueError(f"triangle {name} = {value} is not one of the part's {count} triangles")
    return int(value)


def _verify_triangles(tri_a, tri_b, cert, tol, slack) -> str | None:
    ia = _index(cert.get("a"), len(tri_a), "a")
    ib = _index(cert.get("b"), len(tri_b), "b")
    p = _vector(cert.get("point"), "point")
    if not triangles_cross(tri_a[ia], tri_b[ib], tol):
        return f"triangle {ia} of A and triangle {ib} of B do not cross by more than the band {tol:.3g}"
    for name, t, i in (("A", tri_a, ia), ("B", tri_b, ib)):
        q = closest_points_on_triangles(p, t[i, 0], t[i, 1], t[i, 2])
        off = float(np.linalg.norm(q - p))
        if off > tol + slack:
            return f"certificate point {p.tolist()} lies {off:.6g} from triangle {i} of {name} (band {tol:.3g})"
    return None


def _verify_distance(tri_a, tri_b, cert, slack) -> str | None:
    lower = _number(cert.get("lower"), "lower")
    if not lower > 0.0:
        return f"a distance certificate needs a lower bound > 0, got {lower!r}"
    pairs = len(tri_a) * len(tri_b)
    if pairs > MAX_TRIANGLE_PAIRS:
        return (f"{len(tri_a)} x {len(tri_b)} triangle pairs are more than this brute-force check "
                f"takes ({MAX_TRIANGLE_PAIRS})")
    need = lower - slack
    found, where = _mesh_distance_at_least(tri_a, tri_b, need)
    if found < need:
        return (f"triangle {where[0]} of A and triangle {where[1]} of B are {found!r} apart, less than "
                f"the lower bound {lower!r} (slack {slack:.3g})")
    for name, tri, other_name, other in (("A", tri_a, "B", tri_b), ("B", tri_b, "A", tri_a)):
        faces = np.arange(3 * len(tri)).reshape(-1, 3)
        if not _closed(tri.reshape(-1, 3), faces):
            continue  # only its surface counts
        corners = np.unique(other.reshape(-1, 3), axis=0)
        w = winding_number(tri.reshape(-1, 3), faces, corners)
        inside = np.flatnonzero(np.abs(w) > DEFAULT.winding_inside)
        if len(inside):
            return (f"a corner of {other_name}, {corners[inside[0]].tolist()}, lies inside {name} "
                    f"(winding number {w[inside[0]]:.3g}): the surfaces' distance is no distance of the parts")
    return None


def _verify_shift(tri_a, tri_b, cert, tol, slack) -> str | None:
    shift = _vector(cert.get("shift"), "shift")
    upper = _number(cert.get("upper"), "upper")
    length = float(np.linalg.norm(shift))
    if length > upper + slack:
        return f"the shift is {length!r} long, more than its bound {upper!r}"
    if upper > tol + slack:
        return f"the depth bound {upper!r} exceeds the band {tol!r}"
    pairs = len(tri_a) * len(tri_b)
    if pairs > MAX_TRIANGLE_PAIRS:
        return (f"{len(tri_a)} x {len(tri_b)} triangle pairs are more than this brute-force check "
                f"takes ({MAX_TRIANGLE_PAIRS})")
    moved = tri_b + shift
    lo_a, hi_a = tri_a.min(axis=1), tri_a.max(axis=1)
    lo_b, hi_b = moved.min(axis=1), moved.max(axis=1)
    step = max(1, PART_BLOCK // len(moved))
    for i in range(0, len(tri_a), step):
        meet = np.all(lo_b[None] - hi_a[i:i + step, None, :] <= slack, axis=2) \
            & np.all(lo_a[i:i + step, None, :] - hi_b[None] <= slack, axis=2)
        for ia, ib in np.argwhere(meet).tolist():
            if triangles_cross(tri_a[i + ia], moved[ib], slack):
                return (f"with B moved by {shift.tolist()}, triangle {i + ia} of A still crosses "
                        f"triangle {ib} of B")
    for name, tri, other_name, other in (("A", tri_a, "B", moved), ("B", moved, "A", tri_a)):
        faces = np.arange(3 * len(tri)).reshape(-1, 3)
        if not _closed(tri.reshape(-1, 3), faces):
            continue  # only its surface counts
        points = np.concatenate([np.unique(other.reshape(-1, 3), axis=0), _just_inside(other)])
        off = point_mesh_distance(tri.reshape(-1, 3), faces, points)
        points = points[off > slack]
        w = winding_number(tri.reshape(-1, 3), faces, points)
        inside = np.flatnonzero(np.abs(w) > DEFAULT.winding_inside)
        if len(inside):
            return (f"with B moved by {shift.tolist()}, a point of {other_name}, "
                    f"{points[inside[0]].tolist()}, lies inside {name} (winding number "
                    f"{w[inside[0]]:.3g})")
    return None


def _just_inside(tri) -> np.ndarray:
    """Points just inside a closed part's faces (each centroid moved 1e-3 of the part's size
    against its face's normal, kept where the winding number says inside); none for an open
    part. They decide a part whose corners all lie on the other's surface (two copies of one
    part in one place)."""
    corners = tri.reshape(-1, 3)
    faces = np.arange(len(corners)).reshape(-1, 3)
    if not _closed(corners, faces):
        return np.zeros((0, 3))
    n = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    length = np.linalg.norm(n, axis=1)
    keep = length > 0
    step = 1e-3 * _diagonal(corners)
    points = []
    for sign in (1.0, -1.0):  # the faces' orientation is not assumed: keep the side that is inside
        p = tri[keep].mean(axis=1) - sign * step * n[keep] / length[keep, None]
        points.append(p[np.abs(winding_number(corners, faces, p)) > DEFAULT.winding_inside])
    return np.concatenate(points)


__all__ += ["winding_number", "triangles_cross", "verify_part_certificate", "part_slack",
            "closest_points_on_triangles", "point_mesh_distance", "triangle_pair_distance",
            "PART_BLOCK", "MAX_TRIANGLE_PAIRS"]
