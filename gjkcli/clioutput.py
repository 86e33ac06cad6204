"""Where the `gjk` command writes: a report to stdout or to a file, recorded for the cache while
`recording` runs, and file names and notes as its lines show them.

A module of its own so that the command (`gjkcli.cli`) and its cache hooks (`gjkcli.clicache`)
write the same way without either importing the other. Only click and the standard library at
module level, as `gjkcli.cli`.
"""
from __future__ import annotations

import contextlib
import os
import sys

import click

from gjkcli.errors import InputError, WrittenFile, one_line, replaces_whole, write_whole

# The writes `write_text` records, one list per `recording` block that records (innermost last).
_RECORDING: list = []


def shown(name: str) -> str:
    """A file name as an error line shows it: as it is, or quoted with its escapes when it holds
    a newline, an escape sequence or another character a terminal would act on."""
    return name if name.isprintable() else repr(name)


def error_line(problem) -> str:
    """An input error of the findings (`Findings.errors`) as its one line on stderr."""
    return f"gjk: error: {shown(problem.file)}: {one_line(problem.message)}"


def with_settings(found, path, show_allowed: bool):
    """The findings with the settings file read named first among the notes, and listing the
    allowed pairs when asked."""
    import dataclasses

    change = {"show_allowed": True} if show_allowed else {}
    if path is not None:
        change["notes"] = (f"settings: {shown(str(path))}",) + tuple(found.notes)
    return dataclasses.replace(found, **change) if change else found


@contextlib.contextmanager
def recording(on: bool):
    """What `write_text` writes while the block runs, when `on`: [(path or None, bytes, a list
    of chunks of bytes or a `gjkcli.errors.WrittenFile`)]."""
    writes: list = []
    if on:
        _RECORDING.append(writes)
    try:
        yield writes
    finally:
        if on:
            _RECORDING.pop()


@contextlib.contextmanager
def to_stdout(what: str):
    """Writing to stdout: a reader that left (`gjk ... | head`) ends the output quietly, the exit
    code still counts; a full disk or another failure is one line naming the output."""
    try:
        yield
    except BrokenPipeError:
        _silence_stdout()
    except OSError as e:
        _silence_stdout()
        raise InputError("<stdout>", f"cannot write {what}: {e.strerror or e}") from e


def recorded(path: str | None, data) -> tuple:
    """What `recording` holds of bytes written to `path` (None for stdout): the bytes, the
    list of chunks of bytes a large report was written in, or the `WrittenFile` they made."""
    return None if path in (None, "-") else path, data


def write_text(path: str | None, text, what: str) -> None:
    """Text (str, bytes, or an iterable of bytes chunks) to the file a user named (written whole
    or not at all), or to stdout for None or '-'.

    While `recording`, the cache is given what was written: the text, or the chunks of a report
    written as it is encoded (not joined: a copy); but a regular file's chunks as the
    `WrittenFile` they made, read back when the cache keeps them, so that a large report is
    not held while it is written."""
    to_stdout_ = path is None or path == "-"
    lazy = not isinstance(text, (str, bytes, list))
    if _RECORDING and lazy and not to_stdout_ and replaces_whole(path):
        _RECORDING[-1].append(recorded(path, WrittenFile(path, _written(path, text, what))))
        return
    if _RECORDING:  # the cache keeps the report (`recording`)
        text = list(text) if lazy else text
        _RECORDING[-1].append(recorded(path, text.encode() if isinstance(text, str) else text))
    if to_stdout_:
        with to_stdout(what):
            # colour forced through a pipe stays (console.wants_colour); chunks as they are (a
            # report of many megabytes is not joined into one more copy)
            for chunk in (text,) if isinstance(text, (str, bytes)) else text:
                if not isinstance(chunk, (str, bytes)):  # a view of the last report's bytes
                    chunk = bytes(chunk)
                click.echo(chunk, nl=False, color=True)
        return
    _written(path, text, what)


def _written(path: str, text, what: str):
    """`write_whole`, its OSError as the InputError naming the file."""
    try:
        return write_whole(path, text)
    except OSError as e:
        raise InputError(path, f"cannot write {what}: {e.strerror or e}") from e


def _silence_stdout() -> None:
    """Point stdout at /dev/null so that the interpreter's final flush does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
