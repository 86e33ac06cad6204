"""glTF 2.0 scenes (.gltf, .glb) read straight into NumPy: the fast path of scans, without trimesh.

`read_scene` gives what trimesh's glTF parser gives gjkcli.mesh.load (``merge_primitives=True``):
every scene node that holds a mesh, in the order trimesh's parser lists them, named as trimesh
names them (the node's ``name``, or its index when it has none, made unique the way
``trimesh.util.unique_name`` does; a node called "world", trimesh's base frame, is renamed), with
its world transform, and each mesh's triangles with its primitives merged. It imports only numpy,
json and the standard library: importing trimesh alone costs about a second, and its parser builds
a quaternion matrix per node in Python.

Read: GLB (header, JSON chunk, BIN chunk) and .gltf (JSON) files; buffers in the GLB's binary
chunk, in base64 ``data:`` URIs or in files beside the glTF file (percent-encoded names decoded,
else taken as written, as trimesh takes them); POSITION (FLOAT VEC3) and index
(UNSIGNED_BYTE/SHORT/INT SCALAR) accessors through their buffer views (offsets, lengths, strides);
TRIANGLES, TRIANGLE_STRIP (as trimesh converts them) and TRIANGLE_FAN primitives (POINTS and LINES
primitives hold no triangles; a mesh of only those is reported by the caller); node ``matrix``
(column-major) and translation / rotation / scale, for all nodes at once; the scene ``scene``
(default 0), or every root node when the file has no scene. Mesh units: the mesh's
``extras.units``, else "meters" (glTF's unit, as trimesh states it).

Left to trimesh (`Unsupported`: the caller reads the file with trimesh instead): sparse or
normalized accessors, quantized positions, Draco compression (decoded by DracoPy; refused where it
is not installed, as trimesh would read every vertex as the origin), meshopt compression (refused
where a buffer is meshopt's fallback, which holds no data), any other extension the
file lists as required unless it only concerns materials, textures or lights, and camera nodes
that hold a mesh or children (trimesh drops the first camera node from its scene graph).

Refused (`InputError`, a one-line message naming the accessor, buffer view, buffer, node or byte
offset at fault): a GLB whose header length is not the file's size or whose chunks run past its
end; a buffer that claims more bytes than its chunk, data URI or file holds (checked before
anything is allocated); buffer URIs other than relative paths inside the glTF file's folder
(absolute paths, ``file:``, ``http:`` and other schemes, ``..`` escapes, links out of the folder,
devices and other non-regular files: nothing is ever fetched from the network); buffer views
outside their buffer; accessors whose elements overrun their view or whose byteStride is smaller
than an element; a POSITION or index accessor with no buffer view (zeros by the standard, no
shape); indices past their primitive's vertices; a node hierarchy that loops (a cycle, or
a node that is its own child) or a node with two parents; a node matrix whose last row is not
0 0 0 1 (a projection, which gjk would not apply); values of the wrong kind. The scene
graph is walked without recursion, so a chain of 100,000 nested nodes reads in under a
second.
"""
from __future__ import annotations

import base64
import binascii
import codecs
import contextlib
import itertools
import json
import os
import posixpath
import re
import stat
import struct
import threading
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

import numpy as np

from gjkcli.digests import READ_FILES, blake2b, blake3, chunk_digest
from gjkcli.errors import InputError

__all__ = ["Unsupported", "Mesh", "read_scene", "read_share", "only_nodes", "layout", "recording_layout",
           "forget_documents", "kept_documents"]


class Unsupported(Exception):
    """A glTF feature this reader leaves to trimesh's; the message says which."""


@dataclass(frozen=True, eq=False)
class Mesh:
    """One glTF mesh, its primitives merged, in its own frame.

    vertices : (n, 3) float64
    faces : (m, 3) int64 into `vertices`, or None when the mesh holds only points or lines
    units : the mesh's ``extras.units``, else "meters" (what trimesh's parser states)
    """

    vertices: np.ndarray
    faces: np.ndarray | None
    units: object = "meters"


# GLB framing: the "glTF" magic, and the chunk types "JSON" and "BIN\0" as little-endian uint32
_GLB_MAGIC = b"glTF"
_JSON_CHUNK = 0x4E4F534A
_BIN_CHUNK = 0x004E4942

# accessor component types and element widths
_COMPONENTS = {5120: np.dtype("<i1"), 5121: np.dtype("<u1"), 5122: np.dtype("<i2"),
               5123: np.dtype("<u2"), 5125: np.dtype("<u4"), 5126: np.dtype("<f4")}
_COMPONENT_NAMES = {5120: "BYTE", 5121: "UNSIGNED_BYTE", 5122: "SHORT", 5123: "UNSIGNED_SHORT",
                    5125: "UNSIGNED_INT", 5126: "FLOAT"}
_INDEX_COMPONENTS = (5121, 5123, 5125)
_WIDTHS = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT2": 4, "MAT3": 9, "MAT4": 16}

# primitive modes
_TRIANGLES, _STRIP, _FAN = 4, 5, 6
_NO_TRIANGLES = (0, 1, 2, 3)  # POINTS, LINES, LINE_LOOP, LINE_STRIP
_MODES = (*_NO_TRIANGLES, _TRIANGLES, _STRIP, _FAN)

# required extensions that change nothing this reader reads
_HARMLESS_EXTENSION = re.compile(r"(KHR_materials_|KHR_texture_|EXT_texture_|KHR_lights_punctual$"
                                 r"|KHR_mesh_quantization$)")
_DRACO = "KHR_draco_mesh_compression"
_MESHOPT = ("EXT_meshopt_compression", "KHR_meshopt_compression")

# trimesh.transformations: a quaternion this short stands for no rotation
_QUATERNION_EPS = np.finfo(float).eps * 4.0
# trimesh's base frame, which a node of that name must not shadow
_BASE_FRAME = "world"

_URI_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")


def read_scene(path: str | Path):
    """A glTF or GLB file's nodes and meshes, as gjkcli.mesh.load's `_read_gltf` gives them.

    Returns
    -------
    nodes : list of (name, (4, 4) float64 world transform, mesh index)
        Every node of the scene that holds a mesh, in trimesh's order.
    meshes : dict of mesh index -> Mesh

    Raises
    ------
    InputError
        The file is not valid glTF 2.0 or is unsafe to read (see the module's docstring).
    Unsupported
        The file uses a feature left to trimesh's reader.
    """
    key = str(Path(path).resolve())
    only, state = _ONLY.get(key, (None, None))
    if state is None and key not in _RECORDED:  # a range read of this process read it already
        kept = _kept_document(key, Path(path))
        if kept is not None:
            state = (kept.reader, list(kept.placed))
    reader = _Reader(Path(path)) if state is None else state[0]
    try:
        return reader.scene(only, None if state is None else state[1], key if key in _RECORDED else None)
    except (InputError, Unsupported):
        raise
    except OSError as exc:
        raise reader.fail(f"cannot read: {exc.strerror or exc}") from exc
    except RecursionError as exc:
        raise reader.fail(f"not a valid {reader.kind} file: its JSON is nested too deeply; "
                          f"re-export it") from exc
    except (KeyError, TypeError, ValueError, IndexError, AttributeError, OverflowError) as exc:
        # every field is checked where it is read, so this is a layout no check foresaw
        raise reader.fail(f"not a valid {reader.kind} file: its JSON does not have glTF 2.0's "
                          f"layout; re-export it") from exc


def read_share(path: str | Path, k: int, n: int, triangles: int):
    """(count, nodes, meshes): share k of n of `read_scene`'s nodes (a Dask scan's range of a
    file's `count` mesh nodes: k * count // n to (k + 1) * count // n, in order), reading only
    their meshes; None where such a range read alone may not give what the whole file's read
    gives for it: a node whose mesh may hold another node's content (`_alike`: their parts share
    one hull, placed), a file whose meshes may hold more than `triangles` triangles (the limit
    on the whole file's count), or a file within `only_nodes` or `recording_layout`.

    Raises what `read_scene` raises, unworded (KeyError, ...): the caller reads the whole file
    then, which words it.
    """
    key = str(Path(path).resolve())
    if key in _ONLY or key in _RECORDED:
        return None
    got = _document_of(key, Path(path))
    if got.alike or got.triangles > triangles:
        return None
    placed = got.placed
    count = len(placed)
    nodes = placed[k * count // n:(k + 1) * count // n]
    return count, nodes, got.reader._meshes(list(dict.fromkeys(m for _, _, m in nodes)))


# -- the documents range reads keep -------------------------------------------------------------------
#
# A Dask scan reads one large glTF as several ranges of its nodes, more than one a worker: each
# range needs the whole document (its JSON parsed, its nodes' names and world transforms, the
# checks on its buffers, whether its meshes are alike), which costs most of a range's read. A
# worker process keeps the last DOCUMENTS_KEPT documents its range reads parsed, named by the
# file's resolved path and checked against the file's (and its buffer files') size, change time
# and inode before each reuse; `forget_documents` drops them (the client calls it on every
# worker once the scan's files are loaded). They are kept in the process's one memo of read
# files (`gjkcli.digests.READ_FILES`), beside the binary chunk's digest the run key found.

DOCUMENTS_KEPT = 2


@dataclass(frozen=True, eq=False)
class _Document:
    """A file as a range read needs it: its reader (document, buffers read so far), its mesh
    nodes (`_Reader.placed`), whether two of them may share a hull (`_alike`) and at most how
    many triangles its meshes hold (`_triangles_at_most`)."""

    signature: tuple
    reader: "_Reader"
    placed: list
    alike: bool
    triangles: float


_PARSING_LOCK = threading.Lock()
_PARSING: dict = {}  # resolved path -> the lock its parse holds (one parse a file at a time)


def _signature(path: Path, files=()) -> tuple:
    """What tells a file (and its buffer files) changed: size, modification time, inode."""
    out = []
    for p in (path, *files):
        info = os.stat(p)
        out.append((info.st_size, info.st_mtime_ns, info.st_ino, info.st_dev))
    return tuple(out)


def _buffer_files(reader: "_Reader") -> list:
    return [source[1] for source in reader.sources if source[0] == "file"]


def _kept_document(key: str, path: Path):
    """The `_Document` this process keeps for the file, if it has not changed since; else None."""
    got = READ_FILES.document(key)
    if got is None:
        return None
    try:
        if _signature(path, _buffer_files(got.reader)) != got.signature:
            return None
    except OSError:
        return None
    READ_FILES.used(key)
    return got


def _document_of(key: str, path: Path) -> _Document:
    """The file's `_Document`: kept, else read (and kept). Raises what `_Reader.placed` raises."""
    with _PARSING_LOCK:
        parsing = _PARSING.setdefault(key, threading.Lock())
    with parsing:  # a second thread waits for the first one's parse, and reuses it
        got = _kept_document(key, path)
        if got is not None:
            return got
        before = _signature(path)
        reader = _Reader(path)
        placed = reader.placed()
        mesh = np.array([m for _, _, m in placed], dtype=np.int64)
        got = _Document(before + _signature(path, _buffer_files(reader))[1:], reader, placed,
                        bool(_alike(reader.doc, mesh).any()), _triangles_at_most(reader.doc, mesh))
        if _signature(path)[0] == before[0]:  # unchanged while read: worth keeping
            _, _, inode, device = before[0]
            READ_FILES.keep_document((device, inode), key, got, DOCUMENTS_KEPT)
        return got


def kept_documents() -> int:
    """How many documents this process's range reads keep now."""
    return READ_FILES.documents()


def forget_documents() -> int:
    """Drop the documents this process's range reads keep; how many there were."""
    with _PARSING_LOCK:
        n = READ_FILES.forget_documents()
        _PARSING.clear()
    return n


def _triangles_at_most(doc: dict, mesh: np.ndarray) -> float:
    """At least as many as the triangles of the meshes `mesh` (indices, repeated): per
    primitive of c indices (else vertices), a list makes at most c / 3 triangles (rounded up),
    a strip or fan c - 2, points and lines none, any other mode c; infinity where a count is
    not a count."""
    meshes, accessors = doc["meshes"], doc["accessors"]
    total = 0
    for m in np.unique(mesh).tolist():
        for primitive in meshes[m]["primitives"]:
            a = primitive["indices"] if "indices" in primitive else primitive["attributes"]["POSITION"]
            count = accessors[a].get("count") if type(a) is int and 0 <= a < len(accessors) else None
            if type(count) is not int or count < 0:
                return float("inf")
            mode = primitive.get("mode", _TRIANGLES)
            if type(mode) is int and mode == _TRIANGLES:
                total += -(-count // 3)
            elif type(mode) is int and mode in (_STRIP, _FAN):
                total += max(count - 2, 0)
            elif not (type(mode) is int and mode in _NO_TRIANGLES):
                total += count
    return total


# read_scene's filter while `only_nodes` runs: the file's resolved path -> the nodes' names
_ONLY: dict = {}


@contextlib.contextmanager
def only_nodes(path, names, state=None):
    """While the block runs, `read_scene(path)` gives only the nodes named in `names` and reads
    only their meshes (the others' names and order as a whole read gives them): a re-scan
    builds the parts that moved and their neighbours (`gjkcli.pipeline.rescan`). state : the
    file as `layout` read it (its document is not read again)."""
    key = str(Path(path).resolve())
    _ONLY[key] = (frozenset(names), state)
    try:
        yield
    finally:
        _ONLY.pop(key, None)


def layout(path):
    """A file's nodes as a re-scan compares them with the last scan's, read from its JSON
    without building a mesh; None where this does not follow the file (its buffers outside a
    GLB's chunk).

    Returns
    -------
    names : list of str, the mesh nodes as `read_scene` gives them
    world : (k, 4, 4) float64, their world transforms
    mesh : (k,) int64, their meshes' indices
    geometry : bytes, BLAKE2b of the meshes', accessors' and buffer views' JSON and of the
        binary chunk's BLAKE3 digest (hashed once a run: `gjkcli.digests.chunk_digest`): while it is
        the same, a node of the same mesh and transform is the same part
    rest : bytes, BLAKE2b of the document but its nodes, meshes, accessors and views
    boxes : callable, node positions -> (m, 2, 3) float64: the box of each one's mesh's
        vertices, placed (the part's box, up to rounding); None where a mesh cannot be read
    state : the file as read, for `only_nodes`
    alike : (k,) bool, the nodes whose parts may share a hull with another node's (`_alike`):
        a read of some nodes alone may not build them as a whole read does
    """
    reader = _Reader(Path(path))
    try:
        placed = reader.placed()
    except (InputError, Unsupported, OSError, KeyError, TypeError, ValueError, IndexError,
            AttributeError, RecursionError, OverflowError):
        return None
    return _layout_of(reader, placed)


# `recording_layout`: the files whose whole read keeps their `layout`, and what it kept. Not in
# the memo of read files (`gjkcli.digests.READ_FILES`) beside the document and chunk digest: an
# entry here is an order given before the file is opened (`read_share` and `read_scene` change
# course on its presence, as on `_ONLY`'s), and it lives exactly as long as the `with` block,
# whatever the file's inode or modification time; the memo drops documents past its bound and
# passes over a file that changed, which would drop the order mid-block.
_RECORDED: dict = {}


@contextlib.contextmanager
def recording_layout(path):
    """While the block runs, a whole `read_scene(path)` keeps the file's `layout` (its document
    read once), but its `boxes` and `state` (None: the read's document is not kept): the block
    gets a callable giving it, then and after (None without a read)."""
    key = str(Path(path).resolve())
    _RECORDED[key] = None
    kept: list = []
    try:
        yield lambda: kept[0] if kept else _RECORDED.get(key)
    finally:
        kept.append(_RECORDED.pop(key, None))


def _layout_of(reader, placed):
    """`layout` of a file `reader` read, its nodes `placed`."""
    try:
        doc = reader.doc
        if reader.chunk is None or any(source[0] != "chunk" for source in reader.sources):
            return None
        h = blake2b(digest_size=20)
        for key in ("meshes", "accessors", "bufferViews"):
            h.update(_text(doc.get(key)))
        # the binary chunk's digest: the run key's hash of the file kept it (`chunk_digest`)
        known = None if reader.stat is None else chunk_digest(reader.stat, *reader.chunk_at)
        h.update(known if known is not None else blake3(reader.chunk, digest_size=20).digest())
        rest = {k: v for k, v in doc.items() if k not in ("nodes", "meshes", "accessors", "bufferViews")}
        rest = blake2b(_text(rest), digest_size=20).digest()
    except (InputError, Unsupported, OSError, KeyError, TypeError, ValueError, IndexError,
            AttributeError, RecursionError, OverflowError):
        return None
    world = np.array([w for _, w, _ in placed], dtype=np.float64).reshape(-1, 4, 4)
    mesh = np.array([m for _, _, m in placed], dtype=np.int64)
    alike = _alike(doc, mesh)

    def boxes(which) -> np.ndarray | None:
        which = [int(k) for k in which]
        out = np.zeros((len(which), 2, 3))
        try:
            meshes = reader._meshes(list(dict.fromkeys(int(mesh[k]) for k in which)))
        except (InputError, Unsupported, OSError, KeyError, TypeError, ValueError, IndexError,
                AttributeError, OverflowError):
            return None
        for row, k in enumerate(which):
            v = meshes[int(mesh[k])].vertices
            if v is None or len(v) == 0:
                return None
            placed_vertices = v @ world[k, :3, :3].T + world[k, :3, 3]
            out[row, 0], out[row, 1] = placed_vertices.min(axis=0), placed_vertices.max(axis=0)
        return out

    return [name for name, _, _ in placed], world, mesh, h.digest(), rest, boxes, (reader, placed), alike


def _alike(doc: dict, mesh: np.ndarray) -> np.ndarray:
    """(k,) bool per node: another node places its mesh, or a mesh that may hold the same
    content (the same primitives' modes, counts and POSITION bounds): such parts may share one
    hull, placed (`gjkcli.mesh.load`'s instances), which a read of some nodes alone would not
    see."""
    accessors = doc.get("accessors", [])
    signatures: dict = {}
    of_mesh = []
    for m, item in enumerate(doc.get("meshes", [])):
        try:
            signature = []
            for primitive in item["primitives"]:
                position = accessors[primitive["attributes"]["POSITION"]]
                indices = primitive.get("indices")
                signature += (position.get("count"), *position.get("min", ()), *position.get("max", ()),
                              None if indices is None else accessors[indices].get("count"),
                              primitive.get("mode"), "|")
            of_mesh.append(signatures.setdefault(tuple(signature), len(signatures)))
        except (KeyError, TypeError, IndexError, AttributeError):  # unhashable too: a mesh of its own
            of_mesh.append(signatures.setdefault(("unread", m), len(signatures)))
    if not len(mesh):
        return np.zeros(0, dtype=bool)
    slot = np.array(of_mesh, dtype=np.int64)[mesh]
    return np.bincount(slot, minlength=len(signatures))[slot] > 1


# `_long_integer`: every digit as "0", and a run of 19
_AS_ZEROS = bytes.maketrans(b"123456789", b"000000000")
_RUN = b"0" * 19


def _long_integer(raw: bytes) -> bool:
    """Whether JSON text `raw` may hold an integer of 19 digits or more (a run of digits not
    after ".", "e" or "E"), which orjson reads as a float past 64 bits and json as the integer.
    The digits found by bytes' own calls, not a pattern tried at every place (7 MB of JSON)."""
    digits = raw.translate(_AS_ZEROS)
    at = digits.find(_RUN)
    while at >= 0:
        start = at
        while start > 0 and digits[start - 1] == 48:  # back to the run's first digit
            start -= 1
        if start == 0 or raw[start - 1] not in b".eE":
            return True
        end = at + len(_RUN)
        while end < len(digits) and digits[end] == 48:
            end += 1
        at = digits.find(_RUN, end)
    return False


def _json_document(raw: bytes):
    """`json.loads(raw.decode("utf-8-sig"))`: orjson's where it reads the text as json does (a
    10,000-node file's 7 MB of JSON in a third of the time; floats to the same bits, the last
    of repeated keys), json's where orjson refuses it (NaN and infinities, lone surrogates:
    json's error or answer) or may read it otherwise (long integers). ValueError as json's."""
    import orjson

    if not _long_integer(raw):
        try:  # orjson reads UTF-8 bytes itself, sooner than their decoded text
            return orjson.loads(raw[len(codecs.BOM_UTF8):] if raw.startswith(codecs.BOM_UTF8) else raw)
        except orjson.JSONDecodeError:
            pass
    return json.loads(raw.decode("utf-8-sig"))


def _draco_decoder() -> bool:
    """Whether DracoPy, through which trimesh decodes Draco-compressed primitives, is installed
    (a dependency of gjk; an environment may still lack it)."""
    import importlib.util

    return importlib.util.find_spec("DracoPy") is not None


def _text(value) -> bytes:
    """JSON data as text to hash: orjson's (fast), or repr's where orjson refuses it (an
    integer past 64 bits)."""
    import orjson

    try:
        return orjson.dumps(value)
    except TypeError:
        return repr(value).encode()


class _Reader:
    """One file: its JSON document, its buffers (read on first use) and the checks on both."""

    def __init__(self, path: Path):
        self.path = path
        self.kind = "GLB" if path.suffix.lower() == ".glb" else "glTF"
        self.chunk = None  # the GLB's binary chunk
        self.chunk_at = None  # its data's place in the file (start, end)
        self.stat = None  # the file's os.stat as it was read
        self.doc = None
        self.sources: list = []  # per buffer: ("chunk",), ("data", payload) or ("file", path)
        self.lengths: list[int] = []  # per buffer: its byteLength, checked against its source
        self.loaded: dict = {}
        self.views: dict = {}
        self._view_buffer: dict = {}
        self.names: list[str] = []

    def fail(self, message: str) -> InputError:
        return InputError(self.path, message)

    # -- the whole scene --------------------------------------------------------------------------

    def scene(self, only=None, placed=None, record=None):
        """read_scene's answer; only : the names of the nodes to keep (`only_nodes`), or None;
        placed : what `placed` gave, when this reader read the file before; record : the key
        under which to keep the file's `layout` (`recording_layout`), or None."""
        out = self.placed() if placed is None else placed
        if record is not None and only is None:  # not the reader itself: its document is large
            got = _layout_of(self, out)
            _RECORDED[record] = None if got is None else (*got[:5], None, None, got[7])
        if only is not None:
            out = [node for node in out if node[0] in only]
        return out, self._meshes(list(dict.fromkeys(m for _, _, m in out)))

    def placed(self) -> list:
        """[(name, world transform, mesh index)] of the nodes that hold a mesh, checked, without
        reading a mesh."""
        self.doc = self._document()
        self._check_version()
        self._check_buffers()  # before anything is left to trimesh: its resolver is laxer
        self._check_required_extensions()
        nodes = self._list(self.doc, "nodes", "the file")
        for k, node in enumerate(nodes):
            if not isinstance(node, dict):
                raise self.fail(f"node {k} is not a JSON object; re-export the file")
        self.names = _node_names(nodes, self)
        order, parent, depth = self._walk(nodes)
        placed = [nodes[k] for k in order]
        for k, node in zip(order, placed):
            if "camera" in node and ("mesh" in node or node.get("children")):
                raise Unsupported(f"node {self._node(k)} holds a camera and a mesh or children")
        world = _world_transforms(self._local_transforms(placed, order), parent, depth)
        out = []
        n_meshes = len(self._list(self.doc, "meshes", "the file"))
        for position, (k, node) in enumerate(zip(order, placed)):
            if "mesh" not in node:
                continue
            m = node["mesh"]
            if type(m) is not int or not 0 <= m < n_meshes:
                self._index(m, n_meshes, f"the mesh of node {self._node(k)}", "mesh")
            out.append((self.names[k], world[position], m))
        return out

    # -- the container ------------------------------------------------------------------------------

    def _document(self) -> dict:
        with open(self.path, "rb") as stream:
            if self.kind == "GLB":
                self.stat = os.fstat(stream.fileno())
                text = self._glb_json(stream, self.stat.st_size)
            else:
                text = stream.read()
        where = "its JSON chunk is" if self.kind == "GLB" else "it is"
        try:
            doc = _json_document(text.rstrip(b"\0 \t\r\n"))
        except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
            raise self.fail(f"not a valid {self.kind} file ({where} not JSON: "
                            f"{_short(str(exc), 80)}); re-export it") from exc
        if not isinstance(doc, dict):
            raise self.fail(f"not a valid {self.kind} file ({where} not a JSON object); "
                            f"re-export it")
        return doc

    def _glb_json(self, stream, size: int) -> bytes:
        """The JSON chunk's bytes; keeps the BIN chunk. Every length is checked against the
        file's size before anything that long is read."""
        head = stream.read(12)
        if len(head) < 12 or head[:4] != _GLB_MAGIC:
            raise self.fail("not a valid GLB file (it does not start with the GLB signature "
                            "'glTF'); re-export it")
        version, length = struct.unpack("<II", head[4:])
        if version != 2:
            raise self.fail(f"is a GLB file of version {version}; gjk reads glTF 2.0: re-export "
                            f"it as glTF 2.0")
        if length != size:
            what = "truncated" if size < length else "extra bytes follow its end"
            raise self.fail(f"not a valid GLB file: its header gives a length of {length} bytes "
                            f"but the file has {size} ({what}); re-export it")
        text, position, k = None, 12, 0
        while position < size:
            if size - position < 8:
                raise self.fail(f"not a valid GLB file: {size - position} stray bytes after its "
                                f"last chunk (at byte {position}); re-export it")
            chunk_length, chunk_type = struct.unpack("<II", stream.read(8))
            position += 8
            if chunk_length > size - position:
                raise self.fail(f"not a valid GLB file: chunk {k} (at byte {position - 8}) "
                                f"claims {chunk_length} bytes but only {size - position} follow "
                                f"(truncated); re-export it")
            if k == 0:
                if chunk_type != _JSON_CHUNK:
                    raise self.fail("not a valid GLB file: its first chunk is not the JSON "
                                    "chunk; re-export it")
                text = stream.read(chunk_length)
            elif chunk_type == _BIN_CHUNK and self.chunk is None:
                self.chunk = stream.read(chunk_length)
                self.chunk_at = (position, position + chunk_length)
            elif chunk_type in (_JSON_CHUNK, _BIN_CHUNK):
                raise self.fail(f"not a valid GLB file: chunk {k} (at byte {position - 8}) is a "
                                f"second {'JSON' if chunk_type == _JSON_CHUNK else 'binary'} "
                                f"chunk; re-export it")
            else:  # glTF: chunks of unknown types are skipped
                stream.seek(chunk_length, os.SEEK_CUR)
            position += chunk_length
            k += 1
        if text is None:
            raise self.fail("not a valid GLB file: it has no JSON chunk; re-export it")
        return text

    def _check_version(self) -> None:
        asset = self.doc.get("asset", {})
        version = asset.get("version", "2.0") if isinstance(asset, dict) else "2.0"
        try:
            major = int(str(version).split(".", 1)[0])
        except ValueError:
            raise self.fail(f"not a valid glTF file: its asset version {_short(repr(version))} "
                            f"is not a version number; re-export it") from None
        if major < 2:
            raise self.fail(f"is a glTF {_short(str(version))} file; gjk reads glTF 2.0: "
                            f"re-export it as glTF 2.0")

    def _check_required_extensions(self) -> None:
        required = self._list(self.doc, "extensionsRequired", "the file")
        for name in required:
            if name == _DRACO and not _draco_decoder():  # trimesh would read every vertex as the origin
                raise self.fail("the file is Draco-compressed, and DracoPy, which decodes it, is not "
                                "installed: pip install DracoPy")
            if not isinstance(name, str) or not _HARMLESS_EXTENSION.match(name):
                raise Unsupported(f"the file requires the extension {name!r}")

    # -- buffers ------------------------------------------------------------------------------------

    def _check_buffers(self) -> None:
        """Where each buffer's bytes are, and that they are all there: nothing is read yet."""
        for i, buffer in enumerate(self._list(self.doc, "buffers", "the file")):
            if not isinstance(buffer, dict):
                raise self.fail(f"buffer {i} is not a JSON object; re-export the file")
            if "byteLength" not in buffer:
                raise self.fail(f"buffer {i} has no byteLength; re-export the file")
            declared = self._count(buffer["byteLength"], f"the byteLength of buffer {i}")
            uri = buffer.get("uri")
            extensions = buffer.get("extensions")
            if uri is None and type(extensions) is dict and any(name in extensions for name in _MESHOPT):
                # the fallback of a meshopt-compressed buffer view: its data lives compressed elsewhere
                raise self.fail(f"buffer {i} is the fallback of meshopt-compressed data "
                                f"({'/'.join(name for name in _MESHOPT if name in extensions)}), "
                                f"which gjk does not decode; re-export the file without meshopt "
                                f"compression")
            if uri is None:
                if self.kind != "GLB" or i != 0:
                    raise self.fail(f"buffer {i} has no uri: its data is nowhere; re-export the "
                                    f"file")
                if self.chunk is None:
                    raise self.fail("buffer 0 lives in the GLB's binary chunk, but the file has "
                                    "none (truncated?); re-export it")
                source, available = ("chunk",), len(self.chunk)
                where = "the GLB's binary chunk holds"
            elif not isinstance(uri, str):
                raise self.fail(f"buffer {i} has a uri that is not text; re-export the file")
            elif uri[:5].lower() == "data:":
                header, comma, payload = uri.partition(",")
                if not comma or not header.lower().endswith(";base64"):
                    raise self.fail(f"buffer {i} is a data: URI that is not base64; re-export "
                                    f"the file")
                source = ("data", payload)
                available = len(payload) * 3 // 4 - (len(payload) - len(payload.rstrip("=")))
                where = "its data: URI holds"
            else:
                target, available = self._buffer_file(i, uri)
                source = ("file", target)
                where = f"the file '{_short(uri)}' has"
            if declared > available:
                raise self.fail(f"buffer {i} claims {declared} bytes but {where} only {available} "
                                f"(truncated or corrupt); re-export the file")
            self.sources.append(source)
            self.lengths.append(declared)

    def _buffer_file(self, i: int, uri: str) -> tuple[Path, int]:
        """A buffer file: a relative path to a regular file inside the glTF file's folder."""
        shown = _short(uri)
        rule = "gjk reads buffers only from files in the glTF file's folder, named relative to it"
        scheme = _URI_SCHEME.match(uri)
        if scheme:
            raise self.fail(f"buffer {i} refers to '{shown}', a URI with the scheme "
                            f"'{scheme.group(0)}'; {rule} (nothing is fetched from elsewhere)")
        folder = self.path.absolute().parent.resolve()
        # a URI is percent-encoded ("my%20part.bin"); trimesh takes it as written, so that
        # name is tried too when the decoded one is not there
        for name in dict.fromkeys((unquote(uri).strip(), uri.strip())):
            if "\0" in name or not name:
                raise self.fail(f"buffer {i} has an unusable uri '{shown}'; re-export the file")
            if name.startswith(("/", "\\")) or os.path.isabs(name):
                raise self.fail(f"buffer {i} refers to '{shown}', an absolute path; {rule}")
            if posixpath.normpath(name.replace("\\", "/")).split("/")[0] == "..":
                raise self.fail(f"buffer {i} refers to '{shown}', outside the glTF file's "
                                f"folder ('..'); {rule}")
            target = (folder / name).resolve()
            if not target.is_relative_to(folder):
                raise self.fail(f"buffer {i} refers to '{shown}', which leads outside the glTF "
                                f"file's folder (through a link); {rule}")
            try:
                info = target.stat()
                break
            except FileNotFoundError:
                continue
            except OSError as exc:
                raise self.fail(f"cannot read buffer {i} ('{shown}'): "
                                f"{exc.strerror or exc}") from exc
        else:
            raise self.fail(f"a file it refers to is missing (buffer {i}: '{shown}'); keep it "
                            f"beside the file")
        if not stat.S_ISREG(info.st_mode):
            raise self.fail(f"buffer {i} refers to '{shown}', which is not a regular file (a "
                            f"folder, device or pipe); {rule}")
        return target, info.st_size

    def _buffer(self, i: int) -> bytes:
        """Buffer i's bytes (its byteLength of them), read once."""
        if i in self.loaded:
            return self.loaded[i]
        source, declared = self.sources[i], self.lengths[i]
        if source[0] == "chunk":
            data = self.chunk
        elif source[0] == "data":
            try:
                data = base64.b64decode(source[1])
            except (binascii.Error, ValueError) as exc:
                raise self.fail(f"buffer {i} is a data: URI that is not valid base64; re-export "
                                f"the file") from exc
        else:
            with open(source[1], "rb") as stream:
                data = stream.read(declared)
        if len(data) < declared:
            raise self.fail(f"buffer {i} claims {declared} bytes but holds only {len(data)} "
                            f"(truncated); re-export the file")
        self.loaded[i] = data
        return data

    def _view(self, v: int, what: str):
        """(bytes, start, length, byteStride or None) of buffer view v, checked once."""
        if v in self.views:
            return self.views[v]
        view = self._item("bufferViews", v, f"the buffer view of {what}", "buffer view")
        extensions = view.get("extensions")
        if isinstance(extensions, dict) and any(name in extensions for name in _MESHOPT):
            raise Unsupported(f"buffer view {v} is meshopt-compressed")
        b = self._index(view.get("buffer"), len(self.lengths), f"the buffer of buffer view {v}",
                        "buffer")
        start = self._count(view.get("byteOffset", 0), f"the byteOffset of buffer view {v}")
        if "byteLength" not in view:
            raise self.fail(f"buffer view {v} has no byteLength; re-export the file")
        length = self._count(view["byteLength"], f"the byteLength of buffer view {v}")
        if start + length > self.lengths[b]:
            raise self.fail(f"buffer view {v} covers bytes {start} to {start + length} of buffer "
                            f"{b}, which has only {self.lengths[b]}; re-export the file")
        stride = view.get("byteStride")
        if stride is not None:
            stride = self._count(stride, f"the byteStride of buffer view {v}")
            if stride == 0:
                raise self.fail(f"buffer view {v} has byteStride 0; re-export the file")
        self.views[v] = (self._buffer(b), start, length, stride)
        self._view_buffer[v] = b
        return self.views[v]

    def _accessor(self, a, what: str, positions: bool) -> np.ndarray:
        """Accessor a as a (count, width) array viewing its buffer (no copy): the POSITION
        (FLOAT VEC3) of a primitive, or its indices (unsigned SCALAR)."""
        accessor = self._item("accessors", a, what, "accessor")
        a = int(a)
        what = f"accessor {a} ({what})"
        if accessor.get("sparse") is not None:
            raise Unsupported(f"{what} is sparse")
        if accessor.get("normalized"):
            raise Unsupported(f"{what} is normalized")
        component, kind = accessor.get("componentType"), accessor.get("type")
        if component not in _COMPONENTS or isinstance(component, bool):
            raise self.fail(f"{what} has component type {_short(repr(component))}, which glTF "
                            f"does not define; re-export the file")
        if kind not in _WIDTHS:
            raise self.fail(f"{what} has type {_short(repr(kind))}, which glTF does not define; "
                            f"re-export the file")
        if positions:
            if kind != "VEC3":
                raise self.fail(f"{what} holds {kind} values, not the 3D points (VEC3) vertex "
                                f"positions are; re-export the file")
            if component != 5126:
                raise Unsupported(f"{what} holds quantized positions "
                                  f"({_COMPONENT_NAMES[component]})")
        elif kind != "SCALAR" or component not in _INDEX_COMPONENTS:
            raise self.fail(f"{what} holds {kind} {_COMPONENT_NAMES[component]} values, not the "
                            f"unsigned integers (SCALAR) indices are; re-export the file")
        if "count" not in accessor:
            raise self.fail(f"{what} has no count; re-export the file")
        count = self._count(accessor["count"], f"the count of {what}")
        if "bufferView" not in accessor:
            raise self.fail(f"{what} has no data (no bufferView); re-export the file")
        v = self._index(accessor["bufferView"], len(self._list(self.doc, "bufferViews", "the file")),
                        f"the buffer view of {what}", "buffer view")
        data, start, length, stride = self._view(v, what)
        dtype, width = _COMPONENTS[component], _WIDTHS[kind]
        element = dtype.itemsize * width
        offset = self._count(accessor.get("byteOffset", 0), f"the byteOffset of {what}")
        step = element if stride is None else stride
        if step < element:
            raise self.fail(f"{what} has elements of {element} bytes but its buffer view {v} has "
                            f"byteStride {stride}, so they would overlap; re-export the file")
        end = offset + (count - 1) * step + element if count else offset
        if end > length:
            layout = f", {step} bytes apart" if stride is not None else ""
            raise self.fail(f"{what} needs bytes {offset} to {end} of buffer view {v} ({count} "
                            f"elements of {element} bytes{layout}) but the view has only {length}; "
                            f"re-export the file")
        if count == 0:
            return np.empty((0, width), dtype=dtype)
        return np.ndarray((count, width), dtype=dtype, buffer=data, offset=start + offset,
                          strides=(step, dtype.itemsize))

    # -- meshes ---------------------------------------------------------------------------------------

    def _meshes(self, wanted: list) -> dict:
        """{m: Mesh} of the meshes `wanted`: each one's triangle primitives merged, as trimesh
        merges them (vertices concatenated in primitive order, indices shifted to match).

        Done for all meshes at once: a scene of 10,000 one-primitive meshes costs a few Python
        steps per mesh, and its arrays are gathered, checked and converted in a handful of NumPy
        calls.
        """
        meshes = self._list(self.doc, "meshes", "the file")
        rows = []  # (mesh, primitive, mode, POSITION accessor, indices accessor or None)
        units = {}
        for m in wanted:
            mesh = meshes[m]
            if type(mesh) is not dict:
                raise self.fail(f"mesh {m} is not a JSON object; re-export the file")
            extras = mesh.get("extras")
            units[m] = extras["units"] if type(extras) is dict and "units" in extras else "meters"
            primitives = mesh.get("primitives", [])
            if type(primitives) is not list:
                self._list(mesh, "primitives", self._mesh_label(m))
            for k, primitive in enumerate(primitives):
                if type(primitive) is not dict:
                    raise self.fail(f"{self._where(m, k)} is not a JSON object; re-export the file")
                extensions = primitive.get("extensions")
                if extensions and type(extensions) is dict and _DRACO in extensions:
                    if not _draco_decoder():  # trimesh would read its vertices as the origin, silently
                        raise self.fail(f"{self._where(m, k)} is Draco-compressed, and DracoPy, which "
                                        f"decodes it, is not installed: pip install DracoPy")
                    raise Unsupported(f"{self._where(m, k)} is Draco-compressed")
                mode = primitive.get("mode", _TRIANGLES)
                if type(mode) is not int or mode not in _MODES:
                    raise self.fail(f"{self._where(m, k)} has drawing mode {_short(repr(mode))}, "
                                    f"which glTF does not define; re-export the file")
                if mode in _NO_TRIANGLES:
                    continue  # points and lines: no triangles
                attributes = primitive.get("attributes")
                if type(attributes) is not dict or "POSITION" not in attributes:
                    raise self.fail(f"{self._where(m, k)} has no POSITION attribute (no "
                                    f"vertices); re-export the file")
                rows.append((m, k, mode, attributes["POSITION"],
                             primitive["indices"] if "indices" in primitive else None))
        points, point_at = self._accessors([(r[3], r[0], r[1]) for r in rows], True)
        indexed = [r for r in rows if r[4] is not None]
        index, index_at = self._accessors([(r[4], r[0], r[1]) for r in indexed], False)
        index = index.reshape(-1)

        # every primitive's indices within its own vertices, all checked at once
        if indexed:
            spans = np.array([index_at[r[4]] for r in indexed], dtype=np.int64).reshape(-1, 2)
            highest = np.full(len(indexed), -1, dtype=np.int64)
            filled = spans[:, 1] > 0
            if filled.any():  # reduceat over the accessors' back-to-back slices of `index`
                order = np.argsort(spans[filled, 0], kind="stable")
                starts = spans[filled, 0][order]
                unique, first = np.unique(starts, return_index=True)
                maxima = np.maximum.reduceat(index, unique) if len(index) else unique
                # a slice runs to the next accessor's start; the last one to the end
                picked = np.empty(int(filled.sum()), dtype=np.int64)
                picked[order] = maxima[np.searchsorted(unique, starts)]
                highest[filled] = picked
            n_points = np.array([point_at[r[3]][1] for r in indexed], dtype=np.int64)
            past = highest >= n_points
            if past.any():
                j = int(np.argmax(past))
                m, k, _, _, a = indexed[j]
                raise self.fail(f"{self._where(m, k)} has index {highest[j]}, past its "
                                f"{n_points[j]} vertices (accessor {a}); re-export the file")

        parts: dict = {m: [] for m in wanted}
        for m, k, mode, a, i in rows:
            parts[m].append((k, mode, a, i))
        out = {}
        for m in wanted:
            found = parts[m]
            if len(found) == 1 and found[0][1] == _TRIANGLES and found[0][3] is not None:
                k, _, a, i = found[0]  # the common case: one indexed triangle list
                start, n = point_at[a]
                first, count = index_at[i]
                if count % 3:
                    raise self._not_whole_triangles(m, k, count)
                out[m] = Mesh(points[start:start + n],
                              index[first:first + count].reshape(-1, 3), units[m])
                continue
            if not found:
                out[m] = Mesh(np.zeros((0, 3)), None, units[m])
                continue
            vertices, faces, offset = [], [], 0
            for k, mode, a, i in found:
                start, n = point_at[a]
                if i is None:
                    corners = np.arange(n, dtype=np.int64)
                else:
                    first, count = index_at[i]
                    corners = index[first:first + count]
                faces.append(self._triangles(mode, corners, m, k) + offset)
                vertices.append(points[start:start + n])
                offset += n
            out[m] = Mesh(np.concatenate(vertices), np.concatenate(faces), units[m])
        return out

    def _accessors(self, uses: list, positions: bool):
        """The accessors of (accessor, mesh, primitive) uses, read into one array.

        POSITION accessors (FLOAT VEC3) give (n, 3) float64, indices (unsigned SCALAR) (n, 1)
        int64; `at` maps each accessor to (its first row, its count). The common layout is
        checked in a tight loop, and with NumPy for all at once, and read by one gather per
        buffer and component type; an accessor that does not fit it, or fails a check, goes
        through `_accessor`, which reads it or says precisely what is wrong.
        """
        accessors = self._list(self.doc, "accessors", "the file")
        views = self._list(self.doc, "bufferViews", "the file")
        n_accessors, n_views = len(accessors), len(views)
        role = "POSITION" if positions else "indices"
        width = 3 if positions else 1
        target = np.float64 if positions else np.int64
        first_use: dict = {}
        for a, m, k in uses:
            if type(a) is not int:  # unhashable or odd: `_accessor` words it
                self._accessor(a, f"the {role} of {self._where(m, k)}", positions)
            first_use.setdefault(a, (m, k))
        odd, plain = {}, []
        for a in first_use:
            acc = accessors[a] if 0 <= a < n_accessors else None
            if type(acc) is dict:
                component, count = acc.get("componentType"), acc.get("count")
                v, offset = acc.get("bufferView"), acc.get("byteOffset", 0)
                if (acc.get("type") == ("VEC3" if positions else "SCALAR")
                        and type(component) is int
                        and (component == 5126 if positions else component in _INDEX_COMPONENTS)
                        and type(count) is int and count >= 0 and type(offset) is int
                        and offset >= 0 and type(v) is int and 0 <= v < n_views
                        and acc.get("sparse") is None and not acc.get("normalized")):
                    plain.append((a, v, offset, count, component))
                    continue
            m, k = first_use[a]
            odd[a] = self._accessor(a, f"the {role} of {self._where(m, k)}", positions)
        pieces, at, row = [], {}, 0
        if plain:
            layout = {v: self._plain_view(v, views[v]) for v in dict.fromkeys(p[1] for p in plain)}
            table = np.array([(offset, count, _COMPONENTS[component].itemsize, component,
                               *layout[v])
                              for _, v, offset, count, component in plain], dtype=np.int64)
            offset, count, itemsize, component, buffer, start, length, stride = table.T
            element = itemsize * width
            step = np.where(stride > 0, stride, element)
            end = np.where(count > 0, offset + (count - 1) * step + element, offset)
            bad = (step < element) | (end > length)
            for j in np.flatnonzero(bad).tolist():  # `_accessor` raises, naming what is wrong
                a = plain[j][0]
                m, k = first_use[a]
                odd[a] = self._accessor(a, f"the {role} of {self._where(m, k)}", positions)
            first = start + offset  # byte of each accessor's first element
            aligned = ~bad & (first % itemsize == 0) & (step % itemsize == 0)
            for j in np.flatnonzero(~bad & ~aligned).tolist():  # legal only with padding tricks
                a, v = plain[j][0], plain[j][1]
                odd[a] = np.ndarray((int(count[j]), width), dtype=_COMPONENTS[int(component[j])],
                                    buffer=self._buffer(int(buffer[j])), offset=int(first[j]),
                                    strides=(int(step[j]), int(itemsize[j])))
            # the aligned ones: one gather per (buffer, component type), in accessor order
            groups = {}
            for j in np.flatnonzero(aligned).tolist():
                groups.setdefault((int(buffer[j]), int(component[j])), []).append(j)
            for (b, c), members in groups.items():
                members = np.array(members, dtype=np.int64)
                dtype = _COMPONENTS[c]
                data = self._buffer(b)
                typed = np.frombuffer(data, dtype=dtype, count=len(data) // dtype.itemsize)
                counts = count[members]
                total = int(counts.sum())
                begin = np.cumsum(counts) - counts
                head = first[members] // dtype.itemsize  # in elements of `typed`
                if (step[members] == element[members]).all():  # packed: slices, joined
                    values = np.concatenate(
                        [typed[h:h + n] for h, n in zip(head.tolist(), (counts * width).tolist())]
                        + [np.zeros(0, dtype=dtype)])
                else:  # interleaved: one gather
                    element_of = np.arange(total, dtype=np.int64) - np.repeat(begin, counts)
                    rows = (np.repeat(head, counts)
                            + element_of * np.repeat(step[members] // dtype.itemsize, counts))
                    values = typed[rows[:, None] + np.arange(width)]
                pieces.append(values.reshape(total, width).astype(target))
                for j, b0, n in zip(members.tolist(), (begin + row).tolist(), counts.tolist()):
                    at[plain[j][0]] = (b0, n)
                row += total
        for a, values in odd.items():
            values = np.asarray(values).reshape(-1, width)
            pieces.append(values.astype(target))
            at[a] = (row, len(values))
            row += len(values)
        if not pieces:
            return np.zeros((0, width), dtype=target), at
        return (pieces[0] if len(pieces) == 1 else np.concatenate(pieces)), at

    def _plain_view(self, v: int, view) -> tuple:
        """(buffer, start, byteLength, byteStride or 0) of buffer view v, checked; `_view` for
        the odd ones."""
        if type(view) is dict:
            b, start = view.get("buffer"), view.get("byteOffset", 0)
            length, stride = view.get("byteLength"), view.get("byteStride", 0)
            extensions = view.get("extensions")
            if (type(b) is int and 0 <= b < len(self.lengths) and type(start) is int
                    and start >= 0 and type(length) is int and length >= 0
                    and start + length <= self.lengths[b] and type(stride) is int and stride >= 0
                    and not (extensions and type(extensions) is dict
                             and any(name in extensions for name in _MESHOPT))
                    and (stride > 0 or "byteStride" not in view)):
                return b, start, length, stride
        _, start, length, stride = self._view(v, f"buffer view {v}")
        return self._view_buffer[v], start, length, stride or 0

    def _where(self, m: int, k: int) -> str:
        return f"primitive {k} of {self._mesh_label(m)}"

    def _mesh_label(self, m: int) -> str:
        mesh = self._list(self.doc, "meshes", "the file")[m]
        name = mesh.get("name") if type(mesh) is dict else None
        return f"mesh '{_short(name)}' (index {m})" if type(name) is str else f"mesh {m}"

    def _not_whole_triangles(self, m: int, k: int, count: int) -> InputError:
        return self.fail(f"{self._where(m, k)} lists {count} vertices for its triangles, not a "
                         f"multiple of 3; re-export the file")

    def _triangles(self, mode: int, index: np.ndarray, m: int, k: int) -> np.ndarray:
        if mode == _TRIANGLES:
            if len(index) % 3:
                raise self._not_whole_triangles(m, k, len(index))
            return index.reshape(-1, 3)
        if len(index) < 3:
            return np.zeros((0, 3), dtype=np.int64)
        if mode == _STRIP:  # as trimesh.util.triangle_strips_to_faces: every other one flipped
            tri = np.column_stack([index[:-2], index[1:-1], index[2:]])
            tri[1::2] = tri[1::2, ::-1]
            return tri
        return np.column_stack([np.full(len(index) - 2, index[0]), index[1:-1], index[2:]])

    # -- nodes ----------------------------------------------------------------------------------------

    def _walk(self, nodes: list):
        """The scene's nodes in trimesh's order, with each one's parent (a position in that
        order, -1 for a root) and depth.

        trimesh's parser pops (parent, child) edges off a stack seeded with the scene's roots in
        order, pushing each node's children in order; this walks the same way, without
        recursion, and refuses a node reached twice (a loop, or two parents).
        """
        n = len(nodes)
        children = [node.get("children") or [] for node in nodes]
        try:  # one pass over all nodes; `_children` finds and words a culprit
            fine = {type(kids) for kids in children} <= {list}
            every = [c for kids in children for c in kids] if fine else []
            fine = fine and {type(c) for c in every} <= {int} and (
                not every or (min(every) >= 0 and max(every) < n))
        except TypeError:
            fine = False
        if not fine:
            children = [self._children(k, node, n) for k, node in enumerate(nodes)]
        scenes = self._list(self.doc, "scenes", "the file")
        if scenes:
            s = self._index(self.doc.get("scene", 0), len(scenes), "the file's scene", "scene")
            scene = scenes[s]
            if not isinstance(scene, dict):
                raise self.fail(f"scene {s} is not a JSON object; re-export the file")
            roots = [self._index(r, n, f"a root node of scene {s}", "node")
                     for r in self._list(scene, "nodes", f"scene {s}")]
        else:  # no scene: every node that is no node's child
            has_parent = np.zeros(n, dtype=bool)
            has_parent[[c for kids in children for c in kids]] = True
            roots = np.flatnonzero(~has_parent).tolist()
        if fine and not every:  # no node has children: the roots, as the stack pops them
            order = list(dict.fromkeys(reversed(roots)))  # a root listed twice: its first pop
            return order, np.full(len(order), -1, dtype=np.int64), np.zeros(len(order), dtype=np.int64)
        parent_of = [-2] * n  # -2: not reached yet; -1: a root
        position_of = [0] * n
        order, parent, depth = [], [], []
        stack = [(-1, r) for r in roots]
        while stack:
            a, b = stack.pop()
            if parent_of[b] != -2:
                if parent_of[b] == a:
                    continue  # the same edge listed twice: trimesh skips it too
                raise self._reached_twice(a, b, parent_of)
            parent_of[b] = a
            position_of[b] = len(order)
            order.append(b)
            if a < 0:
                parent.append(-1)
                depth.append(0)
            else:
                parent.append(position_of[a])
                depth.append(depth[position_of[a]] + 1)
            if children[b]:
                stack.extend([(b, c) for c in children[b]])
        if not scenes and len(order) < n:
            raise self._loop_without_root(children, parent_of)
        return order, np.array(parent, dtype=np.int64), np.array(depth, dtype=np.int64)

    def _reached_twice(self, a: int, b: int, parent_of: list) -> InputError:
        if a == b:
            return self.fail(f"node {self._node(b)} lists itself among its children: its node "
                             f"hierarchy loops; re-export the file")
        k = a
        while k >= 0:
            if k == b:
                return self.fail(f"node {self._node(b)} is among its own descendants (a child of "
                                 f"node {self._node(a)}): its node hierarchy loops; re-export "
                                 f"the file")
            k = parent_of[k]
        first = parent_of[b]
        one = "the scene's root list" if first < 0 else f"node {self._node(first)}"
        other = "the scene's root list" if a < 0 else f"node {self._node(a)}"
        return self.fail(f"node {self._node(b)} has two parents ({one} and {other}); glTF nodes "
                         f"form trees: re-export the file")

    def _loop_without_root(self, children: list, parent_of: list) -> InputError:
        """Nodes no root reaches when every root node is taken: they hang from a loop."""
        up = {}
        for k, kids in enumerate(children):
            for c in kids:
                up.setdefault(c, k)
        k = parent_of.index(-2)
        seen = set()
        while k not in seen:
            seen.add(k)
            k = up[k]
        return self.fail(f"node {self._node(k)} is among its own descendants: its node hierarchy "
                         f"loops; re-export the file")

    def _children(self, k: int, node: dict, n: int) -> list:
        kids = node.get("children")
        if not kids:
            return []
        if not isinstance(kids, list):
            raise self.fail(f"the children of node {self._node(k)} are not a list; re-export "
                            f"the file")
        for c in kids:
            if isinstance(c, bool) or not isinstance(c, int) or not 0 <= c < n:
                raise self.fail(f"node {self._node(k)} has a child {_short(repr(c))}, but the "
                                f"file has nodes 0 to {n - 1}; re-export the file")
        return kids

    def _local_transforms(self, placed: list, order: list) -> np.ndarray:
        """(n, 4, 4): each node's matrix @ T @ R @ S, trimesh's order, for all nodes at once."""
        n = len(placed)
        t = self._numbers(placed, order, "translation", 3, (0.0, 0.0, 0.0))
        s = self._numbers(placed, order, "scale", 3, (1.0, 1.0, 1.0))
        q = self._numbers(placed, order, "rotation", 4, (0.0, 0.0, 0.0, 1.0))
        rotated = np.array(["rotation" in node for node in placed], dtype=bool)
        R = np.broadcast_to(np.eye(3), (n, 3, 3)).copy()
        if rotated.any():
            R[rotated] = _quaternion_matrices(q[rotated])
        local = np.zeros((n, 4, 4))
        # T @ R @ S with T, R, S built apart and multiplied gives these entries exactly
        local[:, :3, :3] = R * s[:, None, :]
        local[:, :3, 3] = t
        local[:, 3, 3] = 1.0
        given = np.array(["matrix" in node for node in placed], dtype=bool)
        if given.any():
            picked = [node for node, g in zip(placed, given) if g]
            at = [k for k, g in zip(order, given) if g]
            M = self._numbers(picked, at, "matrix", 16, None)
            M = M.reshape(-1, 4, 4).transpose(0, 2, 1)  # glTF's matrices are column-major
            # glTF 2.0 asks that a node's matrix decompose into translation, rotation and scale:
            # its last row 0 0 0 1; another would project, and gjk places by the other rows only
            affine = (M[:, 3, :] == (0.0, 0.0, 0.0, 1.0)).all(axis=1)
            if not affine.all():
                bad = int(np.argmin(affine))
                row = " ".join(f"{x:g}" for x in M[bad, 3].tolist())
                raise self.fail(f"node {self._node(at[bad])} has a matrix whose last row is {row}, "
                                f"not 0 0 0 1 (a node's matrix places without perspective); "
                                f"re-export the file")
            T = np.broadcast_to(np.eye(4), M.shape).copy()
            T[:, :3, 3] = t[given]
            R4, S4 = T.copy(), np.broadcast_to(np.eye(4), M.shape).copy()
            R4[:, :3, 3] = 0.0
            R4[:, :3, :3] = R[given]
            S4[:, [0, 1, 2], [0, 1, 2]] = s[given]
            local[given] = M @ T @ R4 @ S4
        return local

    def _numbers(self, placed: list, order: list, key: str, width: int, default) -> np.ndarray:
        """(n, width) float64: each node's `key` (default where absent), every one checked to be
        `width` numbers."""
        values = [node.get(key, default) for node in placed]
        given = [value for value in values if value is not default]
        try:  # one pass over all nodes; the loop below only finds the culprit
            fine = (set(map(type, given)) <= {list} and set(map(len, given)) <= {width}
                    and set(map(type, itertools.chain.from_iterable(given))) <= {int, float})
        except TypeError:
            fine = False
        if not fine:
            for k, value in zip(order, values):
                if value is not default and (
                        type(value) is not list or len(value) != width
                        or not all(type(x) in (int, float) for x in value)):
                    raise self.fail(f"node {self._node(k)} has a {key} that is not {width} "
                                    f"numbers ({_short(json.dumps(value), 60)}); re-export the "
                                    f"file")
        if default is not None and not given:  # none given (a scene without scales): no list read
            return np.tile(np.array(default, dtype=np.float64), (len(values), 1))
        # the numbers read in one pass, not as a list of lists (a quarter of np.array's time)
        return np.fromiter(itertools.chain.from_iterable(values), dtype=np.float64,
                           count=len(values) * width).reshape(len(values), width)

    # -- checked values -------------------------------------------------------------------------------

    def _node(self, k: int) -> str:
        name = self.names[k] if k < len(self.names) else str(k)
        return f"'{_short(name)}'" if name == str(k) else f"'{_short(name)}' (index {k})"

    def _list(self, owner: dict, key: str, where: str) -> list:
        value = owner.get(key, [])
        if not isinstance(value, list):
            raise self.fail(f"the {key} of {where} are not a list; re-export the file")
        return value

    def _index(self, value, n: int, what: str, kind: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < n:
            kinds = kind + ("es" if kind.endswith("sh") else "s")
            have = f"{kinds} 0 to {n - 1}" if n else f"no {kinds}"
            raise self.fail(f"{what} is {kind} {_short(repr(value))}, but the file has {have}; "
                            f"re-export the file")
        return value

    def _item(self, key: str, value, what: str, kind: str) -> dict:
        items = self._list(self.doc, key, "the file")
        i = self._index(value, len(items), what, kind)
        if not isinstance(items[i], dict):
            raise self.fail(f"{kind} {i} is not a JSON object; re-export the file")
        return items[i]

    def _count(self, value, what: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise self.fail(f"{what} is {_short(repr(value))}, not a whole number of zero or "
                            f"more; re-export the file")
        return value


def _node_names(nodes: list, reader: _Reader) -> list[str]:
    """Each node's name as trimesh's parser gives it: its `name`, else its index, made unique
    in index order; a node called "world" (trimesh's base frame) renamed after all others."""
    taken: dict = {}
    counts: dict = {}
    names = []
    for k, node in enumerate(nodes):
        name = node.get("name", str(k))
        if name and type(name) is str and name not in taken:  # the common case, inline
            taken[name] = k
            names.append(name)
            continue
        if name is not None and not isinstance(name, str):
            raise reader.fail(f"node {k} has a name that is not text ({_short(repr(name))}); "
                              f"re-export the file")
        unique = _unique_name(name, taken, counts)
        taken[unique] = k
        names.append(unique)
    if _BASE_FRAME in taken:
        names[taken[_BASE_FRAME]] = _unique_name(_BASE_FRAME, set(names))
    return names


def _unique_name(start, contains, counts: dict | None = None) -> str:
    """trimesh.util.unique_name: `start` if free, else "start_<i>" for the first free i after
    the number `start` ends with (or after the count of earlier tries); "geometry_<i>" for an
    empty or missing name."""
    if start is not None and len(start) > 0 and start not in contains:
        return start
    increment = 0 if counts is None else counts.get(start, 0)
    if start is not None and len(start) > 0:
        prefix = start
        split = start.rsplit("_", 1)
        if len(split) == 2 and increment == 0:
            try:
                increment = int(split[1])
                prefix = split[0]
            except ValueError:
                pass
    else:
        prefix = "geometry"
    for i in range(increment + 1, 2 + increment + len(contains)):
        check = f"{prefix}_{i}"
        if check not in contains:
            if counts is not None:
                counts[start] = i
            return check
    raise AssertionError("unreachable: one of len(contains) + 1 names is free")


def _quaternion_matrices(xyzw: np.ndarray) -> np.ndarray:
    """(n, 3, 3) rotations of glTF quaternions (x, y, z, w), with trimesh.transformations'
    arithmetic (normalised; near-zero quaternions give the identity)."""
    q = xyzw[:, [3, 0, 1, 2]].copy()
    n = np.einsum("ij,ij->i", q, q)
    real = n >= _QUATERNION_EPS
    q[real] *= np.sqrt(2.0 / n[real, None])
    q = q[:, None, :] * q[:, :, None]
    R = np.empty((len(q), 3, 3))
    R[:, 0, 0] = 1.0 - q[:, 2, 2] - q[:, 3, 3]
    R[:, 0, 1] = q[:, 1, 2] - q[:, 3, 0]
    R[:, 0, 2] = q[:, 1, 3] + q[:, 2, 0]
    R[:, 1, 0] = q[:, 1, 2] + q[:, 3, 0]
    R[:, 1, 1] = 1.0 - q[:, 1, 1] - q[:, 3, 3]
    R[:, 1, 2] = q[:, 2, 3] - q[:, 1, 0]
    R[:, 2, 0] = q[:, 1, 3] - q[:, 2, 0]
    R[:, 2, 1] = q[:, 2, 3] + q[:, 1, 0]
    R[:, 2, 2] = 1.0 - q[:, 1, 1] - q[:, 2, 2]
    return R


def _world_transforms(local: np.ndarray, parent: np.ndarray, depth: np.ndarray) -> np.ndarray:
    """world = parent's world @ local, a level of the hierarchy at a time (each level one
    batched product; a level of one node, as in a deep chain, one small product)."""
    world = local.copy()
    if not len(depth) or depth.max() == 0:
        return world
    by_depth = np.argsort(depth, kind="stable")
    starts = np.searchsorted(depth[by_depth], np.arange(int(depth.max()) + 2)).tolist()
    if len(starts) - 2 > len(depth) // 4:  # mostly thin levels: node by node, in walk order
        into, factor, matmul = list(world), list(local), np.matmul  # views, made once
        for k, p in enumerate(parent.tolist()):
            if p >= 0:
                matmul(into[p], factor[k], out=into[k])
        return world
    for d in range(1, len(starts) - 1):
        level = by_depth[starts[d]:starts[d + 1]]
        world[level] = world[parent[level]] @ local[level]
    return world


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 3] + "..."
