"""Nodes of a GLB scene that place one mesh share its hull (`gjkcli.mesh.load.Instance`): the
verdicts must be those of a hull per node, and python-fcl's on the same triangles."""
import dataclasses

import numpy as np
import pytest
import trimesh
from scipy.spatial.transform import Rotation

from gjkcli.pipeline import prepared
from gjkcli.engine.results import Status
from gjkcli.pipeline import run as pipeline
from gjkcli.scene import objects

fcl = pytest.importorskip("fcl", reason="the oracle is python-fcl")


def scene_file(tmp_path, seed: int):
    """A GLB of 16 nodes placing one convex mesh (40 random points' hull, about 3 across) on a
    line at random rotations and spacings, so that neighbours collide or stand apart; plus a
    mirrored and a scaled node of the same mesh, which keep their own hulls."""
    rng = np.random.default_rng(seed)
    mesh = trimesh.convex.convex_hull(rng.normal(size=(40, 3)) * [0.8, 0.5, 0.4])
    scene = trimesh.Scene()
    x = 0.0
    for k in range(16):
        T = np.eye(4)
        T[:3, :3] = Rotation.random(random_state=int(rng.integers(1 << 30))).as_matrix()
        T[:3, 3] = [x, 0.0, 0.0]
        scene.graph.update(frame_to=f"n{k:02d}", matrix=T, geometry="part")
        x += float(rng.uniform(1.5, 4.5))
    for k, S in enumerate((np.diag([-1.0, 1.0, 1.0, 1.0]), np.diag([1.5, 1.5, 1.5, 1.0]))):
        S = S.copy()
        S[:3, 3] = [x - 1.0 + k * 2.0, 0.5, 0.0]
        scene.graph.update(frame_to=f"odd{k}", matrix=S, geometry="part")
    scene.geometry["part"] = mesh
    path = tmp_path / "scene.glb"
    path.write_bytes(scene.export(file_type="glb"))
    return path


def scan(path):
    found = pipeline.scan([str(path)], pipeline.Options(all_pairs=True, tolerance=1e-9))
    assert not found.errors
    return found


@pytest.mark.parametrize("seed", [2, 9])
def test_instanced_nodes_share_one_hull_with_the_same_verdicts(tmp_path, monkeypatch, seed):
    path = scene_file(tmp_path, seed)
    calls = []
    build = prepared.build_hulls  # the prepared scene, which the scan stands on, builds them

    def counted(points, **kw):
        calls.append(len(points))
        return build(points, **kw)

    monkeypatch.setattr(prepared, "build_hulls", counted)
    found = scan(path)
    # the shared mesh once (a call of its own: up to SHARED_HULL_POINTS by the compiled core);
    # the mirrored and the scaled node on their own
    assert sorted(calls) == [1, 2]

    read = objects.read_source

    def unshared(s, strict=False):
        got = read(s, strict)
        return [dataclasses.replace(g, instance=None) if isinstance(g, objects.Geometry) else g
                for g in got] if isinstance(got, list) else got

    monkeypatch.setattr(objects, "read_source", unshared)
    alone = scan(path)
    assert calls[-1] == 18

    mine = {frozenset((p.a, p.b)): p for p in found.pairs}
    theirs = {frozenset((p.a, p.b)): p for p in alone.pairs}
    assert mine.keys() == theirs.keys()
    for key, p in mine.items():
        assert p.status is theirs[key].status
        assert p.result.distance == pytest.approx(theirs[key].result.distance, abs=1e-10)

    names = sorted(o.name for o in found.objects)
    assert len(names) == 18

    def fcl_object(name):
        v, f = found.geometry(name)
        m = fcl.BVHModel()
        m.beginModel(len(v), len(f))
        m.addSubModel(np.asarray(v, dtype=np.float64), np.asarray(f, dtype=np.int32))
        m.endModel()
        return fcl.CollisionObject(m, fcl.Transform())

    objs = {n: fcl_object(n) for n in names}
    hits = 0
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            pair = mine.get(frozenset((a, b)))
            result = fcl.DistanceResult()
            d = fcl.distance(objs[a], objs[b], fcl.DistanceRequest(), result)
            if pair is None:
                assert d > 1e-6, (a, b)  # the broad phase left out only clear pairs
                continue
            if pair.status is Status.COLLISION:
                hits += 1
                assert fcl.collide(objs[a], objs[b], fcl.CollisionRequest(), fcl.CollisionResult())
            elif pair.status is Status.CLEAR and d > 1e-9:  # convex parts: the hulls' distance
                assert pair.result.distance == pytest.approx(d, rel=1e-6, abs=1e-9), (a, b)
    assert hits >= 3
    # neighbours on the line: both collisions and clear pairs drawn
    near = [mine.get(frozenset((f"n{k:02d}", f"n{k + 1:02d}"))) for k in range(15)]
    collide = sum(p is not None and p.status is Status.COLLISION for p in near)
    assert 3 <= collide <= 12, collide
