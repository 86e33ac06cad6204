"""`gjk collision-matrix` as a command like check and scan: --format table/json (the default SRDF
kept), -q quiet (the old meaning under --srdf-only), --limit, --version; the verdicts checked
against the arm's geometry worked out by hand (a sphere on a two-joint arm over a box)."""
from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from gjkcli.cli import main

# base: a 1 x 1 x 0.2 box at the origin; upper: a 0.2 x 0.2 x 0.8 box on joint j1 (about y, at
# z = 0.1); lower: a sphere of radius 0.2 at 0.4 along its link on joint j2 (about y, 0.9 up the
# upper link); fin: a box fixed 3 away along x, out of reach of every moving link.
ARM = """<robot name="arm">
<link name="base"><collision><geometry><box size="1 1 0.2"/></geometry></collision></link>
<link name="upper"><collision><origin xyz="0 0 0.5"/><geometry><box size="0.2 0.2 0.8"/></geometry></collision></link>
<link name="lower"><collision><origin xyz="0 0 0.4"/><geometry><sphere radius="0.2"/></geometry></collision></link>
<link name="fin"><collision><geometry><box size="0.2 0.2 0.2"/></geometry></collision></link>
<joint name="j1" type="revolute"><parent link="base"/><child link="upper"/><origin xyz="0 0 0.1"/>
  <axis xyz="0 1 0"/><limit lower="-1.5" upper="1.5" effort="1" velocity="1"/></joint>
<joint name="j2" type="revolute"><parent link="upper"/><child link="lower"/><origin xyz="0 0 0.9"/>
  <axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
<joint name="fix" type="fixed"><parent link="base"/><child link="fin"/><origin xyz="3 0 0"/></joint>
</robot>
"""


def sphere_in_base(j1: float, j2: float) -> bool:
    """The oracle: does the lower link's sphere (radius 0.2) reach into the base box?"""
    def up(angle):  # a link's z axis after a rotation about y
        return np.array([np.sin(angle), 0.0, np.cos(angle)])

    centre = np.array([0, 0, 0.1]) + 0.9 * up(j1) + 0.4 * up(j1 + j2)
    nearest = np.clip(centre, [-0.5, -0.5, -0.1], [0.5, 0.5, 0.1])
    return float(np.linalg.norm(centre - nearest)) < 0.2


@pytest.fixture
def arm(tmp_path):
    path = tmp_path / "arm.urdf"
    path.write_text(ARM)
    return path


def gjk(*args):
    return CliRunner(catch_exceptions=False).invoke(main, ["collision-matrix", *map(str, args)])


def test_json_agrees_with_the_srdf_and_the_geometry(arm):
    r = gjk(arm, "--samples", 800, "--format", "json")
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["command"] == "collision-matrix" and doc["robot"] == "arm"
    reasons = {(p["a"], p["b"]): p["reason"] for p in doc["pairs"]}
    # the oracle: the sphere reaches the base in some poses, not in nearly all
    rng = np.random.default_rng(1)
    share = np.mean([sphere_in_base(*q) for q in rng.uniform([-1.5, -3], [1.5, 3], size=(4000, 2))])
    assert 0.005 < share < 0.95
    assert reasons == {("base", "fin"): "Adjacent", ("base", "upper"): "Adjacent",
                       ("lower", "upper"): "Adjacent", ("base", "lower"): None,
                       ("fin", "lower"): "Never", ("fin", "upper"): "Never"}
    assert doc["summary"] == {"Adjacent": 3, "Default": 0, "Always": 0, "Never": 2, "enabled": 1,
                              "exit_code": 0}
    # the SRDF of the same run disables the same pairs with the same reasons
    srdf = gjk(arm, "--samples", 800).stdout
    lines = sorted(line.strip() for line in srdf.splitlines() if "<disable_collisions" in line)
    assert len(lines) == 5
    for (a, b), reason in reasons.items():
        assert any(f'"{a}"' in line and f'"{b}"' in line and f'reason="{reason}"' in line
                   for line in lines) == (reason is not None)
    # byte-identical on a second run of the same seed
    assert gjk(arm, "--samples", 800, "--format", "json").stdout == r.stdout


def test_table_lists_every_pair_with_its_reason(arm):
    r = gjk(arm, "--samples", 300, "--format", "table")
    assert r.exit_code == 0
    # plain frames in a pipe: | between the cells (and the header's), no box-drawing characters
    assert not any("\u2500" <= c <= "\u257f" for c in r.stdout)
    rows = [line.split() for line in r.stdout.splitlines()[2:] if line.count("|") == 3]
    assert sorted((row[0], row[2], row[4]) for row in rows) == sorted(
        [("base", "fin", "Adjacent"), ("base", "upper", "Adjacent"), ("lower", "upper", "Adjacent"),
         ("base", "lower", "enabled"), ("fin", "lower", "Never"), ("fin", "upper", "Never")])
    assert "2 Never; 1 pairs stay enabled" in r.stderr
    assert all(line == line.rstrip() for line in r.stdout.splitlines())


def test_quiet_prints_nothing_and_srdf_only_is_the_old_quiet(arm, tmp_path):
    r = gjk(arm, "--samples", 200, "-q")
    assert r.exit_code == 0 and r.stdout == ""
    assert "--srdf-only" in r.stderr  # the changed meaning is said once, on stderr
    out = tmp_path / "arm.srdf"
    r = gjk(arm, "--samples", 200, "-q", "-o", out)
    assert r.exit_code == 0 and r.stdout == "" and r.stderr == ""
    assert out.read_text().count("<disable_collisions") == 5
    r = gjk(arm, "--samples", 200, "--srdf-only")
    assert r.stdout.count("<disable_collisions") == 5 and r.stderr == ""
    r = gjk(arm, "--samples", 200, "--format", "json", "-q")
    assert r.stdout == "" and r.stderr == ""


def test_audit_as_json_names_the_failing_pair_with_a_pose_that_collides(arm, tmp_path):
    srdf = tmp_path / "wrong.srdf"
    srdf.write_text('<robot name="arm"><disable_collisions link1="base" link2="lower" reason="Never"/>'
                    '<disable_collisions link1="fin" link2="upper" reason="Never"/></robot>')
    r = gjk(arm, "--audit", srdf, "--samples", 800, "--format", "json")
    assert r.exit_code == 1, r.stderr
    doc = json.loads(r.stdout)
    pairs = {(p["a"], p["b"]): p for p in doc["pairs"]}
    assert set(pairs) == {("base", "lower"), ("fin", "upper")}
    bad = pairs[("base", "lower")]
    assert bad["collides"] and bad["fails"] and bad["reason"] == "Never"
    assert sphere_in_base(bad["pose"]["j1"], bad["pose"]["j2"])  # the oracle confirms the pose
    assert not pairs[("fin", "upper")]["collides"]
    assert doc["summary"]["failing"] == 1 and doc["summary"]["exit_code"] == 1
    table = gjk(arm, "--audit", srdf, "--samples", 800, "--format", "table")
    assert table.exit_code == 1 and "collides: fails" in table.stdout


def test_version_and_a_bad_limit(arm):
    r = gjk("--version")
    assert r.exit_code == 0 and r.stdout.startswith("gjk ")
    r = gjk(arm, "--limit", "bogus=1")
    assert r.exit_code == 2 and "Traceback" not in r.stderr and "--limit" in r.stderr


def test_limit_applies_to_the_robot_s_meshes(tmp_path):
    import trimesh

    (tmp_path / "m.stl").write_bytes(trimesh.creation.box([1, 1, 1]).export(file_type="stl"))
    path = tmp_path / "mesh.urdf"
    path.write_text('<robot name="m"><link name="a"><collision><geometry><mesh filename="m.stl"/>'
                    '</geometry></collision></link><link name="b"/><joint name="j" type="fixed">'
                    '<parent link="a"/><child link="b"/></joint></robot>')
    r = gjk(path, "--samples", 10, "--limit", "file-bytes=100", "--format", "json")
    assert r.exit_code == 2, (r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "m.stl" in lines[0] and "file-bytes" in lines[0]
    assert gjk(path, "--samples", 10, "--format", "json").exit_code == 0


def test_help_groups_the_options_and_ends_with_examples():
    out = gjk("--help").stdout
    for title in ("Reports:", "The matrix (collision-matrix):", "Examples:"):
        assert title in out
    lines = out.splitlines()
    other = lines[lines.index("Other options:") + 1:lines.index("Examples:")]
    assert sorted(line.split()[0] for line in other if line.strip()) == ["--debug", "--version",
                                                                          "-h,"]


def test_prove_marks_the_never_pairs_in_json_and_the_table(arm):
    r = gjk(arm, "--samples", 300, "--prove", "--prove-boxes", 200, "--format", "json")
    assert r.exit_code == 0, r.stderr
    pairs = {(p["a"], p["b"]): p for p in json.loads(r.stdout)["pairs"]}
    # the fin is 3 away from the base's joint, beyond the arm's reach (0.1 + 0.9 + 0.4 + 0.2)
    for pair in (("fin", "lower"), ("fin", "upper")):
        assert pairs[pair]["reason"] == "Never" and pairs[pair]["proof"] == "proven"
    assert all("proof" not in p for k, p in pairs.items() if p["reason"] != "Never")
    table = gjk(arm, "--samples", 300, "--prove", "--prove-boxes", 200, "--format", "table").stdout
    assert "--prove" in table and table.count("proven") == 2
