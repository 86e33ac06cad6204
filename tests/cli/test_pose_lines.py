"""A robot's `--poses` JSON report with the cache: the kept poses' lines are spliced into the
report (`gjkcli.report.poselines`), never decoded, and the report is the uncached run's byte for
byte, whichever run filled the cache. Every cache is in tmp_path."""
from __future__ import annotations

import json
from pathlib import Path

from armtables import arm_tables
from click.testing import CliRunner

from gjkcli.cli import main

ROOT = Path(__file__).resolve().parents[2]
ARM = ROOT / "samples" / "robot" / "arm.urdf"


def _gjk(*args) -> tuple[int, str]:
    got = CliRunner(catch_exceptions=False).invoke(main, [str(a) for a in args])
    return got.exit_code, got.output


def _tables(tmp_path: Path, count: int = 200, new: int = 20) -> tuple[Path, Path]:
    """(before.csv, after.csv): `count` random poses of the sample arm, then `new` of them new."""
    return arm_tables(tmp_path, count, new, seed=46)


def _json(table: Path, *cache) -> tuple[int, str]:
    return _gjk("scan", ARM, "--poses", table, "--format", "json", *cache)


def _counted(monkeypatch) -> dict:
    """How many poses' findings are decoded and how many poses computed."""
    from gjkcli.pipeline import cache, poses

    seen = {"decoded": 0, "computed": 0}
    decode, chunk = cache.from_data, poses.Prepared._chunk

    def decoded(*args, **kwargs):
        seen["decoded"] += 1
        return decode(*args, **kwargs)

    def computed(self, Q, first):
        seen["computed"] += len(Q)
        return chunk(self, Q, first)

    monkeypatch.setattr(cache, "from_data", decoded)
    monkeypatch.setattr(poses.Prepared, "_chunk", computed)
    return seen


def test_kept_poses_lines_are_spliced_byte_for_byte(tmp_path, monkeypatch):
    before, after = _tables(tmp_path)
    plain = _json(after, "--no-cache")
    assert plain[0] == 1 and json.loads(plain[1])["pairs"]  # some poses collide
    assert _json(before, "--cache-dir", tmp_path / "c")[0] == 1
    seen = _counted(monkeypatch)
    assert _json(after, "--cache-dir", tmp_path / "c") == plain
    assert seen == {"decoded": 0, "computed": 20}  # the new poses only, the kept ones' lines taken


def test_kept_lines_that_do_not_fit_the_findings_are_left_for_a_whole_scan(tmp_path, monkeypatch):
    """Where the kept lines do not fit the run's findings (`PoseLines.spliced` gives None), the
    poses are scanned again without them: the report is still the uncached run's."""
    from gjkcli.report.poselines import PoseLines

    before, after = _tables(tmp_path)
    plain = _json(after, "--no-cache")
    _json(before, "--cache-dir", tmp_path / "c")
    asked = []
    monkeypatch.setattr(PoseLines, "spliced", lambda self, found: asked.append(found))
    assert _json(after, "--cache-dir", tmp_path / "c") == plain
    assert len(asked) == 1


def test_a_cache_a_table_run_filled_gives_the_same_json(tmp_path, monkeypatch):
    """Poses kept by a run that wrote no JSON hold no lines: their findings are decoded."""
    before, after = _tables(tmp_path)
    plain = _json(after, "--no-cache")
    _gjk("scan", ARM, "--poses", before, "--cache-dir", tmp_path / "c")
    seen = _counted(monkeypatch)
    assert _json(after, "--cache-dir", tmp_path / "c") == plain
    assert seen["decoded"] > 0 and seen["computed"] == 20


def test_poses_kept_with_lines_give_the_same_findings_to_other_reports(tmp_path):
    """A JSON run's packs read by a run that decodes them (the library's scan)."""
    from gjkcli.pipeline.cache import Cache
    from gjkcli.pipeline.run import Options, scan
    from gjkcli.report.jsonout import dumps, document
    from gjkcli.scene.urdf import RobotOptions

    before, after = _tables(tmp_path)
    _json(before, "--cache-dir", tmp_path / "c")

    def run(cache):
        found = scan([str(ARM)], Options(robot=RobotOptions(poses=str(after)), jobs=1, cache=cache))
        return dumps(document(found, timings=False))

    assert run(Cache(tmp_path / "c")) == run(None)


def test_lines_written_for_other_convex_objects_are_not_taken(tmp_path, monkeypatch):
    """A line's note reads whether its objects are taken for convex, which the table's first
    pose decides: lines written under other flags are decoded instead."""
    from gjkcli.pipeline import poses

    before, after = _tables(tmp_path)
    plain = _json(after, "--no-cache")
    real = poses.Prepared.convex_flags
    monkeypatch.setattr(poses.Prepared, "convex_flags", lambda self, first: [not f for f in real(self, first)])
    _json(before, "--cache-dir", tmp_path / "c")
    monkeypatch.setattr(poses.Prepared, "convex_flags", real)
    seen = _counted(monkeypatch)
    assert _json(after, "--cache-dir", tmp_path / "c") == plain
    assert seen["decoded"] > 0 and seen["computed"] == 20


def test_a_lost_data_entry_costs_a_decoding_run_its_poses(tmp_path, monkeypatch):
    """The JSON report needs the lines only; a run that decodes recomputes the poses whose data
    entry is gone, with a note."""
    from gjkcli.pipeline.cache import Cache
    from gjkcli.pipeline.poses import DATA_KIND
    from gjkcli.pipeline.run import Options, scan
    from gjkcli.scene.urdf import RobotOptions

    before, after = _tables(tmp_path)
    plain = _json(after, "--no-cache")
    _json(before, "--cache-dir", tmp_path / "c")
    for entry in (tmp_path / "c" / DATA_KIND).rglob("*"):
        if entry.is_file():
            entry.unlink()
    seen = _counted(monkeypatch)
    assert _json(after, "--cache-dir", tmp_path / "c") == plain
    assert seen == {"decoded": 0, "computed": 20}
    seen["computed"] = 0
    found = scan([str(ARM)], Options(robot=RobotOptions(poses=str(after)), jobs=1, cache=Cache(tmp_path / "d")))
    assert not any("cache: ignored" in n for n in found.notes)
    (tmp_path / "e").mkdir()
    _json(before, "--cache-dir", tmp_path / "e")
    for entry in (tmp_path / "e" / DATA_KIND).rglob("*"):
        if entry.is_file():
            entry.unlink()
    seen["computed"] = 0
    found = scan([str(ARM)], Options(robot=RobotOptions(poses=str(before)), jobs=1, cache=Cache(tmp_path / "e")))
    assert any("cache: ignored the entry" in n for n in found.notes)
    assert seen["computed"] > 0  # the poses with findings computed again


def test_a_json_run_keeps_a_poses_findings_as_its_lines_alone(tmp_path, monkeypatch):
    """A pose's findings kept with their report lines are not kept as data too: a run that
    decodes them (the library's scan) computes those poses again, quietly, and keeps their data
    for the next one; a JSON run takes the lines."""
    from gjkcli.pipeline.cache import Cache
    from gjkcli.pipeline.run import Options, scan
    from gjkcli.report.jsonout import document, dumps
    from gjkcli.scene.urdf import RobotOptions

    before, _ = _tables(tmp_path)
    _json(before, "--cache-dir", tmp_path / "c")

    def run(cache):
        found = scan([str(ARM)], Options(robot=RobotOptions(poses=str(before)), jobs=1, cache=cache))
        assert not any(n.startswith("cache:") for n in found.notes)
        return dumps(document(found, timings=False))

    plain = run(None)
    colliding = len({p["waypoint"] for p in json.loads(plain)["pairs"]})
    seen = _counted(monkeypatch)
    assert run(Cache(tmp_path / "c")) == plain
    assert seen == {"decoded": 0, "computed": colliding}
    assert run(Cache(tmp_path / "c")) == plain
    assert seen == {"decoded": colliding, "computed": colliding}  # its data kept by the run before


def _replaced(table: Path, rows: dict, name: str) -> Path:
    """A copy of `table` with its rows {row: text} replaced."""
    lines = table.read_text().splitlines()
    for row, text in rows.items():
        lines[row + 1] = text
    out = table.with_name(name)
    out.write_text("\n".join(lines) + "\n")
    return out


def test_rows_are_kept_by_their_text(tmp_path, monkeypatch):
    """A CSV table's pose is kept under its row's text: a row written otherwise with the same
    values is computed again (the report the same), and the rows seen before are not read."""
    from gjkcli.scene import urdf

    before, _ = _tables(tmp_path)
    lines = before.read_text().splitlines()
    otherwise = {k: ",".join(f"{float(c):.17e}" for c in lines[k + 1].split(",")) for k in (3, 50, 199)}
    after = _replaced(before, otherwise, "otherwise.csv")
    plain = _json(after, "--no-cache")
    _json(before, "--cache-dir", tmp_path / "c")
    seen = _counted(monkeypatch)
    read = []
    real = urdf.PoseRows.values
    monkeypatch.setattr(urdf.PoseRows, "values", lambda self, rows=None: read.append(rows) or real(self, rows))
    assert _json(after, "--cache-dir", tmp_path / "c") == plain
    assert seen == {"decoded": 0, "computed": 3}
    assert sorted({int(r) for rows in read for r in rows}) == [0, 3, 50, 199]  # and the first, for the records


def test_a_bad_new_row_stops_a_cached_run_as_an_uncached_one(tmp_path):
    """The rows are read where the run needs them: a bad one among the new rows is named as a
    run without the cache names it, exit 2."""
    before, _ = _tables(tmp_path)
    _json(before, "--cache-dir", tmp_path / "c")
    for k, row in enumerate(("0.1,x", "0.1", "0.1,9")):  # a word, a short row, outside the limits
        bad = _replaced(before, {120: row, 150: "0.2,0.3"}, f"bad{k}.csv")
        plain = _json(bad, "--no-cache")
        assert plain[0] == 2 and f"bad{k}.csv:122:" in plain[1]
        assert _json(bad, "--cache-dir", tmp_path / "c") == plain


def test_a_spliced_report_that_cannot_be_written_is_not_kept(tmp_path):
    """The report is kept while it is written; where the write fails (its folder is gone), the
    kept report is dropped too: the next run writes the report, not a replay of nothing."""
    before, after = _tables(tmp_path)
    plain = _json(after, "--no-cache")
    _json(before, "--cache-dir", tmp_path / "c")
    runs = lambda: sorted(p.name for p in (tmp_path / "c" / "run").rglob("*") if p.is_file())  # noqa: E731
    kept = runs()
    code, out = _json(after, "--cache-dir", tmp_path / "c", "-o", tmp_path / "gone" / "r.json")
    assert code == 2 and "r.json" in out
    assert runs() == kept
    assert _json(after, "--cache-dir", tmp_path / "c") == plain
    assert len(runs()) == len(kept) + 1


def test_a_replayed_poses_report_imports_no_numpy(tmp_path):
    """The same table again, the cache holding the run's whole report: the command parses
    neither the URDF nor the table (their files' digests are the key), imports neither their
    reader nor NumPy, and writes the same bytes."""
    from fresh import entry_then_imported, python_c

    before, _ = _tables(tmp_path)
    run = entry_then_imported("numpy", "gjkcli.scene.urdf")
    args = ("scan", ARM, "--poses", before, "--format", "json", "--cache-dir", tmp_path / "c")
    first = python_c(run, *args, "-o", "first.json", cwd=tmp_path)
    again = python_c(run, *args, "-o", "again.json", cwd=tmp_path)
    assert first.split() == ["True", "True"] and again.split() == ["False", "False"]
    assert (tmp_path / "again.json").read_bytes() == (tmp_path / "first.json").read_bytes()
