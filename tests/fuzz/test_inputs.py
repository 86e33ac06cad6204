"""Broken, lying and degenerate inputs, generated, through the real command.

Every generated file goes through `gjk check BAD GOOD` and `gjk scan BAD GOOD_A GOOD_B --format
json` (the good pair collides), and every run keeps the contract of the module's helpers below: exit
0, 1 or 2; on 2 one stderr line per bad file naming it, in words; the good pair still checked;
no traceback or class name. Where the generator knows what the file is,
more is asserted: a valid file (one triangle, a flat plate, a segment, stray or duplicate
triangles) gets a verdict, and the verdict is the one the geometry gives (a triangle reaching
into the cube collides with it, a soup far from it is clear); a file that lies (NaN coordinates,
a count that is not the file's) is refused.

Families: binary and ASCII STL; OBJ, OFF and PLY text, mutated from a valid file; GLB and glTF,
mutated from a valid file built here by hand (header, chunks, JSON keys, buffers); manifests,
TOML and JSON; scene graphs (many nodes, deep chains, shared meshes, mirrors), whose objects'
world boxes are checked against transforms composed here.
"""
from __future__ import annotations

import base64
import copy
import math
import itertools
import json
import re
import shutil
import struct
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import event, given, note
from hypothesis import strategies as st

from budget import fuzz_settings, spend
from gjkcli.cli import main

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples"
# The good pair: two convex parts that collide (depth 0.25), so a scan that still checks them
# reports one collision whatever a bad file beside them holds.
GOOD_A = SAMPLES / "collide_a.stl"
GOOD_B = SAMPLES / "collide_b.stl"
# The cube of GOOD_A: [-0.5, 0.5]^3.
CUBE_HALF = 0.5

NAN, INF = float("nan"), float("inf")
F32_MAX = float(np.finfo(np.float32).max)

# What must never reach a user: a traceback, the last-resort line, a Python class name.
LEAKS = re.compile(r"Traceback|internal error|\b[A-Z][a-zA-Z]*(Error|Exception|Warning)\b|"
                   r"StopIteration|KeyError|IndexError|ValueError|TypeError|AttributeError|"
                   r"\bNoneType\b")


# -- files ----------------------------------------------------------------------------------------


class Cases:
    """A folder per example under one tmp_path_factory folder, removed when the next starts."""

    def __init__(self, root: Path):
        self.root = root
        self.counter = itertools.count()
        self.current: Path | None = None

    def folder(self) -> Path:
        if self.current is not None:
            shutil.rmtree(self.current, ignore_errors=True)
        self.current = self.root / f"case{next(self.counter)}"
        self.current.mkdir()
        return self.current


@pytest.fixture(scope="module")
def cases(tmp_path_factory) -> Cases:
    return Cases(tmp_path_factory.mktemp("fuzz"))


# -- the command ----------------------------------------------------------------------------------


def gjk(*args):
    """The real command's result, run in this process."""
    return CliRunner(catch_exceptions=False).invoke(main, [str(a) for a in args])


def shown(result, command) -> str:
    return (f"\n$ gjk {' '.join(map(str, command))}\nexit {result.exit_code}\n"
            f"stderr: {result.stderr!r}\nstdout: {result.stdout[:2000]!r}")


def assert_clean_stderr(result, command):
    leak = LEAKS.search(result.stderr)
    assert leak is None, f"stderr shows {leak.group(0)!r}" + shown(result, command)


def error_lines(result) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.strip()]


def assert_one_line_per_bad_file(result, command, bad):
    """Exit 2: one stderr line per bad file at most, each "gjk: error: FILE: what is wrong" (or
    "FILE:LINE: ..." for a manifest) with words after the name, no file named twice."""
    lines = error_lines(result)
    assert lines, "exit 2 and nothing on stderr" + shown(result, command)
    assert len(lines) <= len(bad), f"{len(lines)} stderr lines for {len(bad)} bad file(s)" + shown(result, command)
    names = sorted({str(b) for b in bad}, key=len, reverse=True)
    seen = []
    for line in lines:
        assert line.startswith("gjk: error: "), shown(result, command)
        rest = line[len("gjk: error: "):]
        name = next((n for n in names if rest.startswith(n + ":")), None)
        assert name is not None, f"a stderr line that names no bad file: {line!r}" + shown(result, command)
        # a manifest that is also an input of its own scan is two files: the mesh input, and
        # the manifest whose line is named
        role = name + (":line" if re.match(r":\d+:", rest[len(name):]) else "")
        assert role not in seen, f"{name} named on two lines" + shown(result, command)
        seen.append(role)
        said = rest[len(name):].lstrip(":0123456789 ")
        assert len(said) >= 8 and re.search(r"[a-z]{3}", said), f"no words after the name: {line!r}" + shown(result, command)


def good_pair(doc: dict):
    """The pair of the two good parts in a scan's JSON document, or None."""
    for p in doc["pairs"]:
        if {Path(p["file_a"]).name, Path(p["file_b"]).name} == {GOOD_A.name, GOOD_B.name}:
            return p
    return None


def run_check(bad: Path, *, valid: bool | None = None, extra=()):
    """`gjk check bad good` under the contract. valid: True when the file must get a verdict."""
    command = ["check", bad, GOOD_A, *extra]
    result = gjk(*command)
    assert result.exit_code in (0, 1, 2), shown(result, command)
    assert_clean_stderr(result, command)
    if result.exit_code == 2:
        assert valid is not True, "valid geometry refused" + shown(result, command)
        assert_one_line_per_bad_file(result, command, [bad])
    else:
        assert valid is not False, "an unusable file got a verdict" + shown(result, command)
        assert not error_lines(result), shown(result, command)
    return result


def run_scan(bad_files, *, valid: bool | None = None, extra=(), manifest=None,
             expect_good: bool = True, also_named=()):
    """`gjk scan bad... good_a good_b --format json` under the contract.

    The good pair must be in "pairs" as a collision, whatever the bad files hold (expect_good
    False: a manifest may select other pairs or widen the band). also_named: other files an
    error line may name (those a manifest refers to). Returns (result, document).
    """
    bad_files = [bad_files] if isinstance(bad_files, (str, Path)) else list(bad_files)
    command = ["scan", *bad_files, GOOD_A, GOOD_B, "--format", "json", "--together", *extra]
    if manifest is not None:
        command += ["--manifest", manifest]
    result = gjk(*command)
    assert result.exit_code in (0, 1, 2), shown(result, command)
    assert_clean_stderr(result, command)
    named = [*bad_files, *([manifest] if manifest is not None else []), *also_named]
    if result.exit_code == 2:
        assert valid is not True, "valid geometry refused" + shown(result, command)
        assert_one_line_per_bad_file(result, command, named)
    else:
        assert valid is not False, "an unusable file got a verdict" + shown(result, command)
        assert not error_lines(result), shown(result, command)
    if not result.stdout.strip():
        # only a manifest that cannot be used stops a scan before its report
        assert manifest is not None and result.exit_code == 2, "no report" + shown(result, command)
        return result, None
    doc = json.loads(result.stdout)
    assert doc["summary"]["exit_code"] == result.exit_code, shown(result, command)
    assert len(doc["errors"]) == len(error_lines(result)), shown(result, command)
    for e in doc["errors"]:
        assert any(str(b) in e["file"] for b in named), shown(result, command)
        assert LEAKS.search(e["message"]) is None, shown(result, command)
    if expect_good:
        pair = good_pair(doc)
        assert pair is not None, "the good pair is missing" + shown(result, command)
        assert pair["status"] == "collision", shown(result, command)
        assert result.exit_code in (1, 2), shown(result, command)
    return result, doc


# =================================================================================================
# STL
# =================================================================================================

ordinary = st.floats(-3.0, 3.0, width=32)
odd_numbers = st.sampled_from([0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1e-30, 1.4e-45, 1e-7, 1e6,
                               1e30, -1e30, F32_MAX, -F32_MAX])
poison = st.sampled_from([NAN, INF, -INF])


@st.composite
def stl_triangles(draw, coordinate, max_size=12):
    """(m, 3, 3) float32 triangles, with degenerate ones: zero area, two or three equal corners,
    repeated triangles."""
    m = draw(st.integers(1, max_size))
    t = np.array(draw(st.lists(coordinate, min_size=9 * m, max_size=9 * m)), dtype=np.float32)
    t = t.reshape(m, 3, 3)
    for _ in range(draw(st.integers(0, 4))):
        k = draw(st.integers(0, m - 1))
        how = draw(st.sampled_from(["two equal", "three equal", "collinear", "repeat", "reverse"]))
        if how == "two equal":
            t[k, 1] = t[k, 0]
        elif how == "three equal":
            t[k, 1] = t[k, 2] = t[k, 0]
        elif how == "collinear":
            with np.errstate(all="ignore"):
                t[k, 2] = t[k, 0] + np.float32(draw(st.floats(-2, 2))) * (t[k, 1] - t[k, 0])
        elif how == "repeat":
            t[draw(st.integers(0, m - 1))] = t[k]
        else:
            t[k] = t[k, ::-1]
    return t


def binary_stl(header: bytes, count: int, triangles: np.ndarray, attribute=0) -> bytes:
    records = np.zeros(len(triangles), dtype=[("normal", "<f4", (3,)), ("corners", "<f4", (3, 3)),
                                                ("attribute", "<u2")])
    records["corners"] = triangles
    records["attribute"] = attribute
    return header + struct.pack("<I", count) + records.tobytes()


def soup_facts(triangles: np.ndarray):
    """What the geometry of a triangle soup says about it against GOOD_A's cube.

    Returns (valid, inside, far): valid: finite, of moderate size, two distinct points at least
    (one triangle, a segment, a plate: a real part); inside: a triangle of real area has a corner
    well inside the cube, deeper than the touching band (the parts collide by any reading); far:
    the soup's box is clear of the cube by more than the band (the parts are clear).
    """
    t = triangles.astype(np.float64)
    if not len(t) or not np.all(np.isfinite(t)):
        return False, False, False
    points = t.reshape(-1, 3)
    moderate = bool(np.max(np.abs(points)) <= 1e6)
    distinct = len(np.unique(points, axis=0)) >= 2
    valid = moderate and distinct
    if not valid:
        return False, False, False
    lo, hi = points.min(axis=0), points.max(axis=0)
    band = 1e-7 * max(float(np.linalg.norm(hi - lo)), float(np.sqrt(3.0)))
    area = 0.5 * np.linalg.norm(np.cross(t[:, 1] - t[:, 0], t[:, 2] - t[:, 0]), axis=1)
    corner_in = np.all(np.abs(t) < CUBE_HALF - 0.05, axis=2).any(axis=1)
    inside = band < 1e-3 and bool(np.any((area > 1e-4) & corner_in))
    gap = np.maximum(np.maximum(lo - CUBE_HALF, -CUBE_HALF - hi), 0.0)
    far = float(np.linalg.norm(gap)) > max(1e-3, 100 * band)
    return valid, inside, far


def assert_verdict(check, scan_doc, name: str, inside: bool, far: bool):
    """A soup reaching into GOOD_A's cube collides with it; a soup far from it is clear: the exit
    code of `check` and the pair of the scan (listed only when it is a finding)."""
    listed = [p for p in scan_doc["pairs"]
              if sorted([Path(p["file_a"]).name, Path(p["file_b"]).name]) == sorted([name, GOOD_A.name])]
    if inside:
        assert check.exit_code == 1, "the part reaches into the cube" + check.stdout
        assert any(p["status"] == "collision" for p in listed), listed
    if far:
        assert check.exit_code == 0, "the part is far from the cube" + check.stdout
        assert not listed, listed


COORDINATES = {
    "clean": ordinary,
    "odd": st.one_of(ordinary, ordinary, odd_numbers),
    "poisoned": st.one_of(ordinary, ordinary, ordinary, odd_numbers, poison),
}


@st.composite
def binary_stl_case(draw):
    """(bytes, triangles, what): a binary STL that tells the truth or lies about its count,
    is torn or padded, with clean, odd or poisoned coordinates."""
    coords = draw(st.sampled_from(sorted(COORDINATES)))
    triangles = draw(stl_triangles(COORDINATES[coords]))
    header = draw(st.one_of(st.just(b"\0" * 80), st.binary(min_size=80, max_size=80),
                            st.just(b"solid binary but not ascii".ljust(80, b" "))))
    attribute = draw(st.integers(0, 65535))
    lie = draw(st.sampled_from(["truthful", "truthful", "count", "cut", "padded", "empty"]))
    count = len(triangles)
    if lie == "count":
        count = draw(st.one_of(st.integers(-3, 3).filter(lambda k: k != 0).map(lambda k: count + k),
                               st.sampled_from([1 << 31, (1 << 32) - 1, 20_000_001])))
    elif lie == "empty":
        triangles = triangles[:0]
        count = 0
    data = binary_stl(header, count % (1 << 32), triangles, attribute)
    if lie == "cut":
        data = data[:draw(st.integers(0, len(data) - 1))]
    elif lie == "padded":
        data += draw(st.binary(min_size=1, max_size=60))
    return data, triangles, (coords, lie, header[:5] == b"solid")


@given(case=binary_stl_case())
@fuzz_settings(60)
def test_binary_stl(cases, case):
    spend("binary stl")
    data, triangles, (coords, lie, solid_header) = case
    path = cases.folder() / "part.stl"
    path.write_bytes(data)
    valid, inside, far = soup_facts(triangles)
    expect = None
    if lie == "truthful" and not solid_header:
        finite = bool(np.all(np.isfinite(triangles)))
        expect = True if valid else (False if not finite else None)
    elif lie in ("count", "cut", "padded", "empty") and not solid_header and len(data) >= 84:
        expect = False  # a count that is not the file's, or a torn record
    event(f"binary STL, {coords} coordinates, {lie}: valid {expect}")
    check = run_check(path, valid=expect)
    _, doc = run_scan(path, valid=expect)
    if expect:
        assert_verdict(check, doc, "part.stl", inside, far)


def ascii_number(x: float, spelling: int) -> str:
    if spelling == 0:
        return repr(float(x))
    if spelling == 1:
        return f"{x:e}"
    return f"{x:.9g}"


@st.composite
def ascii_stl(draw):
    """(text, triangles or None when the text no longer says which): ASCII STL, one or several
    solids, then mutated: a token dropped or replaced, a line doubled or lost, the end cut off."""
    solids = draw(st.integers(1, 3))
    chunks, all_tris = [], []
    spelling = draw(st.integers(0, 2))
    # poisoned coordinates in a file of several solids: left out until the loader refuses them
    # (today trimesh drops such a triangle and the rest of the file gets a verdict)
    coords = draw(st.sampled_from(sorted(COORDINATES) if solids == 1 else ["clean", "odd"]))
    for s in range(solids):
        tris = draw(stl_triangles(COORDINATES[coords], max_size=5))
        all_tris.append(tris)
        name = draw(st.sampled_from(["", "part", f"body{s}", "a b", "solid"]))
        lines = [f"solid {name}".rstrip()]
        for t in tris:
            lines += ["  facet normal 0 0 0", "    outer loop"]
            lines += [f"      vertex {' '.join(ascii_number(float(x), spelling) for x in v)}" for v in t]
            lines += ["    endloop", "  endfacet"]
        lines.append(f"endsolid {name}".rstrip())
        chunks.append("\n".join(lines))
    text = "\n".join(chunks) + "\n"
    triangles = np.concatenate(all_tris)
    mutations = draw(st.lists(st.sampled_from(["drop token", "replace token", "double line",
                                               "drop line", "cut", "garbage line", "crlf"]),
                              max_size=3))
    for how in mutations:
        if how == "crlf":
            text = text.replace("\n", "\r\n")
            continue
        triangles = None
        tokens = text.split(" ")
        if how == "drop token" and len(tokens) > 1:
            tokens.pop(draw(st.integers(0, len(tokens) - 1)))
            text = " ".join(tokens)
        elif how == "replace token":
            k = draw(st.integers(0, len(tokens) - 1))
            tokens[k] = draw(st.sampled_from(["x", "nan", "inf", "-inf", "1e999", "", "vertex",
                                              "facet", "endsolid", "0x10", "1,5", "--1", "\0"]))
            text = " ".join(tokens)
        elif how in ("double line", "drop line", "garbage line"):
            lines = text.split("\n")
            k = draw(st.integers(0, len(lines) - 1))
            if how == "double line":
                lines.insert(k, lines[k])
            elif how == "drop line":
                lines.pop(k)
            else:
                lines.insert(k, draw(st.text(max_size=30)))
            text = "\n".join(lines)
        else:
            text = text[:draw(st.integers(0, len(text)))]
    return text, triangles


@given(case=ascii_stl())
@fuzz_settings(50)
def test_ascii_stl(cases, case):
    spend("ascii stl")
    text, triangles = case
    path = cases.folder() / "part.stl"
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    expect = inside = far = None
    if triangles is not None:
        valid, inside, far = soup_facts(triangles)
        finite = bool(np.all(np.isfinite(triangles)))
        expect = True if valid else (False if not finite else None)
    event(f"ASCII STL: valid {expect}")
    check = run_check(path, valid=expect)
    _, doc = run_scan(path, valid=expect)
    if expect:
        assert_verdict(check, doc, "part.stl", inside, far)


# =================================================================================================
# OBJ, OFF, PLY
# =================================================================================================

TETRA_FACES = np.array([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])


@st.composite
def tetrahedron(draw):
    """(4, 3) corners of a tetrahedron of size 0.2 to 2 placed in or around GOOD_A's cube."""
    size = draw(st.floats(0.2, 2.0))
    offset = np.array(draw(st.lists(st.floats(-3.0, 3.0), min_size=3, max_size=3)))
    corners = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], dtype=np.float64)
    return np.round(corners * size + offset, 6)


def number(x: float) -> str:
    return f"{x:.6f}"


def obj_text(v, style: str) -> str:
    lines = ["# a tetrahedron", "o tetra"]
    lines += [f"v {number(x)} {number(y)} {number(z)}" for x, y, z in v]
    if style == "slashes":
        lines += ["vt 0 0", "vn 0 0 1"]
    for k, f in enumerate(TETRA_FACES):
        if style == "negative":  # relative to the vertices read so far
            lines.append("f " + " ".join(str(i - len(v)) for i in f))
        elif style == "slashes":
            lines.append("f " + " ".join(f"{i + 1}/1/1" for i in f))
        else:
            lines.append("f " + " ".join(str(i + 1) for i in f))
    return "\n".join(lines) + "\n"


def off_text(v) -> str:
    lines = ["OFF", f"{len(v)} {len(TETRA_FACES)} 6"]
    lines += [" ".join(number(x) for x in p) for p in v]
    lines += ["3 " + " ".join(str(i) for i in f) for f in TETRA_FACES]
    return "\n".join(lines) + "\n"


def ply_header(fmt: str, n_vertices, n_faces) -> str:
    return "\n".join(["ply", f"format {fmt} 1.0", "comment made by a fuzz test",
                      f"element vertex {n_vertices}", "property float x", "property float y",
                      "property float z", f"element face {n_faces}",
                      "property list uchar int vertex_indices", "end_header"]) + "\n"


def ply_ascii(v) -> str:
    lines = [" ".join(number(x) for x in p) for p in v]
    lines += ["3 " + " ".join(str(i) for i in f) for f in TETRA_FACES]
    return ply_header("ascii", len(v), len(TETRA_FACES)) + "\n".join(lines) + "\n"


def ply_binary(v) -> bytes:
    body = np.asarray(v, dtype="<f4").tobytes()
    for f in TETRA_FACES:
        body += struct.pack("<B3i", 3, *f)
    return ply_header("binary_little_endian", len(v), len(TETRA_FACES)).encode() + body


BAD_TOKENS = ["0", "-1", "-100", "5", "999999", "4294967296", "1e400", "-1e400", "nan", "inf",
              "x", "", "1.5", "-0", "1/", "//", "0x10", "1e-320", "\t", "3.4e38"]
HUGE_COUNTS = ["1000000000", "2147483648", "18446744073709551616", "-1", "99999999999999999999"]


@st.composite
def text_mesh(draw):
    """(file name, bytes, triangles or None, mutations): a valid OBJ, OFF or PLY tetrahedron,
    then mutated: tokens dropped or replaced (bad indices: 0, negative, past the end; not
    numbers), header counts made huge, lines lost, doubled or junk, the end cut off, emptied."""
    v = draw(tetrahedron())
    kind = draw(st.sampled_from(["obj", "obj-negative", "obj-slashes", "off", "ply", "ply-binary"]))
    if kind.startswith("obj"):
        name, data = "part.obj", obj_text(v, kind[4:] or "plain").encode()
    elif kind == "off":
        name, data = "part.off", off_text(v).encode()
    elif kind == "ply":
        name, data = "part.ply", ply_ascii(v).encode()
    else:
        name, data = "part.ply", ply_binary(v)
    mutations = draw(st.lists(st.sampled_from(
        ["drop token", "replace token", "replace token", "huge count", "drop line", "double line",
         "junk line", "cut", "flip byte", "empty"]), max_size=3))
    for how in mutations:
        if how == "empty":
            data = b""
            continue
        if how == "cut":
            data = data[:draw(st.integers(0, max(0, len(data) - 1)))]
            continue
        if how == "flip byte" and data:
            k = draw(st.integers(0, len(data) - 1))
            data = data[:k] + bytes([data[k] ^ draw(st.integers(1, 255))]) + data[k + 1:]
            continue
        head, sep, body = data.partition(b"end_header\n") if kind == "ply-binary" else (data, b"", b"")
        lines = head.decode("latin-1").split("\n")
        if how == "huge count":
            counts = [k for k, line in enumerate(lines)
                      if line.startswith("element ") or (kind == "off" and k == 1)]
            if counts:
                k = draw(st.sampled_from(counts))
                words = lines[k].split(" ")
                words[-1 if kind.startswith("ply") else draw(st.integers(0, len(words) - 1))] = \
                    draw(st.sampled_from(HUGE_COUNTS))
                lines[k] = " ".join(words)
        elif how in ("drop token", "replace token"):
            k = draw(st.integers(0, len(lines) - 1))
            words = lines[k].split(" ")
            j = draw(st.integers(0, len(words) - 1))
            if how == "drop token":
                words.pop(j)
            else:
                words[j] = draw(st.sampled_from(BAD_TOKENS))
            lines[k] = " ".join(words)
        elif how == "drop line":
            lines.pop(draw(st.integers(0, len(lines) - 1)))
        elif how == "double line":
            k = draw(st.integers(0, len(lines) - 1))
            lines.insert(k, lines[k])
        elif how == "junk line":
            lines.insert(draw(st.integers(0, len(lines))),
                         draw(st.text(st.characters(codec="latin-1"), max_size=20)))
        data = "\n".join(lines).encode("latin-1") + sep + body
    triangles = v[TETRA_FACES] if not mutations else None
    return name, data, triangles, tuple(mutations) or ("none",), kind


@given(case=text_mesh())
@fuzz_settings(80)
def test_obj_off_ply(cases, case):
    spend("obj off ply")
    name, data, triangles, mutations, kind = case
    path = cases.folder() / name
    path.write_bytes(data)
    expect = inside = far = None
    if triangles is not None:
        expect, inside, far = soup_facts(triangles)
    elif not data:
        expect = False
    event(kind)
    for how in mutations:
        event(f"mutation: {how}")
    check = run_check(path, valid=expect)
    _, doc = run_scan(path, valid=expect)
    if expect:
        assert_verdict(check, doc, name, inside, far)


# =================================================================================================
# GLB and glTF
# =================================================================================================

_JSON, _BIN = 0x4E4F534A, 0x004E4942


def gltf_document(meshes, nodes, roots):
    """(doc, binary) of a glTF 2.0 scene: meshes [(vertices (n, 3), faces (m, 3))], one
    POSITION (FLOAT VEC3) and one index (UNSIGNED_INT) accessor each, in one buffer; nodes as
    given; one scene of `roots`."""
    blob, views, accessors, gl_meshes = b"", [], [], []
    for vertices, faces in meshes:
        v = np.ascontiguousarray(vertices, dtype="<f4")
        f = np.ascontiguousarray(faces, dtype="<u4")
        for data, target, component, kind, count in ((v, 34962, 5126, "VEC3", len(v)),
                                                     (f, 34963, 5125, "SCALAR", f.size)):
            views.append({"buffer": 0, "byteOffset": len(blob), "byteLength": data.nbytes,
                          "target": target})
            accessor = {"bufferView": len(views) - 1, "componentType": component, "count": count,
                        "type": kind}
            if kind == "VEC3":
                accessor["min"] = v.min(axis=0).tolist()
                accessor["max"] = v.max(axis=0).tolist()
            accessors.append(accessor)
            blob += data.tobytes()
        gl_meshes.append({"primitives": [{"attributes": {"POSITION": len(accessors) - 2},
                                          "indices": len(accessors) - 1, "mode": 4}]})
    doc = {"asset": {"version": "2.0", "generator": "gjk fuzz tests"}, "scene": 0,
           "scenes": [{"nodes": list(roots)}], "nodes": nodes, "meshes": gl_meshes,
           "accessors": accessors, "bufferViews": views, "buffers": [{"byteLength": len(blob)}]}
    return doc, blob


def glb_bytes(doc, blob: bytes, *, nan=True) -> bytes:
    text = json.dumps(doc, allow_nan=nan).encode()
    text += b" " * (-len(text) % 4)
    blob += b"\0" * (-len(blob) % 4)
    chunks = struct.pack("<II", len(text), _JSON) + text
    if blob:
        chunks += struct.pack("<II", len(blob), _BIN) + blob
    return struct.pack("<4sII", b"glTF", 2, 12 + len(chunks)) + chunks


def box_mesh(extents):
    """(vertices, faces) of an axis-aligned box centred on the origin, outward triangles."""
    half = np.asarray(extents, dtype=np.float64) / 2
    v = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]) * half
    f = np.array([[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
                  [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]])
    return v, f


TETRA = (np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], dtype=np.float64), TETRA_FACES)


def small_scene(offset):
    """A valid small scene: a root (moved by `offset`) holding a tetrahedron node and a box node
    placed by a column-major matrix. Returns (doc, blob, world triangles)."""
    nodes = [{"name": "root", "children": [1, 2], "translation": list(map(float, offset))},
             {"name": "tetra", "mesh": 0, "translation": [0.1, 0.0, 0.0], "scale": [0.5, 0.5, 0.5]},
             {"name": "plate", "mesh": 1,
              "matrix": [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0.0, 0.2, 0.0, 1]}]
    plate = box_mesh([0.4, 0.4, 0.05])
    doc, blob = gltf_document([TETRA, plate], nodes, [0])
    offset = np.asarray(offset, dtype=np.float64)
    world = [(TETRA[0] * 0.5 + [0.1, 0.0, 0.0] + offset)[TETRA_FACES],
             (plate[0] + [0.0, 0.2, 0.0] + offset)[plate[1]]]
    return doc, blob, np.concatenate(world)


JSON_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(1 << 40), 1 << 40),
              st.sampled_from([0, 1, 2, 3, -1, 255, 256, 4294967295, 5126, 5125, 5123, 5121]),
              st.floats(allow_nan=True), st.text(max_size=8),
              st.sampled_from(["VEC3", "SCALAR", "VEC2", "MAT4", "data:,", "../x.bin", "/etc/passwd",
                               "http://example.com/a.bin", "missing.bin", "file:///etc/passwd"])),
    lambda inner: st.one_of(st.lists(inner, max_size=5), st.dictionaries(st.text(max_size=8), inner, max_size=3)),
    max_leaves=8)

# Mutations of the JSON a reader must refuse, whatever else holds: (path, value).
FATAL_EDITS = [
    (("nodes", 0, "children"), [0]),                   # its own child
    (("nodes", 1, "children"), [0]),                   # a cycle through the root
    (("nodes", 0, "children"), [1, 2, 7]),             # a child out of range
    (("nodes", 0, "children"), [1, 2, -1]),
    (("nodes", 0, "children"), "1"),
    (("nodes", 1, "mesh"), 9),
    (("nodes", 1, "mesh"), -1),
    (("nodes", 2, "matrix"), [1, 0, 0]),
    (("nodes", 1, "translation"), ["1", 0, 0]),
    (("scenes", 0, "nodes"), [5]),
    (("scene",), 3),
    (("accessors", 0, "count"), 1 << 31),
    (("accessors", 0, "bufferView"), 99),
    (("accessors", 0, "type"), "VEC2"),
    (("accessors", 0, "componentType"), 7),
    (("accessors", 1, "componentType"), 5126),
    (("accessors", 0, "byteOffset"), 1 << 40),
    (("bufferViews", 0, "byteLength"), 1 << 33),
    (("bufferViews", 0, "byteStride"), 4),
    (("bufferViews", 0, "byteStride"), 0),
    (("bufferViews", 0, "buffer"), 3),
    (("buffers", 0, "byteLength"), 1 << 31),
    (("buffers", 0, "uri"), "../outside.bin"),
    (("buffers", 0, "uri"), "/etc/passwd"),
    (("buffers", 0, "uri"), "http://example.com/a.bin"),
    (("buffers", 0, "uri"), "file:///etc/passwd"),
    (("buffers", 0, "uri"), "missing.bin"),
    (("asset", "version"), "1.0"),
    (("meshes", 0, "primitives", 0, "attributes", "POSITION"), 1),
    (("meshes", 0, "primitives", 0, "indices"), 0),
]
# Mutations of valid files that stay valid: the file must still get a verdict.
HARMLESS_EDITS = [
    (("nodes", 2, "matrix"), [2, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]),
    (("nodes", 1, "scale"), [-1.0, 1.0, 1.0]),                                    # a mirror
    (("nodes", 1, "rotation"), [0.0, 0.0, 0.0, 0.0]),                             # trimesh: none
    (("nodes", 1, "rotation"), [0.0, 0.0, 0.7071068, 0.7071068]),
    (("nodes", 1, "scale"), [1.0, 1.0, 0.0]),                                     # flattened
    (("bufferViews", 0, "byteStride"), 12),
    (("meshes", 0, "primitives", 0, "mode"), 5),
    (("meshes", 0, "primitives", 0, "mode"), 6),
    (("asset", "version"), "2.1"),
    (("extensionsUsed",), ["KHR_materials_unlit"]),
    (("nodes", 0, "name"), "world"),
    (("nodes", 1, "name"), "root"),
]


def edit(doc, path, value):
    """Set doc[path] = value where the path exists up to its last key; False where it does not."""
    target = doc
    for key in path[:-1]:
        try:
            target = target[key]
        except (KeyError, IndexError, TypeError):
            return False
    if isinstance(target, dict) or (isinstance(target, list) and isinstance(path[-1], int)
                                    and -len(target) <= path[-1] < len(target)):
        target[path[-1]] = value
        return True
    return False


def json_paths(doc, prefix=()):
    """Every path into a JSON document."""
    out = []
    items = doc.items() if isinstance(doc, dict) else enumerate(doc) if isinstance(doc, list) else ()
    for key, value in items:
        out.append((*prefix, key))
        out.extend(json_paths(value, (*prefix, key)))
    return out


@st.composite
def gltf_case(draw):
    """(name, files {name: bytes}, world triangles, verdict expected (True, False or None),
    mutations): the small scene as GLB, as glTF with a data: URI buffer or with a .bin beside
    it, then mutated: header fields, chunk lengths and types, JSON keys set to values that lie,
    random values anywhere, buffer bytes flipped, the file cut."""
    offset = draw(st.lists(st.floats(-2.5, 2.5), min_size=3, max_size=3))
    doc, blob, world = small_scene(offset)
    container = draw(st.sampled_from(["glb", "glb", "gltf-data", "gltf-file"]))
    mutations, fatal, moved, unknown = [], [], False, False
    for _ in range(draw(st.integers(0, 3))):
        how = draw(st.sampled_from(["fatal", "harmless", "random value", "drop key", "nan"]))
        if how == "fatal":
            path, value = draw(st.sampled_from(FATAL_EDITS))
            if path[0] == "buffers" and container == "glb" and path[-1] == "uri":
                continue  # a GLB's buffer 0 has no uri; one given replaces the chunk
            if edit(doc, path, copy.deepcopy(value)):
                fatal.append((path, value))
                mutations.append(f"fatal {'/'.join(map(str, path))}")
        elif how == "harmless":
            path, value = draw(st.sampled_from(HARMLESS_EDITS))
            if edit(doc, path, copy.deepcopy(value)):
                mutations.append(f"harmless {'/'.join(map(str, path))}")
                moved = moved or path[-1] in ("scale", "rotation", "matrix", "mode")
        elif how == "random value":
            path = draw(st.sampled_from(json_paths(doc)))
            edit(doc, path, draw(JSON_VALUES))
            mutations.append("random value")
            unknown = True
        elif how == "drop key":
            path = draw(st.sampled_from(json_paths(doc)))
            parent = doc
            for key in path[:-1]:
                parent = parent[key]
            if isinstance(parent, dict):
                del parent[path[-1]]
            else:
                parent.pop(path[-1])
            mutations.append("drop key")
            unknown = True
        else:  # a mesh's node made non-finite, or so large its part overflows
            node = draw(st.sampled_from([1, 2]))
            key = draw(st.sampled_from(["matrix", "translation", "scale"]))
            width = 16 if key == "matrix" else 3
            values = [float(x) for x in np.eye(4).T.ravel()] if key == "matrix" else [1.0] * width
            values[draw(st.integers(0, width - 1))] = draw(st.sampled_from([NAN, INF, -INF, 1e300]))
            if edit(doc, ("nodes", node, key), values):
                fatal.append((("nodes", node, key), values))
                mutations.append(f"non-finite {key}")

    def holds(path, value) -> bool:  # not overwritten by a later edit
        target = doc
        for key in path:
            try:
                target = target[key]
            except (KeyError, IndexError, TypeError):
                return False
        return json.dumps(target) == json.dumps(value)

    # what the file is: refused when an edit that lies still stands and nothing random may have
    # made it unreachable; valid when every edit was harmless (its verdict known when nothing moved)
    if unknown:
        expect = None
    elif any(holds(path, value) for path, value in fatal):
        expect = False
    else:
        expect = None if fatal else True
    files = {}
    if container == "glb":
        name = "part.glb"
        data = original = glb_bytes(doc, blob)
        before = expect
        for _ in range(draw(st.integers(0, 2))):
            how = draw(st.sampled_from(["magic", "version", "length", "json length", "json type",
                                        "bin length", "bin type", "cut", "append", "flip bin",
                                        "extra chunk"]))
            if len(data) < 20:
                break  # cut before its first chunk
            json_length = struct.unpack_from("<I", data, 12)[0]
            bin_at = 20 + json_length
            if how == "magic":
                data = draw(st.sampled_from([b"gltf", b"GLTF", b"\0\0\0\0"])) + data[4:]
            elif how == "version":
                data = data[:4] + struct.pack("<I", draw(st.sampled_from([0, 1, 3, 1 << 31]))) + data[8:]
            elif how == "length":
                length = struct.unpack_from("<I", data, 8)[0]
                lie = draw(st.one_of(st.integers(-8, 8).filter(bool).map(lambda k: (length + k) % (1 << 32)),
                                     st.sampled_from([0, 12, (1 << 32) - 1])))
                data = data[:8] + struct.pack("<I", lie) + data[12:]
            elif how == "json length":
                lie = draw(st.sampled_from([0, 1, json_length - 1, json_length + 4, len(data), (1 << 32) - 1]))
                data = data[:12] + struct.pack("<I", lie % (1 << 32)) + data[16:]
            elif how == "json type":
                data = data[:16] + struct.pack("<I", _BIN) + data[20:]
            elif how == "bin length" and bin_at + 8 <= len(data):
                bin_length = struct.unpack_from("<I", data, bin_at)[0]
                lie = draw(st.sampled_from([0, 4, bin_length - 4, bin_length + 4, (1 << 32) - 1]))
                data = data[:bin_at] + struct.pack("<I", lie % (1 << 32)) + data[bin_at + 4:]
            elif how == "bin type" and bin_at + 8 <= len(data):
                data = data[:bin_at + 4] + struct.pack("<I", draw(st.sampled_from([_JSON, 0x12345678]))) + data[bin_at + 8:]
            elif how == "cut":
                data = data[:draw(st.integers(0, len(data) - 1))]
            elif how == "append":
                data += draw(st.binary(min_size=1, max_size=16))
            elif how == "flip bin" and bin_at + 8 < len(data):
                k = draw(st.integers(bin_at + 8, len(data) - 1))
                data = data[:k] + bytes([data[k] ^ draw(st.integers(1, 255))]) + data[k + 1:]
                mutations.append("flip bin")
                expect = False if expect is False else None
                moved = True
                continue
            elif how == "extra chunk" and not any(m.startswith("glb") for m in mutations):
                # a chunk of an unknown type: skipped, still valid (its length mended: so only
                # before the lies about lengths)
                extra = draw(st.binary(max_size=8))
                extra += b"\0" * (-len(extra) % 4)
                data += struct.pack("<II", len(extra), 0x0A0B0C0D) + extra
                data = data[:8] + struct.pack("<I", len(data)) + data[12:]
                mutations.append("extra chunk")
                continue
            else:
                continue
            mutations.append(f"glb {how}")
            expect = False
        if data == original:  # two lies that undo each other (a length 4 more, then 4 less)
            expect = before
        files[name] = data
    else:
        name = "part.gltf"
        if container == "gltf-data":
            uri = "data:application/octet-stream;base64," + base64.b64encode(blob).decode()
        else:
            uri = draw(st.sampled_from(["part.bin", "part%20data.bin"]))
            files["part data.bin" if "%20" in uri else "part.bin"] = blob
        buffers = doc.get("buffers")
        if isinstance(buffers, list) and buffers and isinstance(buffers[0], dict) and "uri" not in buffers[0]:
            buffers[0]["uri"] = uri
        files[name] = json.dumps(doc).encode()
        if draw(st.booleans()) and len(files) > 1:  # the .bin cut short
            cut = draw(st.integers(0, len(blob) - 1))
            files["part data.bin" if "%20" in uri else "part.bin"] = blob[:cut]
            mutations.append("bin cut")
            expect = None if unknown else False
    return name, files, (None if moved else world), expect, mutations, container


@given(case=gltf_case())
@fuzz_settings(100)
def test_glb_and_gltf(cases, case):
    spend("glb")
    name, files, world, expect, mutations, container = case
    folder = cases.folder()
    for file, data in files.items():
        (folder / file).write_bytes(data)
    path = folder / name
    event(f"{container}: {'valid' if not mutations else 'mutated'}, expect {expect}")
    for how in mutations:
        event(how)
    note(f"mutations: {mutations}")
    check = run_check(path, valid=expect)
    _, doc = run_scan(path, valid=expect)
    if expect and world is not None:
        valid, inside, far = soup_facts(world)
        assert_verdict(check, doc, name, inside, far)


# =================================================================================================
# Manifests
# =================================================================================================


def toml_value(value) -> str | None:
    """A value as TOML (None: TOML has no null, the key is left out)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value != value:
            return "nan"
        if value in (INF, -INF):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        items = [toml_value(v) for v in value]
        return "[" + ", ".join(v for v in items if v is not None) + "]"
    items = [(json.dumps(str(k)), toml_value(v)) for k, v in value.items()]
    return "{" + ", ".join(f"{k} = {v}" for k, v in items if v is not None) + "}"


def toml_text(data: dict) -> str:
    """A manifest dict as TOML: top-level values first, then arrays of tables as [[name]]."""
    lines, tables = [], []
    for key, value in data.items():
        if isinstance(value, list) and value and all(isinstance(t, dict) for t in value):
            tables.append((key, value))
        elif (line := toml_value(value)) is not None:
            lines.append(f"{json.dumps(key)} = {line}")
    for key, entries in tables:
        for table in entries:
            lines += ["", f"[[{key}]]" if re.fullmatch(r"[A-Za-z0-9_-]+", key) else f"[[{json.dumps(key)}]]"]
            lines += [f"{json.dumps(str(k))} = {text}" for k, v in table.items()
                      if (text := toml_value(v)) is not None]
    return "\n".join(lines) + "\n"


def nested(depth: int, kind: str) -> str:
    """A value nested `depth` deep, as text: lists, or JSON objects / TOML inline tables."""
    if kind == "list":
        return "[" * depth + "]" * depth
    if kind == "json":
        return '{"a": ' * depth + "1" + "}" * depth
    return "{a = " * depth + "1" + "}" * depth


# Files a manifest may name, made in the case's folder by the test: files that load, files that
# do not (a broken STL, the manifest itself, its folder, a device, the SRDF as a mesh) and names
# of nothing (the manifest is then refused).
GOOD_REFS = ["part.stl", "other.stl"]
BAD_REFS = ["broken.stl", "SELF", ".", "sub", "/dev/null", "robot.srdf"]
MISSING_REFS = ["missing.glb", "../outside.stl", "", "sub/none.stl"]
SRDF_TEXTS = [
    '<robot name="r"><disable_collisions link1="collide_a.stl" link2="collide_b.stl" reason="x"/></robot>',
    '<robot name="r"><disable_collisions link1="a"/></robot>',
    '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;">]>'
    '<robot name="&b;"><disable_collisions link1="&b;" link2="&b;"/></robot>',
    "<robot",
    "",
]
# Manifest primitives drawn. "box" is left out until a box primitive can go to the triangle test
# (--mode exact, or beside a part that is not its hull): today that pair stops the scan.
PRIMITIVE_KINDS = ["sphere", "capsule", "cylinder"]
NAMES = ["collide_a.stl", "collide_b.stl", "collide_*", "*", "thing0", "thing1", "g", "part.stl",
         "nothing*", "["]


def small_value():
    return st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.floats(allow_nan=True),
                     st.text(max_size=6), st.lists(st.floats(-10, 10), max_size=5),
                     st.sampled_from(["collision", "touching", "clearance", "collide_*", "*", "[",
                                      "robot", "collide_a.stl"]))


@st.composite
def manifest_case(draw):
    """(text, suffix, whether the good pair must be listed as a collision, the SRDF's text): a
    manifest of the real keys with sane values, some replaced by values that lie (a share drawn
    per manifest), typos and stray keys; includes and objects naming files that load, a broken
    file, the manifest itself, its folder, a device, missing files; or text nested thousands
    deep."""
    fmt = draw(st.sampled_from(["toml", "json"]))
    if draw(st.integers(0, 9)) == 0:  # nested past any manifest
        depth = draw(st.sampled_from([50, 1000, 100_000]))
        kind = draw(st.sampled_from(["list", "table"]))
        value = nested(depth, kind if kind == "list" else ("json" if fmt == "json" else "toml"))
        text = f'{{"tolerance": {value}}}' if fmt == "json" else f"tolerance = {value}\n"
        return text, fmt, False, ""
    wild = draw(st.sampled_from([0, 0, 0, 0, 10, 50]))  # percent of values that lie

    def pick(sane):
        if wild and draw(st.integers(0, 99)) < wild:
            return draw(small_value())
        return draw(sane)

    refs = draw(st.permutations(GOOD_REFS * 2 + BAD_REFS + (MISSING_REFS if wild else [])))

    def a_file():
        return refs.pop() if refs else "part.stl"

    data: dict = {}
    if draw(st.booleans()):
        data["tolerance"] = pick(st.floats(0, 0.01))
    if draw(st.booleans()):
        data["clearance"] = pick(st.floats(0, 1))
    if draw(st.integers(0, 3)) == 0:
        data["fail_on"] = pick(st.lists(st.sampled_from(["collision", "touching", "clearance"]), max_size=3))
    if draw(st.integers(0, 4)) == 0:
        data["srdf"] = "robot.srdf"
    if wild:
        for _ in range(draw(st.integers(0, 1))):  # a typo, or a key of a table at the top
            data[draw(st.sampled_from(["tolerence", "includes", "name", "file", draw(st.text(max_size=5))]))] = \
                draw(small_value())
    tables: dict = {}
    for _ in range(draw(st.integers(0, 3))):
        entry = {"file": a_file()}
        if draw(st.booleans()):
            entry["transform"] = pick(st.one_of(
                st.just([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]),
                st.just([[-1, 0, 0, 0.5], [0, 2, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]),
                st.just([[0, 0, 0, 0]] * 4),
                st.just([[1, 0, 0, NAN], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]),
                st.lists(st.floats(-2, 2), min_size=16, max_size=16)))
        if draw(st.booleans()):
            entry["split_bodies"] = pick(st.booleans())
        tables.setdefault("include", []).append(entry)
    for k in range(draw(st.integers(0, 3))):
        entry = {"name": pick(st.sampled_from([f"thing{k}", f"thing{k}", "collide_a.stl"]))}
        kind = draw(st.sampled_from(["file", *PRIMITIVE_KINDS] + (["two", "none"] if wild else [])))
        if kind == "file":
            entry["file"] = a_file()
        elif kind == "box":
            entry["box"] = pick(st.lists(st.floats(0.01, 2), min_size=3, max_size=3))
        elif kind == "sphere":
            entry["sphere"] = pick(st.floats(0.01, 2))
        elif kind in ("capsule", "cylinder"):
            second = "length" if kind == "capsule" else "height"
            entry[kind] = pick(st.fixed_dictionaries({"radius": st.floats(0.01, 2), second: st.floats(0.01, 2)}))
        elif kind == "two":
            entry["box"], entry["sphere"] = [1, 1, 1], 1.0
        if draw(st.booleans()):
            entry["translate"] = pick(st.lists(st.floats(-10, 10), min_size=3, max_size=3))
        if draw(st.booleans()):
            entry["rotate"] = pick(st.lists(st.floats(-360, 360), min_size=3, max_size=3))
        if wild and draw(st.integers(0, 3)) == 0:
            entry[draw(st.sampled_from(["transform", "trasform", "scale"]))] = draw(small_value())
        tables.setdefault("object", []).append(entry)
    if draw(st.integers(0, 2)) == 0:
        tables["group"] = [{"name": "g", "members": pick(st.lists(st.sampled_from(NAMES), min_size=1, max_size=3))}]
    for name in ("check", "allow"):
        if draw(st.integers(0, 3)) == 0:
            entry = {"a": pick(st.sampled_from(NAMES)), "b": pick(st.sampled_from(NAMES))}
            if name == "check" and draw(st.booleans()):
                entry["clearance"] = pick(st.floats(0, 1))
            if name == "allow":
                entry["reason"] = pick(st.just("bolted"))
            tables[name] = [entry]
    data.update(tables)
    text = json.dumps(data) if fmt == "json" else toml_text(data)
    if wild and draw(st.integers(0, 5)) == 0:  # broken syntax
        k = draw(st.integers(0, len(text)))
        text = text[:k] + draw(st.sampled_from(["[", "]", "{", "=", '"', "\n[[", ",", "\0"])) + text[k:]
    # the good pair stays a listed collision unless a selection, an allowance or the band
    # decides otherwise
    plain = (not tables.get("check") and not tables.get("allow") and "srdf" not in data
             and (isinstance(data.get("tolerance"), float) and data["tolerance"] < 0.1
                  or "tolerance" not in data))
    srdf = draw(st.sampled_from(SRDF_TEXTS[:1] * 4 + SRDF_TEXTS[1:]))
    return text, fmt, plain, srdf


@given(case=manifest_case())
@fuzz_settings(100)
def test_manifests(cases, case):
    spend("manifests")
    text, fmt, plain, srdf = case
    folder = cases.folder()
    manifest = folder / f"m.{fmt}"
    manifest.write_text(text.replace('"SELF"', json.dumps(manifest.name)), encoding="utf-8",
                        errors="surrogatepass")
    part = binary_stl(b"\0" * 80, 4, (TETRA[0] * 0.3 + 5.0)[TETRA_FACES])
    (folder / "part.stl").write_bytes(part)
    (folder / "other.stl").write_bytes(binary_stl(b"\0" * 80, 4, (TETRA[0] * 0.3 - 0.1)[TETRA_FACES]))
    (folder / "broken.stl").write_bytes(b"\x01" * 83)
    (folder / "sub").mkdir()
    (folder / "sub" / "inner.stl").write_bytes(part)
    (folder / "robot.srdf").write_text(srdf)
    named = [*(folder / name for name in ["broken.stl", "sub", "robot.srdf", "part.stl", "other.stl"]),
             folder, Path("/dev/null")]
    event(f"{fmt} manifest, good pair {'checked' if plain else 'maybe selected away'}")
    result, doc = run_scan([], manifest=manifest, expect_good=False, also_named=named)
    event(f"exit {result.exit_code}" + (", no report" if doc is None else ""))
    for line in error_lines(result):
        words = [w for w in re.sub(r"^gjk: error: \S+? ", "", line).split() if "/" not in w]
        event("error: " + " ".join(words[:4]))
    if doc is not None and plain:
        pair = good_pair(doc)
        assert pair is not None and pair["status"] == "collision", doc["pairs"]


# =================================================================================================
# Scene graphs
# =================================================================================================


def quaternion_matrix(xyzw) -> np.ndarray:
    """The rotation of a glTF quaternion (x, y, z, w), normalised; the identity when it is ~0."""
    x, y, z, w = xyzw
    n = x * x + y * y + z * z + w * w
    if n < 4 * np.finfo(float).eps:
        return np.eye(3)
    s = 2.0 / n
    return np.array([[1 - s * (y * y + z * z), s * (x * y - z * w), s * (x * z + y * w)],
                     [s * (x * y + z * w), 1 - s * (x * x + z * z), s * (y * z - x * w)],
                     [s * (x * z - y * w), s * (y * z + x * w), 1 - s * (x * x + y * y)]])


def local_matrix(node: dict) -> np.ndarray:
    """A node's local transform as glTF defines it: its matrix (column-major), else T @ R @ S."""
    if "matrix" in node:
        return np.array(node["matrix"], dtype=np.float64).reshape(4, 4).T
    T = np.eye(4)
    T[:3, 3] = node.get("translation", [0.0, 0.0, 0.0])
    T[:3, :3] = quaternion_matrix(node.get("rotation", [0.0, 0.0, 0.0, 1.0])) * np.asarray(
        node.get("scale", [1.0, 1.0, 1.0]))
    return T


@st.composite
def node_transform(draw):
    """A node's placement: TRS with rotations (zero quaternions too), negative and zero scales,
    or a matrix (shear included), or nothing."""
    how = draw(st.sampled_from(["none", "trs", "trs", "matrix"]))
    node: dict = {}
    if how == "trs":
        if draw(st.booleans()):
            node["translation"] = draw(st.lists(st.floats(-1.5, 1.5), min_size=3, max_size=3))
        if draw(st.booleans()):
            node["rotation"] = draw(st.one_of(
                st.lists(st.floats(-1, 1), min_size=4, max_size=4),
                st.just([0.0, 0.0, 0.0, 0.0]), st.just([0.0, 0.0, 1.0, 0.0])))
        if draw(st.booleans()):
            node["scale"] = draw(st.lists(st.sampled_from([1.0, 1.0, -1.0, 0.5, 2.0, -0.5, 0.0]),
                                          min_size=3, max_size=3))
    elif how == "matrix":
        A = np.array(draw(st.lists(st.floats(-1.5, 1.5), min_size=9, max_size=9))).reshape(3, 3)
        M = np.eye(4)
        M[:3, :3] = A
        M[:3, 3] = draw(st.lists(st.floats(-1.5, 1.5), min_size=3, max_size=3))
        node["matrix"] = M.T.ravel().tolist()
    return node


@st.composite
def scene_graph(draw):
    """(doc, blob, mesh nodes {name: world triangles}): a random forest of up to 200 nodes, a
    few meshes shared among the nodes, and sometimes a chain up to 2,000 deep."""
    meshes = [TETRA, box_mesh([0.3, 0.2, 0.1]), box_mesh([1.0, 0.05, 0.05])]
    n = draw(st.integers(1, 200))
    nodes, parent = [], []
    for k in range(n):
        node = {"name": f"n{k}", **draw(node_transform())}
        if draw(st.integers(0, 3)) == 0:
            node["mesh"] = draw(st.integers(0, len(meshes) - 1))
        nodes.append(node)
        parent.append(draw(st.integers(-1, k - 1)) if k else -1)
    chain = draw(st.sampled_from([0, 0, 0, 50, 2000]))
    for k in range(n, n + chain):  # a chain of small turns and steps
        node = {"name": f"n{k}", "translation": [0.001, 0.0, 0.0],
                "rotation": [0.0, 0.0, math.sin(0.0005), math.cos(0.0005)]}
        if k == n + chain - 1 or draw(st.integers(0, 500)) == 0:
            node["mesh"] = 0
        nodes.append(node)
        parent.append(k - 1 if k > n else -1)
    if not any("mesh" in node for node in nodes):
        nodes[-1]["mesh"] = 0
    for k, p in enumerate(parent):
        if p >= 0:
            nodes[p].setdefault("children", []).append(k)
    roots = [k for k, p in enumerate(parent) if p < 0]
    if draw(st.booleans()):  # children listed in a shuffled order
        for node in nodes:
            if "children" in node:
                node["children"] = draw(st.permutations(node["children"]))
    doc, blob = gltf_document(meshes, nodes, roots)
    world = [np.eye(4)] * len(nodes)
    for k in range(len(nodes)):  # parents come before their children
        world[k] = (world[parent[k]] if parent[k] >= 0 else np.eye(4)) @ local_matrix(nodes[k])
    placed = {}
    for k, node in enumerate(nodes):
        if "mesh" in node:
            v, f = meshes[node["mesh"]]
            v = v.astype(np.float32).astype(np.float64)
            placed[node["name"]] = (v @ world[k][:3, :3].T + world[k][:3, 3])[f]
    return doc, blob, placed, chain


@given(case=scene_graph())
@fuzz_settings(25)
def test_scene_graphs(cases, case):
    """Valid scene graphs get verdicts, and every object sits where its nodes' transforms,
    composed here, put it: the whole file's box (check) and each listed object's box (scan)."""
    spend("scene graphs")
    doc, blob, placed, chain = case
    path = cases.folder() / "part.glb"
    path.write_bytes(glb_bytes(doc, blob))
    bucket = next((f"<= {b}" for b in (1, 10, 50) if len(placed) <= b), "> 50")
    event(f"mesh nodes {bucket}, chain {chain}")
    everything = np.concatenate(list(placed.values())).reshape(-1, 3)
    scale = 1.0 + float(np.max(np.abs(everything)))
    check = run_check(path, valid=True, extra=("--format", "json"))
    record = json.loads(check.stdout)["objects"][0]
    assert np.allclose(record["bounds"], [everything.min(axis=0), everything.max(axis=0)],
                       rtol=0, atol=1e-9 * scale), (record["bounds"], everything.min(axis=0), everything.max(axis=0))
    _, scan = run_scan(path, valid=True, extra=("--all-pairs",))
    for record in scan["objects"]:
        if record["file"] != str(path):
            continue
        # "part.glb:<node>"; a file of one object is named after the file
        node = record["name"].split(":", 1)[1] if len(placed) > 1 else next(iter(placed))
        where = placed[node].reshape(-1, 3)
        assert np.allclose(record["bounds"], [where.min(axis=0), where.max(axis=0)],
                           rtol=0, atol=1e-9 * scale), (node, record["bounds"])


def test_a_chain_of_100000_nodes_is_read(cases):
    """docs/security.md: a valid node chain 100,000 deep is read."""
    nodes = [{"name": f"n{k}", "translation": [1e-5, 0.0, 0.0], "children": [k + 1]} for k in range(100_000)]
    del nodes[-1]["children"]
    nodes[-1]["mesh"] = 0
    doc, blob = gltf_document([TETRA], nodes, [0])
    path = cases.folder() / "chain.glb"
    path.write_bytes(glb_bytes(doc, blob))
    check = run_check(path, valid=True, extra=("--format", "json"))
    lo, hi = json.loads(check.stdout)["objects"][0]["bounds"]
    assert np.allclose(lo, [1.0, 0.0, 0.0], atol=1e-6) and np.allclose(hi, [2.0, 1.0, 1.0], atol=1e-6)
    run_scan(path, valid=True)
