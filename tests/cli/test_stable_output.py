"""Output for CI logs and scripts (issue 28): input errors are one line each on stderr in every
format, before what they led to; plain output through a pipe is not wrapped or padded; the JSON of
two identical runs is the same bytes unless --timings asks for the clock."""
from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from gjkcli.cli import main

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
A, B = SAMPLES / "collide_a.stl", SAMPLES / "collide_b.stl"


def gjk(*args):
    return CliRunner(catch_exceptions=False).invoke(main, [str(a) for a in args])


def test_scan_errors_are_one_line_each_on_stderr_in_table_mode(tmp_path):
    missing = tmp_path / "nothere.stl"
    result = gjk("scan", A, missing)
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [f"gjk: error: {missing}: no such file or directory; check the path"]
    assert "error:" not in result.stdout  # not twice on a terminal
    lines = result.output.splitlines()  # stdout and stderr as they came: the reason first
    assert lines[0].startswith("gjk: error:") and "there are no pairs to check" in lines[1]
    # a report file keeps its errors, first
    out = tmp_path / "report.txt"
    assert gjk("scan", A, missing, "-o", out).exit_code == 2
    assert out.read_text().startswith(f"error: {missing}: no such file")


def test_plain_output_keeps_each_line_whole_and_unpadded(tmp_path):
    """Through a pipe (CliRunner's stdout is not a terminal) the summary, however long, is one
    line, and no line ends in spaces."""
    long = tmp_path / ("a_part_with_a_rather_long_name_" * 4 + ".stl")
    long.write_bytes(A.read_bytes())
    result = gjk("scan", long, B, SAMPLES / "ring.stl", tmp_path / "missing.stl")
    assert result.exit_code == 2
    lines = result.stdout.splitlines()
    assert [line for line in lines if line != line.rstrip()] == []
    (summary,) = [line for line in lines if "pairs checked" in line]
    assert summary.endswith(")") and "failing (1 file error); exit 2" in summary
    assert len(summary) > 80  # rich would wrap it at 80 columns without a terminal


def test_two_runs_give_the_same_json_bytes():
    for args in (("check", A, B, "--trace"), ("scan", A, B, SAMPLES / "ring.stl", SAMPLES / "peg.stl", "--together")):
        first, second = gjk(*args, "--format", "json"), gjk(*args, "--format", "json")
        assert first.exit_code == 1 and first.stdout_bytes == second.stdout_bytes
        doc = json.loads(first.stdout)
        assert doc["summary"]["elapsed"] is None and doc["run"]["timings"] == {}
        assert {p["elapsed"] for p in doc["pairs"]} == {None}
    timed = json.loads(gjk("check", A, B, "--format", "json", "--timings").stdout)
    assert timed["summary"]["elapsed"] > 0 and timed["run"]["timings"]["load"] > 0
    assert timed["pairs"][0]["mode"] == "hull" and timed["pairs"][0]["elapsed"] is None  # a batch's answer
    exact = json.loads(gjk("check", SAMPLES / "ring.stl", SAMPLES / "peg.stl", "--format", "json",
                           "--timings").stdout)
    assert exact["pairs"][0]["mode"] == "exact" and exact["pairs"][0]["elapsed"] > 0


def test_writing_a_baseline_is_a_success(tmp_path):
    """--write-baseline records today's failing findings and exits 0 (as ruff's --add-noqa);
    a run against the baseline then fails only on a new finding."""
    base = tmp_path / "baseline.json"
    written = gjk("scan", A, B, "--together", "--write-baseline", base, "--format", "json")
    assert written.exit_code == 0 and json.loads(written.stdout)["summary"]["exit_code"] == 0
    assert len(json.loads(base.read_text())["findings"]) == 1
    assert gjk("scan", A, B, "--together", "--baseline", base).exit_code == 0
    assert gjk("scan", A, B, SAMPLES / "peg.stl", "--together", "--baseline", base).exit_code == 1
    bad = gjk("scan", A, B, tmp_path / "missing.stl", "--together", "--write-baseline", base)
    assert bad.exit_code == 2  # an input error is still one
