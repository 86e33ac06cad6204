"""Holes that do not depend on rounding, layers, join tolerance and SVG units in the 2D reader
(gjkcli.mesh.flat), each against shapely.

Two drawings are ezdxf's own test files (MIT, tests/data/third_party/README.md): in
`dimension_in_nested_blocks.dxf` a small square shares two edges with a larger one inside
blocks inserted unrotated and at 45 degrees; in `custom_blocks.dxf` a square is inscribed in a
circle, drawn in model space and inserted turned. The others are built here with ezdxf from
numbers the test keeps, and shapely gets the same numbers.
"""
from __future__ import annotations

import math
from pathlib import Path

import ezdxf
import numpy as np
import pytest
from shapely.geometry import Point, Polygon

from gjkcli.errors import InputError
from gjkcli.mesh.flat import Layers, read_drawing, read_flat_objects
from gjkcli.pipeline import run
from gjkcli.engine.results import Status
from gjkcli.units import Length, factor

DATA = Path(__file__).resolve().parents[1] / "data" / "third_party"


def as_shapely(part):
    return Polygon(part.rings[0], holes=list(part.rings[1:]))


def statuses_by_shapely(parts, names, tol):
    """{(a, b): status} of every pair of parts (named by `names`) by shapely: collision when they
    share area, touching when closer than tol, else clear."""
    shapes = [as_shapely(p) for p in parts]
    out = {}
    for a in range(len(parts)):
        for b in range(a + 1, len(parts)):
            if shapes[a].intersection(shapes[b]).area > tol * tol:
                s = Status.COLLISION
            elif shapes[a].distance(shapes[b]) <= tol:
                s = Status.TOUCHING
            else:
                s = Status.CLEAR
            out[tuple(sorted((names[a], names[b])))] = s
    return out


# -- shared edges under rotated inserts ------------------------------------------------------------


def test_ezdxf_nested_blocks_share_edges_at_45_degrees():
    """The file's small squares are holes of the larger ones (and parts again inside those holes)
    at 0 and at 45 degrees alike: no collision; every touching pair is one shapely finds."""
    path = DATA / "dimension_in_nested_blocks.dxf"
    d = read_drawing(path)
    # the same nesting for the unrotated inserts (CB, E0) and the turned ones (D1, E6)
    depths = {}
    for c, depth in zip(d.contours, d.depth.tolist()):
        depths.setdefault(c.name.split("@")[1], []).append((round(abs(c.area)), depth))
    assert sorted(depths["CB"]) == sorted(depths["D1"]) == [(100, 1), (900, 0)]
    assert sorted(depths["E0"]) == sorted(depths["E6"]) == [(100, 2), (100, 2), (900, 1), (900, 1),
                                                            (6400, 0)]
    found = run.scan([path], run.Options(all_pairs=True))
    assert found.counts["collision"] == 0 and not found.errors
    parts, _ = read_flat_objects(path)
    # the run numbers repeated names ("BLK3@E6#2"), in the reader's order
    ref = statuses_by_shapely(parts, [o.name for o in found.objects], 1e-9)
    got = {tuple(sorted((p.a, p.b))): p.status for p in found.pairs}
    want = {k: s for k, s in ref.items() if s is not Status.CLEAR}
    assert {k: s for k, s in got.items() if s is not Status.CLEAR} == want
    assert sum(s is Status.TOUCHING for s in want.values()) == 7


@pytest.mark.parametrize("angle", [0, 30, 45, 60, 90, 135, 210, 333.3])
def test_square_sharing_two_edges_is_a_hole_at_any_insert_angle(tmp_path, angle):
    """A 10 mm square in the corner of a 30 mm one (two shared edges), in a block inserted at
    `angle` and scaled 3.7: one part with a hole, of shapely's area, at every angle."""
    doc = ezdxf.new(units=4)
    blk = doc.blocks.new("CORNER")
    blk.add_lwpolyline([(0, 0), (30, 0), (30, 30), (0, 30)], close=True)
    blk.add_lwpolyline([(0, 0), (10, 0), (10, 10), (0, 10)], close=True)
    msp = doc.modelspace()
    msp.add_blockref("CORNER", (123.456, -78.9), dxfattribs={"rotation": angle, "xscale": 3.7,
                                                            "yscale": 3.7})
    doc.saveas(tmp_path / "corner.dxf")
    parts, _ = read_flat_objects(tmp_path / "corner.dxf")
    assert len(parts) == 1 and len(parts[0].rings) == 2
    s = 3.7
    ref = Polygon([(0, 0), (30 * s, 0), (30 * s, 30 * s), (0, 30 * s)],
                  holes=[[(0, 0), (10 * s, 0), (10 * s, 10 * s), (0, 10 * s)]])
    assert as_shapely(parts[0]).area == pytest.approx(ref.area, rel=1e-12)


def test_square_beside_a_square_is_no_hole(tmp_path):
    """The slack admits points on the outline, not beyond it: a square sharing one edge with
    another, and one closing a notch of a U (its far edge across the opening), stay parts."""
    doc = ezdxf.new(units=4)
    msp = doc.modelspace()
    msp.add_lwpolyline([(0, 0), (10, 0), (10, 10), (0, 10)], close=True)
    msp.add_lwpolyline([(10, 0), (14, 0), (14, 4), (10, 4)], close=True)
    msp.add_lwpolyline([(30, 0), (60, 0), (60, 30), (50, 30), (50, 10), (40, 10), (40, 30),
                        (30, 30)], close=True)
    msp.add_lwpolyline([(40, 10), (50, 10), (50, 30), (40, 30)], close=True)
    doc.saveas(tmp_path / "beside.dxf")
    parts, _ = read_flat_objects(tmp_path / "beside.dxf")
    assert sorted(len(p.rings) for p in parts) == [1, 1, 1, 1]


# -- a polygon inscribed in a circle ------------------------------------------------------------


def test_ezdxf_square_inscribed_in_a_circle_is_its_hole():
    """custom_blocks.dxf: the square's corners lie on the true circle, up to the flattening bound
    outside the flattened one: a hole of the disc, in model space and in the three turned
    inserts; no pair collides (shapely: the four discs are apart)."""
    path = DATA / "custom_blocks.dxf"
    parts, _ = read_flat_objects(path)
    assert len(parts) == 4 and all(len(p.rings) == 2 for p in parts)
    for p in parts:
        disc = as_shapely(p)
        r = math.sqrt(2)  # the circle through the 2 x 2 square's corners
        assert disc.area == pytest.approx(math.pi * r * r - 4, abs=2 * math.pi * r * p.chord + 1e-9)
    found = run.scan([path], run.Options(all_pairs=True))
    assert found.counts["collision"] == 0
    shapes = [as_shapely(p) for p in parts]
    assert all(a.distance(b) > 0.1 for k, a in enumerate(shapes) for b in shapes[k + 1:])


@pytest.mark.parametrize("sides", [3, 4, 5, 6, 8, 12])
def test_polygon_inscribed_in_a_circle_is_a_hole(tmp_path, sides):
    """A regular polygon whose corners lie on a circle, turned by a random angle, in model space
    and in a block inserted at 37 degrees: a hole of the disc; a polygon 1% larger pokes out of
    it (by far more than the flattening bound) and is a part of its own."""
    rng = np.random.default_rng(sides)
    r = 25.0
    doc = ezdxf.new(units=4)
    blk = doc.blocks.new("RING")
    msp = doc.modelspace()
    for k, grow in enumerate((1.0, 1.01)):
        a = rng.uniform(0, 2 * math.pi) + np.arange(sides) * 2 * math.pi / sides
        pts = (r * grow * np.c_[np.cos(a), np.sin(a)]).tolist()
        where = msp if k == 0 else blk
        where.add_circle((0, 0), r)
        where.add_lwpolyline(pts, close=True)
    msp.add_blockref("RING", (100, 0), dxfattribs={"rotation": 37})
    doc.saveas(tmp_path / "inscribed.dxf")
    parts, _ = read_flat_objects(tmp_path / "inscribed.dxf")
    assert sorted(len(p.rings) for p in parts) == [1, 1, 2]
    holed = next(p for p in parts if len(p.rings) == 2)
    inscribed = Polygon(r * np.c_[np.cos(a), np.sin(a)])  # any turn: the area is the same
    ref = Point(0, 0).buffer(r, quad_segs=512).area - inscribed.area
    assert as_shapely(holed).area == pytest.approx(ref, abs=2 * math.pi * r * holed.chord + 1e-3)


# -- layers ------------------------------------------------------------------------------------


def _layered(tmp_path):
    """Two plates on "Cut", each with an engraved mark on "Gravír" inside it and a dimension
    line on "DIMS", and the sheet on "Sheet"."""
    doc = ezdxf.new(units=4)
    msp = doc.modelspace()
    for name in ("Cut", "Gravír", "Sheet", "DIMS"):
        doc.layers.add(name)
    msp.add_lwpolyline([(0, 0), (500, 0), (500, 300), (0, 300)], close=True, dxfattribs={"layer": "Sheet"})
    for x in (10, 200):
        msp.add_lwpolyline([(x, 10), (x + 150, 10), (x + 150, 100), (x, 100)], close=True,
                           dxfattribs={"layer": "Cut"})
        msp.add_circle((x + 40, 50), 8, dxfattribs={"layer": "Gravír"})
        msp.add_lwpolyline([(x + 80, 40), (x + 120, 40), (x + 120, 60), (x + 80, 60)], close=True,
                           dxfattribs={"layer": "Gravír"})
        msp.add_line((x, 5), (x + 150, 5), dxfattribs={"layer": "DIMS"})
    doc.saveas(tmp_path / "layered.dxf")
    return tmp_path / "layered.dxf"


@pytest.mark.parametrize("layers, marks", [
    (Layers(), True),  # the engravings are parts of their own, never holes of another layer's plates
    (Layers(only=("cut",)), False),  # case-insensitive
    (Layers(ignore=("GRAV*",)), False),
    (Layers(only=("C*", "g*")), True),
    (Layers(only=("Cut", "Gravír"), ignore=("gravír",)), False),
])
def test_layer_selection(tmp_path, layers, marks):
    """--layers and --ignore-layers against shapely: each plate has its full area and no
    flattening bound whatever the layers read (nesting never crosses layers); with the engraving
    layer, each mark is a part of its own inside its plate (a circle's bound)."""
    path = _layered(tmp_path)
    parts, sheet = read_flat_objects(path, sheet_layer="SHEET", layers=layers)
    assert sheet is not None and sheet.layer == "Sheet" and sheet.chord == 0
    plates = [p for p in parts if p.layer == "Cut"]
    engraved = [p for p in parts if p.layer == "Gravír"]
    assert len(plates) == 2 and len(engraved) == (4 if marks else 0) and len(parts) == 2 + len(engraved)
    full = Polygon([(0, 0), (150, 0), (150, 90), (0, 90)]).area
    for p in plates:
        assert len(p.rings) == 1 and p.chord == 0
        assert as_shapely(p).area == pytest.approx(full, abs=1e-6)
    circle = Point(0, 0).buffer(8, quad_segs=256).area
    for m in engraved:
        assert len(m.rings) == 1
        assert sum(as_shapely(plate).contains(as_shapely(m)) for plate in plates) == 1
        assert as_shapely(m).area == pytest.approx(circle if m.chord > 0 else 40 * 20,
                                                   abs=2 * math.pi * 8 * m.chord + 1e-6)
    # the open dimension lines are named by layer and handle in the warning
    d = read_drawing(path, sheet_layer="sheet", layers=layers)
    if layers.takes("DIMS"):
        (warning,) = [n for n in d.notes if "open piece" in n]
        assert "2 open pieces" in warning and "DIMS (2)" in warning and "LINE #" in warning
    else:
        assert not any("open piece" in n for n in d.notes)


def test_layers_that_hold_nothing_name_the_files_layers(tmp_path):
    path = _layered(tmp_path)
    with pytest.raises(InputError, match=r"--layers NOPE\*.*the file's layers: Cut, DIMS, Gravír, Sheet"):
        read_flat_objects(path, layers=Layers(only=("NOPE*",)))
    with pytest.raises(InputError, match=r"layer 'Table' holds no closed contour.*Sheet"):
        read_flat_objects(path, sheet_layer="Table")


def test_sheet_layer_is_case_insensitive_in_the_run(tmp_path):
    path = _layered(tmp_path)
    for spelling in ("SHEET", "sheet", "Sheet", "sh*"):
        found = run.scan([path], run.Options(clearance=5.0, sheet_layer=spelling,
                                             ignore_layers=("Gravír", "DIMS")))
        assert not found.errors and len(found.objects) == 3
        # the plates lie 10 from the sheet's edge and 40 apart: shapely agrees nothing is closer
        assert found.counts["clearance"] == found.counts["collision"] == 0


# -- join tolerance ----------------------------------------------------------------------------


@pytest.mark.parametrize("gap", [0.0, 0.05, 0.3, 1.0])
def test_join_tolerance_closes_micro_joints(tmp_path, gap):
    """A plate drawn as four LINEs with a micro-joint `gap` at one corner, and an open polyline
    with the same gap: left out (with a warning) unless --join-tolerance covers the gap; joined,
    each has shapely's area of the outline with the gap closed by a straight edge."""
    doc = ezdxf.new(units=4)
    msp = doc.modelspace()
    msp.add_line((0, 0), (100, 0))
    msp.add_line((100, 0), (100, 50))
    msp.add_line((100, 50), (0, 50))
    msp.add_line((0, 50), (0, gap))
    msp.add_lwpolyline([(200, gap), (200, 0), (300, 0), (300, 50), (200, 50), (200, 2 * gap)])
    doc.saveas(tmp_path / "tabs.dxf")
    for tol in (None, 0.5, Length(0.5, "mm"), Length(0.02, "in")):
        closes = gap == 0 or (tol is not None and gap <= 0.5)
        if not closes:  # five open pieces and nothing else: the file has no part
            with pytest.raises(InputError, match=r"no closed contour \(5 open pieces"):
                read_flat_objects(tmp_path / "tabs.dxf", join_tolerance=tol)
            continue
        d = read_drawing(tmp_path / "tabs.dxf", join_tolerance=tol)
        parts, _ = read_flat_objects(tmp_path / "tabs.dxf", join_tolerance=tol)
        assert len(parts) == 2 and d.open_pieces == 0
        ref_lines = Polygon([(0, 0), (100, 0), (100, 50), (0, 50), (0, gap)])
        ref_poly = Polygon([(200, gap), (200, 0), (300, 0), (300, 50), (200, 50), (200, 2 * gap)])
        assert sorted(as_shapely(p).area for p in parts) == pytest.approx(
            sorted([ref_lines.area, ref_poly.area]), rel=1e-12)
        assert any("joined across gaps up to" in n for n in d.notes) == (gap > 0)


def test_join_tolerance_with_a_unit_needs_a_drawing_that_states_one(tmp_path):
    doc = ezdxf.new(units=0)
    doc.modelspace().add_lwpolyline([(0, 0), (1, 0), (1, 1), (0, 1)], close=True)
    doc.saveas(tmp_path / "nounit.dxf")
    with pytest.raises(InputError, match="--join-tolerance 1mm"):
        read_drawing(tmp_path / "nounit.dxf", join_tolerance=Length(1, "mm"))
    assert read_drawing(tmp_path / "nounit.dxf", join_tolerance=1.0).open_pieces == 0


# -- SVG px and reader warnings -------------------------------------------------------------------


def test_svg_px_is_a_96th_of_an_inch(tmp_path):
    """A px SVG states its unit: --clearance 0.2mm is converted (0.2 mm = 0.756 px) and checked
    against shapely's gap, in px and in mm."""
    svg = ('<svg xmlns="http://www.w3.org/2000/svg" width="400px" height="100px" viewBox="0 0 400 100">'
           '<rect id="a" x="10" y="10" width="50" height="50"/>'
           '<rect id="b" x="60.7" y="10" width="50" height="50"/>'
           '<rect id="c" x="120" y="10" width="50" height="50"/></svg>')
    (tmp_path / "px.svg").write_text(svg)
    parts, _ = read_flat_objects(tmp_path / "px.svg")
    assert {p.units for p in parts} == {"px"}
    assert factor("px", "mm") == pytest.approx(25.4 / 96)
    found = run.scan([tmp_path / "px.svg"], run.Options(clearance=Length(0.2, "mm")))
    assert found.units == "px" and not found.errors
    shapes = {p.name: as_shapely(p) for p in parts}
    kerf = 0.2 / factor("px", "mm")
    want = {tuple(sorted((a, b))) for a in shapes for b in shapes
            if a < b and shapes[a].distance(shapes[b]) < kerf}
    assert want == {("a", "b")}  # 0.7 px = 0.185 mm
    assert {tuple(sorted((p.a, p.b))) for p in found.pairs if p.violation} == want


def test_ezdxf_warnings_become_notes(tmp_path, capfd):
    found = run.scan([DATA / "dimension_in_nested_blocks.dxf"], run.Options())
    out, err = capfd.readouterr()
    assert "DIMASSOC" not in err and "DIMASSOC" not in out
    (note,) = [n for n in found.notes if "DIMASSOC" in n]
    assert note.startswith(str(DATA / "dimension_in_nested_blocks.dxf")) and "6 times" in note


def test_svg_whose_user_unit_is_a_fraction_of_a_mm(tmp_path):
    """An SVG as older Inkscape writes it: width in mm, a viewBox in 96-dpi px, so one user unit
    is 0.264583 mm. The run converts it into mm (with a note), so --clearance 0.2mm and
    --join-tolerance 0.5mm apply; the gaps are shapely's, times 25.4 / 96."""
    per_px = 25.4 / 96
    svg = ('<svg xmlns="http://www.w3.org/2000/svg" width="100mm" height="50mm" '
           f'viewBox="0 0 {100 / per_px:.6f} {50 / per_px:.6f}">'
           '<rect id="a" x="10" y="10" width="50" height="50"/>'
           '<rect id="b" x="60.7" y="10" width="50" height="50"/>'
           '<path id="c" d="M 120 10 L 170 10 L 170 60 L 120 60 L 120 11"/></svg>')
    (tmp_path / "old.svg").write_text(svg)
    parts, _ = read_flat_objects(tmp_path / "old.svg", join_tolerance=Length(0.5, "mm"))
    (unit,) = {p.units for p in parts}
    assert unit.startswith("0.26458333") and unit.endswith(" mm") and len(parts) == 3
    found = run.scan([tmp_path / "old.svg"], run.Options(clearance=Length(0.2, "mm"),
                                                         join_tolerance=Length(0.5, "mm")))
    assert found.units == "mm" and not found.errors
    assert any("converted to mm (x 0.264583)" in n for n in found.notes)
    shapes = {p.name: as_shapely(p) for p in parts}
    gap = shapes["a"].distance(shapes["b"]) * per_px
    assert gap == pytest.approx(0.7 * per_px)  # 0.185 mm: under 0.2 mm
    (pair,) = [p for p in found.pairs if p.violation]
    assert {pair.a, pair.b} == {"a", "b"} and pair.result.distance == pytest.approx(gap, rel=1e-9)
    # 1 user unit (0.26 mm) is open at c's corner: joined at 0.5 mm, left out at 0.2 mm
    d = read_drawing(tmp_path / "old.svg", join_tolerance=Length(0.2, "mm"))
    assert d.open_pieces == 1 and len(d.contours) == 2
