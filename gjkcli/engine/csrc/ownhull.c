/* Hulls made of a closed convex mesh's own triangles (see ownhull.h).
 *
 * Per part: the checks of a usable triangle set (the caller, gjkcli.api.manager, has found the
 * mesh closed and oriented with a sphere's topology; whether it is convex is hull_gaps' question,
 * asked afterwards), then the fields gjkcli.engine.shapes._assemble derives from qhull's
 * triangles: used vertices in order, renumbered faces, the sorted CSR adjacency, the box and the
 * extent. The adjacency is bucketed by source (counting sort) and each bucket sorted by
 * insertion: a vertex of a mesh has a handful of neighbours.
 */
#include "ownhull.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Sort a[0..n) increasing: insertion for the usual handful, qsort for a large fan. */
static int cmp_i32(const void *x, const void *y)
{
    int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
    return (a > b) - (a < b);
}

static void sort_small(int32_t *a, int64_t n)
{
    if (n > 32) {
        qsort(a, (size_t)n, sizeof(int32_t), cmp_i32);
        return;
    }
    for (int64_t i = 1; i < n; ++i) {
        int32_t x = a[i];
        int64_t j = i - 1;
        for (; j >= 0 && a[j] > x; --j) a[j + 1] = a[j];
        a[j + 1] = x;
    }
}

/* The cold-start table of count hull vertices V (see ownhull.h); returns its length, 6 k k. The
 * cell directions are those of _cube_directions in gjkcli/engine/shapes.py; each cell holds what
 * `_cube_map` scans for, the first vertex of largest dot product with the cell's centre direction,
 * here climbed instead of scanned: each cell's direction climbs the hull's vertex adjacency (row,
 * adj: CSR) from the previous cell's vertex, a few steps, since the cells go in order and
 * neighbouring cells' answers lie close; on a convex polytope a vertex no neighbour
 * beats is a maximum. Where neighbours tie with it (a face or an edge square to the direction),
 * the plateau of equal values is walked for its first vertex, as the scan's first maximum.
 * O(cells x a few steps x degree) instead of O(cells x vertices). seen (count entries, zero on
 * entry and on return) and queue (count entries) are scratch. */
static int64_t cube_table_climb(const double *V, int32_t count, const int32_t *row, const int32_t *adj,
                                int32_t *seen, int32_t *queue, int32_t *out)
{
    int64_t k = (int64_t)ceil(sqrt((double)count) / 4.0);
    if (k < 1) k = 1;
    if (k > 16) k = 16;
    int64_t cell = 0;
    int32_t at = 0;
    for (int face = 0; face < 6; ++face) {
        const int a = face / 2;
        for (int64_t i = 0; i < k; ++i) {
            for (int64_t j = 0; j < k; ++j, ++cell) {
                double d[3];
                d[a] = face % 2 ? -1.0 : 1.0;
                d[(a + 1) % 3] = -1.0 + (2.0 * (double)i + 1.0) / (double)k;
                d[(a + 2) % 3] = -1.0 + (2.0 * (double)j + 1.0) / (double)k;
                double best = d[0] * V[3 * at] + d[1] * V[3 * at + 1] + d[2] * V[3 * at + 2];
                for (;;) {  /* steepest ascent */
                    int32_t next = -1;
                    double higher = best;
                    for (int32_t e = row[at]; e < row[at + 1]; ++e) {
                        const int32_t u = adj[e];
                        const double s = d[0] * V[3 * u] + d[1] * V[3 * u + 1] + d[2] * V[3 * u + 2];
                        if (s > higher) { higher = s; next = u; }
                    }
                    if (next < 0) break;
                    at = next;
                    best = higher;
                }
                /* the plateau of vertices as high as `at`, for its first vertex */
                int32_t first = at, head = 0, tail = 0;
                queue[tail++] = at;
                seen[at] = 1;
                while (head < tail) {
                    const int32_t v = queue[head++];
                    if (v < first) first = v;
                    for (int32_t e = row[v]; e < row[v + 1]; ++e) {
                        const int32_t u = adj[e];
                        if (seen[u]) continue;
                        const double s = d[0] * V[3 * u] + d[1] * V[3 * u + 1] + d[2] * V[3 * u + 2];
                        if (s == best) {
                            seen[u] = 1;
                            queue[tail++] = u;
                        }
                    }
                }
                for (int32_t q = 0; q < tail; ++q) seen[queue[q]] = 0;
                out[cell] = first;
            }
        }
    }
    return cell;
}

int own_hulls(const double *local, const int64_t *p_start, const int64_t *n_pts,
              const int64_t *tris, const int64_t *t_start, const int64_t *n_tri,
              const double *min_volume, int64_t parts,
              uint8_t *ok, double *area, double *vertices, int64_t *h_start, int64_t *n_hull,
              int32_t *faces, int32_t *adj_start, int32_t *adj, int64_t *a_start, int64_t *n_adj,
              double *extent, double *lo, double *hi, int64_t cube_from, int32_t *cube,
              int64_t *c_start, int64_t *n_cube)
{
    int64_t most_pts = 1, most_tri = 1;
    for (int64_t p = 0; p < parts; ++p) {
        if (n_pts[p] > most_pts) most_pts = n_pts[p];
        if (n_tri[p] > most_tri) most_tri = n_tri[p];
    }
    int32_t *id = malloc((size_t)most_pts * sizeof(int32_t));          /* point -> hull vertex */
    int64_t *fill = malloc((size_t)(most_pts + 1) * sizeof(int64_t));  /* bucket offsets */
    int32_t *bucket = malloc((size_t)(6 * most_tri) * sizeof(int32_t)); /* targets by source */
    if (!id || !fill || !bucket) {
        free(id);
        free(fill);
        free(bucket);
        return -1;
    }
    int64_t h_next = 0, a_next = 0, c_next = 0;
    for (int64_t p = 0; p < parts; ++p) {
        const int64_t n = n_pts[p], m = n_tri[p];
        const double *P = local + 3 * p_start[p];
        const int64_t *T = tris + 3 * t_start[p];
        int32_t *row = adj_start + h_next + p;  /* the parts before used n_hull + 1 rows each */
        h_start[p] = h_next;
        a_start[p] = a_next;
        n_hull[p] = 0;
        n_adj[p] = 0;
        c_start[p] = c_next;
        n_cube[p] = 0;
        ok[p] = 0;
        area[p] = 0.0;
        row[0] = 0;
        /* indices within the part's points */
        int in_range = 1;
        for (int64_t k = 0; k < 3 * m; ++k)
            if (T[k] < 0 || T[k] >= n) { in_range = 0; break; }
        if (!in_range) continue;
        /* area and signed volume (divergence theorem about the origin, the part's centre) */
        double total_area = 0.0, volume = 0.0;
        for (int64_t f = 0; f < m; ++f) {
            const double *a = P + 3 * T[3 * f], *b = P + 3 * T[3 * f + 1], *c = P + 3 * T[3 * f + 2];
            const double u0 = b[0] - a[0], u1 = b[1] - a[1], u2 = b[2] - a[2];
            const double v0 = c[0] - a[0], v1 = c[1] - a[1], v2 = c[2] - a[2];
            const double x = u1 * v2 - u2 * v1, y = u2 * v0 - u0 * v2, z = u0 * v1 - u1 * v0;
            total_area += 0.5 * sqrt(x * x + y * y + z * z);
            volume += (a[0] * x + a[1] * y + a[2] * z) / 6.0;
        }
        area[p] = total_area;
        int finite = 1;
        for (int64_t k = 0; k < 3 * n; ++k)
            if (!isfinite(P[k])) { finite = 0; break; }
        if (n < 4 || m < 4 || !finite || !(fabs(volume) > min_volume[p])) continue;
        /* hull vertices: the used points, in increasing index order */
        for (int64_t i = 0; i < n; ++i) id[i] = -1;
        for (int64_t k = 0; k < 3 * m; ++k) id[T[k]] = 0;
        int32_t count = 0;
        double *V = vertices + 3 * h_next;
        double ext = 0.0;
        double box_lo[3] = {INFINITY, INFINITY, INFINITY}, box_hi[3] = {-INFINITY, -INFINITY, -INFINITY};
        for (int64_t i = 0; i < n; ++i) {
            if (id[i] < 0) continue;
            id[i] = count;
            const double *q = P + 3 * i;
            double *w = V + 3 * count;
            for (int c = 0; c < 3; ++c) {
                w[c] = q[c];
                if (q[c] < box_lo[c]) box_lo[c] = q[c];
                if (q[c] > box_hi[c]) box_hi[c] = q[c];
            }
            const double r = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2]);
            if (r > ext) ext = r;
            ++count;
        }
        /* faces renumbered; every edge in both directions, bucketed by source */
        int32_t *F = faces + 3 * t_start[p];
        for (int64_t k = 0; k < 3 * m; ++k) F[k] = id[T[k]];
        memset(fill, 0, (size_t)(count + 1) * sizeof(int64_t));
        for (int64_t k = 0; k < 3 * m; ++k) fill[F[k] + 1] += 2;  /* each corner: two edges out */
        for (int32_t v = 0; v < count; ++v) fill[v + 1] += fill[v];
        for (int64_t f = 0; f < m; ++f) {
            const int32_t a = F[3 * f], b = F[3 * f + 1], c = F[3 * f + 2];
            bucket[fill[a]++] = b; bucket[fill[a]++] = c;
            bucket[fill[b]++] = c; bucket[fill[b]++] = a;
            bucket[fill[c]++] = a; bucket[fill[c]++] = b;
        }
        /* fill[v] is now the end of v's bucket, and its start that of v - 1 (0 for v = 0) */
        int32_t *out = adj + a_next;
        int64_t written = 0, begin = 0;
        for (int32_t v = 0; v < count; ++v) {
            const int64_t end = fill[v];
            sort_small(bucket + begin, end - begin);
            for (int64_t k = begin; k < end; ++k)
                if (k == begin || bucket[k] != bucket[k - 1]) out[written++] = bucket[k];
            row[v + 1] = (int32_t)written;
            begin = end;
        }
        ok[p] = 1;
        n_hull[p] = count;
        n_adj[p] = written;
        extent[p] = ext;
        for (int c = 0; c < 3; ++c) {
            lo[3 * p + c] = box_lo[c];
            hi[3 * p + c] = box_hi[c];
        }
        if (count >= cube_from) {
            /* id (no longer needed: F is renumbered) and bucket (copied into adj) as scratch */
            for (int32_t v = 0; v < count; ++v) id[v] = 0;
            n_cube[p] = cube_table_climb(V, count, row, adj + a_next, id, bucket, cube + c_next);
            c_next += n_cube[p];
        }
        h_next += count;
        a_next += written;
    }
    free(id);
    free(fill);
    free(bucket);
    return 0;
}

/* -- closed and oriented ------------------------------------------------------------------------ */

/* Slot of `key` in the open-addressed table (size a power of two, empty slots -1): where it is,
 * or the empty slot where it would go. */
static int64_t edge_slot(const int64_t *table, uint64_t mask, int64_t key) {
    uint64_t h = ((uint64_t)key * 0x9E3779B97F4A7C15ull) >> 17;
    for (;; h++) {
        int64_t at = (int64_t)(h & mask);
        if (table[at] == -1 || table[at] == key) return at;
    }
}

int closed_oriented_parts(const int64_t *tris, const int64_t *t_start, const int64_t *n_tri,
                          const int64_t *n_pts, int64_t parts, uint8_t *paired, uint8_t *sphere) {
    int64_t most_tri = 0, most_pts = 0;
    for (int64_t p = 0; p < parts; p++) {
        if (n_tri[p] > most_tri) most_tri = n_tri[p];
        if (n_pts[p] > most_pts) most_pts = n_pts[p];
    }
    uint64_t room = 16;
    while (room < (uint64_t)(6 * most_tri)) room <<= 1;  /* at most half full */
    int64_t *table = malloc(room * sizeof(int64_t));
    uint8_t *used = calloc((size_t)(most_pts ? most_pts : 1), 1);
    if (!table || !used) {
        free(table);
        free(used);
        return -1;
    }
    for (int64_t p = 0; p < parts; p++) {
        const int64_t *t = tris + 3 * t_start[p];
        int64_t m = n_tri[p], n = n_pts[p];
        uint64_t size = 16;
        while (size < (uint64_t)(6 * m)) size <<= 1;
        uint64_t mask = size - 1;
        for (uint64_t k = 0; k < size; k++) table[k] = -1;
        int ok = 1;
        for (int64_t k = 0; k < 3 * m && ok; k++) {
            int64_t a = t[k], b = t[k % 3 == 2 ? k - 2 : k + 1];
            if (a < 0 || a >= n || b < 0 || b >= n || a == b) {
                ok = 0;
                break;
            }
            int64_t key = a * n + b, at = edge_slot(table, mask, key);
            if (table[at] == key) ok = 0;  /* a directed edge twice */
            table[at] = key;
        }
        for (int64_t k = 0; k < 3 * m && ok; k++) {
            int64_t a = t[k], b = t[k % 3 == 2 ? k - 2 : k + 1];
            int64_t key = b * n + a;
            if (table[edge_slot(table, mask, key)] != key) ok = 0;  /* its reverse missing */
        }
        paired[p] = (uint8_t)ok;
        sphere[p] = 0;
        if (ok && m >= 4 && m % 2 == 0) {
            int64_t v = 0;
            for (int64_t k = 0; k < 3 * m; k++)
                if (!used[t[k]]) {
                    used[t[k]] = 1;
                    v++;
                }
            for (int64_t k = 0; k < 3 * m; k++) used[t[k]] = 0;
            sphere[p] = (uint8_t)(v - m / 2 == 2);
        }
    }
    free(table);
    free(used);
    return 0;
}

/* -- signed volumes ------------------------------------------------------------------------------ */

void signed_volume_parts(const double *points, const int64_t *p_start, const int64_t *n_pts,
                         const int64_t *tris, const int64_t *t_start, const int64_t *n_tri,
                         int64_t parts, double *volume) {
    for (int64_t p = 0; p < parts; p++) {
        const double *v = points + 3 * p_start[p];
        const int64_t *t = tris + 3 * t_start[p];
        int64_t n = n_pts[p], m = n_tri[p];
        double c[3] = {0.0, 0.0, 0.0};
        for (int64_t k = 0; k < n; k++)
            for (int d = 0; d < 3; d++) c[d] += v[3 * k + d];
        for (int d = 0; d < 3 && n > 0; d++) c[d] /= (double)n;
        double sum = 0.0;
        for (int64_t k = 0; k < m; k++) {
            int64_t i0 = t[3 * k], i1 = t[3 * k + 1], i2 = t[3 * k + 2];
            if (i0 < 0 || i0 >= n || i1 < 0 || i1 >= n || i2 < 0 || i2 >= n) {
                sum = NAN;
                break;
            }
            double a[3], b[3], e[3];
            for (int d = 0; d < 3; d++) {
                a[d] = v[3 * i0 + d] - c[d];
                b[d] = v[3 * i1 + d] - c[d];
                e[d] = v[3 * i2 + d] - c[d];
            }
            sum += a[0] * (b[1] * e[2] - b[2] * e[1]) + a[1] * (b[2] * e[0] - b[0] * e[2])
                 + a[2] * (b[0] * e[1] - b[1] * e[0]);
        }
        volume[p] = sum / 6.0;
    }
}

/* -- convex edges ------------------------------------------------------------------------------- */

int convex_edges_parts(const double *points, const int64_t *p_start, const int64_t *n_pts,
                       const int64_t *tris, const int64_t *t_start, const int64_t *n_tri,
                       const double *rel, int64_t parts, uint8_t *convex) {
    int64_t most_tri = 0;
    for (int64_t p = 0; p < parts; p++)
        if (n_tri[p] > most_tri) most_tri = n_tri[p];
    uint64_t room = 16;
    while (room < (uint64_t)(6 * most_tri)) room <<= 1;  /* at most half full */
    int64_t *table = malloc(room * sizeof(int64_t));
    int64_t *value = malloc(room * sizeof(int64_t));
    double *normal = malloc((size_t)(most_tri ? most_tri : 1) * 3 * sizeof(double));
    double *limit = malloc((size_t)(most_tri ? most_tri : 1) * sizeof(double));
    if (!table || !value || !normal || !limit) {
        free(table);
        free(value);
        free(normal);
        free(limit);
        return -1;
    }
    for (int64_t p = 0; p < parts; p++) {
        const int64_t *t = tris + 3 * t_start[p];
        const double *P = points + 3 * p_start[p];
        int64_t m = n_tri[p], n = n_pts[p];
        int ok = m >= 4;
        for (int64_t k = 0; k < 3 * m && ok; k++)
            if (t[k] < 0 || t[k] >= n) ok = 0;  /* an index past the part's points: not convex */
        for (int64_t f = 0; f < m && ok; f++) {
            const double *a = P + 3 * t[3 * f], *b = P + 3 * t[3 * f + 1], *c = P + 3 * t[3 * f + 2];
            double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
            double v[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
            double *nf = normal + 3 * f;
            nf[0] = u[1] * v[2] - u[2] * v[1];
            nf[1] = u[2] * v[0] - u[0] * v[2];
            nf[2] = u[0] * v[1] - u[1] * v[0];
            double len = sqrt(nf[0] * nf[0] + nf[1] * nf[1] + nf[2] * nf[2]);
            limit[f] = rel[p] * len;  /* a height of rel[p], times |normal| */
            if (!(limit[f] > 0.0)) ok = 0;  /* no area (or no tolerance, or not finite) */
        }
        if (ok) {
            uint64_t size = 16;
            while (size < (uint64_t)(6 * m)) size <<= 1;
            uint64_t mask = size - 1;
            for (uint64_t k = 0; k < size; k++) table[k] = -1;
            for (int64_t k = 0; k < 3 * m; k++) {  /* corner k: the edge from it to the next */
                int64_t a = t[k], b = t[k % 3 == 2 ? k - 2 : k + 1];
                int64_t at = edge_slot(table, mask, a * n + b);
                table[at] = a * n + b;
                value[at] = k;
            }
            for (int64_t k = 0; k < 3 * m && ok; k++) {
                int64_t a = t[k], b = t[k % 3 == 2 ? k - 2 : k + 1];
                int64_t at = edge_slot(table, mask, b * n + a);
                if (table[at] != b * n + a) {
                    ok = 0;  /* not closed after all */
                    break;
                }
                int64_t other = value[at], g = other / 3;
                int64_t far = t[3 * g + (other % 3 + 2) % 3];  /* the corner of g off the edge */
                int64_t f = k / 3;
                const double *nf = normal + 3 * f, *pa = P + 3 * a, *pf = P + 3 * far;
                double h = nf[0] * (pf[0] - pa[0]) + nf[1] * (pf[1] - pa[1]) + nf[2] * (pf[2] - pa[2]);
                if (!(h <= limit[f])) ok = 0;
            }
        }
        convex[p] = (uint8_t)ok;
    }
    free(table);
    free(value);
    free(normal);
    free(limit);
    return 0;
}
