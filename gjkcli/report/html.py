"""`--html FILE`: one self-contained page of a run that works offline.

The page holds plotly.js itself (deflated: `gjkcli.report.plotlyjs`), the scene and the findings:
no request leaves the file. It shows the parts in 3D (each object coloured and named, the objects of
findings in colour, their neighbours grey; a big scene draws only those, decimated), for each
finding the witness points and the segment between them, the normal of a collision, the
separating plane of a clear pair's certificate (a small patch at its witness points, in a colour
of its own), the overlap solid of a collision in its own
colour; then the findings table, in the terminal table's order, where a click on a row frames
that pair. With the trace, a section per pair steps through GJK and EPA (`gjkcli.report.tracepic`).

Reads the findings model only (and the triangles it hands over). plotly is imported here, so
`gjk` pays for it only when a page is asked for.
"""
from __future__ import annotations

import html
import json

import numpy as np

from gjkcli.engine.results import Status
from gjkcli.pipeline.findings import Findings
from gjkcli.report import pictures
from gjkcli.report.pictures import OVERLAP_COLOUR, PLANE_COLOUR, STATUS_COLOURS, fmt, units_of
from gjkcli.report.plotlyjs import self_contained
from gjkcli.report.page import (PAGE, TABLE_ROWS_UP_TO, WITNESSES_UP_TO, findings_table, page_script,
                                pair_data, pair_size, summary, title)

__all__ = ["html_page"]

# Beyond this many drawn objects, objects share one trace (one draw call) instead of one each.
TRACE_PER_OBJECT_UP_TO = 60
MARKS_UP_TO = 50
# A separating plane is drawn as a square this share of its pair's size across (or the gap, if
# wider): enough to show its tilt between the witness points, small enough to hide nothing.
PLANE_PATCH = 0.15
# The overlap solids drawn hold at most this many triangles in all.
OVERLAP_TRIANGLES = 60_000

_STATUS_NAMES = {Status.COLLISION: "collision", Status.TOUCHING: "touching", Status.CLEARANCE: "clearance",
                 Status.CLEAR: "clear", Status.UNDECIDED: "undecided"}


def html_page(found: Findings, *, trace: bool = False) -> str:
    """The whole page as text."""
    if found.dimension == 2:
        from gjkcli.report.flathtml import flat_page

        return flat_page(found, trace=trace)
    import plotly.graph_objects as go
    import plotly.io as pio

    drawn = pictures.choose(found)
    fig = go.Figure()
    _objects(fig, drawn, found)
    _overlaps(fig, found, drawn)
    _witnesses(fig, found)
    _marks(fig, found)
    fig.add_trace(go.Scatter3d(x=[], y=[], z=[], mode="lines+markers", name="selected finding",
                               line=dict(color="black", width=10), marker=dict(size=6, color="black"),
                               showlegend=False, hoverinfo="skip"))
    fig.update_layout(
        scene=dict(aspectmode="data", xaxis_title="x", yaxis_title="y", zaxis_title="z"),
        margin=dict(l=0, r=0, t=0, b=0), legend=dict(itemsizing="constant"),
        uirevision="gjk", height=640)
    plot = pio.to_html(fig, full_html=False, include_plotlyjs=False, div_id="gjk-scene",
                       config={"displaylogo": False, "responsive": True})
    trace_html = ""
    if trace:
        from gjkcli.report.tracepic import trace_sections

        trace_html = trace_sections(found)
    data = {"pairs": [pair_data(found, k, p) for k, p in enumerate(found.pairs[:TABLE_ROWS_UP_TO])],
            "selected": len(fig.data) - 1}
    return self_contained(PAGE.format(
        title=html.escape(title(found)),
        summary=html.escape(summary(found)),
        notes="".join(f"<p class='note'>{html.escape(n)}</p>"
                      for n in (*found.notes, *((drawn.note,) if drawn.note else ())) if n),
        errors="".join(f"<p class='error'>error: {html.escape(e.file)}: {html.escape(e.message)}</p>"
                       for e in found.errors),
        plot=plot,
        table=findings_table(found),
        trace=trace_html,
        data=json.dumps(data, allow_nan=False).replace("</", "<\\/"),
        script=page_script(_VIEW_3D)))


# -- the scene -----------------------------------------------------------------------------------


def _objects(fig, drawn, found: Findings) -> None:
    import plotly.graph_objects as go

    boxes = [(n, c) for n, m, c in zip(drawn.names, drawn.meshes, drawn.colours) if m is None]
    meshed = [(n, m, c, r) for n, m, c, r in zip(drawn.names, drawn.meshes, drawn.colours, drawn.role)
              if m is not None]
    if len(meshed) <= TRACE_PER_OBJECT_UP_TO:
        for n, (V, F), c, r in meshed:
            fig.add_trace(go.Mesh3d(
                x=V[:, 0].astype(np.float32), y=V[:, 1].astype(np.float32), z=V[:, 2].astype(np.float32),
                i=F[:, 0].astype(np.int32), j=F[:, 1].astype(np.int32), k=F[:, 2].astype(np.int32),
                name=html.escape(n), color=c, opacity=0.45 if r == "finding" else 0.2, flatshading=True,
                showlegend=True, hovertemplate=f"{html.escape(n)}<extra></extra>"))
    else:
        for role, label, opacity in (("finding", "objects of findings", 0.6), ("context", "neighbours", 0.2)):
            group = [(n, m, c) for n, m, c, r in meshed if r == role]
            if not group:
                continue
            Vs, Fs, colour = [], [], []
            base = 0
            for k, (n, (V, F), c) in enumerate(group):
                Vs.append(V)
                Fs.append(F + base)
                colour.append(np.full(len(V), k % len(pictures.COLOURS) if role == "finding" else 0.0))
                base += len(V)
            V, F, intensity = np.concatenate(Vs), np.concatenate(Fs), np.concatenate(colour)
            scale = [[k / (len(pictures.COLOURS) - 1), c] for k, c in enumerate(pictures.COLOURS)] \
                if role == "finding" else [[0, pictures.CONTEXT_COLOUR], [1, pictures.CONTEXT_COLOUR]]
            fig.add_trace(go.Mesh3d(
                x=V[:, 0].astype(np.float32), y=V[:, 1].astype(np.float32), z=V[:, 2].astype(np.float32),
                i=F[:, 0].astype(np.int32), j=F[:, 1].astype(np.int32), k=F[:, 2].astype(np.int32),
                intensity=intensity.astype(np.float32), intensitymode="vertex", colorscale=scale,
                cmin=0, cmax=len(pictures.COLOURS) - 1, showscale=False, opacity=opacity,
                flatshading=True, name=f"{label} ({len(group):,})", showlegend=True, hoverinfo="skip"))
    for n, c in boxes:  # no triangles (a curved primitive): its bounding box, as lines
        fig.add_trace(_box_lines(n, c, found.object(n).bounds))


def _box_lines(name: str, colour: str, bounds):
    """The 12 edges of an object's bounding box, as one line with gaps."""
    import plotly.graph_objects as go

    lo, hi = np.asarray(bounds[0], dtype=float), np.asarray(bounds[1], dtype=float)
    corner = lambda c: np.where(np.array(c) > 0, hi, lo)  # noqa: E731
    pts = []
    for axis in range(3):
        for s1 in (0, 1):
            for s2 in (0, 1):
                c = [0, 0, 0]
                others = [x for x in range(3) if x != axis]
                c[others[0]], c[others[1]] = s1, s2
                d = list(c)
                d[axis] = 1
                pts += [corner(c), corner(d), np.full(3, np.nan)]
    P = np.array(pts)
    return go.Scatter3d(x=P[:, 0], y=P[:, 1], z=P[:, 2], mode="lines", connectgaps=False,
                        name=html.escape(f"{name} (no triangles: its box)"), line=dict(color=colour, width=4),
                        hoverinfo="name")


def _overlaps(fig, found: Findings, drawn) -> None:
    """The overlap solids of the drawn pairs, in their own colour (at most OVERLAP_TRIANGLES)."""
    import plotly.graph_objects as go

    shown = set(drawn.names)
    solids, spent = [], 0
    for p in found.pairs:
        if p.overlap_mesh is not None and len(p.overlap_mesh[1]) and p.a in shown and p.b in shown:
            spent += len(p.overlap_mesh[1])
            if spent > OVERLAP_TRIANGLES:
                break
            solids.append(p)
    if not solids:
        return
    if len(solids) <= TRACE_PER_OBJECT_UP_TO:
        for n, p in enumerate(solids):  # one legend entry toggles them all
            V, F = p.overlap_mesh
            u = units_of(found, p)
            fig.add_trace(go.Mesh3d(
                x=V[:, 0], y=V[:, 1], z=V[:, 2], i=F[:, 0], j=F[:, 1], k=F[:, 2], color=OVERLAP_COLOUR,
                opacity=1.0, flatshading=True, showlegend=n == 0, legendgroup="overlap",
                name=(html.escape(f"overlap {p.a} x {p.b}: {fmt(p.overlap_volume)}{u + '^3' if u else ''}")
                      if len(solids) == 1 else f"overlap solids ({len(solids)})"),
                hovertemplate=html.escape(f"overlap of {p.a} and {p.b}: volume {fmt(p.overlap_volume)}")
                + "<extra></extra>"))
        return
    Vs, Fs, base = [], [], 0
    for p in solids:
        V, F = p.overlap_mesh
        Vs.append(V)
        Fs.append(F + base)
        base += len(V)
    V, F = np.concatenate(Vs).astype(np.float32), np.concatenate(Fs).astype(np.int32)
    fig.add_trace(go.Mesh3d(x=V[:, 0], y=V[:, 1], z=V[:, 2], i=F[:, 0], j=F[:, 1], k=F[:, 2],
                            color=OVERLAP_COLOUR, opacity=1.0, flatshading=True, hoverinfo="skip",
                            name=f"overlap solids ({len(solids):,})", showlegend=True))


def _witnesses(fig, found: Findings) -> None:
    """Per status: the witness points of each finding and the segment between them (one trace,
    segments apart by gaps), for the first WITNESSES_UP_TO findings."""
    import plotly.graph_objects as go

    listed = found.pairs[:WITNESSES_UP_TO]
    for status, name in _STATUS_NAMES.items():
        group = [p for p in listed if Status(p.status) is status]
        if not group:
            continue
        pts = np.full((3 * len(group), 3), np.nan, dtype=np.float32)
        a = np.array([p.result.point_a for p in group], dtype=float)
        b = np.array([p.result.point_b for p in group], dtype=float)
        pts[0::3], pts[1::3] = a, b
        what = {"collision": "depth", "touching": "gap", "undecided": "distance"}.get(name, "distance")
        fig.add_trace(go.Scatter3d(
            x=pts[:, 0], y=pts[:, 1], z=pts[:, 2], mode="lines+markers", connectgaps=False,
            name=f"{name}: witness points ({what})", line=dict(color=STATUS_COLOURS[status], width=6),
            marker=dict(size=3, color=STATUS_COLOURS[status]), hoverinfo="skip"))


def _marks(fig, found: Findings) -> None:
    """The normal of each collision (a cone at its witness segment) and the separating plane of
    each certificate that has one, for the first MARKS_UP_TO findings."""
    import plotly.graph_objects as go

    listed = found.pairs[:MARKS_UP_TO]
    cones = [p for p in listed if Status(p.status) is Status.COLLISION and np.all(np.isfinite(p.result.normal))]
    if cones:
        size = np.array([pair_size(found, p) for p in cones])
        at = np.array([p.result.point_a for p in cones], dtype=float)
        n = np.array([p.result.normal for p in cones], dtype=float) * size[:, None] * 0.06
        fig.add_trace(go.Cone(x=at[:, 0], y=at[:, 1], z=at[:, 2], u=n[:, 0], v=n[:, 1], w=n[:, 2],
                              anchor="tail", sizemode="raw", sizeref=1.0, showscale=False,
                              colorscale=[[0, "#d62728"], [1, "#d62728"]], name="collision normal (A to B)",
                              showlegend=True, hoverinfo="skip"))
    planes = [p for p in listed if getattr(p.result.certificate, "kind", None) == "plane"]
    if planes:
        fig.add_trace(_plane_patches(found, planes))


def _plane_patches(found: Findings, planes):
    """Each certificate's separating plane as a small square where it separates: centred on the
    witness segment's foot on the plane, PLANE_PATCH of the pair's size across (at least the
    gap), in PLANE_COLOUR; one trace for all of them."""
    import plotly.graph_objects as go

    corners, faces = [], []
    for p in planes:
        cert = p.result.certificate
        nrm = np.asarray(cert.normal, dtype=float)
        nrm = nrm / np.linalg.norm(nrm)
        a, b = np.asarray(p.result.point_a, float), np.asarray(p.result.point_b, float)
        mid = 0.5 * (a + b)
        centre = mid - (nrm @ mid - cert.offset) * nrm  # its foot on the plane
        u = np.cross(nrm, [1.0, 0, 0] if abs(nrm[0]) < 0.9 else [0, 1.0, 0])
        u /= np.linalg.norm(u)
        w = np.cross(nrm, u)
        half = 0.5 * max(PLANE_PATCH * pair_size(found, p), float(np.linalg.norm(b - a)))
        base = len(corners)
        corners += [centre + half * (sx * u + sy * w) for sx, sy in ((-1, -1), (1, -1), (1, 1), (-1, 1))]
        faces += [(base, base + 1, base + 2), (base, base + 2, base + 3)]
    Q, F = np.array(corners), np.array(faces)
    return go.Mesh3d(x=Q[:, 0].tolist(), y=Q[:, 1].tolist(), z=Q[:, 2].tolist(),
                     i=F[:, 0].tolist(), j=F[:, 1].tolist(), k=F[:, 2].tolist(),
                     color=PLANE_COLOUR, opacity=0.6, flatshading=True, showlegend=True,
                     name=f"separating plane{'s' if len(planes) > 1 else ''} at the witness points"
                          f"{f' ({len(planes)})' if len(planes) > 1 else ''}",
                     hoverinfo="skip")


# -- the table and the page's data ---------------------------------------------------------------


# the 3D view: a cube round the pair's box, looked at across the normal
_VIEW_3D = r"""
  function unit(v) { const n = Math.hypot(v[0], v[1], v[2]); return n > 0 ? v.map(x => x / n) : [1, 0, 0]; }
  function cross(a, b) { return [a[1]*b[2]-a[2]*b[1], a[2]*b[0]-a[0]*b[2], a[0]*b[1]-a[1]*b[0]]; }
  function look(p) {
    const c = [0, 1, 2].map(i => 0.5 * (p.lo[i] + p.hi[i]));
    let half = 0.8 * Math.max(p.hi[0] - p.lo[0], p.hi[1] - p.lo[1], p.hi[2] - p.lo[2]);
    if (!(half > 0)) half = 1;
    // look across the normal, so that the gap or the overlap is seen side on
    const n = unit(p.normal || [1, 0, 0]);
    let side = cross(n, Math.abs(n[2]) < 0.9 ? [0, 0, 1] : [1, 0, 0]);
    side = unit(side);
    const eye = {x: 1.8 * side[0] + 0.35, y: 1.8 * side[1] + 0.35, z: 1.8 * side[2] + 0.6};
    Plotly.relayout(gd, {
      'scene.aspectmode': 'cube',
      'scene.xaxis.range': [c[0] - half, c[0] + half],
      'scene.yaxis.range': [c[1] - half, c[1] + half],
      'scene.zaxis.range': [c[2] - half, c[2] + half],
      'scene.camera.center': {x: 0, y: 0, z: 0},
      'scene.camera.eye': eye,
    });
    if (p.point_a && p.point_b) {
      Plotly.restyle(gd, {x: [[p.point_a[0], p.point_b[0]]], y: [[p.point_a[1], p.point_b[1]]],
                          z: [[p.point_a[2], p.point_b[2]]]}, [DATA.selected]);
    }
  }
  function reset() {
    Plotly.relayout(gd, {'scene.aspectmode': 'data', 'scene.xaxis.autorange': true,
                         'scene.yaxis.autorange': true, 'scene.zaxis.autorange': true});
    delete gd.dataset.framed;
  }
"""

