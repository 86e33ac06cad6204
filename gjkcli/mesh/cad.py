"""STEP files (AP203, AP214, AP242) through OpenCASCADE (`cadquery-ocp`): assemblies as named,
placed solids, tessellated with a recorded error bound, and the exact B-rep answers the
pipeline refines with.

Reading (`read_step`): STEPCAFControl_Reader into an XCAF document keeps the assembly: every
solid of every product instance is an object, moved by the product of the placements down its
instance path, and named by that path of product names, the root first
(`box_sides/gusset:3`: the third instance of product `gusset` in assembly `box_sides`); a product
used once under its parent has no `:k`, a product of several solids names them `#k`. The STEP
occurrence ids (`NAUO3`) are not names a user knows, so they are not used.

Units: OpenCASCADE converts every length into millimetres as it reads; the file's own length
unit (STEPControl_Reader.FileUnits, the first representation's) is what the parts are reported
in, so the coordinates are scaled back from millimetres into it.

Tessellation: BRepMesh_IncrementalMesh with a linear deflection of
`DEFAULT.cad_deflection_rel` x the solid's bounding-box diagonal (and 0.5 rad angular). Each
part records `eps`, how far its triangles may lie from its true surface: the deflection asked
for, raised to the largest gap measured between the surface and the triangles at every curved
face's triangle centres and edge midpoints (both evaluated at the same surface parameters, so
the gap bounds the distance both ways there). Planar faces are exact where triangulated; the
triangles of any face may miss a sliver along a curved boundary edge, whose chord error
BRepMesh keeps within the deflection. A solid of planar faces and straight edges only (a box, a
prism) is its triangles: eps 0.

Exact answers (`exact_distance`, `common_volume`): BRepExtrema_DistShapeShape and
BRepAlgoAPI_Common on the solids themselves, found again through `SolidRef`s (the file, the
solid's index): a reader in a worker process hands back plain data, and the main process reads
the file again only for the pairs that need it (the last files read stay cached). Cheaper
where the caller can say so: the distance on the nearest faces only (`within`), on canonical
copies of the solids (`canonical`: B-spline faces that are planes, cylinders... as those
surfaces, off by `slack`, and their B-spline edges as the circles and lines where those
meet), or bounded by a point of each surface within the band
(`touching_points`).
"""
from __future__ import annotations

import collections
import functools
import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gjkcli import extras, progress
from gjkcli.errors import FailedLine, InputError
from gjkcli.mesh import cad_process
from gjkcli.units import canonical, factor

__all__ = ["STEP_TYPES", "SolidRef", "read_step", "unmeshed", "exact_distance", "common_volume",
           "common_part", "placed_solid", "available", "surface_points", "slack",
           "touching_points", "finer", "shares", "finer_near", "diagonal", "nested", "edge_moves", "canonical_todo", "canonical_export",
           "canonical_import", "recorded", "placed_parts", "solids_ahead", "forget_answers"]

STEP_TYPES = frozenset(cad_process.STEP_TYPES)  # the names' suffixes

# OpenCASCADE's internal length unit as it reads STEP (xstep.cascade.unit's default).
_OCC_UNIT = "mm"

# STEP's names of length units (SI prefixes and CONVERSION_BASED_UNIT names) -> gjkcli.units.
_STEP_UNITS = {"MM": "mm", "MILLIMETRE": "mm", "CM": "cm", "CENTIMETRE": "cm", "M": "m",
               "METRE": "m", "KM": "km", "MICROMETRE": "um", "UM": "um", "NM": "nm",
               "INCH": "in", "IN": "in", "FOOT": "ft", "FT": "ft", "MIL": "mil", "YARD": "yd"}

_OCCURRENCE_ID = re.compile(r"NAUO\d*")

# Files read in this process, newest last: path key -> [(placed solid, ...)], in mm.
_CACHE: dict = {}
_CACHE_FILES = 4


@dataclass(frozen=True)
class SolidRef:
    """Where an exact solid is: the file (resolved path, its size and modification time, so an
    edited file is read again) and the solid's index in `read_step`'s order."""

    path: str
    stamp: tuple
    index: int


def available() -> bool:
    """Whether OpenCASCADE (the `OCP` module of cadquery-ocp) can be imported."""
    try:
        with extras.binding_import():
            import OCP.STEPCAFControl  # noqa: F401
    except ImportError:
        return False
    return True


def _silence_messages() -> None:
    """OpenCASCADE prints its own messages (a bad file's syntax errors, in colour) on the
    process's standard output, where `--format json` writes the report: its default messenger's
    printers are removed (gjk says what is wrong in its own one line on stderr)."""
    from OCP.Message import Message

    messenger = Message.DefaultMessenger_s()
    printers = messenger.Printers()
    while printers.Size():
        messenger.RemovePrinters(printers.First().DynamicType())
        printers = messenger.Printers()


def read_step(path, *, shown: str | None = None, named=lambda name: name,
              deflection_rel: float | None = None, points=None, share: tuple | None = None) -> list:
    """Every solid of a STEP file as a `gjkcli.mesh.load.Part`, in the file's length unit.

    Parameters
    ----------
    path : the STEP file
    shown : the path as the user gave it (the parts' `source`)
    named : applied to each instance path (a scan's file prefix)
    deflection_rel : linear deflection as a fraction of each solid's diagonal (default
        `DEFAULT.cad_deflection_rel`)
    points : called with each product's vertices as it is meshed (once a product, however
        many instances place it) and `shared`, whether several instances place it rigidly (its
        hull is then built once for all of them), or None (`gjkcli.mesh.cad_process` tells the command whether
        the parts will need SciPy's qhull from it)
    share : (k, n): only the instances of share k of n of the file's products (`shares`: a Dask
        scan meshes a large assembly in a task per worker, each reading the file), in the
        file's order, each the part the whole file's read makes of it; None: every instance

    Raises InputError (one line naming the file) for a file OpenCASCADE cannot read or that holds
    no solid or surface.
    """
    from gjkcli.tolerances import DEFAULT

    path = Path(path)
    shown = str(path) if shown is None else shown
    rel = DEFAULT.cad_deflection_rel if deflection_rel is None else deflection_rel
    unit, solids = _solids(path)
    # a product's solid is tessellated once, however many instances place it: numbered here in
    # the order of their first instances
    distinct: dict = {}
    count = iter(range(len(solids)))
    placed = [(name, _once(distinct, solid, lambda: next(count)), _matrix(location))
              for name, solid, location in solids]
    shared = _shared_products(placed)
    ref_key = _key(path)
    mine = shares(solids, placed, share[1])[share[0]] if share is not None else None
    products: dict = {}  # per distinct solid (of the share): (vertices, faces, eps) in mm, or None
    failed: list = []  # (index of its first instance, the InputError) per solid that gave nothing
    for index, ((name, solid, _), (_, k, _)) in enumerate(zip(solids, placed)):
        if (mine is None or k in mine) and k not in products:  # its product's first instance
            try:
                products[k] = _tessellate(solid, rel, path, name)
            except InputError as exc:  # the solid left out, named (`unmeshed`); the others read
                products[k] = None
                failed.append((index, exc))
            else:
                if points is not None:
                    points(products[k][0], shared=k in shared)
        progress.report("tessellate", index + 1, len(solids))
    if failed and share is None and len(failed) == len(products):
        raise failed[0][1]  # nothing of the file meshed: the file's own error
    uses = collections.Counter(k for _, k, _ in placed)
    _UNMESHED[ref_key] = [FailedLine(_left_out(exc.message, uses[placed[index][1]]), (index,))
                          for index, exc in failed]
    while len(_UNMESHED) > _CACHE_FILES:
        _UNMESHED.pop(next(iter(_UNMESHED)))
    if share is None and not failed:  # a file with a solid left out is read again next time
        _RECORDED[ref_key] = (unit, rel, placed, [products[k] for k in range(len(products))])
        while len(_RECORDED) > _CACHE_FILES:
            _RECORDED.pop(next(iter(_RECORDED)))
    return placed_parts(path, shown, named, unit, ref_key, products, placed, only=mine)


# The lines of the solids the last reads of `read_step` left out, by `_key` (`unmeshed`).
_UNMESHED: dict = {}


def _left_out(message: str, instances: int) -> str:
    """The line on a solid `_tessellate` refused ("solid 'X' gave no triangles (...); re-export
    it"), placed `instances` times, that the run checks without it."""
    others = f" (nor its {instances - 1} other instance{'s' if instances > 2 else ''})" if instances > 1 else ""
    return f"{message.removesuffix('; re-export it')}: it is not checked{others}; re-export it"


def unmeshed(path) -> list:
    """A line per solid the last `read_step` of the file in this process left out (OpenCASCADE
    gave it no triangles): `FailedLine`s ordered by the solid's first instance in the file."""
    try:
        return list(_UNMESHED.get(_key(Path(path)), ()))
    except OSError:
        return []


def shares(solids: list, placed: list, n: int) -> list:
    """[set of product indices] for each of n shares of a file's products (`read_step`'s
    `share`): the products by their faces, the most first, each to the share with the fewest
    so far (the first such), so that the shares' meshing takes about as long; every instance
    of a product in its share, whose hull it then builds once."""
    faces: dict = {}
    for (_, solid, _), (_, k, _) in zip(solids, placed):
        if k not in faces:
            faces[k] = _count(solid, "FACE")
    load, out = [0] * n, [set() for _ in range(n)]
    for k in sorted(faces, key=lambda k: (-faces[k], k)):
        least = load.index(min(load))
        out[least].add(k)
        load[least] += faces[k]
    return out


def _shared_products(placed: list) -> set:
    """The products (indices) that several instances of `placed` place rigidly: their parts
    share one mesh, whose hull the run builds once, in the compiled core up to
    SHARED_HULL_POINTS (`gjkcli.pipeline.stages.hulls`), so that `read_step`'s `points` are told
    so (a 1,447-point sphere placed twice needs no qhull, nor SciPy's import)."""
    from gjkcli.engine.shapes import rigid_pose

    uses: dict = {}
    for _, k, T in placed:
        if rigid_pose(T) is not None:
            uses[k] = uses.get(k, 0) + 1
    return {k for k, n in uses.items() if n > 1}


# What `read_step` read of the last files, by `_key`: (unit, deflection_rel, [(name, product,
# (4, 4) placement in mm)], [(vertices in mm, faces, eps in mm)]), for `recorded`.
_RECORDED: dict = {}


def recorded(path, deflection_rel: float | None = None):
    """What `read_step` read of the file (in this process) for a cache to keep, or None: (unit,
    [(instance name, product index, (4, 4) placement in mm)], [(vertices in mm, faces, eps in
    mm, (2, 3) box of the B-rep's vertices in mm)]), each product in its solid's frame."""
    from gjkcli.tolerances import DEFAULT

    rel = DEFAULT.cad_deflection_rel if deflection_rel is None else deflection_rel
    path = Path(path)
    got = _RECORDED.get(_key(path))
    if got is None or got[1] != rel:
        return None
    unit, _, placed, products = got
    solids = _solids(path)[1]
    boxes = {}
    for index, (_, k, _) in enumerate(placed):
        if k not in boxes:
            boxes[k] = _vertex_box(solids[index][1])
    return unit, placed, [(*products[k], boxes[k]) for k in range(len(products))]


def _vertex_box(solid) -> np.ndarray | None:
    """(2, 3) the box of a solid's B-rep vertices in its own frame (its location left out), in
    mm; None without a vertex."""
    from OCP.BRep import BRep_Tool
    from OCP.TopAbs import TopAbs_VERTEX
    from OCP.TopExp import TopExp_Explorer
    from OCP.TopLoc import TopLoc_Location
    from OCP.TopoDS import TopoDS

    points = []
    explorer = TopExp_Explorer(solid.Located(TopLoc_Location()), TopAbs_VERTEX)
    while explorer.More():
        p = BRep_Tool.Pnt_s(TopoDS.Vertex(explorer.Current()))
        points.append((p.X(), p.Y(), p.Z()))
        explorer.Next()
    if not points:
        return None
    a = np.array(points)
    return np.array([a.min(axis=0), a.max(axis=0)])


def placed_parts(path, shown: str, named, unit: str, ref_key: tuple, products,
                 placed: list, only: set | None = None) -> list:
    """`read_step`'s parts from what it read: products [(vertices, faces, eps)] in mm (a list,
    or a dict by product index) and placed [(instance name, product index, (4, 4) placement in
    mm)] in the file's order; `only`: the instances of these products alone. No OpenCASCADE
    here (`gjkcli.mesh.stepkeep` makes the parts of a file whose placements alone changed from
    its last read so)."""
    from gjkcli.engine.shapes import rigid_pose
    from gjkcli.mesh.load import Instance, Part

    scale = factor(_OCC_UNIT, unit)
    local: dict = {}  # per product: its vertices in the file's unit (Instance.local)
    parts = []
    for index, (name, k, T) in enumerate(placed):
        if (only is not None and k not in only) or products[k] is None:  # None: left out, `unmeshed`
            continue
        vertices, faces, eps = products[k][:3]
        if k not in local:
            local[k] = vertices * scale
        stretch = float(np.linalg.norm(T[:3, :3], 2))
        # a rigid placement (the usual one) shares the product's mesh, so that its hull is built
        # once (`gjkcli.pipeline.stages.Parts`); a scaled or mirrored one is on its own
        rigid = rigid_pose(T)
        instance = None if rigid is None else Instance(
            key=(ref_key, k), local=local[k], pose=_pose(rigid[0], rigid[1] * scale))
        parts.append(Part(name=named(name), source=shown,
                          vertices=(vertices @ T[:3, :3].T + T[:3, 3]) * scale, faces=faces,
                          units=unit, watertight=None, bodies=None, eps=eps * stretch * scale,
                          brep=(SolidRef(ref_key[0], ref_key[1], index),), instance=instance))
    return parts


# Finer tessellations of product solids: deflection_rel -> {hash: [(solid, answer)]}, `finer`.
_FINER: dict = {}


def finer(ref: SolidRef, unit: str, deflection_rel: float):
    """((n, 3) vertices in `unit`, placed in the assembly; (m, 3) faces; eps in `unit`): the
    solid of `ref` tessellated again with a linear deflection of `deflection_rel` x its
    diagonal, with its error bound measured as `read_step` measures it. On a copy (the file's
    solid keeps its own triangles), once per product and deflection."""
    from OCP.BRepBuilderAPI import BRepBuilderAPI_Copy

    solid, location = _placed(ref)

    def make():
        copy = BRepBuilderAPI_Copy(solid, True, False).Shape()  # its geometry, not its mesh
        return _tessellate(copy, deflection_rel, ref.path, "part")

    vertices, faces, eps = _once(_FINER.setdefault(deflection_rel, {}), solid, make)
    T = _matrix(location)
    scale = factor(_OCC_UNIT, unit)
    stretch = float(np.linalg.norm(T[:3, :3], 2))
    return (vertices @ T[:3, :3].T + T[:3, 3]) * scale, faces, eps * stretch * scale


@functools.lru_cache(maxsize=4096)
def diagonal(ref: SolidRef) -> float:
    """The diagonal of the box of the solid of `ref`, placed, in OpenCASCADE's unit (mm): the
    length its deflection is relative to; once per solid (a rail meets many screws)."""
    return _diagonal(placed_solid(ref))


def _diagonal(shape) -> float:
    from OCP.Bnd import Bnd_Box
    from OCP.BRepBndLib import BRepBndLib

    box = Bnd_Box()
    BRepBndLib.Add_s(shape, box, False)
    lo, hi = box.CornerMin(), box.CornerMax()
    return float(np.linalg.norm([hi.X() - lo.X(), hi.Y() - lo.Y(), hi.Z() - lo.Z()]))


def finer_near(refs_a, refs_b, unit: str, reach: float, deflection_rel, growth=(1.0, 1.0),
               most: float | None = None):
    """((vertices, faces, eps), (vertices, faces, eps)) in `unit`, placed in the assembly: only
    the faces of each of two solids that come within `reach` (in `unit`) of the other's faces
    (`_near_faces`), tessellated again with a linear deflection of `deflection_rel` (one a
    solid) x the placed solid's diagonal, their error measured as `read_step` measures it. A
    face left out lies farther than `reach` from the other solid's boundary, so the boundaries'
    distance is the near faces' wherever that is within `reach`. None for several solids a
    side, no near face, or where the near faces' triangles as the file was meshed, times
    `growth` (one a solid), pass `most` (a finer mesh of a face grows about as its deflection
    shrinks), or are not known.

    Where one solid's faces near the other are a few of many (a housing's ten of its 323
    faces round a rotor), this costs a fraction of the whole solid meshed again (`finer`) and
    of OpenCASCADE's distance on the nearest faces."""
    from OCP.BRepBuilderAPI import BRepBuilderAPI_Copy
    from OCP.BRepMesh import BRepMesh_IncrementalMesh

    if len(refs_a) != 1 or len(refs_b) != 1:
        return None
    k = factor(_OCC_UNIT, unit)
    a, b = _compound(refs_a), _compound(refs_b)
    near = _near_faces(a, b, reach / k)
    if near is None:
        return None
    if most is not None and any(_meshed_triangles(faces) is None
                                or _meshed_triangles(faces) * times > most for faces, times in zip(near, growth)):
        return None
    out = []
    for solid, faces, ref, rel in ((a, near[0], refs_a[0], deflection_rel[0]),
                                   (b, near[1], refs_b[0], deflection_rel[1])):
        deflection = max(rel * diagonal(ref), 1e-12)
        copy = BRepBuilderAPI_Copy(faces, True, False).Shape()  # its geometry, not its mesh
        BRepMesh_IncrementalMesh(copy, deflection, False, 0.5, False)
        vertices, triangles, measured = _triangles(copy, ref.path, "part", deflection)
        if len(triangles) == 0:
            return None
        eps = max(deflection, measured) if _curved(copy) else 0.0
        out.append((vertices * k, triangles, eps * k))
    return out[0], out[1]


def _meshed_triangles(shape) -> int | None:
    """The triangles of the faces of `shape` as they are meshed (the file's solids are, as they
    are read), or None when a face has no triangulation."""
    from OCP.BRep import BRep_Tool
    from OCP.TopLoc import TopLoc_Location
    from OCP.TopoDS import TopoDS

    count = 0
    for face in _faces(shape):
        tri = BRep_Tool.Triangulation_s(TopoDS.Face(face), TopLoc_Location())
        if tri is None:
            return None
        count += tri.NbTriangles()
    return count


def nested(refs_a, refs_b) -> bool:
    """Whether one of two solids whose boundaries do not meet lies inside the other (`_nested`:
    a vertex of each classified in the other)."""
    return _nested(_compound(refs_a), _compound(refs_b))


def _pose(R, t) -> np.ndarray:
    T = np.eye(4)
    T[:3, :3], T[:3, 3] = R, t
    return T


def _has(cache: dict, shape) -> bool:
    """Whether `cache` (`_once`'s) holds an answer for `shape`."""
    return any(seen.IsEqual(shape) for seen, _ in cache.get(hash(shape), ()))


def _once(cache: dict, shape, make):
    """make() for the first shape of its kind (the same solid, unplaced); the cached answer for
    the next ones."""
    bucket = cache.setdefault(hash(shape), [])
    for seen, answer in bucket:
        if seen.IsEqual(shape):
            return answer
    answer = make()
    bucket.append((shape, answer))
    return answer


def _matrix(location) -> np.ndarray:
    """A TopLoc_Location as a 4x4 matrix."""
    t = location.Transformation()
    T = np.eye(4)
    for r in range(3):
        for c in range(4):
            T[r, c] = t.Value(r + 1, c + 1)
    return T


def exact_distance(refs_a, refs_b, unit: str, within: float | None = None,
                   canonical: bool = False):
    """The exact distance between two sets of solids (BRepExtrema_DistShapeShape), in `unit`,
    with a closest point on each: (distance, (3,) point_a, (3,) point_b, inside) where `inside`
    says one solid lies inside the other (distance 0 without touching surfaces).

    within : an upper bound of the distance between the two solids' boundaries, in `unit` (the
        triangles' distance plus their error, `gjkcli.pipeline.tessellated`), or None. With it
        (and one solid a side) only the nearest faces are measured (`_near_faces`), and a
        solid inside the other is found by classifying one point of each in the other.
    canonical : measure the solids with their B-spline faces made canonical (`slack`)
    """
    from OCP.BRepExtrema import BRepExtrema_DistShapeShape

    a, b = _compound(refs_a, canonical), _compound(refs_b, canonical)
    k = factor(_OCC_UNIT, unit)
    d = None
    if within is not None and np.isfinite(within) and len(refs_a) == len(refs_b) == 1:
        d = _near_distance(a, b, within / k)
    near = d is not None
    if not near:
        d = BRepExtrema_DistShapeShape(a, b)
    pa, pb = _closest_points(d, k)
    if not near:
        return d.Value() * k, pa, pb, bool(d.InnerSolution())
    if d.Value() > 0 and _nested(a, b):  # the solids' distance is 0, as the whole solids say
        return 0.0, pa, pa.copy(), True
    return d.Value() * k, pa, pb, False


def boundary_distance(refs_a, refs_b, unit: str, within: float | None = None):
    """(distance, (3,) point_a, (3,) point_b) in `unit` between the boundaries of two sets of
    solids, their faces' (BRepExtrema_DistShapeShape on the faces, so that no point of one is
    classified inside the other): with `within` (as in `exact_distance`) the faces that come
    that close first."""
    from OCP.BRep import BRep_Builder
    from OCP.BRepExtrema import BRepExtrema_DistShapeShape
    from OCP.TopoDS import TopoDS_Compound

    a, b = _compound(refs_a), _compound(refs_b)
    k = factor(_OCC_UNIT, unit)

    def faces(shape):
        compound, builder = TopoDS_Compound(), BRep_Builder()
        builder.MakeCompound(compound)
        for face in _faces(shape):
            builder.Add(compound, face)
        return compound

    d = _near_distance(a, b, within / k) if within is not None and np.isfinite(within) else None
    if d is None:
        d = BRepExtrema_DistShapeShape(faces(a), faces(b))
    return (d.Value() * k, *_closest_points(d, k))


def _near_distance(a, b, bound: float):
    """BRepExtrema_DistShapeShape of the faces of `a` and `b` that come within `bound` (in
    OpenCASCADE's unit) of the other solid (`_near_faces`), or None where there are none or
    their distance passes the bound: the faces left out are farther than the bound from every
    face of the other solid, so the nearest faces' distance is the boundaries' one when it is
    within the bound."""
    from OCP.BRepExtrema import BRepExtrema_DistShapeShape

    near = _near_faces(a, b, bound)
    if near is None:
        return None
    d = BRepExtrema_DistShapeShape(near[0], near[1])
    if not d.IsDone() or d.NbSolution() == 0 or d.Value() > bound:
        return None
    return d


def _closest_points(d, k: float) -> tuple:
    """((3,) point on the first shape, (3,) point on the second) of a BRepExtrema_DistShapeShape
    answer, scaled by k; RuntimeError where it found no solution. Of several solutions (a bolt
    along its hole touches on a line), the least by their coordinates: OpenCASCADE lists them
    in an order that changes from one process to the next (as1_motor's bolt in its bracket: z
    20 in some processes, 30 in others, the same solids and start), and a Dask worker's answer
    is to be one process's."""
    if not d.IsDone() or d.NbSolution() == 0:
        raise RuntimeError("BRepExtrema_DistShapeShape found no solution")
    best = _least(d, ((d.PointOnShape1(n), d.PointOnShape2(n)) for n in range(1, d.NbSolution() + 1)))
    return np.array(best[:3]) * k, np.array(best[3:]) * k


def _least(d, solutions) -> tuple:
    """(x, y, z of the first point, of the second) of the least solution, by coordinates, of
    those whose points lie `d.Value()` apart. OpenCASCADE 7.8 also lists solutions whose second
    point is the origin (a box on a box: four of eight), never the first one; with none apart
    as they should be, the first."""
    value = d.Value()
    found = [_xyz(p) + _xyz(q) for p, q in solutions]
    fit = [x for x in found if abs(math.dist(x[:3], x[3:]) - value) <= _SAME_DISTANCE * max(1.0, value)]
    return min(fit) if fit else found[0]


# Solutions of BRepExtrema_DistShapeShape as far apart as its distance: within this (mm, or
# this fraction of a distance over 1 mm; OpenCASCADE's own Precision::Confusion)
_SAME_DISTANCE = 1e-7


def _xyz(p) -> tuple:
    return p.X(), p.Y(), p.Z()


def touching_points(refs_a, refs_b, unit: str, start, within: float, band: float,
                    canonical: bool = False):
    """(distance, (3,) point_a, (3,) point_b) of a point of each solid's boundary no farther
    apart than `band` (in `unit`), found by projecting `start` (a point where the triangles
    meet) onto one solid's nearest faces and back onto the other's, a few times; None when the
    projections do not come within the band. The points prove the solids' distance within the
    band at a fraction of BRepExtrema_DistShapeShape's cost on faces that coincide (a bolt in
    its hole), whose distance is then only bounded, not measured: 0 <= d <= the distance given.
    within, canonical: as in `exact_distance`."""
    from OCP.BRepBuilderAPI import BRepBuilderAPI_MakeVertex
    from OCP.BRepExtrema import BRepExtrema_DistShapeShape
    from OCP.gp import gp_Pnt

    if len(refs_a) != 1 or len(refs_b) != 1:
        return None
    k = factor(_OCC_UNIT, unit)
    near = _near_faces(_compound(refs_a, canonical), _compound(refs_b, canonical), within / k)
    if near is None:
        return None

    def onto(shape, p):  # of several nearest points, the least by its coordinates (`_closest_points`)
        d = BRepExtrema_DistShapeShape(BRepBuilderAPI_MakeVertex(p).Vertex(), shape)
        if not d.IsDone() or d.NbSolution() == 0:
            return None
        best = _least(d, ((p, d.PointOnShape2(n)) for n in range(1, d.NbSolution() + 1)))
        return gp_Pnt(*best[3:])

    x = gp_Pnt(*(np.asarray(start, dtype=np.float64) / k).tolist())
    for _ in range(_PROJECTIONS):
        pa = onto(near[0], x)
        pb = None if pa is None else onto(near[1], pa)
        if pb is None:
            return None
        if pa.Distance(pb) <= band / k:
            return (pa.Distance(pb) * k, np.array([pa.X(), pa.Y(), pa.Z()]) * k,
                    np.array([pb.X(), pb.Y(), pb.Z()]) * k)
        x = pb
    return None


# Projections back and forth `touching_points` tries: coinciding or tangent faces meet at the
# first; crossing ones converge on their intersection within a few.
_PROJECTIONS = 4


def _faces(shape) -> list:
    from OCP.TopAbs import TopAbs_FACE
    from OCP.TopExp import TopExp_Explorer

    out = []
    explorer = TopExp_Explorer(shape, TopAbs_FACE)
    while explorer.More():
        out.append(explorer.Current())
        explorer.Next()
    return out


# The faces of placed solids and their boxes' corners, (faces, (n, 6) array), `_near_faces`.
_FACE_BOXES: dict = {}


def _face_boxes(shape):
    """(the faces of `shape`, (n, 6) their boxes' corners in mm, lo then hi), or (None, None)
    when it has no face or a box is void; once per placed solid (a compound, made for one
    call, is not kept): a frame touching eleven fittings (the SolidWorks 2017 assembly of
    issue 43, 601 faces) had its faces' boxes made again for each of them."""
    from OCP.Bnd import Bnd_Box
    from OCP.BRepBndLib import BRepBndLib
    from OCP.TopAbs import TopAbs_COMPOUND

    def boxes():
        faces, corners = [], []
        for face in _faces(shape):
            box = Bnd_Box()
            BRepBndLib.Add_s(face, box, False)
            if box.IsVoid():
                return None
            lo, hi = box.CornerMin(), box.CornerMax()
            faces.append(face)
            corners.append((lo.X(), lo.Y(), lo.Z(), hi.X(), hi.Y(), hi.Z()))
        return (faces, np.array(corners)) if faces else None

    if shape.ShapeType() == TopAbs_COMPOUND:
        return boxes() or (None, None)
    return _once(_FACE_BOXES, shape, boxes) or (None, None)


def _near_faces(a, b, reach: float):
    """(compound of A's faces, compound of B's faces) whose bounding boxes come within `reach`
    (mm) of a box of the other solid's faces, or None when a box is void. The boxes are of the
    exact geometry (a B-spline face's poles hold it), not of the triangles, so a face left out
    is farther than `reach` from the other solid's boundary."""
    from OCP.BRep import BRep_Builder
    from OCP.TopoDS import TopoDS_Compound

    (fa, ca), (fb, cb) = _face_boxes(a), _face_boxes(b)
    if not fa or not fb:
        return None
    # every box against every box at once (Bnd_Box.Distance's gap per axis, in NumPy: the
    # Python loop over the pairs of faces was seconds for solids of a few hundred faces each)
    step = max(1, 4_000_000 // (3 * len(cb)))
    keep_a, keep_b = set(), set()
    for start in range(0, len(ca), step):
        part = ca[start:start + step]
        gap = np.maximum(0.0, np.maximum(cb[None, :, :3] - part[:, None, 3:],
                                         part[:, None, :3] - cb[None, :, 3:]))
        near = np.einsum("ijk,ijk->ij", gap, gap) <= reach * reach
        keep_a.update((np.flatnonzero(near.any(axis=1)) + start).tolist())
        keep_b.update(np.flatnonzero(near.any(axis=0)).tolist())
    if not keep_a:
        return None
    builder = BRep_Builder()
    out = []
    for faces, keep in ((fa, keep_a), (fb, keep_b)):
        compound = TopoDS_Compound()
        builder.MakeCompound(compound)
        for n in sorted(keep):
            builder.Add(compound, faces[n])
        out.append(compound)
    return out[0], out[1]


def _nested(a, b) -> bool:
    """Whether one of two solids whose boundaries do not meet lies inside the other: a vertex
    of each classified in the other (BRepClass3d_SolidClassifier)."""
    from OCP.BRep import BRep_Tool
    from OCP.BRepClass3d import BRepClass3d_SolidClassifier
    from OCP.TopAbs import TopAbs_IN, TopAbs_SOLID, TopAbs_VERTEX
    from OCP.TopExp import TopExp_Explorer
    from OCP.TopoDS import TopoDS

    for inner, outer in ((a, b), (b, a)):
        if outer.ShapeType() != TopAbs_SOLID:  # a shell bounds no volume
            continue
        explorer = TopExp_Explorer(inner, TopAbs_VERTEX)
        if not explorer.More():
            continue
        point = BRep_Tool.Pnt_s(TopoDS.Vertex(explorer.Current()))
        classifier = BRepClass3d_SolidClassifier(outer, point, 1e-9)
        if classifier.State() == TopAbs_IN:
            return True
    return False


def common_volume(refs_a, refs_b, unit: str) -> float | None:
    """The volume both sets of solids occupy (BRepAlgoAPI_Common, then GProp), in `unit` cubed;
    None when the boolean fails."""
    got = _common(refs_a, refs_b, area=False)
    return None if got is None else got[0] * factor(_OCC_UNIT, unit) ** 3


def common_part(refs_a, refs_b, unit: str, canonical: bool = False) -> tuple | None:
    """(volume in `unit` cubed, mean thickness in `unit`) of the solids' common part, or None
    when the boolean fails. The mean thickness, 2 x volume / surface area, is exact for a slab
    (two parts pressed together) and 0 for parts that only touch. canonical: as in
    `exact_distance`."""
    got = _common(refs_a, refs_b, canonical=canonical)
    if got is None:
        return None
    volume, area = got
    k = factor(_OCC_UNIT, unit)
    return volume * k ** 3, 0.0 if area <= 0 else 2.0 * volume / area * k


def _common(refs_a, refs_b, area: bool = True, canonical: bool = False):
    """(volume, area) in mm of the solids' common part (area None unless asked), or None when
    the boolean fails."""
    from OCP.BRepAlgoAPI import BRepAlgoAPI_Common
    from OCP.BRepGProp import BRepGProp
    from OCP.GProp import GProp_GProps
    from OCP.OCP.collections import List_TopoDS_Shape

    common = BRepAlgoAPI_Common()
    for refs, add in ((refs_a, common.SetArguments), (refs_b, common.SetTools)):
        shapes = List_TopoDS_Shape()
        shapes.Append(_compound(refs, canonical))
        add(shapes)
    # OpenCASCADE asks of every argument whether it is an inverted solid (a hole in space) on
    # every boolean, about a sixth of box_sides.STEP's; asked once per product here instead
    common.SetCheckInverted(not all(_upright(ref, canonical) for ref in (*refs_a, *refs_b)))
    # oriented boxes besides the axis-aligned ones filter the pairs of sub-shapes intersected
    # (a filter only: the same common part): the SolidWorks 2017 assembly's (issue 43) 21 commons,
    # of a 601-face frame and its fittings, 2.48 s of CPU without them and 1.69 s with; the other
    # corpus files' within 3% either way
    common.SetUseOBB(True)
    # the solids as they were after it: a boolean may otherwise raise their edges' and vertices'
    # tolerances in place, and a later pair's common part on them then depends on the pairs
    # measured before it in this process (tests/mesh/test_cad_booleans.py)
    common.SetNonDestructive(True)
    common.Build()
    if not common.IsDone():
        return None
    volume = GProp_GProps()
    BRepGProp.VolumeProperties_s(common.Shape(), volume)
    if not area:
        return abs(volume.Mass()), None
    surface = GProp_GProps()
    BRepGProp.SurfaceProperties_s(common.Shape(), surface)
    return abs(volume.Mass()), abs(surface.Mass())


# Whether a product's solid (or its canonical copy) is a solid that is not inverted: hash ->
# [(shape, answer)], see `_upright`.
_UPRIGHT: dict = {}


def _upright(ref: SolidRef, canonical: bool = False) -> bool:
    """Whether the solid of `ref` (its canonical copy with `canonical`) is a solid and not an
    inverted one (OpenCASCADE's BOPTools_AlgoTools::IsInvertedSolid, the check its booleans
    make of each argument), once per product: a placement does not change it."""
    from OCP.BOPTools import BOPTools_AlgoTools
    from OCP.TopAbs import TopAbs_SOLID
    from OCP.TopoDS import TopoDS

    solid = _placed(ref)[0]
    if canonical:
        solid = _canonical(solid)[0]
    return _once(_UPRIGHT, solid, lambda: solid.ShapeType() == TopAbs_SOLID
                 and not BOPTools_AlgoTools.IsInvertedSolid_s(TopoDS.Solid(solid)))


# -- reading -----------------------------------------------------------------------------------


def _key(path: Path) -> tuple:
    st = path.stat()
    return str(path.resolve()), (st.st_size, st.st_mtime_ns)


def _solids(path: Path):
    """(the file's unit, [(instance path, solid in its product's frame, its placement)]), in mm,
    cached per file."""
    key = _key(path)
    hit = _CACHE.get(key)
    if hit is None:
        hit = _read(path)
        _CACHE[key] = hit
        while len(_CACHE) > _CACHE_FILES:
            _CACHE.pop(next(iter(_CACHE)))
            _FACE_BOXES.clear()  # made again as asked: no file's solids kept alive by it
    return hit


def solids_ahead(path) -> None:
    """Read the file's exact solids into this process's cache of them (`_solids`), before any
    pair asks for them (`gjkcli.mesh.cad_process`, while the command reads the file's text)."""
    _solids(Path(path))


def placed_solid(ref: SolidRef):
    """The exact solid of `ref` (an OpenCASCADE TopoDS_Shape), placed in the assembly, in mm."""
    return _compound((ref,))


def slack(refs, unit: str) -> float:
    """How far the canonical solids of `refs` (`exact_distance`'s `canonical`) may lie from the
    file's, in `unit`: the largest gap OpenCASCADE measured between a B-spline face and the
    canonical surface that replaced it, or of a rebuilt edge from its faces' surfaces (0 when
    nothing was replaced). The rebuilt edges lie where the surfaces meet, and the file's own
    edges about their tolerance from that (`edge_moves`): how precisely the file gives its
    solid's rims, not a move of the surfaces that bound it, and not counted here."""
    gap = max((_canonical(_placed(ref)[0])[1] for ref in refs), default=0.0)
    return gap * factor(_OCC_UNIT, unit)


def edge_moves(refs, unit: str) -> float:
    """How far, in `unit`, the file's edges (their curves and their curves on both faces) lie
    from the canonical solids' rebuilt ones (`_analytic_edges`), 0 when no edge was rebuilt:
    about the file's edge tolerance, at most twice it (on the AP214 AS1, whose B-spline arcs
    waver about the circles where its planes and cylinders meet, 2.9e-5 mm on the bolt, whose
    edges' tolerance is 2.8e-5 mm)."""
    moved = max((_canonical(_placed(ref)[0])[2] for ref in refs), default=0.0)
    return moved * factor(_OCC_UNIT, unit)


def _placed(ref: SolidRef):
    try:  # ref.path is resolved already: a stat, not a walk of its directories (`_key`)
        st = Path(ref.path).stat()
    except OSError:
        st = None
    if st is None or (st.st_size, st.st_mtime_ns) != ref.stamp:
        raise InputError(ref.path, "changed while gjk was checking it; run again")
    hit = _CACHE.get((ref.path, ref.stamp))
    _, solid, location = (hit or _solids(Path(ref.path)))[1][ref.index]
    return solid, location


# Canonical copies of product solids: hash -> [(solid, (copy, gap, moved))], see `_canonical`.
_CANONICAL: dict = {}


def copies_repaid(groups, scene=None) -> list:
    """For each group (the pairs of one relative pose of two products,
    `gjkcli.pipeline.tessellated`: a list of (refs_a, refs_b), each pair's exact solids), whether
    its products' canonical copies are worth making: every product of it with a B-spline face
    is in another group too, and its B-spline faces that lie within the box of the solid it is
    paired with, counted over its groups, are at least as many as its B-spline faces. scene:
    every group of the run, of which `groups` are some (a Dask task's share), counted instead
    of `groups`, so that a share decides as the whole run does.

    A copy costs about all of the product's B-spline faces converted, fixed and checked, and
    saves on the faces OpenCASCADE's booleans and distances meet the other solid with (faces
    whose boxes lie apart from it are put aside by their boxes, B-spline or not). Euclid's pm2
    housing (issue 43): 324 faces, a copy of 1.25 s of CPU for three pairs that met 12 of its
    B-spline faces and cost the same on the copy as on the file's solid; the AP214 AS1's bolts
    and plates, all B-spline, meet the other solid with most of their faces in pair after
    pair."""
    from collections import Counter

    seen_first: dict = {}  # a group's first pair -> `products` of it: a share is in its scene too

    def products(pairs) -> dict:
        """{product key: (its solid, B-spline faces within the other side's box, in one pair of
        the group: its pairs share one relative pose)}"""
        first = tuple(pairs[:1])
        out = seen_first.get(first)
        if out is not None:
            return out
        out = seen_first[first] = {}
        for refs_a, refs_b in first:
            for mine, other in ((refs_a, refs_b), (refs_b, refs_a)):
                box = _refs_box(other)
                for ref in mine:
                    solid = _placed(ref)[0]
                    near = _splines_within(_compound((ref,)), solid, box)
                    k = hash(solid)
                    out[k] = (solid, max(near, out[k][1]) if k in out else near)
        return out

    keys = [products(pairs) for pairs in groups]
    counted = keys if scene is None else [products(pairs) for pairs in scene]
    seen = Counter(k for solids in counted for k in solids)
    used = Counter()
    for solids in counted:
        for k, (_, near) in solids.items():
            used[k] += near

    def repaid(k, solid) -> bool:
        splines = int(_spline_faces(solid).sum())
        return splines == 0 or (seen[k] >= 2 and used[k] >= splines)

    return [all(repaid(k, solid) for k, (solid, _) in solids.items()) for solids in keys]


def _refs_box(refs) -> np.ndarray | None:
    """(6,) the box (lo, hi) in mm of the faces of the placed solids of `refs`, None when a
    face's box is void."""
    corners = []
    for ref in refs:
        faces, boxes = _face_boxes(_compound((ref,)))
        if faces is None:
            return None
        corners.append(boxes)
    corners = np.concatenate(corners)
    return np.concatenate([corners[:, :3].min(axis=0), corners[:, 3:].max(axis=0)])


def _splines_within(placed, solid, box) -> int:
    """How many B-spline faces of `placed` (the product `solid`, placed) have boxes that meet
    `box` ((6,) lo, hi in mm); all of them when a box is unknown."""
    splines = _spline_faces(solid)
    faces, boxes = _face_boxes(placed)
    if box is None or faces is None or len(faces) != len(splines):
        return int(splines.sum())
    meets = np.all((boxes[:, :3] <= box[3:]) & (box[:3] <= boxes[:, 3:]), axis=1)
    return int(np.count_nonzero(meets & splines))


# Which faces of a product's solid are B-spline or Bezier ones, in `_faces`' order: hash ->
# [(solid, (n,) bool)].
_SPLINE: dict = {}


def _spline_faces(solid) -> np.ndarray:
    from OCP.BRepAdaptor import BRepAdaptor_Surface
    from OCP.GeomAbs import GeomAbs_BezierSurface, GeomAbs_BSplineSurface
    from OCP.TopoDS import TopoDS

    return _once(_SPLINE, solid, lambda: np.array(
        [BRepAdaptor_Surface(TopoDS.Face(f)).GetType() in (GeomAbs_BSplineSurface,
                                                           GeomAbs_BezierSurface)
         for f in _faces(solid)], dtype=bool))


def canonical_todo(refs) -> list:
    """One of `refs` per product whose canonical copy (`_canonical`) this process has still to
    make and that has a B-spline face to make it from, the products with the most faces first:
    the copies worth making on several cores (`canonical_export`) before the pairs are."""
    from OCP.BRepAdaptor import BRepAdaptor_Surface
    from OCP.GeomAbs import GeomAbs_BezierSurface, GeomAbs_BSplineSurface
    from OCP.TopoDS import TopoDS

    seen: dict = {}
    out = []
    for ref in refs:
        solid = _placed(ref)[0]
        if _has(seen, solid) or _has(_CANONICAL, solid):
            continue
        seen.setdefault(hash(solid), []).append((solid, None))
        faces = _faces(solid)
        if any(BRepAdaptor_Surface(TopoDS.Face(f)).GetType() in (GeomAbs_BSplineSurface,
                                                                 GeomAbs_BezierSurface)
               for f in faces):
            out.append((len(faces), ref))
    return [ref for _, ref in sorted(out, key=lambda x: -x[0])]


def canonical_export(refs) -> list:
    """The canonical copies of `refs`' products, made here (and kept, as `_canonical` keeps
    them), each in OpenCASCADE's binary format (exact: every double as it is): [(ref, bytes, or
    None when the copy is the file's own solid, gap, moved)], for `canonical_import` in the
    processes that share the work. A product that cannot be read again (its file changed) is
    left out: a process that needs its copy makes it, and fails, as without sharing."""
    import io

    from OCP.BinTools import BinTools

    out = []
    for ref in refs:
        try:
            solid = _placed(ref)[0]
            copy, gap, moved = _canonical(solid)
            data = None
            if not copy.IsSame(solid):
                stream = io.BytesIO()
                BinTools.Write_s(copy, stream)
                data = stream.getvalue()
        except Exception:  # noqa: BLE001 - left out: the pairs' own refinement says what failed
            continue
        out.append((ref, data, gap, moved))
    return out


def canonical_import(entries) -> None:
    """Keep the canonical copies another process made (`canonical_export`) as this process's
    own, for the products it has not made them for."""
    import io

    from OCP.BinTools import BinTools
    from OCP.TopoDS import TopoDS_Shape

    for ref, data, gap, moved in entries:
        solid = _placed(ref)[0]
        if _has(_CANONICAL, solid):
            continue
        copy = solid
        if data is not None:
            copy = TopoDS_Shape()
            BinTools.Read_s(copy, io.BytesIO(data))
        _CANONICAL.setdefault(hash(solid), []).append((solid, (copy, gap, moved)))


def _canonical(solid):
    """(the solid with each B-spline face replaced by the plane, cylinder, cone, sphere or torus
    it is within `DEFAULT.canonical_rel` x its diagonal, and its B-spline edges between such
    faces by the circles and lines where those surfaces meet; that move in mm (`slack`); how
    far the edges moved from the file's, in mm (`edge_moves`)) or (the solid, 0.0, 0.0) when
    no face converts or the copy fails its checks (valid, the same volume), once per
    product. OpenCASCADE's GeomConvert_SurfToAnaSurf recognises the surface; the face keeps
    its edges, which ShapeFix_Face puts on the new surface; `_analytic_edges` then rebuilds
    them, without which OpenCASCADE's boolean still works on B-spline curves (the AP214 AS1's
    common parts take 4 times as long as on its AP203 copy's true circles)."""
    return _once(_CANONICAL, solid, lambda: _made_canonical(solid))


def _made_canonical(solid):
    from OCP.Bnd import Bnd_Box
    from OCP.BRep import BRep_Tool
    from OCP.BRepAdaptor import BRepAdaptor_Surface
    from OCP.BRepBndLib import BRepBndLib
    from OCP.BRepBuilderAPI import BRepBuilderAPI_MakeFace
    from OCP.BRepTools import BRepTools, BRepTools_ReShape
    from OCP.GeomAbs import GeomAbs_BezierSurface, GeomAbs_BSplineSurface
    from OCP.GeomConvert import GeomConvert_SurfToAnaSurf
    from OCP.ShapeFix import ShapeFix_Face, ShapeFix_Shape
    from OCP.TopAbs import TopAbs_FORWARD, TopAbs_REVERSED
    from OCP.TopoDS import TopoDS

    from gjkcli.tolerances import DEFAULT

    box = Bnd_Box()
    BRepBndLib.Add_s(solid, box, False)
    if box.IsVoid():
        return solid, 0.0, 0.0
    lo, hi = box.CornerMin(), box.CornerMax()
    reach = DEFAULT.canonical_rel * float(np.linalg.norm([hi.X() - lo.X(), hi.Y() - lo.Y(),
                                                          hi.Z() - lo.Z()]))
    reshape, gap, faces = BRepTools_ReShape(), 0.0, 0
    try:
        for face in map(TopoDS.Face, _faces(solid)):
            if face.Orientation() not in (TopAbs_FORWARD, TopAbs_REVERSED):
                return solid, 0.0, 0.0
            if BRepAdaptor_Surface(face).GetType() not in (GeomAbs_BSplineSurface,
                                                          GeomAbs_BezierSurface):
                continue
            if BRepTools.OuterWire_s(face).IsNull() or _count(face, "WIRE") != 1:
                continue  # a face with holes keeps its B-spline (one wire is rebuilt here)
            convert = GeomConvert_SurfToAnaSurf(BRep_Tool.Surface_s(face))
            surface = convert.ConvertToAnalytical(reach)
            if surface is None or not convert.Gap() <= reach:
                continue
            made = BRepBuilderAPI_MakeFace(surface, BRepTools.OuterWire_s(face), True)
            if not made.IsDone():
                continue
            fix = ShapeFix_Face(made.Face())
            fix.Perform()
            new = fix.Face()
            new.Orientation(face.Orientation())
            reshape.Replace(face, new)
            gap, faces = max(gap, convert.Gap()), faces + 1
        if faces == 0:
            return solid, 0.0, 0.0
        fix = ShapeFix_Shape(reshape.Apply(solid))  # the new faces' edges shared again
        fix.Perform()
        copy = fix.Shape()
        try:
            edged = _analytic_edges(copy)
        except Exception:  # noqa: BLE001 - OpenCASCADE's failure: the faces' copy is kept
            edged = None
        if edged is not None and _same_solid(solid, edged[0]):
            return edged[0], max(gap, edged[1]), edged[2]
        if _same_solid(solid, copy):  # the faces' copy, where the edges' failed
            return copy, gap, 0.0
        return solid, 0.0, 0.0
    except Exception:  # noqa: BLE001 - OpenCASCADE's failure: the file's own solid is measured
        return solid, 0.0, 0.0


# GProp's volume integration asked to this relative error (`_same_solid`).
_VOLUME_EPS = 1e-9
# A copy's volume and its solid's agree within this relative difference (`_same_solid`).
_VOLUME_SAME = 1e-6
# The file's solids' volumes, integrated adaptively: hash -> [(solid, volume)], `_same_solid`.
_VOLUMES: dict = {}


def _same_solid(solid, copy) -> bool:
    """Whether a canonical copy passes for its solid: of its type, valid (BRepCheck_Analyzer),
    and of the same volume within _VOLUME_SAME of it. The copy's boundary moves by at most its
    area x its gap in volume, far below that. The volumes are first those of GProp's fixed Gauss
    points, the same rule on both (a face replaced wrongly, flipped or dropped, moves the volume
    by far more; Euclid's pm2 rotor housing: 113234.9745 mm3 both, where the adaptive
    integration took 2 s a solid); where they differ, integrated adaptively to _VOLUME_EPS, as
    GProp's fixed points on the file's B-spline faces are themselves off by more (the AP214
    AS1's rod: 15708.39 for 25 pi x 200 = 15707.96 mm3; 15707.9646 adaptively), the file's
    solid's once."""
    from OCP.BRepCheck import BRepCheck_Analyzer
    from OCP.BRepGProp import BRepGProp
    from OCP.GProp import GProp_GProps

    if copy.ShapeType() != solid.ShapeType() or not BRepCheck_Analyzer(copy).IsValid():
        return False

    def volume(shape, *eps):
        props = GProp_GProps()
        BRepGProp.VolumeProperties_s(shape, props, *eps)
        return props.Mass()

    def same(first, second):
        return abs(second - first) <= _VOLUME_SAME * abs(first)

    if same(volume(solid), volume(copy)):
        return True
    return same(_once(_VOLUMES, solid, lambda: volume(solid, _VOLUME_EPS)),
                volume(copy, _VOLUME_EPS))


def _analytic_edges(shape):
    """(the shape with each B-spline edge between two analytic faces rebuilt as the curve where
    their surfaces meet, the largest distance in mm of a new edge or vertex from its faces'
    surfaces, the largest distance in mm of an old edge (its curve and its curves on both
    faces) from the new one), or None when no edge is rebuilt or one cannot be.

    A plane meets a plane, cylinder, cone or sphere in a line or a circle (IntAna_QuadQuadGeo);
    the two halves of one cylinder (IntAna_Same) meet along a ruling, the line through the
    edge's first vertex along the axis. Each vertex on a new circle or line moves onto it (its
    nearest point, ElCLib), on a copy of the shape. The surfaces are what bound the solid and the file's edge lies
    anywhere within its tolerance (BRep_Tool.Tolerance) of where they meet: an edge whose curve
    lies farther than twice that from the new one is not the surfaces' meeting curve, and the
    whole copy is given up. The new edges have no pcurves; ShapeFix_Shape projects them (a
    circle on a cylinder: a line), and their tolerances are the new curves' own.
    """
    from OCP.BRep import BRep_Builder, BRep_Tool
    from OCP.BRepAdaptor import BRepAdaptor_Curve, BRepAdaptor_Surface
    from OCP.BRepBuilderAPI import BRepBuilderAPI_Copy, BRepBuilderAPI_MakeEdge
    from OCP.BRepTools import BRepTools_ReShape
    from OCP.ElCLib import ElCLib
    from OCP.GeomAbs import GeomAbs_BezierCurve, GeomAbs_BSplineCurve
    from OCP.OCP.collections import (
        IndexedDataMap_TopoDS_Shape_List_TopoDS_Shape_TopTools_ShapeMapHasher as Ancestors,
    )
    from OCP.ShapeFix import ShapeFix_Shape
    from OCP.TopAbs import TopAbs_EDGE, TopAbs_FACE, TopAbs_FORWARD, TopAbs_VERTEX
    from OCP.TopExp import TopExp
    from OCP.TopoDS import TopoDS

    shape = BRepBuilderAPI_Copy(shape, True, False).Shape()  # its vertices are moved in place
    edges, vertices = Ancestors(), Ancestors()
    TopExp.MapShapesAndUniqueAncestors_s(shape, TopAbs_EDGE, TopAbs_FACE, edges)
    TopExp.MapShapesAndUniqueAncestors_s(shape, TopAbs_VERTEX, TopAbs_EDGE, vertices)
    meets: dict = {}  # edge index -> (gp_Circ or gp_Lin where its faces' surfaces meet, faces)
    rulings: dict = {}  # edge index -> (gp_Cylinder, faces)
    for i in range(1, edges.Extent() + 1):
        edge, around = TopoDS.Edge(edges.FindKey(i)), edges.FindFromIndex(i)
        if BRep_Tool.Degenerated_s(edge) or around.Size() not in (1, 2):
            continue
        faces = [TopoDS.Face(around.First()), TopoDS.Face(around.Last())][:around.Size()]
        if not all(s.Location().IsIdentity() for s in (edge, *faces)):
            return None  # the new curves are built where the adaptors place them
        curve = BRepAdaptor_Curve(edge)
        if curve.GetType() not in (GeomAbs_BSplineCurve, GeomAbs_BezierCurve):
            continue
        middle = curve.Value((curve.FirstParameter() + curve.LastParameter()) / 2)
        surfaces = [BRepAdaptor_Surface(f) for f in faces]
        if len(faces) == 1:  # a seam: the face's surface meets itself
            if not BRep_Tool.IsClosed_s(edge, faces[0]):
                continue
            surfaces.append(surfaces[0])
        got = _meeting(surfaces[0], surfaces[1], middle)
        if got == "same":
            rulings[i] = (surfaces[0].Cylinder(), faces)
        elif got is not None:
            meets[i] = (got, faces)
    if not meets and not rulings:
        return None
    on: dict = {}  # vertex index -> the first new circle or line through it
    for i, (target, _) in meets.items():
        edge = TopoDS.Edge(edges.FindKey(i))
        for vertex in (TopExp.FirstVertex_s(edge), TopExp.LastVertex_s(edge)):
            on.setdefault(vertices.FindIndex(vertex), target)
    builder = BRep_Builder()
    for i, target in on.items():  # moved where they are (a seam's vertices too)
        vertex = TopoDS.Vertex(vertices.FindKey(i))
        point = BRep_Tool.Pnt_s(vertex)
        point = ElCLib.Value_s(ElCLib.Parameter_s(target, point), target)
        builder.UpdateVertex(vertex, point, _NEW_TOLERANCE)
    reshape, gap, moves = BRepTools_ReShape(), 0.0, 0.0
    for i, (target, faces) in (*meets.items(), *rulings.items()):
        old = TopoDS.Edge(edges.FindKey(i).Oriented(TopAbs_FORWARD))
        ends = [TopExp.FirstVertex_s(old), TopExp.LastVertex_s(old)]
        new = _edge_on(target, old, TopoDS.Vertex(ends[0]), TopoDS.Vertex(ends[1]))
        if new is None:
            return None
        made, first, last, target = new
        edge = BRepBuilderAPI_MakeEdge(made, TopoDS.Vertex(ends[0]), TopoDS.Vertex(ends[1]),
                                       first, last)
        if not edge.IsDone():
            return None
        off = _curve_gap(made, target, old, faces, ends, first, last)
        if off is None:
            return None
        gap, moves = max(gap, off[0]), max(moves, off[1])
        reshape.Replace(old, edge.Edge())
    fix = ShapeFix_Shape(reshape.Apply(shape))  # the pcurves, projected on the faces
    fix.Perform()
    return fix.Shape(), gap, moves


# A moved vertex's tolerance (mm), OpenCASCADE's least (Precision::Confusion); ShapeFix raises
# it where an edge that was not rebuilt needs more.
_NEW_TOLERANCE = 1e-7

# Angle (rad) and distance (mm) within which IntAna_QuadQuadGeo takes two surfaces as parallel
# or coincident: OpenCASCADE's Precision::Angular and Precision::Confusion.
_MEET_ANGLE, _MEET_DISTANCE = 1e-12, 1e-7


def _meeting(first, second, near):
    """The gp_Circ or gp_Lin where two faces' surfaces (BRepAdaptor_Surface) meet, the one
    nearest the point `near` of their edge; "same" for two faces of one cylinder; None
    otherwise."""
    from OCP.GeomAbs import GeomAbs_Cone, GeomAbs_Cylinder, GeomAbs_Plane, GeomAbs_Sphere
    from OCP.IntAna import IntAna_QuadQuadGeo, IntAna_ResultType

    kinds = (first.GetType(), second.GetType())
    if kinds == (GeomAbs_Cylinder, GeomAbs_Cylinder):
        meet = IntAna_QuadQuadGeo(first.Cylinder(), second.Cylinder(), _MEET_DISTANCE)
        same = meet.IsDone() and meet.TypeInter() == IntAna_ResultType.IntAna_Same
        return "same" if same else None
    if kinds[1] == GeomAbs_Plane and kinds[0] != GeomAbs_Plane:
        first, second, kinds = second, first, kinds[::-1]
    if kinds[0] != GeomAbs_Plane:
        return None
    plane = first.Plane()
    if kinds[1] == GeomAbs_Plane:
        meet = IntAna_QuadQuadGeo(plane, second.Plane(), _MEET_ANGLE, _MEET_DISTANCE)
    elif kinds[1] == GeomAbs_Cylinder:
        meet = IntAna_QuadQuadGeo(plane, second.Cylinder(), _MEET_ANGLE, _MEET_DISTANCE)
    elif kinds[1] == GeomAbs_Cone:
        meet = IntAna_QuadQuadGeo(plane, second.Cone(), _MEET_ANGLE, _MEET_DISTANCE)
    elif kinds[1] == GeomAbs_Sphere:
        meet = IntAna_QuadQuadGeo(plane, second.Sphere())
    else:
        return None
    if not meet.IsDone():
        return None
    if meet.TypeInter() == IntAna_ResultType.IntAna_Circle:
        found = [meet.Circle(k + 1) for k in range(meet.NbSolutions())]
    elif meet.TypeInter() == IntAna_ResultType.IntAna_Line:
        found = [meet.Line(k + 1) for k in range(meet.NbSolutions())]
    else:
        return None
    return min(found, key=lambda curve: curve.Distance(near)) if found else None


def _edge_on(target, old, start, end):
    """(Geom curve, first, last parameters, its gp_Circ or gp_Lin) of the new edge from vertex
    `start` to `end` on `target` (a gp_Circ, gp_Lin, or gp_Cylinder whose ruling it is),
    running the way the old edge's curve runs; None when it cannot."""
    import math

    from OCP.BRep import BRep_Tool
    from OCP.BRepAdaptor import BRepAdaptor_Curve
    from OCP.ElCLib import ElCLib
    from OCP.Geom import Geom_Circle, Geom_Line
    from OCP.gp import gp_Circ, gp_Cylinder, gp_Lin, gp_Pnt, gp_Vec

    p, q = BRep_Tool.Pnt_s(start), BRep_Tool.Pnt_s(end)
    if isinstance(target, gp_Cylinder):  # a ruling: from the first vertex along the axis
        target = gp_Lin(p, target.Axis().Direction())
    # the old curve's direction halfway, which the new one must share
    curve = BRepAdaptor_Curve(old)
    middle, tangent = gp_Pnt(), gp_Vec()
    curve.D1((curve.FirstParameter() + curve.LastParameter()) / 2, middle, tangent)
    if isinstance(target, gp_Circ):
        made = Geom_Circle(target)
    elif isinstance(target, gp_Lin):
        made = Geom_Line(target)
    else:
        return None
    at = gp_Vec()
    made.D1(ElCLib.Parameter_s(target, middle), gp_Pnt(), at)
    if at.Dot(tangent) < 0:
        made.Reverse()
    first = _parameter(made, p)
    last = _parameter(made, q)
    if isinstance(made, Geom_Circle):
        while last <= first:
            last += 2 * math.pi
    elif not last > first:
        return None
    return made, first, last, target


def _parameter(curve, point) -> float:
    from OCP.GeomAPI import GeomAPI_ProjectPointOnCurve

    return GeomAPI_ProjectPointOnCurve(point, curve).LowerDistanceParameter()


# Points sampled along a new edge, and along an old one (then refined about its farthest), in
# `_curve_gap`.
_EDGE_SAMPLES, _OLD_SAMPLES = 9, 33


def _curve_gap(made, target, old, faces, ends, first, last) -> tuple | None:
    """(the largest distance in mm of the new edge's curve `made` and its vertices `ends` from
    the faces' surfaces, sampled; the largest distance in mm of the old edge's curve and its
    curves on the faces from `made`, whose line or circle is `target`), or None when the old
    edge lies farther from the new one than twice its tolerance (its curves on the two faces
    each within the tolerance of its curve, so at most that far from each other): `made` is
    then not the curve the file's edge stands for."""
    from OCP.BRep import BRep_Tool
    from OCP.BRepAdaptor import BRepAdaptor_Curve
    from OCP.GeomAPI import GeomAPI_ProjectPointOnSurf

    points = [made.Value(t) for t in np.linspace(first, last, _EDGE_SAMPLES)]
    gap = 0.0
    for surface in (BRep_Tool.Surface_s(f) for f in faces):
        for point in (*points, *(BRep_Tool.Pnt_s(v) for v in ends)):
            gap = max(gap, GeomAPI_ProjectPointOnSurf(point, surface).LowerDistance())
    moves = 0.0
    for curve in (BRepAdaptor_Curve(old), *(BRepAdaptor_Curve(old, f) for f in faces)):
        moves = max(moves, _farthest(lambda t, c=curve: target.Distance(c.Value(t)),
                                     curve.FirstParameter(), curve.LastParameter()))
    if not moves <= 2 * BRep_Tool.Tolerance_s(old):
        return None
    return gap, moves


def _farthest(f, a: float, b: float) -> float:
    """max f over [a, b]: f at _OLD_SAMPLES points, then a golden-section search between the
    neighbours of each of the three largest (an old B-spline edge wavers about the new curve
    a few times along it, each wave several samples long; the samples alone miss a crest by
    a fraction of its height, the search by a millionth of it)."""
    ts = np.linspace(a, b, _OLD_SAMPLES)
    values = np.array([f(t) for t in ts])
    best = float(values.max())
    ratio = (np.sqrt(5.0) - 1.0) / 2.0
    for k in np.argsort(values)[-3:]:
        lo, hi = ts[max(k - 1, 0)], ts[min(k + 1, len(ts) - 1)]
        x1, x2 = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
        f1, f2 = f(x1), f(x2)
        for _ in range(16):  # the bracket shrinks to 0.618^16 ~ 5e-4 of two samples' spacing,
            # f within (5e-4)^2 of its crest's rise over that bracket (f is smooth: quadratic there)
            if f1 > f2:
                hi, x2, f2 = x2, x1, f1
                x1 = hi - ratio * (hi - lo)
                f1 = f(x1)
            else:
                lo, x1, f1 = x1, x2, f2
                x2 = lo + ratio * (hi - lo)
                f2 = f(x2)
        best = max(best, f1, f2)
    return best


def _count(shape, kind: str) -> int:
    from OCP import TopAbs
    from OCP.TopExp import TopExp_Explorer

    n, explorer = 0, TopExp_Explorer(shape, getattr(TopAbs, f"TopAbs_{kind}"))
    while explorer.More():
        n += 1
        explorer.Next()
    return n


def _compound(refs, canonical: bool = False):
    """The solids of `refs` as one shape (a compound when several); canonical: their canonical
    copies (`_canonical`)."""
    from OCP.BRep import BRep_Builder
    from OCP.TopoDS import TopoDS_Compound

    shapes = []
    for ref in refs:
        solid, location = _placed(ref)
        if canonical:
            solid = _canonical(solid)[0]
        shapes.append(solid.Moved(location))
    if len(shapes) == 1:
        return shapes[0]
    compound = TopoDS_Compound()
    builder = BRep_Builder()
    builder.MakeCompound(compound)
    for s in shapes:
        builder.Add(compound, s)
    return compound


def _read(path: Path):
    try:
        with extras.binding_import():  # a tenth of a STEP scan's time otherwise
            from OCP.IFSelect import IFSelect_RetDone
            from OCP.OCP.collections import Sequence_TCollection_AsciiString as Strings
            from OCP.OCP.collections import Sequence_TDF_Label as Labels
            from OCP.STEPCAFControl import STEPCAFControl_Reader
            from OCP.TCollection import TCollection_ExtendedString
            from OCP.TDocStd import TDocStd_Document
            from OCP.XCAFDoc import XCAFDoc_DocumentTool
    except ImportError as exc:
        if extras.missing("cad", exc):
            raise InputError(path, extras.message("reading STEP", "cad")) from None
        why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        fix = ("install the system's OpenGL library, which OpenCASCADE's wheel links "
               "(Debian, Ubuntu: apt-get install libgl1)" if "libGL" in why else "reinstall gjk with pip")
        raise InputError(path, f"STEP needs OpenCASCADE (the cadquery-ocp-novtk package), which does "
                               f"not import here ({why}); {fix}") from None
    head = _head(path)
    if b"ISO-10303-21" not in head:
        raise InputError(path, "is not a STEP file (no ISO-10303-21 header); export it as STEP "
                               "AP203, AP214 or AP242")
    _silence_messages()
    from OCP.Interface import Interface_Static

    reader = STEPCAFControl_Reader()
    # the code page of 8-bit names (`_codepage`): a global of OpenCASCADE's, so set for every
    # file, after the first reader made has set the defaults
    codepage, guessed = _codepage_guessed(path)
    _GUESSED[_key(path)] = codepage if guessed else None
    Interface_Static.SetCVal_s("read.step.codepage", codepage)
    reader.SetNameMode(True)
    reader.SetColorMode(False)
    reader.SetLayerMode(False)
    # nor what else XCAF can carry and gjk does not report (validation properties, GD&T,
    # materials, views, metadata): a third of box_sides.STEP's transfer
    for mode in ("Props", "GDT", "Mat", "View", "Meta", "ProductMeta"):
        setter = getattr(reader, f"Set{mode}Mode", None)  # OpenCASCADE 7.8 has no Meta modes
        if setter is not None:
            setter(False)
    if reader.ReadFile(str(path)) != IFSelect_RetDone:
        raise InputError(path, "OpenCASCADE cannot read this STEP file (a syntax error or an "
                               "unsupported schema); re-export it as AP203, AP214 or AP242")
    lengths, angles, solid_angles = Strings(), Strings(), Strings()
    reader.ChangeReader().FileUnits(lengths, angles, solid_angles)
    names = [lengths.Value(k + 1).ToCString() for k in range(lengths.Length())]
    unit = next((u for u in (_step_unit(n) for n in names) if u is not None), "mm")
    doc = TDocStd_Document(TCollection_ExtendedString("gjk"))
    if not reader.Transfer(doc):
        raise InputError(path, "OpenCASCADE found no shapes to build in it (no solid, or only "
                               "entities it does not support); re-export the parts as solids")
    tool = XCAFDoc_DocumentTool.ShapeTool_s(doc.Main())
    roots = Labels()
    tool.GetFreeShapes(roots)
    out: list = []
    transfer = reader.ChangeReader().WS().TransferReader()

    def origin(shape) -> str:  # the STEP entity a shape was made of ("StepShape_...")
        entity = transfer.EntityFromShapeResult(shape, 1)
        return "" if entity is None else entity.DynamicType().Name()

    for k in range(roots.Length()):
        _walk(roots.Value(k + 1), None, None, out, origin)
    if not out:
        raise InputError(path, "holds no solid or surface (only points, curves or an empty "
                               "assembly); export the parts as solids")
    return unit, _unique(out)


def _head(path: Path) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read(4096)
    except OSError as exc:
        raise InputError(path, f"cannot read it: {exc.strerror or exc}") from None


# Python's names of 8-bit and multi-byte encodings -> OpenCASCADE's (Resource_FormatType, as
# `read.step.codepage` spells them); an encoding it cannot convert is not listed.
_CODEPAGES = {**{f"cp{k}": f"CP{k}" for k in range(1250, 1259)},
              **{f"windows_{k}": f"CP{k}" for k in range(1250, 1259)},
              **{f"iso8859_{k}": f"iso8859-{k}" for k in range(1, 10)},
              "latin_1": "iso8859-1", "cp850": "CP850", "shift_jis": "SJIS", "cp932": "SJIS",
              "euc_jp": "EUC", "gb2312": "GB", "gbk": "GB", "gb18030": "GB", "utf_8": "UTF8",
              "ascii": "UTF8"}
_CANDIDATES = frozenset(k for k in _CODEPAGES if k.startswith(("cp", "iso", "shift", "euc", "gb")))
# a quoted STEP string holding a byte above 127 (names, descriptions; "''" is a quote in one)
_EIGHT_BIT = re.compile(rb"'(?:[^'\n]|'')*?[\x80-\xff](?:[^'\n]|'')*'")


def _codepage(path: Path) -> str:
    """OpenCASCADE's name of the code page of the file's strings: `_codepage_guessed`'s."""
    return _codepage_guessed(path)[0]


def _codepage_guessed(path: Path) -> tuple:
    """(OpenCASCADE's name of the code page of the file's strings, `read.step.codepage`;
    whether it was guessed).

    ISO 10303-21 writes every character outside basic ASCII as a directive (`\\X\\hh`,
    `\\X2\\hhhh...\\X0\\`, `\\X4\\...`, `\\S\\`, `\\P?\\`), which OpenCASCADE
    decodes itself; but some writers put the bytes of their system's code page in the strings as
    they are (SolidWorks on a Russian Windows writes `Сборка1` in CP1251). A file with no byte
    above 127 or whose such strings are UTF-8 is read as UTF-8 (OpenCASCADE's default); else
    the code page is told by charset_normalizer (requests' detector) from those strings, and
    left at UTF-8 when it cannot tell or OpenCASCADE cannot convert what it tells."""
    # the bytes themselves, not a memory map: a map cannot be closed while anything still holds
    # a view of it (a regular expression's scanner, an array), and closing it then failed the
    # read ("cannot close exported pointers exist") on a Dask worker
    try:
        data = Path(path).read_bytes()
    except OSError:  # unreadable: OpenCASCADE says what is wrong
        return "UTF8", False
    if np.frombuffer(data, np.uint8).max(initial=0) < 128:  # ASCII throughout
        return "UTF8", False
    try:
        data.decode("utf-8")
        return "UTF8", False
    except UnicodeDecodeError:
        pass
    strings = []
    for match in _EIGHT_BIT.finditer(data):
        strings.append(match.group()[1:-1])
        if len(strings) == 200:
            break
    sample = b"\n".join(dict.fromkeys(strings))
    try:
        from charset_normalizer import from_bytes
    except ImportError:
        return "UTF8", True
    # names are short and few: every code page OpenCASCADE converts is tried (threshold 1: none
    # ruled out for its share of odd characters), the least odd one kept
    best = from_bytes(sample, cp_isolation=sorted(_CANDIDATES), threshold=1.0).best()
    return (_CODEPAGES.get(best.encoding, "UTF8") if best is not None else "UTF8"), True


# The code page `_codepage` guessed for a file read here (None when it had nothing to guess:
# ASCII or UTF-8 strings), by `_key`: `codepage_note`.
_GUESSED: dict = {}


def codepage_note(path) -> str | None:
    """The sentence a run's notes give for a STEP file whose names' code page was guessed
    (`_codepage`: the file does not say it, and a guess from a few short names can miss), or
    None when the strings are ASCII or UTF-8. From the read of the file in this process (the one
    that read it), else guessed again."""
    path = Path(path)
    try:
        key = _key(path)
    except OSError:
        return None
    if key in _GUESSED:
        codepage = _GUESSED[key]
    else:
        codepage, guessed = _codepage_guessed(path)
        codepage = codepage if guessed else None
    if codepage is None:
        return None
    if codepage == "UTF8":
        return ("its names hold bytes above 127 that are not UTF-8 nor of a code page "
                "charset_normalizer could tell; read as UTF-8, so some may show as replacement "
                "characters")
    return (f"its names hold bytes above 127 that are not UTF-8 and the file does not say their "
            f"code page: read as {codepage}, the code page charset_normalizer guessed from them "
            f"(a guess from a few short names can miss)")


def _step_unit(name: str) -> str | None:
    key = name.strip().upper().replace(".", "")
    return _STEP_UNITS.get(key) or canonical(name)


def _label_name(label) -> str | None:
    from OCP.TDataStd import TDataStd_Name

    attr = TDataStd_Name()
    if label.FindAttribute(TDataStd_Name.GetID_s(), attr):
        text = attr.Get().ToExtString().strip()
        return text or None
    return None


# The STEP entities of one solid: where OpenCASCADE's reader could not make it one (its faces
# share no edge: tscircuit's boards, a triangle soup), its shells are still one object.
_SOLID_ENTITIES = frozenset({"StepShape_ManifoldSolidBrep", "StepShape_BrepWithVoids", "StepShape_FacetedBrep",
                             "StepShape_FacetedBrepAndBrepWithVoids"})


def _walk(label, prefix: str | None, location, out: list, origin) -> None:
    """Append (instance path, solid in its product's frame, placement) for every solid under
    `label` (a product); origin : shape -> the name of the STEP entity it was made of.

    A product's solids are its objects. An item of its shape that holds no solid but shells is
    one object where the file gave it as a solid (OpenCASCADE split it: its faces share no
    edge, each face a shell of its own), else each of its shells is one (a surface model: no
    volume, no inside)."""
    from OCP.OCP.collections import Sequence_TDF_Label as Labels
    from OCP.TDF import TDF_Label
    from OCP.TopAbs import TopAbs_COMPOUND, TopAbs_SHELL, TopAbs_SOLID
    from OCP.TopExp import TopExp_Explorer
    from OCP.TopLoc import TopLoc_Location
    from OCP.TopoDS import TopoDS_Iterator
    from OCP.XCAFDoc import XCAFDoc_ShapeTool

    location = TopLoc_Location() if location is None else location
    name = _label_name(label) or "part"
    here = name if prefix is None else f"{prefix}/{name}"
    if XCAFDoc_ShapeTool.IsAssembly_s(label):
        components = Labels()
        XCAFDoc_ShapeTool.GetComponents_s(label, components, False)
        referred = []
        for k in range(components.Length()):
            component = components.Value(k + 1)
            target = TDF_Label()
            if not XCAFDoc_ShapeTool.GetReferredShape_s(component, target):
                continue
            referred.append((component, target, _label_name(target) or "part"))
        count: dict = {}
        for _, _, n in referred:
            count[n] = count.get(n, 0) + 1
        seen: dict = {}
        for component, target, n in referred:
            seen[n] = seen.get(n, 0) + 1
            inner = location.Multiplied(XCAFDoc_ShapeTool.GetLocation_s(component))
            before = len(out)
            _walk(target, here, inner, out, origin)
            if count[n] > 1:  # the k-th instance of a product used several times here
                tag = f"{here}/{n}"
                for s in range(before, len(out)):
                    path, *rest = out[s]
                    out[s] = (tag + f":{seen[n]}" + path[len(tag):], *rest)
        return
    shape = XCAFDoc_ShapeTool.GetShape_s(label)
    if shape.IsNull():
        return

    def each(of, kind) -> list:
        found, explorer = [], TopExp_Explorer(of, kind)
        while explorer.More():
            found.append(explorer.Current())
            explorer.Next()
        return found

    items = [shape]  # the shape is the item (a product of one solid), or a compound of them
    if shape.ShapeType() == TopAbs_COMPOUND and origin(shape) not in _SOLID_ENTITIES:
        items, children = [], TopoDS_Iterator(shape)
        while children.More():
            items.append(children.Value())
            children.Next()
    found = [each(item, TopAbs_SOLID) for item in items]  # the shape's solids, item by item
    solids = [s for of_item in found for s in of_item]
    split = [not of_item and bool(each(item, TopAbs_SHELL)) and origin(item) in _SOLID_ENTITIES
             for item, of_item in zip(items, found)]
    if not solids:  # surfaces without a solid: each shell an object, a split solid's together
        solids = [s for item, whole in zip(items, split) for s in ([item] if whole else each(item, TopAbs_SHELL))]
    else:
        solids += [item for item, whole in zip(items, split) if whole]
    for k, solid in enumerate(solids):
        out.append((here if len(solids) == 1 else f"{here}#{k + 1}", solid, location))


def _unique(items: list) -> list:
    """Names made unique: a repeated path gets "~k" (two free roots of one product)."""
    seen: dict = {}
    out = []
    for name, *rest in items:
        seen[name] = seen.get(name, 0) + 1
        out.append((name if seen[name] == 1 else f"{name}~{seen[name]}", *rest))
    return out


# -- tessellation ------------------------------------------------------------------------------


def _tessellate(shape, rel: float, path, name: str):
    """((n, 3) vertices in mm, (m, 3) int64 faces, eps in mm): the solid's triangles, outward,
    and the bound of their distance from the surface (see the module's docstring)."""
    from OCP.Bnd import Bnd_Box
    from OCP.BRepBndLib import BRepBndLib
    from OCP.BRepMesh import BRepMesh_IncrementalMesh

    box = Bnd_Box()
    BRepBndLib.Add_s(shape, box, False)
    if box.IsVoid():
        raise InputError(path, f"solid '{name}' has no extent; re-export it")
    lo, hi = box.CornerMin(), box.CornerMax()
    diagonal = float(np.linalg.norm([hi.X() - lo.X(), hi.Y() - lo.Y(), hi.Z() - lo.Z()]))
    deflection = max(rel * diagonal, 1e-12)
    BRepMesh_IncrementalMesh(shape, deflection, False, 0.5, False)  # meshes as it is made
    vertices, faces, measured = _triangles(shape, path, name, deflection)
    if len(faces) == 0:
        raise InputError(path, f"solid '{name}' gave no triangles (OpenCASCADE could not mesh "
                               f"it); re-export it")
    if not _curved(shape):  # planar faces bounded by straight edges: the triangles are exact
        return vertices, faces, 0.0
    return vertices, faces, max(deflection, measured)


def _curved(shape) -> bool:
    """Whether any face of the solid is not a plane or any edge not a straight line."""
    from OCP.BRepAdaptor import BRepAdaptor_Curve, BRepAdaptor_Surface
    from OCP.GeomAbs import GeomAbs_Line, GeomAbs_Plane
    from OCP.TopAbs import TopAbs_EDGE, TopAbs_FACE
    from OCP.TopExp import TopExp_Explorer
    from OCP.TopoDS import TopoDS

    explorer = TopExp_Explorer(shape, TopAbs_FACE)
    while explorer.More():
        if BRepAdaptor_Surface(TopoDS.Face(explorer.Current())).GetType() != GeomAbs_Plane:
            return True
        explorer.Next()
    explorer = TopExp_Explorer(shape, TopAbs_EDGE)
    while explorer.More():
        edge = TopoDS.Edge(explorer.Current())
        explorer.Next()
        from OCP.BRep import BRep_Tool

        if BRep_Tool.Degenerated_s(edge):
            continue
        if BRepAdaptor_Curve(edge).GetType() != GeomAbs_Line:
            return True
    return False


def _triangles(shape, path, name: str, deflection: float = 0.0):
    """Every face's triangulation in world coordinates, merged into one array, and the largest
    surface-to-triangle gap measured on curved faces (`_chord_gap`, `deflection` the one the
    mesh was asked for): the elementary faces' all at once once the solid is read
    (`gjkcli.mesh.facegaps`, the same bits as face by face), any other curved face's as it is
    read."""
    from OCP.BRep import BRep_Tool
    from OCP.BRepAdaptor import BRepAdaptor_Surface
    from OCP.GeomAbs import GeomAbs_Plane
    from OCP.TopAbs import TopAbs_FACE, TopAbs_REVERSED
    from OCP.TopExp import TopExp_Explorer
    from OCP.TopLoc import TopLoc_Location
    from OCP.TopoDS import TopoDS

    from gjkcli.mesh.facegaps import ElementaryGaps

    all_vertices, all_faces, offset = [], [], 0
    elementary, others = ElementaryGaps(), []  # the other curved faces: measured last
    explorer = TopExp_Explorer(shape, TopAbs_FACE)
    while explorer.More():
        face = TopoDS.Face(explorer.Current())
        explorer.Next()
        location = TopLoc_Location()
        tri = BRep_Tool.Triangulation_s(face, location)
        if tri is None or tri.NbTriangles() == 0:
            continue
        n, m = tri.NbNodes(), tri.NbTriangles()
        # one tuple a node and a triangle, made into arrays at once (a row assigned per node,
        # its coordinates asked one by one, was a third of a large part's reading here)
        nodes = np.array([tri.Node(k).Coord() for k in range(1, n + 1)],
                         dtype=np.float64).reshape(n, 3)
        if not location.IsIdentity():  # the face's placement, applied to all its nodes at once
            M = _matrix(location)
            nodes = nodes @ M[:3, :3].T + M[:3, 3]
        tris = np.array([tri.Triangle(k).Get() for k in range(1, m + 1)],
                        dtype=np.int64).reshape(m, 3)
        tris -= 1
        if face.Orientation() == TopAbs_REVERSED:
            tris = tris[:, [0, 2, 1]]
        surface = BRepAdaptor_Surface(face)  # placed as the face is: world coordinates
        kind = surface.GetType()
        if kind != GeomAbs_Plane and tri.HasUVNodes() and not _gathered(
                elementary, surface, kind, nodes, tris):  # its parameters are needed
            uv = np.array([tri.UVNode(k).Coord() for k in range(1, n + 1)],
                          dtype=np.float64).reshape(n, 2)
            others.append((surface, nodes, uv, tris, face))
        all_vertices.append(nodes)
        all_faces.append(tris + offset)
        offset += n
    if not all_faces:
        return np.zeros((0, 3)), np.zeros((0, 3), dtype=np.int64), 0.0
    vertices = np.concatenate(all_vertices)
    if not np.isfinite(vertices).all():
        raise InputError(path, f"solid '{name}' has NaN or infinite coordinates; re-export it")
    measured = max(0.0, elementary.largest())
    for surface, nodes, uv, tris, face in others:  # what is measured already is their floor
        measured = max(measured, _chord_gap(surface, nodes, uv, tris, face, deflection,
                                            floor=measured))
    return vertices, np.concatenate(all_faces), measured


def _gathered(gaps, surface, kind, nodes, tris) -> bool:
    """Whether the face is a sphere, cylinder, cone or torus, then handed to `gaps` (a
    `gjkcli.mesh.facegaps.ElementaryGaps`) with its placed axes and radii."""
    from OCP.GeomAbs import GeomAbs_Cone, GeomAbs_Cylinder, GeomAbs_Sphere, GeomAbs_Torus

    from gjkcli.mesh.facegaps import CONE, CYLINDER, TORUS

    if kind == GeomAbs_Sphere:
        sphere = surface.Sphere()
        gaps.sphere(nodes, tris, _origin_axis(sphere)[0], sphere.Radius())
        return True
    if kind == GeomAbs_Cylinder:
        shape, name = surface.Cylinder(), CYLINDER
        params = (shape.Radius(),)
    elif kind == GeomAbs_Cone:
        shape, name = surface.Cone(), CONE
        params = (shape.SemiAngle(), shape.RefRadius())
    elif kind == GeomAbs_Torus:
        shape, name = surface.Torus(), TORUS
        params = (shape.MajorRadius(), shape.MinorRadius())
    else:
        return False
    o, z = _origin_axis(shape)
    gaps.revolved(nodes, tris, name, o, z, params)
    return True


def _chord_gap(surface, nodes, uv, tris, face=None, deflection: float = 0.0,
               floor: float = -np.inf) -> float:
    """How far a face's triangles lie from its surface, both ways.

    A sphere: exactly. Its triangles' corners lie on it and the triangles inside it, so every
    point of a triangle lies R - |p - o| from the sphere, largest at the triangle's point nearest
    the centre o, and the sphere's points over a triangle project radially onto it as far.

    A cylinder, cone or torus: the largest distance from the surface (measured in closed form,
    from its placed axes) of each triangle's centre and edge midpoints.

    (Both in `gjkcli.mesh.facegaps`, which `_triangles` hands all of a solid's such faces at
    once; here one face alone.)

    Any other surface: the largest |S(u, v) - P(u, v)| over each triangle's centre and edge
    midpoints, where S is the surface and P the triangle's linear interpolation of its corners
    at the same (u, v). That bounds the distance both ways at those points, but loosely where the
    parameters crowd (at a pole, the corners' parameters span half a turn that the triangle does
    not): which is why the elementary surfaces are measured as above. Where that gap exceeds
    the `deflection` asked for, the point of the triangle is projected onto the `face`'s
    surface instead (GeomAPI_ProjectPointOnSurf, every extremum: its distance from the whole
    surface, as the elementary surfaces' are measured), and the smaller of the two counts: a
    B-spline face of Euclid's pm2 rotor, whose triangles' corners span a third of its u range,
    had a gap of 2.84 mm at the same parameters where the triangle lies 0.025 mm from its
    surface (a deflection of 0.17 mm), which sent every pair with it to the exact solids.

    The larger of that and `floor` (what the solid's faces measured so far): the points are
    projected largest gap first, until the next one's gap cannot raise the answer (a projection
    costs a millisecond; the answer's bits are the same as with every point projected)."""
    from gjkcli.engine.exact import distinct
    from gjkcli.mesh.facegaps import ElementaryGaps

    if len(tris) == 0:
        return 0.0
    alone = ElementaryGaps()
    if _gathered(alone, surface, surface.GetType(), nodes, tris):
        return alone.largest()
    # each edge once (two triangles share it), by its corners' indices
    edges = np.sort(tris[:, [0, 1, 1, 2, 2, 0]].reshape(-1, 2), axis=1)
    edges = distinct(edges[:, 0] * len(nodes) + edges[:, 1])
    ends = np.column_stack([edges // len(nodes), edges % len(nodes)])
    sxyz = np.concatenate([nodes[ends].mean(axis=1), nodes[tris].mean(axis=1)])
    suv = np.concatenate([uv[ends].mean(axis=1), uv[tris].mean(axis=1)])
    gaps = np.linalg.norm(surface_points(surface, suv) - sxyz, axis=1)
    if np.isnan(gaps).any():  # NaN, as max answers (which the caller's max passes over)
        return float(gaps.max())
    if face is None or deflection <= 0:
        return max(floor, float(gaps.max()))
    far = gaps > deflection
    best = max(floor, float(gaps[~far].max(initial=-np.inf)))
    project = None
    for k in np.flatnonzero(far)[np.argsort(-gaps[far], kind="stable")]:
        if gaps[k] <= best:  # nor any after it: min(gap, projected) <= gap
            break
        project = _projector(face) if project is None else project
        best = max(best, min(float(gaps[k]), project(sxyz[k])))
    return best


def _projector(face):
    """A point's distance from the face's (untrimmed) surface, its nearest extremum
    (GeomAPI_ProjectPointOnSurf); inf where none is found."""
    from OCP.BRep import BRep_Tool
    from OCP.GeomAPI import GeomAPI_ProjectPointOnSurf
    from OCP.gp import gp_Pnt

    surface = BRep_Tool.Surface_s(face)  # placed as the face is: world coordinates
    project = GeomAPI_ProjectPointOnSurf()

    def distance(point) -> float:
        x, y, z = point.tolist()
        try:
            project.Init(gp_Pnt(x, y, z), surface)
        except Exception:  # noqa: BLE001 - OpenCASCADE's failure: the parameters' gap stands
            return np.inf
        return project.LowerDistance() if project.NbPoints() > 0 else np.inf

    return distance


def _origin_axis(shape) -> tuple:
    """(origin, z) of an elementary surface's placed axes, as NumPy vectors."""
    axes = shape.Position()
    o, z = axes.Location(), axes.Direction()
    return np.array([o.X(), o.Y(), o.Z()]), np.array([z.X(), z.Y(), z.Z()])


def surface_points(surface, uv: np.ndarray) -> np.ndarray:
    """(k, 3) points S(u, v) of a BRepAdaptor_Surface at (k, 2) parameters: the elementary
    surfaces (cylinder, cone, sphere, torus) in NumPy from their placed axes, with OpenCASCADE's
    parametrisations (ElSLib); any other surface one `Value` call per point."""
    from OCP.GeomAbs import GeomAbs_Cone, GeomAbs_Cylinder, GeomAbs_Sphere, GeomAbs_Torus

    kind = surface.GetType()
    u, v = uv[:, 0:1], uv[:, 1:2]
    if kind in (GeomAbs_Cylinder, GeomAbs_Cone, GeomAbs_Sphere, GeomAbs_Torus):
        # BRepAdaptor_Surface's elementary surfaces come placed as the face is
        shape = {GeomAbs_Cylinder: surface.Cylinder, GeomAbs_Cone: surface.Cone,
                 GeomAbs_Sphere: surface.Sphere, GeomAbs_Torus: surface.Torus}[kind]()
        axes = shape.Position()
        o, x, y, z = (np.array([d.X(), d.Y(), d.Z()]) for d in
                      (axes.Location(), axes.XDirection(), axes.YDirection(), axes.Direction()))
        ring = np.cos(u) * x + np.sin(u) * y  # the unit radial direction at angle u
        if kind == GeomAbs_Cylinder:  # o + R ring(u) + v z
            return o + shape.Radius() * ring + v * z
        if kind == GeomAbs_Cone:  # o + (R + v sin a) ring(u) + v cos a z
            a = shape.SemiAngle()
            return o + (shape.RefRadius() + v * np.sin(a)) * ring + v * np.cos(a) * z
        if kind == GeomAbs_Sphere:  # o + R cos v ring(u) + R sin v z
            r = shape.Radius()
            return o + r * np.cos(v) * ring + r * np.sin(v) * z
        big, small = shape.MajorRadius(), shape.MinorRadius()  # torus
        return o + (big + small * np.cos(v)) * ring + small * np.sin(v) * z
    out = np.empty((len(uv), 3))
    for k, (a, b) in enumerate(uv.tolist()):
        p = surface.Value(a, b)
        out[k] = (p.X(), p.Y(), p.Z())
    return out


def forget_answers() -> None:
    """Drop every answer this process keeps per product (finer meshes, face boxes, upright and
    canonical copies, B-spline samples, volumes), so that the next refinement makes them again;
    the files' solids as read stay. For benchmarks and tests that time a refinement from empty."""
    for kept in (_FINER, _FACE_BOXES, _UPRIGHT, _CANONICAL, _SPLINE, _VOLUMES):
        kept.clear()
    diagonal.cache_clear()
