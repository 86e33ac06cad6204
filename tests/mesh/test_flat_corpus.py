"""Real drawings from the programs that write them (tests/data/third_party/flat: Boxes.py's
laser-cut parts, Deepnest's test inputs, OpenSCAD's and QCad's dxflib DXFs, LibreCAD's part
library), each scanned by gjk and every pair checked against shapely on the parts' rings:

- clear: shapely's distance is beyond the pair's band;
- touching: shapely's distance is within the band, and the parts' overlap (if any) is thinner
  than the band (it vanishes when shrunk by the band);
- collision: the parts share area.

No file may fail with anything but gjk's own one-line input errors; none does here.

And what was read, against an independent reading of the same file (ezdxf's recover mode and
its `path` tools with INSERTs decomposed; svgelements' paths sampled finely, the root viewBox
undone as gjk's coordinates are the file's): every vertex of every part lies on the drawing's
line work, and the boundary of every face of the line work (shapely's noding and polygonize)
lies on the parts' rings (or on open line work gjk says it left out): nothing invented, no
closed loop left out.
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


DXF_KINDS = {"LINE", "LWPOLYLINE", "POLYLINE", "CIRCLE", "ARC", "ELLIPSE", "SPLINE"}


def line_work(path):
    """The drawing's lines as shapely LineStrings, read without gjk."""
    if path.suffix == ".dxf":
        from ezdxf import disassemble, recover

        import ezdxf

        try:
            doc = ezdxf.readfile(str(path))
        except Exception:  # noqa: BLE001
            doc = None
        try:
            if doc is None:
                doc, _ = recover.readfile(str(path))
        except Exception:  # noqa: BLE001 - a table recover mode stops in: read without it
            import io
            import re

            text = re.sub(rb"0\r?\nSECTION\r?\n\s*2\r?\nTABLES\r?\n.*?\n\s*0\r?\nENDSEC\r?\n", b"",
                          path.read_bytes(), count=1, flags=re.S)
            doc, _ = recover.read(io.BytesIO(text))
        out = []
        def pieces(e):  # polylines as their LINEs and ARCs; curves by their own flattening
            if e.dxftype() in ("LWPOLYLINE", "POLYLINE"):
                for v in e.virtual_entities():
                    yield from pieces(v)
            elif e.dxftype() == "LINE":
                yield [(e.dxf.start.x, e.dxf.start.y), (e.dxf.end.x, e.dxf.end.y)]
            elif e.dxftype() in ("CIRCLE", "ARC", "ELLIPSE", "SPLINE"):
                yield [(v.x, v.y) for v in e.flattening(1e-5)]

        for e in disassemble.recursive_decompose(doc.modelspace()):
            if e.dxftype() in DXF_KINDS:
                out.extend(shapely.LineString(p) for p in pieces(e) if len(p) >= 2)
        return out
    import svgelements as se

    svg = se.SVG.parse(str(path), reify=True)
    undo = ~se.Matrix(svg.viewbox_transform) if svg.viewbox is not None and svg.viewbox_transform else None
    out = []
    for e in svg.elements():
        if not isinstance(e, se.Shape) or isinstance(e, se.SVG):
            continue
        p = abs(se.Path(e))
        if undo is not None:
            p = abs(p * undo)
        for sub in p.as_subpaths():
            pts = []
            for seg in sub:
                if isinstance(seg, se.Move) or seg.start is None or seg.end is None:
                    if isinstance(seg, se.Move) and seg.end is not None:
                        pts.append([seg.end.x, seg.end.y])
                    continue
                t = np.linspace(0, 1, 2 if isinstance(seg, (se.Line, se.Close)) else 257)
                pts.extend(np.asarray(seg.npoint(t)).reshape(-1, 2).tolist())
            if len(pts) >= 2:
                out.append(shapely.LineString(pts))
    return out


def farthest(points: np.ndarray, lines) -> float:
    """The largest distance from the points to the lines (an STRtree over their segments: the
    nearest segment of each point)."""
    coords = [shapely.get_coordinates(g) for g in shapely.get_parts(lines)]
    segs = shapely.linestrings(np.concatenate([np.stack([c[:-1], c[1:]], axis=1) for c in coords if len(c) > 1]))
    _, dist = shapely.STRtree(segs).query_nearest(shapely.points(points), return_distance=True,
                                                  all_matches=False)
    return float(dist.max()) if len(dist) else 0.0


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_what_was_read_is_the_drawings_line_work(path):
    parts, sheet = read_flat_objects(path)
    rings = [r for p in parts for r in p.rings] + (list(sheet.rings) if sheet is not None else [])
    raw = line_work(path)
    lines = shapely.union_all(raw)
    size = max(float(np.ptp(parts.vertices[:, 0])), float(np.ptp(parts.vertices[:, 1])), 1e-9)
    tol = 1e-6 * size + 2 * max(p.chord for p in parts)
    # every part's vertex on the line work (the reader's vertices lie on the curves)
    assert farthest(parts.vertices, lines) <= tol
    # every face of the line work bounded by the parts' rings, or by open line work that gjk
    # leaves out with a warning where it does not end on an outline (a centre mark's cross over
    # a hole, a dimension line): no closed loop is lost
    open_work = [g for g in raw if not g.is_closed]
    rings = shapely.union_all([shapely.LinearRing(r) for r in rings] + open_work)
    faces = shapely.get_parts(shapely.polygonize(shapely.get_parts(lines)))
    edges = [shapely.get_coordinates(f.exterior) for f in faces if f.area > (1e-4 * size) ** 2]
    if edges:  # (a sliver between two strokes drawn a hair apart is no face)
        assert farthest(np.concatenate(edges), rings) <= tol
