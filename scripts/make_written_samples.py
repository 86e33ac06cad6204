"""Write tests/data/written/: small parts as the tools people use write them (issue 44).

Run from anywhere: ``python scripts/make_written_samples.py``. Each writer follows the layout its
tool gives an export (the header lines, the order of the statements, how numbers are printed,
how faces index vertices, texture coordinates and normals), as read in the tools' exporters and
in exports found in public repositories; the geometry is gjk's own, chosen so that every verdict
is known:

| file | as written by | what it holds |
|---|---|---|
| blender_cube.obj, blender_cylinder.obj | Blender 4 (`o`, `v`, `vn`, `vt`, `s 0`, `usemtl`, quads and 32-gon caps as v/vt/vn) | the default cube (2 wide, at the origin); a 32-sided cylinder of radius 1 on z at x = 2.2 (clear, 0.2 apart) |
| blender_scene.obj | Blender 4, the whole scene | Cube, Cylinder, an L-shaped prism (non-convex 6-gon caps) and a small block in the L's notch: the block and the L are clear (0.2) |
| fusion_a.obj, fusion_b.obj | Autodesk Fusion (ATF: `g Body1`, triangles as v/vt/vn, blank lines between blocks) | the cube; the cylinder |
| freecad_a.obj, freecad_b.obj, freecad_scene.obj | FreeCAD's Arch exporter (`o` per object, planar faces as polygons, global indices) | the cube; the cylinder; both with the L and the block |
| meshlab_a.obj, meshlab_b.obj | MeshLab (`####` header, `vn` before each `v`, `f a//a b//b c//c`, counts as comments) | the cube; the cylinder |
| relative_a.obj, relative_b.obj, relative_scene.obj | writers that index back from the last vertex (`f -4 -3 -2 -1`), each object's vertices before its faces | the cube; the cylinder; both, interleaved |
| colours_a.ply, colours_b.ply | MeshLab's binary PLY (VCGLIB: normals and RGBA colours per vertex, a colour per face) | the cube; the cylinder |
| meshes_a.glb, meshes_b.glb | a GLB of several meshes, each its own node (trimesh's exporter) | the cube and a plate on it; the cylinder and the block |
"""
from __future__ import annotations

import io
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "written"


# -- geometry: (name, vertices (n, 3), polygons [list of vertex indices]) -------------------------

def cube(center=(0.0, 0.0, 0.0), half=1.0, name="Cube"):
    # Blender's default cube: its vertex order and its six quads
    v = np.array([[1, 1, -1], [1, -1, -1], [1, 1, 1], [1, -1, 1],
                  [-1, 1, -1], [-1, -1, -1], [-1, 1, 1], [-1, -1, 1]], float) * half + center
    quads = [[0, 4, 6, 2], [3, 2, 6, 7], [7, 6, 4, 5], [5, 1, 3, 7], [1, 0, 2, 3], [5, 4, 0, 1]]
    return name, v, quads


def cylinder(center=(2.2, 0.0, 0.0), radius=1.0, half=1.0, n=32, name="Cylinder"):
    # Blender's cylinder: vertices in pairs (bottom, top) around z, side quads, two n-gon caps
    a = 2 * np.pi * np.arange(n) / n
    ring = np.stack([-np.sin(a) * radius, np.cos(a) * radius], axis=1)
    v = np.zeros((2 * n, 3))
    v[0::2, :2] = ring
    v[1::2, :2] = ring
    v[0::2, 2], v[1::2, 2] = -half, half
    v += center
    sides = [[2 * k, 2 * k + 1, (2 * k + 3) % (2 * n), (2 * k + 2) % (2 * n)] for k in range(n)]
    top = [2 * k + 1 for k in range(n - 1, -1, -1)]
    bottom = [2 * k for k in range(n)]
    return name, v, [q[::-1] for q in sides + [top, bottom]]  # outward, counter-clockwise


def l_prism(origin=(0.0, 4.0, -1.0), name="L_bracket"):
    # an L of 2 x 2 with a 1 x 1 notch, 2 high; each cap listed from a corner that cannot see the
    # whole L, so that a fan from the first corner would cover the notch
    outline = np.array([[2, 1], [1, 1], [1, 2], [0, 2], [0, 0], [2, 0]], float)
    k = len(outline)
    v = np.concatenate([np.column_stack([outline, np.zeros(k)]),
                        np.column_stack([outline, np.full(k, 2.0)])]) + origin
    bottom = list(range(k))[::-1]
    top = list(range(k, 2 * k))
    sides = [[i, (i + 1) % k, k + (i + 1) % k, k + i] for i in range(k)]
    return name, v, [top, bottom] + sides


def block(name="Block"):
    # in the L's notch (x, y in [1.2, 1.8] + origin), through the L's top plane: 0.2 from the L
    return cube(center=(1.5, 5.5, 1.0), half=0.3, name=name)


def triangles(polygons):
    return [[p[0], p[i], p[i + 1]] for p in polygons for i in range(1, len(p) - 1)] \
        if all(len(p) <= 4 for p in polygons) else None


def normal_of(v, polygon):
    p = v[polygon]
    n = np.cross(p, np.roll(p, -1, axis=0)).sum(axis=0)
    return n / np.linalg.norm(n)


def uv_of(v, polygon):
    # a plausible unwrap: the corner's position projected, scaled into [0, 1]
    p = v[polygon]
    return (p[:, :2] - p[:, :2].min(axis=0)) / max(np.ptp(p[:, :2]), 1e-9) * 0.25 + 0.375


# -- writers --------------------------------------------------------------------------------------

def blender(objects, stem):
    out = ["# Blender 4.1.1", "# www.blender.org", f"mtllib {stem}.mtl"]
    nv = nt = nn = 0
    for k, (name, v, polys) in enumerate(objects):
        out.append(f"o {name}")
        out += [f"v {x:.6f} {y:.6f} {z:.6f}" for x, y, z in v]
        normals = [normal_of(v, p) for p in polys]
        out += [f"vn {x:.4f} {y:.4f} {z:.4f}" for x, y, z in normals]
        uvs = [uv_of(v, p) for p in polys]
        out += [f"vt {s:.6f} {t:.6f}" for uv in uvs for s, t in uv]
        out.append("s 0")
        out.append("usemtl Material" + (f".{k:03d}" if k else ""))
        t = nt
        for j, p in enumerate(polys):
            out.append("f " + " ".join(f"{nv + i + 1}/{t + c + 1}/{nn + j + 1}" for c, i in enumerate(p)))
            t += len(p)
        nv, nt, nn = nv + len(v), t, nn + len(polys)
    return "\n".join(out) + "\n"


def fusion(objects, stem):
    out = ["# WaveFront *.obj file (generated by Autodesk ATF)", "", f"mtllib {stem}.mtl", ""]
    nv = 0
    for k, (name, v, polys) in enumerate(objects):
        tris = triangles(polys) or [t for p in polys for t in ear_free_fan(p)]
        out += [f"g Body{k + 1}", ""]
        out += [f"v {x:.6f} {y:.6f} {z:.6f}" for x, y, z in v] + [""]
        out += [f"vn {x:.6f} {y:.6f} {z:.6f}" for x, y, z in (normal_of(v, t) for t in tris)] + [""]
        out += [f"vt {s:.6f} {t:.6f}" for s, t in (uv_of(v, t)[0] for t in tris)] + [""]
        out += ["usemtl Steel_-_Satin", ""]
        out += [f"f {nv + a + 1}/{j + 1}/{j + 1} {nv + b + 1}/{j + 1}/{j + 1} {nv + c + 1}/{j + 1}/{j + 1}"
                for j, (a, b, c) in enumerate(tris)]
        out.append("")
        nv += len(v)
    return "\n".join(out) + "\n"


def ear_free_fan(polygon):
    # Fusion writes triangles from its own tessellation; the caps of the cylinder are convex
    return [[polygon[0], polygon[i], polygon[i + 1]] for i in range(1, len(polygon) - 1)]


def freecad(objects, stem):
    out = ["# FreeCAD v0.21.2 Arch module", "# https://www.freecad.org", f"mtllib {stem}.mtl"]
    nv = 0
    for name, v, polys in objects:
        out.append(f"o {name}")
        out += [f"v {x:.6f} {y:.6f} {z:.6f}" for x, y, z in v]
        out.append(f"usemtl color_{name}")
        out += ["f " + " ".join(str(nv + i + 1) for i in p) for p in polys]
        nv += len(v)
    return "\n".join(out) + "\n"


def meshlab(objects, stem):
    (name, v, polys), = objects
    tris = triangles(polys) or [t for p in polys for t in ear_free_fan(p)]
    normals = np.zeros_like(v)
    for t in tris:
        normals[t] += normal_of(v, t)
    normals /= np.linalg.norm(normals, axis=1)[:, None]
    out = ["####", "#", "# OBJ File Generated by Meshlab", "#", "####", f"# Object {stem}.obj", "#",
           f"# Vertices: {len(v)}", f"# Faces: {len(tris)}", "#", "####"]
    for p, n in zip(v, normals):
        out += [f"vn {n[0]:.6f} {n[1]:.6f} {n[2]:.6f}", f"v {p[0]:.6f} {p[1]:.6f} {p[2]:.6f}"]
    out += [f"# {len(v)} vertices, 0 vertices normals", ""]
    out += ["f " + " ".join(f"{i + 1}//{i + 1}" for i in t) for t in tris]
    out += [f"# {len(tris)} faces, 0 coords texture", "", "# End of File"]
    return "\n".join(out) + "\n"


def relative(objects, stem):
    out = [f"# {stem}: each object's vertices, then its faces indexed back from the last vertex"]
    for name, v, polys in objects:
        out.append(f"g {name}")
        out += [f"v {x:.6f} {y:.6f} {z:.6f}" for x, y, z in v]
        out += ["f " + " ".join(str(i - len(v)) for i in p) for p in polys]
    return "\n".join(out) + "\n"


def colours_ply(objects):
    (name, v, polys), = objects
    tris = np.array(triangles(polys) or [t for p in polys for t in ear_free_fan(p)])
    normals = np.zeros_like(v)
    for t in tris:
        normals[t] += normal_of(v, t)
    normals /= np.linalg.norm(normals, axis=1)[:, None]
    header = ("ply\nformat binary_little_endian 1.0\ncomment VCGLIB generated\n"
              f"element vertex {len(v)}\nproperty float x\nproperty float y\nproperty float z\n"
              "property float nx\nproperty float ny\nproperty float nz\nproperty uchar red\n"
              "property uchar green\nproperty uchar blue\nproperty uchar alpha\n"
              f"element face {len(tris)}\nproperty list uchar int vertex_indices\n"
              "property uchar red\nproperty uchar green\nproperty uchar blue\nproperty uchar alpha\n"
              "end_header\n").encode()
    vertex = np.zeros(len(v), dtype=[("xyz", "<f4", (3,)), ("n", "<f4", (3,)), ("rgba", "u1", (4,))])
    vertex["xyz"], vertex["n"], vertex["rgba"] = v, normals, (180, 180, 200, 255)
    face = np.zeros(len(tris), dtype=[("count", "u1"), ("index", "<i4", (3,)), ("rgba", "u1", (4,))])
    face["count"], face["index"], face["rgba"] = 3, tris, (200, 120, 40, 255)
    return header + vertex.tobytes() + face.tobytes()


def glb(objects) -> bytes:
    import trimesh

    scene = trimesh.Scene()
    for name, v, polys in objects:
        tris = triangles(polys) or [t for p in polys for t in ear_free_fan(p)]
        scene.add_geometry(trimesh.Trimesh(v, np.array(tris), process=False), node_name=name,
                           geom_name=name)
    buffer = io.BytesIO()
    buffer.write(scene.export(file_type="glb"))
    return buffer.getvalue()


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    a, b = [cube()], [cylinder()]
    scene = [cube(), cylinder(), l_prism(), block()]
    files = {
        "blender_cube.obj": blender(a, "blender_cube"),
        "blender_cylinder.obj": blender(b, "blender_cylinder"),
        "blender_scene.obj": blender(scene, "blender_scene"),
        "fusion_a.obj": fusion(a, "fusion_a"),
        "fusion_b.obj": fusion(b, "fusion_b"),
        "freecad_a.obj": freecad(a, "freecad_a"),
        "freecad_b.obj": freecad(b, "freecad_b"),
        "freecad_scene.obj": freecad(scene, "freecad_scene"),
        "meshlab_a.obj": meshlab(a, "meshlab_a"),
        "meshlab_b.obj": meshlab(b, "meshlab_b"),
        "relative_a.obj": relative(a, "relative_a"),
        "relative_b.obj": relative(b, "relative_b"),
        "relative_scene.obj": relative(scene, "relative_scene"),
    }
    for name, text in files.items():
        (OUT / name).write_text(text)
    (OUT / "colours_a.ply").write_bytes(colours_ply(a))
    (OUT / "colours_b.ply").write_bytes(colours_ply(b))
    plate = cube(center=(0.0, 0.0, 1.25), half=0.25, name="Plate")
    (OUT / "meshes_a.glb").write_bytes(glb([cube(), plate]))
    (OUT / "meshes_b.glb").write_bytes(glb([cylinder(), block()]))
    print(f"wrote {len(files) + 4} files in {OUT}")


if __name__ == "__main__":
    main()
