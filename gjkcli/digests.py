"""BLAKE2b, the hash gjk keys its cache and its shared meshes by, without OpenSSL.

`hashlib.blake2b` is CPython's own `_blake2` module's (hashlib never takes BLAKE2 from OpenSSL),
but `import hashlib` loads OpenSSL's `_hashlib` first: about 2 ms of every command's start. It
is taken from `_blake2` here, the same function, and from hashlib in a Python without that
module.
"""
from __future__ import annotations

try:
    from _blake2 import blake2b
except ImportError:  # another Python's hashlib
    from hashlib import blake2b

__all__ = ["blake2b", "file_digest", "chunk_digest", "identity"]


# `file_digest`'s GLB binary chunks, by the file's identity (os.stat: device, inode, size,
# modification and change times) and the chunk's place: (start, end, BLAKE2b-20 of its data)
_CHUNKS: dict = {}


def identity(st) -> tuple:
    """A file's identity as `os.stat` gives it: while it is the same, so are the file's bytes
    (as far as a process running a few seconds can tell: what a cache keyed by a file's digest
    already takes for granted between its hash and its read)."""
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def file_digest(path) -> bytes:
    """BLAKE2b-20 of a file's bytes, read 1 MB at a time. A GLB (glTF 2 header, a JSON chunk,
    then a binary chunk, all within the file) is hashed as its bytes before the binary chunk's
    data, the digest of that data and the bytes after: `chunk_digest` gives a reader of the
    same file the binary chunk's digest without hashing it again (a 10,000-part GLB's 14 MB)."""
    import os
    import struct

    h = blake2b(digest_size=20)
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
            _hash_up_to(f, h, None)
            return h.digest()
        h.update(b"GLB %d %d:" % (start, end))
        h.update(head)
        whole = _hash_up_to(f, h, start - len(head))
        inner = blake2b(digest_size=20)
        whole &= _hash_up_to(f, inner, end - start)
        inner = inner.digest()
        h.update(inner)
        _hash_up_to(f, h, None)
    if whole:
        _CHUNKS[identity(st)] = (start, end, inner)
    return h.digest()


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
    """BLAKE2b-20 of the binary chunk at data[start:end] of the file of `os.stat` result `st`,
    as `file_digest` found it in this process, or None."""
    got = _CHUNKS.get(identity(st))
    return got[2] if got is not None and got[:2] == (start, end) else None
