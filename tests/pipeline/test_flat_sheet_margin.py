"""Parts laid out exactly K inside the sheet's edge pass a K clearance against the sheet (the
at-K rule that holds between parts), discs included: a disc whose top is exactly K from the
edge has a polygon vertex there and chords that reach less far, and its arcs are cut finer
until their bound no longer reaches in. A hair closer fails. shapely gives each part's distance
to the sheet's edge (discs buffered to 1e-9)."""
from __future__ import annotations

import ezdxf
import pytest
from shapely.geometry import Point, box

from gjkcli.engine.results import Status
from gjkcli.pipeline import run

SHEET = (0.0, 0.0, 1000.0, 500.0)


def nest(path, K, eps):
    """Two squares K from the bottom and left edges, a disc K (less eps) from the top edge, a
    disc K from the right edge; all on CUT, the sheet on SHEET."""
    doc = ezdxf.new(units=4)
    msp = doc.modelspace()
    x0, y0, x1, y1 = SHEET
    msp.add_lwpolyline([(x0, y0), (x1, y0), (x1, y1), (x0, y1)], close=True,
                       dxfattribs={"layer": "SHEET"})
    shapes = {}
    e = msp.add_lwpolyline([(K, K), (100, K), (100, 100), (K, 100)], close=True,
                           dxfattribs={"layer": "CUT"})
    shapes[f"CUT:{e.dxf.handle}"] = box(K, K, 100, 100)
    e = msp.add_lwpolyline([(300, K), (400, K), (400, 80), (300, 80)], close=True,
                           dxfattribs={"layer": "CUT"})
    shapes[f"CUT:{e.dxf.handle}"] = box(300, K, 400, 80)
    cy = y1 - K - 30 + eps
    e = msp.add_circle((500, cy), 30, dxfattribs={"layer": "CUT"})
    shapes[f"CUT:{e.dxf.handle}"] = Point(500, cy).buffer(30, 2 ** 14)
    e = msp.add_circle((x1 - K - 17, 250), 17, dxfattribs={"layer": "CUT"})
    shapes[f"CUT:{e.dxf.handle}"] = Point(x1 - K - 17, 250).buffer(17, 2 ** 14)
    doc.saveas(path)
    return shapes


@pytest.mark.parametrize("K", [0.5, 2.5, 5.0])
@pytest.mark.parametrize("eps", [0.0, 1e-3])
def test_parts_exactly_k_inside_the_sheet_pass_k(tmp_path, K, eps):
    path = tmp_path / "nest.dxf"
    shapes = nest(path, K, eps)
    edge = box(*SHEET).exterior
    found = run.scan([path], run.Options(clearance=K, sheet_layer="SHEET"))
    got = {p.a if p.b.startswith("sheet:") else p.b: p.status for p in found.pairs
           if "sheet:SHEET" in (p.a, p.b)}
    # shapely: at K passes (within the band's rounding of K), closer fails
    want = {name: Status.CLEARANCE for name, s in shapes.items()
            if edge.distance(s) < K - 1e-6}
    assert got == want
    assert (found.counts["clearance"] > 0) == (eps > 0)
