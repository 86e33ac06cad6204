"""Check a plane query's answer from the parts' rings alone, written apart from the engine.

Nothing here reads gjkcli.engine._plane: the parts' points, in NumPy, brute force, so that a wrong
support map, a wrong hierarchy or a wrong GJK cannot vouch for itself (the style of
gjkcli/engine/certify.py).

The checks
- line (n, c): max over A's points of n.x <= c + slack, min over B's >= c - slack, and the
  result's distance_lower is no more than the line's gap;
- point p: p lies in A and in B (even-odd ray crossing, or within slack of a boundary);
- edges (a, b, p): A's edge from vertex a and B's edge from vertex b cross, and p is on both;
- distance d: every pair of edges lies at least d apart (all pairs, brute force) and no ring of
  either part lies inside the other's solid area;
- the numbers agree: witnesses on their parts, |point_b - point_a| the distance when apart, a
  depth no more than the overlap along the reported normal (the translation along it that
  separates the parts' hulls, and so the parts).

>>> from gjkcli.engine import plane
>>> a, b = plane.Polygon([[0, 0], [1, 0], [0, 1]]), plane.Polygon([[2, 0], [3, 0], [3, 1]])
>>> verify(a, b, plane.query(a, b))
True
"""
from __future__ import annotations

import numpy as np

from gjkcli.engine.certify import not_finite
from gjkcli.engine.results import DistanceCertificate, PointCertificate, Status
from gjkcli.tolerances import DEFAULT

ROUNDING_REL = 16 * np.finfo(np.float64).eps


def verify(a, b, result, slack: float | None = None) -> bool:
    """True when `result`'s certificate and numbers hold for parts a and b."""
    return check_certificate(a, b, result, slack) is None


def default_slack(a, b) -> float:
    """DEFAULT.verify_rel x pair size, plus the rounding of the pair's coordinates."""
    pts = np.concatenate([*a.rings, *b.rings])
    size = max(_diagonal(np.concatenate(a.rings)), _diagonal(np.concatenate(b.rings)))
    return DEFAULT.verify_rel * size + ROUNDING_REL * float(np.abs(pts).max())


def _diagonal(v: np.ndarray) -> float:
    return float(np.linalg.norm(v.max(axis=0) - v.min(axis=0)))


def segments(part) -> np.ndarray:
    """(E, 2, 2): every edge of every ring, its two ends."""
    return np.concatenate([np.stack([r, np.roll(r, -1, axis=0)], axis=1) for r in part.rings])


def even_odd(part, points) -> np.ndarray:
    """(m,) bool: each point crosses an odd number of the part's edges on its ray towards +x."""
    p = np.atleast_2d(np.asarray(points, dtype=np.float64))
    s = segments(part)
    y0, y1 = s[:, 0, 1], s[:, 1, 1]
    x0, x1 = s[:, 0, 0], s[:, 1, 0]
    straddle = (y0[None, :] > p[:, 1:2]) != (y1[None, :] > p[:, 1:2])
    with np.errstate(divide="ignore", invalid="ignore"):
        cx = x0[None, :] + (p[:, 1:2] - y0[None, :]) / (y1 - y0)[None, :] * (x1 - x0)[None, :]
    return (np.sum(straddle & (cx > p[:, 0:1]), axis=1) % 2) == 1


def boundary_distance(part, points) -> np.ndarray:
    """(m,) distance from each point to the part's boundary."""
    p = np.atleast_2d(np.asarray(points, dtype=np.float64))
    s = segments(part)
    a, e = s[:, 0], s[:, 1] - s[:, 0]
    ee = np.einsum("ij,ij->i", e, e)
    d = p[:, None, :] - a[None, :, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        f = np.clip(np.where(ee > 0, np.einsum("mij,ij->mi", d, e) / ee, 0.0), 0.0, 1.0)
    q = a[None] + f[..., None] * e[None]
    return np.sqrt(((p[:, None, :] - q) ** 2).sum(axis=2)).min(axis=1)


def distance_to_part(part, points) -> np.ndarray:
    """(m,) 0 inside the solid area, else the distance to the boundary."""
    return np.where(even_odd(part, points), 0.0, boundary_distance(part, points))


def edge_distance(a, b) -> float:
    """Least distance between the parts' boundaries, over every pair of edges (0 if any cross)."""
    sa, sb = segments(a), segments(b)
    best = np.inf
    for lo in range(0, len(sa), 256):
        chunk = sa[lo:lo + 256]
        best = min(best, float(_segment_pairs(chunk[:, None], sb[None, :]).min()))
    return best


def _cross(u, v):
    return u[..., 0] * v[..., 1] - u[..., 1] * v[..., 0]


def _segment_pairs(s, t) -> np.ndarray:
    """Distance of segments s and t (broadcast (..., 2, 2))."""
    p0, p1, q0, q1 = s[..., 0, :], s[..., 1, :], t[..., 0, :], t[..., 1, :]
    o1, o2 = _cross(p1 - p0, q0 - p0), _cross(p1 - p0, q1 - p0)
    o3, o4 = _cross(q1 - q0, p0 - q0), _cross(q1 - q0, p1 - q0)
    crossing = (o1 * o2 < 0) & (o3 * o4 < 0)

    def point_seg(x, a, b):
        e = b - a
        ee = (e * e).sum(-1)
        with np.errstate(divide="ignore", invalid="ignore"):
            f = np.clip(np.where(ee > 0, ((x - a) * e).sum(-1) / ee, 0.0), 0.0, 1.0)
        return np.sqrt(((x - a - f[..., None] * e) ** 2).sum(-1))

    d = np.minimum(np.minimum(point_seg(p0, q0, q1), point_seg(p1, q0, q1)),
                   np.minimum(point_seg(q0, p0, p1), point_seg(q1, p0, p1)))
    return np.where(crossing, 0.0, d)


def extent(part, n) -> float:
    """max over the part's points of n . x."""
    return float(max(float((r @ n).max()) for r in part.rings))


def check_certificate(a, b, result, slack: float | None = None) -> str | None:
    """Why `result` does not hold for parts a and b, in one line; None when it holds.

    a, b : plane.Polygon or plane.Region; result : plane.PlaneResult
    """
    if slack is None:
        slack = default_slack(a, b)
    if not_finite(result):
        return "the result holds NaN or infinite numbers"
    status = Status(result.status)
    cert = result.certificate
    kind = getattr(cert, "kind", None)
    if status is Status.CLEAR and kind not in ("line", "distance"):
        return f"a clear verdict needs a separating line or a distance bound, got {cert!r}"
    if status is Status.COLLISION and kind not in ("point", "edges"):
        return f"a collision verdict needs a common point or crossing edges, got {cert!r}"

    for name, part, point in (("A", a, result.point_a), ("B", b, result.point_b)):
        off = float(distance_to_part(part, point)[0])
        if off > slack:
            return f"witness point_{name.lower()} {point.tolist()} lies {off:.3g} outside {name} (slack {slack:.3g})"

    if kind == "line":
        n = np.asarray(cert.normal, dtype=np.float64)
        if not abs(np.linalg.norm(n) - 1.0) <= 1e-9:
            return f"line normal is not unit: |n| = {np.linalg.norm(n)!r}"
        top_a, bottom_b = extent(a, n), -extent(b, -n)
        if top_a > cert.offset + slack:
            return f"A reaches n.x = {top_a!r} beyond the line's offset {cert.offset!r}"
        if bottom_b < cert.offset - slack:
            return f"B reaches n.x = {bottom_b!r} below the line's offset {cert.offset!r}"
        if result.distance_lower > bottom_b - top_a + slack:
            return f"distance_lower {result.distance_lower!r} exceeds the line's gap {bottom_b - top_a!r}"
    elif isinstance(cert, PointCertificate):
        for name, part in (("A", a), ("B", b)):
            off = float(distance_to_part(part, cert.point)[0])
            if off > slack:
                return f"certificate point {cert.point.tolist()} lies {off:.3g} outside {name}"
    elif kind == "edges":
        va, vb = np.concatenate(a.rings), np.concatenate(b.rings)
        ea, eb = _edge(a, cert.a), _edge(b, cert.b)
        if ea is None or eb is None:
            return f"certificate edges {cert.a}, {cert.b} are not edges of A ({len(va)}) and B ({len(vb)})"
        p0, p1, q0, q1 = ea[0], ea[1], eb[0], eb[1]
        if not (_cross(p1 - p0, q0 - p0) * _cross(p1 - p0, q1 - p0) < 0
                and _cross(q1 - q0, p0 - q0) * _cross(q1 - q0, p1 - q0) < 0):
            return f"edges {cert.a} of A and {cert.b} of B do not cross"
        pt = np.asarray(cert.point)[None]
        if _segment_pairs(np.stack([pt, pt], 1), ea[None])[0] > slack or \
                _segment_pairs(np.stack([pt, pt], 1), eb[None])[0] > slack:
            return f"certificate point {cert.point.tolist()} is not on both edges"
    elif isinstance(cert, DistanceCertificate):
        d = edge_distance(a, b)
        if d < cert.lower - slack:
            return f"edges lie {d!r} apart, less than the bound {cert.lower!r}"
        # a touching pair may overlap within its band: a ring inside the other by more than that
        # contradicts the bound
        allowed = slack + (result.tolerance if status is Status.TOUCHING else 0.0)
        for name, part, other in (("A", a, b), ("B", b, a)):
            firsts = np.array([r[0] for r in part.rings])
            inside = even_odd(other, firsts) & (boundary_distance(other, firsts) > allowed)
            if inside.any():
                return f"a ring of {name} lies inside the other part: the parts overlap"

    if status is Status.CLEAR and not result.distance_lower > 0.0:
        return f"a clear verdict has distance_lower {result.distance_lower!r}, not > 0"
    if result.depth is None:
        if result.distance_lower > result.distance + slack:
            return f"distance_lower {result.distance_lower!r} exceeds the distance {result.distance!r}"
        span = float(np.linalg.norm(np.asarray(result.point_b) - np.asarray(result.point_a)))
        if status is not Status.COLLISION and abs(span - result.distance) > slack:
            return f"|point_b - point_a| = {span!r} but the distance is {result.distance!r}"
    else:
        n = np.asarray(result.normal, dtype=np.float64)
        if not abs(np.linalg.norm(n) - 1.0) <= 1e-9:
            return f"normal is not unit: |n| = {np.linalg.norm(n)!r}"
        along = extent(a, n) + extent(b, -n)
        if result.depth > along + slack:
            return f"depth {result.depth!r} exceeds the overlap {along!r} along the reported normal"
        if result.depth < -slack:
            return f"negative depth {result.depth!r}"
    return None


def _edge(part, k: int):
    """(2, 2): the ends of the edge starting at row k of the part's concatenated rings."""
    start = 0
    for r in part.rings:
        if start <= k < start + len(r):
            j = k - start
            return np.array([r[j], r[(j + 1) % len(r)]])
        start += len(r)
    return None
