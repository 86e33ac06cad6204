"""A robot alone at many poses (`gjk scan robot.urdf --poses FILE.csv`, and the waypoints of
`--trajectory`), on geometry prepared once: MoveIt's `CollisionEnv` checks a `RobotState`
against geometry built when the model loaded; so does this.

Prepared once: each collision element's hull, hull gap and triangles in its link's frame (once
per distinct mesh: `gjkcli.pipeline.prepared`), and the pairs of elements of different links
that no rule allows. Per pose: forward kinematics (every pose at once), the element pairs' boxes
(`Prepared._near`, FCL's broad phase: a pair whose boxes lie apart beyond its band is clear), the
others on the hulls in the engine's batch call (poses passed along, nothing moved in Python),
then the policy of the single-pose run (`gjkcli.pipeline.policy`) and the triangles where it asks
(`gjkcli.pipeline.pairs.exact_pair`, the run's own), findings per pair of links
(`gjkcli.pipeline.elements`).

The findings that can fail are the per-pose run's. What differs, for speed (a planner's
thousands of waypoints): the allowed pairs (adjacent links, the SRDF), which never fail, are not
checked, as MoveIt's collision checks skip what its matrix allows, and a note counts them (the
per-pose run lists each at each pose); every other pair of links is counted as checked at every
pose (the box test only answers clear early: the counts are per link pair); overlap volumes are not computed (one boolean per
colliding pair costs more than the pose); a collision where surfaces cross beyond the band
is proved by the first point found deeper than the band inside the other part and not measured
further (the search for the deepest point costs many times the verdict; `exact_query`'s
`depth=False`), so its depth is null and the note DEPTH_NOTE says why; object
records are the first pose's.
"""
from __future__ import annotations

import dataclasses
import itertools
import time

import numpy as np

from gjkcli import extras
from gjkcli.engine.results import Status
from gjkcli.pipeline import elements, policy
from gjkcli.pipeline.findings import SEVERITY, Finding, Findings, ObjectRecord, severity_key, violates
from gjkcli.pipeline.pairs import exact_pair, part_mesh, primitive_note, with_part_certificate
from gjkcli.scene.urdf import PoseRows

__all__ = ["Prepared", "Unprepared", "applies", "prepared_elements", "DEPTH_NOTE"]

# Overlap volumes are not computed at many poses: a boolean per colliding pair and pose costs more
# than the pose.
OVERLAP_REASON = "not computed at many poses (--joints: one pose, with it)"
# The run's note when collisions were left without their depth.
DEPTH_NOTE = ("collision depths not measured at many poses (the verdicts are proved without them); "
              "--joints checks one pose with them")
# Poses per engine call: the rows of one call are this times the element pairs.
CHUNK = 1000
# The cache keeps a robot's answers per pose (`Prepared._kept_rows`) in entries keyed by the
# robot (its kinematics and collision elements) and the options: each pose's joint values, and
# the findings of those that have any as data, and as the lines of a JSON report
# (`gjkcli.report.poselines`). A pose without findings (most of a sampled set, all of a valid
# plan) costs a look-up of its values to take back, no forward kinematics; one with findings,
# reading them (a JSON report: splicing its lines in). The entries hold the latest run's poses
# and then those of the runs before, up to this many (a 100,000-pose table of the Panda, one
# pose in six colliding: about 100 MB, of which the lines about 40: benchmarks/bench_cache_poses.py).
POSES_KEPT = 200_000
# A robot's poses are kept in up to this many packs (one a run that computed new poses) before
# they are merged into one.
POSE_PACKS = 8
# The kind of a pack's data entry (its index is a "poses" entry).
DATA_KIND = "posedata"


def applies(options, manifest, sources) -> bool:
    """The run is one robot and nothing else, with no option the prepared path does not take
    (the per-pose run answers the others)."""
    return (manifest is None and len(sources) == 1 and sources[0].robot is not None
            and not options.trace and options.baseline is None and options.write_baseline is None
            and not options.all_pairs and not options.show_allowed and options.clearance is None
            and options.mode in policy.MODES)


def prepared_elements(robot, local) -> tuple[list, np.ndarray, list]:
    """(shapes, gaps (E,), meshes) of a robot's collision elements in their links' frames: a mesh
    element's hull, hull gap and triangles from its Geometry (`gjkcli.pipeline.prepared`: once
    per distinct content, all in one go), a primitive as it is (gap 0; a box's 12 triangles, as
    a pose's run). local : `gjkcli.scene.urdf.local_meshes(robot)`. Raises ShapeError for a mesh
    that makes no hull."""
    from gjkcli.errors import ShapeError
    from gjkcli.pipeline.prepared import geometry, prepare
    from gjkcli.scene import urdf

    E = len(robot.collisions)
    shapes: list = [None] * E
    meshes: list = [None] * E
    gaps = np.zeros(E)
    geometries = {k: geometry(m[0], m[1]) for k, m in enumerate(local) if m is not None}
    prepare(geometries.values())
    for k, c in enumerate(robot.collisions):
        g = geometries.get(k)
        if g is None:
            shapes[k] = urdf.primitive(c, np.eye(4))
            meshes[k] = part_mesh(shapes[k], name=c.name)
            continue
        if g.error is not None:
            raise ShapeError(str(g.error))
        shapes[k], gaps[k] = g.hull, g.gap
        meshes[k] = g.mesh(name=c.name, watertight=local[k][2])
    return shapes, gaps, meshes


class Unprepared(Exception):
    """An element the prepared path cannot take (unusable geometry): the per-pose run reports it."""


class Prepared:
    """A robot's collision elements, prepared once, checked at any number of poses."""

    def __init__(self, source, srdf, options):
        from gjkcli.engine.shapes import ShapeSet
        from gjkcli.errors import ShapeError
        from gjkcli.scene import urdf
        from gjkcli.scene.manifest import match_link
        from gjkcli.tolerances import touching_tolerance
        from gjkcli.units import canonical

        robot = self.robot = source.robot
        self.source = source
        self.options = options
        self.transform = np.eye(4) if source.transform is None else np.asarray(source.transform)
        local = urdf.local_meshes(robot)
        try:
            shapes, self.gap, self.meshes = prepared_elements(robot, local)
        except ShapeError as exc:  # the per-pose run reports it
            raise Unprepared(str(exc)) from None
        E = len(robot.collisions)
        self.local = local
        self.shapes = ShapeSet(shapes)
        self.shape_list = shapes
        self.names = urdf.object_names(robot, source.prefix)
        self.owners = urdf.link_names(robot, source.prefix)
        self.meshed = np.array([m is not None for m in self.meshes], dtype=bool)
        index = {name: k for k, name in enumerate(robot.links)}
        self.link_index = np.array([index[c.link] for c in robot.collisions], dtype=np.int64)
        links = [c.link for c in robot.collisions]
        ia, ib = np.triu_indices(E, 1)
        keep = np.array([links[a] != links[b] for a, b in zip(ia, ib)], dtype=bool)
        self.ia, self.ib = ia[keep], ib[keep]
        # the allowed pairs (adjacent links, the SRDF) never fail: not checked, but counted
        allowed = np.zeros(len(self.ia), dtype=bool)
        for spec in urdf.allowed_pairs(robot, srdf, source.prefix):
            in_a, in_b = match_link(spec.a, self.names), match_link(spec.b, self.names)
            allowed |= (in_a[self.ia] & in_b[self.ib]) | (in_b[self.ia] & in_a[self.ib])
        self.owner_ids = elements.owner_ids(self.owners)
        self.allowed_links = elements.object_pairs(self.owner_ids, self.ia[allowed], self.ib[allowed])
        self.ia, self.ib = self.ia[~allowed], self.ib[~allowed]
        units = [canonical(m[4]) for m in local if m is not None and m[4]]
        if len(set(units)) > 1:  # files in several units (or one gjk does not know): the run converts
            raise Unprepared(f"meshes in several units: {sorted(map(str, set(units)))}")
        self.units = next((u for u in units if u is not None), None)
        self.link_pairs = elements.object_pairs(self.owner_ids, self.ia, self.ib)
        # each element's box in its link's frame, and per pair the margin the box test keeps
        # (twice the largest touching band the pair can have, and rounding)
        bounds = np.array([s.bounds for s in shapes]).reshape(E, 2, 3)
        self.box_centre = 0.5 * (bounds[:, 0] + bounds[:, 1])
        self.box_half = 0.5 * (bounds[:, 1] - bounds[:, 0])
        size = np.array([s.size for s in shapes])
        self.margin = 2.0 * np.array([touching_tolerance(x, options.tolerance)
                                      for x in (size[self.ia] + size[self.ib]).tolist()])
        self.owned = {n: o for n, o in zip(self.names, self.owners) if n != o}

    def frames(self, q: np.ndarray) -> np.ndarray:
        """(n, E, 4, 4) the elements' link frames in the world for poses (n, d)."""
        return (self.transform @ self.robot.fk(q))[:, self.link_index]

    def runs(self, Q: np.ndarray) -> list[Findings]:
        """One Findings per pose of Q (n, d), as the per-pose run reports it; the object records
        are made once, at the first pose (a report of many poses keeps the first pose's), with
        a convexity reason for the objects of any finding, as a run gives its listed pairs'."""
        import gc

        from gjkcli.collector import no_gc

        with no_gc():  # thousands of findings made and all kept: collections would walk them again and again
            out = self._runs(Q)
            # and the first collection after would walk all of them once more: in the command's
            # process they live until the report is written, out of the collector's sight
            # (refcounts still free them); a library's caller keeps its collector as it was
            if extras.freeze_imports:
                gc.freeze()
        return out

    def _runs(self, Q) -> list[Findings]:
        o = self.options
        rows: list = []
        lines = getattr(o, "pose_lines", None)  # a JSON report's lines kept per pose (`_kept_rows`)
        pending = None
        if getattr(o, "cache", None) is not None and not o.trace and len(Q):
            rows, pending = self._kept_rows(Q, lines)
        else:
            if isinstance(Q, PoseRows):
                Q = Q.values()
            for start in range(0, len(Q), CHUNK):
                rows.extend(self._chunk(Q[start: start + CHUNK], start))
        if not rows:
            return []
        distinct = dict(zip(map(id, rows), rows))  # most rows are shared: every pose without findings one
        involved = {n for pairs, *_ in distinct.values() for p in pairs for n in (p.a, p.b)}
        if lines is not None:
            involved |= lines.involved
        first = Q.values([0]) if isinstance(Q, PoseRows) else Q[:1]
        F = self.frames(first)[0]
        records = self.records(first, involved)
        index = {r.name: k for k, r in enumerate(records)}

        def geometry(name: str):  # an object's triangles at the first pose, for pictures
            return elements.merged_triangles(lambda e: self._world(e, F), self._members(name))

        version = _version()
        made: dict = {}  # one Findings a distinct row
        for key, (pairs, counts, checked, share) in distinct.items():
            made[key] = Findings(
                command="scan", pairs=pairs, counts=dict(counts), checked=checked,
                candidates=len(self.ia), requested=o.mode, tolerance=o.tolerance, clearance=None,
                fail_on=o.fail_on, units=self.units, timings=dict(share),
                elapsed=sum(share.values()), version=version, objects=records, _index=index,
                geometry=geometry)
        out = list(map(made.__getitem__, map(id, rows)))
        if pending is not None:  # the new poses kept, with their report lines when asked
            kept, keys, todo = pending
            if lines is not None and [bool(r.convex) for r in records] != kept.flags:
                lines = None  # not the flags the packs were read for (`convex_flags`): no lines
            kept.write(o.cache, keys, self._new_items(keys, todo, rows, out, lines, records))
        return out

    def _new_items(self, keys, todo, rows, found, lines, records) -> dict:
        """{joint values' bytes: None (no findings) or `_Item`} of the new poses `todo`: their
        findings' data and, with `lines` (a `gjkcli.report.poselines.PoseLines`), their report
        lines."""
        from gjkcli.pipeline.cache import to_data

        clear = {**{st.value: 0 for st in Status}, Status.CLEAR.value: self.link_pairs}
        at = {r.name: k for k, r in enumerate(records)}
        new = {}
        for s in todo.tolist():
            pairs, counts, checked = rows[s][:3]
            if pairs == () and counts == clear and checked == self.link_pairs:  # kept as clear
                new[keys[s]] = None
                continue
            made = None if lines is None else lines.made(pairs, found[s], s, at)
            # with its report lines, a pose's findings are not kept as data too: a run that
            # decodes them (another format, other objects taken for convex) computes it again
            new[keys[s]] = _Item(b"" if made is not None else _dumps(to_data(rows[s][:3])), made)
        return new

    def convex_flags(self, first: np.ndarray) -> list:
        """Per object record at the pose `first` (1, d), whether it is taken for convex: what
        a hull answer's note reads of it (`gjkcli.pipeline.findings.hull_note`), the same
        whichever objects have findings."""
        return [bool(r.convex) for r in self.records(first, ())]

    def records(self, first: np.ndarray, involved) -> tuple:
        """The objects' records at the pose `first` (1, d), with a convexity reason for the
        objects named in `involved` (those of findings): what `runs` gives every pose's
        Findings, and a cluster's pose chunks (`gjkcli.pipeline.distributed.pose_runs`) once
        for all of them."""
        F = self.frames(first)[0]
        return tuple(self._record(name, F, name in involved) for name in dict.fromkeys(self.owners))

    def _world(self, e: int, F: np.ndarray):
        """Element e's ((n, 3) world vertices, faces) at link frames F (E, 4, 4); None for a
        curved primitive."""
        from gjkcli.pipeline.pairs import box_triangles

        got = (self.local[e][0], self.local[e][1]) if self.local[e] is not None \
            else box_triangles(self.shape_list[e])
        if got is None:
            return None
        return got[0] @ F[e, :3, :3].T + F[e, :3, 3], got[1]

    def _near(self, F: np.ndarray) -> np.ndarray:
        from gjkcli.tolerances import DEFAULT

        """(n, P) bool: the element pairs whose boxes, at link frames F (n, E, 4, 4), come within
        the pairs' margin of each other. The others are clear: their hulls lie inside their
        boxes, farther apart than any touching band of the pair (FCL's and Bullet's broad phase)."""
        R, t = F[:, :, :3, :3], F[:, :, :3, 3]
        centre = np.einsum("neij,ej->nei", R, self.box_centre) + t
        half = np.einsum("neij,ej->nei", np.abs(R), self.box_half)
        apart = np.abs(centre[:, self.ia] - centre[:, self.ib]) - half[:, self.ia] - half[:, self.ib]
        gap = apart.max(axis=2)
        # the rounding of the boxes must not drop a touching pair (as the scan's broad phase)
        pad = DEFAULT.bounds_pad_rel * float(np.abs(centre).max() + half.max()) if centre.size else 0.0
        return gap <= self.margin + pad

    def _kept_rows(self, Q, lines=None) -> tuple[list, tuple | None]:
        """(`_chunk`'s rows for the poses of Q, what to keep): those of poses seen before (the
        same robot, elements, options and joint values: `gjkcli.pipeline.cache`'s "poses"
        entries of this robot) taken from the cache, the others computed (only they reach
        forward kinematics); what to keep: (the packs read, every pose's key, the new poses'
        rows), which `_runs` writes as a pack of their own once the objects' records are known,
        or None.

        lines : a `gjkcli.report.poselines.PoseLines`, or None. With it, a kept pose whose
        report lines the cache holds (made with the same objects taken for convex) is not
        decoded: its row holds no findings but its counts, and `lines` where its lines are,
        which the report splices in (`gjkcli.report.poselines`).

        Q : (n, d) poses, or a CSV table's `PoseRows`: then a pose's key is its row's text,
        and only the rows not kept are read into values (the entries' key holds the header
        and the robot's limits, which the rows read before were checked against)."""
        from gjkcli.pipeline.cache import CacheError, from_data

        o = self.options
        cache = o.cache
        table = Q if isinstance(Q, PoseRows) else None
        first = table.values([0]) if table is not None else Q[:1]
        flags = self.convex_flags(first) if lines is not None else None
        kept = _KeptPoses.read(cache, self._cache_key(None if table is None else table.header), self.robot.dof,
                               flags, text=table is not None)
        if table is not None:
            keys = table.lines
        else:  # a pose's key within its robot's entries: its joint values' bytes (the entries'
            # key holds the robot, its kinematics and the options)
            Q = np.ascontiguousarray(Q, dtype=np.float64)
            raw, width = Q.tobytes(), 8 * Q.shape[1]
            keys = [raw[width * s: width * s + width] for s in range(len(Q))]
        zero = {"forward kinematics": 0.0, "narrow": 0.0, "refine": 0.0}
        clear = ((), {**{st.value: 0 for st in Status}, Status.CLEAR.value: self.link_pairs}, self.link_pairs, zero)
        index = kept.index
        # each pose's place in the packs: -2 not kept, -1 kept without findings (every pair of
        # objects clear), else where its findings are (`_KeptPoses.found`)
        at = np.fromiter(map(index.get, keys, itertools.repeat(-2)), dtype=np.int64, count=len(keys))
        rows: list = list(map({-1: clear}.get, at.tolist()))
        has = np.flatnonzero(at >= 0)
        spliced = np.zeros((0, 4), dtype=np.int64)  # (pose, pack, first line, end) of the poses whose lines are taken
        if lines is not None and len(has):
            ok, pack, lo, hi, c = kept.lines_at(at[has])
            taken = has[ok]
            spliced = np.stack([taken, pack[ok], lo[ok], hi[ok]], axis=1)
            # the poses with spliced lines share a row per count of their lines' statuses
            distinct, which = np.unique(c[ok], axis=0, return_inverse=True)
            statuses = [s.value for s in sorted(Status, key=SEVERITY.get)]
            shared = []
            for got in distinct.tolist():
                counts = {st.value: 0 for st in Status}
                for code, n in enumerate(got):
                    counts[statuses[code]] += n
                counts[Status.CLEAR.value] += self.link_pairs - sum(got)
                shared.append(((), counts, self.link_pairs, zero))
            for s, k in zip(taken.tolist(), which.ravel().tolist()):
                rows[s] = shared[k]
            has = has[~ok]
        for s in has.tolist():  # decoded
            data = kept.found(int(at[s]), cache)
            if not data:  # kept as report lines alone, or its pack's data not believed: computed again
                continue
            try:
                pairs, counts, checked = from_data(_loads(data))
                rows[s] = (tuple(p.but(waypoint=s) for p in pairs), counts, checked, zero)
            except (CacheError, TypeError, ValueError) as e:
                cache.notes.append(f"cache: ignored a pose's answers: {e}")
        if lines is not None and len(spliced):
            lines.take(spliced, kept.line_arrays, len(Q), list(dict.fromkeys(self.owners)))
        todo = np.array([s for s, row in enumerate(rows) if row is None], dtype=np.int64)
        values = table.values(todo) if table is not None else Q[todo]  # a bad row raises here
        for start in range(0, len(todo), CHUNK):
            chosen = todo[start: start + CHUNK]
            for s, row in zip(chosen.tolist(), self._chunk(values[start: start + CHUNK], chosen)):
                rows[s] = row
        return rows, ((kept, keys, todo) if len(todo) else None)

    def _cache_key(self, header=None) -> bytes:
        """A digest of what a pose's answers depend on besides its joint values: the robot's
        kinematics (its joints and links, where the robot stands), its collision elements
        (hulls, triangles, names, which pairs are checked) and the options that change a
        verdict (`gjkcli.pipeline.cache.prefix`: gjk's version and code too). With a pose
        table's `header` (its poses keyed by their rows' text), that header and the limits
        and default pose its rows were read with too."""
        from gjkcli.digests import blake2b
        from gjkcli.pipeline.cache import prefix

        h = blake2b(prefix(), digest_size=20)
        o = self.options
        robot = self.robot
        h.update(repr((self.names, self.owners, self.source.shown, self.units, o.mode, o.tolerance, o.fail_on,
                       self.link_index.tolist(), self.ia.tolist(), self.ib.tolist(), robot.links,
                       robot.variables)).encode())
        for j in robot.joints:  # what `Robot.fk` reads (not the line a joint is on)
            h.update(repr((j.name, j.kind, j.parent, j.child, j.mimic)).encode())
            for a in (j.origin, j.axis):
                h.update(np.ascontiguousarray(a, dtype=np.float64))
        h.update(np.ascontiguousarray(self.transform, dtype=np.float64))
        if header is not None:
            h.update(repr(("rows", header)).encode())
            for a in (robot.lower, robot.upper, robot.default_pose()):
                h.update(np.ascontiguousarray(a, dtype=np.float64))
        for shape, local in zip(self.shape_list, self.local):
            h.update(repr((shape.kind, shape.radius)).encode())
            for a in (shape.vertices, shape.dims, shape.rotation, shape.translation):
                h.update(np.ascontiguousarray(a, dtype=np.float64))
            if local is not None:
                h.update(repr(local[2:]).encode())
                h.update(np.ascontiguousarray(local[0], dtype=np.float64))
                h.update(np.ascontiguousarray(local[1], dtype=np.int64))
        return h.digest()

    def _chunk(self, Q: np.ndarray, first) -> list[tuple]:
        """Per pose of Q (n, d): (its findings, counts, pairs of objects checked, timings); the
        findings carry their pose's row (`waypoint`), `first` the row of Q[0] (or the rows of
        all, an array)."""
        from gjkcli.engine.query import batch
        from gjkcli.engine.results import STATUS_CODES

        o = self.options
        t0 = time.perf_counter()
        n, P = len(Q), len(self.ia)
        F = self.frames(Q)
        near = np.flatnonzero(self._near(F).ravel())  # (pose, pair) rows, pose-major
        pose, pair = np.divmod(near, max(P, 1))
        ea, eb = self.ia[pair], self.ib[pair]
        t1 = time.perf_counter()
        got = batch(self.shapes, ea, eb, pose_a=F[pose, ea], pose_b=F[pose, eb], tolerance=o.tolerance,
                    want="verdict")
        t2 = time.perf_counter()
        code = {c: s.value for c, s in STATUS_CODES.items()}
        status = np.array([code[c] for c in range(max(code) + 1)], dtype=object)[got.status]
        hull_clear = status == Status.CLEAR.value
        coincident = policy.coincide(self.gap[ea], self.gap[eb], got.tolerance)
        listed = ~hull_clear
        # a side with triangles at least, as the run: a curved primitive against them
        refine = policy.needs_triangles(o.mode, hull_clear, coincident, listed,
                                        self.meshed[ea] | self.meshed[eb])
        conservative = policy.conservative(~refine, coincident)
        by_pose: dict = {}
        for k in np.flatnonzero(listed).tolist():
            s, a, b = int(pose[k]), int(ea[k]), int(eb[k])
            if refine[k]:
                r = exact_pair(self.meshes[a], self.shape_list[a], self.meshes[b], self.shape_list[b],
                               pose_a=F[s, a], pose_b=F[s, b], tolerance=float(got.tolerance[k]),
                               depth=False)  # the verdict, proved, without the depth search
                result, mode = with_part_certificate(r), "exact"
                if result.status is Status.CLEAR:
                    continue  # the hulls meet, the parts do not: not a finding
            else:
                result, mode = got.result(k), "hull"
                if result.status.value != status[k]:
                    result = dataclasses.replace(result, status=Status(status[k]))
            note = getattr(result, "note", None) or primitive_note(self.names, self.meshed, a, b,
                                                                   bool(conservative[k]))
            by_pose.setdefault(s, []).append(Finding(
                a=self.names[a], b=self.names[b], result=result, mode=mode, requested=o.mode,
                conservative=bool(conservative[k]), violation=violates(result.status, None, o.fail_on),
                file_a=self.source.shown,
                file_b=self.source.shown, note=note, waypoint=first + s if isinstance(first, int) else int(first[s]),
                overlap_reason=OVERLAP_REASON if result.status is Status.COLLISION else None))
        t3 = time.perf_counter()
        share = {"forward kinematics": (t1 - t0) / n, "narrow": (t2 - t1) / n, "refine": (t3 - t2) / n}
        ids = self.owner_ids
        # a pose without findings: every pair of objects clear
        clear = ((), {**{st.value: 0 for st in Status}, Status.CLEAR.value: self.link_pairs},
                 self.link_pairs, share)
        out = []
        for s in range(n):
            if s not in by_pose:
                out.append(clear)
                continue
            pairs = sorted(by_pose[s], key=severity_key)
            pairs, counts, checked = elements.by_object(pairs, self.owned, ids, self.ia, self.ib,
                                                        objects_checked=self.link_pairs)
            out.append((tuple(pairs), counts, checked, share))
        return out

    def _members(self, name: str) -> list:
        return [e for e, (n, o) in enumerate(zip(self.names, self.owners)) if o == name or n == name]

    def _record(self, name: str, F: np.ndarray, reason: bool) -> ObjectRecord:
        """Object `name`'s record at link frames F (E, 4, 4); its convexity reason when asked."""
        from gjkcli.mesh.convexity import part_verdicts
        from gjkcli.tolerances import DEFAULT

        records = []
        for e in self._members(name):
            shape = self.shape_list[e].moved(F[e])
            lo, hi = shape.bounds
            size = float(np.linalg.norm(np.asarray(hi) - np.asarray(lo)))
            if self.local[e] is None:
                convex, why, V, faces = True, "a primitive", 0, 0
            else:
                V, fc, watertight, bodies, _ = self.local[e]
                decided, reasons = part_verdicts(self.gap[e:e + 1], np.array([DEFAULT.touching_rel * size]),
                                                 [0] if reason else [], [V], [fc], [watertight], [bodies])
                convex, why, V, faces = decided[0], reasons[0], len(V), len(fc)
            m = self.local[e]
            records.append(ObjectRecord(
                name=self.names[e], file=self.source.shown, vertices=V, faces=faces,
                hull_vertices=int(shape.n_vertices), convex=convex,
                watertight=True if m is None else m[2], bounds=(tuple(map(float, lo)), tuple(map(float, hi))),
                units=None if m is None else m[4], bodies=1 if m is None else m[3],
                dimension=int(shape.dimension), primitive=shape.kind if m is None else None,
                convexity=why, hull_gap=None if m is None else float(self.gap[e])))
        if len(records) == 1 and records[0].name == name:
            return records[0]
        return elements.merged_records(records, {r.name: name for r in records})[0]


def _version() -> str:
    from gjkcli import __version__

    return __version__


def _dumps(data) -> bytes:
    """JSON text of `data` that `_loads` gives back equal: orjson's (twice as fast), checked by
    reading it back; else Python's json, after a space that tells `_loads` so (NaN and
    infinities, which orjson writes as null and does not read; integers past 64 bits, which
    orjson does not write and reads as floats)."""
    import json

    import orjson

    try:
        text = orjson.dumps(data)
        if orjson.loads(text) == data:
            return text
    except TypeError:  # orjson.JSONEncodeError is one
        pass
    return b" " + json.dumps(data, separators=(",", ":")).encode()


def _loads(text: bytes):
    """The data of `_dumps`'s text."""
    import json

    import orjson

    return json.loads(text) if text[:1] == b" " else orjson.loads(text)


class _Item:
    """A kept pose with findings: the JSON text of its findings' data (`_dumps` of
    `gjkcli.pipeline.cache.to_data`), b"" where its report lines stand for it, and its report
    lines or None (`PoseLines.made` of `gjkcli.report.poselines`: ([line], [facts], [(a, b)]))."""

    __slots__ = ("data", "lines")

    def __init__(self, data: bytes, lines):
        self.data, self.lines = data, lines


# the arrays of a pack's report lines: every line's bytes one after another, where each starts
# (L + 1,), its facts (`gjkcli.report.poselines`) and objects (L, 2), where each pose's lines
# start (m + 1,) and whether a pose has them (m,)
_LINE_ARRAYS = ("lines", "lstart", "lfacts", "lobj", "pline", "pok")


class _KeptPoses:
    """A robot's "poses" entries: packs, each the poses one run computed (the first free of
    POSE_PACKS slots, so that a run writes what is new and nothing else), merged into one when
    the slots are full or they hold more than POSES_KEPT poses. `index` maps a pose's joint
    values (their float64 bytes; a CSV table's row text, `PoseRows`) to -1 (no findings) or to
    where its findings' data (JSON text of `gjkcli.pipeline.cache.to_data`, or b"" where its
    report lines stand for it) is, which `found` gives. A pack is two entries: its index, q (n,
    d) float64 (or rows, the rows' text a line each) and at (n,) int64 (-1 or the data's
    number), with the poses' report
    lines (`_LINE_ARRAYS`, which hold for the objects taken for convex that the header's
    "convex" lists); and its data, data (bytes of every pose's data one after another) and
    offsets (m + 1,) int64, read only when a pose's findings are decoded (a JSON report takes
    the lines), under the token of its index's header."""

    def __init__(self, robot: bytes):
        self.robot = robot
        self.index: dict = {}  # joint values' bytes (or a row's text) -> (pack, at) packed as one int
        self.packs: list = []  # [slot, (data, offsets) or None until read, token, m] of the packs read
        self.line_arrays: list = []  # per pack read: its lines' arrays (a dict), or None
        self._lines: list = []  # per pack read: its arrays pline, pok and severity counts (m, 5), or None
        self.free: list = []  # the slots no pack is in
        self.count = 0  # the poses the packs hold (one pose in two packs counted twice)
        self.flags = None  # the objects taken for convex of the lines asked for
        self.text = False  # poses keyed by their table rows' text (`PoseRows`), not their values

    @staticmethod
    def entry(robot: bytes, slot: int, part: bytes = b"poses") -> str:
        """The key of a pack's index (part b"poses") or data (b"data")."""
        from gjkcli.pipeline.cache import pair_key

        return pair_key(part, robot, b"%d" % slot)

    @classmethod
    def read(cls, cache, robot: bytes, dof: int, flags=None, text: bool = False) -> "_KeptPoses":
        """The packs of `robot` (`Prepared._cache_key`) for poses of `dof` joint values (with
        `text`, poses keyed by their table rows' text); a pack that is not believed is a miss,
        with a note. flags : the objects taken for convex (`Prepared.convex_flags`) of the
        report lines asked for, or None (none asked)."""
        kept = cls(robot)
        kept.flags, kept.text = flags, text
        for slot in range(POSE_PACKS):
            entry = cls.entry(robot, slot)
            got = cache.get("poses", entry)
            if got is None:
                kept.free.append(slot)
                continue
            header, arrays = got
            try:
                held = "rows" if text else "q"
                if not all(name in arrays for name in (held, "at")) or not isinstance(header, dict) \
                        or not isinstance(header.get("data"), int) or not isinstance(header.get("token"), str):
                    raise ValueError("it lacks arrays")
                at, m = arrays["at"], header["data"]
                if text:  # the rows' text, one a line
                    if arrays["rows"].dtype != np.uint8:
                        raise ValueError("its arrays do not fit one another")
                    rows = arrays["rows"].tobytes().decode()
                    keys = rows.split("\n") if rows else []
                    n = len(keys)
                else:
                    q = arrays["q"]
                    if q.dtype != np.float64 or q.ndim != 2 or q.shape[1] != dof:
                        raise ValueError("its arrays do not fit one another")
                    raw, width = q.tobytes(), 8 * dof
                    keys = (raw[width * k: width * k + width] for k in range(len(q)))
                    n = len(q)
                if at.shape != (n,) or at.dtype != np.int64 or (at >= m).any() or (at < -1).any():
                    raise ValueError("its arrays do not fit one another")
                lines = _pack_lines(header, arrays, m, flags)
            except ValueError as e:
                cache.notes.append(f"cache: ignored the entry {cache.path('poses', entry)}: {e}; its poses were "
                                   f"computed again")
                kept.free.append(slot)
                continue
            p = len(kept.packs)
            kept.packs.append([slot, None, header["token"], m])
            kept.line_arrays.append(None if lines is None else lines[0])
            kept._lines.append(None if lines is None else lines[1:])
            # a pose's place: -1 (no findings), else its data's number and its pack
            places = np.where(at < 0, -1, at * POSE_PACKS + p).tolist()
            kept.index.update(zip(keys, places))
            kept.count += len(places)
        return kept

    def found(self, at: int, cache) -> bytes | None:
        """The data of a pose whose `index` is `at` (not -1); b"" where its findings were kept
        as report lines alone; None when its pack's data entry is not believed (a note says
        so)."""
        n, p = divmod(at, POSE_PACKS)
        pack = self.packs[p]
        if pack[1] is None:
            pack[1] = self._data(cache, pack[0], pack[2], pack[3]) or False
        if pack[1] is False:
            return None
        data, offsets = pack[1]
        return data[int(offsets[n]): int(offsets[n + 1])].tobytes()

    def _data(self, cache, slot: int, token: str, m: int):
        """(data, offsets) of the pack in `slot` (its index's `token`, `m` poses with data), or
        None."""
        entry = self.entry(self.robot, slot, b"data")
        got = cache.get(DATA_KIND, entry)
        if got is None:
            why = "it is missing"
        else:
            header, arrays = got
            data, offsets = arrays.get("data"), arrays.get("offsets")
            if not isinstance(header, dict) or header.get("token") != token or data is None or offsets is None:
                why = "it is not its index's"
            elif data.dtype != np.uint8 or offsets.dtype != np.int64 or offsets.shape != (m + 1,) \
                    or offsets[0] != 0 or offsets[-1] != len(data) or (np.diff(offsets) < 0).any():
                why = "its arrays do not fit one another"
            else:
                return data, offsets
        cache.notes.append(f"cache: ignored the entry {cache.path(DATA_KIND, entry)}: {why}; its poses were "
                           f"computed again")
        return None

    def lines_of(self, at: int):
        """(pack, first line, end) of the report lines of a pose whose `index` is `at` (not
        -1), or None where its pack holds none for the objects taken for convex asked for."""
        n, p = divmod(at, POSE_PACKS)
        got = self._lines[p]
        if got is None or not got[1][n]:
            return None
        return p, int(got[0][n]), int(got[0][n + 1])

    def lines_at(self, at: np.ndarray) -> tuple:
        """`lines_of` of poses whose `index` is `at` (k,), each at least 0, as arrays: whether
        their pack holds their lines (k,) bool, their pack, first line and end (k,), and how
        many of their lines are of each severity (k, 5) (0 to 4, `SEVERITY`)."""
        n, pack = np.divmod(at, POSE_PACKS)
        ok = np.zeros(len(at), dtype=bool)
        lo, hi = np.zeros(len(at), dtype=np.int64), np.zeros(len(at), dtype=np.int64)
        counts = np.zeros((len(at), 5), dtype=np.int64)
        for p in np.unique(pack).tolist():
            if self._lines[p] is None:
                continue
            pline, pok, table = self._lines[p]
            mine = np.flatnonzero(pack == p)
            m = n[mine]
            ok[mine] = pok[m] != 0
            lo[mine], hi[mine], counts[mine] = pline[m], pline[m + 1], table[m]
        return ok, pack, lo, hi, counts

    def item(self, at: int, cache) -> "_Item | None":
        """The kept data and lines (those of the flags asked for) of a pose whose `index` is
        `at` (not -1); None where its data is not believed, or it has none and no lines of
        the flags asked for."""
        where = self.lines_of(at) if self.flags is not None else None
        lines = None
        if where is not None:
            p, lo, hi = where
            a = self.line_arrays[p]
            start = a["lstart"]
            blob = a["lines"]
            lines = ([blob[int(start[k]):int(start[k + 1])].tobytes() for k in range(lo, hi)],
                     a["lfacts"][lo:hi].tolist(), [tuple(x) for x in a["lobj"][lo:hi].tolist()])
        data = self.found(at, cache)
        return None if data is None or not data and lines is None else _Item(data, lines)

    def write(self, cache, keys: list, new: dict) -> None:
        """Keep this run's new poses (`new`: joint values' bytes -> their `_Item`, or None) as
        a pack in a free slot; with no slot free, or past POSES_KEPT poses kept, one pack of
        this run's poses (`keys`, in order) and then those kept before that it did not ask, up
        to POSES_KEPT, in slot 0 and the others removed."""
        if self.free and self.count + len(new) <= POSES_KEPT:
            self._put(cache, self.free[0], list(new), new)
            return
        order = list(dict.fromkeys(keys))
        seen = set(order)
        order += [k for k in self.index if k not in seen]
        self._put(cache, 0, order[:POSES_KEPT], new)
        for slot in range(1, POSE_PACKS):
            if slot not in self.free:
                for kind, part in (("poses", b"poses"), (DATA_KIND, b"data")):
                    try:
                        cache.path(kind, self.entry(self.robot, slot, part)).unlink()
                    except OSError:
                        pass

    def _put(self, cache, slot: int, order: list, new: dict) -> None:
        import os

        pieces, at, taken = [], np.full(len(order), -1, dtype=np.int64), []
        for n, k in enumerate(order):
            if k in new:
                item = new[k]
            elif self.index[k] < 0:
                item = None
            else:
                item = self.item(self.index[k], cache)
                if item is None:  # its data lost: not kept
                    continue
            taken.append(k)
            if item is not None:
                at[len(taken) - 1] = len(pieces)
                pieces.append(item)
        at = at[:len(taken)]
        sizes = [len(item.data) for item in pieces]
        offsets = np.concatenate([[0], np.cumsum(sizes, dtype=np.int64)]).astype(np.int64)
        token = os.urandom(12).hex()  # the data entry is this index's
        cache.put(DATA_KIND, self.entry(self.robot, slot, b"data"), {"token": token},
                  {"data": np.frombuffer(b"".join(item.data for item in pieces), dtype=np.uint8),
                   "offsets": offsets})
        if self.text:  # the rows' text (`PoseRows`), one a line
            arrays = {"rows": np.frombuffer("\n".join(taken).encode(), dtype=np.uint8), "at": at}
        else:
            q = np.frombuffer(b"".join(taken), dtype=np.float64)
            arrays = {"q": q.reshape(len(taken), -1) if len(taken) and len(taken[0]) else np.zeros((len(taken), 0)),
                      "at": at}
        header = {"poses": len(taken), "data": len(pieces), "token": token}
        if self.flags is not None:
            header["convex"] = list(self.flags)
            arrays.update(_line_arrays(pieces))
        cache.put("poses", self.entry(self.robot, slot), header, arrays)


def _line_arrays(pieces: list) -> dict:
    """`_LINE_ARRAYS` of the kept poses `pieces` (`_Item`s)."""
    lines, facts, objs, per = [], [], [], [0]
    ok = np.zeros(len(pieces), dtype=np.uint8)
    for n, item in enumerate(pieces):
        if item.lines is not None:
            ok[n] = 1
            lines.extend(item.lines[0])
            facts.extend(item.lines[1])
            objs.extend(item.lines[2])
        per.append(len(lines))
    return {"lines": np.frombuffer(b"".join(lines), dtype=np.uint8),
            "lstart": np.concatenate([[0], np.cumsum([len(x) for x in lines], dtype=np.int64)]).astype(np.int64),
            "lfacts": np.array(facts, dtype=np.uint8), "lobj": np.array(objs, dtype=np.int32).reshape(-1, 2),
            "pline": np.array(per, dtype=np.int64), "pok": ok}


def _pack_lines(header, arrays: dict, m: int, flags):
    """(the pack's line arrays, each pose's first line (m + 1,), whether it has lines (m,),
    how many of each pose's lines are of each severity (m, 5)), or None: no lines, or lines for
    other objects taken for convex. ValueError when its line arrays do not fit one another."""
    if flags is None or not isinstance(header, dict) or header.get("convex") != list(flags) \
            or not all(name in arrays for name in _LINE_ARRAYS):
        return None
    a = {name: arrays[name] for name in _LINE_ARRAYS}
    L = len(a["lfacts"])
    if a["lines"].dtype != np.uint8 or a["lstart"].dtype != np.int64 or a["lstart"].shape != (L + 1,) \
            or a["lfacts"].dtype != np.uint8 or a["lobj"].dtype != np.int32 or a["lobj"].shape != (L, 2) \
            or a["pline"].dtype != np.int64 or a["pline"].shape != (m + 1,) or a["pok"].shape != (m,) \
            or (L and (a["lstart"][0] != 0 or a["lstart"][-1] != len(a["lines"]) or (np.diff(a["lstart"]) < 0).any()
                       or (a["lfacts"] & 7 > 4).any() or (a["lobj"] < 0).any() or (a["lobj"] >= len(flags)).any())) \
            or a["pline"][0] != 0 or a["pline"][-1] != L or (np.diff(a["pline"]) < 0).any():
        raise ValueError("its lines do not fit one another")
    pline = a["pline"]
    pose = np.repeat(np.arange(m), np.diff(pline))
    table = np.bincount(pose * 5 + (a["lfacts"] & 7), minlength=5 * m).reshape(m, 5)
    return a, pline, a["pok"], table
