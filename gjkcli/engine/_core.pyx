# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""Bindings of the compiled core (gjkcli/engine/csrc): packed shape arrays in, result arrays out.

The loops run in C without the GIL; this module only lays out pointers and copies answers into
NumPy arrays. The Python API is gjkcli.engine.query; this module is its private engine.
"""
from libc.stdint cimport int32_t, int64_t
from libc.math cimport sqrt
from libc.stdlib cimport free, malloc

import numpy as np

from gjkcli.engine._enums import gjk_trace_field


cdef extern from "gjk.h" nogil:
    ctypedef struct gjk_shape:
        int kind
        int n
        const double *v
        const int32_t *adj_start
        const int32_t *adj
        double dim[3]
        double radius
        double extent
        double size
        double R[9]
        double t[3]
        const int32_t *cube
        int cube_k

    ctypedef struct gjk_params:
        double tol
        double gjk_rel
        double epa_rel
        double degenerate_rel
        double plateau_rel
        int max_gjk
        int max_epa
        int brute_below
        int want

    ctypedef struct gjk_trace:
        double *buf
        int cap
        int n

    ctypedef struct gjk_ws:
        pass

    ctypedef struct gjk_result:
        int status, exit, epa_exit, cert_kind
        int iterations, epa_iterations
        double distance, lower, depth, depth_upper
        double normal[3]
        double pa[3]
        double pb[3]
        double plane[4]
        double point[3]
        double tol

    enum: TR_WIDTH

    int gjk_ws_init(gjk_ws *ws, int max_hull_vertices, int max_epa_iterations)
    void gjk_ws_free(gjk_ws *ws)
    void gjk_query(const gjk_shape *A, const gjk_shape *B, const gjk_params *p, gjk_ws *ws,
                   gjk_trace *tr, gjk_result *out)
    double gjk_pair_size(const gjk_shape *A, const gjk_shape *B)
    void gjk_batch(const gjk_shape *shapes, const int32_t *ia, const int32_t *ib, int m,
                   const double *pose_a, const double *pose_b, const double *tol, double tol_rel,
                   const gjk_params *p0, gjk_ws *ws, gjk_trace *tr, gjk_result *out)
    int gjk_support(const gjk_shape *s, const double d[3], int hint, const gjk_params *p,
                    gjk_ws *ws, double out[3], int *steps)


TRACE_WIDTH = TR_WIDTH

# Field offsets of a trace record, by the names gjkcli.engine.results.TraceStep uses; the offsets
# are the header's (enum gjk_trace_field).
_FIELD_NAMES = {
    "TR_PHASE": "phase", "TR_ITER": "iteration", "TR_DIR": "direction", "TR_IA": "index_a",
    "TR_IB": "index_b", "TR_STEPS_A": "steps_a", "TR_STEPS_B": "steps_b", "TR_W": "w",
    "TR_A": "point_a", "TR_B": "point_b", "TR_PASSED": "passed", "TR_N_BEFORE": "n_before",
    "TR_BEFORE": "before", "TR_N_AFTER": "n_after", "TR_AFTER": "after", "TR_LAMBDA": "lambdas",
    "TR_FEATURE": "feature", "TR_KEPT": "kept", "TR_VNORM": "vnorm", "TR_LOWER": "lower",
    "TR_UPPER": "upper", "TR_EXIT": "exit", "TR_FACES": "faces", "TR_SUPPORT": "support",
}
TRACE_FIELDS = {_FIELD_NAMES[m.name]: int(m) for m in gjk_trace_field if m.name != "TR_WIDTH"}


cdef class _Packed:
    """Pointers into the packed arrays of a gjkcli.engine.shapes.ShapeSet, valid while it lives."""

    cdef gjk_shape *shapes
    cdef int count
    cdef int max_n
    cdef object keep

    def __cinit__(self, shapeset):
        cdef const int32_t[::1] kind = shapeset.kind
        cdef const int32_t[::1] nverts = shapeset.nverts
        cdef const int64_t[::1] voff = shapeset.voff
        cdef const int64_t[::1] soff = shapeset.soff
        cdef const int64_t[::1] aoff = shapeset.aoff
        cdef const double[:, ::1] V = shapeset.vertices
        cdef const int32_t[::1] adj_start = shapeset.adj_start
        cdef const int32_t[::1] adj = shapeset.adj
        cdef const double[:, ::1] dims = shapeset.dims
        cdef const double[::1] radius = shapeset.radius
        cdef const double[::1] extent = shapeset.extent
        cdef const double[::1] size = shapeset.size
        cdef const double[:, ::1] R = shapeset.rotation
        cdef const double[:, ::1] t = shapeset.translation
        cdef const int32_t[::1] cube = shapeset.cube
        cdef const int64_t[::1] cube_off = shapeset.cube_off
        cdef const int32_t[::1] cube_k = shapeset.cube_k
        cdef int k, c
        # the arrays the pointers point into (not the set itself: the set keeps this object)
        self.keep = (shapeset.vertices, shapeset.adj_start, shapeset.adj, shapeset.cube)
        self.count = kind.shape[0]
        self.shapes = <gjk_shape *> malloc(sizeof(gjk_shape) * max(self.count, 1))
        if self.shapes == NULL:
            raise MemoryError()
        self.max_n = 1
        for k in range(self.count):
            self.shapes[k].kind = kind[k]
            self.shapes[k].n = nverts[k]
            if nverts[k] > self.max_n:
                self.max_n = nverts[k]
            self.shapes[k].v = &V[voff[k], 0] if nverts[k] > 0 else NULL
            self.shapes[k].adj_start = &adj_start[soff[k]] if nverts[k] > 0 else NULL
            self.shapes[k].adj = &adj[aoff[k]] if adj.shape[0] > aoff[k] else NULL
            for c in range(3):
                self.shapes[k].dim[c] = dims[k, c]
                self.shapes[k].t[c] = t[k, c]
            for c in range(9):
                self.shapes[k].R[c] = R[k, c]
            self.shapes[k].radius = radius[k]
            self.shapes[k].extent = extent[k]
            self.shapes[k].size = size[k]
            self.shapes[k].cube_k = cube_k[k]
            self.shapes[k].cube = &cube[cube_off[k]] if cube_k[k] > 0 else NULL

    def __dealloc__(self):
        free(self.shapes)


cdef _Packed _packed(shapeset):
    """The shapeset's _Packed, made on first use and kept on it: laying out the pointers walks
    every shape, a fixed cost that repeated batches over one set need not pay again. A ShapeSet's
    arrays are not changed after it is made."""
    cdef _Packed packed = getattr(shapeset, "_packed", None)
    if packed is None:
        packed = _Packed(shapeset)
        shapeset._packed = packed
    return packed


cdef gjk_params _params(dict tol, int want):
    cdef gjk_params p
    p.tol = 0.0
    p.gjk_rel = tol["gjk_rel"]
    p.epa_rel = tol["epa_rel"]
    p.degenerate_rel = tol["degenerate_rel"]
    p.plateau_rel = tol["plateau_rel"]
    p.max_gjk = tol["max_gjk_iterations"]
    p.max_epa = tol["max_epa_iterations"]
    p.brute_below = tol["brute_force_below"]
    p.want = want
    return p


def batch(shapeset, ia, ib, pose_a, pose_b, tol, double tol_rel, dict tolerances, int want,
          int trace_cap=0):
    """Run m pair queries in C. Returns a dict of result arrays (and the trace records).

    ia, ib : (m,) int32 shape indices
    pose_a, pose_b : (m, 12) float64 or None, row-major R then t, applied on top of each pose
    tol : (m,) float64 or None (then tol_rel times the pair size)
    """
    cdef _Packed packed = _packed(shapeset)
    cdef const int32_t[::1] a = np.ascontiguousarray(ia, dtype=np.int32)
    cdef const int32_t[::1] b = np.ascontiguousarray(ib, dtype=np.int32)
    cdef int m = a.shape[0]
    cdef int k, c
    if b.shape[0] != m:
        raise ValueError("ia and ib differ in length")
    for k in range(m):
        if a[k] < 0 or a[k] >= packed.count or b[k] < 0 or b[k] >= packed.count:
            raise IndexError(f"pair {k} names a shape outside 0..{packed.count - 1}")
    cdef const double[:, ::1] pa_view
    cdef const double[:, ::1] pb_view
    cdef const double[::1] tol_view
    cdef const double *pa_ptr = NULL
    cdef const double *pb_ptr = NULL
    cdef const double *tol_ptr = NULL
    if pose_a is not None:
        pa_view = np.ascontiguousarray(pose_a, dtype=np.float64).reshape(m, 12)
        pa_ptr = &pa_view[0, 0] if m > 0 else NULL
    if pose_b is not None:
        pb_view = np.ascontiguousarray(pose_b, dtype=np.float64).reshape(m, 12)
        pb_ptr = &pb_view[0, 0] if m > 0 else NULL
    if tol is not None:
        tol_view = np.ascontiguousarray(tol, dtype=np.float64).reshape(m)
        tol_ptr = &tol_view[0] if m > 0 else NULL

    cdef gjk_params p = _params(tolerances, want)
    cdef gjk_ws ws
    if gjk_ws_init(&ws, packed.max_n, p.max_epa) != 0:
        raise MemoryError()
    trace_buf = np.zeros((max(trace_cap, 1), TR_WIDTH), dtype=np.float64)
    cdef double[:, ::1] tb = trace_buf
    cdef gjk_trace tr
    tr.buf = &tb[0, 0]
    tr.cap = trace_cap
    tr.n = 0
    cdef gjk_result *res = <gjk_result *> malloc(sizeof(gjk_result) * max(m, 1))
    if res == NULL:
        gjk_ws_free(&ws)
        raise MemoryError()
    try:
        with nogil:
            gjk_batch(packed.shapes, &a[0] if m > 0 else NULL, &b[0] if m > 0 else NULL, m,
                      pa_ptr, pb_ptr, tol_ptr, tol_rel, &p, &ws, &tr if trace_cap > 0 else NULL, res)
        out = {
            "status": np.empty(m, np.int8), "exit": np.empty(m, np.int8),
            "epa_exit": np.empty(m, np.int8), "cert_kind": np.empty(m, np.int8),
            "iterations": np.empty(m, np.int32), "epa_iterations": np.empty(m, np.int32),
            "distance": np.empty(m), "distance_lower": np.empty(m), "depth": np.empty(m),
            "depth_upper": np.empty(m), "tolerance": np.empty(m),
            "normal": np.empty((m, 3)), "point_a": np.empty((m, 3)), "point_b": np.empty((m, 3)),
            "plane": np.empty((m, 4)), "point": np.empty((m, 3)),
        }
        _copy_results(res, m, out)
    finally:
        free(res)
        gjk_ws_free(&ws)
    out["trace"] = trace_buf[: tr.n] if trace_cap > 0 else None
    return out


cdef void _copy_results(gjk_result *res, int m, dict out):
    cdef signed char[::1] status = out["status"], ex = out["exit"], epa_ex = out["epa_exit"]
    cdef signed char[::1] cert = out["cert_kind"]
    cdef int32_t[::1] iters = out["iterations"], epa_iters = out["epa_iterations"]
    cdef double[::1] dist = out["distance"], lower = out["distance_lower"], depth = out["depth"]
    cdef double[::1] depth_up = out["depth_upper"], tol = out["tolerance"]
    cdef double[:, ::1] normal = out["normal"], pa = out["point_a"], pb = out["point_b"]
    cdef double[:, ::1] plane = out["plane"], point = out["point"]
    cdef int k, c
    for k in range(m):
        status[k] = res[k].status
        ex[k] = res[k].exit
        epa_ex[k] = res[k].epa_exit
        cert[k] = res[k].cert_kind
        iters[k] = res[k].iterations
        epa_iters[k] = res[k].epa_iterations
        dist[k] = res[k].distance
        lower[k] = res[k].lower
        depth[k] = res[k].depth
        depth_up[k] = res[k].depth_upper
        tol[k] = res[k].tol
        for c in range(3):
            normal[k, c] = res[k].normal[c]
            pa[k, c] = res[k].pa[c]
            pb[k, c] = res[k].pb[c]
            point[k, c] = res[k].point[c]
        for c in range(4):
            plane[k, c] = res[k].plane[c]


def support(shapeset, int index, directions, dict tolerances, bint warm=True):
    """Support points of shape `index` (its pose applied) for each row of directions (m, 3).

    Returns (points (m, 3), vertex indices (m,) int32, hill-climbing steps (m,) int32). With warm,
    each climb starts where the previous one ended, as inside GJK; else from the cold start (the
    shape's cube map, or vertex 0 without one).
    """
    cdef _Packed packed = _packed(shapeset)
    if index < 0 or index >= packed.count:
        raise IndexError(index)
    cdef const double[:, ::1] d = np.ascontiguousarray(directions, dtype=np.float64).reshape(-1, 3)
    cdef int m = d.shape[0]
    points = np.empty((m, 3))
    idx = np.empty(m, np.int32)
    steps = np.empty(m, np.int32)
    cdef double[:, ::1] pv = points
    cdef int32_t[::1] iv = idx, sv = steps
    cdef gjk_params p = _params(tolerances, 0)
    cdef gjk_ws ws
    if gjk_ws_init(&ws, packed.max_n, 1) != 0:
        raise MemoryError()
    cdef int k, hint = -1, s
    cdef double out[3]
    with nogil:
        for k in range(m):
            iv[k] = gjk_support(&packed.shapes[index], &d[k, 0], hint, &p, &ws, out, &s)
            sv[k] = s
            pv[k, 0] = out[0]
            pv[k, 1] = out[1]
            pv[k, 2] = out[2]
            if warm and iv[k] >= 0:
                hint = iv[k]
    gjk_ws_free(&ws)
    return points, idx, steps


# -- one pair from Python: the fast path ----------------------------------------------------------
#
# A batch lays out pointers for a whole shape set and fills result arrays; for a single pair that
# fixed cost is most of the call. Here each Shape keeps its own gjk_shape (made once, see
# `CoreShape`), the settings are set once (`configure`), the scratch memory is kept between calls,
# and the answer comes back as one small object. The GIL is held throughout: the scratch memory
# is shared, and one pair is too short a computation to hand the GIL over.

cdef gjk_params _fast_params
cdef bint _configured = False
cdef gjk_ws _fast_ws
cdef int _fast_ws_n = 0


def configure(dict tolerances):
    """Set the tolerances of `pair` (gjkcli.tolerances.DEFAULT as a dict)."""
    global _fast_params, _configured
    _fast_params = _params(tolerances, 2)
    _configured = True


def _dropped():
    """What an unpickled CoreShape becomes: nothing (its Shape makes a new one on first use)."""
    return None


cdef class CoreShape:
    """The compiled core's view of one Shape: a gjk_shape pointing into the Shape's own arrays
    (kept alive here), made once by `core_shape` and reused by every `pair` call."""

    cdef gjk_shape s
    cdef object keep

    def __reduce__(self):
        return (_dropped, ())

    @property
    def n_vertices(self):
        return self.s.n


def core_shape(int kind, vertices, adj_start, adj, cube, dims, double radius, double extent,
               double size, rotation, translation):
    """A CoreShape over a Shape's arrays (C-contiguous: float64 vertices (n, 3), int32 adj_start,
    adj and cube), with its dimensions (3,), pose rotation (3, 3) and translation (3,)."""
    cdef const double[:, ::1] V = vertices
    cdef const int32_t[::1] S = adj_start
    cdef const int32_t[::1] A = adj
    cdef const int32_t[::1] C = cube
    cdef const double[::1] D = np.ascontiguousarray(dims, dtype=np.float64).reshape(3)
    cdef const double[::1] R = np.ascontiguousarray(rotation, dtype=np.float64).reshape(9)
    cdef const double[::1] T = np.ascontiguousarray(translation, dtype=np.float64).reshape(3)
    cdef CoreShape out = CoreShape.__new__(CoreShape)
    cdef int c
    out.keep = (vertices, adj_start, adj, cube)
    out.s.kind = kind
    out.s.n = V.shape[0]
    out.s.v = &V[0, 0] if V.shape[0] > 0 else NULL
    out.s.adj_start = &S[0] if S.shape[0] > 0 else NULL
    out.s.adj = &A[0] if A.shape[0] > 0 else NULL
    out.s.cube = &C[0] if C.shape[0] > 0 else NULL
    out.s.cube_k = <int> (sqrt(C.shape[0] // 6) + 0.5) if C.shape[0] > 0 else 0
    for c in range(3):
        out.s.dim[c] = D[c]
        out.s.t[c] = T[c]
    for c in range(9):
        out.s.R[c] = R[c]
    out.s.radius = radius
    out.s.extent = extent
    out.s.size = size
    return out


cdef class PairAnswer:
    """One pair's answer, as the core gives it (world coordinates).

    status, exit, epa_exit, cert_kind : int codes (gjkcli.engine.results.STATUS_CODES, EXIT_NAMES)
    distance, distance_lower, depth, depth_upper, tolerance : float (depth only where epa_exit)
    iterations, epa_iterations : int
    normal, point_a, point_b, point : (3,) float64 and plane : (4,) float64, made on access
    """

    cdef gjk_result r

    @property
    def status(self):
        return self.r.status

    @property
    def exit(self):
        return self.r.exit

    @property
    def epa_exit(self):
        return self.r.epa_exit

    @property
    def cert_kind(self):
        return self.r.cert_kind

    @property
    def iterations(self):
        return self.r.iterations

    @property
    def epa_iterations(self):
        return self.r.epa_iterations

    @property
    def distance(self):
        return self.r.distance

    @property
    def distance_lower(self):
        return self.r.lower

    @property
    def depth(self):
        return self.r.depth

    @property
    def depth_upper(self):
        return self.r.depth_upper

    @property
    def tolerance(self):
        return self.r.tol

    @property
    def signed_distance(self):
        """Distance when apart, minus the depth when the depth was computed."""
        return -self.r.depth if self.r.epa_exit != 0 else self.r.distance

    @property
    def normal(self):
        return _vec(self.r.normal, 3)

    @property
    def point_a(self):
        return _vec(self.r.pa, 3)

    @property
    def point_b(self):
        return _vec(self.r.pb, 3)

    @property
    def point(self):
        return _vec(self.r.point, 3)

    @property
    def plane(self):
        return _vec(self.r.plane, 4)

    def vectors(self):
        """(13,) float64: normal, point_a, point_b and the certificate's (plane normal and
        offset, or point) in one array."""
        out = np.empty(13)
        cdef double[::1] o = out
        cdef int c
        for c in range(3):
            o[c] = self.r.normal[c]
            o[3 + c] = self.r.pa[c]
            o[6 + c] = self.r.pb[c]
        if self.r.cert_kind == 2:
            for c in range(3):
                o[9 + c] = self.r.point[c]
            o[12] = 0.0
        else:
            for c in range(4):
                o[9 + c] = self.r.plane[c]
        return out


cdef object _vec(const double *x, int n):
    out = np.empty(n)
    cdef double[::1] o = out
    cdef int c
    for c in range(n):
        o[c] = x[c]
    return out


def pair(CoreShape a, CoreShape b, double tol, int want):
    """One pair's answer: GJK, and EPA when wanted, on two CoreShapes in their poses.

    tol : the touching band, model units; a negative value means DEFAULT.touching_rel (the
    `rel` of `configure`) times the pair size, passed as -rel.
    want : code of gjk_want
    """
    global _fast_ws_n
    if not _configured:
        raise RuntimeError("gjkcli.engine._core.configure was not called")
    cdef gjk_shape A = a.s
    cdef gjk_shape B = b.s
    cdef int n = A.n if A.n > B.n else B.n
    if n < 1:
        n = 1
    if n > _fast_ws_n:
        if _fast_ws_n > 0:
            gjk_ws_free(&_fast_ws)
            _fast_ws_n = 0
        if gjk_ws_init(&_fast_ws, n, _fast_params.max_epa) != 0:
            raise MemoryError()
        _fast_ws_n = n
    # the pair frame: centred between the two poses, as gjk_batch works (precision far from the
    # origin); answers are moved back
    cdef double c[3]
    cdef int i
    for i in range(3):
        c[i] = 0.5 * (A.t[i] + B.t[i])
        A.t[i] -= c[i]
        B.t[i] -= c[i]
    cdef gjk_params p = _fast_params
    p.want = want
    p.tol = tol if tol >= 0.0 else -tol * gjk_pair_size(&A, &B)
    cdef PairAnswer out = PairAnswer.__new__(PairAnswer)
    gjk_query(&A, &B, &p, &_fast_ws, NULL, &out.r)
    out.r.tol = p.tol
    for i in range(3):
        out.r.pa[i] += c[i]
        out.r.pb[i] += c[i]
        out.r.point[i] += c[i]
    if out.r.cert_kind == 1:
        out.r.plane[3] += out.r.plane[0] * c[0] + out.r.plane[1] * c[1] + out.r.plane[2] * c[2]
    return out


def pairs(list shapes_a, list shapes_b, tol, int want):
    """m pair answers, pair k being (shapes_a[k], shapes_b[k]), lists of CoreShape: each shape's
    packed form is reused, nothing is packed per call. Returns the dict of result arrays of
    `batch` (without a trace).

    tol : (m,) float64 touching bands, or a float: a negative one is -rel (rel times each pair's
    size), as in `pair`.
    """
    global _fast_ws_n
    if not _configured:
        raise RuntimeError("gjkcli.engine._core.configure was not called")
    cdef Py_ssize_t m = len(shapes_a)
    if len(shapes_b) != m:
        raise ValueError("shapes_a and shapes_b differ in length")
    cdef const double[::1] tol_view
    cdef double tol_one = 0.0
    cdef bint per_pair = not isinstance(tol, float)
    if per_pair:
        tol_view = np.ascontiguousarray(tol, dtype=np.float64).reshape(m)
    else:
        tol_one = tol
    cdef CoreShape ca, cb
    cdef int n = 1
    cdef Py_ssize_t k
    for k in range(m):
        ca = <CoreShape?> shapes_a[k]
        cb = <CoreShape?> shapes_b[k]
        if ca.s.n > n:
            n = ca.s.n
        if cb.s.n > n:
            n = cb.s.n
    if n > _fast_ws_n:
        if _fast_ws_n > 0:
            gjk_ws_free(&_fast_ws)
            _fast_ws_n = 0
        if gjk_ws_init(&_fast_ws, n, _fast_params.max_epa) != 0:
            raise MemoryError()
        _fast_ws_n = n
    cdef gjk_result *res = <gjk_result *> malloc(sizeof(gjk_result) * max(m, 1))
    if res == NULL:
        raise MemoryError()
    cdef gjk_shape A, B
    cdef gjk_params p
    cdef double c[3]
    cdef double t
    cdef int i
    try:
        for k in range(m):
            A = (<CoreShape> shapes_a[k]).s
            B = (<CoreShape> shapes_b[k]).s
            for i in range(3):
                c[i] = 0.5 * (A.t[i] + B.t[i])
                A.t[i] -= c[i]
                B.t[i] -= c[i]
            p = _fast_params
            p.want = want
            t = tol_view[k] if per_pair else tol_one
            p.tol = t if t >= 0.0 else -t * gjk_pair_size(&A, &B)
            gjk_query(&A, &B, &p, &_fast_ws, NULL, &res[k])
            res[k].tol = p.tol
            for i in range(3):
                res[k].pa[i] += c[i]
                res[k].pb[i] += c[i]
                res[k].point[i] += c[i]
            if res[k].cert_kind == 1:
                res[k].plane[3] += res[k].plane[0] * c[0] + res[k].plane[1] * c[1] + res[k].plane[2] * c[2]
        out = {
            "status": np.empty(m, np.int8), "exit": np.empty(m, np.int8),
            "epa_exit": np.empty(m, np.int8), "cert_kind": np.empty(m, np.int8),
            "iterations": np.empty(m, np.int32), "epa_iterations": np.empty(m, np.int32),
            "distance": np.empty(m), "distance_lower": np.empty(m), "depth": np.empty(m),
            "depth_upper": np.empty(m), "tolerance": np.empty(m),
            "normal": np.empty((m, 3)), "point_a": np.empty((m, 3)), "point_b": np.empty((m, 3)),
            "plane": np.empty((m, 4)), "point": np.empty((m, 3)),
        }
        _copy_results(res, <int> m, out)
    finally:
        free(res)
    out["trace"] = None
    return out
