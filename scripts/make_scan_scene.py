"""Write the benchmark scene of `gjk scan`: a GLB of n convex parts, each its own mesh and node.

Every part is the convex hull of 40 points on a random ellipsoid (semi-axes 0.8 to 1.2), so all
40 points are hull vertices and the mesh is its own hull: trimesh + FCL on the meshes and gjk
on the hulls answer the same question. Each part is a separate glTF mesh (no instancing: a
scene of distinct parts, as CAD exports are) stored in its own frame and placed by a rigid node
transform (a rotation and a translation; no scale, since trimesh's CollisionManager drops it
and the comparison would then measure that bug, not speed). Centres are uniform in a cube whose
side grows as n^(1/3), so the density and the share of colliding pairs per part stay constant:
about 0.8 colliding pairs per part, about 8,000 for n = 10,000.

The GLB is written directly (JSON chunk plus one binary buffer of float32 positions and uint32
indices); generating 100,000 hulls takes about a minute, trimesh's exporter would take far longer.

With --files K the same scene is split over K GLB files (OUT_0.glb ... OUT_{K-1}.glb): part k goes
to file k mod K, so neighbours sit in different files and pairs cross the files' borders (the
scene of `benchmarks/bench_dask.py` and tests/pipeline/test_distributed.py).

Usage::

    python scripts/make_scan_scene.py N OUT.glb [--seed S] [--files K]

Generated scenes are large (10,000 parts: 21 MB, 100,000 parts: 210 MB, mostly the glTF JSON of
one mesh per part); write them to a temporary directory, never into the repository.
"""
from __future__ import annotations

import argparse
import json
import struct
import sys
from pathlib import Path

import numpy as np

POINTS = 40
# Side of the cube of centres per part^(1/3): tuned so that 10,000 parts give about 8,000
# colliding pairs (measured by benchmarks/bench_scan.py with trimesh + FCL).
SPACING = 2.55


def part_meshes(rng: np.random.Generator, n: int):
    """n convex meshes in their own frames: (vertices (40, 3) float32, faces (76, 3) uint32)."""
    from scipy.spatial import ConvexHull

    for _ in range(n):
        p = rng.normal(size=(POINTS, 3))
        p /= np.linalg.norm(p, axis=1)[:, None]
        p *= rng.uniform(0.8, 1.2, size=3)
        p = p.astype(np.float32)
        hull = ConvexHull(p.astype(np.float64))
        faces = hull.simplices.copy()
        # qhull's simplices are unoriented: point each facet's normal away from the centroid
        centre = p.mean(axis=0)
        a, b, c = (p[faces[:, k]].astype(np.float64) for k in range(3))
        flip = np.einsum("ij,ij->i", np.cross(b - a, c - a), a - centre) < 0
        faces[flip] = faces[flip][:, ::-1]
        used = np.unique(faces)
        remap = np.full(POINTS, -1, dtype=np.int64)
        remap[used] = np.arange(len(used))
        yield p[used], remap[faces].astype(np.uint32)


def random_quaternions(rng: np.random.Generator, n: int) -> np.ndarray:
    """n unit quaternions (x, y, z, w) uniform on SO(3), glTF's order."""
    q = rng.normal(size=(n, 4))
    return q / np.linalg.norm(q, axis=1)[:, None]


def scene(n: int, seed: int = 0):
    """The glTF JSON document and its binary buffer for n parts."""
    return scenes(n, seed, 1)[0]


def scenes(n: int, seed: int = 0, files: int = 1) -> list:
    """[(glTF JSON document, binary buffer)] of the n-part scene split over `files` files: part
    k in file k mod files (the same parts, names and poses as the one-file scene)."""
    rng = np.random.default_rng(seed)
    side = SPACING * n ** (1.0 / 3.0)
    centres = rng.uniform(0.0, side, size=(n, 3))
    quats = random_quaternions(rng, n)
    docs = [_Document() for _ in range(files)]
    width = len(str(n - 1))
    for k, (v, f) in enumerate(part_meshes(rng, n)):
        docs[k % files].add(f"part_{k:0{width}d}", f"mesh_{k:0{width}d}", v, f, quats[k], centres[k])
    return [d.finish() for d in docs]


class _Document:
    """A glTF scene being written, one mesh and node per part."""

    def __init__(self):
        self.chunks, self.accessors, self.views, self.meshes, self.nodes = [], [], [], [], []
        self.offset = 0

    def add(self, name: str, mesh_name: str, v, f, quat, centre) -> None:
        chunks, accessors, views, meshes, nodes = (self.chunks, self.accessors, self.views,
                                                   self.meshes, self.nodes)
        k = len(nodes)
        offset = self.offset
        vb, fb = v.tobytes(), f.tobytes()
        views.append({"buffer": 0, "byteOffset": offset, "byteLength": len(vb), "target": 34962})
        offset += len(vb)
        views.append({"buffer": 0, "byteOffset": offset, "byteLength": len(fb), "target": 34963})
        offset += len(fb)
        chunks += [vb, fb]
        accessors.append({"bufferView": 2 * k, "componentType": 5126, "count": len(v), "type": "VEC3",
                          "min": v.min(axis=0).tolist(), "max": v.max(axis=0).tolist()})
        accessors.append({"bufferView": 2 * k + 1, "componentType": 5125, "count": f.size,
                          "type": "SCALAR"})
        meshes.append({"name": mesh_name,
                       "primitives": [{"attributes": {"POSITION": 2 * k}, "indices": 2 * k + 1,
                                       "mode": 4}]})
        nodes.append({"name": name, "mesh": k, "rotation": quat.tolist(), "translation": centre.tolist()})
        self.offset = offset

    def finish(self):
        binary = b"".join(self.chunks)
        doc = {
            "asset": {"version": "2.0", "generator": "gjk scripts/make_scan_scene.py"},
            "scene": 0,
            "scenes": [{"nodes": list(range(len(self.nodes)))}],
            "nodes": self.nodes,
            "meshes": self.meshes,
            "accessors": self.accessors,
            "bufferViews": self.views,
            "buffers": [{"byteLength": len(binary)}],
        }
        return doc, binary


def write_glb(path: Path, doc: dict, binary: bytes) -> None:
    """A binary glTF 2.0 file: header, JSON chunk, BIN chunk, each padded to 4 bytes."""
    text = json.dumps(doc, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 4)
    binary += b"\0" * (-len(binary) % 4)
    total = 12 + 8 + len(text) + 8 + len(binary)
    with open(path, "wb") as fh:
        fh.write(struct.pack("<4sII", b"glTF", 2, total))
        fh.write(struct.pack("<I4s", len(text), b"JSON"))
        fh.write(text)
        fh.write(struct.pack("<I4s", len(binary), b"BIN\0"))
        fh.write(binary)


def make(n: int, path, seed: int = 0) -> Path:
    """Write the n-part scene to `path`; returns the path."""
    path = Path(path)
    doc, binary = scene(n, seed)
    write_glb(path, doc, binary)
    return path


def make_split(n: int, path, files: int, seed: int = 0) -> list:
    """Write the n-part scene over `files` files, PATH_0.glb ...; returns their paths."""
    path = Path(path)
    out = []
    for k, (doc, binary) in enumerate(scenes(n, seed, files)):
        out.append(path.with_name(f"{path.stem}_{k}{path.suffix or '.glb'}"))
        write_glb(out[-1], doc, binary)
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("n", type=int, help="number of parts")
    parser.add_argument("out", type=Path, help="GLB file to write")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--files", type=int, default=1, help="split the scene over this many files")
    args = parser.parse_args(argv)
    if args.n < 1:
        parser.error("n must be >= 1")
    if args.files < 1:
        parser.error("--files must be >= 1")
    if args.files > 1:
        written = make_split(args.n, args.out, args.files, args.seed)
        print(f"wrote {len(written)} files {written[0]} ... ({args.n} parts)")
        return 0
    make(args.n, args.out, args.seed)
    print(f"wrote {args.out} ({args.n} parts, {args.out.stat().st_size / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
