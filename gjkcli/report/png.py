"""`--png PATH`: static pictures for CI artifacts and pull-request comments.

matplotlib's Agg canvas draws them in memory: no browser, no display. `check` gets one picture
(every pair of the check); `scan` one per violation, named after its pair. Each shows both parts,
the witness points and the segment between them, the normal of a collision, the overlap solid in
its own colour, and a caption with the status and numbers as the report states them. Where the
witness points lie closer together than a twentieth of the view (a 0.0039 clearance in an 8-wide
box), a second view zooms on them (`zoom_window`): the parts' triangles cut to a cube a few times
the gap wide around the points, so that the gap the caption states can be seen.

Reads the findings model only (and the triangles it hands over); matplotlib is imported here, so
`gjk` pays for it only when a picture is asked for.
"""
from __future__ import annotations

import math

import numpy as np

from gjkcli.engine.results import Status
from gjkcli.pipeline.findings import Findings
from gjkcli.report import pictures
from gjkcli.report.pictures import (DPI, OVERLAP_COLOUR, SIZE_INCHES, STATUS_COLOURS, caption, picture_name,
                                    png_bytes, units_of)

__all__ = ["check_png", "scan_pngs", "picture_name", "figure", "zoom_window"]

# Triangles per part in a picture (vertex clustering beyond): Agg draws each as a polygon.
PART_TRIANGLES = 6000
# The zoomed view: drawn when the witness points are closer than ZOOM_BELOW of the view's width
# (but apart: parts that touch show nothing more zoomed); it spans ZOOM_SPAN times their distance
# each way from their midpoint, and cuts at most ZOOM_TRIANGLES triangles per part to that cube.
ZOOM_BELOW = 0.05
ZOOM_SPAN = 3.0
ZOOM_TRIANGLES = 4000
# With a zoomed view, the whole view and the zoomed one side by side (left, bottom, width, height,
# as fractions of the figure)
WHOLE_PLACE = (0.0, 0.14, 0.56, 0.86)
ZOOM_PLACE = (0.56, 0.18, 0.43, 0.74)


def check_png(found: Findings) -> bytes:
    """One picture of a check: every pair's parts and contacts, a caption line per pair."""
    if found.dimension == 2:
        from gjkcli.report.flatpng import check_png_2d

        return check_png_2d(found)
    pairs = found.pairs
    lines = [f"{p.a} x {p.b}: {caption(p, units_of(found, p))}" for p in pairs[:6]]
    if len(pairs) > 6:
        lines.append(f"... and {len(pairs) - 6} more pairs")
    if not pairs:
        lines = ["no pairs: " + "; ".join(e.message for e in found.errors) if found.errors else "no pairs"]
    return _draw(found, pairs, [o.name for o in found.objects], "\n".join(lines))


def scan_pngs(found: Findings):
    """(file name, PNG bytes) per violation of a scan, in report order."""
    if found.dimension == 2:
        from gjkcli.report.flatpng import scan_pngs_2d

        yield from scan_pngs_2d(found)
        return
    for k, p in enumerate(q for q in found.pairs if q.violation):
        text = f"{p.a} x {p.b}\n{caption(p, units_of(found, p))}"
        if p.allowed:
            text += f"\nallowed: {p.reason}"
        elif p.known:
            text += "\nin the baseline"
        yield picture_name(k, p), _draw(found, [p], [p.a, p.b], text)


def _draw(found: Findings, pairs, names, text: str) -> bytes:
    return png_bytes(figure(found, pairs, names), text, pairs[0].status if pairs else None)


def figure(found: Findings, pairs, names):
    """The matplotlib Figure of `pairs` (drawn with the objects `names`), before its caption: the
    parts, witness points, normals and overlap solids, and the zoomed view where `zoom_window`
    asks for one (the Figure's second axes)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from mpl_toolkits.mplot3d.art3d import Poly3DCollection

    fig = Figure(figsize=SIZE_INCHES, dpi=DPI)
    FigureCanvasAgg(fig)
    ax = fig.add_axes((0.0, 0.14, 1.0, 0.86), projection="3d")
    lo, hi = np.full(3, np.inf), np.full(3, -np.inf)
    handles = []
    for k, name in enumerate(names):
        o = found.object(name)
        if o is None:
            continue
        lo, hi = np.minimum(lo, o.bounds[0]), np.maximum(hi, o.bounds[1])
        colour = pictures.COLOURS[k % len(pictures.COLOURS)]
        tri = found.triangles(name)
        if tri is None:  # a curved primitive: its box
            _box(ax, o.bounds, colour)
        else:
            V, F = np.asarray(tri[0], dtype=float), np.asarray(tri[1], dtype=np.int64)
            if len(F) > PART_TRIANGLES:
                V, F = pictures.decimate(V, F, PART_TRIANGLES)
            ax.add_collection3d(Poly3DCollection(V[F], facecolor=colour, edgecolor=(0, 0, 0, 0.08),
                                                 linewidths=0.2, alpha=0.35, label=name))
        handles.append((colour, name))
    for p in pairs:
        if p.overlap_mesh is not None and len(p.overlap_mesh[1]):
            V, F = p.overlap_mesh
            ax.add_collection3d(Poly3DCollection(np.asarray(V)[np.asarray(F)], facecolor=OVERLAP_COLOUR,
                                                 edgecolor="none", alpha=0.9))
        r = p.result
        a, b = np.asarray(r.point_a, dtype=float), np.asarray(r.point_b, dtype=float)
        colour = STATUS_COLOURS[Status(p.status)]
        if np.all(np.isfinite(a)) and np.all(np.isfinite(b)):
            ax.plot(*np.stack([a, b]).T, color=colour, linewidth=2.5, marker="o", markersize=4)
        if Status(p.status) is Status.COLLISION and np.all(np.isfinite(r.normal)):
            size = float(np.linalg.norm(hi - lo)) or 1.0
            n = np.asarray(r.normal, dtype=float) * 0.12 * size
            ax.quiver(*a, *n, color=colour, linewidth=2, arrow_length_ratio=0.3)
    if np.all(np.isfinite(lo)):
        centre, half = 0.5 * (lo + hi), 0.5 * float((hi - lo).max() or 1.0)
        ax.set_xlim(centre[0] - half, centre[0] + half)
        ax.set_ylim(centre[1] - half, centre[1] + half)
        ax.set_zlim(centre[2] - half, centre[2] + half)
        ax.set_box_aspect((1, 1, 1))
    if pairs:
        _look_across(ax, pairs[0].result.normal)
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    ax.set_zlabel("z")
    from matplotlib.patches import Patch

    legend = [Patch(facecolor=c, alpha=0.6, label=n[:40]) for c, n in handles[:8]]
    if any(p.overlap_mesh is not None and len(p.overlap_mesh[1]) for p in pairs):
        legend.append(Patch(facecolor=OVERLAP_COLOUR, label="overlap solid"))
    if legend:
        ax.legend(handles=legend, loc="upper left", fontsize=8, frameon=False)
    size = 2 * half if np.all(np.isfinite(lo)) else 0.0
    for p in pairs:
        if Status(p.status) is Status.TOUCHING:
            continue  # the gap is within the touching band: nothing to see closer
        window = zoom_window(p.result.point_a, p.result.point_b, size)
        if window is not None:
            ax.set_position(WHOLE_PLACE)
            _zoom(fig, found, p, names, *window)
            break
    return fig


def zoom_window(point_a, point_b, view: float) -> tuple[np.ndarray, float] | None:
    """(centre (3,), half-width) of the zoomed view on two witness points, or None when they are
    far enough apart to be seen in a view `view` wide, or at the same point (or not finite).

    The centre is their midpoint; the half-width ZOOM_SPAN times their distance.
    """
    a, b = np.asarray(point_a, dtype=float), np.asarray(point_b, dtype=float)
    if a.shape != (3,) or b.shape != (3,) or not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        return None
    gap = float(np.linalg.norm(a - b))
    if not view > 0 or not 0 < gap < ZOOM_BELOW * view:
        return None
    return 0.5 * (a + b), ZOOM_SPAN * gap


def _zoom(fig, found: Findings, pair, names, centre: np.ndarray, half: float) -> None:
    """The zoomed view: each part's triangles near the witness points cut to the cube
    centre +- half (matplotlib's 3D axes do not clip what lies beyond their limits), the witness
    segment, axes labelled in the parts' units."""
    from mpl_toolkits.mplot3d.art3d import Poly3DCollection

    lo, hi = centre - half, centre + half
    ax = fig.add_axes(ZOOM_PLACE, projection="3d")
    for k, name in enumerate(names):
        tri = found.triangles(name)
        if tri is None:
            continue
        V, F = np.asarray(tri[0], dtype=float), np.asarray(tri[1], dtype=np.int64)
        pieces = _cut(V[F], lo, hi)
        if pieces:
            ax.add_collection3d(Poly3DCollection(pieces, facecolor=pictures.COLOURS[k % len(pictures.COLOURS)],
                                                 edgecolor=(0, 0, 0, 0.25), linewidths=0.4, alpha=0.45))
    r = pair.result
    colour = STATUS_COLOURS[Status(pair.status)]
    ax.plot(*np.stack([np.asarray(r.point_a, float), np.asarray(r.point_b, float)]).T, color=colour,
            linewidth=2.5, marker="o", markersize=5)
    ax.set_xlim(lo[0], hi[0])
    ax.set_ylim(lo[1], hi[1])
    ax.set_zlim(lo[2], hi[2])
    ax.set_box_aspect((1, 1, 1))
    _look_across(ax, r.normal)
    from matplotlib.ticker import MaxNLocator

    for axis in (ax.xaxis, ax.yaxis, ax.zaxis):
        axis.set_major_locator(MaxNLocator(3))
        axis.get_major_formatter().set_useOffset(False)
        axis.set_tick_params(labelsize=6)
    ax.set_title(f"zoomed on the witness points: {2 * half:.3g} wide", fontsize=8)


def _cut(corners: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> list:
    """The parts of triangles (m, 3, 3) inside the box [lo, hi], each a polygon (k, 3): each
    triangle near the box cut by the box's six planes in turn (Sutherland and Hodgman 1974)."""
    near = np.all(corners.min(axis=1) <= hi, axis=1) & np.all(corners.max(axis=1) >= lo, axis=1)
    pieces = []
    for polygon in corners[near][:ZOOM_TRIANGLES]:
        for axis in range(3):
            for bound, keep in ((lo[axis], 1.0), (hi[axis], -1.0)):
                polygon = _cut_by_plane(polygon, axis, bound, keep)
                if len(polygon) < 3:
                    break
            if len(polygon) < 3:
                break
        if len(polygon) >= 3:
            pieces.append(polygon)
    return pieces


def _cut_by_plane(polygon: np.ndarray, axis: int, bound: float, keep: float) -> np.ndarray:
    """The part of a convex polygon (k, 3) where keep * (x[axis] - bound) >= 0."""
    d = keep * (polygon[:, axis] - bound)
    if (d >= 0).all():
        return polygon
    out = []
    for i in range(len(polygon)):
        p, q, dp, dq = polygon[i], polygon[(i + 1) % len(polygon)], d[i], d[(i + 1) % len(polygon)]
        if dp >= 0:
            out.append(p)
        if (dp >= 0) != (dq >= 0):
            out.append(p + (q - p) * (dp / (dp - dq)))
    return np.array(out).reshape(-1, 3)


def _look_across(ax, normal) -> None:
    """View the pair side on: the camera square to the normal, a little above."""
    n = np.asarray(normal, dtype=float)
    if not np.all(np.isfinite(n)) or not np.linalg.norm(n):
        return
    side = np.cross(n, [0, 0, 1.0] if abs(n[2]) < 0.9 else [1.0, 0, 0])
    side /= np.linalg.norm(side)
    view = side + np.array([0.25, 0.25, 0.45])
    azim = math.degrees(math.atan2(view[1], view[0]))
    elev = math.degrees(math.atan2(view[2], math.hypot(view[0], view[1])))
    ax.view_init(elev=elev, azim=azim)


def _box(ax, bounds, colour) -> None:
    lo, hi = np.asarray(bounds[0], dtype=float), np.asarray(bounds[1], dtype=float)
    for axis in range(3):
        others = [x for x in range(3) if x != axis]
        for s1 in (lo, hi):
            for s2 in (lo, hi):
                p, q = lo.copy(), hi.copy()
                p[others[0]] = q[others[0]] = s1[others[0]]
                p[others[1]] = q[others[1]] = s2[others[1]]
                ax.plot(*np.stack([p, q]).T, color=colour, linewidth=1.5)
