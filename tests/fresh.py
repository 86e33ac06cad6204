"""Python code run in a fresh interpreter, for what a test process cannot show of itself (the
modules a run imports, a fork, the garbage collector at an import, a command's own process)."""
from __future__ import annotations

import os
import subprocess
import sys


def python_c(code: str, *args, cwd=None, env: dict | None = None, exits: int = 0) -> str:
    """stdout of `python -c code ARGS` in this interpreter and environment (plus `env`), run in
    `cwd`; a run that ends with another exit code than `exits` fails the test, with the end of
    its stderr."""
    done = subprocess.run([sys.executable, "-c", code, *map(str, args)], cwd=cwd,
                          env=None if env is None else {**os.environ, **env},
                          capture_output=True, text=True, check=False)
    assert done.returncode == exits, done.stderr[-2000:]
    return done.stdout


def entry_then_imported(*modules: str) -> str:
    """Python code that runs gjk's entry as the `gjk` script calls it, with the arguments after
    the code, then prints whether this process imported each of `modules` itself (a reader's
    library that a process forked at the command's start should import instead), on one line."""
    return ("import sys\n"
            "from gjkcli.__main__ import run\n"
            "sys.argv = ['gjk', *sys.argv[1:]]\n"
            "try:\n"
            "    run()\n"
            "except SystemExit:\n"
            "    pass\n"
            f"print(*(m in sys.modules for m in {modules!r}))\n")


def wait_gone(pid: int, what: str, within: float = 5.0) -> None:
    """Wait up to `within` s for process `pid` to end (a zombie, ended and left to whoever reaps
    it, counts as ended); else kill it and fail the test, saying `what` outlived its command."""
    import signal
    import time

    import pytest

    waited = time.monotonic() + within
    while time.monotonic() < waited:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        if _zombie(pid):
            return
        time.sleep(0.02)
    os.kill(pid, signal.SIGKILL)
    pytest.fail(f"{what} outlived its command")


def _zombie(pid: int) -> bool:
    """Whether process `pid` has ended and waits to be reaped (Linux's /proc; False elsewhere)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return False
