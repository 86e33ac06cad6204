"""`--html FILE` for 2D drawings: the page of gjkcli.report.html (summary, notes, the findings
table, the same self-contained plotly.js, nothing asked of the network) with the parts drawn in
the plane.

Each ring is filled (plotly's `fill="toself"`): an outer ring in its part's colour, a hole in the
page's background, every ring of every drawn part largest first, so a part sitting in another's
hole is drawn over that hole (where parts overlap, a hole's background can hide the other part
under it: the witness segment and the table still tell). Past 60 parts only the parts of findings are filled, the others are
grey outlines in one trace. Each finding has its witness segment; a click on a row of the table frames that
pair (the axes' ranges become the pair's box) and draws its witness segment in black.

Reads the findings model only: `Findings.rings(name)` hands over each part's outlines.
"""
from __future__ import annotations

import html
import json

import numpy as np

from gjkcli.engine.results import Status
from gjkcli.pipeline.findings import Findings
from gjkcli.report import pictures
from gjkcli.report.plotlyjs import self_contained
from gjkcli.report.page import PAGE, WITNESSES_UP_TO, findings_table, page_script, pair_data, summary, title
from gjkcli.report.pictures import STATUS_COLOURS
from gjkcli.report.flatpng import is_sheet

__all__ = ["flat_page"]

# Beyond this many parts, parts share one trace per colour (one draw call each).
TRACE_PER_PART_UP_TO = 60
BACKGROUND = "#ffffff"


def _signed_area(r: np.ndarray) -> float:
    x, y = r[:, 0], r[:, 1]
    return 0.5 * float(np.dot(x[:-1], y[1:]) - np.dot(x[1:], y[:-1]) + x[-1] * y[0] - x[0] * y[-1])


def _xy(rings) -> tuple[list, list]:
    """The rings closed and joined by None gaps, as plotly draws several outlines in one trace."""
    xs, ys = [], []
    for r in rings:
        xs += r[:, 0].tolist() + [float(r[0, 0]), None]
        ys += r[:, 1].tolist() + [float(r[0, 1]), None]
    return xs, ys


def flat_page(found: Findings, *, trace: bool = False) -> str:
    """The whole page of a 2D run as text; with `trace`, a section per traced pair steps through
    GJK and EPA in the plane (`gjkcli.report.tracepic`)."""
    import plotly.graph_objects as go
    import plotly.io as pio

    fig = go.Figure()
    involved = {n for p in found.pairs for n in (p.a, p.b)}
    names = [o.name for o in found.objects]
    outlines = {n: found.rings(n) or () for n in names}
    parts = [n for n in names if not is_sheet(found, n) and outlines[n]]
    filled = parts if len(parts) <= TRACE_PER_PART_UP_TO else [n for n in parts if n in involved]
    colour = {n: pictures.COLOURS[k % len(pictures.COLOURS)] for k, n in enumerate(filled)}
    # every ring of the filled parts, largest first: an outer ring (counter-clockwise) in its
    # part's colour, a hole (clockwise) in the background's, so even-odd nesting, a part in
    # another's hole included, comes out right
    rings = sorted(((abs(_signed_area(r)), _signed_area(r) > 0, n, r) for n in filled for r in outlines[n]),
                   key=lambda t: -t[0])
    shown = set()
    for _, outer, n, r in rings:
        x, y = _xy([r])
        fig.add_trace(go.Scatter(
            x=x, y=y, fill="toself", mode="lines", name=n, legendgroup=n,
            fillcolor=colour[n] if outer else BACKGROUND, line=dict(color=colour[n], width=1),
            opacity=0.6 if outer else 1.0, hoveron="fills", text=n, hoverinfo="text" if outer else "skip",
            showlegend=outer and n not in shown))
        shown.add(n)
    others = [r for n in parts if n not in colour for r in outlines[n]]
    if others:  # a big scan: the parts of no finding as grey outlines, one trace
        x, y = _xy(others)
        fig.add_trace(go.Scatter(x=x, y=y, mode="lines", name="other parts",
                                 line=dict(color="#b8b8b8", width=1), hoverinfo="skip"))
    for n in names:
        if is_sheet(found, n) and outlines[n]:
            x, y = _xy(outlines[n])
            fig.add_trace(go.Scatter(x=x, y=y, mode="lines", name=n, line=dict(color="#444", dash="dash"),
                                     hoverinfo="skip"))
    for p in found.pairs[:WITNESSES_UP_TO]:
        a, b = np.asarray(p.result.point_a, dtype=float), np.asarray(p.result.point_b, dtype=float)
        if a.shape == (2,) and np.all(np.isfinite(a)) and np.all(np.isfinite(b)):
            fig.add_trace(go.Scatter(x=[a[0], b[0]], y=[a[1], b[1]], mode="lines+markers",
                                     line=dict(color=STATUS_COLOURS[Status(p.status)], width=3),
                                     marker=dict(size=6), showlegend=False,
                                     hoverinfo="text", text=f"{p.a} x {p.b}: {Status(p.status).value}"))
    fig.add_trace(go.Scatter(x=[], y=[], mode="lines+markers", name="selected finding",
                             line=dict(color="black", width=5), marker=dict(size=8, color="black"),
                             showlegend=False, hoverinfo="skip"))
    fig.update_layout(xaxis=dict(title="x", scaleanchor="y", scaleratio=1),
                      yaxis=dict(title="y (as in the file)"), plot_bgcolor=BACKGROUND,
                      margin=dict(l=40, r=10, t=10, b=40), height=640, uirevision="gjk")
    plot = pio.to_html(fig, full_html=False, include_plotlyjs=False, div_id="gjk-scene",
                       config={"displaylogo": False, "responsive": True})
    data = {"pairs": [pair_data(found, k, p) for k, p in enumerate(found.pairs[:1000])],
            "selected": len(fig.data) - 1}
    return self_contained(PAGE.format(
        title=html.escape(title(found)), summary=html.escape(summary(found)),
        notes="".join(f"<p class='note'>{html.escape(n)}</p>" for n in found.notes if n),
        errors="".join(f"<p class='error'>error: {html.escape(e.file)}: {html.escape(e.message)}</p>"
                       for e in found.errors),
        plot=plot, table=findings_table(found), trace=_trace_html(found) if trace else "",
        data=json.dumps(data, allow_nan=False).replace("</", "<\\/"), script=page_script(_VIEW_2D)))


# the plane's view: a square round the pair's box
_VIEW_2D = r"""
  function look(p) {
    const c = [0, 1].map(i => 0.5 * (p.lo[i] + p.hi[i]));
    let half = 0.6 * Math.max(p.hi[0] - p.lo[0], p.hi[1] - p.lo[1]);
    if (!(half > 0)) half = 1;
    Plotly.relayout(gd, {'xaxis.range': [c[0] - half, c[0] + half],
                         'yaxis.range': [c[1] - half, c[1] + half]});
    if (p.point_a && p.point_b) {
      Plotly.restyle(gd, {x: [[p.point_a[0], p.point_b[0]]], y: [[p.point_a[1], p.point_b[1]]]},
                     [DATA.selected]);
    }
  }
  function reset() {
    Plotly.relayout(gd, {'xaxis.autorange': true, 'yaxis.autorange': true});
    delete gd.dataset.framed;
  }
"""


def _trace_html(found: Findings) -> str:
    from gjkcli.report.tracepic import trace_sections

    return trace_sections(found)
