"""What the pictures of a run draw, shared by the HTML page and the PNGs: which objects, how many
triangles of each, in which colour, and the words of each finding. NumPy only: the plotting
libraries are imported by the renderers, and only when a picture is asked for.

Everything is read from the findings model (`gjkcli.pipeline.findings`): the objects' records,
the pairs, and the triangles the run hands over through `Findings.triangles`.
"""
from __future__ import annotations

import io
import math
import re
from dataclasses import dataclass

import numpy as np

from gjkcli.engine.results import Status
from gjkcli.pipeline.findings import Finding, Findings
from gjkcli.report.trace import fmt  # one way to write a number for reading

__all__ = ["COLOURS", "STATUS_COLOURS", "OVERLAP_COLOUR", "PLANE_COLOUR", "Drawn", "choose", "decimate", "fmt",
           "size_text", "caption", "units_of",
           "read_by_pictures"]

# Objects in turn (a qualitative palette readable on white); context objects are grey.
COLOURS = ("#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2", "#edc948", "#9c755f",
           "#bab0ac", "#ff9da7", "#86bcb6")
CONTEXT_COLOUR = "#c8c8c8"
STATUS_COLOURS = {Status.CLEAR: "#2ca02c", Status.TOUCHING: "#d4a000", Status.COLLISION: "#d62728",
                  Status.CLEARANCE: "#c03cc0", Status.UNDECIDED: "#ff7f0e"}
# The overlap solid of a collision: a colour no object takes.
OVERLAP_COLOUR = "#e6007e"
# The patch of a separating plane at a clear pair's witness points: a colour of its own too.
PLANE_COLOUR = "#00b8e6"

# A scene is big beyond this many objects: then only the objects of findings (violations first)
# and their neighbours are drawn, within TRIANGLE_BUDGET triangles in all.
BIG_SCENE = 60
TRIANGLE_BUDGET = 80_000
# Each object keeps at most this many triangles (vertex clustering beyond).
OBJECT_TRIANGLES = 20_000


def units_of(found: Findings, pair: Finding) -> str:
    a, b = found.object(pair.a), found.object(pair.b)
    u = found.units or (a.units if a else None) or (b.units if b else None)
    return f" {u}" if u else ""


def size_text(pair: Finding) -> str:
    """The pair's number as the terminal table shows it: depth, gap or distance."""
    r = pair.result
    status = Status(pair.status)
    if status is Status.COLLISION:
        return fmt(r.depth)
    if status is Status.TOUCHING:
        return fmt(r.signed_distance)
    return fmt(r.distance)


def caption(pair: Finding, units: str = "") -> str:
    """The status and numbers of a finding in one sentence, as the report states them."""
    r = pair.result
    status = Status(pair.status)
    if status is Status.COLLISION:
        text = f"collision: depth {fmt(r.depth)}{units}"
        if pair.overlap_volume is not None:
            text += f", overlap volume {fmt(pair.overlap_volume)}{units + '^3' if units else ''}"
        elif pair.overlap_reason:
            text += f" (no overlap volume: {pair.overlap_reason})"
    elif status is Status.TOUCHING:
        text = f"touching: gap {fmt(r.signed_distance)}{units} within +-{fmt(r.tolerance)}{units}"
    elif status is Status.CLEARANCE:
        text = f"clearance: {fmt(r.distance)}{units} apart, {fmt(pair.clearance)}{units} required"
    elif status is Status.CLEAR:
        text = f"clear: {fmt(r.distance)}{units} apart"
    elif pair.distance_lower is not None and pair.distance_upper is not None:
        text = (f"undecided: the true distance is in [{fmt(pair.distance_lower)}, "
                f"{fmt(pair.distance_upper)}]{units} (tessellation error {fmt(pair.tessellation)}{units})")
    else:
        text = f"undecided: distance in [{fmt(r.distance_lower)}, {fmt(r.distance)}]{units}"
    text += f" ({pair.mode} mode{', hulls only' if pair.conservative else ''})"
    return text


@dataclass(frozen=True)
class Drawn:
    """The objects a picture draws.

    names : object names, findings' objects first
    role : per name, "finding" (in a listed pair) or "context" (a neighbour)
    meshes : per name, ((n, 3) float64, (m, 3) int64) or None (no triangles: draw its box)
    colours : per name
    note : what was left out, in one sentence, or None
    """

    names: tuple
    role: tuple
    meshes: tuple
    colours: tuple
    note: str | None = None

    @property
    def triangles(self) -> int:
        return sum(len(m[1]) for m in self.meshes if m is not None)


def _bounds(found: Findings, names) -> tuple[np.ndarray, np.ndarray]:
    lo = np.array([found.object(n).bounds[0] for n in names], dtype=float).reshape(-1, 3)
    hi = np.array([found.object(n).bounds[1] for n in names], dtype=float).reshape(-1, 3)
    return lo, hi


def choose(found: Findings, pairs=None, *, budget: int = TRIANGLE_BUDGET, big: int = BIG_SCENE,
           neighbours: bool = True) -> Drawn:
    """The objects to draw for `pairs` (default: every listed pair), within a triangle budget.

    A small run draws every object. A big one draws the objects of the findings, violations
    first in report order, until the budget is spent, then their neighbours (objects whose boxes
    come within half the median drawn object's size) while the budget lasts. Each object is
    decimated by vertex clustering when it alone holds more than its share.
    """
    pairs = found.pairs if pairs is None else pairs
    order: list[str] = []
    seen = set()
    ranked = sorted(pairs, key=lambda p: not p.violation)  # stable: report order within each
    for p in ranked:
        for n in (p.a, p.b):
            if n not in seen and found.object(n) is not None:
                seen.add(n)
                order.append(n)
    everything = [o.name for o in found.objects]
    small = len(everything) <= big and pairs is found.pairs
    role = ["finding"] * len(order)
    if small:
        for n in everything:
            if n not in seen:
                seen.add(n)
                order.append(n)
                role.append("context")
    share = max(200, min(OBJECT_TRIANGLES, budget // max(1, len(order))))
    names, roles, meshes = [], [], []
    spent = _take(found, order, role, share, budget, names, roles, meshes)
    left_out = len(order) - len(names)
    if neighbours and not small and names and spent < budget:
        extra = _neighbours(found, names, everything, seen)
        spent += _take(found, extra, ["context"] * len(extra), share, budget - spent, names, roles, meshes)
    colours = []
    k = 0
    for n, r in zip(names, roles):
        if r == "finding" or small:
            colours.append(COLOURS[k % len(COLOURS)])
            k += 1
        else:
            colours.append(CONTEXT_COLOUR)
    note = None
    total = len(everything)
    if len(names) < total:
        drawn_findings = sum(1 for r in roles if r == "finding")
        note = (f"{len(names):,} of {total:,} objects drawn: {drawn_findings:,} objects of findings"
                f"{f' (of {drawn_findings + left_out:,}: the first ones in report order, to keep the page light)' if left_out else ''}"
                f"{f' and {len(names) - drawn_findings:,} neighbours' if len(names) > drawn_findings else ''}")
    return Drawn(tuple(names), tuple(roles), tuple(meshes), tuple(colours), note)


def _take(found, order, role, share, budget, names, roles, meshes) -> int:
    """Append objects of `order` while their triangles fit the budget; the triangles spent.

    The triangles are read ahead (`Findings.read_ahead`) for the objects sure to fit: each costs
    at most its face count or its share."""
    spent = 0
    ahead = 0  # order[:ahead] are read ahead
    for at, (n, r) in enumerate(zip(order, role)):
        if at == ahead:
            cost = spent
            while ahead < len(order) and (ahead == at or cost < budget):
                record = found.object(order[ahead])
                cost += min(share, record.faces if record is not None and record.faces else share)
                if cost > budget and ahead > at:
                    break
                ahead += 1
            found.read_ahead(order[at:ahead])
        tri = found.triangles(n)
        if tri is not None:
            V, F = np.asarray(tri[0], dtype=float), np.asarray(tri[1], dtype=np.int64)
            if len(F) > share:
                V, F = decimate(V, F, share)
            if spent + len(F) > budget and names:
                break
            spent += len(F)
            tri = (V, F)
        names.append(n)
        roles.append(r)
        meshes.append(tri)
    return spent


def _neighbours(found: Findings, drawn, everything, seen, limit: int = 2000) -> list[str]:
    """Objects whose boxes come within a radius of the drawn objects' boxes, nearest first
    (at most `limit`)."""
    drawn = drawn[:limit]
    lo, hi = _bounds(found, drawn)
    size = np.linalg.norm(hi - lo, axis=1)
    radius = 0.5 * float(np.median(size)) if len(size) else 0.0
    all_lo, all_hi = _bounds(found, everything)
    gap = np.full(len(everything), np.inf)
    for s in range(0, len(drawn), 64):  # box-to-box gaps, 64 drawn objects at a time
        d = np.maximum(0.0, np.maximum(lo[s:s + 64, None] - all_hi[None], all_lo[None] - hi[s:s + 64, None]))
        gap = np.minimum(gap, np.sqrt((d * d).sum(axis=2)).min(axis=0))
    out = [k for k in np.argsort(gap, kind="stable").tolist() if gap[k] <= radius and everything[k] not in seen]
    return [everything[k] for k in out[:limit]]


def read_by_pictures(found: Findings, *, html: bool = False, pngs: int = 0, trace: bool = False) -> list[str]:
    """Read the triangles of every object the pictures of a scan draw, as they draw them, and
    name those objects: the HTML page's (`choose`, within its budget), the two objects of each
    of the first `pngs` violations (the PNGs), the traced pairs' (the trace's pictures). A run
    whose parts are elsewhere (a Dask scan: `gjkcli.pipeline.run.Options.pictures`) fetches
    them as they are read."""
    names: list[str] = []
    if found.dimension != 3:
        return names
    if html:
        names.extend(choose(found).names)
        if trace:
            from gjkcli.report.tracepic import PAIRS_UP_TO

            traced = [p for p in found.pairs if p.result is not None and p.result.trace]
            names.extend(n for p in traced[:PAIRS_UP_TO] for n in (p.a, p.b))
    if pngs:
        violations = [p for p in found.pairs if p.violation][:pngs]
        drawn = list(dict.fromkeys(n for p in violations for n in (p.a, p.b)))
        found.read_ahead(drawn)
        names.extend(drawn)
    names = list(dict.fromkeys(names))
    for n in names:
        found.triangles(n)
    return names


def decimate(vertices: np.ndarray, faces: np.ndarray, target: int):
    """At most about `target` triangles by vertex clustering (Rossignac and Borrel 1993): the
    vertices of each cell of a grid merge into their mean, triangles that collapse are dropped.
    Coarser grids are tried until the count fits."""
    V = np.asarray(vertices, dtype=float)
    F = np.asarray(faces, dtype=np.int64)
    lo, hi = V.min(axis=0), V.max(axis=0)
    extent = float((hi - lo).max()) or 1.0
    cells = int(2 * math.sqrt(target)) + 1
    while True:
        step = extent / cells
        key = np.floor((V - lo) / step).astype(np.int64)
        _, cluster, count = np.unique(key, axis=0, return_inverse=True, return_counts=True)
        cluster = cluster.ravel()
        sums = np.zeros((len(count), 3))
        np.add.at(sums, cluster, V)
        newV = sums / count[:, None]
        newF = cluster[F]
        keep = (newF[:, 0] != newF[:, 1]) & (newF[:, 1] != newF[:, 2]) & (newF[:, 0] != newF[:, 2])
        newF = newF[keep]
        _, first = np.unique(np.sort(newF, axis=1), axis=0, return_index=True)  # one of each
        newF = newF[np.sort(first)]
        if len(newF) <= target or cells <= 2:
            return newV, newF
        cells = max(2, int(cells * 0.7))


# -- PNG files (gjkcli.report.png in 3D, gjkcli.report.flatpng in 2D) -----------------------------

SIZE_INCHES, DPI = (8.0, 6.4), 100


def picture_name(k: int, pair: Finding) -> str:
    """The file of the k-th violation: its rank and both names, made safe for any file system."""
    def safe(name: str) -> str:
        return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._")[:60] or "object"

    return f"{k + 1:04d}_{safe(pair.a)}__{safe(pair.b)}.png"


def png_bytes(fig, text: str, status) -> bytes:
    """The figure as PNG bytes, with `text` at its foot in the colour of the first pair's status
    (the 2D pictures end the same way: `gjkcli.report.flatpng`)."""
    colour = STATUS_COLOURS.get(Status(status), "#222") if status is not None else "#222"
    fig.text(0.02, 0.02, text, fontsize=9, va="bottom", ha="left", wrap=True, color=colour,
             family="monospace")
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI)
    return buf.getvalue()
