"""The `--format json` report of a re-scan (`gjkcli.pipeline.rescan`): the last report with the
moved parts' records and pairs replaced, the summary counted again, bytes as a whole scan's
`jsonout.encoded` writes them.

The last report is read back as data (orjson writes each float as the shortest text that reads
back to it, so its rows written again are the same bytes). What cannot be patched (errors,
notes, a baseline, groups, allowed pairs, more collisions than get an overlap volume, a record
whose convexity reason depends on pairs that changed) gives None: the file is scanned whole.
"""
from __future__ import annotations

from gjkcli.engine.results import Status
from gjkcli.pipeline.findings import EXIT_OK, EXIT_VIOLATION, SEVERITY
from gjkcli.pipeline.stages import overlap_cap_note
from gjkcli.report.jsonout import dumps, object_dict, pair_dict

__all__ = ["patched"]

_KEYS = ["schema_version", "command", "dimension", "tool", "objects", "pairs", "errors", "notes", "gone",
         "summary", "run", "scan"]
_SEVERITY = {s.value: SEVERITY[s] for s in Status}


def patched(rescan, cap: int, notes: list, volumes=None) -> tuple[int, bytes] | None:
    """(exit code, report bytes) of `rescan` (`gjkcli.pipeline.rescan.Rescan`), or None.
    cap : the overlap volumes' limit (the report of more collisions is not patched); notes :
    the notes a whole scan's report would hold (the settings file's); volumes : names -> the
    Findings of a scan of those parts only, for the collisions that move up into the overlap
    volumes' limit (`gjkcli.pipeline.rescan.scan_parts`), or None."""
    import orjson

    try:
        doc = orjson.loads(rescan.previous)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(doc, dict) or list(doc) != _KEYS or doc["errors"] or doc["notes"] != notes or doc["gone"] \
            or doc["run"].get("baseline") is not None:
        return None
    again = _summary(doc["pairs"], doc["summary"], doc)
    if again is None or list(again.items()) != list(doc["summary"].items()):
        return None  # a summary this module would not write the same
    found, moved = rescan.found, rescan.moved
    old_file, new_file = rescan.file
    rename = old_file != new_file

    def renamed(d: dict, keys) -> dict:
        if rename:
            for key in keys:
                if d.get(key) == old_file:
                    d[key] = new_file
        return d

    records = {o.name: object_dict(o) for o in found.objects}
    before = {d["a"] for d in doc["pairs"]} | {d["b"] for d in doc["pairs"]}
    kept = [renamed(d, ("file_a", "file_b")) for d in doc["pairs"] if d["a"] not in moved and d["b"] not in moved]
    new, again = [], {}
    for p in found.listed:
        d = pair_dict(p, found, False, False)
        if p.a in moved or p.b in moved:
            new.append(d)
        else:
            again[(p.a, p.b)] = d
    # the pairs of unchanged parts scanned again: as the last report has them
    # (their overlap volumes aside: which collisions get one depends on the whole list)
    if {k: _plain(d) for k, d in again.items()} \
            != {(d["a"], d["b"]): _plain(d) for d in kept if d["a"] in records and d["b"] in records}:
        return None
    pairs = kept + new
    keys = []
    for d in pairs:
        k = _order(d)
        if k is None:
            return None
        keys.append(k)
    pairs = [d for _, d in sorted(zip(keys, pairs), key=lambda kd: kd[0])]
    if not _capped(pairs, cap, set(map(id, new)), again, volumes):
        return None
    after = {d["a"] for d in pairs} | {d["b"] for d in pairs}
    objects = []
    for d in doc["objects"]:
        name = d["name"]
        if name in moved:
            if name not in records:
                return None
            objects.append(records[name])
            continue
        d = renamed(d, ("file",))
        if name in records and records[name] != d:
            return None
        # a reason measured for the parts of listed pairs only: kept while that did not change
        if d["convex"] is not True and (name in before) != (name in after):
            return None
        objects.append(d)
    doc["objects"], doc["pairs"] = objects, pairs
    summary = _summary(pairs, doc["summary"], doc, rescan.status_counts, rescan.checked)
    if summary is None:
        return None
    doc["summary"] = summary
    return summary["exit_code"], dumps(doc).encode() + b"\n"


def _capped(pairs: list, cap: int, new: set, again: dict, volumes) -> bool:
    """Give the listed collisions their overlap volumes as a whole scan does: the `cap` deepest
    one (pairs come sorted), the others the limit's note. A kept collision that moved up into
    the limit gets its volume from the re-scan (`again`: its pairs of unchanged parts, by
    names) or from `volumes`; False where one cannot be had (a new collision past the
    re-scan's own limit, or `volumes` None)."""
    beyond = overlap_cap_note(cap)
    collisions = [d for d in pairs if d["status"] == Status.COLLISION.value]
    wanted = []
    for d in collisions[cap:]:
        d["overlap_volume"], d["overlap_reason"] = None, beyond
    for d in collisions[:cap]:
        if d["overlap_reason"] == beyond:
            if id(d) in new:
                return False
            fresh = again.get((d["a"], d["b"]))
            if fresh is not None and fresh["overlap_reason"] != beyond:
                d["overlap_volume"], d["overlap_reason"] = fresh["overlap_volume"], fresh["overlap_reason"]
            else:
                wanted.append(d)
    if not wanted:
        return True
    if volumes is None:
        return False
    names = sorted({d["a"] for d in wanted} | {d["b"] for d in wanted})
    found = volumes(names)
    if found.errors:
        return False
    got = {(p.a, p.b): p for p in found.listed}
    for d in wanted:
        p = got.get((d["a"], d["b"]))
        if p is None:
            return False
        fresh = pair_dict(p, found, False, False)
        if fresh["overlap_reason"] == beyond or _plain(fresh) != _plain(d):
            return False
        d["overlap_volume"], d["overlap_reason"] = fresh["overlap_volume"], fresh["overlap_reason"]
    return True


def _plain(d: dict) -> dict:
    """A pair's dict but its overlap volume and reason."""
    return {k: v for k, v in d.items() if k not in ("overlap_volume", "overlap_reason")}


def _order(d: dict):
    """`gjkcli.pipeline.findings.severity_key` of a pair's dict (no baseline: none known);
    None where a number it sorts by is not in the dict (null)."""
    status = d["status"]
    if status == Status.COLLISION.value:
        size = d["depth"]
        size = None if size is None else -size
    elif status in (Status.CLEARANCE.value, Status.CLEAR.value, Status.UNDECIDED.value):
        size = d["distance"]
    else:
        size = d["signed_distance"]
    if size is None or d["allowed"] is not False or status not in _SEVERITY:
        return None
    return (False, False, _SEVERITY[status], size, d["a"], d["b"])


def _summary(pairs: list, old: dict, doc: dict, counts: dict | None = None, checked: int | None = None):
    """The summary `jsonout` writes for these listed pairs and counts (the last summary's with
    `counts` None); None where it cannot be told (allowed or known pairs)."""
    if old.get("allowed") != 0 or old.get("known") != 0 or old.get("errors") != 0 or old.get("gone") != 0 \
            or old.get("candidates") != old.get("pairs") or old.get("elapsed") is not None:
        return None
    if counts is None:
        counts = {s.value: old.get(s.value) for s in Status}
        checked = old.get("pairs")
    failures = sum(1 for d in pairs if d["fails"])
    modes = {"hull": 0, "exact": 0}
    for d in pairs:
        modes[d["mode"]] = modes.get(d["mode"], 0) + 1
    return {"pairs": checked, **counts, "violations": sum(1 for d in pairs if d["violation"]), "errors": 0,
            "exit_code": EXIT_VIOLATION if failures else EXIT_OK, "elapsed": None,
            "objects": len(doc["objects"]), "candidates": checked, "allowed": 0, "known": 0,
            "failures": failures, "gone": 0, **modes}
