"""`gjk scan panda.urdf --srdf panda.srdf --poses poses.csv` against trimesh + python-fcl in one
process, side by side on the same random Panda poses.

    trimesh+fcl  in this process: a trimesh.collision.CollisionManager holding every link mesh
                 (loaded by trimesh), then per pose the links' transforms set (set_transform per
                 link, from gjk's forward kinematics, checked against yourdfpy in the tests) and
                 in_collision_internal(return_names=True), the SRDF's and adjacent pairs dropped;
                 timed from reading the meshes to the last pose
    gjk          the whole `gjk scan ... --poses FILE --format json` process (interpreter start,
                 imports, reading, every pose, the report), timed from outside, as installed:
                 its bytecode cached (an untimed run first writes it, PYTHONDONTWRITEBYTECODE
                 left out of the child's environment)

Wall time and CPU time are both printed (the process's user + system time; on a shared machine
the wall time of a subprocess also counts the time others held the cores).

Both sides' failing link pairs per pose are compared and the poses where they differ printed:
fcl's mesh-against-mesh test finds crossing triangles only, so a finger wholly inside a link
(every vertex inside it, as trimesh's `contains` confirms) is clear for fcl and a collision for
gjk; gjk's touching band and fcl's exact contact may also part on grazing pairs. The poses are
uniform within the joint limits, from a seed.

Then a planner's output: `--waypoints` rows (default 10,000) along straight joint-space lines
between 11 random poses, through the whole gjk process alone (the target: under 10 s).

Usage:
    python benchmarks/bench_poses.py [--poses 3000] [--waypoints 10000] [--seed 0]
                                     [--robot ../shared/robots/panda]
"""
from __future__ import annotations

import argparse
import os
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_matrix import PACKAGE, package_tree  # noqa: E402

# Timed runs are fresh runs: the gjk processes started here neither read nor write a cache
# (benchmarks/bench_cache.py times the cache).
os.environ.setdefault("GJK_NO_CACHE", "1")


def fcl_poses(robot, srdf, Q: np.ndarray) -> tuple[float, float, list]:
    """(seconds, CPU seconds, [set of colliding (link, link) per pose]) by trimesh's
    CollisionManager."""
    import trimesh

    from gjkcli.scene import urdf

    start, cpu = time.perf_counter(), time.process_time()
    manager = trimesh.collision.CollisionManager()
    links = [c.link for c in robot.collisions]
    for c, link in zip(robot.collisions, links):
        mesh = trimesh.load(c.mesh, force="mesh")
        mesh.apply_scale(c.scale)
        mesh.apply_transform(c.origin)
        manager.add_object(link, mesh)
    allowed = {frozenset((a.a, a.b)) for a in urdf.allowed_pairs(robot, srdf)}
    index = [robot.links.index(link) for link in links]
    frames = robot.fk(Q)
    out = []
    for n in range(len(Q)):
        for link, k in zip(links, index):
            manager.set_transform(link, frames[n, k])
        _, names = manager.in_collision_internal(return_names=True)
        out.append({tuple(sorted(p)) for p in names if frozenset(p) not in allowed})
    return time.perf_counter() - start, time.process_time() - cpu, out


def gjk_poses(urdf_path: Path, srdf: Path, table: Path, n: int) -> tuple[float, float, list, int]:
    """(seconds, CPU seconds, [set of failing (link, link) per pose], exit code) of the whole
    gjk process."""
    import resource

    def children() -> float:
        r = resource.getrusage(resource.RUSAGE_CHILDREN)
        return r.ru_utime + r.ru_stime

    import os

    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    command = [sys.executable, "-m", "gjkcli", "scan", str(urdf_path), "--srdf", str(srdf),
               "--poses", str(table), "--format", "json"]
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "gjkcli")], env=env,
                   capture_output=True)  # the bytecode an installed package has
    start, cpu = time.perf_counter(), children()
    r = subprocess.run(command, capture_output=True, text=True, env=env)
    seconds, cpu = time.perf_counter() - start, children() - cpu
    if r.returncode not in (0, 1):
        raise SystemExit(f"gjk failed ({r.returncode}): {r.stderr.strip()}")
    out = [set() for _ in range(n)]
    for p in json.loads(r.stdout)["pairs"]:
        if p["fails"]:
            out[p["waypoint"]].add(tuple(sorted((p["a"], p["b"]))))
    return seconds, cpu, out, r.returncode


def main(argv=None) -> None:
    from gjkcli.scene import urdf

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--poses", type=int, default=3000)
    ap.add_argument("--waypoints", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--robot", type=Path, default=ROOT.parent / "shared" / "robots" / "panda")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        path = package_tree(args.robot, Path(tmp))
        srdf = args.robot / "panda.srdf"
        robot = urdf.load(path, ((PACKAGE, str(path.parents[1])),))
        rng = np.random.default_rng(args.seed)
        Q = rng.uniform(robot.lower, robot.upper, size=(args.poses, robot.dof))
        table = _table(Path(tmp) / "poses.csv", robot, Q)
        t_fcl, c_fcl, by_fcl = fcl_poses(robot, srdf, Q)
        t_gjk, c_gjk, by_gjk, code = gjk_poses(path, srdf, table, len(Q))
        ends = rng.uniform(robot.lower, robot.upper, size=(11, robot.dof))
        s = np.linspace(0.0, 10.0, args.waypoints)
        k = np.minimum(s.astype(int), 9)
        W = ends[k] + (s - k)[:, None] * (ends[k + 1] - ends[k])
        t_way, c_way, by_way, _ = gjk_poses(path, srdf, _table(Path(tmp) / "path.csv", robot, W), len(W))
    differ = [(n, sorted(a ^ b)) for n, (a, b) in enumerate(zip(by_fcl, by_gjk)) if a != b]
    colliding = sum(1 for s in by_fcl if s)
    print(f"{args.poses:,} random Panda poses (seed {args.seed}); {colliding:,} with a colliding "
          f"pair that the SRDF does not allow (fcl); gjk exit {code}")
    print("| side | wall (s) | CPU (s) | wall per pose (ms) | gjk / trimesh+fcl, wall | CPU |")
    print("|---|---|---|---|---|---|")
    print(f"| trimesh+fcl (in process) | {t_fcl:.2f} | {c_fcl:.2f} | {1e3 * t_fcl / args.poses:.2f} | | |")
    print(f"| gjk (whole process) | {t_gjk:.2f} | {c_gjk:.2f} | {1e3 * t_gjk / args.poses:.2f} | "
          f"{t_gjk / t_fcl:.2f} | {c_gjk / c_fcl:.2f} |")
    print(f"poses whose failing pairs differ: {len(differ)}" + "".join(
        f"\n  pose {n}: {pairs}" for n, pairs in differ[:10]))
    print(f"{args.waypoints:,} waypoints on lines between 11 random poses ({sum(1 for w in by_way if w):,} "
          f"with a failing pair): gjk {t_way:.2f} s wall, {c_way:.2f} s CPU")


def _table(path: Path, robot, Q: np.ndarray) -> Path:
    path.write_text(",".join(robot.variables) + "\n"
                    + "".join(",".join(f"{v:.17g}" for v in q) + "\n" for q in Q))
    return path


if __name__ == "__main__":
    main()
