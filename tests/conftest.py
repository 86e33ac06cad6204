"""Shared fixtures and oracles for the engine's tests.

The engine never judges itself here. Every expected answer comes from something that is not
gjkcli.engine._core:
- `lp_intersects`: a linear programme asks whether a convex combination of A's vertices equals one
  of B's (scipy's HiGHS);
- `minkowski_oracle`: qhull builds the Minkowski difference A - B of small hulls; the distance is
  the origin's distance to its facets (exact closest point on each triangle), the depth the
  nearest facet plane;
- `coal_oracle`, `fcl_oracle`: the two collision libraries on the same vertex arrays. Their known
  failures (sentinels, crashes, wrong depths) are tallied in `ORACLE_LOG` and printed at the end of
  the run, not hidden;
- analytic answers: spheres, axis-aligned boxes, capsules (segment-segment distance);
- `depth_by_directions`: for primitives, the least overlap of A - B over many directions, from the
  analytic support of gjkcli.engine.certify (written apart from the engine).
"""
from __future__ import annotations

import collections
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import linprog
from scipy.spatial import ConvexHull

from gjkcli.engine.certify import check_certificate, support_value
from gjkcli.engine.results import Status

# The command line keeps a cache in .gjk_cache of the working folder (gjkcli.pipeline.cache): the
# suite runs without it (its subprocesses inherit this), so that no test writes into the
# repository and none sees another's answers; tests/pipeline/test_cache.py and
# tests/cli/test_cache_cli.py turn it on with a --cache-dir in their tmp_path.
os.environ["GJK_NO_CACHE"] = "1"

SHARED = Path(__file__).resolve().parents[2] / "shared"
MESHES = SHARED / "meshes"


# -- the shared folder ----------------------------------------------------------------------------


@pytest.fixture(scope="session")
def meshes_dir() -> Path:
    """../shared/meshes, or a skip that says why."""
    if not MESHES.is_dir():
        pytest.skip(f"the real-world meshes are not at {MESHES} (they live in ../shared beside the project)")
    return MESHES


@pytest.fixture(scope="session")
def real_meshes(meshes_dir):
    """(name, (n, 3) vertices) of every real mesh trimesh reads with at least 4 vertices."""
    return mesh_hull_points(meshes_dir)


@pytest.fixture(scope="session")
def big_sphere_hull():
    """A hull of 100,000 vertices (points on a sphere) and its points."""
    from gjkcli.engine.shapes import Shape

    rng = np.random.default_rng(100000)
    points = rng.normal(size=(100000, 3))
    points /= np.linalg.norm(points, axis=1)[:, None]
    return Shape.hull(points), points


def mesh_hull_points(meshes_dir: Path):
    """(name, (n, 3) vertices) of every real mesh trimesh reads with at least 4 vertices."""
    import trimesh

    out = []
    for path in sorted(meshes_dir.iterdir()):
        if path.suffix.lower() not in {".stl", ".obj", ".ply", ".off", ".glb", ".gltf", ".3mf"}:
            continue
        try:
            mesh = trimesh.load(path, force="mesh", skip_materials=True)
        except Exception:  # noqa: BLE001 - a file trimesh cannot read is no engine case
            continue
        vertices = np.asarray(getattr(mesh, "vertices", np.zeros((0, 3))), dtype=np.float64)
        if len(vertices) >= 4:
            out.append((path.name, vertices))
    return out


# -- seeded randomness ----------------------------------------------------------------------------


def rng_for(name: str, seed: int = 0) -> np.random.Generator:
    """A generator seeded by a test's own name, so that tests do not share streams."""
    return np.random.default_rng([seed, *name.encode()])


def random_rotation(rng) -> np.ndarray:
    """A uniformly random rotation: QR of a Gaussian matrix, signs fixed (Mezzadri 2007)."""
    q, r = np.linalg.qr(rng.normal(size=(3, 3)))
    q = q * np.sign(np.diag(r))
    if np.linalg.det(q) < 0:
        q[:, 0] = -q[:, 0]
    return q


def rigid(R=None, t=(0.0, 0.0, 0.0)) -> np.ndarray:
    """A 4x4 rigid transform."""
    T = np.eye(4)
    if R is not None:
        T[:3, :3] = R
    T[:3, 3] = t
    return T


def random_rigid(rng, reach: float = 1.0) -> np.ndarray:
    return rigid(random_rotation(rng), rng.normal(size=3) * reach)


def random_cloud(rng, n: int, scale=1.0) -> np.ndarray:
    """n points of an anisotropic Gaussian, randomly rotated: (n, 3)."""
    axes = rng.uniform(0.2, 1.5, 3) * scale
    return (rng.normal(size=(n, 3)) * axes) @ random_rotation(rng).T


def pair_size(VA, VB) -> float:
    """The engine's pair size for two hulls built from these points in the world frame."""
    return max(float(np.linalg.norm(np.ptp(VA, axis=0))), float(np.linalg.norm(np.ptp(VB, axis=0))))


# -- the band a signed distance falls in -----------------------------------------------------------


def expected_status(signed_distance: float, tol: float) -> Status:
    """touching when |s| <= tol, clear when s > tol, collision when the depth -s > tol."""
    if abs(signed_distance) <= tol:
        return Status.TOUCHING
    return Status.CLEAR if signed_distance > 0 else Status.COLLISION


def assert_sane(result):
    """No NaN or infinity anywhere, never undecided, a unit normal wherever one is defined.

    An intersecting pair asked without its depth (want "distance" or "intersect") has no normal:
    the engine leaves it zero.
    """
    values = [result.distance, result.distance_lower, *result.normal, *result.point_a, *result.point_b]
    if result.depth is not None:
        values.append(result.depth)
    assert np.all(np.isfinite(values)), result
    if result.depth is not None or result.distance > 0.0:
        assert abs(np.linalg.norm(result.normal) - 1.0) < 1e-9, result.normal
    assert result.status is not Status.UNDECIDED, result


def assert_certified(a, b, result, slack=None):
    """The certificate holds under gjkcli.engine.certify's independent half-space tests."""
    why = check_certificate(a, b, result, slack)
    assert why is None, f"{why}\n{result}"


# -- LP oracle --------------------------------------------------------------------------------------


def lp_intersects(VA, VB) -> bool:
    """Do the hulls share a point? Feasibility of sum(l) = sum(m) = 1, l, m >= 0, VA^T l = VB^T m."""
    na, nb = len(VA), len(VB)
    A_eq = np.zeros((5, na + nb))
    A_eq[:3, :na] = np.asarray(VA).T
    A_eq[:3, na:] = -np.asarray(VB).T
    A_eq[3, :na] = 1.0
    A_eq[4, na:] = 1.0
    b_eq = np.array([0.0, 0.0, 0.0, 1.0, 1.0])
    res = linprog(np.zeros(na + nb), A_eq=A_eq, b_eq=b_eq, bounds=(0, None), method="highs")
    if res.status not in (0, 2):
        raise RuntimeError(f"linprog gave no answer: {res.message}")
    return res.status == 0


# -- qhull Minkowski-difference oracle ----------------------------------------------------------------


def closest_on_triangles(a, b, c) -> np.ndarray:
    """The point of each triangle (a[k], b[k], c[k]) nearest the origin: (k, 3).

    Ericson 2005, section 5.1.5, for all triangles at once; regions are claimed in Ericson's order.
    """
    ab, ac = b - a, c - a
    dot = lambda u, v: np.einsum("ij,ij->i", u, v)  # noqa: E731
    d1, d2 = dot(ab, -a), dot(ac, -a)
    d3, d4 = dot(ab, -b), dot(ac, -b)
    d5, d6 = dot(ab, -c), dot(ac, -c)
    va, vb, vc = d3 * d6 - d5 * d4, d5 * d2 - d1 * d6, d1 * d4 - d3 * d2
    out = np.empty_like(a)
    done = np.zeros(len(a), dtype=bool)

    def claim(mask, value):
        take = mask & ~done
        out[take] = value[take]
        done[take] = True

    with np.errstate(divide="ignore", invalid="ignore"):
        claim((d1 <= 0) & (d2 <= 0), a)
        claim((d3 >= 0) & (d4 <= d3), b)
        claim((vc <= 0) & (d1 >= 0) & (d3 <= 0), a + (d1 / (d1 - d3))[:, None] * ab)
        claim((d6 >= 0) & (d5 <= d6), c)
        claim((vb <= 0) & (d2 >= 0) & (d6 <= 0), a + (d2 / (d2 - d6))[:, None] * ac)
        claim((va <= 0) & (d4 - d3 >= 0) & (d5 - d6 >= 0),
              b + ((d4 - d3) / ((d4 - d3) + (d5 - d6)))[:, None] * (c - b))
        denom = 1.0 / (va + vb + vc)
        claim(np.ones(len(a), dtype=bool), a + (vb * denom)[:, None] * ab + (vc * denom)[:, None] * ac)
    return out


@dataclass(frozen=True)
class Minkowski:
    """The qhull oracle's answer for a pair of hulls.

    signed_distance : distance when apart, minus the depth when the origin is inside A - B
    normal : (3,) unit, from A towards B (the direction B moves to separate, or the gap's)
    """

    signed_distance: float
    normal: np.ndarray


def minkowski_oracle(VA, VB) -> Minkowski:
    """Signed distance of two small hulls (<= 30 vertices each) from qhull's A - B."""
    VA, VB = np.asarray(VA, dtype=np.float64), np.asarray(VB, dtype=np.float64)
    M = (VA[:, None, :] - VB[None, :, :]).reshape(-1, 3)
    hull = ConvexHull(M)
    eq = hull.equations  # n.x + c <= 0 inside, n unit
    if np.all(eq[:, 3] < 0.0):  # the origin is inside: depth = the nearest facet plane
        k = int(np.argmin(-eq[:, 3]))
        return Minkowski(float(eq[k, 3]), -eq[k, :3])
    tri = M[hull.simplices]
    q = closest_on_triangles(tri[:, 0], tri[:, 1], tri[:, 2])
    norms = np.linalg.norm(q, axis=1)
    k = int(np.argmin(norms))
    if norms[k] == 0.0:
        k2 = int(np.argmax(eq[:, 3]))
        return Minkowski(0.0, -eq[k2, :3])
    return Minkowski(float(norms[k]), -q[k] / norms[k])


# -- coal and python-fcl --------------------------------------------------------------------------


class OracleLog:
    """How often each outside oracle was asked, and how it failed: printed at the end of the run."""

    def __init__(self):
        self.counts = collections.Counter()

    def add(self, oracle: str, case: str, outcome: str):
        self.counts[(oracle, case, outcome)] += 1

    def lines(self):
        totals = collections.Counter()
        for (oracle, case, _), n in self.counts.items():
            totals[(oracle, case)] += n
        out = []
        for (oracle, case), total in sorted(totals.items()):
            parts = [f"{outcome} {n}" for (o, c, outcome), n in sorted(self.counts.items())
                     if (o, c) == (oracle, case)]
            out.append(f"{oracle:>14s} | {case:<34s} | {total:5d} asked: " + ", ".join(parts))
        return out


ORACLE_LOG = OracleLog()


def pytest_terminal_summary(terminalreporter):
    lines = ORACLE_LOG.lines()
    if lines:
        terminalreporter.section("outside oracles: how often each was asked and how it failed")
        for line in lines:
            terminalreporter.write_line(line)


def _hull_triangles(V):
    """Vertices and outward triangles of the hull of V, for the libraries' convex types."""
    hull = ConvexHull(V)
    return np.asarray(V, dtype=np.float64)[hull.vertices], _remap(hull)


def _remap(hull):
    remap = np.full(len(hull.points), -1, dtype=np.int64)
    remap[hull.vertices] = np.arange(len(hull.vertices))
    tris = remap[hull.simplices]
    # qhull's triangles are not consistently wound: turn each to face away from the centroid
    P = hull.points[hull.vertices]
    centre = P.mean(axis=0)
    n = np.cross(P[tris[:, 1]] - P[tris[:, 0]], P[tris[:, 2]] - P[tris[:, 0]])
    flip = np.einsum("ij,ij->i", n, P[tris[:, 0]] - centre) < 0
    tris[flip] = tris[flip][:, [0, 2, 1]]
    return tris


COAL_SENTINEL = -1e300


def coal_oracle(VA, VB, case: str, tolerance: float | None = None):
    """coal's signed distance (negative: minus the depth) of two hulls, or None when it fails.

    tolerance : coal's GJK and EPA tolerances (its default, 1e-6, when None).
    """
    import coal

    def convex(V):
        P, tris = _hull_triangles(V)
        verts = coal.StdVec_Vec3s()
        for p in P:
            verts.append(p)
        triangles = coal.StdVec_Triangle()
        for t in tris:
            triangles.append(coal.Triangle(int(t[0]), int(t[1]), int(t[2])))
        return coal.Convex(verts, triangles)

    I = coal.Transform3s()
    request = coal.DistanceRequest()
    if tolerance is not None:
        request.gjk_tolerance = request.epa_tolerance = tolerance
    try:
        value = coal.distance(convex(VA), I, convex(VB), I, request, coal.DistanceResult())
    except Exception:  # noqa: BLE001 - a library error is an oracle failure, recorded
        ORACLE_LOG.add("coal", case, "raised")
        return None
    if not np.isfinite(value) or value < COAL_SENTINEL:
        ORACLE_LOG.add("coal", case, "sentinel -1.8e308")
        return None
    ORACLE_LOG.add("coal", case, "answered")
    return float(value)


def _fcl_job(VA, VB, want_depth):
    """Runs in a worker process: FCL's libccd path aborts the process on some near-touching pairs."""
    import fcl

    def convex(V):
        P, tris = _hull_triangles(V)
        faces = np.hstack([np.full((len(tris), 1), 3), tris]).ravel()
        return fcl.CollisionObject(fcl.Convex(P, len(tris), faces))

    a, b = convex(VA), convex(VB)
    out = {"signed": fcl.distance(a, b, fcl.DistanceRequest(enable_signed_distance=True), fcl.DistanceResult())}
    if want_depth:
        for name, solver in (("libccd", fcl.GJKSolverType.GST_LIBCCD), ("indep", fcl.GJKSolverType.GST_INDEP)):
            request = fcl.CollisionRequest(enable_contact=True, num_max_contacts=1, gjk_solver_type=solver)
            result = fcl.CollisionResult()
            hit = fcl.collide(a, b, request, result)
            out[name] = abs(result.contacts[0].penetration_depth) if hit and result.contacts else None
    return out


def _quiet_worker():
    """FCL's abort prints a C++ message and Python's fatal-error dump: keep them off the test log."""
    import faulthandler
    import os

    faulthandler.disable()
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)


class _FclWorker:
    def __init__(self):
        self.pool = None

    def __call__(self, VA, VB, want_depth):
        if self.pool is None:
            self.pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork"),
                                            initializer=_quiet_worker)
        try:
            return self.pool.submit(_fcl_job, np.asarray(VA), np.asarray(VB), want_depth).result(timeout=120)
        except BrokenProcessPool:
            self.pool = None
            return None


_FCL = _FclWorker()


def fcl_oracle(VA, VB, case: str, want_depth: bool = False):
    """python-fcl's answers for two hulls, from a worker process, or None when it crashed.

    Returns a dict: "signed" (fcl.distance with signed distance), and with want_depth the
    penetration depth of fcl.collide with each GJK solver ("libccd", FCL's default, and "indep").
    """
    out = _FCL(VA, VB, want_depth)
    if out is None:
        ORACLE_LOG.add("python-fcl", case, "process aborted")
        return None
    ORACLE_LOG.add("python-fcl", case, "answered")
    return out


# -- analytic oracles ---------------------------------------------------------------------------------


def segment_distance(p1, q1, p2, q2) -> float:
    """Distance between segments p1q1 and p2q2 (Ericson 2005, section 5.1.9)."""
    p1, q1, p2, q2 = (np.asarray(x, dtype=np.float64) for x in (p1, q1, p2, q2))
    d1, d2, r = q1 - p1, q2 - p2, p1 - p2
    a, e, f = d1 @ d1, d2 @ d2, d2 @ r
    if a == 0.0 and e == 0.0:
        return float(np.linalg.norm(r))
    if a == 0.0:
        s, t = 0.0, float(np.clip(f / e, 0.0, 1.0))
    else:
        c = d1 @ r
        if e == 0.0:
            s, t = float(np.clip(-c / a, 0.0, 1.0)), 0.0
        else:
            b = d1 @ d2
            denom = a * e - b * b
            s = float(np.clip((b * f - c * e) / denom, 0.0, 1.0)) if denom > 0.0 else 0.0
            t = (b * s + f) / e
            if t < 0.0:
                s, t = float(np.clip(-c / a, 0.0, 1.0)), 0.0
            elif t > 1.0:
                s, t = float(np.clip((b - c) / a, 0.0, 1.0)), 1.0
    return float(np.linalg.norm(p1 + d1 * s - (p2 + d2 * t)))


def fibonacci_directions(n: int) -> np.ndarray:
    """n unit vectors spread evenly over the sphere: (n, 3)."""
    i = np.arange(n) + 0.5
    phi = np.arccos(1.0 - 2.0 * i / n)
    theta = np.pi * (1.0 + 5.0**0.5) * i
    return np.column_stack([np.cos(theta) * np.sin(phi), np.sin(theta) * np.sin(phi), np.cos(phi)])


def depth_by_directions(a, b, n: int = 8000, starts: int = 6, rounds: int = 40) -> float:
    """Penetration depth as min over unit n of max_A n.x - min_B n.x (the support of A - B).

    Dense directions over the sphere, then from the best few a search that samples a cap around
    the best direction so far and halves the cap each round. Every value is an overlap along some
    direction, so the answer is never below the true depth; the search brings it down to it.
    """
    rng = np.random.default_rng(0)
    D = fibonacci_directions(n)
    h = support_value(a, D) + support_value(b, -D)
    best = float(np.min(h))
    for k in np.argsort(h)[:starts]:
        d, value, cap = D[k], float(h[k]), 0.05
        for _ in range(rounds):
            trial = d + cap * rng.normal(size=(400, 3))
            trial /= np.linalg.norm(trial, axis=1)[:, None]
            values = support_value(a, trial) + support_value(b, -trial)
            j = int(np.argmin(values))
            if values[j] < value:
                d, value = trial[j], float(values[j])
            else:
                cap *= 0.5
        best = min(best, value)
    return best


# -- robots ---------------------------------------------------------------------------------------

ROBOTS = SHARED / "robots"
PANDA_PACKAGE = "moveit_resources_panda_description"


@pytest.fixture(scope="session")
def panda_dir() -> Path:
    """../shared/robots/panda (URDF, SRDF, collision STLs), or a skip that says why."""
    if not (ROBOTS / "panda" / "panda.urdf").is_file():
        pytest.skip(f"the Panda robot is not at {ROBOTS / 'panda'} (it lives in ../shared beside the project)")
    return ROBOTS / "panda"


@pytest.fixture(scope="session")
def panda_package(panda_dir, tmp_path_factory) -> Path:
    """A ROS package folder for the Panda's package:// paths, made of links to the shared files:
    <tmp>/ws/src/moveit_resources_panda_description/{urdf/panda.urdf, meshes/collision/*.stl}."""
    root = tmp_path_factory.mktemp("ws") / "src" / PANDA_PACKAGE
    (root / "meshes" / "collision").mkdir(parents=True)
    (root / "urdf").mkdir()
    for stl in panda_dir.glob("*.stl"):
        (root / "meshes" / "collision" / stl.name).symlink_to(stl)
    (root / "urdf" / "panda.urdf").symlink_to(panda_dir / "panda.urdf")
    (root / "urdf" / "panda.srdf").symlink_to(panda_dir / "panda.srdf")
    return root


class FclRobot:
    """The robot's link meshes in python-fcl, posed by our FK (checked against yourdfpy elsewhere)."""

    def __init__(self, robot):
        from gjkcli.scene import urdf

        fcl = pytest.importorskip("fcl")
        self.local = urdf.local_meshes(robot)
        self.fcl, self.robot = fcl, robot
        self.links = [c.link for c in robot.collisions]
        self.models = []
        for V, F, *_ in self.local:
            m = fcl.BVHModel()
            m.beginModel(len(V), len(F))
            m.addSubModel(V, F)
            m.endModel()
            self.models.append(m)
        self.index = {name: k for k, name in enumerate(robot.links)}

    def colliding(self, q, pairs) -> set:
        fcl = self.fcl
        F = self.robot.fk(q[None])[0]
        objs = {}
        for e, link in enumerate(self.links):
            T = F[self.index[link]]
            objs[link] = fcl.CollisionObject(self.models[e], fcl.Transform(T[:3, :3], T[:3, 3]))
        return {p for p in pairs
                if fcl.collide(objs[p[0]], objs[p[1]], fcl.CollisionRequest(), fcl.CollisionResult())}


@pytest.fixture(scope="session")
def fcl_robot():
    """FclRobot: a robot's link meshes in python-fcl, an oracle for link-pair collisions."""
    return FclRobot


@pytest.fixture
def hull_builds(monkeypatch):
    """The number of point sets of each `gjkcli.pipeline.prepared.build_hulls` call the test
    makes (the hulls are still built): how a test sees that shared geometry is prepared once."""
    from gjkcli.pipeline import prepared

    built: list[int] = []
    real = prepared.build_hulls

    def counting(points, **kw):
        built.append(len(points))
        return real(points, **kw)

    monkeypatch.setattr(prepared, "build_hulls", counting)
    return built
