/* The compiled core of gjk: support maps, GJK, EPA and the per-pair verdict.
 *
 * Plain C over caller-owned arrays: no Python objects, no allocation inside a query except the
 * workspace made once per batch. Every routine ends with a named exit; nothing returns a sentinel.
 *
 * Conventions
 * - A shape lives in its local frame; its pose maps local to the pair frame: x = R l + t.
 * - The Minkowski difference is A - B; w = a - b. GJK looks for the point v of A - B nearest the
 *   origin: the distance is |v| and -v/|v| points from A towards B.
 * - The pair frame is the world frame shifted so that the pair's centre is at the origin, so
 *   that parts far from the world origin keep their precision (the caller does the shift).
 */
#ifndef GJK_CORE_H
#define GJK_CORE_H

#include <stddef.h>
#include <stdint.h>

enum gjk_kind {
    GJK_HULL = 0,     /* convex hull of vertices, with vertex adjacency for hill climbing */
    GJK_POINT = 1,    /* the origin of the local frame (a sphere when inflated) */
    GJK_SEGMENT = 2,  /* from -dim[0] to +dim[0] on local z (a capsule when inflated) */
    GJK_BOX = 3,      /* half extents dim[0..2] */
    GJK_CYLINDER = 4, /* radius dim[0], half height dim[1], axis local z */
    GJK_CONE = 5      /* base radius dim[0] at z = -dim[1], apex at z = +dim[1] */
};

typedef struct {
    int kind;
    int n;                    /* hull: vertex count */
    const double *v;          /* hull: (n, 3) local coordinates, row-major */
    const int32_t *adj_start; /* hull: (n + 1) CSR offsets into adj */
    const int32_t *adj;       /* hull: neighbour vertex indices */
    double dim[3];            /* primitive dimensions, see gjk_kind */
    double radius;            /* inflation: Minkowski sum with a ball of this radius */
    double extent;            /* max |local point| of the core, for relative tolerances */
    double size;              /* local bounding-box diagonal, inflation included */
    double R[9];              /* rotation, row-major */
    double t[3];              /* translation */
    const int32_t *cube;      /* hull: cold-start table, (6, k, k) cells of a cube map of directions,
                               * each the support vertex of its centre direction; NULL when none */
    int cube_k;
} gjk_shape;

enum gjk_want {
    GJK_WANT_INTERSECT = 0, /* boolean: stop at the first separating plane beyond tol */
    GJK_WANT_DISTANCE = 1,  /* distance and witnesses; no depth */
    GJK_WANT_VERDICT = 2    /* distance, and depth by EPA when the shapes intersect */
};

typedef struct {
    double tol;            /* touching band half-width, model units */
    double gjk_rel;        /* see gjkcli/tolerances.py */
    double epa_rel;
    double degenerate_rel;
    double plateau_rel;
    int max_gjk;
    int max_epa;
    int brute_below;
    int want;
} gjk_params;

enum gjk_status { GJK_CLEAR = 0, GJK_TOUCHING = 1, GJK_COLLISION = 2, GJK_UNDECIDED = 3, GJK_INTERSECTING = 4 };

enum gjk_exit {
    GJK_EXIT_NONE = 0,
    GJK_EXIT_SEPARATING_AXIS = 1, /* boolean query: a plane separates the shapes by more than tol */
    GJK_EXIT_CONVERGED = 2,       /* upper and lower distance bounds met */
    GJK_EXIT_REPEATED_SUPPORT = 3,/* the support pair is already in the simplex: no progress possible */
    GJK_EXIT_NO_PROGRESS = 4,     /* |v| did not decrease: machine precision reached */
    GJK_EXIT_ORIGIN_ENCLOSED = 5, /* the tetrahedron contains the origin: the shapes intersect */
    GJK_EXIT_ORIGIN_TOUCHED = 6,  /* |v| is zero at the working precision: the origin is on the simplex */
    GJK_EXIT_ITERATION_CAP = 7,
    EPA_EXIT_CONVERGED = 10,      /* the closest face and the support in its normal met */
    EPA_EXIT_FLAT = 11,           /* A - B has no interior (flat shapes in one plane): depth 0 */
    EPA_EXIT_ITERATION_CAP = 12,
    EPA_EXIT_CAPACITY = 13,       /* polytope storage full */
    EPA_EXIT_DEGENERATE = 14      /* a new face had no normal at the working precision */
};

enum gjk_feature { GJK_FEATURE_VERTEX = 1, GJK_FEATURE_EDGE = 2, GJK_FEATURE_FACE = 3, GJK_FEATURE_INSIDE = 4 };

enum gjk_cert { GJK_CERT_NONE = 0, GJK_CERT_PLANE = 1, GJK_CERT_POINT = 2 };

/* A point of the Minkowski difference with the support points that made it. */
typedef struct {
    double w[3], a[3], b[3];
    int32_t ia, ib; /* support vertex indices; -1 on a smooth primitive */
} gjk_vertex;

typedef struct {
    gjk_vertex p[4];
    double lambda[4];
    int n;
} gjk_simplex;

/* Trace: fixed-width float64 records, one per GJK or EPA iteration, filled when buf != NULL. */
enum gjk_trace_field {
    TR_PHASE = 0,       /* 0 GJK, 1 EPA */
    TR_ITER = 1,
    TR_DIR = 2,         /* 3: search direction */
    TR_IA = 5, TR_IB = 6, TR_STEPS_A = 7, TR_STEPS_B = 8,
    TR_W = 9,           /* 3: new point of A - B */
    TR_A = 12,          /* 3: support point on A */
    TR_B = 15,          /* 3: support point on B */
    TR_PASSED = 18,     /* GJK: w . dir > 0, the new point went past the origin */
    TR_N_BEFORE = 19,
    TR_BEFORE = 20,     /* 4 x 3 */
    TR_N_AFTER = 32,
    TR_AFTER = 33,      /* 4 x 3 */
    TR_LAMBDA = 45,     /* 4 */
    TR_FEATURE = 49,    /* gjk_feature of the origin's closest point on the new simplex */
    TR_KEPT = 50,       /* bitmask over before[0..n_before-1], w at bit n_before: points kept */
    TR_VNORM = 51,      /* |v| after the step (GJK); closest face distance (EPA) */
    TR_LOWER = 52,      /* GJK: distance lower bound; EPA: depth lower bound */
    TR_UPPER = 53,      /* GJK: distance upper bound; EPA: depth upper bound */
    TR_EXIT = 54,       /* gjk_exit on the step that ended the loop, else 0 */
    TR_FACES = 55,      /* EPA: faces of the polytope after the step */
    TR_SUPPORT = 56,    /* EPA: support value in the face normal */
    TR_WIDTH = 57
};

typedef struct {
    double *buf; /* (cap, TR_WIDTH) */
    int cap;
    int n;
} gjk_trace;

/* EPA polytope storage. */
typedef struct {
    int32_t v[3];
    int32_t adj[3]; /* the face across edge v[e] -> v[e + 1], -1 when none */
    double n[3];
    double dist;
    int alive;
} epa_face;

/* Scratch memory for one thread: made once, reused for every query. */
typedef struct {
    int32_t *mark;   /* plateau exploration: visit stamps per hull vertex */
    int32_t *queue;
    int cap_n;
    int32_t stamp;
    gjk_vertex *verts;
    int cap_verts;
    epa_face *faces;
    int cap_faces;
    int32_t *edges;  /* EPA horizon edges: a, b, the kept face across them and its edge slot */
    int32_t *stack;  /* EPA: faces to visit while removing those that see the new point; then
                      * the old-to-new face index map of the compaction */
    int32_t *vlink;  /* EPA: (2, cap_verts) horizon edge starting / ending at each vertex, -1 */
} gjk_ws;

typedef struct {
    int status, exit, epa_exit, cert_kind;
    int iterations, epa_iterations;
    double distance;     /* |point_a - point_b| when separate, 0 when intersecting */
    double lower;        /* certified lower bound of the distance (the plane's gap) */
    double depth;        /* penetration depth when intersecting (EPA), else 0 */
    double depth_upper;  /* EPA's upper bound of the depth */
    double normal[3];    /* unit, from A towards B: B moves along it to separate */
    double pa[3], pb[3]; /* witness points, pair frame */
    double plane[4];     /* certificate: unit normal n and offset c, n.x <= c on A, >= c on B */
    double point[3];     /* certificate: a point of both shapes */
    double tol;          /* the touching band used */
} gjk_result;

/* One pair query as GJK and EPA read it, in place of a long parameter list: the pair (each
 * shape posed in the pair frame), its settings (touching band, relative tolerances, caps, what
 * is wanted), this thread's scratch memory and the trace. */
typedef struct {
    const gjk_shape *A, *B;
    const gjk_params *p;
    gjk_ws *ws;
    gjk_trace *tr; /* NULL: no trace */
} gjk_pair;

/* What GJK leaves for the verdict and for EPA. */
typedef struct {
    gjk_simplex simplex; /* the last simplex; its lambda weigh its points into v */
    double v[3];         /* the nearest point of A - B to the origin found: |v| >= the distance */
    double lower;        /* the largest lower bound of the distance, a separating plane's gap */
    double best_dir[3];  /* that plane's unit normal, from A towards B (before any plane: -v) */
    double plane_ab[2];  /* best_dir . a and best_dir . b of the support pair that gave it */
    int iterations;
} gjk_bounds;

/* What EPA leaves: the depth's bounds and the contact. */
typedef struct {
    double lo, hi;       /* lo <= penetration depth <= hi */
    double normal[3];    /* unit, from A towards B */
    double pa[3], pb[3]; /* witness points, pair frame */
    int iterations;
} gjk_depth;

/* support.c */
int gjk_support(const gjk_shape *s, const double d[3], int hint, const gjk_params *p, gjk_ws *ws,
                double out[3], int *steps);
int gjk_support_local(const gjk_shape *s, const double dl[3], int hint, const gjk_params *p,
                      gjk_ws *ws, double out[3], int *steps);

/* simplex.c: closest point of a simplex to the origin (signed volumes). Reduces s to the
 * smallest sub-simplex holding that point; returns the feature; kept is a bitmask over the
 * input order. */
int gjk_closest(gjk_simplex *s, double v[3], int *kept);
/* simplex.c: an enclosing tetrahedron's weights corrected until sum(lambda w) is zero to rounding. */
void gjk_polish(gjk_simplex *s);

/* gjk.c: GJK's distance bounds of q's pair; returns the gjk_exit that ended the loop. */
int gjk_distance(const gjk_pair *q, gjk_bounds *out);

/* epa.c: EPA's depth bounds of q's pair from GJK's final simplex, which holds the origin;
 * returns the gjk_exit (EPA_EXIT_*) that ended the loop. */
int gjk_epa(const gjk_pair *q, const gjk_simplex *start, gjk_depth *out);

/* query.c */
int gjk_ws_init(gjk_ws *ws, int max_hull_vertices, int max_epa_iterations);
void gjk_ws_free(gjk_ws *ws);
void gjk_query(const gjk_shape *A, const gjk_shape *B, const gjk_params *p, gjk_ws *ws,
               gjk_trace *tr, gjk_result *out);
double gjk_pair_size(const gjk_shape *A, const gjk_shape *B);
/* m pairs (shapes[ia[k]], shapes[ib[k]]), each optionally moved by a pose (m, 12): row-major R then
 * t. tol: (m,) touching bands, or NULL for tol_rel times the pair size. Answers in the input frame. */
void gjk_batch(const gjk_shape *shapes, const int32_t *ia, const int32_t *ib, int m,
               const double *pose_a, const double *pose_b, const double *tol, double tol_rel,
               const gjk_params *p0, gjk_ws *ws, gjk_trace *tr, gjk_result *out);

/* small vector helpers shared by the sources */
static inline double v3_dot(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
static inline void v3_sub(double o[3], const double a[3], const double b[3]) { o[0] = a[0] - b[0]; o[1] = a[1] - b[1]; o[2] = a[2] - b[2]; }
static inline void v3_cross(double o[3], const double a[3], const double b[3]) {
    double x = a[1] * b[2] - a[2] * b[1], y = a[2] * b[0] - a[0] * b[2], z = a[0] * b[1] - a[1] * b[0];
    o[0] = x; o[1] = y; o[2] = z;
}
static inline void v3_copy(double o[3], const double a[3]) { o[0] = a[0]; o[1] = a[1]; o[2] = a[2]; }
static inline void v3_scale(double o[3], const double a[3], double s) { o[0] = a[0] * s; o[1] = a[1] * s; o[2] = a[2] * s; }
void trace_put_gjk(gjk_trace *tr, int iter, const double dir[3], const gjk_vertex *w, int steps_a,
                   int steps_b, int passed, const gjk_simplex *before, const gjk_simplex *after,
                   int feature, int kept, double vnorm, double lower, double upper, int exit);

#endif
