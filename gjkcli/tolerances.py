"""Every tolerance gjk uses, in one documented place.

Lengths are relative to the *pair size*: the larger of the two shapes' bounding-box diagonals
(world frame, inflation included). Nothing in the engine compares against a bare epsilon.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Tolerances:
    """Tolerances of the engine and of the verdicts.

    Attributes
    ----------
    touching_rel
        Default touching band, as a fraction of the pair size: two parts whose signed distance
        lies within +-(touching_rel * size) are `touching`. 1e-7 sits above the rounding of
        single-precision STL coordinates (6e-8 relative), so faces exported to touch read as
        touching, and far below anything a machine shop or a printer resolves.
    gjk_rel
        GJK stops when the gap between its upper bound |v| and its lower bound (the separating
        plane's gap) falls below gjk_rel * pair size (van den Bergen 2003, section 4.3.5).
    epa_rel
        EPA stops when the polytope's closest face is within epa_rel * pair size of the support
        value in its normal direction.
    degenerate_rel
        GJK: |v| below this fraction of the size means the origin lies on the simplex; EPA: faces
        whose area is below its square have no normal.
    flat_rel
        A point set thinner than this fraction of its extent along a principal axis has no
        extent there: its hull is a flat polygon, a segment or a point instead of a solid.
    plateau_rel
        Hill climbing treats two support values within plateau_rel * |d| * extent as equal and
        explores the plateau instead of stopping on it.
    verify_rel
        Slack of the certificate check, as a fraction of the pair size.
    convex_depth_rel, convex_volume_rel, convex_area_rel, convex_flat_rel
        How close to convex a part is, for the one-line reason a report gives
        (gjkcli/mesh/convexity.py, `convexity`); no verdict rests on them: a hull verdict stands
        only when a part is its hull within the pair's touching band (`hull_gaps`). A part is
        close to its hull when its surface
        lies within convex_depth_rel x its bounding-box diagonal of the hull's surface and, closed,
        fills the hull's volume within convex_volume_rel (open or multi-body: its area within
        convex_area_rel); a part thinner than convex_flat_rel x its diagonal is flat.
        convex_depth_rel lets through the Panda links' creases (1.1e-3 at an edge midpoint) with a
        margin of two; convex_flat_rel sits above float32 rounding (6e-8), so an exported flat
        plate reads as flat.
    thickness_plane_rel, thickness_offset_rel
        The mean thickness of a fit's common solid (`gjkcli.pipeline.policy.bounding_area`)
        cancels a sheet of no thickness, two faces back to back on one plane: faces whose
        normals agree to thickness_plane_rel and whose planes lie within thickness_offset_rel x
        the solid's size of each other (or 64 units in the last place of its farthest
        coordinate, the rounding of a sheet's two clipped copies), which is far finer than any
        slab a fit leaves: two faces farther apart bound a slab that thick, which counts.
    exact_snap_rel
        Exact mode: a triangle corner within this fraction of the pair size of another
        triangle's plane lies on it, so faces exported to touch meet whatever the rounding.
    shell_weld_rel
        The closed shells of an open part (`gjkcli.engine.shells`): vertices within this
        fraction of the part's size are one, and a vertex this close to an edge splits it.
    exact_step_rel
        Exact mode's overlap probes: points just inside a solid, a face centroid moved inward by
        this fraction of the part's size.
    witness_rel
        Exact mode's search for the deepest point of one part inside the other stops refining a
        triangle where it could gain no more than this fraction of the depth found (or of the
        band, before a point inside is found): the depth it reports is a lower bound either way.
    witness_gain_rel
        Once that search has found a point deeper than the band (the collision is proved), a
        round of refinement that deepens the best point by no more than this fraction of its
        depth counts as no gain; a few such rounds in a row end the search (exact.WITNESS_FLAT).
        The depth reported is still one reached by a point inside, a lower bound.
    winding_inside
        A point is inside a solid when its generalized winding number exceeds this in magnitude
        (0 or 1 up to rounding away from the surface; -1 inside an inside-out solid).
    hull_area_rel
        A part covers its hull's surface when its triangles' total area equals the hull's to this
        fraction (`gjkcli.mesh.convexity.hull_gaps`): qhull's area and a sum of triangle areas
        agree far closer, and a missing or doubled face, a pocket's walls, a cavity differ far more.
    merge_rel
        Vertices closer than this fraction of the largest absolute coordinate are one vertex
        (`gjkcli.mesh.load.merge_close`): far below float32 rounding (6e-8), far above float64
        noise around zero (1e-17). 2**-40, so the grid is exact in int64.
    rigid_rel
        A 4x4 transform is rigid when its rotation block is orthonormal to this (entrywise
        |R^T R - I|) with a positive determinant and its last row is 0 0 0 1 to it.
    bounds_pad_rel
        The broad phase grows every box by this fraction of the scene's extent besides the
        clearance and the band: the rounding of the bounds must not drop a touching pair.
    max_coordinate
        The largest coordinate magnitude a part may have: squared distances of larger numbers
        overflow double precision (1.8e308), so such a part (a node scaled by 1e300, a float32
        STL at 3e38) is an error of its file, never a verdict.
    max_gjk_iterations, max_epa_iterations
        Iteration caps; reaching one ends the query with a named exit, never a guess.
    brute_force_below
        Hulls with fewer vertices than this use a linear scan for support instead of hill
        climbing, and get no cold-start table (measured by benchmarks/bench_support.py, part
        (b), after the climb's plateau check, EPA's warm hints and the cube-map cold starts: two
        runs on a loaded 2-core machine found hill climbing faster per support call from n = 40
        (warm walk, both runs) and 48 to 64 (cold), and per whole GJK + EPA query from 64 to 96.
        48 is where the support calls cross; whole queries of 48 to 64-vertex hulls can run up to
        ~20% faster with the scan, a fraction of a microsecond).
    small_hull_rel
        The compiled hull of small point sets (`build_hulls`' `small`, csrc/smallhull.c) takes a
        point closer than this fraction of the part's extent to a face's plane as on it (not a
        vertex): far below the touching band and flat_rel, far above the rounding of centred
        coordinates (a few 1e-16); the hull may then miss a point by that much, a shift no
        verdict sees.
    small_hull_ulps
        ... and never less than this many units of rounding (float64's eps) of the part's largest
        world coordinate: a part 1e6 from the origin has its points rounded to about 1e-10, above
        small_hull_rel x its size, so its caps and faces would be flat only to their rounding (a
        cylinder's cap 40 wide at 1e6 was not flat to 1e-12 x 40 and went to qhull). 16 ulps
        covers the rounding of the points' transforms and centring, 3.6e-9 at 1e6.
    convex_cut_rel
        The common solid of two convex parts (gjkcli/engine/csrc/convexcut.c, the overlap volume
        of `gjkcli.mesh.overlap.convex_overlap`) takes a point within this fraction of the
        pair's largest coordinate (both parts shifted to their common box's middle) of a cutting
        plane as on it: a corner a face merely grazes makes no sliver, far below any volume a
        report prints.
    cad_deflection_rel
        A STEP solid is tessellated (`gjkcli.mesh.cad`) with a linear deflection of this fraction
        of its bounding-box diagonal: 1e-3 keeps a part of a few thousand triangles and its
        tessellation error (`eps`) at a thousandth of its size; verdicts within the error are
        decided on the exact solids, so a coarser mesh costs refinements, not correctness.
    canonical_rel
        The exact checks (`gjkcli.mesh.cad`) measure a STEP solid whose B-spline faces are
        cylinders, cones, spheres, tori or planes within canonical_rel x its diagonal on those
        surfaces (OpenCASCADE's GeomConvert_SurfToAnaSurf), and its B-spline edges between them
        on the circles and lines where those surfaces meet, 5 to 10 times faster; 1e-9 keeps the
        surfaces' move two orders below the touching band (touching_rel), and an answer within
        that move of the band or the clearance is measured again on the file's own solids. The
        file's own edges may lie their tolerance off the new ones (`cad.edge_moves`): how
        precisely the file gives its rims, not counted in the move.
    motion_contact_rel
        A robot's motion between waypoints (`gjkcli.pipeline.motion`) reaches a contact when two
        links come within this fraction of the robot's size (its reach, twice: 2.6 um for the
        Panda): conservative advancement approaches a contact in ever smaller steps and stops
        there. On a grazing approach the distance closes slowly, so the band sets how early the
        reported t may be: 1e-6 puts the Panda's within 3e-4 of the first contact.
    chord_rel
        Curves of a 2D drawing (SVG, DXF: `gjkcli.mesh.flat`) are flattened to polygons whose
        chords lie within chord_rel x the drawing's size (the diagonal of its box) of the curve,
        every vertex on it: 0.03 mm on a 3 m sheet. The bound travels with the part, and a pair's
        touching band is widened by both parts' bounds, so no verdict rests on the flattening.
    join_rel
        Open pieces of a drawing (LINEs and ARCs drawn one by one) whose ends lie within join_rel
        x the drawing's size are chained into one closed contour: CAD exports leave gaps of
        rounding size (1e-12 relative) far below it, and a drawing's real gaps far above.
    nest_rel
        Contours of a 2D drawing are nested (a hole in a part, a part in a hole) when every point
        of the inner one lies inside the outer one or within nest_rel x the drawing's size of its
        outline (plus the outer one's flattening bound): a block inserted at 45 degrees puts the
        corners of a square that shares edges with a larger one 1e-14 outside it, float32
        exports 6e-8 relative; a contour that really crosses another does so by far more.
    arc_fit_rel
        A run of a flattened curve's chords whose vertices lie within arc_fit_rel x the fitted
        radius of one circle is an arc of it, and can be cut finer on the circle where the
        flattening bound could change a verdict (`gjkcli.mesh.flat.refined_arcs`): the reader
        keeps every vertex on the curve, so an arc's vertices lie on its circle to rounding, and
        an ellipse's or a spline's lie off any circle by far more.
    sheet_rect_rel
        A 4-vertex outline whose area equals its box's within sheet_rect_rel of it is a straight
        rectangle, which an SVG drawing's sheet is (`gjkcli.mesh.flat`): rounding only.
    same_move_rel, same_direction_rel
        The triangle test's searches for a move that parts two parts (`gjkcli.engine.exact`) try
        a move once: two unit directions whose dot product exceeds 1 - same_move_rel, with steps
        within same_move_rel x the band, are one move; directions within same_direction_rel of
        each other (their dot product against their length) are one direction. Rounding only:
        distinct face normals of a mesh differ by far more.
    nudge_rel, support_tie_rel
        The manager's contact of a concentric pair (`gjkcli.api.manager`): the second part moves
        along -x by nudge_rel x the pair's size to choose the contact's direction, as FCL's MPR
        starts from its nudged centre; the contact point is the first vertex in the mesh's order
        among those within support_tie_rel x the size of the farthest along a direction, as
        FCL's support mapping takes the first of equals.
    """

    touching_rel: float = 1e-7
    gjk_rel: float = 1e-13
    epa_rel: float = 1e-10
    degenerate_rel: float = 1e-12
    flat_rel: float = 1e-9
    plateau_rel: float = 1e-12
    verify_rel: float = 1e-9
    convex_depth_rel: float = 2e-3
    convex_volume_rel: float = 1e-3
    convex_area_rel: float = 1e-3
    convex_flat_rel: float = 1e-6
    thickness_plane_rel: float = 1e-9
    thickness_offset_rel: float = 1e-13
    exact_snap_rel: float = 1e-12
    shell_weld_rel: float = 1e-9
    exact_step_rel: float = 1e-3
    witness_rel: float = 1e-3
    witness_gain_rel: float = 1e-2
    winding_inside: float = 0.5
    hull_area_rel: float = 1e-6
    merge_rel: float = 2.0**-40
    rigid_rel: float = 1e-9
    bounds_pad_rel: float = 1e-12
    max_coordinate: float = 1e150
    max_gjk_iterations: int = 128
    max_epa_iterations: int = 200
    brute_force_below: int = 48
    small_hull_rel: float = 1e-12
    small_hull_ulps: float = 16.0
    convex_cut_rel: float = 1e-12
    motion_contact_rel: float = 1e-6
    cad_deflection_rel: float = 1e-3
    canonical_rel: float = 1e-9
    chord_rel: float = 1e-5
    join_rel: float = 1e-6
    nest_rel: float = 1e-7
    arc_fit_rel: float = 1e-7
    sheet_rect_rel: float = 1e-9
    same_move_rel: float = 1e-12
    same_direction_rel: float = 1e-9
    nudge_rel: float = 1e-6
    support_tie_rel: float = 1e-9


DEFAULT = Tolerances()

# What a run may fail on (manifest `fail_on`, --fail-on): here, below the scene and the pipeline,
# which both read it, so that a run without a manifest does not import the manifest's reader.
FAIL_ON = ("collision", "touching", "clearance")
# Touching is not a failure by itself (parts meant to sit on each other touch), as in `gjk check`.
DEFAULT_FAIL_ON = ("collision", "clearance")


def touching_tolerance(pair_size: float, tolerance: float | None = None) -> float:
    """The touching band half-width in model units: `tolerance` if given, else relative to size."""
    if tolerance is not None:
        if not tolerance >= 0.0:
            raise ValueError(f"tolerance must be >= 0, got {tolerance}")
        return float(tolerance)
    return DEFAULT.touching_rel * float(pair_size)
