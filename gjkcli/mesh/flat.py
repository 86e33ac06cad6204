"""Flat drawings (SVG, DXF) to named 2D parts: closed contours, holes by nesting, in file units.

SVG is read by svgelements, DXF by ezdxf; nothing here parses either format by hand.

- **Contours.** Every closed shape of the file becomes a ring of (x, y) points in the file's own
  coordinates: SVG user units (the root viewBox's scaling is undone, nested ``transform``s are
  applied, y is not flipped), DXF world coordinates (block INSERTs placed by their full
  transform, OCS entities in WCS). Curves are flattened with every vertex on the curve and no
  point of a chord farther than `chord` from it (see `chord_for`); the bound is carried on the
  part as `chord`, so a pipeline can widen its verdicts by it. Open pieces (DXF LINEs and ARCs
  drawn one by one, an open SVG subpath) are chained end to end into closed loops where their
  ends meet within the join tolerance; what stays open is left out and counted in `open_pieces`.
- **Parts.** A contour inside another is a hole of it, one inside that hole is a part again
  (even-odd nesting across the whole file). An SVG element with ``fill-rule: nonzero`` (the SVG
  default) keeps a subpath that winds the same way as the subpath around it as filled area: it
  is neither a hole nor a part. `read_flat_objects` gives one part per outer contour with its
  holes; `load_flat_part` gives the whole file as one part (all rings, even-odd).
- **Names.** SVG: the element's ``id`` (else "<tag><k>"). DXF: "<block>@<handle>" for a
  contour from an INSERT, "<layer>:<handle>" for one drawn in model space.
- **Units.** DXF: ``$INSUNITS``. SVG: the root's width unit when the viewBox maps one user
  unit to one of it ("mm"), "<s> <unit>" when it maps one user unit to s of them, "px" for a
  width in units without a viewBox, None when the file does not say.

Every failure to read a file is an InputError with one line naming the file and the cause.
ezdxf and svgelements are imported on the first read.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gjkcli import extras
from gjkcli.errors import InputError
from gjkcli.limits import current as current_limits
from gjkcli.tolerances import DEFAULT

__all__ = ["FLAT_TYPES", "FlatPart", "FlatParts", "Drawing", "is_flat", "read_drawing", "load_flat_part",
           "read_flat_objects", "chord_for", "signed_area", "inside", "orient_even_odd"]

FLAT_TYPES = ("svg", "dxf")

# $INSUNITS codes (the DXF reference's table) in the spellings gjk's unit notes use.
_INSUNITS = {1: "in", 2: "ft", 3: "mi", 4: "mm", 5: "cm", 6: "m", 7: "km", 8: "microinch",
             9: "mil", 10: "yd", 11: "angstrom", 12: "nm", 13: "um", 14: "dm"}


@dataclass(frozen=True, eq=False)
class FlatPart:
    """One 2D part.

    name : str
        As in the module docstring; "<prefix>:<name>" when read with a prefix.
    source : str
        The path as the user gave it.
    rings : tuple of (n, 2) float64
        Closed contours (the last vertex is not repeated), even-odd: a point is in the part when
        an odd number of rings enclose it. For a scan's part, rings[0] is the outer contour and
        the rest its holes.
    units : str or None
        As the file states them.
    chord : float
        How far the rings may lie from the curves they flatten (0: no curve was flattened), model
        units.
    layer : str or None
        The DXF layer of the outer contour (SVG: None).
    open_pieces : int
        Pieces of the part's file left out because they do not close (the same on every part of
        one file).
    """

    name: str
    source: str
    rings: tuple
    units: str | None = None
    chord: float = 0.0
    layer: str | None = None
    open_pieces: int = 0

    @property
    def bounds(self) -> np.ndarray:
        """(2, 2) float64: min row then max row."""
        pts = np.concatenate(self.rings)
        return np.array([pts.min(axis=0), pts.max(axis=0)])

    @property
    def n_vertices(self) -> int:
        return int(sum(len(r) for r in self.rings))

    @property
    def area(self) -> float:
        """Area under the even-odd rule (rings do not cross)."""
        return float(sum(_ring_area_signed_by_depth(self.rings)))

    def __repr__(self) -> str:
        return (f"FlatPart(name={self.name!r}, source={self.source!r}, rings={len(self.rings)},"
                f" n_vertices={self.n_vertices}, units={self.units!r}, chord={self.chord:g})")


class FlatParts(list):
    """A list of FlatPart that also holds all their rings as three packed arrays, so that a run
    on a 10,000-part nest finds boxes and packs parts for the core by array slices, with no
    Python step per part:

    vertices : (V, 2) float64, every ring's points, ring after ring, part after part
    ring_start : (R + 1,) int64, ring r is vertices[ring_start[r]:ring_start[r + 1]]
    part_ring : (P + 1,) int64, part p is rings part_ring[p] .. part_ring[p + 1] - 1

    The arrays describe the parts it was made with: a list operation that changes the parts
    (append, a new part in place) does not update them; make a new FlatParts instead.
    """

    def __init__(self, parts=(), arrays=None):
        super().__init__(parts)
        if arrays is None:
            rings = [r for p in self for r in p.rings]
            counts = np.fromiter((len(r) for r in rings), dtype=np.int64, count=len(rings))
            nring = np.fromiter((len(p.rings) for p in self), dtype=np.int64, count=len(self))
            vertices = np.concatenate(rings) if rings else np.zeros((0, 2))
            arrays = (vertices, np.concatenate([[0], np.cumsum(counts)]),
                      np.concatenate([[0], np.cumsum(nring)]))
        self.vertices, self.ring_start, self.part_ring = arrays

    @classmethod
    def joined(cls, lists) -> "FlatParts":
        """The parts of several FlatParts one after the other, arrays included."""
        lists = list(lists)
        if not lists:
            return cls()
        vertices = np.concatenate([f.vertices for f in lists])
        shift_v = np.cumsum([0] + [len(f.vertices) for f in lists[:-1]])
        shift_r = np.cumsum([0] + [len(f.ring_start) - 1 for f in lists[:-1]])
        ring_start = np.concatenate([[0]] + [f.ring_start[1:] + k for f, k in zip(lists, shift_v)])
        part_ring = np.concatenate([[0]] + [f.part_ring[1:] + k for f, k in zip(lists, shift_r)])
        return cls([p for f in lists for p in f], (vertices, ring_start, part_ring))

    def renamed(self, parts) -> "FlatParts":
        """The same geometry under other FlatPart records (new names), part for part."""
        if len(parts) != len(self):
            raise ValueError("renamed needs one part per part")
        return FlatParts(parts, (self.vertices, self.ring_start, self.part_ring))


@dataclass(frozen=True)
class _Contour:
    ring: np.ndarray  # (n, 2), not closed
    name: str  # the name of the part it would make
    layer: str | None
    group: int  # the SVG element or DXF entity it came from (nonzero fill-rule scope)
    nonzero: bool  # SVG fill-rule nonzero
    area: float = 0.0  # signed (shoelace)


@dataclass(frozen=True)
class Drawing:
    """A whole file: its closed contours with the nesting worked out.

    contours : tuple of _Contour (the sheet's left out); sheet : the contours on the sheet layer;
    depth : (n,) int64, how many contours enclose each one;
    parent : (n,) int64, the innermost enclosing contour, -1 for none; units, chord : as FlatPart;
    open_pieces : pieces left out because they do not close
    """

    path: str
    contours: tuple
    depth: np.ndarray
    parent: np.ndarray
    units: str | None
    chord: float
    open_pieces: int = 0
    sheet: tuple = ()


def is_flat(path) -> bool:
    """Whether the file is a drawing this module reads (by its suffix)."""
    return Path(path).suffix.lower().lstrip(".") in FLAT_TYPES


def chord_for(size: float) -> float:
    """The flattening bound for a drawing whose contours span `size` (the diagonal of all the
    control points' box): `DEFAULT.chord_rel` of it."""
    return DEFAULT.chord_rel * size if size > 0 else DEFAULT.chord_rel


# --------------------------------------------------------------------------------------------
# public API
# --------------------------------------------------------------------------------------------

def read_drawing(path, *, shown: str | None = None, sheet_layer: str | None = None) -> Drawing:
    """Every closed contour of an SVG or DXF file with its nesting; the contours on
    `sheet_layer` set aside in `sheet`, out of the nesting. Raises InputError."""
    path = Path(path)
    shown = str(path) if shown is None else shown
    _check_file(path)
    kind = path.suffix.lower().lstrip(".")
    if kind == "svg":
        pieces, closed, units, chord = _read_svg(path)
    elif kind == "dxf":
        pieces, closed, units, chord = _read_dxf(path)
    else:
        raise InputError(path, f"not a 2D drawing (.{kind}); give an .svg or .dxf file")
    joined, left = _join(pieces, _join_tolerance(closed, pieces))
    contours = [c for c in closed + joined if len(c.ring) >= 3 and c.area != 0]
    if not contours:
        what = f" ({left} open piece{'s' * (left != 1)} that do not close)" if left else ""
        raise InputError(path, f"holds no closed contour{what}; draw the parts as closed "
                               f"polylines, circles or paths")
    contours = _apply_nonzero(contours)
    sheet = tuple(c for c in contours if sheet_layer is not None and c.layer == sheet_layer)
    if sheet:
        contours = [c for c in contours if c.layer != sheet_layer]
    depth, parent = _nesting([c.ring for c in contours], np.array([c.area for c in contours]))
    return Drawing(path=shown, contours=tuple(contours), depth=depth, parent=parent, units=units,
                   chord=chord, open_pieces=left, sheet=sheet)


def load_flat_part(path, *, name: str | None = None, shown: str | None = None) -> FlatPart:
    """The whole file as ONE part (``gjk check a.svg b.dxf``): all its closed contours."""
    d = read_drawing(path, shown=shown)
    return FlatPart(name=name or Path(path).name, source=d.path,
                    rings=tuple(c.ring for c in d.contours), units=d.units, chord=d.chord,
                    layer=None, open_pieces=d.open_pieces)


def read_flat_objects(path, *, prefix: str | None = None, shown: str | None = None,
                      sheet_layer: str | None = None) -> tuple[FlatParts, FlatPart | None]:
    """(parts, sheet): one part per outer contour with its holes (``gjk scan``), as a FlatParts
    (the rings also packed into arrays), and the contours on `sheet_layer` (DXF) as the sheet,
    None without one. Raises InputError, also when `sheet_layer` names a layer that holds no
    closed contour."""
    d = read_drawing(path, shown=shown, sheet_layer=sheet_layer)
    sheet = None
    if sheet_layer is not None:
        if not d.sheet:
            raise InputError(path, f"layer {sheet_layer!r} holds no closed contour to be the sheet; "
                                   f"check --sheet-layer against the file's layers")
        if not d.contours:
            raise InputError(path, f"every closed contour is on the sheet layer {sheet_layer!r}: "
                                   f"there are no parts")
        sheet = FlatPart(name=f"sheet:{sheet_layer}", source=d.path,
                         rings=tuple(c.ring for c in d.sheet), units=d.units, chord=d.chord,
                         layer=sheet_layer)
    holes: dict[int, list[int]] = {}
    for k in np.flatnonzero(d.depth % 2 == 1).tolist():
        holes.setdefault(int(d.parent[k]), []).append(k)
    parts = []
    for k in np.flatnonzero(d.depth % 2 == 0).tolist():
        c = d.contours[k]
        rings = (_oriented(c, 1),) + tuple(_oriented(d.contours[h], -1) for h in holes.get(k, ()))
        name = c.name if prefix is None else f"{prefix}:{c.name}"
        parts.append(FlatPart(name=name, source=d.path, rings=rings, units=d.units, chord=d.chord,
                              layer=c.layer, open_pieces=d.open_pieces))
    return FlatParts(parts), sheet


# --------------------------------------------------------------------------------------------
# geometry helpers
# --------------------------------------------------------------------------------------------

def signed_area(ring: np.ndarray) -> float:
    """Shoelace area of a closed ring, positive counter-clockwise (y up)."""
    x, y = ring[:, 0], ring[:, 1]
    return 0.5 * float(np.dot(x[:-1], y[1:]) - np.dot(x[1:], y[:-1]) + x[-1] * y[0] - x[0] * y[-1])


def inside(points: np.ndarray, ring: np.ndarray) -> np.ndarray:
    """(m,) bool: whether each point lies inside the ring (crossing number; a point exactly on
    the ring may go either way)."""
    points = np.atleast_2d(points)
    a, b = ring, np.concatenate([ring[1:], ring[:1]])
    px, py = points[:, 0:1], points[:, 1:2]
    straddle = (a[:, 1] > py) != (b[:, 1] > py)
    with np.errstate(divide="ignore", invalid="ignore"):
        x_cross = a[:, 0] + (py - a[:, 1]) * (b[:, 0] - a[:, 0]) / (b[:, 1] - a[:, 1])
    return (np.count_nonzero(straddle & (px < x_cross), axis=1) % 2) == 1


def orient_even_odd(rings) -> tuple:
    """The rings with outer contours (even depth) counter-clockwise and holes clockwise, so that
    a nonzero fill (matplotlib's) draws the even-odd area."""
    depth, _ = _nesting(list(rings))
    out = []
    for r, d in zip(rings, depth.tolist()):
        sign = 1 if d % 2 == 0 else -1
        out.append(r if signed_area(r) * sign > 0 else r[::-1].copy())
    return tuple(out)


def _oriented(c: _Contour, sign: int) -> np.ndarray:
    return c.ring if c.area * sign > 0 else c.ring[::-1].copy()


def _ring_area_signed_by_depth(rings) -> list[float]:
    if not rings:
        return []
    depth, _ = _nesting(list(rings))
    return [abs(signed_area(r)) * (1 if d % 2 == 0 else -1) for r, d in zip(rings, depth)]


def _nesting(rings: list, areas: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(depth, parent) per ring: how many rings enclose it and the innermost one (-1: none).

    A ring is inside another when all its vertices are (so a contour crossing another is not
    nested in it; one whose vertices are all inside but whose edge crosses a notch is). A ring can only enclose a ring whose first vertex lies in its box: boxes are hashed
    into a uniform grid (cells the size of the median box), so candidates are found per cell, and
    a nest of 10,000 parts costs a few candidates per ring, not 10,000."""
    n = len(rings)
    depth = np.zeros(n, dtype=np.int64)
    parent = np.full(n, -1, dtype=np.int64)
    if n < 2:
        return depth, parent
    lo = np.array([r.min(axis=0) for r in rings])
    hi = np.array([r.max(axis=0) for r in rings])
    area = np.array([abs(signed_area(r)) for r in rings]) if areas is None else np.abs(areas)
    probe = np.array([r[0] for r in rings])
    cell = float(np.median(np.max(hi - lo, axis=1)))
    origin = lo.min(axis=0)
    span = hi.max(axis=0) - origin
    if not cell > 0:
        cell = float(max(span.max(), 1.0))
    cell = max(cell, float(span.max()) / 4096)  # at most 4096 cells a side
    clo = np.floor((lo - origin) / cell).astype(np.int64)
    chi = np.floor((hi - origin) / cell).astype(np.int64)
    width = int(chi[:, 0].max()) + 1
    # every (cell, ring) of every ring's box: rings whose boxes cover many cells (a sheet) list many
    nx, ny = chi[:, 0] - clo[:, 0] + 1, chi[:, 1] - clo[:, 1] + 1
    count = nx * ny
    owner = np.repeat(np.arange(n), count)
    local = np.arange(count.sum()) - np.repeat(np.cumsum(count) - count, count)
    cx = clo[owner, 0] + local % nx[owner]
    cy = clo[owner, 1] + local // nx[owner]
    key = cy * width + cx
    order = np.argsort(key, kind="stable")
    key, owner = key[order], owner[order]
    pc = np.floor((probe - origin) / cell).astype(np.int64)
    pkey = pc[:, 1] * width + pc[:, 0]
    first = np.searchsorted(key, pkey, side="left")
    last = np.searchsorted(key, pkey, side="right")
    reps = last - first
    k_of = np.repeat(np.arange(n), reps)
    c_of = owner[np.repeat(first, reps) + (np.arange(reps.sum()) - np.repeat(np.cumsum(reps) - reps, reps))]
    ok = ((c_of != k_of) & (area[c_of] > area[k_of])
          & (lo[c_of] <= lo[k_of]).all(axis=1) & (hi[c_of] >= hi[k_of]).all(axis=1))
    for k, c in zip(k_of[ok].tolist(), c_of[ok].tolist()):
        # every vertex inside: a contour that crosses another (overlapping parts of a nest) is
        # not taken for its hole
        if inside(rings[k], rings[c]).all():
            depth[k] += 1
            if parent[k] < 0 or area[c] < area[parent[k]]:
                parent[k] = c
    return depth, parent


def _apply_nonzero(contours: list) -> list:
    """Drop the subpaths of nonzero-filled SVG elements that wind as their enclosing subpath of
    the same element does: under nonzero they are filled area, neither hole nor part."""
    while any(c.nonzero for c in contours):
        depth, parent = _nesting([c.ring for c in contours], np.array([c.area for c in contours]))
        drop = set()
        for k, c in enumerate(contours):
            p = int(parent[k])
            if c.nonzero and p >= 0 and contours[p].group == c.group and c.area * contours[p].area > 0:
                drop.add(k)
        if not drop:
            break
        contours = [c for k, c in enumerate(contours) if k not in drop]
    return contours


def _join_tolerance(closed: list, pieces: list) -> float:
    pts = [c.ring for c in closed] + [p[0] for p in pieces]
    if not pts:
        return 0.0
    allp = np.concatenate(pts)
    size = float(np.linalg.norm(allp.max(axis=0) - allp.min(axis=0)))
    return DEFAULT.join_rel * max(size, 1.0)


def _join(pieces: list, tol: float) -> tuple[list, int]:
    """Chain open pieces [(points (n, 2), name, layer, group)] end to end into closed contours;
    (contours, pieces left open). Ends meet within `tol`."""
    if not pieces:
        return [], 0
    from scipy.spatial import cKDTree

    ends = np.array([[p[0][0], p[0][-1]] for p in pieces]).reshape(-1, 2)  # 2k start, 2k+1 end
    tree = cKDTree(ends)
    used = np.zeros(len(pieces), dtype=bool)
    out = []
    left = 0
    for first in range(len(pieces)):
        if used[first]:
            continue
        used[first] = True
        chain = [pieces[first][0]]
        start, tail = ends[2 * first], ends[2 * first + 1]
        closed = bool(np.linalg.norm(tail - start) <= tol)
        while not closed:
            nxt = None
            for e in tree.query_ball_point(tail, tol):
                if not used[e // 2]:
                    nxt = e
                    break
            if nxt is None:
                break
            k = nxt // 2
            used[k] = True
            pts = pieces[k][0] if nxt % 2 == 0 else pieces[k][0][::-1]
            chain.append(pts[1:])
            tail = pts[-1]
            closed = bool(np.linalg.norm(tail - start) <= tol)
        if closed:
            ring = np.concatenate(chain)
            if len(ring) > 1 and np.linalg.norm(ring[-1] - ring[0]) <= tol:
                ring = ring[:-1]
            _, name, layer, group = pieces[first][:4]
            ring = np.ascontiguousarray(ring, dtype=np.float64)
            out.append(_Contour(ring=ring, name=name, layer=layer, group=group, nonzero=False,
                                area=signed_area(ring)))
        else:
            left += len(chain)
    return out, left


def _closed_or_piece(points: np.ndarray, is_closed: bool, name, layer, group, nonzero,
                     closed: list, pieces: list, tol: float) -> None:
    points = _dedupe(np.asarray(points, dtype=np.float64)[:, :2], tol)
    if len(points) < 2:
        return
    if is_closed or (len(points) > 2 and np.linalg.norm(points[-1] - points[0]) <= tol):
        if np.linalg.norm(points[-1] - points[0]) <= tol:
            points = points[:-1]
        if len(points) >= 3:
            ring = np.ascontiguousarray(points)
            closed.append(_Contour(ring=ring, name=name, layer=layer, group=group, nonzero=nonzero,
                                   area=signed_area(ring)))
    else:
        pieces.append((points, name, layer, group))


def _dedupe(points: np.ndarray, tol: float) -> np.ndarray:
    """Consecutive repeats removed (a flattened curve repeats its joints)."""
    if len(points) < 2:
        return points
    keep = np.ones(len(points), dtype=bool)
    step = points[1:] - points[:-1]
    keep[1:] = np.hypot(step[:, 0], step[:, 1]) > tol * 1e-3
    return points[keep]


# --------------------------------------------------------------------------------------------
# SVG
# --------------------------------------------------------------------------------------------

_LENGTH = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([a-zA-Z%]*)\s*$")


def _read_svg(path: Path):
    extras.require("svg", path, "reading SVG")
    import svgelements as se

    try:
        svg = se.SVG.parse(str(path), reify=True)
    except Exception as exc:  # noqa: BLE001 - the XML parser's and svgelements' errors alike
        raise InputError(path, f"not a valid SVG file ({_short(exc)}); re-export it") from None
    if not isinstance(svg, se.SVG):
        raise InputError(path, "not a valid SVG file (no <svg> root); re-export it")
    # undo the root viewport's scaling: coordinates as written in the file
    undo = None
    if svg.viewbox is not None:
        vt = svg.viewbox_transform
        if vt:
            undo = ~se.Matrix(vt)
    units = _svg_units(svg)
    shapes = []
    for k, e in enumerate(svg.elements()):
        if isinstance(e, se.Shape) and not isinstance(e, se.SVG):
            p = abs(se.Path(e))
            if undo is not None:
                p = abs(p * undo)
            shapes.append((k, e, p))
    if not shapes:
        raise InputError(path, "holds no shapes (path, polygon, polyline, rect, circle, "
                               "ellipse); draw the parts in it")
    allpts = [np.array([[s.start.x, s.start.y] for s in p if s.start is not None]
                       + [[s.end.x, s.end.y] for s in p if s.end is not None]) for _, _, p in shapes]
    allpts = np.concatenate([a for a in allpts if len(a)]) if any(len(a) for a in allpts) else np.zeros((1, 2))
    size = float(np.linalg.norm(allpts.max(axis=0) - allpts.min(axis=0)))
    chord = chord_for(size)
    tol = DEFAULT.join_rel * max(size, 1.0)
    closed: list = []
    pieces: list = []
    curved = False
    counts: dict[str, int] = {}
    for k, e, p in shapes:
        tag = type(e).__name__.lower()
        counts[tag] = counts.get(tag, 0) + 1
        name = e.id if getattr(e, "id", None) else f"{tag}{counts[tag]}"
        nonzero = str(e.values.get("fill-rule", "nonzero")).strip().lower() != "evenodd"
        for sub in p.as_subpaths():
            pts, is_closed, had_curve = _flatten_svg(se, sub, chord)
            curved |= had_curve
            if len(pts):
                _closed_or_piece(pts, is_closed, name, None, k, nonzero, closed, pieces, tol)
    return pieces, closed, units, chord if curved else 0.0


def _flatten_svg(se, sub, chord: float):
    """(points (n, 2), closed, whether a curve was flattened) of one subpath."""
    pts: list = []
    closed = False
    curved = False
    for seg in sub:
        if isinstance(seg, se.Move):
            if seg.end is not None:
                pts.append([seg.end.x, seg.end.y])
            continue
        if isinstance(seg, se.Close):
            closed = True
            continue
        if seg.start is None or seg.end is None:
            continue
        if not pts:
            pts.append([seg.start.x, seg.start.y])
        if isinstance(seg, se.Line):
            pts.append([seg.end.x, seg.end.y])
            continue
        curved = True
        n = _segments_needed(se, seg, chord)
        t = np.linspace(0.0, 1.0, n + 1)[1:]
        pts.extend(np.asarray(seg.npoint(t), dtype=np.float64).reshape(-1, 2).tolist())
    return np.array(pts, dtype=np.float64).reshape(-1, 2), closed, curved


def _segments_needed(se, seg, chord: float) -> int:
    """Uniform parameter steps that keep every chord within `chord` of the curve: a curve c(t)
    sampled at steps h deviates from its chords by at most h^2 max|c''| / 8."""
    if isinstance(seg, se.CubicBezier):
        p = np.array([[q.x, q.y] for q in (seg.start, seg.control1, seg.control2, seg.end)])
        bound = 6.0 * max(np.linalg.norm(p[0] - 2 * p[1] + p[2]), np.linalg.norm(p[1] - 2 * p[2] + p[3]))
    elif isinstance(seg, se.QuadraticBezier):
        p = np.array([[q.x, q.y] for q in (seg.start, seg.control, seg.end)])
        bound = 2.0 * np.linalg.norm(p[0] - 2 * p[1] + p[2])
    elif isinstance(seg, se.Arc):
        # c(t) = centre + R (rx cos a(t), ry sin a(t)), a linear in t over the sweep
        bound = max(abs(seg.rx), abs(seg.ry)) * seg.sweep ** 2
    else:
        return 64
    return max(1, int(math.ceil(math.sqrt(bound / (8.0 * chord))))) if bound > 0 else 1


def _svg_units(svg) -> str | None:
    width = svg.values.get("width")
    m = _LENGTH.match(str(width)) if width is not None else None
    if m is None or not m.group(2) or m.group(2) == "%":
        return None
    value, unit = float(m.group(1)), m.group(2).lower()
    if unit == "px":
        return "px"
    if svg.viewbox is None or not svg.viewbox.width:
        return "px"  # user units are CSS pixels whatever the width says
    per_user = value / float(svg.viewbox.width)
    return unit if abs(per_user - 1.0) < 1e-9 else f"{per_user:g} {unit}"


# --------------------------------------------------------------------------------------------
# DXF
# --------------------------------------------------------------------------------------------

_DXF_KINDS = ("LINE", "LWPOLYLINE", "POLYLINE", "CIRCLE", "ARC", "ELLIPSE", "SPLINE")


def _read_dxf(path: Path):
    extras.require("dxf", path, "reading DXF")
    import ezdxf

    try:
        doc = ezdxf.readfile(str(path))
    except ezdxf.DXFStructureError as exc:
        raise InputError(path, f"not a valid DXF file ({_short(exc)}); re-export it") from None
    except (UnicodeDecodeError, ValueError, IOError) as exc:
        raise InputError(path, f"cannot read it as DXF ({_short(exc)}); re-export it") from None
    msp = doc.modelspace()
    units = _INSUNITS.get(int(doc.header.get("$INSUNITS", 0) or 0))
    placed = list(_dxf_entities(msp))
    if not placed:
        raise InputError(path, "holds no LINE, LWPOLYLINE, POLYLINE, CIRCLE, ARC, ELLIPSE or "
                               "SPLINE in model space; draw the parts in it")
    size = _dxf_size(placed)
    chord = chord_for(size)
    tol = DEFAULT.join_rel * max(size, 1.0)
    closed: list = []
    pieces: list = []
    curved = False
    for k, (e, name, layer) in enumerate(placed):
        try:
            pts, is_closed, had_curve = _flatten_dxf(e, chord)
        except Exception as exc:  # noqa: BLE001 - one bad entity names itself
            raise InputError(path, f"{e.dxftype()} {name}: cannot be read ({_short(exc)}); "
                                   f"fix or redraw it") from None
        curved |= had_curve
        _closed_or_piece(pts, is_closed, name, layer, k, False, closed, pieces, tol)
    return pieces, closed, units, chord if curved else 0.0


def _flatten_dxf(e, chord: float):
    """(points (n, 2) in WCS, closed, whether a curve was flattened) of one entity. Arcs,
    circles, ellipses and splines are flattened by the entity's own `flattening` (points on the
    curve itself, not on a Bezier approximation of it); polylines through their LINE and ARC
    pieces (bulges are arcs)."""
    kind = e.dxftype()
    if kind == "LINE":
        return _xy([e.dxf.start, e.dxf.end]), False, False
    if kind == "CIRCLE":
        return _xy(e.flattening(chord)), True, True
    if kind == "ARC":
        return _xy(e.flattening(chord)), False, True
    if kind == "ELLIPSE":
        full = abs(abs(e.dxf.end_param - e.dxf.start_param) - 2 * math.pi) < 1e-9
        return _xy(e.flattening(chord)), full, True
    if kind == "SPLINE":
        return _xy(e.flattening(chord)), bool(e.closed), True
    # LWPOLYLINE, POLYLINE: straight pieces and bulge arcs, chained in the polyline's order
    closed = bool(e.closed) if kind == "LWPOLYLINE" else bool(e.is_closed)
    if kind == "LWPOLYLINE" and _plain_lwpolyline(e):  # the common case, without ezdxf's pieces
        return np.array(e.get_points("xy"), dtype=np.float64).reshape(-1, 2), closed, False
    out: list = []
    curved = False
    for piece in e.virtual_entities():
        if piece.dxftype() == "LINE":
            pts = _xy([piece.dxf.start, piece.dxf.end])
        elif piece.dxftype() == "ARC":
            pts, curved = _xy(piece.flattening(chord)), True
        else:
            continue
        if out:
            tail = out[-1][-1]
            if np.linalg.norm(pts[-1] - tail) < np.linalg.norm(pts[0] - tail):
                pts = pts[::-1]  # an ARC runs counter-clockwise whatever the bulge's sign
            pts = pts[1:]
        out.append(pts)
    if not out:
        return np.zeros((0, 2)), closed, False
    return np.concatenate(out), closed, curved


def _dxf_size(placed) -> float:
    """The diagonal of the box of the entities' defining points (vertices, centres grown by
    radii, control points): the drawing's size for the chord, without flattening anything."""
    lo = np.full(2, np.inf)
    hi = np.full(2, -np.inf)
    for e, _, _ in placed:
        kind = e.dxftype()
        try:
            if kind == "LWPOLYLINE" and _plain_lwpolyline(e):
                pts = np.array(e.get_points("xy"), dtype=np.float64).reshape(-1, 2)
            elif kind in ("CIRCLE", "ARC"):
                c, r = e.dxf.center, abs(e.dxf.radius)
                pts = np.array([[c.x - r, c.y - r], [c.x + r, c.y + r]])
            elif kind == "ELLIPSE":
                c, r = e.dxf.center, e.dxf.major_axis.magnitude
                pts = np.array([[c.x - r, c.y - r], [c.x + r, c.y + r]])
            elif kind == "LINE":
                pts = _xy([e.dxf.start, e.dxf.end])
            elif kind == "SPLINE":
                pts = _xy(e.control_points if len(e.control_points) else e.fit_points)
            else:  # a polyline in another plane or with bulges: its own pieces
                pts = np.concatenate([_xy(p.vertices()) if p.dxftype() != "ARC"
                                      else _xy(p.flattening(1e300)) for p in e.virtual_entities()])
        except Exception:  # noqa: BLE001 - the entity's own error is reported when it is read
            continue
        if len(pts):
            lo = np.minimum(lo, pts.min(axis=0))
            hi = np.maximum(hi, pts.max(axis=0))
    return float(np.linalg.norm(hi - lo)) if np.all(hi >= lo) else 0.0


def _plain_lwpolyline(e) -> bool:
    """Straight segments in the world's xy plane: its OCS points are world points."""
    ext = e.dxf.get("extrusion", None)
    flat = ext is None or (abs(ext[0]) < 1e-12 and abs(ext[1]) < 1e-12 and ext[2] > 0)
    return flat and not e.has_arc


def _xy(vertices) -> np.ndarray:
    return np.array([(v.x, v.y) for v in vertices], dtype=np.float64).reshape(-1, 2)


def _dxf_entities(layout, block: str | None = None, handle: str | None = None, depth: int = 0):
    """(entity in world coordinates, part name, layer) for the drawable entities, INSERTs
    expanded (nested ones too) into virtual entities placed by their full transforms."""
    for e in layout:
        kind = e.dxftype()
        if kind == "INSERT":
            if depth > 32:
                continue
            name = block or e.dxf.name
            h = handle or e.dxf.handle
            try:
                virtual = list(e.virtual_entities())
            except Exception:  # noqa: BLE001 - a non-uniform scale of an arc ezdxf cannot place
                continue
            yield from _dxf_entities(virtual, name, h, depth + 1)
        elif kind in _DXF_KINDS:
            layer = e.dxf.get("layer", "0")
            if block is not None:
                yield e, f"{block}@{handle}", layer
            else:
                yield e, f"{layer}:{e.dxf.handle}", layer


# --------------------------------------------------------------------------------------------
# files
# --------------------------------------------------------------------------------------------

def _check_file(path: Path) -> None:
    try:
        if path.is_dir():
            raise InputError(path, "is a directory, not a drawing; give one .svg or .dxf file")
        size = path.stat().st_size
    except FileNotFoundError:
        raise InputError(path, "no such file; check the path") from None
    except OSError as exc:
        raise InputError(path, f"cannot read: {exc.strerror or exc}") from None
    if size == 0:
        raise InputError(path, "is empty (0 bytes); re-export or copy it again")
    limit = current_limits().file_bytes
    if size > limit:
        raise InputError(path, f"is {size:,} bytes, over the {limit:,}-byte file limit; raise it "
                               f"with --limit file-bytes=N")


def _short(exc: BaseException, limit: int = 100) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= limit else text[:limit - 3] + "..."
