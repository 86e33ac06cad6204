"""Write the sample meshes in samples/: one pair per verdict, small and deterministic.

Run from anywhere: ``python scripts/make_samples.py``. The files are binary STL, which stores
float32 coordinates; every coordinate that decides a verdict (box faces, cylinder caps) is a
dyadic fraction such as 0.25, so it survives the float32 round trip exactly and the touching
pair touches exactly, not to within rounding.

| files | what they are | verdict |
|---|---|---|
| clear_a.stl, clear_b.stl | unit cube at the origin; sphere of radius 0.5 centred at x = 1.5 | clear, about 0.5 apart |
| touch_a.stl, touch_b.stl | unit cube [0, 1]^3; a 1 x 0.5 x 0.5 box whose face lies on x = 1 | touching |
| collide_a.stl, collide_b.stl | unit cube at the origin; cylinder along x from x = 0.25 to 1.25 | collision, depth 0.25 along +x |
| ring.stl, peg.stl | torus around z (hole radius 0.75); cylinder of radius 0.4 through the hole | parts clear (0.35), hulls collide |
| pocket_box.stl, pocket_cube.stl | 8 x 8 x 8 box [-4, 4]^3 with a 4 x 4 pocket 1/64 deep in its top face (a manifold3d difference); a unit cube in the pocket, 1/256 above its floor | parts clear (1/256 = 0.00390625); the cube is inside the box's hull |
"""
from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import numpy as np
import trimesh

SAMPLES = Path(__file__).resolve().parents[1] / "samples"

# An STL header is 80 free bytes; trimesh writes its own unless told, so pin it for stable files.
HEADER = b"gjk sample mesh, written by scripts/make_samples.py"


def box(lo, hi) -> trimesh.Trimesh:
    """Axis-aligned box from corner `lo` to corner `hi`, (3,) each."""
    lo, hi = np.asarray(lo, float), np.asarray(hi, float)
    return trimesh.creation.box(extents=hi - lo, transform=trimesh.transformations.translation_matrix((lo + hi) / 2))


def cylinder_x(radius, x0, x1, sections=32) -> trimesh.Trimesh:
    """Cylinder on the x axis from x0 to x1."""
    return trimesh.creation.cylinder(radius=radius, segment=[[x0, 0.0, 0.0], [x1, 0.0, 0.0]], sections=sections)


def meshes() -> dict[str, trimesh.Trimesh]:
    sphere = trimesh.creation.icosphere(subdivisions=2, radius=0.5)
    sphere.apply_translation([1.5, 0.0, 0.0])
    ring = trimesh.creation.torus(major_radius=1.0, minor_radius=0.25, major_sections=48, minor_sections=12)
    peg = trimesh.creation.cylinder(radius=0.4, height=2.0, sections=32)
    return {
        "clear_a.stl": box([-0.5, -0.5, -0.5], [0.5, 0.5, 0.5]),
        "clear_b.stl": sphere,
        "touch_a.stl": box([0.0, 0.0, 0.0], [1.0, 1.0, 1.0]),
        "touch_b.stl": box([1.0, 0.25, 0.25], [2.0, 0.75, 0.75]),
        "collide_a.stl": box([-0.5, -0.5, -0.5], [0.5, 0.5, 0.5]),
        "collide_b.stl": cylinder_x(0.3, 0.25, 1.25),
        "ring.stl": ring,
        "peg.stl": peg,
        "pocket_box.stl": box([-4.0, -4.0, -4.0], [4.0, 4.0, 4.0]).difference(
            box([-2.0, -2.0, 4.0 - 1 / 64], [2.0, 2.0, 5.0]), engine="manifold"),
        "pocket_cube.stl": box([-0.5, -0.5, 4.0 - 1 / 64 + 1 / 256], [0.5, 0.5, 5.0 - 1 / 64 + 1 / 256]),
    }


def stl_bytes(mesh: trimesh.Trimesh) -> bytes:
    """Binary STL with a fixed header (trimesh's exporter is otherwise deterministic)."""
    data = bytearray(trimesh.exchange.stl.export_stl(mesh))
    data[:80] = HEADER.ljust(80, b" ")
    return bytes(data)


def main() -> int:
    SAMPLES.mkdir(exist_ok=True)
    for name, mesh in meshes().items():
        data = stl_bytes(mesh)
        assert len(data) < 100_000, f"{name} is {len(data)} bytes"
        (SAMPLES / name).write_bytes(data)
        digest = hashlib.sha256(data).hexdigest()[:12]
        print(f"{name:16s} {len(mesh.vertices):5d} vertices {len(mesh.faces):5d} faces {len(data):7d} bytes  {digest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
