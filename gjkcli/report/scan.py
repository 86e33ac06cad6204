"""The human report of a scan: findings most severe first, a summary line. Rich renderables.

`render_scan(report)` returns a rich Group and never prints; the command prints it. Allowed pairs
and baseline pairs are dimmed with their reason. User data (file and object names) goes in as
`Text`, never as markup, so an object called ``bolt[2]`` prints as itself.

`progress_callback` gives the command a `gjkcli.pipeline.run.scan(progress=...)` callback drawing a bar on a
(stderr) console; `wants_progress` says when there should be one: a terminal, not --quiet, the
table format.
"""
from __future__ import annotations

from contextlib import contextmanager

from rich.console import Group
from rich.table import Table
from rich.text import Text

from gjkcli.report.lines import pair_cells, summary_spans

__all__ = ["render_scan", "render_summary", "progress_callback", "wants_progress"]

STAGES = {"load": "loading", "read": "reading a large file", "mesh": "meshing IFC elements",
          "tessellate": "tessellating STEP solids", "hulls": "building hulls",
          "narrow": "checking pairs", "answers": "fetching the hulls' answers",
          "refine": "refining non-convex pairs",
          "pictures": "fetching the pictures' parts"}
# Stages counted in bytes (gjkcli.scene.watch): their bar shows sizes, not counts.
BYTE_STAGES = frozenset({"read"})


def _bytes_count(done: int, total: int) -> str:
    return f"{done / 2**20:,.1f}/{total / 2**20:,.1f} MiB"


def _fmt(x) -> str:
    return "-" if x is None else f"{x + 0.0:.6g}"  # + 0.0: -0.0 reads 0


def render_pairs(report, limit: int | None = None) -> Table:
    """The listed pairs as a table, in the report's order (most severe first); the words are
    `gjkcli.report.lines.pair_cells`'."""
    table = Table(title="Findings" if not report.all_pairs else "Pairs", title_justify="left",
                  show_edge=False, pad_edge=False)
    listed = getattr(report, "listed", report.pairs)
    headers, right, rows = pair_cells(report, listed if limit is None else listed[:limit])
    names = {"object A", "object B", "clash set", "note"}
    for head, flush_right in zip(headers, right):
        table.add_column(head, justify="right" if flush_right else "left",
                         **({"overflow": "fold"} if head in names else {"no_wrap": True}))
    for muted, cells in rows:
        table.add_row(*(Text(text, style=style or "") for text, style in cells), style="dim" if muted else None)
    return table


def render_groups(report, limit: int | None = None) -> Table | None:
    """The groups of clashes at one place (`gjkcli.pipeline.grouping`), None when the run did
    not group: number, clash set, how many pairs, the elements (the first few), the centre."""
    from gjkcli.pipeline.groups import groups

    found = groups(report.pairs)
    if not found:
        return None
    table = Table(title=f"{len(found)} groups of clashes at one place", title_justify="left",
                  show_edge=False, pad_edge=False)
    for name, justify in (("group", "right"), ("clash set", "left"), ("pairs", "right"),
                          ("elements", "left"), ("centre", "left")):
        table.add_column(name, justify=justify, overflow="fold")
    for g in found if limit is None else found[:limit]:
        more = f" and {len(g.elements) - 4} more" if len(g.elements) > 4 else ""
        table.add_row(Text(str(g.number)), Text(g.clash_set or ""), Text(str(len(g.pairs))),
                      Text("; ".join(g.elements[:4]) + more), Text(", ".join(_fmt(x) for x in g.centre)))
    return table


def render_summary(report) -> Text:
    """One line: objects, pairs checked, findings by status, failures, exit code, time."""
    text = Text()
    for part, style in summary_spans(report):
        text.append(part, style=style or None)
    return text


def render_scan(report, limit: int | None = None, errors: bool = True, details: bool = False) -> Group:
    """The whole report: errors, notes, findings, baseline entries gone, the summary line.

    limit : show at most this many pairs (the summary still counts them all).
    details : after the table, each shown pair's panel as `gjk check` draws it (-v).
    errors : list the input errors (first: the reason before what it led to); False where they
        are on stderr already (the command's table on stdout), the summary still counts them.
    """
    parts = []
    if errors:
        for e in report.errors:
            parts.append(Text(f"error: {e.file}: {e.message}", style="bold red"))
    failing_notes = {str(u) for u in getattr(report, "unchecked", ())}
    for note in report.notes:
        parts.append(Text(note, style="bold red" if note in failing_notes else
                          "bold" if "no pairs" in note or "nothing" in note else "dim"))
    listed = getattr(report, "listed", report.pairs)
    if listed:
        groups = render_groups(report, limit)
        if groups is not None:
            parts.append(groups)
        parts.append(render_pairs(report, limit))
        if details:
            from gjkcli.report.table import render_pair

            parts += [render_pair(p, report.object(p.a), report.object(p.b))
                      for p in (listed if limit is None else listed[:limit])]
        if limit is not None and len(listed) > limit:
            parts.append(Text(f"... and {len(listed) - limit} more (--all-pairs or a machine format lists them all)",
                              style="dim"))
    elif report.pairs:
        parts.append(Text("no findings but allowed ones (--show-allowed lists them)", style="green"))
    elif report.checked and not report.errors:
        parts.append(Text("no findings: every checked pair is clear", style="green"))
    for e in report.gone:
        parts.append(Text(f"gone from the baseline: {e.a} x {e.b} ({e.status}, {e.file})", style="cyan"))
    if report.baseline_written:
        parts.append(Text(f"baseline written to {report.baseline_written}", style="dim"))
    parts.append(render_summary(report))
    return Group(*parts)


def wants_progress(*, quiet: bool, output_format: str, stream) -> bool:
    """A progress bar whenever `stream` (stderr, where the bar goes) is a terminal, whatever
    the report's format and wherever it goes (`--format json -o FILE`, a pipe); never with
    --quiet."""
    isatty = getattr(stream, "isatty", None)
    return not quiet and bool(isatty and isatty())


@contextmanager
def progress_callback(console, delay: float = 0.5):
    """A `gjkcli.pipeline.run.scan(progress=...)` callback drawing a bar per stage on `console` (stderr).

    The bar appears only once the scan has run for `delay` seconds, so short scans print nothing,
    and it is cleared when the scan ends.
    """
    import time

    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.fields[count]}"),
                   TimeElapsedColumn(), console=console, transient=True)
    tasks: dict[str, int] = {}
    started = time.monotonic()
    shown = False

    def update(stage: str, done: int, total: int) -> None:
        nonlocal shown
        if total <= 0:  # a stage with no work has no bar (never one stuck at 0/1)
            if stage in tasks:
                bar.remove_task(tasks.pop(stage))
            return
        count = _bytes_count(done, total) if stage in BYTE_STAGES else f"{done:,}/{total:,}"
        if stage not in tasks:
            tasks[stage] = bar.add_task(STAGES.get(stage, stage), total=total, count=count)
        bar.update(tasks[stage], completed=done, total=total, count=count)
        if not shown and time.monotonic() - started >= delay:
            bar.start()
            shown = True

    try:
        yield update
    finally:
        if shown:
            bar.stop()
