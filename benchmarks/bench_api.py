"""The Python API against its competitors, side by side in one process.

(a) `gjkcli.CollisionManager` against trimesh's `CollisionManager` (python-fcl) on a scene of
    1,000 objects (boxes, icospheres, cylinders, annuli and capsules from trimesh.creation, random
    sizes, rotations and places): filling the manager (`add_object` per object), then
    `in_collision_internal(return_names=True)`, 1,000 `in_collision_single` calls and 200
    `min_distance_single` calls with probe objects at random poses. Each manager gets its own
    copies of the meshes (made outside the clock), so that neither reads what the other cached.
    The colliding pairs found by both are compared, and the min_distance_single answers:
    against trimesh's where both say clear; where gjk's overlap, against judges that are not
    gjk's engine (the witness point's depth inside the other part by trimesh's signed distance;
    no deeper than the hulls' penetration depth, from their Minkowski difference by qhull, and
    equal to it where both parts are convex). trimesh + FCL's value there is FCL's (for a mesh
    that is not convex, not a depth), so it is not compared. The script exits 1 on a mismatch.
(b) `gjkcli.engine.query.query(a, b)` against `coal.distance` called from Python, two hulls of
    642 vertices (trimesh icospheres, subdivisions=3) over 200 random poses (about 40% of them
    overlapping: coal then answers the signed distance through EPA, query the depth). coal's
    result is cleared before each call (a result left over lets coal skip work); the time of the
    clears alone is taken off.
(c) The two managers under moves: 300 objects (the kinds of (a)), then 100 steps of
    `set_transform` of one object to a random pose, `in_collision_internal(return_names=True)`
    and `min_distance_internal()`: what a planner's loop asks. The answers of every step are
    compared (the colliding pairs; the distances where both say clear), and gjk's overlapping
    distances judged as (a)'s.
(d) (a) again with 1,000 objects made from 5 shared meshes (each mesh added 200 times, as a
    scene of repeated parts): gjk prepares each mesh once.

The patterns of programs that use trimesh's manager, each side by side with it and its answers
compared (the script exits 1 when they differ):
(e) a planner's step: a new manager of 30 boxes at new poses, then `in_collision_other` against
    a robot's manager of 6 links; milliseconds per step, filling included (trimesh builds its
    FCL objects in `add_object`, gjk prepares on the first question: both are counted).
(f) trimesh's own `test_random_spheres`: 1,000 icospheres (642 vertices) of random radii in a
    Scene, `scene_to_collision`, `in_collision_internal()`.
(g) a grasp sampler: the Panda's hand and fingers as one mesh, `min_distance_single` at 200
    approach poses against each of three non-convex parts of ../shared/meshes in a prepared
    manager (most poses in contact: both give 0.0 there).
(h) `min_distance_single`, `_other` and `_internal` of two non-convex parts of ../shared/meshes
    placed into each other, the managers prepared outside the clock.
(g) and (h) need ../shared (GJK_SHARED names another place) and are skipped without it.
(i) a sensed scene (NVlabs/SceneCollisionNet's pattern: a table-top scene reconstructed by
    marching cubes from a depth sensor's points, an object's manager moved to 300 poses over it,
    `in_collision_other` at each): the scene one mesh of a table, six boxes and 4,000 specks
    (the isolated blobs marching cubes leaves of stray points: 4,007 bodies), the object a
    ring; filling included. Where the answers differ, gjk's collision must be a part inside the
    other's solid (the ring in a box, a speck in the ring's wall: FCL compares surfaces), judged
    by trimesh's `contains`.

Each figure is the best of several runs (--repeats for (a), 50 for (b); (e) chunk by chunk, at
least 7 runs each): other processes on the machine only ever add time.

Usage:
    python benchmarks/bench_api.py [--objects N] [--repeats R] [--seed S] [--moving N] [--steps S]
        [--fresh-steps N] [--grasps N] [--overlaps N] [--only a..i ...]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np
import trimesh
import trimesh.collision

from _common import no_gc, poses, random_rotations, to_coal, unit_vectors
from gjkcli import CollisionManager
from gjkcli.engine.query import query
from gjkcli.engine.shapes import Shape

# Timed runs are fresh runs: the gjk processes started here neither read nor write a cache
# (benchmarks/bench_cache.py times the cache).
os.environ.setdefault("GJK_NO_CACHE", "1")

try:
    import coal
except ImportError:  # pragma: no cover
    sys.exit("bench_api.py needs coal and python-fcl (pip install '.[test]')")

clock = time.perf_counter


# -- (a) the manager -------------------------------------------------------------------------------

def make_meshes(rng: np.random.Generator, n: int) -> list:
    """n meshes of five kinds, in turn, of random sizes (about 1 to 2 units across)."""
    out = []
    for k in range(n):
        s = rng.uniform(0.5, 1.0, 3)
        kind = k % 5
        if kind == 0:
            m = trimesh.creation.box(2 * s)
        elif kind == 1:
            m = trimesh.creation.icosphere(subdivisions=2, radius=s[0])
        elif kind == 2:
            m = trimesh.creation.cylinder(radius=s[0], height=2 * s[1], sections=24)
        elif kind == 3:
            m = trimesh.creation.annulus(r_min=0.5 * s[0], r_max=s[0], height=s[1], sections=24)
        else:
            m = trimesh.creation.capsule(height=2 * s[1], radius=0.5 * s[0], count=[12, 12])
        out.append(m)
    return out


def random_transforms(rng: np.random.Generator, n: int, box: float) -> np.ndarray:
    return poses(random_rotations(rng, n), rng.uniform(-box, box, size=(n, 3)))


def run_manager(cls, meshes, transforms, probes, probe_tf, distance_probes, distance_tf):
    """Seconds of each stage and the answers."""
    t = {}
    names = [f"part{k:04d}" for k in range(len(meshes))]
    t0 = clock()
    manager = cls()
    for name, mesh, T in zip(names, meshes, transforms):
        manager.add_object(name, mesh, T)
    t["fill"] = clock() - t0
    t0 = clock()
    hit, pairs = manager.in_collision_internal(return_names=True)
    t["in_collision_internal"] = clock() - t0
    t0 = clock()
    single = [manager.in_collision_single(m, T) for m, T in zip(probes, probe_tf)]
    t["in_collision_single x%d" % len(probes)] = clock() - t0
    t0 = clock()
    dist = [manager.min_distance_single(m, T) for m, T in zip(distance_probes, distance_tf)]
    t["min_distance_single x%d" % len(distance_probes)] = clock() - t0
    return t, pairs, single, dist


def bench_manager(rng, n, repeats, shared: int = 0):
    """Best times and answers of both managers; `shared` > 0: that many distinct meshes, each
    added n / shared times (the objects share them, as the parts of a scene share their file)."""
    box = 2.2 * n ** (1 / 3)  # about 20% of the objects overlap another
    meshes = make_meshes(rng, n)
    if shared:
        meshes = [meshes[k % shared] for k in range(n)]
    transforms = random_transforms(rng, n, box)
    probes = [meshes[k] for k in rng.integers(0, n, 1000)]
    probe_tf = random_transforms(rng, 1000, box)
    dprobes = [meshes[k] for k in rng.integers(0, n, 200)]
    dprobe_tf = random_transforms(rng, 200, box)
    best = {}
    for rep in range(repeats):
        for name, cls in (("gjk", CollisionManager), ("trimesh", trimesh.collision.CollisionManager)):
            made = {id(m): m.copy() for m in meshes}  # a shared mesh stays shared
            copies = [made[id(m)] for m in meshes]
            pcopies = [made[id(m)] for m in probes]
            dcopies = [made[id(m)] for m in dprobes]
            with no_gc():
                t, pairs, single, dist = run_manager(cls, copies, transforms, pcopies, probe_tf,
                                                     dcopies, dprobe_tf)
            if name not in best or sum(t.values()) < sum(best[name][0].values()):
                best[name] = (t, pairs, single, dist)
    # judged on a manager of its own, made after the timed runs (a manager kept alive would hand
    # its prepared meshes to the next run)
    best["judged"] = judge_distances(best["gjk"][3], best["trimesh"][3], meshes, transforms, dprobes,
                                     dprobe_tf)
    return best


def _hull_depth(a: np.ndarray, b: np.ndarray) -> float:
    """Penetration depth of the convex hulls of the points a and b (n, 3): the origin's distance
    to the nearest facet of their Minkowski difference (qhull), 0 when the origin lies outside."""
    from scipy.spatial import ConvexHull

    a, b = a[ConvexHull(a).vertices], b[ConvexHull(b).vertices]
    difference = ConvexHull((a[:, None, :] - b[None, :, :]).reshape(-1, 3))
    return max(float((-difference.equations[:, 3]).min()), 0.0)


def judge_distances(ours, theirs, meshes, transforms, probes, probe_tf) -> dict:
    """gjk's min_distance_single answers `ours` judged (see the module's docstring, (a)), with
    trimesh's `theirs`: counts and the largest differences."""
    index = {f"part{k:04d}": k for k in range(len(meshes))}
    manager = CollisionManager(signed=True)
    for name, mesh, T in zip(index, meshes, transforms):
        manager.add_object(name, mesh.copy(), T)
    out = _judged()
    for d, td, probe, T in zip(ours, theirs, probes, probe_tf):
        if d > 0 and td > 0:
            out["clear"] += 1
            out["clear_diff"] = max(out["clear_diff"], abs(d - td))
            continue
        if d > 0:
            continue
        d2, name, data = manager.min_distance_single(probe, T, return_name=True, return_data=True)
        # gjk's signed distance with its witnesses: at most the timed answer (trimesh + FCL's
        # convention, 0.0 for an overlap of parts not both convex; a deeper overlap of such
        # parts may then be the closest pair)
        assert d2 <= d, (d2, d)
        if d2 >= 0:
            continue
        k = index[name]
        judge_overlap(out, d2, data, (name, meshes[k], transforms[k]), ("__external", probe, T))
    return _verdict(out)


def _judged() -> dict:
    return dict(clear=0, clear_diff=0.0, overlapping=0, meshes=0, witness_diff=0.0, above_hulls=0,
                at_hulls=0, convex=0, convex_diff=0.0)


def judge_overlap(out: dict, d: float, data, a: tuple, b: tuple) -> None:
    """One overlapping answer d (< 0) for the parts a and b, each (name, mesh, transform), its
    DistanceData `data`, counted into `out`: where both parts are convex, minus the hulls' depth
    (qhull's Minkowski difference); else a witness point of one part as deep inside the other by
    trimesh's signed distance, and no deeper than the hulls' depth."""
    out["overlapping"] += 1
    (name_a, mesh_a, T_a), (name_b, mesh_b, T_b) = a, b
    part_a, part_b = mesh_a.copy().apply_transform(T_a), mesh_b.copy().apply_transform(T_b)
    upper = _hull_depth(part_a.vertices, part_b.vertices)
    if mesh_a.is_convex and mesh_b.is_convex:  # the hulls' depth, EPA's
        out["convex"] += 1
        out["convex_diff"] = max(out["convex_diff"], abs(upper + d) / upper)
        return
    # the triangles': a point of one part that deep inside the other, no deeper than the hulls
    out["meshes"] += 1
    witness = max(trimesh.proximity.signed_distance(part_a, [data.point(name_b)])[0],
                  trimesh.proximity.signed_distance(part_b, [data.point(name_a)])[0])
    out["witness_diff"] = max(out["witness_diff"], abs(witness + d) / -d)
    out["above_hulls"] += int(-d > upper * (1 + 1e-6))
    out["at_hulls"] += int(-d >= upper * (1 - 1e-6))


def _verdict(out: dict) -> dict:
    # FCL takes float32 transforms from trimesh: its clear distances are good to about 1e-6
    out["ok"] = (out["clear_diff"] <= 1e-5 and out["witness_diff"] <= 1e-6 and out["above_hulls"] == 0
                 and out["convex_diff"] <= 1e-6)
    return out


def report(out: dict) -> str:
    return (f"both clear {out['clear']} (agree to {out['clear_diff']:.1e}); overlapping {out['overlapping']}: "
            f"both convex {out['convex']} (minus the hulls' depth by qhull, to {out['convex_diff']:.1e} "
            f"relative), else {out['meshes']} (witness as deep by trimesh's signed distance, to "
            f"{out['witness_diff']:.1e} relative; deeper than the hulls {out['above_hulls']}, as deep "
            f"{out['at_hulls']})")


# -- (c) moves ------------------------------------------------------------------------------------

def run_moves(cls, meshes, transforms, moves):
    """Seconds of the moving steps (the filling and first answer outside) and every answer."""
    manager = cls()
    names = [f"part{k:04d}" for k in range(len(meshes))]
    for name, mesh, T in zip(names, meshes, transforms):
        manager.add_object(name, mesh, T)
    manager.in_collision_internal()
    answers = []
    t0 = clock()
    for k, T in moves:
        manager.set_transform(names[k], T)
        hit, pairs = manager.in_collision_internal(return_names=True)
        answers.append((pairs, manager.min_distance_internal()))
    return clock() - t0, answers


def bench_moves(rng, n, steps, repeats):
    box = 2.2 * n ** (1 / 3)
    meshes = make_meshes(rng, n)
    transforms = random_transforms(rng, n, box)
    moves = list(zip(rng.integers(0, n, steps).tolist(), random_transforms(rng, steps, box)))
    best = {}
    for rep in range(repeats):
        for name, cls in (("gjk", CollisionManager), ("trimesh", trimesh.collision.CollisionManager)):
            copies = [m.copy() for m in meshes]
            with no_gc():
                t, answers = run_moves(cls, copies, transforms, moves)
            if name not in best or t < best[name][0]:
                best[name] = (t, answers)
    same_pairs = sum(a[0] == b[0] for a, b in zip(best["gjk"][1], best["trimesh"][1]))
    both_clear = [(a[1], b[1]) for a, b in zip(best["gjk"][1], best["trimesh"][1]) if a[1] > 0 and b[1] > 0]
    diff = max((abs(a - b) / max(b, 1e-9) for a, b in both_clear), default=0.0)
    judged = judge_moves([a[1] for a in best["gjk"][1]], meshes, transforms, moves)
    return best["gjk"][0], best["trimesh"][0], same_pairs, len(both_clear), diff, judged


def judge_moves(ours, meshes, transforms, moves) -> dict:
    """The overlapping answers `ours` of min_distance_internal at each step of (c), judged as
    (a)'s (`judge_overlap`) on a manager of their own replaying the moves."""
    names = [f"part{k:04d}" for k in range(len(meshes))]
    manager = CollisionManager(signed=True)
    for name, mesh, T in zip(names, meshes, transforms):
        manager.add_object(name, mesh.copy(), T)
    placed = list(transforms)
    out = _judged()
    for d, (k, T) in zip(ours, moves):
        manager.set_transform(names[k], T)
        placed[k] = T
        if d > 0:
            continue
        d2, (a, b), data = manager.min_distance_internal(return_names=True, return_data=True)
        assert d2 <= d, (d2, d)  # as (a)'s
        if d2 >= 0:
            continue
        ka, kb = names.index(a), names.index(b)
        judge_overlap(out, d2, data, (a, meshes[ka], placed[ka]), (b, meshes[kb], placed[kb]))
    return _verdict(out)


# -- (b) one pair --------------------------------------------------------------------------------

def bench_pair(rng, m, repeats):
    ico = trimesh.creation.icosphere(subdivisions=3)
    a = Shape.hull(ico.vertices)
    base = Shape.hull(ico.vertices)
    T = poses(random_rotations(rng, m), unit_vectors(rng, m) * rng.uniform(1.6, 2.6, m)[:, None])
    bs = [base.moved(t) for t in T]
    ga, gb = to_coal(a), to_coal(base)
    tf_a = coal.Transform3s(np.ascontiguousarray(a.rotation), np.ascontiguousarray(a.translation))
    tf_b = [coal.Transform3s(np.ascontiguousarray(b.rotation), np.ascontiguousarray(b.translation))
            for b in bs]
    request, result = coal.DistanceRequest(), coal.DistanceResult()
    ours = np.array([query(a, b).signed_distance for b in bs])  # also packs each shape once
    theirs = []
    for tb in tf_b:
        result.clear()
        coal.distance(ga, tf_a, gb, tb, request, result)
        theirs.append(result.min_distance)
    distance = coal.distance
    clear = result.clear
    t_ours, t_coal, t_clear = np.inf, np.inf, np.inf
    with no_gc():
        for _ in range(repeats):  # interleaved, so that both see the same load
            t0 = clock()
            for b in bs:
                query(a, b)
            t_ours = min(t_ours, clock() - t0)
            t0 = clock()
            for tb in tf_b:
                clear()
                distance(ga, tf_a, gb, tb, request, result)
            t_coal = min(t_coal, clock() - t0)
            t0 = clock()
            for tb in tf_b:
                clear()
            t_clear = min(t_clear, clock() - t0)
    return t_ours / m, (t_coal - t_clear) / m, float(np.mean(ours < 0)), float(np.max(np.abs(ours - theirs)))



# -- (e) to (h): the patterns of programs that use trimesh's manager ---------------------------------

# the real meshes and robots (../shared from the project root; GJK_SHARED names another place)
SHARED = Path(os.environ.get("GJK_SHARED", Path(__file__).resolve().parents[2] / "shared"))


def _best(runs: dict, name: str, t: float, answers) -> None:
    if name not in runs or t < runs[name][0]:
        runs[name] = (t, answers)


def bench_fresh(rng, steps: int, repeats: int, chunk: int = 10):
    """(e) A planner's step: a new manager of 30 boxes (obstacles at new poses), asked
    `in_collision_other` against a robot's manager of 6 links (made once). Seconds per step
    (filling the new manager and the question) and the answers. The steps go in chunks of
    `chunk`, each chunk timed `repeats` times for each side in turn and its best kept: a chunk
    takes milliseconds, short enough that some run of it sees no other process."""
    boxes = [trimesh.creation.box(rng.uniform(0.1, 0.5, 3)) for _ in range(30)]
    links = [trimesh.creation.box([0.1, 0.1, 0.4]) for _ in range(6)]
    placed = [random_transforms(rng, len(boxes), 2.0) for _ in range(steps)]
    sides = (("gjk", CollisionManager), ("trimesh", trimesh.collision.CollisionManager))
    robots = {}
    for name, cls in sides:
        robot = robots[name] = cls()
        for k, link in enumerate(links):
            T = np.eye(4)
            T[2, 3] = 0.4 * k
            robot.add_object(f"link{k}", link, T)
        robot.in_collision_internal()
    total = {name: 0.0 for name, _ in sides}
    answers: dict = {name: [] for name, _ in sides}
    for start in range(0, steps, chunk):
        best = {name: np.inf for name, _ in sides}
        for rep in range(repeats):
            for name, cls in sides:
                robot, got = robots[name], []
                with no_gc():
                    t0 = clock()
                    for poses_now in placed[start: start + chunk]:
                        world = cls()
                        for k, (box, T) in enumerate(zip(boxes, poses_now)):
                            world.add_object(f"box{k}", box, T)
                        got.append(world.in_collision_other(robot, return_names=True))
                    best[name] = min(best[name], clock() - t0)
                if rep == 0:
                    answers[name] += got
        for name in total:
            total[name] += best[name]
    return {name: (total[name] / steps, answers[name]) for name in total}


def bench_spheres(repeats: int):
    """(f) trimesh's test_random_spheres: 1,000 icospheres (642 vertices) of random radii at
    random places, as a Scene, `scene_to_collision`, then `in_collision_internal()`. Seconds
    (the meshes made outside the clock)."""
    from gjkcli import scene_to_collision

    table = np.random.RandomState(seed=1).random_sample((1000, 4))
    runs: dict = {}
    for _ in range(repeats):
        for name, convert in (("gjk", scene_to_collision), ("trimesh", trimesh.collision.scene_to_collision)):
            scene = trimesh.Scene([trimesh.creation.icosphere(radius=r[0]).apply_translation(r[1:] * 100)
                                   for r in table])
            with no_gc():
                t0 = clock()
                manager, _ = convert(scene)
                hit = manager.in_collision_internal(return_names=True)
                t = clock() - t0
            _best(runs, name, t, hit)
    return runs


def panda_gripper():
    """The Panda's hand and its two fingers, open, as one mesh (a grasp sampler's gripper)."""
    hand = trimesh.load(SHARED / "robots" / "panda" / "hand.stl")
    finger = trimesh.load(SHARED / "robots" / "panda" / "finger.stl")
    left = finger.copy().apply_translation([0.0, 0.04, 0.0584])
    right = finger.copy().apply_transform(trimesh.transformations.rotation_matrix(np.pi, [0, 0, 1]))
    right.apply_translation([0.0, -0.04, 0.0584])
    return trimesh.util.concatenate([hand, left, right])


def grasp_poses(rng, count: int, near: float, far: float) -> list:
    """Approach poses: the gripper's z axis pointing at the object's centre from a random
    direction, at a distance in [near, far]."""
    out = []
    for _ in range(count):
        d = unit_vectors(rng, 1)[0]
        x = np.cross(-d, rng.normal(size=3))
        x /= np.linalg.norm(x)
        T = np.eye(4)
        T[:3, :3] = np.column_stack([x, np.cross(-d, x), -d])
        T[:3, 3] = d * rng.uniform(near, far)
        out.append(T)
    return out


def _centred(mesh, size: float):
    mesh = mesh.copy()
    mesh.apply_scale(size / mesh.scale)
    mesh.apply_translation(-mesh.bounds.mean(axis=0))
    return mesh


GRASPED = ("featuretype.STL", "idler_riser.STL", "fandisk.obj")


def bench_gripper(rng, poses_per_object: int, repeats: int):
    """(g) A grasp sampler: one non-convex object of ../shared/meshes (15 cm) in a prepared
    manager, `min_distance_single(gripper, pose)` at `poses_per_object` approach poses, most of
    them in contact. Seconds per query, over the objects of GRASPED, and the answers."""
    gripper = panda_gripper()
    objects = [_centred(trimesh.load(SHARED / "meshes" / f), 0.15) for f in GRASPED]
    poses_of = [grasp_poses(rng, poses_per_object, 0.02, 0.2) for _ in objects]
    runs: dict = {}
    for _ in range(repeats):
        for name, cls in (("gjk", CollisionManager), ("trimesh", trimesh.collision.CollisionManager)):
            t, answers = 0.0, []
            for obj, poses_now in zip(objects, poses_of):
                manager = cls()
                manager.add_object("object", obj)
                manager.min_distance_single(gripper)  # prepared outside the clock
                with no_gc():
                    t0 = clock()
                    answers += [manager.min_distance_single(gripper, T) for T in poses_now]
                    t += clock() - t0
            _best(runs, name, t / (len(objects) * poses_per_object), np.array(answers))
    return runs


OVERLAPPING = ("featuretype.STL", "idler_riser.STL", "fandisk.obj", "angle_block.STL", "plate_holes.STL",
               "octagonal_pocket.stl", "torus.STL", "1002_tray_bottom.STL")


def bench_overlapping(rng, cases: int, repeats: int):
    """(h) Overlapping non-convex parts (of ../shared/meshes, 1 unit across, centres within 0.1):
    per case `min_distance_single`, `min_distance_other` and `min_distance_internal` of two
    parts placed into each other, their managers prepared outside the clock. Seconds per
    case and the answers."""
    parts = [_centred(trimesh.load(SHARED / "meshes" / f), 1.0) for f in OVERLAPPING]
    picked = rng.integers(len(parts), size=(cases, 2))
    placed = [random_transforms(rng, 2, 0.1) for _ in range(cases)]
    runs: dict = {}
    for _ in range(repeats):
        for name, cls in (("gjk", CollisionManager), ("trimesh", trimesh.collision.CollisionManager)):
            t, answers = 0.0, []
            for (i, j), (Ta, Tb) in zip(picked.tolist(), placed):
                mine, theirs, both = cls(), cls(), cls()
                mine.add_object("a", parts[i], Ta)
                theirs.add_object("b", parts[j], Tb)
                both.add_object("a", parts[i], Ta)
                both.add_object("b", parts[j], Tb)
                for m in (mine, theirs, both):
                    m.in_collision_internal()
                with no_gc():
                    t0 = clock()
                    got = (mine.min_distance_single(parts[j], Tb), mine.min_distance_other(theirs),
                           both.min_distance_internal())
                    t += clock() - t0
                answers.append(got)
            _best(runs, name, t / cases, np.array(answers))
    return runs


def _distances_agree(ours: np.ndarray, theirs: np.ndarray) -> tuple:
    """(zeros of gjk, zeros or less of trimesh, the largest relative difference where both are
    apart, whether they agree: the same overlaps (0.0 for both), and distances to 1e-5 (FCL
    takes float32 transforms from trimesh))."""
    apart = (ours > 0) & (theirs > 0)
    diff = float(np.max(np.abs(ours - theirs)[apart] / theirs[apart], initial=0.0))
    same = bool(np.array_equal(ours == 0, theirs <= 0)) and diff <= 1e-5
    return int((ours == 0).sum()), int((theirs <= 0).sum()), diff, same


def sensed_scene(rng):
    """(i)'s scene (one mesh of 4,007 bodies), object and 300 poses above the table."""
    from trimesh import transformations as tra

    parts = [trimesh.creation.box([1.0, 1.6, 0.05], tra.translation_matrix([0, 0, -0.025]))]
    for _ in range(6):
        size = rng.uniform(0.05, 0.2, 3)
        parts.append(trimesh.creation.box(size, tra.translation_matrix(np.r_[rng.uniform(-0.4, 0.4, 2), size[2] / 2])))
    speck = trimesh.creation.icosphere(subdivisions=0, radius=0.004)
    for at in np.c_[rng.uniform(-0.5, 0.5, 4000), rng.uniform(-0.8, 0.8, 4000), rng.uniform(0.0, 0.25, 4000)]:
        parts.append(speck.copy().apply_translation(at))
    scene = trimesh.util.concatenate(parts)
    ring = trimesh.creation.annulus(0.03, 0.05, 0.1)
    poses = np.repeat(np.eye(4)[None], 300, 0)
    for pose in poses:
        pose[:3, :3] = tra.quaternion_matrix(tra.unit_vector(rng.normal(size=4)))[:3, :3]
    poses[:, :3, 3] = np.c_[rng.uniform(-0.5, 0.5, (300, 2)), rng.uniform(0.0, 0.3, 300)]
    return scene, ring, poses


def bench_sensed(rng, repeats: int):
    """(i): seconds of the whole loop (managers filled, 300 moves and questions), best of
    `repeats`, and each side's answers."""
    from gjkcli import CollisionManager

    scene, ring, poses = sensed_scene(rng)
    runs: dict = {}
    for _ in range(repeats):
        for name, cls in (("gjk", CollisionManager), ("trimesh", trimesh.collision.CollisionManager)):
            s, r = scene.copy(), ring.copy()  # neither reads what the other cached
            with no_gc():
                t0 = clock()
                sm, om = cls(), cls()
                sm.add_object("scene", s)
                om.add_object("object", r)
                hits = []
                for pose in poses:
                    om.set_transform("object", pose)
                    hits.append(bool(sm.in_collision_other(om)))
                t = clock() - t0
            _best(runs, name, t, hits)
    return runs, scene, ring, poses


def report_patterns(args, only: set) -> bool:
    """Run and print (e) to (h); False on an answer that differs."""
    ok = True
    if "e" in only:
        # chunks of 10 steps, each the best of at least 7 runs per side (see bench_fresh)
        repeats = max(args.repeats, 7)
        runs = bench_fresh(np.random.default_rng(args.seed), args.fresh_steps, repeats)
        (ours, a), (theirs, b) = runs["gjk"], runs["trimesh"]
        same = sum(x == y for x, y in zip(a, b))
        ok &= same == len(a)
        print(f"(e) a new manager of 30 boxes per step, then in_collision_other against a robot's 6 "
              f"links; {args.fresh_steps} steps, each chunk of 10 the best of {repeats} (ms per step)")
        print("| pattern | gjk | trimesh | gjk / trimesh |")
        print("|---|---|---|---|")
        print(f"| fill + in_collision_other | {ours * 1e3:.3f} | {theirs * 1e3:.3f} | {ours / theirs:.2f} |")
        print(f"answers equal at {same} of {len(a)} steps ({sum(x[0] for x in a)} colliding)")
        print(f"fresh managers ratio (gjk / trimesh): {ours / theirs:.2f}")
        print()
    if "f" in only:
        runs = bench_spheres(args.repeats)
        (ours, a), (theirs, b) = runs["gjk"], runs["trimesh"]
        ok &= a == b
        print(f"(f) trimesh's test_random_spheres: 1,000 icospheres (642 vertices), scene_to_collision "
              f"+ in_collision_internal, best of {args.repeats} (seconds)")
        print("| pattern | gjk | trimesh | gjk / trimesh |")
        print("|---|---|---|---|")
        print(f"| scene_to_collision + in_collision_internal | {ours:.3f} | {theirs:.3f} | {ours / theirs:.2f} |")
        print(f"colliding pairs: gjk {len(a[1])}, trimesh {len(b[1])}, both {len(a[1] & b[1])}; "
              f"{ours / 1000 * 1e3:.3f} ms per sphere for gjk")
        print(f"spheres ratio (gjk / trimesh): {ours / theirs:.2f}")
        print()
    if "i" in only:
        runs, scene, ring, poses = bench_sensed(np.random.default_rng(args.seed), args.repeats)
        (ours, a), (theirs, b) = runs["gjk"], runs["trimesh"]
        differ = [k for k, (x, y) in enumerate(zip(a, b)) if x != y]
        # gjk's collision where FCL's surfaces do not meet: the ring inside the scene's solid,
        # or a body of the scene (a speck) inside the ring's
        def contained(k: int) -> bool:
            if scene.contains(trimesh.transform_points(ring.vertices, poses[k])).all():
                return True
            near = scene.vertices[np.linalg.norm(scene.vertices - poses[k][:3, 3], axis=1) < 0.06]
            return bool(len(near)) and ring.contains(trimesh.transform_points(near, np.linalg.inv(poses[k]))).any()

        inside = [k for k in differ if a[k] and contained(k)]
        ok &= len(inside) == len(differ)
        print(f"(i) a sensed scene: one mesh of a table, 6 boxes and 4,000 specks "
              f"({len(scene.split(only_watertight=False))} bodies, {len(scene.faces):,} faces), a ring's "
              f"manager at {len(poses)} poses, in_collision_other, filling included, best of {args.repeats} (seconds)")
        print("| pattern | gjk | trimesh | gjk / trimesh |")
        print("|---|---|---|---|")
        print(f"| fill + set_transform + in_collision_other | {ours:.3f} | {theirs:.3f} | {ours / theirs:.2f} |")
        print(f"colliding: gjk {sum(a)}, trimesh {sum(b)} of {len(a)}; different at {len(differ)} poses, "
              f"{len(inside)} of them a part inside the other's solid (trimesh's contains)")
        print(f"sensed scene ratio (gjk / trimesh): {ours / theirs:.2f}")
        print()
    if not SHARED.is_dir():
        print(f"(g), (h) skipped: {SHARED} (real meshes and the Panda) is absent")
        return ok
    for part, title, bench, unit in (
            ("g", f"a grasp sampler: min_distance_single of the Panda's gripper against one non-convex "
                  f"object ({', '.join(GRASPED)}) at {args.grasps} poses each", bench_gripper, "query"),
            ("h", f"overlapping non-convex parts ({len(OVERLAPPING)} meshes of ../shared): "
                  f"min_distance_single + _other + _internal, {args.overlaps} cases", bench_overlapping, "case")):
        if part not in only:
            continue
        runs = bench(np.random.default_rng(args.seed), args.grasps if part == "g" else args.overlaps,
                     args.repeats)
        (ours, a), (theirs, b) = runs["gjk"], runs["trimesh"]
        zeros, their_zeros, diff, same = _distances_agree(a.ravel(), b.ravel())
        ok &= same
        print(f"({part}) {title}, best of {args.repeats} (ms per {unit})")
        print("| pattern | gjk | trimesh | gjk / trimesh |")
        print("|---|---|---|---|")
        print(f"| min_distance_* | {ours * 1e3:.3f} | {theirs * 1e3:.3f} | {ours / theirs:.2f} |")
        print(f"overlapping (0.0): gjk {zeros}, trimesh {their_zeros} of {a.size}; apart: agree to "
              f"{diff:.1e} relative")
        print(f"{'grasp' if part == 'g' else 'overlap'} ratio (gjk / trimesh): {ours / theirs:.2f}")
        print()
    return ok


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--objects", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seed", type=int, default=14)
    ap.add_argument("--moving", type=int, default=300, help="objects of (c)")
    ap.add_argument("--steps", type=int, default=100, help="steps of (c)")
    ap.add_argument("--shared", type=int, default=5, help="distinct meshes of (d)")
    ap.add_argument("--fresh-steps", type=int, default=200, help="steps of (e)")
    ap.add_argument("--grasps", type=int, default=200, help="poses per object of (g)")
    ap.add_argument("--overlaps", type=int, default=40, help="cases of (h)")
    ap.add_argument("--only", choices=tuple("abcdefghi"), action="append",
                    help="run only these parts (repeatable)")
    args = ap.parse_args()
    only = set(args.only or "abcdefghi")
    failed = not report_patterns(args, only)

    for part, shared in (("a", 0), ("d", args.shared)):
        if part not in only:
            continue
        rng = np.random.default_rng(args.seed)
        best = bench_manager(rng, args.objects, args.repeats, shared)
        ours, theirs = best["gjk"], best["trimesh"]
        what = f"{args.objects} objects" + (f" made from {shared} shared meshes" if shared else "")
        print(f"({part}) CollisionManager, {what} (seconds, best of {args.repeats})")
        print("| stage | gjk | trimesh | gjk / trimesh |")
        print("|---|---|---|---|")
        for stage in ours[0]:
            print(f"| {stage} | {ours[0][stage]:.3f} | {theirs[0][stage]:.3f} | "
                  f"{ours[0][stage] / theirs[0][stage]:.2f} |")
        total_ours, total_theirs = sum(ours[0].values()), sum(theirs[0].values())
        print(f"| total | {total_ours:.3f} | {total_theirs:.3f} | {total_ours / total_theirs:.2f} |")
        print(f"colliding pairs: gjk {len(ours[1])}, trimesh {len(theirs[1])}, both {len(ours[1] & theirs[1])}; "
              f"in_collision_single hits: gjk {sum(ours[2])}, trimesh {sum(theirs[2])}")
        j = best["judged"]
        print(f"min_distance_single: {report(j)}")
        failed = failed or not j["ok"]
        print(f"manager ratio{' (shared meshes)' if shared else ''} (gjk / trimesh, total): "
              f"{total_ours / total_theirs:.2f}")
        print()

    if "c" in only:
        t_ours, t_theirs, same, clear, diff, judged = bench_moves(np.random.default_rng(args.seed), args.moving,
                                                                  args.steps, args.repeats)
        print(f"(c) {args.moving} objects, {args.steps} x (set_transform + in_collision_internal + "
              f"min_distance_internal), best of {args.repeats}")
        print(f"gjk {t_ours:.3f} s, trimesh {t_theirs:.3f} s; colliding pairs equal at {same} of "
              f"{args.steps} steps; distances (both clear, {clear} steps) agree to {diff:.1e} relative")
        print(f"min_distance_internal where gjk's overlap: {report(judged)}")
        failed = failed or not judged["ok"]
        print(f"moves ratio (gjk / trimesh): {t_ours / t_theirs:.2f}")
        print()
    if "b" not in only:
        sys.exit(1 if failed else 0)

    per_ours, per_coal, overlap, diff = bench_pair(np.random.default_rng(args.seed), 200, 50)
    print("(b) one pair from Python: two 642-vertex hulls, 200 poses "
          f"({overlap:.0%} overlapping; signed distances agree to {diff:.1e})")
    print(f"query(a, b) {per_ours * 1e6:.2f} us, coal.distance {per_coal * 1e6:.2f} us")
    print(f"pair ratio (query / coal.distance): {per_ours / per_coal:.2f}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
