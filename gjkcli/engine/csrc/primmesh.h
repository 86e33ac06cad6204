/* A convex primitive (sphere, capsule, cylinder, cone, box: a gjk_shape) against a triangle mesh's
 * hierarchy: the primitive-against-triangles query of the exact engine.
 *
 * The hierarchy (mesh.h) is descended with a shrinking distance bound; at the leaves GJK, and EPA
 * where they meet, answer the primitive against each triangle (gjk.h): a triangle is a hull of
 * three vertices, so the support-function engine needs nothing new (FCL's
 * ShapeMeshCollisionTraversalNode pairs a shape with a BVH the same way).
 *
 * What the traversal proves on its own: the distance between the primitive and the surface, and,
 * where a triangle overlaps the primitive, a lower bound of the depth (a translation that
 * separates the solids separates each of its triangles too, so the triangle's depth bounds the
 * pair's). Containment (the primitive inside the solid, or the solid inside the primitive) is
 * the caller's: it needs the winding number and the primitive's own inner distance
 * (gjkcli.engine.primitive).
 */
#ifndef GJK_PRIMMESH_H
#define GJK_PRIMMESH_H

#include "gjk.h"
#include "mesh.h"

enum prim_exit {
    PRIM_EXIT_EXHAUSTED = 0, /* every node within reach visited */
    PRIM_EXIT_DEEP = 1,      /* a triangle overlaps the primitive deeper than the band: stop */
    PRIM_EXIT_NO_MEMORY = 2
};

typedef struct {
    int exit;
    double distance;       /* least distance found between the primitive and a triangle (0: they meet) */
    double lower;          /* certified lower bound of that distance over the whole mesh */
    double pa[3], pb[3];   /* closest points: on the primitive, on the mesh (mesh frame) */
    int32_t tri;           /* face of the closest triangle, -1 when none */
    int touching;          /* a triangle lies within the band, or overlaps it no deeper than the band */
    int undecided;         /* triangles whose own answer straddled the band */
    double depth;          /* largest proven depth of a triangle in the primitive (EPA's lower bound) */
    double depth_normal[3];/* its separating direction, from the primitive towards the mesh */
    double depth_pa[3], depth_pb[3];
    double depth_point[3]; /* a point of both the primitive and that triangle */
    int32_t depth_tri;     /* face of the deepest triangle, -1 when none overlaps */
    int64_t visits, tests;
} prim_hit;

/* P is posed in the mesh's own frame. p->tol is the touching band; p->want is ignored (verdicts
 * are asked of every triangle). Stops at the first triangle deeper than the band when stop_deep. */
void prim_mesh_query(const mesh_bvh *M, const gjk_shape *P, const gjk_params *p, int stop_deep,
                     mesh_ws *ws, gjk_ws *gws, prim_hit *out);

#endif
