"""An IFC model's pairs of an open element (its faces bound no volume) and a closed one, as
`gjk scan` answers them, judged again apart from gjk's engine: how deep the open element's
surface reaches into the closed one, sampled.

For each such pair the scan lists (allowed pairs too, e.g. a window `hosted` in its wall), points
are sampled on the open element's surface (trimesh's area-weighted sampling, seeded, plus its
vertices); a point is inside the closed element where the exact generalized winding number of
tests/exact_distance.py exceeds 0.5, and its depth is python-fcl's distance from it to the closed
element's triangles. Printed per pair: gjk's status, its depth bound (`depth_upper`) or depth, the
points sampled and inside, and the deepest sampled depth: a lower bound of the true depth, which
a `touching` pair's bound must not be below and a `collision`'s depth must not be above by more
than the sampling misses.

Usage:
    python benchmarks/judge_open_ifc.py MODEL.ifc [--band 0.002] [--points 60000] [--seed 7]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))


def main() -> int:
    import fcl
    import trimesh

    from exact_distance import winding_number
    from gjkcli.engine.exact import Mesh
    from gjkcli.mesh import ifc
    from gjkcli.mesh.load import merge_close
    from gjkcli.pipeline import run
    from gjkcli.units import Length

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("--band", type=float, default=0.002, help="touching band in metres (default 0.002)")
    parser.add_argument("--points", type=int, default=60_000, help="points sampled per open element")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    found = run.scan([args.model], run.Options(tolerance=Length(args.band, "m"), jobs=1, show_allowed=True))
    # each element's triangles with its vertices merged as the run merges them
    # (`gjkcli.mesh.load.merge_close`), so that its open and closed elements are the run's
    meshes = {name: merge_close(v, f) for name, v, f, *_ in ifc.read_here(args.model).parts}
    print(f"{args.model}: {len(found.pairs)} pairs listed, band {args.band} m ({found.units})")
    for p in found.pairs:
        a, b = (Mesh(*meshes[n], name=n) for n in (p.a, p.b))
        if a.solid == b.solid:
            continue
        sheet, solid = (a, b) if b.solid else (b, a)
        v, f = meshes[solid.name]
        centre = v.mean(axis=0)
        model = fcl.BVHModel()
        model.beginModel(len(v), len(f))
        model.addSubModel(v - centre, f.astype(np.int32))
        model.endModel()
        closed = fcl.CollisionObject(model, fcl.Transform())
        surface = trimesh.Trimesh(*meshes[sheet.name], process=False)
        pts, _ = trimesh.sample.sample_surface(surface, args.points, seed=args.seed)
        pts = np.vstack([pts, surface.vertices])
        inside = pts[winding_number(v, f, pts) > 0.5]
        point = fcl.Sphere(1e-12)
        deepest = 0.0
        for q in inside:
            deepest = max(deepest, fcl.distance(fcl.CollisionObject(point, fcl.Transform(q - centre)), closed,
                                                fcl.DistanceRequest(), fcl.DistanceResult()))
        r = p.result
        said = f"depth_upper {r.depth_upper:.6g}" if r.depth_upper is not None else \
            f"depth {r.depth:.6g}" if r.depth is not None else "no depth"
        deepest = deepest if deepest > 1e-300 else 0.0  # a point on the surface
        print(f"{sheet.name} in {solid.name}: gjk {p.status.value} ({said}, {p.reason or 'not allowed'}); "
              f"{len(pts):,} points sampled, {len(inside):,} inside, deepest {deepest:.3g} {found.units}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
