"""How far a reader has got through a big file, whichever library reads it: the file position of
the descriptor this process holds open on it, as Linux states it in /proc/self/fdinfo (the same
number `pv -d PID` shows). trimesh, ezdxf, IfcOpenShell and OpenCASCADE read through file
descriptors, so a bar can move while one large file loads without a callback in any reader.

Where /proc is missing (macOS, Windows) or a reader maps the file instead of reading it, nothing is
reported and the bar counts whole files, as before.
"""
from __future__ import annotations

import os
import threading
from contextlib import contextmanager
from pathlib import Path

__all__ = ["bytes_read", "watch_reading", "WATCH_FROM_BYTES"]

# Files smaller than this load in well under a second: no watcher thread for them.
WATCH_FROM_BYTES = 8 << 20
# Seconds between two looks at the file position.
INTERVAL = 0.2


def bytes_read(path) -> int | None:
    """The furthest position among this process's descriptors open on `path`; None when none is
    open (or /proc cannot tell)."""
    try:
        target = os.stat(path)
        fds = os.listdir("/proc/self/fd")
    except OSError:
        return None
    best = None
    for fd in fds:
        try:
            st = os.stat(f"/proc/self/fd/{fd}")
            if (st.st_dev, st.st_ino) != (target.st_dev, target.st_ino):
                continue
            with open(f"/proc/self/fdinfo/{fd}") as info:
                pos = next(int(line.split()[1]) for line in info if line.startswith("pos:"))
        except (OSError, StopIteration, ValueError, IndexError):
            continue
        best = pos if best is None else max(best, pos)
    return best


@contextmanager
def watch_reading(path, tell, stage: str = "read", interval: float = INTERVAL):
    """While the block reads `path`, tell(stage, bytes read, file size) every `interval` seconds
    from a daemon thread (and once at the end, complete); nothing for a file under
    WATCH_FROM_BYTES or without /proc."""
    try:
        size = Path(path).stat().st_size
    except OSError:
        size = 0
    if size < WATCH_FROM_BYTES or not os.path.isdir("/proc/self/fdinfo"):
        yield
        return
    done = threading.Event()

    def poll() -> None:
        furthest = 0
        while not done.wait(interval):
            pos = bytes_read(path)
            if pos is not None and pos > furthest:
                furthest = min(pos, size)
                tell(stage, furthest, size)

    tell(stage, 0, size)
    watcher = threading.Thread(target=poll, name="gjk-read-watch", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        done.set()
        watcher.join()
        tell(stage, size, size)
