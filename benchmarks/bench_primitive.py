"""A curved primitive against a mesh's triangles (gjkcli.engine.primitive) beside python-fcl.

For each real mesh of ../shared/meshes (bunny.ply, fandisk.obj, scaled to a unit bounding-box
diagonal) and each primitive kind (sphere, capsule, cylinder, cone, box, sized about a fifth of
the mesh), random poses near the mesh (centres uniform in its bounding box grown by 20%) are
drawn from a fixed seed. Each pose is answered by gjk's `primitive_query` (the verdict: distance,
or depth and containment) and by FCL's own primitive against the mesh's BVHModel (`fcl.collide`,
then `fcl.distance` where the surfaces do not meet), in turn, so both see the same load. Per-call wall
time, median over the poses; and how often the two disagree on whether the surfaces are apart
(beyond FCL's 1e-6 relative precision), and how many of gjk's collisions FCL misses because one
part lies inside the other (FCL tests surfaces only).

Run: python benchmarks/bench_primitive.py [--poses N]
"""
from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np

SHARED = Path(__file__).resolve().parents[2] / "shared"
NAMES = ["bunny.ply", "fandisk.obj"]
KINDS = ["sphere", "capsule", "cylinder", "cone", "box"]


def load(name: str):
    import trimesh

    m = trimesh.load(SHARED / "meshes" / name, force="mesh")
    v = np.asarray(m.vertices, dtype=np.float64)
    v = v - 0.5 * (v.min(axis=0) + v.max(axis=0))
    v /= np.linalg.norm(v.max(axis=0) - v.min(axis=0))
    return np.ascontiguousarray(v), np.ascontiguousarray(m.faces, dtype=np.int64)


def primitive(kind: str, T: np.ndarray):
    from gjkcli.engine.shapes import Shape

    if kind == "sphere":
        return Shape.sphere(0.1, center=T[:3, 3])
    if kind == "capsule":
        return Shape.capsule(0.05, 0.2, transform=T)
    if kind == "cylinder":
        return Shape.cylinder(0.06, 0.2, transform=T)
    if kind == "cone":
        return Shape.cone(0.08, 0.2, transform=T)
    return Shape.box([0.1, 0.15, 0.2], transform=T)


def fcl_geometry(fcl, s):
    d = s.dims
    return {"point": lambda: fcl.Sphere(s.radius), "segment": lambda: fcl.Capsule(s.radius, 2 * d[0]),
            "cylinder": lambda: fcl.Cylinder(d[0], 2 * d[1]), "cone": lambda: fcl.Cone(d[0], 2 * d[1]),
            "box": lambda: fcl.Box(*(2 * d))}[s.kind]()


def main() -> None:
    import fcl
    from scipy.spatial.transform import Rotation

    from gjkcli.engine.exact import Mesh
    from gjkcli.engine.primitive import primitive_query
    from gjkcli.engine.results import Status

    parser = argparse.ArgumentParser()
    parser.add_argument("--poses", type=int, default=200)
    args = parser.parse_args()
    print("| mesh | faces | primitive | gjk median (ms) | FCL median (ms) | ratio | apart/meeting disagreements | collisions FCL misses (containment) |")
    print("|---|---|---|---|---|---|---|---|")
    for name in NAMES:
        v, f = load(name)
        mesh = Mesh(v, f, name=name)
        model = fcl.BVHModel()
        model.beginModel(len(v), len(f))
        model.addSubModel(v, f.astype(np.int32))
        model.endModel()
        other = fcl.CollisionObject(model)
        lo, hi = v.min(axis=0), v.max(axis=0)
        for kind in KINDS:
            rng = np.random.default_rng(20261125)
            ours, theirs = [], []
            disagree = inside = 0
            for _ in range(args.poses):
                T = np.eye(4)
                T[:3, :3] = Rotation.random(random_state=rng).as_matrix()
                T[:3, 3] = rng.uniform(lo - 0.2 * (hi - lo), hi + 0.2 * (hi - lo))
                s = primitive(kind, T)
                t0 = time.perf_counter()
                r = primitive_query(s, mesh)
                t1 = time.perf_counter()
                obj = fcl.CollisionObject(fcl_geometry(fcl, s), fcl.Transform(s.rotation, s.translation))
                # collide first: FCL's sphere-against-mesh distance of an overlapping pair is a
                # denormal, not 0
                hit = fcl.collide(obj, other, fcl.CollisionRequest(), fcl.CollisionResult()) > 0
                if not hit:
                    fcl.distance(obj, other, fcl.DistanceRequest(), fcl.DistanceResult())
                t2 = time.perf_counter()
                ours.append(t1 - t0)
                theirs.append(t2 - t1)
                apart_ours = r.distance > 1e-6 and r.status is not Status.COLLISION
                if r.status is Status.COLLISION and not hit:
                    inside += r.contained is not None
                    disagree += r.contained is None
                elif apart_ours == hit:
                    disagree += 1
            a, b = 1e3 * statistics.median(ours), 1e3 * statistics.median(theirs)
            print(f"| {name} | {len(f):,} | {kind} | {a:.3f} | {b:.3f} | {a / b:.2f} | {disagree} "
                  f"| {inside} |")


if __name__ == "__main__":
    main()
