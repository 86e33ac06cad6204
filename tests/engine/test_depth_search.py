"""The depth search's measuring phase (exact._deepest_on_triangles after a point deeper than the
band is found): it keeps fewer triangles a round and stops after WITNESS_FLAT rounds without a
gain. Checked on seeded crossings of long, thin, tilted beams (the triangles metres long, the
depth millimetres: the case where the bound stays loose) against

- qhull's Minkowski difference of the two boxes (both convex): the penetration depth, which no
  reported depth may exceed (a depth is one reached by a point inside);
- the same search with the measuring phase as wide as the proving phase and no early stop: the
  same verdict on every pair, and a depth not far below it.
"""
import numpy as np
import pytest

from gjkcli.engine import exact
from gjkcli.engine.exact import Mesh, exact_query

ConvexHull = pytest.importorskip("scipy.spatial").ConvexHull

TOL = 0.002


def _rotation(axis, angle):
    axis = np.asarray(axis, dtype=np.float64) / np.linalg.norm(axis)
    k = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + np.sin(angle) * k + (1 - np.cos(angle)) * k @ k


def _box(extents, R, centre):
    corners = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], dtype=float)
    vertices = (0.5 * corners * extents) @ R.T + centre
    # outward triangles of the 8 corners (index = 4 x + 2 y + z over the signs)
    faces = np.array([[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
                      [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]])
    return vertices, faces


def _penetration(va, vb) -> float:
    """Penetration depth of two convex parts: the origin's distance to the boundary of the
    Minkowski difference (qhull), 0 when they are apart."""
    hull = ConvexHull((va[:, None, :] - vb[None, :, :]).reshape(-1, 3))
    return max(0.0, float(np.min(-hull.equations[:, 3])))


def _beams(rng):
    """Two 4 m beams of 0.1 m section crossing at right angles, B tilted a little, pressed into
    A by up to 20 bands."""
    va, fa = _box([4.0, 0.1, 0.1], _rotation(rng.normal(size=3), rng.uniform(0, 0.05)), np.zeros(3))
    R = _rotation([0, 0, 1], np.pi / 2 + rng.uniform(-0.3, 0.3)) @ _rotation([1, 0, 0], rng.uniform(-0.05, 0.05))
    d = TOL * rng.uniform(0.3, 20.0)
    vb, fb = _box([4.0, 0.1, 0.1], R, np.array([rng.uniform(-1, 1), rng.uniform(-1, 1), 0.1 - d]))
    return (va, fa), (vb, fb)


def _wide(monkeypatch):
    monkeypatch.setattr(exact, "WITNESS_LIVE_DEPTH", exact.WITNESS_LIVE)
    monkeypatch.setattr(exact, "WITNESS_FLAT", exact.WITNESS_ROUNDS + 1)


def test_measuring_phase_keeps_verdicts_and_stays_a_lower_bound(monkeypatch):
    rng = np.random.default_rng(20261125)
    cases = [_beams(rng) for _ in range(40)]
    meshes = [(Mesh.from_arrays(*a), Mesh.from_arrays(*b)) for a, b in cases]
    quick = [exact_query(a, b, tolerance=TOL) for a, b in meshes]
    with monkeypatch.context() as m:
        _wide(m)
        wide = [exact_query(a, b, tolerance=TOL) for a, b in meshes]
    assert [r.status for r in quick] == [r.status for r in wide]
    ratios = []
    for (a, b), r, w in zip(cases, quick, wide):
        true = _penetration(a[0], b[0])
        assert (r.depth is None) == (w.depth is None)
        if r.depth is None:
            continue
        assert r.depth <= true * (1 + 1e-9) + 1e-12, (r.depth, true)
        assert w.depth <= true * (1 + 1e-9) + 1e-12, (w.depth, true)
        ratios.append(r.depth / w.depth)
    ratios = np.array(ratios)
    # most pairs collide (depths up to 20 bands); the quick search loses little depth
    assert len(ratios) >= 25
    assert ratios.min() >= 0.5
    assert np.median(ratios) >= 0.9
    assert (ratios < 0.8).mean() <= 0.2


def test_band_sweep_verdicts_unchanged(monkeypatch):
    """Depths just under and over the band (qhull's penetration depth): touching under it,
    collision over it, the same verdicts with the measuring phase as wide as the proving one,
    and every depth reported at most the penetration depth. This rolled crossing's surfaces
    cross along cuts far longer than the band at every depth: the crossing alone proves
    nothing about the volumes."""
    R = _rotation([0, 0, 1], np.pi / 2 + 0.2) @ _rotation([1, 0, 0], 0.01)
    va, fa = _box([4.0, 0.1, 0.1], np.eye(3), np.zeros(3))
    a = Mesh.from_arrays(va, fa)
    statuses = []
    for f in (0.5, 0.9, 0.99, 1.01, 1.1, 2.0):
        vb, fb = _box([4.0, 0.1, 0.1], R, np.array([0.3, 0.2, 0.1]))
        vb = vb - [0, 0, _press(va, vb, f * TOL)]
        b = Mesh.from_arrays(vb, fb)
        r = exact_query(a, b, tolerance=TOL)
        with monkeypatch.context() as m:
            _wide(m)
            w = exact_query(a, b, tolerance=TOL)
        assert r.status == w.status
        if r.depth is not None:
            assert r.depth <= _penetration(va, vb) * (1 + 1e-9)
        statuses.append(r.status.name)
    assert statuses == ["TOUCHING"] * 3 + ["COLLISION"] * 3


def _press(va, vb, depth: float) -> float:
    """How far down B must go for a penetration depth of `depth` (bisection on qhull's)."""
    lo, hi = 0.0, 0.05
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if _penetration(va, vb - [0, 0, mid]) < depth else (lo, mid)
    return lo


def test_rolled_crossings_under_the_band_touch_and_over_it_collide():
    """Seeded crossings of two long beams, B rolled and turned, pressed to a penetration depth
    just under or just over the band (qhull's Minkowski difference): the verdict follows the
    depth, not the surfaces' crossing (which reaches beyond the band at every depth here)."""
    rng = np.random.default_rng(17)
    wrong = []
    for _ in range(12):
        va, fa = _box([4.0, 0.1, 0.1], np.eye(3), np.zeros(3))
        R = (_rotation([0, 0, 1], np.pi / 2 + rng.uniform(-0.4, 0.4))
             @ _rotation([1, 0, 0], rng.choice([-1, 1]) * rng.uniform(0.005, 0.03)))
        vb0, fb = _box([4.0, 0.1, 0.1], R, np.array([rng.uniform(-1, 1), 0.0, 0.1]))
        for f, want in ((0.6, "TOUCHING"), (0.95, "TOUCHING"), (1.05, "COLLISION"), (1.5, "COLLISION")):
            vb = vb0 - [0, 0, _press(va, vb0, f * TOL)]
            r = exact_query(Mesh.from_arrays(va, fa), Mesh.from_arrays(vb, fb), tolerance=TOL)
            if r.status.name != want:
                wrong.append((f, r.status.name, r.exit))
            if r.depth is not None:
                assert TOL < r.depth <= _penetration(va, vb) * (1 + 1e-9)
    assert wrong == []


@pytest.mark.parametrize("open_b", [False, True])
def test_crossing_within_the_band_is_touching_by_a_move(open_b):
    """Surfaces crossing within the band only: the move within the band is tried before the
    depth search; the verdict is touching with that move as the certificate, and a part that is
    not a solid is named in the note as before."""
    va, fa = _box([4.0, 0.1, 0.1], np.eye(3), np.zeros(3))
    for f in (0.2, 0.5, 0.9):
        vb, fb = _box([0.1, 4.0, 0.1], np.eye(3), np.array([0.3, 0.2, 0.1 - f * TOL]))
        if open_b:
            fb = fb[:-2]  # one side open: B is not a solid
        r = exact_query(Mesh.from_arrays(va, fa), Mesh.from_arrays(vb, fb), tolerance=TOL)
        assert r.status.name == "TOUCHING"
        assert r.certificate is not None and 0 < r.depth_upper <= TOL
        assert r.depth is None
        if open_b:
            assert "a part inside it is not detected" in r.note
        else:
            assert r.note == ""


def test_proof_only_search_keeps_verdicts_and_depths_beyond_the_band():
    """measure=False (a scan's): the search ends at the first point deeper than the band. On the
    seeded beams: the same verdicts as the measuring search; every collision's depth beyond the
    band and at most the penetration depth (qhull); and the shortcut is taken (some depths fall
    short of the measured ones, so the test can fail)."""
    rng = np.random.default_rng(20261126)
    cases = [_beams(rng) for _ in range(40)]
    shorter = 0
    collisions = 0
    for a, b in cases:
        ma, mb = Mesh.from_arrays(*a), Mesh.from_arrays(*b)
        measured = exact_query(ma, mb, tolerance=TOL)
        proved = exact_query(ma, mb, tolerance=TOL, measure=False)
        assert proved.status == measured.status
        assert (proved.depth is None) == (measured.depth is None)
        if proved.depth is None:
            continue
        collisions += 1
        assert TOL < proved.depth <= _penetration(a[0], b[0]) * (1 + 1e-9) + 1e-12
        shorter += proved.depth < 0.99 * measured.depth
    assert collisions >= 25
    assert shorter >= 1


def test_the_deepest_point_inside_is_the_argmax_over_every_point_inside():
    """_mesh.deepest_inside asks the winding number farthest first, skips the points an outside
    point's ball answers for, and stops at the first point inside: the same row as the argmax over
    all the points inside (the distance and the side asked of every point; the side checked
    against the sphere's radius), ties to the first. On a sphere, two spheres and a ring."""
    from gjkcli.engine import _mesh
    from gjkcli.tolerances import DEFAULT

    trimesh = pytest.importorskip("trimesh")
    sphere = trimesh.creation.icosphere(subdivisions=3, radius=1.0)
    # a second body, and a ring: points outside on both sides of a wall of the surface
    ring = trimesh.creation.torus(major_radius=1.2, minor_radius=0.3)
    other = sphere.copy()
    other.apply_translation([2.05, 0.0, 0.0])
    parts = trimesh.util.concatenate([sphere, other])
    meshes = [Mesh(m.vertices, m.faces, name=name) for m, name in
              ((sphere, "sphere"), (parts, "two spheres"), (ring, "ring"))]
    rng = np.random.default_rng(3)
    found, tied = 0, 0
    for trial in range(300):
        mesh = meshes[trial % 3]
        points = rng.uniform(mesh.local_lo, mesh.local_hi, size=(int(rng.integers(1, 30)), 3)) * 1.2 + mesh.centre
        if trial % 4 == 0:  # a repeated point: equally far, the first row wins
            points = np.vstack([points, points[:1], points])
        points = points - mesh.centre
        tol = float(rng.choice([0.0, 0.05, 0.3]))
        dist, _, _ = _mesh.closest(mesh.bvh, points)
        mesh.bvh.prepare_winding()
        inside = np.abs(_mesh.winding(mesh.bvh, points)) > DEFAULT.winding_inside
        if mesh.name == "sphere":  # the winding number agrees with the radius
            assert not np.any(inside & (np.linalg.norm(points, axis=1) > 1.0 + 1e-9))
        candidates = np.flatnonzero(inside & (dist > tol))
        hit = _mesh.deepest_inside(mesh.bvh, points, tol, DEFAULT.winding_inside)
        if len(candidates) == 0:
            assert hit is None
            continue
        k = int(candidates[np.argmax(dist[candidates])])
        assert hit[0] == k and hit[1] == dist[k]
        found += 1
        tied += int(np.sum(dist[candidates] == dist[k]) > 1)
    assert 150 <= found <= 290 and tied >= 5  # both outcomes, and ties, drawn


def test_points_beyond_the_solids_box_cost_no_distance():
    """A scene's probes against a small part (NVlabs/SceneCollisionNet's: a table-top scene made
    by marching cubes, thousands of bodies, in_collision_other of an object at many poses): the
    points beyond the part's box are outside without a distance or a winding number; the
    answer is the argmax over every point, as before."""
    from gjkcli.engine import _mesh
    from gjkcli.tolerances import DEFAULT

    trimesh = pytest.importorskip("trimesh")
    part = trimesh.creation.annulus(0.03, 0.05, 0.1)
    mesh = Mesh(part.vertices, part.faces, name="ring")
    rng = np.random.default_rng(11)
    far = rng.uniform(-1.0, 1.0, size=(20_000, 3))
    far = far[np.abs(far).max(axis=1) > 0.2]  # beyond the ring's box (0.1 across) by 0.15 at least
    near = rng.uniform(-0.06, 0.06, size=(40, 3))  # within its box: some in the ring's wall
    mesh.bvh.prepare_winding()
    for points, tol in ((far, 0.0), (far, 0.1), (np.vstack([far, near]), 0.0)):
        local = np.ascontiguousarray(points - mesh.centre)
        ws = _mesh.Workspace()
        hit = _mesh.deepest_inside(mesh.bvh, local, tol, DEFAULT.winding_inside, ws)
        assert ws.distances <= len(points) - len(far)  # none for the far points
        dist, _, _ = _mesh.closest(mesh.bvh, local)
        inside = (np.abs(_mesh.winding(mesh.bvh, local)) > DEFAULT.winding_inside) & (dist > tol)
        if not inside.any():
            assert hit is None
        else:
            k = int(np.flatnonzero(inside)[np.argmax(dist[inside])])
            assert hit[0] == k and hit[1] == dist[k]
    assert hit is not None  # the near points: one of them in the wall


def test_probes_within_a_box_are_the_probes_in_it_in_their_order():
    """Mesh.probes_within (a scene's probes against a small part: only those in the part's box
    are moved, and the points just inside the scene confirmed there) gives exactly the probes
    `probes()` gives that lie in the box, in their order, for boxes anywhere and turned frames;
    and confirms the inside points of the bodies near the box only."""
    from gjkcli.engine import exact
    from gjkcli.engine.exact import _workspace

    trimesh = pytest.importorskip("trimesh")
    rng = np.random.default_rng(12)
    bodies = []
    for k in range(300):  # small bodies spread over a table, some hollow (a shell wound inwards inside)
        ball = trimesh.creation.icosphere(subdivisions=1, radius=float(rng.uniform(0.01, 0.03)))
        ball.apply_translation(rng.uniform([-0.5, -0.8, 0.0], [0.5, 0.8, 0.3]))
        bodies.append(ball)
        if k % 10 == 0:
            cavity = ball.copy()
            cavity.apply_scale(0.5)
            cavity.apply_translation(ball.centroid * 0.5)
            cavity.invert()
            bodies.append(cavity)
    scene = trimesh.util.concatenate(bodies)
    whole = Mesh(scene.vertices, scene.faces, name="scene")
    lazy = Mesh(scene.vertices, scene.faces, name="scene")
    assert whole.solid
    probes = whole.probes()
    asked = 0
    for trial in range(40):
        R = trimesh.transformations.random_rotation_matrix(rng.uniform(size=3))[:3, :3]
        t = rng.uniform(-0.5, 0.5, size=3)
        half = rng.uniform(0.02, 0.3, size=3)
        lo, hi = -half, half

        def to_outer(p, R=R, t=t):
            return (np.asarray(p) - t) @ R

        def back(p, R=R, t=t):
            return np.asarray(p) @ R.T + t

        before = _workspace().windings
        got = lazy.probes_within(to_outer, back, lo, hi)
        asked += _workspace().windings - before
        moved = to_outer(probes)
        want = moved[np.all((moved >= lo) & (moved <= hi), axis=1)]
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(whole.probes_within(to_outer, back, lo, hi), want)  # made whole first
    assert 0 < asked < len(probes) // 2  # the points inside the scene near the boxes confirmed, not all
    ring = trimesh.creation.torus(major_radius=0.2, minor_radius=0.05)  # few probes: all moved at once
    small = Mesh(ring.vertices, ring.faces, name="ring")
    assert len(small.probes()) <= exact.FEW_PROBES < len(probes)
    fresh = Mesh(ring.vertices, ring.faces, name="ring")
    for half in (0.05, 0.3):
        moved = small.probes() + 0.1
        want = moved[np.all((moved >= -half) & (moved <= half), axis=1)]
        np.testing.assert_array_equal(fresh.probes_within(lambda p: np.asarray(p) + 0.1, lambda p: np.asarray(p) - 0.1,
                                                          np.full(3, -half), np.full(3, half)), want)
