"""Parts in the plane: GJK and EPA on convex polygons, exact answers on the edges of parts with
holes, in the compiled core (gjkcli/engine/csrc/plane.c). Not 3D with z = 0: two overlapping flat
parts overlap here by an area, with a depth.

The API, all of it::

    from gjkcli.engine import plane
    shape = plane.Polygon(vertices)       # convex; (n, 2) float64, counter-clockwise or clockwise
    part = plane.Region(rings)            # list of (n_i, 2) rings; even-odd holes; non-convex
    r = plane.query(a, b, tolerance=None, want="verdict", start=None, trace=False)
    #   r.status (the Status of 3D), r.distance, r.depth, r.normal (2,), r.point_a, r.point_b,
    #   r.certificate, r.trace (TraceSteps with 2-vectors), r.exit ...: a PlaneResult
    parts = plane.PartSet([...])          # pack many parts once (hierarchies built in C)
    parts = plane.PartSet.from_arrays(vertices, ring_offsets, part_offsets)  # no object per part
    rs = plane.batch(parts, ia, ib, tolerance=None, want="verdict")   # PlaneBatchResult, arrays
    rs.result(k)                          # the PlaneResult of pair k
    plane.verify(a, b, r)                 # gjkcli.engine.certify_plane: the certificate holds
    i, j = plane.box_pairs(lo, hi)        # every pair of overlapping (n, 2) boxes, by a C sweep

Which engine answers (the mode policy's "hull" and "exact" live in gjkcli.pipeline.policy):

- two convex parts (Polygons, or Regions of one convex ring): GJK, then EPA when they overlap.
  Exact distances and depths (the penetration depth: the shortest translation of B that
  separates them), certificates a separating line (clear) or a common point (overlap).
- any other pair: the parts' edges, exactly. Distance is the least distance between their
  boundaries; a ring of one part inside the other's solid area (even-odd) is a collision with
  no crossing edge, a part in another's hole is clear. `depth` is a lower bound there: the
  largest distance from an examined point of one part (its vertices and edge midpoints) inside
  the other to the other's boundary; any translation that separates the parts moves that point
  at least that far (3D's exact mode reads its depth the same way). Certificates: crossing edges
  or a common point (collision), the distance (clear and touching).
- hull mode for non-convex parts: `Region.hull()` is the convex hull of its outer rings as a
  Polygon; a clear hull verdict stands for the parts (they lie inside their hulls).

`want`: "verdict" (default: depth when overlapping), "distance" (no depth; an overlap reads as a
collision with `depth` None), "intersect" (convex pairs stop at the first separating line beyond
the band). `start` (2,): GJK's first search direction (`--start-direction X,Y`); default from A's
box centre towards B's. `tolerance`: the touching band half-width in model units; default
`touching_rel` (gjkcli/tolerances.py) times the pair size, the larger bounding-box diagonal.

Coordinates are exactly those given; each pair is solved about its own centre, so parts 1e6 from
the origin keep their digits.
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass

import numpy as np

from gjkcli.engine import _enums, _plane
from gjkcli.engine.results import (
    EXIT_NAMES,
    FEATURE_NAMES,
    STATUS_CODES,
    DistanceCertificate,
    PointCertificate,
    Status,
    TraceStep,
)
from gjkcli.tolerances import DEFAULT

__all__ = ["Polygon", "Region", "PartSet", "PlaneResult", "PlaneBatchResult", "LineCertificate",
           "EdgesCertificate", "query", "batch", "support", "inside", "verify", "box_pairs", "WANT"]

WANT = {m.name[len("GJK_WANT_"):].lower(): int(m) for m in _enums.gjk_want}
TRACE_CAPACITY = 1024
_TOL = asdict(DEFAULT)
_CERT = {m.name: int(m) for m in _enums.pl_cert}
_FIELD = {m.name: int(m) for m in _enums.pl_trace_field}


def _points(value, what: str) -> np.ndarray:
    v = np.asarray(value, dtype=np.float64)
    if v.ndim != 2 or v.shape[1] != 2:
        raise ValueError(f"{what} must be an (n, 2) array of points, got shape {v.shape}")
    if not np.all(np.isfinite(v)):
        raise ValueError(f"{what} holds NaN or infinite coordinates")
    if v.size and np.abs(v).max() > DEFAULT.max_coordinate:
        raise ValueError(f"{what} has a coordinate beyond {DEFAULT.max_coordinate:g}")
    return v


def _ring(value, what: str) -> tuple[np.ndarray, np.ndarray]:
    """A closed ring without repeated consecutive points (nor the closing repeat of the first),
    and the input index of each point kept."""
    v = _points(value, what)
    keep = np.ones(len(v), dtype=bool)
    if len(v) > 1:
        keep[1:] = np.any(v[1:] != v[:-1], axis=1)
    idx = np.flatnonzero(keep)
    while len(idx) > 1 and np.all(v[idx[-1]] == v[idx[0]]):
        idx = idx[:-1]
    if len(idx) < 3:
        raise ValueError(f"{what} needs at least 3 distinct points, got {len(idx)}")
    return np.ascontiguousarray(v[idx]), idx.astype(np.int32)


def _area2(v: np.ndarray) -> float:
    """Twice the signed area (shoelace): > 0 counter-clockwise."""
    x, y = v[:, 0], v[:, 1]
    return float(np.dot(x, np.roll(y, -1)) - np.dot(np.roll(x, -1), y))


def _convex_ccw(v: np.ndarray, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """The ring counter-clockwise without collinear corners when it is convex, else None.
    A corner is collinear when its turn is within flat_rel of the ring's extent, squared."""
    if _area2(v) < 0:
        v, idx = v[::-1].copy(), idx[::-1].copy()
    scale = float(np.ptp(v, axis=0).max()) or 1.0
    flat = DEFAULT.flat_rel * scale * scale
    while len(v) >= 3:
        e_in = v - np.roll(v, 1, axis=0)
        e_out = np.roll(v, -1, axis=0) - v
        turn = e_in[:, 0] * e_out[:, 1] - e_in[:, 1] * e_out[:, 0]
        if np.any(turn < -flat):
            return None
        straight = np.abs(turn) <= flat
        if not straight.any():
            # convex by its corners; a ring that winds round twice turns by more than 2 pi
            angle = np.arctan2(turn, np.einsum("ij,ij->i", e_in, e_out)).sum()
            return (v, idx) if abs(angle - 2 * np.pi) < 1e-6 else None
        v, idx = v[~straight], idx[~straight]
    return None


class Polygon:
    """A convex polygon.

    Parameters
    ----------
    vertices : (n, 2) float64
        In order round the boundary, counter-clockwise or clockwise (n >= 3, positive area).
        Collinear corners and repeated points are dropped.

    Attributes
    ----------
    vertices : (k, 2) float64, counter-clockwise, the points GJK reads
    index : (k,) int32, the input row of each vertex (support and trace indices are these)
    """

    convex = True

    def __init__(self, vertices):
        v, idx = _ring(vertices, "polygon vertices")
        got = _convex_ccw(v, idx)
        if got is None:
            raise ValueError("polygon is not convex (or has no area): use plane.Region for a non-convex part")
        self.vertices, self.index = got
        self.rings = (self.vertices,)
        self.ring_index = (self.index,)

    @property
    def bounds(self) -> np.ndarray:
        """(2, 2): min and max corners."""
        return np.array([self.vertices.min(axis=0), self.vertices.max(axis=0)])

    @property
    def size(self) -> float:
        """Bounding-box diagonal."""
        return float(np.linalg.norm(np.ptp(self.vertices, axis=0)))

    def hull(self) -> Polygon:
        return self

    def __repr__(self) -> str:
        return f"Polygon({len(self.vertices)} vertices)"


class Region:
    """A part of the plane: rings (outer contours and holes), its solid area the points inside an
    odd number of them (even-odd), so a ring inside a ring is a hole and a ring inside that hole
    is solid again. Non-convex rings are fine.

    Parameters
    ----------
    rings : sequence of (n_i, 2) float64
        Each ring in order round its boundary, either orientation (n_i >= 3 distinct points).

    Attributes
    ----------
    rings : tuple of (k_i, 2) float64 (a lone convex ring is stored counter-clockwise)
    ring_index : tuple of (k_i,) int32, the input row of each kept point
    convex : bool, one convex ring: GJK and EPA answer its pairs with convex parts
    """

    def __init__(self, rings):
        if isinstance(rings, np.ndarray) and rings.ndim == 2:
            rings = [rings]
        got = [_ring(r, f"ring {k}") for k, r in enumerate(rings)]
        if not got:
            raise ValueError("a region needs at least one ring")
        self.convex = False
        if len(got) == 1:
            cc = _convex_ccw(*got[0])
            if cc is not None:
                got = [cc]
                self.convex = True
        self.rings = tuple(v for v, _ in got)
        self.ring_index = tuple(i for _, i in got)

    @property
    def vertices(self) -> np.ndarray:
        """(V, 2): every ring's points, concatenated (edge certificates index these)."""
        return np.concatenate(self.rings)

    @property
    def bounds(self) -> np.ndarray:
        v = self.vertices
        return np.array([v.min(axis=0), v.max(axis=0)])

    @property
    def size(self) -> float:
        return float(np.linalg.norm(np.ptp(self.vertices, axis=0)))

    def hull(self) -> Polygon:
        """The convex hull of the region's points (qhull), as a Polygon."""
        from scipy.spatial import ConvexHull

        v = self.vertices
        return Polygon(v[ConvexHull(v).vertices])

    def __repr__(self) -> str:
        return f"Region({len(self.rings)} rings, {sum(len(r) for r in self.rings)} points)"


class PartSet:
    """Parts packed for the compiled core: every ring in one array, a segment hierarchy per part
    (built in C in one call). Made once, queried by many batches.

    Attributes
    ----------
    parts : tuple of Polygon or Region (None when made by `from_arrays`)
    box : (P, 4) float64, each part's xmin, ymin, xmax, ymax (for a broad phase)
    convex : (P,) int8, 1 where GJK and EPA answer the part's pairs with other convex parts
    voff : (P + 1,) int64, each part's first row in the packed vertices
    """

    def __init__(self, parts):
        parts = tuple(parts)
        for k, p in enumerate(parts):
            if not isinstance(p, (Polygon, Region)):
                raise TypeError(f"part {k} is a {type(p).__name__}, not a plane.Polygon or plane.Region")
        if not parts:
            raise ValueError("a part set needs at least one part")
        rings = [r for p in parts for r in p.rings]
        counts = np.fromiter((len(r) for r in rings), dtype=np.int64, count=len(rings))
        nring = np.fromiter((len(p.rings) for p in parts), dtype=np.int64, count=len(parts))
        ring = np.zeros(len(rings) + 1, dtype=np.int32)
        np.cumsum(counts, out=ring[1:])
        part_ring = np.zeros(len(parts) + 1, dtype=np.int32)
        np.cumsum(nring, out=part_ring[1:])
        convex = np.fromiter((p.convex for p in parts), dtype=np.int8, count=len(parts))
        self._pack(np.concatenate(rings), ring, part_ring, convex)
        self.parts = parts

    @classmethod
    def from_arrays(cls, vertices, ring_offsets, part_offsets) -> PartSet:
        """Many parts from packed arrays, without a Python object per part (a nest's loader).

        Parameters
        ----------
        vertices : (V, 2) float64, every ring's points, ring after ring, part after part
        ring_offsets : (R + 1,) int, ring r is vertices[ring_offsets[r]:ring_offsets[r + 1]],
            at least 3 points each (a repeated point is a zero-length edge, harmless)
        part_offsets : (P + 1,) int, part p is rings part_offsets[p]..part_offsets[p + 1]

        A part of one ring whose corners all turn one way is convex (GJK and EPA answer its pairs
        with other convex parts), in either orientation.
        """
        v = _points(vertices, "vertices")
        ring = np.asarray(ring_offsets, dtype=np.int64)
        part_ring = np.asarray(part_offsets, dtype=np.int64)
        if len(v) >= 2**31 - 1:
            raise ValueError("too many vertices for one part set (2**31)")
        if ring.ndim != 1 or len(ring) < 2 or ring[0] != 0 or ring[-1] != len(v) or np.any(np.diff(ring) < 3):
            raise ValueError("ring_offsets must rise from 0 to len(vertices) by at least 3 points a ring")
        if (part_ring.ndim != 1 or len(part_ring) < 2 or part_ring[0] != 0 or part_ring[-1] != len(ring) - 1
                or np.any(np.diff(part_ring) < 1)):
            raise ValueError("part_offsets must rise from 0 to the ring count by at least 1 ring a part")
        out = cls.__new__(cls)
        ring32, part32 = ring.astype(np.int32), part_ring.astype(np.int32)
        v = np.ascontiguousarray(v)
        out._pack(v, ring32, part32, _plane.classify(v, ring32, part32, DEFAULT.flat_rel))
        out.parts = None
        return out

    def _pack(self, v, ring, part_ring, convex):
        self.v = np.ascontiguousarray(v)
        self.ring = ring
        self.part_ring = part_ring
        self.voff = self.ring[self.part_ring].astype(np.int64)
        self.convex = convex
        nbox, nchild, order, part_node, box = _plane.build(self.v, self.ring, self.part_ring)
        self.box = box
        self._packed = _plane.Packed(self.v, self.ring, self.part_ring, self.convex, box, nbox, nchild,
                                     order, part_node)

    def __len__(self) -> int:
        return len(self.convex)

    @property
    def sizes(self) -> np.ndarray:
        """(P,) bounding-box diagonals."""
        return np.hypot(self.box[:, 2] - self.box[:, 0], self.box[:, 3] - self.box[:, 1])


@dataclass(frozen=True)
class LineCertificate:
    """A separating line: every point x of A has normal . x <= offset, every point of B >= offset.

    normal : (2,) float64, unit, from A towards B
    """

    normal: np.ndarray
    offset: float
    kind: str = "line"

    def as_dict(self) -> dict:
        return {"kind": "line", "normal": [float(x) for x in self.normal], "offset": float(self.offset)}


@dataclass(frozen=True)
class EdgesCertificate:
    """Edge `a` of part A and edge `b` of part B cross beyond the touching band at `point`.
    An edge is named by its first vertex, a row of the part's `vertices` (the next vertex of its
    ring is its other end). point : (2,) float64"""

    a: int
    b: int
    point: np.ndarray
    kind: str = "edges"

    def as_dict(self) -> dict:
        return {"kind": "edges", "a": int(self.a), "b": int(self.b), "point": [float(x) for x in self.point]}


@dataclass(frozen=True)
class PlaneResult:
    """The answer for one pair in the plane (the fields of gjkcli.engine.results.Result, with
    2-vectors).

    status : Status (clear, touching, collision, undecided)
    distance : float, |point_a - point_b| when apart, 0 when the parts overlap
    distance_lower : float, a certified lower bound of the distance
    depth : float or None, penetration depth (see the module doc; None: not asked or apart)
    depth_upper : float or None, an upper bound of the depth (convex pairs; inf on edges)
    normal : (2,) float64, unit, from A towards B
    point_a, point_b : (2,) float64 witness points
    certificate : LineCertificate, PointCertificate, EdgesCertificate or DistanceCertificate
    engine : "gjk" (two convex parts) or "edges"
    iterations, epa_iterations : int
    exit, epa_exit : str, why the loops stopped
    tolerance : float, the touching band used
    trace : tuple of TraceStep (2-vectors; an EPA step's `faces` counts the polygon's edges) or None
    elapsed : float, seconds
    """

    status: Status
    distance: float
    distance_lower: float
    depth: float | None
    depth_upper: float | None
    normal: np.ndarray
    point_a: np.ndarray
    point_b: np.ndarray
    certificate: object
    engine: str
    iterations: int
    epa_iterations: int
    exit: str
    epa_exit: str | None
    tolerance: float
    trace: tuple | None = None
    elapsed: float = 0.0

    @property
    def signed_distance(self) -> float:
        return -self.depth if self.depth is not None else self.distance


# exits of the edge path, in words
EDGE_EXIT = {int(_enums.gjk_exit.GJK_EXIT_ORIGIN_ENCLOSED): "edges cross beyond the band",
             int(_enums.gjk_exit.GJK_EXIT_CONVERGED): "closest edges found"}


@dataclass(frozen=True)
class PlaneBatchResult:
    """Answers for m pairs as arrays.

    status : (m,) int32, codes of gjkcli.engine.results.STATUS_CODES
    distance, distance_lower, depth, depth_upper, tolerance : (m,) float64 (depth NaN where not computed)
    normal, point_a, point_b : (m, 2) float64
    cert_kind : (m,) int32 (0 none, 1 line, 2 point, 3 edges, 4 distance: enum pl_cert)
    line : (m, 3) normal and offset of a line certificate; point : (m, 2); edge_a, edge_b : (m,)
    rows of each part's `vertices` (-1 when none)
    convex : (m,) bool, answered by GJK / EPA
    iterations, epa_iterations, exit, epa_exit : (m,) int32
    """

    status: np.ndarray
    distance: np.ndarray
    distance_lower: np.ndarray
    depth: np.ndarray
    depth_upper: np.ndarray
    tolerance: np.ndarray
    normal: np.ndarray
    point_a: np.ndarray
    point_b: np.ndarray
    cert_kind: np.ndarray
    line: np.ndarray
    point: np.ndarray
    edge_a: np.ndarray
    edge_b: np.ndarray
    convex: np.ndarray
    iterations: np.ndarray
    epa_iterations: np.ndarray
    exit: np.ndarray
    epa_exit: np.ndarray

    def __len__(self) -> int:
        return len(self.status)

    @property
    def statuses(self) -> list[Status]:
        return [STATUS_CODES[int(s)] for s in self.status]

    def results(self, ks, status=None) -> list[PlaneResult]:
        """The PlaneResults of pairs ks, equal to `result(k)` for each k, with each status
        replaced by status[q] (Status values) when given. One NumPy read per field for all of
        them instead of one per field and pair (a nest lists hundreds of pairs)."""
        ks = np.asarray(ks, dtype=np.int64)  # the fancy reads below are this call's own copies,
        kind = self.cert_kind[ks].tolist()      # so each result's rows are views of them
        line, point = self.line[ks], self.point[ks]
        normal, pa, pb = self.normal[ks], self.point_a[ks], self.point_b[ks]
        depth = self.depth[ks]
        gone = np.isnan(depth).tolist()
        depth, upper = depth.tolist(), self.depth_upper[ks].tolist()
        lower = self.distance_lower[ks].tolist()
        edge_a, edge_b = self.edge_a[ks].tolist(), self.edge_b[ks].tolist()
        convex, epa_exit = self.convex[ks].tolist(), self.epa_exit[ks].tolist()
        exits = self.exit[ks].tolist()
        codes = self.status[ks].tolist()
        distance, tol = self.distance[ks].tolist(), self.tolerance[ks].tolist()
        iterations, epa_iterations = self.iterations[ks].tolist(), self.epa_iterations[ks].tolist()
        out = []
        by_value = {st.value: st for st in Status}  # Status(value) without the Enum call
        # each result made as PlaneResult(...) makes it, without its frozen __init__'s
        # object.__setattr__ per field (a nest lists hundreds of pairs)
        new, cls = object.__new__, PlaneResult
        for q in range(len(ks)):
            cert: object = None
            c = kind[q]
            if c == _CERT["PL_CERT_LINE"]:
                cert = LineCertificate(line[q, :2], float(line[q, 2]))
            elif c == _CERT["PL_CERT_POINT"]:
                cert = PointCertificate(point[q])
            elif c == _CERT["PL_CERT_EDGES"]:
                cert = EdgesCertificate(edge_a[q], edge_b[q], point[q])
            elif c == _CERT["PL_CERT_DISTANCE"]:
                cert = DistanceCertificate(lower[q])
            cx, epa = bool(convex[q]), epa_exit[q]
            r = new(cls)
            r.__dict__.update(
                status=STATUS_CODES[codes[q]] if status is None else by_value[status[q]],
                distance=distance[q], distance_lower=lower[q],
                depth=None if gone[q] else depth[q], depth_upper=None if gone[q] else upper[q],
                normal=normal[q], point_a=pa[q], point_b=pb[q], certificate=cert,
                engine="gjk" if cx else "edges", iterations=iterations[q],
                epa_iterations=epa_iterations[q],
                exit=EXIT_NAMES[exits[q]] if cx else EDGE_EXIT[exits[q]],
                epa_exit=(EXIT_NAMES[epa] if cx else "sampled points") if epa else None,
                tolerance=tol[q], trace=None, elapsed=0.0)
            out.append(r)
        return out

    def result(self, k: int, trace: tuple | None = None, elapsed: float = 0.0) -> PlaneResult:
        """Pair k's PlaneResult."""
        kind = int(self.cert_kind[k])
        cert: object = None
        if kind == _CERT["PL_CERT_LINE"]:
            cert = LineCertificate(self.line[k, :2].copy(), float(self.line[k, 2]))
        elif kind == _CERT["PL_CERT_POINT"]:
            cert = PointCertificate(self.point[k].copy())
        elif kind == _CERT["PL_CERT_EDGES"]:
            cert = EdgesCertificate(int(self.edge_a[k]), int(self.edge_b[k]), self.point[k].copy())
        elif kind == _CERT["PL_CERT_DISTANCE"]:
            cert = DistanceCertificate(float(self.distance_lower[k]))
        convex = bool(self.convex[k])
        epa = int(self.epa_exit[k])
        depth = None if np.isnan(self.depth[k]) else float(self.depth[k])
        exit_words = EXIT_NAMES[int(self.exit[k])] if convex else EDGE_EXIT[int(self.exit[k])]
        return PlaneResult(
            status=STATUS_CODES[int(self.status[k])], distance=float(self.distance[k]),
            distance_lower=float(self.distance_lower[k]), depth=depth,
            depth_upper=None if depth is None else float(self.depth_upper[k]),
            normal=self.normal[k].copy(), point_a=self.point_a[k].copy(), point_b=self.point_b[k].copy(),
            certificate=cert, engine="gjk" if convex else "edges", iterations=int(self.iterations[k]),
            epa_iterations=int(self.epa_iterations[k]), exit=exit_words,
            epa_exit=(EXIT_NAMES[epa] if convex else "sampled points") if epa else None,
            tolerance=float(self.tolerance[k]), trace=trace, elapsed=elapsed)


def _want(want: str) -> int:
    code = WANT.get(want)
    if code is None:
        raise ValueError(f"want must be one of {', '.join(WANT)}, got {want!r}")
    return code


def _start(start) -> tuple[float, float] | None:
    if start is None:
        return None
    s = np.asarray(start, dtype=np.float64).reshape(-1)
    if s.shape != (2,) or not np.all(np.isfinite(s)) or not np.any(s != 0):
        raise ValueError(f"start direction must be two finite numbers, not both zero, got {start!r}")
    return float(s[0]), float(s[1])


def _run(parts: PartSet, ia, ib, tolerance, want: str, start, trace_cap: int):
    ia = np.atleast_1d(np.asarray(ia, dtype=np.int32))
    ib = np.atleast_1d(np.asarray(ib, dtype=np.int32))
    code = _want(want)
    tol = None
    if tolerance is not None:
        tol = np.ascontiguousarray(np.broadcast_to(np.asarray(tolerance, dtype=np.float64), ia.shape))
        if not np.all(tol >= 0):
            raise ValueError("tolerance must be >= 0")
    raw, trace = parts._packed.batch(ia, ib, tol, DEFAULT.touching_rel, _TOL, code, _start(start), trace_cap)
    convex = (parts.convex[ia] == 1) & (parts.convex[ib] == 1)
    depth = raw["depth"].copy()
    depth[raw["epa_exit"] == 0] = np.nan
    edge_a = raw["edge_a"] - np.where(raw["edge_a"] >= 0, parts.voff[ia], 0)
    edge_b = raw["edge_b"] - np.where(raw["edge_b"] >= 0, parts.voff[ib], 0)
    out = PlaneBatchResult(
        status=raw["status"], distance=raw["distance"], distance_lower=raw["lower"], depth=depth,
        depth_upper=raw["depth_upper"], tolerance=raw["tol"], normal=raw["normal"], point_a=raw["pa"],
        point_b=raw["pb"], cert_kind=raw["cert_kind"], line=raw["line"], point=raw["point"],
        edge_a=edge_a.astype(np.int32), edge_b=edge_b.astype(np.int32), convex=convex,
        iterations=raw["iterations"], epa_iterations=raw["epa_iterations"], exit=raw["exit"],
        epa_exit=raw["epa_exit"])
    return out, trace


def batch(parts, ia, ib, *, tolerance=None, want: str = "verdict", start=None) -> PlaneBatchResult:
    """Many pairs in one compiled call: no Python work per pair.

    Parameters
    ----------
    parts : PartSet, or a sequence of Polygon and Region (packed on each call: pack once with
        PartSet when batches repeat)
    ia, ib : (m,) int, the two parts of each pair
    tolerance : float or (m,) float64, optional; touching bands in model units
    want, start : as in `query`
    """
    ps = parts if isinstance(parts, PartSet) else PartSet(parts)
    return _run(ps, ia, ib, tolerance, want, start, 0)[0]


def query(a, b, *, tolerance: float | None = None, want: str = "verdict", start=None,
          trace: bool = False) -> PlaneResult:
    """The verdict for one pair of parts (Polygon or Region): see the module doc.

    Examples
    --------
    >>> a = Polygon([[0, 0], [2, 0], [2, 2], [0, 2]])
    >>> b = Polygon([[3, 0], [5, 0], [4, 2]])
    >>> r = query(a, b)
    >>> r.status.value, r.distance, r.point_a.tolist(), r.point_b.tolist()
    ('clear', 1.0, [2.0, 0.0], [3.0, 0.0])
    """
    t0 = time.perf_counter()
    ps = PartSet([a, b])
    res, recs = _run(ps, [0], [1], tolerance, want, start, TRACE_CAPACITY if trace else 0)
    steps = None
    if trace:
        box = ps.box
        centre = 0.25 * np.array([box[0, 0] + box[0, 2] + box[1, 0] + box[1, 2],
                                  box[0, 1] + box[0, 3] + box[1, 1] + box[1, 3]])
        steps = tuple(_trace_step(rec, centre, a, b) for rec in recs)
    return res.result(0, trace=steps, elapsed=time.perf_counter() - t0)


def _trace_step(rec, centre, a, b) -> TraceStep:
    f = _FIELD

    def vec(name, k=0):
        return rec[f[name] + 2 * k: f[name] + 2 * k + 2].copy()

    n_before, n_after = int(rec[f["PT_N_BEFORE"]]), int(rec[f["PT_N_AFTER"]])
    kept = int(rec[f["PT_KEPT"]])
    exit_code = int(rec[f["PT_EXIT"]])
    epa = rec[f["PT_PHASE"]] == 1
    ia, ib = int(rec[f["PT_IA"]]), int(rec[f["PT_IB"]])
    return TraceStep(
        phase="epa" if epa else "gjk",
        iteration=int(rec[f["PT_ITER"]]),
        direction=vec("PT_DIR"),
        index_a=int(a.ring_index[0][ia]) if ia >= 0 else ia,
        index_b=int(b.ring_index[0][ib]) if ib >= 0 else ib,
        steps_a=int(rec[f["PT_STEPS_A"]]),
        steps_b=int(rec[f["PT_STEPS_B"]]),
        point_a=vec("PT_A") + centre,
        point_b=vec("PT_B") + centre,
        w=vec("PT_W"),
        passed=bool(rec[f["PT_PASSED"]]),
        simplex_before=np.array([vec("PT_BEFORE", k) for k in range(n_before)]).reshape(-1, 2),
        simplex_after=np.array([vec("PT_AFTER", k) for k in range(n_after)]).reshape(-1, 2),
        lambdas=rec[f["PT_LAMBDA"]: f["PT_LAMBDA"] + n_after].copy(),
        feature=None if epa else FEATURE_NAMES.get(int(rec[f["PT_FEATURE"]])),
        kept=tuple(bool(kept >> k & 1) for k in range(n_before + 1)) if not epa else (),
        vnorm=float(rec[f["PT_VNORM"]]),
        lower=float(rec[f["PT_LOWER"]]),
        upper=float(rec[f["PT_UPPER"]]),
        exit=EXIT_NAMES[exit_code] if exit_code else None,
        faces=int(rec[f["PT_EDGES"]]),
        support=float(rec[f["PT_SUPPORT"]]),
    )


def support(shape: Polygon, directions, *, warm: bool = True):
    """Support points of a convex polygon for directions (m, 2), hill climbing its ring (warm:
    each climb starts at the last one's vertex). Returns (points (m, 2), input rows (m,), steps (m,))."""
    if not shape.convex:
        raise ValueError("support needs a convex part")
    ps = PartSet([shape])
    pts, idx, steps = ps._packed.support(0, directions, 0 if warm else -1)
    return pts, shape.ring_index[0][idx], steps


def inside(part, points) -> np.ndarray:
    """(m,) bool: even-odd, each point inside the part's solid area."""
    ps = PartSet([part])
    pts = _points(np.atleast_2d(points), "points")
    return np.array([ps._packed.inside(0, float(x), float(y)) for x, y in pts], dtype=bool)


def box_pairs(lo, hi) -> tuple[np.ndarray, np.ndarray]:
    """Every pair of boxes that overlap, boxes closed (sharing an edge or a corner is a pair).

    lo, hi : (n, 2) float64, finite, lo <= hi; the boxes already grown by any margin.
    Returns i, j : (k,) int64, i < j, sorted by i then j.

    One sort along the axis on which the box centres spread the most, then a sweep in C
    (csrc/boxpairs.c) that tests the other axis of every pair overlapping along it.
    """
    lo = np.asarray(lo, dtype=np.float64)
    hi = np.asarray(hi, dtype=np.float64)
    if lo.shape != hi.shape or lo.ndim != 2 or lo.shape[1] != 2:
        raise ValueError(f"boxes must be (n, 2) arrays, got {lo.shape} and {hi.shape}")
    n = len(lo)
    if n < 2:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty.copy()
    if not (np.all(lo <= hi) and np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))):
        raise ValueError("box corners must be finite, with lo <= hi")
    along = int(np.argmax((lo + hi).var(axis=0)))
    order = np.argsort(lo[:, along], kind="stable")
    sweep = np.empty((n, 4))
    sweep[:, 0] = lo[order, along]
    sweep[:, 1] = lo[order, 1 - along]
    sweep[:, 2] = hi[order, along]
    sweep[:, 3] = hi[order, 1 - along]
    return _plane.box_pairs(sweep, order.astype(np.int32))


def verify(a, b, result, slack: float | None = None) -> bool:
    """True when the result's certificate and numbers hold (gjkcli.engine.certify_plane)."""
    from gjkcli.engine.certify_plane import check_certificate

    return check_certificate(a, b, result, slack) is None
