"""An open surface exactly as deep inside a solid as the band: a tie, read as touching.

A sheet parallel to a box's top face, at a depth that floating point holds exactly (the
coordinates are multiples of powers of two), lies as deep as the band everywhere. The bound of
how deep an open surface reaches (`gjkcli.engine.sheet`) converged on the band from above and
never reached it, so the pair stayed undecided at the one band a coordinator is likeliest to
type: the offset the model was drawn with (a window frame 30 mm into its wall at a 30 mm band).
The bound now settles a piece within the distances' rounding of the band, as a move within the
band settles two closed parts whose surfaces then meet within the rounding; a point deeper than
the band by more than the rounding is still a collision. Judged by the construction: the depth
is the sheet's offset, exactly.
"""
from __future__ import annotations

import numpy as np
import pytest

trimesh = pytest.importorskip("trimesh")

from gjkcli.engine.exact import Mesh, exact_query  # noqa: E402
from gjkcli.pipeline.policy import settle  # noqa: E402
from gjkcli.tolerances import DEFAULT  # noqa: E402

PLACE = np.array([12.5, -40.25, 3.0])


def _pair(depth: float):
    box = trimesh.creation.box(extents=(1.0, 1.0, 1.0))
    box.apply_translation(PLACE + 0.5)
    z = 1.0 - depth  # exact: depth a power of two, under one
    sheet = np.array([(0.3, 0.3, z), (0.7, 0.3, z), (0.7, 0.7, z), (0.3, 0.7, z)]) + PLACE
    assert (PLACE[2] + 1.0) - sheet[0, 2] == depth  # the construction's depth, exactly
    return (Mesh(sheet, np.array([(0, 1, 2), (0, 2, 3)]), name="sheet"),
            Mesh(box.vertices, box.faces, name="box"))


@pytest.mark.parametrize("depth", [0.25, 0.125, 0.0625])
def test_a_sheet_as_deep_as_the_band_is_touching(depth):
    sheet, box = _pair(depth)
    r = settle(exact_query(sheet, box, tolerance=depth), sheet, box)
    assert r.status.value == "touching", r.note
    slack = DEFAULT.exact_snap_rel * max(sheet.size, box.size)
    assert depth <= r.depth_upper <= depth + 2 * slack


@pytest.mark.parametrize("depth", [0.25, 0.125, 0.0625])
def test_a_sheet_just_deeper_than_the_band_is_a_collision_and_just_shallower_touching(depth):
    sheet, box = _pair(depth)
    under = settle(exact_query(sheet, box, tolerance=depth * (1 - 1e-9)), sheet, box)
    assert under.status.value == "collision", under.note
    assert under.depth == pytest.approx(depth, rel=1e-12)
    over = settle(exact_query(sheet, box, tolerance=depth * (1 + 1e-9)), sheet, box)
    assert over.status.value == "touching", over.note


# -- ties where floating point holds no exact depth: a model's own coordinates --------------------
#
# Where the coordinates are not dyadic, the pieces' corners never fall exactly where the depth is
# the band's, and a piece across the seam of two triangles of one face (the diagonal of a
# wall's opening sill, under a window's sill drawn exactly the band deep: Revit 2021's sample
# at 30 mm), or across the middle of a slab twice the band thick (a stair's open surface through
# a railing's 20 mm plate: FZK-Haus at 10 mm), was bounded by no one triangle: pieces halved
# along the seam until the budget ran out, undecided. The face's distance and the mean of two
# sides' distances (`gjkcli.engine.flatfaces`) bound them at once.

WALL = np.array([3.1169568982194096, -7.500017072122563, 0.0])


def _sill(depth: float):
    """A wall 0.1 x 16.885 x 3 at the sample's place and a window's open sill under its top face
    by `depth`, 20 mm wide along 15.9 m of it, across the top face's diagonal: (sheet, wall, the
    depth as floating point has it)."""
    wall = trimesh.creation.box(extents=(0.1, 16.885, 3.0))
    wall.apply_translation(WALL + np.array([0.05, 8.4425, 1.5]))
    top = float(wall.bounds[1, 2])
    z = top - depth
    y0, y1 = WALL[1] + 0.5, WALL[1] + 16.4
    x0, x1 = WALL[0] + 0.04, WALL[0] + 0.06  # farther than the depth from the wall's sides
    sheet = np.array([(x0, y0, z), (x1, y0, z), (x1, y1, z), (x0, y1, z)])
    return (Mesh(sheet, np.array([(0, 1, 2), (0, 2, 3)]), name="sill"),
            Mesh(wall.vertices, wall.faces, name="wall"), top - z)


def _through_slab(half: float):
    """A railing: a plate `2 half` thick with a post 0.5 thick along one end (so that the solid
    is not thin: `half_width`), and an open sheet through the plate at a slant, its corners
    off the plate's middle: (sheet, railing, half the plate's thickness as floating point has
    it). The sheet's points on the plate's middle are that deep."""
    from shapely.geometry import Polygon

    t = 2.0 * half
    railing = trimesh.creation.extrude_polygon(
        Polygon([(0, 0), (2, 0), (2, 0.5), (1.5, 0.5), (1.5, t), (0, t)]), 1.0)
    railing.apply_translation([7.36762595, 2.25652613, 3.2])
    lo = railing.bounds[0]
    y0, y1 = lo[1] - 0.0371, lo[1] + t + 0.0613
    x = lo[0] + 0.4
    sheet = np.array([(x, y0, lo[2] + 0.2), (x + 0.2, y1, lo[2] + 0.2), (x + 0.2, y1, lo[2] + 0.8),
                      (x, y0, lo[2] + 0.8)])
    return (Mesh(sheet, np.array([(0, 1, 2), (0, 2, 3)]), name="sheet"),
            Mesh(railing.vertices, railing.faces, name="railing"), 0.5 * float((lo[1] + t) - lo[1]))


@pytest.mark.parametrize("make, size", [(_sill, 0.03), (_sill, 0.025), (_through_slab, 0.01), (_through_slab, 0.0137)])
def test_a_tie_in_a_models_own_coordinates_is_settled(make, size):
    pytest.importorskip("shapely")
    sheet, solid, depth = make(size)
    slack = DEFAULT.exact_snap_rel * max(sheet.size, solid.size)
    tie = settle(exact_query(sheet, solid, tolerance=depth), sheet, solid)
    assert tie.status.value == "touching", tie.note
    assert depth - 2 * slack <= tie.depth_upper <= depth + 2 * slack
    under = settle(exact_query(sheet, solid, tolerance=depth * (1 - 1e-6)), sheet, solid)
    assert under.status.value == "collision", under.note
    assert depth * (1 - 1e-6) < under.depth <= depth + 2 * slack
    over = settle(exact_query(sheet, solid, tolerance=depth * (1 + 1e-6)), sheet, solid)
    assert over.status.value == "touching", over.note


def _moved(sheet, solid, rng):
    """Both parts turned and moved alike by a seeded rigid motion far from the origin: the
    depth is the same, the coordinates and the faces' planes are no longer the axes'."""
    from scipy.spatial.transform import Rotation

    R = Rotation.random(random_state=rng).as_matrix()
    t = rng.uniform(-500.0, 500.0, size=3)
    return (Mesh(sheet.vertices @ R.T + t, sheet.faces, name=sheet.name),
            Mesh(solid.vertices @ R.T + t, solid.faces, name=solid.name))


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("make, size", [(_sill, 0.03), (_through_slab, 0.01)])
def test_ties_turned_and_moved_are_settled_and_a_hair_either_side_is_judged(make, size, seed):
    """The constructions above, turned and moved by a seeded motion, at bands just under and
    over their depth (which the motion keeps, to its rounding): a collision under, with a
    witness no shallower than that band; touching over, bounded within the rounding. (At the
    depth itself the turned coordinates' rounding, 1e-14 here, decides: the triangle test takes
    a point that much past the band for a collision, where the bound reads a tie.)"""
    pytest.importorskip("shapely")
    rng = np.random.default_rng(seed)
    sheet, solid, depth = make(size)
    sheet, solid = _moved(sheet, solid, rng)
    slack = DEFAULT.exact_snap_rel * max(sheet.size, solid.size)
    for rel in (1e-3, 1e-6):
        under = settle(exact_query(sheet, solid, tolerance=depth * (1 - rel)), sheet, solid)
        assert under.status.value == "collision", (rel, under.note)
        assert depth * (1 - rel) < under.depth <= depth + 4 * slack
    for rel in (1e-6, 1e-3):
        over = settle(exact_query(sheet, solid, tolerance=depth * (1 + rel)), sheet, solid)
        assert over.status.value == "touching", (rel, over.note)
        assert over.depth_upper <= depth * (1 + rel) + 2 * slack
