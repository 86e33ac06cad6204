"""Imported last by the server a local cluster's processes are forked from (`gjkcli.pipeline.
workerserver.preload`), and only there: when the command that started the server ends, the
server ends at once (`os._exit`), skipping the finalization of everything it imported
(distributed, NumPy, IfcOpenShell, gjk's modules). That finalization took about 0.09 s on the
Great Court roof's scan, during which the server still held the command's standard output and
error open: a pipe reading them (`gjk scan ... | tee`, a benchmark's `subprocess.run`) saw their
end that much after the command's own. The server has nothing to finalize: its children (the
scheduler, the workers) are processes of their own, gone before it with the cluster, and it
writes no file.

Forked children do not run it: multiprocessing ends them with `os._exit` after their target.
"""
from __future__ import annotations

import atexit
import os
import sys


def _end_at_once() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (AttributeError, OSError, ValueError):  # closed, or none
            pass
    os._exit(0)


atexit.register(_end_at_once)  # registered after the preloaded modules' own: run before them
