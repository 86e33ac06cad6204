"""The `--format json` document and the `--trace-json` lines. Plain dicts; the caller serialises.

Schema, version 1 (keys are stable; new keys may be added, none removed or renamed)::

    {
      "version": 1,
      "tool": {"name": "gjk", "version": str},
      "objects": [{"name", "file", "vertices", "faces", "hull_vertices", "convex", "watertight",
                   "bodies", "dimension", "bounds": [[x, y, z], [x, y, z]], "units": str | null,
                   "convexity": str | null}],
      "pairs": [{"a", "b", "status", "distance", "depth", "normal", "point_a", "point_b",
                 "iterations", "mode", "certificate",
                 "violation", "conservative", "note", "requested_mode", "signed_distance",
                 "distance_lower", "tolerance", "clearance", "epa_iterations", "exit", "epa_exit",
                 "elapsed", ["trace": [step, ...]]}],
      "errors": [{"file": str, "message": str}],
      "notes": [str],
      "summary": {"pairs", "clear", "touching", "collision", "clearance", "undecided",
                  "violations", "errors", "exit_code", "elapsed"}
    }

Numbers that are not finite are written as null, so the output is strict JSON.
"""
from __future__ import annotations

import json
import math
import re

from gjkcli.pipeline.findings import CheckReport, PairReport, pair_note
from gjkcli.engine.results import Status

SCHEMA_VERSION = 1


def _num(x) -> float | None:
    """A JSON number, or None for NaN and infinities (and for None)."""
    if x is None:
        return None
    x = float(x) + 0.0  # + 0.0 turns -0.0 into 0.0
    return x if math.isfinite(x) else None


def _vec(v) -> list | None:
    if v is None:
        return None
    return [_num(x) for x in v]


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
        return _num(value)
    if hasattr(value, "value"):  # enums
        return value.value
    return value


def object_dict(o) -> dict:
    """One object (`ObjectInfo`, or a scan's `ScanObject`, whose convexity, watertightness and
    bodies may be undecided: null)."""
    out = {
        "name": o.name,
        "file": o.file,
        "vertices": int(o.vertices),
        "faces": int(o.faces),
        "hull_vertices": int(o.hull_vertices),
        "convex": None if o.convex is None else bool(o.convex),
        "watertight": None if o.watertight is None else bool(o.watertight),
        "bodies": None if o.bodies is None else int(o.bodies),
        "dimension": int(o.dimension),
        "bounds": [_vec(o.bounds[0]), _vec(o.bounds[1])],
        "units": o.units,
        "convexity": o.convexity,
    }
    if hasattr(o, "primitive"):
        out["primitive"] = o.primitive
    return out


def pair_dict(pair: PairReport, check: CheckReport | None = None, trace: bool = False) -> dict:
    """One pair. `distance` is 0 when touching or colliding; `depth` is null unless colliding."""
    r = pair.result
    status = Status(r.status)
    apart = status in (Status.CLEAR, Status.CLEARANCE, Status.UNDECIDED)
    a = check.object(pair.a) if check else None
    b = check.object(pair.b) if check else None
    out = {
        "a": pair.a,
        "b": pair.b,
        "status": status.value,
        "distance": _num(r.distance) if apart else 0.0,
        "depth": _num(r.depth) if status is Status.COLLISION else None,
        "normal": _vec(r.normal),
        "point_a": _vec(r.point_a),
        "point_b": _vec(r.point_b),
        "iterations": int(r.iterations),
        "mode": pair.mode,
        "certificate": _clean(r.certificate.as_dict()) if r.certificate is not None else None,
        "violation": bool(pair.violation),
        "conservative": bool(pair.conservative),
        "note": pair_note(pair, a, b),
        "requested_mode": pair.requested,
        "signed_distance": _num(r.signed_distance),
        "distance_lower": _num(r.distance_lower),
        "tolerance": _num(r.tolerance),
        "clearance": _num(pair.clearance),
        "epa_iterations": int(r.epa_iterations),
        "exit": r.exit,
        "epa_exit": r.epa_exit,
        "elapsed": _num(r.elapsed),
    }
    if trace:
        out["trace"] = [step_dict(s) for s in (r.trace or ())]
    return out


def step_dict(step) -> dict:
    """One trace step, strict-JSON-ready (the fields of `gjkcli.engine.results.TraceStep`)."""
    return _clean(step.as_dict())


def check_document(check: CheckReport, trace: bool = False) -> dict:
    """The whole `--format json` document; `trace` adds each pair's steps under "trace"."""
    counts = check.counts()
    summary = {"pairs": len(check.pairs), **counts}
    summary.update(
        violations=sum(1 for p in check.pairs if p.violation),
        errors=len(check.errors),
        exit_code=check.exit_code,
        elapsed=_num(check.elapsed),
    )
    return {
        "version": SCHEMA_VERSION,
        "tool": {"name": "gjk", "version": check.version},
        "objects": [object_dict(o) for o in check.objects],
        "pairs": [pair_dict(p, check, trace) for p in check.pairs],
        "errors": [{"file": e.file, "message": e.message} for e in check.errors],
        "notes": list(check.notes),
        "summary": summary,
    }


# A JSON list of numbers (or nulls) that json.dumps(indent=...) spread over several lines.
_NUMBERS = re.compile(r"\[\s*((?:-?[0-9][0-9.eE+-]*|null)(?:,\s*(?:-?[0-9][0-9.eE+-]*|null))*)\s*\]")


def dumps(document: dict) -> str:
    """Strict JSON, indented, with each vector on one line: [0.5, 0.0, -1.0]."""
    text = json.dumps(document, indent=2, allow_nan=False)
    return _NUMBERS.sub(lambda m: "[" + ", ".join(x.strip() for x in m.group(1).split(",")) + "]", text)


def trace_lines(pair: PairReport) -> list[dict]:
    """The `--trace-json` records of a pair: one dict per step, tagged with the pair's names."""
    return [{"a": pair.a, "b": pair.b, **step_dict(s)} for s in (pair.result.trace or ())]
