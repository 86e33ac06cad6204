"""A pipe in its sleeve that interferes by less than the band all round: a fit the triangle test
leaves undecided (no point of the pipe lies deeper than the band inside the sleeve, and no move
within the band parts them: the way out is the sleeve's length), which the run settles by the
common solid's mean thickness, 2 x volume / area (`gjkcli.pipeline.refine.by_thickness`, the rule
STEP's exact solids follow).

The pipe (trimesh's cylinder) and the sleeve (trimesh's annulus) have the same facets at the same
angles, the pipe's radius `over` above the sleeve's bore: the common solid is a faceted ring the
sleeve's height long whose facets lie over * cos(pi / n) apart. Its volume and area are written
out below (analytic), and manifold3d's volume of the two meshes (a judge apart from gjk's
overlap) must agree. Swept: the interference just under and over the band, two facet counts,
two bands; gjk says touching exactly where the analytic thickness is within the band, and never
touching where it is beyond (undecided, or collision where a point beyond the band is found).
"""
from __future__ import annotations

import numpy as np
import pytest

trimesh = pytest.importorskip("trimesh")
manifold3d = pytest.importorskip("manifold3d")

from fits import checked_pair, common_volume  # noqa: E402
from gjkcli.engine.exact import Mesh, exact_query  # noqa: E402
from gjkcli.engine.results import Status  # noqa: E402
from gjkcli.pipeline.refine import EXIT_THIN  # noqa: E402

BORE, WALL, HEIGHT = 0.05, 0.012, 0.3  # the sleeve: bore radius, wall, length (m)
PLACE = np.array([12.5, -40.25, 3.0])  # as far from the origin as a building's parts


def _parts(over: float, sections: int):
    sleeve = trimesh.creation.annulus(BORE, BORE + WALL, HEIGHT, sections=sections)
    pipe = trimesh.creation.cylinder(BORE + over, height=3 * HEIGHT, sections=sections)
    sleeve.apply_translation(PLACE)
    pipe.apply_translation(PLACE)
    return sleeve, pipe


def _polygon_area(radius: float, n: int) -> float:
    return 0.5 * n * radius ** 2 * np.sin(2 * np.pi / n)


def _perimeter(radius: float, n: int) -> float:
    return 2 * n * radius * np.sin(np.pi / n)


def analytic(over: float, n: int) -> tuple[float, float]:
    """(volume, mean thickness 2V/A) of the faceted ring the pipe and the sleeve share."""
    ring = _polygon_area(BORE + over, n) - _polygon_area(BORE, n)
    volume = HEIGHT * ring
    area = HEIGHT * (_perimeter(BORE, n) + _perimeter(BORE + over, n)) + 2 * ring
    return volume, 2 * volume / area


def _checked(tmp_path, over: float, sections: int, band: float):
    return checked_pair(tmp_path, *_parts(over, sections), band, ("sleeve", "pipe"))


@pytest.mark.parametrize("sections", [32, 64])
def test_the_triangle_test_alone_leaves_the_fit_undecided(sections):
    """What the run settles: the triangles find neither a depth beyond the band nor a move."""
    sleeve, pipe = _parts(0.5e-3, sections)
    r = exact_query(Mesh(sleeve.vertices, sleeve.faces), Mesh(pipe.vertices, pipe.faces),
                    tolerance=2e-3)
    assert r.status is Status.UNDECIDED, r.note


@pytest.mark.parametrize("sections", [32, 64])
def test_a_pipe_in_its_sleeve_reads_touching_above_its_interference_and_not_below(tmp_path, sections):
    over = 0.5e-3
    volume, thickness = analytic(over, sections)
    assert common_volume(*_parts(over, sections), shift=PLACE) == pytest.approx(volume, rel=1e-6)
    above = _checked(tmp_path, over, sections, band=2e-3)
    assert above.status is Status.TOUCHING, above.note
    assert above.result.exit == EXIT_THIN and above.result.certificate is None
    assert f"{thickness:.6g}" in above.note
    below = _checked(tmp_path, over, sections, band=0.25e-3)
    assert below.status in (Status.UNDECIDED, Status.COLLISION), below.note


@pytest.mark.parametrize("band", [1e-3, 2e-3])
@pytest.mark.parametrize("sections", [32, 64])
@pytest.mark.parametrize("ratio", [0.5, 0.9, 0.97, 1.03, 1.1, 1.5])
def test_interference_just_under_and_over_the_band(tmp_path, band, sections, ratio):
    """The pipe's radius `ratio` x band above the bore, the analytic thickness a little below it
    (the facets' cosine, the ring's ends): touching exactly where that thickness is within the
    band (the sweep keeps 1% or more away from it)."""
    over = ratio * band
    _, thickness = analytic(over, sections)
    assert abs(thickness - band) > 0.01 * band
    pair = _checked(tmp_path, over, sections, band)
    if thickness <= band:
        assert pair.status is Status.TOUCHING, pair.note
        assert pair.violation is False
    else:
        assert pair.status in (Status.UNDECIDED, Status.COLLISION), pair.note
        assert pair.violation is True
