"""`gjkcli.digests.file_digest`: a file hashed twice in one process (the command's start, then its
cache's run key) is read once, and never answered from memory once it may have changed."""
from __future__ import annotations

from gjkcli import digests


def test_a_settled_file_is_hashed_once_and_again_once_rewritten(tmp_path, monkeypatch):
    monkeypatch.setattr(digests, "_WHOLE", {})
    monkeypatch.setattr(digests, "_SETTLED_S", 0.0)
    path = tmp_path / "a.stp"
    path.write_bytes(b"ISO-10303-21; one")
    first = digests.file_digest(path)
    assert list(digests._WHOLE.values()) == [first]
    reads = []
    real_open = open

    def counted(*args, **kwargs):
        reads.append(args[0])
        return real_open(*args, **kwargs)

    monkeypatch.setattr("builtins.open", counted)
    assert digests.file_digest(path) == first and reads == []
    path.write_bytes(b"ISO-10303-21; two")  # the same size: another identity all the same
    second = digests.file_digest(path)
    assert second != first and reads == [path]


def test_a_file_written_within_the_second_is_not_remembered(tmp_path, monkeypatch):
    """However coarse the file system's clock, a write after the hash changes what the next
    hash is keyed by only if the file was last written a while before it: a fresh one is not
    remembered."""
    monkeypatch.setattr(digests, "_WHOLE", {})
    path = tmp_path / "fresh.ifc"
    path.write_bytes(b"ISO-10303-21; fresh")
    digests.file_digest(path)
    assert digests._WHOLE == {}
