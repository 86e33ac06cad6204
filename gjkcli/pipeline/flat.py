"""The run of `gjk check` and `gjk scan` on 2D drawings (SVG, DXF): parts -> candidate pairs ->
the plane's narrow phase -> the same findings as in 3D.

1. **Parts** (`gjkcli.mesh.flat`): `check` reads each file as one part (all its closed contours,
   even-odd); `scan` gives every outer contour with its holes as a part, so a part in another's
   hole is its own part, clear of the one around it. A file that cannot be read is a `Problem`;
   the others are still checked.
2. **Sheet** (`--sheet-layer NAME`, DXF): the contours on that layer are the sheet, not parts.
   The sheet becomes one more object, its *frame*: a box around everything with the sheet cut
   out of it (even-odd). A part that leaves the sheet overlaps the frame (a collision with
   "sheet:NAME"), one within the clearance of the sheet's edge is closer than the clearance to
   the frame (clearance), one on the edge touches it: the statuses of every other pair, so every
   report reads them.
3. **Candidate pairs**: `gjkcli.scene.broadphase`'s compiled sweep ("sweep") on the 2D boxes,
   grown by half the clearance, the touching band and both flattening bounds.
4. **Narrow phase**: `gjkcli.engine.plane.batch` on the candidate pairs (GJK and EPA for convex
   pairs, the edges for the others).
5. **Verdicts**: a pair's touching band is at least the sum of the two parts' own flattening
   bounds (`FlatPart.chord`: 0 for a part of straight edges), so no clear, collision or clearance
   verdict rests on how curves were cut into chords, and no pair pays for another part's curves:
   polygons closer than that read as touching, and a pair within the clearance plus both bounds
   fails the clearance, unless its gap is within the touching band's rounding of the clearance
   (at it, as a gap that close to 0 is touching): a nest laid out exactly at its margin passes.
   A pair that fails only by its bounds is bounded edge by edge (`_gap_lower_bound`: chords of
   curves widened by their part's bound, edges drawn straight exact), so a plate whose curves
   lie away from its closest edges passes at its margin too.

The reader's choices travel in `Options`: `layers` and `ignore_layers` (DXF layer globs,
case-insensitive), `join_tolerance`, `sheet_layer`; what it assumed or left out comes back as
each file's notes.
"""
from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from gjkcli.engine.results import Status
from gjkcli.errors import InputError, Problem, one_line
from gjkcli.pipeline.findings import (Finding, Findings, LazyRecords, ObjectRecord, SEVERITY,
                                      violates)

__all__ = ["check_flat", "scan_flat", "is_flat_run", "mixing_error"]

# DXF's and SVG's suffixes (gjkcli.mesh.flat.FLAT_TYPES, repeated so that choosing the run costs
# no import of the mesh layer's readers).
_FLAT = (".svg", ".dxf")


def is_flat_run(paths) -> bool:
    """Whether the inputs are 2D drawings. InputError when 2D and 3D files are mixed."""
    paths = [Path(p) for p in paths]
    flat = [p for p in paths if p.suffix.lower() in _FLAT]
    if flat and len(flat) < len(paths):
        raise mixing_error(flat[0], next(p for p in paths if p.suffix.lower() not in _FLAT))
    return bool(flat)


def mixing_error(flat, solid) -> InputError:
    return InputError(flat, f"is a 2D drawing and {solid} is a 3D file: gjk checks 2D parts "
                            f"against 2D parts and 3D against 3D; give files of one kind")


def check_flat(path_a, path_b, options, *, progress=None) -> Findings:
    """`gjk check a.svg b.dxf`: each file one part, the pair listed."""
    from gjkcli.mesh.flat import load_flat_part

    run = _FlatRun(options, "check", progress)
    t = time.perf_counter()
    parts, source = [], []
    for k, p in enumerate((path_a, path_b)):
        try:
            parts.append(load_flat_part(p, shown=str(p), layers=_layers(options),
                                        join_tolerance=options.join_tolerance))
            source.append(k)
        except InputError as exc:
            if options.strict:
                raise
            run.problems.append(Problem(file=str(p), message=one_line(exc.message)))
    run.stage("load", t)
    return run.findings(parts, np.asarray(source, dtype=np.int64), None, across=True)


def scan_flat(paths, options, *, sheet_layer: str | None = None, progress=None) -> Findings:
    """`gjk scan drawing.dxf ...`: every part of every drawing against every other, and against
    the sheet of `sheet_layer`."""
    from gjkcli.mesh.flat import FlatParts, read_flat_objects

    run = _FlatRun(options, "scan", progress)
    t = time.perf_counter()
    paths = list(paths)
    several = len(paths) > 1
    read, sheets = [], []
    for p in paths:
        prefix = Path(p).name if several else None
        try:
            got, sheet = read_flat_objects(p, prefix=prefix, shown=str(p), sheet_layer=sheet_layer,
                                           layers=_layers(options),
                                           join_tolerance=options.join_tolerance)
        except InputError as exc:
            if options.strict:
                raise
            run.problems.append(Problem(file=str(p), message=one_line(exc.message)))
            continue
        read.append(got)
        if sheet is not None:
            sheets.append(sheet)
    parts = _unique(FlatParts.joined(read))
    run.stage("load", t)
    frame = _frame(parts, sheets, sheet_layer) if sheets and parts else None
    return run.findings(parts, np.zeros(len(parts), dtype=np.int64), frame, across=False)


def _layers(options):
    """The options' DXF layer selection as the reader takes it."""
    from gjkcli.mesh.flat import Layers

    return Layers(only=tuple(options.layers or ()), ignore=tuple(options.ignore_layers or ()))


class _FlatRun:
    def __init__(self, options, command: str, progress):
        from gjkcli.scene.manifest import DEFAULT_FAIL_ON

        fail_on = tuple(options.fail_on) if options.fail_on is not None else DEFAULT_FAIL_ON
        for what, value in (("tolerance", options.tolerance), ("clearance", options.clearance)):
            value = getattr(value, "value", value)  # a Length: its number (converted later)
            if value is not None and not (value >= 0 and np.isfinite(value)):
                raise ValueError(f"{what} must be a finite number >= 0, got {value}")
        from gjkcli.pipeline import policy

        if options.mode not in policy.MODES:
            raise ValueError(f"unknown mode {options.mode!r}; use one of {', '.join(policy.MODES)}")
        if command == "check":
            options = dataclasses.replace(options, all_pairs=True)
        self.options = dataclasses.replace(options, fail_on=fail_on)
        self.command = command
        self.tell = progress or (lambda stage, done, total: None)
        self.problems: list = []
        self.notes: list = []
        self.timings: dict = {}
        self.started = time.perf_counter()
        self.units = None
        if options.mode == "hull":
            self.notes.append("2D parts are answered exactly (GJK and EPA for convex pairs, the "
                              "edges for the others): --mode hull changes nothing here")

    def stage(self, name: str, since: float) -> float:
        now = time.perf_counter()
        self.timings[name] = self.timings.get(name, 0.0) + now - since
        return now

    def findings(self, parts: list, source: np.ndarray, frame, *, across: bool) -> Findings:
        from gjkcli.tolerances import DEFAULT

        from gjkcli.pipeline import baseline as baselines

        from gjkcli.mesh.flat import FlatParts

        parts, frame = self._one_unit(parts, frame)
        o = self.options
        old = baselines.read(o.baseline) if o.baseline is not None else None
        t = time.perf_counter()
        # every object's rings also as packed arrays (a scan's reader made them; else here)
        objects = parts if isinstance(parts, FlatParts) else FlatParts(parts)
        if frame is not None:
            objects = FlatParts.joined([objects, FlatParts([frame])])
        n = len(objects)
        if not parts:
            self.notes.append("no objects were loaded: there is nothing to check")
        elif len(parts) == 1 and self.command == "scan" and frame is None:
            self.notes.append(f"only one object ({parts[0].name}): there are no pairs to check")
        chord = objects.chord
        curved = int(np.count_nonzero(chord))
        if curved:
            self.notes.append(f"curves flattened within {chord.max():.3g} (model units) of the "
                              f"drawing, on {curved} of {n} objects; each pair's touching band is "
                              f"at least its two parts' bounds (0 for a part of straight edges), "
                              f"and the clearance is checked with them added")
        self.notes.extend(objects.notes)  # what reading each file assumed or left out
        lo, hi, per_part = _boxes(objects)
        size = np.hypot(*(hi - lo).T)
        if frame is not None:  # the frame's pairs scale with the sheet, not the box around it
            sheet = np.concatenate(frame.rings[1:])
            size[-1] = float(np.hypot(*(sheet.max(axis=0) - sheet.min(axis=0))))

        i, j = self._pairs(lo, hi, size, chord, source, frame is not None, across)
        candidates = len(i)
        t = self.stage("broad", t)
        # the touching band per pair: the user's, else relative to the pair's size; never below
        # what the flattening may have moved the two outlines (each part's own bound)
        flat_band = chord[i] + chord[j]
        if o.tolerance is not None:
            rounding = np.full(len(i), float(o.tolerance))
        else:
            rounding = DEFAULT.touching_rel * np.maximum(size[i], size[j])
        band = np.maximum(rounding, flat_band)
        batch = self._narrow(objects, i, j, band)
        t = self.stage("narrow", t)
        pairs, counts = self._verdicts(objects, i, j, band, flat_band, rounding, batch, frame)
        self.stage("verdicts", t)
        records = LazyRecords(n, lambda k: _record(objects[k], lo[k].tolist(), hi[k].tolist(),
                                                   int(per_part[k])))
        pairs, gone = self._baseline(pairs, old)
        index = _NameIndex(objects)
        found = Findings(
            command=self.command, objects=records, pairs=tuple(pairs), errors=tuple(self.problems),
            counts=counts, checked=len(i), candidates=candidates, requested=o.mode,
            tolerance=o.tolerance, clearance=o.clearance, fail_on=o.fail_on, all_pairs=o.all_pairs,
            baseline=str(o.baseline) if o.baseline is not None else None, gone=gone, units=self.units,
            notes=tuple(self.notes), timings=dict(self.timings), version=_version(),
            elapsed=time.perf_counter() - self.started, geometry=_Outlines(objects, frame, index),
            dimension=2,
            _index=index)
        if o.write_baseline is not None:
            baselines.write(o.write_baseline, baselines.entries(found.pairs))
            found = dataclasses.replace(found, baseline_written=str(o.write_baseline))
        return found

    def _one_unit(self, parts: list, frame):
        """The parts (and sheet frame) in one length unit, and the options' lengths in it: as the
        3D run does (`gjkcli.pipeline.stages.Run.one_unit`). The drawing's unit is the first one a
        drawing states; drawings in another unit of `gjkcli.units` are scaled into it, with a note;
        a length the user wrote with a unit is converted into it (an InputError when no drawing
        states a unit gjk knows)."""
        from gjkcli.errors import InputError
        from gjkcli.units import Length, UnitError, factor, scaled_unit

        # the units as the drawings spell them, each looked up once (a nest has 10,000 parts
        # and one spelling): a unit of the table, or s of one ("0.264583 mm": an SVG whose
        # viewBox maps one user unit to that)
        spelled = {p.units for p in parts}
        known = {u: scaled_unit(u) for u in spelled}
        first = next((p for p in parts if known[p.units] is not None), None)
        unit = known[first.units][1] if first is not None else None
        self.units = unit

        def scale(u) -> float:  # how many `unit` one drawing unit `u` is (1: nothing to do)
            s, short = known[u] if u in known else scaled_unit(u)
            return s * factor(short, unit)

        scaled, out = {}, parts  # the same list (its packed arrays) when nothing is scaled
        if unit is not None and any(known[u] not in (None, (1.0, unit)) for u in spelled):
            out = list(parts)
            for n, p in enumerate(parts):
                if known[p.units] in (None, (1.0, unit)):
                    continue
                k = scale(p.units)
                scaled.setdefault(p.source, (p.units, k))
                out[n] = dataclasses.replace(p, rings=tuple(r * k for r in p.rings), units=unit,
                                             chord=p.chord * k)
        for file, (u, k) in scaled.items():
            self.notes.append(f"{file} states {u}: converted to {unit} (x {k:g}), the unit of "
                              f"{first.source}")
        if frame is not None and unit is not None and scaled_unit(frame.units) not in (None, (1.0, unit)):
            k = scale(frame.units)
            frame = dataclasses.replace(frame, rings=tuple(r * k for r in frame.rings), units=unit,
                                        chord=frame.chord * k)
        unknown = sorted(u for u, c in known.items() if u and c is None)
        if unknown:
            self.notes.append(f"warning: unit {', '.join(map(repr, unknown))} is not one gjk "
                              f"knows, so it is not converted and the numbers may mix units")
        change = {}
        for what in ("tolerance", "clearance"):
            value = getattr(self.options, what)
            if isinstance(value, Length):
                try:
                    change[what] = value.to(unit) if value.unit is not None else value.value
                except UnitError as e:
                    raise InputError(f"--{what} {value}", str(e)) from None
        if change:
            self.options = dataclasses.replace(self.options, **change)
        return out, frame

    def _baseline(self, pairs: list, old) -> tuple[list, tuple]:
        """The pairs with their baseline keys and whether the baseline knows them (as in 3D:
        keys only when a baseline is read or written), and the baseline's entries now gone."""
        from gjkcli.pipeline.stages import KeyMaker

        o = self.options
        if old is None and o.write_baseline is None:
            return pairs, ()
        key_of = KeyMaker(old.base if old is not None else Path(o.write_baseline).resolve().parent)
        out = []
        for p in pairs:
            key = key_of(p.a, p.b, p.file_a, p.file_b)
            known = bool(old is not None and p.violation and key in old.keys)
            out.append(dataclasses.replace(p, key=key, known=known))
        gone = ()
        if old is not None:
            today = {p.key for p in out if p.violation}  # allowed or not, still there
            gone = tuple(e for e in old.entries if e.key not in today)
        return out, gone

    def _pairs(self, lo, hi, size, chord, source, has_frame: bool, across: bool):
        from gjkcli.scene.broadphase import candidate_pairs
        from gjkcli.tolerances import DEFAULT

        o = self.options
        n = len(lo)
        empty = np.zeros(0, dtype=np.int64)
        if n < 2:
            return empty, empty
        m = n - 1 if has_frame else n  # the frame is the last object
        if across:
            i, j = np.triu_indices(n, 1)
            keep = source[i] != source[j]
            return i[keep].astype(np.int64), j[keep].astype(np.int64)
        touch = np.full(m, o.tolerance) if o.tolerance is not None else DEFAULT.touching_rel * size[:m]
        pad = DEFAULT.bounds_pad_rel * float(np.abs(np.concatenate([lo, hi])).max() + size.max())
        grow = 0.5 * (o.clearance or 0.0) + touch + chord[:m] * 2 + pad
        i, j = candidate_pairs(lo[:m], hi[:m], grow=grow, method="sweep")
        if has_frame:  # every part against the sheet's frame
            i = np.concatenate([i, np.arange(m)])
            j = np.concatenate([j, np.full(m, m)])
        return i.astype(np.int64), j.astype(np.int64)

    def _narrow(self, objects, i, j, band):
        """The plane's answers for pairs (i, j), each with its touching band. Only the parts of
        some candidate pair are packed for the core (a nest's parts are mostly clear by their
        boxes)."""
        from gjkcli.engine import plane

        self.tell("narrow", 0, len(i))
        if len(i) == 0:
            return None
        involved = np.unique(np.concatenate([i, j]))
        packed = _pack(objects, involved)
        out = plane.batch(packed, np.searchsorted(involved, i), np.searchsorted(involved, j),
                          tolerance=band, want="verdict")
        self.tell("narrow", len(i), len(i))
        return out

    def _verdicts(self, objects, i, j, band, flat_band, rounding, batch, frame):
        from gjkcli.engine.results import STATUS_CODES

        o = self.options
        counts = {s.value: 0 for s in Status}
        pairs = []
        if batch is None:
            return pairs, counts
        clearance = o.clearance or 0.0
        # the engine's verdicts within each pair's band; then the clearance, with both parts'
        # flattening bounds added (a pair the flattening could hide is not passed); a gap within
        # the touching band's rounding of the clearance is at the clearance, as a gap within it
        # of 0 is touching: a nest laid out exactly at its margin passes
        value = np.empty(max(STATUS_CODES) + 1, dtype=object)  # code -> the Status's value
        for c, st in STATUS_CODES.items():
            value[c] = st.value
        status = value[np.asarray(batch.status)]
        distance = np.asarray(batch.distance, dtype=np.float64)
        if clearance > 0:
            close = (status == Status.CLEAR.value) & (distance < clearance + flat_band - rounding)
            # pairs that fail only by their bounds: bound the true gap edge by edge, each chord
            # of a curve widened by its part's bound, each edge drawn straight as it is
            for k in np.flatnonzero(close & (distance >= clearance - rounding)).tolist():
                low = _gap_lower_bound(objects[int(i[k])], objects[int(j[k])])
                if low is not None and low >= clearance - rounding[k]:
                    close[k] = False
            status[close] = Status.CLEARANCE.value
        for code, c in zip(*np.unique(status.astype(str), return_counts=True)):
            counts[code] += int(c)
        listed = np.ones(len(i), dtype=bool) if o.all_pairs else status != Status.CLEAR.value
        pair_clearance = o.clearance
        ks = np.flatnonzero(listed)
        # every listed pair's result in one call, its status the verdict's
        results = batch.results(ks, status=status[ks])
        for k, result, ia, ib in zip(ks.tolist(), results, i[ks].tolist(), j[ks].tolist()):
            a, b = objects[ia], objects[ib]
            s = result.status
            if o.trace:
                result = _traced(a, b, float(band[k]), o.start_direction, result)
                if result.status is not s:
                    result = dataclasses.replace(result, status=s)
            note = _sheet_note(s, clearance) if b is frame else None
            pairs.append(Finding(
                a=a.name, b=b.name, result=result, mode="hull" if result.engine == "gjk" else "exact",
                requested=o.mode,
                clearance=pair_clearance, conservative=False,
                violation=violates(s, pair_clearance, o.fail_on),
                file_a=a.source if a is not frame else "", file_b=b.source if b is not frame else a.source,
                note=note))
        pairs.sort(key=_severity)
        return pairs, counts


def _gap_lower_bound(a, b, most: int = 4_000_000) -> float | None:
    """A lower bound of the gap between the true outlines of two clear parts whose rings are
    flattened: the least distance between an edge of A and an edge of B, less the bound of each
    part whose edge there is the chord of a curve (an edge drawn straight is exact). The parts
    are clear, so their outlines do not cross and the least distance between edges is the gap.
    None when the edges are unknown or too many pairs (over `most`) to compare."""
    a0, a1, ca = _edges(a)
    b0, b1, cb = _edges(b)
    if a0 is None or b0 is None or len(a0) * len(b0) > most:
        return None
    # the least of the four endpoint-to-segment distances, each edge pair once
    d = np.minimum(_point_segment(np.concatenate([a0, a1]), b0, b1).reshape(2, len(a0), -1).min(axis=0),
                   _point_segment(np.concatenate([b0, b1]), a0, a1).reshape(2, len(b0), -1).min(axis=0).T)
    d -= (a.chord * ca)[:, None] + (b.chord * cb)[None, :]
    return float(d.min())


def _edges(p):
    """(n, 2) edge starts, (n, 2) edge ends of the part's rings, (n,) whether each edge is a
    chord of a curve; (None, None, None) when that is not known."""
    if p.chord > 0 and p.straight is None:
        return None, None, None
    start = np.concatenate(p.rings) if len(p.rings) > 1 else p.rings[0]
    end = np.concatenate([np.roll(r, -1, axis=0) for r in p.rings])
    chord = (np.zeros(len(start), dtype=bool) if p.chord == 0
             else ~np.concatenate(p.straight))
    return start, end, chord


def _point_segment(points, s0, s1):
    """(k, m) distances of k points to m segments s0 -> s1."""
    ex, ey = (s1 - s0).T
    px = points[:, 0, None] - s0[:, 0]
    py = points[:, 1, None] - s0[:, 1]
    length2 = ex * ex + ey * ey
    with np.errstate(divide="ignore", invalid="ignore"):
        u = np.clip((px * ex + py * ey) / length2, 0.0, 1.0)
    u[:, length2 == 0] = 0.0
    return np.hypot(px - u * ex, py - u * ey)


def _boxes(objects):
    """((n, 2) min corners, (n, 2) max corners, (n,) vertices per part) of a FlatParts, reduced
    over its packed vertices part by part."""
    if len(objects) == 0:
        return np.zeros((0, 2)), np.zeros((0, 2)), np.zeros(0, dtype=np.int64)
    start = objects.ring_start[objects.part_ring]  # each part's first vertex, and the end
    first = start[:-1]
    v = objects.vertices
    return np.minimum.reduceat(v, first), np.maximum.reduceat(v, first), np.diff(start)


def _ranges(starts, counts):
    """starts[0] .. starts[0] + counts[0] - 1, then the same for the next, as one array."""
    shift = np.repeat(starts - (np.cumsum(counts) - counts), counts)
    return shift + np.arange(counts.sum())


def _pack(objects, which):
    """Parts `which` of a FlatParts as one `gjkcli.engine.plane.PartSet`: their slices of the
    packed arrays, packed by `PartSet.from_arrays` (convexity classified and segment hierarchies
    built in the core, no Python object per part)."""
    from gjkcli.engine import plane

    r0 = objects.part_ring[which]
    nring = objects.part_ring[which + 1] - r0
    rings = _ranges(r0, nring)
    v0 = objects.ring_start[rings]
    count = objects.ring_start[rings + 1] - v0
    vertices = objects.vertices[_ranges(v0, count)]
    return plane.PartSet.from_arrays(vertices, np.concatenate([[0], np.cumsum(count)]),
                                     np.concatenate([[0], np.cumsum(nring)]))


class _NameIndex(Mapping):
    """name -> position of the objects, made the first time it is read (`Findings.object`, a
    picture's outlines): a scan whose report names no object pays nothing for it."""

    def __init__(self, objects):
        self._objects = objects
        self._index = None

    def _built(self) -> dict:
        if self._index is None:
            self._index = {p.name: k for k, p in enumerate(self._objects)}
        return self._index

    def __getitem__(self, name):
        return self._built()[name]

    def __iter__(self):
        return iter(self._built())

    def __len__(self) -> int:
        return len(self._objects)


class _Outlines:
    """Findings.geometry of a 2D run: name -> the part's rings for pictures, outer rings
    counter-clockwise and holes clockwise (a whole-file part's rings are nested on demand);
    the sheet's frame gives the sheet's outline only."""

    def __init__(self, objects, frame, index):
        self.index = index
        self.objects = objects
        self.frame = frame

    def __call__(self, name: str):
        from gjkcli.mesh.flat import orient_even_odd

        k = self.index.get(name)
        p = self.objects[k] if k is not None else None
        if p is None:
            return None
        if p is self.frame:
            return tuple(r[::-1] for r in p.rings[1:])
        return orient_even_odd(p.rings)


def _traced(a, b, band: float, start, result):
    """The pair's answer again with GJK and EPA recorded step by step (`--trace`), from `start`
    when given; the batch's answer when the pair goes to the edges (no GJK to narrate)."""
    from gjkcli.engine import plane

    if result.engine != "gjk":
        return result
    return plane.query(plane.Region(list(a.rings)), plane.Region(list(b.rings)), tolerance=band,
                       want="verdict", start=start, trace=True)


def _sheet_note(status: Status, clearance: float) -> str | None:
    if status is Status.COLLISION:
        return "the part leaves the sheet (it crosses or lies outside the sheet's outline)"
    if status is Status.CLEARANCE:
        return f"the part is inside the sheet but within {clearance:g} of its edge"
    if status is Status.TOUCHING:
        return "the part touches the sheet's edge"
    return None


def _frame(parts, sheets, layer):
    """The sheet's frame: a box around every part and sheet, with the sheet rings cut out."""
    from gjkcli.mesh.flat import FlatPart

    pts = np.concatenate([parts.vertices] + [r for s in sheets for r in s.rings])
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    margin = max(float(np.linalg.norm(hi - lo)), 1.0)
    lo, hi = lo - margin, hi + margin
    box = np.array([[lo[0], lo[1]], [hi[0], lo[1]], [hi[0], hi[1]], [lo[0], hi[1]]])
    from gjkcli.mesh.flat import reversed_straight

    rings = (box,) + tuple(r[::-1].copy() for s in sheets for r in s.rings)
    straight = [np.ones(4, dtype=bool)]
    for s in sheets:
        masks = s.straight or tuple(np.zeros(len(r), dtype=bool) for r in s.rings)
        straight.extend(reversed_straight(m) for m in masks)
    return FlatPart(name=f"sheet:{layer}", source="<sheet>", rings=rings, units=sheets[0].units,
                    chord=max(s.chord for s in sheets), layer=sheets[0].layer,
                    straight=tuple(straight))


_RECORD_DEFAULTS = {f.name: f.default for f in dataclasses.fields(ObjectRecord)
                    if f.default is not dataclasses.MISSING}


def _record(p, lo, hi, vertices: int) -> ObjectRecord:
    """The part's ObjectRecord. Made by filling the frozen record's fields directly: the
    dataclass's __init__ costs 8 us a record, most of a 10,000-part scan's Python time."""
    rec = object.__new__(ObjectRecord)
    rec.__dict__.update(_RECORD_DEFAULTS)
    rec.__dict__.update(
        name=p.name, file=p.source if p.source != "<sheet>" else "", vertices=vertices, faces=0,
        hull_vertices=0, convex=None, watertight=None, bounds=(tuple(lo), tuple(hi)),
        units=p.units, bodies=None, dimension=2, layer=p.layer, flattening=float(p.chord))
    return rec


def _unique(parts):
    """The parts with repeated names numbered ("name#2"); the same list when no name repeats."""
    seen: dict = {}
    for p in parts:
        seen[p.name] = seen.get(p.name, 0) + 1
    if len(seen) == len(parts):
        return parts
    seen = {}
    out = []
    for p in parts:
        if p.name in seen:
            seen[p.name] += 1
            p = dataclasses.replace(p, name=f"{p.name}#{seen[p.name]}")
        else:
            seen[p.name] = 1
        out.append(p)
    return parts.renamed(out)


def _severity(pair: Finding):
    r = pair.result
    status = pair.status
    if status is Status.COLLISION:
        size = -(r.depth if r.depth is not None else 0.0)
    else:
        size = r.distance
    return (SEVERITY[status], size, pair.a, pair.b)


def _version() -> str:
    from gjkcli import __version__

    return __version__
