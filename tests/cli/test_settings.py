"""gjk's settings, found as ruff finds its own (gjkcli.config): `[tool.gjk]` in a pyproject.toml
or a gjk.toml, the nearest from the working folder up; the command line overrides them; --config
FILE reads another, --isolated none; a bad one is one line naming the file, exit 2. And each file
is its own world unless --together (or a manifest, or settings naming a scene) says otherwise."""
from __future__ import annotations

import json

import pytest
import trimesh
from click.testing import CliRunner

from gjkcli.cli import main


def gjk(*args, cwd=None, monkeypatch=None):
    if cwd is not None:
        monkeypatch.chdir(cwd)
    r = CliRunner(catch_exceptions=False).invoke(main, [*map(str, args)])
    return r.exit_code, r.stdout, r.stderr


def scan_json(*args, cwd, monkeypatch):
    code, out, err = gjk("scan", *args, "--format", "json", cwd=cwd, monkeypatch=monkeypatch)
    return code, (json.loads(out) if out else None), err


def box(path, x: float = 0.0, size: float = 1.0):
    trimesh.creation.box([size] * 3, transform=trimesh.transformations.translation_matrix([x, 0, 0])).export(path)


@pytest.fixture
def project(tmp_path):
    """project/ with two unit cubes 0.3 apart (a.stl at 0, b.stl at 1.3) and a subfolder."""
    root = tmp_path / "project"
    (root / "parts").mkdir(parents=True)
    (root / "deep" / "er").mkdir(parents=True)
    box(root / "parts" / "a.stl", 0.0)
    box(root / "parts" / "b.stl", 1.3)
    return root


# -- found from a subfolder, overridden by options -------------------------------------------------


def test_pyproject_tool_gjk_is_found_from_a_subfolder_and_options_override_it(project, monkeypatch):
    (project / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.gjk]\nfiles = ["parts"]\ntogether = true\nclearance = 0.5\n'
        '[tool.other]\nx = 1\n')
    code, doc, err = scan_json(cwd=project / "deep" / "er", monkeypatch=monkeypatch)
    assert code == 1, err  # 0.3 apart, 0.5 required
    assert doc["notes"][0] == "settings: ../../pyproject.toml"
    assert doc["run"]["clearance"] == 0.5 and doc["run"]["together"] is True
    [pair] = doc["pairs"]
    assert pair["status"] == "clearance" and pair["distance"] == pytest.approx(0.3)
    # the command line wins over the settings
    code, doc, err = scan_json("--clearance", "0.1", cwd=project / "deep" / "er", monkeypatch=monkeypatch)
    assert code == 0 and doc["run"]["clearance"] == 0.1, err
    # and a length with a unit in the settings (the parts state none: an input error)
    (project / "pyproject.toml").write_text('[tool.gjk]\nfiles = ["parts"]\nclearance = "0.5 mm"\n')
    code, _, err = scan_json(cwd=project / "deep", monkeypatch=monkeypatch)
    assert err.strip() == ("gjk: error: ../pyproject.toml: clearance 0.5mm: 0.5mm has a unit, and the inputs "
                           "state none gjk knows (no unit): give the number without a unit, in the "
                           "model's units, or declare the unit of inputs that state none (--units mm)"), err
    assert code == 2
    code, _, err = scan_json("--clearance", "0.5mm", cwd=project / "deep", monkeypatch=monkeypatch)
    assert code == 2 and err.startswith("gjk: error: --clearance 0.5mm: "), err  # typed: named as typed


def test_gjk_toml_nearest_first_and_a_pyproject_without_tool_gjk_is_passed_over(project, monkeypatch):
    (project / "gjk.toml").write_text('files = ["parts"]\ntogether = true\nclearance = 0.5\n')
    (project / "deep" / "pyproject.toml").write_text('[project]\nname = "x"\n')  # no [tool.gjk]
    code, doc, err = scan_json(cwd=project / "deep" / "er", monkeypatch=monkeypatch)
    assert code == 1 and doc["notes"][0] == "settings: ../../gjk.toml", err
    # a nearer gjk.toml wins; in one folder gjk.toml before pyproject.toml
    (project / "deep" / "gjk.toml").write_text('files = ["../parts"]\ntogether = true\nclearance = 0.2\n')
    (project / "deep" / "pyproject.toml").write_text('[tool.gjk]\nclearance = 9\n')
    code, doc, err = scan_json(cwd=project / "deep" / "er", monkeypatch=monkeypatch)
    assert code == 0 and doc["notes"][0] == "settings: ../gjk.toml" and doc["run"]["clearance"] == 0.2, err


def test_settings_give_check_its_defaults_too(project, monkeypatch):
    (project / "gjk.toml").write_text("clearance = 0.5\n")
    code, out, err = gjk("check", "parts/a.stl", "parts/b.stl", cwd=project, monkeypatch=monkeypatch)
    assert code == 1, out + err
    code, out, err = gjk("check", "parts/a.stl", "parts/b.stl", "--isolated", cwd=project, monkeypatch=monkeypatch)
    assert code == 0, out + err


def test_isolated_ignores_the_settings_and_config_names_a_file(project, monkeypatch):
    (project / "gjk.toml").write_text('files = ["parts"]\ntogether = true\nclearance = 0.5\n')
    code, doc, err = scan_json("--isolated", "parts", "--together", cwd=project, monkeypatch=monkeypatch)
    assert code == 0 and doc["run"]["clearance"] is None, err
    assert not any(n.startswith("settings") for n in doc["notes"])
    code, _, err = gjk("scan", "--isolated", cwd=project, monkeypatch=monkeypatch)
    assert code == 2 and "give scene files" in err  # nothing named: the settings are not read
    other = project / "deep" / "strict.toml"
    other.write_text('files = ["../parts"]\ntogether = true\nclearance = 0.35\n')
    code, doc, err = scan_json("--config", other, cwd=project, monkeypatch=monkeypatch)
    assert code == 1 and doc["run"]["clearance"] == 0.35 and doc["notes"][0] == "settings: deep/strict.toml", err
    code, _, err = gjk("scan", "--config", other, "--isolated", cwd=project, monkeypatch=monkeypatch)
    assert code == 2 and "not both" in err


@pytest.mark.parametrize("name, text, says", [
    ("gjk.toml", "clearance = [\n", "gjk.toml: not valid TOML"),
    ("gjk.toml", "clearance = 1\nclearance = 2\n", "gjk.toml:2: not valid TOML"),
    ("gjk.toml", 'files = ["parts"]\ntolerence = 0.1\n', "gjk.toml:2: unknown key 'tolerence'; did you mean 'tolerance'?"),
    ("gjk.toml", "clearance = true\n", "gjk.toml:1: clearance is a number"),
    ("gjk.toml", 'mode = "fast"\n', "gjk.toml: mode: 'fast' is not one of"),
    ("gjk.toml", 'fail_on = ["collisions"]\n', "gjk.toml: fail_on: 'collisions' is not one of"),
    ("gjk.toml", 'clearance = "0.1 furlong"\n', "gjk.toml: clearance:"),
    ("gjk.toml", 'limits = {triangle = 5}\n', "gjk.toml:1: limits: 'triangle=5': use NAME=VALUE"),
    ("pyproject.toml", '[tool.gjk]\nfiles = ["parts"]\n\n[[tool.gjk.check]]\na = "x"\n',
     "pyproject.toml: [[check]] 1: the key 'b' is missing"),
])
def test_a_bad_settings_file_is_one_line_naming_it_exit_2(project, monkeypatch, name, text, says):
    (project / name).write_text(text)
    code, out, err = gjk("scan", "parts", cwd=project / "deep", monkeypatch=monkeypatch)
    assert code == 2, out + err
    [line] = err.strip().splitlines()
    assert line.startswith("gjk: error: ") and says in line, line
    assert "Traceback" not in err and out == ""
    # --help still works, and --isolated runs without it
    assert gjk("scan", "--help", cwd=project, monkeypatch=monkeypatch)[0] == 0
    assert gjk("scan", "--isolated", "parts", cwd=project, monkeypatch=monkeypatch)[0] == 0


def test_a_named_settings_file_that_is_not_there_or_has_no_table(project, monkeypatch):
    code, _, err = gjk("scan", "--config", "nope.toml", cwd=project, monkeypatch=monkeypatch)
    assert code == 2 and err.strip() == "gjk: error: nope.toml: no such settings file; check the path"
    (project / "pyproject.toml").write_text('[project]\nname = "x"\n')
    code, _, err = gjk("scan", "--config", "pyproject.toml", cwd=project, monkeypatch=monkeypatch)
    assert code == 2 and "pyproject.toml: has no [tool.gjk] table" in err


def test_settings_with_a_manifest_s_tables_are_a_scene_scanned_with_no_argument(project, monkeypatch):
    """[[include]]s place the parts (one world); a scan given files scans those and leaves the
    settings' scene out."""
    (project / "gjk.toml").write_text(
        'fail_on = ["collision", "touching"]\n\n'
        '[[include]]\nfile = "parts/a.stl"\n\n'
        '[[include]]\nfile = "parts/b.stl"\ntransform = [[1,0,0,-0.3],[0,1,0,0],[0,0,1,0],[0,0,0,1]]\n')
    box(project / "parts" / "c.stl", 0.0)
    code, doc, err = scan_json(cwd=project, monkeypatch=monkeypatch)
    assert code == 1, err  # b moved onto a: they touch
    assert doc["run"]["together"] is None and [p["status"] for p in doc["pairs"]] == ["touching"]
    code, doc, err = scan_json("parts/a.stl", "parts/c.stl", cwd=project, monkeypatch=monkeypatch)
    assert code == 0 and doc["run"]["together"] is False, err  # each by itself; no [[include]] added
    assert doc["summary"]["objects"] == 2 and doc["summary"]["pairs"] == 0


def test_a_folder_scan_never_lists_the_settings_as_left_out(project, monkeypatch):
    (project / "gjk.toml").write_text("clearance = 0.1\n")
    (project / "pyproject.toml").write_text('[project]\nname = "x"\n')
    (project / "notes.txt").write_text("x")
    code, doc, err = scan_json(".", cwd=project, monkeypatch=monkeypatch)
    assert code == 0, err
    [left] = [n for n in doc["notes"] if "left out" in n]
    assert ".toml" not in left and "1 .txt" in left


# -- each file its own world -------------------------------------------------------------------------


def test_a_folder_of_parts_at_the_origin_passes_by_default_and_fails_together(tmp_path, monkeypatch):
    folder = tmp_path / "parts"
    folder.mkdir()
    box(folder / "bracket.stl", 0.0, 2.0)
    box(folder / "knob.stl", 0.0, 1.0)
    code, out, err = gjk("scan", folder, cwd=tmp_path, monkeypatch=monkeypatch)
    assert code == 0, out + err
    assert "0 pairs checked (each file by itself; --together pairs them)" in out
    code, out, err = gjk("scan", folder, "--together", cwd=tmp_path, monkeypatch=monkeypatch)
    assert code == 1, out + err
    assert "1 pair checked (the files together): 1 collision" in out
    code, doc, _ = scan_json(folder, cwd=tmp_path, monkeypatch=monkeypatch)
    assert doc["run"]["together"] is False and doc["summary"]["pairs"] == 0
    # settings may ask for one world; --isolated goes back to each file by itself
    (tmp_path / "gjk.toml").write_text("together = true\n")
    assert gjk("scan", folder, cwd=tmp_path, monkeypatch=monkeypatch)[0] == 1
    assert gjk("scan", folder, "--isolated", cwd=tmp_path, monkeypatch=monkeypatch)[0] == 0


def test_each_file_by_itself_still_checks_the_pairs_within_a_file(tmp_path, monkeypatch):
    scene = trimesh.Scene()
    scene.add_geometry(trimesh.creation.box((1, 1, 1)), node_name="base")
    scene.add_geometry(trimesh.creation.box((1, 1, 1)), node_name="lid",
                       transform=trimesh.transformations.translation_matrix((0.5, 0, 0)))
    scene.export(tmp_path / "cell.glb")
    box(tmp_path / "other.stl", 0.0)
    code, doc, err = scan_json("cell.glb", "other.stl", cwd=tmp_path, monkeypatch=monkeypatch)
    assert code == 1, err
    [pair] = doc["pairs"]
    assert {pair["a"], pair["b"]} == {"cell.glb:base", "cell.glb:lid"}
    code, doc, err = scan_json("cell.glb", "other.stl", "--together", cwd=tmp_path, monkeypatch=monkeypatch)
    assert code == 1 and len(doc["pairs"]) == 3, err


def test_a_manifest_is_one_world(tmp_path, monkeypatch):
    box(tmp_path / "a.stl", 0.0)
    box(tmp_path / "b.stl", 0.5)
    (tmp_path / "cell.toml").write_text('[[include]]\nfile = "a.stl"\n\n[[include]]\nfile = "b.stl"\n')
    code, doc, err = scan_json("--manifest", "cell.toml", cwd=tmp_path, monkeypatch=monkeypatch)
    assert code == 1 and doc["run"]["together"] is None, err  # a manifest's scene: one world


def test_two_drawings_are_each_their_own_world(tmp_path, monkeypatch):
    ezdxf = pytest.importorskip("ezdxf")
    for name in ("one.dxf", "two.dxf"):
        doc = ezdxf.new()
        doc.modelspace().add_lwpolyline([(0, 0), (2, 0), (2, 2), (0, 2)], close=True)
        doc.saveas(tmp_path / name)
    code, out, err = gjk("scan", "one.dxf", "two.dxf", cwd=tmp_path, monkeypatch=monkeypatch)
    assert code == 0 and "each file by itself" in out, out + err
    code, out, err = gjk("scan", "one.dxf", "two.dxf", "--together", cwd=tmp_path, monkeypatch=monkeypatch)
    assert code == 1, out + err
