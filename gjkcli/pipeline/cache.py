"""gjk's cache: what a run computed, kept as data keyed by content, so that a re-run costs what
changed (ruff's `.ruff_cache/`, git's objects).

Where: `.gjk_cache/` beside the settings file gjk read (`gjkcli.config`), else in the working
folder; `--cache-dir DIR` (or `GJK_CACHE_DIR`, or `cache_dir` in the settings) puts it elsewhere,
`--no-cache` (or `GJK_NO_CACHE=1`, or `cache = false`) turns it off, `gjk clean` empties it. The
folder holds a `CACHEDIR.TAG` (backup tools skip it) and a `.gitignore` of `*` (git ignores it),
as ruff's does.

What: entries, each one file `<kind>/<key[:2]>/<key>`, its name the key: a BLAKE2b digest of
everything the entry's answer depends on (`key`): the content (a part's vertices and faces, a
file's bytes), the options that change a verdict (tolerances included), gjk's version and a stamp
of its code (`code_stamp`), so that any change of those misses. Kinds:

    run    a whole command's report: its input files' bytes, every option, the settings file
           (`gjkcli.cli` writes and replays it; nothing else of the run is done)
    pairs  one table per run: pair key -> the narrow phase's and the triangles' answers
           (`gjkcli.pipeline.stages`)
    hulls  one table per run: a mesh's content key -> its prepared hull and hull gap, a row per
           mesh (of more than `stages.KEEP_HULLS_FROM_VERTICES` vertices)
    reasons one table per run: a part's triangles, flags and hull gap (`reason_key`) -> why it
           is not its hull, as the report's object records say (`Parts.records`)
    poses  a few packs per robot and options: a pose's joint values -> its findings
           (`gjkcli.pipeline.poses`)
    step   one table per run: a STEP file's text with its placements left out -> what
           OpenCASCADE read of it, from which a file whose placements alone changed is placed
           without it (`gjkcli.mesh.stepkeep`)
    scene  one entry per scan of one GLB and its options (not its bytes): its nodes, parts,
           checked and listed pairs and the key of its `run` entry, from which a re-scan of the
           file with some parts moved patches the report (`gjkcli.pipeline.rescan`)

An entry is data, never code: a magic line, a checksum, a JSON header and raw NumPy arrays whose
dtypes come from a short list (`_DTYPES`), read with `numpy.frombuffer`; nothing is unpickled.
The checksum (BLAKE3 of the rest) and the key inside the header are checked on every read: an
entry that fails either (a damaged disk, a planted file) is a miss, removed, and named in the
run's notes; it is never believed. Writes go to a temporary file in the entry's folder, then
`os.replace`, so two runs at once each see a whole entry or none. The folder's size is bounded
(`--limit cache=BYTES`, `gjkcli.limits`): after a run that wrote, the entries read least recently
(by modification time, which a read refreshes) are removed until it fits.
"""
from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

from gjkcli.digests import blake2b, blake3
from gjkcli.errors import WrittenFile, is_partial_write, write_whole

__all__ = ["Cache", "Table", "Chunks", "FileChunks", "OpenedEntry", "opened_run", "to_columns", "ColumnValues", "key", "prefix", "reason_key", "depend_on_robot", "code_stamp", "FOLDER", "clear", "located", "to_data", "from_data",
           "mark_inputs", "may_hold_report"]

FOLDER = ".gjk_cache"
# The entry format; a change of it misses every entry written before (2: the checksum BLAKE3).
FORMAT = 2
_MAGIC = b"GJKCACHE2\n"
_DIGEST = 32
# The dtypes an entry's arrays may have (anything else: the entry is not believed).
_DTYPES = frozenset({"<f8", "<f4", "<i8", "<i4", "<u4", "|u1", "|i1", "|b1", "<U1"})
_TAG = ("Signature: 8a477f597d28d172789f06886806bc55\n"
        "# This file is a cache directory tag created by gjk.\n"
        "# For information about cache directory tags see https://bford.info/cachedir/\n")


class CacheError(ValueError):
    """An entry that cannot be believed (its checksum, its key, its layout)."""


def code_stamp() -> str:
    """gjk's version and a stamp of its code (each module's and extension's name, size and
    modification time): an entry written by other code misses, a development checkout's too."""
    from gjkcli import __version__

    h = blake2b(digest_size=16)
    h.update(__version__.encode())
    root = Path(__file__).resolve().parents[1]
    for path in sorted(root.rglob("*")):
        if path.suffix in (".py", ".so", ".pyd"):
            st = path.stat()
            h.update(f"{path.relative_to(root)}:{st.st_size}:{st.st_mtime_ns};".encode())
    return h.hexdigest()


_STAMP: list = []


def _stamp() -> str:
    if not _STAMP:
        _STAMP.append(code_stamp())
    return _STAMP[0]


def key(*parts) -> str:
    """A hex BLAKE2b key of `parts` (bytes, str, numbers, None, NumPy arrays with their dtype
    and shape, and tuples or lists of those) with the entry format and `code_stamp`."""
    h = blake2b(digest_size=20)
    h.update(f"gjk-cache {FORMAT} {_stamp()}".encode())
    _feed(h, parts)
    return h.hexdigest()


def _feed(h, value) -> None:
    if isinstance(value, (bytes, bytearray, memoryview)):
        h.update(b"b%d:" % len(value))
        h.update(value)
    elif isinstance(value, str):
        data = value.encode("utf-8", "surrogatepass")
        h.update(b"s%d:" % len(data))
        h.update(data)
    elif isinstance(value, (tuple, list)):
        h.update(b"(%d:" % len(value))
        for v in value:
            _feed(h, v)
        h.update(b")")
    elif value is None or isinstance(value, (bool, int, float)):
        h.update(f"{type(value).__name__}:{value!r};".encode())
    elif hasattr(value, "dtype") and hasattr(value, "shape"):  # a NumPy array or scalar
        import numpy as np

        a = np.ascontiguousarray(value)
        h.update(f"a{a.dtype.str}{a.shape}:".encode())
        h.update(a.tobytes())
    else:
        h.update(f"r{type(value).__name__}:{value!r};".encode())


def located(settings_path=None, cache_dir=None) -> Path:
    """The cache folder: `cache_dir` if given, else GJK_CACHE_DIR, else `.gjk_cache` beside the
    settings file read, else in the working folder."""
    if cache_dir is not None:
        return Path(cache_dir)
    env = os.environ.get("GJK_CACHE_DIR")
    if env:
        return Path(env)
    if settings_path is not None:
        return Path(settings_path).parent / FOLDER
    return Path(FOLDER)


def clear(folder) -> int:
    """Remove the cache folder `folder` (only one gjk made: it holds gjk's CACHEDIR.TAG); the
    number of entries removed. ValueError for a folder that is not a gjk cache."""
    import shutil

    folder = Path(folder)
    if not folder.exists():
        return 0
    tag = folder / "CACHEDIR.TAG"
    if not tag.is_file() or "created by gjk" not in tag.read_text(errors="replace"):
        raise ValueError(f"{folder} is not a gjk cache (it has no CACHEDIR.TAG written by gjk); "
                         f"remove it by hand if you mean to")
    count = sum(1 for p in folder.rglob("*") if p.is_file() and p.parent != folder)
    shutil.rmtree(folder)
    return count


class Cache:
    """The cache folder of a run: `get` and `put` entries, `notes` on the entries not believed,
    `trim` to the size limit.

    folder : the cache folder (made on the first write); limit : its largest size in bytes.
    """

    def __init__(self, folder, limit: int = 1 << 30):
        self.folder = Path(folder)
        self.limit = int(limit)
        self.notes: list[str] = []
        self.wrote = False
        self.hits = 0
        self.misses = 0
        # files a run read besides its inputs (a URDF's meshes): a kept report holds their
        # digests, and is replayed only while they are the same (`get_run`)
        self.depends: set = set()

    def __repr__(self) -> str:
        return f"Cache({str(self.folder)!r}, limit={self.limit})"

    # -- entries -----------------------------------------------------------------------------

    def path(self, kind: str, k: str) -> Path:
        return _entry_path(self.folder, kind, k)

    def get(self, kind: str, k: str, raw: bool = False):
        """(header dict, {name: array}) of entry `k`, or None: absent, or not believed (then
        removed, with a note). raw: the arrays as their bytes (no NumPy import)."""
        path = self.path(kind, k)
        try:
            data = path.read_bytes()
        except OSError:
            self.misses += 1
            return None
        try:
            got = decode(data, kind, k, raw)
        except CacheError as e:
            self.notes.append(f"cache: ignored the entry {path}: {e}; it was computed again")
            try:
                path.unlink()
            except OSError:
                pass
            self.misses += 1
            return None
        try:
            os.utime(path)  # read: the last to be dropped
        except OSError:
            pass
        self.hits += 1
        return got

    def opened(self, kind: str, k: str) -> "OpenedEntry | None":
        """Entry `k` as an `OpenedEntry` (its arrays read from its file as they are used: a
        large kept report is written out without being whole in memory), or None as `get`."""
        path = self.path(kind, k)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            self.misses += 1
            return None
        try:
            got = OpenedEntry(fd, kind, k)
        except (CacheError, OSError) as e:
            os.close(fd)
            self.misses += 1
            if isinstance(e, CacheError):
                self.notes.append(f"cache: ignored the entry {path}: {e}; it was computed again")
                with contextlib.suppress(OSError):
                    path.unlink()
            return None
        with contextlib.suppress(OSError):
            os.utime(path)  # read: the last to be dropped
        self.hits += 1
        return got

    def put(self, kind: str, k: str, header: dict, arrays: dict | None = None) -> None:
        """Write entry `k` atomically (`gjkcli.errors.write_whole`: a temporary file in its
        folder, then a rename); a folder that cannot be written leaves the run as it is, with a
        note."""
        path = self.path(kind, k)
        try:
            self._make_folder()
            path.parent.mkdir(parents=True, exist_ok=True)
            write_whole(path, encoded(header, arrays or {}, kind, k))
        except OSError as e:
            note = f"cache: cannot write into {self.folder} ({e.strerror or e}); the run goes on without it"
            if note not in self.notes:
                self.notes.append(note)
            return
        self.wrote = True

    def _make_folder(self) -> None:
        if (self.folder / "CACHEDIR.TAG").is_file():
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        for name, text in (("CACHEDIR.TAG", _TAG), (".gitignore", "# Made by gjk.\n*\n")):
            write_whole(self.folder / name, text)

    def entries(self) -> list:
        """[(mtime, size, path)] of every entry."""
        out = []
        if not self.folder.is_dir():
            return out
        for kind in os.scandir(self.folder):
            if not kind.is_dir():
                continue
            for sub in os.scandir(kind.path):
                if not sub.is_dir():
                    continue
                for e in os.scandir(sub.path):
                    try:
                        st = e.stat()
                    except OSError:
                        continue
                    out.append((st.st_mtime_ns, st.st_size, e.path))
        return out

    def trim(self) -> int:
        """Remove the entries read least recently until the folder holds at most `limit` bytes
        (left temporary files of a run that was killed too, once an hour old); how many."""
        import time

        entries = self.entries()
        total = sum(size for _, size, _ in entries)
        removed = 0
        old = time.time_ns() - 3600 * 10 ** 9
        for mtime, size, path in sorted(entries):
            partial = is_partial_write(os.path.basename(path))
            stale = partial and mtime < old
            if total <= self.limit and not stale:
                if not partial:
                    break
                continue
            try:
                os.unlink(path)
            except OSError:
                continue
            total -= size
            removed += 1
        return removed


# -- the entry format ---------------------------------------------------------------------------


def encode(header: dict, arrays: dict, kind: str, k: str) -> bytes:
    """An entry's bytes: magic, checksum of the rest, then the rest: the header's length (8
    bytes, little-endian), the header as JSON ({"kind", "key", "arrays": [[name, dtype, shape,
    offset, nbytes]], "data": header}), the arrays' bytes."""
    return b"".join(encoded(header, arrays, kind, k))


class Chunks:
    """An entry's uint8 array given as the chunks of bytes it is made of (a report as it was
    written), written one after another: never joined into one copy."""

    def __init__(self, pieces: list):
        self.pieces = [memoryview(p).cast("B") for p in pieces]
        self.nbytes = sum(p.nbytes for p in self.pieces)

    def each(self):
        return iter(self.pieces)


class FileChunks:
    """Bytes of an open file (`fd`, `nbytes` from `start`: a report the command wrote,
    `gjkcli.errors.WrittenFile`, given as an entry's uint8 array; an array of an
    `OpenedEntry`), read a chunk at a time each time they are gone through (a checksum, then a
    write): never whole in memory. OSError where the file is shorter than it was."""

    CHUNK = 1 << 20

    def __init__(self, fd: int, nbytes: int, start: int = 0):
        self.fd = fd
        self.nbytes = nbytes
        self.start = start

    def each(self):
        at = 0
        while at < self.nbytes:
            piece = os.pread(self.fd, min(self.CHUNK, self.nbytes - at), self.start + at)
            if not piece:
                raise OSError(f"the file was cut short at {at} of {self.nbytes} bytes")
            at += len(piece)
            yield piece


def encoded(header: dict, arrays: dict, kind: str, k: str):
    """`encode`'s bytes as an iterable of pieces, the arrays' views among them (a large entry is
    written without a copy of it; a `FileChunks` array read as it is written)."""
    import itertools

    import numpy as np

    table, blobs, offset = [], [], 0
    for name, a in arrays.items():
        if type(a) in (Chunks, FileChunks):  # one uint8 array, written as its chunks
            table.append([name, "|u1", [a.nbytes], offset, a.nbytes])
            blobs.append(a)
            offset += a.nbytes
            continue
        a = np.ascontiguousarray(a)
        if a.dtype.str not in _DTYPES:
            a = a.astype(a.dtype.newbyteorder("<"))
        if a.dtype.str not in _DTYPES:
            raise TypeError(f"cache: dtype {a.dtype} of {name} is not one an entry holds")
        raw = memoryview(a.reshape(-1).view(np.uint8))
        table.append([name, a.dtype.str, list(a.shape), offset, raw.nbytes])
        blobs.append(raw)
        offset += raw.nbytes
    head = json.dumps({"kind": kind, "key": k, "arrays": table, "data": header},
                      separators=(",", ":"), allow_nan=True).encode()
    head = len(head).to_bytes(8, "little") + head
    h = blake3(head, digest_size=_DIGEST)
    for raw in _pieces(blobs):
        h.update(raw)
    return itertools.chain((_MAGIC + h.digest(), head), _pieces(blobs))


def _pieces(blobs: list):
    for blob in blobs:
        if type(blob) in (Chunks, FileChunks):
            yield from blob.each()
        else:
            yield blob


def decode(data: bytes, kind: str, k: str, raw: bool = False):
    """(header, arrays) of an entry's bytes; CacheError when they cannot be believed. raw: the
    arrays as bytes."""
    if not data.startswith(_MAGIC):
        raise CacheError("not a gjk cache entry")
    start = len(_MAGIC) + _DIGEST
    view = memoryview(data)  # no copies of a large entry's bytes
    if blake3(view[start:], digest_size=_DIGEST).digest() != data[len(_MAGIC):start]:
        raise CacheError("its checksum does not match its bytes")
    n = int.from_bytes(data[start:start + 8], "little")
    head = _head(bytes(view[start + 8:start + 8 + n]), kind, k)
    body = view[start + 8 + n:]
    arrays = {}
    for name, dtype, shape, offset, nbytes in _table(head, len(body)):
        if raw:
            arrays[name] = body[offset:offset + nbytes]
            continue
        import numpy as np

        try:
            a = np.frombuffer(body, dtype=np.dtype(dtype), count=nbytes // np.dtype(dtype).itemsize,
                              offset=offset)
            arrays[name] = a.reshape(shape)
        except (TypeError, ValueError) as e:
            raise CacheError(f"its arrays do not fit its bytes ({e})") from None
    return head.get("data"), arrays


def _head(text: bytes, kind: str, k: str) -> dict:
    """An entry's header, checked to be filed under its kind and key; CacheError otherwise."""
    try:
        head = json.loads(text)
    except ValueError:
        raise CacheError("its header is not JSON") from None
    if not isinstance(head, dict) or head.get("kind") != kind or head.get("key") != k:
        raise CacheError("it is filed under another key")
    return head


def _table(head: dict, size: int) -> list:
    """The header's arrays [(name, dtype, shape, offset, nbytes)], each checked to lie within a
    body of `size` bytes; CacheError otherwise."""
    try:
        table = [(name, dtype, shape, int(offset), int(nbytes))
                 for name, dtype, shape, offset, nbytes in head["arrays"]]
        fits = all(type(dtype) is str and dtype in _DTYPES and 0 <= offset and 0 <= nbytes
                   and offset + nbytes <= size for _, dtype, _, offset, nbytes in table)
    except (TypeError, ValueError, KeyError) as e:
        raise CacheError(f"its arrays do not fit its bytes ({e})") from None
    if not fits:
        raise CacheError("its arrays do not fit its bytes")
    return table


class OpenedEntry:
    """An entry read as it is used (`Cache.opened`): `data` (its header's data) and `arrays`
    ({name: FileChunks}: each array's bytes in the entry's open file), its checksum checked
    first, a chunk at a time. Entries are replaced whole (a rename), never written in place, so
    the open file stays the bytes checked. Close it (or use it in a `with` block)."""

    def __init__(self, fd: int, kind: str, k: str):
        self.fd = fd
        size = os.fstat(fd).st_size
        start = len(_MAGIC) + _DIGEST
        first = os.pread(fd, start + 8, 0)
        if len(first) < start + 8 or not first.startswith(_MAGIC):
            raise CacheError("not a gjk cache entry")
        h = blake3(digest_size=_DIGEST)
        for piece in FileChunks(fd, size - start, start).each():
            h.update(piece)
        if h.digest() != first[len(_MAGIC):start]:
            raise CacheError("its checksum does not match its bytes")
        n = int.from_bytes(first[start:], "little")
        head = _head(os.pread(fd, n, start + 8), kind, k)
        body = start + 8 + n
        self.data = head.get("data")
        self.arrays = {name: FileChunks(fd, nbytes, body + offset)
                       for name, _, _, offset, nbytes in _table(head, size - body)}

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


# -- results as data ----------------------------------------------------------------------------

# The dataclasses an entry may hold, by name: `from_data` makes only these.
_TYPES: dict = {}


def _types() -> dict:
    if not _TYPES:
        _TYPES.update(_made_types())
    return _TYPES


def _made_types() -> dict:
    from gjkcli.engine import exact, results
    from gjkcli.pipeline import tessellated

    names = ("Result", "PlaneCertificate", "PointCertificate", "TrianglesCertificate",
             "DistanceCertificate", "ShiftCertificate")
    out = {name: getattr(results, name) for name in names}
    out["Bounded"] = tessellated.Bounded
    out["ExactResult"] = exact.ExactResult
    from gjkcli.pipeline.findings import Finding

    out["Finding"] = Finding
    return out


# The values `to_data` and `from_data` pass as they are (JSON's own).
_PLAIN = frozenset({type(None), bool, int, float, str})


def to_data(value):
    """JSON-able data of a result: dataclasses of `_types` by name and fields, NumPy arrays and
    scalars with their dtype, Status by value; floats exactly (JSON writes repr)."""
    import dataclasses

    import numpy as np

    from gjkcli.engine.results import Status

    fields: dict = {}  # type -> its field names, looked up once
    plain = _PLAIN

    def data(value):
        if type(value) in plain:  # most of a result's fields, as they are
            return value
        if value is None or isinstance(value, (bool, int, float, str)) and not isinstance(value, Status):
            return value
        if isinstance(value, Status):
            return {"status": value.value}
        names = fields.get(type(value))
        if names is None and dataclasses.is_dataclass(value) and not isinstance(value, type):
            names = fields[type(value)] = [f.name for f in dataclasses.fields(value)]
        if names is not None:
            got = getattr(value, "__dict__", None)
            if got is None:  # a dataclass with slots
                return {"dc": type(value).__name__, "f": {name: data(getattr(value, name)) for name in names}}
            return {"dc": type(value).__name__,
                    "f": {name: v if type(v := got[name] if name in got else getattr(value, name)) in plain
                          else data(v) for name in names}}
        if isinstance(value, np.ndarray):
            if value.dtype == object:
                return {"obj": list(value.shape), "v": [data(v) for v in value.ravel().tolist()]}
            return {"nd": value.dtype.str, "s": list(value.shape), "v": value.ravel().tolist()}
        if isinstance(value, np.generic):
            return {"np": value.dtype.str, "v": value.item()}
        if isinstance(value, tuple):
            return {"t": [data(v) for v in value]}
        if isinstance(value, list):
            return [data(v) for v in value]
        if isinstance(value, dict):
            return {"d": [[data(k), data(v)] for k, v in value.items()]}
        raise TypeError(f"cache: {type(value).__name__} is not data an entry holds")

    return data(value)


_FIELDS: dict = {}


def _made_by_fields(types) -> dict:
    """{class: its fields' names} of the dataclasses of `types` whose __init__ only sets the
    fields (no __post_init__, no slots): `from_data` makes one given every field without it."""
    import dataclasses

    for cls in types.values():
        if cls not in _FIELDS:
            params = getattr(cls, "__dataclass_params__", None)  # its __init__ the one dataclass made
            plain = (params is not None and params.init and "__init__" in cls.__dict__
                     and not hasattr(cls, "__post_init__") and "__slots__" not in cls.__dict__)
            _FIELDS[cls] = {f.name: None for f in dataclasses.fields(cls)}.keys() if plain else None
    return _FIELDS


def from_data(data, types=None):
    """The value `to_data` made; CacheError for anything else."""
    import numpy as np

    from gjkcli.engine.results import Status

    types = types if types is not None else _types()
    plain = _PLAIN
    made = _made_by_fields(types)
    statuses = {s.value: s for s in Status}

    def value(data):
        kind = type(data)
        if kind in plain:  # most of a result's fields: returned as they are, no calls
            return data
        if kind is list:
            return [v if type(v) in plain else value(v) for v in data]
        if kind is not dict:
            raise CacheError("it holds an unknown value")
        if "dc" in data:
            cls = types.get(data["dc"])
            if cls is None:
                raise CacheError(f"it names a type gjk does not cache ({data['dc']!r})")
            fields = {name: v if type(v) in plain else value(v) for name, v in data["f"].items()}
            if made.get(cls) != fields.keys():  # not every field: the class's own checks and defaults
                return cls(**fields)
            out = object.__new__(cls)  # every field, as __init__ would set them (`_made_by_fields`)
            out.__dict__.update(fields)
            return out
        if "nd" in data:
            if data["nd"] not in _DTYPES and not data["nd"].startswith("<U"):
                raise CacheError("it holds an array of an unknown dtype")
            return np.array(data["v"], dtype=np.dtype(data["nd"])).reshape(data["s"])
        if "status" in data:
            got = statuses.get(data["status"]) if type(data["status"]) is str else None
            return got if got is not None else Status(data["status"])
        if "obj" in data:
            out = np.empty(len(data["v"]), dtype=object)
            for n, v in enumerate(data["v"]):
                out[n] = value(v)
            return out.reshape(data["obj"])
        if "np" in data:
            if data["np"] not in _DTYPES:
                raise CacheError("it holds a number of an unknown dtype")
            return np.dtype(data["np"]).type(data["v"])
        if "t" in data:
            return tuple(value(v) for v in data["t"])
        if "d" in data:
            return {value(k): value(v) for k, v in data["d"]}
        raise CacheError("it holds an unknown value")

    try:
        return value(data)
    except (TypeError, ValueError, KeyError) as e:
        raise CacheError(f"it does not hold what gjk writes ({e})") from None


# -- many results as columns --------------------------------------------------------------------

# The pairs table's rows of one run, 25,000 on the Great Court roof: as `to_data` trees in the
# pack's JSON header, each float written as text, they made a first run markedly slower and
# larger than a run without the cache (benchmarks/bench_cache_cold.py). `to_columns` keeps them
# as a column per field instead, a float field one float64 array: the same values back, bit for
# bit.


def to_columns(values: list, arrays: dict, name: str = "v") -> dict:
    """The spec of `values` as columns: a field of floats, ints or bools one array of `arrays`
    (under names starting with `name`), strings as their distinct values and a code per value,
    arrays of one dtype and shape stacked, dataclasses of `_types` a column per field of each
    class; anything else as `to_data` per value. `ColumnValues(spec, arrays, n)` reads them."""
    import dataclasses
    from operator import attrgetter

    import numpy as np

    from gjkcli.engine.results import Status

    kinds = set(map(type, values))
    if kinds <= {float}:
        arrays[name] = np.array(values, dtype=np.float64)
        return {"f8": name}
    if kinds <= {float, type(None)}:
        arrays[name] = np.array([np.nan if v is None else v for v in values], dtype=np.float64)
        arrays[name + "?"] = np.array([v is None for v in values], dtype=bool)
        return {"f8?": name}
    if kinds == {bool}:
        arrays[name] = np.array(values, dtype=bool)
        return {"b1": name}
    if kinds == {int} and all(-2 ** 63 <= v < 2 ** 63 for v in values):
        arrays[name] = np.array(values, dtype=np.int64)
        return {"i8": name}
    if kinds <= {str, type(None)} or kinds == {Status}:
        plain = [v.value for v in values] if kinds == {Status} else values
        distinct = list(dict.fromkeys(plain))
        code = {v: n for n, v in enumerate(distinct)}
        arrays[name] = np.array([code[v] for v in plain], dtype=np.int32)
        return {"status" if kinds == {Status} else "str": distinct, "at": name}
    if kinds == {np.ndarray}:
        first = values[0]
        if first.dtype.str in _DTYPES and all(v.dtype == first.dtype and v.shape == first.shape for v in values):
            arrays[name] = np.stack(values) if values else np.zeros((0,) + first.shape, dtype=first.dtype)
            return {"nd": name}
    classes = sorted(kinds - {type(None)}, key=lambda c: c.__name__)
    known = _types()
    if classes and all(known.get(c.__name__) is c for c in classes):
        number = {cls: n for n, cls in enumerate(classes)}
        number[type(None)] = -1
        arrays[name] = np.array([number[type(v)] for v in values], dtype=np.int32)
        spec = {"dc": [], "at": name}
        for n, cls in enumerate(classes):
            mine = [v for v in values if type(v) is cls] if len(kinds) > 1 else values
            fields = [f.name for f in dataclasses.fields(cls)]
            spec["dc"].append([cls.__name__, {f: to_columns(list(map(attrgetter(f), mine)), arrays, f"{name}.{n}.{f}")
                                              for f in fields}])
        return spec
    return {"data": [to_data(v) for v in values]}


class ColumnValues:
    """The values `to_columns` kept, value r made when asked (`at`). CacheError where the spec
    or its arrays are not what `to_columns` writes, or do not hold n values."""

    def __init__(self, spec, arrays: dict, n: int):
        try:
            self.at = self._reader(spec, arrays, n)
        except (TypeError, ValueError, KeyError, IndexError, AttributeError) as e:
            raise CacheError(f"its columns are not what gjk writes ({e})") from None

    def value(self, r: int):
        try:
            return self.at(r)
        except (TypeError, ValueError, KeyError, IndexError) as e:
            raise CacheError(f"its columns are not what gjk writes ({e})") from None

    def _reader(self, spec, arrays: dict, n: int):
        import dataclasses

        import numpy as np

        from gjkcli.engine.results import Status

        def sized(a, dtype=None):
            if len(a) != n or (dtype is not None and a.dtype != dtype):
                raise ValueError("a column of another length or type")
            return a

        if "f8" in spec:
            return sized(arrays[spec["f8"]], np.float64).tolist().__getitem__
        if "f8?" in spec:
            got = sized(arrays[spec["f8?"]], np.float64).tolist()
            for r in np.flatnonzero(sized(arrays[spec["f8?"] + "?"], bool)).tolist():
                got[r] = None
            return got.__getitem__
        if "b1" in spec:
            return sized(arrays[spec["b1"]], bool).tolist().__getitem__
        if "i8" in spec:
            return sized(arrays[spec["i8"]], np.int64).tolist().__getitem__
        if "str" in spec or "status" in spec:
            distinct = spec.get("str", spec.get("status"))
            if "status" in spec:
                distinct = [Status(v) for v in distinct]
            elif any(v is not None and type(v) is not str for v in distinct):
                raise ValueError("a string column of other values")
            codes = sized(arrays[spec["at"]], np.int32).tolist()
            if codes and not 0 <= min(codes) <= max(codes) < len(distinct):
                raise ValueError("a string column's codes out of range")
            return lambda r: distinct[codes[r]]
        if "nd" in spec:
            stacked = sized(arrays[spec["nd"]])
            return lambda r: stacked[r].copy()
        if "dc" in spec:
            which = sized(arrays[spec["at"]], np.int32)
            counts = [int((which == t).sum()) for t in range(len(spec["dc"]))]
            if int((which >= 0).sum()) != sum(counts):
                raise ValueError("a row of no class")
            rank = np.zeros(n, dtype=np.int64)
            for t in range(len(counts)):
                mine = which == t
                rank[mine] = np.arange(counts[t])
            which, rank = which.tolist(), rank.tolist()
            made = _made_by_fields(_types())
            readers = []
            for (cls_name, fields), count in zip(spec["dc"], counts):
                cls = _types().get(cls_name)
                if cls is None:
                    raise ValueError(f"it names a type gjk does not cache ({cls_name!r})")
                own = {f.name: f for f in dataclasses.fields(cls)}
                needed = {name for name, f in own.items()
                          if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}
                if not needed <= fields.keys() <= own.keys():  # the class could not be made of them
                    raise ValueError(f"its {cls_name} columns are not that class's fields")
                readers.append((cls, made.get(cls) == fields.keys(),
                                [(f, self._reader(sub, arrays, count)) for f, sub in fields.items()]))

            def at(r: int):
                t = which[r]
                if t < 0:
                    return None
                cls, whole, fields = readers[t]
                s = rank[r]
                got = {f: read(s) for f, read in fields}
                if not whole:  # not every field: the class's own checks and defaults
                    return cls(**got)
                out = object.__new__(cls)  # every field, as __init__ would set them
                out.__dict__.update(got)
                return out

            return at
        if "data" in spec:
            data = spec["data"]
            if len(data) != n:
                raise ValueError("a column of another length")
            return lambda r: from_data(data[r])
        raise ValueError("an unknown column")


# -- a whole command's report -------------------------------------------------------------------

# Inputs whose file is the whole input (it names no other file a reader would open), so that its
# bytes stand for what a run reads of it: a whole report may be kept for them. A glTF (.gltf)
# names its buffers, an OBJ its materials, a URDF its meshes, a manifest its includes: a run
# over those is cached part by part and pair by pair, not whole.
# A URDF names its meshes: its report is kept with their digests (`Cache.depends`), replayed
# while they are unchanged.
WITH_DEPENDENCIES = frozenset({".urdf"})
WHOLE_FILES = frozenset({".stl", ".ply", ".off", ".glb", ".3mf", ".step", ".stp", ".ifc", ".ifczip", ".dxf",
                         ".svg"})


def run_key(command: str, params: dict, inputs, extra_files=()) -> str | None:
    """The key of a whole command's report: the command, its parameters (their repr, in name
    order), the working folder, and the bytes of every input (a folder: of every file under it,
    `_folder_files`) and of `extra_files` (the settings file, the baseline; None or absent ones
    as absent); None when an input is not a whole file (a glTF with buffers beside it, a
    manifest) or cannot be read."""
    files = []
    for name in inputs:
        path = Path(name)
        if path.is_dir():  # every file under it, whatever it is (a glTF's buffers too)
            found = _folder_files(path, params.get("recurse", True))
            if found is None:
                return None
            files.extend(found)
            continue
        if path.suffix.lower() not in WHOLE_FILES | WITH_DEPENDENCIES or not path.is_file():
            return None
        try:
            files.append((name, _file_digest(path)))
        except OSError:
            return None
    for name in extra_files:
        if name is None:
            continue
        path = Path(name)
        try:
            files.append((str(name), _file_digest(path) if path.is_file() else "absent"))
        except OSError:
            return None
    where = [os.environ.get(name, "") for name in ("ROS_PACKAGE_PATH", "AMENT_PREFIX_PATH")]
    return key("run", command, os.getcwd(), sorted((k, repr(v)) for k, v in params.items()), files, where)


# A folder of more files than this is not kept whole (hashing them would cost a run's time).
FOLDER_FILES_UP_TO = 20_000


def _folder_files(folder: Path, recurse: bool):
    """[(path, digest)] of every file under `folder` (its subfolders with `recurse`) but those of
    a cache folder and of version control, in name order; None when there are too many or one
    cannot be read."""
    out = []
    for top, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if recurse and d not in (FOLDER, ".git", ".hg", ".svn")
                         and not (Path(top) / d / "CACHEDIR.TAG").is_file())
        for name in sorted(names):
            path = Path(top) / name
            try:
                out.append((str(path), _file_digest(path)))
            except OSError:
                return None
            if len(out) > FOLDER_FILES_UP_TO:
                return None
    return out


def _file_digest(path: Path) -> bytes:
    """`gjkcli.digests.file_digest`: a GLB's binary chunk hashed once for the run key and the
    re-scan's layout (`gjkcli.mesh.gltf.layout`)."""
    from gjkcli.digests import file_digest

    return file_digest(path)


def get_run(cache: "Cache", k: str):
    """(exit code, [(output or None, bytes)], [stderr line]) of a kept report, or None."""
    got = cache.get("run", k, raw=True)
    return None if got is None else _run(cache, *got, bytes)


@contextlib.contextmanager
def opened_run(cache: "Cache", k: str):
    """`get_run`'s answer within the block, each write's bytes a `FileChunks` read from the
    entry's file as they are written out (a replayed report is never whole in memory); None
    where none is kept."""
    entry = cache.opened("run", k)
    if entry is None:
        yield None
        return
    with entry:
        yield _run(cache, entry.data, entry.arrays, lambda chunks: chunks)


def _run(cache: "Cache", header, arrays: dict, as_written):
    for path, digest in header.get("depends", ()):  # a URDF's meshes: the same, or a new run
        if _digest_or_absent(path) != digest:
            return None
    try:
        writes = [(out, as_written(arrays[f"w{n}"])) for n, out in enumerate(header["outputs"])]
        return int(header["exit"]), writes, [str(line) for line in header["stderr"]]
    except (KeyError, TypeError, ValueError, AttributeError):
        cache.notes.append("cache: ignored a kept report that does not hold what gjk writes")
        return None


def _entry_path(folder, kind: str, k: str) -> Path:
    return Path(folder) / kind / k[:2] / k


def mark_inputs(cache: "Cache", inputs) -> None:
    """Mark the STEP files and IFC models among a kept report's `inputs` by their bytes' digest
    (an empty entry of kind "inputs" each): a later command's start tells by them, before it
    reads its options, whether its forked reader of those files need wait for the cache's
    answer (`may_hold_report`)."""
    from gjkcli.mesh.cad_process import read_ahead_files

    for name in read_ahead_files([str(p) for p in inputs]):
        try:
            digest = _file_digest(Path(name)).hex()
        except OSError:
            continue
        if not cache.path("inputs", digest).is_file():
            cache.put("inputs", digest, {})


def may_hold_report(folder, files) -> bool:
    """Whether the cache `folder` may keep a report made of `files` as their bytes are now:
    each is marked there (`mark_inputs`). False once one is not: no report kept is of it, and
    the command's reader of it may start at once."""
    from gjkcli.digests import file_digest

    for name in files:
        try:
            digest = file_digest(name).hex()
        except OSError:  # the command says what is wrong with it
            return True
        if not _entry_path(folder, "inputs", digest).is_file():
            return False
    return True


def put_run(cache: "Cache", k: str, code: int, writes: list, stderr: list) -> None:
    """Keep a command's report: its exit code, what it wrote where, its stderr lines."""
    import numpy as np

    arrays, files = {}, []
    try:
        for n, (_, data) in enumerate(writes):
            if isinstance(data, WrittenFile):
                fd = data.opened()
                if fd is None:
                    return  # the report's file is no longer what the command wrote: not kept
                files.append(fd)
                arrays[f"w{n}"] = FileChunks(fd, data.written.st_size)
            else:
                arrays[f"w{n}"] = Chunks(data) if isinstance(data, list) else np.frombuffer(data, dtype=np.uint8)
        depends = [[path, _digest_or_absent(path)] for path in sorted(cache.depends)]
        cache.put("run", k, {"exit": int(code), "outputs": [out for out, _ in writes],
                             "stderr": list(stderr), "depends": depends}, arrays)
    finally:
        for fd in files:
            os.close(fd)


def _digest_or_absent(path: str) -> str:
    try:
        return _file_digest(Path(path)).hex()
    except OSError:
        return "absent"


def depend_on_robot(cache, robot) -> None:
    """The run read `robot`'s mesh files (`gjkcli.scene.urdf.Robot`): its kept report depends
    on them."""
    if cache is None:
        return
    for c in getattr(robot, "collisions", ()):
        mesh = getattr(c, "mesh", None)
        if mesh is not None:
            cache.depends.add(str(Path(mesh).absolute()))


# -- tables: many small rows in one entry per run -----------------------------------------------

# A run reads every pack of a kind; past this many, it writes the rows of the packs it read as
# one pack and removes them (so that a folder of many small runs stays a few reads): every row
# while those packs take at most TABLE_SHARE of the cache's limit (a folder scanned file after
# file, or a CI cache shared by a project's models, keeps each file's rows), else the rows this
# run used (the table stays within the limit).
PACKS_MERGED_PAST = 8
TABLE_SHARE = 1 / 16


class Table:
    """Rows of one kind (`pairs`, `hulls`), each under its own key: data (JSON-able) and named
    arrays, or a value (`put_value`: a result, kept with the pack's other values as columns).
    Kept as packs, one entry per run holding the rows that run computed (`save`); a run
    reads every pack of its kind once (`load`). A pack that is not believed is ignored whole,
    with the cache's note."""

    def __init__(self, cache: Cache, kind: str):
        self.cache = cache
        self.kind = kind
        self.rows: dict = {}  # key -> (data, {name: array}) read
        self.new: dict = {}  # key -> (data, {name: array}) to write
        self.done: dict = {}  # key -> (data, {name: array}) written by `save`
        self.used: set = set()
        self.packs: list = []  # the packs read: (key, path)
        self.read_bytes = 0  # their size
        self._load()

    def _load(self) -> None:
        folder = self.cache.folder / self.kind
        if not folder.is_dir():
            return
        for sub in sorted(os.scandir(folder), key=lambda e: e.name):
            if not sub.is_dir():
                continue
            for e in os.scandir(sub.path):
                if is_partial_write(e.name):
                    continue
                got = self.cache.get(self.kind, e.name)
                if got is None:
                    continue
                self.packs.append((e.name, e.path))
                try:
                    self.read_bytes += e.stat().st_size
                except OSError:
                    pass
                header, arrays = got
                try:
                    columns = _Columns(header, arrays)
                    for r, (k, data) in enumerate(zip(header["keys"], header["rows"])):
                        self.rows[k] = (data, (columns, r))
                except (CacheError, KeyError, TypeError, ValueError) as err:
                    self.cache.notes.append(f"cache: ignored the entry {e.path}: {err}; its rows "
                                            f"were computed again")

    def get(self, k: str):
        """(data, arrays) of row `k`, or None."""
        got = self.rows.get(k)
        if got is not None:
            data, (columns, r) = got
            got = data, columns.row(r)
        else:
            got = self.new.get(k) or self.done.get(k)
        if got is not None:
            self.used.add(k)
        return got

    def put(self, k: str, data, arrays: dict | None = None) -> None:
        self.new[k] = (data, arrays or {})
        self.used.add(k)

    def put_value(self, k: str, value) -> None:
        """Row `k` holds `value` (a result `to_data` takes), kept with the run's other values
        as columns (`to_columns`); `value(k)` gives it back."""
        self.put(k, _Valued(value))

    def value(self, k: str):
        """The value row `k` holds (`put_value`'s, or `from_data` of data `put`), or None;
        CacheError where it cannot be believed."""
        got = self.rows.get(k)
        if got is not None:
            self.used.add(k)
            data, (columns, _) = got
            return columns.value(data)
        got = self.new.get(k) or self.done.get(k)
        if got is None:
            return None
        self.used.add(k)
        return got[0].value if type(got[0]) is _Valued else from_data(got[0])

    def save(self) -> None:
        """Write this run's new rows as one pack; past PACKS_MERGED_PAST packs, with them the
        rows of the packs read (all of them while those packs take at most TABLE_SHARE of the
        cache's limit, else those this run used) as one pack, and the packs read removed. A
        pack holds each array name's rows as one column (their rows concatenated, with
        offsets), so that reading 10,000 rows is a few arrays."""
        import uuid

        import numpy as np

        merge = len(self.packs) >= PACKS_MERGED_PAST
        rows = dict(self.new)
        if merge:
            kept = self.rows if self.read_bytes <= TABLE_SHARE * self.cache.limit else self.used
            for k in kept:
                if k not in rows and k in self.rows:
                    data, (columns, r) = self.rows[k]
                    if type(data) is dict and _VALUE in data:
                        try:
                            rows[k] = (_Valued(columns.value(data)), {})
                        except CacheError:
                            continue  # not believed: not kept
                    else:
                        rows[k] = (data, columns.row(r))
        if not rows:
            return
        valued = [d.value for d, _ in rows.values() if type(d) is _Valued]
        listed, n = [], 0
        for d, _ in rows.values():
            if type(d) is _Valued:
                listed.append({_VALUE: n})
                n += 1
            else:
                listed.append(d)
        names = sorted({name for _, arrays in rows.values() for name in arrays})
        columns, arrays = {}, {}
        for name in names:
            pieces = [np.ascontiguousarray(a[name]) if name in a else None for _, a in rows.values()]
            first = next(p for p in pieces if p is not None)
            tail = list(first.shape[1:])
            if first.dtype.str not in _DTYPES or any(
                    p is not None and (p.dtype != first.dtype or list(p.shape[1:]) != tail or p.ndim == 0)
                    for p in pieces):
                raise TypeError(f"cache: the rows' {name} arrays differ in dtype or shape")
            counts = np.array([0 if p is None else len(p) for p in pieces], dtype=np.int64)
            arrays[name] = np.concatenate([p for p in pieces if p is not None]) if counts.any() \
                else np.zeros([0] + tail, dtype=first.dtype)
            arrays[name + "@offsets"] = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
            arrays[name + "@has"] = np.array([p is not None for p in pieces], dtype=bool)
            columns[name] = tail
        header = {"keys": list(rows), "rows": listed, "columns": columns}
        if valued:
            header["values"] = to_columns(valued, arrays, _VALUE)
            header["valued"] = len(valued)
        pack = key("pack", self.kind, uuid.uuid4().hex)
        self.cache.put(self.kind, pack, header, arrays)
        self.done.update(self.new)  # written: a second save writes nothing again
        self.new = {}
        if merge and self.cache.wrote:
            for _, path in self.packs:
                try:
                    os.unlink(path)
                except OSError:
                    pass
            self.packs = []


class _Valued:
    """A row's value to write with the run's others as columns (`Table.put_value`)."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


# A pack's row that is one of its values: {_VALUE: its number}; the values' arrays are named
# from it too (no row's arrays are: their names are a table's own, "v", "f", ...)
_VALUE = "@v"


class _Columns:
    """A pack's columns: row r's arrays sliced out when asked."""

    def __init__(self, header: dict, arrays: dict):
        self.columns = {}
        n = len(header["keys"])
        if len(header["rows"]) != n:
            raise CacheError("its rows and keys differ in number")
        for name, tail in header["columns"].items():
            values, offsets, has = arrays[name], arrays[name + "@offsets"], arrays[name + "@has"]
            if len(offsets) != n + 1 or len(has) != n or offsets[-1] != len(values) \
                    or list(values.shape[1:]) != list(tail) or (offsets[1:] < offsets[:-1]).any():
                raise CacheError(f"its column {name} does not fit its rows")
            self.columns[name] = (values, offsets.tolist(), has)
        self.valued = header.get("valued", 0)
        if type(self.valued) is not int or self.valued < 0:
            raise CacheError("its count of values is not a count")
        self.values = ColumnValues(header["values"], arrays, self.valued) if self.valued else None

    def value(self, data):
        """The value of a row whose data is `data`: one of the pack's values (`Table.put_value`),
        else `from_data` of it."""
        if not (type(data) is dict and _VALUE in data):
            return from_data(data)
        at = data[_VALUE]
        if type(at) is not int or not 0 <= at < self.valued or len(data) != 1:
            raise CacheError("a row names a value the pack does not hold")
        return self.values.value(at)

    def row(self, r: int) -> dict:
        return {name: values[offsets[r]:offsets[r + 1]]
                for name, (values, offsets, has) in self.columns.items() if has[r]}


# -- hulls and parts ----------------------------------------------------------------------------

# The fields of a Shape an entry holds as arrays, and as numbers.
_SHAPE_ARRAYS = ("vertices", "adj_start", "adj", "dims", "rotation", "translation", "_cube")
_SHAPE_NUMBERS = ("kind", "dimension", "radius", "_extent", "_size")


def hull_key(content: tuple, small_points) -> str:
    """The key of a prepared geometry's hull (`gjkcli.pipeline.prepared.Geometry.content`: its
    vertex and face counts and their arrays' BLAKE2b)."""
    h = blake2b(_prefix(), digest_size=20)
    h.update(f"hull {content[0]} {content[1]} {small_points};".encode())
    h.update(content[2])
    return h.hexdigest()


def hull_row(g) -> tuple:
    """(data, arrays) of a prepared Geometry: its hull (every field of the Shape, so that the
    one read back is the same to the bit), gap, bounds, closedness and winding, or its error."""
    if g.hull is None:
        return {"error": str(g.error) if g.error is not None else "no hull"}, {}
    shape = g.hull
    data = {name: getattr(shape, name) for name in _SHAPE_NUMBERS}
    data.update(gap=float(g.gap), closed=bool(g.closed), inward=int(g.inward), faces=shape.faces is not None)
    arrays = {name: getattr(shape, name) for name in _SHAPE_ARRAYS}
    if shape.faces is not None:
        arrays["faces"] = shape.faces
    arrays["bounds"] = g.bounds
    return data, arrays


def set_hull(g, row, notes: list | None = None) -> bool:
    """Give the prepared Geometry `g` the hull of a `hull_row`; False (g left as it was, a note
    in `notes`) for a row that does not hold what `hull_row` writes."""
    from gjkcli.engine.shapes import Shape
    from gjkcli.errors import ShapeError

    data, arrays = row
    try:
        if "error" in data:
            g.error = ShapeError(data["error"])
            return True
        fields = {name: arrays[name] for name in _SHAPE_ARRAYS}
        fields.update({name: data[name] for name in _SHAPE_NUMBERS})
        fields["faces"] = arrays["faces"] if data["faces"] else None
        fields["dimension"] = int(fields["dimension"])
        hull = Shape(**fields)
        gap, closed, inward, bounds = float(data["gap"]), bool(data["closed"]), int(data["inward"]), arrays["bounds"]
    except (KeyError, TypeError, ValueError) as e:
        if notes is not None:
            notes.append(f"cache: ignored a kept hull that does not hold what gjk writes ({e}); it was built again")
        return False
    g.hull, g.gap, g.closed, g.inward, g.bounds = hull, gap, closed, inward, bounds
    return True


class PartKeys:
    """A key per object of a run, made when first asked: its name, unit, tessellation error,
    what its loader knows (watertight, bodies, exact solids), its triangles and the hull (or
    primitive) the narrow phase reads, and, for an object that places a mesh others may place
    too (an Instance), that mesh and its pose, which the triangle test reads instead of the
    world triangles (`gjkcli.pipeline.stages.Parts.placed_body`: the same triangles placed
    differ in the last bits, and its hierarchy in the boxes it visits), so that a pair's answer
    is a function of its two keys and the pair's options."""

    def __init__(self, geoms, shapes):
        self.geoms, self.shapes = geoms, shapes
        self.made: dict = {}

    def __getitem__(self, k: int) -> bytes:
        got = self.made.get(k)
        if got is None:
            import numpy as np

            g, shape = self.geoms[k], self.shapes[k]
            h = blake2b(digest_size=20)
            h.update(repr((g.name, g.units, float(g.eps or 0.0), g.watertight, g.bodies,
                           len(g.brep) if g.brep else 0, g.primitive is not None)).encode())
            if g.vertices is not None:
                h.update(np.ascontiguousarray(g.vertices, dtype=np.float64))
                h.update(b"|")
                h.update(np.ascontiguousarray(g.faces, dtype=np.int64))
            if shape is not None and hasattr(shape, "rotation"):
                h.update(repr((shape.kind, shape.radius, len(shape.vertices))).encode())
                for a in (shape.vertices, shape.dims, shape.rotation, shape.translation):
                    h.update(np.ascontiguousarray(a, dtype=np.float64))
            instance = g.instance
            if instance is not None and instance.local is not None and g.primitive is None:
                h.update(b"|placed|")
                for a in (instance.local, instance.pose):
                    h.update(np.ascontiguousarray(a, dtype=np.float64))
            got = self.made[k] = h.digest()
        return got


def reason_key(vertices, faces, watertight, bodies, gap, hull_points=None) -> str:
    """The key of a part's convexity reason (`gjkcli.mesh.convexity.part_reasons`): its world
    vertices and triangles (the reason merges them on a grid of their own size), the flags its
    loader gave and its hull gap; hull_points: the reason's (a mesh several parts place is
    measured once, in its own frame, the compiled core's hull up to SHARED_HULL_POINTS)."""
    import numpy as np

    h = blake2b(_prefix(), digest_size=20)
    h.update(repr(("reason", watertight, bodies, float(gap))
                  + (() if hull_points is None else (int(hull_points),))).encode())
    h.update(np.ascontiguousarray(vertices, dtype=np.float64))
    h.update(b"|")
    h.update(np.ascontiguousarray(faces, dtype=np.int64))
    return h.hexdigest()


def pair_key(common: bytes, a: bytes, b: bytes, *values) -> str:
    """The key of a pair's answer: the run's `common` options, both objects' `PartKeys` and the
    pair's own values (numbers, flags, None)."""
    h = blake2b(_prefix(), digest_size=20)
    h.update(common)
    h.update(a)
    h.update(b)
    h.update(repr(values).encode())
    return h.hexdigest()


def prefix() -> bytes:
    """What every key starts with: the entry format, gjk's version and its code's stamp."""
    return _prefix()


def _prefix() -> bytes:
    return f"gjk-cache {FORMAT} {_stamp()};".encode()
