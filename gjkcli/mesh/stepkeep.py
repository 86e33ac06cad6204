"""A STEP file read again without OpenCASCADE when only its assembly's placements changed since
a scan that kept it (issue 45).

A scan with a cache (`kept_solids`: the run's table of kind `step`) keeps, after OpenCASCADE
read a file (`keep`), one row keyed by the file's text as `gjkcli.mesh.steptext` reads it:
its structure (every entity but the placements' values: assembly, names, units, and each
solid's Merkle digest), the tessellation options and the OpenCASCADE wheel's version. The row holds what `gjkcli.mesh.cad`
read: each instance's name, product and placement (OpenCASCADE's, to the bit), each product's
triangles and error bound, and which instance of the text each is with the placement composed
from the text. A later read of a file with the same key (`parts`) places the kept products as
`cad.placed_parts` does, each instance at OpenCASCADE's placement where the text composes the
same one as before, else at the text's new one: only where the text composed every placement
of the kept scan to OpenCASCADE's bit (`exact`), else the file is read by OpenCASCADE again.
The exact solids stay where they are: a pair that needs them reads the file with OpenCASCADE
then (`cad._placed`), only for it: in OpenCASCADE's own process where the command started one
(`gjkcli.mesh.cad_process.go(verdict=True)`: it imports OpenCASCADE and reads the exact solids
while the command reads the text, and tessellates nothing once told the parts are placed here).

Anything the text reader does not read (`steptext.Unsupported`), a row that is not there or
does not hold what `keep` writes: None, and OpenCASCADE reads the file.
"""
from __future__ import annotations

import contextlib
from pathlib import Path

import numpy as np

from gjkcli.digests import blake2b

__all__ = ["kept_solids", "parts", "answerable", "keep", "row_key", "active"]

# The row layout; a change of it misses every row written before.
_LAYOUT = 1
# The tables `kept_solids` made active, the innermost last: (table, key prefix) or None.
_KEPT: list = []
# Texts read in this process: (resolved path, size, mtime) -> steptext.Assembly or the reason
_TEXTS: dict = {}


@contextlib.contextmanager
def kept_solids(table, prefix: bytes = b""):
    """Within the block, STEP files whose placements alone changed since a kept scan are placed
    from `table` (the run's cache table: `get(key)` -> (data, arrays) or None, `put(key, data,
    arrays)`), and the files OpenCASCADE reads are kept in it."""
    _KEPT.append(None if table is None else (table, prefix))
    try:
        yield
    finally:
        _KEPT.pop()


def active() -> bool:
    return bool(_KEPT) and _KEPT[-1] is not None


def _assembly(path: Path):
    """The file's steptext.Assembly, or None where the text reader does not read it."""
    from gjkcli.mesh import steptext

    try:
        st = path.stat()
        stamp = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    except OSError:
        return None
    got = _TEXTS.get(stamp)
    if got is None:
        try:
            data = path.read_bytes()
            got = steptext.Assembly(data)
            got.header = blake2b(data[:max(data.find(b"DATA;"), 0)], digest_size=20).hexdigest()
            got.key_text = got.structure()
        except (steptext.Unsupported, OSError, RecursionError) as e:
            got = str(e) or type(e).__name__
        if got is not None and not isinstance(got, str) and got.by_kind.get("MAPPED_ITEM"):
            got = "MAPPED_ITEM placements are read by OpenCASCADE"  # a product's solid placed within it
        _TEXTS.clear()  # one file's text at a time: a run reads it twice at most
        _TEXTS[stamp] = got
    return None if isinstance(got, str) else got


def _occ_version() -> str:
    """The installed OpenCASCADE wheel's version (its metadata: no import), which tessellates
    and places what a row keeps."""
    import importlib.metadata

    for name in ("cadquery-ocp-novtk", "cadquery-ocp"):
        try:
            return f"{name} {importlib.metadata.version(name)}"
        except importlib.metadata.PackageNotFoundError:
            continue
    return "unknown"


def row_key(assembly, prefix: bytes, deflection_rel: float) -> str:
    h = blake2b(prefix, digest_size=20)
    h.update(f"step {_LAYOUT} {deflection_rel!r} {_occ_version()};".encode())
    h.update(assembly.header.encode())
    h.update(assembly.key_text.encode())
    return h.hexdigest()


def _rel(deflection_rel):
    from gjkcli.tolerances import DEFAULT

    return DEFAULT.cad_deflection_rel if deflection_rel is None else deflection_rel


def parts(path, shown: str | None = None, named=lambda name: name, deflection_rel=None):
    """`cad.read_step`'s parts of the file from the kept row, without OpenCASCADE, or None."""
    from gjkcli.mesh import cad

    got = _placed(Path(path), deflection_rel)
    if got is None:
        return None
    unit, products, placed, ref_key = got
    shown = str(path) if shown is None else shown
    return cad.placed_parts(path, shown, named, unit, ref_key, products, placed)


def answerable(path, deflection_rel=None) -> bool:
    """Whether `parts` gives the file's parts (the command then starts no OpenCASCADE): the
    file's text is read only where the table keeps a row (of any file: a row is found by the
    text, wherever the file is)."""
    if not active():
        return False
    if not getattr(_KEPT[-1][0], "rows", True):  # an empty table: a first scan
        return False
    return _placed(Path(path), deflection_rel) is not None


def _placed(path: Path, deflection_rel):
    """(unit, products, placed, ref_key) for `cad.placed_parts` from the kept row, or None."""
    if not active():
        return None
    table, prefix = _KEPT[-1]
    assembly = _assembly(path)
    if assembly is None:
        return None
    got = table.get(row_key(assembly, prefix, _rel(deflection_rel)))
    if got is None:
        return None
    data, arrays = got
    try:
        unit, names, exact = str(data["unit"]), list(data["names"]), bool(data["exact"])
        T, Tt = arrays["T"].reshape(-1, 4, 4), arrays["Tt"].reshape(-1, 4, 4)
        tix, prod = arrays["tix"].tolist(), arrays["prod"].tolist()
        vo, fo, eps = arrays["vo"].tolist(), arrays["fo"].tolist(), arrays["eps"].tolist()
        v, f = arrays["v"], arrays["f"]
        n = len(names)
        if not (len(T) == len(Tt) == len(tix) == len(prod) == n) or len(vo) != len(fo) \
                or len(eps) != len(vo) - 1 or max(tix, default=0) >= len(assembly.instances) \
                or max(prod, default=0) >= len(eps):
            return None
        products = [(np.array(v[vo[k]:vo[k + 1]], dtype=np.float64),
                     np.array(f[fo[k]:fo[k + 1]], dtype=np.int64), float(eps[k]))
                    for k in range(len(eps))]
    except (KeyError, TypeError, ValueError, IndexError):
        return None
    placed = []
    for m in range(n):
        now = assembly.instances[tix[m]][1]
        if np.array_equal(now, Tt[m]):
            placed.append((names[m], prod[m], np.array(T[m])))
        elif exact:
            placed.append((names[m], prod[m], now))
        else:
            return None
    try:
        st = path.stat()
    except OSError:
        return None
    return unit, products, placed, (str(path.resolve()), (st.st_size, st.st_mtime_ns))


def keep(path, ask, deflection_rel=None) -> None:
    """Keep what OpenCASCADE read of the file (`ask(cad.recorded, path)`: where it was read) in
    the active table, when the text reader reads the file and each of OpenCASCADE's instances
    is one of the text's (the same solid's vertex box, the nearest placement)."""
    from gjkcli.mesh import cad

    if not active():
        return
    table, prefix = _KEPT[-1]
    path = Path(path)
    assembly = _assembly(path)
    if assembly is None:
        return
    got = ask(cad.recorded, path, deflection_rel)
    if got is None:
        return
    unit, placed, products = got
    if len(placed) != len(assembly.instances):
        return
    boxes = {}
    for solid in {s for s, _ in assembly.instances}:
        v = assembly.vertices(solid)
        boxes[solid] = np.array([v.min(axis=0), v.max(axis=0)]) if len(v) else None
    free = set(range(len(assembly.instances)))
    tix = []
    solid_of: dict = {}  # product -> the text's solid
    exact = True
    for name, k, T in placed:
        box = products[k][3]
        best = None
        for m in free:
            solid, M = assembly.instances[m]
            b = boxes[solid]
            if (box is None) != (b is None) or (box is not None and not np.array_equal(box, b)):
                continue
            if solid_of.get(k, solid) != solid:
                continue
            d = float(np.abs(M - T).max())
            if best is None or d < best[0] or (d == best[0] and m < best[1]):
                best = (d, m)
        if best is None:
            return  # an instance the text does not place: OpenCASCADE reads the file each time
        free.discard(best[1])
        solid_of[k] = assembly.instances[best[1]][0]
        exact = exact and best[0] == 0.0
        tix.append(best[1])
    vertices = [p[0] for p in products]
    faces = [p[1] for p in products]
    arrays = {
        "T": np.array([T for _, _, T in placed], dtype=np.float64).reshape(-1, 16),
        "Tt": np.array([assembly.instances[m][1] for m in tix], dtype=np.float64).reshape(-1, 16),
        "tix": np.array(tix, dtype=np.int64), "prod": np.array([k for _, k, _ in placed], dtype=np.int64),
        "v": np.concatenate(vertices).astype(np.float64), "f": np.concatenate(faces).astype(np.int64),
        "vo": np.concatenate([[0], np.cumsum([len(a) for a in vertices])]).astype(np.int64),
        "fo": np.concatenate([[0], np.cumsum([len(a) for a in faces])]).astype(np.int64),
        "eps": np.array([p[2] for p in products], dtype=np.float64),
    }
    table.put(row_key(assembly, prefix, _rel(deflection_rel)),
              {"unit": unit, "names": [name for name, _, _ in placed], "exact": exact,
               "path": str(path.resolve())}, arrays)
