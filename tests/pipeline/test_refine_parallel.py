"""The refine stage (`gjkcli.pipeline.refine`) shared with forked workers: the same JSON as one
process gives, shared from its threshold on or once the pairs prove slow, and never where the
process may not fork.

Each run is `gjk scan` in a fresh process (the test process may have imported manifold3d, after
which nothing forks) over 60 closed L-shaped prisms placed at random in a small box, so that many
pairs' hulls collide and their triangles decide (the notch of an L leaves some clear). Which
processes did the work is written by a wrapper around the function that tests a share of pairs.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

# the L, counter-clockwise, and its fan from the corner at the origin (the L is star-shaped from it)
_L = np.array([[0, 0], [2, 0], [2, 1], [1, 1], [1, 2], [0, 2]], dtype=np.float64)
_FAN = [(0, k, k + 1) for k in range(1, 5)]


def _prism_faces() -> np.ndarray:
    bottom = [(a, c, b) for a, b, c in _FAN]
    top = [(a + 6, b + 6, c + 6) for a, b, c in _FAN]
    sides = []
    for k in range(6):
        n = (k + 1) % 6
        sides += [(k, n, n + 6), (k, n + 6, k + 6)]
    return np.array(bottom + top + sides, dtype=np.int64)


def _write_scene(folder: Path, n: int = 60, seed: int = 24) -> None:
    """n L-prisms (2 x 2 x 1) as OFF files, each turned about a random axis and placed in a 9 x 9
    x 3 box."""
    rng = np.random.default_rng(seed)
    faces = _prism_faces()
    local = np.vstack([np.c_[_L, np.zeros(6)], np.c_[_L, np.ones(6)]]) - [1.0, 1.0, 0.5]
    folder.mkdir()
    for k in range(n):
        q, r = np.linalg.qr(rng.normal(size=(3, 3)))
        turn = q * np.sign(np.diag(r))
        if np.linalg.det(turn) < 0:
            turn[:, 0] = -turn[:, 0]
        world = local @ turn.T + rng.uniform([0, 0, 0], [9, 9, 3])
        lines = ["OFF", f"{len(world)} {len(faces)} 0"]
        lines += [" ".join(f"{x:.17g}" for x in v) for v in world]
        lines += ["3 " + " ".join(map(str, f)) for f in faces]
        (folder / f"part{k:02d}.off").write_text("\n".join(lines) + "\n")


_SCRIPT = """
import os, sys
import gjkcli.mesh.overlap as overlap
import gjkcli.pipeline.refine as refine
from gjkcli.cli import main

jobs, low, block = sys.argv[1], sys.argv[2], sys.argv[3] == "block"
if low == "low":  # thresholds lowered so that a 60-part scene takes the forked paths at once
    refine.PARALLEL_FROM = overlap.PARALLEL_FROM = 8
elif low == "slow":  # every pair as slow as worth a fork: shared after the first few
    refine.FORK_AFTER = refine.FORK_WORTH = 0.0
else:  # no pair slow enough
    refine.FORK_WORTH = float("inf")
if block:  # as after an overlap volume in this process: no fork from here on
    import manifold3d

def logged(name, module, what):
    plain = getattr(module, name)
    def wrapper(*args):
        with open(what + ".pids", "a") as f:
            f.write(f"{os.getpid()}\\n")
        return plain(*args)
    setattr(module, name, wrapper)

logged("_share", refine, "refine")
try:
    files = sorted(os.path.join("scene", f) for f in os.listdir("scene"))  # a folder imports trimesh
    main(["scan", *files, "--together", "--tolerance", "0.01", "--all-pairs", "--format", "json", "-o", "out.json",
          "-q", "--jobs", jobs], standalone_mode=True)
except SystemExit as stop:
    assert stop.code in (0, 1), stop.code
print(os.getpid())
"""


def _scan(tmp_path: Path, name: str, jobs: int, low, block: bool = False) -> tuple:
    """(the JSON report without its timings, the processes that refined, this process) of one
    run in tmp_path/name."""
    here = tmp_path / name
    here.mkdir()
    (here / "scene").symlink_to(tmp_path / "scene")
    mode = low if isinstance(low, str) else "low" if low else "-"
    done = subprocess.run([sys.executable, "-c", _SCRIPT, str(jobs), mode,
                           "block" if block else "-"], cwd=here, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    parent = int(done.stdout.split()[-1])

    def pids(what):
        f = here / f"{what}.pids"
        return {int(p) for p in f.read_text().split()} if f.exists() else set()

    return _without_timings(json.loads((here / "out.json").read_text())), pids("refine"), parent


def _without_timings(doc):
    if isinstance(doc, dict):
        return {k: _without_timings(v) for k, v in doc.items() if k not in ("elapsed", "timings")}
    if isinstance(doc, list):
        return [_without_timings(v) for v in doc]
    return doc


def test_two_jobs_give_the_one_process_json(tmp_path):
    _write_scene(tmp_path / "scene")
    serial, refined_1, parent_1 = _scan(tmp_path, "one", 1, low=True)
    forked, refined_2, parent_2 = _scan(tmp_path, "two", 2, low=True)
    # the scene asks the triangles for many pairs, and they answer both ways (the notches: the
    # hulls collide, the parts stand clear)
    exact = [p["status"] for p in serial["pairs"] if p["mode"] == "exact"]
    assert 100 <= len(exact) <= 380
    assert 0.3 <= exact.count("collision") / len(exact) <= 0.98
    assert exact.count("clear") >= 1
    # (3 of the hull polygon's 3.5 square units)
    assert all(o["convexity"] == "fills 85.7143% of its hull's volume" for o in serial["objects"])
    # one process refined with one job; with two, this process and one forked worker
    assert refined_1 == {parent_1}
    assert parent_2 in refined_2 and len(refined_2) == 2
    assert forked == serial


def test_pairs_that_prove_slow_are_shared(tmp_path):
    """Under PARALLEL_FROM, the pairs are shared once those tested prove slow (here: at once,
    the thresholds set to nothing), with the same JSON."""
    _write_scene(tmp_path / "scene")
    serial, _, _ = _scan(tmp_path, "one", 1, low=False)
    slow, refined, parent = _scan(tmp_path, "slow", 2, low="slow")
    assert parent in refined and len(refined) == 2
    assert slow == serial


def test_serial_under_the_thresholds_and_where_the_process_may_not_fork(tmp_path):
    _write_scene(tmp_path / "scene")
    small, refined, parent = _scan(tmp_path, "small", 2, low=False)
    assert refined == {parent}  # 380 quick pairs: below the threshold, never slow enough
    blocked, refined, parent = _scan(tmp_path, "blocked", 2, low=True, block=True)
    assert refined == {parent}  # manifold3d ran here: nothing forks
    assert blocked == small


_REASONS = """
import os, sys, time
import gjkcli.mesh.convexity as convexity
import gjkcli.pipeline.refine as refine
import gjkcli.pipeline.stages as stages
from gjkcli.cli import main

jobs, ahead = sys.argv[1], sys.argv[2] == "ahead"
stages.REASONS_AHEAD_FACES = 0 if ahead else float("inf")
# the scene's few wedged fits stay undecided: their common solids (manifold3d, after which
# nothing forks) would otherwise be measured before the reasons
refine.by_thickness = lambda parts, i, j, answers, jobs=1: dict(answers)
plain = convexity.part_reasons
MAIN = os.getpid()

def logged(gaps, which, *rest):
    with open("reasons.pids", "a") as f:
        f.write(f"{os.getpid()} {len(which)}\\n")
    if os.getpid() != MAIN:  # a worker given less of a core (a busy machine)
        time.sleep(0.5)
    return plain(gaps, which, *rest)

convexity.part_reasons = logged
try:
    files = sorted(os.path.join("scene", f) for f in os.listdir("scene"))
    main(["scan", *files, "--together", "--tolerance", "0.01", "--all-pairs", "--format", "json", "-o", "out.json",
          "-q", "--jobs", jobs], standalone_mode=True)
except SystemExit as stop:
    assert stop.code in (0, 1), stop.code
print(os.getpid())
"""


def _reasons(tmp_path: Path, name: str, jobs: int, ahead: bool) -> tuple:
    """(the JSON report without its timings, {process: reasons it measured}, this process)."""
    here = tmp_path / name
    here.mkdir()
    (here / "scene").symlink_to(tmp_path / "scene")
    done = subprocess.run([sys.executable, "-c", _REASONS, str(jobs), "ahead" if ahead else "-"], cwd=here,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    measured: dict = {}
    for line in (here / "reasons.pids").read_text().split("\n"):
        if line:
            pid, n = map(int, line.split())
            measured[pid] = measured.get(pid, 0) + n
    return _without_timings(json.loads((here / "out.json").read_text())), measured, int(done.stdout.split()[-1])


def test_convexity_reasons_are_measured_ahead_by_a_forked_worker(tmp_path):
    """`Parts.reasons_ahead`: with two jobs, from REASONS_AHEAD_FACES (lowered here to nothing),
    a forked worker measures the objects' convexity reasons, share after share, while the run
    goes on, and this process the shares it has not taken when the report reads a record: each
    reason is measured once, whichever process measures it (never twice, however late the
    worker), and the report is the one process's; under it (here: never), this process
    measures them all."""
    _write_scene(tmp_path / "scene")
    serial, measured_1, parent_1 = _reasons(tmp_path, "one", 1, ahead=True)
    shared, measured_2, parent_2 = _reasons(tmp_path, "two", 2, ahead=True)
    alone, measured_3, parent_3 = _reasons(tmp_path, "alone", 2, ahead=False)
    assert list(measured_1) == [parent_1] and measured_1[parent_1] == 60
    workers = [pid for pid in measured_2 if pid != parent_2]
    assert len(workers) == 1 and measured_2[workers[0]] > 0
    assert sum(measured_2.values()) == 60
    assert list(measured_3) == [parent_3]
    assert all(o["convexity"] == "fills 85.7143% of its hull's volume" for o in serial["objects"])
    assert shared == serial == alone
