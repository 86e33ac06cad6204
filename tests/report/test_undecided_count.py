"""The summary line of every run states how many pairs ended undecided, none included (issue 40:
an undecided pair fails the run, and the count says how rare they are): `gjk check`, `gjk scan`
of meshes, of a 2D drawing, of a robot at poses and along a motion, and the HTML page's summary.
"""
from __future__ import annotations

import dataclasses
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from gjkcli.cli import main
from gjkcli.engine.results import Status
from gjkcli.pipeline import run

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


def _last(tmp_path, *argv) -> str:
    r = CliRunner(catch_exceptions=False).invoke(main, [str(a) for a in argv], env={"COLUMNS": "200"})
    assert r.exit_code in (0, 1), r.stdout + r.stderr
    return r.stdout.strip().splitlines()[-1]


def test_check_states_none_undecided(tmp_path):
    assert re.search(r"^1 pair: 1 clear, 0 undecided; 0 failing", _last(tmp_path, "check", SAMPLES / "clear_a.stl",
                                                                      SAMPLES / "clear_b.stl"))


def test_scan_states_none_undecided(tmp_path):
    line = _last(tmp_path, "scan", "--manifest", SAMPLES / "cell.toml")
    assert "pairs checked: 0 undecided, 1 clearance; 1 failing" in line


def test_a_drawing_s_scan_states_none_undecided(tmp_path):
    line = _last(tmp_path, "scan", SAMPLES / "flat" / "nest.dxf")
    assert re.search(r"pairs checked: \d+ collision, 0 undecided, \d+ touching;", line), line


@pytest.mark.parametrize("route", ["--poses", "--trajectory"])
def test_a_robot_s_poses_and_motions_state_none_undecided(tmp_path, route):
    robot = tmp_path / "arm.urdf"
    shutil.copy(SAMPLES / "robot" / "arm.urdf", robot)
    table = tmp_path / "poses.csv"
    table.write_text("shoulder,elbow\n0,0\n0.5,0.2\n")
    line = _last(tmp_path, "scan", robot, route, table)
    assert re.search(r"pairs checked: \d+ collision, 0 undecided; \d+ failing", line), line


def test_an_undecided_pair_is_counted_in_the_check_s_summary_and_the_page_s():
    """The count is the findings' own: a pair made undecided reads 1 undecided."""
    from gjkcli.report.checktext import summary_spans
    from gjkcli.report.page import summary

    found = run.check(SAMPLES / "clear_a.stl", SAMPLES / "clear_b.stl", run.Options(jobs=1))
    (pair,) = found.pairs
    undecided = dataclasses.replace(found, pairs=[pair.but(result=dataclasses.replace(pair.result, status=Status.UNDECIDED))],
                                    counts={"undecided": 1})
    assert "1 pair: 1 undecided;" in "".join(text for text, _ in summary_spans(undecided))
    assert ": 1 undecided;" in summary(undecided)
    assert ": 1 clear, 0 undecided;" in summary(found)
