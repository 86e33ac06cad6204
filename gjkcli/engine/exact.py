"""Exact answers for parts that are not convex: their triangles, not their hulls.

A `Mesh` holds a part's triangles and a bounding volume hierarchy over them, built once in the
compiled core (gjkcli/engine/csrc/bvh.c) in the part's own frame; `exact_query` places two meshes and
answers for the pair as the hull engine does (gjkcli.engine.query), with a `Result`:

clear
    The surfaces are farther apart than the touching band and neither part is inside the other.
    `distance` is the exact minimum distance between the surfaces, with its witness points.
touching
    The surfaces come within the band, or meet only within it, and no point of one part was
    found inside the other deeper than the band.
collision
    The surfaces cross by more than the band, or a point of one part lies inside the other
    (generalized winding number, Jacobson, Kavan and Sorkine-Hornung 2013) farther than the band
    from its surface: the parts' volumes overlap (a part wholly inside another included, which
    trimesh + FCL miss: trimesh #1875, #2223, fcl #492).

When do two triangles "cross by more than the band"? When each reaches farther than the band
beyond the other's plane AND they cut each other along a segment longer than the band (see
tri_tri_intersect in gjkcli/engine/csrc/tri.c). Faces exported to touch meet without crossing: coplanar
faces, a face resting on another, corners or edges meeting at a point. They are touching here,
where FCL's triangle test calls them colliding. Flush faces can still bound overlapping volumes
(a drill through a plate, flush with both faces; two copies of one part in one place): the
probes find those (`Mesh.probes`, and the centroids of the faces that meet).

Containment needs a solid: a part whose every edge joins exactly two consistently oriented faces.
For a part that is not one, only its surface counts: a part inside it is not a collision, and the
result's `note` says so.

How deep (`Result.depth`, verdict only): the largest distance, among the points examined, from a
point of one part inside the other to the other's surface. Any translation that separates the
parts moves that point at least that far, so it is a lower bound of the penetration depth (the
shortest separating translation). The points examined are the corners and centroids of up to
DEPTH_PAIRS crossing triangle pairs, up to DEPTH_SAMPLES vertices of each part inside the other's
box, and the probes. None when no examined point lies inside deeper than the band (the volumes
overlap only between the points examined), or when the other part is not a solid.

Poses: each mesh may be moved by a rigid 4x4 pose per query (the hierarchy is reused); answers
are in world coordinates.
"""
from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass

import numpy as np

from gjkcli.engine import _enums, _mesh
from gjkcli.engine.results import PointCertificate, Result, Status
from gjkcli.engine.topology import open_faces, oriented, topology
from gjkcli.tolerances import DEFAULT, touching_tolerance

__all__ = ["Mesh", "ExactResult", "exact_query", "WANT"]

WANT = ("verdict", "distance", "intersect")

# Sample sizes of the exact test (its tolerances are in gjkcli/tolerances.py: exact_snap_rel,
# exact_step_rel, winding_inside).
# Overlap probes: each body of a part is probed at up to this many vertices, as many face
# centroids and as many points just inside it (see Mesh.probes); a probe inside the other part,
# farther than the band from its surface, proves a collision.
PROBES_PER_BODY = 6
# Crossings within the band recorded for probing (their triangles' centroids), at most.
COLLECT = 64
# Depth: vertices of each part inside the other's box examined at most, and crossing triangle
# pairs whose centroids are examined at most.
DEPTH_SAMPLES = 64
DEPTH_PAIRS = 256

# Exit reasons of exact_query.
EXIT_DEEP_CROSSING = "surfaces cross beyond the band"
EXIT_CROSSING = "surfaces cross"
EXIT_CONTAINED = "inside the other part"
EXIT_TOUCH = "surfaces within the band"
EXIT_CLOSEST = "closest pair found"
EXIT_APART = "no triangle pair within the band"


class Mesh:
    """A part's triangles with their bounding volume hierarchy, ready for exact queries.

    Attributes
    ----------
    name : str
    vertices : (n, 3) float64
        As given (world coordinates of a loaded part).
    faces : (m, 3) int64
    watertight : bool
        Every edge is shared by exactly two faces.
    oriented : bool
        Every edge is traversed once in each direction: the faces agree on inside and outside.
    solid : bool
        watertight and oriented: containment in this part can be decided.
    centre : (3,) float64
        Origin of the mesh's own frame (its bounding-box centre): the hierarchy is built on
        vertices - centre, so that parts far from the world origin keep their precision.
    size : float
        Bounding-box diagonal.
    used : (k,) int64
        The vertices the faces use, in increasing order.
    bodies : int
        Bodies, as gjkcli.engine.topology defines them (faces joined by manifold edges); found
        on first use (the probes need them; most distance queries never do).
    bvh : gjkcli.engine._mesh.BVH

    `closed_oriented=True` says the caller has checked that every directed edge of the faces is
    used once and its reverse once (as gjkcli.api.manager does for all its meshes at once):
    the mesh is then watertight and oriented, and no edge is examined again here.
    """

    __slots__ = ("name", "vertices", "faces", "watertight", "oriented", "centre", "size",
                 "used", "bvh", "local_lo", "local_hi", "_bodies", "_body", "_probes")

    def __init__(self, vertices, faces, *, watertight: bool | None = None, name: str = "mesh",
                 leaf_size: int = 1, closed_oriented: bool = False):
        v = np.ascontiguousarray(vertices, dtype=np.float64).reshape(-1, 3)
        f = np.ascontiguousarray(faces, dtype=np.int64).reshape(-1, 3)
        if len(f) == 0:
            raise ValueError(f"{name}: a mesh needs at least one triangle")
        if f.min() < 0 or f.max() >= len(v):
            raise ValueError(f"{name}: faces point past the {len(v)} vertices")
        # the vertices the faces use, in order: np.unique's answer, by counting (numpy 2's
        # np.unique hashes, about 15 times slower on a small part's faces)
        used = self.used = np.flatnonzero(np.bincount(f.ravel(), minlength=len(v)))
        if not np.isfinite(v[used]).all():
            raise ValueError(f"{name}: NaN or infinite vertex coordinates")
        lo, hi = v[used].min(axis=0), v[used].max(axis=0)
        self.name = name
        self.vertices = v
        self.faces = f
        self.centre = 0.5 * (lo + hi)
        self.size = float(np.linalg.norm(hi - lo))
        local = v - self.centre
        unused = np.ones(len(v), dtype=bool)
        unused[used] = False
        local[unused] = 0.0  # unused vertices may hold anything
        self.local_lo, self.local_hi = lo - self.centre, hi - self.centre
        self.bvh = _mesh.BVH(local, f.astype(np.int32), leaf_size)
        if closed_oriented:  # the caller found every directed edge once, and its reverse once
            closed = True
            self.oriented = True
        else:
            closed = not open_faces(f, len(v)).any()
            self.oriented = closed and oriented(f)
        self.watertight = closed if watertight is None else bool(watertight)
        self._bodies: int | None = None
        self._body: np.ndarray | None = None
        self._probes = None

    @classmethod
    def from_arrays(cls, vertices, faces, *, watertight: bool | None = None, name: str = "mesh",
                    leaf_size: int = 1) -> "Mesh":
        """A mesh from arrays: vertices (n, 3), faces (m, 3) indices, m >= 1.

        watertight : bool, optional
            Known already (gjkcli.mesh.load.Part.watertight); computed from the edges when not given.
        """
        return cls(vertices, faces, watertight=watertight, name=name, leaf_size=leaf_size)

    @classmethod
    def from_part(cls, part, leaf_size: int = 1) -> "Mesh":
        """A mesh from a gjkcli.mesh.load.Part (world coordinates, the part's name and watertight flag)."""
        return cls(part.vertices, part.faces, watertight=part.watertight, name=part.name,
                   leaf_size=leaf_size)

    @property
    def solid(self) -> bool:
        return self.watertight and self.oriented

    @property
    def bodies(self) -> int:
        if self._bodies is None:
            self._find_bodies()
        return self._bodies

    def vertex_bodies(self) -> np.ndarray:
        """(n,) int64: each vertex's body (that of one of its faces), -1 for unused vertices."""
        if self._body is None:
            self._find_bodies()
        return self._body

    def _find_bodies(self) -> None:
        face_body, self._bodies, _ = topology(self.faces, len(self.vertices))
        body = np.full(len(self.vertices), -1, dtype=np.int64)
        body[self.faces.ravel()] = np.repeat(face_body, 3)
        self._body = body

    def local(self, points=None) -> np.ndarray:
        """Points (default: the vertices) in the mesh's own frame."""
        return (self.vertices if points is None else np.asarray(points)) - self.centre

    def probes(self) -> np.ndarray:
        """(k, 3) points of the part, own frame, that overlap tests examine: per body, up to
        PROBES_PER_BODY vertices and face centroids spread over it and, for a solid, as many
        points just inside it (a centroid moved inward by DEFAULT.exact_step_rel x size, kept where the
        winding number confirms it is inside). Inside points catch a part whose surface is
        everywhere flush with another's (two copies of one part in one place). Made once."""
        if self._probes is None:
            self._probes = _probe_points(self)
        return self._probes

    def not_solid_reason(self) -> str:
        if not self.watertight:
            return "not watertight"
        if not self.oriented:
            return "faces not consistently oriented"
        return ""

    def __repr__(self) -> str:
        return (f"Mesh(name={self.name!r}, vertices={len(self.vertices)}, faces={len(self.faces)},"
                f" solid={self.solid}, bodies={self.bodies})")


@dataclass(frozen=True)
class ExactResult(Result):
    """A `Result` of the exact test, with what the exact test adds.

    Attributes (besides Result's)
    ----------
    solid_a, solid_b : bool
        Whether containment in A (in B) could be decided: the part is watertight and oriented.
    contained : str or None
        "a in b" when a point of A was found inside B (deeper than the band), "b in a" the
        other way: the parts' volumes overlap, though their surfaces may not cross.
    note : str
        Plain words on what the answer does not cover ("" when it covers everything), e.g. that
        only surfaces count for a part that is not watertight.
    triangle_a, triangle_b : int
        Faces of the witness pair (crossing or closest), -1 when none.
    triangle_pairs : int
        Triangle pairs tested. (`iterations` counts the box pairs visited.)
    """

    solid_a: bool = True
    solid_b: bool = True
    contained: str | None = None
    note: str = ""
    triangle_a: int = -1
    triangle_b: int = -1
    triangle_pairs: int = 0


def exact_query(a: Mesh, b: Mesh, *, pose_a=None, pose_b=None, tolerance: float | None = None,
                want: str = "verdict", hulls_apart: bool = False) -> ExactResult:
    """The exact answer for two meshes: clear, touching or collision, with evidence.

    Parameters
    ----------
    a, b : Mesh
    pose_a, pose_b : (4, 4) float64, optional
        Rigid transforms applied to each mesh's vertices (default: as given).
    tolerance : float, optional
        Touching band half-width in model units; default DEFAULT.touching_rel x pair size (the
        larger bounding-box diagonal).
    want : {"verdict", "distance", "intersect"}
        "verdict": the status with the distance (clear) or the deepest point found (collision).
        "distance": the distance and witnesses; an intersecting pair is a collision without
        depth. "intersect": stops at the first crossing triangle pair; a clear pair's distance
        is not measured (`distance` is inf, `distance_lower` the band).
    hulls_apart : bool
        The caller knows the parts' convex hulls lie apart (beyond the band): no point of one
        part can then lie inside the other, and the containment probes are skipped.

    Returns
    -------
    ExactResult
        status, distance, witness points (clear: closest points; collision: the deepest point
        found and its nearest point on the other surface, or the crossing point twice), a
        PointCertificate for a collision (a point of both surfaces, or a contained vertex).
    """
    start = time.perf_counter()
    if want not in WANT:
        raise ValueError(f"want must be one of {WANT}, got {want!r}")
    q = _Pair(a, b, pose_a, pose_b, tolerance)
    q.hulls_apart = hulls_apart
    if want == "intersect":
        fields = _intersect(q)
    elif want == "distance":
        fields = _distance(q)
    else:
        fields = _verdict(q)
    return q.result(fields, time.perf_counter() - start)


# ------------------------------------------------------------------------------------------------
# the three queries
# ------------------------------------------------------------------------------------------------

def _intersect(q: "_Pair") -> dict:
    exit_, crossing, near, ta, tb, point, _, visits, tests, _ = _mesh.intersect(
        q.a.bvh, q.b.bvh, q.pose, q.tol, -1.0, q.snap, q.ws)
    q.count(visits, tests)
    if crossing:
        return q.crossed(point, ta, tb, EXIT_CROSSING)
    found = q.overlap(None)
    if found is not None:
        return q.contained(found)
    if near:  # within the band, not measured: the band is the upper bound
        return q.touch(point, ta, tb, distance=q.tol)
    # not measured: the witnesses are the parts' centres
    return dict(status=Status.CLEAR, distance=float("inf"), distance_lower=q.tol, exit=EXIT_APART,
                normal=q.axis_between(), point_a=q.world_a(np.zeros(3)), point_b=q.world_a(q.t))


def _distance(q: "_Pair") -> dict:
    exit_, dist, pa, pb, ta, tb, visits, tests = _mesh.distance(
        q.a.bvh, q.b.bvh, q.pose, float("inf"), 0.0, q.snap, q.ws)
    q.count(visits, tests)
    if exit_ == _enums.mesh_exit.MESH_EXIT_INTERSECTING:
        return q.crossed(pa, ta, tb, EXIT_CROSSING)
    found = q.overlap(None)
    if found is not None:
        return q.contained(found)
    return q.apart(dist, pa, pb, ta, tb)


def _verdict(q: "_Pair") -> dict:
    exit_, crossing, near, ta, tb, point, straddle, visits, tests, pairs = _mesh.intersect(
        q.a.bvh, q.b.bvh, q.pose, q.tol, q.tol, q.snap, q.ws, COLLECT)
    q.count(visits, tests)
    if crossing == 2:
        fields = q.crossed(point, ta, tb, EXIT_DEEP_CROSSING)
        # collect crossings for the depth (deep = inf: record, never stop early but when full)
        *_, visits, tests, crossings = _mesh.intersect(q.a.bvh, q.b.bvh, q.pose, 0.0, float("inf"),
                                                       q.snap, q.ws, DEPTH_PAIRS)
        q.count(visits, tests)
        q.deepest(fields, np.vstack([[ta, tb], crossings]), None)
        return fields
    # crossings within the band only: faces flush with each other, which may still bound
    # overlapping volumes (a tool flush with both faces of a plate); probe the crossing faces too
    found = q.overlap(pairs)
    if found is not None:
        fields = q.contained(found)
        q.deepest(fields, pairs, found)
        return fields
    if crossing == 1:
        return q.touch(point, ta, tb, distance=0.0)
    exit_, dist, pa, pb, ta, tb, visits, tests = _mesh.distance(
        q.a.bvh, q.b.bvh, q.pose, float("inf"), 0.0, q.snap, q.ws)
    q.count(visits, tests)
    if near or dist <= q.tol:
        return q.touch(pa, ta, tb, distance=dist, pb=pb)
    return q.apart(dist, pa, pb, ta, tb)


# ------------------------------------------------------------------------------------------------
# one placed pair: frames, containment, depth, result fields
# ------------------------------------------------------------------------------------------------

class _Pair:
    """Two meshes placed for one query. Work happens in A's own frame (A's vertices minus its
    centre); B's frame maps into it by x_A = R x_B + t."""

    def __init__(self, a: Mesh, b: Mesh, pose_a, pose_b, tolerance):
        self.a, self.b = a, b
        # own frame -> world: x = Rw (l + centre) + tw
        Ra, ta = _rigid(pose_a, "pose_a")
        Rb, tb = _rigid(pose_b, "pose_b")
        self.Ra, self.ta = Ra, Ra @ a.centre + ta
        Rb_full, tb_full = Rb, Rb @ b.centre + tb
        self.R = Ra.T @ Rb_full
        self.t = Ra.T @ (tb_full - self.ta)
        self.pose = np.ascontiguousarray(np.concatenate([self.R.ravel(), self.t]))
        size = max(a.size, b.size)
        self.tol = touching_tolerance(size, tolerance)
        self.snap = DEFAULT.exact_snap_rel * size
        self.ws = _workspace()
        self.visits = 0
        self.tests = 0
        self.containment_note = ""
        self.hulls_apart = False

    # frames
    def world_a(self, p) -> np.ndarray:
        """A's frame -> world."""
        return self.Ra @ np.asarray(p, dtype=np.float64) + self.ta

    def b_to_a(self, p) -> np.ndarray:
        return np.asarray(p) @ self.R.T + self.t

    def a_to_b(self, p) -> np.ndarray:
        return (np.asarray(p) - self.t) @ self.R

    def axis_between(self) -> np.ndarray:
        d = self.Ra @ self.t
        n = np.linalg.norm(d)
        return d / n if n > 0 else np.array([1.0, 0.0, 0.0])

    def count(self, visits, tests):
        self.visits += int(visits)
        self.tests += int(tests)

    # overlap
    def overlap(self, pairs):
        """A point of one part inside the other, deeper than the band: (which, point in A's frame,
        its depth, nearest point of the other surface in A's frame), or None. Probes: each
        part's `probes()`, and the centroids of the crossing faces in pairs ((k, 2) or None).
        None at once when the hulls lie apart: neither part can hold a point of the other."""
        if self.hulls_apart:
            return None
        notes = []
        for inner, outer, which in ((self.b, self.a, "b in a"), (self.a, self.b, "a in b")):
            if not outer.solid:
                notes.append(f"'{outer.name}' is {outer.not_solid_reason()}: only its surface counts,"
                             f" a part inside it is not detected")
                continue
            points = inner.probes()
            if pairs is not None and len(pairs):
                faces = np.unique(pairs[:, 1] if which == "b in a" else pairs[:, 0])
                points = np.concatenate([points, inner.local(inner.vertices[inner.faces[faces]].mean(axis=1))])
            to_outer = self.b_to_a if which == "b in a" else self.a_to_b
            hit = _inside(outer, to_outer(points), self.tol, self.ws)
            if hit is not None:
                depth, p, c = hit
                if which == "a in b":
                    p, c = self.b_to_a(p), self.b_to_a(c)
                self.containment_note = "; ".join(notes)
                return which, p, depth, c
        self.containment_note = "; ".join(notes)
        return None

    def deepest(self, fields: dict, pairs, found) -> None:
        """Fill depth, witness points and normal from the deepest point found (see the module
        docstring), examining the crossing triangles of pairs ((k, 2) faces of A and B, or None)
        besides the samples; leave depth None when no examined point lies inside."""
        best = None  # (depth, point of the inner part, nearest point of the other surface, which)
        if found is not None:
            which, p, depth, c = found
            best = (depth, p, c, which)
        for inner, outer, which in ((self.a, self.b, "a in b"), (self.b, self.a, "b in a")):
            if not outer.solid:
                continue
            faces = None if pairs is None else pairs[:, 0 if which == "a in b" else 1]
            to_outer = self.a_to_b if which == "a in b" else self.b_to_a
            points = to_outer(np.concatenate([_depth_candidates(inner, outer, faces, to_outer),
                                              inner.probes()]))
            hit = _deepest_inside(outer, points, 0.0 if best is None else best[0], self.ws)
            if hit is not None:
                depth, p, c = hit
                if which == "a in b":
                    p, c = self.b_to_a(p), self.b_to_a(c)
                best = (depth, p, c, which)
        if best is None or best[0] <= self.tol:
            return
        depth, p, c, which = best
        # moving B along the normal by `depth` pushes the point out (p of A inside B: B moves by
        # p - c; p of B inside A: A moves by p - c, so B by c - p)
        n = (p - c) if which == "a in b" else (c - p)
        length = np.linalg.norm(n)
        fields["depth"] = float(depth)
        if length > 0:
            fields["normal"] = self.Ra @ (n / length)
        pa, pb = (p, c) if which == "a in b" else (c, p)
        fields["point_a"], fields["point_b"] = self.world_a(pa), self.world_a(pb)

    # result fields
    def crossed(self, point, ta, tb, exit_) -> dict:
        x = self.world_a(point)
        return dict(status=Status.COLLISION, distance=0.0, distance_lower=0.0, exit=exit_,
                    normal=self.face_normal(ta), point_a=x, point_b=x.copy(),
                    certificate=PointCertificate(x.copy()), triangle_a=ta, triangle_b=tb)

    def contained(self, found) -> dict:
        which, p, _, _ = found
        x = self.world_a(p)
        return dict(status=Status.COLLISION, distance=0.0, distance_lower=0.0, exit=EXIT_CONTAINED,
                    normal=self.axis_between(), point_a=x, point_b=x.copy(),
                    certificate=PointCertificate(x.copy()), contained=which)

    def touch(self, point, ta, tb, distance, pb=None) -> dict:
        x = self.world_a(point)
        y = self.world_a(pb) if pb is not None else x.copy()
        d = y - x
        n = np.linalg.norm(d)
        return dict(status=Status.TOUCHING, distance=float(distance), distance_lower=0.0,
                    exit=EXIT_TOUCH, normal=d / n if n > 0 else self.face_normal(ta), point_a=x,
                    point_b=y,
                    certificate=PointCertificate(x.copy()) if pb is None and distance == 0.0 else None,
                    triangle_a=ta, triangle_b=tb)

    def apart(self, dist, pa, pb, ta, tb) -> dict:
        x, y = self.world_a(pa), self.world_a(pb)
        d = y - x
        n = np.linalg.norm(d)
        status = Status.CLEAR if dist > self.tol else Status.TOUCHING
        return dict(status=status, distance=float(dist), distance_lower=float(dist),
                    exit=EXIT_CLOSEST if status is Status.CLEAR else EXIT_TOUCH,
                    normal=d / n if n > 0 else self.face_normal(ta), point_a=x, point_b=y,
                    triangle_a=ta, triangle_b=tb)

    def face_normal(self, ta: int) -> np.ndarray:
        """World unit normal of A's face ta (the axis between the parts when there is none)."""
        if ta < 0:
            return self.axis_between()
        (x0, y0, z0), (x1, y1, z1), (x2, y2, z2) = self.a.vertices[self.a.faces[ta]].tolist()
        u, v, w = x1 - x0, y1 - y0, z1 - z0
        p, q, r = x2 - x0, y2 - y0, z2 - z0
        n = np.array([v * r - w * q, w * p - u * r, u * q - v * p])
        length = float(np.sqrt(n @ n))
        return self.Ra @ (n / length) if length > 0 else self.axis_between()

    def result(self, fields: dict, elapsed: float) -> ExactResult:
        notes = [self.containment_note] if self.containment_note else []
        if not self.containment_note and not self.hulls_apart and not (self.a.solid and self.b.solid):
            notes += [f"'{m.name}' is {m.not_solid_reason()}: only its surface counts"
                      for m in (self.a, self.b) if not m.solid]
        base = dict(depth=None, certificate=None, triangle_a=-1, triangle_b=-1, contained=None)
        base.update(fields)
        return ExactResult(
            status=base["status"], distance=base["distance"], distance_lower=base["distance_lower"],
            depth=base["depth"], normal=np.asarray(base["normal"], dtype=np.float64),
            point_a=np.asarray(base["point_a"], dtype=np.float64),
            point_b=np.asarray(base["point_b"], dtype=np.float64), certificate=base["certificate"],
            iterations=self.visits, epa_iterations=0, exit=base["exit"], epa_exit=None,
            tolerance=self.tol, elapsed=elapsed, solid_a=self.a.solid, solid_b=self.b.solid,
            contained=base["contained"], note="; ".join(notes), triangle_a=int(base["triangle_a"]),
            triangle_b=int(base["triangle_b"]), triangle_pairs=self.tests)


def _inside(outer: Mesh, points: np.ndarray, tol: float, ws):
    """Among points (outer's frame), the one inside `outer` farthest from its surface, if farther
    than tol: (distance, point, nearest surface point) or None. A point within tol of the surface
    proves nothing and is skipped."""
    dist, near, _ = _mesh.closest(outer.bvh, points, float("inf"), tol, ws)
    decisive = np.flatnonzero(dist > tol)
    if len(decisive) == 0:
        return None
    outer.bvh.prepare_winding()
    w = _mesh.winding(outer.bvh, points[decisive], ws)
    inside = decisive[np.abs(w) > DEFAULT.winding_inside]
    if len(inside) == 0:
        return None
    k = int(inside[np.argmax(dist[inside])])
    return float(dist[k]), points[k], near[k]


def _depth_candidates(inner: Mesh, outer: Mesh, faces, to_outer) -> np.ndarray:
    """Points of `inner` (its own frame) worth examining for depth: the corners and centroids of
    its crossing faces (None: no faces), and up to DEPTH_SAMPLES of its vertices inside outer's
    box."""
    local = inner.local()
    used = inner.used
    p = to_outer(local[used])
    inbox = used[np.all((p >= outer.local_lo) & (p <= outer.local_hi), axis=1)]
    if len(inbox) > DEPTH_SAMPLES:
        inbox = inbox[np.linspace(0, len(inbox) - 1, DEPTH_SAMPLES).astype(np.int64)]
    if faces is None or len(faces) == 0:
        return local[inbox]
    faces = np.unique(faces)
    corners = np.unique(np.concatenate([inner.faces[faces].ravel(), inbox]))
    return np.concatenate([local[corners], local[inner.faces[faces]].mean(axis=1)])


def _deepest_inside(outer: Mesh, points: np.ndarray, beat: float, ws):
    """The point (outer's frame) inside `outer` farthest from its surface, if farther than beat:
    (distance, point, nearest surface point) or None. Points are tried by decreasing distance and
    the first one inside wins, so the winding number is evaluated only as often as needed."""
    if len(points) == 0:
        return None
    dist, near, _ = _mesh.closest(outer.bvh, points, float("inf"), 0.0, ws)
    order = np.argsort(-dist)
    order = order[dist[order] > beat]
    if len(order) == 0:
        return None
    outer.bvh.prepare_winding()
    for start in range(0, len(order), 8):
        chunk = order[start:start + 8]
        w = _mesh.winding(outer.bvh, points[chunk], ws)
        inside = np.flatnonzero(np.abs(w) > DEFAULT.winding_inside)
        if len(inside):
            k = int(chunk[inside[0]])
            return float(dist[k]), points[k], near[k]
    return None


# ------------------------------------------------------------------------------------------------
# mesh preparation helpers
# ------------------------------------------------------------------------------------------------

def _spread(index: np.ndarray, label: np.ndarray, k: int) -> np.ndarray:
    """Up to k entries of index per label, spread evenly over each label's entries."""
    order = np.argsort(label, kind="stable")
    _, start, count = np.unique(label[order], return_index=True, return_counts=True)
    picks = [order[s + (np.arange(min(k, c)) * c) // min(k, c)] for s, c in zip(start, count)]
    return index[np.concatenate(picks)]


def _probe_points(mesh: Mesh) -> np.ndarray:
    """See Mesh.probes."""
    local = mesh.local()
    body = mesh.vertex_bodies()
    used = np.flatnonzero(body >= 0)
    vertices = local[_spread(used, body[used], PROBES_PER_BODY)]
    faces = _spread(np.arange(len(mesh.faces)), body[mesh.faces[:, 0]], PROBES_PER_BODY)
    corners = local[mesh.faces[faces]]
    centroids = corners.mean(axis=1)
    points = [vertices, centroids]
    if mesh.solid:
        n = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
        length = np.linalg.norm(n, axis=1)
        keep = length > 0
        # inward is against the normal of an outward-facing solid (positive volume)
        f = local[mesh.faces]
        outward = np.einsum("ij,ij->", f[:, 0], np.cross(f[:, 1], f[:, 2])) >= 0.0
        step = (-1.0 if outward else 1.0) * DEFAULT.exact_step_rel * mesh.size
        inner = centroids[keep] + step * n[keep] / length[keep, None]
        if len(inner):
            mesh.bvh.prepare_winding()
            w = _mesh.winding(mesh.bvh, inner, _workspace())
            points.append(inner[np.abs(w) > DEFAULT.winding_inside])
    return np.ascontiguousarray(np.concatenate(points))


_I3 = np.eye(3)


def _rigid(pose, what: str):
    """(R, t) of a rigid 4x4 pose; identity for None. Checked with plain arithmetic: np.allclose
    would cost more than a whole boolean query."""
    if pose is None:
        return _I3, np.zeros(3)
    T = np.asarray(pose, dtype=np.float64)
    if T.shape != (4, 4):
        raise ValueError(f"{what} must be a 4x4 matrix, got shape {T.shape}")
    rows = T.tolist()
    cols = list(zip(*(row[:3] for row in rows[:3])))
    (a, b, c), (d, e, f), (g, h, i) = (row[:3] for row in rows[:3])
    det = a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g)
    gram = max(abs(sum(x * y for x, y in zip(cols[j], cols[k])) - (j == k))
               for j in range(3) for k in range(j, 3))
    finite = all(math.isfinite(row[3]) for row in rows[:3])
    if not (gram <= DEFAULT.rigid_rel and det > 0 and rows[3] == [0.0, 0.0, 0.0, 1.0] and finite):
        raise ValueError(f"{what} must be a finite rigid transform (rotation and translation, last "
                         f"row 0 0 0 1); bake scale, shear or mirror into the vertices with "
                         f"Mesh.from_arrays")
    return T[:3, :3].copy(), T[:3, 3].copy()


_local = threading.local()


def _workspace():
    """The calling thread's traversal workspace, made once."""
    ws = getattr(_local, "ws", None)
    if ws is None:
        ws = _local.ws = _mesh.Workspace()
    return ws
