"""Inputs that state no unit: a DXF without a HEADER section (as OpenSCAD writes them), an STL;
`--units` declares their unit, a length with a unit is otherwise an error naming the fix, and a
scan that mixes a drawing in mm with one without a unit says so. Distances are checked against
shapely (2D) and by construction (3D boxes a known gap apart)."""
from __future__ import annotations

import json

import pytest
import trimesh
from click.testing import CliRunner
from shapely.geometry import box

from gjkcli.cli import main
from gjkcli.mesh.flat import read_flat_objects


def gjk(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def headerless_dxf(path, squares):
    """LINE entities in an ENTITIES section and nothing else, as OpenSCAD exports 2D shapes."""
    out = []
    for x0, y0, s in squares:
        pts = [(x0, y0), (x0 + s, y0), (x0 + s, y0 + s), (x0, y0 + s)]
        for (ax, ay), (bx, by) in zip(pts, pts[1:] + pts[:1]):
            out += ["0", "LINE", "8", "0", "10", f"{ax}", "20", f"{ay}", "30", "0",
                    "11", f"{bx}", "21", f"{by}", "31", "0"]
    text = ["0", "SECTION", "2", "ENTITIES", *out, "0", "ENDSEC", "0", "EOF"]
    path.write_text("\n".join(text) + "\n")
    return path


# two 200-unit squares 3 units apart: 464 wide in all, as the drawing
SQUARES = [(0.0, 0.0, 200.0), (203.0, 0.0, 200.0)]


def test_headerless_dxf_states_no_unit(tmp_path):
    path = headerless_dxf(tmp_path / "openscad.dxf", SQUARES)
    parts, _ = read_flat_objects(path)
    assert {p.units for p in parts} == {None}  # not ezdxf's default, metres
    gap = box(0, 0, 200, 200).distance(box(203, 0, 403, 200))
    assert gap == pytest.approx(3.0)
    # a length with a unit: an error naming the fix
    r = gjk("scan", path, "--clearance", "5mm")
    assert r.exit_code == 2 and "--units" in r.stderr and "Traceback" not in r.output
    assert len(r.stderr.strip().splitlines()) == 1
    # a bare number is in the drawing's units: the gap of 3 fails 5
    r = gjk("scan", path, "--clearance", "5", "--format", "json")
    assert r.exit_code == 1 and [p["status"] for p in json.loads(r.stdout)["pairs"]] == ["clearance"]
    # --units declares the drawing's unit: a gap of 3 mm or 3 um fails 5 mm, 3 m or 3 in passes
    for unit, fails in (("mm", True), ("um", True), ("m", False), ("in", False)):
        r = gjk("scan", path, "--units", unit, "--clearance", "5mm", "--format", "json")
        doc = json.loads(r.stdout)
        assert r.exit_code == (1 if fails else 0), (unit, r.output)
        assert any("taken as " + unit in n for n in doc.get("notes", [])), doc.get("notes")


def test_units_on_stl(tmp_path):
    """Two unit cubes 1.0 apart in an STL's numbers: with --units mm a 5 mm clearance fails, with
    --units in (1.0 = 25.4 mm) it passes; without --units the length with a unit is an error."""
    a = trimesh.creation.box(extents=(1, 1, 1))
    b = trimesh.creation.box(extents=(1, 1, 1))
    b.apply_translation((2.0, 0, 0))
    pa, pb = tmp_path / "a.stl", tmp_path / "b.stl"
    a.export(pa)
    b.export(pb)
    r = gjk("check", pa, pb, "--clearance", "5mm")
    assert r.exit_code == 2 and "--units" in r.stderr
    r = gjk("check", pa, pb, "--units", "mm", "--clearance", "5mm", "--format", "json")
    assert r.exit_code == 1
    r = gjk("check", pa, pb, "--units", "in", "--clearance", "5mm", "--format", "json")
    assert r.exit_code == 0
    r = gjk("check", pa, pb, "--units", "furlong")
    assert r.exit_code == 2 and "furlong" in r.output


def test_mixing_a_drawing_in_mm_with_one_without_a_unit_says_so(tmp_path):
    svg = tmp_path / "mm.svg"
    svg.write_text('<svg xmlns="http://www.w3.org/2000/svg" width="100mm" height="100mm" '
                   'viewBox="0 0 100 100"><rect id="r" x="0" y="0" width="10" height="10"/></svg>')
    dxf = headerless_dxf(tmp_path / "plain.dxf", [(50.0, 0.0, 10.0)])
    r = gjk("scan", svg, dxf, "--format", "json")
    notes = json.loads(r.stdout).get("notes", [])
    assert any("plain.dxf" in n and "no unit" in n and "--units" in n for n in notes), notes
    # declared: no warning, a note that it was taken as declared
    r = gjk("scan", svg, dxf, "--units", "mm", "--format", "json")
    notes = json.loads(r.stdout).get("notes", [])
    assert not any("warning" in n and "no unit" in n for n in notes), notes
    assert any("plain.dxf" in n and "taken as mm" in n for n in notes), notes


@pytest.mark.parametrize("name, text", [("bad.stl", "solid nothing\nnot a facet\n"), ("bad.dxf", "not a dxf\n")])
def test_a_length_with_a_unit_when_nothing_loaded_is_no_second_error(tmp_path, name, text):
    """Every input refused: its error alone, with the run's summary, as without the length. The
    length is in its own unit then (no object states another); it was a second error line
    saying the inputs state no unit (an IFC model that states mm, refused for another reason,
    was said to state none)."""
    bad = tmp_path / name
    bad.write_text(text)
    plain = gjk("scan", bad)
    got = gjk("scan", bad, "--tolerance", "2mm", "--format", "json")
    assert got.exit_code == plain.exit_code == 2
    assert [line for line in got.stderr.splitlines() if line.startswith("gjk: error:")] == \
        [line for line in plain.stderr.splitlines() if line.startswith("gjk: error:")]
    assert "has a unit" not in got.stderr and len(got.stderr.splitlines()) == 1
    doc = json.loads(got.stdout)
    assert doc["summary"]["objects"] == 0 and doc["summary"]["errors"] == 1
