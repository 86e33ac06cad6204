"""What the command line's entry (gjkcli.__main__) does for a fast start and a fast exit, and that
it changes nothing else: numpy's OpenBLAS on one thread unless the user says otherwise, and the
garbage collector's objects frozen as the run ends, with the exit code, the report and the atexit
handlers as before. Speed itself is measured by benchmarks/bench_startup.py."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


def python_c(code: str, cwd: Path, **env) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env={**environ, **env},
                          capture_output=True, text=True, check=False)


@pytest.mark.parametrize("given, expected", [(None, "1"), ("3", "3")])
def test_openblas_runs_one_thread_unless_the_user_set_it(tmp_path, given, expected):
    env = {"OPENBLAS_NUM_THREADS": given} if given else {}
    done = python_c("import os, gjkcli.__main__; print(os.environ['OPENBLAS_NUM_THREADS'])", tmp_path, **env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == expected


@pytest.mark.parametrize("a, b, code, verdict", [
    ("clear_a.stl", "clear_b.stl", 0, "CLEAR"),
    ("collide_a.stl", "collide_b.stl", 1, "COLLISION"),
    ("clear_a.stl", "missing.stl", 2, None),
])
def test_the_frozen_exit_keeps_the_exit_code_the_report_and_atexit(tmp_path, a, b, code, verdict):
    script = (
        "import atexit, sys\n"
        "atexit.register(lambda: print('atexit ran', file=sys.stderr))\n"
        f"sys.argv = ['gjk', 'check', {str(SAMPLES / a)!r}, {str(SAMPLES / b)!r}]\n"
        "from gjkcli.__main__ import run\n"
        "run()\n")
    done = python_c(script, tmp_path)
    assert done.returncode == code, done.stderr
    assert done.stderr.rstrip().endswith("atexit ran")
    if verdict is None:
        assert done.stderr.startswith("gjk: error: ") and "missing.stl" in done.stderr
    else:  # the whole report, flushed: objects, the panel, the summary
        assert done.stdout.startswith("Objects\n") and f"verdict      {verdict}" in done.stdout
        assert done.stdout.splitlines()[-1].startswith("1 pair: ")


@pytest.mark.parametrize("command", ["check", "scan"])
@pytest.mark.parametrize("cache", ["1", "0"])
def test_a_run_never_loads_openssl_for_its_hashes(tmp_path, command, cache):
    """The cache's keys and the shared meshes' digests are BLAKE2b (gjkcli.digests), taken from
    CPython's own module: `import hashlib` would load OpenSSL's _hashlib (about 2 ms of every
    start) before handing out that same function. With the cache and without it."""
    script = (
        "import sys\n"
        f"sys.argv = ['gjk', {command!r}, {str(SAMPLES / 'collide_a.stl')!r}, "
        f"{str(SAMPLES / 'collide_b.stl')!r}, '--format', 'json', '-q', '--cache-dir', 'cache']\n"
        "from gjkcli.__main__ import run\n"
        "try:\n"
        "    run()\n"
        "except SystemExit as stop:\n"
        "    assert stop.code in (0, 1), stop.code\n"
        "print(*(m in sys.modules for m in ('gjkcli.pipeline.prepared', 'hashlib', '_hashlib')))\n")
    done = python_c(script, tmp_path, GJK_NO_CACHE=cache)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[-3:] == ["True", "False", "False"], done.stdout[-500:]
