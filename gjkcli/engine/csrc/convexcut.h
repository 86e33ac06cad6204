/* The solid two convex parts share, and its volume: one part's faces clipped by the other's
 * face planes (Sutherland-Hodgman per face, each cut closed by the cap it leaves), in plain C
 * over caller-owned arrays, as gjk.h and smallhull.h.
 *
 * It answers what manifold3d's boolean answers (gjkcli/mesh/overlap.py) for the pairs whose
 * parts are both their own convex hulls, a scan's boxes and beams, at a fraction of its cost.
 */
#ifndef GJK_CONVEXCUT_H
#define GJK_CONVEXCUT_H

#include <stdint.h>

typedef struct {
    double volume;   /* the common volume, >= 0 */
    double *pts;     /* n_pts rows of 3: the common solid's corners, each once */
    int64_t n_pts;
    int64_t *tris;   /* n_tris rows of 3 indices into pts, wound outwards */
    int64_t n_tris;
} convex_common_out;

/* Part A: na points va (rows of 3) and ma triangles fa (rows of 3 indices); part B likewise.
 * Each part's triangles must cover the boundary of its convex hull once (a closed convex mesh;
 * wound either way throughout: a part wound inwards is turned outwards). Coordinates should be
 * near the origin (the caller shifts both parts by one offset). A point within eps of a
 * cutting plane lies on it.
 *
 * Returns 0 with *out filled (free it with convex_common_free; no solid in common: volume 0,
 * no points), 1 when a part bounds no volume (flat, empty, an index out of range), -1 when out
 * of memory. */
int convex_common(const double *va, int64_t na, const int64_t *fa, int64_t ma,
                  const double *vb, int64_t nb, const int64_t *fb, int64_t mb,
                  double eps, convex_common_out *out);

void convex_common_free(convex_common_out *out);

#endif
