"""docs/schema/report.schema.json describes what `--format json` writes.

Real documents of `gjk check` and `gjk scan` (3D and 2D, STEP, IFC, a manifest, a baseline, the
trace) are validated against it with jsonschema (Draft 2020-12); every key they hold is one the
schema names, so a key added to the report without the schema fails here; and documents broken
on purpose fail validation, so the schema is not a blanket `object`.
"""
from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from gjkcli.cli import main

jsonschema = pytest.importorskip("jsonschema", reason="jsonschema (a test extra) is not installed")

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "docs" / "schema" / "report.schema.json").read_text(encoding="utf-8"))
THIRD = ROOT / "tests" / "data" / "third_party"

RUNS = {
    "check clear": ["check", "samples/clear_a.stl", "samples/clear_b.stl"],
    "check touching": ["check", "samples/touch_a.stl", "samples/touch_b.stl"],
    "check collision, trace": ["check", "samples/collide_a.stl", "samples/collide_b.stl", "--trace", "--timings"],
    "check pocket, hull mode": ["check", "samples/pocket_box.stl", "samples/pocket_cube.stl", "--mode", "hull"],
    "check a missing file": ["check", "samples/missing.stl", "samples/peg.stl"],
    "scan manifest": ["scan", "--manifest", "samples/cell.toml", "--all-pairs"],
    "scan samples": ["scan", "samples/ring.stl", "samples/peg.stl", "samples/collide_a.stl", "--show-allowed"],
    "scan 2D nest": ["scan", "samples/flat/nest.dxf", "--clearance", "0.5", "--sheet-layer", "SHEET"],
    "check 2D trace": ["check", "samples/dyn4j/shape1.svg", "samples/dyn4j/shape2.svg", "--trace"],
    "scan STEP": ["scan", "tests/data/third_party/base_interface_AP203.STEP", "--clearance", "0.1mm"],
    "scan IFC": ["scan", "tests/data/third_party/project0-openings.ifc", "--show-allowed"],
    "check open sheets crossing": ["check", "sheet_a.stl", "sheet_b.stl"],
}


def _sheet(path: Path, *quads) -> None:
    """Open squares (two triangles each, no volume) as ASCII STL: only the surface counts, so its
    crossing another is the collision and crossing triangles its certificate."""
    triangles = [t for a, b, c, d in quads for t in ((a, b, c), (a, c, d))]
    facets = "".join("facet normal 0 0 0\nouter loop\n" + "".join(f"vertex {x} {y} {z}\n" for x, y, z in t)
                     + "endloop\nendfacet\n" for t in triangles)
    path.write_text(f"solid sheet\n{facets}endsolid sheet\n")


@pytest.fixture(scope="module")
def documents(tmp_path_factory):
    work = tmp_path_factory.mktemp("reports")
    shutil.copytree(ROOT / "samples", work / "samples")
    shutil.copytree(THIRD, work / "tests" / "data" / "third_party")
    # two open L-shaped sheets (not convex: the triangles answer), one through the other
    _sheet(work / "sheet_a.stl", [(-1, -1, 0), (1, -1, 0), (1, 1, 0), (-1, 1, 0)],
           [(1, -1, 0), (1, -1, 2), (1, 1, 2), (1, 1, 0)])
    _sheet(work / "sheet_b.stl", [(-1, 0, -1), (0.5, 0, -1), (0.5, 0, 1), (-1, 0, 1)],
           [(-1, 0, -1), (-1, 2, -1), (0.5, 2, -1), (0.5, 0, -1)])
    out = {}
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(work)
        for name, argv in RUNS.items():
            result = CliRunner(catch_exceptions=False).invoke(main, [*argv, "--format", "json"])
            assert result.exit_code in (0, 1, 2), (name, result.stderr)
            out[name] = json.loads(result.stdout)
        # a baseline run: its pairs carry "baseline", gone findings are listed
        base = ["scan", "--manifest", "samples/cell.toml"]
        CliRunner().invoke(main, [*base, "--write-baseline", "baseline.json"])
        result = CliRunner().invoke(main, [*base, "--baseline", "baseline.json", "--format", "json"])
        out["scan baseline"] = json.loads(result.stdout)
    return out


def validator():
    cls = jsonschema.Draft202012Validator
    cls.check_schema(SCHEMA)
    return cls(SCHEMA)


@pytest.mark.parametrize("name", [*RUNS, "scan baseline"])
def test_a_real_report_is_valid(documents, name):
    errors = sorted(validator().iter_errors(documents[name]), key=str)
    assert not errors, [f"{list(e.absolute_path)}: {e.message}" for e in errors[:5]]


def test_the_runs_cover_what_the_schema_describes(documents):
    docs = documents.values()
    pairs = [p for d in docs for p in d["pairs"]]
    assert {p["status"] for p in pairs} >= {"clear", "touching", "collision", "clearance"}
    assert {p["mode"] for p in pairs} >= {"hull", "exact"}
    assert {p["certificate"]["kind"] for p in pairs if p["certificate"]} >= {"plane", "point", "triangles"}
    assert {d["dimension"] for d in docs} == {2, 3}
    assert any(d["errors"] for d in docs)
    assert any(p.get("trace") for p in pairs)
    assert any(p["baseline"] == "known" for p in pairs)


def test_every_key_written_is_named_by_the_schema(documents):
    defs = SCHEMA["$defs"]
    named = {"document": set(SCHEMA["properties"]), "object": set(defs["object"]["properties"]),
             "pair": set(defs["pair"]["properties"]), "summary": set(SCHEMA["properties"]["summary"]["properties"]),
             "run": set(defs["run"]["properties"]), "certificate": set(defs["certificate"]["properties"])}
    for name, doc in documents.items():
        assert set(doc) <= named["document"], (name, set(doc) - named["document"])
        assert set(doc["summary"]) <= named["summary"], (name, set(doc["summary"]) - named["summary"])
        assert set(doc["run"]) <= named["run"], (name, set(doc["run"]) - named["run"])
        for o in doc["objects"]:
            assert set(o) <= named["object"], (name, set(o) - named["object"])
        for p in doc["pairs"]:
            assert set(p) <= named["pair"], (name, set(p) - named["pair"])
            if p["certificate"]:
                assert set(p["certificate"]) <= named["certificate"], (name, p["certificate"])


@pytest.mark.parametrize("break_it", [
    lambda d: d.pop("summary"),
    lambda d: d["pairs"][0].update(status="overlapping"),
    lambda d: d["pairs"][0].update(distance=-1.0),
    lambda d: d["pairs"][0].pop("certificate"),
    lambda d: d["pairs"][0]["certificate"].pop("point"),
    lambda d: d["objects"][0].update(dimension=4),
    lambda d: d["summary"].update(exit_code=3),
    lambda d: d.update(command="lint"),
], ids=["no summary", "unknown status", "negative distance", "no certificate", "point certificate without its point",
        "dimension 4", "exit code 3", "unknown command"])
def test_a_broken_report_is_refused(documents, break_it):
    doc = copy.deepcopy(documents["check collision, trace"])
    break_it(doc)
    assert not validator().is_valid(doc)
