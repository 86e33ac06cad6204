"""Progress on stderr whenever it is a terminal, whatever stdout and the format are; no bar for a
stage without work; a bar in bytes for one large file (the reader's file position). Checked on a
pseudo-terminal and on rich consoles forced to be terminals, never by timing a run."""
from __future__ import annotations

import io
import json
import os
import pty
import select
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

import gjkcli
from gjkcli.report.scan import progress_callback, wants_progress
from gjkcli.scene.watch import WATCH_FROM_BYTES, bytes_read, watch_reading

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_whenever_stderr_is_a_terminal():
    for fmt in ("table", "json", "sarif", "junit"):
        assert wants_progress(quiet=False, output_format=fmt, stream=Terminal())
        assert not wants_progress(quiet=True, output_format=fmt, stream=Terminal())
        assert not wants_progress(quiet=False, output_format=fmt, stream=io.StringIO())


def test_a_stage_without_work_has_no_bar():
    out = io.StringIO()
    with progress_callback(Console(file=out, force_terminal=True, width=100), delay=0.0) as update:
        update("hulls", 0, 0)
        update("narrow", 3, 10)
        update("refine", 0, 0)
    text = out.getvalue()
    assert "checking pairs" in text and "3/10" in text
    assert "building hulls" not in text and "refining" not in text and "0/1" not in text


def test_a_byte_stage_shows_sizes():
    out = io.StringIO()
    with progress_callback(Console(file=out, force_terminal=True, width=100), delay=0.0) as update:
        update("read", 3 << 20, 12 << 20)
    assert "reading a large file" in out.getvalue() and "3.0/12.0 MiB" in out.getvalue()


def test_bytes_read_is_the_reader_s_file_position(tmp_path):
    path = tmp_path / "big.bin"
    path.write_bytes(bytes(100_000))
    assert bytes_read(path) is None  # nothing holds it open
    with open(path, "rb", buffering=0) as f:
        assert bytes_read(path) == 0
        f.read(12_345)
        assert bytes_read(path) == 12_345
        f.read(50_000)
        assert bytes_read(path) == 62_345


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the platform does not fork")
def test_bytes_read_follows_another_process_s_reading(tmp_path):
    """OpenCASCADE's process reads a STEP file for the command (`gjkcli.mesh.cad_process`): the
    command's bar follows that process's file position."""
    from gjkcli import forks

    path = tmp_path / "big.bin"
    path.write_bytes(bytes(100_000))

    def reader(parent):
        with open(path, "rb", buffering=0) as f:
            f.read(23_456)
            parent.send("read")
            parent.receive()

    worker = forks.Worker(reader)
    try:
        assert worker.receive() == "read"
        assert bytes_read(path, worker.pid) == 23_456
        assert bytes_read(path) is None  # this process holds it nowhere
        worker.send("done")
        assert worker.result() is None
    finally:
        worker.close()


def test_watch_reading_reports_start_and_end_for_a_large_file_only(tmp_path):
    big, small = tmp_path / "big.bin", tmp_path / "small.bin"
    big.write_bytes(bytes(WATCH_FROM_BYTES + 1))
    small.write_bytes(bytes(1000))
    calls = []
    with watch_reading(small, lambda *a: calls.append(a)):
        small.read_bytes()
    assert calls == []
    with watch_reading(big, lambda *a: calls.append(a), interval=0.01):
        with open(big, "rb") as f:
            while f.read(1 << 20):
                pass
    size = WATCH_FROM_BYTES + 1
    assert calls[0] == ("read", 0, size) and calls[-1] == ("read", size, size)
    done = [c[1] for c in calls]
    assert done == sorted(done) and max(done) <= size


# The command in a child whose stderr is a pseudo-terminal and whose stdout is a pipe; the bar's
# half-second delay set to 0 so that any run draws it.
CHILD = """
import functools, sys
import gjkcli.report.scan as scan
scan.progress_callback = functools.partial(scan.progress_callback, delay=0.0)
from gjkcli.cli import main
main(sys.argv[1:])
"""


def run_on_a_terminal(*args) -> tuple[int, str, str]:
    master, slave = pty.openpty()
    env = {**os.environ, "PYTHONPATH": str(Path(gjkcli.__file__).resolve().parents[1]), "COLUMNS": "100"}
    # run where the imported gjkcli lives: from a checkout's root, `-c` would put the source tree
    # (without a compiled core after a plain `pip install .`) first on the path
    proc = subprocess.Popen([sys.executable, "-c", CHILD, *map(str, args)], stdout=subprocess.PIPE,
                            stderr=slave, env=env, cwd=env["PYTHONPATH"])
    os.close(slave)
    seen = b""
    while True:
        ready, _, _ = select.select([master], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the child closed its end
                break
            if not chunk:
                break
            seen += chunk
        elif proc.poll() is not None:
            break
    out = proc.stdout.read().decode()
    proc.wait()
    os.close(master)
    return proc.returncode, out, seen.decode(errors="replace")


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal (POSIX)")
def test_json_to_a_file_shows_progress_on_a_terminal(tmp_path):
    out = tmp_path / "report.json"
    code, stdout, terminal = run_on_a_terminal("scan", SAMPLES / "collide_a.stl", SAMPLES / "collide_b.stl",
                                               "--format", "json", "-o", out, "-j", "1", "--together")
    assert code == 1 and stdout == ""
    assert json.loads(out.read_text())["summary"]["exit_code"] == 1
    assert "loading" in terminal and "checking pairs" in terminal
    code, stdout, terminal = run_on_a_terminal("scan", SAMPLES / "collide_a.stl", SAMPLES / "collide_b.stl",
                                               "--format", "json", "-q", "-j", "1", "--together")
    assert code == 1 and stdout == "" and terminal == ""


def test_readers_report_elements_meshed_and_solids_tessellated_to_the_run(tmp_path):
    """One IFC model and one STEP file, each read alone: the bar of the file moves through its
    elements (counted by IfcOpenShell's parser) and its solids."""
    pytest.importorskip("ifcopenshell")
    pytest.importorskip("OCP")
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from ifc_models import Box, write_model

    from gjkcli import progress
    from gjkcli.pipeline import run

    model = write_model(tmp_path / "m.ifc", [Box("IfcWall", f"W{k}", (3000 * k, 0, 0), (1000, 200, 3000))
                                             for k in range(4)])
    import ifcopenshell

    walls = len(ifcopenshell.open(str(model)).by_type("IfcWall"))
    calls = []
    run.scan([model], run.Options(jobs=1, mode="hull"), progress=lambda *a: calls.append(a))
    meshed = [c[1:] for c in calls if c[0] == "mesh"]
    assert meshed == [(k, walls) for k in range(1, walls + 1)] and walls == 4
    from gjkcli.mesh import cad

    calls.clear()
    step = Path(__file__).resolve().parents[1] / "data" / "third_party" / "step" / "eight_cyl.stp"
    with progress.reporting(lambda *a: calls.append(a)):
        solids = len(cad.read_step(step))
    assert calls == [("tessellate", k, solids) for k in range(1, solids + 1)] and solids == 8
    # a worker process forked while a run listens reports nothing (it has no terminal)
    seen = []
    with progress.reporting(lambda *a: seen.append(a)):
        progress.report("mesh", 1, 2)
        pid = os.fork()
        if pid == 0:
            progress.report("mesh", 2, 2)
            os._exit(0 if not seen[1:] else 1)
        os.waitpid(pid, 0)
    assert seen == [("mesh", 1, 2)]
    progress.report("mesh", 2, 2)  # nobody listens: nothing happens
    assert seen == [("mesh", 1, 2)]
