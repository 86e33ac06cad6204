"""`--trace --html`: the trace as the tutorials draw it, a step at a time.

For each traced pair: the Minkowski difference A - B (drawn as the hull of every difference of
the parts' vertices for small parts, of support points sampled over directions for large ones;
plotly.js builds that hull in the page), the origin, then per GJK iteration the simplex, the
direction searched, the new point w and the point v of the simplex nearest the origin; then
per EPA expansion the polytope so far (the hull of its known points), the normal of its face
nearest the origin, and the new support point. A slider (and a play button) steps through them;
beside the plot, the narration of that step (`gjkcli.report.trace.step_texts`).

The shapes are the ones the engine traced: the points of A - B it recorded are differences of
world coordinates, so the parts' world vertices give the same difference.
"""
from __future__ import annotations

import html
import json
from itertools import combinations

import numpy as np

from gjkcli.pipeline.findings import Findings
from gjkcli.report.plotlyjs import self_contained

__all__ = ["trace_sections", "minkowski_points", "plane_trace_page", "plane_trace_figure", "hull_2d"]

# All differences a - b up to this many (then the hull of every one is drawn); beyond, support
# points over SAMPLED_DIRECTIONS directions.
ALL_DIFFERENCES_UP_TO = 20_000
SAMPLED_DIRECTIONS = 1500
# Pictures for at most this many pairs (a trace is read a pair at a time).
PAIRS_UP_TO = 12


def _fibonacci_directions(n: int) -> np.ndarray:
    """(n, 3) unit vectors spread evenly over the sphere (a Fibonacci lattice)."""
    k = np.arange(n) + 0.5
    z = 1 - 2 * k / n
    r = np.sqrt(1 - z * z)
    phi = np.pi * (1 + 5 ** 0.5) * k
    return np.stack([r * np.cos(phi), r * np.sin(phi), z], axis=1)


def minkowski_points(va: np.ndarray, vb: np.ndarray) -> tuple[np.ndarray, str]:
    """Points whose hull is A - B (every difference), or lies on it (sampled supports); and
    which of the two they are, in words."""
    va = np.unique(np.asarray(va, dtype=float), axis=0)
    vb = np.unique(np.asarray(vb, dtype=float), axis=0)
    if len(va) * len(vb) <= ALL_DIFFERENCES_UP_TO:
        return (va[:, None, :] - vb[None, :, :]).reshape(-1, 3), \
            f"the hull of all {len(va) * len(vb):,} differences a - b"
    d = _fibonacci_directions(SAMPLED_DIRECTIONS)
    sa = np.empty((len(d), 3))
    sb = np.empty((len(d), 3))
    for s in range(0, len(d), 100):  # support of A along d and of B along -d
        sa[s:s + 100] = va[np.argmax(va @ d[s:s + 100].T, axis=0)]
        sb[s:s + 100] = vb[np.argmin(vb @ d[s:s + 100].T, axis=0)]
    return np.unique(sa - sb, axis=0), f"support points sampled over {SAMPLED_DIRECTIONS:,} directions"


def _hull_faces(points: np.ndarray) -> np.ndarray:
    """(m, 3) triangles of the convex hull of a few points (EPA's polytope: tens of points), by
    testing every triple: a triple is a face when every point lies on one side of its plane."""
    n = len(points)
    if n < 4:
        return np.zeros((0, 3), dtype=np.int64)
    tri = np.array(list(combinations(range(n), 3)), dtype=np.int64)
    p0, p1, p2 = points[tri[:, 0]], points[tri[:, 1]], points[tri[:, 2]]
    normal = np.cross(p1 - p0, p2 - p0)
    length = np.linalg.norm(normal, axis=1)
    scale = float(np.abs(points).max()) or 1.0
    ok = length > 1e-12 * scale * scale
    side = np.einsum("tk,pk->tp", normal[ok], points) - np.einsum("tk,tk->t", normal[ok], p0[ok])[:, None]
    eps = 1e-9 * scale * length[ok][:, None]
    face = np.all(side <= eps, axis=1) | np.all(side >= -eps, axis=1)
    return tri[ok][face]


def trace_sections(found: Findings) -> str:
    """The HTML of the trace pictures, one section per traced pair (plotly.js is on the page)."""
    from gjkcli.report.trace import step_texts

    out = []
    traced = [p for p in found.pairs if p.result is not None and p.result.trace]
    for k, p in enumerate(traced[:PAIRS_UP_TO]):
        a, b = found.object(p.a), found.object(p.b)
        units = found.units or (a.units if a else None) or (b.units if b else None)
        if found.dimension == 2:
            out.append(_plane_section(k, p, p.result.trace, found.rings(p.a), found.rings(p.b), units))
            continue
        ta, tb = found.triangles(p.a), found.triangles(p.b)
        texts = step_texts(p.result.trace, units,
                           hull_vertices=(a.hull_vertices, b.hull_vertices) if a and b else None)
        figure, how = _figure(p.result.trace, ta, tb)
        out.append(_section(k, p, figure, texts, how))
    if len(traced) > PAIRS_UP_TO:
        out.append(f"<p class='note'>The trace of {len(traced) - PAIRS_UP_TO} more pairs is in the "
                   f"terminal and JSON reports.</p>")
    return "".join(out)


def _section(k: int, p, figure, texts, how: str, note: str | None = None) -> str:
    import plotly.io as pio

    div = f"gjk-trace-{k}"
    plot = pio.to_html(figure, full_html=False, include_plotlyjs=False, div_id=div,
                       config={"displaylogo": False}, auto_play=False)
    data = json.dumps(texts).replace("</", "<\\/")
    return (f"<section class='trace' id='trace-{k}'><h2>Trace: {html.escape(p.a)} x {html.escape(p.b)}</h2>"
            + (f"<p class='note'>{html.escape(note)}</p>" if note else
               f"<p class='note'>The Minkowski difference A - B ({html.escape(how)}), the origin (black), "
               f"each GJK iteration's simplex, search direction d, new point w and nearest point v; then "
               f"EPA's polytope and the normal of its face nearest the origin. Move the slider or press "
               f"play.</p>")
            + f"<div class='steps'><div>{plot}</div>"
            f"<pre class='step-text' id='{div}-text'>{html.escape(texts[0] if texts else '')}</pre></div>"
            f"<script type='application/json' id='{div}-steps'>{data}</script>"
            f"<script>(function () {{ const gd = document.getElementById('{div}');"
            f" const texts = JSON.parse(document.getElementById('{div}-steps').textContent);"
            f" const pre = document.getElementById('{div}-text');"
            f" function show(name) {{ const k = Number(name); if (texts[k] !== undefined) {{"
            f" pre.textContent = texts[k]; gd.dataset.step = String(k); }} }}"
            f" gd.on('plotly_sliderchange', e => show(e.step.label.split(' ')[0] - 1));"
            f" gd.on('plotly_animatingframe', e => show(e.name));"
            f" gd.dataset.step = '0'; }})();</script></section>")


def _figure(trace, ta, tb):
    import plotly.graph_objects as go

    steps = list(trace)
    static = []
    how = "not drawn: a part has no triangles"
    extent = 1.0
    if ta is not None and tb is not None:
        pts, how = minkowski_points(ta[0], tb[0])
        extent = float(np.abs(pts).max()) or 1.0
        spread = np.linalg.svd(pts - pts.mean(axis=0), compute_uv=False) if len(pts) >= 4 else np.zeros(3)
        if len(spread) == 3 and spread[2] > 1e-9 * (spread[0] or 1.0):
            static.append(go.Mesh3d(x=pts[:, 0], y=pts[:, 1], z=pts[:, 2], alphahull=0, color="#7f9fbf",
                                    opacity=0.18, name="A - B", showlegend=True, hoverinfo="skip"))
        sample = pts if len(pts) <= 3000 else pts[np.linspace(0, len(pts) - 1, 3000).astype(int)]
        static.append(go.Scatter3d(x=sample[:, 0], y=sample[:, 1], z=sample[:, 2], mode="markers",
                                   marker=dict(size=1.5, color="#7f9fbf"), name="points of A - B",
                                   hoverinfo="skip"))
    static.append(go.Scatter3d(x=[0], y=[0], z=[0], mode="markers", marker=dict(size=6, color="black"),
                               name="origin", hoverinfo="name"))
    frames = [_frame_data(steps, k, extent) for k in range(len(steps))]
    fig = go.Figure(data=static + (frames[0] if frames else []))
    first = len(static)
    n_dynamic = len(frames[0]) if frames else 0
    fig.frames = [go.Frame(data=f, name=str(k), traces=list(range(first, first + n_dynamic)))
                  for k, f in enumerate(frames)]
    labels = [f"{k + 1} {s.phase.upper()} {int(s.iteration)}" for k, s in enumerate(steps)]
    fig.update_layout(
        scene=dict(aspectmode="data"), margin=dict(l=0, r=0, t=0, b=0), height=560,
        sliders=[dict(active=0, currentvalue=dict(prefix="step "), pad=dict(t=10),
                      steps=[dict(label=labels[k], method="animate",
                                  args=[[str(k)], dict(mode="immediate", frame=dict(duration=0, redraw=True),
                                                       transition=dict(duration=0))])
                             for k in range(len(steps))])],
        updatemenus=[dict(type="buttons", showactive=False, x=0.0, y=1.0, xanchor="left", yanchor="top",
                          buttons=[dict(label="play", method="animate",
                                        args=[None, dict(frame=dict(duration=900, redraw=True), fromcurrent=True,
                                                         transition=dict(duration=0))])])])
    return fig, how


def _frame_data(steps, k: int, extent: float) -> list:
    """The moving traces at step k: simplex or polytope, direction, w, v."""
    import plotly.graph_objects as go

    s = steps[k]
    d = np.asarray(s.direction, dtype=float)
    dn = float(np.linalg.norm(d))
    dhat = d / dn if dn > 0 else d
    w = np.asarray(s.w, dtype=float)
    empty_mesh = go.Mesh3d(x=[0, 0, 0], y=[0, 0, 0], z=[0, 0, 0], i=[0], j=[1], k=[2], opacity=0.0,
                           color="#d62728", name="EPA polytope", hoverinfo="skip", showlegend=False)
    if s.phase == "gjk":
        simplex = np.asarray(s.simplex_after, dtype=float).reshape(-1, 3)
        lam = np.asarray(s.lambdas, dtype=float).ravel()
        v = lam @ simplex if len(lam) == len(simplex) and len(simplex) else np.zeros(3)
        edges = [simplex[i] for pair in combinations(range(len(simplex)), 2) for i in pair] if len(simplex) > 1 else []
        lines = []
        for e in range(0, len(edges), 2):
            lines += [edges[e], edges[e + 1], [np.nan] * 3]
        L = np.array(lines) if lines else simplex.reshape(-1, 3)
        return [
            go.Scatter3d(x=L[:, 0], y=L[:, 1], z=L[:, 2], mode="lines+markers", connectgaps=False,
                         line=dict(color="#1f77b4", width=6), marker=dict(size=4, color="#1f77b4"),
                         name=f"simplex ({len(simplex)} points)", hoverinfo="skip"),
            go.Scatter3d(x=[0, 0.5 * extent * dhat[0]], y=[0, 0.5 * extent * dhat[1]], z=[0, 0.5 * extent * dhat[2]],
                         mode="lines+markers", line=dict(color="#2ca02c", width=5),
                         marker=dict(size=[0, 5], color="#2ca02c", symbol="diamond"),
                         name="search direction d", hoverinfo="skip"),
            go.Scatter3d(x=[w[0]], y=[w[1]], z=[w[2]], mode="markers", marker=dict(size=6, color="#ff7f0e"),
                         name="new point w", hoverinfo="skip"),
            go.Scatter3d(x=[0, v[0]], y=[0, v[1]], z=[0, v[2]], mode="lines+markers",
                         line=dict(color="#9467bd", width=4, dash="dot"), marker=dict(size=4, color="#9467bd"),
                         name=f"v, nearest the origin (|v| = {float(np.linalg.norm(v)):.4g})", hoverinfo="skip"),
            empty_mesh,
        ]
    # EPA: the polytope known so far is the hull of GJK's last simplex and the points added
    known = [np.asarray(x.simplex_after, dtype=float).reshape(-1, 3) for x in steps if x.phase == "gjk"][-1:]
    added = [np.asarray(x.w, dtype=float) for x in steps[:k] if x.phase == "epa"]
    P = np.concatenate(known + ([np.array(added)] if added else []), axis=0) if known else np.zeros((0, 3))
    F = _hull_faces(P) if len(P) >= 4 else np.zeros((0, 3), dtype=np.int64)
    face = float(s.vnorm) * dhat
    polytope = go.Mesh3d(x=P[:, 0], y=P[:, 1], z=P[:, 2], i=F[:, 0], j=F[:, 1], k=F[:, 2], color="#d62728",
                         opacity=0.35, name=f"EPA polytope ({len(P)} known points)", hoverinfo="skip",
                         flatshading=True) if len(F) else empty_mesh
    return [
        go.Scatter3d(x=P[:, 0], y=P[:, 1], z=P[:, 2], mode="markers", marker=dict(size=4, color="#d62728"),
                     name="polytope points", hoverinfo="skip"),
        go.Scatter3d(x=[0, face[0]], y=[0, face[1]], z=[0, face[2]], mode="lines+markers",
                     line=dict(color="#2ca02c", width=5), marker=dict(size=[0, 5], color="#2ca02c"),
                     name=f"nearest face normal (distance {float(s.vnorm):.4g})", hoverinfo="skip"),
        go.Scatter3d(x=[w[0]], y=[w[1]], z=[w[2]], mode="markers", marker=dict(size=6, color="#ff7f0e"),
                     name="new support point w", hoverinfo="skip"),
        go.Scatter3d(x=[0], y=[0], z=[0], mode="markers", marker=dict(size=1, color="black"), showlegend=False,
                     name="", hoverinfo="skip"),
        polytope,
    ]


# -- the plane ----------------------------------------------------------------------------------


def hull_2d(points) -> np.ndarray:
    """(k, 2) the convex hull of 2D points, counter-clockwise (Andrew's monotone chain)."""
    p = np.unique(np.asarray(points, dtype=float).reshape(-1, 2), axis=0)
    if len(p) < 3:
        return p

    def half(pts):
        out: list = []
        for q in pts:
            while len(out) >= 2 and ((out[-1][0] - out[-2][0]) * (q[1] - out[-2][1])
                                     - (out[-1][1] - out[-2][1]) * (q[0] - out[-2][0])) <= 0:
                out.pop()
            out.append(q)
        return out

    lower, upper = half(p), half(p[::-1])
    return np.array(lower[:-1] + upper[:-1])


def _closed(ring) -> np.ndarray:
    ring = np.asarray(ring, dtype=float).reshape(-1, 2)
    return np.vstack([ring, ring[:1]]) if len(ring) else ring


def _rings_xy(rings):
    """x, y of every ring, closed, separated by gaps (one trace, even-odd fill)."""
    xs, ys = [], []
    for r in rings:
        c = _closed(r)
        xs += c[:, 0].tolist() + [None]
        ys += c[:, 1].tolist() + [None]
    return xs, ys


def plane_trace_figure(trace, rings_a, rings_b, a_name: str = "A", b_name: str = "B"):
    """A plotly figure of a 2D trace as the tutorials draw it: on the left the two parts with the
    support points of the step, on the right the Minkowski difference A - B (the hull of every
    vertex difference: the parts are convex when GJK ran), the origin, and per step the simplex,
    the search direction d, the new point w and v, the simplex's point nearest the origin; for EPA
    the polygon grown so far and the normal of its edge nearest the origin. Frames per step, a
    slider and a play button."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    steps = list(trace)
    va = np.concatenate([np.asarray(r, dtype=float).reshape(-1, 2) for r in rings_a])
    vb = np.concatenate([np.asarray(r, dtype=float).reshape(-1, 2) for r in rings_b])
    diff = hull_2d((va[:, None, :] - vb[None, :, :]).reshape(-1, 2))
    extent = float(np.abs(diff).max()) or 1.0
    fig = make_subplots(rows=1, cols=2, subplot_titles=(f"the parts: A = {a_name}, B = {b_name}",
                                                        "the Minkowski difference A - B"))
    xa, ya = _rings_xy(rings_a)
    xb, yb = _rings_xy(rings_b)
    fig.add_trace(go.Scatter(x=xa, y=ya, fill="toself", mode="lines", line=dict(color="#1f77b4"),
                             fillcolor="rgba(31,119,180,0.25)", name="A", hoverinfo="name"), 1, 1)
    fig.add_trace(go.Scatter(x=xb, y=yb, fill="toself", mode="lines", line=dict(color="#ff7f0e"),
                             fillcolor="rgba(255,127,14,0.25)", name="B", hoverinfo="name"), 1, 1)
    c = _closed(diff)
    fig.add_trace(go.Scatter(x=c[:, 0], y=c[:, 1], fill="toself", mode="lines", line=dict(color="#7f9fbf"),
                             fillcolor="rgba(127,159,191,0.2)", name="A - B", hoverinfo="name"), 1, 2)
    fig.add_trace(go.Scatter(x=[0], y=[0], mode="markers", marker=dict(size=9, color="black"), name="origin",
                             hoverinfo="name"), 1, 2)
    first = len(fig.data)
    frames = [_plane_frame(steps, k, extent) for k in range(len(steps))]
    for trace_ in frames[0] if frames else []:
        fig.add_trace(trace_, 1, 2 if trace_.meta == "right" else 1)
    n_dynamic = len(frames[0]) if frames else 0
    axes = [("x2", "y2") if t.meta == "right" else ("x", "y") for t in (frames[0] if frames else [])]
    for f in frames:
        for t, (xa_, ya_) in zip(f, axes):
            t.update(xaxis=xa_, yaxis=ya_)
    fig.frames = [go.Frame(data=f, name=str(k), traces=list(range(first, first + n_dynamic)))
                  for k, f in enumerate(frames)]
    labels = [f"{k + 1} {s.phase.upper()} {int(s.iteration)}" for k, s in enumerate(steps)]
    fig.update_xaxes(scaleanchor="y", row=1, col=1)
    fig.update_xaxes(scaleanchor="y2", row=1, col=2)
    fig.update_layout(
        margin=dict(l=10, r=10, t=40, b=10), height=520,
        sliders=[dict(active=0, currentvalue=dict(prefix="step "), pad=dict(t=30),
                      steps=[dict(label=labels[k], method="animate",
                                  args=[[str(k)], dict(mode="immediate", frame=dict(duration=0, redraw=True),
                                                       transition=dict(duration=0))])
                             for k in range(len(steps))])],
        updatemenus=[dict(type="buttons", showactive=False, x=1.0, y=1.12, xanchor="right", yanchor="bottom",
                          buttons=[dict(label="play", method="animate",
                                        args=[None, dict(frame=dict(duration=900, redraw=True), fromcurrent=True,
                                                         transition=dict(duration=0))])])])
    return fig


def _plane_frame(steps, k: int, extent: float) -> list:
    """The moving traces at step k (meta "left": on the parts, "right": on A - B)."""
    import plotly.graph_objects as go

    s = steps[k]
    d = np.asarray(s.direction, dtype=float)
    dn = float(np.linalg.norm(d))
    dhat = d / dn if dn > 0 else d
    w = np.asarray(s.w, dtype=float)
    a, b = np.asarray(s.point_a, dtype=float), np.asarray(s.point_b, dtype=float)
    supports = go.Scatter(x=[a[0], b[0]], y=[a[1], b[1]], mode="markers+text", text=["a", "b"],
                          textposition="top center", marker=dict(size=10, color=["#1f77b4", "#ff7f0e"],
                                                                 line=dict(color="black", width=1)),
                          name="support points a (along d), b (along -d)", meta="left", hoverinfo="skip")
    new_point = go.Scatter(x=[w[0]], y=[w[1]], mode="markers", marker=dict(size=10, color="#d62728"),
                           name=f"new point w = a - b = ({w[0]:.4g}, {w[1]:.4g})", meta="right", hoverinfo="name")
    if s.phase == "gjk":
        simplex = np.asarray(s.simplex_after, dtype=float).reshape(-1, 2)
        lam = np.asarray(s.lambdas, dtype=float).ravel()
        v = lam @ simplex if len(lam) == len(simplex) and len(simplex) else np.zeros(2)
        ring = _closed(simplex) if len(simplex) > 2 else simplex
        shape = go.Scatter(x=ring[:, 0], y=ring[:, 1], mode="lines+markers", line=dict(color="#2ca02c", width=3),
                           marker=dict(size=7, color="#2ca02c"), name=f"simplex ({len(simplex)} points)",
                           meta="right", hoverinfo="name")
        toward = go.Scatter(x=[0, v[0]], y=[0, v[1]], mode="lines+markers",
                            line=dict(color="#9467bd", width=2, dash="dot"), marker=dict(size=5, color="#9467bd"),
                            name=f"v, nearest the origin (|v| = {float(np.linalg.norm(v)):.4g})", meta="right",
                            hoverinfo="name")
    else:
        known = [np.asarray(x.simplex_after, dtype=float).reshape(-1, 2) for x in steps if x.phase == "gjk"][-1:]
        added = [np.asarray(x.w, dtype=float) for x in steps[:k] if x.phase == "epa"]
        P = np.concatenate(known + ([np.array(added)] if added else []), axis=0) if known else np.zeros((0, 2))
        ring = _closed(hull_2d(P)) if len(P) else P
        shape = go.Scatter(x=ring[:, 0], y=ring[:, 1], mode="lines+markers", fill="toself",
                           fillcolor="rgba(214,39,40,0.15)", line=dict(color="#d62728", width=3),
                           marker=dict(size=7, color="#d62728"), name=f"EPA polygon ({len(ring) - 1} edges)",
                           meta="right", hoverinfo="name")
        face = float(s.vnorm) * dhat
        toward = go.Scatter(x=[0, face[0]], y=[0, face[1]], mode="lines+markers",
                            line=dict(color="#9467bd", width=2, dash="dot"), marker=dict(size=5, color="#9467bd"),
                            name=f"nearest edge, {float(s.vnorm):.4g} from the origin", meta="right",
                            hoverinfo="name")
    arrow = go.Scatter(x=[0, 0.35 * extent * dhat[0]], y=[0, 0.35 * extent * dhat[1]], mode="lines+markers",
                       line=dict(color="#17becf", width=3), marker=dict(size=[0, 9], color="#17becf",
                                                                        symbol="triangle-up"),
                       name=f"search direction d = ({dhat[0]:.3g}, {dhat[1]:.3g})", meta="right", hoverinfo="name")
    return [supports, shape, arrow, new_point, toward]


def _plane_section(k: int, p, trace, rings_a, rings_b, units: str | None) -> str:
    """The section of one 2D trace: `plane_trace_figure` and the narration of each step."""
    from gjkcli.report.trace import step_texts

    steps = list(trace)
    figure = plane_trace_figure(steps, rings_a, rings_b, p.a, p.b)
    note = ("The parts on the left with the step's support points; on the right A - B, the origin (black), "
            "each GJK iteration's simplex, search direction d, new point w and nearest point v; then "
            "EPA's polygon and its edge nearest the origin. Move the slider or press play.")
    return _section(k, p, figure, step_texts(steps, units), "every vertex difference", note)


def plane_trace_page(trace, rings_a, rings_b, a_name: str = "A", b_name: str = "B",
                     units: str | None = None) -> str:
    """A self-contained HTML page (plotly.js inside, no request leaves it) of one 2D trace: the
    figure of `plane_trace_figure` and, beside it, the narration of the step the slider shows
    (`gjkcli.report.trace.step_texts`)."""
    from types import SimpleNamespace

    if not trace:
        raise ValueError("the trace is empty: the pair was answered on its edges (non-convex parts), or "
                         "the query ran without trace=True")
    section = _plane_section(0, SimpleNamespace(a=a_name, b=b_name), trace, rings_a, rings_b, units)
    return self_contained(
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>gjk trace: "
        f"{html.escape(a_name)} x {html.escape(b_name)}</title>"
        "<style>body{font-family:sans-serif;margin:1em} .steps{display:flex;gap:1em;align-items:flex-start}"
        " .steps>div{flex:3;min-width:0} .step-text{flex:2;white-space:pre-wrap;font-size:13px}"
        " .note{color:#555}</style>"
        f"</head><body>{section}</body></html>")
