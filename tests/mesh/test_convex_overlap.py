"""The common solid of two convex parts by the compiled cut (`gjkcli.mesh.overlap.convex_overlap`,
gjkcli/engine/csrc/convexcut.c) against answers that are not its own: box arithmetic (here on
degenerate placements; random boxes in test_overlap.py), spherical caps by formula, manifold3d's
boolean (`overlap`) on random hulls, and the scan's JSON with the cut and with the boolean."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest
import trimesh
from scipy.spatial import ConvexHull

from gjkcli.mesh.overlap import convex_overlap, overlap


def box(lo, hi) -> trimesh.Trimesh:
    lo, hi = np.asarray(lo, float), np.asarray(hi, float)
    m = trimesh.creation.box(extents=hi - lo)
    m.apply_translation(0.5 * (lo + hi))
    return m


def hull(points) -> tuple:
    """Outward triangles of the points' hull (qhull), as a mesh file would hold them."""
    h = ConvexHull(points)
    faces = h.simplices.copy()
    centre = points[h.vertices].mean(axis=0)
    for f in faces:  # qhull's simplices are not wound: turn each outwards
        a, b, c = points[f]
        if np.dot(np.cross(b - a, c - a), a - centre) < 0:
            f[[1, 2]] = f[[2, 1]]
    return points, faces


def mesh_volume(vertices, faces) -> float:
    a, b, c = (vertices[faces[:, k]] for k in range(3))
    return float(np.einsum("ij,ij->i", a, np.cross(b, c)).sum() / 6.0)


def test_random_hulls_are_the_boolean_s_solid():
    rng = np.random.default_rng(5)
    kinds = {"overlap": 0, "apart": 0}
    for _ in range(150):
        pa = rng.normal(size=(int(rng.integers(4, 60)), 3)) * rng.uniform(0.2, 2.0, 3)
        pb = rng.normal(size=(int(rng.integers(4, 60)), 3)) * rng.uniform(0.2, 2.0, 3) + rng.uniform(-2.5, 2.5, 3)
        (va, fa), (vb, fb) = hull(pa), hull(pb)
        got = convex_overlap(va, fa, vb, fb)
        want = overlap("a", va, fa, "b", vb, fb)
        assert got is not None and want.reason is None
        assert got.volume == pytest.approx(want.volume, rel=1e-9, abs=1e-12)
        if want.volume > 1e-9:
            kinds["overlap"] += 1
            # the solid drawn is the solid measured, wound outwards, its corners those of the boolean's
            assert mesh_volume(got.vertices, got.faces) == pytest.approx(got.volume, rel=1e-9)
            assert len(np.unique(got.vertices, axis=0)) == len(got.vertices)
            lo, hi = want.vertices.min(axis=0), want.vertices.max(axis=0)
            np.testing.assert_allclose(got.vertices.min(axis=0), lo, atol=1e-9)
            np.testing.assert_allclose(got.vertices.max(axis=0), hi, atol=1e-9)
        else:
            kinds["apart"] += 1
    assert kinds["overlap"] >= 40 and kinds["apart"] >= 20, kinds


@pytest.mark.parametrize("case", ["same", "inside", "shared face", "face to face", "corner to corner",
                                  "flush sides"])
def test_degenerate_placements(case):
    """Coplanar faces, a part inside the other, parts meeting on a face or at a corner: the
    volume of the arithmetic, no sliver."""
    a = box([0, 0, 0], [1, 1, 1])
    b, truth = {
        "same": (box([0, 0, 0], [1, 1, 1]), 1.0),
        "inside": (box([0.25, 0.25, 0.25], [0.5, 0.75, 0.5]), 0.25 * 0.5 * 0.25),
        "shared face": (box([0, 0, 0], [1, 1, 0.5]), 0.5),
        "face to face": (box([1, 0, 0], [2, 1, 1]), 0.0),
        "corner to corner": (box([1, 1, 1], [2, 2, 2]), 0.0),
        "flush sides": (box([0.5, 0, 0], [1.5, 1, 1]), 0.5),
    }[case]
    for first, second in ((a, b), (b, a)):
        got = convex_overlap(first.vertices, first.faces, second.vertices, second.faces)
        assert got.volume == pytest.approx(truth, rel=1e-12, abs=1e-12)
        if truth == 0.0:
            assert len(got.faces) == 0


@pytest.mark.parametrize("h", [0.05, 0.3, 0.9, 1.6])
def test_a_fine_sphere_against_a_box_is_its_spherical_cap(h):
    """A cap of height h cut from a sphere of radius 1 by a box face: pi h^2 (3 - h) / 3, to
    the sphere's facets (the boolean's answer to rounding)."""
    s = trimesh.creation.icosphere(subdivisions=4)
    b = box([-2, -2, 1 - h], [2, 2, 2])
    got = convex_overlap(s.vertices, s.faces, b.vertices, b.faces)
    want = overlap("s", s.vertices, s.faces, "b", b.vertices, b.faces)
    assert got.volume == pytest.approx(want.volume, rel=1e-10)
    assert got.volume == pytest.approx(math.pi * h * h * (3 - h) / 3, rel=3e-2)


def test_far_from_the_origin_and_wound_inwards():
    a, b = box([0, 0, 0], [1, 1, 1]), box([0.5, 0.5, 0.5], [2, 2, 2])
    far = np.array([1e6, -2e6, 3e6])
    got = convex_overlap(a.vertices + far, a.faces, b.vertices + far, b.faces[:, ::-1])
    assert got.volume == pytest.approx(0.125, rel=1e-9)
    np.testing.assert_allclose(got.vertices.min(axis=0), far + 0.5, atol=1e-9)


def test_a_flat_or_broken_part_is_left_to_the_boolean():
    a = box([0, 0, 0], [1, 1, 1])
    plate = np.array([[0, 0, 0.5], [1, 0, 0.5], [1, 1, 0.5], [0, 1, 0.5]], float)
    assert convex_overlap(a.vertices, a.faces, plate, np.array([[0, 1, 2], [0, 2, 3]])) is None
    assert convex_overlap(a.vertices, a.faces, a.vertices, np.array([[0, 1, 99]] * 4)) is None
    assert convex_overlap(a.vertices, a.faces, np.full((8, 3), np.nan), a.faces) is None


def test_a_scan_s_volumes_are_the_boolean_s(tmp_path, monkeypatch):
    """The scan cuts two convex parts here and intersects a concave part with the boolean; with
    the cut turned off (every pair to the boolean), the same report but for rounding."""
    from click.testing import CliRunner

    from gjkcli.cli import main
    from gjkcli.pipeline import stages

    rng = np.random.default_rng(3)
    scene = trimesh.Scene()
    for k in range(12):
        points = rng.normal(size=(30, 3)) + rng.uniform(-1.5, 1.5, 3)
        v, f = hull(points)
        scene.add_geometry(trimesh.Trimesh(v, f, process=False), geom_name=f"hull{k}")
    ring = trimesh.creation.annulus(r_min=0.5, r_max=1.2, height=0.6)  # not convex: the boolean's
    scene.add_geometry(ring, geom_name="ring")
    path = tmp_path / "scene.glb"
    scene.export(path)

    def scan(out):
        result = CliRunner().invoke(main, ["scan", str(path), "--format", "json", "-o", str(out), "-j", "2"])
        assert result.exit_code == 1, result.output
        return {(p["a"], p["b"]): p for p in json.loads(out.read_text())["pairs"]}

    from gjkcli.mesh import overlap as module

    cuts = []
    monkeypatch.setattr(module, "convex_overlap", lambda *a: cuts.append(1) or convex_overlap(*a))
    monkeypatch.setattr(module, "THREADS_FROM", 4)  # the cuts on two threads
    cut = scan(tmp_path / "cut.json")
    assert len(cuts) >= 10  # the convex pairs were cut, not handed to the boolean
    monkeypatch.setattr(stages.Parts, "own_hull", lambda self, k: False)
    boolean = scan(tmp_path / "boolean.json")
    assert cut.keys() == boolean.keys()
    volumes = [(cut[k]["overlap_volume"], boolean[k]["overlap_volume"]) for k in cut
               if cut[k]["status"] == "collision"]
    assert len(volumes) >= 10 and any("ring" in k for k in cut if cut[k]["status"] == "collision")
    for got, want in volumes:
        assert got == pytest.approx(want, rel=1e-9, abs=1e-12)
