# Included by _mesh.pyx: a convex primitive against a mesh's hierarchy (csrc/primmesh.h), the
# bindings of gjkcli.engine.primitive. Kept in its own file so that the mesh bindings and these
# change apart.

cdef extern from "primmesh.h" nogil:
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

    ctypedef struct gjk_ws:
        pass

    enum prim_exit:
        PRIM_EXIT_NO_MEMORY

    enum gjk_want:
        GJK_WANT_VERDICT

    ctypedef struct prim_hit:
        int exit
        double distance, lower
        double pa[3]
        double pb[3]
        int32_t tri
        int touching, undecided
        double depth
        double depth_normal[3]
        double depth_pa[3]
        double depth_pb[3]
        double depth_point[3]
        int32_t depth_tri
        int64_t visits, tests

    int gjk_ws_init(gjk_ws *ws, int max_hull_vertices, int max_epa_iterations)
    void gjk_ws_free(gjk_ws *ws)
    void prim_mesh_query(const mesh_bvh *M, const gjk_shape *P, const gjk_params *p, int stop_deep,
                         mesh_ws *ws, gjk_ws *gws, prim_hit *out)


def primitive_mesh(BVH m, int kind, dims, double radius, rotation, translation, double extent,
                   double size, double tol, dict tolerances, bint stop_deep=True, Workspace ws=None):
    """A convex primitive (a gjkcli.engine.shapes.Shape's kind code, dims (3,), inflation radius,
    rotation (3, 3) and translation (3,) placing it in the mesh's own frame, its extent and size)
    against the mesh's triangles, at touching band tol; tolerances: the engine's relative
    tolerances and caps (gjkcli.tolerances.DEFAULT as a dict).

    Returns a dict: exit (int), distance, lower, point_a (the primitive's), point_b (the
    mesh's), tri, touching (bool), undecided (int), depth, depth_normal, depth_a, depth_b,
    depth_point, depth_tri, visits, tests; points in the mesh frame.
    """
    cdef const double[::1] D = np.ascontiguousarray(dims, dtype=np.float64).reshape(3)
    cdef const double[::1] R = np.ascontiguousarray(rotation, dtype=np.float64).reshape(9)
    cdef const double[::1] T = np.ascontiguousarray(translation, dtype=np.float64).reshape(3)
    cdef gjk_shape P
    cdef gjk_params p
    cdef gjk_ws gws
    cdef prim_hit h
    cdef int c
    cdef Workspace w = _ws(ws)
    memset(&P, 0, sizeof(P))
    P.kind = kind
    for c in range(3):
        P.dim[c] = D[c]
        P.t[c] = T[c]
    for c in range(9):
        P.R[c] = R[c]
    P.radius = radius
    P.extent = extent
    P.size = size
    p.tol = tol
    p.gjk_rel = tolerances["gjk_rel"]
    p.epa_rel = tolerances["epa_rel"]
    p.degenerate_rel = tolerances["degenerate_rel"]
    p.plateau_rel = tolerances["plateau_rel"]
    p.max_gjk = tolerances["max_gjk_iterations"]
    p.max_epa = tolerances["max_epa_iterations"]
    p.brute_below = tolerances["brute_force_below"]
    p.want = GJK_WANT_VERDICT
    if gjk_ws_init(&gws, 3, p.max_epa) != 0:
        raise MemoryError()
    with nogil:
        prim_mesh_query(&m.m, &P, &p, stop_deep, &w.ws, &gws, &h)
    gjk_ws_free(&gws)
    if h.exit == PRIM_EXIT_NO_MEMORY:
        raise MemoryError()
    return {
        "exit": h.exit, "distance": h.distance, "lower": h.lower,
        "point_a": np.array([h.pa[0], h.pa[1], h.pa[2]]),
        "point_b": np.array([h.pb[0], h.pb[1], h.pb[2]]), "tri": h.tri,
        "touching": bool(h.touching), "undecided": h.undecided, "depth": h.depth,
        "depth_normal": np.array([h.depth_normal[0], h.depth_normal[1], h.depth_normal[2]]),
        "depth_a": np.array([h.depth_pa[0], h.depth_pa[1], h.depth_pa[2]]),
        "depth_b": np.array([h.depth_pb[0], h.depth_pb[1], h.depth_pb[2]]),
        "depth_point": np.array([h.depth_point[0], h.depth_point[1], h.depth_point[2]]),
        "depth_tri": h.depth_tri, "visits": h.visits, "tests": h.tests,
    }
