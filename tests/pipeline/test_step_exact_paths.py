"""The cheaper exact paths of the STEP refinement (issue 29), each held against OpenCASCADE on
the file's own solids: the canonical copies of B-spline faces, the nearest faces' distance, the
touching points, the fall-back to the file's solids near a threshold, the refinement spread
over worker processes, and the parts' triangles made finer. On the committed AS1 in AP214 (its
cylinders B-spline surfaces) and box_sides; a few pairs each, not the whole slow scan."""
from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("OCP", reason="STEP needs cadquery-ocp (OpenCASCADE)")

from OCP.BRepBuilderAPI import BRepBuilderAPI_MakeVertex  # noqa: E402
from OCP.gp import gp_Pnt  # noqa: E402

from fresh import python_c  # noqa: E402
from stepfiles import box, common_volume, cylinder, exact_distance, write_step  # noqa: E402

from gjkcli.engine.results import Status  # noqa: E402
from gjkcli.mesh import cad  # noqa: E402
from gjkcli.tolerances import DEFAULT  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "data" / "third_party"
AS1 = DATA / "step" / "as1-oc-214.stp"
BOLT = "as1/l-bracket-assembly:1/nut-bolt-assembly:1/bolt"
NUT = "as1/l-bracket-assembly:1/nut-bolt-assembly:1/nut"
# three pairs that touch (a bolt in the plate's hole, its nut on it, the rod in a bracket) and
# two apart (the bolt and the rod, the bolt of one bracket and the other bracket)
TOUCHING = [(BOLT, "as1/plate"), (BOLT, NUT),
            ("as1/rod-assembly/rod", "as1/l-bracket-assembly:1/l-bracket")]
APART = [(BOLT, "as1/rod-assembly/rod"), (BOLT, "as1/l-bracket-assembly:2/l-bracket")]


@pytest.fixture(scope="module")
def as1():
    parts = {p.name: p for p in cad.read_step(AS1)}
    return parts, {name: cad.placed_solid(p.brep[0]) for name, p in parts.items()}


def on_solid(point, solid) -> float:
    """OpenCASCADE's distance from a point to a solid (0 inside or on it)."""
    vertex = BRepBuilderAPI_MakeVertex(gp_Pnt(*np.asarray(point, dtype=float))).Vertex()
    return exact_distance(vertex, solid)


def test_canonical_copies_measure_as_the_files_solids(as1):
    """The AP214 AS1's B-spline faces become cylinders within canonical_rel of the part's size
    (the slack, > 0: something was converted), and the copies' distance and common volume are
    OpenCASCADE's on the file's solids within that slack and the file's own imprecision at its
    rims (its B-spline edges, which the copies' circles replace, within their tolerance of
    them: `cad.edge_moves`), for touching and for apart pairs."""
    parts, solids = as1
    for a, b in TOUCHING + APART:
        refs = (parts[a].brep, parts[b].brep)
        slack = cad.slack(refs[0], "mm") + cad.slack(refs[1], "mm")
        assert 0 < slack <= 2 * DEFAULT.canonical_rel * 200.0  # mm; the parts are under 200 mm
        rims = cad.edge_moves(refs[0], "mm") + cad.edge_moves(refs[1], "mm")
        d, pa, pb, inside = cad.exact_distance(*refs, "mm", canonical=True)
        truth = exact_distance(solids[a], solids[b])
        assert not inside and abs(d - truth) <= slack + rims + 1e-9, (a, b, d, truth)
        for point, solid in ((pa, solids[a]), (pb, solids[b])):
            assert on_solid(point, solid) < 1e-6 + rims
        if truth <= 1e-6:
            volume, thickness = cad.common_part(*refs, "mm", canonical=True)
            assert volume < 1e-6 and common_volume(solids[a], solids[b]) < 1e-6
            assert thickness < 1e-6
    assert any(exact_distance(solids[a], solids[b]) > 1.0 for a, b in APART)  # truly apart


def test_touching_points_lie_on_both_solids_within_the_band(as1):
    """From a point 0.2 mm off the contact, projections onto the nearest faces find a point of
    each solid within the band (so the solids' distance is too), on the file's solids; apart
    solids get none."""
    parts, solids = as1
    band = 1e-5
    for a, b in TOUCHING:
        refs = (parts[a].brep, parts[b].brep)
        _, pa, _, _ = cad.exact_distance(*refs, "mm")
        got = cad.touching_points(*refs, "mm", pa + 0.2, 1.0, band)
        assert got is not None, (a, b)
        d, qa, qb = got
        assert d <= band and np.linalg.norm(qa - qb) == pytest.approx(d, abs=1e-12)
        assert on_solid(qa, solids[a]) < 1e-6 and on_solid(qb, solids[b]) < 1e-6
    for a, b in APART:
        refs = (parts[a].brep, parts[b].brep)
        _, pa, _, _ = cad.exact_distance(*refs, "mm")
        assert cad.touching_points(*refs, "mm", pa, 1.0, band) is None



def test_common_parts_are_opencascade_s_plain_boolean(tmp_path, as1):
    """The common part's boolean filters its sub-shapes with oriented boxes too (issue 43): on
    the file's solids and on their canonical copies, touching pairs share no volume and an
    overlapping pair the volume of OpenCASCADE's plain BRepAlgoAPI_Common of the solids (and of
    the analytic overlap, 2 x 10 x 10 mm)."""
    parts, solids = as1
    for a, b in TOUCHING:
        want = common_volume(solids[a], solids[b])
        for canonical in (False, True):
            volume, thickness = cad.common_part(parts[a].brep, parts[b].brep, "mm", canonical)
            assert volume == pytest.approx(want, abs=1e-9) and thickness <= 1e-5, (a, b)
    path = write_step(tmp_path / "overlap.step", [("a", box(10, 10, 10)),
                                                  ("b", box(10, 10, 10, (8, 0, 0)))])
    first, second = cad.read_step(path)
    volume, thickness = cad.common_part(first.brep, second.brep, "mm")
    want = common_volume(cad.placed_solid(first.brep[0]), cad.placed_solid(second.brep[0]))
    assert volume == pytest.approx(want, rel=1e-9) and volume == pytest.approx(200.0, rel=1e-9)
    assert thickness == pytest.approx(2 * 200.0 / (2 * 100 + 4 * 20), rel=1e-9)


def test_nearest_faces_kept_per_placed_solid_give_the_same_faces(as1):
    """The faces' boxes of a placed solid are made once and kept (a frame meets many fittings);
    asked again, the nearest faces are the same ones, and a compound made for one call is not
    kept."""
    _, solids = as1
    a, b = TOUCHING[0]

    def kept():
        return sum(len(bucket) for bucket in cad._FACE_BOXES.values())

    first = cad._near_faces(solids[a], solids[b], 1.0)
    before = kept()
    again = cad._near_faces(solids[a], solids[b], 1.0)
    assert kept() == before
    for x, y in zip(first, again):
        fx, fy = cad._faces(x), cad._faces(y)
        assert len(fx) == len(fy) > 0 and all(f.IsSame(g) for f, g in zip(fx, fy))
    from OCP.BRep import BRep_Builder
    from OCP.TopoDS import TopoDS_Compound

    compound, builder = TopoDS_Compound(), BRep_Builder()
    builder.MakeCompound(compound)
    builder.Add(compound, solids[a])
    cad._near_faces(compound, solids[b], 1.0)
    assert kept() == before


def test_nearest_faces_give_the_whole_distance(tmp_path, as1):
    """exact_distance with a bound (the nearest faces only) equals the whole solids' for pairs
    near and far, and with a bound too small it measures the whole solids rather than answer
    beyond it; a box inside another (its surfaces 2 apart) is found inside, at distance 0 as the
    whole solids give it, and a box beside it is not."""
    parts, _ = as1
    for a, b in TOUCHING + APART:
        refs = (parts[a].brep, parts[b].brep)
        whole = cad.exact_distance(*refs, "mm")
        for within in (whole[0] + 0.5, 1e-3):  # a true bound, then one below the distance
            near = cad.exact_distance(*refs, "mm", within)
            assert near[0] == pytest.approx(whole[0], abs=1e-9) and near[3] == whole[3]
    outer, inner = box(10, 10, 10), box(2, 2, 2, (4, 4, 4))
    path = write_step(tmp_path / "nested.step", [("outer", outer), ("inner", inner)])
    refs = [p.brep for p in cad.read_step(path)]
    d, _, _, inside = cad.exact_distance(*refs, "mm", 5.0)
    assert inside and d == exact_distance(outer, inner) == 0.0
    beside = write_step(tmp_path / "beside.step", [("o", outer), ("b", box(2, 2, 2, (12, 0, 0)))])
    _, _, _, apart = cad.exact_distance(refs[0], cad.read_step(beside)[1].brep, "mm", 5.0)
    assert not apart


def test_answers_near_a_threshold_are_measured_on_the_files_solids(monkeypatch, as1):
    """With a slack as large as the band, every canonical answer lies within it of the band:
    the pair is measured again on the file's own solids, and the verdicts stay touching."""
    from gjkcli.pipeline import tessellated

    parts, solids = as1
    monkeypatch.setattr(cad, "slack", lambda refs, unit: 1.0)
    seen = []
    real = cad.common_part

    def common(*args):
        seen.append(args[3] if len(args) > 3 else False)
        return real(*args)

    monkeypatch.setattr(cad, "common_part", common)
    pending = {}
    for k, (a, b) in enumerate(TOUCHING):
        pa, pb = parts[a], parts[b]
        bodies = [pipeline_body(p) for p in (pa, pb)]
        pending[k] = tessellated.Pending(bodies[0], bodies[1], pa.eps + pb.eps, 1e-5, 0.0,
                                         (pa.brep, pb.brep), "mm")
    got = tessellated.decide_all(pending, jobs=1)
    assert [got[k].result.status for k in range(len(TOUCHING))] == [Status.TOUCHING] * len(TOUCHING)
    assert False in seen  # the file's solids were measured
    for k, (a, b) in enumerate(TOUCHING):
        assert got[k].lower <= exact_distance(solids[a], solids[b]) <= got[k].upper + 1e-9


def pipeline_body(part):
    """A part's triangles as the engine's Mesh, merged as the run merges them."""
    from gjkcli.engine.exact import Mesh
    from gjkcli.mesh.load import merge_close

    return Mesh(*merge_close(part.vertices, part.faces), name=part.name)


FORKED = """
import json, sys
from gjkcli.pipeline import run, tessellated
if sys.argv[3] == "at-once":
    tessellated.PARALLEL_FROM = 2  # fork for box_sides' few groups too
elif sys.argv[3] == "once-slow":  # after the first group, as a run does once its groups prove slow
    tessellated.PARALLEL_FROM, tessellated.EXACT_FROM = 10**9, 10**9
    tessellated.FORK_AFTER, tessellated.FORK_WORTH = 0.0, 0.0
shared, forks = tessellated._shared, []
tessellated._shared = lambda work, *args: forks.append(len(work)) or shared(work, *args)
found = run.scan([sys.argv[1]], run.Options(jobs=int(sys.argv[2])))
print(json.dumps(forks))
print(json.dumps([[p.a, p.b, p.status.value, round(p.result.distance, 9)] for p in found.pairs]))
"""


@pytest.mark.parametrize("when", ["at-once", "once-slow"])
def test_forked_refinement_matches_one_process(tmp_path, when):
    """box_sides scanned with its refinement shared with a forked worker process (a fresh
    process, so that it may fork), from the start (from 2 groups, not PARALLEL_FROM) or after
    its first group (FORK_AFTER and FORK_WORTH 0), lists the same pairs with the same verdicts
    and distances as one process, and those verdicts are OpenCASCADE's (collisions share
    volume, touching pairs none)."""
    plain = tmp_path / "box_sides.STEP"
    with gzip.open(DATA / "box_sides.STEP.gz", "rb") as src, open(plain, "wb") as dst:
        shutil.copyfileobj(src, dst)
    runs, forks = [], []
    for jobs in ("1", "2"):
        lines = python_c(FORKED, plain, jobs, when, cwd=tmp_path).splitlines()
        forks.append(json.loads(lines[-2]))
        runs.append(sorted(map(tuple, json.loads(lines[-1]))))
    assert forks[0] == [] and len(forks[1]) == 1 and forks[1][0] >= 2  # the groups it shared
    assert runs[0] == runs[1]
    statuses = {s for *_, s, _ in runs[0]}
    assert {"collision", "touching"} <= statuses
    solids = {p.name: cad.placed_solid(p.brep[0]) for p in cad.read_step(plain)}
    for a, b, status, _ in runs[0]:
        volume = common_volume(solids[a], solids[b])
        assert (volume > 1e-9) == (status == "collision"), (a, b, status, volume)


def test_three_groups_with_exact_solids_fork_at_once_with_one_process_s_answers(tmp_path):
    """The parts at the root (three collisions, each a group of its own) are shared with a
    forked worker from the start (EXACT_FROM) with two jobs, as the run is, and list the same
    pairs, verdicts and distances as one process; OpenCASCADE's common volume says collision
    for each."""
    from gjkcli.pipeline import tessellated

    path = DATA / "step" / "stp_multiple_shp_at_root.stp"
    assert tessellated.EXACT_FROM <= 3
    runs, forks = [], []
    for jobs in ("1", "2"):
        lines = python_c(FORKED, path, jobs, "as-is", cwd=tmp_path).splitlines()
        forks.append(json.loads(lines[-2]))
        runs.append(sorted(map(tuple, json.loads(lines[-1]))))
    assert forks == [[], [3]]
    assert runs[0] == runs[1]
    solids = {p.name: cad.placed_solid(p.brep[0]) for p in cad.read_step(path)}
    assert [status for _, _, status, _ in runs[0]] == ["collision"] * 3
    for a, b, _, _ in runs[0]:
        assert common_volume(solids[a], solids[b]) > 1e-9


SHARED_COPIES = """
import json, os, sys
from gjkcli.mesh import cad
from gjkcli.pipeline import run, tessellated
export = cad.canonical_export
def exported(refs):  # who made which product's copy (this process or the worker)
    with open("made.txt", "a") as f:
        f.writelines(f"{os.getpid()} {ref.index}\\n" for ref in refs)
    return export(refs)
cad.canonical_export = exported
found = run.scan([sys.argv[1]], run.Options(jobs=int(sys.argv[2])))
made = [list(map(int, line.split())) for line in open("made.txt")] if os.path.exists("made.txt") else []
os.path.exists("made.txt") and os.unlink("made.txt")
print(json.dumps([os.getpid(), made]))
print(json.dumps([[p.a, p.b, p.status.value, round(p.result.distance, 9),
                   None if p.result.distance_lower is None else round(p.result.distance_lower, 9)]
                  for p in found.pairs]))
"""


def test_canonical_copies_made_on_both_cores_give_one_process_s_answers(tmp_path):
    """The AP214 AS1's five products with B-spline faces: with two jobs their canonical copies
    are shared out between this process and a forked worker, each reading the other's (sent
    exactly, in OpenCASCADE's binary format), before the 24 groups of pairs are; the pairs,
    verdicts and distances are one process's, all 32 touching as OpenCASCADE has them."""
    runs, makers = [], []
    for jobs in ("1", "2"):
        lines = python_c(SHARED_COPIES, AS1, jobs, cwd=tmp_path).splitlines()
        me, made = json.loads(lines[-2])
        makers.append({pid == me for pid, _ in made})
        runs.append(sorted(map(tuple, json.loads(lines[-1]))))
        if jobs == "2":
            assert len(made) == 5 and len({index for _, index in made}) == 5  # each made once
    assert makers == [set(), {True, False}]  # one process makes them as it goes; two share them
    assert runs[0] == runs[1]
    assert [status for _, _, status, *_ in runs[0]] == ["touching"] * 32


def test_groups_needing_no_copy_are_refined_before_the_copies_are_awaited(monkeypatch):
    """A process sharing the canonical copies (`tessellated._drain` with an exchange) refines
    the groups that need none of them first, reading the workers' copies as they come between
    groups, and exchanges them once, as it takes the first group that needs them: it no longer
    waits first for the slowest process's copies (Euclid's pm2: the housing's, 1 s, while the
    other process's two small copies were made at once). With no group needing them, the
    exchange still happens once, when none is left (every process's copies read), and nothing
    is imported."""
    from gjkcli import forks
    from gjkcli.pipeline import tessellated

    events: list = []
    monkeypatch.setattr(tessellated, "_decide_one", lambda item, memo: events.append(item) or item)
    monkeypatch.setattr(cad, "canonical_import", lambda made: events.append(("import", made)))

    class Exchange:
        def poll(self):
            events.append("poll")

        def __call__(self):
            events.append("exchange")
            return ["copies"]

    for split, want in ((3, [0, 1, 2, "exchange", ("import", ["copies"]), 3, 4]),
                        (5, [0, 1, 2, 3, 4, "exchange"])):
        events.clear()
        counter = forks.Counter()
        monkeypatch.setattr(tessellated, "_WORK", [[(k, k)] for k in range(5)])
        monkeypatch.setattr(tessellated, "_NEXT", counter)
        monkeypatch.setattr(tessellated, "_SPLIT", split)
        try:
            out = tessellated._drain(exchange=Exchange())
        finally:
            counter.close()
        assert out == {k: k for k in range(5)}
        assert [e for e in events if e != "poll"] == want
        assert events[:2] == ["poll", 0]  # the workers' copies looked for before each group
        assert events.count("poll") == split + 1


NO_FORK = """
import json, os, sys
from gjkcli.pipeline import run
def no_fork():  # as fork(2) answers at the user's process limit
    raise BlockingIOError(11, "Resource temporarily unavailable")
os.fork = no_fork
found = run.scan([sys.argv[1]], run.Options(jobs=int(sys.argv[2])))
print(json.dumps([[p.a, p.b, p.status.value, round(p.result.distance, 9)] for p in found.pairs]))
"""


def test_a_worker_that_cannot_be_forked_leaves_its_share_to_the_command(tmp_path):
    """With two jobs and no process left to fork, the AP214 AS1's refinement (five canonical
    copies to share, 24 groups) is done by the command's process alone: one process's pairs,
    verdicts and distances, not an error."""
    one = json.loads(python_c(NO_FORK, AS1, "1", cwd=tmp_path))
    two = json.loads(python_c(NO_FORK, AS1, "2", cwd=tmp_path))
    assert sorted(map(tuple, two)) == sorted(map(tuple, one))
    assert [status for _, _, status, _ in one] == ["touching"] * 32


def test_canonical_copies_read_back_are_the_ones_made():
    """`canonical_export` then `canonical_import` in a process that has not made them: the same
    slack and edge moves, and OpenCASCADE's distance and common volume between the copies the
    same to the last digit."""
    parts = cad.read_step(AS1)
    refs = [p.brep[0] for p in parts]
    for ref in refs:  # made by an earlier test in this process: forgotten
        cad._CANONICAL.pop(hash(cad._placed(ref)[0]), None)
    todo = cad.canonical_todo(refs)
    assert len(todo) == 5
    entries = cad.canonical_export(todo)
    assert all(data is not None for _, data, _, _ in entries)
    made = {ref.index: cad._canonical(cad._placed(ref)[0]) for ref in todo}
    for ref in todo:  # forgotten again, as in a process that did not make them
        cad._CANONICAL.pop(hash(cad._placed(ref)[0]))
    assert len(cad.canonical_todo(refs)) == 5
    cad.canonical_import(entries)
    assert cad.canonical_todo(refs) == []
    for ref in todo:
        copy, gap, moved = cad._canonical(cad._placed(ref)[0])
        assert (gap, moved) == made[ref.index][1:]
        assert exact_distance(copy, made[ref.index][0]) == 0.0
        assert common_volume(copy, made[ref.index][0]) == pytest.approx(
            common_volume(made[ref.index][0], made[ref.index][0]), rel=1e-12)


def test_finer_triangles_decide_as_opencascade(tmp_path, monkeypatch):
    """A cylinder (radius 10, its tessellation error e) beside a box, at gaps swept from a
    hundredth of e to twice e, with and without a clearance between them: every verdict and
    OpenCASCADE's distance inside the pair's bounds. Gaps within e (but not too near the band or
    the clearance) are decided on triangles made finer, the nearest is left to OpenCASCADE
    (finer than FINER_UP_TO times), and 2e needs neither; with FINER_TRIANGLES below the
    parts' triangles, none is made finer and OpenCASCADE gives the same verdicts."""
    from gjkcli.pipeline import tessellated

    solid = cylinder(10.0, 20.0, seam=0.37)  # no triangle corner on the nearest line
    e = cad.read_step(write_step(tmp_path / "c.step", [("c", solid)]))[0].eps
    assert e > 0
    tol, fractions = 1e-5, (0.01, 0.3, 0.6, 0.9, 2.0)
    pending, truth, paths = {}, {}, {}
    for k, fraction in enumerate(fractions):
        gap = fraction * e
        other = box(10.0, 20.0, 20.0, (10.0 + gap, -10.0, 0.0))
        path = write_step(tmp_path / f"gap{k}.step", [("cylinder", solid), ("box", other)])
        parts = cad.read_step(path)
        bodies = [pipeline_body(p) for p in parts]
        for clearance in (0.0, gap * 1.4):
            pending[k, clearance] = tessellated.Pending(
                bodies[0], bodies[1], parts[0].eps + parts[1].eps, tol, clearance,
                (parts[0].brep, parts[1].brep), "mm")
            truth[k, clearance] = exact_distance(solid, other)
    got = tessellated.decide_all(pending, jobs=1)
    for (k, clearance), answer in got.items():
        d = truth[k, clearance]
        want = Status.CLEARANCE if d < clearance else Status.CLEAR
        assert answer.result.status is want, (fractions[k], clearance, answer)
        assert answer.lower - 1e-9 <= d <= answer.upper + 1e-9, (fractions[k], answer, d)
        paths[fractions[k], clearance > 0] = "finer" in (answer.note or "")
    assert paths[0.3, False] and paths[0.6, False] and paths[0.9, False]
    assert paths[0.3, True] and paths[0.9, True]
    assert not paths[0.01, False] and not paths[2.0, False]
    monkeypatch.setattr(tessellated, "FINER_TRIANGLES", 1)
    again = tessellated.decide_all(pending, jobs=1)
    assert not any("finer" in (answer.note or "") for answer in again.values())
    assert {k: a.result.status for k, a in again.items()} == \
        {k: a.result.status for k, a in got.items()}
