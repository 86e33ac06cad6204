# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""Bindings of the plane's compiled core (gjkcli/engine/csrc/plane.c): packed rings in, result
arrays out. The loops run in C without the GIL. The Python API is gjkcli.engine.plane.
"""
from libc.stdint cimport int8_t, int32_t, int64_t

import numpy as np


cdef extern from "plane.h" nogil:
    ctypedef struct pl_set:
        int n_parts
        const double *v
        const int32_t *ring
        const int32_t *part_ring
        const int8_t *convex
        const double *box
        const double *nbox
        const int32_t *nchild
        const int32_t *order
        const int32_t *part_node

    ctypedef struct pl_trace:
        double *buf
        int cap
        int n

    ctypedef struct pl_result:
        int status, exit, epa_exit, cert_kind
        int iterations, epa_iterations
        double distance, lower, depth, depth_upper
        double normal[2]
        double pa[2]
        double pb[2]
        double line[3]
        double point[2]
        int32_t edge_a, edge_b
        double tol

    ctypedef struct pl_params:
        double gjk_rel, epa_rel, degenerate_rel, plateau_rel
        int max_gjk, max_epa
        int want
        double start[2]

    enum: PT_WIDTH

    int pl_build(const double *v, const int32_t *ring, const int32_t *part_ring, int n_parts, double *nbox,
                 int32_t *nchild, int32_t *order, int32_t *part_node, double *box, double *scratch)
    void pl_classify(const double *v, const int32_t *ring, const int32_t *part_ring, int n_parts,
                     double flat_rel, int8_t *convex)
    int pl_support(const pl_set *S, int p, const double d[2], int hint, double plateau_rel,
                   const double shift[2], double out[2], int *steps)
    void pl_batch(const pl_set *S, const int32_t *ia, const int32_t *ib, int m, const double *tol,
                  double tol_rel, const pl_params *p, pl_trace *tr, pl_result *out)
    int pl_inside(const pl_set *S, int p, const double x[2])
    int64_t pl_box_pairs_count(const double *sweep, const int32_t *index, int n, int64_t *count)
    void pl_box_pairs_fill(const double *sweep, const int32_t *index, int n, int64_t *next, int64_t *pi,
                           int64_t *pj)


TRACE_WIDTH = PT_WIDTH


def build(double[:, ::1] v, int32_t[::1] ring, int32_t[::1] part_ring):
    """Segment hierarchies of every part: (nbox (k, 4), nchild (k, 2), order (V, 2), part_node (P,),
    box (P, 4))."""
    cdef int P = part_ring.shape[0] - 1
    cdef int V = v.shape[0]
    nbox = np.empty((V + P + 1, 4))
    nchild = np.empty((V + P + 1, 2), dtype=np.int32)
    order = np.empty((max(V, 1), 2), dtype=np.int32)
    part_node = np.empty(max(P, 1), dtype=np.int32)
    box = np.empty((max(P, 1), 4))
    scratch = np.empty(max(2 * V, 1))
    cdef double[:, ::1] nb = nbox
    cdef int32_t[:, ::1] nc = nchild
    cdef int32_t[:, ::1] od = order
    cdef int32_t[::1] pn = part_node
    cdef double[:, ::1] bx = box
    cdef double[::1] sc = scratch
    cdef int count
    with nogil:
        count = pl_build(&v[0, 0], &ring[0], &part_ring[0], P, &nb[0, 0], &nc[0, 0], &od[0, 0], &pn[0],
                         &bx[0, 0], &sc[0])
    return nbox[:count], nchild[:count], order[:V], part_node[:P], box[:P]


def classify(double[:, ::1] v, int32_t[::1] ring, int32_t[::1] part_ring, double flat_rel):
    """(P,) int8: 1 where a part is one convex ring (pl_classify)."""
    cdef int P = part_ring.shape[0] - 1
    convex = np.zeros(max(P, 1), dtype=np.int8)
    cdef int8_t[::1] cv = convex
    with nogil:
        pl_classify(&v[0, 0], &ring[0], &part_ring[0], P, flat_rel, &cv[0])
    return convex[:P]


def box_pairs(double[:, ::1] sweep, int32_t[::1] index):
    """Every pair of overlapping boxes (pl_box_pairs_*): sweep (n, 4) sorted by its first column,
    index (n,) their numbers. Returns (i (k,) int64, j (k,) int64), i < j, sorted by i then j."""
    cdef int n = index.shape[0]
    count = np.empty(max(n, 1), dtype=np.int64)
    cdef int64_t[::1] cn = count
    cdef int64_t total = 0
    if n > 1:
        with nogil:
            total = pl_box_pairs_count(&sweep[0, 0], &index[0], n, &cn[0])
    pi = np.empty(max(total, 1), dtype=np.int64)
    pj = np.empty(max(total, 1), dtype=np.int64)
    if total == 0:
        return pi[:0], pj[:0]
    nxt = np.cumsum(count[:n]) - count[:n]
    cdef int64_t[::1] nx = nxt
    cdef int64_t[::1] ci = pi
    cdef int64_t[::1] cj = pj
    with nogil:
        pl_box_pairs_fill(&sweep[0, 0], &index[0], n, &nx[0], &ci[0], &cj[0])
    return pi, pj


cdef class Packed:
    """Pointers into a PartSet's arrays, valid while it lives (it keeps the arrays)."""

    cdef pl_set s
    cdef object keep

    def __cinit__(self, v, ring, part_ring, convex, box, nbox, nchild, order, part_node):
        cdef const double[:, ::1] vv = v
        cdef const int32_t[::1] rr = ring
        cdef const int32_t[::1] pr = part_ring
        cdef const int8_t[::1] cv = convex
        cdef const double[:, ::1] bx = box
        cdef const double[:, ::1] nb = nbox
        cdef const int32_t[:, ::1] nc = nchild
        cdef const int32_t[:, ::1] od = order
        cdef const int32_t[::1] pn = part_node
        self.keep = (v, ring, part_ring, convex, box, nbox, nchild, order, part_node)
        self.s.n_parts = pr.shape[0] - 1
        self.s.v = &vv[0, 0]
        self.s.ring = &rr[0]
        self.s.part_ring = &pr[0]
        self.s.convex = &cv[0]
        self.s.box = &bx[0, 0]
        self.s.nbox = &nb[0, 0]
        self.s.nchild = &nc[0, 0]
        self.s.order = &od[0, 0]
        self.s.part_node = &pn[0]

    def inside(self, int p, double x, double y):
        """Even-odd: is (x, y) inside part p's solid area?"""
        cdef double pt[2]
        pt[0] = x
        pt[1] = y
        return bool(pl_inside(&self.s, p, pt))

    def support(self, int p, directions, int hint):
        """Support points of convex part p, hill climbing from hint for each direction in turn
        (warm: each climb starts where the last ended when hint >= 0; -1: each from vertex 0).
        Returns (points (m, 2), ring indices (m,), steps (m,))."""
        cdef const double[:, ::1] d = np.ascontiguousarray(directions, dtype=np.float64).reshape(-1, 2)
        cdef int m = d.shape[0]
        pts = np.empty((m, 2))
        idx = np.empty(m, dtype=np.int32)
        steps = np.empty(m, dtype=np.int32)
        cdef double[:, ::1] po = pts
        cdef int32_t[::1] io = idx
        cdef int32_t[::1] so = steps
        cdef double zero[2]
        cdef double out[2]
        cdef int k, st, h = hint, warm = hint >= 0
        zero[0] = 0.0
        zero[1] = 0.0
        for k in range(m):
            io[k] = pl_support(&self.s, p, &d[k, 0], h if warm else -1, 1e-12, zero, out, &st)
            h = io[k]
            so[k] = st
            po[k, 0] = out[0]
            po[k, 1] = out[1]
        return pts, idx, steps

    def batch(self, ia, ib, tol, double tol_rel, dict tolerances, int want, start, int trace_cap=0):
        """m pair queries in C: a dict of result arrays (and the trace records)."""
        cdef const int32_t[::1] a = np.ascontiguousarray(ia, dtype=np.int32)
        cdef const int32_t[::1] b = np.ascontiguousarray(ib, dtype=np.int32)
        cdef int m = a.shape[0]
        cdef int k, n = self.s.n_parts
        if b.shape[0] != m:
            raise ValueError("ia and ib differ in length")
        for k in range(m):
            if a[k] < 0 or a[k] >= n or b[k] < 0 or b[k] >= n:
                raise IndexError(f"pair {k} names a part outside 0..{n - 1}")
        cdef const double[::1] tol_view
        cdef const double *tol_ptr = NULL
        if tol is not None:
            tol_view = np.ascontiguousarray(tol, dtype=np.float64)
            if tol_view.shape[0] != m:
                raise ValueError("tolerance differs in length from the pairs")
            tol_ptr = &tol_view[0] if m > 0 else NULL
        cdef pl_params p
        p.gjk_rel = tolerances["gjk_rel"]
        p.epa_rel = tolerances["epa_rel"]
        p.degenerate_rel = tolerances["degenerate_rel"]
        p.plateau_rel = tolerances["plateau_rel"]
        p.max_gjk = tolerances["max_gjk_iterations"]
        p.max_epa = tolerances["max_epa_iterations"]
        p.want = want
        p.start[0] = start[0] if start is not None else 0.0
        p.start[1] = start[1] if start is not None else 0.0
        res = np.zeros(max(m, 1), dtype=np.dtype([
            ("status", np.int32), ("exit", np.int32), ("epa_exit", np.int32), ("cert_kind", np.int32),
            ("iterations", np.int32), ("epa_iterations", np.int32), ("distance", np.float64),
            ("lower", np.float64), ("depth", np.float64), ("depth_upper", np.float64),
            ("normal", np.float64, 2), ("pa", np.float64, 2), ("pb", np.float64, 2), ("line", np.float64, 3),
            ("point", np.float64, 2), ("edge_a", np.int32), ("edge_b", np.int32), ("tol", np.float64)],
            align=True))
        if res.dtype.itemsize != sizeof(pl_result):
            raise RuntimeError("pl_result layout differs from its NumPy mirror")
        cdef pl_result *out = <pl_result *> <size_t> res.ctypes.data
        trace = np.zeros((max(trace_cap, 1), PT_WIDTH))
        cdef double[:, ::1] tv = trace
        cdef pl_trace tr
        tr.buf = &tv[0, 0] if trace_cap > 0 else NULL
        tr.cap = trace_cap
        tr.n = 0
        with nogil:
            pl_batch(&self.s, &a[0] if m > 0 else NULL, &b[0] if m > 0 else NULL, m, tol_ptr, tol_rel, &p,
                     &tr if trace_cap > 0 else NULL, out)
        return res[:m], trace[:tr.n]
