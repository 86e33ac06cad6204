/* GJK and EPA in the plane, and exact answers on the edges of parts with holes (see plane.h).
 *
 * Convex pairs: GJK (van den Bergen 2003, chapter 4) on A - B with a simplex of at most three
 * points, reduced by signed areas (the 2D case of Montanari, Petrinic and Barbieri 2017, as
 * simplex.c does in 3D); then, when the origin is inside, EPA on the polygon of A - B: its edges
 * are kept in counter-clockwise order and the one nearest the origin is pushed out by the support
 * point in its normal until the two meet (van den Bergen 2003, section 4.3.8, in the plane).
 *
 * Other pairs: the parts' edges, through a hierarchy of boxes over each part's segments: the
 * closest pair of edges (or a crossing), then containment by even-odd ray casting.
 */
#include <math.h>
#include <string.h>

#include "plane.h"

static inline double dot2(const double a[2], const double b[2]) { return a[0] * b[0] + a[1] * b[1]; }
/* fmax and fmin without libm's NaN handling, so that they inline (no NaN reaches them) */
static inline double dmax(double a, double b) { return a > b ? a : b; }
static inline double dmin(double a, double b) { return a < b ? a : b; }
static inline double cross2(const double a[2], const double b[2]) { return a[0] * b[1] - a[1] * b[0]; }

/* A point of A - B with the support points that made it (shifted to the pair frame). */
typedef struct {
    double w[2], a[2], b[2];
    int32_t ia, ib;
} pl_vertex;

typedef struct {
    pl_vertex p[3];
    double lambda[3];
    int n;
} pl_simplex;

/* ---------------------------------------------------------------- support */

#define PL_COLD_SAMPLES 8

int pl_support(const pl_set *S, int p, const double d[2], int hint, double plateau_rel, const double shift[2],
               double out[2], int *steps) {
    int r = S->ring[S->part_ring[p]], n = S->ring[S->part_ring[p] + 1] - r;
    const double *v = S->v + 2 * (size_t)r;
    const double *box = S->box + 4 * (size_t)p;
    /* values within eps are a plateau: an edge normal to d, where climbing could stop early */
    double extent = fabs(box[0]) + fabs(box[1]) + fabs(box[2]) + fabs(box[3]);
    double eps = plateau_rel * (fabs(d[0]) + fabs(d[1])) * extent;
    int i = (hint >= 0 && hint < n) ? hint : 0;
    double best = d[0] * v[2 * i] + d[1] * v[2 * i + 1];
    if (hint < 0 && n > 4 * PL_COLD_SAMPLES) {
        /* a cold climb starts at the best of a few vertices spread round the ring, so that it
         * walks about n / (2 PL_COLD_SAMPLES) steps instead of n / 2 */
        for (int j = 1; j < PL_COLD_SAMPLES; j++) {
            int c = (int)((int64_t)j * n / PL_COLD_SAMPLES);
            double f = d[0] * v[2 * c] + d[1] * v[2 * c + 1];
            if (f > best) { best = f; i = c; }
        }
    }
    int k = 0;
    /* Hill climbing on the ring: the support value along a convex ring rises to one maximum and
     * falls to one minimum, so stepping to a better neighbour ends at the maximum. */
    for (; k < n; k++) {
        int nx = i + 1 == n ? 0 : i + 1, pv = i == 0 ? n - 1 : i - 1;
        double fn = d[0] * v[2 * nx] + d[1] * v[2 * nx + 1];
        double fp = d[0] * v[2 * pv] + d[1] * v[2 * pv + 1];
        if (fn > best + eps && fn >= fp) { i = nx; best = fn; continue; }
        if (fp > best + eps) { i = pv; best = fp; continue; }
        if (fn >= best - eps || fp >= best - eps) {
            /* a neighbour ties: settle the plateau by a scan of the ring (rare: an edge normal
             * to d), so the answer never depends on where the climb came from */
            for (int j = 0; j < n; j++) {
                double f = d[0] * v[2 * j] + d[1] * v[2 * j + 1];
                if (f > best) { best = f; i = j; }
            }
        }
        break;
    }
    *steps = k;
    out[0] = v[2 * i] - shift[0];
    out[1] = v[2 * i + 1] - shift[1];
    return i;
}

/* ---------------------------------------------------------------- simplex */

static int same_sign(double a, double b) { return (a > 0.0 && b > 0.0) || (a < 0.0 && b < 0.0); }

typedef struct {
    int idx[3];
    double lambda[3];
    int n;
} pl_sub;

/* Segment s1 s2: the origin's weights on the line, lambda1 = s2.(s2 - s1)/|e|^2 and
 * lambda2 = -s1.(s2 - s1)/|e|^2; a weight <= 0 puts the origin in the other vertex's region. */
static void seg(const pl_vertex *p, int i1, int i2, pl_sub *r) {
    const double *s1 = p[i1].w, *s2 = p[i2].w;
    double e[2] = {s2[0] - s1[0], s2[1] - s1[1]};
    double ee = dot2(e, e);
    double u1 = dot2(s2, e), u2 = -dot2(s1, e); /* lambda times |e|^2 */
    if (ee > 0.0 && u1 > 0.0 && u2 > 0.0) { /* edge region */
        r->n = 2; r->idx[0] = i1; r->idx[1] = i2;
        r->lambda[0] = u1 / ee; r->lambda[1] = u2 / ee;
        return;
    }
    if (ee > 0.0 && u1 <= 0.0) { /* s2 region: past s2 */
        r->n = 1; r->idx[0] = i2; r->lambda[0] = 1.0;
        return;
    }
    r->n = 1; r->idx[0] = i1; r->lambda[0] = 1.0; /* s1 region (or a segment of zero length) */
}

static double sub_norm2(const pl_vertex *p, const pl_sub *r) {
    double v[2] = {0.0, 0.0};
    for (int k = 0; k < r->n; k++) {
        v[0] += r->lambda[k] * p[r->idx[k]].w[0];
        v[1] += r->lambda[k] * p[r->idx[k]].w[1];
    }
    return dot2(v, v);
}

/* Triangle s1 s2 s3: mu is its signed area (twice), c[j] the signed area with the origin in
 * place of vertex j, the weight of vertex j times mu. All of mu's sign: the origin is inside.
 * Otherwise the closest point is on an edge opposite a vertex whose weight is not positive. */
static void tri(const pl_vertex *p, pl_sub *r) {
    const double *s[3] = {p[0].w, p[1].w, p[2].w};
    double e12[2] = {s[1][0] - s[0][0], s[1][1] - s[0][1]}, e13[2] = {s[2][0] - s[0][0], s[2][1] - s[0][1]};
    double mu = cross2(e12, e13);
    double c[3];
    for (int j = 0; j < 3; j++) c[j] = cross2(s[(j + 1) % 3], s[(j + 2) % 3]);
    if (same_sign(mu, c[0]) && same_sign(mu, c[1]) && same_sign(mu, c[2])) { /* inside region */
        r->n = 3;
        for (int j = 0; j < 3; j++) { r->idx[j] = j; r->lambda[j] = c[j] / mu; }
        return;
    }
    double best = INFINITY;
    for (int j = 0; j < 3; j++) {
        if (mu != 0.0 && same_sign(mu, c[j])) continue; /* degenerate (mu = 0): every edge */
        pl_sub e = {{0, 0, 0}, {0.0, 0.0, 0.0}, 0};
        seg(p, (j + 1) % 3, (j + 2) % 3, &e);
        double d2 = sub_norm2(p, &e);
        if (d2 < best) { best = d2; *r = e; }
    }
}

/* Closest point of the simplex to the origin; reduces s to the sub-simplex holding it. */
static int closest(pl_simplex *s, double v[2], int *kept) {
    pl_sub r;
    if (s->n == 1) { r.n = 1; r.idx[0] = 0; r.lambda[0] = 1.0; }
    else if (s->n == 2) seg(s->p, 0, 1, &r);
    else tri(s->p, &r);
    pl_vertex keep[3];
    int mask = 0;
    v[0] = v[1] = 0.0;
    for (int k = 0; k < r.n; k++) {
        keep[k] = s->p[r.idx[k]];
        mask |= 1 << r.idx[k];
        v[0] += r.lambda[k] * keep[k].w[0];
        v[1] += r.lambda[k] * keep[k].w[1];
    }
    for (int k = 0; k < r.n; k++) { s->p[k] = keep[k]; s->lambda[k] = r.lambda[k]; }
    s->n = r.n;
    *kept = mask;
    return r.n == 3 ? GJK_FEATURE_INSIDE : r.n; /* 1 vertex, 2 edge, inside the triangle */
}

/* ---------------------------------------------------------------- trace */

static void put_simplex(double *rec, int field, const pl_simplex *s) {
    for (int k = 0; k < s->n && k < 3; k++) { rec[field + 2 * k] = s->p[k].w[0]; rec[field + 2 * k + 1] = s->p[k].w[1]; }
}

static double *trace_rec(pl_trace *tr) {
    if (tr == 0 || tr->buf == 0 || tr->n >= tr->cap) return 0;
    double *rec = tr->buf + (size_t)tr->n * PT_WIDTH;
    memset(rec, 0, sizeof(double) * PT_WIDTH);
    tr->n++;
    return rec;
}

static void put_vertex(double *rec, const pl_vertex *w) {
    for (int c = 0; c < 2; c++) { rec[PT_W + c] = w->w[c]; rec[PT_A + c] = w->a[c]; rec[PT_B + c] = w->b[c]; }
    rec[PT_IA] = w->ia;
    rec[PT_IB] = w->ib;
}

/* ---------------------------------------------------------------- GJK */

typedef struct {
    const pl_set *S;
    int a, b;
    const pl_params *p;
    double tol, size;
    double c[2]; /* the pair's centre, subtracted from every coordinate */
    pl_trace *tr;
    int hint_a, hint_b;
} pl_pair;

static void support_pair(pl_pair *q, const double d[2], pl_vertex *w, int *sa, int *sb) {
    double nd[2] = {-d[0], -d[1]};
    w->ia = pl_support(q->S, q->a, d, q->hint_a, q->p->plateau_rel, q->c, w->a, sa);
    w->ib = pl_support(q->S, q->b, nd, q->hint_b, q->p->plateau_rel, q->c, w->b, sb);
    q->hint_a = w->ia;
    q->hint_b = w->ib;
    w->w[0] = w->a[0] - w->b[0];
    w->w[1] = w->a[1] - w->b[1];
}

typedef struct {
    pl_simplex simplex;
    double v[2], lower, best_dir[2], line_ab[2];
    int iterations;
} pl_bounds;

static int gjk2(pl_pair *q, pl_bounds *out) {
    const pl_params *p = q->p;
    pl_simplex *S = &out->simplex;
    double *v = out->v;
    double eps = p->gjk_rel * q->size;         /* bounds closer than this have met */
    double touch = p->degenerate_rel * q->size; /* |v| below this: the origin is on the simplex */
    double upper = INFINITY;
    int exit = GJK_EXIT_ITERATION_CAP;
    S->n = 0;
    out->lower = -INFINITY;
    /* The first search direction dir = -v: the caller's, else from A's box centre towards B's. */
    if (p->start[0] != 0.0 || p->start[1] != 0.0) { v[0] = -p->start[0]; v[1] = -p->start[1]; }
    else {
        const double *ba = q->S->box + 4 * (size_t)q->a, *bb = q->S->box + 4 * (size_t)q->b;
        v[0] = 0.5 * (ba[0] + ba[2]) - 0.5 * (bb[0] + bb[2]);
        v[1] = 0.5 * (ba[1] + ba[3]) - 0.5 * (bb[1] + bb[3]);
        if (dot2(v, v) <= touch * touch) { v[0] = 1.0; v[1] = 0.0; }
    }
    double vlen0 = sqrt(dot2(v, v));
    out->best_dir[0] = -v[0] / vlen0; out->best_dir[1] = -v[1] / vlen0;
    out->line_ab[0] = out->line_ab[1] = 0.0;
    int it;
    for (it = 0; it < p->max_gjk; it++) {
        double dir[2] = {-v[0], -v[1]};
        double dlen = sqrt(dot2(dir, dir));
        pl_vertex w;
        int sa, sb;
        support_pair(q, dir, &w, &sa, &sb);
        /* Lower bound: A lies below the line dir.x = dir.a and B above dir.x = dir.b; their gap
         * is (dir.b - dir.a)/|dir| = -dir.w/|dir|. */
        double gap = -dot2(dir, w.w) / dlen;
        int passed = dot2(dir, w.w) > 0.0;
        if (gap > out->lower) {
            out->lower = gap;
            out->best_dir[0] = dir[0] / dlen; out->best_dir[1] = dir[1] / dlen;
            out->line_ab[0] = dot2(out->best_dir, w.a);
            out->line_ab[1] = dot2(out->best_dir, w.b);
        }
        pl_simplex before = *S;
        int stop = GJK_EXIT_NONE;
        if (p->want == GJK_WANT_INTERSECT && out->lower > q->tol) stop = GJK_EXIT_SEPARATING_AXIS;
        else if (upper - out->lower <= eps) stop = GJK_EXIT_CONVERGED;
        else {
            for (int k = 0; k < S->n; k++)
                if (S->p[k].ia == w.ia && S->p[k].ib == w.ib) stop = GJK_EXIT_REPEATED_SUPPORT;
        }
        if (stop == GJK_EXIT_SEPARATING_AXIS && S->n == 0) {
            S->p[0] = w; S->lambda[0] = 1.0; S->n = 1;
            v[0] = w.w[0]; v[1] = w.w[1];
        }
        double *rec = trace_rec(q->tr);
        if (rec) {
            rec[PT_PHASE] = 0; rec[PT_ITER] = it;
            rec[PT_DIR] = dir[0]; rec[PT_DIR + 1] = dir[1];
            put_vertex(rec, &w);
            rec[PT_STEPS_A] = sa; rec[PT_STEPS_B] = sb; rec[PT_PASSED] = passed;
            rec[PT_N_BEFORE] = before.n;
            put_simplex(rec, PT_BEFORE, &before);
        }
        if (stop) {
            if (rec) {
                rec[PT_N_AFTER] = S->n; put_simplex(rec, PT_AFTER, S);
                for (int k = 0; k < S->n; k++) rec[PT_LAMBDA + k] = S->lambda[k];
                rec[PT_KEPT] = (1 << S->n) - 1;
                rec[PT_VNORM] = upper; rec[PT_LOWER] = out->lower; rec[PT_UPPER] = upper; rec[PT_EXIT] = stop;
                rec[PT_CLOSEST] = v[0]; rec[PT_CLOSEST + 1] = v[1];
            }
            exit = stop;
            it++;
            break;
        }
        S->p[S->n++] = w;
        double vnew[2];
        int kept;
        int feature = closest(S, vnew, &kept);
        double vn = sqrt(dot2(vnew, vnew));
        if (feature == GJK_FEATURE_INSIDE) {
            stop = GJK_EXIT_ORIGIN_ENCLOSED; /* the triangle holds the origin */
            v[0] = v[1] = 0.0;
            vn = 0.0; /* the weights' rounding aside, v is the origin */
            vnew[0] = vnew[1] = 0.0;
            upper = 0.0;
        } else if (vn <= touch) {
            stop = GJK_EXIT_ORIGIN_TOUCHED; /* the origin is on the simplex's edge or vertex */
            v[0] = vnew[0]; v[1] = vnew[1];
            upper = vn;
        } else if (vn >= upper) {
            stop = GJK_EXIT_NO_PROGRESS; /* |v| must shrink; rounding stopped it: keep the last */
            *S = before;
        } else {
            v[0] = vnew[0]; v[1] = vnew[1];
            upper = vn;
            if (upper - out->lower <= eps) stop = GJK_EXIT_CONVERGED;
        }
        if (rec) {
            rec[PT_N_AFTER] = S->n; put_simplex(rec, PT_AFTER, S);
            for (int k = 0; k < S->n; k++) rec[PT_LAMBDA + k] = S->lambda[k];
            rec[PT_FEATURE] = feature; rec[PT_KEPT] = kept;
            rec[PT_VNORM] = vn; rec[PT_LOWER] = out->lower; rec[PT_UPPER] = upper; rec[PT_EXIT] = stop;
            rec[PT_CLOSEST] = vnew[0]; rec[PT_CLOSEST + 1] = vnew[1];
        }
        if (stop) {
            exit = stop;
            it++;
            break;
        }
    }
    if (exit == GJK_EXIT_ITERATION_CAP && q->tr && q->tr->buf && q->tr->n > 0)
        q->tr->buf[(size_t)(q->tr->n - 1) * PT_WIDTH + PT_EXIT] = exit;
    out->iterations = it;
    return exit;
}

/* ---------------------------------------------------------------- EPA */

#define PL_EPA_CAP 512

typedef struct {
    double lo, hi, normal[2], pa[2], pb[2];
    int iterations;
} pl_depth;

/* EPA on the polygon of A - B: P holds points of A - B's boundary in counter-clockwise order,
 * a polygon inside A - B that holds the origin. Its edge nearest the origin bounds the depth
 * from below (A - B reaches at least that far in every direction); the support value in that
 * edge's outward normal bounds it from above. Each step adds the support point between the
 * edge's ends, which keeps the polygon convex and counter-clockwise (the support in an edge's
 * normal lies on A - B's boundary between the edge's ends). */
static int epa2(pl_pair *q, const pl_simplex *start, pl_depth *out) {
    const pl_params *p = q->p;
    pl_vertex P[PL_EPA_CAP];
    int n = start->n;
    double eps = p->epa_rel * q->size, tiny = p->degenerate_rel * q->size;
    for (int k = 0; k < n; k++) P[k] = start->p[k];
    memset(out, 0, sizeof(*out));
    /* Blow a point or a segment up to a triangle (GJK stopped with the origin on it). */
    int sa, sb;
    while (n < 3) {
        double d[2];
        if (n == 1) { d[0] = 1.0; d[1] = 0.0; }
        else { d[0] = P[1].w[1] - P[0].w[1]; d[1] = P[0].w[0] - P[1].w[0]; } /* the segment's normal */
        int grown = 0;
        for (int sgn = 0; sgn < 2 && !grown; sgn++) {
            double dd[2] = {sgn ? -d[0] : d[0], sgn ? -d[1] : d[1]};
            pl_vertex w;
            support_pair(q, dd, &w, &sa, &sb);
            double len = sqrt(dot2(dd, dd));
            double reach = (dot2(dd, w.w) - dot2(dd, P[0].w)) / len;
            if (reach > tiny) { P[n++] = w; grown = 1; }
        }
        if (!grown) return EPA_EXIT_FLAT; /* A - B has no interior: the parts are flat */
    }
    {
        double e1[2] = {P[1].w[0] - P[0].w[0], P[1].w[1] - P[0].w[1]}, e2[2] = {P[2].w[0] - P[0].w[0], P[2].w[1] - P[0].w[1]};
        if (cross2(e1, e2) < 0.0) { pl_vertex t = P[1]; P[1] = P[2]; P[2] = t; } /* counter-clockwise */
    }
    int exit = EPA_EXIT_ITERATION_CAP, best = 0;
    double hi = INFINITY, lo = 0.0, bn[2] = {1.0, 0.0};
    int it;
    for (it = 0; it < p->max_epa; it++) {
        /* the edge nearest the origin, and its outward normal (e rotated clockwise) */
        double dmin = INFINITY;
        for (int k = 0; k < n; k++) {
            const double *s = P[k].w, *t = P[(k + 1) % n].w;
            double e[2] = {t[0] - s[0], t[1] - s[1]};
            double len = sqrt(dot2(e, e));
            if (len <= tiny) continue; /* a repeated point: no normal */
            double nrm[2] = {e[1] / len, -e[0] / len};
            double dist = dot2(nrm, s);
            if (dist < dmin) { dmin = dist; best = k; bn[0] = nrm[0]; bn[1] = nrm[1]; }
        }
        if (dmin == INFINITY) { exit = EPA_EXIT_DEGENERATE; break; }
        lo = dmin > 0.0 ? dmin : 0.0;
        pl_vertex w;
        support_pair(q, bn, &w, &sa, &sb);
        double sv = dot2(bn, w.w);
        if (sv < hi) hi = sv;
        int stop = 0;
        if (sv - dmin <= eps) stop = EPA_EXIT_CONVERGED;
        else if ((w.ia == P[best].ia && w.ib == P[best].ib) || (w.ia == P[(best + 1) % n].ia && w.ib == P[(best + 1) % n].ib))
            stop = EPA_EXIT_CONVERGED; /* the support is an end of the edge: the edge is A - B's */
        else if (n >= PL_EPA_CAP) stop = EPA_EXIT_CAPACITY;
        if (!stop) {
            for (int k = n; k > best + 1; k--) P[k] = P[k - 1];
            P[best + 1] = w;
            n++;
        }
        double *rec = trace_rec(q->tr);
        if (rec) {
            rec[PT_PHASE] = 1; rec[PT_ITER] = it;
            rec[PT_DIR] = bn[0]; rec[PT_DIR + 1] = bn[1];
            put_vertex(rec, &w);
            rec[PT_STEPS_A] = sa; rec[PT_STEPS_B] = sb;
            rec[PT_VNORM] = dmin; rec[PT_LOWER] = lo; rec[PT_UPPER] = hi; rec[PT_EXIT] = stop;
            rec[PT_EDGES] = n; rec[PT_SUPPORT] = sv;
            rec[PT_CLOSEST] = dmin * bn[0]; rec[PT_CLOSEST + 1] = dmin * bn[1];
        }
        if (stop) { exit = stop; it++; break; }
    }
    if (exit == EPA_EXIT_ITERATION_CAP && q->tr && q->tr->buf && q->tr->n > 0)
        q->tr->buf[(size_t)(q->tr->n - 1) * PT_WIDTH + PT_EXIT] = exit;
    if (exit == EPA_EXIT_DEGENERATE) return exit;
    /* The contact: the origin's projection on the nearest edge, weighed onto A and B. */
    const pl_vertex *s = &P[best], *t = &P[(best + 1) % n];
    double e[2] = {t->w[0] - s->w[0], t->w[1] - s->w[1]};
    double ee = dot2(e, e), f = ee > 0.0 ? -dot2(s->w, e) / ee : 0.0;
    if (f < 0.0) f = 0.0;
    if (f > 1.0) f = 1.0;
    for (int c = 0; c < 2; c++) {
        out->pa[c] = s->a[c] + f * (t->a[c] - s->a[c]);
        out->pb[c] = s->b[c] + f * (t->b[c] - s->b[c]);
        out->normal[c] = bn[c];
    }
    out->lo = lo;
    out->hi = hi > lo ? hi : lo;
    out->iterations = it;
    return exit;
}

/* ---------------------------------------------------------------- convex pair */

static int converged(int exit) {
    return exit == GJK_EXIT_CONVERGED || exit == GJK_EXIT_REPEATED_SUPPORT || exit == GJK_EXIT_NO_PROGRESS;
}

/* The verdict of query.c, in the plane (no inflation). */
static void convex_query(pl_pair *q, pl_result *out) {
    const pl_params *p = q->p;
    pl_bounds g;
    out->exit = gjk2(q, &g);
    out->iterations = g.iterations;
    const pl_simplex *S = &g.simplex;
    double pa[2] = {0.0, 0.0}, pb[2] = {0.0, 0.0};
    for (int k = 0; k < S->n; k++)
        for (int c = 0; c < 2; c++) { pa[c] += S->lambda[k] * S->p[k].a[c]; pb[c] += S->lambda[k] * S->p[k].b[c]; }
    int conv = converged(out->exit);
    int intersecting = out->exit == GJK_EXIT_ORIGIN_ENCLOSED || out->exit == GJK_EXIT_ORIGIN_TOUCHED;
    if (!intersecting) {
        double d[2] = {pb[0] - pa[0], pb[1] - pa[1]};
        double dist = sqrt(dot2(d, d));
        for (int c = 0; c < 2; c++) {
            out->normal[c] = dist > 0.0 ? d[c] / dist : g.best_dir[c];
            out->pa[c] = pa[c];
            out->pb[c] = pb[c];
        }
        if (g.lower > 0.0) {
            /* A lies below best_dir.x = line_ab[0], B above best_dir.x = line_ab[1] */
            out->cert_kind = PL_CERT_LINE;
            out->line[0] = g.best_dir[0]; out->line[1] = g.best_dir[1];
            out->line[2] = 0.5 * (g.line_ab[0] + g.line_ab[1]);
        }
        out->distance = dist;
        out->lower = g.lower > 0.0 ? g.lower : 0.0;
        if (g.lower > q->tol) out->status = GJK_CLEAR;
        else if (dist <= q->tol) out->status = GJK_TOUCHING;
        else if (conv && (g.lower > 0.0 || dist - g.lower <= p->gjk_rel * q->size)) out->status = GJK_CLEAR;
        else out->status = GJK_UNDECIDED; /* bounds either side of the band: no guess */
        return;
    }
    /* The origin lies on GJK's simplex: sum(lambda a) = sum(lambda b), a point of both. */
    out->cert_kind = PL_CERT_POINT;
    for (int c = 0; c < 2; c++) { out->pa[c] = pa[c]; out->pb[c] = pb[c]; out->point[c] = 0.5 * (pa[c] + pb[c]); }
    if (p->want != GJK_WANT_VERDICT) {
        out->normal[0] = g.best_dir[0]; out->normal[1] = g.best_dir[1];
        out->status = GJK_INTERSECTING;
        return;
    }
    pl_depth d;
    out->epa_exit = epa2(q, S, &d);
    out->epa_iterations = d.iterations;
    if (out->epa_exit == EPA_EXIT_FLAT || out->epa_exit == EPA_EXIT_DEGENERATE) {
        out->normal[0] = g.best_dir[0]; out->normal[1] = g.best_dir[1];
        out->depth = out->depth_upper = 0.0;
        out->status = GJK_TOUCHING;
        return;
    }
    out->depth = d.lo;
    out->depth_upper = d.hi;
    for (int c = 0; c < 2; c++) { out->normal[c] = d.normal[c]; out->pa[c] = d.pa[c]; out->pb[c] = d.pb[c]; }
    if (out->depth_upper <= q->tol) out->status = GJK_TOUCHING;
    else if (out->depth > q->tol) out->status = GJK_COLLISION;
    else if (out->epa_exit == EPA_EXIT_CONVERGED) out->status = GJK_TOUCHING; /* met at tol's edge */
    else out->status = GJK_UNDECIDED;
}

/* ---------------------------------------------------------------- segment hierarchy */

#define PL_LEAF 4

/* order[j] (two vertex indices) and its edge's midpoint mid[j] (2 doubles) travel together, so
 * that the splits read memory in order, not the vertex array at random. */
static void swap_edges(int32_t *o, double *mid, int i, int j) {
    int32_t a = o[2 * i], b = o[2 * i + 1];
    o[2 * i] = o[2 * j]; o[2 * i + 1] = o[2 * j + 1];
    o[2 * j] = a; o[2 * j + 1] = b;
    double x = mid[2 * i], y = mid[2 * i + 1];
    mid[2 * i] = mid[2 * j]; mid[2 * i + 1] = mid[2 * j + 1];
    mid[2 * j] = x; mid[2 * j + 1] = y;
}

/* Quickselect (Hoare): positions lo..hi) partitioned about position m along axis. */
static void select_mid(int32_t *o, double *mid, int axis, int lo, int hi, int m) {
    while (hi - lo > 1) {
        /* pivot: the median of the values at the quarter points (a ring's midpoints rise and
         * fall along an axis, so the middle value alone is often the least of all) */
        int q = (hi - lo) / 4;
        double x0 = mid[2 * (lo + q) + axis], x1 = mid[2 * (lo + 2 * q) + axis], x2 = mid[2 * (hi - 1 - q) + axis];
        double pivot = x0 < x1 ? (x1 < x2 ? x1 : (x0 < x2 ? x2 : x0)) : (x0 < x2 ? x0 : (x1 < x2 ? x2 : x1));
        int i = lo, j = hi - 1;
        while (i <= j) {
            while (mid[2 * i + axis] < pivot) i++;
            while (mid[2 * j + axis] > pivot) j--;
            if (i <= j) { swap_edges(o, mid, i, j); i++; j--; }
        }
        if (m <= j) hi = j + 1;
        else if (m >= i) lo = i;
        else return;
    }
}

/* Node over edges lo..hi): a leaf of at most PL_LEAF edges, or a split at the median midpoint
 * along the longer side of the midpoints' box. Boxes are unions of the children's. */
static int build_node(const double *v, int32_t *order, double *mid, int lo, int hi, double *nbox, int32_t *nchild,
                      int *count) {
    int k = (*count)++;
    double *b = nbox + 4 * (size_t)k;
    if (hi - lo <= PL_LEAF) {
        b[0] = b[1] = INFINITY;
        b[2] = b[3] = -INFINITY;
        for (int j = lo; j < hi; j++)
            for (int e = 0; e < 2; e++) {
                const double *x = v + 2 * (size_t)order[2 * j + e];
                if (x[0] < b[0]) b[0] = x[0];
                if (x[1] < b[1]) b[1] = x[1];
                if (x[0] > b[2]) b[2] = x[0];
                if (x[1] > b[3]) b[3] = x[1];
            }
        nchild[2 * k] = -1 - lo;
        nchild[2 * k + 1] = hi - lo;
        return k;
    }
    double lo_x = INFINITY, lo_y = INFINITY, hi_x = -INFINITY, hi_y = -INFINITY;
    for (int j = lo; j < hi; j++) {
        double x = mid[2 * j], y = mid[2 * j + 1];
        if (x < lo_x) lo_x = x;
        if (x > hi_x) hi_x = x;
        if (y < lo_y) lo_y = y;
        if (y > hi_y) hi_y = y;
    }
    int axis = (hi_x - lo_x) >= (hi_y - lo_y) ? 0 : 1;
    int m = lo + (hi - lo) / 2;
    select_mid(order, mid, axis, lo, hi, m);
    int left = build_node(v, order, mid, lo, m, nbox, nchild, count);
    int right = build_node(v, order, mid, m, hi, nbox, nchild, count);
    const double *l = nbox + 4 * (size_t)left, *r = nbox + 4 * (size_t)right;
    b = nbox + 4 * (size_t)k;
    b[0] = l[0] < r[0] ? l[0] : r[0];
    b[1] = l[1] < r[1] ? l[1] : r[1];
    b[2] = l[2] > r[2] ? l[2] : r[2];
    b[3] = l[3] > r[3] ? l[3] : r[3];
    nchild[2 * k] = left;
    nchild[2 * k + 1] = right;
    return k;
}

int pl_build(const double *v, const int32_t *ring, const int32_t *part_ring, int n_parts, double *nbox,
             int32_t *nchild, int32_t *order, int32_t *part_node, double *box, double *scratch) {
    int count = 0;
    for (int p = 0; p < n_parts; p++) {
        int e0 = ring[part_ring[p]], e1 = ring[part_ring[p + 1]];
        for (int r = part_ring[p]; r < part_ring[p + 1]; r++)
            for (int i = ring[r]; i < ring[r + 1]; i++) {
                int j = i + 1 < ring[r + 1] ? i + 1 : ring[r];
                order[2 * i] = i;
                order[2 * i + 1] = j;
                scratch[2 * i] = v[2 * (size_t)i] + v[2 * (size_t)j];
                scratch[2 * i + 1] = v[2 * (size_t)i + 1] + v[2 * (size_t)j + 1];
            }
        part_node[p] = build_node(v, order, scratch, e0, e1, nbox, nchild, &count);
        memcpy(box + 4 * (size_t)p, nbox + 4 * (size_t)part_node[p], 4 * sizeof(double));
    }
    return count;
}

/* ---------------------------------------------------------------- convex parts */

/* The next vertex of ring r0..r1) after i at a different place (i itself when none). */
static int next_distinct(const double *v, int r0, int r1, int i) {
    int j = i;
    for (int k = 0; k < r1 - r0; k++) {
        j = j + 1 < r1 ? j + 1 : r0;
        if (v[2 * (size_t)j] != v[2 * (size_t)i] || v[2 * (size_t)j + 1] != v[2 * (size_t)i + 1]) return j;
    }
    return i;
}

void pl_classify(const double *v, const int32_t *ring, const int32_t *part_ring, int n_parts, double flat_rel,
                 int8_t *convex) {
    for (int p = 0; p < n_parts; p++) {
        convex[p] = 0;
        if (part_ring[p + 1] - part_ring[p] != 1) continue;
        int r0 = ring[part_ring[p]], r1 = ring[part_ring[p] + 1];
        double lo[2] = {INFINITY, INFINITY}, hi[2] = {-INFINITY, -INFINITY};
        for (int i = r0; i < r1; i++)
            for (int c = 0; c < 2; c++) {
                double x = v[2 * (size_t)i + c];
                if (x < lo[c]) lo[c] = x;
                if (x > hi[c]) hi[c] = x;
            }
        double scale = dmax(hi[0] - lo[0], hi[1] - lo[1]);
        double flat = flat_rel * scale * scale;
        /* convex: every turn of one sign (collinear corners aside), turning once round */
        int pos = 0, neg = 0, corners = 0;
        double total = 0.0;
        int start = r0, i = r0;
        do {
            int j = next_distinct(v, r0, r1, i), k = next_distinct(v, r0, r1, j);
            if (j == i || k == j) break;
            double e_in[2] = {v[2 * (size_t)j] - v[2 * (size_t)i], v[2 * (size_t)j + 1] - v[2 * (size_t)i + 1]};
            double e_out[2] = {v[2 * (size_t)k] - v[2 * (size_t)j], v[2 * (size_t)k + 1] - v[2 * (size_t)j + 1]};
            double turn = cross2(e_in, e_out);
            if (turn > flat) pos++;
            else if (turn < -flat) neg++;
            total += atan2(turn, dot2(e_in, e_out));
            corners++;
            i = j;
        } while (i != start && corners <= r1 - r0);
        convex[p] = (pos >= 3 || neg >= 3) && (pos == 0 || neg == 0) && fabs(fabs(total) - 6.283185307179586) < 1e-6;
    }
}

/* ---------------------------------------------------------------- edge queries */

/* Squared distance between boxes (shifted by nothing: boxes only prune). */
static double box_dist2(const double *a, const double *b) {
    double dx = dmax(0.0, dmax(a[0] - b[2], b[0] - a[2]));
    double dy = dmax(0.0, dmax(a[1] - b[3], b[1] - a[3]));
    return dx * dx + dy * dy;
}

/* Closest point of segment s t to x. */
static void seg_point(const double s[2], const double t[2], const double x[2], double out[2]) {
    double e[2] = {t[0] - s[0], t[1] - s[1]}, d[2] = {x[0] - s[0], x[1] - s[1]};
    double ee = dot2(e, e), f = ee > 0.0 ? dot2(d, e) / ee : 0.0;
    f = f < 0.0 ? 0.0 : (f > 1.0 ? 1.0 : f);
    out[0] = s[0] + f * e[0];
    out[1] = s[1] + f * e[1];
}

/* Distance between segments a0a1 and b0b1 (pair frame), their closest points, and whether they
 * cross beyond the band: a proper crossing with every end farther than tol from the other's
 * line (faces that only meet, or cross by less than the band, are touching, as in 3D). */
static double seg_seg(const double a0[2], const double a1[2], const double b0[2], const double b1[2], double tol,
                      double pa[2], double pb[2], int *deep) {
    double ea[2] = {a1[0] - a0[0], a1[1] - a0[1]}, eb[2] = {b1[0] - b0[0], b1[1] - b0[1]};
    double r0[2] = {b0[0] - a0[0], b0[1] - a0[1]}, r1[2] = {b1[0] - a0[0], b1[1] - a0[1]};
    double s0[2] = {a0[0] - b0[0], a0[1] - b0[1]}, s1[2] = {a1[0] - b0[0], a1[1] - b0[1]};
    double o1 = cross2(ea, r0), o2 = cross2(ea, r1); /* sides of b0, b1 of line a (times |ea|) */
    double o3 = cross2(eb, s0), o4 = cross2(eb, s1); /* sides of a0, a1 of line b (times |eb|) */
    *deep = 0;
    if (((o1 > 0.0 && o2 < 0.0) || (o1 < 0.0 && o2 > 0.0)) && ((o3 > 0.0 && o4 < 0.0) || (o3 < 0.0 && o4 > 0.0))) {
        double f = o3 / (o3 - o4); /* the crossing's parameter on a */
        pa[0] = pb[0] = a0[0] + f * ea[0];
        pa[1] = pb[1] = a0[1] + f * ea[1];
        double la = sqrt(dot2(ea, ea)), lb = sqrt(dot2(eb, eb));
        *deep = dmin(fabs(o1), fabs(o2)) > tol * la && dmin(fabs(o3), fabs(o4)) > tol * lb;
        return 0.0;
    }
    double best = INFINITY, q[2], d[2];
    const double *ends[4] = {a0, a1, b0, b1};
    for (int k = 0; k < 4; k++) {
        if (k < 2) seg_point(b0, b1, ends[k], q);
        else seg_point(a0, a1, ends[k], q);
        d[0] = ends[k][0] - q[0];
        d[1] = ends[k][1] - q[1];
        double dd = dot2(d, d);
        if (dd < best) {
            best = dd;
            if (k < 2) { pa[0] = ends[k][0]; pa[1] = ends[k][1]; pb[0] = q[0]; pb[1] = q[1]; }
            else { pb[0] = ends[k][0]; pb[1] = ends[k][1]; pa[0] = q[0]; pa[1] = q[1]; }
        }
    }
    return sqrt(best);
}

static void at(const pl_set *S, int32_t i, const double c[2], double out[2]) {
    out[0] = S->v[2 * (size_t)i] - c[0];
    out[1] = S->v[2 * (size_t)i + 1] - c[1];
}

typedef struct {
    double dist, pa[2], pb[2];
    int deep;
    int32_t edge_a, edge_b; /* start vertices of the closest (or deep crossing) edges */
} pl_edges;

#define PL_STACK 512

/* The closest pair of edges of parts a and b, stopping at the first deep crossing: a descent of
 * both hierarchies, nearer boxes first, pruning boxes farther than the best so far. */
static void edge_distance(const pl_set *S, int a, int b, const double c[2], double tol, pl_edges *out) {
    int32_t stack[2 * PL_STACK];
    int top = 0;
    out->dist = INFINITY;
    out->deep = 0;
    out->edge_a = out->edge_b = -1;
    stack[top++] = S->part_node[a];
    stack[top++] = S->part_node[b];
    while (top > 0) {
        int nb = stack[--top], na = stack[--top];
        const double *ba = S->nbox + 4 * (size_t)na, *bb = S->nbox + 4 * (size_t)nb;
        double bd = box_dist2(ba, bb);
        if (bd > out->dist * out->dist) continue;
        int la = S->nchild[2 * na] < 0, lb = S->nchild[2 * nb] < 0;
        if (la && lb) {
            int fa = -1 - S->nchild[2 * na], ca = S->nchild[2 * na + 1];
            int fb = -1 - S->nchild[2 * nb], cb = S->nchild[2 * nb + 1];
            for (int i = fa; i < fa + ca; i++) {
                double a0[2], a1[2];
                at(S, S->order[2 * i], c, a0);
                at(S, S->order[2 * i + 1], c, a1);
                double alo[2] = {dmin(a0[0], a1[0]), dmin(a0[1], a1[1])}, ahi[2] = {dmax(a0[0], a1[0]), dmax(a0[1], a1[1])};
                for (int j = fb; j < fb + cb; j++) {
                    double b0[2], b1[2], pa[2] = {0.0, 0.0}, pb[2] = {0.0, 0.0};
                    int deep;
                    at(S, S->order[2 * j], c, b0);
                    at(S, S->order[2 * j + 1], c, b1);
                    /* the segments' boxes already farther apart than the best: no closer pair here */
                    double gx = dmax(0.0, dmax(alo[0] - dmax(b0[0], b1[0]), dmin(b0[0], b1[0]) - ahi[0]));
                    double gy = dmax(0.0, dmax(alo[1] - dmax(b0[1], b1[1]), dmin(b0[1], b1[1]) - ahi[1]));
                    if (gx * gx + gy * gy > out->dist * out->dist) continue;
                    double d = seg_seg(a0, a1, b0, b1, tol, pa, pb, &deep);
                    if (d < out->dist || deep) {
                        out->dist = d;
                        out->pa[0] = pa[0]; out->pa[1] = pa[1]; out->pb[0] = pb[0]; out->pb[1] = pb[1];
                        out->edge_a = S->order[2 * i];
                        out->edge_b = S->order[2 * j];
                    }
                    if (deep) { out->deep = 1; return; }
                }
            }
            continue;
        }
        /* split the larger box (or the inner node); push the farther child first */
        double wa = (ba[2] - ba[0]) + (ba[3] - ba[1]), wb = (bb[2] - bb[0]) + (bb[3] - bb[1]);
        int split_a = lb || (!la && wa >= wb);
        int n = split_a ? na : nb, other = split_a ? nb : na;
        int c0 = S->nchild[2 * n], c1 = S->nchild[2 * n + 1];
        const double *bo = S->nbox + 4 * (size_t)other;
        double d0 = box_dist2(S->nbox + 4 * (size_t)c0, bo), d1 = box_dist2(S->nbox + 4 * (size_t)c1, bo);
        int first = d0 <= d1 ? c1 : c0, second = d0 <= d1 ? c0 : c1;
        if (top + 4 > 2 * PL_STACK) continue; /* cannot happen: depth is logarithmic */
        int kids[2] = {first, second};
        for (int k = 0; k < 2; k++) {
            stack[top++] = split_a ? kids[k] : na;
            stack[top++] = split_a ? nb : kids[k];
        }
    }
}

int pl_inside(const pl_set *S, int p, const double x[2]) {
    /* even-odd: edges crossed by the ray from x towards +x; an edge counts when its ends lie on
     * either side of the ray's line (half-open in y, so a vertex on the line counts once) */
    int32_t stack[PL_STACK];
    int top = 0, odd = 0;
    stack[top++] = S->part_node[p];
    while (top > 0) {
        int k = stack[--top];
        const double *b = S->nbox + 4 * (size_t)k;
        if (x[1] < b[1] || x[1] > b[3] || x[0] > b[2]) continue;
        if (S->nchild[2 * k] >= 0) {
            if (top + 2 <= PL_STACK) { stack[top++] = S->nchild[2 * k]; stack[top++] = S->nchild[2 * k + 1]; }
            continue;
        }
        int f = -1 - S->nchild[2 * k], n = S->nchild[2 * k + 1];
        for (int i = f; i < f + n; i++) {
            const double *s = S->v + 2 * (size_t)S->order[2 * i], *t = S->v + 2 * (size_t)S->order[2 * i + 1];
            if ((s[1] > x[1]) != (t[1] > x[1])) {
                double cx = s[0] + (x[1] - s[1]) / (t[1] - s[1]) * (t[0] - s[0]);
                if (cx > x[0]) odd ^= 1;
            }
        }
    }
    return odd;
}

/* Distance from x (world) to part p's boundary, and the nearest boundary point (world). */
static double boundary_distance(const pl_set *S, int p, const double x[2], double near[2]) {
    int32_t stack[PL_STACK];
    int top = 0;
    double best = INFINITY;
    stack[top++] = S->part_node[p];
    while (top > 0) {
        int k = stack[--top];
        const double *b = S->nbox + 4 * (size_t)k;
        double dx = dmax(0.0, dmax(b[0] - x[0], x[0] - b[2])), dy = dmax(0.0, dmax(b[1] - x[1], x[1] - b[3]));
        if (dx * dx + dy * dy > best) continue;
        if (S->nchild[2 * k] >= 0) {
            if (top + 2 <= PL_STACK) { stack[top++] = S->nchild[2 * k]; stack[top++] = S->nchild[2 * k + 1]; }
            continue;
        }
        int f = -1 - S->nchild[2 * k], n = S->nchild[2 * k + 1];
        for (int i = f; i < f + n; i++) {
            double q[2];
            seg_point(S->v + 2 * (size_t)S->order[2 * i], S->v + 2 * (size_t)S->order[2 * i + 1], x, q);
            double d[2] = {x[0] - q[0], x[1] - q[1]}, dd = dot2(d, d);
            if (dd < best) { best = dd; near[0] = q[0]; near[1] = q[1]; }
        }
    }
    return sqrt(best);
}

/* The deepest of part `from`'s vertices and edge midpoints inside part `into`: its distance to
 * `into`'s boundary (0 when none is inside), the point and its nearest boundary point (world). */
static double deepest(const pl_set *S, int from, int into, double pt[2], double near[2]) {
    double best = 0.0;
    const double *bi = S->box + 4 * (size_t)into;
    for (int r = S->part_ring[from]; r < S->part_ring[from + 1]; r++) {
        int r0 = S->ring[r], r1 = S->ring[r + 1];
        for (int i = r0; i < r1; i++) {
            for (int mid = 0; mid < 2; mid++) {
                double x[2];
                const double *s = S->v + 2 * (size_t)i;
                if (mid) {
                    const double *t = S->v + 2 * (size_t)(i + 1 < r1 ? i + 1 : r0);
                    x[0] = 0.5 * (s[0] + t[0]); x[1] = 0.5 * (s[1] + t[1]);
                } else { x[0] = s[0]; x[1] = s[1]; }
                if (x[0] < bi[0] || x[0] > bi[2] || x[1] < bi[1] || x[1] > bi[3]) continue;
                if (!pl_inside(S, into, x)) continue;
                double q[2], d = boundary_distance(S, into, x, q);
                if (d > best) { best = d; pt[0] = x[0]; pt[1] = x[1]; near[0] = q[0]; near[1] = q[1]; }
            }
        }
    }
    return best;
}

/* A pair through its edges. Verdicts:
 *   collision  two edges cross beyond the band (certificate: the edges and their crossing), or a
 *              vertex or edge midpoint of one part lies inside the other farther than the band
 *              from its boundary (certificate: that point), or a ring of one part lies inside
 *              the other with the edges apart (a part within another's solid area);
 *   touching   the edges come within the band, and no such point was found;
 *   clear      the edges are farther apart than the band and no ring lies inside the other part
 *              (certificate: the distance, a lower bound any check can recompute).
 * Depth (verdict only): the largest distance from an examined point of one part inside the other
 * to the other's boundary: any translation that separates the parts moves that point at least
 * that far, so it bounds the penetration depth from below (as exact mode does in 3D). */
static void edge_query(pl_pair *q, pl_result *out) {
    const pl_set *S = q->S;
    pl_edges e;
    edge_distance(S, q->a, q->b, q->c, q->tol, &e);
    out->exit = e.deep ? GJK_EXIT_ORIGIN_ENCLOSED : GJK_EXIT_CONVERGED;
    double pt[2], near[2], pt2[2], near2[2];
    double dab = 0.0, dba = 0.0;
    int first_only = !e.deep && e.dist > q->tol;
    if (!first_only && (!e.deep || q->p->want == GJK_WANT_VERDICT)) {
        dab = deepest(S, q->a, q->b, pt, near);   /* A's points inside B */
        dba = deepest(S, q->b, q->a, pt2, near2); /* B's points inside A */
    }
    int inside_ab = 0, inside_ba = 0;
    if (first_only) {
        /* edges apart: a ring's first vertex inside the other part puts the ring inside */
        double x[2];
        for (int r = S->part_ring[q->a]; r < S->part_ring[q->a + 1] && !inside_ab; r++) {
            x[0] = S->v[2 * (size_t)S->ring[r]]; x[1] = S->v[2 * (size_t)S->ring[r] + 1];
            if (pl_inside(S, q->b, x)) { inside_ab = 1; pt[0] = x[0]; pt[1] = x[1]; dab = boundary_distance(S, q->b, x, near); }
        }
        for (int r = S->part_ring[q->b]; r < S->part_ring[q->b + 1] && !inside_ba; r++) {
            x[0] = S->v[2 * (size_t)S->ring[r]]; x[1] = S->v[2 * (size_t)S->ring[r] + 1];
            if (pl_inside(S, q->a, x)) { inside_ba = 1; pt2[0] = x[0]; pt2[1] = x[1]; dba = boundary_distance(S, q->a, x, near2); }
        }
    }
    if ((inside_ab || inside_ba) && q->p->want == GJK_WANT_VERDICT) {
        /* a ring inside the other part: the depth from every examined point, not the first */
        dab = deepest(S, q->a, q->b, pt, near);
        dba = deepest(S, q->b, q->a, pt2, near2);
    }
    for (int c = 0; c < 2; c++) { out->pa[c] = e.pa[c] + q->c[c]; out->pb[c] = e.pb[c] + q->c[c]; }
    double d[2] = {e.pb[0] - e.pa[0], e.pb[1] - e.pa[1]}, len = sqrt(dot2(d, d));
    if (len > 0.0) { out->normal[0] = d[0] / len; out->normal[1] = d[1] / len; }
    else { out->normal[0] = 1.0; out->normal[1] = 0.0; }
    int deep_point = dab > q->tol || dba > q->tol;
    if (!e.deep && !inside_ab && !inside_ba && !deep_point) {
        out->distance = e.dist;
        out->lower = e.dist;
        out->cert_kind = PL_CERT_DISTANCE;
        out->status = e.dist > q->tol ? GJK_CLEAR : GJK_TOUCHING;
        return;
    }
    out->distance = 0.0;
    out->lower = 0.0;
    if (e.deep) {
        out->cert_kind = PL_CERT_EDGES;
        out->edge_a = e.edge_a;
        out->edge_b = e.edge_b;
        out->point[0] = out->pa[0]; out->point[1] = out->pa[1];
    } else {
        /* the deeper point: on its own part's boundary, and inside the other part */
        out->cert_kind = PL_CERT_POINT;
        const double *x = dab >= dba ? pt : pt2;
        out->point[0] = x[0]; out->point[1] = x[1];
    }
    if (q->p->want == GJK_WANT_VERDICT) {
        /* A's point x inside B, nearest B boundary point y: B moves along x - y to free it;
         * B's point inside A: A moves along x - y, so B along y - x */
        double depth = dab >= dba ? dab : dba;
        if (depth > 0.0) {
            const double *x = dab >= dba ? pt : pt2, *y = dab >= dba ? near : near2;
            double n[2] = {x[0] - y[0], x[1] - y[1]}, nl = sqrt(dot2(n, n));
            if (dab < dba) { n[0] = -n[0]; n[1] = -n[1]; }
            if (nl > 0.0) { out->normal[0] = n[0] / nl; out->normal[1] = n[1] / nl; }
            if (dab >= dba) { out->pa[0] = x[0]; out->pa[1] = x[1]; out->pb[0] = y[0]; out->pb[1] = y[1]; }
            else { out->pb[0] = x[0]; out->pb[1] = x[1]; out->pa[0] = y[0]; out->pa[1] = y[1]; }
        }
        out->depth = depth;
        out->depth_upper = INFINITY;
        out->epa_exit = EPA_EXIT_CONVERGED;
        out->status = GJK_COLLISION;
    } else out->status = GJK_INTERSECTING;
}

/* ---------------------------------------------------------------- batch */

void pl_batch(const pl_set *S, const int32_t *ia, const int32_t *ib, int m, const double *tol, double tol_rel,
              const pl_params *p, pl_trace *tr, pl_result *out) {
    for (int k = 0; k < m; k++) {
        pl_pair q;
        pl_result *r = &out[k];
        memset(r, 0, sizeof(*r));
        q.S = S; q.a = ia[k]; q.b = ib[k]; q.p = p; q.tr = tr;
        q.hint_a = q.hint_b = -1;
        const double *ba = S->box + 4 * (size_t)q.a, *bb = S->box + 4 * (size_t)q.b;
        double da = hypot(ba[2] - ba[0], ba[3] - ba[1]), db = hypot(bb[2] - bb[0], bb[3] - bb[1]);
        q.size = da > db ? da : db;
        q.tol = tol ? tol[k] : tol_rel * q.size;
        /* work about the pair's centre, so that parts far from the origin keep their digits */
        q.c[0] = 0.25 * (ba[0] + ba[2] + bb[0] + bb[2]);
        q.c[1] = 0.25 * (ba[1] + ba[3] + bb[1] + bb[3]);
        r->edge_a = r->edge_b = -1;
        if (S->convex[q.a] && S->convex[q.b]) {
            convex_query(&q, r);
            for (int c = 0; c < 2; c++) { r->pa[c] += q.c[c]; r->pb[c] += q.c[c]; r->point[c] += q.c[c]; }
            if (r->cert_kind == PL_CERT_LINE) r->line[2] += dot2(r->line, q.c);
        } else edge_query(&q, r);
        r->tol = q.tol;
    }
}
