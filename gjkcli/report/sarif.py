"""SARIF 2.1.0 output of `gjk check` and `gjk scan`: the findings as a static-analysis log, for
GitHub code scanning and any other SARIF viewer.

Findings in, a plain dict out (strict JSON: no NaN or infinity anywhere), and its text
(`sarif_text`, or `sarif_encoded`'s chunks, a result at a time; encoded by orjson: Python's
own encoder is pure Python once it indents, and was most of a large log's time); nothing here
prints, reads files or runs the engine. Besides orjson, only the standard library, the
findings model, the wording of `gjkcli.report.ci.describe` and the chunker of
`gjkcli.report.chunks` are used.

The log: one run of the tool "gjk", with

- rules: one per verdict that can fail a run (gjk/collision, gjk/clearance, gjk/touching,
  gjk/undecided) and gjk/input-error for a file that could not be used;
- results: one per listed pair that is a violation (`Finding.violation`), and one per input
  error (level "error"). A failing pair is an "error"; a violation that an [[allow]] rule covers
  or that the baseline holds is a "note" with a suppression (kind "external"), so it stays
  visible but fails nothing. When the run read a baseline every pair result carries a
  `baselineState`: "unchanged" for a pair the baseline holds, "new" otherwise;
- each pair result's location is the file of object A (as given, in POSIX form, percent-encoded
  as a URI reference) with a logical location naming A; the file and name of B are its related
  location. The numbers (distance, depth, tolerance, signed distance, the witness points, ...)
  are in the result's `properties`;
- `partialFingerprints["gjkPair/v1"]`: a hash of the two (file, object) pairs, in sorted order
  and with the "file:" prefix a scan of several files gives names removed (as the baseline key
  does), so code scanning tracks an alert across runs and a swapped pair is the same alert;
  input errors are fingerprinted by their file (`gjkInput/v1`);
- artifacts: every file of the run (objects, pairs, input errors);
- invocations: executionSuccessful (false only for exit code 2: an input could not be used),
  the exit code, and the run's notes and gone baseline entries as notifications.

Meshes have no lines, so no result has a region: viewers show them at file level.
"""
from __future__ import annotations

import copy
import functools
import hashlib
import itertools
import json
import os
import re
from collections.abc import Iterator
from pathlib import PurePosixPath, PureWindowsPath
from urllib.parse import quote

from gjkcli.engine.results import Status
from gjkcli.pipeline.findings import pair_note
from gjkcli.report.chunks import in_chunks
from gjkcli.report.ci import describe
from gjkcli.report.jsonout import number, vector

__all__ = ["sarif_log", "sarif_text", "sarif_encoded", "SCHEMA_URI", "RULES", "INPUT_ERROR", "rule_id"]

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"

INPUT_ERROR = "gjk/input-error"

# (id, name, short, full, help, level, precision): one rule per verdict a run can fail on, and one
# for inputs that could not be used. A result of a verdict rule exists only for a violation, so
# every rule's default level is "error"; allowed and baseline results are lowered to "note".
_RULE_TABLE = (
    (Status.COLLISION, "Collision", "Two parts intersect.",
     "The two objects overlap by more than the touching band: their volumes intersect. The "
     "depth is the least translation that separates them.",
     "Move or resize one of the parts until they are apart, or allow the pair ([[allow]] in the "
     "manifest, with a reason) when the overlap is intended, e.g. a press fit.", "very-high"),
    (Status.CLEARANCE, "InsufficientClearance", "Two parts are closer than the required clearance.",
     "The objects are apart (or touching), but their distance is less than the clearance the run "
     "requires for this pair (--clearance, or the manifest's clearance for the pair).",
     "Increase the gap between the parts to at least the required clearance, or lower the "
     "clearance the manifest requires for this pair.", "very-high"),
    (Status.TOUCHING, "Touching", "Two parts touch.",
     "The distance between the objects is within the touching band (+- the tolerance): they are "
     "in contact without overlapping. Reported because the run fails on touching.",
     "Separate the parts if they must not touch, or stop failing on touching (--fail-on).",
     "very-high"),
    (Status.UNDECIDED, "Undecided", "No verdict could be certified for two parts.",
     "The engine could not certify whether the objects are apart, touching or intersecting "
     "(the distance bounds straddle the touching band). An undecided pair always fails the run.",
     "Check the pair with --mode exact or a larger --tolerance; degenerate or nearly coincident "
     "geometry is the usual cause.", "medium"),
)

RULES: tuple = tuple(
    {
        "id": f"gjk/{status.value}",
        "name": name,
        "shortDescription": {"text": short},
        "fullDescription": {"text": full},
        "help": {"text": help_text},
        "defaultConfiguration": {"level": "error"},
        "properties": {"tags": ["geometry", "interference"], "precision": precision,
                       "problem.severity": "error"},
    }
    for status, name, short, full, help_text, precision in _RULE_TABLE
) + ({
    "id": INPUT_ERROR,
    "name": "InputError",
    "shortDescription": {"text": "A file could not be used."},
    "fullDescription": {"text": "The file could not be read as a scene or mesh (missing, unreadable, "
                                "an unknown format, or no triangles). The other inputs were still "
                                "checked, but pairs with this file's objects were not."},
    "help": {"text": "Fix or re-export the file, or leave it out of the run. The message says what "
                     "is wrong with it."},
    "defaultConfiguration": {"level": "error"},
    "properties": {"tags": ["input"], "precision": "very-high", "problem.severity": "error"},
},)

_RULE_INDEX = {rule["id"]: k for k, rule in enumerate(RULES)}


def rule_id(status) -> str:
    """The rule of a verdict: "gjk/collision" and so on."""
    return f"gjk/{Status(status).value}"


# -- numbers and names ----------------------------------------------------------------------------


def _clean(value):
    """Strict-JSON-ready: arrays and tuples to lists, numpy scalars to Python, non-finite to None."""
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    if hasattr(value, "tolist"):  # numpy arrays and scalars, without importing numpy
        return _clean(value.tolist())
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return number(value)
    if hasattr(value, "value"):  # enums
        return value.value
    return str(value)


# Characters a URI reference may hold as they are (RFC 3986 unreserved, sub-delims, "@" and the
# path separator). ":" is escaped, so "a:b.stl" cannot read as a scheme.
_URI_SAFE = "/!$&'()*+,;=@"
_WINDOWS_ABSOLUTE = re.compile(r"^[A-Za-z]:[\\/]|^\\\\")


def _quote(path: str) -> str:
    try:
        return quote(path, safe=_URI_SAFE, errors="surrogateescape")  # file names from os.fsdecode
    except UnicodeEncodeError:
        return quote(path, safe=_URI_SAFE, errors="surrogatepass")


@functools.lru_cache(maxsize=1024)  # a log names a few files, each thousands of times
def file_uri(file: str) -> str:
    """The URI reference of a file as the user gave it: a relative path stays relative (POSIX
    separators, percent-encoded); an absolute one becomes a file: URI."""
    if _WINDOWS_ABSOLUTE.match(file):
        p = PureWindowsPath(file).as_posix()  # "C:/cad/cell.glb", "//server/share/x.stl"
        if p.startswith("//"):
            return "file:" + _quote(p)
        return "file:///" + p[:2] + _quote(p[2:])
    return _quote(_posix(file)) if not file.startswith("/") else "file://" + _quote(_posix(file))


def _posix(file: str) -> str:
    """The path in POSIX form: backslashes are separators only where the system says so."""
    if os.sep == "\\":
        file = file.replace("\\", "/")
    return PurePosixPath(file).as_posix() if file else file


def _local_name(name: str, file: str) -> str:
    """The object's name without the "file:" prefix a scan of several files gives it."""
    prefix = _name_prefix(file)
    return name[len(prefix):] if file and name.startswith(prefix) else name


@functools.lru_cache(maxsize=1024)
def _name_prefix(file: str) -> str:
    return f"{PurePosixPath(_posix(file)).name}:"


def _fingerprint(*parts) -> str:
    text = json.dumps(list(parts), ensure_ascii=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("ascii")).hexdigest()[:32]


def pair_fingerprint(pair) -> str:
    """Stable across runs: the two (file, local name) pairs in sorted order, so a swapped pair,
    a reordered scan or another file joining the scan gives the same fingerprint."""
    ends = sorted([(file_uri(pair.file_a), _local_name(pair.a, pair.file_a)),
                   (file_uri(pair.file_b), _local_name(pair.b, pair.file_b))])
    return _fingerprint("pair", *ends[0], *ends[1])


# -- the log --------------------------------------------------------------------------------------


class _Artifacts:
    """The run's files, in first-seen order, with their index."""

    def __init__(self):
        self.uris: dict[str, int] = {}

    def add(self, file: str | None) -> int | None:
        if not file:
            return None
        uri = file_uri(file)
        return self.uris.setdefault(uri, len(self.uris))

    def location(self, file: str | None) -> dict | None:
        k = self.add(file)
        if k is None:
            return None
        return {"artifactLocation": {"uri": file_uri(file), "index": k}}

    def list(self) -> list:
        return [{"location": {"uri": uri}, "roles": ["analysisTarget"]} for uri in self.uris]


def _object_location(artifacts: _Artifacts, file: str, name: str, message: str | None = None,
                     id_: int | None = None) -> dict:
    loc: dict = {}
    if id_ is not None:
        loc["id"] = id_
    physical = artifacts.location(file)
    if physical is not None:
        loc["physicalLocation"] = physical
    logical = {"name": name, "kind": "object"}
    if file:
        logical["fullyQualifiedName"] = f"{file}:{_local_name(name, file)}"
    loc["logicalLocations"] = [logical]
    if message:
        loc["message"] = {"text": message}
    return loc


def _pair_properties(pair, found) -> dict:
    r = pair.result
    status = Status(pair.status)
    apart = status in (Status.CLEAR, Status.CLEARANCE, Status.UNDECIDED)
    certificate = None
    if r.certificate is not None:
        certificate = _clean(r.certificate.as_dict())
        certificate["of"] = "hulls" if pair.conservative else "parts"
    props = {
        "status": status.value,
        "objectA": pair.a,
        "objectB": pair.b,
        "fileA": pair.file_a,
        "fileB": pair.file_b,
        "distance": number(r.distance) if apart else 0.0,
        "distanceLower": number(r.distance_lower),
        "depth": number(r.depth) if status is Status.COLLISION else None,
        "signedDistance": number(r.signed_distance),
        "tolerance": number(r.tolerance),
        "clearance": number(pair.clearance),
        "normal": vector(r.normal),
        "pointA": vector(r.point_a),
        "pointB": vector(r.point_b),
        "mode": pair.mode,
        "requestedMode": pair.requested,
        "conservative": bool(pair.conservative),
        "certificate": certificate,
        "allowed": bool(pair.allowed),
        "reason": pair.reason,
        "known": bool(pair.known),
        "fails": bool(pair.fails),
        "note": pair_note(pair, found.object(pair.a), found.object(pair.b)),
    }
    if found.units is not None:
        props["units"] = found.units
    if pair.tessellation is not None:  # tessellated CAD parts: the true solids' bounds
        props["tessellationError"] = number(pair.tessellation)
        if pair.distance_lower is not None:
            props["distanceLower"] = number(max(pair.distance_lower, 0.0))
        if pair.distance_upper is not None and pair.distance_upper != pair.distance_lower:
            props["distanceUpper"] = number(max(pair.distance_upper, 0.0))
    return props


def _pair_result(pair, found, artifacts: _Artifacts) -> dict:
    rid = rule_id(pair.status)
    result = {
        "ruleId": rid,
        "ruleIndex": _RULE_INDEX[rid],
        "level": "error" if pair.fails else "note",
        "message": {"text": f"{pair.a} x {pair.b}: {describe(pair, found.units)}"},
        "locations": [_object_location(artifacts, pair.file_a, pair.a)],
        "relatedLocations": [_object_location(artifacts, pair.file_b, pair.b,
                                              message=f"the other object: {pair.b}", id_=1)],
        "partialFingerprints": {"gjkPair/v1": pair_fingerprint(pair)},
    }
    if pair.allowed:
        result["suppressions"] = [{"kind": "external", "status": "accepted",
                                   "justification": pair.reason or "allowed by an [[allow]] entry"}]
    elif pair.known:
        where = f"in the baseline {found.baseline}" if found.baseline else "in the baseline"
        result["suppressions"] = [{"kind": "external", "status": "accepted", "justification": where}]
    if found.baseline is not None or pair.known:
        result["baselineState"] = "unchanged" if pair.known else "new"
    result["properties"] = _pair_properties(pair, found)
    return result


def _error_result(problem, found, artifacts: _Artifacts) -> dict:
    loc: dict = {}
    physical = artifacts.location(problem.file)
    if physical is not None:
        loc["physicalLocation"] = physical
    result = {
        "ruleId": INPUT_ERROR,
        "ruleIndex": _RULE_INDEX[INPUT_ERROR],
        "level": "error",
        "message": {"text": f"{problem.file}: {problem.message}" if problem.file else problem.message},
        "locations": [loc] if loc else [],
        "partialFingerprints": {"gjkInput/v1": _fingerprint("input", file_uri(problem.file or ""))},
    }
    if found.baseline is not None:
        result["baselineState"] = "new"
    result["properties"] = {"file": problem.file, "error": problem.message}
    return result


def sarif_log(findings) -> dict:
    """The SARIF 2.1.0 log of a `gjk check` or `gjk scan` run (a JSON-ready dict).

    `findings` is a `gjkcli.pipeline.findings.Findings`. Serialise with `json.dumps(log,
    allow_nan=False)`: every number in the log is finite.
    """
    reported = _reported(findings)
    artifacts = _artifacts(findings, reported)
    return _log(findings, artifacts, list(_results(findings, reported, artifacts)))


def _reported(found) -> list:
    """The pairs the log has a result for. Only a violation is a finding; a clear pair never is
    one (violates()), so every violation has a rule: the four verdict rules cover every other
    status."""
    return [p for p in found.pairs if p.violation and rule_id(p.status) in _RULE_INDEX]


def _artifacts(found, reported: list) -> _Artifacts:
    """Every file of the run in the order the log lists them: the objects' (input order), then
    those the results name (input errors first, then each `reported` pair's A and B)."""
    artifacts = _Artifacts()
    for o in found.objects:
        artifacts.add(o.file)
    for e in found.errors:
        artifacts.add(e.file)
    for p in reported:
        artifacts.add(p.file_a)
        artifacts.add(p.file_b)
    return artifacts


def _results(found, reported: list, artifacts: _Artifacts):
    """The log's results, one at a time: input errors, then the `reported` pairs."""
    for e in found.errors:
        yield _error_result(e, found, artifacts)
    for p in reported:
        yield _pair_result(p, found, artifacts)


def _log(found, artifacts: _Artifacts, results: list) -> dict:
    exit_code = int(found.exit_code)
    notifications = [{"level": "note", "message": {"text": str(n)}} for n in found.notes]
    for e in found.gone:
        notifications.append({
            "level": "note",
            "message": {"text": f"{e.a} x {e.b} ({e.status}) is in the baseline but no longer "
                                f"found; write the baseline again"},
        })
    invocation = {
        "executionSuccessful": exit_code != 2,
        "exitCode": exit_code,
        "exitCodeDescription": {0: "no failing findings", 1: "failing findings",
                                2: "an input could not be used"}.get(exit_code, "unknown"),
    }
    if notifications:
        invocation["toolExecutionNotifications"] = notifications

    run_properties = _clean({
        "command": found.command,
        "requestedMode": found.requested,
        "tolerance": found.tolerance,
        "clearance": found.clearance,
        "failOn": list(found.fail_on),
        "allPairs": bool(found.all_pairs),
        "baseline": found.baseline,
        "objects": len(found.objects),
        "checkedPairs": int(found.checked),
        "candidatePairs": int(found.candidates),
        "counts": {(k.value if hasattr(k, "value") else str(k)): int(v) for k, v in found.counts.items()},
        "violations": found.violations,
        "failures": found.failure_count,
        "gone": [{"file": e.file, "a": e.a, "b": e.b, "status": e.status} for e in found.gone],
    })
    run = {
        "tool": {"driver": {"name": "gjk", "version": str(found.version),
                            "rules": copy.deepcopy(list(RULES))}},
        "invocations": [invocation],
        "artifacts": artifacts.list(),
        "results": results,
        "properties": run_properties,
    }
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def sarif_text(findings) -> str:
    """The SARIF log of `findings` (`sarif_log`) as the report's text: indented by two spaces,
    UTF-8 (names as they are, not escaped), a newline last."""
    return b"".join(sarif_encoded(findings)).decode()


def sarif_encoded(findings) -> Iterator[bytes]:
    """`sarif_text(findings)` as UTF-8 chunks (`gjkcli.report.chunks`), each result made and
    encoded only when it is reached (as `gjkcli.report.jsonout.encoded` writes the JSON
    report): a log of many results is never whole in memory as dicts, nor as text where its
    writer writes the chunks as they come (`gjkcli.errors.write_whole`)."""
    return in_chunks(_sarif_pieces(findings))


def _sarif_pieces(findings) -> Iterator[bytes]:
    """The log's text in pieces: all of it before the results, one piece a result, the rest."""
    import orjson

    # NumPy's scalars as Python's json writes them (a float64 is a float)
    options = orjson.OPT_INDENT_2 | orjson.OPT_SERIALIZE_NUMPY
    reported = _reported(findings)
    artifacts = _artifacts(findings, reported)
    results = _results(findings, reported, artifacts)
    first = next(results, None)
    if first is None:  # "results": [] on its line
        yield orjson.dumps(_log(findings, artifacts, []), option=options) + b"\n"
        return
    # the log with one result, 0, on the line after the results' key (no string holds a line
    # break as it is): where the results go, and how deep
    whole = orjson.dumps(_log(findings, artifacts, [0]), option=options)
    start = whole.index(b'"results": [\n') + len(b'"results": [\n')
    end = whole.index(b"\n", start)
    indent = whole[start:end - 1]
    yield whole[:start]
    sep = b""
    for result in itertools.chain((first,), results):
        yield sep + indent + orjson.dumps(result, option=options).replace(b"\n", b"\n" + indent)
        sep = b",\n"
    yield whole[end:] + b"\n"
