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
"""
from __future__ import annotations

import numpy as np
import pytest

trimesh = pytest.importorskip("trimesh")
shapely_geometry = pytest.importorskip("shapely.geometry")

from gjkcli.engine.exact import Mesh, exact_query  # noqa: E402
from gjkcli.engine.results import Status  # noqa: E402

BAND = 0.002
ORIGIN = np.array([14.68, -51.69, 0.0])  # as far from the origin as the model's parts


def _wedged(over: float):
    """exact_query of a U cap (A) and the bar in its slot (B), B wider than the slot by `over`
    on each side, at a 2 mm band."""
    Polygon = shapely_geometry.Polygon
    cap = Polygon([(-0.045, 0), (0.045, 0), (0.045, 0.09), (-0.045, 0.09)]).difference(
        Polygon([(-0.03, 0), (0.03, 0), (0.03, 0.08), (-0.03, 0.08)]))
    a = trimesh.creation.extrude_polygon(cap, 1.2)
    w = 0.03 + over
    b = trimesh.creation.extrude_polygon(Polygon([(-w, 0), (w, 0), (w, 0.08), (-w, 0.08)]), 1.2)
    return exact_query(Mesh(a.vertices + ORIGIN, a.faces), Mesh(b.vertices + ORIGIN, b.faces),
                       tolerance=BAND)


def test_a_bar_that_fits_its_slot_exactly_is_touching():
    r = _wedged(0.0)
    assert r.status is Status.TOUCHING, r.note


@pytest.mark.xfail(strict=True, reason="issue 40: a part wedged in a slot it overlaps by less "
                                       "than the band has no certificate yet (see the module)")
@pytest.mark.parametrize("over", [5e-9, 1e-6, 0.85 * BAND])
def test_a_bar_wedged_in_its_slot_by_less_than_the_band_is_settled(over):
    r = _wedged(over)
    assert r.status is not Status.UNDECIDED, r.note
