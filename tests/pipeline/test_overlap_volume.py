"""`overlap_volume` on the findings of both commands: the parts' common volume for every listed
collision, judged by arithmetic (boxes) and by trimesh's own boolean intersection; null with a
reason where a part bounds no volume; JSON and the table show it."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import trimesh
from click.testing import CliRunner

from gjkcli.cli import main
from gjkcli.engine.results import Status
from gjkcli.pipeline import run as pipeline

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


def stl(path: Path, mesh: trimesh.Trimesh) -> str:
    mesh.export(path)
    return str(path)


def box(lo, hi) -> trimesh.Trimesh:
    lo, hi = np.asarray(lo, float), np.asarray(hi, float)
    m = trimesh.creation.box(extents=hi - lo)
    m.apply_translation(0.5 * (lo + hi))
    return m


def test_check_of_two_boxes_reports_their_common_volume(tmp_path):
    a = stl(tmp_path / "a.stl", box([0, 0, 0], [2, 2, 2]))
    b = stl(tmp_path / "b.stl", box([1.5, 0.5, -1], [3, 1.25, 0.5]))
    found = pipeline.check(a, b)
    (pair,) = found.pairs
    assert pair.status is Status.COLLISION
    assert pair.overlap_volume == pytest.approx(0.5 * 0.75 * 0.5, rel=1e-9)
    assert pair.overlap_reason is None
    V, F = pair.overlap_mesh
    assert abs(trimesh.Trimesh(V, F).volume) == pytest.approx(pair.overlap_volume, rel=1e-9)
    # the findings hand the parts' triangles to pictures
    Va, Fa = found.triangles(pair.a)
    assert Va.shape[1] == 3 and len(Fa) == 12
    assert found.triangles("no such object") is None


def test_scan_of_the_samples_agrees_with_trimesh_boolean():
    found = pipeline.scan([str(SAMPLES)], pipeline.Options(jobs=1, recurse=False))
    collisions = [p for p in found.pairs if p.status is Status.COLLISION]
    assert len(collisions) >= 10
    for p in collisions:
        if str(p.file_a).endswith(".urdf") or str(p.file_b).endswith(".urdf"):
            continue  # samples/arm.urdf's links: trimesh loads no URDF (their volumes: test_robot_links)
        a, b = trimesh.load_mesh(p.file_a), trimesh.load_mesh(p.file_b)
        judge = trimesh.boolean.intersection([a, b], engine="manifold").volume
        assert p.overlap_volume == pytest.approx(judge, rel=1e-5, abs=1e-9), (p.a, p.b)
    # only collisions carry a volume
    assert all(p.overlap_volume is None and p.overlap_reason is None
               for p in found.pairs if p.status is not Status.COLLISION)


def test_hulls_collide_parts_do_not_volume_zero():
    """In hull mode the pocketed box's hull holds the cube: a (conservative) collision whose
    parts share no volume at all, which the volume says plainly."""
    found = pipeline.check(str(SAMPLES / "pocket_box.stl"), str(SAMPLES / "pocket_cube.stl"),
                           pipeline.Options(mode="hull"))
    (pair,) = found.pairs
    assert pair.status is Status.COLLISION and pair.conservative
    assert pair.overlap_volume == 0.0


def test_an_open_part_gets_a_reason_in_json_and_table(tmp_path):
    lid = box([0, 0, 0], [2, 2, 2])
    lid.update_faces(np.arange(len(lid.faces)) >= 2)  # one side of the box removed
    a = stl(tmp_path / "open.stl", lid)
    b = stl(tmp_path / "b.stl", box([1, 1, 1], [3, 3, 3]))
    (pair,) = pipeline.check(a, b, pipeline.Options(mode="hull")).pairs
    assert pair.status is Status.COLLISION
    assert pair.overlap_volume is None and "open.stl" in pair.overlap_reason
    runner = CliRunner()
    out = runner.invoke(main, ["check", a, b, "--mode", "hull", "--format", "json"], catch_exceptions=False)
    doc = json.loads(out.output)
    assert doc["pairs"][0]["overlap_volume"] is None
    assert "closed" in doc["pairs"][0]["overlap_reason"]
    out = runner.invoke(main, ["check", a, b, "--mode", "hull"], catch_exceptions=False)
    assert "no volume" in out.output


def test_a_curved_primitive_has_no_triangles_to_intersect(tmp_path):
    m = tmp_path / "m.toml"
    m.write_text('[[object]]\nname = "block"\nbox = [2, 2, 2]\n\n[[object]]\nname = "ball"\n'
                 'sphere = 0.5\ntranslate = [1.4, 0, 0]\n\n[[object]]\nname = "lid"\nbox = [1, 1, 1]\n'
                 'translate = [0, 0, 1.25]\n')
    found = pipeline.scan([], pipeline.Options(jobs=1), manifest=m)
    by = {frozenset((p.a, p.b)): p for p in found.pairs}
    ball = by[frozenset(("block", "ball"))]
    assert ball.overlap_volume is None and "ball" in ball.overlap_reason
    lid = by[frozenset(("block", "lid"))]  # two boxes: both have triangles
    assert lid.overlap_volume == pytest.approx(1 * 1 * 0.25, rel=1e-9)


def test_json_and_table_show_the_volume():
    runner = CliRunner()
    args = ["check", str(SAMPLES / "collide_a.stl"), str(SAMPLES / "collide_b.stl")]
    doc = json.loads(runner.invoke(main, args + ["--format", "json"]).output)
    pair = doc["pairs"][0]
    a, b = (trimesh.load_mesh(SAMPLES / n) for n in ("collide_a.stl", "collide_b.stl"))
    assert pair["overlap_volume"] == pytest.approx(
        trimesh.boolean.intersection([a, b], engine="manifold").volume, rel=1e-5)
    table = runner.invoke(main, args).output
    assert "overlap" in table and f"{pair['overlap_volume']:.9g}"[:6] in table


def test_box_primitives_in_exact_mode(tmp_path):
    """A manifest's boxes have triangles (their 12), for the triangle test as for the volume."""
    m = tmp_path / "m.toml"
    m.write_text('[[object]]\nname = "block"\nbox = [2, 2, 2]\n\n[[object]]\nname = "lid"\n'
                 'box = [1, 1, 1]\ntranslate = [0, 0, 1.25]\nrotate = [0, 0, 30]\n')
    (pair,) = pipeline.scan([], pipeline.Options(mode="exact", jobs=1), manifest=m).pairs
    assert pair.mode == "exact" and pair.status is Status.COLLISION
    assert pair.overlap_volume == pytest.approx(0.25, rel=1e-9)
