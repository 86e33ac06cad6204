"""Precast floor slabs fitted into their floor's slots by a few tens of nanometres: the fits of
Schependomlaan's ROOT-breedplaatvloeren.ifczip (ArchiCAD 18), five pairs that stayed undecided.

Each slab meets the floor on a face 60 mm high and up to 4.7 m long, 35 to 70 nm into it, while
the slab's other side lies on another face of the floor: no move within the band parts them, and
no point lies deeper than the band, so the triangle test leaves them undecided and the run judges
them by their common solid's mean thickness, 2 x volume / area
(`gjkcli.pipeline.policy.mean_thickness`). That solid is a slab a few tens of nanometres thick;
planes told apart to 1e-9 of its size (a few micrometres) took its two faces for the two sides of
a sheet of no thickness, cancelled them, and left the mean of its edges (59 mm). The judge here
is manifold3d's common solid of the two parts' triangles in double precision: its volume over
half its whole surface area, the thickness of a slab, is within the band for each of the five.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("ifcopenshell")
manifold3d = pytest.importorskip("manifold3d")

from gjkcli.engine.results import Status  # noqa: E402
from gjkcli.mesh.load import read_objects  # noqa: E402
from gjkcli.pipeline import run as pipeline  # noqa: E402
from gjkcli.pipeline.refine import EXIT_THIN  # noqa: E402

SCHEPENDOMLAAN = Path(__file__).resolve().parents[1] / "data" / "third_party" / "schependomlaan"
MODEL = SCHEPENDOMLAAN / "ROOT-breedplaatvloeren.ifczip"

# the five pairs (GlobalIds) the run left undecided
FITS = [("0QMRbnWY93Av6dpvLwMXTd", "08ZXIC9eHDWRVFOlPhj72E"), ("0QMRbnWY93Av6dpvLwMXTd", "1dCrpUZmvC4umTbPe7ddOk"),
        ("0QMRbnWY93Av6dpvLwMXTd", "1kiS27OUHAY8wNtz_qX8bj"), ("0QMRbnWY93Av6dpvLwMXTd", "2hh9UjWIL2w9WwuMjzqstz"),
        ("1S4kav8FL1RQylSmEgz4YB", "3RcgO_0A18ORamoBzt$oQ9")]


def _slab_thickness(a, b) -> float:
    """2 x volume / whole surface area of manifold3d's common solid of parts a and b, both moved
    by one offset towards the origin (double precision)."""
    shift = np.minimum(a.vertices.min(axis=0), b.vertices.min(axis=0))

    def solid(p):
        return manifold3d.Manifold(manifold3d.Mesh64(vert_properties=np.ascontiguousarray(p.vertices - shift),
                                                     tri_verts=np.ascontiguousarray(p.faces, dtype=np.uint64)))

    common = solid(a) ^ solid(b)
    return 2 * common.volume() / common.surface_area()


def test_precast_slabs_fitted_into_their_floor_are_touching():
    found = pipeline.scan([MODEL], pipeline.Options(all_pairs=True, jobs=1))
    assert not [p for p in found.pairs if p.status is Status.UNDECIDED]
    by_ids = {frozenset((p.a.split()[-1], p.b.split()[-1])): p for p in found.pairs}
    parts = {p.element.global_id: p for p in read_objects(MODEL)}
    for a, b in FITS:
        pair = by_ids[frozenset((a, b))]
        assert pair.status is Status.TOUCHING and pair.result.exit == EXIT_THIN, pair.note
        band = float(pair.result.tolerance)
        thickness = _slab_thickness(parts[a], parts[b])
        assert 0 < thickness < 1e-4 * band
        # the note's mean thickness is the slab's, not its edges'
        assert "2 x volume / area" in pair.note


def test_a_bolt_whose_facets_lie_on_its_nut_s_bore_is_touching(tmp_path):
    """A railing's bolt in its nut block (Schependomlaan's HiCAD railings): every facet of the
    bolt's shank lies on one of the bore's, so manifold3d's common solid is sheets alone, two
    faces back to back on each facet, holding only its rounding's volume. Those sheets cancel;
    the volume over what area is left would be a mean of 1.9 mm, beyond the band, where the
    solid's volume over its whole area, far thinner than planes are told apart, is the mean
    (`mean_thickness`): touching, as the bolt does. The judge: manifold3d's common volume, a
    billionth of the bolt's."""
    import trimesh

    from fits import checked_pair

    bolt, nut = (trimesh.load(SCHEPENDOMLAAN / name, process=False) for name in ("tapbout_M8x16.off", "moerblok_M8.off"))
    pair = checked_pair(tmp_path, bolt, nut, None, ("bolt", "nut"))
    assert pair.status is Status.TOUCHING and pair.result.exit == EXIT_THIN, pair.note
    shift = bolt.vertices.min(axis=0)

    def solid(m):
        return manifold3d.Manifold(manifold3d.Mesh64(vert_properties=np.ascontiguousarray(m.vertices - shift),
                                                     tri_verts=np.ascontiguousarray(m.faces, dtype=np.uint64)))

    common = (solid(bolt) ^ solid(nut)).volume()
    assert 0 <= common < 1e-9 * solid(bolt).volume()
