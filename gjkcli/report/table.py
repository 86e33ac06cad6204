"""The human report of `gjk check`: the objects, then each pair's verdict. Rich renderables.

Every piece of user data (file names, object names) goes in as `Text`, never as markup, so a file
called `part[1].stl` prints as itself.
"""
from __future__ import annotations

from rich.console import Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from gjkcli.pipeline.findings import Finding, Findings, ObjectRecord, hull_note, pair_note
from gjkcli.report.trace import fmt, vec
from gjkcli.engine.results import Status

STYLES = {
    Status.CLEAR: "bold green",
    Status.TOUCHING: "bold yellow",
    Status.COLLISION: "bold red",
    Status.CLEARANCE: "bold magenta",
    Status.UNDECIDED: "bold dark_orange",
}

ROLES = "AB"


def _yes(flag: bool | None, yes_style: str = "green", no_style: str = "yellow") -> Text:
    if flag is None:
        return Text("not measured", style="dim")
    return Text("yes", style=yes_style) if flag else Text("no", style=no_style)


def _convex(o: ObjectRecord) -> Text:
    text = _yes(o.convex)
    if o.convexity and not o.convex:
        text.append(f" ({o.convexity})", style="dim")
    return text


def _units(units: str | None) -> str:
    return f" {units}" if units else ""


def render_objects(objects) -> Table:
    """The objects side by side: one column per object, one row per property."""
    table = Table(title="Objects", title_justify="left", show_edge=False, pad_edge=False, show_header=True)
    table.add_column("")
    for k, o in enumerate(objects):
        role = ROLES[k] if k < len(ROLES) and len(objects) <= len(ROLES) else str(k + 1)
        table.add_column(Text(f"{role}: {o.name}"), overflow="fold")

    def row(label: str, cells):
        table.add_row(Text(label, style="dim"), *cells)

    row("file", [Text(o.file) for o in objects])
    # 2D drawings' parts (gjkcli.pipeline.flat) have outlines, no triangles and no hull
    drawing = all(o.dimension == 2 and o.faces == 0 and o.hull_vertices == 0 for o in objects)
    if drawing:
        row("vertices", [Text(f"{o.vertices} (outline points, 2D)") for o in objects])
    else:
        row("vertices", [Text(f"{o.vertices} ({o.faces} faces)") for o in objects])
        row("hull vertices", [Text(str(o.hull_vertices) + _dimension(o)) for o in objects])
        row("convex", [_convex(o) for o in objects])
        row("watertight", [_yes(o.watertight) for o in objects])
    if any(o.bodies not in (1, None) for o in objects):
        row("bodies", [Text(str(o.bodies)) for o in objects])
    row("bounds min", [Text(vec(o.bounds[0])) for o in objects])
    row("bounds max", [Text(vec(o.bounds[1])) for o in objects])
    row("size", [Text(" x ".join(fmt(hi - lo) for lo, hi in zip(o.bounds[0], o.bounds[1])) + _units(o.units))
                 for o in objects])
    if any(o.units for o in objects):
        row("units", [Text(o.units or "not stated") for o in objects])
    return table


def _dimension(o: ObjectRecord) -> str:
    return {3: "", 2: " (flat: the hull is a polygon)", 1: " (a segment)", 0: " (a single point)"}.get(o.dimension, "")


def headline(pair: Finding, units: str | None = None, what: str = "parts") -> Text:
    """The verdict in one coloured line: the status word and what it means in numbers."""
    r = pair.result
    status = Status(r.status)
    u = _units(units)
    text = Text(status.value.upper(), style=STYLES[status])
    text.append("  ")
    if status is Status.CLEAR:
        text.append(f"the {what} are {fmt(r.distance)}{u} apart")
    elif status is Status.TOUCHING:
        gap = r.signed_distance
        band = f" (gap {fmt(gap)}{u}, within the touching band +-{fmt(r.tolerance)}{u})"
        text.append(f"the {what} touch{band}")
    elif status is Status.COLLISION:
        if r.depth is not None:
            text.append(f"the {what} overlap by {fmt(r.depth)}{u}")
        else:
            text.append(f"the {what} overlap")
    elif status is Status.CLEARANCE:
        text.append(f"the {what} are {fmt(r.distance)}{u} apart, closer than the required {fmt(pair.clearance)}{u}")
    elif pair.distance_lower is not None and pair.distance_upper is not None:
        text.append(f"the tessellation's error allows either verdict: the true distance lies in "
                    f"[{fmt(pair.distance_lower)}, {fmt(pair.distance_upper)}]{u}")
    else:
        text.append(f"the query could not decide: the distance lies in [{fmt(r.distance_lower)}, {fmt(r.distance)}]{u}")
    return text


def _certificate(cert, of_hulls: bool) -> Text | None:
    kind = getattr(cert, "kind", None)
    whose = "hulls" if of_hulls else "parts"
    if kind == "plane":
        return Text(f"separating plane n.x = {fmt(cert.offset, 9)}, n = {vec(cert.normal)}: "
                    f"A lies on the side n.x <= c, B on the side n.x >= c ({whose})")
    if kind == "point":
        return Text(f"a point of both {whose}: {vec(cert.point)}")
    if kind == "triangles":
        return Text(f"triangle {cert.a} of A crosses triangle {cert.b} of B at {vec(cert.point)}")
    if kind == "distance":
        return Text(f"no triangle of A comes closer than {fmt(cert.lower, 9)} to a triangle of B, "
                    f"and neither part is inside the other")
    if kind == "shift":
        return Text(f"moving B by {vec(cert.shift)} leaves the parts' volumes apart: "
                    f"depth at most {fmt(cert.upper, 9)}")
    return None


def render_pair(pair: Finding, a: ObjectRecord | None = None, b: ObjectRecord | None = None) -> Panel:
    """One pair's verdict as a panel framed in the verdict's colour."""
    r = pair.result
    status = Status(r.status)
    units = (a.units if a else None) or (b.units if b else None)
    u = _units(units)
    hulls_only = hull_note(pair, a, b) is not None
    note = pair_note(pair, a, b)
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="dim", no_wrap=True)
    grid.add_column(overflow="fold")
    grid.add_row(Text("verdict"), headline(pair, units, what="hulls" if hulls_only else "parts"))
    if note:
        grid.add_row(Text(f"{pair.mode} mode"), Text(note, style="yellow"))
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
        grid.add_row(Text("solids"), Text(bounds))
    if status in (Status.CLEAR, Status.CLEARANCE, Status.UNDECIDED):
        grid.add_row(Text("distance"),
                     Text(f"{fmt(r.distance, 9)}{u} (certified at least {fmt(r.distance_lower, 9)}{u})"))
    if status is Status.COLLISION and r.depth is not None:
        grid.add_row(Text("depth"), Text(f"{fmt(r.depth, 9)}{u}: moving B by this along the normal separates them"))
    if pair.overlap_volume is not None:
        cubed = f" {units}^3" if units else " (model units cubed)"
        how = "OpenCASCADE, on the exact solids" if pair.mode == "brep" else "manifold3d, on the parts"
        # a mesh boolean's volume, not a certified length: 6 digits as in the findings table
        grid.add_row(Text("overlap"), Text(f"{fmt(pair.overlap_volume)}{cubed}: the volume both parts "
                                            f"occupy ({how})"))
    elif pair.overlap_reason:
        grid.add_row(Text("overlap"), Text(f"no volume: {pair.overlap_reason}", style="dim"))
    grid.add_row(Text("normal"), Text(f"{vec(r.normal)} (from A towards B)"))
    if status is Status.COLLISION:
        grid.add_row(Text("witness A"), Text(f"{vec(r.point_a)} (deepest point of A inside B)"))
        grid.add_row(Text("witness B"), Text(f"{vec(r.point_b)} (deepest point of B inside A)"))
    else:
        grid.add_row(Text("witness A"), Text(f"{vec(r.point_a)} (closest point on A)"))
        grid.add_row(Text("witness B"), Text(f"{vec(r.point_b)} (closest point on B)"))
    cert = _certificate(r.certificate, pair.conservative)
    if cert is not None:
        grid.add_row(Text("certificate"), cert)
    grid.add_row(Text("tolerance"), Text(f"touching band +-{fmt(r.tolerance)}{u}"))
    if pair.clearance is not None:
        grid.add_row(Text("clearance"), Text(f"required {fmt(pair.clearance)}{u}"))
    mode = pair.mode if pair.requested == pair.mode else f"{pair.mode} ({pair.requested})"
    grid.add_row(Text("mode"), Text(mode))
    if pair.mode == "exact":  # the triangle test counts the bounding-box pairs it visited
        grid.add_row(Text("work"), Text(f"{r.iterations} box pairs visited ({r.exit})"))
    else:
        iters = f"GJK {r.iterations} ({r.exit})"
        if r.epa_iterations or r.epa_exit:
            iters += f", EPA {r.epa_iterations} ({r.epa_exit})"
        grid.add_row(Text("iterations"), Text(iters))
    if r.elapsed > 0:  # a pair answered in a batch (the hulls' call) has no time of its own
        grid.add_row(Text("time"), Text(_duration(r.elapsed)))
    title = Text(f"{pair.a}  x  {pair.b}", style="bold")
    return Panel(grid, title=title, title_align="left", border_style=STYLES[status].replace("bold ", ""),
                 expand=False)


def _duration(seconds: float) -> str:
    seconds = float(seconds or 0.0)
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} us"
    if seconds < 1.0:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.2f} s"


def render_summary(check: Findings) -> Text:
    counts = check.counts
    parts = [f"{n} {name}" for name, n in counts.items() if n]
    text = Text(f"{len(check.pairs)} pair{'s' if len(check.pairs) != 1 else ''}")
    if parts:
        text.append(": " + ", ".join(parts))
    failing = len(check.failures)  # the word and the count `gjk scan` uses
    code = check.exit_code
    style = "green" if code == 0 else "red"
    text.append(f"; {failing} failing", style=style)
    text.append(f"; exit {code}", style=style)
    text.append(f"  ({_duration(check.elapsed)} in all)", style="dim")
    return text


def render_check(check: Findings) -> Group:
    """The whole report: objects, a panel per pair, a summary line."""
    parts = []
    if check.objects:
        parts.append(render_objects(check.objects))
        parts.append(Text(""))
    for pair in check.pairs:
        parts.append(render_pair(pair, check.object(pair.a), check.object(pair.b)))
    for e in check.errors:
        parts.append(Text(f"error: {e.file}: {e.message}", style="bold red"))
    for note in check.notes:
        parts.append(Text(note, style="yellow"))
    parts.append(render_summary(check))
    return Group(*parts)
