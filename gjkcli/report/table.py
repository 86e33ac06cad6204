"""The human report of `gjk check`: the objects, then each pair's verdict. Rich renderables.

The words and their styles are `gjkcli.report.checktext`'s (which also lays them out as plain
text without rich); this module makes them renderables. Every piece of user data (file names,
object names) goes in as `Text`, never as markup, so a file called `part[1].stl` prints as itself.
"""
from __future__ import annotations

from rich.console import Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from gjkcli.pipeline.findings import Finding, Findings, ObjectRecord
from gjkcli.report.checktext import (
    ROLES, STYLES, headline_spans, objects_rows, pair_rows, summary_spans, trailer_lines,
)

__all__ = ["STYLES", "ROLES", "render_objects", "headline", "render_pair", "render_summary", "render_check"]


def _text(spans) -> Text:
    """Spans (text, style) as one Text: the first span's style is the Text's own."""
    (first, style), *rest = spans
    text = Text(first, style=style)
    for part, part_style in rest:
        text.append(part, style=part_style or None)
    return text


def render_objects(objects) -> Table:
    """The objects side by side: one column per object, one row per property."""
    table = Table(title="Objects", title_justify="left", show_edge=False, pad_edge=False, show_header=True)
    table.add_column("")
    headers, rows = objects_rows(objects)
    for head in headers:
        table.add_column(Text(head), overflow="fold")
    for label, cells in rows:
        table.add_row(Text(label, style="dim"), *(_text(cell) for cell in cells))
    return table


def headline(pair: Finding, units: str | None = None, what: str = "parts") -> Text:
    """The verdict in one coloured line: the status word and what it means in numbers."""
    return _text(headline_spans(pair, units, what))


def render_pair(pair: Finding, a: ObjectRecord | None = None, b: ObjectRecord | None = None) -> Panel:
    """One pair's verdict as a panel framed in the verdict's colour."""
    title, border, rows = pair_rows(pair, a, b)
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="dim", no_wrap=True)
    grid.add_column(overflow="fold")
    for label, spans in rows:
        grid.add_row(Text(label), _text(spans))
    return Panel(grid, title=Text(title, style="bold"), title_align="left", border_style=border,
                 expand=False)


def render_summary(check: Findings) -> Text:
    return _text(summary_spans(check))


def render_check(check: Findings) -> Group:
    """The whole report: objects, a panel per pair, a summary line."""
    parts = []
    if check.objects:
        parts.append(render_objects(check.objects))
        parts.append(Text(""))
    for pair in check.pairs:
        parts.append(render_pair(pair, check.object(pair.a), check.object(pair.b)))
    for line, style in trailer_lines(check):
        parts.append(Text(line, style=style))
    parts.append(render_summary(check))
    return Group(*parts)
