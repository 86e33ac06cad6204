"""Where a run's time went: its stages (load, hulls, ...) and, as a stage of its own, imports.

gjk imports its libraries when a command first needs them (numpy, the compiled core, trimesh for
the files gjk does not read itself, scipy for qhull, rich for the table), so that a short
command pays only for what it uses. Measured as they happen, those imports would be booked under
the stage that first needed them: importing trimesh under "load", scipy under "hulls", rich
under "report". `--timings` turns on a recorder (`recorded`) that times every import made on the
main thread, outermost ones only; `stage` books a stage's time less the imports made during it,
and adds those to "imports". The imports before the command ran (click, gjk's command line) are
`startup()` seconds: from the first line of `gjkcli.__main__` to `record`; the interpreter's own
start before that is not counted.

Nothing is recorded without `record` (an import then costs nothing extra).
"""
from __future__ import annotations

import builtins
import importlib
import sys
import threading
import time
from contextlib import contextmanager

__all__ = ["cpu_timed", "recorded", "record", "stop", "recording", "stage", "imported", "imports_between", "startup", "since_start", "again", "IMPORTS"]

# The name of the imports' stage in a run's timings.
IMPORTS = "imports"

_spans: list = []  # (start, end) of each outermost import on the main thread, in order
_depth = 0
_installed = False
_recording_since: float | None = None
_originals: tuple = ()
_again_since: float | None = None  # a later run's start in this process (`again`)


@contextmanager
def recorded(on: bool = True):
    """`record` within the block (when `on`), then the import machinery as it was and nothing
    recorded: a command run in a longer-lived process (tests, a notebook) leaves nothing behind."""
    if not on or _installed:
        yield
        return
    record()
    try:
        yield
    finally:
        stop()


def stop() -> None:
    """Undo `record`: the import functions restored, the recorded imports forgotten."""
    global _installed, _recording_since
    if _installed:
        builtins.__import__, importlib.import_module = _originals
        _installed, _recording_since = False, None
        _spans.clear()


def record() -> None:
    """Time every import from now on (main thread, outermost imports only). Idempotent."""
    global _installed, _recording_since, _originals
    if _installed:
        return
    _installed = True
    _recording_since = time.perf_counter()
    _originals = (builtins.__import__, importlib.import_module)
    main = threading.main_thread()

    def timed(real):
        def wrapper(*args, **kwargs):
            global _depth
            # a module may have kept this wrapper (`from importlib import import_module`) after
            # `stop`: it then only passes calls on
            if not _installed or _depth or threading.current_thread() is not main:
                return real(*args, **kwargs)
            _depth += 1
            start = time.perf_counter()
            try:
                return real(*args, **kwargs)
            finally:
                _depth -= 1
                end = time.perf_counter()
                if end - start > 2e-5:  # a module already imported: nothing to book
                    _spans.append((start, end))
        return wrapper

    builtins.__import__ = timed(builtins.__import__)  # import statements
    importlib.import_module = timed(importlib.import_module)  # imports by name (gjkcli.extras)


def recording() -> bool:
    return _installed


def imported() -> float:
    """Seconds spent importing since `record`."""
    return sum(b - a for a, b in _spans)


def imports_between(start: float, end: float) -> float:
    """Seconds spent importing between two `time.perf_counter()` readings."""
    return sum(max(0.0, min(b, end) - max(a, start)) for a, b in _spans)


def stage(timings: dict, name: str, since: float) -> float:
    """Book the time from `since` to now under `name` in `timings`, less the imports made
    meanwhile (booked under IMPORTS when recording); return now."""
    now = time.perf_counter()
    imported = imports_between(since, now) if _installed else 0.0
    timings[name] = timings.get(name, 0.0) + (now - since) - imported
    if imported:
        timings[IMPORTS] = timings.get(IMPORTS, 0.0) + imported
    return now


@contextmanager
def cpu_timed(owner, name: str, spent: list):
    """Within the block, each call of `owner.name` (a module's function) appends its CPU seconds
    (`time.process_time`) to `spent`; the function is put back after it. For a benchmark or a
    test that measures one step of a run in this process, not for the command line."""
    inner = getattr(owner, name)

    def timed(*args, **kwargs):
        started = time.process_time()
        try:
            return inner(*args, **kwargs)
        finally:
            spent.append(time.process_time() - started)

    setattr(owner, name, timed)
    try:
        yield timed
    finally:
        setattr(owner, name, inner)


def _entry():
    """The module gjkcli.__main__ as this process loaded it, or None."""
    # `gjk` imports gjkcli.__main__; `python -m gjkcli` runs it as __main__
    entry = sys.modules.get("gjkcli.__main__")
    if getattr(entry, "STARTED", None) is None and getattr(
            getattr(sys.modules.get("__main__"), "__spec__", None), "name", None) == "gjkcli.__main__":
        entry = sys.modules["__main__"]
    return entry


def _started():
    """gjkcli.__main__'s STARTED (a perf_counter reading), None when it was not imported."""
    return getattr(_entry(), "STARTED", None)


def _process_age() -> float | None:
    """Seconds since this process was created (the interpreter's start included), from Linux's
    /proc (to the clock tick, 10 ms); None elsewhere."""
    import os

    try:
        with open("/proc/self/stat", "rb") as f:
            stat = f.read().decode("ascii", "replace")
        with open("/proc/uptime", "rb") as f:
            uptime = float(f.read().split()[0])
        # the fields after the command's name (in parentheses, which may hold spaces): the
        # 22nd field of proc(5), starttime in clock ticks after boot, is the 20th of these
        starttime = int(stat.rpartition(")")[2].split()[19])
        return max(0.0, uptime - starttime / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return None


def again(later: bool = True) -> None:
    """A later run of the command in this process starts now (`gjk scan --watch`): its clock
    (`since_start`) starts here, and it made no imports before its command ran (`startup`);
    with `later` False, the process's clock again (the watch ended: nothing left behind)."""
    global _again_since
    _again_since = time.perf_counter() if later else None


def since_start() -> float | None:
    """Seconds since the `gjk` process started, as a user timing the command would see them:
    the process's age from /proc where there is one (the interpreter's start included), else
    from the first line of `gjkcli.__main__`; for a later run in the process (`again`), since
    that run started. None when gjk did not start this process (a test or a notebook calling
    the command in a longer-lived one): the reports then time the run."""
    entry = _entry()
    started = getattr(entry, "STARTED", None)
    if started is None or not getattr(entry, "RUNNING", False):  # imported, not run: a test's import
        return None
    if _again_since is not None:
        return time.perf_counter() - _again_since
    age = _process_age()
    since_main = time.perf_counter() - started
    return since_main if age is None else max(age, since_main)


def startup() -> float:
    """Seconds from the first line of `gjkcli.__main__` to `record` (the imports of the command
    line itself), 0 when gjk was not started from there, nothing is recorded, or for a later
    run in the process (`again`)."""
    started = _started()
    if started is None or _recording_since is None or _again_since is not None:
        return 0.0
    return max(0.0, _recording_since - started)
