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
