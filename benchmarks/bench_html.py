"""`gjk scan --html` on the benchmark scene: the page's size and how long headless Chromium takes
to draw it.

scripts/make_scan_scene.py writes the scene (10,000 convex parts by default, about 7,700 colliding
pairs) into a temporary folder; `gjk scan FILE --mode hull --html PAGE -q` writes the page (wall
time of the whole process, and without --html for comparison); then the system's Chromium,
headless through Playwright at `executable_path` with every request off the file system aborted,
opens the page `--repeat` times in fresh pages: the render time is from the navigation to the
first frame after the 3D scene's WebGL canvas exists and plotly has laid the figure out (two
animation frames later), and the time a click on the first row of the table takes to reframe
that pair. The median is printed, with the machine's load average (the render is software WebGL
on the CPU: a busy machine reads slower).

Budget (issue 11): under 20 MB and under 10 s.

Usage:
    python benchmarks/bench_html.py [--parts 10000] [--seed 0] [--repeat 3] [--keep DIR] [--json FILE]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# Timed runs are fresh runs: the gjk processes started here neither read nor write a cache
# (benchmarks/bench_cache.py times the cache).
os.environ.setdefault("GJK_NO_CACHE", "1")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

FRAMES = "new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"
DRAWN = ("document.querySelector('#gjk-scene .gl-container canvas') !== null"
         " && document.getElementById('gjk-scene')._fullLayout !== undefined")


def scan(path: Path, page: Path | None) -> float:
    argv = [sys.executable, "-m", "gjkcli", "scan", str(path), "--mode", "hull", "-q"]
    if page is not None:
        argv += ["--html", str(page)]
    t0 = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True)
    if done.returncode not in (0, 1):
        raise RuntimeError(f"gjk scan failed ({done.returncode}): {done.stderr[-2000:]}")
    return time.perf_counter() - t0


def render(page_path: Path, repeat: int) -> tuple[list[float], list[float], list[str]]:
    from playwright.sync_api import sync_playwright

    browser_path = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser_path is None:
        raise SystemExit("no chromium on this machine: apt-get install -y chromium")
    draws, clicks, problems = [], [], []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=browser_path, args=["--no-sandbox"])
        for _ in range(repeat):
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.route("**/*", lambda r: r.continue_() if r.request.url.startswith("file://") else
                       (problems.append(f"blocked {r.request.url}"), r.abort()))
            page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: problems.append(str(e)))
            t0 = time.perf_counter()
            page.goto(f"file://{page_path}", timeout=120_000)
            page.wait_for_function(DRAWN, timeout=120_000, polling=50)
            page.evaluate(FRAMES)
            draws.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            page.click("#findings tr.row >> nth=0")
            page.evaluate(FRAMES)
            clicks.append(time.perf_counter() - t0)
            page.close()
        browser.close()
    return draws, clicks, problems


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--parts", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="write the scene and the page here and keep them")
    parser.add_argument("--json", type=Path, help="also write the figures as JSON")
    args = parser.parse_args(argv)
    import make_scan_scene

    folder = args.keep or Path(tempfile.mkdtemp(prefix="gjk-bench-html-"))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        scene = make_scan_scene.make(args.parts, folder / f"scene_{args.parts}.glb", seed=args.seed)
        page = (folder / "scan.html").resolve()
        plain = scan(scene, None)
        with_html = scan(scene, page)
        size = page.stat().st_size
        draws, clicks, problems = render(page, args.repeat)
    finally:
        if args.keep is None:
            shutil.rmtree(folder, ignore_errors=True)
    load = os.getloadavg()
    result = {"parts": args.parts, "page_bytes": size, "scan_s": plain, "scan_html_s": with_html,
              "render_s": statistics.median(draws), "renders": draws, "click_s": statistics.median(clicks),
              "load_average": load, "problems": problems}
    print(f"| parts | page (MB) | gjk scan -q (s) | with --html (s) | render, median of {args.repeat} (s) "
          f"| click a row (s) |")
    print("|---|---|---|---|---|---|")
    print(f"| {args.parts:,} | {size / 1e6:.1f} | {plain:.2f} | {with_html:.2f} | "
          f"{statistics.median(draws):.2f} | {statistics.median(clicks):.2f} |")
    print(f"renders: {', '.join(f'{d:.2f}' for d in draws)} s; load average {load[0]:.2f}, "
          f"{load[1]:.2f}, {load[2]:.2f} on {os.cpu_count()} cores")
    if problems:
        print("page problems: " + "; ".join(problems[:5]))
    budget = size < 20e6 and statistics.median(draws) < 10.0 and not problems
    print("within the budget (< 20 MB, < 10 s, no console error): " + ("yes" if budget else "NO"))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    return 0 if budget else 1


if __name__ == "__main__":
    sys.exit(main())
