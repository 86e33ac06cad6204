"""`gjk check --trace --start-direction X,Y` on the committed dyn4j sample (samples/dyn4j): the
trace's numbers as docs/trace.md walks through them, beside the article's worked example."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from scipy.spatial import ConvexHull

from gjkcli.cli import main

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "dyn4j"
SHAPE1 = np.array([(4, 11), (9, 9), (4, 5)], float)
SHAPE2 = np.array([(5, 7), (12, 7), (10, 2), (7, 3)], float)


def gjk(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def exact_depth() -> float:
    """The origin's distance to the boundary of the exact A - B (qhull on every difference)."""
    hull = ConvexHull((SHAPE1[:, None] - SHAPE2[None]).reshape(-1, 2))
    return float(-hull.equations[:, 2].max())


def test_the_trace_from_the_articles_start_direction():
    r = gjk("check", SAMPLE / "shape1.svg", SAMPLE / "shape2.svg", "--trace", "--start-direction", "1,-1",
            "--format", "json")
    assert r.exit_code == 1, r.output  # the shapes overlap: a collision
    pair = json.loads(r.stdout)["pairs"][0]
    assert pair["status"] == "collision"
    gjk_steps = [s for s in pair["trace"] if s["phase"] == "gjk"]
    epa_steps = [s for s in pair["trace"] if s["phase"] == "epa"]
    # iteration 0: the article's first support point, (9, 9) - (5, 7) = (4, 2)
    assert gjk_steps[0]["point_a"] == [9, 9] and gjk_steps[0]["point_b"] == [5, 7]
    assert gjk_steps[0]["w"] == [4, 2]
    # iteration 1: the engine searches along -v = (-4, -2) where the article negates d; both
    # find (4, 5) - (12, 7) = (-8, -2) (the article only after (-6, 9))
    assert gjk_steps[1]["direction"] == [-4, -2] and gjk_steps[1]["w"] == [-8, -2]
    assert gjk_steps[1]["feature"] == "edge" and gjk_steps[1]["lambdas"] == pytest.approx([0.65, 0.35])
    # iteration 2: square to the edge towards the origin, (0.2, -0.6), the article's (32, -96)
    # scaled; (4, 5) - (5, 7) = (-1, -2) closes a triangle round the origin, as in the article
    assert gjk_steps[2]["direction"] == pytest.approx([0.2, -0.6], abs=1e-15)
    assert gjk_steps[2]["w"] == [-1, -2] and gjk_steps[2]["exit"] == "origin enclosed"
    assert len(gjk_steps) == 3
    # EPA: two expansions to the exact depth, its normal along (5, -6.25)/|.|
    assert [s["w"] for s in epa_steps] == [[-6, 9], [-1, -2]]
    assert epa_steps[-1]["exit"] == "converged"
    assert pair["depth"] == pytest.approx(exact_depth(), abs=1e-12)
    assert pair["depth"] == pytest.approx(0.937042571332, abs=1e-12)


def test_the_narration_names_the_steps():
    r = gjk("check", SAMPLE / "shape1.svg", SAMPLE / "shape2.svg", "--trace", "--start-direction", "1,-1")
    text = " ".join(r.stdout.split())  # the terminal wraps lines
    assert "Their difference w0 = a - b = (4, 2)" in text
    assert "the origin lies inside the triangle w0-w1-w2" in text
    assert "the polygon grows to 4 edges" in text


@pytest.mark.parametrize("value", ["0,0", "1", "a,b", "1,2,3", "nan,1"])
def test_a_bad_start_direction_is_a_usage_error(value):
    r = gjk("check", SAMPLE / "shape1.svg", SAMPLE / "shape2.svg", "--start-direction", value)
    assert r.exit_code == 2 and "--start-direction" in r.output


def test_start_direction_on_3d_parts_is_an_input_error(tmp_path):
    import trimesh

    for k in range(2):
        trimesh.creation.box().export(tmp_path / f"{k}.stl")
    r = gjk("check", tmp_path / "0.stl", tmp_path / "1.stl", "--start-direction", "1,-1")
    assert r.exit_code == 2
    assert "--start-direction" in r.stderr and "2D" in r.stderr and len(r.stderr.strip().splitlines()) == 1
