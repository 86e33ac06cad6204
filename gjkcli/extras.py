"""The optional parts of gjk's install: which extra brings which library, and the one line a user
reads when a file or option needs an extra that is not installed.

`pip install gjk` reads meshes and scenes (STL, OBJ, PLY, OFF, glTF/GLB, 3MF, archives) and writes
every text report. The rest comes with an extra, as trimesh keeps its own readers in extras:

    gjk[cad]       STEP assemblies, through OpenCASCADE (OCP)
    gjk[bim]       IFC models and BCF topics, through IfcOpenShell
    gjk[robots]    URDF links whose meshes are COLLADA (.dae), through pycollada
    gjk[flat]      2D drawings: SVG through svgelements, DXF through ezdxf
    gjk[pictures]  --html (plotly) and --png (matplotlib)
    gjk[dask]      gjk scan --dask
    gjk[all]       every one of them

The names here are the ones in pyproject.toml's [project.optional-dependencies]
(tests/test_extras.py holds the two together).
"""
from __future__ import annotations

import gc
import importlib
import os
import sys
from contextlib import contextmanager
from dataclasses import dataclass

from gjkcli.errors import InputError

__all__ = ["Extra", "EXTRAS", "require", "missing", "message", "binding_import"]


@dataclass(frozen=True)
class Extra:
    """One extra: its name in `pip install "gjk[NAME]"`, the modules it brings (each imported by
    the code that needs it) and the library a user knows it by."""

    name: str
    modules: tuple
    library: str


EXTRAS = {
    "cad": Extra("cad", ("OCP",), "OpenCASCADE"),
    "bim": Extra("bim", ("ifcopenshell",), "IfcOpenShell"),
    "robots": Extra("robots", ("collada",), "pycollada"),
    "svg": Extra("flat", ("svgelements",), "svgelements"),
    "dxf": Extra("flat", ("ezdxf",), "ezdxf"),
    "arrangement": Extra("flat", ("shapely",), "shapely"),
    "html": Extra("pictures", ("plotly",), "plotly"),
    "png": Extra("pictures", ("matplotlib",), "matplotlib"),
    "dask": Extra("dask", ("dask", "distributed"), "dask.distributed"),
}


def message(what: str, key: str) -> str:
    """The words after the file's name: `reading STEP needs OpenCASCADE: pip install "gjk[cad]"`."""
    extra = EXTRAS[key]
    return f'{what} needs {extra.library}: pip install "gjk[{extra.name}]"'


def missing(key: str, exc: BaseException) -> bool:
    """Whether `exc` (raised by an import) says that a module of extra `key` is not installed, as
    opposed to installed but broken (a missing system library, say)."""
    name = getattr(exc, "name", None) or ""
    return isinstance(exc, ModuleNotFoundError) and name.split(".")[0] in EXTRAS[key].modules


# Whether `binding_import` freezes what the import made (gc.freeze), and a poses run the findings
# it made (`gjkcli.pipeline.poses`): the command's process sets it (`gjkcli.__main__`). There the
# imported modules' objects live until the process ends, and the findings until the report is
# written; frozen, the collector never walks them again; a library's caller keeps its collector
# as it was
# (frozen objects are still freed when nothing refers to them, but never as cycles).
freeze_imports = False


@contextmanager
def binding_import():
    """For importing a large compiled binding (OpenCASCADE's OCP, IfcOpenShell): within the
    block, Python's cyclic garbage collector is off and shared libraries are opened with lazy
    symbol binding; after it, both as they were.

    - The collector: OCP makes about 190,000 objects as it registers its classes, which set off
      some 270 collections, each walking all of them to free nothing: 0.12 s of a STEP scan's
      1.2 s. Resumed, the collector walks them again a few times (0.09 s) unless they are
      frozen (`freeze_imports`: 0.02 s of collections in the whole scan).
    - The binding (RTLD_LAZY instead of Python's RTLD_NOW): the dynamic linker resolves a
      function of OpenCASCADE's 60 libraries when it is first called, not all of them as the
      module loads: 78,000 symbol lookups at OCP's import instead of 135,000 (LD_DEBUG=statistics),
      the import 4% shorter (medians of 21 alternating runs). A scan then resolves about 16,000
      as it first calls them (94,600 lookups in an AP214 AS1 scan against 144,300), so a whole
      run gains less, within this machine's run-to-run noise. A library missing a function would
      fail where it is called rather than at the import; the wheels are built whole.
      LD_BIND_NOW set in the environment binds them all as before.
    """
    was = gc.isenabled()
    flags = sys.getdlopenflags() if hasattr(sys, "getdlopenflags") else None
    gc.disable()
    if flags is not None:
        sys.setdlopenflags(flags & ~os.RTLD_NOW | os.RTLD_LAZY)
    try:
        yield
    finally:
        if flags is not None:
            sys.setdlopenflags(flags)
        if freeze_imports:
            gc.freeze()
        if was:
            gc.enable()


def require(key: str, source, what: str) -> None:
    """Import extra `key`'s modules, or raise the InputError naming `source` and the extra.

    Parameters
    ----------
    key : a key of EXTRAS ("cad", "bim", "robots", "svg", "dxf", "html", "png", "dask")
    source : the file or option the user gave (the error line starts with it)
    what : what needed the extra, as the user would say it ("reading STEP", "--html")
    """
    for module in EXTRAS[key].modules:
        try:
            with binding_import():
                importlib.import_module(module)
        except ImportError as exc:
            if missing(key, exc):
                raise InputError(source, message(what, key)) from None
            raise
