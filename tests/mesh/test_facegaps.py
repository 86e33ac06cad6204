"""The elementary faces' tessellation error measured for all of a solid's faces at once
(gjkcli.mesh.facegaps) gives the same bits as the per-face arithmetic it replaced (written out
here as it was in gjkcli.mesh.cad: `_sphere_gap`, `_elementary_distance`), so no recorded eps
moves; and the per-face values are the surfaces' distances."""
import math

import numpy as np
import pytest

from gjkcli.engine.certify import closest_points_on_triangles
from gjkcli.engine.exact import distinct
from gjkcli.mesh.facegaps import CONE, CYLINDER, TORUS, ElementaryGaps


# -- the per-face path, as gjkcli.mesh.cad measured each face before -----------------------------

def _per_face_sphere(o, r, nodes, tris) -> float:
    corners = nodes[tris]
    near = closest_points_on_triangles(o, corners[:, 0], corners[:, 1], corners[:, 2])
    inward = r - np.linalg.norm(near - o, axis=1)
    outward = np.abs(np.linalg.norm(nodes - o, axis=1) - r)
    return float(max(inward.max(), outward.max(), 0.0))


def _per_face_revolved(kind, o, z, params, nodes, tris) -> float:
    edges = np.sort(tris[:, [0, 1, 1, 2, 2, 0]].reshape(-1, 2), axis=1)
    edges = distinct(edges[:, 0] * len(nodes) + edges[:, 1])
    ends = np.column_stack([edges // len(nodes), edges % len(nodes)])
    points = np.concatenate([nodes[ends].mean(axis=1), nodes[tris].mean(axis=1)])
    rel = points - o
    h = rel @ z
    rho = np.linalg.norm(rel - h[:, None] * z, axis=1)
    if kind == CYLINDER:
        d = rho - params[0]
    elif kind == CONE:
        a, r = params
        line = (rho - r) * np.cos(a) - h * np.sin(a)
        mirrored = (-rho - r) * np.cos(a) - h * np.sin(a)
        d = np.minimum(np.abs(line), np.abs(mirrored))
    else:
        d = np.hypot(rho - params[0], h) - params[1]
    return float(np.abs(d).max())


# -- random faces ---------------------------------------------------------------------------------

def _frame(rng):
    """A random origin and orthonormal (x, y, z)."""
    q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    return rng.uniform(-50, 50, 3), q[:, 0], q[:, 1], q[:, 2]


def _grid_face(rng, point):
    """Nodes on a random (u, v) grid of `point(u, v)` -> (k, 3), nudged off the surface, and
    its triangles (some of them turned)."""
    nu, nv = rng.integers(2, 9, 2)
    u, v = np.meshgrid(np.sort(rng.uniform(0, 1, nu)), np.sort(rng.uniform(0, 1, nv)),
                       indexing="ij")
    nodes = point(u.ravel(), v.ravel()) + rng.normal(scale=1e-3, size=(nu * nv, 3))
    k = np.arange(nu * nv).reshape(nu, nv)
    a, b, c, d = k[:-1, :-1].ravel(), k[1:, :-1].ravel(), k[1:, 1:].ravel(), k[:-1, 1:].ravel()
    tris = np.concatenate([np.column_stack([a, b, c]), np.column_stack([a, c, d])])
    flip = rng.random(len(tris)) < 0.3
    tris[flip] = tris[flip][:, [0, 2, 1]]
    return nodes, tris.astype(np.int64)


def _random_faces(seed: int, count: int):
    """[(kind, o, z, params, nodes, tris)]: spheres, cylinders, cones (some across the apex)
    and tori, each a patch of its surface at a random place."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        kind = rng.choice(["sphere", CYLINDER, CONE, TORUS])
        o, x, y, z = _frame(rng)
        u0, du = rng.uniform(0, 2 * math.pi), rng.uniform(0.1, 2.0)

        def ring(u):
            return np.cos(u)[:, None] * x + np.sin(u)[:, None] * y

        if kind == "sphere":
            r = rng.uniform(0.5, 20)
            params = (r,)
            v0, dv = rng.uniform(-1.5, 1.0), rng.uniform(0.1, 0.5)

            def point(s, t):
                v = (v0 + dv * t)[:, None]
                return o + r * np.cos(v) * ring(u0 + du * s) + r * np.sin(v) * z
        elif kind == CYLINDER:
            r = rng.uniform(0.5, 20)
            params = (r,)

            def point(s, t):
                return o + r * ring(u0 + du * s) + (10 * t)[:, None] * z
        elif kind == CONE:
            a, r = rng.uniform(0.1, 1.2), rng.uniform(0.0, 10)
            params = (a, r)
            v0 = rng.uniform(-30, 5)  # some patches past the apex (the other nappe)

            def point(s, t):
                v = (v0 + 10 * t)[:, None]
                return o + (r + v * np.sin(a)) * ring(u0 + du * s) + v * np.cos(a) * z
        else:
            big, small = rng.uniform(5, 20), rng.uniform(0.5, 4)
            params = (big, small)

            def point(s, t):
                v = (rng.uniform(0, 6) + 1.5 * t)[:, None]
                return o + (big + small * np.cos(v)) * ring(u0 + du * s) + small * np.sin(v) * z
        nodes, tris = _grid_face(rng, point)
        out.append((str(kind), o, z, params, nodes, tris))
    return out


def _batched(faces, gaps=None):
    gaps = ElementaryGaps() if gaps is None else gaps
    for kind, o, z, params, nodes, tris in sorted(faces, key=lambda f: f[0] != "sphere"):
        if kind == "sphere":
            gaps.sphere(nodes, tris, o, params[0])
        else:
            gaps.revolved(nodes, tris, kind, o, z, params)
    return gaps


def _per_face(faces):
    """The per-face path's gaps, in `per_face`'s order (spheres first)."""
    return np.array([_per_face_sphere(o, p[0], n, t) if kind == "sphere"
                     else _per_face_revolved(kind, o, z, p, n, t)
                     for kind, o, z, p, n, t in sorted(faces, key=lambda f: f[0] != "sphere")])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_all_faces_at_once_give_the_per_face_bits(seed):
    faces = _random_faces(seed, 60)
    batched = _batched(faces).per_face()
    expected = _per_face(faces)
    assert batched.tobytes() == expected.tobytes()  # the same bits, not close
    assert _batched(faces).largest() == expected.max()
    for face in faces[:10]:  # and a face alone
        assert _batched([face]).per_face().tobytes() == _per_face([face]).tobytes()


def test_the_gaps_are_the_distances_from_the_surfaces():
    """Independently of the arithmetic above: a cylinder's points lie |rho - R| from it (rho
    from a cross product), a sphere's triangles' farthest point inside it is found by sampling
    (the exact gap at least the sampled one, and not far above it)."""
    rng = np.random.default_rng(7)
    o, x, y, z = _frame(rng)
    r = 4.0
    u = np.linspace(0, 1.5, 7)
    nodes = np.concatenate([o + r * (np.cos(u)[:, None] * x + np.sin(u)[:, None] * y) + h * z
                            for h in (0.0, 3.0)])
    k = np.arange(7)
    tris = np.concatenate([np.column_stack([k[:-1], k[1:], k[1:] + 7]),
                           np.column_stack([k[:-1], k[1:] + 7, k[:-1] + 7])])
    gap = _batched([(CYLINDER, o, z, (r,), nodes, tris)]).largest()
    corners = nodes[tris]
    mids = np.concatenate([corners.mean(axis=1),
                           ((corners + corners[:, [1, 2, 0]]) / 2).reshape(-1, 3)])
    rho = np.linalg.norm(np.cross(mids - o, z), axis=1)
    assert gap == pytest.approx(np.abs(rho - r).max(), rel=1e-12)
    assert gap == pytest.approx(r * (1 - math.cos(0.125)), rel=1e-9)  # a chord's sagitta

    sphere = [f for f in _random_faces(3, 40) if f[0] == "sphere"][0]
    _, o, _, (r,), nodes, tris = sphere
    w = rng.dirichlet([1, 1, 1], size=(len(tris), 400))
    points = np.einsum("fkj,fjd->fkd", w, nodes[tris]).reshape(-1, 3)
    sampled = max(np.abs(np.linalg.norm(points - o, axis=1) - r).max(), 0.0)
    gap = _batched([sphere]).largest()
    assert sampled <= gap <= sampled + 1e-3 * r


def test_no_faces_no_gap():
    assert ElementaryGaps().largest() == 0.0
    assert len(ElementaryGaps().per_face()) == 0


def test_a_solids_faces_at_once_and_face_by_face(tmp_path):
    """On OpenCASCADE's own solids (planes, cylinders, cones, a sphere, a torus, a B-spline
    copy of a cylinder), placed by locations: `_triangles` (all the elementary faces at once)
    records the same bits as the faces' per-face gaps, the elementary ones as measured before."""
    pytest.importorskip("OCP", reason="STEP needs cadquery-ocp (OpenCASCADE)")
    from OCP.BRep import BRep_Builder, BRep_Tool
    from OCP.BRepAdaptor import BRepAdaptor_Surface
    from OCP.BRepBuilderAPI import BRepBuilderAPI_NurbsConvert
    from OCP.BRepMesh import BRepMesh_IncrementalMesh
    from OCP.BRepPrimAPI import BRepPrimAPI_MakeCone, BRepPrimAPI_MakeSphere, BRepPrimAPI_MakeTorus
    from OCP.GeomAbs import (GeomAbs_Cone, GeomAbs_Cylinder, GeomAbs_Plane, GeomAbs_Sphere,
                             GeomAbs_Torus)
    from OCP.TopAbs import TopAbs_FACE, TopAbs_REVERSED
    from OCP.TopLoc import TopLoc_Location
    from OCP.TopoDS import TopoDS, TopoDS_Compound
    from stepfiles import _location, box, cylinder, moved, subshapes

    from gjkcli.mesh import cad

    solids = [box(3, 4, 5), cylinder(2.0, 6.0, x=10.0, seam=0.3),
              moved(BRepPrimAPI_MakeCone(3.0, 0.0, 5.0).Shape(), translate=(0, 12, 0)),
              moved(BRepPrimAPI_MakeCone(4.0, 1.5, 6.0).Shape(), rotate_z=0.7,
                    axis=(1.0, 2.0, 0.5), translate=(3.0, -2.0, 11.0)),
              BRepPrimAPI_MakeSphere(2.5).Shape().Moved(_location((-8.0, 1.0, 2.0), 0.4)),
              moved(BRepPrimAPI_MakeTorus(5.0, 1.25).Shape(), rotate_z=1.1, axis=(0, 1, 1)),
              BRepBuilderAPI_NurbsConvert(cylinder(1.5, 3.0, x=-20.0), True).Shape()]
    compound = TopoDS_Compound()
    builder = BRep_Builder()
    builder.MakeCompound(compound)
    for solid in solids:
        builder.Add(compound, solid)
    deflection = 0.02
    BRepMesh_IncrementalMesh(compound, deflection, False, 0.5, False)

    kinds, per_face = set(), []
    for face in subshapes(compound, TopAbs_FACE, TopoDS.Face):
        location = TopLoc_Location()
        tri = BRep_Tool.Triangulation_s(face, location)
        n, m = tri.NbNodes(), tri.NbTriangles()
        nodes = np.array([tri.Node(k).Coord() for k in range(1, n + 1)]).reshape(n, 3)
        if not location.IsIdentity():
            M = cad._matrix(location)
            nodes = nodes @ M[:3, :3].T + M[:3, 3]
        tris = np.array([tri.Triangle(k).Get() for k in range(1, m + 1)],
                        dtype=np.int64).reshape(m, 3) - 1
        if face.Orientation() == TopAbs_REVERSED:
            tris = tris[:, [0, 2, 1]]
        surface = BRepAdaptor_Surface(face)
        kind = surface.GetType()
        kinds.add(kind)
        if kind == GeomAbs_Plane:
            continue
        uv = np.array([tri.UVNode(k).Coord() for k in range(1, n + 1)]).reshape(n, 2)
        gap = cad._chord_gap(surface, nodes, uv, tris, face, deflection)
        if kind == GeomAbs_Sphere:  # the per-face arithmetic it replaced, the same bits
            c = surface.Sphere().Position().Location()
            assert gap == _per_face_sphere(np.array([c.X(), c.Y(), c.Z()]),
                                           surface.Sphere().Radius(), nodes, tris)
        elif kind in (GeomAbs_Cylinder, GeomAbs_Cone, GeomAbs_Torus):
            shape = {GeomAbs_Cylinder: surface.Cylinder, GeomAbs_Cone: surface.Cone,
                     GeomAbs_Torus: surface.Torus}[kind]()
            p, d = shape.Position().Location(), shape.Position().Direction()
            name, params = {GeomAbs_Cylinder: (CYLINDER, lambda: (shape.Radius(),)),
                            GeomAbs_Cone: (CONE, lambda: (shape.SemiAngle(), shape.RefRadius())),
                            GeomAbs_Torus: (TORUS, lambda: (shape.MajorRadius(),
                                                            shape.MinorRadius()))}[kind]
            assert gap == _per_face_revolved(name, np.array([p.X(), p.Y(), p.Z()]),
                                             np.array([d.X(), d.Y(), d.Z()]), params(),
                                             nodes, tris)
        per_face.append(gap)
    assert {GeomAbs_Plane, GeomAbs_Cylinder, GeomAbs_Cone, GeomAbs_Sphere,
            GeomAbs_Torus} < kinds  # and the B-spline copy's faces
    assert len(kinds) == 6
    _, _, measured = cad._triangles(compound, tmp_path / "made.step", "made", deflection)
    assert measured == max(per_face) > 0


def test_other_faces_project_only_the_points_that_can_raise_the_gap():
    """A B-spline face (a NURBS copy of a sphere: its parameters crowd at the poles) with every
    point past a tiny deflection: the points projected largest gap first, stopping where the
    next one's gap cannot raise the answer, give the bits of every point projected; with a
    floor, the larger of it and that."""
    pytest.importorskip("OCP", reason="STEP needs cadquery-ocp (OpenCASCADE)")
    from OCP.BRep import BRep_Tool
    from OCP.BRepAdaptor import BRepAdaptor_Surface
    from OCP.BRepBuilderAPI import BRepBuilderAPI_NurbsConvert
    from OCP.BRepMesh import BRepMesh_IncrementalMesh
    from OCP.BRepPrimAPI import BRepPrimAPI_MakeSphere
    from OCP.GeomAbs import GeomAbs_BSplineSurface
    from OCP.TopAbs import TopAbs_FACE
    from OCP.TopLoc import TopLoc_Location
    from OCP.TopoDS import TopoDS
    from stepfiles import subshapes

    from gjkcli.mesh import cad

    solid = BRepBuilderAPI_NurbsConvert(BRepPrimAPI_MakeSphere(3.0).Shape(), True).Shape()
    BRepMesh_IncrementalMesh(solid, 0.05, False, 0.5, False)
    (face,) = subshapes(solid, TopAbs_FACE, TopoDS.Face)
    surface = BRepAdaptor_Surface(face)
    assert surface.GetType() == GeomAbs_BSplineSurface
    tri = BRep_Tool.Triangulation_s(face, TopLoc_Location())
    n, m = tri.NbNodes(), tri.NbTriangles()
    nodes = np.array([tri.Node(k).Coord() for k in range(1, n + 1)]).reshape(n, 3)
    uv = np.array([tri.UVNode(k).Coord() for k in range(1, n + 1)]).reshape(n, 2)
    tris = np.array([tri.Triangle(k).Get() for k in range(1, m + 1)], dtype=np.int64) - 1
    # every point projected, as before
    edges = distinct(np.sort(tris[:, [0, 1, 1, 2, 2, 0]].reshape(-1, 2), axis=1) @ [n, 1])
    ends = np.column_stack([edges // n, edges % n])
    points = np.concatenate([nodes[ends].mean(axis=1), nodes[tris].mean(axis=1)])
    suv = np.concatenate([uv[ends].mean(axis=1), uv[tris].mean(axis=1)])
    gaps = np.linalg.norm(cad.surface_points(surface, suv) - points, axis=1)
    project = cad._projector(face)
    every = float(np.minimum(gaps, [project(p) for p in points]).max())
    assert 0 < every < gaps.max()  # the projection lowered it
    tiny = 1e-9
    assert cad._chord_gap(surface, nodes, uv, tris, face, tiny) == every
    for floor in (0.0, every / 2, every, 2 * every):
        got = cad._chord_gap(surface, nodes, uv, tris, face, tiny, floor=floor)
        assert got == max(floor, every)
