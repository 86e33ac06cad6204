"""IFC models (IFC2X3, IFC4, IFC4X3) through IfcOpenShell's geometry iterator: one part per
physical element.

An element is *physical* when it is an ``IfcElement`` that is neither a feature (openings,
projections, surface features: ``IfcFeatureElement``) nor an ``IfcVirtualElement``. It is read
when it has a 3D body IfcOpenShell's geometry iterator meshes: a representation (``Body``,
``Facetation``, or any other label) of a solid, surface or tessellation kind in one of the
contexts the iterator reads, whatever the exporter called them (`_meshed_contexts`: those of
type 'Model', 'Design', 'Model View' or 'Detail View' and their sub-contexts, or every context
when the file has none of those; and every context when those hold no representation at all,
as ICPrefab's precast models put their extruded bodies in a 3D context it calls 'Plan' beside
an empty 'Model' one: a note then says so). A physical element with no such body is left out and named in
`IfcModel.left_out` (the run says so in a note: `left_out_note`), never dropped in silence; an
assembly with no representation of its own, made of parts (Tekla's IfcElementAssembly), is not
left out: its parts are the elements read (as an ArchiCAD wall with an axis only, made of
IfcBuildingElementParts). Spaces, zones, sites, storeys (spatial elements), annotations, grids and
ports are not ``IfcElement`` and are never objects. Each part is named
``IfcWall 'Wall name' 2cKYIHmn9FAgfuNu$zAIQL`` (class, Name, GlobalId; the Name is left out when
the file gives none) and carries an `Element`: its class (with the supertypes, for manifest
groups), GlobalId, Name and the GlobalIds of the elements it is hosted by (it fills an opening,
``IfcRelFillsElement``, that voids them, ``IfcRelVoidsElement``).

The iterator triangulates every element in world coordinates (its placement chain applied,
openings subtracted) and in the FILE's length unit (``convert-back-units``: a model in
millimetres stays in millimetres), which is reported as the part's `units` ("mm", "m", "in",
...), with IfcOpenShell's hybrid kernel (`GEOMETRY_LIBRARY`). An element whose body is a
representation map that other elements place too (IfcMappedItem: a type's geometry, Revit's
furniture, curtain-wall mullions and panels) is not: the map is meshed once, in its own frame,
and placed by each element's matrix (`_mesh_share`, `_placed`), and the element carries that
mesh and its placement (IfcModel.parts), which `gjkcli.mesh.load` makes an `Instance`, so that
the run prepares the map once (its hull, its triangle hierarchy, its convexity reason) and places
it. In world coordinates IfcOpenShell meshes the map again for every element, with triangles of
its own each time (the 28 chairs of Revit's sample project, one map of 1,106 points: 0.42 s of
the iterator's 0.56 s). Its iterator runs on one thread
(more made the roof slower). Where the platform forks, the read runs in forked children that
send the parts back (`_read_in_children`), so IfcOpenShell's memory is never the checking
process's: one child, or for a model of SPLIT_FROM_BYTES or more and a run of several jobs
(`readers`), one per job, each parsing the file and meshing its share of the elements (every
n-th of them in the file's order, n readers: a model's costly elements, often neighbours in the
file, such as the furniture of Revit's sample project, then fall to every reader, where
contiguous runs left one reader with 0.79 s of 0.9), the parts joined in the file's order. A
model under SPLIT_FROM_BYTES named on the `gjk` command line is read ahead (`read_here`) by the
process the command forks as it starts (`gjkcli.mesh.cad_process`), which `gjkcli.mesh.load`
asks for it.

An element whose geometry the iterator cannot build is left out and named in `IfcModel.failed`
(one line each); the others are read.

IfcOpenShell is imported on the first read (in the child), so ``gjk --help`` never pays for it.
"""
from __future__ import annotations

import re
import sys
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from gjkcli import extras, progress
from gjkcli.errors import FailedLine, InputError
from gjkcli.mesh import cad_process
from gjkcli.units import canonical

__all__ = ["Element", "IfcModel", "read", "read_here", "read_share", "select", "element_label", "left_out_note",
           "IFC_TYPES", "telling_points", "kept_meshes", "reading_only"]

# File suffixes read as IFC: STEP physical files of an IFC schema, and ifcZIP (a zip holding one
# such file, read as that file). ifcXML is recognised to be refused in one line: IfcOpenShell 0.9
# does not read it ("Reading .ifcXML files is not currently supported").
IFC_TYPES = ("ifc", "ifczip", "ifcxml")

# IfcElement subclasses that are not physical: openings and projections are features of their
# host; virtual elements are boundaries with no matter.
_NOT_PHYSICAL = ("IfcFeatureElement", "IfcVirtualElement")


# The reason of a pair an IFC model itself allows: an element that fills an opening in its host.
HOSTED = "hosted"


@dataclass(frozen=True)
class Element:
    """What an object read from IFC is in the model.

    ifc_class : the entity's class, "IfcWall"
    classes : the class and its supertypes up to IfcRoot, most specific first ("IfcWall",
        "IfcBuildingElement", "IfcElement", "IfcProduct", "IfcObject", ...)
    global_id : the 22-character IfcGloballyUniqueId
    name : the element's Name attribute, None when absent
    hosts : GlobalIds of the elements whose openings this element fills (a door: its wall)
    step : the element's step id (#n) in its file, its place in the file's order (the shares
        of `read_share` join by it); not compared, never reported
    """

    ifc_class: str
    classes: tuple
    global_id: str
    name: str | None = None
    hosts: tuple = ()
    step: int = field(default=0, compare=False, repr=False)

    # What the run reads of an object's element, whatever its format (`gjkcli.pipeline.stages`):
    # its id within its file, the records' fields it fills, and the objects of its file it may
    # touch with the reason; the run applies them without knowing IFC.
    @property
    def ident(self) -> str:
        return self.global_id

    @property
    def record_fields(self) -> dict:
        """The ObjectRecord fields this element fills: its class, GlobalId and Name."""
        return {"ifc_class": self.ifc_class, "global_id": self.global_id, "ifc_name": self.name}

    @property
    def allowed_with(self) -> tuple:
        """((ident, reason), ...): elements of the same file this one may meet, as the model says:
        the hosts whose openings it fills (a door in its wall), "hosted"."""
        return tuple((host, HOSTED) for host in self.hosts)


@dataclass(frozen=True)
class IfcModel:
    """A read IFC file.

    parts : [(name, vertices (n, 3) float64, faces (m, 3) int64, Element, placement)] in the
        file's order; placement: for an element placing a representation map other elements
        place too, (the map's vertices (k, 3) in its own frame, which `faces` index too; the 4x4
        matrix that places them; how many elements of the model place the map), else None
    units : the length unit ("mm", "m", "in", ...), None when the file states none
    schema : "IFC2X3", "IFC4", ...
    failed : one line per physical element whose geometry could not be built
    left_out : (class, GlobalId, what it has instead) per physical element with no 3D body the
        iterator meshes, in the file's order
    notes : what the read assumed (bodies read from every context: `_meshed_contexts`), and
        what the cache of element meshes noted as the model was read ahead
        (`gjkcli.mesh.cad_process`): entries it did not believe, a folder it could not write
    cut_away : one `FailedLine` per element whose openings cut its body away whole (ArchiCAD's
        window frames modelled as walls the size of their opening): nothing of it is left to
        check, which is no failure; in the file's order
    """

    parts: list
    units: str | None
    schema: str
    failed: tuple = ()
    left_out: tuple = ()
    notes: tuple = ()
    cut_away: tuple = ()


# How many GlobalIds of each class a note on the elements left out names.
_FIRST_IDS = 3


def left_out_note(model: IfcModel) -> str | None:
    """One sentence on the physical elements the model leaves out for want of a 3D body: how
    many, per class (most first) with the first GlobalIds, and what they have instead; None when
    there is none. "left out 3 physical elements with no 3D body IfcOpenShell meshes: IfcWall 2
    (2cKY..., 0Qz...), IfcColumn 1 (3Ab...); they have 'FootPrint' in a 'Plan' context".
    """
    if not model.left_out:
        return None
    by_class: dict = {}
    for ifc_class, global_id, _ in model.left_out:
        by_class.setdefault(ifc_class, []).append(global_id)
    classes = ", ".join(f"{c} {len(ids)} ({', '.join(ids[:_FIRST_IDS])}{', ...' if len(ids) > _FIRST_IDS else ''})"
                        for c, ids in sorted(by_class.items(), key=lambda kv: (-len(kv[1]), kv[0])))
    kinds = sorted({k for _, _, have in model.left_out for k in have})
    have = (f"; they have {', '.join(kinds[:4])}{', ...' if len(kinds) > 4 else ''}" if kinds
            else "; they have no representation")
    n = len(model.left_out)
    return (f"left out {n:,} physical element{'s' if n > 1 else ''} with no 3D body IfcOpenShell "
            f"meshes: {classes}{have}")


def element_label(element) -> str:
    """``IfcWall 'Wall name' 2cKYIHmn...``: class, Name (when given and not blank) and GlobalId."""
    name = getattr(element, "Name", None)
    quoted = f" '{name}'" if name and name.strip() else ""
    return f"{element.is_a()}{quoted} {element.GlobalId}"


def read(path: str | Path) -> IfcModel:
    """Every physical element of an IFC file (or the one .ifc of an ifcZIP) as triangles in world
    coordinates, file units.

    Raises
    ------
    InputError
        The file is not IFC IfcOpenShell can open (syntax, unknown schema), or it holds no
        physical element with a body, or the geometry of none of them can be built.
    """
    path = Path(path)
    kind = path.suffix.lower()
    if kind == ".ifcxml":
        raise InputError(path, "is ifcXML, which IfcOpenShell (and so gjk) does not read; export "
                               "the model as .ifc or .ifczip")
    if _may_fork():
        large = path.stat().st_size >= SPLIT_FROM_BYTES
        _kept()  # the cache's meshes opened here once, not by each reader child
        return _read_in_children(path, max(1, _READERS[-1]) if large else 1)
    with _step_file(path) as step:
        return _joined(path, [_read(path, step)])


def read_here(path: str | Path, shares: int = 1) -> IfcModel:
    """`read` in this process, whatever it is (`gjkcli.mesh.cad_process`'s, which reads a model
    ahead as the command starts): the same model, or the InputError a reader child sends.
    shares > 1: the file is parsed here once, then forked copies of this process (`gjkcli.forks`)
    mesh shares 1 to shares - 1 of its elements while this one meshes share 0, as `read`'s
    children do; they do not import IfcOpenShell or parse the file again."""
    path = Path(path)
    if path.suffix.lower() == ".ifcxml":
        return read(path)
    try:
        with _step_file(path) as step:
            if shares <= 1:
                return _joined(path, [_read(path, step)])
            return _joined(path, _read_split(path, step, shares))
    except InputError:
        raise
    except Exception as exc:  # noqa: BLE001 - as a reader child says it (`_child`)
        raise InputError(str(path), f"IfcOpenShell could not read it: {_first_line(exc)}") from None


def _read_split(path: Path, step: Path, shares: int) -> list:
    """`read_here`'s shares: the model opened here, shares 1.. meshed by forked copies (any this
    process could not fork meshed here after its own)."""
    import functools

    from gjkcli import forks

    model = _open(path, step)
    chosen = _chosen(path, model)  # once, here: the copies forked next have it
    if len(chosen[0]) < SPLIT_FROM_ELEMENTS:  # a few elements: a fork buys nothing
        return [_read(path, step, model=model, chosen=chosen)]
    crew: list = []
    try:
        for k in range(1, shares):
            try:
                crew.append(forks.Worker(functools.partial(_forked_share, path, step, model, k, shares,
                                                           chosen)))
            except OSError:  # no process left to fork (a limit): meshed here
                break
        got = [_read(path, step, 0, shares, model, interleaved=True, chosen=chosen)]
        got += [_read(path, step, k, shares, model, interleaved=True, chosen=chosen)
                for k in range(len(crew) + 1, shares)]
        answers = []
        for worker in crew:
            kind, value = worker.receive()
            if kind == "error":
                raise value
            answers.append(value)
        return [got[0], *answers, *got[1:]]
    finally:
        for worker in crew:  # reaped: their CPU time and memory count as the command's
            worker.close()


def _forked_share(path: Path, step: Path, model, k: int, shares: int, chosen, _parent) -> _Share:
    with telling_points(_point_sinks[-1][0]):  # the process it was forked from tells, so it does
        return _read(path, step, k, shares, model, interleaved=True, chosen=chosen)


def read_share(path: str | Path, k: int, shares: int) -> IfcModel:
    """Share k of `shares` of a model's elements (a cluster's share: those `_spread_share`
    deals to it, spread over the whole file, so that a run of costly neighbours, such as a
    truss's beams, falls to every share), read in this process:
    IfcOpenShell's iterator over that subset only (`include=`), the file opened here. What
    `read` gives is the shares' parts joined in the file's order (each part's `Element.step`)
    and their failed lines in the order of their `FailedLine.order`; share 0 names the
    elements left out. A share may hold no part (its elements' geometry all failed), which
    `read` of the whole model would raise only if no share held one."""
    path = Path(path)
    if path.suffix.lower() == ".ifcxml":
        return read(path)
    try:
        with _step_file(path) as step:
            got = _read(path, step, k, shares, spread=True)
    except InputError:
        raise
    except Exception as exc:  # noqa: BLE001 - as a reader child says it (`_child`)
        raise InputError(str(path), f"IfcOpenShell could not read it: {_first_line(exc)}") from None
    failed = [FailedLine(line, order) for order, line in sorted(got.failed, key=lambda f: f[0])]
    return IfcModel(parts=got.parts, units=got.units, schema=got.schema, failed=tuple(failed),
                    left_out=tuple(got.left_out), notes=tuple(got.notes), cut_away=_ordered([got.cut_away]))


# The smallest model read by several children at once (when the run has several jobs): each
# child parses the whole file and imports IfcOpenShell (about 0.4 s on the 3.8 MB Great Court
# roof, against its 2.6 s of meshing), which a few walls do not repay.
SPLIT_FROM_BYTES = cad_process.IFC_SPLIT_FROM_BYTES  # (which reads smaller ones ahead)
_READERS = [1]  # how many children `read` may split a large model over (`readers`)
# A model named alone and read ahead in shares (`read_here`) is meshed whole by one process when
# it has fewer physical elements with a body than this: VectorWorks' windows in a curved wall
# (0.5 MB, 3 elements) gain nothing from a second reader, ISSUE_171's 40 swept solids (0.25 MB)
# gain a fifth of the scan's wall time on two cores.
SPLIT_FROM_ELEMENTS = 16


# The meshes of elements seen before (`kept_meshes`): (table, key prefix) or None.
_KEPT: list = [None]


def _kept():
    """`kept_meshes`' (table, prefix) of this read, its table opened if it was given as a
    callable; None without one."""
    kept = _KEPT[-1]
    if kept is not None and callable(kept[0]):
        table = kept[0]()
        kept = _KEPT[-1] = None if table is None else (table, kept[1])
    return kept


@contextmanager
def kept_meshes(table, prefix: bytes = b""):
    """Within the block, `read` takes the triangles of an element whose definition it has seen
    before from `table` (the run's cache: `get(key)` -> (data, {"v", "f"}) or None, `put(key,
    data, arrays)`, `save()`), and meshes only the others (IfcOpenShell's iterator given them
    as `include`), keeping theirs. An element's key is a BLAKE2b digest of `prefix`, the
    iterator's settings and IfcOpenShell's version, and the text of every entity the element
    refers to, directly or not (its placement chain, its representation's items, their
    profiles and points: `traverse`), and of the openings IfcOpenShell cuts from it
    (`_voids`), with theirs: a change to any of them (a moved beam, a new opening) is a
    change of the key. `table` may also be a callable that opens it (or gives None): it is
    called when a read first needs it (`_kept`), so that a run whose models were all read ahead
    (`gjkcli.mesh.cad_process`) never reads the cache's packs of meshes."""
    _KEPT.append(None if table is None else (table, prefix))
    try:
        yield
    finally:
        _KEPT.pop()


def _element_keys(model, elements, prefix: bytes, placed=frozenset()) -> dict:
    """{element id: its key} (see `kept_meshes`); each entity's text is made once. The elements
    `placed` (ids: meshed in their map's frame and placed, `_mesh_share`) are keyed apart from
    those meshed in world coordinates."""
    from gjkcli.digests import blake2b

    text: dict = {}
    out = {}
    for e in elements:
        h = blake2b(prefix + (b"|placed" if e.id() in placed else b""), digest_size=20)
        for root in (e, *_voids(e)):
            for entity in model.traverse(root):
                n = entity.id()
                line = text.get(n) if n else None
                if line is None:
                    line = str(entity).encode()
                    if n:
                        text[n] = line
                h.update(line)
            h.update(b"|")
        out[e.id()] = h.hexdigest()
    return out


def _voids(e) -> list:
    """The openings IfcOpenShell's iterator cuts from element `e`: those that void it, and those
    that void an object it is a part of, at any level (an IfcRoof's openings cut its slabs:
    duplex.ifc's skylight openings are the roof's, and its slab's triangles change when one
    moves)."""
    out, seen, todo = [], set(), [e]
    while todo:
        x = todo.pop()
        if x.id() in seen:
            continue
        seen.add(x.id())
        out.extend(r.RelatedOpeningElement for r in (getattr(x, "HasOpenings", None) or ()))
        # IFC2X3's Decomposes holds nesting too: followed as well (a key that holds more is
        # only stricter)
        todo.extend(r.RelatingObject for r in (getattr(x, "Decomposes", None) or ()))
    return out


@contextmanager
def readers(n: int):
    """Within the block, `read` meshes a model of SPLIT_FROM_BYTES or more in up to n forked
    children at once (a scan's --jobs, when it reads one file at a time)."""
    _READERS.append(int(n))
    try:
        yield
    finally:
        _READERS.pop()


def _may_fork() -> bool:
    """Whether `read` runs in a forked child: the platform forks, manifold3d has not run here
    (`gjkcli.engine.shapes.can_fork`), this process is not itself a daemonic worker (a process
    pool's or a cluster's, which may have no children), and the read is on the main thread (a
    threaded worker's task reads in place)."""
    import multiprocessing
    import threading

    from gjkcli.engine.shapes import can_fork

    return (can_fork() and not multiprocessing.current_process().daemon
            and threading.current_thread() is threading.main_thread())


def _read_in_children(path: Path, shares: int) -> IfcModel:
    """`read` in `shares` forked children, child k meshing share k of the elements; each sends
    back its share's parts and, while it meshes, the progress it reports (summed here).
    IfcOpenShell (its modules, the parsed file, the geometry kernels' libraries and caches:
    about 85 MB on the Great Court roof) then never lives in this process, which goes on to
    check the parts; a crash of IfcOpenShell's is an InputError here."""
    import multiprocessing
    from multiprocessing.connection import wait

    context = multiprocessing.get_context("fork")
    listened = progress.listening()
    pipes, children = {}, []
    try:
        for k in range(shares):
            receive, send = context.Pipe(duplex=False)
            child = context.Process(target=_child, args=(path, send, listened, k, shares), daemon=True,
                                    name=f"gjk-ifc-read-{k}")
            child.start()
            send.close()
            pipes[receive] = k
            children.append(child)
        got: list = [None] * shares
        done, total = [0] * shares, [0] * shares
        while pipes:
            for receive in wait(list(pipes)):
                k = pipes[receive]
                try:
                    kind, *message = receive.recv()
                except EOFError:
                    children[k].join()
                    raise InputError(path, f"IfcOpenShell stopped while reading it (exit code "
                                           f"{children[k].exitcode}); check the file with another IFC "
                                           f"viewer") from None
                if kind == "progress":
                    stage, done[k], total[k] = message
                    progress.report(stage, sum(done), sum(total))
                elif kind == "share":
                    got[k] = message[0]
                    del pipes[receive]
                    receive.close()
                else:
                    raise InputError(*message)
        return _joined(path, got)
    finally:
        for receive in pipes:
            receive.close()
        for child in children:
            if child.is_alive():
                child.terminate()
            child.join()


def _child(path: Path, send, listened: bool, k: int = 0, shares: int = 1) -> None:
    """A forked reader of share k: ("progress", stage, done, total) messages while a progress
    bar listens, then ("share", _Share) or ("error", source, message)."""
    def tell(stage, done, total):
        send.send(("progress", stage, done, total))

    reading_only()
    try:
        with progress.reporting(tell if listened else None), _step_file(path) as step:
            answer = ("share", _read(path, step, k, shares, interleaved=True))
    except InputError as exc:
        answer = ("error", exc.source, exc.message)
    except Exception as exc:  # noqa: BLE001 - said in the parent as a line, as any reader's failure
        answer = ("error", str(path), f"IfcOpenShell could not read it: {_first_line(exc)}")
    send.send(answer)
    send.close()


def select(path: str | Path, queries) -> dict:
    """{query: frozenset of GlobalIds}: the elements each query of IfcOpenShell's selector syntax
    (`ifcopenshell.util.selector.filter_elements`: ``"IfcBeam, IfcMember"``,
    ``"IfcWall, /Pset_WallCommon/.IsExternal=TRUE"``, ``"IfcElement, ! IfcSpace"``) returns
    from the model, which is opened once for all of them.

    Raises InputError when the file cannot be opened or a query fails on it.
    """
    path = Path(path)
    with _step_file(path) as step:
        return _select(path, step, queries)


def _select(path: Path, ifc_file: Path, queries) -> dict:
    ifcopenshell, _ = _ifcopenshell()
    import ifcopenshell.util.selector as selector

    try:
        model = ifcopenshell.open(str(ifc_file))
    except Exception as exc:  # noqa: BLE001 - as in `read`
        raise InputError(path, f"is not an IFC file IfcOpenShell can read: {_first_line(exc)}") from None
    out = {}
    for query in queries:
        try:
            chosen = selector.filter_elements(model, query)
        except Exception as exc:  # noqa: BLE001 - the selector's own failures on this model
            raise InputError(path, f"the selector query {query!r} fails on this model: "
                                   f"{_first_line(exc)}") from None
        out[query] = frozenset(e.GlobalId for e in chosen if hasattr(e, "GlobalId"))
    return out


@contextmanager
def _step_file(path: Path):
    """The IFC STEP file to open: the file itself, or the .ifc of an ifcZIP extracted into a
    temporary folder that lives as long as the context."""
    if path.suffix.lower() != ".ifczip":
        yield path
        return
    import tempfile

    with tempfile.TemporaryDirectory(prefix="gjk-ifczip-") as folder:
        yield _unzipped(path, Path(folder))


def _unzipped(path: Path, folder: Path) -> Path:
    """The .ifc inside an ifcZIP, extracted into `folder` (the archive's sizes and ratios were
    checked against the limits before: gjkcli.mesh.load)."""
    import zipfile

    try:
        with zipfile.ZipFile(path) as archive:
            members = [m for m in archive.infolist() if not m.is_dir()]
            ifcs = [m for m in members if m.filename.lower().endswith(".ifc")]
            if len(ifcs) != 1:
                xml = any(m.filename.lower().endswith(".ifcxml") for m in members)
                what = ("holds ifcXML, which IfcOpenShell does not read" if xml and not ifcs else
                        f"holds {len(ifcs)} .ifc files ({', '.join(m.filename for m in ifcs[:3])})"
                        if ifcs else "holds no .ifc file")
                raise InputError(path, f"is an ifcZIP that {what}; an ifcZIP holds one .ifc model")
            return Path(archive.extract(ifcs[0], folder))
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        raise InputError(path, f"is not a readable ifcZIP: {_first_line(exc)}; zip the .ifc "
                               f"again") from None


@dataclass(frozen=True)
class _Share:
    """What one reader meshed of a model: parts as IfcModel's, in the file's order; failed as
    (order, line) pairs, so that the lines of several shares join in one reader's order; the
    number of physical elements with a body in the whole model; the physical elements with
    none (IfcModel.left_out) and what the read assumed (IfcModel.notes): share 0 names them, the
    others none."""

    parts: list
    failed: list
    elements: int
    units: str | None
    schema: str
    left_out: list = ()
    ids: list = ()  # the step ids of `parts`' elements, in order
    notes: list = ()
    cut_away: list = ()  # (order, line) as `failed`


_point_sinks: list = [(None, 0)]  # (tell, the process id that put it in force): `telling_points`


@contextmanager
def telling_points(tell):
    """Within the block, tell(vertices) after each element this process meshes: the early
    reader (`gjkcli.mesh.cad_process`) tells the command from it whether the parts will need
    SciPy's qhull before they are all meshed. A copy forked meanwhile tells nothing unless it puts the tell in force again
    (`read_here`'s copies do)."""
    import os

    _point_sinks.append((tell, os.getpid()))
    try:
        yield
    finally:
        _point_sinks.pop()


def _tell_points(vertices, shared: bool = False) -> None:
    """Tell the vertices of an element just meshed; `shared`: it places a map other elements
    place too (its hull is built once for all of them, `gjkcli.engine.shapes.SHARED_HULL_POINTS`)."""
    import os

    tell, pid = _point_sinks[-1]
    if tell is not None and pid == os.getpid():
        tell(vertices, shared) if shared else tell(vertices)


def _open(path: Path, ifc_file: Path):
    """The STEP file `ifc_file` opened by IfcOpenShell; errors name `path`."""
    ifcopenshell, _ = _ifcopenshell()
    try:
        return ifcopenshell.open(str(ifc_file))
    except Exception as exc:  # noqa: BLE001 - IfcOpenShell raises several kinds for a bad file
        raise InputError(path, f"is not an IFC file IfcOpenShell can read: {_first_line(exc)}; "
                               f"export it again as IFC2X3 or IFC4") from None


def _chosen(path: Path, model) -> tuple:
    """(elements, ordered, left_out, contexts, note) of an opened model: its physical elements
    with a 3D body the iterator meshes (`_has_body`), in by_type's order and in the file's
    (their step ids), IfcModel.left_out's rows of those with none, and the contexts read with
    the note saying so where they are every one (`_meshed_contexts`); an InputError naming
    `path` when no element has a body."""
    physical = [e for e in model.by_type("IfcElement") if not any(e.is_a(c) for c in _NOT_PHYSICAL)]
    contexts, note = _meshed_contexts(model)
    bodied = [_has_body(e, contexts) for e in physical]
    elements = [e for e, has in zip(physical, bodied) if has]
    if not elements:
        raise InputError(path, _why_no_body(model, physical))
    left_out = [(e.is_a(), e.GlobalId, _representations(e))
                for e, has in sorted(zip(physical, bodied), key=lambda eh: eh[0].id())
                if not has and not _assembly(e)]
    ordered = sorted(elements, key=lambda e: e.id())  # the file's order, not the iterator's
    return elements, ordered, left_out, contexts, note


def _read(path: Path, ifc_file: Path, k: int = 0, shares: int = 1, model=None,
          interleaved: bool = False, chosen: tuple | None = None, spread: bool = False) -> _Share:
    """Share k of `shares` of reading the STEP file `ifc_file` (`model`: it opened already;
    `chosen`: `_chosen` of it, made already): the elements k / shares to (k + 1) / shares of
    the way through the file, or with `interleaved` every shares-th element from the k-th
    (`_joined` puts them back in the file's order), or with `spread` those `_spread_share`
    deals to share k; errors name `path` (the ifcZIP it came from)."""
    ifcopenshell, geom = _ifcopenshell()
    if model is None:
        model = _open(path, ifc_file)
    elements, ordered, left_out, contexts, note = chosen if chosen is not None else _chosen(path, model)
    left_out = [] if k else left_out
    if spread:
        mine = [e for e, s in zip(ordered, _spread_share(len(ordered), shares).tolist()) if s == k]
    elif interleaved:
        mine = ordered[k::shares]
    else:
        mine = ordered[k * len(ordered) // shares: (k + 1) * len(ordered) // shares]
    ifcopenshell.get_log()  # what earlier reads left in IfcOpenShell's log is not about this file
    by_id = {e.id(): e for e in mine}
    # elements placing a representation map that other elements place too: meshed once, in the
    # map's frame, and placed (`_placed`); the others in world coordinates
    mapped = _mapped_uses(model, elements, contexts)
    # element id -> (vertices, faces, (local vertices, 4x4 placement) or None), each shape's
    # buffers copied once, then dropped
    meshes = {}
    kept, keys, todo = _kept(), {}, mine
    if kept is not None and mine:  # the elements seen before: their triangles, not meshed again
        table, prefix = kept
        keys = _element_keys(model, mine, prefix + repr((ifcopenshell.version, GEOMETRY_LIBRARY, True, True,
                                                         True)).encode(), placed=set(mapped))
        for e in mine:
            row = table.get(keys[e.id()])
            if row is None:
                continue
            v, f = np.array(row[1]["v"], dtype=np.float64), np.array(row[1]["f"], dtype=np.int64)
            if e.id() in mapped:
                if "m" not in row[1]:  # not as this reader keeps a placed element: meshed again
                    continue
                meshes[e.id()] = _placed(v, f, np.array(row[1]["m"], dtype=np.float64))
            else:
                meshes[e.id()] = (v, f, None)
        todo = [e for e in mine if e.id() not in meshes]
    logs: list = []  # IfcOpenShell's log of each pass (reading it empties it)
    for world in (False, True):  # the placed elements, then those in world coordinates
        share = [e for e in todo if (e.id() not in mapped) == world]
        if share:
            _mesh_share(path, ifcopenshell, geom, model, share, world, by_id, meshes, logs)
    if keys and todo:  # kept for the next read
        for e in todo:
            if e.id() not in meshes:
                continue
            vertices, faces, placement = meshes[e.id()]
            arrays = {"v": vertices, "f": faces} if placement is None else \
                {"v": placement[0], "f": placement[1], "m": placement[2]}
            kept[0].put(keys[e.id()], {}, arrays)
        kept[0].save()
    log = _Log("\n".join([*logs, ifcopenshell.get_log()]))
    parts, ids, built, failed, cut = [], [], set(), [], []
    for element in mine:
        if element.id() not in meshes:
            continue
        built.add(element.id())
        vertices, faces, placement = meshes.pop(element.id())
        label = element_label(element)
        if len(faces) == 0:
            if _cut_away(geom, element):
                cut.append(((0, element.id()), f"element {label}: its openings cut its body away whole; "
                                               f"nothing of it is left to check"))
                continue
            failed.append(((0, element.id()), f"element {label}: its body has no triangles (curves "
                                               f"or points only); it is not checked"))
            continue
        if not np.isfinite(vertices).all():
            failed.append(((0, element.id()), f"element {label}: NaN or infinite coordinates; it is "
                                               f"not checked"))
            continue
        # a placed element: its map's mesh, the placement and how many elements of the whole
        # model place that map (`gjkcli.mesh.load` makes it an Instance where the placement is rigid)
        parts.append((label, vertices, faces, _element(element),
                      None if placement is None else (placement[0], placement[2], mapped[element.id()][1])))
        ids.append(element.id())
    for n, e in enumerate(elements):
        if e.id() in by_id and e.id() not in built:
            why = log.about(model, e) or "IfcOpenShell could not build its geometry"
            failed.append(((1, n), f"element {element_label(e)}: {why}; it is not checked"))
    notes = [] if k or note is None else [note]
    return _Share(parts=parts, failed=failed, elements=len(elements), units=_length_unit(model),
                  schema=model.schema, left_out=left_out, ids=ids, notes=notes, cut_away=cut)


def _cut_away(geom, element) -> bool:
    """Whether an element the iterator gave no triangles has a body its openings cut away whole:
    it has openings, and its body meshed without them has triangles."""
    if not getattr(element, "HasOpenings", None):
        return False
    settings = geom.settings()
    settings.set("disable-opening-subtractions", True)
    try:
        return len(geom.create_shape(settings, element).geometry.faces) > 0
    except Exception:  # noqa: BLE001 - IfcOpenShell cannot build it without its openings either
        return False


def _spread_share(n: int, shares: int) -> np.ndarray:
    """(n,) the share each of n elements (in the file's order) falls to in `read_share`: the
    element at place p to share floor(shares * frac(p / golden ratio)) (Fibonacci hashing,
    2654435761 / 2**32), so that every share holds about n / shares elements spread over the
    whole file with no period a model's pattern could fall in step with. Every n-th element,
    as `read`'s readers take theirs, left Tekla's ISSUE_021 (2,636 elements, the costlier ones
    every other) with 2.3 and 3.0 s of meshing in two shares; dealt so, 2.9 and 2.8 s."""
    place = np.arange(n, dtype=np.uint64)
    frac = (place * np.uint64(2654435761)) % np.uint64(1 << 32)
    return ((frac * np.uint64(shares)) >> np.uint64(32)).astype(np.int64)


def _mapped_uses(model, elements, contexts: frozenset) -> dict:
    """{element id: (key, uses)} for the elements whose 3D body is made of representation maps
    alone (IfcMappedItem: a type's geometry, such as Revit's furniture, placed) that `uses` >= 2
    elements place; key: the maps' step ids. An element voided by an opening is not one (its
    body is its own)."""
    import collections

    if not model.by_type("IfcMappedItem"):
        return {}  # no map placed at all (ISSUE_021's 2,636 elements: 75 ms spared)
    keys = {}
    for e in elements:
        if getattr(e, "HasOpenings", None):
            continue
        key: list | None = []
        for rep in e.Representation.Representations or ():
            context = rep.ContextOfItems
            if context is None or context.id() not in contexts or not _may_be_body(rep):
                continue
            items = rep.Items or ()
            if not items or not all(item.is_a("IfcMappedItem") for item in items):
                key = None
                break
            key.extend(item.MappingSource.id() for item in items)
        if key:
            keys[e.id()] = tuple(key)
    uses = collections.Counter(keys.values())
    return {n: (key, uses[key]) for n, key in keys.items() if uses[key] > 1}


def _mesh_share(path: Path, ifcopenshell, geom, model, elements: list, world: bool, by_id: dict, meshes: dict,
                logs: list) -> None:
    """Mesh `elements` with IfcOpenShell's iterator into `meshes` (element id -> (vertices,
    faces, placement)): in world coordinates (placement None), or, `world` False, each
    geometry the iterator shares among elements (its geometry id: a representation map)
    read once in its own frame and placed by the element's matrix (`_placed`). IfcOpenShell in
    world coordinates meshes a placed map again for every element that places it: the 28 chairs
    of Revit's sample project, one map of 1,106 points, took 0.42 s of its 0.56 s of meshing.

    An element the iterator cannot build may end its pass (IfcOpenShell 0.9 on one thread: an
    IfcGridPlacement it cannot convert, in buildingSMART's IFC4.3 grid-placement sample, left
    none of 35 elements built, the 10 beams among them it builds alone; xBim's House.ifc, 46
    of 134): the elements it left that its log says nothing of are asked again, while a pass
    builds some or names some as failed (`_Log`; each pass's IfcOpenShell log is appended to
    `logs`, which a read empties). An element that fails by itself, named in the log, is not
    asked twice; a pass that ends at once costs a few milliseconds."""
    settings = geom.settings()
    settings.set("use-world-coords", world)
    settings.set("convert-back-units", True)  # the file's length unit, not metres
    settings.set("weld-vertices", True)
    shared: dict = {}  # geometry id -> (vertices, faces) in its own frame
    pending = elements
    while pending:
        done = len(meshes)
        _mesh_pass(path, geom, settings, model, pending, world, by_id, meshes, shared)
        logs.append(ifcopenshell.get_log())
        missing = [e for e in pending if e.id() in by_id and e.id() not in meshes]
        if not missing:
            return
        # asked again: the elements the pass's log says nothing of (its own failures it names,
        # by the element or an instance of its representation), while a pass builds or names one
        log = _Log(logs[-1])
        retry = [e for e in missing if log.about(model, e) is None]
        if not retry or (len(retry) == len(missing) and len(meshes) == done):
            return
        pending = retry


def _mesh_pass(path: Path, geom, settings, model, elements: list, world: bool, by_id: dict, meshes: dict,
               shared: dict) -> None:
    """One pass of IfcOpenShell's iterator over `elements` (`_mesh_share`); shared : geometry
    id -> (vertices, faces) in its own frame, kept between passes."""
    try:
        iterator = _iterator(geom, settings, model, elements)
        if iterator.initialize():
            while True:
                shape = iterator.get()
                if shape.id in by_id and shape.id not in meshes:
                    if world:
                        meshes[shape.id] = (*_arrays(shape.geometry), None)
                    else:
                        arrays = shared.get(shape.geometry.id)
                        if arrays is None:
                            arrays = shared[shape.geometry.id] = _arrays(shape.geometry)
                        matrix = np.array(shape.transformation.matrix, dtype=np.float64).reshape(4, 4).T
                        meshes[shape.id] = _placed(*arrays, matrix)
                    progress.report("mesh", len(meshes), len(by_id))
                    _tell_points(meshes[shape.id][0], shared=not world)
                if not iterator.next():
                    break
    except Exception as exc:  # noqa: BLE001 - the iterator's own failure, not an element's
        raise InputError(path, f"IfcOpenShell could not triangulate the model: "
                               f"{_first_line(exc)}") from None


def _placed(local: np.ndarray, faces: np.ndarray, matrix: np.ndarray) -> tuple:
    """(world vertices, faces, (local, faces, matrix)) of a mesh (n, 3) in its own frame placed
    by the 4x4 `matrix` (column by column, as IfcOpenShell sums them: on Revit's sample project
    its world coordinates to the bit); a mirroring placement turns the faces inside out, so
    their winding is turned back."""
    R, t = matrix[:3, :3], matrix[:3, 3]
    world = local[:, 0:1] * R[:, 0] + local[:, 1:2] * R[:, 1] + local[:, 2:3] * R[:, 2] + t
    placed = faces[:, [0, 2, 1]] if np.linalg.det(R) < 0 else faces
    return world, placed, (local, faces, matrix)


def _joined(path: Path, shares: list) -> IfcModel:
    """The model of the readers' shares, their parts in the file's order (their elements' step
    ids: shares interleaved or contiguous)."""
    parts = [p for s in shares for p in s.parts]
    if all(len(s.ids) == len(s.parts) for s in shares):
        ids = [n for s in shares for n in s.ids]
        parts = [parts[k] for k in sorted(range(len(parts)), key=ids.__getitem__)]
    failed = [line for _, line in sorted((f for s in shares for f in s.failed), key=lambda f: f[0])]
    if not parts:
        raise InputError(path, f"the geometry of none of its {shares[0].elements} physical elements "
                               f"could be built (first: {failed[0]})")
    return IfcModel(parts=parts, units=shares[0].units, schema=shares[0].schema, failed=tuple(failed),
                    left_out=tuple(x for s in shares for x in s.left_out),
                    notes=tuple(n for s in shares for n in s.notes), cut_away=_ordered(s.cut_away for s in shares))


def _ordered(lists) -> tuple:
    """`FailedLine`s of the shares' (order, line) pairs, in one reader's order."""
    return tuple(FailedLine(line, order) for order, line in sorted((x for got in lists for x in got), key=lambda x: x[0]))


# IfcOpenShell's geometry kernel: its "simple" CGAL kernel for what it can build (extrusions,
# tessellations, mapped items), OpenCASCADE for the rest (booleans with openings, B-reps,
# sweeps). On IfcOpenShell's test models it gives OpenCASCADE's very triangles (the same vertex
# arrays on the Great Court roof, 5,178 beams), 6 to 9 times faster there and 3 times on
# acad2010_objects (benchmarks/bench_ifc.py --kernels; the spread is the shared machine's load).
GEOMETRY_LIBRARY = "hybrid-cgal-simple-opencascade"


def _iterator(geom, settings, model, elements):
    """IfcOpenShell's iterator over `elements` on one thread: on IfcOpenShell 0.9, more threads
    made the roof slower on two cores (benchmarks/bench_ifc.py --threads)."""
    try:
        return geom.iterator(settings, model, 1, include=elements, geometry_library=GEOMETRY_LIBRARY)
    except (TypeError, ValueError, RuntimeError):  # an IfcOpenShell without that kernel
        return geom.iterator(settings, model, 1, include=elements)


def _arrays(geometry) -> tuple:
    """(vertices (n, 3) float64, faces (m, 3) int64) of a triangulation, read from its buffers
    (one copy each; `geometry.verts` would build a Python tuple of every coordinate first)."""
    vertices = np.frombuffer(geometry.verts_buffer, dtype=np.float64).reshape(-1, 3).copy()
    faces = np.frombuffer(geometry.faces_buffer, dtype=np.int32).reshape(-1, 3).astype(np.int64)
    return vertices, faces


# Whether this process only reads models (`reading_only`): it then imports IfcOpenShell without
# lark (`_ifcopenshell`).
_READER = [False]


def reading_only() -> None:
    """Say that this process only reads models for another one (the command's early reader in
    `gjkcli.mesh.cad_process`, a reader child of `read`), and ends when it has sent them: it
    imports IfcOpenShell without its header parsers (`_ifcopenshell`)."""
    _READER[0] = True


@contextmanager
def _without_lark():
    """Within the block, `import lark` fails and `importlib.util.find_spec("lark")` says it is
    missing (a None in sys.modules), and what is printed on stderr is dropped; after it, lark
    imports as before. IfcOpenShell 0.8 and 0.9 build a LALR parser of a header's model view
    definitions as `ifcopenshell.util.mvd_info` is imported (for `file.mvd`), and
    `ifcopenshell.stream` imports lark for its streaming reader (it prints that it has none):
    30 to 60 ms of IfcOpenShell's 0.1 to 0.15 s import, on the way of every IFC scan, for
    features a reader of elements never uses."""
    import contextlib
    import io
    import sys

    if "lark" in sys.modules or "ifcopenshell" in sys.modules:
        yield
        return
    sys.modules["lark"] = None
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            yield
    finally:
        if "lark" in sys.modules and sys.modules["lark"] is None:
            del sys.modules["lark"]


def _ifcopenshell():
    """(ifcopenshell, ifcopenshell.geom), imported on first need (without lark in a process
    that only reads models: `reading_only`); an InputError naming the package when it is
    missing."""
    import contextlib

    try:
        with extras.binding_import(), _without_lark() if _READER[0] else contextlib.nullcontext():
            import ifcopenshell
            import ifcopenshell.geom
    except ImportError as exc:
        if extras.missing("bim", exc):
            raise InputError("<ifc>", extras.message("reading IFC", "bim")) from None
        raise InputError("<ifc>", f"reading IFC needs IfcOpenShell, which does not import here "
                                  f"({exc}); reinstall it: pip install \"gjk[bim]\"") from None
    return ifcopenshell, ifcopenshell.geom


# The contexts IfcOpenShell's iterator reads (its mapping's `addRepresentationsFromDefaultContexts`):
# those whose ContextType is one of these, compared ignoring case ('Design' is IFC2X3's older word,
# which ArchiCAD writes; AutoCAD Architecture writes 'MODEL'; 'Model View' and 'Detail View' are
# DDS-CAD's), with their sub-contexts; every context when the file has none, or when they hold no
# representation ('Plan' is read for curves only, which gjk does not ask for).
_MESHED_CONTEXT_TYPES = ("model", "design", "model view", "detail view")

# Representation types that hold no 3D body (curves, points, text, 2D areas): an element with
# only these is left out, not failed. An absent or unknown type is taken as a body (the iterator
# then decides; an element it cannot build is named in IfcModel.failed).
_NOT_BODIES = ("point", "pointcloud", "curve", "curve2d", "curve3d", "geometriccurveset",
               "annotation2d", "text", "fillarea", "surface2d", "lightsource", "segment")


def _label(value) -> str | None:
    return value.strip().lower() if isinstance(value, str) else None


def _meshed_contexts(model) -> tuple:
    """(step ids, note): the representation contexts whose representations IfcOpenShell's
    geometry iterator meshes: the top contexts of a 3D model type (or every top context when none
    is) and their sub-contexts, note None; every context when those hold no representation (its
    `addRepresentationsFromDefaultContexts`: "no representations encountered in relevant
    contexts, using all"), the note saying so."""
    every = model.by_type("IfcGeometricRepresentationContext")  # sub-contexts too
    top = [c for c in every if not c.is_a("IfcGeometricRepresentationSubContext")]
    chosen = [c for c in top if _label(c.ContextType) in _MESHED_CONTEXT_TYPES] or top
    chosen += [sub for c in chosen for sub in getattr(c, "HasSubContexts", ()) or ()]
    if any(getattr(c, "RepresentationsInContext", None) for c in chosen):
        return frozenset(c.id() for c in chosen), None
    empty = sorted({str(c.ContextType) for c in chosen if c.ContextType})
    others = sorted({str(c.ContextType) for c in every if c not in chosen and c.ContextType})
    what = " and ".join(f"'{t}'" for t in empty) or "model"
    read = f" (its {' and '.join(repr(t) for t in others)} context{'s' if len(others) > 1 else ''})" \
        if others else ""
    return frozenset(c.id() for c in every), (
        f"its {what} context holds no representation: the bodies of its other contexts{read} are "
        f"read, as IfcOpenShell reads them")


def _has_body(element, contexts: frozenset) -> bool:
    """The element has a representation the iterator meshes as a 3D body: in one of `contexts`,
    of a type that is not curves, points or text."""
    shape = getattr(element, "Representation", None)
    if shape is None:
        return False
    for rep in shape.Representations or ():
        context = rep.ContextOfItems
        if context is not None and context.id() in contexts and _may_be_body(rep):
            return True
    return False


def _may_be_body(rep) -> bool:
    """A representation that may hold a 3D body: of a type that is not curves, points or text,
    nor a 'GeometricSet' of curve sets alone (ICPrefab's '_IFCZERO' marker element)."""
    kind = _label(rep.RepresentationType)
    if kind in _NOT_BODIES:
        return False
    return kind != "geometricset" or not all(item.is_a("IfcGeometricCurveSet") for item in rep.Items or ())


def _assembly(element) -> bool:
    """An element with no 3D body of its own made of parts (Tekla's IfcElementAssembly, with no
    representation; ArchiCAD's layered wall, an axis only, whose IfcBuildingElementParts hold
    the bodies): its parts are the elements read, so it leaves nothing out."""
    return any(rel.RelatedObjects for rel in getattr(element, "IsDecomposedBy", ()) or ())


def _representations(element) -> tuple:
    """What an element has: "'FootPrint' in a 'Plan' context" per representation."""
    shape = getattr(element, "Representation", None)
    return tuple(dict.fromkeys(
        f"'{rep.RepresentationIdentifier}' in a '{getattr(rep.ContextOfItems, 'ContextType', None)}' context"
        for rep in (shape.Representations or () if shape is not None else ())))


def _why_no_body(model, physical) -> str:
    """Why a file gives no object: no physical element at all, or none with a 3D body (and the
    representations they have instead)."""
    if not physical:
        return (f"holds no physical element ({model.schema}: walls, slabs, doors, ducts, ...); "
                f"openings and spaces are not objects")
    kinds = sorted({k for e in physical for k in _representations(e)})
    have = f"; they have {', '.join(kinds[:4])}" if kinds else "; none has a representation"
    return (f"none of its {len(physical)} physical elements has a 3D body (a solid, surface or "
            f"tessellation in a 'Model' or 'Design' context){have}; export the model with 3D bodies")


def _element(e) -> Element:
    hosts = []
    for fills in getattr(e, "FillsVoids", ()) or ():
        opening = fills.RelatingOpeningElement
        for voids in getattr(opening, "VoidsElements", ()) or ():
            hosts.append(voids.RelatingBuildingElement.GlobalId)
    # the class's name one string for the model's elements of that class (one object each
    # otherwise, and so in a load task's answer: a Dask client's objects)
    return Element(ifc_class=sys.intern(e.is_a()), classes=_classes(e), global_id=e.GlobalId,
                   name=e.Name if (e.Name or "").strip() else None, hosts=tuple(dict.fromkeys(hosts)),
                   step=e.id())


# The class and its supertypes of each class met, by its schema-qualified name ("IFC4.IfcWall"):
# the schema walked once per class, not once per element (a model's hundreds of walls).
_CLASSES: dict = {}


def _classes(e) -> tuple:
    """("IfcWall", "IfcBuildingElement", "IfcElement", ...): the element's class and its
    supertypes, most specific first."""
    key = e.is_a(True)
    classes = _CLASSES.get(key)
    if classes is None:
        import ifcopenshell.util.schema

        found = []
        declaration = ifcopenshell.util.schema.get_declaration(e)
        while declaration is not None:
            found.append(declaration.name())
            declaration = declaration.supertype()
        classes = _CLASSES[key] = tuple(found)
    return classes


def _length_unit(model) -> str | None:
    """The project's length unit as gjkcli.units names it ("mm", "m", "in"), None when not
    stated; a unit outside that table keeps its IFC name (the run then says it cannot convert)."""
    import ifcopenshell.util.unit as units

    unit = units.get_project_unit(model, "LENGTHUNIT")
    if unit is None:
        return None
    if unit.is_a("IfcSIUnit"):  # an SI prefix and METRE: "MILLI" "METRE" -> millimetre
        name = f"{unit.Prefix or ''}{unit.Name}".lower()
    else:  # IfcConversionBasedUnit: 'inch', 'foot', ...
        name = str(getattr(unit, "Name", "") or "").strip().lower()
    return canonical(name) or name or None


class _Log:
    """IfcOpenShell's log of one read, to say why an element failed.

    The log is a series of entries ``[error] [GEO089] [time] message:`` followed by the
    instances they are about (``#98=IfcExtrudedAreaSolid(...)``), the message sometimes opened by
    the element's GlobalId in braces (``{1rU5_ytFj2w9rOKxGO8Gln} Requested type ...``, with no
    instance after it): an element's failure is the first error entry about it or an instance
    of its representation.
    """

    _ENTRY = re.compile(r"\[(\w+)\]\s*\[(\w+)\]\s*\[[^\]]*\]\s*(.*)", re.S)
    _GUID = re.compile(r"^\{([0-9A-Za-z_$]{22})\}\s*")

    def __init__(self, text):
        self.errors = []  # (message, the first instance named, ids of the instances named, GlobalId or None)
        for block in re.split(r"\n(?=\[)", str(text or "").strip()):
            found = self._ENTRY.match(block)
            if found is None or found.group(1).lower() not in ("error", "fatal"):
                continue
            message, _, about = found.group(3).partition("\n")
            guid = self._GUID.match(message)
            if guid is not None:
                message = message[guid.end():]
            ids = {int(x) for x in re.findall(r"#(\d+)=", about)}
            first = re.search(r"#\d+=\w+", about)  # the first instance named, on one line
            self.errors.append((message.strip().rstrip(":"), first.group(0) if first is not None else "", ids,
                                guid.group(1) if guid is not None else None))

    def about(self, model, element) -> str | None:
        """Why the element's geometry failed, in one line; None when the log does not say."""
        ids = {element.id()}
        if element.Representation is not None:
            ids |= {i.id() for i in model.traverse(element.Representation)}
        guid = getattr(element, "GlobalId", None)
        for message, first, named, of in self.errors:
            if named & ids or (of is not None and of == guid):
                return (f"IfcOpenShell: {message}" + (f" ({first})" if first else ""))[:300]
        return None


def _first_line(value) -> str:
    text = str(value).strip()
    return text.splitlines()[0] if text else type(value).__name__
