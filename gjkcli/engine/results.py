"""Frozen result objects: what a query answers. The renderers in `report/` read these and nothing
of the engine.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import numpy as np

from gjkcli.engine import _enums


class Status(str, Enum):
    """The verdict of a pair.

    `clearance` is a command-level verdict (clear, but closer than the user's required clearance);
    the engine itself answers one of the other four.
    """

    CLEAR = "clear"
    TOUCHING = "touching"
    COLLISION = "collision"
    CLEARANCE = "clearance"
    UNDECIDED = "undecided"


# The core's enums come from its header (gjkcli/engine/csrc/gjk.h) through gjkcli.engine._core;
# here each member gets the words a report prints. A member without words fails at import.
_EXIT_WORDS = {
    "GJK_EXIT_NONE": "none",
    "GJK_EXIT_SEPARATING_AXIS": "separating axis",
    "GJK_EXIT_CONVERGED": "converged",
    "GJK_EXIT_REPEATED_SUPPORT": "repeated support point",
    "GJK_EXIT_NO_PROGRESS": "no progress (machine precision)",
    "GJK_EXIT_ORIGIN_ENCLOSED": "origin enclosed",
    "GJK_EXIT_ORIGIN_TOUCHED": "origin on the simplex",
    "GJK_EXIT_ITERATION_CAP": "iteration cap",
    "EPA_EXIT_CONVERGED": "converged",
    "EPA_EXIT_FLAT": "flat Minkowski difference",
    "EPA_EXIT_ITERATION_CAP": "iteration cap",
    "EPA_EXIT_CAPACITY": "polytope capacity",
    "EPA_EXIT_DEGENERATE": "degenerate face",
}
_FEATURE_WORDS = {"GJK_FEATURE_VERTEX": "vertex", "GJK_FEATURE_EDGE": "edge",
                  "GJK_FEATURE_FACE": "face", "GJK_FEATURE_INSIDE": "inside"}

# Exit reasons of the compiled loops and simplex features, by code.
EXIT_NAMES = {int(m): _EXIT_WORDS[m.name] for m in _enums.gjk_exit}
FEATURE_NAMES = {int(m): _FEATURE_WORDS[m.name] for m in _enums.gjk_feature}
# The codes of no exit yet and of a loop that stopped making progress.
EXIT_NONE, EXIT_NO_PROGRESS = int(_enums.gjk_exit.GJK_EXIT_NONE), int(_enums.gjk_exit.GJK_EXIT_NO_PROGRESS)
# Certificate kinds of a batch answer, by code.
CERT_NONE, CERT_PLANE, CERT_POINT = (int(_enums.gjk_cert.GJK_CERT_NONE), int(_enums.gjk_cert.GJK_CERT_PLANE),
                                     int(_enums.gjk_cert.GJK_CERT_POINT))


@dataclass(frozen=True)
class PlaneCertificate:
    """A separating plane: every point x of A has normal . x <= offset, every point of B >= offset.

    normal : (3,) float64, unit, from A towards B
    """

    normal: np.ndarray
    offset: float
    kind: str = "plane"

    def as_dict(self) -> dict:
        return {"kind": "plane", "normal": [float(x) for x in self.normal], "offset": float(self.offset)}


@dataclass(frozen=True)
class PointCertificate:
    """A point that lies in both shapes: proof that they intersect. point : (3,) float64"""

    point: np.ndarray
    kind: str = "point"

    def as_dict(self) -> dict:
        return {"kind": "point", "point": [float(x) for x in self.point]}


@dataclass(frozen=True)
class TrianglesCertificate:
    """Triangle `a` of part A and triangle `b` of part B cross (beyond the touching band) at
    `point`: proof that the parts' surfaces intersect. Indices are into the parts' faces as
    checked (vertices merged). point : (3,) float64"""

    a: int
    b: int
    point: np.ndarray
    kind: str = "triangles"

    def as_dict(self) -> dict:
        return {"kind": "triangles", "a": int(self.a), "b": int(self.b),
                "point": [float(x) for x in self.point]}


@dataclass(frozen=True)
class DistanceCertificate:
    """The parts are at least `lower` apart: the triangle test's bound over every triangle pair
    its hierarchy did not prune (a pruned pair's boxes are farther apart than that), and
    neither part lies inside the other."""

    lower: float
    kind: str = "distance"

    def as_dict(self) -> dict:
        return {"kind": "distance", "lower": float(self.lower)}


@dataclass(frozen=True)
class ShiftCertificate:
    """Moving B by `shift` leaves the parts' interiors disjoint: their surfaces then meet at most
    within the snap, and no body of one lies inside the other. Every point of the overlap is
    therefore removed by a translation of length |shift| <= the touching band: the penetration
    depth is at most `upper` = |shift| (0: the surfaces meet without crossing). shift : (3,)
    float64, world coordinates"""

    shift: np.ndarray
    upper: float
    kind: str = "shift"

    def as_dict(self) -> dict:
        return {"kind": "shift", "shift": [float(x) for x in self.shift], "upper": float(self.upper)}


@dataclass(frozen=True)
class TraceStep:
    """One iteration of GJK (phase "gjk") or EPA (phase "epa").

    The simplex points are points of the Minkowski difference A - B (translation-free, so they
    read the same in any frame); point_a and point_b are the support points in world coordinates.

    direction : (3,) search direction
    w : (3,) new point of A - B, point_a - point_b
    simplex_before : (k, 3) the simplex before w was added (GJK)
    simplex_after : (j, 3) the reduced simplex holding the closest point (GJK)
    lambdas : (j,) barycentric weights of the closest point on simplex_after (GJK)
    kept : for each point of simplex_before and then w, whether the reduced simplex kept it
    """

    phase: str
    iteration: int
    direction: np.ndarray
    index_a: int
    index_b: int
    steps_a: int
    steps_b: int
    point_a: np.ndarray
    point_b: np.ndarray
    w: np.ndarray
    passed: bool
    simplex_before: np.ndarray
    simplex_after: np.ndarray
    lambdas: np.ndarray
    feature: str | None
    kept: tuple
    vnorm: float
    lower: float
    upper: float
    exit: str | None
    faces: int
    support: float

    def as_dict(self) -> dict:
        """JSON-ready form: one object per step, as `--trace-json` writes them."""
        out = {}
        for key, value in self.__dict__.items():
            if isinstance(value, np.ndarray):
                value = value.tolist()
            elif isinstance(value, tuple):
                value = list(value)
            elif isinstance(value, (np.floating, np.integer, np.bool_)):
                value = value.item()
            out[key] = value
        return out


@dataclass(frozen=True)
class Result:
    """The answer for one pair.

    Attributes
    ----------
    status : Status
        clear, touching, collision or undecided.
    distance : float
        Separation ``|point_a - point_b| >= 0``; 0 when the shapes intersect.
    distance_lower : float
        A certified lower bound of the separation (the separating plane's gap).
    depth : float or None
        Penetration depth when the shapes intersect and it was computed (EPA), else None.
    normal : (3,) float64
        Unit vector from A towards B: moving B along it by `depth` separates them (collision),
        or it points across the gap (clear).
    point_a, point_b : (3,) float64
        Witness points in world coordinates: the closest points (clear), or the deepest points of
        A inside B and of B inside A (collision).
    certificate : PlaneCertificate, PointCertificate or None
    iterations, epa_iterations : int
    exit, epa_exit : str
        Named reasons the GJK and EPA loops stopped.
    tolerance : float
        The touching band half-width used, in model units.
    trace : tuple of TraceStep, or None when not requested
    elapsed : float
        Seconds spent in the query.
    """

    status: Status
    distance: float
    distance_lower: float
    depth: float | None
    normal: np.ndarray
    point_a: np.ndarray
    point_b: np.ndarray
    certificate: PlaneCertificate | PointCertificate | None
    iterations: int
    epa_iterations: int
    exit: str
    epa_exit: str | None
    tolerance: float
    trace: tuple | None = None
    elapsed: float = 0.0

    @property
    def signed_distance(self) -> float:
        """Distance when apart, minus the depth when intersecting."""
        return -self.depth if self.depth is not None else self.distance


@dataclass(frozen=True)
class ExactResult(Result):
    """A `Result` of the exact test (`gjkcli.engine.exact`), with what the exact test adds.
    Defined here, with the other answers: a Dask scan's client reads them without importing
    the test and its compiled core.

    Attributes (besides Result's)
    ----------
    solid_a, solid_b : bool
        Whether containment in A (in B) could be decided: the part is watertight and oriented.
    contained : str or None
        "a in b" when a point of A was found inside B (deeper than the band), "b in a" the
        other way: the parts' volumes overlap, though their surfaces may not cross.
    note : str
        Plain words on what the answer does not cover ("" when it covers everything), e.g. that
        only surfaces count for a part that is not watertight.
    triangle_a, triangle_b : int
        Faces of the witness pair (crossing or closest), -1 when none.
    triangle_pairs : int
        Triangle pairs tested. (`iterations` counts the box pairs visited.)
    depth_upper : float or None
        An upper bound of the penetration depth, when one was certified (touching: the length
        of the move in the ShiftCertificate; 0 when the volumes are apart as they stand).
    """

    solid_a: bool = True
    solid_b: bool = True
    contained: str | None = None
    note: str = ""
    triangle_a: int = -1
    triangle_b: int = -1
    triangle_pairs: int = 0
    depth_upper: float | None = None


@dataclass(frozen=True)
class BatchResult:
    """Answers for m pairs as arrays, world coordinates.

    status : (m,) int8, codes of STATUS_CODES
    distance, distance_lower, depth, tolerance : (m,) float64 (depth is NaN where not computed)
    normal, point_a, point_b : (m, 3) float64
    cert_kind : (m,) int8, CERT_NONE, CERT_PLANE or CERT_POINT
    plane : (m, 4) float64, normal and offset where cert_kind == 1
    point : (m, 3) float64, where cert_kind == 2
    iterations, epa_iterations : (m,) int32
    exit, epa_exit : (m,) int8, codes of EXIT_NAMES
    """

    status: np.ndarray
    distance: np.ndarray
    distance_lower: np.ndarray
    depth: np.ndarray
    tolerance: np.ndarray
    normal: np.ndarray
    point_a: np.ndarray
    point_b: np.ndarray
    cert_kind: np.ndarray
    plane: np.ndarray
    point: np.ndarray
    iterations: np.ndarray
    epa_iterations: np.ndarray
    exit: np.ndarray
    epa_exit: np.ndarray

    def __len__(self) -> int:
        return len(self.status)

    def result(self, k: int) -> Result:
        """Pair k as a `Result`."""
        kind = int(self.cert_kind[k])
        certificate = None
        if kind == CERT_PLANE:
            certificate = PlaneCertificate(self.plane[k, :3].copy(), float(self.plane[k, 3]))
        elif kind == CERT_POINT:
            certificate = PointCertificate(self.point[k].copy())
        depth = float(self.depth[k])
        epa_exit = int(self.epa_exit[k])
        return Result(
            status=STATUS_CODES[int(self.status[k])],
            distance=float(self.distance[k]),
            distance_lower=float(self.distance_lower[k]),
            depth=None if np.isnan(depth) else depth,
            normal=self.normal[k].copy(),
            point_a=self.point_a[k].copy(),
            point_b=self.point_b[k].copy(),
            certificate=certificate,
            iterations=int(self.iterations[k]),
            epa_iterations=int(self.epa_iterations[k]),
            exit=EXIT_NAMES[int(self.exit[k])],
            epa_exit=EXIT_NAMES[epa_exit] if epa_exit else None,
            tolerance=float(self.tolerance[k]),
        )


# Engine statuses by code. GJK_INTERSECTING is what a boolean query answers when it did not
# compute the depth: it reads as a collision.
_STATUS_OF = {"GJK_CLEAR": Status.CLEAR, "GJK_TOUCHING": Status.TOUCHING,
              "GJK_COLLISION": Status.COLLISION, "GJK_UNDECIDED": Status.UNDECIDED,
              "GJK_INTERSECTING": Status.COLLISION}
STATUS_CODES = {int(m): _STATUS_OF[m.name] for m in _enums.gjk_status}
