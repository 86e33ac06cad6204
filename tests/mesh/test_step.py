"""STEP reading (gjkcli.mesh.cad): assembly names and placements, the file's unit, the
tessellation's error bound against the analytic surface, real files from trimesh's test models,
and bad files."""
import gzip
import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
from scipy.spatial import ConvexHull

from stepfiles import box, common_volume, cylinder, face_soup_box, write_step  # skips the module without OpenCASCADE

from gjkcli.errors import InputError
from gjkcli.mesh.load import load_objects, load_part, read_objects

THIRD_PARTY = Path(__file__).resolve().parents[1] / "data" / "third_party"


@pytest.fixture(scope="module")
def assembly(tmp_path_factory):
    """box_sides: a base and two instances of side_panel, in inches."""
    path = tmp_path_factory.mktemp("step") / "box_sides.step"
    return write_step(path, [("side_panel", box(1, 10, 10)), ("base", box(20, 20, 1, (0, 0, -1)))],
                      assembly="box_sides", unit="INCH",
                      instances=[("base", (0, 0, 0)), ("side_panel", (0, 0, 0)),
                                 ("side_panel", (19, 0, 0))])


def test_assembly_names_and_placements(assembly):
    parts = {p.name: p for p in read_objects(assembly)}
    assert sorted(parts) == ["box_sides/base", "box_sides/side_panel:1", "box_sides/side_panel:2"]
    lo, hi = parts["box_sides/side_panel:2"].bounds
    np.testing.assert_allclose(lo, [19, 0, 0], atol=1e-9)
    np.testing.assert_allclose(hi, [20, 10, 10], atol=1e-9)
    lo, hi = parts["box_sides/side_panel:1"].bounds
    np.testing.assert_allclose([lo, hi], [[0, 0, 0], [1, 10, 10]], atol=1e-9)
    assert {p.units for p in parts.values()} == {"in"}
    # boxes are their triangles: no tessellation error, and the solids are still found again
    assert all(p.eps == 0.0 and p.brep for p in parts.values())


def test_prefix_and_whole_file(assembly):
    named = [p.name for p in read_objects(assembly, prefix="asm")]
    assert named[0].startswith("asm:box_sides/")
    whole = load_part(assembly)
    assert whole.name == "box_sides.step" and whole.bodies == 3 and whole.watertight
    assert len(whole.brep) == 3 and whole.units == "in"
    assert [p.name for p in load_objects(assembly)] == [p.name for p in read_objects(assembly)]


@pytest.mark.parametrize("suffix", [".step", ".stp", ".STEP", ".Stp"])
def test_suffixes_any_case(tmp_path, suffix):
    path = write_step(tmp_path / f"c{suffix}", [("c", cylinder(5, 10))])
    (part,) = read_objects(path)
    assert part.units == "mm" and part.eps > 0


def test_the_file_unit_not_millimetres(tmp_path):
    """The same numbers in a millimetre and an inch file give the same coordinates, each in
    its own unit (OpenCASCADE's conversion to millimetres is undone)."""
    mm = read_objects(write_step(tmp_path / "mm.step", [("c", cylinder(0.5, 1.0))]))[0]
    inch = read_objects(write_step(tmp_path / "in.step", [("c", cylinder(0.5, 1.0))], unit="INCH"))[0]
    metre = read_objects(write_step(tmp_path / "m.step", [("c", cylinder(0.5, 1.0))], unit="M"))[0]
    assert (mm.units, inch.units, metre.units) == ("mm", "in", "m")
    np.testing.assert_allclose(inch.bounds, mm.bounds, atol=1e-12)
    np.testing.assert_allclose(metre.bounds, mm.bounds, atol=1e-12)
    assert inch.eps == pytest.approx(mm.eps, rel=1e-6)


def _polygon_radius(vertices, directions):
    """Distance from the z axis to the boundary of the convex polygon (the mesh's cross
    section, projected on xy), along each direction: min over edges of offset / (n . dir)."""
    hull = ConvexHull(vertices[:, :2])
    n, offset = hull.equations[:, :2], -hull.equations[:, 2]
    along = directions @ n.T
    with np.errstate(divide="ignore"):
        t = np.where(along > 1e-12, offset / along, np.inf)
    return t.min(axis=1)


@pytest.mark.parametrize("radius, seam", [(10.0, 0.0), (10.0, 0.1), (0.3, 1.0)])
def test_eps_bounds_the_chord_error_both_ways(tmp_path, radius, seam):
    """Against the analytic cylinder: every triangle point lies within eps of the surface
    (inside it: chords of a convex face), and every surface point within eps of the triangles."""
    part = read_objects(write_step(tmp_path / "c.step", [("c", cylinder(radius, 2 * radius,
                                                                         seam=seam))]))[0]
    rng = np.random.default_rng(16)
    V, F = part.vertices, part.faces
    w = rng.dirichlet([1, 1, 1], size=(len(F), 8))
    points = np.einsum("fkj,fjd->fkd", w, V[F]).reshape(-1, 3)
    rho = np.hypot(points[:, 0], points[:, 1])
    lateral = (points[:, 2] > 1e-9) & (points[:, 2] < 2 * radius - 1e-9) & (rho > 0.5 * radius)
    assert (rho[lateral] <= radius * (1 + 1e-12)).all()  # chords lie inside a convex surface
    gap_in = radius - rho[lateral]
    assert gap_in.max() <= part.eps
    assert gap_in.max() > 0.05 * part.eps  # the bound is not vacuous
    theta = rng.uniform(0, 2 * math.pi, 20_000)
    gap_out = radius - _polygon_radius(V, np.column_stack([np.cos(theta), np.sin(theta)]))
    assert gap_out.max() <= part.eps


def test_trimesh_box_sides(tmp_path):
    """trimesh's box_sides.STEP (SolidWorks, inches): product names and instance paths, not the
    occurrence ids trimesh's route gives (NAUO1..10)."""
    path = tmp_path / "box_sides.STEP"
    with gzip.open(THIRD_PARTY / "box_sides.STEP.gz", "rb") as src, open(path, "wb") as dst:
        shutil.copyfileobj(src, dst)
    parts = read_objects(path)
    names = [p.name for p in parts]
    assert len(parts) == 10 and not any("NAUO" in n for n in names)
    assert names.count("box_sides/side_long:1") == 1 and "box_sides/gusset:4" in names
    assert {p.units for p in parts} == {"in"}
    lo = np.min([p.bounds[0] for p in parts], axis=0)
    hi = np.max([p.bounds[1] for p in parts], axis=0)
    assert 7.0 < (hi - lo)[0] < 7.5  # a box of a few inches, not millimetres or metres


@pytest.mark.parametrize("name", ["base_interface_AP203.STEP", "base_interface_AP214.STEP"])
def test_trimesh_base_interface(name):
    """The same part exported as AP203 and AP214 reads the same."""
    (part,) = read_objects(THIRD_PARTY / name)
    assert part.name == name.removesuffix(".STEP") and part.units == "in"
    np.testing.assert_allclose(part.bounds, [[-11.79946, -12.57153, -0.09375],
                                             [11.79556, 12.57153, 0.09375]], atol=2e-3)
    assert 0 < part.eps < 1e-3 * 35


@pytest.mark.parametrize("content, words", [
    (b"solid nonsense\nendsolid\n", "is not a STEP file"),
    (b"ISO-10303-21;\nHEADER;\nENDSEC;\nDATA;\nENDSEC;\nEND-ISO-10303-21;\n", "found no shapes"),
    (b"ISO-10303-21;\nHEADER;\n#1 = CARTESIAN_POINT(", None),
])
def test_bad_files_are_one_input_error(tmp_path, content, words):
    path = tmp_path / "bad.step"
    path.write_bytes(content)
    with pytest.raises(InputError) as info:
        read_objects(path)
    assert info.value.source == str(path)
    assert "\n" not in info.value.message
    if words:
        assert words in info.value.message


@pytest.mark.parametrize("kind", ["cylinder", "cone", "sphere", "torus"])
def test_surface_points_are_opencascades(kind):
    """The chord-error samples of elementary surfaces, evaluated in NumPy, are OpenCASCADE's own
    BRepAdaptor_Surface.Value at the same parameters, on a solid turned and moved (so each
    face's placement counts)."""
    from OCP.BRepAdaptor import BRepAdaptor_Surface
    from OCP.BRepPrimAPI import (BRepPrimAPI_MakeCone, BRepPrimAPI_MakeSphere,
                                 BRepPrimAPI_MakeTorus)
    from OCP.GeomAbs import GeomAbs_Plane
    from OCP.TopAbs import TopAbs_FACE
    from OCP.TopoDS import TopoDS
    from stepfiles import moved, subshapes

    from gjkcli.mesh.cad import surface_points

    made = {"cylinder": lambda: cylinder(3, 7).Reversed(),
            "cone": lambda: BRepPrimAPI_MakeCone(4.0, 1.5, 6.0).Shape(),
            "sphere": lambda: BRepPrimAPI_MakeSphere(2.5).Shape(),
            "torus": lambda: BRepPrimAPI_MakeTorus(5.0, 1.25).Shape()}[kind]()
    from OCP.gp import gp_Ax1, gp_Dir, gp_Pnt, gp_Trsf
    from OCP.TopLoc import TopLoc_Location

    turn = gp_Trsf()
    turn.SetRotation(gp_Ax1(gp_Pnt(1, 1, 0), gp_Dir(0.3, -1.0, 0.2)), 1.1)
    # turned in its geometry, then placed by a location (as an assembly instance is)
    solid = moved(made, rotate_z=0.7, translate=(3.0, -2.0, 11.0), axis=(1.0, 2.0, 0.5))
    solid = solid.Moved(TopLoc_Location(turn))
    rng = np.random.default_rng(7)
    curved = 0
    for face in subshapes(solid, TopAbs_FACE, TopoDS.Face):
        surface = BRepAdaptor_Surface(face)
        if surface.GetType() == GeomAbs_Plane:
            continue
        curved += 1
        uv = np.column_stack([rng.uniform(surface.FirstUParameter(), surface.LastUParameter(), 50),
                              rng.uniform(surface.FirstVParameter(), surface.LastVParameter(), 50)])
        truth = np.array([[p.X(), p.Y(), p.Z()] for p in (surface.Value(a, b) for a, b in uv)])
        assert np.abs(surface_points(surface, uv) - truth).max() < 1e-12 * (1 + np.abs(truth).max())
        assert np.abs(surface_points(surface, uv + 0.1) - truth).max() > 1e-3  # can fail
    assert curved >= 1


def test_a_missing_system_libgl_is_one_line_that_says_what_to_install(tmp_path, monkeypatch):
    """OpenCASCADE's wheel links libGL.so.1; on a machine without it the import fails, and the
    user reads which package to install, not a traceback."""
    import builtins

    real_import = builtins.__import__

    def no_libgl(name, *args, **kwargs):
        if name == "OCP" or name.startswith("OCP."):
            raise ImportError("libGL.so.1: cannot open shared object file: No such file or directory")
        return real_import(name, *args, **kwargs)

    path = write_step(tmp_path / "box.step", [("box", box(1, 1, 1))])
    monkeypatch.setattr(builtins, "__import__", no_libgl)
    with pytest.raises(InputError) as info:
        load_objects(path)
    message = str(info.value)
    assert "libGL.so.1" in message and "apt-get install libgl1" in message
    assert "\n" not in message


def test_a_file_changed_after_reading_is_one_line_not_a_stale_answer(tmp_path):
    """The exact solids are the file's as it was read: a file written again (or removed) since,
    asked for again, is the InputError saying so, not an answer on solids no longer there."""
    import os

    from gjkcli.mesh import cad

    path = write_step(tmp_path / "two.step", [("a", box(1, 1, 1)), ("b", box(1, 1, 1, (2, 0, 0)))])
    a, b = read_objects(path)
    assert cad.exact_distance(a.brep, b.brep, "mm")[0] == pytest.approx(1.0)
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    with pytest.raises(InputError, match="changed while gjk was checking it"):
        cad.exact_distance(a.brep, b.brep, "mm")
    path.unlink()
    with pytest.raises(InputError, match="changed while gjk was checking it"):
        cad.exact_distance(a.brep, b.brep, "mm")


def test_booleans_skip_the_inverted_check_only_for_upright_solids(tmp_path, monkeypatch):
    """OpenCASCADE's booleans ask of every argument whether it is an inverted solid; gjk asks
    once per product (`_upright`) and lets the boolean skip it only when no argument is. The
    common volume is OpenCASCADE's default boolean's either way."""
    from OCP.TopoDS import TopoDS

    from gjkcli.mesh import cad

    path = write_step(tmp_path / "two.step", [("a", box(2, 2, 2)), ("b", box(2, 2, 2, (1, 1, 1)))])
    a, b = read_objects(path)
    assert cad._upright(a.brep[0]) and cad._upright(b.brep[0])
    volume = common_volume(cad.placed_solid(a.brep[0]), cad.placed_solid(b.brep[0]))
    assert volume == pytest.approx(1.0)
    assert cad.common_volume(a.brep, b.brep, "mm") == pytest.approx(volume, rel=1e-12)
    placed = cad._placed
    monkeypatch.setattr(cad, "_placed", lambda ref: (lambda s, loc: (
        TopoDS.Solid(s.Reversed()) if ref == a.brep[0] else s, loc))(*placed(ref)))
    cad._UPRIGHT.clear()
    assert not cad._upright(a.brep[0]) and cad._upright(b.brep[0])  # a hole in space
    reversed_a = TopoDS.Solid(cad.placed_solid(a.brep[0]))
    got = cad.common_volume(a.brep, b.brep, "mm")
    assert got == pytest.approx(common_volume(reversed_a, cad.placed_solid(b.brep[0])), rel=1e-12)
    cad._UPRIGHT.clear()


@pytest.mark.parametrize("kind", ["sphere", "cone", "torus", "cylinder"])
def test_eps_of_elementary_faces_is_their_distance_from_the_triangles(tmp_path, kind):
    """A sphere's eps is not its poles' parameters (issue 43: a sphere's triangles near a pole
    span half a turn of u, which made eps 25 times the deflection and sent every pair of the
    Euclid spaceship to the exact solids). Against OpenCASCADE's projection of points on the
    surface: every triangle point within eps of it, every surface point within eps of the
    triangles (trimesh's closest point), and eps within 2 times the deflection asked for."""
    import trimesh
    from OCP.BRep import BRep_Tool
    from OCP.BRepAdaptor import BRepAdaptor_Surface
    from OCP.BRepPrimAPI import (BRepPrimAPI_MakeCone, BRepPrimAPI_MakeSphere,
                                 BRepPrimAPI_MakeTorus)
    from OCP.GeomAbs import GeomAbs_Plane
    from OCP.GeomAPI import GeomAPI_ProjectPointOnSurf
    from OCP.gp import gp_Pnt
    from OCP.TopAbs import TopAbs_FACE
    from OCP.TopoDS import TopoDS
    from stepfiles import moved, subshapes

    from gjkcli.tolerances import DEFAULT

    made = {"cylinder": lambda: cylinder(3, 7),
            "cone": lambda: BRepPrimAPI_MakeCone(4.0, 1.5, 6.0).Shape(),
            "sphere": lambda: BRepPrimAPI_MakeSphere(2.5).Shape(),
            "torus": lambda: BRepPrimAPI_MakeTorus(5.0, 1.25).Shape()}[kind]()
    solid = moved(made, rotate_z=0.7, translate=(3.0, -2.0, 11.0), axis=(1.0, 2.0, 0.5))
    part = read_objects(write_step(tmp_path / f"{kind}.step", [(kind, solid)]))[0]
    V, F = part.vertices, part.faces
    diagonal = float(np.linalg.norm(np.ptp(V, axis=0)))
    assert 0 < part.eps <= 2 * DEFAULT.cad_deflection_rel * diagonal
    rng = np.random.default_rng(43)
    w = rng.dirichlet([1, 1, 1], size=(len(F), 3000 // len(F) + 1))
    points = np.einsum("fkj,fjd->fkd", w, V[F]).reshape(-1, 3)
    mesh = trimesh.Trimesh(V, F, process=False)
    faces = [f for f in subshapes(solid, TopAbs_FACE, TopoDS.Face)
             if BRepAdaptor_Surface(f).GetType() != GeomAbs_Plane]
    assert len(faces) == 1
    surface = BRep_Tool.Surface_s(faces[0])
    # triangle points on the curved face, not on the planar caps (of a cone, a cylinder)
    for cap in subshapes(solid, TopAbs_FACE, TopoDS.Face):
        adaptor = BRepAdaptor_Surface(cap)
        if adaptor.GetType() == GeomAbs_Plane:
            plane = adaptor.Plane()
            o, n = plane.Location(), plane.Axis().Direction()
            off = (points - [o.X(), o.Y(), o.Z()]) @ [n.X(), n.Y(), n.Z()]
            points = points[np.abs(off) > 1e-7]
    far = []
    for p in points[rng.choice(len(points), min(3000, len(points)), replace=False)]:
        projected = GeomAPI_ProjectPointOnSurf(gp_Pnt(*p), surface)
        assert projected.NbPoints()
        far.append(projected.LowerDistance())
    on_face = np.array(far)
    assert len(on_face) > 500
    assert on_face.max() <= part.eps
    assert on_face.max() > 0.3 * part.eps  # the bound is not vacuous
    # surface points of the face: from the triangles
    adaptor = BRepAdaptor_Surface(faces[0])
    uv = np.column_stack([rng.uniform(adaptor.FirstUParameter(), adaptor.LastUParameter(), 3000),
                          rng.uniform(adaptor.FirstVParameter(), adaptor.LastVParameter(), 3000)])
    q = np.array([[s.X(), s.Y(), s.Z()] for s in (adaptor.Value(a, b) for a, b in uv)])
    _, back, _ = trimesh.proximity.closest_point(mesh, q)
    assert back.max() <= part.eps


def _with_empty_solid(tmp_path: Path) -> Path:
    """An assembly of two boxes and a product placed twice whose solid has no face (its
    CLOSED_SHELL emptied in the text: OpenCASCADE reads it, and meshes nothing)."""
    import re

    path = write_step(tmp_path / "asm.step",
                      [("left", box(10, 10, 10)), ("right", box(10, 10, 10, (20, 0, 0))),
                       ("hollow", box(5, 5, 5, (40, 0, 0)))],
                      assembly="asm", instances=[("left", (0, 0, 0)), ("right", (0, 0, 0)),
                                                 ("hollow", (0, 0, 0)), ("hollow", (0, 20, 0))])
    text = path.read_text(encoding="latin-1")
    last = list(re.finditer(r"(#\d+ = CLOSED_SHELL\('',)\([^;]*\);", text))[-1]
    path.write_text(text[:last.start()] + last.group(1) + "());" + text[last.end():], encoding="latin-1")
    return path


def test_a_solid_without_triangles_is_left_out_by_name(tmp_path):
    """A solid OpenCASCADE gives no triangles (an exporter's empty shell) is one line naming it
    and its other instances: the file's other solids
    are read and checked, and a run without `skipped` (strict) refuses the file with that line.
    (Before, the whole file was refused: nothing of it checked.)"""
    path = _with_empty_solid(tmp_path)
    skipped = []
    parts = read_objects(path, skipped=skipped)
    assert [p.name for p in parts] == ["asm/left", "asm/right"]
    assert [str(s) for s in skipped] == ["solid 'asm/hollow:1' has no extent: it is not checked (nor its 1 "
                                         "other instance); re-export it"]
    assert [s.order for s in skipped] == [(2,)]  # its first instance's place in the file
    with pytest.raises(InputError, match="'asm/hollow:1' has no extent: it is not checked"):
        read_objects(path)


def test_a_scan_checks_the_other_solids_and_says_which_was_left_out(tmp_path):
    from click.testing import CliRunner

    from gjkcli.cli import main

    path = _with_empty_solid(tmp_path)
    got = CliRunner().invoke(main, ["scan", str(path), "--format", "json", "--no-cache"])
    assert got.exit_code == 2  # a file error, as an IFC element whose geometry failed
    doc = json.loads(got.stdout)
    assert [(p["a"], p["b"], p["status"]) for p in doc["pairs"]] == [] and doc["summary"]["objects"] == 2
    assert [e["message"] for e in doc["errors"]] == [
        "solid 'asm/hollow:1' has no extent: it is not checked (nor its 1 other instance); re-export it"]


def test_a_solid_whose_faces_share_no_edge_is_one_object(tmp_path):
    """A solid given as faces that share no edge (tscircuit's PCB exports: OpenCASCADE's reader
    makes each face a shell of its own, and no solid) is one object, as the file gives it: not
    an object per face (tscircuit's board and parts: 2,343 single triangles, 974 'collisions' of
    a part's own faces), and not dropped beside a solid of the same product (a missed collision).
    A product of that solid alone, and a product holding it and a box that overlaps it."""
    from OCP.BRep import BRep_Builder
    from OCP.TopoDS import TopoDS_Compound

    alone = write_step(tmp_path / "alone.step", [("soup", face_soup_box(10)), ("block", box(10, 10, 10, (20, 0, 0)))])
    parts = read_objects(alone)
    assert [(p.name, len(p.faces)) for p in parts] == [("soup", 12), ("block", 12)]
    np.testing.assert_allclose(parts[0].bounds, [[0, 0, 0], [10, 10, 10]], atol=1e-9)

    builder, both = BRep_Builder(), TopoDS_Compound()
    builder.MakeCompound(both)
    builder.Add(both, face_soup_box(10))
    builder.Add(both, box(10, 10, 10, (5, 0, 0)))
    mixed = write_step(tmp_path / "mixed.step", [("pair", both)])
    assert sorted(len(p.faces) for p in read_objects(mixed)) == [12, 12]  # before: the box alone
    from click.testing import CliRunner

    from gjkcli.cli import main

    got = CliRunner().invoke(main, ["scan", str(mixed), "--format", "json", "--no-cache"])
    pair = json.loads(got.stdout)["pairs"]
    assert got.exit_code == 1 and [p["status"] for p in pair] == ["collision"]
    assert pair[0]["overlap_volume"] == pytest.approx(500.0, rel=1e-6)  # 5 x 10 x 10, as OpenCASCADE's common
