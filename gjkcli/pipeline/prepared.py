"""Geometry prepared once per distinct content, placed by transforms: what the scan's hulls
(`gjkcli.pipeline.stages.hulls`, in one process and in a Dask cluster's load tasks), the Python
manager (`gjkcli.api.manager`), the robot at many poses (`gjkcli.pipeline.poses`), its motion and
the collision matrix (`gjkcli.pipeline.motion`, `gjkcli.pipeline.matrix`) stand on.

FCL and coal keep one `CollisionGeometry` (a hull, a BVH over triangles) shared by any number of
`CollisionObject`s, each holding only a transform; so does this. A `Geometry` is a mesh in its own
frame: its vertices and triangles (copies, read-only), and once `prepare`d its convex hull, how
far the mesh lies from that hull (`gjkcli.mesh.convexity.hull_gaps`: the mode policy's
"coincide") and its triangle hierarchy (`gjkcli.engine.exact.Mesh`, made on first use). `geometry`
finds it by content (the counts and a hash of both arrays), so a mesh given 200 times, or two
links made of one file, is one hull and one hierarchy. `Placements` is the broad phase over the
placed parts' boxes, updated for the parts that move, never rebuilt.

How a hull is made (`prepare`, every geometry not prepared yet in one go): a closed, consistently
oriented mesh with a sphere's topology and at most OWN_HULL_MAX_VERTICES vertices offers its own
triangles (no qhull call, no import of scipy); `hull_gaps` then checks every face against every
hull vertex, and where a vertex lies more than rounding outside a face's plane (the mesh is not
convex) the hull is built from its points instead: by the compiled core for point sets of up to
SMALL_HULL_POINTS (gjkcli/engine/csrc/smallhull.c), by qhull for the others. A larger such mesh
offers its own triangles where every edge is convex (`convex_edges`, which proves it convex in
one pass over its edges: its gap is 0 and hull_gaps is not asked); else qhull builds its hull.
"""
from __future__ import annotations

import weakref
from typing import Iterable

import numpy as np

from gjkcli.digests import blake2b
from gjkcli.engine.exact import Mesh
from gjkcli.engine import shapes
from gjkcli.engine.shapes import Hulls, Shape, build_hulls
from gjkcli.errors import ShapeError
from gjkcli.mesh.convexity import hull_gaps
from gjkcli.scene.broadphase import candidate_pairs
from gjkcli.tolerances import DEFAULT

__all__ = ["Geometry", "geometry", "geometries", "prepare", "closed_oriented", "wound_inwards", "convex_edges",
           "Placements"]

# A closed mesh's triangles are taken as its hull when no vertex lies farther than this, relative
# to the mesh's size, outside any face's plane: rounding, not shape.
OWN_HULL_REL = 1e-12
# The meshes that hull_gaps checks by brute force (gjkcli/mesh/convexity.py, _face_gaps): only
# these offer their own triangles as their hull (above, hull_gaps climbs the hull's support map,
# which on the graph of a mesh that is not convex may stop at a local maximum).
OWN_HULL_MAX_VERTICES = 256
OWN_HULL_MAX_FACES = 4096
# `Geometry.inward`: wound inwards and closed (every test reads it turned), or only as its hull.
TURNED_CLOSED = 2
TURNED_HULL = 1
# The largest point sets whose hull the compiled core builds here (`build_hulls`' small_points):
# the engine's, decided per part (a robot's or a manager's few hundred points cost the core's
# quickhull less than importing scipy for qhull).
SMALL_HULL_POINTS = shapes.SMALL_HULL_POINTS


class Geometry:
    """A mesh in its own frame, prepared once for every placement of it.

    Attributes
    ----------
    vertices : (n, 3) float64, read-only
    faces : (m, 3) int64, read-only
    hull : Shape or None
        The convex hull, once `prepare`d (None before, and where none could be made: `error`).
    gap : float
        `hull_gaps` of the mesh against its hull (inf: not its hull), once prepared.
    closed : bool
        Every directed edge once, and its reverse once (`closed_oriented`), once prepared.
    inward : int
        Whether it is wound inwards (its faces' normals point into the volume they enclose: a
        negative volume), once prepared: TURNED_CLOSED, closed (`wound_inwards`): every test
        reads it as the solid it encloses, turned outwards; TURNED_HULL, not closed by its
        indices (its vertices split along its edges, as glTF exporters write them) but covering
        its hull once turned (`hull_gaps`' turned): a hull answer reads it so, the triangle test
        as its surface; else 0. The run's note names the turned objects of its collisions
        (`gjkcli.pipeline.stages`).
    error : ShapeError or None
        Why no hull could be made.
    bounds : (2, 3) float64 or None
        The hull's box in the mesh's frame (min row, max row), once prepared.
    """

    __slots__ = ("vertices", "faces", "hull", "gap", "closed", "inward", "error", "bounds", "_columns", "_meshes",
                 "content", "__weakref__")

    def __init__(self, vertices: np.ndarray, faces: np.ndarray):
        self.vertices = vertices
        self.faces = faces
        self.hull: Shape | None = None
        self.gap = np.inf
        self.closed = False
        self.inward = 0
        self.error: ShapeError | None = None
        self.bounds: np.ndarray | None = None
        self._columns: np.ndarray | None = None
        self._meshes: dict = {}
        self.content: tuple = ()  # (vertex count, face count, BLAKE2b of both arrays)

    def hull_columns(self) -> np.ndarray:
        """(3, k) float64, read-only: the hull's vertices in its own frame as columns, so that
        the box of a placement is R @ columns reduced along rows (contiguous), three NumPy calls
        (a collision manager's probe asks one per query)."""
        if self._columns is None:
            assert self.hull is not None, "geometry not prepared"
            columns = np.ascontiguousarray(self.hull.vertices.T)
            columns.flags.writeable = False
            self._columns = columns
        return self._columns

    def mesh(self, name: str = "mesh", watertight: bool | None = None) -> Mesh | None:
        """The triangles' hierarchy (`gjkcli.engine.exact.Mesh`) under `name` (its notes name
        the part), made on first use; None when the triangles cannot make one (the hull then
        answers). `watertight`: the loader's flag, when it has one."""
        key = (name, watertight)
        if key not in self._meshes:
            try:
                # a closed, oriented mesh needs no second look at its edges
                self._meshes[key] = Mesh(self.vertices, self.faces, name=name, watertight=watertight,
                                         closed_oriented=self.closed and watertight is not False)
            except ValueError:
                self._meshes[key] = None
        return self._meshes[key]


# Geometry by content (vertex and face counts, a hash of both arrays), shared by every client of
# the process while some part holds it.
_BY_CONTENT: "weakref.WeakValueDictionary[tuple, Geometry]" = weakref.WeakValueDictionary()


def geometry(vertices, faces) -> Geometry:
    """The Geometry of these vertices (n, 3) and faces (m, 3): the one already made for the same
    content, else a new one holding read-only copies (the caller's arrays may change after).
    Raises ShapeError for no vertices, a coordinate that is not finite, or a face pointing past
    the vertices (the messages of `gjkcli.engine.shapes.build_hulls` for the first two)."""
    v = np.array(vertices, dtype=np.float64, order="C").reshape(-1, 3)
    f = np.array(faces, dtype=np.int64, order="C").reshape(-1, 3)
    if len(v) == 0:
        raise ShapeError("no points to build a hull from")
    if not np.all(np.isfinite(v)):
        raise ShapeError("points hold NaN or infinite coordinates")
    if len(f) and (f.min() < 0 or f.max() >= len(v)):
        raise ShapeError(f"faces point past the {len(v)} vertices")
    v.flags.writeable = False
    f.flags.writeable = False
    return _by_content(v, f)


def geometries(vertices: list, faces: list) -> list:
    """`geometry` of many meshes at once (a scan's parts): per mesh its Geometry, or the
    ShapeError `geometry` would raise. The checks run over all meshes together and the copies
    are one array each for all vertices and all faces (each Geometry holds read-only views of
    them), so that a part costs a hash and a lookup in Python."""
    count = len(vertices)
    vs = [np.asarray(v, dtype=np.float64).reshape(-1, 3) for v in vertices]
    fs = [np.asarray(f, dtype=np.int64).reshape(-1, 3) for f in faces]
    n_v = np.fromiter(map(len, vs), dtype=np.int64, count=count)
    n_f = np.fromiter(map(len, fs), dtype=np.int64, count=count)
    V = np.concatenate(vs) if count else np.zeros((0, 3))  # copies, C-ordered
    F = np.concatenate(fs) if count else np.zeros((0, 3), dtype=np.int64)
    part = np.arange(count)
    finite = np.isfinite(V)  # the columns combined: a reduction along rows of 3 is slow in NumPy
    finite = finite[:, 0] & finite[:, 1] & finite[:, 2]
    not_finite = np.bincount(np.repeat(part, n_v)[~finite], minlength=count) > 0
    of_face = np.repeat(part, n_f)
    low = np.minimum(np.minimum(F[:, 0], F[:, 1]), F[:, 2])
    high = np.maximum(np.maximum(F[:, 0], F[:, 1]), F[:, 2])
    past = np.bincount(of_face[(low < 0) | (high >= n_v[of_face])], minlength=count) > 0
    V.flags.writeable = False
    F.flags.writeable = False
    v_end, f_end = np.cumsum(n_v).tolist(), np.cumsum(n_f).tolist()
    out: list = []
    for k, (nv, ve, fe) in enumerate(zip(n_v.tolist(), v_end, f_end)):
        if nv == 0:
            out.append(ShapeError("no points to build a hull from"))
        elif not_finite[k]:
            out.append(ShapeError("points hold NaN or infinite coordinates"))
        elif past[k]:
            out.append(ShapeError(f"faces point past the {nv} vertices"))
        else:
            out.append(_by_content(V[ve - nv: ve], F[fe - len(fs[k]): fe]))
    return out


def _by_content(v: np.ndarray, f: np.ndarray) -> Geometry:
    """The Geometry of the read-only, C-ordered arrays v (n, 3) float64 and f (m, 3) int64: the
    one made already for the same content, else a new one holding them."""
    digest = blake2b(v, digest_size=16)
    digest.update(f)
    content = (len(v), len(f), digest.digest())
    found = _BY_CONTENT.get(content)
    if found is None:
        found = _BY_CONTENT[content] = Geometry(v, f)
        found.content = content
    return found


def prepare(geometries: Iterable[Geometry], *, jobs: int = 1, progress=None,
            small_points: int | None = SMALL_HULL_POINTS) -> None:
    """Hulls and hull gaps of the geometries not prepared yet, each once however many parts
    share it, all in one go (see the module's docstring). A geometry whose hull cannot be made
    keeps hull None and its `error`. jobs, progress : `build_hulls`' (qhull in forked workers
    for many large parts; progress(stage, done, total)). small_points : the largest point sets
    whose hull the compiled core builds (None: `build_hulls`' own default). Each geometry's
    hull and gap depend on its own mesh only, never on the others prepared with it (so the
    cache may keep them one by one)."""
    todo = list({id(g): g for g in geometries if g.hull is None and g.error is None}.values())
    if not todo:
        return
    paired, sphere, inward = _closed_wound([g.vertices for g in todo], [g.faces for g in todo])
    for g, c, turned in zip(todo, paired.tolist(), inward.tolist()):
        g.closed, g.inward = c, TURNED_CLOSED if turned else 0
    small = np.array([len(g.vertices) <= OWN_HULL_MAX_VERTICES and len(g.faces) <= OWN_HULL_MAX_FACES
                      for g in todo], dtype=bool)
    offer = sphere & small
    # larger closed meshes of a sphere's topology: their own triangles where every edge is convex
    # (`convex_edges`: then they are their hull, proven, and need no hull_gaps)
    large = np.flatnonzero(sphere & ~small)
    proven = np.zeros(len(todo), dtype=bool)
    if len(large):
        proven[large] = convex_edges([todo[k].vertices for k in large.tolist()],
                                     [todo[k].faces for k in large.tolist()])
    offer |= proven
    hulls = build_hulls([g.vertices for g in todo], small=True, small_points=small_points,
                        triangles=[g.faces if c else None for g, c in zip(todo, offer.tolist())],
                        jobs=jobs, progress=progress)
    gaps = np.zeros(len(todo))
    turned = np.zeros(len(todo), dtype=bool)  # read with their faces turned (`hull_gaps`)
    check = np.flatnonzero(~proven).tolist()
    if len(check) == len(todo):
        gaps = hull_gaps(hulls, [g.faces for g in todo], [g.vertices for g in todo], turned)
    elif check:
        subset = Hulls([hulls.shapes[k] for k in check], hulls.lo[check], hulls.hi[check], hulls.area[check])
        part = np.zeros(len(check), dtype=bool)
        gaps[check] = hull_gaps(subset, [todo[k].faces for k in check], [todo[k].vertices for k in check], part)
        turned[check] = part
    gaps[proven & np.array([isinstance(s, ShapeError) for s in hulls.shapes], dtype=bool)] = np.inf
    size = np.linalg.norm(hulls.hi - hulls.lo, axis=1)
    own = offer & (gaps <= OWN_HULL_REL * size)  # NaN size (no hull) compares False
    again = np.flatnonzero(~own & offer).tolist()  # offered, but not convex: from the points
    shapes = list(hulls.shapes)
    lo, hi = hulls.lo.copy(), hulls.hi.copy()
    if again:
        redo = build_hulls([todo[k].vertices for k in again], small=True, small_points=small_points,
                           jobs=jobs)
        part = np.zeros(len(again), dtype=bool)
        redo_gaps = hull_gaps(redo, [todo[k].faces for k in again], [todo[k].vertices for k in again], part)
        for slot, k in enumerate(again):
            shapes[k], gaps[k], turned[k] = redo.shapes[slot], redo_gaps[slot], part[slot]
        lo[again], hi[again] = redo.lo, redo.hi
    for g, turn in zip(todo, turned.tolist()):
        if turn and not g.inward:  # not closed by its indices, but read turned as its hull
            g.inward = TURNED_HULL
    for g, shape, gap, box in zip(todo, shapes, gaps.tolist(), np.stack([lo, hi], axis=1)):
        if isinstance(shape, ShapeError):
            g.error = shape
        else:
            g.hull, g.gap, g.bounds = shape, gap, box


def convex_edges(vertices: list, faces: list) -> np.ndarray:
    """(k,) bool, for meshes known closed, consistently oriented and of a sphere's topology
    (`closed_oriented`): every triangle has an area and every edge is convex, the far corner of
    the triangle across it at most OWN_HULL_REL of the mesh's size above its plane. Such a mesh
    is its own hull: the Gauss map of a closed surface of a sphere's topology has degree 1
    (Gauss-Bonnet); with every edge convex each vertex's star covers its patch of the sphere of
    directions positively, so no patch is covered twice, the Gauss map is one to one and the
    surface bounds a convex body (Hadamard's theorem, for polyhedra). One call to the compiled
    core for all meshes, O(triangles) each (gjkcli/engine/csrc/ownhull.c): a hull of 642 points
    needs no qhull and no check of every face against every vertex."""
    from gjkcli.engine._mesh import convex_edges_parts_of

    k = len(faces)
    if k == 0:
        return np.zeros(0, dtype=bool)
    vs = [np.asarray(v, dtype=np.float64).reshape(-1, 3) for v in vertices]
    n_pts = np.fromiter(map(len, vs), dtype=np.int64, count=k)
    n_tri = np.fromiter((len(f) for f in faces), dtype=np.int64, count=k)
    V = np.concatenate(vs)
    starts = np.concatenate([[0], np.cumsum(n_pts)[:-1]]).astype(np.int64)
    size = np.linalg.norm(np.maximum.reduceat(V, starts, axis=0) - np.minimum.reduceat(V, starts, axis=0), axis=1)
    F = np.concatenate([np.asarray(f, dtype=np.int64).reshape(-1, 3) for f in faces])
    t_starts = np.concatenate([[0], np.cumsum(n_tri)[:-1]]).astype(np.int64)
    return convex_edges_parts_of(V, starts, n_pts, F, t_starts, n_tri, OWN_HULL_REL * size)


def wound_inwards(vertices: list, faces: list) -> np.ndarray:
    """(k,) bool: each closed, consistently oriented mesh (`closed_oriented`) encloses a negative
    volume, its faces' normals (right hand) pointing in: the sum of the tetrahedra from its
    vertices' mean to each face (`gjkcli.engine.topology.signed_volume`'s, which the triangle
    test's `Mesh.outward` reads). One call to the compiled core for all meshes
    (gjkcli/engine/csrc/ownhull.c)."""
    vs = [np.asarray(v, dtype=np.float64).reshape(-1, 3) for v in vertices]
    return _closed_wound(vs, [np.asarray(f, dtype=np.int64).reshape(-1, 3) for f in faces], paired=False)[2]


def _closed_wound(vertices: list, faces: list, paired: bool = True) -> tuple:
    """(paired, sphere, inward) of prepared meshes (their (n, 3) float64 vertices and (m, 3)
    int64 faces): `closed_oriented`'s two, then `wound_inwards` of the paired ones (False for
    the others); with paired False, every mesh is taken for paired (`wound_inwards`' own)."""
    from gjkcli.engine._mesh import closed_oriented_parts_of, signed_volume_parts_of

    k = len(faces)
    if k == 0:
        return np.zeros(0, dtype=bool), np.zeros(0, dtype=bool), np.zeros(0, dtype=bool)
    n_pts = np.fromiter(map(len, vertices), dtype=np.int64, count=k)
    n_tri = np.fromiter(map(len, faces), dtype=np.int64, count=k)
    F, t_start = np.concatenate(faces), np.cumsum(n_tri) - n_tri
    if paired:
        closed, sphere = closed_oriented_parts_of(F, t_start, n_tri, n_pts)
    else:
        closed, sphere = np.ones(k, dtype=bool), np.zeros(k, dtype=bool)
    inward = np.zeros(k, dtype=bool)
    if closed.any():
        volume = signed_volume_parts_of(np.concatenate(vertices), np.cumsum(n_pts) - n_pts, n_pts, F, t_start, n_tri)
        inward = closed & (volume < 0.0)
    return closed, sphere, inward


def closed_oriented(faces: list, n_vertices: list) -> tuple:
    """(paired, sphere), (k,) bool each, for all meshes at once. paired: the mesh is closed and
    consistently oriented (every directed edge once, and its reverse once). sphere: besides, it
    could be the boundary of a convex polytope by its topology alone, a topological sphere
    (Euler characteristic V - E + F = 2 over its used vertices, so one body and no handle: an
    annulus, a torus, has 0). One call to the compiled core for all meshes (each mesh's edges
    hashed, gjkcli/engine/csrc/ownhull.c)."""
    from gjkcli.engine._mesh import closed_oriented_parts_of

    k = len(faces)
    if k == 0:
        return np.zeros(0, dtype=bool), np.zeros(0, dtype=bool)
    counts = np.array([len(f) for f in faces], dtype=np.int64)
    F = np.concatenate([np.asarray(f, dtype=np.int64).reshape(-1, 3) for f in faces])
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    return closed_oriented_parts_of(F, starts, counts, np.asarray(n_vertices, dtype=np.int64))


class Placements:
    """Parts placed in the world, as their world boxes: the boxes grown by each part's touching
    band, and which grown boxes meet (the broad phase). Moving a part updates its box and its
    entries, nothing else (FCL's `DynamicAABBTreeCollisionManager::update`, Bullet's
    `btDbvtBroadphase`: the moved leaves, not a rebuild); no query lists all pairs.

    lo, hi : (n, 3) world boxes; band : (n,) each one's touching band (DEFAULT.touching_rel x
        its diagonal)
    g_lo, g_hi : (3, n) the boxes grown by their bands, transposed: one box is tested against
        all, one axis at a time, along contiguous rows
    near : list of set, per part the parts whose grown boxes meet its own (made on first use:
        a question between two sets of parts, or of one probe, needs none)
    """

    def __init__(self, lo: np.ndarray, hi: np.ndarray):
        self.lo = np.array(lo, dtype=np.float64).reshape(-1, 3)
        self.hi = np.array(hi, dtype=np.float64).reshape(-1, 3)
        self.band = DEFAULT.touching_rel * np.linalg.norm(self.hi - self.lo, axis=1)
        self.g_lo = np.ascontiguousarray((self.lo - self.band[:, None]).T)
        self.g_hi = np.ascontiguousarray((self.hi + self.band[:, None]).T)
        self._near: list[set] | None = None
        self._pairs: tuple | None = None  # `pairs`, until a part moves

    @property
    def near(self) -> list:
        if self._near is None:
            n = len(self.lo)
            near: list[set] = [set() for _ in range(n)]
            i, j = candidate_pairs(self.lo, self.hi, grow=self.band) if n else (np.zeros(0, np.int64),) * 2
            for a, b in zip(i.tolist(), j.tolist()):
                near[a].add(b)
                near[b].add(a)
            self._near = near
        return self._near

    def move(self, k: int, lo: np.ndarray, hi: np.ndarray) -> None:
        """Part k is now in the box (lo, hi): its box, its band and its entries in `near`, anew."""
        self.lo[k], self.hi[k] = lo, hi
        band = self.band[k] = DEFAULT.touching_rel * float(np.linalg.norm(np.asarray(hi) - np.asarray(lo)))
        self.g_lo[:, k], self.g_hi[:, k] = np.asarray(lo) - band, np.asarray(hi) + band
        self._pairs = None
        if self._near is None:  # made from the boxes when first asked
            return
        for other in self.near[k]:
            self.near[other].discard(k)
        meets = set(self.meeting(np.asarray(lo), np.asarray(hi), band).tolist())
        meets.discard(k)
        self.near[k] = meets
        for other in meets:
            self.near[other].add(k)
        self._pairs = None

    def meeting(self, lo: np.ndarray, hi: np.ndarray, grow: float) -> np.ndarray:
        """Indices of the parts whose grown boxes meet the box (lo, hi) grown by `grow`: all
        parts tested along x, then only those left along y and z."""
        lo, hi = (lo - grow).tolist(), (hi + grow).tolist()
        at = np.flatnonzero((self.g_lo[0] <= hi[0]) & (self.g_hi[0] >= lo[0]))
        for axis in (1, 2):
            at = at[(self.g_lo[axis][at] <= hi[axis]) & (self.g_hi[axis][at] >= lo[axis])]
        return at

    def pairs(self) -> tuple:
        """(i, j) (k,) int64, i < j: the pairs whose grown boxes meet, sorted (kept until a part
        moves: read-only)."""
        if self._pairs is None:
            n = max(len(self.lo), 1)
            flat = [a * n + b for a, others in enumerate(self.near) for b in others if a < b]
            flat.sort()
            key = np.array(flat, dtype=np.int64)
            i, j = key // n, key % n
            i.flags.writeable = False
            j.flags.writeable = False
            self._pairs = (i, j)
        return self._pairs

    def within(self, r: float) -> tuple:
        """(i, j) every pair whose boxes lie within r of each other (and a few farther: the
        broad phase compares axis by axis), i < j."""
        return candidate_pairs(self.lo, self.hi, grow=self.band + 0.5 * r)

    def typical(self) -> float:
        """A length of the scene to start a search from: the median box diagonal."""
        return float(np.median(np.linalg.norm(self.hi - self.lo, axis=1))) if len(self.lo) else 1.0
