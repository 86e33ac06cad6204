"""Regression: parts that are nearly, but not quite, their hulls got the hulls' verdicts.

A box with a shallow pocket and a cube resting in it just above the floor, a plate with a shallow
groove and a bar lying in it: the cube and the bar are inside the other part's hull, so the hulls
collide, while the parts are clear (or touch, when flush). Every answer of `gjk check` and
`gjk scan` in `--mode auto` and `--mode exact` must be the parts' truth, known by construction;
`--mode hull` must say that its answer is the hulls' (conservative). Every certificate of a
collision or touching answer, and of a clear one, is checked against the STL files' own triangles
with gjkcli.engine.certify.verify_part_certificate (NumPy by brute force, nothing of the engine).

The parts are cut with manifold3d through trimesh (watertight, outward). manifold3d rounds its
output to float32, so the part resting on a floor is placed from the floor's height as cut, and
the truth is that of the coordinates in the file: ASCII STL keeps float64 exactly (the gap is the
one built), binary STL rounds to float32 (the gap is the difference of the rounded heights).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from gjkcli.cli import main
from gjkcli.engine.certify import verify_part_certificate
from gjkcli.tolerances import DEFAULT

trimesh = pytest.importorskip("trimesh")
pytest.importorskip("manifold3d", reason="manifold3d cuts the pockets and grooves (a declared test dependency)")

COMMANDS = ("check", "scan")
MODES = ("auto", "exact")  # the modes that answer for the parts
FORMATS = ("stl_ascii", "stl")  # float64 coordinates, float32 coordinates


# -- scenes ---------------------------------------------------------------------------------------


@dataclass
class Scene:
    """Two parts (first, second) and the heights whose difference is the parts' distance: the
    floor of the first and the bottom of the second."""

    parts: dict
    floor: float
    bottom: float

    def truth(self, file_type: str) -> float:
        """The distance of the parts as the file stores them."""
        if file_type == "stl":
            return float(np.float32(self.bottom)) - float(np.float32(self.floor))
        return self.bottom - self.floor

    def moved(self, T: np.ndarray) -> Scene:
        parts = {name: mesh.copy() for name, mesh in self.parts.items()}
        for mesh in parts.values():
            mesh.apply_transform(T)
        return Scene(parts, self.floor, self.bottom)


def box(lo, hi):
    lo, hi = np.asarray(lo, float), np.asarray(hi, float)
    return trimesh.creation.box(extents=hi - lo, transform=trimesh.transformations.translation_matrix((lo + hi) / 2))


def level(mesh, z: float) -> float:
    """The height of the mesh's vertices nearest z: where the cut really is."""
    zs = np.asarray(mesh.vertices)[:, 2]
    found = float(zs[np.argmin(np.abs(zs - z))])
    assert abs(found - z) <= 1e-6 * max(1.0, abs(z)), (found, z)
    return found


def pocket_scene(scale: float, gap: float) -> Scene:
    """A 10 x 10 x 10 box centred at the origin with a 4 x 4 pocket 0.02 deep in its top face
    (floor at z = 4.98), and a unit cube centred in the pocket `gap` above its floor (x scale)."""
    s = scale
    body = box([-5 * s, -5 * s, -5 * s], [5 * s, 5 * s, 5 * s]).difference(
        box([-2 * s, -2 * s, (5 - 0.02) * s], [2 * s, 2 * s, 6 * s]), engine="manifold")
    assert body.is_watertight and body.is_winding_consistent and body.volume > 0
    floor = level(body, (5 - 0.02) * s)
    bottom = floor + gap * s
    cube = box([-0.5 * s, -0.5 * s, bottom], [0.5 * s, 0.5 * s, bottom + s])
    return Scene({"box": body, "cube": cube}, floor, bottom)


def groove_scene(gap: float) -> Scene:
    """A 100 x 100 x 10 plate (top at z = 0) with a groove 10 wide and 0.1 deep along y, the full
    length, and a 5 x 80 x 5 bar lying in it `gap` above the groove's floor (2.5 from its walls)."""
    plate = box([-50, -50, -10], [50, 50, 0]).difference(box([-5, -60, -0.1], [5, 60, 1]), engine="manifold")
    assert plate.is_watertight and plate.is_winding_consistent and plate.volume > 0
    floor = level(plate, -0.1)
    bottom = floor + gap
    bar = box([-2.5, -40, bottom], [2.5, 40, bottom + 5])
    return Scene({"plate": plate, "bar": bar}, floor, bottom)


# -- running gjk and checking its answer ----------------------------------------------------------


def write(tmp_path: Path, scene: Scene, file_type: str) -> dict:
    paths = {}
    for name, mesh in scene.parts.items():
        path = tmp_path / f"{name}.stl"
        mesh.export(path, file_type=file_type)
        paths[name] = path
    return paths


def run(paths: dict, command: str, mode: str, *options) -> tuple[dict, int]:
    """`gjk check A B` or `gjk scan A B --all-pairs`, JSON; the one pair and the exit code."""
    first, second = paths.values()
    extra = ["--all-pairs", "--together"] if command == "scan" else []
    result = CliRunner(catch_exceptions=False).invoke(
        main, [command, str(first), str(second), "--mode", mode, "--format", "json", *extra, *map(str, options)])
    assert result.exit_code in (0, 1), (result.exit_code, result.output)
    pairs = json.loads(result.stdout)["pairs"]
    assert len(pairs) == 1, pairs
    return pairs[0], result.exit_code


def triangles(paths: dict) -> dict:
    """Each part's triangles as its file stores them, in the file's order."""
    out = {}
    for name, path in paths.items():
        mesh = trimesh.load(path, file_type="stl", process=False, force="mesh")
        out[name] = (np.asarray(mesh.vertices, dtype=np.float64), np.asarray(mesh.faces, dtype=np.int64))
    return out


def part_of(name: str, paths: dict) -> str:
    """The scene's part a pair's object name stands for (a file's name or stem)."""
    found = [k for k, p in paths.items() if name in (k, p.name, p.stem, str(p))]
    assert len(found) == 1, (name, list(paths))
    return found[0]


def pair_size(meshes: dict) -> float:
    return max(float(np.linalg.norm(np.ptp(v, axis=0))) for v, _ in meshes.values())


def assert_certified(pair: dict, paths: dict) -> None:
    """The pair's certificate holds for the parts' triangles as the files store them."""
    certificate = pair["certificate"]
    assert isinstance(certificate, dict), f"no certificate: {pair}"
    meshes = triangles(paths)
    (va, fa), (vb, fb) = meshes[part_of(pair["a"], paths)], meshes[part_of(pair["b"], paths)]
    band = DEFAULT.touching_rel * pair_size(meshes)
    why = verify_part_certificate(va, fa, vb, fb, certificate, band)
    assert why is None, f"{pair['status']} certificate {certificate} refused: {why}"


def assert_distance(pair: dict, truth: float, paths: dict) -> None:
    """Within 1e-9 of the truth, relative, or 1e-9 x the pair size, absolute."""
    size = pair_size(triangles(paths))
    d = pair["distance"]
    assert d is not None and abs(d - truth) <= 1e-9 * max(abs(truth), size), (d, truth)


def assert_parts_answer(pair: dict, code: int, status: str, paths: dict, truth: float | None = None) -> None:
    """An answer for the parts (not conservative, not the hulls' mode) that is the truth."""
    assert pair["status"] == status, pair
    assert pair["conservative"] is False, pair
    assert pair["mode"] != "hull", pair
    assert_certified(pair, paths)
    if status == "clear":
        assert code == 0
        assert_distance(pair, truth, paths)


def assert_hulls_answer(pair: dict) -> None:
    """`--mode hull` on parts that are not their hulls: the hulls' answer, said to be conservative.
    The hulls here come closer than the parts, so it is never `clear`."""
    assert pair["mode"] == "hull", pair
    assert pair["conservative"] is True, pair
    assert pair["status"] != "clear", pair


# -- the cases ------------------------------------------------------------------------------------


@pytest.mark.parametrize("file_type", FORMATS)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("command", COMMANDS)
def test_a_cube_just_above_the_pockets_floor_is_clear(tmp_path, command, mode, file_type):
    """Inside the box's hull, in the pocket, 0.005 above the floor: clear, distance 0.005."""
    scene = pocket_scene(1.0, 0.005)
    paths = write(tmp_path, scene, file_type)
    pair, code = run(paths, command, mode)
    truth = scene.truth(file_type)
    assert abs(truth - 0.005) < 1e-6
    assert_parts_answer(pair, code, "clear", paths, truth)


@pytest.mark.parametrize("file_type", FORMATS)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("scale", [1000.0, 0.001], ids=["x1000", "x0.001"])
def test_a_cube_flush_on_the_pockets_floor_touches(tmp_path, command, mode, file_type, scale):
    scene = pocket_scene(scale, 0.0)
    assert scene.truth(file_type) == 0.0
    paths = write(tmp_path, scene, file_type)
    pair, code = run(paths, command, mode)
    assert_parts_answer(pair, code, "touching", paths)


@pytest.mark.parametrize("file_type", FORMATS)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("command", COMMANDS)
def test_a_bar_just_above_the_grooves_floor_is_clear(tmp_path, command, mode, file_type):
    scene = groove_scene(0.01)
    paths = write(tmp_path, scene, file_type)
    pair, code = run(paths, command, mode)
    truth = scene.truth(file_type)
    assert abs(truth - 0.01) < 1e-6
    assert_parts_answer(pair, code, "clear", paths, truth)


@pytest.mark.parametrize("file_type", FORMATS)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("command", COMMANDS)
def test_a_required_clearance_is_judged_on_the_parts(tmp_path, command, mode, file_type):
    """The cube 0.05 above the floor, 0.04 required: the parts are clear (0.05 > 0.04), although
    the hulls are only 0.03 apart, closer than required."""
    scene = pocket_scene(1.0, 0.05)
    paths = write(tmp_path, scene, file_type)
    pair, code = run(paths, command, mode, "--clearance", 0.04)
    assert_parts_answer(pair, code, "clear", paths, scene.truth(file_type))


HULL_CASES = {
    "pocket": (lambda: pocket_scene(1.0, 0.005), ()),
    "pocket x1000, flush": (lambda: pocket_scene(1000.0, 0.0), ()),
    "pocket x0.001, flush": (lambda: pocket_scene(0.001, 0.0), ()),
    "groove": (lambda: groove_scene(0.01), ()),
    "pocket, clearance": (lambda: pocket_scene(1.0, 0.05), ("--clearance", 0.04)),
}


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("case", sorted(HULL_CASES))
def test_hull_mode_says_its_answer_is_conservative(tmp_path, command, case):
    make, options = HULL_CASES[case]
    paths = write(tmp_path, make(), "stl_ascii")
    pair, _ = run(paths, command, "hull", *options)
    assert_hulls_answer(pair)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("gap,status", [(0.005, "clear"), (0.0, "touching")], ids=["clear", "flush"])
def test_the_same_truth_after_a_rigid_motion_far_from_the_origin(tmp_path, seed, gap, status):
    """The pocket scene turned by a random rotation and moved to (1e4, -2e4, 3e4), written with
    float64 coordinates (float32 at 3e4 rounds by 2e-3, more than the gap): the same verdicts."""
    rng = np.random.default_rng([seed, 31])
    q, r = np.linalg.qr(rng.normal(size=(3, 3)))
    q = q * np.sign(np.diag(r))
    if np.linalg.det(q) < 0:
        q[:, 0] = -q[:, 0]
    T = np.eye(4)
    T[:3, :3], T[:3, 3] = q, [1e4, -2e4, 3e4]
    scene = pocket_scene(1.0, gap).moved(T)
    paths = write(tmp_path, scene, "stl_ascii")
    for command in COMMANDS:
        for mode in MODES:
            pair, code = run(paths, command, mode)
            assert_parts_answer(pair, code, status, paths, gap if status == "clear" else None)
        assert_hulls_answer(run(paths, command, "hull")[0])
