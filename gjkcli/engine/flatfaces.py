"""A closed mesh's flat faces that are convex polygons, and how far a point lies from one.

A solid's boundary is drawn in triangles, and a flat face of it (a wall's side, an opening's
sill) in several. A point's distance to one triangle bounds its depth inside the solid (the way
to any boundary point leaves the solid), and over a piece of a surface that bound is largest
at the piece's corners (the distance to a convex set is a convex function); but a piece whose
corners lie over two triangles of one face is bounded by neither as closely as by the face
itself. Where the face is a convex polygon its distance is convex too, so the piece is bounded
by the face's distance at its corners: `gjkcli.engine.sheet` then settles, at once, a window's
sill lying exactly as deep in its wall as the band (a tie), which split at the diagonal of the
opening's sill rectangle, halving pieces along it for ever.

A face is the triangles joined by shared edges whose planes agree (their normals to 1e-10 and
the far corner to 1e-9 of the mesh's size). It is taken for a convex polygon where it is a
disk (one boundary loop; vertices less edges plus triangles is 1) whose loop turns once and
never back by more than the rounding; its distance is then bounded by:

    d(p, face) <= sqrt(h^2 + e^2) + deviation + gap

with h the distance of p from the face's plane, e that of p's projection from the convex hull
of the loop's projection, deviation the farthest of the face's corners from that plane, and
gap how far the hull strays from the loop (the loop's length times the angles it turns back
by): exact for a flat convex face, an upper bound for every face taken.
"""
from __future__ import annotations

import numpy as np

from gjkcli.engine.topology import components

__all__ = ["ConvexFaces"]

# Triangles sharing an edge are of one face where their unit normals agree to this (1 - dot)...
_NORMALS = 1e-10
# ... and the far corner of one lies this close to the other's plane (times the mesh's size).
_PLANE_REL = 1e-9
# A loop's vertex may turn back by this angle (radians: collinear points' rounding); each such
# turn is paid for in the bound (`_Face.gap`).
_TURN_BACK = 1e-9


class _Face:
    """One flat face, as a convex polygon: its plane (unit normal n, offset c: n . x = c), a
    basis (u, w) of the plane, the hull of its loop in that basis (K, 2) counter-clockwise, and
    what the bound adds (`deviation + gap`)."""

    __slots__ = ("normal", "offset", "basis", "hull", "margin")

    def __init__(self, normal, offset, basis, hull, margin):
        self.normal, self.offset, self.basis, self.hull, self.margin = normal, offset, basis, hull, margin

    def distance(self, p: np.ndarray) -> np.ndarray:
        """(N,) an upper bound on the distance of each point p (N, 3) to the face."""
        h = p @ self.normal - self.offset
        q = p @ self.basis.T  # (N, 2)
        a = self.hull
        b = np.roll(a, -1, axis=0)
        e = b - a  # (K, 2)
        rel = q[:, None, :] - a[None, :, :]  # (N, K, 2)
        cross = e[None, :, 0] * rel[:, :, 1] - e[None, :, 1] * rel[:, :, 0]
        inside = (cross >= 0.0).all(axis=1)
        t = np.clip(np.einsum("nki,ki->nk", rel, e) / np.einsum("ki,ki->k", e, e)[None, :], 0.0, 1.0)
        gap = rel - t[:, :, None] * e[None, :, :]
        edge = np.sqrt(np.einsum("nki,nki->nk", gap, gap).min(axis=1))
        out = np.where(inside, 0.0, edge)
        return np.sqrt(h * h + out * out) + self.margin


class ConvexFaces:
    """The flat faces of a closed, outward-wound mesh's triangles `tris` (m, 3, 3) with their
    unit `outward` normals (m, 3), and `faces` (m, 3) their vertex indices: each triangle's
    face (`group`), each face made a `_Face` when first asked for, None where it is not a
    convex polygon."""

    def __init__(self, tris: np.ndarray, outward: np.ndarray, faces: np.ndarray, size: float):
        self.tris, self.faces = tris, faces
        m = len(faces)
        edges = np.sort(np.concatenate([faces[:, [0, 1]], faces[:, [1, 2]], faces[:, [2, 0]]]), axis=1)
        owner = np.tile(np.arange(m), 3)
        apex = np.concatenate([faces[:, 2], faces[:, 0], faces[:, 1]])  # the corner off each edge
        order = np.lexsort((edges[:, 1], edges[:, 0]))
        edges, owner, apex = edges[order], owner[order], apex[order]
        same = np.flatnonzero((edges[1:] == edges[:-1]).all(axis=1))
        # an edge of exactly two triangles (the one before and after it in the order differ)
        alone = np.ones(len(same), dtype=bool)
        if len(same) > 1:
            consecutive = same[1:] == same[:-1] + 1
            alone[1:] &= ~consecutive
            alone[:-1] &= ~consecutive
        same = same[alone]
        f, g = owner[same], owner[same + 1]
        agree = np.einsum("ij,ij->i", outward[f], outward[g]) >= 1.0 - _NORMALS
        corner = np.argmax(faces[g] == apex[same + 1][:, None], axis=1)  # g's corner off the edge
        off = np.abs(np.einsum("ij,ij->i", tris[g, corner] - tris[f, 0], outward[f]))
        agree &= off <= _PLANE_REL * size
        self.group = components(m, f[agree], g[agree])
        self._by_group = np.argsort(self.group, kind="stable")  # the triangles, a face's together
        self._sorted = self.group[self._by_group]
        self._made: dict = {}

    def face(self, k: int):
        """The `_Face` of group k, or None (not a convex polygon, or one triangle: no better)."""
        if k not in self._made:
            self._made[k] = self._face(k)
        return self._made[k]

    def _face(self, k: int):
        members = self._by_group[np.searchsorted(self._sorted, k):np.searchsorted(self._sorted, k, side="right")]
        if len(members) < 2:
            return None
        f = self.faces[members]
        directed = np.concatenate([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]])
        pairs = set(map(tuple, directed.tolist()))
        boundary = [(a, b) for a, b in pairs if (b, a) not in pairs]
        used = np.unique(f)
        undirected = len({(min(a, b), max(a, b)) for a, b in pairs})
        if len(used) - undirected + len(f) != 1 or not boundary:
            return None  # not a disk
        following = dict(boundary)
        if len(following) != len(boundary):
            return None
        start = boundary[0][0]
        loop, at = [start], following[start]
        while at != start and len(loop) <= len(boundary):
            loop.append(at)
            at = following.get(at)
            if at is None:
                return None
        if len(loop) != len(boundary):
            return None  # more than one loop
        # the face's corners: where in the mesh (a corner's place, from any triangle holding it)
        where = {}
        for tri, idx in zip(self.tris[members], f):
            for c in range(3):
                where.setdefault(int(idx[c]), tri[c])
        corners = np.array([where[v] for v in used.tolist()])
        cross = np.cross(self.tris[members, 1] - self.tris[members, 0], self.tris[members, 2] - self.tris[members, 0])
        normal = cross.sum(axis=0)
        length = np.linalg.norm(normal)
        if not length > 0:
            return None
        normal = normal / length
        heights = corners @ normal
        offset = 0.5 * (heights.max() + heights.min())
        deviation = 0.5 * (heights.max() - heights.min())
        u = np.cross(normal, np.eye(3)[int(np.argmin(np.abs(normal)))])
        u /= np.linalg.norm(u)
        basis = np.stack([u, np.cross(normal, u)])
        ring = np.array([where[v] for v in loop]) @ basis.T  # (L, 2), counter-clockwise seen from outside
        e = np.roll(ring, -1, axis=0) - ring
        keep = np.einsum("ij,ij->i", e, e) > 0.0
        ring, e = ring[keep], e[keep]
        if len(ring) < 3:
            return None
        before = np.roll(e, 1, axis=0)
        turn = np.arctan2(before[:, 0] * e[:, 1] - before[:, 1] * e[:, 0], np.einsum("ij,ij->i", before, e))
        if abs(turn.sum() - 2.0 * np.pi) > 1e-6 or (turn < -_TURN_BACK).any():
            return None
        back = float(-turn[turn < 0].sum())
        perimeter = float(np.linalg.norm(e, axis=1).sum())
        hull = _hull(ring)
        if hull is None:
            return None
        # the rounding of the distances here, far below the sheet's slack, is in `margin` too
        margin = deviation + perimeter * back + 1e-15 * (perimeter + float(np.abs(corners).max()))
        return _Face(normal, float(offset), basis, hull, float(margin))

    def bound(self, pieces: np.ndarray, near: np.ndarray, distance) -> np.ndarray:
        """(k,) an upper bound on the depth inside the solid over each piece (k, 3, 3): the
        least, over the convex sets of the boundary nearest its corners (each corner's nearest
        triangle `near` (k, 3), or that triangle's face where the face is a convex polygon)
        and over the pairs of them, of the largest at the corners of

            lambda d_i + (1 - lambda) d_j    (lambda in [0, 1] chosen per piece)

        the depth is at most each d (a way out through that set) and so at most any mean of two;
        a mean of convex functions is convex, and over the piece at most its largest at the
        corners. One set alone (lambda 0 or 1) is the triangle's or the face's bound; two are
        what settles a piece across the middle of a slab exactly twice the band thick, where
        each corner is nearer to one side and no one side bounds all three. `distance(points,
        triangles)`: the point-triangle distance."""
        k = len(pieces)
        # D[r, c, j]: corner c's distance to piece r's set j (the set of corner j's triangle)
        corners = np.repeat(pieces, 3, axis=0).reshape(k, 3, 3, 3)  # (k, set j, corner c, xyz)
        D = distance(corners.reshape(-1, 3), np.repeat(self.tris[near.reshape(-1)], 3, axis=0)).reshape(k, 3, 3)
        groups = self.group[near]  # (k, 3)
        for g in np.unique(groups).tolist():
            face = self.face(g)
            if face is None:
                continue
            r, j = np.nonzero(groups == g)
            D[r, j] = face.distance(pieces[r].reshape(-1, 3)).reshape(len(r), 3)
        D = D.transpose(0, 2, 1)  # (k, corner, set)
        out = D.max(axis=1).min(axis=1)
        for a, b in ((0, 1), (0, 2), (1, 2)):
            base, slope = D[:, :, b], D[:, :, a] - D[:, :, b]  # corner c: base + lambda * slope
            lams = [np.zeros(k), np.ones(k)]
            for c, e in ((0, 1), (0, 2), (1, 2)):
                with np.errstate(divide="ignore", invalid="ignore"):
                    lam = (base[:, e] - base[:, c]) / (slope[:, c] - slope[:, e])
                lams.append(np.clip(np.nan_to_num(lam, nan=0.0, posinf=0.0, neginf=0.0), 0.0, 1.0))
            for lam in lams:
                out = np.minimum(out, (base + lam[:, None] * slope).max(axis=1))
        return out


# scipy's ConvexHull would do what `_hull` does; its import (0.04 s) is a share of the bound's
# time on a model of a few windows, an import a scan of such a model does not otherwise pay.


def _hull(points: np.ndarray):
    """(K, 2) the convex hull of 2D points, counter-clockwise (Andrew's monotone chain), or None
    when the points span no area."""
    pts = np.unique(points, axis=0).tolist()  # sorted by x, then y
    if len(pts) < 3:
        return None

    def side(o, a, b):
        return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])

    chains = []
    for run in (pts, pts[::-1]):
        chain: list = []
        for p in run:
            while len(chain) >= 2 and side(chain[-2], chain[-1], p) <= 0:
                chain.pop()
            chain.append(p)
        chains.append(chain[:-1])
    hull = chains[0] + chains[1]
    return np.array(hull) if len(hull) >= 3 else None
