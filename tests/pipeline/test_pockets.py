"""Parts that are nearly, but not quite, their hulls: a box with a shallow pocket, a plate with a
shallow groove, something resting in it just above the floor. The truth is known by construction;
the hulls collide; every command and every mode that claims exactness must say the truth, and
`--mode hull` must say its answer is the hulls' (conservative).

Built with manifold3d through trimesh (watertight, outward), written as binary STL (float32), so
the gaps below are chosen to survive float32 rounding at each scale.
"""
from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from gjkcli.cli import main

trimesh = pytest.importorskip("trimesh")
pytest.importorskip("manifold3d", reason="manifold3d builds the pocketed parts (a test dependency)")


def box(lo, hi):
    lo, hi = np.asarray(lo, float), np.asarray(hi, float)
    return trimesh.creation.box(extents=hi - lo, transform=trimesh.transformations.translation_matrix((lo + hi) / 2))


def pocket_scene(scale: float, gap: float):
    """A 10 x 10 x 10 box (x scale) with a 4 x 4 pocket 0.02 deep in its top face, and a unit
    cube in the pocket `gap` above its floor."""
    s = scale
    body = box([-5 * s, -5 * s, -5 * s], [5 * s, 5 * s, 5 * s]).difference(
        box([-2 * s, -2 * s, (5 - 0.02) * s], [2 * s, 2 * s, 6 * s]), engine="manifold")
    floor = (5 - 0.02) * s
    cube = box([-0.5 * s, -0.5 * s, floor + gap], [0.5 * s, 0.5 * s, floor + gap + s])
    return body, cube


def groove_scene(gap: float):
    """A 100 x 100 x 10 plate with a groove 10 wide and 0.1 deep along y, and a 5 x 80 x 5 bar
    lying in it `gap` above the groove's floor."""
    plate = box([-50, -50, -10], [50, 50, 0]).difference(box([-5, -60, -0.1], [5, 60, 1]), engine="manifold")
    bar = box([-2.5, -40, -0.1 + gap], [2.5, 40, 4.9 + gap])
    return plate, bar


def run(tmp_path, a, b, command, mode, *options):
    pa, pb = tmp_path / "a.stl", tmp_path / "b.stl"
    a.export(pa)
    b.export(pb)
    extra = ("--all-pairs",) if command == "scan" else ()
    result = CliRunner(catch_exceptions=False).invoke(
        main, [command, str(pa), str(pb), "--mode", mode, "--format", "json", *extra, *map(str, options)])
    assert result.exit_code in (0, 1), result.stderr
    (pair,) = json.loads(result.stdout)["pairs"]
    return pair, result.exit_code


def float32_gap(lower_top: float, upper_bottom: float) -> float:
    return float(np.float32(upper_bottom)) - float(np.float32(lower_top))


CASES = [  # (name, scene, the truth, the true gap)
    ("pocket", lambda: pocket_scene(1.0, 0.005), "clear", float32_gap(4.98, 4.985)),
    ("pocket x 1000, flush", lambda: pocket_scene(1000.0, 0.0), "touching", 0.0),
    ("pocket / 1000, flush", lambda: pocket_scene(0.001, 0.0), "touching", 0.0),
    ("groove", lambda: groove_scene(0.01), "clear", float32_gap(-0.1, -0.09)),
]


@pytest.mark.parametrize("command", ["check", "scan"])
@pytest.mark.parametrize("mode", ["auto", "exact"])
@pytest.mark.parametrize("name,scene,truth,gap", CASES, ids=[c[0] for c in CASES])
def test_the_parts_answer_not_their_hulls(tmp_path, command, mode, name, scene, truth, gap):
    a, b = scene()
    pair, code = run(tmp_path, a, b, command, mode)
    assert pair["status"] == truth and pair["mode"] == "exact" and not pair["conservative"]
    assert code == 0
    if truth == "clear":
        assert pair["distance"] == pytest.approx(gap, rel=1e-6)
        assert pair["certificate"] == {"kind": "distance", "lower": pair["distance"], "of": "parts"}


@pytest.mark.parametrize("command", ["check", "scan"])
@pytest.mark.parametrize("name,scene,truth,gap", CASES, ids=[c[0] for c in CASES])
def test_hull_mode_says_its_answer_is_the_hulls(tmp_path, command, name, scene, truth, gap):
    a, b = scene()
    pair, code = run(tmp_path, a, b, command, "hull")
    assert pair["mode"] == "hull" and pair["conservative"] and pair["status"] == "collision"
    assert pair["certificate"]["of"] == "hulls" and "not convex" in pair["note"] and code == 1


@pytest.mark.parametrize("command", ["check", "scan"])
def test_a_required_clearance_is_judged_on_the_parts(tmp_path, command):
    """The cube 0.05 above the pocket's floor, 0.04 required: the hulls are 0.03 apart (closer than
    required), the parts 0.05 (clear)."""
    a, b = pocket_scene(1.0, 0.05)
    for mode in ("auto", "exact"):
        pair, code = run(tmp_path, a, b, command, mode, "--clearance", 0.04)
        assert pair["status"] == "clear" and code == 0
        assert pair["distance"] == pytest.approx(float32_gap(4.98, 5.03), rel=1e-6)
    hull, code = run(tmp_path, a, b, command, "hull", "--clearance", 0.04)
    assert hull["conservative"] and hull["status"] != "clear" and code == 1


@pytest.mark.parametrize("seed", [0, 1])
def test_the_same_truth_after_a_rigid_motion_far_from_the_origin(tmp_path, seed):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal(4)
    T = trimesh.transformations.quaternion_matrix(q / np.linalg.norm(q))
    T[:3, 3] = [1e4, -2e4, 3e4]
    a, b = pocket_scene(1.0, 0.005)
    a.apply_transform(T)
    b.apply_transform(T)
    for command in ("check", "scan"):
        pair, code = run(tmp_path, a, b, command, "auto")
        # float32 at 3e4 rounds to 2e-3: the gap moves by that much, the verdict does not
        assert pair["status"] == "clear" and code == 0 and pair["distance"] == pytest.approx(0.005, abs=5e-3)
        assert pair["mode"] == "exact"
