"""The examples in the API's docstrings run, and give what they show."""
from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["gjkcli.api.manager", "gjkcli.engine.query"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    failed, attempted = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert attempted > 0, f"{name} has no examples"
    assert failed == 0


def test_the_manager_is_served_lazily_from_the_package(tmp_path):
    import subprocess
    import sys

    code = ("import sys, gjkcli; assert 'gjkcli.api.manager' not in sys.modules; "
            "from gjkcli import CollisionManager; assert 'gjkcli.api.manager' in sys.modules; "
            "print(CollisionManager.__module__)")
    # from a neutral folder: a checkout's uncompiled sources must not shadow the install
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "gjkcli.api.manager"
    import gjkcli

    with pytest.raises(AttributeError):
        gjkcli.NoSuchThing  # noqa: B018
