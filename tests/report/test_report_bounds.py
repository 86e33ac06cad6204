"""Every renderer that prints distances says the run's unit and, for tessellated (STEP) parts, the
bounds of the true distance: hand-built findings, no engine, no files."""
from __future__ import annotations

import io
import json

import numpy as np
from rich.console import Console

from gjkcli.engine.results import Result, Status
from gjkcli.pipeline.findings import Finding, Findings, ObjectRecord
from gjkcli.report.ci import github_annotations, junit_xml
from gjkcli.report.jsonout import document, dumps
from gjkcli.report.pictures import caption, units_of
from gjkcli.report.sarif import sarif_log
from gjkcli.report.scan import render_scan
from gjkcli.report.table import render_check


def found(status=Status.UNDECIDED, lower=-0.002, upper=0.012, mode="exact") -> Findings:
    r = Result(status=status, distance=0.005, distance_lower=0.0, depth=None,
               normal=np.array([1.0, 0, 0]), point_a=np.zeros(3), point_b=np.array([0.005, 0, 0]),
               certificate=None, iterations=0, epa_iterations=0, exit="converged", epa_exit=None,
               tolerance=1e-6)
    pair = Finding(a="rig/shaft", b="rig/bush:2", result=r, mode=mode, violation=True,
                   clearance=0.01, file_a="rig.step", file_b="rig.step", distance_lower=lower,
                   distance_upper=upper, tessellation=0.007)
    objects = tuple(ObjectRecord(name=n, file="rig.step", vertices=8, faces=12, hull_vertices=8,
                                 convex=True, watertight=True, units="mm",
                                 bounds=((0.0, 0.0, 0.0), (1.0, 1.0, 1.0))) for n in (pair.a, pair.b))
    return Findings(command="check", objects=objects, pairs=(pair,), counts={status.value: 1},
                    checked=1, fail_on=("collision", "clearance"), units="mm", clearance=0.01,
                    _index={o.name: k for k, o in enumerate(objects)})


def plain(renderable) -> str:
    buf = io.StringIO()
    Console(file=buf, width=200, color_system=None).print(renderable)
    return " ".join(buf.getvalue().split())


def test_json_bounds_and_units():
    doc = json.loads(dumps(document(found())))
    (pair,) = doc["pairs"]
    assert pair["units"] == "mm" and doc["run"]["units"] == "mm"
    assert pair["distance_lower"] == 0.0  # -0.002 is a possible overlap: no gap is certain
    assert pair["distance_upper"] == 0.012 and pair["tessellation_error"] == 0.007
    exact = json.loads(dumps(document(found(Status.CLEARANCE, 0.005, 0.005, "brep"))))["pairs"][0]
    assert exact["distance_lower"] == 0.005 and "distance_upper" not in exact
    plain_mesh = found(Status.CLEAR, None, None)
    plain_mesh = Findings(**{**plain_mesh.__dict__, "pairs": (
        Finding(**{**plain_mesh.pairs[0].__dict__, "tessellation": None}),)})
    assert "distance_upper" not in json.loads(dumps(document(plain_mesh)))["pairs"][0]


def test_table_and_scan_say_the_bounds_and_unit():
    out = plain(render_check(found()))
    assert "the true distance lies in [-0.002, 0.012] mm" in out
    assert "tessellation error 0.007 mm" in out
    out = plain(render_scan(found(), limit=None))
    assert "depth / gap (mm)" in out and "-0.002 .. 0.012" in out


def test_ci_formats_and_sarif_say_the_bounds_and_unit():
    f = found()
    assert "[-0.002, 0.012] (tessellation error 0.007) (mm)" in github_annotations(f)
    assert "(mm)" in junit_xml(f)
    sarif = sarif_log(f)
    result = sarif["runs"][0]["results"][0]
    assert "[-0.002, 0.012]" in result["message"]["text"]
    props = result["properties"]
    assert props["units"] == "mm" and props["distanceUpper"] == 0.012
    assert props["tessellationError"] == 0.007


def test_pictures_caption_says_the_bounds():
    f = found()
    assert units_of(f, f.pairs[0]) == " mm"
    assert "[-0.002, 0.012] mm" in caption(f.pairs[0], " mm")
