"""Pose tables of samples/robot/arm.urdf for the cache's tests of `--poses` re-runs."""
from __future__ import annotations

from pathlib import Path

import numpy as np


def arm_tables(folder: Path, count: int = 200, new: int = 20, seed: int = 45) -> tuple[Path, Path]:
    """(before.csv, after.csv) in `folder`: `count` random poses of the sample arm (shoulder,
    elbow), then the same table with `new` of its rows replaced by new random poses."""
    rng = np.random.default_rng(seed)
    rows = rng.uniform([-3.1, -2.4], [3.1, 2.4], size=(count, 2))
    before, after = folder / "before.csv", folder / "after.csv"
    before.write_text("shoulder,elbow\n" + "".join(f"{a!r},{b!r}\n" for a, b in rows.tolist()))
    changed = rng.choice(count, size=new, replace=False)
    rows[changed] = rng.uniform([-3.1, -2.4], [3.1, 2.4], size=(new, 2))
    after.write_text("shoulder,elbow\n" + "".join(f"{a!r},{b!r}\n" for a, b in rows.tolist()))
    return before, after
