"""Exact answers for parts that are not convex: their triangles, not their hulls.

A `Mesh` holds a part's triangles and a bounding volume hierarchy over them, built once in the
compiled core (gjkcli/engine/csrc/bvh.c) in the part's own frame; `exact_query` places two meshes and
answers for the pair as the hull engine does (gjkcli.engine.query), with a `Result`:

clear
    The surfaces are farther apart than the touching band and neither part is inside the other.
    `distance` is the exact minimum distance between the surfaces, with its witness points.
touching
    The surfaces come within the band, and the penetration depth (the shortest move that takes
    the volumes apart) is proved to be at most the band: B moved by no more than the band (not
    at all, or the band along the faces' normals where they cross) leaves no two triangles
    crossing by more than the snap and no body of one part inside the other. The move is the
    result's ShiftCertificate; `depth_upper` its length.
collision
    A point of one part lies inside the other (generalized winding number, Jacobson, Kavan and
    Sorkine-Hornung 2013) farther than the band from its surface: any move that separates the
    parts carries it that far, so the depth exceeds the band (a part wholly inside another
    included, which trimesh + FCL miss: trimesh #1875, #2223, fcl #492). Or the surfaces cross
    by more than the band.
undecided
    Neither: no point deeper than the band was found, and no move within the band takes the
    volumes apart. `depth` is the deepest point found (a lower bound, at most the band).

When do two triangles "cross by more than the band"? When each reaches farther than the band
beyond the other's plane AND they cut each other along a segment longer than the band (see
tri_tri_intersect in gjkcli/engine/csrc/tri.c). That alone misses volumes that overlap deeply
where every triangle is narrow: a pipe of 256 facets through a wall crosses it one facet width at
a time. So the depth is searched for (`_Pair.witness`): a part's probes (`Mesh.probes`), its
vertices inside the other's box (up to WITNESS_VERTICES asked their side), and the triangles of
the crossing pairs (up to WITNESS_PAIRS), subdivided where a deeper point may lie
(`_deepest_on_triangles`). Faces exported to touch meet
without crossing (coplanar faces, a face resting on another, corners or edges meeting at a
point): touching with no move, where FCL's triangle test calls them colliding.

Containment needs a solid: a part whose every edge joins exactly two consistently oriented faces.
For a part that is not one, only its surface counts: a part inside it is not a collision, and the
result's `note` says so.

How deep (`Result.depth`, verdict only): the largest distance found from a point of one part
inside the other to the other's surface, a lower bound of the penetration depth. None when no
point deeper than the band was found (touching) or the other part is not a solid.

Poses: each mesh may be moved by a rigid 4x4 pose per query (the hierarchy is reused); answers
are in world coordinates.
"""
from __future__ import annotations

import math
import threading
import time

import numpy as np

from gjkcli.engine import _enums, _mesh
from gjkcli.engine.results import ExactResult, PointCertificate, ShiftCertificate, Status
from gjkcli.engine.topology import edge_groups, open_faces, oriented, signed_volume, topology
from gjkcli.tolerances import DEFAULT, touching_tolerance

__all__ = ["Mesh", "ExactResult", "exact_query", "deepest_vertex", "deeper_on_faces", "deep_in_both", "surface_distance",
           "exact_result", "distinct",
           "winding_numbers", "WANT"]

WANT = ("verdict", "distance", "intersect")

# Sample sizes of the exact test (its tolerances are in gjkcli/tolerances.py: exact_snap_rel,
# exact_step_rel, winding_inside).
# Overlap probes: each body of a part is probed at up to this many vertices, as many face
# centroids and as many points just inside it (see Mesh.probes); a probe inside the other part,
# farther than the band from its surface, proves a collision.
PROBES_PER_BODY = 6
# Meshes of at most this many faces keep their edges sorted (36 bytes a face) from the watertight
# check until their bodies are found, which sort them otherwise again.
KEEP_EDGES = 200_000
# Crossings within the band recorded for probing (their triangles' centroids), at most.
COLLECT = 64
# The deepest point of one part inside the other (see _deepest_on_triangles): crossing triangle
# pairs collected whose triangles are searched, at most; rounds of subdivision; triangles kept
# per round while no point deeper than the band is found, and after one is (the collision is
# then proved and the search only measures its depth); rounds in a row without a gain that end
# the measurement. Every vertex of a part inside the other's box is examined besides.
WITNESS_PAIRS = 4096
WITNESS_ROUNDS = 10
# The proving search's rounds in a sweep of many poses (exact_query's depth=False, where a deep
# crossing's collision goes without its depth): triangles down to 1/128 of the crossing ones'
# size. A pair whose search runs out is undecided unless a move within the band certifies
# touching, as at one pose; the ten rounds there cost a sliver-thin overlap (two faces crossing
# at a grazing angle, no centroid inside at any round) about three times as much.
WITNESS_ROUNDS_SWEEP = 7
# Rounds of the proving search at most, where triangles are still wider than the band after
# the usual rounds (a band of 1e-6 of the parts' size needs about 20 halvings).
WITNESS_ROUNDS_FINE = 32
WITNESS_LIVE = 2048
WITNESS_LIVE_DEPTH = 512
WITNESS_FLAT = 4
# A proof's first points: from where two triangles cross this far of the way to their corners
# (1: the corners).
CROSSING_FAN = (0.03, 0.1, 0.25, 0.5, 0.75, 1.0)
_FAN = np.array(CROSSING_FAN)[:, None, None]
# Vertices whose side (the winding number) is asked, at most, farthest from the surface first.
WITNESS_VERTICES = 1024
# The touching certificate: directions B is moved along by the band, at most (after no move).
SHIFTS = 8
# The whole parts' hulls are parted (`_Pair.hull_moves`) only for parts of at most this many
# vertices (a few ms a hull, each part's built once); larger parts by their crossing triangles'
# hulls only (on the Tekla model at 2 mm, the larger parts' hulls doubled the refine stage and
# settled no pair the crossing triangles' hulls left).
HULL_MOVE_VERTICES = 256
# A point deep in both closed parts (`deep_in_both`): cells a side of the first grid over the box
# it is searched in; points evaluated at most; cells kept a round, by their bound; the search
# ends once no cell's bound beats the best found by this share of it.
COMMON_GRID = 8
COMMON_POINTS = 4_000
COMMON_KEEP = 64
COMMON_REL = 1e-3

# Exit reasons of exact_query.
EXIT_DEEP_CROSSING = "surfaces cross beyond the band"
EXIT_CROSSING = "surfaces cross"
EXIT_CONTAINED = "inside the other part"
EXIT_DEEP_POINT = "a point inside the other part beyond the band"
EXIT_SHIFT = "volumes apart after a move within the band"
EXIT_UNDECIDED = "neither a depth beyond the band nor a move within it found"
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
                 "used", "bvh", "local_lo", "local_hi", "_bodies", "_body", "_face_body", "_probes",
                 "_candidates", "_outward", "_own_hull", "_edges")

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
        groups = None
        if closed_oriented:  # the caller found every directed edge once, and its reverse once
            closed = True
            self.oriented = True
        else:
            groups = edge_groups(f, len(v))
            closed = not open_faces(f, len(v), groups).any()
            self.oriented = closed and oriented(f)
        # the edges sorted for open_faces, kept for the bodies (`_find_bodies`, asked of most parts
        # a scan refines) where they cost little memory beside the hierarchy
        self._edges = groups if len(f) <= KEEP_EDGES else None
        self.watertight = closed if watertight is None else bool(watertight)
        self._bodies: int | None = None
        self._body: np.ndarray | None = None
        self._face_body: np.ndarray | None = None
        self._probes = None
        self._candidates = None  # `probes_within`'s
        self._own_hull = None  # its convex hull in its own frame, when first asked (_own_hull)
        self._outward = None

    def __reduce__(self):
        # pickled for another process (gjkcli.mesh.cad_process): the arrays, the hierarchy built
        # again there
        import functools

        return functools.partial(Mesh, watertight=self.watertight, name=self.name), (
            self.vertices, self.faces)

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

    def named(self, name: str) -> "Mesh":
        """This mesh under another name (a part placing the same mesh as another part: the
        notes name it), holding the same arrays, hierarchy and what has been found of it so far
        (its bodies, its probes)."""
        other = Mesh.__new__(Mesh)
        for slot in Mesh.__slots__:
            setattr(other, slot, getattr(self, slot))
        other.name = name
        return other

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

    def face_bodies(self) -> np.ndarray:
        """(m,) int64: each face's body, 0 .. bodies - 1."""
        if self._face_body is None:
            self._find_bodies()
        return self._face_body

    def _find_bodies(self) -> None:
        face_body, self._bodies, _ = topology(self.faces, len(self.vertices), self._edges)
        self._edges = None
        self._face_body = np.asarray(face_body, dtype=np.int64)
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
        return self.labelled_probes()[0]

    def labelled_probes(self) -> tuple[np.ndarray, np.ndarray]:
        """(probes (k, 3), their bodies (k,) int64): every body has probes (face centroids)."""
        if self._probes is None:
            points, labels, inner = _probe_candidates(self)
            keep = ~inner
            if inner.any():
                keep[inner] = _inside_own(self, points[inner])
            self._probes = np.ascontiguousarray(points[keep]), labels[keep]
        return self._probes

    def probes_within(self, to_outer, from_outer, lo, hi) -> np.ndarray:
        """`probes()` moved by `to_outer` (into another part's frame; `from_outer` back) that
        lie in the box [lo, hi] (that part's: no point outside it is inside the part), in their
        order. Only the probes within the box's own box in this frame are moved (found by their
        x, kept sorted); the points just inside this part are confirmed by its winding number
        only where they fall in the box, each once: a scene of thousands of bodies (a sensor's
        marching cubes) against a small part moves and confirms a few of its 71,000 probes
        (their 24,000 points inside confirmed at once took 0.9 s)."""
        if self._candidates is None:
            if self._probes is not None:
                points, state = self._probes[0], np.zeros(len(self._probes[0]), dtype=np.uint8)
            else:
                points, _, inner = _probe_candidates(self)
                # per point: 0 confirmed (or not to be), 1 not asked yet, 2 not inside
                state = inner.astype(np.uint8)
            order = np.argsort(points[:, 0], kind="stable")
            self._candidates = points, state, order, points[order, 0]
        points, state, order, xs = self._candidates
        if len(points) <= FEW_PROBES:  # moved all at once: less than finding the few
            near, p = np.arange(len(points)), to_outer(points)
        else:
            corners = np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])])
            back = from_outer(corners)
            blo, bhi = back.min(axis=0), back.max(axis=0)
            near = np.sort(order[np.searchsorted(xs, blo[0], "left"):np.searchsorted(xs, bhi[0], "right")])
            near = near[np.all((points[near, 1:] >= blo[1:]) & (points[near, 1:] <= bhi[1:]), axis=1)]
            p = to_outer(points[near])
        keep = np.all((p >= lo) & (p <= hi), axis=1)
        ask = near[keep & (state[near] == 1)]
        if len(ask):
            state[ask] = np.where(_inside_own(self, points[ask]), 0, 2)
        return p[keep & (state[near] == 0)]

    def outward(self) -> float:
        """+1 when the faces' normals (right hand) point out of the part, -1 when in, 0 when the
        faces do not agree (not oriented): the sign of the enclosed volume."""
        if self._outward is None:
            if not self.oriented:
                self._outward = 0.0
            else:
                volume = signed_volume(self.vertices, self.faces, self.centre)
                self._outward = 1.0 if volume >= 0.0 else -1.0
        return self._outward

    def not_solid_reason(self) -> str:
        if not self.watertight:
            return "not watertight"
        if not self.oriented:
            return "faces not consistently oriented"
        return ""

    def __repr__(self) -> str:
        return (f"Mesh(name={self.name!r}, vertices={len(self.vertices)}, faces={len(self.faces)},"
                f" solid={self.solid}, bodies={self.bodies})")


def exact_query(a: Mesh, b: Mesh, *, pose_a=None, pose_b=None, tolerance: float | None = None,
                want: str = "verdict", hulls_apart: bool = False, depth: bool = True,
                measure: bool = True) -> ExactResult:
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
    depth : bool
        "verdict" only. False: where surfaces cross beyond the band, the search for a point
        inside the other part ends at the first one deeper than the band, which proves the
        collision (its depth is None, its witnesses that point and the nearest point of the
        other surface); the status is the same as with True. Elsewhere the point is searched
        for as with True. A sweep of many poses asks for this (`gjkcli.pipeline.poses`).
    measure : bool
        "verdict" only. False: the depth search ends at the first point found deeper than the
        band (the collision is then proved) instead of measuring on from it; the depth reported
        is that point's, a lower bound of the penetration depth beyond the band, and the status
        is the same as with True. A scan of many colliding pairs asks for this.

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
        fields = _verdict(q, depth, measure)
    return q.result(fields, time.perf_counter() - start)


def deepest_vertex(a: Mesh, b: Mesh, *, pose_a=None, pose_b=None,
                   tolerance: float | None = None) -> ExactResult | None:
    """A collision proved and measured by the parts' vertices alone: the vertex of either part
    that lies deepest inside the other (farthest from its surface, the side told by the winding
    number), when deeper than the touching band; None otherwise (then ask `exact_query`).

    Any move that separates the parts carries that vertex out of the other part, so its depth
    is a lower bound of the penetration depth, and the vertex is the collision's certificate.
    It is one closest-point query per vertex inside the other's box and a winding number for
    the deepest few: `exact_query`'s verdict examines the same vertices and then searches the
    crossing triangles' faces for a deeper point, at many times the cost. For a caller that
    needs a certified depth rather than the deepest the search can find (a collision manager's
    signed distance), and whose overlaps are mostly deeper than the band.

    Parameters and result fields as `exact_query`'s verdict (status collision, `depth`, the
    vertex and its nearest point of the other surface as witnesses, `contained`).
    """
    start = time.perf_counter()
    q = _Pair(a, b, pose_a, pose_b, tolerance)
    best = None
    for inner, outer, which in ((a, b, "a in b"), (b, a, "b in a")):
        if not outer.solid:
            continue
        points = (q.a_to_b if which == "a in b" else q.b_to_a)(inner.local()[inner.used])
        points = points[np.all((points >= outer.local_lo) & (points <= outer.local_hi), axis=1)]
        hit = _deepest_inside(outer, points, q.tol if best is None else best[0], q.ws)
        if hit is not None:
            depth, p, c = hit
            if which == "a in b":  # back to A's frame
                p, c = q.b_to_a(p), q.b_to_a(c)
            best = (depth, p, c, which)
    if best is None:
        return None
    fields = q.contained((best[3], best[1], best[0], best[2]))
    fields["exit"] = EXIT_DEEP_POINT
    q.deepest(fields, best)
    q.containment_note = q.not_solid_notes()
    return q.result(fields, time.perf_counter() - start)


def deeper_on_faces(a: Mesh, b: Mesh, *, pose_a=None, pose_b=None, tolerance: float):
    """A point of one closed part deeper than the band `tolerance` inside the other, searched on
    every triangle of it within the other's box, not only those that cross the other's surface
    (`_Pair.witness` searches those): a triangle wholly inside the other may hold a point deeper
    than its corners. (depth, point in world coordinates, nearest point of the other's surface
    in world coordinates, "a in b" or "b in a"), or None when the proving search
    (`_deepest_on_triangles`, measure=False) finds none. A collision it finds is proved by that
    point; finding none proves nothing."""
    q = _Pair(a, b, pose_a, pose_b, tolerance)
    for inner, outer, which in ((a, b, "a in b"), (b, a, "b in a")):
        if not (inner.solid and outer.solid) or not len(inner.faces):
            continue
        to_outer = q.a_to_b if which == "a in b" else q.b_to_a
        tris = to_outer(inner.local()[inner.faces].reshape(-1, 3)).reshape(-1, 3, 3)
        near = np.all((tris.max(axis=1) >= outer.local_lo) & (tris.min(axis=1) <= outer.local_hi), axis=1)
        if not near.any():
            continue
        hit = _deepest_on_triangles(outer, tris[near], q.tol, q.tol, q.ws, measure=False)
        if hit is not None and hit[0] > q.tol:
            depth, p, c = hit
            if which == "a in b":
                p, c = q.b_to_a(p), q.b_to_a(c)
            return depth, q.world_a(p), q.world_a(c), which
    return None


def deep_in_both(a: Mesh, b: Mesh, lo, hi, *, pose_a=None, pose_b=None, tolerance: float):
    """A point inside both closed parts whose distances to their surfaces add up to more than the
    band `tolerance`: (r_a + r_b, the point, a point of A, a point of B), world coordinates, or
    None when no such point is found.

    The ball of radius r_a about the point lies in A, that of radius r_b in B: B moved by less
    than r_a + r_b still overlaps A (the two balls do), so r_a + r_b is a lower bound of the
    penetration depth. It proves what no point of either surface can: two copies of one solid in
    one place, where every point of each surface lies on the other's (and is 0 deep in it) while
    the move that parts them is the solid's thickness. The witness points are the point of B's
    surface nearest the point and the point r_a the other way (the two balls' far sides).

    Branch and bound over the box [lo, hi] (world coordinates: the parts' common solid's,
    `gjkcli.mesh.overlap`), in cells: each part's signed distance s (positive inside) is
    1-Lipschitz, so no point of a cell whose centre has s_a + s_b, within h of every point of
    it, has r_a + r_b above s_a + s_b + 2h. A COMMON_GRID grid of cells first; then the cells
    whose bound beats both the band and the best found (by COMMON_REL of it), at most
    COMMON_KEEP of them by bound, split in eight, until none is left or COMMON_POINTS points
    were evaluated. Each point's distances are exact (the closest point of each surface) and its
    side the winding number, so the answer does not rest on how the box was found; a search
    that runs out of cells finds no such point because there is none."""
    if not (a.solid and b.solid):
        return None
    q = _Pair(a, b, pose_a, pose_b, tolerance)
    lo, hi = np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)
    if not (np.isfinite(lo).all() and np.isfinite(hi).all()) or (hi < lo).any():
        return None
    half = (hi - lo) / (2 * COMMON_GRID)
    axes = [lo[k] + (2 * np.arange(COMMON_GRID) + 1) * half[k] for k in range(3)]
    centres = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, 3)
    centres = np.ascontiguousarray((centres - q.ta) @ q.Ra)  # A's frame
    corners = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], dtype=np.float64)
    proof = q.tol + q.snap  # the distances' rounding: a tie is not a proof
    best, spent = None, 0
    while len(centres) and spent < COMMON_POINTS:
        spent += len(centres)
        sa, sb, cb = _signed_both(q, centres)
        both = (sa > 0) & (sb > 0)
        if both.any():
            k = int(np.flatnonzero(both)[np.argmax((sa + sb)[both])])
            if best is None or sa[k] + sb[k] > best[0]:
                best = (float(sa[k] + sb[k]), centres[k], float(sa[k]), cb[k])
        reach = 2.0 * float(np.linalg.norm(half))
        bound = sa + sb + reach
        floor = proof if best is None else max(proof, best[0] * (1.0 + COMMON_REL))
        keep = np.flatnonzero(bound > floor)
        if len(keep) > COMMON_KEEP:
            keep = keep[np.argsort(-bound[keep])[:COMMON_KEEP]]
        half = half / 2
        step = (corners * (half @ q.Ra))  # the children's offsets, A's frame
        centres = np.ascontiguousarray((centres[keep][:, None, :] + step[None, :, :]).reshape(-1, 3))
    if best is None or not best[0] > proof:
        return None
    depth, p, ra, cb = best
    u = cb - p
    length = float(np.linalg.norm(u))
    u = u / length if length > 0 else np.array([0.0, 0.0, 1.0])
    return depth, q.world_a(p), q.world_a(p - ra * u), q.world_a(cb)


def _signed_both(q: "_Pair", points: np.ndarray):
    """((k,) the signed distances of points (A's frame) to A's surface and (k,) to B's, positive
    inside, (k, 3) the nearest points of B's surface, A's frame)."""
    a, b = q.a, q.b
    da, _, _ = _mesh.closest(a.bvh, points, float("inf"), 0.0, q.ws)
    in_b = np.ascontiguousarray(q.a_to_b(points))
    db, cb, _ = _mesh.closest(b.bvh, in_b, float("inf"), 0.0, q.ws)
    sa, sb = -da, -db
    for s, mesh, pts, d in ((sa, a, points, da), (sb, b, in_b, db)):
        ask = np.flatnonzero(d > 0)
        if len(ask):
            s[ask[_inside_of(mesh, pts, d, ask, q.ws)]] *= -1.0
    return sa, sb, q.b_to_a(cb)


def surface_distance(mesh: Mesh, points, pose=None) -> np.ndarray:
    """(k,) float64: the distance from each point (k, 3), world coordinates, to the surface of
    the mesh placed by the rigid 4x4 `pose` (default: as given)."""
    R, t = _rigid(pose, "pose")
    local = np.ascontiguousarray((np.asarray(points, dtype=np.float64).reshape(-1, 3) - t) @ R - mesh.centre)
    dist, _, _ = _mesh.closest(mesh.bvh, local, float("inf"), 0.0, _workspace())
    return dist


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


def _verdict(q: "_Pair", depth: bool = True, measure: bool = True) -> dict:
    exit_, crossing, near, ta, tb, point, straddle, visits, tests, pairs = _mesh.intersect(
        q.a.bvh, q.b.bvh, q.pose, q.tol, q.tol, q.snap, q.ws, COLLECT)
    q.count(visits, tests)
    if crossing == 2 and not (q.a.solid or q.b.solid):
        # Neither part bounds a volume: only the surfaces count, and they cross beyond the band.
        return q.crossed(point, ta, tb, EXIT_DEEP_CROSSING)
    # Where a part bounds a volume, the band is about depth: surfaces crossing beyond the band do
    # not prove it (two long beams, one rolled a little, cross along cuts far longer than the
    # band while the move that parts them is shorter than it), a point deeper than the band
    # inside the other part does. Surfaces that meet only within the band may still bound
    # volumes that overlap beyond it (a finely faceted pipe through a wall crosses it one facet
    # width at a time): look for the deepest point of one part inside the other, along the
    # crossing triangles and at the vertices.
    best = None
    if crossing == 2 and not (depth and measure):  # the fan of the deep pair often proves it alone
        best = q.fan(ta, tb, point)
    proved = best is not None and best[0] > q.tol
    crossings = np.zeros((0, 2), dtype=np.int32)
    if crossing and not proved:
        crossings = q.crossings()
        if crossing == 2:  # the deep pair first (the collection stops at WITNESS_PAIRS)
            crossings = np.vstack([np.array([[ta, tb]], dtype=crossings.dtype), crossings])
    if crossing == 1:
        # Crossing within the band only: a move within the band that takes the volumes apart
        # proves the depth is at most the band, so no point deeper than the band exists and the
        # search for one (the costly part) is skipped. The same move is tried below otherwise.
        shift = q.moved_apart(crossings, None, False, hulls=False)
        if shift is not None:
            q.containment_note = q.not_solid_notes()
            return q.shifted(point, ta, tb, shift)
    reported = depth or crossing != 2  # only a deep crossing's collision goes without a depth
    if not proved:
        # surfaces that cross within the band only, no move within it parting them: most such
        # pairs with an open part are an open surface on the closed part's faces (a window in
        # its opening), which the open-surface bound settles; it is asked before the triangles'
        # search for a deeper point, which it spares. Surfaces crossing beyond the band mostly
        # hide a deeper point, which that search finds (and measures) as before.
        best = q.witness(crossings, measure=measure and reported,
                         rounds=WITNESS_ROUNDS if reported else WITNESS_ROUNDS_SWEEP, bound_first=crossing == 1)
    if best is not None and best[0] > q.tol:
        fields = q.contained((best[3], best[1], best[0], best[2]))
        fields["exit"] = EXIT_DEEP_POINT if crossing else EXIT_CONTAINED
        if reported:
            q.deepest(fields, best)
        else:  # proved, not measured: the point that proves it, no depth
            which, p, c = best[3], best[1], best[2]
            pa, pb = (p, c) if which == "a in b" else (c, p)
            fields["point_a"], fields["point_b"] = q.world_a(pa), q.world_a(pb)
        return fields
    hint = None
    if crossing == 0:
        exit_, dist, pa, pb, ta, tb, visits, tests = _mesh.distance(
            q.a.bvh, q.b.bvh, q.pose, float("inf"), 0.0, q.snap, q.ws)
        q.count(visits, tests)
        if q.bodies_apart(q.t):  # no surface crossing, no body inside the other: depth 0
            if near or dist <= q.tol:
                fields = q.touch(pa, ta, tb, distance=dist, pb=pb)
                fields.update(certificate=ShiftCertificate(np.zeros(3), 0.0), depth_upper=0.0)
                return fields
            return q.apart(dist, pa, pb, ta, tb)
        point, hint = pa, np.asarray(pb) - np.asarray(pa)  # a body inside the other, within the band
    # crossing within the band only: the cheap moves were tried above; the hulls' least moves
    # only now that no point deeper than the band was found (most such pairs are collisions)
    shift = q.moved_by_hulls(crossings) if crossing == 1 else q.moved_apart(crossings, hint, crossing == 0)
    if shift is None:
        return q.undecided(point, ta, tb, best)
    return q.shifted(point, ta, tb, shift)


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
        self.pose_a, self.pose_b = pose_a, pose_b  # as given, for the open-surface bound
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
        self.tried: list = []  # the moves tried for a touching certificate, in words

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
        n = math.sqrt(d.dot(d))  # np.linalg.norm's own sum, without its dispatch (a call a pair)
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
            to_outer, back = (self.b_to_a, self.a_to_b) if which == "b in a" else (self.a_to_b, self.b_to_a)
            points = inner.probes_within(to_outer, back, outer.local_lo, outer.local_hi)
            if pairs is not None and len(pairs):
                faces = distinct(pairs[:, 1] if which == "b in a" else pairs[:, 0])
                points = np.concatenate([points, to_outer(inner.local(inner.vertices[inner.faces[faces]].mean(axis=1)))])
            hit = _inside(outer, points, self.tol, self.ws)
            if hit is not None:
                depth, p, c = hit
                if which == "a in b":
                    p, c = self.b_to_a(p), self.b_to_a(c)
                self.containment_note = "; ".join(notes)
                return which, p, depth, c
        self.containment_note = "; ".join(notes)
        return None

    def crossings(self) -> np.ndarray:
        """(k, 2) faces of A and B of every crossing triangle pair, up to WITNESS_PAIRS."""
        *_, visits, tests, pairs = _mesh.intersect(self.a.bvh, self.b.bvh, self.pose, 0.0,
                                                   float("inf"), self.snap, self.ws, WITNESS_PAIRS)
        self.count(visits, tests)
        return pairs

    def witness(self, crossings, measure: bool = True, rounds: int = WITNESS_ROUNDS, bound_first: bool = False):
        """The deepest point found of one part inside the other: (depth, point in A's frame,
        nearest point of the other surface in A's frame, "a in b" or "b in a"), or None.

        Examined: each part's probes, the corners of its crossing triangles and its vertices
        inside the other's box (the side asked of at most WITNESS_VERTICES of each, farthest
        from the surface first), and the triangles of the
        crossing pairs ((k, 2) faces of A and B), subdivided where a deeper point could lie
        (_deepest_on_triangles). Any translation that separates the parts moves
        the point out of the other, so the depth is a lower bound of the penetration depth.
        None at once when the hulls lie apart, and for a part inside one that is not a solid.
        measure=False: the search ends at the first point deeper than the band (a proof, not a
        measurement). rounds: of the triangles' subdivision (WITNESS_ROUNDS_SWEEP in a sweep).
        bound_first: an open part against a closed one, no point deeper than the band found at
        its points, is first bounded by the open-surface bound (`sheet_bounded`); bounded within
        the band, its triangles are not searched (no point of them is deeper than the band)."""
        if self.hulls_apart:
            return None
        best = None
        for inner, outer, which, col in ((self.a, self.b, "a in b", 0), (self.b, self.a, "b in a", 1)):
            if not outer.solid:
                continue
            to_outer = self.a_to_b if which == "a in b" else self.b_to_a
            from_outer = self.b_to_a if which == "a in b" else self.a_to_b
            local = inner.local()
            # a proof needs a point deeper than the band: shallower ones are not looked at
            beat = (0.0 if best is None else best[0]) if measure else self.tol
            hit = None
            faces = distinct(crossings[:, col]) if len(crossings) else np.zeros(0, dtype=np.int64)
            corners = distinct(inner.faces[faces]) if len(faces) else np.zeros(0, dtype=np.int64)

            def probes():  # every one in the box (a few per body: a body wholly inside is found)
                return inner.probes_within(to_outer, from_outer, outer.local_lo, outer.local_hi), None

            def crossing_corners():  # where the surfaces pass each other
                return to_outer(local[corners]), WITNESS_VERTICES

            def vertices_in_box():  # farthest from the surface first
                p = to_outer(local[inner.used])
                return p[np.all((p >= outer.local_lo) & (p <= outer.local_hi), axis=1)], WITNESS_VERTICES

            # measuring: the probes first; proving: the crossing corners, which mostly decide
            order = (probes, crossing_corners, vertices_in_box) if measure else (
                crossing_corners, probes, vertices_in_box)
            for point_set in order:
                if measure or hit is None:
                    points, cap = point_set()
                    deeper = _deepest_inside(outer, points, beat, self.ws, cap)
                    if deeper is not None:
                        hit, beat = deeper, deeper[0]
            # an open part's surface bounded within the band inside the solid (the open-surface
            # bound, `gjkcli.engine.sheet`): no point of it lies deeper than the band, and neither
            # search below can find one
            bounded = (bound_first and not inner.solid and len(faces) > 0
                       and (hit is None or hit[0] <= self.tol) and self.sheet_bounded(inner, outer))
            search = len(faces) > 0 and not bounded
            if search and (measure or hit is None):
                tris = to_outer(local[inner.faces[faces]].reshape(-1, 3)).reshape(-1, 3, 3)
                deeper = _deepest_on_triangles(outer, tris, beat, self.tol, self.ws, measure, rounds)
                if deeper is not None:
                    hit, beat = deeper, deeper[0]
            if search and (measure or hit is None or hit[0] <= self.tol):
                # an edge across a face or an edge: the deepest point is on an edge, in a sliver
                # the triangles' search may not reach; the crossing faces' edges, halved (and
                # when measuring, deeper than a corner found: an edge through the other part)
                ends = inner.faces[faces][:, [0, 1, 1, 2, 2, 0]].reshape(-1, 2)
                ends = np.sort(ends, axis=1)
                keys = distinct(ends[:, 0] * len(inner.vertices) + ends[:, 1])
                ends = np.stack([keys // len(inner.vertices), keys % len(inner.vertices)], axis=1)
                segs = to_outer(local[ends].reshape(-1, 3)).reshape(-1, 2, 3)
                deeper = _deepest_on_segments(outer, segs, beat, self.tol, self.ws)
                if deeper is not None:
                    hit, beat = deeper, deeper[0]
            if hit is not None:
                depth, p, c = hit
                if which == "a in b":
                    p, c = self.b_to_a(p), self.b_to_a(c)
                best = (depth, p, c, which)
                if not measure and depth > self.tol:
                    break
        self.containment_note = self.not_solid_notes()
        return best

    def sheet_bounded(self, sheet: Mesh, solid: Mesh) -> bool:
        """The open part `sheet` reaches no deeper than the band into the closed part `solid`
        (the pair's two meshes), bounded by `gjkcli.engine.sheet.sheet_depth`: False where it
        found a deeper point or ran out of pieces. The run's policy asks the bound again for a
        pair left undecided (`gjkcli.pipeline.policy.sheet_verdict`) and is given this answer."""
        from gjkcli.engine.sheet import sheet_depth

        poses = (self.pose_a, self.pose_b) if sheet is self.a else (self.pose_b, self.pose_a)
        got = sheet_depth(sheet, solid, pose_sheet=poses[0], pose_solid=poses[1], band=self.tol)
        return got.upper is not None

    def fan(self, ta: int, tb: int, through):
        """A quick proof for two triangles crossing beyond the band at `through` (A's frame): a
        point deeper than the band inside the other part among those from `through` to each
        triangle's corners (CROSSING_FAN of the way), as `witness` returns it, or None."""
        for inner, outer, which, face in ((self.a, self.b, "a in b", ta), (self.b, self.a, "b in a", tb)):
            if not outer.solid:
                continue
            x = np.asarray(through) if which == "a in b" else self.a_to_b(through)
            corners = inner.vertices[inner.faces[face]] - inner.centre
            points = (x + _FAN * (corners - x)).reshape(-1, 3)
            points = np.ascontiguousarray((self.a_to_b if which == "a in b" else self.b_to_a)(points))
            hit = _inside(outer, points, self.tol, self.ws)
            if hit is not None:
                depth, p, c = hit
                if which == "a in b":
                    p, c = self.b_to_a(p), self.b_to_a(c)
                return depth, p, c, which
        return None

    def not_solid_notes(self) -> str:
        """The note for the parts that are not solids (as `witness` leaves it)."""
        return "; ".join(f"'{outer.name}' is {outer.not_solid_reason()}: only its surface counts, a"
                         f" part inside it is not detected" for outer in (self.b, self.a)
                         if not outer.solid)

    def deepest(self, fields: dict, best) -> None:
        """Fill depth, witness points and normal from the deepest point found (see `witness`);
        leave depth None when that point is not deeper than the band."""
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

    # the touching certificate
    def bodies_apart(self, t) -> bool:
        """With B placed by (R, t) in A's frame, and the surfaces not crossing: is every body of
        each part outside the other? Each body is decided by one of its probes farther than the
        snap from the other surface (a body whose surface crosses nothing lies wholly on one
        side); a body with no such probe counts as not apart. A part inside one that is not a
        solid is not looked for (the result's note says so)."""
        if self.hulls_apart:  # neither can hold a point of the other
            return True
        R = self.R
        for inner, outer, to_outer in ((self.b, self.a, lambda x: x @ R.T + t),
                                       (self.a, self.b, lambda x: (x - t) @ R)):
            if not outer.solid:
                continue
            points, body = inner.labelled_probes()
            p = np.ascontiguousarray(to_outer(points))
            dist, _, _ = _mesh.closest(outer.bvh, p, float("inf"), 0.0, self.ws)
            far = np.flatnonzero(dist > self.snap)
            if len(distinct(body[far])) < inner.bodies:
                return False
            if _first_inside(outer, p, dist, far[np.argsort(-dist[far], kind="stable")], self.ws) >= 0:
                return False
        return True

    def moved_apart(self, crossings, hint, uncrossed: bool, hulls: bool = True):
        """A move of B (A's frame, length <= the band) after which the parts' surfaces cross
        nowhere by more than the snap and no body of one lies inside the other, or None. Tried:
        no move (unless `uncrossed`, where it is known to fail), then the band along the faces'
        normals at the crossings (A's outward, B's inward: their means, then each distinct one)
        and along `hint`; then the least moves that part the convex hulls of the crossing
        triangles and of the whole parts (`hull_moves`: where the contact is an edge across an
        edge, or a corner in a face, the move that parts the volumes is along no face's normal).
        What was tried is kept in `tried` for an undecided result's note. hulls=False: not the
        hulls' moves (`moved_by_hulls` tries them later)."""
        if not uncrossed and self.apart_after(np.zeros(3)):
            return np.zeros(3)
        directions = self.directions(crossings, hint)
        for n in directions:
            shift = self.tol * n
            if self.apart_after(shift):
                return shift
        self.tried = ["no move" if not uncrossed else None,
                      f"the band along {len(directions)} directions of the crossing faces' normals"]
        return self.moved_by_hulls(crossings) if hulls else None

    def moved_by_hulls(self, crossings):
        """A move of the hulls' least moves (`hull_moves`) after which the parts are apart, as
        `moved_apart` asks, or None (said in `tried`)."""
        moves = self.hull_moves(crossings)
        for n, length in moves:
            shift = length * n
            if self.apart_after(shift):
                return shift
        self.tried.append(f"{len(moves)} least moves that part the convex hulls of the crossing "
                          f"triangles and of the parts (the band and their own length)")
        return None

    def hull_moves(self, crossings) -> list:
        """(unit direction, length <= the band) moves of B in A's frame: for the convex hulls of
        the two parts' crossing triangles, and of the two whole parts, the least translation that
        parts them (the hull engine's EPA: direction and depth), along it by the band and, when
        shorter, by that depth and a snap more. The whole parts' hulls only for parts of at most
        HULL_MOVE_VERTICES vertices."""
        from gjkcli.engine.query import query
        from gjkcli.errors import ShapeError

        sets = []
        if len(crossings):
            a_corners = distinct(self.a.faces[distinct(crossings[:, 0])])
            b_corners = distinct(self.b.faces[distinct(crossings[:, 1])])
            sets.append((self.a.local()[a_corners], self.b_to_a(self.b.local()[b_corners])))
        if max(len(self.a.used), len(self.b.used)) <= HULL_MOVE_VERTICES:
            sets.append((self.a, self.b))
        moves = []
        for pa, pb in sets:
            try:
                if isinstance(pa, Mesh):  # each part's hull built once, B's placed in A's frame
                    pose = np.eye(4)
                    pose[:3, :3], pose[:3, 3] = self.R, self.t
                    hulls = _own_hull(pa), _own_hull(pb).moved(pose)
                else:
                    hulls = _hulls([pa, pb])
                r = query(*hulls, tolerance=0.0)
            except (ShapeError, ValueError):  # a flat or degenerate patch: no hull to part
                continue
            if r.depth is None or not np.isfinite(r.depth) or r.depth <= 0:
                continue
            n = np.asarray(r.normal, dtype=np.float64)
            length = float(np.linalg.norm(n))
            if length == 0:
                continue
            n = n / length
            for step in dict.fromkeys((self.tol, min(self.tol, float(r.depth) + 2 * self.snap))):
                if not any(np.dot(u, n) > 1 - DEFAULT.same_move_rel
                           and abs(s - step) <= DEFAULT.same_move_rel * self.tol for u, s in moves):
                    moves.append((n, step))
        return moves

    def apart_after(self, shift) -> bool:
        t = self.t + shift
        pose = np.ascontiguousarray(np.concatenate([self.R.ravel(), t]))
        _, crossing, *_, visits, tests, _ = _mesh.intersect(self.a.bvh, self.b.bvh, pose, 0.0,
                                                            self.snap, self.snap, self.ws)
        self.count(visits, tests)
        return crossing != 2 and self.bodies_apart(t)

    def directions(self, crossings, hint) -> list:
        """Unit directions (A's frame) to move B along, at most SHIFTS, most promising first."""
        out = []
        if len(crossings):
            na = _normals(self.a, distinct(crossings[:, 0]))
            nb = -_normals(self.b, distinct(crossings[:, 1])) @ self.R.T
            groups = []
            for n, sign in ((na, self.a.outward()), (nb, self.b.outward())):
                groups += [sign * n] if sign else [n, -n]  # not oriented: either way
            out += [g.mean(axis=0) for g in groups]
            every = np.concatenate(groups)
            _, first = np.unique(np.round(every, 3), axis=0, return_index=True)
            out += list(every[np.sort(first)])
        if hint is not None:
            out.append(np.asarray(hint, dtype=np.float64))
        units = []
        for n in out:
            if len(units) == SHIFTS:  # the first SHIFTS distinct ones are all that is tried
                break
            length = np.linalg.norm(n)
            same = 1 - DEFAULT.same_direction_rel
            if length > DEFAULT.same_direction_rel and not any(np.dot(u, n) > same * length for u in units):
                units.append(n / length)
        return units

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

    def shifted(self, point, ta, tb, shift) -> dict:
        """Touching, certified by the move `shift` (A's frame, length <= the band)."""
        fields = self.touch(point, ta, tb, distance=0.0)
        length = min(float(np.linalg.norm(shift)), self.tol)  # |tol * unit| may round above tol
        fields.update(certificate=ShiftCertificate(self.Ra @ shift, length), depth_upper=length,
                      exit=EXIT_SHIFT if length > 0 else EXIT_TOUCH)
        return fields

    def undecided(self, point, ta, tb, best) -> dict:
        """Neither bound settles the band: the depth found (a lower bound, at most the band) and
        no move within the band that leaves the volumes apart."""
        x = self.world_a(point)
        fields = dict(status=Status.UNDECIDED, distance=0.0, distance_lower=0.0,
                      exit=EXIT_UNDECIDED, normal=self.face_normal(ta), point_a=x, point_b=x.copy(),
                      triangle_a=ta, triangle_b=tb)
        if best is not None:
            depth, p, c, which = best
            pa, pb = (p, c) if which == "a in b" else (c, p)
            fields.update(depth=float(depth), point_a=self.world_a(pa), point_b=self.world_a(pb))
        return fields

    def undecided_note(self, fields) -> str:
        """What was tried before the answer stayed undecided, and what would settle it."""
        depth = fields.get("depth")
        found = (f"the deepest point found of one part inside the other is {depth:.3g} deep"
                 if depth is not None else "no point of one part was found inside the other")
        tried = "; ".join(t for t in self.tried if t) or "no move within the band"
        return (f"undecided: {found}, not beyond the band ({self.tol:.3g}); moves of B tried to "
                f"part the volumes within the band: {tried}; a wider band settles it as "
                f"touching, or the parts' common volume shows how deep they overlap")

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
        if fields.get("status") is Status.UNDECIDED:
            notes.append(self.undecided_note(fields))
        if not self.containment_note and not self.hulls_apart and not (self.a.solid and self.b.solid):
            notes += [f"'{m.name}' is {m.not_solid_reason()}: only its surface counts"
                      for m in (self.a, self.b) if not m.solid]
        return exact_result(fields, tolerance=self.tol, elapsed=elapsed, iterations=self.visits,
                            triangle_pairs=self.tests, solid_a=self.a.solid, solid_b=self.b.solid,
                            note="; ".join(notes))


def exact_result(fields: dict, *, tolerance: float, elapsed: float, iterations: int,
                 triangle_pairs: int, solid_a: bool, solid_b: bool, note: str) -> ExactResult:
    """An ExactResult from a query's fields (status, distance, distance_lower, normal, point_a,
    point_b, exit, and where known depth, depth_upper, certificate, triangle_a, triangle_b,
    contained), the arrays as float64; shared by the triangle and the primitive queries."""
    base = dict(depth=None, certificate=None, triangle_a=-1, triangle_b=-1, contained=None,
                depth_upper=None)
    base.update(fields)
    return ExactResult(
        status=base["status"], distance=base["distance"], distance_lower=base["distance_lower"],
        depth=base["depth"], normal=np.asarray(base["normal"], dtype=np.float64),
        point_a=np.asarray(base["point_a"], dtype=np.float64),
        point_b=np.asarray(base["point_b"], dtype=np.float64), certificate=base["certificate"],
        iterations=iterations, epa_iterations=0, exit=base["exit"], epa_exit=None,
        tolerance=tolerance, elapsed=elapsed, solid_a=solid_a, solid_b=solid_b,
        contained=base["contained"], note=note, triangle_a=int(base["triangle_a"]),
        triangle_b=int(base["triangle_b"]), triangle_pairs=triangle_pairs,
        depth_upper=base["depth_upper"])


def _inside(outer: Mesh, points: np.ndarray, tol: float, ws):
    """Among points (outer's frame), the one inside `outer` farthest from its surface, if farther
    than tol: (distance, point, nearest surface point) or None. A point within tol of the surface
    proves nothing and is skipped."""
    hit = _mesh.deepest_inside(outer.bvh, points, tol, DEFAULT.winding_inside, ws)
    if hit is None:
        return None
    k, dist, near = hit
    return dist, points[k], near


def _deepest_inside(outer: Mesh, points: np.ndarray, beat: float, ws, cap: int | None = None):
    """The point (outer's frame) inside `outer` farthest from its surface, if farther than beat:
    (distance, point, nearest surface point) or None. Points are tried by decreasing distance and
    the first one inside wins (up to `cap` points), so the winding number is evaluated only until
    then, and not for a point within reach of an outside point's ball (`_first_inside`: the
    vertices of a body wholly outside, a chair under a table, cost a few)."""
    if len(points) == 0:
        return None
    dist, near, _ = _mesh.closest(outer.bvh, np.ascontiguousarray(points), float("inf"), beat, ws)
    order = np.argsort(-dist)
    order = order[dist[order] > beat][:cap]
    k = _first_inside(outer, points, dist, order, ws)
    if k < 0:
        return None
    return float(dist[k]), points[k], near[k]


def _first_inside(outer: Mesh, points: np.ndarray, dist: np.ndarray, order: np.ndarray, ws) -> int:
    """The first row of `order` whose point (outer's frame, at distance dist from its surface)
    lies inside the solid `outer` (|winding number| > DEFAULT.winding_inside), or -1. Asked in
    that order (farthest from the surface first decides the most), a point within reach of an
    outside point's ball without its winding number (`_mesh.sides`)."""
    if len(order) == 0:
        return -1
    side, _ = _mesh.sides(outer.bvh, points, dist, order, DEFAULT.winding_inside, ws, first=True)
    inside = np.flatnonzero(side[order] > 0)
    return int(order[inside[0]]) if len(inside) else -1


def _inside_of(outer: Mesh, points: np.ndarray, dist: np.ndarray, ask: np.ndarray, ws) -> np.ndarray:
    """(len(ask),) bool: which points of the rows `ask` (outer's frame, at distance dist from
    its surface, > 0) lie inside the solid `outer` (|winding number| >
    DEFAULT.winding_inside); the winding number is asked farthest first, and a point within reach
    of the ball of one asked takes its side (`_mesh.sides`)."""
    side, _ = _mesh.sides(outer.bvh, points, dist, ask[np.argsort(-dist[ask], kind="stable")],
                          DEFAULT.winding_inside, ws)
    return side[ask] > 0


def _deepest_on_triangles(outer: Mesh, tris: np.ndarray, beat: float, tol: float, ws,
                          measure: bool = True, rounds: int = WITNESS_ROUNDS):
    """The deepest point found inside `outer` on the triangles (k, 3, 3) (outer's frame), if
    deeper than beat: (depth, point, nearest surface point) or None.

    Branch and bound on the signed distance s (the distance to outer's surface, positive
    inside): s is 1-Lipschitz, so no point of a triangle whose centroid has s = s_c, within r of
    every corner, lies deeper than s_c + r. Each round evaluates the centroids and splits the
    triangles it keeps in four at their edges' midpoints. The winding number (the sign) is asked
    only where the distance exceeds the best depth (at most WITNESS_VERTICES a round, farthest
    first): elsewhere s <= distance cannot win.

    Two phases. Proving (no point deeper than the band yet): a triangle is kept while its bound
    exceeds the band and beats the best depth by more than DEFAULT.witness_rel of the band (a
    triangle bounded by the band cannot decide the verdict), at most WITNESS_LIVE / 4 of them by
    bound. Measuring (a point deeper than the band found: the collision is proved): a triangle
    is kept while its bound beats the best depth by more than DEFAULT.witness_rel of it, at most
    WITNESS_LIVE_DEPTH / 4 of them, and the search stops after WITNESS_FLAT rounds in a row that
    deepen the best by no more than DEFAULT.witness_gain_rel of it. On long thin triangles the
    bound stays loose (r shrinks by half a round), so the measurement is a lower bound found by
    a bounded search, not the deepest point within witness_rel. measure=False: the search ends
    with the proving phase. At most `rounds` rounds."""
    best = None
    live = np.ascontiguousarray(tris, dtype=np.float64)
    flat = 0  # measuring rounds in a row without a gain
    # Proving goes on past `rounds` until the triangles are about the band across: an overlap a
    # few bands deep in parts a million bands long is a sliver no coarser triangle's centroid
    # lies in (each round halves the triangles)
    first = float(np.sqrt(((live - live.mean(axis=1)[:, None, :]) ** 2).sum(axis=2).max())) if len(live) else 0.0
    fine = int(np.ceil(np.log2(first / tol))) + 2 if first > 0 and tol > 0 else 0
    for n in range(max(rounds, min(fine, WITNESS_ROUNDS_FINE))):
        if n >= rounds and beat > tol:  # the extra rounds only prove
            break
        before = beat
        c, reach = _centroids(live)
        dist, near, _ = _mesh.closest(outer.bvh, c, float("inf"), 0.0, ws)
        signed = dist.copy()  # an upper bound of s until the sign is known
        ask = np.flatnonzero(dist > beat)
        if len(ask) > WITNESS_VERTICES:  # the rest keep their distance as the bound
            ask = ask[np.argsort(-dist[ask])[:WITNESS_VERTICES]]
        if len(ask):
            inside = _inside_of(outer, c, dist, ask, ws)
            signed[ask[~inside]] *= -1.0
            if inside.any():
                k = int(ask[inside][np.argmax(dist[ask[inside]])])
                beat = float(dist[k])
                best = (beat, c[k], near[k])
        bound = signed + reach
        if beat > tol and not measure:  # proved; nothing to measure
            break
        if beat > tol:  # measuring
            flat = flat + 1 if beat <= before * (1.0 + DEFAULT.witness_gain_rel) else 0
            if flat >= WITNESS_FLAT:
                break
            floor, cap = beat * (1.0 + DEFAULT.witness_rel), WITNESS_LIVE_DEPTH // 4
        else:  # proving (past `rounds`: fewer triangles, the best bounded)
            floor = max(tol, beat + DEFAULT.witness_rel * tol)
            cap = WITNESS_LIVE // 4 if n < rounds else WITNESS_LIVE // 16
        keep = np.flatnonzero(bound > floor)
        if len(keep) == 0:
            break
        if len(keep) > cap:
            keep = keep[np.argsort(-bound[keep])[:cap]]
        live = _split4(live[keep])
    return best


def _own_hull(mesh: Mesh):
    """The convex hull of a mesh's used vertices in its own frame (`Mesh.local`), built once."""
    hull = mesh._own_hull
    if hull is None:
        hull = mesh._own_hull = _hulls([mesh.local()[mesh.used]])[0]
    return hull


def _hulls(points: list) -> list:
    """Shape.hull of each point set, from the compiled core's quickhull where it proves one (a
    few hundred points), else qhull: a run that settles a pair or two this way need not import
    scipy (0.3 to 0.7 s). Raises the ShapeError of a point set that makes no hull."""
    from gjkcli.engine.shapes import build_hulls

    shapes = build_hulls(points, small=True).shapes
    for shape in shapes:
        if isinstance(shape, Exception):
            raise shape
    return shapes


def _deepest_on_segments(outer: Mesh, segs: np.ndarray, beat: float, tol: float, ws):
    """The deepest point found inside `outer` on the segments (k, 2, 3) (outer's frame), if
    deeper than max(beat, tol): (depth, point, nearest surface point) or None.

    Branch and bound as `_deepest_on_triangles`, in one dimension: no point of a segment whose
    midpoint has signed distance s_m lies deeper than s_m + half its length, and each round
    halves the segments kept (at most WITNESS_LIVE / 4 of them, by bound), until they are a
    quarter of the band long (at most WITNESS_ROUNDS_FINE rounds). A proof only: it stops at
    the first round that finds a point deeper than the band."""
    best = None
    live = np.ascontiguousarray(segs, dtype=np.float64)
    longest = float(np.sqrt(((live[:, 1] - live[:, 0]) ** 2).sum(axis=1).max())) if len(live) else 0.0
    rounds = min(WITNESS_ROUNDS_FINE, int(np.ceil(np.log2(max(longest / tol, 1.0)))) + 3) if tol > 0 else 0
    for _ in range(rounds):
        if len(live) == 0:
            break
        m = 0.5 * (live[:, 0] + live[:, 1])
        d = live[:, 1] - live[:, 0]
        d *= d
        half = 0.5 * np.sqrt(d[:, 0] + d[:, 1] + d[:, 2])
        dist, near, _ = _mesh.closest(outer.bvh, np.ascontiguousarray(m), float("inf"), 0.0, ws)
        signed = dist.copy()  # an upper bound of s until the sign is known
        ask = np.flatnonzero(dist > max(beat, tol))  # only these can prove; the sign costs most
        if len(ask) > WITNESS_VERTICES:
            ask = ask[np.argsort(-dist[ask])[:WITNESS_VERTICES]]
        if len(ask):
            inside = _inside_of(outer, m, dist, ask, ws)
            signed[ask[~inside]] *= -1.0
            if inside.any():
                k = int(ask[inside][np.argmax(dist[ask[inside]])])
                if dist[k] > beat:
                    beat = float(dist[k])
                    best = (beat, m[k], near[k])
        if beat > tol or half.max() < 0.125 * tol:
            break
        bound = signed + half
        keep = np.flatnonzero(bound > max(tol, beat + DEFAULT.witness_rel * tol))
        if len(keep) > WITNESS_LIVE // 4:
            keep = keep[np.argsort(-bound[keep])[:WITNESS_LIVE // 4]]
        kept = live[keep]
        mid = 0.5 * (kept[:, 0] + kept[:, 1])
        live = np.concatenate([np.stack([kept[:, 0], mid], axis=1), np.stack([mid, kept[:, 1]], axis=1)])
    return best if best is not None and best[0] > tol else None


def distinct(ints: np.ndarray) -> np.ndarray:
    """The distinct values of non-negative integers (k,), sorted: np.unique's answer without
    np.unique, which imports numpy.ma on first use (10 to 15 ms of a run's start). By counting,
    or by sorting where the largest value is far beyond their number (a few faces of a mesh of
    millions, or edge keys a * n + b: a count of every value would be that large, per call)."""
    ints = np.ravel(ints)
    if len(ints) and int(ints.max()) > 64 * len(ints) + (1 << 16):
        ints = np.sort(ints)
        return ints[np.concatenate([[True], ints[1:] != ints[:-1]])]
    return np.flatnonzero(np.bincount(ints))


def _centroids(tris: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(centroids (k, 3), reach (k,): the distance from each centroid to its triangle's farthest
    corner) of triangles (k, 3, 3). The sums written out, in the order numpy's reductions over
    three entries take (the same bits), at a third of their cost on a round's few thousand
    triangles."""
    c = (tris[:, 0] + tris[:, 1] + tris[:, 2]) / 3.0
    d = tris - c[:, None, :]
    d *= d
    s = d[:, :, 0] + d[:, :, 1] + d[:, :, 2]
    return c, np.sqrt(np.maximum(np.maximum(s[:, 0], s[:, 1]), s[:, 2]))


def _split4(tris: np.ndarray) -> np.ndarray:
    """Each triangle (k, 3, 3) cut in four at its edges' midpoints: (4k, 3, 3), the corner
    triangles at a, b and c first, then the middle one, each block in the order of tris."""
    k = len(tris)
    a, b, c = tris[:, 0], tris[:, 1], tris[:, 2]
    ab, bc, ca = 0.5 * (a + b), 0.5 * (b + c), 0.5 * (c + a)
    out = np.empty((4, k, 3, 3))
    for block, corners in enumerate(((a, ab, ca), (ab, b, bc), (ca, bc, c), (ab, bc, ca))):
        for j, corner in enumerate(corners):
            out[block, :, j] = corner
    return out.reshape(4 * k, 3, 3)


def _normals(mesh: Mesh, faces: np.ndarray) -> np.ndarray:
    """Unit normals (k, 3) of the faces (right hand, the mesh's own frame; 0 for no area)."""
    f = mesh.local()[mesh.faces[faces]]
    n = np.cross(f[:, 1] - f[:, 0], f[:, 2] - f[:, 0])
    length = np.linalg.norm(n, axis=1)
    return np.divide(n, length[:, None], out=np.zeros_like(n), where=length[:, None] > 0)


# ------------------------------------------------------------------------------------------------
# mesh preparation helpers
# ------------------------------------------------------------------------------------------------

def _spread(index: np.ndarray, label: np.ndarray, k: int) -> np.ndarray:
    """Up to k entries of index per label, spread evenly over each label's entries."""
    order = np.argsort(label, kind="stable")
    # each label's run in `order` (labels are small non-negative integers: bodies), by counting
    count = np.bincount(label)
    start = np.cumsum(count) - count
    present = np.flatnonzero(count)
    count, start = count[present], start[present]
    take = np.minimum(count, k)  # entries picked of each label: j * count // take, j < take
    group = np.repeat(np.arange(len(take)), take)
    j = np.arange(len(group)) - np.repeat(np.cumsum(take) - take, take)
    return index[order[start[group] + (j * count[group]) // take[group]]]


# Up to this many probes, `Mesh.probes_within` moves them all rather than find those near the box.
FEW_PROBES = 512


def _probe_candidates(mesh: Mesh) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """See Mesh.probes: (points (k, 3), body of each (k,), which are meant just inside the part
    (k,) bool: `_inside_own` confirms them, or they are left out)."""
    local = mesh.local()
    body = mesh.vertex_bodies()
    used = np.flatnonzero(body >= 0)
    spread = _spread(used, body[used], PROBES_PER_BODY)
    face_body = mesh.face_bodies()  # every body has faces; a vertex may be in several bodies
    faces = _spread(np.arange(len(mesh.faces)), face_body, PROBES_PER_BODY)
    corners = local[mesh.faces[faces]]
    centroids = corners.mean(axis=1)
    points = [local[spread], centroids]
    labels = [body[spread], face_body[faces]]
    if mesh.solid:
        n = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
        length = np.linalg.norm(n, axis=1)
        keep = length > 0
        # inward is against the normal of an outward-facing solid (positive volume)
        step = -mesh.outward() * DEFAULT.exact_step_rel * mesh.size
        points.append(centroids[keep] + step * n[keep] / length[keep, None])
        labels.append(face_body[faces][keep])
    inner = np.zeros(sum(len(x) for x in points), dtype=bool)
    if mesh.solid:
        inner[len(inner) - len(points[-1]):] = True
    return np.ascontiguousarray(np.concatenate(points)), np.concatenate(labels), inner


def _inside_own(mesh: Mesh, points: np.ndarray) -> np.ndarray:
    """(k,) bool: the points (the mesh's frame) inside it by its winding number."""
    mesh.bvh.prepare_winding()
    return np.abs(_mesh.winding(mesh.bvh, points, _workspace())) > DEFAULT.winding_inside


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
    (a, b, c, x), (d, e, f, y), (g, h, i, z) = rows[0], rows[1], rows[2]
    det = a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g)
    # the columns' Gram matrix against the identity, entry by entry (written out: a sweep of
    # many poses checks two per pair)
    gram = max(abs(a * a + d * d + g * g - 1), abs(a * b + d * e + g * h), abs(a * c + d * f + g * i),
               abs(b * b + e * e + h * h - 1), abs(b * c + e * f + h * i), abs(c * c + f * f + i * i - 1))
    finite = math.isfinite(x) and math.isfinite(y) and math.isfinite(z)
    if not (gram <= DEFAULT.rigid_rel and det > 0 and rows[3] == [0.0, 0.0, 0.0, 1.0] and finite):
        raise ValueError(f"{what} must be a finite rigid transform (rotation and translation, last "
                         f"row 0 0 0 1); bake scale, shear or mirror into the vertices with "
                         f"Mesh.from_arrays")
    return T[:3, :3].copy(), T[:3, 3].copy()


_local = threading.local()


def winding_numbers() -> int:
    """Winding numbers the calling thread's exact queries have evaluated so far: the costliest
    question they ask (a count for tests and benchmarks)."""
    return _workspace().windings


def _workspace():
    """The calling thread's traversal workspace, made once."""
    ws = getattr(_local, "ws", None)
    if ws is None:
        ws = _local.ws = _mesh.Workspace()
    return ws
