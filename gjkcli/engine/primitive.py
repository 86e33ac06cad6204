"""Exact answers for a curved primitive against a part's triangles, not against its hull.

A sphere, capsule, cylinder, cone or box (`gjkcli.engine.shapes.Shape`) against a `Mesh`
(`gjkcli.engine.exact`): the mesh's hierarchy is descended with a shrinking distance bound and
GJK answers the primitive against each triangle (gjkcli/engine/csrc/primmesh.c), so that a
sphere in the hole of a torus reads clear where the torus's hull would have it inside.
`pair_query` answers any two of meshes and shapes: two meshes go to `exact_query`, two shapes
to the hull engine (`gjkcli.engine.query`, exact for convex shapes), a shape and a mesh here.

The band rule is the triangle engine's:

collision
    A depth beyond the band is proven. The witnesses, each a lower bound of any translation that
    separates the parts:
    - a triangle overlapping the primitive, by EPA's lower bound of that triangle's depth (a
      translation that separates the parts separates each triangle from the primitive);
    - a point of the mesh surface inside the primitive (its vertices), by its distance to the
      primitive's surface, found analytically;
    - a point of the primitive's core (its centre, points of its axis or of its inner box) inside
      the mesh solid (winding number), by its distance to the primitive's surface plus its
      distance to the mesh's surface: the primitive holds a ball of the first radius about the
      point and the solid one of the second, and separating two concentric balls takes the sum.
touching
    Contact within the band is proven (a triangle lies within the band) and no depth beyond it:
    either the parts do not overlap at all, or moving the primitive by the band along the contact
    normal leaves it apart from the triangles and outside the solid (so the depth is at most
    the band), or the primitive shrunk by the band is apart from the part (so no point of either
    lies deeper than the band inside the other: a peg snug in a bore).
undecided
    Neither: the parts overlap, no witness goes deeper than the band, and the band's move along
    the normals tried does not part them; or a triangle's own answer straddled the band.
clear
    Farther apart than the band, and neither inside the other.

Containment needs a solid mesh (watertight and oriented): for one that is not, only its surface
counts and the result's `note` says so.
"""
from __future__ import annotations

import dataclasses
import threading
import time
from dataclasses import asdict

import numpy as np

from gjkcli.engine import _mesh
from gjkcli.engine.exact import ExactResult, Mesh, exact_query, exact_result
from gjkcli.engine.results import PointCertificate, Result, Status
from gjkcli.engine.shapes import KINDS, Shape, rigid_pose
from gjkcli.tolerances import DEFAULT, touching_tolerance

__all__ = ["primitive_query", "pair_query", "exact_body", "swapped", "inner_distance", "core_samples"]

# Points of the primitive's core examined for lying inside the mesh: along an axis, and per axis
# of a box's inner box.
AXIS_SAMPLES = 33
BOX_SAMPLES = 3

EXIT_DEEP_TRIANGLE = "a triangle overlaps the primitive beyond the band"
EXIT_VERTEX_INSIDE = "a mesh vertex lies inside the primitive beyond the band"
EXIT_CORE_INSIDE = "the primitive lies inside the mesh beyond the band"
EXIT_TOUCH = "within the band"
EXIT_STRADDLE = "overlap not shown deeper or shallower than the band"
EXIT_CLOSEST = "closest triangle found"

_TOL = asdict(DEFAULT)
_I4 = np.eye(4)


def primitive_query(shape: Shape, mesh: Mesh, *, pose_shape=None, pose_mesh=None,
                    tolerance: float | None = None) -> ExactResult:
    """The exact answer for a convex primitive (A) and a mesh (B): clear, touching, collision or
    undecided, with evidence (see the module docstring).

    Parameters
    ----------
    shape : Shape
        A primitive (any kind but "hull"), in its own pose.
    mesh : Mesh
    pose_shape, pose_mesh : (4, 4) float64, optional
        Rigid transforms applied on top (default: as given).
    tolerance : float, optional
        Touching band half-width in model units; default DEFAULT.touching_rel x pair size.

    Returns
    -------
    ExactResult
        A is the primitive, B the mesh: `triangle_b` the mesh's witness face (-1 when none),
        `triangle_a` -1; `contained` "a in b" when a point of the primitive lies inside the solid,
        "b in a" when a vertex of the mesh lies inside the primitive.
    """
    start = time.perf_counter()
    if shape.kind == "hull":
        raise ValueError("primitive_query takes a primitive; a hull has triangles of its own")
    Rm, tm = _rigid(pose_mesh, "pose_mesh")
    Rs, ts = _rigid(pose_shape, "pose_shape")
    # mesh frame -> world: x = Rm (l + centre) + tm; the shape's pose in the mesh frame
    to_world = np.eye(4)
    to_world[:3, :3], to_world[:3, 3] = Rm, Rm @ mesh.centre + tm
    shape_world = np.eye(4)
    shape_world[:3, :3], shape_world[:3, 3] = Rs @ shape.rotation, Rs @ shape.translation + ts
    local = np.linalg.solve(to_world, shape_world)
    R, t = local[:3, :3], local[:3, 3]
    tol = touching_tolerance(max(shape.size, mesh.size), tolerance)
    ws = _workspace()
    hit = _mesh.primitive_mesh(mesh.bvh, KINDS[shape.kind], shape.dims, shape.radius, R, t,
                               shape.size, shape.size, tol, _TOL, True, ws)
    q = _Placed(shape, mesh, R, t, to_world, tol, ws)
    fields = q.decide(hit)
    return q.result(fields, hit, time.perf_counter() - start)


def pair_query(a, b, *, pose_a=None, pose_b=None, tolerance: float | None = None,
               want: str = "verdict", hulls_apart: bool = False, depth: bool = True,
               measure: bool = True) -> Result:
    """The exact answer for any two of meshes (`Mesh`) and convex shapes (`Shape`): two meshes
    by `exact_query` (want, hulls_apart, depth and measure passed on), a primitive and a mesh by
    `primitive_query` (a verdict whatever `want`), two shapes by the hull engine (exact: both are
    convex). A is `a`, B is `b` in the answer."""
    if isinstance(a, Mesh) and isinstance(b, Mesh):
        return exact_query(a, b, pose_a=pose_a, pose_b=pose_b, tolerance=tolerance, want=want,
                           hulls_apart=hulls_apart, depth=depth, measure=measure)
    if isinstance(a, Shape) and isinstance(b, Mesh):
        return primitive_query(a, b, pose_shape=pose_a, pose_mesh=pose_b, tolerance=tolerance)
    if isinstance(a, Mesh) and isinstance(b, Shape):
        return swapped(primitive_query(b, a, pose_shape=pose_b, pose_mesh=pose_a, tolerance=tolerance))
    from gjkcli.engine.query import query

    sa = a if pose_a is None else a.moved(pose_a)
    sb = b if pose_b is None else b.moved(pose_b)
    return query(sa, sb, tolerance=tolerance)


def exact_body(mesh: Mesh | None, shape: Shape):
    """What the exact test reads of a part: its triangles when it has them, else its Shape (a
    primitive: sphere, capsule, cylinder, cone, box)."""
    if mesh is not None:
        return mesh
    if shape.kind == "hull":
        raise ValueError("a hull without its triangles has no exact answer")
    return shape


def swapped(r: ExactResult) -> ExactResult:
    """The same answer with A and B exchanged."""
    contained = {"a in b": "b in a", "b in a": "a in b"}.get(r.contained, r.contained)
    return dataclasses.replace(r, normal=-np.asarray(r.normal), point_a=r.point_b, point_b=r.point_a,
                               solid_a=r.solid_b, solid_b=r.solid_a, contained=contained,
                               triangle_a=r.triangle_b, triangle_b=r.triangle_a)


# ------------------------------------------------------------------------------------------------
# the primitive's own geometry: inner distance and core points
# ------------------------------------------------------------------------------------------------

def inner_distance(shape: Shape, points) -> np.ndarray:
    """(k,) distance from each point (k, 3) (the shape's local frame) to the shape's surface for
    points inside it; 0 or less outside (the exact negated distance except outside a cone's core,
    where it is only of the right sign). Inflation counts: a point within `radius` of the core
    is inside."""
    p = np.asarray(points, dtype=np.float64).reshape(-1, 3)
    d = shape.dims
    if shape.kind == "point":
        sd = np.linalg.norm(p, axis=1)
    elif shape.kind == "segment":
        z = np.clip(p[:, 2], -d[0], d[0])
        sd = np.sqrt(p[:, 0] ** 2 + p[:, 1] ** 2 + (p[:, 2] - z) ** 2)
    elif shape.kind == "box":
        q = np.abs(p) - d
        outside = np.linalg.norm(np.maximum(q, 0.0), axis=1)
        sd = np.where(np.all(q <= 0.0, axis=1), q.max(axis=1), outside)
    elif shape.kind == "cylinder":
        rho = np.hypot(p[:, 0], p[:, 1])
        q = np.column_stack([rho - d[0], np.abs(p[:, 2]) - d[1]])
        outside = np.linalg.norm(np.maximum(q, 0.0), axis=1)
        sd = np.where(np.all(q <= 0.0, axis=1), q.max(axis=1), outside)
    elif shape.kind == "cone":
        # in the half plane (rho, z): the base z >= -h and the slant from (r, -h) to (0, h), whose
        # outward normal is (2h, r) / L; inside, the distance to the surface is the nearer of the two
        r, h = d[0], d[1]
        rho = np.hypot(p[:, 0], p[:, 1])
        length = np.hypot(r, 2.0 * h)
        slant = (2.0 * h * rho + r * (p[:, 2] - h)) / length if length > 0 else np.full(len(p), np.inf)
        sd = np.maximum(-(p[:, 2] + h), slant)
        if shape.radius > 0:  # outside the core only the sign is right: not counted
            sd = np.where(sd > 0.0, np.inf, sd)
    else:
        raise ValueError(f"no inner distance for a {shape.kind}")
    return shape.radius - sd


def core_samples(shape: Shape) -> np.ndarray:
    """(k, 3) points of the shape's core (local frame) whose being inside a mesh is examined: its
    centre, AXIS_SAMPLES points along the axis of a capsule, cylinder or cone, a BOX_SAMPLES^3
    grid of a box's inner box (the box shrunk by its smallest half extent, where the inner
    distance is largest)."""
    d = shape.dims
    if shape.kind == "point":
        return np.zeros((1, 3))
    if shape.kind in ("segment", "cylinder", "cone"):
        z = np.linspace(-d[0] if shape.kind == "segment" else -d[1],
                        d[0] if shape.kind == "segment" else d[1], AXIS_SAMPLES)
        return np.column_stack([np.zeros_like(z), np.zeros_like(z), z])
    inner = d - d.min()
    axes = [np.linspace(-e, e, BOX_SAMPLES) if e > 0 else np.zeros(1) for e in inner]
    return np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, 3)


# ------------------------------------------------------------------------------------------------
# one placed pair
# ------------------------------------------------------------------------------------------------

class _Placed:
    """A primitive placed in a mesh's own frame (l = R s + t for a point s of the shape's local
    frame); answers are moved to the world by to_world."""

    def __init__(self, shape, mesh, R, t, to_world, tol, ws):
        self.shape, self.mesh = shape, mesh
        self.R, self.t = R, t
        self.to_world = to_world
        self.tol = tol
        self.ws = ws
        self.notes = []
        self.inside = None  # (core point inside the solid, its nearest surface point), mesh frame

    def world(self, p) -> np.ndarray:
        return self.to_world[:3, :3] @ np.asarray(p, dtype=np.float64) + self.to_world[:3, 3]

    def world_dir(self, n) -> np.ndarray:
        return self.to_world[:3, :3] @ np.asarray(n, dtype=np.float64)

    # witnesses
    def vertices_inside(self):
        """The mesh vertex deepest inside the primitive: (depth, point, nearest primitive surface
        point, mesh frame) or None when none is inside."""
        m = self.mesh
        v = m.local(m.vertices[m.used])
        s_local = (v - self.t) @ self.R  # into the shape's frame
        inner = inner_distance(self.shape, s_local)
        k = int(np.argmax(inner))
        if not inner[k] > 0.0:
            return None
        return float(inner[k]), v[k]

    def core_inside(self, apart: bool):
        """The core point deepest inside the mesh solid, by inner distance plus the distance to
        the mesh's surface: (depth, point, nearest mesh point) in the mesh frame, or None.
        apart : no triangle meets the primitive, so it lies wholly inside the solid or wholly
        outside: its centre's winding number says which before any other point is examined."""
        m = self.mesh
        if not m.solid:
            self.notes.append(f"'{m.name}' is {m.not_solid_reason()}: only its surface counts, a "
                              f"primitive inside it is not detected")
            return None
        if apart:
            m.bvh.prepare_winding()
            if not abs(_mesh.winding(m.bvh, self.t[None, :], self.ws)[0]) > DEFAULT.winding_inside:
                return None
        s = core_samples(self.shape)
        inner = inner_distance(self.shape, s)
        points = s @ self.R.T + self.t
        dist, near, _ = _mesh.closest(m.bvh, points, float("inf"), 0.0, self.ws)
        order = np.argsort(-(inner + dist))
        m.bvh.prepare_winding()
        w = _mesh.winding(m.bvh, points[order], self.ws)
        inside = np.flatnonzero(np.abs(w) > DEFAULT.winding_inside)
        if len(inside) == 0:
            return None
        k = int(order[inside[0]])
        return float(inner[k] + dist[k]), points[k], near[k]

    def moved_apart(self, hit) -> bool:
        """Moving the primitive by the band along a contact normal parts it from the triangles and
        leaves its core outside the solid: the depth is at most the band."""
        normals = []
        if hit["depth_tri"] >= 0:
            normals.append(-np.asarray(hit["depth_normal"]))
            corners = self.mesh.local(self.mesh.vertices[self.mesh.faces[hit["depth_tri"]]])
            n = np.cross(corners[1] - corners[0], corners[2] - corners[0])
            normals.append(n)
            normals.append(-n)
        if self.inside is not None:  # a core point inside the solid: out through its nearest point
            p, c = self.inside
            normals.append(np.asarray(c) - np.asarray(p))
        for n in normals:
            length = np.linalg.norm(n)
            if length > 0 and self.outside(self.shape.dims, self.shape.radius,
                                           self.t + (self.tol / length) * n):
                return True
        return False

    def shallow(self) -> bool:
        """The primitive shrunk by the band (every point of it within the band of the shrunk one)
        is apart from the triangles and outside the solid: every point of the mesh inside the
        primitive lies within the band of its surface, and every point of the primitive inside the
        solid within the band of the mesh's surface, as the triangle engine measures depth (a
        point's distance to the other surface). Cones are not shrunk."""
        d, r, tol = self.shape.dims, self.shape.radius, self.tol
        kind = self.shape.kind
        if kind in ("point", "segment") or (kind == "box" and r >= tol):
            dims, radius = d, max(r - tol, 0.0)
        elif kind == "box" and r == 0.0:
            dims, radius = np.maximum(d - tol / np.sqrt(3.0), 0.0), 0.0  # a corner moves sqrt(3) x
        elif kind == "cylinder" and r == 0.0:
            step = tol / np.sqrt(2.0)  # a point of the rim moves sqrt(2) x the step
            dims, radius = np.array([max(d[0] - step, 0.0), max(d[1] - step, 0.0), 0.0]), 0.0
        else:
            return False
        return self.outside(dims, radius, self.t)

    def outside(self, dims, radius: float, t) -> bool:
        """The primitive of these dimensions, at t (the mesh frame, rotation R), is apart from
        every triangle and its centre outside the solid: it lies wholly outside the part."""
        got = _mesh.primitive_mesh(self.mesh.bvh, KINDS[self.shape.kind], dims, radius, self.R, t,
                                   self.shape.size, self.shape.size, 0.0, _TOL, True, self.ws)
        if not (got["lower"] > 0.0 and got["undecided"] == 0):
            return False
        if self.mesh.solid:
            self.mesh.bvh.prepare_winding()
            w = _mesh.winding(self.mesh.bvh, np.asarray(t)[None, :], self.ws)[0]
            if abs(w) > DEFAULT.winding_inside:
                return False
        return True

    # the verdict
    def decide(self, hit) -> dict:
        tol = self.tol
        best = None  # (depth, exit, point of both (mesh frame), point_a, point_b, normal, contained)
        if hit["depth"] > 0.0:
            best = (hit["depth"], EXIT_DEEP_TRIANGLE, hit["depth_point"], hit["depth_a"],
                    hit["depth_b"], hit["depth_normal"], None)
        if hit["distance"] <= 0.0:  # a vertex inside the primitive has a triangle meeting it
            got = self.vertices_inside()
            if got is not None and (best is None or got[0] > best[0]):
                depth, v = got
                # the vertex is on the mesh's surface and inside the primitive
                best = (depth, EXIT_VERTEX_INSIDE, v, v, v, None, "b in a")
        # proven already: the core's points would only deepen the witness, at a winding number each
        got = None if best is not None and best[0] > tol else self.core_inside(hit["distance"] > 0.0)
        if got is not None:
            self.inside = got[1], got[2]
        if got is not None and (best is None or got[0] > best[0]):
            depth, p, c = got
            best = (depth, EXIT_CORE_INSIDE, p, p, c, None, "a in b")
        if best is not None and best[0] > tol:
            depth, exit_, x, pa, pb, n, contained = best
            if n is None:
                d = np.asarray(pb) - np.asarray(pa)
                length = np.linalg.norm(d)
                n = d / length if length > 0 else self.centre_axis()
            x = self.world(x)
            return dict(status=Status.COLLISION, distance=0.0, distance_lower=0.0, depth=float(depth),
                        exit=exit_, normal=self.world_dir(n), point_a=self.world(pa),
                        point_b=self.world(pb), certificate=PointCertificate(x),
                        contained=contained, triangle_b=hit["depth_tri"])
        if hit["undecided"]:
            return self.straddle(hit, f"{hit['undecided']} triangle answers straddle the band")
        if hit["distance"] > tol:
            return self.apart(hit, Status.CLEAR, EXIT_CLOSEST)
        if (hit["distance"] > 0.0 and self.inside is None) or self.moved_apart(hit) or self.shallow():
            return self.apart(hit, Status.TOUCHING, EXIT_TOUCH)
        return self.straddle(hit, "neither the band's move along the contact normal nor the band's "
                                  "shrinking parts them")

    def centre_axis(self) -> np.ndarray:
        n = -self.t
        length = np.linalg.norm(n)
        return n / length if length > 0 else np.array([1.0, 0.0, 0.0])

    def apart(self, hit, status: Status, exit_: str) -> dict:
        pa, pb = np.asarray(hit["point_a"]), np.asarray(hit["point_b"])
        d = pb - pa
        length = np.linalg.norm(d)
        n = d / length if length > 0 else (-np.asarray(hit["depth_normal"])
                                           if hit["depth_tri"] >= 0 else self.centre_axis())
        certificate = PointCertificate(self.world(pa)) if hit["distance"] == 0.0 else None
        return dict(status=status, distance=float(hit["distance"]),
                    distance_lower=float(min(hit["lower"], hit["distance"])), exit=exit_,
                    normal=self.world_dir(n), point_a=self.world(pa), point_b=self.world(pb),
                    certificate=certificate, triangle_b=hit["tri"])

    def straddle(self, hit, why: str) -> dict:
        self.notes.append(f"undecided: {why}")
        fields = self.apart(hit, Status.UNDECIDED, EXIT_STRADDLE)
        fields["certificate"] = None
        return fields

    def result(self, fields: dict, hit, elapsed: float) -> ExactResult:
        return exact_result(fields, tolerance=self.tol, elapsed=elapsed, iterations=int(hit["visits"]),
                            triangle_pairs=int(hit["tests"]), solid_a=True, solid_b=self.mesh.solid,
                            note="; ".join(self.notes))


def _rigid(pose, what: str):
    if pose is None:
        return _I4[:3, :3], np.zeros(3)
    got = rigid_pose(pose)
    if got is None:
        raise ValueError(f"{what} must be a finite rigid transform (rotation and translation, last "
                         f"row 0 0 0 1)")
    return got


def _workspace():
    """The calling thread's traversal workspace, made once."""
    ws = getattr(_local, "ws", None)
    if ws is None:
        ws = _local.ws = _mesh.Workspace()
    return ws


_local = threading.local()
