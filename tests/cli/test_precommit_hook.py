"""The pre-commit hook (.pre-commit-hooks.yaml): it runs the installed `gjk scan` on the staged
scene and mesh files, and fails when the scan exits 1 (a violation) or 2 (a file it cannot read).

The manifest is read with PyYAML and checked with pre-commit's own loader and file filter (both
in the `test` extra); a missing one fails the test with what to install, it is not skipped.
"""
from __future__ import annotations

import importlib
import importlib.metadata
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples"
HOOKS = ROOT / ".pre-commit-hooks.yaml"


def _need(module: str, why: str):
    try:
        return importlib.import_module(module)
    except ImportError as e:
        pytest.fail(f"{module} is not installed ({e}); it is needed {why}: install the test extra: "
                    f"pip install -e '.[test]'", pytrace=False)


def _gjk() -> str:
    """The installed console script (the venv's, when the tests run from one)."""
    script = shutil.which("gjk", path=str(Path(sys.executable).parent)) or shutil.which("gjk")
    assert script, "the gjk console script is not installed: pip install -e ."
    return script


SCENES = ["parts/A.STL", "scene.glb", "cell.gltf", "a.stl", "deep/dir/x.obj", "b.PLY", "c.off", "d.3mf",
          "e.3DXML", "f.dae", "g.Dae"]
OTHERS = ["README.md", "stl.txt", "notes.stl.md", "model.glb.bak", "pyproject.toml", "x.stlx", "offset.py",
          "manifest.toml"]


@pytest.fixture(scope="module")
def hook() -> dict:
    yaml = _need("yaml", "to read .pre-commit-hooks.yaml")
    hooks = yaml.safe_load(HOOKS.read_text("utf-8"))
    assert isinstance(hooks, list) and [h["id"] for h in hooks] == ["gjk-scan"]
    return hooks[0]


def test_hook_manifest_is_valid_for_pre_commit():
    clientlib = _need("pre_commit.clientlib", "to validate .pre-commit-hooks.yaml as pre-commit does")
    [h] = clientlib.load_manifest(str(HOOKS))  # raises InvalidManifestError on a bad manifest
    assert h["id"] == "gjk-scan" and h["name"] == "gjk scan"


def test_hook_runs_gjk_scan_on_the_files_it_is_given(hook):
    assert hook["name"] == "gjk scan"
    assert hook["language"] == "python"
    assert hook["entry"].split() == ["gjk", "scan"]
    assert hook["pass_filenames"] is True
    assert hook["require_serial"] is True  # one call: pairs across all the changed files
    assert hook.get("always_run", False) is False and not hook.get("args")


def test_hook_selects_scene_and_mesh_files_in_any_case(hook):
    run = _need("pre_commit.commands.run", "to select files as pre-commit does")
    include, exclude = hook["files"], hook.get("exclude", "^$")
    assert list(run.filter_by_include_exclude(SCENES, include, exclude)) == SCENES
    assert list(run.filter_by_include_exclude(OTHERS, include, exclude)) == []
    assert re.search(include, "parts/A.STL") and re.search(include, "scene.glb")
    assert not re.search(include, "README.md")


def test_hook_entry_is_the_installed_console_script():
    try:
        import tomllib
    except ImportError:  # Python 3.10
        tomllib = _need("tomli", "to read pyproject.toml on Python 3.10")
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]["scripts"]["gjk"]
    [ep] = [e for e in importlib.metadata.entry_points(group="console_scripts") if e.name == "gjk"]
    assert ep.value == declared, "the installed gjk script is stale: pip install -e ."
    assert callable(ep.load())
    script = _gjk()
    out = subprocess.run([script, "scan", "--help"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "FILE..." in out.stdout


def test_hook_fails_on_a_violation_or_a_bad_file_as_pre_commit_runs_it(hook, tmp_path):
    """What pre-commit does: the entry with the matching files appended; non-zero fails the hook."""
    script = _gjk()
    entry = [script, *hook["entry"].split()[1:]]

    def run(*files) -> int:
        return subprocess.run([*entry, *map(str, files)], capture_output=True, text=True, timeout=300).returncode

    assert run(SAMPLES / "clear_a.stl", SAMPLES / "clear_b.stl") == 0
    assert run(SAMPLES / "collide_a.stl", SAMPLES / "collide_b.stl") == 1
    bad = tmp_path / "bad.stl"
    bad.write_text("solid nothing\nendsolid nothing\n")
    assert run(bad, SAMPLES / "clear_a.stl") == 2
