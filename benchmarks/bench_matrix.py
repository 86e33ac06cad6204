"""`gjk collision-matrix` against trimesh + python-fcl on the Panda, side by side in one process.

Both sides sort the same link pairs (Adjacent from the URDF, Default at the default pose, then
N random poses uniform within the joint limits, the same poses for both) into Default, Always,
Never and enabled, and both are timed from the parsed robot (the URDF read and the link meshes
loaded; building each side's own structures is inside its time):

    trimesh+fcl  a trimesh.collision.CollisionManager holding every link mesh; for each pose, the
                 links' transforms set (from gjk's forward kinematics, which is checked against
                 yourdfpy in the tests) and in_collision_internal(return_names=True): every pair
                 checked at every pose, as MoveIt's setup assistant checks its samples
    gjk          gjkcli.pipeline.matrix.collision_matrix: forward kinematics for a chunk of poses at
                 once, every (pose, pair) on the hulls in one engine batch call, the triangle test
                 where the hulls meet, pairs leaving once their class is settled; and again
                 with every pair at every pose (settle=False), the work trimesh+fcl does

The two matrices are compared (Never, Always, Default and enabled pairs must be equal), and the
ratio gjk / trimesh+fcl is printed.

Usage:
    python benchmarks/bench_matrix.py [--samples 10000] [--seed 0] [--robot ../shared/robots/panda]
"""
from __future__ import annotations

import argparse
import itertools
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "moveit_resources_panda_description"


def package_tree(robot_dir: Path, into: Path) -> Path:
    """A ROS package of links to the shared Panda files (its URDF names package:// paths)."""
    root = into / PACKAGE
    (root / "meshes" / "collision").mkdir(parents=True)
    (root / "urdf").mkdir()
    for stl in robot_dir.glob("*.stl"):
        (root / "meshes" / "collision" / stl.name).symlink_to(stl.resolve())
    (root / "urdf" / "panda.urdf").symlink_to((robot_dir / "panda.urdf").resolve())
    return root / "urdf" / "panda.urdf"


def fcl_matrix(robot, samples: int, seed: int, always: float) -> dict:
    """{(a, b): reason} (enabled pairs as "enabled") by trimesh's CollisionManager (python-fcl)."""
    import trimesh

    from gjkcli.pipeline.matrix import _key
    from gjkcli.scene import urdf

    manager = trimesh.collision.CollisionManager()
    links = [c.link for c in robot.collisions]
    for (V, F, *_), link in zip(urdf.local_meshes(robot), links):
        manager.add_object(link, trimesh.Trimesh(V, F, process=False))
    index = {name: k for k, name in enumerate(robot.links)}
    pairs = [_key(a, b) for a, b in itertools.combinations(links, 2)]
    reasons = {_key(a, b): "Adjacent" for a, b, _ in urdf.adjacent_links(robot)}

    def colliding(frames) -> set:
        for link in links:
            manager.set_transform(link, frames[index[link]])
        _, names = manager.in_collision_internal(return_names=True)
        return {_key(a, b) for a, b in names}

    for p in colliding(robot.fk(robot.default_pose()[None])[0]):
        reasons.setdefault(p, "Default")
    rng = np.random.default_rng(seed)
    Q = rng.uniform(robot.lower, robot.upper, size=(samples, robot.dof))
    hits = dict.fromkeys(pairs, 0)
    for frames in robot.fk(Q):
        for p in colliding(frames):
            hits[p] += 1
    for p in pairs:
        if p not in reasons:
            reasons[p] = "Never" if hits[p] == 0 else "Always" if hits[p] >= always * samples else "enabled"
    return reasons


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--robot", type=Path, default=ROOT.parent / "shared" / "robots" / "panda")
    args = ap.parse_args()
    if not (args.robot / "panda.urdf").is_file():
        print(f"the Panda is not at {args.robot}", file=sys.stderr)
        return 2

    from gjkcli.pipeline import matrix as matrices
    from gjkcli.scene import urdf

    with tempfile.TemporaryDirectory() as tmp:
        robot = urdf.load(package_tree(args.robot, Path(tmp)))
        urdf.local_meshes(robot)  # the files into the page cache for both sides
        t0 = time.perf_counter()
        theirs = fcl_matrix(robot, args.samples, args.seed, matrices.ALWAYS)
        t_fcl = time.perf_counter() - t0
        t0 = time.perf_counter()
        m = matrices.collision_matrix(robot, samples=args.samples, seed=args.seed)
        t_gjk = time.perf_counter() - t0
        t0 = time.perf_counter()
        every = matrices.collision_matrix(robot, samples=args.samples, seed=args.seed, settle=False)
        t_every = time.perf_counter() - t0
    ours = dict(m.reasons)
    ours.update({p: "enabled" for p in m.enabled})
    differ = {p: (ours.get(p), theirs.get(p)) for p in set(ours) | set(theirs) if ours.get(p) != theirs.get(p)}
    counts = {r: sum(1 for v in ours.values() if v == r) for r in ("Adjacent", "Default", "Always", "Never", "enabled")}
    print(f"Panda, {args.samples:,} random poses, seed {args.seed}: " + ", ".join(f"{n} {r}" for r, n in counts.items()))
    print(f"trimesh+fcl  {t_fcl:8.2f} s")
    print(f"gjk          {t_gjk:8.2f} s   (pairs leave once settled, as the command runs)")
    print(f"gjk, every   {t_every:8.2f} s   (every pair at every pose, as trimesh+fcl)")
    print(f"ratio gjk / trimesh+fcl: {t_gjk / t_fcl:.3f}; every pair at every pose: {t_every / t_fcl:.3f}")
    if (every.reasons, every.enabled) != (m.reasons, m.enabled):
        print("the two gjk runs differ", file=sys.stderr)
        return 1
    print("matrices agree" if not differ else f"matrices differ on {len(differ)} pairs: {differ}")
    return 0 if not differ else 1


if __name__ == "__main__":
    sys.exit(main())
