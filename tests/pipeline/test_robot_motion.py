"""Robots at many poses and along motions: --poses and --trajectory, against python-fcl sampling
the same motions finely on the link meshes."""
from __future__ import annotations

import itertools
import json
import re

import numpy as np
import pytest

from gjkcli.engine.results import Status
from gjkcli.pipeline.motion import Motion
from gjkcli.scene import urdf


@pytest.fixture(scope="module")
def panda(panda_package):
    path = panda_package / "urdf" / "panda.urdf"
    srdf = panda_package / "urdf" / "panda.srdf"
    return path, srdf, urdf.load(path)


def _fcl_first_contact(robot, srdf, q0, q1, samples=2001):
    """The first t of `samples` evenly spaced along the motion where python-fcl finds a pair of
    link meshes (neither of one link nor allowed) colliding, or None."""
    fcl = pytest.importorskip("fcl")
    allowed = {frozenset((a.a, a.b)) for a in urdf.allowed_pairs(robot, srdf)}
    links = [c.link for c in robot.collisions]
    models = _fcl_models(robot)
    pairs = [(a, b) for a, b in itertools.combinations(range(len(links)), 2)
             if frozenset((links[a], links[b])) not in allowed]
    index = {name: k for k, name in enumerate(robot.links)}
    ts = np.linspace(0.0, 1.0, samples)
    frames = robot.fk(q0 + ts[:, None] * (q1 - q0))
    for n, t in enumerate(ts):
        objs = [fcl.CollisionObject(models[e], fcl.Transform(frames[n, index[link], :3, :3],
                                                             frames[n, index[link], :3, 3]))
                for e, link in enumerate(links)]
        for a, b in pairs:
            if fcl.collide(objs[a], objs[b], fcl.CollisionRequest(), fcl.CollisionResult()):
                return float(t), (links[a], links[b])
    return None


def _pose(robot, **values):
    q = robot.default_pose()
    for name, v in values.items():
        q[robot.variables.index(name)] = v
    return q


def test_a_grazing_motion_is_found_at_the_right_t(panda):
    """Both ends free; the hand sweeps past link5 and grazes it for about 6% of the motion."""
    path, srdf, robot = panda
    q0 = _pose(robot, panda_joint6=0.7, panda_joint7=-1.6)
    q1 = _pose(robot, panda_joint1=0.3, panda_joint2=-0.2, panda_joint6=0.7, panda_joint7=0.2)
    assert _fcl_first_contact(robot, srdf, q0, q0, samples=1) is None
    assert _fcl_first_contact(robot, srdf, q1, q1, samples=1) is None
    t_fcl, pair = _fcl_first_contact(robot, srdf, q0, q1)
    motion = Motion.build(robot, None, srdf)
    found = motion.segment(0, q0, q1, ("collision", "clearance"), "auto")
    assert [(f.a, f.b) for f in found] == [pair]
    f = found[0]
    assert f.status is Status.COLLISION and f.violation and f.segment == 0
    # never late (the first sample that collides is at or after the first contact), and within
    # one sampling step and the band's slack of it
    assert t_fcl - 5e-4 - 1e-3 <= f.t <= t_fcl


def test_a_free_motion_is_not_reported(panda):
    path, srdf, robot = panda
    q0 = _pose(robot, panda_joint6=0.7, panda_joint7=-1.6)
    q1 = _pose(robot, panda_joint1=0.3, panda_joint2=-0.2, panda_joint6=0.7, panda_joint7=-0.9)
    assert _fcl_first_contact(robot, srdf, q0, q1) is None
    assert Motion.build(robot, None, srdf).segment(0, q0, q1, ("collision",), "auto") == []


def test_motion_bound_holds_on_sampled_points(panda):
    """No vertex moves further between two nearby poses than the bound says."""
    _, srdf, robot = panda
    motion = Motion.build(robot, None, srdf)
    rng = np.random.default_rng(5)
    local = urdf.local_meshes(robot)
    for _ in range(20):
        q0, q1 = rng.uniform(robot.lower, robot.upper, size=(2, robot.dof))
        speed = motion.speeds(q0, q1)
        F0, F1 = motion.frames(q0[None])[0], motion.frames(q1[None])[0]
        ts = np.linspace(0, 1, 41)
        Fs = motion.frames(q0 + ts[:, None] * (q1 - q0))
        for e, mesh in enumerate(local):
            V = np.c_[mesh[0], np.ones(len(mesh[0]))]
            path_len = sum(np.linalg.norm((V @ (Fs[k + 1, e] - Fs[k, e]).T)[:, :3], axis=1).max()
                           for k in range(len(ts) - 1))
            assert path_len <= speed[e] * (1 + 1e-9)
        assert F0.shape == F1.shape


def _fcl_pair_distances(robot, q, pairs):
    """python-fcl's distance of each element pair (a, b) at pose q (0 where they collide)."""
    fcl = pytest.importorskip("fcl")
    links = [c.link for c in robot.collisions]
    index = {name: k for k, name in enumerate(robot.links)}
    frames = robot.fk(q[None])[0]
    objs = []
    for e, model in enumerate(_fcl_models(robot)):
        T = frames[index[links[e]]]
        objs.append(fcl.CollisionObject(model, fcl.Transform(T[:3, :3], T[:3, 3])))
    out = []
    for a, b in pairs:
        if fcl.collide(objs[a], objs[b], fcl.CollisionRequest(), fcl.CollisionResult()):
            out.append(0.0)
        else:
            out.append(fcl.distance(objs[a], objs[b], fcl.DistanceRequest(), fcl.DistanceResult()))
    return np.array(out)


_MODELS: dict = {}


def _fcl_models(robot) -> list:
    """python-fcl's BVH models of the robot's element meshes, made once."""
    if id(robot) not in _MODELS:
        models = [_fcl_model(V, F) for V, F, *_ in urdf.local_meshes(robot)]
        _MODELS[id(robot)] = (robot, models)  # the robot kept: its id is not reused
    return _MODELS[id(robot)][1]


def _fcl_model(vertices, faces):
    """python-fcl's BVH model of a triangle mesh."""
    fcl = pytest.importorskip("fcl")
    m = fcl.BVHModel()
    m.beginModel(len(vertices), len(faces))
    m.addSubModel(vertices, faces)
    m.endModel()
    return m


def test_a_pairs_distance_changes_no_faster_than_its_bound(panda):
    """The bound a pair steps by leaves out the joints above both of its links: python-fcl's
    distance of every pair, along random motions, changes by no more than it allows, though it
    is far below the sum of the two links' own bounds for a wrist's pairs."""
    _, srdf, robot = panda
    motion = Motion.build(robot, None, srdf)
    rng = np.random.default_rng(46)
    ts = np.linspace(0, 1, 21)
    tighter = 0
    for _ in range(4):
        q0, q1 = rng.uniform(robot.lower, robot.upper, size=(2, robot.dof))
        q1 = q0 + 0.3 * (q1 - q0)
        bound = motion.pair_speeds(q0, q1)
        speed = motion.speeds(q0, q1)
        world = speed[motion.pairs[:, 0]] + speed[motion.pairs[:, 1]]
        assert np.all(bound <= world * (1 + 1e-12))
        tighter += int(np.sum(bound < 0.5 * world))
        d = np.array([_fcl_pair_distances(robot, q0 + t * (q1 - q0), motion.pairs) for t in ts])
        change = np.abs(np.diff(d, axis=0)).max(axis=0)
        assert np.all(change <= bound * (ts[1] - ts[0]) * (1 + 1e-6) + 1e-9), (change, bound)
    assert tighter > 0


# A motion of the Panda built to graze link7 against link5 (a hunt over public robots' motions):
# the joint values of three consecutive waypoints (panda_joint1 to 7 and the finger). From the
# first to the second the two cross (python-fcl: from t = 0.3495 for 38% of the motion); from the
# second to the third they pass 5.6 um apart (python-fcl, its minimum refined), twice the contact
# band. Counting the joints above both links, each took the 20,000 steps the search allows.
_GRAZE = np.array([
    [0.77640683454798, -0.4031206350227414, 2.343016158810807, -1.3035217962304062,
     1.9915904396586344, 0.6871427759288206, 2.1614208131093102, 0.04],
    [0.9593554413015062, -0.5151230958797778, 2.4193581420614865, -1.3651046651554875,
     2.2791234674633047, 0.6757762980649656, 2.2302319194081637, 0.0],
    [0.7764068345479971, -0.40312063502276596, 2.3430161588107996, -1.3035217962304038,
     1.9915904396586637, 0.6875728566572948, 2.1614918554646687, 0.04],
])


def test_grazing_wrist_motions_are_settled(panda):
    path, srdf, robot = panda
    motion = Motion.build(robot, None, srdf)
    q = np.array([_pose(robot, **dict(zip(robot.variables, row))) for row in _GRAZE])
    pair = ("panda_link5", "panda_link7")
    found = motion.segment(0, q[0], q[1], ("collision",), "auto")
    assert [(f.a, f.b) for f in found] == [pair]
    t_fcl, fcl_pair = _fcl_first_contact(robot, srdf, q[0], q[1])
    assert fcl_pair == pair
    assert found[0].status is Status.COLLISION and found[0].t <= t_fcl
    assert _fcl_first_contact(robot, srdf, q[1], q[2]) is None
    assert motion.segment(1, q[1], q[2], ("collision",), "auto") == []


# Two free poses of the Panda between which its hand passes link5 5.5 mm away (python-fcl: 9.8
# and 16.4 mm at the ends, 5.53 mm at t = 0.43, sampled every 1/2000), found by a seeded search.
_PAST = np.array([
    [0.1695651204776823, -0.11304341365178822, 0.0, 0.0, 0.0, 0.8207858526112404, -0.5407927124496215, 0.0],
    [0.1238659052516928, -0.0825772701677952, 0.0, 0.0, 0.0, 0.7054776410785648, -1.0131110408807362, 0.0],
])


_SAMPLED: dict = {}


def _past_distances(robot, q0, q1, pairs):
    """(t, python-fcl's distance of the pair at t) every 1/2000 of the motion, sampled once."""
    if not _SAMPLED:
        ts = np.linspace(0, 1, 2001)
        _SAMPLED["d"] = ts, np.array([_fcl_pair_distances(robot, q0 + t * (q1 - q0), pairs)[0] for t in ts])
    return _SAMPLED["d"]


@pytest.mark.parametrize("clearance", [0.005, 0.0055, 0.006, 0.007, 0.0095])
def test_a_clearance_holds_between_waypoints(panda, clearance):
    """A pair's clearance is looked for along the motion: closer than it from a t no pose
    before which is closer than it by more than twice the band, reported at the closest pose
    found (its distance as python-fcl measures it there, the least python-fcl finds within
    CLOSEST_REL of the clearance); a clearance the motion keeps gives nothing."""
    from gjkcli.pipeline.motion import CLOSEST_REL

    path, srdf, robot = panda
    q0, q1 = (_pose(robot, **dict(zip(robot.variables, row))) for row in _PAST)
    motion = Motion.build(robot, None, srdf)
    pair = [k for k, (a, b) in enumerate(motion.pairs.tolist())
            if {motion.names[a], motion.names[b]} == {"panda_link5", "panda_hand"}]
    ts, d = _past_distances(robot, q0, q1, motion.pairs[pair])
    assert d[0] > 0.0095 and d[-1] > 0.0095 and 0.0055 < d.min() < 0.00555
    found = motion.with_clearance(np.full(len(motion.pairs), clearance)).segment(
        0, q0, q1, ("collision", "clearance"), "auto")
    if clearance < d.min():
        assert found == []
        return
    assert [(f.a, f.b, f.status) for f in found] == [("panda_link5", "panda_hand", Status.CLEARANCE)]
    f = found[0]
    assert f.violation and f.clearance == clearance and f.segment == 0
    assert f.result.distance < clearance
    assert f.result.distance <= d.min() + CLOSEST_REL * clearance + 2 * motion.band + 1e-6
    at = _fcl_pair_distances(robot, q0 + f.t * (q1 - q0), motion.pairs[pair])[0]
    assert at == pytest.approx(f.result.distance, abs=1e-6)
    first = float(re.search(r"from t = ([0-9.]+)", f.note).group(1))
    assert first <= f.t and first <= ts[np.argmax(d < clearance - 2 * motion.band)]
    # without a clearance the same motion gives nothing
    assert motion.segment(0, q0, q1, ("collision", "clearance"), "auto") == []


def test_trajectory_and_poses_through_the_cli(panda, tmp_path):
    from click.testing import CliRunner

    from gjkcli.cli import main

    path, srdf, robot = panda
    table = tmp_path / "motion.csv"
    table.write_text("panda_joint1,panda_joint2,panda_joint6,panda_joint7\n"
                     "0,0,0.7,-1.6\n0.3,-0.2,0.7,0.2\n0.3,-0.2,0.7,0.25\n")
    r = CliRunner().invoke(main, ["scan", str(path), "--srdf", str(srdf), "--trajectory", str(table),
                                  "--format", "json", "--show-allowed"])
    assert r.exit_code == 1, r.stderr
    doc = json.loads(r.stdout)
    failing = [p for p in doc["pairs"] if p["fails"]]
    assert [(p["a"], p["b"], p["segment"]) for p in failing] == [("panda_link5", "panda_hand", 0)]
    assert 0.47 < failing[0]["t"] < 0.49
    # --show-allowed: the waypoints' pairs, all allowed, are checked and listed at each pose
    listed = [p for p in doc["pairs"] if "waypoint" in p]
    assert listed and all(p["allowed"] and not p["fails"] for p in listed)
    # without it they are counted, not listed: the robot is prepared once for the many poses
    r = CliRunner().invoke(main, ["scan", str(path), "--srdf", str(srdf), "--trajectory", str(table),
                                  "--format", "json"])
    doc = json.loads(r.stdout)
    assert not any("waypoint" in p for p in doc["pairs"])
    assert any("allowed pairs of links (adjacent, SRDF) not checked" in n for n in doc["notes"])
    r = CliRunner().invoke(main, ["scan", str(path), "--srdf", str(srdf), "--poses", str(table),
                                  "--format", "json"])
    assert r.exit_code == 0, r.stderr
    assert all("segment" not in p for p in json.loads(r.stdout)["pairs"])
    bad = tmp_path / "bad.csv"
    bad.write_text("panda_joint4\n0.5\n")
    r = CliRunner().invoke(main, ["scan", str(path), "--poses", str(bad)])
    assert r.exit_code == 2
    assert "bad.csv:2: joint panda_joint4 = 0.5 is outside its limits" in r.stderr


def test_a_fixed_object_in_the_way_is_found_on_the_motion(panda, tmp_path):
    """The ready pose swung about joint 1 from -0.6 to 0.6 rad; a ball sits where the hand is at
    0: both ends are clear of it, the motion is not; the first contact against python-fcl."""
    import trimesh
    from click.testing import CliRunner

    from gjkcli.cli import main

    fcl = pytest.importorskip("fcl")
    path, srdf, robot = panda
    ready = urdf.parse_joints(robot, "ready", srdf)
    hand = robot.fk(ready[None])[0][robot.links.index("panda_hand"), :3, 3]
    ball = trimesh.creation.icosphere(radius=0.03)
    ball.apply_translation(hand)
    ball.export(tmp_path / "ball.stl")
    table = tmp_path / "sweep.csv"
    table.write_text("panda_joint1,panda_joint2,panda_joint4,panda_joint6,panda_joint7\n"
                     "-0.6,-0.785,-2.356,1.571,0.785\n0.6,-0.785,-2.356,1.571,0.785\n")
    r = CliRunner().invoke(main, ["scan", str(path), str(tmp_path / "ball.stl"), "--together", "--srdf", str(srdf),
                                  "--trajectory", str(table), "--format", "json"])
    assert r.exit_code == 1, r.stderr
    doc = json.loads(r.stdout)
    first = min((p for p in doc["pairs"] if p["fails"]), key=lambda p: p["t"])
    assert first["segment"] == 0 and "ball.stl" in (first["a"], first["b"])
    assert all(p["waypoint"] in (0, 1) and not p["fails"] for p in doc["pairs"] if "waypoint" in p)
    # python-fcl: the robot's meshes against the ball's, sampled along the motion
    q0, q1 = ready.copy(), ready.copy()
    q0[0], q1[0] = -0.6, 0.6
    target = fcl.CollisionObject(_fcl_model(ball.vertices, ball.faces), fcl.Transform())
    links = [c.link for c in robot.collisions]
    models = _fcl_models(robot)
    index = {name: k for k, name in enumerate(robot.links)}
    t_fcl = None
    for t in np.linspace(0, 1, 1201):
        frames = robot.fk((q0 + t * (q1 - q0))[None])[0]
        for m, link in zip(models, links):
            T = frames[index[link]]
            if fcl.collide(fcl.CollisionObject(m, fcl.Transform(T[:3, :3], T[:3, 3])), target,
                           fcl.CollisionRequest(), fcl.CollisionResult()):
                t_fcl = t
                break
        if t_fcl is not None:
            break
    assert t_fcl is not None and 0 < t_fcl < 1
    assert t_fcl - 1 / 1200 - 1e-3 <= first["t"] <= t_fcl


@pytest.mark.parametrize("margin", [-0.004, 0.004])
def test_a_check_s_clearance_holds_on_the_motion(panda, tmp_path, margin):
    """A manifest's [[check]] of the robot against a ball beside the hand's path, its clearance
    4 mm over or under the least gap python-fcl finds along the motion (the ends farther than
    both): a clearance finding between the waypoints, closer than the clearance where
    python-fcl measures it, or nothing."""
    import trimesh
    from click.testing import CliRunner

    from gjkcli.cli import main

    fcl = pytest.importorskip("fcl")
    path, srdf, robot = panda
    ready = urdf.parse_joints(robot, "ready", srdf)
    hand = robot.fk(ready[None])[0][robot.links.index("panda_hand"), :3, 3]
    ball = trimesh.creation.icosphere(radius=0.03)
    ball.apply_translation(hand + [0.1, 0.0, 0.0])
    ball.export(tmp_path / "ball.stl")
    q0, q1 = ready.copy(), ready.copy()
    q0[0], q1[0] = -0.6, 0.6
    target = fcl.CollisionObject(_fcl_model(ball.vertices, ball.faces), fcl.Transform())
    links, index = [c.link for c in robot.collisions], {name: k for k, name in enumerate(robot.links)}

    def gap(t: float) -> float:
        frames = robot.fk((q0 + t * (q1 - q0))[None])[0]
        return min(fcl.distance(fcl.CollisionObject(m, fcl.Transform(frames[index[link], :3, :3],
                                                                      frames[index[link], :3, 3])),
                                target, fcl.DistanceRequest(), fcl.DistanceResult())
                   for m, link in zip(_fcl_models(robot), links))

    ts = np.linspace(0, 1, 401)
    gaps = np.array([gap(t) for t in ts])
    least = float(gaps.min())
    assert 0.01 < least and gaps[0] > least + 0.01 and gaps[-1] > least + 0.01
    clearance = least + margin
    (tmp_path / "cell.toml").write_text(f'[[check]]\na = "panda.urdf:*"\nb = "ball.stl"\nclearance = {clearance!r}\n')
    table = tmp_path / "sweep.csv"
    table.write_text("panda_joint1,panda_joint2,panda_joint4,panda_joint6,panda_joint7\n"
                     "-0.6,-0.785,-2.356,1.571,0.785\n0.6,-0.785,-2.356,1.571,0.785\n")
    r = CliRunner().invoke(main, ["scan", str(path), str(tmp_path / "ball.stl"), "--srdf", str(srdf),
                                  "--manifest", str(tmp_path / "cell.toml"), "--trajectory", str(table),
                                  "--format", "json"])
    assert r.exit_code in (0, 1), r.stderr
    doc = json.loads(r.stdout)
    moving = [p for p in doc["pairs"] if "segment" in p]
    if margin < 0:
        assert r.exit_code == 0 and moving == [], r.stdout
        return
    assert r.exit_code == 1, r.stderr
    assert [(p["status"], "ball.stl" in (p["a"], p["b"]), p["clearance"]) for p in moving] == [
        ("clearance", True, clearance)]
    f = moving[0]
    assert f["distance"] < clearance and abs(gap(f["t"]) - f["distance"]) < 1e-6
    assert f["distance"] <= least + 0.01 * clearance + 1e-5  # the closest pose, within 1% of c
    first = float(re.search(r"from t = ([0-9.]+)", f["note"]).group(1))
    assert first <= f["t"] and first <= ts[np.argmax(gaps < clearance - 2e-5)]
