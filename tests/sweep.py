"""The seeded sweep of issue 40: pairs of non-convex parts (tori, gears, boxes with a pocket or a
void, and real meshes from ../shared/meshes when there) placed a known amount into each other or
apart, at touching bands from 1e-6 to 5e-2 of the pair's size, each answered by gjk's triangle
test and the run's settling policy (`gjkcli.pipeline.policy.settle`) and judged by oracles that
are not gjk. tests/pipeline/test_undecided_sweep.py runs a small sample of it;
benchmarks/sweep_undecided.py the whole sweep, with the undecided count per band.

How a pair is placed (B moved along a seeded direction d towards A, which stays put):
first contact t0 by conservative advancement with python-fcl's exact triangle distance (B moved
along d by the parts' distance until it is within 1e-13 of the size; a move shorter than the
distance cannot make them meet), then B moved on past it by a depth `delta` or held back by a
gap `g`:

- pressed in by delta (B at t0 + delta): moving B back by delta parts them (it was just touching
  there), so the penetration depth is at most delta. delta within the band: the truth is
  touching (never a collision). delta beyond the band: a collision when a point of B lies deeper
  than the band inside A by the exact signed distance of tests/exact_distance.py (its vertices
  and points sampled on its faces), and manifold3d's common volume is positive; a pair where the
  oracle finds no such point is not judged (counted as such), its depth unknown between them.
- held back by g (B at t0 - g): the truth is python-fcl's distance: clear beyond the band,
  touching within it.

A verdict is wrong when it contradicts the truth; undecided is counted apart (never wrong, but
the issue's target is at most 0.1% of the pairs at every band). Where the truth stays open, gjk's
own evidence is judged by the same oracles (`certified`).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

SHARED = Path(__file__).resolve().parents[2] / "shared" / "meshes"
# Real meshes of ../shared/meshes that are closed, non-convex solids (loaded, merged, scaled).
REAL = ("torus.STL", "octagonal_pocket.stl", "angle_block.STL", "idler_riser.STL", "plate_holes.STL",
        "1002_tray_bottom.STL", "featuretype.STL", "fandisk.obj")
BANDS = (1e-6, 3e-6, 1e-5, 3e-5, 1e-4, 1e-3, 1e-2, 5e-2)
# (kind, amount in bands): depths pressed in, gaps held back; just under and just over the band
OFFSETS = (("depth", 0.5), ("depth", 0.97), ("depth", 1.05), ("depth", 1.5), ("depth", 3.7),
           ("depth", 20.0), ("gap", 0.5), ("gap", 0.97), ("gap", 1.05), ("gap", 2.0))


@dataclass(frozen=True)
class Part:
    name: str
    vertices: np.ndarray
    faces: np.ndarray


def _unit(name, vertices, faces) -> Part:
    """The part centred at the origin and scaled to a bounding-box diagonal of 1."""
    v = np.asarray(vertices, dtype=np.float64)
    lo, hi = v.min(axis=0), v.max(axis=0)
    return Part(name, (v - 0.5 * (lo + hi)) / float(np.linalg.norm(hi - lo)), np.asarray(faces, dtype=np.int64))


def generated() -> list:
    """Tori, a gear, a box with a pocket and a box with a void (closed, outward)."""
    import manifold3d
    import trimesh
    from shapely.geometry import Polygon

    def from_manifold(name, m):
        out = m.to_mesh()
        return _unit(name, np.asarray(out.vert_properties)[:, :3], np.asarray(out.tri_verts))

    parts = [_unit("torus", *_arrays(trimesh.creation.torus(1.0, 0.3, major_sections=48, minor_sections=24))),
             _unit("thin torus", *_arrays(trimesh.creation.torus(1.0, 0.08, major_sections=64, minor_sections=12)))]
    teeth, r_in, r_out = 14, 0.8, 1.0
    angles = np.linspace(0, 2 * np.pi, 4 * teeth, endpoint=False)
    radius = np.where((np.arange(4 * teeth) // 2) % 2 == 0, r_out, r_in)
    gear = Polygon(np.column_stack([radius * np.cos(angles), radius * np.sin(angles)])).difference(
        Polygon(0.3 * np.column_stack([np.cos(angles), np.sin(angles)])))
    parts.append(_unit("gear", *_arrays(trimesh.creation.extrude_polygon(gear, 0.25))))
    box = manifold3d.Manifold.cube([1.0, 0.8, 0.6], center=True)
    pocket = manifold3d.Manifold.cube([0.6, 0.4, 0.5], center=True).translate([0.0, 0.0, 0.2])
    parts.append(from_manifold("box with a pocket", box - pocket))
    void = manifold3d.Manifold.cube([0.5, 0.3, 0.2], center=True)
    parts.append(from_manifold("box with a void", box - void))
    return parts


def real() -> list:
    """The closed meshes of REAL found in ../shared/meshes (none when the folder is absent)."""
    import trimesh

    out = []
    for name in REAL:
        path = SHARED / name
        if not path.is_file():
            continue
        m = trimesh.load(path, force="mesh")
        m.merge_vertices()
        if not (m.is_watertight and m.is_winding_consistent) or len(m.faces) > 6000:
            continue
        if m.volume < 0:
            m.invert()
        out.append(_unit(name, m.vertices, m.faces))
    return out


def _arrays(m):
    return np.asarray(m.vertices), np.asarray(m.faces)


def _rotation(rng) -> np.ndarray:
    q = rng.normal(size=4)
    w, x, y, z = q / np.linalg.norm(q)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


class _Fcl:
    def __init__(self, part: Part):
        import fcl

        self.fcl = fcl
        self.model = fcl.BVHModel()
        self.model.beginModel(len(part.vertices), len(part.faces))
        self.model.addSubModel(part.vertices, part.faces)
        self.model.endModel()

    def distance(self, other: "_Fcl", pose: np.ndarray, face: bool = False):
        """python-fcl's distance of this part (as given) and `other` at `pose`; 0.0 when their
        surfaces meet. face=True: (distance, this part's nearest face)."""
        fcl = self.fcl
        a = fcl.CollisionObject(self.model, fcl.Transform())
        b = fcl.CollisionObject(other.model, fcl.Transform(pose[:3, :3], pose[:3, 3]))
        if fcl.collide(a, b, fcl.CollisionRequest(), fcl.CollisionResult()):
            return (0.0, -1) if face else 0.0
        got = fcl.DistanceResult()
        dist = float(fcl.distance(a, b, fcl.DistanceRequest(enable_nearest_points=True), got))
        return (dist, int(got.b1)) if face else dist


@dataclass(frozen=True)
class Case:
    a: Part
    b: Part
    pose: np.ndarray          # B's 4x4 pose (A as given)
    band: float               # model units (the sizes are 1)
    rel: float                # the band in sizes
    kind: str                 # "depth" or "gap"
    amount: float             # in bands
    truth: str | None         # "touching", "collision", "clear"; None: not judged


def _advance(fa, fb, R, d, aim, t):
    """Conservative advancement of B (turned by R, at aim + t d) along d until it meets A: (t0,
    A's face nearest just before) or None where it passes A by."""
    face = -1
    for _ in range(400):
        pose = np.eye(4)
        pose[:3, :3], pose[:3, 3] = R, aim + t * d
        dist, near = fa.distance(fb, pose, face=True)
        if dist <= 1e-13:
            return t, face
        face = near
        t += dist
        if t > 3.0:
            return None
    return None


def placements(a: Part, b: Part, rng, count: int) -> list:
    """(R, d, aim, t0) x count: B turned by R, at aim + t d, first meets A at t0. A seeded line
    through A finds a first contact; B is then pressed along the inward normal of A's face there
    (so that a depth pressed in is the depth of B's contact point, which the oracle finds)."""
    fa, fb = _Fcl(a), _Fcl(b)
    normals = np.cross(a.vertices[a.faces[:, 1]] - a.vertices[a.faces[:, 0]],
                       a.vertices[a.faces[:, 2]] - a.vertices[a.faces[:, 0]])
    normals /= np.linalg.norm(normals, axis=1)[:, None]
    out = []
    while len(out) < count:
        R = _rotation(rng)
        d = rng.normal(size=3)
        d /= np.linalg.norm(d)
        aim = rng.uniform(-0.2, 0.2, size=3)  # the line passes near A's centre
        got = _advance(fa, fb, R, d, aim, -3.0)
        if got is None or got[1] < 0:
            continue
        t0, face = got
        n = normals[face]  # outward: B pressed along -n goes into A
        start = aim + t0 * d + 0.05 * n
        pose = np.eye(4)
        pose[:3, :3], pose[:3, 3] = R, start
        if fa.distance(fb, pose) < 0.01:  # backed off along n, B must be clear of A to start
            continue
        got = _advance(fa, fb, R, -n, start, 0.0)
        if got is None:
            continue
        out.append((R, -n, start, got[0]))
    return out


def cases(a: Part, b: Part, rng, places: int, bands=BANDS, offsets=OFFSETS) -> list:
    """The sweep's cases of the pair (A, B): `places` placements, each at every band and offset,
    with the truth the oracles give."""
    fa, fb = _Fcl(a), _Fcl(b)
    out = []
    for R, d, aim, t0 in placements(a, b, rng, places):
        for rel in bands:
            band = rel  # the parts' size is 1
            for kind, amount in offsets:
                t = t0 + amount * band if kind == "depth" else t0 - amount * band
                pose = np.eye(4)
                pose[:3, :3], pose[:3, 3] = R, aim + t * d
                out.append(Case(a, b, pose, band, rel, kind, amount, _truth(a, b, fa, fb, pose, band, kind, amount)))
    return out


def _truth(a, b, fa, fb, pose, band, kind, amount) -> str | None:
    if kind == "gap":
        dist = fa.distance(fb, pose)
        if dist == 0.0:  # the surfaces meet elsewhere: not the construction's
            return None
        return "clear" if dist > band else "touching"
    if amount <= 1.0:
        return "touching"  # moved back by amount x band along d, they are apart
    deepest = deepest_inside(a, b, pose)
    return "collision" if deepest > band else None


# A part and its copy: in place, and moved off it along a seeded direction by these many bands
COPY_SHIFTS = (0.0, 0.5, 2.0)


def copies(part: Part, rng, bands=BANDS, shifts=COPY_SHIFTS) -> list:
    """The sweep's cases of a part and its copy (a duplicated element: every point of each
    surface on the other's, or near it), at every band and shift; the truth a collision where
    `deepest_in_both` finds a point whose distances to both surfaces add up past the band (a
    move shorter than that leaves the balls about it overlapping), else not judged."""
    d = rng.normal(size=3)
    d /= np.linalg.norm(d)
    out = []
    for rel in bands:
        for amount in shifts:
            pose = np.eye(4)
            pose[:3, 3] = amount * rel * d
            truth = "collision" if deepest_in_both(part, part, pose) > rel else None
            out.append(Case(part, part, pose, rel, rel, "copy", amount, truth))
    return out


def deepest_in_both(a: Part, b: Part, pose: np.ndarray, samples: int = 2000) -> float:
    """A lower bound of the penetration depth of A and B (at `pose`): the largest sum of a
    point's exact signed distances (tests/exact_distance.py) to both surfaces, over points
    sampled in A's box that lie inside both (trimesh's approximate distances choose the 24
    candidates the exact ones judge)."""
    from exact_distance import signed_distance

    import trimesh

    m_a = trimesh.Trimesh(a.vertices, a.faces, process=False)
    m_b = trimesh.Trimesh(b.vertices @ pose[:3, :3].T + pose[:3, 3], b.faces, process=False)
    lo, hi = m_a.bounds
    pts = np.random.default_rng(0).uniform(lo, hi, size=(samples, 3))
    rough = trimesh.proximity.signed_distance(m_a, pts) + 0.0
    rough_b = trimesh.proximity.signed_distance(m_b, pts)
    both = np.minimum(rough, rough_b) > 0
    if not both.any():
        return 0.0
    keep = pts[both][np.argsort(-(rough + rough_b)[both])[:24]]
    in_a, in_b = signed_distance(m_a, keep), signed_distance(m_b, keep)
    good = (in_a > 0) & (in_b > 0)
    return float((in_a + in_b)[good].max()) if good.any() else 0.0


def deepest_inside(a: Part, b: Part, pose: np.ndarray, samples: int = 400) -> float:
    """A lower bound of the penetration depth: the deepest of B's vertices and points sampled on
    its faces inside A, and of A's inside B, by the exact signed distance (tests/exact_distance.py)
    of the points near the other part."""
    from exact_distance import signed_distance

    import trimesh

    rng = np.random.default_rng(0)
    best = 0.0
    for inner, outer, T in ((b, a, pose), (a, b, np.linalg.inv(pose))):
        m_in = trimesh.Trimesh(inner.vertices @ T[:3, :3].T + T[:3, 3], inner.faces, process=False)
        m_out = trimesh.Trimesh(outer.vertices, outer.faces, process=False)
        pts = np.concatenate([m_in.vertices, trimesh.sample.sample_surface(m_in, samples, seed=rng)[0]])
        lo, hi = m_out.bounds
        pts = pts[np.all((pts >= lo) & (pts <= hi), axis=1)]
        if len(pts) == 0:
            continue
        # the nearest candidates first by trimesh's (approximate) distance, the judge exact
        rough = trimesh.proximity.signed_distance(m_out, pts)
        keep = pts[np.argsort(-rough)[:24]]
        got = signed_distance(m_out, keep)
        best = max(best, float(got.max()))
    return best


def answer(case: Case):
    """gjk's verdicts of the case: (the triangle test's alone, then with the run's settling
    policy applied)."""
    from gjkcli.engine.exact import exact_query
    from gjkcli.pipeline.policy import settle

    ma = _mesh(case.a)
    mb = _mesh(case.b)
    r = exact_query(ma, mb, pose_b=case.pose, tolerance=case.band)
    return r, settle(r, ma, mb, None, case.pose)


_MESHES: dict = {}


def _mesh(part: Part):
    from gjkcli.engine.exact import Mesh

    key = id(part)  # the part is held with its mesh, so the id stays its own
    if key not in _MESHES:
        _MESHES[key] = (part, Mesh(part.vertices, part.faces, name=part.name))
    return _MESHES[key][1]


def wrong(case: Case, status: str) -> bool:
    """The verdict contradicts the oracle's truth (undecided never does)."""
    if case.truth is None or status == "undecided":
        return False
    return status != case.truth


def certified(case: Case, r) -> bool | None:
    """Where the construction and the oracles leave the truth open (a depth just over the band
    that no sampled point reaches): gjk's own evidence judged by the oracles. A collision: its
    witness lies deeper than the band inside the other part by the exact signed distance. A
    touching with a shift: B moved by it (and a hair more) is apart by python-fcl and no vertex
    of either part lies inside the other (the exact winding number). A clear: python-fcl's
    distance beyond the band and no vertex inside. True: right; False: wrong; None: no evidence
    an oracle can judge (a fit settled by its common solid's mean thickness). A collision
    certified by a point inside both parts (`gjkcli.pipeline.policy.deeper_in_common`): that
    point's exact signed distances to both surfaces, positive, adding up past the band."""
    import trimesh
    from exact_distance import signed_distance, winding_number

    status = r.status.value
    placed_b = case.b.vertices @ case.pose[:3, :3].T + case.pose[:3, 3]
    if status == "collision":
        mesh_a = trimesh.Trimesh(case.a.vertices, case.a.faces, process=False)
        mesh_b = trimesh.Trimesh(placed_b, case.b.faces, process=False)
        deepest = max(float(signed_distance(mesh_b, [r.point_a])[0]), float(signed_distance(mesh_a, [r.point_b])[0]))
        if deepest > case.band * (1 - 1e-9):
            return True
        # a point inside both whose distances to their surfaces add up past the band: a move
        # shorter than their sum leaves the balls about it, one in each part, overlapping
        point = getattr(r.certificate, "point", None)
        if point is None:
            return False
        in_a, in_b = float(signed_distance(mesh_a, [point])[0]), float(signed_distance(mesh_b, [point])[0])
        return in_a > 0 and in_b > 0 and in_a + in_b > case.band * (1 - 1e-9)
    pose = case.pose.copy()
    if status == "touching":
        cert = r.certificate
        if cert is None or getattr(cert, "kind", None) != "shift":
            return None
        move = np.asarray(cert.shift, dtype=float)
        length = float(np.linalg.norm(move))
        if length > case.band * (1 + 1e-9):
            return False
        # a hair more than the certificate's move: its surfaces may meet within the snap
        pose[:3, 3] += move * (1 + 1e-7) if length > 0 else 0.0
    if status in ("touching", "clear"):
        gap = _Fcl(case.a).distance(_Fcl(case.b), pose)
        if status == "clear" and gap <= case.band:
            return False
        if status == "touching" and gap == 0.0:
            return None  # met within the snap even so: python-fcl cannot tell
        moved_b = case.b.vertices @ pose[:3, :3].T + pose[:3, 3]
        inside = (winding_number(case.a.vertices, case.a.faces, moved_b[:1]) > 0.5).any() or \
            (winding_number(moved_b, case.b.faces, case.a.vertices[:1]) > 0.5).any()
        return not inside
    return None
