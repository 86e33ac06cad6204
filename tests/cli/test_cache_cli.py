"""The command line's cache: where it lives, a kept report replayed byte for byte, --no-cache,
gjk clean, the size limit, damaged entries and two runs at once. Every cache is in tmp_path."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import gjkcli
from gjkcli.cli import main
from gjkcli.errors import is_partial_write
from gjkcli.pipeline import cache as caches

ROOT = Path(__file__).resolve().parents[2]
# the gjkcli these tests import (installed, with its compiled engine, or this tree's built in place)
GJKCLI_PATH = str(Path(gjkcli.__file__).resolve().parents[1])
SAMPLES = ROOT / "samples"
DATA = ROOT / "tests" / "data" / "third_party"


def _gjk(*args, env=None):
    return CliRunner(catch_exceptions=False, env=env).invoke(main, [str(a) for a in args])


def _glb(tmp_path: Path) -> Path:
    trimesh = pytest.importorskip("trimesh")
    scene = trimesh.Scene()
    for n in range(6):
        part = trimesh.creation.box((1, 1, 1)) if n % 2 else trimesh.creation.icosphere(radius=0.6)
        part.apply_translation((0.8 * n, 0.1 * n, 0))
        scene.add_geometry(part, node_name=f"p{n}")
    path = tmp_path / "scene.glb"
    scene.export(path)
    return path


def _arm(tmp_path: Path) -> list:
    poses = tmp_path / "poses.csv"
    poses.write_text("shoulder,elbow\n0,0\n0.5,1.0\n1.2,-2.4\n3.0,2.4\n")
    return [SAMPLES / "robot" / "arm.urdf", "--poses", poses]


def _inputs(kind: str, tmp_path: Path) -> list:
    if kind == "mesh":
        return [SAMPLES / "pocket_box.stl", SAMPLES / "pocket_cube.stl", SAMPLES / "peg.stl", "--together"]
    if kind == "glb":
        return [_glb(tmp_path)]
    if kind == "step":
        pytest.importorskip("OCP")
        return [DATA / "step" / "as1_pe_203.stp"]
    if kind == "ifc":
        pytest.importorskip("ifcopenshell")
        return [DATA / "project0-openings.ifc", "--tolerance", "2mm"]
    if kind == "dxf":
        pytest.importorskip("ezdxf")
        return [SAMPLES / "flat" / "nest.dxf", "--clearance", "0.5"]
    if kind == "svg":
        pytest.importorskip("svgelements")
        return [SAMPLES / "dyn4j" / "shape1.svg", SAMPLES / "dyn4j" / "shape2.svg", "--together"]
    return _arm(tmp_path)


KINDS = ["mesh", "glb", "step", "ifc", "dxf", "svg", "urdf"]


def _process(*args, cwd) -> tuple:
    """(exit code, stdout, stderr) of `gjk` in a process of its own (the STEP reader forked as
    it starts is gated by the cache: `gjkcli.mesh.cad_process.go`), run in the test's folder
    `cwd`: `python -m` imports from its working folder first, which must not be the source
    tree (in CI it holds no compiled engine)."""
    env = {**os.environ, "PYTHONPATH": GJKCLI_PATH, "GJK_NO_CACHE": ""}
    done = subprocess.run([sys.executable, "-m", "gjkcli", *map(str, args)], capture_output=True,
                          env=env, timeout=600, cwd=cwd)
    return done.returncode, done.stdout, done.stderr


@pytest.mark.parametrize("kind", KINDS)
def test_a_cached_run_prints_the_uncached_json_byte_for_byte(kind, tmp_path):
    args = ["scan", *_inputs(kind, tmp_path), "--format", "json", "--jobs", "1"]
    # STEP in processes of their own: OpenCASCADE's second tessellation of a file in one process
    # differs from its first in the last digits of the error bound, cache or not
    if kind == "step":
        def run(*a):
            return _process(*a, cwd=tmp_path)
    else:
        def run(*a):
            r = _gjk(*a)
            return r.exit_code, r.stdout_bytes, r.stderr_bytes
    plain = run(*args, "--no-cache")
    assert plain[0] in (0, 1), plain[2]
    # the first run fills the cache, the second reads the report; a third at another format
    # (its own report) reads the hulls and pairs
    for extra in ([], [], ["--format", "json", "--all-pairs"]):
        got = run(*args, "--cache-dir", tmp_path / "cache", *extra)
        if extra:
            plain = run(*args, "--no-cache", *extra)
        assert got == plain


def test_a_kept_report_is_replayed_without_a_run(tmp_path, monkeypatch):
    from gjkcli.pipeline import run

    def refused(*a, **k):
        pytest.fail("the kept report was not used")

    args = ["scan", SAMPLES / "pocket_box.stl", SAMPLES / "pocket_cube.stl", "--together", "--format",
            "sarif", "--cache-dir", tmp_path / "c"]
    first = _gjk(*args)
    stl = tmp_path / "a.stl"
    stl.write_bytes((SAMPLES / "pocket_box.stl").read_bytes())
    other = ["scan", stl, SAMPLES / "pocket_cube.stl", "--together", "--format", "sarif", "--cache-dir", tmp_path / "c"]
    _gjk(*other)
    with monkeypatch.context() as m:
        m.setattr(run, "scan", refused)
        again = _gjk(*args)
        assert (again.exit_code, again.stdout_bytes) == (first.exit_code, first.stdout_bytes)
        _gjk(*other)
        # an option that changes a verdict is another report: the run is made
        with pytest.raises(BaseException, match="not used"):
            _gjk(*args, "--clearance", "0.1")
        # and so is a changed input
        stl.write_bytes((SAMPLES / "peg.stl").read_bytes())
        with pytest.raises(BaseException, match="not used"):
            _gjk(*other)


def test_a_report_written_to_a_file_is_replayed_there(tmp_path):
    out = tmp_path / "report.json"
    args = ["scan", SAMPLES / "pocket_box.stl", SAMPLES / "pocket_cube.stl", "--together", "--format",
            "json", "-o", out, "--cache-dir", tmp_path / "c"]
    _gjk(*args)
    first = out.read_bytes()
    out.unlink()
    _gjk(*args)
    assert out.read_bytes() == first


@pytest.mark.parametrize("fmt", ["json", "sarif"])
def test_a_report_written_to_a_file_is_kept_from_the_file_not_held(tmp_path, monkeypatch, fmt):
    """A report encoded as it is written goes to its file, and the cache keeps it by reading the
    file back (a chunk at a time): nothing holds its chunks meanwhile. The kept report replays
    the bytes the run wrote, to a file and to stdout, at every chunk size."""
    from gjkcli import clicache
    from gjkcli.errors import WrittenFile
    from gjkcli.pipeline import run
    from gjkcli.report import chunks

    monkeypatch.setattr(chunks, "CHUNK_BYTES", 64)  # many chunks, written as they are made
    monkeypatch.setattr(caches.FileChunks, "CHUNK", 100)  # read back in many pieces
    kept: list = []
    real = clicache.CachedRun.after_report

    def after_report(self, found, writes):
        kept.extend(data for _, data in writes)
        return real(self, found, writes)

    monkeypatch.setattr(clicache.CachedRun, "after_report", after_report)
    args = ["scan", SAMPLES / "collide_a.stl", SAMPLES / "collide_b.stl", SAMPLES / "pocket_box.stl",
            "--together", "--format", fmt, "--cache-dir", tmp_path / "c"]
    plain = _gjk(*args[:-2], "--no-cache", "-o", tmp_path / "plain")
    assert _gjk(*args, "-o", tmp_path / "first").exit_code == plain.exit_code
    assert [type(data) for data in kept] == [WrittenFile]
    written = (tmp_path / "first").read_bytes()
    assert len(written) > 20 * chunks.CHUNK_BYTES and written == (tmp_path / "plain").read_bytes()

    def refused(*a, **k):
        pytest.fail("the kept report was not used")

    monkeypatch.setattr(run, "scan", refused)
    assert _gjk(*args, "-o", tmp_path / "second").exit_code == plain.exit_code
    assert (tmp_path / "second").read_bytes() == written
    assert _gjk(*args).stdout_bytes == written


def test_a_report_file_changed_before_it_is_kept_is_not_kept(tmp_path, monkeypatch):
    """The cache reads the report back from its file only while it is the file the run wrote
    (the same inode, size and modification time): a file replaced or edited in between is not
    kept, and the next run scans again."""
    from gjkcli import clicache
    from gjkcli.pipeline import run

    real = clicache.CachedRun.after_report
    out = tmp_path / "r.json"
    edits = {"appended": lambda: out.write_bytes(out.read_bytes() + b" "),
             "replaced": lambda: (out.unlink(), out.write_bytes(b"{}"))}
    for name, edit in edits.items():
        args = ["scan", SAMPLES / "collide_a.stl", SAMPLES / "collide_b.stl", "--together", "--format",
                "json", "-o", out, "--cache-dir", tmp_path / name]
        def after_report(self, found, writes, edit=edit):
            edit()
            return real(self, found, writes)

        with monkeypatch.context() as m:
            m.setattr(clicache.CachedRun, "after_report", after_report)
            assert _gjk(*args).exit_code == 1
        scanned = []
        real_scan = run.scan
        with monkeypatch.context() as m:
            m.setattr(run, "scan", lambda *a, **k: scanned.append(name) or real_scan(*a, **k))
            assert _gjk(*args).exit_code == 1
        assert scanned == [name], f"a report file {name} after it was written was kept"


def test_a_report_through_a_symlink_is_kept_and_a_fifo_one_is_held(tmp_path, monkeypatch):
    """A report written through a symlink replaces the link's target and is kept from it; one
    written into a FIFO cannot be read back, so its chunks are held as it is written and kept."""
    from gjkcli.pipeline import run

    args = ["scan", SAMPLES / "collide_a.stl", SAMPLES / "collide_b.stl", "--together", "--format", "json"]
    plain = _gjk(*args, "--no-cache").stdout_bytes
    target, link = tmp_path / "target.json", tmp_path / "link.json"
    target.write_bytes(b"")
    link.symlink_to(target)
    assert _gjk(*args, "-o", link, "--cache-dir", tmp_path / "a").exit_code == 1
    assert link.is_symlink() and target.read_bytes() == plain
    if not hasattr(os, "mkfifo"):
        pytest.skip("this system has no FIFOs")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    import threading

    got: list = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    assert _gjk(*args, "-o", fifo, "--cache-dir", tmp_path / "b").exit_code == 1
    reader.join(30)
    assert got == [plain]

    def refused(*a, **k):
        pytest.fail("the kept report was not used")

    monkeypatch.setattr(run, "scan", refused)
    for cache in ("a", "b"):
        assert _gjk(*args, "--cache-dir", tmp_path / cache).stdout_bytes == plain


def test_a_kept_report_is_replayed_to_another_file_or_stdout_and_quiet_writes_none(tmp_path, monkeypatch):
    """Where the report goes is not part of the kept report's key: a CI job writing each
    build's report to a file of its own replays it; -q without -o writes nothing, and -q with
    -o writes the report, each as the run without the cache does."""
    from gjkcli.pipeline import run

    def refused(*a, **k):
        pytest.fail("the kept report was not used")

    args = ["scan", SAMPLES / "collide_a.stl", SAMPLES / "collide_b.stl", "--together", "--format", "json"]
    plain = _gjk(*args, "--no-cache")
    assert plain.exit_code == 1 and plain.stdout_bytes
    cache = ["--cache-dir", tmp_path / "c"]
    assert _gjk(*args, *cache, "-o", tmp_path / "first.json").exit_code == 1
    quiet = _gjk(*args, *cache, "-q")  # writes no report, and keeps that
    assert (quiet.exit_code, quiet.stdout_bytes) == (1, b"")
    assert _gjk(*args, *cache, "-q", "-o", tmp_path / "quiet.json").exit_code == 1
    with monkeypatch.context() as m:
        m.setattr(run, "scan", refused)
        got = _gjk(*args, *cache, "-o", tmp_path / "second.json")
        assert got.exit_code == 1 and (tmp_path / "second.json").read_bytes() == plain.stdout_bytes
        got = _gjk(*args, *cache)
        assert (got.exit_code, got.stdout_bytes) == (1, plain.stdout_bytes)
        got = _gjk(*args, *cache, "-o", "-")
        assert (got.exit_code, got.stdout_bytes) == (1, plain.stdout_bytes)
        got = _gjk(*args, *cache, "-q")
        assert (got.exit_code, got.stdout_bytes) == (1, b"")
        got = _gjk(*args, *cache, "-q", "-o", tmp_path / "third.json")
        assert got.exit_code == 1 and (tmp_path / "third.json").read_bytes() == plain.stdout_bytes


def test_the_cache_lives_beside_the_settings_or_in_the_working_folder(tmp_path, monkeypatch):
    monkeypatch.delenv("GJK_NO_CACHE", raising=False)
    monkeypatch.delenv("GJK_CACHE_DIR", raising=False)
    project = tmp_path / "project"
    (project / "sub").mkdir(parents=True)
    (project / "gjk.toml").write_text('clearance = 0.1\n')
    monkeypatch.chdir(project / "sub")
    r = _gjk("scan", SAMPLES / "collide_a.stl", SAMPLES / "collide_b.stl", "--together", "--format", "json")
    assert r.exit_code == 1
    assert (project / ".gjk_cache" / "CACHEDIR.TAG").is_file()
    assert (project / ".gjk_cache" / ".gitignore").is_file()
    assert not (project / "sub" / ".gjk_cache").exists()
    # without settings: the working folder
    monkeypatch.chdir(tmp_path)
    _gjk("scan", SAMPLES / "collide_a.stl", SAMPLES / "collide_b.stl", "--together", "--format", "json",
         "--isolated")
    assert (tmp_path / ".gjk_cache" / "CACHEDIR.TAG").is_file()
    # gjk clean empties the one the settings name
    monkeypatch.chdir(project / "sub")
    r = _gjk("clean")
    assert r.exit_code == 0 and "removed" in r.stdout
    assert not (project / ".gjk_cache").exists()


def test_no_cache_and_its_setting_write_nothing(tmp_path, monkeypatch):
    monkeypatch.delenv("GJK_NO_CACHE", raising=False)
    monkeypatch.delenv("GJK_CACHE_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    _gjk("scan", SAMPLES / "collide_a.stl", SAMPLES / "collide_b.stl", "--together", "--format", "json",
         "--no-cache", "--isolated")
    assert not (tmp_path / ".gjk_cache").exists()
    (tmp_path / "gjk.toml").write_text("cache = false\n")
    _gjk("scan", SAMPLES / "collide_a.stl", SAMPLES / "collide_b.stl", "--together", "--format", "json")
    assert not (tmp_path / ".gjk_cache").exists()
    (tmp_path / "gjk.toml").write_text('cache_dir = "elsewhere"\n')
    _gjk("scan", SAMPLES / "collide_a.stl", SAMPLES / "collide_b.stl", "--together", "--format", "json")
    assert (tmp_path / "elsewhere" / "CACHEDIR.TAG").is_file()
    monkeypatch.setenv("GJK_NO_CACHE", "1")
    _gjk("scan", SAMPLES / "collide_a.stl", SAMPLES / "collide_b.stl", "--format", "json", "--isolated")
    assert not (tmp_path / ".gjk_cache").exists()


def test_clean_refuses_a_folder_gjk_did_not_make(tmp_path):
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.txt").write_text("mine")
    r = _gjk("clean", "--cache-dir", tmp_path / "notes")
    assert r.exit_code == 2 and "not a gjk cache" in r.stderr
    assert (tmp_path / "notes" / "a.txt").exists()


def test_a_flipped_byte_in_a_kept_report_is_ignored_with_a_note(tmp_path):
    args = ["scan", SAMPLES / "pocket_box.stl", SAMPLES / "pocket_cube.stl", "--together", "--format",
            "json", "--jobs", "1"]
    plain = json.loads(_gjk(*args, "--no-cache").stdout)
    _gjk(*args, "--cache-dir", tmp_path / "c")
    (entry,) = [p for p in (tmp_path / "c" / "run").rglob("*") if p.is_file()]
    data = bytearray(entry.read_bytes())
    data[-10] ^= 0x20
    entry.write_bytes(bytes(data))
    got = json.loads(_gjk(*args, "--cache-dir", tmp_path / "c").stdout)
    notes = [n for n in got["notes"] if n.startswith("cache: ignored the entry")]
    assert len(notes) == 1 and "checksum" in notes[0]
    got["notes"] = [n for n in got["notes"] if n not in notes]
    assert got == plain


def test_the_cache_limit_keeps_the_folder_small(tmp_path):
    for n, (a, b) in enumerate([("collide_a", "collide_b"), ("clear_a", "clear_b"), ("touch_a", "touch_b")]):
        r = _gjk("scan", SAMPLES / f"{a}.stl", SAMPLES / f"{b}.stl", "--together", "--format", "json",
                 "--cache-dir", tmp_path / "c", "--limit", "cache=4000")
        assert r.exit_code in (0, 1)
    sizes = [p.stat().st_size for p in (tmp_path / "c").rglob("*") if p.is_file() and p.parent != tmp_path / "c"]
    assert sizes and sum(sizes) <= 4000
    assert _gjk("scan", SAMPLES / "clear_a.stl", "--limit", "cache=-1").exit_code == 2


def test_two_runs_at_once_on_one_cache(tmp_path):
    glb = _glb(tmp_path)
    env = {**os.environ, "PYTHONPATH": GJKCLI_PATH, "GJK_NO_CACHE": ""}
    args = [sys.executable, "-m", "gjkcli", "scan", str(glb), "--format", "json", "--jobs", "1"]
    plain = subprocess.run(args + ["--no-cache"], capture_output=True, env=env, timeout=300, cwd=tmp_path)
    # the same scan and one at another clearance (the report kept and the hulls shared), at once
    runs = [subprocess.Popen(args + extra + ["--cache-dir", str(tmp_path / "c")], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env=env, cwd=tmp_path)
            for extra in ([], ["--clearance", "0.01"], [])]
    outs = [r.communicate(timeout=300) for r in runs]
    assert outs[0][0] == plain.stdout and outs[2][0] == plain.stdout, (outs[0][1], outs[2][1])
    other = subprocess.run(args + ["--no-cache", "--clearance", "0.01"], capture_output=True, env=env, timeout=300,
                           cwd=tmp_path)
    assert outs[1][0] == other.stdout
    # every entry written whole: each one reads back
    c = caches.Cache(tmp_path / "c")
    for path in (tmp_path / "c").rglob("*"):
        if path.is_file() and path.parent != tmp_path / "c":
            assert not is_partial_write(path.name)
            kind = path.relative_to(tmp_path / "c").parts[0]
            assert c.get(kind, path.name) is not None, c.notes


def _watched(tmp_path: Path, *options, pause: float = 0.0) -> tuple:
    """(stdout, stderr's lines) of `gjk scan clear_a.stl b.stl --watch` and `options`: its first
    run on clear_b's copy, then, `pause` seconds later, b.stl saved as collide_b and its second
    run; b.stl's path."""
    import threading
    import time

    part = tmp_path / "b.stl"
    part.write_bytes((SAMPLES / "clear_b.stl").read_bytes())
    env = {**os.environ, "PYTHONPATH": GJKCLI_PATH, "GJK_NO_CACHE": ""}
    proc = subprocess.Popen([sys.executable, "-m", "gjkcli", "scan", str(SAMPLES / "clear_a.stl"), str(part),
                             "--together", "--format", "json", "--watch", "--cache-dir", str(tmp_path / "c"),
                             *options], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=tmp_path)
    said: list = []
    reader = threading.Thread(target=lambda: said.extend(iter(proc.stderr.readline, b"")), daemon=True)
    reader.start()

    def wait_for(count: int) -> None:
        deadline = time.monotonic() + 120
        while sum(b"watching" in line for line in said) < count:
            assert proc.poll() is None, b"".join(said)
            assert time.monotonic() < deadline, b"".join(said)
            time.sleep(0.05)

    try:
        wait_for(1)
        assert re.match(rb"gjk: exit 0; scanned in \d+\.\d\d s; watching 2 files", said[-1]), said[-1]
        time.sleep(pause)
        part.write_bytes((SAMPLES / "collide_b.stl").read_bytes())  # another part, saved in place
        wait_for(2)
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=60)
    reader.join(timeout=60)
    return out, said, part


def test_watch_scans_again_when_an_input_is_saved(tmp_path):
    out, said, part = _watched(tmp_path)
    assert any(b"changed: scanning again" in line for line in said)
    docs = [json.loads(chunk) for chunk in _json_documents(out.decode())]
    assert len(docs) == 2
    assert docs[0] != docs[1]  # the second run read the saved file
    plain = _gjk("scan", SAMPLES / "clear_a.stl", part, "--together", "--format", "json", "--no-cache")
    assert json.loads(plain.stdout) == docs[1]


def test_a_watched_re_run_times_itself_not_the_process(tmp_path):
    """--timings in a re-run of --watch: its imports and its clock are the run's (the first run
    and a wait for a save are not a stage of the next run), each stage within the run's wall
    time as its line says it."""
    out, said, _ = _watched(tmp_path, "--timings", pause=1.0)
    timings = [line for line in said if line.startswith(b"gjk: timings:")]
    runs = [float(re.match(rb"gjk: exit \d+; scanned in ([0-9.]+) s", line).group(1))
            for line in said if b"watching" in line]
    assert len(timings) == 2 and len(runs) == 2, b"".join(said)
    stages = {k: float(v) for k, v in re.findall(rb"(\w+) ([0-9.]+) s", timings[1])}
    assert stages and all(v <= runs[1] + 0.01 for v in stages.values()), (timings[1], runs[1])
    docs = [json.loads(chunk) for chunk in _json_documents(out.decode())]
    assert docs[1]["summary"]["elapsed"] <= runs[1] + 0.01


def _json_documents(text: str) -> list:
    """The JSON documents written one after another."""
    decoder, out, at = json.JSONDecoder(), [], 0
    while at < len(text):
        while at < len(text) and text[at].isspace():
            at += 1
        if at >= len(text):
            break
        doc, at = decoder.raw_decode(text, at)
        out.append(json.dumps(doc))
    return out


def test_a_robots_report_is_kept_while_its_meshes_are_the_same(tmp_path, monkeypatch):
    from gjkcli.pipeline import run

    def refused(*a, **k):
        pytest.fail("the kept report was not used")

    urdf = tmp_path / "arm.urdf"
    text = (SAMPLES / "robot" / "arm.urdf").read_text()
    # the forearm a mesh file beside the URDF
    text = text.replace('<geometry><box size="0.4 0.06 0.06"/></geometry>',
                        '<geometry><mesh filename="forearm.stl" scale="0.1 0.02 0.02"/></geometry>', 1)
    urdf.write_text(text)
    (tmp_path / "forearm.stl").write_bytes((SAMPLES / "collide_a.stl").read_bytes())
    args = ["scan", *_arm(tmp_path)[1:], "--format", "json", "--cache-dir", tmp_path / "c"]
    args.insert(1, urdf)
    first = _gjk(*args)
    assert first.exit_code in (0, 1), first.stderr
    assert '"forearm"' in first.stdout or "forearm" in first.stdout
    with monkeypatch.context() as m:
        m.setattr(run, "scan", refused)
        assert _gjk(*args).stdout_bytes == first.stdout_bytes
        # a changed mesh the URDF names: the run is made again
        (tmp_path / "forearm.stl").write_bytes((SAMPLES / "peg.stl").read_bytes())
        with pytest.raises(BaseException, match="not used"):
            _gjk(*args)
    again = _gjk(*args)
    assert again.stdout_bytes == _gjk(*args[:-2], "--no-cache").stdout_bytes


def test_a_manifests_report_is_kept_until_it_or_a_file_it_names_changes(tmp_path, monkeypatch):
    """The README's CI job scans a manifest: its report is kept by the manifest's bytes and those
    of every file it names (an include, an object's mesh, a robot's URDF and meshes, an SRDF)."""
    from gjkcli.pipeline import run

    def refused(*a, **k):
        pytest.fail("the kept report was not used")

    cell = tmp_path / "cell"
    cell.mkdir()
    for name in ("collide_a.stl", "collide_b.stl", "peg.stl"):
        (cell / name).write_bytes((SAMPLES / name).read_bytes())
    text = (SAMPLES / "robot" / "arm.urdf").read_text()
    (cell / "arm.urdf").write_text(text.replace(
        '<geometry><box size="0.4 0.06 0.06"/></geometry>',
        '<geometry><mesh filename="forearm.stl" scale="0.1 0.02 0.02"/></geometry>', 1))
    (cell / "forearm.stl").write_bytes((SAMPLES / "collide_a.stl").read_bytes())
    (cell / "arm.srdf").write_text('<robot name="arm"><disable_collisions link1="base" link2="post" '
                                   'reason="Adjacent"/></robot>\n')
    manifest = cell / "cell.toml"
    manifest.write_text('[[include]]\nfile = "collide_a.stl"\n\n[[object]]\nname = "b"\nfile = "collide_b.stl"\n\n'
                        '[[robot]]\nurdf = "arm.urdf"\nsrdf = "arm.srdf"\ntranslate = [5, 0, 0]\n')
    args = ["scan", "--manifest", manifest, "--format", "json"]
    cache = ["--cache-dir", tmp_path / "c"]

    def plain():
        got = _gjk(*args, "--no-cache")
        assert got.exit_code in (0, 1), got.stderr
        return got.exit_code, got.stdout_bytes

    first = _gjk(*args, *cache)
    assert (first.exit_code, first.stdout_bytes) == plain()
    assert b'"arm:forearm"' in first.stdout_bytes
    edits = [(cell / "collide_b.stl", (SAMPLES / "peg.stl").read_bytes()),  # an object's mesh
             (cell / "collide_a.stl", (SAMPLES / "pocket_cube.stl").read_bytes()),  # an include
             (cell / "forearm.stl", (SAMPLES / "peg.stl").read_bytes()),  # a robot's mesh
             (cell / "arm.srdf", (cell / "arm.srdf").read_bytes().replace(b"post", b"upper_arm")),
             (manifest, manifest.read_bytes().replace(b"[5, 0, 0]", b"[0, 0, 0]"))]
    for path, data in edits:
        with monkeypatch.context() as m:
            m.setattr(run, "scan", refused)
            again = _gjk(*args, *cache)
            assert (again.exit_code, again.stdout_bytes) == (first.exit_code, first.stdout_bytes)
            path.write_bytes(data)
            with pytest.raises(BaseException, match="not used"):
                _gjk(*args, *cache)
        first = _gjk(*args, *cache)
        assert (first.exit_code, first.stdout_bytes) == plain(), path.name


def test_a_folders_report_is_kept_until_a_file_in_it_changes(tmp_path, monkeypatch):
    from gjkcli.pipeline import run

    def refused(*a, **k):
        pytest.fail("the kept report was not used")

    parts = tmp_path / "parts"
    (parts / "sub").mkdir(parents=True)
    (parts / "a.stl").write_bytes((SAMPLES / "collide_a.stl").read_bytes())
    (parts / "sub" / "b.stl").write_bytes((SAMPLES / "collide_b.stl").read_bytes())
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GJK_NO_CACHE", raising=False)
    monkeypatch.delenv("GJK_CACHE_DIR", raising=False)
    (parts / "gjk.toml").write_text("together = true\n")  # its cache beside it, inside the folder
    monkeypatch.chdir(parts)
    args = ["scan", ".", "--format", "json"]
    first = _gjk(*args)
    assert first.exit_code == 1 and (parts / ".gjk_cache").is_dir()
    with monkeypatch.context() as m:
        m.setattr(run, "scan", refused)
        assert _gjk(*args).stdout_bytes == first.stdout_bytes  # its own cache folder not counted
        (parts / "sub" / "b.stl").write_bytes((SAMPLES / "clear_b.stl").read_bytes())
        with pytest.raises(BaseException, match="not used"):
            _gjk(*args)
        (parts / "sub" / "b.stl").write_bytes((SAMPLES / "collide_b.stl").read_bytes())
        (parts / "sub" / "notes.txt").write_text("a new file")
        with pytest.raises(BaseException, match="not used"):
            _gjk(*args)


def test_an_edited_step_file_s_reader_starts_without_waiting_for_the_cache(tmp_path, monkeypatch):
    """The command's start tells, before click reads its options, whether the cache may keep
    its report (`gjkcli.__main__._may_be_kept`, which gates the forked reader of its STEP files
    and IFC models): each such file, as its bytes are now, must be one a kept report was made of
    (`caches.mark_inputs`, by the run that kept it). An edited file is not: its reader starts at
    once. Where a settings file may name the cache's folder, the start cannot tell: it waits."""
    pytest.importorskip("OCP", reason="STEP needs OpenCASCADE (the cad extra)")
    from gjkcli import __main__ as entry

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GJK_CACHE_DIR", raising=False)
    monkeypatch.delenv("GJK_NO_CACHE", raising=False)
    step = tmp_path / "as1.stp"
    text = (ROOT / "tests" / "data" / "third_party" / "step" / "as1-oc-214.stp").read_bytes()
    step.write_bytes(text)
    argv = ["scan", str(step), "--format", "json", "--jobs", "1", "--cache-dir", str(tmp_path / "c")]
    assert not entry._may_be_kept(argv)  # nothing kept yet
    _gjk(*argv)
    assert entry._may_be_kept(argv)
    assert not entry._may_be_kept([*argv[:-2], "--no-cache"])
    monkeypatch.setenv("GJK_NO_CACHE", "1")  # a --cache-dir given still opens the cache
    assert entry._may_be_kept(argv) and not entry._may_be_kept(argv[:-2])
    monkeypatch.delenv("GJK_NO_CACHE")
    step.write_bytes(text.replace(b"ISO-10303-21;", b"ISO-10303-21; ", 1))  # edited
    assert not entry._may_be_kept(argv)
    step.write_bytes(text)
    assert entry._may_be_kept(argv)
    # the default folder, beside the settings file found; one that sets the cache: not told here
    default = argv[:-2]
    assert not entry._may_be_kept(default)
    (tmp_path / "gjk.toml").write_text("tolerance = \"0.01mm\"\n")
    caches.mark_inputs(caches.Cache(tmp_path / caches.FOLDER), [step])
    assert entry._may_be_kept(default)
    step.write_bytes(text + b"\n")
    assert not entry._may_be_kept(default)
    (tmp_path / "gjk.toml").write_text("cache_dir = \"elsewhere\"\n")
    assert entry._may_be_kept(default)


@pytest.mark.parametrize("fmt", ["json", "sarif", "github"])
def test_a_refused_glb_with_the_cache_is_its_one_line_error(tmp_path, fmt):
    """A scan of one GLB that gjk refuses (truncated), with the cache on (where a GLB's scene is
    recorded for its next re-scan), reports the file's one-line error and exits 2, as
    --no-cache does: the record of a scene of no parts made an internal error."""
    glb = _glb(tmp_path)
    cut = tmp_path / "cut.glb"
    cut.write_bytes(glb.read_bytes()[:-50])
    runs = [_gjk("scan", cut, "--format", fmt, *extra) for extra in (["--no-cache"], ["--cache-dir", tmp_path / "c"])]
    assert [r.exit_code for r in runs] == [2, 2]
    assert runs[1].stderr == runs[0].stderr and runs[1].stderr.count("\n") == 1
    assert runs[1].stderr.startswith(f"gjk: error: {cut}: ") and "internal error" not in runs[1].stderr


def test_a_report_of_an_input_refused_for_want_of_a_library_is_not_kept(tmp_path, monkeypatch):
    """A file refused because a library is missing (its error says what to install: a Draco
    GLB without DracoPy) reads once the library is there: that report is not kept, and the run
    after the install answers, not the refusal replayed."""
    trimesh = pytest.importorskip("trimesh")
    pytest.importorskip("DracoPy", reason="DracoPy (a dependency of gjk) is not installed")
    from trimesh.exchange.gltf import export_glb

    scene = trimesh.Scene()
    for n in range(2):
        box = trimesh.creation.box((1, 1, 1))
        box.apply_translation((0.5 * n, 0, 0))
        scene.add_geometry(box, node_name=f"box{n}")
    glb = tmp_path / "draco.glb"
    glb.write_bytes(export_glb(scene, extension_draco=True))
    args = ["scan", glb, "--format", "json", "--cache-dir", tmp_path / "c"]
    with monkeypatch.context() as m:
        m.setitem(sys.modules, "DracoPy", None)  # as if it were not installed
        refused = _gjk(*args)
    assert refused.exit_code == 2 and "pip install DracoPy" in refused.stderr
    after = _gjk(*args)
    assert after.exit_code == 1 and json.loads(after.stdout)["summary"]["collision"] == 1
