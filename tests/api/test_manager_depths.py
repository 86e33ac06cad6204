"""The manager's signed distance (`CollisionManager(signed=True)`) where a part that is not convex
overlaps a probe: minus a depth certified by a point of one part inside the other (judged by an
exact point-triangle distance and winding number, tests/exact_distance.py, not by gjk's engine nor
by trimesh's closest_point, which is off by up to 2e-4 on small triangles), never deeper than the
hulls' penetration depth (the Minkowski difference built by qhull), and exact where the two bounds
meet; swept across the touching band. By default the same overlaps are 0.0, as trimesh + FCL give."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial import ConvexHull

trimesh = pytest.importorskip("trimesh")
pytest.importorskip("fcl")
from trimesh import collision as tc  # noqa: E402

from gjkcli import CollisionManager  # noqa: E402
from gjkcli.tolerances import DEFAULT  # noqa: E402
from exact_distance import signed_distance, unsigned_distance  # noqa: E402
from float32_poses import exact_pose  # noqa: E402

RING = dict(r_min=0.5, r_max=1.0, height=0.4)


def _probe(rng, kind):
    s = rng.uniform(0.15, 0.6, 3)
    if kind == 0:
        return trimesh.creation.box(2 * s)
    if kind == 1:
        return trimesh.creation.icosphere(subdivisions=1, radius=s[0])
    return trimesh.creation.cylinder(radius=s[0], height=2 * s[1], sections=10)


def _hull_depth(a: np.ndarray, b: np.ndarray) -> float:
    """Penetration depth of the convex hulls of the points a and b: the origin's distance to the
    nearest facet of the Minkowski difference (qhull), 0 when the origin is outside it."""
    difference = ConvexHull((a[:, None, :] - b[None, :, :]).reshape(-1, 3))
    offsets = -difference.equations[:, 3]  # n . x <= offset inside, n unit
    return max(float(offsets.min()), 0.0)


@pytest.mark.parametrize("sections", [8, 32, 128])
def test_overlapping_probes_against_independent_judges(sections):
    rng = np.random.default_rng(22)
    ring = trimesh.creation.annulus(**RING, sections=sections)
    ours, theirs, default = CollisionManager(signed=True), tc.CollisionManager(), CollisionManager()
    ours.add_object("ring", ring)
    theirs.add_object("ring", ring)
    default.add_object("ring", ring)
    overlapping = exact = clear = 0
    for k in range(90):
        probe = _probe(rng, k % 3)
        T = exact_pose(rng, 1.2)
        d, data = ours.min_distance_single(probe, T, return_data=True)
        placed = probe.copy().apply_transform(T)
        band = DEFAULT.touching_rel * max(ring.scale, placed.scale)
        if d > band:  # clear: the distance FCL gives on the triangles
            assert d == pytest.approx(theirs.min_distance_single(probe, T), rel=1e-6)
            assert ours.in_collision_single(probe, T) is False
            clear += 1
            continue
        if d >= -band:
            continue  # within the band: touching, no depth to judge
        overlapping += 1
        assert ours.in_collision_single(probe, T) is True
        # by default: 0.0, as trimesh + FCL's mesh distance (the ring is not convex)
        assert default.min_distance_single(probe, T) == 0.0
        # the witness: the probe's point inside the ring or the ring's point inside the probe
        # lies exactly that deep inside the other, as the exact judge measures it
        depth_in_ring = signed_distance(ring, [data.point("__external")])[0]
        depth_in_probe = signed_distance(placed, [data.point("ring")])[0]
        assert max(depth_in_ring, depth_in_probe) == pytest.approx(-d, rel=1e-6, abs=1e-9)
        # and no deeper than the hulls overlap (the parts lie inside their hulls)
        upper = _hull_depth(ring.vertices, placed.vertices)
        assert -d <= upper * (1 + 1e-9) + 1e-12
        exact += bool(-d >= upper * (1 - 1e-9))
    # both kinds of answer occur, and the bounds meet (the depth is exact) for some overlaps
    assert 20 <= overlapping <= 70, overlapping
    assert 10 <= clear <= 70, clear
    assert 3 <= exact < overlapping, (exact, overlapping)


@pytest.mark.parametrize("depth, in_bands", [(-1e-3, False), (-4.0, True), (-0.4, True), (0.4, True),
                                             (4.0, True), (1e-4, False), (0.05, False)])
def test_a_box_pressed_into_the_rings_top_across_the_band(depth, in_bands):
    """A small box over the ring's body, its bottom face `depth` below the ring's top face (in
    model units, or in touching bands; negative: above it): clear, touching, then minus the
    depth of its bottom corners, which is also the hulls' depth (so the answer is exact)."""
    ring = trimesh.creation.annulus(**RING)
    pin = trimesh.creation.box([0.1, 0.1, 0.1])
    manager, default = CollisionManager(signed=True), CollisionManager()
    manager.add_object("ring", ring)
    default.add_object("ring", ring)
    band = DEFAULT.touching_rel * ring.scale
    depth = depth * band if in_bands else depth
    T = np.eye(4)
    T[:3, 3] = 0.75, 0.0, RING["height"] / 2 + 0.05 - depth
    d = manager.min_distance_single(pin, T)
    hit = manager.in_collision_single(pin, T)
    if depth < -2 * band:  # apart beyond the band
        assert hit is False and d == pytest.approx(-depth, rel=1e-6)
    elif abs(depth) < 0.5 * band:  # within the band: touching, no depth beyond it
        assert hit is True and abs(d) <= band
    else:  # pressed in beyond the band: minus the corners' depth, the hulls' as well
        assert hit is True and d == pytest.approx(-depth, rel=1e-6)
        assert default.min_distance_single(pin, T) == 0.0  # trimesh + FCL's
        _, (contact,) = manager.in_collision_single(pin, T, return_data=True)  # the same depth
        assert contact.depth == pytest.approx(-d, rel=1e-12) and contact.index("ring") == -1
        assert -d <= _hull_depth(ring.vertices, trimesh.transform_points(pin.vertices, T)) * (1 + 1e-6)


@pytest.mark.parametrize("gap", [1e-3, 0.05])
def test_clear_beside_the_wall_and_over_the_hole(gap):
    """Apart from a ring: beside its outer wall the hulls' closest points lie on both parts, and
    the hulls' distance is the parts' (no triangle search: index -1); over its hole the ring's
    hull (a closed cylinder) is closer than the ring, and the triangles answer. Both against
    trimesh + FCL's distance and the geometry: gap, and from the box's corners to the hole's rim."""
    ring = trimesh.creation.annulus(**RING)
    pin = trimesh.creation.box([0.1, 0.1, 0.1])
    ours, theirs = CollisionManager(), tc.CollisionManager()
    ours.add_object("ring", ring)
    theirs.add_object("ring", ring)
    beside, over = np.eye(4), np.eye(4)
    beside[:3, 3] = RING["r_max"] + gap + 0.05, 0.0, 0.0  # the wall has an edge at (1, 0, z)
    over[:3, 3] = 0.0, 0.0, RING["height"] / 2 + gap + 0.05
    d, data = ours.min_distance_single(pin, beside, return_data=True)
    assert d == pytest.approx(gap, rel=1e-9) and d == pytest.approx(theirs.min_distance_single(pin, beside), rel=1e-6)
    assert data.index("ring") == -1
    d, data = ours.min_distance_single(pin, over, return_data=True)
    rim = RING["r_min"] * np.cos(np.pi / 32) - np.hypot(0.05, 0.05)  # the hole is a 32-gon
    assert d > gap and d == pytest.approx(theirs.min_distance_single(pin, over), rel=1e-6)
    assert d >= np.hypot(rim, gap) * (1 - 1e-9) and data.index("ring") >= 0


def test_the_exact_judge_agrees_with_python_fcl_and_trimesh_s_sign():
    """The judge's distance outside the ring is python-fcl's (a point as a sphere of radius 0
    against the ring's BVH), and its sign trimesh's `contains`, at seeded points."""
    import fcl

    rng = np.random.default_rng(5)
    ring = trimesh.creation.annulus(**RING, sections=32)
    model = fcl.BVHModel()
    model.beginModel(len(ring.vertices), len(ring.faces))
    model.addSubModel(ring.vertices, ring.faces.astype(np.int32))
    model.endModel()
    points = rng.uniform(-1.3, 1.3, (60, 3)) * [1, 1, 0.5]
    signed = signed_distance(ring, points)
    assert np.array_equal(signed > 0, ring.contains(points))
    for p, d in zip(points, unsigned_distance(ring.vertices, ring.faces, points)):
        if ring.contains([p])[0]:
            continue
        got = fcl.distance(fcl.CollisionObject(fcl.Sphere(0.0), fcl.Transform(p)),
                           fcl.CollisionObject(model, fcl.Transform()), fcl.DistanceRequest(), fcl.DistanceResult())
        assert d == pytest.approx(got, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("o", [0.004, 0.005, 0.006, 0.012])
def test_a_contact_s_depth_reaches_an_edge_through_the_other_part(o):
    """A box pushed `o` into a ring's outer wall (64 sections): the ring's vertical edge at x =
    0.05 passes through the box `o` inside its face, and moving the box +x by `o` parts them, so
    the penetration depth is `o` exactly. The deepest vertex (the box's corner) is far less deep
    (0.0016 at o = 0.006, 0.0007 at 0.005): a contact's depth, which programs compare with a
    threshold (scene_synthesizer's `ignore_penetration_depth`), said so and flipped their
    decision; trimesh + FCL give `o` up to 0.006 and overshoot beyond. The signed distance keeps
    the vertex's certified bound (its cost), never deeper than `o`."""
    ring = trimesh.creation.annulus(r_min=0.03, r_max=0.05, height=0.06, sections=64)
    box = trimesh.creation.box([0.04, 0.04, 0.04])
    T = trimesh.transformations.translation_matrix([0.07 - o, 0.0, 0.0])
    for manager in (CollisionManager(), CollisionManager(signed=True)):
        manager.add_object("ring", ring)
        manager.add_object("box", box, T)
        hit, (contact,) = manager.in_collision_internal(return_data=True)
        assert hit and contact.depth == pytest.approx(o, abs=1e-12)
        probe = CollisionManager()
        probe.add_object("ring", ring)
        _, (single,) = probe.in_collision_single(box, T, return_data=True)
        assert single.depth == pytest.approx(o, abs=1e-12)
    assert -o - 1e-12 <= manager.min_distance_internal() < 0.0
