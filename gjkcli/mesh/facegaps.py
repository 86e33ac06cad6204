"""How far a solid's triangles lie from its elementary faces (spheres, cylinders, cones, tori),
measured for all its faces at once.

`gjkcli.mesh.cad` hands each such face here as it reads its triangulation (its nodes and
triangles in world coordinates, and its surface's placed axes and radii), and asks for the
largest gap once the solid is read: the per-face arithmetic of `cad._chord_gap` over arrays
that hold every face, so a solid of a thousand faces costs a few NumPy calls, not a few
thousand (issue 43: on a SolidWorks assembly of 1,215 faces the per-face calls were most of the
reader's error measurement). Each point's gap is computed with the same operations, in the same
order, as for one face alone (`largest` answers the same bits; tests/mesh/test_facegaps.py):
the only product that could round otherwise, a point's height along its face's axis, is taken
face by face as the per-face path takes it (a matrix-vector product, which NumPy hands to BLAS).

The measures (see `cad._chord_gap` for why):
- a sphere: R - |closest point of each triangle - centre| (the triangles lie inside it) and
  |corner - centre| - R for every node; exactly the Hausdorff distance of the triangles from it.
- a cylinder, cone or torus: each triangle's centre's and each edge's midpoint's distance from
  the whole surface, in closed form from the placed axes.
"""
from __future__ import annotations

import numpy as np

from gjkcli.engine.certify import closest_points_on_triangles
from gjkcli.engine.exact import distinct

# The revolved surfaces, by the radii they are given with (`ElementaryGaps.revolved`).
CYLINDER, CONE, TORUS = "cylinder", "cone", "torus"


class ElementaryGaps:
    """The faces of one solid gathered, then measured at once (`per_face`, `largest`)."""

    def __init__(self) -> None:
        self._spheres: list = []  # (nodes, tris, centre, radius)
        self._revolved: list = []  # (nodes, tris, kind, origin, axis, params)

    def __len__(self) -> int:
        return len(self._spheres) + len(self._revolved)

    def sphere(self, nodes: np.ndarray, tris: np.ndarray, centre: np.ndarray,
               radius: float) -> None:
        """A spherical face: (n, 3) nodes, (m, 3) triangles (m > 0), its centre and radius."""
        self._spheres.append((nodes, tris, centre, float(radius)))

    def revolved(self, nodes: np.ndarray, tris: np.ndarray, kind: str, origin: np.ndarray,
                 axis: np.ndarray, params: tuple) -> None:
        """A cylinder's, cone's or torus's face: its placed origin and unit axis, and params
        (R,) for a cylinder, (semi-angle, reference radius) for a cone, (major, minor) radii
        for a torus."""
        self._revolved.append((nodes, tris, kind, origin, axis, tuple(float(p) for p in params)))

    def per_face(self) -> np.ndarray:
        """Each face's gap: the spheres' in the order given, then the revolved faces'."""
        return np.concatenate([self._sphere_gaps(), self._revolved_gaps()])

    def largest(self) -> float:
        """The largest gap of any face given, 0 without one; a face whose gap is NaN (a node
        not finite: the reader refuses the solid then) counts for nothing, as `max` skips it
        in the per-face path."""
        gaps = self.per_face()
        return float(np.max(gaps[~np.isnan(gaps)], initial=0.0))

    def _sphere_gaps(self) -> np.ndarray:
        if not self._spheres:
            return np.zeros(0)
        nodes, tris, node_face, tri_face = _merged([(n, t) for n, t, _, _ in self._spheres])
        centres = np.array([c for _, _, c, _ in self._spheres])
        radii = np.array([r for _, _, _, r in self._spheres])
        corners = nodes[tris]
        o = centres[tri_face]
        near = closest_points_on_triangles(o, corners[:, 0], corners[:, 1], corners[:, 2])
        inward = radii[tri_face] - np.linalg.norm(near - o, axis=1)
        outward = np.abs(np.linalg.norm(nodes - centres[node_face], axis=1) - radii[node_face])
        return np.maximum(np.maximum(_face_max(inward, tri_face, len(radii)),
                                     _face_max(outward, node_face, len(radii))), 0.0)

    def _revolved_gaps(self) -> np.ndarray:
        if not self._revolved:
            return np.zeros(0)
        faces = self._revolved
        nodes, tris, node_face, tri_face = _merged([(n, t) for n, t, *_ in faces])
        # each edge once (two triangles share it), by its corners' indices: the faces' nodes
        # do not overlap, so each face's edges are its own, in the order of its own keys
        count = len(nodes)
        edges = np.sort(tris[:, [0, 1, 1, 2, 2, 0]].reshape(-1, 2), axis=1)
        edges = distinct(edges[:, 0] * count + edges[:, 1])
        ends = np.column_stack([edges // count, edges % count])
        points = np.concatenate([nodes[ends].mean(axis=1), nodes[tris].mean(axis=1)])
        owner = np.concatenate([node_face[ends[:, 0]], tri_face])
        # each face's edge midpoints then its centres, as the per-face path lists them
        order = np.argsort(owner, kind="stable")
        points, owner = points[order], owner[order]
        starts = np.searchsorted(owner, np.arange(len(faces) + 1))
        origins = np.array([f[3] for f in faces])
        axes = np.array([f[4] for f in faces])
        # the height along the axis, face by face: a BLAS product per face, as for one face
        h = np.concatenate([(points[a:b] - f[3]) @ f[4]
                            for f, a, b in zip(faces, starts[:-1], starts[1:])])
        rel = points - origins[owner]
        rho = np.linalg.norm(rel - h[:, None] * axes[owner], axis=1)  # from the axis
        kinds = np.array([f[2] for f in faces])[owner]
        params = np.array([_padded(f[2], f[5]) for f in faces])[owner]
        gap = np.empty(len(points))
        for kind in (CYLINDER, CONE, TORUS):
            of = kinds == kind
            if of.any():
                gap[of] = _distance(kind, rho[of], h[of], params[of])
        return _face_max(np.abs(gap), owner, len(faces))


def _padded(kind: str, params: tuple) -> tuple:
    """A face's numbers for `_distance`: (R, 0, 0) for a cylinder, (reference radius, cos a,
    sin a) for a cone of semi-angle a, (major, minor, 0) radii for a torus. A cone's cos a
    and sin a as NumPy's scalar functions give them, once a face, as the per-face path takes
    them (an array's functions may round otherwise)."""
    if kind == CONE:
        a, r = params
        return r, np.cos(a), np.sin(a)
    return (*params, 0.0, 0.0)[:3]


def _distance(kind: str, rho, h, params) -> np.ndarray:
    """The signed distance of points at rho from the axis and h along it from a revolved
    surface (the whole surface, not a face's trimmed part), with `_padded` params."""
    if kind == CYLINDER:
        return rho - params[:, 0]
    if kind == CONE:
        # OpenCASCADE's cone is both nappes: P(u, v) = o + (R + v sin a) ring(u) + v cos a z
        # for every v, so past the apex it is the opposite nappe. In the plane through the axis
        # and the point it is the whole line (R + v sin a, v cos a) and its mirror image across
        # the axis: the point's distance is the nearer of the two (not a signed distance)
        r, cos_a, sin_a = params[:, 0], params[:, 1], params[:, 2]
        line = (rho - r) * cos_a - h * sin_a
        mirrored = (-rho - r) * cos_a - h * sin_a
        return np.minimum(np.abs(line), np.abs(mirrored))
    return np.hypot(rho - params[:, 0], h) - params[:, 1]


def _merged(faces: list) -> tuple:
    """(nodes (N, 3), triangles (M, 3) into them, each node's face, each triangle's face) of
    faces [(nodes, triangles)]."""
    sizes = np.array([len(n) for n, _ in faces])
    counts = np.array([len(t) for _, t in faces])
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    nodes = np.concatenate([n for n, _ in faces])
    tri_face = np.repeat(np.arange(len(faces)), counts)
    tris = np.concatenate([t for _, t in faces]) + offsets[tri_face][:, None]
    return nodes, tris, np.repeat(np.arange(len(faces)), sizes), tri_face


def _face_max(values: np.ndarray, face: np.ndarray, count: int) -> np.ndarray:
    """The largest of `values` of each of `count` faces (face sorted); -inf for a face without
    a value."""
    out = np.full(count, -np.inf)
    np.maximum.at(out, face, values)
    return out
