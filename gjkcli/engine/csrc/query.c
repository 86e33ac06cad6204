/* One pair's verdict from GJK's bounds and EPA's, and the batch loop over many pairs.
 *
 * Verdicts (the tolerance tol is the touching band's half-width):
 *   clear      the certified lower bound of the distance exceeds tol;
 *   touching   |signed distance| <= tol;
 *   collision  the shapes share a point (certified) and the depth exceeds tol;
 *   undecided  a loop hit its cap while its bounds still straddle tol.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gjk.h"

double gjk_pair_size(const gjk_shape *A, const gjk_shape *B) { return A->size > B->size ? A->size : B->size; }

int gjk_ws_init(gjk_ws *ws, int max_hull_vertices, int max_epa_iterations) {
    memset(ws, 0, sizeof(*ws));
    ws->cap_n = max_hull_vertices > 0 ? max_hull_vertices : 1;
    ws->cap_verts = max_epa_iterations + 8;
    ws->cap_faces = 2 * ws->cap_verts + 8; /* a closed polytope of V vertices has 2V - 4 faces */
    ws->mark = calloc((size_t)ws->cap_n, sizeof(int32_t));
    ws->queue = malloc(sizeof(int32_t) * (size_t)ws->cap_n);
    ws->verts = malloc(sizeof(gjk_vertex) * (size_t)ws->cap_verts);
    ws->faces = malloc(sizeof(epa_face) * (size_t)ws->cap_faces);
    ws->edges = malloc(sizeof(int32_t) * 12 * (size_t)ws->cap_faces); /* 3 edges a face, 4 ints each */
    ws->stack = malloc(sizeof(int32_t) * (size_t)ws->cap_faces);
    ws->vlink = malloc(sizeof(int32_t) * 2 * (size_t)ws->cap_verts);
    if (!ws->mark || !ws->queue || !ws->verts || !ws->faces || !ws->edges || !ws->stack || !ws->vlink) {
        gjk_ws_free(ws);
        return -1;
    }
    for (int k = 0; k < 2 * ws->cap_verts; k++) ws->vlink[k] = -1;
    return 0;
}

void gjk_ws_free(gjk_ws *ws) {
    free(ws->mark); free(ws->queue); free(ws->verts); free(ws->faces); free(ws->edges); free(ws->stack);
    free(ws->vlink);
    memset(ws, 0, sizeof(*ws));
}

static int gjk_converged(int exit) {
    return exit == GJK_EXIT_CONVERGED || exit == GJK_EXIT_REPEATED_SUPPORT || exit == GJK_EXIT_NO_PROGRESS;
}

/* Inflated shapes (spheres, capsules, rounded hulls) are queried through their cores, the shapes
 * without the ball: the inflated pair lies apart by the cores' distance less the radii, and
 * overlaps by the radii less that distance, or by the cores' depth plus the radii. Each of these
 * is exact, where EPA on the surface of a ball only creeps up on the depth one face at a time
 * (van den Bergen 2003, section 4.3.7; Box2D and Jolt keep a "convex radius" apart the same
 * way). The trace then shows the cores' support points. */
void gjk_query(const gjk_shape *A, const gjk_shape *B, const gjk_params *p, gjk_ws *ws,
               gjk_trace *tr, gjk_result *out) {
    double ra = A->radius, rb = B->radius, R = ra + rb;
    gjk_shape core_a = *A, core_b = *B;
    core_a.radius = core_b.radius = 0.0;
    gjk_params pc = *p;
    pc.tol = p->tol + R; /* the cores' separating-axis test: the band moved out by the radii */
    /* EPA reads no band: pc serves it too */
    gjk_pair cores = {.A = &core_a, .B = &core_b, .p = &pc, .ws = ws, .tr = tr};
    gjk_bounds g;
    memset(out, 0, sizeof(*out));
    out->exit = gjk_distance(&cores, &g);
    out->iterations = g.iterations;
    const gjk_simplex *S = &g.simplex;
    double core_pa[3] = {0.0, 0.0, 0.0}, core_pb[3] = {0.0, 0.0, 0.0};
    for (int c = 0; c < 3; c++) {
        for (int k = 0; k < S->n; k++) {
            core_pa[c] += S->lambda[k] * S->p[k].a[c];
            core_pb[c] += S->lambda[k] * S->p[k].b[c];
        }
    }
    int converged = gjk_converged(out->exit);
    int intersecting = out->exit == GJK_EXIT_ORIGIN_ENCLOSED || out->exit == GJK_EXIT_ORIGIN_TOUCHED;
    if (!intersecting) {
        double d[3], n[3];
        v3_sub(d, core_pb, core_pa);
        double dist = sqrt(v3_dot(d, d));
        if (dist > 0.0) v3_scale(n, d, 1.0 / dist);
        else v3_copy(n, g.best_dir);
        double upper = dist - R, low = g.lower - R; /* bounds of the signed distance */
        v3_copy(out->normal, n);
        for (int c = 0; c < 3; c++) {
            out->pa[c] = core_pa[c] + ra * n[c];
            out->pb[c] = core_pb[c] - rb * n[c];
        }
        if (low > 0.0) {
            /* A lies below best_dir.x = plane_ab[0] + ra, B above best_dir.x = plane_ab[1] - rb */
            out->cert_kind = GJK_CERT_PLANE;
            v3_copy(out->plane, g.best_dir);
            out->plane[3] = 0.5 * ((g.plane_ab[0] + ra) + (g.plane_ab[1] - rb));
        }
        if (upper > 0.0 || R == 0.0) {
            out->distance = upper > 0.0 ? upper : 0.0;
            out->lower = low > 0.0 ? low : 0.0;
            if (low > p->tol) out->status = GJK_CLEAR;
            else if (upper <= p->tol) out->status = GJK_TOUCHING;
            else if (converged && (low > 0.0 || upper - low <= pc.gjk_rel * gjk_pair_size(A, B)))
                out->status = GJK_CLEAR; /* bounds met at tol's edge, or a separating plane found */
            else out->status = GJK_UNDECIDED; /* stalled on a flat stretch of A - B with the
                                               * bounds either side of the band: no guess */
            return;
        }
        /* The cores lie apart but within the radii: the witness segment, no longer than ra + rb,
         * holds a point within ra of A's core and within rb of B's. */
        out->cert_kind = GJK_CERT_POINT;
        for (int c = 0; c < 3; c++) out->point[c] = core_pa[c] + (dist * ra / R) * n[c];
        if (p->want != GJK_WANT_VERDICT) {
            /* no depth asked: like GJK's own intersecting answer, the witnesses are the common point */
            v3_copy(out->pa, out->point);
            v3_copy(out->pb, out->point);
            out->status = GJK_INTERSECTING;
            return;
        }
        /* The depth of the inflated pair is R less the cores' distance: no EPA to run. */
        out->epa_exit = converged ? EPA_EXIT_CONVERGED : EPA_EXIT_ITERATION_CAP;
        out->depth = -upper;
        out->depth_upper = -low;
        if (out->depth_upper <= p->tol) out->status = GJK_TOUCHING;
        else if (out->depth > p->tol) out->status = GJK_COLLISION;
        else if (converged) out->status = GJK_TOUCHING; /* met at tol's edge */
        else out->status = GJK_UNDECIDED;
        return;
    }

    /* The origin lies on GJK's simplex: sum(lambda a) = sum(lambda b) up to |v|, a point of both
     * cores and so of both shapes. */
    out->cert_kind = GJK_CERT_POINT;
    for (int c = 0; c < 3; c++) {
        out->pa[c] = core_pa[c];
        out->pb[c] = core_pb[c];
        out->point[c] = 0.5 * (core_pa[c] + core_pb[c]);
    }
    if (p->want != GJK_WANT_VERDICT) {
        /* No EPA, so no contact normal: report GJK's best separating-axis candidate (the search
         * direction of the largest lower bound, from A towards B), a unit vector along which the
         * shapes overlap least among those tried, rather than a zero vector. */
        double len = sqrt(v3_dot(g.best_dir, g.best_dir));
        if (len > 0.0) v3_scale(out->normal, g.best_dir, 1.0 / len);
        else out->normal[0] = 1.0;
        out->status = GJK_INTERSECTING;
        return;
    }
    gjk_depth d;
    out->epa_exit = gjk_epa(&cores, S, &d);
    out->epa_iterations = d.iterations;
    out->depth = d.lo + R;
    out->depth_upper = d.hi + R;
    for (int c = 0; c < 3; c++) {
        out->normal[c] = d.normal[c];
        out->pa[c] = d.pa[c] + ra * d.normal[c];
        out->pb[c] = d.pb[c] - rb * d.normal[c];
    }
    if (out->depth_upper <= p->tol) out->status = GJK_TOUCHING;
    else if (out->depth > p->tol) out->status = GJK_COLLISION;
    else if (out->epa_exit == EPA_EXIT_CONVERGED) out->status = GJK_TOUCHING; /* met at tol's edge */
    else out->status = GJK_UNDECIDED;
}

/* Shape k moved by pose (row-major R, then t) when pose is given. */
static void place(gjk_shape *s, const double *pose) {
    if (!pose) return;
    double R[9], t[3];
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++)
            R[3 * i + j] = pose[3 * i] * s->R[j] + pose[3 * i + 1] * s->R[3 + j] + pose[3 * i + 2] * s->R[6 + j];
        t[i] = pose[3 * i] * s->t[0] + pose[3 * i + 1] * s->t[1] + pose[3 * i + 2] * s->t[2] + pose[9 + i];
    }
    memcpy(s->R, R, sizeof(R));
    memcpy(s->t, t, sizeof(t));
}

void gjk_batch(const gjk_shape *shapes, const int32_t *ia, const int32_t *ib, int m,
               const double *pose_a, const double *pose_b, const double *tol, double tol_rel,
               const gjk_params *p0, gjk_ws *ws, gjk_trace *tr, gjk_result *out) {
    for (int k = 0; k < m; k++) {
        gjk_shape A = shapes[ia[k]], B = shapes[ib[k]];
        place(&A, pose_a ? pose_a + 12 * (size_t)k : 0);
        place(&B, pose_b ? pose_b + 12 * (size_t)k : 0);
        /* Work in a frame centred on the pair so that parts far from the origin keep their
         * precision; the answers are moved back at the end. */
        double c[3];
        for (int i = 0; i < 3; i++) {
            c[i] = 0.5 * (A.t[i] + B.t[i]);
            A.t[i] -= c[i];
            B.t[i] -= c[i];
        }
        gjk_params p = *p0;
        p.tol = tol ? tol[k] : tol_rel * gjk_pair_size(&A, &B);
        gjk_result *r = &out[k];
        gjk_query(&A, &B, &p, ws, tr, r);
        r->tol = p.tol;
        for (int i = 0; i < 3; i++) {
            r->pa[i] += c[i];
            r->pb[i] += c[i];
            r->point[i] += c[i];
        }
        if (r->cert_kind == GJK_CERT_PLANE) r->plane[3] += v3_dot(r->plane, c);
    }
}
