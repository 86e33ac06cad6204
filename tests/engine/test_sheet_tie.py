"""An open surface exactly as deep inside a solid as the band: a tie, read as touching.

A sheet parallel to a box's top face, at a depth that floating point holds exactly (the
coordinates are multiples of powers of two), lies as deep as the band everywhere. The bound of
how deep an open surface reaches (`gjkcli.engine.sheet`) converged on the band from above and
never reached it, so the pair stayed undecided at the one band a coordinator is likeliest to
type: the offset the model was drawn with (a window frame 30 mm into its wall at a 30 mm band).
The bound now settles a piece within the distances' rounding of the band, as a move within the
band settles two closed parts whose surfaces then meet within the rounding; a point deeper than
the band by more than the rounding is still a collision. Judged by the construction: the depth
is the sheet's offset, exactly.
"""
from __future__ import annotations

import numpy as np
import pytest

trimesh = pytest.importorskip("trimesh")

from gjkcli.engine.exact import Mesh, exact_query  # noqa: E402
from gjkcli.pipeline.policy import settle  # noqa: E402
from gjkcli.tolerances import DEFAULT  # noqa: E402

PLACE = np.array([12.5, -40.25, 3.0])


def _pair(depth: float):
    box = trimesh.creation.box(extents=(1.0, 1.0, 1.0))
    box.apply_translation(PLACE + 0.5)
    z = 1.0 - depth  # exact: depth a power of two, under one
    sheet = np.array([(0.3, 0.3, z), (0.7, 0.3, z), (0.7, 0.7, z), (0.3, 0.7, z)]) + PLACE
    assert (PLACE[2] + 1.0) - sheet[0, 2] == depth  # the construction's depth, exactly
    return (Mesh(sheet, np.array([(0, 1, 2), (0, 2, 3)]), name="sheet"),
            Mesh(box.vertices, box.faces, name="box"))


@pytest.mark.parametrize("depth", [0.25, 0.125, 0.0625])
def test_a_sheet_as_deep_as_the_band_is_touching(depth):
    sheet, box = _pair(depth)
    r = settle(exact_query(sheet, box, tolerance=depth), sheet, box)
    assert r.status.value == "touching", r.note
    slack = DEFAULT.exact_snap_rel * max(sheet.size, box.size)
    assert depth <= r.depth_upper <= depth + 2 * slack


@pytest.mark.parametrize("depth", [0.25, 0.125, 0.0625])
def test_a_sheet_just_deeper_than_the_band_is_a_collision_and_just_shallower_touching(depth):
    sheet, box = _pair(depth)
    under = settle(exact_query(sheet, box, tolerance=depth * (1 - 1e-9)), sheet, box)
    assert under.status.value == "collision", under.note
    assert under.depth == pytest.approx(depth, rel=1e-12)
    over = settle(exact_query(sheet, box, tolerance=depth * (1 + 1e-9)), sheet, box)
    assert over.status.value == "touching", over.note
