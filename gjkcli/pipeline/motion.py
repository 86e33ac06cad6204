"""A robot checked at many poses, and along a motion between them: `gjk scan robot.urdf --poses
FILE.csv` and `--trajectory FILE.csv`.

- **Poses**: the one run (`gjkcli.pipeline.stages.Run`) at each row of the table; every finding carries
  `waypoint` (the row, from 0), and the findings of all rows make one report.
- **Trajectory**: the waypoints as poses, and the straight joint-space motion between each two
  consecutive waypoints checked continuously by conservative advancement (Mirtich 1996; Schwarzer,
  Saha and Latombe 2005 for the motion bound of a linked chain): over a step dt of the segment's
  parameter t, no point of element e moves further than dt * M_e, with M_e = sum over the joints
  above it of |joint travel over the segment| x the element's reach from that joint's axis
  (`gjkcli.scene.urdf.motion_radii`). Only the joints above one element of a pair and not the
  other move them relative to each other (the joints above both move the two alike), so the pair's
  distance changes by at most dt * M_ab, M_ab the sum over those joints alone; a pair whose
  certified distance at t is d cannot touch before t + d / M_ab, so stepping by that never skips
  a contact (the joints of the whole chain once counted too took a wrist's pairs 20,000 steps
  past a graze). The distance is the
  hulls' lower bound where the hulls are apart, the triangles' where they meet (the Panda's links
  are not their hulls). A pair that comes within the contact band (`Tolerances.motion_contact_rel`
  x the robot's size) at t is a finding with `segment` and `t` (the first contact, never late);
  it is a collision when the parts are found overlapping just after, else touching.
- **Clearance** (`--clearance`, a `[[check]]`'s), between waypoints too: a pair that makes no
  contact but comes closer than its clearance c is a finding of status clearance. The same
  stepping towards c (by (d - c) / M_ab, at least band / M_ab) finds the first t where its
  measured distance is below c, passing over no pose closer than c less twice the band (the
  note gives that t); the search then goes on towards poses closer than the closest so far by
  CLOSEST_REL x c, and the finding is that closest pose (its t, distance and points).
"""
from __future__ import annotations

import collections
import dataclasses
import itertools
import time
from dataclasses import dataclass

import numpy as np

from gjkcli.engine.results import Status
from gjkcli.pipeline.findings import Finding, Findings, violates
from gjkcli.pipeline.poses import DEPTH_NOTE, Prepared, Unprepared
from gjkcli.pipeline.poses import applies as poses_applies

__all__ = ["scan_poses", "Motion", "segment_findings", "pose_scans"]

# Steps of one pair over one segment before it is reported undecided (a pair that stays within a
# hair of contact for a long stretch without touching).
MAX_STEPS = 20_000
# A pair closer than its clearance c on a motion is reported at its closest pose, found to within
# this fraction of c: the search steps towards a pose closer than the closest so far by that much
# (towards the closest itself, every step would be the band's: a Panda's hand 12,221 steps, 3.7 s)
CLOSEST_REL = 0.01


def scan_poses(paths, options, *, manifest, progress, trajectory: bool) -> Findings:
    """The run at every row of options.robot's pose table, merged; with `trajectory`, the
    motion between rows too."""
    from gjkcli.errors import InputError
    from gjkcli.pipeline.stages import scan_here
    from gjkcli.scene import trajectory as trajectory_files
    from gjkcli.scene import urdf
    from gjkcli.scene.objects import scene_sources

    started = time.perf_counter()
    ropts = options.robot
    table = ropts.trajectory if trajectory else ropts.poses
    probe_problems: list = []
    sources, _ = scene_sources(paths, None, options.split_bodies, probe_problems,
                               dataclasses.replace(ropts, poses=None, trajectory=None),
                               recurse=options.recurse)
    robots = [s for s in sources if s.robot is not None]
    if len(robots) != 1:
        if probe_problems:
            raise InputError(probe_problems[0].file, probe_problems[0].message)
        flag = "--trajectory" if trajectory else "--poses"
        raise InputError(table, f"{flag} needs exactly one URDF among the inputs, got {len(robots)}")
    robot = robots[0].robot
    if options.cache is not None:  # a kept report depends on the robot's meshes too
        from gjkcli.pipeline.cache import depend_on_robot

        depend_on_robot(options.cache, robot)
    # with the cache, a CSV table's rows are read into values as the run needs them (a re-run
    # reads only those it has not seen: `gjkcli.pipeline.poses`)
    read = trajectory_files.read_poses(robot, table, rows=options.cache is not None and options.dask is None
                                       and not trajectory)
    poses = read.poses
    runs = []
    if not probe_problems and poses_applies(options, manifest, sources):  # the robot alone: prepared once
        try:
            if options.dask is not None and len(poses) > 1:  # chunks of the poses on the cluster
                from gjkcli.pipeline.distributed import pose_runs

                got = pose_runs(options, robots[0], ropts.srdf, _run_options(options), poses)
                if got is None:
                    raise Unprepared("on the cluster")
                runs, allowed = got
            else:
                prepared = Prepared(robots[0], ropts.srdf, _run_options(options))
                runs, allowed = prepared.runs(poses), prepared.allowed_links
            lines = getattr(options, "pose_lines", None)  # the kept findings the report splices in
            depthless = any(p.status is Status.COLLISION and p.result.depth is None
                            for found in dict(zip(map(id, runs), runs)).values() for p in found.pairs) \
                or (lines is not None and lines.depthless)
            runs[0] = dataclasses.replace(runs[0], notes=runs[0].notes + (
                f"{allowed} allowed pairs of links (adjacent, SRDF) not checked at "
                f"each pose",) + ((DEPTH_NOTE,) if depthless else ()))
        except Unprepared:
            runs = []
    if isinstance(poses, urdf.PoseRows):  # each pose's run needs every value; the others, their count
        poses = poses.values() if not runs else np.zeros((len(poses), 0))
    pending = poses if not runs else poses[:0]
    if options.dask is not None and len(pending) > 1 and options.pictures is None and options.rescan is None:
        # ranges of poses on the cluster, each pose's scan one process's on a worker
        from gjkcli.pipeline.distributed import scene_pose_runs

        runs = scene_pose_runs(options, paths, manifest, robot.variables, pending, pose_scans)
        pending = pending[:0]
    for k, q in enumerate(pending):
        o = _at_pose(options, robot.variables, q)
        if o.dask is not None:  # each pose's scan on the cluster
            from gjkcli.pipeline.distributed import scan_on_cluster

            found = scan_on_cluster(paths, o, manifest, progress)
        else:
            found = scan_here(paths, o, manifest, progress)
        runs.append(found)
    segments = []
    if trajectory and len(poses) > 1:
        scene = _SegmentScene(robots[0], ropts.srdf, paths, manifest, options.split_bodies, options.recurse,
                              dataclasses.replace(ropts, poses=None, trajectory=None),
                              options.fail_on or ("collision", "clearance"), options.mode,
                              runs[0].clearance if runs else None, runs[0].units if runs else None)
        if options.dask is not None and len(poses) > 2:  # ranges of the motions on the cluster
            from gjkcli.pipeline.distributed import segment_runs

            segments = segment_runs(options, scene, poses, segment_findings)
        else:
            segments = scene.findings(poses, 0, len(poses) - 1)
    from gjkcli.collector import no_gc

    with no_gc():  # every pose's findings alive: a collection would walk them all, for nothing
        merged = _merged(runs, segments, table, len(poses), trajectory)
    found = _timed(merged, read.times, read.notes, table)
    # the robot's own notes and the geometry it could not check (the prepared runs carry none)
    missing, fails = urdf.missing_notes(robot, robots[0].shown, ropts)
    notes = (*(f"{robots[0].shown}: {n}" for n in robot.notes), *map(str, missing), *found.notes,
             *(getattr(options.cache, "notes", None) or ()))  # entries of the cache not believed
    return dataclasses.replace(found, notes=tuple(dict.fromkeys(notes)),
                               unchecked=tuple(dict.fromkeys(found.unchecked + tuple(missing if fails else ()))),
                               elapsed=time.perf_counter() - started)  # the motion's too


def _at_pose(options, variables, q):
    """The options of the scan at pose q (the robot's joints set, no pose table)."""
    values = dict(zip(variables, q.tolist()))
    return dataclasses.replace(options, robot=dataclasses.replace(options.robot, joints=values, poses=None,
                                                                  trajectory=None))


def pose_scans(paths, options, manifest, variables, poses) -> list:
    """The scan at each pose of `poses` (n, d), in this process (a Dask task's:
    `gjkcli.pipeline.distributed.scene_pose_runs`), as one process scans each pose of a robot among
    other objects; the Findings without their pictures' geometry."""
    from gjkcli.pipeline.stages import scan_here

    return [dataclasses.replace(scan_here(paths, _at_pose(options, variables, q), manifest, None), geometry=None)
            for q in poses]


def _run_options(options):
    """The options as a run holds them: fail_on and the mode checked, lengths plain numbers."""
    from gjkcli.pipeline.stages import run_options

    return run_options(options)


def _timed(found: Findings, times, notes, table) -> Findings:
    """The findings with each one's time_from_start (a waypoint's; a motion's contact at t of
    its segment, at the time the straight joint motion from waypoint to waypoint reaches it, t
    scaled between the two times) and the reader's notes."""
    if times is not None:
        def at(f: Finding):
            if f.segment is not None and f.t is not None:
                return float(times[f.segment] + f.t * (times[f.segment + 1] - times[f.segment]))
            return float(times[f.waypoint]) if f.waypoint is not None else None

        found = dataclasses.replace(found, pairs=tuple(dataclasses.replace(f, time_from_start=at(f))
                                                       for f in found.pairs))
    if notes:
        found = dataclasses.replace(found, notes=found.notes + tuple(f"{table}: {n}" for n in notes))
    return found


@dataclass(frozen=True)
class _SegmentScene:
    """What the motions between waypoints need, to be checked anywhere (in this process, or a
    range of them in a task on a Dask worker: `gjkcli.pipeline.distributed.segment_runs`): the
    robot's source, its SRDF, the scan's other inputs and the options the motions read."""

    robot_source: object
    srdf: object
    paths: object
    manifest: object
    split_bodies: bool
    recurse: bool
    robot_options: object  # without poses or trajectory
    fail_on: tuple
    requested: str
    clearance: float | None = None  # the run's, in its units (a [[check]]'s own may be larger)
    units: str | None = None

    def findings(self, poses, first: int, last: int) -> list:
        """The Findings of the motions from waypoint first to waypoint last, in order (each
        motion's as `Motion.segment` orders them), the motion built here."""
        from types import SimpleNamespace

        source = self.robot_source
        motion = Motion.build(source.robot, source.transform, self.srdf, prefix=source.prefix)
        # what `_with_scene` reads of the options
        options = SimpleNamespace(split_bodies=self.split_bodies, recurse=self.recurse, robot=self.robot_options)
        motion, files = _with_scene(motion, self.paths, self.manifest, options, source, self.clearance,
                                    self.units)
        return [dataclasses.replace(f, file_a=files.get(f.a, source.shown), file_b=files.get(f.b, source.shown))
                for i in range(first, last)
                for f in motion.segment(i, poses[i], poses[i + 1], self.fail_on, self.requested)]


def segment_findings(scene: _SegmentScene, poses, first: int, last: int) -> list:
    """`_SegmentScene.findings` (a Dask task: `gjkcli.pipeline.distributed.segment_runs`)."""
    return scene.findings(poses, first, last)


def _with_scene(motion: "Motion", paths, manifest, options, robot_source, clearance=None, units=None):
    """(the motion with the scan's other objects fixed in it, {object name: file}): the pairs of
    a robot object and another object, as the manifest's [[check]] and [[allow]] tables select
    them (a manifest's own [[robot]]s are checked at the waypoints only), each pair with its
    clearance (`_clearances`)."""
    from gjkcli.scene.objects import gather, scene_sources

    problems: list = []  # the waypoints' runs report them
    sources, primitives = scene_sources(paths, manifest, options.split_bodies, problems,
                                        dataclasses.replace(options.robot, poses=None, trajectory=None),
                                        recurse=options.recurse)
    others = [s for s in sources if s.robot is None]
    geoms = gather(others, primitives, manifest, jobs=1, problems=problems) if others or primitives else []
    taken = set(motion.names)
    geoms = [g for g in geoms if g.name not in taken]
    files = {g.name: g.file for g in geoms}
    resolved = None
    names = list(motion.names) + [g.name for g in geoms]
    where = {name: k for k, name in enumerate(names)}
    if manifest is not None:
        from gjkcli.scene.manifest import ManifestError

        try:
            resolved = manifest.resolve(names)
        except ManifestError:  # the waypoints' runs report it (an input that did not load)
            resolved = None
    if not geoms:
        return motion.with_clearance(_clearances(motion, resolved, where, clearance, units)), files

    def keep(a: str, b: str) -> bool:
        if resolved is None:
            return True
        i, j = where[a], where[b]
        if resolved.checks and not any((ca[i] and cb[j]) or (cb[i] and ca[j]) for ca, cb, _, _ in resolved.checks):
            return False
        return not any((aa[i] and ab[j]) or (ab[i] and aa[j]) for aa, ab, _, _ in resolved.allows)

    motion = motion.with_objects(geoms, keep)
    return motion.with_clearance(_clearances(motion, resolved, where, clearance, units)), files


def _clearances(motion: "Motion", resolved, where: dict, clearance, units) -> np.ndarray:
    """(P,) each pair's clearance as a waypoint's run asks it (`gjkcli.pipeline.stages.Run.select`):
    the largest of the [[check]]s that select it (a check without its own, the run's), the run's
    for a pair none selects (a robot's own links, checked between waypoints all the same); 0 for
    none. `where`: object name -> its index in the names `resolved` was made for."""
    from gjkcli.units import Length, UnitError

    base = clearance or 0.0
    out = np.full(len(motion.pairs), base)
    if resolved is None or not resolved.checks or not len(motion.pairs):
        return out
    i = np.array([where[motion.names[a]] for a in motion.pairs[:, 0]], dtype=np.int64)
    j = np.array([where[motion.names[b]] for b in motion.pairs[:, 1]], dtype=np.int64)
    asked, chosen = np.zeros(len(i)), np.zeros(len(i), dtype=bool)
    for in_a, in_b, value, _ in resolved.checks:
        try:
            value = base if value is None else value.to(units) if isinstance(value, Length) else float(value)
        except UnitError:  # the waypoints' runs report it
            value = base
        hit = (in_a[i] & in_b[j]) | (in_b[i] & in_a[j])
        asked[hit] = np.maximum(asked[hit], value)
        chosen |= hit
    return np.where(chosen, asked, out)


def _merged(runs: list, segments: list, table, rows: int, trajectory: bool) -> Findings:
    """One Findings of the runs at each waypoint (pairs tagged with their row) and the segments'."""
    first = runs[0]
    pairs, objects, seen, counts = [], [], set(), {}
    last = None
    # the prepared poses share their Findings (every pose without findings one): each counted
    # once, times the poses that have it, in the order they first come
    tally = collections.Counter(map(id, runs))  # in the order they first come
    by_id = dict(zip(map(id, runs), runs))
    with_pairs = [k for k, found in by_id.items() if found.pairs]
    if with_pairs:  # the poses whose Findings have pairs (read with array operations: 100,000 poses)
        ids = np.fromiter(map(id, runs), dtype=np.int64, count=len(runs))
        for k in np.flatnonzero(np.isin(ids, np.array(with_pairs, dtype=np.int64))).tolist():
            pairs.extend(p if p.waypoint == k else dataclasses.replace(p, waypoint=k) for p in runs[k].pairs)
    distinct = [[by_id[k], times] for k, times in tally.items()]
    for found, times in distinct:
        if found.objects is not last:  # the prepared poses share one tuple of records
            last = found.objects
            for o in found.objects:
                if o.name not in seen:
                    seen.add(o.name)
                    objects.append(o)
        for status, n in found.counts.items():
            counts[status] = counts.get(status, 0) + n * times
    for f in segments:
        counts[f.status.value] = counts.get(f.status.value, 0) + 1
    pairs.extend(segments)
    pairs.sort(key=lambda p: (p.allowed, p.known, _SEVERITY[p.status], p.waypoint if p.waypoint is not None
                              else -1, p.segment if p.segment is not None else -1, p.a, p.b))
    notes = [n for n in first.notes if ": pose " not in n]
    what = "waypoints" if trajectory else "poses"
    clearance = first.clearance is not None or any(p.clearance for p in pairs)
    notes.append(f"{rows} {what} from {table}" + ("; the motions between them checked continuously"
                                                  + (" for contact and the clearance" if clearance else "")
                                                  if trajectory else ""))
    errors = tuple(dict.fromkeys(e for found, _ in distinct for e in found.errors))
    timings: dict = {}
    for found, times in distinct:  # clock readings: their sum's rounding is of no account
        for name, v in found.timings.items():
            timings[name] = timings.get(name, 0.0) + v * times
    return dataclasses.replace(
        first, objects=tuple(objects), pairs=tuple(pairs), errors=errors, counts=counts,
        checked=sum(f.checked * times for f, times in distinct) + len(segments),
        candidates=sum(f.candidates * times for f, times in distinct), notes=tuple(notes), timings=timings,
        elapsed=sum(f.elapsed * times for f, times in distinct), _index={o.name: k for k, o in enumerate(objects)})


_SEVERITY = {Status.COLLISION: 0, Status.UNDECIDED: 1, Status.TOUCHING: 2, Status.CLEARANCE: 3,
             Status.CLEAR: 4}


@dataclass
class Motion:
    """A robot's collision elements in their links' frames, ready to be moved.

    shapes : ShapeSet of the elements' hulls (primitives as they are) in their links' frames
    meshes : per element, its triangles (`gjkcli.engine.exact.Mesh`) in its link's frame, or None
    radii : (J, E) `gjkcli.scene.urdf.motion_radii`
    pair_radii : (J, P) the same for each pair, the joints above both of its elements left out:
        travel @ pair_radii bounds how fast each pair's distance changes
    pairs : (P, 2) element pairs checked (not of one link, not allowed)
    band : the contact band, model units
    clearance : (P,) each pair's clearance (0: none), model units (`with_clearance`)
    owners : per element, the object it is part of (its link, `gjkcli.scene.urdf.link_names`; a
        fixed object itself): findings are reported under these names
    """

    robot: object
    transform: np.ndarray
    names: list
    link_index: np.ndarray
    shapes: object
    meshes: list
    radii: np.ndarray
    pair_radii: np.ndarray
    pairs: np.ndarray
    band: float
    owners: list
    clearance: np.ndarray | None = None

    @classmethod
    def build(cls, robot, transform, srdf, prefix=None) -> "Motion":
        from gjkcli.engine.shapes import ShapeSet
        from gjkcli.pipeline.poses import prepared_elements
        from gjkcli.scene import urdf
        from gjkcli.tolerances import DEFAULT

        local = urdf.local_meshes(robot)
        shapes, _, meshes = prepared_elements(robot, local)  # prepared once per distinct mesh
        radii_e = np.array([urdf.element_radius(c, None if local[k] is None else local[k][0])
                            for k, c in enumerate(robot.collisions)])
        allowed = {frozenset((a.a, a.b)) for a in urdf.allowed_pairs(robot, srdf)}
        links = [c.link for c in robot.collisions]
        pairs = [(a, b) for a, b in itertools.combinations(range(len(links)), 2)
                 if links[a] != links[b] and frozenset((links[a], links[b])) not in allowed]
        index = {name: k for k, name in enumerate(robot.links)}
        frames = robot.fk(robot.default_pose()[None])[0]
        reach = max(float(np.linalg.norm(frames[index[link], :3, 3])) + radii_e[e]
                    for e, link in enumerate(links)) if links else 1.0
        radii = urdf.motion_radii(robot, radii_e)
        above = np.zeros(radii.shape, dtype=bool)
        for e, link in enumerate(links):
            above[sorted(urdf.joints_above(robot, link)), e] = True
        pairs = np.array(pairs, dtype=np.int64).reshape(-1, 2)
        return cls(robot=robot, transform=np.eye(4) if transform is None else np.asarray(transform),
                   names=urdf.object_names(robot, prefix), owners=urdf.link_names(robot, prefix),
                   link_index=np.array([index[link] for link in links], dtype=np.int64),
                   shapes=ShapeSet(shapes), meshes=meshes, radii=radii,
                   pair_radii=_relative(radii, above, pairs), pairs=pairs,
                   band=DEFAULT.motion_contact_rel * 2.0 * reach)

    def with_objects(self, geoms, keep) -> "Motion":
        """This motion with the scene's other objects, fixed where they are: `geoms` are
        `gjkcli.scene.objects.Geometry` records in world coordinates; keep(a, b) says whether
        the pair of a robot object and an object (by name) is checked."""
        from gjkcli.engine.shapes import Shape, ShapeSet
        from gjkcli.errors import ShapeError
        from gjkcli.pipeline.pairs import part_mesh

        E = len(self.names)
        shapes, meshes, names = list(self.shapes.shapes), list(self.meshes), list(self.names)
        owners = list(self.owners)
        for g in geoms:
            try:
                shape = g.primitive if g.primitive is not None else Shape.hull(g.vertices)
            except ShapeError:
                continue  # unusable geometry: the waypoints' runs report it
            shapes.append(shape)
            meshes.append(part_mesh(g.primitive, name=g.name) if g.primitive is not None
                          else part_mesh(vertices=g.vertices, faces=g.faces, watertight=g.watertight,
                                         name=g.name))
            names.append(g.name)
            owners.append(g.owner or g.name)
        fixed = len(names) - E
        new = np.array([(a, s) for a in range(E) for s in range(E, E + fixed) if keep(names[a], names[s])],
                       dtype=np.int64).reshape(-1, 2)
        return dataclasses.replace(
            self, names=names, owners=owners, shapes=ShapeSet(shapes), meshes=meshes,
            link_index=np.concatenate([self.link_index, np.full(fixed, -1, dtype=np.int64)]),
            radii=np.hstack([self.radii, np.zeros((self.radii.shape[0], fixed))]),
            pair_radii=np.hstack([self.pair_radii, self.radii[:, new[:, 0]]]),  # nothing above a fixed one
            pairs=np.vstack([self.pairs, new]), clearance=None)

    def with_clearance(self, clearance: np.ndarray) -> "Motion":
        """This motion with each pair's clearance (P,): 0 for none."""
        return dataclasses.replace(self, clearance=np.asarray(clearance, dtype=np.float64))

    def frames(self, q: np.ndarray) -> np.ndarray:
        """(n, E, 4, 4) the elements' link frames in the world for poses (n, d); the identity
        for the scene's fixed objects."""
        F = (self.transform @ self.robot.fk(q))[:, np.maximum(self.link_index, 0)]
        fixed = self.link_index < 0
        if fixed.any():
            F[:, fixed] = np.eye(4)
        return F

    def distances(self, q: np.ndarray, pairs: np.ndarray, within=None, measured: bool = False):
        """(m,) certified lower bounds of each pair's distance at its pose q (m, d): the hulls'
        where they are apart beyond `within` (m,) (default: the band), the parts' own where they
        come within it (as at a waypoint: `gjkcli.pipeline.pairs.exact_pair`; two primitives are
        their hulls). With `measured`, also (m,) the distance measured between two points of the
        parts (at least the true distance) where the parts' own were asked, inf elsewhere."""
        from gjkcli.engine.query import batch
        from gjkcli.pipeline.pairs import exact_pair

        F = self.frames(q)
        rows = np.arange(len(pairs))
        pa, pb = F[rows, pairs[:, 0]], F[rows, pairs[:, 1]]
        got = batch(self.shapes, pairs[:, 0], pairs[:, 1], pose_a=pa, pose_b=pb, tolerance=self.band,
                    want="distance")
        d = np.where(got.status == _CODE_CLEAR, got.distance_lower, 0.0)
        upper = np.full(len(pairs), np.inf)
        for k in np.flatnonzero(d <= (self.band if within is None else within)).tolist():
            ea, eb = int(pairs[k, 0]), int(pairs[k, 1])
            shapes = self.shapes.shapes
            r = exact_pair(self.meshes[ea], shapes[ea], self.meshes[eb], shapes[eb], pose_a=pa[k],
                           pose_b=pb[k], tolerance=self.band, want="distance")
            if r is None:  # two primitives: each is its own hull, the hulls' answer is theirs
                upper[k] = got.distance[k] if got.status[k] == _CODE_CLEAR else 0.0
                continue
            d[k] = r.distance_lower if r.status is Status.CLEAR else 0.0
            upper[k] = r.distance if r.status is Status.CLEAR else 0.0
        return (d, upper) if measured else d

    def speeds(self, q0: np.ndarray, q1: np.ndarray) -> np.ndarray:
        """(E,) bound on how far any point of each element moves per unit of t from q0 to q1."""
        travel = np.abs(self.robot.joint_values(q1[None]) - self.robot.joint_values(q0[None]))[0]
        return travel @ self.radii

    def pair_speeds(self, q0: np.ndarray, q1: np.ndarray) -> np.ndarray:
        """(P,) bound on how fast each pair's distance changes per unit of t from q0 to q1."""
        travel = np.abs(self.robot.joint_values(q1[None]) - self.robot.joint_values(q0[None]))[0]
        return travel @ self.pair_radii

    def segment_contacts(self, q0: np.ndarray, q1: np.ndarray):
        """[(pair index into self.pairs, t, steps)] of the pairs that come within the band on the
        motion from q0 to q1 (t of the first contact, a lower bound within band / speed); pairs
        already within it at q0 are the waypoint's findings and are left out. t = None for a
        pair that ran out of steps (undecided)."""
        pairs = self.pairs
        bound = self.pair_speeds(q0, q1)
        active = np.flatnonzero(bound > 0)
        t = np.zeros(len(pairs))
        steps = np.zeros(len(pairs), dtype=np.int64)
        d0 = self.distances(np.repeat(q0[None], len(active), axis=0), pairs[active])
        active = active[d0 > self.band]
        found = []
        while len(active):
            q = q0 + t[active, None] * (q1 - q0)
            d = self.distances(q, pairs[active])
            hit = d <= self.band
            found.extend((int(k), float(t[k]), int(steps[k])) for k in active[hit])
            active = active[~hit]
            d = d[~hit]
            t[active] += d / bound[active]
            steps[active] += 1
            stuck = steps[active] >= MAX_STEPS
            found.extend((int(k), None, int(steps[k])) for k in active[stuck])
            active = active[(t[active] <= 1.0) & ~stuck]
        return found

    def segment_clearances(self, q0: np.ndarray, q1: np.ndarray, skip=()):
        """[(pair index, t, steps, closest)] of the pairs with a clearance that come closer than
        it on the motion from q0 to q1: t the first step where their measured distance is below
        it (no pose before t is closer than the clearance less twice the band), closest the
        (t, distance) of the closest pose found (the search goes on: no pose after t is closer
        than its distance less CLOSEST_REL x the clearance and twice the band, unless the steps
        ran out); pairs
        already closer at q0 (the waypoint's findings) and those in `skip` (found in contact)
        left out. t = None for a pair that ran out of steps before (undecided)."""
        c = np.zeros(len(self.pairs)) if self.clearance is None else self.clearance
        bound = self.pair_speeds(q0, q1)
        active = np.flatnonzero((c > 0) & (bound > 0))
        active = active[~np.isin(active, np.fromiter(skip, dtype=np.int64))]
        if not len(active):
            return []
        pairs = self.pairs
        t = np.zeros(len(pairs))
        steps = np.zeros(len(pairs), dtype=np.int64)
        best = c.astype(np.float64).copy()  # the clearance, then the closest distance measured
        first, closest = np.full(len(pairs), np.nan), np.full(len(pairs), np.nan)
        finer = np.zeros(len(pairs))  # how much closer the search looks, once closer than c
        _, upper = self.distances(np.repeat(q0[None], len(active), axis=0), pairs[active],
                                  within=c[active] + self.band, measured=True)
        active = active[upper >= c[active]]
        while len(active):
            q = q0 + t[active, None] * (q1 - q0)
            lower, upper = self.distances(q, pairs[active], within=best[active] + self.band, measured=True)
            hit = upper < best[active]
            best[active[hit]] = upper[hit]
            closest[active[hit]] = t[active[hit]]
            first[active[hit]] = np.where(np.isnan(first[active[hit]]), t[active[hit]], first[active[hit]])
            finer[active[hit]] = CLOSEST_REL * c[active[hit]]
            t[active] += np.maximum(lower - best[active] + finer[active], self.band) / bound[active]
            steps[active] += 1
            active = active[(t[active] <= 1.0) & (steps[active] < MAX_STEPS)]
        return [(int(k), None if np.isnan(first[k]) else float(first[k]), int(steps[k]),
                 None if np.isnan(first[k]) else (float(closest[k]), float(best[k])))
                for k in np.flatnonzero(~np.isnan(first) | (steps >= MAX_STEPS)).tolist()]

    def segment(self, i: int, q0, q1, fail_on, requested: str) -> list[Finding]:
        """Findings of the motion from waypoint i (q0) to i + 1 (q1), one per pair of objects
        (links): the first contact of any of their elements' pairs, else the first pose closer
        than the pair's clearance."""
        out = []
        speed = self.speeds(q0, q1)
        c = np.zeros(len(self.pairs)) if self.clearance is None else self.clearance
        contacts = [(k, t, steps, None) for k, t, steps in self.segment_contacts(q0, q1)]
        closer = self.segment_clearances(q0, q1, skip=[k for k, _, _, _ in contacts])
        for near, (k, t, steps, closest) in [(False, x) for x in contacts] + [(True, x) for x in closer]:
            a, b = (int(x) for x in self.pairs[k])
            clearance = float(c[k]) if c[k] > 0 else None
            if near and t is not None:  # reported at the closest pose found
                t_out = closest[0]
                result = self._at(a, b, q0 + t_out * (q1 - q0), want="distance")
                if result.status is Status.CLEAR:
                    result = dataclasses.replace(result, status=Status.CLEARANCE)
                note = (f"between waypoints {i} and {i + 1}: closer than the clearance {clearance:.6g} "
                        f"from t = {t:.6f}; {result.distance:.6g} apart at t = {t_out:.6f}, the closest "
                        + (f"found (none closer by more than {CLOSEST_REL * clearance + 2 * self.band:.2g})"
                           if steps < MAX_STEPS else f"found in {steps:,} steps"))
            elif t is None:
                result = _undecided(steps)
                note = (f"undecided: {steps:,} steps of conservative advancement did not settle the "
                        f"motion from waypoint {i} to {i + 1}"
                        + (" against the clearance" if near else ""))
                t_out = None
            else:
                result, probe = self._verdict_after(a, b, q0, q1, t, speed[a] + speed[b])
                t_out = t
                note = (f"between waypoints {i} and {i + 1}: within {self.band:.2g} of contact at "
                        f"t = {t:.6f}" + (f", overlapping at t = {probe:.6f}" if probe is not None else ""))
            if (self.owners[a], self.owners[b]) != (self.names[a], self.names[b]):
                note += f"; first of their elements' pairs: {self.names[a]} against {self.names[b]}"
            out.append(Finding(a=self.owners[a], b=self.owners[b], result=result,
                               mode="exact" if self.meshes[a] is not None or self.meshes[b] is not None
                               else "hull", requested=requested,
                               violation=violates(result.status, clearance, fail_on), segment=i, t=t_out,
                               note=note, clearance=clearance))
        # an object pair's first contact; its first pose closer than the clearance where it has none
        out.sort(key=lambda f: (f.status is Status.CLEARANCE, f.t if f.t is not None else np.inf,
                                _SEVERITY[f.status]))
        first: dict = {}
        for f in out:
            first.setdefault(frozenset((f.a, f.b)), f)
        return list(first.values())

    def _at(self, a: int, b: int, q: np.ndarray, want: str = "verdict"):
        """The Result of elements a and b at pose q, as a waypoint's run answers them."""
        from gjkcli.engine.query import query
        from gjkcli.pipeline.pairs import exact_pair

        F = self.frames(q[None])[0]
        r = exact_pair(self.meshes[a], self.shapes.shapes[a], self.meshes[b], self.shapes.shapes[b],
                       pose_a=F[a], pose_b=F[b], tolerance=self.band, want=want)
        if r is not None:
            return r
        sa, sb = self.shapes.shapes[a].moved(F[a]), self.shapes.shapes[b].moved(F[b])
        return query(sa, sb, tolerance=self.band, want=want)

    def _verdict_after(self, a: int, b: int, q0, q1, t: float, bound: float):
        """(Result, t of overlap or None): the pair at t, or where it is found overlapping just
        after t (probes at t + band x 2^k / bound): a collision with its evidence, else the
        touching pair at t."""
        def at(s: float):
            return self._at(a, b, q0 + s * (q1 - q0))

        step = self.band / bound
        s = t + 2 * step
        while s <= 1.0:
            r = at(s)
            if r.status is Status.COLLISION:
                return r, s
            step *= 2
            s = t + 2 * step
        r = at(t)
        if r.status is Status.CLEAR:  # within the band by the lower bound, a hair beyond by the query
            r = dataclasses.replace(r, status=Status.TOUCHING)
        return r, None


def _undecided(steps: int):
    from gjkcli.engine.results import Result

    nan3 = np.full(3, np.nan)
    return Result(status=Status.UNDECIDED, distance=float("nan"), distance_lower=0.0, depth=None,
                  normal=nan3, point_a=nan3, point_b=nan3, certificate=None, iterations=steps,
                  epa_iterations=0, exit="iteration cap", epa_exit=None, tolerance=0.0)


def _clear_code() -> int:
    from gjkcli.engine.results import STATUS_CODES

    return next(code for code, s in STATUS_CODES.items() if s is Status.CLEAR)


_CODE_CLEAR = _clear_code()


def _relative(radii: np.ndarray, above: np.ndarray, pairs: np.ndarray) -> np.ndarray:
    """(J, P) `Motion.pair_radii` of (J, E) `radii` and `above` (joint j is above element e)."""
    a, b = pairs[:, 0], pairs[:, 1]
    return np.where(above[:, a] & above[:, b], 0.0, radii[:, a] + radii[:, b])
