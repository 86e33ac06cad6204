"""--all-pairs listings of many pairs: the plain pairs are rows of the run's arrays
(`gjkcli.pipeline.streamed`, `gjkcli.pipeline.findings.ListedPairs`), made Findings only as a
report reads them.

The oracle is the same run with every pair a Finding (the listing below `STREAM_FROM`, as
before): the same JSON byte for byte. The memory is tracemalloc's (NumPy's arrays included): the
run and its JSON written to a file cost at most a fixed number of bytes a pair (the slope between
two sizes of one scene), and writing the JSON holds a fixed amount whatever the pair count.
"""
from __future__ import annotations

import importlib.util
import tracemalloc
from pathlib import Path

import pytest

from gjkcli.engine.results import Status
from gjkcli.pipeline import run as pipeline
from gjkcli.pipeline import streamed
from gjkcli.pipeline.findings import ListedPairs
from gjkcli.report.jsonout import encoded

ROOT = Path(__file__).resolve().parents[2]

# What a listed plain pair may cost the run's client at most, bytes (the run's arrays: the hulls'
# answers, 172 bytes, the pairs, their statuses and order, and the narrow phase's chunks while
# they are joined); a Finding per pair cost about 1,900.
BYTES_PER_PAIR = 700
# What writing the JSON may hold beyond the findings, whatever the number of pairs.
WRITER_BYTES = 16 << 20


def make_scene(parts: int, path: Path) -> Path:
    spec = importlib.util.spec_from_file_location("make_scan_scene", ROOT / "scripts" / "make_scan_scene.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return Path(module.make(parts, path, seed=7))


@pytest.fixture(scope="module")
def scenes(tmp_path_factory):
    folder = tmp_path_factory.mktemp("listing")
    return {n: make_scene(n, folder / f"s{n}.glb") for n in (120, 240)}


def written(found, path: Path) -> bytes:
    with open(path, "wb") as f:
        for chunk in encoded(found, timings=False):
            f.write(chunk)
    return path.read_bytes()


@pytest.mark.parametrize("options", [
    dict(clearance=2.0, fail_on=("collision",)),  # clearance pairs plain, collisions notable
    dict(clearance=2.0),  # clearance pairs are violations: notable
    dict(clearance=2.0, tolerance=0.05, fail_on=("collision",)),  # touching pairs too
    dict(clearance=2.0, mode="exact", fail_on=("collision",)),  # pairs refined on the triangles
])
def test_plain_rows_give_the_json_of_findings(scenes, options, tmp_path, monkeypatch):
    path = scenes[120]
    opts = pipeline.Options(jobs=1, all_pairs=True, **options)
    rows = pipeline.scan([path], opts)
    monkeypatch.setattr(streamed, "STREAM_FROM", 10 ** 12)
    made = pipeline.scan([path], opts)
    assert isinstance(rows.pairs, ListedPairs) and not isinstance(made.pairs, ListedPairs)
    assert rows.pairs.plain > 1000
    assert written(rows, tmp_path / "rows.json") == written(made, tmp_path / "made.json")
    def names(pairs):
        return [(p.a, p.b, p.status, p.violation) for p in pairs]

    assert names(rows.pairs) == names(made.pairs) and rows.exit_code == made.exit_code
    assert names(rows.failures) == names(made.failures) and rows.modes == made.modes
    assert names(rows.pairs[5:40]) == names(made.pairs[5:40]) and rows.pairs[-1].a == made.pairs[-1].a
    statuses = {p.status for p in made.pairs}
    assert {Status.CLEAR, Status.CLEARANCE} <= statuses


def client_bytes(path: Path, out: Path, **options) -> tuple[int, int, int]:
    """(pairs listed, tracemalloc's peak over the run and its JSON written, the JSON's writing
    peak beyond what was held before it)."""
    tracemalloc.start()
    try:
        found = pipeline.scan([path], pipeline.Options(all_pairs=True, clearance=1000.0,
                                                       fail_on=("collision",), **options))
        held, _ = tracemalloc.get_traced_memory()
        with open(out, "wb") as f:
            for chunk in encoded(found, timings=False):
                f.write(chunk)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        with open(out, "wb") as f:
            for chunk in encoded(found, timings=False):
                f.write(chunk)
        _, writing = tracemalloc.get_traced_memory()
        return len(found.pairs), peak, writing - held
    finally:
        tracemalloc.stop()


def test_a_listing_costs_a_bounded_number_of_bytes_a_pair(scenes, tmp_path):
    small = client_bytes(scenes[120], tmp_path / "small.json", jobs=1)
    large = client_bytes(scenes[240], tmp_path / "large.json", jobs=1)
    assert (small[0], large[0]) == (120 * 119 // 2, 240 * 239 // 2)
    per_pair = (large[1] - small[1]) / (large[0] - small[0])
    assert per_pair < BYTES_PER_PAIR, f"{per_pair:.0f} bytes a pair"
    assert small[2] < WRITER_BYTES and large[2] < WRITER_BYTES


def rows_and_made(path: Path, options: dict, monkeypatch) -> tuple:
    """(the scan listing rows, the same scan with a Finding a pair): `options` with
    overlaps=N as the overlap volumes' limit."""
    from gjkcli import limits

    options = dict(options)
    cap = options.pop("overlaps", None)
    if cap is not None:
        options["limits"] = limits.Limits(overlap_volumes=cap)
    opts = pipeline.Options(jobs=1, **options)
    monkeypatch.setattr(streamed, "STREAM_FROM", 10)
    rows = pipeline.scan([path], opts)
    monkeypatch.setattr(streamed, "STREAM_FROM", 10 ** 12)
    made = pipeline.scan([path], opts)
    assert isinstance(rows.pairs, ListedPairs) and not isinstance(made.pairs, ListedPairs)
    return rows, made


def same_answers(rows, made) -> None:
    """The two scans' pairs, failures, exit codes and counts are the same."""
    def names(pairs):
        return [(p.a, p.b, p.status, p.violation, p.mode, p.overlap_volume, p.overlap_reason) for p in pairs]

    assert names(rows.pairs) == names(made.pairs) and rows.exit_code == made.exit_code == 1
    assert names(rows.failures) == names(made.failures) and rows.failure_count == len(made.failures)
    assert rows.modes == made.modes and rows.violations == made.violations and rows.counts == made.counts
    assert names(rows.pairs[3:30]) == names(made.pairs[3:30])


@pytest.mark.parametrize("options", [
    dict(mode="exact"),  # collisions the triangles prove: rows that fail, each with its volume
    dict(mode="exact", clearance=2.0, overlaps=20),  # past the volumes' limit: noted as the report reads them
    dict(mode="exact", clearance=2.0, fail_on=("collision",), all_pairs=True, overlaps=20, shown=40),
    dict(mode="exact", tolerance=0.05, overlaps=0),  # touching within the band; no volume asked
    dict(mode="auto", tolerance=0.05),  # the triangles only where the hulls cannot answer
])
def test_pairs_the_triangles_answer_are_rows_with_the_json_of_findings(scenes, options, tmp_path, monkeypatch):
    """A listing of pairs the triangle test answered keeps them as rows whatever their verdict
    (collisions counted as violations by their facts, given their overlap volumes or the
    limit's note as the report reads them): the JSON, the exit code, the failures and the
    summary's counts are those of the same run with a Finding a pair."""
    rows, made = rows_and_made(scenes[120], options, monkeypatch)
    if options["mode"] == "exact":
        assert rows.pairs.exact_rows > 50 and rows.pairs.row_violations > 50
    assert written(rows, tmp_path / "rows.json") == written(made, tmp_path / "made.json")
    same_answers(rows, made)
    if options.get("overlaps"):
        reasons = [p.overlap_reason for p in made.pairs if p.overlap_volume is None and p.status.value == "collision"]
        assert any(r and "deepest collisions" in r for r in reasons)


@pytest.mark.parametrize("options", [
    dict(mode="hull"),  # the hulls' collisions: rows that fail, each with its volume
    dict(clearance=2.0, all_pairs=True, overlaps=20, shown=40),  # past the volumes' limit, and not shown
    dict(clearance=2.0, fail_on=("clearance",)),  # collisions listed but not failing; clearance fails
    dict(clearance=2.0, tolerance=0.05, fail_on=("touching",)),  # touching fails, its band wide
    dict(clearance=2.0, tolerance=0.05, fail_on=("clearance",), overlaps=0),  # touching fails a clearance
])
def test_collisions_the_hulls_answer_are_rows_with_the_json_of_findings(scenes, options, tmp_path, monkeypatch):
    """A listing of many pairs keeps the hulls' violations as rows too (convex parts: a
    collision, a gap under the clearance, parts touching), none of them a Finding until a report
    reads it: the JSON, the exit code, the failures and the counts are those of the same run with
    a Finding a pair, whatever fails the run."""
    rows, made = rows_and_made(scenes[120], options, monkeypatch)
    assert not rows.pairs.notable and rows.pairs.exact_rows == 0  # every pair a row of the hulls' answers
    assert sum(p.status is Status.COLLISION for p in made.pairs) > 50 and rows.failure_count > 5
    assert written(rows, tmp_path / "rows.json") == written(made, tmp_path / "made.json")
    same_answers(rows, made)


def test_a_row_given_its_overlap_volume_keeps_the_volume_not_a_finding(scenes, monkeypatch):
    """The overlap stage of a listing of rows measures the first collisions from their rows'
    objects and statuses (`ListedPairs.overlap_pairs`), no Finding made, then keeps of each only
    what it adds (its volume, reason and solid), set on the row as a report makes it: once the
    scan is done no Finding of it is alive but its notable ones (the Great Court roof's
    thousand measured collisions, each with its answer, were a Dask client's largest holding
    after the refinement's)."""
    import gc

    from gjkcli.pipeline import stages
    from gjkcli.pipeline.findings import Finding

    def alive() -> int:
        gc.collect()
        return sum(1 for o in gc.get_objects() if type(o) is Finding)

    made = []
    finding = stages.Run._finding

    def counted(self, *args, **kwargs):
        made.append(args[0])
        return finding(self, *args, **kwargs)

    monkeypatch.setattr(stages.Run, "_finding", counted)
    monkeypatch.setattr(streamed, "STREAM_FROM", 10)
    before = alive()
    found = pipeline.scan([scenes[120]], pipeline.Options(jobs=1, mode="hull"))
    assert isinstance(found.pairs, ListedPairs) and alive() - before == len(found.pairs.notable)
    assert len(made) == len(found.pairs.notable)  # a row's Finding made by the report alone
    volumes = [p.overlap_volume for p in found.pairs if p.status is Status.COLLISION]
    assert len(volumes) > 50 and all(v is not None and v > 0 for v in volumes)


def test_lazy_records_read_in_order_are_let_go_and_read_by_index_are_kept():
    """A report listing the objects iterates the records: each is made and let go (a report of
    many objects holds one at a time); a record read by its index is kept, and iterating then
    gives that one."""
    from gjkcli.pipeline.findings import LazyRecords

    calls = []

    def make(k):
        calls.append(k)
        return ("record", k)

    records = LazyRecords(5, make)
    assert list(records) == [("record", k) for k in range(5)] and calls == [0, 1, 2, 3, 4]
    kept = records[3]
    assert list(records) == [("record", k) for k in range(5)] and calls == [0, 1, 2, 3, 4, 3, 0, 1, 2, 4]
    assert records[3] is kept and tuple(records) == tuple(("record", k) for k in range(5))


def test_the_json_reads_an_objects_record_only_for_a_pair_that_is_their_hulls(scenes, tmp_path, monkeypatch):
    """Writing a pair reads its objects' records (kept once read) only where its note needs them:
    a hull's answer standing for parts that are not their hulls. A scan of convex parts then
    writes its JSON without keeping a record per object; the bytes are those of every record
    read."""
    from gjkcli.pipeline.findings import Findings

    found = pipeline.scan([scenes[120]], pipeline.Options(jobs=1, clearance=2.0))
    assert len(found.pairs) > 50 and not any(p.conservative for p in found.pairs)
    read = []
    real = Findings.object
    monkeypatch.setattr(Findings, "object", lambda self, name: read.append(name) or real(self, name))
    lean = written(found, tmp_path / "lean.json")
    assert read == []
    monkeypatch.setattr(Findings, "object", lambda self, name: real(self, name))
    import gjkcli.report.jsonout as jsonout

    conservative = [p.but(conservative=True) for p in found.pairs[:3]]
    assert all(jsonout.pair_dict(p, found)["note"] for p in conservative)  # the hulls' caveat, named
    assert lean == written(found, tmp_path / "again.json")
