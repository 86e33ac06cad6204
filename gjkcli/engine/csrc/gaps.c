/* The supporting-plane test of gjkcli.mesh.convexity.hull_gaps (see gaps.h).
 *
 * Every face of a part against every hull vertex of it: the brute force, so that the answer is
 * exact for any mesh (a climb of the support map, as for large parts, may stop at a local
 * maximum on a mesh that is not convex). The vertices are copied into coordinate rows
 * (x..., y..., z...) so that the inner loop reads three contiguous streams, and four faces go
 * through each pass over them: four independent maxima keep the pipeline full.
 */
#include "gaps.h"

#include <math.h>
#include <stdlib.h>

/* the larger of a and b; a NaN b leaves a */
static inline double larger(double a, double b) { return b > a ? b : a; }

int hull_face_gaps(const double *normal, const double *offset, const int64_t *t_start,
                   const int64_t *n_tri, const double *hull, const int64_t *h_start,
                   const int64_t *n_hull, int64_t parts, double *gap)
{
    int64_t widest = 0;
    for (int64_t p = 0; p < parts; ++p)
        if (n_hull[p] > widest) widest = n_hull[p];
    double *rows = malloc((size_t)(3 * (widest > 0 ? widest : 1)) * sizeof(double));
    if (!rows) return -1;
    for (int64_t p = 0; p < parts; ++p) {
        const int64_t n = n_hull[p], m = n_tri[p];
        double worst = 0.0;
        if (n > 0 && m > 0) {
            double *x = rows, *y = rows + n, *z = rows + 2 * n;
            const double *h = hull + 3 * h_start[p];
            for (int64_t i = 0; i < n; ++i) {
                x[i] = h[3 * i];
                y[i] = h[3 * i + 1];
                z[i] = h[3 * i + 2];
            }
            const double *nf = normal + 3 * t_start[p];
            const double *df = offset + t_start[p];
            int64_t f = 0;
            for (; f + 4 <= m; f += 4) {  /* four faces per pass over the vertices */
                const double *a = nf + 3 * f;
                double m0 = -INFINITY, m1 = -INFINITY, m2 = -INFINITY, m3 = -INFINITY;
                for (int64_t i = 0; i < n; ++i) {
                    m0 = larger(m0, a[0] * x[i] + a[1] * y[i] + a[2] * z[i]);
                    m1 = larger(m1, a[3] * x[i] + a[4] * y[i] + a[5] * z[i]);
                    m2 = larger(m2, a[6] * x[i] + a[7] * y[i] + a[8] * z[i]);
                    m3 = larger(m3, a[9] * x[i] + a[10] * y[i] + a[11] * z[i]);
                }
                worst = larger(worst, m0 - df[f]);
                worst = larger(worst, m1 - df[f + 1]);
                worst = larger(worst, m2 - df[f + 2]);
                worst = larger(worst, m3 - df[f + 3]);
            }
            for (; f < m; ++f) {  /* the last faces, one at a time */
                const double *a = nf + 3 * f;
                double m0 = -INFINITY;
                for (int64_t i = 0; i < n; ++i)
                    m0 = larger(m0, a[0] * x[i] + a[1] * y[i] + a[2] * z[i]);
                worst = larger(worst, m0 - df[f]);
            }
        }
        gap[p] = worst;
    }
    free(rows);
    return 0;
}
