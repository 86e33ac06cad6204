"""`--png`: pictures drawn by matplotlib's Agg canvas, without a browser or a display.

The files are read back as PNGs (Pillow): their size, that they are not blank (the spread of
their grey levels), and for a scan one file per violation named after its pair."""
from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from PIL import Image

import gjkcli
from gjkcli.cli import main
from gjkcli.pipeline import run as pipeline
from gjkcli.report.png import DPI, SIZE_INCHES, picture_name

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
SIZE = (int(SIZE_INCHES[0] * DPI), int(SIZE_INCHES[1] * DPI))


def read_png(path: Path) -> np.ndarray:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    image = Image.open(io.BytesIO(data))
    image.verify()  # a whole, valid PNG
    return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))


def test_check_writes_one_picture_without_a_display(tmp_path):
    out = tmp_path / "pair.png"
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "MPLBACKEND")}
    env["PYTHONPATH"] = str(Path(gjkcli.__file__).resolve().parents[1])
    code = ("import sys; from gjkcli.cli import main; sys.argv = ['gjk', 'check', "
            f"{str(SAMPLES / 'collide_a.stl')!r}, {str(SAMPLES / 'collide_b.stl')!r}, '--png', {str(out)!r}, '-q']; main()")
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert r.returncode == 1, r.stderr  # the pair collides
    pixels = read_png(out)
    assert pixels.shape[:2] == (SIZE[1], SIZE[0])
    assert pixels.std() > 20  # parts, not a blank canvas
    # the overlap solid's colour is in the picture
    assert np.any(np.all(np.abs(pixels.astype(int) - [0xe6, 0x00, 0x7e]) < 40, axis=2))


def test_scan_writes_one_picture_per_violation(tmp_path):
    files = [SAMPLES / n for n in ("collide_a.stl", "collide_b.stl", "touch_a.stl", "clear_a.stl")]
    folder = tmp_path / "new" / "pictures"
    r = CliRunner().invoke(main, ["scan", *map(str, files), "--together", "--png", str(folder), "-q"], catch_exceptions=False)
    assert r.exit_code == 1 and "drew" not in r.output  # under the cap: every violation, no note
    found = pipeline.scan([str(f) for f in files], pipeline.Options(jobs=1))
    violations = [p for p in found.pairs if p.violation]
    assert 2 <= len(violations) < len(found.pairs) + 1
    names = sorted(p.name for p in folder.iterdir())
    assert names == sorted(picture_name(k, p) for k, p in enumerate(violations))
    for name, p in zip(names, violations):
        assert p.a.replace(".stl", "") in name and p.b.replace(".stl", "") in name
    for path in folder.iterdir():
        pixels = read_png(path)
        assert pixels.shape[:2] == (SIZE[1], SIZE[0]) and pixels.std() > 20


def test_picture_names_are_safe_files():
    from gjkcli.pipeline.findings import Finding

    p = Finding(a="../etc/passwd", b="a b\nc", result=None)
    name = picture_name(2, p)
    assert "/" not in name and "\n" not in name and name.startswith("0003_") and name.endswith(".png")


def test_png_refuses_an_input(tmp_path):
    a = tmp_path / "a.stl"
    a.write_bytes((SAMPLES / "collide_a.stl").read_bytes())
    r = CliRunner().invoke(main, ["check", str(a), str(SAMPLES / "collide_b.stl"), "--png", str(a)])
    assert r.exit_code == 2 and "refusing to write over it" in r.output
    assert a.read_bytes() == (SAMPLES / "collide_a.stl").read_bytes()


# -- the cap, the note, the progress bar and Ctrl-C ------------------------------------------------


def run_gjk(*args, cwd, **popen):
    env = {**os.environ, "PYTHONPATH": str(Path(gjkcli.__file__).resolve().parents[1])}
    return subprocess.Popen([sys.executable, "-m", "gjkcli", *map(str, args)], cwd=cwd, env=env, **popen)


def test_scan_draws_the_most_severe_violations_up_to_the_limit(tmp_path):
    """`--limit pngs=N`: the first N violations in report order (the most severe), a note saying
    how many of how many, and a bar on stderr when it is a terminal (a pty here)."""
    import pty

    from gjkcli import limits

    assert limits.DEFAULT.pngs == 100 and limits.parse(["pngs=7"]).pngs == 7
    found = pipeline.scan([str(SAMPLES)], pipeline.Options(jobs=1, recurse=False))
    violations = [p for p in found.pairs if p.violation]
    assert len(violations) > 5  # else the cap would not be tested
    folder = tmp_path / "pictures"
    leader, follower = pty.openpty()
    proc = run_gjk("scan", SAMPLES, "--no-recurse", "--together", "--png", folder, "--limit", "pngs=5", cwd=tmp_path,
                   stdout=subprocess.DEVNULL, stderr=follower)
    os.close(follower)
    err = b""
    while True:  # the terminal's output until the process closes it
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        err += chunk
    os.close(leader)
    assert proc.wait(timeout=300) == 1
    text = err.decode("utf-8", "replace")
    assert sorted(p.name for p in folder.iterdir()) == [picture_name(k, p) for k, p in enumerate(violations[:5])]
    assert f"drew 5 pictures of {len(violations)} violations" in text and "--limit pngs=N" in text
    assert "drawing pictures" in text  # the bar
    r = CliRunner().invoke(main, ["scan", str(SAMPLES), "--no-recurse", "--png", str(tmp_path / "x"), "--limit", "pngs=0"])
    assert r.exit_code == 2 and "positive" in r.output and not (tmp_path / "x").exists()


def test_ctrl_c_while_drawing_removes_the_pictures_of_the_run(tmp_path):
    """A real SIGINT once the first pictures are written: exit 130, and the folders are as they
    were: the pictures this run wrote and the folders it made are gone, an earlier file stays."""
    keep = tmp_path / "keep"
    keep.mkdir()
    (keep / "old.txt").write_text("an earlier file\n")
    folder = keep / "made" / "pictures"
    proc = run_gjk("scan", SAMPLES, "--no-recurse", "--together", "--png", folder, "-q", cwd=tmp_path,
                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    waited = time.monotonic() + 240
    while time.monotonic() < waited and proc.poll() is None:
        if folder.is_dir() and len([p for p in folder.iterdir() if p.suffix == ".png"]) >= 2:
            break
        time.sleep(0.005)
    assert proc.poll() is None, "the run ended before two pictures were written"
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, (proc.returncode, err)
    assert "Traceback" not in err and err.strip().splitlines()[-1] == "gjk: interrupted"
    assert sorted(p.name for p in keep.iterdir()) == ["old.txt"]  # no picture, no folder, no temporary
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep"]


def test_an_interrupt_in_process_removes_the_pictures_too(tmp_path, monkeypatch):
    """Without the entry's SIGINT handler (CliRunner, an embedding program), a KeyboardInterrupt
    after two pictures ends the run with 130 and takes the run's pictures and folder with it."""
    from gjkcli.report import png

    files = [str(SAMPLES / n) for n in ("collide_a.stl", "collide_b.stl", "touch_a.stl", "touch_b.stl")]
    drawn = list(png.scan_pngs(pipeline.scan(files, pipeline.Options(jobs=1))))
    assert len(drawn) >= 3

    def interrupted(found):
        yield from drawn[:2]
        raise KeyboardInterrupt

    monkeypatch.setattr(png, "scan_pngs", interrupted)
    folder = tmp_path / "pictures"
    r = CliRunner().invoke(main, ["scan", *files, "--together", "--png", str(folder), "-q"])
    assert r.exit_code == 130 and "interrupted" in r.output
    assert list(tmp_path.iterdir()) == []


def test_a_small_clearance_gets_a_view_zoomed_on_its_witness_points():
    """The pocket pair is 1/256 apart in a box 8 wide: the whole view cannot show the gap, so a
    second view spans ZOOM_SPAN times the gap each way from the witness points' midpoint, and it
    shows both parts' triangles cut to that cube."""
    from gjkcli.report.png import ZOOM_SPAN, figure

    found = pipeline.check(str(SAMPLES / "pocket_box.stl"), str(SAMPLES / "pocket_cube.stl"),
                           pipeline.Options(mode="exact"))
    (pair,) = found.pairs
    a, b = np.asarray(pair.result.point_a), np.asarray(pair.result.point_b)
    gap = float(np.linalg.norm(a - b))
    assert gap == pytest.approx(1 / 256, rel=1e-9)
    fig = figure(found, found.pairs, [o.name for o in found.objects])
    whole, zoomed = fig.axes
    centre = 0.5 * (a + b)
    for k, limits in enumerate((zoomed.get_xlim3d(), zoomed.get_ylim3d(), zoomed.get_zlim3d())):
        assert limits == pytest.approx((centre[k] - ZOOM_SPAN * gap, centre[k] + ZOOM_SPAN * gap), abs=1e-12)
    assert whole.get_zlim3d()[1] - whole.get_zlim3d()[0] > 1000 * gap  # the whole box
    # both parts are in the zoomed view (their triangles cut to it), with the witness segment
    from mpl_toolkits.mplot3d.art3d import Line3D, Poly3DCollection

    assert sum(isinstance(c, Poly3DCollection) for c in zoomed.collections) == 2
    assert sum(isinstance(line, Line3D) for line in zoomed.lines) == 1


def test_parts_far_apart_or_touching_get_no_zoomed_view():
    from gjkcli.report.png import figure

    for a, b in (("clear_a.stl", "clear_b.stl"), ("touch_a.stl", "touch_b.stl")):
        found = pipeline.check(str(SAMPLES / a), str(SAMPLES / b))
        assert len(figure(found, found.pairs, [o.name for o in found.objects]).axes) == 1


def test_zoom_window_spans_a_few_gaps_or_nothing():
    from gjkcli.report.png import ZOOM_BELOW, zoom_window

    centre, half = zoom_window((0, 0, 0), (0, 0, 0.01), 8.0)
    assert np.allclose(centre, (0, 0, 0.005)) and half == pytest.approx(0.03)
    assert zoom_window((0, 0, 0), (0, 0, ZOOM_BELOW * 8.0), 8.0) is None  # seen in the whole view
    assert zoom_window((0, 0, 0), (0, 0, 0), 8.0) is None  # one point: nothing to zoom on
    assert zoom_window((0, 0, np.nan), (0, 0, 0), 8.0) is None


def test_a_shallow_collision_is_zoomed_on_too(tmp_path):
    """The witness points of a collision are its deepest points: 0.01 deep in a box 8 wide, the
    zoomed view spans 3 depths each way."""
    import trimesh

    from gjkcli.report.png import ZOOM_SPAN, figure

    trimesh.creation.box((8, 8, 8)).export(tmp_path / "box.stl")
    cube = trimesh.creation.box((1, 1, 1))
    cube.apply_translation((0, 0, 4.49))
    cube.export(tmp_path / "cube.stl")
    found = pipeline.check(str(tmp_path / "box.stl"), str(tmp_path / "cube.stl"))
    (pair,) = found.pairs
    assert pair.status == "collision"
    depth = float(np.linalg.norm(np.subtract(pair.result.point_a, pair.result.point_b)))
    assert depth == pytest.approx(0.01, rel=1e-5)
    _, zoomed = figure(found, found.pairs, [o.name for o in found.objects]).axes
    low, high = zoomed.get_zlim3d()
    assert high - low == pytest.approx(2 * ZOOM_SPAN * depth)
