"""One way to write a number for reading, in every human report (the trace, the tables, the
pictures); the machine formats keep every digit."""
from __future__ import annotations

import math

import numpy as np

__all__ = ["fmt", "vec", "timed"]


def fmt(x, digits: int = 6) -> str:
    """A number for reading: `digits` significant digits, 'nan'/'inf' spelt out, -0 as 0."""
    if x is None:
        return "-"
    x = float(x)
    if not math.isfinite(x):
        return str(x)
    if x == 0.0:
        return "0"
    return f"{x:.{digits}g}"


def vec(v, digits: int = 6) -> str:
    """(x, y, z) with `digits` significant digits each.

    A component below 1e-12 of the largest one prints as 0: it is rounding noise (1.5e-16 where a
    sine should be 0) that would hide the numbers that matter. The JSON trace keeps every digit.
    """
    v = np.asarray(v, dtype=float).ravel()
    finite = v[np.isfinite(v)]
    scale = float(np.max(np.abs(finite))) if finite.size else 0.0
    return "(" + ", ".join(fmt(0.0 if abs(x) < 1e-12 * scale else x, digits) for x in v) + ")"


def timed(found) -> str:
    """The summary's clock, saying what it timed: "0.81 s in all" since the process started,
    "87 ms for the run" where only the run's stages were timed (a command called in a
    longer-lived process). Milliseconds without decimals: the process's age is read to 10 ms."""
    seconds = float(found.elapsed or 0.0)
    words = "in all" if getattr(found, "timed", "run") == "process" else "for the run"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} us {words}"
    if seconds < 1.0:
        return f"{seconds * 1e3:.0f} ms {words}"
    return f"{seconds:.2f} s {words}"
