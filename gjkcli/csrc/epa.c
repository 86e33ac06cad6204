/* EPA: penetration depth of intersecting shapes (van den Bergen 2001, "Proximity queries and
 * penetration depth computation on 3D game objects").
 *
 * The depth is the distance from the origin to the boundary of A - B. A polytope P inside A - B
 * that holds the origin grows towards that boundary: its closest face gives a lower bound, the
 * support value of A - B along that face's normal an upper bound. P starts from GJK's final
 * simplex, blown up to a tetrahedron. When A - B has no interior (two flat parts in one plane)
 * the depth is 0 and the loop never starts. Every exit is named; the bounds always hold.
 */
#include <math.h>

#include "gjk.h"

static void support_md(const gjk_shape *A, const gjk_shape *B, const double d[3], const gjk_params *p,
                       gjk_ws *ws, gjk_vertex *out, int *steps_a, int *steps_b) {
    double nd[3] = {-d[0], -d[1], -d[2]};
    out->ia = gjk_support(A, d, 0, p, ws, out->a, steps_a);
    out->ib = gjk_support(B, nd, 0, p, ws, out->b, steps_b);
    v3_sub(out->w, out->a, out->b);
}

/* Distance from point q to the affine hull of the first n points (n = 1, 2 or 3). */
static double affine_distance(const gjk_vertex *pts, int n, const double q[3]) {
    double d[3];
    v3_sub(d, q, pts[0].w);
    if (n == 1) return sqrt(v3_dot(d, d));
    double e[3], c[3];
    v3_sub(e, pts[1].w, pts[0].w);
    if (n == 2) {
        v3_cross(c, d, e);
        double ee = v3_dot(e, e);
        return ee > 0.0 ? sqrt(v3_dot(c, c) / ee) : sqrt(v3_dot(d, d));
    }
    double f[3], nrm[3];
    v3_sub(f, pts[2].w, pts[0].w);
    v3_cross(nrm, e, f);
    double nn = v3_dot(nrm, nrm);
    return nn > 0.0 ? fabs(v3_dot(d, nrm)) / sqrt(nn) : sqrt(v3_dot(d, d));
}

/* Directions worth trying to leave the affine hull of n points: the axes for a point, four
 * perpendiculars for a segment, the two normals for a triangle. */
static int blowup_directions(const gjk_vertex *pts, int n, double dirs[6][3]) {
    if (n == 1) {
        for (int k = 0; k < 6; k++) {
            dirs[k][0] = dirs[k][1] = dirs[k][2] = 0.0;
            dirs[k][k / 2] = (k % 2) ? -1.0 : 1.0;
        }
        return 6;
    }
    double e[3];
    v3_sub(e, pts[1].w, pts[0].w);
    if (n == 2) {
        /* the axis least aligned with e gives a well-conditioned perpendicular */
        int axis = 0;
        for (int c = 1; c < 3; c++)
            if (fabs(e[c]) < fabs(e[axis])) axis = c;
        double ax[3] = {0.0, 0.0, 0.0}, u[3], u2[3];
        ax[axis] = 1.0;
        v3_cross(u, e, ax);
        v3_cross(u2, e, u);
        for (int c = 0; c < 3; c++) {
            dirs[0][c] = u[c]; dirs[1][c] = -u[c];
            dirs[2][c] = u2[c]; dirs[3][c] = -u2[c];
        }
        return 4;
    }
    double f[3], nrm[3];
    v3_sub(f, pts[2].w, pts[0].w);
    v3_cross(nrm, e, f);
    for (int c = 0; c < 3; c++) { dirs[0][c] = nrm[c]; dirs[1][c] = -nrm[c]; }
    return 2;
}

/* Face through vertices a, b, c (counter-clockwise seen from outside). Returns 0 when the face
 * has no normal at the working precision. */
static int make_face(epa_face *f, const gjk_vertex *verts, int a, int b, int c, double area_eps) {
    double e1[3], e2[3], n[3];
    v3_sub(e1, verts[b].w, verts[a].w);
    v3_sub(e2, verts[c].w, verts[a].w);
    v3_cross(n, e1, e2);
    double len = sqrt(v3_dot(n, n));
    f->v[0] = a; f->v[1] = b; f->v[2] = c;
    f->alive = 1;
    if (!(len > area_eps)) return 0;
    v3_scale(f->n, n, 1.0 / len);
    f->dist = v3_dot(f->n, verts[a].w);
    return 1;
}

/* Barycentric weights of q (on the plane of the triangle) over a, b, c, clamped to the triangle. */
static void face_weights(const gjk_vertex *verts, const epa_face *f, const double q[3], double lam[3]) {
    const double *a = verts[f->v[0]].w, *b = verts[f->v[1]].w, *c = verts[f->v[2]].w;
    int drop = 0;
    for (int k = 1; k < 3; k++)
        if (fabs(f->n[k]) > fabs(f->n[drop])) drop = k;
    int x = (drop + 1) % 3, y = (drop + 2) % 3;
    double mu = (b[x] - a[x]) * (c[y] - a[y]) - (c[x] - a[x]) * (b[y] - a[y]);
    double l0 = (b[x] - q[x]) * (c[y] - q[y]) - (c[x] - q[x]) * (b[y] - q[y]);
    double l1 = (c[x] - q[x]) * (a[y] - q[y]) - (a[x] - q[x]) * (c[y] - q[y]);
    double l2 = (a[x] - q[x]) * (b[y] - q[y]) - (b[x] - q[x]) * (a[y] - q[y]);
    lam[0] = l0 / mu; lam[1] = l1 / mu; lam[2] = l2 / mu;
    double sum = 0.0;
    for (int k = 0; k < 3; k++) { if (!(lam[k] > 0.0)) lam[k] = 0.0; sum += lam[k]; }
    if (sum > 0.0) for (int k = 0; k < 3; k++) lam[k] /= sum;
    else lam[0] = lam[1] = lam[2] = 1.0 / 3.0;
}

/* The face holding the edge b -> a, the other side of edge a -> b; -1 when there is none. */
static int twin(const epa_face *faces, int nf, int a, int b) {
    for (int j = 0; j < nf; j++)
        for (int g = 0; g < 3; g++)
            if (faces[j].v[g] == b && faces[j].v[(g + 1) % 3] == a) return j;
    return -1;
}

/* Does w lie outside the face's plane, or within `margin` of it? A face that w lies in the plane
 * of, up to rounding, must go: kept, it would meet the new face joined to w folded over itself. */
static int sees(const epa_face *f, const gjk_vertex *verts, const double w[3], double margin) {
    double rel[3];
    v3_sub(rel, w, verts[f->v[0]].w);
    return v3_dot(f->n, rel) > -margin;
}

static void trace_put_epa(gjk_trace *tr, int iter, const epa_face *f, const gjk_vertex *w, int steps_a,
                          int steps_b, double support, double lo, double hi, int faces, int exit) {
    if (tr == 0 || tr->buf == 0 || tr->n >= tr->cap) return;
    double *rec = tr->buf + (size_t)tr->n * TR_WIDTH;
    for (int k = 0; k < TR_WIDTH; k++) rec[k] = 0.0;
    rec[TR_PHASE] = 1;
    rec[TR_ITER] = iter;
    for (int c = 0; c < 3; c++) {
        rec[TR_DIR + c] = f->n[c];
        rec[TR_W + c] = w->w[c];
        rec[TR_A + c] = w->a[c];
        rec[TR_B + c] = w->b[c];
    }
    rec[TR_IA] = w->ia;
    rec[TR_IB] = w->ib;
    rec[TR_STEPS_A] = steps_a;
    rec[TR_STEPS_B] = steps_b;
    rec[TR_VNORM] = f->dist;
    rec[TR_LOWER] = lo;
    rec[TR_UPPER] = hi;
    rec[TR_FACES] = faces;
    rec[TR_SUPPORT] = support;
    rec[TR_EXIT] = exit;
    tr->n++;
}

/* Witness points and normal from face f: the origin's projection on the face, q = dist n. */
static void face_answer(const gjk_vertex *verts, const epa_face *f, double normal[3], double pa[3],
                        double pb[3]) {
    double q[3], lam[3];
    v3_scale(q, f->n, f->dist);
    face_weights(verts, f, q, lam);
    for (int c = 0; c < 3; c++) {
        normal[c] = f->n[c];
        pa[c] = pb[c] = 0.0;
        for (int k = 0; k < 3; k++) {
            pa[c] += lam[k] * verts[f->v[k]].a[c];
            pb[c] += lam[k] * verts[f->v[k]].b[c];
        }
    }
}

int gjk_epa(const gjk_shape *A, const gjk_shape *B, const gjk_simplex *start, const gjk_params *p,
            gjk_ws *ws, gjk_trace *tr, double *depth_lo, double *depth_hi, double normal[3],
            double pa[3], double pb[3], int *iterations) {
    double size = gjk_pair_size(A, B);
    double eps = p->epa_rel * size;              /* bounds closer than this have met */
    double flat = p->epa_rel * size;             /* A - B thinner than this has no interior */
    double area_eps = p->degenerate_rel * size * size;
    gjk_vertex *verts = ws->verts;
    epa_face *faces = ws->faces;
    int nv = start->n, nf = 0;
    int steps_a, steps_b;
    *iterations = 0;
    *depth_lo = 0.0;
    *depth_hi = INFINITY;
    for (int k = 0; k < nv; k++) verts[k] = start->p[k];
    /* GJK's witnesses until EPA has better ones: the origin's point on the simplex */
    for (int c = 0; c < 3; c++) {
        pa[c] = pb[c] = 0.0;
        for (int k = 0; k < start->n; k++) {
            pa[c] += start->lambda[k] * start->p[k].a[c];
            pb[c] += start->lambda[k] * start->p[k].b[c];
        }
    }
    normal[0] = 1.0; normal[1] = normal[2] = 0.0;

    /* Blow GJK's simplex up to a tetrahedron: from each affine hull, step out along the
     * direction whose support point lies furthest from it. None far enough: no interior. */
    while (nv < 4) {
        double dirs[6][3];
        int nd = blowup_directions(verts, nv, dirs);
        gjk_vertex best;
        double best_dist = -1.0;
        for (int k = 0; k < nd; k++) {
            gjk_vertex w;
            support_md(A, B, dirs[k], p, ws, &w, &steps_a, &steps_b);
            double dist = affine_distance(verts, nv, w.w);
            if (dist > best_dist) { best_dist = dist; best = w; }
        }
        if (!(best_dist > flat)) {
            if (nv == 2) { /* A - B is a segment: any normal to it separates by the depth, 0 */
                double len = sqrt(v3_dot(dirs[0], dirs[0]));
                if (len > 0.0) v3_scale(normal, dirs[0], 1.0 / len);
            }
            if (nv == 3) { /* the triangle's normal is the contact normal of flat parts */
                double e1[3], e2[3], n[3];
                v3_sub(e1, verts[1].w, verts[0].w);
                v3_sub(e2, verts[2].w, verts[0].w);
                v3_cross(n, e1, e2);
                double len = sqrt(v3_dot(n, n));
                if (len > 0.0) v3_scale(normal, n, 1.0 / len);
            }
            *depth_hi = 0.0;
            return EPA_EXIT_FLAT;
        }
        verts[nv++] = best;
    }

    /* Tetrahedron faces, wound so that each normal points away from the centroid. */
    static const int tet[4][3] = {{0, 1, 2}, {0, 3, 1}, {0, 2, 3}, {1, 3, 2}};
    double centroid[3] = {0.0, 0.0, 0.0};
    for (int k = 0; k < 4; k++)
        for (int c = 0; c < 3; c++) centroid[c] += 0.25 * verts[k].w[c];
    for (int k = 0; k < 4; k++) {
        int a = tet[k][0], b = tet[k][1], c = tet[k][2];
        double e1[3], e2[3], n[3], to_c[3];
        v3_sub(e1, verts[b].w, verts[a].w);
        v3_sub(e2, verts[c].w, verts[a].w);
        v3_cross(n, e1, e2);
        v3_sub(to_c, centroid, verts[a].w);
        if (v3_dot(n, to_c) > 0.0) { int tmp = b; b = c; c = tmp; }
        if (!make_face(&faces[nf++], verts, a, b, c, area_eps)) return EPA_EXIT_DEGENERATE;
    }

    int exit = EPA_EXIT_ITERATION_CAP;
    int best = 0;
    for (int it = 0; it < p->max_epa; it++) {
        best = 0;
        for (int k = 1; k < nf; k++)
            if (faces[k].dist < faces[best].dist) best = k;
        epa_face f = faces[best];
        double lo = f.dist > 0.0 ? f.dist : 0.0;
        *depth_lo = lo;
        gjk_vertex w;
        support_md(A, B, f.n, p, ws, &w, &steps_a, &steps_b);
        double sup = v3_dot(f.n, w.w);
        if (sup < *depth_hi) *depth_hi = sup;
        *iterations = it + 1;
        int stop = GJK_EXIT_NONE;
        if (sup - f.dist <= eps || *depth_hi - lo <= eps) stop = EPA_EXIT_CONVERGED;
        else if (nv >= ws->cap_verts) stop = EPA_EXIT_CAPACITY;
        if (stop) {
            trace_put_epa(tr, it, &f, &w, steps_a, steps_b, sup, lo, *depth_hi, nf, stop);
            exit = stop;
            break;
        }

        /* Remove the faces that see w, grown from the best face across shared edges (the
         * silhouette walk of van den Bergen 2001): a face that sees w only by rounding, out of
         * touch with the best one, must stay, or the new faces would not close the polytope.
         * Faces within eps of w count as seeing it: the polytope stays convex to within eps, the
         * accuracy asked of the depth. The edges between removed and kept faces (the horizon)
         * are joined to w. */
        int wi = nv;
        verts[nv++] = w;
        int ne = 0, top = 0;
        faces[best].alive = 0;
        ws->stack[top++] = best;
        while (top > 0) {
            int k = ws->stack[--top];
            for (int e = 0; e < 3; e++) {
                int j = twin(faces, nf, faces[k].v[e], faces[k].v[(e + 1) % 3]);
                if (j >= 0 && faces[j].alive && sees(&faces[j], verts, w.w, eps)) {
                    faces[j].alive = 0;
                    ws->stack[top++] = j;
                }
            }
        }
        for (int k = 0; k < nf; k++) {
            if (faces[k].alive) continue;
            for (int e = 0; e < 3; e++) {
                int a = faces[k].v[e], b = faces[k].v[(e + 1) % 3];
                int j = twin(faces, nf, a, b);
                if (j < 0 || faces[j].alive) {
                    ws->edges[2 * ne] = a;
                    ws->edges[2 * ne + 1] = b;
                    ne++;
                }
            }
        }
        int kept = 0;
        for (int k = 0; k < nf; k++)
            if (faces[k].alive) faces[kept++] = faces[k];
        nf = kept;
        if (ne < 3) {
            stop = EPA_EXIT_DEGENERATE; /* no horizon left to close the polytope with */
        } else if (nf + ne > ws->cap_faces) {
            stop = EPA_EXIT_CAPACITY;
        } else {
            for (int e = 0; e < ne && !stop; e++)
                if (!make_face(&faces[nf++], verts, ws->edges[2 * e], ws->edges[2 * e + 1], wi, area_eps))
                    stop = EPA_EXIT_DEGENERATE;
        }
        trace_put_epa(tr, it, &f, &w, steps_a, steps_b, sup, lo, *depth_hi, nf, stop);
        if (stop) {
            /* the polytope is unusable past here; f is still the best face it had */
            face_answer(verts, &f, normal, pa, pb);
            return stop;
        }
    }
    if (exit == EPA_EXIT_ITERATION_CAP) { /* the faces changed since best was chosen */
        best = 0;
        for (int k = 1; k < nf; k++)
            if (faces[k].dist < faces[best].dist) best = k;
        *depth_lo = faces[best].dist > 0.0 ? faces[best].dist : 0.0;
    }
    face_answer(verts, &faces[best], normal, pa, pb);
    return exit;
}
