"""Robot poses without the depth search: `gjk scan robot.urdf --poses FILE` proves each collision
(surfaces crossing beyond the band, a point found deeper than the band inside the other part)
without measuring how deep it is; the run's notes say so,
and `--joints` at one of those poses measures it. The verdicts are the single-pose run's.
"""
from __future__ import annotations

import numpy as np
import pytest

from gjkcli.engine.results import Status
from gjkcli.pipeline import run
from gjkcli.pipeline.poses import DEPTH_NOTE
from gjkcli.scene import urdf


def test_collisions_at_many_poses_are_proved_and_left_unmeasured(panda_package, tmp_path):
    path = panda_package / "urdf" / "panda.urdf"
    srdf = panda_package / "urdf" / "panda.srdf"
    robot = urdf.load(path)
    Q = np.random.default_rng(7).uniform(robot.lower, robot.upper, size=(40, robot.dof))
    table = tmp_path / "poses.csv"
    table.write_text(",".join(robot.variables) + "\n"
                     + "".join(",".join(f"{v:.17g}" for v in q) + "\n" for q in Q))
    found = run.scan([path], run.Options(robot=urdf.RobotOptions(srdf=srdf, poses=str(table)), jobs=1))
    collisions = [p for p in found.pairs if p.status is Status.COLLISION]
    assert 3 <= len({p.waypoint for p in collisions}) <= 37  # both outcomes drawn
    unmeasured = [p for p in collisions if p.result.depth is None]
    assert unmeasured and DEPTH_NOTE in found.notes
    for p in unmeasured:
        assert p.result.exit == "a point inside the other part beyond the band"
        assert p.result.certificate is not None
    # the same pose alone: the same verdict, now with its depth
    p = unmeasured[0]
    one = run.scan([path], run.Options(robot=urdf.RobotOptions(
        srdf=srdf, joints=dict(zip(robot.variables, Q[p.waypoint].tolist()))), jobs=1))
    alone = [f for f in one.pairs if {f.a, f.b} == {p.a, p.b}]
    assert len(alone) == 1 and alone[0].status is Status.COLLISION
    assert alone[0].result.depth is not None and alone[0].result.depth > 0
    assert DEPTH_NOTE not in one.notes


# Three link pairs of the Panda at poses of benchmarks/bench_poses.py (seed 0) whose deep crossing
# the fan does not prove, so the search over the crossing triangles decides: link5 against link7
# (3,000 random poses, pose 179) and link5 against the hand twice (the 10,000 waypoints). The
# first two were undecided while that search stopped at its rounds with triangles far wider than
# the band (3.8e-8): its proving rounds down to the band's width, and the search along the
# crossing faces' edges, find points about 100 bands inside (a collision, by the exact signed
# distance below: tests/exact_distance.py).
# (link of A, link of B, A's link frame, B's link frame, the status at one pose and in a sweep)
SEARCHED = [
    ("panda_link5", "panda_link7",
     [[-0.17066339793168028, -0.9772209657086086, 0.12614748822686628, -0.07842519160397256],
      [-0.6982016931901268, 0.029599827681275094, -0.7152889247204088, -0.6414519616197105],
      [0.6952613898620092, -0.2101500282673625, -0.6873489400489201, 0.08564042163950139],
      [0.0, 0.0, 0.0, 1.0]],
     [[0.9725561679373906, 0.17593027805319356, -0.15225976970645944, -0.09143495717026012],
      [-0.05279028797731576, 0.804193883781333, 0.5920180595082958, -0.7123254848260279],
      [0.22660027736569555, -0.5677329782149543, 0.791411131931418, 0.1361546741652374],
      [0.0, 0.0, 0.0, 1.0]], Status.COLLISION),
    ("panda_link5", "panda_hand",
     [[-0.6930014093054335, -0.7206947070025658, -0.01865974274122635, 0.10784779332852708],
      [-0.7175492503725261, 0.6920205374514115, -0.07893446037875577, -0.26260061134104],
      [0.06980057299556149, -0.041312407869130416, -0.9967051544792702, 0.2300816048170931],
      [0.0, 0.0, 0.0, 1.0]],
     [[0.08405993498083231, 0.995563541495335, -0.0422748409374248, 0.042431693251115975],
      [-0.9962771317491766, 0.08478308313250774, 0.015611071974079717, -0.3244406179994004],
      [0.01912600545466448, 0.040805191579168024, 0.9989840500506179, 0.33538852494657023],
      [0.0, 0.0, 0.0, 1.0]], Status.COLLISION),
    ("panda_link5", "panda_hand",
     [[-0.8264808257051347, 0.5439769067438802, 0.14497782475647367, 0.04491049339872974],
      [-0.1478610272783467, 0.03873315736713054, -0.9882493911622539, -0.5182015163074103],
      [-0.5432002957970025, -0.8382057429114482, 0.04842077236389457, 0.727963169582017],
      [0.0, 0.0, 0.0, 1.0]],
     [[-0.7327014642752046, -0.6685945589317877, -0.12700346458179693, -0.041668988920027315],
      [-0.11863551054350442, -0.05827857668305009, 0.9912261210934064, -0.423261279137055],
      [-0.6701299723837557, 0.7413399512144252, -0.03661825837393618, 0.6761621598674106],
      [0.0, 0.0, 0.0, 1.0]], Status.COLLISION),
]


@pytest.mark.parametrize("link_a, link_b, frame_a, frame_b, status", SEARCHED)
def test_a_sweep_searches_fewer_rounds_with_the_same_verdicts(panda_package, monkeypatch, link_a,
                                                              link_b, frame_a, frame_b, status):
    """At many poses the search for a point deeper than the band stops after
    WITNESS_ROUNDS_SWEEP rounds (a pose alone: WITNESS_ROUNDS). The verdicts stay the pose's: the
    collision's point lies inside the other link beyond the band by trimesh's signed distance;
    the undecided pairs' volumes overlap by manifold3d's boolean (in float64), so clear would
    be wrong, and neither search finds a point deeper than the band."""
    manifold3d = pytest.importorskip("manifold3d")
    trimesh = pytest.importorskip("trimesh")
    from gjkcli.engine import exact
    from gjkcli.pipeline.pairs import exact_pair
    from gjkcli.pipeline.poses import prepared_elements

    robot = urdf.load(panda_package / "urdf" / "panda.urdf")
    shapes, _, meshes = prepared_elements(robot, urdf.local_meshes(robot))
    element = {c.link: k for k, c in enumerate(robot.collisions)}
    a, b = element[link_a], element[link_b]
    frames = np.array(frame_a), np.array(frame_b)
    rounds = []
    search = exact._deepest_on_triangles

    def counted(*args):
        rounds.append(args[-1])
        return search(*args)

    monkeypatch.setattr(exact, "_deepest_on_triangles", counted)

    def verdict(depth: bool):
        rounds.clear()
        r = exact_pair(meshes[a], shapes[a], meshes[b], shapes[b], pose_a=frames[0],
                       pose_b=frames[1], tolerance=3.829780586878048e-08, depth=depth)
        return r, list(rounds)

    swept, swept_rounds = verdict(depth=False)
    alone, alone_rounds = verdict(depth=True)
    assert swept.status is alone.status is status
    assert exact.WITNESS_ROUNDS_SWEEP < exact.WITNESS_ROUNDS
    assert swept_rounds and set(swept_rounds) == {exact.WITNESS_ROUNDS_SWEEP}
    assert set(alone_rounds) == {exact.WITNESS_ROUNDS}

    placed = [(meshes[e].vertices @ T[:3, :3].T + T[:3, 3], meshes[e].faces) for e, T in zip((a, b), frames)]
    if status is Status.COLLISION:
        assert swept.exit == exact.EXIT_DEEP_POINT and swept.depth is None
        inner, outer = (swept.point_a, 1) if swept.contained == "a in b" else (swept.point_b, 0)
        solid = trimesh.Trimesh(*placed[outer], process=False)
        from exact_distance import signed_distance  # exact, where trimesh's is off by ~1e-4

        assert signed_distance(solid, [inner])[0] > swept.tolerance  # inside, deep
    else:
        solids = [manifold3d.Manifold(manifold3d.Mesh64(vert_properties=np.ascontiguousarray(v),
                                                        tri_verts=f.astype(np.uint32)))
                  for v, f in placed]
        assert (solids[0] ^ solids[1]).volume() > 0.0
        assert swept.exit == alone.exit == exact.EXIT_UNDECIDED and swept.depth is None
