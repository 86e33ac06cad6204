"""OpenCASCADE in a process of its own, so that importing it overlaps the command's own imports.

Importing OCP (one extension module of 144 MB that registers every OpenCASCADE class with Python,
GIL held throughout) takes a STEP scan about 0.8 s, and the command's other imports (NumPy,
click, the pipeline) about 0.25 s more, one after the other on one core. So the `gjk` command
given STEP files forks, as it starts (`start`, before it imports anything of its own but
NumPy, which both need), a process that imports OCP and reads and tessellates those files at
once, while the command imports its pipeline on the other core. The command then asks that process (`ask`) for what
needs OpenCASCADE: the files' parts (`gjkcli.mesh.cad.read_step`), the refinement of the pairs
with exact solids (`gjkcli.pipeline.tessellated.decide_all`, which forks its own workers there)
and common volumes. A request names a function of gjk's; it is called there with the
arguments given, pickled both ways, so the answers are the same functions' on the same solids.

`ask` runs the function in the calling process instead when no such process serves it: none
was started (`start` declined), the caller is another process (a forked loader), or it ended
without its answer (killed, or OpenCASCADE crashed in it; from then on everything runs here).

Not started where a fork is unsafe or gains nothing: no STEP file among the arguments, a
platform without fork, OCP or threads already in the process, `--jobs 1` (one core asked for),
`--dask`, or `--debug` (its tracebacks whole, from one process). The process ends with the
command (`stop`); Ctrl-C ends it with the command's other forked workers (`gjkcli.__main__`).
A progress bar follows that process's reading of a large file (`gjkcli.scene.watch`), not its
tessellating of the solids (it reports to nobody).

IFC models are read ahead the same way: the command given IFC models under
IFC_SPLIT_FROM_BYTES (which one reader meshes), or one model of that size or more and no other
IFC model, forks this process, which imports IfcOpenShell and meshes the models
(`gjkcli.mesh.ifc.read_here`; the large one, or one of IFC_SPLIT_AHEAD_FROM_BYTES or more named
alone, parsed once, then meshed in a share per job by this process and forked copies of it, as
the readers the command would fork for it) while the
command imports NumPy and its pipeline; the command asks it for `gjkcli.mesh.ifc.read` of the
model, and a model it has given is read by the command if asked again. Serving no STEP file, the process ends once it has given
its last model. While the command waits for its first answer, it imports the modules it was told
it may need next (`meanwhile`).

A scan with a cache of STEP files alone starts the process at once too (`go(verdict=True)`):
it imports OpenCASCADE and reads the files' exact solids while the command reads their text
(`gjkcli.mesh.stepkeep`), then is told (`told`) whether the cache places their parts: if so it
tessellates nothing and only answers what needs the exact solids (a moved part's pairs),
else it reads the parts as above. A re-run that needs OpenCASCADE then pays its import beside
the text's read, not after it.
"""
from __future__ import annotations

import os
import sys

__all__ = ["STEP_TYPES", "IFC_SPLIT_FROM_BYTES", "IFC_SPLIT_AHEAD_FROM_BYTES", "start", "go", "told", "wanted", "option_values", "read_ahead_files", "stop", "serving", "reader", "serves", "reads_step",
           "ask", "meanwhile"]

# STEP files by their names' suffix, for the whole package (`gjkcli.mesh.load` reads them with
# `gjkcli.mesh.cad`): defined here, which imports nothing heavy, so that the command's start can
# tell them before importing NumPy.
STEP_TYPES = ("step", "stp")
_SUFFIXES = tuple(f".{t}" for t in STEP_TYPES)
# IFC models read ahead (`gjkcli.mesh.ifc.read_here`): those below IFC_SPLIT_FROM_BYTES, which
# one reader meshes (gjkcli.mesh.ifc.SPLIT_FROM_BYTES); a larger one, named alone, is meshed in
# a share per job (`_jobs`) by the process and copies it forks once it has parsed the file.
_IFC_SUFFIXES = (".ifc", ".ifczip")
IFC_SPLIT_FROM_BYTES = 2_000_000
# A smaller model named alone is meshed in a share per job too from this size: the process
# parses it once and forks the readers of the other shares (a few ms), which repays itself from
# a few tenths of a second of meshing (ISSUE_171's 40 swept solids, 0.25 MB: 0.45 to 0.49 s of
# the scan's wall time against 0.54 to 0.56 s read by one process, on two cores); a model of
# fewer elements than gjkcli.mesh.ifc.SPLIT_FROM_ELEMENTS is meshed whole all the same. Where
# the machine's cores are busy, the shares cost some CPU time and gain no wall time.
IFC_SPLIT_AHEAD_FROM_BYTES = 200_000

# The serving process as the command sees it: (its Worker, the command's pid, the real paths of
# the IFC models it reads ahead and has not yet given, whether it serves STEP files), or None.
_server: tuple | None = None


def start(argv: list, gated: bool = False, cached: bool = False, kept=None) -> bool:
    """Fork the process when the command line `argv` (without the program) scans or checks STEP
    files or IFC models under IFC_SPLIT_FROM_BYTES and a fork is safe and worth it here; it starts
    reading them at once, or with `gated` once the command says `go` (the cache may hold the
    command's whole report: then it never imports OpenCASCADE, and ends with the command).
    A larger model named alone is read ahead too, unless `cached`: the run may take its elements'
    meshes from the cache (`gjkcli.mesh.ifc.kept_meshes`), which it reads itself then. A model
    named alone is meshed in a share per job (`_jobs`) from IFC_SPLIT_AHEAD_FROM_BYTES.
    kept: None, or a callable the process calls to get the cache's element meshes, (table,
    prefix) as `gjkcli.mesh.ifc.kept_meshes` takes them: the models it reads ahead take the
    elements the cache holds from it and keep the others' there, as the command's own read does.
    Returns whether it started."""
    global _server
    if _server is not None or not wanted(argv) or not hasattr(os, "fork"):
        return False
    threading = sys.modules.get("threading")
    if "OCP.OCP" in sys.modules or (threading is not None and threading.active_count() > 1):
        return False
    paths = list(dict.fromkeys(arg for arg in argv if arg.lower().endswith(_SUFFIXES)
                               and os.path.isfile(arg)))
    models = list(dict.fromkeys(arg for arg in argv if _small_ifc(arg)))
    large = list(dict.fromkeys(arg for arg in argv if _ifc_file(arg) and not _small_ifc(arg)))
    shares = 1
    if len(large) == 1 and not models and not cached:  # one large model: read ahead in a share per job
        models, shares = large, _jobs(argv)
    elif len(models) == 1 and not large and _size(models[0]) >= IFC_SPLIT_AHEAD_FROM_BYTES:
        shares = _jobs(argv)  # parsed once, then meshed in a share per job as well
    if not paths and not models:
        return False
    # IfcOpenShell imports NumPy (ifcopenshell.sql), and gjkcli.mesh.cad does before it imports
    # OpenCASCADE, as the command does: imported once, here, the process forked next has it
    # (without OpenBLAS's threads: gjkcli.__main__). Not where the cache may hold the whole
    # report (`gated`): a command that replays it needs no NumPy (a third of a small STEP
    # file's cached run); the process imports it as it waits for `go`, beside the command.
    if not gated:
        import numpy  # noqa: F401
    from gjkcli import forks  # here: every command imports this module as it starts

    if models and not gated:  # the reader's module (and gjk's errors, units, extras it imports),
        from gjkcli.mesh import ifc  # noqa: F401 - which the command imports too: once, here

    try:
        worker = forks.Worker(lambda parent: _serve(paths, parent, models, shares, gated, kept))
    except OSError:  # no process left to fork: everything runs here
        return False
    _server = (worker, os.getpid(), {os.path.realpath(m) for m in models}, bool(paths))
    _gate[:] = [worker] if gated else []
    return True


def read_ahead_files(argv: list) -> list:
    """The STEP files and IFC models among the command line's arguments `argv` (those that are
    files), in order, each once: what `start` may read ahead."""
    return list(dict.fromkeys(arg for arg in argv if arg.lower().endswith(_SUFFIXES + _IFC_SUFFIXES)
                              and os.path.isfile(arg)))


def _ifc_file(arg: str) -> bool:
    """An IFC model (.ifc, .ifczip) that is a file."""
    return arg.lower().endswith(_IFC_SUFFIXES) and os.path.isfile(arg)


# The gated process not yet told to go (`start`, `go`).
_gate: list = []


def go(verdict: bool = False) -> None:
    """Let a gated process start reading (the run is made: the cache holds no report of it).
    verdict: the command reads its STEP files' text beside it (`gjkcli.mesh.stepkeep`) and
    says, with `told`, whether the cache places their parts: the process imports OpenCASCADE
    and reads the files' exact solids meanwhile, and tessellates them only if told to."""
    if _gate:
        worker = _gate.pop()
        try:
            worker.send(_VERDICT if verdict else "go")
        except OSError:  # it ended: `ask` runs everything here
            return
        if verdict:
            _told[:] = [worker]


# The process told `go(verdict=True)` and not yet `told`; whether the command's STEP files'
# parts are placed here from the cache (`told(True)`), not asked of the process.
_told: list = []
_parts_here: list = [False]
_VERDICT = "go, then the verdict"


def told(kept: bool) -> None:
    """Tell a process started with `go(verdict=True)` whether the cache places the STEP files'
    parts (kept: it reads no parts, and serves only what needs the exact solids: a pair's
    refinement, a common volume), else it reads them as a process told `go` does."""
    _parts_here[0] = kept  # a process started ungated reads them all the same, unasked
    if not _told:
        return
    worker = _told.pop()
    try:
        worker.send("kept" if kept else "read")
    except OSError:  # it ended: `ask` runs everything here
        pass


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _small_ifc(arg: str) -> bool:
    """An IFC model (.ifc, .ifczip) below IFC_SPLIT_FROM_BYTES, read ahead."""
    if not arg.lower().endswith(_IFC_SUFFIXES):
        return False
    try:
        return os.path.isfile(arg) and os.path.getsize(arg) < IFC_SPLIT_FROM_BYTES
    except OSError:
        return False


def _jobs(argv: list) -> int:
    """The command line's last --jobs, else every core, as the command reads it."""
    given = [v.strip() for v in _jobs_given(argv)]
    if given and given[-1].isdigit():
        return max(1, int(given[-1]))
    return max(1, os.cpu_count() or 1)


def wanted(argv: list) -> bool:
    """`gjk scan` or `gjk check`, with neither --dask, nor one job, nor --debug (whose
    tracebacks are whole in one process)."""
    words = [arg for arg in argv if not arg.startswith("-")]
    if not words or words[0] not in ("scan", "check") or "--dask" in argv or "--debug" in argv:
        return False
    return all(value.strip() != "1" for value in _jobs_given(argv))


def option_values(argv: list, name: str) -> list:
    """The values of the long option `name` on the command line `argv` (--name VALUE,
    --name=VALUE), as written, in order: for what the command's start must know before click
    reads the line (`gjkcli.__main__`, `gjkcli.pipeline.workerserver`)."""
    out = []
    for k, arg in enumerate(argv):
        if arg == name and k + 1 < len(argv):
            out.append(argv[k + 1])
        elif arg.startswith(name + "="):
            out.append(arg.split("=", 1)[1])
    return out


def _jobs_given(argv: list) -> list:
    """The values of the command line's --jobs (-j N, -jN, --jobs=N), as written."""
    out = []
    for k, arg in enumerate(argv):
        if arg in ("-j", "--jobs") and k + 1 < len(argv):
            out.append(argv[k + 1])
        elif arg.startswith("--jobs="):
            out.append(arg.split("=", 1)[1])
        elif arg.startswith("-j") and arg[2:].isdigit():
            out.append(arg[2:])
    return out


def serving() -> bool:
    """Whether `ask` sends its calls to the OpenCASCADE process (this is the process that
    started it, and it has not ended)."""
    return _server is not None and _server[1] == os.getpid()


def reader() -> int | None:
    """The OpenCASCADE process's id when it serves (`gjkcli.scene.watch` follows its reading of
    a large file), else None."""
    return _server[0].pid if serving() else None


def serves(path) -> bool:
    """Whether a file's parts are asked of the process (`serving`, and `path` is a STEP file by
    its name, or an IFC model it reads ahead and has not yet given)."""
    if not serving():
        return False
    if str(path).lower().endswith(_SUFFIXES):
        return _server[3] and not _parts_here[0]
    return os.path.realpath(path) in _server[2]


def reads_step() -> bool:
    """Whether the process serves (`serving`) the command's STEP files, not only IFC models."""
    return serving() and _server[3]


def ask(function, *args, **kwargs):
    """`function(*args, **kwargs)` (a module-level function of gjk's, its arguments and answer
    picklable), run in the OpenCASCADE process when it serves, else here. Its exception is
    raised here either way."""
    global _server
    if serving() and (_server[3] or _ahead_model(args)):
        from gjkcli import forks

        worker = _server[0]
        try:
            worker.send((function, args, kwargs))
        except OSError:  # the process ended
            kind = None
        except Exception:  # noqa: BLE001 - an argument that does not pickle: run here
            return function(*args, **kwargs)
        else:
            try:
                kind, value = _receive(worker)
            except (forks.Lost, OSError):
                kind = None
        if kind is None:  # from now on, everything runs here
            worker.close()
            _server = None
        else:
            _given(args)
            if kind == "error":
                raise value
            return value
    return function(*args, **kwargs)


# Modules the command imports while it waits for its first answer (`meanwhile`), and when it
# starts: once the process says that the parts it meshes need qhull (`_qhull_hint`: Revit's
# sample project, 80 pieces of furniture of 1,106 vertices; a STEP product of 28,662 vertices,
# issue 43's SolidWorks 2017 assembly; for STEP files whose text names spheres and tori,
# `_dense_surfaces`, before it imports OpenCASCADE), and not for a long read of parts the compiled core
# builds the hulls of (the swept solids of ISSUE_171, a Revit duplex; a STEP file's read is
# never short, OpenCASCADE's import alone takes 0.7 s, and the AP214 AS1's products of at most
# 672 vertices need no qhull): SciPy's import (0.25 to 0.5 s of CPU time, twice that on a
# loaded machine) then never competes with the read for a core, nor costs a run that does
# not need it.
_meanwhile: list = []
_HINT = "hint"  # the message saying the parts need qhull, before the answer


def meanwhile(names) -> None:
    """Import the modules `names` (in this order, each when the process has not yet answered)
    while the command waits for its first answer (as `_receive` says when): those the run may
    need once the parts are read (SciPy's qhull) are then imported on the core the command would
    leave idle, and never delay an answer by more than one module's import."""
    _meanwhile[:] = names


def _receive(worker) -> tuple:
    """The answer (kind, value) to the request just sent, the `meanwhile` modules imported while
    it is awaited, once a hint that the parts need qhull has come (hints are read and dropped
    here)."""
    import importlib

    names, _meanwhile[:] = list(_meanwhile), []
    wanted = False
    while True:
        if names and wanted and not worker.ready():
            try:
                importlib.import_module(names.pop(0))
            except Exception:  # noqa: BLE001 - a module missing here: the run says so where it needs it
                pass
            continue
        kind, value = worker.receive()
        if kind != _HINT:
            return kind, value
        wanted = True


def _qhull_hint(parent):
    """tell(vertices) for `gjkcli.mesh.ifc.telling_points` and
    `gjkcli.mesh.cad.read_step`'s `points` (each STEP product once, however many instances place
    it: they share its hull): once a part meshed will have its hull built by qhull (as
    `gjkcli.engine.shapes.goes_to_qhull` guesses from its points: a hint for a model that needs
    no qhull costs SciPy's import, a hint missed only its wait), the hint is sent, once by each
    process (a message of a few bytes: one write to the pipe, whole whichever process writes
    it)."""
    from gjkcli.engine.shapes import SHARED_HULL_POINTS, goes_to_qhull

    sent = [False]

    def tell(vertices, shared: bool = False) -> None:
        """shared: the vertices place a mesh other parts place too (its hull is the core's up to
        SHARED_HULL_POINTS); vertices None: the hint regardless (`_dense_surfaces`)."""
        if sent[0] or (vertices is not None
                       and not goes_to_qhull(vertices, SHARED_HULL_POINTS if shared else None)):
            return
        sent[0] = True
        parent.send((_HINT, None))

    return tell


# Surfaces that a STEP file's text names and that tessellate densely at gjk's deflection (a
# thousandth of the solid's diagonal): a full sphere gives 1,447 points, more than the compiled
# core builds the hull of (SMALL_HULL_POINTS); fillets blending on tori and spheres do as much
# to the solids they round. A file naming at least _DENSE_FROM of them is guessed to need qhull
# before OpenCASCADE is imported (`_serve`): the command then imports SciPy (0.25 s of CPU time)
# on the core it would leave idle while the process imports OpenCASCADE (0.6 s), instead of
# after the products are meshed, which left most of that import after the answer, on the run's
# path (trj6_k1-sd-214 of issue 43's corpus: the hint came 60 ms before the parts, on a loaded
# machine). A single one is left to the meshed parts: a sphere several instances place has its
# hull built once by the core (the corpus's 18 assemblies are all guessed as their runs turn
# out, needing qhull or not; a rule read off those files, not a proof). A wrong guess costs
# SciPy's import on the idle core, or the hint after the mesh as before; never an answer.
_DENSE = (b"SPHERICAL_SURFACE", b"TOROIDAL_SURFACE")
_DENSE_FROM = 2


def _dense_surfaces(paths: list) -> bool:
    """Whether the STEP files' text names at least _DENSE_FROM spherical or toroidal surfaces
    (a search of the bytes, no parse, stopped at the last one needed: a few ms for megabytes,
    in the process's path before its OpenCASCADE import)."""
    import mmap

    count = 0
    for path in paths:
        try:  # mapped, not read: the search stops at the last name needed, the pages after unread
            with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
                for name in _DENSE:
                    at = data.find(name)
                    while at >= 0:
                        count += 1
                        if count >= _DENSE_FROM:
                            return True
                        at = data.find(name, at + len(name))
        except (OSError, ValueError):  # the read says what is wrong (an empty file cannot be mapped)
            continue
    return False


def _ahead_model(args: tuple) -> bool:
    """The call's first argument names an IFC model read ahead and not yet given."""
    return bool(args) and isinstance(args[0], (str, os.PathLike)) and \
        os.path.realpath(args[0]) in _server[2]


def _given(args: tuple) -> None:
    """After an answer: an IFC model read ahead is given (asked again, it is read here); the
    process ends when it serves no STEP file and has no model left to give (its IfcOpenShell
    then no longer holds memory while the command checks the parts)."""
    global _server
    models = _server[2]
    if args and isinstance(args[0], (str, os.PathLike)):
        models.discard(os.path.realpath(args[0]))
    if not models and not _server[3]:
        # told to end, it frees its memory on another core while the command checks; `stop`
        # reaps it (its CPU time and peak memory are then the command's, as an OS counts them)
        worker, _server = _server[0], None
        try:
            worker.send(None)
        except OSError:  # it ended already
            pass
        _ending.append(worker)


# The processes told to end (`_given`), reaped by `stop`.
_ending: list = []


def stop() -> None:
    """End the process (the command is done); later calls run here. An OpenCASCADE process
    is not waited for: freeing its memory (OCP's, a few hundred MB) took 30 to 40 ms of the
    command's end; one told to end before (`_given`) is reaped."""
    global _server
    while _ending:
        _ending.pop().close()
    if serving():
        worker, _server = _server[0], None
        worker.close(wait=False)


def _serve(paths: list, parent, models: list = (), shares: int = 1, gated: bool = False, kept=None) -> None:
    """The process: reads the IFC `models` (each in `shares`; with the cache's element meshes
    where `kept` gives them, `start`) and the STEP files `paths` ahead (gated: once the command
    says "go"), then answers requests until the command closes its end (or sends None)."""
    _quiet()
    if gated:
        import numpy  # noqa: F401 - as the command checks the cache (`start`)
    said = parent.receive() if gated else "go"
    if said not in ("go", _VERDICT):  # the cache answered: nothing to read
        return None
    if said == _VERDICT and paths:
        paths = _solids_then_verdict(paths, parent)
        if paths is None:  # the command ended
            return None
    from gjkcli import extras
    from gjkcli.errors import InputError

    extras.freeze_imports = True  # as in the command: OCP's objects live as long as this process
    ahead: dict = {}  # (reader, real path) -> ("ok", parts) or ("error", InputError)
    readers = []
    import functools

    if models:
        from gjkcli.mesh import ifc

        ifc.reading_only()
        readers += [(ifc.read, functools.partial(ifc.read_here, shares=shares), m) for m in models]
    tell = _qhull_hint(parent)  # one hint at most, whichever file's parts give it
    if paths and _dense_surfaces(paths):  # said before OpenCASCADE's import, not after the mesh
        tell(None)
    if paths:
        from gjkcli.mesh import cad

        readers += [(cad.read_step, functools.partial(cad.read_step, points=tell), p)
                    for p in paths]
    import contextlib

    table = _kept_table(kept) if models else None
    # the parts say whether they need qhull: each IFC element, each STEP product as it is meshed
    with ifc.telling_points(tell) if models else contextlib.nullcontext(), \
            ifc.kept_meshes(*table) if table is not None else contextlib.nullcontext():
        for asked, read, path in readers:
            try:
                ahead[asked, os.path.realpath(path)] = ("ok", _with_notes(read(path), table))
            except InputError as exc:
                ahead[asked, os.path.realpath(path)] = ("error", exc)
            except Exception:  # noqa: BLE001 - asked again, the command's own call says what failed
                pass
    while True:
        request = parent.receive()
        if not isinstance(request, tuple):  # the command closed its end, or is done
            return None
        function, args, kwargs = request
        try:
            key = (function, os.path.realpath(args[0])) \
                if args and isinstance(args[0], (str, os.PathLike)) else None
            if key in ahead and len(args) == 1 and not kwargs.keys() - {"shown"}:
                answer = _ahead(ahead.pop(key), kwargs.get("shown"))
            else:
                answer = ("ok", function(*args, **kwargs))
        except Exception as exc:  # noqa: BLE001 - raised again in the command
            answer = ("error", exc)
        parent.reply(*answer)


def _solids_then_verdict(paths: list, parent) -> list | None:
    """`_serve` told `go(verdict=True)`: OpenCASCADE imported and the STEP files' exact solids
    read (what a pair that needs them asks either way), then the command's verdict (`told`):
    the files to read ahead (all of them, or none when the cache places their parts); None
    when the command ended instead."""
    from gjkcli.mesh import cad

    for path in paths:
        try:
            cad.solids_ahead(path)
        except Exception:  # noqa: BLE001 - the read's own call says what failed, if it is made
            pass
    verdict = parent.receive()
    if verdict not in ("kept", "read"):
        return None
    return [] if verdict == "kept" else paths


def _quiet() -> None:
    """This process writes nothing on the command's stdout and stderr (it answers through its
    pipe), and does not hold them open: a caller reading the command's output to its end is
    not kept waiting for this process to end."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
    except OSError:  # no /dev/null here: the streams stay shared
        return
    for fd in (1, 2):
        os.dup2(null, fd)
    os.close(null)


def _kept_table(kept):
    """`kept()`, (the cache's table of element meshes, the keys' prefix) for the models read
    ahead, or None (no cache, or one that cannot be opened: the models are meshed whole, as
    without it)."""
    if kept is None:
        return None
    try:
        return kept()
    except (OSError, ValueError):
        return None


def _with_notes(model, table):
    """An IFC model read ahead with what the cache (`table`: `_kept_table`'s) noted while it
    was read (entries it did not believe, a folder it could not write), which the command's run
    reports as its own read's; the notes are given once."""
    notes = getattr(getattr(table[0], "cache", None), "notes", None) if table is not None else None
    if not notes or not hasattr(model, "notes"):
        return model
    import dataclasses

    model = dataclasses.replace(model, notes=(*model.notes, *notes))
    notes.clear()
    return model


def _ahead(read: tuple, shown: str | None) -> tuple:
    """A file's parts read ahead, as `read_step(path, shown=shown)` gives them."""
    import dataclasses

    kind, value = read
    if kind == "error" or shown is None:
        return read
    return "ok", [dataclasses.replace(part, source=shown) for part in value]
