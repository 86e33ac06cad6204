"""Nests laid out exactly at their margin and per-part flattening bounds in the 2D run
(gjkcli.pipeline.flat), against shapely on the shapes the drawing was made from. (Layers, units,
holes: tests/mesh/test_flat_nesting.py.)

The drawings are built here with ezdxf from numbers the test keeps; shapely gets the same
numbers (a disc as a fine buffer), never gjk's parts.
"""
from __future__ import annotations

import json
import math

import ezdxf
import numpy as np
import pytest
from shapely.geometry import Point, Polygon, box

from gjkcli.pipeline import run
from gjkcli.report import jsonout
from gjkcli.units import Length

SHEET = (3000.0, 1500.0)
MARGIN = 5.0


def _turned(pts, angle, x0, y0):
    """The polygon turned by `angle` and moved so that its box's lower left corner is (x0, y0)
    exactly (the extreme vertices land on the margin to the last bit)."""
    c, s = math.cos(angle), math.sin(angle)
    q = np.asarray(pts, dtype=float) @ np.array([[c, s], [-s, c]])
    return q - q.min(axis=0) + (x0, y0)


def _margin_nest(rng, closer: float = 0.0):
    """A 3000 x 1500 mm sheet (layer "Sheet") with a row of polygon parts along its lower edge,
    each exactly MARGIN from the edge and from the next part, turned by random angles; an L
    bracket in the upper left corner at MARGIN from both edges; and discs (curves, so that the
    drawing has a flattening bound) in the middle. `closer` moves the last part of the row that
    much towards the sheet's edge. Returns (doc, {handle-name: shapely shape})."""
    doc = ezdxf.new(units=4)  # mm
    doc.layers.add("Sheet")
    msp = doc.modelspace()
    msp.add_lwpolyline([(0, 0), (SHEET[0], 0), SHEET, (0, SHEET[1])], close=True,
                       dxfattribs={"layer": "Sheet"})
    shapes = {}
    x = MARGIN
    for k in range(12):
        if k % 2 == 0:  # a tall rectangle: the turned parts beside it face its straight side
            w = rng.uniform(50, 150)
            pts = np.array([(0, 0), (w, 0), (w, 260), (0, 260)]) + (x, MARGIN)
        else:
            sides = int(rng.integers(3, 7))
            a = np.sort(rng.uniform(0, 2 * math.pi, sides))
            r = rng.uniform(40, 120)
            pts = _turned(np.c_[r * np.cos(a), r * np.sin(a)], rng.uniform(0, math.pi), x,
                          MARGIN - (closer if k == 11 else 0.0))
        e = msp.add_lwpolyline(pts.tolist(), close=True)
        shapes[f"0:{e.dxf.handle}"] = Polygon(pts)
        x = pts[:, 0].max() + MARGIN
    # an L bracket in the upper left corner, MARGIN from both edges
    s, t = 200.0, 60.0
    L = np.array([(0, 0), (s, 0), (s, t), (t, t), (t, s), (0, s)]) + (MARGIN, SHEET[1] - MARGIN - s)
    e = msp.add_lwpolyline(L.tolist(), close=True)
    shapes[f"0:{e.dxf.handle}"] = Polygon(L)
    for k in range(3):
        c, r = (1000.0 + 300 * k, 750.0), 100.0
        e = msp.add_circle(c, r)
        shapes[f"0:{e.dxf.handle}"] = Point(c).buffer(r, quad_segs=256)
    return doc, shapes


@pytest.mark.parametrize("closer, clearance", [(0.0, 5.0), (1e-3, 5.0), (0.02, 5.0),
                                               (0.0, 4.999), (0.0, 5.001)])
def test_a_nest_exactly_at_its_margin(tmp_path, closer, clearance):
    """Every part exactly 5 mm from the sheet's edge and from its neighbour: no finding at
    --clearance 5, whatever bound the drawing's discs carry; a part 1 um or 20 um closer (both
    below the discs' flattening bound, 0.034 mm) fails against the sheet, and only it; at
    --clearance 5.001 every pair at the margin fails, at 4.999 none."""
    doc, shapes = _margin_nest(np.random.default_rng(30), closer)
    doc.saveas(tmp_path / "sheet.dxf")
    found = run.scan([tmp_path / "sheet.dxf"],
                     run.Options(clearance=Length(clearance, "mm"), sheet_layer="SHEET",
                                 all_pairs=True))
    assert not found.errors and found.units == "mm"
    # the oracle: shapely's distances between the shapes as drawn, and to the sheet's outside
    frame = box(-1e4, -1e4, 1e4, 1e4).difference(box(0, 0, *SHEET))
    names = sorted(shapes)
    truth = {}
    for a in names:
        truth[(a, "sheet:SHEET")] = shapes[a].distance(frame)
        for b in names:
            if a < b:
                truth[(a, b)] = shapes[a].distance(shapes[b])
    at_margin = [k for k, d in truth.items() if abs(d - MARGIN) < 1e-9]
    assert len(at_margin) >= 12 + 11 + 1 - 2 * (closer > 0)  # the row's parts to the edge
    # and to each other, the bracket to two edges
    closer_than = {k for k, d in truth.items() if d < clearance - 1e-6}
    assert len(closer_than) == (closer > 0 if clearance <= MARGIN else len(at_margin))
    failing = {tuple(sorted((p.a, p.b))) if p.b != "sheet:SHEET" else (p.a, p.b)
               for p in found.pairs if p.violation}
    assert failing == closer_than
    # straight-edged parts carry no flattening bound; the discs carry theirs
    bound = {o.name: o.flattening for o in found.objects}
    curved = {n for n, s in shapes.items() if isinstance(s, Polygon) and len(s.exterior.coords) > 100}
    assert all((bound[n] > 0) == (n in curved) for n in shapes) and len(curved) == 3
    assert bound["sheet:SHEET"] == 0


def test_json_gives_each_part_its_bound_and_layer(tmp_path):
    doc = ezdxf.new(units=4)
    msp = doc.modelspace()
    msp.add_lwpolyline([(0, 0), (10, 0), (10, 10), (0, 10)], close=True, dxfattribs={"layer": "Cut"})
    msp.add_circle((30, 5), 5, dxfattribs={"layer": "Cut"})
    # a plate with a round hole: its bound is the hole's
    msp.add_lwpolyline([(50, 0), (70, 0), (70, 20), (50, 20)], close=True, dxfattribs={"layer": "Plates"})
    msp.add_circle((60, 10), 4, dxfattribs={"layer": "Plates"})
    doc.saveas(tmp_path / "parts.dxf")
    found = run.scan([tmp_path / "parts.dxf"], run.Options(all_pairs=True))
    doc_json = json.loads(jsonout.dumps(jsonout.document(found)))
    got = {(o["layer"], o["flattening"] > 0) for o in doc_json["objects"]}
    assert got == {("Cut", False), ("Cut", True), ("Plates", True)}
    assert all(o["flattening"] >= 0 for o in doc_json["objects"])


def test_curved_parts_at_the_margin(tmp_path):
    """Plates with round holes and a slot (bulges) exactly 5 mm from the sheet's edge and from
    each other pass --clearance 5: their curves lie far from the closest edges, which are drawn
    straight and so exact. A rounded rectangle whose corner arcs run tangent into its straight
    edges at the margin passes too: the chords next to the tangent points carry the bound, so
    its arcs are cut finer until the bound no longer reaches in."""
    doc = ezdxf.new(units=4)
    msp = doc.modelspace()
    msp.add_lwpolyline([(0, 0), (3000, 0), (3000, 1500), (0, 1500)], close=True,
                       dxfattribs={"layer": "Sheet"})
    msp.add_lwpolyline([(5, 5), (105, 5), (105, 55), (5, 55)], close=True)
    msp.add_circle((30, 30), 10)
    msp.add_circle((80, 30), 10)
    msp.add_lwpolyline([(110, 5), (210, 5), (210, 55), (110, 55)], close=True)
    msp.add_lwpolyline([(140, 25, 0, 0, 0), (180, 25, 0, 0, 1), (180, 35, 0, 0, 0),
                        (140, 35, 0, 0, 1)], format="xyseb", close=True)
    r, b = 10.0, math.tan(math.pi / 8)  # a quarter circle as a bulge
    x0, y0, x1, y1 = 2000.0, 5.0, 2100.0, 55.0
    rounded = msp.add_lwpolyline(
        [(x0 + r, y0, 0, 0, 0), (x1 - r, y0, 0, 0, b), (x1, y0 + r, 0, 0, 0), (x1, y1 - r, 0, 0, b),
         (x1 - r, y1, 0, 0, 0), (x0 + r, y1, 0, 0, b), (x0, y1 - r, 0, 0, 0), (x0, y0 + r, 0, 0, b)],
        format="xyseb", close=True)
    doc.saveas(tmp_path / "curved.dxf")
    found = run.scan([tmp_path / "curved.dxf"], run.Options(clearance=5.0, sheet_layer="Sheet",
                                                            all_pairs=True))
    failing = {(p.a, p.b) for p in found.pairs if p.violation}
    assert failing == set() and rounded.dxf.handle
    assert all(p.result.distance == pytest.approx(5.0, abs=1e-9) for p in found.pairs)
    assert [o.flattening > 0 for o in found.objects] == [True, True, True, False]  # the sheet last
    # shapely: every gap is 5 (the holes do not change a plate's outline)
    frame = box(-1e4, -1e4, 1e4, 1e4).difference(box(0, 0, 3000, 1500))
    assert box(5, 5, 105, 55).distance(frame) == box(5, 5, 105, 55).distance(box(110, 5, 210, 55)) == 5


@pytest.mark.parametrize("seed", [1, 2])
def test_discs_never_pass_closer_than_the_clearance(tmp_path, seed):
    """Discs at true gaps from K - 0.03 to K + 0.05 from a straight plate (around their
    flattening bound, 0.02 here), turned at random so the flattened polygons face the plate
    with a vertex or a chord: a disc truly closer than K always fails, whatever its polygon's
    gap; of those farther than K + twice the bound, none fails; between 20% and 80% fail."""
    rng = np.random.default_rng(seed)
    K = 5.0
    doc = ezdxf.new(units=4)
    msp = doc.modelspace()
    msp.add_lwpolyline([(0, 0), (3700, 0), (3700, 10), (0, 10)], close=True)
    truth = {}
    for k in range(40):
        gap = K + rng.uniform(-0.03, 0.05)
        r = rng.uniform(20, 40)
        c = (50 + 90 * k, 10 + gap + r)  # apart from each other
        e = msp.add_circle(c, r)
        truth[f"0:{e.dxf.handle}"] = gap
    doc.saveas(tmp_path / "discs.dxf")
    found = run.scan([tmp_path / "discs.dxf"], run.Options(clearance=K, all_pairs=True))
    bound = max(o.flattening for o in found.objects)
    fails = {p.b if p.a not in truth else p.a for p in found.pairs if p.violation
             and (p.a in truth) != (p.b in truth)}
    assert all(name in fails for name, g in truth.items() if g < K)
    assert not any(name in fails for name, g in truth.items() if g > K + 2 * bound)
    assert 0.2 <= len(fails) / len(truth) <= 0.8
