"""Files as modelling tools write them (tests/data/written, made by scripts/make_written_samples.py:
Blender, Fusion, FreeCAD and MeshLab OBJ, OBJ indexed back from the last vertex, MeshLab's binary
PLY with colours, GLB of several meshes) are read without trimesh, into the objects, names and
verdicts trimesh's route gives; where trimesh's route is wrong (a fan over a polygon that is not
convex; negative indices counted from the end of the file) the fast route is right, by analytic
geometry."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gjkcli.mesh import load, simple
from gjkcli.mesh.load import load_objects, read_objects

WRITTEN = Path(__file__).resolve().parents[1] / "data" / "written"
FILES = sorted(p for p in WRITTEN.iterdir() if p.suffix in (".obj", ".ply", ".glb"))
PAIRS = [(a, a.with_name(a.name.replace("_a.", "_b."))) for a in FILES if "_a." in a.name]
PAIRS.append((WRITTEN / "blender_cube.obj", WRITTEN / "blender_cylinder.obj"))
# the scenes holding an L-shaped prism whose caps are not convex polygons
L_SCENES = ("blender_scene.obj", "freecad_scene.obj", "relative_scene.obj")


def through_trimesh(monkeypatch, reader, path):
    with monkeypatch.context() as m:
        m.setattr(simple, "read", lambda *_: None)
        return reader(path)


def corners(part) -> np.ndarray:
    """(m, 3, 3): the part's triangles as points (independent of how vertices are numbered)."""
    return part.vertices[part.faces]


def test_every_written_file_is_read_without_trimesh():
    assert len(FILES) == 17 and len(PAIRS) == 7
    for path in FILES:
        kind = load._file_type(path)
        if kind == "glb":
            from gjkcli.mesh import gltf

            gltf.read_scene(path)  # raises gltf.Unsupported for what it leaves to trimesh
        else:
            assert simple.read(path, kind) is not None, path.name


@pytest.mark.parametrize("reader", [load_objects, read_objects], ids=lambda r: r.__name__)
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_objects_and_names_as_trimesh_gives_them(monkeypatch, reader, path):
    ours, theirs = reader(path), through_trimesh(monkeypatch, reader, path)
    assert [p.name for p in ours] == [p.name for p in theirs]
    for a, b in zip(ours, theirs):
        assert (a.units, a.watertight, a.bodies) == (b.units, b.watertight, b.bodies)
        if a.name == "L_bracket" or path.name == "relative_scene.obj":
            continue  # the two places where trimesh's route is wrong: below
        np.testing.assert_array_equal(corners(a), corners(b))


def test_names_of_objects_and_groups():
    names = {path.name: [p.name for p in read_objects(path)] for path in FILES}
    # trimesh lists an OBJ's parts in the reverse order of their first face
    assert names["blender_scene.obj"] == ["Block", "L_bracket", "Cylinder", "Cube"]
    assert names["freecad_scene.obj"] == ["Block", "L_bracket", "Cylinder", "Cube"]
    assert names["fusion_a.obj"] == ["fusion_a.obj"]  # one object: the file's name
    assert names["meshes_a.glb"] == ["Plate", "Cube"]  # the order trimesh's glTF parser gives


def test_objects_and_groups_together(tmp_path, monkeypatch):
    """`o` and `g` together name a part "<object>_<group>"; a new object keeps the group; faces
    before any name are named after the file; a material does not split a part."""
    text = ("v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 2 3\no A\nf 1 2 4\ng G\nusemtl red\nf 1 3 4\n"
            "usemtl blue\nf 2 3 4\no B\nf 1 2 3\no A\nf 2 3 4\n")
    path = tmp_path / "mixed.obj"
    path.write_text(text)
    for reader in (load_objects, read_objects):
        ours = reader(path)
        assert [p.name for p in ours] == ["B_G", "A_G", "A", "mixed.obj"]
        assert [p.n_faces for p in ours] == [1, 3, 1, 1]
        theirs = through_trimesh(monkeypatch, reader, path)
        assert [p.name for p in theirs] == [p.name for p in ours]
        for a, b in zip(ours, theirs):
            np.testing.assert_array_equal(corners(a), corners(b))


def l_bracket_area(part) -> float:
    tri = corners(part)
    return float(np.linalg.norm(np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0]), axis=1).sum() / 2)


@pytest.mark.parametrize("name", L_SCENES)
def test_a_polygon_that_is_not_convex_is_cut_into_ears(name, monkeypatch):
    """The L's caps, listed from a corner that does not see the whole L: trimesh's fan covers the
    notch (triangles outside the L, and over it twice); the ears cover the L exactly: area
    2 * 3 (caps) + 2 * (2 + 2 + 1 + 1 + 1 + 1) (sides) = 22, and no triangle's centroid lies in the
    notch."""
    (ours,) = [p for p in read_objects(WRITTEN / name) if p.name == "L_bracket"]
    assert l_bracket_area(ours) == pytest.approx(22.0, rel=1e-12)
    centroid = corners(ours).mean(axis=1) - (0.0, 4.0, -1.0)
    assert not ((centroid[:, 0] > 1) & (centroid[:, 1] > 1)).any()
    if name != "relative_scene.obj":
        (theirs,) = [p for p in through_trimesh(monkeypatch, read_objects, WRITTEN / name)
                     if p.name == "L_bracket"]
        assert l_bracket_area(theirs) > 22.5  # the fan's extra triangles: the test can fail


def test_negative_indices_count_back_from_the_vertices_read_so_far(monkeypatch):
    """relative_scene.obj lists each object's vertices, then its faces indexed back from its last
    vertex: the objects are the ones blender_scene.obj lists with positive indices. trimesh counts
    back from the file's last vertex instead, and gives every object pieces of the last one."""
    ours = read_objects(WRITTEN / "relative_scene.obj")
    same = read_objects(WRITTEN / "blender_scene.obj")
    assert [p.name for p in ours] == [p.name for p in same]
    for a, b in zip(ours, same):
        np.testing.assert_allclose(corners(a), corners(b), atol=1e-6)  # 6 digits both
    theirs = through_trimesh(monkeypatch, read_objects, WRITTEN / "relative_scene.obj")
    assert not np.allclose(theirs[-1].bounds, same[-1].bounds)  # the Cube: the test can fail


def gjk(*args, trimesh_route=False) -> dict:
    """gjk's JSON report of a command, in a fresh Python; with `trimesh_route`, gjkcli.mesh.simple
    switched off."""
    script = ("import sys\nfrom gjkcli.mesh import simple\n"
              + ("simple.read = lambda *_: None\n" if trimesh_route else "")
              + "from gjkcli.cli import main\n"
              f"main({[*args, '--format', 'json']!r}, standalone_mode=False)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=WRITTEN, check=False)
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


def verdicts(report: dict) -> list:
    return sorted((tuple(sorted((p["a"], p["b"]))), p["status"], round(p.get("distance") or 0.0, 6))
                  for p in report["pairs"])


@pytest.mark.parametrize("a, b", PAIRS, ids=lambda p: p.name)
def test_check_of_each_pair_gives_trimesh_routes_verdict(a, b):
    ours = gjk("check", a.name, b.name)
    assert ours["summary"]["clear"] == 1
    # the cube's face x = 1, the cylinder's nearest vertex x = 2.2 - 1: 0.2 (to float32 in GLB)
    assert ours["pairs"][0]["distance"] == pytest.approx(0.2, abs=1e-6)
    assert verdicts(ours) == verdicts(gjk("check", a.name, b.name, trimesh_route=True))


def test_scan_of_the_scenes_the_block_in_the_notch_is_clear():
    """The block stands in the L's notch, 0.2 from it, through the plane of the L's top cap:
    clear (0.2 by construction). trimesh's route, with its fan over the notch, said collision."""
    for name in L_SCENES:
        ours = gjk("scan", name)
        assert ours["summary"]["collision"] == 0 and ours["summary"]["clear"] >= 1, name
    theirs = gjk("scan", "blender_scene.obj", trimesh_route=True)
    assert theirs["summary"]["collision"] == 1  # what the fan made of it: the test can fail


def test_checking_written_files_imports_no_trimesh():
    script = ("import sys, contextlib, io\nfrom gjkcli.cli import main\n"
              f"for a, b in {[(a.name, b.name) for a, b in PAIRS]!r}:\n"
              "    with contextlib.redirect_stdout(io.StringIO()):\n"
              "        try:\n            main(['check', a, b], standalone_mode=False)\n"
              "        except SystemExit:\n            pass\n"
              "print(sorted(m for m in ('trimesh', 'scipy') if m in sys.modules))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=WRITTEN, check=True)
    assert done.stdout.strip() == "[]"


# -- files of the field: trimesh's own test models (tests/data/third_party/trimesh_models) --------

FIELD = sorted((WRITTEN.parent / "third_party" / "trimesh_models").iterdir())
FIELD = [p for p in FIELD if p.suffix.lower() in (".obj", ".ply", ".off")]
# the planar polygons of wallhole.obj (Rhino) that are not convex: cut into ears here, fanned there
EARS = {"wallhole.obj"}


@pytest.mark.parametrize("path", FIELD, ids=lambda p: p.name)
def test_files_of_the_field_read_as_trimesh_reads_them(path, monkeypatch):
    for reader in (load_objects, read_objects):
        try:
            theirs = through_trimesh(monkeypatch, reader, path)
        except Exception as exc:  # noqa: BLE001 - the same InputError line either way
            with pytest.raises(type(exc)) as ours:
                reader(path)
            assert str(ours.value) == str(exc)
            continue
        ours = reader(path)
        assert [p.name for p in ours] == [p.name for p in theirs]
        for a, b in zip(ours, theirs):
            assert (a.units, a.watertight, a.bodies) == (b.units, b.watertight, b.bodies)
            if path.name not in EARS:
                np.testing.assert_array_equal(corners(a), corners(b))


def test_most_files_of_the_field_are_read_without_trimesh():
    fast = {p.name for p in FIELD if simple.read(p, load._file_type(p)) is not None}
    assert len(FIELD) == 23 and len(fast) >= 15, sorted(fast)
    assert {"wallhole.obj", "negative_indices.obj", "two_objects.obj", "textured_tetrahedron.obj",
            "tet.ply", "cube_blender_uv.ply"} <= fast


def polygon_area(corners3: np.ndarray) -> float:
    return float(np.linalg.norm(np.cross(corners3, np.roll(corners3, -1, axis=0)).sum(axis=0)) / 2)


def test_rhinos_polygons_that_are_not_convex_are_covered_once(monkeypatch):
    """wallhole.obj: a wall with a hole, its faces planar polygons of 6 and 8 corners that are not
    convex. Cut into ears, the triangles' areas add up to the polygons' areas (each point of a
    polygon covered once); trimesh's fans add up to more (they cover what lies outside)."""
    path = WRITTEN.parent / "third_party" / "trimesh_models" / "wallhole.obj"
    text = path.read_text().replace("\\\n", "").splitlines()  # lines continued with a backslash
    v = np.array([line.split()[1:4] for line in text if line.startswith("v ")], dtype=float)
    polygons = [[int(i.split("/")[0]) - 1 for i in line.split()[1:]] for line in text if line.startswith("f ")]
    truth = sum(polygon_area(v[p]) for p in polygons)

    def area(part):
        tri = corners(part)
        return float(np.linalg.norm(np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0]), axis=1).sum() / 2)

    (ours,) = read_objects(path)
    (theirs,) = through_trimesh(monkeypatch, read_objects, path)
    assert area(ours) == pytest.approx(truth, rel=1e-12)
    assert area(theirs) > truth + 1  # the fans: the test can fail
