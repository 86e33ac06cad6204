"""Clash sets of IFC models: manifest groups selected by IfcOpenShell's selector syntax, and
[[check]]s with their own tolerance, fail_on and mode.

The models are boxes made with IfcOpenShell's authoring API (tests/ifc_models.py), in
millimetres; the oracle of every verdict is the closed-form depth or gap of two axis-aligned
boxes (`box_depth`, `box_distance`), swept just under and over each clash set's own band. The
oracle of every selection is IfcOpenShell's selector run by the test on the written file.
"""
from __future__ import annotations

from pathlib import Path

import pytest

ifcopenshell = pytest.importorskip("ifcopenshell")
import ifcopenshell.util.selector as selector  # noqa: E402

from gjkcli.engine.results import Status  # noqa: E402
from gjkcli.pipeline import run as pipeline  # noqa: E402
from gjkcli.scene.manifest import ManifestError, load  # noqa: E402
from ifc_models import Box, box_depth, box_distance, write_model  # noqa: E402

EXTERNAL = {"Pset_WallCommon": {"IsExternal": True}}
INTERNAL = {"Pset_WallCommon": {"IsExternal": False}}


def _model(tmp_path: Path, offset: float):
    """An external and an internal wall (told apart only by Pset_WallCommon.IsExternal), a beam
    and a member reaching `offset` mm into the external wall (negative: short of it), the member
    and a door in the internal wall, and a duct through both walls."""
    boxes = [Box("IfcWall", "External", (0, 0, 0), (6000, 200, 3000), psets=EXTERNAL),
             Box("IfcWall", "Internal", (0, 3000, 0), (6000, 100, 3000), psets=INTERNAL),
             Box("IfcBeam", "Beam", (1000, 200 - offset, 2500), (200, 2000, 300)),
             Box("IfcMember", "Member", (3000, 200 - offset, 1000), (100, 3000 + offset - 150, 100)),
             Box("IfcDoor", "Door", (4000, 2950, 0), (900, 200, 2100)),
             Box("IfcDuctSegment", "Duct", (5000, -500, 2000), (300, 4000, 300))]
    return write_model(tmp_path / "model.ifc", boxes), {b.name: b for b in boxes}


def _manifest(tmp_path: Path, model: Path, band: float, fail_on: str = '["collision"]',
              mode: str = "auto") -> Path:
    path = tmp_path / "clash.toml"
    path.write_text(f'''
[[include]]
file = "{model.name}"

[[group]]
name = "structure"
select = "IfcBeam, IfcMember"

[[group]]
name = "external walls"
select = "IfcWall, /Pset_WallCommon/.IsExternal=TRUE"

[[group]]
name = "all but ducts and doors"
select = "IfcElement, ! IfcDuctSegment, ! IfcDoor"

[[check]]
name = "Structure against external walls"
a = "structure"
b = "external walls"
tolerance = {band}
fail_on = {fail_on}
mode = "{mode}"

[[check]]
name = "Services"
a = "IfcDuctSegment"
b = "all but ducts and doors"
tolerance = 0.5
fail_on = ["collision", "touching"]
''')
    return path


def _label(box: Box) -> str:
    return f"{box.ifc_class} '{box.name}' {box.guid}"


def test_selector_groups_take_what_ifcopenshells_selector_returns(tmp_path):
    model, boxes = _model(tmp_path, 5.0)
    m = load(_manifest(tmp_path, model, 2.0))
    names = [_label(b) for b in boxes.values()]
    elements = [(str(model), b.guid) for b in boxes.values()]
    resolved = m.resolve(names, [(b.ifc_class, "IfcElement") for b in boxes.values()], elements)
    f = ifcopenshell.open(str(model))
    expected = {g.name: {e.GlobalId for e in selector.filter_elements(f, g.select)} for g in m.groups}
    assert {boxes["External"].guid} == expected["external walls"]  # the pset tells the walls apart
    assert expected["all but ducts and doors"] == {boxes[n].guid for n in ("External", "Internal", "Beam",
                                                                             "Member")}
    (a0, b0, _, _), (a1, b1, _, _) = resolved.checks
    guids = [b.guid for b in boxes.values()]
    assert {g for g, x in zip(guids, a0) if x} == expected["structure"]
    assert {g for g, x in zip(guids, b0) if x} == expected["external walls"]
    assert {g for g, x in zip(guids, b1) if x} == expected["all but ducts and doors"]
    assert [s.name for s in resolved.sets] == ["Structure against external walls", "Services"]


@pytest.mark.parametrize("band", [0.5, 2.0])
@pytest.mark.parametrize("share", [-3.0, -1.1, -0.9, -0.5, 0.5, 0.9, 1.1, 3.0])
def test_each_clash_set_answers_at_its_own_band(tmp_path, band, share):
    """The beam and the member reach `share` x the first set's band into (or short of) the
    external wall: touching within the band, a collision or clear beyond it, as the boxes'
    closed forms say; the duct crosses both walls deeply in the second set, whatever the band."""
    model, boxes = _model(tmp_path, share * band)
    found = pipeline.scan([], pipeline.Options(jobs=1), manifest=_manifest(tmp_path, model, band))
    got = {frozenset((p.a, p.b)): p for p in found.pairs}
    wall = boxes["External"]
    for name in ("Beam", "Member"):
        depth, gap = box_depth(boxes[name], wall), box_distance(boxes[name], wall)
        expected = (Status.COLLISION if depth > band else Status.TOUCHING if max(depth, -gap) >= -band
                    else Status.CLEAR)
        pair = got.get(frozenset((_label(boxes[name]), _label(wall))))
        if expected is Status.CLEAR:
            assert pair is None
            continue
        assert pair.status is expected and pair.clash_set == "Structure against external walls"
        assert pair.result.tolerance == pytest.approx(band)
        assert pair.violation == (expected is Status.COLLISION)  # this set fails on collisions only
    duct = _label(boxes["Duct"])
    services = {p.b if p.a == duct else p.a: p for p in found.pairs if duct in (p.a, p.b)}
    assert set(services) == {_label(boxes["External"]), _label(boxes["Internal"])}
    assert all(p.status is Status.COLLISION and p.clash_set == "Services" and p.violation
               and p.result.tolerance == pytest.approx(0.5) for p in services.values())
    # no pair outside the sets: not the door in its wall, not the member on the internal wall
    assert len(found.pairs) == len([p for p in found.pairs if p.clash_set is not None])
    assert found.exit_code == 1


def test_fail_on_and_mode_are_the_sets_own(tmp_path):
    """Touching pairs fail the set that fails on touching and pass the other; the exact set's
    pairs are answered by the triangles, the other's by the hulls."""
    model, boxes = _model(tmp_path, 1.0)  # the beam and the member 1 mm into the wall
    touching = pipeline.scan([], pipeline.Options(jobs=1, fail_on=("collision",)),
                             manifest=_manifest(tmp_path, model, 2.0, '["touching"]', "exact"))
    structure = [p for p in touching.pairs if p.clash_set == "Structure against external walls"]
    assert len(structure) == 2
    assert all(p.status is Status.TOUCHING and p.violation for p in structure)
    assert all(p.requested == "exact" and p.mode == "exact" for p in structure)
    services = [p for p in touching.pairs if p.clash_set == "Services"]
    assert services and all(p.requested == "auto" and p.mode == "hull" for p in services)
    lenient = pipeline.scan([], pipeline.Options(jobs=1),
                            manifest=_manifest(tmp_path, model, 2.0, '["collision"]', "hull"))
    structure = [p for p in lenient.pairs if p.clash_set == "Structure against external walls"]
    assert len(structure) == 2 and not any(p.violation for p in structure)
    assert all(p.mode == "hull" for p in structure)


def test_selector_errors_are_lines_of_the_manifest(tmp_path):
    model, boxes = _model(tmp_path, 5.0)
    path = tmp_path / "bad.toml"
    path.write_text(f'[[include]]\nfile = "{model.name}"\n\n[[group]]\nname = "g"\nselect = "IfcWall,, ,"\n')
    with pytest.raises(ManifestError, match="is not a selector query IfcOpenShell reads") as err:
        load(path)
    assert err.value.line == 6
    path.write_text(f'[[include]]\nfile = "{model.name}"\n\n[[group]]\nname = "g"\nselect = "IfcPipeSegment"\n'
                    f'\n[[check]]\na = "g"\nb = "IfcWall"\n')
    with pytest.raises(ManifestError, match="select 'IfcPipeSegment' matches no IFC element") as err:
        pipeline.scan([], pipeline.Options(jobs=1), manifest=path)
    assert err.value.line == 4
    path.write_text('[[check]]\na = "x"\nb = "y"\nmode = "fast"\n')
    with pytest.raises(ManifestError, match="mode must be one of hull, auto, exact"):
        load(path)
