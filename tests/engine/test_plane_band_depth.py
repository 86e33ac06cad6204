"""The plane's exact rule for non-convex parts at depths just under and over the band.

In 3D, two long beams crossing with one rolled read `collision` at a penetration depth under the
band: the crossing's measure was long while the move that parts them was short (tests/engine/
test_depth_search.py). The plane's rule for parts that are not convex (edges crossing beyond the
band, a vertex deeper than the band) is swept here the same way: seeded pairs of long, thin
L-shaped parts meeting at shallow and steep angles, B pushed into A until the penetration depth
is 0.6, 0.95, 1.05 or 1.5 bands. The judge is independent of gjk: the Minkowski difference of the
two parts, the union (shapely) of the convex hulls of the differences of their convex pieces
(each L is two rectangles); the penetration depth is the origin's distance to its boundary.
"""
import collections

import numpy as np
import pytest

from gjkcli.engine import plane

shapely = pytest.importorskip("shapely")
affinity = pytest.importorskip("shapely.affinity")

TOL = 0.002  # the band half-width: 2 mm, the parts in metres


def _ell():
    """An L of 4 m and 2 m arms, 0.1 m thick, as its two convex pieces."""
    return [shapely.box(0, 0, 4.0, 0.1), shapely.box(0, 0, 0.1, 2.0)]


def _ring(pieces):
    return np.asarray(shapely.union_all(pieces).exterior.coords)[:-1]


def _penetration(pa, pb) -> float:
    """The penetration depth of B in A (negative: the distance between them), from the
    Minkowski difference of their convex pieces."""
    hulls = []
    for a in pa:
        va = np.asarray(a.exterior.coords)[:-1]
        for b in pb:
            vb = np.asarray(b.exterior.coords)[:-1]
            hulls.append(shapely.MultiPoint((va[:, None] - vb[None]).reshape(-1, 2)).convex_hull)
    difference = shapely.union_all(hulls)
    origin = shapely.Point(0.0, 0.0)
    d = difference.boundary.distance(origin)
    return d if difference.contains(origin) else -d


def _pressed(rng, bands: float):
    """A (the L at the origin) and B (an L turned near 0, 90 or 180 degrees, maybe mirrored),
    B moved down onto A until the penetration depth is `bands` x TOL (within 1e-9 m)."""
    pa = _ell()
    turn = rng.choice([0.0, np.pi / 2, np.pi]) + rng.uniform(-0.3, 0.3)
    mirrored = rng.random() < 0.5
    shaped = [affinity.rotate(affinity.scale(g, 1, -1 if mirrored else 1, origin=(0, 0)), turn,
                              origin=(0, 0), use_radians=True) for g in _ell()]
    corners = np.concatenate([np.asarray(g.exterior.coords) for g in shaped])
    low = corners[np.argmin(corners[:, 1])]
    dx = rng.uniform(0.5, 3.5) - low[0]

    def at(y):
        return [affinity.translate(g, dx, y) for g in shaped]

    y = 2.5 - low[1]
    for _ in range(100):  # down to the first contact, each step the parts' distance
        gap = shapely.union_all(pa).distance(shapely.union_all(at(y)))
        if gap < 1e-12:
            break
        y -= gap
    above, below = y, y - 0.02
    for _ in range(40):  # then the depth wanted, by bisection
        mid = 0.5 * (above + below)
        if _penetration(pa, at(mid)) < bands * TOL:
            above = mid
        else:
            below = mid
    return pa, at(below)


def test_non_convex_parts_pressed_across_the_band():
    """Touching under the band, collision over it, every reported depth at most the judge's."""
    rng = np.random.default_rng(20261126)
    seen = collections.Counter()
    for k in range(64):
        bands = (0.6, 0.95, 1.05, 1.5)[k % 4]
        pa, pb = _pressed(rng, bands)
        depth = _penetration(pa, pb)
        r = plane.query(plane.Region([_ring(pa)]), plane.Region([_ring(pb)]), tolerance=TOL)
        assert abs(depth / TOL - bands) < 1e-3, (k, depth)
        want = "touching" if bands < 1 else "collision"
        assert r.status.value == want, (k, bands, depth, r.status, r.depth)
        if r.depth is not None:
            assert r.depth <= depth * (1 + 1e-9), (k, r.depth, depth)
        seen[want] += 1
    assert seen == {"touching": 32, "collision": 32}
