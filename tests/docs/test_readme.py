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
