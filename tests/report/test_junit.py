"""The JUnit document written a test case at a time (`junit_encoded`, what `--format junit -o FILE`
writes): the layout ElementTree gives the whole tree, the counts of its cases, on seeded findings
of odd names and every kind of case."""
from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pytest

from gjkcli.engine.results import Result, Status
from gjkcli.errors import Problem
from gjkcli.pipeline.findings import Finding, Findings
from gjkcli.report import chunks
from gjkcli.report.ci import junit_encoded, junit_xml

# names with what XML escapes (&, <, quotes), what it cannot hold (control characters), line
# breaks and text beyond ASCII
ALPHABET = list('ab &<>"\'\n\t\x01\x7fé日]') + ["\U0001f600"]


def _findings(rng) -> Findings:
    def text(n: int) -> str:
        return "".join(rng.choice(ALPHABET, size=int(rng.integers(1, n)))) + str(int(rng.integers(1e6)))

    pairs = []
    for _ in range(int(rng.integers(0, 30))):
        status = Status(rng.choice([s.value for s in Status]))
        apart = status in (Status.CLEAR, Status.CLEARANCE, Status.UNDECIDED)
        r = Result(status=status, distance=float(rng.uniform(0, 2)) if apart else 0.0,
                   distance_lower=0.0, depth=None if apart else float(rng.uniform(0, 1)),
                   normal=np.array([1.0, 0.0, 0.0]), point_a=np.zeros(3), point_b=np.ones(3), iterations=3,
                   certificate=None, epa_iterations=0, exit="converged", epa_exit=None, tolerance=1e-7)
        violation = status is not Status.CLEAR
        pairs.append(Finding(a=text(10), b=text(10), result=r, file_a=f"{text(5)}.stl", file_b=f"{text(5)}.stl",
                             violation=violation, allowed=violation and rng.random() < 0.2,
                             known=violation and rng.random() < 0.2, reason=text(8), mode="hull"))
    return Findings(command="scan", pairs=tuple(pairs),
                    errors=tuple(Problem(text(8), text(20)) for _ in range(int(rng.integers(0, 3)))),
                    unchecked=tuple(Problem(f"{text(5)}.urdf:{k}", text(12)) for k in range(int(rng.integers(0, 2)))),
                    notes=tuple(text(15) for _ in range(int(rng.integers(0, 3)))), fail_on=("collision", "touching"),
                    checked=len(pairs), version="0.1.0-test")


@pytest.mark.parametrize("seed", range(12))
def test_the_document_written_a_case_at_a_time_is_the_whole_trees_layout(monkeypatch, seed):
    rng = np.random.default_rng(seed)
    found = _findings(rng)
    monkeypatch.setattr(chunks, "CHUNK_BYTES", int(rng.integers(1, 3000)))
    text = b"".join(junit_encoded(found)).decode("utf-8")
    assert text == junit_xml(found)
    head = '<?xml version="1.0" encoding="utf-8"?>\n'
    assert text.startswith(head) and text.endswith("</testsuites>\n")
    root = ET.fromstring(text[len(head):])
    again = ET.fromstring(text[len(head):])  # the whole tree indented by ElementTree: the same text
    for el in again.iter():
        el.text = None if el.text is not None and not el.text.strip() and len(el) else el.text
        el.tail = None
    ET.indent(again)
    assert ET.tostring(again, encoding="unicode") == text[len(head):-1]
    [suite] = root
    cases = suite.findall("testcase")
    listed = len(found.errors) + len(found.unchecked) + len(found.pairs)
    assert len(cases) == max(listed, 1) == int(root.get("tests")) == int(suite.get("tests"))
    assert int(suite.get("errors")) == len(found.errors) == sum(c.find("error") is not None for c in cases)
    assert int(suite.get("failures")) == sum(c.find("failure") is not None for c in cases) \
        == len(found.unchecked) + sum(p.fails for p in found.pairs)
    assert int(suite.get("skipped")) == sum(c.find("skipped") is not None for c in cases)
