"""Collision versus touching at any band, on the triangles (gjkcli.engine.exact).

The rule: `collision` needs a point of one part inside the other deeper than the band (a lower
bound of the penetration depth), `touching` a move of B within the band after which the volumes
are apart (an upper bound), `undecided` neither. Judged against the construction (convex pipes,
walls and rods, whose depth inside a convex part is the least facet distance of qhull's
equations), manifold3d's intersection volume and a depth sampled inside that intersection, and
the certificate checker gjkcli.engine.certify (NumPy, nothing of the engine).

Regression (issue 21): a pipe with 128 or 256 facets through a wall read `touching` at a band of
2 or 5 (of a 50 radius): every triangle pair crossed along one facet's width, less than the band.
"""
from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial import ConvexHull
from scipy.spatial.transform import Rotation

from gjkcli.engine.certify import verify_part_certificate
from gjkcli.engine.exact import Mesh, exact_query
from gjkcli.engine.results import Status

trimesh = pytest.importorskip("trimesh")

RADIUS = 50.0  # the pipe's, in mm: a 100 mm pipe through a 200 mm wall


def need_manifold():
    pytest.importorskip("manifold3d", reason="manifold3d judges the overlap volume (a test dependency)")


def placed(mesh: trimesh.Trimesh, pose: np.ndarray) -> trimesh.Trimesh:
    out = mesh.copy()
    out.apply_transform(pose)
    return out


def rigid(seed: int) -> np.ndarray:
    """A rotation and a translation away from the axes and the origin, from a seed."""
    rng = np.random.default_rng(seed)
    T = np.eye(4)
    T[:3, :3] = Rotation.random(random_state=rng).as_matrix()
    T[:3, 3] = rng.uniform(-1e3, 1e3, 3)
    return T


def pipe_through_wall(sections: int, pose: np.ndarray):
    """Wall 200 thick (x), pipe of radius 50 along x, 1000 long, through its middle."""
    wall = trimesh.creation.box([200.0, 2000.0, 3000.0])
    pipe = trimesh.creation.cylinder(radius=RADIUS, height=1000.0, sections=sections)
    pipe.apply_transform(trimesh.transformations.rotation_matrix(np.pi / 2, [0, 1, 0]))
    return placed(wall, pose), placed(pipe, pose)


def rod_into_face(depth: float, sections: int, pose: np.ndarray):
    """A rod of radius 10 along x, its flat end `depth` into the wall's face at x = 100."""
    wall = trimesh.creation.box([200.0, 2000.0, 3000.0])
    rod = trimesh.creation.cylinder(radius=10.0, height=100.0, sections=sections)
    rod.apply_transform(trimesh.transformations.rotation_matrix(np.pi / 2, [0, 1, 0]))
    rod.apply_translation([150.0 - depth, 0.0, 0.0])
    return placed(wall, pose), placed(rod, pose)


def inside_depth(part: trimesh.Trimesh, points) -> np.ndarray:
    """Distance from points inside a convex part to its surface (negative outside): the least
    distance to its facets' planes, from qhull's equations."""
    eq = ConvexHull(part.vertices).equations
    return -(np.atleast_2d(points) @ eq[:, :3].T + eq[:, 3]).max(axis=1)


def judge(a: trimesh.Trimesh, b: trimesh.Trimesh, seed: int = 0) -> tuple[float, float]:
    """(manifold3d's volume of A and B's intersection, the depth sampled in it): the largest,
    over points of the intersection (its corners and random points inside it), of the larger
    distance to A's and to B's surface. Any move that separates the parts moves such a point
    that far out of one of them, so the sampled depth is a lower bound of the penetration depth."""
    need_manifold()
    both = trimesh.boolean.intersection([a, b], engine="manifold")
    if both.is_empty or both.volume <= 0:
        return 0.0, 0.0
    rng = np.random.default_rng(seed)
    lo, hi = both.bounds
    points = np.concatenate([both.vertices, rng.uniform(lo, hi, (20000, 3))])
    da, db = inside_depth(a, points), inside_depth(b, points)
    inside = (da >= 0) & (db >= 0)
    return float(both.volume), float(np.maximum(da, db)[inside].max())


def query(a, b, band):
    return exact_query(Mesh.from_arrays(a.vertices, a.faces), Mesh.from_arrays(b.vertices, b.faces),
                       tolerance=band)


def certified(a, b, r) -> None:
    """The result's certificate holds for the parts' triangles (checked apart from the engine)."""
    cert = r.certificate.as_dict()
    why = verify_part_certificate(a.vertices, a.faces, b.vertices, b.faces, cert, r.tolerance)
    assert why is None, why


def witness_holds(a, b, r) -> None:
    """A collision's deepest point: a point of one part, inside the other by r.depth (which
    one is `contained`; after a deep crossing, either)."""
    ways = {"a in b": [(r.point_a, b)], "b in a": [(r.point_b, a)]}.get(
        r.contained, [(r.point_a, b), (r.point_b, a)])
    found = [inside_depth(outer, inner)[0] for inner, outer in ways]
    assert any(x == pytest.approx(r.depth, rel=1e-6, abs=1e-9) for x in found), (found, r.depth)


# -- pipes through walls ---------------------------------------------------------------------------


@pytest.mark.parametrize("sections", [32, 64, 128, 256, 512])
@pytest.mark.parametrize("band", [1e-7, 1e-4, 0.01, 0.04, 0.1, 0.2])
def test_a_pipe_through_a_wall_collides_at_every_band(sections, band):
    a, b = pipe_through_wall(sections, rigid(sections))
    r = query(a, b, band * RADIUS)
    assert r.status is Status.COLLISION, (r.status, r.exit)
    assert r.depth > band * RADIUS
    witness_holds(a, b, r)
    certified(a, b, r)


@pytest.mark.parametrize("sections", [32, 256])
def test_the_pipe_s_depth_agrees_with_manifold3d(sections):
    """The wall holds the pipe's surface 100 deep (half its thickness): the depth found is that
    of the volume manifold3d cuts, to the search's precision."""
    a, b = pipe_through_wall(sections, rigid(7))
    volume, sampled = judge(a, b)
    polygon = 0.5 * sections * RADIUS ** 2 * np.sin(2 * np.pi / sections)
    assert volume == pytest.approx(200.0 * polygon, rel=1e-5)
    assert sampled == pytest.approx(100.0, rel=0.02)
    r = query(a, b, 0.2 * RADIUS)
    assert r.status is Status.COLLISION
    assert 0.98 * sampled <= r.depth <= 100.0 * (1 + 1e-9)


def test_two_pipes_in_one_part_collide_with_the_wall():
    """A part of two bodies (two pipes): the case of the issue, answered on the triangles."""
    wall, one = pipe_through_wall(256, np.eye(4))
    two = trimesh.util.concatenate([one, placed(one, trimesh.transformations.translation_matrix([0, 400, 0]))])
    for band in (2.0, 5.0):
        r = query(wall, two, band)
        assert r.status is Status.COLLISION and r.depth > 90.0


# -- rods pushed into a face -----------------------------------------------------------------------


@pytest.mark.parametrize("band", [1e-7, 1e-3, 0.02, 0.2])
@pytest.mark.parametrize("share", [0.9, 0.99, 1.01, 1.1])
def test_a_rod_touches_just_under_the_band_and_collides_just_over(band, share):
    depth = share * band * RADIUS
    a, b = rod_into_face(depth, 64, rigid(int(share * 100)))
    r = query(a, b, band * RADIUS)
    if share < 1:
        assert r.status is Status.TOUCHING, (r.status, r.exit)
        assert r.depth_upper <= band * RADIUS
    else:
        assert r.status is Status.COLLISION, (r.status, r.exit)
        assert r.depth == pytest.approx(depth, rel=1e-6)
        witness_holds(a, b, r)
    certified(a, b, r)


@pytest.mark.parametrize("share", [0.9, 1.1])
def test_the_rod_s_overlap_agrees_with_manifold3d(share):
    band = 0.1 * RADIUS
    a, b = rod_into_face(share * band, 48, rigid(3))
    volume, sampled = judge(a, b)
    polygon = 0.5 * 48 * 10.0 ** 2 * np.sin(2 * np.pi / 48)
    assert volume == pytest.approx(polygon * share * band, rel=1e-4)
    assert sampled == pytest.approx(share * band, rel=1e-3)
    r = query(a, b, band)
    assert r.status is (Status.COLLISION if sampled > band else Status.TOUCHING)


def test_random_rods_never_touch_deeper_than_the_band():
    """Seeded: rods at random depths up to twice the band, random bands, facets and poses.
    Deeper than the band is a collision with that depth, shallower touching; about half are
    collisions (the test can fail both ways)."""
    rng = np.random.default_rng(21)
    collisions = 0
    n = 40
    for k in range(n):
        band = RADIUS * 10 ** rng.uniform(-6, np.log10(0.2))
        share = rng.uniform(0.0, 2.0)
        if abs(share - 1.0) < 1e-6:
            continue
        a, b = rod_into_face(share * band, int(rng.integers(8, 200)), rigid(100 + k))
        r = query(a, b, band)
        if share > 1:
            assert r.status is Status.COLLISION, (k, band, share, r.status)
            assert r.depth == pytest.approx(share * band, rel=1e-6)
            collisions += 1
        else:
            assert r.status is Status.TOUCHING, (k, band, share, r.status)
    assert 0.3 * n <= collisions <= 0.7 * n


# -- two faces at once, and neither bound --------------------------------------------------------


@pytest.mark.parametrize("share", [0.5, 0.69, 0.72, 0.9, 1.2])
def test_a_cube_in_a_corner_is_never_touching_beyond_the_band(share):
    """A cube pushed d into both walls of an L: the penetration depth is d * sqrt(2) (its corner
    must leave the corner of the L). Touching only when that is within the band; collision
    whenever it exceeds it, unless neither bound can be shown (undecided)."""
    band = 1.0
    d = share * band
    need_manifold()
    block = trimesh.creation.box(bounds=[[-50, -50, -50], [50, 50, 50]])
    corner = trimesh.creation.box(bounds=[[0, 0, -60], [60, 60, 60]])
    ell = trimesh.boolean.difference([block, corner], engine="manifold")
    cube = trimesh.creation.box(bounds=[[-d, -d, -10], [20 - d, 20 - d, 10]])
    pose = rigid(5)
    a, b = placed(ell, pose), placed(cube, pose)
    r = query(a, b, band)
    truth = d * np.sqrt(2)
    if truth > band:
        assert r.status in (Status.COLLISION, Status.UNDECIDED)
        if r.status is Status.COLLISION:
            assert band < r.depth <= truth * (1 + 1e-6)
    else:
        assert r.status in (Status.TOUCHING, Status.UNDECIDED)
    if r.status is Status.TOUCHING:
        assert r.depth_upper <= band
        certified(a, b, r)


def test_flush_faces_touch_with_no_move():
    """Faces exported to touch: the volumes are apart as they stand, depth at most 0."""
    a = trimesh.creation.box(bounds=[[0, 0, 0], [10, 10, 10]])
    b = trimesh.creation.box(bounds=[[2, 2, 10], [8, 8, 15]])
    r = query(a, b, 1e-3)
    assert r.status is Status.TOUCHING and r.depth_upper == 0.0
    certified(a, b, r)


def test_a_tampered_move_is_refused():
    """The checker refuses a move that leaves the rod in the wall, or one longer than the band."""
    a, b = rod_into_face(0.9, 32, np.eye(4))
    r = query(a, b, 1.0)
    assert r.status is Status.TOUCHING
    cert = r.certificate.as_dict()
    short = dict(cert, shift=[0.5 * x for x in cert["shift"]], upper=0.5)
    assert "still crosses" in verify_part_certificate(a.vertices, a.faces, b.vertices, b.faces, short, 1.0)
    assert "exceeds the band" in verify_part_certificate(a.vertices, a.faces, b.vertices, b.faces, cert, 0.5)
