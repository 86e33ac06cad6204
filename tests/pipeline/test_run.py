"""`gjk scan` through `gjkcli.pipeline.run.scan`: loading, hulls, verdicts, allowed pairs, baselines, reports.

The oracle for hull mode is trimesh's CollisionManager (FCL) over each object's convex hull moved
by its node's full world transform, computed here and not by gjk. FCL tests triangles against
triangles, so it misses a hull that lies wholly inside another; every pair gjk reports in
collision that FCL does not is checked to be such a containment, with qhull's facet planes.
"""
from __future__ import annotations

import dataclasses
import importlib.util
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from gjkcli.pipeline import baseline as baselines
from gjkcli.mesh import load
from gjkcli.scene import manifest as mf
from gjkcli.pipeline import run as pipeline
from gjkcli.report.ci import github_annotations, junit_xml
from gjkcli.report.jsonout import document as scan_document
from gjkcli.engine.results import Status
from gjkcli.engine.shapes import Shape

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples"
SHARED = Path(__file__).resolve().parents[3] / "shared"
MESHES = SHARED / "meshes"
needs_shared = pytest.mark.skipif(not MESHES.is_dir(), reason=f"the shared real-world meshes are not at {SHARED}")
shared = [pytest.mark.shared, needs_shared]


class scan:
    """The library call of `gjk scan`, with the options as keywords."""

    @staticmethod
    def run(paths=(), *, manifest=None, progress=None, **options):
        return pipeline.scan(paths, pipeline.Options(**options), manifest=manifest, progress=progress)


def pairs_of(report, *statuses):
    return {tuple(sorted((p.a, p.b))) for p in report.pairs if Status(p.status) in statuses}


def make_scene_module():
    spec = importlib.util.spec_from_file_location("make_scan_scene", ROOT / "scripts" / "make_scan_scene.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# -- hull mode against trimesh + FCL on the hulls ----------------------------------------------------


def fcl_hull_pairs(geoms):
    """Colliding pairs of the objects' convex hulls by trimesh's CollisionManager (FCL)."""
    import trimesh

    manager = trimesh.collision.CollisionManager()
    for g in geoms:
        shape = Shape.hull(g.vertices)
        w = shape.world_vertices
        if shape.dimension == 3:
            faces = shape.faces
        elif shape.dimension == 2:  # a flat polygon, its vertices in ring order: a fan
            faces = np.array([[0, k, k + 1] for k in range(1, len(w) - 1)])
        else:
            continue
        manager.add_object(g.name, trimesh.Trimesh(w, faces, process=False))
    _, names = manager.in_collision_internal(return_names=True)
    return {tuple(sorted(n)) for n in names}


def contains(outer, inner) -> bool:
    """A vertex of `inner` lies inside the convex hull of `outer` (qhull's facet planes)."""
    from scipy.spatial import ConvexHull, QhullError

    try:
        hull = ConvexHull(outer.vertices)
    except QhullError:
        return False
    d = hull.equations[:, :3] @ inner.vertices.T + hull.equations[:, 3:4]
    return bool(np.any(np.all(d <= 1e-9 * np.ptp(outer.vertices, axis=0).max(), axis=0)))


SCENES = ["pins.glb", "boolean.glb", "simple_pole.glb", "chair_model.obj", "kinematic.tar.gz",
          "FM1_satellite.3DXML", "TestScene.gltf", "CesiumMilkTruck.glb", "multibody.stl",
          "two_objects_mixed_case_names.stl", "two_objects.obj", "pyramids.3mf", "nested.glb",
          "../3mf/cube_gears.3mf", "../3mf/multiple_cylinders.3mf"]


@pytest.mark.shared
@needs_shared
@pytest.mark.parametrize("name", SCENES)
def test_hull_mode_matches_fcl_on_the_hulls(name):
    path = MESHES / name
    report = scan.run([path], mode="hull", jobs=1)
    assert not report.errors
    geoms = {g.name: g for g in load.read_objects(path)}
    fcl = fcl_hull_pairs(list(geoms.values()))
    collision = pairs_of(report, Status.COLLISION)
    touching = pairs_of(report, Status.TOUCHING)
    # every pair FCL finds, gjk finds (touching pairs meet to within the band: FCL may go either way)
    assert fcl <= collision | touching, sorted(fcl - collision - touching)
    # every collision FCL does not see is one hull inside the other
    for a, b in collision - fcl:
        assert contains(geoms[a], geoms[b]) or contains(geoms[b], geoms[a]), (a, b)
    assert report.exit_code == (1 if collision else 0)


@pytest.mark.shared
@needs_shared
def test_scene_answers_from_the_readme():
    # README: pins.glb 6 pairs (each dowel with the part); simple_pole.glb 16; multibody.stl clear (0.5069)
    pins = scan.run([MESHES / "pins.glb"], mode="hull", jobs=1)
    assert len(pairs_of(pins, Status.COLLISION)) == 6
    assert all("sides" in p.b or "sides" in p.a for p in pins.pairs)
    pole = scan.run([MESHES / "simple_pole.glb"], mode="hull", jobs=1)
    assert len(pairs_of(pole, Status.COLLISION, Status.TOUCHING)) == 16
    multi = scan.run([MESHES / "multibody.stl"], mode="hull", clearance=0.6, jobs=1)
    (pair,) = multi.pairs
    assert pair.status is Status.CLEARANCE and pair.result.distance == pytest.approx(0.5069, abs=1e-4)


@pytest.mark.shared
@needs_shared
def test_nested_scale_is_applied():
    # trimesh's CollisionManager drops the node scale and reports block02-block03 colliding
    report = scan.run([MESHES / "nested.glb"], mode="hull", jobs=1)
    assert report.exit_code == 0 and not report.pairs and len(report.objects) == 3
    near = scan.run([MESHES / "nested.glb"], mode="hull", clearance=0.2, jobs=1)
    (pair,) = near.pairs
    assert {pair.a, pair.b} == {"block02", "block03"}
    assert pair.status is Status.CLEARANCE and pair.result.distance == pytest.approx(0.1162, abs=1e-4)
    assert near.exit_code == 1


def test_generated_scene_matches_trimesh_pipeline(tmp_path):
    """The benchmark's scene, small: gjk's pairs are trimesh's (load_scene, add_object, FCL)."""
    import trimesh

    path = make_scene_module().make(300, tmp_path / "parts.glb", seed=4)
    scene = trimesh.load_scene(path)
    manager = trimesh.collision.CollisionManager()
    for node in scene.graph.nodes_geometry:
        transform, geometry = scene.graph[node]
        manager.add_object(node, scene.geometry[geometry], transform=transform)
    _, names = manager.in_collision_internal(return_names=True)
    want = {tuple(sorted(n)) for n in names}
    for jobs in (1, 2):
        report = scan.run([path], mode="hull", jobs=jobs)
        assert pairs_of(report, Status.COLLISION, Status.TOUCHING) == want
        assert len(want) > 100 and all(o.convex for o in report.objects)
        assert not any(p.conservative for p in report.pairs)


# -- manifest: primitives, checks, allowed pairs, SRDF -------------------------------------------------


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_primitives_checks_and_clearance(tmp_path):
    m = write(tmp_path / "m.toml", """\
[[object]]
name = "block"
box = [2, 2, 2]

[[object]]
name = "ball"
sphere = 0.5
translate = [1.4, 0, 0]

[[object]]
name = "pin"
capsule = { radius = 0.25, length = 2 }
translate = [0, 3, 0]

[[object]]
name = "drum"
cylinder = { radius = 1, height = 1 }
translate = [0, 3.6, 0]
rotate = [90, 0, 0]

[[object]]
name = "far"
box = [1, 1, 1]
translate = [10, 0, 0]

[[check]]
a = "block"
b = "*"

[[check]]
a = "pin"
b = "drum"
clearance = 0.5
""")
    report = scan.run([], manifest=m, jobs=1)
    by = {frozenset((p.a, p.b)): p for p in report.pairs}
    ball = by[frozenset(("block", "ball"))]
    assert ball.status is Status.COLLISION and ball.result.depth == pytest.approx(0.1, abs=1e-9)
    # the drum's axis lies along y; its face at y = 3.1 meets the capsule's cap (y = 3 + 1 + 0.25)
    drum = by[frozenset(("pin", "drum"))]
    assert drum.status is Status.COLLISION and drum.clearance == 0.5
    assert frozenset(("ball", "pin")) not in by  # not in any [[check]]
    assert report.objects[report._index["ball"]].primitive == "point"
    assert all(o.convex for o in report.objects)
    # the far box is 8.5 from the block: a clearance of 9 (for the checks without their own) makes
    # it a finding, with the block's other neighbours
    far = scan.run([], manifest=m, clearance=9.0, jobs=1)
    assert {frozenset((p.a, p.b)) for p in far.pairs if p.status is Status.CLEARANCE} == {
        frozenset(("block", "far")), frozenset(("block", "pin")), frozenset(("block", "drum"))}
    assert next(p for p in far.pairs if p.status is Status.CLEARANCE and "far" in (p.a, p.b)).clearance == 9.0


def test_allowed_pairs_and_fail_on(tmp_path):
    m = write(tmp_path / "m.toml", """\
fail_on = ["collision", "touching"]

[[object]]
name = "a"
box = [1, 1, 1]

[[object]]
name = "b"
box = [1, 1, 1]
translate = [0.5, 0, 0]

[[object]]
name = "c"
box = [1, 1, 1]
translate = [-1, 0, 0]

[[allow]]
a = "b"
b = "a"
reason = "press fit"
""")
    report = scan.run([], manifest=m, jobs=1)
    ab = next(p for p in report.pairs if {p.a, p.b} == {"a", "b"})
    ac = next(p for p in report.pairs if {p.a, p.b} == {"a", "c"})
    assert ab.allowed and ab.reason == "press fit" and ab.violation and not ab.fails
    assert ac.status is Status.TOUCHING and ac.fails  # fail_on lists touching
    assert report.exit_code == 1
    assert report.pairs[0] is ac  # failing findings first, allowed ones after
    relaxed = scan.run([], manifest=m, fail_on=["collision"], jobs=1)
    assert relaxed.exit_code == 0
    # counted, not listed, unless asked for (as ruff counts the diagnostics it ignores)
    doc = scan_document(report)
    assert [{p["a"], p["b"]} for p in doc["pairs"]] == [{"a", "c"}] and doc["summary"]["allowed"] == 1
    doc = scan_document(dataclasses.replace(report, show_allowed=True))
    pair = next(p for p in doc["pairs"] if {p["a"], p["b"]} == {"a", "b"})
    assert pair["allowed"] is True and pair["reason"] == "press fit" and pair["fails"] is False


@pytest.mark.shared
@pytest.mark.skipif(not (SHARED / "robots" / "panda").is_dir(), reason=f"the shared robots are not at {SHARED}")
def test_panda_srdf_allows_adjacent_links(tmp_path):
    panda = SHARED / "robots" / "panda"
    root = ET.parse(panda / "panda.urdf").getroot()

    def origin(element):
        o = element.find("origin") if element is not None else None
        xyz = [float(x) for x in (o.get("xyz", "0 0 0") if o is not None else "0 0 0").split()]
        rpy = [float(x) for x in (o.get("rpy", "0 0 0") if o is not None else "0 0 0").split()]
        return mf.placement(xyz, np.degrees(rpy))  # URDF rpy: fixed axes x, y, z, as the manifest

    parent = {j.find("child").get("link"): (j.find("parent").get("link"), origin(j)) for j in root.iter("joint")}

    def world(link):  # forward kinematics at the zero configuration
        T = np.eye(4)
        while link in parent:
            link, joint = parent[link]
            T = joint @ T
        return T

    lines = [f'srdf = "{panda / "panda.srdf"}"']
    for link in root.iter("link"):
        collision = link.find("collision")
        if collision is None:
            continue
        mesh = collision.find("geometry/mesh").get("filename").rsplit("/", 1)[-1]
        T = world(link.get("name")) @ origin(collision)
        lines.append(f'[[object]]\nname = "{link.get("name")}"\nfile = "{panda / mesh}"\ntransform = {T.tolist()}\n')
    report = scan.run([], manifest=write(tmp_path / "panda.toml", "\n".join(lines)), mode="hull", jobs=1)
    allowed = {frozenset((p.a, p.b)) for p in report.pairs if p.allowed}
    srdf = {frozenset((a.a, a.b)) for a in mf.load(tmp_path / "panda.toml").allows}
    assert allowed and allowed <= srdf
    assert all(p.reason.startswith("SRDF: ") for p in report.pairs if p.allowed)
    assert frozenset(("panda_link3", "panda_link4")) in allowed
    failing = {frozenset((p.a, p.b)) for p in report.failures}
    assert failing == {frozenset(("panda_link5", "panda_hand")), frozenset(("panda_link5", "panda_link7"))}


# -- baselines ------------------------------------------------------------------------------------


def two_scenes(tmp_path, extra=False):
    """A manifest of three boxes, two of them overlapping (and a third overlap with extra)."""
    text = ('[[object]]\nname = "a"\nbox = [1, 1, 1]\n\n[[object]]\nname = "b"\nbox = [1, 1, 1]\n'
            'translate = [0.5, 0, 0]\n\n[[object]]\nname = "c"\nbox = [1, 1, 1]\ntranslate = [5, 0, 0]\n')
    if extra:
        text += '\n[[object]]\nname = "d"\nbox = [1, 1, 1]\ntranslate = [5.5, 0, 0]\n'
    return write(tmp_path / "cell.toml", text)


def test_baseline_new_known_and_gone(tmp_path):
    first = scan.run([], manifest=two_scenes(tmp_path), write_baseline=tmp_path / "base.json", jobs=1)
    assert first.exit_code == 0 and first.baseline_written == str(tmp_path / "base.json")
    data = json.loads((tmp_path / "base.json").read_text())
    assert data["findings"] == [{"file": "cell.toml", "a": "a", "b": "b", "status": "collision",
                                 "depth": pytest.approx(0.5), "distance": 0.0}]
    # the same scene against its baseline: nothing new
    same = scan.run([], manifest=two_scenes(tmp_path), baseline=tmp_path / "base.json", jobs=1)
    assert same.exit_code == 0 and same.pairs[0].known and not same.gone
    # a new overlap fails; the known one does not
    more = scan.run([], manifest=two_scenes(tmp_path, extra=True), baseline=tmp_path / "base.json", jobs=1)
    assert more.exit_code == 1
    assert [(p.a, p.b, p.known) for p in more.pairs] == [("c", "d", False), ("a", "b", True)]
    doc = scan_document(more)
    assert [p["baseline"] for p in doc["pairs"]] == ["new", "known"]
    # a recorded finding that is no longer there is reported as gone
    base = baselines.read(tmp_path / "base.json")
    stale = baselines.Entry(file="cell.toml", a="x", b="y", status="collision")
    baselines.write(tmp_path / "stale.json", list(base.entries) + [stale])
    gone = scan.run([], manifest=two_scenes(tmp_path), baseline=tmp_path / "stale.json", jobs=1)
    assert gone.gone == (stale,) and gone.exit_code == 0
    assert doc["summary"]["known"] == 1 and scan_document(gone)["gone"][0]["a"] == "x"


def test_a_recorded_pair_allowed_later_is_not_gone(tmp_path):
    """The baseline holds (a, b); a later [[allow]] names it (b, a): the pair, still colliding
    and now allowed, is not reported as gone from the baseline."""
    scan.run([], manifest=two_scenes(tmp_path), write_baseline=tmp_path / "base.json", jobs=1)
    cell = tmp_path / "cell.toml"
    cell.write_text(cell.read_text() + '\n[[allow]]\na = "b"\nb = "a"\nreason = "pressed in"\n')
    later = scan.run([], manifest=cell, baseline=tmp_path / "base.json", jobs=1)
    assert [(p.a, p.b, p.allowed) for p in later.pairs] == [("a", "b", True)]
    assert later.gone == () and later.exit_code == 0


def test_baseline_errors(tmp_path):
    from gjkcli.errors import InputError

    with pytest.raises(InputError, match="no such baseline"):
        baselines.read(tmp_path / "none.json")
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(InputError, match="invalid JSON at line 1"):
        baselines.read(tmp_path / "bad.json")
    (tmp_path / "bad.json").write_text('{"version": 1, "findings": [{"a": "x"}]}')
    with pytest.raises(InputError, match="finding 1 needs"):
        baselines.read(tmp_path / "bad.json")


def test_baseline_keys_are_relative_to_the_baseline(tmp_path):
    base = tmp_path / "ci"
    base.mkdir()
    key = baselines.pair_key("b", "a", str(tmp_path / "x.glb"), str(tmp_path / "x.glb"), base)
    assert key == ("../x.glb", "a", "b")
    key = baselines.pair_key("a", "b", str(tmp_path / "x.glb"), str(tmp_path / "y.glb"), base)
    assert key == ("../x.glb + ../y.glb", "a", "b")


# -- errors, single objects, progress, modes ---------------------------------------------------------


def test_a_bad_file_among_good_ones(tmp_path):
    bad = write(tmp_path / "broken.stl", "solid x\n facet normal 0 0 1\n")  # truncated
    empty = tmp_path / "empty.glb"
    empty.write_bytes(b"")
    garbage = tmp_path / "garbage.glb"  # through the glTF fast path, then gjkcli.mesh.load's wording
    garbage.write_bytes(b"glTF\x02\x00\x00\x00not a scene")
    report = scan.run([SAMPLES / "collide_a.stl", bad, SAMPLES / "collide_b.stl", empty, garbage,
                       tmp_path / "missing.stl"], mode="hull", jobs=1)
    assert {e.file for e in report.errors} == {str(bad), str(empty), str(garbage), str(tmp_path / "missing.stl")}
    assert "GLB" in next(e.message for e in report.errors if e.file == str(garbage))
    assert pairs_of(report, Status.COLLISION) == {("collide_a.stl", "collide_b.stl")}
    assert report.exit_code == 2  # an input failed, even though a violation was found too
    doc = scan_document(report)
    assert doc["summary"]["exit_code"] == 2 and len(doc["errors"]) == 4


def test_one_object_says_there_are_no_pairs():
    report = scan.run([SAMPLES / "peg.stl"], jobs=1)
    assert report.exit_code == 0 and not report.pairs and report.checked == 0
    assert report.notes == ("only one object (peg.stl): there are no pairs to check",)
    nothing = scan.run([], jobs=1)
    assert nothing.notes == ("no objects were loaded: there is nothing to check",)


def test_several_files_share_world_coordinates_and_names_are_prefixed(tmp_path):
    report = scan.run([SAMPLES / "touch_a.stl", SAMPLES / "touch_b.stl", SAMPLES], mode="hull", jobs=2,
                      recurse=False)
    names = [o.name for o in report.objects]
    # a file given twice (directly and through its folder) is read once; one-object files keep their name
    assert len(names) == len(set(names)) == len(list(SAMPLES.glob("*.stl")))
    assert "touch_a.stl" in names
    assert ("touch_a.stl", "touch_b.stl") in pairs_of(report, Status.TOUCHING)


def test_progress_and_modes():
    stages = []
    scan.run([SAMPLES / "collide_a.stl", SAMPLES / "collide_b.stl"], jobs=1,
             progress=lambda stage, done, total: stages.append((stage, done, total)))
    assert {s for s, _, _ in stages} >= {"load", "hulls", "narrow"}
    assert ("narrow", 1, 1) in stages
    with pytest.raises(ValueError, match="mode"):
        scan.run([], mode="fast")


def test_the_triangles_answer_where_the_hulls_are_not_the_parts():
    """The peg passes through the ring's hole: the hulls collide, the parts do not."""
    hull = scan.run([SAMPLES / "ring.stl", SAMPLES / "peg.stl"], mode="hull", jobs=1)
    (pair,) = hull.pairs
    assert pair.status is Status.COLLISION and pair.conservative and hull.exit_code == 1
    auto = scan.run([SAMPLES / "ring.stl", SAMPLES / "peg.stl"], mode="auto", jobs=1)
    assert auto.exit_code == 0 and not auto.pairs and auto.counts["clear"] == 1
    listed = scan.run([SAMPLES / "ring.stl", SAMPLES / "peg.stl"], mode="exact", all_pairs=True, jobs=1)
    (pair,) = listed.pairs
    assert pair.mode == "exact" and pair.status is Status.CLEAR and not pair.conservative
    assert pair.result.certificate.kind == "distance"


# -- reports --------------------------------------------------------------------------------------


def test_json_follows_the_check_schema(tmp_path):
    # a sphere off the block's corner: boxes overlap, shapes do not (0.066 apart): a clear pair
    m = write(tmp_path / "m.toml", '[[object]]\nname = "block"\nbox = [2, 2, 2]\n\n[[object]]\nname = "ball"\n'
                                   'sphere = 0.5\ntranslate = [1.4, 1.4, 0]\n\n[[object]]\nname = "rod"\n'
                                   'capsule = { radius = 0.1, length = 1 }\ntranslate = [0, 0, 1]\n')
    report = scan.run([], manifest=m, all_pairs=True, jobs=1)
    doc = json.loads(json.dumps(scan_document(report), allow_nan=False))
    assert {"schema_version", "tool", "objects", "pairs", "errors", "summary"} <= set(doc)
    assert doc["schema_version"] == 2
    check_pair_keys = {"a", "b", "status", "distance", "depth", "normal", "point_a", "point_b", "iterations",
                       "mode", "certificate"}
    for p in doc["pairs"]:
        assert check_pair_keys | {"allowed", "reason", "baseline", "fails"} <= set(p)
    assert [o["name"] for o in doc["objects"]] == ["block", "ball", "rod"]
    # every pair, the one whose boxes are apart (ball and rod) too, with its distance
    assert [(p["a"], p["b"], p["status"]) for p in doc["pairs"]] == [("block", "rod", "collision"),
                                                                     ("block", "ball", "clear"),
                                                                     ("ball", "rod", "clear")]
    assert doc["pairs"][1]["distance"] == pytest.approx(2 ** 0.5 * 0.4 - 0.5)
    assert doc["summary"]["pairs"] == report.checked == 3 and doc["summary"]["exit_code"] == 1
    only = scan_document(scan.run([], manifest=m, jobs=1))  # without --all-pairs: the findings
    assert [p["status"] for p in only["pairs"]] == ["collision"] and only["summary"]["clear"] == 1


def test_junit_lists_failures(tmp_path):
    m = write(tmp_path / "m.toml", '[[object]]\nname = "a"\nbox = [1, 1, 1]\ntranslate = [10, 0, 0]\n\n'
                                   '[[object]]\nname = "b"\nbox = [1, 1, 1]\ntranslate = [10.5, 0, 0]\n\n'
                                   '[[object]]\nname = "c"\nbox = [1, 1, 1]\ntranslate = [10, 0.5, 0]\n\n'
                                   '[[allow]]\na = "c"\nb = "a"\nreason = "welded"\n')
    report = scan.run([SAMPLES / "ring.stl", tmp_path / "gone.stl"], manifest=m, jobs=1)
    root = ET.fromstring(junit_xml(report))
    suite = root.find("testsuite")
    assert suite.get("failures") == str(len(report.failures)) == "2"
    assert suite.get("errors") == "1" and suite.get("skipped") == "1"
    failed = [c.get("name") for c in suite.iter("testcase") if c.find("failure") is not None]
    assert failed == [f"{p.a} x {p.b}" for p in report.failures]
    assert suite.find("testcase/failure").get("type") == "collision"
    assert "overlap 0.5" in suite.find("testcase/failure").get("message")
    skipped = [c for c in suite.iter("testcase") if c.find("skipped") is not None]
    assert skipped[0].find("skipped").get("message") == "allowed: welded"
    # nothing to report is still one passing case
    clean = ET.fromstring(junit_xml(scan.run([SAMPLES / "peg.stl"], jobs=1)))
    assert clean.find("testsuite").get("tests") == "1" and clean.find("testsuite").get("failures") == "0"


def test_github_annotations(tmp_path):
    report = scan.run([SAMPLES / "collide_a.stl", SAMPLES / "collide_b.stl", tmp_path / "x,y.stl"], jobs=1)
    lines = github_annotations(report).splitlines()
    assert lines[0] == f"::error file={tmp_path / 'x%2Cy.stl'},title=gjk scan%3A cannot load::" \
                       f"no such file or directory; check the path"
    assert lines[1].startswith(f"::error file={SAMPLES / 'collide_a.stl'},title=gjk scan collision%3A "
                               "collide_a.stl x collide_b.stl::collide_a.stl x collide_b.stl: collision: overlap")
    assert len(lines) == 2
    assert github_annotations(scan.run([SAMPLES / "peg.stl"], jobs=1)) == ""


def test_rich_table_renders(tmp_path):
    from rich.console import Console

    from gjkcli.report.scan import render_scan, wants_progress

    m = write(tmp_path / "m.toml", '[[object]]\nname = "bolt[1]"\nbox = [1, 1, 1]\n\n[[object]]\nname = "b"\n'
                                   'box = [1, 1, 1]\ntranslate = [0.5, 0, 0]\n\n[[object]]\nname = "c"\n'
                                   'box = [1, 1, 1]\ntranslate = [0.2, 0.3, 0]\n\n[[allow]]\na = "c"\nb = "b"\n'
                                   'reason = "welded"\n')
    report = scan.run([], manifest=m, jobs=1)
    console = Console(width=140, record=True, color_system=None)  # the summary on one line
    console.print(render_scan(report))
    text = console.export_text()
    assert "bolt[1]" in text and "welded" not in text
    assert "2 failing (1 allowed, not listed: --show-allowed lists them); exit 1" in text
    console = Console(width=120, record=True, color_system=None)
    console.print(render_scan(dataclasses.replace(report, show_allowed=True)))
    text = console.export_text()
    assert "bolt[1]" in text and "allowed: welded" in text and "more" not in text
    assert "3 objects, 3 pairs checked: 3 collision, 0 undecided; 2 failing (1 allowed); exit 1" in text
    assert text.index("bolt[1]") < text.index("allowed: welded")
    console = Console(width=120, record=True, color_system=None)
    console.print(render_scan(dataclasses.replace(report, show_allowed=True), limit=2))
    assert "... and 1 more (--all-pairs or a machine format lists them all)" in console.export_text()
    assert not wants_progress(quiet=False, output_format="table", stream=None)
    assert not wants_progress(quiet=True, output_format="table", stream=None)


def test_progress_bar_only_after_a_delay():
    import io

    from rich.console import Console

    from gjkcli.report.scan import progress_callback

    for delay, drawn in ((0.0, True), (60.0, False)):
        out = io.StringIO()
        with progress_callback(Console(file=out, force_terminal=True), delay=delay) as update:
            scan.run([SAMPLES / "collide_a.stl", SAMPLES / "collide_b.stl"], progress=update, jobs=1)
        assert bool(out.getvalue()) is drawn


def test_exact_refiner_answers_for_the_parts():
    """The triangle engine answers for the parts: the peg passes through the ring's hole."""
    report = scan.run([SAMPLES / "ring.stl", SAMPLES / "peg.stl"], mode="auto",
                      all_pairs=True, jobs=1)
    (pair,) = report.pairs
    assert pair.mode == "exact" and pair.status is Status.CLEAR
    assert pair.result.distance == pytest.approx(0.35, abs=2e-3)  # a tessellated torus and cylinder
    assert report.exit_code == 0


@pytest.mark.parametrize("mode", ["auto", "exact"])
def test_box_primitive_against_a_non_convex_part_on_the_triangles(tmp_path, mode):
    """A manifest box in a ring's hole is clear by the box's corners against the ring's inner
    wall (a polygon of the ring's inner radius); moved onto the wall it collides."""
    ring = load.load_part(SAMPLES / "ring.stl")
    radius = np.linalg.norm(ring.vertices[:, :2], axis=1)
    r_in = radius.min()
    sections = len(np.unique(np.round(np.arctan2(ring.vertices[:, 1], ring.vertices[:, 0]), 6)))
    corner = np.sqrt(2) * 0.25
    for x, expect in ((0.0, Status.CLEAR), (0.5 * (r_in + radius.max()), Status.COLLISION)):
        m = tmp_path / f"box{x}.toml"
        m.write_text(f"[[include]]\nfile = '{(SAMPLES / 'ring.stl').as_posix()}'\n"
                     f"[[object]]\nname = 'box'\nbox = [0.5, 0.5, 0.5]\ntranslate = [{x}, 0, 0]\n")
        (pair,) = scan.run(manifest=m, mode=mode, all_pairs=True, jobs=1).pairs
        assert pair.mode == "exact" and pair.status is expect
        if expect is Status.CLEAR:
            assert r_in * np.cos(np.pi / sections) - corner - 1e-9 <= pair.result.distance <= r_in - corner + 1e-9
