/* GJK distance (van den Bergen 2003, chapter 4; Gilbert, Johnson and Keerthi 1988).
 *
 * v is the point of the current simplex nearest the origin: an upper bound |v| of the distance.
 * Each support point w = s_A(-v) - s_B(v) gives a plane normal to v beyond which A - B has no
 * point: its gap v.w / |v| is a lower bound. The loop stops when the bounds meet, when the
 * support repeats (Box2D's main test), when |v| stops shrinking (it never grows in exact
 * arithmetic), when the origin is inside the simplex, or at the iteration cap. The caller turns
 * the bounds into a verdict; the loop never guesses.
 */
#include <math.h>
#include <string.h>

#include "gjk.h"

static void put_vertices(double *rec, int field, const gjk_simplex *s) {
    for (int k = 0; k < 4; k++)
        for (int c = 0; c < 3; c++) rec[field + 3 * k + c] = k < s->n ? s->p[k].w[c] : 0.0;
}

void trace_put_gjk(gjk_trace *tr, int iter, const double dir[3], const gjk_vertex *w, int steps_a,
                   int steps_b, int passed, const gjk_simplex *before, const gjk_simplex *after,
                   int feature, int kept, double vnorm, double lower, double upper, int exit) {
    if (tr == 0 || tr->buf == 0 || tr->n >= tr->cap) return;
    double *rec = tr->buf + (size_t)tr->n * TR_WIDTH;
    memset(rec, 0, sizeof(double) * TR_WIDTH);
    rec[TR_PHASE] = 0;
    rec[TR_ITER] = iter;
    for (int c = 0; c < 3; c++) {
        rec[TR_DIR + c] = dir[c];
        rec[TR_W + c] = w->w[c];
        rec[TR_A + c] = w->a[c];
        rec[TR_B + c] = w->b[c];
    }
    rec[TR_IA] = w->ia;
    rec[TR_IB] = w->ib;
    rec[TR_STEPS_A] = steps_a;
    rec[TR_STEPS_B] = steps_b;
    rec[TR_PASSED] = passed;
    rec[TR_N_BEFORE] = before->n;
    put_vertices(rec, TR_BEFORE, before);
    rec[TR_N_AFTER] = after->n;
    put_vertices(rec, TR_AFTER, after);
    for (int k = 0; k < after->n; k++) rec[TR_LAMBDA + k] = after->lambda[k];
    rec[TR_FEATURE] = feature;
    rec[TR_KEPT] = kept;
    rec[TR_VNORM] = vnorm;
    rec[TR_LOWER] = lower;
    rec[TR_UPPER] = upper;
    rec[TR_EXIT] = exit;
    tr->n++;
}

/* Is w already in the simplex? By vertex indices where both supports are vertices (an inflated
 * shape's support moves with the direction even when its core vertex does not), else by value. */
static int repeats(const gjk_simplex *s, const gjk_vertex *w, int by_index, double eps) {
    for (int k = 0; k < s->n; k++) {
        const gjk_vertex *q = &s->p[k];
        if (by_index && w->ia >= 0 && w->ib >= 0) {
            if (q->ia == w->ia && q->ib == w->ib) return 1;
        } else {
            /* a smooth primitive has no vertex index: compare the points themselves */
            double d[3];
            v3_sub(d, q->w, w->w);
            if (v3_dot(d, d) <= eps * eps) return 1;
        }
    }
    return 0;
}

/* The loop of the file's head over q's pair. Its simplex is reduced by signed volumes
 * (gjk_closest, Montanari et al. 2017); q->p->tol enters only GJK_WANT_INTERSECT's early stop. */
int gjk_distance(const gjk_pair *q, gjk_bounds *out) {
    const gjk_shape *A = q->A, *B = q->B;
    const gjk_params *p = q->p;
    gjk_trace *tr = q->tr;
    gjk_simplex *S = &out->simplex;
    double *v = out->v, *best_dir = out->best_dir, *plane_ab = out->plane_ab;
    double size = gjk_pair_size(A, B);
    double eps = p->gjk_rel * size;       /* bounds closer than this have met */
    double touch = p->degenerate_rel * size; /* |v| below this: the origin is on the simplex */
    double upper = INFINITY;
    int hint_a = -1, hint_b = -1; /* cold: the climbs start from the shapes' cube maps */
    int exit = GJK_EXIT_ITERATION_CAP;
    int by_index = A->radius == 0.0 && B->radius == 0.0;

    S->n = 0;
    out->lower = -INFINITY;
    /* First search direction: from A's centre towards B's; any direction would do. */
    v3_sub(v, A->t, B->t);
    if (v3_dot(v, v) <= touch * touch) { v[0] = 1.0; v[1] = 0.0; v[2] = 0.0; }
    best_dir[0] = -v[0]; best_dir[1] = -v[1]; best_dir[2] = -v[2];
    plane_ab[0] = plane_ab[1] = 0.0;

    int it;
    for (it = 0; it < p->max_gjk; it++) {
        double dir[3] = {-v[0], -v[1], -v[2]}, ndir[3] = {v[0], v[1], v[2]};
        double dlen = sqrt(v3_dot(dir, dir));
        gjk_vertex w;
        int steps_a, steps_b;
        w.ia = gjk_support(A, dir, hint_a, p, q->ws, w.a, &steps_a);
        w.ib = gjk_support(B, ndir, hint_b, p, q->ws, w.b, &steps_b);
        if (w.ia >= 0) hint_a = w.ia;
        if (w.ib >= 0) hint_b = w.ib;
        v3_sub(w.w, w.a, w.b);

        /* Lower bound: A lies below the plane dir.x = dir.a and B above dir.x = dir.b; the
         * gap between the two planes is (dir.b - dir.a)/|dir| = -dir.w/|dir|. */
        double gap = -v3_dot(dir, w.w) / dlen;
        int passed = v3_dot(dir, w.w) > 0.0; /* the new point went past the origin */
        if (gap > out->lower) {
            out->lower = gap;
            v3_scale(best_dir, dir, 1.0 / dlen);
            plane_ab[0] = v3_dot(best_dir, w.a);
            plane_ab[1] = v3_dot(best_dir, w.b);
        }

        gjk_simplex before = *S;
        int stop = GJK_EXIT_NONE;
        if (p->want == GJK_WANT_INTERSECT && out->lower > p->tol) stop = GJK_EXIT_SEPARATING_AXIS;
        else if (upper - out->lower <= eps) stop = GJK_EXIT_CONVERGED;
        else if (repeats(S, &w, by_index, eps)) stop = GJK_EXIT_REPEATED_SUPPORT;
        if (stop == GJK_EXIT_SEPARATING_AXIS && S->n == 0) {
            /* separated at the first look: keep the support pair as witnesses */
            S->p[0] = w;
            S->lambda[0] = 1.0;
            S->n = 1;
            v3_copy(v, w.w);
        }
        if (stop) {
            trace_put_gjk(tr, it, dir, &w, steps_a, steps_b, passed, &before, S, 0, (1 << S->n) - 1,
                          upper, out->lower, upper, stop);
            exit = stop;
            it++;
            break;
        }

        S->p[S->n++] = w;
        double vnew[3];
        int kept;
        int feature = gjk_closest(S, vnew, &kept);
        double vn = sqrt(v3_dot(vnew, vnew));
        if (feature == GJK_FEATURE_INSIDE) {
            stop = GJK_EXIT_ORIGIN_ENCLOSED;
            v[0] = v[1] = v[2] = 0.0;
            upper = 0.0;
        } else if (vn <= touch) {
            stop = GJK_EXIT_ORIGIN_TOUCHED;
            v3_copy(v, vnew);
            upper = vn;
        } else if (vn >= upper) {
            /* |v| must shrink; when rounding stops it, keep the previous simplex. */
            stop = GJK_EXIT_NO_PROGRESS;
            *S = before;
        } else {
            v3_copy(v, vnew);
            upper = vn;
            /* The bounds may meet here already: stopping now saves the support pair that the
             * next iteration would spend only to notice it (the test is the same as above). */
            if (upper - out->lower <= eps) stop = GJK_EXIT_CONVERGED;
        }
        trace_put_gjk(tr, it, dir, &w, steps_a, steps_b, passed, &before, S, feature, kept, vn,
                      out->lower, upper, stop);
        if (stop) {
            exit = stop;
            it++;
            break;
        }
    }
    /* the common point sum(lambda a) = sum(lambda b) to rounding, not to the weights' error */
    if (exit == GJK_EXIT_ORIGIN_ENCLOSED) gjk_polish(S);
    /* Weights that sum to 1 to rounding: on a thin triangle or a short edge the signed volumes'
     * weights may miss it by 1e-8, and the witnesses sum(lambda a), sum(lambda b) then leave
     * their shapes by that share of their distance from the pair's centre. */
    double total = 0.0;
    for (int k = 0; k < S->n; k++) total += S->lambda[k];
    if (total > 0.0 && total != 1.0)
        for (int k = 0; k < S->n; k++) S->lambda[k] /= total;
    if (exit == GJK_EXIT_ITERATION_CAP && tr && tr->n > 0 && tr->n <= tr->cap)
        tr->buf[(size_t)(tr->n - 1) * TR_WIDTH + TR_EXIT] = exit;
    out->iterations = it;
    return exit;
}
