"""gjkcli.mesh.simple against trimesh: the plain OBJ, PLY and OFF files it reads give the parts
trimesh's loaders give (same names, vertices, faces and units, through `load_objects` and
`read_objects`), every other file goes to trimesh, and a malformed file gets the error line it
got before. The oracle is the same loader with gjkcli.mesh.simple switched off."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import trimesh

from gjkcli.errors import InputError
from gjkcli.mesh import load, simple
from gjkcli.mesh.load import load_objects, read_objects

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
MESHES = SHARED / "meshes"
READERS = [load_objects, read_objects]


def through_trimesh(monkeypatch, reader, path):
    """What `reader` gives for `path` with gjkcli.mesh.simple switched off."""
    with monkeypatch.context() as m:
        m.setattr(simple, "read", lambda *_: None)
        return reader(path)


def assert_same(ours, theirs, *, numbered=True):
    """The same parts: names, units, topology, and triangles; with `numbered`, the same arrays
    (without: the same triangles as points, for OBJ files whose corners list texture coordinates
    or normals, where trimesh copies a vertex per texture coordinate and normal)."""
    assert [p.name for p in ours] == [p.name for p in theirs]
    for a, b in zip(ours, theirs):
        assert a.units == b.units
        assert a.watertight == b.watertight and a.bodies == b.bodies
        assert a.vertices.dtype == b.vertices.dtype and a.faces.dtype == b.faces.dtype
        np.testing.assert_array_equal(a.vertices[a.faces], b.vertices[b.faces])
        if numbered:
            np.testing.assert_array_equal(a.vertices, b.vertices)
            np.testing.assert_array_equal(a.faces, b.faces)


def numbered_alike(path: Path) -> bool:
    """Whether trimesh numbers the file's vertices as gjkcli.mesh.simple does: all but OBJ files
    whose corners list texture coordinates or normals."""
    return path.suffix.lower() != ".obj" or b"/" not in path.read_bytes()


def read_plainly(path: Path) -> bool:
    return simple.read(path, load._file_type(path)) is not None


# -- the committed samples ---------------------------------------------------------------------

SAMPLES = sorted(p for p in MESHES.glob("*") if p.suffix.lower().lstrip(".") in simple.FORMATS) \
    if MESHES.is_dir() else []
# the samples read here (the others are a point cloud and an OBJ of lines): held here so that
# a reader that gave up on everything would fail
PLAIN = {"not_convex.obj", "bunny.ply", "ballA.off", "ballB.off", "chair_model.obj", "fandisk.obj",
         "two_objects.obj"}


@pytest.mark.skipif(not SAMPLES, reason=f"no shared meshes at {MESHES}")
@pytest.mark.parametrize("reader", READERS, ids=lambda r: r.__name__)
def test_every_shared_sample_reads_as_trimesh_reads_it(reader, monkeypatch):
    plain = set()
    for path in SAMPLES:
        try:
            theirs = through_trimesh(monkeypatch, reader, path)
        except InputError as exc:  # a point cloud: the same line either way
            with pytest.raises(InputError) as ours:
                reader(path)
            assert str(ours.value) == str(exc)
            continue
        assert_same(reader(path), theirs, numbered=numbered_alike(path))
        if read_plainly(path):
            plain.add(path.name)
    assert plain == PLAIN


# -- seeded random meshes ----------------------------------------------------------------------

def random_mesh(rng) -> trimesh.Trimesh:
    """A random part: the hull of 4 to 200 points (sometimes a box), moved and scaled, with up to
    5 vertices no face uses."""
    if rng.uniform() < 0.2:
        mesh = trimesh.creation.box(extents=rng.uniform(0.1, 5.0, 3))
    else:
        mesh = trimesh.convex.convex_hull(rng.normal(size=(int(rng.integers(4, 200)), 3)))
    vertices = mesh.vertices * rng.uniform(1e-3, 1e3) + rng.normal(size=3) * 10
    extra = rng.normal(size=(int(rng.integers(0, 6)), 3))
    return trimesh.Trimesh(np.concatenate([vertices, extra]), mesh.faces, process=False)


def quads(mesh) -> np.ndarray:
    """Faces as quads (a triangle's last corner repeated), for the writers that take polygons."""
    return np.column_stack([mesh.faces, mesh.faces[:, 2]])


def write(path: Path, mesh, kind: str) -> Path:
    v, f = mesh.vertices, mesh.faces
    if kind == "obj":
        path.write_bytes(trimesh.exchange.obj.export_obj(mesh, include_normals=False).encode())
    elif kind == "obj_quads":
        lines = [f"v {x:.17g} {y:.17g} {z:.17g}" for x, y, z in v] + \
                ["f " + " ".join(str(i + 1) for i in q) for q in quads(mesh)]
        path.write_text("\n".join(["# quads", *lines]) + "\n")
    elif kind == "obj_normals":  # normals listed, faces of plain indices: still plain
        text = trimesh.exchange.obj.export_obj(mesh, include_normals=False)
        path.write_text("vn 0 0 1\ns off\n" + text)
    elif kind in ("ply", "ply_ascii"):
        path.write_bytes(trimesh.exchange.ply.export_ply(
            mesh, encoding="ascii" if kind == "ply_ascii" else "binary", include_attributes=False))
    elif kind == "ply_big":  # big endian, double coordinates, an extra vertex property
        header = (f"ply\nformat binary_big_endian 1.0\nelement vertex {len(v)}\nproperty double x\n"
                  f"property double y\nproperty double z\nproperty uchar red\nelement face {len(f)}\n"
                  f"property list uchar uint vertex_index\nend_header\n").encode()
        rows = np.zeros(len(v), dtype=[("xyz", ">f8", (3,)), ("red", "u1")])
        rows["xyz"] = v
        faces = np.zeros(len(f), dtype=[("n", "u1"), ("i", ">u4", (3,))])
        faces["n"], faces["i"] = 3, f
        path.write_bytes(header + rows.tobytes() + faces.tobytes())
    elif kind == "ply_quads":  # binary, every face of 4 indices
        header = (f"ply\nformat binary_little_endian 1.0\nelement vertex {len(v)}\nproperty float x\n"
                  f"property float y\nproperty float z\nelement face {len(f)}\n"
                  f"property list uchar int vertex_indices\nend_header\n").encode()
        faces = np.zeros(len(f), dtype=[("n", "u1"), ("i", "<i4", (4,))])
        faces["n"], faces["i"] = 4, quads(mesh)
        path.write_bytes(header + v.astype("<f4").tobytes() + faces.tobytes())
    elif kind == "off":
        path.write_text(trimesh.exchange.off.export_off(mesh))
    elif kind in ("obj_crlf", "off_crlf", "ply_ascii_crlf"):  # Windows line ends
        write(path, mesh, kind.replace("_crlf", ""))
        path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    elif kind == "obj_blender":  # an object, a normal per face, a texture coordinate per corner
        lines = ["# Blender 4.1.1", "mtllib part.mtl", "o Part"]
        lines += [f"v {x:.6f} {y:.6f} {z:.6f}" for x, y, z in v]
        lines += [f"vn {x:.4f} {y:.4f} {z:.4f}" for x, y, z in mesh.face_normals]
        lines += [f"vt {k / (3 * len(f)):.6f} 0.5" for k in range(3 * len(f))]
        lines += ["s 0", "usemtl Material"]
        lines += ["f " + " ".join(f"{i + 1}/{3 * j + c + 1}/{j + 1}" for c, i in enumerate(face))
                  for j, face in enumerate(f)]
        path.write_text("\n".join(lines) + "\n")
    elif kind == "ply_blender":  # binary, normals, texture coordinates and colours per vertex
        header = (f"ply\nformat binary_little_endian 1.0\ncomment Created in Blender version 4.1.1\n"
                  f"element vertex {len(v)}\nproperty float x\nproperty float y\nproperty float z\n"
                  f"property float nx\nproperty float ny\nproperty float nz\nproperty float s\n"
                  f"property float t\nproperty uchar red\nproperty uchar green\nproperty uchar blue\n"
                  f"property uchar alpha\nelement face {len(f)}\nproperty list uchar uint vertex_indices\n"
                  f"end_header\n").encode()
        rows = np.zeros(len(v), dtype=[("xyz", "<f4", (3,)), ("n", "<f4", (3,)), ("st", "<f4", (2,)),
                                       ("rgba", "u1", (4,))])
        rows["xyz"], rows["st"], rows["rgba"] = v, v[:, :2], 200
        faces = np.zeros(len(f), dtype=[("n", "u1"), ("i", "<u4", (3,))])
        faces["n"], faces["i"] = 3, f
        path.write_bytes(header + rows.tobytes() + faces.tobytes())
    elif kind == "obj_negative":  # faces indexed back from the last vertex
        lines = [f"v {x:.17g} {y:.17g} {z:.17g}" for x, y, z in v] + \
                ["f " + " ".join(str(i - len(v)) for i in face) for face in f]
        path.write_text("\n".join(lines) + "\n")
    elif kind == "off_quads":
        rows = [f"{x:.17g} {y:.17g} {z:.17g}" for x, y, z in v] + \
               ["4 " + " ".join(map(str, q)) for q in quads(mesh)]
        path.write_text(f"OFF\n{len(v)} {len(f)} 0\n" + "\n".join(rows) + "\n")
    return path


KINDS = {"obj": "obj", "obj_quads": "obj", "obj_normals": "obj", "obj_blender": "obj",
         "obj_negative": "obj", "ply_blender": "ply", "ply": "ply", "ply_ascii": "ply",
         "ply_big": "ply", "off": "off", "off_quads": "off", "obj_crlf": "obj", "off_crlf": "off",
         "ply_ascii_crlf": "ply", "ply_quads": "ply"}


def test_seeded_random_meshes_read_as_trimesh_reads_them(tmp_path, monkeypatch):
    rng = np.random.default_rng(28)
    plain = 0
    total = 0
    for k in range(30):
        mesh = random_mesh(rng)
        for kind, suffix in KINDS.items():
            path = write(tmp_path / f"m{k}_{kind}.{suffix}", mesh, kind)
            for reader in READERS:
                assert_same(reader(path), through_trimesh(monkeypatch, reader, path),
                            numbered=numbered_alike(path))
            plain += read_plainly(path)
            total += 1
    # every one of these is plain: the test fails if the readers gave up on them
    assert plain == total


# -- files the readers leave to trimesh ---------------------------------------------------------

TETRA_V = "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\n"
TETRA_F = "f 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n"
# OBJ beyond a plain mesh, and PLY with texture coordinates, read here as trimesh reads them (issue 44)
BEYOND_PLAIN = {
    "uv.ply": "ply\nformat ascii 1.0\nelement vertex 4\nproperty float x\nproperty float y\n"
              "property float z\nproperty float u\nproperty float v\nelement face 1\n"
              "property list uchar int vertex_indices\nend_header\n0 0 0 0 0\n1 0 0 1 0\n9 9 9 0 0\n"
              "0 1 0 0 1\n3 0 1 3\n",
    "groups.obj": "o a\n" + TETRA_V + "g b\n" + TETRA_F,
    "material.obj": TETRA_V + "usemtl red\n" + TETRA_F,
    "texture.obj": TETRA_V + "vt 0 0\n" + re.sub(r" (\d)", r" \1/1", TETRA_F),
    "negative.obj": TETRA_V + "f -4 -2 -3\nf -4 -3 -1\nf -4 -1 -2\nf -3 -2 -1\n",
    "mixed.obj": TETRA_V + "f 1 3 2\nf 1 2 4 4\n",
    "pentagons.obj": "v 0 0 0\nv 1 0 0\nv 1.5 1 0\nv 0.5 1.5 0\nv -0.5 1 0\nv 0.5 0.5 1\n"
                     "f 1 5 4 3 2\nf 1 2 6\nf 2 3 6\nf 3 4 6\nf 4 5 6\nf 5 1 6\n",
    "normals_groups.obj": "g one\n" + TETRA_V + "vn 0 0 1\n" + re.sub(r" (\d)", r" \1//1", TETRA_F)
                          + "g two\n" + TETRA_V.replace("v 0 0 0", "v 3 3 3")
                          + "f 5 7 6\nf 5 6 8\nf 5 8 7\nf 6 7 8\n",
}


@pytest.mark.parametrize("name", sorted(BEYOND_PLAIN))
def test_obj_beyond_a_plain_mesh_reads_as_trimesh_reads_it(tmp_path, monkeypatch, name):
    path = tmp_path / name
    path.write_text(BEYOND_PLAIN[name])
    assert read_plainly(path)
    for reader in READERS:
        assert_same(reader(path), through_trimesh(monkeypatch, reader, path),
                    numbered=numbered_alike(path))


NOT_PLAIN = {
    "lines.obj": TETRA_V + TETRA_F + "l 1 2\n",
    "tabs.obj": TETRA_V + TETRA_F.replace("f 1 3 2", "f\t1 3 2"),
    "corners_two_ways.obj": TETRA_V + "vt 0 0\nf 1/1 3/1 2/1\nf 1 2 4\nf 1 4 3\nf 2 3 4\n",
    "pentagon.off": "OFF\n5 1 0\n0 0 0\n1 0 0\n1 1 0\n0 1 0\n0 0 1\n5 0 1 2 3 4\n",
    "comment.off": "OFF\n# a comment\n4 1 0\n0 0 0\n1 0 0\n0 1 0\n0 0 1\n3 0 1 2\n",
    "face_uv.ply": "ply\nformat ascii 1.0\nelement vertex 4\nproperty float x\nproperty float y\n"
                   "property float z\nelement face 2\nproperty list uchar int vertex_indices\n"
                   "property list uchar float texcoord\nend_header\n0 0 0\n1 0 0\n0 1 0\n0 0 1\n"
                   "3 0 1 2 6 0 0 1 0 0 1\n3 0 1 3 6 0 0 1 0 1 1\n",
    "edges.ply": "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\n"
                 "property float z\nelement face 1\nproperty list uchar int vertex_indices\n"
                 "element edge 1\nproperty int vertex1\nproperty int vertex2\nend_header\n"
                 "0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n0 1\n",
}


@pytest.mark.parametrize("name", sorted(NOT_PLAIN))
def test_files_beyond_the_plain_case_go_to_trimesh(tmp_path, monkeypatch, name):
    path = tmp_path / name
    path.write_text(NOT_PLAIN[name])
    assert not read_plainly(path)
    for reader in READERS:
        assert_same(reader(path), through_trimesh(monkeypatch, reader, path))


# -- malformed files: the line they got before -------------------------------------------------

def binary_ply(n_vertices: int, faces: list, *, cut: int = 0, extra: bytes = b"") -> bytes:
    header = (f"ply\nformat binary_little_endian 1.0\nelement vertex {n_vertices}\n"
              f"property float x\nproperty float y\nproperty float z\nelement face {len(faces)}\n"
              f"property list uchar int vertex_indices\nend_header\n").encode()
    body = np.arange(n_vertices * 3, dtype="<f4").tobytes()
    for face in faces:
        body += bytes([len(face)]) + np.asarray(face, dtype="<i4").tobytes()
    body += extra
    return header + (body[:-cut] if cut else body)


MALFORMED = {
    "index0.obj": (TETRA_V + "f 0 1 2\n").encode(),
    "past.obj": (TETRA_V + "f 1 2 9\n").encode(),
    "words.obj": (TETRA_V.replace("v 1 0 0", "v one 0 0") + TETRA_F).encode(),
    "no_faces.obj": TETRA_V.encode(),
    "short_vertex.obj": (TETRA_V + "v 1 2\n" + TETRA_F).encode(),
    "past.off": b"OFF\n4 1 0\n0 0 0\n1 0 0\n0 1 0\n0 0 1\n3 0 1 7\n",
    "few_vertices.off": b"OFF\n4 1 0\n0 0 0\n1 0 0\n3 0 1 2\n",
    "words.off": b"OFF\n3 1 0\n0 0 0\n1 x 0\n0 1 0\n3 0 1 2\n",
    "truncated.ply": binary_ply(4, [[0, 1, 2], [0, 2, 3]], cut=5),
    "padded.ply": binary_ply(4, [[0, 1, 2], [0, 2, 3]], extra=b"\0" * 7),
    "past.ply": binary_ply(4, [[0, 1, 2], [0, 2, 9]]),
    "negative.ply": binary_ply(4, [[0, 1, 2], [0, 2, -1]]),
    "no_header_end.ply": b"ply\nformat ascii 1.0\nelement vertex 3\n",
    "nan.ply": b"ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\n"
               b"property float z\nelement face 1\nproperty list uchar int vertex_indices\n"
               b"end_header\nnan 0 0\n1 0 0\n0 1 0\n3 0 1 2\n",
    "nan.obj": (TETRA_V.replace("v 1 0 0", "v nan 0 0") + TETRA_F).encode(),
    "inf.off": b"OFF\n3 1 0\n0 0 0\ninf 0 0\n0 1 0\n3 0 1 2\n",
    # read by trimesh its own way (what it makes of them is pinned by the comparison)
    "indented.obj": (TETRA_V.replace("v 1 0 0", "  v 1 0 0") + TETRA_F).encode(),
    "old_mac_line_ends.obj": (TETRA_V + TETRA_F).replace("\n", "\r").encode(),
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
@pytest.mark.parametrize("reader", READERS, ids=lambda r: r.__name__)
def test_a_malformed_file_gets_the_line_it_got_before(tmp_path, monkeypatch, reader, name):
    """Whatever the file's fault, the error is one line naming the file, the same words as
    trimesh's route gives; or, where trimesh reads it anyway, the same parts."""
    path = tmp_path / name
    path.write_bytes(MALFORMED[name])
    # NaN and infinite coordinates are read, then refused by gjk's own check; the rest is trimesh's
    assert read_plainly(path) == (name in ("nan.ply", "nan.obj", "inf.off"))
    try:
        theirs = through_trimesh(monkeypatch, reader, path)
    except InputError as exc:
        with pytest.raises(InputError) as ours:
            reader(path)
        assert str(ours.value) == str(exc)
        assert "\n" not in str(exc) and str(exc).startswith(str(path))
    else:
        assert_same(reader(path), theirs)


# -- the point of it ---------------------------------------------------------------------------

def _reports_and_imports(folder, commands: list, heavy: tuple) -> tuple:
    """Run each gjk command (a list of arguments) in one fresh Python in `folder`: (the reports
    each printed, the modules of `heavy` imported by then)."""
    script = (
        "import contextlib, io, json, sys\n"
        "from gjkcli.cli import main\n"
        "reports = []\n"
        f"for args in {commands!r}:\n"
        "    with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        "        try:\n"
        "            main(args, standalone_mode=False)\n"
        "        except SystemExit:\n"
        "            pass\n"
        "    reports.append(out.getvalue())\n"
        f"print(json.dumps([reports, sorted(m for m in {heavy!r} if m in sys.modules)]))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                          cwd=folder)
    return tuple(json.loads(done.stdout))


def test_checking_plain_files_imports_neither_trimesh_nor_scipy(tmp_path):
    """`gjk check` on two small plain parts of each format never imports trimesh or scipy (their
    import was most of the command's time); with its report written to a pipe, neither rich (the
    report is laid out by gjkcli.report.checktext), numpy.ma (np.unique's), the manifest's reader
    nor the baseline's."""
    cube = trimesh.creation.box(extents=(1.0, 1.0, 1.0))
    ball = trimesh.creation.icosphere(subdivisions=1, radius=0.5)
    ball.apply_translation((1.2, 0.0, 0.0))
    commands = []
    for suffix in ("stl", "obj", "ply", "off", "glb"):
        cube.export(tmp_path / f"cube.{suffix}")
        ball.export(tmp_path / f"ball.{suffix}")
        commands.append(["check", f"cube.{suffix}", f"ball.{suffix}"])  # short names, as typed in a folder
    heavy = ("trimesh", "scipy", "networkx", "rich", "numpy.ma", "gjkcli.scene.manifest",
             "gjkcli.pipeline.baseline")
    reports, imported = _reports_and_imports(tmp_path, commands, heavy)
    assert sum("CLEAR  the parts are 0.2 " in r for r in reports) == len(commands)
    assert imported == []


def test_scanning_plain_files_imports_no_robot_or_manifest_reader(tmp_path):
    """`gjk scan` of plain mesh files, no manifest, no robot, no --allow: neither the manifest's
    reader, the URDF reader nor the baseline's is imported (about 50 ms of a STEP scan's start)."""
    cube = trimesh.creation.box(extents=(1.0, 1.0, 1.0))
    cube.export(tmp_path / "a.stl")
    cube.apply_translation((0.5, 0.0, 0.0))  # half inside the first: a collision
    cube.export(tmp_path / "b.stl")
    heavy = ("gjkcli.scene.manifest", "gjkcli.scene.urdf", "gjkcli.pipeline.baseline")
    (report,), imported = _reports_and_imports(
        tmp_path, [["scan", "a.stl", "b.stl", "--together", "--format", "json"]], heavy)
    assert json.loads(report)["summary"]["collision"] == 1
    assert imported == []


def test_the_urdf_reader_is_asked_about_every_suffix_it_takes(tmp_path):
    """A check imports the URDF reader only for the suffixes in gjkcli.scene.objects'
    _ROBOT_SUFFIXES: every suffix `urdf.is_urdf` takes must be one of them."""
    from gjkcli.scene import objects, urdf

    robot = '<?xml version="1.0"?>\n<robot name="r"><link name="a"/></robot>\n'
    taken = []
    for suffix in (".urdf", ".xacro", ".sdf", ".mjcf", ".xml", ".world", ".srdf", ".dae", ".stl",
                   ".obj", ".glb", ".step", ".ifc", ".txt", ".URDF", ".XML"):
        path = tmp_path / f"robot{suffix}"
        path.write_text(robot)
        if urdf.is_urdf(path):
            taken.append(suffix)
            assert objects.robot_file(path)
    assert {".urdf", ".xml"} <= set(taken)
