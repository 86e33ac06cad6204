"""The exception family, the records of an unusable input and of geometry left unchecked, and
how an output is written.

The CLI maps every `GjkError` to one line on stderr and exit code 2.
"""
from __future__ import annotations

import errno
import os
from dataclasses import dataclass, field


class GjkError(Exception):
    """Base of every error gjk reports to a user."""


class InputError(GjkError):
    """A file or value the user gave cannot be used: names the file and what is wrong with it.

    before : the inputs the run could not use before it stopped here (`Problem`s), which are
        the reason and are said first (a length with a unit cannot be converted when the one
        file stating the unit was refused: the refusal comes first).
    """

    def __init__(self, source, message, before=()):
        self.source = str(source)
        self.message = message
        self.before = tuple(before)
        super().__init__(f"{self.source}: {message}")

    def __reduce__(self):  # rebuilt from (source, message) when it crosses a worker process
        return (type(self), (self.source, self.message, self.before))


class ShapeError(GjkError):
    """Geometry that cannot form a shape (no points, NaN or infinite coordinates)."""


@dataclass(frozen=True)
class Problem:
    """An input a run could not use: the file as the user named it, and what is wrong with it.

    A run records it and goes on with the other inputs; the command exits 2.

    order : where a reader that read its file in shares ranks it among the file's problems (an
    IFC element's, `gjkcli.mesh.ifc.read_share`), so that the shares' problems join in one
    reader's order; () for any other. Not compared, never reported.
    """

    file: str
    message: str
    order: tuple = field(default=(), compare=False, repr=False)

    @property
    def asks_install(self) -> bool:
        """Whether the input failed for want of a library, not for what the file holds: every
        such message says what to install ("pip install ..."). Another environment reads the
        same file, so a report of it is not kept (`gjkcli.clicache`)."""
        return "pip install" in self.message


@dataclass(frozen=True)
class Note:
    """What a reader assumed or left out of an input it read (an IFC model's elements with no 3D
    body): the input as the user named it, and the sentence. The run lists it among its notes;
    it fails nothing.

    order : as Problem's: where a reader that read its file in shares ranks it among the file's
    notes of one element each (an IFC element cut away whole by its openings); () for any
    other. Not compared, never reported.
    """

    file: str
    message: str
    order: tuple = field(default=(), compare=False, repr=False)

    def __str__(self) -> str:
        return f"{self.file}: {self.message}"


@dataclass(frozen=True)
class Unchecked:
    """Geometry of an input that was read but not checked (a URDF link whose mesh file is not
    there): the input as the user named it (FILE:LINE), and what was left out and why.

    The run checks the rest, says so in a note, and fails (exit 1) so that CI notices.
    """

    file: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}: {self.message}"


def one_line(text) -> str:
    """Text folded onto one line: a message from a library may span several."""
    return " ".join(str(text).split())


# The exit code of a run stopped by Ctrl-C: 128 + SIGINT, as shells report it.
EXIT_INTERRUPTED = 130

# Temporary files being written (a report, a baseline: a temporary file in the output's folder,
# then a rename). The command's Ctrl-C handler removes them before the process ends, so an
# interrupted run leaves every file as it was.
unfinished: set = set()


def write_whole(path, text) -> "os.stat_result | None":
    """Write `text` (str, bytes as they are, or an iterable of bytes chunks: a large report
    written as it is encoded, never whole in memory) to what `path` names, never changing its
    type. Returns the written file's status where it is a regular file (replaced or made, below),
    for `WrittenFile`; None where it is a stream, a device, a FIFO or a socket.

    - A regular file, or a path that does not exist yet: written whole or not at all (a temporary
      file in the same folder, then a rename; an interrupted or failed write leaves the old file
      as it was). A new file's mode is 0666 less the umask, as any tool's; a file replaced keeps
      its mode.
    - A symlink is followed (a chain of them too, or one pointing where nothing is yet), and its
      target is replaced: the link stays a link.
    - A character device (/dev/null), a FIFO (`-o >(gzip > r.gz)`) or a socket is written in
      place, as a shell's `>` would; so is the file this process's stdout or stderr is
      (/dev/stdout when it is redirected to a file).
    - A folder or a block device is refused.
    OSError as it comes.
    """
    import stat

    data = text.encode("utf-8") if isinstance(text, str) else text
    try:
        st = os.stat(path)  # follows symlinks; /dev/stdout included
    except FileNotFoundError:
        st = None  # nothing there yet, or a symlink to where nothing is yet
    if st is not None:
        fd = _standard_stream(st)
        if fd is not None:
            _write_fd(fd, data)
            return None
        if stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode):
            _write_in_place(path, data)
            return None
        if stat.S_ISSOCK(st.st_mode):
            _send_to_socket(path, data)
            return None
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, "is a folder; name a file")
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "is a block device (a disk); gjk writes no report onto one")
    return _replace_whole(os.path.realpath(path), data, None if st is None else stat.S_IMODE(st.st_mode))


def replaces_whole(path) -> bool:
    """Whether `write_whole(path, ...)` would write a regular file (one that is there, not this
    process's stdout or stderr, or nothing yet), which `WrittenFile` can read back."""
    import stat

    try:
        st = os.stat(path)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and _standard_stream(st) is None


class WrittenFile:
    """A regular file `write_whole` wrote (`written`: the status it returned, or None where it
    wrote none), read back only while it is still the file written then: a report the cache
    keeps from the file, not from a copy held while it was written."""

    def __init__(self, path, written):
        self.path = path
        self.written = written

    def opened(self) -> int | None:
        """A descriptor reading the file, where it is the one written (the same device, inode,
        size and modification time), else None (replaced, changed, gone)."""
        if self.written is None:
            return None
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return None
        try:
            now = os.fstat(fd)
        except OSError:
            now = None
        if now is None or _identity(now) != _identity(self.written):
            os.close(fd)
            return None
        return fd


def _identity(st) -> tuple:
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def _standard_stream(st):
    """1 or 2 when `st` is the file this process's stdout or stderr writes to, else None."""
    import sys

    for fd, stream in ((1, sys.stdout), (2, sys.stderr)):
        try:
            mine = os.fstat(fd)
        except OSError:
            continue
        if (mine.st_dev, mine.st_ino) == (st.st_dev, st.st_ino):
            if stream is not None:
                stream.flush()  # what was printed before comes before
            return fd
    return None


def _write_fd(fd: int, data) -> None:
    """Bytes, or an iterable of bytes chunks, all written to `fd`."""
    for chunk in (data,) if isinstance(data, bytes) else data:
        view = memoryview(chunk)
        while view:
            view = view[os.write(fd, view):]


def _write_in_place(path, data: bytes) -> None:
    """A device or a FIFO: opened for writing, as it is (a FIFO waits for its reader)."""
    fd = os.open(path, os.O_WRONLY | os.O_NOCTTY | os.O_CLOEXEC)
    try:
        _write_fd(fd, data)
    finally:
        os.close(fd)


def _send_to_socket(path, data: bytes) -> None:
    """A Unix socket: connected to and sent the bytes (a stream socket, else a datagram one)."""
    import socket

    data = data if isinstance(data, bytes) else b"".join(data)  # one datagram, one buffer
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.connect(os.fspath(path))
            s.sendall(data)
    except OSError as e:
        if e.errno != errno.EPROTOTYPE:
            raise
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as s:
            s.connect(os.fspath(path))
            s.sendall(data)


def is_partial_write(name: str) -> bool:
    """Whether a file's name is that of a temporary file `write_whole` writes before its rename
    (`.gjk-<hex>.tmp`): one left by a process that was killed, or one being written."""
    return name.startswith(".gjk-") and name.endswith(".tmp")


def _replace_whole(target: str, data: bytes, mode) -> os.stat_result:
    """A temporary file beside `target`, then a rename over it; the file's status once written.
    The temporary file is created with mode 0666 so that the kernel applies the umask
    (tempfile.mkstemp's 0600 would stay); `mode`, the replaced file's, is kept when given. The
    name's random part comes from os.urandom, as secrets.token_hex's does, without importing
    secrets (and random) for it."""
    folder = os.path.dirname(target)
    while True:
        tmp = os.path.join(folder, f".gjk-{os.urandom(6).hex()}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
            break
        except FileExistsError:
            continue
    unfinished.add(tmp)
    try:
        try:
            if mode is not None:
                os.fchmod(fd, mode)
            _write_fd(fd, data)
            written = os.fstat(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)
        return written
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    finally:
        unfinished.discard(tmp)


# Files and folders a run has finished but whose output is not (the pictures of `--png DIR` and
# the folders made for them, in the order made): the Ctrl-C handler removes them too, newest
# first, so an interrupted run leaves no part of that output. The run empties it once the
# output is complete.
provisional: list = []


class FailedLine(str):
    """A reader's line on an object it left out (an IFC element whose geometry failed, a STEP
    solid OpenCASCADE could not mesh), with `order`: where a read of the whole file ranks it
    among the file's lines (a Dask scan's shares of a file list them as one process does)."""

    def __new__(cls, line: str, order: tuple):
        made = super().__new__(cls, line)
        made.order = tuple(order)
        return made

    def __reduce__(self):  # pickled as a str subclass with its order
        return (FailedLine, (str(self), self.order))
