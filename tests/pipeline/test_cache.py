"""The cache (gjkcli/pipeline/cache.py): entries as checked data, kept hulls and pair answers that
never change a run's findings, and the folder's bounds. Every cache lives in tmp_path."""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

import numpy as np
import pytest
import spy
from armtables import arm_tables

from gjkcli.errors import is_partial_write
from gjkcli.pipeline import cache as caches
from gjkcli.pipeline import stages
from gjkcli.pipeline.cache import Cache, Table
from gjkcli.pipeline.run import Options, scan
from gjkcli.report.jsonout import document

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples"
STEP = ROOT / "tests" / "data" / "third_party" / "step" / "as1-oc-214.stp"


def _json(found) -> str:
    return json.dumps(document(found, timings=False), sort_keys=True)


def _flip_byte(path: Path, at: int = -3) -> None:
    data = bytearray(path.read_bytes())
    data[at] ^= 0x01
    path.write_bytes(bytes(data))


def _entries(folder: Path, kind: str) -> list:
    return sorted(p for p in (folder / kind).rglob("*") if p.is_file() and not is_partial_write(p.name))


# -- the store ------------------------------------------------------------------------------------


def test_an_entry_reads_back_as_written(tmp_path):
    c = Cache(tmp_path / "c")
    arrays = {"v": np.arange(12, dtype=np.float64).reshape(4, 3), "f": np.array([[0, 1, 2]], dtype=np.int64)}
    c.put("run", "ab" * 20, {"x": 1.5, "s": "text"}, arrays)
    header, got = Cache(tmp_path / "c").get("run", "ab" * 20)
    assert header == {"x": 1.5, "s": "text"}
    assert np.array_equal(got["v"], arrays["v"]) and got["v"].dtype == np.float64
    assert np.array_equal(got["f"], arrays["f"]) and got["f"].shape == (1, 3)
    # the folder is marked as a cache, for backups and for git
    assert "Signature: 8a477f597d28d172789f06886806bc55" in (tmp_path / "c" / "CACHEDIR.TAG").read_text()
    assert (tmp_path / "c" / ".gitignore").read_text().splitlines()[-1] == "*"


def _opened_bytes(c: Cache, kind: str, k: str):
    """`Cache.opened`'s entry as (data, {name: bytes}), or None."""
    entry = c.opened(kind, k)
    if entry is None:
        return None
    with entry:
        return entry.data, {name: b"".join(chunks.each()) for name, chunks in entry.arrays.items()}


@pytest.mark.parametrize("chunk", [1, 7, 1 << 20])
def test_an_opened_entry_reads_its_arrays_as_they_are_used(tmp_path, monkeypatch, chunk):
    """An entry opened (a kept report replayed) gives the bytes `get` gives, read from its file
    a chunk at a time, after its checksum was checked the same way."""
    monkeypatch.setattr(caches.FileChunks, "CHUNK", chunk)
    rng = np.random.default_rng(45)
    c = Cache(tmp_path)
    arrays = {"w0": np.frombuffer(rng.bytes(1000), dtype=np.uint8), "v": rng.random((5, 3)),
              "empty": np.zeros(0, dtype=np.uint8)}
    c.put("run", "ab" * 20, {"exit": 1, "s": "text"}, arrays)
    data, got = _opened_bytes(Cache(tmp_path), "run", "ab" * 20)
    header, raw = Cache(tmp_path).get("run", "ab" * 20, raw=True)
    assert data == header == {"exit": 1, "s": "text"}
    assert got == {name: bytes(view) for name, view in raw.items()}
    assert got["w0"] == arrays["w0"].tobytes() and got["empty"] == b""
    assert _opened_bytes(Cache(tmp_path), "run", "cd" * 20) is None  # absent: a miss, no note


@pytest.mark.parametrize("read", ["get", "opened"])
@pytest.mark.parametrize("at", [3, 20, 60, -1])
def test_a_flipped_byte_is_a_miss_with_a_note(tmp_path, at, read):
    c = Cache(tmp_path)
    c.put("run", "cd" * 20, {"x": 1}, {"v": np.ones(10)})
    path = c.path("run", "cd" * 20)
    _flip_byte(path, at)
    again = Cache(tmp_path)
    assert (again.get("run", "cd" * 20) if read == "get" else _opened_bytes(again, "run", "cd" * 20)) is None
    assert len(again.notes) == 1 and str(path) in again.notes[0] and "computed again" in again.notes[0]
    assert not path.exists()  # removed, so the next run writes it anew


@pytest.mark.parametrize("read", ["get", "opened"])
@pytest.mark.parametrize("table", [[["v", ["<f8"], [1], 0, 8]], [["v", "<f8", [1], 4, 8]], [["v", "<f8", [1], -1, 8]],
                                   [["v", "<f8", [1], 0]], "arrays", [["v", "<c16", [1], 0, 8]]])
def test_a_planted_array_table_is_a_miss_with_a_note(tmp_path, read, table):
    """An entry whose checksum holds but whose array table does not fit its bytes (a dtype
    that is no dtype, an array past the end, a row too short): a note, never an exception."""
    from gjkcli.digests import blake3

    c = Cache(tmp_path)
    head = json.dumps({"kind": "run", "key": "cd" * 20, "arrays": table, "data": {"x": 1}}).encode()
    rest = len(head).to_bytes(8, "little") + head + bytes(8)
    path = c.path("run", "cd" * 20)
    path.parent.mkdir(parents=True)
    path.write_bytes(caches._MAGIC + blake3(rest, digest_size=caches._DIGEST).digest() + rest)
    again = Cache(tmp_path)
    assert (again.get("run", "cd" * 20) if read == "get" else _opened_bytes(again, "run", "cd" * 20)) is None
    assert len(again.notes) == 1 and "do not fit" in again.notes[0]


@pytest.mark.parametrize("keep", [0, 5, 45, 60])
def test_a_cut_entry_is_a_miss_with_a_note_when_opened(tmp_path, keep):
    c = Cache(tmp_path)
    c.put("run", "cd" * 20, {"x": 1}, {"v": np.ones(10)})
    path = c.path("run", "cd" * 20)
    path.write_bytes(path.read_bytes()[:keep])
    again = Cache(tmp_path)
    assert _opened_bytes(again, "run", "cd" * 20) is None
    assert len(again.notes) == 1 and "computed again" in again.notes[0] and not path.exists()


def test_an_entry_filed_under_another_key_is_not_believed(tmp_path):
    c = Cache(tmp_path)
    c.put("run", "ee" * 20, {"x": "theirs"})
    planted = c.path("run", "ff" * 20)
    planted.parent.mkdir(parents=True)
    planted.write_bytes(c.path("run", "ee" * 20).read_bytes())  # valid bytes, wrong name
    assert c.get("run", "ff" * 20) is None
    assert "another key" in c.notes[0]


def test_an_entry_is_never_unpickled(tmp_path):
    """An array of objects (what pickle would carry) is refused on write, and a header naming a
    dtype outside the list is refused on read."""
    c = Cache(tmp_path)
    with pytest.raises(TypeError):
        c.put("run", "aa" * 20, {}, {"o": np.array([object()], dtype=object)})
    data = caches.encode({}, {"v": np.ones(2)}, "run", "bb" * 20)
    forged = data.replace(b'"<f8"', b'"|O8"')
    # a forger who also recomputes the checksum still does not get an object array read
    start = len(caches._MAGIC) + caches._DIGEST
    from gjkcli.digests import blake3

    forged = caches._MAGIC + blake3(forged[start:], digest_size=caches._DIGEST).digest() + forged[start:]
    with pytest.raises(caches.CacheError):
        caches.decode(forged, "run", "bb" * 20)
    with pytest.raises(caches.CacheError):
        caches.from_data({"dc": "Popen", "f": {}})


def test_a_report_kept_in_its_chunks_is_the_entry_of_its_bytes(tmp_path):
    """A report recorded as the chunks it was written in is kept without joining them: the
    entry is byte for byte the one of the joined bytes, and reads back as them."""
    pieces = [b'{"pairs": [', memoryview(b"1, 2"), bytearray(b"]}")]
    joined = b"".join(pieces)
    as_chunks = b"".join(caches.encoded({"exit": 1}, {"w0": caches.Chunks(pieces)}, "run", "aa" * 20))
    assert as_chunks == caches.encode({"exit": 1}, {"w0": np.frombuffer(joined, dtype=np.uint8)}, "run", "aa" * 20)
    c = Cache(tmp_path)
    caches.put_run(c, "bb" * 20, 1, [("report.json", pieces), (None, joined)], ["a note"])
    assert caches.get_run(c, "bb" * 20) == (1, [("report.json", joined), (None, joined)], ["a note"])


def test_the_size_limit_drops_the_entries_read_least_recently(tmp_path):
    size = len(caches.encode({}, {"v": np.zeros(400)}, "run", "00" * 20))
    c = Cache(tmp_path, limit=3 * size + 100)  # room for three
    for n in range(6):
        c.put("run", f"{n:02d}" * 20, {}, {"v": np.zeros(400)})  # about 3.3 kB each
        t = time.time() - 100 + n
        os.utime(c.path("run", f"{n:02d}" * 20), (t, t))
    c.get("run", "00" * 20)  # read now: the newest
    assert c.trim() == 3
    left = {p.name[:2] for p in _entries(tmp_path, "run")}
    assert left == {"00", "04", "05"}
    assert sum(p.stat().st_size for p in _entries(tmp_path, "run")) <= c.limit


def test_clear_removes_only_a_gjk_cache(tmp_path):
    c = Cache(tmp_path / "c")
    c.put("run", "aa" * 20, {})
    assert caches.clear(tmp_path / "c") == 1
    assert not (tmp_path / "c").exists()
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "thesis.tex").write_text("keep")
    with pytest.raises(ValueError, match="not a gjk cache"):
        caches.clear(tmp_path / "mine")
    assert (tmp_path / "mine" / "thesis.tex").exists()


def test_a_table_keeps_rows_of_different_shapes(tmp_path):
    c = Cache(tmp_path)
    t = Table(c, "hulls")
    t.put("k1", {"a": 1}, {"v": np.ones((5, 3)), "f": np.zeros((2, 3), dtype=np.int32)})
    t.put("k2", {"a": 2}, {"v": np.full((1, 3), 2.0)})
    t.save()
    again = Table(Cache(tmp_path), "hulls")
    data, arrays = again.get("k1")
    assert data == {"a": 1} and arrays["v"].shape == (5, 3) and arrays["f"].dtype == np.int32
    data, arrays = again.get("k2")
    assert data == {"a": 2} and set(arrays) == {"v"} and arrays["v"][0, 0] == 2.0
    assert again.get("k3") is None


@pytest.mark.parametrize("limit", [1 << 30, 1000])
def test_tables_merge_past_a_number_of_packs(tmp_path, limit):
    """Runs of different files on one folder: past PACKS_MERGED_PAST packs they are merged into
    one, every run's rows with them while the packs take at most TABLE_SHARE of the limit (the
    next run of another file finds its rows), else the rows the merging run used."""
    for n in range(caches.PACKS_MERGED_PAST + 1):
        t = Table(Cache(tmp_path, limit), "pairs")
        t.get("k0")
        t.put(f"k{n + 1}", {"n": n + 1})
        if n == 0:
            t.put("k0", {"n": 0})
        t.save()
    assert len(_entries(tmp_path, "pairs")) == 1  # merged
    t = Table(Cache(tmp_path, limit), "pairs")
    assert t.get("k0") == ({"n": 0}, {}) and t.get(f"k{caches.PACKS_MERGED_PAST + 1}") is not None
    others = [t.get(f"k{n}") for n in range(1, caches.PACKS_MERGED_PAST + 1)]
    if limit == 1000:  # eight packs of a row each take more than a sixteenth of 1,000 bytes
        assert others == [None] * caches.PACKS_MERGED_PAST
    else:
        assert others == [({"n": n}, {}) for n in range(1, caches.PACKS_MERGED_PAST + 1)]


def _answers():
    """Refined answers of every form a run keeps: each certificate, depth or none, NaN, infinity,
    -0.0, the smallest subnormal, an STEP pair's bounds, and fields of types the columns do not
    hold as arrays (a NumPy scalar, a trace), which they keep as data."""
    import dataclasses

    from gjkcli.engine.exact import ExactResult
    from gjkcli.engine.results import (DistanceCertificate, PlaneCertificate, PointCertificate, Result,
                                       ShiftCertificate, Status, TrianglesCertificate)
    from gjkcli.pipeline.tessellated import Bounded

    rng = np.random.default_rng(4406)
    certificates = [None, PointCertificate(point=rng.normal(size=3)),
                    PlaneCertificate(normal=np.array([0.0, -0.0, 1.0]), offset=-0.0),
                    TrianglesCertificate(a=3, b=2 ** 40, point=np.array([5e-324, np.inf, -1.5])),
                    DistanceCertificate(lower=1e-300), ShiftCertificate(shift=rng.normal(size=3), upper=0.0)]
    out = []
    for n in range(60):
        status = list(Status)[n % len(Status)]
        base = dict(status=status, distance=float(rng.uniform()), distance_lower=[-0.0, float("nan"), 0.25][n % 3],
                    depth=None if n % 4 else float(rng.uniform()), normal=rng.normal(size=3),
                    point_a=rng.normal(size=3), point_b=rng.normal(size=3) * 1e9,
                    certificate=certificates[n % len(certificates)], iterations=n, epa_iterations=n % 5,
                    exit=["converged", "a point inside", "separated"][n % 3], epa_exit=None if n % 2 else "bounds met",
                    tolerance=1e-9 * (n + 1), elapsed=float("inf") if n == 7 else 1e-4 * n)
        if n % 3 == 0:
            out.append(Result(**base))
        else:
            exact = ExactResult(**base, solid_a=bool(n % 2), contained=None if n % 5 else "a in b",
                                note="", triangle_a=n, triangle_b=-1, triangle_pairs=n * 7,
                                depth_upper=None if n % 2 else 0.5)
            out.append(Bounded(result=exact, mode="exact", lower=None, upper=float(n)) if n % 3 == 2 else exact)
    out[4] = dataclasses.replace(out[4], iterations=2 ** 70)  # past an int64 column
    out[6] = dataclasses.replace(out[6], distance=np.float64(0.125))  # kept as data: a float, as ever
    out[9] = dataclasses.replace(out[9], trace=())
    return out


def _same(a, b) -> bool:
    return json.dumps(caches.to_data(a)) == json.dumps(caches.to_data(b))


def test_a_runs_results_read_back_bit_for_bit_from_columns(tmp_path):
    """The pairs table keeps a run's answers as columns (`to_columns`): each reads back the value
    it was, field for field, bit for bit (-0.0, NaN, infinities, subnormals, every class), with
    its arrays its own; the pack's header holds no row's numbers as text."""
    values = _answers()
    t = Table(Cache(tmp_path), "pairs")
    for n, v in enumerate(values):
        t.put_value(f"k{n}", v)
    assert t.value("k3") is values[3]  # this run's own, before it is written
    t.save()
    (path,) = _entries(tmp_path, "pairs")
    header, _ = caches.decode(path.read_bytes(), "pairs", path.name)
    assert header["rows"][:2] == [{"@v": 0}, {"@v": 1}] and header["valued"] == len(values)
    by_class = dict(header["values"]["dc"])
    assert by_class["ExactResult"]["distance"] == {"f8": "@v.1.distance"}
    assert "data" in by_class["Result"]["distance"]  # a NumPy scalar among them: kept as data
    again = Table(Cache(tmp_path), "pairs")
    for n, v in enumerate(values):
        back = again.value(f"k{n}")
        assert type(back) is type(v) and _same(back, v), n
        inner, got = (v.result, back.result) if hasattr(v, "result") else (v, back)
        assert type(got.distance) is float and got.point_b.tobytes() == inner.point_b.tobytes()
        assert got.normal.flags.writeable and got.normal.base is None
    assert repr(again.value("k0").distance_lower) == "-0.0" and again.value("k4").iterations == 2 ** 70
    assert again.value("k9").trace == () and again.value("nothing") is None


def test_planted_result_columns_are_not_believed(tmp_path):
    """A pack whose columns do not hold its rows' values (a column cut short, a row naming a value
    past them, an unknown class, fields its class does not have or lacks), though its checksum
    is right: its rows are misses, with a note, never another row's value."""
    values = _answers()[:6]
    t = Table(Cache(tmp_path), "pairs")
    for n, v in enumerate(values):
        t.put_value(f"k{n}", v)
    t.save()
    (path,) = _entries(tmp_path, "pairs")
    header, arrays = caches.decode(path.read_bytes(), "pairs", path.name)

    def planted(change):
        h, a = json.loads(json.dumps(header)), dict(arrays)
        change(h, a)
        path.write_bytes(caches.encode(h, a, "pairs", path.name))
        return Table(Cache(tmp_path), "pairs")

    cut = planted(lambda h, a: a.update({"@v.2.distance": a["@v.2.distance"][:-1]}))
    assert cut.value("k0") is None and any("ignored the entry" in n for n in cut.cache.notes)
    past = planted(lambda h, a: h["rows"].__setitem__(0, {"@v": 6}))
    with pytest.raises(caches.CacheError):
        past.value("k0")
    negative = planted(lambda h, a: h["rows"].__setitem__(0, {"@v": -1}))
    with pytest.raises(caches.CacheError):
        negative.value("k0")
    unknown = planted(lambda h, a: h["values"]["dc"][0].__setitem__(0, "Popen"))
    assert unknown.value("k0") is None and any("Popen" in n for n in unknown.cache.notes)
    # a field the class does not have, or one it needs missing: the whole pack, at once
    extra = planted(lambda h, a: h["values"]["dc"][0][1].__setitem__("planted", {"f8": "@v.2.distance"}))
    assert extra.value("k0") is None and any("fields" in n for n in extra.cache.notes)
    missing = planted(lambda h, a: h["values"]["dc"][0][1].pop("result"))
    assert missing.value("k0") is None and any("fields" in n for n in missing.cache.notes)


def test_a_runs_results_merge_into_one_pack(tmp_path):
    """Past PACKS_MERGED_PAST packs, the values a run used are written again as one pack, read
    back as they were."""
    values = _answers()
    for n in range(caches.PACKS_MERGED_PAST + 1):
        t = Table(Cache(tmp_path), "pairs")
        t.value("k0")
        t.put_value(f"k{n + 1}", values[n + 1])
        if n == 0:
            t.put_value("k0", values[0])
        t.save()
    assert len(_entries(tmp_path, "pairs")) == 1
    t = Table(Cache(tmp_path), "pairs")
    for n in range(caches.PACKS_MERGED_PAST + 2):  # the values other runs kept too
        assert _same(t.value(f"k{n}"), values[n])


def test_a_changed_gjk_version_or_option_misses(monkeypatch):
    one = caches.pair_key(b"common", b"a", b"b", 1e-6, 0.0)
    assert caches.pair_key(b"common", b"a", b"b", 1e-6, 0.1) != one  # clearance
    assert caches.pair_key(b"common", b"a", b"b", 2e-6, 0.0) != one  # band
    monkeypatch.setattr(caches, "_STAMP", ["another version"])
    assert caches.pair_key(b"common", b"a", b"b", 1e-6, 0.0) != one
    assert caches.hull_key((1, 2, b"x"), None) != caches.hull_key((1, 2, b"y"), None)


# -- runs -----------------------------------------------------------------------------------------


def _scene(tmp_path: Path) -> Path:
    """A GLB of a few boxes and spheres, some overlapping, and a non-convex part (triangles asked)."""
    trimesh = pytest.importorskip("trimesh")
    scene = trimesh.Scene()
    rng = np.random.default_rng(45)
    for n in range(12):
        part = trimesh.creation.icosphere(subdivisions=1, radius=0.6) if n % 3 else trimesh.creation.box((1, 1, 1))
        part.apply_translation(rng.uniform(0, 3, 3))
        scene.add_geometry(part, node_name=f"p{n}")
    ring = trimesh.creation.annulus(r_min=0.5, r_max=1.0, height=0.5)
    ring.apply_translation((1.5, 1.5, 1.5))
    scene.add_geometry(ring, node_name="ring")
    path = tmp_path / "scene.glb"
    scene.export(path)
    return path


def _inputs(tmp_path):
    return {"stl": [str(SAMPLES / "pocket_box.stl"), str(SAMPLES / "pocket_cube.stl"), str(SAMPLES / "peg.stl")],
            "glb": [str(_scene(tmp_path))]}


def _count_triangle_tests(monkeypatch) -> list:
    """The pairs each call of the run's triangle test is given, appended as it is called."""
    calls = []
    real = stages.Run._triangles

    def counted(self, parts, i, j, batch, todo):
        calls.append(len(todo))
        return real(self, parts, i, j, batch, todo)

    monkeypatch.setattr(stages.Run, "_triangles", counted)
    return calls


@pytest.mark.parametrize("kind", ["stl", "glb"])
def test_a_cached_scan_is_the_uncached_scan(tmp_path, kind, monkeypatch):
    monkeypatch.setattr(stages, "KEEP_HULLS_FROM_VERTICES", 0)  # the small parts' hulls kept too
    paths = _inputs(tmp_path)[kind]
    plain = _json(scan(paths, Options(together=True, jobs=1)))
    calls = _count_triangle_tests(monkeypatch)
    first = scan(paths, Options(together=True, jobs=1, cache=Cache(tmp_path / "cache")))
    assert _json(first) == plain
    assert sum(calls) > 0  # the scene asks the triangles
    # the second run takes every hull and every triangle answer from the cache
    calls.clear()
    assert any(p["overlap_volume"] for p in json.loads(plain)["pairs"])
    from gjkcli.mesh import overlap

    def no_volume(*a, **k):
        raise AssertionError("an overlap volume was computed again")

    monkeypatch.setattr(overlap, "overlaps", no_volume)
    monkeypatch.setattr(overlap, "overlap", no_volume)
    again = Cache(tmp_path / "cache")
    second = scan(paths, Options(together=True, jobs=1, cache=again))
    assert _json(second) == plain
    assert again.hits >= 2 and not again.notes  # the hulls' pack and the pairs'
    assert sum(calls) == 0


def test_a_cached_step_scan_is_the_uncached_scan(tmp_path, monkeypatch):
    pytest.importorskip("OCP")
    plain = _json(scan([str(STEP)], Options(jobs=1)))
    scan([str(STEP)], Options(jobs=1, cache=Cache(tmp_path)))
    asked = []
    real = stages.Run._bounded

    def counted(self, parts, i, j, batch, clearance, e, todo, scene=None):
        asked.append(len(todo))
        return real(self, parts, i, j, batch, clearance, e, todo, scene)

    monkeypatch.setattr(stages.Run, "_bounded", counted)
    assert _json(scan([str(STEP)], Options(jobs=1, cache=Cache(tmp_path)))) == plain
    assert asked == [0]  # no pair went to the exact solids again


def test_small_hulls_are_made_again_not_kept(tmp_path):
    paths = _inputs(tmp_path)["glb"]  # icospheres of 42 vertices, boxes, a ring
    scan(paths, Options(jobs=1, cache=Cache(tmp_path / "c")))
    assert _entries(tmp_path / "c", "hulls") == []
    assert _entries(tmp_path / "c", "pairs")  # the triangles' answers are kept


def _large_parts(tmp_path: Path, name: str, moved: int | None = None) -> Path:
    """A GLB of six parts of 642 vertices or more (spheres, and rings: not convex), some
    overlapping, part `moved` shifted a little."""
    trimesh = pytest.importorskip("trimesh")
    scene = trimesh.Scene()
    rng = np.random.default_rng(46)
    for n in range(6):
        part = trimesh.creation.icosphere(subdivisions=3, radius=0.6) if n % 2 else \
            trimesh.creation.annulus(r_min=0.4, r_max=0.8, height=0.3, sections=200)
        assert len(part.vertices) > stages.KEEP_HULLS_FROM_VERTICES
        part.apply_translation(rng.uniform(0, 2, 3) + (0.1 if n == moved else 0.0))
        scene.add_geometry(part, node_name=f"p{n}")
    path = tmp_path / name
    scene.export(path)
    return path


def test_a_moved_part_s_hull_alone_is_built_again(tmp_path, monkeypatch):
    """Hulls are kept one per mesh: a re-run with one part moved takes the others' hulls from the
    cache and builds the moved part's only (before, the cache gave hulls back only when it held
    every one, so one moved part built them all again), with the uncached run's JSON."""
    from gjkcli.pipeline import prepared

    before, after = _large_parts(tmp_path, "before.glb"), _large_parts(tmp_path, "after.glb", moved=3)
    plain = _json(scan([str(after)], Options(jobs=1)))
    scan([str(before)], Options(jobs=1, cache=Cache(tmp_path / "c")))
    assert len(_entries(tmp_path / "c", "hulls")) == 1  # a pack of six rows
    built = []
    real = prepared.prepare

    def counted(geometries, **kw):
        geometries = list(geometries)
        built.append(len({id(g) for g in geometries if g.hull is None and g.error is None}))
        return real(geometries, **kw)

    monkeypatch.setattr(prepared, "prepare", counted)
    again = Cache(tmp_path / "c")
    assert _json(scan([str(after)], Options(jobs=1, cache=again))) == plain
    assert built == [1] and not again.notes
    built.clear()  # and the moved part's hull is kept in turn
    assert _json(scan([str(after)], Options(jobs=1, cache=Cache(tmp_path / "c")))) == plain
    assert built == [0]


def test_a_hull_row_missing_a_field_is_built_again_with_a_note():
    from gjkcli.pipeline import prepared

    g = prepared.geometry(np.eye(3).tolist() + [[0.0, 0.0, 0.0]], [[0, 1, 2], [0, 2, 3], [0, 3, 1], [1, 3, 2]])
    prepared.prepare([g])
    data, arrays = caches.hull_row(g)
    fresh = prepared.Geometry(g.vertices, g.faces)
    notes = []
    assert not caches.set_hull(fresh, (data, {k: v for k, v in arrays.items() if k != "adj"}), notes)
    assert fresh.hull is None and "built again" in notes[0]
    assert caches.set_hull(fresh, (data, arrays), notes) and len(notes) == 1
    assert np.array_equal(fresh.hull.vertices, g.hull.vertices) and fresh.gap == g.gap


def test_convexity_reasons_are_kept(tmp_path, monkeypatch):
    """The reason a listed part is not its hull (measured as the report lists objects, about a
    millisecond a part) is kept per part: a re-run with one part moved measures that part's
    only, with the uncached run's JSON; a flipped byte in the kept reasons is a note, and every
    reason is measured again."""
    from gjkcli.mesh import convexity

    measured = []
    real = convexity.part_reasons

    def counted(gaps, which, *rest):
        measured.append(len(which))
        return real(gaps, which, *rest)

    monkeypatch.setattr(convexity, "part_reasons", counted)
    before, after = _large_parts(tmp_path, "before.glb"), _large_parts(tmp_path, "after.glb", moved=2)
    plain = _json(scan([str(after)], Options(jobs=1)))
    assert "fills" in plain  # the rings' reasons are in the report
    (every,) = measured
    assert every >= 2
    _json(scan([str(before)], Options(jobs=1, cache=Cache(tmp_path / "c"))))  # the report measures them
    assert _entries(tmp_path / "c", "reasons")
    measured.clear()
    assert _json(scan([str(after)], Options(jobs=1, cache=Cache(tmp_path / "c")))) == plain
    assert measured == [1]  # the moved ring's
    measured.clear()
    for path in _entries(tmp_path / "c", "reasons"):
        _flip_byte(path)
    found = scan([str(after)], Options(jobs=1, cache=Cache(tmp_path / "c")))
    assert json.loads(_json(found))["objects"] == json.loads(plain)["objects"]
    assert measured == [every] and any("cache: ignored the entry" in n for n in found.notes)


def test_a_changed_clearance_misses_the_pairs(tmp_path, monkeypatch):
    paths = _inputs(tmp_path)["glb"]
    scan(paths, Options(jobs=1, cache=Cache(tmp_path / "c")))
    calls = _count_triangle_tests(monkeypatch)
    found = scan(paths, Options(jobs=1, clearance=0.05, mode="exact", cache=Cache(tmp_path / "c")))
    assert sum(calls) > 0
    assert _json(found) == _json(scan(paths, Options(jobs=1, clearance=0.05, mode="exact")))


@pytest.mark.parametrize("kind", ["hulls", "pairs", "overlaps"])
def test_a_flipped_byte_in_a_table_is_ignored_with_a_note(tmp_path, kind, monkeypatch):
    monkeypatch.setattr(stages, "KEEP_HULLS_FROM_VERTICES", 0)  # the small parts' hulls kept too
    paths = _inputs(tmp_path)["glb"]
    plain = json.loads(_json(scan(paths, Options(jobs=1, mode="exact"))))
    scan(paths, Options(jobs=1, mode="exact", cache=Cache(tmp_path / "c")))
    entries = _entries(tmp_path / "c", kind)
    assert len(entries) == 1
    _flip_byte(entries[0], 100)
    got = json.loads(_json(scan(paths, Options(jobs=1, mode="exact", cache=Cache(tmp_path / "c")))))
    notes = [n for n in got["notes"] if n.startswith("cache: ignored")]
    assert len(notes) == 1 and str(entries[0]) in notes[0]
    got["notes"] = [n for n in got["notes"] if n not in notes]
    assert got == plain  # computed again, the same answers


def _arm_tables(tmp_path, count=200, new=20):
    return arm_tables(tmp_path, count, new, seed=45)


def _arm_options(table, **more):
    from gjkcli.scene.urdf import RobotOptions

    return Options(robot=RobotOptions(poses=str(table)), jobs=1, **more)


def _counted_poses(monkeypatch) -> list:
    """The number of poses each call of the prepared path's computation is given."""
    from gjkcli.pipeline.poses import Prepared

    computed = []
    real = Prepared._chunk

    def counted(self, Q, first):
        computed.append(len(Q))
        return real(self, Q, first)

    monkeypatch.setattr(Prepared, "_chunk", counted)
    return computed


def test_poses_seen_before_are_taken_from_the_cache(tmp_path, monkeypatch):
    """The arm's poses cost a fraction of a millisecond each, as the Panda's: the cache keeps
    them all the same (the clear ones as a mark, the others' findings as data), and a table
    run again with 20 of its 200 poses new computes those 20 only."""
    before, after = _arm_tables(tmp_path)
    urdf = [str(SAMPLES / "robot" / "arm.urdf")]
    plain = _json(scan(urdf, _arm_options(after)))
    assert '"waypoint"' in plain  # some poses collide
    scan(urdf, _arm_options(before, cache=Cache(tmp_path / "c")))
    assert len(_entries(tmp_path / "c", "poses")) == 1  # one entry for the robot and options
    computed = _counted_poses(monkeypatch)
    assert _json(scan(urdf, _arm_options(after, cache=Cache(tmp_path / "c")))) == plain
    assert sum(computed) == 20  # the new poses only
    # both tables' poses are kept: the first table again computes nothing
    computed.clear()
    assert _json(scan(urdf, _arm_options(before, cache=Cache(tmp_path / "c")))) \
        == _json(scan(urdf, _arm_options(before)))
    assert sum(computed) == 200
    computed.clear()
    scan(urdf, _arm_options(before, cache=Cache(tmp_path / "c")))
    assert sum(computed) == 0
    # a flipped byte in the poses' entry: ignored with a note, every pose computed again
    for entry in _entries(tmp_path / "c", "poses"):
        _flip_byte(entry, 200)
    computed.clear()
    got = json.loads(_json(scan(urdf, _arm_options(after, cache=Cache(tmp_path / "c")))))
    notes = [n for n in got["notes"] if n.startswith("cache: ignored the entry")]
    assert notes and sum(computed) == 200
    got["notes"] = [n for n in got["notes"] if n not in notes]
    assert got == json.loads(plain)


def test_the_poses_kept_are_bounded_latest_first(tmp_path, monkeypatch):
    from gjkcli.pipeline import poses

    monkeypatch.setattr(poses, "POSES_KEPT", 250)
    before, after = _arm_tables(tmp_path, new=100)
    urdf = [str(SAMPLES / "robot" / "arm.urdf")]
    scan(urdf, _arm_options(before, cache=Cache(tmp_path / "c")))
    scan(urdf, _arm_options(after, cache=Cache(tmp_path / "c")))  # 300 poses seen: 250 kept
    computed = _counted_poses(monkeypatch)
    scan(urdf, _arm_options(after, cache=Cache(tmp_path / "c")))
    assert sum(computed) == 0  # the latest run's poses come first
    scan(urdf, _arm_options(before, cache=Cache(tmp_path / "c")))
    assert sum(computed) == 50  # of the first table's 100 poses the second had not, 50 were dropped


def test_a_poses_entry_that_does_not_fit_is_ignored_with_a_note(tmp_path, monkeypatch):
    """An entry whose checksum holds but whose arrays do not fit one another (written by another
    gjk, or planted with a checksum made for it) is not believed."""
    before, _ = _arm_tables(tmp_path)
    urdf = [str(SAMPLES / "robot" / "arm.urdf")]
    plain = json.loads(_json(scan(urdf, _arm_options(before))))
    scan(urdf, _arm_options(before, cache=Cache(tmp_path / "c")))
    entry = _entries(tmp_path / "c", "poses")[0]
    c = Cache(tmp_path / "c")
    header, arrays = c.get("poses", entry.name)
    arrays = dict(arrays)
    arrays["at"] = np.full(len(arrays["at"]), 10 ** 6, dtype=np.int64)  # data that is not there
    c.put("poses", entry.name, header, arrays)
    computed = _counted_poses(monkeypatch)
    got = json.loads(_json(scan(urdf, _arm_options(before, cache=Cache(tmp_path / "c")))))
    notes = [n for n in got["notes"] if n.startswith("cache: ignored the entry")]
    assert len(notes) == 1 and sum(computed) == 200
    got["notes"] = [n for n in got["notes"] if n not in notes]
    assert got == plain


def _counted_kinematics(monkeypatch) -> list:
    """The number of poses each call of the robots' forward kinematics is given."""
    from gjkcli.scene.urdf import Robot

    return spy.calls(monkeypatch, Robot, "fk", lambda self, q: len(q))


def test_only_the_new_poses_reach_forward_kinematics(tmp_path, monkeypatch):
    """A pose is kept under its joint values: a table run again with 20 of its 200 poses new
    computes the link frames of those 20 (and of the first pose, for the object records), and
    writes a pack of those 20 beside the first run's instead of every pose again."""
    before, after = _arm_tables(tmp_path)
    urdf = [str(SAMPLES / "robot" / "arm.urdf")]
    plain = _json(scan(urdf, _arm_options(after)))
    scan(urdf, _arm_options(before, cache=Cache(tmp_path / "c")))
    fk = _counted_kinematics(monkeypatch)
    assert _json(scan(urdf, _arm_options(after, cache=Cache(tmp_path / "c")))) == plain
    assert max(fk) == 20 and sum(fk) - 20 <= 2  # the new poses in one call; the first pose
    c = Cache(tmp_path / "c")
    held = sorted(c.get("poses", e.name)[0]["poses"] for e in _entries(tmp_path / "c", "poses"))
    assert held == [20, 200]


def test_a_robot_whose_joints_changed_misses_its_poses(tmp_path, monkeypatch):
    """The same elements, names and joint values, but a joint placed elsewhere in the URDF:
    every link frame differs, so no pose is taken from the cache."""
    before, _ = _arm_tables(tmp_path)
    urdf = tmp_path / "arm.urdf"
    text = (SAMPLES / "robot" / "arm.urdf").read_text()
    urdf.write_text(text)
    scan([str(urdf)], _arm_options(before, cache=Cache(tmp_path / "c")))
    assert '<origin xyz="0.5 0 0"/>' in text
    urdf.write_text(text.replace('<origin xyz="0.5 0 0"/>', '<origin xyz="0.3 0 0"/>'))  # the elbow
    plain = _json(scan([str(urdf)], _arm_options(before)))
    computed = _counted_poses(monkeypatch)
    assert _json(scan([str(urdf)], _arm_options(before, cache=Cache(tmp_path / "c")))) == plain
    assert sum(computed) == 200


def test_a_robots_packs_are_merged_when_the_slots_are_full(tmp_path, monkeypatch):
    """Each run with new poses writes a pack; with every slot taken, the next writes one pack
    of all it keeps and removes the others, and every pose seen is still taken back."""
    from gjkcli.pipeline import poses

    monkeypatch.setattr(poses, "POSE_PACKS", 3)
    urdf = [str(SAMPLES / "robot" / "arm.urdf")]
    tables = []
    for n in range(4):  # 4 tables of 50 poses, none seen before
        rng = np.random.default_rng(n)
        table = tmp_path / f"t{n}.csv"
        table.write_text("shoulder,elbow\n" + "".join(f"{a!r},{b!r}\n" for a, b in
                                                     rng.uniform([-3.1, -2.4], [3.1, 2.4], size=(50, 2)).tolist()))
        tables.append(table)
        scan(urdf, _arm_options(table, cache=Cache(tmp_path / "c")))
        assert len(_entries(tmp_path / "c", "poses")) == (n + 1 if n < 3 else 1)
    computed = _counted_poses(monkeypatch)
    for table in tables:
        assert _json(scan(urdf, _arm_options(table, cache=Cache(tmp_path / "c")))) \
            == _json(scan(urdf, _arm_options(table)))
    assert sum(computed) == 4 * 50  # the --no-cache runs' only


def test_only_the_ifc_elements_that_changed_are_meshed_again(tmp_path, monkeypatch):
    ifcopenshell = pytest.importorskip("ifcopenshell")
    import ifcopenshell.api
    import ifcopenshell.util.placement

    from gjkcli.mesh import ifc

    model = ROOT / "tests" / "data" / "third_party" / "project0-openings.ifc"
    f = ifcopenshell.open(str(model))
    walls = [e for e in f.by_type("IfcWall") if e.ObjectPlacement is not None]
    m = ifcopenshell.util.placement.get_local_placement(walls[0].ObjectPlacement).copy()
    m[:3, 3] += (0.3, 0.0, 0.0)
    ifcopenshell.api.run("geometry.edit_object_placement", f, product=walls[0], matrix=m, is_si=False)
    moved = tmp_path / "moved.ifc"
    f.write(str(moved))
    plain = _json(scan([str(moved)], Options(jobs=1)))
    scan([str(model)], Options(jobs=1, cache=Cache(tmp_path / "c")))
    # the meshing happens in a forked reader: it tells how many elements it meshed in a file
    told = tmp_path / "meshed.txt"
    real = ifc._iterator

    def counted(geom, settings, model, elements):
        with open(told, "a") as out:
            out.write(f"{len(elements)}\n")
        return real(geom, settings, model, elements)

    monkeypatch.setattr(ifc, "_iterator", counted)
    same = _json(scan([str(model)], Options(jobs=1, cache=Cache(tmp_path / "c"))))
    assert not told.exists()  # nothing meshed
    assert same == _json(scan([str(model)], Options(jobs=1)))
    told.unlink()
    assert _json(scan([str(moved)], Options(jobs=1, cache=Cache(tmp_path / "c")))) == plain
    # the moved wall, and the elements whose placements are relative to it (its openings' fillers)
    meshed = sum(int(line) for line in told.read_text().split())
    total = len([e for e in f.by_type("IfcElement") if e.Representation is not None
                 and not e.is_a("IfcFeatureElement")])
    assert 1 <= meshed < total / 2, (meshed, total)
    # a flipped byte in the elements' packs: ignored with a note, the elements meshed again
    for entry in _entries(tmp_path / "c", "ifc"):
        _flip_byte(entry, 300)
    got = json.loads(_json(scan([str(moved)], Options(jobs=1, cache=Cache(tmp_path / "c")))))
    notes = [n for n in got["notes"] if n.startswith("cache: ignored the entry")]
    assert notes
    got["notes"] = [n for n in got["notes"] if n not in notes]
    assert got == json.loads(plain)


def test_a_moved_opening_of_an_aggregate_meshes_its_parts_again(tmp_path):
    """IfcOpenShell cuts an aggregate's openings from its parts (duplex.ifc's skylight openings
    void its IfcRoof, and cut the roof's slab): an element's key holds the openings of every
    aggregate it is a part of, so that a slab whose roof's opening moved is meshed again. Here
    a column stands in the opening of a roof over its slab; the opening moved, the column meets
    the slab, and the cached run says so as a run without the cache does."""
    pytest.importorskip("ifcopenshell")
    import ifcopenshell
    import ifcopenshell.api as api
    import ifcopenshell.util.placement
    from ifc_models import Box, write_model

    path = write_model(tmp_path / "roof.ifc", [
        Box("IfcSlab", "Slab", (0, 0, 3000), (4000, 4000, 200)),
        Box("IfcRoof", "Roof", (0, 0, 3000), (4000, 4000, 200), body=None),
        Box("IfcOpeningElement", "Skylight", (1500, 1500, 2900), (1000, 1000, 400), voids="Roof"),
        Box("IfcColumn", "Column", (1900, 1900, 2500), (200, 200, 1000))])
    f = ifcopenshell.open(str(path))
    named = {e.Name: e for e in f.by_type("IfcProduct")}
    api.run("aggregate.assign_object", f, relating_object=named["Roof"], products=[named["Slab"]])
    f.write(str(path))
    opening = named["Skylight"]
    m = ifcopenshell.util.placement.get_local_placement(opening.ObjectPlacement).copy()
    m[:3, 3] += (1000.0, 0.0, 0.0)
    api.run("geometry.edit_object_placement", f, product=opening, matrix=m, is_si=False)
    moved = tmp_path / "moved.ifc"
    f.write(str(moved))

    def statuses(found) -> dict:
        return {(p["a"].split("'")[1], p["b"].split("'")[1]): p["status"] for p in json.loads(_json(found))["pairs"]}

    assert ("Slab", "Column") not in statuses(scan([str(path)], Options(jobs=1, cache=Cache(tmp_path / "c"))))
    plain = _json(scan([str(moved)], Options(jobs=1)))
    assert statuses(scan([str(moved)], Options(jobs=1)))[("Slab", "Column")] == "collision"
    assert _json(scan([str(moved)], Options(jobs=1, cache=Cache(tmp_path / "c")))) == plain


def test_a_result_reads_back_equal_through_json_with_nan_and_infinity(tmp_path):
    """`to_data` and `from_data` through the poses' JSON text: orjson's, but Python's json for NaN,
    infinities (which orjson writes as null and does not read) and integers past 64 bits."""
    import dataclasses

    from gjkcli.engine.results import PointCertificate, Result, Status
    from gjkcli.pipeline.findings import Finding
    from gjkcli.pipeline.poses import _dumps, _loads

    result = Result(status=Status.CLEAR, distance=float("inf"), distance_lower=float("nan"), depth=None,
                    normal=np.array([0.1, 0.2, 0.3]), point_a=np.array([1e-300, -0.0, 5e-324]),
                    point_b=np.zeros(3), certificate=PointCertificate(point=np.array([1.0, 2.0, 3.0])),
                    iterations=3, epa_iterations=0, exit="converged", epa_exit=None,
                    tolerance=1e-9)
    found = Finding(a="a", b="b", result=result, waypoint=7, key=("f", "a", "b"))
    finite = Finding(a="a", b="b", result=dataclasses.replace(result, distance=0.5, distance_lower=-0.0))
    for value in (found, (found, {"clear": 3}, 4), finite, (finite, 2 ** 70)):
        text = _dumps(caches.to_data(value))
        assert (b"NaN" in text or b"Infinity" in text or b"1180591620717411303424" in text) == (value is not finite)
        back = caches.from_data(_loads(text))
        assert json.dumps(caches.to_data(back)) == json.dumps(caches.to_data(value))
    assert repr(caches.from_data(_loads(_dumps(caches.to_data(finite)))).result.distance_lower) == "-0.0"
    back = caches.from_data(_loads(_dumps(caches.to_data(found))))
    assert type(back) is Finding and type(back.result) is Result and back.key == ("f", "a", "b")
    assert np.isnan(back.result.distance_lower) and back.result.distance == float("inf")
    assert back.result.point_a.tobytes() == result.point_a.tobytes()
    # a field the class does not have: not believed
    data = caches.to_data(found)
    data["f"]["planted"] = 1
    with pytest.raises(caches.CacheError):
        caches.from_data(data)


def test_the_pandas_poses_run_again_compute_the_new_ones_only(panda_package, tmp_path, monkeypatch):
    """400 random Panda poses with its SRDF (about one in six collides, answered on the
    triangles), then the table with 40 rows new: the cached run computes those 40, and its JSON
    is the --no-cache run's byte for byte (the findings' certificates and witness points read
    back as they were computed)."""
    from gjkcli.report.jsonout import encoded
    from gjkcli.scene import urdf

    path = panda_package / "urdf" / "panda.urdf"
    robot = urdf.load(path)
    rng = np.random.default_rng(45)
    Q = rng.uniform(robot.lower, robot.upper, size=(400, robot.dof))
    before, after = tmp_path / "before.csv", tmp_path / "after.csv"

    def table(out, rows):
        out.write_text(",".join(robot.variables) + "\n" + "".join(",".join(map(repr, q)) + "\n" for q in rows.tolist()))

    table(before, Q)
    Q[rng.choice(400, size=40, replace=False)] = rng.uniform(robot.lower, robot.upper, size=(40, robot.dof))
    table(after, Q)

    def options(poses, **more):
        return Options(robot=urdf.RobotOptions(srdf=str(panda_package / "urdf" / "panda.srdf"), poses=str(poses)),
                       jobs=1, **more)

    def report(found) -> bytes:
        return b"".join(encoded(found, timings=False))

    plain = report(scan([str(path)], options(after)))
    assert plain.count(b'"mode":"exact"') > 20  # findings on the triangles, with their certificates
    scan([str(path)], options(before, cache=Cache(tmp_path / "c")))
    computed = _counted_poses(monkeypatch)
    assert report(scan([str(path)], options(after, cache=Cache(tmp_path / "c")))) == plain
    assert sum(computed) == 40


def test_a_part_placing_a_shared_mesh_is_keyed_apart_from_the_same_triangles_in_the_world():
    """The triangle test reads a part that places a mesh others place too (an Instance) as that
    mesh and its pose (`Parts.placed_body`): its hierarchy visits other boxes, and its answer's
    last bits may differ, from the same triangles read where they lie. A pair's kept answer is
    therefore keyed by the mesh and pose as well: an IFC map placed by one element less, which
    is then meshed in the world, or a glTF mesh no longer shared, is not given the answers of
    the placed one."""
    from types import SimpleNamespace

    from gjkcli.mesh.load import Instance
    from gjkcli.pipeline.cache import PartKeys

    local = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], dtype=float)
    faces = np.array([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]], dtype=np.int64)
    pose = np.eye(4)
    pose[:3, 3] = (2.0, 3.0, 4.0)
    world = local + pose[:3, 3]
    common = dict(name="a", units="m", eps=0.0, watertight=True, bodies=1, brep=None, primitive=None,
                  vertices=world, faces=faces)
    placed = SimpleNamespace(**common, instance=Instance(key=("map", 0), local=local, pose=pose))
    alone = SimpleNamespace(**common, instance=None)
    keys = PartKeys([placed, alone], [None, None])
    assert keys[0] != keys[1]
    assert PartKeys([placed], [None])[0] == keys[0]  # the same part, the same key
    moved = np.eye(4)
    moved[:3, 3] = (2.0, 3.0, 4.5)
    other = SimpleNamespace(**common, instance=Instance(key=("map", 0), local=local - (0, 0, 0.5), pose=moved))
    assert PartKeys([other], [None])[0] != keys[0]  # the same world triangles, another split
