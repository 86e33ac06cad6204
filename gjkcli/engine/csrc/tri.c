/* One triangle against another: intersection with a crossing point, distance with closest points,
 * closest point to a point, and the solid angle a triangle subtends.
 *
 * Triangles are 9 doubles, corners row by row. `snap` is a length: a corner within snap of the
 * other triangle's plane lies on it, so that faces exported to touch read as touching whatever
 * the rounding.
 */
#include <math.h>
#include <string.h>

#include "mesh.h"

static double clamp01(double x) { return x < 0.0 ? 0.0 : (x > 1.0 ? 1.0 : x); }

/* ---------------------------------------------------------------------------------------------
 * Intersection: Moller 1997, "A fast triangle-triangle intersection test", with the crossing
 * segments made explicit so that the answer carries a point of both triangles.
 * ------------------------------------------------------------------------------------------- */

/* Signed distances of T's corners to the plane through o with unit normal n, snapped to 0 within
 * snap. Returns +1 or -1 when every corner lies strictly on that side, 2 when all lie on the
 * plane, 0 when T meets the plane. */
static int plane_side(const double T[9], const double n[3], const double o[3], double snap, double d[3]) {
    int pos = 0, neg = 0;
    for (int i = 0; i < 3; i++) {
        double r[3];
        m3_sub(r, T + 3 * i, o);
        d[i] = m3_dot(n, r);
        if (fabs(d[i]) <= snap) d[i] = 0.0;
        pos += d[i] > 0.0;
        neg += d[i] < 0.0;
    }
    if (pos == 3) return 1;
    if (neg == 3) return -1;
    if (pos == 0 && neg == 0) return 2;
    return 0;
}

/* Where T meets the plane it straddles: corners on it and edge crossings. 1 or 2 points. */
static int plane_cut(const double T[9], const double d[3], double s[6]) {
    int k = 0;
    for (int i = 0; i < 3 && k < 2; i++) {
        int j = (i + 1) % 3;
        if (d[i] == 0.0) {
            m3_copy(s + 3 * k++, T + 3 * i);
        } else if ((d[i] > 0.0 && d[j] < 0.0) || (d[i] < 0.0 && d[j] > 0.0)) {
            double e[3];
            m3_sub(e, T + 3 * j, T + 3 * i);
            m3_axpy(s + 3 * k++, T + 3 * i, d[i] / (d[i] - d[j]), e);
        }
    }
    return k;
}

/* How far a triangle reaches to the thinner side of a plane it straddles: min over the two sides
 * of the farthest corner. 0 when it only touches the plane. */
static double reach(const double d[3]) {
    double up = 0.0, down = 0.0;
    for (int i = 0; i < 3; i++) {
        if (d[i] > up) up = d[i];
        if (-d[i] > down) down = -d[i];
    }
    return up < down ? up : down;
}

/* 2D orientation of c against the line a -> b, coordinates (u, v) picked from 3D points. */
static double orient2(const double *a, const double *b, const double *c, int u, int v) {
    return (b[u] - a[u]) * (c[v] - a[v]) - (b[v] - a[v]) * (c[u] - a[u]);
}

/* Segments p0p1 and q0q1 of a common plane, projected on axes (u, v): do they share a point?
 * Touching and collinear overlap count. The point is written to x. */
static int segments_meet(const double *p0, const double *p1, const double *q0, const double *q1,
                         int u, int v, double x[3]) {
    double o1 = orient2(p0, p1, q0, u, v), o2 = orient2(p0, p1, q1, u, v);
    double o3 = orient2(q0, q1, p0, u, v), o4 = orient2(q0, q1, p1, u, v);
    if ((o1 > 0.0 && o2 > 0.0) || (o1 < 0.0 && o2 < 0.0)) return 0;
    if ((o3 > 0.0 && o4 > 0.0) || (o3 < 0.0 && o4 < 0.0)) return 0;
    if (o1 != o2) { /* proper or touching crossing: the point on q at the sign change */
        double e[3];
        m3_sub(e, q1, q0);
        m3_axpy(x, q0, o1 / (o1 - o2), e);
        return 1;
    }
    /* collinear: overlap along the longer coordinate */
    int w = fabs(p1[u] - p0[u]) + fabs(q1[u] - q0[u]) >= fabs(p1[v] - p0[v]) + fabs(q1[v] - q0[v]) ? u : v;
    double plo = fmin(p0[w], p1[w]), phi = fmax(p0[w], p1[w]);
    const double *ends[4] = {q0, q1, p0, p1};
    for (int k = 0; k < 4; k++) {
        double lo = k < 2 ? plo : fmin(q0[w], q1[w]), hi = k < 2 ? phi : fmax(q0[w], q1[w]);
        if (ends[k][w] >= lo && ends[k][w] <= hi) {
            m3_copy(x, ends[k]);
            return 1;
        }
    }
    return 0;
}

static int inside2(const double T[9], const double *p, int u, int v) {
    double a = orient2(T, T + 3, p, u, v), b = orient2(T + 3, T + 6, p, u, v), c = orient2(T + 6, T, p, u, v);
    return (a >= 0.0 && b >= 0.0 && c >= 0.0) || (a <= 0.0 && b <= 0.0 && c <= 0.0);
}

/* Both triangles in one plane of normal n: edge crossings, else a corner of one inside the other
 * (Moller 1997, section 3.1). */
static int coplanar_intersect(const double P[9], const double Q[9], const double n[3], double x[3]) {
    int drop = 0;
    if (fabs(n[1]) > fabs(n[drop])) drop = 1;
    if (fabs(n[2]) > fabs(n[drop])) drop = 2;
    int u = (drop + 1) % 3, v = (drop + 2) % 3;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            if (segments_meet(P + 3 * i, P + 3 * ((i + 1) % 3), Q + 3 * j, Q + 3 * ((j + 1) % 3), u, v, x)) return 1;
    if (inside2(Q, P, u, v)) { m3_copy(x, P); return 1; }
    if (inside2(P, Q, u, v)) { m3_copy(x, Q); return 1; }
    return 0;
}

/* Do P and Q share a point? On yes, point is a point of both (up to rounding) and straddle how
 * much they cross: the smallest of the two triangles' reach to the thin side of the other's plane
 * and the length of the segment they share. It is 0 for triangles that only touch: lying in one
 * plane, one touching the other's plane from one side, or meeting at a single point (two edges
 * crossing, or corners passing beside each other); surfaces that pass through each other by d
 * cut each other along curves about d long, and reach about d beyond each other. Degenerate
 * triangles (no area) answer no: their edges belong to their neighbours, which answer for them. */
int tri_tri_intersect(const double P[9], const double Q[9], double snap, double point[3], double *straddle) {
    double e1[3], e2[3], np[3], nq[3], dp[3], dq[3];
    m3_sub(e1, Q + 3, Q);
    m3_sub(e2, Q + 6, Q);
    m3_cross(nq, e1, e2);
    double lq = sqrt(m3_dot(nq, nq));
    m3_sub(e1, P + 3, P);
    m3_sub(e2, P + 6, P);
    m3_cross(np, e1, e2);
    double lp = sqrt(m3_dot(np, np));
    if (lq == 0.0 || lp == 0.0) return 0;
    for (int c = 0; c < 3; c++) {
        nq[c] /= lq;
        np[c] /= lp;
    }
    int sp = plane_side(P, nq, Q, snap, dp);
    if (sp == 1 || sp == -1) return 0; /* Q's plane separates */
    int sq = plane_side(Q, np, P, snap, dq);
    if (sq == 1 || sq == -1) return 0; /* P's plane separates */
    if (sp == 2 || sq == 2) {           /* one lies in the other's plane */
        *straddle = 0.0;
        return coplanar_intersect(P, Q, sp == 2 ? nq : np, point);
    }
    double s[6], r[6];
    int k = plane_cut(P, dp, s), m = plane_cut(Q, dq, r);
    if (k == 1) m3_copy(s + 3, s);
    if (m == 1) m3_copy(r + 3, r);
    /* Both cuts lie on the planes' common line: compare them along the longer one. */
    double ds[3], dr[3], dir[3];
    m3_sub(ds, s + 3, s);
    m3_sub(dr, r + 3, r);
    if (m3_dot(ds, ds) >= m3_dot(dr, dr)) m3_copy(dir, ds);
    else m3_copy(dir, dr);
    double len2 = m3_dot(dir, dir);
    if (len2 == 0.0) { /* two single points */
        if (m3_dist2(s, r) > snap * snap) return 0;
        for (int c = 0; c < 3; c++) point[c] = 0.5 * (s[c] + r[c]);
        *straddle = 0.0;
        return 1;
    }
    double a0 = m3_dot(dir, s), a1 = m3_dot(dir, s + 3), b0 = m3_dot(dir, r), b1 = m3_dot(dir, r + 3);
    double alo = fmin(a0, a1), ahi = fmax(a0, a1), blo = fmin(b0, b1), bhi = fmax(b0, b1);
    double lo = fmax(alo, blo), hi = fmin(ahi, bhi);
    if (lo > hi + snap * sqrt(len2)) return 0; /* the cuts miss each other along the line */
    double mid = 0.5 * (lo + hi), ps[3], pr[3];
    m3_axpy(ps, s, a1 != a0 ? clamp01((mid - a0) / (a1 - a0)) : 0.0, ds);
    m3_axpy(pr, r, b1 != b0 ? clamp01((mid - b0) / (b1 - b0)) : 0.0, dr);
    for (int c = 0; c < 3; c++) point[c] = 0.5 * (ps[c] + pr[c]);
    double rp = reach(dp), rq = reach(dq), cut = hi > lo ? (hi - lo) / sqrt(len2) : 0.0;
    *straddle = fmin(cut, fmin(rp, rq));
    return 1;
}

/* ---------------------------------------------------------------------------------------------
 * Distance: Ericson 2005, "Real-Time Collision Detection", section 5.1.
 * ------------------------------------------------------------------------------------------- */

/* Closest points of segments p1q1 and p2q2 (Ericson 2005, 5.1.9); returns the squared distance. */
static double segment_segment2(const double p1[3], const double q1[3], const double p2[3], const double q2[3],
                               double c1[3], double c2[3]) {
    double d1[3], d2[3], r[3], s, t;
    m3_sub(d1, q1, p1);
    m3_sub(d2, q2, p2);
    m3_sub(r, p1, p2);
    double a = m3_dot(d1, d1), e = m3_dot(d2, d2), f = m3_dot(d2, r);
    if (a == 0.0 && e == 0.0) {
        s = t = 0.0;
    } else if (a == 0.0) { /* first segment is a point */
        s = 0.0;
        t = clamp01(f / e);
    } else {
        double c = m3_dot(d1, r);
        if (e == 0.0) { /* second segment is a point */
            t = 0.0;
            s = clamp01(-c / a);
        } else {
            double b = m3_dot(d1, d2), denom = a * e - b * b;
            s = denom > 0.0 ? clamp01((b * f - c * e) / denom) : 0.0; /* parallel: any s, take 0 */
            t = (b * s + f) / e;
            if (t < 0.0) {
                t = 0.0;
                s = clamp01(-c / a);
            } else if (t > 1.0) {
                t = 1.0;
                s = clamp01((b - c) / a);
            }
        }
    }
    m3_axpy(c1, p1, s, d1);
    m3_axpy(c2, p2, t, d2);
    return m3_dist2(c1, c2);
}

/* Closest point of segment ab to p; returns the squared distance. */
static double point_segment2(const double p[3], const double a[3], const double b[3], double c[3]) {
    double ab[3], ap[3];
    m3_sub(ab, b, a);
    m3_sub(ap, p, a);
    double l2 = m3_dot(ab, ab);
    m3_axpy(c, a, l2 > 0.0 ? clamp01(m3_dot(ap, ab) / l2) : 0.0, ab);
    return m3_dist2(p, c);
}

/* Closest point of triangle T to q by Voronoi regions (Ericson 2005, 5.1.5); returns the squared
 * distance. A triangle without area falls back on its edges. */
double point_tri_closest2(const double q[3], const double T[9], double c[3]) {
    const double *a = T, *b = T + 3, *cc = T + 6;
    double ab[3], ac[3], ap[3], bp[3], cp[3];
    m3_sub(ab, b, a);
    m3_sub(ac, cc, a);
    m3_sub(ap, q, a);
    double d1 = m3_dot(ab, ap), d2 = m3_dot(ac, ap);
    if (d1 <= 0.0 && d2 <= 0.0) { m3_copy(c, a); return m3_dist2(q, c); } /* vertex a region */
    m3_sub(bp, q, b);
    double d3 = m3_dot(ab, bp), d4 = m3_dot(ac, bp);
    if (d3 >= 0.0 && d4 <= d3) { m3_copy(c, b); return m3_dist2(q, c); } /* vertex b region */
    double vc = d1 * d4 - d3 * d2;
    if (vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 && d1 - d3 > 0.0) { /* edge ab region */
        m3_axpy(c, a, d1 / (d1 - d3), ab);
        return m3_dist2(q, c);
    }
    m3_sub(cp, q, cc);
    double d5 = m3_dot(ab, cp), d6 = m3_dot(ac, cp);
    if (d6 >= 0.0 && d5 <= d6) { m3_copy(c, cc); return m3_dist2(q, c); } /* vertex c region */
    double vb = d5 * d2 - d1 * d6;
    if (vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 && d2 - d6 > 0.0) { /* edge ac region */
        m3_axpy(c, a, d2 / (d2 - d6), ac);
        return m3_dist2(q, c);
    }
    double va = d3 * d6 - d5 * d4;
    if (va <= 0.0 && d4 - d3 >= 0.0 && d5 - d6 >= 0.0 && (d4 - d3) + (d5 - d6) > 0.0) { /* edge bc region */
        double bc[3];
        m3_sub(bc, cc, b);
        m3_axpy(c, b, (d4 - d3) / ((d4 - d3) + (d5 - d6)), bc);
        return m3_dist2(q, c);
    }
    double denom = va + vb + vc;
    if (denom > 0.0) { /* face region */
        double v = vb / denom, w = vc / denom;
        for (int k = 0; k < 3; k++) c[k] = a[k] + ab[k] * v + ac[k] * w;
        return m3_dist2(q, c);
    }
    /* no area: the nearest of the three edges */
    double best = point_segment2(q, a, b, c), x[3], d;
    if ((d = point_segment2(q, b, cc, x)) < best) { best = d; m3_copy(c, x); }
    if ((d = point_segment2(q, cc, a, x)) < best) { best = d; m3_copy(c, x); }
    return best;
}

/* Does q project into triangle T (normal n, not normalised)? If so, the projection is written to
 * c and the squared distance returned; else -1. */
static double point_face2(const double q[3], const double T[9], const double n[3], double n2, double c[3]) {
    double e[3], r[3], x[3];
    for (int i = 0; i < 3; i++) {
        m3_sub(e, T + 3 * ((i + 1) % 3), T + 3 * i);
        m3_sub(r, q, T + 3 * i);
        m3_cross(x, e, r);
        if (m3_dot(x, n) < 0.0) return -1.0;
    }
    m3_sub(r, q, T);
    double h = m3_dot(r, n) / n2;
    m3_axpy(c, q, -h, n);
    return h * h * n2;
}

/* Squared distance between two triangles that do not intersect, with the closest points: the
 * nearest of the 9 edge pairs and the 6 corners that project into the other face (Ericson 2005,
 * 5.1.9; the closest pair of two disjoint triangles always lies on one of these features). For
 * intersecting triangles the value is an upper bound; call tri_tri_intersect first. */
double tri_tri_distance2(const double P[9], const double Q[9], double pp[3], double qq[3]) {
    double best = INFINITY, x[3], y[3], d;
    for (int i = 0; i < 3; i++) {
        const double *p0 = P + 3 * i, *p1 = P + 3 * ((i + 1) % 3);
        for (int j = 0; j < 3; j++) {
            d = segment_segment2(p0, p1, Q + 3 * j, Q + 3 * ((j + 1) % 3), x, y);
            if (d < best) { best = d; m3_copy(pp, x); m3_copy(qq, y); }
        }
    }
    double e1[3], e2[3], np[3], nq[3];
    m3_sub(e1, P + 3, P);
    m3_sub(e2, P + 6, P);
    m3_cross(np, e1, e2);
    m3_sub(e1, Q + 3, Q);
    m3_sub(e2, Q + 6, Q);
    m3_cross(nq, e1, e2);
    double np2 = m3_dot(np, np), nq2 = m3_dot(nq, nq);
    for (int i = 0; i < 3; i++) {
        if (nq2 > 0.0 && (d = point_face2(P + 3 * i, Q, nq, nq2, y)) >= 0.0 && d < best) {
            best = d; m3_copy(pp, P + 3 * i); m3_copy(qq, y);
        }
        if (np2 > 0.0 && (d = point_face2(Q + 3 * i, P, np, np2, x)) >= 0.0 && d < best) {
            best = d; m3_copy(pp, x); m3_copy(qq, Q + 3 * i);
        }
    }
    return best;
}

/* ---------------------------------------------------------------------------------------------
 * Solid angle of triangle abc seen from q, signed by the triangle's orientation: Van Oosterom
 * and Strackee 1983, tan(omega / 2) = a.(b x c) / (|a||b||c| + (a.b)|c| + (b.c)|a| + (c.a)|b|),
 * with a, b, c the corners relative to q. The winding number is the sum over 4 pi (Jacobson,
 * Kavan and Sorkine-Hornung 2013, "Robust inside-outside segmentation using generalized winding
 * numbers").
 * ------------------------------------------------------------------------------------------- */
double tri_solid_angle(const double q[3], const double a[3], const double b[3], const double c[3]) {
    double x[3], y[3], z[3], yz[3];
    m3_sub(x, a, q);
    m3_sub(y, b, q);
    m3_sub(z, c, q);
    double lx = sqrt(m3_dot(x, x)), ly = sqrt(m3_dot(y, y)), lz = sqrt(m3_dot(z, z));
    m3_cross(yz, y, z);
    double num = m3_dot(x, yz);
    double den = lx * ly * lz + m3_dot(x, y) * lz + m3_dot(y, z) * lx + m3_dot(z, x) * ly;
    return 2.0 * atan2(num, den);
}
