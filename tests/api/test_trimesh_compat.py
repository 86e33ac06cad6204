"""gjkcli.CollisionManager where programs rely on trimesh's answers.

- trimesh's own `tests/test_collision.py`, unchanged, run with gjk's class in place of trimesh's
  (`test_trimesh_suite`): it is trimesh's code, so it is not copied into this repository; point
  GJK_TRIMESH_TESTS at the `tests` folder of a trimesh checkout to run it (skipped otherwise).
  The models it loads are here (tests/data/third_party/trimesh_models, see its README) and
  `test_fcl_contact_conventions` asserts the same contact conventions on them in any case.
- distances of overlapping parts: 0.0 where either part is not convex, minus the depth where
  both are (FCL's `Convex`), as trimesh + FCL give; gjk's signed depth with `signed=True`.
- input trimesh accepts: an empty mesh, a transform holding NaN, a (3, 4) transform.
"""
from __future__ import annotations

import importlib.util
import io
import logging
import os
import sys
import types
import unittest
import warnings
from pathlib import Path

import numpy as np
import pytest

trimesh = pytest.importorskip("trimesh")
pytest.importorskip("fcl")
from trimesh import collision as tc  # noqa: E402

import gjkcli  # noqa: E402
from gjkcli import CollisionManager, scene_to_collision  # noqa: E402

MODELS = Path(__file__).resolve().parents[1] / "data" / "third_party" / "trimesh_models"


def _generic() -> types.ModuleType:
    """What trimesh's test_collision.py reads of its `generic` helper module: numpy, unittest, a
    log, a seeded `random`, `get_mesh` of its models, and a `trimesh` whose `collision` holds
    gjk's CollisionManager and scene_to_collision (trimesh's own module is left untouched)."""
    g = types.ModuleType("generic")
    g.np = np
    g.unittest = unittest
    g.log = logging.getLogger("trimesh")
    g.random = lambda *a, **k: np.random.RandomState(seed=1).random_sample(*a, **k)
    g.get_mesh = lambda name, **k: trimesh.load(MODELS / name, **k)
    g.trimesh = types.SimpleNamespace(
        creation=trimesh.creation, Scene=trimesh.Scene, util=trimesh.util,
        collision=types.SimpleNamespace(CollisionManager=gjkcli.CollisionManager,
                                        scene_to_collision=gjkcli.scene_to_collision))
    return g


def test_trimesh_suite(monkeypatch):
    folder = os.environ.get("GJK_TRIMESH_TESTS")
    if not folder:
        pytest.skip("GJK_TRIMESH_TESTS (the tests folder of a trimesh checkout) is not set")
    source = Path(folder) / "test_collision.py"
    if not source.is_file():
        pytest.skip(f"no test_collision.py in {folder}")
    monkeypatch.setitem(sys.modules, "generic", _generic())
    spec = importlib.util.spec_from_file_location("trimesh_test_collision", source)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.g.trimesh.collision.CollisionManager is gjkcli.CollisionManager
    suite = unittest.TestLoader().loadTestsFromModule(module)
    out = io.StringIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = unittest.TextTestRunner(stream=out, verbosity=2).run(suite)
    assert result.testsRun >= 5 and result.wasSuccessful(), out.getvalue()


def _moved(x, y=0.0, z=0.0):
    T = np.eye(4)
    T[:3, 3] = x, y, z
    return T


def test_fcl_contact_conventions():
    """trimesh's unit cube on itself and pressed 0.25 into another: FCL's normal (from the
    manager's object towards the probe; -x for concentric parts), FCL's point (midway between
    each part's first vertex deepest along the normal), the depth; gjk's own witnesses apart.
    Both managers asked, the same answers."""
    cube = trimesh.load(MODELS / "unit_cube.STL")
    for T, point, normal, depth in ((_moved(5.0), [5.0, -0.5, 0.5], [-1.0, 0.0, 0.0], 1.0),
                                    (_moved(5.75), [5.375, -0.5, 0.5], [1.0, 0.0, 0.0], 0.25)):
        for cls in (CollisionManager, tc.CollisionManager):
            m = cls()
            m.add_object("cube1", cube, _moved(5.0))
            hit, names, data = m.in_collision_single(cube, T, return_names=True, return_data=True)
            assert hit is True and names == {"cube1"} and len(data) == 1
            c = data[0]
            assert np.allclose(c.point, point) and np.allclose(c.normal, normal)
            assert np.isclose(c.depth, depth)
            if cls is CollisionManager and depth < 1.0:  # the witnesses: depth apart along the normal
                gap = c.witness("cube1") - c.witness("__external")
                assert np.isclose(float(gap @ c.normal), depth)


def test_trimesh_scene_model():
    scene = trimesh.load(MODELS / "cycloidal.3DXML")
    ours, objects = scene_to_collision(scene)
    theirs, _ = tc.scene_to_collision(scene)
    assert set(objects) == set(scene.graph.nodes_geometry)
    got, want = ours.in_collision_internal(return_names=True), theirs.in_collision_internal(return_names=True)
    assert got[0] is True and want[0] is True
    # gjk finds every pair FCL finds (it may find more: a part inside another)
    assert want[1] <= got[1], (want[1] - got[1])


def _ring():
    return trimesh.creation.annulus(r_min=0.5, r_max=1.0, height=0.4)


def _distances(query, part, at, classes):
    """{name: (distance, names)} of min_distance_`query` between the ring and `part` at `at`."""
    want = {}
    for name, cls in classes.items():
        m = cls()
        m.add_object("ring", _ring())
        if query == "single":
            want[name] = m.min_distance_single(part, at, return_name=True)
        elif query == "internal":
            m.add_object("part", part, at)
            want[name] = m.min_distance_internal(return_names=True)
        else:
            n = cls()
            n.add_object("part", part, at)
            want[name] = m.min_distance_other(n, return_names=True)
    return want


@pytest.mark.parametrize("query", ["single", "internal", "other"])
def test_overlapping_meshes_have_distance_zero_and_depth_on_request(query):
    """A ring (not convex) overlapped by a small ring and by a box, and two convex parts
    overlapping: each min_distance_* gives 0.0 for the ring's overlaps and minus the depth for
    the convex pair, as trimesh + FCL do; signed=True gives minus the depth for all."""
    classes = {"ours": CollisionManager, "signed": lambda: CollisionManager(signed=True),
               "trimesh": tc.CollisionManager}
    at = _moved(0.75, 0.0, 0.1)
    # two meshes neither convex, their bodies crossing: FCL's triangles give 0.0
    small = trimesh.creation.annulus(r_min=0.05, r_max=0.15, height=0.3)
    want = _distances(query, small, at, classes)
    assert want["ours"] == want["trimesh"] and want["ours"][0] == 0.0
    assert want["signed"][0] < 0.0 and want["signed"][1] == want["ours"][1]
    # a box in the ring's body, its top 0.05 above the ring's top: 0.0; signed, minus a depth:
    # its corner nearest the hole lies 0.12 inside the ring's inner wall (FCL, a convex box
    # against the ring's triangles, gives minus the depth of one triangle in the box, 0.03 here)
    want = _distances(query, trimesh.creation.box([0.3, 0.3, 0.3]), at, classes)
    assert want["ours"][0] == 0.0 and want["ours"][1] == want["trimesh"][1] and want["trimesh"][0] <= 0.0
    corners = trimesh.transform_points(trimesh.creation.box([0.3, 0.3, 0.3]).vertices, at)
    deepest = trimesh.proximity.signed_distance(_ring(), corners).max()  # positive inside
    assert -want["signed"][0] == pytest.approx(deepest, rel=1e-9) and want["signed"][1] == want["ours"][1]
    box = trimesh.creation.box([0.3, 0.3, 0.3])
    # two convex parts: minus the depth by default too (FCL's Convex: EPA)
    for cls in (CollisionManager, tc.CollisionManager):
        m = cls()
        m.add_object("a", box)
        m.add_object("b", box, _moved(0.2))
        assert m.min_distance_internal() == pytest.approx(-0.1, rel=1e-6)


def test_an_empty_mesh_is_kept_and_collides_with_nothing():
    sphere, empty = trimesh.creation.icosphere(radius=0.3), trimesh.Trimesh()
    ours = CollisionManager()
    with pytest.warns(UserWarning, match="without vertices"):
        obj = ours.add_object("empty", empty)
    assert obj.name == "empty"
    assert ours.in_collision_single(sphere, return_names=True) == (False, set())
    assert ours.min_distance_single(sphere, return_name=True) == (np.inf, None)
    ours.add_object("sphere", sphere, _moved(2.0))
    assert ours.in_collision_internal(return_names=True) == (False, set())
    assert ours.min_distance_internal() == np.inf
    with pytest.warns(UserWarning):
        assert ours.in_collision_single(empty) is False
    ours.remove_object("empty")
    # trimesh answers the same in_collision queries (its distance queries crash on an empty mesh)
    theirs = tc.CollisionManager()
    theirs.add_object("empty", empty)
    theirs.add_object("sphere", sphere, _moved(2.0))
    assert theirs.in_collision_single(sphere) is False
    # a scene holding an empty geometry
    scene = trimesh.Scene([sphere, empty])
    with pytest.warns(UserWarning):
        manager, objects = scene_to_collision(scene)
    want, _ = tc.scene_to_collision(scene)
    assert len(objects) == 2 and manager.in_collision_internal() is want.in_collision_internal() is False


def test_a_transform_holding_nan_answers_false():
    sphere = trimesh.creation.icosphere(radius=0.3)
    nan = np.eye(4)
    nan[0, 3] = np.nan
    for cls in (CollisionManager, tc.CollisionManager):
        m = cls()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m.add_object("lost", sphere, nan)
            assert m.in_collision_internal() is False
            if cls is CollisionManager:  # FCL: 1.8e308; a second object makes it crash
                assert m.min_distance_internal() == np.inf
                m.add_object("s", sphere)
                assert m.in_collision_internal() is False
                assert m.in_collision_single(sphere, nan) is False  # FCL crashes here
                assert m.min_distance_single(sphere, nan, return_name=True) == (np.inf, None)
                assert m.min_distance_internal("lost", return_names=True) == (np.inf, (None, None))
                m.set_transform("lost", np.eye(4))  # placed again: it answers
                assert m.in_collision_internal(return_names=True) == (True, {("lost", "s")})
                with pytest.warns(UserWarning, match="NaN"):
                    m.set_transform("lost", nan)
                assert m.in_collision_internal() is False


def test_a_3x4_transform():
    sphere = trimesh.creation.icosphere(radius=0.3)
    T = np.eye(4)[:3].copy()
    T[0, 3] = 0.5
    ours, theirs = CollisionManager(), tc.CollisionManager()
    ours.add_object("s", sphere)
    theirs.add_object("s", sphere)
    for m in (ours, theirs):  # trimesh's queries and set_transform read the top three rows
        assert m.in_collision_single(sphere, T) is True
        assert m.min_distance_single(sphere, _moved(1.0)[:3]) == pytest.approx(0.4, rel=1e-3)
        m.set_transform("s", _moved(2.0)[:3])
        assert m.in_collision_single(sphere, T) is False
    ours.add_object("t", sphere, T)  # trimesh's add_object raises here; gjk's takes it
    assert ours.min_distance_internal() == pytest.approx(0.9, rel=1e-3)
