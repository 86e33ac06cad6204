/* How far a part's faces lie inside its hull: the brute-force supporting-plane test of
 * gjkcli.mesh.convexity.hull_gaps, for many parts at once.
 *
 * Plain C over caller-owned arrays (no Python objects), as gjk.h and mesh.h.
 */
#ifndef GJK_GAPS_H
#define GJK_GAPS_H

#include <stdint.h>

/* For each part p (0 <= p < parts):
 *   gap[p] = max(0, max over its faces f of (max over its hull vertices h of n_f . h) - d_f)
 * with the faces' unit normals n (T, 3) and plane offsets d (T,), the faces of part p being rows
 * t_start[p] .. t_start[p] + n_tri[p] - 1, and its hull vertices (H, 3) rows h_start[p] ..
 * h_start[p] + n_hull[p] - 1 (same frame as the offsets). A face with a zero normal and offset
 * (no area) gives 0. A part without faces or hull vertices gets 0. Returns 0, or -1 when out of
 * memory (gap then untouched). */
int hull_face_gaps(const double *normal, const double *offset, const int64_t *t_start,
                   const int64_t *n_tri, const double *hull, const int64_t *h_start,
                   const int64_t *n_hull, int64_t parts, double *gap);

#endif
