"""Two open parts that hold closed shells, fitted into each other by less than the band: judged
as two closed parts are, by the mean thickness of the common solid of the material their shells
enclose (`gjkcli.pipeline.policy._shells_fit`, `gjkcli.mesh.overlap.material_surface`).

A window frame 30 mm wider than its opening on every side, set in the middle of a 200 mm wall,
each written as an exporter writes them: the frame as four members, the wall as four pieces
about the opening, boxes whose surfaces share edges (so neither part is one closed surface, and
only the shells the faces hold enclose material). The frame and the wall overlap by a ring 30 mm
wide and 70 mm deep; no point is deeper than 42.4 mm in the wall (the frame's outer corners),
their faces reach 65 mm past each other (the wall's jambs across the frame's depth), and the move
that parts them is 135 mm. Between 65 mm and 135 mm no certificate settles them: the triangle
test left them undecided, where the same parts written as closed surfaces were touching by their
common solid's mean thickness (the rule STEP's exact solids follow). Judged by the ring's
analytic volume and mean thickness, 2 x volume / area = 21 mm, and against the closed parts'
verdict.
"""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("manifold3d")

WALL_T, FRAME_D, EXCESS, MEMBER = 200.0, 70.0, 30.0, 60.0
HOLE = (300.0, 500.0)  # the opening's half-width (x) and half-height (z)
OUTER = (HOLE[0] + EXCESS, HOLE[1] + EXCESS)
INNER = (OUTER[0] - MEMBER, OUTER[1] - MEMBER)
# the ring both hold: its cross-section, volume, area and mean thickness
RING = 4 * OUTER[0] * OUTER[1] - 4 * HOLE[0] * HOLE[1]
VOLUME = RING * FRAME_D
AREA = 2 * RING + FRAME_D * (4 * (OUTER[0] + OUTER[1]) + 4 * (HOLE[0] + HOLE[1]))
THICKNESS = 2 * VOLUME / AREA  # 21 mm


def _wall_boxes():
    t = WALL_T / 2
    return [((-1000, -t, -1000), (-HOLE[0], t, 1000)), ((HOLE[0], -t, -1000), (1000, t, 1000)),
            ((-HOLE[0], -t, -1000), (HOLE[0], t, -HOLE[1])), ((-HOLE[0], -t, HOLE[1]), (HOLE[0], t, 1000))]


def _frame_boxes():
    d = FRAME_D / 2
    return [((-OUTER[0], -d, -OUTER[1]), (-INNER[0], d, OUTER[1])),
            ((INNER[0], -d, -OUTER[1]), (OUTER[0], d, OUTER[1])),
            ((-INNER[0], -d, -OUTER[1]), (INNER[0], d, -INNER[1])),
            ((-INNER[0], -d, INNER[1]), (INNER[0], d, OUTER[1]))]


def _box(lo, hi):
    import manifold3d

    lo, hi = np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)
    return manifold3d.Manifold.cube(tuple(hi - lo)).translate(tuple(lo))


def _arrays(manifold):
    got = manifold.to_mesh()
    return np.asarray(got.vert_properties, dtype=np.float64)[:, :3], np.asarray(got.tri_verts, dtype=np.int64)


def _open(boxes, inward: bool = False):
    """The boxes' surfaces side by side, one vertex a place: the edges the boxes share join four
    faces, so the part is not closed; its closed shells are the boxes."""
    vertices, faces = [], []
    for box in boxes:
        v, f = _arrays(_box(*box))
        faces.append(f + sum(len(x) for x in vertices))
        vertices.append(v)
    v, index = np.unique(np.concatenate(vertices), axis=0, return_inverse=True)
    f = index.reshape(-1)[np.concatenate(faces)]
    return v, f[:, ::-1] if inward else f


def _closed(boxes):
    union = _box(*boxes[0])
    for box in boxes[1:]:
        union = union + _box(*box)
    return _arrays(union)


def _settled(frame, wall, band):
    from gjkcli.engine.exact import Mesh, exact_query
    from gjkcli.pipeline.policy import settle

    a, b = Mesh(*frame, name="frame"), Mesh(*wall, name="wall")
    r = exact_query(a, b, tolerance=band)
    return r, settle(r, a, b)


def test_the_construction_holds_the_ring():
    from gjkcli.engine.exact import Mesh
    from gjkcli.engine.shells import shells_of
    from gjkcli.mesh.overlap import material_surface, overlap
    from gjkcli.pipeline.policy import mean_thickness

    a, b = Mesh(*_open(_frame_boxes()), name="frame"), Mesh(*_open(_wall_boxes()), name="wall")
    assert not a.watertight and not b.watertight
    shells_a, shells_b = shells_of(a), shells_of(b)
    assert len(shells_a) == 4 and len(shells_b) == 4
    (surface_a, _), (surface_b, _) = material_surface("frame", shells_a), material_surface("wall", shells_b)
    o = overlap("frame", *surface_a, "wall", *surface_b)
    assert o.volume == pytest.approx(VOLUME, rel=1e-9)
    assert mean_thickness(o) == pytest.approx(THICKNESS, rel=1e-9)


@pytest.mark.parametrize("band", [70.0, 100.0, 134.0])
@pytest.mark.parametrize("inward", [False, True], ids=("outward", "inward"))
def test_open_parts_fitted_within_the_band_are_touching_as_closed_ones_are(band, inward):
    from gjkcli.pipeline.policy import EXIT_SHELLS_THIN, EXIT_THIN

    raw, r = _settled(_open(_frame_boxes(), inward), _open(_wall_boxes()), band)
    assert raw.status.value == "undecided"
    assert r.status.value == "touching", r.note
    assert r.exit == EXIT_SHELLS_THIN and r.certificate is None
    assert f"mean thickness 2 x volume / area {THICKNESS:.6g} within the band" in r.note
    assert "the material the closed shells of 'frame' (4) and 'wall' (4) enclose" in r.note
    _, closed = _settled(_closed(_frame_boxes()), _closed(_wall_boxes()), band)
    assert closed.status.value == "touching" and closed.exit == EXIT_THIN


@pytest.mark.parametrize("band", [10.0, 25.0])
def test_open_parts_fitted_beyond_the_band_stay_a_collision(band):
    _, r = _settled(_open(_frame_boxes()), _open(_wall_boxes()), band)
    assert r.status.value == "collision", r.note


def _plugged_wall():
    """The wall as one solid about its opening and a plug filling the opening, as VectorWorks
    2013 writes a wall (the plug's sides on the opening's faces, their rims shared): open as
    one surface; its material is the whole slab."""
    t = WALL_T / 2
    slab = _box((-1000, -t, -1000), (1000, t, 1000)) - _box((-HOLE[0], -WALL_T, -HOLE[1]), (HOLE[0], WALL_T, HOLE[1]))
    plug = _box((-HOLE[0], -t, -HOLE[1]), (HOLE[0], t, HOLE[1]))
    (va, fa), (vb, fb) = _arrays(slab), _arrays(plug)
    v, index = np.unique(np.concatenate([va, vb]), axis=0, return_inverse=True)
    return v, index.reshape(-1)[np.concatenate([fa, fb + len(va)])]


@pytest.mark.parametrize("band", [90.0, 120.0])
def test_a_part_whose_shells_miss_material_is_not_judged_by_them(band):
    """The plugged wall's faces, welded, hold shells of no volume (a face of the opening and the
    plug's on it, back to back) and none that close the slab or the plug: its material is not
    the shells' union, so the frame in it is left undecided, not called touching by a common
    solid that misses most of it."""
    from gjkcli.engine.exact import Mesh
    from gjkcli.engine.shells import shells_of

    assert shells_of(Mesh(*_plugged_wall(), name="wall")) is None
    raw, r = _settled(_open(_frame_boxes()), _plugged_wall(), band)
    assert raw.status.value == "undecided" and r.status.value == "undecided", r.note


def test_shells_wound_both_ways_are_not_read_as_one_material():
    """A shell wound inwards beside one wound outwards may be a void in it: the rule leaves
    such a part as it is."""
    from gjkcli.engine.exact import Mesh
    from gjkcli.engine.shells import shells_of

    v, f = _open(_frame_boxes())
    first = _arrays(_box(*_frame_boxes()[0]))[1]
    f = f.copy()
    f[:len(first)] = f[:len(first), ::-1]  # the first member's faces turned
    assert shells_of(Mesh(v, f, name="frame")) is None
    assert len(shells_of(Mesh(*_open(_frame_boxes(), inward=True), name="frame"))) == 4
