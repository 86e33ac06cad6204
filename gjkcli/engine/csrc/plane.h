/* The plane's compiled core: GJK and EPA on convex polygons, and exact answers on the edges of
 * parts with holes. Plain C over caller-owned arrays, like gjk.h: no Python objects, no
 * allocation inside a query, every loop ends with a named exit (the gjk_exit codes of gjk.h).
 *
 * Conventions (those of gjk.h, in two coordinates)
 * - The Minkowski difference is A - B; w = a - b. GJK looks for the point v of A - B nearest the
 *   origin: the distance is |v| and -v/|v| points from A towards B.
 * - Parts are placed in the world already (a sheet's parts have no poses). Each query subtracts
 *   the pair's centre from every coordinate it reads, so parts far from the origin keep their
 *   precision; answers are moved back at the end.
 * - A part is a list of rings (closed polylines, the last vertex joined to the first), its solid
 *   area the points inside an odd number of rings (even-odd). A part flagged convex is one
 *   ring whose corners all turn one way (pl_classify): GJK and EPA answer its pairs with another
 *   convex part; every other pair goes to the edges (segment hierarchies).
 */
#ifndef GJK_PLANE_H
#define GJK_PLANE_H

#include <stdint.h>

#include "gjk.h"

/* A set of parts, packed: every array is the caller's. */
typedef struct {
    int n_parts;
    const double *v;          /* (V, 2) vertices of every ring of every part */
    const int32_t *ring;      /* (R + 1) offsets of each ring's vertices in v */
    const int32_t *part_ring; /* (P + 1) offsets of each part's rings in ring */
    const int8_t *convex;     /* (P) 1: one convex ring (either orientation), GJK applies */
    const double *box;        /* (P, 4) xmin, ymin, xmax, ymax */
    /* Segment hierarchy of each part, over its edges (edge e joins vertex e to the next vertex
     * of its ring). Node k: box nbox[4k..4k+3]; an inner node's children are nchild[2k] and
     * nchild[2k+1]; a leaf has nchild[2k] = -1 - first and nchild[2k+1] = count, its edges
     * order[first .. first + count), edge j joining vertices order[2j] and order[2j + 1]. Part
     * p's root is node part_node[p]. */
    const double *nbox;
    const int32_t *nchild;
    const int32_t *order;
    const int32_t *part_node;
} pl_set;

/* Trace: fixed-width float64 records, one per GJK or EPA iteration (2D fields). */
enum pl_trace_field {
    PT_PHASE = 0,     /* 0 GJK, 1 EPA */
    PT_ITER = 1,
    PT_DIR = 2,       /* 2: search direction */
    PT_IA = 4, PT_IB = 5, PT_STEPS_A = 6, PT_STEPS_B = 7,
    PT_W = 8,         /* 2: new point of A - B */
    PT_A = 10,        /* 2: support point on A */
    PT_B = 12,        /* 2: support point on B */
    PT_PASSED = 14,   /* GJK: w . dir > 0, the new point went past the origin */
    PT_N_BEFORE = 15,
    PT_BEFORE = 16,   /* 3 x 2 */
    PT_N_AFTER = 22,
    PT_AFTER = 23,    /* 3 x 2 */
    PT_LAMBDA = 29,   /* 3 */
    PT_FEATURE = 32,  /* gjk_feature of the closest point on the new simplex (GJK) */
    PT_KEPT = 33,     /* bitmask over before[0..n_before-1], w at bit n_before */
    PT_VNORM = 34,    /* |v| after the step (GJK); closest edge distance (EPA) */
    PT_LOWER = 35,
    PT_UPPER = 36,
    PT_EXIT = 37,
    PT_EDGES = 38,    /* EPA: vertices (= edges) of the polygon after the step */
    PT_SUPPORT = 39,  /* EPA: support value in the closest edge's normal */
    PT_CLOSEST = 40,  /* 2: the closest point v (GJK) or the closest edge's point (EPA) */
    PT_WIDTH = 42
};

typedef struct {
    double *buf; /* (cap, PT_WIDTH) */
    int cap;
    int n;
} pl_trace;

enum pl_cert { PL_CERT_NONE = 0, PL_CERT_LINE = 1, PL_CERT_POINT = 2, PL_CERT_EDGES = 3, PL_CERT_DISTANCE = 4 };

typedef struct {
    int status, exit, epa_exit, cert_kind;
    int iterations, epa_iterations;
    double distance;     /* |point_a - point_b| when apart, 0 when the parts meet */
    double lower;        /* certified lower bound of the distance */
    double depth;        /* penetration depth (convex: EPA's lower bound; edges: see plane.c) */
    double depth_upper;  /* convex: EPA's upper bound; edges: inf */
    double normal[2];    /* unit, from A towards B */
    double pa[2], pb[2]; /* witness points */
    double line[3];      /* PL_CERT_LINE: unit n and c, n.x <= c on A, >= c on B */
    double point[2];     /* PL_CERT_POINT / PL_CERT_EDGES: a point of both parts */
    int32_t edge_a, edge_b; /* PL_CERT_EDGES: crossing edges (vertex indices into v) */
    double tol;
} pl_result;

typedef struct {
    double gjk_rel, epa_rel, degenerate_rel, plateau_rel;
    int max_gjk, max_epa;
    int want;            /* gjk_want */
    double start[2];     /* GJK's first search direction; (0, 0): from A's box centre towards B's */
} pl_params;

/* Segment hierarchies of every part of a set whose v, ring and part_ring are given: fills nbox
 * ((V + P) x 4), nchild ((V + P) x 2), order (V x 2), part_node (P) and box (P x 4); scratch: 2V doubles.
 * Returns the node count (at most V + P: leaves hold 2 to 4 edges). */
int pl_build(const double *v, const int32_t *ring, const int32_t *part_ring, int n_parts, double *nbox,
             int32_t *nchild, int32_t *order, int32_t *part_node, double *box, double *scratch);

/* convex[p] = 1 when part p is one ring whose corners all turn one way (turns within flat_rel x
 * its extent squared are straight), turning once round: GJK and EPA may answer its pairs. */
void pl_classify(const double *v, const int32_t *ring, const int32_t *part_ring, int n_parts, double flat_rel,
                 int8_t *convex);

/* Support point of convex part p in direction d, by hill climbing its ring from hint (-1: from
 * vertex 0); shift is subtracted from the point. Returns the vertex index within the ring. */
int pl_support(const pl_set *S, int p, const double d[2], int hint, double plateau_rel, const double shift[2],
               double out[2], int *steps);

/* m pairs (ia[k], ib[k]); tol: (m,) bands, or NULL for tol_rel times the pair size. */
void pl_batch(const pl_set *S, const int32_t *ia, const int32_t *ib, int m, const double *tol, double tol_rel,
              const pl_params *p, pl_trace *tr, pl_result *out);

/* Even-odd: is point x inside part p's solid area? */
int pl_inside(const pl_set *S, int p, const double x[2]);

/* Box pairs: every pair of closed boxes that overlap, by one sweep (Baraff 1992; Ericson 2005,
 * 7.5.1). sweep: (n, 4) boxes as (lo along the sweep axis, lo across, hi along, hi across),
 * sorted by their first column; index[s]: the caller's number of sorted box s. Two passes over
 * the same sweep: count[k] = the pairs whose lower number is k; then the pairs themselves into
 * pi, pj (lower number first, sorted by pi then pj), where next[k] is the first slot of k's pairs
 * on entry (the running sum of count) and one past its last on return. The boxes are grown by
 * the caller and valid (lo <= hi); boxes sharing only an edge or a corner are a pair. */
int64_t pl_box_pairs_count(const double *sweep, const int32_t *index, int n, int64_t *count);
void pl_box_pairs_fill(const double *sweep, const int32_t *index, int n, int64_t *next, int64_t *pi,
                       int64_t *pj);

#endif
