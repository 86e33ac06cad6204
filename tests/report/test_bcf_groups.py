"""Grouped clashes in every report, and one BCF per clash set read back with bcf-client.

The model (millimetres, tests/ifc_models.py) has clashes at three places 20 m apart: a beam
crossed by three ducts 700 mm apart, a beam crossed by two, a column crossed by one duct; two
named clash sets (ducts against beams, ducts against columns). The oracle of the groups is the
construction: at a grouping distance over 700 mm the clashes of one place are one group, under
it each clash is its own; the oracle of the BCF is the JSON report of the same scan: every
failing pair in exactly one topic of its clash set's file.
"""
from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

pytest.importorskip("ifcopenshell")
pytest.importorskip("bcf.v2.model")

from bcf.v2.bcfxml import BcfXml  # noqa: E402

from gjkcli.cli import main  # noqa: E402
from ifc_models import Box, write_model  # noqa: E402

PLACES = ((0, "IfcBeam", 3), (20000, "IfcBeam", 2), (40000, "IfcColumn", 1))


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    folder = tmp_path_factory.mktemp("groups")
    boxes = []
    for k, (x, host, ducts) in enumerate(PLACES):
        size = (200, 3000, 400) if host == "IfcBeam" else (400, 400, 3000)
        boxes.append(Box(host, f"{host[3:]} {k}", (x, 0, 0), size))
        for d in range(ducts):
            boxes.append(Box("IfcDuctSegment", f"Duct {k}.{d}", (x - 500, 100 + 700 * d, 100), (1200, 200, 200)))
    boxes.append(Box("IfcWall", " ", (60000, 0, 0), (5000, 200, 3000)))  # a blank Name
    boxes.append(Box("IfcDuctSegment", "Duct w", (62000, -500, 1000), (300, 1200, 300)))
    write_model(folder / "site.ifc", boxes)
    manifest = folder / "clash.toml"
    manifest.write_text('''
[[include]]
file = "site.ifc"

[[check]]
name = "Ducts / beams"
a = "IfcDuctSegment"
b = "IfcBeam"

[[check]]
name = "Ducts / columns"
a = "IfcDuctSegment"
b = "IfcColumn"
group_within = 100000

[[check]]
a = "IfcDuctSegment"
b = "IfcWall"
''')
    return folder, manifest, {b.name: b for b in boxes}


def _scan(manifest: Path, *args) -> tuple:
    result = CliRunner().invoke(main, ["scan", "--manifest", str(manifest), "--jobs", "1", *map(str, args)],
                                catch_exceptions=False)
    assert result.exit_code == 1, result.output
    return result


@pytest.mark.parametrize("within, beam_groups", [("710", [3, 2]), ("690", [1, 1, 1, 1, 1]), ("0.71m", [3, 2])])
def test_groups_in_the_json_and_the_table(site, within, beam_groups):
    folder, manifest, boxes = site
    doc = json.loads(_scan(manifest, "--group-within", within, "--format", "json").stdout)
    failing = [p for p in doc["pairs"] if p["fails"]]
    assert len(failing) == 3 + 2 + 1 + 1
    beams = [g for g in doc["groups"] if g["clash_set"] == "Ducts / beams"]
    assert sorted(g["pairs"] for g in beams) == sorted(beam_groups)
    # the columns' set groups at its own distance; the unnamed check's pair is in no set
    others = [(g["clash_set"], g["pairs"]) for g in doc["groups"] if g["clash_set"] != "Ducts / beams"]
    assert sorted(others, key=str) == [("Ducts / columns", 1), (None, 1)]
    assert [g["group"] for g in doc["groups"]] == list(range(1, len(doc["groups"]) + 1))
    for g in doc["groups"]:
        members = [p for p in failing if p["group"] == g["group"]]
        assert len(members) == g["pairs"] and {p.get("clash_set") for p in members} == {g["clash_set"]}
        assert set(g["elements"]) == {n for p in members for n in (p["a"], p["b"])}
    assert all(p.get("group") is not None for p in failing)
    table = _scan(manifest, "--group-within", within, "-o", folder / "t.txt").output
    text = (folder / "t.txt").read_text()
    assert f"{len(doc['groups'])} groups of clashes at one place" in text and "clash set" in text


def test_one_bcf_per_clash_set_with_a_topic_per_group(site):
    folder, manifest, boxes = site
    doc = json.loads(_scan(manifest, "--group-within", "1000", "--format", "json").stdout)
    out = folder / "clashes.bcfzip"
    result = _scan(manifest, "--group-within", "1000", "--format", "bcf", "-o", out)
    files = {"Ducts / beams": folder / "clashes.Ducts-beams.bcfzip",
             "Ducts / columns": folder / "clashes.Ducts-columns.bcfzip",
             None: folder / "clashes.no-set.bcfzip"}
    assert all(str(f) in result.output for f in files.values()) and not out.exists()
    guid = {b.name: b.guid for b in boxes.values()}
    label = {f"{b.ifc_class} '{b.name}' {b.guid}" if b.name.strip() else f"{b.ifc_class} {b.guid}": b.guid
             for b in boxes.values()}
    for clash_set, path in files.items():
        expected = [frozenset((label[p["a"]], label[p["b"]])) for p in doc["pairs"]
                    if p["fails"] and p.get("clash_set") == clash_set]
        seen = []
        with BcfXml.load(path) as bcf:
            groups = [g for g in doc["groups"] if g["clash_set"] == clash_set]
            assert len(bcf.topics) == len(groups)
            for topic in bcf.topics.values():
                markup = topic.markup.topic
                assert markup.labels[0] == "collision"
                assert markup.labels[1:] == ([clash_set] if clash_set else [])
                (view,) = topic.viewpoints.values()
                ids = {c.ifc_guid for c in view.visualization_info.components.selection.component}
                # every failing pair whose elements are both in the topic, and the description
                # names every element
                mine = [pair for pair in expected if pair <= ids]
                assert ids == set().union(*mine)
                assert all(g in markup.description for g in ids)
                seen.extend(mine)
        assert sorted(map(sorted, seen)) == sorted(map(sorted, expected))  # each pair exactly once
    # the blank Name: the class and the GlobalId, never "IfcWall ' '"
    with zipfile.ZipFile(files[None]) as z:
        text = "".join(z.read(n).decode() for n in z.namelist() if n.endswith("markup.bcf"))
    assert f"IfcWall {guid[' ']}" in text and "IfcWall ' '" not in text


def test_the_html_page_has_the_groups(site):
    folder, manifest, _ = site
    page = folder / "page.html"
    _scan(manifest, "--group-within", "1000", "--html", page, "-q")
    html = page.read_text()
    assert "<table id='groups'>" in html and "4 groups of clashes at one place" in html
    assert "<th>clash set</th>" in html and "Ducts / beams" in html
