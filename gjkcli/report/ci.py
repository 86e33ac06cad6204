"""CI formats of `gjk check` and `gjk scan`: JUnit XML and GitHub workflow annotations.

Findings in, text out; nothing here prints, reads files or runs the engine. Besides the standard
library, only the verdicts' names (`gjkcli.engine.results.Status`) and the chunker of
`gjkcli.report.chunks` are imported, so a CI run pays no import it does not need. (The JSON
document is gjkcli/report/jsonout.py; SARIF is gjkcli/report/sarif.py.)

JUnit (`junit_xml`): one test case per listed pair, named "a x b", in a class per file; the
command runs the pipeline with `list_passing` for it, so every pair checked is listed, the
passing ones too, as pytest lists every test (up to `gjkcli.pipeline.stages.ALL_PAIRS_UP_TO`
pairs; beyond, the findings alone, and a note says so). Failing pairs carry a <failure>, allowed
and baseline pairs are <skipped> with the reason, every file that failed to load is a test case
with an <error>, and geometry read but not checked (a URDF link whose mesh is missing) a test
case with a <failure>. The run's notes are the suite's <system-out>. A run with nothing to list
still has one passing case, so CI systems show that it ran. Text that XML 1.0 cannot hold (control characters
in a file name) is written as "\\xNN". Written to a file (`junit_encoded`), the document goes a test
case at a time in the layout ElementTree's `indent` gives the whole tree.

GitHub (`github_annotations`): one ``::error file=F,title=T::message`` line per failing pair, per
file that failed to load and per piece of geometry not checked; ``::notice`` lines for baseline findings that are gone. Property
values and messages are escaped as the workflow-command syntax requires.
"""
from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator

from gjkcli.engine.results import Status
from gjkcli.report.chunks import in_chunks

__all__ = ["junit_xml", "junit_encoded", "github_annotations", "describe"]


# -- words ----------------------------------------------------------------------------------------


def _fmt(x) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "-"
    return f"{x:.6g}"


def describe(pair, units: str | None = None) -> str:
    """The finding in one line: "collision: overlap 0.25 (hulls; X is not convex)"; `units`
    (the run's length unit) follows the numbers."""
    r = pair.result
    status = Status(pair.status)
    if status is Status.COLLISION:
        text = f"collision: overlap {_fmt(r.depth)}" if r.depth is not None else "collision"
    elif status is Status.TOUCHING:
        text = f"touching (gap {_fmt(r.signed_distance)}, band +-{_fmt(r.tolerance)})"
    elif status is Status.CLEARANCE:
        text = f"clearance: {_fmt(r.distance)} apart, {_fmt(pair.clearance)} required"
    elif status is Status.UNDECIDED and pair.distance_lower is not None \
            and pair.distance_upper is not None:  # tessellated parts: the true solids' bounds
        text = (f"undecided: the true distance is in [{_fmt(pair.distance_lower)}, "
                f"{_fmt(pair.distance_upper)}] (tessellation error {_fmt(pair.tessellation)})")
    elif status is Status.UNDECIDED:
        text = f"undecided: distance in [{_fmt(r.distance_lower)}, {_fmt(r.distance)}]"
    else:
        text = f"clear: {_fmt(r.distance)} apart"
    if units:
        text += f" ({units})"
    if pair.conservative:
        text += " (between the hulls; a part is not convex)"
    return text


def _title(pair) -> str:
    return f"{Status(pair.status).value}: {pair.a} x {pair.b}"


# -- JUnit XML ------------------------------------------------------------------------------------


def junit_xml(report) -> str:
    """The scan as a JUnit XML document (a str, with the XML declaration)."""
    return "".join(_junit_pieces(report))


def junit_encoded(report) -> Iterator[bytes]:
    """`junit_xml(report)` as UTF-8 chunks (`gjkcli.report.chunks`), each test case made and
    written only when it is reached (as the JSON and SARIF reports are written): a scan of many
    pairs never holds them all as elements, nor, where the writer writes the chunks as they
    come (`gjkcli.errors.write_whole`), the document's text."""
    return in_chunks(piece.encode("utf-8") for piece in _junit_pieces(report))


def _junit_pieces(report):
    """The document's text in pieces: the suites' head, one piece a test case, the tail; the
    layout ElementTree's `indent` gives the whole tree."""
    kinds = [_kind(what, item) for what, item in _listed(report)]
    counts = {k: kinds.count(k) for k in ("failure", "error", "skipped")}
    placeholder = not kinds
    tests = max(len(kinds), 1)
    suite = ET.Element("testsuite", name=f"gjk {report.command}", tests=str(tests), failures=str(counts["failure"]),
                       errors=str(counts["error"]), skipped=str(counts["skipped"]), time=f"{report.elapsed:.3f}")
    props = ET.SubElement(suite, "properties")
    for name, value in (("objects", len(report.objects)), ("checked_pairs", report.checked),
                        ("mode", report.requested), ("exit_code", report.exit_code)):
        ET.SubElement(props, "property", name=name, value=str(value))
    marker = ET.SubElement(suite, "testcase")  # where the cases go
    if report.notes and not placeholder:  # the placeholder case holds them already
        ET.SubElement(suite, "system-out").text = "\n".join(str(n) for n in report.notes)
    root = ET.Element("testsuites", name="gjk", tests=str(tests), failures=str(counts["failure"]),
                      errors=str(counts["error"]), skipped=str(counts["skipped"]), time=f"{report.elapsed:.3f}")
    root.append(suite)
    _xml_safe(root)
    ET.indent(root)
    tail = marker.tail  # what follows the last case: the suite's <system-out>, or its end
    marker.set("name", "")
    text = ET.tostring(root, encoding="unicode")
    at = text.index('<testcase name="" />')
    yield '<?xml version="1.0" encoding="utf-8"?>\n' + text[:at]
    cases = (_case(report, what, item) for what, item in _listed(report)) if not placeholder \
        else iter([_placeholder(report)])
    last = next(cases)
    for case in cases:  # each case once the next is made: the last one's tail is the suite's
        yield _case_text(last, suite.text)  # (the suite's text: the indentation of its children)
        last = case
    yield _case_text(last, tail)
    yield text[at + len('<testcase name="" />') + len(tail):] + "\n"


def _listed(report):
    """What the document has a test case for, in its order, each with what it is: input errors
    ("load"), geometry read but not checked ("check"), then every listed pair ("pair")."""
    for e in report.errors:
        yield "load", e
    for u in getattr(report, "unchecked", ()):
        yield "check", u
    for p in report.pairs:
        yield "pair", p


def _kind(what: str, item) -> str:
    """A test case's outcome: "error", "failure", "skipped" or "passed"."""
    if what == "load":
        return "error"
    if what == "check" or item.fails:
        return "failure"
    if item.violation and (item.allowed or item.known):
        return "skipped"
    return "passed"


def _case(report, what: str, item) -> ET.Element:
    if what == "pair":
        p = item
        case = ET.Element("testcase", classname=_class(report, p.file_a), name=f"{p.a} x {p.b}")
        if p.fails:
            failure = ET.SubElement(case, "failure", message=describe(p, report.units), type=Status(p.status).value)
            failure.text = _details(p)
        elif p.violation and p.allowed:
            ET.SubElement(case, "skipped", message=f"allowed: {p.reason}")
        elif p.violation and p.known:
            ET.SubElement(case, "skipped", message="in the baseline")
        else:
            ET.SubElement(case, "system-out").text = describe(p, report.units)
        return case
    if what == "load":
        e = item
        case = ET.Element("testcase", classname=_class(report, e.file), name=f"load {e.file}")
        ET.SubElement(case, "error", message=e.message, type="input").text = f"{e.file}: {e.message}"
        return case
    u = item
    case = ET.Element("testcase", classname=_class(report, u.file.rpartition(":")[0]), name=f"check {u.file}")
    ET.SubElement(case, "failure", message=u.message, type="not checked").text = str(u)
    return case


def _placeholder(report) -> ET.Element:
    """The one passing case of a run with nothing to list, so that CI systems show it ran."""
    case = ET.Element("testcase", classname=f"gjk.{report.command}", name=report.command)
    ET.SubElement(case, "system-out").text = " ".join(report.notes) or "no findings"
    return case


def _case_text(case: ET.Element, tail: str) -> str:
    """A test case as the whole document's indenting writes it, followed by `tail`."""
    _xml_safe(case)
    ET.indent(case, level=2)
    case.tail = tail
    return ET.tostring(case, encoding="unicode")


def _xml_safe(tree: ET.Element) -> None:
    """User text (file and object names) made what XML can hold, in every element of `tree`."""
    for el in tree.iter():
        el.text = _xml(el.text)
        for k, v in el.attrib.items():
            el.attrib[k] = _xml(v)


# Characters XML 1.0 cannot hold: C0 controls but tab, newline and carriage return; surrogates;
# U+FFFE and U+FFFF.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml(text: str | None) -> str | None:
    """Text XML can hold: each character it cannot written as \\xNN (\\uNNNN)."""
    if text is None:
        return None
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 256
                        else f"\\u{ord(m.group()):04x}", text)


def _class(report, file: str) -> str:
    return f"gjk.{report.command}.{file}" if file else f"gjk.{report.command}"


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
        lines.append(_command("error", e.message, file=e.file, title=f"gjk {report.command}: cannot load"))
    for u in getattr(report, "unchecked", ()):
        file, _, line = u.file.rpartition(":")
        lines.append(_command("error", u.message, file=file, line=line,
                              title=f"gjk {report.command}: not checked"))
    for p in report.failures:
        lines.append(_command("error", f"{p.a} x {p.b}: {describe(p, report.units)}", file=p.file_a,
                              title=f"gjk {report.command} {_title(p)}"))
    for e in report.gone:
        lines.append(_command("notice", f"{e.a} x {e.b} ({e.status}) is in the baseline but no "
                                        f"longer found; write the baseline again", file=e.file,
                              title=f"gjk {report.command}: fixed"))
    return "".join(line + "\n" for line in lines)
