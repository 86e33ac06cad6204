"""A closed part thinner than twice the band against an open surface far larger than it
(`gjkcli.engine.sheet.sheet_depth`): no point lies deeper inside the solid than half its box's
least extent, so the bound settles the pair at once instead of splitting the surface's pieces
down to the budget (a 4-triangle soup with float32's largest coordinates beside a cube, whose
band is 1e-7 of 3.4e38, took 200,000 pieces and 0.8 s, then stayed undecided).

The truth is analytic: a slab of thickness t crossed through its middle by a plane parallel to
its faces has its deepest point of the plane at t/2 (the slab's other sides are far). Swept
over thicknesses and over bands just under and just over t/2: under, a collision with a point
of the plane deeper than the band; over, touching, settled with no piece examined.
"""
from __future__ import annotations

import numpy as np
import pytest

trimesh = pytest.importorskip("trimesh")

from gjkcli.engine.exact import Mesh  # noqa: E402
from gjkcli.engine.sheet import half_width, sheet_depth  # noqa: E402

THICKNESS = (1e-3, 0.02, 0.5)
SIDE = 10.0  # the slab's other sides: far from the plane's deepest point


def _slab_and_plane(t: float, reach: float, rng):
    """(slab, plane) meshes in a random rigid pose: a SIDE x SIDE x t box and a square of side
    `reach` through the box's middle, parallel to its large faces (two triangles)."""
    box = trimesh.creation.box((SIDE, SIDE, t))
    h = reach / 2
    square = np.array([[-h, -h, 0.0], [h, -h, 0.0], [h, h, 0.0], [-h, h, 0.0]])
    R = trimesh.transformations.random_rotation_matrix(rng.random(3))
    R[:3, 3] = rng.uniform(-100, 100, 3)
    solid = Mesh(trimesh.transform_points(box.vertices, R), box.faces, name="slab")
    sheet = Mesh(trimesh.transform_points(square, R), [[0, 1, 2], [0, 2, 3]], name="plane")
    return solid, sheet


@pytest.mark.parametrize("t", THICKNESS)
@pytest.mark.parametrize("reach", [30.0, 3e6])
def test_a_solid_thinner_than_twice_the_band_is_settled_at_once(t, reach):
    rng = np.random.default_rng(43)
    solid, sheet = _slab_and_plane(t, reach, rng)
    depth = t / 2  # the plane's deepest point, at the slab's middle
    for over in (1.02, 1.5, 10.0):
        got = sheet_depth(sheet, solid, band=over * depth)
        assert got.deep is None and got.pieces == 0
        assert got.upper is not None and depth <= got.upper <= over * depth
    got = sheet_depth(sheet, solid, band=0.98 * depth)
    assert got.upper is None and got.pieces > 0  # not thin beside this band: searched
    assert got.deep is not None and 0.98 * depth < got.deep[0] <= depth * (1 + 1e-9)


def test_a_cube_beside_float32_s_largest_coordinates_is_touching_in_no_pieces():
    """The fuzz corpus's soup: a few triangles reaching 3.4e38 beside a unit cube, the band
    1e-7 of the pair's size."""
    cube = trimesh.creation.box((1.0, 1.0, 1.0))
    solid = Mesh(cube.vertices, cube.faces, name="cube")
    big = float(np.finfo(np.float32).max)
    sheet = Mesh(np.array([[-big, -0.2, -big], [big, 0.1, -big], [0.0, 0.0, big]]), [[0, 1, 2]],
                 name="soup")
    band = 1e-7 * big
    got = sheet_depth(sheet, solid, band=band)
    assert got.deep is None and got.pieces == 0 and 0.5 <= got.upper <= band


def test_no_point_inside_a_part_is_deeper_than_its_half_width():
    """The bound itself, judged by exact signed distances (tests/exact_distance.py) at points
    sampled inside issue 40's generated parts, each in a seeded random pose: the deepest is never
    past `half_width`, and for the flat ones (the tori, the gear: a principal axis across their
    thickness) the bound is within 5% of the deepest point (on their middle circles)."""
    pytest.importorskip("manifold3d")
    pytest.importorskip("shapely")
    import sweep
    from exact_distance import signed_distance

    rng = np.random.default_rng(47)
    for part in sweep.generated():
        R = trimesh.transformations.random_rotation_matrix(rng.random(3))
        R[:3, 3] = rng.uniform(-1e3, 1e3, 3)
        mesh = trimesh.Trimesh(trimesh.transform_points(part.vertices, R), part.faces, process=False)
        points = rng.uniform(*mesh.bounds, size=(1000, 3))
        # and where the flat parts are deepest: the tori's tube centre circle, the gear's ring's
        # middle circle, at mid-thickness (each made about the z axis, centred)
        extent = np.ptp(part.vertices, axis=0)
        r = (extent[0] - extent[2]) / 2 if "torus" in part.name else 0.55 * extent[0] / 2
        a = np.linspace(0, 2 * np.pi, 180, endpoint=False)
        circle = np.column_stack([r * np.cos(a), r * np.sin(a), np.zeros_like(a)])
        points = np.concatenate([points, trimesh.transform_points(circle, R)])
        deepest = float(signed_distance(mesh, points).max())
        bound = half_width(Mesh(mesh.vertices, mesh.faces))
        assert 0 < deepest <= bound * (1 + 1e-12), (part.name, deepest, bound)
        if "torus" in part.name or part.name == "gear":
            assert bound <= 1.05 * deepest, (part.name, deepest, bound)
