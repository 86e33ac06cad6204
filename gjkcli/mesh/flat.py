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

import contextlib
import fnmatch
import io
import logging
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from gjkcli import extras
from gjkcli.errors import InputError
from gjkcli.limits import current as current_limits
from gjkcli.tolerances import DEFAULT

__all__ = ["FLAT_TYPES", "FlatPart", "FlatParts", "Drawing", "Layers", "is_flat", "read_drawing",
           "load_flat_part", "read_flat_objects", "layer_matches", "chord_for", "signed_area",
           "inside", "orient_even_odd", "reversed_straight", "sheet_frame", "refined_arcs"]

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
    notes : tuple of str
        What reading the part's file assumed or left out, one line each (the same on every part
        of one file).
    straight : tuple of (n,) bool, or None
        Per ring, whether edge i (vertex i to vertex i + 1, the last one closing the ring) is
        exact: drawn straight (a LINE, a polyline's straight segment, a bridged gap), not a
        chord of a flattened curve. None: not known (every edge may be a chord).
    """

    name: str
    source: str
    rings: tuple
    units: str | None = None
    chord: float = 0.0
    layer: str | None = None
    open_pieces: int = 0
    notes: tuple = ()
    straight: tuple | None = None

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
    chord : (P,) float64, each part's flattening bound (`FlatPart.chord`)
    notes : tuple of str, the parts' files' notes, each file's once (`FlatPart.notes`)
    units : tuple, the units its parts state (`FlatPart.units`, None among them), each once

    The arrays describe the parts it was made with: a list operation that changes the parts
    (append, a new part in place) does not update them; make a new FlatParts instead.
    """

    def __init__(self, parts=(), arrays=None, chord=None, notes=None, units=None):
        super().__init__(parts)
        if arrays is None:
            rings = [r for p in self for r in p.rings]
            counts = np.fromiter((len(r) for r in rings), dtype=np.int64, count=len(rings))
            nring = np.fromiter((len(p.rings) for p in self), dtype=np.int64, count=len(self))
            vertices = np.concatenate(rings) if rings else np.zeros((0, 2))
            arrays = (vertices, np.concatenate([[0], np.cumsum(counts)]),
                      np.concatenate([[0], np.cumsum(nring)]))
        self.vertices, self.ring_start, self.part_ring = arrays
        if chord is None:
            chord = np.fromiter((p.chord for p in self), dtype=np.float64, count=len(self))
        self.chord = chord
        if notes is None:
            notes = _file_notes(p.notes for p in self)
        self.notes = tuple(notes)
        if units is None:
            units = dict.fromkeys(p.units for p in self)
        self.units = tuple(units)

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
        return cls([p for f in lists for p in f], (vertices, ring_start, part_ring),
                   np.concatenate([f.chord for f in lists]), _file_notes(f.notes for f in lists),
                   dict.fromkeys(u for f in lists for u in f.units))

    def renamed(self, parts) -> "FlatParts":
        """The same geometry under other FlatPart records (new names), part for part."""
        if len(parts) != len(self):
            raise ValueError("renamed needs one part per part")
        return FlatParts(parts, (self.vertices, self.ring_start, self.part_ring), self.chord,
                         self.notes)


def _file_notes(groups) -> list:
    """The lines of several groups of notes, each group once (the parts of one file share one
    tuple), in order."""
    seen: dict = {}
    for group in groups:
        if group and id(group) not in seen:
            seen[id(group)] = group
    lines: dict = {}
    for group in seen.values():
        lines.update(dict.fromkeys(group))
    return list(lines)


@dataclass(frozen=True)
class _Contour:
    ring: np.ndarray  # (n, 2), not closed
    name: str  # the name of the part it would make
    layer: str | None
    group: int  # the SVG element or DXF entity it came from (nonzero fill-rule scope)
    nonzero: bool  # SVG fill-rule nonzero
    area: float = 0.0  # signed (shoelace)
    chord: float = 0.0  # how far it may lie from the curves it flattens (0: none flattened)
    straight: np.ndarray | None = None  # (n,) bool: edge i (to i + 1, wrapping) is drawn straight


@dataclass(frozen=True)
class _Piece:
    """An open piece (a LINE, an ARC, an open polyline or subpath) waiting to be joined."""

    points: np.ndarray  # (n, 2)
    name: str
    layer: str | None
    group: int
    chord: float
    what: str  # how the warning names it: "LINE #2A", "ARC in BLK@3F", "path3"
    straight: np.ndarray  # (n,) bool: edge i (to i + 1) is drawn straight; the last is unused


@dataclass
class _Read:
    """What a format's reader hands `read_drawing`."""

    closed: list
    pieces: list
    units: str | None
    join_tol: float  # the default: join_rel of the drawing's size
    layers: set  # every layer name met (DXF)
    notes: list = field(default_factory=list)  # what the read assumed (recover mode)
    # the layers that are nesting scopes of their own (a contour never nests in another scope's
    # outline); None: every layer (DXF). An SVG's group ids are layers to select, not scopes
    scopes: set | None = None


@dataclass(frozen=True)
class Drawing:
    """A whole file: its closed contours with the nesting worked out.

    contours : tuple of _Contour (the sheet's left out); sheet : the contours on the sheet layer;
    depth : (n,) int64, how many contours enclose each one;
    parent : (n,) int64, the innermost enclosing contour, -1 for none; units : as FlatPart;
    chord : the largest bound of any contour (each contour carries its own);
    open_pieces : pieces left out because they do not close; notes : as FlatPart;
    layers : the DXF layers the file's entities are on, read or not
    """

    path: str
    contours: tuple
    depth: np.ndarray
    parent: np.ndarray
    units: str | None
    chord: float
    open_pieces: int = 0
    sheet: tuple = ()
    notes: tuple = ()
    layers: tuple = ()


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

@dataclass(frozen=True)
class Layers:
    """Which DXF layers a read takes: `only` (globs; empty: every layer) less `ignore` (globs).
    Names and globs compare case-insensitively, as AutoCAD's layer names do ("SHEET" is the
    layer "Sheet"). The sheet layer is read whatever they say."""

    only: tuple = ()
    ignore: tuple = ()

    def __bool__(self) -> bool:
        return bool(self.only or self.ignore)

    def takes(self, layer: str | None) -> bool:
        if layer is None:
            return True
        if self.only and not any(layer_matches(layer, g) for g in self.only):
            return False
        return not any(layer_matches(layer, g) for g in self.ignore)


def layer_matches(layer: str | None, glob: str) -> bool:
    """Whether a DXF layer name matches a glob (``*``, ``?``, ``[...]``), case-insensitively."""
    return layer is not None and fnmatch.fnmatchcase(layer.casefold(), glob.casefold())


def read_drawing(path, *, shown: str | None = None, sheet_layer: str | None = None,
                 layers: Layers = Layers(), join_tolerance=None) -> Drawing:
    """Every closed contour of an SVG or DXF file with its nesting; the contours on
    `sheet_layer` (a layer name or glob, case-insensitive) set aside in `sheet`, out of the
    nesting. `layers` selects the DXF layers read; `join_tolerance` (a float in the file's units,
    or a `gjkcli.units.Length`; None: `join_rel` of the drawing's size) is how far apart the ends
    of open pieces may be and still be joined. Raises InputError."""
    path = Path(path)
    shown = str(path) if shown is None else shown
    _check_file(path)
    kind = path.suffix.lower().lstrip(".")
    sheet_of = (lambda layer: layer_matches(layer, sheet_layer)) if sheet_layer is not None else None
    with _library_warnings() as said:
        try:
            if kind == "svg":
                got = _read_svg(path, layers, sheet_of)
            elif kind == "dxf":
                got = _read_dxf(path, layers, sheet_of)
            else:
                raise InputError(path, f"not a 2D drawing (.{kind}); give an .svg or .dxf file")
        except InputError:
            raise
        except Exception as exc:  # noqa: BLE001 - the libraries' own errors become input errors
            if not _raised_by(exc, "ezdxf", "svgelements"):
                raise
            library = "svgelements" if kind == "svg" else "ezdxf"
            raise InputError(path, f"{library} cannot read it ({_short(exc)}); re-export "
                                   f"it") from None
    notes = ([f"{shown}: {kind.upper()} reader: {line}" for line in said()]
             + [f"{shown}: {line}" for line in got.notes])
    if layers and kind == "svg" and not got.layers:
        notes.append(f"{shown}: the SVG has no layers (Inkscape layers or groups with an id): "
                     f"--layers and --ignore-layers do not apply to it, and every shape of it is "
                     f"read")
    elif layers:
        out = sorted(x for x in got.layers if not (layers.takes(x) or (sheet_of and sheet_of(x))))
        if out:
            notes.append(f"{shown}: layers left out ({_layer_ask(layers)}): {', '.join(out)}")
    tol = got.join_tol
    if join_tolerance is not None:
        tol = _length_in(join_tolerance, got.units, path, "--join-tolerance")
    closed = list(got.closed)
    # pieces that close on themselves within the join tolerance (a polyline not flagged closed)
    pieces = []
    for piece in got.pieces:
        pts = piece.points
        if len(pts) > 2 and np.linalg.norm(pts[-1] - pts[0]) <= tol:
            closed.append(_contour(pts, piece))
        else:
            pieces.append(piece)
    # the arrangement merges ends within the tolerance its branch points were found with: the
    # user's, where --join-tolerance widens it (a gap there closes, as `_join` bridges one)
    arranged, pieces, closed, arr_left, arr_notes = _arrange_branches(
        pieces, closed, max(tol, got.join_tol), shown, path)
    notes.extend(arr_notes)
    joined, left, bridged = _join(pieces, max(tol, got.join_tol), got.join_tol)
    joined = arranged + joined
    left = arr_left + left
    if bridged > got.join_tol:
        notes.append(f"{shown}: open pieces joined across gaps up to {bridged:.3g} (within "
                     f"--join-tolerance {tol:g}); each gap is closed by a straight edge")
    if left:
        notes.append(f"warning: {shown}: {_open_summary(left)} left out (lines, arcs or paths "
                     f"whose ends do not meet); close them, or join small gaps with "
                     f"--join-tolerance")
    contours = [c for c in closed + joined if len(c.ring) >= 3 and c.area != 0]
    # the sheet: the contours on its layer, or the one so named (an SVG element's id, a DXF
    # entity's LAYER:HANDLE)
    on_sheet = [sheet_of is not None and (sheet_of(c.layer) or sheet_of(c.name)) for c in contours]
    sheet = tuple(c for c, s in zip(contours, on_sheet) if s)
    if sheet:
        contours = [c for c, s in zip(contours, on_sheet) if not s]
    if not contours and not sheet:
        what = f" ({len(left)} open piece{'s' * (len(left) != 1)} that do not close)" if left else ""
        where = ""
        if layers and got.layers:
            where = f" on the layers read (the file's layers: {', '.join(sorted(got.layers))})"
        raise InputError(path, f"holds no closed contour{what}{where}; draw the parts as closed "
                               f"polylines, circles or paths")
    contours = _apply_nonzero(contours)
    size = _size([c.ring for c in contours])
    layer_ids = _layer_ids(contours, got.scopes)
    slack = _nest_slack(contours, size)
    depth, parent = _nesting([c.ring for c in contours], np.array([c.area for c in contours]),
                             slack=slack, layers=layer_ids)
    if len(np.unique(layer_ids)) > 1:
        notes.extend(_layer_hints(shown, contours, depth, layer_ids, slack, sheet_layer is None))
    chord = max((c.chord for c in (*contours, *sheet)), default=0.0)
    return Drawing(path=shown, contours=tuple(contours), depth=depth, parent=parent,
                   units=got.units, chord=chord, open_pieces=len(left), sheet=sheet,
                   notes=tuple(notes), layers=tuple(sorted(got.layers)))


def load_flat_part(path, *, name: str | None = None, shown: str | None = None,
                   layers: Layers = Layers(), join_tolerance=None) -> FlatPart:
    """The whole file as ONE part (``gjk check a.svg b.dxf``): all its closed contours."""
    d = read_drawing(path, shown=shown, layers=layers, join_tolerance=join_tolerance)
    return FlatPart(name=name or Path(path).name, source=d.path,
                    rings=tuple(c.ring for c in d.contours), units=d.units,
                    chord=max(c.chord for c in d.contours), layer=None,
                    open_pieces=d.open_pieces, notes=d.notes,
                    straight=tuple(_oriented_straight(c, c.area) for c in d.contours))


def read_flat_objects(path, *, prefix: str | None = None, shown: str | None = None,
                      sheet_layer: str | None = None, layers: Layers = Layers(),
                      join_tolerance=None) -> tuple[FlatParts, FlatPart | None]:
    """(parts, sheet): one part per outer contour with its holes (``gjk scan``), as a FlatParts
    (the rings also packed into arrays), and the contours on `sheet_layer` (DXF) as the sheet,
    None without one. Each part carries its own flattening bound: the largest of its rings'
    (0 when none flattened a curve). Raises InputError, also when `sheet_layer` names a layer
    that holds no closed contour."""
    d = read_drawing(path, shown=shown, sheet_layer=sheet_layer, layers=layers,
                     join_tolerance=join_tolerance)
    sheet = None
    if sheet_layer is not None:
        if not d.sheet:
            known = f" (the file's layers: {', '.join(d.layers)})" if d.layers else ""
            raise InputError(path, f"layer {sheet_layer!r} holds no closed contour to be the sheet"
                                   f"{known}; check --sheet-layer against the file's layers")
        if not d.contours:
            which = (f" of the layers asked for ({_layer_ask(layers)}; the file's layers: "
                     f"{', '.join(d.layers)})" if layers else "")
            raise InputError(path, f"every closed contour{which} is on the sheet layer "
                                   f"{sheet_layer!r}: there are no parts")
        sheet = FlatPart(name=f"sheet:{sheet_layer}", source=d.path,
                         rings=tuple(c.ring for c in d.sheet), units=d.units,
                         chord=max(c.chord for c in d.sheet), layer=d.sheet[0].layer,
                         straight=tuple(_oriented_straight(c, c.area) for c in d.sheet))
    depth, notes = d.depth, d.notes
    outer = np.flatnonzero(d.depth == 0)
    k = _sheet_outline(d) if sheet_layer is None else None
    if k is not None:
        # one outline holds (nearly) every other: read as one part with holes, the file's parts
        # would go unchecked; it is the sheet
        c = d.contours[k]
        sheet = FlatPart(name=f"sheet:{c.name}", source=d.path, rings=(c.ring,), units=d.units,
                         chord=c.chord, layer=c.layer, straight=(_oriented_straight(c, c.area),))
        held = int(np.count_nonzero((d.depth == 1) & (d.parent == k)))
        out = f"; {len(outer) - 1} outside it leave the sheet" if len(outer) > 1 else ""
        notes = d.notes + (f"{d.path}: one outline ({c.name}) holds the other outlines: taken "
                           f"as the sheet, every part to lie inside it (by the clearance), and "
                           f"the {held} outlines inside it as parts{out}",)
        depth = np.where(_inside_of(d, k), d.depth - 1, d.depth)
        depth[k] = -1  # neither part nor hole
    elif sheet_layer is None and len(outer) == 1:
        # the only part, with outlines drawn apart from it as its holes: if it is a sheet, its
        # parts go unchecked; say how to name it
        c = d.contours[int(outer[0])]
        inner = np.flatnonzero((d.depth == 1) & (d.parent == outer[0])).tolist()
        apart = [j for j in inner if d.contours[j].group != c.group]
        if len(apart) >= 2:
            notes = d.notes + (f"{d.path}: one outline ({c.name}) holds all {len(inner)} others, "
                               f"read as its holes: one part, no pairs; if it is the sheet, pass "
                               f"--sheet-layer {c.name}",)
    holes: dict[int, list[int]] = {}
    for k in np.flatnonzero(depth % 2 == 1).tolist():
        holes.setdefault(int(d.parent[k]), []).append(k)
    parts = []
    for k in np.flatnonzero((depth % 2 == 0) & (depth >= 0)).tolist():
        c = d.contours[k]
        inner = holes.get(k, ())
        rings = (_oriented(c, 1),) + tuple(_oriented(d.contours[h], -1) for h in inner)
        straight = (_oriented_straight(c, 1),) + tuple(_oriented_straight(d.contours[h], -1)
                                                      for h in inner)
        chord = max([c.chord] + [d.contours[h].chord for h in inner])
        name = c.name if prefix is None else f"{prefix}:{c.name}"
        parts.append(FlatPart(name=name, source=d.path, rings=rings, units=d.units, chord=chord,
                              layer=c.layer, open_pieces=d.open_pieces, notes=notes,
                              straight=straight if chord > 0 else None))
    return FlatParts(parts), sheet


# An outline taken for a sheet without a layer saying so holds outlines that cover at least this
# share of its area: a nest fills its sheet, a plate's holes rarely fill a quarter of it.
SHEET_FILL = 0.25


def _sheet_outline(d: Drawing) -> int | None:
    """The contour that is the drawing's sheet although no layer says so: an outer rectangle
    drawn straight, with two or more outlines directly inside it that are drawn apart from it
    (other entities or elements) and cover `SHEET_FILL` of its area, holding at least
    `SHEET_SHARE` of all the outlines that would be parts (its own and the other outer
    contours); None when none is (a plate with holes stays one)."""
    outer = np.flatnonzero(d.depth == 0)
    if not len(outer):
        return None
    held = np.bincount(d.parent[d.depth == 1], minlength=len(d.contours))[outer]
    best = int(np.argmax(held))
    n = int(held[best])
    if n < 2 or n < SHEET_SHARE * (n + len(outer) - 1):
        return None
    k = int(outer[best])
    c = d.contours[k]
    inner = np.flatnonzero((d.depth == 1) & (d.parent == k)).tolist()
    rectangle = (len(c.ring) == 4 and c.chord == 0
                 and abs(abs(c.area) - float(np.prod(np.ptp(c.ring, axis=0)))) <= DEFAULT.sheet_rect_rel * abs(c.area))
    apart = all(d.contours[j].group != c.group for j in inner)
    filled = sum(abs(d.contours[j].area) for j in inner) >= SHEET_FILL * abs(c.area)
    return k if rectangle and apart and filled else None


def _inside_of(d: Drawing, k: int) -> np.ndarray:
    """(n,) bool: the contours whose chain of parents reaches contour k."""
    out = np.zeros(len(d.contours), dtype=bool)
    for j in range(len(d.contours)):
        p = int(d.parent[j])
        while p >= 0 and p != k:
            p = int(d.parent[p])
        out[j] = p == k
    return out


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


def refined_arcs(part: FlatPart, times: int, window=None) -> FlatPart | None:
    """The part with every flattened curve cut `times` times finer, the new points on the curve
    itself, and its bound made to match; None when some curve cannot be cut finer from the
    rings alone (it is not an arc of a circle: an ellipse, a spline, a Bezier; or one chord).

    The reader keeps every vertex of a flattened curve on the curve and marks the chords
    (`FlatPart.straight`). A run of chords whose vertices lie on one circle is an arc of it
    (DXF circles, arcs and bulges; SVG circles and circular arcs): its centre and radius come
    from three of its vertices, and each chord is cut into `times` chords of the arc. The new
    bound is the largest sagitta r (1 - cos(dtheta / 2)) plus how far the vertices lay off the
    fitted circle.

    window : ((2,) lo, (2,) hi), a callable, or None: only the chords whose boxes meet this box
        (or for which window(starts, ends) is True) are cut finer and bounded; the others are
        kept as they are, so the bound holds for the chords the window takes only."""
    if part.chord <= 0:
        return part
    if part.straight is None:
        return None
    rings, masks, bound = [], [], 0.0
    for ring, mask in zip(part.rings, part.straight):
        out = _refined_ring(ring, np.asarray(mask, dtype=bool), times, window)
        if out is None:
            return None
        rings.append(out[0])
        masks.append(out[1])
        bound = max(bound, out[2])
    return FlatPart(name=part.name, source=part.source, rings=tuple(rings), units=part.units,
                    chord=bound, layer=part.layer, open_pieces=part.open_pieces, notes=part.notes,
                    straight=tuple(masks))


def _refined_ring(ring: np.ndarray, mask: np.ndarray, times: int, window=None):
    """(ring, straight mask, bound) with each run of chords cut finer (see `refined_arcs`)."""
    n = len(ring)
    if mask.all():
        return ring, mask, 0.0
    if not mask.any():  # one closed curve: the run starts anywhere
        start = 0
    else:
        start = int(np.flatnonzero(mask)[-1] + 1) % n  # the first edge after a straight one
    order = (np.arange(n) + start) % n
    pts_out, mask_out = [], []
    bound = 0.0
    # the rotated edges in blocks of straight edges and runs of chords
    m = mask[order]
    cut = np.concatenate([[0], np.flatnonzero(m[1:] != m[:-1]) + 1, [n]]).tolist()
    for s, e in zip(cut[:-1], cut[1:]):
        if m[s]:
            pts_out.append(ring[order[s:e]])
            mask_out.append(np.ones(e - s, dtype=bool))
            continue
        run = order[s:e]
        verts = ring[np.append(run, (run[-1] + 1) % n)]
        closed_circle = len(run) == n
        hit = np.ones(len(run), dtype=bool)
        if window is not None:  # only the chords the window takes are cut
            a, b = verts[:-1], verts[1:]
            if callable(window):
                hit = np.asarray(window(a, b), dtype=bool)
            else:
                lo, hi = window
                hit = ((np.minimum(a, b) <= hi) & (np.maximum(a, b) >= lo)).all(axis=1)
            if not hit.any():
                pts_out.append(verts[:-1])  # out of the window: as it is
                mask_out.append(np.zeros(len(run), dtype=bool))
                continue
        if len(run) < 2:
            return None
        fit = _circle_through(verts[0], verts[len(verts) // 2], verts[-2 if closed_circle else -1])
        if fit is None:
            return None
        c, r = fit
        off = float(np.abs(np.hypot(*(verts - c).T) - r).max())
        if off > DEFAULT.arc_fit_rel * r:
            return None  # not one circle
        ang = np.arctan2(verts[:, 1] - c[1], verts[:, 0] - c[0])
        step = np.angle(np.exp(1j * np.diff(ang)))  # each chord's turn, in (-pi, pi]
        cuts = np.where(hit, times, 1)  # each chord's new pieces
        first = np.concatenate([[0], np.cumsum(cuts)[:-1]])
        owner = np.repeat(np.arange(len(run)), cuts)
        t = (np.arange(int(cuts.sum())) - first[owner]) / cuts[owner]
        fine = ang[owner] + step[owner] * t
        new = c + r * np.stack([np.cos(fine), np.sin(fine)], axis=-1)
        new[first] = verts[:-1]  # the vertices stay exactly where they were
        pts_out.append(new)
        mask_out.append(np.zeros(len(new), dtype=bool))
        bound = max(bound, float(r * (1 - np.cos(np.abs(step[hit]).max() / times / 2))) + off)
    return (np.ascontiguousarray(np.concatenate(pts_out), dtype=np.float64),
            np.concatenate(mask_out), bound)


def _circle_through(a, b, c):
    """(centre, radius) of the circle through three points; None when they are (nearly) on a
    line."""
    ax, ay = float(a[0]), float(a[1])  # Python floats: the same arithmetic, no NumPy scalars
    bx, by = float(b[0]), float(b[1])
    cx, cy = float(c[0]), float(c[1])
    d = 2 * (ax * (by - cy) + bx * (cy - ay) + cx * (ay - by))
    scale = max(max(ax, bx, cx) - min(ax, bx, cx), max(ay, by, cy) - min(ay, by, cy), 1e-300)
    if abs(d) <= DEFAULT.degenerate_rel * scale * scale:
        return None
    a2, b2, c2 = ax * ax + ay * ay, bx * bx + by * by, cx * cx + cy * cy
    ux = (a2 * (by - cy) + b2 * (cy - ay) + c2 * (ay - by)) / d
    uy = (a2 * (cx - bx) + b2 * (ax - cx) + c2 * (bx - ax)) / d
    centre = np.array([ux, uy])
    return centre, float(np.hypot(ax - ux, ay - uy))


def _oriented(c: _Contour, sign: int) -> np.ndarray:
    return c.ring if c.area * sign > 0 else c.ring[::-1].copy()


def _oriented_straight(c: _Contour, sign) -> np.ndarray:
    """The contour's straight-edge mask for `_oriented(c, sign)`: reversing a ring makes its
    edge i the old edge n - 2 - i."""
    mask = c.straight if c.straight is not None else np.zeros(len(c.ring), dtype=bool)
    return mask if c.area * sign > 0 else reversed_straight(mask)


def reversed_straight(mask: np.ndarray) -> np.ndarray:
    """The straight-edge mask of a ring read backwards (`ring[::-1]`)."""
    return np.roll(mask[::-1], -1)


def _ring_area_signed_by_depth(rings) -> list[float]:
    if not rings:
        return []
    depth, _ = _nesting(list(rings))
    return [abs(signed_area(r)) * (1 if d % 2 == 0 else -1) for r, d in zip(rings, depth)]


def _nesting(rings: list, areas: np.ndarray | None = None,
             slack: np.ndarray | None = None,
             layers: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(depth, parent) per ring: how many rings enclose it and the innermost one (-1: none).

    layers : (n,) int, a ring encloses only rings of its own layer (None: one layer): a part on
        CUT inside the sheet's outline on SHEET is a part, not a hole of the sheet.

    A ring is inside another when all its vertices and edge midpoints are inside it or within
    `slack` (per enclosing ring; default: `nest_rel` of the rings' extent) of its outline: a
    square sharing two edges with a larger one is its hole however the rounding of a 45-degree
    insert puts its corners, and a square inscribed in a flattened circle (whose chords cut
    inside the true circle) is inside it when the slack holds the circle's flattening bound. A
    contour that crosses another farther than that is not nested in it (overlapping parts of a
    nest stay parts), nor is one that closes a notch of another (an edge midpoint outside it);
    one whose points are all inside but whose edge crosses a notch is.

    A ring can only enclose a ring whose first vertex lies in its box: boxes are hashed into a
    uniform grid (cells the size of the median box), so candidates are found per cell, and a
    nest of 10,000 parts costs a few candidates per ring, not 10,000."""
    n = len(rings)
    depth = np.zeros(n, dtype=np.int64)
    parent = np.full(n, -1, dtype=np.int64)
    if n < 2:
        return depth, parent
    if slack is None:
        slack = np.full(n, DEFAULT.nest_rel * _size(rings))
    lo = np.array([r.min(axis=0) for r in rings]) - slack[:, None]
    hi = np.array([r.max(axis=0) for r in rings]) + slack[:, None]
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
    # the enclosed ring's own box (grown by the container's slack) within the container's
    same = np.ones(len(k_of), dtype=bool) if layers is None else layers[c_of] == layers[k_of]
    ok = (same & (c_of != k_of) & (area[c_of] > area[k_of])
          & (lo[c_of] <= lo[k_of] + slack[k_of, None]).all(axis=1)
          & (hi[c_of] >= hi[k_of] - slack[k_of, None]).all(axis=1))
    for k, c in zip(k_of[ok].tolist(), c_of[ok].tolist()):
        if _within(rings[k], rings[c], float(slack[c])):
            depth[k] += 1
            if parent[k] < 0 or area[c] < area[parent[k]]:
                parent[k] = c
    return depth, parent


# A layer whose one outline holds this share of the other layers' parts is taken for a sheet
# drawn without --sheet-layer (a note says so).
SHEET_SHARE = 0.8


def _layer_ids(contours: list, scopes: set | None = None) -> np.ndarray:
    """(n,) int: one number per layer (compared ignoring case, as AutoCAD's names); with
    `scopes`, only those layers have a number of their own (an SVG's Inkscape layers), the
    others share one (its groups, its shapes outside any)."""
    names: dict = {}
    keys = [(c.layer or "").casefold() for c in contours]
    if scopes is not None:
        own = {x.casefold() for x in scopes}
        keys = [k if k in own else "" for k in keys]
    return np.array([names.setdefault(k, len(names)) for k in keys], dtype=np.int64)


def _looks_like_a_sheet(contours: list, depth: np.ndarray, layer_ids: np.ndarray,
                        slack: np.ndarray) -> tuple[str, int, int] | None:
    """(layer, held, parts) for a sheet drawn without --sheet-layer: a layer whose one outer
    contour holds at least `SHEET_SHARE` of the outer contours of the other layers (two or
    more; a nest may have parts that leave its sheet); None when no layer does."""
    outer = np.flatnonzero(depth == 0)
    for lid in np.unique(layer_ids[outer]).tolist():
        own = outer[layer_ids[outer] == lid]
        others = outer[layer_ids[outer] != lid]
        if len(own) != 1 or len(others) < 2:
            continue
        k = int(own[0])
        smaller = [j for j in others.tolist() if abs(contours[k].area) > abs(contours[j].area)]
        held = int(_all_within([contours[j].ring for j in smaller], contours[k].ring,
                               float(slack[k])).sum())
        if held >= SHEET_SHARE * len(others):
            return contours[k].layer, held, len(others)
    return None


def _layer_hints(shown: str, contours: list, depth: np.ndarray, layer_ids: np.ndarray,
                 slack: np.ndarray, no_sheet: bool) -> list[str]:
    """Notes on layers that look like what the options say: a sheet drawn without --sheet-layer
    (`no_sheet`), and a layer whose every outline lies inside a part of another layer (an
    engraving or a marking: each is a part of its own that collides with the one around it)."""
    notes = []
    sheet = _looks_like_a_sheet(contours, depth, layer_ids, slack) if no_sheet else None
    if sheet is not None:
        layer, held, parts = sheet
        notes.append(f"{shown}: layer {layer} looks like a sheet (its outline holds {held} of the "
                     f"{parts} outlines on other layers, and collides with each part): pass "
                     f"--sheet-layer {layer}")
    sheet_id = None if sheet is None else layer_ids[[c.layer for c in contours].index(sheet[0])]
    outer = np.flatnonzero(depth == 0)
    lo = np.array([contours[k].ring.min(axis=0) for k in outer])
    hi = np.array([contours[k].ring.max(axis=0) for k in outer])
    grown = slack[outer, None]
    for lid in np.unique(layer_ids[outer]).tolist():
        if lid == sheet_id:
            continue
        own = np.flatnonzero(layer_ids[outer] == lid)
        hosts = np.flatnonzero((layer_ids[outer] != lid) & (layer_ids[outer] != sheet_id))

        def boxed(i):  # the hosts whose boxes (grown by their slack) hold contour i's box
            return outer[hosts[(lo[hosts] - grown[hosts] <= lo[i]).all(axis=1)
                               & (hi[hosts] + grown[hosts] >= hi[i]).all(axis=1)]]

        # all() stops at the first outline no other layer's part holds: a layer of parts costs
        # one box test, an engraving layer one _within per mark
        if len(hosts) and all(_held(int(outer[i]), boxed(i), contours, slack) for i in own.tolist()):
            layer = contours[int(outer[own[0]])].layer
            notes.append(f"{shown}: every outline on layer {layer} lies inside a part on another "
                         f"layer, and collides with it (engraving or marking?): --ignore-layers "
                         f"{layer} leaves them out")
    return notes


def _held(k: int, hosts: np.ndarray, contours: list, slack: np.ndarray) -> bool:
    """Whether contour k lies within one of the `hosts` (contours whose boxes hold its box)."""
    return any(abs(contours[h].area) > abs(contours[k].area)
               and _within(contours[k].ring, contours[h].ring, float(slack[h])) for h in hosts.tolist())


def _within(ring: np.ndarray, outer: np.ndarray, slack: float) -> bool:
    """Whether every vertex and edge midpoint of `ring` lies inside `outer` or within `slack` of
    its outline. Points go in blocks of about 2 million point-edge tests (bounded memory on a
    large outline; a contour that is not nested fails on its first block)."""
    mid = 0.5 * (ring + np.roll(ring, -1, axis=0))
    points = np.concatenate([ring, mid])
    step = max(16, (1 << 21) // max(len(outer), 1))
    for k in range(0, len(points), step):
        block = points[k:k + step]
        out = block[~inside(block, outer)]
        if len(out) and (_distance_to_ring(out, outer) > slack).any():
            return False
    return True


def _all_within(rings: list, outer: np.ndarray, slack: float) -> np.ndarray:
    """(len(rings),) bool: `_within` for many rings against one outline, their points tested
    together in blocks of about 2 million point-edge tests (a nest's parts against its sheet)."""
    if not rings:
        return np.zeros(0, dtype=bool)
    points = np.concatenate([np.concatenate([r, 0.5 * (r + np.roll(r, -1, axis=0))]) for r in rings])
    owner = np.repeat(np.arange(len(rings)), [2 * len(r) for r in rings])
    bad = np.zeros(len(points), dtype=bool)
    step = max(16, (1 << 21) // max(len(outer), 1))
    for k in range(0, len(points), step):
        block = points[k:k + step]
        out = np.flatnonzero(~inside(block, outer))
        if len(out):
            bad[k + out] = _distance_to_ring(block[out], outer) > slack
    return np.bincount(owner[bad], minlength=len(rings)) == 0


def _distance_to_ring(points: np.ndarray, ring: np.ndarray) -> np.ndarray:
    """(m,) distance of each point to the ring's outline (its closed polyline)."""
    a = ring
    ab = np.roll(ring, -1, axis=0) - a
    ap = points[:, None, :] - a[None, :, :]
    length2 = np.einsum("ij,ij->i", ab, ab)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.clip(np.einsum("mij,ij->mi", ap, ab) / length2, 0.0, 1.0)
    t = np.where(length2 > 0, t, 0.0)
    d = ap - t[:, :, None] * ab[None, :, :]
    return np.sqrt(np.einsum("mij,mij->mi", d, d).min(axis=1))


def _size(rings) -> float:
    """The diagonal of the rings' box (1 for no rings; never 0, as it scales tolerances)."""
    if not len(rings):
        return 1.0
    pts = np.concatenate(rings)
    return max(float(np.linalg.norm(pts.max(axis=0) - pts.min(axis=0))), 1e-300)


def _nest_slack(contours: list, size: float) -> np.ndarray:
    """(n,) how far outside each contour a point may lie and count as on it when contours are
    nested: the drawing's rounding (`nest_rel` of its size) and the contour's own flattening
    bound (its chords cut inside the curve it flattens by up to that)."""
    return DEFAULT.nest_rel * size + np.array([c.chord for c in contours], dtype=np.float64)


def _apply_nonzero(contours: list) -> list:
    """Drop the subpaths of nonzero-filled SVG elements that wind as their enclosing subpath of
    the same element does: under nonzero they are filled area, neither hole nor part."""
    while any(c.nonzero for c in contours):
        depth, parent = _nesting([c.ring for c in contours], np.array([c.area for c in contours]),
                                 slack=_nest_slack(contours, _size([c.ring for c in contours])))
        drop = set()
        for k, c in enumerate(contours):
            p = int(parent[k])
            if c.nonzero and p >= 0 and contours[p].group == c.group and c.area * contours[p].area > 0:
                drop.add(k)
        if not drop:
            break
        contours = [c for k, c in enumerate(contours) if k not in drop]
    return contours


def _join(pieces: list, tol: float, merge: float) -> tuple[list, list, float]:
    """Chain open pieces (`_Piece`) end to end into closed contours: (contours, the pieces left
    open, the widest gap bridged). Ends meet within `tol`; ends within `merge` (rounding) are one
    point, farther ones are joined by a straight edge. A contour's bound is the largest of its
    pieces'."""
    if not pieces:
        return [], [], 0.0
    from scipy.spatial import cKDTree

    ends = np.array([[p.points[0], p.points[-1]] for p in pieces]).reshape(-1, 2)  # 2k start, 2k+1 end
    tree = cKDTree(ends)
    used = np.zeros(len(pieces), dtype=bool)
    out, left = [], []
    bridged = 0.0
    for first in range(len(pieces)):
        if used[first]:
            continue
        used[first] = True
        chain, members, gaps = [pieces[first].points], [first], []
        masks = [pieces[first].straight.copy()]
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
            members.append(k)
            pts = pieces[k].points if nxt % 2 == 0 else pieces[k].points[::-1]
            mask = pieces[k].straight if nxt % 2 == 0 else reversed_straight(pieces[k].straight)
            gaps.append(float(np.linalg.norm(pts[0] - tail)))
            # a gap wider than rounding keeps both ends: the straight edge between them bridges it
            if gaps[-1] <= merge:
                masks[-1][-1] = mask[0]  # the tail goes on along the piece's first edge
                chain.append(pts[1:])
                masks.append(mask[1:].copy())
            else:
                masks[-1][-1] = True  # the bridge
                chain.append(pts)
                masks.append(mask.copy())
            tail = pts[-1]
            closed = bool(np.linalg.norm(tail - start) <= tol)
        if closed:
            ring = np.concatenate(chain)
            straight = np.concatenate(masks)
            straight[-1] = True  # the closing edge, when it bridges a gap
            gaps.append(float(np.linalg.norm(ring[-1] - ring[0])))
            if len(ring) > 1 and gaps[-1] <= merge:
                ring, straight = ring[:-1], straight[:-1]
            bridged = max([bridged] + gaps)
            piece = pieces[first]
            ring = np.ascontiguousarray(ring, dtype=np.float64)
            out.append(_Contour(ring=ring, name=piece.name, layer=piece.layer, group=piece.group,
                                nonzero=False, area=signed_area(ring),
                                chord=max(pieces[m].chord for m in members), straight=straight))
        else:
            left.extend(pieces[m] for m in members)
    return out, left, bridged


def _arrange_branches(pieces: list, closed: list, tol: float, shown: str, path):
    """(faces as contours, the pieces left to chain, the closed contours left as they are, the
    pieces that bound no face, notes): the open pieces whose ends do not meet two by two within
    `tol` (a branch point where three or more meet, an end on another piece's side, a loose end),
    with the pieces and closed contours of their layer their ends touch, become the faces of
    their planar arrangement (`gjkcli.mesh.arrangement`, ends within `tol` merged); the rest is
    left to `_join`, which chains ends that meet two by two, as before."""
    if not pieces:
        return [], pieces, closed, [], []
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    from gjkcli.mesh.arrangement import arrange, branch_sets, linestrings

    ends = np.array([[p.points[0], p.points[-1]] for p in pieces]).reshape(-1, 2)
    label, size = branch_sets(ends, tol)
    n = len(pieces)
    # pieces joined through a shared end are one component; one with an end shared by other
    # than two ends branches
    owner = np.repeat(np.arange(n), 2)
    hub = n + label
    graph = coo_matrix((np.ones(2 * n), (owner, hub)), shape=(n + len(size), n + len(size)))
    _, comp = connected_components(graph, directed=False)
    odd = np.zeros(comp.max() + 1, dtype=bool)
    odd[comp[hub[size[label] != 2]]] = True
    branchy = odd[comp[:n]]
    if not branchy.any():
        return [], pieces, closed, [], []
    extras.require("arrangement", path, "reading line work that branches")
    import shapely

    # what the branching pieces' ends touch on their own layer (nesting never crosses layers: a
    # sheet outline on its layer, touched by the parts' line work, stays the sheet): other
    # components' pieces, closed contours
    loose_ends = shapely.points(ends[np.repeat(branchy, 2)])
    end_layer = np.array([pieces[k].layer for k in np.repeat(np.flatnonzero(branchy), 2).tolist()], dtype=object)
    piece_geoms = linestrings([p.points for p in pieces])
    at, hit = shapely.STRtree(piece_geoms).query(loose_ends, predicate="dwithin", distance=tol)
    hit = hit[np.array([pieces[k].layer for k in hit.tolist()], dtype=object) == end_layer[at]]
    touched = np.zeros(comp.max() + 1, dtype=bool)
    touched[comp[hit]] = True
    take = branchy | touched[comp[:n]]
    ring_geoms = linestrings([c.ring for c in closed], ring=True)
    take_closed = np.zeros(len(closed), dtype=bool)
    if closed:
        # an end on a curve lies outside its flattened ring by up to the ring's bound (the
        # chords cut inside): within that, the piece meets it (and crosses the ring)
        reach = tol + max(c.chord for c in closed)
        at, hit = shapely.STRtree(ring_geoms).query(loose_ends, predicate="dwithin", distance=reach)
        take_closed[hit[np.array([closed[k].layer for k in hit.tolist()], dtype=object) == end_layer[at]]] = True
    items = [pieces[k] for k in np.flatnonzero(take)] + [closed[k] for k in np.flatnonzero(take_closed)]
    lines = [p.points for p in items[:int(take.sum())]] + \
            [np.concatenate([c.ring, c.ring[:1]]) for c in items[int(take.sum()):]]
    masks = [p.straight for p in items[:int(take.sum())]] + \
            [c.straight if c.straight is not None else np.zeros(len(c.ring), dtype=bool)
             for c in items[int(take.sum()):]]
    arr = arrange(lines, masks, tol)
    out, named = [], set()
    for face in arr.faces:
        pick = next((k for k in sorted(face.pieces) if k not in named), min(face.pieces))
        named.add(pick)
        src = items[pick]
        ring = face.ring
        chord = max(items[k].chord for k in face.pieces)
        out.append(_Contour(ring=ring, name=src.name, layer=src.layer, group=src.group,
                            nonzero=False, area=signed_area(ring), chord=chord,
                            straight=face.straight))
    unused = [items[k] for k in arr.unused if k < int(take.sum())]
    notes = []
    if arr.branches:
        def what(k):
            it = items[k]
            return it.what if isinstance(it, _Piece) else f"{it.name} (closed)"

        shown_b = "; ".join(f"at ({x:.6g}, {y:.6g}): {', '.join(what(k) for k in ks[:4])}"
                            + (", ..." if len(ks) > 4 else "")
                            for (x, y), ks in arr.branches[:3])
        nb = len(arr.branches)
        notes.append(f"{shown}: {nb} branch point{'s' * (nb != 1)} where three or more pieces "
                     f"meet (e.g. {shown_b}{'; ...' if nb > 3 else ''}): {len(items)} pieces read "
                     f"as a planar arrangement, {len(out)} face{'s' * (len(out) != 1)} (the smallest closed loops); an "
                     f"edge two faces share belongs to both")
    elif out:
        notes.append(f"{shown}: {len(items)} pieces whose ends do not meet two by two read as a "
                     f"planar arrangement: {len(out)} face{'s' * (len(out) != 1)} (the smallest closed loops)")
    if arr.dangling and len(unused) < len(items):
        notes.append(f"{shown}: {arr.dangling} stretch{'es' * (arr.dangling != 1)} of line work "
                     f"bound no face (loose ends, or cuts inside a face): left out")
    rest = [p for k, p in enumerate(pieces) if not take[k]]
    kept = [c for k, c in enumerate(closed) if not take_closed[k]]
    return out, rest, kept, unused, notes


def _contour(points: np.ndarray, piece: _Piece) -> _Contour:
    ring = np.ascontiguousarray(points, dtype=np.float64)
    straight = piece.straight.copy()
    straight[-1] = True  # the closing edge bridges the gap between the piece's ends
    return _Contour(ring=ring, name=piece.name, layer=piece.layer, group=piece.group,
                    nonzero=False, area=signed_area(ring), chord=piece.chord, straight=straight)


def _open_summary(left: list, shown: int = 3) -> str:
    """"134 open pieces (layers: Gravir 120, 0 14; e.g. LINE #2A, ARC #3F, ...)"."""
    by_layer: dict = {}
    for p in left:
        by_layer[p.layer] = by_layer.get(p.layer, 0) + 1
    n = len(left)
    text = f"{n} open piece{'s' * (n != 1)}"
    what = []
    if any(layer is not None for layer in by_layer):
        layers = sorted(by_layer.items(), key=lambda kv: (-kv[1], str(kv[0])))
        what.append("on layer" + "s" * (len(layers) != 1) + " "
                    + ", ".join(f"{layer} ({c})" for layer, c in layers))
    examples = ", ".join(p.what for p in left[:shown]) + (", ..." if n > shown else "")
    what.append(f"e.g. {examples}" if n > 1 else examples)
    return f"{text} ({'; '.join(what)})"


def _closed_or_piece(points: np.ndarray, straight: np.ndarray, is_closed: bool, name, layer,
                     group, nonzero, closed: list, pieces: list, tol: float, chord: float,
                     what: str) -> None:
    """File one flattened entity or subpath: a closed contour, or an open piece to be joined.
    straight : (n,) bool, edge i (point i to i + 1; the last one closing) drawn straight."""
    points = np.asarray(points, dtype=np.float64)[:, :2]
    keep = _dedupe_mask(points, tol)
    if not keep.all():
        # a kept point's edge runs on to the next kept point: its last original edge says
        kept = np.flatnonzero(keep)
        straight = straight[np.concatenate([kept[1:] - 1, [len(points) - 1]])]
        points = points[kept]
    if len(points) < 2:
        return
    if is_closed or (len(points) > 2 and np.linalg.norm(points[-1] - points[0]) <= tol):
        if np.linalg.norm(points[-1] - points[0]) <= tol:
            points, straight = points[:-1], straight[:-1]
        if len(points) >= 3:
            ring = np.ascontiguousarray(points)
            closed.append(_Contour(ring=ring, name=name, layer=layer, group=group, nonzero=nonzero,
                                   area=signed_area(ring), chord=chord,
                                   straight=np.ascontiguousarray(straight, dtype=bool)))
    else:
        pieces.append(_Piece(points=points, name=name, layer=layer, group=group, chord=chord,
                             what=what, straight=np.ascontiguousarray(straight, dtype=bool)))


@contextlib.contextmanager
def _library_warnings():
    """Collect what ezdxf logs (``copy process ignored DIMASSOC(#F5) ...``) instead of letting
    it reach stderr; yields a callable giving the distinct lines, each with its count."""
    logger = logging.getLogger("ezdxf")
    lines: dict = {}

    class _Collect(logging.Handler):
        def emit(self, record):
            text = " ".join(record.getMessage().split())
            lines[text] = lines.get(text, 0) + 1

    handler = _Collect(level=logging.WARNING)
    propagate = logger.propagate
    logger.addHandler(handler)
    logger.propagate = False
    try:
        yield lambda: [t if c == 1 else f"{t} ({c} times)" for t, c in lines.items()]
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate


def _length_in(value, units: str | None, path: Path, option: str) -> float:
    """A length option (a float in the file's units, or a `gjkcli.units.Length`) in the file's
    units; an InputError when it has a unit and the file states none gjk knows."""
    from gjkcli.units import UnitError, scaled_unit

    try:
        if getattr(value, "unit", None) is not None and scaled_unit(units) is not None:
            s, short = scaled_unit(units)  # "0.264583 mm": one user unit is s mm
            out = value.to(short) / s
        else:
            out = value.to(units) if hasattr(value, "to") else float(value)
    except UnitError as exc:
        raise InputError(path, f"{option} {value}: {exc}") from None
    if not (out >= 0 and math.isfinite(out)):
        raise InputError(path, f"{option} must be a finite length >= 0, got {value}")
    return float(out)


def _dedupe_mask(points: np.ndarray, tol: float) -> np.ndarray:
    """(n,) bool: the points kept when consecutive repeats go (a flattened curve repeats its
    joints)."""
    keep = np.ones(len(points), dtype=bool)
    if len(points) >= 2:
        step = points[1:] - points[:-1]
        keep[1:] = np.hypot(step[:, 0], step[:, 1]) > tol * 1e-3
    return keep


# --------------------------------------------------------------------------------------------
# SVG
# --------------------------------------------------------------------------------------------

_LENGTH = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([a-zA-Z%]*)\s*$")


def _read_svg(path: Path, layers: Layers = Layers(), sheet_of=None):
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
    layer_of, scopes = _svg_layers(se, svg)
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
    seen = {layer_of.get(id(e)) for _, e, _ in shapes} - {None}
    if layers and seen:
        shapes = [t for t in shapes if layers.takes(layer_of.get(id(t[1])))
                  or (sheet_of is not None and sheet_of(layer_of.get(id(t[1]))))]
        if not shapes:
            raise InputError(path, f"holds nothing on the layers asked for ({_layer_ask(layers)}); "
                                   f"the file's layers: {', '.join(sorted(seen))}")
    allpts = [np.array([[s.start.x, s.start.y] for s in p if s.start is not None]
                       + [[s.end.x, s.end.y] for s in p if s.end is not None]) for _, _, p in shapes]
    allpts = np.concatenate([a for a in allpts if len(a)]) if any(len(a) for a in allpts) else np.zeros((1, 2))
    size = float(np.linalg.norm(allpts.max(axis=0) - allpts.min(axis=0)))
    chord = chord_for(size)
    tol = DEFAULT.join_rel * max(size, 1.0)
    closed: list = []
    pieces: list = []
    counts: dict[str, int] = {}
    for k, e, p in shapes:
        tag = type(e).__name__.lower()
        counts[tag] = counts.get(tag, 0) + 1
        name = e.id if getattr(e, "id", None) else f"{tag}{counts[tag]}"
        layer = layer_of.get(id(e))
        # nonzero filling applies to a filled shape; one drawn with fill: none (a cut line, as
        # laser-cut files draw every outline) has each closed subpath as an outline
        nonzero = (str(e.values.get("fill-rule", "nonzero")).strip().lower() != "evenodd"
                   and str(e.values.get("fill", "")).strip().lower() != "none")
        for sub in p.as_subpaths():
            pts, straight, is_closed, had_curve = _flatten_svg(se, sub, chord)
            if len(pts):
                _closed_or_piece(pts, straight, is_closed, name, layer, k, nonzero, closed, pieces,
                                 tol, chord if had_curve else 0.0, name)
    return _Read(closed=closed, pieces=pieces, units=units, join_tol=tol, layers=seen,
                 scopes=scopes & seen)


_INKSCAPE = "{http://www.inkscape.org/namespaces/inkscape}"


def _svg_layers(se, svg) -> tuple[dict, set]:
    """({id(shape): its layer}, the Inkscape layers' names): a shape's layer is the label (else
    id) of the innermost Inkscape layer around it (``<g inkscape:groupmode="layer"
    inkscape:label="Parts">``), else the id of the outermost group around it that has one
    (``<g id="sheet">``); shapes in neither are on no layer. Inkscape layers are nesting scopes,
    as DXF layers; groups are not (a hole may be drawn in another group than its part)."""
    out: dict = {}
    inkscape: set = set()

    def walk(group, layer):
        for child in group:
            if isinstance(child, se.Group) and not isinstance(child, se.SVG):
                mine = layer
                attrs = child.values
                own = child.id if getattr(child, "id", None) else None
                if attrs.get(_INKSCAPE + "groupmode") == "layer" and (attrs.get(_INKSCAPE + "label") or own):
                    mine = attrs.get(_INKSCAPE + "label") or own
                    inkscape.add(mine)
                elif layer is None and own is not None:
                    mine = own
                walk(child, mine)
            elif isinstance(child, se.Shape):
                if layer is not None:
                    out[id(child)] = layer
    walk(svg, None)
    return out, inkscape


def _flatten_svg(se, sub, chord: float):
    """(points (n, 2), (n,) whether edge i (to i + 1; the last one closing) is a straight
    segment, closed, whether a curve was flattened) of one subpath."""
    pts: list = []
    straight: list = []  # one per point: the edge that leaves it
    closed = False
    curved = False
    for seg in sub:
        if isinstance(seg, se.Move):
            if seg.end is not None:
                pts.append([seg.end.x, seg.end.y])
                straight.append(True)
            continue
        if isinstance(seg, se.Close):
            closed = True  # the closing edge is a straight line (True already)
            continue
        if seg.start is None or seg.end is None:
            continue
        if not pts:
            pts.append([seg.start.x, seg.start.y])
            straight.append(True)
        if isinstance(seg, se.Line):
            pts.append([seg.end.x, seg.end.y])
            straight[-1] = True
            straight.append(True)
            continue
        curved = True
        n = _segments_needed(se, seg, chord)
        t = np.linspace(0.0, 1.0, n + 1)[1:]
        pts.extend(np.asarray(seg.npoint(t), dtype=np.float64).reshape(-1, 2).tolist())
        straight[-1] = False
        straight.extend([False] * (n - 1) + [True])
    return (np.array(pts, dtype=np.float64).reshape(-1, 2), np.array(straight, dtype=bool),
            closed, curved)


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
    """The unit of one user unit as the root's width states it: its unit when the viewBox maps
    one user unit to one of it (or there is no viewBox and the width is in px: user units are CSS
    px, 1/96 in), "<s> <unit>" when it maps one user unit to s of them, "px" for a width in other
    units without a viewBox; None when the width is missing, a bare number or a percentage (the
    file does not say)."""
    width = svg.values.get("width")
    m = _LENGTH.match(str(width)) if width is not None else None
    if m is None or not m.group(2) or m.group(2) == "%":
        return None
    value, unit = float(m.group(1)), m.group(2).lower()
    if svg.viewbox is None or not svg.viewbox.width:
        return "px"  # user units are CSS px whatever the width says
    per_user = value / float(svg.viewbox.width)
    return unit if abs(per_user - 1.0) < 1e-9 else f"{per_user:.15g} {unit}"  # every digit: it scales


# --------------------------------------------------------------------------------------------
# DXF
# --------------------------------------------------------------------------------------------

_DXF_KINDS = ("LINE", "LWPOLYLINE", "POLYLINE", "CIRCLE", "ARC", "ELLIPSE", "SPLINE")


def _read_dxf(path: Path, layers: Layers, sheet_of):
    extras.require("dxf", path, "reading DXF")
    import ezdxf

    doc, notes = _open_dxf(ezdxf, path)
    got = _read_dxf_doc(doc, path, layers, sheet_of)
    got.notes.extend(notes)
    return got


def _open_dxf(ezdxf, path: Path):
    """(the document, notes): the strict read (`ezdxf.readfile`); when it fails, ezdxf's recover
    mode (`ezdxf.recover`, for files CAM programs write that break the rules); when that fails
    too, recover mode on the file without its TABLES section (a table entry without a name stops
    both reads, and the parts need no line types, colours or layer table). Raises InputError
    naming what each read said."""
    from ezdxf import recover

    try:
        return ezdxf.readfile(str(path)), []
    except Exception as exc:  # noqa: BLE001 - any failure of the strict read: try recover mode
        strict = exc
    said = f"the strict read failed ({_short(strict)})"
    printed = io.StringIO()  # recover mode prints what it repaired on stdout
    try:
        with contextlib.redirect_stdout(printed):
            doc, auditor = recover.readfile(str(path))
    except Exception as exc:  # noqa: BLE001
        text = _without_tables(path)
        if text is None:
            raise InputError(path, f"not a valid DXF file: {said}, and ezdxf's recover mode "
                                   f"too ({_short(exc)}); re-export it") from None
        try:
            with contextlib.redirect_stdout(printed):
                doc, auditor = recover.read(io.BytesIO(text))
        except Exception as exc2:  # noqa: BLE001
            raise InputError(path, f"not a valid DXF file: {said}, and ezdxf's recover mode too "
                                   f"({_short(exc2)}); re-export it") from None
        return doc, _repairs(printed) + [f"{said}; ezdxf's recover mode stopped in its TABLES section "
                     f"({_short(exc)}), so it was read without it (line types, colours and the "
                     f"layer table are not needed for the parts)"]
    fixes = len(auditor.fixes) + len(auditor.errors)
    return doc, _repairs(printed) + [f"{said}; read by ezdxf's recover mode"
                 + (f", which fixed {fixes} problem{'s' * (fixes != 1)}" if fixes else "")]


def _repairs(printed: io.StringIO, shown: int = 3) -> list:
    """The repairs recover mode printed ("recovered invalid floating point value "1,5" near
    line 64 as "1.0""), as one note."""
    lines = list(dict.fromkeys(" ".join(t.split()) for t in printed.getvalue().splitlines() if t.strip()))
    if not lines:
        return []
    more = f"; ... ({len(lines)} in all)" if len(lines) > shown else ""
    return ["ezdxf's recover mode: " + "; ".join(lines[:shown]) + more]


def _without_tables(path: Path) -> bytes | None:
    """The ASCII DXF's bytes without its TABLES section (None: not an ASCII DXF with one). DXF is
    a sequence of (group code, value) line pairs; the section runs from (0, SECTION), (2, TABLES)
    to the next (0, ENDSEC)."""
    raw = path.read_bytes()
    lines = raw.splitlines(keepends=True)
    if len(lines) < 4 or raw.startswith(b"AutoCAD Binary DXF"):
        return None
    out, k, cut = [], 0, False
    while k + 1 < len(lines):
        code, value = lines[k].strip(), lines[k + 1].strip()
        if (code == b"0" and value == b"SECTION" and k + 3 < len(lines)
                and lines[k + 2].strip() == b"2" and lines[k + 3].strip() == b"TABLES"):
            end = k + 4
            while end + 1 < len(lines) and not (lines[end].strip() == b"0"
                                                and lines[end + 1].strip() == b"ENDSEC"):
                end += 2
            k, cut = end + 2, True
            continue
        out += lines[k:k + 2]
        k += 2
    out += lines[k:]
    return b"".join(out) if cut else None


def _raised_by(exc: BaseException, *libraries: str) -> bool:
    """Whether the exception was raised inside one of the libraries (its innermost frame's
    module), or is one of their exception classes."""
    if type(exc).__module__.split(".")[0] in libraries:
        return True
    tb = exc.__traceback__
    last = None
    while tb is not None:
        last = tb
        tb = tb.tb_next
    name = last.tb_frame.f_globals.get("__name__", "") if last is not None else ""
    return name.split(".")[0] in libraries


def _read_dxf_doc(doc, path: Path, layers: Layers, sheet_of):
    msp = doc.modelspace()
    # without a HEADER section (OpenSCAD writes none) ezdxf fills in its own defaults ($INSUNITS
    # 6, metres): such a file states no unit
    units = _INSUNITS.get(int(doc.header.get("$INSUNITS", 0) or 0)) if _has_header(path) else None
    placed = list(_dxf_entities(msp))
    if not placed:
        raise InputError(path, "holds no LINE, LWPOLYLINE, POLYLINE, CIRCLE, ARC, ELLIPSE or "
                               "SPLINE in model space; draw the parts in it")
    seen = {layer for _, _, layer, _ in placed}
    if layers:
        placed = [p for p in placed if layers.takes(p[2]) or (sheet_of is not None and sheet_of(p[2]))]
        if not placed:
            raise InputError(path, f"holds nothing on the layers asked for ({_layer_ask(layers)}); "
                                   f"the file's layers: {', '.join(sorted(seen))}")
    size = _dxf_size(placed)
    chord = chord_for(size)
    tol = DEFAULT.join_rel * max(size, 1.0)
    closed: list = []
    pieces: list = []
    for k, (e, name, layer, what) in enumerate(placed):
        try:
            pts, straight, is_closed, had_curve = _flatten_dxf(e, chord)
        except Exception as exc:  # noqa: BLE001 - one bad entity names itself
            raise InputError(path, f"{e.dxftype()} {name}: cannot be read ({_short(exc)}); "
                                   f"fix or redraw it") from None
        _closed_or_piece(pts, straight, is_closed, name, layer, k, False, closed, pieces, tol,
                         chord if had_curve else 0.0, what)
    return _Read(closed=closed, pieces=pieces, units=units, join_tol=tol, layers=seen)


def _has_header(path: Path) -> bool:
    """Whether a DXF file has a HEADER section: the first section of the file, by the DXF
    reference, so it is looked for in the group codes before the first ENTITIES, BLOCKS or
    TABLES section (a binary DXF is taken to have one)."""
    with open(path, "rb") as f:
        head = f.read(1 << 16)
    if head.startswith(b"AutoCAD Binary DXF"):
        return True
    names = re.findall(rb"(?m)^[ \t]*2[ \t]*\r?\n[ \t]*([A-Z_]+)[ \t]*\r?$", head)
    for name in names:
        if name == b"HEADER":
            return True
        if name in (b"CLASSES", b"TABLES", b"BLOCKS", b"ENTITIES", b"OBJECTS"):
            return False
    return False


def _layer_ask(layers: Layers) -> str:
    said = []
    if layers.only:
        said.append("--layers " + ",".join(layers.only))
    if layers.ignore:
        said.append("--ignore-layers " + ",".join(layers.ignore))
    return ", ".join(said)


def _flatten_dxf(e, chord: float):
    """(points (n, 2) in WCS, (n,) whether edge i (to i + 1; the last one closing) is drawn
    straight, closed, whether a curve was flattened) of one entity. Arcs, circles, ellipses and
    splines are flattened by the entity's own `flattening` (points on the curve itself, not on a
    Bezier approximation of it); polylines through their LINE and ARC pieces (bulges are arcs)."""
    kind = e.dxftype()
    if kind == "LINE":
        return _xy([e.dxf.start, e.dxf.end]), np.array([True, False]), False, False
    if kind in ("CIRCLE", "ARC", "ELLIPSE", "SPLINE"):
        pts = _xy(e.flattening(chord))
        if kind == "CIRCLE":
            closed = True
        elif kind == "ELLIPSE":
            closed = abs(abs(e.dxf.end_param - e.dxf.start_param) - 2 * math.pi) < 1e-9
        else:
            closed = kind == "SPLINE" and bool(e.closed)
        return pts, np.zeros(len(pts), dtype=bool), closed, True
    # LWPOLYLINE, POLYLINE: straight pieces and bulge arcs, chained in the polyline's order
    closed = bool(e.closed) if kind == "LWPOLYLINE" else bool(e.is_closed)
    if kind == "LWPOLYLINE" and _plain_lwpolyline(e):  # the common case, without ezdxf's pieces
        pts = np.array(e.get_points("xy"), dtype=np.float64).reshape(-1, 2)
        return pts, np.ones(len(pts), dtype=bool), closed, False
    out: list = []
    straight: list = []
    curved = False
    for piece in e.virtual_entities():
        if piece.dxftype() == "LINE":
            pts, line = _xy([piece.dxf.start, piece.dxf.end]), True
        elif piece.dxftype() == "ARC":
            pts, line, curved = _xy(piece.flattening(chord)), False, True
        else:
            continue
        if out:
            tail = out[-1][-1]
            if np.linalg.norm(pts[-1] - tail) < np.linalg.norm(pts[0] - tail):
                pts = pts[::-1]  # an ARC runs counter-clockwise whatever the bulge's sign
            pts = pts[1:]
            straight[-1][-1] = line  # the edge that leaves the tail is this piece's first
        out.append(pts)
        straight.append(np.full(len(pts), line))
        straight[-1][-1] = False  # to be set by the next piece (or the closing edge below)
    if not out:
        return np.zeros((0, 2)), np.zeros(0, dtype=bool), closed, False
    # a closed polyline's last piece comes back to its first vertex (dropped as a repeat), so
    # its last edge is judged by that piece
    return np.concatenate(out), np.concatenate(straight), closed, curved


def _dxf_size(placed) -> float:
    """The diagonal of the box of the entities' defining points (vertices, centres grown by
    radii, control points): the drawing's size for the chord, without flattening anything."""
    lo = np.full(2, np.inf)
    hi = np.full(2, -np.inf)
    for e, *_ in placed:
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
                # the control points' box holds the curve (their hull does); a spline given by
                # fit points only gets its control points from ezdxf's construction tool.
                # ezdxf keeps them as a packed VertexArray (rows of x, y, z, no `.x`)
                ctrl = e.control_points if len(e.control_points) else e.construction_tool().control_points
                pts = np.asarray([tuple(v)[:2] for v in ctrl], dtype=np.float64).reshape(-1, 2)
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


def _dxf_entities(layout, block: str | None = None, handle: str | None = None, depth: int = 0,
                  inherit: str | None = None):
    """(entity in world coordinates, part name, layer, how a warning names it) for the drawable
    entities, INSERTs expanded (nested ones too) into virtual entities placed by their full
    transforms. An entity on layer "0" inside a block is on its INSERT's layer, as AutoCAD
    draws it."""
    for e in layout:
        kind = e.dxftype()
        layer = e.dxf.get("layer", "0")
        if inherit is not None and layer == "0":
            layer = inherit
        if kind == "INSERT":
            if depth > 32:
                continue
            name = block or e.dxf.name
            h = handle or e.dxf.handle
            try:
                virtual = list(e.virtual_entities())
            except Exception:  # noqa: BLE001 - a non-uniform scale of an arc ezdxf cannot place
                continue
            yield from _dxf_entities(virtual, name, h, depth + 1, layer)
        elif kind in _DXF_KINDS:
            if block is not None:
                yield e, f"{block}@{handle}", layer, f"{kind} in {block}@{handle}"
            else:
                yield e, f"{layer}:{e.dxf.handle}", layer, f"{kind} #{e.dxf.handle}"


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
    """A library's message on one line, in words: a Python type's repr in it ("got <class
    'NoneType'>", ezdxf's) as the type's name ("nothing" for None), and never the exception's
    class name for a message it does not have."""
    text = re.sub(r"<class '(?:\w+\.)*(\w+)'>", lambda m: "nothing" if m[1] == "NoneType" else m[1],
                  " ".join(str(exc).split())) or "it gave no reason"
    return text if len(text) <= limit else text[:limit - 3] + "..."


def sheet_frame(parts, sheets, layer) -> FlatPart:
    """The sheet's frame, the object a run checks every part against: a box around every part
    (a FlatParts) and sheet, with the sheet rings cut out (even-odd), named "sheet:LAYER". A part
    that leaves the sheet overlaps the frame, one within the clearance of its edge is closer
    than the clearance to it: the run needs to know nothing of sheets."""
    pts = np.concatenate([parts.vertices] + [r for s in sheets for r in s.rings])
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    margin = max(float(np.linalg.norm(hi - lo)), 1.0)
    lo, hi = lo - margin, hi + margin
    box = np.array([[lo[0], lo[1]], [hi[0], lo[1]], [hi[0], hi[1]], [lo[0], hi[1]]])
    rings = (box,) + tuple(r[::-1].copy() for s in sheets for r in s.rings)
    straight = [np.ones(4, dtype=bool)]
    for s in sheets:
        masks = s.straight or tuple(np.zeros(len(r), dtype=bool) for r in s.rings)
        straight.extend(reversed_straight(m) for m in masks)
    return FlatPart(name=f"sheet:{layer}", source="<sheet>", rings=rings, units=sheets[0].units,
                    chord=max(s.chord for s in sheets), layer=sheets[0].layer,
                    straight=tuple(straight))
