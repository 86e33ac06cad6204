"""`gjk scan robot.urdf` through click's CliRunner: the options, every format, the errors' one line."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from gjkcli.cli import main


def gjk(*args, code=None):
    result = CliRunner(catch_exceptions=False).invoke(main, [str(a) for a in args])
    if code is not None:
        assert result.exit_code == code, (result.exit_code, result.stdout, result.stderr)
    return result


@pytest.fixture
def panda(panda_package):
    return panda_package / "urdf" / "panda.urdf", panda_package / "urdf" / "panda.srdf"


def test_ready_pose_with_the_srdf_passes_in_every_format(panda):
    urdf, srdf = panda
    for fmt in ("table", "json", "junit", "github", "sarif"):
        gjk("scan", urdf, "--srdf", srdf, "--joints", "ready", "--format", fmt, code=0)
    doc = json.loads(gjk("scan", urdf, "--srdf", srdf, "--joints", "ready", "--format", "json").stdout)
    assert len(doc["objects"]) == 11
    assert {o["name"] for o in doc["objects"]} >= {"panda_link0", "panda_hand", "panda_rightfinger"}


def test_default_pose_collides(panda):
    urdf, _ = panda
    out = gjk("scan", urdf, code=1).stdout
    assert "panda_link5" in out and "panda_hand" in out


def test_out_of_limits_is_one_line_exit_2(panda):
    urdf, _ = panda
    r = gjk("scan", urdf, "--joints", "panda_joint4=1.0", "--format", "json", code=2)
    assert "panda_joint4 = 1 is outside its limits [-3.1416, 0.0873]" in r.stderr
    assert "Traceback" not in r.stderr


def test_a_missing_package_names_the_path(panda_dir):
    r = gjk("scan", panda_dir / "panda.urdf", "--format", "json", code=2)
    assert "cannot find package://moveit_resources_panda_description/meshes/collision/link0.stl" in r.stderr
    assert "--package moveit_resources_panda_description=DIR" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_package_option(panda_dir, panda_package, tmp_path):
    copy = tmp_path / "panda.urdf"
    copy.write_text((panda_dir / "panda.urdf").read_text())
    gjk("scan", copy, "--package", f"moveit_resources_panda_description={panda_package}",
        "--srdf", panda_dir / "panda.srdf", "--joints", "ready", code=0)
    r = gjk("scan", copy, "--package", "nonsense", code=2)
    assert "is not NAME=DIR" in r.stderr


def test_robot_options_need_a_urdf(tmp_path):
    import trimesh

    stl = tmp_path / "a.stl"
    trimesh.creation.box([1, 1, 1]).export(stl)
    r = gjk("scan", stl, "--joints", "a=1", code=2)
    assert "apply to URDF inputs" in r.stderr
