/* Convex hulls of small point sets (see smallhull.h).
 *
 * Quickhull (Barber, Dobkin and Huhdanpaa 1996) in its plainest form, for a few dozen points:
 * each point outside the hull belongs to one face it is outside of; the point farthest outside
 * any face is added next (so the corners of a box come before the points on its faces, which
 * then lie on the hull and are not vertices, as qhull leaves them out); the faces it sees go,
 * and its horizon edges make new faces with it. Points are assigned to faces by a scan (for small
 * parts a scan costs less than keeping conflict lists); the faces a point sees are found by a walk
 * over face adjacency from the face it is outside of, as quickhull does, so that they are one
 * connected disc. A global scan also finds faces on the far side that see the point only through
 * rounding: a thin triangle among coplanar points (a cylinder's cap) has a normal known only to
 * rounding / its width, and a point across the cap may lie a few eps above its plane; taking
 * such a face too split the visible faces in two and the hull into a non-manifold. Nothing here
 * relies on the construction having gone right: the result is checked (closed, oriented, a
 * sphere, every point inside) and any part that fails goes to qhull.
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
    int32_t *next;    /* per point: the end of the horizon edge it starts, -1 when none */
    int32_t *across;  /* n x n: the face that has directed edge a -> b (the last made; entries
                       * left from an earlier part are told apart by neighbour()) */
    uint8_t *mark;    /* per face: seen by the point being added */
    uint8_t *edge;    /* n x n directed edge counts, for the check */
    int32_t *root;    /* per face: its flat group's union-find parent, for the check */
    double *plane;    /* per group root: its plane (unit normal, offset), for the check */
    int32_t n;        /* the part's number of points: the row length of across */
    int64_t count;    /* the faces made so far for the part */
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
    w->mark[*count] = 0;
    w->across[(int64_t)a * w->n + b] = (int32_t)*count;
    w->across[(int64_t)b * w->n + c] = (int32_t)*count;
    w->across[(int64_t)c * w->n + a] = (int32_t)*count;
    w->count = *count + 1;
    return (*count)++;
}

static double height(const face *f, const double *p) { return dot(f->n, p) - f->d; }

/* The least mean thickness of a hull built here, in units of the coplanarity tolerance (see
 * check()); thinner parts go to qhull. */
#define THICK_EPS 1024.0

/* The face across edge a -> b of a live face (the one with b -> a), or -1 when the faces do not
 * make a closed surface there (rounding broke the construction). */
static int32_t neighbour(const work *w, int32_t a, int32_t b)
{
    int32_t g = w->across[(int64_t)b * w->n + a];
    if (g < 0 || g >= w->count || !w->faces[g].alive) return -1;
    const face *h = &w->faces[g];
    for (int k = 0; k < 3; ++k)
        if (h->v[k] == b && h->v[(k + 1) % 3] == a) return g;
    return -1;
}

/* The faces point x sees (height above `seen`), walked from face `start` across shared edges,
 * into w->visible (marked); their horizon, the edges a -> b of a visible face whose neighbour
 * is not visible, into w->horizon. Returns the horizon's number of edges when it is one simple
 * cycle (the visible faces are a disc), -1 otherwise: a vertex starting two horizon edges (a
 * pinch) or two cycles (a face not seen among seen ones). *n_vis gets the number of visible
 * faces, all marked; the caller clears the marks. */
static int64_t visible(work *w, int32_t start, const double *x, double seen, int64_t *n_vis)
{
    int64_t n_seen = 0, n_hor = 0;
    w->visible[n_seen++] = start;
    w->mark[start] = 1;
    for (int64_t s = 0; s < n_seen; ++s) { /* w->visible is the walk's queue */
        const face *f = &w->faces[w->visible[s]];
        for (int e = 0; e < 3; ++e) {
            int32_t g = neighbour(w, f->v[e], f->v[(e + 1) % 3]);
            if (g < 0) { *n_vis = n_seen; return -1; }
            if (w->mark[g] || !(height(&w->faces[g], x) > seen)) continue;
            w->mark[g] = 1;
            w->visible[n_seen++] = g;
        }
    }
    *n_vis = n_seen;
    for (int64_t s = 0; s < n_seen; ++s) {
        const face *f = &w->faces[w->visible[s]];
        for (int e = 0; e < 3; ++e) {
            int32_t a = f->v[e], b = f->v[(e + 1) % 3];
            if (w->mark[neighbour(w, a, b)]) continue;
            if (w->next[a] >= 0) { n_hor = -1; break; } /* a pinch */
            w->next[a] = b;
            w->horizon[2 * n_hor] = a;
            w->horizon[2 * n_hor + 1] = b;
            ++n_hor;
        }
        if (n_hor < 0) break;
    }
    /* one cycle: walking next[] from a horizon edge comes back after n_hor steps */
    int64_t steps = 0;
    if (n_hor >= 3) {
        int32_t a = w->horizon[0];
        do { a = w->next[a]; ++steps; } while (a >= 0 && a != w->horizon[0] && steps <= n_hor);
    }
    for (int64_t s = 0; s < n_seen; ++s) { /* clear next[] for the next call */
        const face *f = &w->faces[w->visible[s]];
        for (int e = 0; e < 3; ++e) w->next[f->v[e]] = -1;
    }
    return n_hor >= 3 && steps == n_hor ? n_hor : -1;
}

/* The hull of the n points P as alive faces of w; returns the number of faces made (alive or
 * not), or -1 when the points are degenerate (collinear, flat) or the construction failed. */
static int64_t build(work *w, const double *P, int32_t n, double eps)
{
    int64_t count = 0;
    w->n = n;
    w->count = 0;
    for (int32_t i = 0; i < n; ++i) w->next[i] = -1;
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
        int64_t n_vis = 0, n_hor = -1;
        for (int pass = 0; pass < 2 && n_hor < 3; ++pass) {
            n_hor = visible(w, w->owner[p], x, pass == 0 ? eps : -eps, &n_vis);
            for (int64_t s = 0; s < n_vis; ++s) w->mark[w->visible[s]] = 0;
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

/* Face f's vector area, doubled, from its first corner: (v1 - v0) x (v2 - v0), into c. */
static void corner_cross(const face *f, const double *P, double c[3])
{
    double e1[3], e2[3];
    sub(&P[3 * f->v[1]], &P[3 * f->v[0]], e1);
    sub(&P[3 * f->v[2]], &P[3 * f->v[0]], e2);
    cross(e1, e2, c);
}

/* Face f's vector area, doubled (its first two edges' cross product), into c; returns the
 * square of its longest edge. */
static double area_and_longest(const face *f, const double *P, double c[3])
{
    double e[3][3], longest = 0.0;
    for (int k = 0; k < 3; ++k) {
        sub(&P[3 * f->v[(k + 1) % 3]], &P[3 * f->v[k]], e[k]);
        double len = dot(e[k], e[k]);
        if (len > longest) longest = len;
    }
    cross(e[0], e[1], c);
    return longest;
}

/* How wide face f is: its least height, twice its area over its longest edge. */
static double width(const face *f, const double *P)
{
    double c[3], longest = area_and_longest(f, P, c);
    return longest > 0.0 ? sqrt(dot(c, c) / longest) : 0.0;
}

/* The group of face f (union-find with path halving). */
static int32_t group(work *w, int32_t f)
{
    while (w->root[f] != f) {
        w->root[f] = w->root[w->root[f]];
        f = w->root[f];
    }
    return w->root[f];
}

/* The alive faces (a closed surface) grouped into flat groups, as qhull merges coplanar facets:
 * two faces across an edge are one group when the far corner of the thinner lies within eps of
 * the wider one's plane and their normals agree within 2 eps over the thinner's width. Coplanar points (a cylinder's cap, a box's face) are triangulated into thin
 * triangles whose own planes are known only to the points' scatter / the triangle's width: a
 * cap flat to 2e-12 made of triangles 0.28 wide tilts them by 7e-12, so a point 90 away lies
 * 6e-10 above one of them (while the cap is flat to eps). Each group gets one plane, its
 * normal the group's vector area (the sum of its triangles' cross products, where thin
 * triangles weigh little), its offset the highest of its corners; the group must then be flat
 * (every corner within 2 eps of that plane) and not folded (no triangle facing against it). Its plane goes to w->plane[4 g] (normal, offset)
 * of the group's root g (w->root[g] == g). Returns 0, or -1 when a group is not flat. */
static int flat_groups(work *w, int64_t count, const double *P, double eps)
{
    for (int64_t f = 0; f < count; ++f) {
        w->root[f] = (int32_t)f;
        if (!w->faces[f].alive) continue;
        const face *g = &w->faces[f];
        for (int e = 0; e < 3; ++e) w->across[(int64_t)g->v[e] * w->n + g->v[(e + 1) % 3]] = (int32_t)f;
        w->plane[4 * f] = width(g, P); /* kept here until the planes are made */
    }
    for (int64_t f = 0; f < count; ++f) {
        const face *g = &w->faces[f];
        if (!g->alive) continue;
        for (int e = 0; e < 3; ++e) {
            int32_t a = g->v[e], b = g->v[(e + 1) % 3], apex = g->v[(e + 2) % 3];
            int32_t k = neighbour(w, a, b);
            if (k < 0) return -1;
            if (k <= f) continue; /* each edge once */
            const face *h = &w->faces[k];
            int32_t far = h->v[0] + h->v[1] + h->v[2] - a - b; /* h's corner off the edge */
            /* the corner of the thinner face against the plane of the wider one (the plane
             * known better: asking a thin face's plane about a wide face's corner would join
             * faces at any angle) */
            double thin = fmin(w->plane[4 * f], w->plane[4 * k]);
            double off = w->plane[4 * f] >= w->plane[4 * k] ? height(g, &P[3 * far]) : height(h, &P[3 * apex]);
            /* ... and their normals agree within what eps tilts the thinner one (2 eps over
             * its width): the side of a slab a few eps thick is a thin face whose corners lie
             * within eps of the top's plane, but it stands across it, and joining it would drop
             * the one plane that bounds the slab's points sideways */
            double sine[3];
            cross(g->n, h->n, sine);
            if (fabs(off) <= eps && dot(g->n, h->n) > 0.0 && sqrt(dot(sine, sine)) * thin <= 2.0 * eps) {
                int32_t r = group(w, (int32_t)f), t = group(w, k);
                if (r != t) w->root[r > t ? r : t] = r < t ? r : t;
            }
        }
    }
    for (int64_t f = 0; f < count; ++f)
        if (w->faces[f].alive) w->root[f] = group(w, (int32_t)f);
    for (int64_t f = 0; f < count; ++f)
        if (w->faces[f].alive && w->root[f] == f) memset(&w->plane[4 * f], 0, 4 * sizeof(double));
    for (int64_t f = 0; f < count; ++f) { /* each group's vector area */
        const face *g = &w->faces[f];
        if (!g->alive) continue;
        double c[3];
        corner_cross(g, P, c);
        double *q = &w->plane[4 * w->root[f]];
        q[0] += c[0];
        q[1] += c[1];
        q[2] += c[2];
    }
    for (int64_t f = 0; f < count; ++f) {
        if (!w->faces[f].alive || w->root[f] != f) continue;
        double *q = &w->plane[4 * f];
        double len = sqrt(dot(q, q));
        if (!(len > 0.0)) return -1;
        q[0] /= len;
        q[1] /= len;
        q[2] /= len;
        q[3] = -HUGE_VAL;
    }
    for (int64_t f = 0; f < count; ++f) { /* the offset: the highest corner */
        const face *g = &w->faces[f];
        if (!g->alive) continue;
        double *q = &w->plane[4 * w->root[f]];
        for (int k = 0; k < 3; ++k) {
            double d = dot(q, &P[3 * g->v[k]]);
            if (d > q[3]) q[3] = d;
        }
    }
    for (int64_t f = 0; f < count; ++f) {
        const face *g = &w->faces[f];
        if (!g->alive) continue;
        const double *q = &w->plane[4 * w->root[f]];
        /* flat: every corner near the plane */
        for (int k = 0; k < 3; ++k)
            if (!(dot(q, &P[3 * g->v[k]]) >= q[3] - 2.0 * eps)) return -1;
        /* not folded: every triangle faces the group's way, its area along the group's normal
         * not below minus an eps-wide strip along its longest edge (a thin triangle's own
         * normal may point anywhere; a folded one's area counts twice where the group's
         * vector area, and the volume, see none of it) */
        double c[3], longest = area_and_longest(g, P, c);
        if (!(dot(c, q) >= -2.0 * eps * sqrt(longest))) return -1;
    }
    return 0;
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
    /* thicker than the tolerance: a mean thickness (2 x volume / area) above THICK_EPS eps. In
     * a slab a few eps thick, long thin faces from one rim to the other lie nearly in its
     * plane, and a point beyond the rim sideways lies only a few eps above them: the checks
     * below would pass a hull that misses it (seeded slabs 18 eps thick 1e6 away missed
     * points by a tenth of their width) */
    double area = 0.0;
    for (int64_t f = 0; f < count; ++f) {
        const face *g = &w->faces[f];
        if (!g->alive) continue;
        double c[3];
        corner_cross(g, P, c);
        area += 0.5 * sqrt(dot(c, c));
    }
    if (!(2.0 * volume > THICK_EPS * eps * area)) return -1;
    /* every point inside every triangle's plane: the common case, no groups needed */
    int inside = 1;
    for (int64_t f = 0; f < count && inside; ++f) {
        const face *g = &w->faces[f];
        if (!g->alive) continue;
        for (int32_t i = 0; i < n; ++i)
            if (!(height(g, &P[3 * i]) <= 4.0 * eps)) { inside = 0; break; }
    }
    if (inside) return F;
    /* else with the planes of the flat groups (thin triangles among coplanar points) */
    if (flat_groups(w, count, P, eps) < 0) return -1;
    for (int64_t f = 0; f < count; ++f) {
        if (!w->faces[f].alive || w->root[f] != f) continue;
        const double *q = &w->plane[4 * f];
        for (int32_t i = 0; i < n; ++i)
            if (!(dot(q, &P[3 * i]) - q[3] <= 4.0 * eps)) return -1;
    }
    return F;
}

int small_hulls(const double *local, const int64_t *p_start, const int64_t *n_pts, int64_t parts,
                int64_t max_pts, const double *tol, const double *min_volume,
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
        w.next = malloc((size_t)most * sizeof(int32_t));
        w.across = calloc((size_t)(most * most), sizeof(int32_t));
        w.mark = malloc((size_t)w.cap);
        w.root = malloc((size_t)w.cap * sizeof(int32_t));
        w.plane = malloc((size_t)w.cap * 4 * sizeof(double));
        if (!w.faces || !w.owner || !w.far || !w.visible || !w.horizon || !w.fresh || !w.live || !w.edge
            || !w.next || !w.across || !w.mark
            || !w.root || !w.plane)
            rc = -1;
    }
    for (int64_t p = 0; p < parts; ++p) {
        ok[p] = 0;
        n_tri[p] = 0;
        int64_t n = n_pts[p];
        if (rc != 0 || n < 4 || n > max_pts) continue;
        const double *P = &local[3 * p_start[p]];
        int finite = 1;
        for (int64_t i = 0; i < 3 * n; ++i)
            if (!isfinite(P[i])) { finite = 0; break; }
        double eps = tol[p];
        if (!finite || !(eps > 0.0) || !isfinite(eps)) continue;
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
    free(w.next);
    free(w.across);
    free(w.mark);
    free(w.root);
    free(w.plane);
    return rc;
}
