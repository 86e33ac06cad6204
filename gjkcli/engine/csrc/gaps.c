/* The supporting-plane test of gjkcli.mesh.convexity.hull_gaps (see gaps.h).
 *
 * Every face of a part against every hull vertex of it: the brute force, so that the answer is
 * exact for any mesh (a climb of the support map, as for large parts, may stop at a local
 * maximum on a mesh that is not convex). Per part, the face planes go into a scratch buffer and
 * the hull vertices into coordinate rows (x..., y..., z...), so that the inner loop reads three
 * contiguous streams; four faces go through each pass over them, four independent maxima.
 */
#include "gaps.h"

#include <math.h>
#include <stdlib.h>

/* the larger of a and b; a NaN b leaves a */
static inline double larger(double a, double b) { return b > a ? b : a; }

int hull_face_gaps(const double *V, const int64_t *F, const int64_t *t_start, const int64_t *n_tri,
                   const double *translation, const double *hull_area, double area_rel,
                   const double *hull, const int64_t *h_start, const int64_t *n_hull,
                   const uint8_t *brute, int64_t parts, double *mesh_area, double *gap)
{
    int64_t widest = 1, most = 1;
    for (int64_t p = 0; p < parts; ++p) {
        if (n_hull[p] > widest) widest = n_hull[p];
        if (n_tri[p] > most) most = n_tri[p];
    }
    double *rows = malloc((size_t)(3 * widest) * sizeof(double));
    double *plane = malloc((size_t)(4 * most) * sizeof(double)); /* n0 n1 n2 d per face */
    if (!rows || !plane) {
        free(rows);
        free(plane);
        return -1;
    }
    for (int64_t p = 0; p < parts; ++p) {
        const int64_t m = n_tri[p], n = n_hull[p];
        const int64_t *T = F + 3 * t_start[p];
        const double *c = translation + 3 * p;
        double total = 0.0;
        for (int64_t f = 0; f < m; ++f) {
            const double *a = V + 3 * T[3 * f], *b = V + 3 * T[3 * f + 1], *e = V + 3 * T[3 * f + 2];
            const double u0 = b[0] - a[0], u1 = b[1] - a[1], u2 = b[2] - a[2];
            const double v0 = e[0] - a[0], v1 = e[1] - a[1], v2 = e[2] - a[2];
            const double x = u1 * v2 - u2 * v1, y = u2 * v0 - u0 * v2, z = u0 * v1 - u1 * v0;
            const double twice = sqrt(x * x + y * y + z * z);
            total += twice;
            double *q = plane + 4 * f;
            if (twice > 0.0) {  /* a triangle without area has no plane, and adds nothing */
                q[0] = x / twice;
                q[1] = y / twice;
                q[2] = z / twice;
                q[3] = q[0] * (a[0] - c[0]) + q[1] * (a[1] - c[1]) + q[2] * (a[2] - c[2]);
            } else {
                q[0] = q[1] = q[2] = q[3] = 0.0;
            }
        }
        mesh_area[p] = 0.5 * total;
        if (!brute[p]) continue;
        if (!(fabs(mesh_area[p] - hull_area[p]) <= area_rel * hull_area[p])) {
            gap[p] = INFINITY;  /* a pocket, a cavity, a face missing or doubled */
            continue;
        }
        double worst = 0.0;
        if (n > 0 && m > 0) {
            double *x = rows, *y = rows + n, *z = rows + 2 * n;
            const double *h = hull + 3 * h_start[p];
            for (int64_t i = 0; i < n; ++i) {
                x[i] = h[3 * i];
                y[i] = h[3 * i + 1];
                z[i] = h[3 * i + 2];
            }
            int64_t f = 0;
            for (; f + 4 <= m; f += 4) {  /* four faces per pass over the vertices */
                const double *q = plane + 4 * f;
                double m0 = -INFINITY, m1 = -INFINITY, m2 = -INFINITY, m3 = -INFINITY;
                for (int64_t i = 0; i < n; ++i) {
                    m0 = larger(m0, q[0] * x[i] + q[1] * y[i] + q[2] * z[i]);
                    m1 = larger(m1, q[4] * x[i] + q[5] * y[i] + q[6] * z[i]);
                    m2 = larger(m2, q[8] * x[i] + q[9] * y[i] + q[10] * z[i]);
                    m3 = larger(m3, q[12] * x[i] + q[13] * y[i] + q[14] * z[i]);
                }
                worst = larger(worst, m0 - q[3]);
                worst = larger(worst, m1 - q[7]);
                worst = larger(worst, m2 - q[11]);
                worst = larger(worst, m3 - q[15]);
            }
            for (; f < m; ++f) {  /* the last faces, one at a time */
                const double *q = plane + 4 * f;
                double m0 = -INFINITY;
                for (int64_t i = 0; i < n; ++i)
                    m0 = larger(m0, q[0] * x[i] + q[1] * y[i] + q[2] * z[i]);
                worst = larger(worst, m0 - q[3]);
            }
        }
        gap[p] = worst;
    }
    free(rows);
    free(plane);
    return 0;
}
