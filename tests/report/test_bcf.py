"""`--format bcf`: the written .bcfzip read back two ways, and its cameras checked by geometry.

1. zipfile and ElementTree: the files BCF 2.1 requires (bcf.version; a folder per topic with
   markup.bcf and its viewpoint), every child in the order of buildingSMART's schemas. The order
   is taken from bcf-client's models (IfcOpenShell's BCF library), which xsdata generated from the
   BCF 2.1 XSDs: not from gjk.
2. bcf-client's reader (BcfXml.load), as a BIM tool reads the file: topics, titles, components.

The model is a house in millimetres (tests/ifc_models.py) whose clashes are known by
construction: a door standing in a wall with no opening, a duct through a beam, a duct closer
to a slab than the required clearance; and a door in its opening, which is hosted, not a topic.
"""
from __future__ import annotations

import dataclasses
import math
import zipfile
from pathlib import Path
from xml.etree import ElementTree as ET

import numpy as np
import pytest
from click.testing import CliRunner

pytest.importorskip("ifcopenshell")
bcf_model = pytest.importorskip("bcf.v2.model")

from bcf.v2.bcfxml import BcfXml  # noqa: E402

from gjkcli.cli import main  # noqa: E402
from ifc_models import Box, write_model  # noqa: E402

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


@pytest.fixture(scope="module")
def house(tmp_path_factory):
    folder = tmp_path_factory.mktemp("bcf")
    boxes = [Box("IfcSlab", "Roof", (0, 0, 3000), (6000, 6000, 300)),
             Box("IfcWall", "South", (0, 0, 0), (6000, 200, 3000)),
             Box("IfcOpeningElement", "Door hole", (2000, -10, 0), (900, 220, 2100), voids="South"),
             Box("IfcDoor", "Front door", (1950, 0, 0), (1000, 200, 2150), fills="Door hole"),
             Box("IfcWall", "Partition", (3000, 200, 0), (100, 3000, 3000)),
             Box("IfcDoor", "Lost door", (2900, 1000, 0), (300, 900, 2100)),
             Box("IfcDuctSegment", "Duct", (500, 4000, 2600), (5000, 300, 300)),
             Box("IfcBeam", "Beam", (1000, 3800, 2500), (200, 700, 450)),
             Box("IfcDuctSegment", "Duct 2", (500, 5000, 2960), (2000, 300, 30))]  # 10 mm under the roof
    path = write_model(folder / "house.ifc", boxes)
    # every pair, and 25 mm between ducts and slabs (walls stand on slabs: they touch)
    manifest = folder / "clash.toml"
    manifest.write_text('[[include]]\nfile = "house.ifc"\n\n[[check]]\na = "*"\nb = "*"\n\n'
                        '[[check]]\na = "IfcDuct*"\nb = "IfcSlab"\nclearance = 25\n')
    out = folder / "clashes.bcfzip"
    result = CliRunner().invoke(main, ["scan", "--manifest", str(manifest), "--format", "bcf", "-o", str(out)],
                                catch_exceptions=False)
    assert result.exit_code == 1, result.output
    return manifest, {b.name: b for b in boxes}, out


def _expected_topics(boxes):
    """The pairs that must be topics, as GlobalId sets, with their status."""
    g = {name: b.guid for name, b in boxes.items()}
    return {frozenset((g["Lost door"], g["Partition"])): "collision",
            frozenset((g["Duct"], g["Beam"])): "collision",
            frozenset((g["Duct 2"], g["Roof"])): "clearance"}


def test_topics_are_the_clashes_and_hosted_doors_are_not(house):
    _, boxes, out = house
    with zipfile.ZipFile(out) as z:
        names = z.namelist()
        assert "bcf.version" in names
        version = ET.fromstring(z.read("bcf.version"))
        assert version.tag == "Version" and version.get("VersionId") == "2.1"
        folders = sorted({n.split("/")[0] for n in names if "/" in n})
        got = {}
        for folder in folders:
            assert f"{folder}/markup.bcf" in names
            markup = ET.fromstring(z.read(f"{folder}/markup.bcf"))
            topic = markup.find("Topic")
            assert topic.get("Guid") == folder and topic.get("TopicType") == "Clash"
            viewpoint = markup.find("Viewpoints/Viewpoint").text
            visinfo = ET.fromstring(z.read(f"{folder}/{viewpoint}"))
            assert visinfo.get("Guid") == markup.find("Viewpoints").get("Guid")
            ids = frozenset(c.get("IfcGuid") for c in visinfo.findall("Components/Selection/Component"))
            assert len(ids) == 2
            got[ids] = topic.find("Labels").text
            title = topic.find("Title").text
            for b in boxes.values():
                if b.guid in ids:
                    assert f"{b.ifc_class} '{b.name}'" in title
    assert got == _expected_topics(boxes)


def _children_in_schema_order(node: ET.Element, model_class) -> None:
    """Every child of `node` is an element the schema declares for it, in the schema's order,
    recursively through the classes bcf-client generated from the XSD."""
    fields = [f for f in dataclasses.fields(model_class) if f.metadata.get("type") == "Element"]
    order = {f.metadata.get("name"): k for k, f in enumerate(fields)}
    positions = []
    for child in node:
        assert child.tag in order, f"<{child.tag}> is not a child of <{node.tag}> in BCF 2.1"
        positions.append(order[child.tag])
        inner = _model_of(model_class, child.tag)
        if inner is not None:
            _children_in_schema_order(child, inner)
    assert positions == sorted(positions), f"children of <{node.tag}> out of the schema's order"
    for f in dataclasses.fields(model_class):
        if f.metadata.get("required") and f.metadata.get("type") == "Element":
            assert node.find(f.metadata["name"]) is not None, f"<{node.tag}> lacks <{f.metadata['name']}>"
        if f.metadata.get("required") and f.metadata.get("type") == "Attribute":
            assert node.get(f.metadata["name"]) is not None, f"<{node.tag}> lacks @{f.metadata['name']}"


def _model_of(model_class, tag):
    """The dataclass of a child element, when the schema gives it structure."""
    import typing

    for f in dataclasses.fields(model_class):
        if f.metadata.get("name") == tag:
            hint = typing.get_type_hints(model_class)[f.name]
            for arg in (hint, *typing.get_args(hint), *[a for h in typing.get_args(hint) for a in typing.get_args(h)]):
                if dataclasses.is_dataclass(arg):
                    return arg
    return None


def test_the_xml_follows_the_bcf_21_schemas(house):
    _, _, out = house
    with zipfile.ZipFile(out) as z:
        _children_in_schema_order(ET.fromstring(z.read("bcf.version")), bcf_model.Version)
        for name in z.namelist():
            if name.endswith("markup.bcf"):
                _children_in_schema_order(ET.fromstring(z.read(name)), bcf_model.Markup)
            elif name.endswith(".bcfv"):
                _children_in_schema_order(ET.fromstring(z.read(name)), bcf_model.VisualizationInfo)


def test_bcf_client_reads_the_topics(house):
    """IfcOpenShell's BCF library reads the file as a BIM tool would."""
    _, boxes, out = house
    with BcfXml.load(out) as bcf:
        assert bcf.version.version_id == "2.1"
        got = {}
        for guid, topic in bcf.topics.items():
            assert topic.markup.topic.guid == guid
            (view,) = topic.viewpoints.values()
            ids = frozenset(c.ifc_guid for c in view.visualization_info.components.selection.component)
            got[ids] = topic.markup.topic.labels[0]
            assert view.visualization_info.perspective_camera.field_of_view == 60.0
    assert got == _expected_topics(boxes)


def test_each_camera_looks_at_its_clash_in_metres(house):
    """The camera's ray passes through the clash: for a collision, through the region both boxes
    occupy; for the clearance pair, through the gap between them. BCF is in metres: the file is
    in millimetres."""
    _, boxes, out = house
    by_guid = {b.guid: b for b in boxes.values()}
    with zipfile.ZipFile(out) as z:
        for name in z.namelist():
            if not name.endswith(".bcfv"):
                continue
            v = ET.fromstring(z.read(name))
            cam = v.find("PerspectiveCamera")
            p = np.array([float(cam.find(f"CameraViewPoint/{a}").text) for a in "XYZ"])
            d = np.array([float(cam.find(f"CameraDirection/{a}").text) for a in "XYZ"])
            up = np.array([float(cam.find(f"CameraUpVector/{a}").text) for a in "XYZ"])
            assert math.isclose(np.linalg.norm(d), 1.0) and abs(d @ up) < 1e-12
            a, b = (by_guid[c.get("IfcGuid")] for c in v.findall("Components/Selection/Component"))
            lo = np.maximum(np.array(a.origin), np.array(b.origin)) / 1000.0
            hi = np.minimum(np.array(a.origin) + a.size, np.array(b.origin) + b.size) / 1000.0
            lo, hi = np.minimum(lo, hi), np.maximum(lo, hi)  # the gap between them, if apart
            # the ray p + t d, t > 0, enters the slab of the clash region (a tolerance of 1 mm)
            t_in, t_out = 0.0, np.inf
            for k in range(3):
                if abs(d[k]) < 1e-12:
                    assert lo[k] - 1e-3 <= p[k] <= hi[k] + 1e-3
                    continue
                t0, t1 = sorted(((lo[k] - 1e-3 - p[k]) / d[k], (hi[k] + 1e-3 - p[k]) / d[k]))
                t_in, t_out = max(t_in, t0), min(t_out, t1)
            assert t_in <= t_out, f"the camera of {name} does not look at the clash"
            # and stands back from it by a few metres, not kilometres (mm read as m)
            assert 0.5 < t_in < 20.0


def test_topic_guids_are_stable_across_runs(house, tmp_path):
    manifest, _, out = house
    again = tmp_path / "again.bcfzip"
    CliRunner().invoke(main, ["scan", "--manifest", str(manifest), "--format", "bcf", "-o", str(again)],
                       catch_exceptions=False)
    with zipfile.ZipFile(out) as z1, zipfile.ZipFile(again) as z2:
        assert sorted(z1.namelist()) == sorted(z2.namelist())


def test_bcf_is_refused_without_a_file_or_an_ifc_model(tmp_path, house):
    manifest, _, _ = house
    runner = CliRunner()
    result = runner.invoke(main, ["scan", "--manifest", str(manifest), "--format", "bcf"], catch_exceptions=False)
    assert result.exit_code == 2 and "-o FILE.bcfzip" in result.output
    stl = sorted(SAMPLES.glob("*.stl"))[:2]
    out = tmp_path / "x.bcfzip"
    result = runner.invoke(main, ["scan", *map(str, stl), "--format", "bcf", "-o", str(out)],
                           catch_exceptions=False)
    assert result.exit_code == 2 and not out.exists()
    errors = [line for line in result.output.splitlines() if line.startswith("gjk: error:")]
    assert len(errors) == 1 and "GlobalId" in errors[0] and "x.bcfzip" in errors[0]
