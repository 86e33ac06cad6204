"""What a run checks: the inputs a user gave, as named objects in world coordinates.

`gather` reads every source (a scene file whose nodes are objects, a file that is one object, a
manifest's includes, objects and primitives) into `Geometry` records, in input order, with
names made unique. A source that fails to read becomes a `Problem` naming the file; the others
are still read. Files are read in worker processes when there are several and `jobs` > 1.
"""
from __future__ import annotations

import contextlib
import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gjkcli.engine.shapes import can_fork
from gjkcli.errors import InputError, Note, Problem, ShapeError, one_line
from gjkcli.mesh.load import ROBOT_TYPES

__all__ = ["Geometry", "Source", "Problem", "gather", "scene_sources", "file_sources", "read_source",
           "assemble", "split_problems"]


@dataclass(frozen=True, eq=False)
class Geometry:
    """One object before its hull.

    vertices : (n, 3) float64, world coordinates (None for a primitive)
    faces : (m, 3) int64, indices into vertices (None for a primitive)
    primitive : the Shape of a manifest primitive, else None
    watertight, bodies : known when the object came through `gjkcli.mesh.load.load_objects`,
        else None (the fast path of scene files computes no topology)
    source : index of the source it came from (a check pairs objects of different sources)
    eps : how far the triangles may lie from the true surface (a CAD file's tessellation error
        bound, `gjkcli.mesh.cad`), in the object's units; 0 for a mesh file, which is its triangles
    brep : where the object's exact solids are (a tuple of `gjkcli.mesh.cad.SolidRef`), else None
    element : an IFC element's class, GlobalId, Name and hosts (`gjkcli.mesh.ifc.Element`), else
        None
    instance : the shared mesh and rigid pose of an instanced part (`gjkcli.mesh.load.Instance`:
        its hull is built once per mesh), else None
    owner : the object this one is an element of (a URDF link with several collision elements:
        never checked against its own elements, reported under the owner's name), else None
    """

    name: str
    file: str
    vertices: np.ndarray | None = None
    faces: np.ndarray | None = None
    units: str | None = None
    watertight: bool | None = None
    bodies: int | None = None
    primitive: object | None = None
    source: int = 0
    eps: float = 0.0
    brep: object | None = None
    element: object | None = None
    instance: object | None = None
    owner: str | None = None


@dataclass(frozen=True)
class Source:
    """A file to read: every object of it (`whole` False) or the whole file as one object.

    shown : the path as the user gave it; prefix : names become "<prefix>:<name>" (several files
    in one scan); name : the object's name when `whole`; transform : a further 4x4 placement
    """

    path: Path
    shown: str
    prefix: str | None = None
    transform: np.ndarray | None = None
    split_bodies: bool = False
    whole: bool = False
    name: str | None = None
    robot: object | None = None  # a gjkcli.scene.urdf.Robot: the file is a URDF
    pose: np.ndarray | None = None  # (d,) its joint values
    srdf: object | None = None  # the robot's SRDF (allowed pairs), or None
    share: tuple | None = None  # (k, n): share k of n of a file's objects (a cluster's task, `read_objects`)


# The robot files a directory expands to (`gjkcli.scene.urdf.is_urdf` reads them).
URDF_TYPES = ROBOT_TYPES


def _without_robot_meshes(found: list[Path], parse, skipped: dict) -> list[Path]:
    """The files of a directory but the meshes its URDF robots use (counted in `skipped`)."""
    used = set()
    for p in found:
        if robot_file(p):
            robot = parse(p)
            if not isinstance(robot, InputError):
                used |= {c.mesh.resolve() for c in robot.collisions if c.mesh is not None}
    if not used:
        return found
    kept = [p for p in found if p.resolve() not in used]
    skipped["meshes of the robots' links"] = len(found) - len(kept)
    return kept


def file_sources(paths, split_bodies: bool = False) -> list[Source]:
    """`gjk check`'s inputs: each file one object (or one per body), named after the file."""
    return [Source(path=Path(p), shown=str(p), whole=True, name=Path(p).name,
                   split_bodies=split_bodies) for p in paths]


def scene_sources(paths, manifest, split_bodies: bool, problems: list,
                  robot=None, *, recurse: bool = True, notes: list | None = None) -> tuple[list[Source], list]:
    """`gjk scan`'s inputs: (file sources, manifest primitives) from paths and a manifest.

    Directories expand (`gjkcli.mesh.load.expand_paths`, into subdirectories unless not
    `recurse`) to every file gjk reads, URDF robots too, but the meshes a robot found there
    uses (its links' geometry, not objects of their own) and 2D drawings (scanned on their
    own); what a directory held and the scan leaves out is said in `notes`. A path that does
    not exist is a problem and the rest are still read; a file reached twice (itself and its
    folder) is read once. A URDF (`gjkcli.scene.urdf`) is parsed here, its pose taken from
    `robot` (a RobotOptions); one that cannot be used is a problem; a link whose mesh file is
    not there is left out of the robot (`urdf.Robot.missing`: the run says it is not checked).
    """
    from gjkcli.mesh.load import expand_paths, skipped_text

    parsed_robots: dict = {}

    def parse(p: Path):
        if p not in parsed_robots:
            from gjkcli.scene import urdf  # only for a robot: not on a check of two meshes

            try:
                parsed_robots[p] = urdf.load(p, (robot or urdf.RobotOptions()).packages, missing="skip")
            except InputError as exc:  # the file's problem: the other inputs are still checked
                parsed_robots[p] = exc
        return parsed_robots[p]

    files: list[tuple[Path, np.ndarray | None, bool]] = []
    seen = set()
    for given in ([paths] if isinstance(paths, (str, os.PathLike)) else list(paths)):
        skipped: dict = {}
        try:
            found = expand_paths([given], recurse=recurse, also=URDF_TYPES, skipped=skipped)
        except InputError as exc:
            problems.append(Problem(file=exc.source, message=exc.message))
            continue
        if Path(given).is_dir():
            from gjkcli.mesh.flat import is_flat  # a folder's drawings only: not on every scan

            found = _without_robot_meshes(found, parse, skipped)
            drawings = [p for p in found if is_flat(p)]
            if drawings:
                skipped["2D drawings (scan them on their own)"] = len(drawings)
                found = [p for p in found if not is_flat(p)]
            if skipped and notes is not None:
                notes.append(f"{given}: read {len(found):,} files; left out {skipped_text(skipped)}")
        for p in found:
            if p.resolve() not in seen:
                seen.add(p.resolve())
                files.append((p, None, split_bodies))
    if manifest is not None:
        files.extend((inc.file, inc.transform, inc.split_bodies) for inc in manifest.includes)
    # several files share world coordinates; their objects are told apart by the file's name
    several = len(files) > 1
    shown = [str(p) for p, _, _ in files]
    base_names = [Path(p).name for p, _, _ in files]
    prefixes = [name if base_names.count(name) == 1 else Path(shown[k]).as_posix()
                for k, name in enumerate(base_names)]
    sources = []
    for k, (p, T, split) in enumerate(files):
        source = Source(path=Path(p), shown=shown[k], prefix=prefixes[k] if several else None,
                        transform=T, split_bodies=split)
        if robot_file(p):
            from gjkcli.scene import urdf

            options = robot or urdf.RobotOptions()
            parsed = parse(source.path)
            if isinstance(parsed, InputError):
                problems.append(Problem(file=parsed.source, message=one_line(parsed.message)))
                continue
            # a pose outside the limits is the user's error: the run stops with it (exit 2)
            source = dataclasses.replace(source, robot=parsed, srdf=options.srdf,
                                         pose=urdf.parse_joints(parsed, options.joints, options.srdf))
        sources.append(source)
    primitives = []
    if manifest is not None:
        for spec in manifest.robots:
            sources.append(_manifest_robot(spec, manifest))
        for spec in manifest.objects:
            if spec.file is not None:
                sources.append(Source(path=spec.file, shown=str(spec.file), transform=spec.transform,
                                      whole=True, name=spec.name))
            else:
                primitives.append(spec)
    return sources, primitives


# The suffixes `gjkcli.scene.urdf.is_urdf` may take (robots, and the formats it refuses with a
# reason): the URDF reader is imported for these only, not for a check of two meshes.
_ROBOT_SUFFIXES = (".urdf", ".xacro", ".sdf", ".mjcf", ".xml")


def robot_file(path) -> bool:
    """`urdf.is_urdf(path)`, importing the URDF reader only for a suffix it may take."""
    if Path(path).suffix.lower() not in _ROBOT_SUFFIXES:
        return False
    from gjkcli.scene import urdf

    return urdf.is_urdf(path)


def _manifest_robot(spec, manifest) -> Source:
    """A manifest's [[robot]]: its objects "<name>:<link>", placed by its transform; an error
    of the robot (its URDF, its pose) is the manifest's, on the robot's line."""
    try:
        from gjkcli.scene import urdf

        robot = urdf.load(spec.urdf, spec.packages, missing="skip")
        pose = urdf.parse_joints(robot, spec.joints, spec.srdf, where=f"[[robot]] {spec.name!r}: joints")
    except InputError as exc:
        raise manifest.error(spec.line, f"[[robot]] {spec.name!r}: {exc.source}: {exc.message}") from None
    return Source(path=spec.urdf, shown=str(spec.urdf), prefix=spec.name, transform=spec.transform,
                  robot=robot, pose=pose, srdf=spec.srdf)


def gather(sources: list[Source], primitives=(), manifest=None, *, jobs: int = 1,
           problems: list, tell=None, strict: bool = False, notes: list | None = None) -> list[Geometry]:
    """Every object of the sources (then the primitives), names made unique ("#2", "#3", ...).

    A source that cannot be read adds a `Problem` to `problems`; the others are still read.
    What a reader left out of a source it read (`errors.Note`) is a sentence in `notes`.
    strict : raise the first source's InputError instead (the traceback of --debug).
    """
    from gjkcli.mesh import cad_process

    tell = tell or (lambda stage, done, total: None)
    results: list = [None] * len(sources)
    done = 0
    tell("load", 0, len(sources))
    # STEP files that OpenCASCADE's own process reads (gjkcli.mesh.cad_process) are asked of it
    # from here, after the others
    served = [s.robot is None and s.path is not None and cad_process.serves(s.path) for s in sources]
    rest = [k for k in range(len(sources)) if not served[k]]
    if jobs > 1 and len(rest) > 1 and can_fork():
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(min(jobs, len(rest)),
                                 mp_context=multiprocessing.get_context("fork")) as pool:
            futures = [(k, pool.submit(read_source, sources[k], strict)) for k in rest]
            for k, f in futures:
                results[k] = f.result()
                done += 1
                tell("load", done, len(sources))
        rest = []
    from gjkcli import progress
    from gjkcli.scene.watch import watch_reading

    for k in rest + [k for k in range(len(sources)) if served[k]]:
        s = sources[k]
        # a big file moves a bar of its own while it loads: the bytes its reader has read,
        # and what the reader reports (IFC elements meshed, STEP solids tessellated)
        # (a STEP file in OpenCASCADE's process, which reads it)
        with watch_reading(s.path, tell, pid=cad_process.reader() if served[k] else "self") \
                if s.robot is None and s.path is not None else contextlib.nullcontext(), \
                progress.reporting(tell), _readers(s, jobs):
            results[k] = read_source(s, strict)
        done += 1
        tell("load", done, len(sources))
    return assemble(results, primitives, manifest, problems=problems, notes=notes)


def _readers(s: Source, jobs: int):
    """Within the block, an IFC model of the source is meshed by up to `jobs` forked readers at
    once (`gjkcli.mesh.ifc.readers`: the run reads this one file at a time)."""
    from gjkcli.mesh.load import is_ifc

    if jobs <= 1 or s.robot is not None or s.path is None or not is_ifc(s.path):
        return contextlib.nullcontext()
    from gjkcli.mesh.ifc import readers

    return readers(jobs)


def assemble(results: list, primitives=(), manifest=None, *, problems: list,
             notes: list | None = None) -> list[Geometry]:
    """The objects of the sources, from `read_source`'s answers in source order (a Problem adds
    itself to `problems`, a Note its sentence to `notes`), then the primitives; names made
    unique."""
    geoms: list[Geometry] = []
    for k, got in enumerate(results):
        if isinstance(got, Problem):
            problems.append(got)
        else:
            got, skipped = split_problems(got)
            geoms.extend(g if g.source == k else dataclasses.replace(g, source=k) for g in got)
            problems.extend(p for p in skipped if isinstance(p, Problem))
            if notes is not None:
                notes.extend(str(n) for n in skipped if isinstance(n, Note))
    geoms.extend(_primitive(spec, manifest, len(results) + n) for n, spec in enumerate(primitives))
    return _unique_names(geoms)


def split_problems(got: list) -> tuple[list, list]:
    """(objects, problems) of a `read_source` list: the problems are its IFC elements whose
    geometry failed (Problems) and what its reader left out (a Note), after the objects."""
    problems = [g for g in got if isinstance(g, (Problem, Note))]
    return ([g for g in got if not isinstance(g, (Problem, Note))], problems) if problems else (got, [])


def read_source(s: Source, strict: bool = False):
    """A source's objects, or a Problem naming the file (never raises an InputError unless
    strict). The list ends with a Problem per IFC element whose geometry failed (`split_problems`
    takes them apart)."""
    from gjkcli.mesh.load import load_objects, load_part, read_objects

    skipped: list[str] | None = None if strict else []
    try:
        if s.robot is not None:
            from gjkcli.scene import urdf

            return urdf.read_geometries(s.robot, s.pose, shown=s.shown, prefix=s.prefix,
                                        transform=s.transform)
        if s.whole and s.split_bodies:
            parts = load_objects(s.path, split_bodies=True, skipped=skipped)
            if len(parts) == 1:
                parts = [load_part(s.path, skipped=skipped)]
            geoms = [Geometry(name=s.name if len(parts) == 1 else p.name, file=s.shown,
                              vertices=p.vertices, faces=p.faces, units=p.units,
                              watertight=p.watertight, bodies=p.bodies, eps=p.eps, brep=p.brep,
                              element=p.element)
                     for p in parts]
        elif s.whole:
            part = load_part(s.path, skipped=skipped)
            geoms = [Geometry(name=s.name, file=s.shown, vertices=part.vertices, faces=part.faces,
                              units=part.units, watertight=part.watertight, bodies=part.bodies,
                              eps=part.eps, brep=part.brep, element=part.element)]
        else:
            geoms = [Geometry(name=p.name, file=p.source, vertices=p.vertices, faces=p.faces,
                              units=p.units, watertight=p.watertight, bodies=p.bodies,
                              eps=p.eps, brep=p.brep, element=p.element, instance=p.instance)
                     for p in read_objects(s.path, split_bodies=s.split_bodies, prefix=s.prefix,
                                           shown=s.shown, skipped=skipped, share=s.share)]
        if s.transform is not None:
            geoms = [_moved(g, s.transform) for g in geoms]
        return geoms + [line if isinstance(line, Note) else
                        Problem(file=s.shown, message=one_line(line), order=getattr(line, "order", ()))
                        for line in skipped or ()]
    except InputError as exc:
        if strict:
            raise
        return Problem(file=s.shown, message=one_line(exc.message))
    except Exception as exc:  # noqa: BLE001 - a file trimesh chokes on must not stop the run
        if strict:
            raise
        from gjkcli.mesh.load import explain

        return Problem(file=s.shown, message=f"cannot read it: {explain(exc)}; re-export it")


def _moved(g: Geometry, T: np.ndarray) -> Geometry:
    """The geometry with a further 4x4 transform (scale and shear too) applied to its vertices."""
    vertices = g.vertices @ T[:3, :3].T + T[:3, 3]
    faces = g.faces[:, [0, 2, 1]] if np.linalg.det(T[:3, :3]) < 0 else g.faces
    # a stretch stretches the tessellation error by at most the largest singular value; the
    # exact solids are not moved with it, so a CAD part placed by a manifest has none
    eps = g.eps * float(np.linalg.norm(T[:3, :3], 2)) if g.eps else g.eps
    return dataclasses.replace(g, vertices=vertices, faces=faces, eps=eps, brep=None,
                               instance=placed(g.instance, T))


def placed(instance, T: np.ndarray):
    """An Instance (`gjkcli.mesh.load.Instance`) moved further by the 4x4 transform T, or None
    (none given, or T not rigid: the mesh then differs from its shared one by more than a pose)."""
    from gjkcli.engine.shapes import rigid_pose

    if instance is None or rigid_pose(T) is None:
        return None
    return dataclasses.replace(instance, pose=np.asarray(T, dtype=np.float64) @ instance.pose)


def _primitive(spec, manifest, source: int) -> Geometry:
    from gjkcli.engine.shapes import Shape

    p = spec.params
    try:
        if spec.primitive == "box":
            shape = Shape.box(p["extents"], transform=spec.transform)
        elif spec.primitive == "sphere":
            shape = Shape.sphere(p["radius"], center=spec.transform[:3, 3])
        elif spec.primitive == "capsule":
            shape = Shape.capsule(p["radius"], p["length"], transform=spec.transform)
        else:
            shape = Shape.cylinder(p["radius"], p["height"], transform=spec.transform)
    except ShapeError as exc:
        raise manifest.error(spec.line, f"[[object]] {spec.name!r}: {exc}") from exc
    return Geometry(name=spec.name, file=str(manifest.path), primitive=shape, watertight=True,
                    bodies=1, source=source)


def _unique_names(geoms: list[Geometry]) -> list[Geometry]:
    """Objects of one name get "#2", "#3", ... after the first."""
    seen: dict[str, int] = {}
    taken = {g.name for g in geoms}
    out = []
    for g in geoms:
        if g.name in seen:
            k = seen[g.name] + 1
            while f"{g.name}#{k}" in taken:
                k += 1
            seen[g.name] = k
            taken.add(f"{g.name}#{k}")
            g = dataclasses.replace(g, name=f"{g.name}#{k}")
        else:
            seen[g.name] = 1
        out.append(g)
    return out
