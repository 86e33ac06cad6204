"""Of several closest points OpenCASCADE finds (a box on a box, a bolt along its hole), gjk
reports one that does not depend on the order OpenCASCADE lists them in, which changes from one
process to the next: the least by its coordinates of the solutions whose points lie the distance
apart (OpenCASCADE 7.8 also lists solutions whose second point is the origin, off the shape).

The oracle is the boxes themselves: every face contact point is known, and the least of them by
coordinates is the corner of the contact rectangle nearest the origin's side."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

pytest.importorskip("OCP", reason="STEP needs cadquery-ocp (OpenCASCADE)")

from OCP.BRepBuilderAPI import BRepBuilderAPI_MakeVertex  # noqa: E402
from OCP.BRepExtrema import BRepExtrema_DistShapeShape  # noqa: E402
from OCP.BRepPrimAPI import BRepPrimAPI_MakeBox  # noqa: E402
from OCP.gp import gp_Pnt  # noqa: E402

from gjkcli.mesh import cad  # noqa: E402


def _box(x, y, z, size):
    return BRepPrimAPI_MakeBox(gp_Pnt(x, y, z), size, size, size).Shape()


# a 5 mm box against the 10 mm box at the origin, on each of its sides, touching or 2 mm apart:
# (its corner, the contact rectangle's least corner on the big box, on the small one)
_PLACES = [((-5, 2, 2), (0, 2, 2), (0, 2, 2)), ((10, 2, 2), (10, 2, 2), (10, 2, 2)),
           ((2, -5, 2), (2, 0, 2), (2, 0, 2)), ((2, 10, 2), (2, 10, 2), (2, 10, 2)),
           ((2, 2, 10), (2, 2, 10), (2, 2, 10)), ((12, 2, 2), (10, 2, 2), (12, 2, 2)),
           ((-7, -7, 2), (0, 0, 2), (-2, -2, 2))]


@pytest.mark.parametrize("corner, on_big, on_small", _PLACES)
def test_the_closest_points_are_the_least_solution_whatever_the_shapes_order(corner, on_big, on_small):
    big, small = _box(0, 0, 0, 10), _box(*corner, 5)
    for first, second, want in ((big, small, (on_big, on_small)), (small, big, (on_small, on_big))):
        d = BRepExtrema_DistShapeShape(first, second)
        pa, pb = cad._closest_points(d, 1.0)
        assert np.allclose(pa, want[0]) and np.allclose(pb, want[1])
        assert np.isclose(np.linalg.norm(pa - pb), d.Value())


def test_a_solution_off_the_shape_is_never_taken():
    d = BRepExtrema_DistShapeShape(_box(0, 0, 0, 10), _box(2, 2, 10, 5))
    seconds = [d.PointOnShape2(n) for n in range(1, d.NbSolution() + 1)]
    pa, pb = cad._closest_points(d, 2.0)  # scaled, as a file's unit scales them
    assert np.allclose(pa, [4, 4, 20]) and np.allclose(pb, [4, 4, 20])
    if any((p.X(), p.Y(), p.Z()) == (0.0, 0.0, 0.0) for p in seconds):  # what OpenCASCADE 7.8 lists
        assert not np.allclose(pb, 0.0)


def test_a_point_projected_onto_a_box_edge_lands_on_one_point_whatever_the_faces_order():
    """`touching_points` projects back and forth: a point equally near two faces (over a box's
    edge) lands on the least of its projections."""
    big = _box(0, 0, 0, 10)
    point = gp_Pnt(12, 5, 12)  # nearest the edge x = 10, z = 10: one solution or several
    d = BRepExtrema_DistShapeShape(BRepBuilderAPI_MakeVertex(point).Vertex(), big)
    got = cad._least(d, ((point, d.PointOnShape2(n)) for n in range(1, d.NbSolution() + 1)))
    assert np.allclose(got[3:], (10, 5, 10))


def test_the_least_of_several_solutions_is_taken_in_any_order():
    """The choice itself, on solutions given in every order (OpenCASCADE's changes between
    processes): the same point each time, never one the distance apart from the other's."""

    class Point:
        def __init__(self, *xyz):
            self.xyz = xyz

        def X(self):  # noqa: N802 - OpenCASCADE's names
            return self.xyz[0]

        def Y(self):  # noqa: N802
            return self.xyz[1]

        def Z(self):  # noqa: N802
            return self.xyz[2]

    class Answer:
        def Value(self):  # noqa: N802
            return 1.0

    solutions = [(Point(132.5, 57.0, 30.0), Point(132.5, 57.0, 31.0)),
                 (Point(132.5, 57.0, 20.0), Point(132.5, 57.0, 21.0)),
                 (Point(132.5, 57.0, 10.0), Point(0.0, 0.0, 0.0)),  # off the shape
                 (Point(140.0, 50.0, 25.0), Point(140.0, 50.0, 26.0))]
    for order in itertools.permutations(solutions):
        assert cad._least(Answer(), order) == (132.5, 57.0, 20.0, 132.5, 57.0, 21.0)
