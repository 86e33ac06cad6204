"""Verdicts that hold for the exact arcs, not only for the polygons that flatten them: a circle
of radius 24 crossing a straight part's edge by 0.01248 is a collision with a band of 0.01053
wherever the flattening puts its vertices (the polygon alone may overlap by only 0.0088), and
the verdict on each side of the band's edges is the analytic one (shapely's distance to a circle
buffered to 1e-9 agrees). A curve that is not an arc of a circle cannot be cut finer from the
polygons: such a pair is undecided, never a wrong verdict."""
from __future__ import annotations

import pytest
from shapely.geometry import Point, box

from gjkcli.engine.results import Status
from gjkcli.pipeline import run

R = 24.0


def drawing(tmp_path, dip, rot, far=500.0, shape="circle"):
    """A plate whose top edge is y = 0 and a disc of radius 24 reaching `dip` below it (negative:
    a gap), turned by `rot` degrees about its centre (so the flattening's vertices move); a far
    square makes the drawing large, so the flattening bound (1e-5 of its size) is coarse."""
    cy = R - dip
    if shape == "circle":
        disc = f'<circle id="disc" cx="0" cy="{cy}" r="{R}" transform="rotate({rot} 0 {cy})"/>'
    else:  # an ellipse whose lower end is the same point
        disc = (f'<ellipse id="disc" cx="0" cy="{cy}" rx="{R * 1.5}" ry="{R}" '
                f'transform="rotate({rot} 0 {cy})"/>')
    svg = (f'<svg xmlns="http://www.w3.org/2000/svg" width="600mm" height="600mm" '
           f'viewBox="0 0 600 600"><rect id="plate" x="-50" y="-40" width="100" height="40"/>'
           f'{disc}<rect id="far" x="{far}" y="0" width="10" height="10"/></svg>')
    path = tmp_path / f"disc_{dip}_{rot}.svg"
    path.write_text(svg)
    return path


def oracle(dip, band):
    """The analytic verdict, checked against shapely."""
    plate, disc = box(-50, -40, 50, 0), Point(0, R - dip).buffer(R, 2 ** 14)
    if dip > 0:
        depth = disc.bounds[1] * -1  # how far below y = 0 the disc reaches
        assert depth == pytest.approx(dip, abs=1e-7)
        return Status.COLLISION if dip > band else Status.TOUCHING
    gap = plate.distance(disc)
    assert gap == pytest.approx(-dip, abs=1e-7)
    return Status.CLEAR if -dip > band else Status.TOUCHING


def verdict(path, band):
    found = run.scan([path], run.Options(tolerance=band, all_pairs=True))
    pair = [p for p in found.pairs if {p.a, p.b} == {"plate", "disc"}]
    return (pair[0].status if pair else Status.CLEAR), found  # not listed: clear by the boxes


@pytest.mark.parametrize("rot", [0.0, 0.75, 1.0, 1.25, 1.5])
def test_the_issues_circle_is_a_collision_wherever_its_vertices_fall(tmp_path, rot):
    path = drawing(tmp_path, 0.01248, rot)
    status, found = verdict(path, 0.01053)
    assert status is Status.COLLISION is oracle(0.01248, 0.01053)


@pytest.mark.parametrize("dip, band", [
    (0.01248, 0.0130),    # overlap within the band: touching
    (0.0100, 0.0105),     # just within
    (0.0110, 0.0105),     # just beyond: a collision
    (-0.0095, 0.01053),   # a gap within the band: touching
    (-0.0115, 0.01053),   # a gap beyond it: clear
    (-0.0300, 0.01053),   # far beyond: clear without refining
])
@pytest.mark.parametrize("rot", [0.3, 1.0])
def test_each_side_of_the_band(tmp_path, dip, band, rot):
    status, _ = verdict(drawing(tmp_path, dip, rot), band)
    assert status is oracle(dip, band)


def test_a_curve_that_is_not_an_arc_is_undecided_not_wrong(tmp_path):
    """An ellipse's flattening cannot be cut finer from the polygon: the pair is undecided when
    the bound could change it (a failing run), and a note says why."""
    path = drawing(tmp_path, 0.01248, 1.0, shape="ellipse")
    status, found = verdict(path, 0.01053)
    assert status in (Status.COLLISION, Status.UNDECIDED)
    if status is Status.UNDECIDED:
        assert any("cannot be cut finer" in n for n in found.notes)
