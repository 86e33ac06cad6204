"""The `--format json` document of `gjk check` and `gjk scan`, and the `--trace-json` lines.
Plain dicts; `dumps` serialises.

Schema, version 2 (keys are stable within a version; new keys may be added, none removed or
renamed; the additions of each release are listed in docs/reports.md). Version 2 keeps one
version key, `schema_version` (version 1 also wrote `version`), and calls each pair's engine stop
reasons `stop_reason` and `epa_stop_reason` (version 1: `exit` and `epa_exit`, which read like the
process's exit code)::

    {
      "schema_version": 2,
      "command": "check" | "scan",
      "dimension": 3 | 2 (2: a run on 2D drawings; every vector and bound has two coordinates),
      "tool": {"name": "gjk", "version": str},
      "objects": [{"name", "file", "vertices", "faces", "hull_vertices", "convex", "watertight",
                   "bodies", "dimension", "bounds": [[x, y, z], [x, y, z]], "units", "convexity",
                   "primitive", "hull_gap", "ifc_class", "global_id", "ifc_name",
                   ["layer", "flattening": 2D parts only: the DXF layer, the outline's own
                    flattening bound]}],
      "pairs": [{"a", "b", "status", "distance", "depth", "normal", "point_a", "point_b",
                 "iterations", "mode", "certificate", "violation", "conservative", "note",
                 "requested_mode", "signed_distance", "distance_lower", "distance_is_lower_bound",
                 "tolerance", "clearance", "epa_iterations", "stop_reason", "epa_stop_reason", "elapsed",
                 "allowed", "reason", "baseline", "fails", "file_a", "file_b",
                 "overlap_volume", "overlap_reason",
                 ["units": the run's length unit, when the inputs state one],
                 ["tessellation_error", "distance_upper": tessellated (STEP) parts only],
                 ["waypoint", "segment", "t": robots' --poses and --trajectory only],
                 ["time_from_start": seconds, a ROS trajectory's (JSON or YAML) only],
                 ["clash_set": the manifest [[check]] the pair is reported under],
                 ["group": the number of its group of clashes at one place],
                 ["trace": [step, ...]]}],
      ["groups": [{"group", "clash_set", "pairs", "elements", "centre"}]: when the scan
                 groups its clashes (--group-within, group_within)],
      "errors": [{"file": str, "message": str}],
      "notes": [str],
      "gone": [{"file", "a", "b", "status"}],
      "summary": {"pairs", "clear", "touching", "collision", "clearance", "undecided",
                  "violations", "errors", "exit_code", "elapsed", "objects", "candidates",
                  "allowed", "known", "failures", "gone", "exact", "hull"},
      "run": {"mode", "requested_mode", "tolerance", "clearance", "fail_on", "all_pairs",
              "show_allowed", "baseline", "timings", "units",
              "together": a scan of several files: true when they were one world, false when each
              file was checked by itself; null for a check, a scan of one file or a manifest},
      "scan": the same as "run" (scan documents only, as before "run" existed)
    }

"pairs" leaves out the allowed pairs unless the run shows them ("show_allowed", or "all_pairs");
"summary" counts them ("allowed": those that would fail).

A certificate is {"kind": "plane", "normal", "offset"}, {"kind": "point", "point"},
{"kind": "triangles", "a", "b", "point"}, {"kind": "distance", "lower"} or {"kind": "shift",
"shift", "upper"} (touching: B moved by shift leaves the volumes apart), with "of": "parts"
when it proves the verdict for the parts, "hulls" when only for their hulls (conservative).

Numbers that are not finite are written as null, so the output is strict JSON.
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Iterator

from gjkcli.pipeline.findings import Finding, Findings, notable, pair_note
from gjkcli.engine.results import Status
from gjkcli.report.chunks import in_chunks

SCHEMA_VERSION = 2


def number(x) -> float | None:
    """A JSON number, or None for NaN and infinities (and for None)."""
    if x is None:
        return None
    x = float(x) + 0.0  # + 0.0 turns -0.0 into 0.0
    return x if math.isfinite(x) else None


def vector(v) -> list | None:
    """A JSON list of numbers: -0.0 as 0.0, NaN and infinities as null (a pair's vectors, in one
    NumPy call where the vector is an array: a large scan writes hundreds of thousands)."""
    if v is None:
        return None
    if hasattr(v, "tolist"):
        out = [x + 0.0 for x in v.tolist()]
        if all(map(math.isfinite, out)):
            return out
        return [x if math.isfinite(x) else None for x in out]
    return [number(x) for x in v]


def _certificate(cert: dict) -> dict:
    """A certificate's dict (numbers, vectors of numbers, strings) ready for strict JSON."""
    return {k: vector(v) if isinstance(v, list) else number(v) if isinstance(v, float) else v
            for k, v in cert.items()}


def _clean(value):
    """Recursively make a value strict-JSON-ready: arrays to lists, non-finite floats to None."""
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    if hasattr(value, "tolist"):  # numpy arrays and scalars, without importing numpy
        return _clean(value.tolist())
    if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
        return value
    if isinstance(value, float):
        return number(value)
    if hasattr(value, "value"):  # enums
        return value.value
    return value


def object_dict(o) -> dict:
    """One object; convexity, watertightness and bodies may be undecided (null)."""
    return {
        "name": o.name,
        "file": o.file,
        "vertices": int(o.vertices),
        "faces": int(o.faces),
        "hull_vertices": int(o.hull_vertices),
        "convex": None if o.convex is None else bool(o.convex),
        "watertight": None if o.watertight is None else bool(o.watertight),
        "bodies": None if o.bodies is None else int(o.bodies),
        "dimension": int(o.dimension),
        "bounds": [vector(o.bounds[0]), vector(o.bounds[1])],
        "units": o.units,
        "convexity": o.convexity,
        "primitive": o.primitive,
        "hull_gap": number(o.hull_gap),
        "ifc_class": o.ifc_class,
        "global_id": o.global_id,
        "ifc_name": o.ifc_name,
        **({"layer": o.layer, "flattening": number(o.flattening)} if o.flattening is not None
           else {}),
    }


def pair_dict(pair: Finding, found: Findings | None = None, trace: bool = False,
              timings: bool = True) -> dict:
    """One pair. `distance` is 0 when touching or colliding; `depth` is null unless colliding."""
    r = pair.result
    status = Status(r.status)
    apart = status in (Status.CLEAR, Status.CLEARANCE, Status.UNDECIDED)
    # the objects' records only where the note reads them (a hull's answer standing for parts
    # that are not their hulls): a record read is kept, and a listing may name every object
    a = found.object(pair.a) if found and pair.conservative else None
    b = found.object(pair.b) if found and pair.conservative else None
    certificate = None
    if r.certificate is not None:
        certificate = _certificate(r.certificate.as_dict())
        certificate["of"] = "hulls" if pair.conservative else "parts"
    out = {
        "a": pair.a,
        "b": pair.b,
        "status": status.value,
        "distance": number(r.distance) if apart else 0.0,
        "depth": number(r.depth) if status is Status.COLLISION else None,
        "normal": vector(r.normal),
        "point_a": vector(r.point_a),
        "point_b": vector(r.point_b),
        "iterations": int(r.iterations),
        "mode": pair.mode,
        "certificate": certificate,
        "violation": bool(pair.violation),
        "conservative": bool(pair.conservative),
        "note": pair_note(pair, a, b),
        "requested_mode": pair.requested,
        "signed_distance": number(r.signed_distance),
        "distance_lower": number(r.distance_lower if pair.distance_lower is None
                                 else max(pair.distance_lower, 0.0)),
        "distance_is_lower_bound": bool(pair.distance_is_lower_bound),
        "tolerance": number(r.tolerance),
        "clearance": number(pair.clearance),
        "epa_iterations": int(r.epa_iterations),
        "stop_reason": r.exit,
        "epa_stop_reason": r.epa_exit,
        # a pair answered in a batch (the hulls' call) has no time of its own: null, not 0.0
        "elapsed": number(r.elapsed) if timings and r.elapsed > 0 else None,
        "allowed": bool(pair.allowed),
        "reason": pair.reason,
        "baseline": _baseline_mark(pair, found),
        "fails": bool(pair.fails),
        "file_a": pair.file_a,
        "file_b": pair.file_b,
        "overlap_volume": number(pair.overlap_volume),
        "overlap_reason": pair.overlap_reason,
    }
    if found is not None and found.units is not None:
        out["units"] = found.units
    if pair.tessellation is not None:  # tessellated CAD parts: the true solids' bounds
        out["tessellation_error"] = number(pair.tessellation)
        if pair.distance_upper is not None and pair.distance_upper != pair.distance_lower:
            out["distance_upper"] = number(max(pair.distance_upper, 0.0))
    for key in ("waypoint", "segment", "t", "time_from_start", "clash_set", "group"):  # where the run has them
        if getattr(pair, key) is not None:
            out[key] = getattr(pair, key)
    if trace:
        out["trace"] = [step_dict(s) for s in (r.trace or ())]
    return out


def _baseline_mark(pair: Finding, found: Findings | None) -> str | None:
    if found is None or found.baseline is None or not pair.violation or pair.allowed:
        return None
    return "known" if pair.known else "new"


def step_dict(step) -> dict:
    """One trace step, strict-JSON-ready (the fields of `gjkcli.engine.results.TraceStep`)."""
    return _clean(step.as_dict())


def document(found: Findings, trace: bool = False, timings: bool = True) -> dict:
    """The whole `--format json` document; `trace` adds each pair's steps under "trace".

    timings=False (the command without --timings) leaves the clock out: each pair's and the
    summary's "elapsed" are null and "run"."timings" is empty, so two runs on the same inputs
    give the same bytes (golden files, caches)."""
    return _document(found, trace, timings, rows=list)


def encoded(found: Findings, trace: bool = False, timings: bool = True) -> Iterator[bytes]:
    """``dumps(document(found, trace, timings)) + "\n"`` as UTF-8 chunks (`gjkcli.report.chunks`),
    each object's and pair's dict made and encoded only when its line is reached: a scan of
    25,000 listed pairs (the Great Court roof) then never holds them all as dicts, nor the
    text whole where the chunks are written to a file as they come (`gjkcli.errors.write_whole`;
    a run with the cache keeps the report by reading the file back, `gjkcli.clioutput`)."""
    yield from in_chunks(itertools.chain(_pieces(_document(found, trace, timings, rows=_Rows)), (b"\n",)))


class _Rows:
    """A document's list of dicts made one at a time, as `encoded` writes them (`document`
    holds a list instead)."""

    __slots__ = ("items",)

    def __init__(self, items):
        self.items = iter(items)


def _document(found: Findings, trace: bool, timings: bool, rows) -> dict:
    """`document`, its "objects" and "pairs" made by `rows` (list, or _Rows for `encoded`)."""
    summary = {"pairs": int(found.checked), **{k: int(v) for k, v in found.counts.items()}}
    summary.update(
        violations=found.violations,
        errors=len(found.errors),
        exit_code=found.exit_code,
        elapsed=number(found.elapsed) if timings else None,
        objects=len(found.objects),
        candidates=int(found.candidates),
        allowed=len(found.allowed),
        known=sum(1 for p in notable(found.pairs) if p.known),
        failures=found.failure_count,
        gone=len(found.gone),
        **found.modes,
    )
    run = _clean({
        "mode": found.requested,
        "requested_mode": found.requested,
        "tolerance": found.tolerance,
        "clearance": found.clearance,
        "fail_on": list(found.fail_on),
        "all_pairs": bool(found.all_pairs),
        "show_allowed": bool(found.show_allowed),
        "baseline": found.baseline,
        "timings": dict(found.timings) if timings else {},
        "units": found.units,
        "together": found.together,
    })
    out = {
        "schema_version": SCHEMA_VERSION,
        "command": found.command,
        "dimension": int(found.dimension),
        "tool": {"name": "gjk", "version": found.version},
        "objects": rows(object_dict(o) for o in found.objects),
        "pairs": rows(pair_dict(p, found, trace, timings) for p in found.listed),
        "errors": [{"file": e.file, "message": e.message} for e in found.errors],
        "notes": list(found.notes),
        "gone": [{"file": e.file, "a": e.a, "b": e.b, "status": e.status} for e in found.gone],
        "summary": summary,
        "run": run,
    }
    if found.command == "scan":
        out["scan"] = run
    grouped = groups_list(found)
    if grouped:
        out["groups"] = grouped
    return out


def groups_list(found: Findings) -> list:
    """The groups of clashes at one place (`gjkcli.pipeline.grouping`): number, clash set, the
    number of pairs, every element in it and the mean of its contacts."""
    from gjkcli.pipeline.groups import groups

    if not any(p.group is not None for p in notable(found.pairs)):  # a plain pair has none
        return []
    return [{"group": g.number, "clash_set": g.clash_set, "pairs": len(g.pairs),
             "elements": list(g.elements), "centre": vector(g.centre)} for g in groups(found.pairs)]


class Encoded:
    """A list's rows already encoded, as `dumped_chunks` writes them: each piece a row
    (`encode_row`) or a run of rows with the separators between them, as a report holds them
    (a report patched from the last one, `gjkcli.report.patch`); `dumped_chunks` puts a
    separator between pieces."""

    __slots__ = ("rows",)

    def __init__(self, rows: list):
        self.rows = rows


def encode_row(row: dict) -> bytes:
    """One object's or pair's line as `dumps` writes it (without its indent and comma)."""
    import orjson

    return orjson.dumps(row, option=orjson.OPT_SERIALIZE_NUMPY)


def dumped_chunks(document: dict) -> list:
    """`dumps(document) + "\\n"` as UTF-8 chunks (`in_chunks`), not joined; a list may be
    `Encoded`, and its pieces that large (the kept lines of a report made from the last one)
    are chunks as they are, written and kept without another copy."""
    return list(in_chunks(itertools.chain(_pieces(document), (b"\n",))))


def dumps(document: dict) -> str:
    """Strict JSON for people and machines alike: each top-level key on its line, each object
    and pair of a list on one line of its own. orjson (C) encodes; Python's encoder, which an
    indent forces onto its pure-Python path, took most of a large scan's report time."""
    return b"".join(_pieces(document)).decode()


def _pieces(document: dict) -> Iterator[bytes]:
    """`dumps`' UTF-8 text in pieces: a list of dicts (or `_Rows`) one row a line, any other
    value on its key's line."""
    import orjson

    def enc(value) -> bytes:
        return orjson.dumps(value, option=orjson.OPT_SERIALIZE_NUMPY)

    yield b"{"
    last = len(document) - 1
    for n, (key, value) in enumerate(document.items()):
        tail = b"," if n < last else b""
        raw = isinstance(value, Encoded)
        if raw:
            value = _Rows(value.rows)
        rows = value.items if isinstance(value, _Rows) else iter(value) \
            if isinstance(value, list) and value and isinstance(value[0], dict) else None
        first = None if rows is None else next(rows, None)
        if first is None:
            yield b"\n  " + enc(key) + b": " + enc([] if isinstance(value, _Rows) else value) + tail
            continue
        if raw:  # a piece of rows may be large (a report's kept lines): yielded as it is
            yield b"\n  " + enc(key) + b": [\n    "
            yield first
            for row in rows:
                yield b",\n    "
                yield row
        else:
            yield b"\n  " + enc(key) + b": [\n    " + enc(first)
            for row in rows:
                yield b",\n    " + enc(row)
        yield b"\n  ]" + tail
    yield b"\n}"


def trace_lines(pair: Finding) -> list[dict]:
    """The `--trace-json` records of a pair: one dict per step, tagged with the pair's names."""
    return [{"a": pair.a, "b": pair.b, **step_dict(s)} for s in (pair.result.trace or ())]
