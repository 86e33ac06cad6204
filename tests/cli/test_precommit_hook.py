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
    assert isinstance(hooks, list) and [h["id"] for h in hooks] == ["gjk-scan", "gjk-scan-assembly"]
    return hooks[0]


@pytest.fixture(scope="module")
def assembly_hook() -> dict:
    yaml = _need("yaml", "to read .pre-commit-hooks.yaml")
    return yaml.safe_load(HOOKS.read_text("utf-8"))[1]


def test_hook_manifest_is_valid_for_pre_commit():
    clientlib = _need("pre_commit.clientlib", "to validate .pre-commit-hooks.yaml as pre-commit does")
    # raises InvalidManifestError on a bad manifest
    h, assembly = clientlib.load_manifest(str(HOOKS))
    assert h["id"] == "gjk-scan" and h["name"] == "gjk scan"
    assert assembly["id"] == "gjk-scan-assembly" and assembly["pass_filenames"] is False


def test_hook_runs_gjk_scan_on_the_files_it_is_given(hook):
    assert hook["name"] == "gjk scan"
    assert hook["language"] == "python"
    assert hook["entry"].split() == ["gjk", "scan"]
    assert hook["pass_filenames"] is True
    assert hook["require_serial"] is True  # one call: settings asking `together` see every file
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

    import trimesh

    assert run(SAMPLES / "clear_a.stl", SAMPLES / "clear_b.stl") == 0
    # a violation within one file: a scene whose two parts overlap
    scene = trimesh.Scene()
    scene.add_geometry(trimesh.creation.box((1, 1, 1)), node_name="base")
    scene.add_geometry(trimesh.creation.box((1, 1, 1)), node_name="lid",
                       transform=trimesh.transformations.translation_matrix((0.5, 0, 0)))
    scene.export(tmp_path / "cell.glb")
    assert run(tmp_path / "cell.glb", SAMPLES / "clear_a.stl") == 1
    bad = tmp_path / "bad.stl"
    bad.write_text("solid nothing\nendsolid nothing\n")
    assert run(bad, SAMPLES / "clear_a.stl") == 2


def _origin_parts(folder: Path) -> list[Path]:
    """Two unrelated parts, each modelled at the origin (a cube and a smaller one inside it)."""
    import trimesh

    parts = []
    for name, size in (("bracket.stl", 2.0), ("knob.stl", 1.0)):
        trimesh.creation.box((size, size, size)).export(folder / name)
        parts.append(folder / name)
    return parts


def test_two_staged_parts_at_the_origin_pass_each_by_itself(hook, tmp_path):
    """Committing two parts that share no world: each is checked by itself, so the hook passes;
    the same two files scanned --together collide (the test can fail)."""
    entry = [_gjk(), *hook["entry"].split()[1:]]
    staged = [p.name for p in _origin_parts(tmp_path)]
    run = _need("pre_commit.commands.run", "to select files as pre-commit does")
    assert list(run.filter_by_include_exclude(staged, hook["files"], "^$")) == staged
    done = subprocess.run([*entry, *staged], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "each file by itself" in done.stdout
    together = subprocess.run([*entry, "--together", *staged], capture_output=True, text=True,
                              timeout=300, cwd=tmp_path)
    assert together.returncode == 1, together.stdout + together.stderr


def test_the_assembly_hook_scans_the_assembly_its_settings_name(assembly_hook, tmp_path):
    """The assembly hook passes no file names: `gjk scan` scans what gjk.toml names, as one world
    (the parts placed by [[include]]), and fails when they collide there."""
    entry = [_gjk(), *assembly_hook["entry"].split()[1:]]
    assert assembly_hook["pass_filenames"] is False
    _origin_parts(tmp_path)
    settings = tmp_path / "gjk.toml"
    settings.write_text('[[include]]\nfile = "bracket.stl"\n\n[[include]]\nfile = "knob.stl"\n')
    run = _need("pre_commit.commands.run", "to select files as pre-commit does")
    assert list(run.filter_by_include_exclude(["gjk.toml", "knob.stl"], assembly_hook["files"], "^$")) \
        == ["gjk.toml", "knob.stl"]
    done = subprocess.run(entry, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "collision" in done.stdout and "settings: gjk.toml" in done.stdout
    # the knob moved out of the bracket: the assembly passes
    settings.write_text('[[include]]\nfile = "bracket.stl"\n\n[[include]]\nfile = "knob.stl"\n'
                        'transform = [[1,0,0,5],[0,1,0,0],[0,0,1,0],[0,0,0,1]]\n')
    done = subprocess.run(entry, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
