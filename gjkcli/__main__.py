"""`python -m gjkcli` and the `gjk` command's entry: Ctrl-C ends the run at once, at any moment.

The SIGINT handler is installed before anything else is imported. It does not raise into the
run (a library may swallow a KeyboardInterrupt, or be left holding a lock): it removes the
temporary files of outputs being written (every output is a temporary file, then a rename, so
nothing else is half written) and the files already written of an output of many files (the
pictures of `--png DIR`), says so in one line and ends the process with exit code 130
(128 + SIGINT), never a traceback. Worker processes inherit it and end quietly.
"""
import time

# When the command started, near enough (the interpreter's own start is before it): --timings
# books the time from here to the command's start as imports (gjkcli.clock.startup).
STARTED = time.perf_counter()

import _thread  # noqa: E402
import os  # noqa: E402
import signal  # noqa: E402
import sys  # noqa: E402

# numpy's OpenBLAS starts a thread pool (one thread per core) as numpy is imported, a large share
# of `import numpy` (benchmarks/bench_startup.py), for products gjk hardly makes: placing vertices
# (n x 3 by 3 x 3) is memory-bound, and the compiled core does the geometry. One thread unless
# the user set it; worker processes (--jobs, Dask) inherit it and do not oversubscribe the cores.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

_MAIN = os.getpid()


def _interrupt(_signum, _frame):
    # gjkcli.errors may not be imported yet, or be half imported, in the first instants
    errors = sys.modules.get("gjkcli.errors")
    for tmp in list(getattr(errors, "unfinished", ())):
        try:
            os.unlink(tmp)
        except OSError:
            pass
    for done in reversed(list(getattr(errors, "provisional", ()))):  # a whole output or nothing of it
        try:
            os.rmdir(done) if os.path.isdir(done) else os.unlink(done)
        except OSError:
            pass
    if os.getpid() == _MAIN:
        # worker processes would outlive the run; the signal may land while multiprocessing is
        # itself being imported (a half-made module), and nothing here may raise into the run
        active_children = getattr(sys.modules.get("multiprocessing"), "active_children", None)
        try:
            for child in active_children() if active_children else ():
                child.kill()
        except Exception:  # noqa: BLE001 - half-imported or half-started: end regardless
            pass
        for pid in list(getattr(sys.modules.get("gjkcli.forks"), "running", ())):
            try:  # the refinement's forked workers (gjkcli.forks), outside multiprocessing
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        os.write(2, b"gjk: interrupted\n")
    os._exit(getattr(errors, "EXIT_INTERRUPTED", 128 + signal.SIGINT))


# Installed as this module is imported, before anything of gjk's: `python -m gjkcli` and the
# `gjk` script (which imports run from here) are both covered from their first line.
signal.signal(signal.SIGINT, _interrupt)


# A forked process ends with the process it was forked from (Linux's PR_SET_PDEATHSIG), where the
# fork was made by that process's main thread: a pool's worker forked an instant before the run
# ended, not yet among the children the handler above kills, would otherwise wait for its tasks
# for ever, holding the run's stdout and stderr open. Not for a fork by another thread: the
# signal follows the thread that forked, not its process.
_MAIN_THREAD = _thread.get_ident()
_forked_by_main = False
_parent = None
_prctl = None
_PR_SET_PDEATHSIG = 1


def _before_fork():
    global _forked_by_main, _parent, _prctl
    _forked_by_main, _parent = _thread.get_ident() == _MAIN_THREAD, os.getpid()
    if _forked_by_main and _prctl is None and "ctypes" in sys.modules:  # found once, not in each copy
        try:
            _prctl = sys.modules["ctypes"].CDLL(None).prctl
        except (AttributeError, OSError):
            _prctl = False


def _after_fork_in_child():
    global _prctl
    if not _forked_by_main:
        return
    try:
        if _prctl is None:
            import ctypes

            _prctl = ctypes.CDLL(None).prctl
        if _prctl:
            _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (AttributeError, OSError):
        _prctl = False
        return
    if os.getppid() != _parent:  # the parent ended before the line above: nothing would signal
        os._exit(getattr(sys.modules.get("gjkcli.errors"), "EXIT_INTERRUPTED", 128 + signal.SIGINT))


if sys.platform.startswith("linux"):
    os.register_at_fork(before=_before_fork, after_in_child=_after_fork_in_child)


# True once `run` runs: gjk started this process (gjkcli.clock.since_start times it from its start).
RUNNING = False


def _caching(argv: list) -> bool:
    """The command may use the cache: not --no-cache, and GJK_NO_CACHE unset or a --cache-dir
    given, as `gjkcli.clicache` opens it."""
    from gjkcli.mesh.cad_process import option_values

    return "--no-cache" not in argv and (os.environ.get("GJK_NO_CACHE", "") in ("", "0")
                                         or bool(option_values(argv, "--cache-dir")))


def _may_be_kept(argv: list, folder=None) -> bool:
    """The cache may hold this command's whole report (`gjkcli.cli`'s run key): a format it keeps
    is asked for on the command line (a settings file's format is not looked at here: its
    reader process then starts at once, and is ended if the report is kept), with the cache,
    and, where the cache's folder is known before the command line is read (`_cache_folder`),
    each STEP file and IFC model among the arguments is one a kept report was made of, as its
    bytes are now (`gjkcli.pipeline.cache.may_hold_report`): the reader of an edited file
    starts at once, as without the cache. folder: `_cache_folder` of `argv`, as a callable that
    finds it once (`run`), or None to find it here."""
    from gjkcli.mesh.cad_process import option_values, read_ahead_files

    if not (_caching(argv) and any(value in ("json", "sarif", "github")
                                   for value in option_values(argv, "--format"))):
        return False
    files = read_ahead_files(argv)
    folder = (folder or (lambda: _cache_folder(argv)))() if files else None
    if folder is None:
        return True
    from gjkcli.pipeline.cache import may_hold_report

    return may_hold_report(folder, files)


def _element_meshes(argv: list, folder=None):
    """For `gjk scan` with the cache, where its folder is known before the command line is read:
    a callable that opens the cache's table of IFC element meshes, (table, key prefix), for the
    process that reads small IFC models ahead (`gjkcli.mesh.cad_process.start`), so that a
    re-run meshes only the elements whose definition changed, as it does for a model it reads
    itself; else None. folder: as `_may_be_kept`'s."""
    from gjkcli.mesh.cad_process import read_ahead_files

    words = [arg for arg in argv if not arg.startswith("-")]
    if not words or words[0] != "scan" or not _caching(argv) or not any(
            f.lower().endswith((".ifc", ".ifczip")) for f in read_ahead_files(argv)):
        return None
    folder = (folder or (lambda: _cache_folder(argv)))()
    if folder is None:
        return None

    def opened():  # the folder's size is the command's to bound, at its end
        from gjkcli.pipeline.cache import Cache, Table, prefix

        return Table(Cache(folder), "ifc"), prefix()

    return opened


def _cache_folder(argv: list):
    """The cache's folder as the command will find it (`gjkcli.pipeline.cache.located`), or None
    where a settings file may name another (one that sets `cache` or `cache_dir`)."""
    import re
    from pathlib import Path

    from gjkcli.mesh.cad_process import option_values

    given = option_values(argv, "--cache-dir")
    if given:
        return given[-1]
    if os.environ.get("GJK_CACHE_DIR"):
        return os.environ["GJK_CACHE_DIR"]
    settings = None
    if "--isolated" not in argv:
        from gjkcli.config import find

        named = option_values(argv, "--config")
        settings = named[-1] if named else find()
        try:
            text = None if settings is None else Path(settings).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None
        if text is not None and re.search(r"^\s*cache(_dir)?\s*=", text, re.M):
            return None
    from gjkcli.pipeline.cache import located

    return located(settings, None)


def run():
    global RUNNING
    RUNNING = True
    from gjkcli.mesh import cad_process

    # STEP files: OpenCASCADE imported and the files read in a forked process while this one
    # imports the rest (before anything heavy is imported here, so the fork is cheap); gated
    # where the cache may hold the whole report (`gjkcli.cli` says go when it does not)
    import functools

    argv = sys.argv[1:]
    folder = functools.cache(lambda: _cache_folder(argv))  # the cache's folder, found once if asked
    cad_process.start(argv, gated=_may_be_kept(argv, folder), cached=_caching(argv),
                      kept=_element_meshes(argv, folder))
    # --dask local[:N]: the process its workers are forked from starts now, importing their
    # modules on the other core while this one imports its own
    from gjkcli.pipeline import workerserver

    workerserver.warm(sys.argv[1:])

    from gjkcli import extras
    from gjkcli.cli import main

    extras.freeze_imports = True  # this process's imported modules live as long as it does

    try:
        main()
    finally:
        cad_process.stop()
        # The run is over (click ends it with SystemExit): the interpreter's last garbage
        # collections would walk every object of numpy's, click's and gjk's modules only to find
        # them alive, most of the exit's time. Frozen (gc.freeze), they are skipped; the exit
        # still runs the atexit handlers and flushes and closes the streams (Python never
        # promises __del__ for objects alive at exit).
        import gc

        gc.freeze()


if __name__ == "__main__":
    run()
