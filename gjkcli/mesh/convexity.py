"""Is a part its own convex hull? Within the touching band for verdicts (`hull_gaps`), within a
fraction of its size for the words a report gives (`convexity`).

trimesh's ``is_convex`` tests every edge against an absolute planar tolerance and says False for
the Panda arm's collision meshes in ../shared/robots/panda, which fill their hulls to within 3e-4
of the volume but have a few edges that bend inward by a hair. Here a part is convex when its hull
adds nothing a collision check could notice: its surface lies on its hull's surface within a small
fraction of its size.

Criterion (`Convexity.convex`; D is the bounding-box diagonal of the vertices the faces use;
the fractions are gjkcli/tolerances.py's convex_* fields)
--------------------------------------------------------------------------------------------
- Solid parts (thickness above ``convex_flat_rel * D``): every sampled surface point (vertices,
  edge midpoints, face centroids) lies within ``convex_depth_rel * D`` of the hull boundary. As
  the depth below the hull boundary is a concave function of position, a triangle's centroid is
  at least a third as deep as its deepest point, so the whole surface then lies within
  ``3 * convex_depth_rel * D``: this catches narrow slots and dents that cost little volume.
  And, for a closed part (one watertight, consistently wound body), its volume is at least
  ``1 - convex_volume_rel`` of the hull's; any other part (open, several bodies, inconsistent
  winding) must instead *be* its hull's surface: its area within ``convex_area_rel`` of the hull
  boundary's area (an open box, a part with a cavity or two touching bodies fail).
- Flat parts (all vertices within ``convex_flat_rel * D`` of a plane): the triangles' total area
  is the hull polygon's area within ``convex_area_rel``, once (one-sided) or twice (two-sided
  plate). Overlapping triangles are not detected.
- Collinear or single-point parts: convex when they form one body.

Measured on ../shared: the Panda links have volume ratios 0.99966-0.99998 and reflex creases at
most 1.1e-3 D deep (link3), ballA.off 0.99997 and 4.7e-4 D, so they are convex;
1002_tray_bottom.STL (0.990) and the UR5 links (base 0.850; the others are several bodies each)
are not.

What it means for a verdict: nothing, any more. `convexity` measures how close a part is to its
hull for the one-line reason a report gives. Whether a hull verdict stands for a part is
`hull_gaps`' question, within the pair's touching band (a 10-unit part with a pocket 0.02 deep is
within 2e-3 of its size of its hull, and its hull's verdicts are still wrong for it); the policy
in gjkcli/pipeline/policy.py reads it.

Import cost: numpy and gjkcli.mesh.load (itself numpy only); scipy on the first call.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# The loader's own definitions of "watertight" and "bodies" (gjkcli.mesh.load.Part), so that flags
# computed here from bare faces agree with a loaded part's.
from gjkcli.errors import one_line
from gjkcli.engine.topology import oriented, topology
from gjkcli.mesh.load import merge_solids
from gjkcli.tolerances import DEFAULT

__all__ = ["Convexity", "convexity", "is_convex", "hull_gaps", "part_verdicts", "part_reason",
           "part_reasons", "FAST_REASON"]



@dataclass(frozen=True)
class Convexity:
    """How far a part is from its convex hull; see the module docstring for the criterion.

    Attributes
    ----------
    convex : bool
    dimension : int
        Affine dimension of the vertices: 3 solid, 2 flat, 1 collinear, 0 one point (or no
        triangles).
    volume_ratio : float
        Part volume over hull volume; NaN unless the part is closed (one watertight,
        consistently wound body) and solid.
    area_ratio : float
        Part surface area over hull boundary area (for a flat part: over the hull polygon's
        area); NaN for dimension < 2.
    depth : float
        Deepest sampled point of the part's surface inside the hull (vertices, edge midpoints,
        face centroids), as a fraction of the part's bounding-box diagonal; the surface lies
        within 3 * depth of the hull boundary everywhere. Exact when above
        DEFAULT.convex_depth_rel, where the search stops (so a lower bound of the deepest); below
        it possibly an upper bound
        (see `_max_depth`); NaN where not measured (the part failed before).
    reason : str
        One line saying why the part is or is not convex.
    """

    convex: bool
    dimension: int
    volume_ratio: float
    area_ratio: float
    depth: float
    reason: str


def is_convex(vertices, faces, *, watertight: bool | None = None,
              bodies: int | None = None) -> bool:
    """Whether a mesh is, to a tight tolerance, its own convex hull; see `convexity`."""
    return convexity(vertices, faces, watertight=watertight, bodies=bodies).convex


def convexity(vertices, faces, *, watertight: bool | None = None,
              bodies: int | None = None, hull_points: int | None = None) -> Convexity:
    """Measure how far a mesh is from its convex hull, and decide whether it is convex.

    Parameters
    ----------
    vertices : (n, 3) float64
        Copies of a vertex merged, as gjkcli.mesh.load does (unmerged, no edge is shared: the part
        is then judged as open, by area alone). Vertices no face uses are ignored.
    faces : (m, 3) int
    watertight : bool, optional
        Every edge shared by exactly two faces; computed from `faces` when not given (pass
        gjkcli.mesh.load.Part.watertight when known).
    bodies : int, optional
        Number of bodies, triangles joined by edges that exactly two distinct triangles share;
        computed from `faces` when not given (pass gjkcli.mesh.load.Part.bodies when known).
    hull_points : int, optional
        The most points whose hull the compiled core builds here, else qhull (default
        `gjkcli.engine.shapes.SMALL_HULL_POINTS`; a mesh several parts place, measured once for
        them all: SHARED_HULL_POINTS).

    Returns
    -------
    Convexity
    """
    vertices = np.asarray(vertices, dtype=np.float64).reshape(-1, 3)
    faces = np.asarray(faces, dtype=np.int64).reshape(-1, 3)
    if len(faces) == 0:
        return _verdict(False, 0, "no triangles")
    vertices, faces = _used(vertices, faces)
    if watertight is None or bodies is None:
        _, found, open_face = topology(faces, len(vertices))
        watertight = not open_face.any() if watertight is None else watertight
        bodies = found if bodies is None else bodies
    mesh = _Surface(vertices, faces, bool(watertight), int(bodies))
    diagonal = float(np.linalg.norm(vertices.max(axis=0) - vertices.min(axis=0)))
    if diagonal == 0.0:
        return _verdict(mesh.bodies == 1, 0, "a single point")
    axes, extents = _principal_extents(vertices)
    if extents[2] > DEFAULT.convex_flat_rel * diagonal:
        return _solid_convexity(mesh, diagonal, hull_points)
    if extents[1] > DEFAULT.convex_flat_rel * diagonal:
        return _flat_convexity(mesh, axes[:2])
    return _verdict(mesh.bodies == 1, 1, "collinear" + ("" if mesh.bodies == 1 else
                                                          f", {mesh.bodies} separate bodies"))


# -- many parts at once: is each part its hull, and within what? -------------------------------

# The reason `part_verdicts` gives for a part whose hull gap lies within its touching band.
FAST_REASON = "its faces lie on its hull's surface (within the touching band)"
# Parts per chunk of `hull_gaps`: arrays stay in cache.
_CHUNK = 2000


# A part whose faces lie farther than this share of its size inside its hull, though they cover
# the hull's area, is asked whether it is wound inwards (`_face_gaps`).
INWARD_REL = 1e-6


def hull_gaps(hulls, faces, vertices, turned: np.ndarray | None = None) -> np.ndarray:
    """(n,) float: how far each part's faces lie inside its hull; inf when it is not its hull.

    hulls : gjkcli.engine.shapes.Hulls of the parts' vertices (`build_hulls`)
    faces, vertices : sequences of each part's (m_i, 3) triangles and (n_i, 3) world vertices

    A part coincides with its hull within g (its gap) when its triangles cover the hull's
    surface: each triangle lies in a supporting plane of the hull up to g (its unit normal n,
    from its winding, has max over hull vertices of n.v - n.a <= g, a a corner: every point of
    the triangle is then within g of the hull's boundary), and the triangles' total area equals
    the hull's (qhull's) to `DEFAULT.hull_area_rel`, so no face is missing and none is doubled: the part is
    closed and fills its hull. Parts with a flat hull (or none), and parts whose triangles do
    not cover the hull (a pocket, a cavity, an open box) get inf.

    A flat part (a plate, a single triangle) is its hull, the polygon, when its triangles cover
    the polygon's area once or twice (two-sided) and lie in its plane; a part whose triangles
    have no area (a segment or a point) is its hull. Its gap is then 0.

    A hull verdict stands for a pair when both gaps lie within the pair's touching band: the
    parts then coincide with their hulls as far as any verdict can tell (the pipeline's policy).
    A part wound inwards is read with its faces turned (`_face_gaps`); `turned`, an (n,) bool
    array, is set True for those whose turned faces cover their hull (its gap finite): read as
    the solid they enclose.

    The supporting-plane test costs (triangles x hull vertices) per part; it runs in C for small
    parts (every face against every hull vertex, gjkcli/engine/csrc/gaps.c), and through the
    engine's support map (hill climbing in C) for large parts. Parts go through in chunks of a
    few thousand.
    """
    from gjkcli.errors import ShapeError

    n = len(hulls.shapes)
    gaps = np.full(n, np.inf)
    solid = [k for k in range(n) if not isinstance(hulls.shapes[k], ShapeError)
             and hulls.shapes[k].dimension == 3 and np.isfinite(hulls.area[k])]
    for k in range(n):
        shape = hulls.shapes[k]
        if not isinstance(shape, ShapeError) and shape.dimension < 3:
            gaps[k] = _flat_gap(shape, faces[k], vertices[k])
    for c in range(0, len(solid), _CHUNK):
        chunk = solid[c: c + _CHUNK]
        turn: list = []
        gaps[chunk] = _face_gaps([hulls.shapes[k] for k in chunk], hulls.area[chunk],
                                 [faces[k] for k in chunk], [vertices[k] for k in chunk], turn)
        if turned is not None:
            for k in turn:
                turned[chunk[k]] = bool(np.isfinite(gaps[chunk[k]]))
    return gaps


def _flat_gap(shape, faces, vertices) -> float:
    """`hull_gaps` of one part whose hull is a polygon (its vertices in ring order), a segment
    or a point: 0 when the triangles cover it once or twice, else inf."""
    if shape.dimension < 2:
        return 0.0
    ring = shape.vertices
    polygon = 0.5 * float(np.linalg.norm(np.cross(ring, np.roll(ring, -1, axis=0)).sum(axis=0)))
    t = np.asarray(vertices, dtype=np.float64)[np.asarray(faces, dtype=np.int64)]
    area = 0.5 * float(np.linalg.norm(np.cross(t[:, 1] - t[:, 0], t[:, 2] - t[:, 0]), axis=1).sum())
    cover = area / polygon if polygon > 0 else np.inf
    sides = round(cover) if np.isfinite(cover) else 0
    ok = sides in (1, 2) and abs(cover - sides) <= DEFAULT.hull_area_rel * sides
    return 0.0 if ok else np.inf


def _face_gaps(shapes, hull_area, faces, vertices, turned: list | None = None) -> np.ndarray:
    """(m,) float: `hull_gaps` for solid hulls `shapes` of meshes (faces, vertices); `turned`
    (a list) takes the parts read with their faces turned.

    A part wound inwards (a negative volume: some IFC writers' coverings and doors) is read with
    its faces turned, as the triangle test reads it (`gjkcli.engine.exact.Mesh.outward`): the
    supporting-plane test takes each face's normal from its winding. Only the parts that cover
    their hull's area but whose faces the test finds inside it by more than INWARD_REL of its
    size (the square root of the hull's area) are asked (a convex part wound inwards finds its
    faces a whole width inside), so the parts that pass pay nothing."""
    gaps = _winding_gaps(shapes, hull_area, faces, vertices)
    ask = np.flatnonzero(np.isfinite(gaps) & (gaps > INWARD_REL * np.sqrt(hull_area)))
    if len(ask):
        turn = ask[_inward([vertices[k] for k in ask.tolist()], [faces[k] for k in ask.tolist()],
                           np.stack([shapes[k].translation for k in ask.tolist()]))]
        if len(turn):
            if turned is not None:
                turned.extend(turn.tolist())
            gaps[turn] = _winding_gaps([shapes[k] for k in turn.tolist()], hull_area[turn],
                                       [np.asarray(faces[k]).reshape(-1, 3)[:, ::-1] for k in turn.tolist()],
                                       [vertices[k] for k in turn.tolist()])
    return gaps


def _winding_gaps(shapes, hull_area, faces, vertices) -> np.ndarray:
    """`_face_gaps` with each face's normal taken from its winding as given."""
    from gjkcli.engine._mesh import face_gaps

    solid = range(len(shapes))
    n_tri = np.fromiter((len(faces[k]) for k in solid), dtype=np.int64, count=len(shapes))
    n_ver = np.fromiter((len(vertices[k]) for k in solid), dtype=np.int64, count=len(shapes))
    n_hull = np.fromiter((s.n_vertices for s in shapes), dtype=np.int64, count=len(shapes))
    v_starts = np.concatenate([[0], np.cumsum(n_ver)[:-1]])
    t_starts = np.concatenate([[0], np.cumsum(n_tri)[:-1]])
    V = np.concatenate([np.asarray(vertices[k], dtype=np.float64).reshape(-1, 3) for k in solid])
    F = np.concatenate([np.asarray(faces[k], dtype=np.int64).reshape(-1, 3) for k in solid])
    F += np.repeat(v_starts, n_tri)[:, None]
    translation = np.stack([s.translation for s in shapes])
    small = (n_hull <= 256) & (n_tri <= 4096)
    # the face planes, the areas and, for small parts, every face against every hull vertex, in C
    # (gjkcli/engine/csrc/gaps.c); a face without area adds 0
    H = np.concatenate([shapes[k].vertices for k in np.flatnonzero(small).tolist()] or [np.zeros((0, 3))])
    h_small = np.where(small, np.concatenate([[0], np.cumsum(np.where(small, n_hull, 0))[:-1]]), 0)
    mesh_area, gaps = face_gaps(V, F, t_starts, n_tri, translation, hull_area, DEFAULT.hull_area_rel,
                                H, h_small, np.where(small, n_hull, 0), small)
    covered = np.abs(mesh_area - hull_area) <= DEFAULT.hull_area_rel * hull_area
    large = np.flatnonzero(covered & ~small)
    gaps[~covered] = np.inf
    if len(large):
        from gjkcli.engine.query import support

        for s in large.tolist():
            T = F[t_starts[s]: t_starts[s] + n_tri[s]]
            a = V[T[:, 0]]
            cross = np.cross(V[T[:, 1]] - a, V[T[:, 2]] - a)
            twice = np.linalg.norm(cross, axis=1)
            keep = twice > 0  # faces without area have no plane, and add nothing
            normal = cross[keep] / twice[keep, None]
            offset = np.einsum("ij,ij->i", normal, a[keep] - translation[s])
            shape = shapes[s]
            pts, _, _ = support(shape, np.ascontiguousarray(normal))
            gap = np.einsum("ij,ij->i", normal, pts - shape.translation) - offset
            gaps[s] = max(float(gap.max(initial=0.0)), 0.0)
    return gaps


def _inward(vertices, faces, centres) -> np.ndarray:
    """(m,) bool: the parts (their vertices and faces) whose triangles enclose a negative volume
    about `centres[k]` (their hull's centre)."""
    from gjkcli.engine.topology import signed_volume

    return np.array([signed_volume(v, f, c) < 0 for v, f, c in zip(vertices, faces, centres)], dtype=bool)


def part_verdicts(gaps, bands, which, vertices, faces, watertight=None, bodies=None, *,
                  measure: bool = True) -> tuple[list, list]:
    """(convex, reason) per part: whether it is its hull within its band, and why, where asked.

    gaps : (n,) `hull_gaps` of the parts; bands : (n,) each part's own touching band
    which : indices of the parts whose reason is wanted (those of listed pairs): a part that is
        not its hull gets a reason measured by `convexity` (about 1 ms a part); the other parts
        not asked about get None for both
    vertices, faces : sequences of each part's world vertices and triangles
    watertight, bodies : sequences of each part's flags, None where not known (parts of
        `gjkcli.mesh.load.read_objects`' fast path): those parts' vertices are merged first, as
        gjkcli.mesh.load merges them, and their topology computed
    measure : False leaves the reason None where `part_reason` is to measure it, for a caller
        that asks for it only when a report shows it (a scan's records)

    Returns two lists of n: True, False or None, and a one-line reason or None.
    """
    gaps = np.asarray(gaps, dtype=np.float64)
    n = len(gaps)
    watertight = [None] * n if watertight is None else watertight
    bodies = [None] * n if bodies is None else bodies
    within = gaps <= np.asarray(bands)
    decided: list = [True if c else None for c in within.tolist()]
    why: list = [FAST_REASON if c else None for c in within.tolist()]
    which = np.asarray(which, dtype=np.int64)
    for k in which[~within[which]].tolist():
        decided[k] = False
        if measure or np.isfinite(gaps[k]):
            why[k] = part_reason(gaps[k], vertices[k], faces[k], watertight[k], bodies[k])
    return decided, why


def part_reason(gap, vertices, faces, watertight=None, bodies=None, hull_points=None) -> str:
    """`part_verdicts`' reason for one part that is not its hull within its band: how far its
    faces lie inside the hull (`gap` finite), else what `convexity` measures (about 1 ms);
    hull_points as `convexity`'s."""
    if np.isfinite(gap):
        return f"its faces lie up to {gap:.3g} inside its hull, beyond the touching band"
    if watertight is not None and bodies is not None:  # loaded by gjkcli.mesh.load
        judged = convexity(vertices, faces, watertight=watertight, bodies=bodies, hull_points=hull_points)
    else:
        judged = convexity(*merge_solids(vertices, faces), hull_points=hull_points)
    return judged.reason if not judged.convex else (
        f"close to its hull ({judged.reason}) but not its hull within the touching band")


def part_reasons(gaps, which, vertices, faces, watertight, bodies, hull_points=None) -> list:
    """`part_reason` of each part k in `which`, in order (arguments as `part_verdicts`',
    hull_points as `convexity`'s): the
    closed solids that fall short of their hull's volume (most of a model's parts that are not
    their hulls: beams of a hollow or an I section) measured together (`_short_of_hull`), every
    other part on its own. The Great Court roof's 5,178 beams: about 0.9 s, one by one about 5 s."""
    out: list = [None] * len(which)
    batch, size = [], 0
    for s, k in enumerate(which):
        if np.isfinite(gaps[k]) or watertight[k] is not None or bodies[k] is not None:
            continue  # part_reason's one-line answer, or flags the loader gave: on its own
        if batch and size + len(faces[k]) > _BATCH_TRIANGLES:
            _short_of_hull(batch, which, vertices, faces, out)
            batch, size = [], 0
        batch.append(s)
        size += len(faces[k])
    if batch:
        _short_of_hull(batch, which, vertices, faces, out)
    return [reason if reason is not None else
            part_reason(gaps[k], vertices[k], faces[k], watertight[k], bodies[k], hull_points)
            for k, reason in zip(which, out)]


# The most triangles per batch of `_short_of_hull`: its bodies are then found by root hooking
# (gjkcli.engine.topology), and its arrays stay small.
_BATCH_TRIANGLES = 20_000


def _short_of_hull(batch: list, which: list, vertices, faces, out: list) -> None:
    """out[s] for s in `batch` (parts which[s], merged as `part_reason` merges a part without
    flags): `convexity`'s reason where the part is a solid (thicker than twice the flat
    threshold), closed (watertight, one body, consistently wound) and fills less than
    1 - convex_volume_rel of its hull's volume, the same steps as `convexity` takes, in one
    pass over the parts' concatenated arrays; left None for any other part."""
    from gjkcli.engine.exact import distinct
    from gjkcli.engine.shapes import small_hull_triangles

    V = [np.asarray(vertices[which[s]], dtype=np.float64).reshape(-1, 3) for s in batch]
    F = [np.asarray(faces[which[s]], dtype=np.int64).reshape(-1, 3) for s in batch]
    ok = np.array([len(f) > 0 and bool(np.isfinite(v).all()) for v, f in zip(V, F)], dtype=bool)
    if not ok.any():
        return
    mine = np.flatnonzero(ok)
    V, F = [V[s] for s in mine.tolist()], [F[s] for s in mine.tolist()]
    m = len(mine)
    n_v = np.fromiter(map(len, V), dtype=np.int64, count=m)
    n_f = np.fromiter(map(len, F), dtype=np.int64, count=m)
    v_of = np.repeat(np.arange(m), n_v)
    f_of = np.repeat(np.arange(m), n_f)
    faces_all = np.concatenate(F) + np.repeat(np.cumsum(n_v) - n_v, n_f)[:, None]
    vertices_all = np.concatenate(V)
    # merge_close, part by part: the grid step from each part's largest coordinate, each part's
    # vertices sorted on its own grid (the part the primary key, the sort stable, as there)
    used = np.zeros(len(vertices_all), dtype=bool)
    used[faces_all.ravel()] = True
    keep = np.flatnonzero(used)
    local, part = vertices_all[keep], v_of[keep]
    starts = np.flatnonzero(np.r_[True, part[1:] != part[:-1]])
    largest = np.maximum.reduceat(np.abs(local).max(axis=1), starts)
    step = largest * DEFAULT.merge_rel
    step[step == 0.0] = 1.0
    grid = np.rint(local / step[part][:, None]).astype(np.int64)
    order = np.lexsort((grid[:, 2], grid[:, 1], grid[:, 0], part))
    ordered, ordered_part = grid[order], part[order]
    new = np.ones(len(order), dtype=bool)
    new[1:] = (ordered[1:] != ordered[:-1]).any(axis=1) | (ordered_part[1:] != ordered_part[:-1])
    index = np.full(len(vertices_all), -1, dtype=np.int64)
    index[keep[order]] = np.cumsum(new) - 1
    merged, merged_of = local[order[new]], ordered_part[new]
    tris = index[faces_all]
    v_start = np.flatnonzero(np.r_[True, merged_of[1:] != merged_of[:-1]])
    n_merged = np.diff(np.r_[v_start, len(merged)])
    f_start = np.cumsum(n_f) - n_f
    # the diagonal, and the thickness across the principal axes (eigenvectors of each part's
    # scatter matrix, where convexity takes the SVD's: the same axes, so a margin of two)
    box = np.maximum.reduceat(merged, v_start) - np.minimum.reduceat(merged, v_start)
    diagonal = np.linalg.norm(box, axis=1)
    mean = np.add.reduceat(merged, v_start) / n_merged[:, None]
    centred = merged - mean[merged_of]
    scatter = np.add.reduceat(centred[:, :, None] * centred[:, None, :], v_start)
    axes = np.linalg.eigh(scatter)[1]  # columns by increasing spread
    along = np.einsum("ni,nij->nj", centred, axes[merged_of])
    thin = (np.maximum.reduceat(along, v_start) - np.minimum.reduceat(along, v_start))[:, 0]
    solid = (diagonal > 0.0) & (thin > 2.0 * DEFAULT.convex_flat_rel * diagonal)
    # closed: watertight, one body, consistently wound (gjkcli.engine.topology, all parts at once)
    body, _, open_face = topology(tris, len(merged))
    watertight = ~np.logical_or.reduceat(open_face, f_start)
    labels = int(body.max()) + 1
    bodies = np.bincount(distinct(f_of * labels + body) // labels, minlength=m)  # (part, body) once
    directed = tris[:, [0, 1, 1, 2, 2, 0]].reshape(-1, 2)
    edge_of = np.repeat(f_of, 3)
    proper = directed[:, 0] != directed[:, 1]
    key = directed[proper, 0] * len(merged) + directed[proper, 1]
    sort = np.argsort(key, kind="stable")
    twice = np.zeros(m, dtype=bool)
    twice[edge_of[proper][sort][1:][key[sort][1:] == key[sort][:-1]]] = True
    wound = ~twice & (np.bincount(edge_of[proper], minlength=m) > 0)
    closed = solid & watertight & (bodies == 1) & wound
    if not closed.any():
        return
    # the hull's volume (convexity's _small_hull, on the compiled core's triangles) and the
    # part's (its _signed_volume), for the closed solids: the products of every part at once,
    # the sums part by part, as there (the same numbers)
    candidates = np.flatnonzero(closed).tolist()
    found = [(k, hull) for k, hull in zip(candidates, small_hull_triangles(
        [merged[v_start[k]: v_start[k] + n_merged[k]] for k in candidates])) if hull is not None]
    if not found:  # left to convexity (qhull)
        return
    ks = np.array([k for k, _ in found], dtype=np.int64)
    corners = merged[np.concatenate([hull + v_start[k] for k, hull in found])]
    normals = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
    lengths = np.linalg.norm(normals, axis=1)
    unit = normals / np.where(lengths > 0, lengths, 1.0)[:, None]
    h_end = np.cumsum([len(hull) for _, hull in found])
    triangles = merged[tris[np.concatenate([np.arange(f_start[k], f_start[k] + n_f[k]) for k in ks.tolist()])]]
    t_end = np.cumsum(n_f[ks])
    centre = np.stack([triangles[t - n: t].reshape(-1, 3).mean(axis=0) for t, n in zip(t_end, n_f[ks])])
    local = triangles - np.repeat(centre, n_f[ks], axis=0)[:, None, :]
    twice_area = np.cross(local[:, 1], local[:, 2])
    for s, k in enumerate(ks.tolist()):
        h, t = slice(h_end[s] - len(found[s][1]), h_end[s]), slice(t_end[s] - n_f[k], t_end[s])
        pts = merged[v_start[k]: v_start[k] + n_merged[k]]
        hull_volume = float(np.einsum("ij,ij->i", unit[h], corners[h, 0] - pts.mean(axis=0)) @ lengths[h]) / 6.0
        volume = float(np.einsum("ij,ij->", local[t, 0], twice_area[t]) / 6.0)
        volume_ratio = abs(volume) / hull_volume
        if volume_ratio < 1.0 - DEFAULT.convex_volume_rel:
            out[batch[int(mine[k])]] = _fills(volume_ratio)


def _fills(volume_ratio: float) -> str:
    """The reason of a closed part short of its hull's volume."""
    return f"fills {volume_ratio:.4%} of its hull's volume"


@dataclass(frozen=True)
class _Surface:
    vertices: np.ndarray  # (n, 3) float64, every one used
    faces: np.ndarray  # (m, 3) int64
    watertight: bool
    bodies: int


def _used(vertices: np.ndarray, faces: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The vertices the faces use, and the faces renumbered to them."""
    # np.unique's answer, by counting: np.unique imports numpy.ma on its first call (5 to 15 ms
    # of a run's start), and numpy 2's hashes where a count of each index is faster
    used = np.flatnonzero(np.bincount(np.ravel(faces), minlength=len(vertices)))
    if len(used) == len(vertices):  # then used is 0 .. n-1: nothing to renumber
        return vertices, faces
    return vertices[used], np.searchsorted(used, faces)


def _verdict(convex: bool, dimension: int, reason: str, volume_ratio=float("nan"),
             area_ratio=float("nan"), depth=float("nan")) -> Convexity:
    return Convexity(bool(convex), dimension, float(volume_ratio), float(area_ratio),
                     float(depth), reason)


def _principal_extents(vertices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Principal axes (3, 3), rows by decreasing spread, and the extent along each (3,).

    Fewer than three vertices span fewer axes: the missing extents are 0 (any orthonormal
    completion of the axes serves)."""
    centered = vertices - vertices.mean(axis=0)
    axes = np.linalg.svd(np.vstack([centered, np.zeros((3, 3))]), full_matrices=False)[2]
    along = centered @ axes.T
    return axes, along.max(axis=0) - along.min(axis=0)


@dataclass(frozen=True)
class _Hull:
    """The parts of scipy's ConvexHull this module reads, from the compiled core's triangles."""

    points: np.ndarray  # (n, 3)
    simplices: np.ndarray  # (h, 3) outward triangles
    equations: np.ndarray  # (h, 4): n . x + d <= 0 inside, |n| = 1
    area: float
    volume: float


def _small_hull(vertices: np.ndarray, up_to: int | None = None) -> "_Hull | None":
    """The convex hull of a small part (up to `up_to` points, default SMALL_HULL_POINTS) from
    the compiled core (no scipy to import, which is most of a small check's start), or None
    where qhull is to build it."""
    from gjkcli.engine.shapes import small_hull_triangles

    triangles = small_hull_triangles([vertices], up_to)[0]
    return None if triangles is None else _hull_of(vertices, triangles)


def _hull_of(vertices: np.ndarray, triangles: np.ndarray) -> _Hull:
    """The `_Hull` of `vertices` whose hull's outward triangles the compiled core gave."""
    corners = vertices[triangles]
    normals = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
    lengths = np.linalg.norm(normals, axis=1)
    unit = normals / np.where(lengths > 0, lengths, 1.0)[:, None]
    centre = vertices.mean(axis=0)  # volumes from a point inside: no cancellation far out
    volume = float(np.einsum("ij,ij->i", unit, corners[:, 0] - centre) @ lengths) / 6.0
    offsets = -np.einsum("ij,ij->i", unit, corners[:, 0])
    return _Hull(vertices, np.asarray(triangles), np.c_[unit, offsets], float(lengths.sum()) / 2.0,
                 volume)


def _solid_convexity(mesh: _Surface, diagonal: float, hull_points: int | None = None) -> Convexity:
    hull = _small_hull(mesh.vertices, hull_points)
    if hull is None:
        from scipy.spatial import ConvexHull, QhullError

        try:
            hull = ConvexHull(mesh.vertices)
        except (QhullError, ValueError) as exc:
            return _verdict(False, 3, f"qhull could not build a hull: {one_line(exc)[:80]}")
    triangles = mesh.vertices[mesh.faces]
    area = _areas(triangles).sum()
    area_ratio = area / hull.area
    closed = mesh.watertight and mesh.bodies == 1 and oriented(mesh.faces)
    if closed:
        volume_ratio = abs(_signed_volume(triangles)) / hull.volume
        if volume_ratio < 1.0 - DEFAULT.convex_volume_rel:
            return _verdict(False, 3, _fills(volume_ratio), volume_ratio, area_ratio)
    else:
        volume_ratio = float("nan")
        if abs(area_ratio - 1.0) > DEFAULT.convex_area_rel:
            return _verdict(False, 3, f"{_not_closed(mesh)}, with {area_ratio:.4f} times its "
                                      f"hull's area", volume_ratio, area_ratio)
    depth = _max_depth(_surface_samples(mesh), hull, DEFAULT.convex_depth_rel * diagonal) / diagonal
    if depth > DEFAULT.convex_depth_rel:
        return _verdict(False, 3, f"its surface dips {depth:.2e} of its size below its hull",
                        volume_ratio, area_ratio, depth)
    what = "closed and fills its hull" if closed else "its surface is its hull's surface"
    return _verdict(True, 3, what, volume_ratio, area_ratio, depth)


def _flat_convexity(mesh: _Surface, plane_axes: np.ndarray) -> Convexity:
    from scipy.spatial import ConvexHull, QhullError

    flat = mesh.vertices @ plane_axes.T
    try:
        polygon = ConvexHull(flat).volume  # a 2-D hull's "volume" is its area
    except (QhullError, ValueError) as exc:
        return _verdict(False, 2, f"qhull could not build a hull: {one_line(exc)[:80]}")
    coverage = _areas(mesh.vertices[mesh.faces]).sum() / polygon
    sides = round(coverage)
    convex = sides in (1, 2) and abs(coverage - sides) <= DEFAULT.convex_area_rel * sides
    reason = (f"flat and covers its hull polygon {'once' if sides == 1 else 'on both sides'}"
              if convex else f"flat, covering {coverage:.4f} times its hull polygon's area")
    return _verdict(convex, 2, reason, area_ratio=coverage)


def _not_closed(mesh: _Surface) -> str:
    if mesh.bodies > 1:
        return f"{mesh.bodies} separate bodies"
    return "open (not watertight)" if not mesh.watertight else "inconsistently wound"


def _areas(triangles: np.ndarray) -> np.ndarray:
    """(m,) areas of (m, 3, 3) triangles."""
    cross = np.cross(triangles[:, 1] - triangles[:, 0], triangles[:, 2] - triangles[:, 0])
    return 0.5 * np.linalg.norm(cross, axis=1)


def _signed_volume(triangles: np.ndarray) -> float:
    """Volume enclosed by (m, 3, 3) triangles (divergence theorem), positive when outward."""
    local = triangles - triangles.reshape(-1, 3).mean(axis=0)  # centred: less cancellation
    return float(np.einsum("ij,ij->", local[:, 0], np.cross(local[:, 1], local[:, 2])) / 6.0)


def _surface_samples(mesh: _Surface) -> np.ndarray:
    """(k, 3) vertices, edge midpoints and face centroids of a mesh."""
    vertices, faces = mesh.vertices, mesh.faces
    edges = np.unique(np.sort(faces[:, [0, 1, 1, 2, 2, 0]].reshape(-1, 2), axis=1), axis=0)
    return np.concatenate([vertices, vertices[edges].mean(axis=1),
                           vertices[faces].mean(axis=1)])


def _max_depth(points: np.ndarray, hull, limit: float) -> float:
    """Largest distance of `points` below the hull boundary (0 for points on it).

    Inside the hull the nearest boundary point lies on the nearest facet plane, so the depth of
    x is min over facets of -(n . x + d). Rather than every facet for every point (half a
    second for ballA.off), the planes of the 8 facets with the nearest centres give an upper
    bound; only points whose bound exceeds `limit` are measured against all facets, stopping
    once one is deeper than `limit`. The result is exact where it exceeds `limit` and an
    upper bound otherwise.

    Parameters
    ----------
    points : (k, 3) float64
    hull : scipy.spatial.ConvexHull, or the compiled core's `_Hull` (the same attributes)
    limit : float
    """
    equations = hull.equations  # (h, 4): n . x + d <= 0 inside, |n| = 1
    if len(points) * len(equations) > 1_000_000:
        from scipy.spatial import cKDTree

        centres = hull.points[hull.simplices].mean(axis=1)
        near = cKDTree(centres).query(points, k=min(8, len(equations)))[1].reshape(len(points), -1)
        bound = -(np.einsum("ijk,ik->ij", equations[near, :3], points)
                  + equations[near, 3]).max(axis=1)
        suspect = bound > limit
        if not suspect.any():
            return max(float(bound.max()), 0.0)
        points = points[suspect]
    rows = max(1, 4_000_000 // len(equations))  # bound the (rows, h) temporary to 32 MB
    deepest = 0.0
    for start in range(0, len(points), rows):
        chunk = points[start:start + rows]
        depth = -(chunk @ equations[:, :3].T + equations[:, 3]).max(axis=1)
        deepest = max(deepest, float(depth.max()))
        if deepest > limit:
            break
    return deepest
