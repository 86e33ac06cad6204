"""A link is one body, and a motion is checked with the answers of a single pose.

The robot is written here: a U-shaped base (one non-convex mesh: its hull fills the notch) and a
slider on two prismatic joints and a revolute one, whose link carries four overlapping
collision elements (two boxes, a mesh bar and a sphere). Poses and motions inside the notch are clear;
a motion into an arm first touches at the t the construction gives. python-fcl answers on the
same elements, placed by yourdfpy's forward kinematics.
"""
from __future__ import annotations

import json

import numpy as np
import pytest

from gjkcli.engine.results import Status
from gjkcli.pipeline import run
from gjkcli.pipeline.findings import EXIT_OK, EXIT_VIOLATION
from gjkcli.pipeline.matrix import collision_matrix
from gjkcli.pipeline.motion import Motion
from gjkcli.scene import urdf

# The U: a bar y in [0, 0.1] under two arms x in +-[0.2, 0.3], y up to 0.5, z in [0, 0.2]; the
# notch between the arms is x in (-0.2, 0.2), y in (0.1, 0.5).
U = [(-0.3, 0), (0.3, 0), (0.3, 0.5), (0.2, 0.5), (0.2, 0.1), (-0.2, 0.1), (-0.2, 0.5), (-0.3, 0.5)]
ARM_X = 0.2
# The slider's elements, centred on its frame: boxes (size), a bar mesh 0.12 x 0.04 x 0.04 and a
# sphere (radius), which never reaches furthest.
BOX1, BOX2, BAR, BALL = (0.1, 0.1, 0.1), (0.04, 0.16, 0.04), (0.12, 0.04, 0.04), 0.05

URDF = """<robot name="notch">
  <link name="base"><collision><geometry><mesh filename="u.stl"/></geometry></collision></link>
  <link name="carriage"/>
  <link name="mover"/>
  <link name="slider">
    <collision><geometry><box size="{b1}"/></geometry></collision>
    <collision><geometry><box size="{b2}"/></geometry></collision>
    <collision><geometry><mesh filename="bar.stl"/></geometry></collision>
    <collision><geometry><sphere radius="{r}"/></geometry></collision>
  </link>
  <joint name="lift" type="prismatic"><parent link="base"/><child link="carriage"/>
    <origin xyz="0 0 0.1"/><axis xyz="0 1 0"/><limit lower="0" upper="1" effort="1" velocity="1"/>
  </joint>
  <joint name="slide" type="prismatic"><parent link="carriage"/><child link="mover"/>
    <axis xyz="1 0 0"/><limit lower="-0.5" upper="0.5" effort="1" velocity="1"/></joint>
  <joint name="turn" type="revolute"><parent link="mover"/><child link="slider"/>
    <axis xyz="0 0 1"/><limit lower="-3.2" upper="3.2" effort="1" velocity="1"/></joint>
</robot>
"""


@pytest.fixture(scope="module")
def notch(tmp_path_factory):
    trimesh = pytest.importorskip("trimesh")
    from shapely.geometry import Polygon

    d = tmp_path_factory.mktemp("notch")
    trimesh.creation.extrude_polygon(Polygon(U), 0.2).export(d / "u.stl")
    trimesh.creation.box(BAR).export(d / "bar.stl")
    path = d / "notch.urdf"
    path.write_text(URDF.format(b1=" ".join(map(str, BOX1)), b2=" ".join(map(str, BOX2)), r=BALL))
    return path


def _csv(path, rows):
    path.write_text("lift,slide,turn\n" + "".join(",".join(f"{v:.17g}" for v in r) + "\n" for r in rows))
    return path


def _scan(robot_path, **robot):
    return run.scan([robot_path], run.Options(robot=urdf.RobotOptions(**robot), jobs=1))


def _reach_x(turn: float) -> float:
    """How far the slider's elements reach along +x from its frame, turned by `turn` about z."""
    c, s = abs(np.cos(turn)), abs(np.sin(turn))
    return max([0.5 * (w * c + h * s) for w, h, _ in (BOX1, BOX2, BAR)] + [BALL])


class _Fcl:
    """python-fcl on the robot's elements, placed by yourdfpy's forward kinematics."""

    def __init__(self, path):
        self.fcl = pytest.importorskip("fcl")
        yourdfpy = pytest.importorskip("yourdfpy")
        import trimesh

        self.model = yourdfpy.URDF.load(str(path), load_meshes=False, load_collision_meshes=False,
                                        build_scene_graph=True)
        fcl = self.fcl

        def bvh(mesh):
            m = fcl.BVHModel()
            m.beginModel(len(mesh.vertices), len(mesh.faces))
            m.addSubModel(mesh.vertices, mesh.faces)
            m.endModel()
            return m

        self.base = fcl.CollisionObject(bvh(trimesh.load(path.parent / "u.stl")), fcl.Transform())
        self.elements = [fcl.Box(*BOX1), fcl.Box(*BOX2), bvh(trimesh.load(path.parent / "bar.stl")),
                         fcl.Sphere(BALL)]

    def slider_frame(self, q) -> np.ndarray:
        self.model.update_cfg(np.asarray(q, dtype=float))
        return self.model.get_transform(frame_to="slider", frame_from="base")

    def distance(self, q) -> float:
        """The smallest distance of the base to any slider element (<= 0: they collide)."""
        fcl = self.fcl
        T = self.slider_frame(q)
        best = np.inf
        for g in self.elements:
            o = fcl.CollisionObject(g, fcl.Transform(T[:3, :3], T[:3, 3]))
            if fcl.collide(self.base, o, fcl.CollisionRequest(), fcl.CollisionResult()):
                return 0.0
            best = min(best, fcl.distance(self.base, o, fcl.DistanceRequest(), fcl.DistanceResult()))
        return best


def test_forward_kinematics_agrees_with_yourdfpy(notch):
    robot = urdf.load(notch)
    oracle = _Fcl(notch)
    rng = np.random.default_rng(5)
    q = rng.uniform(robot.lower, robot.upper, size=(50, robot.dof))
    frames = robot.fk(q)[:, robot.links.index("slider")]
    for n in range(len(q)):
        assert np.allclose(frames[n], oracle.slider_frame(q[n]), atol=1e-12)


def test_poses_inside_the_notch_are_clear(notch, tmp_path):
    """Every element lies in the hull of the U (a hull answer is a collision), none touches it."""
    turns = np.linspace(-3.0, 3.0, 5)
    rows = [(0.3, x, a) for x in (-0.1, 0.0, 0.1) for a in turns]
    found = _scan(notch, poses=str(_csv(tmp_path / "poses.csv", rows)))
    assert found.exit_code == EXIT_OK, [(p.a, p.b, p.status) for p in found.pairs]
    assert not found.pairs
    oracle = _Fcl(notch)
    assert min(oracle.distance(r) for r in rows) > 0.01
    # the same robot pushed into an arm collides there: the test can fail
    bad = _scan(notch, joints="lift=0.3,slide=0.16,turn=0")
    assert bad.exit_code == EXIT_VIOLATION
    assert [(p.a, p.b, p.status) for p in bad.pairs] == [("base", "slider", Status.COLLISION)]


def test_a_link_is_one_object(notch):
    """The slider's four overlapping elements are never checked against each other and every
    finding, record and count names the link."""
    found = run.scan([notch], run.Options(robot=urdf.RobotOptions(joints="lift=0.3,slide=0.17"),
                                          all_pairs=True, jobs=1))
    assert [o.name for o in found.objects] == ["base", "slider"]
    assert [(p.a, p.b) for p in found.pairs] == [("base", "slider")]
    assert found.checked == 1 and sum(found.counts.values()) == 1
    slider = found.objects[1]
    assert slider.convex is False and "4 collision elements" in slider.convexity
    # the deepest element pair answers: the bar (0.03 into the arm), not the large box (0.02)
    assert "slider:3" in found.pairs[0].note and found.pairs[0].result.depth > 0.02
    # the matrix and the motion pair links, never a link with itself
    m = collision_matrix(urdf.load(notch), samples=200, seed=1)
    assert set(m.hits) == {("base", "slider")}
    motion = Motion.build(urdf.load(notch), None, None)
    links = [c.link for c in motion.robot.collisions]
    assert all(links[a] != links[b] for a, b in motion.pairs.tolist())
    assert set(motion.owners) == {"base", "slider"}


def test_a_motion_through_the_notch_is_clear(notch, tmp_path):
    """Down into the notch, turning, then across it: the elements pass through the U's hull."""
    rows = [(1.0, 0.0, 0.0), (0.3, 0.0, 0.6), (0.3, 0.1, -0.6), (0.3, -0.1, 0.0)]
    found = _scan(notch, trajectory=str(_csv(tmp_path / "through.csv", rows)))
    assert found.exit_code == EXIT_OK, [(p.a, p.b, p.status, p.t) for p in found.pairs]
    assert not found.pairs
    oracle = _Fcl(notch)
    q = np.array(rows)
    ts = np.linspace(0.0, 1.0, 201)
    dense = [q[k] + t * (q[k + 1] - q[k]) for k in range(len(q) - 1) for t in ts]
    assert min(oracle.distance(p) for p in dense) > 0.005


@pytest.mark.parametrize("turn", [0.0, 0.6])
def test_a_motion_into_an_arm_first_touches_at_the_constructed_t(notch, tmp_path, turn):
    """Across to x = 0.4 at a fixed turn: the slider's reach along x meets the arm at
    slide = 0.2 - reach (the bar decides at turn 0, the large box at 0.6), t = slide / 0.4. The
    first contact agrees with python-fcl sampling the motion every 1/4000 of it."""
    rows = [(0.3, 0.0, turn), (0.3, 0.4, turn)]
    found = _scan(notch, trajectory=str(_csv(tmp_path / "into.csv", rows)))
    assert found.exit_code == EXIT_VIOLATION
    moving = [p for p in found.pairs if p.segment is not None]
    assert [(p.a, p.b) for p in moving] == [("base", "slider")]
    robot = urdf.load(notch)
    motion = Motion.build(robot, None, None)
    q0, q1 = np.array(rows[0]), np.array(rows[1])
    speed = motion.speeds(q0, q1)
    resolution = motion.band / (speed.max() + speed.min())  # t within the band, at most
    truth = (ARM_X - _reach_x(turn)) / 0.4
    t = moving[0].t
    assert abs(t - truth) <= resolution, (t, truth, resolution)  # the STLs hold float32
    oracle = _Fcl(notch)
    ts = np.linspace(0.0, 1.0, 4001)
    first = next(s for s in ts if oracle.distance(q0 + s * (q1 - q0)) <= motion.band)
    assert abs(first - t) <= ts[1] + resolution


def test_the_cli_names_links(notch, tmp_path):
    from click.testing import CliRunner

    from gjkcli.cli import main

    csv = _csv(tmp_path / "into.csv", [(0.3, 0.0, 0.0), (0.3, 0.4, 0.0)])
    r = CliRunner(catch_exceptions=False).invoke(main, ["scan", str(notch), "--trajectory", str(csv),
                                                        "--format", "json"])
    assert r.exit_code == EXIT_VIOLATION, r.stderr
    doc = json.loads(r.stdout)
    assert {o["name"] for o in doc["objects"]} == {"base", "slider"}
    assert {(p["a"], p["b"]) for p in doc["pairs"]} == {("base", "slider")}


def _verdicts(found):
    """The findings that can fail (the prepared path does not check allowed pairs)."""
    return sorted((p.a, p.b, p.status.value, p.mode, p.conservative, p.violation)
                  for p in found.pairs if not p.allowed)


def _per_pose_and_prepared(path, srdf, Q):
    """The per-pose run (the whole pipeline at each pose) and the prepared path on poses Q."""
    from gjkcli.pipeline.poses import Prepared
    from gjkcli.pipeline.run import run_options
    from gjkcli.scene.objects import scene_sources

    robot = urdf.load(path)
    runs = []
    for q in Q:
        o = run.Options(robot=urdf.RobotOptions(srdf=srdf, joints=dict(zip(robot.variables, q.tolist()))),
                        jobs=1)
        runs.append(run.scan([path], o))
    sources, _ = scene_sources([path], None, False, [], urdf.RobotOptions(srdf=srdf))
    prepared = Prepared(sources[0], srdf, run_options(run.Options(jobs=1))).runs(Q)
    return runs, prepared


def test_prepared_poses_answer_as_the_per_pose_run(panda_package):
    """16 random Panda poses with the SRDF: the prepared path's findings are the run's, pose by
    pose (statuses, which engine answered, conservative or not), allowed pairs aside; between 2
    and 14 of the poses have a failing pair, so both outcomes are exercised."""
    path = panda_package / "urdf" / "panda.urdf"
    srdf = panda_package / "urdf" / "panda.srdf"
    robot = urdf.load(path)
    Q = np.random.default_rng(22).uniform(robot.lower, robot.upper, size=(16, robot.dof))
    runs, prepared = _per_pose_and_prepared(path, srdf, Q)
    failing = 0
    for k, (a, b) in enumerate(zip(runs, prepared)):
        assert _verdicts(a) == _verdicts(b), k
        assert a.exit_code == b.exit_code
        failing += a.exit_code == EXIT_VIOLATION
    assert 2 <= failing <= 14, failing


def test_prepared_poses_on_the_notch_robot(notch, tmp_path):
    robot = urdf.load(notch)
    rng = np.random.default_rng(3)
    Q = np.column_stack([rng.uniform(0.2, 0.5, 30), rng.uniform(-0.25, 0.25, 30), rng.uniform(-3, 3, 30)])
    runs, prepared = _per_pose_and_prepared(notch, None, Q)
    assert [_verdicts(a) for a in runs] == [_verdicts(b) for b in prepared]
    assert [o.name for o in runs[0].objects] == [o.name for o in prepared[0].objects]
    hits = sum(bool(a.pairs) for a in runs)
    assert 3 <= hits <= 27, hits
    # through --poses, each finding tagged with its row
    found = _scan(notch, poses=str(_csv(tmp_path / "poses.csv", Q)))
    assert sorted({p.waypoint for p in found.pairs}) == [k for k, a in enumerate(runs) if a.pairs]


def test_a_manifest_robot_names_its_links(notch, tmp_path):
    """A manifest's [[robot]]: the slider's elements are one object "cell:slider" there too."""
    cell = tmp_path / "cell.toml"
    cell.write_text(f'[[robot]]\nurdf = "{notch}"\nname = "cell"\njoints = "lift=0.3,slide=0.17"\n')
    found = run.scan([], run.Options(jobs=1), manifest=cell)
    assert [(p.a, p.b, p.status) for p in found.pairs] == [("cell:base", "cell:slider", Status.COLLISION)]
    assert {o.name for o in found.objects} == {"cell:base", "cell:slider"}


def test_an_input_that_fails_still_fails_a_pose_table(notch, tmp_path):
    """The prepared path takes the robot alone: a second input that cannot be read is reported
    (exit 2) as the per-pose run reports it."""
    from click.testing import CliRunner

    from gjkcli.cli import main

    csv = _csv(tmp_path / "poses.csv", [(0.3, 0.0, 0.0)])
    r = CliRunner(catch_exceptions=False).invoke(main, ["scan", str(notch), str(tmp_path / "missing.stl"),
                                                        "--poses", str(csv)])
    assert r.exit_code == 2 and "missing.stl" in r.output + r.stderr
