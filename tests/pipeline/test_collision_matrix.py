"""`gjk collision-matrix`: the Panda's matrix against python-fcl on the link meshes and against the
shipped panda.srdf; the audit's counterexample checked by python-fcl; the SRDF written whole."""
from __future__ import annotations


import numpy as np
import pytest

from gjkcli.pipeline import matrix as matrices
from gjkcli.scene import urdf
from gjkcli.scene.manifest import read_srdf


@pytest.fixture(scope="module")
def panda(panda_package):
    path = panda_package / "urdf" / "panda.urdf"
    return path, panda_package / "urdf" / "panda.srdf", urdf.load(path)


@pytest.fixture(scope="module")
def matrix(panda):
    return matrices.collision_matrix(panda[2], samples=10_000, seed=0)


def test_never_pairs_do_not_collide_in_an_independent_sampling(panda, matrix, fcl_robot):
    _, _, robot = panda
    never = [p for p, r in matrix.reasons.items() if r == "Never"]
    enabled = list(matrix.enabled)
    assert 15 <= len(never) <= 30 and len(enabled) >= 10
    oracle = fcl_robot(robot)
    rng = np.random.default_rng(777)
    seen_never, seen_enabled = set(), set()
    for q in rng.uniform(robot.lower, robot.upper, size=(600, robot.dof)):
        seen_never |= oracle.colliding(q, never)
        seen_enabled |= oracle.colliding(q, enabled)
    assert seen_never == set()
    # the sampling can fail: the enabled pairs do collide in it
    assert len(seen_enabled) >= 5


def test_agrees_with_the_shipped_srdf(panda, matrix):
    _, srdf, robot = panda
    shipped = {matrices._key(s.a, s.b): s.reason.removeprefix("SRDF: ") for s in read_srdf(srdf, srdf, None)}
    differ = {p: (r, matrix.reasons.get(p)) for p, r in shipped.items() if matrix.reasons.get(p) != r}
    # the one disagreement: the shipped SRDF's (link2, link6) Never does collide
    assert differ == {("panda_link2", "panda_link6"): ("Never", None)}
    assert ("panda_link2", "panda_link6") in matrix.enabled


def test_audit_finds_link2_link6_with_a_pose_fcl_confirms(panda, fcl_robot):
    _, srdf, robot = panda
    never = [(s.a, s.b) for s in read_srdf(srdf, srdf, None) if s.reason == "SRDF: Never"]
    found = matrices.audit(robot, never, samples=10_000, seed=0)
    assert [(c.a, c.b) for c in found] == [("panda_link2", "panda_link6")]
    c = found[0]
    assert c.depth > 0
    q = np.array([c.pose[name] for name in robot.variables])
    assert fcl_robot(robot).colliding(q, [("panda_link2", "panda_link6")])


def test_deterministic_for_a_seed_whatever_the_chunk(panda, monkeypatch):
    robot = panda[2]
    a = matrices.collision_matrix(robot, samples=1500, seed=3)
    monkeypatch.setattr(matrices, "CHUNK", 256)
    b = matrices.collision_matrix(robot, samples=1500, seed=3)
    assert a == b
    c = matrices.collision_matrix(robot, samples=1500, seed=4)
    assert c.hits != a.hits
    every = matrices.collision_matrix(robot, samples=1500, seed=3, settle=False)
    assert (every.reasons, every.enabled) == (a.reasons, a.enabled)
    assert all(every.hits[p] >= a.hits[p] for p in a.hits)


def test_the_same_matrix_and_audit_on_several_workers(panda, monkeypatch):
    """-j: each chunk's samples split over forked workers; the matrix (hits included) and the
    audit's counterexamples are those of one process."""
    from gjkcli.engine.shapes import can_fork

    if not can_fork():
        pytest.skip("no fork here (or manifold3d already ran in this process)")
    path, srdf, robot = panda
    monkeypatch.setattr(matrices, "CHUNK", 300)
    one = matrices.collision_matrix(robot, samples=1500, seed=5)
    two = matrices.collision_matrix(robot, samples=1500, seed=5, jobs=2)
    three = matrices.collision_matrix(robot, samples=1500, seed=5, jobs=3)
    assert one == two == three
    never = [(s.a, s.b) for s in read_srdf(srdf, srdf, None) if s.reason == "SRDF: Never"]
    alone = matrices.audit(robot, never, samples=3000, seed=0)
    shared = matrices.audit(robot, never, samples=3000, seed=0, jobs=2)
    assert [(c.a, c.b, c.sample, c.depth) for c in alone] == [(c.a, c.b, c.sample, c.depth) for c in shared]
    assert alone and matrices._FORKED is None
    # the workers did the sampling: the parent's collide ran only for the default pose
    calls = []
    monkeypatch.setattr(matrices._Checker, "collide", lambda self, q, pairs, _real=matrices._Checker.collide:
                        calls.append(len(q)) or _real(self, q, pairs))
    assert matrices.collision_matrix(robot, samples=600, seed=5, jobs=2) == \
        matrices.collision_matrix(robot, samples=600, seed=5, jobs=1)
    # the default pose of each run, and the samples of the run with jobs=1 (two chunks of 300):
    # the run with jobs=2 sampled in its workers only
    assert sorted(calls) == [1, 1, 300, 300]


def test_cli_writes_the_srdf_keeping_its_other_content(panda, tmp_path):
    from click.testing import CliRunner

    from gjkcli.cli import main

    path, srdf, _ = panda
    out = tmp_path / "panda.srdf"
    out.write_text(srdf.read_text())
    r = CliRunner().invoke(main, ["collision-matrix", str(path), "--samples", "300", "-o", str(out)])
    assert r.exit_code == 0, r.stderr
    assert "10 Adjacent, 3 Default" in r.stdout
    before = [line for line in srdf.read_text().splitlines() if "disable_collisions" not in line]
    after = [line for line in out.read_text().splitlines() if "disable_collisions" not in line
             and "gjk collision-matrix" not in line]
    assert before == after
    r2 = CliRunner().invoke(main, ["collision-matrix", str(path), "--samples", "300"])
    disabled = [line.strip() for line in r2.stdout.splitlines() if "<disable_collisions" in line]
    assert disabled == [line.strip() for line in out.read_text().splitlines() if "<disable_collisions" in line]
    assert len(disabled) == 10 + 3 + len([1 for line in disabled if 'reason="Never"' in line])
    r3 = CliRunner().invoke(main, ["collision-matrix", str(path), "--audit", str(srdf)])
    assert r3.exit_code == 1
    assert r3.stdout.startswith("panda_link2 panda_link6: disabled as Never, yet collides")
    r4 = CliRunner().invoke(main, ["collision-matrix", str(path), "--audit", str(out), "--samples", "300"])
    assert r4.exit_code == 0 and "stayed clear" in r4.stdout


def test_cli_prove_marks_proven_lines_and_leaves_the_rest_enabled(panda, tmp_path):
    from click.testing import CliRunner
    from lxml import etree

    from gjkcli.cli import main

    path, _, _ = panda
    out = tmp_path / "proven.srdf"
    r = CliRunner().invoke(main, ["collision-matrix", str(path), "--samples", "2000", "--prove",
                                  "--prove-boxes", "300", "-o", str(out)])
    assert r.exit_code == 0, r.stderr
    assert "--prove:" in r.stdout and "not proven (left enabled)" in r.stdout
    root = etree.parse(str(out)).getroot()
    never = [e for e in root.iter("disable_collisions") if e.get("reason") == "Never"]
    # every Never line is followed by its proof's comment; the unproven pairs are comments only
    assert never and all("proven: clear over the whole joint-limit box" in (e.getnext().text or "")
                         for e in never)
    left = [c.text for c in root.iter(etree.Comment) if c.text.startswith(" left enabled:")]
    assert any("panda_link0 panda_link4" in t for t in left)
