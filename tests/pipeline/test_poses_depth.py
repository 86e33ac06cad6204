"""Robot poses without the depth search: `gjk scan robot.urdf --poses FILE` proves each collision
(surfaces crossing beyond the band, a point found deeper than the band inside the other part)
without measuring how deep it is; the run's notes say so,
and `--joints` at one of those poses measures it. The verdicts are the single-pose run's.
"""
from __future__ import annotations

import numpy as np

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
