"""SVG nests with a sheet: a rectangle drawn around the parts (no layer says it is the sheet),
Inkscape layers (`inkscape:groupmode="layer"`, `inkscape:label`) and group ids as layers for
--sheet-layer and --layers. Every verdict is checked against shapely: the parts' pairs, and each
part's place on the sheet (inside it by the clearance, or not)."""
from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
from click.testing import CliRunner
from shapely.geometry import Point, box

from gjkcli.cli import main
from gjkcli.engine.results import Status
from gjkcli.mesh.flat import Layers, read_drawing, read_flat_objects
from gjkcli.pipeline import run

INK = 'xmlns:inkscape="http://www.inkscape.org/namespaces/inkscape"'
SHEET = (0.0, 0.0, 300.0, 200.0)


def parts_layout(seed):
    """(svg elements, shapely polygons by id): 4 x 3 cells holding rects and discs, with one
    pair overlapping, one touching, one 0.3 apart, and one part 2 from the sheet's edge."""
    rng = np.random.default_rng(seed)
    els, shapes = [], {}
    for i, j in itertools.product(range(4), range(3)):
        x, y = 10 + 70 * i, 10 + 62 * j
        name = f"p{i}{j}"
        if (i + j) % 2:
            r = float(rng.uniform(15, 25))
            cx, cy = x + 30, y + 27
            els.append(f'<circle id="{name}" cx="{cx}" cy="{cy}" r="{r}"/>')
            shapes[name] = Point(cx, cy).buffer(r, 256)
        else:
            w, h = float(rng.uniform(40, 55)), float(rng.uniform(35, 50))
            els.append(f'<rect id="{name}" x="{x}" y="{y}" width="{w}" height="{h}"/>')
            shapes[name] = box(x, y, x + w, y + h)
    # planted: an overlap, a touch, a near pair, and one 2 from the right edge
    els += ['<rect id="q1" x="100" y="190" width="20" height="8"/>',
            '<rect id="q2" x="110" y="192" width="20" height="6"/>',
            '<rect id="q3" x="140" y="190" width="10" height="8"/>',
            '<rect id="q4" x="150" y="190" width="10" height="8"/>',
            '<rect id="q5" x="160.3" y="190" width="10" height="8"/>',
            '<rect id="q6" x="288" y="60" width="10" height="10"/>']
    for q, (x, y, w, h) in {"q1": (100, 190, 20, 8), "q2": (110, 192, 20, 6),
                            "q3": (140, 190, 10, 8), "q4": (150, 190, 10, 8),
                            "q5": (160.3, 190, 10, 8), "q6": (288, 60, 10, 10)}.items():
        shapes[q] = box(x, y, x + w, y + h)
    return els, shapes


def svg_text(sheet, parts, layers=False):
    x0, y0, x1, y1 = SHEET
    rect = f'<rect id="sheet" x="{x0}" y="{y0}" width="{x1 - x0}" height="{y1 - y0}"/>'
    body = (f'<g inkscape:groupmode="layer" id="layer1" inkscape:label="Sheet">{rect}</g>'
            f'<g inkscape:groupmode="layer" id="layer2" inkscape:label="Parts">{"".join(parts)}</g>'
            if layers else (rect if sheet else "") + "".join(parts))
    return (f'<svg xmlns="http://www.w3.org/2000/svg" {INK} width="300mm" height="200mm" '
            f'viewBox="0 0 300 200">{body}</svg>')


def oracle(shapes, clearance, band=1e-6):
    """{(a, b): status} of the parts' pairs and {part: status against the sheet} by shapely."""
    pairs = {}
    for a, b in itertools.combinations(sorted(shapes), 2):
        pa, pb = shapes[a], shapes[b]
        if pa.distance(pb) > max(clearance, band):
            continue
        if pa.intersection(pb).area > band:
            pairs[(a, b)] = "collision"
        elif pa.distance(pb) <= band:
            pairs[(a, b)] = "touching"
        elif pa.distance(pb) < clearance:
            pairs[(a, b)] = "clearance"
    sheet = box(*SHEET)
    edge = {}
    for a, p in shapes.items():
        if not sheet.contains(p):
            edge[a] = "collision"
        elif sheet.exterior.distance(p) < clearance:
            edge[a] = "clearance"
    return pairs, edge


def gjk_json(*args):
    r = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    return r, json.loads(r.stdout)


def split(doc):
    pairs, edge = {}, {}
    for p in doc["pairs"]:
        if p["status"] == "clear":
            continue
        a, b = p["a"], p["b"]
        if a.startswith("sheet:") or b.startswith("sheet:"):
            edge[b if a.startswith("sheet:") else a] = p["status"]
        else:
            pairs[tuple(sorted((a, b)))] = p["status"]
    return pairs, edge


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("clearance", [0.5, 3.0])
def test_a_sheet_rectangle_around_the_parts_is_the_sheet(tmp_path, seed, clearance):
    els, shapes = parts_layout(seed)
    path = tmp_path / "nest.svg"
    path.write_text(svg_text(True, els))
    parts, sheet = read_flat_objects(path)
    assert sheet is not None and sheet.name == "sheet:sheet"
    assert sorted(p.name for p in parts) == sorted(shapes)
    assert any("taken as the sheet" in n for n in read_flat_objects(path)[0][0].notes)
    r, doc = gjk_json("scan", path, "--clearance", clearance, "--format", "json")
    want_pairs, want_edge = oracle(shapes, clearance)
    got_pairs, got_edge = split(doc)
    assert got_pairs == want_pairs
    assert got_edge == want_edge
    assert r.exit_code == 1


def test_inkscape_layers_name_the_sheet(tmp_path):
    els, shapes = parts_layout(3)
    path = tmp_path / "layers.svg"
    path.write_text(svg_text(True, els, layers=True))
    d = read_drawing(path)
    assert set(d.layers) == {"Sheet", "Parts"}
    # without --sheet-layer: the sheet is a part on its own layer, named in a note, and the run fails
    r, doc = gjk_json("scan", path, "--format", "json")
    assert r.exit_code == 1
    assert any("--sheet-layer Sheet" in n for n in doc["notes"]), doc["notes"]
    # with it: every verdict as shapely's
    r, doc = gjk_json("scan", path, "--sheet-layer", "sheet", "--clearance", "2.5", "--format", "json")
    want_pairs, want_edge = oracle(shapes, 2.5)
    assert split(doc) == (want_pairs, want_edge)
    # --ignore-layers on an SVG's layers
    parts, _ = read_flat_objects(path, layers=Layers(ignore=("Sheet",)))
    assert sorted(p.name for p in parts) == sorted(shapes)


def test_group_ids_are_layers_and_an_element_id_names_the_sheet(tmp_path):
    svg = ('<svg xmlns="http://www.w3.org/2000/svg" width="100mm" height="100mm" viewBox="0 0 100 100">'
           '<g id="stock"><rect x="0" y="0" width="100" height="100"/></g>'
           '<g id="cut"><rect id="a" x="10" y="10" width="20" height="20"/>'
           '<rect id="b" x="29" y="10" width="20" height="20"/>'
           '<circle id="c" cx="80" cy="80" r="19.5"/></g></svg>')
    path = tmp_path / "groups.svg"
    path.write_text(svg)
    assert set(read_drawing(path).layers) == {"stock", "cut"}
    parts, sheet = read_flat_objects(path, sheet_layer="stock")
    assert sheet is not None and sorted(p.name for p in parts) == ["a", "b", "c"]
    found = run.scan([path], run.Options(sheet_layer="stock", clearance=1.0))
    got = {tuple(sorted((p.a, p.b))): p.status for p in found.pairs if p.status is not Status.CLEAR}
    c = Point(80, 80).buffer(19.5, 4096)
    assert box(0, 0, 100, 100).exterior.distance(c) == pytest.approx(0.5, abs=1e-3)
    assert got == {("a", "b"): Status.COLLISION, ("c", "sheet:stock"): Status.CLEARANCE}


def test_a_sheet_the_reader_cannot_tell_from_a_plate_is_named_in_a_note(tmp_path):
    """A rectangle with two small outlines drawn apart inside it (a tenth of its area): a plate
    with holes as likely as a sheet, so it stays one part, and a note names the option that
    makes it the sheet (DXF: its LAYER:HANDLE; SVG: its id). With it, the two are parts, checked
    against each other and the sheet as shapely says."""
    import ezdxf

    doc = ezdxf.new(units=4)
    msp = doc.modelspace()
    sheet = msp.add_lwpolyline([(0, 0), (100, 0), (100, 50), (0, 50)], close=True)
    msp.add_lwpolyline([(10, 10), (30, 10), (30, 20), (10, 20)], close=True)
    msp.add_lwpolyline([(29, 12), (40, 12), (40, 18), (29, 18)], close=True)
    path = tmp_path / "plate_or_sheet.dxf"
    doc.saveas(path)
    name = f"0:{sheet.dxf.handle}"
    parts, frame = read_flat_objects(path)
    assert len(parts) == 1 and frame is None
    assert any(f"--sheet-layer {name}" in n for n in parts[0].notes), parts[0].notes
    found = run.scan([path], run.Options(sheet_layer=name, clearance=1.0))
    got = {tuple(sorted((p.a, p.b))): p.status for p in found.pairs if p.status is not Status.CLEAR}
    assert box(10, 10, 30, 20).intersection(box(29, 12, 40, 18)).area > 0
    assert got == {tuple(sorted(o.name for o in found.objects[:2])): Status.COLLISION}


def test_groups_select_but_do_not_separate_holes_from_their_parts(tmp_path):
    """A plate in one group and its hole in another: the hole is still the plate's (groups are
    layers to select, not nesting scopes as Inkscape layers are); the plate's area is shapely's."""
    svg = ('<svg xmlns="http://www.w3.org/2000/svg" width="100mm" height="100mm" viewBox="0 0 100 100">'
           '<g id="outlines"><rect id="plate" x="0" y="0" width="60" height="40"/>'
           '<rect id="tab" x="70" y="0" width="20" height="20"/></g>'
           '<g id="holes"><circle id="hole" cx="20" cy="20" r="8"/></g></svg>')
    path = tmp_path / "groups_holes.svg"
    path.write_text(svg)
    parts, _ = read_flat_objects(path)
    assert sorted(p.name for p in parts) == ["plate", "tab"]
    plate = next(p for p in parts if p.name == "plate")
    want = box(0, 0, 60, 40).difference(Point(20, 20).buffer(8, 2 ** 12)).area
    assert len(plate.rings) == 2 and plate.area == pytest.approx(want, rel=1e-4)
    # the groups still select: --ignore-layers holes leaves the hole out
    parts, _ = read_flat_objects(path, layers=Layers(ignore=("holes",)))
    assert len(next(p for p in parts if p.name == "plate").rings) == 1
