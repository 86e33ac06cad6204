"""The overlap-volumes limit: the deepest collisions get their volume, the rest say why not."""
from __future__ import annotations

import numpy as np
import trimesh

from gjkcli import limits
from gjkcli.engine.results import Status
from gjkcli.pipeline.run import Options, scan


def test_the_deepest_collisions_get_volumes_up_to_the_limit(tmp_path):
    # five unit cubes, each overlapping the first by a different depth along x
    paths = []
    for k, shift in enumerate([0.0, 0.9, 0.7, 0.5, 0.3]):
        cube = trimesh.creation.box([1.0, 1.0, 1.0])
        cube.apply_translation([shift, 0.1 * k, 0.0])
        paths.append(tmp_path / f"cube{k}.stl")
        cube.export(paths[-1])
    found = scan(paths, Options(limits=limits.parse(["overlap-volumes=2"])))
    collisions = [p for p in found.pairs if p.status is Status.COLLISION]
    assert len(collisions) >= 4
    with_volume = [p for p in collisions if p.overlap_volume is not None]
    assert len(with_volume) == 2
    # the two with a volume are the two deepest, and their volumes are the box arithmetic
    depths = sorted((p.result.depth for p in collisions), reverse=True)
    assert sorted((p.result.depth for p in with_volume), reverse=True) == depths[:2]
    for p in with_volume:
        lo = np.maximum(*(np.asarray(r.bounds[0]) for r in found.objects if r.name in (p.a, p.b)))
        hi = np.minimum(*(np.asarray(r.bounds[1]) for r in found.objects if r.name in (p.a, p.b)))
        assert abs(p.overlap_volume - float(np.prod(hi - lo))) <= 1e-9
    for p in collisions:
        if p.overlap_volume is None:
            assert "overlap-volumes" in p.overlap_reason and "2 deepest" in p.overlap_reason


def test_no_overlap_volume_with_the_limit_at_zero(tmp_path, monkeypatch):
    """--limit overlap-volumes=0 is accepted: the same verdicts, no volume computed (the boolean
    is never called) and no note about volumes; other limits still refuse 0."""
    import pytest

    from gjkcli.mesh import overlap as overlaps

    paths = []
    for k, shift in enumerate([0.0, 0.5, 0.8]):
        cube = trimesh.creation.box([1.0, 1.0, 1.0])
        cube.apply_translation([shift, 0.1 * k, 0.0])
        paths.append(tmp_path / f"cube{k}.stl")
        cube.export(paths[-1])
    asked = scan(paths, Options())
    called = []
    monkeypatch.setattr(overlaps, "overlap", lambda *a: called.append(a))
    found = scan(paths, Options(limits=limits.parse(["overlap-volumes=0"])))
    assert not called
    assert [(p.a, p.b, p.status, p.result.depth) for p in found.pairs] == \
        [(p.a, p.b, p.status, p.result.depth) for p in asked.pairs]
    assert sum(p.status is Status.COLLISION for p in found.pairs) == 3
    assert all(p.overlap_volume is None and p.overlap_reason is None for p in found.pairs)
    assert all(p.overlap_volume is not None for p in asked.pairs if p.status is Status.COLLISION)
    for spec in ("triangles=0", "overlap-volumes=-1", "file-bytes=0"):
        with pytest.raises(ValueError, match="positive"):
            limits.parse([spec])


def test_overlap_volumes_zero_on_the_command_line(tmp_path):
    from click.testing import CliRunner

    from gjkcli.cli import main

    paths = []
    for k, shift in enumerate([0.0, 0.5]):
        cube = trimesh.creation.box([1.0, 1.0, 1.0])
        cube.apply_translation([shift, 0.0, 0.0])
        paths.append(str(tmp_path / f"cube{k}.stl"))
        cube.export(paths[-1])
    out = CliRunner().invoke(main, ["scan", *paths, "--together", "--limit", "overlap-volumes=0", "--format", "json"],
                             catch_exceptions=False)
    assert out.exit_code == 1, out.output
    assert '"overlap_volume":null' in out.output.replace(' ', '')
    bad = CliRunner().invoke(main, ["scan", *paths, "--limit", "triangles=0"], catch_exceptions=False)
    assert bad.exit_code == 2 and "Traceback" not in bad.output


def test_volumes_only_for_the_findings_a_report_shows(tmp_path):
    """Options.shown: the first N findings (most severe first) get their volume, the others none
    and no note; the command line sets it from the report (the table's rows, none for -q)."""
    from click.testing import CliRunner

    from gjkcli.cli import TABLE_ROWS, _shown, main

    paths = []
    for k in range(5):
        cube = trimesh.creation.box([1.0, 1.0, 1.0])
        cube.apply_translation([0.15 * k, 0.0, 0.0])  # every pair overlaps, depths differ
        paths.append(tmp_path / f"cube{k}.stl")
        cube.export(paths[-1])
    every = scan(paths, Options())
    first = scan(paths, Options(shown=3))
    assert [(p.a, p.b) for p in first.pairs] == [(p.a, p.b) for p in every.pairs]
    assert len(every.pairs) == 10 and all(p.overlap_volume is not None for p in every.pairs)
    assert [p.overlap_volume for p in first.pairs[:3]] == [p.overlap_volume for p in every.pairs[:3]]
    assert all(p.overlap_volume is None and p.overlap_reason is None for p in first.pairs[3:])
    assert _shown("scan", "table", None, False, False, None, None) == TABLE_ROWS
    assert _shown("scan", "table", None, False, True, None, None) is None  # --all-pairs
    assert _shown("scan", "json", "out.json", True, False, None, None) is None  # -q -o: the file lists all
    assert _shown("scan", "json", None, True, False, None, None) == 0  # -q: nothing shown
    assert _shown("scan", "table", None, True, False, "page.html", None) is None  # the page shows all
    assert _shown("check", "table", None, False, False, None, None) is None
    out = CliRunner().invoke(main, ["scan", *map(str, paths), "--together", "-q"], catch_exceptions=False)
    assert out.exit_code == 1 and out.output == ""
