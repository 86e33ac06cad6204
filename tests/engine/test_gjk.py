"""GJK: the boolean answer, the distance, the touching band, degenerate and extreme inputs.

Every expectation comes from an oracle that is not the engine (tests/conftest.py): an LP for "do
the hulls share a point", qhull's Minkowski difference for small hulls, coal and python-fcl on the
same vertex arrays, analytic spheres, boxes and capsules. Every answer's certificate is re-checked
by gjkcli.engine.certify. Random cases come from fixed seeds, with a check that they are not all alike.
"""
from __future__ import annotations

import collections

import numpy as np
import pytest

from conftest import (
    ORACLE_LOG,
    assert_certified,
    assert_sane,
    coal_oracle,
    expected_status,
    fcl_oracle,
    lp_intersects,
    minkowski_oracle,
    random_cloud,
    random_rigid,
    random_rotation,
    rigid,
    rng_for,
    segment_distance,
)
from gjkcli.engine.query import query
from gjkcli.engine.results import Status
from gjkcli.engine.shapes import Shape

GAPS = [1e-1, 1e-3, 1e-6, 1e-9, 1e-12, 0.0, -1e-12, -1e-9, -1e-6, -1e-3, -1e-1, -0.5]


def checked(a, b, **kw):
    """query(a, b), with no NaN, never undecided, and an independently verified certificate."""
    r = query(a, b, **kw)
    assert_sane(r)
    assert_certified(a, b, r)
    return r


def random_pair(rng, spread: float = 1.6, nmax: int = 30):
    """Two random hulls of 4..nmax points; B's centre is a Gaussian step away from A's."""
    na, nb = rng.integers(4, nmax + 1, size=2)
    VA = random_cloud(rng, na)
    VB = random_cloud(rng, nb) + rng.normal(size=3) * spread
    return VA, VB


def slid(VA, VB, gap_rel):
    """B slid along the oracle's normal so that the distance it had becomes gap_rel x pair size.

    For a negative gap the slide overshoots by |gap|: the overlap that makes is at most that, and
    the oracle says how much it really is.
    """
    o = minkowski_oracle(VA, VB)
    a, b = Shape.hull(VA), Shape.hull(VB)
    size = max(a.size, b.size)
    return VB + (gap_rel * size - o.signed_distance) * o.normal


# -- the boolean answer against an LP -----------------------------------------------------------------


def test_intersection_matches_lp():
    """1000 seeded pairs: the engine's boolean equals the LP's, and 30%-70% of pairs intersect."""
    rng = rng_for("lp")
    n, hits, band, agree_oracles = 1000, 0, 0, 0
    for k in range(n):
        VA, VB = random_pair(rng)
        a, b = Shape.hull(VA), Shape.hull(VB)
        verdict = checked(a, b)
        boolean = checked(a, b, want="intersect")
        tol = verdict.tolerance
        s = minkowski_oracle(VA, VB).signed_distance
        if abs(s) <= 10 * tol:
            # within reach of the band: the LP's yes/no says nothing there; the distance decides
            band += 1
            assert verdict.status is expected_status(s, tol), (k, s, verdict)
            continue
        shared = lp_intersects(VA, VB)
        hits += shared
        agree_oracles += shared == (s < 0)
        assert (verdict.status is not Status.CLEAR) == shared, (k, s, verdict)
        assert (boolean.status is not Status.CLEAR) == shared, (k, s, boolean)
        assert verdict.status is expected_status(s, tol)
    decided = n - band
    assert agree_oracles == decided  # the LP and qhull agree with each other
    assert 0.3 <= hits / decided <= 0.7, hits / decided
    assert band <= n // 100


# -- distance against qhull, coal and python-fcl ------------------------------------------------------


def test_distance_matches_minkowski_oracle():
    """Separated small hulls: distance to 1e-9 x size, bracketed by the certified lower bound."""
    rng = rng_for("mink distance")
    compared = 0
    while compared < 400:
        VA, VB = random_pair(rng, spread=3.0)
        o = minkowski_oracle(VA, VB)
        if o.signed_distance <= 0:
            continue
        a, b = Shape.hull(VA), Shape.hull(VB)
        size = max(a.size, b.size)
        for want in ("verdict", "distance", "intersect"):
            r = checked(a, b, want=want)
            assert r.distance_lower <= o.signed_distance + 1e-9 * size
            assert r.distance >= o.signed_distance - 1e-9 * size
            if want != "intersect":  # a boolean query may stop at the first plane beyond tol
                assert r.distance == pytest.approx(o.signed_distance, rel=0, abs=1e-9 * size)
                assert r.distance_lower == pytest.approx(o.signed_distance, rel=0, abs=1e-9 * size)
                assert r.depth is None
        compared += 1


def signed_reference(VA, VB, engine: float, size: float, case: str, tally):
    """Check one signed distance against coal and python-fcl, falling back to qhull.

    An outside oracle that answers and agrees with the engine to 1e-6 x size (their own GJK
    tolerance is 1e-6) counts as agreement. One that fails (a sentinel, an aborted process) or
    disagrees is recorded; qhull, exact on these small hulls, then decides who is right.
    """
    exact = None
    answers = {"coal": coal_oracle(VA, VB, case)}
    fcl = fcl_oracle(VA, VB, case)
    answers["python-fcl"] = None if fcl is None else fcl["signed"]
    for name, value in answers.items():
        if value is None:
            tally[(name, "failed")] += 1
            continue
        if abs(value - engine) <= 1e-6 * size:
            tally[(name, "agrees")] += 1
            ORACLE_LOG.add(f"{name} value", case, "agrees to 1e-6 x size")
            continue
        if exact is None:
            exact = minkowski_oracle(VA, VB).signed_distance
        assert abs(exact - engine) <= 1e-9 * size, (name, value, exact, engine)
        tally[(name, "wrong, qhull sides with the engine")] += 1
        ORACLE_LOG.add(f"{name} value", case, "off by > 1e-6 x size (qhull sides with the engine)")
    if all(v is None for v in answers.values()):
        exact = minkowski_oracle(VA, VB).signed_distance
        assert abs(exact - engine) <= 1e-9 * size, (exact, engine)


def test_distance_against_coal_and_fcl():
    """Random hull pairs, apart and overlapping, of up to 30 vertices: both libraries, qhull as referee."""
    rng = rng_for("coal fcl")
    tally = collections.Counter()
    for k in range(300):
        VA, VB = random_pair(rng, spread=2.0)
        a, b = Shape.hull(VA), Shape.hull(VB)
        r = checked(a, b)
        signed_reference(VA, VB, r.signed_distance, max(a.size, b.size), "random hull pairs", tally)
    # the cross-check is not vacuous: each library answered and agreed on most pairs
    for name in ("coal", "python-fcl"):
        assert tally[(name, "agrees")] >= 0.9 * 300, tally


def test_touching_cubes_against_coal_and_fcl():
    """Face-to-face cubes at gap 0, offset sideways: what each library says is recorded.

    The engine calls every one touching at distance 0, as coal and FCL's distance do; FCL's default
    collide (libccd) reports no contact for the axis-aligned pair.
    """
    cube = np.array([[x, y, z] for x in (-0.5, 0.5) for y in (-0.5, 0.5) for z in (-0.5, 0.5)])
    rng = rng_for("touching cubes")
    case = "touching cubes (gap 0)"
    for k in range(40):
        R = random_rotation(rng) if k else np.eye(3)
        lateral = np.array([1.0, *rng.uniform(-0.9, 0.9, 2)]) if k > 1 else np.array([1.0, 0.0, 0.0])
        VA, VB = cube @ R.T, (cube + lateral) @ R.T
        a, b = Shape.hull(VA), Shape.hull(VB)
        r = checked(a, b)
        assert r.status is Status.TOUCHING
        assert abs(r.signed_distance) <= 1e-12
        fcl = fcl_oracle(VA, VB, case, want_depth=True)
        if fcl is not None:
            for solver in ("libccd", "indep"):
                contact = fcl[solver] is not None
                ORACLE_LOG.add(f"fcl collide {solver}", case, "contact" if contact else "no contact")
            ORACLE_LOG.add("python-fcl value", case, "0" if abs(fcl["signed"]) <= 1e-12 else "nonzero")
        coal = coal_oracle(VA, VB, case)
        if coal is not None:
            ORACLE_LOG.add("coal value", case, "0" if abs(coal) <= 1e-12 else "nonzero")


# -- analytic shapes ------------------------------------------------------------------------------


def test_spheres_analytic():
    rng = rng_for("spheres")
    for _ in range(500):
        r1, r2 = rng.uniform(0.1, 2.0, 2)
        c1 = rng.normal(size=3) * 3
        c2 = c1 + rng.normal(size=3) * (r1 + r2)
        a, b = Shape.sphere(r1, c1), Shape.sphere(r2, c2)
        r = checked(a, b)
        s = float(np.linalg.norm(c2 - c1)) - r1 - r2
        size = max(a.size, b.size)
        assert r.signed_distance == pytest.approx(s, abs=1e-12 * size)
        assert r.status is expected_status(s, r.tolerance)


def test_axis_aligned_boxes_analytic():
    """Apart: the norm of the per-axis gaps. Overlapping: the least per-axis overlap."""
    rng = rng_for("aabb")
    for _ in range(500):
        ea, eb = rng.uniform(0.1, 2.0, (2, 3))
        ca = rng.normal(size=3)
        cb = ca + rng.normal(size=3) * 1.2
        a, b = Shape.box(ea, rigid(t=ca)), Shape.box(eb, rigid(t=cb))
        r = checked(a, b)
        gaps = np.abs(cb - ca) - 0.5 * (ea + eb)
        s = float(np.linalg.norm(np.maximum(gaps, 0.0))) if np.any(gaps > 0) else float(np.max(gaps))
        size = max(a.size, b.size)
        assert r.signed_distance == pytest.approx(s, abs=1e-12 * size), (gaps, r)
        assert r.status is expected_status(s, r.tolerance)


def test_capsules_analytic():
    """Segment-segment distance less the radii (Ericson 2005, section 5.1.9)."""
    rng = rng_for("capsules")
    for _ in range(500):
        p1, q1 = rng.normal(size=(2, 3))
        p2, q2 = rng.normal(size=(2, 3)) * 0.8 + rng.normal(size=3)
        r1, r2 = rng.uniform(0.05, 0.6, 2)
        a, b = Shape.segment(p1, q1, r1), Shape.segment(p2, q2, r2)
        r = checked(a, b)
        s = segment_distance(p1, q1, p2, q2) - r1 - r2
        size = max(a.size, b.size)
        assert r.signed_distance == pytest.approx(s, abs=1e-12 * size)
        assert r.status is expected_status(s, r.tolerance)


# -- the touching band --------------------------------------------------------------------------------


def test_touching_band_random_hulls():
    """80 separated pairs slid to each gap: every verdict in its band, intersect agrees, coal tallied."""
    rng = rng_for("band")
    pairs = 0
    while pairs < 80:
        VA, VB = random_pair(rng, spread=3.0, nmax=20)
        if minkowski_oracle(VA, VB).signed_distance <= 0:
            continue
        pairs += 1
        a = Shape.hull(VA)
        statuses = []
        for gap in GAPS:
            VBg = slid(VA, VB, gap)
            b = Shape.hull(VBg)
            s = minkowski_oracle(VA, VBg).signed_distance
            r = checked(a, b)
            want = expected_status(s, r.tolerance)
            assert r.status is want, (gap, s, r)
            boolean = checked(a, b, want="intersect")
            assert (boolean.status is Status.CLEAR) == (want is Status.CLEAR), (gap, s, boolean)
            distance = checked(a, b, want="distance")
            assert (distance.status is Status.CLEAR) == (want is Status.CLEAR), (gap, s, distance)
            if abs(gap) <= 1e-9:
                assert r.status is Status.TOUCHING
            # consistently: the same answer again, and with A and B swapped
            again, swapped = checked(a, b), checked(b, a)
            assert again.status is r.status and again.signed_distance == r.signed_distance
            assert swapped.status is r.status, (gap, s, r, swapped)
            assert swapped.signed_distance == pytest.approx(r.signed_distance, abs=1e-9 * max(a.size, b.size))
            statuses.append(r.status)
        # apart, the distance is exactly the gap: the verdicts run clear, then touching
        assert statuses[:6] == [Status.CLEAR] * 3 + [Status.TOUCHING] * 3, statuses


def test_touching_band_coal_and_fcl():
    """The libraries on the band: how often coal gives its sentinel or FCL's process aborts."""
    rng = rng_for("band libs")
    tally = collections.Counter()
    pairs = 0
    while pairs < 40:
        VA, VB = random_pair(rng, spread=3.0, nmax=14)
        if minkowski_oracle(VA, VB).signed_distance <= 0:
            continue
        pairs += 1
        a = Shape.hull(VA)
        for gap in GAPS[:-1]:
            VBg = slid(VA, VB, gap)
            b = Shape.hull(VBg)
            r = checked(a, b)
            signed_reference(VA, VBg, r.signed_distance, max(a.size, b.size),
                             f"touching band, gap {gap:+g}", tally)
            # coal asked for more than its default 1e-6: recorded, for the report
            tight = coal_oracle(VA, VBg, "band, gjk/epa tolerance 1e-12", tolerance=1e-12)
            if tight is not None:
                s = minkowski_oracle(VA, VBg).signed_distance
                ok = abs(tight - s) <= 1e-6 * max(a.size, b.size)
                ORACLE_LOG.add("coal value", "band, gjk/epa tolerance 1e-12",
                               "agrees with qhull" if ok else "off by > 1e-6 x size")


def test_touching_band_boxes_spheres_capsules():
    """Rotated boxes (qhull on their corners), spheres and capsules (analytic) across the band."""
    rng = rng_for("band prims")
    corners = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], dtype=float)
    for k in range(30):
        ea, eb = rng.uniform(0.2, 2.0, (2, 3))
        Ta, Tb = random_rigid(rng), random_rigid(rng)
        Tb[:3, 3] = Ta[:3, 3] + rng.normal(size=3) * 2 + 4 * np.sign(rng.normal(size=3))
        VA = (0.5 * ea * corners) @ Ta[:3, :3].T + Ta[:3, 3]
        VB = (0.5 * eb * corners) @ Tb[:3, :3].T + Tb[:3, 3]
        o = minkowski_oracle(VA, VB)
        a = Shape.box(ea, Ta)
        size = max(a.size, Shape.box(eb, Tb).size)
        for gap in GAPS:
            move = (gap * size - o.signed_distance) * o.normal
            Tg = Tb.copy()
            Tg[:3, 3] += move
            s = minkowski_oracle(VA, VB + move).signed_distance
            r = checked(a, Shape.box(eb, Tg))
            assert r.status is expected_status(s, r.tolerance), (k, gap, s, r)
    for k in range(60):
        r1, r2 = rng.uniform(0.1, 1.0, 2)
        c1 = rng.normal(size=3)
        n = rng.normal(size=3)
        n /= np.linalg.norm(n)
        size = 2 * np.sqrt(3) * max(r1, r2)
        for gap in GAPS:
            c2 = c1 + (r1 + r2 + gap * size) * n
            r = checked(Shape.sphere(r1, c1), Shape.sphere(r2, c2))
            s = float(np.linalg.norm(c2 - c1)) - r1 - r2
            assert r.status is expected_status(s, r.tolerance), (gap, s, r)
            if abs(gap) <= 1e-9:
                assert r.status is Status.TOUCHING
        # capsules: two crossed segments, B moved along their common normal
        p1, q1 = c1 - [1.0, 0, 0], c1 + [1.0, 0, 0]
        axis = np.cross([1.0, 0, 0], n)
        axis /= np.linalg.norm(axis)
        for gap in GAPS[:-1]:
            mid = c1 + (r1 + r2 + gap * size) * np.cross([1.0, 0, 0], axis)
            a, b = Shape.segment(p1, q1, r1), Shape.segment(mid - axis, mid + axis, r2)
            r = checked(a, b)
            s = segment_distance(p1, q1, mid - axis, mid + axis) - r1 - r2
            assert r.status is expected_status(s, r.tolerance), (gap, s, r)


def test_unit_cubes_at_the_tolerance_boundary(capsys):
    """Rotated unit-cube pairs at gap = +-tol x (1 +- 1e-3) and exactly +-tol.

    What the engine does: a thousandth of the band away from its edge, every verdict is the band's
    (clear above +tol, collision below -tol where the slide really overlaps that much, touching
    inside). Exactly at the edge the answer is whatever the rounding of the moved vertices and of
    the oracle makes it; it is never undecided and never outside {touching, the neighbour band}.
    """
    cube = np.array([[x, y, z] for x in (-0.5, 0.5) for y in (-0.5, 0.5) for z in (-0.5, 0.5)])
    rng = rng_for("cube edge")
    tally = collections.Counter()
    for _ in range(100):
        VA = cube @ random_rotation(rng).T
        d = rng.normal(size=3)
        VB = cube @ random_rotation(rng).T + 3 * d / np.linalg.norm(d)
        a = Shape.hull(VA)
        o = minkowski_oracle(VA, VB)
        tol = checked(a, Shape.hull(VB)).tolerance
        for f in (1.001, 1.0, 0.999, -0.999, -1.0, -1.001):
            VBg = VB + (f * tol - o.signed_distance) * o.normal
            r = checked(a, Shape.hull(VBg))
            s = minkowski_oracle(VA, VBg).signed_distance
            want = expected_status(s, tol)
            if f == 1.0:
                assert r.status in (Status.TOUCHING, Status.CLEAR)
            elif f == -1.0:
                assert r.status in (Status.TOUCHING, Status.COLLISION)
            else:
                assert r.status is want, (f, s / tol, r)
            tally[(f, r.status.value, "as oracle" if r.status is want else "not as oracle")] += 1
    with capsys.disabled():
        print("\nunit cubes at the band's edge:", {k: v for k, v in sorted(tally.items())})
    # exactly at +tol the answers split between the two bands: the boundary is really met
    assert tally[(1.0, "clear", "as oracle")] > 0 and tally[(1.0, "touching", "as oracle")] > 0


# -- degenerate and extreme inputs --------------------------------------------------------------------

SQUARE = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 1.0, 0.0]])
UNIT_BOX = Shape.box([1.0, 1.0, 1.0])


def _cases():
    rng = np.random.default_rng(7)
    cloud = rng.normal(size=(30, 3))
    tri = rng.normal(size=(3, 3))
    return [
        # name, A, B, expected status, expected signed distance (None: not checked)
        ("coplanar plates overlapping", Shape.hull(SQUARE), Shape.hull(SQUARE + [0.5, 0.5, 0.0]), "touching", 0.0),
        ("coplanar plates edge to edge", Shape.hull(SQUARE), Shape.hull(SQUARE + [1.0, 0.0, 0.0]), "touching", 0.0),
        ("coplanar plates apart", Shape.hull(SQUARE), Shape.hull(SQUARE + [1.5, 0.0, 0.0]), "clear", 0.5),
        ("plates stacked", Shape.hull(SQUARE), Shape.hull(SQUARE + [0.0, 0.0, 1.0]), "clear", 1.0),
        ("plates crossing", Shape.hull(SQUARE),
         Shape.hull([[0.5, -1, -1], [0.5, 2, -1], [0.5, 2, 1], [0.5, -1, 1]]), "collision", -0.5),
        ("plate inside a box", Shape.hull(SQUARE - [0.5, 0.5, 0.0]), Shape.box([2, 2, 2]), "collision", -1.0),
        ("point inside a box", Shape.point([0.1, 0.2, 0.3]), UNIT_BOX, "collision", -0.2),
        ("point hull inside a box", Shape.hull([[0.1, 0.2, 0.3]]), UNIT_BOX, "collision", -0.2),
        ("point on a box face", Shape.point([0.5, 0.2, 0.3]), UNIT_BOX, "touching", 0.0),
        ("point off a box", Shape.point([0.75, 0.2, 0.3]), UNIT_BOX, "clear", 0.25),
        ("segment through a box", Shape.segment([-2, 0.1, 0.2], [2, 0.1, 0.2]), UNIT_BOX, "collision", -0.3),
        ("segment hull through a box", Shape.hull([[-2, 0.1, 0.2], [2, 0.1, 0.2]]), UNIT_BOX, "collision", -0.3),
        ("segment beside a box", Shape.segment([-2, 0.1, 0.7], [2, 0.1, 0.7]), UNIT_BOX, "clear", 0.2),
        ("segments crossing", Shape.segment([-1, 0, 0], [1, 0, 0]), Shape.segment([0, -1, 0], [0, 1, 0]),
         "touching", 0.0),
        ("segments collinear overlapping", Shape.segment([-1, 0, 0], [1, 0, 0]), Shape.segment([0, 0, 0], [2, 0, 0]),
         "touching", 0.0),
        ("capsules collinear overlapping", Shape.segment([-1, 0, 0], [1, 0, 0], 0.1),
         Shape.segment([0, 0, 0], [2, 0, 0], 0.2), "collision", -0.3),
        ("segments skew apart", Shape.segment([-1, 0, 0], [1, 0, 0]), Shape.segment([0, -1, 1], [0, 1, 1]),
         "clear", 1.0),
        ("points equal", Shape.point([1, 2, 3]), Shape.point([1, 2, 3]), "touching", 0.0),
        ("points apart", Shape.point([1, 2, 3]), Shape.point([1, 2, 4]), "clear", 1.0),
        ("spheres concentric", Shape.sphere(1.0, [1, 2, 3]), Shape.sphere(0.5, [1, 2, 3]), "collision", -1.5),
        ("identical hulls", Shape.hull(cloud), Shape.hull(cloud), "collision", None),
        ("identical boxes", Shape.box([1, 2, 3]), Shape.box([1, 2, 3]), "collision", -1.0),
        ("hull inside hull", Shape.hull(0.1 * cloud), Shape.hull(cloud), "collision", None),
        ("triangles equal", Shape.hull(tri), Shape.hull(tri), "touching", 0.0),
        ("triangle above triangle", Shape.hull(tri), Shape.hull(tri + [0.0, 0.0, 0.01]), "clear", None),
        ("triangle through a box", Shape.hull([[-2, -2, 0.1], [3, -2, 0.1], [-2, 3, 0.1]]), UNIT_BOX,
         "collision", -0.4),
        ("sliver 1e-8 thick in a box's skin", Shape.hull([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1e-8], [1, 1, 1e-8]]),
         Shape.box([1, 1, 1], rigid(t=[0, 0, 0.5 + 1e-9])), "touching", -9e-9),
        # a sliver's simplices are conditioned like its thickness: GJK's bounds still hold but stay
        # a few 1e-9 apart (measured 2.5e-9: distance_lower 0 <= 0 <= distance)
        ("sliver 1e-8 thick on a box", Shape.hull([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1e-8], [1, 1, 1e-8]]),
         Shape.box([1, 1, 1], rigid(t=[0, 0, -0.5])), "touching", (0.0, 1e-8)),
        ("needle through a box",
         Shape.hull([[-3, 0.1, 0.1], [3, 0.1, 0.1], [3, 0.1 + 1e-7, 0.1], [0, 0.1, 0.1 + 1e-7]]),
         UNIT_BOX, "collision", -0.4),
    ]


@pytest.mark.parametrize("name,a,b,status,signed", _cases(), ids=[c[0] for c in _cases()])
def test_degenerate_cases(name, a, b, status, signed):
    signed, rel = signed if isinstance(signed, tuple) else (signed, 1e-9)
    size = max(a.size, b.size)
    for A, B in ((a, b), (b, a)):
        r = checked(A, B)
        assert r.status.value == status, r
        if signed is not None:
            assert r.signed_distance == pytest.approx(signed, abs=rel * size), r
        # the boolean and distance-only queries agree on clear or not
        for want in ("intersect", "distance"):
            other = checked(A, B, want=want)
            assert (other.status is Status.CLEAR) == (status == "clear"), (want, other)


def test_degenerate_hulls_against_oracle():
    """Random flat polygons, segments, single triangles and points against qhull, both ways round.

    A - B is solid as long as B is, so qhull's Minkowski difference still answers exactly.
    """
    rng = rng_for("degenerate hulls")
    for k in range(250):
        kind = k % 5
        n = [rng.integers(4, 12), 2, 3, 1, rng.integers(3, 9)][kind]
        flat = rng.normal(size=(n, 3)) * [1.0, 1.0, 0.0] if kind in (0, 4) else rng.normal(size=(n, 3))
        VA = flat @ random_rotation(rng).T + rng.normal(size=3) * 0.8
        if kind == 4:  # a plate against a plate in another plane: A - B is still solid
            VB = (rng.normal(size=(int(rng.integers(3, 9)), 3)) * [1.0, 1.0, 0.0]) @ random_rotation(rng).T
        else:
            VB = random_cloud(rng, rng.integers(4, 15))
        a, b = Shape.hull(VA), Shape.hull(VB)
        assert a.dimension == [2, 1, 2, 0, 2][kind]
        o = minkowski_oracle(VA, VB)
        size = max(a.size, b.size)
        for A, B in ((a, b), (b, a)):
            r = checked(A, B)
            assert r.status is expected_status(o.signed_distance, r.tolerance), (k, o, r)
            tol = 1e-9 if o.signed_distance > 0 else 1e-6
            assert r.signed_distance == pytest.approx(o.signed_distance, abs=tol * size), (k, o, r)


@pytest.mark.parametrize("offset", [1e6, 1e9])
def test_far_from_the_origin(offset):
    """The same pairs translated far away: verdicts equal, distances and depths within offset x 1e-15."""
    rng = rng_for(f"offset {offset}")
    direction = rng.normal(size=3)
    shift = offset * direction / np.linalg.norm(direction)
    for k in range(150):
        VA, VB = random_pair(rng, spread=2.0)
        near = checked(Shape.hull(VA), Shape.hull(VB))
        far = checked(Shape.hull(VA + shift), Shape.hull(VB + shift))
        if abs(near.signed_distance) <= 100 * near.tolerance:
            continue  # inside reach of the band the rounding of the shifted vertices may decide
        assert far.status is near.status
        assert far.signed_distance == pytest.approx(near.signed_distance, abs=4e-15 * offset), k
        # primitives keep their shape exactly: only the pose moves
        T = random_rigid(rng)
        a = Shape.box([1, 2, 3], T)
        b = Shape.cylinder(0.5, 2.0, rigid(random_rotation(rng), T[:3, 3] + rng.normal(size=3) * 2))
        near = checked(a, b)
        far = checked(a.moved(rigid(t=shift)), b.moved(rigid(t=shift)))
        assert far.status is near.status
        assert far.signed_distance == pytest.approx(near.signed_distance, abs=4e-15 * offset)


@pytest.mark.parametrize("scale", [1e-6, 1e6])
def test_scaled(scale):
    """The same pairs scaled: every length scales, every verdict stays (the band scales too)."""
    rng = rng_for(f"scale {scale}")
    for k in range(150):
        VA, VB = random_pair(rng, spread=2.0)
        unit = checked(Shape.hull(VA), Shape.hull(VB))
        scaled = checked(Shape.hull(VA * scale), Shape.hull(VB * scale))
        assert scaled.status is unit.status
        assert scaled.tolerance == pytest.approx(unit.tolerance * scale, rel=1e-12)
        size = max(Shape.hull(VA).size, Shape.hull(VB).size)
        assert scaled.signed_distance / scale == pytest.approx(unit.signed_distance, abs=1e-9 * size)


@pytest.mark.parametrize("n", [4, 8, 100, 1000, 10000])
def test_hulls_of_many_vertices(n):
    """Hulls of n points on spheres (every point a vertex), apart or overlapping.

    The LP decides whether they meet; apart, the certified plane and the verified witness points
    pin the distance: their bounds must meet to 1e-9 x size.
    """
    rng = rng_for(f"many {n}")
    for _ in range(10 if n < 10000 else 4):
        P = rng.normal(size=(n, 3))
        P /= np.linalg.norm(P, axis=1)[:, None]
        Q = rng.normal(size=(n, 3))
        Q /= np.linalg.norm(Q, axis=1)[:, None]
        d = rng.normal(size=3)
        Q = Q + (2 + rng.uniform(-0.5, 0.5)) * d / np.linalg.norm(d)
        a, b = Shape.hull(P), Shape.hull(Q)
        assert a.n_vertices == n and b.n_vertices == n
        r = checked(a, b)
        size = max(a.size, b.size)
        if abs(r.signed_distance) > 1e-6 * size:
            assert (r.status is not Status.CLEAR) == lp_intersects(P, Q)
        if r.status is Status.CLEAR:
            assert r.distance - r.distance_lower <= 1e-9 * size


def test_hull_of_100000_vertices_queries(big_sphere_hull):
    shape, points = big_sphere_hull
    rng = rng_for("big queries")
    for gap in (0.3, 1e-3, -1e-3, -0.3):
        d = rng.normal(size=3)
        d /= np.linalg.norm(d)
        small = Shape.hull(random_cloud(rng, 12, scale=0.2))
        # place the small hull's nearest point gap away from the big hull's support plane along -d
        offset = -d * (1.0 + gap) - d * (small.world_vertices @ -d).max()
        # the facet polytope lies inside the unit sphere: only the sign of a large gap is known
        b = small.moved(rigid(t=offset))
        r = checked(shape, b)
        if gap == 0.3:
            assert r.status is Status.CLEAR
        if gap == -0.3:
            assert r.status is Status.COLLISION


# -- invariance ---------------------------------------------------------------------------------------


def test_rigid_motion_of_both_changes_nothing():
    """One random rigid transform of both shapes: distance and depth unchanged to 1e-9 relative."""
    rng = rng_for("invariance")
    makers = [
        lambda T: Shape.hull(random_cloud(rng, int(rng.integers(4, 40))), transform=T),
        lambda T: Shape.box(rng.uniform(0.3, 2.0, 3), T),
        lambda T: Shape.cylinder(rng.uniform(0.2, 1.0), rng.uniform(0.3, 2.0), T),
        lambda T: Shape.cone(rng.uniform(0.2, 1.0), rng.uniform(0.3, 2.0), T),
        lambda T: Shape.capsule(rng.uniform(0.1, 0.6), rng.uniform(0.3, 2.0), T),
        lambda T: Shape.sphere(rng.uniform(0.2, 1.0), T[:3, 3]),
    ]
    for k in range(300):
        a = makers[k % len(makers)](random_rigid(rng))
        b = makers[(k // len(makers)) % len(makers)](random_rigid(rng, reach=1.5))
        M = random_rigid(rng, reach=10.0)
        before = checked(a, b)
        after = checked(a.moved(M), b.moved(M))
        size = max(a.size, b.size)
        if abs(before.signed_distance) > 100 * before.tolerance:
            assert after.status is before.status
        assert after.signed_distance == pytest.approx(before.signed_distance, abs=1e-9 * size), (k, before, after)


# -- trace --------------------------------------------------------------------------------------------


def test_trace():
    """Steps = iterations (+ EPA's); the last step has the exit; |v| never grows; off gives None."""
    rng = rng_for("trace")
    for k in range(240):
        VA, VB = random_pair(rng)
        a, b = Shape.hull(VA), Shape.hull(VB)
        if k % 4 == 1:  # inflated shapes: GJK runs on the cores, and overlapping cores need no EPA
            a, b = Shape.hull(VA, radius=0.3), Shape.sphere(0.5, VB.mean(axis=0))
        elif k % 4 == 2:
            a, b = Shape.box([1.0, 1.5, 0.5], random_rigid(rng)), Shape.capsule(0.2, 1.0, random_rigid(rng))
        for want in ("verdict", "distance", "intersect"):
            r = query(a, b, trace=True, want=want)
            assert query(a, b, want=want).trace is None
            steps = r.trace
            gjk = [s for s in steps if s.phase == "gjk"]
            epa = [s for s in steps if s.phase == "epa"]
            assert len(gjk) == r.iterations
            assert len(epa) == r.epa_iterations
            assert steps[: len(gjk)] == tuple(gjk)  # GJK first, then EPA
            if epa:
                assert epa[-1].exit == r.epa_exit
            else:
                assert gjk[-1].exit == r.exit
            assert all(s.exit is None for s in gjk[:-1])
            uppers = [s.upper for s in gjk]
            assert all(u2 <= u1 for u1, u2 in zip(uppers, uppers[1:])), uppers
            # the GJK lower bound is the best plane so far: it never falls
            lowers = [s.lower for s in gjk]
            assert all(l2 >= l1 for l1, l2 in zip(lowers, lowers[1:])), lowers
            # support points are world points of the shapes
            for s in gjk:
                np.testing.assert_allclose(s.w, s.point_a - s.point_b, atol=1e-12 * (1 + np.abs(s.w).max()))


# -- never undecided, never NaN ------------------------------------------------------------------------


def test_random_mixed_pairs_are_well_posed():
    """Hulls, primitives and inflated hulls in random poses: no undecided, no NaN, every certificate holds."""
    rng = rng_for("mixed")
    makers = [
        lambda T: Shape.hull(random_cloud(rng, int(rng.integers(4, 60))), transform=T),
        lambda T: Shape.hull(random_cloud(rng, int(rng.integers(4, 30))), transform=T, radius=rng.uniform(0, 0.3)),
        lambda T: Shape.box(rng.uniform(0.3, 2.0, 3), T),
        lambda T: Shape.cylinder(rng.uniform(0.2, 1.0), rng.uniform(0.3, 2.0), T),
        lambda T: Shape.cone(rng.uniform(0.2, 1.0), rng.uniform(0.3, 2.0), T),
        lambda T: Shape.capsule(rng.uniform(0.1, 0.6), rng.uniform(0.3, 2.0), T),
        lambda T: Shape.sphere(rng.uniform(0.2, 1.0), T[:3, 3]),
        lambda T: Shape.segment(T[:3, 3], T[:3, 3] + rng.normal(size=3)),
        lambda T: Shape.point(T[:3, 3]),
    ]
    seen = collections.Counter()
    for k in range(1500):
        a = makers[int(rng.integers(len(makers)))](random_rigid(rng))
        b = makers[int(rng.integers(len(makers)))](random_rigid(rng, reach=1.2))
        for want in ("verdict", "distance", "intersect"):
            r = checked(a, b, want=want)
            seen[(want, r.status.value)] += 1
    assert seen[("verdict", "clear")] > 200 and seen[("verdict", "collision")] > 200, seen


def test_needle_in_a_speck_has_a_common_point():
    """A needle 3e-7 long and 2e-12 wide through a tetrahedron 6e-10 across (a fuzz test's pair,
    seed 1374325870): GJK's weights on the flat tetrahedron of their difference left the two
    shapes' points 3.5e-15 apart, and their midpoint, the collision's certificate, 1.75e-15
    outside B, five times what the independent check allows at that size."""
    needle = Shape.hull(np.array(
        [[-1.4260054373794736e-07, 5.452053658344804e-13, 7.753288805339736e-14],
         [-3.838560392737278e-08, 9.316747572517132e-13, -2.5071561157808495e-13],
         [-2.3219829605057704e-08, -4.0282732059293854e-13, -6.353395032169728e-13],
         [-1.6931271932998783e-07, -2.673229187713543e-13, -3.4073597621160086e-13],
         [9.682372139293185e-08, 6.191847659680374e-13, -4.795505913269812e-13],
         [1.6931271932998783e-07, -9.243967915910229e-14, -7.503250111153862e-14],
         [-1.3206013284731028e-07, -1.1480115384693526e-12, -5.196823851402218e-16],
         [4.1225843336340545e-08, -5.612767406197436e-13, 6.581066481324986e-13],
         [1.417239307611731e-07, -4.0598773451350057e-13, -6.581066481324986e-13],
         [-2.189277587891351e-08, 1.355970764909546e-12, 2.406402841280246e-13],
         [-1.32254196883602e-07, -3.000408314732111e-13, 4.972481185757452e-13],
         [9.76436242605475e-08, -1.355970764909546e-12, 1.7672321801194367e-13]]), rigid(np.array(
        [[-0.4648690283286592, -0.8699359097694166, -0.1646459820172531],
         [-0.2002230329138559, -0.07784990188837326, 0.976652512343437],
         [-0.8624427654004326, 0.48698142230441177, -0.1379911980483778]]),
        [-1.3535036186575226e-08, -5.829495993961464e-09, -2.5110045315995814e-08]))
    speck = Shape.hull(np.array(
        [[9.871308117957132e-11, -7.333426910789449e-11, 5.68118749622645e-11],
         [2.9104956281302164e-10, 8.254399865218177e-11, -1.8489133168686564e-11],
         [-1.2108747658145716e-10, -8.254399865218177e-11, 3.417421556858939e-11],
         [-2.9104956281302164e-10, -4.0021615455150726e-11, -5.68118749622645e-11]]), rigid(np.array(
        [[-0.4289715398534477, -0.8903234995859397, -0.15266788817825044],
         [-0.9019697980398746, 0.4313999644336596, 0.018562168799597878],
         [0.04933458644469622, 0.14566446640029387, -0.9881032141475143]]),
        [-4.100302091028933e-09, -1.937928691608487e-09, -7.329404543435653e-09]))
    for a, b in ((needle, speck), (speck, needle)):
        r = checked(a, b)
        assert r.status is Status.COLLISION, r


@pytest.mark.parametrize("scale", [1e-7, 1.0, 1e4])
def test_thin_parts_at_the_band_have_common_points(scale):
    """Needles and thin plates (widths 1e-8 to 1e-3 of their length) against solids 1e-4 to 1 of
    that length, slid in along a random direction until they overlap by 0.1 to 30 bands, at
    three scales: every certificate holds under the independent check, both ways round, and the
    sweep holds collisions and touching pairs. (Without the weights' correction the sweeps at
    1e-7 and 1e4 failed: common points 6 and 20 times the check's slack outside a part.)"""
    rng = rng_for(f"thin at the band {scale}")
    seen = collections.Counter()
    for k in range(400):
        width = 10.0 ** rng.uniform(-8, -3)
        local = rng.uniform(-1, 1, size=(int(rng.integers(4, 13)), 3)) \
            * ([1.0, width, width] if k % 2 else [1.0, 1.0, width])
        thin = Shape.hull(local @ random_rotation(rng).T * scale)
        V = random_cloud(rng, int(rng.integers(4, 10))) * 10.0 ** rng.uniform(-4, 0) * scale
        V = V - V.mean(axis=0)
        d = rng.normal(size=3)
        d /= np.linalg.norm(d)
        speck = Shape.hull(V)
        depth = query(thin, speck).tolerance * 10.0 ** rng.uniform(-1, 1.5)
        lo, hi = 0.0, 4.0 * scale  # bisection on the slide: overlapping by more than depth at lo
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            if query(thin, speck.moved(rigid(t=d * mid))).signed_distance < -depth:
                lo = mid
            else:
                hi = mid
        solid = Shape.hull(V + d * lo)
        for a, b in ((thin, solid), (solid, thin)):
            seen[checked(a, b).status] += 1
    assert seen[Status.COLLISION] >= 300 and seen[Status.TOUCHING] >= 200, seen


def test_witnesses_of_two_small_cylinders_lie_on_them():
    """Two cylinders 1e-7 across, snapped 2.5e-13 apart (a fuzz test's pair, seed 128011945): GJK
    stopped on a thin triangle whose weights summed to 1 only to 1e-8, and B's witness, on B's
    side, lay 2.2e-15 outside it (the check allows 1.25e-15)."""
    a = Shape.cylinder(3.5129771160017264e-07, 2 * 3.797486132525104e-07, rigid(np.array(
        [[-0.05763471575059742, -0.9409935065227877, -0.3334808243697021],
         [-0.7164498379939509, 0.27161190957949644, -0.6425936509280347],
         [0.6952538163712509, 0.20188658017938632, -0.6898289205047025]])))
    b = Shape.cylinder(1.053893134800518e-07, 2 * 1.1392458397575312e-07, rigid(np.array(
        [[-0.45652031768559764, -0.420238827468796, -0.7842120423889782],
         [0.25662444464797096, 0.781765627208741, -0.5683189232500043],
         [0.8518996971177778, -0.4606971152531513, -0.24904833677032062]]),
        [-1.760123102325155e-07, 3.4740244578075117e-07, -2.3852562681721434e-07]))
    for x, y in ((a, b), (b, a)):
        assert checked(x, y).status is Status.CLEAR


def test_curved_depths_normal_realises_the_depth():
    """Colliding cylinders, cones and boxes at scales 1e-7 to 1e3, both ways round: where EPA says
    it converged, moving B along the answer's normal by the depth (plus the check's slack)
    separates the pair, and the witnesses lie the depth apart along the normal (to 1e-6 of the
    pair's size); every answer's certificate and witnesses hold.

    EPA had stopped on its bounds while answering with the closest face's normal, along which
    the overlap exceeded the depth by up to 5e-9 of the pair's size; the face whose normal gave
    the upper bound realises it. And where faces of A - B lie in one plane (two boxes' faces),
    the face chosen need not hold the origin's projection: its clamped weights gave witnesses
    up to a quarter of the pair's size apart along the plane (443 of these 3,198 answers off
    by more than the check's slack); the face nearest the projection gives them now."""
    from gjkcli.engine.certify import default_slack, support_value

    rng = rng_for("curved depth normals")
    converged = 0
    for k in range(3000):
        scale = 10.0 ** rng.uniform(-7, 3)

        def made():
            kind = int(rng.integers(0, 3))
            T = rigid(random_rotation(rng), rng.normal(size=3) * 0.3 * scale)
            r, h = rng.uniform(0.05, 1.0, size=2) * scale
            if kind == 2:
                return Shape.box(rng.uniform(0.05, 1, size=3) * scale, T)
            return (Shape.cylinder if kind == 0 else Shape.cone)(r, h, T)

        a, b = made(), made()
        for x, y in ((a, b), (b, a)):
            r = checked(x, y)
            if r.status is not Status.COLLISION or r.epa_exit != "converged":
                continue
            converged += 1
            n = np.asarray(r.normal)
            along = float(support_value(x, n) + support_value(y, -n))
            assert along - r.depth <= default_slack(x, y), (k, r, along)
            apart = np.linalg.norm(r.point_a - r.point_b - r.depth * n)
            assert apart <= 1e-6 * max(x.size, y.size), (k, r, apart)
    assert converged >= 3000, converged
