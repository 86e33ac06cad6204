"""Convex shapes: hull vertices with their adjacency, a rigid pose, an inflation radius; primitives.

A `Shape` is what the engine queries. Its vertices live in a local frame centred on their own
bounding box, so that a part far from the world origin keeps its precision; the pose carries it
back. Non-rigid transforms (scale, shear, mirror) are baked into the vertices before the hull is
built. Degenerate hulls are valid shapes: a flat polygon, a segment, a point (GJK needs only a
support function, qhull refuses them).

`build_hulls` makes the hulls of many parts at once (a scan's thousands of small parts): one qhull
call per part, everything else vectorized over the parts, each Shape bit for bit `Shape.hull`'s.
"""
from __future__ import annotations

import dataclasses
import math
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from gjkcli.engine import _enums
from gjkcli.collector import no_gc
from gjkcli.errors import ShapeError
from gjkcli.tolerances import DEFAULT

if TYPE_CHECKING:
    from gjkcli.engine import _core

# Shape kinds of the compiled core (gjkcli/engine/csrc/gjk.h, enum gjk_kind).
# Shape kinds by name, their codes from the core's header (enum gjk_kind).
KINDS = {m.name[len("GJK_"):].lower(): int(m) for m in _enums.gjk_kind}

_EMPTY_INT = np.zeros(0, dtype=np.int32)

# Parts per chunk of `build_hulls`: large enough that a chunk's fixed cost (a process round trip)
# is small against its work.
_HULL_CHUNK = 2000
# Below this many parts, `build_hulls` stays in this process (forking costs ~10 ms per worker).
_PARALLEL_HULLS_FROM = 4000


@dataclass(frozen=True, eq=False)
class Shape:
    """A convex shape in a pose.

    Attributes
    ----------
    kind : str
        One of KINDS.
    vertices : (n, 3) float64
        Hull vertices in the local frame (empty for primitives).
    adj_start : (n + 1,) int32
    adj : (e,) int32
        Vertex adjacency of the hull in CSR form: the neighbours of vertex i are
        adj[adj_start[i]:adj_start[i + 1]].
    faces : (f, 3) int32 or None
        Hull triangles (local vertex indices) of a solid hull; None for flat and smaller hulls.
    dimension : int
        3 solid, 2 flat polygon, 1 segment, 0 point.
    dims : (3,) float64
        Primitive dimensions (see gjk.h): box half extents; segment half length; cylinder and
        cone radius and half height.
    radius : float
        Inflation: the shape is the Minkowski sum of its core and a ball of this radius.
    rotation : (3, 3) float64
    translation : (3,) float64
        Pose: a local point l is at rotation @ l + translation.
    """

    kind: str
    vertices: np.ndarray
    adj_start: np.ndarray
    adj: np.ndarray
    faces: np.ndarray | None
    dimension: int
    dims: np.ndarray
    radius: float
    rotation: np.ndarray
    translation: np.ndarray
    _extent: float = field(default=0.0, repr=False)
    _size: float = field(default=0.0, repr=False)
    _cube: np.ndarray = field(default_factory=lambda: _EMPTY_INT, repr=False)

    # -- construction ---------------------------------------------------------------------------

    @classmethod
    def hull(cls, points, transform=None, radius: float = 0.0) -> "Shape":
        """The convex hull of points, optionally moved by a 4x4 transform.

        points : (n, 3) array-like; transform : (4, 4) or None. A rigid transform becomes the pose;
        any other (scale, shear, mirror) is applied to the points first.
        """
        pts = _as_points(points)
        rotation, translation = np.eye(3), np.zeros(3)
        if transform is not None:
            rigid = _rigid_part(transform)
            if rigid is None:
                T = np.asarray(transform, dtype=np.float64)
                pts = pts @ T[:3, :3].T + T[:3, 3]
            else:
                rotation, translation = rigid
        centre = 0.5 * (pts.min(axis=0) + pts.max(axis=0))
        local = pts - centre
        translation = translation + rotation @ centre
        vertices, adj_start, adj, faces, dimension = _convex_hull(local)
        return cls._make("hull", vertices, adj_start, adj, faces, dimension, np.zeros(3), radius,
                         rotation, translation)

    @classmethod
    def sphere(cls, radius: float, center=(0.0, 0.0, 0.0)) -> "Shape":
        return cls._primitive("point", np.zeros(3), radius, _pose_translate(center), dimension=0)

    @classmethod
    def point(cls, p) -> "Shape":
        return cls._primitive("point", np.zeros(3), 0.0, _pose_translate(p), dimension=0)

    @classmethod
    def box(cls, extents, transform=None, radius: float = 0.0) -> "Shape":
        """A box of full extents (x, y, z) centred on its frame's origin."""
        half = 0.5 * _as_vector(extents, "box extents")
        if np.any(half < 0):
            raise ShapeError(f"box extents must be >= 0, got {list(2 * half)}")
        return cls._primitive("box", half, radius, transform, dimension=3)

    @classmethod
    def capsule(cls, radius: float, length: float, transform=None) -> "Shape":
        """A capsule along local z: the segment of `length` between the caps' centres, inflated."""
        return cls._primitive("segment", np.array([0.5 * length, 0.0, 0.0]), radius, transform, dimension=1)

    @classmethod
    def cylinder(cls, radius: float, height: float, transform=None) -> "Shape":
        """A cylinder along local z, centred on its frame's origin."""
        return cls._primitive("cylinder", np.array([radius, 0.5 * height, 0.0]), 0.0, transform, dimension=3)

    @classmethod
    def cone(cls, radius: float, height: float, transform=None) -> "Shape":
        """A cone along local z: base of `radius` at z = -height/2, apex at z = +height/2."""
        return cls._primitive("cone", np.array([radius, 0.5 * height, 0.0]), 0.0, transform, dimension=3)

    @classmethod
    def segment(cls, p, q, radius: float = 0.0) -> "Shape":
        """The segment from p to q (a capsule when radius > 0)."""
        p, q = _as_vector(p, "segment end"), _as_vector(q, "segment end")
        axis = q - p
        length = float(np.linalg.norm(axis))
        pose = np.eye(4)
        pose[:3, :3] = _rotation_from_z(axis / length if length > 0 else np.array([0.0, 0.0, 1.0]))
        pose[:3, 3] = 0.5 * (p + q)
        return cls._primitive("segment", np.array([0.5 * length, 0.0, 0.0]), radius, pose, dimension=1)

    @classmethod
    def _primitive(cls, kind, dims, radius, transform, dimension):
        rotation, translation = np.eye(3), np.zeros(3)
        if transform is not None:
            rigid = _rigid_part(transform)
            if rigid is None:
                raise ShapeError(f"a {kind} takes a rigid transform (rotation and translation only)")
            rotation, translation = rigid
        return cls._make(kind, np.zeros((0, 3)), _EMPTY_INT, _EMPTY_INT, None, dimension,
                         np.asarray(dims, dtype=np.float64), radius, rotation, translation)

    @classmethod
    def _make(cls, kind, vertices, adj_start, adj, faces, dimension, dims, radius, rotation, translation):
        radius = float(radius)
        if not (radius >= 0.0 and np.isfinite(radius)):
            raise ShapeError(f"inflation radius must be finite and >= 0, got {radius}")
        if not np.all(np.isfinite(dims)) or np.any(dims < 0):
            raise ShapeError(f"{kind} dimensions must be finite and >= 0")
        lo, hi = _local_box(kind, vertices, dims)
        extent = float(np.max(np.linalg.norm(vertices, axis=1))) if len(vertices) else float(np.linalg.norm(hi))
        size = float(np.linalg.norm(hi - lo + 2.0 * radius))
        vertices = np.ascontiguousarray(vertices, dtype=np.float64)
        adj = np.ascontiguousarray(adj, dtype=np.int32)
        cube = _cube_map(vertices) if kind == "hull" and len(adj) else _EMPTY_INT
        return cls(kind, vertices, np.ascontiguousarray(adj_start, dtype=np.int32), adj,
                   faces, int(dimension), np.asarray(dims, dtype=np.float64), radius,
                   np.ascontiguousarray(rotation, dtype=np.float64),
                   np.ascontiguousarray(translation, dtype=np.float64), extent, size, cube)

    # -- the compiled core's view -----------------------------------------------------------------

    def core(self) -> "_core.CoreShape":
        """This shape as the compiled core reads it (`gjkcli.engine._core.CoreShape`): pointers
        into the shape's own arrays, made on first use and kept, so that a query of one pair
        (`gjkcli.engine.query.query`) packs nothing per call. A Shape's arrays are not changed
        after it is made."""
        packed = self.__dict__.get("_core_shape")
        if packed is None:
            from gjkcli.engine import _core

            packed = _core.core_shape(
                KINDS[self.kind], np.ascontiguousarray(self.vertices, dtype=np.float64).reshape(-1, 3),
                np.ascontiguousarray(self.adj_start, dtype=np.int32),
                np.ascontiguousarray(self.adj, dtype=np.int32),
                np.ascontiguousarray(self._cube, dtype=np.int32), self.dims, self.radius,
                self._extent, self._size, self.rotation, self.translation)
            object.__setattr__(self, "_core_shape", packed)  # a cache, not a field: frozen stays true
        return packed

    # -- derived --------------------------------------------------------------------------------

    @property
    def n_vertices(self) -> int:
        """Hull vertex count (0 for primitives)."""
        return len(self.vertices)

    @property
    def size(self) -> float:
        """Diagonal of the local bounding box, inflation included: the shape's length scale."""
        return self._size

    @property
    def transform(self) -> np.ndarray:
        """The pose as a (4, 4) matrix."""
        T = np.eye(4)
        T[:3, :3] = self.rotation
        T[:3, 3] = self.translation
        return T

    @property
    def world_vertices(self) -> np.ndarray:
        """(n, 3) hull vertices in world coordinates."""
        return self.vertices @ self.rotation.T + self.translation

    @property
    def bounds(self) -> np.ndarray:
        """(2, 3) world axis-aligned bounding box, inflation included."""
        if self.kind == "hull":
            w = self.world_vertices
            lo, hi = w.min(axis=0), w.max(axis=0)
        else:
            lo_l, hi_l = _local_box(self.kind, self.vertices, self.dims)
            centre = self.rotation @ (0.5 * (lo_l + hi_l)) + self.translation
            half = np.abs(self.rotation) @ (0.5 * (hi_l - lo_l))
            lo, hi = centre - half, centre + half
        return np.array([lo - self.radius, hi + self.radius])

    def moved(self, transform) -> "Shape":
        """This shape with a further transform applied (4x4). Non-rigid ones rebuild a hull."""
        rigid = _rigid_part(transform)
        if rigid is None:
            if self.kind != "hull":
                raise ShapeError(f"a {self.kind} takes a rigid transform (rotation and translation only)")
            return Shape.hull(self.world_vertices, transform=transform, radius=self.radius)
        R, t = rigid
        return Shape(self.kind, self.vertices, self.adj_start, self.adj, self.faces, self.dimension,
                     self.dims, self.radius, R @ self.rotation, R @ self.translation + t,
                     self._extent, self._size, self._cube)

    def inflated(self, radius: float) -> "Shape":
        """The same core with another inflation radius."""
        return Shape._make(self.kind, self.vertices, self.adj_start, self.adj, self.faces,
                           self.dimension, self.dims, radius, self.rotation, self.translation)


class ShapeSet:
    """Many shapes packed into flat arrays, the form the compiled core reads.

    vertices : (N, 3) all hull vertices; voff : (k,) int64 first row of each shape
    adj_start : (N + k,) int32 each shape's CSR offsets; soff : (k,) int64 where they begin
    adj : (E,) int32; aoff : (k,) int64 where each shape's neighbours begin
    kind, nverts : (k,) int32; dims : (k, 3); radius, extent, size : (k,)
    rotation : (k, 9) row-major; translation : (k, 3)
    cube : (C,) int32 the hulls' cold-start tables (see _cube_map); cube_off : (k,) int64 where
    each begins; cube_k : (k,) int32 cells per cube-face side, 0 for none
    """

    def __init__(self, shapes):
        shapes = list(shapes)
        if not shapes:
            raise ShapeError("no shapes to pack")
        self.shapes = shapes
        k = len(shapes)
        nverts = np.fromiter((len(s.vertices) for s in shapes), dtype=np.int64, count=k)
        nadj = np.fromiter((len(s.adj) for s in shapes), dtype=np.int64, count=k)
        nstart = np.fromiter((len(s.adj_start) for s in shapes), dtype=np.int64, count=k)
        self.nverts = nverts.astype(np.int32)
        self.voff = np.concatenate([[0], np.cumsum(nverts)[:-1]]).astype(np.int64)
        self.aoff = np.concatenate([[0], np.cumsum(nadj)[:-1]]).astype(np.int64)
        self.soff = np.concatenate([[0], np.cumsum(nstart)[:-1]]).astype(np.int64)
        self.vertices = np.ascontiguousarray(np.concatenate([s.vertices for s in shapes]).reshape(-1, 3))
        if len(self.vertices) == 0:
            self.vertices = np.zeros((1, 3))
        self.adj_start = np.concatenate([s.adj_start for s in shapes] + [_EMPTY_INT]).astype(np.int32)
        self.adj = np.concatenate([s.adj for s in shapes] + [_EMPTY_INT]).astype(np.int32)
        self.kind = np.fromiter((KINDS[s.kind] for s in shapes), dtype=np.int32, count=k)
        self.dims = np.ascontiguousarray(np.stack([s.dims for s in shapes]))
        self.radius = np.fromiter((s.radius for s in shapes), dtype=np.float64, count=k)
        self.extent = np.fromiter((s._extent for s in shapes), dtype=np.float64, count=k)
        self.size = np.fromiter((s._size for s in shapes), dtype=np.float64, count=k)
        self.rotation = np.ascontiguousarray(np.stack([s.rotation.reshape(9) for s in shapes]))
        self.translation = np.ascontiguousarray(np.stack([s.translation for s in shapes]))
        ncube = np.fromiter((len(s._cube) for s in shapes), dtype=np.int64, count=k)
        self.cube_k = np.sqrt(ncube // 6).round().astype(np.int32)
        self.cube_off = np.concatenate([[0], np.cumsum(ncube)[:-1]]).astype(np.int64)
        self.cube = np.concatenate([s._cube for s in shapes] + [np.zeros(1, np.int32)]).astype(np.int32)

    def __len__(self) -> int:
        return len(self.shapes)


# -- many hulls at once ---------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Hulls:
    """The hulls of many parts (see `build_hulls`).

    shapes : list of Shape, or of the ShapeError a part's points raise
    lo, hi : (n, 3) float64 world bounds of each hull (NaN where there is none); exactly
        Shape.bounds
    area : (n,) float64 surface area of each solid hull (qhull's), NaN for flat hulls and errors
    """

    shapes: list
    lo: np.ndarray
    hi: np.ndarray
    area: np.ndarray


def build_hulls(points, *, jobs: int = 1, progress=None, triangles=None, small: bool = False,
                small_points: int | None = None) -> Hulls:
    """Convex hulls of many parts at once, each exactly what `Shape.hull(points_i)` builds.

    Parameters
    ----------
    points : sequence of (n_i, 3) float64
        Each part's vertices in world coordinates.
    jobs : int
        Worker processes for qhull (forked, and only from _PARALLEL_HULLS_FROM parts).
    triangles : sequence of (m_i, 3) int or None, optional
        Per part, triangles of its points that are already its hull's surface (a closed convex
        mesh), used in place of qhull's; None for a part whose hull qhull builds. The caller
        checks that they are (`gjkcli.mesh.convexity.hull_gaps` of the result measures how far
        the part's faces lie from the hull the triangles make): the hull is then the one qhull
        would give, up to coplanar points that the triangles keep as vertices. `area` is the
        triangles' area.
    small : bool
        Parts of 4 to SMALL_HULL_POINTS points get their hull from the compiled core
        (gjkcli/engine/csrc/smallhull.c, all parts in one call, no Python call per part), each
        checked there (closed, oriented, a sphere, every point inside within
        DEFAULT.small_hull_rel of the part's extent, or small_hull_ulps of the rounding of its
        coordinates where that is more); the parts it cannot prove, and larger
        ones, go to qhull. The hull is qhull's up to points within that tolerance of a face
        (a vertex of one may be a point on the other's face), not bit for bit. The route is
        decided per part, by its own points alone (`small_hull_triangles`), so a part's hull
        is the same whatever is built with it: a hull kept in the cache, or built in a Dask
        task's share, is the one a whole run builds.
    small_points : int, optional
        The largest parts `small` builds in the compiled core (default SMALL_HULL_POINTS).

    How: per part, one qhull call (scipy's ConvexHull) on the points centred as Shape.hull centres
    them; then, for all parts at once in NumPy, the hull vertex selection, the re-indexed
    triangles, the CSR vertex adjacency (in the sorted order of `_csr`) and the bounds; each
    Shape is then made by Shape._make, which derives the rest (extent, size, the cold-start
    table). Parts for which qhull fails, or that are nearly flat (volume <= 4 pi flat_rel
    extent^3, where Shape.hull's flatness test could decide otherwise), go through Shape.hull.
    Parts that give their own `triangles` skip qhull and are assembled in C
    (`_with_own_triangles`).
    """
    count = len(points)
    if small:  # the parts that give no triangles of their own get the compiled core's, where it can
        given = list(triangles) if triangles is not None else [None] * count
        rest = [k for k in range(count) if given[k] is None]
        for k, t in zip(rest, small_hull_triangles([points[k] for k in rest], small_points)):
            given[k] = t
        triangles = given
    if triangles is not None and any(t is not None for t in triangles):
        return _with_own_triangles(points, triangles, jobs, progress)
    return _qhull_hulls(points, jobs, progress)


def _qhull_hulls(points, jobs: int, progress) -> Hulls:
    """build_hulls of parts that give no triangles: qhull per part (see build_hulls)."""
    tell = progress or (lambda stage, done, total: None)
    count = len(points)
    lo, hi = np.full((count, 3), np.nan), np.full((count, 3), np.nan)
    area = np.full(count, np.nan)
    out: list = [None] * count
    if count == 0:
        return Hulls(out, lo, hi, area)
    pts = [np.ascontiguousarray(p, dtype=np.float64).reshape(-1, 3) for p in points]
    sizes = np.fromiter((len(p) for p in pts), dtype=np.int64, count=count)
    for k in np.flatnonzero(sizes == 0).tolist():
        out[k] = ShapeError("no points to build a hull from")
    good = np.flatnonzero(sizes > 0)
    if len(good) == 0:
        return Hulls(out, lo, hi, area)
    flat_pts = np.concatenate([pts[k] for k in good.tolist()])
    n_pts = sizes[good]
    starts = np.concatenate([[0], np.cumsum(n_pts)[:-1]])
    finite = np.isfinite(flat_pts).all(axis=1)
    p_lo = np.minimum.reduceat(flat_pts, starts, axis=0)
    p_hi = np.maximum.reduceat(flat_pts, starts, axis=0)
    centre = 0.5 * (p_lo + p_hi)
    local = flat_pts - np.repeat(centre, n_pts, axis=0)

    # qhull chunk by chunk, in worker processes when there are many parts; each chunk is
    # assembled here as it comes back, while the workers run the next ones. Chunks keep arrays
    # in cache and memory flat: one 22M-element pass at 100,000 parts was 3.5x slower per part.
    chunks = [(a, min(a + _HULL_CHUNK, len(good))) for a in range(0, len(good), _HULL_CHUNK)]
    args = [(local[starts[a]: starts[b - 1] + n_pts[b - 1]], n_pts[a:b], DEFAULT.flat_rel)
            for a, b in chunks]
    all_finite = np.add.reduceat(finite.astype(np.int64), starts) == n_pts
    solid = np.zeros(len(good), dtype=bool)
    shapes = []
    tell("hulls", 0, len(good))
    with _hull_results(args, jobs if len(good) >= _PARALLEL_HULLS_FROM else 1) as results:
        for (a, b), (simplices, n_simp, chunk_solid, hull_area) in zip(chunks, results):
            solid[a:b] = chunk_solid & all_finite[a:b]
            s0 = starts[a]
            made, h_lo, h_hi = _assemble(local[s0: starts[b - 1] + n_pts[b - 1]], centre[a:b],
                                         starts[a:b] - s0, n_pts[a:b], simplices, n_simp, solid[a:b])
            shapes.extend(made)
            ok = good[a:b][solid[a:b]]
            lo[ok], hi[ok] = h_lo, h_hi
            area[ok] = hull_area[solid[a:b]]
            tell("hulls", b, len(good))
    made = iter(shapes)  # the solid parts' shapes, in order
    for slot, k in enumerate(good.tolist()):
        if solid[slot]:
            out[k] = next(made)
            continue
        try:
            out[k] = Shape.hull(pts[k])
            lo[k], hi[k] = out[k].bounds
        except ShapeError as exc:
            out[k] = exc
        except (IndexError, ValueError) as exc:  # seen from 2 distinct points in an older shapes.py
            out[k] = ShapeError(f"no hull could be built ({type(exc).__name__}: {exc})")
    return Hulls(out, lo, hi, area)


def goes_to_qhull(points, up_to: int | None = None) -> bool:
    """Whether `small_hull_triangles` leaves a part of these points to qhull by their count
    alone: more than `up_to` (default SMALL_HULL_POINTS; SHARED_HULL_POINTS for a mesh several
    parts place) as given, and still more with repeated points merged where it merges them (up
    to REPEATS_UP_TO times the limit). A guess made before the hull is built (the reader's hint
    that SciPy will be needed): a part the core cannot prove goes to qhull too."""
    limit = SMALL_HULL_POINTS if up_to is None else int(up_to)
    n = len(points)
    if n <= limit:
        return False
    if n > REPEATS_UP_TO * limit:
        return True
    return len(np.unique(np.asarray(points, dtype=np.float64).reshape(-1, 3), axis=0)) > limit


def small_hull_triangles(points, up_to: int | None = None) -> list:
    """Per part, the triangles of its convex hull (point indices, outward) built and checked by
    the compiled core (see `build_hulls`' `small`), or None where qhull is to build it: parts of
    fewer than 4 or more than `up_to` (default SMALL_HULL_POINTS) points, flat or nearly flat
    ones, any part the core could not prove. Each part's answer depends on its own points only,
    never on the other parts of the call.

    A mesh whose faces were meshed apart (a STEP solid's) repeats the points of its seams, and
    the repeats count against the size above (a solid of 524 points given as 1,100): a part
    over that size as given, up to REPEATS_UP_TO times it, with repeated points, is tried again
    with each point once (its triangles then index the first copies), so that a run of such
    parts need not import scipy."""
    out = _small_hull_pass(points, up_to)
    fit = SMALL_HULL_POINTS if up_to is None else int(up_to)
    again = []
    # only parts too large as given: repeated points do not stop the core (a sphere's points
    # each given twice are built), so a smaller part it left is flat or unproven either way
    for k in (k for k, t in enumerate(out) if t is None and fit < len(points[k]) <= REPEATS_UP_TO * fit):
        pts = np.asarray(points[k], dtype=np.float64).reshape(-1, 3)
        first = np.sort(np.unique(pts, axis=0, return_index=True)[1])
        if 4 <= len(first) < len(pts):
            again.append((k, pts[first], first))
    for (k, _, first), tris in zip(again, _small_hull_pass([pts for _, pts, _ in again], up_to)):
        if tris is not None:
            out[k] = first[tris]
    return out


def _small_hull_pass(points, up_to: int | None) -> list:
    """small_hull_triangles' one pass over the parts as given."""
    from gjkcli.engine._mesh import small_hull_parts

    up_to = SMALL_HULL_POINTS if up_to is None else int(up_to)

    count = len(points)
    out: list = [None] * count
    pts = [np.ascontiguousarray(p, dtype=np.float64).reshape(-1, 3) for p in points]
    n_pts = np.fromiter((len(p) for p in pts), dtype=np.int64, count=count)
    small = (n_pts >= 4) & (n_pts <= up_to)
    mine = np.flatnonzero(small)
    if not len(mine):
        return out
    n = n_pts[mine]
    starts = np.concatenate([[0], np.cumsum(n)[:-1]])
    flat = np.concatenate([pts[k] for k in mine.tolist()])
    with np.errstate(invalid="ignore"):
        # centred as Shape.hull centres (on the box's centre); the solid threshold of _qhull_chunk
        centre = 0.5 * (np.minimum.reduceat(flat, starts, axis=0) + np.maximum.reduceat(flat, starts, axis=0))
        local = flat - np.repeat(centre, n, axis=0)
        extent = np.maximum.reduceat(np.abs(local).max(axis=1), starts)
        min_volume = 4.0 * np.pi * DEFAULT.flat_rel * extent**3
        # coplanar within the part's size, or within the rounding of its world coordinates
        # where that is more (a part 1e6 from the origin: its points are known to ~1e-10)
        reach = np.maximum.reduceat(np.abs(flat).max(axis=1), starts)
        tol = np.maximum(DEFAULT.small_hull_rel * extent,
                         DEFAULT.small_hull_ulps * np.finfo(np.float64).eps * reach)
    min_volume = np.where(np.isfinite(min_volume), min_volume, np.inf)
    ok, tris, t_start, n_tri = small_hull_parts(local, starts, n, up_to, tol, min_volume)
    for slot in np.flatnonzero(ok).tolist():
        out[int(mine[slot])] = tris[t_start[slot]: t_start[slot] + n_tri[slot]]
    return out


# The largest parts whose hull the compiled core builds (`build_hulls`' `small`), decided per
# part. Its quickhull finds faces by a scan, O(n^2) per part in the worst case (every point a
# hull vertex), yet measured against scipy's qhull with its assembly, in batches of 200 parts:
# random normal points 0.13 / 0.19 ms at 200 points, 1.3 / 0.5 ms at 1,024; points on a sphere
# 0.44 / 1.2 ms at 200, 3.2 / 2.5 ms at 700, 8.2 / 4.7 ms at 1,024. Up to here it costs at most
# twice qhull's time and spares scipy's import (0.3 to 0.7 s) to a run of a few such parts (`gjk
# check` of two 642-point spheres); beyond, qhull.
SMALL_HULL_POINTS = 1024
# A mesh that several parts place rigidly (an Instance: a STEP product's solid, an IFC
# representation map) has its hull built once for all of them (`gjkcli.pipeline.stages.hulls`),
# by the core up to this many points: the 1,106 points of the chair Revit's sample project
# places 28 times, 4 ms, where qhull's 1.6 ms needed scipy's import (0.25 to 0.5 s). At most
# four times the core's worst case at SMALL_HULL_POINTS (points on a sphere, O(n^2)), once a mesh.
SHARED_HULL_POINTS = 2048
# A part the core left is tried again with its repeated points merged when it has at most this
# many times SMALL_HULL_POINTS points as given: a solid meshed face by face repeats its seams'
# points (a box's corners three times), and the merge costs a sort of its points.
REPEATS_UP_TO = 4

@contextmanager
def _hull_results(args, jobs: int):
    """The `_qhull_chunk` results of `args`, in order: from forked workers when jobs > 1."""
    if jobs > 1 and len(args) > 1 and can_fork():
        from concurrent.futures import ProcessPoolExecutor
        import multiprocessing

        with ProcessPoolExecutor(min(jobs, len(args)),
                                 mp_context=multiprocessing.get_context("fork")) as pool:
            yield pool.map(_qhull_chunk, args)
    else:
        yield map(_qhull_chunk, args)


def _qhull_chunk(arg):
    """Worker: qhull per part of a chunk. Returns (simplices, counts, solid, area).

    simplices : (F, 3) int32, point indices local to each part, parts one after the other
    counts : (m,) int64 simplices per part (0 where the part is not solid)
    solid : (m,) bool qhull built a solid hull that Shape.hull would build too
    area : (m,) float64 the hull's surface area (0 where not solid)
    """
    from scipy.spatial import ConvexHull, QhullError

    local, n_pts, flat_rel = arg
    m = len(n_pts)
    ends = np.cumsum(n_pts).tolist()
    begins = [0] + ends[:-1]
    extent = np.maximum.reduceat(np.abs(local).max(axis=1), begins) if m else np.zeros(0)
    ok = np.isfinite(local).all(axis=1)
    finite = np.add.reduceat(ok.astype(np.int64), begins) == n_pts if m else np.zeros(0, bool)
    # the points' thickness along any axis is at least V / (3 pi extent^2) (they lie in a ball of
    # radius sqrt(3) extent); above flat_rel extent, Shape.hull builds this very hull
    min_volume = (4.0 * np.pi * flat_rel * extent**3).tolist()
    out, counts = [], np.zeros(m, dtype=np.int64)
    solid = np.zeros(m, dtype=bool)
    area = np.zeros(m)
    with no_gc():
        for k in range(m):
            if n_pts[k] < 4 or not finite[k]:
                continue
            try:
                hull = ConvexHull(local[begins[k]: ends[k]])
            except QhullError:
                continue
            if not hull.volume > min_volume[k]:
                continue
            out.append(hull.simplices)
            counts[k] = len(out[-1])
            solid[k] = True
            area[k] = hull.area
    simplices = np.concatenate(out).astype(np.int32) if out else np.zeros((0, 3), dtype=np.int32)
    return simplices, counts, solid, area


def _with_own_triangles(points, triangles, jobs, progress) -> Hulls:
    """build_hulls where some parts give their own triangles: those parts' hulls are made of
    them in C (`gjkcli.engine._mesh.own_hull_parts`, gjkcli/engine/csrc/ownhull.c: the used
    vertices in order, the triangles renumbered, the sorted adjacency, the box, as `_assemble`
    derives them from qhull's triangles, and the cold-start table of `_cube_map`), the others'
    by qhull. A part whose triangles are not
    usable (fewer than 4, an index out of range, a point not finite, no volume above the solid
    threshold of qhull's path) goes through Shape.hull, as a part qhull could not build."""
    count = len(points)
    pts = [np.ascontiguousarray(p, dtype=np.float64).reshape(-1, 3) for p in points]
    mine = [k for k in range(count) if triangles[k] is not None and len(pts[k])]
    rest = [k for k in range(count) if triangles[k] is None or not len(pts[k])]
    out: list = [None] * count
    lo, hi = np.full((count, 3), np.nan), np.full((count, 3), np.nan)
    area = np.full(count, np.nan)
    tell = progress or (lambda stage, done, total: None)
    tell("hulls", 0, count)
    if rest:
        # qhull's progress counts its own parts after the ones given triangles, which go in one call
        others = _qhull_hulls([pts[k] for k in rest], jobs,
                              progress and (lambda stage, done, total: tell(stage, len(mine) + done, count)))
        for slot, k in enumerate(rest):
            out[k] = others.shapes[slot]
        lo[rest], hi[rest], area[rest] = others.lo, others.hi, others.area
    if not mine:
        return Hulls(out, lo, hi, area)
    from gjkcli.engine._mesh import own_hull_parts

    n_pts = np.fromiter((len(pts[k]) for k in mine), dtype=np.int64, count=len(mine))
    starts = np.concatenate([[0], np.cumsum(n_pts)[:-1]])
    flat_pts = np.concatenate([pts[k] for k in mine])
    with np.errstate(invalid="ignore"):
        # centred as Shape.hull centres (on the box's centre); the solid threshold of _qhull_chunk
        centre = 0.5 * (np.minimum.reduceat(flat_pts, starts, axis=0) + np.maximum.reduceat(flat_pts, starts, axis=0))
        local = flat_pts - np.repeat(centre, n_pts, axis=0)
        extent = np.maximum.reduceat(np.abs(local).max(axis=1), starts)
        min_volume = 4.0 * np.pi * DEFAULT.flat_rel * extent**3
    tris = [np.asarray(triangles[k], dtype=np.int64).reshape(-1, 3) for k in mine]
    n_tri = np.fromiter((len(t) for t in tris), dtype=np.int64, count=len(mine))
    t_starts = np.concatenate([[0], np.cumsum(n_tri)[:-1]])
    r = own_hull_parts(local, starts, n_pts, np.concatenate(tris), t_starts, n_tri, min_volume,
                       DEFAULT.brute_force_below)
    ok = np.flatnonzero(r["ok"])
    hs, nh, as_, na = r["h_start"], r["n_hull"], r["a_start"], r["n_adj"]
    vertices, adj_start, adj, faces = r["vertices"], r["adj_start"], r["adj"], r["faces"]
    cube, cs, nc = r["cube"], r["c_start"].tolist(), r["n_cube"].tolist()
    span = r["hi"] - r["lo"]
    zeros3, eye = np.zeros(3), np.eye(3)
    zeros3.flags.writeable = False
    eye.flags.writeable = False
    centres = list(centre.copy())
    direct = _direct_shapes()
    hs_, nh_, as_l, na_ = hs.tolist(), nh.tolist(), as_.tolist(), na.tolist()
    ts_, nt_ = t_starts.tolist(), n_tri.tolist()
    extent_v = r["extent"].tolist()
    with no_gc():
        for j in ok.tolist():
            k = mine[j]
            v = vertices[hs_[j]: hs_[j] + nh_[j]]
            rows = adj_start[hs_[j] + j: hs_[j] + j + nh_[j] + 1]
            nbr = adj[as_l[j]: as_l[j] + na_[j]]
            tri = faces[ts_[j]: ts_[j] + nt_[j]]
            if direct:
                out[k] = Shape("hull", v, rows, nbr, tri, 3, zeros3, 0.0, eye, centres[j], extent_v[j],
                               math.sqrt(span[j] @ span[j]), cube[cs[j]: cs[j] + nc[j]] if nc[j] else _EMPTY_INT)
            else:  # Shape has fields this code does not know: Shape._make derives them (slower)
                out[k] = Shape._make("hull", v, rows, nbr, tri, 3, zeros3, 0.0, eye, centres[j])
            lo[k], hi[k] = r["lo"][j] + centre[j], r["hi"][j] + centre[j]
            area[k] = r["area"][j]
    for j in np.flatnonzero(~r["ok"]).tolist():  # as a part qhull could not build
        k = mine[j]
        try:
            out[k] = Shape.hull(pts[k])
            lo[k], hi[k] = out[k].bounds
            area[k] = np.nan
        except ShapeError as exc:
            out[k] = exc
        except (IndexError, ValueError) as exc:
            out[k] = ShapeError(f"no hull could be built ({type(exc).__name__}: {exc})")
    tell("hulls", count, count)
    return Hulls(out, lo, hi, area)


def _assemble(local, centre, starts, n_pts, simplices, n_simp, solid):
    """Shapes of the solid parts from their qhull simplices, every step vectorized over parts.

    Mirrors `_convex_hull` + Shape._make: hull vertices are the sorted unique simplex
    indices (scipy's ConvexHull.vertices), faces are the simplices re-indexed to them, the
    adjacency is the sorted unique directed edge list in CSR form. Returns (shapes, lo, hi):
    the solid parts' shapes in order, and their world bounds (Shape.bounds: min and max of
    vertices + translation, which rounding keeps equal to min(vertices) + translation).
    """
    m = int(solid.sum())
    n_simp = n_simp[solid]
    centre = centre[solid]
    if m == 0:
        return [], np.zeros((0, 3)), np.zeros((0, 3))
    part_of_simplex = np.repeat(np.arange(m), n_simp)
    g = simplices.astype(np.int64) + starts[solid][part_of_simplex][:, None]  # global point ids
    index = _sorted_unique(g.ravel())  # per part, its hull vertices in increasing local order
    part_of_vertex = np.searchsorted(starts[solid], index, side="right") - 1
    n_hull = np.bincount(part_of_vertex, minlength=m)
    h_starts = np.concatenate([[0], np.cumsum(n_hull)[:-1]])
    gid = np.full(len(local), -1, dtype=np.int64)
    gid[index] = np.arange(len(index))
    faces_g = gid[g]  # (F, 3) global hull vertex ids
    faces_local = (faces_g - h_starts[part_of_simplex][:, None]).astype(np.int32)
    vertices = local[index]
    # adjacency: both directions of every triangle edge, unique, sorted by (source, target)
    src, adj_local = _adjacency(faces_local, part_of_simplex, n_hull, h_starts)
    total = len(index)
    degree = np.bincount(src, minlength=total)
    # per part CSR offsets: n_hull + 1 entries starting at 0, laid out one part after another
    csum = np.concatenate([[0], np.cumsum(degree)])
    a_starts = csum[h_starts]  # where each part's neighbours begin in adj
    a_ends = csum[h_starts + n_hull]
    part_of_row = np.repeat(np.arange(m), n_hull + 1)
    row_start = np.concatenate([[0], np.cumsum(n_hull + 1)[:-1]])
    vertex_of_row = h_starts[part_of_row] + (np.arange(total + m) - row_start[part_of_row])
    adj_start = (csum[vertex_of_row] - a_starts[part_of_row]).astype(np.int32)
    v_lo = np.minimum.reduceat(vertices, h_starts, axis=0)
    v_hi = np.maximum.reduceat(vertices, h_starts, axis=0)
    f_starts = np.concatenate([[0], np.cumsum(n_simp)[:-1]]).tolist()
    zeros3, eye = np.zeros(3), np.eye(3)
    hs, he = h_starts.tolist(), (h_starts + n_hull).tolist()
    rs, re_ = row_start.tolist(), (row_start + n_hull + 1).tolist()
    as_, ae = a_starts.tolist(), a_ends.tolist()
    fe = (np.asarray(f_starts) + n_simp).tolist()
    centres = list(centre.copy())
    shapes = []
    if not _direct_shapes():
        # Shape has fields this code does not know: Shape._make derives them (slower)
        with no_gc():
            for k in range(m):
                shapes.append(Shape._make("hull", vertices[hs[k]: he[k]], adj_start[rs[k]: re_[k]],
                                          adj_local[as_[k]: ae[k]], faces_local[f_starts[k]: fe[k]],
                                          3, zeros3, 0.0, eye, centres[k]))
        return shapes, v_lo + centre, v_hi + centre
    # what Shape._make derives, for all parts at once: extent = max |v| (row norms, as _make takes
    # them); size = |hi - lo| per part as np.linalg.norm takes a vector's (sqrt of a dot), to be
    # bit-identical; the cold-start tables of `_cube_map`
    extent = np.maximum.reduceat(np.linalg.norm(vertices, axis=1), h_starts).tolist()
    span = v_hi - v_lo
    cubes = _cube_maps(vertices, h_starts, n_hull)
    zeros3.flags.writeable = False
    eye.flags.writeable = False
    with no_gc():
        for k in range(m):
            shapes.append(Shape("hull", vertices[hs[k]: he[k]], adj_start[rs[k]: re_[k]],
                                adj_local[as_[k]: ae[k]], faces_local[f_starts[k]: fe[k]], 3, zeros3,
                                0.0, eye, centres[k], extent[k], math.sqrt(span[k] @ span[k]),
                                cubes[k]))
    return shapes, v_lo + centre, v_hi + centre


# The fields of Shape that `_assemble` fills itself, in order. When Shape gains or changes one,
# `_direct_shapes` turns False and every Shape is made by Shape._make instead (correct, slower);
# tests/test_shapes.py fails until this list and `_cube_maps` follow.
_SHAPE_FIELDS = ("kind", "vertices", "adj_start", "adj", "faces", "dimension", "dims", "radius",
                 "rotation", "translation", "_extent", "_size", "_cube")


def _direct_shapes() -> bool:
    return tuple(f.name for f in dataclasses.fields(Shape)) == _SHAPE_FIELDS


def _cube_directions(k: int) -> np.ndarray:
    """The (6 k k, 3) cell-centre directions of a cube map of k x k cells per face (`_cube_map`)."""
    centre = -1.0 + (2.0 * np.arange(k) + 1.0) / k
    u, v = np.meshgrid(centre, centre, indexing="ij")
    dirs = np.empty((6, k, k, 3))
    for face in range(6):
        a = face // 2
        dirs[face, :, :, a] = -1.0 if face % 2 else 1.0
        dirs[face, :, :, (a + 1) % 3] = u
        dirs[face, :, :, (a + 2) % 3] = v
    return dirs.reshape(-1, 3)


def _cube_maps(vertices, h_starts, n_hull) -> list:
    """`_cube_map` of every part's hull vertices, parts of one size class at once.

    Each table entry is the first vertex of largest dot product with a cell's direction
    (np.argmax); padding a part's vertices with copies of its vertex 0 changes no first maximum.
    """
    m = len(n_hull)
    empty = np.zeros(0, dtype=np.int32)
    out = [empty] * m
    n = n_hull.astype(np.int64)
    k = np.where(n < DEFAULT.brute_force_below, 0,
                 np.minimum(16, np.maximum(1, np.ceil(np.sqrt(n) / 4.0)))).astype(np.int64)
    for kk in np.unique(k[k > 0]).tolist():
        dirs = _cube_directions(kk)
        members = np.flatnonzero(k == kk)
        width = ceil_bucket(n[members])
        for w in np.unique(width).tolist():
            group = members[width == w]
            if w * len(dirs) > (4 << 20):  # a large hull: its own table, in bounded chunks
                for part in group.tolist():
                    out[part] = _cube_map(vertices[h_starts[part]: h_starts[part] + n[part]])
                continue
            step = max(1, (4 << 20) // (w * len(dirs)))
            for c in range(0, len(group), step):
                g = group[c: c + step]
                H = vertices[h_starts[g][:, None] + padded_rows(n[g], w)]  # (B, w, 3)
                # (B, 6 k k, w): the argmax runs along contiguous rows
                best = np.argmax(np.matmul(dirs, H.transpose(0, 2, 1)), axis=2).astype(np.int32)
                for slot, part in enumerate(g.tolist()):
                    out[part] = best[slot]
    return out


def ceil_bucket(x: np.ndarray) -> np.ndarray:
    """x rounded up to a bucket size: 16, or a multiple of a quarter of x's octave (at most 25%
    of padding, and at most 4 sizes per octave), as int64."""
    x = np.maximum(np.asarray(x, dtype=np.int64), 16)
    step = 1 << np.maximum(np.floor(np.log2(x)).astype(np.int64) - 2, 0)
    return (x + step - 1) // step * step


def padded_rows(counts: np.ndarray, width: int) -> np.ndarray:
    """(B, width) indices 0..count-1 per row, then 0 repeated: padding by a real element."""
    cols = np.arange(width)[None, :]
    return np.where(cols < counts[:, None], cols, 0)


def _adjacency(faces, part_of_face, n_hull, h_starts, cells: int = 1 << 24):
    """The directed edges of many hulls' triangles, unique, ordered by part, source, target.

    faces : (F, 3) vertex indices local to each part; part_of_face : (F,) nondecreasing
    Returns (source, target): the source as a global hull vertex id (h_starts[part] + local),
    the target local to its part.

    Per part, an edge is the cell source * n + target of an n x n grid; the grids of consecutive
    parts are laid end to end in a boolean map of at most `cells` cells, the edges' cells are set,
    and the set cells, read in order, are the unique edges already sorted: no sort of the 6F keys
    (a sort was 70% of the assembly). A part whose own grid exceeds 4 x `cells` is sorted instead.
    """
    m = len(n_hull)
    n2 = n_hull.astype(np.int64) ** 2
    cum = np.cumsum(n2)
    f_start = np.searchsorted(part_of_face, np.arange(m + 1))
    sources, targets = [], []
    p0 = 0
    while p0 < m:
        base = cum[p0 - 1] if p0 else 0
        p1 = max(int(np.searchsorted(cum, base + cells, side="right")), p0 + 1)
        part = part_of_face[f_start[p0]: f_start[p1]]
        f = faces[f_start[p0]: f_start[p1]].astype(np.int64)
        n = n_hull[part].astype(np.int64)
        grid0 = np.concatenate([[0], np.cumsum(n2[p0:p1])[:-1]])  # where each part's grid starts
        at = grid0[part - p0]
        a, b, c = f[:, 0], f[:, 1], f[:, 2]
        keys = np.concatenate([at + a * n + b, at + b * n + c, at + c * n + a,
                               at + b * n + a, at + c * n + b, at + a * n + c])
        size = int(grid0[-1] + n2[p1 - 1])
        if size <= 4 * cells:
            marked = np.zeros(size, dtype=bool)
            marked[keys] = True
            cell = np.flatnonzero(marked)
        else:
            cell = _sorted_unique(keys)
        owner = p0 + np.searchsorted(grid0, cell, side="right") - 1
        rest = cell - grid0[owner - p0]
        sources.append(h_starts[owner] + rest // n_hull[owner])
        targets.append(rest % n_hull[owner])
        p0 = p1
    return np.concatenate(sources), np.concatenate(targets).astype(np.int32)


def _sorted_unique(x: np.ndarray) -> np.ndarray:
    """np.unique(x) for 1-D integers, by sorting: numpy 2.x's np.unique hashes first, which on
    millions of int64 keys measured 10x slower than a sort here. The stable sort (timsort) is
    2-3x faster than quicksort on keys that come part by part: it merges the sorted runs."""
    s = np.sort(x, kind="stable")
    keep = np.ones(len(s), dtype=bool)
    keep[1:] = s[1:] != s[:-1]
    return s[keep]


def can_fork() -> bool:
    """Whether worker processes may be forked here: the platform forks, and manifold3d (whose
    TBB worker threads a fork would copy mid-state) has not run in this process. A command forks
    its loaders and hull builders before its overlap volumes, so only a process that runs
    several scans (tests, a library's caller) goes on in one process after its first volume."""
    import os
    import sys

    return hasattr(os, "fork") and "manifold3d" not in sys.modules


# -- helpers -------------------------------------------------------------------------------------


def _as_points(points) -> np.ndarray:
    try:
        pts = np.asarray(points, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ShapeError(f"points must be numbers: {exc}") from exc
    if pts.ndim == 1 and pts.size == 3:
        pts = pts.reshape(1, 3)
    if pts.ndim != 2 or pts.shape[1] != 3:
        raise ShapeError(f"points must have shape (n, 3), got {pts.shape}")
    if len(pts) == 0:
        raise ShapeError("no points to build a hull from")
    if not np.all(np.isfinite(pts)):
        raise ShapeError("points hold NaN or infinite coordinates")
    return pts


def _as_vector(v, what) -> np.ndarray:
    v = np.asarray(v, dtype=np.float64).reshape(-1)
    if v.shape != (3,) or not np.all(np.isfinite(v)):
        raise ShapeError(f"{what} must be 3 finite numbers, got {v.tolist()}")
    return v


def _pose_translate(p) -> np.ndarray:
    T = np.eye(4)
    T[:3, 3] = _as_vector(p, "position")
    return T


def rigid_pose(transform):
    """(R, t) of a finite 4x4 transform that is a rotation plus a translation (to
    `DEFAULT.rigid_rel`, as Shape.hull decides), else None (a scale, a shear, a mirror, or not a
    finite 4x4 transform at all)."""
    try:
        return _rigid_part(transform)
    except ShapeError:
        return None


def _rigid_part(transform):
    """(R, t) of a 4x4 transform if it is a rotation plus a translation, else None."""
    T = np.asarray(transform, dtype=np.float64)
    if T.shape != (4, 4) or not np.all(np.isfinite(T)):
        raise ShapeError(f"a transform must be a finite 4x4 matrix, got shape {T.shape}")
    if not np.allclose(T[3], [0.0, 0.0, 0.0, 1.0], rtol=0.0, atol=DEFAULT.rigid_rel):
        raise ShapeError("a transform's last row must be [0, 0, 0, 1]")
    R = T[:3, :3]
    if np.allclose(R.T @ R, np.eye(3), rtol=0.0, atol=DEFAULT.rigid_rel) and np.linalg.det(R) > 0:
        return R.copy(), T[:3, 3].copy()
    return None


def _rotation_from_z(axis) -> np.ndarray:
    """A rotation taking local z to the unit vector `axis`."""
    z = np.asarray(axis, dtype=np.float64)
    helper = np.eye(3)[int(np.argmin(np.abs(z)))]
    x = np.cross(helper, z)
    x /= np.linalg.norm(x)
    y = np.cross(z, x)
    return np.column_stack([x, y, z])


def _local_box(kind, vertices, dims):
    """(lo, hi) of the core in its local frame, inflation excluded."""
    if kind == "hull":
        return vertices.min(axis=0), vertices.max(axis=0)
    if kind == "point":
        return np.zeros(3), np.zeros(3)
    if kind == "segment":
        h = np.array([0.0, 0.0, dims[0]])
        return -h, h
    if kind == "box":
        return -dims, dims.copy()
    r, h = dims[0], dims[1]  # cylinder and cone
    e = np.array([r, r, h])
    return -e, e


def _cube_map(vertices: np.ndarray) -> np.ndarray:
    """Cold-start table of a hull's support: (6 k k,) int32, or empty below brute_force_below.

    A cube map of directions: face 2a + (d_a < 0) of the major axis a, then a k x k grid over the
    other two coordinates divided by |d_a| (the layout of cube_cell in gjkcli/engine/csrc/support.c).
    Each cell holds the support vertex of its centre direction, so a cold climb starts within a
    cell's angular width (about 90/k degrees) of its answer instead of anywhere on the hull
    (as a dense precomputed support table, the idea of coal's and Bullet's hint, made once per
    hull). k ~ sqrt(n)/4 keeps the walk from the cell's vertex to a few steps; capped at 16.
    """
    n = len(vertices)
    if n < DEFAULT.brute_force_below:
        return _EMPTY_INT
    k = int(min(16, max(1, np.ceil(np.sqrt(n) / 4.0))))
    dirs = _cube_directions(k)
    best = np.full(len(dirs), -np.inf)
    index = np.zeros(len(dirs), dtype=np.int64)
    step = max(1, (1 << 22) // len(dirs))  # vertices per chunk: about 32 MB of dot products
    for lo in range(0, n, step):
        dots = dirs @ vertices[lo: lo + step].T
        arg = np.argmax(dots, axis=1)
        val = dots[np.arange(len(dirs)), arg]
        better = val > best
        best[better] = val[better]
        index[better] = arg[better] + lo
    return index.astype(np.int32)


def _csr(n: int, edges: np.ndarray):
    """CSR adjacency of n vertices from undirected edges (e, 2)."""
    both = np.concatenate([edges, edges[:, ::-1]]).astype(np.int64)
    # sorted unique keys src * n + dst (np.unique gives the same array but took 8 times as long on
    # the 1.2 million keys of a 100,000-vertex hull)
    key = _sorted_unique(both[:, 0] * n + both[:, 1])
    src, dst = key // n, key % n
    start = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=start[1:])
    return start.astype(np.int32), dst.astype(np.int32)


def _convex_hull(local: np.ndarray):
    """Hull of points centred near the origin: (vertices, adj_start, adj, faces, dimension).

    Solid hulls come from qhull; flat point sets get their polygon in the best-fit plane (the
    polygon's vertices keep their own coordinates, so the support stays exact), collinear ones
    a segment, coincident ones a point.
    """
    from scipy.spatial import ConvexHull, QhullError

    extent = float(np.max(np.abs(local)))
    if extent == 0.0:
        return local[:1].copy(), np.zeros(2, np.int32), _EMPTY_INT, None, 0
    # principal axes: thickness along the smallest one decides flatness
    sample = local if len(local) <= 20000 else local[np.linspace(0, len(local) - 1, 20000).astype(np.int64)]
    _, _, axes = np.linalg.svd(sample - sample.mean(axis=0), full_matrices=False)
    if len(axes) < 3:  # two points give one axis: complete the frame around it
        frame = _rotation_from_z(axes[0])
        axes = np.array([frame[:, 2], frame[:, 0], frame[:, 1]])
    coords = local @ axes.T
    span = coords.max(axis=0) - coords.min(axis=0)
    flat = DEFAULT.flat_rel * extent
    if span[2] > flat and len(local) >= 4:
        try:
            hull = ConvexHull(local)
        except QhullError:
            hull = None
        if hull is not None:
            index = hull.vertices
            remap = np.full(len(local), -1, dtype=np.int64)
            remap[index] = np.arange(len(index))
            faces = remap[hull.simplices].astype(np.int32)
            edges = np.concatenate([faces[:, [0, 1]], faces[:, [1, 2]], faces[:, [2, 0]]])
            start, adj = _csr(len(index), edges)
            return local[index].copy(), start, adj, faces, 3
    if span[1] > flat and len(local) >= 3:
        try:
            poly = ConvexHull(coords[:, :2])
        except QhullError:
            poly = None
        if poly is not None:
            ring = poly.vertices  # counter-clockwise order: the polygon's edges join neighbours
            n = len(ring)
            edges = np.column_stack([np.arange(n), (np.arange(n) + 1) % n])
            start, adj = _csr(n, edges)
            return local[ring].copy(), start, adj, None, 2
    ends = np.array([np.argmin(coords[:, 0]), np.argmax(coords[:, 0])])
    if span[0] > 0.0:
        return local[ends].copy(), np.array([0, 1, 2], np.int32), np.array([1, 0], np.int32), None, 1
    return local[:1].copy(), np.zeros(2, np.int32), _EMPTY_INT, None, 0
