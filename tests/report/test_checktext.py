"""The check report laid out without rich (`gjkcli.report.checktext.plain_check`) is, character
for character, what rich prints for a file or a pipe (`gjk check A B > out.txt`), or it declines
(None) and rich lays it out.

The findings are real runs on the samples (every verdict), then the same findings with names,
notes and errors drawn at random: short and long (tables wider than the console, titles longer
than a panel, words longer than a line), with markup-like brackets, spaces, tabs and non-ASCII
letters.
"""
from __future__ import annotations

import dataclasses
import io
import random
from pathlib import Path

import pytest
from rich.console import Console

from gjkcli.errors import Problem
from gjkcli.pipeline.run import Options, check
from gjkcli.report.checktext import plain_check
from gjkcli.report.table import render_check

SAMPLES = Path(__file__).resolve().parents[2] / "samples"

# (A, B, options): clear, touching, colliding, a required clearance, a part that is not convex
# (the hull's verdict marked conservative), the exact mode's triangles
RUNS = (
    ("clear_a.stl", "clear_b.stl", {}),
    ("touch_a.stl", "touch_b.stl", {}),
    ("collide_a.stl", "collide_b.stl", {}),
    ("clear_a.stl", "clear_b.stl", {"clearance": 10.0}),
    ("pocket_box.stl", "pocket_cube.stl", {}),
    ("pocket_box.stl", "pocket_cube.stl", {"mode": "hull"}),
    ("peg.stl", "ring.stl", {"mode": "exact"}),
)


def rich_text(found) -> str:
    """What `gjk check` wrote through rich for a file or a pipe (gjkcli.cli's table)."""
    console = Console(record=True, width=120, file=io.StringIO(), soft_wrap=True)
    console.print(render_check(found))
    return "".join(line.rstrip() + "\n" for line in console.export_text().splitlines())


@pytest.fixture(scope="module")
def runs():
    return [check(SAMPLES / a, SAMPLES / b, Options(**kw)) for a, b, kw in RUNS]


def test_the_samples_read_the_same_as_through_rich(runs):
    statuses = set()
    for found in runs:
        text = plain_check(found)
        assert text is not None, found.pairs[0].a  # short names: laid out without rich
        assert text == rich_text(found)
        statuses.update(p.result.status for p in found.pairs)
    assert len(statuses) >= 4  # clear, touching, collision, clearance at least, laid out here


ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789_-./[] "


def word(rng: random.Random, longest: int) -> str:
    text = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, longest))).strip() or "x"
    if rng.random() < 0.05:
        text += rng.choice(("é", "部品", "\t"))  # wide or special: rich's own layout
    return text


def renamed(found, rng: random.Random):
    """The findings with new object names, files, notes and errors."""
    longest = rng.choice((8, 30, 60, 120))
    names = {o.name: word(rng, longest) for o in found.objects}
    if len(set(names.values())) < len(names):
        names = {old: f"{new}{k}" for k, (old, new) in enumerate(names.items())}
    objects = tuple(dataclasses.replace(o, name=names[o.name], file=word(rng, longest)) for o in found.objects)
    pairs = tuple(dataclasses.replace(p, a=names[p.a], b=names[p.b]) for p in found.pairs)
    notes = tuple(" ".join(word(rng, 20) for _ in range(rng.randint(1, 30))) for _ in range(rng.randint(0, 2)))
    errors = tuple(Problem(word(rng, 40), word(rng, 90)) for _ in range(rng.randint(0, 1)))
    return dataclasses.replace(found, objects=objects, pairs=pairs, notes=notes, errors=errors,
                               elapsed=rng.uniform(0, 3), _index={o.name: k for k, o in enumerate(objects)})


def test_drawn_names_and_notes_read_the_same_as_through_rich_or_go_to_rich(runs):
    rng = random.Random(28)
    plain = narrowed = 0
    tries = 300
    for k in range(tries):
        found = renamed(runs[k % len(runs)], rng)
        text = plain_check(found)
        if text is not None:
            plain += 1
            assert text == rich_text(found), (k, [o.name for o in found.objects], found.notes)
            # an objects table narrowed to the console: a cell continued on a line of its own
            narrowed += any(line.startswith(" ") and "│" in line for line in text.split("╭")[0].splitlines())
    # both ways are taken: many drawn reports are laid out here (some with their table narrowed
    # and its cells broken over lines), the ones with wide characters or titles wider than a
    # panel by rich
    assert 0.15 * tries < plain < 0.9 * tries, plain
    assert narrowed >= 10, narrowed
