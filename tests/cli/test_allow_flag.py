"""`gjk scan --allow A,B[:REASON]` and `--clearance` as one-off flags beside a manifest: a pair
allowed by a flag reads allowed with its reason, globs select as the manifest's [[allow]] does,
flags add to the manifest's rules, a bad value is an error line and exit 2."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import trimesh
from click.testing import CliRunner

from gjkcli.cli import main

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
A, B, T = (str(SAMPLES / n) for n in ("collide_a.stl", "collide_b.stl", "touch_a.stl"))


def scan(*args):
    """The files as one world (--together): the pairs across them are the ones allowed."""
    r = CliRunner(catch_exceptions=False).invoke(main, ["scan", *map(str, args), "--format", "json",
                                                        "--show-allowed", "--together"])
    return r.exit_code, (json.loads(r.stdout) if r.stdout else None), r.stderr


def by_pair(doc) -> dict:
    return {frozenset((p["a"], p["b"])): p for p in doc["pairs"]}


def test_a_pair_allowed_by_a_flag_reads_allowed_with_its_reason():
    code, doc, _ = scan(A, B, "--allow", "collide_a.stl,collide_b.stl:press fit")
    pair = by_pair(doc)[frozenset(("collide_a.stl", "collide_b.stl"))]
    # the verdict is the geometry's (the samples overlap by 0.25); only its weight changed
    assert pair["status"] == "collision" and pair["depth"] == pytest.approx(0.25, abs=1e-9)
    assert pair["allowed"] and pair["reason"] == "press fit"
    assert code == 0 and doc["summary"]["allowed"] == 1
    # without the flag the same pair fails
    code, doc, _ = scan(A, B)
    assert code == 1 and not doc["pairs"][0]["allowed"]


def test_globs_select_every_matching_pair_and_the_default_reason_names_the_flag():
    code, doc, _ = scan(A, B, T, "--allow", "collide_*,touch_a.stl")
    pairs = by_pair(doc)
    allowed = {k for k, p in pairs.items() if p["allowed"]}
    assert allowed == {frozenset(("collide_a.stl", "touch_a.stl")),
                       frozenset(("collide_b.stl", "touch_a.stl"))}
    assert {pairs[k]["reason"] for k in allowed} == {"--allow collide_*,touch_a.stl"}
    assert code == 1  # (collide_a, collide_b) still fails
    code, doc, _ = scan(A, B, T, "--allow", "collide_*,touch_a.stl", "--allow", "collide_a*,collide_b*:fit")
    assert code == 0 and all(p["allowed"] for p in doc["pairs"] if p["violation"])


def test_flags_add_to_the_manifest_whose_rules_come_first(tmp_path):
    manifest = tmp_path / "gjk.toml"
    manifest.write_text("".join(f'[[include]]\nfile = {json.dumps(f)}\n' for f in (A, B, T)) +
                        '[[allow]]\na = "collide_a.stl"\nb = "collide_b.stl"\nreason = "from the manifest"\n')
    code, doc, _ = scan("--manifest", manifest, "--allow", "collide_*,collide_*:from the flag",
                        "--allow", "touch_a.stl,collide_*:touching by design")
    pairs = by_pair(doc)
    assert pairs[frozenset(("collide_a.stl", "collide_b.stl"))]["reason"] == "from the manifest"
    assert pairs[frozenset(("collide_a.stl", "touch_a.stl"))]["reason"] == "touching by design"
    assert code == 0


def test_a_colon_in_a_name_is_written_in_brackets(tmp_path):
    for name, x in (("left.glb", 0.0), ("right.glb", 0.5)):
        scene = trimesh.Scene()
        scene.add_geometry(trimesh.creation.box([1, 1, 1]), node_name="block",
                           transform=trimesh.transformations.translation_matrix([x, 0, 0]))
        scene.add_geometry(trimesh.creation.box([1, 1, 1]), node_name="far",
                           transform=trimesh.transformations.translation_matrix([x, 10 + 5 * x, 0]))
        scene.export(tmp_path / name)
    left, right = tmp_path / "left.glb", tmp_path / "right.glb"
    code, doc, _ = scan(left, right)
    assert code == 1 and [(p["a"], p["b"]) for p in doc["pairs"] if p["violation"]] in (
        [("left.glb:block", "right.glb:block")], [("right.glb:block", "left.glb:block")])
    code, doc, _ = scan(left, right, "--allow", "left.glb[:]block,right.glb[:]b*:a fit, with a comma")
    pair = next(p for p in doc["pairs"] if p["violation"])
    assert code == 0 and pair["reason"] == "a fit, with a comma"


@pytest.mark.parametrize("value", ["collide_a.stl", ",collide_b.stl", "collide_a.stl,", "a,b,c"])
def test_a_malformed_value_is_one_error_line_and_exit_2(value):
    code, doc, err = scan(A, B, "--allow", value)
    assert code == 2 and doc is None
    errors = [line for line in err.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and "--allow" in errors[0] and "A,B:REASON" in errors[0]
    assert "Traceback" not in err


def test_a_side_that_matches_nothing_is_one_line_naming_the_flag():
    code, doc, err = scan(A, B, "--allow", "bolt*,collide_b.stl")
    assert code == 2
    assert err.strip().splitlines() == ["gjk: error: --allow: 'bolt*,collide_b.stl': 'bolt*' is neither "
                                        "a group nor a glob matching an object"]


def test_clearance_flag_takes_the_place_of_the_manifest_s(tmp_path):
    clear_a, clear_b = (str(SAMPLES / n) for n in ("clear_a.stl", "clear_b.stl"))  # 0.5 apart
    manifest = tmp_path / "gjk.toml"
    manifest.write_text("clearance = 1.0\n" + "".join(f'[[include]]\nfile = {json.dumps(f)}\n'
                                                    for f in (clear_a, clear_b)))
    code, doc, _ = scan("--manifest", manifest)
    assert code == 1 and doc["pairs"][0]["status"] == "clearance"
    for clearance, expected in ((0.49, 0), (0.51, 1)):  # just under and over the gap
        code, doc, _ = scan("--manifest", manifest, "--clearance", clearance)
        assert code == expected, (clearance, doc["pairs"])


def test_allow_on_drawings_is_refused_with_a_reason():
    dxf = SAMPLES / "flat" / "nest.dxf"
    code, _, err = scan(dxf, "--allow", "a,b")
    assert code == 2 and "--allow applies to 3D scans" in err


def test_a_recorded_pair_allowed_by_a_flag_in_either_order_is_not_gone(tmp_path):
    baseline = tmp_path / "baseline.json"
    r = CliRunner(catch_exceptions=False).invoke(main, ["scan", A, B, "--write-baseline", str(baseline)])
    assert r.exit_code == 0
    for allow in ("collide_a.stl,collide_b.stl:fit", "collide_b.stl,collide_a.stl:fit"):
        code, doc, _ = scan(A, B, "--baseline", baseline, "--allow", allow)
        assert code == 0 and doc["gone"] == [] and doc["pairs"][0]["allowed"], allow
