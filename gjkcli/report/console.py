"""The human report as a terminal, a log or a file shows it: whether it is coloured, how wide it
is, its rich renderables for a terminal and its text for everything else. The command prints;
this module only decides and renders.

Only the standard library is imported at module level: rich and the renderers are imported
where a report is made, so that `gjk --help` does not pay for them.
"""
from __future__ import annotations

import io
import os

# The table lists at most this many findings (the worst first) unless --all-pairs or -v; the
# summary counts them all, and the machine formats list them all.
TABLE_ROWS = 25
# `gjk check` shows a panel per pair up to this many pairs (--split-bodies), then the table.
CHECK_PANELS = 12
# The width of a report through a pipe when COLUMNS says none.
PIPE_COLUMNS = 120

# A rich console's colour through a pipe: the 16 standard colours every CI log shows (rich's own
# detection finds none without a terminal, or with TERM=dumb).
FORCED = {"force_terminal": True, "color_system": "standard"}


def is_terminal(stream) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def wants_colour(color: str, terminal: bool, environ=os.environ) -> bool:
    """Whether the report on stdout is coloured: --color always or never; for auto, as pytest
    and most tools read the environment: PY_COLORS=1 or 0 first, then NO_COLOR (set and not
    empty: none), then FORCE_COLOR (set and not empty) or CLICOLOR_FORCE (not 0): colour
    through a pipe too; else on a terminal."""
    if color != "auto":
        return color == "always"
    if environ.get("PY_COLORS") in ("0", "1"):
        return environ["PY_COLORS"] == "1"
    if environ.get("NO_COLOR"):
        return False
    if environ.get("FORCE_COLOR") or environ.get("CLICOLOR_FORCE", "0") not in ("", "0"):
        return True
    return terminal


def columns() -> int:
    """The width of a report through a pipe: COLUMNS when it says one, else PIPE_COLUMNS."""
    try:
        width = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        return PIPE_COLUMNS
    return width if width >= 20 else PIPE_COLUMNS


def plain_box(text: str) -> str:
    """Box-drawing characters (rich's tables and panels, U+2500 to U+257F) as plain ones, for a
    log or a file: lines as - and |, corners and crossings as +."""
    import unicodedata

    table = {}
    for code in range(0x2500, 0x2580):
        name = unicodedata.name(chr(code), "")
        lines = ("HORIZONTAL" in name, "VERTICAL" in name)
        table[code] = "-" if lines == (True, False) else "|" if lines == (False, True) else "+"
    return text.translate(table)


def terminal_console(colour: bool):
    """A rich console on the terminal: rich reads its colours (and FORCE_COLOR, NO_COLOR)."""
    from rich.console import Console

    return Console(**({} if colour else {"color_system": None, "highlight": False}))


def recorded(renderables, colour: bool) -> str:
    """Rich renderables as the text of a log or a file: as wide as COLUMNS says, plain frames,
    no trailing spaces; ANSI colours where `colour`."""
    from rich.console import Console

    console = Console(record=True, width=columns(), file=io.StringIO(), soft_wrap=True,
                      **(FORCED if colour else {}))
    for renderable in renderables:
        console.print(renderable)
    if colour:
        return plain_box(console.file.getvalue())
    return plain_box("".join(line.rstrip() + "\n" for line in console.export_text().splitlines()))


def _shows_panels(found) -> bool:
    return found.command == "check" and len(found.pairs) <= CHECK_PANELS


def renderables(found, trace: bool, errors: bool, verbose: int = 0) -> list:
    """The report as rich renderables, in order: each pair's trace (with --trace), then a check's
    panels or the scan's table. `errors`: list the input errors (False on stdout, where stderr
    has them); `verbose`: every finding with its detail, no row limit."""
    from gjkcli.report.scan import render_scan
    from gjkcli.report.table import render_check
    from gjkcli.report.trace import render_trace
    from gjkcli.tolerances import DEFAULT

    out = []
    if trace:
        for pair in found.pairs:
            a, b = found.object(pair.a), found.object(pair.b)
            units = found.units or (a.units if a else None) or (b.units if b else None)
            out += [render_trace(pair.result.trace, pair.a, pair.b, units=units,
                                 hull_vertices=(a.hull_vertices, b.hull_vertices),
                                 scan_below=DEFAULT.brute_force_below), ""]
    if _shows_panels(found):
        out.append(render_check(found))
    else:
        out.append(render_scan(found, limit=None if found.all_pairs or verbose else TABLE_ROWS,
                               errors=errors, details=verbose > 0))
    return out


def report_text(found, trace: bool, errors: bool, colour: bool = False, verbose: int = 0,
                asked: bool = False) -> str:
    """The report for a log or a file. A scan's findings one per line with whole names
    (`gjkcli.report.lines.concise_lines`, as ruff's concise output), or, when the table is asked
    for (--format table, `asked`), the table in plain characters to COLUMNS; a check's panels to
    COLUMNS with plain frames. Lines are not wrapped where they need not be (a summary stays one
    line) and keep no trailing spaces. `colour`: ANSI colours, also through a pipe."""
    width = columns()
    if not trace and not _shows_panels(found):
        from gjkcli.report import lines as log

        spans = log.concise_lines(found, errors=errors, verbose=verbose,
                                  table=width if asked else None,
                                  limit=None if found.all_pairs or verbose else TABLE_ROWS)
        if not colour:
            return log.plain(spans)
        from rich.console import Console
        from rich.text import Text

        console = Console(width=width, soft_wrap=True, highlight=False, file=io.StringIO(), **FORCED)
        for line in spans:
            text = Text()
            for part, style in line:
                text.append(part, style=style or None)
            console.print(text)
        return console.file.getvalue()
    if not trace and not colour:
        # the same characters as rich's layout, without importing rich (a check's start-up)
        from gjkcli.report.checktext import plain_check

        text = plain_check(found, width)
        if text is not None:
            return plain_box(text)
    return recorded(renderables(found, trace, errors, verbose), colour)
