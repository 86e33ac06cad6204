"""Real drawings from the programs that write them (tests/data/third_party/flat: Boxes.py's
laser-cut parts, Deepnest's test inputs, OpenSCAD's and QCad's dxflib DXFs, LibreCAD's part
library), each scanned by gjk and every pair checked against shapely on the parts' rings:

- clear: shapely's distance is beyond the pair's band;
- touching: shapely's distance is within the band, and the parts' overlap (if any) is thinner
  than the band (it vanishes when shrunk by the band);
- collision: the parts share area.

No file may fail with anything but gjk's own one-line input errors; none does here.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import shapely
from shapely.geometry import Polygon

from gjkcli.engine.results import Status
from gjkcli.mesh.flat import read_flat_objects
from gjkcli.pipeline import run

CORPUS = Path(__file__).resolve().parents[1] / "data" / "third_party" / "flat"
FILES = sorted(p for p in CORPUS.glob("*") if p.suffix in (".svg", ".dxf"))


def disagreements(path):
    parts, _ = read_flat_objects(path)
    found = run.scan([path], run.Options(all_pairs=True))
    assert not found.errors
    names = [o.name for o in found.objects][:len(parts)]
    got = {tuple(sorted((p.a, p.b))): p for p in found.pairs}
    shapes = [Polygon(p.rings[0], holes=list(p.rings[1:])) for p in parts]
    size = max(float(np.ptp(parts.vertices[:, 0])), float(np.ptp(parts.vertices[:, 1])), 1e-9)
    eps = 1e-9 * size
    bad = []
    tree = shapely.STRtree(shapes)
    for a, b in zip(*tree.query(shapes, predicate="dwithin", distance=1e-3 * size)):
        if a >= b:
            continue
        pair = got.get(tuple(sorted((names[a], names[b]))))
        status = pair.status if pair is not None else Status.CLEAR
        band = pair.result.tolerance if pair is not None else 0.0
        d = shapes[a].distance(shapes[b])
        overlap = shapes[a].intersection(shapes[b])
        if status is Status.CLEAR and d <= band - eps:
            bad.append((names[a], names[b], "clear", d, band))
        if status is Status.TOUCHING and d > band + eps:
            bad.append((names[a], names[b], "touching", d, band))
        if status is Status.COLLISION and overlap.area <= 0:
            bad.append((names[a], names[b], "collision", overlap.area, band))
        if status in (Status.CLEAR, Status.TOUCHING) and not overlap.buffer(-1.01 * band - eps).is_empty:
            bad.append((names[a], names[b], status.value, overlap.area, band))
    return bad, found, parts


def test_the_corpus_is_there():
    assert len(FILES) >= 20
    kinds = {p.name.split("__")[0] for p in FILES}
    assert kinds == {"boxes", "deepnest", "openscad", "librecad"}


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_every_pair_agrees_with_shapely(path):
    bad, found, parts = disagreements(path)
    assert bad == []
    assert len(parts) >= 1


def test_what_the_readers_had_to_do_is_said():
    """Branching line work (Boxes.py, dxflib) is read as an arrangement, LibreCAD's library files
    need recover mode, and decimal commas are recovered: each says so in a note."""
    notes = {p.name: read_flat_objects(p)[0][0].notes for p in FILES}
    assert any("planar arrangement" in n for n in notes["boxes__FanHole.svg"])
    assert any("planar arrangement" in n for n in notes["openscad__polygon-mesh.dxf"])
    assert any("recover mode" in n for n in notes["librecad__screw.dxf"])
    assert any("recovered invalid floating point" in n
               for n in notes["openscad__nothing-decimal-comma-separated.dxf"])
