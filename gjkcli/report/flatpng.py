"""`--png PATH` for 2D drawings: the parts as filled outlines with their holes, the witness points
and the segment between them, the normal of a collision, the sheet's outline, and the caption of
each pair as the report states it. `check` gets one picture, `scan` one per violation (the same
file names as in 3D: gjkcli.report.pictures.picture_name).

Reads the findings model only: `Findings.rings(name)` hands over each part's outlines (outer
rings counter-clockwise, holes clockwise, so matplotlib's nonzero fill leaves the holes open).
"""
from __future__ import annotations

import numpy as np

from gjkcli.engine.results import Status
from gjkcli.pipeline.findings import Findings
from gjkcli.report import pictures
from gjkcli.report.pictures import DPI, SIZE_INCHES, STATUS_COLOURS, caption, picture_name, png_bytes, units_of

__all__ = ["check_png_2d", "scan_pngs_2d", "is_sheet"]

def is_sheet(found: Findings, name: str) -> bool:
    """Whether the object is the sheet of --sheet-layer (drawn as an outline, never filled)."""
    o = found.object(name)
    return o is not None and not o.file and name.startswith("sheet:")


def check_png_2d(found: Findings) -> bytes:
    """One picture of a 2D check: both parts, every pair's contact, a caption line per pair."""
    pairs = found.pairs
    lines = [f"{p.a} x {p.b}: {caption(p, units_of(found, p))}" for p in pairs[:6]]
    if not pairs:
        lines = ["no pairs: " + "; ".join(e.message for e in found.errors) if found.errors else "no pairs"]
    return _draw(found, pairs, [o.name for o in found.objects], "\n".join(lines))


def scan_pngs_2d(found: Findings):
    """(file name, PNG bytes) per violation of a 2D scan, in report order."""

    for k, p in enumerate(q for q in found.pairs if q.violation):
        text = f"{p.a} x {p.b}\n{caption(p, units_of(found, p))}"
        if p.note:
            text += f"\n{p.note}"
        yield picture_name(k, p), _draw(found, [p], [p.a, p.b], text)


def _draw(found: Findings, pairs, names, text: str) -> bytes:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch, PathPatch
    from matplotlib.path import Path


    fig = Figure(figsize=SIZE_INCHES, dpi=DPI)
    FigureCanvasAgg(fig)
    ax = fig.add_axes((0.08, 0.2, 0.9, 0.76))
    lo, hi = np.full(2, np.inf), np.full(2, -np.inf)
    legend = []
    for k, name in enumerate(names):
        rings = found.rings(name)
        if not rings:
            continue
        colour = pictures.COLOURS[k % len(pictures.COLOURS)]
        vertices = np.concatenate([np.vstack([r, r[:1]]) for r in rings])
        codes = np.concatenate([[Path.MOVETO] + [Path.LINETO] * (len(r) - 1) + [Path.CLOSEPOLY]
                                for r in rings])
        sheet = is_sheet(found, name)
        ax.add_patch(PathPatch(Path(vertices, codes), facecolor="none" if sheet else colour,
                               edgecolor="#444" if sheet else colour, alpha=1.0 if sheet else 0.45,
                               linewidth=1.5 if sheet else 1.0, linestyle="--" if sheet else "-"))
        if not sheet:
            lo, hi = np.minimum(lo, vertices.min(axis=0)), np.maximum(hi, vertices.max(axis=0))
        legend.append(Patch(facecolor="none" if sheet else colour, edgecolor="#444" if sheet else colour,
                            alpha=0.6, label=name[:40]))
    for p in pairs:
        r = p.result
        a, b = np.asarray(r.point_a, dtype=float), np.asarray(r.point_b, dtype=float)
        colour = STATUS_COLOURS[Status(p.status)]
        if a.shape == (2,) and np.all(np.isfinite(a)) and np.all(np.isfinite(b)):
            ax.plot(*np.stack([a, b]).T, color=colour, linewidth=2.5, marker="o", markersize=4)
            lo, hi = np.minimum(lo, np.minimum(a, b)), np.maximum(hi, np.maximum(a, b))
            n = np.asarray(r.normal, dtype=float)
            if Status(p.status) is Status.COLLISION and n.shape == (2,) and np.all(np.isfinite(n)):
                size = float(np.linalg.norm(hi - lo)) if np.all(np.isfinite(lo)) else 1.0
                ax.annotate("", xy=a + n * 0.12 * (size or 1.0), xytext=a,
                            arrowprops={"arrowstyle": "->", "color": colour, "linewidth": 2})
    if np.all(np.isfinite(lo)):
        pad = 0.08 * float((hi - lo).max() or 1.0)
        ax.set_xlim(lo[0] - pad, hi[0] + pad)
        ax.set_ylim(lo[1] - pad, hi[1] + pad)
    ax.set_aspect("equal")
    ax.set_xlabel("x")
    ax.set_ylabel("y (as in the file)")
    if legend:
        ax.legend(handles=legend[:8], loc="upper right", fontsize=8, frameon=False)
    return png_bytes(fig, text, pairs[0].status if pairs else None)
