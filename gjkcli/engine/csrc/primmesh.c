/* A convex primitive against a triangle mesh, through the mesh's hierarchy (see primmesh.h). */
#include <math.h>
#include <string.h>

#include "primmesh.h"

/* Lower bound of the distance between a node's box and the primitive: the largest gap between
 * their projections on a few unit directions (a projection never lengthens a segment, so each
 * gap bounds the distance from below; Gottschalk 1996's separating axes, with the primitive's
 * exact support in place of a second box). The directions: the box's axes, the primitive's
 * axes, and the line between their centres. 0 when every projection overlaps. */
static double node_gap(const mesh_node *n, const gjk_shape *P, const gjk_params *p) {
    double dirs[7][3];
    for (int i = 0; i < 3; i++) {
        m3_copy(dirs[i], n->ax + 3 * i);
        dirs[3 + i][0] = P->R[i];
        dirs[3 + i][1] = P->R[3 + i];
        dirs[3 + i][2] = P->R[6 + i];
    }
    double d[3];
    m3_sub(d, n->c, P->t);
    double len = sqrt(m3_dot(d, d));
    int k = 6;
    if (len > 0.0) {
        for (int c = 0; c < 3; c++) dirs[6][c] = d[c] / len;
        k = 7;
    }
    double best = 0.0;
    for (int i = 0; i < k; i++) {
        const double *u = dirs[i];
        double centre = m3_dot(n->c, u);
        double half = n->e[0] * fabs(m3_dot(n->ax, u)) + n->e[1] * fabs(m3_dot(n->ax + 3, u))
                    + n->e[2] * fabs(m3_dot(n->ax + 6, u));
        double up[3], down[3], neg[3] = {-u[0], -u[1], -u[2]};
        int steps;
        gjk_support(P, u, -1, p, 0, up, &steps);
        gjk_support(P, neg, -1, p, 0, down, &steps);
        double hi = m3_dot(up, u), lo = m3_dot(down, u);
        double gap = fmax(lo - (centre + half), (centre - half) - hi);
        if (gap > best) best = gap;
    }
    return best;
}

/* Triangle s of M as a three-vertex hull, moved by -shift (the pair frame centred on the
 * primitive, so that a part far from the mesh's centre keeps its precision). */
static void triangle_shape(const mesh_bvh *M, int32_t s, const double shift[3], double V[9], gjk_shape *T) {
    const double *src = M->tri + 9 * (size_t)s;
    double lo[3], hi[3], extent2 = 0.0;
    for (int i = 0; i < 3; i++) {
        m3_sub(V + 3 * i, src + 3 * i, shift);
        double r2 = m3_dot(V + 3 * i, V + 3 * i);
        if (r2 > extent2) extent2 = r2;
    }
    for (int c = 0; c < 3; c++) {
        lo[c] = fmin(V[c], fmin(V[3 + c], V[6 + c]));
        hi[c] = fmax(V[c], fmax(V[3 + c], V[6 + c]));
    }
    memset(T, 0, sizeof(*T));
    T->kind = GJK_HULL;
    T->n = 3;
    T->v = V;
    T->R[0] = T->R[4] = T->R[8] = 1.0;
    T->extent = sqrt(extent2);
    T->size = sqrt(m3_dist2(hi, lo));
}

static void shifted_copy(double o[3], const double a[3], const double shift[3]) {
    o[0] = a[0] + shift[0]; o[1] = a[1] + shift[1]; o[2] = a[2] + shift[2];
}

/* Depth-first descent, nearer child first. A node is opened while its bound is below the best
 * distance found (the distance), or is 0 (it may hold a triangle overlapping the primitive, whose
 * depth is wanted). */
void prim_mesh_query(const mesh_bvh *M, const gjk_shape *P, const gjk_params *p, int stop_deep,
                     mesh_ws *ws, gjk_ws *gws, prim_hit *out) {
    memset(out, 0, sizeof(*out));
    out->tri = out->depth_tri = -1;
    out->distance = out->lower = INFINITY;
    if (mesh_ws_reserve(ws, 2 * M->depth + 4) != 0) { out->exit = PRIM_EXIT_NO_MEMORY; return; }
    mesh_item *stack = ws->stack;
    double shift[3];
    m3_copy(shift, P->t);
    gjk_shape Pc = *P; /* the primitive in the pair frame */
    Pc.t[0] = Pc.t[1] = Pc.t[2] = 0.0;
    double best = INFINITY, V[9];
    int n = 0;
    stack[n].a = 0;
    stack[n++].lb = node_gap(&M->nodes[0], P, p);
    out->visits = 1;
    while (n > 0) {
        mesh_item it = stack[--n];
        if (!(it.lb < best || it.lb <= 0.0)) {
            if (it.lb < out->lower) out->lower = it.lb; /* pruned: nothing in it is nearer */
            continue;
        }
        const mesh_node *node = &M->nodes[it.a];
        if (node->count > 0) {
            for (int32_t s = node->first; s < node->first + node->count; s++) {
                gjk_shape T;
                gjk_result r;
                triangle_shape(M, s, shift, V, &T);
                gjk_query(&Pc, &T, p, gws, 0, &r);
                out->tests++;
                int meet = r.cert_kind == GJK_CERT_POINT; /* a point of both: they overlap */
                double dist = meet ? 0.0 : r.distance;
                double low = meet ? 0.0 : r.lower;
                if (low < out->lower) out->lower = low;
                if (dist < best) {
                    best = dist;
                    out->distance = dist;
                    out->tri = M->order[s];
                    shifted_copy(out->pa, meet ? r.point : r.pa, shift);
                    shifted_copy(out->pb, meet ? r.point : r.pb, shift);
                }
                if (r.status == GJK_TOUCHING) out->touching = 1;
                else if (r.status == GJK_UNDECIDED) out->undecided++;
                if (meet && (out->depth_tri < 0 || r.depth > out->depth)) {
                    out->depth = r.depth;
                    out->depth_tri = M->order[s];
                    m3_copy(out->depth_normal, r.normal);
                    shifted_copy(out->depth_pa, r.pa, shift);
                    shifted_copy(out->depth_pb, r.pb, shift);
                    shifted_copy(out->depth_point, r.point, shift);
                }
                if (r.status == GJK_COLLISION && stop_deep) { out->exit = PRIM_EXIT_DEEP; return; }
            }
            continue;
        }
        int32_t k1 = node->first, k2 = node->first + 1;
        double g1 = node_gap(&M->nodes[k1], P, p), g2 = node_gap(&M->nodes[k2], P, p);
        out->visits += 2;
        if (g1 > g2) {
            double g = g1; g1 = g2; g2 = g;
            int32_t k = k1; k1 = k2; k2 = k;
        }
        stack[n].a = k2; stack[n++].lb = g2; /* the nearer child on top */
        stack[n].a = k1; stack[n++].lb = g1;
    }
    out->exit = PRIM_EXIT_EXHAUSTED;
}
