"""Where outputs go: no output option ever changes the type of the file its path names, and every
file gjk creates has the mode any tool gives it (0666 less the umask).

Each output option (-o, --html, --png, --trace-json, --write-baseline, BCF) is written to a FIFO,
through a symlink, to a character device and to a socket; the path's file type is compared before
and after. A character device is a node made in the test's folder when the test runs as root
(then /dev/null is never at risk), else /dev/null itself (a user other than root cannot rename
over it, so a regression cannot damage the machine); the test skips when neither is there.
"""
from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

import gjkcli
from gjkcli.cli import main

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples"
A, B = SAMPLES / "collide_a.stl", SAMPLES / "collide_b.stl"

# the file outputs of one check and one scan, each option's path named by `name`
CHECK_OUTPUTS = {"-o": "report.json", "--html": "page.html", "--png": "picture.png",
                 "--trace-json": "trace.jsonl"}
SCAN_OUTPUTS = {"--write-baseline": "baseline.json"}


def gjk(*args):
    return CliRunner(catch_exceptions=False).invoke(main, [str(a) for a in args])


def run_both(paths: dict):
    """A check and a scan of the colliding samples writing every output to `paths[option]`."""
    check = gjk("check", A, B, "--format", "json",
                *[x for option in CHECK_OUTPUTS for x in (option, paths[option])])
    scan = gjk("scan", A, B, "--write-baseline", paths["--write-baseline"])
    assert check.exit_code == 1, check.output
    assert scan.exit_code in (0, 1), scan.output
    return check, scan


def file_type(path) -> int:
    return stat.S_IFMT(os.lstat(path).st_mode)


def looks_right(option: str, data: bytes) -> None:
    """The bytes are the whole output of that option."""
    if option == "--png":
        assert data.startswith(b"\x89PNG\r\n\x1a\n") and data.endswith(b"IEND\xaeB`\x82")
    elif option == "--html":
        assert data.rstrip().endswith(b"</html>")
    elif option == "--trace-json":
        assert all(json.loads(line) for line in data.splitlines())
    else:
        json.loads(data)


class FifoReader(threading.Thread):
    """Reads a FIFO to its end, as a CI step reading a named pipe would."""

    def __init__(self, path: Path):
        super().__init__(daemon=True)
        self.path, self.data = path, None
        self.start()

    def run(self):
        with open(self.path, "rb") as f:
            self.data = f.read()

    def finish(self) -> bytes | None:
        self.join(timeout=0.5)
        if self.is_alive():  # gjk never opened it: let the reader go
            os.close(os.open(self.path, os.O_WRONLY | os.O_NONBLOCK))
            self.join(timeout=10)
        return self.data


# -- the file type stays ---------------------------------------------------------------------------


def test_fifos_are_written_in_place(tmp_path):
    paths, readers = {}, {}
    for option, name in {**CHECK_OUTPUTS, **SCAN_OUTPUTS}.items():
        paths[option] = tmp_path / name
        os.mkfifo(paths[option])
        readers[option] = FifoReader(paths[option])
    run_both(paths)
    for option, reader in readers.items():
        data = reader.finish()
        assert file_type(paths[option]) == stat.S_IFIFO, option
        assert data, option
        looks_right(option, data)


def test_symlinks_are_followed_and_their_targets_replaced(tmp_path):
    (tmp_path / "real").mkdir()
    paths, targets = {}, {}
    for k, (option, name) in enumerate({**CHECK_OUTPUTS, **SCAN_OUTPUTS}.items()):
        targets[option] = tmp_path / "real" / name
        if k % 2 == 0:  # an existing file keeps its mode
            targets[option].write_bytes(b"old")
            targets[option].chmod(0o640)
        paths[option] = tmp_path / f"link-{name}"
        paths[option].symlink_to(targets[option])  # half of them point where nothing is yet
    run_both(paths)
    for k, option in enumerate(paths):
        assert file_type(paths[option]) == stat.S_IFLNK, option
        assert os.readlink(paths[option]) == str(targets[option])
        assert file_type(targets[option]) == stat.S_IFREG
        looks_right(option, targets[option].read_bytes())
        if k % 2 == 0:
            assert stat.S_IMODE(targets[option].stat().st_mode) == 0o640, option
    assert sorted(p.name for p in (tmp_path / "real").iterdir()) == sorted(
        t.name for t in targets.values())  # no temporary file left beside them


@pytest.fixture()
def char_device(tmp_path) -> Path:
    """A character device that discards what is written (see the module's docstring)."""
    if os.geteuid() == 0:
        node = tmp_path / "null"
        try:
            os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))
            os.close(os.open(node, os.O_WRONLY))
        except OSError as e:  # no CAP_MKNOD in the container, or a nodev mount
            pytest.skip(f"cannot make a character device in the test's folder ({e.strerror})")
        return node
    if not Path("/dev/null").is_char_device():
        pytest.skip("/dev/null is not a character device on this machine")
    return Path("/dev/null")


def test_a_character_device_is_written_in_place(char_device):
    before = os.stat(char_device)
    run_both({option: char_device for option in {**CHECK_OUTPUTS, **SCAN_OUTPUTS}})
    after = os.stat(char_device)
    assert stat.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev
    assert (after.st_ino, stat.S_IMODE(after.st_mode)) == (before.st_ino, stat.S_IMODE(before.st_mode))


def test_collision_matrix_writes_a_character_device_in_place(tmp_path, char_device):
    """-o names an SRDF to update when it is one; a device holds none: it is written, not read."""
    urdf = tmp_path / "arm.urdf"
    urdf.write_text(
        '<robot name="arm"><link name="base"><collision><geometry><box size="1 1 1"/></geometry>'
        '</collision></link><link name="tip"><collision><origin xyz="0 0 2"/><geometry>'
        '<box size="1 1 1"/></geometry></collision></link><joint name="j" type="revolute">'
        '<parent link="base"/><child link="tip"/><axis xyz="0 0 1"/>'
        '<limit lower="-1" upper="1" effort="1" velocity="1"/></joint></robot>')
    result = gjk("collision-matrix", urdf, "--samples", 20, "-o", char_device, "-q")
    assert result.exit_code == 0, result.output
    assert stat.S_ISCHR(os.stat(char_device).st_mode)


def test_a_socket_is_sent_the_report(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a short relative name: socket paths are limited to 108 bytes
    received = []
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind("report.sock")
        server.listen(1)
        server.settimeout(60)

        def serve():
            conn, _ = server.accept()
            with conn:
                received.append(b"".join(iter(lambda: conn.recv(65536), b"")))

        thread = threading.Thread(target=serve, daemon=True)
        thread.start()
        result = gjk("check", A, B, "--format", "json", "-o", "report.sock")
        thread.join(timeout=30)
    assert result.exit_code == 1, result.output
    assert file_type("report.sock") == stat.S_IFSOCK
    assert json.loads(received[0])["pairs"][0]["status"] == "collision"


def test_a_folder_is_refused_in_one_line(tmp_path):
    folder = tmp_path / "out"
    folder.mkdir()
    result = gjk("scan", A, B, "--write-baseline", folder)
    assert result.exit_code == 2 and "Traceback" not in result.stderr
    assert file_type(folder) == stat.S_IFDIR and not any(folder.iterdir())


def _gjk_process(*args, **kwargs):
    return subprocess.run([sys.executable, "-m", "gjkcli", *map(str, args)], cwd=kwargs.pop("cwd"),
                          env={**os.environ, "PYTHONPATH": str(Path(gjkcli.__file__).resolve().parents[1])},
                          timeout=120, **kwargs)


@pytest.mark.skipif(not (os.path.exists("/dev/stdout") and os.path.exists("/dev/stderr")),
                    reason="this machine has no /dev/stdout or /dev/stderr")
def test_dev_stdout_and_stderr_are_the_streams_they_name(tmp_path):
    """/dev/stdout redirected to a file: the same file afterwards, holding the report (a rename
    would leave the shell's stdout on an unlinked file); /dev/stderr a pipe, read by the caller."""
    # links in the test's folder to the devices' names: were they ever renamed over, the links
    # would be, not the machine's /dev/stdout
    (tmp_path / "stdout").symlink_to("/dev/stdout")
    (tmp_path / "stderr").symlink_to("/dev/stderr")
    out = tmp_path / "out.json"
    with open(out, "wb") as f:
        inode = os.fstat(f.fileno()).st_ino
        proc = _gjk_process("check", A, B, "--format", "json", "-o", "stdout", "--trace-json", "stderr",
                            cwd=tmp_path, stdout=f, stderr=subprocess.PIPE)
    assert proc.returncode == 1, proc.stderr
    assert out.stat().st_ino == inode and json.loads(out.read_bytes())["summary"]["collision"] == 1
    looks_right("--trace-json", proc.stderr)
    assert file_type(tmp_path / "stdout") == file_type(tmp_path / "stderr") == stat.S_IFLNK
    assert sorted(os.listdir(tmp_path)) == ["out.json", "stderr", "stdout"]


# -- modes follow the umask ------------------------------------------------------------------------


@pytest.fixture(params=[0o022, 0o077])
def umask(request):
    old = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(old)


def test_new_outputs_follow_the_umask(tmp_path, umask):
    paths = {option: tmp_path / name for option, name in {**CHECK_OUTPUTS, **SCAN_OUTPUTS}.items()}
    run_both(paths)
    pictures = tmp_path / "pictures"
    assert gjk("scan", A, B, "--png", pictures, "-q", "--together").exit_code == 1
    written = [*paths.values(), *pictures.iterdir()]
    assert len(written) == len(paths) + 1
    for path in written:
        assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask, (path.name, oct(umask))


def test_bcf_follows_the_umask_and_keeps_a_fifo(tmp_path):
    pytest.importorskip("ifcopenshell")
    from ifc_models import Box, write_model

    model = write_model(tmp_path / "two.ifc", [Box("IfcWall", "Wall", (0, 0, 0), (1000, 200, 1000)),
                                               Box("IfcBeam", "Beam", (500, 0, 500), (200, 1000, 200))])
    old = os.umask(0o027)
    try:
        result = gjk("scan", model, "--format", "bcf", "-o", tmp_path / "clash.bcfzip")
    finally:
        os.umask(old)
    assert result.exit_code == 1, result.output
    assert stat.S_IMODE((tmp_path / "clash.bcfzip").stat().st_mode) == 0o640
    fifo = tmp_path / "clash.fifo"
    os.mkfifo(fifo)
    reader = FifoReader(fifo)
    assert gjk("scan", model, "--format", "bcf", "-o", fifo).exit_code == 1
    assert reader.finish().startswith(b"PK") and file_type(fifo) == stat.S_IFIFO
