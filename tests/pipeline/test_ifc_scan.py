"""Scans of IFC models: verdicts against analytic boxes and python-fcl, hosted elements, class
groups, elements whose geometry fails.

Models are made with IfcOpenShell's authoring API (tests/ifc_models.py) in millimetres and
metres. Oracles: the distance and penetration depth of axis-aligned boxes (closed forms), and
python-fcl's BVH distance and collision on the very triangles IfcOpenShell's iterator produced
(the turned boxes, the real tutorial house).
"""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

ifcopenshell = pytest.importorskip("ifcopenshell")
fcl = pytest.importorskip("fcl")

from gjkcli.cli import main  # noqa: E402
from gjkcli.engine.results import Status  # noqa: E402
from gjkcli.mesh.load import read_objects  # noqa: E402
from gjkcli.pipeline import run as pipeline  # noqa: E402
from ifc_models import Box, box_depth, box_distance, write_model  # noqa: E402

OPENINGS = Path(__file__).resolve().parents[1] / "data" / "third_party" / "project0-openings.ifc"


def _fcl_mesh(vertices, faces):
    m = fcl.BVHModel()
    m.beginModel(len(vertices), len(faces))
    m.addSubModel(np.asarray(vertices, dtype=np.float64), np.asarray(faces, dtype=np.int32))
    m.endModel()
    return fcl.CollisionObject(m, fcl.Transform())


def _fcl_answer(pa, pb):
    """(collide, distance) of two parts' triangles by python-fcl."""
    a, b = _fcl_mesh(pa.vertices, pa.faces), _fcl_mesh(pb.vertices, pb.faces)
    collide = fcl.collide(a, b, fcl.CollisionRequest(), fcl.CollisionResult()) > 0
    distance = fcl.distance(a, b, fcl.DistanceRequest(enable_nearest_points=True), fcl.DistanceResult())
    return collide, distance


def _ducts_and_beams(rng, n: int, size: float, turned: bool):
    """n (duct, beam) pairs 100 sizes apart from each other; each beam at a random offset from its
    duct: about half overlap, half stand clear, none within 1% of a size of touching."""
    boxes = []
    for k in range(n):
        base = np.array([100.0 * size * k, 0.0, 0.0])
        duct = Box("IfcDuctSegment", f"Duct {k}", tuple(base), (3 * size, 0.4 * size, 0.4 * size),
                   turn=float(rng.uniform(0, 90)) if turned else 0.0)
        c, s = np.cos(np.radians(duct.turn)), np.sin(np.radians(duct.turn))
        along = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])  # the duct's axes
        while True:
            offset = along @ rng.uniform([-0.5, -0.7, -0.7], [3.0, 0.6, 0.6]) * size
            beam = Box("IfcBeam", f"Beam {k}", tuple(base + offset), (0.3 * size, 0.5 * size, 0.5 * size))
            if turned:
                break
            gap, depth = box_distance(duct, beam), box_depth(duct, beam)
            if gap > 0.01 * size or depth > 0.01 * size:
                break
        boxes += [duct, beam]
    return boxes


@pytest.mark.parametrize("unit, size", [("MILLIMETERS", 1000.0), ("METERS", 1.0)])
def test_ducts_against_beams_as_analytic_boxes_say(tmp_path, unit, size):
    rng = np.random.default_rng(16)
    boxes = _ducts_and_beams(rng, 24, size, turned=False)
    path = write_model(tmp_path / "mep.ifc", boxes, unit=unit)
    found = pipeline.scan([path], pipeline.Options(all_pairs=True, jobs=1))
    assert not found.errors
    by_pair = {(p.a, p.b): p for p in found.pairs}
    names = {b.guid: p.name for b in boxes for p in [found.object(n) for n in found._index] if p.global_id == b.guid}
    collided = 0
    for k in range(0, len(boxes), 2):
        duct, beam = boxes[k], boxes[k + 1]
        pair = by_pair.get((names[duct.guid], names[beam.guid])) or by_pair.get((names[beam.guid], names[duct.guid]))
        gap, depth = box_distance(duct, beam), box_depth(duct, beam)
        if depth > 0:
            collided += 1
            assert pair is not None and pair.status is Status.COLLISION
            assert pair.result.depth == pytest.approx(depth, rel=1e-6)
        elif pair is not None:  # a clear pair the broad phase kept
            assert pair.status is Status.CLEAR
            assert pair.result.distance == pytest.approx(gap, rel=1e-9, abs=1e-9 * size)
        assert found.object(names[duct.guid]).units == ("mm" if unit == "MILLIMETERS" else "m")
    # the seeded draw holds both verdicts, so a reader that moved or scaled the boxes fails
    assert 0.3 * 24 <= collided <= 0.7 * 24
    # pairs of different ducts are 100 sizes apart: never listed as findings
    assert all(p.a.split("'")[1].split()[-1] == p.b.split("'")[1].split()[-1] for p in found.pairs
               if p.status is not Status.CLEAR)


def test_turned_ducts_against_beams_as_fcl_says(tmp_path):
    rng = np.random.default_rng(1616)
    boxes = _ducts_and_beams(rng, 16, 1000.0, turned=True)
    path = write_model(tmp_path / "mep.ifc", boxes)
    parts = {p.element.global_id: p for p in read_objects(path)}
    found = pipeline.scan([path], pipeline.Options(all_pairs=True, jobs=1))
    by_pair = {frozenset((p.a, p.b)): p for p in found.pairs}
    verdicts = []
    for k in range(0, len(boxes), 2):
        pa, pb = parts[boxes[k].guid], parts[boxes[k + 1].guid]
        collide, distance = _fcl_answer(pa, pb)
        pair = by_pair.get(frozenset((pa.name, pb.name)))
        if collide:
            assert pair is not None and pair.status is Status.COLLISION, (pa.name, pb.name)
        elif pair is not None:
            assert pair.status is Status.CLEAR
            assert pair.result.distance == pytest.approx(distance, rel=1e-6)
        verdicts.append(collide)
    assert 0.2 * len(verdicts) <= sum(verdicts) <= 0.8 * len(verdicts)


def _house(tmp_path, unit="MILLIMETERS"):
    s = 1000.0 if unit == "MILLIMETERS" else 1.0
    boxes = [Box("IfcSlab", "Floor", (0, 0, -0.3 * s), (6 * s, 6 * s, 0.3 * s)),
             Box("IfcWall", "South", (0, 0, 0), (6 * s, 0.2 * s, 3 * s)),  # stands on the slab
             Box("IfcOpeningElement", "Door hole", (2 * s, -0.01 * s, 0), (0.9 * s, 0.22 * s, 2.1 * s),
                 voids="South"),
             # the door's frame reaches into the wall around the hole: a clash but for the host
             Box("IfcDoor", "Front door", (1.95 * s, 0, 0), (1.0 * s, 0.2 * s, 2.15 * s), fills="Door hole"),
             Box("IfcWall", "Partition", (3 * s, 0.2 * s, 0), (0.1 * s, 3 * s, 3 * s)),
             # a door standing in the partition with no opening there: a clash
             Box("IfcDoor", "Lost door", (2.9 * s, 1 * s, 0), (0.3 * s, 0.9 * s, 2.1 * s))]
    return write_model(tmp_path / "house.ifc", boxes, unit=unit), boxes


@pytest.mark.parametrize("unit", ["MILLIMETERS", "METERS"])
def test_a_door_in_its_opening_is_hosted_and_a_wall_on_its_slab_touches(tmp_path, unit):
    path, boxes = _house(tmp_path, unit)
    found = pipeline.scan([path], pipeline.Options(jobs=1))
    label = {b.name: f"{b.ifc_class} '{b.name}' {b.guid}" for b in boxes}
    pairs = {frozenset((p.a, p.b)): p for p in found.pairs}
    hosted = pairs[frozenset((label["Front door"], label["South"]))]
    assert hosted.status is Status.COLLISION and hosted.allowed and hosted.reason == "hosted"
    assert not hosted.fails
    lost = pairs[frozenset((label["Lost door"], label["Partition"]))]
    assert lost.status is Status.COLLISION and not lost.allowed and lost.fails
    # walls on the slab share a face: touching, which fails only under --fail-on touching
    on_slab = pairs[frozenset((label["South"], label["Floor"]))]
    assert on_slab.status is Status.TOUCHING and not on_slab.fails
    strict = pipeline.scan([path], pipeline.Options(jobs=1, fail_on=("collision", "touching")))
    failing = {frozenset((p.a, p.b)) for p in strict.failures}
    assert frozenset((label["South"], label["Floor"])) in failing
    assert frozenset((label["Front door"], label["South"])) not in failing


def test_manifest_groups_select_ifc_classes(tmp_path):
    path, boxes = _house(tmp_path)
    extra = [Box("IfcDuctSegment", "Duct", (0, 2000, 2500), (6000, 300, 300)),
             Box("IfcBeam", "Beam", (1000, 1800, 2600), (200, 700, 400)),
             Box("IfcWallStandardCase", "Old wall", (0, 2100, 0), (50, 100, 3000))]
    path = write_model(tmp_path / "house.ifc", boxes + extra)
    manifest = tmp_path / "clash.toml"
    manifest.write_text(f'''
[[include]]
file = "{path.name}"

[[group]]
name = "ducts"
members = ["IfcDuct*"]

[[check]]
a = "ducts"
b = "IfcBeam"

[[check]]
a = "ducts"
b = "ifcwall"
''')
    found = pipeline.scan([], pipeline.Options(jobs=1), manifest=manifest)
    label = {b.name: f"{b.ifc_class} '{b.name}' {b.guid}" for b in boxes + extra}
    got = {frozenset((p.a, p.b)) for p in found.pairs}
    # the duct crosses the beam, the partition and the wall of IfcWall's subtype
    # IfcWallStandardCase ("ifcwall": IFC's class names ignore case); nothing else is checked
    # (the doors in the walls, the walls on the slab)
    duct = label["Duct"]
    assert got == {frozenset((duct, label["Beam"])), frozenset((duct, label["Partition"])),
                   frozenset((duct, label["Old wall"]))}


def test_a_failing_element_is_an_error_line_and_the_rest_is_checked(tmp_path):
    path, boxes = _house(tmp_path)
    model = ifcopenshell.open(str(path))
    partition = next(b for b in boxes if b.name == "Partition")
    solid = next(i for i in model.traverse(model.by_guid(partition.guid).Representation)
                 if i.is_a("IfcExtrudedAreaSolid"))
    solid.Depth = 0.0
    model.write(str(path))
    result = CliRunner().invoke(main, ["scan", str(path), "--format", "json", "-o", str(tmp_path / "r.json"),
                                       "--show-allowed"], catch_exceptions=False)
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.startswith("gjk: error:")]
    assert len(lines) == 1 and str(path) in lines[0] and f"IfcWall 'Partition' {partition.guid}" in lines[0]
    doc = json.loads((tmp_path / "r.json").read_text())
    assert len(doc["objects"]) == 4  # floor, south wall, front door, lost door
    assert any(p["reason"] == "hosted" for p in doc["pairs"])
    assert doc["objects"][0]["ifc_class"] == "IfcSlab" and doc["objects"][0]["global_id"]


def test_a_stair_through_a_design_context_slab_is_found_and_the_bodiless_are_a_note(tmp_path):
    """ArchiCAD 11's case: the slab's body sits in a 'Design' context, the stair's in the 'Model'
    one; the stair 150 mm through the slab is a collision 150 mm deep (the boxes' closed form), and
    the beam with only a 2D axis is named in the run's notes, which fails nothing."""
    boxes = [Box("IfcSlab", "Slab", (0, 0, 3000), (5000, 4000, 250), context="Design"),
             Box("IfcStair", "Stair", (1000, 1000, 0), (1000, 3000, 3150)),
             Box("IfcBeam", "Axis only", (0, 1000, 2500), (4000, 200, 300), body=False)]
    path = write_model(tmp_path / "archicad.ifc", boxes, schema="IFC2X3")
    result = CliRunner().invoke(main, ["scan", str(path), "--format", "json", "-o", str(tmp_path / "r.json"),
                                       "--tolerance", "2mm"], catch_exceptions=False)
    doc = json.loads((tmp_path / "r.json").read_text())
    assert result.exit_code == 1, result.output  # the collision fails the run, the note does not
    assert "gjk: error" not in result.output
    (pair,) = doc["pairs"]
    assert pair["status"] == "collision"
    assert pair["depth"] == pytest.approx(box_depth(boxes[0], boxes[1]), rel=1e-6) == pytest.approx(150.0)
    (note,) = [n for n in doc["notes"] if "left out" in n]
    assert note == (f"{path}: left out 1 physical element with no 3D body IfcOpenShell meshes: "
                    f"IfcBeam 1 ({boxes[2].guid}); they have 'Axis' in a 'Plan' context")


@pytest.mark.parametrize("tolerance", ["2mm", "0.002m"])
def test_a_refused_model_is_its_own_error_and_the_length_is_no_second_one(tmp_path, tolerance):
    """With --tolerance 2mm on a model gjk refuses (no element with a 3D body, as ArchiCAD 9's),
    the file's own refusal is the one error line: nothing loaded, the length is in its own unit
    (it was a second line saying the inputs state no unit, though the model states mm)."""
    path = write_model(tmp_path / "axes.ifc", [Box("IfcWall", "W", (0, 0, 0), (10, 1, 3), body=False)])
    result = CliRunner().invoke(main, ["scan", str(path), "--tolerance", tolerance], catch_exceptions=False)
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.startswith("gjk: error:")]
    assert len(lines) == 1
    assert lines[0].startswith(f"gjk: error: {path}: none of its 1 physical elements has a 3D body")
    assert "0 objects, 0 pairs checked" in result.output


def test_the_tutorial_house_as_fcl_says():
    """IfcOpenShell's tutorial house: every listed pair's verdict against python-fcl on the same
    triangles; its doors are hosted by their walls."""
    parts = {p.name: p for p in read_objects(OPENINGS)}
    found = pipeline.scan([OPENINGS], pipeline.Options(all_pairs=True, jobs=1))
    assert not found.errors and found.pairs
    hosted = 0
    for pair in found.pairs:
        collide, distance = _fcl_answer(parts[pair.a], parts[pair.b])
        if pair.status is Status.COLLISION and pair.result.depth > 1e-4:
            assert collide
        elif pair.status is Status.CLEAR and pair.conservative:  # parted by the broad phase:
            assert not collide and 0 < pair.result.distance <= distance + 1e-9  # the hulls' lower bound
        elif pair.status is Status.CLEAR:
            assert not collide and pair.result.distance == pytest.approx(distance, rel=1e-6, abs=1e-9)
        elif pair.status is Status.TOUCHING:
            assert distance <= 1e-6
        a, b = found.object(pair.a), found.object(pair.b)
        if pair.reason == "hosted":
            hosted += 1
            assert {a.ifc_class, b.ifc_class} & {"IfcDoor", "IfcWindow"}
    assert hosted >= 2


def test_models_in_millimetres_and_metres_scan_together(tmp_path):
    """An architect's model in millimetres and a services model in metres: the second is converted
    into the first's unit (gjkcli.units), and the verdicts are those of the boxes in millimetres."""
    beams = [Box("IfcBeam", "B1", (1000, 0, 2500), (200, 3000, 400)),
             Box("IfcBeam", "B2", (4000, 0, 2500), (200, 3000, 400))]
    ducts = [Box("IfcDuctSegment", "D1", (0.5, 1.0, 2.6), (2.0, 0.3, 0.3)),  # through B1
             Box("IfcDuctSegment", "D2", (2.5, 2.0, 2.6), (1.45, 0.3, 0.3))]  # 50 mm short of B2
    a = write_model(tmp_path / "structure.ifc", beams, unit="MILLIMETERS")
    b = write_model(tmp_path / "mep.ifc", ducts, unit="METERS")
    found = pipeline.scan([a, b], pipeline.Options(jobs=1, clearance=100.0))
    assert found.units == "mm"
    in_mm = [dataclasses.replace(d, origin=tuple(1000 * x for x in d.origin), size=tuple(1000 * x for x in d.size))
             for d in ducts]
    pairs = {frozenset((p.a.split(":", 1)[1], p.b.split(":", 1)[1])): p for p in found.pairs}
    label = {x.name: f"{x.ifc_class} '{x.name}' {x.guid}" for x in beams + ducts}
    through = pairs[frozenset((label["D1"], label["B1"]))]
    assert through.status is Status.COLLISION
    assert through.result.depth == pytest.approx(box_depth(in_mm[0], beams[0]), rel=1e-6)
    short = pairs[frozenset((label["D2"], label["B2"]))]
    assert short.status is Status.CLEARANCE
    assert short.result.distance == pytest.approx(box_distance(in_mm[1], beams[1]), rel=1e-9)
    assert box_distance(in_mm[1], beams[1]) == pytest.approx(50.0)


def test_an_ifczip_scans_as_its_ifc_and_an_ifcxml_is_one_error_line(tmp_path):
    import zipfile

    path, boxes = _house(tmp_path)
    packed = tmp_path / "house.ifczip"
    with zipfile.ZipFile(packed, "w", zipfile.ZIP_DEFLATED) as z:
        z.write(path, path.name)
    xml = tmp_path / "other.ifcxml"
    xml.write_text("<?xml version='1.0'?><ifcXML/>")
    plain = pipeline.scan([path], pipeline.Options(jobs=1))
    assert plain.pairs
    result = CliRunner().invoke(main, ["scan", str(packed), str(xml), "--format", "json", "--jobs", "1",
                                       "-o", str(tmp_path / "r.json")], catch_exceptions=False)
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.startswith("gjk: error:")]
    assert len(lines) == 1 and str(xml) in lines[0] and "ifcXML" in lines[0]
    assert "Traceback" not in result.output
    doc = json.loads((tmp_path / "r.json").read_text())
    assert sorted((p["a"].split(":", 1)[-1], p["b"].split(":", 1)[-1], p["status"]) for p in doc["pairs"]) == \
        sorted((p.a, p.b, p.status.value) for p in plain.listed)  # the JSON lists allowed pairs with --show-allowed


def test_convexity_reasons_are_measured_when_a_report_shows_them(monkeypatch):
    """A scan's object records are made when read: the table (which lists no object) measures no
    part's convexity, the JSON document gives every listed part's reason, the same words as
    measuring it at once (`part_verdicts`), each part measured once (`part_reasons`, which
    measures all the listed parts together)."""
    from gjkcli.mesh import convexity
    from gjkcli.report.jsonout import document
    from gjkcli.report.scan import render_scan

    path = Path(__file__).resolve().parents[1] / "data" / "third_party" / "project0-openings.ifc"
    measured = []
    real = convexity.part_reasons
    monkeypatch.setattr(convexity, "part_reasons",
                        lambda gaps, which, *a: measured.extend(which) or real(gaps, which, *a))
    found = pipeline.scan([path], pipeline.Options(jobs=1))
    render_scan(found)
    assert measured == [], "the run or the table measured a part nobody asked about"
    objects = document(found)["objects"]
    walled = [o for o in objects if o["convex"] is False and o["hull_gap"] is None]
    parts = {p.name: p for p in read_objects(path)}
    # objects placing one representation map share its mesh, measured once for them all
    meshes = {parts[o["name"]].instance.key if parts[o["name"]].instance is not None else o["name"]
              for o in walled}
    assert walled and len(measured) == len(set(measured)) == len(meshes)  # the walls with openings, once each
    document(found)
    assert len(measured) == len(meshes)  # kept, not measured again
    for o in walled:
        part = parts[o["name"]]
        _, why = convexity.part_verdicts([np.inf], [0.0], [0], [part.vertices], [part.faces])
        assert o["convexity"] == why[0] and o["convexity"] != convexity.FAST_REASON
