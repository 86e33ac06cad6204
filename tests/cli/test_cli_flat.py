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
    # without --sheet-layer the sheet's outline is one part around the others, each its hole
    r = gjk("scan", NEST, "--format", "json")
    assert json.loads(r.stdout)["summary"]["objects"] < 37


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
    r = gjk("scan", tmp_path / "bad.svg", a, b, "--format", "json")
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
