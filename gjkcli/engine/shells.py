"""The closed shells among an open part's faces, and a point deep inside two such parts: the
certificate of a collision between two parts neither of which is closed as a whole.

An exporter may write a solid as faces that are not one closed surface although they enclose
the solid: a window's frame whose long edges carry the corners of its short ones (T-junctions,
holes of no width), a wall whose opening is filled by plugs sharing its rims (edges used by three
faces), a frame with loose panes (sheets) in it. Such a part is open, so the triangle test counts
only its surface; two of them embedded in each other by centimetres then read as surfaces that
meet without crossing, which is no proof either way.

`closed_shells` finds the closed shells the faces hold: the vertices welded, each edge split at
the part's own vertices lying on it (a T-junction is no hole), the faces grouped into bodies
joined by manifold edges, and from each body the bodies that close its boundary added, smallest
first, until every directed edge of the set is matched by its reverse once (a closed, oriented
shell) or none can be (none from that body). A closed, oriented shell encloses its part's
material, the convention every closed part's surface is read by; the part's material is where
the winding number summed over its distinct shells is not 0 (an inner shell wound the other way,
a void, cancels the outer one).

`shell_overlap` then looks for a point p in the material of both parts whose distances to every
face of each, r_a and r_b (the exact point-triangle distance), add up to more than the band: the
ball of radius r_a about p holds no face of A, so it is all A's material, and that of radius r_b
all B's; after any move of one part shorter than r_a + r_b the two balls still overlap, so the
parts overlap by more than the band: a collision whose certificate is p (an oracle re-checks it
from the faces alone: the shells, the winding numbers, the distances). Candidates are points
along the inward normals of the shells' faces, a few distances in, at each face's centroid.
"""
from __future__ import annotations

import numpy as np

from gjkcli.engine.topology import signed_volume
from gjkcli.tolerances import DEFAULT

__all__ = ["welded", "closed_shells", "material", "shell_overlap", "shells_of"]

# Faces of a shell whose centroids start the search for a deep point, the largest first.
SEEDS = 2_048
# Edges with no reverse, at most, searched for T-junctions (beyond, none is split: a part with
# more open edges is a surface, not a solid with slits).
LONELY = 4_096
# Bodies joined into one shell, at most (a shell needing more is not found).
JOINED = 64
# Steps inward along a face's normal, as fractions of the part's size.
STEPS = (1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 2e-2, 5e-2, 0.1, 0.2)


def welded(vertices: np.ndarray, faces: np.ndarray, size: float):
    """(vertices, faces): coincident vertices merged (to DEFAULT.shell_weld_rel of `size`), each
    face with a vertex of the part on the inside of one of its edges (a T-junction) split there
    into a fan (where at most LONELY edges lack their reverse), faces left with fewer than three
    distinct corners dropped."""
    step = DEFAULT.shell_weld_rel * max(size, 1e-300)
    _, first, inverse = np.unique(np.round(vertices / step), axis=0, return_index=True, return_inverse=True)
    v = vertices[first]
    f = inverse.reshape(-1)[faces]
    f = f[(f[:, 0] != f[:, 1]) & (f[:, 1] != f[:, 2]) & (f[:, 2] != f[:, 0])]
    # directed edges whose reverse is missing carry the T-junctions
    directed = np.concatenate([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]])
    n = len(v)
    key = directed[:, 0] * n + directed[:, 1]
    lonely = ~np.isin(directed[:, 1] * n + directed[:, 0], key)
    if not lonely.any() or lonely.sum() > LONELY:
        return v, f
    ends = np.unique(directed[lonely].ravel())
    near_ends = _Near(v[ends])
    lonely = lonely.reshape(3, -1).T  # (m, 3): edge c of face k runs corner c -> c + 1
    kept = [f[~lonely.any(axis=1)]]
    out = []
    for k in np.flatnonzero(lonely.any(axis=1)):
        face, ring = f[k], []
        for c in range(3):
            u, w = face[c], face[(c + 1) % 3]
            ring.append(u)
            if not lonely[k, c]:
                continue
            a, b = v[u], v[w]
            d = b - a
            near = ends[near_ends.within(0.5 * (a + b), 0.5 * float(np.linalg.norm(d)) + step)]
            t = (v[near] - a) @ d / (d @ d)
            foot = a + t[:, None] * d
            on = (t > 0.0) & (t < 1.0) & (np.linalg.norm(v[near] - foot, axis=1) <= step)
            ring.extend(near[on][np.argsort(t[on])].tolist())
        # a fan from the first corner: the face's own plane, split only (a corner with no
        # split edge opposite it may give a sliver of no area, which closes nothing and is kept)
        out.extend((ring[0], ring[i], ring[i + 1]) for i in range(1, len(ring) - 1))
    f = np.concatenate(kept + [np.asarray(out, dtype=np.int64).reshape(-1, 3)])
    return v, f[(f[:, 0] != f[:, 1]) & (f[:, 1] != f[:, 2]) & (f[:, 2] != f[:, 0])]


class _Near:
    """The points within a box around a centre, from the points sorted along x (a binary search,
    then the box): the candidates `welded` tests for lying on an edge. A point on the inside of
    an edge (0 < t < 1, within `step` of its line) lies within half the edge's length plus `step`
    of its midpoint, so the box around that ball holds every one; NumPy alone, where a k-d tree
    would import SciPy's spatial package (0.25 to 0.4 s of an IFC scan whose parts need nothing
    else of it)."""

    def __init__(self, points: np.ndarray):
        self.points = points
        self.order = np.argsort(points[:, 0], kind="stable")
        self.x = points[self.order, 0]

    def within(self, centre: np.ndarray, r: float) -> np.ndarray:
        """Indices (ascending) of the points within `r` of `centre` along every axis."""
        lo, hi = np.searchsorted(self.x, centre[0] - r, "left"), np.searchsorted(self.x, centre[0] + r, "right")
        k = self.order[lo:hi]
        inside = (np.abs(self.points[k, 1:] - centre[1:]) <= r).all(axis=1)
        return np.sort(k[inside])


def closed_shells(vertices: np.ndarray, faces: np.ndarray) -> list:
    """The distinct closed, oriented shells among `faces` (already `welded`), each an array of
    face indices (see the module's docstring)."""
    from gjkcli.engine.topology import topology

    f = np.asarray(faces, dtype=np.int64)
    if len(f) == 0:
        return []
    body, bodies, _ = topology(f, len(vertices))
    body = np.asarray(body, dtype=np.int64)
    n = len(vertices)
    directed = np.concatenate([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]])
    key = directed[:, 0] * n + directed[:, 1]
    owner = np.tile(body, 3)
    holders: dict = {}
    for k, b in zip(key.tolist(), owner.tolist()):
        holders.setdefault(k, set()).add(b)
    size = np.bincount(body, minlength=bodies)
    order = np.argsort(owner, kind="stable")
    keys_of = np.split(key[order], np.cumsum(np.bincount(owner, minlength=bodies))[:-1])
    shells, seen = [], set()
    for start in range(bodies):
        chosen = {start}
        ok = False
        for _ in range(min(bodies, JOINED)):
            ks = np.concatenate([keys_of[b] for b in chosen])
            unique, count = np.unique(ks, return_counts=True)
            if (count > 1).any():
                break  # a directed edge twice: not one oriented surface
            rev = (unique % n) * n + unique // n
            missing = rev[~np.isin(rev, unique)]
            if len(missing) == 0:
                ok = True
                break
            need = holders.get(int(missing[0]), set()) - chosen
            if not need:
                break
            chosen.add(min(need, key=lambda b: (size[b], b)))
        if ok:
            tag = frozenset(chosen)
            if tag not in seen:
                seen.add(tag)
                shells.append(np.flatnonzero(np.isin(body, list(chosen))))
    return shells


class _Part:
    """A part's welded faces, its hierarchy and its shells', in world coordinates."""

    def __init__(self, mesh, pose):
        from gjkcli.engine.exact import Mesh

        v = mesh.vertices
        if pose is not None:
            T = np.asarray(pose, dtype=np.float64)
            v = v @ T[:3, :3].T + T[:3, 3]
        self.name = mesh.name
        self.all = Mesh(v, mesh.faces, name=mesh.name)
        wv, wf = welded(v, mesh.faces, self.all.size)
        self.welded, self.faces = wv, wf
        self.shells, self.shell_faces = [], []
        for s in closed_shells(wv, wf):
            m = Mesh(wv, wf[s], name=mesh.name)
            if m.solid:
                m.bvh.prepare_winding()
                self.shells.append(m)
                self.shell_faces.append(s)

    def nearest(self, p: np.ndarray, ws) -> tuple:
        """((k,) the distances of points p (k, 3) to every face, (k, 3) the nearest points)."""
        from gjkcli.engine import _mesh

        d, near, _ = _mesh.closest(self.all.bvh, np.ascontiguousarray(p - self.all.centre), float("inf"), 0.0, ws)
        return d, near + self.all.centre

    def winding(self, p: np.ndarray, ws) -> np.ndarray:
        from gjkcli.engine import _mesh

        w = np.zeros(len(p))
        for m in self.shells:
            w += _mesh.winding(m.bvh, np.ascontiguousarray(p - m.centre), ws)
        return w


def material(mesh, points: np.ndarray, pose=None) -> np.ndarray:
    """(k,) bool: each point lies in the material of the (open) part `mesh` as its closed shells
    enclose it (the winding number summed over its distinct shells not 0)."""
    from gjkcli.engine import _mesh

    part = _Part(mesh, pose)
    return np.abs(part.winding(np.asarray(points, dtype=np.float64).reshape(-1, 3), _mesh.Workspace())) \
        > DEFAULT.winding_inside


def shells_of(mesh, pose=None) -> list | None:
    """The closed shells of the (open) part `mesh` placed by `pose`, each as (vertices, faces)
    of its own in world coordinates, wound outwards, when their union is the part's material:
    [] when the part holds none. Shells all wound inwards are a part wound inwards throughout,
    and turned. None where some are wound each way (one may be a void in another), or where a
    body of the faces outside the shells (faces joined by manifold edges) has no rim that no
    other face closes: it may enclose material no shell found holds (a sheet, a pane, has one)."""
    part = _Part(mesh, pose)
    inward = [signed_volume(shell.vertices, shell.faces, shell.centre) < 0 for shell in part.shells]
    if (any(inward) and not all(inward)) or not _only_sheets_left(part):
        return None
    out = []
    for shell in part.shells:
        used, faces = np.unique(shell.faces, return_inverse=True)
        faces = faces.reshape(-1, 3)
        out.append((shell.vertices[used], faces[:, ::-1] if all(inward) else faces))
    return out


def _only_sheets_left(part: "_Part") -> bool:
    """Whether every body of the part's welded faces outside its shells has a rim edge whose
    reverse no face of the part runs (an open rim nothing closes: a sheet)."""
    from gjkcli.engine.topology import topology

    f = part.faces
    inside = np.zeros(len(f), dtype=bool)
    for shell in part.shell_faces:
        inside[shell] = True
    rest = f[~inside]
    if len(rest) == 0:
        return True
    n = len(part.welded)
    runs = set((f[:, [0, 1, 2]] * n + f[:, [1, 2, 0]]).ravel().tolist())  # every directed edge
    body, bodies, _ = topology(rest, n)
    body = np.asarray(body, dtype=np.int64)
    reverse = rest[:, [1, 2, 0]] * n + rest[:, [0, 1, 2]]
    open_rim = np.array([[k not in runs for k in row] for row in reverse.tolist()], dtype=bool).any(axis=1)
    return bool(np.all(np.bincount(body[open_rim], minlength=bodies) > 0))


def shell_overlap(a, b, *, pose_a=None, pose_b=None, band: float):
    """A point in the material of both open parts a and b (`gjkcli.engine.exact.Mesh`, placed
    by their poses) whose distances to every face of each add up to more than the band: (depth,
    point, a point of A, a point of B, which shells "a" and "b" have) with depth that sum (a
    lower bound of the parts' penetration depth) and the points of A and B the far sides of the
    two balls about the point (the nearest face of B's way), or None (see the module's
    docstring)."""
    from gjkcli.engine import _mesh

    pa, pb = _Part(a, pose_a), _Part(b, pose_b)
    if not pa.shells or not pb.shells:
        return None
    ws = _mesh.Workspace()
    slack = DEFAULT.exact_snap_rel * max(pa.all.size, pb.all.size)
    lo = np.maximum(pa.all.local_lo + pa.all.centre, pb.all.local_lo + pb.all.centre) - band
    hi = np.minimum(pa.all.local_hi + pa.all.centre, pb.all.local_hi + pb.all.centre) + band
    if np.any(lo > hi):
        return None
    best = None
    for part in (pa, pb):
        for shell in part.shells:
            tri = shell.vertices[shell.faces]
            centroid = tri.mean(axis=1)
            cross = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
            area = np.linalg.norm(cross, axis=1)
            keep = (area > 0) & np.all((centroid >= lo) & (centroid <= hi), axis=1)
            if not keep.any():
                continue
            rows = np.flatnonzero(keep)[np.argsort(-area[keep])][:SEEDS]
            normal = cross[rows] / area[rows, None]
            # inward: against the normals of a shell wound outward (positive volume)
            inward = -normal if signed_volume(shell.vertices, shell.faces, shell.centre) > 0 else normal
            steps = np.asarray(STEPS) * part.all.size
            pts = (centroid[rows][:, None, :] + steps[None, :, None] * inward[:, None, :]).reshape(-1, 3)
            pts = pts[np.all((pts >= lo) & (pts <= hi), axis=1)]
            if len(pts) == 0:
                continue
            (da, _), (db, near_b) = pa.nearest(pts, ws), pb.nearest(pts, ws)
            deep = da + db
            good = deep > band + slack
            if not good.any():
                continue
            pts, deep, da, near_b = pts[good], deep[good], da[good], near_b[good]
            inside = (np.abs(pa.winding(pts, ws)) > DEFAULT.winding_inside) & \
                     (np.abs(pb.winding(pts, ws)) > DEFAULT.winding_inside)
            if not inside.any():
                continue
            q = int(np.argmax(np.where(inside, deep, -np.inf)))
            if best is None or deep[q] > best[0]:
                best = (float(deep[q]), pts[q].copy(), float(da[q]), near_b[q].copy())
    if best is None:
        return None
    depth, p, ra, cb = best
    u = cb - p
    length = float(np.linalg.norm(u))
    u = u / length if length > 0 else np.array([0.0, 0.0, 1.0])
    return depth, p, p - ra * u, cb, (len(pa.shells), len(pb.shells))
