"""Files to named parts in world coordinates; trimesh does the reading.

A `Part` is one object of a file: its triangles with every vertex already moved by the full
world transform of its scene node (rotation, translation, scale and shear), so the engine
never sees a node transform. `load_part` takes a whole file as one object (``gjk check A B``);
`load_objects` gives one part per scene node, and `read_objects` the same parts without
merging vertices or computing topology (``gjk scan``'s fast path); `expand_paths` turns directories
into the mesh files in them. Whether a part is its own hull is gjkcli.mesh.convexity's question.

Every failure to read a file is an `InputError` with a one-line message naming the file and
the cause. Geometry that is odd but valid (one triangle, a flat plate, stray triangles, several
bodies) loads.

Import cost: this module imports only numpy at import time. trimesh (about 0.8 s: it pulls in
scipy, networkx and lxml) and scipy are imported on the first load, so ``gjk --help`` stays
fast. rich and click are never imported here.
"""
from __future__ import annotations

import dataclasses
import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from gjkcli.mesh import SETTINGS_FILES  # gjk's own settings: never a scene, never counted left out
from gjkcli.engine.topology import components, open_faces, topology
from gjkcli.engine.volume import centroid
from gjkcli.errors import InputError
from gjkcli.mesh import simple
from gjkcli.mesh.cad_process import STEP_TYPES
from gjkcli.limits import current as current_limits
from gjkcli.tolerances import DEFAULT

__all__ = ["Part", "Instance", "load_part", "load_objects", "read_objects", "expand_paths", "readable_types",
           "skipped_text", "merge_close", "merge_solids", "solids_apart",
           "explain"]

# Archive suffixes trimesh reads, longest first so "a.tar.gz" is not taken for a ".gz".
_ARCHIVE_TYPES = ("tar.bz2", "tar.gz", "zip", "bz2")

# glTF and GLB: `read_objects` reads them with gjkcli.mesh.gltf, without importing trimesh.
_GLTF_TYPES = ("glb", "gltf")
# STEP: read by gjkcli.mesh.cad through OpenCASCADE (never by trimesh's cascadio route).
_CAD_TYPES = STEP_TYPES

# IFC models: read by gjkcli.mesh.ifc through IfcOpenShell (IFC_TYPES there), not by trimesh.
_IFC_TYPES = ("ifc", "ifczip", "ifcxml")

# Formats whose files gjk reads without trimesh, always or when plain (`gjkcli.mesh.simple`):
# telling them from an unknown format does not need trimesh's list of loaders either.
_OWN_TYPES = ("stl", *simple.FORMATS, *_GLTF_TYPES, *_CAD_TYPES, *_IFC_TYPES)

# Formats trimesh reads that hold no triangles (a point list): `expand_paths` leaves them out.
_NOT_MESH_TYPES = frozenset({"xyz", "stl_ascii"})

# Robots, read by gjkcli.scene.urdf (above this layer): named here so that a file of no format
# gjk reads is told every suffix it does read.
ROBOT_TYPES = ("urdf",)



# Per-format reading options. Materials and textures are never needed: skipping them lets a
# textured OBJ load without Pillow. OBJ objects (`o`) and groups (`g`) become separate
# objects, while materials (`usemtl`) do not split an object. glTF primitives of one mesh are
# merged so that a glTF node is one object; without merging trimesh names each extra
# primitive "<node>_<random hex>", which differs from run to run. (`skip_materials=True`
# cannot be combined with `merge_primitives=True` in trimesh 5.2: KeyError 'visual'; without
# Pillow, glTF textures are skipped by trimesh anyway.)
_OPTIONS = {
    "obj": {"skip_materials": True, "split_objects": True, "split_groups": True,
            "group_material": False},
    "glb": {"merge_primitives": True},
    "gltf": {"merge_primitives": True},
}


@dataclass(frozen=True, eq=False)
class Instance:
    """A part placed as a rigid copy of a mesh other parts share: its hull can be built once
    for the mesh and moved (a hull commutes with rotations and translations, not with a scale
    or a mirror, which never make an Instance).

    key : hashable, equal exactly for parts that place the same `local` mesh
    local : (n, 3) float64 the shared mesh's vertices in its own frame, in the part's units;
        the part's `faces` index them as they index its `vertices`
    pose : (4, 4) float64 a rotation (det +1) and a translation: the part's vertices are
        local @ pose[:3, :3].T + pose[:3, 3], to rounding
    placed : how many parts of the whole file place the mesh so, where a reader read only some
        of them (a range of a glTF's nodes, `read_objects`' share); 0: the parts read together
        are all of them
    """

    key: object
    local: np.ndarray
    pose: np.ndarray
    placed: int = 0

    def scaled(self, k: float) -> "Instance":
        """The instance with its lengths times k (a unit converted): the scaled mesh is another
        mesh, so the key changes with it."""
        pose = self.pose.copy()
        pose[:3, 3] *= k
        return Instance(key=(self.key, k), local=self.local * k, pose=pose)

    def relative_key(self, other: "Instance"):
        """A key equal for two pairs of instances exactly when they place the same two meshes in
        the same relative pose (rows and patterns of parts), so that what depends only on the two
        meshes and their relative pose (the common volume of two STEP products' solids) is
        computed once; None when a rotation is not orthonormal.

        The relative pose, this one's inverted then the other's (R_a^T R_b, R_a^T (t_b - t_a)),
        is compared as the floats it computes to, nothing rounded: equal keys then mean
        relative poses equal to the rounding of that composition (~1e-16 of the coordinates).
        Rounding the poses to a grid would instead merge poses that truly differ. A rotation
        that is orthonormal only to `rigid_rel` (R^T is then not quite its inverse) gets no
        key. Two instances of one pose (two meshes of one placed product) are in no relative pose
        at all, exactly: the identity, which R^T R computes only to rounding that differs from
        one rotation to the next (a three-times-placed drone arm's two fittings against its
        body were three booleans of 10 s each, one a placement)."""
        Ra, Rb = self.pose[:3, :3], other.pose[:3, :3]
        for R in (Ra, Rb):
            if np.abs(R.T @ R - np.eye(3)).max() > 8 * np.finfo(float).eps:
                return None
        if np.array_equal(self.pose, other.pose):
            relative = np.concatenate([np.eye(3).ravel(), np.zeros(3)])
        else:
            relative = np.concatenate([(Ra.T @ Rb).ravel(), Ra.T @ (other.pose[:3, 3] - self.pose[:3, 3])])
        return self.key, other.key, (relative + 0.0).tobytes()  # + 0.0: -0.0 and 0.0 alike


@dataclass(frozen=True, eq=False)
class Part:
    """One named object of a file, in world coordinates.

    Attributes
    ----------
    name : str
        The object's name: the file's name for a whole file or a file of one object, the scene
        node's name otherwise, "<name>#<k>" (k from 1) for the k-th body of a split object, and
        "<prefix>:<name>" when loaded with a prefix.
    source : str
        The path as the user gave it.
    vertices : (n, 3) float64
        World coordinates: each mesh moved by its node's full world transform. Copies of a
        vertex (STL corners, texture seams) are merged and vertices no triangle uses dropped.
    faces : (m, 3) int64
        Triangles, indices into `vertices`; m >= 1. Winding is flipped where the node
        transform mirrors, so an outward-facing mesh stays outward-facing.
    units : str or None
        Units as the file states them (trimesh's ``.units``: "millimeter", "mm", "meters",
        "inch", ...), None when the file does not say.
    watertight : bool
        Every edge is shared by exactly two triangles (trimesh's definition). None from the fast
        path of `read_objects`, which computes no topology (nor merges vertices).
    bodies : int
        Number of connected bodies: triangles joined by edges that exactly two distinct
        triangles share (trimesh's face adjacency; a triangle repeated in the file counts once).
        None from the fast path of `read_objects`.
    element : for an IFC element (`gjkcli.mesh.ifc.Element`): its class, GlobalId, Name and
        hosts; None for every other file
    eps : float
        How far the triangles may lie from the true surface, in the part's units: a CAD file's
        tessellation error bound (`gjkcli.mesh.cad`); 0 for a mesh file, which is its triangles.
    brep : tuple or None
        Where the exact solids of a CAD part are (`gjkcli.mesh.cad.SolidRef` each), else None.
    instance : Instance or None
        When the part is a rigid placement of a mesh that other parts place too (a STEP
        product's solid in each of its instances), that mesh and this placement; else None.

    Equality is identity (the arrays make value equality ambiguous).
    """

    name: str
    source: str
    vertices: np.ndarray
    faces: np.ndarray
    units: str | None = None
    watertight: bool | None = False
    bodies: int | None = 1
    eps: float = 0.0
    brep: tuple | None = None
    element: object | None = None
    instance: "Instance | None" = None

    @property
    def bounds(self) -> np.ndarray:
        """(2, 3) float64: the world axis-aligned bounding box, min row then max row."""
        return np.array([self.vertices.min(axis=0), self.vertices.max(axis=0)])

    @property
    def n_vertices(self) -> int:
        """Number of (merged) vertices."""
        return len(self.vertices)

    @property
    def n_faces(self) -> int:
        """Number of triangles."""
        return len(self.faces)

    @property
    def diagonal(self) -> float:
        """Length of the bounding box's diagonal: the part's size for relative tolerances."""
        lo, hi = self.bounds
        return float(np.linalg.norm(hi - lo))

    def __repr__(self) -> str:
        return (f"Part(name={self.name!r}, source={self.source!r}, n_vertices={self.n_vertices},"
                f" n_faces={self.n_faces}, units={self.units!r},"
                f" watertight={self.watertight}, bodies={self.bodies})")


# --------------------------------------------------------------------------------------------
# public API
# --------------------------------------------------------------------------------------------

def load_part(path: str | Path, *, skipped: list | None = None) -> Part:
    """Read a whole file as ONE object (``gjk check A B``).

    Every mesh of the file is moved by its node's full world transform and all are
    concatenated (vertices are not merged across meshes).

    Parameters
    ----------
    path : str or Path
        A mesh or scene file, or an archive of them.
    skipped : as `load_objects` (IFC elements whose geometry failed)

    Returns
    -------
    Part
        Named after the file; `bodies` is the sum over its meshes and `watertight` holds when
        every mesh is watertight; `units` is the units all meshes agree on, else None.

    Raises
    ------
    InputError
        The file is missing, a directory, empty, unreadable, holds no triangles, or has NaN or
        infinite coordinates.
    """
    parts = load_objects(path, skipped=skipped)
    if len(parts) == 1:
        return _renamed(parts[0], Path(path).name)
    offsets = np.cumsum([0] + [p.n_vertices for p in parts[:-1]])
    units = {p.units for p in parts}
    return _frozen_part(
        name=Path(path).name,
        source=str(path),
        vertices=np.concatenate([p.vertices for p in parts]),
        faces=np.concatenate([p.faces + k for p, k in zip(parts, offsets)]),
        units=units.pop() if len(units) == 1 else None,
        watertight=all(p.watertight for p in parts),
        bodies=sum(p.bodies for p in parts),
        eps=max(p.eps for p in parts),
        brep=sum((p.brep for p in parts), ()) if all(p.brep for p in parts) else None,
    )


def load_objects(path: str | Path, *, split_bodies: bool = False,
                 prefix: str | None = None, skipped: list | None = None) -> list[Part]:
    """Read every object of a file: one part per scene node that holds triangles.

    A node instancing a mesh that other nodes also use still gives its own part. A file with a
    single object (a plain STL, OBJ, PLY, OFF; a scene of one node) gives one part named after
    the file; otherwise parts are named by their node names (multi-solid STL: the solid names;
    OBJ: object and group names; glTF, 3MF, 3DXML: node names; archive: the member's path,
    followed by "/<node>" for a member with several objects). Parts come in the order of
    trimesh's scene graph; an archive's members in name order.

    Parameters
    ----------
    path : str or Path
        A mesh or scene file, or an archive of them.
    split_bodies : bool
        Give each connected body of an object (see `Part.bodies`) its own part named
        "<name>#<k>", k from 1 in the order of the bodies' first triangles. An object of one
        body keeps its name.
    prefix : str or None
        When given, every name becomes "<prefix>:<name>" (scan of several files).

    Returns
    -------
    list of Part

    Raises
    ------
    InputError
        As `load_part`; also when one object holds no triangles (a point cloud or lines).

    An IFC file (`gjkcli.mesh.ifc`) gives one part per physical element; the lines about elements
    whose geometry failed go to `skipped` (without it, the first is an InputError), then an
    `errors.Note` naming the elements left out for want of a 3D body, if any.
    """
    if _file_type(Path(path)) in _IFC_TYPES:
        parts = _ifc_parts(path, str(path), split_bodies, skipped, prepared=True)
    elif _file_type(Path(path)) in _CAD_TYPES:
        _check_file(Path(path))
        parts = _cad_parts(path, split_bodies, skipped)
    else:
        parts = [part for member, scene in _read(path)
                 for part in _usable_parts(path, member, scene, split_bodies)]
    if prefix is not None:
        parts = [_renamed(part, f"{prefix}:{part.name}") for part in parts]
    return parts


def read_objects(path: str | Path, *, split_bodies: bool = False, prefix: str | None = None,
                 shown: str | None = None, skipped: list | None = None,
                 share: tuple | None = None) -> list[Part]:
    """Every object of a file in world coordinates, named as `load_objects` names them: fast.

    The fast path of scans. trimesh reads the file (with `load_objects`' options and error
    messages), and each scene node gives its mesh's vertices moved by the node's full world
    transform (scale included); the transforms are applied to all nodes at once in NumPy and each
    mesh is checked once however many nodes instance it. Nothing else is computed per part: no
    vertex merging and no topology (the parts' `watertight` and `bodies` are None, and their
    arrays are not made read-only). glTF and GLB files are read by gjkcli.mesh.gltf straight into
    NumPy, with the names, order, transforms and units trimesh's glTF parser gives, and without
    importing trimesh; a file using a feature that reader leaves to trimesh (compression, sparse
    or quantized accessors, ...) goes through trimesh's glTF parser without building a
    trimesh.Trimesh per mesh. With split_bodies, the bodies come from `load_objects`, which
    computes them.

    prefix : names become "<prefix>:<name>" (a scan of several files), except the name of a
    file's only object, which is the file's name already.
    shown : the path as the user gave it (the parts' `source`); default str(path).
    skipped : receives a line per IFC element whose geometry failed, and a Note on those
        without a 3D body (see `load_objects`); for a STEP file whose names' code page was
        guessed, a Note saying which (`gjkcli.mesh.cad.codepage_note`).
    share : (k, n) share k of n of the file's objects only (a Dask scan splits a large file
        across its workers): an IFC model's elements (`gjkcli.mesh.ifc.read_share`), a STEP
        assembly's products with their instances (`gjkcli.mesh.cad.shares`), a glTF's
        nodes (a share reads only its nodes' meshes where no mesh may share another's content,
        `_gltf_range`; else the whole file's meshes, so that meshes of the same content and
        shared meshes are told as for the whole file, and places its own nodes); None: every
        object

    Raises InputError as load_objects does.
    """
    shown = str(path) if shown is None else shown
    path = Path(path)

    def named(name: str) -> str:
        # a file of one object is named after the file already: "link0.stl", not
        # "link0.stl:link0.stl" (and its bodies "link0.stl#2")
        if prefix is None or name == path.name or name.startswith(path.name + "#"):
            return name
        return f"{prefix}:{name}"

    if split_bodies:
        parts = load_objects(path, split_bodies=True, skipped=skipped)
        return [Part(name=named(p.name), source=shown, vertices=p.vertices, faces=p.faces,
                     units=p.units, watertight=p.watertight, bodies=p.bodies, element=p.element)
                for p in parts]
    _check_file(path)
    file_type = _file_type(path)
    if file_type in _IFC_TYPES:
        return [dataclasses.replace(p, name=named(p.name))
                for p in _ifc_parts(path, shown, False, skipped, prepared=False, share=share)]
    if file_type in _CAD_TYPES:
        from gjkcli.mesh import cad, cad_process, stepkeep

        # a file whose placements alone changed since a kept scan: its products placed anew,
        # without OpenCASCADE (`gjkcli.mesh.stepkeep`); else read, and kept for the next scan
        # (its text is read here while OpenCASCADE's process reads the file)
        if share is not None:  # a share of its products, in a Dask task: kept by no cache
            read, ask = cad.read_step(path, shown=shown, share=share), _here
        else:
            read = stepkeep.parts(path, shown=shown) if stepkeep.active() else None
            ask = cad_process.ask
            if read is None:
                read = ask(cad.read_step, path, shown=shown)
                if stepkeep.active():
                    stepkeep.keep(path, ask)
            else:  # the process read no parts: its answer would wait for OpenCASCADE's import
                ask = _here
        parts = [dataclasses.replace(p, name=named(p.name)) for p in read]
        _unmeshed(path, ask, skipped)  # each share its own products'
        # said once of a file, by its first share
        noted = skipped is not None and (share is None or share[0] == 0)
        guessed = ask(cad.codepage_note, path) if noted else None
        if guessed is not None:  # a lenient read says what it assumed
            from gjkcli.errors import Note

            skipped.append(Note(file=shown, message=guessed))
        return parts
    scenes = None
    if file_type in _GLTF_TYPES:
        from gjkcli.mesh import gltf  # numpy and the standard library only

        if share is not None:
            ranged = _gltf_range(path, shown, named, share)
            if ranged is not None:
                return ranged
        try:  # every problem with the file is an InputError from here
            scenes = [(None, gltf.read_scene(path))]
        except gltf.Unsupported:  # a feature left to trimesh's glTF parser
            try:
                scenes = [(None, _read_gltf(path))]
            except Exception:  # noqa: BLE001 - `_read` reads it again and words the error
                scenes = None
    if scenes is None:
        scenes = [(member, _trimesh_nodes(path, scene)) for member, scene in _read(path)]
    out = []
    for member, (nodes, geometry) in scenes:
        if not nodes:
            raise InputError(path, _holds_nothing(path, member))
        names = [named(_object_name(path, member, node, len(nodes))) for node, _, _ in nodes]
        only = None
        if share is not None and len(scenes) == 1:
            k, n = share
            only = (k * len(nodes) // n, (k + 1) * len(nodes) // n)
        try:  # as `_usable_parts`: what a malformed mesh makes fail here is an InputError
            out.extend(_placed_nodes(path, shown, names, nodes, geometry, only))
        except InputError:
            raise
        except Exception as exc:
            raise InputError(path, _unusable(path, member, exc)) from exc
    return out



def expand_paths(paths, *, recurse: bool = True, also=(), skipped: dict | None = None) -> list[Path]:
    """Turn the paths a user gave into the files gjk reads.

    Parameters
    ----------
    paths : str, Path or iterable of them
        Files pass through whatever their extension (reading them reports a bad one); a
        directory gives the files in it and, with `recurse`, in its subdirectories, sorted by
        path, of every format gjk reads (`readable_types`: trimesh's mesh formats but point
        lists, archives, glTF, STEP, IFC, 2D drawings; and `also`). A file reached twice is kept
        once.
    recurse : descend into subdirectories (else they are counted in `skipped`)
    also : more extensions to take (a reader above this layer's: "urdf")
    skipped : filled with {"<what>": count} for the entries of directories left out: ".csv"
        (a file gjk does not read, by extension), "hidden" (names starting with "."),
        "subfolders" (when not `recurse`), "linked folders" (symbolic links, never followed)

    Returns
    -------
    list of Path

    Raises
    ------
    InputError
        A path does not exist, or a directory holds no file gjk reads.
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    found: list[Path] = []
    for given in map(Path, paths):
        try:
            is_dir, exists = given.is_dir(), given.exists()
        except (OSError, ValueError) as exc:  # a name too long, a NUL byte
            raise InputError(given, f"cannot use this path: {getattr(exc, 'strerror', None) or exc}") from None
        if is_dir:
            found.extend(_files_in(given, recurse, frozenset(readable_types()) | frozenset(also),
                                   skipped if skipped is not None else {}))
        elif exists:
            found.append(given)
        else:
            raise InputError(given, "no such file or directory; check the path")
    return _unique(found)


def readable_types() -> dict[str, str]:
    """{extension: what reads it} for every file a directory expands to: the one list, taken
    from the readers (trimesh's mesh loaders but point lists, with the archives, glTF, STEP and
    IFC readers of this package, and the 2D drawings of gjkcli.mesh.flat)."""
    from gjkcli.mesh.flat import FLAT_TYPES

    kinds = {t: "mesh" for t in sorted(_known_types() - _NOT_MESH_TYPES)}
    kinds.update({t: "archive" for t in _ARCHIVE_TYPES})
    kinds.update({t: "glTF" for t in _GLTF_TYPES})
    kinds.update({t: "STEP" for t in _CAD_TYPES})
    kinds.update({t: "IFC" for t in _IFC_TYPES})
    kinds.update({t: "2D drawing" for t in FLAT_TYPES})
    return kinds


def _files_in(directory: Path, recurse: bool, wanted: frozenset, skipped: dict) -> list[Path]:
    """The files of `wanted` types under `directory` (sorted by path); what was left out counted
    in `skipped`. InputError naming what it looked for when there is none."""
    files: list[Path] = []
    left: dict = {}

    def count(what: str) -> None:
        left[what] = left.get(what, 0) + 1

    def failed(exc: OSError) -> None:
        if Path(exc.filename or "") == directory:
            raise InputError(directory, f"cannot list directory: {exc.strerror or exc}") from exc
        count("unreadable folders")

    for folder, subfolders, names in os.walk(directory, onerror=failed):
        hidden = [d for d in subfolders if d.startswith(".")]
        for _ in hidden:
            count("hidden")
        visible = sorted(d for d in subfolders if not d.startswith("."))
        for d in visible:
            if not recurse:
                count("subfolders")
            elif os.path.islink(os.path.join(folder, d)):  # not followed: no loops, nothing outside
                count("linked folders")
        subfolders[:] = visible if recurse else []
        for name in sorted(names):
            path = Path(folder) / name
            if name.startswith("."):
                count("hidden")
            elif name in SETTINGS_FILES:
                continue
            elif not path.is_file():
                count("not regular files")
            elif _file_type(path) in wanted:
                files.append(path)
            else:
                count("." + _file_type(path) if path.suffix else "no extension")
    for what, n in left.items():
        skipped[what] = skipped.get(what, 0) + n
    if not files:
        seen = f"; it holds {skipped_text(left)}" if left else "; it is empty"
        raise InputError(directory, f"directory holds no file gjk reads (looked for "
                                    f"{', '.join('.' + t for t in sorted(wanted))}{seen})")
    return sorted(files)


def skipped_text(skipped: dict) -> str:
    """What a directory's expansion left out, in words: "3 .csv, 1 hidden, 2 subfolders"."""
    return ", ".join(f"{n:,} {what}" for what, n in sorted(skipped.items(), key=lambda kv: (-kv[1], kv[0])))


def _ifc_parts(path, shown: str, split_bodies: bool, skipped: list | None, prepared: bool,
               share: tuple | None = None) -> list[Part]:
    """The physical elements of an IFC file (gjkcli.mesh.ifc), named "IfcWall 'Name' GlobalId".

    prepared : merge vertices and compute topology (as `load_objects`), else the fast path's raw
        arrays (as `read_objects`). An element whose geometry failed is a line in `skipped`, or
        the InputError when `skipped` is None; the elements left out for want of a 3D body are
        an `errors.Note` at its end. share : (k, n) the elements of `ifc.read_share` only.
    """
    from types import SimpleNamespace

    from gjkcli.mesh import cad_process, ifc

    path = Path(path)
    _check_file(path)
    if share is not None:
        model = ifc.read_share(path, *share)
    else:
        model = cad_process.ask(ifc.read, path)  # read ahead as the command started, or now
    if model.failed:
        if skipped is None:
            more = f" (and {len(model.failed) - 1} more)" if len(model.failed) > 1 else ""
            raise InputError(path, model.failed[0] + more)
        skipped.extend(model.failed)
    from gjkcli.errors import Note

    if skipped is not None:  # what the read assumed, and what the cache noted as the model was read ahead
        skipped.extend(Note(file=shown, message=n) for n in model.notes)
    left_out = ifc.left_out_note(model)
    if left_out is not None and skipped is not None:
        skipped.append(Note(file=shown, message=left_out))
    if skipped is not None:  # elements cut away whole by their openings: one note each, in order
        skipped.extend(Note(file=shown, message=str(line), order=line.order) for line in model.cut_away)
    parts = []
    instances: dict = {}  # id of a map's vertices -> its key (`_ifc_instance`)
    for name, vertices, faces, element, placement in model.parts:
        if not prepared:
            parts.append(Part(name=name, source=shown, vertices=vertices, faces=faces,
                              units=model.units, watertight=None, bodies=None, element=element,
                              instance=None if placement is None else _ifc_instance(placement, faces, instances)))
            continue
        mesh = _prepare(path, name, SimpleNamespace(vertices=vertices, faces=faces))
        pieces = mesh.split() if split_bodies and mesh.bodies > 1 else [mesh]
        for k, piece in enumerate(pieces, start=1):
            part = _frozen_part(name=name if len(pieces) == 1 else f"{name}#{k}", source=shown,
                                vertices=piece.vertices, faces=piece.faces, units=model.units,
                                watertight=piece.watertight, bodies=piece.bodies)
            parts.append(dataclasses.replace(part, element=element))
    return parts


def _ifc_instance(placement: tuple, faces: np.ndarray, keys: dict) -> Instance | None:
    """The Instance of an IFC element that places a representation map (`gjkcli.mesh.ifc`'s
    placement: the map's vertices, the 4x4 matrix, how many elements of the model place it),
    so that the map's hull is built once for all of them; None where the matrix is not a
    rotation and a translation (a scaled or mirrored map is a mesh of its own). Its key is the
    map's content (vertices and faces), found once per map (`keys`, by the vertices' identity):
    whichever reader or share meshed it, or the cache kept it, the same map has the same key."""
    import hashlib

    from gjkcli.engine.shapes import rigid_pose

    local, matrix, uses = placement
    rigid = rigid_pose(matrix)
    if rigid is None:
        return None
    key = keys.get(id(local))
    if key is None:
        digest = hashlib.blake2b(np.ascontiguousarray(local, dtype=np.float64), digest_size=16)
        digest.update(np.ascontiguousarray(faces, dtype=np.int64))
        key = keys[id(local)] = ("ifc", len(local), digest.hexdigest())
    pose = np.eye(4)
    pose[:3, :3], pose[:3, 3] = rigid
    return Instance(key=key, local=local, pose=pose, placed=int(uses))


def _unmeshed(path, ask, skipped: list | None) -> None:
    """The lines on the STEP file's solids OpenCASCADE gave no triangles (`cad.unmeshed`, asked
    where the file was read) into `skipped`; without it, the first is an InputError."""
    from gjkcli.mesh import cad

    lines = ask(cad.unmeshed, path)
    if lines and skipped is None:
        more = f" (and {len(lines) - 1} more)" if len(lines) > 1 else ""
        raise InputError(path, lines[0] + more)
    if lines:
        skipped.extend(lines)


def _cad_parts(path, split_bodies: bool, skipped: list | None = None) -> list[Part]:
    """A STEP file's solids (`gjkcli.mesh.cad`), topology computed as for a mesh file: their
    vertices merged, their bodies counted (a solid is one body unless the file says otherwise);
    a solid OpenCASCADE gives no triangles is a line in `skipped` (`_unmeshed`)."""
    from types import SimpleNamespace

    from gjkcli.mesh import cad, cad_process

    out = []
    read = cad_process.ask(cad.read_step, path)
    _unmeshed(path, cad_process.ask, skipped)
    for p in read:
        mesh = _prepare(path, p.name, SimpleNamespace(vertices=p.vertices, faces=p.faces))
        pieces = mesh.split() if split_bodies else [mesh]
        for k, piece in enumerate(pieces):
            name = p.name if len(pieces) == 1 else f"{p.name}#{k + 1}"
            out.append(_frozen_part(name=name, source=p.source, vertices=piece.vertices,
                                    faces=piece.faces, units=p.units, watertight=piece.watertight,
                                    bodies=piece.bodies, eps=p.eps, brep=p.brep))
    return out


def _trimesh():
    """trimesh, imported on first need (about 0.5 s with what it pulls in)."""
    import trimesh

    return trimesh


# --------------------------------------------------------------------------------------------
# reading: file -> trimesh scenes, every failure an InputError
# --------------------------------------------------------------------------------------------

def _read(path: str | Path) -> list[tuple[str | None, object]]:
    """Read a file into trimesh scenes: [(None, scene)], or [(member, scene)] for an archive.

    Catches `Exception` only, never `BaseException`, so Ctrl-C still stops a long read.
    """
    path = Path(path)
    _check_file(path)
    file_type = _file_type(path)
    if file_type in _GLTF_TYPES:  # one reader for glTF, whichever command reads the file
        from gjkcli.mesh import gltf

        try:
            return [(None, _ListedScene(*gltf.read_scene(path)))]
        except gltf.Unsupported:  # a feature left to trimesh's reader, below
            pass
    if file_type == "3mf" and _items_elsewhere(path):  # trimesh would place the root's objects there
        raise InputError(path, _ELSEWHERE)
    try:
        if file_type in _ARCHIVE_TYPES:
            return _read_archive(path, file_type)
        return [(None, _load_scene(path, file_type))]
    except InputError:
        raise
    except Exception as exc:
        raise InputError(path, _unread_3mf(path, file_type) or _cause(exc, file_type)) from exc


_ELSEWHERE = ("its build items are in other model parts of the archive (p:path, the 3MF Production "
              "extension), which gjk does not read; export the build into the main model")
# A build element, and an item of it with a namespaced path attribute (Production's p:path).
_BUILD = re.compile(rb"<(?:[\w.-]+:)?build[\s>/]")
_ITEM_PATH = re.compile(rb"<(?:[\w.-]+:)?item\b[^>]*?\s[\w.-]+:path\s*=")


def _items_elsewhere(path: Path) -> bool:
    """Whether a 3MF's root model has a build item in another model part (p:path). trimesh's
    reader follows p:path for components only, and reads such an item as the root model's
    object of the same id: where the root defines one, a part in the wrong place, checked
    (a test's tetrahedron, half a millimetre over its own copy). Its build, read as text: the
    model's last element, after every mesh, so the search starts at its last `<build`."""
    import zipfile

    try:
        with zipfile.ZipFile(path) as archive:
            name = next((m for m in archive.namelist() if "3d/3dmodel.model" in m.lower()), None)
            if name is None:
                return False
            data = archive.read(name)
    except (OSError, zipfile.BadZipFile, ValueError, EOFError, NotImplementedError):
        return False  # the reader says what is wrong with it
    end = len(data)
    while True:  # the last opening tag of a build element, back from the end
        at = data.rfind(b"build", 0, end)
        if at < 0:
            return False
        start = data.rfind(b"<", 0, at)
        found = _BUILD.match(data, start) if start >= 0 else None
        if found is not None and found.end() == at + len(b"build") + 1:
            return _ITEM_PATH.search(data, start) is not None
        end = at


# 3MF extensions by namespace (3MF Consortium's specifications): a model that requires one
# gjk does not read, and reads as nothing or fails, is refused naming it (`_unread_3mf`).
_3MF_EXTENSIONS = {
    "http://schemas.microsoft.com/3dmanufacturing/production/2015/06": "Production",
    "http://schemas.microsoft.com/3dmanufacturing/slice/2015/07": "Slice",
    "http://schemas.microsoft.com/3dmanufacturing/beamlattice/2017/02": "Beam Lattice",
    "http://schemas.microsoft.com/3dmanufacturing/securecontent/2019/04": "Secure Content",
    "http://schemas.3mf.io/3dmanufacturing/volumetric/2022/01": "Volumetric",
    "http://schemas.3mf.io/3dmanufacturing/implicit/2023/12": "Implicit",
    "http://schemas.3mf.io/3dmanufacturing/displacement/2023/10": "Displacement",
}
_3MF_MATERIALS = "http://schemas.microsoft.com/3dmanufacturing/material/2015/02"  # colours: nothing to miss


def _unread_3mf(path: Path, file_type: str) -> str | None:
    """Why a 3MF file that failed to read, or read as no triangles, holds nothing gjk reads,
    where its root model says so: the extensions it requires (`requiredextensions`) that gjk
    does not read, and build items in other model parts (`_items_elsewhere`); else None."""
    if file_type != "3mf":
        return None
    import zipfile

    from lxml import etree

    try:
        with zipfile.ZipFile(path) as archive:
            name = next((m for m in archive.namelist() if "3d/3dmodel.model" in m.lower()), None)
            if name is None:
                return None
            with archive.open(name) as stream:
                required, namespaces = [], {}
                for event, element in etree.iterparse(stream, events=("start",), resolve_entities=False,
                                                      no_network=True, huge_tree=False):
                    # the <model> element, the first: its prefixes and what it requires
                    namespaces = dict(element.nsmap)
                    required = (element.get("requiredextensions") or "").split()
                    break
    except (OSError, zipfile.BadZipFile, etree.XMLSyntaxError, ValueError, EOFError):
        return None
    if _items_elsewhere(path):
        return _ELSEWHERE
    unread = [_3MF_EXTENSIONS.get(namespaces.get(prefix), repr(prefix)) for prefix in required
              if namespaces.get(prefix) != _3MF_MATERIALS]
    if not unread or unread == ["Production"]:  # Production's UUIDs alone hide nothing
        return None
    names = " and ".join(", ".join(unread).rsplit(", ", 1))
    return (f"it requires the 3MF {names} extension{'s' if len(unread) > 1 else ''}, which gjk "
            f"does not read (its shapes are not triangles gjk can check); export them as meshes")


def _here(function, *args, **kwargs):
    """`function(*args, **kwargs)` in this process (as `cad_process.ask` runs it without its
    process)."""
    return function(*args, **kwargs)


def _check_file(path: Path) -> None:
    """Errors trimesh reports badly: missing, a directory, empty, or a type it cannot read."""
    if path.is_dir():
        raise InputError(path, "is a directory, not a mesh file; give one file"
                               " (a scan takes directories)")
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise InputError(path, "no such file; check the path") from None
    except OSError as exc:
        raise InputError(path, f"cannot read: {exc.strerror or exc}") from exc
    if size == 0:
        raise InputError(path, "is empty (0 bytes); re-export or copy it again")
    if not path.is_file():
        raise InputError(path, "is not a regular file (a device, a pipe or a socket); give a mesh file")
    limits = current_limits()
    if size > limits.file_bytes:
        raise InputError(path, f"is {_bytes(size)}, over the {_bytes(limits.file_bytes)} file limit; "
                               f"raise it with --limit file-bytes=N if the file is meant to be that big")
    file_type = _file_type(path)
    _check_container(path, file_type, size, limits)
    if file_type not in _OWN_TYPES and file_type not in _known_types():
        # asking trimesh imports it: the formats gjk reads itself are known without it
        every = set(readable_types()) | _readable_types() | set(ROBOT_TYPES)
        raise InputError(path, f"unknown file format '.{file_type}'; gjk reads "
                               f"{', '.join('.' + t for t in sorted(every))}")


def _bytes(n: float) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{int(n)} bytes"


# Formats that are ZIP containers, and compressed streams.
_ZIP_TYPES = ("zip", "3mf", "3dxml", "ifczip")
_STREAM_TYPES = {"tar.gz": "gzip", "tar.bz2": "bz2", "bz2": "bz2"}
# Members below this size are not held to the compression ratio limit (a small member of zeros
# compresses well and costs nothing).
_RATIO_FROM = 1 << 20


def _check_container(path: Path, file_type: str, size: int, limits) -> None:
    """Archives by their own accounts, before anything inflates: member count, sizes, ratios.

    ZIP headers state each member's size, and Python's zipfile never reads past it; gzip and bz2
    streams state nothing, so they are inflated in chunks and counted, up to the limit.
    """
    if file_type in _ZIP_TYPES:
        import zipfile

        try:
            with zipfile.ZipFile(path) as archive:
                members = archive.infolist()
        except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
            raise InputError(path, f"not a valid {file_type.upper()} file: "
                                   f"{_not_zip(path, file_type, exc)}; re-export it") from None
        if len(members) > limits.archive_members:
            raise InputError(path, f"holds {len(members)} members, over the limit of "
                                   f"{limits.archive_members}; raise it with --limit archive-members=N")
        total = sum(m.file_size for m in members)
        if total > limits.archive_bytes:
            raise InputError(path, f"inflates to {_bytes(total)}, over the {_bytes(limits.archive_bytes)} "
                                   f"limit; raise it with --limit archive-bytes=N")
        for m in members:
            if m.file_size > _RATIO_FROM and m.file_size > limits.ratio * max(m.compress_size, 1):
                raise InputError(path, f"member {m.filename} inflates {m.file_size / max(m.compress_size, 1):.0f} "
                                       f"times ({_bytes(m.file_size)}), over the ratio limit of "
                                       f"{limits.ratio:g} (a zip bomb?); raise it with --limit ratio=N")
    elif file_type in _STREAM_TYPES:
        import bz2
        import gzip

        opener = gzip.open if _STREAM_TYPES[file_type] == "gzip" else bz2.open
        cap = min(limits.archive_bytes, int(limits.ratio * size) + _RATIO_FROM)
        inflated = 0
        try:
            with opener(path, "rb") as stream:
                while chunk := stream.read(1 << 20):
                    inflated += len(chunk)
                    if inflated > cap:
                        raise InputError(path, f"inflates to more than {_bytes(cap)} (the "
                                               f"archive-bytes and ratio limits); raise them with "
                                               f"--limit archive-bytes=N --limit ratio=N")
        except (OSError, EOFError, ValueError) as exc:
            raise InputError(path, f"not a valid {file_type} file ({_one_line(str(exc), 80)}); "
                                   f"re-export it") from None


def _check_triangles(path: Path, count: int, what: str = "holds") -> None:
    limit = current_limits().triangles
    if count > limit:
        raise InputError(path, f"{what} {count:,} triangles, over the limit of {limit:,}; raise it "
                               f"with --limit triangles=N")


def _load_scene(path: Path, file_type: str):
    """One file into a trimesh Scene, with the options of its format and no processing."""
    if file_type == "stl":
        fast = _read_single_stl(path)
        if fast is not None:
            return fast
    if file_type in simple.FORMATS:  # a plain OBJ, PLY or OFF file: NumPy reads it
        found = simple.read(path, file_type)
        if found is not None:
            return _ListedScene([(name, np.eye(4), name) for name, _, _ in found],
                                {name: _Geometry(v, f) for name, v, f in found})
    trimesh = _trimesh()

    loader = trimesh.exchange.load.mesh_loaders.get(file_type)
    _require_loader(loader)
    if file_type == "gltf":
        _check_json(path)
    if file_type == "stl":
        with open(path, "rb") as stream:
            _check_stl(path, stream.read(4096), path.stat().st_size)
        _check_stl_numbers(path)
    if file_type == "obj":  # read once: checked, then parsed from memory
        import io

        data = path.read_bytes()
        _check_obj(path, data)
        return trimesh.load_scene(
            io.BytesIO(data), file_type=file_type, resolver=trimesh.resolvers.FilePathResolver(path),
            process=False, **_OPTIONS.get(file_type, {}))
    with open(path, "rb") as stream:
        return trimesh.load_scene(
            stream, file_type=file_type, resolver=trimesh.resolvers.FilePathResolver(path),
            process=False, **_OPTIONS.get(file_type, {}))


# A 0 among an OBJ face's indices (vertex, texture or normal): OBJ counts from 1 (negative
# numbers count back from the end), and trimesh would take a 0 as -1, the last vertex. The
# pattern finds every number 0 after a separator; `_check_obj` keeps those on face lines.
_OBJ_ZERO = re.compile(rb"[ \t/][+-]?0+(?![^ \t/\r\n#])")


def _check_obj(path, data: bytes) -> None:
    """InputError naming the first line whose face uses index 0."""
    for match in _OBJ_ZERO.finditer(data):
        start = data.rfind(b"\n", 0, match.start()) + 1
        line = data[start:match.start() + 1]
        if line.lstrip()[:2] in (b"f ", b"f\t") and b"#" not in line:
            number = data.count(b"\n", 0, start) + 1
            raise InputError(path, f"line {number}: a face uses index 0, but OBJ counts vertices "
                                   f"from 1; fix the export")


@dataclass(frozen=True)
class _Geometry:
    vertices: np.ndarray
    faces: np.ndarray
    units: str | None = None


class _ListedScene:
    """The little of a trimesh Scene that `_scene_parts` reads: nodes with their world
    transforms and geometry names, and the geometries by name."""

    def __init__(self, nodes, geometry: dict):
        self.geometry = geometry
        self.graph = self
        self.nodes_geometry = [node for node, _, _ in nodes]
        self._placed = {node: (transform, name) for node, transform, name in nodes}

    def __getitem__(self, node):
        return self._placed[node]


def _OneMeshScene(geometry: _Geometry) -> _ListedScene:
    """A file of one mesh, at the origin."""
    return _ListedScene([("mesh", np.eye(4), "mesh")], {"mesh": geometry})


# a binary STL triangle: normal, three corners, attribute bytes
_STL_RECORD = np.dtype([("normal", "<f4", (3,)), ("corners", "<f4", (3, 3)), ("attribute", "<u2")])
_STL_VERTEX = re.compile(rb"vertex\s+(\S+)\s+(\S+)\s+(\S+)")


def _read_single_stl(path: Path):
    """A binary STL, or an ASCII STL of one solid, read with NumPy; None for anything else.

    `gjk check a.stl b.stl` is the common case, and importing trimesh alone costs most of the
    command's one-second budget. Files this does not take (several solids, odd layouts) go to
    trimesh, and so do the checks that give its errors their wording.
    """
    size = path.stat().st_size
    with open(path, "rb") as stream:
        head = stream.read(84)
    count = int(np.frombuffer(head[80:84], dtype="<u4")[0]) if size >= 84 else -1
    if count > 0 and size == 84 + 50 * count:  # binary, whatever its header says
        _check_triangles(path, count)
        records = np.fromfile(path, dtype=_STL_RECORD, count=count, offset=84)
        corners = records["corners"].astype(np.float64).reshape(-1, 3)
    else:
        text = path.read_bytes()
        if text.count(b"endsolid") != 1 or text.count(b"facet") % 2 or not text.lstrip().startswith(b"solid"):
            return None
        corners = _stl_corners(text)
        if corners is None or not len(corners) or len(corners) % 3:
            return None
    faces = np.arange(len(corners), dtype=np.int64).reshape(-1, 3)
    return _OneMeshScene(_Geometry(corners, faces))


def _stl_corners(text: bytes) -> np.ndarray | None:
    """(n, 3) float64 every `vertex x y z` of an ASCII STL's text, or None where a number does
    not read."""
    try:
        return np.array(_STL_VERTEX.findall(text), dtype=np.float64).reshape(-1, 3)
    except ValueError:
        return None


def _check_stl_numbers(path: Path) -> None:
    """InputError where an STL that trimesh reads (several solids) holds vertices that are not
    finite numbers: trimesh joins each solid's repeated vertices, and drops those, their
    triangles with them, without a word (a fuzzed file's third solid lost a triangle so)."""
    corners = _stl_corners(path.read_bytes())
    if corners is None:
        return  # trimesh says what is wrong
    bad = int(np.count_nonzero(~np.isfinite(corners).all(axis=1)))
    if bad:
        raise InputError(path, f"has NaN or infinite coordinates in {bad} of {len(corners)} vertices; "
                               f"fix the export")


def _check_json(path: Path) -> None:
    """trimesh reads a .gltf that is not JSON as a request for "model.gltf" and reports that
    file missing; say what is wrong instead."""
    import json

    try:
        json.loads(path.read_bytes())
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise InputError(path, f"not a valid glTF file (not JSON: {_one_line(str(exc), 80)}); "
                               f"re-export it") from exc


def _read_archive(path: Path, file_type: str) -> list[tuple[str, object]]:
    """Every mesh member of an archive, by member name.

    trimesh's own archive loader names the objects "geometry_<random hex>" and drops members
    it fails to read without a word; here members keep their names and a bad one is an error.
    """
    trimesh = _trimesh()

    with open(path, "rb") as stream:
        archive = trimesh.util.decompress(stream, file_type=file_type)
    resolver = trimesh.resolvers.ZipResolver(archive)
    loaded = []
    for member in sorted(archive):
        member_type = _file_type(Path(member))
        if member_type in (*_ARCHIVE_TYPES, *_CAD_TYPES) or member_type not in _known_types() - _NOT_MESH_TYPES:
            continue  # a README, texture or buffer next to the meshes; archives are not nested
        try:
            _require_loader(trimesh.exchange.load.mesh_loaders[member_type])
            if member_type in ("stl", "obj"):
                data = archive[member].read()
                archive[member].seek(0)
                if member_type == "stl":
                    _check_stl(path, data[:4096], len(data))
                else:
                    _check_obj(path, data)
            scene = trimesh.load_scene(archive[member], file_type=member_type, resolver=resolver,
                                       process=False, **_OPTIONS.get(member_type, {}))
        except InputError as exc:
            raise InputError(path, f"member {member}: {exc.message}") from exc
        except Exception as exc:
            raise InputError(path, f"member {member}: {_cause(exc, member_type)}") from exc
        loaded.append((member, scene))
    if not loaded:
        raise InputError(path, "archive holds no mesh file; put STL, OBJ, PLY, glTF or 3MF "
                               "files in it")
    return loaded


def _require_loader(loader) -> None:
    """trimesh keeps a loader whose optional dependency is missing as an ExceptionWrapper that
    raises the ImportError on use; raise it before opening anything, for `_cause` to name."""
    from trimesh.exceptions import ExceptionWrapper

    if isinstance(loader, ExceptionWrapper):
        loader()


_KINDS = {"gltf": "glTF", "zip": "ZIP", "tar.gz": "tar.gz", "tar.bz2": "tar.bz2", "bz2": "bz2"}

# pip names of the modules trimesh's optional loaders import, where they differ
_PIP_NAMES = {"PIL": "pillow"}


def _cause(exc: Exception, file_type: str) -> str:
    """One line saying why trimesh could not read a file of `file_type`."""
    kind = _KINDS.get(file_type, file_type.upper())
    if isinstance(exc, ImportError):
        # trimesh re-raises a stored ImportError from its message alone, without `.name`
        # ... or says "missing `pip install NAME`" (trimesh's COLLADA loader without pycollada)
        found = (re.search(r"No module named '([^'.]+)", str(exc))
                 or re.search(r"pip install ([\w.-]+)", str(exc)))
        missing = exc.name or (found.group(1) if found else str(exc))
        if missing in ("charset_normalizer", "chardet"):
            # trimesh guesses a text encoding only once the bytes failed to decode as UTF-8
            return f"not a valid {kind} file (binary data where text was expected); re-export it"
        if missing == "collada" or "pycollada" in str(exc):  # trimesh's own words for it
            from gjkcli import extras

            return extras.message(f"reading {kind} files", "robots")
        package = _PIP_NAMES.get(missing, missing)
        return f"reading {kind} files needs the Python package '{package}' (pip install {package})"
    if isinstance(exc, FileNotFoundError) and exc.strerror is None:
        # a resolver's miss: a glTF buffer, an OBJ material library, ...
        return f"a file it refers to is missing ({_one_line(str(exc))}); keep it beside the file"
    if isinstance(exc, OSError) and exc.strerror:
        return f"cannot read: {exc.strerror}"
    return f"not a valid {kind} file: {explain(exc)}; re-export it"


def _not_zip(path: Path, file_type: str, exc: Exception) -> str:
    """What is wrong with a package (3MF, 3DXML, IFCZIP, ZIP) that zipfile cannot open."""
    try:
        with open(path, "rb") as stream:
            head = stream.read(64).lstrip(b"\xef\xbb\xbf \t\r\n")
    except OSError:
        head = b""
    if not head.startswith(b"PK"):
        if head.startswith(b"<"):  # a model's XML saved on its own (OpenSCAD's 3MF tests hold such)
            return f"it is XML text, not a ZIP package (a {file_type.upper()} file packs its XML in a ZIP archive)"
        return "it is not a ZIP archive"
    return f"its ZIP container is broken ({_one_line(str(exc), 80)})"


# Words of a library's message that are about its code, not about the file: such a message is
# replaced by what the exception's kind says about the file.
_CODE_WORDS = re.compile(r"object|attribute|NoneType|__|\b(int|float|str|tuple|list|dict|bytes)\b|"
                         r"unpack|iterable|subscript|argument|index|callable|\(\)|numpy|array")


def explain(exc: BaseException) -> str:
    """What a reader's exception says about the file, in a user's words: never a class name."""
    import struct

    # an XML parser's message without its own place in its input ("(<string>, line 61)"):
    # lxml's XMLSyntaxError, a SyntaxError, keeps the message, which says the line, as `msg`
    said = exc.msg if isinstance(exc, SyntaxError) and isinstance(exc.msg, str) else str(exc)
    text = _one_line(said, 100).strip("'\"")
    if isinstance(exc, KeyError):
        return f"it refers to {text!r}, which it does not define"
    if isinstance(exc, (StopIteration, EOFError)) or "end of file" in text.lower():
        return "it ends before its data does (truncated?)"
    if isinstance(exc, UnicodeDecodeError):
        return "binary data where text was expected"
    if isinstance(exc, (IndexError, OverflowError)):
        return "a count or an index points past the data it refers to"
    if isinstance(exc, MemoryError):
        return "its counts ask for more memory than there is"
    if isinstance(exc, struct.error):
        return "a binary record is shorter than its format"
    if isinstance(exc, ValueError) and ("could not convert" in text or "invalid literal" in text):
        return "a value where a number was expected is not a number"
    if isinstance(exc, ValueError) and "unpack" in text:
        return "a line or record has too few or too many values"
    if text and not _CODE_WORDS.search(text):
        return text[0].lower() + text[1:]
    return "its contents do not follow the format"


def _check_stl(path: Path, head: bytes, size: int) -> None:
    """Reject a binary STL whose size disagrees with its header, before trimesh reads it: trimesh
    then falls back to reading it as text and fails on the text encoding or (with
    charset_normalizer installed) returns an empty mesh, which would tell the user nothing.

    Parameters
    ----------
    head : bytes
        The first 4096 bytes (fewer if the file is shorter).
    size : int
        The file's size in bytes.
    """
    if size < 84 or _looks_like_text(head):
        return  # ASCII STL, or too short to be binary: trimesh's own message will do
    # binary STL: 80-byte header, uint32 triangle count, then 50 bytes per triangle
    count = int(np.frombuffer(head[80:84], dtype="<u4")[0])
    expected = 84 + 50 * count
    if expected == size:
        _check_triangles(path, count)
    if expected != size:
        what = "truncated or not an STL" if size < expected else "not an STL, or padded"
        raise InputError(path, f"not a valid STL file: not ASCII STL, and as binary STL "
                               f"its header promises {count} triangles ({expected} bytes) but "
                               f"the file has {size} bytes ({what}); re-export it")


def _looks_like_text(head: bytes) -> bool:
    try:
        head.decode("ascii")
    except UnicodeDecodeError:
        return False
    return b"\0" not in head


def _one_line(text: str, limit: int = 160) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    return text if len(text) <= limit else text[:limit - 3] + "..."


def is_ifc(path) -> bool:
    """The file is an IFC model, read by gjkcli.mesh.ifc (not by trimesh)."""
    return _file_type(Path(path)) in _IFC_TYPES


def _file_type(path: Path) -> str:
    """The format trimesh is asked for: the lower-case suffix, compound for archives."""
    name = path.name.lower()
    for archive in _ARCHIVE_TYPES:
        if name.endswith("." + archive):
            return archive
    return path.suffix.lower().lstrip(".")


@lru_cache(maxsize=1)
def _known_types() -> frozenset:
    """Every format trimesh has a loader for, installed optional dependencies or not."""
    _trimesh()
    from trimesh.exchange.load import mesh_loaders

    return frozenset(mesh_loaders) | frozenset(_ARCHIVE_TYPES) | frozenset(_CAD_TYPES)


@lru_cache(maxsize=1)
def _readable_types() -> frozenset:
    """The formats that give triangles with the optional dependencies installed here."""
    _trimesh()
    from trimesh.exchange.load import mesh_formats

    return (frozenset(mesh_formats()) | frozenset(_ARCHIVE_TYPES) | frozenset(_CAD_TYPES)) - _NOT_MESH_TYPES


def _unique(paths: list[Path]) -> list[Path]:
    seen, kept = set(), []
    for path in paths:
        key = path.resolve()
        if key not in seen:
            seen.add(key)
            kept.append(path)
    return kept


# --------------------------------------------------------------------------------------------
# scenes -> parts
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Mesh:
    """A mesh checked and indexed once in its own frame, shared by every node instancing it.

    Attributes
    ----------
    vertices : (n, 3) float64
        Copies merged (`merge_close`), unused vertices dropped.
    faces : (m, 3) int64
    body : (m,) int64
        Body label of each face, 0 .. bodies-1 in order of each body's first face.
    bodies : int
    open_face : (m,) bool
        Faces with an edge not shared by exactly two faces.
    """

    vertices: np.ndarray
    faces: np.ndarray
    body: np.ndarray
    bodies: int
    open_face: np.ndarray

    @property
    def watertight(self) -> bool:
        return not self.open_face.any()

    def split(self) -> list[_Mesh]:
        """Each body as its own mesh, in label order."""
        order = np.argsort(self.body, kind="stable")
        ends = np.cumsum(np.bincount(self.body, minlength=self.bodies))[:-1]
        pieces = []
        for faces_k in np.split(order, ends):
            used, local = np.unique(self.faces[faces_k], return_inverse=True)
            pieces.append(_Mesh(self.vertices[used], local.reshape(-1, 3).astype(np.int64),
                                np.zeros(len(faces_k), dtype=np.int64), 1,
                                self.open_face[faces_k]))
        return pieces


def _usable_parts(path, member: str | None, scene, split_bodies: bool) -> list[Part]:
    """`_scene_parts`, with whatever a malformed scene makes fail there an InputError."""
    try:
        return _scene_parts(path, member, scene, split_bodies)
    except InputError:
        raise
    except Exception as exc:
        raise InputError(path, _unusable(path, member, exc)) from exc


def _holds_nothing(path, member: str | None) -> str:
    """Why a file (or an archive's member) whose scene holds no triangles is refused."""
    if member:
        return f"member {member} holds no triangles (an empty mesh); re-export it with its geometry"
    return (_unread_3mf(Path(path), _file_type(Path(path)))
            or "file holds no triangles (an empty mesh); re-export it with its geometry")


def _unusable(path, member: str | None, exc: Exception) -> str:
    """Why a file (or an archive's member) whose scene fails to be placed is refused."""
    if member:
        return f"member {member}: cannot use its scene: {explain(exc)}; re-export it"
    return _unread_3mf(Path(path), _file_type(Path(path))) or f"cannot use its scene: {explain(exc)}; re-export it"


def _scene_parts(path, member: str | None, scene, split_bodies: bool) -> list[Part]:
    """One part per node holding geometry (or per body of it); each mesh prepared once."""
    nodes = scene.graph.nodes_geometry
    if not nodes:
        raise InputError(path, _holds_nothing(path, member))
    prepared: dict[str, list[tuple[str, _Mesh]]] = {}
    parts = []
    placed = _placements(path, scene)
    for node in nodes:
        transform, geometry_name = placed[node]
        name = _object_name(path, member, node, len(nodes))
        if geometry_name not in prepared:
            mesh = _prepare(path, name, scene.geometry[geometry_name])
            pieces = mesh.split() if split_bodies and mesh.bodies > 1 else [mesh]
            suffixes = [f"#{k}" for k in range(1, len(pieces) + 1)] if len(pieces) > 1 else [""]
            prepared[geometry_name] = list(zip(suffixes, pieces))
        units = scene.geometry[geometry_name].units
        parts.extend(_placed(path, name + suffix, piece, transform, units)
                     for suffix, piece in prepared[geometry_name])
    return parts


def _object_name(path, member: str | None, node: str, n_nodes: int) -> str:
    """A file's only object takes the file's name (an archive member's, the member's)."""
    if n_nodes == 1:
        return Path(path).name if member is None else member
    return str(node) if member is None else f"{member}/{node}"


def _prepare(path, name: str, geometry) -> _Mesh:
    """Check a trimesh geometry, then merge, index and label it in its own frame."""
    faces = getattr(geometry, "faces", None)
    if faces is None:
        kind = "a point cloud" if type(geometry).__name__ == "PointCloud" else "lines or points"
        raise InputError(path, f"object '{name}' is {kind} with no triangles; gjk needs "
                               f"triangle meshes: export it as a mesh")
    vertices = np.asarray(geometry.vertices, dtype=np.float64).reshape(-1, 3)
    faces = np.asarray(faces, dtype=np.int64).reshape(-1, 3)
    if len(faces) == 0:
        raise InputError(path, f"object '{name}' has no triangles; gjk needs triangle meshes: "
                               f"export it as a mesh")
    _check_triangles(path, len(faces), f"object '{name}' has")
    if faces.min() < 0 or faces.max() >= len(vertices):
        raise InputError(path, f"object '{name}' has triangles that point past its "
                               f"{len(vertices)} vertices; re-export it")
    _check_finite(path, name, vertices, faces)
    vertices, faces = merge_solids(vertices, faces)
    _check_extent(path, name, vertices)
    body, bodies, open_face = topology(faces, len(vertices))
    return _Mesh(vertices, faces, body, bodies, open_face)


def _check_finite(path, name: str, vertices: np.ndarray, faces: np.ndarray) -> None:
    if np.isfinite(vertices).all():
        return
    used = np.unique(faces)
    bad = int((~np.isfinite(vertices[used]).all(axis=1)).sum())
    if bad:
        raise InputError(path, f"object '{name}' has NaN or infinite coordinates in {bad} of "
                               f"{len(used)} vertices; fix the export")


def _check_extent(path, name: str, vertices: np.ndarray, where: str = "") -> None:
    """InputError when a coordinate's magnitude is over `DEFAULT.max_coordinate`: the squared
    distances between such points overflow double precision, and so would the hull's linear
    algebra (an SVD that does not converge); said here, in words, before any of it runs."""
    top = float(np.abs(vertices).max()) if vertices.size else 0.0
    if top > DEFAULT.max_coordinate:
        raise InputError(path, f"object '{name}' has coordinates up to {top:.3g}{where}: beyond "
                               f"{DEFAULT.max_coordinate:.0e}, distances overflow double "
                               f"precision; check the file's scale and units")


def merge_close(vertices: np.ndarray, faces: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Merge vertices that agree to within `DEFAULT.merge_rel` of the largest coordinate; drop unused.

    STL stores each triangle's corners separately and OBJ/glTF split vertices at texture seams;
    unmerged, no edge would be shared and every triangle would be a body of its own. Copies are
    not always bitwise equal: CAD exporters write zero as +-1e-17 and the like (angle_block.STL,
    idler_riser.STL), so coordinates are compared on a grid of `DEFAULT.merge_rel` times the largest
    absolute coordinate (trimesh rounds to an absolute 1e-8 instead, which does not scale).
    A merged vertex keeps the coordinates of its first copy, so nothing moves by more than the
    grid step. `merge_solids` keeps closed solids the file gives apart.

    Parameters
    ----------
    vertices : (n, 3) float64, finite where used
    faces : (m, 3) int64

    Returns
    -------
    vertices : (k, 3) float64, sorted lexicographically
    faces : (m, 3) int64
    """
    keep, local, grid = _on_grid(vertices, faces)
    return _merged_on(grid, local, keep, len(vertices), faces)


def merge_solids(vertices: np.ndarray, faces: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`merge_close`, but closed solids the file keeps apart stay apart (`solids_apart`): what
    the loader, the convexity reasons and the triangle test (`gjkcli.pipeline.stages.Parts.mesh`)
    read of a mesh."""
    if len(faces) == 0:
        return merge_close(vertices, faces)
    on_grid = _on_grid(vertices, faces)
    merged = _merged_on(on_grid[2], on_grid[1], on_grid[0], len(vertices), faces)
    if open_faces(merged[1], len(merged[0])).any():
        return _apart(vertices, faces, *on_grid) or merged
    return merged


def solids_apart(vertices: np.ndarray, faces: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """(vertices, faces) as `merge_close` gives them, but each piece's vertices merged among
    themselves only, where the faces, joined by the vertices the file gives them, are 2 to
    `_PIECES_APART` pieces, each closed once its own copies are merged, and wound one way
    (`_wound_outward`: a piece turned inside out beside the others is turned back); else None.
    For a mesh `merge_close` leaves open: two solids of one object that share a face or an
    edge (an IFC element of several faceted B-reps: a knee wall's stud on its plate, a dormer's
    rafters on their ridge, each B-rep its own vertices) meet at edges of four faces when merged
    together, and the object, closed, would read as an open surface."""
    if len(faces) == 0:
        return None
    return _apart(vertices, faces, *_on_grid(vertices, faces))


def _apart(vertices: np.ndarray, faces: np.ndarray, keep, local, grid):
    """`solids_apart`, the used vertices (`_on_grid`) on the grid already."""
    piece = _pieces(faces, len(vertices), keep)
    if piece is None:
        return None
    merged, within = _merged_on(np.column_stack([piece, grid]), local, keep, len(vertices), faces)
    outward = _wound_outward(merged, within)
    return None if outward is None else (merged, outward)


def _on_grid(vertices: np.ndarray, faces: np.ndarray) -> tuple:
    """(the used vertices' indices, their coordinates, their rows on `merge_close`'s grid)."""
    used = np.zeros(len(vertices), dtype=bool)
    used[faces.ravel()] = True
    keep = np.flatnonzero(used)
    local = vertices[keep]
    step = float(np.abs(local).max()) * DEFAULT.merge_rel or 1.0
    return keep, local, np.rint(local / step).astype(np.int64)  # |grid| <= 2**40: exact in int64


# `solids_apart` keeps at most this many pieces apart (an STL's triangles, each a piece of its
# own, are merged as one).
_PIECES_APART = 1024


def _merged_on(grid: np.ndarray, local: np.ndarray, keep: np.ndarray, n: int, faces: np.ndarray):
    """(vertices, faces): the used vertices `local` (at `keep`) merged where their `grid` rows agree."""
    order = np.lexsort(grid.T[::-1])  # stable: the first copy leads its group
    ordered = grid[order]
    new = np.ones(len(ordered), dtype=bool)
    new[1:] = (ordered[1:] != ordered[:-1]).any(axis=1)
    index = np.full(n, -1, dtype=np.int64)
    index[keep[order]] = np.cumsum(new) - 1
    return local[order[new]], index[faces]


def _wound_outward(vertices: np.ndarray, faces: np.ndarray) -> np.ndarray | None:
    """The faces, where they are closed, with every body wound one way; else None.

    A body wound against the others (its signed volume of the other sign) is a void or a solid
    turned inside out, which its winding alone does not tell. Where no body lies in the box of a
    body wound the other way, or each that does lies outside their material (`_outside`), none
    is a void of another: each is turned outwards (Revit writes a cabinet's handles and drawers
    inside out beside its carcass, IfcOpenShell's swept-solid test two cells of an eaves). Where
    one may be a void, None: the object stays merged whole, open, as before."""
    body, bodies, open_face = topology(faces, len(vertices))
    if open_face.any():
        return None
    v = vertices - 0.5 * (vertices.min(axis=0) + vertices.max(axis=0))
    a, b, c = v[faces[:, 0]], v[faces[:, 1]], v[faces[:, 2]]
    volume = np.bincount(body, weights=np.einsum("ij,ij->i", a, np.cross(b, c)), minlength=bodies)
    if (volume > 0).all() or (volume < 0).all():
        return faces
    if (volume == 0).any():
        return None
    lo = np.full((bodies, 3), np.inf)
    hi = np.full((bodies, 3), -np.inf)
    corners = np.repeat(body, 3)
    np.minimum.at(lo, corners, vertices[faces.ravel()])
    np.maximum.at(hi, corners, vertices[faces.ravel()])
    inward, outward = np.flatnonzero(volume < 0), np.flatnonzero(volume > 0)
    for these, those in ((inward, outward), (outward, inward)):
        boxed = ((lo[these, None] >= lo[None, those]) & (hi[these, None] <= hi[None, those])).all(axis=2)
        for k in these[boxed.any(axis=1)].tolist():  # within another's box: a void, or beside it?
            if not _outside(vertices, faces, body, k, those):
                return None  # maybe a void
    turned = faces.copy()
    flip = (volume < 0)[body]
    turned[flip] = turned[flip][:, ::-1]  # each body wound outwards
    return turned


def _outside(vertices: np.ndarray, faces: np.ndarray, body: np.ndarray, k: int, others) -> bool:
    """Whether body k lies outside the material of the bodies `others`, judged at its centroid:
    where that point lies inside body k itself (its winding number about k's faces +-1, as in
    a convex piece: a drawer, a handle) and outside the others (theirs 0). False where either is
    not so (a void inside another body, or a piece whose centroid lies outside it)."""
    from gjkcli.engine.certify import winding_number

    own = faces[body == k]
    centre = centroid(vertices, own)
    if centre is None:
        return False
    inside = abs(float(winding_number(vertices, own, centre)[0]))
    among = np.zeros(int(body.max()) + 1, dtype=bool)
    among[others] = True
    around = abs(float(winding_number(vertices, faces[among[body]], centre)[0]))
    return inside > 1.0 - DEFAULT.winding_inside and around < DEFAULT.winding_inside


def _pieces(faces: np.ndarray, n: int, keep: np.ndarray):
    """(len(keep),) int64, a label of each used vertex's piece (the faces joined by the vertices
    the file gives them), where there are 2 to `_PIECES_APART` pieces; else None."""
    if len(keep) == 3 * len(faces):
        return None  # a triangle soup (STL): no vertex shared
    a = np.concatenate([faces[:, 0], faces[:, 1]])
    b = np.concatenate([faces[:, 1], faces[:, 2]])
    root = components(n, a, b)[keep]  # a piece's smallest vertex (not np.unique: numpy.ma's import)
    if not 1 < np.count_nonzero(root == keep) <= _PIECES_APART:
        return None
    return root


def _placed(path, name: str, mesh: _Mesh, transform: np.ndarray, units) -> Part:
    """The prepared mesh moved by its node's full world transform (scale and shear kept)."""
    linear, shift = transform[:3, :3], transform[:3, 3]
    with np.errstate(over="ignore", invalid="ignore"):  # checked just below
        vertices = mesh.vertices @ linear.T + shift
    if not np.isfinite(vertices).all():
        raise InputError(path, f"object '{name}' has NaN or infinite coordinates after its "
                               f"node transform; fix the export")
    _check_extent(path, name, vertices, " after its node transform")
    faces = mesh.faces
    if np.linalg.det(linear) < 0:
        faces = faces[:, [0, 2, 1]]  # a mirror turns the mesh inside out: undo it
    return _frozen_part(name=name, source=str(path), vertices=vertices, faces=faces,
                        units=units, watertight=mesh.watertight, bodies=mesh.bodies)


def _frozen_part(*, name, source, vertices, faces, units, watertight, bodies, eps=0.0,
                 brep=None) -> Part:
    """A Part whose arrays are read-only: the engine, scan and reports share them."""
    vertices = np.ascontiguousarray(vertices, dtype=np.float64)
    faces = np.ascontiguousarray(faces, dtype=np.int64)
    vertices.flags.writeable = False
    faces.flags.writeable = False
    return Part(name=name, source=str(source), vertices=vertices, faces=faces, units=units,
                watertight=bool(watertight), bodies=int(bodies), eps=float(eps), brep=brep)


def _renamed(part: Part, name: str) -> Part:
    return dataclasses.replace(part, name=name)


# --------------------------------------------------------------------------------------------
# the fast path of `read_objects`: scene nodes -> parts, every node's vertices moved at once
# --------------------------------------------------------------------------------------------

def _trimesh_nodes(path, scene):
    """([(node, world transform, geometry name)], {geometry name: geometry}) of a trimesh Scene."""
    placed = _placements(path, scene)
    return [(node, *placed[node]) for node in scene.graph.nodes_geometry], scene.geometry


def _placements(path, scene) -> dict:
    """{node: (world transform (4, 4) float64, geometry name)} for a scene's nodes with geometry.

    A trimesh scene graph's transforms are composed here, in float64, down each node's chain
    of parents, each product once: trimesh's ``graph[node]`` drops every edge within 1e-8 of the
    identity (a chain of small steps loses them all) and orders a chain's product by
    numpy.linalg.multi_dot, whose plan costs cubic time and quadratic memory in the chain's
    length (a chain 20,000 deep ran for over 15 minutes; 100,000 deep asks for 75 GB).
    """
    graph = scene.graph
    if isinstance(graph, _ListedScene):  # composed by the reader already
        return {node: graph[node] for node in graph.nodes_geometry}
    from trimesh.transformations import fix_rigid

    forest = graph.transforms
    base = graph.base_frame
    repair = getattr(graph, "repair_rigid", None)
    world: dict = {base: np.eye(4)}
    out = {}
    for node in graph.nodes_geometry:
        chain = []
        frame = node
        while frame not in world:
            if frame not in forest.parents or len(chain) > len(forest.parents):
                raise InputError(path, f"node '{node}' is not connected to the scene's root; "
                                       f"re-export the file")
            chain.append(frame)
            frame = forest.parents[frame]
        for child in reversed(chain):
            parent = forest.parents[child]
            matrix = forest.edge_data[(parent, child)].get("matrix")
            world[child] = world[parent] if matrix is None else \
                world[parent] @ np.asarray(matrix, dtype=np.float64)
        matrix = world[node]
        if repair is not None:  # as trimesh's graph does: a rotation written with 6 digits
            matrix = fix_rigid(matrix, max_deviance=repair)  # (3DXML) made a rotation again
        out[node] = (matrix, forest.node_data[node].get("geometry"))
    return out


class _GltfMesh:
    """The fields of a trimesh geometry that `_mesh_arrays` reads, from trimesh's glTF kwargs."""

    def __init__(self, kwargs: dict):
        self.vertices = kwargs.get("vertices")
        self.faces = kwargs.get("faces")
        metadata = kwargs.get("metadata") or {}
        self.units = metadata.get("units")


def _read_gltf(path: Path):
    """A glTF or GLB file's nodes and meshes through trimesh's glTF parser, without a Scene.

    trimesh.load_scene does the same and then builds a trimesh.Trimesh per mesh and a SceneGraph
    (half its time on scenes of small parts). Node names, the order of the nodes, the merging of
    a mesh's primitives and the meshes' units are trimesh's: node names are the graph edges'
    `frame_to` (made unique by trimesh's parser), in the order the parser lists them, and each
    node's world transform is the product of the edge matrices from the base frame down.
    Any failure here sends the file through `_read` instead, which words the error.
    """
    import trimesh
    from trimesh.exchange import gltf

    loader = gltf.load_glb if path.suffix.lower() == ".glb" else gltf.load_gltf
    with open(path, "rb") as stream:
        kwargs = loader(stream, resolver=trimesh.resolvers.FilePathResolver(path),
                        merge_primitives=True)
    base = kwargs.get("base_frame", "world")
    parent: dict = {}
    nodes, seen = [], set()
    for edge in kwargs.get("graph") or []:
        child = edge["frame_to"]
        matrix = edge.get("matrix")
        parent[child] = (edge.get("frame_from", base),
                         np.eye(4) if matrix is None else np.asarray(matrix, dtype=np.float64))
        if edge.get("geometry") is not None and child not in seen:
            seen.add(child)
            nodes.append((child, edge["geometry"]))
    world: dict = {base: np.eye(4)}

    def transform(node):
        chain = []
        while node not in world:
            if node not in parent or len(chain) > len(parent):
                raise InputError(path, f"node '{node}' is not connected to the scene's root; "
                                       f"re-export the file")
            chain.append(node)
            node = parent[node][0]
        for child in reversed(chain):
            world[child] = world[parent[child][0]] @ parent[child][1]
        return world[chain[0]] if chain else world[node]

    geometry = {name: _GltfMesh(kw) for name, kw in (kwargs.get("geometry") or {}).items()}
    return [(node, transform(node), name) for node, name in nodes], geometry


def _placed_nodes(path, shown: str, names, nodes, geometry, only=None) -> list[Part]:
    """A part per node: its mesh (checked once per mesh) moved by its world transform.

    Both the checks and the transforms run on all meshes and nodes at once: world = R v + t,
    row by row, for every node's vertices. only : (start, stop) the parts of those nodes alone,
    the meshes told apart and shared as for all of them.
    """
    first_user: dict = {}
    for name, (_, _, geometry_name) in zip(names, nodes):
        first_user.setdefault(geometry_name, name)
    order = list(first_user)
    meshes = _mesh_arrays(path, [first_user[key] for key in order], [geometry[key] for key in order])
    same = _same_content(meshes)
    slot = {key: same[k] for k, key in enumerate(order)}
    mesh_of = np.array([slot[key] for _, _, key in nodes], dtype=np.int64)
    counts = np.array([len(v) for v, _, _ in meshes], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(counts)[:-1]])
    V = np.concatenate([v for v, _, _ in meshes])
    T = np.array([t for _, t, _ in nodes], dtype=np.float64).reshape(-1, 4, 4)
    placed = None
    if only is not None:  # which nodes share their mesh's hull, in the whole file; then the range
        start, stop = only
        everywhere = np.array(_shared_rigidly(T, np.linalg.det(T[:, :3, :3]), mesh_of), dtype=bool)
        placed = np.bincount(mesh_of[everywhere], minlength=len(meshes))
        shared_here = everywhere[start:stop].tolist()
        names, nodes, mesh_of, T = names[start:stop], nodes[start:stop], mesh_of[start:stop], T[start:stop]
        if not nodes:
            return []
    n_rows = counts[mesh_of]
    row_start = np.concatenate([[0], np.cumsum(n_rows)[:-1]])
    node_of_row = np.repeat(np.arange(len(nodes)), n_rows)
    rows = offsets[mesh_of][node_of_row] + np.arange(n_rows.sum()) - row_start[node_of_row]
    R, t = T[node_of_row, :3, :3], T[node_of_row, :3, 3]
    v = V[rows]
    world = R[:, :, 0] * v[:, 0:1] + R[:, :, 1] * v[:, 1:2] + R[:, :, 2] * v[:, 2:3] + t
    finite = np.isfinite(world).all(axis=1)
    if not finite.all():
        bad = int(node_of_row[np.argmin(finite)])
        raise InputError(path, f"object '{names[bad]}' has NaN or infinite coordinates after its "
                               f"node transform; fix the export")
    if len(world):
        top = np.abs(world).max(axis=1)
        if top.max() > DEFAULT.max_coordinate:
            bad = int(node_of_row[np.argmax(top)])
            moved = np.abs(V).max() <= DEFAULT.max_coordinate
            _check_extent(path, names[bad], world[node_of_row == bad], " after its node transform" if moved else "")
    det = np.linalg.det(T[:, :3, :3])
    mirrored = (det < 0).tolist()
    shared = _shared_rigidly(T, det, mesh_of) if placed is None else shared_here
    key = str(Path(path).resolve())
    starts, ends = row_start.tolist(), (row_start + n_rows).tolist()
    out = []
    for k, (name, m) in enumerate(zip(names, mesh_of.tolist())):
        local, faces, units = meshes[m]
        if mirrored[k]:
            faces = faces[:, [0, 2, 1]]  # a mirror turns the mesh inside out: undo it
        out.append(Part(name=name, source=shown, vertices=world[starts[k]: ends[k]], faces=faces,
                        units=units, watertight=None, bodies=None,
                        instance=Instance(key=(key, m), local=local, pose=T[k],
                                          placed=0 if placed is None else int(placed[m]))
                        if shared[k] else None))
    return out


def _gltf_range(path: Path, shown: str, named, share: tuple) -> list[Part] | None:
    """`read_objects`' share of a glTF's nodes, their meshes read and checked alone
    (`gltf.read_share`): each share of a Dask scan then parses the file's document, not all its
    meshes. None where the whole file is read for the share: its parts may depend on other
    nodes' meshes (shared or alike meshes, the triangle limit), or reading the range failed
    (the whole file's read then says what is wrong with the file, as one process says it)."""
    from gjkcli.mesh import gltf

    try:
        got = gltf.read_share(path, *share, current_limits().triangles)
        if got is None or got[0] == 0:
            return None
        count, nodes, geometry = got
        names = [named(_object_name(path, None, node, count)) for node, _, _ in nodes]
        parts = _placed_nodes(path, shown, names, nodes, geometry) if nodes else []
    except Exception:  # noqa: BLE001 - any failure: the whole read words it
        return None
    # meshes of the same content within the range (`_same_content`) share a hull placed once
    # per node, counted over the whole file: the whole read places them
    return None if any(p.instance is not None for p in parts) else parts


def _same_content(meshes: list) -> list:
    """Per mesh of `_mesh_arrays`, the first mesh of the same content (vertices, faces, units):
    a file that stores each copy of a part as an object of its own (3MF objects, glTF meshes)
    places one mesh several times, as its instances do, and its copies share one hull.

    Meshes are told apart first by their sizes and a weighted sum of their coordinates and of
    their indices, for all at once; only those alike in all of these are compared by a hash of
    their arrays."""
    if len(meshes) < 2:
        return list(range(len(meshes)))
    n_v = np.array([len(v) for v, _, _ in meshes])
    n_f = np.array([len(f) for _, f, _ in meshes])
    V = np.concatenate([v for v, _, _ in meshes])
    F = np.concatenate([f for _, f, _ in meshes])
    V = V[:, 0] + np.pi * V[:, 1] + np.e * V[:, 2]
    F = F[:, 0] + 7919 * F[:, 1] + 104729 * F[:, 2]
    v_sum = np.add.reduceat(V, np.concatenate([[0], np.cumsum(n_v)[:-1]])) if len(V) else np.zeros(len(meshes))
    f_sum = np.add.reduceat(F, np.concatenate([[0], np.cumsum(n_f)[:-1]])) if len(F) else np.zeros(len(meshes))
    alike: dict = {}
    for k, key in enumerate(zip(n_v.tolist(), n_f.tolist(), v_sum.tolist(), f_sum.tolist())):
        alike.setdefault((*key, meshes[k][2]), []).append(k)
    out = list(range(len(meshes)))
    for group in alike.values():
        if len(group) > 1:
            from gjkcli.digests import blake2b

            first: dict = {}
            for k in group:
                vertices, faces, _ = meshes[k]
                digest = blake2b(np.ascontiguousarray(vertices, dtype=np.float64), digest_size=16)
                digest.update(np.ascontiguousarray(faces, dtype=np.int64))
                out[k] = first.setdefault(digest.digest(), k)
    return out


def _shared_rigidly(T: np.ndarray, det: np.ndarray, mesh_of: np.ndarray) -> list:
    """(n,) bool per node: its mesh is placed by two nodes or more and its transform is a
    rotation and a translation (`gjkcli.engine.shapes.rigid_pose`'s test, for all nodes at once):
    such nodes share their mesh's hull (`Instance`)."""
    from gjkcli.tolerances import DEFAULT

    if len(T) == 0:
        return []
    R = T[:, :3, :3]
    gram = np.einsum("nji,njk->nik", R, R) - np.eye(3)
    rigid = ((np.abs(gram).max(axis=(1, 2)) <= DEFAULT.rigid_rel) & (det > 0)
             & (np.abs(T[:, 3] - [0.0, 0.0, 0.0, 1.0]).max(axis=1) <= DEFAULT.rigid_rel))
    uses = np.bincount(mesh_of)
    return (rigid & (uses[mesh_of] > 1)).tolist()


def _mesh_arrays(path, names, geometries) -> list:
    """[(vertices a triangle uses, faces into them, units)] of trimesh geometries, checked together.

    names : the object named in an error about each geometry (its first node)
    Errors as `_prepare`'s: no triangles, triangles pointing past the vertices, NaN or infinite
    coordinates (of vertices a triangle uses); vertices no triangle uses are dropped.
    """
    raw = []
    for name, g in zip(names, geometries):
        faces = getattr(g, "faces", None)
        if faces is None:
            kind = "a point cloud" if type(g).__name__ == "PointCloud" else "lines or points"
            raise InputError(path, f"object '{name}' is {kind} with no triangles; gjk needs "
                                   f"triangle meshes: export it as a mesh")
        raw.append((np.asarray(g.vertices, dtype=np.float64).reshape(-1, 3),
                    np.asarray(faces, dtype=np.int64).reshape(-1, 3), getattr(g, "units", None)))
    n_v = np.array([len(v) for v, _, _ in raw], dtype=np.int64)
    n_f = np.array([len(f) for _, f, _ in raw], dtype=np.int64)
    if np.any(n_f == 0):
        name = names[int(np.argmax(n_f == 0))]
        raise InputError(path, f"object '{name}' has no triangles; gjk needs triangle meshes: "
                               f"export it as a mesh")
    _check_triangles(path, int(n_f.sum()))
    F = np.concatenate([f for _, f, _ in raw])
    mesh_of_face = np.repeat(np.arange(len(raw)), n_f)
    f_starts = np.concatenate([[0], np.cumsum(n_f)[:-1]])
    out_of_range = (np.minimum.reduceat(F.min(axis=1), f_starts) < 0) \
        | (np.maximum.reduceat(F.max(axis=1), f_starts) >= n_v)
    if out_of_range.any():
        k = int(np.argmax(out_of_range))
        raise InputError(path, f"object '{names[k]}' has triangles that point past its "
                               f"{n_v[k]} vertices; re-export it")
    v_starts = np.concatenate([[0], np.cumsum(n_v)[:-1]])
    used = np.bincount((F + v_starts[mesh_of_face][:, None]).ravel(), minlength=int(n_v.sum())) > 0
    V = np.concatenate([v for v, _, _ in raw])
    bad = ~np.isfinite(V).all(axis=1) & used
    if bad.any():
        k = int(np.searchsorted(v_starts, np.argmax(bad), side="right") - 1)
        count = int(bad[v_starts[k]: v_starts[k] + n_v[k]].sum())
        raise InputError(path, f"object '{names[k]}' has NaN or infinite coordinates in {count} of "
                               f"{n_v[k]} vertices; fix the export")
    unused = np.add.reduceat(~used, v_starts) > 0 if len(V) else np.zeros(len(raw), dtype=bool)
    out = []
    for k, (vertices, faces, units) in enumerate(raw):
        if unused[k]:  # vertices no triangle uses are not part of the object
            keep = used[v_starts[k]: v_starts[k] + n_v[k]]
            index = np.cumsum(keep) - 1
            vertices, faces = vertices[keep], index[faces]
        out.append((vertices, faces, units))
    return out
