"""The cyclic garbage collector paused while many objects are made and all of them kept: loops
that make thousands of objects (hulls, a forked worker's answers, findings, a report's dicts)
otherwise trigger collections that walk every object alive, again and again, for nothing (the
reference counts still free what is dropped)."""
from __future__ import annotations

import gc
from contextlib import contextmanager

__all__ = ["no_gc"]


@contextmanager
def no_gc():
    """Pause the cyclic garbage collector within the block (as it was after it): measured, a
    quarter of the per-part qhull time."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
