"""gjk: collision, touching and clearance checks for 3D parts.

The Python API:

- `gjkcli.CollisionManager` and `gjkcli.scene_to_collision`: a drop-in for trimesh's
  (`gjkcli.api.manager`);
- `gjkcli.engine.query` (`query` for one pair, `batch` for many) over
  `gjkcli.engine.shapes.Shape`;
- `gjkcli.pipeline.run.check` and `scan`: the command line's runs, returning
  `gjkcli.pipeline.findings.Findings`.

The manager is imported on first use (a module `__getattr__`), so that `import gjkcli` and the
command line's start-up do not pay for it. Type checkers read `__init__.pyi`, which names them.
"""
from __future__ import annotations

__version__ = "0.1.0"

# Names served lazily, with the module that defines them.
_LAZY = {
    "CollisionManager": "gjkcli.api.manager",
    "ContactData": "gjkcli.api.manager",
    "DistanceData": "gjkcli.api.manager",
    "scene_to_collision": "gjkcli.api.manager",
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'gjkcli' has no attribute {name!r}")
    # importlib, not an import statement: the package root sits above every layer, and the
    # layers below (which read __version__ from here) must not appear to import the API. Imported
    # here, not at the top: `import gjkcli` (the command line's start) imports nothing.
    import importlib

    return getattr(importlib.import_module(module), name)


def __dir__() -> list:
    return sorted(__all__)
