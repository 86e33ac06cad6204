"""The 2D trace drawn (gjkcli.report.tracepic.plane_trace_page) in a real headless Chromium with
the network cut: the dyn4j example's steps, one frame each, the narration following the slider."""
from __future__ import annotations

import os

import numpy as np

from chromium_page import Loaded, chromium, pixel_spread, settle  # noqa: F401 (fixture)
from gjkcli.engine import plane
from gjkcli.report import tracepic
from gjkcli.report.trace import step_texts


def open_plot(browser, path) -> Loaded:
    """Open a local page with the network cut; returns once the 2D plot has drawn."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    loaded = Loaded(page)

    def route(r):
        if r.request.url.startswith("file://"):
            r.continue_()
        else:
            loaded.blocked.append(r.request.url)
            r.abort()

    page.route("**/*", route)
    page.on("console", lambda m: loaded.console.append((m.type, m.text)))
    page.on("pageerror", lambda e: loaded.errors.append(str(e)))
    page.goto(f"file://{os.path.abspath(path)}", timeout=60_000)
    page.wait_for_function("document.getElementById('gjk-trace-0') !== null"
                           " && document.getElementById('gjk-trace-0')._fullLayout !== undefined",
                           timeout=60_000, polling=100)
    settle(page)
    return loaded


def test_hull_2d_against_a_brute_force_check():
    rng = np.random.default_rng(7)
    pts = rng.normal(size=(200, 2))
    hull = tracepic.hull_2d(pts)
    edges = np.roll(hull, -1, axis=0) - hull
    # every point on the inner side of every edge, and the ring counter-clockwise
    side = edges[:, 0, None] * (pts[None, :, 1] - hull[:, 1, None]) - edges[:, 1, None] * (pts[None, :, 0] - hull[:, 0, None])
    assert np.all(side >= -1e-12)
    assert len(hull) >= 3 and set(map(tuple, hull)) <= set(map(tuple, pts))


def test_the_dyn4j_trace_in_chromium(chromium, tmp_path):
    a = plane.Polygon([(4, 11), (9, 9), (4, 5)])
    b = plane.Polygon([(5, 7), (12, 7), (10, 2), (7, 3)])
    r = plane.query(a, b, start=(1, -1), trace=True)
    steps, texts = r.trace, step_texts(r.trace)
    path = tmp_path / "trace.html"
    path.write_text(tracepic.plane_trace_page(r.trace, a.rings, b.rings, "shape1", "shape2"))
    loaded = open_plot(chromium, path)
    page = loaded.page
    assert page.evaluate("document.getElementById('gjk-trace-0')._transitionData._frames.length") == len(steps)
    assert page.inner_text("#gjk-trace-0-text").strip() == texts[0].strip()
    assert "(4, 2)" in texts[0]
    # the first frame's support points are the article's (9, 9) and (5, 7)
    xy = page.evaluate("(() => { const d = document.getElementById('gjk-trace-0').data;"
                       " const t = d.find(t => t.name.startsWith('support points')); return [t.x, t.y]; })()")
    assert xy == [[9, 5], [9, 7]]
    legend = page.locator("#gjk-trace-0 .legend").text_content()
    assert "A - B" in legend and "simplex" in legend
    last = len(steps) - 1
    page.evaluate(f"Plotly.animate('gjk-trace-0', ['{last}'], "
                  "{mode: 'immediate', frame: {duration: 0, redraw: true}, transition: {duration: 0}})")
    page.wait_for_function(f"document.getElementById('gjk-trace-0').dataset.step === '{last}'", timeout=10_000)
    settle(page)
    assert page.inner_text("#gjk-trace-0-text").strip() == texts[-1].strip()
    assert "EPA polygon" in page.locator("#gjk-trace-0 .legend").text_content()
    assert pixel_spread(page.locator("#gjk-trace-0").screenshot()) > 5.0
    assert loaded.console_errors == [] and loaded.errors == [] and loaded.blocked == []
    page.close()
