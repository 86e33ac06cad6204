"""Which engine answers a pair, and what its answer means: the one mode policy of every command.

The hulls answer first, for every candidate pair (GJK and EPA in one batch call). What a hull
answer says about the parts:

- *clear* always stands: parts lie inside their hulls, so the parts are at least as far apart
  as the hulls. Only the distance may be a lower bound.
- every other answer (collision, touching, undecided, closer than the clearance), and the
  distance as the parts' distance, stands only when both parts *coincide* with their hulls
  within the pair's touching band (`gjkcli.mesh.convexity.hull_gaps`: every face on the hull's
  surface within the band, the hull's surface covered).

So, per mode:

=========  ==========================================================================
``hull``   the hulls' answer, always; `conservative` when a part does not coincide (a clear
           verdict still stands, its distance is then a lower bound)
``auto``   the hulls' answer where it stands; the triangles for every pair whose hulls are not
           clear (clearance applied) and whose parts do not both coincide, and for listed pairs
           whose parts do not coincide (so a listed distance is the parts')
``exact``  the triangles for every pair whose hulls are not clear and for every listed pair;
           the hulls only for pairs they show clear and that are not listed
=========  ==========================================================================

A curved primitive (sphere, capsule, cylinder, cone) has no triangles of its own: against a part
with triangles the triangle test answers it exactly, the primitive against the other part's
triangles (`gjkcli.engine.primitive`); two primitives are their own hulls, so the hulls' answer
is theirs. Only ``hull`` mode leaves a primitive's pair on a hull that is not its part, marked
conservative.

And how a pair the triangle test leaves undecided is settled, the same on every route (the run's
pairs, a robot's poses and motions, the collision manager): `settle`. Two closed parts by their
common solid's mean thickness (`thickness_verdict`, the rule STEP's exact solids follow), unless
a point within their common solid lies deep enough in both that no move within the band parts
them (`deeper_in_common`: two copies of one solid in one place); an open
part against a closed one by how deep it reaches into it (`sheet_verdict`,
`gjkcli.engine.sheet.sheet_depth`); two open parts by a point of one deep inside the other with
its holes closed, or by a point inside the closed shells their faces hold, deep in both
(`crossing_verdict`). What none settles stays undecided, its note saying what was
tried (docs/certified.md).
"""
from __future__ import annotations

import numpy as np

__all__ = ["MODES", "coincide", "needs_triangles", "conservative", "settle", "thickness_verdict",
           "sheet_verdict", "common_verdict", "thin_or_deeper", "deeper_in_common", "mean_thickness",
           "bounding_area", "EXIT_THIN",
           "EXIT_FACES_DEEP", "EXIT_COMMON_DEEP", "EXIT_SHELLS_THIN", "EXIT_SHEET",
           "EXIT_SHEET_DEEP", "EXIT_OPEN_DEEP", "EXIT_SHELLS_DEEP", "crossing_verdict"]

MODES = ("auto", "hull", "exact")

# The exit of a pair `by_thickness` settles as touching.
EXIT_THIN = "common solid's mean thickness t (2 x volume / area, manifold3d) within the band"
# The exit of such a pair settled instead as a collision by a point found deeper than the band.
EXIT_FACES_DEEP = "a point of one closed part inside the other beyond the band, on a triangle within its box"
# The exit of a pair of closed parts settled as a collision by a point inside both, its distances
# to their surfaces adding up to more than the band (`deeper_in_common`).
EXIT_COMMON_DEEP = "a point inside both closed parts, its distances to their surfaces adding up beyond the band"
# The exits of an open part against a closed one that `sheet_verdict` settles.
EXIT_SHEET = "the open surface reaches no deeper than the band into the closed part"
EXIT_SHEET_DEEP = "a point of the open surface inside the closed part beyond the band"
# The exits of two open parts `crossing_verdict` settles as a collision.
EXIT_OPEN_DEEP = "a point of one open part inside the other, its holes closed, beyond the band"
EXIT_SHELLS_DEEP = ("a point inside the closed shells of both open parts, its distances to the faces of each "
                    "adding up beyond the band")
# ... and as touching: a fit, the common solid of the material their shells enclose thin (`_shells_fit`).
EXIT_SHELLS_THIN = ("the closed shells' common solid's mean thickness t (2 x volume / area, manifold3d) "
                    "within the band")


def coincide(gap_a: np.ndarray, gap_b: np.ndarray, band: np.ndarray) -> np.ndarray:
    """(m,) bool: both parts of each pair are their hulls within the pair's touching band.

    gap_a, gap_b : (m,) `hull_gaps` of each pair's parts (inf: not its hull; 0: a primitive)
    band : (m,) the pair's touching band half-width, model units
    """
    return (np.asarray(gap_a) <= band) & (np.asarray(gap_b) <= band)


def needs_triangles(mode: str, hull_clear: np.ndarray, coincident: np.ndarray,
                    listed: np.ndarray, meshed: np.ndarray) -> np.ndarray:
    """(m,) bool: the pairs the triangle test must answer.

    mode : "auto", "hull" or "exact"
    hull_clear : (m,) the hulls are clear (and not closer than the pair's clearance)
    coincident : (m,) `coincide` of the pair
    listed : (m,) the report lists the pair (check lists every pair; scan with --all-pairs)
    meshed : (m,) a part of the pair has triangles (the other may be a curved primitive)
    """
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; use one of {', '.join(MODES)}")
    if mode == "hull":
        return np.zeros(len(hull_clear), dtype=bool)
    if mode == "exact":
        return meshed & (~hull_clear | listed)
    return meshed & ~coincident & (~hull_clear | listed)


def conservative(answered_by_hulls: np.ndarray, coincident: np.ndarray) -> np.ndarray:
    """(m,) bool: the answer is the hulls' and a part is not its hull."""
    return answered_by_hulls & ~coincident


# ------------------------------------------------------------------------------------------------
# an undecided pair settled: the same policy on every route (the run, poses, motions, the manager)
# ------------------------------------------------------------------------------------------------

def mean_thickness(o) -> float | None:
    """2 x volume / surface area of the common solid `o` (`gjkcli.mesh.overlap.Overlap`): the
    thickness of a slab, 0 when the parts share no volume; None when a part bounds no volume.

    Where the parts' faces lie on one plane (a bar's top on its slot's ceiling) manifold3d's
    common solid keeps a sheet of no thickness there, its two sides back to back: such area
    bounds no volume and is not counted (`bounding_area`). A solid of sheets alone (a bolt's
    facets on its nut's bore, every one back to back) holds only its rounding's volume: where
    that volume over its whole area is thinner than planes are told apart, the mean is taken
    over the whole area (the rounding's thickness), not over the sliver of area left."""
    if o.volume is None:
        return None
    if o.volume <= 0.0 or len(o.faces) == 0:
        return 0.0
    area, whole, apart = _areas(o.vertices, o.faces)
    if whole > 0.0 and 2.0 * o.volume / whole <= apart:
        return 2.0 * o.volume / whole
    return 2.0 * o.volume / area if area > 0.0 else 0.0


def bounding_area(vertices, faces) -> float:
    """`_areas`' first: the area of a closed surface less its sheets of no thickness."""
    return _areas(vertices, faces)[0]


def _areas(vertices, faces) -> tuple:
    """(area, whole area, apart) of a closed surface: its area less its sheets of no thickness
    (on each plane, the area facing one way less the area facing the other: a face's
    back-to-back twin cancels it), its whole area, and the distance within which two parallel
    planes are one.

    Planes are told apart by their normals to `thickness_plane_rel` and by their offsets (from
    the solid's middle) to `thickness_offset_rel` of its size, or to the rounding of its
    coordinates where that is coarser: a sheet's two sides are one input face clipped twice, on
    one plane to rounding; two faces farther apart bound a slab that thick, which counts (a
    precast slab 70 nm into its floor's slot left a common solid 2,990 mm long and 60 mm high:
    planes told apart to 1e-9 of that, 3 um, took it for a sheet and left its edges' area
    alone, a mean thickness of 59 mm). The triangles are binned twice, the second time by
    grids shifted half a bin, and the smaller area is kept (a pair of twins split by a bin's
    edge is cancelled in one of the two)."""
    from gjkcli.tolerances import DEFAULT

    points = np.asarray(vertices, dtype=np.float64)
    corners = points[np.asarray(faces)]
    middle = 0.5 * (points.min(axis=0) + points.max(axis=0))
    rounding = 64 * np.finfo(np.float64).eps * float(np.abs(points).max())
    corners = corners - middle
    cross = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
    double = np.linalg.norm(cross, axis=1)
    keep = double > 0.0
    if not keep.any():
        return 0.0, 0.0, 0.0
    corners, cross, double = corners[keep], cross[keep], double[keep]
    normal = cross / double[:, None]
    # one orientation per plane: the largest component of the normal positive
    big = np.abs(normal).argmax(axis=1)
    side = np.sign(normal[np.arange(len(normal)), big])
    normal = normal * side[:, None]
    offset = np.einsum("ij,ij->i", normal, corners.mean(axis=1))
    size = float(np.ptp(corners.reshape(-1, 3), axis=0).max()) or 1.0
    step = DEFAULT.thickness_plane_rel
    apart = max(DEFAULT.thickness_offset_rel * size, rounding) or 1.0
    best = None
    for shift in (0.0, 0.5):
        key = np.column_stack([np.floor(normal / step + shift), np.floor(offset / apart + shift)])
        _, group = np.unique(key, axis=0, return_inverse=True)
        net = np.bincount(group.ravel(), weights=0.5 * double * side)
        area = float(np.abs(net).sum())
        best = area if best is None else min(best, area)
    return best, 0.5 * float(double.sum()), apart


def thickness_verdict(r, o):
    """The triangle test's undecided answer `r` (an `ExactResult`) judged by the parts' common
    solid `o` (`gjkcli.mesh.overlap.Overlap`): touching when its mean thickness is within the
    band, else `r` undecided still, its note saying what the common solid showed."""
    import dataclasses

    from gjkcli.engine.results import Status

    t = mean_thickness(o)
    band = float(r.tolerance)
    if t is None:
        return dataclasses.replace(r, note=_joined(r.note, f"the common solid was not measured: {o.reason}"))
    if t > band:
        return dataclasses.replace(r, note=_joined(
            r.note, f"the parts' common solid (manifold3d) has volume {o.volume:.6g} and a mean "
                    f"thickness 2 x volume / area of {t:.6g}, beyond the band: a mean proves no depth"))
    shared = "share no volume" if t == 0.0 else f"share a volume of {o.volume:.6g}"
    return dataclasses.replace(
        r, status=Status.TOUCHING, distance=0.0, distance_lower=0.0, depth=None, depth_upper=None,
        certificate=None, exit=EXIT_THIN,
        note=f"touching: the parts {shared} (manifold3d), a common solid of mean thickness "
             f"2 x volume / area {t:.6g} within the band ({band:.6g}), the rule STEP's exact "
             f"solids follow; no point deeper than the band and no move within it was found "
             f"(a fit: the way out is longer than the band)")


def common_verdict(r, o, a, b, pose_a=None, pose_b=None):
    """The triangle test's undecided answer `r` for closed meshes a and b at their poses, whose
    common solid is `o`: judged by its mean thickness (`thickness_verdict`), then a point inside
    both deep enough in the two together (`deeper_in_common`), then, for a pair still touching by
    the thickness alone, a point of one deeper than the band inside the other on its triangles
    (`thin_or_deeper`). Each search only proves a collision; the one over the common solid's box
    comes first: a point of a surface deeper than the band inside the other is inside both, so it
    finds what the triangles' search would, at the cost of a few thousand points where that
    search tries every triangle within the other's box (the Great Court roof at a 5 mm band:
    23,488 beams lapped at its nodes settled by the first, none by the second, which took half
    the scan's time when asked first)."""
    v = deeper_in_common(thickness_verdict(r, o), o, a, b, pose_a, pose_b)
    return thin_or_deeper(v, a, b, pose_a, pose_b)


def thin_or_deeper(v, a, b, pose_a=None, pose_b=None):
    """`thickness_verdict`'s answer `v` for meshes a and b at their poses: where it is touching
    (a mean thickness within the band, which proves no depth), the collision a point deeper than
    the band proves, searched on every triangle of each within the other's box
    (`gjkcli.engine.exact.deeper_on_faces`; the triangle test searched only those crossing the
    other's surface); else `v`."""
    import dataclasses

    from gjkcli.engine.exact import deeper_on_faces
    from gjkcli.engine.results import Status

    if v.status is not Status.TOUCHING or v.exit != EXIT_THIN:
        return v
    got = deeper_on_faces(a, b, pose_a=pose_a, pose_b=pose_b, tolerance=float(v.tolerance))
    if got is None:
        return v
    depth, point, near, which = got
    inner, outer = (a, b) if which == "a in b" else (b, a)
    pa, pb = (point, near) if which == "a in b" else (near, point)
    return _deep(dataclasses.replace(v, note=""), depth, pa, pb, point, which, EXIT_FACES_DEEP,
                 f"collision: a point of '{inner.name}' lies {depth:.6g} inside '{outer.name}', beyond "
                 f"the band ({float(v.tolerance):.6g}), found on its triangles within "
                 f"'{outer.name}''s box (their common solid's mean thickness is within the band, "
                 f"which proves no depth)")


def deeper_in_common(v, o, a, b, pose_a=None, pose_b=None):
    """`thickness_verdict`'s answer `v` for closed meshes a and b at their poses, whose common
    solid is `o` (`gjkcli.mesh.overlap.Overlap`): where it is still undecided (a mean thickness
    beyond the band, which proves no depth) or touching by the mean thickness alone, the
    collision a point inside both proves whose distances to their surfaces add up to more than
    the band (`gjkcli.engine.exact.deep_in_both`, searched over the common solid's box); else
    `v`. Two copies of one solid in one place are such a pair: no point of either surface lies
    inside the other (each lies on the other's surface), and the mean thickness of their common
    solid, the solid itself, is less than its thickness, the move that parts them."""
    import dataclasses

    from gjkcli.engine.exact import deep_in_both
    from gjkcli.engine.results import Status

    settled_thin = v.status is Status.TOUCHING and v.exit == EXIT_THIN
    if not (v.status is Status.UNDECIDED or settled_thin) or not o.volume or not len(o.faces):
        return v
    lo, hi = o.vertices.min(axis=0), o.vertices.max(axis=0)
    band = float(v.tolerance)
    got = deep_in_both(a, b, lo, hi, pose_a=pose_a, pose_b=pose_b, tolerance=band)
    if got is None:
        return v
    depth, point, pa, pb = got
    was = dataclasses.replace(v, note="") if settled_thin else v
    return _two_balls(was, depth, point, pa, pb, EXIT_COMMON_DEEP,
                      f"collision: a point inside both '{a.name}' and '{b.name}' lies {depth:.6g} from "
                      f"their surfaces together, beyond the band ({band:.6g}): a move of one part "
                      f"shorter than that leaves them overlapping")


def sheet_verdict(r, a, b, pose_a=None, pose_b=None):
    """The triangle test's undecided answer `r` of meshes a and b (`gjkcli.engine.exact.Mesh`,
    placed by their poses), one of them open and the other closed, judged by how deep the open
    one reaches into the closed one (`gjkcli.engine.sheet.sheet_depth`)."""
    import dataclasses

    from gjkcli.engine.results import Status
    from gjkcli.engine.sheet import sheet_depth

    band = float(r.tolerance)
    sheet_is_a = not a.solid
    sheet, solid = (a, b) if sheet_is_a else (b, a)
    ps, pb = (pose_a, pose_b) if sheet_is_a else (pose_b, pose_a)
    got = sheet_depth(sheet, solid, pose_sheet=ps, pose_solid=pb, band=band)
    if got.deep is not None:
        depth, point, near, _ = got.deep
        pa, pb_ = (point, near) if sheet_is_a else (near, point)
        return _deep(r, depth, pa, pb_, point, "a in b" if sheet_is_a else "b in a", EXIT_SHEET_DEEP,
                     f"collision: a point of the open surface '{sheet.name}' lies {depth:.6g} inside "
                     f"'{solid.name}', beyond the band ({band:.6g})")
    if got.upper is None:
        return dataclasses.replace(r, note=_joined(
            r.note, f"the depth of the open surface '{sheet.name}' inside '{solid.name}' was neither "
                    f"bounded within the band nor shown beyond it in {got.pieces:,} pieces of it "
                    f"(each bounded by its corners' distances to the nearest boundary triangles, "
                    f"its centroid's depth, or a move of half the band off the boundary), the "
                    f"bound's budget: splitting on past it, or a band wider than the open "
                    f"surface's depth, would settle it"))
    return dataclasses.replace(
        r, status=Status.TOUCHING, distance=0.0, distance_lower=0.0, depth=None,
        depth_upper=got.upper, certificate=None, exit=EXIT_SHEET,
        note=_joined(_open_note(r.note), f"touching: no point of the open surface '{sheet.name}' lies "
                     f"deeper than {got.upper:.6g} inside '{solid.name}' (bounded over "
                     f"{got.pieces:,} pieces of it), within the band ({band:.6g})"))


def _deep(r, depth, point_a, point_b, point, contained, exit_, said: str):
    """The triangle test's undecided answer `r` settled as a collision by a point deeper than
    the band (`point`, its certificate; `depth`, a lower bound of the overlap): `said` replaces
    the note's undecided clause."""
    import dataclasses

    from gjkcli.engine.results import PointCertificate, Status

    return dataclasses.replace(
        r, status=Status.COLLISION, distance=0.0, distance_lower=0.0, depth=depth, depth_upper=None,
        point_a=point_a, point_b=point_b, certificate=PointCertificate(np.asarray(point)),
        contained=contained, exit=exit_, note=_joined(_open_note(r.note), said))


def _two_balls(r, depth, point, point_a, point_b, exit_, said: str):
    """`_deep` for a point inside both parts whose balls about it, one in each, have radii adding
    up to `depth`: point_a and point_b the balls' far sides, the normal from B's to A's (B moved
    by depth along it, the two far sides meet)."""
    import dataclasses

    out = _deep(r, depth, point_a, point_b, point, None, exit_, said)
    n = np.asarray(point_a) - np.asarray(point_b)
    length = float(np.linalg.norm(n))
    return dataclasses.replace(out, normal=n / length) if length > 0 else out


def _open_note(note: str) -> str:
    """The triangle test's note less its undecided clause (the pair is settled)."""
    cut = note.find("undecided:")
    return note if cut < 0 else note[:cut].rstrip("; ")


def settle(r, a, b, pose_a=None, pose_b=None):
    """The triangle test's answer `r` for meshes (or primitives) a and b at their poses, an
    undecided pair settled by the run's policy (the module's docstring): two closed parts by
    their common solid's mean thickness, an open part against a closed one by how deep it
    reaches; every other answer as it is."""
    from gjkcli.engine.exact import Mesh
    from gjkcli.engine.results import Status

    if r is None or r.status is not Status.UNDECIDED or not (isinstance(a, Mesh) and isinstance(b, Mesh)):
        return r
    if a.solid and b.solid:
        from gjkcli.mesh.overlap import overlap

        o = overlap(a.name, _placed(a, pose_a), a.faces, b.name, _placed(b, pose_b), b.faces)
        return common_verdict(r, o, a, b, pose_a, pose_b)
    if a.solid != b.solid:
        return sheet_verdict(r, a, b, pose_a, pose_b)
    return crossing_verdict(r, a, b, pose_a, pose_b)


def crossing_verdict(r, a, b, pose_a=None, pose_b=None):
    """The triangle test's undecided answer `r` of two open parts (neither bounds a volume):
    a collision where a point lies inside the closed shells both parts' faces hold, its distances
    to the faces of each adding up to more than the band (`_shells_verdict`, the cheaper test),
    or where a point of one lies
    deeper than the band inside the other with its holes closed, the surfaces' crossing then
    certain after any move within the band (`gjkcli.engine.sheet.open_crossing`). Both certify
    collisions only, so their order sets which witness a pair both settle gets, never its
    verdict. Failing both, a fit of two parts whose faces hold closed shells is judged by the
    mean thickness as closed parts are (`_shells_fit`); else `r`, its note saying what was
    tried."""
    import dataclasses

    from gjkcli.engine.sheet import open_crossing

    shells = _shells_verdict(r, a, b, pose_a, pose_b)
    if shells is not r:
        return shells
    band = float(r.tolerance)
    got = open_crossing(a, b, pose_a=pose_a, pose_b=pose_b, band=band)
    if got is None:
        tried = dataclasses.replace(r, note=_joined(
            r.note, "no point of one open part was found deeper than the band inside the other with "
                    "its holes closed (and the holes farther than the band), nor inside the closed "
                    "shells of both parts' faces whose distances to the faces of each add up to more than the band"))
        return _shells_fit(tried, a, b, pose_a, pose_b)
    depth, point, near, which = got
    inner, outer = (a, b) if which == "a in b" else (b, a)
    pa, pb = (point, near) if which == "a in b" else (near, point)
    return _deep(r, depth, pa, pb, point, which, EXIT_OPEN_DEEP,
                 f"collision: a point of '{inner.name}' lies {depth:.6g} inside '{outer.name}' with its "
                 f"holes closed, beyond the band ({band:.6g}), and the holes lie farther than the band "
                 f"from '{inner.name}': their surfaces cross after any move within the band")


def _shells_verdict(r, a, b, pose_a=None, pose_b=None):
    """Two open parts: a collision where a point lies inside the closed shells the faces of both
    hold (a frame whose edges carry T-junctions, a wall whose opening is filled by plugs sharing
    its rims), its distances to every face of each adding up to more than the band
    (`gjkcli.engine.shells.shell_overlap`); else `r` itself."""
    from gjkcli.engine.shells import shell_overlap

    band = float(r.tolerance)
    got = shell_overlap(a, b, pose_a=pose_a, pose_b=pose_b, band=band)
    if got is None:
        return r
    depth, point, pa, pb, (sa, sb) = got
    return _two_balls(r, depth, point, pa, pb, EXIT_SHELLS_DEEP,
                      f"collision: the point {_xyz(point)} lies inside the closed shells of '{a.name}' ({sa}) "
                      f"and of '{b.name}' ({sb}) that their faces hold (welded, T-junctions split), "
                      f"{depth:.6g} from the faces of both together, beyond the band ({band:.6g}): the parts "
                      f"overlap after any move within the band")


def _shells_fit(r, a, b, pose_a=None, pose_b=None):
    """Two open parts that neither rule above settled, each holding closed shells (a frame whose
    edges carry T-junctions set in a wall whose opening is filled by plugs sharing its rims): a
    fit, judged as two closed parts are (`thickness_verdict`), by the mean thickness of the
    common solid of the material their shells enclose (`gjkcli.mesh.overlap.material_surface`, each
    part's shells joined by manifold3d's union); else `r`.

    Only the mean thickness: a plug filling a wall's opening is material of the union, so a
    point of a frame in the opening lies deep in it, while the opening's faces, which the
    shells' rule above measures from, say where the wall ends. The union errs towards more
    common solid, never less (`gjkcli.engine.shells.shells_of` declines parts whose shells may
    miss material)."""
    import dataclasses

    from gjkcli.engine.results import Status
    from gjkcli.engine.shells import shells_of
    from gjkcli.mesh.overlap import material_surface, overlap

    shells_a = shells_of(a, pose_a)
    shells_b = shells_of(b, pose_b) if shells_a else None
    if not shells_a or not shells_b:
        return r
    (surface_a, why_a), (surface_b, why_b) = material_surface(a.name, shells_a), material_surface(b.name, shells_b)
    if surface_a is None or surface_b is None:
        return dataclasses.replace(r, note=_joined(r.note, f"the shells' material was not measured: {why_a or why_b}"))
    v = thickness_verdict(r, overlap(a.name, *surface_a, b.name, *surface_b))
    if v.status is not Status.TOUCHING:  # its note names the common solid of the shells' material
        return dataclasses.replace(v, note=v.note.replace(
            "the parts' common solid", "the common solid of the material their closed shells enclose"))
    return dataclasses.replace(v, exit=EXIT_SHELLS_THIN, note=v.note.replace(
        "touching: the parts ", f"touching: the material the closed shells of '{a.name}' "
                                f"({len(shells_a)}) and '{b.name}' ({len(shells_b)}) enclose (their "
                                f"union, manifold3d): they ", 1))


def _xyz(p) -> str:
    return "(" + ", ".join(f"{float(x):.6g}" for x in p) + ")"


def _placed(mesh, pose) -> np.ndarray:
    """(n, 3) the mesh's vertices placed by a rigid 4x4 pose (None: as given)."""
    if pose is None:
        return mesh.vertices
    T = np.asarray(pose, dtype=np.float64)
    return mesh.vertices @ T[:3, :3].T + T[:3, 3]


def _joined(note: str, more: str) -> str:
    return f"{note}; {more}" if note else more
