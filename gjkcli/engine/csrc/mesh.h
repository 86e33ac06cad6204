/* Exact queries between triangle meshes: a bounding volume hierarchy per mesh, traversed pairwise.
 *
 * Plain C over caller-owned arrays, like gjk.h: no Python objects, no allocation inside a query
 * except growing the reusable workspace. Every traversal ends with a named exit.
 *
 * Conventions
 * - A mesh lives in its own frame (the caller centres it on its bounding box). A pair query takes
 *   the pose of B relative to A, x_A = R x_B + t, and answers in A's frame, so each hierarchy is
 *   built once and reused across poses (Gottschalk, Lin and Manocha 1996, "OBBTree").
 * - Boxes are oriented (OBB): axes from the covariance of the node's corners, the split along the
 *   longest axis at the mean of the triangle centroids (as FCL's default), one triangle per leaf
 *   unless asked otherwise. Children of a node are stored next to each other.
 * - Tolerances are lengths in model units handed in by the caller, who scales them by the pair's
 *   size; the only fixed constants are the relative ones below.
 */
#ifndef GJK_MESH_H
#define GJK_MESH_H

#include <stddef.h>
#include <stdint.h>

/* Boxes are padded by this fraction of the mesh's size, so that rounding in the fit never leaves
 * a corner outside its box (the fit rounds at ~1e-16 relative). */
#define MESH_BOX_PAD_REL 1e-12
/* The box-overlap test adds this to every |cos| between box axes: near-parallel edge axes
 * otherwise turn rounding into a false separation (Gottschalk 1996 adds 1e-6 in single precision). */
#define MESH_SAT_COS_PAD 1e-12
/* The distance bound skips edge axes a x b with sin^2(a, b) below this (within 1e-6 rad of
 * parallel): the face axes cover them, and dividing by a tiny |a x b| would amplify rounding. */
#define MESH_PARALLEL_SIN2 1e-12
/* Jacobi rotations stop when the off-diagonal's squared norm is below this fraction of the
 * diagonal's: off-diagonal entries at 1e-15 relative, the rounding of the sums themselves. */
#define MESH_JACOBI_REL2 1e-30

typedef struct {
    double c[3];   /* centre, mesh frame */
    double ax[9];  /* rows: unit axes */
    double e[3];   /* half extents along the axes */
    int32_t first; /* internal: left child, the right one is first + 1; leaf: first slot in tri */
    int32_t count; /* 0 for an internal node; a leaf's triangle count */
} mesh_node;

typedef struct {
    int32_t n_verts, n_tris;
    const double *v;     /* (n_verts, 3), caller-owned */
    const int32_t *f;    /* (n_tris, 3), caller-owned */
    double *tri;         /* (n_tris, 9): corners of each leaf slot's triangle */
    int32_t *order;      /* (n_tris,): face index of each leaf slot */
    mesh_node *nodes;
    int32_t n_nodes, depth;
    double size;         /* bounding-box diagonal */
    /* winding-number caps (mesh_wind_prepare): the boundary edges of each node's patch */
    int32_t *cap_off;    /* (n_nodes + 1) offsets into cap_edge */
    int32_t *cap_edge;   /* (E, 2) directed edges, vertex indices */
} mesh_bvh;

typedef struct {
    int32_t a, b; /* node indices (b = -1 for single-tree traversals) */
    double lb;    /* lower bound of the distance, when known */
} mesh_item;

/* Scratch memory for one thread: made once, grown when a deeper tree comes along. */
typedef struct {
    mesh_item *stack;
    int cap;
} mesh_ws;

enum mesh_exit {
    MESH_EXIT_NONE = 0,
    MESH_EXIT_DEEP_CROSSING = 1, /* two triangles cross by more than the threshold: stop */
    MESH_EXIT_EXHAUSTED = 2,     /* every box pair within reach was visited */
    MESH_EXIT_STOP_DISTANCE = 3, /* the distance fell to the caller's stop threshold */
    MESH_EXIT_INTERSECTING = 4,  /* distance query: two triangles share a point, the distance is 0 */
    MESH_EXIT_NO_MEMORY = 5,
    MESH_EXIT_FULL = 6           /* collecting crossings: the caller's buffer is full */
};

/* What a crossing traversal found. */
typedef struct {
    int exit;
    int crossing;        /* 0 no crossing, 1 only crossings within the threshold, 2 a deep one */
    int near;            /* a triangle pair within the margin (touching evidence) */
    int32_t tri_a, tri_b;/* face indices of the witness pair, -1 when none */
    double point[3];     /* a point of both triangles (A frame) */
    double straddle;     /* the witness pair's crossing depth, see tri_tri_intersect */
    int64_t visits;      /* box pairs tested */
    int64_t tests;       /* triangle pairs tested */
    int n_pairs;         /* crossings within the threshold recorded */
} mesh_hit;

/* What a distance traversal found. */
typedef struct {
    int exit;
    double distance;     /* |pa - pb|; 0 when intersecting */
    double pa[3], pb[3]; /* closest points, A frame */
    int32_t tri_a, tri_b;
    int64_t visits, tests;
} mesh_near;

/* small vector helpers of the mesh sources (gjk.h has its own; the two headers stay apart) */
static inline double m3_dot(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
static inline void m3_sub(double o[3], const double a[3], const double b[3]) { o[0] = a[0] - b[0]; o[1] = a[1] - b[1]; o[2] = a[2] - b[2]; }
static inline void m3_cross(double o[3], const double a[3], const double b[3]) {
    double x = a[1] * b[2] - a[2] * b[1], y = a[2] * b[0] - a[0] * b[2], z = a[0] * b[1] - a[1] * b[0];
    o[0] = x; o[1] = y; o[2] = z;
}
static inline void m3_copy(double o[3], const double a[3]) { o[0] = a[0]; o[1] = a[1]; o[2] = a[2]; }
static inline void m3_axpy(double o[3], const double a[3], double s, const double d[3]) {
    o[0] = a[0] + s * d[0]; o[1] = a[1] + s * d[1]; o[2] = a[2] + s * d[2];
}
static inline double m3_dist2(const double a[3], const double b[3]) {
    double d[3];
    m3_sub(d, a, b);
    return m3_dot(d, d);
}

/* bvh.c: construction */
int mesh_build(mesh_bvh *M, const double *v, int32_t n_verts, const int32_t *f, int32_t n_tris,
               int leaf_size);
int mesh_wind_prepare(mesh_bvh *M);
void mesh_free(mesh_bvh *M);
int mesh_ws_init(mesh_ws *ws);
int mesh_ws_reserve(mesh_ws *ws, int n);
void mesh_ws_free(mesh_ws *ws);

/* bvh.c: queries; R (row-major) and t place B in A's frame */
void mesh_intersect(const mesh_bvh *A, const mesh_bvh *B, const double R[9], const double t[3],
                    double margin, double deep, double snap, mesh_ws *ws, int32_t *pairs, int cap,
                    mesh_hit *out);
void mesh_distance(const mesh_bvh *A, const mesh_bvh *B, const double R[9], const double t[3],
                   double upper, double stop_below, double snap, mesh_ws *ws, mesh_near *out);
double mesh_closest(const mesh_bvh *M, const double q[3], double upper, double stop_below,
                    mesh_ws *ws, double c[3], int32_t *tri);
double mesh_winding(const mesh_bvh *M, const double q[3], mesh_ws *ws);
double mesh_winding_brute(const mesh_bvh *M, const double q[3]);

/* tri.c: one triangle against another (corners as 9 doubles, row-major) */
int tri_tri_intersect(const double P[9], const double Q[9], double snap, double point[3],
                      double *straddle);
double tri_tri_distance2(const double P[9], const double Q[9], double pp[3], double qq[3]);
double point_tri_closest2(const double q[3], const double T[9], double c[3]);
double tri_solid_angle(const double q[3], const double a[3], const double b[3], const double c[3]);

#endif
