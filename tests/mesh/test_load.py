"""Tests of gjkcli.mesh.load: files to named parts in world coordinates.

The oracle is trimesh itself, used directly in each test (its scene graph, its transforms, its
watertightness), never a number typed in from a run of the code under test. The real-world
files live in ../shared; tests that need them skip, saying so, when that folder is absent.
"""
from __future__ import annotations

import functools
import json
import struct
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import numpy as np
import pytest

from gjkcli.errors import InputError
from gjkcli.mesh import simple
from gjkcli.mesh.load import Part, expand_paths, load_objects, load_part, read_objects

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"
MESHES, THREEMF, ROBOTS = SHARED / "meshes", SHARED / "3mf", SHARED / "robots"
NO_SHARED = f"real-world meshes not found: {SHARED} is absent"

# files in ../shared that are not meshes, and the meshes that are known to be unusable
NOT_MESHES = {".md", ".bin", ".urdf", ".srdf"}
KNOWN_BAD = {"empty.stl": "no triangles", "points_emptyface.ply": "point cloud"}

# the reading options gjk promises (see gjkcli.mesh.load): OBJ objects and groups are objects,
# a glTF node is one object whatever the number of its primitives
TRIMESH_OPTIONS = {
    "obj": {"skip_materials": True, "split_objects": True, "split_groups": True,
            "group_material": False},
    "glb": {"merge_primitives": True},
    "gltf": {"merge_primitives": True},
}


@pytest.fixture
def shared() -> Path:
    """The ../shared folder, or a skip saying it is absent."""
    if not SHARED.is_dir():
        pytest.skip(NO_SHARED)
    return SHARED


def shared_files(*folders: Path, bad: bool = False) -> list:
    """pytest params for the mesh files of `folders` (the known-bad ones when `bad`)."""
    if not SHARED.is_dir():
        return [pytest.param(None, marks=pytest.mark.skip(reason=NO_SHARED), id="no-shared")]
    files = sorted(p for folder in folders for p in folder.rglob("*")
                   if p.is_file() and p.suffix.lower() not in NOT_MESHES)
    return [pytest.param(p, id=p.relative_to(SHARED).as_posix(), marks=pytest.mark.shared)
            for p in files if (p.name in KNOWN_BAD) == bad]


def rejects(path, *words: str) -> InputError:
    """Load `path`, expect a one-line InputError naming the file and containing `words`."""
    with pytest.raises(InputError) as caught:
        load_part(path)
    message = str(caught.value)
    assert "\n" not in message, message
    assert Path(path).name in message, message
    for word in words:
        assert word.lower() in message.lower(), message
    return caught.value


def trimesh_type(path: Path) -> str:
    name = path.name.lower()
    return "tar.gz" if name.endswith(".tar.gz") else path.suffix.lower().lstrip(".")


@functools.lru_cache(maxsize=None)
def trimesh_scene(path: Path):
    """trimesh's scene of a file, read once per session (tests only look at it)."""
    import trimesh

    return trimesh.load_scene(path, process=False, **TRIMESH_OPTIONS.get(trimesh_type(path), {}))


def trimesh_world_meshes(path: Path) -> list:
    """trimesh's own answer: every geometry node's mesh moved by its full world transform.

    Built as bare meshes rather than with scene.dump(), which copies materials and so needs
    Pillow for a textured OBJ even when materials were skipped.
    """
    import trimesh

    scene = trimesh_scene(path)
    meshes = []
    for node in scene.graph.nodes_geometry:
        transform, name = scene.graph[node]
        geometry = scene.geometry[name]
        mesh = trimesh.Trimesh(geometry.vertices, geometry.faces, process=False)
        meshes.append(mesh.apply_transform(transform))
    return meshes


def write_stl(path: Path, triangles) -> Path:
    """An ASCII STL of (m, 3, 3) triangles, written as given (so NaN can be written)."""
    lines = ["solid t"]
    for triangle in triangles:
        lines += ["facet normal 0 0 0", "outer loop"]
        lines += [f"vertex {x} {y} {z}" for x, y, z in triangle]
        lines += ["endloop", "endfacet"]
    path.write_text("\n".join(lines + ["endsolid t"]) + "\n")
    return path


def run_python(code: str, blocked: set[str] = frozenset()) -> subprocess.CompletedProcess:
    """Run `code` in a fresh interpreter at the project root, with `blocked` modules made
    unimportable (as if not installed)."""
    blocker = (
        "import sys, importlib.abc\n"
        "class _Block(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        f"        if name.split('.')[0] in {sorted(blocked)!r}:\n"
        "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
        "sys.meta_path.insert(0, _Block())\n"
    )
    return subprocess.run([sys.executable, "-c", blocker + code], cwd=ROOT, text=True,
                          capture_output=True, timeout=300)


# ---------------------------------------------------------------------------------------------
# bad input: one-line InputError naming the file
# ---------------------------------------------------------------------------------------------

def test_missing_file(tmp_path):
    rejects(tmp_path / "nowhere.stl", "no such file")


def test_directory_given_to_load_part(tmp_path):
    error = rejects(tmp_path, "directory")
    assert error.source == str(tmp_path)


@pytest.mark.parametrize("suffix", ["stl", "obj", "ply", "off", "glb", "gltf", "3mf", "3dxml",
                                    "zip", "tar.gz"])
def test_empty_file(tmp_path, suffix):
    path = tmp_path / f"part.{suffix}"
    path.write_bytes(b"")
    rejects(path, "empty", "0 bytes")


def test_stl_with_no_triangles(tmp_path):
    path = tmp_path / "hollow.stl"
    path.write_text("solid hollow\nendsolid hollow\n")
    rejects(path, "no triangles")


@pytest.mark.shared
def test_shared_empty_stl(shared):
    rejects(shared / "meshes" / "empty.stl", "no triangles")


@pytest.mark.shared
def test_shared_point_cloud(shared):
    rejects(shared / "meshes" / "points_emptyface.ply", "point cloud", "no triangles")


def test_obj_with_only_vertices(tmp_path):
    path = tmp_path / "dots.obj"
    path.write_text("v 0 0 0\nv 1 0 0\nv 0 1 0\n")
    rejects(path, "point cloud")


@pytest.mark.parametrize("suffix", ["stl", "obj", "ply", "off", "glb", "gltf", "3mf", "3dxml",
                                    "zip", "tar.gz", "bz2", "xaml"])
def test_random_bytes_with_a_mesh_extension(tmp_path, suffix):
    path = tmp_path / f"noise.{suffix}"
    path.write_bytes(np.random.default_rng(7).bytes(4000))
    message = str(rejects(path))
    # where a text decoder is installed (charset_normalizer), noise may read as text with no
    # mesh in it; either way the user is told plainly
    assert "not a valid" in message or "no triangles" in message, message


@pytest.mark.shared
@pytest.mark.parametrize("keep", [0.5, 0.9, 0.999])
def test_truncated_binary_stl(shared, tmp_path, keep):
    real = (shared / "robots" / "panda" / "link1.stl").read_bytes()
    count = struct.unpack("<I", real[80:84])[0]
    assert len(real) == 84 + 50 * count  # a well-formed binary STL to start from
    path = tmp_path / "cut.stl"
    path.write_bytes(real[:int(len(real) * keep)])
    rejects(path, "truncated", f"{count} triangles")


@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_non_finite_coordinates_in_stl(tmp_path, value):
    path = write_stl(tmp_path / "bad.stl", [[(0, 0, 0), (value, 0, 0), (0, 1, 0)],
                                            [(0, 0, 1), (1, 0, 1), (0, 1, 1)]])
    rejects(path, "NaN or infinite", "1 of 6 vertices")


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e999"])
def test_non_finite_coordinates_in_an_stl_of_several_solids(tmp_path, value):
    """trimesh reads an STL of several solids, joining each solid's repeated vertices, and drops
    the vertices that are not finite numbers with their triangles (a fuzzed file's third solid
    lost a triangle so, and the part was checked without it): refused instead."""
    one = write_stl(tmp_path / "one.stl", [[(0, 0, 0), (0, 0, 0), (0, 0, 0)]]).read_text()
    two = write_stl(tmp_path / "two.stl", [[(0, 0, 0), (0, 0, 0), (0, 0, 0)],
                                           [(0, 0, "3.4028234663852886e+38"), (0, 0, 0), (0, 0, value)]]).read_text()
    path = tmp_path / "bad.stl"
    path.write_text(one + one + two)
    rejects(path, "NaN or infinite", "1 of 12 vertices")


@pytest.mark.parametrize("value", ["nan", "inf"])
def test_non_finite_coordinates_in_obj(tmp_path, value):
    path = tmp_path / "bad.obj"
    path.write_text(f"v 0 0 0\nv 1 0 0\nv 0 {value} 0\nf 1 2 3\n")
    rejects(path, "NaN or infinite")


def test_unused_non_finite_vertex_is_harmless(tmp_path):
    path = tmp_path / "stray.obj"
    path.write_text("v 0 0 0\nv 1 0 0\nv 0 1 0\nv nan 0 0\nf 1 2 3\n")
    assert load_part(path).n_vertices == 3


@pytest.mark.filterwarnings("ignore:overflow:RuntimeWarning")  # trimesh checks the matrix
def test_overflow_in_node_transform(tmp_path):
    import trimesh

    scene = trimesh.Scene()
    scene.add_geometry(trimesh.creation.box(extents=(1e10, 1, 1)), node_name="huge",
                       transform=np.diag([1e300, 1, 1, 1]))
    path = tmp_path / "huge.glb"
    scene.export(path)
    rejects(path, "infinite", "node transform")


@pytest.mark.parametrize("name", ["part.xyz123", "part"])
def test_unknown_format(tmp_path, name):
    path = tmp_path / name
    path.write_text("1 2 3\n")
    rejects(path, "unknown file format", ".stl")


def test_the_unknown_format_error_names_every_suffix_gjk_reads(tmp_path):
    """2D drawings and robots too, not only the meshes trimesh reads."""
    path = tmp_path / "part.xyz123"
    path.write_text("1 2 3\n")
    with pytest.raises(InputError) as e:
        load_part(path)
    said = e.value.message
    for suffix in (".svg", ".dxf", ".urdf", ".stl", ".step", ".ifc", ".glb", ".3mf"):
        assert f"{suffix}," in said or said.endswith(suffix), (suffix, said)


def _glb_bytes() -> bytes:
    import trimesh

    return trimesh.Scene(trimesh.creation.box()).export(file_type="glb")


def test_glb_with_garbage_after_the_header(tmp_path):
    valid = _glb_bytes()
    path = tmp_path / "garbage.glb"
    path.write_bytes(valid[:20] + np.random.default_rng(3).bytes(len(valid) - 20))
    rejects(path, "not a valid GLB")


@pytest.mark.parametrize("keep", [0.3, 0.8, 0.99])
def test_truncated_glb(tmp_path, keep):
    valid = _glb_bytes()
    path = tmp_path / "cut.glb"
    path.write_bytes(valid[:int(len(valid) * keep)])
    rejects(path, "not a valid GLB")


@pytest.mark.shared
def test_gltf_without_its_buffer(shared, tmp_path):
    lonely = tmp_path / "TestScene.gltf"
    lonely.write_bytes((shared / "meshes" / "TestScene.gltf").read_bytes())
    rejects(lonely, "missing", "TestScene.bin")


def test_zip_with_a_bad_member(tmp_path):
    path = tmp_path / "parts.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("good.stl", _stl_text_of_box())
        archive.writestr("bad.stl", np.random.default_rng(1).bytes(500))
    error = rejects(path, "member bad.stl", "not a valid STL")
    assert error.source == str(path) and str(error).count("member bad.stl") == 1


def test_zip_without_meshes(tmp_path):
    path = tmp_path / "docs.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("README.txt", "nothing here")
    rejects(path, "no mesh file")


def write_off(path: Path) -> Path:
    """One triangle as OFF: a format that goes through trimesh (gjk reads one-solid STL itself)."""
    path.write_text("OFF\n3 1 0\n0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n")
    return path


def test_unexpected_reader_failure_is_an_input_error(tmp_path, monkeypatch):
    import trimesh

    def broken(*args, **kwargs):
        raise RuntimeError("the reader fell over\nwith a two-line message")

    monkeypatch.setattr(trimesh, "load_scene", broken)
    monkeypatch.setattr(simple, "read", lambda *_: None)  # the OFF file through trimesh
    error = rejects(write_off(tmp_path / "t.off"), "the reader fell over with a two-line message")
    assert isinstance(error.__cause__, RuntimeError)
    assert "RuntimeError" not in error.message  # the user's words, never a class name


def test_malformed_scene_is_an_input_error(tmp_path, monkeypatch):
    """A scene whose graph names a geometry it does not hold."""
    import trimesh

    real = trimesh.load_scene

    def dangling(*args, **kwargs):
        scene = real(*args, **kwargs)
        scene.geometry.clear()
        return scene

    monkeypatch.setattr(trimesh, "load_scene", dangling)
    monkeypatch.setattr(simple, "read", lambda *_: None)  # the OFF file through trimesh
    error = rejects(write_off(tmp_path / "t.off"), "cannot use its scene")
    assert isinstance(error.__cause__, KeyError)


def test_keyboard_interrupt_is_not_swallowed(tmp_path, monkeypatch):
    import trimesh

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(trimesh, "load_scene", interrupted)
    monkeypatch.setattr(simple, "read", lambda *_: None)  # the OFF file through trimesh
    with pytest.raises(KeyboardInterrupt):
        load_part(write_off(tmp_path / "t.off"))


@pytest.mark.shared
def test_missing_optional_dependency_is_named(shared):
    """Without networkx trimesh cannot read 3MF; the message says what to install."""
    path = shared / "3mf" / "box.3mf"
    result = run_python(
        "from gjkcli.errors import InputError\n"
        "from gjkcli.mesh.load import load_part\n"
        f"try:\n    load_part({str(path)!r})\n"
        "except InputError as error:\n    print(error)\n",
        blocked={"networkx"})
    assert result.returncode == 0, result.stderr
    assert "box.3mf" in result.stdout and "pip install networkx" in result.stdout, result.stdout


@pytest.mark.shared
def test_textures_need_no_pillow(shared, tmp_path):
    """A textured GLB and a textured OBJ load with Pillow made unimportable."""
    obj = tmp_path / "textured.obj"
    obj.write_text("mtllib textured.mtl\nv 0 0 0\nv 1 0 0\nv 0 1 0\nvt 0 0\nvt 1 0\nvt 0 1\n"
                   "usemtl skin\nf 1/1 2/2 3/3\n")
    (tmp_path / "textured.mtl").write_text("newmtl skin\nmap_Kd skin.png\n")
    (tmp_path / "skin.png").write_bytes(b"\x89PNG\r\n\x1a\n not really an image")
    truck = shared / "meshes" / "CesiumMilkTruck.glb"
    result = run_python(
        "from gjkcli.mesh.load import load_objects\n"
        f"print(len(load_objects({str(truck)!r})), len(load_objects({str(obj)!r})))\n"
        "import sys; print('PIL' in sys.modules)\n",
        blocked={"PIL"})
    assert result.returncode == 0, result.stderr
    counts, pil = result.stdout.split("\n")[:2]
    assert counts == f"{len(trimesh_scene(truck).graph.nodes_geometry)} 1"
    assert pil == "False"


# ---------------------------------------------------------------------------------------------
# degenerate but valid geometry loads
# ---------------------------------------------------------------------------------------------

def _stl_text_of_box() -> str:
    import trimesh

    return trimesh.creation.box().export(file_type="stl_ascii")


def test_single_triangle(tmp_path):
    part = load_part(write_stl(tmp_path / "tri.stl", [[(0, 0, 0), (1, 0, 0), (0, 1, 0)]]))
    assert (part.n_vertices, part.n_faces, part.bodies, part.watertight) == (3, 1, 1, False)


@pytest.mark.shared
def test_stray_triangles_load_and_split(shared):
    """heartgears.3mf: a gear and stray triangles."""
    path = shared / "3mf" / "heartgears.3mf"
    whole = load_part(path)
    pieces = load_objects(path, split_bodies=True)
    assert whole.bodies == len(pieces) > 1
    assert sum(p.n_faces for p in pieces) == whole.n_faces
    assert all(p.bodies == 1 for p in pieces)


def test_mirrored_and_sheared_node(tmp_path):
    """A mirroring, shearing node transform is applied in full, and the winding follows."""
    import trimesh

    box = trimesh.creation.box()
    matrix = np.eye(4)
    matrix[0, :2] = [-2.0, 0.5]  # mirror x, scale it by 2, shear it along y
    matrix[:3, 3] = [5, 0, 0]
    scene = trimesh.Scene()
    scene.add_geometry(box, node_name="bent", transform=matrix)
    path = tmp_path / "bent.glb"
    scene.export(path)
    part = load_objects(path)[0]
    expected = box.copy().apply_transform(matrix)
    np.testing.assert_allclose(part.bounds, expected.bounds, rtol=1e-12, atol=1e-12)
    triangles = part.vertices[part.faces]
    volume = np.einsum("ij,ij->", triangles[:, 0],
                       np.cross(triangles[:, 1], triangles[:, 2])) / 6
    assert volume == pytest.approx(abs(np.linalg.det(matrix[:3, :3])) * box.volume)


def test_obj_groups_and_objects_are_objects(tmp_path):
    path = tmp_path / "groups.obj"
    path.write_text(
        "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 5 0 0\nv 6 0 0\nv 5 1 0\n"
        "g left\nusemtl red\nf 1 2 3\nusemtl blue\nf 3 2 1\n"
        "g right\nf 4 5 6\n")
    parts = load_objects(path)
    assert sorted(p.name for p in parts) == ["left", "right"]
    assert {p.name: p.n_faces for p in parts} == {"left": 2, "right": 1}


def test_zip_members_are_named_by_path(tmp_path):
    path = tmp_path / "kit.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("sub/a.stl", _stl_text_of_box())
        archive.writestr("b.stl", _stl_text_of_box())
        archive.writestr("README.md", "# not a mesh")
    assert sorted(p.name for p in load_objects(path)) == ["b.stl", "sub/a.stl"]


def test_part_arrays(tmp_path):
    path = tmp_path / "box.stl"
    path.write_text(_stl_text_of_box())
    part = load_part(path)
    assert part.vertices.dtype == np.float64 and part.vertices.shape == (8, 3)
    assert part.faces.dtype == np.int64 and part.faces.shape == (12, 3)
    assert not part.vertices.flags.writeable and not part.faces.flags.writeable
    np.testing.assert_array_equal(part.bounds, [[-0.5] * 3, [0.5] * 3])
    assert part.diagonal == pytest.approx(np.sqrt(3))
    assert (part.name, part.source, part.units) == ("box.stl", str(path), None)
    assert part.watertight and part.bodies == 1
    assert "box.stl" in repr(part) and "[[" not in repr(part)  # no arrays printed


# ---------------------------------------------------------------------------------------------
# every real file
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("path", shared_files(MESHES, THREEMF, ROBOTS))
def test_every_shared_file_loads(path):
    parts = load_objects(path)
    assert parts and len({p.name for p in parts}) == len(parts)
    for part in parts:
        assert isinstance(part, Part) and part.source == str(path)
        assert part.n_faces > 0 and np.isfinite(part.vertices).all()
        assert 0 <= part.faces.min() and part.faces.max() < part.n_vertices
    whole = load_part(path)
    assert whole.name == path.name
    assert whole.n_faces == sum(p.n_faces for p in parts)


@pytest.mark.parametrize("path", shared_files(MESHES, bad=True))
def test_known_bad_shared_files(path):
    rejects(path, KNOWN_BAD[path.name])


@pytest.mark.parametrize("path", shared_files(MESHES, THREEMF, ROBOTS))
def test_world_geometry_matches_trimesh(path):
    """Each part is trimesh's mesh moved by its node's full transform (scale included),
    merged, and its watertightness and body count are those of trimesh's merged mesh."""
    import trimesh

    parts = load_objects(path)
    meshes = trimesh_world_meshes(path)
    assert len(parts) == len(meshes)
    for part in parts:
        # pair by geometry: trimesh orders (and, for archives, names) objects its own way; glTF
        # node transforms are float32 in the file, and gjk's glTF reader and trimesh's scene
        # graph round them differently (5e-9 relative on pins.glb), so within float32 rounding
        mesh = next(m for m in meshes if len(m.faces) == part.n_faces and
                    np.allclose(part.bounds, m.bounds, rtol=0, atol=1e-7 * m.scale))
        meshes.remove(mesh)
        mesh.merge_vertices(merge_tex=True, merge_norm=True)
        assert part.n_vertices == len(mesh.vertices)
        assert part.watertight == mesh.is_watertight
        # trimesh splits where an edge has more than two faces, so a triangle repeated in the
        # file (a double-sided export) would cut every edge: count it once, as gjk does
        mesh.update_faces(mesh.unique_faces())
        bodies = trimesh.graph.connected_components(mesh.face_adjacency, engine="scipy",
                                                    nodes=np.arange(len(mesh.faces)))
        assert part.bodies == len(bodies)


@pytest.mark.parametrize("path", shared_files(MESHES, THREEMF))
def test_object_count_is_trimesh_scene_graph_count(path):
    expected = len(trimesh_scene(path).graph.nodes_geometry)
    assert len(load_objects(path)) == expected


@pytest.mark.shared
def test_multibody_stl(shared):
    assert sorted(p.name for p in load_objects(shared / "meshes" / "multibody.stl")) == \
        ["bodyA", "bodyB"]


@pytest.mark.shared
def test_two_objects_obj(shared):
    path = shared / "meshes" / "two_objects.obj"
    names = [line[2:].strip() for line in path.read_text().splitlines() if line.startswith("o ")]
    assert len(names) == 2
    assert sorted(p.name for p in load_objects(path)) == sorted(names)


@pytest.mark.shared
def test_single_object_files_are_named_after_the_file(shared):
    for path in [shared / "meshes" / "1002_tray_bottom.STL", shared / "3mf" / "box.3mf"]:
        assert [p.name for p in load_objects(path)] == [path.name]


@pytest.mark.shared
def test_nested_glb_scale_is_applied(shared):
    """nested.glb's node transforms carry non-uniform scale; rigid-only placement (what
    trimesh's CollisionManager does) would give other bounds."""
    path = shared / "meshes" / "nested.glb"
    scene = trimesh_scene(path)
    parts = {p.name: p for p in load_objects(path)}
    scaled = 0
    for node in scene.graph.nodes_geometry:
        transform, name = scene.graph[node]
        local = np.asarray(scene.geometry[name].vertices)
        stretch = np.linalg.svd(transform[:3, :3], compute_uv=False)
        if not np.allclose(stretch, 1.0):
            scaled += 1
            rotation = transform[:3, :3] / stretch  # a scale-free stand-in, for contrast
            rigid = local @ rotation.T + transform[:3, 3]
            assert not np.allclose(parts[node].bounds, [rigid.min(0), rigid.max(0)])
        world = local @ transform[:3, :3].T + transform[:3, 3]
        np.testing.assert_allclose(parts[node].bounds, [world.min(0), world.max(0)],
                                   rtol=1e-12, atol=1e-12)
    assert scaled > 0  # the file does test scale


@pytest.mark.shared
def test_instanced_geometry_gives_a_part_per_node(shared):
    path = shared / "meshes" / "pins.glb"
    scene = trimesh_scene(path)
    parts = load_objects(path)
    assert len(scene.geometry) < len(parts) == len(scene.graph.nodes_geometry)
    dowels = [p for p in parts if scene.graph[p.name][1] == scene.graph[parts[0].name][1]]
    assert len(dowels) > 1 and len({tuple(p.bounds.ravel()) for p in dowels}) == len(dowels)


@pytest.mark.shared
def test_archive_members_keep_their_names(shared):
    path = shared / "meshes" / "kinematic.tar.gz"
    with tarfile.open(path) as archive:
        members = sorted(m.name for m in archive.getmembers()
                         if m.isfile() and m.name.endswith(".ply"))
    assert [p.name for p in load_objects(path)] == members


@pytest.mark.shared
def test_split_bodies_of_dodeca_chain(shared):
    path = shared / "3mf" / "dodeca_chain_loop.3mf"
    whole = load_objects(path)
    links = load_objects(path, split_bodies=True)
    assert len(whole) == 1 and whole[0].bodies == len(links) == 40
    assert {p.n_vertices for p in links} == {76}
    assert [p.name for p in links] == [f"{path.name}#{k}" for k in range(1, 41)]
    assert all(p.watertight and p.bodies == 1 for p in links)
    assert sum(p.n_faces for p in links) == whole[0].n_faces


@pytest.mark.shared
def test_split_bodies_keeps_single_bodies_whole(shared):
    path = shared / "meshes" / "multibody.stl"
    assert sorted(p.name for p in load_objects(path, split_bodies=True)) == ["bodyA", "bodyB"]


@pytest.mark.shared
def test_prefix(shared):
    path = shared / "meshes" / "multibody.stl"
    names = [p.name for p in load_objects(path, prefix="multibody.stl")]
    assert sorted(names) == ["multibody.stl:bodyA", "multibody.stl:bodyB"]


@pytest.mark.parametrize("path", shared_files(MESHES, THREEMF, ROBOTS))
def test_units_are_the_files(path):
    units = {p.units for p in load_objects(path)}
    stated = trimesh_scene(path).units if trimesh_type(path) != "tar.gz" else None
    assert units == {stated}


@pytest.mark.shared
def test_units_are_stated_by_3mf(shared):
    assert load_part(shared / "3mf" / "box.3mf").units is not None
    assert load_part(shared / "meshes" / "featuretype.3MF").units is not None
    assert load_part(shared / "meshes" / "featuretype.STL").units is None


@pytest.mark.parametrize("name", ["pyramids.3mf", "kinematic.tar.gz", "nested.glb",
                                  "FM1_satellite.3DXML"])
@pytest.mark.shared
def test_load_part_concatenates_all_meshes(shared, name):
    path = shared / "meshes" / name
    parts = load_objects(path)
    whole = load_part(path)
    assert len(parts) > 1 and whole.name == name
    assert whole.n_vertices == sum(p.n_vertices for p in parts)
    assert whole.n_faces == sum(p.n_faces for p in parts)
    assert whole.bodies == sum(p.bodies for p in parts)
    lows = np.min([p.bounds[0] for p in parts], axis=0)
    highs = np.max([p.bounds[1] for p in parts], axis=0)
    np.testing.assert_array_equal(whole.bounds, [lows, highs])
    stacked = np.concatenate([p.vertices[p.faces] for p in parts])
    np.testing.assert_array_equal(whole.vertices[whole.faces], stacked)


# ---------------------------------------------------------------------------------------------
# expand_paths
# ---------------------------------------------------------------------------------------------

@pytest.mark.shared
def test_expand_directory(shared):
    folder = shared / "meshes"
    found = expand_paths([folder])
    assert found == sorted(found)
    names = {p.name for p in found}
    assert {"multibody.stl", "kinematic.tar.gz", "TestScene.gltf", "FM1_satellite.3DXML"} <= names
    assert not names & {"README.md", "TestScene.bin"}
    assert all(p.parent == folder for p in found)


def test_expand_files_pass_through_and_repeats_drop(tmp_path):
    a = write_stl(tmp_path / "a.stl", [[(0, 0, 0), (1, 0, 0), (0, 1, 0)]])
    other = tmp_path / "notes.txt"
    other.write_text("x")
    assert expand_paths([a, other, tmp_path, str(a)]) == [a, other]
    assert expand_paths(str(a)) == [a]


def test_expand_missing_path(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        expand_paths([tmp_path / "gone"])


def test_expand_directory_without_meshes(tmp_path):
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(InputError, match=r"no file gjk reads \(looked for .*\.dxf.*\.stl.*\.svg.*; "
                                         r"it holds 1 \.txt\)"):
        expand_paths([tmp_path])


# ---------------------------------------------------------------------------------------------
# read_objects: the fast path of scans
# ---------------------------------------------------------------------------------------------

@pytest.mark.shared
def test_read_objects_names_and_places_as_load_objects_does(shared):
    for name in ("nested.glb", "pins.glb", "TestScene.gltf", "kinematic.tar.gz", "FM1_satellite.3DXML",
                 "multibody.stl", "two_objects.obj", "chair_model.obj"):
        want = load_objects(MESHES / name)
        got = read_objects(MESHES / name)
        assert [g.name for g in got] == [p.name for p in want], name
        for g, p in zip(got, want):
            scale = float(np.abs(p.vertices).max())
            lo, hi = g.vertices.min(axis=0), g.vertices.max(axis=0)
            # trimesh's scene graph re-orthonormalises nearly rigid node matrices (fix_rigid), the
            # glTF path uses them as written: they agree far inside the touching band
            assert np.allclose(np.array([lo, hi]), p.bounds, rtol=0, atol=1e-8 * scale), (name, g.name)


# ---------------------------------------------------------------------------------------------
# import cost
# ---------------------------------------------------------------------------------------------

def test_import_is_light():
    result = run_python("import sys, gjkcli.mesh.load\n"
                        "print(sorted(m for m in ('rich', 'click', 'trimesh', 'scipy')"
                        " if m in sys.modules))\n")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.replace("'", '"')) == []


# -- 3MF extensions gjk does not read ------------------------------------------------------------

_CORE = "http://schemas.microsoft.com/3dmanufacturing/core/2015/02"
_PRODUCTION = "http://schemas.microsoft.com/3dmanufacturing/production/2015/06"
_IMPLICIT = "http://schemas.3mf.io/3dmanufacturing/implicit/2023/12"
_BOX = ('<mesh><vertices>' + "".join(f'<vertex x="{x}" y="{y}" z="{z}"/>' for x in (0, 10) for y in (0, 10)
                                      for z in (0, 10)) + '</vertices><triangles>'
        + "".join(f'<triangle v1="{a}" v2="{b}" v3="{c}"/>' for a, b, c in
                  [(0, 2, 3), (0, 3, 1), (4, 5, 7), (4, 7, 6), (0, 1, 5), (0, 5, 4), (2, 6, 7), (2, 7, 3),
                   (0, 4, 6), (0, 6, 2), (1, 3, 7), (1, 7, 5)]) + '</triangles></mesh>')


def _3mf(path: Path, model: str, parts: dict | None = None) -> Path:
    """A 3MF package: its root model (and other model parts by name), with the package's
    relationships and content types."""
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("[Content_Types].xml",
                   '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/'
                   'package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.'
                   'openxmlformats-package.relationships+xml"/><Default Extension="model" ContentType='
                   '"application/vnd.ms-package.3dmanufacturing-3dmodel+xml"/></Types>')
        z.writestr("_rels/.rels",
                   '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats'
                   '.org/package/2006/relationships"><Relationship Target="/3D/3dmodel.model" Id="rel0" '
                   'Type="http://schemas.microsoft.com/3dmanufacturing/2013/01/3dmodel"/></Relationships>')
        z.writestr("3D/3dmodel.model", model)
        for name, text in (parts or {}).items():
            z.writestr(name, text)
    return path


def test_a_3mf_of_an_extension_gjk_does_not_read_is_refused_naming_it(tmp_path):
    """A 3MF whose shapes are implicit functions (the Implicit extension, which it requires) or
    whose build items lie in other model parts (the Production extension's p:path on an item)
    is refused in one line naming the extension, not as a file referring to an object it does
    not define or holding no triangles (what trimesh's reading of it made gjk say)."""
    implicit = _3mf(tmp_path / "implicit.3mf", (
        f'<?xml version="1.0" encoding="utf-8"?><model xmlns="{_CORE}" xmlns:i="{_IMPLICIT}" unit="millimeter" '
        'requiredextensions="i"><resources><i:implicitfunction id="3" displayname="main"><i:in/><i:out/>'
        '</i:implicitfunction><object id="12" type="model"><levelset xmlns="http://schemas.3mf.io/'
        '3dmanufacturing/volumetric/2022/01" function="3" channel="shape"/></object></resources>'
        '<build><item objectid="12"/></build></model>'))
    elsewhere = _3mf(tmp_path / "elsewhere.3mf", (
        f'<?xml version="1.0" encoding="utf-8"?><model xmlns="{_CORE}" xmlns:p="{_PRODUCTION}" unit="millimeter" '
        'requiredextensions="p"><resources/><build><item objectid="3" p:path="/3D/box.model"/></build>'
        '</model>'), {"3D/box.model": (
            f'<?xml version="1.0" encoding="utf-8"?><model xmlns="{_CORE}" unit="millimeter"><resources>'
            f'<object id="3" type="model">{_BOX}</object></resources><build/></model>')})
    for path, words in ((implicit, "it requires the 3MF Implicit extension, which gjk does not read"),
                        (elsewhere, "its build items are in other model parts of the archive (p:path, the "
                                    "3MF Production extension)")):
        for read in (read_objects, load_objects):
            with pytest.raises(InputError) as e:
                read(path)
            assert str(e.value).startswith(f"{path}: {words}") and "\n" not in str(e.value)


def test_a_3mf_with_some_build_items_in_other_parts_is_refused_not_misplaced(tmp_path):
    """A root model with a part of its own and a build item of another model part (p:path,
    any prefix) whose object id the root also defines: trimesh reads that item as the root's
    object, a part where none is (here over its own copy: a collision that is not there).
    Refused naming p:path, however the items are ordered; the same file without that item
    reads as before."""
    other = {"3D/other.model": (f'<?xml version="1.0" encoding="utf-8"?><model xmlns="{_CORE}" '
                                f'unit="millimeter"><resources><object id="1" type="model">{_BOX}</object>'
                                '</resources><build/></model>')}

    def model(items: str, prefix: str = "p") -> str:
        return (f'<?xml version="1.0" encoding="utf-8"?><model xmlns="{_CORE}" xmlns:{prefix}="{_PRODUCTION}" '
                f'unit="millimeter"><resources><object id="1" type="model">{_BOX}</object></resources>'
                f'<build>{items}</build></model>')

    there = '<item objectid="1" {}:path="/3D/other.model" transform="1 0 0 0 1 0 0 0 1 0.5 0 0"/>'
    for k, (items, prefix) in enumerate(((f'<item objectid="1"/>{there.format("p")}', "p"),
                                         (f'{there.format("prod")}\n<item objectid="1"/>', "prod"))):
        path = _3mf(tmp_path / f"mix{k}.3mf", model(items, prefix), other)
        for read in (read_objects, load_objects):
            with pytest.raises(InputError) as e:
                read(path)
            assert str(e.value).startswith(f"{path}: its build items are in other model parts of the "
                                           f"archive (p:path, the 3MF Production extension)")
    alone = _3mf(tmp_path / "alone.3mf", model('<item objectid="1"/>'), other)
    assert len(read_objects(alone)) == 1


def test_a_3mf_that_requires_production_for_its_uuids_reads_as_before(tmp_path):
    """Slicers mark the Production extension required for its UUIDs while the parts are in the
    root model: such a file reads as trimesh reads it."""
    model = (f'<?xml version="1.0" encoding="utf-8"?><model xmlns="{_CORE}" xmlns:p="{_PRODUCTION}" '
             'unit="millimeter" requiredextensions="p"><resources>'
             f'<object id="1" type="model" p:UUID="00000000-0000-0000-0000-000000000001">{_BOX}</object>'
             '</resources><build p:UUID="00000000-0000-0000-0000-000000000002">'
             '<item objectid="1" p:UUID="00000000-0000-0000-0000-000000000003"/>'
             '<item objectid="1" transform="1 0 0 0 1 0 0 0 1 5 0 0" p:UUID="00000000-0000-0000-0000-000000000004"/>'
             '</build></model>')
    path = _3mf(tmp_path / "slicer.3mf", model)
    got = read_objects(path)
    assert len(got) == 2 and sorted(p.vertices[:, 0].min() for p in got) == [0, 5]


def test_a_package_that_is_no_zip_archive_says_what_it_is(tmp_path):
    """A .3mf that is its model's XML saved on its own (as OpenSCAD's 3MF tests hold), or bytes
    of no ZIP archive, is refused saying so, not with zipfile's words; an XML error names its
    line once, without the parser's own "(<string>, line N)"."""
    bare = tmp_path / "bare.3mf"
    bare.write_text(f'<?xml version="1.0" encoding="UTF-8"?>\n<model xmlns="{_CORE}" unit="millimeter">'
                    f'<resources/><build/></model>\n')
    junk = tmp_path / "junk.3mf"
    junk.write_bytes(bytes(range(256)) * 4)
    broken = tmp_path / "broken.3mf"
    _3mf(broken, f'<?xml version="1.0" encoding="utf-8"?><model xmlns="{_CORE}" unit="millimeter"><resources>'
                 f'<object id="1" type="model">{_BOX}</object></resources><build>\n'
                 '<item objectid="1" transform="1 0 0 0 1 0 0 0 1 0 0 0" transform="1 0 0 0 1 0 0 0 1 0 0 0"/>'
                 '</build></model>')
    for path, words in ((bare, "not a valid 3MF file: it is XML text, not a ZIP package"),
                        (junk, "not a valid 3MF file: it is not a ZIP archive; re-export it"),
                        (broken, "not a valid 3MF file: attribute transform redefined, line 2")):
        with pytest.raises(InputError) as e:
            read_objects(path)
        message = str(e.value)
        assert message.startswith(f"{path}: {words}") and "<string>" not in message and "zip file" not in message
