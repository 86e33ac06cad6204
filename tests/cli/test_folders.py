"""`gjk scan FOLDER`: a folder expands, into its subfolders unless --no-recurse, to every format gjk
reads (one list, from the readers); what it holds and the scan leaves out is counted in a note; a
folder of drawings is a 2D scan; a robot's meshes are its links, not objects of their own."""
from __future__ import annotations

import json

import pytest
import trimesh
from click.testing import CliRunner

from gjkcli.cli import main
from gjkcli.mesh.load import expand_paths, readable_types


def scan(*args):
    r = CliRunner(catch_exceptions=False).invoke(main, ["scan", *map(str, args), "--format", "json"])
    return r.exit_code, json.loads(r.stdout), r.stderr


def box(x: float) -> trimesh.Trimesh:
    return trimesh.creation.box([1, 1, 1], transform=trimesh.transformations.translation_matrix([x, 0, 0]))


def drawing(path, squares):
    import ezdxf

    doc = ezdxf.new()
    for layer, x, size in squares:
        doc.modelspace().add_lwpolyline([(x, 0), (x + size, 0), (x + size, size), (x, size)],
                                        close=True, dxfattribs={"layer": layer})
    doc.saveas(path)


@pytest.fixture
def tree(tmp_path):
    """parts/ with a mesh per level (STL, OBJ two deep, PLY three deep, 2 apart each), a note, a
    CSV, a hidden STL and a hidden folder, and a DXF."""
    root = tmp_path / "parts"
    (root / "sub" / "deeper").mkdir(parents=True)
    (root / ".git").mkdir()
    box(0).export(root / "a.stl")
    box(2).export(root / "sub" / "b.obj")
    box(4).export(root / "sub" / "deeper" / "c.ply")
    box(0).export(root / ".hidden.stl")
    box(0).export(root / ".git" / "d.stl")
    (root / "notes.txt").write_text("x")
    (root / "sub" / "poses.csv").write_text("a,b\n")
    drawing(root / "sub" / "nest.dxf", [("CUT", 0, 1)])
    return root


def test_every_format_gjk_reads_is_listed_once():
    kinds = readable_types()
    for ext in ("stl", "obj", "ply", "off", "glb", "gltf", "3mf", "zip", "step", "stp", "ifc",
                "ifczip", "svg", "dxf"):
        assert ext in kinds, ext
    assert "xyz" not in kinds  # a point list holds no triangles


def test_a_folder_expands_recursively_with_a_note_of_what_was_left_out(tree):
    code, doc, err = scan(tree)
    assert code == 0, err
    assert sorted(o["file"].removeprefix(str(tree)) for o in doc["objects"]) == \
        ["/a.stl", "/sub/b.obj", "/sub/deeper/c.ply"]
    (note,) = [n for n in doc["notes"] if n.startswith(str(tree))]
    assert note == (f"{tree}: read 3 files; left out 2 hidden, 1 .csv, 1 .txt, "
                    f"1 2D drawings (scan them on their own)")
    assert doc["errors"] == []


def test_no_recurse_reads_the_folder_alone_and_counts_its_subfolders(tree):
    code, doc, _ = scan(tree, "--no-recurse")
    assert [o["file"] for o in doc["objects"]] == [str(tree / "a.stl")]
    assert f"{tree}: read 1 files; left out 2 hidden, 1 .txt, 1 subfolders" in doc["notes"]
    assert expand_paths(tree, recurse=False) == [tree / "a.stl"]


def test_a_folder_of_drawings_is_a_2d_scan(tmp_path):
    root = tmp_path / "nests"
    (root / "more").mkdir(parents=True)
    drawing(root / "one.dxf", [("CUT", 0, 1), ("CUT", 0.5, 1)])  # overlapping squares
    drawing(root / "more" / "two.dxf", [("CUT", 10, 1)])
    (root / "README.md").write_text("nests")
    code, doc, err = scan(root)
    assert doc["dimension"] == 2 and len(doc["objects"]) == 3, err
    assert code == 1 and [p["status"] for p in doc["pairs"] if p["violation"]] == ["collision"]
    assert f"{root}: read 2 files; left out 1 .md" in doc["notes"]


def test_a_robot_s_meshes_in_its_folder_are_its_links(tmp_path):
    root = tmp_path / "robot"
    root.mkdir()
    box(0).export(root / "base.stl")
    (root / "arm.urdf").write_text(
        '<robot name="arm"><link name="base"><collision><geometry><mesh filename="base.stl"/>'
        '</geometry></collision></link><link name="tip"><collision><origin xyz="3 0 0"/><geometry>'
        '<sphere radius="0.5"/></geometry></collision></link><joint name="j" type="prismatic">'
        '<parent link="base"/><child link="tip"/><axis xyz="0 0 1"/>'
        '<limit lower="0" upper="1" effort="1" velocity="1"/></joint></robot>')
    code, doc, err = scan(root, "--all-pairs")
    assert code == 0, err
    assert sorted(o["name"] for o in doc["objects"]) == ["base", "tip"]  # not base.stl again
    assert f"{root}: read 1 files; left out 1 meshes of the robots' links" in doc["notes"]


def test_a_folder_without_a_file_gjk_reads_names_what_it_looked_for(tmp_path, tree):
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "notes.txt").write_text("x")
    code, doc, err = scan(empty, tree)
    assert code == 2 and len(doc["objects"]) == 3  # the other folder is still scanned
    (line,) = [line for line in err.splitlines() if str(empty) in line]
    assert line.startswith(f"gjk: error: {empty}: directory holds no file gjk reads (looked for ")
    for ext in (".dxf", ".glb", ".ifc", ".step", ".stl", ".svg", ".urdf"):
        assert ext in line
    assert line.endswith("; it holds 1 .txt)")


def test_a_linked_folder_is_counted_not_followed(tree, tmp_path):
    (tree / "loop").symlink_to(tree, target_is_directory=True)
    code, doc, _ = scan(tree)
    assert code == 0 and len(doc["objects"]) == 3
    (note,) = [n for n in doc["notes"] if n.startswith(str(tree))]
    assert "1 linked folders" in note
