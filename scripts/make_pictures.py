"""Make the README's pictures from the committed samples, with the tool itself.

    docs/check.png        gjk check samples/collide_a.stl samples/collide_b.stl --png docs/check.png
    docs/scan.png         the first picture of gjk scan samples --png FOLDER (the worst violation)
    docs/html.png         gjk scan samples --html PAGE, in headless Chromium, the first row clicked
    docs/trace.png        gjk check samples/collide_a.stl samples/collide_b.stl --trace --html PAGE,
                          the trace section at its fifth step (EPA)

The HTML screenshots need the system's Chromium and Playwright (`pip install ".[test]"`); the
network is cut as in the tests.

Usage:
    python scripts/make_pictures.py [--out docs]
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"
FRAMES = "new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"


def gjk(*args) -> None:
    done = subprocess.run([sys.executable, "-m", "gjkcli", *map(str, args)], capture_output=True, text=True,
                          cwd=tempfile.gettempdir())
    if done.returncode not in (0, 1):
        raise SystemExit(f"gjk {' '.join(map(str, args))} failed: {done.stderr}")


def screenshot(page_path: Path, out: Path, *, click_row: bool = False, trace_step: int | None = None) -> None:
    from playwright.sync_api import sync_playwright

    browser_path = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser_path is None:
        raise SystemExit("no chromium on this machine: apt-get install -y chromium")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=browser_path, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1100, "height": 900})
        page.route("**/*", lambda r: r.continue_() if r.request.url.startswith("file://") else r.abort())
        page.goto(f"file://{page_path}")
        page.wait_for_function("document.querySelector('#gjk-scene .gl-container canvas') !== null", timeout=60_000)
        page.evaluate(FRAMES)
        if click_row:
            page.click("#findings tr.row >> nth=0")
            page.evaluate(FRAMES)
            page.wait_for_timeout(300)
            page.screenshot(path=str(out), clip={"x": 0, "y": 0, "width": 1100, "height": 900})
        else:
            page.evaluate(f"Plotly.animate('gjk-trace-0', ['{trace_step}'], {{mode: 'immediate', "
                          "frame: {duration: 0, redraw: true}, transition: {duration: 0}})")
            page.evaluate(FRAMES)
            page.wait_for_timeout(300)
            page.locator("#trace-0").screenshot(path=str(out))
        browser.close()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs")
    args = parser.parse_args(argv)
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    a, b = SAMPLES / "collide_a.stl", SAMPLES / "collide_b.stl"
    gjk("check", a, b, "--png", out / "check.png", "-q")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        gjk("scan", SAMPLES, "--together", "--png", tmp / "scan", "-q")
        shutil.copyfile(sorted((tmp / "scan").iterdir())[0], out / "scan.png")
        gjk("scan", SAMPLES, "--together", "--html", tmp / "scan.html", "-q")
        screenshot(tmp / "scan.html", out / "html.png", click_row=True)
        gjk("check", a, b, "--trace", "--html", tmp / "trace.html", "-q")
        screenshot(tmp / "trace.html", out / "trace.png", trace_step=4)
    for name in ("check.png", "scan.png", "html.png", "trace.png"):
        print(f"wrote {out / name} ({(out / name).stat().st_size / 1e3:.0f} kB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
