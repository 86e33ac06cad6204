"""Two closed parts whose common solid is thin on average but holds a point deeper than the band
(`gjkcli.pipeline.policy.common_verdict`): a case of issue 40's seeded sweep (tests/sweep.py,
`sweep_undecided.py --pairs 30` on its five generated parts) that the mean-thickness rule called
touching, a thin torus pressed 1.05 bands into a torus at a band of 5e-2 of their size. The
construction bounds the depth by 1.05 bands; the exact signed distance of
tests/exact_distance.py judges the certificate: a collision.

The run's policy finds it by a point inside both (`deeper_in_common`, searched first), whose
distances to the two surfaces add up beyond the band; the search on every triangle
(`thin_or_deeper`, asked where that finds none) finds a point of the thin torus's surface deeper
than the band inside the torus."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("fcl")
pytest.importorskip("manifold3d")
pytest.importorskip("trimesh")

import sweep  # noqa: E402

BAND = 5e-2
# The sweep's placement of the thin torus (seed 40, 30 pairs drawn of the five parts' 15).
POSE = np.array([[-0.43857943982222514, -0.6878371454885641, -0.5783840733036893, -0.3987795109241131],
                 [0.05431257110583443, 0.6221208874525832, -0.7810350478788286, 0.03093245863521152],
                 [0.8970497308316285, -0.37395943988801, -0.23549122644707765, -0.2884273072856159],
                 [0.0, 0.0, 0.0, 1.0]])


def _case():
    parts = {p.name: p for p in sweep.generated()}
    a, b = parts["torus"], parts["thin torus"]
    return sweep.Case(a, b, POSE, BAND, BAND, "depth", 1.05, None)


def _depths(case, point) -> list:
    """The exact signed distances (positive inside) of `point` to the torus and to the thin torus
    as placed: the judge of each certificate."""
    from exact_distance import signed_distance

    import trimesh

    placed = case.b.vertices @ POSE[:3, :3].T + POSE[:3, 3]
    return [float(signed_distance(trimesh.Trimesh(vertices, faces, process=False), [point])[0])
            for vertices, faces in ((case.a.vertices, case.a.faces), (placed, case.b.faces))]


def test_a_thin_common_solid_with_a_point_deeper_than_the_band_is_a_collision():
    case = _case()
    assert sweep.deepest_inside(case.a, case.b, POSE) > BAND  # the oracle: a collision
    raw, r = sweep.answer(case)
    assert raw.status.value == "undecided"  # the triangle test's search finds no such point
    assert r.status.value == "collision", r.note
    assert BAND < r.depth <= 1.05 * BAND * (1 + 1e-9)  # the construction bounds the depth
    # its certificate, judged by the exact signed distances: inside both, as deep as reported
    inside = _depths(case, r.certificate.point)
    assert min(inside) > 0  # inside both
    assert sum(inside) >= r.depth * (1 - 1e-12)  # as deep as reported, beyond the band


def test_the_triangles_search_alone_finds_a_point_of_a_surface_deeper_than_the_band():
    from gjkcli.engine.exact import Mesh
    from gjkcli.mesh.overlap import overlap
    from gjkcli.pipeline.policy import EXIT_THIN, thickness_verdict, thin_or_deeper

    case = _case()
    raw, _ = sweep.answer(case)
    placed = case.b.vertices @ POSE[:3, :3].T + POSE[:3, 3]
    a, b = Mesh(case.a.vertices, case.a.faces, name="a"), Mesh(case.b.vertices, case.b.faces, name="b")
    thin = thickness_verdict(raw, overlap("a", case.a.vertices, case.a.faces, "b", placed, case.b.faces))
    assert thin.status.value == "touching" and thin.exit == EXIT_THIN  # the mean alone: touching
    r = thin_or_deeper(thin, a, b, None, POSE)
    assert r.status.value == "collision", r.note
    assert BAND < r.depth <= 1.05 * BAND * (1 + 1e-9)
    in_torus, in_thin = _depths(case, r.certificate.point)
    assert in_torus > BAND
    assert abs(in_thin) < 1e-9  # on the thin torus's surface
