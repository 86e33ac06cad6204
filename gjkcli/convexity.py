"""Is a part its own convex hull? A geometric decision with a tolerance, not an edge-angle test.

trimesh's `is_convex` checks that every edge bends outward within a planar tolerance. Real meshes
of convex parts fail it: the Panda arm's collision meshes fill their hulls to within 3e-4 of the
volume, yet a few of their edges bend inward by a hair; `ballA.off` has dents of 3e-4 of its size.
Here a part is convex when its surface lies on its hull's surface within a small fraction of its
size, measured where it matters: how deep the faces sink below the hull.

Criterion (`Convexity.convex`)
------------------------------
1. The mesh is closed: every edge is shared by exactly two faces (an open surface is not the solid
   its hull is, whatever its shape).
2. The dent is at most `DENT_REL` times the size (bounding-box diagonal). The dent is the largest
   depth below the hull's surface of any vertex or face centroid; depth is the distance to the
   nearest hull facet plane, so it is 0 on the hull and grows inward. Centroids catch faces that
   cut through the inside between hull vertices (all of a Panda link's vertices lie on its hull;
   some faces do not). The depth over a face is a concave function that is ~0 at its corners,
   so its deepest point is at most 3 times its centroid's depth (a concave function on a
   triangle takes at its centroid at least a third of its maximum).
3. The mesh's volume is at least `1 - VOLUME_REL` of the hull's volume: a cavity or an inverted
   shell shows here even where the dent does not.

What it means for a verdict: a part that passes has its faces within 3 x DENT_REL x size of its
hull's surface (the bound on a face's deepest point above), and the hull's answers stand for the
part's up to about that much; `--mode auto` keeps the hull's answer for such a part. Below that
(a dented, hollow or open part) only the exact mesh test (gjkcli.exact) answers for the part.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Convexity", "convexity", "is_convex", "DENT_REL", "VOLUME_REL"]

# A face may sink below the hull by this fraction of the part's size and the part still count as
# convex. The Panda links reach 7.3e-4 (link3), ballA.off 3.9e-4; the least dented non-convex
# part in ../shared, 20mm-xyz-cube.stl (engraved letters), 1.6e-2.
DENT_REL = 1e-3
# The part may miss this fraction of its hull's volume. The Panda links miss at most 3.4e-4
# (finger.stl, link6.stl), ballA.off 4e-5; 20mm-xyz-cube.stl 7.7e-3.
VOLUME_REL = 1e-3


@dataclass(frozen=True)
class Convexity:
    """The measurements behind the convexity decision.

    Attributes
    ----------
    convex : bool
    dent : float or None
        Largest depth of a vertex or face centroid below the hull's surface, in model units;
        None when not measured (an open or flat mesh fails before it matters).
    size : float
        Bounding-box diagonal.
    volume_ratio : float or None
        Mesh volume over hull volume; None for an open mesh.
    watertight : bool
    reason : str
        Why the part is not convex ("" when it is).
    """

    convex: bool
    dent: float | None
    size: float
    volume_ratio: float | None
    watertight: bool
    reason: str = ""


def is_convex(vertices, faces, *, watertight: bool | None = None) -> bool:
    """True when the mesh is a closed surface on its own hull within the tolerances above.

    Parameters
    ----------
    vertices : (n, 3) float64
    faces : (m, 3) int
    watertight : bool, optional
        Already known (gjkcli.load.Part.watertight); computed from the edges when not given.
    """
    return convexity(vertices, faces, watertight=watertight).convex


def convexity(vertices, faces, *, watertight: bool | None = None) -> Convexity:
    """Measure how far a mesh is from its hull; see the module docstring for the criterion."""
    from scipy.spatial import ConvexHull, QhullError

    v = np.asarray(vertices, dtype=np.float64).reshape(-1, 3)
    f = np.asarray(faces, dtype=np.int64).reshape(-1, 3)
    used = v[np.unique(f)] if len(f) else v[:0]
    if len(used) < 4:
        return Convexity(False, None, 0.0, None, False, "fewer than 4 vertices: no solid")
    size = float(np.linalg.norm(used.max(axis=0) - used.min(axis=0)))
    if watertight is None:
        watertight = _closed(f)
    if not watertight:
        return Convexity(False, None, size, None, False, "open mesh: not every edge is shared by two faces")
    try:
        hull = ConvexHull(used)
    except QhullError:
        return Convexity(False, None, size, None, True, "flat: the hull has no volume")
    planes = hull.equations  # n . x + d <= 0 inside, n unit
    dent = max(_depth(used, planes), _depth(v[f].mean(axis=1), planes))
    a, b, c = v[f[:, 0]], v[f[:, 1]], v[f[:, 2]]
    ratio = abs(float(np.einsum("ij,ij->", a, np.cross(b, c)))) / 6.0 / hull.volume
    reason = ""
    if dent > DENT_REL * size:
        reason = f"faces sink {dent / size:.2g} x size below the hull (limit {DENT_REL:g})"
    elif ratio < 1.0 - VOLUME_REL:
        reason = f"fills {ratio:.4f} of its hull's volume (limit {1.0 - VOLUME_REL:g})"
    return Convexity(reason == "", float(dent), size, ratio, True, reason)


def _depth(points: np.ndarray, planes: np.ndarray, chunk: int = 256) -> float:
    """Largest distance below the hull's surface among points inside it (0 for points on it)."""
    deepest = 0.0
    for start in range(0, len(points), chunk):
        p = points[start:start + chunk]
        depth = -(p @ planes[:, :3].T + planes[:, 3])  # distance below each facet plane
        deepest = max(deepest, float(depth.min(axis=1).max()))
    return deepest


def _closed(faces: np.ndarray) -> bool:
    """Every undirected edge shared by exactly two faces."""
    if len(faces) == 0:
        return False
    edges = np.sort(faces[:, [0, 1, 1, 2, 2, 0]].reshape(-1, 2), axis=1)
    _, counts = np.unique(edges, axis=0, return_counts=True)
    return bool(np.all(counts == 2))
