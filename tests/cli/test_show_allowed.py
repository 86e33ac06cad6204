"""Allowed pairs counted, not listed, as ruff counts the diagnostics it ignores: the table and JSON
list them only with --show-allowed (a robot's and a manifest's alike); SARIF, JUnit and the
baseline mean what they meant (suppressed results, skipped cases, the same baseline file)."""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest
from click.testing import CliRunner

from gjkcli.cli import main

# three boxes: a-b overlap and are allowed ("press fit"), a-c overlap and fail, b-c are apart
CELL = """
[[object]]
name = "a"
box = [1, 1, 1]

[[object]]
name = "b"
box = [1, 1, 1]
translate = [0.5, 0, 0]

[[object]]
name = "c"
box = [1, 1, 1]
translate = [-0.6, 0, 0]

[[allow]]
a = "a"
b = "b"
reason = "press fit"
"""


def gjk(*args, code=None):
    result = CliRunner(env={"COLUMNS": "200"}).invoke(main, [str(a) for a in args], catch_exceptions=False)
    if code is not None:
        assert result.exit_code == code, (result.exit_code, result.stdout, result.stderr)
    return result


@pytest.fixture
def cell(tmp_path):
    m = tmp_path / "cell.toml"
    m.write_text(CELL)
    return m


def _pairs(doc) -> set:
    return {frozenset((p["a"], p["b"])) for p in doc["pairs"]}


def test_an_allowed_pair_that_only_touches_is_counted_as_it_is_left_out(tmp_path):
    """A pair allowed and touching (a door in its host wall) is no violation, and the listing
    leaves it out as it leaves out the allowed collisions: the summary counts it (it said "0
    allowed, not listed", and JSON's summary.allowed 0, for a pair it did not list)."""
    m = tmp_path / "cell.toml"
    m.write_text(CELL.replace("translate = [0.5, 0, 0]", "translate = [1, 0, 0]")
                     .replace("translate = [-0.6, 0, 0]", "translate = [-3, 0, 0]"))
    out = gjk("scan", "--manifest", m, "--jobs", "1", code=0).stdout
    assert "1 touching" in out and "0 failing (1 allowed, not listed: --show-allowed lists them)" in out
    doc = json.loads(gjk("scan", "--manifest", m, "--jobs", "1", "--format", "json", code=0).stdout)
    assert doc["pairs"] == [] and doc["summary"]["touching"] == doc["summary"]["allowed"] == 1
    doc = json.loads(gjk("scan", "--manifest", m, "--jobs", "1", "--format", "json", "--show-allowed",
                         code=0).stdout)
    assert [(p["status"], p["allowed"], p["violation"]) for p in doc["pairs"]] == [("touching", True, False)]
    assert doc["summary"]["allowed"] == 1


def test_table_and_json_count_allowed_pairs(cell):
    out = gjk("scan", "--manifest", cell, "--jobs", "1", code=1).stdout
    assert "press fit" not in out
    assert "1 failing (1 allowed, not listed: --show-allowed lists them)" in out
    shown = gjk("scan", "--manifest", cell, "--jobs", "1", "--show-allowed", code=1).stdout
    assert "allowed: press fit" in shown and "1 failing (1 allowed)" in shown
    doc = json.loads(gjk("scan", "--manifest", cell, "--jobs", "1", "--format", "json", code=1).stdout)
    assert _pairs(doc) == {frozenset("ac")}
    assert doc["summary"]["allowed"] == 1 and doc["run"]["show_allowed"] is False
    doc = json.loads(gjk("scan", "--manifest", cell, "--jobs", "1", "--format", "json", "--show-allowed",
                         code=1).stdout)
    assert _pairs(doc) == {frozenset("ac"), frozenset("ab")}
    # --all-pairs lists every checked pair, the allowed ones among them
    doc = json.loads(gjk("scan", "--manifest", cell, "--jobs", "1", "--format", "json", "--all-pairs",
                         code=1).stdout)
    assert _pairs(doc) >= {frozenset("ac"), frozenset("ab")}


def test_sarif_junit_and_baseline_keep_their_meaning(cell, tmp_path):
    sarif = json.loads(gjk("scan", "--manifest", cell, "--jobs", "1", "--format", "sarif", code=1).stdout)
    results = sarif["runs"][0]["results"]
    suppressed = [r for r in results if r.get("suppressions")]
    assert len(results) == 2 and len(suppressed) == 1
    assert suppressed[0]["suppressions"][0]["justification"] == "press fit"
    junit = ET.fromstring(gjk("scan", "--manifest", cell, "--jobs", "1", "--format", "junit", code=1).stdout)
    assert len(junit.findall(".//failure")) == 1
    assert [s.get("message") for s in junit.findall(".//skipped")] == ["allowed: press fit"]
    one, two = tmp_path / "one.json", tmp_path / "two.json"
    gjk("scan", "--manifest", cell, "--jobs", "1", "--write-baseline", one, "-q")
    gjk("scan", "--manifest", cell, "--jobs", "1", "--write-baseline", two, "-q", "--show-allowed")
    assert json.loads(one.read_text())["findings"] == json.loads(two.read_text())["findings"]
    # the recorded failure passes with the baseline, listed or not
    gjk("scan", "--manifest", cell, "--jobs", "1", "--baseline", one, code=0)


def test_a_robots_adjacent_links_are_counted(panda_package):
    """The Panda at its ready pose: 8 colliding pairs, every one allowed (adjacent links, SRDF
    Default): nothing listed, the count in the summary; 18 MB of JSON for Talos came from these."""
    urdf, srdf = panda_package / "urdf" / "panda.urdf", panda_package / "urdf" / "panda.srdf"
    out = gjk("scan", urdf, "--srdf", srdf, "--joints", "ready", code=0).stdout
    assert "no findings but allowed ones" in out and "panda_link" not in out.split("\n", 3)[-1]
    doc = json.loads(gjk("scan", urdf, "--srdf", srdf, "--joints", "ready", "--format", "json", code=0).stdout)
    assert doc["pairs"] == [] and doc["summary"]["allowed"] == doc["summary"]["collision"] > 0
