"""A GLB scanned again with some of its parts moved (`gjkcli.pipeline.rescan`, the report
patched by `gjkcli.report.patch`): only the pairs of a moved part are checked again, and the
JSON is a `--no-cache` scan's byte for byte. Every cache is in tmp_path."""
from __future__ import annotations

import copy
import importlib.util
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from gjkcli.cli import main
from gjkcli.pipeline import rescan, stages

ROOT = Path(__file__).resolve().parents[2]


def _scene_script():
    """scripts/make_scan_scene.py, the benchmark's scene (loaded from its file, as
    tests/mesh/test_gltf.py does)."""
    spec = importlib.util.spec_from_file_location("make_scan_scene", ROOT / "scripts" / "make_scan_scene.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_SCRIPT = _scene_script()
scene, write_glb = _SCRIPT.scene, _SCRIPT.write_glb

PARTS = 240


def _gjk(*args):
    r = CliRunner(catch_exceptions=False).invoke(main, [str(a) for a in args])
    return r.exit_code, r.stdout_bytes, r.stderr_bytes


def _scenes(tmp_path: Path, moved=(3, 50, 117), by=(0.05, -0.03, 0.02), name="after.glb"):
    """(before.glb, after.glb, the moved parts' names): the benchmark's scene of PARTS parts,
    then with the nodes `moved` placed `by` further."""
    doc, binary = scene(PARTS, 7)
    before = tmp_path / "before.glb"
    write_glb(before, doc, binary)
    doc = copy.deepcopy(doc)
    for k in moved:
        t = doc["nodes"][k]["translation"]
        doc["nodes"][k]["translation"] = [t[0] + by[0], t[1] + by[1], t[2] + by[2]]
    after = tmp_path / name
    write_glb(after, doc, binary)
    return before, after, {doc["nodes"][k]["name"] for k in moved}


def _write(path: Path, moves: dict) -> Path:
    """The benchmark's scene of PARTS parts with the nodes of `moves` (node -> offset) moved."""
    doc, binary = scene(PARTS, 7)
    for k, by in moves.items():
        doc["nodes"][k]["translation"] = [t + d for t, d in zip(doc["nodes"][k]["translation"], by)]
    write_glb(path, doc, binary)
    return path


def _checked(monkeypatch) -> list:
    """The pairs (names) each narrow phase of the process is given, one list per call."""
    calls = []
    narrow = stages.Run.narrow

    def counted(self, parts, i, j):
        calls.append({(parts.names[a], parts.names[b]) for a, b in zip(i.tolist(), j.tolist())})
        return narrow(self, parts, i, j)

    monkeypatch.setattr(stages.Run, "narrow", counted)
    return calls


def _pairs_of(report: bytes, names: set) -> set:
    import json

    return {(p["a"], p["b"]) for p in json.loads(report)["pairs"] if p["a"] in names or p["b"] in names}


def _moved_again(tmp_path: Path, after: Path, args: list, calls: list, whole: int) -> None:
    """`after` rewritten with other parts moved: the scan with the cache `c` is the scan
    without it's, and checks a small share of the `whole` scan's pairs, in one scan."""
    again = _scenes(tmp_path, moved=(3, 200), by=(-0.4, 0.1, 0.0), name="again.glb")[1]
    after.write_bytes(again.read_bytes())
    plain = _gjk(*args, after, "--no-cache")
    del calls[:]
    assert _gjk(*args, after, "--cache-dir", tmp_path / "c") == plain
    assert len(calls) == 1 and len(calls[0]) < whole / 4


def test_a_moved_part_s_pairs_are_checked_again_and_the_rest_kept(tmp_path, monkeypatch):
    before, after, moved = _scenes(tmp_path)
    args = ["scan", "--format", "json", "--jobs", "1"]
    plain = _gjk(*args, after, "--no-cache")
    assert plain[0] == 1 and plain[1].count(b'"status":"collision"') > 50
    assert _gjk(*args, before, "--cache-dir", tmp_path / "c")[0] == 1
    calls = _checked(monkeypatch)
    got = _gjk(*args, after, "--cache-dir", tmp_path / "c")
    assert got == plain
    # one scan, of the moved parts and those near them: every listed pair of a moved part
    # checked, and a small share of the scene's pairs
    (checked,) = calls
    _gjk(*args, after, "--no-cache")
    whole = calls[1]
    assert _pairs_of(plain[1], moved) <= checked
    assert len(checked) < len(whole) / 4
    assert all(a in moved or b in moved or (a, b) in whole for a, b in checked)
    # the scene the patched run kept serves the next run: moved again, the same file rewritten
    _moved_again(tmp_path, after, args, calls, len(whole))


def test_a_report_written_to_another_file_re_checks_the_moved_parts_alone(tmp_path, monkeypatch):
    """A CI job writing each build's report to a file of its own (-o report-N.json), or a
    report first written to a file then on stdout: the scene kept serves it."""
    before, after, moved = _scenes(tmp_path)
    args = ["scan", "--format", "json", "--jobs", "1"]
    plain = _gjk(*args, after, "--no-cache")
    assert _gjk(*args, before, "--cache-dir", tmp_path / "c", "-o", tmp_path / "first.json")[0] == 1
    calls = _checked(monkeypatch)
    got = _gjk(*args, after, "--cache-dir", tmp_path / "c", "-o", tmp_path / "second.json")
    assert got[0] == 1 and (tmp_path / "second.json").read_bytes() == plain[1]
    (checked,) = calls
    _gjk(*args, after, "--no-cache")
    whole = calls[1]
    assert _pairs_of(plain[1], moved) <= checked and len(checked) < len(whole) / 4
    # and again, the report on stdout this time
    _moved_again(tmp_path, after, args, calls, len(whole))


@pytest.mark.parametrize("to_file", [True, False])
def test_a_patched_report_is_whole_whatever_its_chunks(tmp_path, monkeypatch, to_file):
    """Runs of kept lines as long as a chunk are handed on as they are (views of the last
    report), to a file and on stdout alike: the bytes are a whole scan's."""
    from gjkcli.report import chunks

    monkeypatch.setattr(chunks, "CHUNK_BYTES", 64)
    before, after, _ = _scenes(tmp_path)
    args = ["scan", "--format", "json", "--jobs", "1"]
    plain = _gjk(*args, after, "--no-cache")
    _gjk(*args, before, "--cache-dir", tmp_path / "c")
    calls = _checked(monkeypatch)
    out = ["-o", tmp_path / "report.json"] if to_file else []
    got = _gjk(*args, after, "--cache-dir", tmp_path / "c", *out)
    _gjk(*args, after, "--no-cache")
    assert got[0] == plain[0] == 1 and len(calls[0]) < len(calls[1]) / 4  # patched: the moved parts
    assert ((tmp_path / "report.json").read_bytes() if to_file else got[1]) == plain[1]


@pytest.mark.parametrize("cap", [3, 8, 25, 57, 80])
def test_collisions_that_cross_the_overlap_volumes_limit_get_a_whole_scan_s_volumes(tmp_path, monkeypatch, cap):
    # moved far enough to change which collisions are the deepest `cap`
    before, after, _ = _scenes(tmp_path, moved=(3, 50, 117, 160, 199), by=(0.6, -0.4, 0.3))
    args = ["scan", "--format", "json", "--jobs", "1", "--limit", f"overlap-volumes={cap}"]
    plain = _gjk(*args, after, "--no-cache")
    assert plain[1].count(b"deepest collisions") > 0
    _gjk(*args, before, "--cache-dir", tmp_path / "c")
    calls = _checked(monkeypatch)
    assert _gjk(*args, after, "--cache-dir", tmp_path / "c") == plain
    assert calls and len(calls[0]) < PARTS  # re-scanned, not scanned whole


def test_no_overlap_volumes_asked_for(tmp_path):
    before, after, _ = _scenes(tmp_path)
    args = ["scan", "--format", "json", "--jobs", "1", "--limit", "overlap-volumes=0"]
    plain = _gjk(*args, after, "--no-cache")
    _gjk(*args, before, "--cache-dir", tmp_path / "c")
    assert _gjk(*args, after, "--cache-dir", tmp_path / "c") == plain


def test_collisions_moving_up_into_the_limit_get_their_volumes_from_a_scan_of_their_parts(tmp_path, monkeypatch):
    # the re-scan left the kept collisions that move up into the limit without their volumes:
    # a second scan, of those pairs' parts alone, gives them
    before, after, _ = _scenes(tmp_path, moved=(3, 50, 117, 160, 199), by=(0.6, -0.4, 0.3))
    args = ["scan", "--format", "json", "--jobs", "1", "--limit", "overlap-volumes=25"]
    plain = _gjk(*args, after, "--no-cache")
    _gjk(*args, before, "--cache-dir", tmp_path / "c")
    scanned = rescan.rescan
    parts = []

    def without_volumes(*a, **k):
        got = scanned(*a, **k)
        got.volumes = set()
        return got

    def scan_parts(path, names, *a, **k):
        parts.append(names)
        return scanned_parts(path, names, *a, **k)

    scanned_parts = rescan.scan_parts
    monkeypatch.setattr(rescan, "rescan", without_volumes)
    monkeypatch.setattr(rescan, "scan_parts", scan_parts)
    assert _gjk(*args, after, "--cache-dir", tmp_path / "c") == plain
    assert len(parts) == 1 and 2 <= len(parts[0]) < 20


def test_an_edited_mesh_or_a_part_moved_past_the_scene_is_scanned_whole(tmp_path, monkeypatch):
    before, after, _ = _scenes(tmp_path, moved=(4, 9), by=(500.0, 0.0, 0.0))  # the scene's extent grows
    args = ["scan", "--format", "json", "--jobs", "1"]
    _gjk(*args, before, "--cache-dir", tmp_path / "c")
    calls = _checked(monkeypatch)
    plain = _gjk(*args, after, "--no-cache")
    whole = len(calls.pop())
    assert _gjk(*args, after, "--cache-dir", tmp_path / "c") == plain
    assert [len(c) for c in calls][-1] == whole  # the re-scan gave up: the file scanned whole
    # one vertex of one mesh moved: the meshes' bytes changed
    data = bytearray(before.read_bytes())
    chunk = 12 + 8 + int.from_bytes(data[12:16], "little") + 8
    data[chunk + 2] ^= 0x01
    after.write_bytes(bytes(data))
    _gjk(*args, before, "--cache-dir", tmp_path / "c")
    assert _gjk(*args, after, "--cache-dir", tmp_path / "c") == _gjk(*args, after, "--no-cache")


def test_a_part_moved_into_empty_space_is_re_scanned(tmp_path, monkeypatch):
    # one part far below the others, then another one halfway down (the scene's extent the same)
    before = _write(tmp_path / "before.glb", {239: (0.0, 0.0, -80.0)})
    after = _write(tmp_path / "after.glb", {239: (0.0, 0.0, -80.0), 4: (0.0, 0.0, -40.0)})
    args = ["scan", "--format", "json", "--jobs", "1"]
    plain = _gjk(*args, after, "--no-cache")
    assert b'"part_004"' in plain[1]
    _gjk(*args, before, "--cache-dir", tmp_path / "c")
    calls = _checked(monkeypatch)
    assert _gjk(*args, after, "--cache-dir", tmp_path / "c") == plain
    assert len(calls) == 1 and len(calls[0]) < 10


def test_a_damaged_scene_entry_is_ignored_with_a_note(tmp_path):
    import json

    before, after, _ = _scenes(tmp_path)
    args = ["scan", "--format", "json", "--jobs", "1"]
    _gjk(*args, before, "--cache-dir", tmp_path / "c")
    (entry,) = [p for p in (tmp_path / "c" / rescan.KIND).rglob("*") if p.is_file()]
    data = bytearray(entry.read_bytes())
    data[-5] ^= 0x20
    entry.write_bytes(bytes(data))
    got = json.loads(_gjk(*args, after, "--cache-dir", tmp_path / "c")[1])
    plain = json.loads(_gjk(*args, after, "--no-cache")[1])
    notes = [n for n in got["notes"] if n.startswith("cache: ignored the entry")]
    assert len(notes) == 1 and "checksum" in notes[0]
    got["notes"] = [n for n in got["notes"] if n not in notes]
    assert got == plain


def test_encoded_rows_are_written_as_dict_rows():
    from gjkcli.report.jsonout import Encoded, dumped_chunks, dumps, encode_row

    doc = {"a": 1, "objects": [{"x": 0.1, "y": [1, None]}, {"x": -2.5e-300}], "pairs": [], "notes": ["n"]}
    rows = [encode_row(d) for d in doc["objects"]]
    chunks = dumped_chunks({**doc, "objects": Encoded(rows), "pairs": Encoded([])})
    assert b"".join(chunks) == dumps(doc).encode() + b"\n"


def test_the_layout_finds_the_moved_nodes_and_their_boxes(tmp_path):
    from gjkcli.mesh import gltf

    before, after, moved = _scenes(tmp_path)
    a, b = gltf.layout(before), gltf.layout(after)
    assert a[0] == b[0] and a[3] == b[3] and a[4] == b[4]  # names, meshes, the rest
    changed = np.flatnonzero((a[1] != b[1]).any(axis=(1, 2)))
    assert {b[0][k] for k in changed.tolist()} == moved
    nodes, meshes = gltf.read_scene(after)
    boxes = b[5](range(len(nodes)))
    for k, (_, world, m) in enumerate(nodes):
        v = meshes[m].vertices.astype(np.float64) @ world[:3, :3].T + world[:3, 3]
        assert (v.min(axis=0) >= boxes[k, 0] - 1e-9).all() and (v.max(axis=0) <= boxes[k, 1] + 1e-9).all()


def _rings(path: Path, moved: dict, alike: bool = False) -> Path:
    """A GLB of rings (not convex: their records' convexity reasons are measured for the parts
    of listed pairs) and boxes, in a row, each of its own size (`alike`: of one size, which
    the export stores as one mesh placed many times); `moved`: node name -> offset."""
    trimesh = pytest.importorskip("trimesh")
    scene = trimesh.Scene()
    for n in range(12):
        grow = 0.0 if alike else 0.01 * n
        part = trimesh.creation.torus(1.0 + grow, 0.3) if n % 3 else trimesh.creation.box((1.2 + grow,) * 3)
        offset = np.array([1.9 * n, 0.2 * (n % 2), 0.0]) + np.asarray(moved.get(f"p{n}", (0, 0, 0)))
        scene.add_geometry(part, node_name=f"p{n}", geom_name=f"g{n}",
                           transform=trimesh.transformations.translation_matrix(offset))
    scene.export(path)
    return path


@pytest.mark.parametrize("offset", [(0.0, 0.0, 3.0), (-0.9, 0.0, 0.0), (0.5, 0.4, 0.1)])
def test_parts_that_are_not_convex_moved_into_and_out_of_their_neighbours(tmp_path, monkeypatch, offset):
    before = _rings(tmp_path / "before.glb", {})
    after = _rings(tmp_path / "after.glb", {"p4": offset, "p9": tuple(-v for v in offset)})
    args = ["scan", "--format", "json", "--jobs", "1"]
    calls = _checked(monkeypatch)
    plain = _gjk(*args, after, "--no-cache")
    assert plain[1] != _gjk(*args, before, "--no-cache")[1]
    whole = len(calls[0])
    _gjk(*args, before, "--cache-dir", tmp_path / "c")
    del calls[:]
    assert _gjk(*args, after, "--cache-dir", tmp_path / "c") == plain
    assert len(calls) == 1 and len(calls[0]) < whole  # re-scanned, not scanned whole


def test_parts_placing_one_mesh_are_scanned_whole(tmp_path, monkeypatch):
    # instances share their mesh's hull, placed: a read of some of them alone would build them
    # otherwise (its last bits), so the file is scanned whole
    before = _rings(tmp_path / "before.glb", {}, alike=True)
    after = _rings(tmp_path / "after.glb", {"p4": (0.0, 0.0, 3.0), "p9": (0.0, 0.0, -3.0)}, alike=True)
    args = ["scan", "--format", "json", "--jobs", "1"]
    plain = _gjk(*args, after, "--no-cache")
    _gjk(*args, before, "--cache-dir", tmp_path / "c")
    calls = _checked(monkeypatch)
    assert _gjk(*args, after, "--cache-dir", tmp_path / "c") == plain
    assert len(calls) == 1  # the whole scan alone: the re-scan gave up before scanning


def _grouped(path: Path, group_offset) -> Path:
    """A GLB of 16 parts of their own sizes, 3 of them children of a node "group" placed at
    `group_offset`."""
    trimesh = pytest.importorskip("trimesh")
    scene = trimesh.Scene()
    scene.graph.update(frame_from="world", frame_to="group",
                       matrix=trimesh.transformations.translation_matrix(group_offset))
    for n in range(16):
        part = trimesh.creation.icosphere(subdivisions=1, radius=0.6 + 0.01 * n)
        parent = "group" if n in (5, 6, 7) else None
        offset = (1.0 * n, 0.1 * (n % 3), 0.0) if parent is None else (0.9 * (n - 5), 0.0, 0.0)
        scene.add_geometry(part, node_name=f"p{n}", geom_name=f"g{n}", parent_node_name=parent,
                           transform=trimesh.transformations.translation_matrix(offset))
    scene.export(path)
    return path


def test_a_moved_parent_moves_its_children(tmp_path, monkeypatch):
    before = _grouped(tmp_path / "before.glb", (5.0, 0.0, 0.0))
    after = _grouped(tmp_path / "after.glb", (5.3, 0.05, 0.0))
    args = ["scan", "--format", "json", "--jobs", "1"]
    calls = _checked(monkeypatch)
    plain = _gjk(*args, after, "--no-cache")
    whole = len(calls[0])
    _gjk(*args, before, "--cache-dir", tmp_path / "c")
    del calls[:]
    assert _gjk(*args, after, "--cache-dir", tmp_path / "c") == plain
    assert len(calls) == 1 and len(calls[0]) < whole
    assert {"p5", "p6", "p7"} <= {name for pair in calls[0] for name in pair}


def test_a_whole_read_records_the_layout_a_second_read_gives(tmp_path):
    from gjkcli.mesh import gltf

    path = _scenes(tmp_path)[1]
    with gltf.recording_layout(path) as recorded:
        assert recorded() is None
        gltf.read_scene(path)
    got, again = recorded(), gltf.layout(path)
    assert got[0] == again[0] and got[3:5] == again[3:5] and (got[7] == again[7]).all()
    assert (got[1] == again[1]).all() and (got[2] == again[2]).all()
    assert got[5] is None and got[6] is None  # the read's document is not kept
