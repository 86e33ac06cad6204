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
