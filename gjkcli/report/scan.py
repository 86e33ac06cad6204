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

from gjkcli.engine.results import Status
from gjkcli.report.numbers import timed

__all__ = ["render_scan", "render_summary", "progress_callback", "wants_progress"]

STYLES = {
    Status.CLEAR: "green",
    Status.TOUCHING: "yellow",
    Status.COLLISION: "bold red",
    Status.CLEARANCE: "magenta",
    Status.UNDECIDED: "dark_orange",
}

STAGES = {"load": "loading", "read": "reading a large file", "mesh": "meshing IFC elements",
          "tessellate": "tessellating STEP solids", "hulls": "building hulls",
          "narrow": "checking pairs", "refine": "refining non-convex pairs"}
# Stages counted in bytes (gjkcli.scene.watch): their bar shows sizes, not counts.
BYTE_STAGES = frozenset({"read"})


def _bytes_count(done: int, total: int) -> str:
    return f"{done / 2**20:,.1f}/{total / 2**20:,.1f} MiB"


def _duration(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} us"
    if seconds < 1.0:
        return f"{seconds * 1e3:.0f} ms"
    return f"{seconds:.2f} s"


def _fmt(x) -> str:
    return "-" if x is None else f"{x + 0.0:.6g}"  # + 0.0: -0.0 reads 0


def render_pairs(report, limit: int | None = None) -> Table:
    """The listed pairs as a table, in the report's order (most severe first)."""
    table = Table(title="Findings" if not report.all_pairs else "Pairs", title_justify="left",
                  show_edge=False, pad_edge=False)
    table.add_column("status", no_wrap=True)
    table.add_column("object A", overflow="fold")
    table.add_column("object B", overflow="fold")
    units = getattr(report, "units", None)
    table.add_column(f"depth / gap ({units})" if units else "depth / gap", justify="right",
                     no_wrap=True)
    listed = getattr(report, "listed", report.pairs)
    shown = listed if limit is None else listed[:limit]
    volumes = any(p.overlap_volume is not None or p.overlap_reason for p in shown)
    if volumes:
        table.add_column("overlap vol.", justify="right", no_wrap=True)
    sets = any(p.clash_set is not None for p in shown)
    if sets:
        table.add_column("clash set", overflow="fold")
    grouped = any(p.group is not None for p in shown)
    if grouped:
        table.add_column("group", justify="right", no_wrap=True)
    table.add_column("note", overflow="fold")
    for p in shown:
        status = Status(p.status)
        r = p.result
        if status is Status.COLLISION:
            size = _fmt(r.depth)
        elif status is Status.TOUCHING:
            size = _fmt(r.signed_distance)
        elif status is Status.UNDECIDED and p.distance_lower is not None \
                and p.distance_upper is not None:  # the tessellation's bounds
            size = f"{_fmt(p.distance_lower)} .. {_fmt(p.distance_upper)}"
        else:
            size = _fmt(r.distance)
        notes = pair_notes(p, _fmt)
        muted = p.allowed or (p.known and p.violation)
        cells = [Text(status.value, style="dim" if muted else STYLES[status]), Text(p.a), Text(p.b),
                 Text(size)]
        if volumes:
            cells.append(Text(_fmt(p.overlap_volume)))
        if sets:
            cells.append(Text(p.clash_set or ""))
        if grouped:
            cells.append(Text(str(p.group) if p.group is not None else ""))
        table.add_row(*cells, Text("; ".join(notes)), style="dim" if muted else None)
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
    n = len(report.objects)
    text = Text(f"{n} object{'s' if n != 1 else ''}, {report.checked} pair"
                f"{'s' if report.checked != 1 else ''} checked")
    found = [f"{report.counts.get(s.value, 0)} {s.value}" for s in
             (Status.COLLISION, Status.UNDECIDED, Status.TOUCHING, Status.CLEARANCE)
             if report.counts.get(s.value, 0)]
    if found:
        text.append(": " + ", ".join(found))
    failing = len(report.failures)
    allowed = sum(1 for p in report.pairs if p.allowed and p.violation)
    known = sum(1 for p in report.pairs if p.known and p.violation and not p.allowed)
    code = report.exit_code
    style = "green" if code == 0 else "red"
    if report.baseline_written is not None:  # today's findings recorded: nothing fails (exit 0)
        recorded = sum(1 for p in report.pairs if p.violation and not p.allowed)
        text.append(f"; {recorded} finding{'s' if recorded != 1 else ''} recorded in the baseline",
                    style=style)
    else:
        text.append(f"; {failing} failing", style=style)
    extra = []
    unlisted = getattr(report, "unlisted", 0)
    if allowed or unlisted:
        extra.append(f"{allowed} allowed" + (", not listed: --show-allowed lists them" if unlisted else ""))
    if known:
        extra.append(f"{known} in the baseline")
    if report.gone:
        extra.append(f"{len(report.gone)} gone from the baseline")
    if report.errors:
        extra.append(f"{len(report.errors)} file error{'s' if len(report.errors) != 1 else ''}")
    unchecked = len(getattr(report, "unchecked", ()))
    if unchecked:
        extra.insert(0, f"{unchecked} not checked")
    if extra:
        text.append(" (" + ", ".join(extra) + ")")
    text.append(f"; exit {code}", style=style)
    text.append(f"  ({timed(report, _duration)})", style="dim")
    return text


def render_scan(report, limit: int | None = None, errors: bool = True) -> Group:
    """The whole report: errors, notes, findings, baseline entries gone, the summary line.

    limit : show at most this many pairs (the summary still counts them all).
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


def pair_notes(p, fmt) -> list[str]:
    """The notes of a finding's row, the same in the terminal table and the HTML page: where on a
    motion, allowed or known, answered on the hulls, the clearance, why no overlap volume."""
    notes = []
    if p.segment is not None:
        notes.append(f"motion {p.segment}->{p.segment + 1}" + (f" at t={p.t:.4f}" if p.t is not None else ""))
    elif p.waypoint is not None:
        notes.append(f"waypoint {p.waypoint}")
    if getattr(p, "time_from_start", None) is not None:
        notes[-1] += f" ({p.time_from_start:.3f} s)"
    if p.allowed:
        notes.append(f"allowed: {p.reason}")
    elif p.known and p.violation:
        notes.append("in the baseline")
    if p.conservative:
        notes.append("hulls (a part is not convex)")
    if Status(p.status) is Status.CLEARANCE:
        notes.append(f"{fmt(p.clearance)} required")
    if p.overlap_reason:
        notes.append(f"no overlap volume: {p.overlap_reason}")
    return notes
