"""The `--format json` report of a robot's `--poses` run whose poses the cache kept, their
findings' lines taken as the report wrote them (`gjkcli.pipeline.poses`): a re-run with a few
poses new decodes and writes again only those, as `gjkcli.report.patch` does for a GLB's moved
parts.

A pair's line depends on its pose only by its `"waypoint"`, last on the line, and on the run by
the objects' records (whether an object is taken for convex, which a hull answer's note says)
and options that the cache's key holds. So each kept pose's lines are kept without their
waypoint, with the facts the report's order and summary need (`made`), under the objects taken
for convex they were written with; the run's Findings hold the other poses' findings, and
`spliced` writes the report of both: the lines in the report's order (status, pose, names),
the summary counted with the kept lines.

A line's facts (one byte): its severity (`gjkcli.pipeline.findings.SEVERITY`, bits 0 to 2), a
violation (bit 3), failing the run (bit 4), answered on the triangles (bit 5, else the hulls),
a collision without its depth (bit 6).
"""
from __future__ import annotations

import numpy as np

from gjkcli.engine.results import Status
from gjkcli.pipeline.findings import EXIT_OK, EXIT_VIOLATION, SEVERITY
from gjkcli.report.jsonout import Encoded, document, dumped_chunks, encode_row, pair_dict

__all__ = ["PoseLines"]

_VIOLATION, _FAILS, _EXACT, _DEPTHLESS = 8, 16, 32, 64


class PoseLines:
    """What a poses run (`gjkcli.pipeline.run.Options.pose_lines`) tells its JSON report of
    the kept poses whose findings it did not decode: `take` the run, `spliced` the report.

    involved : the objects of the kept lines' pairs (the records give them a convexity
        reason); depthless : a kept collision has no depth (the run's note says why);
    used : some kept lines are the report's (the run's Findings then lack those findings:
        only `spliced` writes its report)."""

    def __init__(self):
        self.involved: set = set()
        self.depthless = False
        self.used = False
        self._poses = 0
        self._kept: list = []  # per pack: (lines' arrays, line numbers, their poses)
        self._fresh: dict = {}  # pose -> (lines, facts) of the new poses' findings (`made`)

    def made(self, pairs, found, pose: int, at: dict):
        """([line], [facts], [(a, b)]) of the findings `pairs` of pose `pose` (a row of the
        table): each pair's line as the report writes it without its waypoint, in the report's
        order; found : the pose's Findings (its objects' records); at : {object name: its
        record's number}. None for a finding the report does not write this way (allowed,
        known, of a motion, answered otherwise than on hulls or triangles)."""
        lines, facts, objs = [], [], []
        tail = b',"waypoint":%d}' % pose
        for p in sorted(pairs, key=lambda p: (SEVERITY[p.status], p.a, p.b)):
            a, b = at.get(p.a), at.get(p.b)
            if p.allowed or p.known or p.segment is not None or p.waypoint != pose or a is None or b is None \
                    or p.mode not in ("hull", "exact") or p.time_from_start is not None:
                return None
            line = encode_row(pair_dict(p, found, False, False))
            if not line.endswith(tail):
                return None
            lines.append(line[:-len(tail)])
            facts.append(SEVERITY[p.status] | _VIOLATION * bool(p.violation) | _FAILS * bool(p.fails)
                         | _EXACT * (p.mode == "exact")
                         | _DEPTHLESS * (p.status is Status.COLLISION and p.result.depth is None))
            objs.append((a, b))
        self._fresh[pose] = (lines, facts)  # the report takes them too
        return lines, facts, objs

    def take(self, spliced: list, arrays: list, poses: int, names: list) -> None:
        """The kept poses whose lines the report takes: spliced [(pose, pack, first line,
        end)], arrays : per pack its lines' arrays (`gjkcli.pipeline.poses`); poses : the
        table's rows; names : the objects' records' names, in order."""
        self.used, self._poses = True, poses
        got = np.array(spliced, dtype=np.int64).reshape(-1, 4)
        for p in np.unique(got[:, 1]).tolist():
            s, lo, hi = got[got[:, 1] == p][:, [0, 2, 3]].T
            sizes = hi - lo
            number = np.repeat(lo - np.cumsum(sizes) + sizes, sizes) + np.arange(int(sizes.sum()))
            a = arrays[p]
            facts = a["lfacts"][number]
            self.depthless |= bool((facts & _DEPTHLESS).any())
            self.involved.update(names[k] for k in np.unique(a["lobj"][number]).tolist())
            self._kept.append((a, number, np.repeat(s, sizes)))

    def spliced(self, found) -> tuple[int, list] | None:
        """(exit code, the report's bytes in chunks) of the run's Findings `found` and the kept
        lines, as `jsonout.encoded(found)` writes a run that decoded every pose; None where it
        cannot (pairs that are not a poses run's)."""
        import dataclasses

        R = max(self._poses, 1)
        listed = found.listed
        if len(listed) != len(found.pairs) or any(p.waypoint is None or p.segment is not None or p.known
                                                  for p in listed):
            return None
        # the new poses' findings: their lines as `made` wrote them (to keep), the others' now
        fresh = self._fresh
        rest = tuple(p for p in listed if p.waypoint not in fresh)
        doc = document(dataclasses.replace(found, pairs=rest), False, False)
        rows = [encode_row(d) for d in doc["pairs"]]
        keys = [np.array([SEVERITY[p.status] * R + p.waypoint for p in rest], dtype=np.int64)]
        summary = doc["summary"]
        made = [(pose, line, f) for pose, (lines, facts) in fresh.items() for line, f in zip(lines, facts)]
        rows += [line + b',"waypoint":%d}' % pose for pose, line, _ in made]
        kinds = [(np.array([f for _, _, f in made], dtype=np.uint8), np.array([pose for pose, _, _ in made],
                                                                              dtype=np.int64))]
        for a, number, pose in self._kept:
            blob = memoryview(a["lines"])  # each line copied once, with its waypoint
            start = a["lstart"]
            ends = start[number + 1].tolist()
            rows += [b'%b,"waypoint":%d}' % (blob[lo:hi], s)
                     for lo, hi, s in zip(start[number].tolist(), ends, pose.tolist())]
            kinds.append((a["lfacts"][number], pose))
        for facts, pose in kinds:
            keys.append((facts & 7).astype(np.int64) * R + pose)
            exact = int(np.count_nonzero(facts & _EXACT))
            summary["violations"] += int(np.count_nonzero(facts & _VIOLATION))
            summary["failures"] += int(np.count_nonzero(facts & _FAILS))
            summary["exact"] = summary.get("exact", 0) + exact
            summary["hull"] = summary.get("hull", 0) + len(facts) - exact
        if summary["failures"] and summary["exit_code"] == EXIT_OK:
            summary["exit_code"] = EXIT_VIOLATION
        order = np.argsort(np.concatenate(keys), kind="stable")
        if rows:  # one piece: the lines joined once, written and kept as they are
            doc["pairs"] = Encoded([b",\n    ".join([rows[k] for k in order.tolist()])])
        return summary["exit_code"], dumped_chunks(doc)
