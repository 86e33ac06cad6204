"""The overlap of two closed parts: the solid both occupy, and its volume, by manifold3d.

CAD interference checks report an interference by its volume; it is also a second figure next to
a collision's depth that does not depend on where EPA or the triangle test looked. manifold3d
(the boolean engine trimesh uses) intersects the parts themselves, not their hulls, in double
precision (`Mesh64`). Both parts are shifted by one common offset (the middle of their joint
bounding box) before the boolean, so parts far from the origin keep their digits; the volume does
not depend on the shift and the solid is shifted back.

A part that is not a closed, consistently wound surface (an open sheet, a non-manifold edge)
bounds no volume: `Overlap.reason` says which part and why, and the volume is None.

Two parts that are each their own convex hull (a scan's boxes, beams, pipes' segments) share a
convex solid: `convex_overlap` cuts one by the other's face planes in the compiled core
(gjkcli/engine/csrc/convexcut.c), the same solid and volume as the boolean's (to rounding) at a
fraction of its cost, with no manifold3d in the process.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Overlap", "overlap", "material_surface", "overlaps", "convex_overlap"]


@dataclass(frozen=True)
class Overlap:
    """The common solid of two parts.

    volume : float or None (None when a part bounds no volume; then `reason` says why)
    vertices : (n, 3) float64, world coordinates; faces : (m, 3) int64 (empty when the parts
        do not overlap or the volume is None)
    """

    volume: float | None
    vertices: np.ndarray
    faces: np.ndarray
    reason: str | None = None


_NONE = (np.zeros((0, 3)), np.zeros((0, 3), dtype=np.int64))


def _solid(name: str, vertices, faces, shift):
    """A manifold3d Manifold of the part, wound outwards; or the reason it is none."""
    import manifold3d

    v = np.ascontiguousarray(np.asarray(vertices, dtype=np.float64).reshape(-1, 3) - shift)
    f = np.asarray(faces).reshape(-1, 3)
    if len(f) == 0:
        return None, f"{name} has no triangles"
    # manifold3d reads what it is given unchecked (an index past the vertices is a crash)
    if not (np.issubdtype(f.dtype, np.integer) and f.min() >= 0 and f.max() < len(v)):
        return None, f"{name} has triangles that name missing vertices"
    if not np.isfinite(v).all():
        return None, f"{name} has coordinates that are not finite numbers"
    f = _merged(v, np.ascontiguousarray(f, dtype=np.uint64))
    if len(f) == 0:
        return None, f"{name} has triangles of no area alone: it bounds no volume"
    if not _closed(f, len(v)):  # manifold3d 3.5.4 crashed on some such meshes, rather than saying so
        return None, f"{name} is not a closed surface: it bounds no volume"
    solid = manifold3d.Manifold(manifold3d.Mesh64(vert_properties=v, tri_verts=f))
    status = solid.status()
    if status != manifold3d.Error.NoError:
        what = "is not a closed surface" if status == manifold3d.Error.NotManifold else \
            f"is not a usable solid ({status.name})"
        return None, f"{name} {what}: it bounds no volume"
    if solid.volume() < 0:  # wound inwards throughout: the same solid, turned outwards
        solid = manifold3d.Manifold(manifold3d.Mesh64(vert_properties=v, tri_verts=np.ascontiguousarray(f[:, ::-1])))
    return solid, None


def _merged(v: np.ndarray, f: np.ndarray) -> np.ndarray:
    """(m, 3) uint64 the triangles `f` with manifold3d's merge applied (vertices repeated per
    triangle, as an unindexed file gives them, joined, not left as gaps), those left with a
    corner twice dropped: such a triangle has no area and its two edges cancel, so the solid
    is the same, and manifold3d 3.5 crashed on meshes holding one beside other triangles (a
    fuzzed ASCII STL did; a vertex's index repeated, or two vertices it merges)."""
    import manifold3d

    mesh = manifold3d.Mesh64(vert_properties=v, tri_verts=f)
    mesh.merge()
    to = np.arange(len(v), dtype=np.uint64)
    to[np.asarray(mesh.merge_from_vert, dtype=np.int64)] = np.asarray(mesh.merge_to_vert, dtype=np.uint64)
    g = to[f.astype(np.int64)]
    whole = (g[:, 0] != g[:, 1]) & (g[:, 1] != g[:, 2]) & (g[:, 0] != g[:, 2])
    return np.ascontiguousarray(g[whole])


def _closed(f: np.ndarray, n: int) -> bool:
    """Whether triangles `f` (m, 3) over n vertices close a surface as manifold3d asks: every
    directed edge once, and each beside its reverse (an edge of exactly two triangles, wound
    alike). A soup of seven separate triangles from a fuzzed binary STL crashed manifold3d
    3.5.4's constructor, which says NotManifold for most such meshes."""
    a = f.astype(np.int64)
    tail, head = a.ravel(), a[:, [1, 2, 0]].ravel()
    edge, back = tail * n + head, head * n + tail
    edge.sort()
    return not (edge[1:] == edge[:-1]).any() and bool(np.isin(back, edge, assume_unique=True).all())


def overlap(name_a: str, vertices_a, faces_a, name_b: str, vertices_b, faces_b) -> Overlap:
    """The solid parts A and B share, by manifold3d's boolean intersection.

    vertices_* : (n, 3) float64 world coordinates; faces_* : (m, 3) int indices into them.
    """
    va = np.asarray(vertices_a, dtype=np.float64).reshape(-1, 3)
    vb = np.asarray(vertices_b, dtype=np.float64).reshape(-1, 3)
    both = np.concatenate([va, vb]) if len(va) + len(vb) else np.zeros((1, 3))
    shift = 0.5 * (both.min(axis=0) + both.max(axis=0))
    a, why = _solid(name_a, va, faces_a, shift)
    if a is None:
        return Overlap(None, *_NONE, reason=why)
    b, why = _solid(name_b, vb, faces_b, shift)
    if b is None:
        return Overlap(None, *_NONE, reason=why)
    return _common(a, b, shift)


def material_surface(name: str, shells: list) -> tuple:
    """(vertices, faces) of the surface of the material the closed shells `shells` enclose
    together (manifold3d's union: shells sharing a rim or overlapping enclose their material
    once, and the faces between them are gone), world coordinates, wound outwards; or (None,
    why) where a shell bounds no volume or there is none.

    shells : [(vertices (n, 3) float64, faces (m, 3) int)], one per shell, each closed (an open
    part's, `gjkcli.engine.shells.shells_of`).
    """
    import manifold3d

    if not shells:
        return None, f"{name} holds no closed shell"
    every = np.concatenate([np.asarray(v, dtype=np.float64).reshape(-1, 3) for v, _ in shells])
    shift = 0.5 * (every.min(axis=0) + every.max(axis=0))
    solids = []
    for v, f in shells:
        solid, why = _solid(f"a shell of {name}", v, f, shift)
        if solid is None:
            return None, why
        solids.append(solid)
    union = solids[0] if len(solids) == 1 else manifold3d.Manifold.batch_boolean(solids, manifold3d.OpType.Add)
    if union.is_empty():
        return None, f"the shells of {name} enclose no volume"
    out = union.to_mesh64()
    return (np.asarray(out.vert_properties, dtype=np.float64)[:, :3] + shift,
            np.asarray(out.tri_verts, dtype=np.int64)), None


def _common(a, b, shift) -> Overlap:
    """The common solid of manifold3d solids a and b, shifted by `shift`, in world coordinates."""
    common = a ^ b
    volume = max(0.0, float(common.volume()))
    if common.is_empty():
        return Overlap(volume, *_NONE)
    out = common.to_mesh64()
    vertices = np.asarray(out.vert_properties, dtype=np.float64)[:, :3] + shift
    return Overlap(volume, vertices, np.asarray(out.tri_verts, dtype=np.int64))


def convex_overlap(vertices_a, faces_a, vertices_b, faces_b) -> Overlap | None:
    """`overlap` of two parts whose triangles each cover their convex hull's boundary once (a
    hull gap of rounding, `gjkcli.pipeline.prepared.OWN_HULL_REL`): B's face planes cut A
    (gjkcli/engine/csrc/convexcut.c). None when a part bounds no volume (`overlap` then says
    why)."""
    from gjkcli.engine._mesh import convex_common_solid
    from gjkcli.tolerances import DEFAULT

    va = np.asarray(vertices_a, dtype=np.float64).reshape(-1, 3)
    vb = np.asarray(vertices_b, dtype=np.float64).reshape(-1, 3)
    if len(va) == 0 or len(vb) == 0:
        return None
    both = np.concatenate([va, vb])
    shift = 0.5 * (both.min(axis=0) + both.max(axis=0))
    scale = float(np.abs(both - shift).max())
    solid = convex_common_solid(va - shift, faces_a, vb - shift, faces_b, DEFAULT.convex_cut_rel * scale)
    if solid is None:
        return None
    volume, vertices, faces = solid
    if len(faces) == 0:
        return Overlap(volume, *_NONE)
    return Overlap(volume, vertices + shift, faces)


# The fewest pairs worth forked workers (a fork and its results' way back cost about a pair's
# boolean per worker): below, the pairs are intersected here.
PARALLEL_FROM = 64
# What the forked workers read, set before the fork: (pairs, their positions in the call, then)
_WORK: tuple = ()


def overlaps(pairs: list, jobs: int = 1, convex: list | None = None, then=None) -> list:
    """`overlap` of each (name_a, vertices_a, faces_a, name_b, vertices_b, faces_b), in order.

    convex : per pair, both parts are their own convex hulls (None: none is known to be): those
    pairs are cut by `convex_overlap` (on `jobs` threads: the cut runs in C without the GIL),
    and the few where a part bounds no volume go on with the others.
    then : (k, overlap) -> answer, asked of each pair's overlap where it is made (in the forked
    worker that intersected it): the list holds its answers instead of the overlaps. The work a
    caller does with each common solid (the settling policy's searches over its box) runs on
    every core too, and only its answer comes back, not the common solid's triangles.

    The others go to manifold3d's boolean. With jobs > 1, PARALLEL_FROM of them or more and a
    process that may fork (`gjkcli.engine.shapes.can_fork`: manifold3d has not run here), they
    are split over forked workers, each intersecting a contiguous share with manifold3d
    imported there: the booleans of a scan's many collisions run on every core, and this
    process never runs manifold3d (so it may still fork)."""
    from gjkcli.engine.shapes import can_fork

    then = then or (lambda k, o: o)
    out: list = [None] * len(pairs)
    done = [False] * len(pairs)
    cut = [k for k in range(len(pairs)) if convex is not None and convex[k]]
    for k, o in zip(cut, _cuts([pairs[k] for k in cut], jobs)):
        if o is not None:
            out[k], done[k] = then(k, o), True
    rest = [k for k in range(len(pairs)) if not done[k]]
    if jobs <= 1 or len(rest) < PARALLEL_FROM or not can_fork():
        for k in rest:
            out[k] = then(k, overlap(*pairs[k]))
        return out
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    global _WORK
    _WORK = ([pairs[k] for k in rest], rest, then)
    bounds = np.linspace(0, len(rest), min(jobs, len(rest)) + 1).astype(int).tolist()
    try:
        with ProcessPoolExecutor(len(bounds) - 1, mp_context=multiprocessing.get_context("fork")) as pool:
            shares = pool.map(_share, zip(bounds[:-1], bounds[1:]))
            for k, o in zip(rest, (o for share in shares for o in share)):
                out[k] = o
    finally:
        _WORK = ()
    return out


# The fewest convex pairs worth a second thread (each cut costs a fifth of a millisecond).
THREADS_FROM = 64


def _cuts(pairs: list, jobs: int) -> list:
    """`convex_overlap` of each pair (None where a part bounds no volume), on up to `jobs`
    threads."""
    def cut(pair):
        return convex_overlap(pair[1], pair[2], pair[4], pair[5])

    if jobs <= 1 or len(pairs) < THREADS_FROM:
        return [cut(pair) for pair in pairs]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(jobs) as pool:
        return list(pool.map(cut, pairs, chunksize=16))


def _share(bounds) -> list:
    """In a forked worker: `then` of the `overlap` of _WORK's pairs start to end."""
    start, end = bounds
    pairs, rest, then = _WORK
    return [then(rest[n], overlap(*pairs[n])) for n in range(start, end)]
