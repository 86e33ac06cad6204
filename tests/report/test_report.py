"""The renderers on hand-built results: no engine, no files.

Each renderer is a pure function of `gjkcli.engine.results` objects and the plain records of
`gjkcli.report`, so these tests build those by hand and read the text that comes out.
"""
from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import fresh
import pytest
from rich.console import Console

import gjkcli
from gjkcli.errors import Problem as InputProblem
from gjkcli.pipeline.findings import Finding, Findings, ObjectRecord, hull_note, violates
from gjkcli.report import chunks
from gjkcli.report.jsonout import Encoded, document as check_document, dumped_chunks, dumps, encoded
from gjkcli.report.jsonout import pair_dict, trace_lines
from gjkcli.report.table import render_check, render_pair
from gjkcli.report.trace import render_trace
from gjkcli.engine.results import PlaneCertificate, PointCertificate, Result, Status, TraceStep



def python_c(code: str, cwd: Path) -> str:
    """stdout of `python -c code` on the same gjkcli the tests import, from a neutral folder."""
    here = str(Path(gjkcli.__file__).resolve().parents[1])
    return fresh.python_c(code, cwd=cwd, env={"PYTHONPATH": here}).strip()


def text_of(renderable, width: int = 110) -> str:
    """What a renderable prints on a plain (not a terminal) console."""
    buf = io.StringIO()
    Console(file=buf, width=width, color_system=None, force_terminal=False).print(renderable)
    return buf.getvalue()


def words(renderable, width: int = 110) -> str:
    """The printed text with line breaks and runs of spaces collapsed, for phrase checks."""
    return " ".join(text_of(renderable, width).split())


def step(phase="gjk", iteration=0, direction=(-1.0, 0.0, 0.0), w=(1.0, 0.0, 0.0), before=(), after=None,
         kept=None, feature="vertex", vnorm=1.0, lower=0.5, upper=1.0, exit=None, passed=False,
         lambdas=None, faces=0, support=0.0, index_a=3, index_b=5, steps_a=2, steps_b=0):
    w = np.asarray(w, dtype=float)
    before = np.asarray(before, dtype=float).reshape(-1, 3)
    if after is None:
        after = np.vstack([before, w[None]]) if feature else before
    after = np.asarray(after, dtype=float).reshape(-1, 3)
    if kept is None:
        kept = (True,) * len(before) + (feature is not None,) if phase == "gjk" else ()
    if lambdas is None:
        lambdas = np.full(len(after), 1.0 / max(1, len(after))) if phase == "gjk" else np.zeros(0)
    return TraceStep(
        phase=phase, iteration=iteration, direction=np.asarray(direction, dtype=float), index_a=index_a,
        index_b=index_b, steps_a=steps_a, steps_b=steps_b, point_a=w + 1.0, point_b=np.ones(3), w=w,
        passed=passed, simplex_before=before, simplex_after=after, lambdas=np.asarray(lambdas, dtype=float),
        feature=feature if phase == "gjk" else None, kept=tuple(kept), vnorm=vnorm, lower=lower, upper=upper,
        exit=exit, faces=faces, support=support,
    )


W0, W1, W2 = (1.0, 0.5, 0.0), (1.0, -0.5, 0.0), (1.0, 0.0, 0.25)

# A clear pair found in three iterations: a vertex, an edge, then the bounds meet.
CLEAR_TRACE = (
    step(iteration=0, direction=(-1, -0.5, 0), w=W0, feature="vertex", vnorm=1.118, lower=-np.inf, upper=1.118),
    step(iteration=1, direction=(-1, -0.5, 0), w=W1, before=[W0], feature="edge", vnorm=1.0, lower=0.67,
         upper=1.0, lambdas=[0.5, 0.5]),
    step(iteration=2, direction=(-1, 0, 0), w=W2, before=[W0, W1], after=[W0, W1], kept=(True, True, False),
         feature=None, vnorm=1.0, lower=1.0, upper=1.0, exit="converged", lambdas=[0.5, 0.5]),
)

T0, T1, T2, T3 = (1.0, 1.0, 1.0), (-1.0, 1.0, -1.0), (1.0, -1.0, -1.0), (-1.0, -1.0, 1.0)
# A collision: the tetrahedron encloses the origin, then EPA finds the depth.
COLLISION_TRACE = (
    step(iteration=0, w=T0, feature="vertex", vnorm=1.732, lower=-1.7, upper=1.732, passed=True),
    step(iteration=1, w=T1, before=[T0], feature="edge", vnorm=1.414, lower=-1.0, upper=1.414, passed=True),
    step(iteration=2, w=T2, before=[T0, T1], feature="face", vnorm=0.577, lower=-0.5, upper=0.577, passed=True),
    step(iteration=3, w=T3, before=[T0, T1, T2], feature="inside", vnorm=0.0, lower=-0.5, upper=0.0,
         exit="origin enclosed", passed=True),
    step(phase="epa", iteration=0, direction=(0.577, 0.577, -0.577), w=(1, 1, -1), vnorm=0.577, lower=0.577,
         upper=1.732, support=1.732, faces=6, feature=None),
    step(phase="epa", iteration=1, direction=(1, 0, 0), w=(1, 0, 0), vnorm=0.9, lower=0.9, upper=0.9,
         support=0.9, faces=6, exit="converged", feature=None),
)


def result(status=Status.CLEAR, distance=1.0, depth=None, trace=None, certificate="plane", **kw) -> Result:
    cert = None
    if certificate == "plane":
        cert = PlaneCertificate(np.array([1.0, 0.0, 0.0]), 0.5)
    elif certificate == "point":
        cert = PointCertificate(np.array([0.25, 0.0, 0.0]))
    fields = dict(
        status=status, distance=distance, distance_lower=distance, depth=depth,
        normal=np.array([1.0, 0.0, 0.0]), point_a=np.array([0.5, 0.0, 0.0]), point_b=np.array([0.5 + distance, 0, 0]),
        certificate=cert, iterations=3, epa_iterations=0, exit="converged", epa_exit=None, tolerance=1e-7,
        trace=trace, elapsed=2.5e-5,
    )
    fields.update(kw)
    return Result(**fields)


def is_violation(status, clearance) -> bool:
    return violates(status, clearance, ("collision", "clearance"))


def CheckReport(objects=(), pairs=(), errors=(), **kw) -> Findings:
    """A check's findings, counted as the pipeline counts them."""
    counts = {s.value: 0 for s in Status}
    for p in pairs:
        counts[Status(p.status).value] += 1
    return Findings(command="check", objects=tuple(objects), pairs=tuple(pairs), errors=tuple(errors),
                    counts=counts, checked=len(pairs), fail_on=("collision", "clearance"), **kw)


def obj(name, convex=True, units=None) -> ObjectRecord:
    return ObjectRecord(name=name, file=f"parts/{name}", vertices=8, faces=12, hull_vertices=8, convex=convex,
                      watertight=True, bounds=((0.0, 0.0, 0.0), (1.0, 1.0, 1.0)), units=units)


def report(res: Result, *, convex_b=True, clearance=None, units=None, a="a[1].stl", b="b.stl") -> Findings:
    status = Status(res.status)
    objects = (obj(a, units=units), obj(b, convex=convex_b, units=units))
    pair = Finding(a=a, b=b, result=res, clearance=clearance, violation=is_violation(status, clearance),
                      conservative=not convex_b)
    return CheckReport(objects=objects, pairs=(pair,), elapsed=0.01, version="test")


ALL = {
    Status.CLEAR: result(),
    Status.TOUCHING: result(Status.TOUCHING, distance=0.0, certificate=None),
    Status.COLLISION: result(Status.COLLISION, distance=0.0, depth=0.25, certificate="point", epa_iterations=4,
                             epa_exit="converged"),
    Status.CLEARANCE: result(Status.CLEARANCE, distance=0.5),
    Status.UNDECIDED: result(Status.UNDECIDED, distance=0.1, distance_lower=0.0, exit="iteration cap",
                             certificate=None),
}


# -- the human report ---------------------------------------------------------------------------

@pytest.mark.parametrize("status", list(Status))
def test_every_status_renders_its_word(status):
    out = text_of(render_check(report(ALL[status], clearance=1.0 if status is Status.CLEARANCE else None)))
    assert status.value.upper() in out
    assert "parts/a[1].stl" in out  # user text is not read as rich markup
    assert "exit" in out


def test_verdict_words_are_coloured_on_a_terminal():
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, color_system="standard", width=100)
    console.print(render_check(report(ALL[Status.COLLISION])))
    out = buf.getvalue()
    assert "\x1b[" in out and "COLLISION" in out


def test_plain_console_has_no_escape_codes():
    assert "\x1b[" not in text_of(render_check(report(ALL[Status.CLEAR])))


def test_collision_report_shows_depth_witnesses_and_point_certificate():
    out = text_of(render_check(report(ALL[Status.COLLISION])))
    assert "overlap by 0.25" in out
    assert "depth" in out and "witness A" in out and "witness B" in out
    assert "a point of both parts: (0.25, 0, 0)" in out
    assert "EPA 4 (converged)" in out


def test_clear_report_shows_distance_plane_time_and_units():
    out = text_of(render_check(report(ALL[Status.CLEAR], units="mm")))
    assert "are 1 mm apart" in out
    assert "separating plane" in out
    assert "GJK 3 (converged)" in out
    assert "25 us" in out
    assert "units" in out and "mm" in out


def test_clearance_report_names_the_required_gap():
    out = text_of(render_check(report(ALL[Status.CLEARANCE], clearance=1.0)))
    assert "closer than the required 1" in out
    assert "exit 1" in out


def test_hull_verdict_of_a_part_that_is_not_convex_is_marked_conservative():
    out = words(render_check(report(ALL[Status.COLLISION], convex_b=False)), width=200)
    assert "collision between hulls; the parts themselves may not touch" in out
    clear = words(render_check(report(ALL[Status.CLEAR], convex_b=False)), width=200)
    assert "at least this far apart" in clear


def test_hull_note_is_silent_for_convex_parts():
    pair = report(ALL[Status.COLLISION]).pairs[0]
    assert hull_note(pair, obj("a"), obj("b")) is None


def test_violation_rules():
    assert not is_violation(Status.CLEAR, None)
    assert not is_violation(Status.TOUCHING, None)
    assert is_violation(Status.TOUCHING, 0.1)  # touching parts are closer than any required gap
    assert not is_violation(Status.TOUCHING, 0.0)
    for status in (Status.COLLISION, Status.CLEARANCE, Status.UNDECIDED):
        assert is_violation(status, None)


def test_render_pair_alone():
    pair = report(ALL[Status.TOUCHING]).pairs[0]
    out = text_of(render_pair(pair))
    assert "TOUCHING" in out and "touching band" in out


def test_errors_render_in_the_report():
    check = CheckReport(objects=(), pairs=(), errors=(InputProblem("bad.stl", "no triangles"),))
    out = text_of(render_check(check))
    assert "bad.stl: no triangles" in out
    assert check.exit_code == 2


# -- the trace ----------------------------------------------------------------------------------

def test_trace_narrates_each_gjk_step_and_the_exit_reason():
    out = words(render_trace(CLEAR_TRACE, "a.stl", "b.stl", units="mm"), width=120)
    assert "GJK: 3 iterations" in out
    assert "Search along d" in out
    assert "hull vertex 3" in out and "2 hill-climbing steps" in out
    assert "w1 = a - b" in out
    assert "edge w0-w1" in out
    assert "Stop: converged" in out
    assert "the upper bound |v| and the lower bound met" in out
    assert "GJK stops without adding w2" in out
    assert "EPA" not in out.split("How to read this")[0]


def test_trace_narrates_voronoi_features_dropped_points_and_epa():
    out = words(render_trace(COLLISION_TRACE), width=120)
    assert "triangle w0-w1-w2" in out
    assert "inside the tetrahedron" in out
    assert "Stop: origin enclosed" in out
    assert "EPA: 2 expansions" in out
    assert "polytope grows around w to 6 faces" in out
    assert "Stop: converged" in out and "penetration depth" in out


def test_trace_marks_points_dropped_from_the_simplex():
    steps = (
        step(iteration=0, w=W0, feature="vertex", vnorm=1.1, upper=1.1),
        step(iteration=1, w=W1, before=[W0], after=[W1], kept=(False, True), feature="vertex", vnorm=1.0,
             upper=1.0),
    )
    out = words(render_trace(steps), width=140)
    assert "so w0 is dropped" in out
    assert "-w0" in out  # the table's dropped column


def test_trace_flags_a_step_where_v_grows():
    steps = (
        step(iteration=0, w=W0, feature="vertex", vnorm=1.0, lower=0.1, upper=1.0),
        step(iteration=1, w=W1, before=[W0], feature="edge", vnorm=2.0, lower=0.1, upper=2.0, lambdas=[0.5, 0.5]),
    )
    out = words(render_trace(steps), width=140)
    assert "warning: |v| grew" in out


def test_trace_flags_epa_support_below_the_face():
    steps = COLLISION_TRACE[:4] + (
        step(phase="epa", iteration=0, vnorm=0.5, support=0.4, lower=0.5, upper=0.4, faces=4, feature=None,
             exit="converged"),
    )
    out = words(render_trace(steps), width=140)
    assert "warning: the support value" in out


def test_trace_of_an_engine_exit_code_is_named():
    steps = (step(iteration=0, w=W0, feature="vertex", vnorm=1.0, upper=1.0, exit=7),)
    out = words(render_trace(steps))
    assert "Stop: iteration cap" in out


def test_empty_trace_says_so():
    assert "No steps were recorded" in text_of(render_trace(None))


# -- JSON ---------------------------------------------------------------------------------------

PAIR_KEYS = {"a", "b", "status", "distance", "depth", "normal", "point_a", "point_b", "iterations", "mode",
             "certificate"}
OBJECT_KEYS = {"name", "file", "vertices", "hull_vertices", "convex", "watertight", "bounds", "units"}


@pytest.mark.parametrize("status", list(Status))
def test_json_document_has_the_stable_keys(status):
    doc = json.loads(json.dumps(check_document(report(ALL[status], clearance=1.0)), allow_nan=False))
    assert doc["schema_version"] == 2
    assert set(doc) >= {"schema_version", "objects", "pairs", "errors", "summary"} and "version" not in doc
    assert OBJECT_KEYS <= set(doc["objects"][0])
    pair = doc["pairs"][0]
    assert PAIR_KEYS <= set(pair)
    assert pair["status"] == status.value
    assert isinstance(pair["distance"], float)
    assert len(pair["normal"]) == 3 and len(pair["point_a"]) == 3 and len(pair["point_b"]) == 3
    assert isinstance(pair["iterations"], int)
    assert pair["mode"] == "hull"
    if status is Status.COLLISION:
        assert pair["depth"] == 0.25 and pair["distance"] == 0.0
        assert pair["certificate"] == {"kind": "point", "point": [0.25, 0.0, 0.0], "of": "parts"}
    else:
        assert pair["depth"] is None
    if status is Status.TOUCHING:
        assert pair["distance"] == 0.0
    summary = doc["summary"]
    assert summary[status.value] == 1 and summary["pairs"] == 1
    # with a required clearance, every status but clear fails (touching parts are closer than any gap)
    assert summary["exit_code"] == (0 if status is Status.CLEAR else 1)
    assert summary["violations"] == (0 if status is Status.CLEAR else 1)


def test_json_plane_certificate_and_objects():
    doc = check_document(report(ALL[Status.CLEAR]))
    assert doc["pairs"][0]["certificate"] == {"kind": "plane", "normal": [1.0, 0.0, 0.0], "offset": 0.5,
                                             "of": "parts"}
    o = doc["objects"][0]
    assert o["bounds"] == [[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]]
    assert o["convex"] is True and o["units"] is None and o["hull_vertices"] == 8


def test_json_writes_non_finite_numbers_as_null():
    res = result(Status.UNDECIDED, distance=float("inf"), distance_lower=float("nan"), certificate=None)
    doc = check_document(report(res))
    text = json.dumps(doc, allow_nan=False)  # raises if a NaN or infinity slipped through
    pair = json.loads(text)["pairs"][0]
    assert pair["distance"] is None and pair["distance_lower"] is None


def test_json_text_puts_each_pair_on_one_line_and_round_trips():
    res = result(Status.COLLISION, depth=0.25, certificate="point", normal=np.array([-0.0, 0.0, 1.0]))
    doc = check_document(report(res))
    text = dumps(doc)
    assert json.loads(text) == json.loads(json.dumps(doc))
    assert '"normal":[0.0,0.0,1.0]' in text  # -0.0 written as 0.0
    pair_lines = [line for line in text.splitlines() if line.lstrip().startswith('{"a":')]
    assert len(pair_lines) == 1 and json.loads(pair_lines[0])["status"] == "collision"
    assert text.splitlines()[0] == "{" and '  "summary": {' in text


@pytest.mark.parametrize("chunk", [64, 1 << 20])
def test_json_written_in_chunks_is_the_document_byte_for_byte(monkeypatch, chunk):
    """`encoded` (what -o FILE writes as it goes) gives dumps(document) + newline, with many
    pairs and errors, with none, and whatever the chunk size."""
    monkeypatch.setattr(chunks, "CHUNK_BYTES", chunk)
    pairs = tuple(Finding(a="a[1].stl", b="b.stl", result=res, violation=is_violation(s, None))
                  for s, res in ALL.items()) * 40
    many = CheckReport(objects=(obj("a[1].stl"), obj("b.stl", convex=False)), pairs=pairs,
                       errors=(InputProblem("bad.stl", "no triangles"),), elapsed=0.01, version="test")
    empty = CheckReport(version="test")
    for found in (many, empty, report(ALL[Status.COLLISION])):
        for timings in (True, False):
            written = list(encoded(found, timings=timings))
            assert b"".join(written).decode() == dumps(check_document(found, timings=timings)) + "\n"
            assert chunk > 1000 or found is not many or len(written) > 10


@pytest.mark.parametrize("chunk", [8, 64, 1 << 20])
def test_a_piece_of_a_chunk_size_is_written_as_it_is(monkeypatch, chunk):
    """A report made from the last one (`Encoded` runs of kept lines) hands its large pieces
    on as they are, never copied again; the text is `dumps`' with its newline whatever the
    chunk size."""
    monkeypatch.setattr(chunks, "CHUNK_BYTES", chunk)
    rows = [json.dumps({"a": f"part{k}", "d": k / 7}, separators=(",", ":")).encode() for k in range(30)]
    kept = b",\n    ".join(rows[:20])  # a run of kept lines, their separators in it
    pieces = [kept, memoryview(rows[20]), *rows[21:]]  # a patched report's pieces are views of the last
    doc = {"schema_version": 2, "pairs": Encoded(pieces), "summary": {"pairs": 30}}
    got = dumped_chunks(doc)
    assert b"".join(got).decode() == dumps({**doc, "pairs": [json.loads(r) for r in rows]}) + "\n"
    assert json.loads(b"".join(got))["pairs"][29] == {"a": "part29", "d": 29 / 7}
    large = [piece for piece in pieces if len(piece) >= chunk]
    assert all(any(c is piece for c in got) for piece in large)  # the same objects: no copy
    assert all(len(c) for c in got) and (chunk < 1000) == (len(got) > 3)


def test_write_whole_writes_chunks_as_they_come(tmp_path):
    from gjkcli.errors import write_whole

    target = tmp_path / "report.json"
    write_whole(target, iter([b'{"a": ', b"1}", b"\n"]))
    assert target.read_bytes() == b'{"a": 1}\n'


def test_json_conservative_flag_and_note():
    pair = check_document(report(ALL[Status.COLLISION], convex_b=False))["pairs"][0]
    assert pair["conservative"] is True and pair["certificate"]["of"] == "hulls"
    assert "collision between hulls" in pair["note"]


def test_json_errors_and_exit_code():
    check = CheckReport(errors=(InputProblem("bad.stl", "no triangles"),))
    doc = check_document(check)
    assert doc["errors"] == [{"file": "bad.stl", "message": "no triangles"}]
    assert doc["summary"]["exit_code"] == 2


def test_json_trace_lines_carry_every_step_field():
    res = result(Status.COLLISION, depth=0.9, trace=COLLISION_TRACE, certificate="point")
    pair = report(res).pairs[0]
    lines = trace_lines(pair)
    assert len(lines) == len(COLLISION_TRACE)
    for rec in lines:
        json.dumps(rec, allow_nan=False)
        assert {"a", "b", "phase", "iteration", "direction", "w", "simplex_before", "simplex_after", "exit",
                "vnorm", "lower", "upper"} <= set(rec)
    assert lines[0]["lower"] is None or isinstance(lines[0]["lower"], float)
    assert lines[3]["exit"] == "origin enclosed"
    assert lines[-1]["phase"] == "epa"
    with_trace = pair_dict(pair, trace=True)
    assert len(with_trace["trace"]) == len(COLLISION_TRACE)


# -- boundaries ---------------------------------------------------------------------------------

def test_renderers_do_not_import_the_engine(tmp_path):
    code = (
        "import sys, gjkcli.report.table, gjkcli.report.trace, gjkcli.report.jsonout\n"
        "bad = [m for m in ('gjkcli.engine._core', 'gjkcli.engine._mesh', 'gjkcli.engine.query', 'gjkcli.engine.shapes', 'gjkcli.mesh.load', 'trimesh', 'scipy')"
        " if m in sys.modules]\n"
        "print(','.join(bad))\n"
    )
    assert python_c(code, tmp_path) == ""


def test_json_renderer_needs_no_rich(tmp_path):
    code = "import sys, gjkcli.report.jsonout; print('rich' in sys.modules)"
    assert python_c(code, tmp_path) == "False"
