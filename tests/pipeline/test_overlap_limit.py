"""The overlap-volumes limit: the deepest collisions get their volume, the rest say why not."""
from __future__ import annotations

import numpy as np
import trimesh

from gjkcli import limits
from gjkcli.engine.results import Status
from gjkcli.pipeline.run import Options, scan


def test_the_deepest_collisions_get_volumes_up_to_the_limit(tmp_path):
    # five unit cubes, each overlapping the first by a different depth along x
    paths = []
    for k, shift in enumerate([0.0, 0.9, 0.7, 0.5, 0.3]):
        cube = trimesh.creation.box([1.0, 1.0, 1.0])
        cube.apply_translation([shift, 0.1 * k, 0.0])
        paths.append(tmp_path / f"cube{k}.stl")
        cube.export(paths[-1])
    found = scan(paths, Options(limits=limits.parse(["overlap-volumes=2"])))
    collisions = [p for p in found.pairs if p.status is Status.COLLISION]
    assert len(collisions) >= 4
    with_volume = [p for p in collisions if p.overlap_volume is not None]
    assert len(with_volume) == 2
    # the two with a volume are the two deepest, and their volumes are the box arithmetic
    depths = sorted((p.result.depth for p in collisions), reverse=True)
    assert sorted((p.result.depth for p in with_volume), reverse=True) == depths[:2]
    for p in with_volume:
        lo = np.maximum(*(np.asarray(r.bounds[0]) for r in found.objects if r.name in (p.a, p.b)))
        hi = np.minimum(*(np.asarray(r.bounds[1]) for r in found.objects if r.name in (p.a, p.b)))
        assert abs(p.overlap_volume - float(np.prod(hi - lo))) <= 1e-9
    for p in collisions:
        if p.overlap_volume is None:
            assert "overlap-volumes" in p.overlap_reason and "2 deepest" in p.overlap_reason
