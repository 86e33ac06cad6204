"""What `gjk check`'s human report says, as data, and that report as plain text without rich.

The report (`gjkcli.report.table`) is rich renderables: a table of the objects, a panel per pair,
a summary line. Their words and styles come from here, as rows of spans `(text, style)` (style ""
for none), so that the same words can be laid out two ways:

- by rich (`gjkcli.report.table`), on a terminal, with colours;
- by `plain_check` for a file or a pipe, where styles are dropped: the same characters rich's
  layout gives (its column widths, line breaks and folds), without importing rich. It lays out
  only what it can lay out exactly as rich does (printable ASCII, a title that fits its panel,
  labels rich would not cut) and says None otherwise, and the caller uses rich.
  tests/report/test_checktext.py holds it to rich's output.
"""
from __future__ import annotations

import re

from gjkcli.engine.results import Status
from gjkcli.pipeline.findings import Finding, Findings, ObjectRecord, hull_note, pair_note
from gjkcli.report.numbers import fmt, timed, vec

STYLES = {
    Status.CLEAR: "bold green",
    Status.TOUCHING: "bold yellow",
    Status.COLLISION: "bold red",
    Status.CLEARANCE: "bold magenta",
    Status.UNDECIDED: "bold dark_orange",
}

ROLES = "AB"


def _yes(flag: bool | None, yes_style: str = "green", no_style: str = "yellow") -> list:
    if flag is None:
        return [("not measured", "dim")]
    return [("yes", yes_style)] if flag else [("no", no_style)]


def _convex(o: ObjectRecord) -> list:
    spans = _yes(o.convex)
    if o.convexity and not o.convex:
        spans.append((f" ({o.convexity})", "dim"))
    return spans


def _units(units: str | None) -> str:
    return f" {units}" if units else ""


def _dimension(o: ObjectRecord) -> str:
    return {3: "", 2: " (flat: the hull is a polygon)", 1: " (a segment)", 0: " (a single point)"}.get(o.dimension, "")


def objects_rows(objects) -> tuple[list, list]:
    """(headers, rows) of the objects side by side: a header per object ("A: name"), and rows
    (label, [spans per object])."""
    headers = [f"{ROLES[k] if k < len(ROLES) and len(objects) <= len(ROLES) else str(k + 1)}: {o.name}"
               for k, o in enumerate(objects)]
    rows = []

    def row(label: str, cells):
        rows.append((label, cells))

    row("file", [[(o.file, "")] for o in objects])
    # 2D drawings' parts (gjkcli.pipeline.flat) have outlines, no triangles and no hull
    drawing = all(o.dimension == 2 and o.faces == 0 and o.hull_vertices == 0 for o in objects)
    if drawing:
        row("vertices", [[(f"{o.vertices} (outline points, 2D)", "")] for o in objects])
    else:
        row("vertices", [[(f"{o.vertices} ({o.faces} faces)", "")] for o in objects])
        row("hull vertices", [[(str(o.hull_vertices) + _dimension(o), "")] for o in objects])
        row("convex", [_convex(o) for o in objects])
        row("watertight", [_yes(o.watertight) for o in objects])
    if any(o.bodies not in (1, None) for o in objects):
        row("bodies", [[(str(o.bodies), "")] for o in objects])
    row("bounds min", [[(vec(o.bounds[0]), "")] for o in objects])
    row("bounds max", [[(vec(o.bounds[1]), "")] for o in objects])
    row("size", [[(" x ".join(fmt(hi - lo) for lo, hi in zip(o.bounds[0], o.bounds[1])) + _units(o.units), "")]
                 for o in objects])
    if any(o.units for o in objects):
        row("units", [[(o.units or "not stated", "")] for o in objects])
    return headers, rows


def headline_spans(pair: Finding, units: str | None = None, what: str = "parts") -> list:
    """The verdict in one line: the status word (in its style) and what it means in numbers."""
    r = pair.result
    status = Status(r.status)
    u = _units(units)
    if status is Status.CLEAR:
        rest = f"the {what} are {fmt(r.distance)}{u} apart"
    elif status is Status.TOUCHING:
        gap = r.signed_distance
        band = f" (gap {fmt(gap)}{u}, within the touching band +-{fmt(r.tolerance)}{u})"
        rest = f"the {what} touch{band}"
    elif status is Status.COLLISION:
        rest = f"the {what} overlap by {fmt(r.depth)}{u}" if r.depth is not None else f"the {what} overlap"
    elif status is Status.CLEARANCE:
        rest = f"the {what} are {fmt(r.distance)}{u} apart, closer than the required {fmt(pair.clearance)}{u}"
    elif pair.distance_lower is not None and pair.distance_upper is not None:
        rest = (f"the tessellation's error allows either verdict: the true distance lies in "
                f"[{fmt(pair.distance_lower)}, {fmt(pair.distance_upper)}]{u}")
    else:
        rest = f"the query could not decide: the distance lies in [{fmt(r.distance_lower)}, {fmt(r.distance)}]{u}"
    return [(status.value.upper(), STYLES[status]), ("  " + rest, "")]


def _certificate(cert, of_hulls: bool) -> str | None:
    kind = getattr(cert, "kind", None)
    whose = "hulls" if of_hulls else "parts"
    if kind == "plane":
        return (f"separating plane n.x = {fmt(cert.offset, 9)}, n = {vec(cert.normal)}: "
                f"A lies on the side n.x <= c, B on the side n.x >= c ({whose})")
    if kind == "point":
        return f"a point of both {whose}: {vec(cert.point)}"
    if kind == "triangles":
        return f"triangle {cert.a} of A crosses triangle {cert.b} of B at {vec(cert.point)}"
    if kind == "distance":
        return (f"no triangle of A comes closer than {fmt(cert.lower, 9)} to a triangle of B, "
                f"and neither part is inside the other")
    if kind == "shift":
        return (f"moving B by {vec(cert.shift)} leaves the parts' volumes apart: "
                f"depth at most {fmt(cert.upper, 9)}")
    return None


def pair_rows(pair: Finding, a: ObjectRecord | None = None, b: ObjectRecord | None = None) -> tuple:
    """(title, border style, rows (label, spans)) of one pair's verdict panel."""
    r = pair.result
    status = Status(r.status)
    units = (a.units if a else None) or (b.units if b else None)
    u = _units(units)
    hulls_only = hull_note(pair, a, b) is not None
    note = pair_note(pair, a, b)
    rows = []

    def row(label: str, text: str, style: str = ""):
        rows.append((label, [(text, style)]))

    rows.append(("verdict", headline_spans(pair, units, what="hulls" if hulls_only else "parts")))
    if note:
        row(f"{pair.mode} mode", note, "yellow")
    if pair.tessellation is not None:  # tessellated CAD parts: the bounds of the true solids'
        if pair.mode == "brep" and pair.distance_lower is not None:
            bounds = f"exact on the solids (the triangles lie within {fmt(pair.tessellation, 9)}{u})"
        elif pair.distance_lower is not None and pair.distance_upper is not None:
            bounds = (f"the true solids' distance lies in [{fmt(pair.distance_lower, 9)}, "
                      f"{fmt(pair.distance_upper, 9)}]{u} (tessellation error {fmt(pair.tessellation, 9)}{u})")
        elif pair.distance_lower is not None:
            bounds = (f"the true solids are at least {fmt(max(pair.distance_lower, 0.0), 9)}{u} "
                      f"apart (tessellation error {fmt(pair.tessellation, 9)}{u})")
        else:
            bounds = f"the triangles lie within {fmt(pair.tessellation, 9)}{u} of the true surfaces"
        row("solids", bounds)
    if status in (Status.CLEAR, Status.CLEARANCE, Status.UNDECIDED):
        row("distance", f"{fmt(r.distance, 9)}{u} (certified at least {fmt(r.distance_lower, 9)}{u})")
    if status is Status.COLLISION and r.depth is not None:
        row("depth", f"{fmt(r.depth, 9)}{u}: moving B by this along the normal separates them")
    if pair.overlap_volume is not None:
        cubed = f" {units}^3" if units else " (model units cubed)"
        how = "OpenCASCADE, on the exact solids" if pair.mode == "brep" else "manifold3d, on the parts"
        # a mesh boolean's volume, not a certified length: 6 digits as in the findings table
        row("overlap", f"{fmt(pair.overlap_volume)}{cubed}: the volume both parts occupy ({how})")
    elif pair.overlap_reason:
        row("overlap", f"no volume: {pair.overlap_reason}", "dim")
    row("normal", f"{vec(r.normal)} (from A towards B)")
    if status is Status.COLLISION:
        row("witness A", f"{vec(r.point_a)} (deepest point of A inside B)")
        row("witness B", f"{vec(r.point_b)} (deepest point of B inside A)")
    else:
        row("witness A", f"{vec(r.point_a)} (closest point on A)")
        row("witness B", f"{vec(r.point_b)} (closest point on B)")
    cert = _certificate(r.certificate, pair.conservative)
    if cert is not None:
        row("certificate", cert)
    row("tolerance", f"touching band +-{fmt(r.tolerance)}{u}")
    if pair.clearance is not None:
        row("clearance", f"required {fmt(pair.clearance)}{u}")
    mode = pair.mode if pair.requested == pair.mode else f"{pair.mode} ({pair.requested})"
    row("mode", mode)
    if pair.mode == "exact":  # the triangle test counts the bounding-box pairs it visited
        row("work", f"{r.iterations} box pairs visited ({r.exit})")
    else:
        iters = f"GJK {r.iterations} ({r.exit})"
        if r.epa_iterations or r.epa_exit:
            iters += f", EPA {r.epa_iterations} ({r.epa_exit})"
        row("iterations", iters)
    if r.elapsed > 0:  # a pair answered in a batch (the hulls' call) has no time of its own
        row("time", duration(r.elapsed))
    return f"{pair.a}  x  {pair.b}", STYLES[status].replace("bold ", ""), rows


def duration(seconds: float) -> str:
    seconds = float(seconds or 0.0)
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} us"
    if seconds < 1.0:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.2f} s"


def summary_spans(check: Findings) -> list:
    counts = check.counts
    # the undecided count always (issue 40), after the others
    parts = [f"{n} {name}" for name, n in counts.items() if n and name != Status.UNDECIDED.value]
    parts.append(f"{counts.get(Status.UNDECIDED.value, 0)} {Status.UNDECIDED.value}")
    head = f"{len(check.pairs)} pair{'s' if len(check.pairs) != 1 else ''}"
    if parts:
        head += ": " + ", ".join(parts)
    failing = check.failure_count  # the word and the count `gjk scan` uses
    code = check.exit_code
    style = "green" if code == 0 else "red"
    return [(head, ""), (f"; {failing} failing", style), (f"; exit {code}", style),
            (f"  ({timed(check)})", "dim")]


def trailer_lines(check: Findings) -> list:
    """(text, style) of the lines after the panels: input errors, notes."""
    return [(f"error: {e.file}: {e.message}", "bold red") for e in check.errors] + \
        [(note, "yellow") for note in check.notes]


# ---- plain text, laid out as rich lays out the renderables of gjkcli.report.table -------------

# A word as rich's line breaking reads it (rich._wrap): leading spaces, the word, trailing spaces.
_WORD = re.compile(r"\s*\S+\s*")


def _plain(s: str) -> bool:
    """Printable ASCII: one character, one cell, nothing a layout treats apart."""
    return s.isascii() and s.isprintable()


def _wrapped(text: str, width: int) -> list:
    """`text` in lines of `width` cells (padded), as rich breaks a cell's text (rich._wrap's
    divide_line): greedy, between words; a word longer than a line folded into pieces."""
    breaks, offset = [], 0
    for m in _WORD.finditer(text):
        start, word = m.start(), m.group(0)
        length = len(word.rstrip())
        if width - offset >= length:
            offset += len(word)
        elif length > width:  # folded: a piece per line
            pieces = [word[k:k + width] for k in range(0, len(word), width)]
            for k, piece in enumerate(pieces):
                if start:
                    breaks.append(start)
                if k == len(pieces) - 1:
                    offset = len(piece)
                else:
                    start += len(piece)
        elif offset and start:
            breaks.append(start)
            offset = len(word)
    bounds = [0, *breaks, len(text)]
    return [text[s:e].ljust(width)[:width] for s, e in zip(bounds, bounds[1:])]


def _collapsed(widths: list, most: int) -> list:
    """Column widths brought within `most` as rich's Table does (Table._collapse_widths): the
    widest columns narrowed together, down to the next widest, until they fit."""
    widths = list(widths)
    excess = sum(widths) - most
    while excess > 0:
        widest = max(widths)
        second = max((w for w in widths if w != widest), default=0)
        if widest == second:
            break
        ratios = [int(w == widest) for w in widths]
        # rich._ratio.ratio_reduce: the excess shared by the widest, each by at most the step
        total, remaining, step = sum(ratios), excess, min(excess, widest - second)
        for k, ratio in enumerate(ratios):
            if ratio and total > 0:
                cut = min(step, round(ratio * remaining / total))
                widths[k] -= cut
                remaining -= cut
                total -= ratio
        excess = sum(widths) - most
    return widths


def _objects_lines(objects, width: int) -> list | None:
    """rich's Table(title="Objects", title_justify="left", show_edge=False, pad_edge=False) of
    the objects, lines without trailing spaces; None where rich would shorten the labels."""
    headers, rows = objects_rows(objects)
    columns = [["", *(label for label, _ in rows)]]
    for k, head in enumerate(headers):
        columns.append([head, *("".join(t for t, _ in cells[k]) for _, cells in rows)])
    if not all(_plain(cell) for column in columns for cell in column):
        return None
    last = len(columns) - 1
    most = width - last  # less a separator between columns
    pads = [(k > 0) + (k < last) for k in range(len(columns))]  # padding 1, none at the edges
    natural = [min(most, max(len(cell) for cell in column) + pads[k]) for k, column in enumerate(columns)]
    widths = _collapsed(natural, most) if sum(natural) > most else natural
    if sum(widths) > most or widths[0] < natural[0]:
        return None  # rich would narrow every column, or cut the labels
    sizes = [w - p for w, p in zip(widths, pads)]

    def lines(cells, bar: str, header: bool = False) -> list:
        wrapped = [_wrapped(c, sizes[k]) for k, c in enumerate(cells)]
        height = max(len(w) for w in wrapped)
        if header:  # rich aligns the header row's cells at the bottom, the others at the top
            wrapped = [[" " * sizes[k]] * (height - len(w)) + w for k, w in enumerate(wrapped)]
        out = []
        for r in range(height):
            padded = [(" " if k else "") + (w[r] if r < len(w) else " " * sizes[k]) + (" " if k < last else "")
                      for k, w in enumerate(wrapped)]
            out.append(bar.join(padded).rstrip())
        return out

    out = ["Objects", *lines([column[0] for column in columns], "┃", header=True),
           "╇".join("━" * w for w in widths)]
    for r in range(1, len(columns[0])):
        out += lines([column[r] for column in columns], "│")
    return out


def _panel_lines(title: str, rows: list, width: int) -> list | None:
    """rich's Panel(Table.grid(padding=(0, 2)) of two columns (the labels not wrapped, the
    values broken between words), title=title, title_align="left", expand=False) at a console
    `width` wide; None where rich would lay it out otherwise (a label or a title too long)."""
    labels = [label for label, _ in rows]
    values = ["".join(t for t, _ in spans) for _, spans in rows]
    if not all(_plain(s) for s in (title, *labels, *values)):
        return None
    label_width = max(len(s) for s in labels) + 2  # the grid's padding, collapsed between columns
    value_width = max(len(s) for s in values)
    inner = width - 4  # the borders and the panel's padding of 1
    shown_title = f" {title} "
    if label_width >= inner or len(shown_title) > inner:
        return None
    # as wide as its content, or as the title, within the console
    grid_width = min(inner, label_width + value_width)
    child = min(width - 2, max(grid_width + 2, len(shown_title) + 2))
    value_width = min(value_width, inner - label_width)
    out = ["╭─" + shown_title + "─" * (child - 2 - len(shown_title)) + "─╮"]
    for label, value in zip(labels, values):
        for k, text in enumerate(_wrapped(value, value_width)):
            row = (label if k == 0 else "").ljust(label_width) + text
            out.append("│ " + row.ljust(child - 2) + " │")
    out.append("╰" + "─" * child + "╯")
    return out


def plain_check(check: Findings, width: int = 120) -> str | None:
    """The check report (objects, a panel per pair, errors and notes, the summary) as the plain
    text rich prints on a console `width` wide with soft wrapping, every line stripped of its
    trailing spaces; None when rich must lay it out."""
    lines: list = []
    if check.objects:
        table = _objects_lines(check.objects, width)
        if table is None:
            return None
        lines += [*table, ""]
    for pair in check.pairs:
        title, _, rows = pair_rows(pair, check.object(pair.a), check.object(pair.b))
        panel = _panel_lines(title, rows, width)
        if panel is None:
            return None
        lines += panel
    trailer = [text for text, _ in trailer_lines(check)] + ["".join(t for t, _ in summary_spans(check))]
    if not all(_plain(text) for text in trailer):
        return None
    lines += trailer
    return "".join(line.rstrip() + "\n" for line in lines)
