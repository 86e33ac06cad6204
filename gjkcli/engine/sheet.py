"""How deep an open surface reaches into a solid, bounded from above: the certificate of an open
part against a closed one that the triangle test leaves undecided.

A part that bounds no volume (an eaves modelled as a surface, a round window's glazing, a mesh
with a hole) counts only by its surface: against a solid its depth is that of the deepest point
of the surface inside the solid, the distance from that point to the solid's boundary. A point
deeper than the band proves a collision (the triangle test's rule, `gjkcli.engine.exact`);
where the triangle test found none and no move within the band parted the parts, the pair is
undecided. `sheet_depth` settles it by branch and bound over the open part's triangles:

- the solid's depth function s(p) (the distance to its boundary inside it, 0 outside) is at most
  the distance from p to any one boundary triangle T, a convex function of p, so over a piece of
  the surface (a triangle) s is at most the largest of T's distances to the piece's three corners
  (a convex function's maximum over a triangle is at a corner). T is tried among the boundary
  triangles nearest each corner; the least such bound is the piece's;
- a piece whose bound is within the band (to the distances' rounding: a sheet exactly as deep as
  the band, a frame drawn 30 mm into its wall at a 30 mm band, is a tie, and touching, as two
  closed parts whose surfaces meet within the rounding after a move within the band) is
  settled, and so is one whose centroid, at distance
  s from the boundary and r from the piece's farthest corner, bounds it by the depth's Lipschitz
  constant 1: s + r inside the solid, r - s outside (a point of the piece inside lies past the
  boundary), s + r where the side (the winding number, asked only where it decides something)
  is not known; a centroid inside and deeper than the band is a point that proves the
  collision;
- a piece whose corners lie over two triangles of one flat face, or on both sides of a slab's
  middle, is bounded by the face where it is a convex polygon and by the mean of two such sets'
  distances (`gjkcli.engine.flatfaces`), convex functions too; where its corners have other
  nearest triangles, the point of such an edge as near to both lies on the depth's ridge, and
  inside deeper than the band it is a point that proves the collision;
- any other piece is split in four at its edges' midpoints, up to a budget of pieces.

Before any piece: no point lies deeper inside the solid than half its least width across a
direction (`half_width`: its frame's axes and its vertices' principal axes), so a solid that
thin beside the band settles every piece at once: a small part against a surface millions of
times its size, whose band (a fraction of the pair's size) it fits in.

A piece can also be settled by a move: where the piece moved by a length m (at most the band)
shares no point with the solid's triangles and its centroid lies outside, the moved piece lies
wholly outside, so every point p of the piece has a point outside within m (p + m d), and the
way there crosses the boundary: s(p) <= m. A piece lying on the solid's face (a window's head on
its opening's head, its frame on the jambs) is settled so at once, moved off the face along the
outward normals of the boundary triangles nearest to it, instead of split down to the band along
every edge of the face's triangles it spans; a piece outside that meets no triangle is settled
by no move (m = 0). A piece that half the band leaves against the solid (a frame wider than its
opening by just under the band, its head across the jamb's plane at the opening's corner) is
moved off the planes of the triangles nearest to its corners, then of those it meets so moved
(the jamb's, then the head's), each by as far as the piece lies behind it: where that move is
within the band it bounds the piece by its length, where splitting would have had to reach
pieces as small as the band's margin over the depth. A triangle the open part repeats (a
double-sided export) is one piece.

The triangle test (`gjkcli.engine.exact`) asks the bound before its own search for a point of
the open part deeper than the band where the surfaces cross within the band only (a window in
its opening): the bound, where it settles, shows there is no such point. The run's policy asks
again for the pairs left undecided (`gjkcli.pipeline.policy.sheet_verdict`). Each thread keeps
its last answer: asked again for the same two meshes (the same vertices and faces) at the same
poses and band, it is given back where the budget (PIECES) now would give the same (settled
within it, or the same budget run out).

Every piece settled: no point of the open surface lies deeper than the band inside the solid (by
more than the rounding, which `SheetDepth.upper` includes), so the pair is touching (within the
band) by the rule that would make it a collision. The distances
are exact point-triangle distances (Ericson 2005, 5.1.5) in floating point, in the solid's own
frame (its vertices less their box centre), so that parts far from the origin keep their digits.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from gjkcli.engine import _mesh
from gjkcli.engine.flatfaces import ConvexFaces
from gjkcli.tolerances import DEFAULT

__all__ = ["SheetDepth", "sheet_depth", "half_width", "point_triangle_distance", "capped", "open_crossing"]

# Pieces of the open surface examined before the bound gives up (the pair stays undecided): each
# costs a few closest-point queries and point-triangle distances.
PIECES = 200_000
# Crossings of the pieces with the solid's triangles listed per round, at most (8 per piece, and
# never more than this; beyond, no piece is taken for apart from the solid in that round).
CROSSINGS = 1_000_000
# The pose of the identity (R row by row, then t), for `_mesh.intersect`.
_IDENTITY = np.ascontiguousarray(np.concatenate([np.eye(3).ravel(), np.zeros(3)]))
# How far a piece lying on the solid's boundary is moved off it, as a fraction of the band: the
# depth bound it proves.
MOVE = 0.5
# Steps of false position on an edge in the search for its point on the depth's ridge (`_ridge`).
RIDGE_STEPS = 4
# Rounds of splitting, at most (a piece's side halves a round: 2^-30 of a triangle's side).
ROUNDS = 30


@dataclass(frozen=True)
class SheetDepth:
    """What `sheet_depth` proved.

    upper : float or None
        No point of the open surface lies deeper than this inside the solid (at most the band,
        or past it by twice the distances' rounding at most: a tie), None when it was not
        bounded within the band (see `deep` and `pieces`).
    deep : tuple or None
        (depth, point, nearest boundary point, face), world coordinates: a point of the open
        surface inside the solid deeper than the band, a collision's witness, and the open
        part's face it lies on.
    pieces : int
        Pieces of the surface examined.
    """

    upper: float | None
    deep: tuple | None
    pieces: int


def sheet_depth(sheet, solid, *, pose_sheet=None, pose_solid=None, band: float) -> SheetDepth:
    """Bound the depth of the open part `sheet` inside the closed part `solid`
    (`gjkcli.engine.exact.Mesh`, each placed by a rigid 4x4 pose, default as given), against
    the touching band `band` (model units), within PIECES pieces. See the module's docstring;
    the thread's last answer is given back when it holds (`_last`)."""
    budget = PIECES
    arrays = (sheet.vertices, sheet.faces, solid.vertices, solid.faces)
    key = (_pose_key(pose_sheet), _pose_key(pose_solid), float(band))
    last = getattr(_last, "answer", None)
    if last is not None and last[1] == key and all(map(_same, last[0], arrays)):
        got = last[3]
        # what this budget would answer: a bound or a deep point found within it, or the same
        # budget run out
        if ((got.upper is not None or got.deep is not None) and got.pieces <= budget) or last[2] == budget:
            return got
    got = _sheet_depth(sheet, solid, pose_sheet, pose_solid, float(band), budget)
    _last.answer = (arrays, key, budget, got)
    return got


# The thread's last answer of `sheet_depth`: ((the sheet's vertices and faces, the solid's), (the
# poses, the band), the budget, its SheetDepth). The answer is a function of these alone; the
# meshes are compared by their arrays (a run may build a part's mesh again between two asks).
_last = threading.local()


def half_width(solid) -> float:
    """No point lies deeper inside the closed mesh `solid` than this: half its least width
    across the directions tried (its frame's axes and its vertices' principal axes). A point
    inside lies between the two planes that bound the solid across a direction, and the way to
    the nearer plane, at most half their distance, leaves the solid."""
    local = solid.vertices[solid.used] - solid.centre
    spread = local - local.mean(axis=0)
    _, axes = np.linalg.eigh(spread.T @ spread)
    widths = np.ptp(local @ np.concatenate([np.eye(3), axes], axis=1), axis=0)
    return 0.5 * float(widths.min())


def _pose_key(pose):
    """A pose as a key: None, or its 16 numbers' bytes."""
    return None if pose is None else np.asarray(pose, dtype=np.float64).tobytes()


def _same(x: np.ndarray, y: np.ndarray) -> bool:
    return x is y or (x.shape == y.shape and x.dtype == y.dtype and bool(np.array_equal(x, y)))


def _sheet_depth(sheet, solid, pose_sheet, pose_solid, band: float, budget: int) -> SheetDepth:
    """`sheet_depth` itself, within `budget` pieces."""
    # what floating point may miss by: the rounding of the frame change and the distances
    slack = DEFAULT.exact_snap_rel * max(solid.size, sheet.size)
    # a solid thin beside the band settles every piece at once, before the sheet's triangles
    # are told apart and placed (a small part against a sheet a million times its size, whose
    # band it fits in)
    thin = half_width(solid)
    if thin <= band + slack:
        return SheetDepth(upper=thin + slack, deep=None, pieces=0)
    Rs, ts = _placed(pose_sheet)
    Rb, tb = _placed(pose_solid)
    ws = _mesh.Workspace()
    # the sheet's triangles in the solid's own frame: x_local = Rb^T (x_world - tb) - centre
    # each triangle of the sheet once, however often the file repeats it (its corners told
    # apart by their coordinates, whichever vertices hold them)
    _, same = np.unique(sheet.vertices, axis=0, return_inverse=True)
    faces = np.unique(np.sort(same.reshape(-1)[sheet.faces], axis=1), axis=0, return_index=True)[1]
    world = sheet.vertices[sheet.faces[faces]] @ Rs.T + ts
    live = (world - tb) @ Rb - solid.centre
    lo, hi = solid.local_lo - band, solid.local_hi + band
    inside_box = np.all((live.max(axis=1) >= lo) & (live.min(axis=1) <= hi), axis=1)
    origin = faces[inside_box]  # each piece's face of the sheet
    live = np.ascontiguousarray(live[inside_box])
    local_tris = solid.vertices[solid.faces] - solid.centre
    upper, pieces = 0.0, 0
    solid.bvh.prepare_winding()
    # the boundary triangles' outward normals (unit; 0 for a triangle of no area)
    cross = np.cross(local_tris[:, 1] - local_tris[:, 0], local_tris[:, 2] - local_tris[:, 0])
    norm = np.linalg.norm(cross, axis=1)
    volume = float(np.einsum("ij,ij->i", local_tris[:, 0], cross).sum())
    outward = np.where(norm[:, None] > 0, cross / np.where(norm > 0, norm, 1.0)[:, None], 0.0)
    outward *= 1.0 if volume >= 0 else -1.0
    flat = None  # the solid's flat faces, made when a piece first needs them
    for _ in range(ROUNDS):
        if len(live) == 0:
            return SheetDepth(upper=upper, deep=None, pieces=pieces)
        pieces += len(live)
        if pieces > budget:
            break
        k = len(live)
        corners = live.reshape(-1, 3)
        near_dist, _, tri = _mesh.closest(solid.bvh, corners, float("inf"), 0.0, ws)
        tri, near_dist = tri.reshape(k, 3), near_dist.reshape(k, 3)
        # bound[k] = min over the corners' nearest triangles T of max over corners of d(corner, T);
        # a corner's distance to its own nearest triangle is known, and a triangle nearest to
        # two corners is tried once
        # (the point-triangle distances of every corner and triangle asked, in one call: a round's
        # few hundred pieces cost the call's overhead, not its arithmetic)
        asked = [np.flatnonzero(np.ones(k, dtype=bool) if c == 0 else np.all(tri[:, [c]] != tri[:, :c], axis=1))
                 for c in range(3)]
        others = [[q for q in range(3) if q != c] for c in range(3)]
        d = point_triangle_distance(
            np.concatenate([live[rows, q] for rows, qs in zip(asked, others) for q in qs]),
            np.concatenate([local_tris[tri[rows, c]] for c, rows in enumerate(asked) for _ in range(2)]))
        bound = np.full(k, np.inf)
        at = 0
        for c, rows in enumerate(asked):
            r = len(rows)
            bound[rows] = np.minimum(bound[rows], np.maximum(np.maximum(near_dist[rows, c], d[at:at + r]),
                                                             d[at + r:at + 2 * r]))
            at += 2 * r
        # a piece over two triangles of one flat face, or across the middle of a slab: the
        # face's distance where it is a convex polygon, and means of two sets' distances
        # (`gjkcli.engine.flatfaces`), bound it as no one triangle does
        over = np.flatnonzero(bound > band + slack)
        if len(over):
            if flat is None:
                flat = ConvexFaces(local_tris, outward, solid.faces, solid.size)
            bound[over] = np.minimum(bound[over], flat.bound(live[over], tri[over], point_triangle_distance))
        done = bound <= band + slack
        if done.any():
            upper = max(upper, float((bound[done] + slack).max()))
        rest = np.flatnonzero(~done)
        if len(rest) == 0:
            return SheetDepth(upper=upper, deep=None, pieces=pieces)
        piece = live[rest]
        centroid = piece.mean(axis=1)
        reach = np.sqrt(((piece - centroid[:, None, :]) ** 2).sum(axis=2).max(axis=1))
        dist, near, mid_tri = _mesh.closest(solid.bvh, centroid, float("inf"), 0.0, ws)
        apart = _apart(solid, piece, ws)
        # the side of a centroid (the winding number, the costly query) is asked only where it
        # decides something: a piece apart from the boundary (wholly outside?), a centroid
        # farther than the band (a collision?), one whose piece the Lipschitz bound settles only
        # outside; elsewhere neither side is taken
        ask = apart | (dist > band + slack) | ((dist + reach + slack > band) & (reach - dist + slack <= band))
        inside, outside = np.zeros(len(piece), dtype=bool), np.zeros(len(piece), dtype=bool)
        inside[ask] = np.abs(_mesh.winding(solid.bvh, np.ascontiguousarray(centroid[ask]), ws)) \
            > DEFAULT.winding_inside
        outside[ask] = ~inside[ask]
        # a piece outside that meets no triangle of the solid has no point inside (no move); one
        # that does may lie on the boundary: moved off it along the outward normals of the
        # triangles nearest to it, wholly outside, no point of it is deeper than the move
        out = outside & apart
        if out.any():
            upper = max(upper, slack)
        move = MOVE * band
        if move + slack <= band:
            # (a centroid deeper than the move stays inside after it)
            ways = (outward[mid_tri], outward[tri[rest]].sum(axis=1) + outward[mid_tri])
            for way in ways:
                ask = np.flatnonzero(~out & ~(inside & (dist > move)))
                if len(ask) == 0:
                    break
                length = np.linalg.norm(way[ask], axis=1)
                step = np.where(length > 0, move / np.where(length > 0, length, 1.0), 0.0)
                moved = piece[ask] + (step[:, None] * way[ask])[:, None, :]
                off = _off(solid, moved, ws)
                if off.any():
                    out[ask[off]] = True
                    upper = max(upper, move + slack)
            # a piece that move leaves against the solid (a window's frame sunk into its wall
            # by just under the band, at the corner of the opening's head and jamb): moved off
            # the planes of the triangles nearest to its corners and centroid, each by as much
            # as the piece lies behind it and a thousandth of the band more (clear of the
            # plane, not on it), where that is within the band
            ask = np.flatnonzero(~out & ~(inside & (dist > band)))
            if len(ask):
                way = _off_planes(solid, piece[ask], np.column_stack([tri[rest][ask], mid_tri[ask]]),
                                  local_tris, outward, max(4.0 * slack, 1e-3 * band), ws)
                length = np.linalg.norm(way, axis=1)
                fits = np.flatnonzero((length > 0) & (length <= band + slack))
                if len(fits):
                    moved = piece[ask[fits]] + way[fits][:, None, :]
                    off = _off(solid, moved, ws)
                    if off.any():
                        out[ask[fits[off]]] = True
                        upper = max(upper, float(length[fits[off]].max()) + slack)
        if out.any():
            keep = ~out
            piece, centroid, reach, dist, near, inside, outside = (
                piece[keep], centroid[keep], reach[keep], dist[keep], near[keep], inside[keep], outside[keep])
            rest = rest[keep]
        to_world = lambda p: (p + solid.centre) @ Rb.T + tb  # noqa: E731
        deep = inside & (dist > band + slack)
        if deep.any():
            q = int(np.flatnonzero(deep)[np.argmax(dist[deep])])
            return SheetDepth(upper=None, deep=(float(dist[q]), to_world(centroid[q]), to_world(near[q]),
                                                int(origin[rest[q]])), pieces=pieces)
        # the deepest points of a piece across a ridge of the depth (the middle of a slab) lie
        # where two boundary triangles are as near: asked on the pieces' edges, they prove a
        # collision a hair past the band that no centroid comes near enough to
        # (not a piece whose centroid's side, depth and reach keep every point within the band:
        # `lipschitz` below settles those)
        reaches = np.flatnonzero(np.where(outside, reach - dist, dist + reach) > band + slack)
        points, rows = _ridge(piece[reaches], tri[rest[reaches]], local_tris)
        rows = reaches[rows]
        if len(points):
            far, near_ridge, _ = _mesh.closest(solid.bvh, points, float("inf"), 0.0, ws)
            ask = np.flatnonzero(far > band + slack)
            if len(ask):
                ask = ask[np.abs(_mesh.winding(solid.bvh, np.ascontiguousarray(points[ask]), ws))
                          > DEFAULT.winding_inside]
            if len(ask):
                q = int(ask[np.argmax(far[ask])])
                return SheetDepth(upper=None, deep=(float(far[q]), to_world(points[q]), to_world(near_ridge[q]),
                                                    int(origin[rest[rows[q]]])), pieces=pieces)
        # the depth is 1-Lipschitz: within reach of a centroid inside at depth dist, at most
        # dist + reach; of one outside, at most reach - dist (the way in crosses the boundary);
        # of one on a side not asked, at most dist + reach
        lipschitz = np.where(outside, reach - dist, dist + reach)
        settled = lipschitz <= band + slack
        if settled.any():
            upper = max(upper, float(np.maximum(lipschitz[settled] + slack, 0.0).max()))
        live = _split4(piece[~settled])
        origin = np.repeat(origin[rest][~settled], 4)
    return SheetDepth(upper=None, deep=None, pieces=pieces)


def _ridge(pieces: np.ndarray, near: np.ndarray, tris: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """((n, 3) points, (n,) their pieces): on each edge of a piece (k, 3, 3) whose corners have
    other nearest boundary triangles (`near` (k, 3), of `tris`), the point as near to the one
    as to the other (RIDGE_STEPS of false position: exact where both are a plane's), where the
    depth has its ridge across the edge. Points of the pieces: a collision's witness where one
    is inside deeper than the band."""
    ends = np.array([(0, 1), (1, 2), (2, 0)])
    r, e = np.nonzero(near[:, ends[:, 0]] != near[:, ends[:, 1]])  # (piece, edge) of every such edge
    if not len(r):
        return np.zeros((0, 3)), np.zeros(0, dtype=np.int64)
    a, b = ends[e, 0], ends[e, 1]
    p0, step = pieces[r, a], pieces[r, b] - pieces[r, a]
    t0, t1 = tris[near[r, a]], tris[near[r, b]]

    def f(s):  # d(p(s), t0) - d(p(s), t1): at most 0 at s = 0, at least 0 at 1
        at = p0 + s[:, None] * step
        return point_triangle_distance(at, t0) - point_triangle_distance(at, t1)

    def guess(lo, hi, f_lo, f_hi):  # where the chord from (lo, f_lo) to (hi, f_hi) is 0
        span = f_hi - f_lo
        return np.clip(np.where(span > 0, lo - f_lo * (hi - lo) / np.where(span > 0, span, 1.0), lo), lo, hi)

    lo, hi = np.zeros(len(r)), np.ones(len(r))
    f_lo, f_hi = f(lo), f(hi)
    for _ in range(RIDGE_STEPS):
        s = guess(lo, hi, f_lo, f_hi)
        got = f(s)
        first = got <= 0
        lo, f_lo = np.where(first, s, lo), np.where(first, got, f_lo)
        hi, f_hi = np.where(first, hi, s), np.where(first, f_hi, got)
    s = guess(lo, hi, f_lo, f_hi)
    return np.ascontiguousarray(p0 + s[:, None] * step), r


def capped(mesh):
    """(the mesh with each hole closed, the caps alone) as `gjkcli.engine.exact.Mesh`es, or None.

    A hole is a loop of boundary edges (each used by one face); it is closed by a fan of
    triangles from the loop's centroid, wound against the loop's faces so that the closed mesh
    is oriented. None when the boundary is not simple loops (a vertex on two holes) or the
    closed mesh is not a solid. The caps are surfaces the part does not have: a point inside
    the closed mesh is inside the part as far as no cap is nearer than the part's surface."""
    from gjkcli.engine.exact import Mesh

    f = mesh.faces
    directed = np.concatenate([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]])
    n = len(mesh.vertices)
    key = directed[:, 0] * n + directed[:, 1]
    reverse = directed[:, 1] * n + directed[:, 0]
    boundary = directed[~np.isin(reverse, key)]
    if len(boundary) == 0 or len(np.unique(boundary[:, 0])) != len(boundary):
        return None
    following = dict(zip(boundary[:, 0].tolist(), boundary[:, 1].tolist()))
    vertices, caps = [mesh.vertices], []
    extra = n
    while following:
        start, loop = next(iter(following)), []
        u = start
        while u in following:
            loop.append(u)
            u = following.pop(u)
        if u != start or len(loop) < 3:
            return None
        vertices.append(mesh.vertices[loop].mean(axis=0)[None])
        ring = np.array(loop)
        # the faces run u -> v along the loop; the cap runs v -> u
        caps.append(np.column_stack([np.roll(ring, -1), ring, np.full(len(ring), extra)]))
        extra += 1
    v = np.concatenate(vertices)
    cap = np.concatenate(caps)
    closed = Mesh(v, np.concatenate([f, cap]), name=mesh.name)
    if not closed.solid:
        return None
    return closed, Mesh(v, cap, name=f"{mesh.name} (caps)")


def open_crossing(a, b, *, pose_a=None, pose_b=None, band: float):
    """A collision of two parts neither of which bounds a volume (open surfaces), proved by a
    point: (depth, point, nearest point, "a in b" or "b in a") or None.

    Close B's holes (`capped`): a point p of A inside the closed B farther than the band from its
    boundary stays inside after any move of A within the band, and a point of the same body of
    A outside it farther than the band stays outside; so after any such move A's surface still
    crosses the closed B's boundary, and where no cap lies within the band of A that crossing is
    through B's own surface: the surfaces cannot be parted by a move within the band. Then the
    other way round (A closed, B's point)."""
    from gjkcli.engine.exact import exact_query

    for inner, outer, pin, pout, which in ((a, b, pose_a, pose_b, "a in b"), (b, a, pose_b, pose_a, "b in a")):
        closed = capped(outer)
        if closed is None:
            continue
        solid, caps = closed
        got = sheet_depth(inner, solid, pose_sheet=pin, pose_solid=pout, band=band)
        if got.deep is None:
            continue
        depth, point, near, face = got.deep
        if not _reaches_out(inner, solid, pin, pout, face, band):
            continue
        apart = exact_query(inner, caps, pose_a=pin, pose_b=pout, tolerance=band, want="distance")
        if apart.distance_lower > 2.0 * band:
            return depth, point, near, which
    return None


def _reaches_out(inner, solid, pose_inner, pose_solid, face: int, band: float) -> bool:
    """A vertex of the body of `inner` holding `face` lies outside `solid` (placed), farther
    than the band from its boundary."""
    Ri, ti = _placed(pose_inner)
    Rs, ts = _placed(pose_solid)
    body = inner.face_bodies()
    used = np.unique(inner.faces[body == body[face]])
    local = ((inner.vertices[used] @ Ri.T + ti) - ts) @ Rs - solid.centre
    ws = _mesh.Workspace()
    dist, _, _ = _mesh.closest(solid.bvh, np.ascontiguousarray(local), float("inf"), 0.0, ws)
    far = np.flatnonzero(dist > 2.0 * band)
    if len(far) == 0:
        return False
    solid.bvh.prepare_winding()
    w = _mesh.winding(solid.bvh, np.ascontiguousarray(local[far[:64]]), ws)
    return bool((np.abs(w) <= DEFAULT.winding_inside).any())


def _apart(solid, pieces: np.ndarray, ws) -> np.ndarray:
    """(k,) bool: each piece (k, 3, 3), the solid's frame, shares no point with any triangle of
    the solid (the triangle test's `tri_tri_intersect`, which counts touching as meeting). A
    piece of no area answers no; so do all where the crossings found outnumber CROSSINGS."""
    k = len(pieces)
    apart = np.zeros(k, dtype=bool)
    if k == 0:
        return apart
    area = np.linalg.norm(np.cross(pieces[:, 1] - pieces[:, 0], pieces[:, 2] - pieces[:, 0]), axis=1)
    flat = area <= DEFAULT.degenerate_rel * max(solid.size, 1e-300) ** 2
    bvh = _mesh.BVH(np.ascontiguousarray(pieces.reshape(-1, 3)),
                    np.arange(3 * k, dtype=np.int32).reshape(k, 3), 1)
    cap = min(CROSSINGS, 8 * k + 64) + 1
    *_, pairs = _mesh.intersect(solid.bvh, bvh, _IDENTITY, 0.0, float("inf"), 0.0, ws, cap)
    if len(pairs) >= cap:
        return apart
    apart[:] = True
    apart[pairs[:, 1]] = False
    return apart & ~flat


def _off(solid, moved: np.ndarray, ws) -> np.ndarray:
    """(k,) bool: each moved piece (k, 3, 3) shares no point with the solid's triangles and its
    centroid lies outside: the piece lies wholly outside the solid."""
    off = _apart(solid, moved, ws)
    off[off] = np.abs(_mesh.winding(solid.bvh, np.ascontiguousarray(moved[off].mean(axis=1)), ws)) \
        <= DEFAULT.winding_inside
    return off


def _off_planes(solid, pieces: np.ndarray, near: np.ndarray, tris: np.ndarray, outward: np.ndarray,
                margin: float, ws) -> np.ndarray:
    """(k, 3) a move of each piece (k, 3, 3) that puts its corners `margin` or more on the outer
    side of the plane of each of its triangles `near` (k, m) (the solid's `tris`, their unit
    `outward` normals) and of the triangles nearest to its corners once so moved (a piece
    moved off a jamb comes to lie against the head it met at the corner): along each distinct
    normal, by how far the piece's deepest corner lies short of that plane; the sum, exact where
    the normals are orthogonal, and whatever it is, tried by `_off` before it is believed."""
    k = len(pieces)
    for again in (True, False):
        n = outward[near]  # (k, m, 3)
        offset = np.einsum("kmi,kmi->km", n, tris[near][:, :, 0])
        side = np.einsum("kci,kmi->kcm", pieces, n) - offset[:, None, :]  # each corner's, each plane's
        short = np.maximum(margin - side.min(axis=1), 0.0)  # (k, m)
        # a normal met twice (coplanar triangles) counts once, at the larger shortfall
        for j in range(1, near.shape[1]):
            for i in range(j):
                same = np.einsum("ki,ki->k", n[:, i], n[:, j]) > 1.0 - 1e-12
                short[same, i] = np.maximum(short[same, i], short[same, j])
                short[same, j] = 0.0
        way = np.einsum("km,kmi->ki", short, n)
        if again:
            moved = (pieces + way[:, None, :]).reshape(-1, 3)
            _, _, met = _mesh.closest(solid.bvh, np.ascontiguousarray(moved), float("inf"), 0.0, ws)
            near = np.column_stack([near, met.reshape(k, 3)])
    return way


def _placed(pose):
    """(R (3, 3), t (3,)) of a rigid 4x4 pose the triangle test has checked; identity for None."""
    if pose is None:
        return np.eye(3), np.zeros(3)
    T = np.asarray(pose, dtype=np.float64)
    return T[:3, :3], T[:3, 3]


def _split4(tris: np.ndarray) -> np.ndarray:
    """(k, 3, 3) triangles -> (4k, 3, 3), each cut at its edges' midpoints."""
    a, b, c = tris[:, 0], tris[:, 1], tris[:, 2]
    ab, bc, ca = 0.5 * (a + b), 0.5 * (b + c), 0.5 * (c + a)
    return np.ascontiguousarray(np.stack([
        np.stack([a, ab, ca], axis=1), np.stack([ab, b, bc], axis=1),
        np.stack([ca, bc, c], axis=1), np.stack([ab, bc, ca], axis=1)], axis=1).reshape(-1, 3, 3))


def point_triangle_distance(p: np.ndarray, tri: np.ndarray) -> np.ndarray:
    """(k,) distance from each point p (k, 3) to its triangle tri (k, 3, 3): the closest point by
    the triangle's Voronoi regions (Ericson 2005, 5.1.5, `ClosestPtPointTriangle`), vectorized."""
    a, b, c = tri[:, 0], tri[:, 1], tri[:, 2]
    ab, ac, ap = b - a, c - a, p - a
    dot = lambda u, v: np.einsum("ij,ij->i", u, v)  # noqa: E731
    d1, d2 = dot(ab, ap), dot(ac, ap)
    bp = p - b
    d3, d4 = dot(ab, bp), dot(ac, bp)
    cp = p - c
    d5, d6 = dot(ab, cp), dot(ac, cp)
    va = d3 * d6 - d5 * d4
    vb = d5 * d2 - d1 * d6
    vc = d1 * d4 - d3 * d2
    # the face region by default: barycentric (1 - v - w, v, w)
    denom = va + vb + vc
    with np.errstate(divide="ignore", invalid="ignore"):
        v = np.where(denom != 0, vb / denom, 0.0)
        w = np.where(denom != 0, vc / denom, 0.0)
        closest = a + ab * v[:, None] + ac * w[:, None]
        # edge bc region
        t_bc = np.clip((d4 - d3) / ((d4 - d3) + (d5 - d6)), 0.0, 1.0)
        on_bc = (va <= 0) & (d4 - d3 >= 0) & (d5 - d6 >= 0)
        closest = np.where(on_bc[:, None], b + (c - b) * t_bc[:, None], closest)
        # edge ac region
        t_ac = np.clip(d2 / (d2 - d6), 0.0, 1.0)
        on_ac = (vb <= 0) & (d2 >= 0) & (d6 <= 0)
        closest = np.where(on_ac[:, None], a + ac * t_ac[:, None], closest)
        # edge ab region
        t_ab = np.clip(d1 / (d1 - d3), 0.0, 1.0)
        on_ab = (vc <= 0) & (d1 >= 0) & (d3 <= 0)
        closest = np.where(on_ab[:, None], a + ab * t_ab[:, None], closest)
    # vertex regions, last so that they win where a degenerate case overlaps an edge's
    closest = np.where(((d6 >= 0) & (d5 <= d6))[:, None], c, closest)
    closest = np.where(((d3 >= 0) & (d4 <= d3))[:, None], b, closest)
    closest = np.where(((d1 <= 0) & (d2 <= 0))[:, None], a, closest)
    return np.linalg.norm(p - closest, axis=1)
