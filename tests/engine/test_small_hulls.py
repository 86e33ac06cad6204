"""The compiled hull of small point sets (gjkcli/engine/csrc/smallhull.c, `build_hulls(small=
True)`) against qhull (scipy's ConvexHull), on points in general position and on degenerate ones:
coplanar points on faces and edges, duplicates, nearly collinear and nearly flat sets, parts far
from the origin (1e6). Where the compiled core answers, its hull must be qhull's: the same
vertices (as points), the same volume, the same support in every direction; where it cannot
prove a hull it must leave the part to qhull. Solids of many coplanar points (cylinders, prisms
and boxes with gridded faces, turned and moved up to 1e6 away, and the real eight_cyl.stp) must be
built here, not left to qhull."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.spatial import ConvexHull, QhullError

from gjkcli.engine import shapes
from gjkcli.engine.shapes import (SMALL_HULL_POINTS,
                                  build_hulls, small_hull_triangles)
from gjkcli.tolerances import DEFAULT


def _directions(rng, m=300):
    d = rng.normal(size=(m, 3))
    return d / np.linalg.norm(d, axis=1)[:, None]


def _tolerance(points) -> float:
    """The coplanarity tolerance small_hull_triangles gives the part (see DEFAULT.small_hull_ulps)."""
    points = np.asarray(points, dtype=np.float64)
    local = points - 0.5 * (points.min(axis=0) + points.max(axis=0))
    return max(DEFAULT.small_hull_rel * np.abs(local).max(),
               DEFAULT.small_hull_ulps * np.finfo(np.float64).eps * np.abs(points).max())


def _same_hull(points, tris, rng):
    """The triangles are qhull's hull of the points: outward, every point inside the hull of
    their vertices (qhull's planes of it, facets merged as qhull merges them), the same vertices,
    volume, area and support."""
    points = np.asarray(points, dtype=np.float64)
    centre = 0.5 * (points.min(axis=0) + points.max(axis=0))
    local = points - centre
    tol = 4 * _tolerance(points)
    a, b, c = (local[tris[:, k]] for k in range(3))
    mine = np.unique(tris)
    planes = ConvexHull(local[mine]).equations
    assert (local @ planes[:, :3].T + planes[:, 3]).max() <= tol  # every point inside
    volume = np.einsum("ij,ij->i", a, np.cross(b, c)).sum() / 6.0  # > 0: outward
    area = 0.5 * np.linalg.norm(np.cross(b - a, c - a), axis=1).sum()
    ref = ConvexHull(local)
    # the hulls differ by points within tol of a face: by at most tol x area in volume
    assert volume == pytest.approx(ref.volume, rel=1e-9, abs=tol * ref.area)
    assert area == pytest.approx(ref.area, rel=1e-9)
    # the same vertices (as points: a repeated point is one), up to points within tol of a face,
    # which either hull may keep (their tolerances decide: qhull keeps points 1e6 away that
    # their rounding lifts off a face)
    ours, qhull_s = set(map(tuple, local[mine])), set(map(tuple, local[ref.vertices]))
    for x in ours ^ qhull_s:
        assert (np.asarray(x) @ ref.equations[:, :3].T + ref.equations[:, 3]).max() >= -tol
    D = _directions(rng)
    assert np.abs((local[mine] @ D.T).max(axis=0) - (local[ref.vertices] @ D.T).max(axis=0)).max() <= tol


@pytest.mark.parametrize("seed", range(3))
def test_points_in_general_position(seed):
    rng = np.random.default_rng(seed)
    parts = []
    for _ in range(150):
        n = int(rng.integers(4, SMALL_HULL_POINTS + 1))
        p = rng.normal(size=(n, 3)) * rng.uniform(0.01, 10.0, 3)
        if rng.random() < 0.5:  # all on an ellipsoid: every point a vertex
            p /= np.linalg.norm(p, axis=1)[:, None]
        parts.append(p + rng.normal(size=3) * 100)
    got = small_hull_triangles(parts)
    built = [k for k, t in enumerate(got) if t is not None]
    # the core proves nearly every part (a failing core would hand all to qhull: still right,
    # but then this test must fail)
    assert len(built) >= 0.97 * len(parts), len(built)
    for k in built:
        _same_hull(parts[k], got[k], rng)


def _box_with_extras():
    corners = np.array([[x, y, z] for x in (0, 1) for y in (0, 1) for z in (0, 1)], dtype=float)
    g = np.linspace(0.0, 1.0, 4)  # 8 + 6 x 16 + 1 = 105 points
    u, v = (a.ravel() for a in np.meshgrid(g, g))
    faces = np.concatenate([np.stack([np.full_like(u, side), u, v], axis=1)[:, np.roll([0, 1, 2], axis)]
                            for axis in range(3) for side in (0.0, 1.0)])
    return np.concatenate([corners, faces, [[0.5, 0.5, 0.5]]])  # and one inner point


DEGENERATE = {
    "box, its faces gridded (coplanar points on faces and edges)": _box_with_extras(),
    "octahedron and its face centres": np.concatenate([
        np.concatenate([np.eye(3), -np.eye(3)]),
        np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]) / 3.0]),
    "every point twice": np.repeat(np.random.default_rng(1).normal(size=(20, 3)), 2, axis=0),
    "a tetrahedron, each corner 5 times": np.repeat(np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1.0]]), 5, axis=0),
    "nearly collinear, one point off the line": np.concatenate([
        np.outer(np.linspace(0, 1, 20), [1.0, 2.0, 3.0]) + np.random.default_rng(2).normal(size=(20, 3)) * 1e-9,
        [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]]),
    "a box 1e6 from the origin": _box_with_extras() + 1e6,
    "a sphere's points 1e6 from the origin": shapes._cube_directions(3) * 0.5 + [1e6, -2e6, 3e6],
    "a thin slab (1e-6 thick)": np.random.default_rng(3).uniform(-1, 1, (30, 3)) * [1.0, 1.0, 1e-6],
}


@pytest.mark.parametrize("name", list(DEGENERATE))
def test_degenerate_points_give_qhull_s_hull_or_go_to_qhull(name):
    rng = np.random.default_rng(7)
    points = DEGENERATE[name]
    tris = small_hull_triangles([points])[0]
    if tris is None:  # not proven here: qhull's path builds it
        return
    _same_hull(points, tris, rng)


def test_the_degenerate_cases_are_mostly_built_here():
    built = [name for name, p in DEGENERATE.items() if small_hull_triangles([p])[0] is not None]
    # the coplanar, duplicated and far-off cases are the point of the compiled hull
    for name in ("box, its faces gridded (coplanar points on faces and edges)", "every point twice",
                 "a box 1e6 from the origin", "a tetrahedron, each corner 5 times"):
        assert name in built


def _turned(rng, points, offset):
    """The points under a random rotation, moved `offset` from the origin in a random direction."""
    q = np.linalg.qr(rng.normal(size=(3, 3)))[0]
    direction = rng.normal(size=3)
    return points @ q.T + offset * direction / np.linalg.norm(direction)


def _cylinder(rng, facets):
    """A tessellated cylinder as a STEP solid's mesh gives it: two rings of `facets` points
    (the caps' coplanar points), the seam's two points again (meshed faces repeat their
    seams), and on some the caps' centres."""
    t = np.linspace(0.0, 2 * np.pi, facets, endpoint=False) + rng.uniform(0, 2 * np.pi)
    r, h = rng.uniform(0.5, 50.0), rng.uniform(0.5, 100.0)
    ring = np.stack([r * np.cos(t), r * np.sin(t)], axis=1)
    rows = [np.c_[ring, np.zeros(facets)], np.c_[ring, np.full(facets, h)], [[*ring[0], 0.0], [*ring[0], h]]]
    if rng.random() < 0.5:
        rows.append([[0.0, 0.0, 0.0], [0.0, 0.0, h]])
    return np.concatenate(rows)


def _prism(rng, sides):
    """A random convex polygon extruded, its side faces gridded (coplanar points on every face,
    nearly collinear ones along every edge)."""
    t = np.sort(rng.uniform(0, 2 * np.pi, sides))
    ring = np.stack([np.cos(t), np.sin(t)], axis=1) * rng.uniform(1.0, 20.0)
    h = rng.uniform(0.5, 30.0)
    s = np.linspace(0.0, 1.0, 4)
    rows = [np.c_[ring, np.zeros(sides)], np.c_[ring, np.full(sides, h)]]
    for k in range(sides):  # a 4 x 4 grid on each side face
        a, b = ring[k], ring[(k + 1) % sides]
        u, v = (g.ravel() for g in np.meshgrid(s, s))
        rows.append(np.c_[a + u[:, None] * (b - a), v * h])
    return np.concatenate(rows)


COPLANAR_MAKERS = {
    "cylinder": lambda rng: _cylinder(rng, int(rng.choice([6, 12, 24, 42, 64]))),
    "prism": lambda rng: _prism(rng, int(rng.integers(3, 9))),
    "box with gridded faces": lambda rng: _box_with_extras() * rng.uniform(0.5, 40.0, 3),
}


@pytest.mark.parametrize("offset", [0.0, 1e3, 1e6])
@pytest.mark.parametrize("kind", list(COPLANAR_MAKERS))
def test_coplanar_faces_are_built_here_as_qhull_builds_them(kind, offset):
    """Solids with many points on one plane (cylinders' caps, gridded faces and edges), their
    seams repeated, turned at random and moved up to 1e6 from the origin: the compiled core
    builds (nearly) every one, each the hull qhull builds. Before the core walked the visible
    faces and merged flat groups it built under a third of the far-off cylinders (a thin cap
    triangle's plane, known only to rounding over its width, cut the cap off)."""
    rng = np.random.default_rng([list(COPLANAR_MAKERS).index(kind), int(offset)])
    parts = [_turned(rng, COPLANAR_MAKERS[kind](rng), offset) for _ in range(24)]
    got = [small_hull_triangles([p])[0] for p in parts]  # one part per call: the few-parts path
    built = [k for k, t in enumerate(got) if t is not None]
    assert len(built) >= 0.95 * len(parts), (kind, offset, len(built))
    for k in built:
        _same_hull(parts[k], got[k], rng)


@pytest.mark.parametrize("offset", [0.0, 1e6])
def test_nearly_flat_slabs_are_qhull_s_hull_or_go_to_qhull(offset):
    """Slabs 1e-12 to 1e-3 as thick as they are wide, turned and moved: the thin ones go to
    qhull (a slab a few tolerances thick has long faces from rim to rim lying nearly in its
    plane, under which a point beyond the rim passed the checks: seeded ones 1e6 away lost a
    tenth of their width), the others are qhull's hull, their area to 1e-9."""
    rng = np.random.default_rng([5, int(offset)])
    thickness = 10 ** rng.uniform(-12, -3, 80)
    parts = [_turned(rng, rng.normal(size=(int(rng.integers(8, 60)), 3)) * [1.0, 1.0, t], offset)
             * 10 ** rng.uniform(-2, 2) for t in thickness]
    got = [small_hull_triangles([p])[0] for p in parts]
    built = [k for k, t in enumerate(got) if t is not None]
    # the thick ones are built here, the thinnest are not
    assert all(got[k] is not None for k in np.flatnonzero(thickness > 1e-5))
    assert all(got[k] is None for k in np.flatnonzero(thickness < 1e-10))
    for k in built:
        _same_hull(parts[k], got[k], rng)


def test_the_compiled_core_builds_the_eight_cylinders_of_the_step_file():
    """The solids of eight_cyl.stp as gjk meshes them (each cap a ring of coplanar points, the
    seams twice): the compiled core builds every one, as qhull does (they went to qhull, and the
    scan of that file imported scipy)."""
    pytest.importorskip("OCP", reason="STEP needs cadquery-ocp (OpenCASCADE)")
    from gjkcli.mesh.cad import read_step

    path = Path(__file__).resolve().parents[1] / "data" / "third_party" / "step" / "eight_cyl.stp"
    solids = [part.vertices for part in read_step(path)]
    assert len(solids) == 8 and all(len(p) > 2 * 42 for p in solids)
    got = small_hull_triangles(solids)
    assert all(t is not None for t in got)
    rng = np.random.default_rng(8)
    for points, tris in zip(solids, got):
        _same_hull(points, tris, rng)


FLAT = {
    "one point": np.zeros((6, 3)),
    "a segment": np.outer(np.linspace(0, 1, 8), [1.0, 1.0, 1.0]),
    "a square": np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0], [0.5, 0.5, 0.0]]),
    "nearly flat (1e-13)": np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0.3, 0.3, 1e-13]]),
    "NaN": np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, np.nan]]),
    "three points": np.eye(3),
    "too many points": np.random.default_rng(4).normal(size=(SMALL_HULL_POINTS + 1, 3)),
}


@pytest.mark.parametrize("name", list(FLAT))
def test_flat_and_other_parts_are_left_to_qhull(name):
    assert small_hull_triangles([FLAT[name]])[0] is None


def test_a_part_s_route_is_its_own_whatever_is_built_with_it():
    """Parts of 129 to SMALL_HULL_POINTS points are built here, as qhull builds them, and each
    part's triangles are the same built alone or among many large parts: the route is decided
    per part, so a hull the cache keeps, or a Dask task builds in its share, is a whole run's.
    Before, such parts went to the core only while the batch's squared counts stayed within a
    budget: five parts of 1,024 points sent every part of the batch to qhull."""
    rng = np.random.default_rng(28)
    parts = []
    assert SMALL_HULL_POINTS >= 1024
    for n in (129, 642, 1024):
        sphere = rng.normal(size=(n, 3))
        parts.append(sphere / np.linalg.norm(sphere, axis=1)[:, None] * rng.uniform(0.5, 5, 3) + 100)
        parts.append(rng.uniform(-1, 1, (n, 3)) * rng.uniform(0.5, 5, 3))  # most points inside
    alone = [small_hull_triangles([p])[0] for p in parts]
    assert all(t is not None for t in alone)
    for points, tris in zip(parts, alone):
        _same_hull(points, tris, rng)
    many = [rng.normal(size=(1024, 3)) for _ in range(5)]
    together = small_hull_triangles(many + parts)
    assert all(t is not None for t in together)
    for a, b in zip(alone, together[len(many):]):
        np.testing.assert_array_equal(a, b)


def test_repeated_points_count_once():
    """A part whose points all come twice (a solid meshed face by face repeats its seams) is
    built here when its distinct points fit, though its rows do not (2,200 rows of 1,000
    points), as qhull builds it; the same among many such parts (before, more than 64 of them
    left went to qhull)."""
    rng = np.random.default_rng(29)
    sphere = rng.normal(size=(1000, 3))
    sphere = sphere / np.linalg.norm(sphere, axis=1)[:, None] * [3.0, 2.0, 1.0] + 1e3
    twice = np.concatenate([sphere, sphere[rng.permutation(len(sphere))]])
    assert len(twice) > SMALL_HULL_POINTS
    (tris,) = small_hull_triangles([twice])
    assert tris is not None and tris.max() < len(twice)
    _same_hull(twice, tris, rng)
    for got in small_hull_triangles([twice] * 65):
        np.testing.assert_array_equal(got, tris)


def test_the_reader_s_qhull_guess_follows_the_route():
    """`goes_to_qhull`, the reader's early guess that SciPy will be needed, counts a part's
    points as the route does: the sphere given twice (2,000 rows, 1,000 distinct points) is built
    here, so no guess of qhull; 1,100 distinct points and 4 x SMALL_HULL_POINTS + 1 rows go to
    qhull, and so they are guessed."""
    rng = np.random.default_rng(31)
    sphere = rng.normal(size=(1000, 3))
    sphere /= np.linalg.norm(sphere, axis=1)[:, None]
    twice = np.concatenate([sphere, sphere])
    assert not shapes.goes_to_qhull(twice) and small_hull_triangles([twice])[0] is not None
    more = rng.normal(size=(SMALL_HULL_POINTS + 76, 3))
    more /= np.linalg.norm(more, axis=1)[:, None]
    assert shapes.goes_to_qhull(more) and small_hull_triangles([more])[0] is None
    many = np.concatenate([sphere] * 5)[: shapes.REPEATS_UP_TO * SMALL_HULL_POINTS + 1]
    assert shapes.goes_to_qhull(many) and small_hull_triangles([many])[0] is None
    assert not shapes.goes_to_qhull(sphere[:SMALL_HULL_POINTS])


def test_build_hulls_small_is_build_hulls_up_to_coplanar_points():
    """Every part through build_hulls(small=True) against build_hulls (qhull): the same shapes
    (vertex sets, bounds, areas), the flat ones and the errors alike."""
    rng = np.random.default_rng(11)
    parts = [rng.normal(size=(int(rng.integers(4, 60)), 3)) * rng.uniform(0.1, 3, 3) + rng.normal(size=3) * 50
             for _ in range(100)]
    parts += list(DEGENERATE.values()) + list(FLAT.values()) + [np.zeros((0, 3))]
    small, ref = build_hulls(parts, small=True), build_hulls(parts)
    for k, (a, b) in enumerate(zip(small.shapes, ref.shapes)):
        if isinstance(b, Exception):
            assert isinstance(a, Exception), k
            continue
        assert a.dimension == b.dimension, k
        wa, wb = a.world_vertices, b.world_vertices
        assert sorted(map(tuple, wa.round(9))) == sorted(map(tuple, wb.round(9))), k
        assert np.allclose(small.lo[k], ref.lo[k], rtol=0, atol=1e-9) and np.allclose(small.hi[k], ref.hi[k], rtol=0, atol=1e-9)
        if np.isfinite(ref.area[k]):
            assert small.area[k] == pytest.approx(ref.area[k], rel=1e-9), k


def test_qhull_agrees_that_the_flat_ones_are_not_solid():
    for name in ("one point", "a segment", "a square"):
        with pytest.raises((QhullError, ValueError)):
            ConvexHull(FLAT[name])
