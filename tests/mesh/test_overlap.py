"""The overlap solid of two parts (`gjkcli.mesh.overlap`) against answers that are not its own:
box intersections by arithmetic, spherical caps by formula, and trimesh's boolean intersection
(through its own manifold3d path: another conversion, another caller) on concave samples."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import trimesh

from gjkcli.mesh.overlap import convex_overlap, overlap

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


def box(lo, hi) -> trimesh.Trimesh:
    lo, hi = np.asarray(lo, float), np.asarray(hi, float)
    m = trimesh.creation.box(extents=hi - lo)
    m.apply_translation(0.5 * (lo + hi))
    return m


@pytest.mark.parametrize("how", ["boolean", "convex cut"])
def test_random_boxes_match_the_arithmetic_of_their_intersection(how):
    """manifold3d's boolean and the compiled cut of two convex parts (`convex_overlap`) alike."""
    rng = np.random.default_rng(11)
    overlapping = 0
    for _ in range(60):
        lo_a = rng.uniform(-0.7, 0.7, 3)
        hi_a = lo_a + rng.uniform(0.2, 1.5, 3)
        lo_b = rng.uniform(-0.7, 0.7, 3)
        hi_b = lo_b + rng.uniform(0.2, 1.5, 3)
        a, b = box(lo_a, hi_a), box(lo_b, hi_b)
        truth = float(np.prod(np.clip(np.minimum(hi_a, hi_b) - np.maximum(lo_a, lo_b), 0, None)))
        if how == "boolean":
            o = overlap("a", a.vertices, a.faces, "b", b.vertices, b.faces)
        else:
            o = convex_overlap(a.vertices, a.faces, b.vertices, b.faces)
        assert o.reason is None
        assert o.volume == pytest.approx(truth, rel=1e-9, abs=1e-12)
        if truth > 0:
            overlapping += 1
            # the solid drawn is the solid measured
            solid = trimesh.Trimesh(o.vertices, o.faces)
            assert abs(solid.volume) == pytest.approx(truth, rel=1e-9)
            assert np.all(o.vertices >= np.maximum(lo_a, lo_b) - 1e-9)
            assert np.all(o.vertices <= np.minimum(hi_a, hi_b) + 1e-9)
        else:
            assert len(o.faces) == 0
    assert 15 <= overlapping <= 50  # both kinds of case were drawn


@pytest.mark.parametrize("h", [-0.5, 0.0, 0.6])
def test_sphere_against_a_box_is_a_spherical_cap(h):
    """A sphere of radius r cut by the box z >= h: a cap of height r - h, V = pi c^2 (3r - c) / 3.
    The icosphere lies between the sphere and the ball its nearest face plane bounds, so its cap
    lies between those two caps."""
    r = 1.0
    sphere = trimesh.creation.icosphere(subdivisions=4, radius=r)
    cut = box([-2, -2, h], [2, 2, 2])
    o = overlap("sphere", sphere.vertices, sphere.faces, "box", cut.vertices, cut.faces)
    # the ball of the nearest face plane's distance lies inside the mesh
    inner = float(np.abs(np.einsum("ij,ij->i", sphere.face_normals, sphere.triangles[:, 0])).min())

    def cap(radius):
        c = max(0.0, radius - h)
        return math.pi * c * c * (3 * radius - c) / 3

    assert cap(inner) * 0.999 <= o.volume <= cap(r)
    assert o.volume == pytest.approx(cap(r), rel=0.02)


@pytest.mark.parametrize("pair", [("pocket_box.stl", "ring.stl"), ("peg.stl", "pocket_box.stl"),
                                  ("collide_b.stl", "ring.stl"), ("clear_b.stl", "touch_b.stl")])
def test_concave_samples_match_trimesh_boolean(pair):
    a, b = (trimesh.load_mesh(SAMPLES / n) for n in pair)
    judge = trimesh.boolean.intersection([a, b], engine="manifold")
    o = overlap(pair[0], a.vertices, a.faces, pair[1], b.vertices, b.faces)
    assert judge.volume > 1e-4  # the samples do overlap
    # trimesh hands manifold3d float32 coordinates: agree to that precision
    assert o.volume == pytest.approx(judge.volume, rel=1e-5)


def test_far_from_the_origin_keeps_its_digits():
    a, b = box([0, 0, 0], [2, 2, 2]), box([1, 1.5, 1.75], [3, 3.5, 3.75])
    near = overlap("a", a.vertices, a.faces, "b", b.vertices, b.faces).volume
    far = overlap("a", a.vertices + 1e7, a.faces, "b", b.vertices + 1e7, b.faces).volume
    assert near == pytest.approx(0.125, rel=1e-12)
    assert far == pytest.approx(0.125, rel=1e-6)


def test_inward_winding_is_the_same_solid():
    a, b = box([0, 0, 0], [2, 2, 2]), box([1, 1, 1], [3, 3, 3])
    o = overlap("a", a.vertices, a.faces[:, ::-1], "b", b.vertices, b.faces)
    assert o.volume == pytest.approx(1.0)


def test_an_open_part_has_no_volume_and_says_why():
    a, b = box([0, 0, 0], [2, 2, 2]), box([1, 1, 1], [3, 3, 3])
    o = overlap("lid", a.vertices, a.faces[:-2], "b", b.vertices, b.faces)
    assert o.volume is None
    assert "lid" in o.reason and "closed" in o.reason
    o = overlap("a", a.vertices, a.faces, "sheet", b.vertices, b.faces[:1])
    assert o.volume is None and "sheet" in o.reason


# The start of a script the tests below run in a fresh process (where manifold3d has not run, so
# that `overlaps` may fork): numpy, `overlaps`, and a unit cube's corners and outward triangles.
_BOXES = (
    "import numpy as np\n"
    "from gjkcli.mesh.overlap import PARALLEL_FROM, overlaps\n"
    "corners = np.array([[x, y, z] for x in (0, 1) for y in (0, 1) for z in (0, 1)], float)\n"
    "faces = np.array([[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],\n"
    "                  [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]])\n")


def _run(script: str, cwd) -> str:
    """The script's standard output, run by this Python in a fresh process."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=cwd)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_many_overlaps_on_forked_workers_are_the_box_arithmetic(tmp_path):
    """`overlaps` of 80 pairs of boxes with 2 jobs, in a fresh process where manifold3d has not
    run (nor trimesh, which imports it), so that it may fork: each volume is the boxes'
    arithmetic, the pairs in order, and the process itself never imported manifold3d (the
    workers did the booleans)."""
    script = _BOXES + (
        "import sys\n"
        "rng = np.random.default_rng(5)\n"
        "pairs, expected = [], []\n"
        "for k in range(80):\n"
        "    lo_a, lo_b = rng.uniform(-1, 0, 3), rng.uniform(-0.5, 0.5, 3)\n"
        "    hi_a, hi_b = lo_a + rng.uniform(0.5, 1.5, 3), lo_b + rng.uniform(0.5, 1.5, 3)\n"
        "    pairs.append((f'a{k}', lo_a + corners * (hi_a - lo_a), faces,\n"
        "                  f'b{k}', lo_b + corners * (hi_b - lo_b), faces))\n"
        "    expected.append(float(np.prod(np.clip(np.minimum(hi_a, hi_b) - np.maximum(lo_a, lo_b), 0, None))))\n"
        "got = overlaps(pairs, jobs=2)\n"
        "assert len(pairs) >= PARALLEL_FROM\n"
        "print('manifold3d' in sys.modules)\n"
        "print(max(abs(o.volume - e) for o, e in zip(got, expected)))\n"
        "print(sum(e > 0 for e in expected))\n")
    in_parent, worst, overlapping = _run(script, tmp_path).split()
    assert in_parent == "False"
    assert float(worst) < 1e-12
    assert 20 <= int(overlapping) <= 80


def test_then_runs_where_each_common_solid_is_made(tmp_path):
    """`overlaps(..., then=f)`: f(k, the overlap of pair k) is asked in the forked worker that
    made the common solid (its process id is not the caller's) and the list holds its answers,
    in the pairs' order; with one job, in the caller. Pairs of closed parts a scan's policy
    settles by the searches over their common solids (the Great Court roof at a 5 mm band:
    23,539 of them) then run those searches on every core."""
    script = _BOXES + (
        "import os\n"
        "pairs = [(f'a{k}', corners, faces, f'b{k}', corners * 0.5 + 0.01 * k, faces) for k in range(80)]\n"
        "assert len(pairs) >= PARALLEL_FROM\n"
        "def then(k, o):\n"
        "    return k, os.getpid(), o.volume\n"
        "for jobs in (2, 1):\n"
        "    got = overlaps(pairs, jobs=jobs, then=then)\n"
        "    print(jobs, all(g[0] == k for k, g in enumerate(got)), len({g[1] for g in got} - {os.getpid()}),\n"
        "          max(abs(g[2] - (min(1.0, 0.5 + 0.01 * k) - 0.01 * k) ** 3) for k, g in enumerate(got)))\n")
    forked, inline = (line.split() for line in _run(script, tmp_path).splitlines())
    assert forked[:3] == ["2", "True", "2"]  # two workers, neither the caller
    assert inline[:3] == ["1", "True", "0"]
    assert float(forked[3]) < 1e-12 and float(inline[3]) < 1e-12  # the boxes' arithmetic


# A flat part a fuzzed ASCII STL gave (tests/fuzz/test_inputs.py): three triangles meeting at a
# point that two more vertices repeat, and two triangles of one vertex each. manifold3d 3.5.4
# crashed the process building it (so did the same triangles with their corners at the repeated
# vertices, which its merge joins).
FLAT_V = [[-2.8322259187698364, 0.1224055290222168, 0.0], [-2.349253535270691, 0.1224055290222168, 0.0],
          [-0.16777408123016357, -1.6728341579437256, 0.0], [-0.16777408123016357, -1.1271032094955444, 0.0],
          [-0.16777408123016357, 0.1224055290222168, 0.0], [-0.16777408123016357, 1.6728341579437256, 0.0],
          [2.8322259187698364, 0.1224055290222168, 0.0], [-0.16777408123016357, 0.1224055290222168, 0.0],
          [-0.16777408123016357, 0.1224055290222168, 0.0]]


# Seven separate triangles a fuzzed binary STL gave: each edge of one triangle alone. manifold3d
# 3.5.4's constructor crashed on them.
SOUP_V = [[-2.9811662435531616, -0.3956088423728943, -0.3035966157913208], [-2.6065648794174194, -2.857942223548889, -0.8563434798270464],
          [-2.5561050176620483, -0.10623347759246826, -0.8863434791564941], [-2.2491730451583862, 2.360467314720154, -1.876004159450531],
          [-2.2302507162094116, -2.2281686067581177, -1.154553085565567], [-0.702410101890564, 2.1423336267471313, -0.4112144410610199],
          [0.01883375644683838, -1.7281253337860107, 2.113656520843506], [0.01883375644683838, -1.0456350445747375, 1.8020257949829102],
          [0.01883375644683838, -0.7340041399002075, 1.6016483306884766], [0.01883375644683838, -0.10623347759246826, 0.6525264978408813],
          [0.01883375644683838, 1.0170314311981201, -2.113656520843506], [0.01883375644683838, 1.3076118230819702, -0.8863434791564941],
          [0.01883375644683838, 2.058761477470398, -0.8863434791564941], [0.048833755776286125, -0.10623347759246826, -0.8563434798270464],
          [0.08334038406610489, 0.746333658695221, -0.0643453598022461], [0.31883376836776733, -2.708175778388977, -0.8863434791564941],
          [0.42277634143829346, -1.0538898706436157, 1.920074462890625], [1.2526341676712036, -0.10623347759246826, 0.16413676738739014],
          [1.9728306531906128, 2.8937665224075317, 1.9993224143981934], [2.4041045904159546, -2.8937665224075317, -1.5850125551223755],
          [2.4440304040908813, 1.437321424484253, 2.113656520843506], [2.702046513557434, -0.10623347759246826, -0.38634347915649414],
          [2.9811662435531616, -0.10623347759246826, 1.1136665344238281]]
SOUP_F = [[11, 19, 10], [3, 20, 13], [4, 8, 16], [9, 2, 21], [12, 7, 14], [15, 1, 22], [5, 6, 18]]


@pytest.mark.parametrize("vertices, faces", [(FLAT_V, [[3, 6, 4], [0, 5, 4], [2, 1, 4], [7, 7, 7], [8, 8, 8]]),
                                             (FLAT_V, [[3, 6, 4], [0, 5, 4], [2, 1, 4], [4, 7, 8], [7, 8, 4]]),
                                             (SOUP_V, SOUP_F)])
def test_parts_manifold3d_crashed_on_bound_nothing_and_crash_nothing(vertices, faces):
    """In a process of its own, so that a crash is this test's failure: the part has no
    volume, and says so."""
    import subprocess
    import sys

    code = ("from gjkcli.mesh.overlap import overlap\n"
            f"v, f = {vertices!r}, {faces!r}\n"
            "o = overlap('a', v, f, 'b', v, f)\n"
            "print(o.volume, o.reason)\n")
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert got.returncode == 0, got.stderr
    assert got.stdout.strip() == "None a is not a closed surface: it bounds no volume"


def test_triangles_of_no_area_leave_the_solid_as_it_is():
    """Triangles with a corner twice (or corners the merge joins) added to closed parts: the
    same overlap volume as without them (the box arithmetic)."""
    a, b = box([0, 0, 0], [1, 1, 1]), box([0.5, 0.25, 0], [1.5, 1, 0.5])
    plain = overlap("a", a.vertices, a.faces, "b", b.vertices, b.faces)
    assert plain.volume == pytest.approx(0.5 * 0.75 * 0.5, rel=1e-12)
    va = np.vstack([a.vertices, a.vertices[:1]])  # a repeated corner, which the merge joins
    fa = np.vstack([a.faces, [[0, 0, 1], [2, 2, 2], [0, 8, 3]]])
    fb = np.vstack([b.faces, [[5, 5, 5]]])
    got = overlap("a", va, fa, "b", b.vertices, fb)
    assert got.reason is None and got.volume == pytest.approx(plain.volume, rel=1e-12)
