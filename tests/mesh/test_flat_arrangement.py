"""Line work that branches, read as a planar arrangement (gjkcli.mesh.arrangement), against
shapely's own noding and polygonize of the same lines.

The drawings are built here with ezdxf from numbers the test keeps: a common-line nest (parts
cut along shared edges, drawn once, so outline corners meet at branch points and T-junctions),
a map of regions sharing borders (each border one polyline between junctions), and loops each
carrying a chord across them.
"""
from __future__ import annotations

import itertools

import ezdxf
import numpy as np
import pytest
import shapely
from shapely.geometry import LineString, Polygon

from gjkcli.engine.results import Status
from gjkcli.mesh.flat import read_drawing, read_flat_objects
from gjkcli.pipeline import run


def oracle_faces(lines):
    """shapely's faces of the lines: node them (union), polygonize."""
    noded = shapely.union_all([LineString(ln) for ln in lines])
    return list(shapely.get_parts(shapely.polygonize(shapely.get_parts(noded))))


def write_lines(path, lines, polylines=False, units=4):
    doc = ezdxf.new(units=units)
    msp = doc.modelspace()
    for ln in lines:
        if polylines and len(ln) > 2:
            msp.add_lwpolyline(ln)
        else:
            for a, b in zip(ln[:-1], ln[1:]):
                msp.add_line(a, b)
    doc.saveas(path)


def brick_nest(rows=3, cols=4, w=50.0, h=20.0, seed=0):
    """A common-line nest: full-width horizontal cut lines, and vertical cuts in each row
    offset from the row below (bricks), so corners meet at T-junctions; one row's cuts line up
    with the next row's (crossings: four pieces meet)."""
    rng = np.random.default_rng(seed)
    lines = [[(0.0, r * h), (cols * w, r * h)] for r in range(rows + 1)]
    for r in range(rows):
        shift = 0.0 if r == 1 else float(rng.uniform(5, w - 5))
        xs = [0.0, cols * w] + [c * w + shift for c in range(1, cols) if c * w + shift < cols * w]
        for x in xs:
            lines.append([(x, r * h), (x, (r + 1) * h)])
    return lines


def pair_statuses(found):
    return {tuple(sorted((p.a, p.b))): p.status for p in found.pairs
            if p.status is not Status.CLEAR}


def oracle_statuses(polys, names, band=1e-9):
    out = {}
    for a, b in itertools.combinations(range(len(polys)), 2):
        pa, pb = polys[a], polys[b]
        if pa.intersection(pb).area > band:
            out[tuple(sorted((names[a], names[b])))] = Status.COLLISION
        elif pa.distance(pb) <= band:
            out[tuple(sorted((names[a], names[b])))] = Status.TOUCHING
    return out


def assert_same_parts(parts, faces):
    """One part per shapely face, matched by area and by shapely's symmetric difference."""
    assert len(parts) == len(faces)
    ours = [Polygon(p.rings[0], holes=list(p.rings[1:])) for p in parts]
    left = list(faces)
    for poly in ours:
        k = min(range(len(left)), key=lambda i: poly.symmetric_difference(left[i]).area)
        assert poly.symmetric_difference(left[k]).area < 1e-9 * max(poly.area, 1.0)
        left.pop(k)
    return ours


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_common_line_nest_parts_are_the_faces_and_neighbours_touch(tmp_path, seed):
    lines = brick_nest(seed=seed)
    path = tmp_path / "common_line.dxf"
    write_lines(path, lines)
    faces = oracle_faces(lines)
    parts, _ = read_flat_objects(path)
    ours = assert_same_parts(parts, faces)
    d = read_drawing(path)
    assert any("branch point" in n and "planar arrangement" in n and "LINE #" in n for n in d.notes)
    found = run.scan([path], run.Options(all_pairs=True))
    assert not found.errors
    assert found.counts["collision"] == 0
    want = oracle_statuses(ours, [o.name for o in found.objects])
    assert pair_statuses(found) == want
    assert sum(s is Status.TOUCHING for s in want.values()) >= len(parts)


def test_map_of_shared_borders(tmp_path):
    """A map: a Voronoi diagram of 40 seeds clipped to a box; each border is one polyline
    (LWPOLYLINE) from junction to junction, drawn once. Every region is a part; neighbours
    touch; nothing collides."""
    from scipy.spatial import Voronoi

    rng = np.random.default_rng(7)
    seeds = rng.uniform(0, 100, (40, 2))
    box = shapely.box(0, 0, 100, 100)
    vor = Voronoi(np.concatenate([seeds, [[-1e3, -1e3], [1e3, -1e3], [1e3, 1e3], [-1e3, 1e3]]]))
    regions = []
    for k in range(len(seeds)):
        reg = vor.regions[vor.point_region[k]]
        regions.append(Polygon(vor.vertices[reg]).intersection(box))
    borders = shapely.get_parts(shapely.line_merge(shapely.union_all(
        [shapely.get_exterior_ring(r) for r in regions])))
    lines = [[tuple(p) for p in shapely.get_coordinates(b)] for b in borders]
    path = tmp_path / "map.dxf"
    write_lines(path, lines, polylines=True)
    parts, _ = read_flat_objects(path)
    ours = assert_same_parts(parts, oracle_faces(lines))
    assert len(parts) == 40
    found = run.scan([path], run.Options(all_pairs=True))
    assert not found.errors and found.counts["collision"] == 0
    assert pair_statuses(found) == oracle_statuses(ours, [o.name for o in found.objects])


def test_loops_with_chords(tmp_path):
    """Eight loops drawn as LINEs, each with a chord from one side to the opposite one: each
    loop is two faces sharing the chord; no open piece is left."""
    lines = []
    for k in range(8):
        x0 = 30.0 * k
        sq = [(x0, 0.0), (x0 + 20, 0.0), (x0 + 20, 20.0), (x0, 20.0), (x0, 0.0)]
        lines.append(sq)
        t = 3.0 + k
        lines.append([(x0, t), (x0 + 20, 20 - t)])  # side to side: two T-junctions
    path = tmp_path / "chords.dxf"
    write_lines(path, lines)
    d = read_drawing(path)
    assert d.open_pieces == 0
    parts, _ = read_flat_objects(path)
    ours = assert_same_parts(parts, oracle_faces(lines))
    assert len(parts) == 16
    found = run.scan([path], run.Options(all_pairs=True))
    assert not found.errors and found.counts["collision"] == 0
    assert found.counts["touching"] == 8
    assert pair_statuses(found) == oracle_statuses(ours, [o.name for o in found.objects])


def test_chord_ending_on_a_closed_polyline_and_a_loose_end(tmp_path):
    """A closed LWPOLYLINE with a LINE across it splits into two faces; a LINE sticking out with
    a free end is a loose end, left out with a note."""
    doc = ezdxf.new(units=4)
    msp = doc.modelspace()
    msp.add_lwpolyline([(0, 0), (40, 0), (40, 20), (0, 20)], close=True)
    msp.add_line((10, 0), (10, 20))
    msp.add_line((40, 10), (55, 10))  # out of the loop, one end free
    msp.add_lwpolyline([(100, 0), (120, 0), (120, 20), (100, 20)], close=True)  # alone: as before
    path = tmp_path / "chord_poly.dxf"
    doc.saveas(path)
    parts, _ = read_flat_objects(path)
    areas = sorted(round(abs(Polygon(p.rings[0]).area), 6) for p in parts)
    assert areas == [200.0, 400.0, 600.0]
    d = read_drawing(path)
    assert d.open_pieces == 1 and any("open piece" in n for n in d.notes)


def test_plain_chains_are_not_arranged(tmp_path):
    """Pieces whose ends meet two by two are chained as before, crossing or not: two squares of
    LINEs that overlap are two parts that collide, not three faces."""
    a = [(0, 0), (20, 0), (20, 20), (0, 20), (0, 0)]
    b = [(10, 10), (30, 10), (30, 30), (10, 30), (10, 10)]
    path = tmp_path / "overlap.dxf"
    write_lines(path, [a, b])
    parts, _ = read_flat_objects(path)
    assert len(parts) == 2
    assert not any("arrangement" in n for n in read_drawing(path).notes)
    found = run.scan([path])
    assert found.counts["collision"] == 1


def _common_line_pair(msp, y0=0.0, layer="0"):
    """Two 50 x 30 parts cut along a shared edge drawn once, from (0, y0): branch points at
    (50, y0) and (50, y0 + 30)."""
    for a, b in [((0, 0), (50, 0)), ((50, 0), (100, 0)), ((100, 0), (100, 30)), ((100, 30), (50, 30)),
                 ((50, 30), (0, 30)), ((0, 30), (0, 0)), ((50, 0), (50, 30))]:
        msp.add_line((a[0], a[1] + y0), (b[0], b[1] + y0), dxfattribs={"layer": layer})


def test_a_sheet_on_its_own_layer_is_not_arranged_with_the_parts_line_work(tmp_path):
    """A common-line nest's parts on layer 0 touching the sheet's outline (a closed polyline on
    its own layer) are their own two faces, and the sheet stays the sheet: the arrangement of
    branching line work takes only what lies on the pieces' own layer (before, it took the
    sheet's outline in: a remnant face the size of the sheet took its place, and --sheet-layer
    found no sheet). DeepNestSharp's nests are drawn so."""
    doc = ezdxf.new(units=4)
    msp = doc.modelspace()
    doc.layers.add("SHEET")
    msp.add_lwpolyline([(0, 0), (120, 0), (120, 60), (0, 60)], close=True, dxfattribs={"layer": "SHEET"})
    _common_line_pair(msp)
    path = tmp_path / "nest.dxf"
    doc.saveas(path)
    parts, sheet = read_flat_objects(path, sheet_layer="SHEET")
    assert sheet is not None and len(parts) == 2
    assert sorted(round(Polygon(p.rings[0]).area, 6) for p in parts) == [1500.0, 1500.0]
    drawing = read_drawing(path)  # without --sheet-layer: the sheet is one more outline, as drawn
    assert sorted(round(Polygon(c.ring).area, 6) for c in drawing.contours) == [1500.0, 1500.0, 7200.0]


def test_join_tolerance_closes_a_gap_in_line_work_that_branches(tmp_path):
    """A common-line nest whose outer corner is drawn 0.01 short: the arrangement merges ends
    within --join-tolerance, as the chaining of plain pieces bridges such gaps; before, it
    merged them only within the default tolerance, and the part was left out whatever the
    option said."""
    doc = ezdxf.new(units=4)
    msp = doc.modelspace()
    lines = [((0, 0), (50, 0)), ((50, 0), (100, 0)), ((100, 0), (100, 30)), ((100, 30), (50, 30)),
             ((50, 30), (0, 30)), ((0, 30), (0, 0.01)), ((50, 0), (50, 30))]  # (0, 0) left open by 0.01
    for a, b in lines:
        msp.add_line(a, b)
    path = tmp_path / "gap.dxf"
    doc.saveas(path)
    assert len(read_drawing(path).contours) == 1  # the default tolerance: the open part is left out
    joined = read_drawing(path, join_tolerance=0.02)
    assert sorted(round(Polygon(c.ring).area, 1) for c in joined.contours) == [1500.0, 1500.0]
    assert not joined.open_pieces


def test_a_shared_edge_drawn_twice_is_no_piece_left_out(tmp_path):
    """Parts each drawn whole, side by side (DeepNest's nests: a shared edge drawn once per
    part): the second copy of the edge lies along the faces' edges and bounds them; it is not
    warned about as an open piece left out (before, every such copy was)."""
    doc = ezdxf.new(units=4)
    msp = doc.modelspace()
    for x0 in (0, 50):
        corners = [(x0, 0), (x0 + 50, 0), (x0 + 50, 30), (x0, 30)]
        for a, b in zip(corners, corners[1:] + corners[:1]):
            msp.add_line(a, b)
    msp.add_line((100, 15), (120, 15))  # a loose end: still left out, with its warning
    path = tmp_path / "twice.dxf"
    doc.saveas(path)
    drawing = read_drawing(path)
    assert sorted(round(Polygon(c.ring).area, 6) for c in drawing.contours) == [1500.0, 1500.0]
    loose = msp.query("LINE")[-1].dxf.handle
    assert drawing.open_pieces == 1
    assert [n for n in drawing.notes if "open piece" in n] == [
        f"warning: {path}: 1 open piece (on layer 0 (1); LINE #{loose}) left out (lines, arcs or paths whose "
        f"ends do not meet); close them, or join small gaps with --join-tolerance"]
