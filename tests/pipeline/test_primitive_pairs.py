"""Curved primitives against non-convex meshes on every path: manifests (scan), URDF links
(--poses, --trajectory), collision-matrix (--audit, --prove). None is answered on a hull unless
--mode hull asks, and then it is marked conservative with a note.

The judge is the construction: a U whose notch holds the primitives with a known gap, a torus
whose hole holds a sphere, and gjkcli.engine.primitive's answer (tested against python-fcl in
tests/engine/test_primitive.py) for the distances.
"""
from __future__ import annotations

import json

import numpy as np
import pytest
import trimesh
from click.testing import CliRunner
from shapely.geometry import Polygon

from gjkcli.cli import main
from gjkcli.pipeline import matrix as matrices
from gjkcli.pipeline import run
from gjkcli.scene import urdf


def u_mesh():
    """A U 2 wide and 2 long, its notch 1 wide (x from -0.5 to 0.5) from y = -0.2 up, 0.6 thick
    (z from -0.3 to 0.3)."""
    outline = Polygon([(-1, -1), (1, -1), (1, 1), (0.5, 1), (0.5, -0.2), (-0.5, -0.2), (-0.5, 1), (-1, 1)])
    t = trimesh.creation.extrude_polygon(outline, 0.6)
    t.apply_translation([0.0, 0.0, -0.3])
    return t


# -- manifests -----------------------------------------------------------------------------------


@pytest.fixture
def torus_cell(tmp_path):
    trimesh.creation.torus(major_radius=50, minor_radius=15, major_sections=64,
                           minor_sections=32).export(tmp_path / "torus.stl")
    (tmp_path / "cell.toml").write_text("""
[[include]]
file = "torus.stl"

[[object]]
name = "ball"
sphere = 20

[[object]]
name = "pin"
capsule = {radius = 10, length = 80}
rotate = [0, 0, 30]

[[object]]
name = "rod"
cylinder = {radius = 12, height = 80}

[[object]]
name = "lodged"
sphere = 5
translate = [50, 0, 0]

[[object]]
name = "grazing"
sphere = 20
translate = [0, 0, 30]
""")
    return tmp_path / "cell.toml"


def test_primitives_in_a_torus_hole_are_clear_on_the_triangles(torus_cell):
    found = run.scan([], run.Options(jobs=1, all_pairs=True), manifest=str(torus_cell))
    with_torus = {p.b if p.a == "torus.stl" else p.a: p for p in found.pairs if "torus.stl" in (p.a, p.b)}
    inradius = 35 * np.cos(np.pi / 64)  # the faceted hole's inner equator
    for name, gap in (("ball", inradius - 20), ("pin", inradius - 10), ("rod", inradius - 12)):
        p = with_torus[name]
        assert p.status.value == "clear" and p.mode == "exact" and not p.conservative, p
        assert p.result.distance == pytest.approx(gap, rel=1e-6)  # trimesh rounds its vertices
    lodged = with_torus["lodged"]  # inside the tube: its volume overlaps the torus's
    assert lodged.status.value == "collision" and lodged.mode == "exact"
    assert lodged.result.depth > 5
    grazing = with_torus["grazing"]  # over the hole: it dips into the hull, clear of the tube
    assert grazing.status.value == "clear" and not grazing.conservative
    # the tube's centre circle (radius 50) is sqrt(50^2 + 30^2) from the ball's centre
    assert grazing.result.distance == pytest.approx(np.hypot(50, 30) - 15 - 20, abs=0.2)


def test_mode_hull_says_conservative_and_why(torus_cell):
    found = run.scan([], run.Options(jobs=1, all_pairs=True, mode="hull"), manifest=str(torus_cell))
    ball = next(p for p in found.pairs if {p.a, p.b} == {"torus.stl", "ball"})
    assert ball.status.value == "collision" and ball.mode == "hull" and ball.conservative
    assert ball.note


def test_cli_json_says_exact_for_every_primitive_pair(torus_cell):
    r = CliRunner().invoke(main, ["scan", "--manifest", str(torus_cell), "--format", "json"],
                           catch_exceptions=False)
    doc = json.loads(r.stdout)
    assert r.exit_code == 1  # the lodged sphere, and the primitives crossing each other
    for p in doc["pairs"]:
        if "torus.stl" in (p["a"], p["b"]):
            assert p["mode"] == "exact" and not p["conservative"], p
    assert {(p["a"], p["b"]) for p in doc["pairs"] if "torus.stl" in (p["a"], p["b"])} \
        == {("torus.stl", "lodged")}


# -- a robot: a U-shaped base, a probe of several primitives sliding in its notch --------------------


PROBE_URDF = """<?xml version="1.0"?>
<robot name="notch">
<link name="base"><collision><geometry><mesh filename="package://parts/u.stl"/></geometry></collision></link>
<link name="carriage"/>
<link name="probe">
  <collision><geometry><sphere radius="0.15"/></geometry></collision>
  <collision><geometry><cylinder radius="0.1" length="0.5"/></geometry></collision>
</link>
<joint name="lift" type="prismatic"><parent link="base"/><child link="carriage"/><origin xyz="0 0.4 0"/>
  <axis xyz="0 0 1"/><limit lower="-1" upper="1" velocity="1"/></joint>
<joint name="slide" type="prismatic"><parent link="carriage"/><child link="probe"/>
  <axis xyz="1 0 0"/><limit lower="LOWER" upper="UPPER" velocity="1"/></joint>
</robot>
"""


@pytest.fixture
def notch(tmp_path):
    """(urdf path, package folder): the probe slides along x over [-0.3, 0.3] (in the notch,
    0.05 from its walls at the ends) unless the limits are widened."""
    folder = tmp_path / "parts"
    folder.mkdir()
    u_mesh().export(folder / "u.stl")

    def write(lower=-0.3, upper=0.3):
        path = tmp_path / f"notch_{lower}_{upper}.urdf"
        path.write_text(PROBE_URDF.replace("LOWER", str(lower)).replace("UPPER", str(upper)))
        return path

    return write, folder


def _base_pairs(doc) -> list:
    return [p for p in doc["pairs"] if "base" in (p["a"], p["b"])]


def test_poses_in_the_notch_are_clear_and_exact(notch, tmp_path):
    write, folder = notch
    path = write()
    poses = tmp_path / "poses.csv"
    poses.write_text("lift,slide\n0,0\n0,-0.3\n0,0.3\n0.9,0.3\n-0.5,-0.2\n")
    r = CliRunner().invoke(main, ["scan", str(path), "--package", f"parts={folder}", "--poses", str(poses),
                                  "--all-pairs", "--format", "json"], catch_exceptions=False)
    doc = json.loads(r.stdout)
    base = _base_pairs(doc)
    # the probe link (two elements, one object) at each pose in the notch, on the triangles;
    # above or below it the boxes are apart: --all-pairs lists the pair with the hulls' distance,
    # a lower bound (the notch is not convex)
    assert sorted(p["waypoint"] for p in base if p["waypoint"] <= 2) == [0, 1, 2]
    for p in base:
        if p["waypoint"] <= 2:
            assert p["status"] == "clear" and p["mode"] == "exact" and not p["conservative"], p
        else:
            assert p["status"] == "clear" and p["mode"] == "hull" and p["conservative"], p
    # at slide = 0.3 the sphere is 0.5 - 0.3 - 0.15 = 0.05 from the notch's wall
    nearest = min(p["distance"] for p in base if p["waypoint"] == 2)
    assert nearest == pytest.approx(0.05, abs=1e-9)


def test_a_motion_through_the_notch_is_clear_and_one_into_an_arm_touches_at_its_t(notch, tmp_path):
    write, folder = notch
    path = write(-0.8, 0.8)
    through = tmp_path / "through.csv"
    through.write_text("lift,slide\n-1,0\n1,0\n")
    r = CliRunner().invoke(main, ["scan", str(path), "--package", f"parts={folder}", "--trajectory",
                                  str(through), "--format", "json"], catch_exceptions=False)
    assert _base_pairs(json.loads(r.stdout)) == []
    into = tmp_path / "into.csv"
    into.write_text("lift,slide\n0,0\n0,0.8\n")
    r = CliRunner().invoke(main, ["scan", str(path), "--package", f"parts={folder}", "--trajectory",
                                  str(into), "--format", "json"], catch_exceptions=False)
    doc = json.loads(r.stdout)
    moving = [p for p in _base_pairs(doc) if "segment" in p]
    assert moving and all(p["mode"] == "exact" for p in moving)
    # the sphere (radius 0.15) meets the wall at x = 0.5 when slide = 0.35: t = 0.35 / 0.8
    first = min(p["t"] for p in moving)
    assert first == pytest.approx(0.35 / 0.8, abs=2e-3)
    assert r.exit_code == 1


def test_collision_matrix_audit_and_prove_keep_a_never_pair_in_the_notch(notch):
    write, folder = notch
    robot = urdf.load(write(), packages=[("parts", str(folder))])
    assert matrices.audit(robot, [("base", "probe")], samples=400, seed=0) == []
    m = matrices.collision_matrix(robot, samples=400, seed=0)
    assert m.reasons[("base", "probe")] == "Never"
    proven, proofs = matrices.prove_never(robot, m, max_boxes=2000)
    assert proofs[("base", "probe")].verdict == "proven"
    # widened into the arms, the audit finds the pair colliding, with the depth of the triangles
    wide = urdf.load(write(-1.5, 1.5), packages=[("parts", str(folder))])
    found = matrices.audit(wide, [("base", "probe")], samples=400, seed=0)
    assert [(c.a, c.b) for c in found] == [("base", "probe")]
    assert found[0].depth is not None and found[0].depth > 0
    assert abs(found[0].pose["slide"]) > 0.35 - 1e-9


# -- a tessellated (STEP) part: the triangles' bound widened by the tessellation error ---------------


def test_a_sphere_beside_a_step_cylinder_is_decided_on_the_bounds(tmp_path):
    """A sphere 0.03 from a STEP cylinder, closer than the cylinder's tessellation error: the
    triangles answer the sphere (before, the pair had no triangles to ask and the run failed),
    and the tessellation's bounds hold the true gap, so the pair is undecided, honestly."""
    stepfiles = pytest.importorskip("stepfiles")
    stepfiles.write_step(tmp_path / "post.step", [("post", stepfiles.cylinder(10.0, 50.0))])
    at = float(15.03 / np.sqrt(2.0))  # 15.03 from the axis: 0.03 from the cylinder
    (tmp_path / "cell.toml").write_text(f"""
[[include]]
file = "post.step"

[[object]]
name = "near"
sphere = 5
translate = [{at!r}, {at!r}, 25]
""")
    found = run.scan([], run.Options(jobs=1, all_pairs=True), manifest=str(tmp_path / "cell.toml"))
    (near,) = found.pairs
    assert near.mode == "exact" and not near.conservative
    assert near.status.value == "undecided"
    assert near.distance_lower <= 0.03 <= near.distance_upper
    assert "no exact solid" in near.note
