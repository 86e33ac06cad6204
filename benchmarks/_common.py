"""Shared helpers of the benchmark scripts: seeded hulls and rotations, timing, tables, JSON.

Benchmarks are scripts, never timed tests: they print markdown tables that go into the README as
ratios, so that a number measured on one machine is read against another tool run in the same
process on the same pairs.
"""
from __future__ import annotations

import contextlib
import gc
import json
import os
import platform
import statistics
import sys
import time
from dataclasses import asdict

import numpy as np

from gjkcli.engine.shapes import Shape
from gjkcli.tolerances import DEFAULT

# -- geometry ------------------------------------------------------------------------------------


def sphere_points(rng: np.random.Generator, n: int, semi_axes=(1.0, 1.0, 1.0)) -> np.ndarray:
    """n points on an ellipsoid, (n, 3) float64.

    Points on a sphere are all in convex position, and so are their images under the linear map
    diag(semi_axes): every point is a hull vertex, so the hull has exactly n vertices.
    """
    p = rng.normal(size=(n, 3))
    p /= np.linalg.norm(p, axis=1)[:, None]
    return p * np.asarray(semi_axes, dtype=np.float64)


def cloud_points(rng: np.random.Generator, n: int) -> np.ndarray:
    """n points uniform in the unit ball, (n, 3): only some of them are hull vertices."""
    p = rng.normal(size=(n, 3))
    p /= np.linalg.norm(p, axis=1)[:, None]
    return p * rng.uniform(size=(n, 1)) ** (1.0 / 3.0)


def hull_of(points: np.ndarray, expect: int | None = None) -> Shape:
    """Shape.hull of points; with `expect`, check that every point became a hull vertex."""
    shape = Shape.hull(points)
    if expect is not None and shape.n_vertices != expect:
        raise RuntimeError(f"hull has {shape.n_vertices} vertices, expected {expect}")
    return shape


def ellipsoid_hulls(rng: np.random.Generator, n: int, count: int) -> list:
    """`count` hulls of exactly n vertices: points on ellipsoids of semi-axes drawn in [0.6, 1.4]."""
    return [hull_of(sphere_points(rng, n, rng.uniform(0.6, 1.4, 3)), expect=n) for _ in range(count)]


def random_rotations(rng: np.random.Generator, m: int) -> np.ndarray:
    """m rotations uniform on SO(3) (unit quaternions from a normal draw), (m, 3, 3)."""
    q = rng.normal(size=(m, 4))
    q /= np.linalg.norm(q, axis=1)[:, None]
    w, x, y, z = q.T
    return np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], axis=1),
        np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], axis=1),
        np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], axis=1),
    ], axis=1)


def unit_vectors(rng: np.random.Generator, m: int) -> np.ndarray:
    """m directions uniform on the unit sphere, (m, 3)."""
    d = rng.normal(size=(m, 3))
    return d / np.linalg.norm(d, axis=1)[:, None]


def walk_directions(rng: np.random.Generator, m: int, step: float) -> np.ndarray:
    """m unit directions, each the previous one turned by `step` radians about a random axis
    perpendicular to it: the slowly turning search direction of GJK, (m, 3)."""
    out = np.empty((m, 3))
    d = unit_vectors(rng, 1)[0]
    noise = rng.normal(size=(m, 3))
    c, s = np.cos(step), np.sin(step)
    for k in range(m):
        out[k] = d
        u = noise[k] - (noise[k] @ d) * d  # a random tangent at d
        u /= np.linalg.norm(u)
        d = c * d + s * u
        d /= np.linalg.norm(d)
    return out


def poses(rotations: np.ndarray, translations: np.ndarray) -> np.ndarray:
    """(m, 4, 4) rigid transforms from (m, 3, 3) rotations and (m, 3) translations."""
    m = len(rotations)
    T = np.zeros((m, 4, 4))
    T[:, :3, :3] = rotations
    T[:, :3, 3] = translations
    T[:, 3, 3] = 1.0
    return T


def place_pairs(rng: np.random.Generator, shapes, m: int, offset_range=(0.42, 1.24)):
    """m random placements of pairs of the shapes: (ia, ib, pose_a, pose_b).

    ia, ib : (m,) int32 shape indices; pose_a, pose_b : (m, 4, 4) rigid transforms applied on top
    of each shape's own pose. Both get uniform random rotations; A sits at a random point away
    from the origin (so that the pair frame matters) and B at a random direction from it, at a
    distance drawn from offset_range times the sum of the two shapes' extents. The default range
    makes about half of the pairs of random ellipsoid hulls overlap.
    """
    k = len(shapes)
    ia = rng.integers(0, k, m).astype(np.int32)
    ib = rng.integers(0, k, m).astype(np.int32)
    extent = np.array([s._extent for s in shapes])
    direction = unit_vectors(rng, m)
    offset = rng.uniform(*offset_range, size=m) * (extent[ia] + extent[ib])
    t_a = rng.uniform(-10.0, 10.0, size=(m, 3))
    pose_a = poses(random_rotations(rng, m), t_a)
    pose_b = poses(random_rotations(rng, m), t_a + offset[:, None] * direction)
    return ia, ib, pose_a, pose_b


def pack_poses(T: np.ndarray) -> np.ndarray:
    """(m, 12) row-major R then t, the form gjkcli.engine._core.batch takes, from (m, 4, 4)."""
    m = len(T)
    return np.ascontiguousarray(np.concatenate([T[:, :3, :3].reshape(m, 9), T[:, :3, 3]], axis=1))


def tolerances(**override) -> dict:
    """The engine's tolerance dict (gjkcli.tolerances.DEFAULT) with some fields replaced."""
    tol = asdict(DEFAULT)
    unknown = set(override) - set(tol)
    if unknown:
        raise KeyError(f"no such tolerance: {sorted(unknown)}")
    tol.update(override)
    return tol


# -- timing --------------------------------------------------------------------------------------


@contextlib.contextmanager
def no_gc():
    """The cyclic garbage collector off while timing, as timeit does: a collection of the many
    objects a benchmark holds would land on whichever call happened to trigger it."""
    from gjkcli.collector import no_gc as paused

    gc.collect()
    with paused():
        yield


def best_of(fn, calls: int) -> float:
    """Fastest of `calls` runs of fn(), us."""
    clock = time.perf_counter_ns
    best = float("inf")
    for _ in range(calls):
        t0 = clock()
        fn()
        best = min(best, clock() - t0)
    return best * 1e-3


def chunked_time(fn, m: int, passes: int, chunk_us: float = 1000.0, lo: int = 25, hi: int = 50_000):
    """us per item of fn(index) over items 0..m-1, robust to other processes on the machine.

    The items are cut into chunks of about chunk_us of work (between lo and hi items), each timed
    on its own, `passes` times. The fixed cost of a call, timed on an empty index, is counted once
    for the whole range rather than once per chunk, so the figure is that of one call over all
    items. Returns (best, median): each chunk's fastest pass summed (other processes only ever add
    time: the quiet-machine figure), and the median over passes of a whole pass.
    """
    with no_gc():
        return _chunked_time(fn, m, passes, chunk_us, lo, hi)


def _chunked_time(fn, m, passes, chunk_us, lo, hi):
    clock = time.perf_counter_ns
    empty = np.arange(0)
    fixed = best_of(lambda: fn(empty), 30)
    pilot = np.arange(min(m, lo))
    per_item = max(best_of(lambda: fn(pilot), 3) - fixed, 1e-3) / max(len(pilot), 1)
    size = int(np.clip(round(chunk_us / per_item), lo, hi))
    parts = [c for c in np.array_split(np.arange(m), max(1, round(m / size))) if len(c)]
    t = np.empty((passes, len(parts)))
    for p in range(passes):
        for c, index in enumerate(parts):
            t0 = clock()
            fn(index)
            t[p, c] = (clock() - t0) * 1e-3
    fixed = min(fixed, best_of(lambda: fn(empty), 30))
    extra = (len(parts) - 1) * fixed
    return float(t.min(axis=0).sum() - extra) / m, float(np.median(t.sum(axis=1)) - extra) / m


def timer_overhead_ns() -> float:
    """Median cost of one perf_counter_ns() pair, to read per-call timings against."""
    clock = time.perf_counter_ns
    samples = []
    for _ in range(2000):
        t0 = clock()
        t1 = clock()
        samples.append(t1 - t0)
    return float(statistics.median(samples))


# -- output --------------------------------------------------------------------------------------


def markdown_table(header: list[str], rows: list[list]) -> str:
    """A markdown table; floats get 3 significant digits."""

    def cell(x):
        if isinstance(x, float):
            if not np.isfinite(x):
                return "-"
            return f"{x:.3g}" if abs(x) < 1000 else f"{x:.0f}"
        return str(x)

    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(cell(x) for x in row) + " |" for row in rows]
    return "\n".join(lines)


def machine() -> dict:
    """Where the numbers were measured."""
    try:
        load = os.getloadavg()
    except OSError:
        load = None
    return {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpus": os.cpu_count(),
        "load_average": load,
        "numpy": np.__version__,
    }


def write_json(path: str, payload: dict) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(payload, fh, indent=2, default=_json_default)
        fh.write("\n")


def _json_default(x):
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, np.ndarray):
        return x.tolist()
    raise TypeError(type(x))


def to_coal(shape: Shape):
    """coal.Convex over exactly the gjk hull's local vertices and triangles (coal is imported
    here: the scripts that compare against it need it, the others do not)."""
    import coal

    verts = coal.StdVec_Vec3s()
    for v in shape.vertices:
        verts.append(np.array(v))
    tris = coal.StdVec_Triangle()
    for f in shape.faces:
        tris.append(coal.Triangle(int(f[0]), int(f[1]), int(f[2])))
    return coal.Convex(verts, tris)
