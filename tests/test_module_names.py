"""Every name a module of gjk lists in `__all__` is one of the module's: `from module import *`
works."""
import importlib
import pkgutil

import pytest

import gjkcli

MODULES = sorted(m.name for m in pkgutil.walk_packages(gjkcli.__path__, "gjkcli.")
                 if not m.name.rsplit(".", 1)[-1].startswith("_") and m.name != "gjkcli.__main__")


@pytest.mark.parametrize("name", MODULES)
def test_every_name_in_all_is_the_modules(name):
    try:
        module = importlib.import_module(name)
    except ImportError as exc:  # an extra this install lacks (the core install's CI run has them all)
        pytest.skip(f"{name} needs {exc.name}, not installed")
    listed = getattr(module, "__all__", ())
    assert [n for n in listed if not hasattr(module, n)] == []
    assert len(set(listed)) == len(listed)
