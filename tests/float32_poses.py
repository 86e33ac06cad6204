"""Rigid transforms that float32 holds exactly, for tests that compare gjk with trimesh's
CollisionManager (trimesh hands FCL float32 transforms: a pose float32 rounds would move the
parts on one side only)."""
from __future__ import annotations

import numpy as np


def exact_pose(rng, box: float) -> np.ndarray:
    """A 4x4 pose: a signed permutation (det +1) and a translation in 1/256ths within +-box."""
    T = np.eye(4)
    T[:3, :3] = np.eye(3)[rng.permutation(3)] * rng.choice([-1.0, 1.0], 3)
    if np.linalg.det(T[:3, :3]) < 0:
        T[:3, 0] *= -1
    T[:3, 3] = np.round(rng.uniform(-box, box, 3) * 256) / 256
    return T
