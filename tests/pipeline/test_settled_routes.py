"""Every route that asks the triangle test settles an undecided pair the same way (issue 40):
`gjkcli.pipeline.policy.settle`, the run's policy (a fit of two closed parts by its common
solid's mean thickness, an open part by how deep it reaches into a closed one), in `gjk check`
and `gjk scan`, a robot at many poses (`--poses`), a robot's motion (`--trajectory`) and the
collision manager.

The pair is the wedge of tests/engine/test_wedged_undecided.py: a bar in the slot of a U cap,
wider than the slot by `over` on each side, so that no point of one lies deeper than `over`
inside the other and no move within the band parts them: the triangle test alone answers
undecided. Here the cap is a robot's base and the bar its slider, on a prismatic joint along
the slot (no joint joins them directly, so no rule allows the pair): at every pose along the
slot the bar is wedged by `over`, touching by the construction when `over` is within the band;
the motion slides it along the slot. The manager gets the same pair at its own band (1e-7 of the
pair's size).
"""
from __future__ import annotations

import numpy as np
import pytest

trimesh = pytest.importorskip("trimesh")
shapely_geometry = pytest.importorskip("shapely.geometry")

from gjkcli.engine.exact import Mesh, exact_query  # noqa: E402
from gjkcli.engine.results import Status  # noqa: E402
from gjkcli.pipeline import run  # noqa: E402
from gjkcli.pipeline.refine import EXIT_THIN  # noqa: E402
from gjkcli.scene import urdf  # noqa: E402

BAND = 0.002

URDF = """<robot name="slot">
  <link name="base"><collision><geometry><mesh filename="cap.obj"/></geometry></collision></link>
  <link name="carriage"/>
  <link name="bar"><collision><geometry><mesh filename="bar.obj"/></geometry></collision></link>
  <joint name="push" type="prismatic"><parent link="base"/><child link="carriage"/>
    <axis xyz="0 0 1"/><limit lower="-0.5" upper="0.5" effort="1" velocity="1"/></joint>
  <joint name="lift" type="prismatic"><parent link="carriage"/><child link="bar"/>
    <axis xyz="0 1 0"/><limit lower="0" upper="0.5" effort="1" velocity="1"/></joint>
</robot>
"""


def _parts(over: float, length: float = 1.2):
    """The U cap and the bar in its slot, `over` wider on each side, both `length` long."""
    Polygon = shapely_geometry.Polygon
    cap = Polygon([(-0.045, 0), (0.045, 0), (0.045, 0.09), (-0.045, 0.09)]).difference(
        Polygon([(-0.03, 0), (0.03, 0), (0.03, 0.08), (-0.03, 0.08)]))
    w = 0.03 + over
    bar = Polygon([(-w, 0), (w, 0), (w, 0.08), (-w, 0.08)])
    return trimesh.creation.extrude_polygon(cap, length), trimesh.creation.extrude_polygon(bar, length)


def _obj(path, mesh) -> None:
    """An OBJ to full precision (an STL's float32 would move the faces by more than `over`)."""
    lines = [f"v {x:.17g} {y:.17g} {z:.17g}" for x, y, z in mesh.vertices.tolist()]
    lines += [f"f {a + 1} {b + 1} {c + 1}" for a, b, c in mesh.faces.tolist()]
    path.write_text("\n".join(lines) + "\n")


def _robot(tmp_path, over: float):
    cap, bar = _parts(over)
    _obj(tmp_path / "cap.obj", cap)
    _obj(tmp_path / "bar.obj", bar)
    path = tmp_path / "slot.urdf"
    path.write_text(URDF)
    return path


def _csv(path, rows):
    path.write_text("push,lift\n" + "".join(",".join(f"{v:.17g}" for v in r) + "\n" for r in rows))
    return str(path)


def _base_bar(found):
    return [p for p in found.pairs if {p.a, p.b} == {"base", "bar"} or
            {p.a.split("/")[-1], p.b.split("/")[-1]} == {"base", "bar"}]


def test_the_triangle_test_alone_leaves_the_wedge_undecided():
    cap, bar = _parts(0.5 * BAND)
    r = exact_query(Mesh(cap.vertices, cap.faces), Mesh(bar.vertices, bar.faces), tolerance=BAND)
    assert r.status is Status.UNDECIDED


@pytest.mark.parametrize("over", [1e-6, 0.5 * BAND])
def test_a_wedged_slider_at_many_poses_is_touching(tmp_path, over):
    path = _robot(tmp_path, over)
    poses = _csv(tmp_path / "poses.csv", [(0.0, 0.0), (0.01, 0.0), (-0.01, 0.0)])
    found = run.scan([path], run.Options(tolerance=BAND, jobs=1, robot=urdf.RobotOptions(poses=poses)))
    pairs = _base_bar(found)
    assert len(pairs) == 3, [(p.a, p.b, p.status) for p in found.pairs]
    for p in pairs:
        assert p.status is Status.TOUCHING and p.result.exit == EXIT_THIN, p.note
    assert not [p for p in found.pairs if p.status is Status.UNDECIDED]


def test_a_wedged_slider_sliding_along_its_slot_is_touching(tmp_path):
    path = _robot(tmp_path, 0.5 * BAND)
    motion = _csv(tmp_path / "slide.csv", [(0.0, 0.0), (0.02, 0.0)])
    found = run.scan([path], run.Options(tolerance=BAND, jobs=1, robot=urdf.RobotOptions(trajectory=motion)))
    pairs = _base_bar(found)
    assert pairs, [(p.a, p.b, p.status) for p in found.pairs]
    assert all(p.status is Status.TOUCHING for p in pairs), [(p.status, p.note) for p in pairs]
    assert not [p for p in found.pairs if p.status is Status.UNDECIDED]


def test_a_slider_wedged_beyond_the_band_is_not_touching(tmp_path):
    path = _robot(tmp_path, 3 * BAND)
    poses = _csv(tmp_path / "poses.csv", [(0.0, 0.0)])
    found = run.scan([path], run.Options(tolerance=BAND, jobs=1, robot=urdf.RobotOptions(poses=poses)))
    (p,) = _base_bar(found)
    assert p.status is Status.COLLISION


@pytest.mark.parametrize("rel, status", [(0.2, "touching"), (0.8, "touching"), (2.5, "collision")])
def test_the_manager_settles_the_wedge_as_the_run_does(rel, status):
    """The manager's band is 1e-7 of the pair's size (the cap's diagonal): `over` a fraction of
    it is touching (depth 0.0, signed distance 0.0), beyond it a collision as deep as `over`."""
    from gjkcli import CollisionManager

    cap, bar = _parts(0.0)
    band = 1e-7 * float(np.linalg.norm(np.ptp(cap.vertices, axis=0)))
    cap, bar = _parts(rel * band)
    manager = CollisionManager(signed=True)
    manager.add_object("cap", cap)
    manager.add_object("bar", bar)
    hit, names, data = manager.in_collision_internal(return_names=True, return_data=True)
    assert hit and names == {("bar", "cap")}
    (contact,) = data
    assert contact.status == status
    distance = manager.min_distance_internal()
    if status == "touching":
        assert contact.depth == 0.0 and distance == 0.0
    else:
        assert contact.depth == pytest.approx(rel * band, rel=1e-3)
        assert distance == pytest.approx(-rel * band, rel=1e-3)
