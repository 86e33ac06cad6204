"""The five real assemblies of issue 29 (tests/data/third_party/step/): the exact answers a
scan shares between pairs of the same two products in the same relative pose
(`gjkcli.pipeline.tessellated.ExactMemo`), held against OpenCASCADE called here on each pair's
own placed solids (BRepExtrema_DistShapeShape, BRepAlgoAPI_Common)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("OCP", reason="STEP needs cadquery-ocp (OpenCASCADE)")

from OCP.BRepAlgoAPI import BRepAlgoAPI_Common  # noqa: E402
from OCP.BRepBuilderAPI import BRepBuilderAPI_MakeVertex  # noqa: E402
from OCP.BRepExtrema import BRepExtrema_DistShapeShape  # noqa: E402
from OCP.BRepGProp import BRepGProp  # noqa: E402
from OCP.GProp import GProp_GProps  # noqa: E402
from OCP.gp import gp_Pnt  # noqa: E402

from gjkcli.engine.results import Status  # noqa: E402
from gjkcli.mesh import cad  # noqa: E402
from gjkcli.pipeline import run as pipeline  # noqa: E402
from gjkcli.pipeline import tessellated  # noqa: E402

STEP_DIR = Path(__file__).resolve().parents[1] / "data" / "third_party" / "step"


def occ_distance(a, b) -> float:
    d = BRepExtrema_DistShapeShape(a, b)
    assert d.IsDone()
    return d.Value()


def occ_common_volume(a, b) -> float:
    common = BRepAlgoAPI_Common(a, b)
    assert common.IsDone()
    props = GProp_GProps()
    BRepGProp.VolumeProperties_s(common.Shape(), props)
    return abs(props.Mass())


@pytest.fixture(scope="module")
def as1_bspline():
    """The AP214 AS1 (its cylinders B-spline surfaces) scanned once, with every OpenCASCADE call
    the scan makes counted."""
    calls = {"distance": 0, "points": 0, "common": 0}
    made = []
    real_distance, real_common = cad.exact_distance, cad.common_part
    real_points = cad.touching_points
    real_init = tessellated.ExactMemo.__init__

    def distance(*args):
        calls["distance"] += 1
        return real_distance(*args)

    def points(*args):
        calls["points"] += 1
        return real_points(*args)

    def common(*args):
        calls["common"] += 1
        return real_common(*args)

    def init(self):
        real_init(self)
        made.append(self)

    mp = pytest.MonkeyPatch()
    mp.setattr(cad, "exact_distance", distance)
    mp.setattr(cad, "touching_points", points)
    mp.setattr(cad, "common_part", common)
    mp.setattr(tessellated.ExactMemo, "__init__", init)
    try:
        found = pipeline.scan([str(STEP_DIR / "as1-oc-214.stp")], pipeline.Options(jobs=1))
    finally:
        mp.undo()
    return found, calls, made


def test_as1_repeated_pairs_are_measured_once(as1_bspline):
    """32 touching pairs (bolts in holes, nuts on bolts), but the bolt against its nut is one
    product pair in one pose six times and each bolt against its bracket twice: OpenCASCADE
    runs for fewer pairs than are refined, and every pair still reads touching. Each key's
    surfaces are shown within the band by a point of each (`cad.touching_points`), so the
    whole solids' distance is never measured."""
    found, calls, (memo,) = as1_bspline
    assert not found.errors
    brep = [p for p in found.pairs if p.mode == "brep"]
    assert found.counts["touching"] == 32 and len(brep) == 32
    assert all(p.status is Status.TOUCHING for p in brep)
    assert memo.reused >= 16 and calls["points"] == calls["common"] <= 24
    assert calls["distance"] == 0
    assert memo.computed == calls["points"] + calls["common"]


def test_as1_shared_answers_hold_on_each_pairs_own_solids(as1_bspline):
    """Each of the six bolt/nut pairs (one measured, five given the first one's answer) and the
    two plate/bolt pairs listed in either order: OpenCASCADE's distance on the pair's own solids
    lies between the reported bounds (touching points bound it from above, within the band),
    the common volume is ~0 (no collision) and the reported points, placed with the pair's own
    pose, lie on the pair's own solids."""
    found, _, _ = as1_bspline
    refs = {part.name: part.brep[0] for part in cad.read_step(STEP_DIR / "as1-oc-214.stp")}
    chosen = [p for p in found.pairs if p.a.endswith("/bolt") and p.b.endswith("/nut")]
    chosen += [p for p in found.pairs if {p.a.rsplit("/", 1)[-1], p.b.rsplit("/", 1)[-1]} ==
               {"plate", "bolt"}][:2]
    assert len(chosen) == 8
    for p in chosen:
        a, b = cad.placed_solid(refs[p.a]), cad.placed_solid(refs[p.b])
        tol = p.result.tolerance
        d = occ_distance(a, b)
        assert d <= tol and p.result.distance <= tol
        assert p.distance_lower <= d <= p.result.distance + 1e-9
        volume = occ_common_volume(a, b)
        assert volume < 1e-6  # mm^3: surfaces meet, no solid in common
        # found on the canonical copies, whose rims lie where the surfaces meet: the file's
        # own B-spline rims lie within their tolerance of them (`cad.edge_moves`)
        for point, solid, ref in ((p.result.point_a, a, refs[p.a]),
                                  (p.result.point_b, b, refs[p.b])):
            vertex = BRepBuilderAPI_MakeVertex(gp_Pnt(*np.asarray(point, dtype=float))).Vertex()
            rims = cad.edge_moves((ref,), "mm")
            assert occ_distance(vertex, solid) < 1e-6 + rims, (p.a, p.b)


def test_memo_flips_and_places_points():
    """ExactMemo on its own: an answer stored for (A, B) at one pose is handed back for (B, A)
    at another pose with its points swapped and moved rigidly, without a second call."""
    calls = []

    def fake(refs_a, refs_b, unit, within=None, canonical=False):
        calls.append((refs_a, refs_b))
        return 0.5, np.array([1.0, 0.0, 0.0]), np.array([1.5, 0.0, 0.0]), False

    mp = pytest.MonkeyPatch()
    mp.setattr(cad, "exact_distance", fake)
    try:
        memo = tessellated.ExactMemo()
        first = memo.distance(("A", "B"), "mm", same="k", pose=np.eye(4))
        turn = np.eye(4)
        turn[:3, :3] = [[0, -1, 0], [1, 0, 0], [0, 0, 1]]  # a quarter turn about z, then +10 z
        turn[2, 3] = 10.0
        d, pa, pb, inside, how = memo.distance(("B", "A"), "mm", same="k", pose=turn, flip=True)
    finally:
        mp.undo()
    assert calls == [("A", "B")] and first[0] == d == 0.5 and not inside and how == "measured"
    assert memo.computed == 1 and memo.reused == 1
    np.testing.assert_allclose(pb, [0.0, 1.0, 10.0])  # A's point, placed, is now B's
    np.testing.assert_allclose(pa, [0.0, 1.5, 10.0])


def test_the_solids_of_one_placed_product_share_their_answer_whatever_its_turn(tmp_path, monkeypatch):
    """A product of two solids (a pin standing on a block) placed three times, each turned
    about z: the pin against its block is in no relative pose at all in each placement, so
    OpenCASCADE's boolean runs once, not once a turn (R^T R of each turn rounds differently:
    a CATIA drone's three arms paid three 10 s booleans for one); each pair still touches on
    its own solids (OpenCASCADE's distance and common volume)."""
    from OCP.BRep import BRep_Builder
    from OCP.BRepPrimAPI import BRepPrimAPI_MakeCylinder
    from OCP.gp import gp_Ax2, gp_Dir
    from OCP.TopoDS import TopoDS_Compound

    from stepfiles import box, write_step

    builder, fitting = BRep_Builder(), TopoDS_Compound()
    builder.MakeCompound(fitting)
    builder.Add(fitting, box(10, 10, 10))
    builder.Add(fitting, BRepPrimAPI_MakeCylinder(gp_Ax2(gp_Pnt(5, 5, 10), gp_Dir(0, 0, 1)), 2.0, 6.0).Shape())
    path = write_step(tmp_path / "fits.step", [("fitting", fitting)], assembly="asm",
                      instances=[("fitting", (0, 0, 0), 0.3), ("fitting", (40, 0, 0), 1.1),
                                 ("fitting", (0, 40, 0), 2.3)])
    calls = []
    real = cad.common_part

    def common(*args, **kwargs):
        calls.append(args[:2])
        return real(*args, **kwargs)

    monkeypatch.setattr(cad, "common_part", common)
    found = pipeline.scan([str(path)], pipeline.Options(jobs=1))
    monkeypatch.undo()
    assert [(p.a, p.b, p.status) for p in found.pairs] == [
        (f"asm/fitting:{k}#1", f"asm/fitting:{k}#2", Status.TOUCHING) for k in (1, 2, 3)]
    assert len(calls) == 1
    refs = {part.name: part.brep[0] for part in cad.read_step(path)}
    for p in found.pairs:
        a, b = cad.placed_solid(refs[p.a]), cad.placed_solid(refs[p.b])
        assert occ_distance(a, b) <= p.result.tolerance and occ_common_volume(a, b) < 1e-9


@pytest.mark.parametrize("name", ["as1_pe_203.stp", "eight_cyl.stp", "stp_multiple_shp_at_root.stp"])
def test_assemblies_agree_with_opencascade_on_a_subset(name):
    """Each other committed assembly scanned (eight_cyl is one solid: no pair); its listed pairs
    (at most 6, the first in report order) held against OpenCASCADE's distance and common volume on the pair's own solids."""
    found = pipeline.scan([str(STEP_DIR / name)], pipeline.Options(jobs=1))
    assert not found.errors and len(found.objects) > 0
    refs = {part.name: part.brep[0] for part in cad.read_step(STEP_DIR / name)}
    for p in found.pairs[:6]:
        a, b = cad.placed_solid(refs[p.a]), cad.placed_solid(refs[p.b])
        tol = p.result.tolerance
        d = occ_distance(a, b)
        if p.status is Status.COLLISION:
            assert d <= tol and occ_common_volume(a, b) > 0
        elif p.status is Status.TOUCHING:
            assert d <= tol
        else:
            assert p.status in (Status.CLEAR, Status.CLEARANCE) and d > tol


def test_scanning_every_committed_step_file_imports_no_scipy(tmp_path):
    """`gjk scan` of each committed STEP file, in one fresh Python: every solid's hull is built
    by the compiled core (gjkcli/engine/csrc/smallhull.c; eight_cyl's caps are rings of coplanar
    points, which went to qhull), so scipy (about 0.35 s of a scan's start) is never imported;
    the verdicts are the files' own (as the tests above hold them against OpenCASCADE)."""
    import gzip
    import json

    from fresh import python_c

    names = ["as1-oc-214.stp", "as1_pe_203.stp", "eight_cyl.stp", "stp_multiple_shp_at_root.stp"]
    for name in names:
        (tmp_path / name).write_bytes((STEP_DIR / name).read_bytes())
    boxes = STEP_DIR.parent / "box_sides.STEP.gz"
    (tmp_path / "box_sides.STEP").write_bytes(gzip.decompress(boxes.read_bytes()))
    names.append("box_sides.STEP")
    script = (
        "import contextlib, io, json, sys\n"
        "from gjkcli.cli import main\n"
        "reports = []\n"
        f"for name in {names!r}:\n"
        "    with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        "        try:\n"
        "            main(['scan', name, '--format', 'json', '-j', '1'], standalone_mode=False)\n"
        "        except SystemExit:\n"
        "            pass\n"
        "    reports.append(json.loads(out.getvalue())['summary'])\n"
        "print(json.dumps([reports, 'scipy' in sys.modules]))\n")
    summaries, scipy_imported = json.loads(python_c(script, cwd=tmp_path))
    verdicts = [{k: s.get(k, 0) for k in ("collision", "touching", "clear")} for s in summaries]
    assert verdicts == [{"collision": 0, "touching": 32, "clear": 0}, {"collision": 0, "touching": 32, "clear": 0},
                        {"collision": 0, "touching": 0, "clear": 0}, {"collision": 3, "touching": 0, "clear": 0},
                        {"collision": 8, "touching": 8, "clear": 4}]
    assert not scipy_imported
