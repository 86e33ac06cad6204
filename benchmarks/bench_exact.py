"""The exact mesh test against python-fcl, side by side in one process.

For each pair of real meshes (../shared/meshes: featuretype.STL, bunny.ply, fandisk.obj,
ADIS16480.STL, each scaled to a unit bounding-box diagonal), random poses whose convex hulls
overlap (checked by the hull engine; between 40% and 100% of the way from touching hulls to
coincident centres) are drawn from a fixed seed; each pose is queried by both libraries in
turn, so that both see the same machine load:

- intersection: ours `gjkcli.engine._mesh.intersect` (boolean, first crossing ends it) against
  `fcl.collide` on BVHModel (OBBRSS) objects, per-call wall time, median over the poses;
- distance: on other such poses where FCL sees the meshes apart (half as many), ours
  `gjkcli.engine._mesh.distance` against `fcl.distance`;
- build: ours `gjkcli.engine._mesh.BVH` against FCL's BVHModel (beginModel, addSubModel, endModel).

Both sides are timed per call from Python with time.perf_counter, so both include their binding's
overhead. The "api" columns time the full `gjkcli.engine.exact.exact_query` (result objects,
containment probes of solid parts) for reference. Targets: ours <= 2 x FCL per query and per
build. Run: python benchmarks/bench_exact.py [--poses N] [--quick]
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

SHARED = Path(__file__).resolve().parents[2] / "shared"
NAMES = ["featuretype.STL", "bunny.ply", "fandisk.obj", "ADIS16480.STL"]
PAIRS = [(n, n) for n in NAMES] + [("featuretype.STL", "fandisk.obj"), ("bunny.ply", "ADIS16480.STL")]


def load(name: str):
    import trimesh

    m = trimesh.load(SHARED / "meshes" / name, force="mesh")
    v = np.asarray(m.vertices, dtype=np.float64)
    v = v - 0.5 * (v.min(axis=0) + v.max(axis=0))
    v /= np.linalg.norm(v.max(axis=0) - v.min(axis=0))  # unit diagonal: pairs of equal size
    return np.ascontiguousarray(v), np.ascontiguousarray(m.faces, dtype=np.int64)


def fcl_model(v, f):
    import fcl

    model = fcl.BVHModel()
    model.beginModel(len(v), len(f))
    model.addSubModel(v, f)
    model.endModel()
    return model


def random_rotation(rng) -> np.ndarray:
    q = rng.normal(size=4)
    q /= np.linalg.norm(q)
    w, x, y, z = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def overlapping_poses(va, vb, count: int, rng, depth=(0.4, 1.0), apart=None):
    """Poses of B (A at the origin) whose hulls intersect, by the hull engine: a random rotation
    and direction, and a distance along it drawn between depth[0] and depth[1] times the distance
    at which the hulls start to touch (found by bisection), so that the poses meet both answers.
    With `apart` (a function of the pose), only those where it holds, drawn at most 50 x count
    times."""
    from gjkcli.engine.query import query
    from gjkcli.engine.results import Status
    from gjkcli.engine.shapes import Shape

    hull_a, hull_b = Shape.hull(va), Shape.hull(vb)

    def placed(R, d, s):
        T = np.eye(4)
        T[:3, :3] = R
        T[:3, 3] = d * s
        return T

    poses = []
    for _ in range(50 * count):
        if len(poses) == count:
            break
        R, d = random_rotation(rng), rng.normal(size=3)
        d /= np.linalg.norm(d)
        lo, hi = 0.0, 2.0  # unit-diagonal parts: overlapping at 0, apart at 2
        for _ in range(20):
            mid = 0.5 * (lo + hi)
            apart_hulls = query(hull_a, hull_b.moved(placed(R, d, mid)), want="intersect").status is Status.CLEAR
            lo, hi = (lo, mid) if apart_hulls else (mid, hi)
        T = placed(R, d, lo * rng.uniform(*depth))
        if apart is None or apart(T):
            poses.append(T)
    return poses


def median_us(samples) -> float:
    return float(np.median(samples)) * 1e6


def build_times(v, f, repeat: int):
    from gjkcli.engine import _mesh

    f32 = f.astype(np.int32)
    ours, theirs = [], []
    for _ in range(repeat):
        t0 = time.perf_counter()
        _mesh.BVH(v, f32)
        t1 = time.perf_counter()
        fcl_model(v, f)
        t2 = time.perf_counter()
        ours.append(t1 - t0)
        theirs.append(t2 - t1)
    return float(np.median(ours)), float(np.median(theirs))


def bench_pair(name_a, name_b, meshes, n_poses: int, seed: int):
    import fcl

    from gjkcli.engine import _mesh
    from gjkcli.engine.exact import Mesh, exact_query

    (va, fa), (vb, fb) = meshes[name_a], meshes[name_b]
    A, B = Mesh.from_arrays(va, fa, name=name_a), Mesh.from_arrays(vb, fb, name=name_b)
    oa = fcl.CollisionObject(fcl_model(va, fa))
    ob = fcl.CollisionObject(fcl_model(vb, fb))
    ws = _mesh.Workspace()
    snap = 1e-12 * max(A.size, B.size)
    rng = np.random.default_rng(seed)
    request, dreq = fcl.CollisionRequest(), fcl.DistanceRequest()

    def fcl_apart(T):
        ob.setTransform(fcl.Transform(T[:3, :3], T[:3, 3]))
        return fcl.collide(oa, ob, request, fcl.CollisionResult()) == 0

    def relative(T):
        # B relative to A, both in their own frames (centred): the pose gjkcli.engine.exact computes
        return np.ascontiguousarray(np.concatenate([T[:3, :3].ravel(), T[:3, 3] + T[:3, :3] @ B.centre - A.centre]))

    rows = {"int_ours": [], "int_fcl": [], "int_api": [], "dist_ours": [], "dist_fcl": [],
            "dist_api": [], "miss_ours": [], "miss_fcl": [], "hits": 0, "disagree": 0,
            "dist_err": 0.0}
    for T in overlapping_poses(va, vb, n_poses, rng):
        rel = relative(T)
        ob.setTransform(fcl.Transform(T[:3, :3], T[:3, 3]))
        t0 = time.perf_counter()
        hit = _mesh.intersect(A.bvh, B.bvh, rel, 0.0, -1.0, snap, ws)[1]
        t1 = time.perf_counter()
        theirs = fcl.collide(oa, ob, request, fcl.CollisionResult()) > 0
        t2 = time.perf_counter()
        exact_query(A, B, pose_b=T, want="intersect")
        t3 = time.perf_counter()
        rows["int_ours"].append(t1 - t0)
        rows["int_fcl"].append(t2 - t1)
        rows["int_api"].append(t3 - t2)
        rows["hits"] += theirs
        rows["disagree"] += bool(hit) != theirs
    for T in overlapping_poses(va, vb, max(n_poses // 2, 10), rng, depth=(0.85, 1.0), apart=fcl_apart):
        rel = relative(T)
        ob.setTransform(fcl.Transform(T[:3, :3], T[:3, 3]))
        # the boolean query where it must prove the meshes apart: no early exit
        t0 = time.perf_counter()
        hit = _mesh.intersect(A.bvh, B.bvh, rel, 0.0, -1.0, snap, ws)[1]
        t1 = time.perf_counter()
        fcl.collide(oa, ob, request, fcl.CollisionResult())
        t2 = time.perf_counter()
        rows["miss_ours"].append(t1 - t0)
        rows["miss_fcl"].append(t2 - t1)
        rows["disagree"] += bool(hit)
        t0 = time.perf_counter()
        d = _mesh.distance(A.bvh, B.bvh, rel, np.inf, 0.0, snap, ws)[1]
        t1 = time.perf_counter()
        d_fcl = fcl.distance(oa, ob, dreq, fcl.DistanceResult())
        t2 = time.perf_counter()
        exact_query(A, B, pose_b=T, want="distance")
        t3 = time.perf_counter()
        rows["dist_ours"].append(t1 - t0)
        rows["dist_fcl"].append(t2 - t1)
        rows["dist_api"].append(t3 - t2)
        rows["dist_err"] = max(rows["dist_err"], abs(d - d_fcl) / d_fcl)
    return rows


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--poses", type=int, default=200, help="hull-overlapping poses per pair")
    parser.add_argument("--quick", action="store_true", help="40 poses, 3 builds")
    args = parser.parse_args(argv)
    n_poses = 40 if args.quick else args.poses
    if not (SHARED / "meshes").is_dir():
        raise SystemExit(f"the shared meshes are not at {SHARED}")
    meshes = {n: load(n) for n in NAMES}

    print("BVH build, median ms (ours: gjkcli.engine._mesh.BVH; fcl: BVHModel OBBRSS)")
    print(f"{'mesh':18s} {'triangles':>9s} {'ours':>8s} {'fcl':>8s} {'ratio':>6s}")
    for n in NAMES:
        v, f = meshes[n]
        ours, theirs = build_times(v, f, 3 if args.quick else 7)
        print(f"{n:18s} {len(f):9d} {ours * 1e3:8.2f} {theirs * 1e3:8.2f} {ours / theirs:6.2f}")

    print()
    print(f"Per query, median us: intersection over {n_poses} hull-overlapping poses ('hits' of them"
          f" intersect), distance over n poses where the hulls overlap and the meshes do not")
    print("  int: the boolean query on all poses; int apart: on the distance poses (no early exit);"
          " api: gjkcli.engine.exact.exact_query; ratio: ours / fcl")
    head = (f"{'pair':32s} {'hits':>4s} {'int ours':>8s} {'fcl':>6s} {'ratio':>5s} {'api':>6s}"
            f" {'n':>4s} {'int apart':>9s} {'fcl':>6s} {'ratio':>5s}"
            f" {'dist ours':>9s} {'fcl':>7s} {'ratio':>5s} {'api':>7s} {'rel err':>7s} {'disagree':>8s}")
    print(head)
    for k, (a, b) in enumerate(PAIRS):
        r = bench_pair(a, b, meshes, n_poses, seed=1000 + k)
        n = len(r["dist_ours"])
        io, ifc = median_us(r["int_ours"]), median_us(r["int_fcl"])
        nan = float("nan")
        mo, mfc = (median_us(r["miss_ours"]), median_us(r["miss_fcl"])) if n else (nan, nan)
        do, dfc = (median_us(r["dist_ours"]), median_us(r["dist_fcl"])) if n else (nan, nan)
        print(f"{a + ' / ' + b:32s} {r['hits']:4d} {io:8.1f} {ifc:6.1f} {io / ifc:5.2f} {median_us(r['int_api']):6.1f}"
              f" {n:4d} {mo:9.1f} {mfc:6.1f} {mo / mfc:5.2f}"
              f" {do:9.1f} {dfc:7.1f} {do / dfc:5.2f} {median_us(r['dist_api']) if n else nan:7.1f}"
              f" {r['dist_err']:7.0e} {r['disagree']:8d}")


if __name__ == "__main__":
    main()
