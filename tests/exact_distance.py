"""An exact signed distance from points to a closed triangle mesh, for tests that judge depths.

trimesh's `proximity.closest_point` (behind `signed_distance`) compares against an absolute zero
and is off by up to about 2e-4 on triangles about 1e-3 across; this judge is not. The distance is
the least over every triangle of the exact point-triangle distance (Ericson's Voronoi regions,
`gjkcli.engine.certify.closest_points_on_triangles`, which is written apart from the engine and
checked against brute force in tests/engine/test_certify_parts.py), brute force over the
triangles; the sign is the generalized winding number (the sum of the triangles' solid angles,
Van Oosterom and Strackee's formula), positive inside, as trimesh's sign. tests/api/
test_manager_depths.py checks it against python-fcl's distance outside the mesh.
"""
from __future__ import annotations

import numpy as np

from gjkcli.engine.certify import closest_points_on_triangles


def unsigned_distance(vertices, faces, points) -> np.ndarray:
    """(k,) exact distances from points (k, 3) to the triangles, brute force."""
    tris = np.asarray(vertices, dtype=np.float64)[np.asarray(faces)]
    points = np.atleast_2d(np.asarray(points, dtype=np.float64))
    out = np.empty(len(points))
    for k, p in enumerate(points):
        q = closest_points_on_triangles(p, tris[:, 0], tris[:, 1], tris[:, 2])
        out[k] = np.sqrt(((q - p) ** 2).sum(axis=1)).min()
    return out


def winding_number(vertices, faces, points) -> np.ndarray:
    """(k,) generalized winding numbers of points about an outward-oriented mesh: 1 inside, 0
    outside."""
    tris = np.asarray(vertices, dtype=np.float64)[np.asarray(faces)]
    points = np.atleast_2d(np.asarray(points, dtype=np.float64))
    out = np.empty(len(points))
    for k, p in enumerate(points):
        a, b, c = (tris[:, j] - p for j in range(3))
        la, lb, lc = (np.linalg.norm(x, axis=1) for x in (a, b, c))
        det = np.einsum("ij,ij->i", a, np.cross(b, c))
        den = (la * lb * lc + np.einsum("ij,ij->i", a, b) * lc + np.einsum("ij,ij->i", b, c) * la
               + np.einsum("ij,ij->i", c, a) * lb)
        out[k] = np.arctan2(det, den).sum() / (2 * np.pi)
    return out


def signed_distance(mesh, points) -> np.ndarray:
    """(k,) exact distances from points to a closed trimesh mesh's surface, positive inside."""
    d = unsigned_distance(mesh.vertices, mesh.faces, points)
    inside = winding_number(mesh.vertices, mesh.faces, points) > 0.5
    return np.where(inside, d, -d)
