"""Geometry prepared once per distinct content (gjkcli/pipeline/prepared.py), which the manager,
the robot poses, the motion and the collision matrix stand on.

Oracles: qhull (scipy's ConvexHull, through `build_hulls` without the compiled core) for the
hulls, including the sets of 129 to 256 points that only a prepared scene builds in the core,
on points in general position and on degenerate ones (coplanar points on faces, duplicates,
1e6 from the origin); python's own module table for "scipy is not imported".
"""
from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest
import trimesh

from gjkcli.engine.shapes import build_hulls
from gjkcli.pipeline import prepared
from gjkcli.pipeline.prepared import Geometry, geometry, prepare


def _vertex_set(shape) -> list:
    return sorted(map(tuple, shape.world_vertices.round(9)))


def test_one_geometry_per_content_and_a_copy_of_it():
    sphere = trimesh.creation.icosphere(2, radius=0.37)
    v, f = sphere.vertices.copy(), sphere.faces.copy()
    a = geometry(v, f)
    assert geometry(v.copy(), f.copy()) is a  # same content, other arrays: the same geometry
    v[0] += 5.0  # the caller changes its array afterwards: the geometry keeps what it was given
    assert np.array_equal(a.vertices, sphere.vertices) and not a.vertices.flags.writeable
    assert geometry(v, f) is not a  # other content: another geometry
    moved = sphere.vertices + [1e-9, 0.0, 0.0]
    assert geometry(moved, f) is not a


def test_bad_content_is_a_shape_error():
    from gjkcli.errors import ShapeError

    with pytest.raises(ShapeError, match="finite"):
        geometry([[0.0, 0.0, np.nan]] * 4, [[0, 1, 2]])
    with pytest.raises(ShapeError, match="past the 3 vertices"):
        geometry(np.eye(3), [[0, 1, 3]])


def test_geometries_are_geometry_s_and_say_what_is_wrong_per_mesh():
    """The batch of a scan (`geometries`) finds the geometry `geometry` finds for the same
    content, keeps read-only copies, and answers a bad mesh with the error `geometry` raises,
    in its place, the others made all the same."""
    from gjkcli.errors import ShapeError

    sphere = trimesh.creation.icosphere(1, radius=0.3)
    v, f = sphere.vertices.copy(), sphere.faces.copy()
    bad = [(np.zeros((0, 3)), np.zeros((0, 3), dtype=np.int64)), (np.where(v > 0, np.inf, v), f), (v, f + 1), (v, -f)]
    got = prepared.geometries([v, *(b[0] for b in bad), v + 1.0], [f, *(b[1] for b in bad), f])
    assert got[0] is geometry(v, f) and got[-1] is geometry(v + 1.0, f) and got[-1] is not got[0]
    for (bv, bf), g in zip(bad, got[1:-1]):
        with pytest.raises(ShapeError) as raised:
            geometry(bv, bf)
        assert isinstance(g, ShapeError) and str(g) == str(raised.value)
    v[0] += 1.0  # the caller's array changes: the geometry does not
    assert np.array_equal(got[0].vertices, sphere.vertices) and not got[0].vertices.flags.writeable


def test_prepare_builds_each_distinct_hull_once(hull_builds):
    built = hull_builds
    rng = np.random.default_rng(5)
    parts = [trimesh.creation.icosphere(1, radius=0.5 + rng.uniform(0, 1e-3)) for _ in range(3)]
    geometries = [geometry(parts[k % 3].vertices, parts[k % 3].faces) for k in range(30)]
    prepare(geometries)
    assert built == [3]  # three distinct meshes, one call
    prepare(geometries)
    assert built == [3]  # prepared already: nothing again
    assert all(g.hull is not None and g.gap <= 1e-12 * 2 for g in geometries)


def _not_convex(n: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """A closed mesh of n vertices on an ellipsoid, one vertex pushed in: not its own hull, so
    prepare builds the hull from the points."""
    d = rng.normal(size=(n, 3))
    hull = trimesh.Trimesh(d / np.linalg.norm(d, axis=1)[:, None], process=False).convex_hull
    v = np.array(hull.vertices) * rng.uniform(0.5, 2.0, 3)
    v[0] *= 0.6
    return v, np.array(hull.faces)


@pytest.mark.parametrize("seed", range(2))
def test_hulls_of_up_to_256_points_are_qhull_s(seed):
    """Meshes of 129 to 256 vertices that are not their own hulls: the compiled core's hull
    (prepare) against qhull's (build_hulls without it): the same vertices and bounds."""
    rng = np.random.default_rng(seed)
    meshes = []
    for _ in range(12):
        v, f = _not_convex(int(rng.integers(130, 250)), rng)
        meshes.append((v + rng.normal(size=3) * 100, f))
    assert all(129 <= len(v) <= 256 for v, _ in meshes), [len(v) for v, _ in meshes]
    geometries = [Geometry(np.asarray(v), np.asarray(f)) for v, f in meshes]
    prepare(geometries)
    ref = build_hulls([v for v, _ in meshes])
    from gjkcli.engine.shapes import small_hull_triangles

    cored = small_hull_triangles([v for v, _ in meshes], prepared.SMALL_HULL_POINTS)
    assert sum(t is not None for t in cored) >= 10  # the core builds them, not qhull
    for g, shape in zip(geometries, ref.shapes):
        assert g.gap > 1e-6  # not its own hull: a dent
        assert _vertex_set(g.hull) == _vertex_set(shape)
        assert np.allclose(g.hull.bounds, shape.bounds, rtol=0, atol=1e-9)


def _gridded_box(points_per_edge: int) -> np.ndarray:
    corners = np.array([[x, y, z] for x in (0, 1) for y in (0, 1) for z in (0, 1)], dtype=float)
    g = np.linspace(0.0, 1.0, points_per_edge)
    u, v = (a.ravel() for a in np.meshgrid(g, g))
    faces = np.concatenate([np.stack([np.full_like(u, side), u, v], axis=1)[:, np.roll([0, 1, 2], axis)]
                            for axis in range(3) for side in (0.0, 1.0)])
    return np.concatenate([corners, faces, [[0.5, 0.5, 0.5]]])


@pytest.mark.parametrize("name", ["gridded box", "gridded box 1e6 away", "every point twice"])
def test_degenerate_point_sets_up_to_256_give_qhull_s_hull(name):
    from gjkcli.engine.shapes import small_hull_triangles

    rng = np.random.default_rng(3)
    points = {"gridded box": _gridded_box(6), "gridded box 1e6 away": _gridded_box(6) + 1e6,
              "every point twice": np.repeat(rng.normal(size=(120, 3)), 2, axis=0)}[name]
    assert 128 < len(points) <= prepared.SMALL_HULL_POINTS
    tris = small_hull_triangles([points], prepared.SMALL_HULL_POINTS)[0]
    assert tris is not None  # the core builds it
    ours = build_hulls([points], small=True, small_points=prepared.SMALL_HULL_POINTS).shapes[0]
    ref = build_hulls([points]).shapes[0]
    assert _vertex_set(ours) == _vertex_set(ref)


def test_preparing_small_meshes_does_not_import_scipy(tmp_path):
    """A robot's or a manager's meshes of up to 256 vertices are prepared without qhull: the
    import of scipy (about a third of a second) is what a run of many poses must not pay."""
    code = textwrap.dedent("""
        import sys
        import numpy as np
        from gjkcli.pipeline.prepared import geometry, prepare
        t = np.linspace(0, 2 * np.pi, 15)[:-1]
        ring = np.stack([np.cos(t), np.sin(t)], axis=1)
        rng = np.random.default_rng(0)
        gs = []
        for k in range(3):
            v = np.concatenate([np.c_[ring * r, np.full(14, z)] for z, r in
                                zip(np.linspace(-1, 1, 14), rng.uniform(0.5, 1, 14))])
            side = [[a * 14 + i, a * 14 + (i + 1) % 14, (a + 1) * 14 + i] for a in range(13) for i in range(14)]
            side += [[(a + 1) * 14 + i, a * 14 + (i + 1) % 14, (a + 1) * 14 + (i + 1) % 14]
                     for a in range(13) for i in range(14)]
            caps = [[0, i + 1, i] for i in range(1, 13)] + [[182, 182 + i, 182 + i + 1] for i in range(1, 13)]
            gs.append(geometry(v, np.array(side + caps)))
        prepare(gs)
        assert all(g.hull is not None for g in gs), [g.error for g in gs]
        assert len(gs[0].vertices) == 196
        print("scipy.spatial" in sys.modules)
    """)
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False", out.stdout + out.stderr


def _brute_pairs(lo, hi, band) -> set:
    g_lo, g_hi = lo - band[:, None], hi + band[:, None]
    n = len(lo)
    return {(a, b) for a in range(n) for b in range(a + 1, n)
            if np.all(g_lo[a] <= g_hi[b]) and np.all(g_lo[b] <= g_hi[a])}


@pytest.mark.parametrize("seed", range(3))
def test_placements_moved_are_placements_made_anew(seed):
    """The broad phase updated for moved parts lists the pairs a new one lists, and the pairs
    of brute force over every pair of boxes (touching boxes included: a gap of 0 meets)."""
    from gjkcli.pipeline.prepared import Placements

    rng = np.random.default_rng(seed)
    n = 60
    lo = rng.uniform(0, 10, (n, 3))
    hi = lo + rng.uniform(0.2, 1.5, (n, 3))
    placed = Placements(lo, hi)
    changed = 0
    for _ in range(40):
        before = set(zip(*(x.tolist() for x in placed.pairs())))
        for k in rng.choice(n, 3, replace=False).tolist():
            shift = rng.uniform(-2, 2, 3)
            lo[k], hi[k] = lo[k] + shift, hi[k] + shift
            placed.move(k, lo[k], hi[k])
        # one box moved to touch another exactly, face to face
        a, b = (int(x) for x in rng.choice(n, 2, replace=False))
        width = hi[a] - lo[a]
        lo[a] = np.array([hi[b][0], lo[b][1], lo[b][2]])
        hi[a] = lo[a] + width
        placed.move(a, lo[a], hi[a])
        got = set(zip(*(x.tolist() for x in placed.pairs())))
        fresh = Placements(lo, hi)
        assert got == set(zip(*(x.tolist() for x in fresh.pairs())))
        assert got == _brute_pairs(lo, hi, fresh.band)
        assert (min(a, b), max(a, b)) in got
        changed += got != before
    assert changed >= 30  # the moves change the pairs: the comparison can fail


def test_closed_and_oriented_is_trimesh_s_watertight_and_consistent_winding():
    """`closed_oriented` (each mesh's edges hashed in C) against trimesh's own edge analysis:
    paired is watertight with consistent winding and no directed edge twice, sphere besides
    has Euler number 2, on spheres, boxes, tori and their damaged copies, seeded."""
    import trimesh

    from gjkcli.pipeline.prepared import closed_oriented

    rng = np.random.default_rng(8)
    faces, counts, want_paired, want_sphere = [], [], [], []
    for k in range(240):
        kind = k % 6
        base = (trimesh.creation.icosphere(subdivisions=int(rng.integers(0, 3))), trimesh.creation.box(),
                trimesh.creation.torus(1.0, 0.3, major_sections=12, minor_sections=8))[k % 3]
        f = base.faces.copy()
        if kind == 1:  # one face turned over
            f[int(rng.integers(len(f)))] = f[int(rng.integers(len(f)))][::-1]
        elif kind == 2:  # a face missing
            f = np.delete(f, int(rng.integers(len(f))), axis=0)
        elif kind == 3:  # a face twice
            f = np.vstack([f, f[int(rng.integers(len(f)))]])
        m = trimesh.Trimesh(base.vertices, f, process=False)
        directed = {tuple(e) for e in m.edges}
        paired = bool(m.is_watertight and m.is_winding_consistent and len(directed) == len(m.edges))
        used = len(np.unique(f))
        faces.append(f)
        counts.append(len(base.vertices))
        want_paired.append(paired)
        want_sphere.append(paired and len(f) >= 4 and used - len(f) // 2 == 2 and m.euler_number == 2)
    paired, sphere = closed_oriented(faces, counts)
    assert paired.tolist() == want_paired and sphere.tolist() == want_sphere
    assert 60 <= sum(want_paired) <= 180 and 30 <= sum(want_sphere) < sum(want_paired)
    # no triangles is paired and no sphere; an edge from a point to itself, an index past the points: neither
    paired, sphere = closed_oriented([np.zeros((0, 3), int), np.array([[0, 0, 1]] * 4), np.array([[0, 1, 9]] * 4)], [3, 3, 3])
    assert paired.tolist() == [True, False, False] and sphere.tolist() == [False, False, False]


def _spiked(mesh, scale):
    """The mesh with every tenth vertex moved `scale` times as far from the centre: a sphere's
    topology still, convex for scale < 1 only where the moved vertices stay inside (a dent)."""
    v = mesh.vertices.copy()
    v[::10] *= scale
    return trimesh.Trimesh(v, mesh.faces, process=False)


@pytest.mark.parametrize("subdivisions", [3, 4])
def test_large_convex_meshes_are_their_own_hulls_and_others_qhull_s(subdivisions):
    """Icospheres of 642 and 2562 vertices: every edge convex, so their own triangles are their
    hull (trimesh's is_convex agrees), without qhull; dented or spiked ones (trimesh: not convex)
    get qhull's hull of their points. convex_edges against trimesh's is_convex, the hulls against
    qhull (scipy's ConvexHull vertices)."""
    from scipy.spatial import ConvexHull

    sphere = trimesh.creation.icosphere(subdivisions, radius=0.8)
    # dents of 1% and 10%, a spike of 10%, and a dent of 1e-6 that leaves every edge convex
    meshes = [sphere, _spiked(sphere, 0.99), _spiked(sphere, 0.9), _spiked(sphere, 1.1), _spiked(sphere, 1.0 - 1e-6)]
    proven = prepared.convex_edges([m.vertices for m in meshes], [m.faces for m in meshes])
    assert proven.tolist() == [m.is_convex for m in meshes] == [True, False, False, False, True]
    geometries = [geometry(m.vertices, m.faces) for m in meshes]
    prepare(geometries)
    assert geometries[0].gap == 0.0 and geometries[0].hull.n_vertices == len(sphere.vertices)
    for g, m in zip(geometries, meshes):
        want = m.vertices[ConvexHull(m.vertices).vertices]
        assert sorted(map(tuple, g.hull.world_vertices.round(9))) == sorted(map(tuple, want.round(9)))
    assert all(g.gap == np.inf for g in geometries[1:4])  # not their hulls: the triangles answer
    assert geometries[4].gap == 0.0 and geometries[4].hull.n_vertices == len(sphere.vertices)


def test_convex_edges_refuses_what_is_not_a_closed_convex_surface():
    box = trimesh.creation.box()
    flat = box.vertices.copy()
    flat[:, 2] = 0.0  # every face of the top and bottom without area, the sides folded
    bad_index = box.faces.copy()
    bad_index[0, 0] = 99
    got = prepared.convex_edges([box.vertices, flat, box.vertices], [box.faces, box.faces, bad_index])
    assert got.tolist() == [True, False, False]
