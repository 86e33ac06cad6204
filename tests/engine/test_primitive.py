"""Curved primitives against non-convex meshes on the triangles (gjkcli.engine.primitive).

Oracles that are not the engine: python-fcl (its own sphere, capsule, cylinder, cone and box
against the mesh's BVH; and the finely meshed primitive, within the meshing's chord error),
trimesh's ray-cast containment, and analytic distances (a sphere in a torus's hole, a sphere
pressed into a slab by a set depth).
"""
from __future__ import annotations

import collections

import numpy as np
import pytest
import trimesh
from conftest import random_rotation
from shapely.geometry import Polygon

from gjkcli.engine import certify
from gjkcli.engine.exact import Mesh, exact_query
from gjkcli.engine.primitive import inner_distance, pair_query, primitive_query
from gjkcli.engine.results import Status
from gjkcli.engine.shapes import Shape

fcl = pytest.importorskip("fcl")

KINDS = ("sphere", "capsule", "cylinder", "cone", "box")


def torus():
    t = trimesh.creation.torus(major_radius=1.0, minor_radius=0.3, major_sections=64, minor_sections=32)
    return t.vertices, t.faces


def u_shape():
    """A U of width 2, notch 1 wide and 1.2 deep, 0.6 thick (z from -0.3 to 0.3)."""
    outline = Polygon([(-1, -1), (1, -1), (1, 1), (0.5, 1), (0.5, -0.2), (-0.5, -0.2), (-0.5, 1), (-1, 1)])
    t = trimesh.creation.extrude_polygon(outline, 0.6)
    return t.vertices - [0.0, 0.0, 0.3], t.faces


def ring():
    t = trimesh.creation.annulus(r_min=0.6, r_max=1.0, height=0.5, sections=96)
    return t.vertices, t.faces


def primitive(kind: str, T: np.ndarray, s: float = 1.0) -> Shape:
    if kind == "sphere":
        return Shape.sphere(0.25 * s, center=T[:3, 3])
    if kind == "capsule":
        return Shape.capsule(0.15 * s, 0.6 * s, transform=T)
    if kind == "cylinder":
        return Shape.cylinder(0.2 * s, 0.6 * s, transform=T)
    if kind == "cone":
        return Shape.cone(0.25 * s, 0.6 * s, transform=T)
    return Shape.box([0.3 * s, 0.2 * s, 0.5 * s], transform=T)


def fcl_geometry(s: Shape):
    d = s.dims
    if s.kind == "point":
        return fcl.Sphere(s.radius)
    if s.kind == "segment":
        return fcl.Capsule(s.radius, 2 * d[0])
    if s.kind == "cylinder":
        return fcl.Cylinder(d[0], 2 * d[1])
    if s.kind == "cone":
        return fcl.Cone(d[0], 2 * d[1])
    return fcl.Box(*(2 * d))


def fcl_mesh(vertices, faces, T=None):
    model = fcl.BVHModel()
    model.beginModel(len(vertices), len(faces))
    model.addSubModel(np.asarray(vertices, dtype=np.float64), np.asarray(faces, dtype=np.int32))
    model.endModel()
    obj = fcl.CollisionObject(model)
    if T is not None:
        obj.setTransform(fcl.Transform(T[:3, :3], T[:3, 3]))
    return obj


def fcl_answer(s: Shape, mesh_obj) -> tuple[bool, float]:
    """(surfaces meet, distance) by FCL: the primitive's own geometry against the mesh's BVH."""
    obj = fcl.CollisionObject(fcl_geometry(s), fcl.Transform(s.rotation, s.translation))
    hit = fcl.collide(obj, mesh_obj, fcl.CollisionRequest(), fcl.CollisionResult()) > 0
    d = fcl.distance(obj, mesh_obj, fcl.DistanceRequest(), fcl.DistanceResult())
    return hit, d


def meshed(s: Shape):
    """The primitive finely meshed (world coordinates) and its chord error bound."""
    d = s.dims
    if s.kind == "point":
        t = trimesh.creation.icosphere(subdivisions=5, radius=s.radius)
        return t.vertices + s.translation, t.faces, 0.002 * s.radius
    sections = 256
    chord = 1.0 - np.cos(np.pi / sections)
    if s.kind == "segment":
        t = trimesh.creation.capsule(height=2 * d[0], radius=s.radius, count=[sections, sections])
        err = chord * s.radius + 0.002 * s.radius
    elif s.kind == "cylinder":
        t = trimesh.creation.cylinder(radius=d[0], height=2 * d[1], sections=sections)
        err = chord * d[0]
    else:
        t = trimesh.creation.cone(radius=d[0], height=2 * d[1], sections=sections)
        t.apply_translation([0.0, 0.0, -d[1]])
        err = chord * d[0]
    return t.vertices @ s.rotation.T + s.translation, t.faces, err


def placements(rng, n: int, spread=(1.5, 1.5, 0.5)):
    for _ in range(n):
        T = np.eye(4)
        T[:3, :3] = random_rotation(rng)
        T[:3, 3] = rng.uniform(-1.0, 1.0, 3) * spread
        yield str(rng.choice(KINDS)), T


# -- in the hole ------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_a_primitive_in_a_torus_hole_reads_clear(kind):
    """Centred in the hole, upright: the hull would swallow it; the triangles keep it clear, at
    FCL's distance (and, for the sphere, the faceted hole's inradius less its radius)."""
    v, f = torus()
    mesh = Mesh(v, f, name="torus")
    s = primitive(kind, np.eye(4))
    r = primitive_query(s, mesh)
    assert r.status is Status.CLEAR, r
    _, expected = fcl_answer(s, fcl_mesh(v, f))
    assert r.distance == pytest.approx(expected, abs=1e-5)  # FCL's GJK stops at 1e-6 relative
    assert r.distance_lower <= r.distance + 1e-12 and r.distance_lower > 0.9 * r.distance
    if kind == "sphere":
        assert r.distance == pytest.approx(0.7 * np.cos(np.pi / 64) - 0.25, abs=1e-9)
    # the witnesses: one on each side, as far apart as the distance
    assert np.linalg.norm(r.point_b - r.point_a) == pytest.approx(r.distance, abs=1e-9)


# -- seeded random placements against FCL -----------------------------------------------------------


@pytest.mark.parametrize("name,make", [("torus", torus), ("u", u_shape), ("ring", ring)])
def test_random_placements_agree_with_fcl(name, make):
    """Every kind in random poses in and around a non-convex solid: a clear or touching pair at
    FCL's distance, its witnesses on both parts; a collision where FCL's surfaces meet or where
    trimesh finds one part inside the other, its point certificate checked by
    gjkcli.engine.certify; and a mix of both outcomes, so that the test can fail."""
    v, f = make()
    mesh = Mesh(v, f, name=name)
    assert mesh.solid
    other = fcl_mesh(v, f)
    tm = trimesh.Trimesh(v, f, process=False)
    rng = np.random.default_rng(20261125)
    seen = collections.Counter()
    for kind, T in placements(rng, 120):
        s = primitive(kind, T)
        r = primitive_query(s, mesh)
        hit, d = fcl_answer(s, other)
        seen[r.status] += 1
        assert r.status is not Status.UNDECIDED, (kind, T, r)
        if r.status is Status.COLLISION:
            assert r.depth > r.tolerance
            # the certificate, checked apart from the engine (gjkcli.engine.certify): a point in
            # the primitive, and on the mesh's surface or inside its solid
            x = np.asarray(r.certificate.point)
            assert certify.distance_to_shape(s, x) <= 1e-9, (kind, T, r)
            on_surface = certify.point_mesh_distance(v, f, x[None])[0] <= 1e-9
            assert on_surface or abs(certify.winding_number(v, f, x[None])[0]) > 0.5, (kind, T, r)
            if not hit:  # no surface contact: a part wholly inside the other
                assert r.contained is not None, (kind, T, r)
                if r.contained == "a in b":
                    assert tm.contains([s.translation])[0]
            seen["inside"] += not hit
        else:
            assert not hit or r.status is Status.TOUCHING, (kind, T, r, d)
            # the witnesses: on the primitive, on the mesh, as far apart as the distance
            assert certify.distance_to_shape(s, r.point_a) <= 1e-9
            assert certify.point_mesh_distance(v, f, r.point_b[None])[0] <= 1e-9
            assert np.linalg.norm(r.point_b - r.point_a) == pytest.approx(r.distance, abs=1e-9)
            # FCL's GJK on curved shapes stops at 1e-6 relative (libccd's tolerance)
            assert r.distance == pytest.approx(d, abs=1e-5), (kind, T, r, d)
    n = sum(seen[s] for s in Status)
    assert 0.2 <= seen[Status.CLEAR] / n <= 0.8, seen
    assert 0.2 <= seen[Status.COLLISION] / n <= 0.8, seen


def test_meshed_primitives_agree_within_the_chord_error():
    """The primitive against the torus, and its fine tessellation against the torus by FCL's
    BVH and by gjk's own triangle engine: distances agree within the chord error."""
    v, f = torus()
    mesh = Mesh(v, f, name="torus")
    other = fcl_mesh(v, f)
    rng = np.random.default_rng(7)
    compared = 0
    for kind, T in placements(rng, 24):
        if kind == "box":
            continue
        s = primitive(kind, T)
        r = primitive_query(s, mesh)
        if r.status is not Status.CLEAR:
            continue
        pv, pf, err = meshed(s)
        d_fcl = fcl.distance(fcl_mesh(pv, pf), other, fcl.DistanceRequest(), fcl.DistanceResult())
        d_tri = exact_query(Mesh(pv, pf, name="p"), mesh).distance
        # the tessellation is inscribed: it lies no nearer than the primitive, and no farther than
        # the chord error
        assert d_fcl - err - 1e-9 <= r.distance <= d_fcl + 1e-9, (kind, r.distance, d_fcl, err)
        assert r.distance == pytest.approx(d_tri, abs=err + 1e-9)
        compared += 1
    assert compared >= 5


# -- the band ---------------------------------------------------------------------------------------


def slab():
    t = trimesh.creation.box(extents=[4.0, 4.0, 1.0])
    return Mesh(t.vertices, t.faces, name="slab")  # top face at z = 0.5


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("band", [1e-7, 1e-4, 1e-2])
def test_pressed_into_a_face_just_under_and_over_the_band(kind, band):
    """Each primitive resting on the slab's top face, then moved down (into it) or up by 0.5 and
    1.5 bands: touching within the band, collision beyond it, clear beyond it the other way."""
    mesh = slab()
    T = np.eye(4)
    s0 = primitive(kind, T)
    lowest = -s0.bounds[0][2]  # rests on z = 0.5 with its lowest point
    for offset, expected in ((-1.5, Status.COLLISION), (-0.5, Status.TOUCHING), (0.0, Status.TOUCHING),
                             (0.5, Status.TOUCHING), (1.5, Status.CLEAR)):
        T = np.eye(4)
        T[2, 3] = 0.5 + lowest + offset * band
        s = primitive(kind, T)
        r = primitive_query(s, mesh, tolerance=band)
        assert r.status is expected, (kind, band, offset, r)
        if expected is Status.COLLISION:
            assert r.depth == pytest.approx(1.5 * band, rel=1e-3)
        if expected is Status.CLEAR:
            assert r.distance == pytest.approx(1.5 * band, rel=1e-3)


def test_a_tilted_capsule_deep_in_a_wall_is_a_collision_at_a_wide_band():
    """A thin capsule pushed 0.4 into the slab, its radius below the band: no triangle goes
    deeper than the band into it, but its axis inside the solid proves the depth."""
    mesh = slab()
    T = np.eye(4)
    T[2, 3] = 0.5 + 0.5 - 0.4
    s = Shape.capsule(0.01, 0.98, transform=T)  # from z = 0.11 to 1.09, plus the radius
    r = primitive_query(s, mesh, tolerance=0.05)
    assert r.status is Status.COLLISION and r.contained == "a in b"
    assert 0.05 < r.depth <= 0.4 + 0.01 + 1e-9


# -- containment, frames, swaps ---------------------------------------------------------------------


def test_containment_both_ways():
    v, f = torus()
    mesh = Mesh(v, f, name="torus")
    inside = primitive_query(Shape.sphere(0.1, center=(1.0, 0.0, 0.0)), mesh)
    assert inside.status is Status.COLLISION and inside.contained == "a in b"
    # the radius plus the centre's distance to the faceted surface (trimesh's nearest point)
    below = trimesh.proximity.signed_distance(trimesh.Trimesh(v, f), [[1.0, 0.0, 0.0]])[0]
    assert inside.depth == pytest.approx(0.1 + below, rel=1e-9)
    around = primitive_query(Shape.sphere(2.0), mesh)  # its centre in the hole, the torus in it
    assert around.status is Status.COLLISION and around.contained == "b in a"
    assert around.depth == pytest.approx(2.0 - np.linalg.norm(v, axis=1).min(), rel=1e-9)


def test_open_mesh_counts_its_surface_only():
    t = trimesh.creation.box(extents=[2.0, 2.0, 2.0])
    keep = np.ones(len(t.faces), dtype=bool)
    keep[:2] = False
    mesh = Mesh(t.vertices, t.faces[keep], name="open")
    r = primitive_query(Shape.sphere(0.2), mesh)
    assert r.status is Status.CLEAR and "only its surface counts" in r.note


def test_the_same_answer_under_a_rigid_motion_and_a_swap():
    v, f = u_shape()
    mesh = Mesh(v, f, name="u")
    rng = np.random.default_rng(3)
    for kind, T in placements(rng, 20):
        s = primitive(kind, T)
        r = primitive_query(s, mesh)
        M = np.eye(4)
        M[:3, :3] = random_rotation(rng)
        M[:3, 3] = rng.normal(size=3) * 100.0
        moved = primitive_query(s, mesh, pose_shape=M, pose_mesh=M)
        assert moved.status is r.status
        assert moved.distance == pytest.approx(r.distance, abs=1e-9)
        back = pair_query(mesh, s, pose_a=M, pose_b=M)
        assert back.status is r.status and back.distance == pytest.approx(r.distance, abs=1e-9)
        assert np.allclose(back.point_b, moved.point_a) and np.allclose(back.point_a, moved.point_b)


def test_inner_distance_of_each_kind():
    assert inner_distance(Shape.sphere(1.0), [[0.5, 0, 0]])[0] == pytest.approx(0.5)
    assert inner_distance(Shape.capsule(0.5, 2.0), [[0.1, 0, 1.0]])[0] == pytest.approx(0.4)
    assert inner_distance(Shape.cylinder(1.0, 2.0), [[0.0, 0, 0.8]])[0] == pytest.approx(0.2)
    assert inner_distance(Shape.box([2, 4, 6]), [[0.5, 0, 0]])[0] == pytest.approx(0.5)
    # a cone of radius 1 and height 2 (z from -1 to 1): on the axis at z = 0 the slant is
    # 1/sqrt(5) away (the line from (1, -1) to (0, 1)), the base 1
    assert inner_distance(Shape.cone(1.0, 2.0), [[0, 0, 0.0]])[0] == pytest.approx(1 / np.sqrt(5))
    assert inner_distance(Shape.cone(1.0, 2.0), [[0, 0, 1.5]])[0] < 0


@pytest.mark.parametrize("kind", ["sphere", "capsule", "cylinder", "box"])
def test_snug_in_a_faceted_bore_is_touching_and_a_tight_fit_a_collision(kind):
    """The primitive in a square bore that fits it, its faces on all four walls: no single move
    by the band parts it, but shrunk by the band it is apart, so the contact lies within the
    band: touching. Made wider than the bore by three bands it overlaps every wall deeper than
    the band: a collision."""
    band = 1e-3
    outer = trimesh.creation.box(extents=[4.0, 4.0, 2.0])
    bore = trimesh.creation.box(extents=[1.0, 1.0, 4.0])
    block = outer.difference(bore)
    mesh = Mesh(block.vertices, block.faces, name="block")
    assert mesh.solid

    def sized(half: float) -> Shape:
        if kind == "sphere":
            return Shape.sphere(half)
        if kind == "capsule":
            return Shape.capsule(half, 1.0)
        if kind == "cylinder":
            return Shape.cylinder(half, 1.0)
        return Shape.box([2 * half, 2 * half, 1.0])

    snug = primitive_query(sized(0.5), mesh, tolerance=band)
    assert snug.status is Status.TOUCHING, snug
    tight = primitive_query(sized(0.5 + 3 * band), mesh, tolerance=band)
    assert tight.status is Status.COLLISION and tight.depth > band, tight
