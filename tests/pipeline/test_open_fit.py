"""An open surface against a closed part that the triangle test leaves undecided (issue 40): an
eaves under a gable wall (ISSUE_171_IfcSurfaceCurveSweptAreaSolid at 2 mm) and ArchiCAD's round
windows in their openings (AC14-FZK-Haus) were such surfaces until each of their B-reps was read
closed (`gjkcli.mesh.load.merge_solids`): fits judged as closed parts now. The open part bounds no volume, so
the common solid's thickness (`gjkcli.pipeline.refine.thickness_verdict`) cannot judge it; its
depth is that of its deepest point inside the closed part, and `gjkcli.engine.sheet.sheet_depth`
bounds it over the open part's triangles (`gjkcli.pipeline.refine.sheet_verdict`).

The pair built here is the wedge of tests/engine/test_wedged_undecided.py with the bar left open
at its ends (two triangles fewer at each end): its side faces lie `over` deep inside the cap's
walls, by construction, and the bound is judged against that; the point-triangle distance the
bound stands on is judged against the brute-force one of tests/exact_distance.py's source,
`gjkcli.engine.certify.closest_points_on_triangles`.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

trimesh = pytest.importorskip("trimesh")
shapely_geometry = pytest.importorskip("shapely.geometry")

from fits import checked_pair, common_solid  # noqa: E402
from gjkcli.engine.certify import closest_points_on_triangles  # noqa: E402
from gjkcli.engine.exact import Mesh, exact_query  # noqa: E402
from gjkcli.engine.results import Status  # noqa: E402
from gjkcli.engine.sheet import point_triangle_distance, sheet_depth  # noqa: E402
from gjkcli.pipeline import run as pipeline  # noqa: E402
from gjkcli.mesh.load import read_objects  # noqa: E402
from gjkcli.pipeline.refine import EXIT_SHEET, EXIT_THIN  # noqa: E402

BAND = 0.002
ORIGIN = np.array([14.68, -51.69, 0.0])
AC14 = Path(__file__).resolve().parents[1] / "data" / "third_party" / "AC14-FZK-Haus.ifczip"


def _parts(over: float):
    """A U cap (closed) and a bar in its slot wider than the slot by `over` on each side, open at
    both ends (its end caps removed), as trimesh meshes placed at ORIGIN."""
    Polygon = shapely_geometry.Polygon
    cap = Polygon([(-0.045, 0), (0.045, 0), (0.045, 0.09), (-0.045, 0.09)]).difference(
        Polygon([(-0.03, 0), (0.03, 0), (0.03, 0.08), (-0.03, 0.08)]))
    a = trimesh.creation.extrude_polygon(cap, 1.2)
    w = 0.03 + over
    b = trimesh.creation.extrude_polygon(Polygon([(-w, 0), (w, 0), (w, 0.08), (-w, 0.08)]), 1.2)
    ends = np.abs(b.face_normals[:, 2]) > 0.5
    b = trimesh.Trimesh(b.vertices, b.faces[~ends], process=False)
    a.apply_translation(ORIGIN)
    b.apply_translation(ORIGIN)
    return a, b


def _meshes(over: float):
    a, b = _parts(over)
    return Mesh(a.vertices, a.faces, name="cap"), Mesh(b.vertices, b.faces, name="bar")


def _checked(tmp_path, over: float):
    return checked_pair(tmp_path, *_parts(over), BAND, ("cap", "bar"))


@pytest.mark.parametrize("over", [5e-9, 1e-6, 0.85 * BAND])
def test_the_triangle_test_alone_leaves_an_open_bar_in_its_slot_undecided(over):
    cap, bar = _meshes(over)
    assert cap.solid and not bar.solid
    assert exact_query(cap, bar, tolerance=BAND).status is Status.UNDECIDED


@pytest.mark.parametrize("over", [5e-9, 1e-6, 0.85 * BAND])
def test_an_open_bar_in_its_slot_by_less_than_the_band_is_touching(tmp_path, over):
    pair = _checked(tmp_path, over)
    assert pair.status is Status.TOUCHING, pair.note
    assert pair.result.exit == EXIT_SHEET and not pair.violation
    # the bound holds the construction's depth and lies within the band
    assert over * (1 - 1e-9) <= pair.result.depth_upper <= BAND


@pytest.mark.parametrize("over", [1.15 * BAND, 3 * BAND])
def test_an_open_bar_deeper_than_the_band_is_a_collision(tmp_path, over):
    pair = _checked(tmp_path, over)
    assert pair.status is Status.COLLISION, pair.note
    assert pair.result.depth > BAND and pair.result.depth <= over * (1 + 1e-9)


def test_the_bound_is_the_construction_s_depth_and_a_deeper_one_is_found():
    cap, bar = _meshes(0.5 * BAND)
    got = sheet_depth(bar, cap, band=BAND)
    assert got.deep is None and 0.5 * BAND <= got.upper <= BAND
    # at a band under the depth, a point deeper than that band, at most the depth
    got = sheet_depth(bar, cap, band=0.25 * BAND)
    assert got.upper is None and got.deep is not None
    assert 0.25 * BAND < got.deep[0] <= 0.5 * BAND * (1 + 1e-9)


def test_the_same_under_a_rigid_motion_of_both_parts():
    from scipy.spatial.transform import Rotation

    cap, bar = _meshes(0.5 * BAND)
    pose = np.eye(4)
    pose[:3, :3] = Rotation.from_rotvec([0.3, -1.1, 0.7]).as_matrix()
    pose[:3, 3] = [120.0, -7.0, 33.0]
    got = sheet_depth(bar, cap, pose_sheet=pose, pose_solid=pose, band=BAND)
    assert got.deep is None and 0.5 * BAND <= got.upper <= BAND


def test_point_triangle_distance_against_brute_force():
    rng = np.random.default_rng(40)
    tris = rng.normal(size=(2000, 3, 3))
    tris[:100, 2] = tris[:100, 0] + 0.5 * (tris[:100, 1] - tris[:100, 0])  # degenerate: a segment
    points = rng.normal(size=(2000, 3)) * 2
    got = point_triangle_distance(points, tris)
    with np.errstate(invalid="ignore", divide="ignore"):
        want = np.array([np.linalg.norm(closest_points_on_triangles(p, t[None, 0], t[None, 1], t[None, 2])[0] - p)
                         for p, t in zip(points, tris)])
    assert np.allclose(got, want, rtol=1e-9, atol=1e-12)


def test_archicad_s_round_windows_in_their_openings_are_touching(tmp_path):
    """AC14-FZK-Haus at 2 mm: the two round upper-floor windows in their walls' openings
    (hosted, so allowed); the triangle test leaves them undecided. Read as open surfaces (their
    B-reps' shared faces merged into edges of four faces), the sheet's bound settled them; each
    B-rep closed, they are closed windows, and the common solid's mean thickness settles them as
    touching: manifold3d's common solid, from the arrays IfcOpenShell gives, is the judge."""
    pytest.importorskip("ifcopenshell")
    manifest = tmp_path / "windows.toml"
    manifest.write_text(f'''
[[include]]
file = "{AC14}"

[[check]]
name = "Windows / walls"
a = "IfcWindow"
b = "IfcWall"
tolerance = {BAND}
''')
    found = pipeline.scan([], pipeline.Options(jobs=1, show_allowed=True), manifest=manifest)
    assert not found.errors
    windows = {"1zOBw0Gej5Wf0QAJfHnOc0": "0knNIAVBPBFvBy_m5QVHsU",
               "2ACmFFQhT1Ouf0x4YRUh9m": "3VCarUKgH1buLo22Ozxe6J"}
    objects = {o.name: o for o in found.objects}
    seen = {}
    for p in found.pairs:
        ids = {objects[p.a].global_id, objects[p.b].global_id}
        for window, wall in windows.items():
            if ids == {window, wall}:
                seen[window] = p
    assert set(seen) == set(windows)
    parts = {p.element.global_id: p for p in read_objects(AC14)}
    for window, p in seen.items():
        assert p.status is Status.TOUCHING and p.result.exit == EXIT_THIN, p.note
        assert p.result.solid_a and p.result.solid_b
        common = common_solid(parts[window], parts[windows[window]])
        assert 0 < 2 * common.volume() / common.surface_area() <= BAND
    assert not [p for p in found.pairs if p.status is Status.UNDECIDED]

