"""One pair's own answer, the same wherever a run asks for it: a scan's narrow phase (every pose
of `--poses`), a robot's motion between waypoints (`gjkcli.pipeline.motion`) and the
collision matrix (`gjkcli.pipeline.matrix`).

A part that has triangles (a mesh, or a box: its 12 triangles are the box exactly) is answered
on them (`gjkcli.engine.exact`); a curved primitive (sphere, capsule, cylinder, cone) against a
part with triangles by `gjkcli.engine.primitive`; two primitives are their own hulls.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from gjkcli.engine.results import (
    DistanceCertificate, PointCertificate, Result, Status, TrianglesCertificate)

__all__ = ["box_triangles", "part_mesh", "exact_pair", "with_part_certificate", "primitive_note"]

# The 12 outward triangles of the corners (x, y, z) in {-1, 1}^3 listed x-major: corner 4x + 2y + z.
BOX_FACES = np.array([[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
                      [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]], dtype=np.int64)


def box_triangles(shape):
    """((8, 3) corners, (12, 3) faces) of a box Shape as placed, or None for another shape (a
    rounded box included: its corners are curved)."""
    if shape.kind != "box" or shape.radius != 0:
        return None
    corners = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]) * shape.dims
    return corners @ shape.rotation.T + shape.translation, BOX_FACES


def part_mesh(shape=None, vertices=None, faces=None, *, watertight: bool | None = None, name: str):
    """The part's triangles and their hierarchy (`gjkcli.engine.exact.Mesh`): the mesh's, a
    box's own 12, or None for a curved primitive."""
    from gjkcli.engine.exact import Mesh

    if vertices is not None:
        return Mesh(vertices, faces, watertight=watertight, name=name)
    box = box_triangles(shape) if shape is not None else None
    return None if box is None else Mesh(*box, watertight=True, name=name)


def exact_pair(mesh_a, shape_a, mesh_b, shape_b, *, pose_a=None, pose_b=None, tolerance=None,
               want: str = "verdict", depth: bool = True):
    """The parts' own answer at their poses (4, 4): a part's triangles (`part_mesh`), else its
    primitive Shape, through `gjkcli.engine.primitive.pair_query` (the single-pose run's); None
    when neither part has triangles (two primitives: each is its own hull, the hulls' answer is
    theirs). depth=False: a collision of two meshes whose surfaces cross beyond the band is
    proved by the first point found deeper than the band inside the other, and not measured
    (`gjkcli.engine.exact.exact_query`). A pair the triangle test leaves undecided is settled
    by the run's policy (`gjkcli.pipeline.policy.settle`: a fit of two closed parts by its common
    solid, an open part by how deep it reaches into a closed one), as the single-pose run's."""
    from gjkcli.engine.primitive import exact_body, pair_query
    from gjkcli.pipeline.policy import settle

    if mesh_a is None and mesh_b is None:
        return None
    a, b = exact_body(mesh_a, shape_a), exact_body(mesh_b, shape_b)
    r = pair_query(a, b, pose_a=pose_a, pose_b=pose_b, tolerance=tolerance, want=want, depth=depth)
    return settle(r, a, b, pose_a, pose_b)


def with_part_certificate(r: Result) -> Result:
    """The triangle test's proof in the terms of the parts: crossing triangles, a point inside
    both, or a certified lower bound of the distance."""
    if r.status is Status.COLLISION and getattr(r, "contained", None) is None \
            and getattr(r, "triangle_a", -1) >= 0 and getattr(r, "triangle_b", -1) >= 0 \
            and r.certificate is not None:
        return dataclasses.replace(r, certificate=TrianglesCertificate(
            int(r.triangle_a), int(r.triangle_b), np.asarray(r.certificate.point)))
    if r.status is Status.CLEAR:
        return dataclasses.replace(r, certificate=DistanceCertificate(float(r.distance_lower)))
    if r.status is Status.COLLISION and r.certificate is None:
        return dataclasses.replace(r, certificate=PointCertificate(np.asarray(r.point_a)))
    return r


def primitive_note(names, meshed, a: int, b: int, conservative: bool) -> str | None:
    """Why a pair with a curved primitive kept the hulls' answer: only --mode hull asks for it
    (every other mode answers such a pair on the other part's triangles)."""
    if not conservative or (meshed[a] and meshed[b]):
        return None
    curved = [names[k] for k in (a, b) if not meshed[k]]
    return (f"{' and '.join(curved)}: a curved primitive answered on the other part's hull "
            f"(--mode hull): a bound, not the parts' answer")
