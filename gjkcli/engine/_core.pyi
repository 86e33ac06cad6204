# Type stub of the compiled module gjkcli/engine/_core.pyx (GJK and EPA on convex shapes).
from typing import Any

import numpy as np

TRACE_WIDTH: int
TRACE_FIELDS: dict[str, int]

class CoreShape:
    @property
    def n_vertices(self) -> int: ...

class PairAnswer:
    status: int
    exit: int
    epa_exit: int
    cert_kind: int
    iterations: int
    epa_iterations: int
    distance: float
    distance_lower: float
    depth: float
    depth_upper: float
    tolerance: float
    signed_distance: float
    normal: np.ndarray
    point_a: np.ndarray
    point_b: np.ndarray
    point: np.ndarray
    plane: np.ndarray
    def vectors(self) -> np.ndarray: ...

def configure(tolerances: dict) -> None: ...
def core_shape(kind: int, vertices: np.ndarray, adj_start: np.ndarray, adj: np.ndarray,
               cube: np.ndarray, dims: Any, radius: float, extent: float, size: float,
               rotation: Any, translation: Any) -> CoreShape: ...
def pair(a: CoreShape, b: CoreShape, tol: float, want: int) -> PairAnswer: ...
def pairs(shapes_a: list, shapes_b: list, tol: float | np.ndarray, want: int) -> dict[str, Any]: ...
def batch(shapeset: Any, ia: Any, ib: Any, pose_a: Any, pose_b: Any, tol: Any, tol_rel: float,
          tolerances: dict, want: int, trace_cap: int = ...) -> dict[str, Any]: ...
def support(shapeset: Any, index: int, directions: Any, tolerances: dict,
            warm: bool = ...) -> tuple[np.ndarray, np.ndarray, np.ndarray]: ...
