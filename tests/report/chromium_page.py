"""A real headless Chromium for the pages' tests, with the network cut.

Debian's `chromium` (installed by .ci/run when missing) is driven through Playwright's Python
API at `executable_path`; Playwright downloads nothing. Every request that is not for a file://
URL is aborted and recorded, console messages and page errors are collected.

Without the browser (or Playwright) the tests skip on a developer's machine, and fail in CI
(the environment variable CI set, as .ci/run and CI services set it): a browser test never skips
silently there.
"""
from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field

import pytest

CANDIDATES = ("chromium", "chromium-browser", "google-chrome")


def browser_path() -> str | None:
    for name in CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return None


def missing(why: str):
    """Skip on a developer's machine; fail in CI."""
    if os.environ.get("CI"):
        pytest.fail(f"{why} (CI is set: the browser tests must run; .ci/run installs chromium)")
    pytest.skip(why)


@dataclass
class Loaded:
    page: object
    console: list = field(default_factory=list)  # (type, text)
    errors: list = field(default_factory=list)  # page errors (uncaught exceptions)
    blocked: list = field(default_factory=list)  # URLs the page asked for off the file system

    @property
    def console_errors(self) -> list:
        return [text for kind, text in self.console if kind == "error"]


@pytest.fixture(scope="session")
def chromium():
    path = browser_path()
    if path is None:
        missing("no Chromium on this machine (apt-get install -y chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing("Playwright is not installed (pip install '.[test]')")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=path, args=["--no-sandbox"])
        try:
            yield browser
        finally:
            browser.close()


# the 3D scene's WebGL canvas; a 2D plot (2D drawings) draws SVG: pass DRAWN_2D
DRAWN_3D = "#gjk-scene .gl-container canvas"
DRAWN_2D = "#gjk-scene .main-svg .scatterlayer .trace"


def open_page(browser, path, *, width: int = 1280, height: int = 900, drawn: str = DRAWN_3D,
              plot: str = "gjk-scene") -> Loaded:
    """Open a local file with the network cut; returns once the plot has drawn (`drawn`, a CSS
    selector, is in the document, and plotly has laid out the element of id `plot`)."""
    page = browser.new_page(viewport={"width": width, "height": height})
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
    page.wait_for_function(
        f"document.querySelector({drawn!r}) !== null"
        f" && document.getElementById({plot!r})._fullLayout !== undefined", timeout=60_000, polling=100)
    settle(page)
    return loaded


def settle(page) -> None:
    """Two animation frames: what was asked of WebGL is on the canvas."""
    page.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")


def pixel_spread(png: bytes) -> float:
    """The standard deviation of a screenshot's grey levels: 0 for a blank picture."""
    import io

    import numpy as np
    from PIL import Image

    grey = np.asarray(Image.open(io.BytesIO(png)).convert("L"), dtype=float)
    return float(grey.std())
