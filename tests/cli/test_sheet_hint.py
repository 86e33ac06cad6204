"""A DXF nest drawn with its sheet on a layer of its own, scanned without --sheet-layer: the
parts on the other layers are parts (contour nesting never crosses layers: a part is never a
hole of the sheet), each checked against shapely, and a note names the option."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from shapely.geometry import Polygon

from gjkcli.cli import main

ezdxf = pytest.importorskip("ezdxf")


def square(x0, y0, x1, y1):
    return [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]


# A has a hole (on its own layer) that D sits in, 3 from its edge; B overlaps A; C is clear.
SHAPES = {
    "A": (square(10, 10, 30, 30), square(15, 15, 25, 25)),
    "B": (square(25, 12, 45, 28), None),
    "C": (square(60, 10, 80, 30), None),
    "D": (square(18, 18, 22, 22), None),
}


@pytest.fixture
def nest(tmp_path):
    doc = ezdxf.new(units=4)
    msp = doc.modelspace()
    msp.add_lwpolyline(square(0, 0, 100, 60), close=True, dxfattribs={"layer": "SHEET"})
    handles = {}
    for name, (outline, hole) in SHAPES.items():
        handles[msp.add_lwpolyline(outline, close=True, dxfattribs={"layer": "CUT"}).dxf.handle] = name
        if hole:
            msp.add_lwpolyline(hole, close=True, dxfattribs={"layer": "CUT"})
    doc.saveas(tmp_path / "nest.dxf")
    return tmp_path / "nest.dxf", handles


def shapely_of(name) -> Polygon:
    outline, hole = SHAPES[name]
    return Polygon(outline, [hole] if hole else [])


def scan(*args):
    r = CliRunner(catch_exceptions=False).invoke(main, ["scan", *map(str, args), "--format", "json",
                                                        "--all-pairs"])
    return r.exit_code, json.loads(r.stdout)


def part_pairs(doc, handles) -> dict:
    """{(name, name): pair} for the pairs of two CUT parts, named as SHAPES."""
    out = {}
    for p in doc["pairs"]:
        a, b = p["a"].split(":"), p["b"].split(":")
        if a[0] == "CUT" and b[0] == "CUT":
            out[tuple(sorted((handles[a[1]], handles[b[1]])))] = p
    return out


def agree_with_shapely(pairs: dict) -> None:
    # every pair that shapely finds overlapping or near is checked (the others are apart)
    for a, b in (("A", "B"), ("A", "C"), ("A", "D"), ("B", "C"), ("B", "D"), ("C", "D")):
        if (a, b) not in pairs:
            assert shapely_of(a).distance(shapely_of(b)) > 0
    assert {("A", "B"), ("A", "D")} <= set(pairs)
    for (a, b), p in pairs.items():
        sa, sb = shapely_of(a), shapely_of(b)
        if sa.intersection(sb).area > 0:
            assert p["status"] == "collision", (a, b, p)
        else:
            assert p["status"] == "clear" and p["distance"] == pytest.approx(sa.distance(sb), abs=1e-9)


def test_without_sheet_layer_parts_are_checked_and_the_note_names_the_option(nest):
    path, handles = nest
    code, doc = scan(path)
    layers = sorted(o["layer"] for o in doc["objects"])
    assert layers == ["CUT"] * 4 + ["SHEET"]  # before: A, B, C and D were holes of the sheet
    pairs = part_pairs(doc, handles)
    assert ("A", "B") in pairs and ("A", "D") in pairs
    agree_with_shapely(pairs)
    # the sheet's outline is a part that collides with every part it holds
    sheet = [p for p in doc["pairs"] if "SHEET" in (p["a"].split(":")[0], p["b"].split(":")[0])]
    assert len(sheet) == 4 and all(p["status"] == "collision" for p in sheet)
    # (D, in A's hole, is not an outline of its own: A holds it)
    assert f"{path}: layer SHEET looks like a sheet (its outline holds 3 of the 3 outlines on other " \
           f"layers, and collides with each part): pass --sheet-layer SHEET" in doc["notes"]
    assert code == 1


def test_with_sheet_layer_the_same_parts_and_no_note(nest):
    path, handles = nest
    code, doc = scan(path, "--sheet-layer", "SHEET", "--clearance", "2")
    assert sorted(o["layer"] for o in doc["objects"]) == ["CUT"] * 4 + ["SHEET"]
    pairs = part_pairs(doc, handles)
    agree_with_shapely(pairs)
    assert all(shapely_of(a).distance(shapely_of(b)) > 2 for a, b in pairs if (a, b) != ("A", "B"))
    assert [tuple(sorted((handles[p["a"].split(":")[1]], handles[p["b"].split(":")[1]])))
            for p in doc["pairs"] if p["fails"]] == [("A", "B")]
    assert not any("looks like a sheet" in n for n in doc["notes"])
    assert code == 1
