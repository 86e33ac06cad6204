"""Convex shapes: hull vertices with their adjacency, a rigid pose, an inflation radius; primitives.

A `Shape` is what the engine queries. Its vertices live in a local frame centred on their own
bounding box, so that a part far from the world origin keeps its precision; the pose carries it
back. Non-rigid transforms (scale, shear, mirror) are baked into the vertices before the hull is
built. Degenerate hulls are valid shapes: a flat polygon, a segment, a point (GJK needs only a
support function, qhull refuses them).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from gjkcli.errors import ShapeError
from gjkcli.tolerances import DEFAULT

# Shape kinds of the compiled core (gjkcli/csrc/gjk.h, enum gjk_kind).
KINDS = {"hull": 0, "point": 1, "segment": 2, "box": 3, "cylinder": 4, "cone": 5}

_EMPTY_INT = np.zeros(0, dtype=np.int32)


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


def _rigid_part(transform):
    """(R, t) of a 4x4 transform if it is a rotation plus a translation, else None."""
    T = np.asarray(transform, dtype=np.float64)
    if T.shape != (4, 4) or not np.all(np.isfinite(T)):
        raise ShapeError(f"a transform must be a finite 4x4 matrix, got shape {T.shape}")
    if not np.allclose(T[3], [0.0, 0.0, 0.0, 1.0], rtol=0.0, atol=1e-12):
        raise ShapeError("a transform's last row must be [0, 0, 0, 1]")
    R = T[:3, :3]
    if np.allclose(R.T @ R, np.eye(3), rtol=0.0, atol=1e-12) and np.linalg.det(R) > 0:
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
    other two coordinates divided by |d_a| (the layout of cube_cell in gjkcli/csrc/support.c).
    Each cell holds the support vertex of its centre direction, so a cold climb starts within a
    cell's angular width (about 90/k degrees) of its answer instead of anywhere on the hull
    (as a dense precomputed support table, the idea of coal's and Bullet's hint, made once per
    hull). k ~ sqrt(n)/4 keeps the walk from the cell's vertex to a few steps; capped at 16.
    """
    n = len(vertices)
    if n < DEFAULT.brute_force_below:
        return _EMPTY_INT
    k = int(min(16, max(1, np.ceil(np.sqrt(n) / 4.0))))
    centre = -1.0 + (2.0 * np.arange(k) + 1.0) / k
    u, v = np.meshgrid(centre, centre, indexing="ij")
    dirs = np.empty((6, k, k, 3))
    for face in range(6):
        a = face // 2
        dirs[face, :, :, a] = -1.0 if face % 2 else 1.0
        dirs[face, :, :, (a + 1) % 3] = u
        dirs[face, :, :, (a + 2) % 3] = v
    dirs = dirs.reshape(-1, 3)
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
    # sorted unique keys src * n + dst, by a sort and a neighbour compare: np.unique gives the
    # same array but took 8 times as long on the 1.2 million keys of a 100,000-vertex hull
    key = np.sort(both[:, 0] * n + both[:, 1])
    if len(key):
        keep = np.empty(len(key), dtype=bool)
        keep[0] = True
        np.not_equal(key[1:], key[:-1], out=keep[1:])
        key = key[keep]
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
