"""The compiled batch calls over many parts refuse rows that lie outside their arrays, naming the
array, before any C code reads them (one check in gjkcli/engine/_mesh.pyx for all of them)."""
from __future__ import annotations

import numpy as np
import pytest

from gjkcli.engine import _mesh

ONE = np.array([1], dtype=np.int64)
ZERO = np.array([0], dtype=np.int64)
TETRA = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], dtype=np.float64)
TRIS = np.array([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]], dtype=np.int64)
FOUR = np.array([4], dtype=np.int64)


@pytest.mark.parametrize("case, start, count", [("start past the end", np.array([3]), FOUR),
                                               ("negative start", np.array([-1]), FOUR),
                                               ("negative count", ZERO, np.array([-1]))])
def test_rows_outside_the_points_are_refused(case, start, count):
    with pytest.raises(ValueError, match="outside the points"):
        _mesh.own_hull_parts(TETRA, start, count, TRIS, ZERO, FOUR, np.zeros(1), 64)
    with pytest.raises(ValueError, match="outside the points"):
        _mesh.small_hull_parts(TETRA, start, count, 16, np.full(1, 1e-9), np.zeros(1))
    with pytest.raises(ValueError, match="outside the points"):
        _mesh.convex_edges_parts_of(TETRA, start, count, TRIS, ZERO, FOUR, np.full(1, 1e-9))


def test_rows_outside_the_triangles_are_refused():
    with pytest.raises(ValueError, match="outside the triangles"):
        _mesh.own_hull_parts(TETRA, ZERO, FOUR, TRIS, ONE, FOUR, np.zeros(1), 64)
    with pytest.raises(ValueError, match="outside the triangles"):
        _mesh.convex_edges_parts_of(TETRA, ZERO, FOUR, TRIS, ONE, FOUR, np.full(1, 1e-9))
    with pytest.raises(ValueError, match="outside the triangles"):
        _mesh.closed_oriented_parts_of(TRIS, ONE, FOUR, FOUR)


def test_rows_within_the_arrays_are_read():
    ok = _mesh.own_hull_parts(TETRA, ZERO, FOUR, TRIS, ZERO, FOUR, np.zeros(1), 64)["ok"]
    paired, _ = _mesh.closed_oriented_parts_of(TRIS, ZERO, FOUR, FOUR)
    assert ok.tolist() == [True] and paired.tolist() == [True]
