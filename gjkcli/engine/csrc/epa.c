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
#include <stdlib.h>

#include "gjk.h"

/* Support of A - B in direction d. The climbs start from the polytope's vertices nearest in
 * kind: of the `nnear` points given (the vertices of the face being expanded), the one whose own
 * support point lies highest along d, per shape (coal's support hint; a cold climb from vertex 0
 * crosses the hull every time). */
static void support_md(const gjk_shape *A, const gjk_shape *B, const double d[3], const gjk_params *p,
                       gjk_ws *ws, const gjk_vertex *const *near, int nnear, gjk_vertex *out,
                       int *steps_a, int *steps_b) {
    double nd[3] = {-d[0], -d[1], -d[2]};
    int hint_a = -1, hint_b = -1;
    double top_a = -INFINITY, top_b = -INFINITY;
    for (int k = 0; k < nnear; k++) {
        double da = v3_dot(near[k]->a, d), db = -v3_dot(near[k]->b, d);
        if (near[k]->ia >= 0 && da > top_a) { top_a = da; hint_a = near[k]->ia; }
        if (near[k]->ib >= 0 && db > top_b) { top_b = db; hint_b = near[k]->ib; }
    }
    out->ia = gjk_support(A, d, hint_a, p, ws, out->a, steps_a);
    out->ib = gjk_support(B, nd, hint_b, p, ws, out->b, steps_b);
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

/* The face across edge e of face k. While every directed edge of the polytope is held by one
 * face only (a 2-manifold, which the tetrahedron is and which a simple horizon loop keeps), the
 * stored adjacency answers in O(1) and equals twin(); once a horizon pinches (a vertex starts
 * two horizon edges) the run falls back to twin()'s scan, first match in face order. */
static int across(const epa_face *faces, int nf, int k, int e, int manifold) {
#ifdef GJK_CHECK_ADJ
    if (manifold && faces[k].adj[e] != twin(faces, nf, faces[k].v[e], faces[k].v[(e + 1) % 3])) abort();
#endif
    if (manifold) return faces[k].adj[e];
    return twin(faces, nf, faces[k].v[e], faces[k].v[(e + 1) % 3]);
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
            const gjk_vertex *near[3] = {&verts[0], &verts[nv > 1], &verts[nv - 1]};
            support_md(A, B, dirs[k], p, ws, near, nv < 3 ? nv : 3, &w, &steps_a, &steps_b);
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
    for (int k = 0; k < 4; k++)
        for (int e = 0; e < 3; e++) faces[k].adj[e] = twin(faces, 4, faces[k].v[e], faces[k].v[(e + 1) % 3]);
    int manifold = 1;

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
        const gjk_vertex *near[3] = {&verts[f.v[0]], &verts[f.v[1]], &verts[f.v[2]]};
        support_md(A, B, f.n, p, ws, near, 3, &w, &steps_a, &steps_b);
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
                int j = across(faces, nf, k, e, manifold);
                if (j >= 0 && faces[j].alive && sees(&faces[j], verts, w.w, eps)) {
                    faces[j].alive = 0;
                    ws->stack[top++] = j;
                }
            }
        }
        /* Horizon edges in face order (the order of the new faces, and so of ties between them):
         * a, b, the kept face j across them and the slot of that edge in j. */
        for (int k = 0; k < nf; k++) {
            if (faces[k].alive) continue;
            for (int e = 0; e < 3; e++) {
                int j = across(faces, nf, k, e, manifold);
                if (j < 0 || faces[j].alive) {
                    int32_t *h = ws->edges + 4 * (size_t)ne++;
                    h[0] = faces[k].v[e];
                    h[1] = faces[k].v[(e + 1) % 3];
                    h[2] = j;
                    h[3] = -1;
                    if (manifold && j >= 0)
                        for (int g = 0; g < 3; g++)
                            if (faces[j].adj[g] == k) h[3] = g;
                }
            }
        }
        /* Keep the live faces in order, mapping old indices to new ones for the adjacency. */
        int32_t *remap = ws->stack;
        int kept = 0;
        for (int k = 0; k < nf; k++) {
            remap[k] = faces[k].alive ? kept : -1;
            if (faces[k].alive) faces[kept++] = faces[k];
        }
        nf = kept;
        if (manifold) {
            for (int k = 0; k < nf; k++)
                for (int e = 0; e < 3; e++)
                    if (faces[k].adj[e] >= 0) faces[k].adj[e] = remap[faces[k].adj[e]];
            for (int e = 0; e < ne; e++)
                if (ws->edges[4 * e + 2] >= 0) ws->edges[4 * e + 2] = remap[ws->edges[4 * e + 2]];
        }
        if (ne < 3) {
            stop = EPA_EXIT_DEGENERATE; /* no horizon left to close the polytope with */
        } else if (nf + ne > ws->cap_faces) {
            stop = EPA_EXIT_CAPACITY;
        } else {
            for (int e = 0; e < ne && !stop; e++)
                if (!make_face(&faces[nf++], verts, ws->edges[4 * e], ws->edges[4 * e + 1], wi, area_eps))
                    stop = EPA_EXIT_DEGENERATE;
        }
        if (!stop && manifold) {
            /* New face e = (a, b, w): across a -> b the kept face j; across b -> w the new face
             * whose horizon edge starts at b; across w -> a the one whose horizon edge ends at a.
             * A vertex that starts or ends two horizon edges pinches the polytope: from then on
             * twin() answers. */
            int base = nf - ne;
            int32_t *from = ws->vlink, *to = ws->vlink + ws->cap_verts;
            for (int e = 0; e < ne; e++) {
                int a = ws->edges[4 * e], b = ws->edges[4 * e + 1];
                if (from[a] >= 0 || to[b] >= 0) manifold = 0;
                from[a] = e;
                to[b] = e;
            }
            for (int e = 0; e < ne && manifold; e++) {
                const int32_t *h = ws->edges + 4 * e;
                epa_face *g = &faces[base + e];
                g->adj[0] = h[2];
                g->adj[1] = from[h[1]] >= 0 ? base + from[h[1]] : -1;
                g->adj[2] = to[h[0]] >= 0 ? base + to[h[0]] : -1;
                if (h[2] >= 0 && h[3] < 0) manifold = 0; /* j does not hold the edge back */
                else if (h[2] >= 0) faces[h[2]].adj[h[3]] = base + e;
            }
            for (int e = 0; e < ne; e++) from[ws->edges[4 * e]] = to[ws->edges[4 * e + 1]] = -1;
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
