"""The lean install: each kind of input or output beyond meshes needs an extra, and a run that needs
one that is missing says which, in one line, exit 2.

The missing library is made missing for real: each case runs `gjk` in a fresh Python whose import
system refuses that library's modules (as on a machine where the extra was never installed), not
a mock inside gjk.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from fresh import python_c

from gjkcli import extras

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

# Runs gjk with the top-level modules named in argv[1] (comma-separated) not installed: a None in
# sys.modules is what the import system reads as "not there" (`import` raises
# ModuleNotFoundError, importlib.util.find_spec answers None, as trimesh's probes ask).
_WITHOUT = """
import sys
for name in sys.argv[1].split(","):
    sys.modules[name] = None
sys.argv = ["gjk", *sys.argv[2:]]
from gjkcli.__main__ import run
run()
"""


def gjk_without(modules, *args, cwd):
    return subprocess.run([sys.executable, "-c", _WITHOUT, ",".join(modules), *map(str, args)],
                          capture_output=True, text=True, cwd=cwd, timeout=120)


def optional_dependencies() -> dict:
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["project"]["optional-dependencies"]


def test_every_extra_named_in_messages_is_declared_and_all_and_test_bring_them():
    declared = optional_dependencies()
    named = {e.name for e in extras.EXTRAS.values()}
    assert named <= set(declared), named - set(declared)
    assert declared["all"] == [f"gjk[{','.join(sorted(named, key=list(declared).index))}]"]
    assert "gjk[all]" in declared["test"]


def test_the_core_install_holds_no_extra_library():
    with open(ROOT / "pyproject.toml", "rb") as f:
        core = " ".join(tomllib.load(f)["project"]["dependencies"]).lower()
    for package in ("ocp", "ifcopenshell", "pycollada", "ezdxf", "svgelements", "plotly",
                    "matplotlib", "dask", "distributed"):
        assert package not in core, package


@pytest.mark.parametrize("name, content, modules, says", [
    ("part.step", "ISO-10303-21;\n", ["OCP"], 'reading STEP needs OpenCASCADE: pip install "gjk[cad]"'),
    ("model.ifc", "ISO-10303-21;\n", ["ifcopenshell"],
     'reading IFC needs IfcOpenShell: pip install "gjk[bim]"'),
    ("link.dae", "<COLLADA/>\n", ["collada"], 'needs pycollada: pip install "gjk[robots]"'),
    ("plate.dxf", "0\nEOF\n", ["ezdxf"], 'reading DXF needs ezdxf: pip install "gjk[flat]"'),
    ("plate.svg", "<svg/>\n", ["svgelements"],
     'reading SVG needs svgelements: pip install "gjk[flat]"'),
])
def test_a_file_whose_extra_is_missing_is_one_line_naming_the_extra(tmp_path, name, content, modules, says):
    path = tmp_path / name
    path.write_text(content)
    other = tmp_path / f"other{path.suffix}"
    other.write_text(content)
    done = gjk_without(modules, "check", name, other.name, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert any(line.startswith(f"gjk: error: {name}: ") and says in line for line in lines), lines
    assert "Traceback" not in done.stderr and "ModuleNotFoundError" not in done.stderr


@pytest.mark.parametrize("option, target, modules, says", [
    ("--html", "page.html", ["plotly"], 'writing the HTML page needs plotly: pip install "gjk[pictures]"'),
    ("--png", "pair.png", ["matplotlib"], 'drawing PNG pictures needs matplotlib: pip install "gjk[pictures]"'),
])
def test_a_picture_whose_extra_is_missing_fails_before_the_run(tmp_path, option, target, modules, says):
    done = gjk_without(modules, "check", SAMPLES / "touch_a.stl", SAMPLES / "touch_b.stl",
                       option, target, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == f"gjk: error: {target}: {says}"
    assert done.stdout == ""  # no verdict printed: the run never started
    assert not (tmp_path / target).exists()


def test_meshes_are_checked_with_every_extra_missing(tmp_path):
    hidden = sorted({m for e in extras.EXTRAS.values() for m in e.modules})
    done = gjk_without(hidden, "check", SAMPLES / "pocket_box.stl", SAMPLES / "pocket_cube.stl",
                       cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "CLEAR" in done.stdout


def test_require_passes_an_installed_extra_and_names_a_missing_one(monkeypatch):
    extras.require("html", "page.html", "writing the HTML page")  # plotly is a test dependency
    monkeypatch.setitem(sys.modules, "plotly", None)
    with pytest.raises(Exception) as caught:
        extras.require("html", "page.html", "writing the HTML page")
    assert str(caught.value) == 'page.html: writing the HTML page needs plotly: pip install "gjk[pictures]"'


# The command's process imports OpenCASCADE with the collector paused, and freezes what the import
# made; the collector runs again after it. Measured in a fresh process, whose gc.callbacks count
# the collections during the import.
_PAUSED = """
import gc, json, sys
from gjkcli import extras
from gjkcli.mesh import cad
extras.freeze_imports = sys.argv[1] == "freeze"
ran = []
gc.callbacks.append(lambda phase, info: ran.append(phase) if phase == "start" else None)
ok = cad.available()
print(json.dumps({"ok": ok, "collections": len(ran), "frozen": gc.get_freeze_count(),
                  "enabled": gc.isenabled()}))
"""


@pytest.mark.parametrize("mode", ["freeze", "pause"])
def test_opencascade_is_imported_with_the_collector_paused(mode):
    pytest.importorskip("OCP", reason="needs the cad extra (cadquery-ocp-novtk)")
    import json

    got = json.loads(python_c(_PAUSED, mode))
    assert got["ok"] and got["enabled"]
    # some 270 collections with the collector on through the import
    if mode == "freeze":
        assert got["collections"] == 0
        assert got["frozen"] > 50_000  # OpenCASCADE's classes, never walked again
    else:
        assert got["collections"] < 5  # the resumed collector's first passes
        assert got["frozen"] == 0  # a library's caller keeps its collector as it was


def test_binding_import_restores_the_collector_and_the_binding_as_they_were():
    import gc
    import os

    flags = sys.getdlopenflags()
    assert gc.isenabled()
    with extras.binding_import():
        assert not gc.isenabled()
        assert sys.getdlopenflags() & os.RTLD_LAZY and not sys.getdlopenflags() & os.RTLD_NOW
    assert gc.isenabled()
    assert sys.getdlopenflags() == flags
    gc.disable()
    try:
        with extras.binding_import():
            pass
        assert not gc.isenabled()  # off before, off after
    finally:
        gc.enable()
    assert gc.get_freeze_count() == 0  # freezing is the command's choice, not a test process's


# What the dynamic linker is asked for as OpenCASCADE's extension module is opened: a finder
# ahead of Python's own notes sys.getdlopenflags() when OCP.OCP is looked for, and finds nothing.
_BINDING = """
import json, os, sys
from gjkcli.mesh import cad
seen = []
class Note:
    def find_spec(self, name, path=None, target=None):
        if name == "OCP.OCP":
            seen.append(sys.getdlopenflags())
sys.meta_path.insert(0, Note())
ok = cad.available()
print(json.dumps({"ok": ok, "seen": seen, "after": sys.getdlopenflags(),
                  "lazy": os.RTLD_LAZY, "now": os.RTLD_NOW}))
"""


def test_opencascade_s_libraries_are_bound_lazily_as_they_load():
    pytest.importorskip("OCP", reason="needs the cad extra (cadquery-ocp-novtk)")
    import json

    got = json.loads(python_c(_BINDING))
    assert got["ok"] and len(got["seen"]) == 1
    assert got["seen"][0] & got["lazy"] and not got["seen"][0] & got["now"]
    assert got["after"] & got["now"]  # Python's own again for what is imported later


def test_a_manifest_select_without_ifcopenshell_names_the_extra_as_every_message_does(tmp_path):
    (tmp_path / "cell.toml").write_text('[[group]]\nname = "walls"\nselect = "IfcWall"\n')
    (tmp_path / "a.stl").write_bytes((SAMPLES / "touch_a.stl").read_bytes())
    done = gjk_without(["ifcopenshell"], "scan", "a.stl", "--manifest", "cell.toml", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == ('gjk: error: cell.toml:3: [[group]] 1 (\'walls\'): a group with select '
                                   'needs IfcOpenShell: pip install "gjk[bim]"'), done.stderr
