"""A DXF drawn with SPLINEs only gets its true size (the box of the splines' control points),
so the flattening bound is 1e-5 of it, not 1e-5 in absolute units (ezdxf keeps spline points in
a packed array whose rows have no `.x`). Checked against shapely's area of the flattened
outlines and ezdxf's own fine flattening."""
from __future__ import annotations

import ezdxf
import numpy as np
from shapely.geometry import Polygon

from gjkcli.mesh.flat import read_drawing, read_flat_objects
from gjkcli.tolerances import DEFAULT


def test_spline_only_drawing_has_its_size(tmp_path):
    doc = ezdxf.new(units=4)
    msp = doc.modelspace()
    fit = msp.add_spline([(0, 0), (100, 50), (200, 0), (100, -50), (0, 0)])
    # by control points, clamped, its ends on the first and last (the same point): closed
    ctrl = msp.add_open_spline([(300, 0), (350, 80), (450, 80), (500, 0), (450, -80), (350, -80),
                                (300, 0)])
    path = tmp_path / "splines.dxf"
    doc.saveas(path)
    d = read_drawing(path)
    pts = np.concatenate([np.array([(v.x, v.y) for v in e.flattening(1e-4)]) for e in (fit, ctrl)])
    size = float(np.linalg.norm(pts.max(axis=0) - pts.min(axis=0)))
    # the control points' box holds the curves: a little larger than the curves' own box
    assert DEFAULT.chord_rel * size <= d.chord <= 1.5 * DEFAULT.chord_rel * size
    parts, _ = read_flat_objects(path)
    assert len(parts) == 2
    for p, e in zip(sorted(parts, key=lambda p: p.bounds[0, 0]), (fit, ctrl)):
        fine = Polygon([(v.x, v.y) for v in e.flattening(1e-5)])
        ours = Polygon(p.rings[0])
        # the flattened outline lies within its bound of the curve
        assert fine.symmetric_difference(ours).area <= p.chord * fine.length * 1.01
        assert p.chord == d.chord
