"""Closed meshes wound inwards: read as the solids they enclose, turned outwards, and said so.

A room modelled from the inside (a game level's walls, BabylonJS's studio.gltf) is a closed box
whose faces' normals point in. gjk reads every closed mesh as a solid, and one wound inwards as
the solid it encloses (`gjkcli.engine.exact.Mesh.outward`, the hull gaps of
`gjkcli.mesh.convexity`), so the props standing in the room collide with it; FCL and trimesh's
manager, which read triangles as surfaces, call them clear. The verdict stands (documented:
closed meshes are solids); the run's note names the turned objects of its collisions, in one
process, on a cluster and from the cache alike. The scenes are built with trimesh, their truth
by construction."""
from __future__ import annotations

import json

import numpy as np
import pytest

from gjkcli.engine.topology import signed_volume
from gjkcli.pipeline import prepared, stages
from gjkcli.pipeline.cache import Cache
from gjkcli.pipeline.run import Options, scan
from gjkcli.report.jsonout import document

trimesh = pytest.importorskip("trimesh")


def _glb(path, meshes: dict):
    """A GLB of the named meshes, each a node of its own."""
    s = trimesh.Scene()
    for name, mesh in meshes.items():
        s.add_geometry(mesh, node_name=name, geom_name=name)
    path.write_bytes(s.export(file_type="glb"))
    return path


def _room_scene(path, *, inward: bool = True, subdivide: int = 0):
    """A 10 x 10 x 4 room (its faces wound inwards, or outwards), a table standing in it and a
    ball outside it, 3 away from its wall."""
    room = trimesh.creation.box(extents=(10, 10, 4))
    for _ in range(subdivide):
        room = room.subdivide()
    if inward:
        room.invert()
    table = trimesh.creation.box(extents=(1, 1, 1))
    table.apply_translation((1, 1, 0))
    ball = trimesh.creation.icosphere(radius=0.5)
    ball.apply_translation((8.5, 0, 0))
    return _glb(path, {"room": room, "table": table, "ball": ball})


def _doc(found) -> dict:
    return json.loads(json.dumps(document(found, timings=False)))


def _turned_notes(doc) -> list:
    return [n for n in doc["notes"] if "wound inwards" in n]


def test_a_room_wound_inwards_is_a_solid_and_the_note_says_so(tmp_path):
    doc = _doc(scan([str(_room_scene(tmp_path / "room.glb"))], Options(jobs=1)))
    pairs = {(p["a"], p["b"]): p for p in doc["pairs"]}
    assert set(pairs) == {("table", "room")}  # the ball, outside, is 3 away
    assert pairs["table", "room"]["status"] == "collision"
    notes = _turned_notes(doc)
    assert len(notes) == 1 and notes[0].startswith("'room' is wound inwards")
    assert "--allow 'NAME,*'" in notes[0]


def test_the_same_room_wound_outwards_has_no_note(tmp_path):
    doc = _doc(scan([str(_room_scene(tmp_path / "room.glb", inward=False))], Options(jobs=1)))
    assert [(p["a"], p["b"], p["status"]) for p in doc["pairs"]] == [("table", "room", "collision")]
    assert _turned_notes(doc) == []


def test_a_turned_part_without_a_collision_is_not_named(tmp_path):
    """Only the turned objects of the listed collisions are named: a turned part that meets
    nothing is read as it always was, and says nothing."""
    box = trimesh.creation.box(extents=(1, 1, 1))
    box.invert()
    far = trimesh.creation.box(extents=(1, 1, 1))
    far.apply_translation((5, 0, 0))
    path = _glb(tmp_path / "apart.glb", {"turned": box, "far": far})
    doc = _doc(scan([str(path)], Options(jobs=1)))
    assert doc["pairs"] == [] and _turned_notes(doc) == []


def test_many_turned_objects_are_counted_past_the_named(tmp_path):
    rooms = stages.INWARD_NAMED + 2
    meshes = {}
    for k in range(rooms):
        room = trimesh.creation.box(extents=(4, 4, 4))
        room.invert()
        room.apply_translation((10 * k, 0, 0))
        crate = trimesh.creation.box(extents=(1, 1, 1))
        crate.apply_translation((10 * k, 0, 0))
        meshes.update({f"room{k}": room, f"crate{k}": crate})
    path = _glb(tmp_path / "rooms.glb", meshes)
    doc = _doc(scan([str(path)], Options(jobs=1)))
    assert doc["summary"]["collision"] == rooms
    [note] = _turned_notes(doc)
    named = [f"'room{k}'" for k in range(rooms)]
    assert note.startswith(", ".join(sorted(named)[:stages.INWARD_NAMED]) + " and 2 more are wound inwards")


def test_wound_inwards_is_the_sign_of_the_enclosed_volume():
    """`wound_inwards` (the compiled core's sums) against `signed_volume` mesh by mesh, on seeded
    hulls far from the origin, half of them turned; a mesh with a hole is never taken for one
    wound inwards by `prepare` (not closed)."""
    rng = np.random.default_rng(46)
    vertices, faces = [], []
    for k in range(60):
        hull = trimesh.convex.convex_hull(rng.normal(size=(30, 3)) + rng.normal(size=3) * 1e4)
        vertices.append(np.asarray(hull.vertices))
        faces.append(np.asarray(hull.faces)[:, ::-1] if k % 2 else np.asarray(hull.faces))
    got = prepared.wound_inwards(vertices, faces)
    truth = np.array([signed_volume(v, f, v.mean(axis=0)) < 0 for v, f in zip(vertices, faces)])
    assert np.array_equal(got, truth) and got.sum() == 30
    holed = prepared.geometry(vertices[1], faces[1][1:])  # wound inwards, a face missing
    closed = prepared.geometry(vertices[1], faces[1])
    prepared.prepare([holed, closed])
    assert (holed.closed, closed.closed) == (False, True)
    # the closed one is wound inwards for every test; the holed one covers no hull: neither way
    assert (holed.inward, closed.inward) == (0, prepared.TURNED_CLOSED)


def test_the_cache_keeps_the_winding_with_the_hull(tmp_path, monkeypatch):
    """A room of many vertices (its hull kept by the cache): the cached run names it as the
    uncached run does, from the kept hull's row."""
    monkeypatch.setattr(stages, "KEEP_HULLS_FROM_VERTICES", 0)
    path = str(_room_scene(tmp_path / "room.glb", subdivide=3))
    plain = _doc(scan([path], Options(jobs=1)))
    assert len(_turned_notes(plain)) == 1
    scan([path], Options(jobs=1, cache=Cache(tmp_path / "cache")))
    built = []
    real = prepared._closed_wound
    monkeypatch.setattr(prepared, "_closed_wound", lambda *a, **k: built.append(len(a[0])) or real(*a, **k))
    again = Cache(tmp_path / "cache")
    assert _doc(scan([path], Options(jobs=1, cache=again))) == plain
    assert again.hits and not again.notes and built == []


def test_a_room_whose_vertices_are_split_is_named_where_its_hull_answers(tmp_path):
    """A glTF exporter splits a box's vertices along its edges (a normal per face): its faces
    close no edge by their indices, and only its hull's answers read it as a solid, turned (it
    covers its hull, BabylonJS's studio.gltf); the triangle test reads such a part as its
    surface. The note names it for a collision answered on the hulls."""
    room = trimesh.creation.box(extents=(10, 10, 4))
    room.invert()
    split = trimesh.Trimesh(room.triangles.reshape(-1, 3), np.arange(36).reshape(-1, 3), process=False)
    assert not split.is_watertight and split.volume < 0
    table = trimesh.creation.box(extents=(1, 1, 1))
    table.apply_translation((1, 1, 0))
    path = _glb(tmp_path / "split.glb", {"room": split, "table": table})
    doc = _doc(scan([str(path)], Options(jobs=1)))
    assert [(p["a"], p["b"], p["status"], p["mode"]) for p in doc["pairs"]] == [("table", "room", "collision", "hull")]
    [note] = _turned_notes(doc)
    assert note.startswith("'room' is wound inwards")


@pytest.mark.parametrize("mode", ["exact", "auto"])
def test_a_collision_kept_as_a_row_names_its_turned_room_as_a_finding_does(tmp_path, monkeypatch, mode):
    """A listing of many pairs keeps its collisions as rows, the triangles' and the hulls'
    (`gjkcli.pipeline.streamed`): the note names the turned objects of those rows as of Findings
    (here every listing is one)."""
    from gjkcli.pipeline import streamed
    from gjkcli.pipeline.findings import ListedPairs

    path = str(_room_scene(tmp_path / "room.glb"))
    monkeypatch.setattr(streamed, "STREAM_FROM", 1)
    rows = scan([path], Options(jobs=1, mode=mode))
    monkeypatch.setattr(streamed, "STREAM_FROM", 10 ** 12)
    made = scan([path], Options(jobs=1, mode=mode))
    assert isinstance(rows.pairs, ListedPairs) and rows.pairs.plain == 1 and not rows.pairs.notable
    assert _doc(rows) == _doc(made)
    assert len(_turned_notes(_doc(rows))) == 1
