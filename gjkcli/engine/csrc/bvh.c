/* A bounding volume hierarchy of oriented boxes over a mesh's triangles, and its traversals:
 * crossing (any intersection, early exit), minimum distance with witness points, closest point to
 * a point, and the generalized winding number.
 *
 * Build: top-down, breadth first into one flat array (children side by side). Each node's box
 * takes its axes from the covariance of its triangles' corners (Gottschalk, Lin and Manocha 1996)
 * and is split along its longest axis at the mean of the triangle centroids, or at the median when
 * the mean leaves a side empty.
 *
 * Pair traversal (Gottschalk 1996; Ericson 2005, section 6.3): node pairs, opening the larger
 * box. Boxes are compared by the separating axis test over 15 axes (Gottschalk 1996; Ericson 2005,
 * 4.4.1). The crossing search keeps its pairs on a stack and may stop at the first crossing. The
 * distance search takes them off a heap, nearest first: the largest gap of the boxes'
 * projections on the 15 axes and the line of their centres is a lower bound of their distance,
 * and no pair is opened whose bound cannot beat the best distance found (Larsen, Gottschalk, Lin
 * and Manocha 1999 bound with swept spheres instead).
 *
 * The triangles of a leaf slot are copied in leaf order (`tri`), so a leaf test reads one
 * contiguous block; `order` maps a slot back to the caller's face index.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mesh.h"

static const double FOUR_PI = 12.566370614359172953850573533118; /* 4 pi */

/* ---------------------------------------------------------------------------------------------
 * workspace
 * ------------------------------------------------------------------------------------------- */

int mesh_ws_init(mesh_ws *ws) {
    ws->cap = 64;
    ws->stack = malloc(sizeof(mesh_item) * (size_t)ws->cap);
    return ws->stack ? 0 : -1;
}

int mesh_ws_reserve(mesh_ws *ws, int n) {
    if (n <= ws->cap) return 0;
    mesh_item *s = realloc(ws->stack, sizeof(mesh_item) * (size_t)n);
    if (!s) return -1;
    ws->stack = s;
    ws->cap = n;
    return 0;
}

void mesh_ws_free(mesh_ws *ws) {
    free(ws->stack);
    ws->stack = NULL;
    ws->cap = 0;
}

/* ---------------------------------------------------------------------------------------------
 * construction
 * ------------------------------------------------------------------------------------------- */

/* Eigenvectors of a symmetric 3x3 matrix by cyclic Jacobi rotations (Golub and Van Loan, 8.5).
 * A is destroyed (its diagonal ends as the eigenvalues); V gets the eigenvectors as columns. */
static void eigen_sym3(double A[9], double V[9]) {
    static const int P[3] = {0, 0, 1}, Q[3] = {1, 2, 2};
    for (int k = 0; k < 9; k++) V[k] = k % 4 == 0 ? 1.0 : 0.0;
    for (int sweep = 0; sweep < 32; sweep++) {
        double off = A[1] * A[1] + A[2] * A[2] + A[5] * A[5];
        double diag = A[0] * A[0] + A[4] * A[4] + A[8] * A[8];
        if (off <= MESH_JACOBI_REL2 * diag || off == 0.0) return; /* converged: at rounding level */
        for (int r = 0; r < 3; r++) {
            int p = P[r], q = Q[r];
            double apq = A[3 * p + q];
            if (apq == 0.0) continue;
            double theta = (A[3 * q + q] - A[3 * p + p]) / (2.0 * apq);
            double tt = (theta >= 0.0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1.0));
            double c = 1.0 / sqrt(tt * tt + 1.0), s = tt * c;
            for (int k = 0; k < 3; k++) { /* A <- A J */
                double akp = A[3 * k + p], akq = A[3 * k + q];
                A[3 * k + p] = c * akp - s * akq;
                A[3 * k + q] = s * akp + c * akq;
            }
            for (int k = 0; k < 3; k++) { /* A <- J^T A */
                double apk = A[3 * p + k], aqk = A[3 * q + k];
                A[3 * p + k] = c * apk - s * aqk;
                A[3 * q + k] = s * apk + c * aqk;
            }
            for (int k = 0; k < 3; k++) { /* V <- V J */
                double vkp = V[3 * k + p], vkq = V[3 * k + q];
                V[3 * k + p] = c * vkp - s * vkq;
                V[3 * k + q] = s * vkp + c * vkq;
            }
        }
    }
}

static void normalize(double a[3]) {
    double l = sqrt(m3_dot(a, a));
    if (l > 0.0) { a[0] /= l; a[1] /= l; a[2] /= l; }
}

/* Any unit vector perpendicular to the unit vector a. */
static void perpendicular(double o[3], const double a[3]) {
    double h[3] = {0.0, 0.0, 0.0};
    int k = fabs(a[0]) <= fabs(a[1]) ? (fabs(a[0]) <= fabs(a[2]) ? 0 : 2) : (fabs(a[1]) <= fabs(a[2]) ? 1 : 2);
    h[k] = 1.0;
    m3_cross(o, a, h);
    normalize(o);
}

/* Axes of one triangle: its longest edge, the in-plane perpendicular, the normal. */
static void triangle_axes(const double *a, const double *b, const double *c, double ax[9]) {
    double e[3][3], n[3];
    m3_sub(e[0], b, a);
    m3_sub(e[1], c, b);
    m3_sub(e[2], a, c);
    int k = 0;
    for (int i = 1; i < 3; i++)
        if (m3_dot(e[i], e[i]) > m3_dot(e[k], e[k])) k = i;
    if (m3_dot(e[k], e[k]) == 0.0) { /* a point: any frame */
        for (int i = 0; i < 9; i++) ax[i] = i % 4 == 0 ? 1.0 : 0.0;
        return;
    }
    m3_copy(ax, e[k]);
    normalize(ax);
    m3_cross(n, e[0], e[1]);
    normalize(n);
    if (m3_dot(n, n) == 0.0) perpendicular(n, ax); /* no area: a segment */
    m3_cross(ax + 3, n, ax);
    m3_copy(ax + 6, n);
}

static const double *corner(const mesh_bvh *M, const int32_t *order, int32_t slot, int k) {
    return M->v + 3 * (size_t)M->f[3 * (size_t)order[slot] + k];
}

/* Fit node's box around the triangles in slots [start, start + count). */
static void fit_box(const mesh_bvh *M, const int32_t *order, int32_t start, int32_t count, double pad,
                    mesh_node *node) {
    if (count == 1) {
        triangle_axes(corner(M, order, start, 0), corner(M, order, start, 1), corner(M, order, start, 2), node->ax);
    } else {
        double mean[3] = {0.0, 0.0, 0.0}, C[9] = {0.0}, V[9];
        for (int32_t s = start; s < start + count; s++)
            for (int k = 0; k < 3; k++) {
                const double *p = corner(M, order, s, k);
                mean[0] += p[0]; mean[1] += p[1]; mean[2] += p[2];
            }
        double inv = 1.0 / (3.0 * count);
        mean[0] *= inv; mean[1] *= inv; mean[2] *= inv;
        for (int32_t s = start; s < start + count; s++)
            for (int k = 0; k < 3; k++) {
                const double *p = corner(M, order, s, k);
                double d[3] = {p[0] - mean[0], p[1] - mean[1], p[2] - mean[2]};
                C[0] += d[0] * d[0]; C[1] += d[0] * d[1]; C[2] += d[0] * d[2];
                C[4] += d[1] * d[1]; C[5] += d[1] * d[2]; C[8] += d[2] * d[2];
            }
        C[3] = C[1]; C[6] = C[2]; C[7] = C[5];
        eigen_sym3(C, V);
        /* axes by decreasing variance; the third is the cross product, so the frame is right-handed */
        int i0 = 0, i1 = 1, i2 = 2, tmp;
        if (C[4 * i1] > C[4 * i0]) { tmp = i0; i0 = i1; i1 = tmp; }
        if (C[4 * i2] > C[4 * i0]) { tmp = i0; i0 = i2; i2 = tmp; }
        if (C[4 * i2] > C[4 * i1]) { tmp = i1; i1 = i2; i2 = tmp; }
        for (int k = 0; k < 3; k++) {
            node->ax[k] = V[3 * k + i0];
            node->ax[3 + k] = V[3 * k + i1];
        }
        normalize(node->ax);
        normalize(node->ax + 3);
        m3_cross(node->ax + 6, node->ax, node->ax + 3);
        normalize(node->ax + 6);
    }
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int32_t s = start; s < start + count; s++)
        for (int k = 0; k < 3; k++) {
            const double *p = corner(M, order, s, k);
            for (int i = 0; i < 3; i++) {
                double x = m3_dot(node->ax + 3 * i, p);
                if (x < lo[i]) lo[i] = x;
                if (x > hi[i]) hi[i] = x;
            }
        }
    for (int i = 0; i < 3; i++) node->e[i] = 0.5 * (hi[i] - lo[i]) + pad;
    for (int k = 0; k < 3; k++)
        node->c[k] = 0.5 * ((lo[0] + hi[0]) * node->ax[k] + (lo[1] + hi[1]) * node->ax[3 + k] + (lo[2] + hi[2]) * node->ax[6 + k]);
}

/* Reorder slots [start, start + count) so that keys below the k-th smallest come first
 * (quickselect, Hoare partition). */
static void select_kth(int32_t *order, double *key, int32_t start, int32_t count, int32_t k) {
    int32_t lo = start, hi = start + count - 1, target = start + k;
    while (lo < hi) {
        double pivot = key[lo + (hi - lo) / 2];
        int32_t i = lo, j = hi;
        while (i <= j) {
            while (key[i] < pivot) i++;
            while (key[j] > pivot) j--;
            if (i <= j) {
                double tk = key[i]; key[i] = key[j]; key[j] = tk;
                int32_t to = order[i]; order[i] = order[j]; order[j] = to;
                i++; j--;
            }
        }
        if (target <= j) hi = j;
        else if (target >= i) lo = i;
        else return;
    }
}

/* Split slots [start, start + count) of node in two; returns the size of the first part. */
static int32_t split(const mesh_node *node, int32_t *order, const double *centroid, double *key,
                     int32_t start, int32_t count) {
    int a = 0;
    if (node->e[1] > node->e[a]) a = 1;
    if (node->e[2] > node->e[a]) a = 2;
    const double *axis = node->ax + 3 * a;
    double mean = 0.0;
    for (int32_t s = start; s < start + count; s++) {
        key[s] = m3_dot(axis, centroid + 3 * (size_t)order[s]);
        mean += key[s];
    }
    mean /= count;
    int32_t i = start, j = start + count - 1;
    while (i <= j) { /* partition about the mean */
        if (key[i] < mean) i++;
        else {
            double tk = key[i]; key[i] = key[j]; key[j] = tk;
            int32_t to = order[i]; order[i] = order[j]; order[j] = to;
            j--;
        }
    }
    int32_t left = i - start;
    if (left == 0 || left == count) { /* all centroids on one side of the mean: split at the median */
        left = count / 2;
        select_kth(order, key, start, count, left);
    }
    return left;
}

int mesh_build(mesh_bvh *M, const double *v, int32_t n_verts, const int32_t *f, int32_t n_tris, int leaf_size) {
    memset(M, 0, sizeof(*M));
    if (n_tris <= 0 || n_verts <= 0) return -1;
    if (leaf_size < 1) leaf_size = 1;
    M->v = v;
    M->f = f;
    M->n_verts = n_verts;
    M->n_tris = n_tris;
    size_t cap = 2 * (size_t)n_tris;
    M->order = malloc(sizeof(int32_t) * (size_t)n_tris);
    M->tri = malloc(sizeof(double) * 9 * (size_t)n_tris);
    M->nodes = malloc(sizeof(mesh_node) * cap);
    int32_t *range = malloc(sizeof(int32_t) * 3 * cap); /* start, count, depth per node */
    double *centroid = malloc(sizeof(double) * 3 * (size_t)n_tris);
    double *key = malloc(sizeof(double) * (size_t)n_tris);
    if (!M->order || !M->tri || !M->nodes || !range || !centroid || !key) {
        free(range); free(centroid); free(key);
        mesh_free(M);
        return -1;
    }
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int32_t t = 0; t < n_tris; t++) {
        M->order[t] = t;
        for (int c = 0; c < 3; c++) centroid[3 * (size_t)t + c] = 0.0;
        for (int k = 0; k < 3; k++) {
            const double *p = v + 3 * (size_t)f[3 * (size_t)t + k];
            for (int c = 0; c < 3; c++) {
                centroid[3 * (size_t)t + c] += p[c] / 3.0;
                if (p[c] < lo[c]) lo[c] = p[c];
                if (p[c] > hi[c]) hi[c] = p[c];
            }
        }
    }
    M->size = sqrt((hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]) + (hi[2] - lo[2]) * (hi[2] - lo[2]));
    double pad = MESH_BOX_PAD_REL * M->size;

    /* breadth first: the node array is its own queue */
    range[0] = 0; range[1] = n_tris; range[2] = 0;
    M->n_nodes = 1;
    for (int32_t i = 0; i < M->n_nodes; i++) {
        int32_t start = range[3 * i], count = range[3 * i + 1], depth = range[3 * i + 2];
        mesh_node *node = &M->nodes[i];
        fit_box(M, M->order, start, count, pad, node);
        if (depth > M->depth) M->depth = depth;
        if (count <= leaf_size) {
            node->first = start;
            node->count = count;
            continue;
        }
        int32_t left = split(node, M->order, centroid, key, start, count);
        int32_t c = M->n_nodes;
        node->first = c;
        node->count = 0;
        range[3 * c] = start; range[3 * c + 1] = left; range[3 * c + 2] = depth + 1;
        range[3 * c + 3] = start + left; range[3 * c + 4] = count - left; range[3 * c + 5] = depth + 1;
        M->n_nodes += 2;
    }
    for (int32_t s = 0; s < n_tris; s++)
        for (int k = 0; k < 3; k++) m3_copy(M->tri + 9 * (size_t)s + 3 * k, corner(M, M->order, s, k));
    free(range); free(centroid); free(key);
    return 0;
}

void mesh_free(mesh_bvh *M) {
    free(M->order); free(M->tri); free(M->nodes); free(M->cap_off); free(M->cap_edge);
    memset(M, 0, sizeof(*M));
}

/* ---------------------------------------------------------------------------------------------
 * Winding-number caps (Jacobson, Kavan and Sorkine-Hornung 2013, section 3.3): the triangles of a
 * node form a patch P with boundary edges. Closing P with the fan C of triangles (c, b, a) over its
 * boundary edges a -> b, c the box centre, gives a closed surface inside the box, whose winding
 * number is 0 at any point q outside the box. So there w_P(q) = -w_C(q) = sum over the boundary
 * edges of omega(q; c, a, b) / 4 pi: a node far from q costs its boundary, not its triangles, and a
 * closed patch (a whole body) costs nothing.
 * ------------------------------------------------------------------------------------------- */

typedef struct {
    int64_t key; /* lo * n_verts + hi */
    int32_t net; /* edges lo -> hi minus edges hi -> lo */
} cap_entry;

static int cap_cmp(const void *x, const void *y) {
    int64_t a = ((const cap_entry *)x)->key, b = ((const cap_entry *)y)->key;
    return (a > b) - (a < b);
}

int mesh_wind_prepare(mesh_bvh *M) {
    if (M->cap_off) return 0;
    int32_t n = M->n_nodes;
    int64_t nv = M->n_verts;
    int32_t *off = malloc(sizeof(int32_t) * 2 * (size_t)n); /* start, count of each node's list */
    size_t cap = 16 * (size_t)M->n_tris + 16, used = 0;
    cap_entry *buf = malloc(sizeof(cap_entry) * cap);
    if (!off || !buf) { free(off); free(buf); return -1; }
    for (int32_t i = n - 1; i >= 0; i--) { /* children have larger indices than their parent */
        const mesh_node *node = &M->nodes[i];
        size_t need = node->count ? 3 * (size_t)node->count
                                  : (size_t)off[2 * node->first + 1] + (size_t)off[2 * node->first + 3];
        if (used + need > cap) {
            while (used + need > cap) cap *= 2;
            cap_entry *b = realloc(buf, sizeof(cap_entry) * cap);
            if (!b) { free(off); free(buf); return -1; }
            buf = b;
        }
        cap_entry *out = buf + used;
        size_t k = 0;
        if (node->count) { /* leaf: its triangles' edges, sorted, opposite copies cancelled */
            for (int32_t s = node->first; s < node->first + node->count; s++) {
                const int32_t *fa = M->f + 3 * (size_t)M->order[s];
                for (int e = 0; e < 3; e++) {
                    int64_t a = fa[e], b = fa[(e + 1) % 3];
                    if (a == b) continue;
                    out[k].key = a < b ? a * nv + b : b * nv + a;
                    out[k++].net = a < b ? 1 : -1;
                }
            }
            qsort(out, k, sizeof(cap_entry), cap_cmp);
            size_t m = 0;
            for (size_t j = 0; j < k; j++) {
                if (m > 0 && out[m - 1].key == out[j].key) out[m - 1].net += out[j].net;
                else out[m++] = out[j];
                if (out[m - 1].net == 0) m--;
            }
            k = m;
        } else { /* merge the children's sorted lists */
            const cap_entry *l = buf + off[2 * node->first], *r = buf + off[2 * node->first + 2];
            size_t nl = off[2 * node->first + 1], nr = off[2 * node->first + 3], x = 0, y = 0;
            while (x < nl || y < nr) {
                cap_entry c;
                if (y >= nr || (x < nl && l[x].key < r[y].key)) c = l[x++];
                else if (x >= nl || r[y].key < l[x].key) c = r[y++];
                else { c = l[x++]; c.net += r[y++].net; }
                if (c.net != 0) out[k++] = c;
            }
        }
        off[2 * i] = (int32_t)used;
        off[2 * i + 1] = (int32_t)k;
        used += k;
    }
    /* expand into directed edges, node by node */
    size_t total = 0;
    for (int32_t i = 0; i < n; i++)
        for (int32_t j = 0; j < off[2 * i + 1]; j++) total += (size_t)abs(buf[off[2 * i] + j].net);
    int32_t *cap_off = malloc(sizeof(int32_t) * ((size_t)n + 1));
    int32_t *cap_edge = malloc(sizeof(int32_t) * 2 * (total + 1));
    if (!cap_off || !cap_edge) {
        free(off); free(buf); free(cap_off); free(cap_edge);
        return -1;
    }
    size_t w = 0;
    for (int32_t i = 0; i < n; i++) {
        cap_off[i] = (int32_t)w;
        for (int32_t j = 0; j < off[2 * i + 1]; j++) {
            cap_entry c = buf[off[2 * i] + j];
            int32_t lo = (int32_t)(c.key / nv), hi = (int32_t)(c.key % nv);
            for (int32_t r = 0; r < abs(c.net); r++) {
                cap_edge[2 * w] = c.net > 0 ? lo : hi;
                cap_edge[2 * w + 1] = c.net > 0 ? hi : lo;
                w++;
            }
        }
    }
    cap_off[n] = (int32_t)w;
    free(off); free(buf);
    /* published only when complete: mesh_winding takes the caps as soon as cap_off is set */
    M->cap_edge = cap_edge;
    M->cap_off = cap_off;
    return 0;
}

/* ---------------------------------------------------------------------------------------------
 * box tests
 * ------------------------------------------------------------------------------------------- */

static inline int is_leaf(const mesh_node *n) { return n->count > 0; }
static inline double box_size2(const mesh_node *n) { return n->e[0] * n->e[0] + n->e[1] * n->e[1] + n->e[2] * n->e[2]; }

/* B's node b placed in A's frame, in the coordinates of a's box: C[i][j] = a_i . (R b_j) and
 * T[i] = a_i . (R c_b + t - c_a). */
static void relate(const mesh_node *a, const mesh_node *b, const double R[9], const double t[3], double C[9], double T[3]) {
    double bc[3], bax[9];
    for (int i = 0; i < 3; i++) {
        bc[i] = R[3 * i] * b->c[0] + R[3 * i + 1] * b->c[1] + R[3 * i + 2] * b->c[2] + t[i] - a->c[i];
        for (int j = 0; j < 3; j++)
            bax[3 * j + i] = R[3 * i] * b->ax[3 * j] + R[3 * i + 1] * b->ax[3 * j + 1] + R[3 * i + 2] * b->ax[3 * j + 2];
    }
    for (int i = 0; i < 3; i++) {
        T[i] = m3_dot(a->ax + 3 * i, bc);
        for (int j = 0; j < 3; j++) C[3 * i + j] = m3_dot(a->ax + 3 * i, bax + 3 * j);
    }
}

/* Separating axis test over 15 axes (Ericson 2005, 4.4.1), boxes grown by margin: 1 when an axis
 * separates them by more than margin (a separating axis: the boxes, and all they hold, are apart). */
static int boxes_apart(const mesh_node *a, const mesh_node *b, const double C[9], const double T[3], double margin) {
    double AC[9];
    for (int k = 0; k < 9; k++) AC[k] = fabs(C[k]) + MESH_SAT_COS_PAD;
    for (int i = 0; i < 3; i++) { /* a's face axes */
        double rb = b->e[0] * AC[3 * i] + b->e[1] * AC[3 * i + 1] + b->e[2] * AC[3 * i + 2];
        if (fabs(T[i]) > a->e[i] + rb + margin) return 1;
    }
    for (int j = 0; j < 3; j++) { /* b's face axes */
        double ra = a->e[0] * AC[j] + a->e[1] * AC[3 + j] + a->e[2] * AC[6 + j];
        double tj = T[0] * C[j] + T[1] * C[3 + j] + T[2] * C[6 + j];
        if (fabs(tj) > ra + b->e[j] + margin) return 1;
    }
    for (int i = 0; i < 3; i++) { /* edge axes a_i x b_j; |a_i x b_j| <= 1, so margin suffices */
        int i1 = (i + 1) % 3, i2 = (i + 2) % 3;
        for (int j = 0; j < 3; j++) {
            int j1 = (j + 1) % 3, j2 = (j + 2) % 3;
            double tl = T[i2] * C[3 * i1 + j] - T[i1] * C[3 * i2 + j];
            double ra = a->e[i1] * AC[3 * i2 + j] + a->e[i2] * AC[3 * i1 + j];
            double rb = b->e[j1] * AC[3 * i + j2] + b->e[j2] * AC[3 * i + j1];
            if (fabs(tl) > ra + rb + margin) return 1;
        }
    }
    return 0;
}

/* A lower bound of the distance between the boxes: the largest gap of their projections on the
 * 15 axes and the line of centres (projection onto a unit axis never lengthens a segment). Stops
 * as soon as the bound reaches `enough`. */
static double boxes_gap(const mesh_node *a, const mesh_node *b, const double C[9], const double T[3], double enough) {
    double AC[9], gap = 0.0;
    for (int k = 0; k < 9; k++) AC[k] = fabs(C[k]) + MESH_SAT_COS_PAD;
    for (int i = 0; i < 3; i++) {
        double g = fabs(T[i]) - a->e[i] - (b->e[0] * AC[3 * i] + b->e[1] * AC[3 * i + 1] + b->e[2] * AC[3 * i + 2]);
        if (g > gap) gap = g;
    }
    for (int j = 0; j < 3; j++) {
        double tj = T[0] * C[j] + T[1] * C[3 + j] + T[2] * C[6 + j];
        double g = fabs(tj) - b->e[j] - (a->e[0] * AC[j] + a->e[1] * AC[3 + j] + a->e[2] * AC[6 + j]);
        if (g > gap) gap = g;
    }
    if (gap >= enough) return gap;
    /* the line of centres: the axis that the 15 miss when corners face each other */
    double tt = T[0] * T[0] + T[1] * T[1] + T[2] * T[2];
    if (tt > 0.0) {
        double l = sqrt(tt), u[3] = {T[0] / l, T[1] / l, T[2] / l};
        double ra = a->e[0] * fabs(u[0]) + a->e[1] * fabs(u[1]) + a->e[2] * fabs(u[2]);
        double rb = 0.0;
        for (int j = 0; j < 3; j++) rb += b->e[j] * fabs(u[0] * C[j] + u[1] * C[3 + j] + u[2] * C[6 + j]);
        double g = l - ra - rb - MESH_SAT_COS_PAD * (ra + rb);
        if (g > gap) gap = g;
        if (gap >= enough) return gap;
    }
    for (int i = 0; i < 3; i++) {
        int i1 = (i + 1) % 3, i2 = (i + 2) % 3;
        for (int j = 0; j < 3; j++) {
            double s2 = 1.0 - C[3 * i + j] * C[3 * i + j];
            if (s2 < MESH_PARALLEL_SIN2) continue;
            int j1 = (j + 1) % 3, j2 = (j + 2) % 3;
            double tl = T[i2] * C[3 * i1 + j] - T[i1] * C[3 * i2 + j];
            double ra = a->e[i1] * AC[3 * i2 + j] + a->e[i2] * AC[3 * i1 + j];
            double rb = b->e[j1] * AC[3 * i + j2] + b->e[j2] * AC[3 * i + j1];
            double g = (fabs(tl) - ra - rb) / sqrt(s2);
            if (g > gap) gap = g;
        }
    }
    return gap;
}

static double pair_gap(const mesh_bvh *A, const mesh_bvh *B, int32_t a, int32_t b, const double R[9],
                       const double t[3], double enough) {
    double C[9], T[3];
    relate(&A->nodes[a], &B->nodes[b], R, t, C, T);
    return boxes_gap(&A->nodes[a], &B->nodes[b], C, T, enough);
}

/* B's triangle in slot s, placed in A's frame. */
static void place_tri(const mesh_bvh *B, int32_t s, const double R[9], const double t[3], double Q[9]) {
    const double *q = B->tri + 9 * (size_t)s;
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < 3; i++)
            Q[3 * k + i] = R[3 * i] * q[3 * k] + R[3 * i + 1] * q[3 * k + 1] + R[3 * i + 2] * q[3 * k + 2] + t[i];
}

/* Which node of the pair to open: the larger box, unless it is a leaf. */
static int open_a(const mesh_node *a, const mesh_node *b) {
    if (is_leaf(b)) return 1;
    if (is_leaf(a)) return 0;
    return box_size2(a) >= box_size2(b);
}

/* ---------------------------------------------------------------------------------------------
 * pair traversals
 * ------------------------------------------------------------------------------------------- */

/* Triangle pairs whose boxes come within margin. A pair that crosses by more than `deep` (its
 * straddle, see tri_tri_intersect) ends the search; crossings within `deep` and pairs within
 * margin only mark contact. deep < 0: the first crossing ends it (a boolean query). The first
 * `cap` crossings within `deep` are written to pairs (face of A, face of B), their number to
 * out->n_pairs; with deep = INFINITY (collecting) the search ends when pairs is full. */
void mesh_intersect(const mesh_bvh *A, const mesh_bvh *B, const double R[9], const double t[3],
                    double margin, double deep, double snap, mesh_ws *ws, int32_t *pairs, int cap,
                    mesh_hit *out) {
    memset(out, 0, sizeof(*out));
    out->tri_a = out->tri_b = -1;
    if (mesh_ws_reserve(ws, A->depth + B->depth + 4) != 0) { out->exit = MESH_EXIT_NO_MEMORY; return; }
    mesh_item *stack = ws->stack;
    int n = 0;
    stack[n].a = 0; stack[n++].b = 0;
    double Q[9], x[3], pp[3], qq[3], st;
    while (n > 0) {
        mesh_item it = stack[--n];
        const mesh_node *a = &A->nodes[it.a], *b = &B->nodes[it.b];
        double C[9], T[3];
        out->visits++;
        relate(a, b, R, t, C, T);
        if (boxes_apart(a, b, C, T, margin)) continue;
        if (is_leaf(a) && is_leaf(b)) {
            for (int32_t sb = b->first; sb < b->first + b->count; sb++) {
                place_tri(B, sb, R, t, Q);
                for (int32_t sa = a->first; sa < a->first + a->count; sa++) {
                    const double *P = A->tri + 9 * (size_t)sa;
                    out->tests++;
                    if (tri_tri_intersect(P, Q, snap, x, &st)) {
                        if (out->crossing == 0 || st > deep) {
                            out->tri_a = A->order[sa];
                            out->tri_b = B->order[sb];
                            m3_copy(out->point, x);
                            out->straddle = st;
                        }
                        out->near = 1;
                        if (st > deep) {
                            out->crossing = 2;
                            out->exit = MESH_EXIT_DEEP_CROSSING;
                            return;
                        }
                        out->crossing = 1;
                        if (out->n_pairs < cap) {
                            pairs[2 * out->n_pairs] = A->order[sa];
                            pairs[2 * out->n_pairs + 1] = B->order[sb];
                            out->n_pairs++;
                        }
                        if (out->n_pairs == cap && cap > 0 && isinf(deep)) {
                            out->exit = MESH_EXIT_FULL;
                            return;
                        }
                    } else if (margin > 0.0 && !out->near && tri_tri_distance2(P, Q, pp, qq) <= margin * margin) {
                        out->near = 1;
                        out->tri_a = A->order[sa];
                        out->tri_b = B->order[sb];
                        for (int c = 0; c < 3; c++) out->point[c] = 0.5 * (pp[c] + qq[c]);
                    }
                }
            }
            continue;
        }
        if (open_a(a, b)) {
            stack[n].a = a->first; stack[n++].b = it.b;
            stack[n].a = a->first + 1; stack[n++].b = it.b;
        } else {
            stack[n].a = it.a; stack[n++].b = b->first;
            stack[n].a = it.a; stack[n++].b = b->first + 1;
        }
    }
    out->exit = MESH_EXIT_EXHAUSTED;
}

/* Binary min-heap of node pairs by lower bound, in the workspace (grown when full). */
static int heap_push(mesh_ws *ws, int *n, int32_t a, int32_t b, double lb) {
    if (*n >= ws->cap && mesh_ws_reserve(ws, 2 * ws->cap) != 0) return -1;
    mesh_item *h = ws->stack;
    int i = (*n)++;
    while (i > 0) {
        int parent = (i - 1) / 2;
        if (h[parent].lb <= lb) break;
        h[i] = h[parent];
        i = parent;
    }
    h[i].a = a; h[i].b = b; h[i].lb = lb;
    return 0;
}

static mesh_item heap_pop(mesh_ws *ws, int *n) {
    mesh_item *h = ws->stack, top = h[0], last = h[--(*n)];
    int i = 0;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= *n) break;
        if (c + 1 < *n && h[c + 1].lb < h[c].lb) c++;
        if (last.lb <= h[c].lb) break;
        h[i] = h[c];
        i = c;
    }
    if (*n > 0) h[i] = last;
    return top;
}

/* Minimum distance, best first: node pairs come off a heap by their boxes' lower bound, so no
 * pair is opened whose bound exceeds the final distance, and the search ends when the smallest
 * bound left reaches the best distance found (the branch-and-bound of Larsen et al. 1999 with a
 * priority queue instead of a stack). Starts from `upper` (INFINITY when unknown) and stops once
 * the best distance is at most stop_below, or at the first intersecting triangle pair. */
void mesh_distance(const mesh_bvh *A, const mesh_bvh *B, const double R[9], const double t[3],
                   double upper, double stop_below, double snap, mesh_ws *ws, mesh_near *out) {
    memset(out, 0, sizeof(*out));
    out->tri_a = out->tri_b = -1;
    out->distance = upper;
    double best = upper, best2 = upper * upper;
    int n = 0;
    if (heap_push(ws, &n, 0, 0, pair_gap(A, B, 0, 0, R, t, best)) != 0) { out->exit = MESH_EXIT_NO_MEMORY; return; }
    out->visits = 1;
    double Q[9], x[3], pp[3], qq[3], st;
    while (n > 0) {
        mesh_item it = heap_pop(ws, &n);
        if (it.lb >= best) break; /* every pair left is at least as far: converged */
        const mesh_node *a = &A->nodes[it.a], *b = &B->nodes[it.b];
        if (is_leaf(a) && is_leaf(b)) {
            for (int32_t sb = b->first; sb < b->first + b->count; sb++) {
                place_tri(B, sb, R, t, Q);
                for (int32_t sa = a->first; sa < a->first + a->count; sa++) {
                    const double *P = A->tri + 9 * (size_t)sa;
                    out->tests++;
                    if (it.lb <= snap && tri_tri_intersect(P, Q, snap, x, &st)) {
                        out->distance = 0.0;
                        m3_copy(out->pa, x);
                        m3_copy(out->pb, x);
                        out->tri_a = A->order[sa];
                        out->tri_b = B->order[sb];
                        out->exit = MESH_EXIT_INTERSECTING;
                        return;
                    }
                    double d2 = tri_tri_distance2(P, Q, pp, qq);
                    if (d2 < best2) {
                        best2 = d2;
                        best = sqrt(d2);
                        out->distance = best;
                        m3_copy(out->pa, pp);
                        m3_copy(out->pb, qq);
                        out->tri_a = A->order[sa];
                        out->tri_b = B->order[sb];
                    }
                }
            }
            if (best <= stop_below) { out->exit = MESH_EXIT_STOP_DISTANCE; return; }
            continue;
        }
        int32_t a1, b1, a2, b2;
        if (open_a(a, b)) { a1 = a->first; a2 = a->first + 1; b1 = b2 = it.b; }
        else { a1 = a2 = it.a; b1 = b->first; b2 = b->first + 1; }
        double g1 = pair_gap(A, B, a1, b1, R, t, best), g2 = pair_gap(A, B, a2, b2, R, t, best);
        out->visits += 2;
        if ((g1 < best && heap_push(ws, &n, a1, b1, g1) != 0) || (g2 < best && heap_push(ws, &n, a2, b2, g2) != 0)) {
            out->exit = MESH_EXIT_NO_MEMORY;
            return;
        }
    }
    out->exit = MESH_EXIT_EXHAUSTED;
}

/* ---------------------------------------------------------------------------------------------
 * single-tree traversals
 * ------------------------------------------------------------------------------------------- */

/* Squared distance from q to the box; 0 inside. */
static double point_box2(const mesh_node *n, const double q[3]) {
    double r[3], d2 = 0.0;
    m3_sub(r, q, n->c);
    for (int i = 0; i < 3; i++) {
        double x = fabs(m3_dot(n->ax + 3 * i, r)) - n->e[i];
        if (x > 0.0) d2 += x * x;
    }
    return d2;
}

/* The point of the mesh nearest q: its distance (or `upper` when nothing is nearer), the point
 * in c and the face in tri (-1 when nothing is nearer than upper). Stops once the distance is at
 * most stop_below. */
double mesh_closest(const mesh_bvh *M, const double q[3], double upper, double stop_below, mesh_ws *ws,
                    double c[3], int32_t *tri) {
    *tri = -1;
    if (mesh_ws_reserve(ws, M->depth + 4) != 0) return upper;
    mesh_item *stack = ws->stack;
    double best2 = upper * upper, stop2 = stop_below * stop_below, x[3];
    int n = 0;
    stack[n].a = 0;
    stack[n++].lb = point_box2(&M->nodes[0], q);
    while (n > 0) {
        mesh_item it = stack[--n];
        if (it.lb >= best2) continue;
        const mesh_node *node = &M->nodes[it.a];
        if (is_leaf(node)) {
            for (int32_t s = node->first; s < node->first + node->count; s++) {
                double d2 = point_tri_closest2(q, M->tri + 9 * (size_t)s, x);
                if (d2 < best2) {
                    best2 = d2;
                    m3_copy(c, x);
                    *tri = M->order[s];
                }
            }
            if (best2 <= stop2) break;
            continue;
        }
        int32_t k1 = node->first, k2 = node->first + 1;
        double g1 = point_box2(&M->nodes[k1], q), g2 = point_box2(&M->nodes[k2], q);
        if (g1 > g2) {
            double g = g1; g1 = g2; g2 = g;
            int32_t k = k1; k1 = k2; k2 = k;
        }
        if (g2 < best2) { stack[n].a = k2; stack[n++].lb = g2; }
        if (g1 < best2) { stack[n].a = k1; stack[n++].lb = g1; }
    }
    return *tri >= 0 ? sqrt(best2) : upper;
}

/* Generalized winding number of the mesh at q: the sum of its triangles' solid angles over 4 pi
 * (Jacobson 2013). Near 1 inside a closed, outward-oriented mesh, near 0 outside, between for open
 * meshes. Uses the caps of mesh_wind_prepare when prepared, else sums every triangle. */
double mesh_winding(const mesh_bvh *M, const double q[3], mesh_ws *ws) {
    if (!M->cap_off || mesh_ws_reserve(ws, M->depth + 4) != 0) return mesh_winding_brute(M, q);
    mesh_item *stack = ws->stack;
    double total = 0.0;
    int n = 0;
    stack[n++].a = 0;
    while (n > 0) {
        const mesh_node *node = &M->nodes[stack[--n].a];
        int32_t i = (int32_t)(node - M->nodes);
        if (point_box2(node, q) > 0.0) { /* q outside the box: the cap answers for the patch */
            for (int32_t e = M->cap_off[i]; e < M->cap_off[i + 1]; e++)
                total += tri_solid_angle(q, node->c, M->v + 3 * (size_t)M->cap_edge[2 * e],
                                         M->v + 3 * (size_t)M->cap_edge[2 * e + 1]);
        } else if (is_leaf(node)) {
            for (int32_t s = node->first; s < node->first + node->count; s++) {
                const double *T = M->tri + 9 * (size_t)s;
                total += tri_solid_angle(q, T, T + 3, T + 6);
            }
        } else {
            stack[n++].a = node->first;
            stack[n++].a = node->first + 1;
        }
    }
    return total / FOUR_PI;
}

double mesh_winding_brute(const mesh_bvh *M, const double q[3]) {
    double total = 0.0;
    for (int32_t s = 0; s < M->n_tris; s++) {
        const double *T = M->tri + 9 * (size_t)s;
        total += tri_solid_angle(q, T, T + 3, T + 6);
    }
    return total / FOUR_PI;
}
