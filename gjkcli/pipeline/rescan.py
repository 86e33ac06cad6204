"""A scan of a GLB run again after some of its parts moved: only the moved parts and the parts
near them are read and checked, the rest of the last scan's report is kept (`gjkcli.report.patch`
patches it).

The cache keeps, per scan of one GLB (kind `scene`, keyed by the command's options, not by the
file's bytes, so that an edited file finds its last scan): every mesh node's name, world
transform and mesh, a digest of the meshes' bytes, each part's box and broad-phase growth, every
checked pair with its status, and the report. A re-scan reads the file's JSON (not its meshes),
compares: the nodes whose transform or mesh changed moved. It builds those and the unchanged
parts whose boxes come near their new places (`gjkcli.mesh.gltf.only_nodes`), runs the usual
scan on them (so every pair with a moved part is checked as a whole scan checks it), and
checks on the way that what it kept is what a whole scan would give: the unchanged parts it read
again have the same boxes and growth, their pairs the same statuses, the broad phase the same
pad; any difference, and the file is scanned whole. Like every entry, the scene's is data with
a checksum (`gjkcli.pipeline.cache`).

Cost: a 10,000-part GLB with 1% of its parts moved reads its JSON (not its 10,000 meshes),
builds a few hundred parts and patches the report (`benchmarks/bench_cache.py`).
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from gjkcli.engine.results import Status
from gjkcli.pipeline.findings import severity_key
from gjkcli.pipeline.listed import listed_arrays

__all__ = ["Recorder", "Rescan", "scene_key", "kept_scene", "keep_scene", "rescan", "scan_parts", "MOVED_UP_TO"]

KIND = "scene"
# Past this share of parts moved, a whole scan costs about what a re-scan does.
MOVED_UP_TO = 0.25
_STATUSES = [s.value for s in Status]
_CODE = {v: k for k, v in enumerate(_STATUSES)}


class Recorder:
    """What a scan tells a later re-scan (`gjkcli.pipeline.run.Options.rescan`): its parts and
    checked pairs. outside : (largest |coordinate|, largest box diagonal) of the parts a re-scan
    left out, which the broad phase's pad counts as a whole scan would (or None)."""

    def __init__(self, outside=None, moved=None, volumes=(), deepest=None):
        self.outside = outside
        self.used_extent = None
        self.parts = None
        if moved is not None:  # a re-scan's: the overlap volumes its report's patch needs only
            self.moved, self.volumes, self.deepest = set(moved), set(volumes), deepest
            self.wants_volume = self._wants_volume

    def _wants_volume(self, p) -> bool:
        """Whether the listed pair `p` needs its overlap volume: one of `volumes` (names), or
        one of a moved part that may be among the deepest collisions (placed before
        `deepest`, a `severity_key`, or None)."""
        if (p.a, p.b) in self.volumes:
            return True
        if p.a not in self.moved and p.b not in self.moved:
            return False
        return self.deepest is None or severity_key(p) <= self.deepest

    def extent(self, largest, size):
        """The broad phase's extent of the scene (`stages.Run.grow`)."""
        if self.outside is not None:
            largest, size = max(largest, self.outside[0]), max(size, self.outside[1])
        self.used_extent = (float(largest), float(size))
        return largest, size

    def ran(self, parts, i, j, statuses, grow, listed) -> None:
        """The run's parts, checked pairs (i, j, statuses), broad-phase growth and listed
        Findings (most severe first)."""
        self.parts = {
            "names": list(parts.names), "files": [g.file for g in parts.geoms],
            "lo": np.array(parts.lo, dtype=np.float64), "hi": np.array(parts.hi, dtype=np.float64),
            "grow": np.broadcast_to(np.asarray(grow, dtype=np.float64), (parts.n,)).copy(),
            "size": np.linalg.norm(parts.hi - parts.lo, axis=1),
            "i": np.asarray(i, dtype=np.int64), "j": np.asarray(j, dtype=np.int64),
            "status": np.array([_CODE[s] for s in statuses], dtype=np.uint8),
            "owned": bool(parts.owned)}
        self.parts.update(listed_arrays(listed, parts.index))


def scene_key(command: str, params: dict, extra_files=()) -> str:
    """The key of a scan's scene entry: the command, its options but the inputs, the working
    folder and the bytes of `extra_files` (the settings file), so that the file's next version
    finds it."""
    import os

    from gjkcli.pipeline.cache import key

    files = []
    for name in extra_files:
        path = Path(name) if name is not None else None
        try:
            files.append(path.read_bytes() if path is not None and path.is_file() else "absent")
        except OSError:
            files.append("unreadable")
    return key("scene", command, os.getcwd(), sorted((k, repr(v)) for k, v in params.items() if k != "inputs"),
               files)


# The arrays of a scene entry (and "lmode", kept as codes into the header's "modes").
_ARRAYS = ("world", "mesh", "lo", "hi", "grow", "size", "i", "j", "status", "la", "lb", "lsev", "lsize",
           "lplain", "lviolation", "lfails", "lmode")


def keep_scene(cache, k: str, path, scene: dict, extent, report: str, layout=None) -> None:
    """Keep a scan's scene (`Recorder.parts`, or a re-scan's) and the broad phase's extent
    (`Recorder.used_extent`) under `k`; report : the key of its kept report (a `run` entry,
    `gjkcli.pipeline.cache.put_run`), which a re-scan patches."""
    from gjkcli.mesh import gltf

    if scene is None or scene["owned"] or extent is None or "la" not in scene:
        return
    layout = layout if layout is not None else gltf.layout(path)
    if layout is None:
        return
    names, world, mesh, geometry, rest = layout[:5]
    if names != scene["names"] or len(set(scene["files"])) != 1:
        return
    modes = sorted(set(scene["lmode"]))
    header = {"names": names, "file": scene["files"][0], "geometry": geometry.hex(), "rest": rest.hex(),
              "extent": list(extent), "modes": modes, "report": report}
    arrays = {"world": world, "mesh": mesh}
    arrays.update({name: scene[name] for name in _ARRAYS[2:-1]})
    code = {m: c for c, m in enumerate(modes)}
    arrays["lmode"] = np.array([code[m] for m in scene["lmode"]], dtype=np.int64)
    cache.put(KIND, k, header, arrays)


def kept_scene(cache, k: str):
    """(header, arrays) of the scene kept under `k` (its "lmode" a list of modes, "report" the
    bytes of its report), or None."""
    from gjkcli.pipeline.cache import get_run

    got = cache.get(KIND, k)
    if got is None:
        return None
    header, arrays = got
    report = get_run(cache, header["report"]) if isinstance(header, dict) and isinstance(header.get("report"), str) \
        else None
    if report is None or len(report[1]) != 1:
        return None
    arrays = {**arrays, "report": report[1][0][1]}
    if not isinstance(header, dict) or any(name not in arrays for name in _ARRAYS) \
            or not isinstance(header.get("names"), list) or not isinstance(header.get("modes"), list):
        return None
    try:
        arrays["lmode"] = [header["modes"][c] for c in arrays["lmode"].tolist()]
    except (IndexError, TypeError):
        return None
    n, m = len(header["names"]), len(arrays["la"])
    if any(len(arrays[name]) != n for name in ("world", "mesh", "lo", "hi", "grow", "size")) \
            or any(len(arrays[name]) != m for name in _ARRAYS[9:]) \
            or not len(arrays["i"]) == len(arrays["j"]) == len(arrays["status"]) \
            or any(len(arrays[name]) and (arrays[name].min() < 0 or arrays[name].max() >= n)
                   for name in ("i", "j", "la", "lb")):
        return None
    return header, arrays


@dataclasses.dataclass
class Rescan:
    """A re-scan's answer: the scan of the moved parts and their neighbours, and what the
    report's patch needs.

    found : the Findings of that scan; cap, cap_note : the overlap volumes' limit and the
    reason a collision past it is given; names : every part's; changed : (n,) bool, the parts
    that moved; subset : the parts scanned (sorted); old : the last scene's arrays
    (`kept_scene`); previous : the last report's bytes; file : (the last report's file name,
    this one's); status_counts : {status: pairs checked}; checked : pairs checked; volumes :
    the kept pairs (names) whose overlap volumes the scan computed, besides the moved parts'
    (those that may move up into the overlap volumes' limit); wants_volume : whether the scan
    computed a listed pair's volume (`Recorder`); scene : the
    scene to keep for the next re-scan (`keep_scene`), but its listed pairs' arrays, which
    the patch gives; extent : the broad phase's; layout : the file's (`gjkcli.mesh.gltf.layout`)."""

    found: object
    cap: int
    cap_note: str
    names: list
    changed: np.ndarray
    subset: np.ndarray
    old: dict
    previous: bytes
    file: tuple
    status_counts: dict
    checked: int
    volumes: set
    wants_volume: object
    scene: dict
    extent: tuple
    layout: tuple


def rescan(kept, path, options, scan) -> Rescan | None:
    """The scan of GLB `path` by its last scan `kept` (`kept_scene`): the moved parts and their
    neighbours scanned with `scan(paths, options)` (`gjkcli.pipeline.run.scan`); None where the
    file is to be scanned whole (nothing moved, too much moved, the meshes or the document
    changed, or a check failed)."""
    from gjkcli import limits
    from gjkcli.mesh import gltf
    from gjkcli.pipeline.stages import overlap_cap_note
    from gjkcli.tolerances import DEFAULT

    header, old = kept
    cap = (options.limits or limits.DEFAULT).overlap_volumes
    if cap <= 0:  # no overlap volumes asked for: a whole scan writes none, nor their limit's note
        return None
    layout = gltf.layout(path)
    if layout is None:
        return None
    names, world, mesh, geometry, rest, boxes, state, alike = layout
    n = len(names)
    if names != header["names"] or geometry.hex() != header.get("geometry") or rest.hex() != header.get("rest") \
            or old["world"].shape != world.shape or n < 2 or len(set(names)) != n:
        return None
    changed = (world.view(np.uint64) != np.ascontiguousarray(old["world"]).view(np.uint64)).any(axis=(1, 2)) \
        | (mesh != old["mesh"])
    moved = np.flatnonzero(changed)
    if len(moved) == 0 or len(moved) > MOVED_UP_TO * n:
        return None
    box = boxes(moved.tolist())
    if box is None or not np.isfinite(box).all():
        return None
    lo, hi, grow, size = old["lo"], old["hi"], old["grow"], old["size"]
    if not (np.isfinite(lo).all() and np.isfinite(hi).all() and np.isfinite(grow).all()):
        return None
    # each moved part's box, grown past what the broad phase can grow it: its touching band (of
    # its size), twice the largest growth of the last scan, and the rounding of its corners
    scale = np.abs(box).max(axis=(1, 2)) + 1.0
    diagonal = np.linalg.norm(box[:, 1] - box[:, 0], axis=1)
    margin = 2.0 * grow.max() + 2.0 * DEFAULT.touching_rel * diagonal + 1e-9 * scale
    sel_lo, sel_hi = box[:, 0] - margin[:, None], box[:, 1] + margin[:, None]
    near = _near(lo - grow[:, None] * (1 + 1e-9), hi + grow[:, None] * (1 + 1e-9), sel_lo, sel_hi)
    near[moved] = True
    # the kept collisions that may move up into the overlap volumes' limit, as many as the moved
    # parts' collisions leave it: scanned too, so that they get their volumes in this scan
    la, lb = old["la"], old["lb"]
    collisions = np.flatnonzero(old["lsev"] == 0)
    of_moved = changed[la[collisions]] | changed[lb[collisions]]
    leaving = int(of_moved[:cap].sum())
    rising = collisions[cap:][~of_moved[cap:]][:leaving]
    near[la[rising]] = near[lb[rising]] = True
    if near.sum() < 2:  # a scan of one part is not a scan (a note says so): one more, unchanged
        near[np.flatnonzero(~near)[0]] = True
    subset = np.flatnonzero(near)
    if alike[subset].any():  # instances: their hulls and boxes depend on the whole file's nodes
        return None
    out = ~near
    outside = None
    if out.any():
        outside = (np.abs(np.concatenate([lo[out], hi[out]])).max(), size[out].max())
    # a new collision behind the last one's (cap + all the moved parts' collisions)-th deepest
    # has `cap` kept ones before it: past the limit, no volume needed
    after = cap + int(of_moved.sum())
    deepest = None
    if after < len(collisions):
        q = int(collisions[after])
        deepest = (False, False, int(old["lsev"][q]), float(old["lsize"][q]), names[la[q]], names[lb[q]])
    recorder = Recorder(outside, [names[k] for k in moved.tolist()],
                        [(names[a], names[b]) for a, b in zip(la[rising].tolist(), lb[rising].tolist())], deepest)
    with gltf.only_nodes(path, [names[k] for k in subset.tolist()], state):
        found = scan([path], dataclasses.replace(options, rescan=recorder))
    got = recorder.parts
    if got is None or got["owned"] or found.errors or found.notes or found.unchecked \
            or got["names"] != [names[k] for k in subset.tolist()] or len(set(got["files"])) != 1:
        return None
    if recorder.used_extent != tuple(header.get("extent", ())):
        return None  # the broad phase's pad changed: every pair's candidacy may have
    # the unchanged parts read again: as the last scan had them
    is_moved = changed[subset]
    same = ~is_moved
    for name in ("lo", "hi", "grow", "size"):
        a, b = got[name][same], old[name][subset[same]]
        if a.shape != b.shape or (a.view(np.uint64) != np.ascontiguousarray(b).view(np.uint64)).any():
            return None
    # the moved parts: within the boxes their neighbours were chosen by
    g = got["grow"][is_moved][:, None]
    if ((got["lo"][is_moved] - g) < sel_lo).any() or ((got["hi"][is_moved] + g) > sel_hi).any():
        return None
    # the pairs: the last scan's without a moved part, then this scan's with one
    gi, gj, gs = subset[got["i"]], subset[got["j"]], got["status"]
    new_moved = changed[gi] | changed[gj]
    oi, oj, os_ = old["i"], old["j"], old["status"]
    old_moved = changed[oi] | changed[oj]
    # the pairs of unchanged parts this scan checked again: the last scan's, same statuses
    within = near[oi] & near[oj] & ~old_moved
    again = sorted(zip(gi[~new_moved].tolist(), gj[~new_moved].tolist(), gs[~new_moved].tolist()))
    before = sorted(zip(oi[within].tolist(), oj[within].tolist(), os_[within].tolist()))
    if again != before:
        return None
    pi = np.concatenate([oi[~old_moved], gi[new_moved]])
    pj = np.concatenate([oj[~old_moved], gj[new_moved]])
    ps = np.concatenate([os_[~old_moved], gs[new_moved]])
    order = np.lexsort((pj, pi))
    counts = {s: 0 for s in _STATUSES}
    for code, c in zip(*np.unique(ps, return_counts=True)):
        counts[_STATUSES[int(code)]] += int(c)
    # the scene to keep: every part's box and growth, this scan's where it read them
    whole = {"names": names, "files": [got["files"][0]] * n, "owned": False}
    for name in ("lo", "hi", "grow", "size"):
        a = np.array(old[name], copy=True)
        a[subset] = got[name]
        whole[name] = a
    whole.update(i=pi[order], j=pj[order], status=ps[order])
    return Rescan(found=found, cap=cap, cap_note=overlap_cap_note(cap), names=names, changed=changed,
                  subset=subset, old=old, previous=bytes(old["report"]), file=(header.get("file"), got["files"][0]),
                  status_counts=counts, checked=int(len(pi)), volumes=recorder.volumes,
                  wants_volume=recorder.wants_volume, scene=whole, extent=recorder.used_extent,
                  layout=layout)


def _near(reach_lo, reach_hi, sel_lo, sel_hi, block: int = 32) -> np.ndarray:
    """(n,) bool: the boxes (reach_lo, reach_hi), (n, 3), that meet one of the boxes (sel_lo,
    sel_hi), (m, 3), closed on every axis. The same comparisons as a loop over the m boxes,
    made a block of them at a time on each axis's contiguous row (a 10,000-part scene with 100
    boxes: under a millisecond, against 20 for the loop's (n, 3) arrays)."""
    rl, rh = np.ascontiguousarray(reach_lo.T), np.ascontiguousarray(reach_hi.T)
    near = np.zeros(rl.shape[1], dtype=bool)
    for s in range(0, len(sel_lo), block):
        sl, sh = sel_lo[s:s + block], sel_hi[s:s + block]
        hit = (rl[0] <= sh[:, 0, None]) & (rh[0] >= sl[:, 0, None])
        for axis in (1, 2):
            hit &= (rl[axis] <= sh[:, axis, None]) & (rh[axis] >= sl[:, axis, None])
        near |= hit.any(axis=0)
    return near


def scan_parts(path, names, options, scan, state=None):
    """The Findings of `scan(paths, options)` over the nodes `names` of GLB `path` only: their
    pairs' answers and overlap volumes are a whole scan's. state : the file as
    `gjkcli.mesh.gltf.layout` read it."""
    from gjkcli.mesh import gltf

    with gltf.only_nodes(path, names, state):
        return scan([path], dataclasses.replace(options, rescan=None))
