"""STEP files the tests make with OpenCASCADE (XCAF, so products carry names), and OpenCASCADE's
exact answers about the solids written (BRepExtrema_DistShapeShape), the oracle the STEP tests
hold gjk's verdicts against.

OpenCASCADE 8's writers write millimetres whatever `write.step.unit` says, so a file in another
unit is written as follows: the shapes are built with their coordinates in that unit, written
(labelled millimetres), and the label is then rewritten to the unit, as CAD systems declare it
(`CONVERSION_BASED_UNIT('INCH', ...)` for inches, as trimesh's box_sides.STEP does).
"""
from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

OCP = pytest.importorskip("OCP", reason="STEP needs cadquery-ocp (OpenCASCADE)")

from OCP.BRepAlgoAPI import BRepAlgoAPI_Common  # noqa: E402
from OCP.BRepBuilderAPI import BRepBuilderAPI_Transform  # noqa: E402
from OCP.BRepExtrema import BRepExtrema_DistShapeShape  # noqa: E402
from OCP.BRepGProp import BRepGProp  # noqa: E402
from OCP.BRepPrimAPI import BRepPrimAPI_MakeBox, BRepPrimAPI_MakeCylinder  # noqa: E402
from OCP.GProp import GProp_GProps  # noqa: E402
from OCP.gp import gp_Ax1, gp_Ax2, gp_Dir, gp_Pnt, gp_Trsf, gp_Vec  # noqa: E402
from OCP.IFSelect import IFSelect_RetDone  # noqa: E402
from OCP.Interface import Interface_Static  # noqa: E402
from OCP.STEPCAFControl import STEPCAFControl_Writer  # noqa: E402
from OCP.STEPControl import STEPControl_AsIs  # noqa: E402
from OCP.TCollection import TCollection_ExtendedString  # noqa: E402
from OCP.TDataStd import TDataStd_Name  # noqa: E402
from OCP.TDocStd import TDocStd_Document  # noqa: E402
from OCP.TopExp import TopExp_Explorer  # noqa: E402
from OCP.TopLoc import TopLoc_Location  # noqa: E402
from OCP.XCAFDoc import XCAFDoc_DocumentTool  # noqa: E402


def moved(shape, *, rotate_z: float = 0.0, translate=(0.0, 0.0, 0.0), axis=(0.0, 0.0, 1.0)):
    """The shape turned by `rotate_z` radians about `axis` through the origin, then moved."""
    t = gp_Trsf()
    t.SetRotation(gp_Ax1(gp_Pnt(0, 0, 0), gp_Dir(*axis)), rotate_z)
    s = gp_Trsf()
    s.SetTranslation(gp_Vec(*translate))
    return BRepBuilderAPI_Transform(BRepBuilderAPI_Transform(shape, t, True).Shape(), s, True).Shape()


def cylinder(radius: float, height: float, *, x: float = 0.0, seam: float = 0.0):
    """A cylinder on the z axis moved to (x, 0, 0), its seam turned by `seam` radians."""
    c = BRepPrimAPI_MakeCylinder(gp_Ax2(gp_Pnt(0, 0, 0), gp_Dir(0, 0, 1)), radius, height).Shape()
    return moved(c, rotate_z=seam, translate=(x, 0.0, 0.0))


def box(dx: float, dy: float, dz: float, at=(0.0, 0.0, 0.0)):
    return BRepPrimAPI_MakeBox(gp_Pnt(*at), dx, dy, dz).Shape()


def face_soup_box(size: float, at=(0.0, 0.0, 0.0)):
    """A box as one solid whose six faces share no edge (each bounded by a polygon of its own),
    as exporters of triangle soups write them (tscircuit's boards): OpenCASCADE's reader makes
    each face a shell of its own, and no solid."""
    from OCP.BRep import BRep_Builder
    from OCP.BRepBuilderAPI import BRepBuilderAPI_MakeFace, BRepBuilderAPI_MakePolygon
    from OCP.TopoDS import TopoDS_Shell, TopoDS_Solid

    x0, y0, z0 = at
    c = [(x0 + size * i, y0 + size * j, z0 + size * k) for i in (0, 1) for j in (0, 1) for k in (0, 1)]
    builder, shell = BRep_Builder(), TopoDS_Shell()
    builder.MakeShell(shell)
    for quad in ((0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)):
        polygon = BRepBuilderAPI_MakePolygon()
        for v in quad:
            polygon.Add(gp_Pnt(*c[v]))
        polygon.Close()
        builder.Add(shell, BRepBuilderAPI_MakeFace(polygon.Wire(), True).Face())
    solid = TopoDS_Solid()
    builder.MakeSolid(solid)
    builder.Add(solid, shell)
    return solid


def _location(translate, rotate_z: float = 0.0):
    """Turned by `rotate_z` radians about z, then moved by `translate`."""
    r = gp_Trsf()
    r.SetRotation(gp_Ax1(gp_Pnt(0, 0, 0), gp_Dir(0, 0, 1)), rotate_z)
    t = gp_Trsf()
    t.SetTranslation(gp_Vec(*translate))
    return TopLoc_Location(t.Multiplied(r))


def write_step(path, parts, *, unit: str = "MM", assembly: str | None = None,
               instances=None) -> Path:
    """Write named solids to a STEP file (AP214) through XCAF.

    parts : [(product name, shape)] placed as given (no assembly), or the products of `instances`
    assembly : the root assembly's product name (then `instances` places the products)
    instances : [(product name, (x, y, z) translation)] or [(product name, translation, angle)]
        components of the assembly, repeats allowed, each turned by the angle (radians) about z
        before it is moved
    unit : the file's length unit: "MM", "INCH" or "M" (the shapes' numbers are in it)
    """
    doc = TDocStd_Document(TCollection_ExtendedString("gjk-tests"))
    tool = XCAFDoc_DocumentTool.ShapeTool_s(doc.Main())
    labels = {}
    for name, shape in parts:
        label = tool.AddShape(shape, False)
        TDataStd_Name.Set_s(label, TCollection_ExtendedString(name))
        labels[name] = label
    if assembly is not None:
        root = tool.NewShape()
        TDataStd_Name.Set_s(root, TCollection_ExtendedString(assembly))
        for name, translate, *angle in instances:
            tool.AddComponent(root, labels[name], _location(translate, *angle))
        tool.UpdateAssemblies()
    Interface_Static.SetCVal_s("write.step.schema", "AP214IS")
    writer = STEPCAFControl_Writer()
    writer.SetNameMode(True)
    assert writer.Transfer(doc, STEPControl_AsIs)
    assert writer.Write(str(path)) == IFSelect_RetDone
    if unit != "MM":
        _relabel(Path(path), unit)
    return Path(path)


_MM = re.compile(r"^(#\d+) = \( LENGTH_UNIT\(\) NAMED_UNIT\(\*\) SI_UNIT\(\.MILLI\.,\.METRE\.\) \);$",
                 re.M)


def _relabel(path: Path, unit: str) -> None:
    """Declare the file's length unit `unit` where OpenCASCADE wrote millimetres."""
    text = path.read_text()
    assert _MM.search(text), "no millimetre unit to relabel"
    if unit == "M":
        text = _MM.sub(r"\1 = ( LENGTH_UNIT() NAMED_UNIT(*) SI_UNIT($,.METRE.) );", text)
    elif unit == "INCH":
        extra = ("#900001 = ( LENGTH_UNIT() NAMED_UNIT(*) SI_UNIT(.MILLI.,.METRE.) );\n"
                 "#900002 = LENGTH_MEASURE_WITH_UNIT(LENGTH_MEASURE(25.4),#900001);\n"
                 "#900003 = DIMENSIONAL_EXPONENTS(1.,0.,0.,0.,0.,0.,0.);\n")
        text = _MM.sub(r"\1 = ( CONVERSION_BASED_UNIT('INCH',#900002) LENGTH_UNIT() "
                       r"NAMED_UNIT(#900003) );", text)
        text = text.replace("ENDSEC;\nEND-ISO-10303-21;", extra + "ENDSEC;\nEND-ISO-10303-21;")
    else:
        raise ValueError(unit)
    path.write_text(text)


def exact_distance(a, b) -> float:
    """OpenCASCADE's distance between two shapes (mm): the oracle."""
    d = BRepExtrema_DistShapeShape(a, b)
    assert d.IsDone()
    return d.Value()


def common_volume(a, b) -> float:
    """OpenCASCADE's volume of the common part of two solids (mm^3)."""
    props = GProp_GProps()
    BRepGProp.VolumeProperties_s(BRepAlgoAPI_Common(a, b).Shape(), props)
    return abs(props.Mass())


def cylinders_gap(gap: float, seam: float, radius: float = 10.0):
    """Issue 16's pair: two cylinders side by side `gap` apart, B's seam turned by `seam`
    radians (plus a half turn, so the seams face each other unless seam is 0)."""
    return (cylinder(radius, 2 * radius), cylinder(radius, 2 * radius, x=2 * radius + gap,
                                                    seam=math.pi + seam))


def subshapes(shape, kind, cast) -> list:
    """Every sub-shape of `kind` (a TopAbs_ value) of `shape`, cast (TopoDS.Edge, TopoDS.Face...)."""
    out, explorer = [], TopExp_Explorer(shape, kind)
    while explorer.More():
        out.append(cast(explorer.Current()))
        explorer.Next()
    return out
