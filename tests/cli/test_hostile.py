"""Inputs that lie, break or attack, through the real command: never lose a user's file, one bad
input never stops the others, one line on stderr and exit 2, Ctrl-C stops the run."""
from __future__ import annotations

import json
import os
import signal
import struct
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import gjkcli
from gjkcli.cli import main

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples"


def gjk(*args):
    """A scan's files as one world (--together): the pairs across the samples are the findings."""
    together = ["--together"] if args and args[0] == "scan" else []
    return CliRunner(catch_exceptions=False).invoke(main, [str(a) for a in args] + together)


def stl(path: Path, triangles) -> Path:
    """A binary STL of (m, 3, 3) triangles."""
    triangles = np.asarray(triangles, dtype=np.float32).reshape(-1, 3, 3)
    with open(path, "wb") as f:
        f.write(b"\0" * 80 + struct.pack("<I", len(triangles)))
        for t in triangles:
            f.write(struct.pack("<12fH", 0, 0, 0, *t.ravel(), 0))
    return path


def one_error_line(result, name: str) -> str:
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert name in lines[0] and "Traceback" not in result.stderr and "Error:" not in lines[0]
    return lines[0]


# -- never write over an input --------------------------------------------------------------------


@pytest.mark.parametrize("option", ["-o", "--write-baseline", "--trace-json"])
def test_no_output_lands_on_an_input(tmp_path, option):
    a = tmp_path / "a.stl"
    a.write_bytes((SAMPLES / "collide_a.stl").read_bytes())
    link = tmp_path / "link.stl"
    link.symlink_to(a)
    before = a.read_bytes()
    for target in (a, link, tmp_path / "." / "a.stl"):
        command = "check" if option == "--trace-json" else "scan"
        result = gjk(command, a, SAMPLES / "collide_b.stl", option, target)
        assert result.exit_code == 2
        assert "refusing to write over it" in one_error_line(result, "a.stl")
        assert a.read_bytes() == before


def test_reports_are_written_whole(tmp_path):
    out = tmp_path / "report.json"
    result = gjk("scan", SAMPLES / "collide_a.stl", SAMPLES / "collide_b.stl", "--format", "json", "-o", out)
    assert result.exit_code == 1 and json.loads(out.read_text())["summary"]["collision"] == 1
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]  # no temporary file left


# -- one bad input never stops the others ---------------------------------------------------------


def test_a_name_too_long_is_that_paths_error(tmp_path):
    long = tmp_path / ("x" * 300 + ".stl")
    result = gjk("scan", long, SAMPLES / "collide_a.stl", SAMPLES / "collide_b.stl", "--format", "json")
    assert result.exit_code == 2
    doc = json.loads(result.stdout)
    assert doc["summary"]["collision"] == 1 and "too long" in doc["errors"][0]["message"]


def test_a_part_of_two_distinct_vertices_gets_a_verdict(tmp_path):
    degenerate = stl(tmp_path / "two.stl", [[[0, 0, 0], [2, 0, 0], [2, 0, 0]]])  # a segment
    for command in ("check", "scan"):
        result = gjk(command, degenerate, SAMPLES / "collide_a.stl", "--format", "json")
        assert result.exit_code == 1, result.stderr  # the segment pierces the cube
        assert json.loads(result.stdout)["pairs"][0]["status"] == "collision"


def test_coordinates_beyond_double_precision_are_that_files_error(tmp_path):
    trimesh = pytest.importorskip("trimesh")
    scene = trimesh.Scene()
    scene.add_geometry(trimesh.creation.box([1, 1, 1]), node_name="huge",
                       transform=np.diag([1e300, 1e300, 1e300, 1.0]))
    scene.export(tmp_path / "huge.glb")
    result = gjk("scan", tmp_path / "huge.glb", SAMPLES / "collide_a.stl", SAMPLES / "collide_b.stl",
                 "--format", "json")
    assert result.exit_code == 2
    doc = json.loads(result.stdout)
    assert doc["summary"]["collision"] == 1 and "overflow double precision" in doc["errors"][0]["message"]
    assert one_error_line(result, "huge.glb")  # and no RuntimeWarning on stderr


def test_a_soup_of_separate_triangles_against_itself_is_bounded(tmp_path):
    rng = np.random.default_rng(7)
    centres = rng.random((5000, 1, 3))
    soup = stl(tmp_path / "soup.stl", centres + 0.02 * rng.standard_normal((5000, 3, 3)))
    check = gjk("check", soup, soup, "--split-bodies", "--format", "json")
    scan = gjk("scan", soup, "--split-bodies", "--format", "json")
    assert check.exit_code == scan.exit_code == 1
    one, other = json.loads(check.stdout), json.loads(scan.stdout)
    assert {(p["a"], p["b"]) for p in one["pairs"]} == {(p["a"], p["b"]) for p in other["pairs"]}
    assert 100 < one["summary"]["collision"] < 5000 and one["summary"]["pairs"] < 100_000


def test_junit_is_valid_xml_whatever_the_file_names(tmp_path):
    odd = tmp_path / "bad\x01name\x1b[31m.stl"
    odd.write_bytes((SAMPLES / "collide_b.stl").read_bytes())
    result = gjk("scan", SAMPLES / "collide_a.stl", odd, "--format", "junit")
    root = ET.fromstring(result.stdout)  # raises on characters XML cannot hold
    assert root.find("testsuite").get("failures") == "1"
    assert "\\x01" in result.stdout


# -- Ctrl-C ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("delay", [0.1, 0.4, 1.0])
def test_ctrl_c_stops_the_run_and_leaves_the_baseline(tmp_path, delay):
    """At any moment, imports included (trimesh swallows a KeyboardInterrupt while it imports)."""
    baseline = tmp_path / "base.json"
    baseline.write_text('{"version": 1, "tool": "gjk", "findings": []}\n')
    before = baseline.read_bytes()
    rng = np.random.default_rng(1)
    soup = stl(tmp_path / "soup.stl", rng.random((5000, 1, 3)) + 0.02 * rng.standard_normal((5000, 3, 3)))
    proc = subprocess.Popen([sys.executable, "-m", "gjkcli", "scan", str(soup), str(SAMPLES / "ring.stl"),
                             "--split-bodies", "--together", "--write-baseline", str(baseline)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                            env={**os.environ, "PYTHONPATH": str(Path(gjkcli.__file__).resolve().parents[1])})
    # the delay counts from the exec: a signal between fork and exec would be lost with the
    # parent's handler, and the run would then finish as if it had come too late
    cmdline = Path(f"/proc/{proc.pid}/cmdline")
    if cmdline.exists():
        waited = time.monotonic() + 10
        while b"gjkcli" not in cmdline.read_bytes() and time.monotonic() < waited:
            time.sleep(0.001)
    else:  # no /proc on this machine: give the exec a moment
        time.sleep(0.2)
    time.sleep(delay)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    if proc.returncode in (0, 1):  # finished before the signal: nothing to stop
        pytest.skip(f"the scan finished within {delay} s")
    if proc.returncode == -signal.SIGINT:
        # On a loaded machine the signal can land in Python's own start-up, before the first
        # line of gjk runs (and installs its handler): Python ends as it does. Then no frame of
        # gjk may be in its traceback, and nothing may have been written.
        assert "gjkcli" not in err, err
        assert baseline.read_bytes() == before
        assert {p.name for p in tmp_path.iterdir()} == {"base.json", "soup.stl"}
        return
    assert proc.returncode == 130, (proc.returncode, err)
    assert baseline.read_bytes() == before
    assert "Traceback" not in err and err.strip().splitlines()[-1] == "gjk: interrupted"
    assert {p.name for p in tmp_path.iterdir()} == {"base.json", "soup.stl"}  # no partial file


@pytest.mark.parametrize("half_made", ["multiprocessing", "gjkcli.errors"])
def test_ctrl_c_during_an_import_ends_the_run_cleanly(tmp_path, half_made):
    """The signal may land while a module the handler reads is half imported (seen in CI: the
    run's own import of multiprocessing): still exit 130 with the one line, nothing raised."""
    code = ("import os, signal, sys, types\n"
            "import gjkcli.__main__\n"
            f"sys.modules[{half_made!r}] = types.ModuleType({half_made!r})  # no attributes yet\n"
            "os.kill(os.getpid(), signal.SIGINT)\n"
            "print('the run went on')\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
                          timeout=60)
    assert (proc.returncode, proc.stdout, proc.stderr) == (130, "", "gjk: interrupted\n")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a process ends with its parent through Linux's prctl")
@pytest.mark.parametrize("ctypes_first", [True, False])
def test_ctrl_c_ends_a_process_forked_an_instant_before(tmp_path, ctypes_first):
    """A pool's worker forked just before the signal, not yet among the children the handler
    kills, ends with the run: it would otherwise wait for its tasks for ever, holding the run's
    stdout and stderr open (a cause that fits a CI run's wait for the scan timing out 120 s after
    its Ctrl-C)."""
    from fresh import wait_gone

    code = ("import os, signal, sys, time\n"
            + ("import ctypes\n" if ctypes_first else "")
            + "import gjkcli.__main__\n"
            "pid = os.fork()\n"
            "if pid == 0:  # a worker the handler does not know of\n"
            "    time.sleep(60)\n"
            "    os._exit(0)\n"
            "open(sys.argv[1], 'w').write(str(pid))\n"
            "os.kill(os.getpid(), signal.SIGINT)\n"
            "time.sleep(60)\n")
    marker = tmp_path / "pid"
    try:
        proc = subprocess.run([sys.executable, "-c", code, str(marker)], capture_output=True, text=True,
                              cwd=tmp_path, timeout=30)
        assert (proc.returncode, proc.stderr) == (130, "gjk: interrupted\n")
        wait_gone(int(marker.read_text()), "the forked worker", within=10)
    finally:
        if marker.exists():
            try:
                os.kill(int(marker.read_text()), signal.SIGKILL)
            except OSError:
                pass


# -- limits: sizes and counts checked before reading ----------------------------------------------


def test_huge_sparse_files_are_refused_before_reading(tmp_path):
    stl_file, obj_file = tmp_path / "sparse.stl", tmp_path / "sparse.obj"
    for f in (stl_file, obj_file):
        with open(f, "wb") as out:
            out.truncate(3 << 30)  # 3 GiB of nothing: no disk, no memory
    result = gjk("scan", stl_file, obj_file, SAMPLES / "collide_a.stl", SAMPLES / "collide_b.stl",
                 "--format", "json")
    doc = json.loads(result.stdout)
    assert result.exit_code == 2 and doc["summary"]["collision"] == 1
    assert [e["message"] for e in doc["errors"]] == [
        "is 3 GiB, over the 1 GiB file limit; raise it with --limit file-bytes=N if the file is meant to be that big"] * 2


def test_archives_are_judged_by_their_accounts_before_they_inflate(tmp_path):
    import tarfile
    import zipfile

    with zipfile.ZipFile(tmp_path / "bomb.zip", "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("part.stl", b"\0" * (20 << 20))
    with zipfile.ZipFile(tmp_path / "bomb.3mf", "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("3D/3dmodel.model", b"\0" * (20 << 20))
    zeros = tmp_path / "zeros.stl"
    zeros.write_bytes(b"\0" * (20 << 20))
    with tarfile.open(tmp_path / "bomb.tar.gz", "w:gz") as t:
        t.add(zeros, arcname="part.stl")
    zeros.unlink()
    good = (SAMPLES / "collide_a.stl", SAMPLES / "collide_b.stl")
    # over the inflated size
    result = gjk("scan", tmp_path / "bomb.zip", tmp_path / "bomb.3mf", tmp_path / "bomb.tar.gz", *good,
                 "--limit", "archive-bytes=1e6", "--format", "json")
    doc = json.loads(result.stdout)
    assert result.exit_code == 2 and doc["summary"]["collision"] == 1
    messages = {Path(e["file"]).name: e["message"] for e in doc["errors"]}
    assert messages["bomb.zip"].startswith("inflates to 20 MiB, over the 977 KiB limit")
    assert messages["bomb.3mf"].startswith("inflates to 20 MiB, over the 977 KiB limit")
    assert messages["bomb.tar.gz"].startswith("inflates to more than 977 KiB")
    # over the ratio (20 MiB of zeros deflate about a thousand times)
    ratio = gjk("check", tmp_path / "bomb.zip", good[0], "--limit", "ratio=50")
    assert ratio.exit_code == 2 and "over the ratio limit of 50 (a zip bomb?)" in one_error_line(ratio, "bomb.zip")


def test_the_triangle_limit_and_bad_limit_options(tmp_path):
    result = gjk("check", SAMPLES / "clear_a.stl", SAMPLES / "clear_b.stl", "--limit", "triangles=100")
    assert result.exit_code == 2
    assert "320 triangles, over the limit of 100" in one_error_line(result, "clear_b.stl")
    for bad in ("triangles", "sizes=3", "ratio=-1", "file-bytes=lots"):
        usage = gjk("check", SAMPLES / "clear_a.stl", SAMPLES / "clear_b.stl", "--limit", bad)
        assert usage.exit_code == 2 and "--limit" in usage.stderr and "Traceback" not in usage.stderr


# -- messages ------------------------------------------------------------------------------------


@pytest.mark.skipif(not Path("/dev/full").is_char_device(),
                    reason="/dev/full is not a character device on this machine (some VMs and "
                           "containers lack it): no full disk to write to")
def test_a_full_disk_is_one_line_naming_the_output(tmp_path):
    for fmt in ("table", "json"):
        full = os.open("/dev/full", os.O_WRONLY)  # never O_CREAT: a missing device stays missing
        try:
            proc = subprocess.run([sys.executable, "-m", "gjkcli", "check", str(SAMPLES / "clear_a.stl"),
                                   str(SAMPLES / "clear_b.stl"), "--format", fmt], stdout=full,
                                  stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                                  env={**os.environ, "PYTHONPATH": str(Path(gjkcli.__file__).resolve().parents[1])})
        finally:
            os.close(full)
        assert proc.returncode == 2
        assert proc.stderr == "gjk: error: <stdout>: cannot write the report: No space left on device\n"


def test_a_reader_that_leaves_ends_the_output_quietly(tmp_path):
    proc = subprocess.Popen([sys.executable, "-m", "gjkcli", "scan", str(SAMPLES / "collide_a.stl"),
                             str(SAMPLES / "collide_b.stl"), "--format", "junit", "--together"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path,
                            env={**os.environ, "PYTHONPATH": str(Path(gjkcli.__file__).resolve().parents[1])})
    proc.stdout.close()
    assert proc.wait(timeout=60) == 1 and proc.stderr.read() == b""


def test_odd_file_names_stay_on_one_line_and_keep_their_escapes(tmp_path):
    odd = tmp_path / "new\nline\x1b[31m.stl"
    result = gjk("check", odd, SAMPLES / "clear_a.stl")
    line = one_error_line(result, "new\\nline\\x1b[31m.stl")
    assert "\x1b" not in line


@pytest.mark.parametrize("kind", ["json", "toml"])
def test_manifests_and_baselines_nested_without_end(tmp_path, kind):
    deep = tmp_path / f"deep.{kind}"
    deep.write_text('{"include": ' + "[" * 100_000 + "]" * 100_000 + "}" if kind == "json"
                    else "x = " + "[" * 100_000 + "]" * 100_000 + "\n")
    result = gjk("scan", SAMPLES / "clear_a.stl", "--manifest", deep)
    assert result.exit_code == 2 and "nested deeper than any manifest is" in one_error_line(result, deep.name)
    base = tmp_path / "base.json"
    base.write_text('{"version": 1, "findings": ' + "[" * 100_000 + "]" * 100_000 + "}")
    result = gjk("scan", SAMPLES / "clear_a.stl", "--baseline", base)
    assert result.exit_code == 2 and "nested deeper than any baseline is" in one_error_line(result, "base.json")


@pytest.mark.skipif(not Path("/dev/zero").is_char_device(), reason="/dev/zero is not a character device on this machine")
def test_devices_are_not_manifests_baselines_or_meshes(tmp_path):
    for option in ("--manifest", "--baseline"):
        result = gjk("scan", SAMPLES / "clear_a.stl", option, "/dev/zero")
        assert result.exit_code == 2 and "not a regular file" in one_error_line(result, "/dev/zero")
    manifest = tmp_path / "m.toml"
    manifest.write_text('[[include]]\nfile = "/dev/zero"\n\n[[include]]\nfile = "m.toml"\n')
    doc = json.loads(gjk("scan", SAMPLES / "collide_a.stl", SAMPLES / "collide_b.stl", "--manifest", manifest,
                         "--format", "json").stdout)
    assert doc["summary"]["collision"] == 1 and len(doc["errors"]) == 2  # neither is silently taken


# -- the last hostile inputs: one line, exit 2 ----------------------------------------------------


def test_coordinates_of_1e308_are_one_line_in_words(tmp_path):
    """Before: "no hull could be built (LinAlgError: SVD did not converge)" from scan."""
    huge = tmp_path / "huge.stl"
    huge.write_text("solid huge\n" + "".join(
        f"facet normal 0 0 1\nouter loop\nvertex {a}\nvertex {b}\nvertex {c}\nendloop\nendfacet\n"
        for a, b, c in [("0 0 0", "1e308 0 0", "0 1e308 0"), ("0 0 0", "1e308 0 0", "0 0 1e308"),
                        ("0 0 0", "0 1e308 0", "0 0 1e308"), ("1e308 0 0", "0 1e308 0", "0 0 1e308")])
        + "endsolid huge\n")
    check = gjk("check", huge, SAMPLES / "collide_a.stl")
    assert check.exit_code == 2
    line = one_error_line(check, "huge.stl")
    assert "coordinates up to 1e+308" in line and "overflow double precision" in line
    scan = gjk("scan", huge, SAMPLES / "collide_a.stl", SAMPLES / "collide_b.stl", "--format", "json")
    assert scan.exit_code == 2
    (error,) = json.loads(scan.stdout)["errors"]
    assert "overflow double precision" in error["message"] and "Error" not in error["message"]


def test_an_obj_face_using_index_0_is_one_line_naming_the_line(tmp_path):
    bad = tmp_path / "zero.obj"
    bad.write_text("v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 3 2\nf 1 2 4\nf 0 4 3\nf 2 3 4\n")
    check = gjk("check", bad, SAMPLES / "collide_a.stl")
    assert check.exit_code == 2
    assert "line 7: a face uses index 0" in one_error_line(check, "zero.obj")
    scan = gjk("scan", bad, SAMPLES / "collide_a.stl", SAMPLES / "collide_b.stl", "--format", "json")
    doc = json.loads(scan.stdout)
    assert scan.exit_code == 2 and doc["summary"]["collision"] == 1  # the others still checked
    assert doc["errors"][0]["message"].startswith("line 7: a face uses index 0")
