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

__all__ = ["blake2b"]
