/* How far a part's faces lie inside its hull: the supporting-plane test of
 * gjkcli.mesh.convexity.hull_gaps, by brute force, for many parts at once.
 *
 * Plain C over caller-owned arrays (no Python objects), as gjk.h and mesh.h.
 */
#ifndef GJK_GAPS_H
#define GJK_GAPS_H

#include <stdint.h>

/* Part p (0 <= p < parts) has the triangles F[t_start[p] .. t_start[p] + n_tri[p]) (rows of 3
 * indices into the vertices V, rows of 3, world coordinates), a hull of surface area hull_area[p]
 * placed at translation[p] (rows of 3), and the hull vertices hull[h_start[p] .. + n_hull[p])
 * (rows of 3, in the hull's frame). For every part:
 *   mesh_area[p] = the triangles' total area;
 * and where brute[p] is set:
 *   gap[p] = inf when |mesh_area - hull_area| > area_rel * hull_area (the triangles do not cover
 *            the hull's surface once), else
 *            max(0, max over its triangles of (max over its hull vertices h of n . h) - d)
 *            with n the triangle's unit normal (from its winding) and d = n . (a - translation[p]),
 *            a its first corner; a triangle without area adds 0.
 * gap[p] is left as it is where brute[p] is 0. Returns 0, or -1 when out of memory. */
int hull_face_gaps(const double *V, const int64_t *F, const int64_t *t_start, const int64_t *n_tri,
                   const double *translation, const double *hull_area, double area_rel,
                   const double *hull, const int64_t *h_start, const int64_t *n_hull,
                   const uint8_t *brute, int64_t parts, double *mesh_area, double *gap);

#endif
