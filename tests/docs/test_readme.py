"""The README stays short and still holds what CI runs: the two commands at the top (.ci/run runs
the same install, check and test commands), and links that lead somewhere."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"


def test_the_readme_is_about_10_kb_at_most():
    assert README.stat().st_size <= 10 * 1024, README.stat().st_size


def test_the_readme_holds_the_commands_ci_runs():
    text = README.read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    first = re.search(r"```sh\n(.*?)```", text, re.S).group(1)
    install = "pip install . && gjk check samples/pocket_box.stl samples/pocket_cube.stl"
    assert install in first
    assert 'pip install ".[test]" && pytest' in first
    assert "pip install -q .\ngjk check samples/pocket_box.stl samples/pocket_cube.stl" in ci
    assert 'pip install -q ".[test]"' in ci and "\npytest\n" in ci


def test_the_readme_links_lead_to_files_in_the_repository():
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README.read_text(encoding="utf-8"))
    local = [link for link in links if not re.match(r"[a-z]+://", link)]
    assert len(local) >= 10
    missing = [link for link in local if not (ROOT / link).exists()]
    assert not missing, missing


def _tables():
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location("bench_tables", ROOT / "benchmarks" / "tables.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_the_readme_speed_section_is_what_the_benchmark_pages_say():
    """Every figure of the README's speed section comes from a committed benchmark page
    (benchmarks/tables.py writes both): a page rewritten without the README fails here."""
    tables = _tables()
    text = README.read_text(encoding="utf-8")
    start, end = text.index(tables.SPEED_START), text.index(tables.SPEED_END)
    assert text[start: end + len(tables.SPEED_END)] == tables.speed_section(ROOT / "docs" / "benchmarks")
    assert "not measured" not in text[start:end]


def test_the_speed_section_reads_the_figures_it_names(tmp_path):
    """Each headline's pattern finds its figure in a page as its script prints it."""
    tables = _tables()
    (tmp_path / "api.md").write_text("manager ratio (gjk / trimesh, total): 0.21\n"
                                     "manager ratio (shared meshes) (gjk / trimesh, total): 0.19\n"
                                     "moves ratio (gjk / trimesh): 0.3\n")
    (tmp_path / "poses.md").write_text("| gjk (whole process) | 0.72 | 0.71 | 0.24 | 0.29 | 0.32 |\n")
    section = tables.speed_section(tmp_path)
    assert "| 0.21 |" in section and "| 0.19 |" in section and "| 0.3 |" in section
    # scan, the five STEP assemblies, the STEP corpus, start-up
    assert "| 0.29 |" in section and section.count("not measured") == 4
