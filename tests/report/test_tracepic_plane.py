"""The 2D trace pictures' helpers (gjkcli.report.tracepic); the page itself is opened in headless
Chromium in tests/report/test_html_page.py (one browser a session)."""
from __future__ import annotations

import numpy as np

from gjkcli.report import tracepic


def test_hull_2d_against_a_brute_force_check():
    rng = np.random.default_rng(7)
    pts = rng.normal(size=(200, 2))
    hull = tracepic.hull_2d(pts)
    edges = np.roll(hull, -1, axis=0) - hull
    # every point on the inner side of every edge, and the ring counter-clockwise
    side = edges[:, 0, None] * (pts[None, :, 1] - hull[:, 1, None]) - edges[:, 1, None] * (pts[None, :, 0] - hull[:, 0, None])
    assert np.all(side >= -1e-12)
    assert len(hull) >= 3 and set(map(tuple, hull)) <= set(map(tuple, pts))
