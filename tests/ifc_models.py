"""IFC models for the tests, made with IfcOpenShell's authoring API (ifcopenshell.api): boxes of
known size and place, in the file's own length unit, so every verdict has an analytic answer.

`Box` is an element (or an opening): `size` (x, y, z) and `origin` (its min corner before the
rotation `turn` about z, degrees, around that corner) in the file's unit. `write_model` writes
them, with openings voiding their hosts and elements filling openings.

Where an element's body sits is the Box's `context`, as exporters place it: None for the model's
'Body' sub-context of its 'Model' context, "Design" for a top context of type 'Design' (ArchiCAD's
older exports), "Design/Body" for a 'Body' sub-context of it; `body` False gives the element only
a 2D 'Axis' curve in a 'Plan' context (no 3D body), None no representation at all.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

# metres per file unit, as ifcopenshell.api's unit.assign_unit names them
UNIT_SCALE = {"MILLIMETERS": 1e-3, "METERS": 1.0}


@dataclass
class Box:
    ifc_class: str
    name: str | None
    origin: tuple
    size: tuple
    turn: float = 0.0
    voids: str | None = None  # an opening: the name of the element it voids
    fills: str | None = None  # an element: the name of the opening it fills
    psets: dict | None = None  # {"Pset_WallCommon": {"IsExternal": True}}
    context: str | None = None  # None, "Design" or "Design/Body": where its body sits
    body: bool | None = True  # False: only a 2D axis curve; None: no representation
    guid: str | None = field(default=None)  # set by write_model

    def corners(self) -> np.ndarray:
        """(8, 3) world corners (file units)."""
        local = np.array([[x, y, z] for x in (0, self.size[0]) for y in (0, self.size[1])
                          for z in (0, self.size[2])], dtype=float)
        return local @ _turn(self.turn)[:3, :3].T + np.asarray(self.origin, dtype=float)


def _turn(degrees: float) -> np.ndarray:
    c, s = np.cos(np.radians(degrees)), np.sin(np.radians(degrees))
    M = np.eye(4)
    M[:2, :2] = [[c, -s], [s, c]]
    return M


def write_model(path: Path, boxes: list[Box], schema: str = "IFC4", unit: str = "MILLIMETERS",
                context_type: str = "Model") -> Path:
    """Write the boxes as an IFC model; each Box gets its GlobalId in `guid`.

    context_type : the representation contexts' ContextType ("MODEL" as AutoCAD Architecture
        writes it)"""
    import ifcopenshell
    import ifcopenshell.api as api

    f = ifcopenshell.file(schema=schema)
    if schema == "IFC2X3":  # IFC2X3 requires an owner history on every rooted entity
        person = api.run("owner.add_person", f)
        org = api.run("owner.add_organisation", f)
        user = api.run("owner.add_person_and_organisation", f, person=person, organisation=org)
        application = api.run("owner.add_application", f)
        import ifcopenshell.api.owner.settings as owner

        owner.get_user = lambda _f: user
        owner.get_application = lambda _f: application
    project = api.run("root.create_entity", f, ifc_class="IfcProject", name="gjk test")
    api.run("unit.assign_unit", f, length={"is_metric": True, "raw": unit})
    model = api.run("context.add_context", f, context_type=context_type)
    body = api.run("context.add_context", f, context_type=context_type, context_identifier="Body",
                   target_view="MODEL_VIEW", parent=model)
    site = api.run("root.create_entity", f, ifc_class="IfcSite", name="Site")
    api.run("aggregate.assign_object", f, relating_object=project, products=[site])
    storey = api.run("root.create_entity", f, ifc_class="IfcBuildingStorey", name="Level 0")
    api.run("aggregate.assign_object", f, relating_object=site, products=[storey])
    scale = UNIT_SCALE[unit]
    contexts = {None: body}
    if any(b.context is not None for b in boxes):
        design = api.run("context.add_context", f, context_type="Model")
        design.ContextType = "Design"  # the API offers IFC4's words only
        contexts["Design"] = design
        contexts["Design/Body"] = api.run("context.add_context", f, context_type="Model",
                                          context_identifier="Body", target_view="MODEL_VIEW", parent=design)
        contexts["Design/Body"].ContextType = "Design"
    if any(b.body is False for b in boxes):
        plan = api.run("context.add_context", f, context_type="Plan")
        contexts["Plan/Axis"] = api.run("context.add_context", f, context_type="Plan", context_identifier="Axis",
                                        target_view="PLAN_VIEW", parent=plan)
    made = {}
    for b in boxes:
        e = api.run("root.create_entity", f, ifc_class=b.ifc_class, name=b.name)
        # the API takes SI lengths for representations, file units for placements (is_si=False)
        if b.body:
            rep = api.run("geometry.add_wall_representation", f, context=contexts[b.context],
                          length=b.size[0] * scale, thickness=b.size[1] * scale, height=b.size[2] * scale)
            if b.context == "Design":  # as ArchiCAD writes it: 'Body' in the top context itself
                rep.RepresentationIdentifier = "Body"
            api.run("geometry.assign_representation", f, product=e, representation=rep)
        elif b.body is False:
            rep = api.run("geometry.add_axis_representation", f, context=contexts["Plan/Axis"],
                          axis=((0.0, 0.0), (b.size[0] * scale, 0.0)))
            api.run("geometry.assign_representation", f, product=e, representation=rep)
        M = _turn(b.turn)
        M[:3, 3] = b.origin
        api.run("geometry.edit_object_placement", f, product=e, matrix=M, is_si=False)
        if not e.is_a("IfcOpeningElement") and not e.is_a("IfcSpatialElement"):
            api.run("spatial.assign_container", f, relating_structure=storey, products=[e])
        for pset_name, properties in (b.psets or {}).items():
            pset = api.run("pset.add_pset", f, product=e, name=pset_name)
            api.run("pset.edit_pset", f, pset=pset, properties=properties)
        made[b.name] = e
        b.guid = e.GlobalId
    for b in boxes:
        if b.voids is not None:
            api.run("feature.add_feature", f, feature=made[b.name], element=made[b.voids])
    for b in boxes:
        if b.fills is not None:
            api.run("feature.add_filling", f, opening=made[b.fills], element=made[b.name])
    f.write(str(path))
    return Path(path)


def box_distance(a: Box, b: Box) -> float:
    """The distance between two axis-aligned boxes (turn 0): 0 when they touch or overlap."""
    assert a.turn == 0 and b.turn == 0
    lo_a, hi_a = np.asarray(a.origin, float), np.asarray(a.origin, float) + a.size
    lo_b, hi_b = np.asarray(b.origin, float), np.asarray(b.origin, float) + b.size
    gap = np.maximum(0.0, np.maximum(lo_a - hi_b, lo_b - hi_a))
    return float(np.linalg.norm(gap))


def box_depth(a: Box, b: Box) -> float:
    """The penetration depth of two axis-aligned boxes: the least translation that separates
    them, along an axis, in whichever direction is shorter (for boxes the Minkowski difference is
    a box, so the closest face of it is an axis); <= 0 when they do not overlap."""
    lo_a, hi_a = np.asarray(a.origin, float), np.asarray(a.origin, float) + a.size
    lo_b, hi_b = np.asarray(b.origin, float), np.asarray(b.origin, float) + b.size
    overlap = np.minimum(hi_a, hi_b) - np.maximum(lo_a, lo_b)
    if np.any(overlap <= 0):
        return float(np.min(overlap))
    return float(np.min(np.minimum(hi_a - lo_b, hi_b - lo_a)))


def cut_away_model(path: Path, frames: int = 1) -> tuple[Path, list]:
    """Window frames modelled as walls the size of their opening, as ArchiCAD 18 wrote
    Schependomlaan's ROOT-houten kozijnen: each wall voided whole by an opening of its very size
    (IfcOpenShell subtracts it to nothing; a larger one it leaves uncut), filled by its window;
    then a wall of its own. Returns the path and the boxes."""
    boxes = []
    for k in range(frames):
        x = 1500 * k
        boxes += [Box("IfcWall", f"Frame {k}", (x, 0, 0), (1200, 100, 1500)),
                  Box("IfcOpeningElement", f"O{k}", (x, 0, 0), (1200, 100, 1500), voids=f"Frame {k}"),
                  Box("IfcWindow", f"Window {k}", (x, 20, 0), (1200, 60, 1500), fills=f"O{k}")]
    boxes.append(Box("IfcWall", "Wall", (0, 100, 0), (1500 * frames, 200, 2500)))
    return write_model(path, boxes), boxes
