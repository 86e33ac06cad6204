"""`gjk check` and `gjk scan` on STEP files: exit codes, units in every report, lengths with a
unit on the command line, the bounds of tessellated parts, bad files."""
import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from stepfiles import cylinders_gap, exact_distance, write_step

from gjkcli.cli import main


def gjk(*args, code=None, width=200):
    result = CliRunner(catch_exceptions=False).invoke(main, [str(a) for a in args],
                                                      env={"COLUMNS": str(width)})
    if code is not None:
        assert result.exit_code == code, (result.exit_code, result.stdout, result.stderr)
    return result


@pytest.fixture(scope="module")
def issue_pair(tmp_path_factory):
    """Issue 16's cylinders: radius 10 mm, true gap 1e-4 mm, seams 0.1 rad apart."""
    folder = tmp_path_factory.mktemp("cyl")
    a, b = cylinders_gap(1e-4, 0.1)
    return (write_step(folder / "a.step", [("shaft", a)]), write_step(folder / "b.STP", [("bush", b)]),
            exact_distance(a, b))


def test_the_issue_fails_and_passes_where_it_should(issue_pair):
    a, b, truth = issue_pair
    gjk("check", a, b, "--clearance", "5e-3", code=1)
    gjk("check", a, b, "--clearance", "5um", code=1)
    gjk("check", a, b, "--clearance", "0.004in", code=1)
    gjk("check", a, b, "--clearance", "0.05um", code=0)
    gjk("check", a, b, code=0)


def test_json_says_units_and_the_exact_distance(issue_pair):
    a, b, truth = issue_pair
    doc = json.loads(gjk("check", a, b, "--clearance", "5um", "--format", "json", code=1).stdout)
    (pair,) = doc["pairs"]
    assert pair["status"] == "clearance" and pair["mode"] == "brep" and pair["units"] == "mm"
    assert pair["distance"] == pytest.approx(truth, abs=1e-9)
    assert pair["distance_lower"] == pytest.approx(truth, abs=1e-9)
    assert pair["clearance"] == pytest.approx(5e-3, rel=1e-12)
    assert pair["tessellation_error"] > 5e-3
    assert "distance_upper" not in pair  # exact: the bounds do not differ
    assert doc["run"]["units"] == "mm" and doc["summary"]["brep"] == 1
    assert [o["units"] for o in doc["objects"]] == ["mm", "mm"]


def test_table_and_annotations_say_units(issue_pair):
    a, b, _ = issue_pair
    out = " ".join(gjk("check", a, b, "--clearance", "5e-3", code=1).stdout.split())
    assert "0.0001 mm apart, closer than the required 0.005 mm" in out
    assert "exact on the solids" in out
    out = gjk("scan", a, b, "--clearance", "5e-3", "--together", "--format", "table", code=1).stdout
    assert "depth / gap (mm)" in " ".join(out.split())
    out = gjk("scan", a, b, "--clearance", "5e-3", "--together", code=1).stdout  # a log's line per finding
    assert "clearance: 0.0001 apart, 0.005 required (mm)" in out
    gh = gjk("check", a, b, "--clearance", "5e-3", "--format", "github", code=1).stdout
    assert "(mm)" in gh


def test_a_unit_on_a_unitless_scene_is_one_line(tmp_path):
    import trimesh

    for name, x in (("a.stl", 0.0), ("b.stl", 2.0)):
        trimesh.creation.box().apply_translation([x, 0, 0]).export(tmp_path / name)
    r = gjk("check", tmp_path / "a.stl", tmp_path / "b.stl", "--clearance", "1mm", code=2)
    assert r.stderr.count("\n") == 1 and "state none" in r.stderr
    r = gjk("check", tmp_path / "a.stl", tmp_path / "b.stl", "--clearance", "1 parsec", code=2)
    assert "unknown unit" in r.stderr


def test_bad_step_is_one_line_and_the_others_are_checked(tmp_path, issue_pair):
    a, b, _ = issue_pair
    bad = tmp_path / "broken.step"
    bad.write_text("ISO-10303-21;\nHEADER;\n#1 = CARTESIAN_POINT(")
    r = gjk("scan", a, b, bad, "--format", "json", code=2)
    doc = json.loads(r.stdout)
    assert [e["file"] for e in doc["errors"]] == [str(bad)]
    assert len(doc["objects"]) >= 0 and doc["summary"]["errors"] == 1
    assert "Traceback" not in r.stderr


def test_installed_command_reads_step(tmp_path, issue_pair):
    """The installed `gjk` (not trimesh's cascadio route): names from the products."""
    a, b, _ = issue_pair
    out = subprocess.run([sys.executable, "-m", "gjkcli", "scan", str(a), str(b), "--format",
                          "json", "--clearance", "5um", "--together"], capture_output=True, text=True,
                         cwd=tmp_path, timeout=120)
    assert out.returncode == 1, out.stderr
    doc = json.loads(out.stdout)
    assert sorted(o["name"] for o in doc["objects"]) == ["a.step:shaft", "b.STP:bush"]


def test_a_bad_step_file_leaves_the_json_report_whole(tmp_path):
    """OpenCASCADE prints a bad file's syntax errors on the process's standard output (C++, not
    Python's sys.stdout): a report on stdout must stay one JSON document, the reason one line
    on stderr."""
    bad = tmp_path / "bad.step"
    bad.write_text("ISO-10303-21;\nHEADER;\nFILE_DESCRIPTION((''),'2;1');\nENDSEC;\nDATA;\n"
                   "#1=GARBAGE(1,2;\nENDSEC;\nEND-ISO-10303-21;\n")
    a, b = cylinders_gap(1.0, 0.0)
    good = write_step(tmp_path / "good.step", [("shaft", a), ("bush", b)])
    proc = subprocess.run([sys.executable, "-m", "gjkcli", "scan", str(bad), str(good), "--format", "json"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert proc.returncode == 2, proc.stderr
    report = json.loads(proc.stdout)  # nothing but the report
    assert {o["name"] for o in report["objects"]} == {"good.step:shaft", "good.step:bush"}
    assert proc.stderr.strip().splitlines() == [
        f"gjk: error: {bad}: OpenCASCADE cannot read this STEP file (a syntax error or an unsupported "
        "schema); re-export it as AP203, AP214 or AP242"]
