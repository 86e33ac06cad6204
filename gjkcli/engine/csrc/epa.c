/* EPA: penetration depth of intersecting shapes (van den Bergen 2001, "Proximity queries and
 * penetration depth computation on 3D game objects"; van den Bergen 2003, chapter 4).
 *
 * The depth is the distance from the origin to the boundary of A - B. A polytope P inside A - B
 * that holds the origin grows towards that boundary: its closest face gives a lower bound, the
 * support value of A - B along that face's normal an upper bound. P starts from GJK's final
 * simplex, blown up to a tetrahedron. When A - B has no interior (two flat parts in one plane)
 * the depth is 0 and the loop never starts. Every exit is named; the bounds always hold.
 *
 * gjk_epa reads as its steps: start_answer, blow_up, build_tetrahedron, then per iteration
 * closest_face, the support point in its normal, add_point (remove_visible, collect_horizon,
 * compact_faces, close_horizon, link_new_faces), and finish.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gjk.h"
#include "mesh.h" /* point_tri_closest2 (tri.c) */

/* The polytope EPA grows inside A - B, and the run's query and tolerances. */
typedef struct {
    const gjk_pair *q;
    gjk_ws *ws;      /* q->ws, which holds the storage below and the walk's scratch */
    gjk_vertex *verts;
    epa_face *faces;
    int nv, nf;
    int manifold;    /* every directed edge is held by one face: the stored adjacency holds */
    double eps;      /* bounds closer than this have met; a face within it of w sees w */
    double flat;     /* A - B thinner than this has no interior */
    double area_eps; /* a face whose doubled area is below this has no normal */
} epa_polytope;

/* Support of A - B in direction d. The climbs start from the polytope's vertices nearest in
 * kind: of the `nnear` points given (the vertices of the face being expanded), the one whose own
 * support point lies highest along d, per shape (coal's support hint; a cold climb from vertex 0
 * crosses the hull every time). */
static void support_md(const epa_polytope *P, const double d[3], const gjk_vertex *const *near,
                       int nnear, gjk_vertex *out, int *steps_a, int *steps_b) {
    double nd[3] = {-d[0], -d[1], -d[2]};
    int hint_a = -1, hint_b = -1;
    double top_a = -INFINITY, top_b = -INFINITY;
    for (int k = 0; k < nnear; k++) {
        double da = v3_dot(near[k]->a, d), db = -v3_dot(near[k]->b, d);
        if (near[k]->ia >= 0 && da > top_a) { top_a = da; hint_a = near[k]->ia; }
        if (near[k]->ib >= 0 && db > top_b) { top_b = db; hint_b = near[k]->ib; }
    }
    out->ia = gjk_support(P->q->A, d, hint_a, P->q->p, P->ws, out->a, steps_a);
    out->ib = gjk_support(P->q->B, nd, hint_b, P->q->p, P->ws, out->b, steps_b);
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

/* Barycentric weights of q (on the plane of the triangle) over a, b, c, clamped to the triangle.
 * Computed as area ratios on the coordinate plane where the triangle's shadow is largest, which
 * keeps them well conditioned for any orientation (Ericson 2005, section 3.4). */
static int face_weights(const gjk_vertex *verts, const epa_face *f, const double q[3], double lam[3]) {
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
    int outside = !(lam[0] >= 0.0 && lam[1] >= 0.0 && lam[2] >= 0.0);
    double sum = 0.0;
    for (int k = 0; k < 3; k++) { if (!(lam[k] > 0.0)) lam[k] = 0.0; sum += lam[k]; }
    if (sum > 0.0) for (int k = 0; k < 3; k++) lam[k] /= sum;
    else lam[0] = lam[1] = lam[2] = 1.0 / 3.0;
    return outside; /* the weights were clamped: q lies off the triangle */
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

/* One trace record per EPA iteration (fields: enum gjk_trace_field in gjk.h). */
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

/* Witness points and normal from face f: pa - pb the point q = at n, the origin's projection
 * on the face when at is its distance. Where q lies off f (a flat stretch of A - B split into
 * triangles of one plane, as two boxes' faces make: their distances tie, and the one chosen
 * need not hold q), or is not on its plane (an earlier face's normal, answered at the depth),
 * the witnesses come from the polytope's face nearest q (`point_tri_closest2`), so that pa - pb
 * is q, or the nearest point of the polytope to it, and not a point of f a plane's width away;
 * the normal stays f's. */
static void face_answer(const epa_polytope *P, const epa_face *f, double at, double normal[3],
                        double pa[3], double pb[3]) {
    const gjk_vertex *verts = P->verts;
    double q[3], lam[3];
    v3_scale(q, f->n, at);
    const epa_face *from = f;
    if (face_weights(verts, f, q, lam) || at != f->dist) {
        double best = INFINITY, near[3] = {q[0], q[1], q[2]}, T[9], c[3];
        for (int j = -1; j < P->nf; j++) {
            const epa_face *g = j < 0 ? f : &P->faces[j];
            if (j >= 0 && !g->alive) continue;
            for (int k = 0; k < 3; k++) memcpy(T + 3 * k, verts[g->v[k]].w, 3 * sizeof(double));
            double d2 = point_tri_closest2(q, T, c);
            if (d2 < best) {
                best = d2;
                from = g;
                memcpy(near, c, sizeof(near));
            }
        }
        face_weights(verts, from, near, lam); /* the nearest point's weights on its face */
    }
    for (int c = 0; c < 3; c++) {
        normal[c] = f->n[c];
        pa[c] = pb[c] = 0.0;
        for (int k = 0; k < 3; k++) {
            pa[c] += lam[k] * verts[from->v[k]].a[c];
            pb[c] += lam[k] * verts[from->v[k]].b[c];
        }
    }
}

/* Step 1: the answer before EPA has one, so that every early exit leaves a usable result: GJK's
 * witnesses (the origin's point on its simplex) and an arbitrary unit normal. */
static void start_answer(const gjk_simplex *start, double normal[3], double pa[3], double pb[3]) {
    for (int c = 0; c < 3; c++) {
        pa[c] = pb[c] = 0.0;
        for (int k = 0; k < start->n; k++) {
            pa[c] += start->lambda[k] * start->p[k].a[c];
            pb[c] += start->lambda[k] * start->p[k].b[c];
        }
    }
    normal[0] = 1.0; normal[1] = normal[2] = 0.0;
}

/* The contact normal of a flat A - B (depth 0): for a segment any normal to it (dir0, the first
 * direction tried), for a triangle its plane's normal; a point keeps the arbitrary one. */
static void flat_normal(const gjk_vertex *verts, int nv, const double dir0[3], double normal[3]) {
    if (nv == 2) {
        double len = sqrt(v3_dot(dir0, dir0));
        if (len > 0.0) v3_scale(normal, dir0, 1.0 / len);
    }
    if (nv == 3) {
        double e1[3], e2[3], n[3];
        v3_sub(e1, verts[1].w, verts[0].w);
        v3_sub(e2, verts[2].w, verts[0].w);
        v3_cross(n, e1, e2);
        double len = sqrt(v3_dot(n, n));
        if (len > 0.0) v3_scale(normal, n, 1.0 / len);
    }
}

/* Step 2a: GJK's simplex may hold a point that adds no dimension EPA can work with: two support
 * points of a curved or flat boundary a rounding apart, or a fourth point all but in the plane of
 * the other three (the origin then lies on the boundary of A - B: touching). Each face of the
 * tetrahedron needs an area above area_eps; a point further than sqrt(area_eps) from the affine
 * hull of the points kept before it gives every face that holds it such an area. Keep those
 * points only; blow_up then steps out from the rest along the directions that reach furthest. */
static void prune_start(epa_polytope *P) {
    double reach = sqrt(P->area_eps);
    int kept = 1;
    for (int k = 1; k < P->nv; k++)
        if (affine_distance(P->verts, kept, P->verts[k].w) > reach) P->verts[kept++] = P->verts[k];
    P->nv = kept;
}

/* Step 2b: blow GJK's simplex up to a tetrahedron, since EPA needs a polytope with interior: from
 * each affine hull, step out along the direction whose support point lies furthest from it.
 * When none gets further than `flat`, A - B has no interior: EPA_EXIT_FLAT, with the flat pair's
 * contact normal. */
static int blow_up(epa_polytope *P, double normal[3]) {
    while (P->nv < 4) {
        double dirs[6][3];
        int nd = blowup_directions(P->verts, P->nv, dirs);
        gjk_vertex best;
        double best_dist = -1.0;
        for (int k = 0; k < nd; k++) {
            gjk_vertex w;
            int steps_a, steps_b;
            const gjk_vertex *near[3] = {&P->verts[0], &P->verts[P->nv > 1], &P->verts[P->nv - 1]};
            support_md(P, dirs[k], near, P->nv < 3 ? P->nv : 3, &w, &steps_a, &steps_b);
            double dist = affine_distance(P->verts, P->nv, w.w);
            if (dist > best_dist) { best_dist = dist; best = w; }
        }
        if (!(best_dist > P->flat)) {
            flat_normal(P->verts, P->nv, dirs[0], normal);
            return EPA_EXIT_FLAT;
        }
        P->verts[P->nv++] = best;
    }
    return GJK_EXIT_NONE;
}

/* Step 3: the tetrahedron's four faces, each wound so that its normal points away from the
 * centroid (outwards: the face distances are then signed right), and their adjacency. A face
 * without a normal: EPA_EXIT_DEGENERATE. */
static int build_tetrahedron(epa_polytope *P) {
    static const int tet[4][3] = {{0, 1, 2}, {0, 3, 1}, {0, 2, 3}, {1, 3, 2}};
    const gjk_vertex *verts = P->verts;
    double centroid[3] = {0.0, 0.0, 0.0};
    for (int k = 0; k < 4; k++)
        for (int c = 0; c < 3; c++) centroid[c] += 0.25 * verts[k].w[c];
    P->nf = 0;
    for (int k = 0; k < 4; k++) {
        int a = tet[k][0], b = tet[k][1], c = tet[k][2];
        double e1[3], e2[3], n[3], to_c[3];
        v3_sub(e1, verts[b].w, verts[a].w);
        v3_sub(e2, verts[c].w, verts[a].w);
        v3_cross(n, e1, e2);
        v3_sub(to_c, centroid, verts[a].w);
        if (v3_dot(n, to_c) > 0.0) { int tmp = b; b = c; c = tmp; }
        if (!make_face(&P->faces[P->nf++], verts, a, b, c, P->area_eps)) return EPA_EXIT_DEGENERATE;
    }
    for (int k = 0; k < 4; k++)
        for (int e = 0; e < 3; e++)
            P->faces[k].adj[e] = twin(P->faces, 4, P->faces[k].v[e], P->faces[k].v[(e + 1) % 3]);
    P->manifold = 1;
    return GJK_EXIT_NONE;
}

/* Step 4: the face nearest the origin (the first of equals): its distance is the depth's lower
 * bound, and its normal the direction in which to look for the boundary of A - B. */
static int closest_face(const epa_polytope *P) {
    int best = 0;
    for (int k = 1; k < P->nf; k++)
        if (P->faces[k].dist < P->faces[best].dist) best = k;
    return best;
}

/* Step 5a, the silhouette walk (van den Bergen 2001): remove the faces that see w, grown from
 * the best face across shared edges. A face that sees w only by rounding, out of touch with the
 * best one, must stay, or the new faces would not close the polytope. Faces within eps of w
 * count as seeing it: the polytope stays convex to within eps, the accuracy asked of the depth. */
static void remove_visible(epa_polytope *P, int best, const double w[3]) {
    epa_face *faces = P->faces;
    int32_t *stack = P->ws->stack;
    int top = 0;
    faces[best].alive = 0;
    stack[top++] = best;
    while (top > 0) {
        int k = stack[--top];
        for (int e = 0; e < 3; e++) {
            int j = across(faces, P->nf, k, e, P->manifold);
            if (j >= 0 && faces[j].alive && sees(&faces[j], P->verts, w, P->eps)) {
                faces[j].alive = 0;
                stack[top++] = j;
            }
        }
    }
}

/* Step 5b: the horizon, the edges between removed and kept faces, which the new faces join to
 * w. In face order (the order of the new faces, and so of ties between them), into ws->edges as
 * a, b, the kept face j across them and the slot of that edge in j (-1 when j does not hold it
 * back). Returns their count. */
static int collect_horizon(const epa_polytope *P) {
    const epa_face *faces = P->faces;
    int ne = 0;
    for (int k = 0; k < P->nf; k++) {
        if (faces[k].alive) continue;
        for (int e = 0; e < 3; e++) {
            int j = across(faces, P->nf, k, e, P->manifold);
            if (j < 0 || faces[j].alive) {
                int32_t *h = P->ws->edges + 4 * (size_t)ne++;
                h[0] = faces[k].v[e];
                h[1] = faces[k].v[(e + 1) % 3];
                h[2] = j;
                h[3] = -1;
                if (P->manifold && j >= 0)
                    for (int g = 0; g < 3; g++)
                        if (faces[j].adj[g] == k) h[3] = g;
            }
        }
    }
    return ne;
}

/* Step 5c: keep the live faces in order, and map old indices to new ones (in ws->stack, free
 * again after the walk) so that the stored adjacency and the horizon's kept faces still point
 * at the right faces. */
static void compact_faces(epa_polytope *P, int ne) {
    epa_face *faces = P->faces;
    int32_t *remap = P->ws->stack, *edges = P->ws->edges;
    int kept = 0;
    for (int k = 0; k < P->nf; k++) {
        remap[k] = faces[k].alive ? kept : -1;
        if (faces[k].alive) faces[kept++] = faces[k];
    }
    P->nf = kept;
    if (P->manifold) {
        for (int k = 0; k < P->nf; k++)
            for (int e = 0; e < 3; e++)
                if (faces[k].adj[e] >= 0) faces[k].adj[e] = remap[faces[k].adj[e]];
        for (int e = 0; e < ne; e++)
            if (edges[4 * e + 2] >= 0) edges[4 * e + 2] = remap[edges[4 * e + 2]];
    }
}

/* Step 5d: close the polytope again with a face (a, b, w) on each horizon edge a -> b. Fewer
 * than three edges cannot close it (EPA_EXIT_DEGENERATE), nor can full storage
 * (EPA_EXIT_CAPACITY) or a new face without a normal (EPA_EXIT_DEGENERATE). */
static int close_horizon(epa_polytope *P, int ne, int wi) {
    const int32_t *edges = P->ws->edges;
    if (ne < 3) return EPA_EXIT_DEGENERATE;
    if (P->nf + ne > P->ws->cap_faces) return EPA_EXIT_CAPACITY;
    for (int e = 0; e < ne; e++)
        if (!make_face(&P->faces[P->nf++], P->verts, edges[4 * e], edges[4 * e + 1], wi, P->area_eps))
            return EPA_EXIT_DEGENERATE;
    return GJK_EXIT_NONE;
}

/* Step 5e: the new faces' adjacency, so that the next walk steps across edges in O(1). New face
 * e = (a, b, w): across a -> b the kept face j; across b -> w the new face whose horizon edge
 * starts at b; across w -> a the one whose horizon edge ends at a. A vertex that starts or ends
 * two horizon edges pinches the polytope, as does a kept face that does not hold its edge back:
 * from then on twin() answers (manifold = 0). */
static void link_new_faces(epa_polytope *P, int ne) {
    epa_face *faces = P->faces;
    const int32_t *edges = P->ws->edges;
    int base = P->nf - ne;
    int32_t *from = P->ws->vlink, *to = P->ws->vlink + P->ws->cap_verts;
    for (int e = 0; e < ne; e++) {
        int a = edges[4 * e], b = edges[4 * e + 1];
        if (from[a] >= 0 || to[b] >= 0) P->manifold = 0;
        from[a] = e;
        to[b] = e;
    }
    for (int e = 0; e < ne && P->manifold; e++) {
        const int32_t *h = edges + 4 * e;
        epa_face *g = &faces[base + e];
        g->adj[0] = h[2];
        g->adj[1] = from[h[1]] >= 0 ? base + from[h[1]] : -1;
        g->adj[2] = to[h[0]] >= 0 ? base + to[h[0]] : -1;
        if (h[2] >= 0 && h[3] < 0) P->manifold = 0; /* j does not hold the edge back */
        else if (h[2] >= 0) faces[h[2]].adj[h[3]] = base + e;
    }
    for (int e = 0; e < ne; e++) from[edges[4 * e]] = to[edges[4 * e + 1]] = -1;
}

/* Step 5: add the support point w, found beyond the best face, to the polytope. Returns
 * GJK_EXIT_NONE, or the exit after which the polytope is unusable. */
static int add_point(epa_polytope *P, int best, const gjk_vertex *w) {
    int wi = P->nv;
    P->verts[P->nv++] = *w;
    remove_visible(P, best, w->w);
    int ne = collect_horizon(P);
    compact_faces(P, ne);
    int stop = close_horizon(P, ne, wi);
    if (!stop && P->manifold) link_new_faces(P, ne);
    return stop;
}

/* Step 6: the answer from the best face, where the origin projects on it. After the iteration
 * cap the faces changed since `best` was chosen: choose again, and the lower bound with it. */
static void finish(const epa_polytope *P, int exit, int best, gjk_depth *out) {
    if (exit == EPA_EXIT_ITERATION_CAP) {
        best = closest_face(P);
        out->lo = P->faces[best].dist > 0.0 ? P->faces[best].dist : 0.0;
    }
    face_answer(P, &P->faces[best], P->faces[best].dist, out->normal, out->pa, out->pb);
}

/* The steps above in order. Every exit leaves out->lo <= depth <= out->hi and a usable contact. */
int gjk_epa(const gjk_pair *q, const gjk_simplex *start, gjk_depth *out) {
    const gjk_params *p = q->p;
    double size = gjk_pair_size(q->A, q->B);
    epa_polytope P;
    P.q = q;
    P.ws = q->ws;
    P.verts = q->ws->verts;
    P.faces = q->ws->faces;
    P.nv = start->n;
    P.nf = 0;
    P.manifold = 1;
    P.eps = p->epa_rel * size;
    P.flat = p->epa_rel * size;
    P.area_eps = p->degenerate_rel * size * size;
    for (int k = 0; k < P.nv; k++) P.verts[k] = start->p[k];
    out->iterations = 0;
    out->lo = 0.0;
    out->hi = INFINITY;
    start_answer(start, out->normal, out->pa, out->pb);
    prune_start(&P);
    if (blow_up(&P, out->normal)) {
        out->hi = 0.0;
        return EPA_EXIT_FLAT;
    }
    if (build_tetrahedron(&P)) return EPA_EXIT_DEGENERATE;

    int exit = EPA_EXIT_ITERATION_CAP;
    int best = 0;
    epa_face hi_face; /* the face whose normal gave out->hi: the least overlap found so far */
    int hi_set = 0;
    for (int it = 0; it < p->max_epa; it++) {
        best = closest_face(&P);
        epa_face f = P.faces[best]; /* a copy: add_point reorders the faces */
        double lo = f.dist > 0.0 ? f.dist : 0.0;
        out->lo = lo;
        /* No point of A - B lies beyond its support plane in f's normal: an upper bound. */
        gjk_vertex w;
        int steps_a, steps_b;
        const gjk_vertex *near[3] = {&P.verts[f.v[0]], &P.verts[f.v[1]], &P.verts[f.v[2]]};
        support_md(&P, f.n, near, 3, &w, &steps_a, &steps_b);
        double sup = v3_dot(f.n, w.w);
        if (sup < out->hi) {
            out->hi = sup;
            hi_face = f;
            hi_set = 1;
        }
        out->iterations = it + 1;
        int stop = GJK_EXIT_NONE;
        if (sup - f.dist <= P.eps || out->hi - lo <= P.eps) stop = EPA_EXIT_CONVERGED;
        else if (P.nv >= P.ws->cap_verts) stop = EPA_EXIT_CAPACITY;
        if (stop) {
            trace_put_epa(q->tr, it, &f, &w, steps_a, steps_b, sup, lo, out->hi, P.nf, stop);
            exit = stop;
            if (sup > out->hi) {
                /* Met on the bounds, not on this face (a curved boundary: the closest face moves
                 * on while an earlier one's normal already realised the depth): moving B along
                 * this face's normal separates the pair only after sup, more than the depth;
                 * along the earlier face's, after out->hi, within eps of it. Answer with that. */
                face_answer(&P, &hi_face, out->lo, out->normal, out->pa, out->pb);
                return exit;
            }
            break;
        }
        stop = add_point(&P, best, &w);
        trace_put_epa(q->tr, it, &f, &w, steps_a, steps_b, sup, lo, out->hi, P.nf, stop);
        if (stop) {
            /* the polytope is unusable past here; f is still the best face it had, unless an
             * earlier face's normal needs less to separate the pair (as above) */
            if (sup > out->hi) face_answer(&P, &hi_face, out->lo, out->normal, out->pa, out->pb);
            else face_answer(&P, &f, f.dist, out->normal, out->pa, out->pb);
            return stop;
        }
    }
    finish(&P, exit, best, out);
    if (exit == EPA_EXIT_ITERATION_CAP && hi_set) {
        /* the closest face's normal was never tried: the one that gave out->hi is the least
         * overlap known */
        face_answer(&P, &hi_face, out->lo, out->normal, out->pa, out->pb);
    }
    return exit;
}
