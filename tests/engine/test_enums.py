"""The core's enums exist once, in its headers: Python reads them from the compiled module (Cython
`cpdef enum` over the header) and only adds words. Checked against the header text itself."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from gjkcli.engine import _core, _enums, _mesh, query, results, shapes

# the headers in the source tree (the installed package holds no C: pyproject.toml's package-data)
CSRC = Path(__file__).resolve().parents[2] / "gjkcli" / "engine" / "csrc"


def header_enum(header: str, name: str) -> dict:
    """{member: value} of `enum name { ... }` in a header, values as written there."""
    text = (CSRC / header).read_text()
    body = re.search(r"enum\s+" + name + r"\s*\{(.*?)\};", text, re.S).group(1)
    body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
    out = {}
    for item in filter(None, (x.strip() for x in body.split(","))):
        member, value = (x.strip() for x in item.split("="))
        out[member] = int(value)
    return out


@pytest.mark.parametrize("header,enum,python", [
    ("gjk.h", "gjk_status", _enums.gjk_status), ("gjk.h", "gjk_exit", _enums.gjk_exit),
    ("gjk.h", "gjk_feature", _enums.gjk_feature), ("gjk.h", "gjk_cert", _enums.gjk_cert),
    ("gjk.h", "gjk_want", _enums.gjk_want), ("gjk.h", "gjk_kind", _enums.gjk_kind),
    ("gjk.h", "gjk_trace_field", _enums.gjk_trace_field), ("mesh.h", "mesh_exit", _enums.mesh_exit),
])
def test_python_sees_the_headers_numbers(header, enum, python):
    assert {m.name: int(m) for m in python} == header_enum(header, enum)


def test_every_member_has_words_and_no_number_means_two_things():
    assert set(results.EXIT_NAMES) == {int(m) for m in _enums.gjk_exit}
    assert set(results.FEATURE_NAMES) == {int(m) for m in _enums.gjk_feature}
    assert set(results.STATUS_CODES) == {int(m) for m in _enums.gjk_status}
    assert set(_mesh.EXIT_NAMES) == {int(m) for m in _enums.mesh_exit}
    # a boolean query's "intersecting" is a collision, never a command-level status
    assert results.STATUS_CODES[int(_enums.gjk_status.GJK_INTERSECTING)] is results.Status.COLLISION
    assert results.Status.CLEARANCE not in results.STATUS_CODES.values()
    assert shapes.KINDS == {"hull": 0, "point": 1, "segment": 2, "box": 3, "cylinder": 4, "cone": 5}
    assert query.WANT == {"intersect": 0, "distance": 1, "verdict": 2}
    assert _core.TRACE_WIDTH == max(_core.TRACE_FIELDS.values()) + 1
