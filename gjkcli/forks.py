"""Work shared with forked copies of this process, without a process pool.

A fork copies everything this process has read and made (OpenCASCADE's solids, their canonical
copies, the meshes): the copy works on them at once, and hands back only its answers. Python's
ProcessPoolExecutor does the same through a pool whose imports, queues and threads cost about
45 ms of a STEP run's refinement (50 to 60 ms against 15 ms for a fork and a pipe, measured on
a process that has imported OpenCASCADE). Here a worker is one fork and two pipes:

    worker = forks.Worker(task)     # task(parent) runs in the copy; parent.send / receive
    ...                             # this process works meanwhile, worker.send / receive
    answer = worker.result()        # task's return value, or its exception raised here

and `Counter` hands out 0, 1, 2, ... across this process and its copies, each number once, for
taking the next piece of shared work. A copy ends with os._exit: nothing of this process's
exit (atexit handlers, buffered output) runs twice. The command's Ctrl-C handler ends the
copies still `running` with the run (`gjkcli.__main__`).
"""
from __future__ import annotations

import os
import pickle
import signal
import struct

from gjkcli.collector import no_gc

__all__ = ["Lost", "Worker", "Counter", "running"]

# The process ids of the copies forked and not yet reaped, for the Ctrl-C handler.
running: set = set()

# This process's ends of its workers' pipes: a copy forked later closes them, so that a worker
# sees its pipes end when this process does, not when its last sibling does.
_ends: set = set()

# Copies killed by `close(wait=False)` and not yet reaped.
_ended: set = set()

_SIZE = struct.Struct("<Q")


class Lost(RuntimeError):
    """A forked copy ended without its answer (killed, or crashed in a library)."""


class Worker:
    """`task(parent)` run in a forked copy of this process; `parent` sends to and receives
    from this process's Worker. The copy's return value (or its exception) is `result()`."""

    def __init__(self, task):
        _reap_ended()
        down_r, down_w = os.pipe()  # this process -> the copy
        up_r, up_w = os.pipe()  # the copy -> this process
        pid = os.fork()
        if pid == 0:  # the copy
            status = 1
            try:
                for fd in (down_w, up_r, *_ends):
                    os.close(fd)
                _ends.clear()
                running.clear()
                _ended.clear()
                parent = _Channel(down_r, up_w)
                try:
                    answer = ("ok", task(parent))
                except BaseException as exc:  # noqa: BLE001 - raised again in the parent
                    answer = ("error", exc)
                parent.reply(*answer)
                status = 0
            finally:
                os._exit(status)
        os.close(down_r)
        os.close(up_w)
        running.add(pid)
        _ends.update((up_r, down_w))
        self.pid = pid
        self._channel = _Channel(up_r, down_w)
        self._done, self._status = False, "still running"

    def send(self, value) -> None:
        self._channel.send(value)

    def receive(self):
        """The copy's next message; Lost when it ended instead."""
        got = self._channel.receive()
        if got is _ENDED:
            self.close()
            raise Lost(f"a forked worker process ended without its answer ({self._status})")
        return got

    def ready(self, timeout: float = 0.0) -> bool:
        """Whether `receive` would return at once (a message, or the copy's end, is waiting),
        waiting up to `timeout` seconds for it."""
        import select

        try:
            return bool(select.select([self._channel.read_fd], [], [], timeout)[0])
        except (OSError, ValueError):  # closed: receive says so at once
            return True

    def result(self):
        """The task's return value; its exception raised here; Lost when it ended without one."""
        kind, value = self.receive()
        self.close(wait=False)
        if kind == "error":
            raise value
        return value

    def close(self, wait: bool = True) -> None:
        """Ends the copy if it still runs, closes the pipes, and reaps it (idempotent). Without
        `wait`, the copy is killed and reaped later (by the next Worker, or by the system once
        this process has ended): its memory is freed on another core while this process goes
        on, 8 to 12 ms of a STEP refinement's end, 30 to 40 ms for a copy holding
        OpenCASCADE's solids."""
        if self._done:
            return
        self._done = True
        if not wait:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except OSError:
                pass
            running.discard(self.pid)
            _ended.add(self.pid)
            self._status = "killed once done with"
        self._channel.close()
        _ends.difference_update((self._channel.read_fd, self._channel.write_fd))
        if wait:
            self._status = _reap(self.pid)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _reap_ended() -> None:
    """Reap the copies closed without waiting that have ended since."""
    for pid in list(_ended):
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:  # reaped already (a caller's own wait)
            done = pid
        if done:
            _ended.discard(pid)


def _reap(pid: int) -> str:
    """Waits for the copy (killed first if still running); how it ended, in words."""
    done, status = os.waitpid(pid, os.WNOHANG)
    if done == 0:
        os.kill(pid, signal.SIGKILL)
        done, status = os.waitpid(pid, 0)
    running.discard(pid)
    if os.WIFSIGNALED(status):
        return f"killed by signal {os.WTERMSIG(status)}"
    return f"exit status {os.WEXITSTATUS(status)}"


_ENDED = object()


class _Channel:
    """Pickled values, each after its length, over a pair of pipe ends."""

    def __init__(self, read_fd: int, write_fd: int):
        self.read_fd, self.write_fd = read_fd, write_fd

    def send(self, value) -> None:
        data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        view = memoryview(_SIZE.pack(len(data)) + data)
        while view:
            view = view[os.write(self.write_fd, view):]

    def reply(self, kind: str, value) -> None:
        """An answer, ("ok", value) or ("error", exception), as `Worker.result` reads it; one
        that does not pickle goes as the RuntimeError saying why."""
        try:
            self.send((kind, value))
        except Exception as exc:  # noqa: BLE001 - pickled before anything is written
            self.send(("error", RuntimeError(f"{type(value).__name__}: {exc}")))

    def receive(self):
        head = self._read(_SIZE.size)
        if head is None:
            return _ENDED
        body = self._read(_SIZE.unpack(head)[0])
        if body is None:
            return _ENDED
        with no_gc():  # a worker's answers: thousands of objects (a refinement's Results), all kept
            return pickle.loads(body)  # noqa: S301 - this process's own fork

    def _read(self, n: int) -> bytes | None:
        chunks, left = [], n
        while left:
            chunk = os.read(self.read_fd, min(left, 1 << 20))
            if not chunk:
                return None
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    def close(self) -> None:
        _close(self.read_fd, self.write_fd)


class Counter:
    """0, 1, 2, ... handed out across this process and the copies it forks after making the
    counter, each number once. The counter is one 8-byte token in a pipe: `take` reads it (a
    read of fewer than PIPE_BUF bytes that a single write made is whole, and only one process
    gets it), and writes the next one back; whoever reads meanwhile waits for it."""

    def __init__(self):
        self._r, self._w = os.pipe()
        os.write(self._w, _SIZE.pack(0))

    def take(self) -> int:
        n = _SIZE.unpack(os.read(self._r, _SIZE.size))[0]
        os.write(self._w, _SIZE.pack(n + 1))
        return n

    def close(self) -> None:
        _close(self._r, self._w)


def _close(*fds: int) -> None:
    for fd in fds:
        try:
            os.close(fd)
        except OSError:  # closed already
            pass
