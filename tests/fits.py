"""What the tests of fits (a part wedged in another, a pipe in its sleeve) share: the meshes
written to full precision for the run to read, and manifold3d's common volume as a judge apart
from `gjkcli.mesh.overlap`."""
from __future__ import annotations

import numpy as np


def write_off(path, mesh) -> None:
    """The mesh as an OFF file, every coordinate to its last digit."""
    lines = ["OFF", f"{len(mesh.vertices)} {len(mesh.faces)} 0"]
    lines += [" ".join(f"{x:.17g}" for x in v) for v in mesh.vertices.tolist()]
    lines += ["3 " + " ".join(map(str, f)) for f in mesh.faces.tolist()]
    path.write_text("\n".join(lines) + "\n")


def checked_pair(folder, a, b, band: float, names=("a", "b")):
    """The pair of meshes a and b as `gjk check` answers it at the touching band `band` (the
    run: the triangle test, then what settles a pair it leaves undecided), each written to an
    OFF file in `folder` under its name."""
    from gjkcli.pipeline import run as pipeline

    paths = [folder / f"{name}.off" for name in names]
    for path, mesh in zip(paths, (a, b)):
        write_off(path, mesh)
    (pair,) = pipeline.check(*paths, pipeline.Options(tolerance=band, jobs=1)).pairs
    return pair


def common_solid(a, b, shift=None):
    """manifold3d's solid both meshes occupy (a Manifold), in double precision, both moved by
    `shift` (default: A's lowest corner) towards the origin, which keeps their digits. A mesh of
    several closed pieces (an IFC element's B-reps as IfcOpenShell gives them, each its own
    vertices) is their union."""
    import manifold3d

    shift = a.vertices.min(axis=0) if shift is None else np.asarray(shift, dtype=np.float64)

    def solid(m):
        return manifold3d.Manifold(manifold3d.Mesh64(
            vert_properties=np.ascontiguousarray(m.vertices - shift),
            tri_verts=np.ascontiguousarray(m.faces, dtype=np.uint64)))

    return solid(a) ^ solid(b)


def common_volume(a, b, shift=None) -> float:
    """The volume of `common_solid(a, b, shift)`."""
    return float(common_solid(a, b, shift).volume())
