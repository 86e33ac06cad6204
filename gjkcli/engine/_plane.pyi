# Type stub of the compiled module gjkcli/engine/_plane.pyx (GJK, EPA and edges in the plane).
from typing import Any

import numpy as np

TRACE_WIDTH: int

def build(v: np.ndarray, ring: np.ndarray, part_ring: np.ndarray) -> tuple[np.ndarray, ...]: ...

class Packed:
    def __init__(self, v: np.ndarray, ring: np.ndarray, part_ring: np.ndarray, convex: np.ndarray,
                 box: np.ndarray, nbox: np.ndarray, nchild: np.ndarray, order: np.ndarray,
                 part_node: np.ndarray) -> None: ...
    def inside(self, p: int, x: float, y: float) -> bool: ...
    def support(self, p: int, directions: Any, hint: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]: ...
    def batch(self, ia: Any, ib: Any, tol: Any, tol_rel: float, tolerances: dict, want: int, start: Any,
              trace_cap: int = 0) -> tuple[np.ndarray, np.ndarray]: ...
