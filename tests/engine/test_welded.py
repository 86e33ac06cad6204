"""`gjkcli.engine.shells.welded` splits faces at T-junctions found by NumPy alone: the same faces
as a search of every point within the ball around each open edge (what a k-d tree's ball query
gives), and no SciPy imported (its spatial package is 0.25 to 0.4 s of a small IFC scan)."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from gjkcli.engine import shells
from gjkcli.engine.shells import closed_shells, welded


def _box_with_split_top(n: int, rng) -> tuple:
    """A unit box whose top face is an n x n grid of squares (two triangles each) while its four
    sides keep their long top edges: 4 (n - 1) T-junctions; placed by a seeded rotation, scale
    and offset."""
    g = np.linspace(0.0, 1.0, n + 1)
    top = np.array([(x, y, 1.0) for y in g for x in g])
    idx = lambda i, j: j * (n + 1) + i  # noqa: E731
    faces = []
    for j in range(n):
        for i in range(n):
            a, b, c, d = idx(i, j), idx(i + 1, j), idx(i + 1, j + 1), idx(i, j + 1)
            faces += [(a, b, c), (a, c, d)]
    base = len(top)
    bottom = np.array([(0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 1, 0)], dtype=float)
    b0, b1, b2, b3 = range(base, base + 4)
    t0, t1, t2, t3 = idx(0, 0), idx(n, 0), idx(n, n), idx(0, n)
    faces += [(b0, b2, b1), (b0, b3, b2),  # bottom, outward -z
              (b0, b1, t1), (b0, t1, t0), (b1, b2, t2), (b1, t2, t1),  # sides, outward
              (b2, b3, t3), (b2, t3, t2), (b3, b0, t0), (b3, t0, t3)]
    v = np.concatenate([top, bottom])
    q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    v = (v * rng.uniform(0.5, 20.0)) @ q.T + rng.uniform(-1e3, 1e3, size=3)
    return v, np.array(faces, dtype=np.int64)


class _Ball:
    """The exact ball query, every point tested: the oracle for `shells._Near`."""

    def __init__(self, points):
        self.points = points

    def within(self, centre, r):
        return np.flatnonzero(np.linalg.norm(self.points - centre, axis=1) <= r)


@pytest.mark.parametrize("seed", range(6))
def test_welded_splits_the_t_junctions_as_a_ball_search_does(seed, monkeypatch):
    rng = np.random.default_rng(seed)
    v, f = _box_with_split_top(int(rng.integers(2, 9)), rng)
    size = float(np.linalg.norm(v.max(axis=0) - v.min(axis=0)))
    got_v, got_f = welded(v, f, size)
    # the T-junctions split: one closed shell, which the faces as given do not make
    assert len(closed_shells(got_v, got_f)) == 1
    assert len(got_f) > len(f)
    monkeypatch.setattr(shells, "_Near", _Ball)
    want_v, want_f = welded(v, f, size)
    assert np.array_equal(got_v, want_v) and np.array_equal(got_f, want_f)


def test_welded_imports_no_scipy():
    code = textwrap.dedent("""
        import sys
        import numpy as np
        sys.path.insert(0, %r)
        from test_welded import _box_with_split_top
        from gjkcli.engine.shells import welded
        v, f = _box_with_split_top(4, np.random.default_rng(0))
        welded(v, f, 10.0)
        print(sorted(m for m in sys.modules if m == "scipy" or m.startswith("scipy.")))
    """ % str(__import__("pathlib").Path(__file__).parent))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout
