"""OBJ, PLY and OFF files of one plain mesh, read with NumPy and without importing trimesh.

`gjk check a.obj b.obj` on two small parts spent most of its time importing trimesh (which
imports scipy, networkx and lxml) to parse a few hundred bytes. These readers take the common
plain case of each format and give the vertices and triangles trimesh's loaders give for it
(with gjk's options: `gjkcli.mesh.load`'s `_OPTIONS`, ``process=False``): the same arrays, in the
same order. Anything else returns None, and trimesh reads the file as before, with its own
handling and gjk's wording of its errors; so a malformed file gets the message it always got.

What each reader takes (anything beyond is None):

- OBJ: ``v x y z`` lines (every one with the same count of numbers, the first three used, as
  trimesh takes them), ``f`` lines of plain vertex indices (no ``/vt/vn``), 1-based and within
  the vertices, every face of 3 indices or every face of 4; ``vn``, ``vt``, ``s``, ``mtllib``,
  comments and blank lines are ignored; lines end in LF or CR LF and none is indented. Objects, groups and materials (``o``, ``g``,
  ``usemtl``), which trimesh splits on, negative indices (which trimesh counts from the end of
  the file) and the rest go to trimesh. Vertices no face uses are dropped, as trimesh drops them.
- PLY (ASCII, binary little or big endian): a ``vertex`` element with scalar properties x, y, z
  (others ignored, but no texture coordinates, which make trimesh split vertices) and a ``face``
  element whose one list property is ``vertex_indices`` or ``vertex_index``, every face of 3
  indices or every face of 4, within the vertices; nothing after the data.
- OFF: the ``OFF`` line, the counts, then the vertex lines (their first three numbers) and the
  face lines, every face of 3 or every face of 4, within the vertices; no comments.

Quads are split as trimesh's ``triangulate_quads`` splits them: every quad's (0, 1, 2), then
every quad's (2, 3, 0).

Why not a library: plyfile (maintained, NumPy only) would read PLY alone and still need this
module's rules to match trimesh; no maintained reader of OBJ or OFF is lighter than trimesh's
own modules, and those cannot be imported without trimesh's package, which imports the rest.
tests/mesh/test_simple_readers.py holds these readers to trimesh on every sample and on seeded
random meshes.
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np

__all__ = ["read", "FORMATS"]

# The formats read here.
FORMATS = ("obj", "ply", "off")

# Larger files go to trimesh: its vectorised parsers are faster per byte, and a file this big
# takes longer to read than trimesh takes to import.
_MAX_BYTES = 4 << 20


def read(path: Path, file_type: str) -> tuple[np.ndarray, np.ndarray] | None:
    """(vertices (n, 3) float64, faces (m, 3) int64) of a plain file, or None for trimesh.

    vertices : as trimesh's loader gives them for the file, every one used by a face
    faces : triangles, indices into `vertices`, in trimesh's order; m >= 1
    """
    if path.stat().st_size > _MAX_BYTES:
        return None
    data = path.read_bytes()
    try:
        found = _READERS[file_type](data)
    except (ValueError, IndexError, KeyError, TypeError, OverflowError, MemoryError):
        return None  # a file these readers do not take whole: trimesh reads it
    if found is None:
        return None
    vertices, faces = found
    if not len(faces) or not len(vertices) or faces.min() < 0 or faces.max() >= len(vertices):
        return None  # trimesh says what is wrong with it
    return vertices, faces


def _used(vertices: np.ndarray, faces: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Only the vertices a face uses, in their order, and the faces renumbered to them."""
    used = np.zeros(len(vertices), dtype=bool)
    used[faces] = True
    if used.all():
        return vertices, faces
    index = np.cumsum(used) - 1
    return vertices[used], index[faces]


def _triangles(polygons: np.ndarray) -> np.ndarray | None:
    """(m, 3) triangles of (k, 3) triangles or (k, 4) quads, split as trimesh splits quads."""
    if polygons.shape[1] == 3:
        return polygons
    if polygons.shape[1] == 4:
        return np.concatenate([polygons[:, [0, 1, 2]], polygons[:, [2, 3, 0]]])
    return None


# --------------------------------------------------------------------------------------------
# OBJ
# --------------------------------------------------------------------------------------------

# Statements ignored: normals, texture coordinates, smoothing groups, the material library
# (materials are skipped: gjk reads no textures).
_OBJ_IGNORED = (b"vn", b"vt", b"s", b"mtllib")


def _obj(data: bytes):
    data = data.replace(b"\r\n", b"\n")
    if b"\r" in data:
        return None  # trimesh splits lines on "\n" alone
    vertex_rows, face_rows = [], []
    for line in data.replace(b"\\\n", b"").split(b"\n"):
        if line[:1].isspace() and line.strip():
            return None  # an indented statement, which trimesh does not take as one
        head, _, rest = line.strip().partition(b" ")
        if head == b"v":
            vertex_rows.append(rest)
        elif head == b"f":
            face_rows.append(rest)
        elif head and not head.startswith(b"#") and head not in _OBJ_IGNORED:
            return None  # objects, groups, materials, lines, ...: trimesh's
    if not vertex_rows or not face_rows:
        return None
    rows = [row.split() for row in vertex_rows]
    width = len(rows[0])
    if width < 3 or any(len(row) != width for row in rows):
        return None
    vertices = np.array(rows, dtype=np.float64)[:, :3]
    polygons = [row.split() for row in face_rows]
    corners = len(polygons[0])
    if any(len(p) != corners for p in polygons) or b"/" in b"".join(face_rows):
        return None
    faces = _triangles(np.array(polygons, dtype=np.int64) - 1)
    if faces is None or faces.min() < 0:  # 0 and negative indices: trimesh's reading
        return None
    if faces.max() >= len(vertices):
        return None
    return _used(vertices, faces)


# --------------------------------------------------------------------------------------------
# OFF
# --------------------------------------------------------------------------------------------

def _off(data: bytes):
    if b"#" in data:
        return None  # comments: trimesh strips them its own way
    lines = [line for line in (raw.strip() for raw in data.decode("ascii").splitlines()) if line]
    if not lines or lines[0] != "OFF":
        return None
    counts = lines[1].split()
    if len(counts) != 3:
        return None
    n_vertices, n_faces = int(counts[0]), int(counts[1])
    if n_vertices < 3 or n_faces < 1 or len(lines) != 2 + n_vertices + n_faces:
        return None
    vertices = np.array([line.split()[:3] for line in lines[2: 2 + n_vertices]], dtype=np.float64)
    if vertices.shape != (n_vertices, 3):
        return None
    rows = [line.split() for line in lines[2 + n_vertices:]]
    corners = int(rows[0][0])
    if any(int(row[0]) != corners or len(row) < corners + 1 for row in rows):
        return None
    faces = _triangles(np.array([row[1: corners + 1] for row in rows], dtype=np.int64))
    return None if faces is None else (vertices, faces)


# --------------------------------------------------------------------------------------------
# PLY
# --------------------------------------------------------------------------------------------

# PLY's scalar types as NumPy's (trimesh's table)
_PLY_TYPES = {"char": "i1", "uchar": "u1", "short": "i2", "ushort": "u2", "int": "i4",
              "uint": "u4", "float": "f4", "double": "f8", "int8": "i1", "uint8": "u1",
              "int16": "i2", "uint16": "u2", "int32": "i4", "uint32": "u4", "int64": "i8",
              "uint64": "u8", "float16": "f2", "float32": "f4", "float64": "f8"}
# Vertex properties that are texture coordinates: trimesh then splits vertices per face.
_PLY_UV = frozenset({"u", "v", "s", "t", "texture_u", "texture_v"})
_PLY_END = re.compile(rb"end_header[ \t]*\r?\n")


def _ply(data: bytes):
    end = _PLY_END.search(data)
    if end is None or not data.startswith(b"ply"):
        return None
    header = data[:end.start()].decode("ascii").splitlines()
    form = header[1].split()
    if len(form) != 3 or form[0] != "format":
        return None
    encoding = form[1]
    elements: list = []  # [(name, count, [(property, type or (count type, item type))])]
    for line in header[2:]:
        words = line.split()
        if not words or words[0] in ("comment", "obj_info"):
            continue
        if words[0] == "element" and len(words) == 3:
            elements.append((words[1], int(words[2]), []))
        elif words[0] == "property" and elements and len(words) == 3:
            elements[-1][2].append((words[2], _PLY_TYPES[words[1]]))
        elif words[0] == "property" and elements and len(words) == 5 and words[1] == "list":
            elements[-1][2].append((words[4], (_PLY_TYPES[words[2]], _PLY_TYPES[words[3]])))
        else:
            return None
    if [name for name, _, _ in elements] != ["vertex", "face"]:
        return None
    (_, n_vertices, vertex_props), (_, n_faces, face_props) = elements
    names = [name for name, _ in vertex_props]
    if any(isinstance(kind, tuple) for _, kind in vertex_props) or _PLY_UV & set(names) \
            or not {"x", "y", "z"} <= set(names):
        return None
    lists = [(k, name) for k, (name, kind) in enumerate(face_props) if isinstance(kind, tuple)]
    if len(lists) != 1 or lists[0][1] not in ("vertex_indices", "vertex_index") \
            or n_vertices < 3 or n_faces < 1:
        return None
    body = data[end.end():]
    if encoding == "ascii":
        return _ply_ascii(body, n_vertices, vertex_props, n_faces, face_props, lists[0][0])
    if encoding not in ("binary_little_endian", "binary_big_endian"):
        return None
    order = "<" if encoding == "binary_little_endian" else ">"
    vertex_type = np.dtype([(name, order + kind) for name, kind in vertex_props])
    vertex_bytes = n_vertices * vertex_type.itemsize
    rows = np.frombuffer(body, dtype=vertex_type, count=n_vertices)
    vertices = np.column_stack([rows[c] for c in "xyz"]).astype(np.float64)
    # every face holds as many indices as the first: then the faces are one record type
    at = lists[0][0]
    before = np.dtype([(f"p{k}", order + kind) for k, (_, kind) in enumerate(face_props[:at])]).itemsize
    count_type, item_type = face_props[at][1]
    corners = int(np.frombuffer(body, dtype=order + count_type, count=1, offset=vertex_bytes + before)[0])
    fields = [(f"p{k}", order + kind) for k, (_, kind) in enumerate(face_props[:at])]
    fields += [("count", order + count_type), ("index", order + item_type, (corners,))]
    fields += [(f"q{k}", order + kind) for k, (_, kind) in enumerate(face_props[at + 1:])]
    if any(isinstance(kind, tuple) for _, kind in face_props[at + 1:]):
        return None
    face_type = np.dtype(fields)
    if len(body) != vertex_bytes + n_faces * face_type.itemsize:
        return None  # faces of several sizes, or bytes missing or left over: trimesh's
    records = np.frombuffer(body, dtype=face_type, count=n_faces, offset=vertex_bytes)
    if (records["count"] != corners).any():
        return None
    faces = _triangles(records["index"].astype(np.int64))
    return None if faces is None else (vertices, faces)


def _ply_ascii(body: bytes, n_vertices, vertex_props, n_faces, face_props, at):
    lines = body.decode("ascii").splitlines()
    if len(lines) < n_vertices + n_faces or any(line.strip() for line in lines[n_vertices + n_faces:]):
        return None
    table = np.array([line.split() for line in lines[:n_vertices]], dtype=np.float64)
    if table.shape != (n_vertices, len(vertex_props)):
        return None
    names = [name for name, _ in vertex_props]
    vertices = np.column_stack([table[:, names.index(c)] for c in "xyz"])
    # a face line: the scalars before the list, its count, its indices, the scalars after it
    rows = [line.split() for line in lines[n_vertices: n_vertices + n_faces]]
    corners = int(rows[0][at])
    width = len(face_props) + corners
    if any(len(row) != width or int(row[at]) != corners for row in rows):
        return None
    faces = _triangles(np.array([row[at + 1: at + 1 + corners] for row in rows], dtype=np.int64))
    if faces is None:
        return None
    # trimesh casts the vertices to each property's type (a float property stays float32)
    kinds = {name: kind for name, kind in vertex_props}
    vertices = np.column_stack([vertices[:, k].astype(kinds[c]) for k, c in enumerate("xyz")])
    return vertices.astype(np.float64), faces


_READERS = {"obj": _obj, "ply": _ply, "off": _off}
