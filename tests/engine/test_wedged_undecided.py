"""A part wedged in another's slot, its sides on the slot's walls: the shape of the undecided pairs
left in the IFC corpus (issue 40).

The pairs: a membrane in the U of a tile layer (ISSUE_044_test_IFCCOMPOSITEPROFILEDEF, the
surfaces crossing by 5.2e-9 m, IfcOpenShell's rounding), a gable wall on the eaves
(ISSUE_171_IfcSurfaceCurveSweptAreaSolid, 2.4e-8 m), a partition whose door jamb the finish floor
enters by 1.69 mm while the floor wraps the wall on both sides (duplex). At a 2 mm band each
overlap is thinner than the band, yet no move of B within the band parts the volumes: moved
sideways it enters the other wall of the slot, and the way out is the slot's whole depth. So
neither certificate gjk has (a point deeper than the band; a move within the band that parts the
volumes) exists, and the pair is undecided. Settling it needs another certificate, such as a
common solid proven thinner than the band in some direction (issue 40), or the bar-in-a-ring rule
of tests/engine/test_undecided_settled.py (undecided stays the answer). The geometry here is
written from the corpus pair's shape (a 90 mm cap over a 60 mm slot, 1.2 m long, 51 m from the
origin), not copied from the model.

The triangle test alone (`exact_query`) leaves such a pair undecided; the run settles it by the
parts' common solid (`gjkcli.pipeline.refine.by_thickness`, the rule STEP's exact solids follow):
its mean thickness 2 x volume / area, the wedge's interference, is within the band, so the parts
touch. The judge of that thickness here is the construction (the common solid is two slabs
`over` thick) and manifold3d's volume of it.
"""
from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest

trimesh = pytest.importorskip("trimesh")
shapely_geometry = pytest.importorskip("shapely.geometry")

from fits import checked_pair, common_volume  # noqa: E402
from gjkcli.engine.exact import Mesh, exact_query  # noqa: E402
from gjkcli.engine.results import Status  # noqa: E402
from gjkcli.pipeline.refine import EXIT_THIN  # noqa: E402

BAND = 0.002
ORIGIN = np.array([14.68, -51.69, 0.0])  # as far from the origin as the model's parts


def _parts(over: float):
    """A U cap (A) and the bar in its slot (B), B wider than the slot by `over` on each side, as
    trimesh meshes placed at ORIGIN."""
    Polygon = shapely_geometry.Polygon
    cap = Polygon([(-0.045, 0), (0.045, 0), (0.045, 0.09), (-0.045, 0.09)]).difference(
        Polygon([(-0.03, 0), (0.03, 0), (0.03, 0.08), (-0.03, 0.08)]))
    a = trimesh.creation.extrude_polygon(cap, 1.2)
    w = 0.03 + over
    b = trimesh.creation.extrude_polygon(Polygon([(-w, 0), (w, 0), (w, 0.08), (-w, 0.08)]), 1.2)
    a.apply_translation(ORIGIN)
    b.apply_translation(ORIGIN)
    return a, b


def _wedged(over: float):
    """exact_query (the triangle test alone) of the cap and the bar at a 2 mm band."""
    a, b = _parts(over)
    return exact_query(Mesh(a.vertices, a.faces), Mesh(b.vertices, b.faces), tolerance=BAND)


def mean_thickness_in(note: str) -> float:
    """The mean thickness a settled pair's note gives."""
    return float(re.search(r"2 x volume / area (\S+)", note).group(1))


def _checked(tmp_path, over: float, band: float = BAND):
    """The pair as `gjk check` answers it (the run: the triangle test, then the common solid)."""
    return checked_pair(tmp_path, *_parts(over), band, ("cap", "bar"))


def test_a_bar_that_fits_its_slot_exactly_is_touching():
    r = _wedged(0.0)
    assert r.status is Status.TOUCHING, r.note


@pytest.mark.parametrize("over", [5e-9, 1e-6, 0.85 * BAND])
def test_the_triangle_test_alone_leaves_a_wedged_bar_undecided(over):
    """The shape of the corpus's pairs: neither a point deeper than the band nor a short move."""
    r = _wedged(over)
    assert r.status is Status.UNDECIDED, r.note


@pytest.mark.parametrize("over", [2e-10, 5e-9, 1e-6, 0.85 * BAND])
def test_a_bar_wedged_in_its_slot_by_less_than_the_band_is_settled(tmp_path, over):
    """2e-10 m: slabs thinner than 1e-9 of the common solid's size, which the mean thickness
    took for sheets of no thickness (Schependomlaan's precast slabs, 35 to 70 nm into their
    floors' slots, stayed undecided), and the bar's top on the slot's ceiling, a sheet, not
    counted."""
    pair = _checked(tmp_path, over)
    assert pair.status is Status.TOUCHING, pair.note
    assert pair.result.exit == EXIT_THIN and pair.result.certificate is None
    assert pair.mode == "exact" and not pair.violation
    # the thickness the note gives is the analytic one of the common solid, two slabs `over`
    # thick, 1.2 m long and 0.08 m high (the sheet where the bar's top lies on the slot's
    # ceiling not counted), and manifold3d's volume of the parts at the origin (double
    # precision) is the slabs'
    volume, area = 2 * over * 1.2 * 0.08, 2 * 2 * (1.2 * 0.08 + over * 1.2 + over * 0.08)
    assert mean_thickness_in(pair.note) == pytest.approx(2 * volume / area, rel=1e-4)
    assert common_volume(*_parts(over)) == pytest.approx(volume, rel=1e-3)


@pytest.mark.parametrize("over", [1.15 * BAND, 3 * BAND])
def test_a_bar_wedged_by_more_than_the_band_is_not_touching(tmp_path, over):
    """Over the band the common solid is thicker than the band: a mean proves no depth, so the
    pair stays undecided (or a point beyond the band proves the collision), never touching."""
    pair = _checked(tmp_path, over)
    assert pair.status in (Status.UNDECIDED, Status.COLLISION), pair.note
    if pair.status is Status.UNDECIDED:
        assert "mean thickness" in pair.note and "beyond the band" in pair.note


def test_a_mean_thickness_beyond_the_band_leaves_the_pair_undecided_with_it_in_the_note():
    """The same undecided answer judged by a common solid thicker than the band (the bar's
    volumes at a band a tenth of the wedge): a mean proves no depth, so no verdict changes."""
    from gjkcli.mesh.overlap import overlap
    from gjkcli.pipeline.refine import thickness_verdict

    a, b = _parts(0.85 * BAND)
    r = _wedged(0.85 * BAND)
    thin = dataclasses.replace(r, tolerance=0.1 * BAND)
    got = thickness_verdict(thin, overlap("cap", a.vertices, a.faces, "bar", b.vertices, b.faces))
    assert got.status is Status.UNDECIDED and got.exit == r.exit
    assert got.note.startswith(r.note) and "mean thickness" in got.note and "beyond the band" in got.note


def test_a_part_that_bounds_no_volume_leaves_the_pair_undecided_with_the_reason():
    from gjkcli.mesh.overlap import overlap
    from gjkcli.pipeline.refine import thickness_verdict

    a, b = _parts(0.5 * BAND)
    r = _wedged(0.5 * BAND)
    open_bar = b.faces[2:]  # two triangles fewer: a hole
    got = thickness_verdict(r, overlap("cap", a.vertices, a.faces, "bar", b.vertices, open_bar))
    assert got.status is Status.UNDECIDED
    assert "'bar' is not a closed surface" in got.note or "bar is not a closed surface" in got.note
