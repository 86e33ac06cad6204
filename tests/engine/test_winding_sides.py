"""The side of many points from a few winding numbers (`_mesh.sides`, used by the exact test's
searches for a point of one part inside the other).

- Seeded random points around a closed part that is not convex (a ring): every side `sides`
  gives is the side of the point's own winding number summed over every triangle (the oracle:
  no hierarchy, no balls), in either order and with `first`; at most the asked points cost a
  winding number. Between 20% and 80% of the points are inside, so both sides are tested.
- A part with many vertices inside the other's box and outside it (a finely faceted ball in a
  ring's hole, as a chair under a table): the exact verdict (clear, its distance) is that of
  the vertices' own winding numbers, and it asks a few winding numbers, not one per vertex.
- A mesh's edges are sorted once for its watertight check and its bodies.
"""
import numpy as np
import pytest
import spy

from gjkcli.engine import _mesh, topology
from gjkcli.engine.exact import Mesh, exact_query, winding_numbers
from gjkcli.engine.results import Status
from gjkcli.tolerances import DEFAULT

trimesh = pytest.importorskip("trimesh")


def _ring():
    ring = trimesh.creation.annulus(r_min=0.5, r_max=1.0, height=0.4)
    return Mesh(ring.vertices, ring.faces, name="ring")


@pytest.mark.parametrize("first", [False, True])
def test_sides_agree_with_every_points_own_winding_number(first):
    rng = np.random.default_rng(4120)
    ring = _ring()
    points = rng.uniform(-1.1, 1.1, size=(600, 3)) * [1.0, 1.0, 0.3]
    dist, _, _ = _mesh.closest(ring.bvh, points)
    oracle = np.abs(_mesh.winding(ring.bvh, points, brute=True)) > DEFAULT.winding_inside
    assert 0.2 < oracle.mean() < 0.8
    for order in (np.argsort(-dist, kind="stable"), rng.permutation(len(points))):
        side, asked = _mesh.sides(ring.bvh, points, dist, order, DEFAULT.winding_inside, first=first)
        decided = side != 0
        assert np.array_equal(side[decided] > 0, oracle[decided])
        if first:  # decided up to the first point inside, which is the first inside of the order
            assert order[np.flatnonzero(side[order] > 0)[0]] == order[np.flatnonzero(oracle[order])[0]]
            assert not decided[order[np.flatnonzero(oracle[order])[0] + 1:]].any()
        else:
            assert decided.all()
        assert asked <= decided.sum()
    # farthest first, balls decide most of the points
    _, asked = _mesh.sides(ring.bvh, points, dist, np.argsort(-dist), DEFAULT.winding_inside)
    assert asked < len(points) // 2


def test_a_ball_in_a_rings_hole_asks_few_winding_numbers():
    ring = _ring()
    ball = trimesh.creation.icosphere(subdivisions=3, radius=0.4)  # 642 vertices, in the ring's box
    b = Mesh(ball.vertices, ball.faces, name="ball")
    before = winding_numbers()
    r = exact_query(ring, b, tolerance=1e-3)
    asked = winding_numbers() - before
    assert r.status is Status.CLEAR
    # the oracle: every vertex of the ball outside the ring by its own winding number, and the
    # distance that of the nearest vertex pair region (the ball's radius short of the hole's)
    w = _mesh.winding(ring.bvh, b.vertices - ring.centre, brute=True)
    assert (np.abs(w) < DEFAULT.winding_inside).all()
    assert r.distance == pytest.approx(0.1, abs=0.01)
    assert asked < 100, asked  # one a vertex (642 and more) before the balls decided for them


def test_edges_sorted_once_for_the_watertight_check_and_the_bodies(monkeypatch):
    ring = trimesh.creation.annulus(r_min=0.5, r_max=1.0, height=0.4)
    calls = spy.calls(monkeypatch, topology, "_edge_groups", lambda faces, n: len(faces))
    m = Mesh(ring.vertices, ring.faces, name="ring")
    m.labelled_probes()
    assert m.bodies == 1 and m.solid
    assert calls == [len(ring.faces)]
    faces = np.asarray(ring.faces, dtype=np.int64)
    groups = topology.edge_groups(faces, len(ring.vertices))
    for got, want in zip(topology.topology(faces, len(ring.vertices), groups),
                         topology.topology(faces, len(ring.vertices))):
        assert np.array_equal(got, want)
