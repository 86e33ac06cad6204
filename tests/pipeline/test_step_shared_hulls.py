"""Instances of one STEP product share one hull (`gjkcli.pipeline.run._Parts.build`): built in the
product's frame and moved to each instance. The verdicts must be the ones of a hull per instance,
and OpenCASCADE's on the exact solids, and python-fcl's on the triangles."""
import dataclasses
import math

import numpy as np
import pytest

from stepfiles import box, common_volume, cylinder, exact_distance, moved, write_step

from gjkcli.pipeline import prepared
from gjkcli.engine.results import Status
from gjkcli.pipeline import run as pipeline
from gjkcli.scene import objects

fcl = pytest.importorskip("fcl", reason="the triangles' oracle is python-fcl")

TOL, CLEARANCE = 1e-7, 0.05


def oracle_status(d: float, overlap: float) -> Status:
    if overlap > 0 and d <= TOL:
        return Status.COLLISION
    if d <= TOL:
        return Status.TOUCHING
    return Status.CLEARANCE if d < CLEARANCE else Status.CLEAR


def rows(tmp_path, seed: int, n_rows: int = 3, per_row: int = 6, unit: str = "MM",
         name: str = "rows.step"):
    """An assembly of rows of pegs (cylinders, each turned by a random angle, so their seams and
    triangles differ) and blocks (boxes turned by quarter turns), products centred on their z
    axis, 4 wide; neighbours in a row `gap` apart, drawn away from the touching band (so the
    triangles decide as the solids do) from [-0.8, -0.2] and [0.2, 1.0]. Returns (path, {name:
    placed solid}, [(name, its +x neighbour's name)])."""
    rng = np.random.default_rng(seed)
    peg, block = cylinder(2.0, 6.0), box(4.0, 4.0, 6.0, at=(-2.0, -2.0, 0.0))
    products = {"peg": peg, "block": block}
    instances, placed, count, neighbours = [], {}, {"peg": 0, "block": 0}, []
    for r in range(n_rows):
        x = 0.0
        for c in range(per_row):
            if c:
                neighbours.append((list(placed)[-1], None))
            kind = "peg" if rng.random() < 0.6 else "block"
            turns = rng.uniform(0, 2 * math.pi) if kind == "peg" else rng.integers(4) * math.pi / 2
            angle = float(turns)
            at = (x, 12.0 * r, 0.0)
            instances.append((kind, at, angle))
            count[kind] += 1
            placed[f"asm/{kind}:{count[kind]}"] = moved(products[kind], rotate_z=angle, translate=at)
            if c:
                neighbours[-1] = (neighbours[-1][0], f"asm/{kind}:{count[kind]}")
            gap = float(rng.uniform(0.2, 1.0) if rng.random() < 0.5 else rng.uniform(-0.8, -0.2))
            x += 4.0 + gap
    path = write_step(tmp_path / name, list(products.items()), assembly="asm", instances=instances,
                      unit=unit)
    return path, placed, neighbours


def unshared(monkeypatch):
    """Read sources as before the sharing: no object carries an Instance."""
    read = objects.read_source

    def read_source(s, strict=False):
        got = read(s, strict)
        if isinstance(got, list):
            return [dataclasses.replace(g, instance=None) if isinstance(g, objects.Geometry) else g
                    for g in got]
        return got

    monkeypatch.setattr(objects, "read_source", read_source)


def hull_counter(monkeypatch) -> list:
    """How many hulls each build_hulls call of the run builds."""
    calls = []
    build = prepared.build_hulls  # the prepared scene, which the scan stands on, builds them

    def counted(points, **kw):
        calls.append(len(points))
        return build(points, **kw)

    monkeypatch.setattr(prepared, "build_hulls", counted)
    return calls


def scan(path, *more):
    # one process: `unshared` patches the reader of this process, which forked loaders would
    # have to pickle
    found = pipeline.scan([str(path), *map(str, more)],
                          pipeline.Options(tolerance=TOL, clearance=CLEARANCE, all_pairs=True, jobs=1))
    assert not found.errors
    return found


def by_pair(found) -> dict:
    return {frozenset((p.a, p.b)): p for p in found.pairs}


def fcl_mesh(vertices, faces):
    m = fcl.BVHModel()
    m.beginModel(len(vertices), len(faces))
    m.addSubModel(np.asarray(vertices, dtype=np.float64), np.asarray(faces, dtype=np.int32))
    m.endModel()
    return fcl.CollisionObject(m, fcl.Transform())


@pytest.mark.parametrize("seed", [3, 16])
def test_shared_hulls_give_the_same_verdicts(tmp_path, monkeypatch, seed):
    """The same assembly scanned with a hull per product and with a hull per instance: the same
    pairs, verdicts and distances; each verdict OpenCASCADE's on the placed solids and, as to
    collision, python-fcl's on the triangles; collisions and clear pairs both drawn."""
    path, placed, neighbours = rows(tmp_path, seed)
    neighbours = {frozenset(n) for n in neighbours}
    with monkeypatch.context() as m:
        calls = hull_counter(m)
        found = scan(path)
    assert calls == [2]  # two products: two qhull hulls for 18 instances
    with monkeypatch.context() as m:
        unshared(m)
        calls = hull_counter(m)
        alone = scan(path)
    assert calls == [len(placed)]

    assert sorted(o.name for o in found.objects) == sorted(placed)
    shared_pairs, own_pairs = by_pair(found), by_pair(alone)
    assert shared_pairs.keys() == own_pairs.keys()
    for key, p in shared_pairs.items():
        q = own_pairs[key]
        assert p.status is q.status, (sorted(key), p.status, q.status)
        assert p.result.distance == pytest.approx(q.result.distance, abs=1e-9)
        assert (p.overlap_volume is None) == (q.overlap_volume is None)
        if p.overlap_volume is not None:
            assert p.overlap_volume == pytest.approx(q.overlap_volume, rel=1e-9)
    for a, b in zip(found.objects, alone.objects):
        assert np.allclose(a.bounds, b.bounds, rtol=0, atol=1e-12) and a.hull_vertices == b.hull_vertices

    names = sorted(placed)
    meshes = {name: fcl_mesh(*found.geometry(name)) for name in names}
    statuses = []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            d = exact_distance(placed[a], placed[b])
            want = oracle_status(d, common_volume(placed[a], placed[b]) if d <= TOL else 0.0)
            pair = shared_pairs.get(frozenset((a, b)))
            got = pair.status if pair is not None else Status.CLEAR
            assert got is want, (a, b, got, want, d)
            hit = fcl.collide(meshes[a], meshes[b], fcl.CollisionRequest(), fcl.CollisionResult())
            assert bool(hit) == (got is Status.COLLISION), (a, b, got)
            if pair is not None and got is Status.COLLISION:
                assert pair.overlap_volume == pytest.approx(common_volume(placed[a], placed[b]), rel=1e-6)
            if frozenset((a, b)) in neighbours:
                statuses.append(got)
    assert len(statuses) == 15 and 2 <= statuses.count(Status.COLLISION) <= 13


def test_a_converted_unit_keeps_the_sharing_right(tmp_path, monkeypatch):
    """An inch assembly scanned after a millimetre one is scaled into millimetres: its instances
    are scaled with it (a scaled mesh, its own hull), with the verdicts of a hull per instance."""
    mm, _, _ = rows(tmp_path, 5, n_rows=1, per_row=4)
    inch, _, _ = rows(tmp_path, 7, n_rows=1, per_row=4, unit="INCH", name="inch.step")
    with monkeypatch.context() as m:
        calls = hull_counter(m)
        found = scan(mm, inch)
    with monkeypatch.context() as m:
        unshared(m)
        alone = scan(mm, inch)
    assert found.units == "mm" and any("converted to mm" in n for n in found.notes)
    assert calls[0] < len(found.objects)  # instances shared hulls
    shared_pairs, own_pairs = by_pair(found), by_pair(alone)
    assert shared_pairs.keys() == own_pairs.keys() and shared_pairs
    for key, p in shared_pairs.items():
        assert p.status is own_pairs[key].status
        assert p.result.distance == pytest.approx(own_pairs[key].result.distance, abs=1e-8)
    for a, b in zip(found.objects, alone.objects):
        assert np.allclose(a.bounds, b.bounds, rtol=0, atol=1e-9)


def test_only_a_rigid_motion_keeps_an_instance():
    """A further rotation and translation moves the shared pose; a scale or a mirror, which do
    not commute with the hull's frame, leave the object on its own."""
    from gjkcli.mesh.load import Instance

    local = np.random.default_rng(0).normal(size=(20, 3))
    turn = np.eye(4)
    turn[:3, :3] = [[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]
    turn[:3, 3] = [1.0, 2.0, 3.0]
    inst = Instance(key="k", local=local, pose=turn)
    g = objects.Geometry(name="g", file="f", vertices=local @ turn[:3, :3].T + turn[:3, 3],
                         faces=np.zeros((1, 3), dtype=np.int64), instance=inst)
    again = objects._moved(g, turn)
    assert again.instance is not None and again.instance.key == "k"
    P = again.instance.pose
    assert np.allclose(local @ P[:3, :3].T + P[:3, 3], again.vertices, atol=1e-12)
    for T in (np.diag([2.0, 2.0, 2.0, 1.0]), np.diag([-1.0, 1.0, 1.0, 1.0])):
        assert objects._moved(g, T).instance is None


def test_a_row_of_equal_overlaps_computes_one_boolean(tmp_path, monkeypatch):
    """Pegs 7.5 mm apart (radius 4: 0.5 mm overlaps), all in the same relative pose: one
    OpenCASCADE boolean for the row, each volume still the oracle's; a turned peg and a peg at
    another pitch are other poses, computed on their own."""
    from gjkcli.mesh import cad

    peg = cylinder(4.0, 8.0)
    xs = [0.0, 7.5, 15.0, 22.5, 30.0]
    instances = [("peg", (x, 0.0, 0.0)) for x in xs] + [("peg", (37.25, 0.0, 0.0), 0.3)]
    instances += [("peg", (0.0, 20.0, 0.0)), ("peg", (7.25, 20.0, 0.0))]
    path = write_step(tmp_path / "row.step", [("peg", peg)], assembly="asm", instances=instances)
    placed = {f"asm/peg:{k + 1}": moved(peg, rotate_z=i[2] if len(i) > 2 else 0.0, translate=i[1])
              for k, i in enumerate(instances)}
    calls = []
    common = cad.common_volume

    def counted(a, b, unit):
        calls.append((a, b))
        return common(a, b, unit)

    monkeypatch.setattr(cad, "common_volume", counted)
    found = scan(path)
    collisions = [p for p in found.pairs if p.status is Status.COLLISION]
    assert len(collisions) == 6
    for p in collisions:
        assert p.overlap_volume == pytest.approx(common_volume(placed[p.a], placed[p.b]), rel=1e-6)
    # 4 pairs in one pose, the turned peg's pair, the pair at 7.25: 3 booleans
    assert len(calls) == 3
