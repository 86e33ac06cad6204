/* Hulls made of a closed convex mesh's own triangles (build_hulls' `triangles`), for many parts at
 * once: what gjkcli.engine.shapes assembles from qhull's triangles, from the mesh's instead.
 *
 * Plain C over caller-owned arrays (no Python objects), as gjk.h and mesh.h.
 */
#ifndef GJK_OWNHULL_H
#define GJK_OWNHULL_H

#include <stdint.h>

/* Part p (0 <= p < parts) has the points local[p_start[p] .. p_start[p] + n_pts[p]) (rows of 3,
 * centred as build_hulls centres them) and the triangles tris[t_start[p] .. t_start[p] + n_tri[p])
 * (rows of 3 point indices local to the part). A part is usable (ok[p] = 1) when it has at least
 * 4 points, all finite, at least 4 triangles, every index within its points, and a signed volume
 * (divergence theorem about the centre) of magnitude above min_volume[p]. For every part:
 *   area[p]   the triangles' total area (0 when an index is out of range)
 * and for a usable part:
 *   its hull vertices, the points its triangles use in increasing index order, at
 *     vertices[h_start[p] .. h_start[p] + n_hull[p]) (rows of 3);
 *   faces[t_start[p] ..] its triangles renumbered to those vertices (int32);
 *   the vertex adjacency in CSR form: adj_start[h_start[p] + p .. + n_hull[p]] (n_hull[p] + 1
 *     offsets from 0) into adj[a_start[p] .. a_start[p] + n_adj[p]), each vertex's neighbours
 *     (both ends of every triangle edge) once each, in increasing order;
 *   extent[p] the largest vertex norm, lo[p], hi[p] the vertices' box (rows of 3);
 *   from cube_from vertices on, its cold-start table (the `_cube_map` of gjkcli.engine.shapes: a
 *     k x k grid on each face of a cube of directions, k = min(16, max(1, ceil(sqrt(n) / 4))),
 *     each cell the first vertex of largest dot product with the cell's centre direction, found by
 *     climbing the adjacency from the previous cell's vertex: O(cells x a few steps)) at
 *     cube[c_start[p] .. c_start[p] + n_cube[p]), n_cube[p] = 6 k k (0 below cube_from).
 * An unusable part gets n_hull[p] = n_adj[p] = 0 and one adj_start row (0). h_start and a_start
 * run over the parts in order. Sizes: vertices and adj_start need sum(n_pts) rows (+ parts for
 * adj_start), faces sum(n_tri) rows, adj 6 sum(n_tri) entries, cube 1536 per part. Returns 0, or -1 when out of
 * memory. */
int own_hulls(const double *local, const int64_t *p_start, const int64_t *n_pts,
              const int64_t *tris, const int64_t *t_start, const int64_t *n_tri,
              const double *min_volume, int64_t parts,
              uint8_t *ok, double *area, double *vertices, int64_t *h_start, int64_t *n_hull,
              int32_t *faces, int32_t *adj_start, int32_t *adj, int64_t *a_start, int64_t *n_adj,
              double *extent, double *lo, double *hi, int64_t cube_from, int32_t *cube,
              int64_t *c_start, int64_t *n_cube);

/* For each part p of n_pts[p] points and the triangles tris[t_start[p] .. t_start[p] + n_tri[p])
 * (rows of 3 point indices local to the part):
 *   paired[p] = 1 when every directed edge of the triangles occurs once and its reverse once
 *     (the mesh is closed and consistently oriented; a part without triangles is paired), an
 *     edge from a point to itself or an index outside the points is not;
 *   sphere[p] = 1 when besides it has 4 triangles or more and V - E + F = 2 over the points its
 *     triangles use (one body, no handle).
 * What gjkcli.pipeline.prepared.closed_oriented answers, one part at a time (a hash of the
 * part's edges) instead of two sorts of every part's edges together. Returns 0, or -1 when out
 * of memory. */
int closed_oriented_parts(const int64_t *tris, const int64_t *t_start, const int64_t *n_tri,
                          const int64_t *n_pts, int64_t parts, uint8_t *paired, uint8_t *sphere);

/* For each part p with points[p_start[p] .. + n_pts[p]) (rows of 3) and the triangles
 * tris[t_start[p] .. + n_tri[p]) (rows of 3 point indices local to the part), already known to
 * be closed and consistently oriented (closed_oriented_parts' paired): convex[p] = 1 when every
 * triangle has an area and every edge is convex: the far corner of the triangle across each edge
 * lies at most rel[p] above the triangle's plane (rel[p] a length). With a sphere's topology, such
 * a surface bounds a convex body (gjkcli.pipeline.prepared.convex_edges says why). One hash of the
 * part's directed edges, O(triangles); an index outside the part's points gives 0. Returns 0, or
 * -1 when out of memory. */
int convex_edges_parts(const double *points, const int64_t *p_start, const int64_t *n_pts,
                       const int64_t *tris, const int64_t *t_start, const int64_t *n_tri,
                       const double *rel, int64_t parts, uint8_t *convex);

/* For each part p with points[p_start[p] .. + n_pts[p]) (rows of 3) and the triangles
 * tris[t_start[p] .. + n_tri[p]) (rows of 3 point indices local to the part): volume[p] = the
 * volume its triangles enclose, positive when their normals (right hand) point out: the sum of
 * the tetrahedra from the mean of its points (the precision of a part far from the origin) to
 * each triangle, as gjkcli.engine.topology.signed_volume sums it. An index outside the part's
 * points gives NaN. O(points + triangles); no memory taken. */
void signed_volume_parts(const double *points, const int64_t *p_start, const int64_t *n_pts,
                         const int64_t *tris, const int64_t *t_start, const int64_t *n_tri,
                         int64_t parts, double *volume);

#endif
