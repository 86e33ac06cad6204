"""Closed contours from line work that branches: the faces of a planar arrangement.

Open pieces of a drawing (LINEs, ARCs, open polylines and subpaths) whose ends meet two by two
are chained end to end (`gjkcli.mesh.flat`). Where three or more pieces meet at a point (a
common-line nest: parts cut along shared edges, so outline corners meet at branch points), where
a piece ends on another's side (a T), or where a chord crosses a loop, chaining would have to
guess which piece comes next. Here there is no guess: GEOS (through shapely) nodes the pieces,
splitting each where another meets or crosses it, and `polygonize` returns every bounded face,
the smallest closed loops. An edge two faces share belongs to both, so two parts cut along a
common line are two parts that touch.

`arrange(lines, tol)` takes the pieces as polylines with their straight-edge masks and returns
the faces' outer rings (each a `Face` that says which pieces bound it and which of its edges are
straight), the pieces that bound no face, and the branch points with the pieces that meet there.
Ends closer than `tol` are one point (CAD exports leave rounding-size gaps), and an end within
`tol` of another piece's side is put on it before noding, so a T is a node.

Needs shapely (the `flat` extra); imported by the first call.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Face", "Arrangement", "arrange", "branch_sets", "linestrings"]


def linestrings(lines: list, ring: bool = False):
    """shapely LineStrings (LinearRings when `ring`) of polylines of any lengths, in one call."""
    import shapely

    if not lines:
        return np.empty(0, dtype=object)
    index = np.repeat(np.arange(len(lines)), [len(ln) for ln in lines])
    make = shapely.linearrings if ring else shapely.linestrings
    return make(np.concatenate(lines), indices=index)


@dataclass(frozen=True)
class Face:
    """One bounded face.

    ring : (n, 2) float64, its outer boundary (not closed, orientation as GEOS gives it)
    pieces : tuple of int, the input pieces its edges lie on, in order of first use
    straight : (n,) bool, whether edge i (vertex i to i + 1, the last closing) lies on a
        straight edge of its piece
    """

    ring: np.ndarray
    pieces: tuple
    straight: np.ndarray


@dataclass(frozen=True)
class Arrangement:
    """faces : tuple of Face; unused : the pieces no face's edge lies on (dangling or crossing
    nothing that closes); dangling : how many noded edges bound no face (loose ends, cuts);
    branches : tuple of ((x, y), tuple of piece indices), the nodes where three or more noded
    edges meet."""

    faces: tuple
    unused: tuple
    dangling: int
    branches: tuple


def branch_sets(ends: np.ndarray, tol: float) -> tuple[np.ndarray, np.ndarray]:
    """(cluster id per end, how many ends each cluster holds) for the pieces' ends, (2k, 2): piece
    k's start then its end. Ends within `tol` of each other (transitively) are one cluster."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components
    from scipy.spatial import cKDTree

    n = len(ends)
    if n == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    pairs = cKDTree(ends).query_pairs(tol, output_type="ndarray")
    graph = coo_matrix((np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])), shape=(n, n))
    _, label = connected_components(graph, directed=False)
    return label.astype(np.int64), np.bincount(label).astype(np.int64)


def arrange(lines: list, straight: list, tol: float) -> Arrangement:
    """The faces of the arrangement of `lines` (each (m, 2) float64, m >= 2, a polyline; a closed
    ring repeats its first vertex at the end) whose edge i is straight where `straight[k][i]`."""
    import shapely

    # 1. ends within tol are one point: the first end of each cluster
    ends = np.array([[ln[0], ln[-1]] for ln in lines]).reshape(-1, 2)
    label, _ = branch_sets(ends, tol)
    first = np.full(label.max() + 1 if len(label) else 0, -1, dtype=np.int64)
    for k in range(len(label) - 1, -1, -1):
        first[label[k]] = k
    snapped = ends[first[label]]
    lines = [np.array(ln, dtype=np.float64) for ln in lines]
    for k, ln in enumerate(lines):
        ln[0], ln[-1] = snapped[2 * k], snapped[2 * k + 1]
    geoms = linestrings(lines)
    # 2. an end within tol of another piece's side is put on that side (a T becomes a node)
    points = shapely.points(snapped)
    tree = shapely.STRtree(geoms)
    pe, pg = tree.query(points, predicate="dwithin", distance=tol)
    near = pe // 2 != pg
    pe, pg = pe[near], pg[near]
    for g in np.unique(pg).tolist():
        ref = shapely.multipoints(snapped[pe[pg == g]])
        geoms[g] = shapely.snap(geoms[g], ref, tol)
    # 3. node (every crossing and touch becomes a vertex of both pieces, overlaps merged) and
    # take the faces
    noded = shapely.get_parts(shapely.union_all(geoms))
    polygons, cuts, dangles, invalid = shapely.polygonize_full(noded)
    faces_geom = shapely.get_parts(polygons)
    loose = sum(len(shapely.get_parts(g)) for g in (cuts, dangles, invalid))
    # 4. which piece (and which of its segments) each face edge lies on: the segment nearest the
    # edge's midpoint
    seg_a = np.concatenate([ln[:-1] for ln in lines]) if lines else np.zeros((0, 2))
    seg_b = np.concatenate([ln[1:] for ln in lines]) if lines else np.zeros((0, 2))
    seg_piece = np.repeat(np.arange(len(lines)), [len(ln) - 1 for ln in lines])
    seg_straight = np.concatenate([np.asarray(s, dtype=bool)[:len(ln) - 1]
                                   for s, ln in zip(straight, lines)]) if lines else np.zeros(0, bool)
    seg_tree = shapely.STRtree(shapely.linestrings(np.stack([seg_a, seg_b], axis=1)))
    faces = []
    used = np.zeros(len(lines), dtype=bool)
    rings = [shapely.get_coordinates(shapely.get_exterior_ring(p))[:-1] for p in faces_geom]
    rings = [r for r in rings if len(r) >= 3]
    if rings:  # every face edge's midpoint in one query
        mids = np.concatenate([0.5 * (r + np.roll(r, -1, axis=0)) for r in rings])
        _, seg = seg_tree.query_nearest(shapely.points(mids), all_matches=False)
        bounds = np.cumsum([0] + [len(r) for r in rings])
        for k, ring in enumerate(rings):
            s = seg[bounds[k]:bounds[k + 1]]
            pieces = seg_piece[s]
            used[pieces] = True
            faces.append(Face(ring=np.ascontiguousarray(ring),
                              pieces=tuple(dict.fromkeys(pieces.tolist())),
                              straight=seg_straight[s].copy()))
    # a piece no face edge was taken from, that lies along the faces' edges all the same, bounds
    # them: a shared edge drawn twice (each part drawn whole, as DeepNest's nests are), or a
    # piece shorter than tol whose ends were merged into one node; not line work left out
    spare = np.flatnonzero(~used)
    if len(spare) and rings:
        edges = shapely.union_all([shapely.linearrings(r) for r in rings])
        shapely.prepare(edges)  # queried once per such piece
        for k in spare.tolist():
            ln = lines[k]
            probes = shapely.points(np.concatenate([ln, 0.5 * (ln[:-1] + ln[1:])]))
            used[k] = bool(shapely.dwithin(probes, edges, tol).all())
    # 5. branch points: nodes where three or more noded edges end
    branches = []
    if len(noded):
        tips = np.concatenate([shapely.get_coordinates(shapely.get_point(noded, 0)),
                               shapely.get_coordinates(shapely.get_point(noded, -1))])
        key, count = np.unique(tips, axis=0, return_counts=True)
        hubs = key[count >= 3]
        if len(hubs):
            hp, hg = tree.query(shapely.points(hubs), predicate="dwithin", distance=tol)
            for h in range(len(hubs)):
                branches.append(((float(hubs[h, 0]), float(hubs[h, 1])),
                                 tuple(sorted(set(hg[hp == h].tolist())))))
    return Arrangement(faces=tuple(faces), unused=tuple(np.flatnonzero(~used).tolist()),
                       dangling=int(loose), branches=tuple(branches))
