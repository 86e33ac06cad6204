"""Where a reader deep in a load says how far it has got (elements meshed, solids tessellated)
without a callback in every signature: the run puts its progress callback in force while it reads
a file (`reporting`), and a reader calls `report(stage, done, total)`, which does nothing when
no run listens. As `gjkcli.limits` puts a run's limits in force.

Only the process that put the callback in force reports: a worker process forked while it was in
force has no terminal to draw on, so `report` there does nothing.
"""
from __future__ import annotations

import contextlib
import os

__all__ = ["report", "reporting", "listening"]

_sinks: list = [(None, 0)]  # (callback, the process id that put it in force)


def report(stage: str, done: int, total: int) -> None:
    """Tell the run in progress that `stage` of the file being read has done `done` of `total`."""
    tell, pid = _sinks[-1]
    if tell is not None and pid == os.getpid():
        tell(stage, done, total)


def listening() -> bool:
    """Whether `report` here reaches a callback (a reader forked to work for this process sends
    its progress back only then)."""
    tell, pid = _sinks[-1]
    return tell is not None and pid == os.getpid()


@contextlib.contextmanager
def reporting(tell):
    """Put `tell(stage, done, total)` in force while the block runs (None: nothing listens)."""
    _sinks.append((tell, os.getpid()))
    try:
        yield
    finally:
        _sinks.pop()
