"""`gjk check` and `gjk scan` at a user's touching band (issue 21): pipes through walls and rods
pushed into a face, in --mode exact (the triangles) and auto (the hulls where they are the
parts). The truth is the construction's; every certificate is checked against the files' own
triangles with gjkcli.engine.certify.verify_part_certificate.

Regression: a 256-facet pipe through a wall read `touching`, exit 0, at --tolerance 2 and 5.
"""
from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from gjkcli.cli import main
from gjkcli.engine.certify import verify_part_certificate

trimesh = pytest.importorskip("trimesh")

MODES = ("exact", "auto")


def gjk(*args) -> tuple[int, dict]:
    result = CliRunner(catch_exceptions=False).invoke(main, [str(a) for a in args] + ["--format", "json"])
    assert result.exit_code in (0, 1), (result.exit_code, result.stdout, result.stderr)
    return result.exit_code, json.loads(result.stdout)


def wall() -> trimesh.Trimesh:
    return trimesh.creation.box([200.0, 2000.0, 3000.0])  # 200 thick along x


def pipe(sections: int, y: float = 0.0) -> trimesh.Trimesh:
    """Radius 50, 1000 long along x, through the wall."""
    p = trimesh.creation.cylinder(radius=50.0, height=1000.0, sections=sections)
    p.apply_transform(trimesh.transformations.rotation_matrix(np.pi / 2, [0, 1, 0]))
    p.apply_translation([0.0, y, 0.0])
    return p


def rod(depth: float) -> trimesh.Trimesh:
    """Radius 10 along x, its flat end `depth` into the wall's face at x = 100."""
    r = trimesh.creation.cylinder(radius=10.0, height=100.0, sections=64)
    r.apply_transform(trimesh.transformations.rotation_matrix(np.pi / 2, [0, 1, 0]))
    r.apply_translation([150.0 - depth, 0.0, 0.0])
    return r


def save(mesh: trimesh.Trimesh, path) -> str:
    """ASCII STL: the coordinates keep their float64 digits, so the depth is the one built."""
    path.write_text(trimesh.exchange.stl.export_stl_ascii(mesh))
    return str(path)


def certified(a: trimesh.Trimesh, b: trimesh.Trimesh, pair: dict) -> None:
    why = verify_part_certificate(a.vertices, a.faces, b.vertices, b.faces, pair["certificate"],
                                  pair["tolerance"])
    assert why is None, why


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("sections,band", [(128, 2.0), (256, 5.0), (512, 10.0)])
def test_check_two_pipes_in_one_part_through_a_wall_collide(tmp_path, mode, sections, band):
    a, b = wall(), trimesh.util.concatenate([pipe(sections), pipe(sections, 400.0)])
    code, out = gjk("check", save(a, tmp_path / "wall.stl"), save(b, tmp_path / "pipes.stl"),
                    "--tolerance", band, "--mode", mode)
    (pair,) = out["pairs"]
    assert (code, pair["status"]) == (1, "collision"), pair
    assert pair["depth"] > band
    certified(a, b, pair)


@pytest.mark.parametrize("mode", MODES)
def test_check_one_pipe_through_a_wall_collides(tmp_path, mode):
    """One pipe is convex: auto answers on the hulls (EPA's depth), exact on the triangles."""
    a, b = wall(), pipe(256)
    code, out = gjk("check", save(a, tmp_path / "wall.stl"), save(b, tmp_path / "pipe.stl"),
                    "--tolerance", 5, "--mode", mode)
    (pair,) = out["pairs"]
    assert (code, pair["status"]) == (1, "collision"), pair
    assert pair["depth"] > 5
    certified(a, b, pair)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("band", [0.01, 2.0])
@pytest.mark.parametrize("share", [0.9, 1.1])
def test_check_a_rod_touches_under_the_band_and_collides_over(tmp_path, mode, band, share):
    a, b = wall(), rod(share * band)
    code, out = gjk("check", save(a, tmp_path / "wall.stl"), save(b, tmp_path / "rod.stl"),
                    "--tolerance", band, "--mode", mode)
    (pair,) = out["pairs"]
    if share < 1:
        assert (code, pair["status"]) == (0, "touching"), pair
    else:
        assert (code, pair["status"]) == (1, "collision"), pair
        assert pair["depth"] == pytest.approx(share * band, rel=1e-6)
    certified(a, b, pair)


@pytest.mark.parametrize("mode", MODES)
def test_scan_a_wall_and_a_part_of_two_pipes(tmp_path, mode):
    scene = trimesh.Scene()
    scene.add_geometry(wall(), node_name="wall", geom_name="wall")
    scene.add_geometry(trimesh.util.concatenate([pipe(256), pipe(256, 400.0)]), node_name="pipes",
                       geom_name="pipes")
    path = tmp_path / "room.glb"
    scene.export(path)
    code, out = gjk("scan", path, "--tolerance", 5, "--mode", mode)
    (pair,) = out["pairs"]
    assert (code, pair["status"]) == (1, "collision"), pair
    assert pair["depth"] > 5


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("share", [0.9, 1.1])
def test_scan_split_bodies_rod_under_and_over_the_band(tmp_path, mode, share):
    """One file, the wall and a rod as two bodies of it (--split-bodies)."""
    path = save(trimesh.util.concatenate([wall(), rod(share * 2.0)]), tmp_path / "both.stl")
    code, out = gjk("scan", path, "--split-bodies", "--tolerance", 2, "--mode", mode, "--all-pairs")
    (pair,) = out["pairs"]
    assert pair["status"] == ("touching" if share < 1 else "collision"), pair
    assert code == (0 if share < 1 else 1)
