# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""Bindings of the compiled mesh core (gjkcli/engine/csrc/mesh.h, bvh.c, tri.c), and
three kernels of hull preparation (gaps.h, gaps.c: hull_gaps' plane test; ownhull.h, ownhull.c: a
convex mesh's own triangles as its hull; smallhull.h, smallhull.c: the hulls of small point sets),
and the common solid of two convex parts (convexcut.h, convexcut.c).

A `BVH` is built once per mesh, in the mesh's own frame; pair queries take the pose of B
relative to A as 12 float64 (row-major rotation, then translation) and answer in A's frame. The
loops run in C without the GIL. The Python API is gjkcli.engine.exact; this module is its private engine.
"""
from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t
from libc.math cimport INFINITY
from libc.string cimport memset

import numpy as np

from gjkcli.engine import _enums


cdef extern from "mesh.h" nogil:
    # the values are the header's; gjkcli.engine._enums.mesh_exit carries all of them to Python
    enum mesh_exit:
        MESH_EXIT_NO_MEMORY

    ctypedef struct mesh_node:
        double c[3]
        double ax[9]
        double e[3]
        int32_t first
        int32_t count

    ctypedef struct mesh_bvh:
        int32_t n_verts, n_tris
        const double *v
        const int32_t *f
        double *tri
        int32_t *order
        mesh_node *nodes
        int32_t n_nodes, depth
        double size
        int32_t *cap_off
        int32_t *cap_edge

    ctypedef struct mesh_ws:
        pass

    ctypedef struct mesh_hit:
        int exit, crossing, near
        int32_t tri_a, tri_b
        double point[3]
        double straddle
        int64_t visits, tests
        int n_pairs

    ctypedef struct mesh_near:
        int exit
        double distance
        double pa[3]
        double pb[3]
        int32_t tri_a, tri_b
        int64_t visits, tests

    int mesh_build(mesh_bvh *M, const double *v, int32_t n_verts, const int32_t *f, int32_t n_tris,
                   int leaf_size)
    int mesh_wind_prepare(mesh_bvh *M)
    void mesh_free(mesh_bvh *M)
    int mesh_ws_init(mesh_ws *ws)
    void mesh_ws_free(mesh_ws *ws)
    void mesh_intersect(const mesh_bvh *A, const mesh_bvh *B, const double *R, const double *t,
                        double margin, double deep, double snap, mesh_ws *ws, int32_t *pairs,
                        int cap, mesh_hit *out)
    void mesh_distance(const mesh_bvh *A, const mesh_bvh *B, const double *R, const double *t,
                       double upper, double stop_below, double snap, mesh_ws *ws, mesh_near *out)
    double mesh_closest(const mesh_bvh *M, const double *q, double upper, double stop_below,
                        mesh_ws *ws, double *c, int32_t *tri)
    double mesh_winding(const mesh_bvh *M, const double *q, mesh_ws *ws)
    double mesh_winding_brute(const mesh_bvh *M, const double *q)
    int tri_tri_intersect(const double *P, const double *Q, double snap, double *point, double *straddle)
    double tri_tri_distance2(const double *P, const double *Q, double *pp, double *qq)


cdef extern from "gaps.h" nogil:
    int hull_face_gaps(const double *V, const int64_t *F, const int64_t *t_start,
                       const int64_t *n_tri, const double *translation, const double *hull_area,
                       double area_rel, const double *hull, const int64_t *h_start,
                       const int64_t *n_hull, const uint8_t *brute, int64_t parts,
                       double *mesh_area, double *gap)

cdef extern from "ownhull.h" nogil:
    int own_hulls(const double *local, const int64_t *p_start, const int64_t *n_pts,
                  const int64_t *tris, const int64_t *t_start, const int64_t *n_tri,
                  const double *min_volume, int64_t parts,
                  uint8_t *ok, double *area, double *vertices, int64_t *h_start, int64_t *n_hull,
                  int32_t *faces, int32_t *adj_start, int32_t *adj, int64_t *a_start,
                  int64_t *n_adj, double *extent, double *lo, double *hi, int64_t cube_from,
                  int32_t *cube, int64_t *c_start, int64_t *n_cube)

cdef extern from "ownhull.h" nogil:
    int closed_oriented_parts(const int64_t *tris, const int64_t *t_start, const int64_t *n_tri,
                              const int64_t *n_pts, int64_t parts, uint8_t *paired, uint8_t *sphere)
    int convex_edges_parts(const double *points, const int64_t *p_start, const int64_t *n_pts,
                           const int64_t *tris, const int64_t *t_start, const int64_t *n_tri,
                           const double *rel, int64_t parts, uint8_t *convex)
    void signed_volume_parts(const double *points, const int64_t *p_start, const int64_t *n_pts,
                             const int64_t *tris, const int64_t *t_start, const int64_t *n_tri,
                             int64_t parts, double *volume)

cdef extern from "smallhull.h" nogil:
    int small_hulls(const double *local, const int64_t *p_start, const int64_t *n_pts, int64_t parts,
                    int64_t max_pts, const double *tol, const double *min_volume,
                    uint8_t *ok, int64_t *tris, const int64_t *t_start, int64_t *n_tri)

cdef extern from "convexcut.h" nogil:
    ctypedef struct convex_common_out:
        double volume
        double *pts
        int64_t n_pts
        int64_t *tris
        int64_t n_tris
    int convex_common(const double *va, int64_t na, const int64_t *fa, int64_t ma,
                      const double *vb, int64_t nb, const int64_t *fb, int64_t mb,
                      double eps, convex_common_out *out)
    void convex_common_free(convex_common_out *out)


# Exit reasons of the traversals, by code; the codes are the header's (enum mesh_exit in
# gjkcli/engine/csrc/mesh.h), each member gets words here. A member without words fails at import.
_EXIT_WORDS = {
    "MESH_EXIT_NONE": "none",
    "MESH_EXIT_DEEP_CROSSING": "deep crossing",
    "MESH_EXIT_EXHAUSTED": "exhausted",
    "MESH_EXIT_STOP_DISTANCE": "stop distance reached",
    "MESH_EXIT_INTERSECTING": "triangles intersect",
    "MESH_EXIT_NO_MEMORY": "out of memory",
    "MESH_EXIT_FULL": "pair buffer full",
}
EXIT_NAMES = {int(m): _EXIT_WORDS[m.name] for m in _enums.mesh_exit}


def _check_rows(start, count, Py_ssize_t total, str what):
    """Raise ValueError unless every part's rows start[k]: start[k] + count[k] lie within the
    `total` rows of the array called `what`."""
    if len(start) and ((start < 0).any() or (count < 0).any()
                       or int((start + count).max()) > total):
        raise ValueError(f"a part's rows lie outside the {what}")


cdef class BVH:
    """Oriented-box hierarchy over a mesh's triangles, built in C once; the arrays stay referenced.

    vertices : (n, 3) float64, the mesh's own frame
    faces : (m, 3) int32, m >= 1
    leaf_size : triangles per leaf
    """

    cdef mesh_bvh m
    cdef readonly object vertices
    cdef readonly object faces
    cdef readonly bint winding_ready

    def __cinit__(self, vertices, faces, int leaf_size=1):
        self.vertices = np.ascontiguousarray(vertices, dtype=np.float64).reshape(-1, 3)
        self.faces = np.ascontiguousarray(faces, dtype=np.int32).reshape(-1, 3)
        cdef const double[:, ::1] v = self.vertices
        cdef const int32_t[:, ::1] f = self.faces
        cdef int32_t nv = v.shape[0], nf = f.shape[0]
        if nf == 0 or nv == 0:
            raise ValueError("a BVH needs at least one triangle")
        if int(self.faces.min()) < 0 or int(self.faces.max()) >= nv:
            raise ValueError(f"faces index outside the {nv} vertices")
        cdef int rc
        with nogil:
            rc = mesh_build(&self.m, &v[0, 0], nv, &f[0, 0], nf, leaf_size)
        if rc != 0:
            raise MemoryError("BVH build")
        self.winding_ready = False

    def __dealloc__(self):
        mesh_free(&self.m)

    @property
    def n_nodes(self):
        return self.m.n_nodes

    @property
    def depth(self):
        return self.m.depth

    @property
    def size(self):
        """Bounding-box diagonal of the mesh."""
        return self.m.size

    @property
    def n_triangles(self):
        return self.m.n_tris

    def prepare_winding(self):
        """Build the winding-number caps (boundary edges of every node's patch); idempotent.
        Holds the GIL, so that two threads never build them at once."""
        cdef int rc
        if self.winding_ready:
            return
        rc = mesh_wind_prepare(&self.m)
        if rc != 0:
            raise MemoryError("winding caps")
        self.winding_ready = True

    def nodes(self):
        """The boxes as arrays: centre (k, 3), axes (k, 3, 3) rows, extents (k, 3), first, count."""
        cdef int k = self.m.n_nodes, i, c
        centre = np.empty((k, 3))
        axes = np.empty((k, 9))
        ext = np.empty((k, 3))
        first = np.empty(k, np.int32)
        count = np.empty(k, np.int32)
        cdef double[:, ::1] cv = centre, av = axes, ev = ext
        cdef int32_t[::1] fv = first, nv = count
        for i in range(k):
            for c in range(3):
                cv[i, c] = self.m.nodes[i].c[c]
                ev[i, c] = self.m.nodes[i].e[c]
            for c in range(9):
                av[i, c] = self.m.nodes[i].ax[c]
            fv[i] = self.m.nodes[i].first
            nv[i] = self.m.nodes[i].count
        return {"centre": centre, "axes": axes.reshape(k, 3, 3), "extents": ext, "first": first,
                "count": count}

    def order(self):
        """(m,) int32: the face in each leaf slot."""
        cdef int32_t[::1] o = <int32_t[:self.m.n_tris]> self.m.order
        return np.array(o, dtype=np.int32)


cdef class Workspace:
    """Traversal stack for one thread, grown on demand and reused across queries.

    windings : int
        Winding numbers evaluated with this workspace so far (`winding`, `sides`,
        `deepest_inside`): the costly query, counted for tests and benchmarks.
    distances : int
        Distances to the surface `deepest_inside` measured (a point beyond the root's box needs
        none), counted alike.
    """

    cdef mesh_ws ws
    cdef readonly int64_t windings
    cdef readonly int64_t distances

    def __cinit__(self):
        if mesh_ws_init(&self.ws) != 0:
            raise MemoryError()

    def __dealloc__(self):
        mesh_ws_free(&self.ws)


cdef inline Workspace _ws(Workspace ws):
    """The caller's workspace, or a fresh one: a shared default would race between threads."""
    return ws if ws is not None else Workspace()


def intersect(BVH a, BVH b, const double[::1] pose, double margin, double deep, double snap,
              Workspace ws=None, int collect=0):
    """Crossing search; pose (12,) places B in A's frame.

    Returns (exit, crossing, near, tri_a, tri_b, point (3,) tuple, straddle, visits, tests,
    pairs): pairs is None, or with collect > 0 the first `collect` crossings within `deep` as
    (k, 2) int32 faces of A and B.
    """
    cdef mesh_hit h
    cdef Workspace w = _ws(ws)
    if pose.shape[0] != 12:
        raise ValueError("pose must hold 12 numbers")
    buf = np.empty((max(collect, 1), 2), np.int32)
    cdef int32_t[:, ::1] bv = buf
    with nogil:
        mesh_intersect(&a.m, &b.m, &pose[0], &pose[9], margin, deep, snap, &w.ws, &bv[0, 0],
                       collect, &h)
    if h.exit == MESH_EXIT_NO_MEMORY:
        raise MemoryError()
    return (h.exit, h.crossing, h.near, h.tri_a, h.tri_b, (h.point[0], h.point[1], h.point[2]),
            h.straddle, h.visits, h.tests, buf[:h.n_pairs] if collect > 0 else None)


def distance(BVH a, BVH b, const double[::1] pose, double upper, double stop_below, double snap,
             Workspace ws=None):
    """Minimum distance; pose (12,) places B in A's frame.

    Returns (exit, distance, pa (3,) tuple, pb (3,) tuple, tri_a, tri_b, visits, tests).
    """
    cdef mesh_near r
    cdef Workspace w = _ws(ws)
    if pose.shape[0] != 12:
        raise ValueError("pose must hold 12 numbers")
    with nogil:
        mesh_distance(&a.m, &b.m, &pose[0], &pose[9], upper, stop_below, snap, &w.ws, &r)
    if r.exit == MESH_EXIT_NO_MEMORY:
        raise MemoryError()
    return (r.exit, r.distance, (r.pa[0], r.pa[1], r.pa[2]), (r.pb[0], r.pb[1], r.pb[2]),
            r.tri_a, r.tri_b, r.visits, r.tests)


def closest(BVH m, points, double upper=INFINITY, double stop_below=0.0, Workspace ws=None):
    """Nearest mesh point to each row of points (k, 3), mesh frame.

    Returns (distance (k,), nearest point (k, 3), face (k,) int32; -1 and `upper` where nothing is
    nearer than upper).
    """
    cdef const double[:, ::1] q = np.ascontiguousarray(points, dtype=np.float64).reshape(-1, 3)
    cdef int k = q.shape[0], i
    dist = np.empty(k)
    near = np.zeros((k, 3))
    tri = np.empty(k, np.int32)
    cdef double[::1] dv = dist
    cdef double[:, ::1] nv = near
    cdef int32_t[::1] tv = tri
    cdef Workspace w = _ws(ws)
    with nogil:
        for i in range(k):
            dv[i] = mesh_closest(&m.m, &q[i, 0], upper, stop_below, &w.ws, &nv[i, 0], &tv[i])
    return dist, near, tri


cdef inline double _dist2(const double *a, const double *b) nogil:
    return (a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2])


cdef inline bint _beyond_box(const mesh_node *node, const double *p, double margin) nogil:
    """p lies outside the node's box by more than margin along one of its axes."""
    cdef int j
    cdef double x
    for j in range(3):
        x = (node.ax[3 * j] * (p[0] - node.c[0]) + node.ax[3 * j + 1] * (p[1] - node.c[1])
             + node.ax[3 * j + 2] * (p[2] - node.c[2]))
        if x > node.e[j] + margin or x < -node.e[j] - margin:
            return True
    return False


def deepest_inside(BVH m, points, double beyond, double inside, Workspace ws=None):
    """Among points (k, 3), mesh frame, the one farthest from the surface (farther than
    `beyond`) that lies inside the mesh (|winding number| > inside): (its row, its distance, the
    nearest mesh point (3,)), or None. The winding number, about ten times a distance's cost, is
    asked farthest first and only until a point is inside; of points equally far the first row
    wins (the argmax over all the points inside). A point found outside answers for every point
    whose ball (radius: its distance to the surface) meets its own: two such balls hold no point
    of the surface, so their union lies on one side of it (the mesh closed: `beyond` >= 0 and
    the caller's `inside` threshold apart from 0 and 1). A point beyond the root's box by more
    than `beyond` is outside without its distance or winding number (a scene's probes against a
    small part: most of them)."""
    cdef const double[:, ::1] q = np.ascontiguousarray(points, dtype=np.float64).reshape(-1, 3)
    cdef int k = q.shape[0], i, best
    cdef Workspace w = _ws(ws)
    dist = np.empty(k)
    near = np.zeros((k, 3))
    tri = np.empty(k, np.int32)
    asked = np.zeros(k, np.uint8)
    cdef double[::1] dv = dist
    cdef double[:, ::1] nv = near
    cdef int32_t[::1] tv = tri
    cdef uint8_t[::1] av = asked
    cdef double wn, reach
    with nogil:
        for i in range(k):
            if _beyond_box(&m.m.nodes[0], &q[i, 0], beyond):
                dv[i] = -INFINITY  # outside the root's box, which holds the solid: never the answer
            else:
                dv[i] = mesh_closest(&m.m, &q[i, 0], INFINITY, beyond, &w.ws, &nv[i, 0], &tv[i])
                w.distances += 1
    for i in range(k):
        if dv[i] > beyond:
            break
    else:
        return None  # no point far enough from the surface to decide anything
    m.prepare_winding()
    with nogil:
        while True:
            best = -1
            for i in range(k):  # the farthest not asked yet (the first of equals)
                if av[i] == 0 and dv[i] > beyond and (best < 0 or dv[i] > dv[best]):
                    best = i
            if best < 0:
                break
            av[best] = 1
            wn = mesh_winding(&m.m, &q[best, 0], &w.ws)
            w.windings += 1
            if wn > inside or wn < -inside:
                break
            for i in range(k):  # outside too: within reach of the outside point's ball
                reach = 0.999 * (dv[i] + dv[best])  # short of touching balls, for rounding
                if av[i] == 0 and dv[i] > beyond and _dist2(&q[i, 0], &q[best, 0]) < reach * reach:
                    av[i] = 1
    if best < 0:
        return None
    return best, float(dist[best]), near[best].copy()


def winding(BVH m, points, Workspace ws=None, bint brute=False):
    """Generalized winding number at each row of points (k, 3), mesh frame. Uses the caps when
    prepared (BVH.prepare_winding), else, or with brute, sums every triangle."""
    cdef const double[:, ::1] q = np.ascontiguousarray(points, dtype=np.float64).reshape(-1, 3)
    cdef int k = q.shape[0], i
    out = np.empty(k)
    cdef double[::1] ov = out
    cdef Workspace w = _ws(ws)
    with nogil:
        for i in range(k):
            ov[i] = mesh_winding_brute(&m.m, &q[i, 0]) if brute else mesh_winding(&m.m, &q[i, 0], &w.ws)
    w.windings += k
    return out


def sides(BVH m, points, dist, order, double inside, Workspace ws=None, bint first=False):
    """The side of a closed mesh each point of `order` lies on: (side (k,) int8, asked).

    points (k, 3), mesh frame; dist (k,) their distances to the surface (`closest`); order: the
    rows to decide, in the order they are asked. side is 1 inside (|winding number| > inside),
    -1 outside, 0 not decided (not in order, or with `first` after the first point inside);
    asked counts the winding numbers evaluated. A point whose ball (radius: its distance to the
    surface) meets the ball of a point asked before it lies on that point's side without its
    winding number: the two balls hold no point of the surface, so their union lies on one side
    of it (the mesh closed: its winding number is constant off the surface). Points far from
    the surface first decide the most. first: stop at the first point inside in `order`."""
    cdef const double[:, ::1] q = np.ascontiguousarray(points, dtype=np.float64).reshape(-1, 3)
    cdef const double[::1] dv = np.ascontiguousarray(dist, dtype=np.float64)
    cdef const int64_t[::1] ov = np.ascontiguousarray(order, dtype=np.int64)
    cdef Py_ssize_t n = ov.shape[0], k = q.shape[0], i, j
    cdef int64_t a, b, asked = 0
    if dv.shape[0] != k:
        raise ValueError(f"{dv.shape[0]} distances for {k} points")
    for i in range(n):
        if ov[i] < 0 or ov[i] >= k:
            raise ValueError(f"order names row {ov[i]} of {k} points")
    side = np.zeros(k, np.int8)
    cdef int8_t[::1] sv = side
    cdef int8_t s
    cdef double wn, reach
    cdef Workspace w = _ws(ws)
    m.prepare_winding()
    with nogil:
        for i in range(n):
            a = ov[i]
            if sv[a] == 0:
                wn = mesh_winding(&m.m, &q[a, 0], &w.ws)
                asked += 1
                sv[a] = 1 if (wn > inside or wn < -inside) else -1
                s = sv[a]
                for j in range(i + 1, n):  # later points within reach of its ball: its side
                    b = ov[j]
                    reach = 0.999 * (dv[a] + dv[b])  # short of touching balls, for rounding
                    if sv[b] == 0 and _dist2(&q[b, 0], &q[a, 0]) < reach * reach:
                        sv[b] = s
            if first and sv[a] > 0:
                for j in range(i + 1, n):  # undecided: the search stopped here
                    sv[ov[j]] = 0
                break
    w.windings += asked
    return side, int(asked)


def tri_tri(P, Q, double snap=0.0):
    """One triangle pair (each (3, 3)): (intersect, point (3,), straddle, distance, pp (3,), qq (3,)).
    The distance is that of tri_tri_distance2 (an upper bound when they intersect)."""
    cdef double[::1] p = np.ascontiguousarray(P, dtype=np.float64).reshape(9).copy()
    cdef double[::1] q = np.ascontiguousarray(Q, dtype=np.float64).reshape(9).copy()
    cdef double x[3]
    cdef double pp[3]
    cdef double qq[3]
    cdef double st = 0.0
    cdef int hit = tri_tri_intersect(&p[0], &q[0], snap, x, &st)
    cdef double d2 = tri_tri_distance2(&p[0], &q[0], pp, qq)
    return (bool(hit), np.array([x[0], x[1], x[2]]) if hit else None, st if hit else None,
            d2 ** 0.5, np.array([pp[0], pp[1], pp[2]]), np.array([qq[0], qq[1], qq[2]]))


def face_gaps(vertices, faces, t_start, n_tri, translation, hull_area, double area_rel, hull,
              h_start, n_hull, brute):
    """The supporting-plane test of gjkcli.mesh.convexity.hull_gaps, every face against every hull
    vertex, for many parts at once (gjkcli/engine/csrc/gaps.c; gaps.h defines it exactly).

    vertices : (V, 3) float64 every part's vertices, world coordinates
    faces : (T, 3) int64 indices into vertices; t_start, n_tri : (p,) int64 each part's rows
    translation : (p, 3) float64 each hull's place; hull_area : (p,) float64 its surface area
    area_rel : the triangles' area must be the hull's within this fraction of it
    hull : (H, 3) float64 hull vertices, each part's in its hull's frame; h_start, n_hull : (p,)
    brute : (p,) bool the parts to test (the others get NaN)

    Returns (mesh_area (p,), gap (p,)): the triangles' area; max(0, max over the faces of max over
    the hull vertices of n . h - d), inf where the triangles do not cover the hull's area once.
    """
    cdef const double[:, ::1] vv = np.ascontiguousarray(vertices, dtype=np.float64).reshape(-1, 3)
    cdef const int64_t[:, ::1] fv = np.ascontiguousarray(faces, dtype=np.int64).reshape(-1, 3)
    cdef const double[:, ::1] hv = np.ascontiguousarray(hull, dtype=np.float64).reshape(-1, 3)
    cdef const double[:, ::1] cv = np.ascontiguousarray(translation, dtype=np.float64).reshape(-1, 3)
    ha = np.ascontiguousarray(hull_area, dtype=np.float64)
    ts = np.ascontiguousarray(t_start, dtype=np.int64)
    nt = np.ascontiguousarray(n_tri, dtype=np.int64)
    hs = np.ascontiguousarray(h_start, dtype=np.int64)
    nh = np.ascontiguousarray(n_hull, dtype=np.int64)
    bf = np.ascontiguousarray(brute, dtype=np.uint8)
    cdef int64_t p = len(ts)
    if not (len(nt) == p and len(hs) == p and len(nh) == p and len(ha) == p and len(bf) == p
            and cv.shape[0] == p):
        raise ValueError("t_start, n_tri, translation, hull_area, h_start, n_hull and brute need "
                         "one entry per part")
    _check_rows(ts, nt, fv.shape[0], "faces")
    _check_rows(hs, nh, hv.shape[0], "hull vertices")
    if fv.shape[0] and (int(np.min(fv)) < 0 or int(np.max(fv)) >= vv.shape[0]):
        raise ValueError("faces index outside the vertices")
    area = np.zeros(p)
    gap = np.full(p, np.nan)
    if p == 0:
        return area, gap
    cdef const int64_t[::1] tsv = ts, ntv = nt, hsv = hs, nhv = nh
    cdef const double[::1] hav = ha
    cdef const uint8_t[::1] bv = bf
    cdef double[::1] av = area, gv = gap
    cdef const double *vp = &vv[0, 0] if vv.shape[0] else NULL
    cdef const int64_t *fp = &fv[0, 0] if fv.shape[0] else NULL
    cdef const double *hp = &hv[0, 0] if hv.shape[0] else NULL
    cdef int rc
    with nogil:
        rc = hull_face_gaps(vp, fp, &tsv[0], &ntv[0], &cv[0, 0], &hav[0], area_rel, hp, &hsv[0],
                            &nhv[0], &bv[0], p, &av[0], &gv[0])
    if rc != 0:
        raise MemoryError("face gaps")
    return area, gap


def own_hull_parts(local, p_start, n_pts, tris, t_start, n_tri, min_volume, int64_t cube_from):
    """Hull fields of many parts from their own triangles (gjkcli/engine/csrc/ownhull.c; see
    ownhull.h for the exact definitions).

    local : (N, 3) float64 every part's points, centred; p_start, n_pts : (p,) int64 its rows
    tris : (T, 3) int64 every part's triangles, indices local to the part; t_start, n_tri : (p,)
    min_volume : (p,) float64 the volume a usable part exceeds
    cube_from : hulls of at least this many vertices get a cold-start table

    Returns a dict of arrays: ok (p,) bool, area (p,), vertices (H, 3), h_start, n_hull (p,),
    faces (T, 3) int32 (rows of usable parts), adj_start (H + p,) int32 (part p's n_hull + 1
    rows from h_start + p), adj int32, a_start, n_adj (p,), extent (p,), lo, hi (p, 3), cube int32,
    c_start, n_cube (p,).
    """
    cdef const double[:, ::1] lv = np.ascontiguousarray(local, dtype=np.float64).reshape(-1, 3)
    cdef const int64_t[:, ::1] tv = np.ascontiguousarray(tris, dtype=np.int64).reshape(-1, 3)
    ps = np.ascontiguousarray(p_start, dtype=np.int64)
    npt = np.ascontiguousarray(n_pts, dtype=np.int64)
    ts = np.ascontiguousarray(t_start, dtype=np.int64)
    nt = np.ascontiguousarray(n_tri, dtype=np.int64)
    mv = np.ascontiguousarray(min_volume, dtype=np.float64)
    cdef int64_t p = len(ps)
    if not (len(npt) == p and len(ts) == p and len(nt) == p and len(mv) == p):
        raise ValueError("p_start, n_pts, t_start, n_tri and min_volume need one entry per part")
    _check_rows(ps, npt, lv.shape[0], "points")
    _check_rows(ts, nt, tv.shape[0], "triangles")
    total_pts, total_tri = int(npt.sum()) if p else 0, int(nt.sum()) if p else 0
    out = {
        "ok": np.zeros(p, dtype=np.uint8), "area": np.zeros(p),
        "vertices": np.empty((max(total_pts, 1), 3)), "h_start": np.zeros(p, dtype=np.int64),
        "n_hull": np.zeros(p, dtype=np.int64), "faces": np.zeros((max(tv.shape[0], 1), 3), dtype=np.int32),
        "adj_start": np.zeros(total_pts + p + 1, dtype=np.int32),
        "adj": np.empty(max(6 * total_tri, 1), dtype=np.int32),
        "a_start": np.zeros(p, dtype=np.int64), "n_adj": np.zeros(p, dtype=np.int64),
        "extent": np.zeros(p), "lo": np.zeros((p, 3)), "hi": np.zeros((p, 3)),
        "cube": np.zeros(max(1536 * p, 1), dtype=np.int32), "c_start": np.zeros(p, dtype=np.int64),
        "n_cube": np.zeros(p, dtype=np.int64),
    }
    if p == 0:
        out["ok"] = out["ok"].astype(bool)
        return out
    cdef const int64_t[::1] psv = ps, npv = npt, tsv = ts, ntv = nt
    cdef const double[::1] mvv = mv
    cdef uint8_t[::1] okv = out["ok"]
    cdef double[::1] arv = out["area"], exv = out["extent"]
    cdef double[:, ::1] vv = out["vertices"], lov = out["lo"], hiv = out["hi"]
    cdef int64_t[::1] hsv = out["h_start"], nhv = out["n_hull"], asv = out["a_start"], nav = out["n_adj"]
    cdef int32_t[:, ::1] fv = out["faces"]
    cdef int32_t[::1] rsv = out["adj_start"], av = out["adj"], cv = out["cube"]
    cdef int64_t[::1] csv = out["c_start"], ncv = out["n_cube"]
    cdef const double *lp = &lv[0, 0] if lv.shape[0] else NULL
    cdef const int64_t *tp = &tv[0, 0] if tv.shape[0] else NULL
    cdef int rc
    with nogil:
        rc = own_hulls(lp, &psv[0], &npv[0], tp, &tsv[0], &ntv[0], &mvv[0], p, &okv[0], &arv[0],
                       &vv[0, 0], &hsv[0], &nhv[0], &fv[0, 0], &rsv[0], &av[0], &asv[0], &nav[0],
                       &exv[0], &lov[0, 0], &hiv[0, 0], cube_from, &cv[0], &csv[0], &ncv[0])
    if rc != 0:
        raise MemoryError("own hulls")
    out["ok"] = out["ok"].astype(bool)
    return out


include "_primmesh.pxi"


def small_hull_parts(local, p_start, n_pts, int64_t max_pts, tol, min_volume):
    """Hull triangles of many small point sets (gjkcli/engine/csrc/smallhull.c; see smallhull.h
    for what is built and checked).

    local : (N, 3) float64 every part's points, centred; p_start, n_pts : (p,) int64 its rows
    max_pts : parts of more points are left alone; tol : (p,) float64 each part's coplanarity
    tolerance, in its units; min_volume : (p,) float64 the volume a hull must exceed

    Returns (ok (p,) bool, tris (T, 3) int64 point indices local to each part, t_start (p,),
    n_tri (p,)): part p's triangles are tris[t_start[p]: t_start[p] + n_tri[p]] where ok[p].
    """
    cdef const double[:, ::1] lv = np.ascontiguousarray(local, dtype=np.float64).reshape(-1, 3)
    ps = np.ascontiguousarray(p_start, dtype=np.int64)
    npt = np.ascontiguousarray(n_pts, dtype=np.int64)
    mv = np.ascontiguousarray(min_volume, dtype=np.float64)
    tl = np.ascontiguousarray(tol, dtype=np.float64)
    cdef int64_t p = len(ps)
    if not (len(npt) == p and len(mv) == p and len(tl) == p):
        raise ValueError("p_start, n_pts, tol and min_volume need one entry per part")
    _check_rows(ps, npt, lv.shape[0], "points")
    room = np.where((npt >= 4) & (npt <= max_pts), 2 * npt - 4, 0)
    ts = np.concatenate([[0], np.cumsum(room)[:-1]]).astype(np.int64) if p else np.zeros(0, np.int64)
    ok = np.zeros(p, dtype=np.uint8)
    tris = np.zeros((max(int(room.sum()) if p else 0, 1), 3), dtype=np.int64)
    n_tri = np.zeros(p, dtype=np.int64)
    if p == 0:
        return ok.astype(bool), tris[:0], ts, n_tri
    cdef const int64_t[::1] psv = ps, npv = npt, tsv = ts
    cdef const double[::1] mvv = mv, tlv = tl
    cdef uint8_t[::1] okv = ok
    cdef int64_t[:, ::1] tv = tris
    cdef int64_t[::1] ntv = n_tri
    cdef const double *lp = &lv[0, 0] if lv.shape[0] else NULL
    cdef int rc
    with nogil:
        rc = small_hulls(lp, &psv[0], &npv[0], p, max_pts, &tlv[0], &mvv[0], &okv[0], &tv[0, 0],
                         &tsv[0], &ntv[0])
    if rc != 0:
        raise MemoryError("small hulls")
    return ok.astype(bool), tris, ts, n_tri


def convex_common_solid(vertices_a, faces_a, vertices_b, faces_b, double eps):
    """The solid two convex parts share (gjkcli/engine/csrc/convexcut.c; see convexcut.h for
    what each part must be): (volume, corners (n, 3) float64, triangles (m, 3) int64 wound
    outwards), no corners when they share no solid; None when a part bounds no volume.

    vertices_* : (n, 3) float64 near the origin; faces_* : (m, 3) int64; eps : a point within eps
    of a cutting plane lies on it.
    """
    cdef const double[:, ::1] va = np.ascontiguousarray(vertices_a, dtype=np.float64).reshape(-1, 3)
    cdef const double[:, ::1] vb = np.ascontiguousarray(vertices_b, dtype=np.float64).reshape(-1, 3)
    cdef const int64_t[:, ::1] fa = np.ascontiguousarray(faces_a, dtype=np.int64).reshape(-1, 3)
    cdef const int64_t[:, ::1] fb = np.ascontiguousarray(faces_b, dtype=np.int64).reshape(-1, 3)
    if va.shape[0] == 0 or vb.shape[0] == 0 or fa.shape[0] == 0 or fb.shape[0] == 0:
        return None
    cdef convex_common_out out
    cdef int rc
    with nogil:
        rc = convex_common(&va[0, 0], va.shape[0], &fa[0, 0], fa.shape[0],
                           &vb[0, 0], vb.shape[0], &fb[0, 0], fb.shape[0], eps, &out)
    if rc < 0:
        raise MemoryError("convex common solid")
    if rc > 0:
        return None
    try:
        pts = np.array(<double[:out.n_pts, :3]> out.pts) if out.n_pts else np.zeros((0, 3))
        tris = np.array(<int64_t[:out.n_tris, :3]> out.tris) if out.n_tris else np.zeros((0, 3), np.int64)
    finally:
        convex_common_free(&out)
    return out.volume, pts, tris


def convex_edges_parts_of(points, p_start, n_pts, tris, t_start, n_tri, rel):
    """(p,) bool: each part, closed and oriented already, has triangles with an area and every
    edge convex within rel[p], a length (gjkcli/engine/csrc/ownhull.c; see ownhull.h).

    points : (P, 3) float64 every part's points; p_start, n_pts : (p,) int64 its rows; tris :
    (T, 3) int64 every part's triangles, indices local to the part; t_start, n_tri : (p,) int64
    its rows; rel : (p,) float64.
    """
    pts_, ps, npt, tv_, ts, nt = _point_parts(points, p_start, n_pts, tris, t_start, n_tri)
    rl = np.ascontiguousarray(rel, dtype=np.float64)
    cdef int64_t p = len(ts)
    if len(rl) != p:
        raise ValueError("p_start, n_pts, t_start, n_tri and rel need one entry per part")
    convex = np.zeros(p, dtype=np.uint8)
    if p == 0:
        return convex.astype(bool)
    cdef const double[:, ::1] pv = pts_
    cdef const int64_t[:, ::1] tv = tv_
    cdef const int64_t[::1] psv = ps, npv = npt, tsv = ts, ntv = nt
    cdef const double[::1] rv = rl
    cdef uint8_t[::1] cv = convex
    cdef int rc
    with nogil:
        rc = convex_edges_parts(&pv[0, 0], &psv[0], &npv[0], &tv[0, 0], &tsv[0], &ntv[0], &rv[0], p,
                                &cv[0])
    if rc != 0:
        raise MemoryError("convex edges")
    return convex.astype(bool)


def _point_parts(points, p_start, n_pts, tris, t_start, n_tri) -> tuple:
    """(points, p_start, n_pts, tris, t_start, n_tri) of many parts as the compiled core reads
    them: contiguous, of its types, each part's rows checked to lie within its arrays, which
    hold a row at least (a pointer to read; no part reads it)."""
    pts_ = np.ascontiguousarray(points, dtype=np.float64).reshape(-1, 3)
    ps = np.ascontiguousarray(p_start, dtype=np.int64)
    npt = np.ascontiguousarray(n_pts, dtype=np.int64)
    tv_ = np.ascontiguousarray(tris, dtype=np.int64).reshape(-1, 3)
    ts = np.ascontiguousarray(t_start, dtype=np.int64)
    nt = np.ascontiguousarray(n_tri, dtype=np.int64)
    if not (len(ps) == len(ts) and len(npt) == len(ts) and len(nt) == len(ts)):
        raise ValueError("p_start, n_pts, t_start and n_tri need one entry per part")
    _check_rows(ps, npt, len(pts_), "points")
    _check_rows(ts, nt, len(tv_), "triangles")
    if len(tv_) == 0:
        tv_ = np.zeros((1, 3), dtype=np.int64)
    if len(pts_) == 0:
        pts_ = np.zeros((1, 3), dtype=np.float64)
    return pts_, ps, npt, tv_, ts, nt


def signed_volume_parts_of(points, p_start, n_pts, tris, t_start, n_tri):
    """(p,) float64: the volume each part's triangles enclose, positive when their normals point
    out, about the mean of its points (gjkcli/engine/csrc/ownhull.c; NaN for a triangle indexing
    outside its part's points).

    points : (P, 3) float64 every part's points; p_start, n_pts : (p,) int64 its rows; tris :
    (T, 3) int64 every part's triangles, indices local to the part; t_start, n_tri : (p,) int64
    its rows.
    """
    pts_, ps, npt, tv_, ts, nt = _point_parts(points, p_start, n_pts, tris, t_start, n_tri)
    cdef int64_t p = len(ts)
    volume = np.zeros(p, dtype=np.float64)
    if p == 0:
        return volume
    cdef const double[:, ::1] pv = pts_
    cdef const int64_t[:, ::1] tv = tv_
    cdef const int64_t[::1] psv = ps, npv = npt, tsv = ts, ntv = nt
    cdef double[::1] vv = volume
    with nogil:
        signed_volume_parts(&pv[0, 0], &psv[0], &npv[0], &tv[0, 0], &tsv[0], &ntv[0], p, &vv[0])
    return volume


def closed_oriented_parts_of(tris, t_start, n_tri, n_pts):
    """(paired, sphere) (p,) bool of many parts' triangles at once (gjkcli/engine/csrc/ownhull.c;
    see ownhull.h for what each means).

    tris : (T, 3) int64 every part's triangles, indices local to the part; t_start, n_tri : (p,)
    int64 its rows; n_pts : (p,) int64 its points.
    """
    tv_ = np.ascontiguousarray(tris, dtype=np.int64).reshape(-1, 3)
    ts = np.ascontiguousarray(t_start, dtype=np.int64)
    nt = np.ascontiguousarray(n_tri, dtype=np.int64)
    npt = np.ascontiguousarray(n_pts, dtype=np.int64)
    cdef int64_t p = len(ts)
    if not (len(nt) == p and len(npt) == p):
        raise ValueError("t_start, n_tri and n_pts need one entry per part")
    paired = np.zeros(p, dtype=np.uint8)
    sphere = np.zeros(p, dtype=np.uint8)
    if p == 0:
        return paired.astype(bool), sphere.astype(bool)
    _check_rows(ts, nt, len(tv_), "triangles")
    if len(tv_) == 0:
        tv_ = np.zeros((1, 3), dtype=np.int64)
    cdef const int64_t[:, ::1] tv = tv_
    cdef const int64_t[::1] tsv = ts, ntv = nt, npv = npt
    cdef uint8_t[::1] pv = paired, sv = sphere
    cdef int rc
    with nogil:
        rc = closed_oriented_parts(&tv[0, 0], &tsv[0], &ntv[0], &npv[0], p, &pv[0], &sv[0])
    if rc != 0:
        raise MemoryError("closed and oriented")
    return paired.astype(bool), sphere.astype(bool)
