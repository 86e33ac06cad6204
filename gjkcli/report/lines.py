"""The report for a log: one finding per line with whole names (as ruff's concise output), and
the findings table laid out in plain text to a width (`--format table` through a pipe).

Findings in, lines out; each line a list of spans `(text, style)` (style "" for none), so that
the command can print them plain, or through rich in colour when colour is forced
(`FORCE_COLOR`, `--color always`). No rich here: a log pays no import for it.

- `concise_lines`: the input errors, the notes, a line per listed finding (`A x B: status:
  numbers [notes]`), the baseline entries gone, the summary. `verbose` adds each finding's
  detail (the rows of `gjk check`'s panel) under its line, indented.
- `table_lines`: the findings table as `gjk scan` shows it on a terminal, in plain characters
  (no box drawing), its columns separated by two spaces: a name is never broken (a line holding
  a longer name than the width allows is longer than the width); the notes wrap between words
  within what the width leaves, or go under the row when it leaves them too little.
- `pair_cells`, `pair_notes`: the table's words, which the terminal's table
  (`gjkcli.report.scan.render_pairs`) and the HTML page read too.
- `summary_spans`: the summary line of a scan, the same words as the terminal's.
"""
from __future__ import annotations

from gjkcli.engine.results import Status
from gjkcli.pipeline.findings import notable
from gjkcli.report.ci import describe
from gjkcli.report.numbers import fmt, timed

__all__ = ["STYLES", "worlds_text", "concise_lines", "table_lines", "summary_spans", "pair_notes", "pair_cells",
           "plain"]

STYLES = {
    Status.CLEAR: "green",
    Status.TOUCHING: "yellow",
    Status.COLLISION: "bold red",
    Status.CLEARANCE: "magenta",
    Status.UNDECIDED: "dark_orange",
}


def plain(lines) -> str:
    """Lines of spans as plain text, each line without trailing spaces."""
    return "".join("".join(t for t, _ in spans).rstrip() + "\n" for spans in lines)


def pair_notes(p, fmt=fmt) -> list[str]:
    """The notes of a finding's row, the same in the terminal table, the log and the HTML page:
    where on a motion, allowed or known, answered on the hulls, the clearance, why no overlap
    volume."""
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


def _size(p) -> str:
    """The table's "depth / gap" cell."""
    status, r = Status(p.status), p.result
    if status is Status.COLLISION:
        return fmt(r.depth)
    if status is Status.TOUCHING:
        return fmt(r.signed_distance)
    if status is Status.UNDECIDED and p.distance_lower is not None and p.distance_upper is not None:
        return f"{fmt(p.distance_lower)} .. {fmt(p.distance_upper)}"  # the tessellation's bounds
    return fmt(r.distance)


def pair_cells(report, shown) -> tuple:
    """(headers, right-aligned flags, rows) of the findings table over the pairs `shown`; a row
    is (muted, cells), each cell a (text, style) span."""
    units = getattr(report, "units", None)
    volumes = any(p.overlap_volume is not None or p.overlap_reason for p in shown)
    sets = any(p.clash_set is not None for p in shown)
    grouped = any(p.group is not None for p in shown)
    headers = ["status", "object A", "object B", f"depth / gap ({units})" if units else "depth / gap"]
    right = [False, False, False, True]
    if volumes:
        headers.append("overlap vol.")
        right.append(True)
    if sets:
        headers.append("clash set")
        right.append(False)
    if grouped:
        headers.append("group")
        right.append(True)
    headers.append("note")
    right.append(False)
    rows = []
    for p in shown:
        status = Status(p.status)
        muted = bool(p.allowed or (p.known and p.violation))
        cells = [(status.value, "dim" if muted else STYLES[status]), (p.a, ""), (p.b, ""), (_size(p), "")]
        if volumes:
            cells.append((fmt(p.overlap_volume), ""))
        if sets:
            cells.append((p.clash_set or "", ""))
        if grouped:
            cells.append((str(p.group) if p.group is not None else "", ""))
        cells.append(("; ".join(pair_notes(p)), ""))
        rows.append((muted, cells))
    return headers, right, rows


def summary_spans(report) -> list:
    """The summary of a scan: objects, pairs checked, findings by status, failures (or the
    findings a baseline recorded), what was allowed or known, the exit code, the time and what
    it timed."""
    n = len(report.objects)
    head = (f"{n} object{'s' if n != 1 else ''}, {report.checked} pair"
            f"{'s' if report.checked != 1 else ''} checked") + worlds_text(report)
    # the undecided count always (issue 40: how many pairs no certificate settled, even none)
    found = [f"{report.counts.get(s.value, 0)} {s.value}" for s in
             (Status.COLLISION, Status.UNDECIDED, Status.TOUCHING, Status.CLEARANCE)
             if report.counts.get(s.value, 0) or s is Status.UNDECIDED]
    if found:
        head += ": " + ", ".join(found)
    spans = [(head, "")]
    allowed = len(report.allowed)  # the pairs a listing leaves out, violations or not
    known = sum(1 for p in notable(report.pairs) if p.known and p.violation and not p.allowed)
    code = report.exit_code
    style = "green" if code == 0 else "red"
    if report.baseline_written is not None:  # today's findings recorded: nothing fails (exit 0)
        recorded = sum(1 for p in report.pairs if p.violation and not p.allowed)
        spans.append((f"; {recorded} finding{'s' if recorded != 1 else ''} recorded in the baseline", style))
    else:
        spans.append((f"; {report.failure_count} failing", style))
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
        spans.append((" (" + ", ".join(extra) + ")", ""))
    spans.append((f"; exit {code}", style))
    spans.append((f"  ({timed(report)})", "dim"))
    return spans


def worlds_text(report) -> str:
    """How a scan of several files paired their objects, for the summary: "" for a check or a
    scan of one file."""
    together = getattr(report, "together", None)
    if together is None:
        return ""
    return " (the files together)" if together else " (each file by itself; --together pairs them)"


def _detail(report, p) -> list:
    """A finding's detail lines (the rows of `gjk check`'s panel), indented."""
    from gjkcli.report.checktext import pair_rows

    _, _, rows = pair_rows(p, report.object(p.a), report.object(p.b))
    width = max(len(label) for label, _ in rows)
    return [[("    " + label.ljust(width) + "  ", "dim"), *spans] for label, spans in rows]


def _group_lines(report) -> list:
    """The groups of clashes at one place (`gjkcli.pipeline.grouping`), a line each: number,
    clash set, how many pairs, where, the elements (the first few); none when the run did not
    group."""
    from gjkcli.pipeline.groups import groups

    found = groups(report.pairs)
    if not found:
        return []
    lines = [[(f"{len(found)} groups of clashes at one place:", "bold")]]
    for g in found:
        more = f" and {len(g.elements) - 4} more" if len(g.elements) > 4 else ""
        where = ", ".join(fmt(x) for x in g.centre)
        lines.append([(f"  group {g.number}: ", "bold"),
                      (f"clash set {g.clash_set}, " if g.clash_set else "", ""),
                      (f"{len(g.pairs)} pair{'s' if len(g.pairs) != 1 else ''} at ({where}): "
                       f"{'; '.join(g.elements[:4])}{more}", "")])
    return lines


def concise_lines(report, *, verbose: int = 0, errors: bool = True,
                  table: int | None = None, limit: int | None = None) -> list:
    """The report for a log, one finding per line (every listed one), as lines of spans.

    errors : list the input errors (False where stderr has them already)
    verbose : 1 or more: each finding's detail under its line
    table : the findings as a table this many columns wide (`table_lines`) instead of a line
        each, at most `limit` rows of them (None: all)
    """
    lines = []
    if errors:
        lines += [[(f"error: {e.file}: {e.message}", "bold red")] for e in report.errors]
    failing_notes = {str(u) for u in getattr(report, "unchecked", ())}
    lines += [[(note, "bold red" if note in failing_notes else "")] for note in report.notes]
    listed = getattr(report, "listed", report.pairs)
    lines += _group_lines(report)
    if table is not None and listed:
        lines += table_lines(report, table, limit)
        if limit is not None and len(listed) > limit:
            lines.append([(f"... and {len(listed) - limit} more (--all-pairs or a machine format "
                           f"lists them all)", "dim")])
        for p in listed[:limit] if verbose else ():  # each row's detail, after the table
            lines += [[(f"{p.a} x {p.b}", "bold")], *_detail(report, p)]
    for p in listed if table is None else ():
        status = Status(p.status)
        muted = p.allowed or (p.known and p.violation)
        words = describe(p, report.units)
        word, sep, rest = words.partition(":")
        line = [(f"{p.a} x {p.b}: ", "dim" if muted else ""),
                (word, "dim" if muted else STYLES[status]), (sep + rest, "dim" if muted else "")]
        # describe says what the clearance and the hulls' notes say
        notes = [n for n in pair_notes(p) if not (n.endswith(" required") or n.startswith("hulls ("))]
        if p.overlap_volume is not None:
            notes.insert(0, f"overlap volume {fmt(p.overlap_volume)}")
        if p.clash_set is not None:
            notes.append(f"clash set {p.clash_set}")
        if p.group is not None:
            notes.append(f"group {p.group}")
        if notes:
            line.append((" [" + "; ".join(notes) + "]", "dim"))
        lines.append(line)
        if verbose:
            lines += _detail(report, p)
    if not listed and report.pairs:
        lines.append([("no findings but allowed ones (--show-allowed lists them)", "green")])
    elif not listed and report.checked and not report.errors:
        lines.append([("no findings: every checked pair is clear", "green")])
    for e in report.gone:
        lines.append([(f"gone from the baseline: {e.a} x {e.b} ({e.status}, {e.file})", "cyan")])
    if report.baseline_written:
        lines.append([(f"baseline written to {report.baseline_written}", "dim")])
    lines.append(summary_spans(report))
    return lines


# The narrowest the table's note column gets beside the row; narrower, the notes go under it.
NOTE_WIDTH = 20


def _wrapped(text: str, width: int) -> list:
    """`text` broken between words into lines of at most `width` (a longer word whole)."""
    import textwrap

    return textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False) or [""]


def table_lines(report, width: int, limit: int | None = None) -> list:
    """The findings table in plain characters, `width` columns wide where its names allow: lines
    of spans, the title first. Names are whole; the note column wraps between words, or, where
    the width leaves it less than NOTE_WIDTH, the notes go on lines of their own under the row."""
    listed = getattr(report, "listed", report.pairs)
    shown = listed if limit is None else listed[:limit]
    headers, right, rows = pair_cells(report, shown)
    sep = "  "
    natural = [max([len(h)] + [len(cells[k][0]) for _, cells in rows]) for k, h in enumerate(headers)]
    fixed = sum(natural[:-1]) + len(sep) * (len(headers) - 1)
    room = width - fixed
    beside = room >= min(NOTE_WIDTH, natural[-1])  # the notes in their column, else under the row
    if beside:
        natural[-1] = min(natural[-1], room)
    else:
        headers, right, natural = headers[:-1], right[:-1], natural[:-1]

    def cell(k, text):
        return text.rjust(natural[k]) if right[k] else text.ljust(natural[k])

    out = [[("Pairs" if report.all_pairs else "Findings", "")]]
    out.append([(sep.join(cell(k, h) for k, h in enumerate(headers)), "bold")])
    out.append([(sep.join("-" * w for w in natural), "")])
    for muted, cells in rows:
        dim = "dim" if muted else ""
        note = cells[-1][0]
        line = []
        for k, (text, style) in enumerate(cells[:-1]):
            if k:
                line.append((sep, ""))
            line.append((cell(k, text), "dim" if muted and k else style))
        if beside:
            notes = _wrapped(note, natural[-1])
            line += [(sep, ""), (notes[0], dim)]
            out.append(line)
            out += [[(" " * fixed + more, dim)] for more in notes[1:]]
        else:  # the notes too wide to sit beside the row: under it, indented
            out.append(line)
            if note:
                out += [[("    " + more, dim)] for more in _wrapped(note, max(width - 4, NOTE_WIDTH))]
    return out
