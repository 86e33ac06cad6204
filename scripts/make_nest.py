"""Write a DXF nest of sheet parts (ezdxf): the input of benchmarks/bench_nest.py, of the 2D
tests and of samples/nest.dxf.

Parts sit in a grid of cells, one part per cell, each of one of five kinds drawn as a CAD
program draws them: a rectangle (LWPOLYLINE), a slot (LWPOLYLINE with two half-circle bulges),
a disc (CIRCLE), an L bracket (LWPOLYLINE, not convex) and a plate with a round hole (LWPOLYLINE
and CIRCLE), a third of the plates with a slug (CIRCLE) in the hole, clear of it. Most parts keep
`gap` to their neighbours; a share of right-hand neighbours is moved to touch (gap 0, rectangles
facing rectangles), to sit within the kerf (gap kerf / 2) or to overlap (by kerf). The sheet's
outline is drawn on the layer SHEET, `margin` around the grid, and a few parts of the last row
are moved to cross it.

    python scripts/make_nest.py OUT.dxf [--parts N] [--seed S] [--share F]

samples/flat/nest.dxf is `python scripts/make_nest.py samples/flat/nest.dxf --parts 30 --seed 5
--share 0.3`: 30 cells, two touching pairs, three within the 0.5 kerf, two overlapping, four
slugs in plate holes, two discs over the sheet's top edge.
"""
from __future__ import annotations

import argparse
import math

import numpy as np

CELL = 20.0  # mm
GAP = 4.0  # between the parts of neighbouring cells, at least
KERF = 0.5


def make_nest(path, parts: int = 10_000, seed: int = 0, *, kerf: float = KERF,
              share_special: float = 0.06, off_sheet: int = 3) -> dict:
    """Write the nest; return what was planted: {"touch": k, "kerf": k, "overlap": k, "slugs": k}."""
    import ezdxf

    rng = np.random.default_rng(seed)
    cols = max(2, int(math.ceil(math.sqrt(parts))))
    rows = int(math.ceil(parts / cols))
    doc = ezdxf.new(units=4)
    msp = doc.modelspace()
    planted = {"touch": 0, "kerf": 0, "overlap": 0, "slugs": 0, "off_sheet": 0}
    size = CELL - GAP
    k = 0
    for r in range(rows):
        shift = 0.0  # how far this cell's part moves left (towards its left neighbour)
        prev_kind = None
        prev_shift = 0.0
        for c in range(cols):
            if k >= parts:
                break
            x0, y0 = c * CELL, r * CELL
            # only next to a part in its place, so that the planted gap is the gap
            special = rng.random() < share_special and c > 0 and prev_shift == 0.0
            kind = rng.choice(["rect", "slot", "disc", "bracket", "plate"])
            if special:
                what = rng.choice(["touch", "kerf", "overlap"])
                if what == "touch" and prev_kind == "rect":
                    kind, shift = "rect", GAP
                elif what == "kerf":
                    shift = GAP - kerf / 2
                elif what == "overlap":
                    shift = GAP + kerf
                else:
                    what = None
                if what is not None:
                    planted[what] += 1
            else:
                shift = 0.0
            x = x0 - shift
            if kind == "rect":
                msp.add_lwpolyline([(x, y0), (x + size, y0), (x + size, y0 + size), (x, y0 + size)], close=True)
            elif kind == "slot":
                h = size / 2
                msp.add_lwpolyline([(x + h / 2, y0, 0, 0, 0), (x + size - h / 2, y0, 0, 0, 1),
                                    (x + size - h / 2, y0 + h, 0, 0, 0), (x + h / 2, y0 + h, 0, 0, 1)],
                                   format="xyseb", close=True)
                # the slot's left end is a half circle reaching x: the part spans [x, x + size]
            elif kind == "disc":
                msp.add_circle((x + size / 2, y0 + size / 2), size / 2)
            elif kind == "bracket":
                t = size / 4
                msp.add_lwpolyline([(x, y0), (x + size, y0), (x + size, y0 + t), (x + t, y0 + t),
                                    (x + t, y0 + size), (x, y0 + size)], close=True)
            else:
                msp.add_lwpolyline([(x, y0), (x + size, y0), (x + size, y0 + size), (x, y0 + size)], close=True)
                msp.add_circle((x + size / 2, y0 + size / 2), size / 4)
                if rng.random() < 1 / 3:
                    msp.add_circle((x + size / 2, y0 + size / 2), size / 8)
                    planted["slugs"] += 1
            prev_kind, prev_shift = kind, shift
            k += 1
    w, h = cols * CELL - GAP, rows * CELL - GAP
    m = GAP / 2
    msp.add_lwpolyline([(-m, -m), (w + m, -m), (w + m, h + m), (-m, h + m)], close=True,
                       dxfattribs={"layer": "SHEET"})
    for q in range(min(off_sheet, cols // 3)):  # discs over the top edge, 1 above the top row
        msp.add_circle((q * CELL * 3 + CELL / 2, h + 3), 2.0)
        planted["off_sheet"] += 1
    doc.saveas(path)
    return planted


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--parts", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--share", type=float, default=0.06, help="share of cells moved against their neighbour")
    args = ap.parse_args(argv)
    print(make_nest(args.out, args.parts, args.seed, share_special=args.share))


if __name__ == "__main__":
    main()
