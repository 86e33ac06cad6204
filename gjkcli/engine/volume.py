"""The centroid of the solid a closed mesh bounds: for a clash group's centre (the reports import
it, so it imports nothing but NumPy) and for a mesh's bodies wound against each other
(`gjkcli.mesh.load`)."""
from __future__ import annotations

import numpy as np

__all__ = ["centroid"]


def centroid(vertices, faces) -> np.ndarray | None:
    """(3,) the centroid of the solid the closed triangles bound, wound either way (the
    volume-weighted mean of the tetrahedra from the vertices' mean to each face); None when they
    bound no volume."""
    v = np.asarray(vertices, dtype=np.float64).reshape(-1, 3)
    f = np.asarray(faces, dtype=np.int64).reshape(-1, 3)
    o = v.mean(axis=0)
    a, b, c = v[f[:, 0]] - o, v[f[:, 1]] - o, v[f[:, 2]] - o
    six = np.einsum("ij,ij->i", a, np.cross(b, c))  # six times each tetrahedron's signed volume
    total = six.sum()
    if total == 0.0 or not np.isfinite(total):
        return None
    return o + (six[:, None] * (a + b + c)).sum(axis=0) / (4.0 * total)
