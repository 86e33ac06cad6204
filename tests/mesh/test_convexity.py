"""Tests of gjkcli.mesh.convexity: is a part its own convex hull, within a tolerance?

Oracles that are not the code under test: analytic shapes (a box, a plate, an L, a box with a
pit of known size, a cube with its top pushed in by a known height, a torus), parts labelled by
hand from ../shared (tests that need them skip, saying so, when that folder is absent), and
trimesh's ``is_convex`` as the contrast that explains why this module exists.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import trimesh

from gjkcli.mesh.convexity import Convexity, convexity, hull_gaps, is_convex
from gjkcli.tolerances import DEFAULT
from gjkcli.mesh.load import Part, load_objects, load_part
from gjkcli.engine.shapes import build_hulls

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"
needs_shared = pytest.mark.skipif(not SHARED.is_dir(),
                                  reason=f"real-world meshes not found: {SHARED} is absent")


def judged(part: Part) -> Convexity:
    """The decision as gjk makes it for a loaded part: with the loader's topology flags."""
    return convexity(part.vertices, part.faces, watertight=part.watertight, bodies=part.bodies)


def write_mesh(path: Path, vertices, faces) -> Path:
    trimesh.Trimesh(vertices, faces, process=False).export(path)
    return path


# ---------------------------------------------------------------------------------------------
# flat parts
# ---------------------------------------------------------------------------------------------

def test_single_triangle_is_flat_and_convex(tmp_path):
    part = load_part(write_mesh(tmp_path / "tri.stl", [[0, 0, 0], [1, 0, 0], [0, 1, 0]],
                                [[0, 1, 2]]))
    c = judged(part)
    assert c.convex and c.dimension == 2, c


def test_flat_plate_one_and_two_sided(tmp_path):
    square = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]], dtype=float)
    one = load_part(write_mesh(tmp_path / "one.stl", square, [[0, 1, 2], [0, 2, 3]]))
    two = load_part(write_mesh(tmp_path / "two.stl", square,
                               [[0, 1, 2], [0, 2, 3], [2, 1, 0], [3, 2, 0]]))
    assert one.n_faces == 2 and two.n_faces == 4
    assert judged(one).convex and judged(two).convex


def test_flat_l_shape_is_not_convex(tmp_path):
    ell = np.array([[0, 0, 0], [2, 0, 0], [2, 1, 0], [1, 1, 0], [1, 2, 0], [0, 2, 0]], float)
    part = load_part(write_mesh(tmp_path / "ell.stl", ell,
                                [[0, 1, 2], [0, 2, 3], [0, 3, 4], [0, 4, 5]]))
    c = judged(part)
    # the L's area is 3; its hull polygon cuts the missing corner diagonally: 4 - 1/2
    assert not c.convex and c.area_ratio == pytest.approx(3 / 3.5)


@needs_shared
@pytest.mark.shared
def test_stray_triangles_are_measured_and_not_convex():
    """heartgears.3mf: a gear and stray triangles. qhull refuses a hull for a lone triangle."""
    path = SHARED / "3mf" / "heartgears.3mf"
    for piece in load_objects(path, split_bodies=True):
        judged(piece)  # must not raise on the flat pieces
    assert not judged(load_part(path)).convex


# ---------------------------------------------------------------------------------------------
# solid parts
# ---------------------------------------------------------------------------------------------

def _box_with_pit(tmp_path: Path, depth: float, width: float = 0.01) -> Part:
    """A unit cube whose top face has a square pit `width` wide, its apex `depth` deep."""
    box = trimesh.creation.box()
    top = [i for i in range(8) if box.vertices[i, 2] > 0]
    corners = box.vertices[top][np.argsort(np.arctan2(*box.vertices[top, :2].T[::-1]))]
    inner = corners * [width, width, 1]
    apex = [[0, 0, 0.5 - depth]]
    vertices = np.concatenate([box.vertices, inner, apex])
    outer = [top[int(np.flatnonzero((box.vertices[top] == c).all(1))[0])] for c in corners]
    ring = [[outer[k], outer[(k + 1) % 4], 8 + k] for k in range(4)]
    ring += [[outer[(k + 1) % 4], 8 + (k + 1) % 4, 8 + k] for k in range(4)]
    pit = [[8 + k, 8 + (k + 1) % 4, 12] for k in range(4)]
    keep = [f for f in box.faces if not all(v in top for v in f)]
    mesh = trimesh.Trimesh(vertices, np.concatenate([keep, ring, pit]), process=False)
    mesh.fix_normals()
    assert mesh.is_watertight and mesh.is_winding_consistent and mesh.volume > 0
    return load_part(write_mesh(tmp_path / f"pit{depth}.stl", mesh.vertices, mesh.faces))


def test_a_thin_deep_pit_is_caught(tmp_path):
    flat = _box_with_pit(tmp_path, depth=0.0)
    pitted = _box_with_pit(tmp_path, depth=0.6)
    assert judged(flat).convex
    measure = judged(pitted)
    assert measure.volume_ratio > 1 - 1e-3  # the volume alone would not tell
    assert not measure.convex and measure.depth > 0.1


def test_box_open_box_and_two_boxes(tmp_path):
    """Through the loader's flags, and with the flags computed from the faces: one answer."""
    box = trimesh.creation.box()
    up = np.flatnonzero(box.face_normals[:, 2] > 0.5)
    two = trimesh.util.concatenate([box, box.copy().apply_translation([3, 0, 0])])
    cases = {"box": (box.vertices, box.faces, True),
             "open": (box.vertices, np.delete(box.faces, up, axis=0), False),
             "one face missing": (box.vertices, box.faces[:-1], False),
             "two": (two.vertices, two.faces, False)}
    for name, (vertices, faces, convex) in cases.items():
        part = load_part(write_mesh(tmp_path / f"{name}.stl", vertices, faces))
        assert part.bodies == (2 if name == "two" else 1)
        c = judged(part)
        assert c.convex is convex, (name, c)
        assert is_convex(vertices, faces) is convex, name


def test_torus_and_a_cube_with_its_top_pushed_in():
    torus = trimesh.creation.torus(major_radius=2.0, minor_radius=0.5)
    assert not is_convex(torus.vertices, torus.faces)
    # the top face of a unit cube replaced by a pyramid pointing inward, 0.2 deep: the cube
    # loses 0.2 / 3 of its volume
    cube = trimesh.creation.box()
    top = np.flatnonzero(cube.triangles_center[:, 2] > 0.49)
    quad = np.unique(cube.faces[top])
    ring = quad[np.argsort(np.arctan2(*cube.vertices[quad][:, :2].T[::-1]))]
    apex = len(cube.vertices)
    vertices = np.vstack([cube.vertices, [[0.0, 0.0, 0.3]]])
    fan = [[ring[k], ring[(k + 1) % 4], apex] for k in range(4)]
    dented = np.vstack([np.delete(cube.faces, top, axis=0), fan])
    assert trimesh.Trimesh(vertices, dented, process=False).is_watertight
    c = convexity(vertices, dented)
    assert not c.convex and c.volume_ratio == pytest.approx(1 - 0.2 / 3)


def test_unused_vertices_are_ignored():
    box = trimesh.creation.box()
    stray = np.vstack([box.vertices, [[50.0, 50.0, 50.0]]])  # no face uses it
    c = convexity(stray, box.faces)
    assert c.convex and c.volume_ratio == pytest.approx(1.0)
    assert not convexity(stray, box.faces[:0]).convex  # no triangles at all


def test_unmerged_copies_of_a_convex_part_still_cover_its_hull():
    """A triangle soup (no vertex shared) is many open bodies, but its surface is its hull's."""
    box = trimesh.creation.box()
    soup = box.vertices[box.faces].reshape(-1, 3)
    c = convexity(soup, np.arange(len(soup)).reshape(-1, 3))
    assert c.convex and np.isnan(c.volume_ratio) and c.area_ratio == pytest.approx(1.0), c


def test_a_convex_part_wound_inwards_is_its_hull():
    """Some IFC writers wind a closed part's faces inwards (Revit's coverings and doors in the
    duplex and Office_A models of the gathered corpus): the supporting-plane test reads each
    face's normal from its winding, so such a part read as no hull of its own and every pair
    of it went to the triangles. Turned as the triangle test turns it, it is its hull; an open box
    or a box with a dent stays no hull either way."""
    box = trimesh.creation.box(extents=(1.551, 2.048, 0.057))
    dented = trimesh.creation.box(extents=(1.0, 1.0, 1.0))
    v = dented.vertices.copy()
    v[0] *= 0.8
    parts = [(box.vertices, box.faces), (box.vertices, box.faces[:, ::-1]), (box.vertices, box.faces[1:, ::-1]),
             (v, dented.faces[:, ::-1]), (box.vertices, box.faces[::2, ::-1].copy())]
    hulls = build_hulls([p[0] for p in parts])
    gaps = hull_gaps(hulls, [p[1] for p in parts], [p[0] for p in parts])
    assert gaps[0] == pytest.approx(0.0, abs=1e-12) and gaps[1] == pytest.approx(0.0, abs=1e-12)
    assert not np.isfinite(gaps[2]) and not np.isfinite(gaps[4])  # a face missing: open
    assert gaps[3] > 0.05  # the dent: its faces lie inside the hull, wound either way


def test_same_answer_under_a_rigid_transform():
    """trimesh's test_convex.py idea: moving the part changes nothing."""
    rng = np.random.default_rng(7)
    torus = trimesh.creation.torus(major_radius=2.0, minor_radius=0.5)
    sphere = trimesh.creation.icosphere(subdivisions=3)
    for mesh, convex in ((torus, False), (sphere, True)):
        here = convexity(mesh.vertices, mesh.faces)
        q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
        moved = convexity(mesh.vertices @ q.T + rng.normal(size=3) * 10, mesh.faces)
        assert here.convex is moved.convex is convex
        assert moved.volume_ratio == pytest.approx(here.volume_ratio, rel=1e-9)


# ---------------------------------------------------------------------------------------------
# real parts in ../shared
# ---------------------------------------------------------------------------------------------

CONVEX = ["meshes/unit_sphere.STL", "meshes/ballA.off"] + [
    f"robots/panda/{n}.stl" for n in ("link0", "link1", "link2", "link3", "link4", "link5",
                                      "link6", "link7", "hand", "finger")]
NOT_CONVEX = [f"meshes/{n}" for n in (
    "idler_riser.STL", "featuretype.STL", "torus.STL", "20mm-xyz-cube.stl", "bunny.ply",
    "1002_tray_bottom.STL", "soup.stl", "not_convex.obj")] + [
    f"robots/ur5/{n}.stl" for n in ("base", "shoulder", "upperarm", "forearm", "wrist1",
                                    "wrist2", "wrist3")]


@needs_shared
@pytest.mark.shared
@pytest.mark.parametrize("name", CONVEX + NOT_CONVEX)
def test_convexity_of_real_parts(name):
    part = load_part(SHARED / name)
    c = judged(part)
    assert c.convex is (name in CONVEX), c
    bare = convexity(part.vertices, part.faces)  # flags computed here: the same decision
    assert (bare.convex, bare.reason) == (c.convex, c.reason)
    if name in CONVEX and name != "meshes/unit_sphere.STL":
        # what trimesh answers, and why this module exists
        assert not trimesh.load(SHARED / name, force="mesh").is_convex


# ---------------------------------------------------------------------------------------------
# import cost
# ---------------------------------------------------------------------------------------------

def test_import_is_light():
    code = ("import sys, gjkcli.mesh.convexity\n"
            "print(sorted(m for m in ('rich', 'click', 'trimesh', 'scipy') if m in sys.modules))\n")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, text=True,
                            capture_output=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.replace("'", '"')) == []


# -- many parts at once: the scan's pre-test -------------------------------------------------------


def test_convexity_of_parts():
    box = trimesh.creation.box(extents=[1, 2, 3])
    sphere = trimesh.creation.icosphere(subdivisions=2)
    torus = trimesh.creation.annulus(r_min=0.5, r_max=1.0, height=0.5)
    open_box = trimesh.Trimesh(box.vertices, box.faces[2:], process=False)  # a face missing
    inside_out = trimesh.Trimesh(box.vertices, box.faces[:, ::-1], process=False)
    dented = box.copy()
    dented.vertices[0] *= 0.9  # a corner pushed in
    meshes = [box, sphere, torus, open_box, inside_out, dented]
    hulls = build_hulls([m.vertices for m in meshes])
    gaps = hull_gaps(hulls, [m.faces for m in meshes], [m.vertices for m in meshes])
    band = DEFAULT.touching_rel * np.array([np.linalg.norm(m.extents) for m in meshes])
    # wound inwards, the box is still the box (the triangle test reads it so: its winding number's
    # sign aside), and its own hull
    assert (gaps <= band).tolist() == [True, True, False, False, True, False]
    assert gaps[0] == 0.0 and np.isinf(gaps[2]) and np.isinf(gaps[3])  # a hole; a face missing


# -- the compiled core's hull for small parts ----------------------------------------------------


def _seeded_parts():
    rng = np.random.default_rng(11)
    parts = [trimesh.creation.annulus(0.5, 1.0, 1.0, sections=24),
             trimesh.creation.torus(1.0, 0.3, major_sections=16, minor_sections=8),
             trimesh.creation.box([2, 1, 1]).difference(trimesh.creation.box([1, 0.5, 2]), engine="manifold"),
             trimesh.creation.icosphere(2)]
    for _ in range(8):  # dented spheres: a few vertices pushed in by a seeded depth
        m = trimesh.creation.icosphere(1)
        v = m.vertices.copy()
        dent = rng.choice(len(v), size=3, replace=False)
        v[dent] *= rng.uniform(0.7, 0.99, size=(3, 1))
        parts.append(trimesh.Trimesh(v + rng.normal(scale=1e3, size=3), m.faces, process=False))
    return parts


@pytest.mark.parametrize("k", range(12))
def test_the_core_hull_gives_qhull_s_convexity(k, monkeypatch):
    """A part of up to SMALL_HULL_POINTS vertices gets its hull from the compiled core, not
    qhull (no scipy import on a small check): the verdict and its measures are qhull's."""
    import gjkcli.mesh.convexity as module

    part = _seeded_parts()[k]
    ours = convexity(part.vertices, part.faces, watertight=part.is_watertight, bodies=1)
    assert module._small_hull(np.asarray(part.vertices, dtype=np.float64)) is not None
    monkeypatch.setattr(module, "_small_hull", lambda vertices, up_to=None: None)
    ref = convexity(part.vertices, part.faces, watertight=part.is_watertight, bodies=1)
    assert ours.convex == ref.convex and ours.dimension == ref.dimension
    for field in ("volume_ratio", "area_ratio"):
        a, b = getattr(ours, field), getattr(ref, field)
        assert (np.isnan(a) and np.isnan(b)) or a == pytest.approx(b, rel=1e-9), field
    assert (np.isnan(ours.depth) and np.isnan(ref.depth)) or ours.depth == pytest.approx(ref.depth, rel=1e-6,
                                                                                         abs=1e-12)
    assert ours.reason.split(" ")[:3] == ref.reason.split(" ")[:3]


def test_a_small_check_of_a_part_that_is_not_its_hull_imports_no_scipy(tmp_path):
    box, cube = (str(ROOT / "samples" / name) for name in ("pocket_box.stl", "pocket_cube.stl"))
    code = ("import sys\nfrom gjkcli.cli import main\n"
            f"try:\n    main(['check', {box!r}, {cube!r}, '-q'])\n"
            "except SystemExit as e:\n    assert e.code == 0, e.code\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('scipy', 'trimesh')))")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]", out


# -- many parts' reasons at once (part_reasons) -------------------------------------------------


def test_many_parts_reasons_are_each_part_s_and_the_volumes_analytic():
    """`part_reasons` (the reasons a report lists, many parts measured together) gives
    `part_reason`'s answer for every part, unmerged and far from the origin as an IFC model's
    are: hollow box sections (1 - 0.6^2 of their hull), seeded dented spheres, an L prism
    (3 of 3.5), an open box, two boxes as one part, a plate, a convex box; two parts' reasons
    are checked against their analytic volume ratios."""
    from gjkcli.mesh.convexity import part_reason, part_reasons

    rng = np.random.default_rng(24)
    outer, inner = trimesh.creation.box([1, 1, 4]), trimesh.creation.box([0.6, 0.6, 5])
    hollow = outer.difference(inner, engine="manifold")
    profile = [[0, 0], [2, 0], [2, 1], [1, 1], [1, 2], [0, 2]]
    from shapely.geometry import Polygon
    el = trimesh.creation.extrude_polygon(Polygon(profile), 1.0)
    box = trimesh.creation.box([1, 2, 3])
    parts = [hollow, el, box, trimesh.Trimesh(box.vertices, box.faces[2:], process=False),
             trimesh.util.concatenate([box, box.copy().apply_translation([3, 0, 0])]),
             trimesh.creation.box([2, 2, 1e-9])]
    for _ in range(30):
        m = trimesh.creation.icosphere(1) if rng.uniform() < 0.5 else hollow.copy()
        v = m.vertices.copy()
        dent = rng.choice(len(v), size=3, replace=False)
        v[dent] *= rng.uniform(0.6, 0.99, size=(3, 1))
        parts.append(trimesh.Trimesh(v, m.faces, process=False))
    vertices, faces = [], []
    for p in parts:  # every triangle's corners apart (unmerged), the part far out and turned
        turn = trimesh.transformations.random_rotation_matrix(rng.uniform(size=3))[:3, :3]
        v = p.vertices[p.faces].reshape(-1, 3) @ turn.T + rng.uniform(-1e3, 1e3, 3)
        vertices.append(v)
        faces.append(np.arange(len(v)).reshape(-1, 3))
    n = len(parts)
    gaps, none = np.full(n, np.inf), [None] * n
    got = part_reasons(gaps, range(n), vertices, faces, none, none)
    assert got == [part_reason(np.inf, vertices[k], faces[k]) for k in range(n)]
    assert got[0] == f"fills {1 - 0.36:.4%} of its hull's volume"
    assert got[1] == f"fills {3 / 3.5:.4%} of its hull's volume"
    fills = sum(r.startswith("fills ") for r in got)
    assert 10 <= fills <= n - 4  # the batch's case and others, both
