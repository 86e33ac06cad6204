"""A drop-in for trimesh's `CollisionManager`, answered by gjk's engine.

Replace ``from trimesh.collision import CollisionManager, scene_to_collision`` by
``from gjkcli import CollisionManager, scene_to_collision``: the methods, their arguments and
what they return (booleans, sets of names, sorted name tuples, contact and distance data) are
trimesh's, and so are the values programs test: the distance of overlapping parts is 0.0 unless
both are convex (then minus their depth, as FCL's `Convex` gives), the contact point and normal
of convex parts follow FCL's conventions, an empty mesh or a transform holding NaN is kept and
collides with nothing. `CollisionManager(signed=True)` gives gjk's own distance instead: minus
the depth for every overlap (below). What a pair's answer means is gjk's, with deliberate
differences from trimesh + FCL (docs/api.md lists them all):

- **A part inside another is a collision.** FCL tests the surfaces of a non-convex mesh (its
  BVH), so a part wholly inside it, or a part that contains it, is "not in collision". Here the
  triangle test also decides containment (`gjkcli.engine.exact`), as `gjk check` does.
- **Scale in a transform is honoured.** trimesh hands the transform's 3x3 block to FCL as a
  rotation, which drops the scale (and casts to float32). Here a transform that is not rigid
  (scale, shear, mirror) is applied to the vertices.
- **With signed=True, the distance of overlapping parts is minus their depth**, for every part.
  FCL's signed distance gives that for convex meshes; for a non-convex one it gives 0.0 (two
  meshes) or the depth of one triangle (a convex part against a mesh). Here it is
  the hulls' depth (EPA) where the hulls are the parts; elsewhere a lower bound certified by a
  point of one part inside the other: the depth of the vertex of either part deepest inside
  the other (`gjkcli.engine.exact.deepest_vertex`; the exact depth where it reaches the hulls'),
  or where no vertex lies deeper than the touching band, the deepest point the triangle test's
  search finds; 0.0 when it finds none.

Which engine answers a pair is the command line's mode policy (`gjkcli.pipeline.policy`, mode
``auto``): each mesh's hull, and how far the mesh is from it (`gjkcli.mesh.convexity.hull_gaps`);
the hulls' answer where both parts are their hulls within the pair's touching band, the parts'
triangles (`gjkcli.engine.exact`) elsewhere; a distance of parts whose hulls lie apart is also
the hulls' where the hulls' closest points lie on both parts' surfaces (the parts, inside their
hulls, are then exactly that far apart: beside a ring's outer wall, not over its hole). Meshes are prepared in bulk on the first query after
they are added, once per distinct content however many objects share it, by the pipeline's
preparation (`gjkcli.pipeline.prepared`: small meshes' hulls in the compiled core, all in one
call, one qhull call per larger mesh, the rest for all meshes at once), so filling a manager
costs little per object.

"In collision" means the parts share a point, or come within the touching band of each other
(gjk's *touching*): `DEFAULT.touching_rel` (1e-7) of the pair's size. Contact data holds one
contact per pair (FCL lists up to 100,000 triangle contacts for a non-convex mesh); its `index`
is a triangle of the mesh where the triangle test answered, -1 where the hulls did (as FCL gives
for convex meshes) or a vertex inside the other part did.

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

import itertools
import math
import warnings
import weakref
from typing import Any, Iterable, Literal, TypeVar, Union, cast, overload

import numpy as np

from gjkcli.engine.exact import deepest_vertex, exact_query, surface_distance
from gjkcli.engine.query import pairs
from gjkcli.engine.results import STATUS_CODES, BatchResult, Result, Status
from gjkcli.engine.shapes import Shape
from gjkcli.errors import ShapeError
from gjkcli.pipeline import policy
from gjkcli.pipeline.prepared import Geometry, Placements, prepare
from gjkcli.pipeline.prepared import geometry as geometry_of

from gjkcli.scene.broadphase import candidate_pairs
from gjkcli.tolerances import DEFAULT

__all__ = ["CollisionManager", "ContactData", "DistanceData", "ManagedObject", "Transform", "scene_to_collision"]

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
        A point of the contact, by FCL's convention where the hulls answered (both parts
        convex): midway between the vertex of each part deepest along the normal (the first
        such vertex in the mesh's order, where several are); elsewhere midway between the
        deepest points of each part in the other (`witness`).
    normal : (3,) float64
        Unit vector from the first name of the pair towards the second (`pair`): moving the
        second along it by `depth` separates the hulls. For parts whose boxes share their
        centre (no direction is preferred), FCL's choice: the least depth found from -x first.
    depth : float
        Penetration depth (0.0 when touching; a lower bound where the triangles answered).
    pair : tuple of str
        The names in the order of `normal`.
    status : str
        gjk's verdict for the pair (not in trimesh): "collision", "touching" or "undecided"
        (the triangle test and the run's settling policy, `gjkcli.pipeline.policy.settle`,
        proved neither; it counts as in collision).
    """

    __slots__ = ("names", "pair", "point", "normal", "depth", "status", "_index", "_witness")

    def __init__(self, pair: tuple, point: np.ndarray, normal: np.ndarray, depth: float,
                 index: tuple = (-1, -1), witness: tuple | None = None, status: str = "collision"):
        self.pair = tuple(pair)
        self.status = status
        self.names = set(pair)
        self.point = point
        self.normal = normal
        self.depth = depth
        self._index = {pair[0]: index[0], pair[1]: index[1]}
        witness = witness if witness is not None else (point, point)
        self._witness = {pair[0]: witness[0], pair[1]: witness[1]}

    def witness(self, name: str) -> np.ndarray:
        """(3,) float64 gjk's witness point of object `name`: its point deepest inside the other
        (EPA's, or the triangle test's), `depth` from the other's along the normal."""
        return self._witness[name]

    def index(self, name: str) -> int:
        """The triangle of object `name` at the contact (-1 where the hulls answered, or a vertex
        of one part inside the other)."""
        return self._index[name]

    def __repr__(self) -> str:
        return f"ContactData(pair={self.pair}, depth={self.depth:.6g})"


class DistanceData:
    """The closest pair, as trimesh's `DistanceData` reads.

    Attributes
    ----------
    names : set of str
    distance : float
        Separation; when the parts overlap 0.0, or minus the depth where both are convex or
        the manager is `signed`.
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
        """The triangle of object `name` at the closest point (-1 where the hulls answered, or a
        vertex of one part inside the other)."""
        return self._index[name]

    def __repr__(self) -> str:
        return f"DistanceData(names={sorted(self.names)}, distance={self.distance:.6g})"


def _prepare(geometries: Iterable[Geometry]) -> None:
    """Hulls and hull gaps of the geometries not prepared yet, all at once
    (`gjkcli.pipeline.prepared.prepare`, the pipeline's preparation); a mesh that makes no hull
    is an error of the manager, as trimesh's is."""
    geometries = list(geometries)
    prepare(geometries)
    for g in geometries:
        if g.error is not None:
            raise ShapeError(f"a mesh of the collision manager makes no shape: {g.error}")


class Transform:
    """A rigid placement as python-fcl's `fcl.Transform` reads: `getRotation()` (3, 3),
    `getTranslation()` (3,), `getQuatRotation()` (4,) as [w, x, y, z]; `matrix` (4, 4).

    `ManagedObject.getTransform` returns one; `ManagedObject.setTransform` takes one (or an
    `fcl.Transform`, or a (4, 4) matrix).
    """

    __slots__ = ("matrix",)

    def __init__(self, rotation=None, translation=None):
        self.matrix = np.eye(4)
        if rotation is not None:
            self.matrix[:3, :3] = rotation
        if translation is not None:
            self.matrix[:3, 3] = translation

    def getRotation(self) -> np.ndarray:  # noqa: N802 - python-fcl's name
        return self.matrix[:3, :3].copy()

    def getTranslation(self) -> np.ndarray:  # noqa: N802 - python-fcl's name
        return self.matrix[:3, 3].copy()

    def getQuatRotation(self) -> np.ndarray:  # noqa: N802 - python-fcl's name
        return _quaternion(self.matrix[:3, :3])

    def __array__(self, dtype=None, copy=None):
        return self.matrix.astype(dtype) if dtype is not None else self.matrix.copy()

    def __repr__(self) -> str:
        return f"Transform(translation={self.matrix[:3, 3].tolist()})"


def _quaternion(R: np.ndarray) -> np.ndarray:
    """[w, x, y, z] of a rotation matrix (Shepperd 1978: from its largest diagonal term, so that
    no division is by a small number)."""
    trace = R[0, 0] + R[1, 1] + R[2, 2]
    k = int(np.argmax([trace, R[0, 0], R[1, 1], R[2, 2]]))
    if k == 0:
        w = 0.5 * math.sqrt(max(1.0 + trace, 0.0))
        q = [w, (R[2, 1] - R[1, 2]) / (4 * w), (R[0, 2] - R[2, 0]) / (4 * w), (R[1, 0] - R[0, 1]) / (4 * w)]
    else:
        i = k - 1
        j, m = (i + 1) % 3, (i + 2) % 3
        r = 0.5 * math.sqrt(max(1.0 + R[i, i] - R[j, j] - R[m, m], 0.0))
        q = [0.0] * 4
        q[1 + i] = r
        q[0] = (R[m, j] - R[j, m]) / (4 * r)
        q[1 + j] = (R[j, i] + R[i, j]) / (4 * r)
        q[1 + m] = (R[m, i] + R[i, m]) / (4 * r)
    out = np.array(q)
    return out if out[0] >= 0 else -out


class ManagedObject:
    """An object of a manager: its name, transform and geometry (what `add_object` returns).

    Besides its attributes it answers python-fcl's `fcl.CollisionObject` methods that trimesh's
    `add_object` hands back: `getTranslation`, `getRotation`, `getQuatRotation`, `getTransform`,
    and `setTransform`, `setRotation`, `setTranslation` and `setQuatRotation`, which move the
    object in its manager (as `set_transform` does). Programs that reach into trimesh's manager
    read an object as `manager._objs[name]["obj"]` (NVIDIA's scene_synthesizer moves its objects
    so, then calls `manager._manager.update(obj)`): `obj["obj"]` is the object itself, and
    `obj["geom"]` its prepared geometry (trimesh's: the `fcl.BVHModel`).

    Attributes
    ----------
    name : str
    transform : (4, 4) float64
        As given (scale included).
    """

    __slots__ = ("name", "transform", "source", "geometry", "pose", "uid", "absent", "_shape", "_bounds",
                 "_manager", "__weakref__")

    def __init__(self, name: str, geometry: Geometry | None, transform: np.ndarray, manager=None):
        self.name = name
        self.source = geometry
        self.uid = next(_UIDS)  # increasing: a manager's objects in insertion order
        self._manager = weakref.ref(manager) if manager is not None else None
        self.place(transform)

    def place(self, transform: np.ndarray) -> None:
        """Put the object at `transform` (rigid: a pose; else applied to the vertices). An object
        without points (an empty mesh) or at a transform that is not finite is `absent`: it
        collides with nothing and is at no distance (trimesh + FCL answer False for it)."""
        geometry = self.source
        self.transform = transform
        values = transform.ravel().tolist()
        self.absent = geometry is None or not all(map(math.isfinite, values))
        if geometry is None or self.absent:  # never placed: its geometry is not read
            self.geometry, self.pose = cast(Geometry, geometry), transform
        elif _is_rigid(values):
            self.geometry, self.pose = geometry, transform
        else:  # scale, shear or mirror: applied to the vertices (trimesh + FCL drop it)
            baked = geometry.vertices @ transform[:3, :3].T + transform[:3, 3]
            faces = geometry.faces if np.linalg.det(transform[:3, :3]) > 0 else geometry.faces[:, ::-1]
            self.geometry, self.pose = Geometry(baked, np.ascontiguousarray(faces)), _IDENTITY
        self._shape: Shape | None = None
        self._bounds: np.ndarray | None = None

    # -- python-fcl's CollisionObject ------------------------------------------------------------

    def getTranslation(self) -> np.ndarray:  # noqa: N802 - python-fcl's name
        """(3,) float64 the translation of the object's transform."""
        return self.transform[:3, 3].copy()

    def getRotation(self) -> np.ndarray:  # noqa: N802 - python-fcl's name
        """(3, 3) float64 the transform's 3x3 block (a rotation for a rigid transform)."""
        return self.transform[:3, :3].copy()

    def getQuatRotation(self) -> np.ndarray:  # noqa: N802 - python-fcl's name
        """(4,) float64 [w, x, y, z] of the rotation (for a rigid transform)."""
        return _quaternion(self.transform[:3, :3])

    def getTransform(self) -> Transform:  # noqa: N802 - python-fcl's name
        """The object's placement, as an `fcl.Transform` reads."""
        return Transform(self.transform[:3, :3], self.transform[:3, 3])

    def setRotation(self, rotation) -> None:  # noqa: N802 - python-fcl's name
        """Turn the object to the (3, 3) `rotation`, its translation kept (python-fcl's)."""
        T = self.transform.copy()
        T[:3, :3] = np.asarray(rotation, dtype=np.float64).reshape(3, 3)
        self.setTransform(T)

    def setTranslation(self, translation) -> None:  # noqa: N802 - python-fcl's name
        """Move the object to the (3,) `translation`, its rotation kept (python-fcl's)."""
        T = self.transform.copy()
        T[:3, 3] = np.asarray(translation, dtype=np.float64).reshape(3)
        self.setTransform(T)

    def setQuatRotation(self, quaternion) -> None:  # noqa: N802 - python-fcl's name
        """Turn the object to the rotation of the [w, x, y, z] `quaternion`, its translation kept."""
        w, x, y, z = np.asarray(quaternion, dtype=np.float64).reshape(4) / np.linalg.norm(quaternion)
        self.setRotation([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                          [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                          [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])

    def __getitem__(self, key: str):
        """trimesh's `manager._objs[name]` entry: "obj" the object (python-fcl's CollisionObject
        there), "geom" its geometry (an `fcl.BVHModel` there; the prepared Geometry here)."""
        if key == "obj":
            return self
        if key == "geom":
            return self.geometry
        raise KeyError(key)

    def setTransform(self, transform) -> None:  # noqa: N802 - python-fcl's name
        """Move the object: a (4, 4) matrix, a `Transform` or an `fcl.Transform`. In its manager
        this is `set_transform(name, transform)`."""
        if hasattr(transform, "getRotation") and hasattr(transform, "getTranslation"):
            T = np.eye(4)
            T[:3, :3], T[:3, 3] = transform.getRotation(), transform.getTranslation()
            transform = T
        manager = self._manager() if self._manager is not None else None
        if manager is not None and manager._objs.get(self.name) is self:
            manager.set_transform(self.name, transform)
        else:  # removed, replaced, or a probe: only the object moves
            self.place(_as_transform(transform))

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
            hull = self.geometry.hull
            assert hull is not None, "geometry not prepared"
            if hull.kind == "hull" and hull.radius == 0.0:  # Shape.bounds, without the Shape
                R = self.pose[:3, :3]
                w = (R @ hull.rotation) @ self.geometry.hull_columns()  # (3, k): rows reduce contiguously
                box = self._bounds = np.empty((2, 3))
                w.min(axis=1, out=box[0])
                w.max(axis=1, out=box[1])
                box += R @ hull.translation + self.pose[:3, 3]
            else:
                self._bounds = self.shape.bounds
        return self._bounds

    def __repr__(self) -> str:
        return f"ManagedObject(name={self.name!r})"


_UIDS = itertools.count()

_IDENTITY = np.eye(4)
_IDENTITY.flags.writeable = False


def _is_rigid(values: list) -> bool:
    """The 4x4 transform, its 16 values row by row, is a rotation and a translation: R^T R = I
    entrywise within rigid_rel, det R > 0, last row [0, 0, 0, 1]. In plain floats: a 3x3 check
    through NumPy costs more than a probe query."""
    a, b, c, _, d, e, f, _, g, h, i, _, w0, w1, w2, w3 = values
    tol = DEFAULT.rigid_rel
    return (abs(a * a + d * d + g * g - 1.0) <= tol and abs(b * b + e * e + h * h - 1.0) <= tol
            and abs(c * c + f * f + i * i - 1.0) <= tol and abs(a * b + d * e + g * h) <= tol
            and abs(a * c + d * f + g * i) <= tol and abs(b * c + e * f + h * i) <= tol
            and a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g) > 0.0
            and abs(w0) <= tol and abs(w1) <= tol and abs(w2) <= tol and abs(w3 - 1.0) <= tol)


def _as_transform(transform) -> np.ndarray:
    """The (4, 4) float64 matrix of a transform: (4, 4), or (3, 4) with the row [0, 0, 0, 1]
    understood (trimesh's queries read only the top three rows). One that is not finite is
    kept, with a warning: its object is `absent` (trimesh + FCL answer False for it)."""
    if transform is None:
        return _IDENTITY
    T = np.array(transform, dtype=np.float64)
    if T.shape == (3, 4):
        T = np.vstack([T, [0.0, 0.0, 0.0, 1.0]])
    if T.shape != (4, 4):
        raise ValueError("transform must be (4,4)!")
    if not all(map(math.isfinite, T.ravel().tolist())):
        warnings.warn("a transform holds NaN or infinite values: its object collides with nothing "
                      "and is at no distance until it is given a finite one", stacklevel=3)
    return T


class _Pairs:
    """The answers for m pairs (objs_a[k], objs_b[k]) of placed objects, by the mode policy.

    The hulls answer every pair in one batch call; `refine` has the triangles answer the pairs
    the policy sends to them (`needs_triangles`).

    colliding : (m,) bool
    signed : (m,) float64 distance, minus the depth when overlapping; for a pair not refined yet
        the hulls', a lower bound of the parts' (the parts lie inside their hulls)
    need : (m,) bool the pairs whose answer must come from the triangles (and not refined yet)
    exact : {k: Result} the triangles' answers
    depth : the triangles search for the depth of an overlap (else, for a pair whose parts are
        not both convex, an overlap is only found: trimesh + FCL report 0.0 for it)
    contacts : the depth is a contact's (`in_collision_*(return_data=True)`, which programs
        compare with a threshold): the triangle test's search for the deepest point (its
        crossing triangles and their edges), not the deepest vertex, which a distance takes
    """

    def __init__(self, objs_a: list, objs_b: list, want: str, listed: bool, depth: bool = True,
                 contacts: bool = False):
        self.a, self.b, self.want, self.depth, self.contacts = objs_a, objs_b, want, depth, contacts
        m = len(objs_a)
        self.exact: dict[int, Result] = {}
        self.batch: BatchResult | None = None
        self._convex: np.ndarray | None = None
        if not m:
            self.colliding = np.zeros(0, dtype=bool)
            self.signed = np.zeros(0)
            self.need = np.zeros(0, dtype=bool)
            return
        # one compiled call over the pairs, each object's hull read in its kept packed form
        b = self.batch = pairs([o.shape for o in objs_a], [o.shape for o in objs_b], want=want)
        hull_clear = b.status == _CLEAR_CODE
        self.colliding = ~hull_clear
        self.signed = np.where(np.isnan(b.depth), b.distance, -b.depth)
        if not listed and hull_clear.all():  # the policy sends no clear pair that is not listed
            self.need = np.zeros(m, dtype=bool)  # to the triangles (most probes' few pairs)
            return
        gap_a = np.array([o.geometry.gap for o in objs_a])
        gap_b = np.array([o.geometry.gap for o in objs_b])
        coincident = policy.coincide(gap_a, gap_b, b.tolerance)
        # every pair has triangles; the hulls' collisions are asked of the triangles in any case
        self.need = policy.needs_triangles("auto", hull_clear, coincident, np.full(m, listed),
                                           np.ones(m, dtype=bool))

    def refine(self, k: int) -> None:
        """Pair k answered by the triangles."""
        assert self.batch is not None
        self.need[k] = False
        a, c = self.a[k], self.b[k]
        if self.want == "verdict" and not self.colliding[k] and self.on_parts(k):
            return  # the hulls' distance is the parts'
        mesh_a, mesh_c = a.geometry.mesh(), c.geometry.mesh()
        if mesh_a is None or mesh_c is None:
            return  # no triangles to test: the hulls' answer stands
        tol = float(self.batch.tolerance[k])
        if self.want == "verdict":
            # the distance query first (no depth search): most pairs asked are apart; the depth
            # only for those that overlap. Hulls clear of each other: no containment to probe.
            r = exact_query(mesh_a, mesh_c, pose_a=a.pose, pose_b=c.pose, tolerance=tol,
                            want="distance", hulls_apart=not self.colliding[k])
            if r.status is not Status.CLEAR and (self.depth or self.convex[k]):
                # a vertex of one part deeper than the band inside the other proves the collision
                # and bounds its depth; the verdict's search along the crossing faces for a
                # deeper point (many times the cost) only where no vertex does, or for a contact
                # (an edge through the other part is deeper than any vertex: a box pushed 0.006
                # into a ring's wall, its deepest corner 0.0016 in)
                r = (None if self.contacts else
                     deepest_vertex(mesh_a, mesh_c, pose_a=a.pose, pose_b=c.pose, tolerance=tol)) or \
                    exact_query(mesh_a, mesh_c, pose_a=a.pose, pose_b=c.pose, tolerance=tol)
        else:
            r = exact_query(mesh_a, mesh_c, pose_a=a.pose, pose_b=c.pose, tolerance=tol, want="intersect")
        # a pair the triangle test leaves undecided: the run's settling policy, the same as
        # every command's (a fit by its common solid, an open part by how deep it reaches)
        r = policy.settle(r, mesh_a, mesh_c, a.pose, c.pose)
        self.exact[k] = r
        self.colliding[k] = r.status is not Status.CLEAR
        self.signed[k] = r.signed_distance

    @property
    def convex(self) -> np.ndarray:
        """(m,) bool: both parts of the pair are convex (closed, and their hulls within the pair's
        touching band): the pairs trimesh hands to FCL as two `fcl.Convex`, whose distance is
        minus the depth when they overlap (for any other pair FCL's is 0.0)."""
        if self._convex is None:
            b = self.batch
            if b is None:
                self._convex = np.zeros(0, dtype=bool)
            else:
                closed = np.array([o.geometry.closed and p.geometry.closed for o, p in zip(self.a, self.b)],
                                  dtype=bool)
                gap_a = np.array([o.geometry.gap for o in self.a])
                gap_b = np.array([o.geometry.gap for o in self.b])
                self._convex = closed & policy.coincide(gap_a, gap_b, b.tolerance)
        return self._convex

    def value(self, k: int, signed: bool) -> float:
        """The distance of pair k reported: `signed`, gjk's (minus the depth when the parts
        overlap); else trimesh + FCL's, the same but 0.0 for overlapping parts not both convex."""
        d = float(self.signed[k])
        return d if signed or d >= 0.0 or self.convex[k] else 0.0

    def on_parts(self, k: int) -> bool:
        """The hulls of pair k lie apart and their closest points lie on the parts' surfaces
        (within the exact test's snap; a part that is its hull within the snap needs no look):
        the parts lie inside their hulls, so they are no closer than the hulls, and these two
        points of theirs are the hulls' distance apart. The distance is then the hulls', and
        the triangles' search for it is not needed (a ring's outer wall, which is its hull's)."""
        b = self.batch
        assert b is not None
        for obj, point in ((self.a[k], b.point_a[k]), (self.b[k], b.point_b[k])):
            geometry = obj.geometry
            snap = DEFAULT.exact_snap_rel * float(np.linalg.norm(geometry.bounds[1] - geometry.bounds[0]))
            if geometry.gap <= snap:
                continue
            mesh = geometry.mesh()
            if mesh is None or surface_distance(mesh, point, obj.pose)[0] > snap:
                return False
        return True

    def refine_all(self) -> None:
        for k in np.flatnonzero(self.need).tolist():
            self.refine(k)

    def contact(self, k: int, names: tuple) -> ContactData:
        r = self.exact.get(k)
        if r is None:
            b = self.batch
            assert b is not None
            depth = float(b.depth[k]) if np.isfinite(b.depth[k]) else 0.0
            a, c = self.a[k], self.b[k]
            witness = (b.point_a[k].copy(), b.point_b[k].copy())
            normal = b.normal[k].copy()
            size = float(np.linalg.norm(a.bounds[1] - a.bounds[0]) + np.linalg.norm(c.bounds[1] - c.bounds[0]))
            if depth > 0.0 and np.linalg.norm(a.bounds.sum(axis=0) - c.bounds.sum(axis=0)) <= \
                    DEFAULT.touching_rel * size:
                # FCL's MPR starts from the centres' difference, nudged along x when they
                # coincide: the least depth with the second part moved a hair along -x
                shift = np.eye(4)
                shift[0, 3] = -DEFAULT.nudge_rel * size
                nudged = pairs([a.shape], [c.shape.moved(shift)], want="verdict")
                if np.isfinite(nudged.depth[0]):
                    normal = nudged.normal[0].copy()
            point = 0.5 * (_support_vertex(a, normal, size) + _support_vertex(c, -normal, size))
            return ContactData(names, point, normal, max(depth, 0.0), witness=witness,
                               status=self.hull_status(k).value)
        depth = r.depth if r.depth is not None else 0.0
        witness = (np.asarray(r.point_a), np.asarray(r.point_b))
        return ContactData(names, 0.5 * (witness[0] + witness[1]), np.asarray(r.normal), depth,
                           (getattr(r, "triangle_a", -1), getattr(r, "triangle_b", -1)), witness,
                           status=r.status.value)

    def distance(self, k: int, names: tuple, signed: bool) -> DistanceData:
        r = self.exact.get(k)
        d = self.value(k, signed)
        if r is None:
            b = self.batch
            assert b is not None
            return DistanceData(names, d, b.point_a[k].copy(), b.point_b[k].copy())
        return DistanceData(names, d, np.asarray(r.point_a), np.asarray(r.point_b),
                            (getattr(r, "triangle_a", -1), getattr(r, "triangle_b", -1)))

    def hull_status(self, k: int) -> Status:
        """The hulls' verdict of pair k (clearance has no meaning here: clear)."""
        assert self.batch is not None
        got = STATUS_CODES[int(self.batch.status[k])]
        return Status.CLEAR if got is Status.CLEARANCE else got


class _BroadPhase:
    """`CollisionManager._manager`: python-fcl's `DynamicAABBTreeCollisionManager.update` and
    `setup`, which have nothing to do here (an object's `set*` methods move it in its manager)."""

    def update(self, obj=None, *args) -> None:
        return None

    def setup(self) -> None:
        return None


class CollisionManager:
    """A set of named objects checked against each other, against one probe object, or against
    another manager: trimesh's `CollisionManager` API, gjk's answers (see the module's
    docstring for the deliberate differences).

    Parameters
    ----------
    signed : bool
        False (trimesh + FCL's values): the distance of overlapping parts is 0.0 unless both are
        convex, then minus their depth. True: minus the depth for every overlap (for parts not
        both convex a lower bound certified by a point of one inside the other), so that a
        program can tell how deep; the search for the depth costs more than finding the overlap.

    The manager keeps its own copy of each mesh it is given (changing the mesh afterwards
    changes nothing here), prepared once per distinct content: a mesh added 200 times is one
    hull and one triangle hierarchy. Moving an object changes its transform, its box in the
    broad phase and the answers of its own pairs, nothing else: the other pairs' answers are
    kept until one of their objects moves.

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

    def __init__(self, signed: bool = False) -> None:
        # distances of overlapping parts: gjk's minus the depth (signed), else trimesh + FCL's
        self.signed = bool(signed)
        self._objs: dict[str, ManagedObject] = {}
        # the objects placed, their boxes and which boxes meet: made on the first query after an
        # object is added or removed, updated in place when one moves
        self._state: _Placed | None = None
        # answers of pairs of objects, per kind of question: {uid: {uid: (_Pairs, k)}}, both
        # ways; an object's entries leave when it moves or leaves
        self._answered: dict[str, dict] = {mode: {} for mode in _MODES}

    @property
    def _manager(self) -> "_BroadPhase":
        """trimesh's `manager._manager` (python-fcl's broad phase), for programs that move an
        object through `_objs[name]["obj"]` and then call `_manager.update(obj)`: the object moved
        in this manager already, so `update` and `setup` have nothing left to do."""
        return _BroadPhase()

    # -- the objects ----------------------------------------------------------------------------

    def add_object(self, name: str, mesh: Any, transform=None) -> ManagedObject:
        """Add an object, or replace the object of that name.

        Parameters
        ----------
        name : str
        mesh : trimesh.Trimesh (or anything with ``vertices`` (n, 3) and ``faces`` (m, 3))
            Copied: changing it afterwards does not change the manager's answers.
        transform : (4, 4) float, optional
            Where the mesh goes; scale, shear and mirror are applied to its vertices.

        Returns
        -------
        ManagedObject
            With python-fcl's `getTranslation`, `getRotation`, `getTransform`, `setTransform`.
        """
        obj = ManagedObject(name, self._geometry(mesh), _as_transform(transform), self)
        old = self._objs.pop(name, None)  # a replaced object goes to the end, as a new one
        if old is not None:
            self._forget(old.uid)
        self._objs[name] = obj
        self._state = None
        return obj

    def remove_object(self, name: str) -> None:
        """Delete the object of that name (ValueError when there is none)."""
        if name not in self._objs:
            raise ValueError(f"{name} not in collision manager!")
        self._forget(self._objs.pop(name).uid)
        self._state = None

    def set_transform(self, name: str, transform) -> None:
        """Replace the transform of an object already in the manager."""
        if name not in self._objs:
            raise ValueError(f"{name} not in collision manager!")
        obj = self._objs[name]
        was_absent = obj.absent
        obj.place(_as_transform(transform))
        self._forget(obj.uid)
        if was_absent or obj.absent:  # it leaves or joins the placed objects
            self._state = None
        elif self._state is not None:  # move its box in place: the others are unchanged
            _prepare([obj.geometry])  # a scaled transform made new vertices
            self._state.move(self._state.at[obj.uid])

    # -- collisions ----------------------------------------------------------------------------

    @overload
    def in_collision_single(self, mesh: Any, transform: Any = ..., return_names: Literal[False] = ...,
                            return_data: Literal[False] = ...) -> bool: ...
    @overload
    def in_collision_single(self, mesh: Any, transform: Any, return_names: Literal[True],
                            return_data: Literal[False] = ...) -> tuple[bool, set[str]]: ...
    @overload
    def in_collision_single(self, mesh: Any, transform: Any = ..., *, return_names: Literal[True],
                            return_data: Literal[False] = ...) -> tuple[bool, set[str]]: ...
    @overload
    def in_collision_single(self, mesh: Any, transform: Any = ..., return_names: Literal[False] = ..., *,
                            return_data: Literal[True]) -> tuple[bool, list[ContactData]]: ...
    @overload
    def in_collision_single(self, mesh: Any, transform: Any, return_names: Literal[True],
                            return_data: Literal[True]) -> tuple[bool, set[str], list[ContactData]]: ...
    @overload
    def in_collision_single(self, mesh: Any, transform: Any = ..., *, return_names: Literal[True],
                            return_data: Literal[True]) -> tuple[bool, set[str], list[ContactData]]: ...
    @overload
    def in_collision_single(self, mesh: Any, transform: Any = ..., return_names: bool = ...,
                            return_data: bool = ...) -> _Collision[str]: ...

    def in_collision_single(self, mesh: Any, transform=None, return_names: bool = False,
                            return_data: bool = False) -> _Collision[str]:
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
        objs, placed = self._placed([probe])
        if not objs or probe.absent:
            return _shaped(False, set(), [], return_names, return_data)
        p_lo, p_hi = probe.bounds
        near = placed.meeting(p_lo, p_hi, DEFAULT.touching_rel * math.dist(p_lo.tolist(), p_hi.tolist()))
        if not len(near):  # no box near the probe's: nothing to ask the engine
            return _shaped(False, set(), [], return_names, return_data)
        near_objs = [objs[k] for k in near.tolist()]
        pairs = _Pairs(near_objs, [probe] * len(near_objs), "verdict" if return_data else "intersect",
                       listed=False, contacts=return_data)
        pairs.refine_all()
        hit = np.flatnonzero(pairs.colliding).tolist()
        names = {near_objs[k].name for k in hit}
        data = [pairs.contact(k, (near_objs[k].name, EXTERNAL)) for k in hit] if return_data else []
        return _shaped(bool(hit), names, data, return_names, return_data)

    @overload
    def in_collision_internal(self, return_names: Literal[False] = ...,
                              return_data: Literal[False] = ...) -> bool: ...
    @overload
    def in_collision_internal(self, return_names: Literal[True],
                              return_data: Literal[False] = ...) -> tuple[bool, set[tuple[str, str]]]: ...
    @overload
    def in_collision_internal(self, return_names: Literal[False] = ..., *,
                              return_data: Literal[True]) -> tuple[bool, list[ContactData]]: ...
    @overload
    def in_collision_internal(self, return_names: Literal[True],
                              return_data: Literal[True]) -> tuple[bool, set[tuple[str, str]], list[ContactData]]: ...
    @overload
    def in_collision_internal(self, return_names: bool = ...,
                              return_data: bool = ...) -> _Collision[tuple[str, str]]: ...

    def in_collision_internal(self, return_names: bool = False,
                              return_data: bool = False) -> _Collision[tuple[str, str]]:
        """Does any pair of the manager's objects collide?

        Only the pairs whose boxes meet are asked, and of those only the pairs with an object
        moved (or added) since the last question; the others keep their answers.

        Returns
        -------
        is_collision : bool
        names : set of (str, str), with return_names
            Each colliding pair, its names sorted.
        contacts : list of ContactData, with return_data
        """
        objs, placed = self._placed()
        i, j = placed.pairs()
        mode = "contact" if return_data else "intersect"
        hit = []
        for slot, (pairs, k) in enumerate(self._answers(mode, objs, i, j)):
            if pairs.need[k]:
                pairs.refine(k)
            if pairs.colliding[k]:
                hit.append((slot, pairs, k))
        named = [(objs[i[s]].name, objs[j[s]].name, pairs, k) for s, pairs, k in hit]
        names = {(a, b) if a <= b else (b, a) for a, b, _, _ in named}
        data = [pairs.contact(k, (a, b)) for a, b, pairs, k in named] if return_data else []
        return _shaped(bool(hit), names, data, return_names, return_data)

    @overload
    def in_collision_other(self, other_manager: "CollisionManager", return_names: Literal[False] = ...,
                           return_data: Literal[False] = ...) -> bool: ...
    @overload
    def in_collision_other(self, other_manager: "CollisionManager", return_names: Literal[True],
                           return_data: Literal[False] = ...) -> tuple[bool, set[tuple[str, str]]]: ...
    @overload
    def in_collision_other(self, other_manager: "CollisionManager", return_names: Literal[False] = ..., *,
                           return_data: Literal[True]) -> tuple[bool, list[ContactData]]: ...
    @overload
    def in_collision_other(self, other_manager: "CollisionManager", return_names: Literal[True],
                           return_data: Literal[True]) -> tuple[bool, set[tuple[str, str]], list[ContactData]]: ...
    @overload
    def in_collision_other(self, other_manager: "CollisionManager", return_names: bool = ...,
                           return_data: bool = ...) -> _Collision[tuple[str, str]]: ...

    def in_collision_other(self, other_manager: "CollisionManager", return_names: bool = False,
                           return_data: bool = False) -> _Collision[tuple[str, str]]:
        """Does any object of this manager collide with any object of another?

        Returns
        -------
        is_collision : bool
        names : set of (str, str), with return_names
            (name in this manager, name in the other) of each colliding pair.
        contacts : list of ContactData, with return_data
        """
        (mine, here), (theirs, there) = self._placed(), other_manager._placed()
        i, j = _cross_candidates(here, there, 0.0)
        pairs = _Pairs([mine[k] for k in i.tolist()], [theirs[k] for k in j.tolist()],
                       "verdict" if return_data else "intersect", listed=False, contacts=return_data)
        pairs.refine_all()
        hit = np.flatnonzero(pairs.colliding).tolist()
        names = {(mine[int(i[k])].name, theirs[int(j[k])].name) for k in hit}
        data = [pairs.contact(k, (mine[int(i[k])].name, theirs[int(j[k])].name)) for k in hit] \
            if return_data else []
        return _shaped(bool(hit), names, data, return_names, return_data)

    # -- distances -----------------------------------------------------------------------------

    @overload
    def min_distance_single(self, mesh: Any, transform: Any = ..., return_name: Literal[False] = ...,
                            return_data: Literal[False] = ...) -> float: ...
    @overload
    def min_distance_single(self, mesh: Any, transform: Any, return_name: Literal[True],
                            return_data: Literal[False] = ...) -> tuple[float, str | None]: ...
    @overload
    def min_distance_single(self, mesh: Any, transform: Any = ..., *, return_name: Literal[True],
                            return_data: Literal[False] = ...) -> tuple[float, str | None]: ...
    @overload
    def min_distance_single(self, mesh: Any, transform: Any = ..., return_name: Literal[False] = ..., *,
                            return_data: Literal[True]) -> tuple[float, DistanceData]: ...
    @overload
    def min_distance_single(self, mesh: Any, transform: Any, return_name: Literal[True],
                            return_data: Literal[True]) -> tuple[float, str | None, DistanceData]: ...
    @overload
    def min_distance_single(self, mesh: Any, transform: Any = ..., *, return_name: Literal[True],
                            return_data: Literal[True]) -> tuple[float, str | None, DistanceData]: ...
    @overload
    def min_distance_single(self, mesh: Any, transform: Any = ..., return_name: bool = ...,
                            return_data: bool = ...) -> _Distance[str | None]: ...

    def min_distance_single(self, mesh: Any, transform=None, return_name: bool = False,
                            return_data: bool = False) -> _Distance[str | None]:
        """The distance from a probe object to the nearest object of the manager (when they
        overlap: 0.0, or minus the depth where both parts are convex or the manager is
        `signed`).

        Returns
        -------
        distance : float (inf for an empty manager, where trimesh + FCL give 1.8e308)
        name : str, with return_name (None for an empty manager)
        data : DistanceData, with return_data (names: the object and "__external")
        """
        probe = ManagedObject(EXTERNAL, self._geometry(mesh), _as_transform(transform))
        objs, placed = self._placed([probe])
        if not objs or probe.absent:
            return _shaped_distance(np.inf, None, _nothing(None, EXTERNAL), return_name, return_data)
        lower = _box_distance(placed.lo, placed.hi, *probe.bounds)
        signed = self.signed
        found = _closest(lambda take: _fresh(objs, [probe], take, np.zeros(len(take), dtype=np.int64), signed),
                         lower, signed)
        assert found is not None
        pairs, k = found
        name = pairs.a[k].name
        data = pairs.distance(k, (name, EXTERNAL), signed) if return_data else None
        return _shaped_distance(pairs.value(k, signed), name, data, return_name, return_data)

    @overload
    def min_distance_internal(self, name: str | None = ..., return_names: Literal[False] = ...,
                              return_data: Literal[False] = ...) -> float: ...
    @overload
    def min_distance_internal(self, name: str | None, return_names: Literal[True],
                              return_data: Literal[False] = ...) -> tuple[float, _Names]: ...
    @overload
    def min_distance_internal(self, name: str | None = ..., *, return_names: Literal[True],
                              return_data: Literal[False] = ...) -> tuple[float, _Names]: ...
    @overload
    def min_distance_internal(self, name: str | None = ..., return_names: Literal[False] = ..., *,
                              return_data: Literal[True]) -> tuple[float, DistanceData]: ...
    @overload
    def min_distance_internal(self, name: str | None, return_names: Literal[True],
                              return_data: Literal[True]) -> tuple[float, _Names, DistanceData]: ...
    @overload
    def min_distance_internal(self, name: str | None = ..., *, return_names: Literal[True],
                              return_data: Literal[True]) -> tuple[float, _Names, DistanceData]: ...
    @overload
    def min_distance_internal(self, name: str | None = ..., return_names: bool = ...,
                              return_data: bool = ...) -> _Distance[_Names]: ...

    def min_distance_internal(self, name: str | None = None, return_names: bool = False,
                              return_data: bool = False) -> _Distance[_Names]:
        """The least distance between two objects of the manager, or between the object `name`
        and the others.

        The pairs are walked with a shrinking bound, never all of them: first those whose boxes
        meet; when the best of those is apart by d, those whose boxes lie within d (the broad
        phase with its boxes grown by d / 2); a pair whose boxes lie farther apart than the best
        answer so far is never asked. Answers of pairs whose objects did not move are kept.

        Returns
        -------
        distance : float (inf with fewer than two objects, where trimesh + FCL give 1.8e308)
        names : (str, str), with return_names, sorted ((None, None) with fewer than two objects)
        data : DistanceData, with return_data
        """
        objs, placed = self._placed()
        found: tuple | None
        if name is not None and name in self._objs and self._objs[name].absent:
            found = None  # an empty mesh, or a transform that is not finite: at no distance
        elif name is not None:
            if name not in self._objs:
                raise ValueError(f"{name} not in collision manager!")
            me = placed.at[self._objs[name].uid]
            others = np.delete(np.arange(len(objs)), me)
            # each pair in the manager's order, as the pairs of the whole manager are kept
            i, j = np.minimum(others, me), np.maximum(others, me)
            lower = _box_distance(placed.lo[others], placed.hi[others], placed.lo[me], placed.hi[me])
            found = _closest(lambda take: self._answers("distance", objs, i[take], j[take]), lower, self.signed)
        elif len(objs) >= 2:
            found = _by_radius(lambda r: placed.pairs() if r == 0.0 else placed.within(r),
                               lambda i, j: _pair_box_distance(placed.lo, placed.hi, placed.lo, placed.hi, i, j),
                               lambda i, j: (lambda take: self._answers("distance", objs, i[take], j[take])),
                               placed.typical, self.signed)
        else:
            found = None
        if found is None:
            return _shaped_distance(np.inf, (None, None), _nothing(None, None), return_names, return_data)
        pairs, k = found
        pair = (pairs.a[k].name, pairs.b[k].name)
        data = pairs.distance(k, pair, self.signed) if return_data else None
        return _shaped_distance(pairs.value(k, self.signed), tuple(sorted(pair)), data, return_names,
                                return_data)

    @overload
    def min_distance_other(self, other_manager: "CollisionManager", return_names: Literal[False] = ...,
                           return_data: Literal[False] = ...) -> float: ...
    @overload
    def min_distance_other(self, other_manager: "CollisionManager", return_names: Literal[True],
                           return_data: Literal[False] = ...) -> tuple[float, _Names]: ...
    @overload
    def min_distance_other(self, other_manager: "CollisionManager", return_names: Literal[False] = ..., *,
                           return_data: Literal[True]) -> tuple[float, DistanceData]: ...
    @overload
    def min_distance_other(self, other_manager: "CollisionManager", return_names: Literal[True],
                           return_data: Literal[True]) -> tuple[float, _Names, DistanceData]: ...
    @overload
    def min_distance_other(self, other_manager: "CollisionManager", return_names: bool = ...,
                           return_data: bool = ...) -> _Distance[_Names]: ...

    def min_distance_other(self, other_manager: "CollisionManager", return_names: bool = False,
                           return_data: bool = False) -> _Distance[_Names]:
        """The least distance between an object of this manager and one of another (walked with
        a shrinking bound, as `min_distance_internal`).

        Returns
        -------
        distance : float (inf when either manager is empty, where trimesh + FCL give 1.8e308)
        names : (str, str), with return_names: (name here, name in the other); (None, None)
            when either manager is empty
        data : DistanceData, with return_data
        """
        (mine, here), (theirs, there) = self._placed(), other_manager._placed()
        found = None
        if mine and theirs:
            found = _by_radius(lambda r: _cross_candidates(here, there, r),
                               lambda i, j: _pair_box_distance(here.lo, here.hi, there.lo, there.hi, i, j),
                               lambda i, j: (lambda take: _fresh(mine, theirs, i[take], j[take], self.signed)),
                               lambda: max(here.typical(), there.typical()), self.signed)
        if found is None:
            return _shaped_distance(np.inf, (None, None), _nothing(None, None), return_names, return_data)
        pairs, k = found
        pair = (pairs.a[k].name, pairs.b[k].name)
        data = pairs.distance(k, pair, self.signed) if return_data else None
        return _shaped_distance(pairs.value(k, self.signed), pair, data, return_names, return_data)

    # -- inside ----------------------------------------------------------------------------------

    def _geometry(self, mesh: Any) -> Geometry | None:
        """A copy of the mesh, as the Geometry shared by every mesh of the same content
        (`gjkcli.pipeline.prepared.geometry`): made once per mesh while its data does not
        change, found by content else. None, with a warning, for a mesh without vertices (an
        empty Trimesh: trimesh + FCL keep it and answer False for it)."""
        vertices, faces = getattr(mesh, "vertices", None), getattr(mesh, "faces", None)
        if vertices is not None and hasattr(vertices, "__len__") and len(vertices) == 0:
            warnings.warn("a mesh without vertices was given: it collides with nothing and is at no "
                          "distance", stacklevel=3)
            return None
        key = id(mesh)
        stamp = _stamp(vertices, faces)
        hit = _GEOMETRIES.get(key)
        if stamp is not None and hit is not None and hit[0]() is mesh and hit[1] == stamp:
            return hit[2]
        try:  # copies: the caller's arrays may change after this call
            geometry = geometry_of(vertices, faces)
        except (AttributeError, TypeError, ValueError) as exc:
            raise TypeError(f"expected a mesh with vertices (n, 3) and faces (m, 3), got "
                            f"{type(mesh).__name__}: {exc}") from None
        if stamp is None:  # no way to tell a change: found by content each time
            return geometry
        cache = _GEOMETRIES

        def forget(_: object) -> None:  # the entry leaves the cache when the mesh is collected
            cache.pop(key, None)

        try:
            cache[key] = (weakref.ref(mesh, forget), stamp, geometry)
        except TypeError:  # not weakly referable: no cache
            pass
        return geometry

    def _placed(self, extra: Iterable[ManagedObject] = ()) -> tuple:
        """(the objects, a list in insertion order, their _Placed), their geometries prepared
        (and those of `extra`)."""
        extra = [o for o in extra if not o.absent]
        if self._state is None:
            objs = [o for o in self._objs.values() if not o.absent]
            _prepare([o.geometry for o in objs + extra])
            self._state = _Placed(objs)
        elif extra:
            _prepare([o.geometry for o in extra])
        return self._state.objs, self._state

    def _answers(self, mode: str, objs: list, i: np.ndarray, j: np.ndarray) -> list:
        """[(_Pairs, k)] the answers of the pairs (objs[i], objs[j]) to `mode`'s question: kept
        ones, and one engine call for the others."""
        kept = self._answered[mode]
        uid_a = [objs[k].uid for k in i.tolist()]
        uid_b = [objs[k].uid for k in j.tolist()]
        out: list = [None] * len(uid_a)
        missing = []
        for slot, (a, b) in enumerate(zip(uid_a, uid_b)):
            got = kept.get(a)
            got = got.get(b) if got is not None else None
            if got is None:
                missing.append(slot)
            else:
                out[slot] = got
        if missing:
            want, listed = _MODES[mode]
            pairs = _Pairs([objs[i[s]] for s in missing], [objs[j[s]] for s in missing], want, listed,
                           depth=mode != "distance" or self.signed, contacts=mode == "contact")
            for k, slot in enumerate(missing):
                out[slot] = entry = (pairs, k)
                a, b = uid_a[slot], uid_b[slot]
                kept.setdefault(a, {})[b] = entry
                kept.setdefault(b, {})[a] = entry
        return out

    def _forget(self, uid: int) -> None:
        """Drop the kept answers of the object's pairs (it moved or left)."""
        for kept in self._answered.values():
            for other in kept.pop(uid, {}):
                partners = kept.get(other)
                if partners is not None:
                    partners.pop(uid, None)


# Geometry of the meshes given to any manager, by id, while the mesh lives and its data is
# unchanged: {id: (weakref to the mesh, its _stamp, Geometry)} (a planner filling a new manager
# each step with the same meshes copies and hashes none of them again)
_GEOMETRIES: dict[int, tuple] = {}

# Questions whose answers a manager keeps: (the engine's want, whether the pair is listed: its
# answer must be the parts', not only their hulls')
_MODES = {"intersect": ("intersect", False), "contact": ("verdict", False), "distance": ("verdict", True)}

_N = TypeVar("_N")
_Names = Union[tuple[str, str], tuple[None, None]]
_Collision = Union[bool, tuple[bool, set[_N]], tuple[bool, list[ContactData]],
                   tuple[bool, set[_N], list[ContactData]]]
_Distance = Union[float, tuple[float, _N], tuple[float, DistanceData], tuple[float, _N, DistanceData]]


class _Placed(Placements):
    """A manager's objects placed in the world: the broad phase of their hulls' boxes
    (`gjkcli.pipeline.prepared.Placements`), updated object by object as they move.

    objs : list of ManagedObject; at : {uid: index}
    """

    def __init__(self, objs: list):
        self.objs = objs
        self.at = {o.uid: k for k, o in enumerate(objs)}
        super().__init__(*_world_boxes(objs))

    def move(self, k: int) -> None:  # type: ignore[override]
        """Object k moved: its box anew, from its hull at its pose."""
        lo, hi = self.objs[k].bounds
        super().move(k, lo, hi)


def _support_vertex(obj: ManagedObject, direction: np.ndarray, size: float) -> np.ndarray:
    """(3,) the object's world vertex farthest along `direction`, the first in the mesh's order
    among those within rounding (DEFAULT.support_tie_rel of `size`) of the farthest."""
    g = obj.geometry
    R, t = obj.pose[:3, :3], obj.pose[:3, 3]
    along = g.vertices @ (R.T @ direction)
    k = int(np.flatnonzero(along >= along.max() - DEFAULT.support_tie_rel * size)[0])
    return R @ g.vertices[k] + t


def _world_boxes(objs: list) -> tuple:
    """(lo, hi) (n, 3) world boxes of the objects' hulls (Shape.bounds, to rounding), for all at
    once, without making the objects' Shapes. Small hulls (a planner's boxes, a manager filled
    anew each step): every object's hull vertices in its mesh's frame (`_hull_points`, kept per
    geometry) moved by its own pose in one product over all of them.
    Larger ones: per distinct geometry, its hull's vertices (`Geometry.hull_columns`) moved by
    the poses of all the objects that place it in one stacked product (a mesh added 200 times
    is one product of 200 rotations)."""
    n = len(objs)
    lo, hi = np.zeros((n, 3)), np.zeros((n, 3))
    small: list = []
    groups: dict = {}
    for k, o in enumerate(objs):
        hull = o.geometry.hull
        if hull.kind != "hull" or hull.radius != 0.0 or len(hull.vertices) == 0:
            lo[k], hi[k] = o.shape.bounds
        elif len(hull.vertices) <= _SMALL_HULL:
            small.append(k)
        else:
            groups.setdefault(id(o.geometry), []).append(k)
    if small:  # one product over all their vertices; np.array of lists, not np.stack
        points = [_hull_points(objs[k].geometry) for k in small]
        poses = np.array([objs[k].pose for k in small])
        counts = np.array([len(p) for p in points])
        starts = np.cumsum(counts) - counts
        owner = np.repeat(np.arange(len(small)), counts)
        placed = poses[owner]
        W = np.einsum("nij,nj->ni", placed[:, :3, :3], np.concatenate(points)) + placed[:, :3, 3]
        lo[small] = np.minimum.reduceat(W, starts, axis=0)
        hi[small] = np.maximum.reduceat(W, starts, axis=0)
    for ks in groups.values():
        geometry = objs[ks[0]].geometry
        hull = geometry.hull
        poses = np.stack([objs[k].pose for k in ks])
        R = poses[:, :3, :3]
        W = (R @ hull.rotation) @ geometry.hull_columns()  # (g, 3, v)
        shift = R @ hull.translation + poses[:, :3, 3]
        lo[ks], hi[ks] = W.min(axis=2) + shift, W.max(axis=2) + shift
    return lo, hi


def _hull_points(geometry: Geometry) -> np.ndarray:
    """(k, 3) the hull's vertices in the mesh's frame (the hull keeps them in a frame of its own),
    made once per geometry."""
    points = _HULL_POINTS.get(geometry)
    if points is None:
        hull = geometry.hull
        assert hull is not None, "geometry not prepared"
        points = _HULL_POINTS[geometry] = hull.vertices @ hull.rotation.T + hull.translation
    return points


_HULL_POINTS: "weakref.WeakKeyDictionary[Geometry, np.ndarray]" = weakref.WeakKeyDictionary()


# Hulls of at most this many vertices have their world boxes made all in one product
_SMALL_HULL = 64


def _stamp(vertices: Any, faces: Any):
    """What changes when a mesh's vertices or faces do: the hashes of the two arrays (a trimesh
    TrackedArray keeps a hash of its contents, recomputed only after a change; the mesh's own
    hash combines those of all its arrays, three times the cost); None for arrays that keep no
    such hash (a plain ndarray changed in place keeps its identity)."""
    try:
        return (hash(vertices), hash(faces))
    except TypeError:
        return None


def _box_distance(lo, hi, p_lo, p_hi) -> np.ndarray:
    """(n,) distance from each box to the box (p_lo, p_hi): a lower bound of the parts'."""
    gap = np.maximum(np.maximum(lo - p_hi, p_lo - hi), 0.0)
    return np.sqrt(np.einsum("ij,ij->i", gap, gap))


def _pair_box_distance(lo, hi, lo2, hi2, i, j) -> np.ndarray:
    gap = np.maximum(np.maximum(lo[i] - hi2[j], lo2[j] - hi[i]), 0.0)
    return np.sqrt(np.einsum("ij,ij->i", gap, gap))


def _cross_candidates(here: _Placed, there: _Placed, r: float) -> tuple:
    """Pairs (i in here, j in there) whose boxes, grown by the touching band and r / 2, meet:
    every pair whose boxes lie within r (and a few farther)."""
    n, m = len(here.objs), len(there.objs)
    if n * m <= _CROSS_ALL:  # every pair's boxes compared at once: a few NumPy calls
        meet = np.ones((n, m), dtype=bool)
        for axis in range(3):
            meet &= here.g_lo[axis][:, None] <= there.g_hi[axis][None, :] + r
            meet &= here.g_hi[axis][:, None] + r >= there.g_lo[axis][None, :]
        i, j = np.nonzero(meet)
        return i.astype(np.int64), j.astype(np.int64)
    lo, hi = np.concatenate([here.lo, there.lo]), np.concatenate([here.hi, there.hi])
    i, j = candidate_pairs(lo, hi, grow=np.concatenate([here.band, there.band]) + 0.5 * r)
    keep = (i < n) & (j >= n)
    return i[keep], j[keep] - n


# Two managers of at most this many pairs of objects have all their boxes compared at once
_CROSS_ALL = 4096


def _fresh(left: list, right: list, ia: np.ndarray, ib: np.ndarray, signed: bool) -> list:
    """[(_Pairs, k)] for the pairs (left[ia], right[ib]) asked anew (nothing kept), for a
    distance (`signed`: with the depth of every overlap)."""
    pairs = _Pairs([left[k] for k in ia.tolist()], [right[k] for k in ib.tolist()], "verdict", listed=True,
                   depth=signed)
    return [(pairs, k) for k in range(len(ia))]


def _closest(entries, lower: np.ndarray, signed: bool):
    """(the _Pairs holding the closest pair, its index there), or None when there is no pair.

    entries(take) gives the (_Pairs, k) answers of the pairs `take` (indices into `lower`).
    The pairs go in order of their boxes' distances (`lower`, a lower bound of the parts'), a
    chunk at a time; every pair whose boxes overlap is evaluated (their parts may overlap, and
    the deepest overlap is the least signed distance), then chunks only while their boxes lie
    closer than the best pair found. A pair's distance is `_Pairs.value` (`signed`: gjk's, else
    trimesh + FCL's, 0.0 for an overlap of parts not both convex).
    """
    n = len(lower)
    if n == 0:
        return None
    overlapping = int(np.count_nonzero(lower <= 0.0))
    # most walks end within the first chunk: order only the pairs it and the next one need
    order = _smallest(lower, max(overlapping, _CLOSEST_CHUNK) + 1)
    best, where = np.inf, None
    start = 0
    while start < n:
        stop = max(overlapping, start + _CLOSEST_CHUNK) if start == 0 else start + _CLOSEST_CHUNK
        if min(stop + 1, n) > len(order):  # the walk goes on past the pairs ordered so far
            order = np.argsort(lower, kind="stable")
        todo = []
        for pairs, k in entries(order[start:stop]):
            value = pairs.value(k, signed)
            if pairs.need[k]:
                todo.append((value, pairs, k))
            elif value < best:  # settled: the hulls' answer (or the triangles', kept) stands
                best, where = value, (pairs, k)
        # the hulls' signed distance bounds the parts' from below: the triangles are asked only
        # for pairs whose hulls come closer than the best answer so far
        todo.sort(key=lambda t: t[0])
        for value, pairs, k in todo:
            if not value < best:
                break
            pairs.refine(k)
            value = pairs.value(k, signed)
            if value < best:
                best, where = value, (pairs, k)
        start = stop
        if start < n and lower[order[start]] > best:
            break
    return where


def _smallest(values: np.ndarray, count: int) -> np.ndarray:
    """Indices of the `count` smallest values (and of any tied with the last of them) in the
    order of np.argsort(values, kind="stable"), of which they are the start: a partition, then a
    sort of those alone."""
    if count >= len(values):
        return np.argsort(values, kind="stable")
    kth = np.partition(values, count - 1)[count - 1]
    chosen = np.flatnonzero(values <= kth)  # increasing indices: ties keep them in order
    return chosen[np.argsort(values[chosen], kind="stable")]


def _by_radius(pairs_at, lower_of, entries_of, typical, signed: bool):
    """The closest pair (as `_closest`), walking the broad phase with a shrinking bound.

    pairs_at(r) gives (i, j), every pair whose boxes lie within r (pairs_at(0.0): those whose
    boxes meet); lower_of(i, j) their boxes' distances; entries_of(i, j) the `entries` function
    of `_closest` over them. First the pairs whose boxes meet: a best answer <= 0 is final (the
    other boxes lie apart). Else, the best being d, the pairs within d: none other can come
    closer. With no pair at all, the radius grows from typical() (asked only then) until some
    boxes meet.
    """
    r = 0.0
    while True:
        i, j = pairs_at(r)
        found = _closest(entries_of(i, j), lower_of(i, j), signed) if len(i) else None
        best = found[0].value(found[1], signed) if found is not None else np.inf
        if best <= r:
            return found
        r = best if np.isfinite(best) else max(4.0 * r, typical(), np.finfo(float).tiny)


def _nothing(a, b) -> DistanceData:
    """The distance data of an empty search (trimesh's names the pair (None, None))."""
    nowhere = np.full(3, np.nan)
    return DistanceData((a, b), np.inf, nowhere, nowhere.copy())


def _shaped(result: bool, names: set, data: list, return_names: bool, return_data: bool) -> Any:
    if return_names and return_data:
        return result, names, data
    if return_names:
        return result, names
    if return_data:
        return result, data
    return result


def _shaped_distance(distance: float, names, data, return_names: bool, return_data: bool) -> Any:
    if return_names and return_data:
        return distance, names, data
    if return_names:
        return distance, names
    if return_data:
        return distance, data
    return distance


def scene_to_collision(scene: Any) -> tuple[CollisionManager, dict[str, ManagedObject]]:
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
