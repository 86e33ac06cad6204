"""The exception family and the record of an unusable input.

The CLI maps every `GjkError` to one line on stderr and exit code 2.
"""
from __future__ import annotations

from dataclasses import dataclass


class GjkError(Exception):
    """Base of every error gjk reports to a user."""


class InputError(GjkError):
    """A file or value the user gave cannot be used: names the file and what is wrong with it."""

    def __init__(self, source, message):
        self.source = str(source)
        self.message = message
        super().__init__(f"{self.source}: {message}")

    def __reduce__(self):  # rebuilt from (source, message) when it crosses a worker process
        return (type(self), (self.source, self.message))


class ShapeError(GjkError):
    """Geometry that cannot form a shape (no points, NaN or infinite coordinates)."""


@dataclass(frozen=True)
class Problem:
    """An input a run could not use: the file as the user named it, and what is wrong with it.

    A run records it and goes on with the other inputs; the command exits 2.
    """

    file: str
    message: str


def one_line(text) -> str:
    """Text folded onto one line: a message from a library may span several."""
    return " ".join(str(text).split())


# The exit code of a run stopped by Ctrl-C: 128 + SIGINT, as shells report it.
EXIT_INTERRUPTED = 130

# Temporary files being written (a report, a baseline: a temporary file in the output's folder,
# then a rename). The command's Ctrl-C handler removes them before the process ends, so an
# interrupted run leaves every file as it was.
unfinished: set = set()


def write_whole(path, text) -> None:
    """Write `text` (str, or bytes as they are) to `path` whole or not at all: a temporary file in
    the same folder, then a rename (an interrupted or failed write leaves the old file as it
    was). OSError as it comes."""
    import os
    import tempfile

    fd, tmp = tempfile.mkstemp(prefix=".gjk-", dir=os.path.dirname(os.path.abspath(path)))
    unfinished.add(tmp)
    try:
        if isinstance(text, bytes):
            with os.fdopen(fd, "wb") as f:
                f.write(text)
        else:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
        os.replace(tmp, path)
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
