"""The plane's engine (gjkcli.engine.plane) against shapely 2 (GEOS) and the exact 2D Minkowski
difference (qhull's hull of every vertex difference), never against itself. Every certificate is
re-checked by gjkcli.engine.certify_plane. Random cases come from fixed seeds, with asserted
shares of collisions and clear pairs, so the tests can fail.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import shapely
from scipy.spatial import ConvexHull

from conftest import expected_status, rng_for
from gjkcli.engine import plane
from gjkcli.engine.certify_plane import check_certificate
from gjkcli.engine.results import Status

shapely_polygon = shapely.Polygon


def random_convex(rng, n: int, centre=(0.0, 0.0), radius: float = 1.0) -> np.ndarray:
    """The hull of n random points in a disc, in qhull's (counter-clockwise) order, sometimes
    reversed so that clockwise input is exercised too."""
    pts = rng.normal(size=(n, 2)) * radius + np.asarray(centre)
    v = pts[ConvexHull(pts).vertices]
    return v[::-1] if rng.random() < 0.5 else v


def minkowski(va: np.ndarray, vb: np.ndarray) -> float:
    """Signed distance from the exact A - B: the origin's distance to it when outside (the
    nearest point of its boundary), minus its distance to the boundary when inside."""
    diff = (va[:, None, :] - vb[None, :, :]).reshape(-1, 2)
    hull = ConvexHull(diff)
    offsets = hull.equations[:, 2]  # n.x + c <= 0 inside, n unit
    if np.all(offsets <= 0):
        return float(offsets.max())  # -(distance to the nearest edge line) = -depth
    ring = diff[hull.vertices]
    return float(shapely_polygon(ring).exterior.distance(shapely.Point(0.0, 0.0)))


def checked(a, b, **kw):
    r = plane.query(a, b, **kw)
    assert r.status is not Status.UNDECIDED, r
    why = check_certificate(a, b, r)
    assert why is None, why
    return r


def test_dyn4j_example_trace():
    """The dyn4j article's shapes from (1, -1): its first two support points, then the engine's
    own third direction (towards the origin from the segment), enclosing the origin."""
    a = plane.Polygon([(4, 11), (9, 9), (4, 5)])
    b = plane.Polygon([(5, 7), (12, 7), (10, 2), (7, 3)])
    r = checked(a, b, start=(1, -1), trace=True)
    gjk = [s for s in r.trace if s.phase == "gjk"]
    assert gjk[0].w.tolist() == [4.0, 2.0]
    assert gjk[0].point_a.tolist() == [9.0, 9.0] and gjk[0].point_b.tolist() == [5.0, 7.0]
    assert (gjk[0].index_a, gjk[0].index_b) == (1, 0)  # rows of the input, not of the CCW copy
    assert gjk[1].direction.tolist() == [-4.0, -2.0]
    assert gjk[1].w.tolist() == [-8.0, -2.0]
    assert gjk[1].feature == "edge"
    # the third direction is -v, v the segment's point nearest the origin: along (1, -3), as the
    # article's (32, -96)
    d = gjk[2].direction
    assert abs(d[0] * -3 - d[1] * 1) < 1e-12 and d[0] > 0
    assert gjk[2].w.tolist() == [-1.0, -2.0]
    assert gjk[2].exit == "origin enclosed" and len(gjk) == 3
    # the depth, against the exact Minkowski difference
    assert r.status is Status.COLLISION
    assert r.depth == pytest.approx(-minkowski(a.vertices, b.vertices), abs=1e-12)
    assert r.normal @ (r.point_a - r.point_b) == pytest.approx(r.depth, abs=1e-12)


def test_support_climb_equals_brute_force():
    """Hill climbing (warm and cold) finds the support value a scan of every vertex finds."""
    rng = rng_for("plane support")
    for _ in range(50):
        v = random_convex(rng, int(rng.integers(3, 400)))
        poly = plane.Polygon(v)
        dirs = rng.normal(size=(64, 2))
        for warm in (True, False):
            pts, idx, steps = plane.support(poly, dirs, warm=warm)
            best = (poly.vertices @ dirs.T).max(axis=0)
            got = np.einsum("ij,ij->i", pts, dirs)
            assert np.allclose(got, best, rtol=0, atol=1e-12 * np.abs(v).max())
            assert np.allclose(v[idx], pts)
    # a plateau: an edge normal to the direction, reached from either side
    sq = plane.Polygon([[0, 0], [1, 0], [1, 1], [0, 1]])
    pts, _, _ = plane.support(sq, [[0, 1], [1, 0], [0, -1], [-1, 0]])
    assert pts[:, 1][0] == 1 and pts[:, 0][1] == 1 and pts[:, 1][2] == 0 and pts[:, 0][3] == 0


@pytest.mark.parametrize("offset", [0.0, 1e6])
def test_random_convex_pairs_against_oracles(offset):
    """300 random convex pairs: verdicts as the exact Minkowski difference says, distances as
    shapely, depths as the Minkowski difference; both collisions and clear pairs present."""
    rng = rng_for(f"plane convex {offset}")
    counts = {s: 0 for s in Status}
    parts, pairs = [], []
    for k in range(300):
        centre = np.array([offset, -offset])
        va = random_convex(rng, int(rng.integers(3, 30)), centre)
        vb = random_convex(rng, int(rng.integers(3, 30)), centre + rng.normal(size=2) * 1.8)
        a, b = plane.Polygon(va), plane.Polygon(vb)
        r = checked(a, b)
        size = max(a.size, b.size)
        s = minkowski(va - centre, vb - centre)
        counts[r.status] += 1
        if abs(abs(s) - r.tolerance) > 1e-9 * size:
            assert r.status is expected_status(s, r.tolerance), (k, s, r)
        if s > 0:
            geos = shapely_polygon(va).distance(shapely_polygon(vb))
            assert r.distance == pytest.approx(s, abs=1e-9 * size)
            assert r.distance == pytest.approx(geos, abs=1e-9 * size + 1e-15 * offset)
            assert r.distance_lower <= s + 1e-9 * size
        else:
            assert r.depth == pytest.approx(-s, abs=1e-9 * size)
            assert r.depth_upper >= -s - 1e-9 * size
            assert shapely_polygon(va).intersects(shapely_polygon(vb))
        parts += [a, b]
        pairs.append((2 * k, 2 * k + 1))
    assert 0.25 <= counts[Status.COLLISION] / 300 <= 0.75, counts
    assert 0.25 <= counts[Status.CLEAR] / 300 <= 0.75, counts
    # the batch answers the same, pair by pair
    ia, ib = np.array(pairs).T
    rs = plane.batch(parts, ia, ib)
    for k in range(0, 300, 7):
        one = plane.query(parts[2 * k], parts[2 * k + 1])
        assert rs.result(k).status is one.status
        assert rs.distance[k] == one.distance


def test_touching_band_sweep():
    """One pair slid to gaps across the band: clear, touching, collision where they should be."""
    rng = rng_for("plane band")
    for _ in range(30):
        va = random_convex(rng, 12)
        vb = random_convex(rng, 12)
        a = plane.Polygon(va)
        # slide B along x so that its leftmost point sits at A's rightmost plus the gap: the
        # oracle then says what the signed distance really is
        for gap in (1e-3, 1e-6, 1e-9, 1e-12, 0.0, -1e-12, -1e-9, -1e-6, -1e-3, -0.1):
            vbs = vb + [va[:, 0].max() - vb[:, 0].min() + gap, 0.0]
            b = plane.Polygon(vbs)
            r = checked(a, b)
            s = minkowski(va, vbs)
            size = max(a.size, b.size)
            if abs(abs(s) - r.tolerance) > 1e-9 * size:
                assert r.status is expected_status(s, r.tolerance), (gap, s, r)


def ring(x0, y0, x1, y1):
    return np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], dtype=float)


def geos(rings) -> shapely.Geometry:
    """The same part in GEOS: even-odd by symmetric differences of the rings' polygons."""
    g = shapely.Polygon(rings[0])
    for r in rings[1:]:
        g = g.symmetric_difference(shapely.Polygon(r))
    return g


def test_holes_and_containment():
    """A plate with a hole: a pin in the hole is clear, a pin in the solid collides without any
    edge crossing, a pin across the hole's edge collides, a pin touching the hole's wall touches."""
    plate = plane.Region([ring(0, 0, 10, 10), ring(3, 3, 7, 7)])
    cases = {
        "in the hole": (ring(4, 4, 6, 6), Status.CLEAR, 1.0),
        "in the solid": (ring(0.5, 0.5, 2, 2), Status.COLLISION, 0.0),
        "across the wall": (ring(2, 4, 4, 6), Status.COLLISION, 0.0),
        "against the wall": (ring(4, 4, 7, 6), Status.TOUCHING, 0.0),
        "outside": (ring(11, 0, 12, 1), Status.CLEAR, 1.0),
    }
    for name, (pin, status, distance) in cases.items():
        part = plane.Region([pin])
        g = geos(plate.rings).distance(shapely.Polygon(pin))
        for a, b in ((plate, part), (part, plate)):
            r = checked(a, b)
            assert r.status is status, (name, r)
            assert r.distance == pytest.approx(distance, abs=1e-12), name
            assert r.distance == pytest.approx(g, abs=1e-12), name
    # the pin in the solid: the depth is the deepest examined point's distance to the plate's
    # boundary, the pin's corner (2, 2) sqrt(2) from the hole's corner; the shortest separating
    # translation (2, out through the plate's left side) is no less
    r = plane.query(plate, plane.Region([ring(0.5, 0.5, 2, 2)]))
    assert r.depth == pytest.approx(np.sqrt(2), abs=1e-12) and r.certificate.kind == "point"
    assert r.point_a.tolist() == [3.0, 3.0] and r.point_b.tolist() == [2.0, 2.0]


def test_l_bracket_with_pin_in_its_corner():
    """An L bracket (non-convex, one ring) and a round pin (a 32-gon) in its inner corner: clear
    at a gap, touching at contact, collision pushed in; shapely's distances throughout. The
    hulls would collide in every case."""
    bracket = plane.Region([np.array([[0, 0], [10, 0], [10, 2], [2, 2], [2, 10], [0, 10]], float)])
    assert not bracket.convex
    t = np.linspace(0, 2 * np.pi, 32, endpoint=False)
    circle = np.c_[np.cos(t), np.sin(t)]
    for gap, status in ((0.5, Status.CLEAR), (0.0, Status.TOUCHING), (-0.3, Status.COLLISION)):
        # the pin's lowest and leftmost points are at (0, -1) and (-1, 0): put them gap off the walls
        pin = circle + [3 + gap, 3 + gap]
        a, b = bracket, plane.Polygon(pin)
        r = checked(a, b)
        assert r.status is status, (gap, r)
        g = geos(bracket.rings).distance(shapely.Polygon(pin))
        assert r.distance == pytest.approx(g, abs=1e-12)
        hull = checked(bracket.hull(), b)
        assert hull.status is Status.COLLISION


def random_region(rng, centre, holes: bool) -> list:
    """A star-shaped ring round centre, with a smaller star hole in it when asked."""
    def star(c, r0, n):
        # angles in order with gaps below pi: a simple ring, star-shaped about c
        t = (np.arange(n) + rng.uniform(0, 0.8, n)) * 2 * np.pi / n
        r = r0 * rng.uniform(0.6, 1.0, n)
        return np.c_[c[0] + r * np.cos(t), c[1] + r * np.sin(t)]

    rings = [star(centre, 1.0, int(rng.integers(5, 25)))]
    if holes:
        rings.append(star(centre, 0.35, int(rng.integers(4, 10))))
    return rings


def test_random_regions_against_shapely():
    """200 random non-convex parts with holes: intersects and distance as GEOS says; both
    overlapping and clear pairs present."""
    rng = rng_for("plane regions")
    hits = clear = 0
    for k in range(200):
        ra = random_region(rng, (0.0, 0.0), holes=bool(rng.random() < 0.7))
        rb = random_region(rng, rng.normal(size=2) * 1.5, holes=bool(rng.random() < 0.7))
        if rng.random() < 0.1:  # a small part dropped in A's hole, if it has one
            rb = [ra[1] * 0.3] if len(ra) > 1 else rb
        a, b = plane.Region(ra), plane.Region(rb)
        r = checked(a, b)
        ga, gb = geos(a.rings), geos(b.rings)
        d = ga.distance(gb)
        size = max(a.size, b.size)
        if d > 2 * r.tolerance:
            assert r.status is Status.CLEAR, (k, d, r)
            assert r.distance == pytest.approx(d, abs=1e-9 * size)
            clear += 1
        elif ga.intersection(gb).area > 1e-6:
            assert r.status is Status.COLLISION, (k, r)
            hits += 1
    assert 0.2 <= hits / 200 <= 0.8 and 0.2 <= clear / 200 <= 0.8, (hits, clear)


def test_bad_input():
    with pytest.raises(ValueError, match="not convex"):
        plane.Polygon([[0, 0], [2, 0], [1, 0.2], [1, 2]])
    with pytest.raises(ValueError, match="3 distinct"):
        plane.Polygon([[0, 0], [1, 1], [0, 0]])
    with pytest.raises(ValueError, match="NaN"):
        plane.Region([[[0, 0], [1, np.nan], [0, 1]]])
    with pytest.raises(ValueError, match="start direction"):
        plane.query(plane.Polygon([[0, 0], [1, 0], [0, 1]]), plane.Polygon([[2, 0], [3, 0], [2, 1]]), start=(0, 0))


def same_fields(x, y) -> bool:
    """Dataclasses x and y hold equal fields, arrays and nested dataclasses compared exactly."""
    if type(x) is not type(y):
        return False
    if isinstance(x, np.ndarray):
        return x.shape == y.shape and np.array_equal(x, y)
    if dataclasses.is_dataclass(x):
        return all(same_fields(getattr(x, f.name), getattr(y, f.name)) for f in dataclasses.fields(x))
    return x == y


def test_from_arrays_answers_as_the_objects():
    """A nest packed from arrays (no object per part) answers as the same parts as Regions, and
    finds the convex ones (either orientation) convex."""
    rng = rng_for("plane arrays")
    regions = []
    for k in range(60):
        centre = (k % 10 * 2.2, k // 10 * 2.2)
        if k % 3 == 0:
            v = random_convex(rng, 9, centre, 0.5)
            regions.append(plane.Region([v]))
        else:
            regions.append(plane.Region(random_region(rng, centre, holes=k % 2 == 0)))
    rings = [r for p in regions for r in p.rings]
    ring_offsets = np.r_[0, np.cumsum([len(r) for r in rings])]
    part_offsets = np.r_[0, np.cumsum([len(p.rings) for p in regions])]
    packed = plane.PartSet.from_arrays(np.concatenate(rings), ring_offsets, part_offsets)
    objects = plane.PartSet(regions)
    assert packed.convex.tolist() == objects.convex.tolist()
    assert packed.convex[::3].all() and 20 <= packed.convex.sum() < 60  # a star may be convex too
    ia, ib = np.triu_indices(60, 1)
    r1, r2 = plane.batch(packed, ia, ib), plane.batch(objects, ia, ib)
    assert np.array_equal(r1.status, r2.status)
    assert np.allclose(r1.distance, r2.distance, rtol=0, atol=1e-12)
    # the listed pairs' results read in one call are pair k's results (the 2D run's verdicts)
    ks = np.flatnonzero(r1.distance < 1.0)
    assert {int(c) for c in r1.cert_kind[ks]} >= {1, 3, 4} and 10 < len(ks) < len(ia)
    for k, got in zip(ks.tolist(), r1.results(ks)):
        assert same_fields(got, r1.result(k)), k
    flipped = ["clearance" if r.status is Status.CLEAR else r.status.value for r in r1.results(ks)]
    assert [r.status.value for r in r1.results(ks, status=flipped)] == flipped
    with pytest.raises(ValueError, match="ring_offsets"):
        plane.PartSet.from_arrays(np.zeros((4, 2)), [0, 2, 4], [0, 2])


def test_every_want_is_certified():
    """distance and intersect (no depth) on convex pairs and on parts with holes: the same
    boolean as the verdict, certificates that hold, no depth without EPA."""
    rng = rng_for("plane wants")
    for k in range(60):
        if k % 2:
            a = plane.Polygon(random_convex(rng, 8))
            b = plane.Polygon(random_convex(rng, 8, rng.normal(size=2) * 1.5))
        else:
            a = plane.Region(random_region(rng, (0.0, 0.0), holes=True))
            b = plane.Region(random_region(rng, rng.normal(size=2) * 1.5, holes=k % 4 == 0))
        verdict = checked(a, b)
        for want in ("distance", "intersect"):
            r = checked(a, b, want=want)
            assert r.depth is None
            assert (r.status is Status.CLEAR) == (verdict.status is Status.CLEAR), (k, want, r, verdict)


def test_box_pairs_against_every_pair_and_bad_boxes():
    """plane.box_pairs (the 2D run's broad phase) against the O(n^2) test of every pair; more
    cases in tests/scene/test_broadphase.py."""
    rng = np.random.default_rng(31)
    lo = rng.uniform(0.0, 20.0, size=(300, 2))
    hi = lo + rng.uniform(0.0, 1.5, size=(300, 2))
    i, j = plane.box_pairs(lo, hi)
    every = np.all((lo[:, None] <= hi[None]) & (lo[None] <= hi[:, None]), axis=2)
    wi, wj = np.nonzero(np.triu(every, 1))
    assert np.array_equal(i, wi) and np.array_equal(j, wj)
    assert 0 < len(i) < 300 * 299 // 20
    with pytest.raises(ValueError, match="lo <= hi"):
        plane.box_pairs(np.array([[0.0, 0.0], [1.0, 1.0]]), np.array([[1.0, -1.0], [2.0, 2.0]]))
    with pytest.raises(ValueError, match=r"\(n, 2\)"):
        plane.box_pairs(np.zeros((2, 3)), np.ones((2, 3)))
