"""`gjk check` and `gjk scan` on 2D drawings, through click's CliRunner on samples/flat/nest.dxf
(scripts/make_nest.py says what it holds) and drawings written here."""
from __future__ import annotations

import json
from pathlib import Path

import ezdxf
import pytest
from click.testing import CliRunner

from gjkcli.cli import main

NEST = Path(__file__).resolve().parents[2] / "samples" / "flat" / "nest.dxf"


def gjk(*args, cwd=None):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def square(path, x0=0.0, layer="0"):
    doc = ezdxf.new()
    doc.modelspace().add_lwpolyline([(x0, 0), (x0 + 10, 0), (x0 + 10, 10), (x0, 10)], close=True,
                                    dxfattribs={"layer": layer})
    doc.saveas(path)
    return path


def test_the_sample_nest_with_kerf_and_sheet():
    r = gjk("scan", NEST, "--clearance", "0.5", "--sheet-layer", "SHEET", "--format", "json")
    assert r.exit_code == 1
    doc = json.loads(r.stdout)
    assert doc["dimension"] == 2 and doc["summary"]["objects"] == 37
    statuses = [p["status"] for p in doc["pairs"]]
    assert {"collision", "touching", "clearance"} <= set(statuses)
    sheet = [p for p in doc["pairs"] if p["b"] == "sheet:SHEET"]
    assert len(sheet) == 2 and all(p["status"] == "collision" and "leaves the sheet" in p["note"] for p in sheet)
    assert all(len(p["point_a"]) == 2 and len(p["normal"]) == 2 for p in doc["pairs"])
    # without the kerf, only overlaps fail (touching passes unless asked for)
    r = gjk("scan", NEST, "--sheet-layer", "SHEET", "--format", "json")
    doc = json.loads(r.stdout)
    failing = [p["status"] for p in doc["pairs"] if p["fails"]]
    assert r.exit_code == 1 and set(failing) == {"collision"} and "touching" in statuses
    assert doc["summary"]["objects"] == 37
    # without --sheet-layer the sheet's outline is one more part (the others are not its holes:
    # nesting never crosses layers), and a note says which layer to pass
    r = gjk("scan", NEST, "--format", "json")
    doc = json.loads(r.stdout)
    assert doc["summary"]["objects"] == 37
    assert any(n.endswith("layer SHEET looks like a sheet (its outline holds 30 of the 32 outlines on "
                          "other layers, and collides with each part): pass --sheet-layer SHEET")
               for n in doc["notes"])


def test_every_report_format_reads_a_2d_scan(tmp_path):
    for fmt in ("table", "junit", "github", "sarif"):
        r = gjk("scan", NEST, "--clearance", "0.5", "--sheet-layer", "SHEET", "--format", fmt)
        assert r.exit_code == 1, (fmt, r.output)
        assert "0:53" in r.stdout  # the overlapping pair is named in every format


def test_mixing_2d_and_3d_is_one_line_and_exit_2(tmp_path):
    stl = Path(__file__).resolve().parents[2] / "samples" / "clear_a.stl"
    r = gjk("check", NEST, stl)
    assert r.exit_code == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and "2D drawing" in r.stderr and "3D file" in r.stderr
    r = gjk("scan", stl, NEST)
    assert r.exit_code == 2 and r.stderr.count("\n") == 1 and "nest.dxf" in r.stderr


def test_sheet_layer_on_3d_is_an_input_error(tmp_path):
    stl = Path(__file__).resolve().parents[2] / "samples" / "clear_a.stl"
    r = gjk("scan", stl, "--sheet-layer", "SHEET")
    assert r.exit_code == 2 and "--sheet-layer" in r.stderr and r.stderr.count("\n") == 1


def test_a_bad_drawing_is_one_line_and_the_others_are_checked(tmp_path):
    (tmp_path / "bad.svg").write_text("<svg><polygon points=")
    a = square(tmp_path / "a.dxf")
    b = square(tmp_path / "b.dxf", x0=5)
    r = gjk("scan", tmp_path / "bad.svg", a, b, "--format", "json", "--together")
    assert r.exit_code == 2
    doc = json.loads(r.stdout)
    assert [e["file"] for e in doc["errors"]] == [str(tmp_path / "bad.svg")]
    assert [p["status"] for p in doc["pairs"]] == ["collision"]
    r = gjk("check", tmp_path / "bad.svg", a)
    assert r.exit_code == 2 and "bad.svg" in r.stderr and "Traceback" not in r.output


def test_check_two_drawings(tmp_path):
    a = square(tmp_path / "a.dxf")
    b = square(tmp_path / "b.dxf", x0=10.25)
    r = gjk("check", a, b, "--clearance", "0.5")
    assert r.exit_code == 1 and "CLEARANCE" in r.stdout.upper()
    r = gjk("check", a, b, "--format", "json")
    (pair,) = json.loads(r.stdout)["pairs"]
    assert r.exit_code == 0 and pair["status"] == "clear" and pair["distance"] == pytest.approx(0.25)


def test_baseline_of_a_nest(tmp_path):
    base = tmp_path / "nest-baseline.json"
    r = gjk("scan", NEST, "--clearance", "0.5", "--sheet-layer", "SHEET", "--write-baseline", base)
    assert r.exit_code == 0 and base.is_file()
    r = gjk("scan", NEST, "--clearance", "0.5", "--sheet-layer", "SHEET", "--baseline", base,
            "--format", "json")
    doc = json.loads(r.stdout)
    assert r.exit_code == 0 and doc["summary"]["known"] == 9 and doc["summary"]["failures"] == 0
    # without the kerf, the clearance and touching pairs are no longer violations: gone
    r = gjk("scan", NEST, "--sheet-layer", "SHEET", "--baseline", base, "--format", "json")
    doc = json.loads(r.stdout)
    assert r.exit_code == 0 and doc["summary"]["gone"] == 6  # the 4 clearance and 2 touching pairs


def _engraved_sheet(path):
    """A plate on "Cut" with an engraved line on "Gravír" inside it, on a sheet drawn on the
    layer "Sheet" (mixed case, as exported), in mm."""
    doc = ezdxf.new(units=4)
    msp = doc.modelspace()
    msp.add_lwpolyline([(0, 0), (100, 0), (100, 50), (0, 50)], close=True, dxfattribs={"layer": "Sheet"})
    msp.add_lwpolyline([(5, 5), (45, 5), (45, 45), (5, 45)], close=True, dxfattribs={"layer": "Cut"})
    msp.add_lwpolyline([(10, 10), (20, 10), (20, 20), (10, 20)], close=True, dxfattribs={"layer": "Gravír"})
    msp.add_line((50, 5), (95, 5), dxfattribs={"layer": "Gravír"})
    doc.saveas(path)
    return path


def test_sheet_layer_named_in_another_case_and_layer_globs(tmp_path):
    """`--sheet-layer SHEET` finds the layer "Sheet"; the plate lies exactly 5 from the sheet's
    edge, so --clearance 5mm passes once --ignore-layers 'grav*' drops the engraving (a part on
    its layer, and an open piece); the JSON gives each part its layer and bound."""
    path = _engraved_sheet(tmp_path / "sheet.dxf")
    r = gjk("scan", path, "--sheet-layer", "SHEET", "--clearance", "5mm", "--format", "json",
            "--all-pairs")
    # the engraved square is a part of its own (never a hole of the plate on another layer): it
    # collides with the plate, and a note says how to leave the engraving out
    assert r.exit_code == 1, r.stderr
    doc = json.loads(r.stdout)
    assert [(o["name"].split(":")[0], o["layer"], o["flattening"]) for o in doc["objects"]] == [
        ("Cut", "Cut", 0.0), ("Gravír", "Gravír", 0.0), ("sheet", "Sheet", 0.0)]
    assert [(p["a"].split(":")[0], p["b"].split(":")[0]) for p in doc["pairs"] if p["fails"]] == \
        [("Cut", "Gravír")]
    assert any(n.endswith("every outline on layer Gravír lies inside a part on another layer, and "
                          "collides with it (engraving or marking?): --ignore-layers Gravír leaves "
                          "them out") for n in doc["notes"])
    assert any("1 open piece (on layer Gravír (1); LINE #" in n for n in doc["notes"])
    plate = doc["objects"][0]
    r = gjk("scan", path, "--sheet-layer", "sheet", "--clearance", "5mm", "--format", "json",
            "--ignore-layers", "grav*")
    doc = json.loads(r.stdout)
    assert r.exit_code == 0 and not any("open piece" in n for n in doc["notes"])
    assert any(n.endswith("layers left out (--ignore-layers grav*): Gravír") for n in doc["notes"])
    assert doc["objects"][0]["vertices"] == plate["vertices"]  # the plate has no hole either way
    r = gjk("scan", path, "--sheet-layer", "SHEET", "--layers", "nope", "-q")
    assert r.exit_code == 2 and r.stderr.count("\n") == 1 and "the file's layers" in r.stderr


def test_layer_options_on_3d_files_are_input_errors(tmp_path):
    import trimesh

    stl = tmp_path / "a.stl"
    trimesh.creation.box().export(stl)
    for option in (("--layers", "CUT"), ("--ignore-layers", "MARK"), ("--join-tolerance", "0.1")):
        r = gjk("scan", stl, *option)
        assert r.exit_code == 2 and option[0] in r.stderr and r.stderr.count("\n") == 1


def test_ezdxf_chatter_stays_off_stderr():
    data = Path(__file__).resolve().parents[1] / "data" / "third_party" / "dimension_in_nested_blocks.dxf"
    r = gjk("scan", data, "--format", "json")
    assert r.exit_code == 0 and r.stderr == ""
    assert any("copy process ignored DIMASSOC" in n for n in json.loads(r.stdout)["notes"])


def test_check_reads_only_the_layers_asked_for(tmp_path):
    """`gjk check a.dxf b.dxf`: b's marking square on layer "MARK" overlaps a's plate; with
    --ignore-layers mark the pair is clear by shapely's gap between the plates."""
    from shapely.geometry import box

    a = square(tmp_path / "a.dxf", 0.0, layer="Cut")
    doc = ezdxf.new()
    msp = doc.modelspace()
    msp.add_lwpolyline([(12, 0), (22, 0), (22, 10), (12, 10)], close=True, dxfattribs={"layer": "Cut"})
    msp.add_lwpolyline([(8, 2), (11, 2), (11, 5), (8, 5)], close=True, dxfattribs={"layer": "Mark"})
    doc.saveas(tmp_path / "b.dxf")
    r = gjk("check", a, tmp_path / "b.dxf", "--format", "json")
    assert r.exit_code == 1 and json.loads(r.stdout)["pairs"][0]["status"] == "collision"
    r = gjk("check", a, tmp_path / "b.dxf", "--format", "json", "--ignore-layers", "mark")
    (pair,) = json.loads(r.stdout)["pairs"]
    assert r.exit_code == 0 and pair["status"] == "clear"
    assert pair["distance"] == pytest.approx(box(0, 0, 10, 10).distance(box(12, 0, 22, 10)))
