"""The 2D run (gjkcli.pipeline.flat) against shapely on the shapes the drawings were made from.

The oracle never sees gjk's parts: each test keeps the numbers it drew with ezdxf and builds the
same shapes in shapely (circles as fine buffers). A flattened outline moves by at most its chord
bound, so distances agree within both parts' bounds.
"""
from __future__ import annotations

import math

import ezdxf
import numpy as np
import pytest
import shapely
from shapely.geometry import Point, Polygon, box

from gjkcli.engine.results import Status
from gjkcli.errors import InputError
from gjkcli.mesh.flat import read_drawing
from gjkcli.pipeline import run
from gjkcli.report import jsonout


def circle(x, y, r):
    return Point(x, y).buffer(r, quad_segs=256)


def pairs_by_name(found):
    return {tuple(sorted((p.a, p.b))): p for p in found.pairs}


def add_polygon(msp, pts, layer="0"):
    return msp.add_lwpolyline([tuple(map(float, p)) for p in pts], close=True, dxfattribs={"layer": layer})


# -- random drawings against shapely ---------------------------------------------------------------


def _random_shape(rng):
    """(kind, shapely shape, how to draw it)."""
    c = rng.uniform(0, 60, 2)
    kind = rng.integers(3)
    if kind == 0:  # a convex polygon
        angles = np.sort(rng.uniform(0, 2 * math.pi, rng.integers(3, 9)))
        r = rng.uniform(2, 6)
        pts = c + r * np.c_[np.cos(angles), np.sin(angles)]
        return Polygon(pts), ("poly", pts)
    if kind == 1:  # an L bracket, turned
        s, t = rng.uniform(4, 9), rng.uniform(1, 2)
        pts = np.array([(0, 0), (s, 0), (s, t), (t, t), (t, s), (0, s)])
        a = rng.uniform(0, 2 * math.pi)
        rot = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
        pts = pts @ rot.T + c
        return Polygon(pts), ("poly", pts)
    r = rng.uniform(1.5, 4)  # a disc
    return circle(*c, r), ("circle", (c, r))


def test_random_drawing_against_shapely(tmp_path):
    rng = np.random.default_rng(12)
    doc = ezdxf.new()
    msp = doc.modelspace()
    shapes, handles = [], []
    while len(shapes) < 70:
        shape, (how, data) = _random_shape(rng)
        # no shape inside another: a contour inside another would be its hole by the drawing's rule
        if any(shape.within(s) or s.within(shape) for s in shapes):
            continue
        e = add_polygon(msp, data) if how == "poly" else msp.add_circle(tuple(data[0]), data[1])
        shapes.append(shape)
        handles.append(f"0:{e.dxf.handle}")
    doc.saveas(tmp_path / "random.dxf")
    kerf = 1.0
    found = run.scan([tmp_path / "random.dxf"], run.Options(clearance=kerf, all_pairs=True))
    assert found.dimension == 2 and not found.errors
    # how far both outlines of a pair may lie from the true curves
    chord = 2 * read_drawing(tmp_path / "random.dxf").chord
    listed = pairs_by_name(found)
    seen = {s.value: 0 for s in Status}
    for a in range(len(shapes)):
        for b in range(a + 1, len(shapes)):
            d = shapes[a].distance(shapes[b])
            overlap = shapes[a].intersection(shapes[b]).area
            p = listed.get(tuple(sorted((handles[a], handles[b]))))
            if p is None:  # not a candidate: the boxes are apart by more than the kerf
                assert d > kerf
                continue
            seen[p.status.value] += 1
            if p.status is Status.COLLISION:
                assert overlap > 0 and d == 0
            elif p.status is Status.CLEAR:
                assert d >= kerf - chord and overlap == 0
                assert p.result.distance == pytest.approx(d, abs=chord + 1e-9)
            elif p.status is Status.CLEARANCE:
                assert 0 < d < kerf + 2 * chord
                assert p.result.distance == pytest.approx(d, abs=chord + 1e-9)
            else:
                assert p.status is Status.TOUCHING and d <= p.result.tolerance + chord
    # the drawing holds every case, so this test can fail either way
    assert seen["collision"] >= 5 and seen["clearance"] >= 3 and seen["clear"] >= 20


# -- the cases of the issue ---------------------------------------------------------------------


def test_l_bracket_and_a_pin_in_its_corner(tmp_path):
    """The pin sits in the bracket's inner corner: inside its hull, clear of the part."""
    for gap, expect in ((0.3, Status.CLEAR), (-0.3, Status.COLLISION)):
        doc = ezdxf.new()
        msp = doc.modelspace()
        bracket = [(0, 0), (20, 0), (20, 4), (4, 4), (4, 20), (0, 20)]
        add_polygon(msp, bracket)
        r = 3.0
        centre = (4 + r + gap, 4 + r + gap)
        msp.add_circle(centre, r)
        doc.saveas(tmp_path / "bracket.dxf")
        found = run.scan([tmp_path / "bracket.dxf"], run.Options(all_pairs=True))
        (p,) = found.pairs
        ref = Polygon(bracket).distance(circle(*centre, r))
        assert p.status is expect
        if expect is Status.CLEAR:
            assert p.result.distance == pytest.approx(ref, abs=1e-4) and ref == pytest.approx(gap, abs=1e-4)
            # the hulls overlap: a 3D-style hull answer would have called this a collision
            assert shapely.convex_hull(Polygon(bracket)).intersects(circle(*centre, r))


def test_part_in_a_hole_is_clear_and_a_plate_around_a_part(tmp_path):
    doc = ezdxf.new(units=4)
    msp = doc.modelspace()
    add_polygon(msp, [(0, 0), (50, 0), (50, 40), (0, 40)])
    msp.add_circle((25, 20), 10)  # the hole
    slug = msp.add_circle((26, 20), 7)  # in the hole, 2 from its edge at the closest
    doc.saveas(tmp_path / "plate.dxf")
    found = run.scan([tmp_path / "plate.dxf"], run.Options(all_pairs=True, clearance=1.0))
    (p,) = found.pairs
    plate = box(0, 0, 50, 40).difference(circle(25, 20, 10))
    ref = plate.distance(circle(26, 20, 7))
    assert p.status is Status.CLEAR and ref == pytest.approx(2.0, abs=1e-3)
    assert p.result.distance == pytest.approx(ref, abs=2e-3)
    # the same slug 1.5 from the hole's edge... within a clearance of 2.5: clearance
    found = run.scan([tmp_path / "plate.dxf"], run.Options(clearance=2.5))
    (p,) = found.pairs
    assert p.status is Status.CLEARANCE and f"0:{slug.dxf.handle}" in (p.a, p.b)


@pytest.mark.parametrize("gap, expect", [(0.2, None), (0.05, Status.CLEARANCE), (0.0, Status.TOUCHING),
                                         (-0.05, Status.COLLISION)])
def test_kerf(tmp_path, gap, expect):
    doc = ezdxf.new()
    msp = doc.modelspace()
    add_polygon(msp, [(0, 0), (10, 0), (10, 10), (0, 10)])
    add_polygon(msp, [(10 + gap, 2), (20, 2), (20, 8), (10 + gap, 8)])
    doc.saveas(tmp_path / "kerf.dxf")
    if gap == 0.2:  # and a stray line, which is no part
        msp.add_line((30, 0), (35, 5))
        doc.saveas(tmp_path / "kerf.dxf")
    found = run.scan([tmp_path / "kerf.dxf"], run.Options(clearance=0.1))
    assert any("1 open piece " in n for n in found.notes) == (gap == 0.2)
    if expect is None:
        assert found.pairs == () and found.exit_code == 0  # the boxes are farther apart than the kerf
        return
    (p,) = found.pairs
    assert p.status is expect and p.fails and found.exit_code == 1
    if expect is Status.CLEARANCE:
        assert p.result.distance == pytest.approx(0.05, abs=1e-12)
    if expect is Status.COLLISION:
        assert p.result.depth == pytest.approx(0.05, abs=1e-9)


def test_sheet_boundary(tmp_path):
    doc = ezdxf.new(units=4)
    msp = doc.modelspace()
    add_polygon(msp, [(0, 0), (100, 0), (100, 50), (0, 50)], layer="SHEET")
    inside = add_polygon(msp, [(40, 20), (50, 20), (50, 30), (40, 30)])
    near = add_polygon(msp, [(0.5, 10), (10, 10), (10, 20), (0.5, 20)])  # 0.5 from the left edge
    crossing = msp.add_circle((100, 25), 3)
    outside = add_polygon(msp, [(120, 0), (130, 0), (130, 10), (120, 10)])
    doc.saveas(tmp_path / "sheet.dxf")
    found = run.scan([tmp_path / "sheet.dxf"], run.Options(clearance=1.0, sheet_layer="SHEET"))
    on_sheet = {p.a: p for p in found.pairs if p.b == "sheet:SHEET"}
    assert set(on_sheet) == {f"0:{near.dxf.handle}", f"0:{crossing.dxf.handle}", f"0:{outside.dxf.handle}"}
    assert on_sheet[f"0:{near.dxf.handle}"].status is Status.CLEARANCE
    assert on_sheet[f"0:{near.dxf.handle}"].result.distance == pytest.approx(0.5, abs=1e-9)
    assert on_sheet[f"0:{crossing.dxf.handle}"].status is Status.COLLISION
    assert on_sheet[f"0:{outside.dxf.handle}"].status is Status.COLLISION
    assert "leaves the sheet" in on_sheet[f"0:{outside.dxf.handle}"].note
    assert f"0:{inside.dxf.handle}" not in on_sheet and found.exit_code == 1
    # the sheet is no part: without --sheet-layer every part would be its hole
    assert "sheet:SHEET" in {o.name for o in found.objects}
    with pytest.raises(InputError, match="--sheet-layer"):  # on 3D files: an input error
        run.check(tmp_path / "a.stl", tmp_path / "b.stl", run.Options(sheet_layer="SHEET"))


def test_check_two_drawings_each_one_part(tmp_path):
    (tmp_path / "a.svg").write_text(
        '<svg xmlns="http://www.w3.org/2000/svg"><g transform="translate(5,0)">'
        '<rect id="r" x="0" y="0" width="10" height="10"/><circle id="c" cx="20" cy="5" r="2"/></g></svg>')
    doc = ezdxf.new()
    add_polygon(doc.modelspace(), [(27.5, 0), (40, 0), (40, 10), (27.5, 10)])
    doc.saveas(tmp_path / "b.dxf")
    found = run.check(tmp_path / "a.svg", tmp_path / "b.dxf")
    (p,) = found.pairs
    ref = box(5, 0, 15, 10).union(circle(25, 5, 2)).distance(box(27.5, 0, 40, 10))
    assert p.a == "a.svg" and p.b == "b.dxf" and p.status is Status.CLEAR
    assert p.result.distance == pytest.approx(ref, abs=1e-3)
    doc = jsonout.document(found)
    assert doc["dimension"] == 2
    (pair,) = doc["pairs"]
    assert len(pair["normal"]) == len(pair["point_a"]) == len(pair["point_b"]) == 2
    assert all(len(corner) == 2 for o in doc["objects"] for corner in o["bounds"])


def test_mixing_2d_and_3d_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="2D drawing and .*3D file"):
        run.check(tmp_path / "a.dxf", tmp_path / "b.stl")
    with pytest.raises(InputError, match="2D drawing"):
        run.scan([tmp_path / "a.stl", tmp_path / "b.svg"])


def test_a_bad_drawing_does_not_stop_the_others(tmp_path):
    doc = ezdxf.new()
    add_polygon(doc.modelspace(), [(0, 0), (1, 0), (1, 1), (0, 1)])
    add_polygon(doc.modelspace(), [(0.5, 0.5), (2, 0.5), (2, 2), (0.5, 2)])
    doc.saveas(tmp_path / "good.dxf")
    (tmp_path / "bad.dxf").write_text("0\nSECTION\nnonsense\n")
    found = run.scan([tmp_path / "bad.dxf", tmp_path / "good.dxf"])
    assert [e.file for e in found.errors] == [str(tmp_path / "bad.dxf")]
    assert found.exit_code == 2 and len(found.pairs) == 1 and found.pairs[0].status is Status.COLLISION
    assert found.pairs[0].a.startswith("good.dxf:")


# -- units: drawings in inches and millimetres, lengths with a unit ------------------------------


def _square_drawing(path, x0, side, insunits):
    doc = ezdxf.new()
    doc.header["$INSUNITS"] = insunits  # 1 inches, 4 millimetres
    add_polygon(doc.modelspace(), [(x0, 0), (x0 + side, 0), (x0 + side, side), (x0, side)])
    doc.saveas(path)
    return path


def test_drawings_in_two_units_are_converted_into_the_first(tmp_path):
    # a 10 mm square at x 0..10 mm; a 1 in square whose left edge is at 0.5 in = 12.7 mm
    mm = _square_drawing(tmp_path / "a_mm.dxf", 0.0, 10.0, 4)
    inch = _square_drawing(tmp_path / "b_in.dxf", 0.5, 1.0, 1)
    found = run.check(mm, inch, run.Options())  # check lists every pair
    assert found.units == "mm"
    (pair,) = found.pairs
    gap = box(0, 0, 10, 10).distance(box(12.7, 0, 38.1, 25.4))  # the oracle, in mm
    assert pair.result.distance == pytest.approx(gap, rel=1e-12)
    assert any("converted to mm" in n for n in found.notes)


@pytest.mark.parametrize("clearance, fails", [("3mm", True), ("2.5mm", False), ("0.11in", True), ("0.1in", False)])
def test_a_clearance_with_a_unit_is_converted_into_the_drawing_unit(tmp_path, clearance, fails):
    from gjkcli.units import parse_length

    mm = _square_drawing(tmp_path / "a_mm.dxf", 0.0, 10.0, 4)
    inch = _square_drawing(tmp_path / "b_in.dxf", 0.5, 1.0, 1)  # 2.7 mm apart
    found = run.check(mm, inch, run.Options(clearance=parse_length(clearance)))
    (pair,) = found.pairs
    assert (pair.status is Status.CLEARANCE) is fails
    assert found.clearance == pytest.approx(parse_length(clearance).to("mm"))


def test_a_length_with_a_unit_needs_a_drawing_that_states_one(tmp_path):
    from gjkcli.units import parse_length

    a = _square_drawing(tmp_path / "a.dxf", 0.0, 10.0, 0)  # 0: unitless
    b = _square_drawing(tmp_path / "b.dxf", 12.0, 10.0, 0)
    with pytest.raises(InputError, match="states none|no unit"):
        run.scan([a, b], run.Options(clearance=parse_length("1mm")))


def test_lazy_object_records_and_repeated_names(tmp_path):
    """Findings.objects of a 2D scan is made on demand (LazyRecords) and reads as the tuple of
    records; parts with one name are numbered, with the packed rings still theirs."""
    import pickle

    from gjkcli.mesh.flat import FlatPart, FlatParts
    from gjkcli.pipeline import flat
    from gjkcli.pipeline.findings import LazyRecords, ObjectRecord

    sq = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
    parts = FlatParts([FlatPart(name="p", source="a.dxf", rings=(sq + [3.0 * k, 0.0],), units="mm")
                       for k in range(3)] + [FlatPart(name="q", source="a.dxf",
                                                      rings=(sq + [1.2, 0.0],), units="mm")])
    named = flat._unique(parts)
    assert [p.name for p in named] == ["p", "p#2", "p#3", "q"]
    assert named.vertices is parts.vertices
    found = flat.FlatRun(run.Options(clearance=0.5), "scan", None).findings(
        named, (), None, across=False, every_pair=0)
    assert isinstance(found.objects, LazyRecords) and len(found.objects) == 4
    records = tuple(found.objects)
    assert all(isinstance(r, ObjectRecord) for r in records)
    assert [r.name for r in records] == ["p", "p#2", "p#3", "q"]
    assert records[3].bounds == ((1.2, 0.0), (2.2, 1.0)) and records[1].vertices == 4
    # read by index, a record is kept (read by iterating, it is made again: equal)
    assert found.objects[-1] == records[3] and found.objects[-1] is found.objects[-1]
    assert found.objects[1:3] == records[1:3]
    assert found.objects == records and found.object("p#3") == records[2]
    with pytest.raises(IndexError):
        found.objects[4]
    assert pickle.loads(pickle.dumps(found.objects)) == records
    # q sits 0.2 from p (and from p#2, 0.8 away: clear by the clearance of 0.5)
    assert {k: p.status for k, p in pairs_by_name(found).items()} == {("p", "q"): Status.CLEARANCE}
