"""The scan manifest: every key of the contract, TOML and JSON alike, and every error with its line."""
from __future__ import annotations

import json
import textwrap
from pathlib import Path

import numpy as np
import pytest

from gjkcli.scene import manifest as mf
from gjkcli.errors import InputError
from gjkcli.scene.manifest import ManifestError

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples"
SHARED = Path(__file__).resolve().parents[3] / "shared"
needs_shared = pytest.mark.skipif(not (SHARED / "robots" / "panda").is_dir(),
                                  reason=f"the shared robot files are not at {SHARED}")


@pytest.fixture
def folder(tmp_path):
    """A manifest folder holding two tiny STL files (copies of the samples) and an SRDF."""
    for name in ("clear_a.stl", "clear_b.stl"):
        (tmp_path / name).write_bytes((SAMPLES / name).read_bytes())
    (tmp_path / "cell.srdf").write_text(textwrap.dedent("""\
        <?xml version="1.0"?>
        <robot name="cell">
          <disable_collisions link1="arm" link2="table" reason="Adjacent"/>
          <disable_collisions link1="arm" link2="gripper" reason="Never"/>
        </robot>
        """))
    return tmp_path


FULL = """\
tolerance = 0.001
clearance = 0.5
fail_on = ["collision", "touching"]
srdf = "cell.srdf"

[[include]]
file = "clear_a.stl"
transform = [[1, 0, 0, 10], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]
split_bodies = true

[[include]]
file = "clear_b.stl"

[[object]]
name = "fixture"
file = "clear_a.stl"
translate = [0, 0, 5]
rotate = [90, 0, 0]

[[object]]
name = "block"
box = [1, 2, 3]
transform = [[0, -1, 0, 1], [1, 0, 0, 2], [0, 0, 1, 3], [0, 0, 0, 1]]

[[object]]
name = "ball"
sphere = 0.25
translate = [4, 0, 0]

[[object]]
name = "pin"
capsule = { radius = 0.1, length = 2 }

[[object]]
name = "drum"
cylinder = { radius = 1, height = 0.5 }
rotate = [0, 90, 0]

[[group]]
name = "robot"
members = ["fix*", "pin"]

[[check]]
a = "robot"
b = "b*"
clearance = 2.0

[[allow]]
a = "pin"
b = "drum"
reason = "press fit"
"""


def test_every_key_of_the_contract(folder):
    path = folder / "cell.toml"
    path.write_text(FULL)
    m = mf.load(path)
    assert m.tolerance == 0.001 and m.clearance == 0.5
    assert m.fail_on == ("collision", "touching")
    assert m.srdf == folder / "cell.srdf"
    a, b = m.includes
    assert a.file == folder / "clear_a.stl" and a.split_bodies and a.line == 6
    assert np.array_equal(a.transform[:3, 3], [10, 0, 0])
    assert b.transform is None and not b.split_bodies and b.line == 11
    fixture, block, ball, pin, drum = m.objects
    assert fixture.file == folder / "clear_a.stl" and fixture.primitive is None
    assert np.allclose(fixture.transform[:3, :3] @ [0, 1, 0], [0, 0, 1])  # rx = 90: y to z
    assert np.allclose(fixture.transform[:3, 3], [0, 0, 5])
    assert block.primitive == "box" and block.params == {"extents": [1.0, 2.0, 3.0]}
    assert block.transform[0, 3] == 1 and block.line == 20
    assert ball.params == {"radius": 0.25}
    assert pin.params == {"radius": 0.1, "length": 2.0}
    assert drum.params == {"radius": 1.0, "height": 0.5}
    assert np.allclose(drum.transform[:3, :3] @ [0, 0, 1], [1, 0, 0])  # ry = 90: z to x
    assert m.groups[0].name == "robot" and m.groups[0].members == ("fix*", "pin")
    assert m.checks[0].a == "robot" and m.checks[0].b == "b*" and m.checks[0].clearance == 2.0
    allow, srdf1, srdf2 = m.allows
    assert (allow.a, allow.b, allow.reason, allow.literal) == ("pin", "drum", "press fit", False)
    assert (srdf1.a, srdf1.b, srdf1.reason, srdf1.literal) == ("arm", "table", "SRDF: Adjacent", True)
    assert srdf2.line == 4 and srdf2.source == str(folder / "cell.srdf")


def test_json_with_the_same_keys(folder):
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib

    data = tomllib.loads(FULL)
    path = folder / "cell.json"
    path.write_text(json.dumps(data, indent=2))
    t = folder / "cell.toml"
    t.write_text(FULL)
    a, b = mf.load(path), mf.load(t)
    assert (a.tolerance, a.clearance, a.fail_on, a.srdf) == (b.tolerance, b.clearance, b.fail_on, b.srdf)
    assert [o.name for o in a.objects] == [o.name for o in b.objects]
    for x, y in zip(a.objects, b.objects):
        assert x.params == y.params and np.allclose(x.transform, y.transform)
    assert [(c.a, c.b, c.clearance) for c in a.checks] == [(c.a, c.b, c.clearance) for c in b.checks]


def test_rotations_are_about_fixed_axes_x_then_y_then_z():
    R = mf.rotation_matrix([90, 90, 0])
    # fixed axes, x first: Ry(90) Rx(90); x goes to -z under Ry, y goes to z under Rx then to x
    assert np.allclose(R @ [0, 1, 0], [1, 0, 0])
    assert np.allclose(R @ [1, 0, 0], [0, 0, -1])
    assert np.allclose(mf.rotation_matrix([0, 0, 90]) @ [1, 0, 0], [0, 1, 0])
    T = mf.placement([1, 2, 3], [0, 0, 180])
    assert np.allclose(T @ [1, 0, 0, 1], [0, 2, 3, 1])


def test_a_transform_may_be_16_numbers_row_major(folder):
    path = folder / "m.toml"
    path.write_text('[[object]]\nname = "a"\nbox = [1, 1, 1]\n'
                    'transform = [1, 0, 0, 7, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]\n')
    assert mf.load(path).objects[0].transform[0, 3] == 7


def test_paths_are_relative_to_the_manifest(folder, monkeypatch, tmp_path_factory):
    sub = folder / "sub"
    sub.mkdir()
    (sub / "m.toml").write_text('[[include]]\nfile = "../clear_a.stl"\n')
    monkeypatch.chdir(tmp_path_factory.mktemp("elsewhere"))
    assert mf.load(sub / "m.toml").includes[0].file.resolve() == (folder / "clear_a.stl").resolve()


# -- errors, each with its line ---------------------------------------------------------------------

ERRORS = [
    # (manifest text, line, words the message must hold)
    ('tolerance = 0.1\nclearnce = 2\n', 2, "unknown top-level key 'clearnce'"),
    ('tolerance = "small"\n', 1, "tolerance must be a finite number"),
    ('clearance = -1\n', 1, "clearance must be >= 0"),
    ('fail_on = ["collision", "overlap"]\n', 1, "unknown finding 'overlap'"),
    ('fail_on = "collision"\n', 1, "fail_on must be a list"),
    ('srdf = "missing.srdf"\n', 1, "no such file 'missing.srdf'"),
    ('[[include]]\nfile = "nope.glb"\n', 2, "no such file 'nope.glb'"),
    ('[[include]]\nfile = "clear_a.stl"\nsplit_bodies = "yes"\n', 3, "split_bodies must be true or false"),
    ('[[include]]\ntransform = [[1,0,0,0],[0,1,0,0],[0,0,1,0],[0,0,0,1]]\n', 1, "'file' is missing"),
    ('[[include]]\nfile = "clear_a.stl"\ntransform = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]\n', 3, "4x4 matrix"),
    ('[[include]]\nfile = "clear_a.stl"\ntransform = [[1,0,0,0],[0,1,0,0],[0,0,1,0],[1,0,0,1]]\n', 3,
     "last row must be [0, 0, 0, 1]"),
    ('[[object]]\nname = "a"\nbox = [1, 1, 1]\n\n[[object]]\nname = "b"\nbox = [1, 1, 1]\ntrasform = 1\n', 8,
     "[[object]] 2 ('b'): unknown key 'trasform'"),
    ('[[object]]\nname = "a"\nbox = "big"\n', 3, "box extents must be a list of 3 numbers"),
    ('[[object]]\nname = "a"\nbox = [1, 0, 1]\n', 3, "box extents must be > 0"),
    ('[[object]]\nname = "a"\nsphere = true\n', 3, "sphere radius must be a finite number"),
    ('[[object]]\nname = "a"\ncapsule = { radius = 1 }\n', 3, "capsule must be a table with exactly the keys radius, length"),
    ('[[object]]\nname = "a"\ncylinder = { radius = 1, height = 2, h = 3 }\n', 3, "exactly the keys radius, height"),
    ('[[object]]\nname = "a"\n', 1, "neither given"),
    ('[[object]]\nname = "a"\nbox = [1, 1, 1]\nsphere = 1\n', 1, "both box and sphere given"),
    ('[[object]]\nbox = [1, 1, 1]\n', 1, "the key 'name' is missing"),
    ('[[object]]\nname = "a"\nfile = "gone.stl"\n', 3, "no such file 'gone.stl'"),
    ('[[object]]\nname = "a"\nbox = [1, 1, 1]\ntranslate = [1, 2]\n', 4, "translate must be a list of 3"),
    ('[[object]]\nname = "a"\nbox = [1, 1, 1]\nrotate = [0, 0, 90]\n'
     'transform = [[1,0,0,0],[0,1,0,0],[0,0,1,0],[0,0,0,1]]\n', 5, "not both"),
    ('[[object]]\nname = "a"\nbox = [1, 1, 1]\ntransform = [[2,0,0,0],[0,1,0,0],[0,0,1,0],[0,0,0,1]]\n', 4,
     "a primitive takes a rigid transform"),
    ('[[object]]\nname = "a"\nbox = [1, 1, 1]\n[[object]]\nname = "a"\nsphere = 1\n', 4, "the name 'a' is taken"),
    ('[[group]]\nname = "g"\n', 1, "'members' is missing"),
    ('[[group]]\nname = "g"\nmembers = []\n', 3, "members must be a non-empty list"),
    ('[[check]]\na = "x"\n', 1, "the key 'b' is missing"),
    ('[[check]]\na = "x"\nb = "y"\nclearance = "far"\n', 4, "clearance must be a finite number"),
    ('[[allow]]\na = "x"\nb = "y"\n', 1, "the key 'reason' is missing"),
    ('[[allow]]\na = "x"\nb = "y"\nreason = ""\n', 4, "'reason' must be a non-empty string"),
    ('[[allow]]\na = "x"\nb = "y"\nreason = "r"\nsrdf = "cell.srdf"\n', 5, "unknown key 'srdf'"),
    ('tolerance = 0.1\nobject = 3\n', 2, "'object' must be an array of tables"),
    ('tolerance = 0.1\n[[object]\nname = "a"\n', 2, "not valid TOML"),
    ('tolerance = 0.1\nclearance = \n', 2, "not valid TOML"),
]


@pytest.mark.parametrize("text, line, words", ERRORS, ids=[e[2][:40] for e in ERRORS])
def test_errors_name_the_manifest_and_the_line(folder, text, line, words):
    path = folder / "bad.toml"
    path.write_text(text)
    with pytest.raises(ManifestError) as info:
        mf.load(path)
    e = info.value
    assert isinstance(e, InputError)  # the command maps it to exit code 2
    assert e.line == line, (e.line, str(e))
    assert words in str(e), str(e)
    assert str(e).startswith(f"{path}:{line}: ")


def test_json_errors_have_lines(folder):
    path = folder / "bad.json"
    path.write_text('{\n  "tolerance": 0.1,\n  "clearance": 1,\n}\n')
    with pytest.raises(ManifestError, match="not valid JSON") as info:
        mf.load(path)
    assert info.value.line == 4
    path.write_text('{\n  "tolerance": 0.1,\n  "object": [\n    {"name": "a", "box": [1, 1, 1]},\n'
                    '    {"name": "b",\n     "sphere": 1,\n     "colour": "red"}\n  ]\n}\n')
    with pytest.raises(ManifestError, match="unknown key 'colour'") as info:
        mf.load(path)
    assert info.value.line == 7
    path.write_text('{"tolerance": 0.1,\n "typo": 1}\n')
    with pytest.raises(ManifestError, match="unknown top-level key 'typo'") as info:
        mf.load(path)
    assert info.value.line == 2
    path.write_text('[1, 2]\n')
    with pytest.raises(ManifestError, match="must be an object"):
        mf.load(path)


def test_missing_manifest():
    with pytest.raises(ManifestError, match="no such manifest file"):
        mf.load("/nonexistent/cell.toml")


def test_a_glob_matching_nothing_is_an_error_on_its_line(folder):
    path = folder / "m.toml"
    path.write_text('[[object]]\nname = "a"\nbox = [1, 1, 1]\n\n[[group]]\nname = "g"\nmembers = ["a", "zz*"]\n'
                    '\n[[check]]\na = "g"\nb = "a"\n\n[[allow]]\na = "a"\nb = "q?"\nreason = "r"\n')
    m = mf.load(path)
    with pytest.raises(ManifestError, match="member 'zz\\*' matches no object") as info:
        m.resolve(["a", "b"])
    assert info.value.line == 5
    path.write_text('[[check]]\na = "a"\nb = "nothing*"\n')
    with pytest.raises(ManifestError, match="neither a group nor a glob") as info:
        mf.load(path).resolve(["a", "b"])
    assert info.value.line == 1
    path.write_text('tolerance = 1\n[[allow]]\na = "a"\nb = "q?"\nreason = "r"\n')
    with pytest.raises(ManifestError, match="'q\\?'") as info:
        mf.load(path).resolve(["a", "b"])
    assert info.value.line == 2


def test_resolve_masks(folder):
    path = folder / "m.toml"
    path.write_text(FULL)
    names = ["clear_a.stl:clear_a.stl", "clear_b.stl", "fixture", "block", "ball", "pin", "drum", "arm",
             "cell.glb:table"]
    r = mf.load(path).resolve(names)
    in_a, in_b, clearance, line = r.checks[0]
    assert in_a.tolist() == [False, False, True, False, False, True, False, False, False]
    assert in_b.tolist() == [False, False, False, True, True, False, False, False, False]
    assert clearance == 2.0 and line == 43
    reasons = [a[2] for a in r.allows]
    assert reasons == ["press fit", "SRDF: Adjacent"]  # the arm-gripper pair has no gripper
    srdf_a, srdf_b = r.allows[1][0], r.allows[1][1]
    assert names[int(np.argmax(srdf_a))] == "arm" and names[int(np.argmax(srdf_b))] == "cell.glb:table"
    assert r.notes == ("SRDF links without an object (their pairs are skipped): gripper",)


def test_glob_and_exact_names_with_brackets():
    names = ["bolt[1]", "bolt[2]", "nut"]
    assert mf.match("bolt[1]", names).tolist() == [True, False, False]  # the exact name wins
    assert mf.match("bolt*", names).tolist() == [True, True, False]
    assert mf.match("n?t", names).tolist() == [False, False, True]


@needs_shared
def test_panda_srdf(tmp_path):
    path = tmp_path / "m.toml"
    path.write_text(f'srdf = "{SHARED / "robots" / "panda" / "panda.srdf"}"\n')
    m = mf.load(path)
    assert len(m.allows) == 34
    assert all(a.literal and a.reason.startswith("SRDF: ") for a in m.allows)
    assert {a.reason for a in m.allows} == {"SRDF: Adjacent", "SRDF: Never", "SRDF: Default"}
    assert (m.allows[0].a, m.allows[0].b) == ("panda_link0", "panda_link1")


def test_bad_srdf(folder):
    (folder / "bad.srdf").write_text("<robot><disable_collisions link1='a'/></robot>")
    path = folder / "m.toml"
    path.write_text('srdf = "bad.srdf"\n')
    with pytest.raises(ManifestError, match="needs link1 and link2") as info:
        mf.load(path)
    assert info.value.line == 1
    (folder / "bad.srdf").write_text("<robot><disable_collisions")
    with pytest.raises(ManifestError, match="srdf: cannot read"):
        mf.load(path)
