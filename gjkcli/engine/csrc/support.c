/* Support maps: the point of a shape furthest in a direction.
 *
 * Hulls climb their vertex adjacency (the seed tutorials' hill climbing; coal's support "hint"):
 * on a convex polytope a vertex that no edge-neighbour beats is a global maximum, so the climb is
 * exact in exact arithmetic. In floating point a nearly coplanar neighbour can tie with the
 * current vertex while a vertex beyond it is higher; the climb then explores the plateau of
 * tied vertices (visit stamps, as coal's getShapeSupportLog keeps a visited mask) before it
 * declares a maximum. Small hulls use a linear scan, which is faster below brute_below vertices.
 */
#include <math.h>

#include "gjk.h"

static int hull_scan(const gjk_shape *s, const double d[3]) {
    const double *v = s->v;
    int best = 0;
    double best_dot = v3_dot(v, d);
    for (int i = 1; i < s->n; i++) {
        double dot = v3_dot(v + 3 * i, d);
        if (dot > best_dot) { best_dot = dot; best = i; }
    }
    return best;
}

/* Breadth-first walk over the vertices tied with `from` (within tie of top); returns a vertex
 * whose value beats top, or -1 when the plateau holds none (a true maximum). */
static int plateau_escape(const gjk_shape *s, const double d[3], int from, double top, double tie,
                          gjk_ws *ws, int *steps) {
    if (ws == 0 || ws->cap_n < s->n) return -1;
    if (++ws->stamp == INT32_MAX) {
        for (int i = 0; i < ws->cap_n; i++) ws->mark[i] = 0;
        ws->stamp = 1;
    }
    int head = 0, tail = 0;
    ws->queue[tail++] = from;
    ws->mark[from] = ws->stamp;
    while (head < tail) {
        int i = ws->queue[head++];
        for (int k = s->adj_start[i]; k < s->adj_start[i + 1]; k++) {
            int j = s->adj[k];
            if (ws->mark[j] == ws->stamp) continue;
            ws->mark[j] = ws->stamp;
            double dot = v3_dot(s->v + 3 * j, d);
            (*steps)++;
            if (dot > top) return j;
            if (dot >= top - tie) ws->queue[tail++] = j;
        }
    }
    return -1;
}

/* Cell of direction d in a cube map of k x k cells a face (the layout gjkcli.shapes._cube_map
 * builds): the face is the major axis and its sign, the cell the grid position of the other two
 * coordinates divided by the major one. */
static int cube_cell(const double d[3], int k) {
    double ax = fabs(d[0]), ay = fabs(d[1]), az = fabs(d[2]);
    int a = (ax >= ay && ax >= az) ? 0 : (ay >= az ? 1 : 2);
    double m = fabs(d[a]);
    if (!(m > 0.0)) return 0;
    double u = (d[(a + 1) % 3] / m + 1.0) * 0.5 * k, v = (d[(a + 2) % 3] / m + 1.0) * 0.5 * k;
    int i = u < 0.0 ? 0 : (u >= k ? k - 1 : (int)u);
    int j = v < 0.0 ? 0 : (v >= k ? k - 1 : (int)v);
    return ((2 * a + (d[a] < 0.0)) * k + i) * k + j;
}

static int hull_climb(const gjk_shape *s, const double d[3], int hint, const gjk_params *p,
                      gjk_ws *ws, int *steps) {
    /* Start from the hint (where the last climb ended) or the cube map's vertex for d, whichever
     * is higher along d: the table bounds a cold climb to the few steps inside one cell, the
     * hint keeps a warm one as short as GJK's turn of direction allows. */
    int i = (hint >= 0 && hint < s->n) ? hint : 0;
    double top = v3_dot(s->v + 3 * i, d);
    if (s->cube) {
        int c = s->cube[cube_cell(d, s->cube_k)];
        double dot = v3_dot(s->v + 3 * c, d);
        if (dot > top || !(hint >= 0 && hint < s->n)) { i = c; top = dot; }
    }
    double tie = p->plateau_rel * sqrt(v3_dot(d, d)) * s->extent;
    for (;;) {
        /* the best neighbour of i (steepest ascent) */
        int next = -1;
        double next_dot = -INFINITY;
        for (int k = s->adj_start[i]; k < s->adj_start[i + 1]; k++) {
            int j = s->adj[k];
            double dot = v3_dot(s->v + 3 * j, d);
            if (dot > next_dot) { next_dot = dot; next = j; }
        }
        if (!(next_dot > top)) {
            /* No neighbour beats i: a strict maximum when none ties with it either (the common
             * case, which needs no search); else the plateau of vertices tied with i may lead
             * higher. Values only grow, so the climb ends. */
            if (next_dot < top - tie) return i;
            next = plateau_escape(s, d, i, top, tie, ws, steps);
            if (next < 0) return i;
            next_dot = v3_dot(s->v + 3 * next, d);
        }
        i = next;
        top = next_dot;
        (*steps)++;
    }
}

/* Support in the local frame, core only (no inflation). Returns the vertex index, or -1 on a
 * smooth part of a primitive. */
int gjk_support_local(const gjk_shape *s, const double dl[3], int hint, const gjk_params *p,
                      gjk_ws *ws, double out[3], int *steps) {
    *steps = 0;
    switch (s->kind) {
    case GJK_HULL: {
        int i = (s->n < p->brute_below || s->adj == 0) ? hull_scan(s, dl) : hull_climb(s, dl, hint, p, ws, steps);
        v3_copy(out, s->v + 3 * i);
        return i;
    }
    case GJK_POINT:
        out[0] = out[1] = out[2] = 0.0;
        return 0;
    case GJK_SEGMENT:
        out[0] = out[1] = 0.0;
        out[2] = dl[2] >= 0.0 ? s->dim[0] : -s->dim[0];
        return dl[2] >= 0.0 ? 1 : 0;
    case GJK_BOX: {
        int index = 0;
        for (int k = 0; k < 3; k++) {
            out[k] = dl[k] >= 0.0 ? s->dim[k] : -s->dim[k];
            index |= (dl[k] >= 0.0) << k;
        }
        return index;
    }
    case GJK_CYLINDER: {
        double r = s->dim[0], h = s->dim[1];
        double radial = sqrt(dl[0] * dl[0] + dl[1] * dl[1]);
        out[2] = dl[2] >= 0.0 ? h : -h;
        if (radial > 0.0) { out[0] = r * dl[0] / radial; out[1] = r * dl[1] / radial; }
        else { out[0] = out[1] = 0.0; } /* along the axis: the cap's centre is a maximum */
        return -1;
    }
    case GJK_CONE: {
        /* Apex (0, 0, h) against the best point of the base rim (r e, -h). */
        double r = s->dim[0], h = s->dim[1];
        double radial = sqrt(dl[0] * dl[0] + dl[1] * dl[1]);
        double apex = h * dl[2], rim = r * radial - h * dl[2];
        if (apex >= rim) { out[0] = out[1] = 0.0; out[2] = h; return 0; }
        out[2] = -h;
        if (radial > 0.0) { out[0] = r * dl[0] / radial; out[1] = r * dl[1] / radial; }
        else { out[0] = out[1] = 0.0; } /* straight down the axis: the base's centre is a maximum */
        return -1;
    }
    }
    out[0] = out[1] = out[2] = 0.0;
    return -1;
}

/* Support in the pair frame: rotate d into the local frame (R^T d), take the local support,
 * map it back, then add the inflation radius along d (the "collision skin"). */
int gjk_support(const gjk_shape *s, const double d[3], int hint, const gjk_params *p, gjk_ws *ws,
                double out[3], int *steps) {
    const double *R = s->R;
    double dl[3] = {
        R[0] * d[0] + R[3] * d[1] + R[6] * d[2],
        R[1] * d[0] + R[4] * d[1] + R[7] * d[2],
        R[2] * d[0] + R[5] * d[1] + R[8] * d[2],
    };
    double l[3];
    int index = gjk_support_local(s, dl, hint, p, ws, l, steps);
    for (int k = 0; k < 3; k++) out[k] = R[3 * k] * l[0] + R[3 * k + 1] * l[1] + R[3 * k + 2] * l[2] + s->t[k];
    if (s->radius > 0.0) {
        double len = sqrt(v3_dot(d, d));
        if (len > 0.0)
            for (int k = 0; k < 3; k++) out[k] += s->radius * d[k] / len;
    }
    return index;
}
