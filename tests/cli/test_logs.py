"""Logs you can grep (issue 44): through a pipe a finding per line with whole names, the table
when asked for laid out to COLUMNS in plain characters; colour forced by the environment; -v and
-vv; the summary's clock says what it timed; JUnit lists every pair checked; --all-pairs lists
the pairs the broad phase parts; --write-baseline says what it recorded."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from gjkcli.cli import main

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples"
A, B = SAMPLES / "collide_a.stl", SAMPLES / "collide_b.stl"
BOX = re.compile("[\u2500-\u257f]")  # box-drawing characters
ANSI = "\x1b["

# names as IFC, STEP assemblies and URDFs give them: an IFC GlobalId (with its '$'), an
# assembly path with ':' and '/', a long descriptive name
NAMES = ("3Ttjr$59XEWfWN1WUHjelZ", "nut-bolt-assembly:1/bolt", "a-rather-long-part-name-for-a-housing-cover-left")


def gjk(*args, env=None, code=None):
    done = CliRunner().invoke(main, [str(a) for a in args], env=env, catch_exceptions=False)
    if code is not None:
        assert done.exit_code == code, done.output
    return done


@pytest.fixture(scope="module")
def named(tmp_path_factory) -> Path:
    """A scene of three overlapping boxes named as NAMES."""
    trimesh = pytest.importorskip("trimesh")
    scene = trimesh.Scene()
    for k, name in enumerate(NAMES):
        scene.add_geometry(trimesh.creation.box([1, 1, 1]), node_name=name, geom_name=f"g{k}",
                           transform=trimesh.transformations.translation_matrix([0.3 * k, 0, 0]))
    path = tmp_path_factory.mktemp("named") / "cell.glb"
    scene.export(path)
    return path


def test_a_piped_scan_prints_a_finding_per_line_with_whole_names(named):
    out = gjk("scan", named, env={"COLUMNS": "60"}, code=1).stdout
    lines = out.splitlines()
    assert not BOX.search(out) and ANSI not in out
    findings = [line for line in lines if ": collision: overlap " in line]
    assert len(findings) == 3  # each pair once, on one line
    for x, y in ((0, 1), (0, 2), (1, 2)):
        assert sum(NAMES[x] in line and NAMES[y] in line for line in findings) == 1
    assert lines[-1].startswith("3 objects, 3 pairs checked: 3 collision, 0 undecided; 3 failing; exit 1")


def test_the_table_asked_for_through_a_pipe_follows_columns_and_keeps_names_whole(named, tmp_path):
    out = gjk("scan", named, "--format", "table", env={"COLUMNS": "60"}, code=1).stdout
    assert not BOX.search(out)
    rows = [line for line in out.splitlines() if line.startswith("collision ")]
    assert len(rows) == 3 and all(sum(name in row for name in NAMES) == 2 for row in rows)
    assert "status" in out and "object A" in out and "---" in out
    # names that fit: the table fits the width, a long note wrapped between words, in its
    # column when there is room for it, else under its row
    reason = "a press fit the drawing asks for, between the housing and its bearing seat"
    args = ("scan", "--together", A, B, SAMPLES / "clear_a.stl", "--format", "table", "--show-allowed", "--allow",
            f"collide_a.stl,clear_a.stl:{reason}")
    for columns, beside in ((80, False), (95, True), (200, True)):
        out = gjk(*args, env={"COLUMNS": str(columns)}, code=1).stdout
        table = out.split("Findings\n")[1].split("\n3 objects")[0].splitlines()
        assert max(len(line) for line in table) <= columns, table
        assert not BOX.search(out)
        (row,) = [k for k, line in enumerate(table) if "clear_a.stl" in line and "collide_a.stl" in line]
        note = [line.strip() for line in table[row + 1:] if line.startswith(" ")]
        words = " ".join(([table[row].split("  ")[-1].strip()] if beside else []) + note)
        assert words == f"allowed: {reason}", table
        assert (columns == 200) == (not note)  # on one line where it fits


def test_a_piped_check_follows_columns_in_plain_characters():
    out = gjk("check", A, B, env={"COLUMNS": "70"}, code=1).stdout
    assert not BOX.search(out)
    assert max(len(line) for line in out.splitlines()[:-1]) <= 70  # the summary is never wrapped
    assert "| verdict      COLLISION" in out and out.splitlines()[-1].startswith("1 pair: 1 collision")


@pytest.mark.parametrize("env, coloured", [
    ({"FORCE_COLOR": "1"}, True),
    ({"CLICOLOR_FORCE": "1"}, True),
    ({"PY_COLORS": "1"}, True),
    ({"CLICOLOR_FORCE": "0"}, False),
    ({"FORCE_COLOR": ""}, False),
    ({"FORCE_COLOR": "1", "NO_COLOR": "1"}, False),
    ({"FORCE_COLOR": "1", "PY_COLORS": "0"}, False),
    ({}, False),
])
def test_the_environment_forces_colour_through_a_pipe(env, coloured):
    clean = {k: None for k in ("FORCE_COLOR", "CLICOLOR_FORCE", "PY_COLORS", "NO_COLOR")}
    for command in (("scan", "--together", A, B), ("check", A, B)):
        out = gjk(*command, env={**clean, **env}, code=1).stdout
        assert (ANSI in out) is coloured, (command, env)
    # --color never wins over the environment, as --color always does
    assert ANSI not in gjk("scan", "--together", A, B, "--color", "never", env={**clean, "FORCE_COLOR": "1"}).stdout
    assert ANSI in gjk("scan", "--together", A, B, "--color", "always", env={**clean, "NO_COLOR": "1"}).stdout


def test_force_color_colours_a_real_pipe(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "PY_COLORS")}
    done = subprocess.run([sys.executable, "-m", "gjkcli", "scan", "--together", str(A), str(B)], cwd=tmp_path,
                          env={**env, "FORCE_COLOR": "1"},
                          capture_output=True, text=True, check=False)
    assert done.returncode == 1, done.stderr
    assert ANSI + "1;31mcollision" in done.stdout


def test_verbose_gives_each_finding_its_detail_and_vv_the_timings(named):
    plain = gjk("scan", named, code=1)
    verbose = gjk("scan", named, "-v", code=1)
    assert "witness A" not in plain.stdout and "gjk: timings:" not in plain.stderr
    assert verbose.stdout.count("    witness A ") == 3 and verbose.stdout.count("    certificate ") == 3
    assert "gjk: timings:" not in verbose.stderr
    very = gjk("scan", named, "-vv", code=1)
    assert very.stdout.count("    witness A ") == 3
    (timings,) = [line for line in very.stderr.splitlines() if line.startswith("gjk: timings:")]
    assert all(f"{stage} " in timings for stage in ("load", "hulls", "broad", "narrow"))
    # the table's row limit is lifted: every finding is listed
    assert "... and" not in gjk("scan", named, "-v", "--format", "table", code=1).stdout


def test_verbose_lifts_the_row_limit(tmp_path):
    trimesh = pytest.importorskip("trimesh")
    scene = trimesh.Scene()
    for k in range(9):  # 36 colliding pairs: more than the table's 25 rows
        scene.add_geometry(trimesh.creation.box([1, 1, 1]), node_name=f"box{k}", geom_name=f"g{k}",
                           transform=trimesh.transformations.translation_matrix([0.01 * k, 0, 0]))
    path = tmp_path / "heap.glb"
    scene.export(path)
    table = gjk("scan", path, "--format", "table", code=1).stdout
    assert "... and 11 more" in table
    full = gjk("scan", path, "--format", "table", "-v", code=1).stdout
    assert "more" not in full and sum(line.startswith("collision ") for line in full.splitlines()) == 36
    assert sum(": collision: " in line for line in gjk("scan", path, code=1).stdout.splitlines()) == 36


def _seconds(summary: str) -> tuple[float, str]:
    value, unit, words = re.search(r"\(([\d.]+) (us|ms|s) (in all|for the run)\)$", summary).groups()
    return float(value) * {"us": 1e-6, "ms": 1e-3, "s": 1.0}[unit], words


def test_the_summary_times_the_whole_process_or_says_it_timed_the_run(tmp_path):
    """`gjk` started as a process: the time since the process started (an interpreter that
    waited 0.6 s before running gjk shows at least that), "in all"; called in a longer-lived
    process (CliRunner here): the run's time, "for the run"."""
    for args in (("scan", "--together", A, B), ("check", A, B)):
        script = ("import time, sys\ntime.sleep(0.6)\n"
                  f"sys.argv = ['gjk', {', '.join(repr(str(a)) for a in args)}]\n"
                  "from gjkcli.__main__ import run\nrun()\n")
        done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True,
                              env=os.environ, check=False)
        assert done.returncode == 1, done.stderr
        seconds, words = _seconds(done.stdout.splitlines()[-1])
        assert words == "in all" and seconds >= 0.6, done.stdout
        seconds, words = _seconds(gjk(*args, code=1).stdout.splitlines()[-1])
        assert words == "for the run" and seconds < 60


def junit(*args, code=None):
    out = gjk(*args, "--format", "junit", code=code).stdout
    root = ET.fromstring(out.split("\n", 1)[1])
    suite = root.find("testsuite")
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    return suite, props


def test_junit_lists_every_pair_checked_passing_ones_too():
    suite, props = junit("scan", "--together", A, B, SAMPLES / "clear_b.stl", SAMPLES / "touch_a.stl", code=1)
    cases = suite.findall("testcase")
    assert len(cases) == int(suite.get("tests")) == int(props["checked_pairs"]) == 6
    failing = [c for c in cases if c.find("failure") is not None]
    passing = [c for c in cases if c.find("failure") is None and c.find("skipped") is None]
    assert len(failing) == int(suite.get("failures")) and passing
    assert all(c.find("system-out").text.startswith(("clear:", "touching")) for c in passing)
    # two parts apart: the one pair, passing
    suite, props = junit("scan", "--together", SAMPLES / "clear_a.stl", SAMPLES / "clear_b.stl", code=0)
    (case,) = suite.findall("testcase")
    assert props["checked_pairs"] == "1" and case.get("name") == "clear_a.stl x clear_b.stl"
    assert case.find("system-out").text == "clear: 0.5 apart"


def test_junit_beyond_the_limit_lists_the_findings_and_says_so(monkeypatch):
    from gjkcli.pipeline import stages

    monkeypatch.setattr(stages, "ALL_PAIRS_UP_TO", 1)
    suite, props = junit("scan", "--together", A, B, SAMPLES / "clear_b.stl", code=1)
    cases = suite.findall("testcase")
    assert len(cases) == 2 and all(c.find("failure") is not None for c in cases)
    assert "so the report lists the findings, not the passing pairs" in suite.find("system-out").text


def test_all_pairs_lists_the_pair_the_broad_phase_parts():
    """Two parts 0.5 apart: the broad phase parts them; --all-pairs lists the pair with the
    distance `gjk check` gives."""
    a, b = SAMPLES / "clear_a.stl", SAMPLES / "clear_b.stl"
    assert "0 pairs checked" in gjk("scan", "--together", a, b, code=0).stdout  # without it: nothing to list
    out = gjk("scan", "--together", a, b, "--all-pairs", code=0).stdout
    assert "clear_a.stl x clear_b.stl: clear: 0.5 apart" in out and "1 pair checked" in out
    doc = json.loads(gjk("scan", "--together", a, b, "--all-pairs", "--format", "json", code=0).stdout)
    (pair,) = doc["pairs"]
    check = json.loads(gjk("check", a, b, "--format", "json", code=0).stdout)["pairs"][0]
    assert pair["status"] == "clear" and pair["distance"] == pytest.approx(check["distance"]) == pytest.approx(0.5)


def test_all_pairs_beyond_the_limit_says_which_pairs_it_lists(monkeypatch):
    from gjkcli.pipeline import stages

    monkeypatch.setattr(stages, "ALL_PAIRS_UP_TO", 1)
    out = gjk("scan", "--together", A, B, SAMPLES / "clear_b.stl", SAMPLES / "peg.stl", "--all-pairs").stdout
    assert "only the pairs whose boxes come within reach are checked and listed" in out


def test_writing_a_baseline_says_what_it_recorded(tmp_path):
    out = gjk("scan", "--together", A, B, "--write-baseline", tmp_path / "base.json", code=0).stdout
    summary = out.splitlines()[-1]
    assert "; 1 finding recorded in the baseline; exit 0" in summary and "failing" not in summary
    table = gjk("scan", "--together", A, B, "--write-baseline", tmp_path / "base.json", "--format", "table", code=0).stdout
    assert "; 1 finding recorded in the baseline; exit 0" in table


def test_verbose_on_a_terminal_draws_each_findings_panel_before_the_summary():
    import io

    from rich.console import Console

    from gjkcli.pipeline.run import Options, scan
    from gjkcli.report.scan import render_scan

    found = scan([A, B, SAMPLES / "touch_a.stl"], Options(jobs=1))
    console = Console(record=True, width=100, file=io.StringIO())
    console.print(render_scan(found, details=True))
    text = console.export_text()
    assert text.count("witness A") == len(found.pairs) == 3
    assert text.rindex("witness A") < text.index("3 objects, 3 pairs checked")
    console = Console(record=True, width=100, file=io.StringIO())
    console.print(render_scan(found))
    assert "witness A" not in console.export_text()


def test_all_pairs_gives_a_parted_pair_of_a_part_that_is_not_convex_its_hulls_distance(tmp_path):
    """A ring 2 away from a box: the broad phase parts them; --all-pairs lists the pair with
    the hulls' distance, a lower bound of the parts' (marked conservative), without asking the
    triangles; `gjk check` gives the parts' own distance, not below it."""
    trimesh = pytest.importorskip("trimesh")
    ring = trimesh.creation.annulus(r_min=0.6, r_max=1.0, height=0.5)
    ring.export(tmp_path / "ring.stl")
    trimesh.creation.box([1, 1, 1]).apply_translation([3.5, 0, 0]).export(tmp_path / "box.stl")
    files = (tmp_path / "ring.stl", tmp_path / "box.stl")
    doc = json.loads(gjk("scan", "--together", *files, "--all-pairs", "--format", "json", code=0).stdout)
    (pair,) = doc["pairs"]
    assert doc["summary"]["candidates"] == 0 and doc["summary"]["pairs"] == 1
    assert pair["status"] == "clear" and pair["mode"] == "hull" and pair["conservative"] is True
    exact = json.loads(gjk("check", *files, "--format", "json", code=0).stdout)["pairs"][0]
    assert pair["distance"] == pytest.approx(2.0, abs=1e-6) and exact["distance"] >= pair["distance"] - 1e-9
    line = gjk("scan", "--together", *files, "--all-pairs", code=0).stdout.splitlines()[0]
    assert line == "ring.stl x box.stl: clear: 2 apart (between the hulls; a part is not convex)"


def test_importing_the_entry_is_not_starting_the_process():
    """A test (or a notebook) that imports gjkcli.__main__ has not started gjk's process: the
    summary then times the run, not the interpreter's age."""
    import gjkcli.__main__  # noqa: F401
    from gjkcli import clock

    assert clock.since_start() is None
    _, words = _seconds(gjk("scan", "--together", A, B, code=1).stdout.splitlines()[-1])
    assert words == "for the run"
