"""benchmarks/tables.py: every benchmark script has its table on the docs page, and a script's
output is split into tables, captions and text as it printed them."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SPEC = importlib.util.spec_from_file_location("bench_tables", ROOT / "benchmarks" / "tables.py")
tables = importlib.util.module_from_spec(SPEC)
sys.modules[SPEC.name] = tables  # dataclasses look their module up there
SPEC.loader.exec_module(tables)


def test_every_benchmark_script_is_in_the_suite():
    scripts = {p.name for p in (ROOT / "benchmarks").glob("bench_*.py")}
    assert scripts == {b.script for b in tables.SUITE}
    assert all(b.what for b in tables.SUITE)


def test_the_docs_page_lists_every_benchmark():
    page = (ROOT / "docs" / "benchmarks" / "results.md").read_text(encoding="utf-8")
    for bench in tables.SUITE:
        assert f"## {bench.title}" in page, bench.name


def test_a_scripts_output_keeps_its_order_without_colours_or_banners():
    out = ("\x1b[32;1m\n*****\n******  Statistics on Transfer (Write)  ******\n\x1b[0m\n"
           "## the engine\n| a | b |\n|---|---|\n| 1 | 2 |\nratio 0.5\n| c |\n|---|\n| 3 |\n")
    parts = tables.split_output(out)
    assert [kind for kind, _ in parts] == ["caption", "table", "text", "table"]
    assert parts[0][1] == ["the engine"] and parts[2][1] == ["ratio 0.5"]
    assert tables.table_rows(parts[1][1]) == [["a", "b"], ["1", "2"]]
