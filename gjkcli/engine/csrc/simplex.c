/* Closest point of a simplex (1 to 4 points) to the origin, by signed volumes.
 *
 * Montanari, Petrinic and Barbieri 2017 ("Improving the GJK algorithm for faster and more
 * reliable distance queries between convex objects") replace Johnson's sub-algorithm with
 * signed volumes of the simplex and of the simplices made by swapping one vertex for the
 * origin's projection. Each test is a sign comparison of determinants computed on the
 * coordinates that keep the largest projected measure, which stays reliable on the nearly
 * degenerate simplices where Johnson's cofactors lose every digit.
 *
 * The answer: barycentric weights over a sub-simplex (the Voronoi feature holding the closest
 * point), and which input points it kept.
 */
#include <math.h>

#include "gjk.h"

/* Same strict sign: a tie with zero counts as "different", which sends the test to the faces. */
static int same_sign(double a, double b) { return (a > 0.0 && b > 0.0) || (a < 0.0 && b < 0.0); }

/* Result of a sub-problem: weights over up to 4 of the input points, by index. */
typedef struct {
    int idx[4];
    double lambda[4];
    int n;
} sub;

static double sub_norm2(const gjk_vertex *p, const sub *r) {
    double v[3] = {0.0, 0.0, 0.0};
    for (int k = 0; k < r->n; k++)
        for (int c = 0; c < 3; c++) v[c] += r->lambda[k] * p[r->idx[k]].w[c];
    return v3_dot(v, v);
}

/* Segment s1 s2 (indices i1, i2). Project the origin on the line, then compare signed lengths on
 * the axis where the segment is longest. */
static void s1d(const gjk_vertex *p, int i1, int i2, sub *r) {
    const double *s1 = p[i1].w, *s2 = p[i2].w;
    double t[3];
    v3_sub(t, s2, s1);
    double tt = v3_dot(t, t);
    if (tt > 0.0) {
        double f = -v3_dot(s1, t) / tt;
        double p0[3] = {s1[0] + f * t[0], s1[1] + f * t[1], s1[2] + f * t[2]};
        int axis = 0;
        for (int c = 1; c < 3; c++)
            if (fabs(t[c]) > fabs(t[axis])) axis = c;
        double mu = s1[axis] - s2[axis];
        double c1 = p0[axis] - s2[axis]; /* weight of s1 times mu */
        double c2 = s1[axis] - p0[axis]; /* weight of s2 times mu */
        if (same_sign(mu, c1) && same_sign(mu, c2)) { /* edge region */
            r->n = 2; r->idx[0] = i1; r->idx[1] = i2;
            r->lambda[0] = c1 / mu; r->lambda[1] = c2 / mu;
            return;
        }
        if (same_sign(mu, c2)) { /* past s2: s2 region */
            r->n = 1; r->idx[0] = i2; r->lambda[0] = 1.0;
            return;
        }
    }
    /* s1 region (also a segment of zero length) */
    r->n = 1; r->idx[0] = i1; r->lambda[0] = 1.0;
}

/* Triangle s1 s2 s3. Project the origin on the plane; on the coordinate plane where the triangle's
 * shadow is largest, compare the signed area of the triangle (mu) with the areas made by putting
 * the projection in place of each vertex (c[j], the weight of vertex j times mu). */
static void s2d(const gjk_vertex *p, int i1, int i2, int i3, sub *r) {
    const int id[3] = {i1, i2, i3};
    const double *s1 = p[i1].w, *s2 = p[i2].w, *s3 = p[i3].w;
    double e12[3], e13[3], n[3];
    v3_sub(e12, s2, s1);
    v3_sub(e13, s3, s1);
    v3_cross(n, e12, e13);
    double nn = v3_dot(n, n);
    if (nn > 0.0) {
        double f = v3_dot(s1, n) / nn;
        double p0[3] = {f * n[0], f * n[1], f * n[2]};
        /* drop the axis of the largest normal component: the largest projected area */
        int drop = 0;
        for (int c = 1; c < 3; c++)
            if (fabs(n[c]) > fabs(n[drop])) drop = c;
        int x = (drop + 1) % 3, y = (drop + 2) % 3;
        const double *s[3] = {s1, s2, s3};
        double mu = (s2[x] - s1[x]) * (s3[y] - s1[y]) - (s3[x] - s1[x]) * (s2[y] - s1[y]);
        double c[3];
        for (int j = 0; j < 3; j++) {
            const double *a = s[(j + 1) % 3], *b = s[(j + 2) % 3];
            /* area of (p0, a, b): the vertex j replaced by p0, in cyclic order */
            c[j] = (a[x] - p0[x]) * (b[y] - p0[y]) - (b[x] - p0[x]) * (a[y] - p0[y]);
        }
        if (same_sign(mu, c[0]) && same_sign(mu, c[1]) && same_sign(mu, c[2])) { /* face region */
            r->n = 3;
            for (int j = 0; j < 3; j++) { r->idx[j] = id[j]; r->lambda[j] = c[j] / mu; }
            return;
        }
        /* The origin's projection lies outside the edges whose test failed: the closest point is
         * on one of them (or their vertices). Keep the nearest. */
        double best = INFINITY;
        for (int j = 0; j < 3; j++) {
            if (same_sign(mu, c[j])) continue;
            sub e;
            s1d(p, id[(j + 1) % 3], id[(j + 2) % 3], &e);
            double d2 = sub_norm2(p, &e);
            if (d2 < best) { best = d2; *r = e; }
        }
        return;
    }
    /* Degenerate (collinear) triangle: the closest point is on one of its edges. */
    double best = INFINITY;
    for (int j = 0; j < 3; j++) {
        sub e;
        s1d(p, id[(j + 1) % 3], id[(j + 2) % 3], &e);
        double d2 = sub_norm2(p, &e);
        if (d2 < best) { best = d2; *r = e; }
    }
}

/* Tetrahedron s1..s4: signed volumes. det M = sum of the cofactors c[j] of the row of ones;
 * c[j] / det is vertex j's barycentric weight of the origin. All of one sign: the origin is inside.
 * Otherwise the closest point lies on a face opposite a vertex whose weight is not positive. */
static void s3d(const gjk_vertex *p, sub *r) {
    const double *s[4] = {p[0].w, p[1].w, p[2].w, p[3].w};
    double c[4];
    /* c[j] = signed volume of the tetrahedron with the origin in place of vertex j */
    for (int j = 0; j < 4; j++) {
        const double *a = s[(j + 1) % 4], *b = s[(j + 2) % 4], *d = s[(j + 3) % 4];
        double bxd[3];
        v3_cross(bxd, b, d);
        /* det[a, b, d] with cyclic order; odd j flip to keep a common orientation */
        double vol = v3_dot(a, bxd);
        c[j] = (j % 2 == 0) ? vol : -vol;
    }
    double det = c[0] + c[1] + c[2] + c[3];
    if (same_sign(det, c[0]) && same_sign(det, c[1]) && same_sign(det, c[2]) && same_sign(det, c[3])) {
        r->n = 4;
        for (int j = 0; j < 4; j++) { r->idx[j] = j; r->lambda[j] = c[j] / det; }
        return;
    }
    double best = INFINITY;
    for (int j = 0; j < 4; j++) {
        if (same_sign(det, c[j])) continue;
        sub f;
        s2d(p, (j + 1) % 4, (j + 2) % 4, (j + 3) % 4, &f);
        double d2 = sub_norm2(p, &f);
        if (d2 < best) { best = d2; *r = f; }
    }
}

int gjk_closest(gjk_simplex *s, double v[3], int *kept) {
    sub r;
    switch (s->n) {
    case 1: r.n = 1; r.idx[0] = 0; r.lambda[0] = 1.0; break;
    case 2: s1d(s->p, 0, 1, &r); break;
    case 3: s2d(s->p, 0, 1, 2, &r); break;
    default: s3d(s->p, &r); break;
    }
    gjk_vertex keep[4];
    int mask = 0;
    v[0] = v[1] = v[2] = 0.0;
    for (int k = 0; k < r.n; k++) {
        keep[k] = s->p[r.idx[k]];
        mask |= 1 << r.idx[k];
        for (int c = 0; c < 3; c++) v[c] += r.lambda[k] * keep[k].w[c];
    }
    for (int k = 0; k < r.n; k++) { s->p[k] = keep[k]; s->lambda[k] = r.lambda[k]; }
    s->n = r.n;
    *kept = mask;
    return r.n == 4 ? GJK_FEATURE_INSIDE : r.n; /* 1 vertex, 2 edge, 3 face */
}

/* The weights of a tetrahedron holding the origin, corrected until sum(lambda w) is zero to
 * rounding. Signed volumes decide the region reliably, but on a flat tetrahedron (a needle's
 * or a thin plate's Minkowski difference) the weights they give leave sum(lambda a) and
 * sum(lambda b) apart by up to 1e-8 of the pair's size: their midpoint, the collision's
 * certificate, then lies outside both shapes by more than a check of it allows. Each round is
 * one step of iterative refinement: the residual r = sum(lambda w) and the change of weights
 * (summing to zero) that moves the combination by -r, from the edges w_k - w_0 by Cramer's
 * rule. A round that would make a weight negative or not shrink the residual is not taken. */
void gjk_polish(gjk_simplex *s) {
    if (s->n != 4) return;
    const double *w0 = s->p[0].w;
    double e1[3], e2[3], e3[3], e23[3];
    v3_sub(e1, s->p[1].w, w0);
    v3_sub(e2, s->p[2].w, w0);
    v3_sub(e3, s->p[3].w, w0);
    v3_cross(e23, e2, e3);
    double det = v3_dot(e1, e23);
    if (!(det != 0.0) || !isfinite(det)) return;
    for (int round = 0; round < 2; round++) {
        double r[3] = {0.0, 0.0, 0.0};
        for (int k = 0; k < 4; k++)
            for (int c = 0; c < 3; c++) r[c] += s->lambda[k] * s->p[k].w[c];
        double rr = v3_dot(r, r);
        if (rr == 0.0) return;
        double m[3] = {-r[0], -r[1], -r[2]}, t[3], d[4];
        d[1] = v3_dot(m, e23) / det;
        v3_cross(t, m, e3);
        d[2] = v3_dot(e1, t) / det;
        v3_cross(t, e2, m);
        d[3] = v3_dot(e1, t) / det;
        d[0] = -(d[1] + d[2] + d[3]);
        double lam[4], q[3] = {0.0, 0.0, 0.0};
        for (int k = 0; k < 4; k++) {
            lam[k] = s->lambda[k] + d[k];
            if (!(lam[k] >= 0.0)) return;
            for (int c = 0; c < 3; c++) q[c] += lam[k] * s->p[k].w[c];
        }
        if (!(v3_dot(q, q) < rr)) return;
        for (int k = 0; k < 4; k++) s->lambda[k] = lam[k];
    }
}
