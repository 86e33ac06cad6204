"""Hostile geometry read by gjkcli.mesh.load: deep scene graphs composed in float64, OBJ faces
that use index 0, coordinates that overflow double precision. Through both readers a run uses:
`load_objects` (check) and `read_objects` (scan)."""
from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest

from gjkcli.errors import InputError
from gjkcli.mesh.load import load_objects, read_objects

READERS = [load_objects, read_objects]
TETRA = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], dtype=np.float32)
TETRA_FACES = np.array([0, 2, 1, 0, 1, 3, 0, 3, 2, 1, 2, 3], dtype=np.uint32)


def chain_glb(path: Path, depth: int, step: float, *, required=()) -> Path:
    """A GLB whose scene is a chain of `depth` nodes, each translating its child by `step` along
    z; the last holds a unit tetrahedron (float32 positions). `required`: extensions the file
    requires (one gjk's own reader leaves to trimesh's parser)."""
    blob = TETRA.tobytes() + TETRA_FACES.tobytes()
    nodes = [{"translation": [0.0, 0.0, step], "children": [k + 1]} for k in range(depth)]
    del nodes[-1]["children"]
    nodes[-1].update(mesh=0, name="leaf")
    doc = {"asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": [0]}], "nodes": nodes,
           "meshes": [{"primitives": [{"attributes": {"POSITION": 0}, "indices": 1}]}],
           "buffers": [{"byteLength": len(blob)}],
           "bufferViews": [{"buffer": 0, "byteOffset": 0, "byteLength": 48},
                           {"buffer": 0, "byteOffset": 48, "byteLength": 48}],
           "accessors": [{"bufferView": 0, "componentType": 5126, "count": 4, "type": "VEC3",
                          "min": [0, 0, 0], "max": [1, 1, 1]},
                         {"bufferView": 1, "componentType": 5125, "count": 12, "type": "SCALAR"}]}
    if required:
        doc["extensionsUsed"] = doc["extensionsRequired"] = list(required)
    text = json.dumps(doc).encode()
    text += b" " * (-len(text) % 4)
    with open(path, "wb") as f:
        f.write(struct.pack("<III", 0x46546C67, 2, 12 + 8 + len(text) + 8 + len(blob)))
        f.write(struct.pack("<II", len(text), 0x4E4F534A) + text)
        f.write(struct.pack("<II", len(blob), 0x004E4942) + blob)
    return path


def leaf_z(reader, path) -> float:
    (part,) = reader(path)
    return float(part.vertices[:, 2].min())


# -- scene graphs in float64 -------------------------------------------------------------------


def test_a_chain_100000_deep_puts_its_leaf_where_float64_does(tmp_path):
    """100,000 steps of 1e-4: 10 in float64 (to 1e-11); float32 products put it at 10.006 or
    further, which this tolerance refuses."""
    path = chain_glb(tmp_path / "chain.glb", 100_000, 1e-4)
    for reader in READERS:
        assert leaf_z(reader, path) == pytest.approx(10.0, abs=1e-9), reader.__name__


@pytest.mark.parametrize("required", [(), ("EXT_left_to_trimesh",)])
def test_small_steps_down_a_chain_all_count(tmp_path, required):
    """2,000 steps of 1e-9 put the leaf at 2e-6, through gjk's glTF reader and through trimesh's
    parser (a required extension sends the file there): trimesh's own scene graph drops every
    step within 1e-8 of the identity and would leave the leaf at 0."""
    path = chain_glb(tmp_path / "steps.glb", 2_000, 1e-9, required=required)
    for reader in READERS:
        assert leaf_z(reader, path) == pytest.approx(2e-6, rel=1e-9), reader.__name__


# -- OBJ faces count from 1 ----------------------------------------------------------------------


OBJ = "# a tetrahedron\nv 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nvt 0 0\n{faces}"


@pytest.mark.parametrize(("faces", "line"), [
    ("f 1 3 2\nf 1 2 4\nf 0 4 3\nf 2 3 4\n", 9),        # a vertex index 0
    ("f 1 3 2\nf 1 2 4\nf 1 4 3\nf 2/1 3/1 4/0\n", 10),  # a texture index 0
    ("f 1 3 2\r\nf 1 2 4\r\n\tf  1 4 3 00\r\nf 2 3 4\r\n", 9),
])
def test_an_obj_face_with_index_0_names_its_line(tmp_path, faces, line):
    path = tmp_path / "zero.obj"
    path.write_text(OBJ.format(faces=faces), newline="")
    for reader in READERS:
        with pytest.raises(InputError) as caught:
            reader(path)
        assert caught.value.message.startswith(f"line {line}: a face uses index 0"), caught.value.message


def test_zeros_elsewhere_in_an_obj_are_fine(tmp_path):
    """Zeros in coordinates and comments, and indices like 11 or -8, are no error."""
    lines = ["v 0 0 0", "v 1 0 0", "v 0 1 0", "v 0 0 1"] + ["v 0 0 0"] * 6 + ["v 0.5 0.5 0.5"]
    path = tmp_path / "fine.obj"
    path.write_text("\n".join(lines) + "\n# f 0 1 2\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 -8\nf 2 3 11\n")
    for reader in READERS:
        (part,) = reader(path)
        assert part.n_faces == 5


# -- coordinates beyond double precision ---------------------------------------------------------


@pytest.mark.parametrize("value", ["1e308", "-1.7e308", "1e151"])
def test_coordinates_that_overflow_are_said_in_words(tmp_path, value):
    facets = [((0, 0, 0), (value, 0, 0), (0, 1, 0)), ((0, 0, 0), (value, 0, 0), (0, 0, 1)),
              ((0, 0, 0), (0, 1, 0), (0, 0, 1)), ((value, 0, 0), (0, 1, 0), (0, 0, 1))]
    path = tmp_path / "huge.stl"
    path.write_text("solid huge\n" + "".join(
        "facet normal 0 0 1\nouter loop\n" + "".join(f"vertex {x} {y} {z}\n" for x, y, z in f)
        + "endloop\nendfacet\n" for f in facets) + "endsolid huge\n")
    for reader in READERS:
        with pytest.raises(InputError) as caught:
            reader(path)
        assert "distances overflow double precision" in caught.value.message
        assert f"{abs(float(value)):.3g}" in caught.value.message


def test_coordinates_just_under_the_limit_are_read(tmp_path):
    path = tmp_path / "big.stl"
    path.write_text("solid big\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1e150 0 0\n"
                    "vertex 0 1e150 0\nendloop\nendfacet\nendsolid big\n")
    for reader in READERS:
        (part,) = reader(path)
        assert part.vertices.max() == 1e150
