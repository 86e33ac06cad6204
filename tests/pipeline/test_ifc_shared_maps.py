"""An IFC model whose elements place one representation map (a type's geometry, as Revit exports
its furniture: an IfcMappedItem per element): the map is meshed once and its hull built once,
in its own frame, however many elements place it (`gjkcli.mesh.ifc`, `gjkcli.pipeline.stages.
hulls`), and every verdict is the one of the same model with each element given its own copy of
the geometry (no map).

Models made with IfcOpenShell's authoring API: an L-shaped stool (not convex: its hull is not
the part, so the triangle test decides its contacts) placed by turns about z and translations,
some pairs touching face to face, one overlapping, the others clear.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

ifcopenshell = pytest.importorskip("ifcopenshell")

from gjkcli.engine.results import Status  # noqa: E402
from gjkcli.mesh.load import read_objects  # noqa: E402
from gjkcli.pipeline import prepared  # noqa: E402
from gjkcli.pipeline import run as pipeline  # noqa: E402

# An L-shaped prism in metres: the L (1 x 1 with a 0.5 x 0.5 notch) extruded 0.6 up.
_L = [(0.0, 0.0), (1.0, 0.0), (1.0, 0.5), (0.5, 0.5), (0.5, 1.0), (0.0, 1.0)]
HEIGHT = 0.6

# (name, turn about z in degrees, origin): B touches A along A's face x = 1; C, turned a
# quarter turn, overlaps B by 0.1 along x; D stands clear of A, B and C; E, turned further, sits
# on D's top (touching).
PLACES = [("A", 0.0, (0.0, 0.0, 0.0)),
          ("B", 0.0, (1.0, 0.0, 0.0)),
          ("C", 90.0, (2.9, 0.0, 0.0)),
          ("D", 30.0, (6.0, 3.0, 0.0)),
          ("E", 120.0, (6.2, 3.1, HEIGHT))]


def _stool():
    """(vertices, faces) of the L prism, faces as polygons (the API triangulates nothing)."""
    n = len(_L)
    vertices = [(x, y, 0.0) for x, y in _L] + [(x, y, HEIGHT) for x, y in _L]
    bottom = list(reversed(range(n)))
    top = [n + k for k in range(n)]
    sides = [[k, (k + 1) % n, n + (k + 1) % n, n + k] for k in range(n)]
    return vertices, [bottom, top, *sides]


def _write(path: Path, mapped: bool) -> Path:
    """The five stools as IfcFurniture (IFC4, metres): placing one IfcRepresentationMap of an
    IfcFurnitureType (`mapped`), or each with a mesh of its own."""
    import ifcopenshell.api as api

    f = ifcopenshell.file(schema="IFC4")
    project = api.run("root.create_entity", f, ifc_class="IfcProject", name="shared maps")
    api.run("unit.assign_unit", f, length={"is_metric": True, "raw": "METERS"})
    model = api.run("context.add_context", f, context_type="Model")
    body = api.run("context.add_context", f, context_type="Model", context_identifier="Body",
                   target_view="MODEL_VIEW", parent=model)
    site = api.run("root.create_entity", f, ifc_class="IfcSite", name="Site")
    api.run("aggregate.assign_object", f, relating_object=project, products=[site])
    storey = api.run("root.create_entity", f, ifc_class="IfcBuildingStorey", name="Level 0")
    api.run("aggregate.assign_object", f, relating_object=site, products=[storey])
    vertices, faces = _stool()
    kind = None
    if mapped:
        kind = api.run("root.create_entity", f, ifc_class="IfcFurnitureType", name="Stool")
        rep = api.run("geometry.add_mesh_representation", f, context=body, vertices=[vertices], faces=[faces])
        api.run("geometry.assign_representation", f, product=kind, representation=rep)
    for name, turn, origin in PLACES:
        e = api.run("root.create_entity", f, ifc_class="IfcFurniture", name=name)
        if mapped:
            api.run("type.assign_type", f, related_objects=[e], relating_type=kind)
        else:
            rep = api.run("geometry.add_mesh_representation", f, context=body, vertices=[vertices], faces=[faces])
            api.run("geometry.assign_representation", f, product=e, representation=rep)
        c, s = np.cos(np.radians(turn)), np.sin(np.radians(turn))
        M = np.eye(4)
        M[:2, :2] = [[c, -s], [s, c]]
        M[:3, 3] = origin
        api.run("geometry.edit_object_placement", f, product=e, matrix=M, is_si=False)
        api.run("spatial.assign_container", f, relating_structure=storey, products=[e])
    f.write(str(path))
    return path


def _world_vertices(path: Path) -> dict:
    """{GlobalId: (n, 3) vertices} of IfcOpenShell's iterator in world coordinates (welded)."""
    import ifcopenshell.geom as geom

    f = ifcopenshell.open(str(path))
    settings = geom.settings()
    for name in ("use-world-coords", "convert-back-units", "weld-vertices"):
        settings.set(name, True)
    iterator = geom.iterator(settings, f, 1, include=f.by_type("IfcFurniture"))
    out = {}
    assert iterator.initialize()
    while True:
        shape = iterator.get()
        out[f.by_id(shape.id).GlobalId] = np.frombuffer(shape.geometry.verts_buffer, dtype=np.float64).reshape(-1, 3)
        if not iterator.next():
            break
    return out


def _verdicts(found) -> dict:
    """{(Name a, Name b): status} of a scan's listed pairs, by the elements' Names."""
    def name(label):
        return label.split("'")[1]

    return {tuple(sorted((name(p.a), name(p.b)))): p.status for p in found.pairs}


def test_a_map_placed_by_several_elements_is_prepared_once_with_the_verdicts_of_its_copies(tmp_path, monkeypatch):
    mapped = _write(tmp_path / "mapped.ifc", mapped=True)
    copies = _write(tmp_path / "copies.ifc", mapped=False)
    stool = len(_stool()[0])

    built: list = []  # the meshes prepared (hull, hull gap), by vertex count
    real = prepared.prepare

    def counting(geometries, **kwargs):
        geometries = list(geometries)
        todo = {id(g): g for g in geometries if g.hull is None and g.error is None}
        built.extend(len(g.vertices) for g in todo.values())
        return real(geometries, **kwargs)

    monkeypatch.setattr(prepared, "prepare", counting)

    parts = read_objects(mapped)
    assert len(parts) == len(PLACES)
    assert all(p.instance is not None for p in parts), "the elements place the map: instances of it"
    assert len({p.instance.key for p in parts}) == 1
    for p in parts:  # the map's vertices, placed by the element's pose, are the element's
        local = p.instance.local @ p.instance.pose[:3, :3].T + p.instance.pose[:3, 3]
        assert np.abs(local - p.vertices).max() < 1e-12
    assert all(p.instance is None for p in read_objects(copies))
    # where IfcOpenShell's iterator puts each element in world coordinates
    world = _world_vertices(mapped)
    for p in parts:
        theirs = world[p.element.global_id]
        assert theirs.shape == p.vertices.shape
        ours = p.vertices[np.lexsort(np.round(p.vertices, 9).T[::-1])]
        theirs = theirs[np.lexsort(np.round(theirs, 9).T[::-1])]
        assert np.abs(ours - theirs).max() < 1e-12

    built.clear()
    shared = pipeline.scan([mapped], pipeline.Options(jobs=1))
    assert built.count(stool) == 1, f"the map prepared {built.count(stool)} times, not once"
    built.clear()
    own = pipeline.scan([copies], pipeline.Options(jobs=1))
    assert built.count(stool) == len(PLACES)  # each copy its own hull: the count can tell

    assert not shared.errors and not own.errors
    verdicts = _verdicts(shared)
    assert verdicts == _verdicts(own)
    # the model is not trivial: a touching pair, a collision and the clear ones (not listed)
    assert verdicts[("A", "B")] is Status.TOUCHING
    assert verdicts[("B", "C")] is Status.COLLISION
    assert verdicts[("D", "E")] is Status.TOUCHING
    assert ("A", "D") not in verdicts
    assert [p.mode for p in shared.pairs] == [p.mode for p in own.pairs]
