"""OpenCASCADE in a process of its own, so that importing it overlaps the command's own imports.

Importing OCP (one extension module of 144 MB that registers every OpenCASCADE class with Python,
GIL held throughout) takes a STEP scan about 0.8 s, and the command's other imports (NumPy,
click, the pipeline) about 0.25 s more, one after the other on one core. So the `gjk` command
given STEP files forks, as it starts (`start`, before it imports anything of its own), a
process that imports OCP and reads and tessellates those files at once, while the command
imports its pipeline on the other core. The command then asks that process (`ask`) for what
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
"""
from __future__ import annotations

import os
import sys

__all__ = ["STEP_TYPES", "start", "wanted", "stop", "serving", "reader", "serves", "ask"]

# STEP files by their names' suffix, for the whole package (`gjkcli.mesh.load` reads them with
# `gjkcli.mesh.cad`): defined here, which imports nothing heavy, so that the command's start can
# tell them before importing NumPy.
STEP_TYPES = ("step", "stp")
_SUFFIXES = tuple(f".{t}" for t in STEP_TYPES)

# The serving process as the command sees it: (its Worker, the command's pid), or None.
_server: tuple | None = None


def start(argv: list) -> bool:
    """Fork the OpenCASCADE process when the command line `argv` (without the program) scans or
    checks STEP files and a fork is safe and worth it here; it starts reading them at once.
    Returns whether it started."""
    global _server
    if _server is not None or not wanted(argv) or not hasattr(os, "fork"):
        return False
    threading = sys.modules.get("threading")
    if "OCP.OCP" in sys.modules or (threading is not None and threading.active_count() > 1):
        return False
    paths = list(dict.fromkeys(arg for arg in argv if arg.lower().endswith(_SUFFIXES)
                               and os.path.isfile(arg)))
    if not paths:
        return False
    from gjkcli import forks  # here: every command imports this module as it starts

    try:
        worker = forks.Worker(lambda parent: _serve(paths, parent))
    except OSError:  # no process left to fork: everything runs here
        return False
    _server = (worker, os.getpid())
    return True


def wanted(argv: list) -> bool:
    """`gjk scan` or `gjk check`, with neither --dask, nor one job, nor --debug (whose
    tracebacks are whole in one process)."""
    words = [arg for arg in argv if not arg.startswith("-")]
    if not words or words[0] not in ("scan", "check") or "--dask" in argv or "--debug" in argv:
        return False
    for k, arg in enumerate(argv):
        value = None
        if arg in ("-j", "--jobs") and k + 1 < len(argv):
            value = argv[k + 1]
        elif arg.startswith("--jobs="):
            value = arg.split("=", 1)[1]
        elif arg.startswith("-j") and arg[2:].isdigit():
            value = arg[2:]
        if value is not None and value.strip() == "1":
            return False
    return True


def serving() -> bool:
    """Whether `ask` sends its calls to the OpenCASCADE process (this is the process that
    started it, and it has not ended)."""
    return _server is not None and _server[1] == os.getpid()


def reader() -> int | None:
    """The OpenCASCADE process's id when it serves (`gjkcli.scene.watch` follows its reading of
    a large file), else None."""
    return _server[0].pid if serving() else None


def serves(path) -> bool:
    """Whether a STEP file's parts are asked of the OpenCASCADE process (`serving`, and `path`
    is a STEP file by its name)."""
    return serving() and str(path).lower().endswith(_SUFFIXES)


def ask(function, *args, **kwargs):
    """`function(*args, **kwargs)` (a module-level function of gjk's, its arguments and answer
    picklable), run in the OpenCASCADE process when it serves, else here. Its exception is
    raised here either way."""
    global _server
    if serving():
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
                kind, value = worker.receive()
            except (forks.Lost, OSError):
                kind = None
        if kind is None:  # from now on, everything runs here
            worker.close()
            _server = None
        elif kind == "error":
            raise value
        else:
            return value
    return function(*args, **kwargs)


def stop() -> None:
    """End the OpenCASCADE process (the command is done); later calls run here. It is not
    waited for: freeing its memory (OCP's, a few hundred MB) took 30 to 40 ms of the command's
    end."""
    global _server
    if serving():
        worker, _server = _server[0], None
        worker.close(wait=False)


def _serve(paths: list, parent) -> None:
    """The OpenCASCADE process: reads `paths` ahead, then answers requests until the command
    closes its end (or sends None)."""
    _quiet()
    from gjkcli import extras
    from gjkcli.errors import InputError
    from gjkcli.mesh import cad

    extras.freeze_imports = True  # as in the command: OCP's objects live as long as this process
    ahead: dict = {}  # real path -> ("ok", parts) or ("error", InputError)
    for path in paths:
        try:
            ahead[os.path.realpath(path)] = ("ok", cad.read_step(path))
        except InputError as exc:
            ahead[os.path.realpath(path)] = ("error", exc)
        except Exception:  # noqa: BLE001 - asked again, the command's own call says what failed
            pass
    while True:
        request = parent.receive()
        if not isinstance(request, tuple):  # the command closed its end, or is done
            return None
        function, args, kwargs = request
        try:
            real = os.path.realpath(args[0]) if function is cad.read_step and args else None
            if real in ahead and len(args) == 1 and not kwargs.keys() - {"shown"}:
                answer = _ahead(ahead.pop(real), kwargs.get("shown"))
            else:
                answer = ("ok", function(*args, **kwargs))
        except Exception as exc:  # noqa: BLE001 - raised again in the command
            answer = ("error", exc)
        parent.reply(*answer)


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


def _ahead(read: tuple, shown: str | None) -> tuple:
    """A file's parts read ahead, as `read_step(path, shown=shown)` gives them."""
    import dataclasses

    kind, value = read
    if kind == "error" or shown is None:
        return read
    return "ok", [dataclasses.replace(part, source=shown) for part in value]
