"""Closed solids of one object that share a face or an edge stay closed (`merge_solids`).

An IFC element is often several faceted B-reps, each with its own vertices: a knee wall's stud
standing on its plate, a dormer's rafters on their ridge. Merged all together, the B-reps meet at
edges of four faces, and the element, closed, read as an open surface: only its surface counted,
and two such parts that touch were left undecided (Schependomlaan's roof frame, two pairs). Now
each piece the file's own vertices join is merged among itself where that closes it (a piece
turned inside out beside the others turned back).

Judges: manifold3d (volumes of the pieces, and of two parts' common solid, from the arrays as
IfcOpenShell gives them, each B-rep apart) and trimesh's definition of a closed mesh.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
import trimesh

from fits import common_solid
from gjkcli.engine.topology import open_faces, topology
from gjkcli.mesh.load import merge_close, merge_solids

SCHEPENDOMLAAN = Path(__file__).resolve().parents[1] / "data" / "third_party" / "schependomlaan"
ROOF = SCHEPENDOMLAAN / "ROOT-kapconstructie_dakkapellen_platdak.ifczip"


# a box's six squares, each corner cycle counter-clockwise seen from outside (corner k at
# bit 0: x, bit 1: y, bit 2: z of the upper corner)
_SQUARES = [(0, 2, 3, 1), (4, 5, 7, 6), (0, 1, 5, 4), (2, 6, 7, 3), (0, 4, 6, 2), (1, 3, 7, 5)]


def _box(lo, hi, flip_diagonals: bool = False):
    """A closed box's 8 vertices and 12 outward triangles, each square cut along the diagonal
    from its first corner, or along the other one."""
    lo, hi = np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)
    vertices = np.array([[(hi if k >> d & 1 else lo)[d] for d in range(3)] for k in range(8)])
    faces = []
    for a, b, c, d in _SQUARES:
        faces += [[b, c, d], [b, d, a]] if flip_diagonals else [[a, b, c], [a, c, d]]
    return vertices, np.array(faces, dtype=np.int64)


def _two_boxes_on_a_face():
    """A stud on a plate: two boxes, each its own vertices, sharing the square z = 1 (cut along
    other diagonals on each side, as two B-reps' triangulations are)."""
    va, fa = _box([0, 0, 0], [1, 1, 1])
    vb, fb = _box([0, 0, 1], [1, 1, 3], flip_diagonals=True)
    return np.vstack([va, vb]), np.vstack([fa, fb + len(va)])


def _volume(vertices, faces) -> float:
    import manifold3d

    mesh = manifold3d.Mesh64(vert_properties=np.ascontiguousarray(vertices, dtype=np.float64),
                             tri_verts=np.ascontiguousarray(faces, dtype=np.uint64))
    return manifold3d.Manifold(mesh).volume()


def test_two_boxes_sharing_a_face_stay_two_closed_bodies():
    vertices, faces = _two_boxes_on_a_face()
    # merged all together (one grid, as before): the shared square's rim is an edge of four faces
    everything = trimesh.Trimesh(vertices, faces, process=True, merge_tex=True, merge_norm=True)
    assert not everything.is_watertight
    plain_v, plain_f = merge_close(vertices, faces)
    assert len(plain_v) == 12 and open_faces(plain_f, len(plain_v)).any()
    v, f = merge_solids(vertices, faces)
    body, bodies, open_face = topology(f, len(v))
    assert not open_face.any() and bodies == 2
    assert trimesh.Trimesh(v, f, process=False).is_watertight
    # the judge: each body manifold3d's closed solid, 1 and 2 in volume
    volumes = sorted(_volume(*_piece(v, f, body == k)) for k in range(bodies))
    assert volumes == pytest.approx([1.0, 2.0], rel=1e-12)


def _piece(v, f, which):
    used, local = np.unique(f[which], return_inverse=True)
    return v[used], local.reshape(-1, 3)


def test_a_closed_box_split_at_its_seams_is_merged_whole():
    # each square its own four vertices (a glTF's flat normals): six open pieces, one closed box
    v, f = _box([0, 0, 0], [2, 1, 1])
    assert _volume(v, f) == pytest.approx(2.0, rel=1e-12)  # the box is closed and wound outward
    split_v, split_f = [], []
    for k in range(0, len(f), 2):  # faces 2k and 2k + 1: one square
        corners = list(dict.fromkeys(f[k:k + 2].ravel().tolist()))
        remap = {c: len(split_v) + i for i, c in enumerate(corners)}
        split_v += [v[c] for c in corners]
        split_f += [[remap[c] for c in tri] for tri in f[k:k + 2].tolist()]
    mv, mf = merge_solids(np.array(split_v), np.array(split_f, dtype=np.int64))
    assert len(mv) == 8 and not open_faces(mf, len(mv)).any()
    assert _volume(mv, mf) == pytest.approx(2.0, rel=1e-12)


def test_a_triangle_soup_is_merged_as_one():
    # an STL of the two boxes: no vertex shared, so nothing tells the solids apart; merged as
    # before, the shared square's rim is open
    vertices, faces = _two_boxes_on_a_face()
    soup = vertices[faces].reshape(-1, 3)
    v, f = merge_solids(soup, np.arange(len(soup), dtype=np.int64).reshape(-1, 3))
    assert len(v) == 12 and open_faces(f, len(v)).any()


def test_a_solid_wound_inside_out_beside_another_is_turned_back():
    # the stud wound inwards (as Revit writes a cabinet's handles): its box lies in no box of the
    # plate, so it is no void of it; turned back, the two are closed, each wound outwards
    vertices, faces = _two_boxes_on_a_face()
    faces[12:] = faces[12:, ::-1]
    v, f = merge_solids(vertices, faces)
    body, bodies, open_face = topology(f, len(v))
    assert not open_face.any() and bodies == 2
    assert sorted(_volume(*_piece(v, f, body == k)) for k in range(bodies)) == pytest.approx([1.0, 2.0], rel=1e-12)


def test_a_piece_wound_inside_out_in_anothers_notch_is_turned_back():
    # a U (5 in volume) and a box wound inwards filling its notch, on the notch's floor square:
    # within the U's box but outside its material (as Revit's drawers in a carcass), so no
    # void; turned back, the two are closed
    shapely_geometry = pytest.importorskip("shapely.geometry")
    u = trimesh.creation.extrude_polygon(
        shapely_geometry.Polygon([(0, 0), (3, 0), (3, 2), (2, 2), (2, 1), (1, 1), (1, 2), (0, 2)]), 1.0)
    assert _volume(u.vertices, u.faces) == pytest.approx(5.0, rel=1e-12)
    vb, fb = _box([1, 1, 0], [2, 2, 1])
    vertices = np.vstack([np.asarray(u.vertices, dtype=np.float64), vb])
    faces = np.vstack([np.asarray(u.faces, dtype=np.int64), fb[:, ::-1] + len(u.vertices)])
    plain_v, plain_f = merge_close(vertices, faces)
    assert open_faces(plain_f, len(plain_v)).any()
    v, f = merge_solids(vertices, faces)
    body, bodies, open_face = topology(f, len(v))
    assert not open_face.any() and bodies == 2
    assert sorted(_volume(*_piece(v, f, body == k)) for k in range(bodies)) == pytest.approx([1.0, 5.0], rel=1e-12)


def test_a_piece_wound_inside_out_within_anothers_box_merges_the_whole_as_before():
    # a box wound inwards in the corner of a longer one, sharing its end square, its centre
    # inside the longer one: a void or a solid turned inside out, which the winding does not
    # tell; merged whole, open, as before
    va, fa = _box([0, 0, 0], [2, 1, 1])
    vb, fb = _box([0, 0, 0], [1, 1, 1], flip_diagonals=True)
    vertices, faces = np.vstack([va, vb]), np.vstack([fa, fb[:, ::-1] + len(va)])
    v, f = merge_solids(vertices, faces)
    assert len(v) == 12 and open_faces(f, len(v)).any()


def test_a_piece_open_by_itself_merges_the_whole_as_before():
    # the stud's top square missing: the stud is open, so nothing is kept apart
    vertices, faces = _two_boxes_on_a_face()
    top = np.flatnonzero(np.isclose(vertices[faces][:, :, 2], 3).all(axis=1))
    faces = np.delete(faces, top, axis=0)
    v, f = merge_solids(vertices, faces)
    assert len(v) == 12


# -- Schependomlaan's roof frame (ArchiCAD 18) --------------------------------------------------

# (slab, knee wall): rafters' slab resting on a knee wall, both several B-reps; left undecided
RESTING = [("0cUNscBFPAzvxaou82m7PU", "1us$eS2XH6h9DpSVtp$vYM"), ("2HT1QptlXCmBlOoXE0NFwh", "0VgxmJGxv2wP5IVI81qJrl")]
# a dormer's roof on its side wall: read as surfaces, their triangles crossed, a collision (of
# 0.11 mm^3, a common solid 0.8 nm thick on average); closed, a move within the band parts them
DORMER = ("3GhhN$uvX5igu88pzhiJv8", "3IuK8$_ZHAJw36Pw2gYslk")


@pytest.fixture(scope="module")
def roof():
    pytest.importorskip("ifcopenshell")
    from gjkcli.mesh.load import read_objects
    from gjkcli.pipeline import run as pipeline

    parts = {p.element.global_id: p for p in read_objects(ROOF)}
    found = pipeline.scan([ROOF], pipeline.Options(jobs=1))
    pairs = {frozenset((p.a.split()[-1], p.b.split()[-1])): p for p in found.pairs}
    return parts, found, pairs


def test_the_roof_frames_elements_of_several_breps_are_closed(roof):
    parts, _, _ = roof
    closed = 0
    for part in parts.values():
        v, f = merge_solids(part.vertices, part.faces)
        closed += not open_faces(f, len(v)).any()
    assert closed == 140  # of 141 (56 closed before: every element of several B-reps was open)
    for gid, bodies in ((RESTING[0][0], 3), (RESTING[0][1], 2), (DORMER[0], 3), (DORMER[1], 2)):
        v, f = merge_solids(parts[gid].vertices, parts[gid].faces)
        assert topology(f, len(v))[1] == bodies


def test_the_roof_frame_is_decided_and_its_touching_parts_touch(roof):
    from gjkcli.engine.results import Status

    parts, found, pairs = roof
    assert not [p for p in found.pairs if p.status is Status.UNDECIDED]
    for a, b in RESTING + [DORMER]:
        pair = pairs[frozenset((a, b))]
        assert pair.status is Status.TOUCHING, pair.note
        common = common_solid(parts[a], parts[b])
        band = float(pair.result.tolerance)
        # the judge: their common solid, a slab thinner than the band (or none at all)
        assert common.volume() <= 0 or 2 * common.volume() / common.surface_area() < band
    # the dormer's certificate: moved by its shift (within the band), the wall shares no volume
    # with the roof by manifold3d; moved the other way, 18 mm^3
    pair = pairs[frozenset(DORMER)]
    shift = np.asarray(pair.result.certificate.shift)
    assert np.linalg.norm(shift) <= pair.result.tolerance * (1 + 1e-9)
    roof_part, wall = parts[DORMER[0]], parts[DORMER[1]]
    moved = [dataclasses.replace(wall, vertices=wall.vertices + s) for s in (shift, -shift)]
    if pair.a.endswith(DORMER[1]):  # the shift moves b
        moved = moved[::-1]
    assert common_solid(roof_part, moved[0]).volume() == 0.0
    assert common_solid(roof_part, moved[1]).volume() > 1.0


def test_an_element_of_two_solids_through_a_slab_is_a_collision_by_its_volume(tmp_path):
    """A post of two solids on a shared square (a plate and a stud, 1 x 1, 3 high) through a
    floor finish 0.4 thick, at a band of 0.3. Read as an open surface, its depth in the slab was
    that of its faces, half the slab's thickness (0.2): `touching`, as Revit's coffee tables and
    doors through the duplex model's 19 mm wood finish were at a 10 mm band. Closed, it is a
    `collision` at least as deep as the slab: the judge, manifold3d, finds the post and the
    slab sharing a volume after the post is moved up by the band, or by the depth less a hair."""
    from fits import checked_pair

    vertices, faces = _two_boxes_on_a_face()
    post = trimesh.Trimesh(vertices, faces, process=False)
    slab = trimesh.Trimesh(*_box([-1, -1, 0.2], [2, 2, 0.6]), process=False)
    band = 0.3
    pair = checked_pair(tmp_path, post, slab, band, names=("post", "slab"))
    assert pair.status.value == "collision", pair.note
    assert band < pair.result.depth
    for lift in (band, 0.999 * pair.result.depth):
        up = trimesh.Trimesh(vertices + [0, 0, lift], faces, process=False)
        assert common_solid(up, slab).volume() > 0
