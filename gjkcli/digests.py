"""The hashes gjk keys its cache, checks its entries and finds shared meshes by, without OpenSSL.

- BLAKE2b (`blake2b`) for keys made of many small pieces: a STEP entity's text and its referents'
  digests, a mesh's arrays, a placement. `hashlib.blake2b` is CPython's own `_blake2` module's
  (hashlib never takes BLAKE2 from OpenSSL), but `import hashlib` loads OpenSSL's `_hashlib`
  first: about 2 ms of every command's start. It is taken from `_blake2` here, the same
  function, and from hashlib in a Python without that module.
- BLAKE3 (`blake3`: the reference implementation's own binding, its SIMD kernels) for bulk bytes:
  an input file's digest (a 10,000-part GLB's 20 MB, every cached run's key) and the checksum of
  every cache entry read and written (a robot's 100,000 poses are kept in about 100 MB of them:
  `benchmarks/bench_cache_poses.py`). It hashes
  megabytes several times faster than BLAKE2b on one thread, and a few hundred bytes slower a
  call: `benchmarks/bench_digest.py` measures both on the machine at hand.
"""
from __future__ import annotations

import threading

from blake3 import blake3 as _blake3

try:
    from _blake2 import blake2b
except ImportError:  # another Python's hashlib
    from hashlib import blake2b

__all__ = ["READ_FILES", "ReadFiles", "blake2b", "blake3", "chunk_digest", "file_digest", "identity"]


class blake3:  # named as hashlib names its hashes
    """BLAKE3 with `hashlib.blake2b`'s calls: `update` with any C-contiguous buffer (bytes, a
    memoryview, a NumPy array: the binding itself reads buffers of bytes only), `digest()` and
    `hexdigest()` of `digest_size` bytes (the hash's output read to that length)."""

    __slots__ = ("_h", "digest_size")

    def __init__(self, data=b"", digest_size: int = 32):
        self._h = _blake3()
        self.digest_size = digest_size
        self.update(data)

    def update(self, data) -> None:
        if not isinstance(data, (bytes, bytearray)):
            view = memoryview(data)
            if not view.nbytes:
                return
            data = view if view.format == "B" and view.ndim == 1 else view.cast("B")
        self._h.update(data)

    def digest(self) -> bytes:
        return self._h.digest(self.digest_size)

    def hexdigest(self) -> str:
        return self._h.hexdigest(self.digest_size)


def identity(st) -> tuple:
    """A file's identity as `os.stat` gives it: while it is the same, so are the file's bytes
    (as far as a process running a few seconds can tell: what a cache keyed by a file's digest
    already takes for granted between its hash and its read)."""
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def file_digest(path) -> bytes:
    """BLAKE3-20 of a file's bytes, read 1 MB at a time. A GLB (glTF 2 header, a JSON chunk,
    then a binary chunk, all within the file) is hashed as its bytes before the binary chunk's
    data, the digest of that data and the bytes after: `chunk_digest` gives a reader of the
    same file the binary chunk's digest without hashing it again (a 10,000-part GLB's 14 MB)."""
    import os
    import struct

    try:  # hashed before in this process (the command's start, then its run key): the same file
        with _WHOLE_LOCK:
            known = _WHOLE.get(identity(os.stat(path)))
    except OSError:
        known = None
    if known is not None:
        return known
    h = blake3(digest_size=20)
    with open(path, "rb") as f:
        st = os.fstat(f.fileno())
        head = f.read(28)
        start = end = None
        if len(head) == 28 and head[:4] == b"glTF":
            version, length, json_length = struct.unpack_from("<III", head, 4)
            at = 20 + json_length + 8
            if version == 2 and length == st.st_size and at <= st.st_size:
                f.seek(at - 8)
                bin_length, bin_type = struct.unpack("<II", f.read(8))
                if bin_type == 0x004E4942 and at + bin_length <= st.st_size:
                    start, end = at, at + bin_length
                f.seek(len(head))
        if start is None:
            h.update(head)
            if _hash_up_to(f, h, None):
                _remember(st, h.digest())
            return h.digest()
        h.update(b"GLB %d %d:" % (start, end))
        h.update(head)
        whole = _hash_up_to(f, h, start - len(head))
        inner = blake3(digest_size=20)
        whole &= _hash_up_to(f, inner, end - start)
        inner = inner.digest()
        h.update(inner)
        _hash_up_to(f, h, None)
    if whole:
        READ_FILES.keep_chunk(st, start, end, inner)
        _remember(st, h.digest())
    return h.digest()


# Whole files' digests this process made, by the files' `identity` (the latest last, a few):
# of files last written a second or more before they were hashed, so that a write after the hash
# changes the identity, however coarse the file system's clock (a few milliseconds on some).
# One lock: a Dask worker's threads share them.
_WHOLE: dict = {}
_WHOLE_KEPT = 64
_WHOLE_LOCK = threading.Lock()
_SETTLED_S = 1.0


def _remember(st, digest: bytes) -> None:
    import time

    if time.time() - max(st.st_mtime, st.st_ctime) < _SETTLED_S:
        return
    with _WHOLE_LOCK:
        _WHOLE[identity(st)] = digest
        while len(_WHOLE) > _WHOLE_KEPT:
            _WHOLE.pop(next(iter(_WHOLE)))


def _hash_up_to(f, h, count) -> bool:
    """Feed `count` bytes of stream `f` (all that is left: None) to `h`; whether all were
    there."""
    while count is None or count > 0:
        chunk = f.read(1 << 20 if count is None else min(count, 1 << 20))
        if not chunk:
            return count is None
        h.update(chunk)
        if count is not None:
            count -= len(chunk)
    return True


def chunk_digest(st, start: int, end: int):
    """BLAKE3-20 of the binary chunk at data[start:end] of the file of `os.stat` result `st`,
    as `file_digest` found it in this process, or None."""
    return READ_FILES.chunk(st, start, end)


class _Kept:
    """What this process keeps of one file: its binary chunk as `file_digest` hashed it
    (the file's `identity` then, start, end, BLAKE3-20 of the data), and a reader's parsed
    document under the name the reader knows the file by (a glTF's resolved path)."""

    __slots__ = ("chunk", "document", "name")

    def __init__(self):
        self.chunk = None
        self.name = None
        self.document = None


class ReadFiles:
    """This process's memo of the files it read, one entry a file by its device and inode:
    the binary chunk's digest that `file_digest` found (reused while the file's whole
    `identity` is the same) and a parsed document (reused while its reader's own check of the
    file passes: gjkcli.mesh.gltf's range reads). Documents are bounded (the caller's `kept`,
    the latest used last), chunk digests are not (a few dozen bytes a GLB the run key hashed).
    One lock: a Dask worker's threads share it."""

    def __init__(self):
        self._entries: dict = {}  # (st_dev, st_ino) -> _Kept, in order of documents' last use
        self._lock = threading.Lock()

    def keep_chunk(self, st, start: int, end: int, digest: bytes) -> None:
        with self._lock:
            got = self._entries.setdefault((st.st_dev, st.st_ino), _Kept())
            got.chunk = (identity(st), start, end, digest)

    def chunk(self, st, start: int, end: int):
        """The digest of the chunk at [start:end] of the file of `os.stat` result `st`, or None."""
        with self._lock:
            got = self._entries.get((st.st_dev, st.st_ino))
            chunk = None if got is None else got.chunk
        return chunk[3] if chunk is not None and chunk[:3] == (identity(st), start, end) else None

    def document(self, name: str):
        """The document kept under `name`, or None; the caller checks it is still the file's."""
        with self._lock:
            for got in self._entries.values():
                if got.name == name:
                    return got.document
        return None

    def used(self, name: str) -> None:
        """Mark the document kept under `name` (if still kept) as the latest used."""
        with self._lock:
            for key, got in self._entries.items():
                if got.name == name:
                    self._entries[key] = self._entries.pop(key)
                    return

    def keep_document(self, where: tuple, name: str, document, kept: int) -> None:
        """Keep `document` for the file at `where` (st_dev, st_ino), named `name`, as the latest
        used: it replaces any other document of that name (a file replaced under its name has
        another inode), and the oldest documents past `kept` are dropped."""
        with self._lock:
            for key, got in list(self._entries.items()):
                if got.name == name:
                    self._drop_document(key)
            got = self._entries.pop(where, None) or _Kept()
            got.name, got.document = name, document
            self._entries[where] = got
            held = [key for key, got in self._entries.items() if got.name is not None]
            for key in held[:max(len(held) - kept, 0)]:
                self._drop_document(key)

    def forget_documents(self) -> int:
        """Drop every kept document (chunk digests stay); how many there were."""
        with self._lock:
            held = [key for key, got in self._entries.items() if got.name is not None]
            for key in held:
                self._drop_document(key)
        return len(held)

    def documents(self) -> int:
        """How many documents are kept."""
        with self._lock:
            return sum(got.name is not None for got in self._entries.values())

    def _drop_document(self, key: tuple) -> None:
        """(Under the lock.) Drop the document at `key`; the entry too when it keeps nothing else."""
        got = self._entries[key]
        got.name = got.document = None
        if got.chunk is None:
            del self._entries[key]


# the one memo of this process
READ_FILES = ReadFiles()
