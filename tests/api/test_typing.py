"""The API's annotations satisfy a type checker (mypy): the manager, query and the package root's
lazy names (read through gjkcli/__init__.pyi), checked from a caller's script whose two
deliberate mistakes must be the two errors found: the query methods' return types follow
return_names and return_data (overloads), so that a wrong use of their tuples is an error."""
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
typed: tuple[bool, set[tuple[str, str]]] = manager.in_collision_internal(return_names=True)
hit2, pairs_hit = manager.in_collision_internal(return_names=True)
first: tuple[str, str] = next(iter(pairs_hit))
hit3, contacts = manager.in_collision_internal(return_data=True)
depth: float = contacts[0].depth
one: tuple[bool, set[str]] = manager.in_collision_single(object(), return_names=True)
far: float = manager.min_distance_single(object())
d2, (n1, n2) = manager.min_distance_other(CollisionManager(), return_names=True)
d3, data3 = manager.min_distance_internal(return_data=True)
where: float = data3.distance
other, objects = scene_to_collision(None)
moved = objects["a"].getTranslation()
also_wrong: int = manager.in_collision_internal(return_names=True)
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
    # the two deliberate mistakes, and nothing else: the overloads on return_names and
    # return_data give tuples of known types (with Any, line 25 would pass)
    assert len(errors) == 2, out.stdout + out.stderr
    assert "caller.py:12:" in errors[0] and "Incompatible types in assignment" in errors[0]
    assert "caller.py:25:" in errors[1] and "tuple[bool, set[tuple[str, str]]]" in errors[1], errors
