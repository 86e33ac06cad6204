/* Box pairs in the plane by sweep and prune (plane.h, pl_box_pairs_*): the 2D run's broad phase.
 *
 * Boxes come sorted by their lower end on the sweep axis, so box s overlaps box t > s along that
 * axis exactly when sweep[t].lo_along <= sweep[s].hi_along (its own lower end is no larger, and
 * every box has lo <= hi). The inner loop walks forward from s while that holds and tests the
 * other axis; it reads the sorted rows in order, so it streams through memory. Its work is the
 * pairs that overlap along the sweep axis alone: the caller sweeps along the axis on which the
 * boxes spread the most. */
#include <stdlib.h>

#include "plane.h"

/* Row s of the sweep: lo along, lo across, hi along, hi across. */
#define LO_A(s) sweep[4 * (s)]
#define LO_X(s) sweep[4 * (s) + 1]
#define HI_A(s) sweep[4 * (s) + 2]
#define HI_X(s) sweep[4 * (s) + 3]

int64_t pl_box_pairs_count(const double *sweep, const int32_t *index, int n, int64_t *count)
{
    int64_t total = 0;
    for (int k = 0; k < n; ++k)
        count[k] = 0;
    for (int s = 0; s < n; ++s) {
        const double end = HI_A(s), lo = LO_X(s), hi = HI_X(s);
        for (int t = s + 1; t < n && LO_A(t) <= end; ++t) {
            if (LO_X(t) <= hi && lo <= HI_X(t)) {
                const int32_t a = index[s], b = index[t];
                ++count[a < b ? a : b];
                ++total;
            }
        }
    }
    return total;
}

static int by_value(const void *x, const void *y)
{
    const int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return (a > b) - (a < b);
}

void pl_box_pairs_fill(const double *sweep, const int32_t *index, int n, int64_t *next, int64_t *pi,
                       int64_t *pj)
{
    for (int s = 0; s < n; ++s) {
        const double end = HI_A(s), lo = LO_X(s), hi = HI_X(s);
        for (int t = s + 1; t < n && LO_A(t) <= end; ++t) {
            if (LO_X(t) <= hi && lo <= HI_X(t)) {
                const int32_t a = index[s], b = index[t];
                if (a < b)
                    pj[next[a]++] = b;
                else
                    pj[next[b]++] = a;
            }
        }
    }
    /* each number's partners in increasing order; its slots are next[k - 1] .. next[k] now */
    int64_t first = 0;
    for (int k = 0; k < n; ++k) {
        const int64_t last = next[k];
        for (int64_t q = first; q < last; ++q)
            pi[q] = k;
        if (last - first > 1)
            qsort(pj + first, (size_t)(last - first), sizeof(int64_t), by_value);
        first = last;
    }
}
