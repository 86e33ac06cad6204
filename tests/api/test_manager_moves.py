"""The manager as trimesh's is used: meshes changed after they were given, the returned object
moved, empty managers, meshes shared by many objects, objects moved again and again (the kept
answers must be those of a manager made anew), and distance searches that do not ask every
pair."""
from __future__ import annotations

import numpy as np
import pytest

trimesh = pytest.importorskip("trimesh")
fcl = pytest.importorskip("fcl")
from trimesh import collision as tc  # noqa: E402

from gjkcli import CollisionManager  # noqa: E402
from gjkcli.api import manager as managers  # noqa: E402
from gjkcli.pipeline.prepared import Geometry  # noqa: E402
from float32_poses import exact_pose  # noqa: E402


def _moved(x=0.0, y=0.0, z=0.0):
    T = np.eye(4)
    T[:3, 3] = x, y, z
    return T


def _part(rng, k):
    s = rng.uniform(0.4, 1.0, 3)
    return [trimesh.creation.box(2 * s), trimesh.creation.icosphere(1, radius=s[0]),
            trimesh.creation.annulus(0.5 * s[0], s[0], s[1]),  # not convex: the triangles answer
            trimesh.creation.cylinder(s[0], 2 * s[1], sections=10)][k % 4]


# -- a manager keeps its own copy ----------------------------------------------------------------

@pytest.mark.parametrize("change", ["in place", "assigned", "faces"])
def test_changing_a_mesh_after_add_object_changes_no_answer(change):
    answers = []
    for cls in (CollisionManager, tc.CollisionManager):
        a, b = trimesh.creation.box([1, 1, 1]), trimesh.creation.box([1, 1, 1])
        manager = cls()
        manager.add_object("a", a)
        manager.add_object("b", b, _moved(3.0))
        if change == "in place":
            b.vertices -= [2.5, 0.0, 0.0]  # would overlap a by 0.5
        elif change == "assigned":
            b.vertices = b.vertices * 4.0
        else:
            b.faces = b.faces[:2]
        answers.append((manager.in_collision_internal(), manager.min_distance_internal()))
    assert answers[0] == answers[1] == (False, 2.0)


def test_a_mesh_changed_and_added_again_is_the_changed_one():
    box = trimesh.creation.box([1, 1, 1])
    manager = CollisionManager()
    manager.add_object("a", box)
    first = manager.add_object("b", box, _moved(3.0))
    box.vertices -= [2.5, 0.0, 0.0]
    manager.add_object("c", box)  # the changed box: x in [-3, -2], 1.5 from a
    assert manager.min_distance_internal(return_names=True) == (pytest.approx(1.5), ("a", "c"))
    assert first.source is not manager._objs["c"].source


def test_plain_arrays_changed_in_place_are_copied_too():
    class Plain:  # a mesh whose arrays are plain ndarrays (no content hash of their own)
        def __init__(self, m):
            self.vertices, self.faces = np.array(m.vertices), np.array(m.faces)

    box = Plain(trimesh.creation.box([1, 1, 1]))
    manager = CollisionManager()
    manager.add_object("a", box)
    manager.add_object("b", box, _moved(3.0))
    box.vertices *= 10.0
    assert manager.min_distance_internal() == 2.0
    manager.add_object("c", box, _moved(0.0, 20.0))  # the changed arrays: 10 units wide
    assert manager.min_distance_internal(name="c") == pytest.approx(14.5)


# -- the object add_object returns ---------------------------------------------------------------

def test_the_returned_object_reads_and_moves_as_fcl_s():
    rng = np.random.default_rng(5)
    T = exact_pose(rng, 2.0)
    ours, theirs = CollisionManager(), tc.CollisionManager()
    got = ours.add_object("a", trimesh.creation.box(), T)
    want = theirs.add_object("a", trimesh.creation.box(), T)
    assert np.array_equal(got.getTranslation(), want.getTranslation())
    assert np.allclose(got.getRotation(), want.getRotation())
    q, q_fcl = got.getQuatRotation(), want.getQuatRotation()
    assert np.allclose(q, q_fcl) or np.allclose(q, -q_fcl)
    tf = got.getTransform()
    assert np.allclose(tf.getRotation(), want.getTransform().getRotation())
    assert np.allclose(tf.getTranslation(), want.getTransform().getTranslation())
    # setTransform moves the object in its manager, from an fcl.Transform, ours, or a matrix
    ours.add_object("b", trimesh.creation.box(), _moved(10.0))
    got.setTransform(fcl.Transform(np.eye(3), [10.0, 0.0, 0.5]))
    assert ours.in_collision_internal(return_names=True) == (True, {("a", "b")})
    assert np.array_equal(got.getTranslation(), [10.0, 0.0, 0.5])
    got.setTransform(managers.Transform(np.eye(3), [12.0, 0.0, 0.0]))
    assert ours.min_distance_internal() == pytest.approx(1.0)
    got.setTransform(_moved(10.0, 3.0))
    assert ours.min_distance_internal() == pytest.approx(2.0)
    assert np.array_equal(np.asarray(got.getTransform()), _moved(10.0, 3.0))
    # a removed object moves alone
    ours.remove_object("a")
    got.setTransform(_moved(10.0))
    assert ours.in_collision_internal() is False


def _move_through_private_entries(manager, name, T) -> None:
    """NVIDIA scene_synthesizer's `collision_manager_set_transforms` (utils.py): trimesh's
    private entry of an object, python-fcl's setters, then the broad phase's update."""
    o = manager._objs[name]["obj"]
    o.setRotation(T[:3, :3])
    o.setTranslation(T[:3, 3])
    manager._manager.update(o)


def test_objects_moved_through_trimesh_s_private_entries_as_scene_synthesizer_does():
    """scene_synthesizer reads and moves a manager's objects through `_objs[name]["obj"]`, its
    python-fcl setters and `_manager.update` (17 of its tests failed on gjk's class: not
    subscriptable). Moved so, every answer is trimesh's and the one `set_transform` gives."""
    rng = np.random.default_rng(51)
    ours, via_api, theirs = CollisionManager(), CollisionManager(), tc.CollisionManager()
    ring = trimesh.creation.annulus(r_min=0.5, r_max=1.0, height=0.4)
    for m in (ours, via_api, theirs):
        m.add_object("ring", ring)
        m.add_object("box", trimesh.creation.box([0.3, 0.3, 0.3]), _moved(5.0))
    for _ in range(6):
        T = exact_pose(rng, 1.5)
        for m in (ours, theirs):
            _move_through_private_entries(m, "box", T)
        via_api.set_transform("box", T)
        for name in ("ring", "box"):  # scene_synthesizer's collision_manager_get_transforms
            o = ours._objs[name]["obj"]
            assert np.allclose(o.getRotation(), theirs._objs[name]["obj"].getRotation())
            assert np.allclose(o.getTranslation(), theirs._objs[name]["obj"].getTranslation())
        assert np.array_equal(ours._objs["box"].transform, via_api._objs["box"].transform)
        assert ours.in_collision_internal() == via_api.in_collision_internal()
        assert ours.min_distance_internal() == via_api.min_distance_internal()
        d_fcl = theirs.min_distance_internal()
        if d_fcl > 1e-3:  # apart: the same distance as FCL's (to its float32)
            assert ours.min_distance_internal() == pytest.approx(d_fcl, abs=1e-5)
    assert isinstance(ours._objs["ring"]["geom"], Geometry)
    with pytest.raises(KeyError):
        ours._objs["ring"]["shape"]
    box = ours._objs["box"]["obj"]
    box.setQuatRotation([np.cos(0.3), 0.0, 0.0, np.sin(0.3)])  # 0.6 rad about z
    c, s = np.cos(0.6), np.sin(0.6)
    assert np.allclose(box.getRotation(), [[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    assert np.allclose(box.getQuatRotation(), [np.cos(0.3), 0.0, 0.0, np.sin(0.3)])


@pytest.mark.parametrize("seed", range(3))
def test_quaternions_are_the_rotation(seed):
    from scipy.spatial.transform import Rotation

    for R in Rotation.random(50, random_state=seed).as_matrix():
        T = np.eye(4)
        T[:3, :3] = R
        q = managers.ManagedObject("x", Geometry(np.zeros((1, 3)), np.zeros((0, 3), int)),
                                   T).getQuatRotation()
        w, x, y, z = q
        assert w >= 0 and np.allclose(Rotation.from_quat([x, y, z, w]).as_matrix(), R, atol=1e-12)


# -- empty managers ------------------------------------------------------------------------------

def test_empty_managers_answer_as_trimesh_s():
    box = trimesh.creation.box()
    for cls in (CollisionManager, tc.CollisionManager):
        empty, one = cls(), cls()
        one.add_object("a", box)
        for m in (empty, one):
            d, (a, b) = m.min_distance_other(cls(), return_names=True)
            assert (a, b) == (None, None) and d > 1e300
            d, (a, b) = cls().min_distance_other(m, return_names=True)
            assert (a, b) == (None, None) and d > 1e300
            d, names, data = cls().min_distance_other(m, return_names=True, return_data=True)
            assert None in data.names
        assert empty.in_collision_internal(return_names=True, return_data=True) == (False, set(), [])
        assert empty.in_collision_single(box, return_names=True, return_data=True) == (False, set(), [])
        assert empty.in_collision_other(one, return_names=True, return_data=True) == (False, set(), [])
        assert one.in_collision_other(empty, return_names=True) == (False, set())
        d, name, data = empty.min_distance_single(box, return_name=True, return_data=True)
        assert name is None and d > 1e300 and data.names == {None, "__external"}
    # trimesh + FCL raise here (sorting two Nones): gjk answers as its min_distance_other does
    for m in (CollisionManager(), CollisionManager()):
        d, (a, b) = m.min_distance_internal(return_names=True)
        assert d == np.inf and (a, b) == (None, None)
    one = CollisionManager()
    one.add_object("a", box)
    assert one.min_distance_internal(return_names=True) == (np.inf, (None, None))
    assert one.min_distance_internal("a", return_names=True) == (np.inf, (None, None))


# -- shared meshes -------------------------------------------------------------------------------

def test_a_mesh_added_many_times_is_prepared_once(hull_builds):
    built = hull_builds
    rng = np.random.default_rng(2)
    sphere = trimesh.creation.icosphere(2, radius=0.3 + rng.uniform(0, 1e-3))  # new content
    copy = sphere.copy()  # another mesh of the same content
    manager = CollisionManager()
    for k in range(200):
        manager.add_object(f"s{k}", sphere if k % 2 else copy, exact_pose(rng, 6.0))
    manager.in_collision_internal()
    assert sum(built) == 1, built  # one hull for all 200 objects
    objs = list(manager._objs.values())
    assert len({id(o.geometry) for o in objs}) == 1 and len({id(o.geometry.mesh()) for o in objs}) == 1


# -- moves: the kept answers are those of a manager made anew ------------------------------------

@pytest.mark.parametrize("seed", range(3))
def test_moved_objects_answer_as_a_new_manager(seed):
    rng = np.random.default_rng(seed)
    n, box = 30, 3.0
    meshes = [_part(rng, k) for k in range(n)]
    poses = [exact_pose(rng, box) for _ in range(n)]
    moving = CollisionManager()
    for k in range(n):
        moving.add_object(f"p{k:02d}", meshes[k], poses[k])
    moving.in_collision_internal()
    moving.min_distance_internal()
    colliding = 0
    for step in range(25):
        for k in rng.choice(n, int(rng.integers(1, 4)), replace=False).tolist():
            poses[k] = exact_pose(rng, box)
            moving.set_transform(f"p{k:02d}", poses[k])
        anew = CollisionManager()
        for k in range(n):
            anew.add_object(f"p{k:02d}", meshes[k], poses[k])
        got = moving.in_collision_internal(return_names=True)
        assert got == anew.in_collision_internal(return_names=True)
        assert moving.min_distance_internal(return_names=True) == anew.min_distance_internal(return_names=True)
        name = f"p{int(rng.integers(n)):02d}"
        assert moving.min_distance_internal(name, return_names=True) == anew.min_distance_internal(name, return_names=True)
        _, data = moving.in_collision_internal(return_data=True)
        _, fresh = anew.in_collision_internal(return_data=True)
        assert sorted((c.pair, c.depth) for c in data) == sorted((c.pair, c.depth) for c in fresh)
        colliding += got[0]
    assert 5 <= colliding <= 25, colliding  # the scenes had collisions, not at every step


@pytest.mark.parametrize("seed", range(2))
def test_distances_of_a_moving_scene_of_convex_parts_are_fcl_s(seed):
    """Parts apart (a sparse scene): the least distance of the moved manager is FCL's."""
    rng = np.random.default_rng(seed)
    n = 25
    meshes = [_part(rng, 2 * (k % 2)) for k in range(n)]  # boxes and cylinders: convex
    meshes = [m if k % 2 == 0 else trimesh.creation.icosphere(1, radius=0.5) for k, m in enumerate(meshes)]
    ours, theirs = CollisionManager(), tc.CollisionManager()
    for k, m in enumerate(meshes):
        T = exact_pose(rng, 12.0)
        ours.add_object(f"p{k:02d}", m, T)
        theirs.add_object(f"p{k:02d}", m, T)
    clear = 0
    for step in range(15):
        k = int(rng.integers(n))
        T = exact_pose(rng, 12.0)
        ours.set_transform(f"p{k:02d}", T)
        theirs.set_transform(f"p{k:02d}", T)
        d, names = ours.min_distance_internal(return_names=True)
        td, tnames = theirs.min_distance_internal(return_names=True)
        assert (d > 0) == (td > 0)
        if td > 0:
            clear += 1
            assert names == tnames and d == pytest.approx(td, rel=1e-6, abs=1e-9)
        other = CollisionManager()
        other.add_object("probe", meshes[0], exact_pose(rng, 12.0))
        t_other = tc.CollisionManager()
        t_other.add_object("probe", meshes[0], other._objs["probe"].transform)
        d, names = ours.min_distance_other(other, return_names=True)
        td, tnames = theirs.min_distance_other(t_other, return_names=True)
        if td > 0:
            assert names == tnames and d == pytest.approx(td, rel=1e-6, abs=1e-9)
    assert clear >= 8, clear


def test_the_least_distance_asks_few_pairs(monkeypatch):
    """400 parts spread out: the closest pair is found asking a small share of the 79,800 pairs
    (the broad phase grown to the best distance, not every pair sorted), and after a move only
    pairs of the moved part are asked again."""
    asked = []
    real = managers._Pairs.__init__

    def counting(self, objs_a, objs_b, want, listed, **kwargs):
        asked.append(len(objs_a))
        real(self, objs_a, objs_b, want, listed, **kwargs)

    monkeypatch.setattr(managers._Pairs, "__init__", counting)
    rng = np.random.default_rng(9)
    n = 400
    manager = CollisionManager()
    box = trimesh.creation.box([1.0, 1.0, 1.0])
    # a jittered grid of pitch 5: every box apart, the least gap somewhere in [1, 5]
    grid = np.stack(np.meshgrid(*[np.arange(8)] * 3, indexing="ij"), axis=-1).reshape(-1, 3)[:n]
    for k, c in enumerate(5.0 * grid + rng.uniform(-1.5, 1.5, (n, 3))):
        manager.add_object(f"b{k}", box, _moved(*c))
    d = manager.min_distance_internal()
    centres = np.array([o.transform[:3, 3] for o in manager._objs.values()])
    gaps = np.maximum(np.abs(centres[:, None, :] - centres[None, :, :]) - 1.0, 0.0)
    truth = np.sqrt((gaps ** 2).sum(axis=2))
    truth[np.diag_indices(n)] = np.inf
    assert d == pytest.approx(truth.min(), rel=1e-9, abs=1e-12)
    assert 0 < sum(asked) <= 0.02 * n * (n - 1) / 2, sum(asked)
    asked.clear()
    manager.set_transform("b7", _moved(*(centres[8] + [1.25, 0.0, 0.0])))  # 0.25 from b8
    d = manager.min_distance_internal()
    centres[7] = centres[8] + [1.25, 0.0, 0.0]
    gaps = np.maximum(np.abs(centres[:, None, :] - centres[None, :, :]) - 1.0, 0.0)
    truth = np.sqrt((gaps ** 2).sum(axis=2))
    truth[np.diag_indices(n)] = np.inf
    assert d == pytest.approx(truth.min(), rel=1e-9, abs=1e-12) and d == pytest.approx(0.25)
    assert sum(asked) <= n, sum(asked)
