"""How far a reader has got through a big file, whichever library reads it: the file position of
the descriptor the reading process holds open on it, as Linux states it in /proc/PID/fdinfo (the
same number `pv -d PID` shows). trimesh, ezdxf, IfcOpenShell and OpenCASCADE read through file
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


def bytes_read(path, pid: int | str = "self") -> int | None:
    """The furthest position among the descriptors process `pid` (this one by default) holds
    open on `path`; None when none is open (or /proc cannot tell)."""
    try:
        target = os.stat(path)
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return None
    best = None
    for fd in fds:
        try:
            st = os.stat(f"/proc/{pid}/fd/{fd}")
            if (st.st_dev, st.st_ino) != (target.st_dev, target.st_ino):
                continue
            with open(f"/proc/{pid}/fdinfo/{fd}") as info:
                pos = next(int(line.split()[1]) for line in info if line.startswith("pos:"))
        except (OSError, StopIteration, ValueError, IndexError):
            continue
        best = pos if best is None else max(best, pos)
    return best


@contextmanager
def watch_reading(path, tell, stage: str = "read", interval: float = INTERVAL,
                  pid: int | str = "self"):
    """While the block reads `path` (in this process, or in process `pid`: a STEP file in
    OpenCASCADE's, `gjkcli.mesh.cad_process`), tell(stage, bytes read, file size) every
    `interval` seconds from a daemon thread (and once at the end, complete); nothing for a file
    under WATCH_FROM_BYTES or without /proc."""
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
            pos = bytes_read(path, pid)
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
