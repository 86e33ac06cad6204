"""`gjk check` end to end, through click's CliRunner on samples/ (and ../shared when present).

The samples and their expected answers are described in scripts/make_samples.py.
"""
from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import gjkcli
from gjkcli.cli import main

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples"
SHARED = Path(__file__).resolve().parents[3] / "shared"
needs_shared = pytest.mark.skipif(not (SHARED / "meshes").is_dir(),
                                  reason=f"the shared real-world meshes are not at {SHARED}")

PAIRS = {
    "clear": ("clear_a.stl", "clear_b.stl"),
    "touching": ("touch_a.stl", "touch_b.stl"),
    "collision": ("collide_a.stl", "collide_b.stl"),
    "hulls": ("ring.stl", "peg.stl"),
}


def python(*args, cwd: Path) -> subprocess.CompletedProcess:
    """Run this interpreter on the same gjkcli the tests import (source tree or installed), from a
    neutral folder so that the current directory cannot shadow it."""
    env = {**os.environ, "PYTHONPATH": str(Path(gjkcli.__file__).resolve().parents[1])}
    return subprocess.run([sys.executable, *map(str, args)], cwd=cwd, env=env, capture_output=True, text=True)


def sample(name: str) -> str:
    return str(SAMPLES / name)


def gjk(*args, code=None, width=None):
    """Run `gjk` in-process; check the exit code when given. `width` sets the report's columns."""
    env = {"COLUMNS": str(width)} if width else None
    result = CliRunner(catch_exceptions=False).invoke(main, [str(a) for a in args], env=env)
    if code is not None:
        assert result.exit_code == code, (result.exit_code, result.stdout, result.stderr)
    return result


def check_json(pair: str, *options, code=None) -> dict:
    a, b = PAIRS[pair]
    result = gjk("check", sample(a), sample(b), "--format", "json", *options, code=code)
    return json.loads(result.stdout)


# -- verdicts on the samples --------------------------------------------------------------------

def test_clear_pair():
    doc = check_json("clear", code=0)
    pair = doc["pairs"][0]
    assert pair["status"] == "clear"
    assert pair["distance"] == pytest.approx(0.5, abs=1e-9)
    assert pair["depth"] is None
    assert pair["certificate"]["kind"] == "plane"
    assert pair["normal"] == pytest.approx([1.0, 0.0, 0.0], abs=1e-9)
    assert doc["summary"]["exit_code"] == 0 and doc["summary"]["clear"] == 1


def test_touching_pair_is_not_a_violation():
    doc = check_json("touching", code=0)
    pair = doc["pairs"][0]
    assert pair["status"] == "touching"
    assert pair["distance"] == 0.0 and pair["depth"] is None
    assert pair["violation"] is False


def test_collision_pair():
    doc = check_json("collision", code=1)
    pair = doc["pairs"][0]
    assert pair["status"] == "collision"
    assert pair["distance"] == 0.0
    assert pair["depth"] == pytest.approx(0.25, abs=1e-7)
    assert pair["normal"] == pytest.approx([1.0, 0.0, 0.0], abs=1e-6)
    assert pair["certificate"]["kind"] == "point"
    assert pair["conservative"] is False and pair["note"] is None


def test_peg_through_ring_collides_as_hulls_and_says_so():
    doc = check_json("hulls", "--mode", "hull", code=1)
    ring, peg = doc["objects"]
    assert ring["convex"] is False and peg["convex"] is True
    assert "hull" in ring["convexity"]  # why the ring is not convex, in words
    pair = doc["pairs"][0]
    assert pair["status"] == "collision"
    assert pair["mode"] == "hull" and pair["requested_mode"] == "hull"
    assert pair["conservative"] is True
    assert "collision between hulls; the parts themselves may not touch" in pair["note"]


def test_peg_through_ring_report_says_conservative():
    a, b = PAIRS["hulls"]
    out = " ".join(gjk("check", sample(a), sample(b), "--mode", "hull", code=1, width=200).stdout.split())
    assert "COLLISION" in out
    assert "collision between hulls" in out and "may not touch" in out
    assert "mode hull" in out


def test_peg_through_ring_is_clear_in_auto_mode():
    """The hulls collide and the ring is not convex: auto refines the pair on its triangles."""
    pair = check_json("hulls", code=0)["pairs"][0]
    assert pair["status"] == "clear" and pair["mode"] == "exact" and pair["requested_mode"] == "auto"
    assert pair["conservative"] is False
    # the peg (radius 0.4) sits in the ring's hole (radius 0.75): 0.35 minus the facets' sag
    assert 0.3 < pair["distance"] < 0.35
    a, b = (np.array(pair[k]) for k in ("point_a", "point_b"))
    assert np.linalg.norm(b - a) == pytest.approx(pair["distance"], rel=1e-12)


def test_mode_exact_and_auto_agree_on_the_peg():
    auto = check_json("hulls", "--mode", "auto", code=0)["pairs"][0]
    exact = check_json("hulls", "--mode", "exact", code=0)["pairs"][0]
    assert exact["mode"] == "exact" and exact["distance"] == pytest.approx(auto["distance"], rel=1e-12)


def test_split_bodies_checks_body_against_body(tmp_path):
    import trimesh

    two = trimesh.util.concatenate([trimesh.creation.box([1, 1, 1]),
                                    trimesh.creation.box([1, 1, 1]).apply_translation([3, 0, 0])])
    one = trimesh.creation.box([1, 1, 1]).apply_translation([1.5, 0, 0])
    two.export(tmp_path / "two.stl")
    one.export(tmp_path / "one.stl")
    doc = json.loads(gjk("check", tmp_path / "two.stl", tmp_path / "one.stl", "--split-bodies",
                         "--format", "json", code=0).stdout)
    assert [o["name"] for o in doc["objects"]] == ["two.stl#1", "two.stl#2", "one.stl"]
    assert [p["distance"] for p in doc["pairs"]] == pytest.approx([0.5, 0.5], abs=1e-6)
    same = json.loads(gjk("check", tmp_path / "two.stl", tmp_path / "two.stl", "--split-bodies",
                          "--format", "json", code=0).stdout)
    assert len(same["pairs"]) == 1 and same["pairs"][0]["distance"] == pytest.approx(2.0, abs=1e-6)


@pytest.mark.parametrize("pair, status, code", [("clear", "clear", 0), ("touching", "touching", 0),
                                                ("collision", "collision", 1), ("hulls", "collision", 1)])
def test_table_report_and_exit_code(pair, status, code):
    a, b = PAIRS[pair]
    result = gjk("check", sample(a), sample(b), "--mode", "hull", code=code)
    out = result.stdout
    assert status.upper() in out
    for label in ("file", "vertices", "hull vertices", "convex", "watertight", "bounds min", "normal",
                  "witness A", "witness B", "iterations"):
        assert label in out, label
    # a hull answer comes from the batch call: no time of its own, rather than "time 0 us"
    assert "time " not in out and " 0 us" not in out
    assert a in out and b in out
    assert "\x1b[" not in out  # not a terminal: no colour codes
    assert result.stderr == ""


def test_same_file_twice_collides_and_keeps_names_apart():
    doc = json.loads(gjk("check", sample("clear_a.stl"), sample("clear_a.stl"), "--format", "json", code=1).stdout)
    assert doc["pairs"][0]["status"] == "collision"
    assert doc["pairs"][0]["a"] != doc["pairs"][0]["b"]


# -- options ------------------------------------------------------------------------------------

def test_clearance_fails_a_clear_pair_closer_than_it():
    doc = check_json("clear", "--clearance", "0.6", code=1)
    pair = doc["pairs"][0]
    assert pair["status"] == "clearance" and pair["violation"] is True
    assert pair["distance"] == pytest.approx(0.5, abs=1e-9)
    assert pair["clearance"] == 0.6
    assert doc["summary"]["clearance"] == 1 and doc["summary"]["exit_code"] == 1


def test_clearance_passes_a_pair_further_apart():
    doc = check_json("clear", "--clearance", "0.4", code=0)
    assert doc["pairs"][0]["status"] == "clear"


def test_clearance_fails_touching_parts():
    doc = check_json("touching", "--clearance", "0.01", code=1)
    assert doc["pairs"][0]["status"] == "touching" and doc["pairs"][0]["violation"] is True


def test_clearance_report_names_the_gap():
    a, b = PAIRS["clear"]
    out = " ".join(gjk("check", sample(a), sample(b), "--clearance", "0.6", code=1, width=200).stdout.split())
    assert "CLEARANCE" in out and "closer than the required 0.6" in out


def test_tolerance_widens_touching():
    doc = check_json("clear", "--tolerance", "0.6", code=0)
    pair = doc["pairs"][0]
    assert pair["status"] == "touching"
    assert pair["tolerance"] == 0.6
    doc = check_json("clear", "--tolerance", "0.4", code=0)
    assert doc["pairs"][0]["status"] == "clear"


def test_tolerance_turns_a_shallow_collision_into_touching():
    doc = check_json("collision", "--tolerance", "0.3", code=0)
    assert doc["pairs"][0]["status"] == "touching"


def test_default_tolerance_is_relative_to_the_pair():
    doc = check_json("touching", code=0)
    assert 0.0 < doc["pairs"][0]["tolerance"] < 1e-5


@pytest.mark.parametrize("option, value", [("--tolerance", "-1"), ("--tolerance", "nan"), ("--clearance", "-0.5"),
                                           ("--clearance", "inf")])
def test_bad_lengths_are_usage_errors(option, value):
    a, b = PAIRS["clear"]
    result = gjk("check", sample(a), sample(b), option, value, code=2)
    assert "Traceback" not in result.output


def test_mode_hull_and_auto_agree():
    auto = check_json("clear", "--mode", "auto", code=0)["pairs"][0]
    hull = check_json("clear", "--mode", "hull", code=0)["pairs"][0]
    assert hull["mode"] == auto["mode"] == "hull"
    assert hull["requested_mode"] == "hull" and auto["requested_mode"] == "auto"
    assert hull["distance"] == auto["distance"]


def test_mode_exact_on_convex_parts_agrees_with_the_hulls():
    for pair, code in (("clear", 0), ("touching", 0), ("collision", 1)):
        hull = check_json(pair, "--mode", "hull", code=code)["pairs"][0]
        exact = check_json(pair, "--mode", "exact", code=code)["pairs"][0]
        assert exact["mode"] == "exact" and exact["status"] == hull["status"]
        assert exact["distance"] == pytest.approx(hull["distance"], abs=1e-9)


def test_quiet_prints_nothing():
    for pair, code in (("clear", 0), ("collision", 1)):
        a, b = PAIRS[pair]
        result = gjk("check", sample(a), sample(b), "-q", code=code)
        assert result.stdout == "" and result.stderr == ""
    result = gjk("check", sample("clear_a.stl"), "missing.stl", "--quiet", code=2)
    assert result.stdout == "" and "missing.stl" in result.stderr


def test_version():
    for args in (["--version"], ["check", "--version"]):
        result = gjk(*args, code=0)
        assert result.stdout.startswith("gjk ")


def test_help_lists_the_options():
    out = gjk("check", "--help", code=0).stdout
    for option in ("--tolerance", "--clearance", "--mode", "--format", "--trace", "--trace-json", "--quiet",
                   "--debug", "--version"):
        assert option in out


@pytest.mark.parametrize("command", ["check", "scan"])
def test_help_groups_every_option_and_ends_with_examples(command):
    from gjkcli.cli import HELP_GROUPS

    out = gjk(command, "--help", code=0).stdout
    lines = out.splitlines()
    titles = [line[:-1] for line in lines if line.endswith(":") and not line.startswith(" ")]
    # the groups in HELP_GROUPS' order, every option of the command in a group of its own
    known = [t for t, _ in HELP_GROUPS]
    assert [t for t in titles if t in known] == [t for t in known if t in titles]
    params = [p for p in main.commands[command].params if p.__class__.__name__ == "Option"]
    grouped = {n for _, names in HELP_GROUPS for n in names}
    ungrouped = sorted(p.name for p in params if p.name not in grouped and p.name not in ("debug", "help"))
    assert ungrouped == ["version"], ungrouped
    for title in ("Verdicts", "Reports"):
        assert title in titles
    assert titles[-1] == "Examples"
    examples = lines[lines.index("Examples:") + 1:]
    assert examples and all(line.startswith(f"  gjk {command} ") for line in examples if line)


def test_check_and_scan_say_failing_alike(tmp_path):
    check = gjk("check", sample("collide_a.stl"), sample("collide_b.stl"), code=1).stdout
    scan = gjk("scan", sample("collide_a.stl"), sample("collide_b.stl"), "--together", code=1).stdout
    assert "; 1 failing; exit 1" in check and "; 1 failing; exit 1" in scan
    assert "violation" not in check.splitlines()[-1]


@pytest.mark.parametrize("color, ansi", [("always", True), ("never", False), ("auto", False)])
def test_color_through_a_pipe(color, ansi):
    """CliRunner's stdout is not a terminal: auto and never print plain text, always colours."""
    out = gjk("check", sample("collide_a.stl"), sample("collide_b.stl"), "--color", color, code=1).stdout
    assert ("\x1b[" in out) is ansi
    assert "COLLISION" in out


def test_no_color_in_the_environment_wins_over_auto():
    result = CliRunner(catch_exceptions=False).invoke(
        main, ["check", sample("collide_a.stl"), sample("collide_b.stl"), "--color", "auto"],
        env={"NO_COLOR": "1", "FORCE_COLOR": None}, color=True)
    assert "\x1b[" not in result.stdout


# -- JSON ---------------------------------------------------------------------------------------

PAIR_TYPES = {"a": str, "b": str, "status": str, "distance": float, "normal": list, "point_a": list,
              "point_b": list, "iterations": int, "mode": str, "certificate": dict}
OBJECT_TYPES = {"name": str, "file": str, "vertices": int, "hull_vertices": int, "convex": bool,
                "watertight": bool, "bounds": list}


@pytest.mark.parametrize("pair", sorted(PAIRS))
@pytest.mark.parametrize("mode", ["hull", "exact"])
def test_json_keys_and_types(pair, mode):
    doc = check_json(pair, "--mode", mode)
    assert doc["schema_version"] == 2
    assert doc["errors"] == []
    assert len(doc["objects"]) == 2 and len(doc["pairs"]) == 1
    for o in doc["objects"]:
        for key, kind in OBJECT_TYPES.items():
            assert isinstance(o[key], kind), key
        assert "units" in o
        assert len(o["bounds"]) == 2 and all(len(c) == 3 for c in o["bounds"])
    p = doc["pairs"][0]
    if p["certificate"] is None:  # a plane cannot separate parts that are not convex
        assert p["mode"] == "exact" and p["status"] != "collision"
        p = {**p, "certificate": {"kind": "plane", "normal": [0.0] * 3, "offset": 0.0}}
    for key, kind in PAIR_TYPES.items():
        assert isinstance(p[key], kind), key
    assert p["status"] in {"clear", "touching", "collision", "clearance", "undecided"}
    assert p["depth"] is None or isinstance(p["depth"], float)
    assert all(isinstance(x, float) for x in p["normal"] + p["point_a"] + p["point_b"])
    cert = p["certificate"]
    if cert["kind"] == "plane":
        assert len(cert["normal"]) == 3 and isinstance(cert["offset"], float)
    elif cert["kind"] == "triangles":  # the parts' triangles a and b cross at the point
        assert isinstance(cert["a"], int) and isinstance(cert["b"], int) and len(cert["point"]) == 3
    elif cert["kind"] == "distance":  # a lower bound of the parts' distance over their triangles
        assert cert["lower"] <= p["distance"]
    elif cert["kind"] == "shift":  # touching: B moved by the shift leaves the volumes apart
        assert len(cert["shift"]) == 3 and 0.0 <= cert["upper"] <= p["tolerance"]
    else:
        assert cert["kind"] == "point" and len(cert["point"]) == 3
    assert cert["of"] == ("hulls" if p["conservative"] else "parts")
    s = doc["summary"]
    assert s["pairs"] == 1 and sum(s[k] for k in ("clear", "touching", "collision", "clearance", "undecided")) == 1
    assert s["exit_code"] in (0, 1)


def test_json_with_trace_carries_the_steps():
    doc = check_json("collision", "--trace", code=1)
    steps = doc["pairs"][0]["trace"]
    assert steps[0]["phase"] == "gjk" and steps[-1]["phase"] == "epa"
    assert any(s["exit"] for s in steps)


def test_json_input_error_document():
    result = gjk("check", sample("clear_a.stl"), "nowhere.stl", "--format", "json", code=2)
    doc = json.loads(result.stdout)
    assert doc["pairs"] == [] and doc["summary"]["exit_code"] == 2
    assert doc["errors"][0]["file"].endswith("nowhere.stl")
    assert len(doc["objects"]) == 1  # A loaded before B failed
    assert len(result.stderr.strip().splitlines()) == 1


# -- traces -------------------------------------------------------------------------------------

def test_trace_json_writes_one_object_per_step(tmp_path):
    out = tmp_path / "trace.jsonl"
    a, b = PAIRS["collision"]
    gjk("check", sample(a), sample(b), "--trace-json", out, "-q", code=1)
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert records, "no steps written"
    fields = {"phase", "iteration", "direction", "index_a", "index_b", "steps_a", "steps_b", "point_a",
              "point_b", "w", "passed", "simplex_before", "simplex_after", "lambdas", "feature", "kept", "vnorm",
              "lower", "upper", "exit", "faces", "support"}
    for rec in records:
        assert fields <= set(rec)
        assert rec["a"] == a and rec["b"] == b
    phases = [r["phase"] for r in records]
    assert phases[0] == "gjk" and "epa" in phases
    assert phases == sorted(phases, key=lambda p: p == "epa")  # GJK first, then EPA
    assert records[-1]["exit"] is not None


def test_trace_json_to_an_unwritable_place_is_an_input_error(tmp_path):
    a, b = PAIRS["clear"]
    result = gjk("check", sample(a), sample(b), "--trace-json", tmp_path / "no" / "such" / "dir.jsonl", code=2)
    assert "dir.jsonl" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("pair", sorted(PAIRS))
def test_trace_narrates_the_query(pair):
    a, b = PAIRS[pair]
    out = " ".join(gjk("check", sample(a), sample(b), "--trace", width=200).stdout.split())
    assert "GJK:" in out and "Search along d" in out
    assert "support along d is hull vertex" in out
    assert "Stop:" in out
    assert "exit" in out
    if pair in ("collision", "hulls"):
        assert "EPA:" in out and "polytope" in out


def test_trace_with_quiet_still_writes_nothing_to_stdout():
    a, b = PAIRS["clear"]
    assert gjk("check", sample(a), sample(b), "--trace", "-q", code=0).stdout == ""


# -- bad input ----------------------------------------------------------------------------------

def _ascii_stl(path: Path, triangles) -> Path:
    lines = ["solid t"]
    for tri in triangles:
        lines += ["facet normal 0 0 0", "outer loop"]
        lines += [f"vertex {x} {y} {z}" for x, y, z in tri]
        lines += ["endloop", "endfacet"]
    lines.append("endsolid t")
    path.write_text("\n".join(lines) + "\n")
    return path


def _bad_files(tmp: Path) -> dict[str, Path]:
    """One file per way a user's input can be unusable."""
    files = {}
    files["missing"] = tmp / "missing.stl"
    (tmp / "folder.stl").mkdir()
    files["directory"] = tmp / "folder.stl"
    files["empty"] = tmp / "empty.stl"
    files["empty"].write_bytes(b"")
    files["random"] = tmp / "noise.stl"
    files["random"].write_bytes(random.Random(0).randbytes(3000))
    files["truncated"] = tmp / "truncated.stl"
    files["truncated"].write_bytes((SAMPLES / "clear_b.stl").read_bytes()[:1000])
    files["nan"] = _ascii_stl(tmp / "nan.stl", [[(0, 0, 0), (1, 0, 0), ("nan", 1, 0)],
                                               [(0, 0, 1), (1, 0, 1), (0, 1, 1)]])
    files["unknown format"] = tmp / "part.qwerty"
    files["unknown format"].write_text("not a mesh\n")
    files["broken glb"] = tmp / "broken.glb"
    files["broken glb"].write_bytes(b"glTF\x02\x00\x00\x00" + random.Random(1).randbytes(200))
    return files


def _assert_one_line_error(result, name: str):
    assert result.exit_code == 2, (result.exit_code, result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert name in lines[0]
    assert "Traceback" not in result.output
    assert result.stdout == ""


@pytest.mark.parametrize("case", ["missing", "directory", "empty", "random", "truncated", "nan", "unknown format",
                                  "broken glb"])
@pytest.mark.parametrize("side", ["a", "b"])
def test_bad_input_is_one_line_and_exit_2(tmp_path, case, side):
    bad = _bad_files(tmp_path)[case]
    good = sample("clear_a.stl")
    args = ("check", bad, good) if side == "a" else ("check", good, bad)
    _assert_one_line_error(gjk(*args), bad.name)


@needs_shared
@pytest.mark.shared
@pytest.mark.parametrize("name", ["empty.stl", "points_emptyface.ply"])
def test_shared_bad_input_is_one_line_and_exit_2(name):
    _assert_one_line_error(gjk("check", SHARED / "meshes" / name, sample("clear_a.stl")), name)


def test_debug_shows_the_traceback_for_bad_input(tmp_path):
    missing = tmp_path / "missing.stl"
    proc = python("-m", "gjkcli", "check", "--debug", missing, sample("clear_a.stl"), cwd=tmp_path)
    assert proc.returncode != 0
    assert "Traceback" in proc.stderr and "missing.stl" in proc.stderr


def test_without_debug_the_real_command_prints_one_line(tmp_path):
    missing = tmp_path / "missing.stl"
    proc = python("-m", "gjkcli", "check", missing, sample("clear_a.stl"), cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "missing.stl" in proc.stderr


def test_unexpected_errors_are_one_line_internal_errors(monkeypatch):
    import gjkcli.engine.query

    def broken(*args, **kwargs):
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setattr(gjkcli.engine.query, "batch", broken)
    a, b = PAIRS["clear"]
    result = gjk("check", sample(a), sample(b), code=2)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("gjk: internal error") and "boom second line" in lines[0]
    assert "--debug" in lines[0] and a in lines[0]
    with pytest.raises(RuntimeError):
        gjk("check", sample(a), sample(b), "--debug")


# -- degenerate but valid geometry --------------------------------------------------------------

def test_single_triangle_and_flat_plate_get_verdicts(tmp_path):
    tri = _ascii_stl(tmp_path / "triangle.stl", [[(0, 0, 2), (1, 0, 2), (0, 1, 2)]])
    plate = _ascii_stl(tmp_path / "plate.stl", [[(-1, -1, 0.5), (1, -1, 0.5), (1, 1, 0.5)],
                                                [(-1, -1, 0.5), (1, 1, 0.5), (-1, 1, 0.5)]])
    cube = sample("touch_a.stl")  # [0, 1]^3
    doc = json.loads(gjk("check", tri, cube, "--format", "json", code=0).stdout)
    assert doc["pairs"][0]["status"] == "clear"
    assert doc["pairs"][0]["distance"] == pytest.approx(1.0, abs=1e-9)
    assert doc["objects"][0]["dimension"] == 2
    doc = json.loads(gjk("check", plate, cube, "--format", "json", code=1).stdout)
    assert doc["pairs"][0]["status"] == "collision"  # the plate cuts through the cube
    doc = json.loads(gjk("check", tri, plate, "--format", "json", code=0).stdout)
    assert doc["pairs"][0]["status"] == "clear"
    assert doc["pairs"][0]["distance"] == pytest.approx(1.5, abs=1e-9)


@needs_shared
@pytest.mark.shared
def test_heartgears_3mf_gets_a_verdict():
    path = SHARED / "3mf" / "heartgears.3mf"
    result = gjk("check", path, sample("clear_a.stl"), "--format", "json")
    assert result.exit_code in (0, 1), result.stderr
    doc = json.loads(result.stdout)
    assert doc["pairs"][0]["status"] in {"clear", "touching", "collision"}


@needs_shared
@pytest.mark.shared
def test_shared_sphere_pair_gets_a_verdict():
    meshes = SHARED / "meshes"
    result = gjk("check", meshes / "ballA.off", meshes / "ballB.off", "--format", "json")
    assert result.exit_code in (0, 1), result.stderr
    assert json.loads(result.stdout)["pairs"][0]["status"] in {"clear", "touching", "collision"}


# -- import cost --------------------------------------------------------------------------------

def test_importing_the_cli_stays_light(tmp_path):
    code = ("import sys, gjkcli.cli\n"
            "heavy = ('trimesh', 'scipy', 'rich', 'numpy', 'gjkcli.engine._core')\n"
            "print(','.join(m for m in heavy if m in sys.modules))\n")
    out = python("-c", code, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ""


# -- units --------------------------------------------------------------------------------------

_3MF_MODEL = """<?xml version="1.0" encoding="UTF-8"?>
<model unit="{unit}" xmlns="http://schemas.microsoft.com/3dmanufacturing/core/2015/02">
 <resources><object id="1" type="model"><mesh>
  <vertices><vertex x="0" y="0" z="0"/><vertex x="1" y="0" z="0"/><vertex x="0" y="1" z="0"/><vertex x="0" y="0" z="1"/>
  </vertices>
  <triangles><triangle v1="0" v2="2" v3="1"/><triangle v1="0" v2="1" v3="3"/><triangle v1="0" v2="3" v3="2"/>
   <triangle v1="1" v2="2" v3="3"/></triangles>
 </mesh></object></resources>
 <build><item objectid="1" transform="1 0 0 0 1 0 0 0 1 {x} 0 0"/></build>
</model>"""
_3MF_RELS = ('<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/'
             '2006/relationships"><Relationship Target="/3D/3dmodel.model" Id="rel0" Type="http://schemas.microsoft.'
             'com/3dmanufacturing/2013/01/3dmodel"/></Relationships>')
_3MF_TYPES = ('<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/'
              'content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.'
              'relationships+xml"/><Default Extension="model" ContentType="application/vnd.ms-package.'
              '3dmanufacturing-3dmodel+xml"/></Types>')


def _tetrahedron_3mf(path: Path, unit: str, x: float) -> Path:
    """A unit corner tetrahedron moved to x, in a 3MF file that states its unit."""
    import zipfile

    with zipfile.ZipFile(path, "w") as z:
        z.writestr("[Content_Types].xml", _3MF_TYPES)
        z.writestr("_rels/.rels", _3MF_RELS)
        z.writestr("3D/3dmodel.model", _3MF_MODEL.format(unit=unit, x=x))
    return path


def test_units_stated_by_the_files_are_reported(tmp_path):
    a = _tetrahedron_3mf(tmp_path / "a.3mf", "millimeter", 0)
    b = _tetrahedron_3mf(tmp_path / "b.3mf", "millimeter", 3)
    doc = json.loads(gjk("check", a, b, "--format", "json", code=0).stdout)
    assert [o["units"] for o in doc["objects"]] == ["millimeter", "millimeter"]
    assert doc["pairs"][0]["distance"] == pytest.approx(2.0, abs=1e-9)
    assert doc["notes"] == []
    out = " ".join(gjk("check", a, b, code=0, width=200).stdout.split())
    assert "2 millimeter apart" in out


def test_mixed_units_are_converted_to_the_first(tmp_path):
    """b.3mf in inches is scaled into a.3mf's millimetres (gjkcli.units), with a note."""
    a = _tetrahedron_3mf(tmp_path / "a.3mf", "millimeter", 0)
    b = _tetrahedron_3mf(tmp_path / "b.3mf", "inch", 3)
    mm = _tetrahedron_3mf(tmp_path / "b_mm.3mf", "millimeter", 3 * 25.4)
    doc = json.loads(gjk("check", a, b, "--format", "json", code=0).stdout)
    same = json.loads(gjk("check", a, mm, "--format", "json", code=0).stdout)
    assert len(doc["notes"]) == 1 and "converted to mm (x 25.4)" in doc["notes"][0]
    assert doc["run"]["units"] == "mm" and doc["pairs"][0]["units"] == "mm"
    assert doc["pairs"][0]["distance"] == pytest.approx(same["pairs"][0]["distance"], rel=1e-12)
    assert "converted to mm" in " ".join(gjk("check", a, b, code=0, width=200).stdout.split())


# -- a part that is nearly, but not quite, its hull ------------------------------------------------


@pytest.mark.parametrize("command", ["check", "scan"])
def test_a_cube_in_a_pocket_is_clear_of_the_box_however_close_the_hulls(command):
    """The pocket is 1/64 deep and the cube 1/256 above its floor: the cube is inside the box's
    hull, outside the box. Only the triangles can say so; the hulls answer conservatively."""
    box, cube = sample("pocket_box.stl"), sample("pocket_cube.stl")
    extra = ("--all-pairs", "--together") if command == "scan" else ()
    for mode in ("auto", "exact"):
        doc = json.loads(gjk(command, box, cube, "--mode", mode, "--format", "json", *extra, code=0).stdout)
        (pair,) = doc["pairs"]
        assert pair["status"] == "clear" and pair["mode"] == "exact" and not pair["conservative"]
        assert pair["distance"] == pytest.approx(1 / 256, abs=1e-12)
        assert pair["certificate"]["kind"] == "distance" and pair["certificate"]["of"] == "parts"
        assert [o["convex"] for o in doc["objects"]] == [False, True]
    hull = json.loads(gjk(command, box, cube, "--mode", "hull", "--format", "json", *extra, code=1).stdout)
    (pair,) = hull["pairs"]
    assert pair["status"] == "collision" and pair["conservative"] and pair["certificate"]["of"] == "hulls"
    # 1/256 apart passes a required clearance of 1/512 and fails one of 1/128, on the parts
    assert json.loads(gjk(command, box, cube, "--clearance", 1 / 512, "--format", "json", *extra,
                          code=0).stdout)["pairs"][0]["status"] == "clear"
    tight = json.loads(gjk(command, box, cube, "--clearance", 1 / 128, "--format", "json", *extra,
                           code=1).stdout)["pairs"][0]
    assert tight["status"] == "clearance" and tight["mode"] == "exact"
