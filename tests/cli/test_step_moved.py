"""A STEP assembly scanned again after one instance moved (`gjkcli.mesh.stepkeep`): placed from
the cache's row of the last scan without importing OpenCASCADE, its JSON a `--no-cache` scan's
byte for byte; a damaged row ignored with a note, a changed solid read by OpenCASCADE. Each
run is a process of its own (OpenCASCADE's second tessellation of a file in one process
differs in the last digits of its error bound); every cache is in tmp_path."""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import gjkcli

pytest.importorskip("OCP")

ROOT = Path(__file__).resolve().parents[2]
# the gjk the tests import (installed, or this checkout with its compiled core), for the runs
GJKCLI_PATH = str(Path(gjkcli.__file__).resolve().parents[1])
STEP = ROOT / "tests" / "data" / "third_party" / "step"
# eight_cyl: its moved instance's pairs are decided by the triangles; the AS1's moved nut
# touches a plate, which only the exact solids decide (OpenCASCADE imported for those pairs)
ASSEMBLY = STEP / "as1-oc-214.stp"

# `gjk` run by runpy, saying on its last stderr line whether OpenCASCADE was imported
_RUN = """
import atexit, runpy, sys
atexit.register(lambda: sys.stderr.write("OCP imported: %s\\n" % any(
    m == "OCP" or m.startswith("OCP.") for m in sys.modules)))
sys.argv = ["gjk", *sys.argv[1:]]
runpy.run_module("gjkcli", run_name="__main__", alter_sys=True)
"""


def _bench_cache():
    spec = importlib.util.spec_from_file_location("bench_cache", ROOT / "benchmarks" / "bench_cache.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _gjk(tmp_path, *args) -> tuple:
    """(exit code, stdout, stderr, whether OpenCASCADE was imported) of `gjk args`."""
    env = {**os.environ, "PYTHONPATH": GJKCLI_PATH, "GJK_NO_CACHE": ""}
    done = subprocess.run([sys.executable, "-c", _RUN, *map(str, args)], capture_output=True,
                          env=env, timeout=600, cwd=tmp_path)
    last = done.stderr.decode().strip().splitlines()[-1]
    assert last.startswith("OCP imported: "), done.stderr.decode()
    return done.returncode, done.stdout, done.stderr, last.endswith("True")


def _files(tmp_path, kind: str, assembly=ASSEMBLY, which: int = -1) -> tuple:
    bench = _bench_cache()
    text = assembly.read_text(encoding="latin-1")
    before = tmp_path / "as1.stp"
    before.write_text(text, encoding="latin-1")
    after = tmp_path / f"{kind}.stp"
    after.write_text(bench.step_moved(text, which) if kind == "moved" else bench.step_edited(text),
                     encoding="latin-1")
    return before, after


def _scan(tmp_path, path, *extra):
    return _gjk(tmp_path, "scan", path, "--format", "json", "--jobs", "1", *extra)


@pytest.mark.parametrize("name, imports", [("eight_cyl.stp", False), ("as1-oc-214.stp", True)])
def test_a_moved_instance_is_placed_from_the_cache(tmp_path, name, imports):
    before, after = _files(tmp_path, "moved", STEP / name)
    cache = ["--cache-dir", tmp_path / "c"]
    code, _, _, imported = _scan(tmp_path, before, *cache)
    assert imported
    plain = _scan(tmp_path, after, "--no-cache")
    got = _scan(tmp_path, after, *cache)
    assert got[0] == plain[0] and got[1] == plain[1]  # byte for byte
    # OpenCASCADE only for the pairs that need the exact solids
    assert got[3] == imports
    assert b"step" in b"".join(p.name.encode() for p in (tmp_path / "c").iterdir())


def test_a_damaged_row_is_ignored_with_a_note(tmp_path):
    before, after = _files(tmp_path, "moved")
    cache = ["--cache-dir", tmp_path / "c"]
    _scan(tmp_path, before, *cache)
    rows = [p for p in (tmp_path / "c" / "step").rglob("*") if p.is_file()]
    assert len(rows) == 1
    data = bytearray(rows[0].read_bytes())
    data[-100] ^= 0xFF
    rows[0].write_bytes(bytes(data))
    plain = json.loads(_scan(tmp_path, after, "--no-cache")[1])
    code, out, _, imported = _scan(tmp_path, after, *cache)
    got = json.loads(out)
    notes = [n for n in got["notes"] if n.startswith("cache: ignored the entry")]
    assert any(str(rows[0]) in n for n in notes)
    assert imported  # read by OpenCASCADE again
    got["notes"] = [n for n in got["notes"] if n not in notes]
    assert got == plain


def test_a_changed_solid_is_read_by_opencascade(tmp_path):
    before, after = _files(tmp_path, "edited")
    cache = ["--cache-dir", tmp_path / "c"]
    _scan(tmp_path, before, *cache)
    plain = _scan(tmp_path, after, "--no-cache")
    got = _scan(tmp_path, after, *cache)
    assert got[3]  # the edited solid's digest is not the kept one's: OpenCASCADE read the file
    assert got[0] == plain[0] and got[1] == plain[1]


@pytest.mark.parametrize("name, kind", [("eight_cyl.stp", "moved"), ("as1-oc-214.stp", "moved"),
                                        ("as1-oc-214.stp", "edited")])
def test_the_re_run_beside_opencascade_s_process_reports_as_without_the_cache(tmp_path, name, kind):
    """With two jobs, OpenCASCADE's process (`gjkcli.mesh.cad_process`) starts at once while
    the command reads the text: placed from the cache, the command never imports OpenCASCADE
    (the process refines the moved part's pairs that need the exact solids, or is ended unused:
    eight_cyl's); an edited solid's file is read by the process. The JSON is a `--no-cache`
    run's byte for byte either way."""
    before, after = _files(tmp_path, kind, STEP / name)
    cache = ["--cache-dir", tmp_path / "c"]

    def scan(path, *extra):
        return _gjk(tmp_path, "scan", path, "--format", "json", "--jobs", "2", *extra)

    scan(before, *cache)
    plain = scan(after, "--no-cache")
    got = scan(after, *cache)
    assert got[0] == plain[0] and got[1] == plain[1]  # byte for byte
    assert not got[3]  # the command's own process never imported OpenCASCADE


@pytest.mark.parametrize("which", [0, 2])
def test_exact_pairs_kept_beside_computed_ones_answer_as_without_the_cache(tmp_path, which):
    """The AS1 with its first or third part occurrence moved: the pairs the move leaves alone
    have answers in the cache, those of the moved part are measured on the exact solids again.
    Whether a pair is measured on its products' canonical copies is decided over every group of
    exact pairs of the run, and their common volumes and witness points differ in their last
    digits either way: a kept answer is taken only where the groups that decide its own are the
    same, and those measured now decide over all of them (`Run._exact_scene`). Before, the
    moved part's pairs were decided over themselves alone, and the kept ones as their own run
    had: both gave other digits than a run without the cache."""
    before, after = _files(tmp_path, "moved", which=which)
    cache = ["--cache-dir", tmp_path / "c"]
    _scan(tmp_path, before, *cache)
    plain = _scan(tmp_path, after, "--no-cache")
    got = _scan(tmp_path, after, *cache)
    assert got[0] == plain[0] and got[1] == plain[1]  # byte for byte
    again = _scan(tmp_path, after, *cache)  # the whole report kept
    assert again[1] == plain[1]
