"""`gjk scan` through click's CliRunner: formats, exit codes, output files, bad input, baselines.

Scenes are built in tmp_path with trimesh, so the expected pairs are known by construction.
"""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from gjkcli.cli import main

SHARED = Path(__file__).resolve().parents[3] / "shared"


def gjk(*args, code=None):
    result = CliRunner(catch_exceptions=False).invoke(main, [str(a) for a in args])
    if code is not None:
        assert result.exit_code == code, (result.exit_code, result.stdout, result.stderr)
    return result


@pytest.fixture
def scene(tmp_path) -> Path:
    """A GLB of three named boxes: a and b overlap by 0.25, c stands 1.5 clear of both."""
    import trimesh

    s = trimesh.Scene()
    for name, x in (("a", 0.0), ("b", 0.75), ("c", 3.25)):
        s.add_geometry(trimesh.creation.box([1, 1, 1]), node_name=name, geom_name=f"box_{name}",
                       transform=trimesh.transformations.translation_matrix([x, 0, 0]))
    path = tmp_path / "cell.glb"
    s.export(path)
    return path


def test_table_names_the_collision_and_fails(scene):
    out = gjk("scan", scene, "--jobs", "1", code=1).stdout  # a pipe: a line per finding
    assert "b x a: collision: overlap 0.25 (m)" in out and "exit 1" in out
    table = gjk("scan", scene, "--jobs", "1", "--format", "table", code=1).stdout
    assert "collision" in table and " a " in f" {table} " and "exit 1" in table


def test_json_lists_the_pair_with_the_check_schema(scene):
    doc = json.loads(gjk("scan", scene, "--format", "json", "--jobs", "1", code=1).stdout)
    assert doc["schema_version"] == 2 and doc["errors"] == []
    assert [({p["a"], p["b"]}, p["status"]) for p in doc["pairs"]] == [({"a", "b"}, "collision")]
    pair = doc["pairs"][0]
    assert pair["depth"] == pytest.approx(0.25, abs=1e-6)
    assert pair["certificate"]["kind"] == "point" and pair["allowed"] is False
    assert doc["summary"]["exit_code"] == 1


def test_all_pairs_lists_clear_pairs_with_their_distance(scene):
    """Boxes grown by the clearance make b-c a candidate; with a fail_on that leaves clearance out
    it stays a clear pair, listed with its distance."""
    doc = json.loads(gjk("scan", scene, "--format", "json", "--all-pairs", "--clearance", "2",
                         "--fail-on", "collision", "--jobs", "1", code=1).stdout)
    pairs = {frozenset((p["a"], p["b"])): p for p in doc["pairs"]}
    assert pairs[frozenset("bc")]["distance"] == pytest.approx(1.5, abs=1e-9)
    assert pairs[frozenset("bc")]["fails"] is False
    without = json.loads(gjk("scan", scene, "--format", "json", "--jobs", "1", code=1).stdout)
    assert len(without["pairs"]) == 1  # only the finding


def test_clearance_turns_a_close_pair_into_a_finding(scene):
    doc = json.loads(gjk("scan", scene, "--clearance", "2", "--format", "json", "--jobs", "1", code=1).stdout)
    statuses = {frozenset((p["a"], p["b"])): p["status"] for p in doc["pairs"]}
    assert statuses[frozenset("bc")] == "clearance"


def test_junit_lists_violations_as_failures(scene, tmp_path):
    report = tmp_path / "gjk.xml"
    result = gjk("scan", scene, "--format", "junit", "--output", report, "--jobs", "1", code=1)
    assert result.stdout == ""
    root = ET.parse(report).getroot()
    failures = root.findall(".//failure")
    assert len(failures) == 1 and "collision" in failures[0].get("message", "") + (failures[0].text or "")


def test_github_annotations(scene):
    out = gjk("scan", scene, "--format", "github", "--jobs", "1", code=1).stdout
    lines = [line for line in out.splitlines() if line]
    assert len(lines) == 1 and lines[0].startswith("::error file=")


def test_allowed_pair_does_not_fail(scene, tmp_path):
    manifest = tmp_path / "cell.toml"
    manifest.write_text(f'[[include]]\nfile = "{scene.name}"\n\n[[allow]]\na = "a"\nb = "b"\n'
                        f'reason = "press fit"\n')
    doc = json.loads(gjk("scan", "--manifest", manifest, "--format", "json", "--jobs", "1", code=0).stdout)
    assert doc["pairs"] == [] and doc["summary"]["allowed"] == 1  # counted, not listed
    doc = json.loads(gjk("scan", "--manifest", manifest, "--format", "json", "--jobs", "1",
                         "--show-allowed", code=0).stdout)
    pair = doc["pairs"][0]
    assert pair["allowed"] is True and pair["reason"] == "press fit"


def test_manifest_error_names_its_line(tmp_path, scene):
    manifest = tmp_path / "bad.toml"
    manifest.write_text(f'[[include]]\nfile = "{scene.name}"\n\n[[object]]\nname = "x"\nbox = [1, 1, 1]\n'
                        f'trasform = 3\n')
    result = gjk("scan", "--manifest", manifest, code=2)
    line = result.stderr.strip()
    assert "\n" not in line and "bad.toml:7" in line and "trasform" in line
    assert "Traceback" not in result.output


def test_baseline_fails_only_on_new_findings(scene, tmp_path):
    import trimesh

    base = tmp_path / "baseline.json"
    gjk("scan", scene, "--write-baseline", base, "-q", "--jobs", "1", code=0)
    assert base.exists()
    gjk("scan", scene, "--baseline", base, "-q", "--jobs", "1", code=0)
    # a new part overlapping c is a new finding
    extra = trimesh.creation.box([1, 1, 1]).apply_translation([3.5, 0, 0])
    extra.export(tmp_path / "new.stl")
    doc = json.loads(gjk("scan", scene, tmp_path / "new.stl", "--baseline", base, "--format", "json", "--together",
                         "--jobs", "1", code=1).stdout)
    failing = [(p["a"], p["b"]) for p in doc["pairs"] if p["fails"]]
    assert failing == [("cell.glb:c", "new.stl")]


def test_bad_file_is_an_error_entry_and_the_rest_is_checked(scene, tmp_path):
    bad = tmp_path / "broken.stl"
    bad.write_bytes(b"\x00\x01garbage" * 10)
    result = gjk("scan", scene, bad, "--format", "json", "--jobs", "1", code=2)
    doc = json.loads(result.stdout)
    assert [e["file"] for e in doc["errors"]] == [str(bad)]
    assert any(p["status"] == "collision" for p in doc["pairs"])
    assert "broken.stl" in result.stderr and "Traceback" not in result.output


def test_no_input_is_a_usage_error():
    assert gjk("scan", code=2).exit_code == 2


def test_quiet_prints_nothing(scene):
    result = gjk("scan", scene, "-q", "--jobs", "1", code=1)
    assert result.stdout == "" and result.stderr == ""


@pytest.mark.shared
@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared (the real-world meshes) is absent")
def test_chain_loop_hulls_collide_but_the_links_do_not():
    chain = SHARED / "3mf" / "dodeca_chain_loop.3mf"
    hull = json.loads(gjk("scan", chain, "--split-bodies", "--mode", "hull", "--format", "json",
                          code=1).stdout)
    assert hull["summary"]["collision"] == 40
    auto = json.loads(gjk("scan", chain, "--split-bodies", "--format", "json", code=0).stdout)
    assert auto["summary"]["collision"] == 0 and len(auto["objects"]) == 40


@pytest.mark.shared
@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared (the real-world meshes) is absent")
def test_nested_scale_is_applied():
    """trimesh's CollisionManager drops node scale and calls two of these blocks colliding."""
    doc = json.loads(gjk("scan", SHARED / "meshes" / "nested.glb", "--format", "json", "--all-pairs",
                         code=0).stdout)
    assert all(p["status"] == "clear" for p in doc["pairs"])


EXACT_SCENES = ["meshes/pins.glb", "meshes/simple_pole.glb", "meshes/chair_model.obj", "meshes/nested.glb",
                "meshes/multibody.stl", "meshes/boolean.glb", "meshes/TestScene.gltf"]


@pytest.mark.shared
@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared (the real-world meshes) is absent")
@pytest.mark.parametrize("scene", EXACT_SCENES)
def test_exact_scan_finds_the_pairs_of_the_exact_engine(scene):
    """The scan's colliding pairs in exact mode are those of gjkcli.engine.exact run on every pair of the
    scene's objects (pairs whose boxes are apart, by more than the band, are clear for both)."""
    import itertools

    import numpy as np

    from gjkcli.engine.exact import Mesh, exact_query
    from gjkcli.mesh.load import load_objects

    path = SHARED / scene
    doc = json.loads(gjk("scan", path, "--mode", "exact", "--format", "json", "--jobs", "1").stdout)
    ours = {frozenset((p["a"], p["b"])) for p in doc["pairs"] if p["status"] == "collision"}
    parts = load_objects(path)
    meshes = [Mesh.from_part(p) for p in parts]
    expected = set()
    for (pa, ma), (pb, mb) in itertools.combinations(zip(parts, meshes), 2):
        if np.any(pa.bounds[0] > pb.bounds[1] + 1e-6 * pa.diagonal) or \
           np.any(pb.bounds[0] > pa.bounds[1] + 1e-6 * pb.diagonal):
            continue
        if exact_query(ma, mb).status.value == "collision":
            expected.add(frozenset((pa.name, pb.name)))
    assert ours == expected


# -- a mesh placed many times: one hull ------------------------------------------------------------


def _instanced_3mf(path: Path, vertices, faces, poses, copies: bool = False) -> None:
    """A 3MF whose one object (the mesh) is placed by one build item per pose (4x4, rigid): the
    file's own instancing, which trimesh reads as one geometry under many nodes. With `copies`,
    each item places an object of its own holding the same mesh (a copy made a separate
    object), which trimesh reads as as many geometries."""
    import zipfile

    import numpy as np

    points = "".join(f'<vertex x="{x!r}" y="{y!r}" z="{z!r}"/>' for x, y, z in np.asarray(vertices).tolist())
    triangles = "".join(f'<triangle v1="{a}" v2="{b}" v3="{c}"/>' for a, b, c in np.asarray(faces).tolist())
    mesh = f"<mesh><vertices>{points}</vertices><triangles>{triangles}</triangles></mesh>"
    ids = list(range(1, len(poses) + 1)) if copies else [1] * len(poses)
    objects = "".join(f'<object id="{k}" name="part{k}" type="model">{mesh}</object>' for k in sorted(set(ids)))
    # a 3MF transform is the 3x4 matrix's columns (m00 m01 m02 m10 ... m32), points as row vectors
    items = "".join('<item objectid="{}" transform="{}"/>'.format(k, " ".join(
        repr(float(v)) for v in np.concatenate([T[:3, :3].T.ravel(), T[:3, 3]]))) for k, T in zip(ids, poses))
    model = ('<?xml version="1.0" encoding="UTF-8"?><model unit="millimeter" '
             'xmlns="http://schemas.microsoft.com/3dmanufacturing/core/2015/02"><resources>'
             f'{objects}</resources><build>{items}</build></model>')
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("[Content_Types].xml",
                   '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/'
                   'package/2006/content-types"><Default Extension="rels" ContentType="application/'
                   'vnd.openxmlformats-package.relationships+xml"/><Default Extension="model" '
                   'ContentType="application/vnd.ms-package.3dmanufacturing-3dmodel+xml"/></Types>')
        z.writestr("_rels/.rels",
                   '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.'
                   'openxmlformats.org/package/2006/relationships"><Relationship Target="/3D/3dmodel.'
                   'model" Id="rel0" Type="http://schemas.microsoft.com/3dmanufacturing/2013/01/'
                   '3dmodel"/></Relationships>')
        z.writestr("3D/3dmodel.model", model)


@pytest.mark.parametrize("copies", [False, True], ids=["instances", "copies"])
def test_one_mesh_placed_400_times_over_two_files_is_one_hull(tmp_path, hull_builds, copies):
    """Two 3MF files placing the same mesh (a 60-point hull) 200 times each, turned at random,
    as instances of one object or as 200 objects holding copies of it: the scan prepares one
    hull (the mesh's content is the key, across files and objects), and its collision pairs are
    trimesh + python-fcl's on the placed triangles; colliding and clear neighbours both drawn."""
    import numpy as np
    import trimesh

    pytest.importorskip("fcl", reason="the oracle is trimesh's CollisionManager (python-fcl)")
    rng = np.random.default_rng(7)
    mesh = trimesh.convex.convex_hull(rng.normal(size=(60, 3)))
    placed = {"a": 0.0, "b": 35.0}  # b's first row overlaps a's last: pairs across the files
    for name, y0 in placed.items():
        poses = []
        for k in range(200):
            T = trimesh.transformations.random_rotation_matrix(rng.uniform(size=3))
            T[:3, 3] = [(k % 20) * 3.6, y0 + (k // 20) * 3.6, 0.0]
            poses.append(T)
        _instanced_3mf(tmp_path / f"{name}.3mf", mesh.vertices, mesh.faces, poses, copies)
    r = gjk("scan", tmp_path / "a.3mf", tmp_path / "b.3mf", "--format", "json", "--together")
    assert hull_builds == [1]
    doc = json.loads(r.stdout)
    assert len(doc["objects"]) == 400
    ours = {frozenset((p["a"], p["b"])) for p in doc["pairs"] if p["status"] in ("collision", "touching")}

    manager = trimesh.collision.CollisionManager()
    for name in placed:
        loaded = trimesh.load_scene(tmp_path / f"{name}.3mf")
        for node in loaded.graph.nodes_geometry:
            transform, geometry = loaded.graph[node]
            manager.add_object(f"{name}.3mf:{node}", loaded.geometry[geometry], transform=transform)
    assert {o["name"] for o in doc["objects"]} == set(manager._objs)
    _, names = manager.in_collision_internal(return_names=True)
    theirs = {frozenset(n) for n in names}
    assert ours == theirs
    assert 250 < len(ours) < 750  # of about 1,450 neighbouring pairs: many collide, many do not
    assert any(len({n.split(":")[0] for n in pair}) == 2 for pair in ours)


def test_the_repository_s_samples_scan_as_shipped(monkeypatch):
    """`gjk scan samples`: every sample is read (the ROS 2 workspace's URDF through its install
    folder's ament index, unsourced, with a note saying so); the verdict is a verdict (exit 0
    or 1), never an input error."""
    samples = Path(__file__).resolve().parents[2] / "samples"
    monkeypatch.delenv("AMENT_PREFIX_PATH", raising=False)
    monkeypatch.delenv("ROS_PACKAGE_PATH", raising=False)
    r = gjk("scan", samples, "--format", "json")
    assert r.exit_code in (0, 1), r.stderr
    doc = json.loads(r.stdout)
    assert doc["errors"] == [] and r.stderr == ""
    assert any("found in the workspace's install folder" in n for n in doc["notes"]), doc["notes"]
    assert any(o["name"].startswith("ros2_ws/arm.urdf:") or "ros2_ws" in o["file"] for o in doc["objects"])
    assert doc["run"]["together"] is False
