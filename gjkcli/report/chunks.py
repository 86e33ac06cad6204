"""A report's text handed to its writer in chunks of about a quarter of a megabyte
(`in_chunks`): few writes, and little held (a chunk's pieces and their join are both held
while it is made: a megabyte's were a Dask scan's client's largest allocation as it wrote).
The JSON, SARIF and JUnit reports make their text in small pieces (an object, a pair, a
result, a test case) as they reach them, and hand the pieces on through it."""
from __future__ import annotations

from collections.abc import Iterable, Iterator

__all__ = ["CHUNK_BYTES", "in_chunks"]

# The size of the chunks a report hands the writer (`gjkcli.errors.write_whole`).
CHUNK_BYTES = 1 << 18


def in_chunks(pieces: Iterable[bytes]) -> Iterator[bytes]:
    """The pieces joined into chunks of at least CHUNK_BYTES (the last one shorter; none empty),
    in order; a piece that large on its own is a chunk as it is, the pieces before it joined
    (shorter then too): never copied again."""
    pending, size = [], 0
    for piece in pieces:
        if len(piece) >= CHUNK_BYTES:
            if pending:
                yield b"".join(pending)
                pending, size = [], 0
            yield piece
            continue
        pending.append(piece)
        size += len(piece)
        if size >= CHUNK_BYTES:
            yield b"".join(pending)
            pending, size = [], 0
    if pending:
        yield b"".join(pending)
