"""Tests of gjkcli.mesh.ifc and the IFC hook of gjkcli.mesh.load: IFC models to named parts in
world coordinates, in the file's unit.

The models are made with IfcOpenShell's authoring API (tests/ifc_models.py): boxes of known size,
place and turn, whose eight corners are the oracle of every vertex the reader returns. The real
model (tests/data/third_party/) is checked against what its own text says: its classes, names
and GlobalIds, read by IfcOpenShell's parser, not by the code under test.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

ifcopenshell = pytest.importorskip("ifcopenshell")

from gjkcli.errors import InputError  # noqa: E402
from gjkcli.mesh import ifc  # noqa: E402
from gjkcli.mesh.load import expand_paths, load_objects, load_part, read_objects  # noqa: E402
from ifc_models import Box, cut_away_model, write_model  # noqa: E402

THIRD_PARTY = Path(__file__).resolve().parents[1] / "data" / "third_party"
OPENINGS = THIRD_PARTY / "project0-openings.ifc"


def _corners_match(vertices: np.ndarray, box: Box, scale: float) -> None:
    """Every vertex is one of the box's corners and every corner is a vertex (to 1e-9 of the size)."""
    corners = box.corners()
    tol = 1e-9 * scale
    d = np.linalg.norm(vertices[:, None, :] - corners[None, :, :], axis=2)
    assert d.min(axis=1).max() <= tol, "a vertex is not a corner of the box"
    assert d.min(axis=0).max() <= tol, "a corner of the box has no vertex"


@pytest.mark.parametrize("schema", ["IFC2X3", "IFC4"])
@pytest.mark.parametrize("unit, short, size", [("MILLIMETERS", "mm", 1000.0), ("METERS", "m", 1.0)])
def test_elements_in_world_coordinates_and_file_units(tmp_path, schema, unit, short, size):
    boxes = [Box("IfcWall", "Wall A", (0, 0, 0), (5 * size, 0.2 * size, 3 * size)),
             Box("IfcBeam", "Beam", (1.5 * size, -2 * size, 2.5 * size), (0.3 * size, 4 * size, 0.4 * size),
                 turn=30.0),
             Box("IfcColumn", None, (-3 * size, 7 * size, 0.25 * size), (0.4 * size, 0.4 * size, 2 * size),
                 turn=-75.0)]
    path = write_model(tmp_path / "m.ifc", boxes, schema=schema, unit=unit)
    parts = read_objects(path)
    assert [p.name for p in parts] == [f"IfcWall 'Wall A' {boxes[0].guid}", f"IfcBeam 'Beam' {boxes[1].guid}",
                                       f"IfcColumn {boxes[2].guid}"]
    for part, box in zip(parts, boxes):
        assert part.units == short
        _corners_match(part.vertices, box, size * 10)
        assert part.element.ifc_class == box.ifc_class
        assert part.element.global_id == box.guid
        assert part.element.classes[0] == box.ifc_class and "IfcElement" in part.element.classes
    # the slow path computes topology: each box is one closed body
    for part in load_objects(path):
        assert part.watertight and part.bodies == 1 and part.units == short


def test_openings_and_spaces_are_not_objects_and_a_door_knows_its_wall(tmp_path):
    boxes = [Box("IfcWall", "W", (0, 0, 0), (5000, 200, 3000)),
             Box("IfcOpeningElement", "O", (1000, -10, 0), (900, 220, 2100), voids="W"),
             Box("IfcDoor", "D", (1000, 0, 0), (900, 200, 2100), fills="O"),
             Box("IfcSpace", "Room", (0, 200, 0), (5000, 4000, 3000))]
    path = write_model(tmp_path / "m.ifc", boxes)
    parts = read_objects(path)
    assert [p.element.ifc_class for p in parts] == ["IfcWall", "IfcDoor"]
    wall, door = parts
    assert door.element.hosts == (boxes[0].guid,)
    assert wall.element.hosts == ()
    # the opening is cut out of the wall: no wall vertex lies strictly inside the door's box
    inside = np.all((wall.vertices > [1000 + 1e-6, -1, 1e-6]) & (wall.vertices < [1900 - 1e-6, 201, 2100 - 1e-6]),
                    axis=1)
    assert not inside.any()
    # the hole shows in the wall's faces: more than a box's 12 triangles
    assert len(wall.faces) > 12


def test_a_failing_element_is_one_line_and_the_others_are_read(tmp_path):
    boxes = [Box("IfcWall", "W", (0, 0, 0), (5000, 200, 3000)),
             Box("IfcSlab", "Broken slab", (0, 0, 4000), (1000, 200, 300)),
             Box("IfcBeam", "B", (0, 0, 6000), (1000, 200, 300))]
    path = write_model(tmp_path / "m.ifc", boxes)
    model = ifcopenshell.open(str(path))
    slab = model.by_guid(boxes[1].guid)
    solid = next(i for i in model.traverse(slab.Representation) if i.is_a("IfcExtrudedAreaSolid"))
    solid.Depth = 0.0  # no solid can be extruded by nothing
    model.write(str(path))
    skipped: list = []
    parts = read_objects(path, skipped=skipped)
    assert [p.element.global_id for p in parts] == [boxes[0].guid, boxes[2].guid]
    assert len(skipped) == 1
    line = skipped[0]
    assert "\n" not in line and f"IfcSlab 'Broken slab' {boxes[1].guid}" in line
    assert "IfcExtrudedAreaSolid" in line  # IfcOpenShell's reason, tied to the element
    # without a list to take the lines, the failure is the file's error
    with pytest.raises(InputError, match="Broken slab"):
        load_objects(path)


def _on_a_grid(path: Path, guid: str) -> None:
    """The element `guid` placed on a grid's intersection (IfcGridPlacement), which IfcOpenShell
    0.9 fails to convert (buildingSMART's IFC4.3 grid-placement sample places its columns so)."""
    model = ifcopenshell.open(str(path))
    f = model

    def axis(tag, end):
        return f.createIfcGridAxis(tag, f.createIfcPolyline([f.createIfcCartesianPoint((0.0, 0.0)),
                                                             f.createIfcCartesianPoint(end)]), True)

    u, v = axis("A", (0.0, 5000.0)), axis("1", (5000.0, 0.0))
    origin = f.createIfcLocalPlacement(None, f.createIfcAxis2Placement3D(f.createIfcCartesianPoint((0.0, 0.0, 0.0)),
                                                                        None, None))
    f.createIfcGrid(ifcopenshell.guid.new(), None, "grid", None, None, origin, None, [u], [v], None)
    at = f.createIfcVirtualGridIntersection([u, v], [0.0, 0.0, 0.0])
    model.by_guid(guid).ObjectPlacement = f.createIfcGridPlacement(at, None)
    model.write(str(path))


def test_an_element_that_ends_the_iterator_s_pass_leaves_the_others_read(tmp_path):
    """An element IfcOpenShell fails to convert first in its order ended its iterator's pass: no
    element of the file was built, and the file was refused ("none of its 3 physical elements
    could be built"). The elements left are asked again without it: the beams are read (and
    their collision found), the column is one line naming IfcOpenShell's reason."""
    import ifcopenshell.guid  # noqa: F401 - _on_a_grid's GlobalIds

    boxes = [Box("IfcColumn", "Column", (-100, -100, 0), (200, 200, 3000)),
             Box("IfcBeam", "B1", (0, 0, 3000), (4000, 200, 300)),
             Box("IfcBeam", "B2", (0, 100, 3000), (4000, 200, 300))]
    path = write_model(tmp_path / "m.ifc", boxes)
    _on_a_grid(path, boxes[0].guid)
    skipped: list = []
    parts = read_objects(path, skipped=skipped)
    assert [p.element.global_id for p in parts] == [boxes[1].guid, boxes[2].guid]
    assert len(skipped) == 1 and f"IfcColumn 'Column' {boxes[0].guid}" in skipped[0]
    assert "IfcOpenShell: " in skipped[0] and "\n" not in skipped[0]


def test_an_element_the_log_names_by_its_globalid_alone_is_not_asked_again(tmp_path):
    """IfcOpenShell names some failures by the element's GlobalId in braces, with no instance
    after the message (a door whose Name is a derived value, as in xBim's House.ifc, which
    ended the pass for 88 of its 134 elements): the door is that message's element, its line
    says IfcOpenShell's reason, and the others are read."""
    boxes = [Box("IfcDoor", "D", (0, 0, 0), (900, 200, 2100)),
             Box("IfcWall", "W1", (0, 0, 0), (5000, 200, 3000)),
             Box("IfcWall", "W2", (0, 1000, 0), (5000, 200, 3000))]
    path = write_model(tmp_path / "m.ifc", boxes)
    text = path.read_text()
    door = f"IFCDOOR('{boxes[0].guid}',"
    at = text.index(door) + len(door)
    owner, _, rest = text[at:].partition(",")
    path.write_text(text[:at] + owner + ",*," + rest.split(",", 1)[1])  # Name: derived
    skipped: list = []
    parts = read_objects(path, skipped=skipped)
    assert [p.element.global_id for p in parts] == [boxes[1].guid, boxes[2].guid]
    [line] = skipped
    assert boxes[0].guid in line and "IfcOpenShell: Requested type" in line


def test_the_log_names_an_element_by_an_instance_or_its_globalid():
    log = ifc._Log("[error] [GEO060] [2026-12-05 00:57:48] {1rU5_ytFj2w9rOKxGO8Gln} Requested type <string> "
                   "does not match actual type <derived> at index 2\n"
                   "[error] [GEO326] [2026-12-05 00:56:06] Failed to convert:\n#351=IfcGridPlacement(#280,#348,$)")
    assert [(m, first, ids, of) for m, first, ids, of in log.errors] == [
        ("Requested type <string> does not match actual type <derived> at index 2", "", set(), "1rU5_ytFj2w9rOKxGO8Gln"),
        ("Failed to convert", "#351=IfcGridPlacement", {351}, None)]


def test_files_that_are_not_ifc_models(tmp_path):
    bad = tmp_path / "bad.ifc"
    bad.write_text("ISO-10303-21;\nHEADER;\nthis is not STEP\n")
    with pytest.raises(InputError) as err:
        read_objects(bad)
    assert "bad.ifc" in str(err.value) and "\n" not in err.value.message
    empty_model = write_model(tmp_path / "empty.ifc", [Box("IfcSpace", "Room", (0, 0, 0), (1, 1, 1))])
    with pytest.raises(InputError, match="no physical element"):
        read_objects(empty_model)


@pytest.mark.parametrize("context_type", ["MODEL", "model", "Model"])
def test_context_labels_are_read_in_any_case(tmp_path, context_type):
    """AutoCAD Architecture labels its representation context 'MODEL': the bodies are read as
    they are in a 'Model' context, and the boxes' corners are the oracle of their vertices."""
    boxes = [Box("IfcWall", "W", (0, 0, 0), (5000, 200, 3000)),
             Box("IfcBeam", "B", (1000, -500, 2500), (300, 1200, 400))]
    path = write_model(tmp_path / "acad.ifc", boxes, context_type=context_type)
    model = ifcopenshell.open(str(path))
    assert {c.ContextType for c in model.by_type("IfcGeometricRepresentationContext")} == {context_type}
    parts = read_objects(path)
    assert [p.element.global_id for p in parts] == [b.guid for b in boxes]
    for part, box in zip(parts, boxes):
        _corners_match(part.vertices, box, 5000.0)


@pytest.mark.parametrize("schema", ["IFC2X3", "IFC4"])
def test_bodies_in_design_contexts_and_sub_contexts_are_read_and_the_bodiless_are_named(tmp_path, schema):
    """As ArchiCAD exports them: walls, slabs and columns whose 'Body' sits in a context of type
    'Design' (the top context itself, or a 'Body' sub-context of it) beside a 'Model' context.
    They are read as IfcOpenShell's iterator meshes them (their corners the oracle of every
    vertex); an element with only a 2D axis, and one with no representation, are left out and
    named in one Note: count per class, GlobalIds, what they have; an element made of parts
    leaves nothing out."""
    from gjkcli.errors import Note

    boxes = [Box("IfcWall", "Model wall", (0, 0, 0), (5000, 200, 3000)),
             Box("IfcSlab", "Design slab", (0, 0, 3000), (5000, 4000, 250), context="Design"),
             Box("IfcColumn", "Design sub column", (2000, 2000, 0), (300, 300, 3000), context="Design/Body",
                 turn=30.0),
             Box("IfcBeam", "Axis only", (0, 1000, 2500), (4000, 200, 300), body=False),
             Box("IfcBuildingElementProxy", "Nothing", (0, 0, 0), (1, 1, 1), body=None),
             Box("IfcBeam", "Axis only 2", (0, 2000, 2500), (4000, 200, 300), body=False)]
    path = write_model(tmp_path / "archicad.ifc", boxes, schema=schema)
    model = ifcopenshell.open(str(path))
    assert {c.ContextType for c in model.by_type("IfcGeometricRepresentationContext")} == {"Model", "Design", "Plan"}
    # an assembly of the wall, with no representation of its own (as Tekla writes them), and a
    # wall with only an axis made of a part with a body (as ArchiCAD writes layered walls):
    # their parts are read, so nothing is left out by them
    import ifcopenshell.api as api

    assembly = api.run("root.create_entity", model, ifc_class="IfcElementAssembly", name="Assembly")
    api.run("aggregate.assign_object", model, relating_object=assembly, products=[model.by_guid(boxes[0].guid)])
    layered = model.by_guid(boxes[5].guid)  # 'Axis only 2'
    part = api.run("root.create_entity", model, ifc_class="IfcBuildingElementPart", name="Layer")
    api.run("aggregate.assign_object", model, relating_object=layered, products=[part])
    body = next(c for c in model.by_type("IfcGeometricRepresentationSubContext")
                if c.ContextIdentifier == "Body" and c.ContextType == "Model")
    api.run("geometry.assign_representation", model, product=part, representation=api.run(
        "geometry.add_wall_representation", model, context=body, length=4.0, thickness=0.2, height=0.3))
    model.write(str(path))
    skipped: list = []
    parts = read_objects(path, skipped=skipped)
    assert [p.element.global_id for p in parts] == [b.guid for b in boxes[:3]] + [part.GlobalId]
    for got, box in zip(parts, boxes[:3]):
        _corners_match(got.vertices, box, 5000.0)
    (note,) = skipped
    assert isinstance(note, Note) and note.file == str(path)
    assert note.message.startswith("left out 2 physical elements with no 3D body IfcOpenShell meshes: ")
    assert f"IfcBeam 1 ({boxes[3].guid})" in note.message and boxes[5].guid not in note.message
    assert f"IfcBuildingElementProxy 1 ({boxes[4].guid})" in note.message
    assert "'Axis' in a 'Plan' context" in note.message and "\n" not in note.message


def test_a_model_whose_only_context_is_not_model_is_read_as_the_iterator_reads_it(tmp_path):
    """A file with no context of a 3D model type ('Plan' everywhere): IfcOpenShell's iterator then
    reads every context, so the bodies are read."""
    box = Box("IfcWall", "W", (0, 0, 0), (10, 1, 3))
    path = write_model(tmp_path / "plan.ifc", [box])
    model = ifcopenshell.open(str(path))
    for context in model.by_type("IfcGeometricRepresentationContext"):
        context.ContextType = "Plan"
    model.write(str(path))
    (part,) = read_objects(path)
    _corners_match(part.vertices, box, 10.0)


def _iterator_meshes(path: Path) -> set:
    """The GlobalIds of the physical elements IfcOpenShell's geometry iterator meshes, with its
    default contexts (the judge of which contexts gjk reads)."""
    import ifcopenshell.geom as geom

    model = ifcopenshell.open(str(path))
    elements = [e for e in model.by_type("IfcElement") if not e.is_a("IfcFeatureElement") and e.Representation]
    settings = geom.settings()
    settings.set("use-world-coords", True)
    iterator = geom.iterator(settings, model, 1, include=elements, geometry_library=ifc.GEOMETRY_LIBRARY)
    got = set()
    if elements and iterator.initialize():
        while True:
            shape = iterator.get()
            if len(shape.geometry.faces):
                got.add(shape.guid)
            if not iterator.next():
                break
    return got


def _bodies_moved_to(path: Path, context_type: str, model_holds: bool) -> None:
    """Every element's body moved to a new top context of `context_type` (3D), the 'Model'
    context and its 'Body' sub-context left as they are: empty, or (`model_holds`) holding one
    point-cloud representation that no element has."""
    model = ifcopenshell.open(str(path))
    (model_context,) = [c for c in model.by_type("IfcGeometricRepresentationContext")
                        if not c.is_a("IfcGeometricRepresentationSubContext")]
    other = model.create_entity("IfcGeometricRepresentationContext", None, context_type, 3, 1e-5,
                                model_context.WorldCoordinateSystem, None)
    for rep in model.by_type("IfcShapeRepresentation"):
        rep.ContextOfItems = other
    if model_holds:
        point = model.create_entity("IfcCartesianPoint", (0.0, 0.0, 0.0))
        model.create_entity("IfcShapeRepresentation", model_context, "Body", "PointCloud", [point])
    model.write(str(path))


@pytest.mark.parametrize("context_type, model_holds, read", [("Plan", False, True), ("Plan", True, False),
                                                             ("Detail View", True, True)])
def test_the_contexts_read_are_the_ones_ifcopenshell_meshes(tmp_path, context_type, model_holds, read):
    """ICPrefab's precast models (Schependomlaan's GEELEN floors) put their extruded bodies in a
    3D context of type 'Plan' beside a 'Model' context that holds nothing: IfcOpenShell's iterator
    then reads every context, and so does gjk, saying so in a note; once the 'Model' context holds
    any representation, the 'Plan' bodies are not read (left out, named in a note: not failed).
    A 'Detail View' context (DDS-CAD's) is one of a 3D model type. The judge is the iterator
    itself: gjk's parts are the elements it meshes, their corners the boxes'."""
    from gjkcli.errors import Note

    boxes = [Box("IfcSlab", "S", (0, 0, 0), (4000, 1200, 200)), Box("IfcColumn", "C", (500, 500, 200), (300, 300, 2800))]
    path = write_model(tmp_path / "precast.ifc", boxes, schema="IFC2X3")
    _bodies_moved_to(path, context_type, model_holds)
    meshed = _iterator_meshes(path)
    assert meshed == ({b.guid for b in boxes} if read else set())
    if not read:
        with pytest.raises(InputError, match=f"none of its 2 physical elements has a 3D body.*'{context_type}' context"):
            read_objects(path)
        return
    skipped: list = []
    parts = read_objects(path, skipped=skipped)
    assert {p.element.global_id for p in parts} == meshed
    for part, box in zip(parts, boxes):
        _corners_match(part.vertices, box, 4000.0)
    notes = [n.message for n in skipped if isinstance(n, Note)]
    if context_type == "Plan":
        assert notes == ["its 'Model' context holds no representation: the bodies of its other contexts "
                         "(its 'Plan' context) are read, as IfcOpenShell reads them"]
    else:
        assert notes == []


def test_a_precast_model_with_its_bodies_in_a_plan_context_is_read():
    """GEELEN-Dakvloer.ifc, ICPrefab's IFC2X3 export of a precast roof floor (Schependomlaan's
    coordination set): every body sits in a 3D context of type 'Plan', its 'Model' context is
    empty. It was refused whole ("none of its 150 physical elements has a 3D body"); now its
    parts are the 136 elements IfcOpenShell's iterator meshes, the note says which contexts were
    read, and its one marker element ('_IFCZERO', a 'GeometricSet' of curves) is left out and
    named, not failed."""
    from gjkcli.errors import Note

    path = THIRD_PARTY / "schependomlaan" / "GEELEN-Dakvloer.ifc"
    skipped: list = []
    parts = read_objects(path, skipped=skipped)
    meshed = _iterator_meshes(path)
    assert len(parts) == 136 and {p.element.global_id for p in parts} == meshed
    model = ifcopenshell.open(str(path))
    (marker,) = [e for e in model.by_type("IfcElement") if not e.is_a("IfcFeatureElement")
                 and e.Representation and e.GlobalId not in meshed]
    assert marker.Name == "_IFCZERO"
    assert all(isinstance(n, Note) for n in skipped)
    assert [n.message for n in skipped] == [
        "its 'Model' context holds no representation: the bodies of its other contexts (its 'Plan' context) "
        "are read, as IfcOpenShell reads them",
        f"left out 1 physical element with no 3D body IfcOpenShell meshes: IfcBuildingElementProxy 1 "
        f"({marker.GlobalId}); they have 'Body' in a 'Plan' context"]


def test_an_element_its_openings_cut_away_whole_is_a_note_not_a_failure(tmp_path):
    """A wall its opening voids whole has nothing left to check: a note per element, in the
    file's order, and no failure (it was "its body has no triangles (curves or points only)",
    an error line each, exit 2). The judge: IfcOpenShell meshes it with its openings to no
    triangles and without them to its box."""
    import ifcopenshell.geom as geom

    from gjkcli.errors import Note

    path, boxes = cut_away_model(tmp_path / "frames.ifc", frames=2)
    model = ifcopenshell.open(str(path))
    for frame in (boxes[0], boxes[3]):
        element = model.by_guid(frame.guid)
        for uncut, faces in ((False, 0), (True, 12)):
            settings = geom.settings()
            settings.set("disable-opening-subtractions", uncut)
            assert len(geom.create_shape(settings, element).geometry.faces) // 3 == faces
    skipped: list = []
    parts = read_objects(path, skipped=skipped)
    assert [p.element.global_id for p in parts] == [boxes[2].guid, boxes[5].guid, boxes[6].guid]
    assert skipped == [Note(file=str(path), message=f"element IfcWall 'Frame {k}' {boxes[3 * k].guid}: its openings "
                                                    f"cut its body away whole; nothing of it is left to check")
                       for k in range(2)]
    assert [n.order for n in skipped] == sorted(n.order for n in skipped)


def test_elements_without_a_3d_body_are_named_in_the_error(tmp_path):
    """Elements whose only representation is a 2D axis: the error says what they have, not that
    openings and spaces are not objects."""
    path = write_model(tmp_path / "plan.ifc", [Box("IfcWall", "W", (0, 0, 0), (10, 1, 3), body=False)])
    with pytest.raises(InputError) as err:
        read_objects(path)
    message = err.value.message
    assert "none of its 1 physical elements has a 3D body" in message
    assert "'Axis' in a 'Plan' context" in message and "openings" not in message


def test_an_ifczip_reads_as_its_ifc(tmp_path):
    """An ifcZIP (any case of the suffix) gives the parts of the .ifc it holds, array for array;
    an ifcZIP that holds no single .ifc, and an ifcXML, are one line naming the file."""
    import zipfile

    boxes = [Box("IfcWall", "W", (0, 0, 0), (5000, 200, 3000)),
             Box("IfcBeam", "B", (1000, -500, 2500), (300, 1200, 400), turn=20.0)]
    path = write_model(tmp_path / "house.ifc", boxes)
    packed = tmp_path / "house.ifcZIP"
    with zipfile.ZipFile(packed, "w", zipfile.ZIP_DEFLATED) as z:
        z.write(path, "export/house.ifc")
    plain, zipped = read_objects(path), read_objects(packed)
    assert [p.name for p in zipped] == [p.name for p in plain]
    for a, b in zip(plain, zipped):
        assert np.array_equal(a.vertices, b.vertices) and np.array_equal(a.faces, b.faces)
        assert b.units == "mm" and b.element == a.element
    assert expand_paths(tmp_path) == [path, packed]

    two = tmp_path / "two.ifczip"
    with zipfile.ZipFile(two, "w") as z:
        z.write(path, "a.ifc")
        z.write(path, "b.ifc")
    with pytest.raises(InputError, match="holds 2 .ifc files") as err:
        read_objects(two)
    assert str(two) in str(err.value)
    broken = tmp_path / "broken.ifczip"
    broken.write_bytes(b"PK\x03\x04 not a zip")
    with pytest.raises(InputError) as err:
        read_objects(broken)
    assert "broken.ifczip" in str(err.value) and "\n" not in err.value.message
    xml = tmp_path / "house.ifcXML"
    xml.write_text("<?xml version='1.0'?><ifcXML/>")
    with pytest.raises(InputError, match="ifcXML, which IfcOpenShell"):
        read_objects(xml)


def test_directories_take_ifc_files_and_prefixes_apply(tmp_path):
    write_model(tmp_path / "a.ifc", [Box("IfcWall", "W", (0, 0, 0), (10, 1, 3))])
    assert expand_paths(tmp_path) == [tmp_path / "a.ifc"]
    (part,) = read_objects(tmp_path / "a.ifc", prefix="a.ifc")
    assert part.name.startswith("a.ifc:IfcWall 'W' ")
    whole = load_part(tmp_path / "a.ifc")
    assert whole.name == "a.ifc" and whole.units == "mm"


def test_a_real_model_reads_as_its_text_says():
    """IfcOpenShell's tutorial house (IFC4, metres): every wall and door an object named by its
    class, Name and GlobalId; its openings are not objects; each door is hosted by the wall its
    opening voids."""
    model = ifcopenshell.open(str(OPENINGS))
    skipped: list = []
    parts = read_objects(OPENINGS, skipped=skipped)
    assert skipped == []
    expected = {e.GlobalId: e for e in model.by_type("IfcElement")
                if not e.is_a("IfcFeatureElement") and e.Representation is not None}
    assert {p.element.global_id for p in parts} == set(expected)
    for p in parts:
        e = expected[p.element.global_id]
        assert p.name == f"{e.is_a()} '{e.Name}' {e.GlobalId}" if e.Name else f"{e.is_a()} {e.GlobalId}"
        assert p.units == "m"
    assert not any(p.element.ifc_class == "IfcOpeningElement" for p in parts)
    walls = [p.element.ifc_class for p in parts if p.element.ifc_class == "IfcWall"]
    assert len(walls) > 1 and all(w is walls[0] for w in walls)  # a class one string, not one a wall
    for door in model.by_type("IfcDoor"):
        hosts = {v.RelatingBuildingElement.GlobalId for f in door.FillsVoids
                 for v in f.RelatingOpeningElement.VoidsElements}
        (part,) = [p for p in parts if p.element.global_id == door.GlobalId]
        assert set(part.element.hosts) == hosts and hosts


def test_ifcopenshell_reads_in_a_child_and_never_lives_in_the_checking_process(tmp_path):
    """The reader forks: the parts come back, IfcOpenShell is never imported by the process that
    checks them (its modules, the parsed file and the kernels' caches stay in the child)."""
    import subprocess
    import sys

    code = ("import sys\nfrom gjkcli.mesh.ifc import read\n"
            f"m = read({str(OPENINGS)!r})\n"
            "print(len(m.parts), m.units, 'ifcopenshell' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    expected = len([e for e in ifcopenshell.open(str(OPENINGS)).by_type("IfcElement")
                    if not e.is_a("IfcFeatureElement") and e.Representation is not None])
    assert out.stdout.split() == [str(expected), "m", "False"]


def test_a_reader_that_dies_is_one_input_error(tmp_path):
    """IfcOpenShell crashing in the child (here: the child exits at once) is an InputError naming
    the file, not a hang or a traceback."""
    import subprocess
    import sys

    code = ("import os\nfrom gjkcli.errors import InputError\nfrom gjkcli.mesh import ifc\n"
            "ifc._read = lambda *_, **__: os._exit(7)\n"
            f"try:\n    ifc.read({str(OPENINGS)!r})\nexcept InputError as e:\n    print(e)")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == (f"{OPENINGS}: IfcOpenShell stopped while reading it (exit code 7); "
                                  f"check the file with another IFC viewer")


_SPLIT = """
import os, sys
import numpy as np
from gjkcli.mesh import ifc

model = sys.argv[1]
one = ifc.read(model)
ifc.SPLIT_FROM_BYTES = 0
plain = ifc._read

def logged(*args, **kwargs):
    with open("shares", "a") as f:
        f.write(f"{os.getpid()} {args[2:4]}\\n")
    assert kwargs.get("interleaved"), "a share of every third element"
    return plain(*args, **kwargs)

ifc._read = logged
with ifc.readers(3):
    three = ifc.read(model)
with open("shares", "a") as f:
    f.write("here\\n")
here = ifc.read_here(model, shares=3)  # parsed once here, shares 1 and 2 meshed by forked copies
for split in (three, here):
    assert [p[0] for p in split.parts] == [p[0] for p in one.parts], "names"
    for a, b in zip(one.parts, split.parts):
        assert np.array_equal(a[1], b[1]) and np.array_equal(a[2], b[2]) and a[3] == b[3], a[0]
    assert (split.units, split.schema, split.failed, split.left_out) == (one.units, one.schema, one.failed, one.left_out)
print(os.getpid(), len(one.parts))
"""


def test_a_large_model_read_by_several_children_is_the_one_reader_s(tmp_path):
    """A model of SPLIT_FROM_BYTES or more, with several jobs, is meshed by one forked reader per
    job, each meshing every third element: the same parts, in the same order, with the
    same arrays, as one reader gives (FZK-Haus, 109 elements, over three readers). So is it read
    ahead (`read_here` in shares: parsed once, shares 1 and 2 meshed by forked copies of the
    process that meshes share 0). In a fresh process, which may fork (this one may have run
    manifold3d)."""
    import subprocess
    import sys

    model = THIRD_PARTY / "AC14-FZK-Haus.ifczip"
    done = subprocess.run([sys.executable, "-c", _SPLIT, str(model)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    parent, parts = map(int, done.stdout.split())
    assert parts == 109
    children, here = (tmp_path / "shares").read_text().split("here\n")
    lines = children.splitlines()
    assert sorted(line.split(" ", 1)[1] for line in lines) == ["(0, 3)", "(1, 3)", "(2, 3)"]
    assert parent not in {int(line.split()[0]) for line in lines}
    ahead = dict(reversed(line.split(" ", 1)) for line in here.splitlines())
    assert sorted(ahead) == ["(0, 3)", "(1, 3)", "(2, 3)"]
    assert int(ahead["(0, 3)"]) == parent and len({ahead["(1, 3)"], ahead["(2, 3)"], str(parent)}) == 3


def test_the_shares_failed_lines_join_in_one_reader_s_order():
    """Lines about elements without triangles come in the file's order, then those about
    elements the kernel could not build in the model's order, whichever share found them."""
    first = ifc._Share(parts=[("a", None, None, None)], failed=[((0, 5), "5 empty"), ((1, 9), "9 not built")],
                       elements=12, units="m", schema="IFC4")
    second = ifc._Share(parts=[], failed=[((0, 3), "3 empty"), ((1, 2), "2 not built")], elements=12,
                        units="m", schema="IFC4")
    model = ifc._joined(Path("x.ifc"), [first, second])
    assert model.failed == ("3 empty", "5 empty", "2 not built", "9 not built")
    with pytest.raises(InputError, match="none of its 12 physical elements could be built \\(first: 3 empty\\)"):
        ifc._joined(Path("x.ifc"), [second, second])
