"""Two copies of one closed solid in one place, or nearly (`gjkcli.pipeline.policy.deeper_in_common`,
`gjkcli.engine.exact.deep_in_both`).

Every point of each copy's surface lies on the other's, 0 deep in it, so no point of a surface
proves a depth, and no move within the band parts them: the triangle test leaves them undecided.
The duplex model of the gathered IFC corpus (engine_web-ifc's tests/ifcfiles/public/duplex.ifc)
holds such a pair, two gypsum ceiling boards (1.551 by 2.048 by 0.057 m, their faces wound
inwards as the file gives them), undecided at a 10 mm band. Their common solid's mean thickness
(2 x volume / area, 0.0535 m) is less than the move that parts them (0.057 m, the board's
thickness): between those two bands the mean-thickness rule called the pair touching, a wrong
verdict; below them it stayed undecided.

A point inside both, r_a from A's surface and r_b from B's, proves a depth of at least r_a + r_b
(a move shorter than that leaves the two balls about it overlapping). Judged here by the
analytic depth of boxes (the least overlap of their extents) and by the exact signed distance of
tests/exact_distance.py at the certificate's point; the bands swept just under and just over
the depth and the mean thickness.
"""
from __future__ import annotations

import itertools
import json
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("manifold3d")

SIZE = np.array([1.551, 2.048, 0.057])
# The cube's corners and its twelve triangles wound outwards (right hand).
CORNERS = np.array(list(itertools.product((0.0, 1.0), repeat=3)))
OUTWARD = np.array([[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
                    [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]])


def _board(shift=(0.0, 0.0, 0.0), inward: bool = True):
    """(vertices, faces) of the board at `shift`, wound inwards as the IFC file's are, or outwards."""
    faces = OUTWARD[:, ::-1] if inward else OUTWARD
    return CORNERS * SIZE + np.asarray(shift), faces.copy()


def _depth(shift) -> float:
    """Two boxes of one size: the least overlap of their extents, the move that parts them."""
    return float((SIZE - np.abs(np.asarray(shift))).min())


def _mean_thickness(shift) -> float:
    common = SIZE - np.abs(np.asarray(shift))
    volume = float(np.prod(common))
    area = 2.0 * float(common[0] * common[1] + common[1] * common[2] + common[0] * common[2])
    return 2.0 * volume / area


def _settled(shift, band, inward=True):
    from gjkcli.engine.exact import Mesh, exact_query
    from gjkcli.pipeline.policy import settle

    a, b = Mesh(*_board(inward=inward), name="A"), Mesh(*_board(shift, inward), name="B")
    r = exact_query(a, b, tolerance=band)
    return r, settle(r, a, b)


SHIFTS = ((0.0, 0.0, 0.0), (0.3, 0.0, 0.0), (0.0, 0.0, 0.02), (0.2, -0.1, 0.005))


@pytest.mark.parametrize("shift", SHIFTS)
@pytest.mark.parametrize("times", (0.2, 0.9, 0.98, 1.02, 1.5))
@pytest.mark.parametrize("inward", (True, False), ids=("inward", "outward"))
def test_copies_in_place_are_a_collision_just_past_the_band_and_touching_within_it(shift, times, inward):
    from exact_distance import signed_distance

    import trimesh

    depth = _depth(shift)
    band = times * depth
    raw, r = _settled(shift, band, inward)
    if times > 1:  # a move of depth parts them: touching, whatever certifies it
        assert r.status.value == "touching", r.note
        return
    if not any(shift):  # every point of each surface on the other's: none deeper than the band
        assert raw.status.value == "undecided"
    assert r.status.value == "collision", r.note
    assert band < r.depth <= depth * (1 + 1e-9)
    if raw.status.value == "collision":  # a point of a surface proved it: not this rule's
        return
    # the certificate's point, judged apart from gjk: inside both, its exact distances to their
    # surfaces adding up to the depth reported
    point = np.asarray(r.certificate.point)
    inside = []
    for vertices, faces in (_board(inward=False), _board(shift, inward=False)):
        inside.append(float(signed_distance(trimesh.Trimesh(vertices, faces, process=False), [point])[0]))
    assert min(inside) > 0
    assert sum(inside) >= r.depth * (1 - 1e-12)
    assert abs(np.linalg.norm(np.asarray(r.point_a) - np.asarray(r.point_b)) - r.depth) <= 1e-12 * depth


@pytest.mark.parametrize("shift", SHIFTS)
def test_between_the_mean_thickness_and_the_depth_the_pair_is_no_longer_called_touching(shift):
    """The band the mean-thickness rule got wrong: past the common solid's mean thickness, within
    the move that parts the copies."""
    depth, mean = _depth(shift), _mean_thickness(shift)
    assert mean < depth
    band = 0.5 * (mean + depth)
    _, r = _settled(shift, band)
    assert r.status.value == "collision", r.note
    assert band < r.depth <= depth * (1 + 1e-9)


def test_a_copy_of_a_gear_in_its_own_place_is_a_collision():
    """A non-convex solid (issue 40's generated gear) and its copy: the depth found is at least
    the band, at most the least extent (a move of it along that axis parts them), and the
    exact signed distance confirms the point is that deep in both."""
    import sweep

    from exact_distance import signed_distance

    import trimesh

    from gjkcli.engine.exact import Mesh, exact_query
    from gjkcli.pipeline.policy import settle

    gear = next(p for p in sweep.generated() if p.name == "gear")
    extent = float((gear.vertices.max(axis=0) - gear.vertices.min(axis=0)).min())
    a, b = Mesh(gear.vertices, gear.faces, name="A"), Mesh(gear.vertices, gear.faces, name="B")
    solid = trimesh.Trimesh(gear.vertices, gear.faces, process=False)
    for band in (1e-3, 1e-2, 0.3 * extent):
        r = settle(exact_query(a, b, tolerance=band), a, b)
        assert r.status.value == "collision", (band, r.note)
        assert band < r.depth <= extent
        if r.certificate is not None and r.exit.startswith("a point inside both"):
            assert 2 * float(signed_distance(solid, [r.certificate.point])[0]) >= r.depth * (1 - 1e-12)


def test_the_scan_settles_the_copies_as_a_collision(tmp_path):
    """The run's own route (the triangle test, then `gjkcli.pipeline.refine.by_thickness`), on
    two STL files of the board, the second a copy of the first: at a band between the mean
    thickness and the board's thickness."""
    import trimesh

    for name in ("a", "b"):
        vertices, faces = _board()
        trimesh.Trimesh(vertices, faces, process=False).export(tmp_path / f"{name}.stl")
    band = 0.5 * (_mean_thickness((0, 0, 0)) + float(SIZE[2]))
    done = subprocess.run([sys.executable, "-m", "gjkcli", "check", str(tmp_path / "a.stl"), str(tmp_path / "b.stl"),
                           "--tolerance", repr(band), "--mode", "exact", "--format", "json", "--no-cache"],
                          capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    pair = json.loads(done.stdout)["pairs"][0]
    assert pair["status"] == "collision", pair["note"]
    assert band < pair["depth"] <= SIZE[2] * (1 + 1e-9)


@pytest.mark.parametrize("shift", SHIFTS)
def test_the_point_inside_both_is_searched_before_every_triangle(shift, monkeypatch):
    """A pair touching by its common solid's mean thickness is searched for a point inside both
    first (`deep_in_both`, a few thousand points of the common solid's box) and only then, where
    none is found, on every triangle of each within the other's box (`deeper_on_faces`): a
    point of a surface deeper than the band is inside both too, so the first search finds what
    the second would, and costs less (the Great Court roof at a 5 mm band: 23,488 such pairs,
    every one settled by the first). Between the mean thickness and the depth the copies are a
    collision without the triangles' search."""
    import gjkcli.engine.exact as exact

    asked = []
    search = exact.deeper_on_faces

    def counted(*args, **kwargs):
        asked.append(args)
        return search(*args, **kwargs)

    monkeypatch.setattr(exact, "deeper_on_faces", counted)
    depth, mean = _depth(shift), _mean_thickness(shift)
    _, r = _settled(shift, 0.5 * (mean + depth))
    assert r.status.value == "collision", r.note
    assert r.exit.startswith("a point inside both")
    assert asked == []
    # within the move that parts them the pair stays touching: both searches ran, none found
    _, r = _settled(shift, 1.02 * depth)
    assert r.status.value == "touching", r.note
    assert len(asked) == (r.exit.startswith("common solid's mean thickness"))
