/* Convex hulls of small point sets (see smallhull.h).
 *
 * Quickhull (Barber, Dobkin and Huhdanpaa 1996) in its plainest form, for a few dozen points:
 * each point outside the hull belongs to one face it is outside of; the point farthest outside
 * any face is added next (so the corners of a box come before the points on its faces, which
 * then lie on the hull and are not vertices, as qhull leaves them out); the faces it sees go,
 * and its horizon edges make new faces with it. Faces are found by a scan, not by adjacency:
 * for small parts a scan costs less than keeping the links. Nothing here relies on the
 * construction having gone right: the result is checked (closed, oriented, a sphere, every
 * point inside) and any part that fails goes to qhull.
 */
#include "smallhull.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int32_t v[3];
    double n[3]; /* unit outward normal */
    double d;    /* offset: the plane is n . x = d */
    int alive;
} face;

typedef struct {
    face *faces;
    int64_t cap;
    int32_t *owner;   /* per point: the face it is outside of, -1 when inside or a vertex */
    double *far;      /* per point: its distance outside that face */
    int32_t *visible; /* faces seen by the point being added */
    int32_t *horizon; /* 2 per horizon edge: a, b (a -> b of a visible face) */
    int32_t *fresh;   /* faces made by the point being added */
    int32_t *live;    /* the alive faces, so that scans skip the faces that went */
    uint8_t *edge;    /* n x n directed edge counts, for the check */
} work;

static void sub(const double *a, const double *b, double *out)
{
    out[0] = a[0] - b[0];
    out[1] = a[1] - b[1];
    out[2] = a[2] - b[2];
}

static void cross(const double *a, const double *b, double *out)
{
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

static double dot(const double *a, const double *b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

/* Add face (a, b, c) (outward when a, b, c turn counter-clockwise seen from outside); -1 when
 * there is no room or the three points make no plane. */
static int64_t add_face(work *w, int64_t *count, const double *P, int32_t a, int32_t b, int32_t c)
{
    if (*count >= w->cap) return -1;
    face *f = &w->faces[*count];
    double e1[3], e2[3], n[3];
    sub(&P[3 * b], &P[3 * a], e1);
    sub(&P[3 * c], &P[3 * a], e2);
    cross(e1, e2, n);
    double len = sqrt(dot(n, n));
    if (!(len > 0.0)) return -1;
    f->v[0] = a;
    f->v[1] = b;
    f->v[2] = c;
    f->n[0] = n[0] / len;
    f->n[1] = n[1] / len;
    f->n[2] = n[2] / len;
    f->d = dot(f->n, &P[3 * a]);
    f->alive = 1;
    return (*count)++;
}

static double height(const face *f, const double *p) { return dot(f->n, p) - f->d; }

/* The horizon of the n_vis visible faces: the edges a -> b of visible faces whose reverse is on
 * no visible face, into w->horizon; returns their number, or -1 when they make no simple cycle
 * (a vertex starting two of them: the visible faces were not a disc). */
static int64_t horizon(work *w, int64_t n_vis, int32_t n)
{
    int64_t n_hor = 0;
    for (int64_t s = 0; s < n_vis; ++s) {
        const face *f = &w->faces[w->visible[s]];
        for (int e = 0; e < 3; ++e) {
            int32_t a = f->v[e], b = f->v[(e + 1) % 3];
            int shared = 0;
            for (int64_t t = 0; t < n_vis && !shared; ++t) {
                const face *g = &w->faces[w->visible[t]];
                for (int k = 0; k < 3; ++k)
                    if (g->v[k] == b && g->v[(k + 1) % 3] == a) { shared = 1; break; }
            }
            if (shared) continue;
            if (n_hor >= n) return -1;
            for (int64_t t = 0; t < n_hor; ++t)
                if (w->horizon[2 * t] == a) return -1;
            w->horizon[2 * n_hor] = a;
            w->horizon[2 * n_hor + 1] = b;
            ++n_hor;
        }
    }
    return n_hor;
}

/* The hull of the n points P as alive faces of w; returns the number of faces made (alive or
 * not), or -1 when the points are degenerate (collinear, flat) or the construction failed. */
static int64_t build(work *w, const double *P, int32_t n, double eps)
{
    int64_t count = 0;
    /* the first simplex: the extremes of the widest axis, the point farthest from their line,
     * the point farthest from the plane of the three */
    double lo[3], hi[3];
    int32_t at_lo[3] = {0, 0, 0}, at_hi[3] = {0, 0, 0};
    for (int k = 0; k < 3; ++k) lo[k] = hi[k] = P[k];
    for (int32_t i = 1; i < n; ++i)
        for (int k = 0; k < 3; ++k) {
            if (P[3 * i + k] < lo[k]) { lo[k] = P[3 * i + k]; at_lo[k] = i; }
            if (P[3 * i + k] > hi[k]) { hi[k] = P[3 * i + k]; at_hi[k] = i; }
        }
    int axis = 0;
    for (int k = 1; k < 3; ++k)
        if (hi[k] - lo[k] > hi[axis] - lo[axis]) axis = k;
    int32_t i0 = at_lo[axis], i1 = at_hi[axis], i2 = -1, i3 = -1;
    if (!(hi[axis] - lo[axis] > eps)) return -1; /* one point */
    double u[3], best = 0.0;
    sub(&P[3 * i1], &P[3 * i0], u);
    double ulen2 = dot(u, u);
    for (int32_t i = 0; i < n; ++i) {
        double r[3], c[3];
        sub(&P[3 * i], &P[3 * i0], r);
        cross(u, r, c);
        double h2 = dot(c, c) / ulen2; /* squared distance from the line */
        if (h2 > best) { best = h2; i2 = i; }
    }
    if (i2 < 0 || !(sqrt(best) > eps)) return -1; /* collinear */
    double v[3], nrm[3];
    sub(&P[3 * i2], &P[3 * i0], v);
    cross(u, v, nrm);
    double nlen = sqrt(dot(nrm, nrm));
    best = 0.0;
    double side = 0.0;
    for (int32_t i = 0; i < n; ++i) {
        double r[3];
        sub(&P[3 * i], &P[3 * i0], r);
        double h = dot(nrm, r) / nlen;
        if (fabs(h) > best) { best = fabs(h); i3 = i; side = h; }
    }
    if (i3 < 0 || !(best > eps)) return -1; /* flat */
    if (side > 0.0) { int32_t t = i1; i1 = i2; i2 = t; } /* face (i0, i1, i2) looks away from i3 */
    if (add_face(w, &count, P, i0, i1, i2) < 0 || add_face(w, &count, P, i0, i3, i1) < 0
        || add_face(w, &count, P, i1, i3, i2) < 0 || add_face(w, &count, P, i2, i3, i0) < 0)
        return -1;
    int64_t n_live = 4;
    for (int32_t f = 0; f < 4; ++f) w->live[f] = f;
    /* every other point to the face it lies farthest outside of */
    for (int32_t i = 0; i < n; ++i) {
        w->owner[i] = -1;
        if (i == i0 || i == i1 || i == i2 || i == i3) continue;
        double top = eps;
        for (int64_t f = 0; f < count; ++f) {
            double h = height(&w->faces[f], &P[3 * i]);
            if (h > top) { top = h; w->owner[i] = (int32_t)f; w->far[i] = h; }
        }
    }
    for (;;) {
        /* the point farthest outside */
        int32_t p = -1;
        double top = 0.0;
        for (int32_t i = 0; i < n; ++i)
            if (w->owner[i] >= 0 && w->far[i] > top) { top = w->far[i]; p = i; }
        if (p < 0) break; /* every point inside: done */
        const double *x = &P[3 * p];
        /* the faces it sees; when they do not make a disc (a face in the point's plane splits
         * them, which only coplanar points do), again with the faces in its plane: replacing
         * such a face by faces to the point leaves the hull as it is */
        int64_t n_vis = 0, n_hor = 0;
        for (int pass = 0; pass < 2; ++pass) {
            double seen = pass == 0 ? eps : -eps;
            n_vis = 0;
            for (int64_t s = 0; s < n_live; ++s)
                if (height(&w->faces[w->live[s]], x) > seen) w->visible[n_vis++] = w->live[s];
            if (n_vis == 0) return -1; /* its own face no longer sees it: rounding went wrong */
            n_hor = horizon(w, n_vis, n);
            if (n_hor >= 3) break;
        }
        if (n_hor < 3) return -1;
        for (int64_t s = 0; s < n_vis; ++s) w->faces[w->visible[s]].alive = 0;
        for (int64_t s = 0; s < n_hor; ++s) {
            int64_t f = add_face(w, &count, P, w->horizon[2 * s], w->horizon[2 * s + 1], p);
            if (f < 0) return -1;
            w->fresh[s] = (int32_t)f;
        }
        int64_t kept = 0;
        for (int64_t s = 0; s < n_live; ++s)
            if (w->faces[w->live[s]].alive) w->live[kept++] = w->live[s];
        for (int64_t s = 0; s < n_hor; ++s) w->live[kept++] = w->fresh[s];
        n_live = kept;
        w->owner[p] = -1;
        /* the points of the faces that went, to the new face they lie farthest outside of */
        for (int32_t i = 0; i < n; ++i) {
            if (w->owner[i] < 0 || w->faces[w->owner[i]].alive) continue;
            double best_h = eps;
            w->owner[i] = -1;
            for (int64_t s = 0; s < n_hor; ++s) {
                double h = height(&w->faces[w->fresh[s]], &P[3 * i]);
                if (h > best_h) { best_h = h; w->owner[i] = w->fresh[s]; w->far[i] = h; }
            }
        }
    }
    return count;
}

/* The checks of smallhull.h on the alive faces; writes them to out and returns their number, or
 * -1 when one fails. */
static int64_t check(work *w, int64_t count, const double *P, int32_t n, double eps, double min_volume,
                     int64_t room, int64_t *out)
{
    int64_t F = 0;
    double volume = 0.0;
    memset(w->edge, 0, (size_t)n * (size_t)n);
    for (int64_t f = 0; f < count; ++f) {
        const face *g = &w->faces[f];
        if (!g->alive) continue;
        if (F >= room) return -1;
        for (int e = 0; e < 3; ++e) {
            uint8_t *c = &w->edge[(int64_t)g->v[e] * n + g->v[(e + 1) % 3]];
            if (*c) return -1; /* a directed edge twice */
            *c = 1;
            out[3 * F + e] = g->v[e];
        }
        double bc[3];
        cross(&P[3 * g->v[1]], &P[3 * g->v[2]], bc);
        volume += dot(&P[3 * g->v[0]], bc) / 6.0; /* divergence theorem about the centre */
        ++F;
    }
    int64_t V = 0, E = 0;
    for (int32_t a = 0; a < n; ++a) {
        int used = 0;
        for (int32_t b = 0; b < n; ++b) {
            if (!w->edge[(int64_t)a * n + b]) continue;
            if (!w->edge[(int64_t)b * n + a]) return -1; /* an edge without its reverse */
            used = 1;
            ++E;
        }
        V += used;
    }
    if (V - E / 2 + F != 2) return -1;
    if (!(volume > min_volume)) return -1;
    for (int64_t f = 0; f < count; ++f) {
        const face *g = &w->faces[f];
        if (!g->alive) continue;
        for (int32_t i = 0; i < n; ++i)
            if (!(height(g, &P[3 * i]) <= 4.0 * eps)) return -1;
    }
    return F;
}

int small_hulls(const double *local, const int64_t *p_start, const int64_t *n_pts, int64_t parts,
                int64_t max_pts, double tol_rel, const double *min_volume,
                uint8_t *ok, int64_t *tris, const int64_t *t_start, int64_t *n_tri)
{
    int64_t most = 0;
    for (int64_t p = 0; p < parts; ++p)
        if (n_pts[p] <= max_pts && n_pts[p] > most) most = n_pts[p];
    work w;
    memset(&w, 0, sizeof w);
    int rc = 0;
    if (most >= 4) {
        w.cap = 2 * most * most + 8;
        w.faces = malloc((size_t)w.cap * sizeof(face));
        w.owner = malloc((size_t)most * sizeof(int32_t));
        w.far = malloc((size_t)most * sizeof(double));
        w.visible = malloc((size_t)w.cap * sizeof(int32_t));
        w.horizon = malloc((size_t)(2 * most) * sizeof(int32_t));
        w.fresh = malloc((size_t)most * sizeof(int32_t));
        w.live = malloc((size_t)w.cap * sizeof(int32_t));
        w.edge = malloc((size_t)(most * most));
        if (!w.faces || !w.owner || !w.far || !w.visible || !w.horizon || !w.fresh || !w.live || !w.edge) rc = -1;
    }
    for (int64_t p = 0; p < parts; ++p) {
        ok[p] = 0;
        n_tri[p] = 0;
        int64_t n = n_pts[p];
        if (rc != 0 || n < 4 || n > max_pts) continue;
        const double *P = &local[3 * p_start[p]];
        double extent = 0.0;
        int finite = 1;
        for (int64_t i = 0; i < 3 * n; ++i) {
            if (!isfinite(P[i])) { finite = 0; break; }
            if (fabs(P[i]) > extent) extent = fabs(P[i]);
        }
        if (!finite || !(extent > 0.0)) continue;
        double eps = tol_rel * extent;
        int64_t count = build(&w, P, (int32_t)n, eps);
        if (count < 0) continue;
        int64_t F = check(&w, count, P, (int32_t)n, eps, min_volume[p], 2 * n - 4, &tris[3 * t_start[p]]);
        if (F < 0) continue;
        ok[p] = 1;
        n_tri[p] = F;
    }
    free(w.faces);
    free(w.owner);
    free(w.far);
    free(w.visible);
    free(w.horizon);
    free(w.fresh);
    free(w.live);
    free(w.edge);
    return rc;
}
