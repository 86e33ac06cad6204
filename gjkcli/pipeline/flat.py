"""The plane's stages of the one run (`gjkcli.pipeline.stages.Run`) for `gjk check` and `gjk scan`
on 2D drawings (SVG, DXF): parts -> candidate pairs -> the plane's narrow phase -> the same
findings as in 3D. `FlatRun` gives the stages; the manifest's selections, allowed pairs, clash
sets, the baseline and the findings are the shared run's.

1. **Parts** (`gjkcli.mesh.flat`): `check` reads each file as one part (all its closed contours,
   even-odd); `scan` gives every outer contour with its holes as a part, so a part in another's
   hole is its own part, clear of the one around it. A file that cannot be read is a `Problem`;
   the others are still checked.
2. **Sheet** (`--sheet-layer NAME`, DXF): the contours on that layer are the sheet, not parts
   (`gjkcli.mesh.flat.sheet_frame`).
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
each file's notes. A manifest's `[[include]]`s are drawings placed in the plane; its globs
select parts by name or DXF layer (`FlatScene.kinds`). With --dask the narrow phase runs in
chunks on the cluster (`gjkcli.pipeline.distributed.plane_batch`).
"""
from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gjkcli.engine.results import Status
from gjkcli.errors import InputError, Problem, one_line
from gjkcli.pipeline.findings import Finding, LazyRecords, ObjectRecord, severity_key, violates
from gjkcli.pipeline.stages import LENGTHS, Run, allowed_reasons

__all__ = ["FlatRun", "FlatScene", "FlatSource", "drawings", "is_flat_run", "mixing_error"]

# DXF's and SVG's suffixes (gjkcli.mesh.flat.FLAT_TYPES, repeated so that choosing the run costs
# no import of the mesh layer's readers).
_FLAT = (".svg", ".dxf")


def is_flat_run(paths, recurse: bool = True) -> bool:
    """Whether the inputs are 2D drawings: the files given are, or only directories are given
    and every file gjk reads in them is. InputError when 2D and 3D files are given together
    (a directory holding both is a 3D scan that leaves its drawings out, with a note)."""
    paths = [Path(p) for p in paths]
    folders = [p for p in paths if _is_dir(p)]
    files = [p for p in paths if p not in folders]
    flat = [p for p in files if p.suffix.lower() in _FLAT]
    if flat and len(flat) < len(files):
        raise mixing_error(flat[0], next(p for p in files if p.suffix.lower() not in _FLAT))
    if files or not folders:
        return bool(flat)
    inside = []
    for folder in folders:
        inside.extend(_folder_files(folder, recurse, {}))
    return bool(inside) and all(p.suffix.lower() in _FLAT for p in inside)


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except (OSError, ValueError):  # a name the system refuses: reading it says why
        return False


def _folder_files(folder: Path, recurse: bool, skipped: dict) -> list:
    """Every file gjk reads in `folder` ([] when there is none: the scan says why)."""
    from gjkcli.mesh.load import expand_paths
    from gjkcli.scene.objects import URDF_TYPES

    try:
        return expand_paths([folder], recurse=recurse, also=URDF_TYPES, skipped=skipped)
    except InputError:
        return []


def _expand_folders(paths: list, recurse: bool, run) -> list:
    """The files to read: each directory expanded to the drawings in it (its 3D files and what
    gjk does not read counted in a note; one without drawings a problem), files as given."""
    from gjkcli.mesh.load import skipped_text

    out = []
    for p in paths:
        if not _is_dir(Path(p)):
            out.append(p)
            continue
        skipped: dict = {}
        found = _folder_files(Path(p), recurse, skipped)
        drawn = [f for f in found if f.suffix.lower() in _FLAT]
        if len(found) > len(drawn):
            skipped["3D files (scan them on their own)"] = len(found) - len(drawn)
        if not drawn:
            run.problems.append(Problem(file=str(p), message="directory holds no 2D drawing (.svg, "
                                                            ".dxf)" + (f"; it holds {skipped_text(skipped)}"
                                                                       if skipped else "")))
            continue
        if skipped:
            run.notes.append(f"{p}: read {len(drawn):,} files; left out {skipped_text(skipped)}")
        out.extend(drawn)
    return out


def mixing_error(flat, solid) -> InputError:
    return InputError(flat, f"is a 2D drawing and {solid} is a 3D file: gjk checks 2D parts "
                            f"against 2D parts and 3D against 3D; give files of one kind")


@dataclass(frozen=True)
class FlatSource:
    """One drawing a run reads (a source of the 2D run): its path, how reports show it, the prefix of its parts' names
    (several drawings in one scan), and the in-plane placement a manifest's [[include]] gives
    ((3, 3) homogeneous, None: as drawn)."""

    path: Path
    shown: str
    prefix: str | None = None
    transform: np.ndarray | None = None


def drawings(paths, manifest=None, *, recurse: bool = True, run=None) -> list:
    """The drawings of a scan: the paths (a directory's drawings, `_expand_folders`, with its
    notes and problems in `run`), then a manifest's [[include]]s (InputError for a manifest
    [[object]] or [[robot]], which are 3D, or a placement out of the plane)."""
    from gjkcli.errors import InputError

    if run is not None:
        paths = _expand_folders(list(paths), recurse, run)
    given = [(Path(p), None) for p in paths]
    if manifest is not None:
        for what, specs in (("[[object]]", manifest.objects), ("[[robot]]", manifest.robots)):
            if specs:
                raise InputError(manifest.path, f"has a {what}, and the scan is of 2D drawings: "
                                                f"give the drawings' parts by [[include]]")
        given += [(Path(inc.file), _in_plane(inc.transform, manifest.path)) for inc in manifest.includes]
    several = len(given) > 1
    names = [p.name for p, _ in given]
    return [FlatSource(path=p, shown=str(p), transform=T,
                       prefix=(p.name if names.count(p.name) == 1 else p.as_posix()) if several else None)
            for p, T in given]


def _in_plane(T, where):
    """A manifest's 4x4 placement as a motion of the plane ((3, 3), None for the identity);
    InputError when it moves the drawing out of its plane or scales it."""
    from gjkcli.errors import InputError

    if T is None:
        return None
    T = np.asarray(T, dtype=np.float64)
    R = T[:2, :2]
    flat = np.allclose(T[2, :2], 0) and np.allclose(T[:2, 2], 0) and np.isclose(T[2, 2], 1) \
        and np.allclose(T[3], [0, 0, 0, 1])
    if not flat or not np.allclose(R.T @ R, np.eye(2), atol=1e-9):
        raise InputError(where, "an [[include]] of a drawing moves it out of its plane or scales "
                                "it: give a rotation about z and a translation in x and y")
    if np.allclose(T, np.eye(4)):
        return None
    out = np.eye(3)
    out[:2, :2], out[:2, 2] = R, T[:2, 3]
    return out


class FlatScene:
    """The prepared parts of a 2D run: every part's rings packed (`gjkcli.mesh.flat.FlatParts`),
    the sheet's frame last when there is one, and their boxes; what the shared run
    (`gjkcli.pipeline.stages.Run`) reads of parts."""

    dimension = 2
    owned: dict = {}

    def __init__(self, objects, source, frame):
        self.objects = objects
        self.source = source
        self.frame = frame
        self.lo, self.hi, self.per_part = _boxes(objects)
        self.size = np.hypot(*(self.hi - self.lo).T) if len(objects) else np.zeros(0)
        if frame is not None:  # the frame's pairs scale with the sheet, not the box around it
            sheet = np.concatenate(frame.rings[1:])
            self.size[-1] = float(np.hypot(*(sheet.max(axis=0) - sheet.min(axis=0))))
        self.chord = objects.chord
        self.index = _NameIndex(objects)

    @property
    def n(self) -> int:
        return len(self.objects)

    @property
    def names(self) -> list:
        return [p.name for p in self.objects]

    def kinds(self) -> tuple:
        """(each part's layer as its class, None): a manifest's glob selects a part by its name or
        its DXF layer."""
        layers = [(p.layer,) if p.layer else () for p in self.objects]
        return (layers if any(layers) else None), None

    @property
    def geometry(self):
        return _Outlines(self.objects, self.frame, self.index)


class FlatRun(Run):
    """The run on 2D drawings: the shared run's findings, with the plane's stages (parts are
    rings, the broad phase is the compiled sweep, the narrow phase `gjkcli.engine.plane`)."""

    def __init__(self, options, command: str, progress):
        if command == "check":
            options = dataclasses.replace(options, all_pairs=True)
        super().__init__(options, command, progress)
        if options.mode == "hull":
            self.notes.append("2D parts are answered exactly (GJK and EPA for convex pairs, the "
                              "edges for the others): --mode hull changes nothing here")

    # -- parts ---------------------------------------------------------------------------------

    def load_parts(self, sources, primitives, manifest) -> FlatScene:
        """The drawings' parts: each file one part in `check`, every outer contour with its
        holes in `scan`; the sheet of `sheet_layer` becomes the frame. `sources` are FlatSources,
        or a FlatParts already read."""
        from gjkcli.mesh.flat import FlatParts, load_flat_part, sheet_frame

        o = self.options
        t = time.perf_counter()
        if isinstance(sources, FlatParts):
            parts, source, sheets = sources, np.zeros(len(sources), dtype=np.int64), []
        elif self.command == "check":
            parts, source, sheets = [], [], []
            for k, d in enumerate(sources):
                try:
                    parts.append(_placed(load_flat_part(d.path, shown=d.shown, layers=_layers(o),
                                                        join_tolerance=o.join_tolerance), d.transform))
                    source.append(k)
                except InputError as exc:
                    if o.strict:
                        raise
                    self.problems.append(Problem(file=d.shown, message=one_line(exc.message)))
            source = np.asarray(source, dtype=np.int64)
        else:
            parts, sheets, source = self._read(sources)
        self.stage("load", t)
        # the frame is named by --sheet-layer, or by the outline the reader took for the sheet
        name = o.sheet_layer or (sheets[0].name.split(":", 1)[1] if sheets else None)
        parts, frame = self._flat_unit(parts, sheet_frame(parts, sheets, name)
                                       if sheets and parts else None)
        objects = parts if isinstance(parts, FlatParts) else FlatParts(parts)
        if frame is not None:
            objects = FlatParts.joined([objects, FlatParts([frame])])
            source = np.concatenate([source, [0]])
        chord = objects.chord
        curved = int(np.count_nonzero(chord))
        if curved:
            self.notes.append(f"curves flattened within {chord.max():.3g} (model units) of the "
                              f"drawing, on {curved} of {len(objects)} objects; each pair's touching "
                              f"band is at least its two parts' bounds (0 for a part of straight "
                              f"edges), and the clearance is checked with them added")
        self.notes.extend(objects.notes)  # what reading each file assumed or left out
        return FlatScene(objects, source, frame)

    def _read(self, sources):
        from gjkcli.mesh.flat import FlatParts, read_flat_objects

        o = self.options
        read, sheets, source = [], [], []
        for k, d in enumerate(sources):
            try:
                got, sheet = read_flat_objects(d.path, prefix=d.prefix, shown=d.shown,
                                               sheet_layer=o.sheet_layer, layers=_layers(o),
                                               join_tolerance=o.join_tolerance)
            except InputError as exc:
                if o.strict:
                    raise
                self.problems.append(Problem(file=d.shown, message=one_line(exc.message)))
                continue
            if d.transform is not None:
                got = FlatParts([_placed(p, d.transform) for p in got])
                sheet = _placed(sheet, d.transform)
            read.append(got)
            source.extend([k] * len(got))
            if sheet is not None:
                sheets.append(sheet)
        return _unique(FlatParts.joined(read)), sheets, np.asarray(source, dtype=np.int64)

    def _flat_unit(self, parts: list, frame):
        """The parts (and sheet frame) in one length unit, and the options' lengths in it: as the
        3D run does (`gjkcli.pipeline.stages.Run.one_unit`). The drawing's unit is the first one a
        drawing states; drawings in another unit of `gjkcli.units` are scaled into it, with a note;
        a length the user wrote with a unit is converted into it (an InputError when no drawing
        states a unit gjk knows)."""
        from gjkcli.errors import InputError
        from gjkcli.units import Length, UnitError, factor, scaled_unit, written_unit

        # the units as the drawings spell them, each looked up once (a nest has 10,000 parts
        # and one spelling): a unit of the table, or s of one ("0.264583 mm": an SVG whose
        # viewBox maps one user unit to that)
        declared = self.options.units
        if declared is not None and any(p.units is None for p in parts):
            # --units: the unit of the drawings that state none (the packed arrays stay)
            self.notes.extend(f"{f} states no unit: taken as {declared} (--units)"
                              for f in dict.fromkeys(p.source for p in parts if p.units is None))
            said = [p if p.units is not None else dataclasses.replace(p, units=declared) for p in parts]
            parts = parts.renamed(said) if hasattr(parts, "renamed") else said
            if frame is not None and frame.units is None:
                frame = dataclasses.replace(frame, units=declared)
        # a FlatParts holds them (no step per part)
        spelled = set(parts.units) if isinstance(getattr(parts, "units", None), tuple) else {p.units for p in parts}
        known = {u: scaled_unit(u) for u in spelled}
        first = next((p for p in parts if known[p.units] is not None), None)
        unit = known[first.units][1] if first is not None else None
        if unit is None and not len(parts) and frame is None:  # nothing loaded (each input refused)
            unit = written_unit(getattr(self.options, w) for w in LENGTHS)
        self.units = unit
        if unit is not None and None in spelled:
            silent = list(dict.fromkeys(p.source for p in parts if p.units is None))
            self.notes.append(f"warning: {', '.join(silent[:3])}{', ...' if len(silent) > 3 else ''} "
                              f"state{'s' * (len(silent) == 1)} no unit and {first.source} states "
                              f"{first.units}: the numbers of the drawing{'s' * (len(silent) != 1)} "
                              f"without one are taken as {unit}; declare their unit with --units "
                              f"if they are in another")

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
        for what in LENGTHS:
            value = getattr(self.options, what)
            if isinstance(value, Length):
                try:
                    change[what] = value.to(unit) if value.unit is not None else value.value
                except UnitError as e:
                    # the inputs refused are the reason: they are said first
                    raise InputError(f"--{what.replace('_', '-')} {value}", str(e),
                                     before=self.problems) from None
        if change:
            self.options = dataclasses.replace(self.options, **change)
        return out, frame


    # -- candidate pairs -----------------------------------------------------------------------

    def candidates(self, parts: FlatScene, resolved, across: bool, every_pair: int):
        """(i, j, clearance per pair, broad-phase pair count): the compiled sweep over the parts'
        boxes grown by half the largest clearance asked, the touching band and twice the part's
        flattening bound; every part against the sheet's frame; a check's parts of A against B;
        then the manifest's [[check]] selections (`Run.select`)."""
        from gjkcli.scene.broadphase import candidate_pairs
        from gjkcli.tolerances import DEFAULT

        o = self.options
        n = parts.n
        if n < 2:
            empty = np.zeros(0, dtype=np.int64)
            self.sets = None
            return empty, empty, np.zeros(0), 0
        if across:
            i, j = np.triu_indices(n, 1)
            keep = parts.source[i] != parts.source[j]
            i, j = i[keep].astype(np.int64), j[keep].astype(np.int64)
        else:
            m = n - 1 if parts.frame is not None else n  # the frame is the last object
            lo, hi, size = parts.lo, parts.hi, parts.size
            reach = max([o.clearance or 0.0] + [c for _, _, c, _ in (resolved.checks if resolved else ())
                                                 if c is not None])
            touch = np.full(m, o.tolerance) if o.tolerance is not None else DEFAULT.touching_rel * size[:m]
            bands = [st.tolerance for st in (resolved.sets if resolved else ()) if st.tolerance is not None]
            if bands:  # a clash set's own band
                touch = np.maximum(touch, max(bands))
            pad = DEFAULT.bounds_pad_rel * float(np.abs(np.concatenate([lo, hi])).max() + size.max())
            grow = 0.5 * reach + touch + parts.chord[:m] * 2 + pad
            i, j = candidate_pairs(lo[:m], hi[:m], grow=grow, method="sweep")
            if parts.frame is not None:  # every part against the sheet's frame
                i = np.concatenate([i, np.arange(m)])
                j = np.concatenate([j, np.full(m, m)])
            i, j = i.astype(np.int64), j.astype(np.int64)
            keep = self.own_worlds(parts, i, j)
            if keep is not None:
                i, j = i[keep], j[keep]
        candidates = len(i)
        if parts.frame is None or resolved is None or not resolved.checks:
            i, j, clearance = self.select(resolved, i, j)
            return i, j, clearance, candidates
        # the sheet holds every part, whichever [[check]]s select it: a part's pair with the
        # frame that no check selects is checked at the run's own clearance, band and fail_on
        framed = j == n - 1
        kept = set(i[framed].tolist())
        si, sj, clearance = self.select(resolved, i, j)
        kept -= set(si[sj == n - 1].tolist())
        extra = np.array(sorted(kept), dtype=np.int64)
        if len(extra):
            si = np.concatenate([si, extra])
            sj = np.concatenate([sj, np.full(len(extra), n - 1)])
            clearance = np.concatenate([clearance, np.full(len(extra), o.clearance or 0.0)])
            if self.sets is not None:
                from gjkcli.pipeline.clashsets import PairSets

                hits = np.zeros((self.sets.hits.shape[0], len(extra)), dtype=bool)
                self.sets = PairSets(np.concatenate([self.sets.hits, hits], axis=1), self.sets.specs)
        return si, sj, clearance, candidates

    # -- narrow phase --------------------------------------------------------------------------

    def bands(self, parts: FlatScene, i, j):
        """((m,) touching band, (m,) the band's rounding part, (m,) both parts' flattening bounds):
        the user's band (or the pair's clash set's), else relative to the pair's size, never
        below what the flattening may have moved the two outlines."""
        from gjkcli.tolerances import DEFAULT

        o = self.options
        flat_band = parts.chord[i] + parts.chord[j]
        relative = DEFAULT.touching_rel * np.maximum(parts.size[i], parts.size[j])
        own = self.sets.tolerance(o.tolerance) if self.sets is not None else None
        if own is not None:  # a clash set's own band (NaN: relative)
            rounding = np.where(np.isnan(own), relative, own)
        elif o.tolerance is not None:
            rounding = np.full(len(i), float(o.tolerance))
        else:
            rounding = relative
        return np.maximum(rounding, flat_band), rounding, flat_band

    def narrow(self, parts: FlatScene, i, j):
        """The plane's answers for pairs (i, j), each within its band. Only the parts of some
        candidate pair are packed for the core (a nest's parts are mostly clear by their boxes);
        with --dask, chunks of pairs on the cluster's workers
        (`gjkcli.pipeline.distributed.plane_batch`)."""
        from gjkcli.engine import plane

        self.tell("narrow", 0, len(i))
        if len(i) == 0:
            return None
        band = self.bands(parts, i, j)[0]
        involved = np.unique(np.concatenate([i, j]))
        li, lj = np.searchsorted(involved, i), np.searchsorted(involved, j)
        vertices, ring_start, part_ring = _packed(parts.objects, involved)
        if self.options.dask is not None:
            from gjkcli.pipeline.distributed import plane_batch

            out = plane_batch(self.options, vertices, ring_start, part_ring, li, lj, band)
        else:
            packed = plane.PartSet.from_arrays(vertices, ring_start, part_ring)
            out = plane.batch(packed, li, lj, tolerance=band, want="verdict")
        self.tell("narrow", len(i), len(i))
        return out

    # -- findings ------------------------------------------------------------------------------

    def verdicts(self, parts: FlatScene, i, j, clearance, batch, resolved, key_of, known):
        """The engine's verdicts within each pair's band; then the pair's clearance, with both
        parts' flattening bounds added (a pair the flattening could hide is not passed); a gap
        within the touching band's rounding of the clearance is at the clearance, as a gap
        within it of 0 is touching: a nest laid out exactly at its margin passes."""
        from gjkcli.engine.results import STATUS_CODES

        t = time.perf_counter()
        o = self.options
        counts = {st.value: 0 for st in Status}
        pairs = []
        if batch is None:
            return pairs, counts
        objects, frame = parts.objects, parts.frame
        band, rounding, flat_band = self.bands(parts, i, j)
        value = np.empty(max(STATUS_CODES) + 1, dtype=object)  # code -> the Status's value
        for c, st in STATUS_CODES.items():
            value[c] = st.value
        status = value[np.asarray(batch.status)]
        distance = np.asarray(batch.distance, dtype=np.float64)
        refined = self._settle_curves(objects, i, j, band, rounding, flat_band, batch, status, distance)
        if (clearance > 0).any():
            close = (status == Status.CLEAR.value) & (distance < clearance + flat_band - rounding)
            # pairs that fail only by their bounds: bound the true gap edge by edge, each chord
            # of a curve widened by its part's bound, each edge drawn straight as it is
            for k in np.flatnonzero(close & (distance >= clearance - rounding)).tolist():
                if _passes_by_its_edges(objects[int(i[k])], objects[int(j[k])],
                                        clearance[k] - rounding[k], rounding[k], distance[k]):
                    close[k] = False
            status[close] = Status.CLEARANCE.value
        for code, c in zip(*np.unique(status.astype(str), return_counts=True)):
            counts[code] += int(c)
        listed = np.ones(len(i), dtype=bool) if o.all_pairs else status != Status.CLEAR.value
        ks = np.flatnonzero(listed)
        allow = allowed_reasons(resolved, i, j)
        sets = self.sets
        modes = sets.modes(o.mode) if sets is not None else None
        # every listed pair's result in one call, its status the verdict's
        results = batch.results(ks, status=status[ks])
        asked = clearance.tolist()  # Python floats: no NumPy scalar per listed pair
        for k, result, ia, ib in zip(ks.tolist(), results, i[ks].tolist(), j[ks].tolist()):
            a, b = objects[ia], objects[ib]
            st = result.status
            if k in refined:
                result = refined[k]
            if o.trace:
                result = _traced(a, b, float(band[k]), o.start_direction, result)
                if result.status is not st:
                    result = dataclasses.replace(result, status=st)
            pair_clearance = asked[k] if asked[k] > 0 or o.clearance is not None else None
            note = _sheet_note(st, asked[k]) if b is frame else None
            reason = allow.get(k)
            violation = violates(st, pair_clearance, o.fail_on if sets is None else sets.fail_on(k, o.fail_on))
            file_a = a.source if a is not frame else ""
            file_b = b.source if b is not frame else a.source
            key = () if key_of is None else key_of(a.name, b.name, file_a, file_b)
            pairs.append(Finding.made(
                a=a.name, b=b.name, result=result, mode="hull" if result.engine == "gjk" else "exact",
                requested=o.mode if modes is None else str(modes[k]),
                clash_set=sets.name(k) if sets is not None else None,
                clearance=pair_clearance, conservative=False, violation=violation,
                allowed=reason is not None, reason=reason,
                known=bool(known is not None and violation and reason is None and key in known),
                file_a=file_a, file_b=file_b, key=key, note=note))
        pairs.sort(key=severity_key)
        self.stage("verdicts", t)
        return pairs, counts

    # Each round cuts the arcs of an unsettled pair's parts this many times finer (the bound
    # falls by its square); after the last one the pair is undecided.
    REFINE = (8, 64)

    def _settle_curves(self, objects, i, j, band, rounding, flat_band, batch, status, distance):
        """{pair index: PlaneResult} for the pairs whose verdict the flattening could change: a
        band the user set (wider than the pair's flattening bounds) within which the polygons'
        gap or depth lies, give or take the bounds. Their arcs are cut finer
        (`gjkcli.mesh.flat.refined_arcs`) until the answer and the bounds settle it, or else they
        are undecided. `status` and `distance` are updated in place."""
        from gjkcli.engine import plane
        from gjkcli.mesh.flat import refined_arcs

        depth = np.asarray(batch.depth, dtype=np.float64)
        signed = np.where(np.isnan(depth), distance, -depth)
        engine = (status == Status.TOUCHING.value) | (status == Status.COLLISION.value) | (status == Status.CLEAR.value)
        unsettled = np.flatnonzero(engine & (flat_band > 0) & (rounding >= flat_band)
                                   & ~_settled(signed, flat_band, band))
        out = {}
        for k in unsettled.tolist():
            a, b = objects[int(i[k])], objects[int(j[k])]
            result = None
            for times in self.REFINE:
                fa, fb = refined_arcs(a, times), refined_arcs(b, times)
                if fa is None or fb is None:
                    break
                r = plane.query(plane.Region(list(fa.rings)), plane.Region(list(fb.rings)),
                                tolerance=float(band[k]))
                bound = fa.chord + fb.chord
                v = r.signed_distance
                if _settled(np.array([v]), np.array([bound]), np.array([band[k]]))[0]:
                    st = (Status.COLLISION if -v > band[k] else
                          Status.CLEAR if v > band[k] else Status.TOUCHING)
                    result = dataclasses.replace(r, status=st)
                    break
            if result is None:
                result = dataclasses.replace(batch.result(k), status=Status.UNDECIDED)
            out[k] = result
            status[k] = result.status.value
            distance[k] = result.distance
        if unsettled.size:
            done = sum(r.status is not Status.UNDECIDED for r in out.values())
            self.notes.append(f"{len(out)} pair{'s' * (len(out) != 1)} whose verdict the curves' "
                              f"flattening could change (the polygons' gap or depth within the "
                              f"bounds of the band): {done} settled with the arcs cut finer"
                              + (f", {len(out) - done} undecided (curves other than arcs of "
                                 f"circles cannot be cut finer from the drawing's polygons)"
                                 if done < len(out) else ""))
        return out

    def objects(self, parts: FlatScene, pairs, counts, i, j, key_of, known):
        """Each part's record made when read (LazyRecords: a 10,000-part nest's report reads a
        few)."""
        lo, hi, per_part, objects = parts.lo, parts.hi, parts.per_part, parts.objects
        records = LazyRecords(parts.n, lambda k: _record(objects[k], lo[k].tolist(), hi[k].tolist(),
                                                         int(per_part[k])))
        return records, pairs, counts, len(i), parts.index


def _layers(options):
    """The options' DXF layer selection as the reader takes it."""
    from gjkcli.mesh.flat import Layers

    return Layers(only=tuple(options.layers or ()), ignore=tuple(options.ignore_layers or ()))




def _placed(part, T):
    """The part moved by an in-plane placement ((3, 3), None: as it is)."""
    if part is None or T is None:
        return part
    R, t = T[:2, :2], T[:2, 2]
    return dataclasses.replace(part, rings=tuple(r @ R.T + t for r in part.rings))


def _packed(objects, which):
    """(vertices, ring starts, part rings) of parts `which` of a FlatParts: their slices of the
    packed arrays, as `gjkcli.engine.plane.PartSet.from_arrays` takes them."""
    r0 = objects.part_ring[which]
    nring = objects.part_ring[which + 1] - r0
    rings = _ranges(r0, nring)
    v0 = objects.ring_start[rings]
    count = objects.ring_start[rings + 1] - v0
    vertices = objects.vertices[_ranges(v0, count)]
    return vertices, np.concatenate([[0], np.cumsum(count)]), np.concatenate([[0], np.cumsum(nring)])


def _passes_by_its_edges(a, b, at_least: float, rounding: float, gap: float) -> bool:
    """Whether the true gap between two clear parts is at least `at_least` (the clearance less
    the band's `rounding`): bounded edge by edge (`_gap_lower_bound`), then, where a chord of a
    curve keeps it below, once more with the parts' arcs cut finer (`gjkcli.mesh.flat.
    refined_arcs`), by as much as brings their bounds down to the rounding, so an arc whose
    vertex lies exactly at the margin (a disc K from the sheet's edge) passes once its chords no
    longer reach in. Only the edges within reach of the other part are compared (`gap`: the
    polygons' distance)."""
    from gjkcli.mesh.flat import refined_arcs

    reach = gap + a.chord + b.chord
    # the edge bound is at most the polygons' gap less the bound of each part whose edges are
    # all chords (the nearest edges are among those compared): when that is short of the
    # clearance by more than the rounding, it cannot pass, and only the finer arcs can tell
    least = (a.chord if a.chord > 0 and _all_chords(a) else 0.0) + (b.chord if b.chord > 0 and _all_chords(b) else 0.0)
    if not (least > 0 and gap - least + max(rounding, 1e-12 * reach) < at_least):
        low = _gap_lower_bound(a, b, reach=reach)
        if low is not None and low >= at_least:
            return True
    bound = a.chord + b.chord
    if bound <= 0 or rounding <= 0:
        return False
    times = int(min(256, max(2, math.ceil(1.25 * math.sqrt(bound / rounding)))))
    # only the chords within reach of the other part's edges: the other chords' bound may stay,
    # as _gap_lower_bound compares only the edges whose boxes come within reach
    fa = refined_arcs(a, times, _within_reach(b, reach)) if a.chord > 0 else a
    fb = refined_arcs(b, times, _within_reach(a, reach)) if b.chord > 0 else b
    if fa is None or fb is None:
        return False
    low = _gap_lower_bound(fa, fb, reach=reach)
    return low is not None and low >= at_least


def _all_chords(p) -> bool:
    """Whether every edge of the part is the chord of a curve (known: its straight masks)."""
    return p.straight is not None and not any(np.asarray(m).any() for m in p.straight)


def _settled(signed, bound, band):
    """(m,) bool: whether the true signed gap, within `bound` of the polygons' `signed` gap
    (negative: a depth), is on one side of the band's two edges: touching (|gap| <= band), a
    collision (depth > band) or clear (gap > band) whatever the curves do within the bound."""
    lo, hi = signed - bound, signed + bound
    return ((lo >= -band) & (hi <= band)) | (hi < -band) | (lo > band)


def _gap_lower_bound(a, b, most: int = 4_000_000, reach: float | None = None) -> float | None:
    """A lower bound of the gap between the true outlines of two clear parts whose rings are
    flattened: the least distance between an edge of A and an edge of B, less the bound of each
    part whose edge there is the chord of a curve (an edge drawn straight is exact). The parts
    are clear, so their outlines do not cross and the least distance between edges is the gap.
    None when the edges are unknown or too many pairs (over `most`) to compare."""
    a0, a1, ca = _edges(a)
    b0, b1, cb = _edges(b)
    if a0 is None or b0 is None:
        return None
    if reach is not None:  # only the edges whose boxes come within reach of the other part's box
        # each edge's end is the next edge's start: the starts' box is the edges' box
        box_a = (a0.min(axis=0), a0.max(axis=0))
        a0, a1, ca = _near(a0, a1, ca, (b0.min(axis=0), b0.max(axis=0)), reach)
        b0, b1, cb = _near(b0, b1, cb, box_a, reach)
        if not len(a0) or not len(b0):
            return None
    if len(a0) * len(b0) > most:
        return None
    # the least of the four endpoint-to-segment distances, each edge pair once
    na, nb = len(a0), len(b0)
    da = _point_segment(np.concatenate([a0, a1]), b0, b1)
    db = _point_segment(np.concatenate([b0, b1]), a0, a1)
    d = np.minimum(np.minimum(da[:na], da[na:]), np.minimum(db[:nb], db[nb:]).T)
    d -= (a.chord * ca)[:, None] + (b.chord * cb)[None, :]
    return float(d.min())


def _within_reach(other, reach: float):
    """window(s0, s1) for `refined_arcs`: whether each segment comes within `reach` of the
    other part's edges, or its box does of theirs (so every edge `_gap_lower_bound` keeps is
    taken)."""
    o0 = np.concatenate(other.rings)
    o1 = np.concatenate([x for r in other.rings for x in (r[1:], r[:1])])
    lo, hi = o0.min(axis=0) - reach, o0.max(axis=0) + reach  # the ends are the starts

    def window(s0, s1):
        boxed = ((np.minimum(s0, s1) <= hi) & (np.maximum(s0, s1) >= lo)).all(axis=1)
        if not boxed.any():
            return boxed
        # the least of the four endpoint-to-segment distances: the segments' distance when they
        # do not cross (crossing ones are at 0, and an endpoint is within their length); only
        # for the segments whose boxes come within reach
        k = np.flatnonzero(boxed)
        t0, t1 = s0[k], s1[k]
        d = np.minimum(_point_segment(np.concatenate([t0, t1]), o0, o1).reshape(2, len(k), -1).min(axis=(0, 2)),
                       _point_segment(np.concatenate([o0, o1]), t0, t1).min(axis=0))
        boxed[k] = d <= reach
        return boxed
    return window


def _near(s0, s1, chord, box, reach: float):
    """The edges (s0 -> s1, chord flags) whose boxes come within `reach` of `box` (lo, hi)."""
    lo, hi = box[0] - reach, box[1] + reach
    keep = ((np.minimum(s0, s1) <= hi) & (np.maximum(s0, s1) >= lo)).all(axis=1)
    return s0[keep], s1[keep], chord[keep]


def _edges(p):
    """(n, 2) edge starts, (n, 2) edge ends of the part's rings, (n,) whether each edge is a
    chord of a curve; (None, None, None) when that is not known."""
    if p.chord > 0 and p.straight is None:
        return None, None, None
    start = np.concatenate(p.rings) if len(p.rings) > 1 else p.rings[0]
    end = np.concatenate([x for r in p.rings for x in (r[1:], r[:1])])  # each vertex's next
    chord = (np.zeros(len(start), dtype=bool) if p.chord == 0
             else ~np.concatenate(p.straight))
    return start, end, chord


def _point_segment(points, s0, s1):
    """(k, m) distances of k points to m segments s0 -> s1."""
    e = s1 - s0
    ex, ey = e[:, 0], e[:, 1]
    px = points[:, 0, None] - s0[:, 0]
    py = points[:, 1, None] - s0[:, 1]
    length2 = ex * ex + ey * ey
    u = px * ex
    u += py * ey
    # the nearest point's place along each segment, clamped to it (0 for a segment of no length)
    np.divide(u, length2, out=u, where=length2 > 0)
    u[:, length2 == 0] = 0.0
    np.clip(u, 0.0, 1.0, out=u)
    px -= u * ex
    py -= u * ey
    return np.hypot(px, py, out=px)


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
