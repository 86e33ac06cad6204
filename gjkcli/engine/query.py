"""The Python API of the engine: pair and batch queries returning frozen results.

>>> from gjkcli.engine.shapes import Shape
>>> from gjkcli.engine.query import query
>>> r = query(Shape.box([1, 1, 1]), Shape.sphere(0.5, center=[2, 0, 0]))
>>> r.status.value, round(r.distance, 12)
('clear', 1.0)
"""
from __future__ import annotations

import time
from dataclasses import asdict

import numpy as np

from gjkcli.engine import _core, _enums
from gjkcli.engine.results import (
    CERT_PLANE,
    CERT_POINT,
    EXIT_NAMES,
    FEATURE_NAMES,
    STATUS_CODES,
    BatchResult,
    PlaneCertificate,
    PointCertificate,
    Result,
    Status,
    TraceStep,
)
from gjkcli.engine.shapes import Shape, ShapeSet
from gjkcli.tolerances import DEFAULT

# What a query computes, by name; the codes come from the core's header (enum gjk_want).
WANT = {m.name[len("GJK_WANT_"):].lower(): int(m) for m in _enums.gjk_want}
TRACE_CAPACITY = 1024

_TOL = asdict(DEFAULT)
_core.configure(_TOL)


def query(a: Shape, b: Shape, *, tolerance: float | None = None, trace: bool = False,
          want: str = "verdict") -> Result:
    """Verdict for one pair: clear, touching, collision or undecided, with a certificate.

    One call into the compiled core: each Shape keeps its packed form (`Shape.core`), so the
    per-call work is the argument checks and the Result. For many pairs, `batch` answers them all
    in one compiled call (no Python work per pair).

    Parameters
    ----------
    a, b : Shape
    tolerance : float, optional
        Touching band half-width in model units; default DEFAULT.touching_rel x pair size.
    trace : bool
        Record every GJK and EPA iteration in `Result.trace`.
    want : {"verdict", "distance", "intersect"}
        "distance" skips EPA (an intersecting pair reads as a collision without depth);
        "intersect" also stops at the first separating plane beyond the tolerance. Without EPA an
        intersecting pair's normal is GJK's best separating-axis candidate (a unit vector from A
        towards B along which the overlap is least among the directions tried), not the depth's.

    Examples
    --------
    >>> r = query(Shape.sphere(1.0), Shape.sphere(1.0, center=[1.5, 0, 0]))
    >>> r.status.value, round(r.depth, 12), r.normal.tolist()
    ('collision', 0.5, [1.0, 0.0, 0.0])
    """
    start = time.perf_counter()
    if trace:
        return _traced(a, b, tolerance, want, start)
    if type(a) is not Shape or type(b) is not Shape:
        raise TypeError(f"query takes two Shape objects, got {type(a).__name__} and {type(b).__name__}")
    code = WANT.get(want)
    if code is None:
        raise ValueError(f"want must be one of {', '.join(WANT)}, got {want!r}")
    if tolerance is None:
        tol = -DEFAULT.touching_rel  # the core reads a negative band as relative to the pair size
    else:
        tol = float(tolerance)
        if not tol >= 0.0:
            raise ValueError("tolerance must be >= 0")
    raw = _core.pair(a.core(), b.core(), tol, code)
    return _pair_result(raw, start)


def _pair_result(raw, start: float) -> Result:
    """A Result from the core's PairAnswer. Made without Result.__init__: a frozen dataclass's
    __init__ sets each of its 15 fields through object.__setattr__, which cost more than the
    query itself for small hulls; the fields are the same."""
    v = raw.vectors()
    kind = raw.cert_kind
    certificate = None
    if kind == CERT_PLANE:
        certificate = _new(PlaneCertificate, {"normal": v[9:12], "offset": float(v[12]), "kind": "plane"})
    elif kind == CERT_POINT:
        certificate = _new(PointCertificate, {"point": v[9:12], "kind": "point"})
    epa_exit = raw.epa_exit
    return _new(Result, {
        "status": STATUS_CODES[raw.status], "distance": raw.distance,
        "distance_lower": raw.distance_lower, "depth": raw.depth if epa_exit else None,
        "normal": v[0:3], "point_a": v[3:6], "point_b": v[6:9], "certificate": certificate,
        "iterations": raw.iterations, "epa_iterations": raw.epa_iterations,
        "exit": EXIT_NAMES[raw.exit], "epa_exit": EXIT_NAMES[epa_exit] if epa_exit else None,
        "tolerance": raw.tolerance, "trace": None, "elapsed": time.perf_counter() - start})


def _new(cls, fields: dict):
    """An instance of a frozen dataclass with exactly these fields (all of them), without its
    __init__ (see `_pair_result`)."""
    out = object.__new__(cls)
    out.__dict__.update(fields)
    return out


def _traced(a: Shape, b: Shape, tolerance, want: str, start: float) -> Result:
    """`query` with its GJK and EPA steps recorded (through the batch call, which fills a trace)."""
    raw = _run(ShapeSet([a, b]), [0], [1], None, None, tolerance, want, TRACE_CAPACITY)
    result = _batch_result(raw).result(0)
    centre = 0.5 * (a.translation + b.translation)
    steps = tuple(_trace_step(rec, centre) for rec in raw["trace"])
    return Result(**{**result.__dict__, "trace": steps, "elapsed": time.perf_counter() - start})


def intersects(a: Shape, b: Shape, *, tolerance: float | None = None) -> bool:
    """True when the shapes share a point or lie within the touching band."""
    return query(a, b, tolerance=tolerance, want="intersect").status is not Status.CLEAR


def distance(a: Shape, b: Shape) -> Result:
    """Separation and witness points, without the penetration depth."""
    return query(a, b, want="distance")


def batch(shapes, ia, ib, *, pose_a=None, pose_b=None, tolerance=None, want: str = "verdict") -> BatchResult:
    """Many pairs in one compiled call: no Python work per pair.

    Parameters
    ----------
    shapes : ShapeSet or sequence of Shape
    ia, ib : (m,) int
        Indices of the two shapes of each pair.
    pose_a, pose_b : (m, 4, 4) float64, optional
        Rigid transforms applied on top of each shape's own pose, per pair.
    tolerance : float or (m,) array, optional
        Touching band(s) in model units; default relative to each pair's size.
    """
    shapeset = shapes if isinstance(shapes, ShapeSet) else ShapeSet(shapes)
    m = len(np.atleast_1d(ia))
    return _batch_result(_run(shapeset, ia, ib, _poses(pose_a, m), _poses(pose_b, m), tolerance, want, 0))


def pairs(shapes_a, shapes_b, *, tolerance=None, want: str = "verdict") -> BatchResult:
    """Pairs (shapes_a[k], shapes_b[k]) of Shapes in their own poses, in one compiled call, each
    shape read through its kept packed form (`Shape.core`): for pairs drawn from a changing set
    of shapes (a collision manager's candidates), where packing a ShapeSet per call would cost
    more than the queries. `batch` remains the call for many pairs over one set.

    Parameters
    ----------
    shapes_a, shapes_b : sequences of Shape, of one length m
    tolerance : float or (m,) array, optional
        Touching band(s) in model units; default relative to each pair's size.

    Examples
    --------
    >>> r = pairs([Shape.sphere(1.0)] * 2, [Shape.sphere(1.0, center=[3, 0, 0]),
    ...                                     Shape.box([1, 1, 1], transform=np.eye(4))])
    >>> [STATUS_CODES[int(s)].value for s in r.status], float(r.distance[0])
    (['clear', 'collision'], 1.0)
    """
    code = WANT.get(want)
    if code is None:
        raise ValueError(f"want must be one of {', '.join(WANT)}, got {want!r}")
    tol: float | np.ndarray
    if tolerance is None:
        tol = -DEFAULT.touching_rel  # the core reads a negative band as relative to each pair's size
    else:
        given = np.asarray(tolerance, dtype=np.float64)
        if not np.all(given >= 0):
            raise ValueError("tolerance must be >= 0")
        tol = float(given) if given.ndim == 0 else np.broadcast_to(given, (len(shapes_a),))
    try:
        cores_a = [s.core() for s in shapes_a]
        cores_b = [s.core() for s in shapes_b]
    except AttributeError:
        raise TypeError("pairs takes sequences of Shape objects") from None
    return _batch_result(_core.pairs(cores_a, cores_b, tol, code))


def support(shape: Shape, directions, *, warm: bool = True):
    """World support points of a shape for directions (m, 3).

    Returns (points (m, 3), vertex indices (m,), hill-climbing steps (m,)).
    """
    return _core.support(ShapeSet([shape]), 0, directions, _TOL, warm)


def _run(shapeset, ia, ib, pose_a, pose_b, tolerance, want, trace_cap):
    ia = np.atleast_1d(np.asarray(ia, dtype=np.int32))
    ib = np.atleast_1d(np.asarray(ib, dtype=np.int32))
    tol = None
    if tolerance is not None:
        tol = np.broadcast_to(np.asarray(tolerance, dtype=np.float64), ia.shape)
        if not np.all(tol >= 0):
            raise ValueError("tolerance must be >= 0")
    return _core.batch(shapeset, ia, ib, pose_a, pose_b, tol, DEFAULT.touching_rel, _TOL, WANT[want], trace_cap)


def _poses(poses, m):
    """(m, 12) row-major R then t from (m, 4, 4) rigid transforms, or None."""
    if poses is None:
        return None
    T = np.asarray(poses, dtype=np.float64).reshape(m, 4, 4)
    R = T[:, :3, :3]
    # |R^T R - I| <= rigid_rel entrywise (a NaN fails too); matmul and max cost a fraction of
    # np.allclose over an einsum, which dominated small batches
    err = np.abs(np.matmul(R.transpose(0, 2, 1), R) - np.eye(3)).max() if m else 0.0
    if not err <= DEFAULT.rigid_rel:
        raise ValueError("batch poses must be rigid (rotation and translation)")
    out = np.empty((m, 12))
    out[:, :9] = R.reshape(m, 9)
    out[:, 9:] = T[:, :3, 3]
    return out


def _batch_result(raw) -> BatchResult:
    depth = raw["depth"].copy()
    intersecting = raw["epa_exit"] != 0
    depth[~intersecting] = np.nan
    return BatchResult(
        status=raw["status"], distance=raw["distance"], distance_lower=raw["distance_lower"],
        depth=depth, tolerance=raw["tolerance"], normal=raw["normal"], point_a=raw["point_a"],
        point_b=raw["point_b"], cert_kind=raw["cert_kind"], plane=raw["plane"], point=raw["point"],
        iterations=raw["iterations"], epa_iterations=raw["epa_iterations"], exit=raw["exit"],
        epa_exit=raw["epa_exit"],
    )


def _trace_step(rec, centre) -> TraceStep:
    f = _core.TRACE_FIELDS

    def vec(name, k=0):
        return rec[f[name] + 3 * k: f[name] + 3 * k + 3].copy()

    n_before, n_after = int(rec[f["n_before"]]), int(rec[f["n_after"]])
    kept = int(rec[f["kept"]])
    exit_code = int(rec[f["exit"]])
    epa = rec[f["phase"]] == 1
    return TraceStep(
        phase="epa" if epa else "gjk",
        iteration=int(rec[f["iteration"]]),
        direction=vec("direction"),
        index_a=int(rec[f["index_a"]]),
        index_b=int(rec[f["index_b"]]),
        steps_a=int(rec[f["steps_a"]]),
        steps_b=int(rec[f["steps_b"]]),
        point_a=vec("point_a") + centre,
        point_b=vec("point_b") + centre,
        w=vec("w"),
        passed=bool(rec[f["passed"]]),
        simplex_before=np.array([vec("before", k) for k in range(n_before)]).reshape(-1, 3),
        simplex_after=np.array([vec("after", k) for k in range(n_after)]).reshape(-1, 3),
        lambdas=rec[f["lambdas"]: f["lambdas"] + n_after].copy(),
        feature=None if epa else FEATURE_NAMES.get(int(rec[f["feature"]])),
        kept=tuple(bool(kept >> k & 1) for k in range(n_before + 1)) if not epa else (),
        vnorm=float(rec[f["vnorm"]]),
        lower=float(rec[f["lower"]]),
        upper=float(rec[f["upper"]]),
        exit=EXIT_NAMES[exit_code] if exit_code else None,
        faces=int(rec[f["faces"]]),
        support=float(rec[f["support"]]),
    )


__all__ = ["query", "intersects", "distance", "batch", "pairs", "support", "Shape", "ShapeSet", "Result",
           "BatchResult", "Status", "STATUS_CODES"]
