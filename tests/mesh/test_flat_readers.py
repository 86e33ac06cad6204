"""The 2D readers (gjkcli.mesh.flat) against shapely geometry built from the same numbers.

Every drawing here is written by ezdxf or as SVG text in the test; the expected shape is built
independently with shapely (buffers for circles, affinity for transforms), never by the reader.
A flattened ring must lie within the reader's stated chord of the true outline (the Hausdorff
distance of the boundaries, less the reference's own flattening error).
"""
from __future__ import annotations

import math

import ezdxf
import numpy as np
import pytest
import shapely
from shapely import affinity
from shapely.geometry import Point, Polygon, box

from gjkcli.errors import InputError
from gjkcli.mesh.flat import load_flat_part, read_drawing, read_flat_objects, signed_area

# shapely's circle buffers: 256 segments per quarter, off the circle by r (1 - cos(pi / 1024))
QUAD = 256


def circle(x, y, r):
    return Point(x, y).buffer(r, quad_segs=QUAD)


def ref_error(r):
    return r * (1 - math.cos(math.pi / (4 * QUAD)))


def as_shapely(part):
    """The part's rings under even-odd, as a shapely geometry (symmetric differences)."""
    geom = Polygon(part.rings[0])
    for ring in part.rings[1:]:
        geom = geom.symmetric_difference(Polygon(ring))
    return geom


def assert_same(part, ref, r_max=0.0):
    got = as_shapely(part)
    # every reference vertex against our chords, and our vertices against the reference
    gap = shapely.hausdorff_distance(got.boundary, ref.boundary)
    assert gap <= part.chord + ref_error(r_max) + 1e-9, (gap, part.chord)
    assert got.symmetric_difference(ref).area <= (part.chord + ref_error(r_max)) * ref.length + 1e-9


def by_name(parts, name):
    (hit,) = [p for p in parts if p.name == name]
    return hit


# -- DXF -----------------------------------------------------------------------------------------


def test_dxf_plate_hole_and_a_part_in_the_hole(tmp_path):
    doc = ezdxf.new(units=4)
    msp = doc.modelspace()
    plate = msp.add_lwpolyline([(0, 0), (40, 0), (40, 30), (0, 30)], close=True, dxfattribs={"layer": "cut"})
    msp.add_circle((20, 15), 8, dxfattribs={"layer": "cut"})
    slug = msp.add_circle((20, 15), 5, dxfattribs={"layer": "cut"})
    doc.saveas(tmp_path / "plate.dxf")

    parts, sheet = read_flat_objects(tmp_path / "plate.dxf")
    assert sheet is None
    assert sorted(p.name for p in parts) == sorted([f"cut:{plate.dxf.handle}", f"cut:{slug.dxf.handle}"])
    outer = by_name(parts, f"cut:{plate.dxf.handle}")
    assert len(outer.rings) == 2 and outer.units == "mm" and outer.layer == "cut"
    assert signed_area(outer.rings[0]) > 0 > signed_area(outer.rings[1])
    assert_same(outer, box(0, 0, 40, 30).difference(circle(20, 15, 8)), 8)
    assert_same(by_name(parts, f"cut:{slug.dxf.handle}"), circle(20, 15, 5), 5)
    # the whole file as one part: the plate with its hole, and the slug inside it
    whole = load_flat_part(tmp_path / "plate.dxf")
    assert whole.name == "plate.dxf" and len(whole.rings) == 3
    assert_same(whole, box(0, 0, 40, 30).difference(circle(20, 15, 8)).union(circle(20, 15, 5)), 8)


def test_dxf_insert_transforms_nested_blocks(tmp_path):
    doc = ezdxf.new()
    inner = doc.blocks.new("HOLE")
    inner.add_circle((0, 0), 1)
    tab = doc.blocks.new("TAB")
    tab.add_lwpolyline([(0, 0), (6, 0), (6, 4), (0, 4)], close=True)
    tab.add_blockref("HOLE", (3, 2), dxfattribs={"xscale": 1.5, "yscale": 1.5})
    msp = doc.modelspace()
    ref = msp.add_blockref("TAB", (100, 50), dxfattribs={"xscale": 2, "yscale": 0.5, "rotation": 30})
    doc.saveas(tmp_path / "tab.dxf")

    parts, _ = read_flat_objects(tmp_path / "tab.dxf")
    (part,) = parts
    assert part.name == f"TAB@{ref.dxf.handle}"
    shape = box(0, 0, 6, 4).difference(Point(3, 2).buffer(1.5, quad_segs=QUAD))
    # ezdxf's INSERT: scale, then rotate, then move to the insertion point
    shape = affinity.scale(shape, 2, 0.5, origin=(0, 0))
    shape = affinity.rotate(shape, 30, origin=(0, 0))
    shape = affinity.translate(shape, 100, 50)
    assert_same(part, shape, 3)


def test_dxf_bulges_ellipse_units_and_chained_lines(tmp_path):
    doc = ezdxf.new(units=1)
    msp = doc.modelspace()
    # a slot: two straight sides and two half circles as bulges (bulge 1 = 180 degrees)
    slot = msp.add_lwpolyline([(0, 0, 0, 0, 0), (10, 0, 0, 0, 1), (10, 4, 0, 0, 0), (0, 4, 0, 0, 1)],
                              format="xyseb", close=True)
    ellipse = msp.add_ellipse((30, 2), major_axis=(4, 0), ratio=0.5)
    # an L bracket of six LINEs drawn in no particular order or direction, and one stray line
    corners = [(50, 0), (60, 0), (60, 2), (52, 2), (52, 10), (50, 10)]
    edges = [(corners[k], corners[(k + 1) % 6]) for k in range(6)]
    for k in (3, 0, 5, 1, 4, 2):
        a, b = edges[k]
        msp.add_line(*((b, a) if k % 2 else (a, b)))
    msp.add_line((70, 0), (75, 5))
    doc.saveas(tmp_path / "mixed.dxf")

    drawing = read_drawing(tmp_path / "mixed.dxf")
    assert drawing.units == "in" and drawing.open_pieces == 1
    parts, _ = read_flat_objects(tmp_path / "mixed.dxf")
    assert len(parts) == 3
    slot_ref = box(0, 0, 10, 4).union(circle(10, 2, 2)).union(circle(0, 2, 2))
    assert_same(by_name(parts, f"0:{slot.dxf.handle}"), slot_ref, 2)
    e_ref = affinity.scale(circle(30, 2, 4), 1, 0.5, origin=(30, 2))
    assert_same(by_name(parts, f"0:{ellipse.dxf.handle}"), e_ref, 4)
    (bracket,) = [p for p in parts if p.n_vertices == 6]
    assert as_shapely(bracket).equals(Polygon(corners))
    assert bracket.chord == 0  # straight edges carry no flattening bound, curves their own
    assert by_name(parts, f"0:{slot.dxf.handle}").chord > 0


def test_dxf_sheet_layer_and_closed_spline(tmp_path):
    doc = ezdxf.new(units=4)
    msp = doc.modelspace()
    msp.add_lwpolyline([(0, 0), (200, 0), (200, 100), (0, 100)], close=True, dxfattribs={"layer": "SHEET"})
    fit = [(50 + 10 * math.cos(t), 50 + 10 * math.sin(t)) for t in np.linspace(0, 2 * math.pi, 9)[:-1]]
    spline = msp.add_spline([(x, y, 0) for x, y in fit + fit[:1]])  # closes where it starts
    msp.add_circle((150, 50), 5)
    doc.saveas(tmp_path / "nest.dxf")
    parts, sheet = read_flat_objects(tmp_path / "nest.dxf", sheet_layer="SHEET")
    assert sheet is not None and sheet.name == "sheet:SHEET"
    assert as_shapely(sheet).equals(box(0, 0, 200, 100))
    assert len(parts) == 2
    sp = by_name(parts, f"0:{spline.dxf.handle}")
    assert 39 < sp.bounds[0, 0] < sp.bounds[1, 0] < 61 and as_shapely(sp).is_valid
    with pytest.raises(InputError, match="layer 'NOPE' holds no closed contour"):
        read_flat_objects(tmp_path / "nest.dxf", sheet_layer="NOPE")
    # without --sheet-layer the sheet is a part too, never one with the others as its holes (they
    # are on another layer), and a note names the option
    without, _ = read_flat_objects(tmp_path / "nest.dxf")
    assert len(without) == 3 and all(len(p.rings) == 1 for p in without)
    assert sorted(p.layer for p in without) == ["0", "0", "SHEET"]
    assert (f"{tmp_path / 'nest.dxf'}: layer SHEET looks like a sheet (its outline holds 2 of the 2 "
            f"outlines on other layers, and collides with each part): pass --sheet-layer SHEET"
            in without[0].notes)


# -- SVG -----------------------------------------------------------------------------------------


def test_svg_nested_transforms_and_viewbox_units(tmp_path):
    (tmp_path / "a.svg").write_text(
        '<svg xmlns="http://www.w3.org/2000/svg" width="200mm" height="100mm" viewBox="0 0 100 50">'
        '<g transform="translate(10,5)"><g transform="rotate(30)">'
        '<rect id="plate" x="0" y="0" width="20" height="10" transform="scale(1.5,1)"/></g></g>'
        '<circle id="pin" cx="80" cy="40" r="3"/>'
        '<polygon id="tri" points="40,40 50,40 45,48"/>'
        '<path id="curvy" d="M 60 10 C 65 0 75 0 80 10 Q 70 20 60 10 Z"/>'
        '</svg>')
    parts, _ = read_flat_objects(tmp_path / "a.svg")
    assert {p.name for p in parts} == {"plate", "pin", "tri", "curvy"}
    # one user unit is 2 mm: coordinates stay as written, the units say so
    assert all(p.units == "2 mm" for p in parts)
    plate = affinity.translate(affinity.rotate(affinity.scale(box(0, 0, 20, 10), 1.5, 1, origin=(0, 0)),
                                               30, origin=(0, 0)), 10, 5)
    assert_same(by_name(parts, "plate"), plate)
    assert_same(by_name(parts, "pin"), circle(80, 40, 3), 3)  # y not flipped
    # the root's scaling is undone: the numbers as written, to rounding
    tri = as_shapely(by_name(parts, "tri"))
    assert tri.normalize().equals_exact(Polygon([(40, 40), (50, 40), (45, 48)]).normalize(), 1e-12)
    t = np.linspace(0, 1, 4001)[:, None]
    cubic = ((1 - t) ** 3 * [60, 10] + 3 * (1 - t) ** 2 * t * [65, 0] + 3 * (1 - t) * t ** 2 * [75, 0]
             + t ** 3 * [80, 10])
    quad = (1 - t) ** 2 * [80, 10] + 2 * (1 - t) * t * [70, 20] + t ** 2 * [60, 10]
    curvy = by_name(parts, "curvy")
    assert curvy.chord > 0
    # the dense reference (4,000 steps per curve) is itself within 1e-4 of the curves
    gap = shapely.hausdorff_distance(as_shapely(curvy).boundary,
                                     Polygon(np.concatenate([cubic, quad[1:-1]])).boundary)
    assert gap <= curvy.chord + 1e-4


def test_svg_fill_rules(tmp_path):
    square = "M {0} 0 L {1} 0 L {1} 20 L {0} 20 Z"
    inner_same = "M {0} 5 L {1} 5 L {1} 15 L {0} 15 Z"
    inner_reversed = "M {0} 5 L {0} 15 L {1} 15 L {1} 5 Z"
    (tmp_path / "f.svg").write_text(
        '<svg xmlns="http://www.w3.org/2000/svg">'
        f'<path id="evenodd" fill-rule="evenodd" d="{square.format(0, 20)} {inner_same.format(5, 15)}"/>'
        f'<path id="nonzero" d="{square.format(30, 50)} {inner_same.format(35, 45)}"/>'
        f'<path id="nonzero_hole" d="{square.format(60, 80)} {inner_reversed.format(65, 75)}"/>'
        '</svg>')
    parts, _ = read_flat_objects(tmp_path / "f.svg")
    assert {p.name: len(p.rings) for p in parts} == {"evenodd": 2, "nonzero": 1, "nonzero_hole": 2}
    assert by_name(parts, "evenodd").area == pytest.approx(400 - 100)
    assert by_name(parts, "nonzero").area == pytest.approx(400)
    assert by_name(parts, "nonzero_hole").area == pytest.approx(300)
    assert all(p.units is None for p in parts)


# -- bad files -----------------------------------------------------------------------------------


@pytest.mark.parametrize("name, text, says", [
    ("empty.dxf", "", "is empty"),
    ("junk.dxf", "this is not a drawing\n", "DXF"),
    ("junk.svg", "<svg><path d=", "not a valid SVG"),
    ("blank.svg", '<svg xmlns="http://www.w3.org/2000/svg"><text>hi</text></svg>', "holds no shapes"),
    ("open.svg", '<svg xmlns="http://www.w3.org/2000/svg"><polyline points="0,0 5,0 5,5"/></svg>',
     "holds no closed contour \\(1 open piece"),
])
def test_bad_files_are_one_line_input_errors(tmp_path, name, text, says):
    (tmp_path / name).write_text(text)
    with pytest.raises(InputError, match=says) as info:
        read_drawing(tmp_path / name)
    assert name in str(info.value) and "\n" not in info.value.message


def test_missing_and_only_lines(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        read_drawing(tmp_path / "gone.dxf")
    doc = ezdxf.new()
    doc.modelspace().add_line((0, 0), (1, 1))
    doc.saveas(tmp_path / "line.dxf")
    with pytest.raises(InputError, match="holds no closed contour"):
        read_drawing(tmp_path / "line.dxf")


def test_scan_parts_carry_their_rings_packed(tmp_path):
    """read_flat_objects' FlatParts: the packed arrays are the parts' rings, part for part, and
    joining or renaming keeps them so."""
    from gjkcli.mesh.flat import FlatParts

    doc = ezdxf.new(units=4)
    msp = doc.modelspace()
    msp.add_lwpolyline([(0, 0), (40, 0), (40, 30), (0, 30)], close=True)
    msp.add_circle((20, 15), 8)
    msp.add_circle((20, 15), 5)
    msp.add_lwpolyline([(50, 0), (60, 0), (55, 9)], close=True)
    doc.saveas(tmp_path / "plate.dxf")
    parts, _ = read_flat_objects(tmp_path / "plate.dxf")
    assert isinstance(parts, FlatParts) and len(parts) == 3

    def unpacked(f):
        out = []
        for p in range(len(f)):
            rings = range(f.part_ring[p], f.part_ring[p + 1])
            out.append([f.vertices[f.ring_start[r]:f.ring_start[r + 1]] for r in rings])
        return out

    def same(f, parts):
        got = unpacked(f)
        assert len(got) == len(parts)
        for rings, p in zip(got, parts):
            assert len(rings) == len(p.rings)
            assert all(np.array_equal(a, b) for a, b in zip(rings, p.rings))

    same(parts, parts)
    assert [len(p.rings) for p in parts] != [1] * 3  # the plate has its hole
    both = FlatParts.joined([parts, FlatParts(list(parts)[::-1])])
    same(both, list(parts) + list(parts)[::-1])
    assert len(FlatParts.joined([])) == 0 and len(FlatParts().vertices) == 0
    with pytest.raises(ValueError):
        parts.renamed(list(parts)[:1])


def test_ezdxf_words_in_a_note_are_words(tmp_path):
    """A DXF whose layer table entry has no name fails ezdxf's strict read with "name has to be
    a string, got <class 'NoneType'>"; the note of the lenient read says "got nothing", not a
    Python type's repr."""
    doc = ezdxf.new("R12")
    doc.layers.add("CUT")
    doc.modelspace().add_polyline2d([(0, 0), (10, 0), (10, 10), (0, 10)], close=True,
                                    dxfattribs={"layer": "CUT"})
    made = tmp_path / "made.dxf"
    doc.saveas(made)
    text = made.read_text()
    table = text.index("LAYER\n", text.index("TABLES"))
    name = text.index("\nCUT\n", table)
    path = tmp_path / "noname.dxf"
    path.write_text(text[:text.rfind("\n  2", table, name)] + text[name + 4:])  # the entry's name gone
    with pytest.raises(Exception, match="got <class 'NoneType'>"):
        ezdxf.readfile(path)
    notes = read_drawing(path).notes
    strict = [n for n in notes if "the strict read failed" in n]
    assert strict and "got nothing" in strict[0] and "<class" not in " ".join(notes)
