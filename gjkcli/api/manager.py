"""A drop-in for trimesh's `CollisionManager`, answered by gjk's engine.

Replace ``from trimesh.collision import CollisionManager, scene_to_collision`` by
``from gjkcli import CollisionManager, scene_to_collision``: the methods, their arguments and
what they return (booleans, sets of names, sorted name tuples, contact and distance data) are
trimesh's. What a pair's answer means is gjk's, with three deliberate differences from trimesh +
FCL:

- **A part inside another is a collision.** FCL tests the surfaces of a non-convex mesh (its
  BVH), so a part wholly inside it, or a part that contains it, is "not in collision". Here the
  triangle test also decides containment (`gjkcli.engine.exact`), as `gjk check` does.
- **Scale in a transform is honoured.** trimesh hands the transform's 3x3 block to FCL as a
  rotation, which drops the scale (and casts to float32). Here a transform that is not rigid
  (scale, shear, mirror) is applied to the vertices.
- **The distance of overlapping parts is minus their depth**, for every part. FCL's signed
  distance gives that for convex meshes; for a non-convex one it is not the depth. Here it is
  the hulls' depth (EPA) where the hulls are the parts, and the triangle test's depth (a lower
  bound: the deepest point found inside the other part) elsewhere, 0.0 when it found none.

Which engine answers a pair is the command line's mode policy (`gjkcli.pipeline.policy`, mode
``auto``): each mesh's hull, and how far the mesh is from it (`gjkcli.mesh.convexity.hull_gaps`);
the hulls' answer where both parts are their hulls within the pair's touching band, the parts'
triangles (`gjkcli.engine.exact`) elsewhere. Meshes are prepared in bulk on the first query after
they are added (`gjkcli.engine.shapes.build_hulls`: one qhull call per mesh, the rest for all
meshes at once), so filling a manager costs little per object.

"In collision" means the parts share a point, or come within the touching band of each other
(gjk's *touching*): `DEFAULT.touching_rel` (1e-7) of the pair's size. Contact data holds one
contact per pair (FCL lists up to 100,000 triangle contacts for a non-convex mesh); its `index`
is a triangle of the mesh where the triangle test answered, -1 where the hulls did (as FCL gives
for convex meshes).

>>> import numpy as np, trimesh
>>> from gjkcli import CollisionManager
>>> manager = CollisionManager()
>>> _ = manager.add_object("table", trimesh.creation.box([2.0, 2.0, 0.1]))
>>> lift = np.eye(4); lift[2, 3] = 0.4
>>> _ = manager.add_object("cup", trimesh.creation.cylinder(0.3, 0.8), lift)
>>> manager.in_collision_internal(return_names=True)
(True, {('cup', 'table')})
>>> lift[2, 3] = 1.0
>>> manager.set_transform("cup", lift)
>>> distance, names = manager.min_distance_internal(return_names=True)
>>> round(distance, 9), names
(0.55, ('cup', 'table'))
"""
from __future__ import annotations

import math
import weakref
from typing import Any, Iterable

import numpy as np

from gjkcli.engine.exact import Mesh, exact_query
from gjkcli.engine.query import pairs
from gjkcli.engine.results import STATUS_CODES, BatchResult, Result, Status
from gjkcli.engine.shapes import Shape, build_hulls
from gjkcli.errors import ShapeError
from gjkcli.mesh.convexity import hull_gaps
from gjkcli.pipeline import policy
from gjkcli.scene.broadphase import candidate_pairs
from gjkcli.tolerances import DEFAULT

__all__ = ["CollisionManager", "ContactData", "DistanceData", "ManagedObject", "scene_to_collision"]

# The name trimesh gives the probe object of `in_collision_single` and `min_distance_single` in
# contact and distance data.
EXTERNAL = "__external"
# Pairs evaluated at a time while looking for the closest pair: the pairs are taken in the order
# of their boxes' distances, and a chunk whose boxes lie farther apart than the best pair found
# is never evaluated.
_CLOSEST_CHUNK = 8

# The engine's status code of a clear pair (every other answer counts as "in collision")
_CLEAR_CODE = next(k for k, s in STATUS_CODES.items() if s is Status.CLEAR)


class ContactData:
    """One colliding pair, as trimesh's `ContactData` reads.

    Attributes
    ----------
    names : set of str
        The two objects' names (``"__external"`` for the probe of `in_collision_single`).
    point : (3,) float64
        A point of the contact: midway between the deepest points of each part in the other.
    normal : (3,) float64
        Unit vector from the first name of the pair towards the second (`pair`): moving the
        second along it by `depth` separates the hulls.
    depth : float
        Penetration depth (0.0 when touching; a lower bound where the triangles answered).
    pair : tuple of str
        The names in the order of `normal`.
    """

    __slots__ = ("names", "pair", "point", "normal", "depth", "_index")

    def __init__(self, pair: tuple, point: np.ndarray, normal: np.ndarray, depth: float,
                 index: tuple = (-1, -1)):
        self.pair = tuple(pair)
        self.names = set(pair)
        self.point = point
        self.normal = normal
        self.depth = depth
        self._index = {pair[0]: index[0], pair[1]: index[1]}

    def index(self, name: str) -> int:
        """The triangle of object `name` at the contact (-1 where the hulls answered)."""
        return self._index[name]

    def __repr__(self) -> str:
        return f"ContactData(pair={self.pair}, depth={self.depth:.6g})"


class DistanceData:
    """The closest pair, as trimesh's `DistanceData` reads.

    Attributes
    ----------
    names : set of str
    distance : float
        Separation; minus the depth when the parts overlap.
    """

    __slots__ = ("names", "distance", "_points", "_index")

    def __init__(self, pair: tuple, distance: float, point_a: np.ndarray, point_b: np.ndarray,
                 index: tuple = (-1, -1)):
        self.names = set(pair)
        self.distance = distance
        self._points = {pair[0]: point_a, pair[1]: point_b}
        self._index = {pair[0]: index[0], pair[1]: index[1]}

    def point(self, name: str) -> np.ndarray:
        """(3,) float64: the closest point (the deepest point when overlapping) on object `name`."""
        return self._points[name]

    def index(self, name: str) -> int:
        """The triangle of object `name` at the closest point (-1 where the hulls answered)."""
        return self._index[name]

    def __repr__(self) -> str:
        return f"DistanceData(names={sorted(self.names)}, distance={self.distance:.6g})"


class _Geometry:
    """A mesh as the manager checks it, in its own frame: vertices and triangles, and once
    prepared its hull, how far the mesh lies from it (`hull_gaps`), whether it is closed and
    oriented (`_closed_oriented`: every directed edge once, and its reverse once), and its
    triangle hierarchy."""

    __slots__ = ("vertices", "faces", "hull", "gap", "closed", "_mesh", "_no_mesh", "__weakref__")

    def __init__(self, vertices: np.ndarray, faces: np.ndarray):
        self.vertices = vertices
        self.faces = faces
        self.hull: Shape | None = None
        self.gap = np.inf
        self.closed = False
        self._mesh: Mesh | None = None
        self._no_mesh = False

    def mesh(self) -> Mesh | None:
        """The triangles' hierarchy (`gjkcli.engine.exact.Mesh`), made on first use; None when
        the triangles cannot make one (the hull then answers)."""
        if self._mesh is None and not self._no_mesh:
            try:
                # a closed, oriented mesh needs no second look at its edges
                self._mesh = Mesh(self.vertices, self.faces, closed_oriented=self.closed)
            except ValueError:
                self._no_mesh = True
        return self._mesh


def _prepare(geometries: Iterable[_Geometry]) -> None:
    """Hulls and hull gaps of the geometries not prepared yet, all at once, by the pipeline's
    machinery: `build_hulls`, then `hull_gaps`.

    A closed, consistently oriented mesh with a sphere's topology offers its own triangles as
    its hull (no qhull call);
    `hull_gaps` then measures how far its faces lie inside the hull those triangles make, and
    where that is more than rounding (the mesh is not convex) qhull builds the hull instead.
    """
    todo = [g for g in geometries if g.hull is None]
    if not todo:
        return
    paired, closed = _closed_oriented([g.faces for g in todo], [len(g.vertices) for g in todo])
    for g, c in zip(todo, paired.tolist()):
        g.closed = c
    # only where hull_gaps tests every face against every vertex: above, it climbs the hull's
    # support map, which on the graph of a mesh that is not convex may stop at a local maximum
    closed = closed & np.array([len(g.vertices) <= _OWN_HULL_MAX_VERTICES and len(g.faces) <= _OWN_HULL_MAX_FACES
                        for g in todo], dtype=bool)
    hulls = build_hulls([g.vertices for g in todo],
                        triangles=[g.faces if c else None for g, c in zip(todo, closed.tolist())])
    gaps = hull_gaps(hulls, [g.faces for g in todo], [g.vertices for g in todo])
    size = np.linalg.norm(hulls.hi - hulls.lo, axis=1)
    own = closed & (gaps <= _OWN_HULL_REL * size)  # NaN size (no hull) compares False
    again = np.flatnonzero(~own & closed).tolist()  # offered, but not convex: qhull
    shapes = list(hulls.shapes)
    if again:
        redo = build_hulls([todo[k].vertices for k in again])
        redo_gaps = hull_gaps(redo, [todo[k].faces for k in again], [todo[k].vertices for k in again])
        for slot, k in enumerate(again):
            shapes[k], gaps[k] = redo.shapes[slot], redo_gaps[slot]
    for g, shape in zip(todo, shapes):
        if isinstance(shape, ShapeError):
            raise ShapeError(f"a mesh of the collision manager makes no shape: {shape}")
    for g, shape, gap in zip(todo, shapes, gaps.tolist()):
        g.hull, g.gap = shape, gap


# A closed mesh's triangles are taken as its hull when no vertex lies farther than this, relative
# to the mesh's size, outside any face's plane: rounding, not shape.
_OWN_HULL_REL = 1e-12
# The meshes that hull_gaps checks by brute force (gjkcli/mesh/convexity.py, _face_gaps): only
# these offer their own triangles as their hull.
_OWN_HULL_MAX_VERTICES = 256
_OWN_HULL_MAX_FACES = 4096


def _closed_oriented(faces: list, n_vertices: list) -> tuple:
    """(paired, sphere), (k,) bool each, for all meshes at once. paired: the mesh is closed and
    consistently oriented (every directed edge once, and its reverse once). sphere: besides, it
    could be the boundary of a convex polytope by its topology alone, a topological sphere
    (Euler characteristic V - E + F = 2 over its used vertices, so one body and no handle: an
    annulus, a torus, has 0)."""
    k = len(faces)
    out = np.zeros(k, dtype=bool)
    if k == 0:
        return out, out.copy()
    counts = np.array([len(f) for f in faces], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(np.asarray(n_vertices, dtype=np.int64))])
    F = np.concatenate([np.asarray(f, dtype=np.int64).reshape(-1, 3) for f in faces])
    if len(F) == 0:
        return out, out.copy()
    F = F + np.repeat(offsets[:-1], counts)[:, None]
    total = int(offsets[-1]) + 1
    a = F.ravel()
    b = F[:, [1, 2, 0]].ravel()
    forward = np.sort(a * total + b)
    backward = np.sort(b * total + a)
    # a key that repeats, or whose reverse is not there, marks its mesh (found by its source vertex)
    bad_keys = np.concatenate([forward[1:][forward[1:] == forward[:-1]], forward[forward != backward],
                               (a * total + b)[a == b]])
    bad_part = np.searchsorted(offsets, bad_keys // total, side="right") - 1
    ok = np.bincount(bad_part, minlength=k) == 0
    used = np.zeros(total, dtype=bool)
    used[a] = True
    n_used = np.add.reduceat(used[:-1].astype(np.int64), offsets[:-1]) if total > 1 else np.zeros(k, np.int64)
    n_used[np.diff(offsets) == 0] = 0
    out[:] = ok & (counts >= 4) & (n_used - counts // 2 == 2) & (counts % 2 == 0)
    return ok, out


class ManagedObject:
    """An object of a manager: its name, transform and geometry (what `add_object` returns).

    Attributes
    ----------
    name : str
    transform : (4, 4) float64
        As given (scale included).
    """

    __slots__ = ("name", "transform", "source", "geometry", "pose", "_shape", "_bounds")

    def __init__(self, name: str, geometry: _Geometry, transform: np.ndarray):
        self.name = name
        self.source = geometry
        self.place(transform)

    def place(self, transform: np.ndarray) -> None:
        """Put the object at `transform` (rigid: a pose; else applied to the vertices)."""
        geometry = self.source
        self.transform = transform
        if _is_rigid(transform):
            self.geometry, self.pose = geometry, transform
        else:  # scale, shear or mirror: applied to the vertices (trimesh + FCL drop it)
            baked = geometry.vertices @ transform[:3, :3].T + transform[:3, 3]
            faces = geometry.faces if np.linalg.det(transform[:3, :3]) > 0 else geometry.faces[:, ::-1]
            self.geometry, self.pose = _Geometry(baked, np.ascontiguousarray(faces)), _IDENTITY
        self._shape: Shape | None = None
        self._bounds: np.ndarray | None = None

    @property
    def shape(self) -> Shape:
        """The hull in its world pose (the manager prepares it first)."""
        if self._shape is None:
            hull = self.geometry.hull
            assert hull is not None, "geometry not prepared"
            if self.pose is _IDENTITY:
                self._shape = hull
            else:  # hull.moved(pose), the pose known rigid already (moved would check it again)
                R, t = self.pose[:3, :3], self.pose[:3, 3]
                self._shape = Shape(hull.kind, hull.vertices, hull.adj_start, hull.adj, hull.faces,
                                    hull.dimension, hull.dims, hull.radius, R @ hull.rotation,
                                    R @ hull.translation + t, hull._extent, hull._size, hull._cube)
        return self._shape

    @property
    def bounds(self) -> np.ndarray:
        """(2, 3) world box of the hull (and so of the part)."""
        if self._bounds is None:
            shape = self.shape
            if shape.kind == "hull" and shape.radius == 0.0:  # Shape.bounds, without its copies
                w = shape.vertices @ shape.rotation.T + shape.translation
                box = self._bounds = np.empty((2, 3))
                w.min(axis=0, out=box[0])
                w.max(axis=0, out=box[1])
            else:
                self._bounds = shape.bounds
        return self._bounds

    def __repr__(self) -> str:
        return f"ManagedObject(name={self.name!r})"


_IDENTITY = np.eye(4)
_IDENTITY.flags.writeable = False


def _is_rigid(T: np.ndarray) -> bool:
    """The 4x4 transform is a rotation and a translation: R^T R = I entrywise within rigid_rel,
    det R > 0, last row [0, 0, 0, 1]. In plain floats: a 3x3 check through NumPy costs more
    than a probe query."""
    a, b, c, _, d, e, f, _, g, h, i, _, w0, w1, w2, w3 = T.ravel().tolist()
    tol = DEFAULT.rigid_rel
    return (abs(a * a + d * d + g * g - 1.0) <= tol and abs(b * b + e * e + h * h - 1.0) <= tol
            and abs(c * c + f * f + i * i - 1.0) <= tol and abs(a * b + d * e + g * h) <= tol
            and abs(a * c + d * f + g * i) <= tol and abs(b * c + e * f + h * i) <= tol
            and a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g) > 0.0
            and abs(w0) <= tol and abs(w1) <= tol and abs(w2) <= tol and abs(w3 - 1.0) <= tol)


def _as_transform(transform) -> np.ndarray:
    if transform is None:
        return _IDENTITY
    T = np.array(transform, dtype=np.float64)
    if T.shape != (4, 4):
        raise ValueError("transform must be (4,4)!")
    if not np.isfinite(T).all():
        raise ValueError("transform must be finite")
    return T


class _Pairs:
    """The answers for m pairs (left[ia[k]], right[ib[k]]) of placed objects, by the mode policy.

    The hulls answer every pair in one batch call; `refine` has the triangles answer the pairs
    the policy sends to them (`needs_triangles`).

    colliding : (m,) bool
    signed : (m,) float64 distance, minus the depth when overlapping; for a pair not refined yet
        the hulls', a lower bound of the parts' (the parts lie inside their hulls)
    need : (m,) bool the pairs whose answer must come from the triangles (and not refined yet)
    exact : {k: Result} the triangles' answers
    """

    def __init__(self, left: list, right: list, ia: np.ndarray, ib: np.ndarray, want: str,
                 listed: bool):
        self.left, self.right, self.ia, self.ib, self.want = left, right, ia, ib, want
        m = len(ia)
        self.exact: dict[int, Result] = {}
        self.batch: BatchResult | None = None
        if not m:
            self.colliding = np.zeros(0, dtype=bool)
            self.signed = np.zeros(0)
            self.need = np.zeros(0, dtype=bool)
            return
        # one compiled call over the pairs, each object's hull read in its kept packed form
        objs_a = [left[k] for k in ia.tolist()]
        objs_b = [right[k] for k in ib.tolist()]
        b = self.batch = pairs([o.shape for o in objs_a], [o.shape for o in objs_b], want=want)
        hull_clear = b.status == _CLEAR_CODE
        gap_a = np.fromiter((o.geometry.gap for o in objs_a), dtype=np.float64, count=m)
        gap_b = np.fromiter((o.geometry.gap for o in objs_b), dtype=np.float64, count=m)
        coincident = policy.coincide(gap_a, gap_b, b.tolerance)
        self.need = policy.needs_triangles("auto", hull_clear, coincident,
                                           np.full(m, listed) | ~hull_clear, np.ones(m, dtype=bool))
        self.colliding = ~hull_clear
        self.signed = np.where(np.isnan(b.depth), b.distance, -b.depth)

    def refine(self, k: int) -> None:
        """Pair k answered by the triangles."""
        assert self.batch is not None
        self.need[k] = False
        a, c = self.left[int(self.ia[k])], self.right[int(self.ib[k])]
        mesh_a, mesh_c = a.geometry.mesh(), c.geometry.mesh()
        if mesh_a is None or mesh_c is None:
            return  # no triangles to test: the hulls' answer stands
        tol = float(self.batch.tolerance[k])
        if self.want == "verdict":
            # the distance query first (no depth search): most pairs asked are apart; the depth
            # only for those that overlap. Hulls clear of each other: no containment to probe.
            r = exact_query(mesh_a, mesh_c, pose_a=a.pose, pose_b=c.pose, tolerance=tol,
                            want="distance", hulls_apart=not self.colliding[k])
            if r.status is not Status.CLEAR:
                r = exact_query(mesh_a, mesh_c, pose_a=a.pose, pose_b=c.pose, tolerance=tol)
        else:
            r = exact_query(mesh_a, mesh_c, pose_a=a.pose, pose_b=c.pose, tolerance=tol, want="intersect")
        self.exact[k] = r
        self.colliding[k] = r.status is not Status.CLEAR
        self.signed[k] = r.signed_distance

    def refine_all(self) -> None:
        for k in np.flatnonzero(self.need).tolist():
            self.refine(k)

    def contact(self, k: int, names: tuple) -> ContactData:
        r = self.exact.get(k)
        if r is None:
            b = self.batch
            assert b is not None
            depth = float(b.depth[k]) if np.isfinite(b.depth[k]) else 0.0
            point = 0.5 * (b.point_a[k] + b.point_b[k])
            return ContactData(names, point, b.normal[k].copy(), max(depth, 0.0))
        depth = r.depth if r.depth is not None else 0.0
        return ContactData(names, 0.5 * (r.point_a + r.point_b), np.asarray(r.normal), depth,
                           (getattr(r, "triangle_a", -1), getattr(r, "triangle_b", -1)))

    def distance(self, k: int, names: tuple) -> DistanceData:
        r = self.exact.get(k)
        if r is None:
            b = self.batch
            assert b is not None
            return DistanceData(names, float(self.signed[k]), b.point_a[k].copy(), b.point_b[k].copy())
        return DistanceData(names, float(self.signed[k]), np.asarray(r.point_a), np.asarray(r.point_b),
                            (getattr(r, "triangle_a", -1), getattr(r, "triangle_b", -1)))


class CollisionManager:
    """A set of named objects checked against each other, against one probe object, or against
    another manager: trimesh's `CollisionManager` API, gjk's answers (see the module's
    docstring for the three deliberate differences).

    Examples
    --------
    >>> import numpy as np, trimesh
    >>> manager = CollisionManager()
    >>> ring = trimesh.creation.annulus(r_min=0.5, r_max=1.0, height=0.2)
    >>> _ = manager.add_object("ring", ring)
    >>> pin = trimesh.creation.cylinder(radius=0.1, height=0.1)   # inside the ring's hole
    >>> manager.in_collision_single(pin)
    False
    >>> move = np.eye(4); move[0, 3] = 0.75                      # inside the ring's body
    >>> manager.in_collision_single(pin, move, return_names=True)   # trimesh + FCL: False
    (True, {'ring'})
    >>> big = np.diag([10.0, 10.0, 10.0, 1.0])                   # a pin 10x larger
    >>> manager.in_collision_single(pin, big)                      # trimesh + FCL: False
    True
    """

    def __init__(self) -> None:
        self._objs: dict[str, ManagedObject] = {}
        # (objects in order, lo, hi) while no object is added, removed or moved
        self._state: tuple | None = None
        # geometry of the meshes given, by id, while the mesh lives and its data is unchanged
        self._geometries: dict[int, tuple] = {}

    # -- the objects ----------------------------------------------------------------------------

    def add_object(self, name: str, mesh: Any, transform=None) -> ManagedObject:
        """Add an object, or replace the object of that name.

        Parameters
        ----------
        name : str
        mesh : trimesh.Trimesh (or anything with ``vertices`` (n, 3) and ``faces`` (m, 3))
        transform : (4, 4) float, optional
            Where the mesh goes; scale, shear and mirror are applied to its vertices.
        """
        obj = ManagedObject(name, self._geometry(mesh), _as_transform(transform))
        self._objs.pop(name, None)  # a replaced object goes to the end, as a new one
        self._objs[name] = obj
        self._state = None
        return obj

    def remove_object(self, name: str) -> None:
        """Delete the object of that name (ValueError when there is none)."""
        if name not in self._objs:
            raise ValueError(f"{name} not in collision manager!")
        del self._objs[name]
        self._state = None

    def set_transform(self, name: str, transform) -> None:
        """Replace the transform of an object already in the manager."""
        if name not in self._objs:
            raise ValueError(f"{name} not in collision manager!")
        obj = self._objs[name]
        obj.place(_as_transform(transform))
        if self._state is not None:  # move its box in place: the others are unchanged
            objs, lo, hi, band, (g_lo, g_hi) = self._state
            _prepare([obj.geometry])  # a scaled transform made new vertices
            k = objs.index(obj)
            lo[k], hi[k] = obj.bounds
            band[k] = DEFAULT.touching_rel * float(np.linalg.norm(hi[k] - lo[k]))
            g_lo[:, k], g_hi[:, k] = lo[k] - band[k], hi[k] + band[k]

    # -- collisions ----------------------------------------------------------------------------

    def in_collision_single(self, mesh: Any, transform=None, return_names: bool = False,
                            return_data: bool = False):
        """Does one probe object collide with any object of the manager?

        Returns
        -------
        is_collision : bool
        names : set of str, with return_names
            The objects it collides with.
        contacts : list of ContactData, with return_data
            One per colliding object, named (object, "__external").
        """
        probe = ManagedObject(EXTERNAL, self._geometry(mesh), _as_transform(transform))
        objs = self._prepared([probe])
        if not objs:
            return _shaped(False, set(), [], return_names, return_data)
        assert self._state is not None
        g_lo, g_hi = self._state[4]
        p_lo, p_hi = probe.bounds
        # each box grown by its band, the probe's by its own: their sum covers the pair's band
        # (that of the larger part)
        p_lo, p_hi = p_lo.tolist(), p_hi.tolist()
        grow = DEFAULT.touching_rel * math.dist(p_lo, p_hi)
        p_lo, p_hi = [x - grow for x in p_lo], [x + grow for x in p_hi]
        hit = (g_lo[0] <= p_hi[0]) & (g_hi[0] >= p_lo[0])
        for axis in (1, 2):
            hit &= g_lo[axis] <= p_hi[axis]
            hit &= g_hi[axis] >= p_lo[axis]
        near = np.flatnonzero(hit)
        if not len(near):  # no box near the probe's: nothing to ask the engine
            return _shaped(False, set(), [], return_names, return_data)
        pairs = _Pairs(objs, [probe], near, np.zeros(len(near), dtype=np.int64),
                       "verdict" if return_data else "intersect", listed=False)
        pairs.refine_all()
        hit = np.flatnonzero(pairs.colliding)
        names = {objs[int(near[k])].name for k in hit.tolist()}
        data = [pairs.contact(k, (objs[int(near[k])].name, EXTERNAL)) for k in hit.tolist()] \
            if return_data else []
        return _shaped(bool(len(hit)), names, data, return_names, return_data)

    def in_collision_internal(self, return_names: bool = False, return_data: bool = False):
        """Does any pair of the manager's objects collide?

        Returns
        -------
        is_collision : bool
        names : set of (str, str), with return_names
            Each colliding pair, its names sorted.
        contacts : list of ContactData, with return_data
        """
        objs = self._prepared()
        i, j = self._candidates(objs)
        pairs = _Pairs(objs, objs, i, j, "verdict" if return_data else "intersect", listed=False)
        pairs.refine_all()
        hit = np.flatnonzero(pairs.colliding).tolist()
        names = {tuple(sorted((objs[int(i[k])].name, objs[int(j[k])].name))) for k in hit}
        data = [pairs.contact(k, (objs[int(i[k])].name, objs[int(j[k])].name)) for k in hit] \
            if return_data else []
        return _shaped(bool(hit), names, data, return_names, return_data)

    def in_collision_other(self, other_manager: "CollisionManager", return_names: bool = False,
                           return_data: bool = False):
        """Does any object of this manager collide with any object of another?

        Returns
        -------
        is_collision : bool
        names : set of (str, str), with return_names
            (name in this manager, name in the other) of each colliding pair.
        contacts : list of ContactData, with return_data
        """
        mine, theirs = self._prepared(), other_manager._prepared()
        i, j = _cross_candidates(self._boxes(mine), other_manager._boxes(theirs))
        pairs = _Pairs(mine, theirs, i, j, "verdict" if return_data else "intersect", listed=False)
        pairs.refine_all()
        hit = np.flatnonzero(pairs.colliding).tolist()
        names = {(mine[int(i[k])].name, theirs[int(j[k])].name) for k in hit}
        data = [pairs.contact(k, (mine[int(i[k])].name, theirs[int(j[k])].name)) for k in hit] \
            if return_data else []
        return _shaped(bool(hit), names, data, return_names, return_data)

    # -- distances -----------------------------------------------------------------------------

    def min_distance_single(self, mesh: Any, transform=None, return_name: bool = False,
                            return_data: bool = False):
        """The distance from a probe object to the nearest object of the manager (minus the
        depth of the deepest overlap when they overlap).

        Returns
        -------
        distance : float (inf for an empty manager)
        name : str, with return_name
        data : DistanceData, with return_data (names: the object and "__external")
        """
        probe = ManagedObject(EXTERNAL, self._geometry(mesh), _as_transform(transform))
        objs = self._prepared([probe])
        lo, hi = self._boxes(objs)
        lower = _box_distance(lo, hi, *probe.bounds)
        found = _closest(objs, [probe], np.arange(len(objs)), np.zeros(len(objs), dtype=np.int64), lower)
        if found is None:
            return _shaped_distance(np.inf, None, None, return_name, return_data)
        pairs, k = found
        name = objs[int(pairs.ia[k])].name
        data = pairs.distance(k, (name, EXTERNAL)) if return_data else None
        return _shaped_distance(float(pairs.signed[k]), name, data, return_name, return_data)

    def min_distance_internal(self, name: str | None = None, return_names: bool = False,
                              return_data: bool = False):
        """The least distance between two objects of the manager, or between the object `name`
        and the others.

        Returns
        -------
        distance : float (inf with fewer than two objects)
        names : (str, str), with return_names, sorted
        data : DistanceData, with return_data
        """
        objs = self._prepared()
        if name is not None:
            if name not in self._objs:
                raise ValueError(f"{name} not in collision manager!")
            me = [k for k, o in enumerate(objs) if o.name == name][0]
            others = np.array([k for k in range(len(objs)) if k != me], dtype=np.int64)
            i, j = np.full(len(others), me, dtype=np.int64), others
        else:
            i, j = np.triu_indices(len(objs), 1)
        lo, hi = self._boxes(objs)
        found = _closest(objs, objs, i, j, _pair_box_distance(lo, hi, lo, hi, i, j))
        if found is None:
            return _shaped_distance(np.inf, None, None, return_names, return_data)
        pairs, k = found
        pair = (objs[int(pairs.ia[k])].name, objs[int(pairs.ib[k])].name)
        data = pairs.distance(k, pair) if return_data else None
        return _shaped_distance(float(pairs.signed[k]), tuple(sorted(pair)), data, return_names,
                                return_data)

    def min_distance_other(self, other_manager: "CollisionManager", return_names: bool = False,
                           return_data: bool = False):
        """The least distance between an object of this manager and one of another.

        Returns
        -------
        distance : float
        names : (str, str), with return_names: (name here, name in the other)
        data : DistanceData, with return_data
        """
        mine, theirs = self._prepared(), other_manager._prepared()
        grid_i, grid_j = np.meshgrid(np.arange(len(mine)), np.arange(len(theirs)), indexing="ij")
        i, j = grid_i.ravel(), grid_j.ravel()
        (lo, hi), (lo2, hi2) = self._boxes(mine), other_manager._boxes(theirs)
        found = _closest(mine, theirs, i, j, _pair_box_distance(lo, hi, lo2, hi2, i, j))
        if found is None:
            return _shaped_distance(np.inf, None, None, return_names, return_data)
        pairs, k = found
        pair = (mine[int(pairs.ia[k])].name, theirs[int(pairs.ib[k])].name)
        data = pairs.distance(k, pair) if return_data else None
        return _shaped_distance(float(pairs.signed[k]), pair, data, return_names, return_data)

    # -- inside ----------------------------------------------------------------------------------

    def _geometry(self, mesh: Any) -> _Geometry:
        """The mesh's _Geometry, made once per mesh (while its data does not change)."""
        key = id(mesh)
        stamp = _stamp(mesh)
        hit = self._geometries.get(key)
        if hit is not None and hit[0]() is mesh and hit[1] == stamp:
            return hit[2]
        try:
            vertices = np.ascontiguousarray(mesh.vertices, dtype=np.float64).reshape(-1, 3)
            faces = np.ascontiguousarray(mesh.faces, dtype=np.int64).reshape(-1, 3)
        except (AttributeError, TypeError, ValueError) as exc:
            raise TypeError(f"expected a mesh with vertices (n, 3) and faces (m, 3), got "
                            f"{type(mesh).__name__}: {exc}") from None
        if len(vertices) == 0 or not np.all(np.isfinite(vertices)):
            raise ShapeError("a mesh needs vertices, all finite")
        if len(faces) and (faces.min() < 0 or faces.max() >= len(vertices)):
            raise ShapeError(f"faces point past the {len(vertices)} vertices")
        geometry = _Geometry(vertices, faces)
        cache = self._geometries

        def forget(_: object) -> None:  # the entry leaves the cache when the mesh is collected
            cache.pop(key, None)

        try:
            cache[key] = (weakref.ref(mesh, forget), stamp, geometry)
        except TypeError:  # not weakly referable: no cache
            pass
        return geometry

    def _prepared(self, extra: Iterable[ManagedObject] = ()) -> list:
        """The objects (a list, in insertion order) with their geometries prepared."""
        extra = list(extra)
        if self._state is None:
            objs = list(self._objs.values())
            _prepare([o.geometry for o in objs + extra])
            lo, hi = _world_boxes(objs)
            band = DEFAULT.touching_rel * np.linalg.norm(hi - lo, axis=1)
            # the boxes grown by their bands, transposed: a probe's box is tested one axis at a
            # time against contiguous rows
            grown = (np.ascontiguousarray((lo - band[:, None]).T), np.ascontiguousarray((hi + band[:, None]).T))
            self._state = (objs, lo, hi, band, grown)
        elif extra:
            _prepare([o.geometry for o in extra])
        return self._state[0]

    def _boxes(self, objs: list) -> tuple:
        """(lo, hi) (n, 3) world boxes of the objects `_prepared` returned."""
        assert self._state is not None and objs is self._state[0]
        return self._state[1], self._state[2]

    def _bands(self, objs: list) -> np.ndarray:
        """(n,) each object's touching band (touching_rel x its box diagonal)."""
        assert self._state is not None and objs is self._state[0]
        return self._state[3]

    def _candidates(self, objs: list) -> tuple:
        lo, hi = self._boxes(objs)
        return candidate_pairs(lo, hi, grow=self._bands(objs))


def _world_boxes(objs: list) -> tuple:
    """(lo, hi) (n, 3) world boxes of the objects' hulls (Shape.bounds), for all at once: the
    hull vertices of every object moved by its pose in one pass."""
    n = len(objs)
    if n == 0:
        return np.zeros((0, 3)), np.zeros((0, 3))
    shapes = [o.shape for o in objs]
    counts = np.fromiter((len(s.vertices) for s in shapes), dtype=np.int64, count=n)
    if not all(s.kind == "hull" and s.radius == 0.0 for s in shapes) or counts.min() == 0:
        b = np.array([s.bounds for s in shapes])
        return b[:, 0], b[:, 1]
    V = np.concatenate([s.vertices for s in shapes])
    R = np.stack([s.rotation for s in shapes])
    t = np.stack([s.translation for s in shapes])
    part = np.repeat(np.arange(n), counts)
    W = np.einsum("nij,nj->ni", R[part], V) + t[part]
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    lo, hi = np.minimum.reduceat(W, starts, axis=0), np.maximum.reduceat(W, starts, axis=0)
    for o, l, h in zip(objs, lo, hi):
        o._bounds = np.array([l, h])
    return lo, hi


def _stamp(mesh: Any):
    """What changes when the mesh's vertices or faces do: the hashes of the two arrays (a trimesh
    TrackedArray keeps a hash of its contents, recomputed only after a change; the mesh's own
    hash combines those of all its arrays, three times the cost), else the arrays' identities."""
    vertices, faces = getattr(mesh, "vertices", None), getattr(mesh, "faces", None)
    try:
        return (hash(vertices), hash(faces))
    except TypeError:
        return (id(vertices), id(faces))


def _box_distance(lo, hi, p_lo, p_hi) -> np.ndarray:
    """(n,) distance from each box to the box (p_lo, p_hi): a lower bound of the parts'."""
    gap = np.maximum(np.maximum(lo - p_hi, p_lo - hi), 0.0)
    return np.sqrt(np.einsum("ij,ij->i", gap, gap))


def _pair_box_distance(lo, hi, lo2, hi2, i, j) -> np.ndarray:
    gap = np.maximum(np.maximum(lo[i] - hi2[j], lo2[j] - hi[i]), 0.0)
    return np.sqrt(np.einsum("ij,ij->i", gap, gap))


def _cross_candidates(boxes_a: tuple, boxes_b: tuple) -> tuple:
    """Pairs (i in A, j in B) whose boxes, grown by the touching band, overlap."""
    (lo_a, hi_a), (lo_b, hi_b) = boxes_a, boxes_b
    n = len(lo_a)
    lo, hi = np.concatenate([lo_a, lo_b]), np.concatenate([hi_a, hi_b])
    i, j = candidate_pairs(lo, hi, grow=DEFAULT.touching_rel * np.linalg.norm(hi - lo, axis=1)) if len(lo) else \
        (np.zeros(0, np.int64), np.zeros(0, np.int64))
    keep = (i < n) & (j >= n)
    return i[keep], j[keep] - n


def _closest(left: list, right: list, ia: np.ndarray, ib: np.ndarray, lower: np.ndarray):
    """(the _Pairs holding the closest pair, its index there), or None when there is no pair.

    The pairs go in order of their boxes' distances (a lower bound of the parts'), a chunk at a
    time; every pair whose boxes overlap is evaluated (their parts may overlap, and the deepest
    overlap is the least signed distance), then chunks only while their boxes lie closer than
    the best pair found.
    """
    if len(ia) == 0:
        return None
    order = np.argsort(lower, kind="stable")
    overlapping = int(np.searchsorted(lower[order], 0.0, side="right"))
    best, where = np.inf, None
    start = 0
    while start < len(order):
        stop = max(overlapping, start + _CLOSEST_CHUNK) if start == 0 else start + _CLOSEST_CHUNK
        take = order[start:stop]
        pairs = _Pairs(left, right, ia[take], ib[take], "verdict", listed=True)
        # the hulls' signed distance bounds the parts' from below: the triangles are asked only
        # for pairs whose hulls come closer than the best answer so far
        settled = ~pairs.need
        if settled.any():
            k = int(np.flatnonzero(settled)[np.argmin(pairs.signed[settled])])
            if pairs.signed[k] < best:
                best, where = float(pairs.signed[k]), (pairs, k)
        todo = np.flatnonzero(pairs.need)
        for k in todo[np.argsort(pairs.signed[todo], kind="stable")].tolist():
            if not pairs.signed[k] < best:
                break
            pairs.refine(k)
            if pairs.signed[k] < best:
                best, where = float(pairs.signed[k]), (pairs, k)
        start = stop
        if start < len(order) and lower[order[start]] > best:
            break
    return where


def _shaped(result: bool, names: set, data: list, return_names: bool, return_data: bool):
    if return_names and return_data:
        return result, names, data
    if return_names:
        return result, names
    if return_data:
        return result, data
    return result


def _shaped_distance(distance: float, names, data, return_names: bool, return_data: bool):
    if return_names and return_data:
        return distance, names, data
    if return_names:
        return distance, names
    if return_data:
        return distance, data
    return distance


def scene_to_collision(scene: Any) -> tuple:
    """A manager holding every geometry node of a trimesh Scene, with its world transform.

    Returns
    -------
    manager : CollisionManager
    objects : {node name: ManagedObject}
    """
    manager = CollisionManager()
    objects = {}
    for node in scene.graph.nodes_geometry:
        T, geometry = scene.graph[node]
        objects[node] = manager.add_object(name=node, mesh=scene.geometry[geometry], transform=T)
    return manager, objects
