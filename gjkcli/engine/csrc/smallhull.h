/* Convex hulls of many small point sets at once (a scan's thousands of small parts), each
 * checked before it is handed on: a part whose hull is not proven here is left to qhull.
 *
 * Plain C over caller-owned arrays (no Python objects), as gjk.h and ownhull.h.
 */
#ifndef GJK_SMALLHULL_H
#define GJK_SMALLHULL_H

#include <stdint.h>

/* Part p (0 <= p < parts) has the points local[p_start[p] .. p_start[p] + n_pts[p]) (rows of 3,
 * centred on their box as gjkcli.engine.shapes.build_hulls centres them). For each part of 4 to
 * max_pts points, all finite, its hull is built (quickhull, farthest point first) with points
 * closer than tol[p] (the caller's coplanarity tolerance, in the part's units) to a face's plane
 * taken as on it (not vertices), then checked:
 *   - closed and oriented: every directed edge of the triangles once, its reverse once;
 *   - a sphere: V - E + F = 2;
 *   - every point of the part on the inner side of every face's plane, within 4 tol[p], where
 *     faces that meet within tol[p] of one plane, their normals agreeing within what tol[p]
 *     tilts the thinner, count as one face with one plane (as qhull
 *     merges coplanar facets; the thin triangles of a cylinder's cap have planes known only to
 *     the points' scatter over their width), each such group flat within 2 tol[p] (so the
 *     triangles bound the convex hull of the points, and their vertices are points: they are
 *     that hull up to the tolerance);
 *   - a volume above min_volume[p] (the solid threshold of build_hulls), and a mean thickness
 *     (2 x volume / area) above 1024 tol[p] (a thinner slab's hull can miss a point sideways
 *     by far more than tol[p] and still pass the other checks);
 *   - no face of a flat group facing against it (a fold).
 * A part that passes gets ok[p] = 1 and its triangles, outward, as point indices local to the
 * part, at tris[t_start[p] .. t_start[p] + n_tri[p]) (rows of 3; the caller's t_start leaves
 * 2 n - 4 rows for a part of n points, the most a hull of n points has). Any other part gets ok[p] = 0, n_tri[p] = 0.
 * Returns 0, or -1 when out of memory. */
int small_hulls(const double *local, const int64_t *p_start, const int64_t *n_pts, int64_t parts,
                int64_t max_pts, const double *tol, const double *min_volume,
                uint8_t *ok, int64_t *tris, const int64_t *t_start, int64_t *n_tri);

#endif
