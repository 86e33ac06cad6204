"""OBJ, PLY and OFF files as tools write them, read with NumPy and without importing trimesh.

`gjk check a.obj b.obj` on two small parts spent most of its time importing trimesh (which
imports scipy, networkx and lxml) to parse a few hundred bytes. These readers take the files
that modelling tools write (Blender, Fusion, FreeCAD, MeshLab: tests/data/written holds one of
each) and give the objects, names and triangles trimesh's loaders give for them (with gjk's
options: `gjkcli.mesh.load`'s `_OPTIONS`, ``process=False``). Anything else returns None, and
trimesh reads the file as before, with its own handling and gjk's wording of its errors; so a
malformed file gets the message it always got.

What each reader takes (anything beyond is None):

- OBJ: ``v`` lines (every one with the same count of numbers, the first three used, as trimesh
  takes them), ``f`` lines of 3 or more corners, each a vertex index optionally followed by
  ``/texture/normal`` indices (every corner of the file written the same way), objects and
  groups (``o``, ``g``), which split the file into parts as trimesh splits and names them
  (`_obj`), and ``vn``, ``vt``, ``s``, ``mtllib``, ``usemtl``, comments and blank lines, which
  carry nothing gjk uses; lines end in LF or CR LF, none is indented, no tabs. Negative indices
  count back from the vertices read so far (the OBJ specification; trimesh counts from the end
  of the file, the same vertex when a file lists its vertices first). A part's vertices are the
  file's vertices its faces use, in file order: where trimesh copies a vertex per texture
  coordinate or normal, the triangles here are the same points with fewer copies.
- PLY (ASCII, binary little or big endian): a ``vertex`` element with scalar properties x, y, z
  (others ignored: normals, colours; with texture coordinates, as Blender writes them, the
  vertices no face uses are dropped, as trimesh drops them) and a ``face``
  element whose one list property is ``vertex_indices`` or ``vertex_index``, every face of 3
  indices or every face of 4, within the vertices; nothing after the data.
- OFF: the ``OFF`` line, the counts, then the vertex lines (their first three numbers) and the
  face lines, every face of 3 or every face of 4, within the vertices; no comments.

Polygons become triangles as trimesh makes them (`_polygons`: quads as (0, 1, 2), (2, 3, 0), larger
polygons as fans), except an OBJ polygon that is not convex, which is cut into ears in its plane
(manifold3d's triangulator): a fan from a corner that does not see the whole polygon covers
what lies outside it (a false collision in an L-shaped cap's notch). A polygon that is not flat
(to convex_flat_rel of its size) keeps the fan: no cut of it is truer than another.

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

from gjkcli.tolerances import DEFAULT

__all__ = ["read", "FORMATS"]

# The formats read here.
FORMATS = ("obj", "ply", "off")

# Larger files go to trimesh: its vectorised parsers are faster per byte, and a file this big
# takes longer to read than trimesh takes to import.
_MAX_BYTES = 4 << 20


def read(path: Path, file_type: str) -> list[tuple[str, np.ndarray, np.ndarray]] | None:
    """[(name, vertices (n, 3) float64, faces (m, 3) int64)], a part per object of the file, or
    None for trimesh.

    name : the object's name as trimesh's loader names it (an OBJ's objects and groups); the
        file's name for a file of one mesh
    vertices : the vertices of the file its faces use, in the file's order
    faces : triangles, indices into `vertices`, in trimesh's order; m >= 1
    """
    if path.stat().st_size > _MAX_BYTES:
        return None
    data = path.read_bytes()
    try:
        if file_type == "obj":
            found = _obj(data, path.name)
        else:
            one = _READERS[file_type](data)
            found = None if one is None else [(path.name, *one)]
    except (ValueError, IndexError, KeyError, TypeError, OverflowError, MemoryError):
        return None  # a file these readers do not take whole: trimesh reads it
    if not found:
        return None
    for _, vertices, faces in found:
        if not len(faces) or not len(vertices) or faces.min() < 0 or faces.max() >= len(vertices):
            return None  # trimesh says what is wrong with it
    return found


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

# Statements that carry nothing gjk uses: normals, texture coordinates, smoothing groups,
# materials and their library (gjk reads no materials, and materials do not split an object).
_OBJ_IGNORED = frozenset({b"vn", b"vt", b"s", b"mtllib", b"usemtl"})
# Objects and groups: each (object, group) pair met by a face is a part, as trimesh's loader
# splits the file with split_objects and split_groups (`load._OPTIONS`).
_OBJ_NAMES = frozenset({b"o", b"g"})


def _obj(data: bytes, file_name: str):
    """[(name, vertices, faces)] as trimesh's OBJ loader splits and names the file, or None.

    Each part holds the faces met under one (object, group) pair, whatever came between them;
    the `o` and `g` names last until the next of their kind (a new object keeps the group).
    A part is named "<object>_<group>", "<object>" or "<group>", the file's name when the faces
    come before any `o` or `g`; trimesh lists the parts in the reverse order of their first face.
    A face lists its corners' vertex indices, each optionally followed by /texture/normal
    indices, which are not needed: a vertex is where it is whatever its normal, so the part's
    vertices are the file's vertices its faces use, in file order (trimesh copies a vertex per
    texture coordinate and normal it comes with; the triangles, as points, are the same).
    A negative index counts back from the vertices read so far, as the OBJ specification says
    (trimesh counts from the end of the file: the same vertex when the vertices come first).
    Triangles as trimesh makes them (`_polygons`), except that a polygon that is not convex is
    cut into ears, where trimesh's fan would cover what lies outside it.
    """
    data = data.replace(b"\r\n", b"\n")
    if b"\r" in data or b"\t" in data:
        return None  # trimesh splits lines on "\n" alone, and words on " " in places
    vertex_rows: list = []
    face_rows: list = []
    face_base: list = []  # the vertices read before each face (for negative indices)
    face_part: list = []  # each face's part, by its index in `keys`
    keys: dict = {}  # (object, group) -> index, in the order of their first face
    obj = group = None
    part = None
    for line in data.replace(b"\\\n", b"").split(b"\n"):
        if line[:1].isspace():
            if line.strip():
                return None  # an indented statement, which trimesh does not take as one
            continue
        head, _, rest = line.partition(b" ")
        if head == b"v":
            vertex_rows.append(rest)
        elif head == b"f":
            if part is None:
                part = keys.setdefault((obj, group), len(keys))
            face_rows.append(rest)
            face_base.append(len(vertex_rows))
            face_part.append(part)
        elif head in _OBJ_NAMES:
            name = rest.strip()
            if not name or b"usemtl" in name:
                return None  # trimesh takes these its own way
            if head == b"o":
                obj = name
            else:
                group = name
            part = None
        elif head and not head.startswith(b"#") and head not in _OBJ_IGNORED:
            return None  # lines, points, curves, ...: trimesh's
    if not vertex_rows or not face_rows:
        return None
    rows = [row.split() for row in vertex_rows]
    width = len(rows[0])
    if width < 3 or any(len(row) != width for row in rows):
        return None
    vertices = np.array(rows, dtype=np.float64)[:, :3]
    corners = [row.split() for row in face_rows]
    tokens = [t for face in corners for t in face]
    sizes = np.fromiter(map(len, corners), dtype=np.int64, count=len(corners))
    if sizes.min() < 3:
        return None
    face_part = np.array(face_part, dtype=np.int64)
    if b"/" in data:
        # how each corner is written (v, v/vt, v//vn, v/vt/vn): one way within a part, or
        # trimesh may take a texture index for a vertex
        way = np.array([t.count(b"/") + 3 * (b"//" in t) for t in tokens], dtype=np.int64)
        per_part = np.repeat(face_part, sizes)
        first = np.full(len(keys), -1, dtype=np.int64)
        first[per_part[::-1]] = way[::-1]
        if (first[per_part] != way).any():
            return None
        tokens = [t.partition(b"/")[0] for t in tokens]
    index = np.array(tokens, dtype=np.int64)
    base = np.repeat(np.array(face_base, dtype=np.int64), sizes)
    if (index == 0).any():
        return None  # trimesh's route says which line is wrong
    index = np.where(index > 0, index - 1, index + base)
    if index.min() < 0 or index.max() >= len(vertices):
        return None
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    names = _obj_names(keys, file_name)
    if names is None:
        return None
    out = []
    for key, k in reversed(list(keys.items())):  # trimesh's order
        mine = np.flatnonzero(face_part == k)
        faces = _polygons(vertices, index, starts[mine], sizes[mine])
        if faces is None:
            return None
        out.append((names[key], *_used(vertices, faces)))
    return out


def _obj_names(keys: dict, file_name: str) -> dict | None:
    """{(object, group): name} as trimesh names the parts; None when two would share a name
    (trimesh then makes one unique its own way)."""
    names = {}
    for obj, group in keys:
        given = [n for n in (obj, group) if n is not None]
        try:
            name = b"_".join(given).decode("utf-8") if given else file_name
        except UnicodeDecodeError:
            return None
        names[(obj, group)] = name
    return names if len(set(names.values())) == len(names) else None


def _polygons(vertices: np.ndarray, index: np.ndarray, starts: np.ndarray,
              sizes: np.ndarray) -> np.ndarray | None:
    """(m, 3) triangles of the polygons whose corners are index[start:start + size].

    As trimesh's OBJ loader makes them: polygons all of one size are split together (triangles
    as they are; quads every one's (0, 1, 2) then every one's (2, 3, 0); larger ones each as a
    fan from its first corner), polygons of mixed sizes one after the other (a quad as (0, 1, 2),
    (2, 3, 0), a larger one as a fan). A polygon that is not convex (a corner turns against the
    polygon's normal, Newell's) is instead cut into ears by manifold3d's triangulator in the
    polygon's plane, in its place in the order.
    """
    if (sizes == 3).all():
        return index[starts[:, None] + np.arange(3)]
    reflex = _not_convex(vertices, index, starts, sizes)
    if sizes.min() == sizes.max() and not reflex.any():
        k = int(sizes[0])
        polygon = index[starts[:, None] + np.arange(k)]
        if k == 4:
            return np.concatenate([polygon[:, [0, 1, 2]], polygon[:, [2, 3, 0]]])
        fan = np.stack([np.zeros(k - 2, dtype=np.int64), np.arange(1, k - 1), np.arange(2, k)], axis=1)
        return polygon[:, fan].reshape(-1, 3)
    pieces = []
    for start, size, bent in zip(starts.tolist(), sizes.tolist(), reflex.tolist()):
        polygon = index[start:start + size]
        if bent:
            cut = _ears(vertices[polygon])
            if cut is None:
                return None
            pieces.append(polygon[cut])
        elif size == 4:
            pieces.append(polygon[[[0, 1, 2], [2, 3, 0]]])
        else:
            pieces.append(np.stack([np.full(size - 2, polygon[0]), polygon[1:-1], polygon[2:]], axis=1))
    return np.concatenate(pieces)


def _not_convex(vertices: np.ndarray, index: np.ndarray, starts: np.ndarray,
                sizes: np.ndarray) -> np.ndarray:
    """(n,) bool: the flat polygons with a corner that turns against the polygon's normal
    (Newell's normal, the sum of the cross products of consecutive corners: the area vector of
    the polygon projected onto its best-fit plane). A polygon whose corners leave the plane
    through their centroid by more than convex_flat_rel of its diagonal is not flat: no cut of it
    is truer than another, and it keeps trimesh's fan. Triangles are convex."""
    reflex = np.zeros(len(sizes), dtype=bool)
    for k in np.unique(sizes[sizes > 3]).tolist():
        mine = np.flatnonzero(sizes == k)
        p = vertices[index[starts[mine, None] + np.arange(k)]]  # (n, k, 3)
        q = np.roll(p, -1, axis=1)
        normal = np.cross(p, q).sum(axis=1)  # Newell: twice the area vector
        turn = np.cross(q - p, np.roll(q, -1, axis=1) - q)  # the turn at each corner after the first
        bent = (np.einsum("nkc,nc->nk", turn, normal) < 0).any(axis=1)
        length = np.linalg.norm(normal, axis=1)
        unit = normal / np.where(length > 0, length, 1.0)[:, None]
        off = np.abs(np.einsum("nkc,nc->nk", p - p.mean(axis=1, keepdims=True), unit)).max(axis=1)
        diagonal = np.linalg.norm(p.max(axis=1) - p.min(axis=1), axis=1)
        reflex[mine] = bent & (length > 0) & (off <= DEFAULT.convex_flat_rel * diagonal)
    return reflex


def _ears(corners: np.ndarray) -> np.ndarray | None:
    """(k - 2, 3) triangles of one polygon, indices into its corners: the polygon projected onto
    the plane of its Newell normal, counter-clockwise seen from the normal, cut into ears by
    manifold3d (a dependency of gjk's core). None when that fails."""
    normal = np.cross(corners, np.roll(corners, -1, axis=0)).sum(axis=0)
    length = np.linalg.norm(normal)
    if not length > 0:
        return None
    n = normal / length
    u = np.cross(n, np.eye(3)[int(np.argmin(np.abs(n)))])
    u /= np.linalg.norm(u)
    v = np.cross(n, u)  # (u, v, n) right-handed: counter-clockwise about n is counter-clockwise in (u, v)
    flat = (corners - corners[0]) @ np.stack([u, v], axis=1)
    import manifold3d  # 5 ms, only for a polygon that needs it

    triangles = np.asarray(manifold3d.triangulate([flat]), dtype=np.int64).reshape(-1, 3)
    return triangles if len(triangles) == len(corners) - 2 else None


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
# Vertex properties that trimesh takes for texture coordinates (the first pair present): it then
# copies each vertex per texture coordinate it has in its faces (one, when they are the vertex's
# own) and keeps only the vertices faces use, in their order.
_PLY_UV = (("texture_u", "texture_v"), ("u", "v"), ("s", "t"))
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
    if any(isinstance(kind, tuple) for _, kind in vertex_props) \
            or not {"x", "y", "z"} <= set(names):
        return None
    lists = [(k, name) for k, (name, kind) in enumerate(face_props) if isinstance(kind, tuple)]
    if len(lists) != 1 or lists[0][1] not in ("vertex_indices", "vertex_index") \
            or n_vertices < 3 or n_faces < 1:
        return None
    body = data[end.end():]
    if encoding == "ascii":
        found = _ply_ascii(body, n_vertices, vertex_props, n_faces, face_props, lists[0][0])
    else:
        found = _ply_binary(body, encoding, n_vertices, vertex_props, n_faces, face_props, lists[0][0])
    if found is not None and any(u in names and v in names for u, v in _PLY_UV):
        vertices, faces = found
        if faces.min() < 0 or faces.max() >= len(vertices):
            return None  # trimesh says what is wrong with it
        return _used(vertices, faces)
    return found


def _ply_binary(body: bytes, encoding: str, n_vertices, vertex_props, n_faces, face_props, at):
    if encoding not in ("binary_little_endian", "binary_big_endian"):
        return None
    order = "<" if encoding == "binary_little_endian" else ">"
    vertex_type = np.dtype([(name, order + kind) for name, kind in vertex_props])
    vertex_bytes = n_vertices * vertex_type.itemsize
    rows = np.frombuffer(body, dtype=vertex_type, count=n_vertices)
    vertices = np.column_stack([rows[c] for c in "xyz"]).astype(np.float64)
    # every face holds as many indices as the first: then the faces are one record type
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


_READERS = {"ply": _ply, "off": _off}
