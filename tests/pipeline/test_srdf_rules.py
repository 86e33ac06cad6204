"""An SRDF read in full, as MoveIt builds its allowed collision matrix: <disable_default_collisions>
(a link allowed with every other), <enable_collisions> over both, unlabelled <disable_collisions>;
the scan's verdicts on the Panda against python-fcl, and `collision-matrix --audit` on every
disabled pair that is not Adjacent."""
from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

from gjkcli.cli import main
from gjkcli.engine.results import Status
from gjkcli.pipeline import run
from gjkcli.scene import urdf


def _srdf(tmp_path, body: str, name="rules.srdf"):
    p = tmp_path / name
    p.write_text(f'<?xml version="1.0"?>\n<robot name="panda">\n{body}\n</robot>\n')
    return p


def test_rules_as_moveit_applies_them(panda_package, tmp_path):
    robot = urdf.load(panda_package / "urdf" / "panda.urdf")
    srdf = _srdf(tmp_path, """
  <disable_default_collisions link="panda_hand"/>
  <enable_collisions link1="panda_link5" link2="panda_hand"/>
  <disable_collisions link1="panda_link0" link2="panda_link5"/>
  <disable_collisions link1="panda_link1" link2="panda_link6" reason="Never"/>
  <disable_collisions link1="panda_link3" link2="panda_link6" reason="Never"/>
  <enable_collisions link1="panda_link6" link2="panda_link3"/>
""")
    pairs = {frozenset((a.a, a.b)): a.reason for a in urdf.allowed_pairs(robot, srdf)}
    assert pairs[frozenset(("panda_link0", "panda_link5"))] == "SRDF: disabled"  # unlabelled
    assert pairs[frozenset(("panda_link1", "panda_link6"))] == "SRDF: Never"
    assert frozenset(("panda_link3", "panda_link6")) not in pairs  # enabled after its disable
    # the hand with every other link with geometry, less the enabled link5 (its adjacent pairs
    # keep their adjacency reason first)
    hand = {p for p in pairs if "panda_hand" in p}
    others = {c.link for c in robot.collisions} - {"panda_hand", "panda_link5"}
    assert hand == {frozenset(("panda_hand", o)) for o in others}
    assert pairs[frozenset(("panda_hand", "panda_link0"))] == f"SRDF: {urdf.DEFAULT_REASON}"


def test_scan_honours_default_and_enable_against_fcl(panda_package, tmp_path, fcl_robot):
    """At the default pose the hand folds into link5 (python-fcl agrees): a default-disabled hand
    hides it; enabling the pair brings it back as one more failure."""
    path = panda_package / "urdf" / "panda.urdf"
    robot = urdf.load(path)
    q = robot.default_pose()
    assert fcl_robot(robot).colliding(q, [("panda_link5", "panda_hand")])
    hidden = _srdf(tmp_path, '<disable_default_collisions link="panda_hand"/>', "hidden.srdf")
    shown = _srdf(tmp_path, '<disable_default_collisions link="panda_hand"/>\n'
                            '<enable_collisions link1="panda_hand" link2="panda_link5"/>', "shown.srdf")
    found = run.scan([path], run.Options(jobs=1, robot=urdf.RobotOptions(srdf=str(hidden))))
    failing = {frozenset((p.a, p.b)) for p in found.failures}
    assert not any("panda_hand" in p for p in failing)
    hand5 = [p for p in found.pairs if {p.a, p.b} == {"panda_link5", "panda_hand"}]
    assert hand5 and hand5[0].allowed and hand5[0].reason == f"SRDF: {urdf.DEFAULT_REASON}"
    assert hand5[0].status is Status.COLLISION
    found = run.scan([path], run.Options(jobs=1, robot=urdf.RobotOptions(srdf=str(shown))))
    assert found.exit_code == 1
    assert {frozenset((p.a, p.b)) for p in found.failures} == failing | {frozenset(("panda_link5", "panda_hand"))}


def test_audit_checks_unlabelled_and_default_pairs(panda_package, tmp_path, fcl_robot):
    """The shipped SRDF's one wrong Never pair (link2, link6), here without a reason, is found,
    with a pose python-fcl confirms; an Always pair that collides is no failure; Adjacent pairs
    are not audited; a link without geometry is counted, not checked."""
    path = panda_package / "urdf" / "panda.urdf"
    srdf = _srdf(tmp_path, """
  <disable_collisions link1="panda_link2" link2="panda_link6"/>
  <disable_collisions link1="panda_link0" link2="panda_link1" reason="Adjacent"/>
  <disable_collisions link1="panda_link5" link2="panda_hand" reason="Always"/>
  <disable_collisions link1="panda_link0" link2="panda_link8"/>
""")
    r = CliRunner().invoke(main, ["collision-matrix", str(path), "--audit", str(srdf), "--samples", "2000"],
                           catch_exceptions=False)
    assert r.exit_code == 1, r.output
    lines = r.stdout.splitlines()
    assert lines[0].startswith("panda_link2 panda_link6: disabled without a reason, yet collides")
    assert lines[-1].startswith("1 of 1 disabled pairs collide (1 no reason) in 2,000 random poses")
    assert "1 of 1 pairs disabled as Default or Always collide, as their reason says" in lines[-1]
    assert "1 name a link without geometry (not checked)" in lines[-1]
    robot = urdf.load(path)
    pose = dict(item.split("=") for item in lines[0].split(": ", 2)[2].split(", "))
    q = np.array([float(pose[name]) for name in robot.variables])
    assert fcl_robot(robot).colliding(q, [("panda_link2", "panda_link6")])
    # the same pair as Always collides as its reason says: the audit passes
    always = _srdf(tmp_path, '<disable_collisions link1="panda_link2" link2="panda_link6" reason="Always"/>',
                   "always.srdf")
    r = CliRunner().invoke(main, ["collision-matrix", str(path), "--audit", str(always), "--samples", "2000"],
                           catch_exceptions=False)
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith("all 0 disabled pairs stayed clear")


def test_audit_of_a_default_disabled_link(panda_package, tmp_path, fcl_robot):
    """<disable_default_collisions link="panda_link6"/>: each of link6's pairs but the adjacent
    and the enabled ones is audited with that reason; those found colliding, python-fcl confirms."""
    path = panda_package / "urdf" / "panda.urdf"
    robot = urdf.load(path)
    srdf = _srdf(tmp_path, '<disable_default_collisions link="panda_link6"/>\n'
                           '<enable_collisions link1="panda_link6" link2="panda_link0"/>')
    r = CliRunner().invoke(main, ["collision-matrix", str(path), "--audit", str(srdf), "--samples", "2000"],
                           catch_exceptions=False)
    assert r.exit_code == 1, r.output
    *hits, summary = r.stdout.splitlines()
    adjacent = {frozenset((a, b)) for a, b, _ in urdf.adjacent_links(robot)}
    others = {c.link for c in robot.collisions} - {"panda_link6", "panda_link0"}
    audited = {frozenset(("panda_link6", o)) for o in others} - adjacent
    assert len(audited) == 7  # 10 other links with geometry, less link0 (enabled), link5 and link7
    assert f"disabled pairs collide ({len(audited)} {urdf.DEFAULT_REASON})" in summary
    assert f"{len(hits)} of {len(audited)}" in summary
    oracle = fcl_robot(robot)
    names = set()
    for line in hits:
        a, b = line.split(":", 1)[0].split()
        names.add(frozenset((a, b)))
        assert f"disabled as {urdf.DEFAULT_REASON}, yet collides" in line
        pose = dict(item.split("=") for item in line.split(": ", 2)[2].split(", "))
        q = np.array([float(pose[name]) for name in robot.variables])
        assert oracle.colliding(q, [(a, b)])
    assert frozenset(("panda_link2", "panda_link6")) in names and names <= audited


@pytest.mark.parametrize("entry", ['<disable_default_collisions/>', '<enable_collisions link1="a"/>'])
def test_srdf_entry_without_links_is_one_line(panda_package, tmp_path, entry):
    path = panda_package / "urdf" / "panda.urdf"
    srdf = _srdf(tmp_path, entry)
    r = CliRunner().invoke(main, ["scan", str(path), "--srdf", str(srdf)])
    assert r.exit_code == 2
    assert "rules.srdf:3: <" in r.stderr and "needs link" in r.stderr
    assert "Traceback" not in r.stderr
