"""Machine formats of `gjk scan`: the JSON document, JUnit XML and GitHub workflow annotations.

Results in, text (or a dict) out; nothing here prints, reads files or imports the engine. Only the
standard library is imported, so a CI run pays no import it does not need.

JSON (`scan_document`) follows the schema of `gjk check` (gjkcli/report/jsonout.py, version 1):
the same top-level keys and the same keys per object and per pair, built by the same functions,
with the scan's additions::

    pairs[]:   "allowed": bool, "reason": str | null     an [[allow]] or SRDF entry covers the pair
               "baseline": "known" | "new" | null         with --baseline, for violations
               "fails": bool                              the pair makes the scan exit 1
               "file_a", "file_b": str                    the files the objects come from
    objects[]: "watertight" and "bodies" are null when the scan's loader did not compute them,
               "convex" null when nothing depended on it (see gjkcli.pipeline.run.ScanObject)
    summary:   "objects", "candidates", "allowed", "known", "failures", "gone"
    "gone":    baseline findings that are no longer found, [{"file", "a", "b", "status"}]
    "notes":   plain sentences ("only one object ...: there are no pairs to check")
    "scan":    {"mode", "requested_mode", "tolerance", "clearance", "fail_on", "all_pairs",
                "baseline", "timings"}

JUnit (`junit_xml`): one test case per listed pair, named "a x b", in a class per file; failing
pairs carry a <failure>, allowed and baseline pairs are <skipped> with the reason, and every file
that failed to load is a test case with an <error>. A scan with nothing to list still has one
passing case, so CI systems show that the scan ran.

GitHub (`github_annotations`): one ``::error file=F,title=T::message`` line per failing pair and
per file that failed to load; ``::notice`` lines for baseline findings that are gone. Property
values and messages are escaped as the workflow-command syntax requires.
"""
from __future__ import annotations

import math
import xml.etree.ElementTree as ET

from gjkcli.report.jsonout import SCHEMA_VERSION, _clean, _num, object_dict, pair_dict
from gjkcli.engine.results import Status

__all__ = ["scan_document", "junit_xml", "github_annotations", "describe"]


# -- JSON -----------------------------------------------------------------------------------------


def scan_pair_dict(pair, report) -> dict:
    out = pair_dict(pair, report)
    out.update(
        allowed=bool(pair.allowed),
        reason=pair.reason,
        baseline=_baseline_mark(pair, report),
        fails=bool(pair.fails),
        file_a=pair.file_a,
        file_b=pair.file_b,
    )
    return out


def _baseline_mark(pair, report) -> str | None:
    if report.baseline is None or not pair.violation or pair.allowed:
        return None
    return "known" if pair.known else "new"


def scan_document(report) -> dict:
    """The whole `gjk scan --format json` document (a dict; the caller serialises it)."""
    counts = dict(report.counts)
    summary = {"pairs": int(report.checked), **{k: int(v) for k, v in counts.items()}}
    summary.update(
        violations=sum(1 for p in report.pairs if p.violation),
        errors=len(report.errors),
        exit_code=report.exit_code,
        elapsed=_num(report.elapsed),
        objects=len(report.objects),
        candidates=int(report.candidates),
        allowed=sum(1 for p in report.pairs if p.allowed and p.violation),
        known=sum(1 for p in report.pairs if p.known),
        failures=sum(1 for p in report.pairs if p.fails),
        gone=len(report.gone),
    )
    return {
        "version": SCHEMA_VERSION,
        "tool": {"name": "gjk", "version": report.version},
        "objects": [object_dict(o) for o in report.objects],
        "pairs": [scan_pair_dict(p, report) for p in report.pairs],
        "errors": [{"file": e.file, "message": e.message} for e in report.errors],
        "summary": summary,
        "gone": [{"file": e.file, "a": e.a, "b": e.b, "status": e.status} for e in report.gone],
        "notes": list(report.notes),
        "scan": _clean({
            "mode": report.mode,
            "requested_mode": report.requested,
            "tolerance": report.tolerance,
            "clearance": report.clearance,
            "fail_on": list(report.fail_on),
            "all_pairs": bool(report.all_pairs),
            "baseline": report.baseline,
            "timings": dict(report.timings),
        }),
    }


# -- words ----------------------------------------------------------------------------------------


def _fmt(x) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "-"
    return f"{x:.6g}"


def describe(pair) -> str:
    """The finding in one line: "collision: overlap 0.25 (hulls; X is not convex)"."""
    r = pair.result
    status = Status(pair.status)
    if status is Status.COLLISION:
        text = f"collision: overlap {_fmt(r.depth)}" if r.depth is not None else "collision"
    elif status is Status.TOUCHING:
        text = f"touching (gap {_fmt(r.signed_distance)}, band +-{_fmt(r.tolerance)})"
    elif status is Status.CLEARANCE:
        text = f"clearance: {_fmt(r.distance)} apart, {_fmt(pair.clearance)} required"
    elif status is Status.UNDECIDED:
        text = f"undecided: distance in [{_fmt(r.distance_lower)}, {_fmt(r.distance)}]"
    else:
        text = f"clear: {_fmt(r.distance)} apart"
    if pair.conservative:
        text += " (between the hulls; a part is not convex)"
    return text


def _title(pair) -> str:
    return f"{Status(pair.status).value}: {pair.a} x {pair.b}"


# -- JUnit XML ------------------------------------------------------------------------------------


def junit_xml(report) -> str:
    """The scan as a JUnit XML document (a str, with the XML declaration)."""
    cases = []
    failures = errors = skipped = 0
    for e in report.errors:
        case = ET.Element("testcase", classname=_class(e.file), name=f"load {e.file}")
        ET.SubElement(case, "error", message=e.message, type="input").text = f"{e.file}: {e.message}"
        cases.append(case)
        errors += 1
    for p in report.pairs:
        case = ET.Element("testcase", classname=_class(p.file_a), name=f"{p.a} x {p.b}")
        if p.fails:
            failure = ET.SubElement(case, "failure", message=describe(p), type=Status(p.status).value)
            failure.text = _details(p)
            failures += 1
        elif p.violation and p.allowed:
            ET.SubElement(case, "skipped", message=f"allowed: {p.reason}")
            skipped += 1
        elif p.violation and p.known:
            ET.SubElement(case, "skipped", message="in the baseline")
            skipped += 1
        else:
            ET.SubElement(case, "system-out").text = describe(p)
        cases.append(case)
    if not cases:
        case = ET.Element("testcase", classname="gjk.scan", name="scan")
        ET.SubElement(case, "system-out").text = " ".join(report.notes) or "no findings"
        cases.append(case)
    suite = ET.Element("testsuite", name="gjk scan", tests=str(len(cases)), failures=str(failures),
                       errors=str(errors), skipped=str(skipped), time=f"{report.elapsed:.3f}")
    props = ET.SubElement(suite, "properties")
    for name, value in (("objects", len(report.objects)), ("checked_pairs", report.checked),
                        ("mode", report.mode), ("exit_code", report.exit_code)):
        ET.SubElement(props, "property", name=name, value=str(value))
    suite.extend(cases)
    root = ET.Element("testsuites", name="gjk", tests=str(len(cases)), failures=str(failures),
                      errors=str(errors), skipped=str(skipped), time=f"{report.elapsed:.3f}")
    root.append(suite)
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _class(file: str) -> str:
    return f"gjk.scan.{file}" if file else "gjk.scan"


def _details(p) -> str:
    r = p.result
    lines = [f"{p.a} ({p.file_a}) x {p.b} ({p.file_b})", describe(p),
             f"normal {_vector(r.normal)}", f"witness a {_vector(r.point_a)}",
             f"witness b {_vector(r.point_b)}", f"mode {p.mode}"]
    return "\n".join(lines)


def _vector(v) -> str:
    return "[" + ", ".join(_fmt(float(x)) for x in v) + "]"


# -- GitHub workflow commands ---------------------------------------------------------------------


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _command(kind: str, message: str, **props) -> str:
    fields = ",".join(f"{k}={_escape_property(str(v))}" for k, v in props.items() if v)
    return f"::{kind} {fields}::{_escape_data(message)}" if fields else f"::{kind}::{_escape_data(message)}"


def github_annotations(report) -> str:
    """GitHub Actions workflow commands, one per line (an empty string when there is nothing)."""
    lines = []
    for e in report.errors:
        lines.append(_command("error", e.message, file=e.file, title="gjk scan: cannot load"))
    for p in report.failures:
        lines.append(_command("error", f"{p.a} x {p.b}: {describe(p)}", file=p.file_a,
                              title=f"gjk scan {_title(p)}"))
    for e in report.gone:
        lines.append(_command("notice", f"{e.a} x {e.b} ({e.status}) is in the baseline but no "
                                        f"longer found; write the baseline again", file=e.file,
                              title="gjk scan: fixed"))
    return "".join(line + "\n" for line in lines)
