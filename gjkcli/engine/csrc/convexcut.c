/* The common solid of two convex parts: see convexcut.h.
 *
 * A's faces are a soup of convex polygons. Each plane of B's triangles cuts the soup: every
 * polygon keeps its part on the inner side (Sutherland-Hodgman), and the points the cut leaves
 * on the plane are the corners of the cap that closes it (their convex hull in the plane, wound
 * along the plane's normal). What is left after every plane is A and B's common solid; its
 * volume is the sum of the fan tetrahedra of its polygons.
 *
 * A point on an edge is computed from the edge's lexicographically smaller end, so the two
 * polygons that share an edge get the same point to the bit, and the corners can be joined
 * exactly at the end.
 */
#include "convexcut.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    double *p;         /* points, rows of 3 */
    int64_t n, cap;
    int64_t *start;    /* polygon k: points start[k] .. start[k] + count[k] */
    int64_t *count;
    int64_t np, pcap;
} soup;

static void soup_free(soup *s) {
    free(s->p);
    free(s->start);
    free(s->count);
    memset(s, 0, sizeof *s);
}

static int add_point(soup *s, const double *q) {
    if (s->n == s->cap) {
        int64_t cap = s->cap ? 2 * s->cap : 64;
        double *p = realloc(s->p, (size_t)cap * 3 * sizeof(double));
        if (!p) return -1;
        s->p = p;
        s->cap = cap;
    }
    memcpy(s->p + 3 * s->n, q, 3 * sizeof(double));
    s->n++;
    return 0;
}

/* Close the polygon whose points were added since `from`; one of fewer than 3 points is dropped. */
static int end_polygon(soup *s, int64_t from) {
    if (s->n - from < 3) {
        s->n = from;
        return 0;
    }
    if (s->np == s->pcap) {
        int64_t cap = s->pcap ? 2 * s->pcap : 32;
        int64_t *a = realloc(s->start, (size_t)cap * sizeof(int64_t));
        if (!a) return -1;
        s->start = a;
        int64_t *b = realloc(s->count, (size_t)cap * sizeof(int64_t));
        if (!b) return -1;
        s->count = b;
        s->pcap = cap;
    }
    s->start[s->np] = from;
    s->count[s->np] = s->n - from;
    s->np++;
    return 0;
}

static int lex_less(const double *a, const double *b) {
    if (a[0] != b[0]) return a[0] < b[0];
    if (a[1] != b[1]) return a[1] < b[1];
    return a[2] < b[2];
}

/* Where the edge p q (sides sp, sq of opposite signs) meets the plane, from the smaller end. */
static void crossing(const double *p, double sp, const double *q, double sq, double *x) {
    if (lex_less(q, p)) {
        const double *t = p;
        p = q;
        q = t;
        double u = sp;
        sp = sq;
        sq = u;
    }
    double t = sp / (sp - sq);
    for (int i = 0; i < 3; i++) x[i] = p[i] + t * (q[i] - p[i]);
}

typedef struct {
    double x, y;
    int64_t k;
} planar;

static int planar_order(const void *a, const void *b) {
    const planar *p = a, *q = b;
    if (p->x != q->x) return p->x < q->x ? -1 : 1;
    if (p->y != q->y) return p->y < q->y ? -1 : 1;
    return 0;
}

static double turn(const planar *o, const planar *a, const planar *b) {
    return (a->x - o->x) * (b->y - o->y) - (a->y - o->y) * (b->x - o->x);
}

/* Scratch space of the cuts, grown as needed: each point's side of the plane, the cap's
 * corners in the plane. */
typedef struct {
    double *side;
    int64_t side_cap;
    planar *q, *h;
    int64_t q_cap;
} scratch;

static void scratch_free(scratch *w) {
    free(w->side);
    free(w->q);
    free(w->h);
    memset(w, 0, sizeof *w);
}

/* Append to `s` the convex hull of the cap points `c` (in the plane of unit normal n), wound
 * counter-clockwise seen from the side n points to. */
static int add_cap(soup *s, const soup *c, const double *n, scratch *w) {
    if (c->n < 3) return 0;
    double u[3], v[3];
    /* u: any unit vector across n; v = n x u, so (u, v, n) is right-handed */
    if (fabs(n[0]) < 0.6) {
        u[0] = 0.0; u[1] = n[2]; u[2] = -n[1];
    } else {
        u[0] = -n[2]; u[1] = 0.0; u[2] = n[0];
    }
    double len = sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
    for (int i = 0; i < 3; i++) u[i] /= len;
    v[0] = n[1] * u[2] - n[2] * u[1];
    v[1] = n[2] * u[0] - n[0] * u[2];
    v[2] = n[0] * u[1] - n[1] * u[0];
    if (c->n > w->q_cap) {
        planar *q = realloc(w->q, (size_t)c->n * sizeof(planar));
        if (!q) return -1;
        w->q = q;
        planar *h = realloc(w->h, (size_t)(2 * c->n + 1) * sizeof(planar));
        if (!h) return -1;
        w->h = h;
        w->q_cap = c->n;
    }
    planar *q = w->q, *h = w->h;
    for (int64_t k = 0; k < c->n; k++) {
        const double *p = c->p + 3 * k;
        q[k].x = p[0] * u[0] + p[1] * u[1] + p[2] * u[2];
        q[k].y = p[0] * v[0] + p[1] * v[1] + p[2] * v[2];
        q[k].k = k;
    }
    if (c->n > 24) {
        qsort(q, (size_t)c->n, sizeof(planar), planar_order);
    } else {  /* a cap's few corners: insertion sort, no allocation */
        for (int64_t k = 1; k < c->n; k++) {
            planar x = q[k];
            int64_t j = k;
            for (; j > 0 && planar_order(&q[j - 1], &x) > 0; j--) q[j] = q[j - 1];
            q[j] = x;
        }
    }
    int64_t m = 0;  /* Andrew's monotone chain: lower hull, then upper */
    for (int64_t k = 0; k < c->n; k++) {
        while (m >= 2 && turn(&h[m - 2], &h[m - 1], &q[k]) <= 0.0) m--;
        h[m++] = q[k];
    }
    for (int64_t k = c->n - 2, low = m + 1; k >= 0; k--) {
        while (m >= low && turn(&h[m - 2], &h[m - 1], &q[k]) <= 0.0) m--;
        h[m++] = q[k];
    }
    if (m - 1 < 3) return 0;
    int64_t from = s->n;
    for (int64_t k = 0; k < m - 1; k++)
        if (add_point(s, c->p + 3 * h[k].k)) return -1;
    return end_polygon(s, from);
}

/* Cut the soup `in` by the plane n.x = d, keeping n.x - d <= 0, into `out` (emptied first).
 * Returns 1 when nothing lies beyond the plane (`out` untouched: `in` stands), 0 when cut (with
 * *empty set when nothing of `in` lies inside), -1 when out of memory. */
static int cut(const soup *in, const double *n, double d, double eps, soup *out, soup *capp,
               scratch *w, int *empty) {
    out->n = 0;
    out->np = 0;
    capp->n = 0;
    *empty = 0;
    if (in->n > w->side_cap) {
        double *x = realloc(w->side, (size_t)in->n * sizeof(double));
        if (!x) return -1;
        w->side = x;
        w->side_cap = in->n;
    }
    double lo = INFINITY, hi = -INFINITY, *side = w->side;
    for (int64_t k = 0; k < in->n; k++) {
        const double *p = in->p + 3 * k;
        double s = n[0] * p[0] + n[1] * p[1] + n[2] * p[2] - d;
        side[k] = s;
        if (s < lo) lo = s;
        if (s > hi) hi = s;
    }
    if (hi <= eps) return 1;  /* nothing beyond the plane: `in` stands as it is */
    if (lo >= -eps) {         /* nothing inside it */
        *empty = 1;
        return 0;
    }
    for (int64_t f = 0; f < in->np; f++) {
        int64_t at = in->start[f], c = in->count[f], from = out->n;
        const double *P = in->p + 3 * at, *S = side + at;
        double most = -INFINITY;
        for (int64_t i = 0; i < c; i++)
            if (S[i] > most) most = S[i];
        if (most < -eps) {  /* wholly inside: kept as it is */
            for (int64_t i = 0; i < c; i++)
                if (add_point(out, P + 3 * i)) return -1;
            if (end_polygon(out, from)) return -1;
            continue;
        }
        for (int64_t i = 0; i < c; i++) {
            int64_t j = i + 1 == c ? 0 : i + 1;
            const double *p = P + 3 * i, *q = P + 3 * j;
            double sp = S[i], sq = S[j];
            int side_p = sp > eps ? 1 : (sp < -eps ? -1 : 0);
            int side_q = sq > eps ? 1 : (sq < -eps ? -1 : 0);
            if (side_p <= 0) {
                if (add_point(out, p)) return -1;
                if (side_p == 0 && add_point(capp, p)) return -1;
            }
            if (side_p * side_q < 0) {
                double x[3];
                crossing(p, sp, q, sq, x);
                if (add_point(out, x) || add_point(capp, x)) return -1;
            }
        }
        if (end_polygon(out, from)) return -1;
    }
    return add_cap(out, capp, n, w) ? -1 : 0;
}

/* Six times the signed volume the triangles of part (v, f) bound, about the point o. */
static double six_volume(const double *v, const int64_t *f, int64_t m, const double *o) {
    double sum = 0.0;
    for (int64_t t = 0; t < m; t++) {
        const double *a = v + 3 * f[3 * t], *b = v + 3 * f[3 * t + 1], *c = v + 3 * f[3 * t + 2];
        double ax = a[0] - o[0], ay = a[1] - o[1], az = a[2] - o[2];
        double bx = b[0] - o[0], by = b[1] - o[1], bz = b[2] - o[2];
        double cx = c[0] - o[0], cy = c[1] - o[1], cz = c[2] - o[2];
        sum += ax * (by * cz - bz * cy) - ay * (bx * cz - bz * cx) + az * (bx * cy - by * cx);
    }
    return sum;
}

static int valid(const double *v, int64_t n, const int64_t *f, int64_t m) {
    if (n < 4 || m < 4) return 0;
    for (int64_t k = 0; k < 3 * m; k++)
        if (f[k] < 0 || f[k] >= n) return 0;
    for (int64_t k = 0; k < 3 * n; k++)
        if (!isfinite(v[k])) return 0;
    return 1;
}

typedef struct {
    double n[3], d;  /* the plane n.x = d, n of unit length, outwards */
    double beyond;   /* how far A's farthest point lies beyond it */
} cutter;

static int deepest_first(const void *a, const void *b) {
    double p = ((const cutter *)a)->beyond, q = ((const cutter *)b)->beyond;
    return p > q ? -1 : (p < q ? 1 : 0);
}

typedef struct {
    const double *p;
    int64_t k;
} corner;

static int corner_order(const void *a, const void *b) {
    const double *p = ((const corner *)a)->p, *q = ((const corner *)b)->p;
    for (int i = 0; i < 3; i++)
        if (p[i] != q[i]) return p[i] < q[i] ? -1 : 1;
    return 0;
}

/* The soup's polygons as fans of triangles over its corners, each corner once. */
static int mesh_of(const soup *s, convex_common_out *out) {
    int64_t tris = 0;
    for (int64_t f = 0; f < s->np; f++) tris += s->count[f] - 2;
    corner *c = malloc((size_t)(s->n ? s->n : 1) * sizeof(corner));
    int64_t *id = malloc((size_t)(s->n ? s->n : 1) * sizeof(int64_t));
    out->pts = malloc((size_t)(s->n ? s->n : 1) * 3 * sizeof(double));
    out->tris = malloc((size_t)(tris ? tris : 1) * 3 * sizeof(int64_t));
    if (!c || !id || !out->pts || !out->tris) {
        free(c);
        free(id);
        return -1;
    }
    for (int64_t k = 0; k < s->n; k++) {
        c[k].p = s->p + 3 * k;
        c[k].k = k;
    }
    qsort(c, (size_t)s->n, sizeof(corner), corner_order);
    int64_t u = 0;
    for (int64_t k = 0; k < s->n; k++) {
        if (k == 0 || corner_order(&c[k - 1], &c[k]) != 0) {
            memcpy(out->pts + 3 * u, c[k].p, 3 * sizeof(double));
            u++;
        }
        id[c[k].k] = u - 1;
    }
    out->n_pts = u;
    int64_t t = 0;
    for (int64_t f = 0; f < s->np; f++) {
        int64_t a = s->start[f];
        for (int64_t i = 1; i + 1 < s->count[f]; i++, t++) {
            out->tris[3 * t] = id[a];
            out->tris[3 * t + 1] = id[a + i];
            out->tris[3 * t + 2] = id[a + i + 1];
        }
    }
    out->n_tris = t;
    free(c);
    free(id);
    return 0;
}

void convex_common_free(convex_common_out *out) {
    free(out->pts);
    free(out->tris);
    out->pts = NULL;
    out->tris = NULL;
    out->n_pts = out->n_tris = 0;
}

int convex_common(const double *va, int64_t na, const int64_t *fa, int64_t ma,
                  const double *vb, int64_t nb, const int64_t *fb, int64_t mb,
                  double eps, convex_common_out *out) {
    memset(out, 0, sizeof *out);
    if (!valid(va, na, fa, ma) || !valid(vb, nb, fb, mb)) return 1;
    double va6 = six_volume(va, fa, ma, va), vb6 = six_volume(vb, fb, mb, vb);
    if (!(va6 != 0.0) || !(vb6 != 0.0)) return 1;
    int flip_a = va6 < 0.0, flip_b = vb6 < 0.0;  /* wound inwards throughout: turned outwards */
    soup cur = {0}, nxt = {0}, capp = {0};
    scratch w = {0};
    int rc = 0, empty = 0;
    for (int64_t t = 0; t < ma && rc == 0; t++) {
        int64_t from = cur.n;
        for (int i = 0; i < 3 && rc == 0; i++) {
            int j = flip_a ? 2 - i : i;
            rc = add_point(&cur, va + 3 * fa[3 * t + j]);
        }
        if (rc == 0) rc = end_polygon(&cur, from);
    }
    /* B's planes, the deepest cut into A first: the soup shrinks at once, and a plane with all of
     * A inside (all of what is left is in A) is passed over */
    cutter *planes = malloc((size_t)mb * sizeof(cutter));
    if (!planes) rc = -1;
    int64_t n_planes = 0;
    for (int64_t t = 0; t < mb && rc == 0; t++) {
        const double *a = vb + 3 * fb[3 * t], *b = vb + 3 * fb[3 * t + 1], *c = vb + 3 * fb[3 * t + 2];
        if (flip_b) {
            const double *x = b;
            b = c;
            c = x;
        }
        double e[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
        double g[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
        cutter *q = planes + n_planes;
        double *n = q->n;
        n[0] = e[1] * g[2] - e[2] * g[1];
        n[1] = e[2] * g[0] - e[0] * g[2];
        n[2] = e[0] * g[1] - e[1] * g[0];
        double len = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        if (!(len > 0.0)) continue;  /* a triangle without area has no plane; its neighbours do */
        for (int i = 0; i < 3; i++) n[i] /= len;
        q->d = (n[0] * (a[0] + b[0] + c[0]) + n[1] * (a[1] + b[1] + c[1])
                + n[2] * (a[2] + b[2] + c[2])) / 3.0;
        double hi = -INFINITY;
        for (int64_t k = 0; k < na; k++) {
            const double *p = va + 3 * k;
            double s = n[0] * p[0] + n[1] * p[1] + n[2] * p[2] - q->d;
            if (s > hi) hi = s;
        }
        q->beyond = hi;
        if (hi > eps) n_planes++;
    }
    if (rc == 0) qsort(planes, (size_t)n_planes, sizeof(cutter), deepest_first);
    for (int64_t t = 0; t < n_planes && rc == 0 && !empty; t++) {
        int r = cut(&cur, planes[t].n, planes[t].d, eps, &nxt, &capp, &w, &empty);
        if (r < 0) rc = -1;
        else if (r == 0 && !empty) {
            soup x = cur;
            cur = nxt;
            nxt = x;
        }
    }
    free(planes);
    if (rc == 0 && !empty && cur.np > 0) {
        const double *o = cur.p;
        double six = 0.0;
        for (int64_t f = 0; f < cur.np; f++) {
            const double *P = cur.p + 3 * cur.start[f];
            for (int64_t i = 1; i + 1 < cur.count[f]; i++) {
                const double *a = P, *b = P + 3 * i, *c = P + 3 * (i + 1);
                double ax = a[0] - o[0], ay = a[1] - o[1], az = a[2] - o[2];
                double bx = b[0] - o[0], by = b[1] - o[1], bz = b[2] - o[2];
                double cx = c[0] - o[0], cy = c[1] - o[1], cz = c[2] - o[2];
                six += ax * (by * cz - bz * cy) - ay * (bx * cz - bz * cx) + az * (bx * cy - by * cx);
            }
        }
        out->volume = six > 0.0 ? six / 6.0 : 0.0;
        if (out->volume > 0.0 && mesh_of(&cur, out)) rc = -1;
    }
    soup_free(&cur);
    soup_free(&nxt);
    soup_free(&capp);
    scratch_free(&w);
    if (rc != 0) convex_common_free(out);
    return rc;
}
