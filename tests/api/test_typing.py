"""The API's annotations satisfy a type checker (mypy): the manager, query and the package root's
lazy names (read through gjkcli/__init__.pyi), checked from a caller's script whose one
deliberate mistake must be the one error found."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mypy", reason="mypy is in the test extras: pip install '.[test]'")

ROOT = Path(__file__).resolve().parents[2]

CALLER = '''\
import numpy as np
from gjkcli import CollisionManager, scene_to_collision
from gjkcli.engine.query import batch, pairs, query
from gjkcli.engine.shapes import Shape

manager = CollisionManager()
manager.add_object("a", object(), np.eye(4))
hit = manager.in_collision_internal()
r = query(Shape.sphere(1.0), Shape.box([1, 1, 1]))
d: float = r.distance
rs = pairs([Shape.sphere(1.0)], [Shape.point([2, 0, 0])])
wrong: int = manager.remove_object
'''


def test_a_callers_script_and_the_api_type_check(tmp_path):
    script = tmp_path / "caller.py"
    script.write_text(CALLER)
    # run from the project root, so that mypy reads the package's sources and stubs
    out = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental", "--cache-dir", str(tmp_path / "cache"),
         "--ignore-missing-imports", "--follow-imports=silent", "--no-error-summary",
         str(script), "gjkcli/api/manager.py", "gjkcli/engine/query.py"],
        cwd=ROOT, capture_output=True, text=True, timeout=600)
    errors = [line for line in out.stdout.splitlines() if ": error:" in line]
    assert len(errors) == 1, out.stdout + out.stderr
    assert "caller.py:12:" in errors[0] and "Incompatible types in assignment" in errors[0]
