"""The `--format json` report of a re-scan (`gjkcli.pipeline.rescan`): the last report with the
moved parts' records and pairs replaced, the pairs placed in order, the summary counted again,
bytes as a whole scan's `jsonout.encoded` writes them.

The report writes each object and each pair on its own line (`jsonout.dumps`), so the last
report is patched line by line: the lines of what did not change are kept as bytes, those of
the moved parts written from the re-scan's findings, and the few lines whose overlap volume
changes with their rank (the overlap volumes' limit) read and written again (orjson writes each
float as the shortest text that reads back to it, so a line read and written is the same
bytes). The scene entry holds each listed pair's parts and place in the order, so no kept line
is read to sort. What cannot be patched (errors, notes, a baseline, allowed or known pairs, a
record whose convexity reason depends on pairs that changed, a summary this module would not
write the same) gives None: the file is scanned whole.
"""
from __future__ import annotations

import numpy as np

from gjkcli.engine.results import Status
from gjkcli.pipeline.findings import EXIT_OK, EXIT_VIOLATION
from gjkcli.pipeline.listed import listed_arrays
from gjkcli.report.jsonout import Encoded, dumped_chunks, encode_row, object_dict, pair_dict

__all__ = ["patched"]

_KEYS = ["schema_version", "command", "dimension", "tool", "objects", "pairs", "errors", "notes", "gone",
         "summary", "run", "scan"]
_OVERLAP = ("overlap_volume", "overlap_reason")


def patched(rescan, notes: list, volumes=None):
    """(exit code, report bytes, the listed pairs' arrays to keep) of `rescan`
    (`gjkcli.pipeline.rescan.Rescan`), or None.

    notes : the notes a whole scan's report would hold (the settings file's); volumes : names
    -> the Findings of a scan of those parts only, for the kept collisions that move up into
    the overlap volumes' limit (`gjkcli.pipeline.rescan.scan_parts`), or None.
    """
    import orjson

    names, changed, old, found = rescan.names, rescan.changed, rescan.old, rescan.found
    n = len(names)
    data = rescan.previous
    old_file, new_file = rescan.file
    if old_file != new_file:  # a key and its string as orjson writes them: only a key's value matches
        was, now = orjson.dumps(old_file), orjson.dumps(new_file)
        data = data.replace(b'"file":' + was, b'"file":' + now)
        data = data.replace(b'"file_a":' + was + b',"file_b":' + was, b'"file_a":' + now + b',"file_b":' + now)
    split = _Report.read(data)
    if split is None:
        return None
    small, objects, lines = split
    if list(small) != _KEYS or small["errors"] or small["notes"] != notes or small["gone"] \
            or small["run"].get("baseline") is not None or len(objects) != n or len(lines) != len(old["la"]) \
            or not old["lplain"].all() or np.isnan(old["lsize"]).any():
        return None
    small["objects"] = range(n)  # counted by the summary
    again_summary = _summary(old, small["summary"], small)
    if again_summary is None or list(again_summary.items()) != list(small["summary"].items()):
        return None  # a summary this module would not write the same
    for k in range(n):
        if not objects.begins_with(k, b'{"name":' + orjson.dumps(names[k]) + b","):
            return None
    at = {name: k for k, name in enumerate(names)}
    # the records of the parts scanned again: the moved ones' new, the others' as they were
    records = {}
    for o in found.objects:
        k = at.get(o.name)
        if k is None:
            return None
        row = encode_row(object_dict(o))
        if changed[k]:
            records[k] = row
        elif row != objects.row(k):
            return None
    # the pairs: the last report's without a moved part (in their order), the re-scan's with one
    la, lb = old["la"], old["lb"]
    kept = np.flatnonzero(~(changed[la] | changed[lb]))
    new, again = [], {}
    for p in found.listed:
        a, b = at.get(p.a), at.get(p.b)
        if a is None or b is None or p.allowed or p.known:
            return None
        if changed[a] or changed[b]:
            new.append(p)
        else:
            again[(a, b)] = p
    # the pairs of unchanged parts scanned again: as the last report has them (their overlap
    # volumes aside: which collisions get one depends on the whole list)
    inside = np.zeros(n, dtype=bool)
    inside[rescan.subset] = True
    before = kept[inside[la[kept]] & inside[lb[kept]]].tolist()
    if set(zip(la[before].tolist(), lb[before].tolist())) != set(again):
        return None
    for q in before:
        fresh = pair_dict(again[(int(la[q]), int(lb[q]))], found, False, False)
        if _plain(fresh) != _plain(orjson.loads(lines.row(q))):
            return None
    # the order (`severity_key`: status, depth or distance, then the names; none allowed or
    # known): the kept pairs' from the scene entry, the new ones' from their findings
    fresh = listed_arrays(new, at)
    if np.isnan(fresh["lsize"]).any():
        return None
    by_name = np.empty(n, dtype=np.int64)
    by_name[np.array(sorted(range(n), key=names.__getitem__), dtype=np.int64)] = np.arange(n)
    listed = {name: np.concatenate([old[name][kept], fresh[name]])
              for name in ("la", "lb", "lsev", "lsize", "lplain", "lviolation", "lfails")}
    modes = [old["lmode"][q] for q in kept.tolist()] + fresh["lmode"]
    perm = np.lexsort((by_name[listed["lb"]], by_name[listed["la"]], listed["lsize"], listed["lsev"]))
    listed = {name: values[perm] for name, values in listed.items()}
    listed["lmode"] = [modes[r] for r in perm.tolist()]
    source = np.concatenate([kept, -1 - np.arange(len(new), dtype=np.int64)])[perm].tolist()
    # each row's line, its overlap volume as its rank gives it
    cap, beyond = rescan.cap, rescan.cap_note
    rows, wanted, rank = [], [], 0
    for q, sev in zip(source, listed["lsev"].tolist()):
        collision = sev == 0
        if q >= 0:
            row = q  # kept as it is
            if collision and (q < cap) != (rank < cap):
                d = orjson.loads(lines.row(q))
                if rank >= cap:
                    d["overlap_volume"], d["overlap_reason"] = None, beyond
                else:
                    p = again.get((int(la[q]), int(lb[q])))
                    if p is not None and (p.a, p.b) in rescan.volumes and p.overlap_reason != beyond:
                        d["overlap_volume"], d["overlap_reason"] = _overlap(p, found)
                    else:
                        wanted.append((len(rows), d))
                row = encode_row(d)
        else:
            p = new[-1 - q]
            d = pair_dict(p, found, False, False)
            if collision and rank >= cap:
                d["overlap_volume"], d["overlap_reason"] = None, beyond
            elif collision and (p.overlap_reason == beyond or not rescan.wants_volume(p)):
                return None  # past the re-scan's own limit, or not asked of it
            row = encode_row(d)
        rows.append(row)
        rank += collision
    if wanted and not _volumes(rows, wanted, volumes, beyond):
        return None
    # a record's convexity reason is measured for the parts of listed pairs: kept while that
    # did not change, or the record says it is convex (the same either way)
    before_parts = set(la.tolist()) | set(lb.tolist())
    after_parts = set(listed["la"].tolist()) | set(listed["lb"].tolist())
    for k in before_parts ^ after_parts:
        if not changed[k] and orjson.loads(objects.row(k))["convex"] is not True:
            return None
    summary = _summary(listed, small["summary"], small, rescan.status_counts, rescan.checked)
    if summary is None:
        return None
    small["objects"] = Encoded(objects.patched([records.get(k, k) for k in range(n)]))
    small["pairs"], small["summary"] = Encoded(lines.patched(rows)), summary
    return summary["exit_code"], dumped_chunks(small), listed


class _Report:
    """A list's rows in a report `jsonout` wrote, by their place in its bytes (each row on a
    line of its own, "    {...}," but the last): read and written again without a copy of
    each (a 10,000-part scan's report is 12 MB)."""

    def __init__(self, data: bytes, start: int, end: int):
        """The rows of data[start:end] (from the first row's indent to the last row's end)."""
        self.data, self.view = data, memoryview(data)
        ends = np.flatnonzero(np.frombuffer(data, dtype=np.uint8, count=end - start, offset=start) == 10) + start
        self.starts = (np.concatenate([[start], ends + 1]) + 4).tolist()  # "    " indents
        self.ends = np.concatenate([ends - 1, [end]]).tolist()  # "," but the last's
        if start == end:
            self.starts, self.ends = [], []

    def __len__(self) -> int:
        return len(self.starts)

    def row(self, k: int) -> bytes:
        return self.data[self.starts[k]:self.ends[k]]

    def begins_with(self, k: int, prefix: bytes) -> bool:
        return self.data.startswith(prefix, self.starts[k])

    def patched(self, rows: list) -> list:
        """The pieces of a list of `rows` (a row's place here, or a new row's bytes): runs of
        rows kept in their order as one slice each (their separators in it)."""
        out, first, last = [], None, None
        for row in rows:
            if type(row) is int and last is not None and row == last + 1:
                last = row
                continue
            if last is not None:
                out.append(self.view[self.starts[first]:self.ends[last]])
                first = last = None
            if type(row) is int:
                first = last = row
            else:
                out.append(row)
        if last is not None:
            out.append(self.view[self.starts[first]:self.ends[last]])
        return out

    @classmethod
    def read(cls, data: bytes):
        """(the document without its objects and pairs, objects, pairs) of a report `jsonout`
        wrote, or None. A newline in a string is written as an escape: the only newlines are
        the layout's."""
        import orjson

        opening = b'\n  "objects": [\n'
        start = data.find(opening)
        end = data.find(b'\n  ],\n  "pairs": ', start)
        if start < 0 or end < 0:
            return None
        objects = cls(data, start + len(opening), end)
        at = end + len(b'\n  ],\n  "pairs": ')
        if data.startswith(b"[],\n", at):
            pairs, tail = cls(data, at, at), at + 3
        elif data.startswith(b"[\n", at):
            stop = data.find(b'\n  ],\n  "errors": ', at)
            if stop < 0:
                return None
            pairs, tail = cls(data, at + 2, stop), stop + 5
        else:
            return None
        try:
            small = orjson.loads(data[:start] + b'\n  "objects": [],\n  "pairs": [],' + data[tail:])
        except orjson.JSONDecodeError:
            return None
        return (small, objects, pairs) if isinstance(small, dict) else None


def _overlap(p, found) -> tuple:
    d = pair_dict(p, found, False, False)
    return d["overlap_volume"], d["overlap_reason"]


def _volumes(rows: list, wanted: list, volumes, beyond: str) -> bool:
    """The overlap volumes of the kept collisions `wanted` ([(row, dict)]) from a scan of
    their parts alone (`volumes`); False where one cannot be had."""
    if volumes is None:
        return False
    found = volumes(sorted({d["a"] for _, d in wanted} | {d["b"] for _, d in wanted}))
    if found.errors:
        return False
    got = {(p.a, p.b): p for p in found.listed}
    for at, d in wanted:
        p = got.get((d["a"], d["b"]))
        if p is None or p.overlap_reason == beyond:
            return False
        fresh = pair_dict(p, found, False, False)
        if _plain(fresh) != _plain(d):
            return False
        d["overlap_volume"], d["overlap_reason"] = fresh["overlap_volume"], fresh["overlap_reason"]
        rows[at] = encode_row(d)
    return True


def _plain(d: dict) -> dict:
    """A pair's dict but its overlap volume and reason."""
    return {k: v for k, v in d.items() if k not in _OVERLAP}


def _summary(listed: dict, old: dict, doc: dict, counts: dict | None = None, checked: int | None = None):
    """The summary `jsonout` writes for these listed pairs (`gjkcli.pipeline.rescan.listed_arrays`)
    and counts (the last summary's with `counts` None); None where it cannot be told (allowed,
    known or gone pairs, errors)."""
    if old.get("allowed") != 0 or old.get("known") != 0 or old.get("errors") != 0 or old.get("gone") != 0 \
            or old.get("candidates") != old.get("pairs") or old.get("elapsed") is not None:
        return None
    if counts is None:
        counts = {s.value: old.get(s.value) for s in Status}
        checked = old.get("pairs")
    failures = int(np.count_nonzero(listed["lfails"]))
    modes = {"hull": 0, "exact": 0}
    for mode in listed["lmode"]:
        modes[mode] = modes.get(mode, 0) + 1
    return {"pairs": checked, **counts, "violations": int(np.count_nonzero(listed["lviolation"])), "errors": 0,
            "exit_code": EXIT_VIOLATION if failures else EXIT_OK, "elapsed": None,
            "objects": len(doc["objects"]), "candidates": checked, "allowed": 0, "known": 0,
            "failures": failures, "gone": 0, **modes}
