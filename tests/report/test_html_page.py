"""`--html`: the page in a real headless Chromium with the network cut (tests/report/chromium_page.py),
and what the page is made of.

The browser tests assert what a reader sees: the page loads with no console error and no request
off the file system, the plot has drawn (a WebGL canvas, a screenshot that is not blank), the
findings' names and numbers are in the document, and a click on a row of the table frames that
pair (the 3D scene's axis ranges and camera change to the pair's box).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from chromium_page import DRAWN_2D, chromium, open_page, pixel_spread, settle  # noqa: F401 (fixture)
from gjkcli.cli import main
from gjkcli.pipeline import run as pipeline
from gjkcli.report.html import html_page

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples"


def gjk(*args) -> object:
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def scene_state(page) -> dict:
    return page.evaluate("""() => {
        const s = document.getElementById('gjk-scene')._fullLayout.scene;
        return {eye: s.camera.eye, x: s.xaxis.range, y: s.yaxis.range, z: s.zaxis.range};
    }""")


@pytest.fixture(scope="module")
def check_page(tmp_path_factory):
    out = tmp_path_factory.mktemp("html") / "check.html"
    r = gjk("check", SAMPLES / "collide_a.stl", SAMPLES / "collide_b.stl", "--trace", "--html", out, "-q")
    assert r.exit_code == 1 and out.is_file()
    return out


def test_check_page_with_its_trace_in_chromium(chromium, check_page):
    loaded = open_page(chromium, check_page)
    page = loaded.page
    assert loaded.errors == [] and loaded.console_errors == []
    assert loaded.blocked == []  # nothing asked of the network
    assert page.locator("#gjk-scene .gl-container canvas").count() >= 1
    assert pixel_spread(page.locator("#gjk-scene").screenshot()) > 5.0
    text = page.inner_text("body")
    found = pipeline.check(str(SAMPLES / "collide_a.stl"), str(SAMPLES / "collide_b.stl"))
    (pair,) = found.pairs
    assert "collide_a.stl" in text and "collide_b.stl" in text and "collision" in text
    assert f"{pair.result.depth:.6g}" in text and f"{pair.overlap_volume:.6g}" in text
    # the legend names both parts and the overlap solid
    legend = page.locator("#gjk-scene .legend").text_content()
    assert "collide_a.stl" in legend and "overlap" in legend
    before = scene_state(page)
    page.click("#findings tr.row >> nth=0")
    settle(page)
    after = scene_state(page)
    assert after != before and after["eye"] != before["eye"]
    assert "collision" in page.inner_text("#detail")
    # the trace (--trace --html): the slider's steps are the trace's, each with its narration
    from gjkcli.report.trace import step_texts

    steps = pipeline.check(str(SAMPLES / "collide_a.stl"), str(SAMPLES / "collide_b.stl"),
                           pipeline.Options(trace=True)).pairs[0].result.trace
    texts = step_texts(steps)
    assert {s.phase for s in steps} == {"gjk", "epa"}
    assert page.locator("section.trace").count() == 1
    assert page.evaluate("document.getElementById('gjk-trace-0')._transitionData._frames.length") == len(steps)
    assert page.inner_text("#gjk-trace-0-text").strip() == texts[0].strip()
    labels = page.evaluate("document.getElementById('gjk-trace-0').layout.sliders[0].steps.map(s => s.label)")
    assert len(labels) == len(steps) and labels[-1].endswith(f"EPA {steps[-1].iteration}")
    page.evaluate(f"Plotly.animate('gjk-trace-0', ['{len(steps) - 1}'], "
                  "{mode: 'immediate', frame: {duration: 0, redraw: true}, transition: {duration: 0}})")
    page.wait_for_function(f"document.getElementById('gjk-trace-0').dataset.step === '{len(steps) - 1}'",
                           timeout=10_000)
    assert page.inner_text("#gjk-trace-0-text").strip() == texts[-1].strip()
    assert pixel_spread(page.locator("#gjk-trace-0").screenshot()) > 5.0
    assert loaded.console_errors == [] and loaded.errors == []
    page.close()


def test_scan_page_frames_the_clicked_pair(chromium, tmp_path):
    out = tmp_path / "scan.html"
    assert gjk("scan", SAMPLES, "--no-recurse", "--together", "--html", out, "-q").exit_code == 1
    found = pipeline.scan([str(SAMPLES)], pipeline.Options(jobs=1, recurse=False))
    loaded = open_page(chromium, out)
    page = loaded.page
    assert loaded.errors == [] and loaded.console_errors == [] and loaded.blocked == []
    rows = page.locator("#findings tr.row")
    assert rows.count() == len(found.pairs)
    # the table reads in the findings' order (the terminal table's)
    for k in (0, len(found.pairs) - 1):
        cells = rows.nth(k).locator("td").all_inner_texts()
        assert cells[1:4] == [found.pairs[k].status.value, found.pairs[k].a, found.pairs[k].b]
    k = len(found.pairs) - 1
    rows.nth(k).click()
    settle(page)
    state = scene_state(page)
    p = found.pairs[k]
    a, b = found.object(p.a), found.object(p.b)
    for axis, name in enumerate("xyz"):
        lo, hi = state[name]
        assert lo <= min(a.bounds[0][axis], b.bounds[0][axis]) and hi >= max(a.bounds[1][axis], b.bounds[1][axis])
        # framed: the range is about the pair's size, not the scene's
        assert hi - lo < 2 * max(a.bounds[1][i] - a.bounds[0][i] for i in range(3)) + \
            2 * max(b.bounds[1][i] - b.bounds[0][i] for i in range(3))
    assert page.locator("#findings tr.sel").count() == 1
    page.close()


def test_a_click_keeps_the_plot_in_view_and_reads_like_the_report(chromium, tmp_path):
    """Issue 28's pictures: a row clicked far down the table brings the plot back into view; the
    separating plane is a small patch at the witness points in a colour no part has; the depth
    column and the witness points read with units and as coordinates, as the terminal table."""
    from gjkcli.report.html import PLANE_PATCH
    from gjkcli.report.page import pair_size
    from gjkcli.report.pictures import COLOURS, CONTEXT_COLOUR, OVERLAP_COLOUR, PLANE_COLOUR, STATUS_COLOURS
    from gjkcli.report.trace import vec

    out = tmp_path / "all.html"
    assert gjk("scan", SAMPLES, "--no-recurse", "--together", "--all-pairs", "--html", out, "-q").exit_code == 1
    found = pipeline.scan([str(SAMPLES)], pipeline.Options(jobs=1, recurse=False, all_pairs=True))
    planes = [k for k, p in enumerate(found.pairs) if getattr(p.result.certificate, "kind", None) == "plane"]
    assert planes, "no clear pair with a separating plane among the samples"
    k = planes[0]
    p = found.pairs[k]
    loaded = open_page(chromium, out, height=700)
    page = loaded.page
    assert loaded.errors == [] and loaded.console_errors == [] and loaded.blocked == []
    top = "document.getElementById('main').getBoundingClientRect().top"
    row = page.locator("#findings tr.row").nth(k)
    row.scroll_into_view_if_needed()
    assert page.evaluate(top) < -300  # the plot is out of sight ...
    row.click()
    settle(page)
    assert 0 <= page.evaluate(top) <= 5  # ... and back in view once the row is clicked
    page.screenshot(path=str(tmp_path / "clicked.png"))
    assert pixel_spread(page.locator("#gjk-scene").screenshot()) > 5.0

    # the witness points as coordinates, the normal too (no raw arrays)
    detail = page.inner_text("#detail")
    assert f"witness A {vec(p.result.point_a)}" in detail and f"witness B {vec(p.result.point_b)}" in detail
    assert "[" not in detail
    # the depth / gap column: no input states a unit, and the header says so
    assert "depth / gap (model units)" in page.locator("#findings thead").inner_text()

    # the separating plane: one patch per plane, centred between the witness points, small
    trace = page.evaluate("""() => document.getElementById('gjk-scene').data
        .filter(t => (t.name || '').startsWith('separating plane'))
        .map(t => ({colour: t.color, x: Array.from(t.x), y: Array.from(t.y), z: Array.from(t.z)}))""")
    assert len(trace) == 1
    assert trace[0]["colour"] == PLANE_COLOUR
    assert PLANE_COLOUR not in (*COLOURS, CONTEXT_COLOUR, OVERLAP_COLOUR, *STATUS_COLOURS.values())
    corners = np.array([trace[0][c] for c in "xyz"]).T
    assert len(corners) == 4 * len(planes)
    square = corners[:4]
    a, b = np.asarray(p.result.point_a), np.asarray(p.result.point_b)
    assert np.linalg.norm(square.mean(axis=0) - 0.5 * (a + b)) <= 0.5 * np.linalg.norm(b - a) + 1e-6
    across = np.linalg.norm(square[2] - square[0])  # the diagonal
    assert across <= np.sqrt(2) * max(PLANE_PATCH * pair_size(found, p), np.linalg.norm(b - a)) + 1e-6
    assert across < 0.5 * pair_size(found, p)  # a patch, not a sheet across the scene
    assert "separating plane" in page.locator("#gjk-scene .legend").text_content()
    page.close()


def test_a_big_scene_draws_the_findings_objects(chromium, tmp_path):
    """Past BIG_SCENE objects, the page draws the objects of findings (merged, one trace) and
    says how many of the scene's objects it drew."""
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import make_scan_scene
    finally:
        sys.path.pop(0)
    glb = tmp_path / "scene.glb"
    make_scan_scene.make(120, glb, seed=4)
    out = tmp_path / "big.html"
    assert gjk("scan", glb, "--mode", "hull", "--html", out, "-q").exit_code == 1
    loaded = open_page(chromium, out)
    page = loaded.page
    assert loaded.errors == [] and loaded.console_errors == [] and loaded.blocked == []
    text = page.inner_text("body")
    assert "objects drawn" in text and "objects of findings" in page.locator("#gjk-scene .legend").text_content()
    assert pixel_spread(page.locator("#gjk-scene").screenshot()) > 5.0
    page.close()


# -- without a browser ----------------------------------------------------------------------------


def test_names_are_escaped_and_the_page_needs_no_network(tmp_path):
    import trimesh

    a = tmp_path / "<b>bolt&1.stl"
    trimesh.creation.box((1, 1, 1)).export(a)
    b = tmp_path / "nut.stl"
    m = trimesh.creation.box((1, 1, 1))
    m.apply_translation([0.5, 0, 0])
    m.export(b)
    text = html_page(pipeline.check(str(a), str(b)))
    import re

    markup = re.sub(r"<script[^>]*>.*?</script>", "", text, flags=re.S)  # the page outside its data
    assert "<b>bolt" not in markup and "&lt;b&gt;bolt&amp;1.stl" in markup
    # plotly.js is inside; no script or stylesheet is fetched
    assert "<script src=" not in text and "<link" not in text
    data = text.split('id="gjk-data">', 1)[1].split("</script>", 1)[0]
    assert json.loads(data)["pairs"][0]["a"] == "<b>bolt&1.stl"

    # a name can never close a script element of the page (a manifest's names are free text)
    m = tmp_path / "m.toml"
    m.write_text('[[object]]\nname = "</script><i>x"\nbox = [1, 1, 1]\n\n[[object]]\nname = "b"\n'
                 'box = [1, 1, 1]\ntranslate = [0.5, 0, 0]\n')
    text = html_page(pipeline.scan([], pipeline.Options(jobs=1), manifest=m))
    assert text.count("</script>") == text.count("<script")


def test_html_refuses_to_overwrite_an_input_and_writes_whole(tmp_path):
    a = tmp_path / "a.stl"
    a.write_bytes((SAMPLES / "collide_a.stl").read_bytes())
    r = CliRunner().invoke(main, ["check", str(a), str(SAMPLES / "collide_b.stl"), "--html", str(a)])
    assert r.exit_code == 2 and "refusing to write over it" in r.output
    assert a.read_bytes() == (SAMPLES / "collide_a.stl").read_bytes()
    missing = tmp_path / "no" / "such" / "page.html"
    r = CliRunner().invoke(main, ["check", str(a), str(SAMPLES / "collide_b.stl"), "--html", str(missing)])
    assert r.exit_code == 2 and "cannot write the HTML page" in r.output
    assert not list(tmp_path.glob("**/.gjk-*"))


def test_open_needs_html_and_a_terminal(tmp_path, monkeypatch):
    import click

    launched = []
    monkeypatch.setattr(click, "launch", lambda url, **k: launched.append(url))
    r = CliRunner().invoke(main, ["check", str(SAMPLES / "collide_a.stl"), str(SAMPLES / "collide_b.stl"), "--open"])
    assert r.exit_code == 2 and "--html" in r.output
    out = tmp_path / "p.html"
    r = CliRunner().invoke(main, ["check", str(SAMPLES / "collide_a.stl"), str(SAMPLES / "collide_b.stl"),
                                  "--html", str(out), "--open", "-q"])
    assert r.exit_code == 1 and out.is_file()
    assert launched == []  # CliRunner's stdout is not a terminal


def test_check_without_pictures_imports_no_plotting_library(tmp_path):
    import subprocess

    code = ("import sys; from click.testing import CliRunner; from gjkcli.cli import main; "
            f"CliRunner().invoke(main, ['check', {str(SAMPLES / 'collide_a.stl')!r}, "
            f"{str(SAMPLES / 'collide_b.stl')!r}]); "
            "print(sorted(m for m in ('plotly', 'matplotlib', 'PIL') if m in sys.modules))")
    import os

    import gjkcli

    env = {**os.environ, "PYTHONPATH": str(Path(gjkcli.__file__).resolve().parents[1])}
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


# -- the trace as pictures ------------------------------------------------------------------------


def test_minkowski_difference_of_two_boxes():
    """A = [-1, 1]^3, B = [-0.5, 0.5]^3 + t: A - B = [-1.5, 1.5]^3 - t, exactly (all differences)
    or on its surface (sampled supports, forced by a tiny threshold)."""
    import itertools

    from gjkcli.report import tracepic

    corners = np.array(list(itertools.product((-1.0, 1.0), repeat=3)))
    t = np.array([0.3, -0.2, 2.0])
    A, B = corners, 0.5 * corners + t
    pts, how = tracepic.minkowski_points(A, B)
    assert "differences" in how
    assert np.allclose(pts.min(axis=0), -1.5 - t) and np.allclose(pts.max(axis=0), 1.5 - t)
    old = tracepic.ALL_DIFFERENCES_UP_TO
    tracepic.ALL_DIFFERENCES_UP_TO = 0
    try:
        pts, how = tracepic.minkowski_points(A, B)
    finally:
        tracepic.ALL_DIFFERENCES_UP_TO = old
    assert "sampled" in how
    # every support point of A - B along a direction is one of its corners
    assert np.allclose(np.abs(pts + t), 1.5)
    faces = tracepic._hull_faces(corners)
    assert len(faces) and set(faces.ravel().tolist()) == set(range(8))
    for f in faces:  # each hull triangle lies in one of the cube's 6 planes
        assert any(np.allclose(corners[f][:, axis], corners[f][0, axis]) for axis in range(3))


# -- --html on 2D drawings, in a real headless Chromium ---------------------------------------------

NEST = ROOT / "samples" / "flat" / "nest.dxf"


def test_2d_scan_page_in_chromium_frames_the_clicked_pair(chromium, tmp_path):
    out = tmp_path / "nest.html"
    r = gjk("scan", NEST, "--clearance", "0.5", "--sheet-layer", "SHEET", "--html", out, "-q")
    assert r.exit_code == 1 and out.is_file()
    found = pipeline.scan([NEST], pipeline.Options(clearance=0.5, sheet_layer="SHEET"))
    loaded = open_page(chromium, out, drawn=DRAWN_2D)
    page = loaded.page
    assert loaded.errors == [] and loaded.console_errors == [] and loaded.blocked == []
    assert pixel_spread(page.locator("#gjk-scene").screenshot()) > 5.0
    rows = page.locator("#findings tr.row")
    assert rows.count() == len(found.pairs)
    # the legend names the parts of findings and the sheet
    legend = page.locator("#gjk-scene .legend").text_content()
    assert found.pairs[2].a in legend and "sheet:SHEET" in legend
    k = 2  # an overlap between two parts
    p = found.pairs[k]
    assert p.b != "sheet:SHEET"
    rows.nth(k).click()
    settle(page)
    state = page.evaluate("""() => {
        const l = document.getElementById('gjk-scene')._fullLayout;
        return {x: l.xaxis.range, y: l.yaxis.range};
    }""")
    a, b = found.object(p.a), found.object(p.b)
    for axis, name in enumerate("xy"):
        lo, hi = state[name]
        assert lo <= min(a.bounds[0][axis], b.bounds[0][axis]) and hi >= max(a.bounds[1][axis], b.bounds[1][axis])
        assert hi - lo < 4 * max(b.bounds[1][axis] - a.bounds[0][axis], 1.0)  # the pair, not the sheet
    assert page.locator("#findings tr.sel").count() == 1 and p.a in page.inner_text("#detail")
    # the drawing states its unit: every number of the table and the detail carries it
    assert found.units == "mm"
    assert rows.nth(k).locator("td").nth(4).inner_text().endswith(" mm")
    assert page.locator("#findings thead").inner_text().count("(model units)") == 0
    from gjkcli.report.trace import vec

    detail = page.inner_text("#detail")
    assert f"witness A {vec(p.result.point_a)} mm" in detail and "[" not in detail
    page.close()


# -- the trace in the plane (gjkcli.report.tracepic.plane_trace_page) ---------------------------------


def open_plot(browser, path):
    """Open a page of a 2D trace with the network cut; returns once its first trace plot has drawn."""
    return open_page(browser, path, drawn="#gjk-trace-0 .main-svg", plot="gjk-trace-0")


def test_the_dyn4j_trace_in_chromium(chromium, tmp_path):
    from gjkcli.engine import plane
    from gjkcli.report import tracepic
    from gjkcli.report.trace import step_texts

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


def test_the_dyn4j_check_page_from_the_command_line_in_chromium(chromium, tmp_path):
    """`gjk check shape1.svg shape2.svg --trace --start-direction 1,-1 --html`: the 2D page with
    the findings and, below them, the trace in the plane, as a reader opens it."""
    out = tmp_path / "dyn4j.html"
    dyn4j = SAMPLES / "dyn4j"
    r = gjk("check", dyn4j / "shape1.svg", dyn4j / "shape2.svg", "--trace", "--start-direction", "1,-1",
            "--html", out, "-q")
    assert r.exit_code == 1 and out.is_file()
    loaded = open_plot(chromium, out)
    page = loaded.page
    assert page.locator("section.trace").count() == 1
    assert "shape1.svg" in page.locator("#findings").inner_text()
    assert "collision" in page.locator("#findings").inner_text().lower()
    text = page.inner_text("#gjk-trace-0-text")
    assert "(4, 2)" in text  # the article's first support point, (9, 9) - (5, 7)
    xy = page.evaluate("(() => { const d = document.getElementById('gjk-trace-0').data;"
                       " const t = d.find(t => t.name.startsWith('support points')); return [t.x, t.y]; })()")
    assert xy == [[9, 5], [9, 7]]
    frames = page.evaluate("document.getElementById('gjk-trace-0')._transitionData._frames.length")
    assert frames >= 3
    assert pixel_spread(page.locator("#gjk-trace-0").screenshot()) > 5.0
    assert loaded.console_errors == [] and loaded.errors == [] and loaded.blocked == []
    page.close()


def test_a_two_part_page_costs_plotly_deflated_and_little_more(tmp_path):
    """plotly.js goes in deflated (gjkcli.report.plotlyjs): a page of two small parts is well under
    half of plotly.min.js; beyond the deflated bundle it holds its meshes, data and script (tens of
    kB), and plotly.js is not in it a second time as text. The Chromium tests above open such
    pages offline and draw them."""
    from plotly.offline import get_plotlyjs

    from gjkcli.report.plotlyjs import AFTER_PLOTLY

    bundle = get_plotlyjs()
    text = html_page(pipeline.check(str(SAMPLES / "collide_a.stl"), str(SAMPLES / "collide_b.stl")))
    assert len(text.encode()) < 0.45 * len(bundle.encode())
    packed = text.split('id="gjk-plotlyjs">', 1)[1].split("</script>", 1)[0]
    assert len(text) - len(packed) < 150_000
    assert bundle[1000:1100] not in text
    # every script that needs Plotly waits for it: none runs before the bundle is inflated
    assert "Plotly.newPlot" in text and text.count(f'<script type="{AFTER_PLOTLY}">') >= 2
    assert '<script type="text/javascript">' not in text
