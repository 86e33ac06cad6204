"""`--png` on 2D drawings (gjkcli.report.flatpng): the pictures decode, fill parts and leave their
holes open, and a scan writes one per violation."""
from __future__ import annotations

import io

import ezdxf
import numpy as np
import pytest
from click.testing import CliRunner

from gjkcli.cli import main
from gjkcli.pipeline import run
from gjkcli.report.png import check_png, scan_pngs


def pixels(data: bytes) -> np.ndarray:
    from matplotlib.image import imread

    return imread(io.BytesIO(data), format="png")


def drawing(path, with_hole: bool):
    doc = ezdxf.new()
    msp = doc.modelspace()
    msp.add_lwpolyline([(-10, -10), (10, -10), (10, 10), (-10, 10)], close=True)
    if with_hole:
        msp.add_circle((0, 0), 5)
    doc.saveas(path)
    return path


@pytest.mark.parametrize("with_hole", [True, False])
def test_check_picture_fills_the_part_and_leaves_the_hole_open(tmp_path, with_hole):
    a = drawing(tmp_path / "a.dxf", with_hole)
    doc = ezdxf.new()
    doc.modelspace().add_lwpolyline([(9, -1), (11, -1), (11, 1), (9, 1)], close=True)
    doc.saveas(tmp_path / "b.dxf")
    found = run.check(a, tmp_path / "b.dxf")
    img = pixels(check_png(found))
    assert img.shape[:2] == (640, 800)
    # the axes keep the data's aspect about their centre: the centre pixel is the data's centre
    # (x 0.5, y 0), inside the hole when there is one
    centre = img[int(round(640 * (1 - 0.58))), int(round(800 * 0.53)), :3]
    white = np.allclose(centre, 1.0, atol=0.02)
    assert white == with_hole
    # the collision's witness segment is drawn in the collision colour
    red = np.array([0xd6, 0x27, 0x28]) / 255
    assert (np.abs(img[:, :, :3] - red).max(axis=2) < 0.05).sum() > 20


def test_scan_writes_a_picture_per_violation(tmp_path):
    doc = ezdxf.new()
    msp = doc.modelspace()
    for x in (0, 9, 18.2):  # an overlap, then a gap of 0.2 under a clearance of 0.5
        msp.add_lwpolyline([(x, 0), (x + 10, 0), (x + 10, 10), (x, 10)], close=True)
    doc.saveas(tmp_path / "row.dxf")
    found = run.scan([tmp_path / "row.dxf"], run.Options(clearance=0.5))
    names = [name for name, data in scan_pngs(found)]
    assert len(names) == 2 and names[0].startswith("0001_")
    result = CliRunner().invoke(main, ["scan", str(tmp_path / "row.dxf"), "--clearance", "0.5",
                                       "--png", str(tmp_path / "pics"), "-q"], catch_exceptions=False)
    assert result.exit_code == 1
    written = sorted(p.name for p in (tmp_path / "pics").iterdir())
    assert written == sorted(names)
    assert all(pixels((tmp_path / "pics" / n).read_bytes()).shape[:2] == (640, 800) for n in written)

