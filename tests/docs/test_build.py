"""The docs site builds offline with warnings as errors, as CI builds it.

`sphinx-build -W -n --keep-going -b html docs OUT`: every warning (a broken link between pages, a
heading anchor that is not there, a page outside the table of contents, an API name autodoc cannot
import, a nitpicky reference that does not resolve) fails the build, and so this test.
"""
from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"

MISSING = [name for name in ("sphinx", "myst_parser", "furo") if importlib.util.find_spec(name) is None]


@pytest.mark.skipif(bool(MISSING), reason=f"the docs extra is not installed ({', '.join(MISSING)}): "
                    'pip install ".[docs]"')
def test_the_docs_build_with_warnings_as_errors(tmp_path):
    out = tmp_path / "html"
    done = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "-n", "--keep-going", "-q", "-b", "html",
         "-d", str(tmp_path / "doctrees"), str(DOCS), str(out)],
        capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    assert not done.stderr.strip(), done.stderr
    pages = {p.stem for p in DOCS.glob("*.md")}
    built = {p.stem for p in out.glob("*.html")}
    assert pages <= built, pages - built
    # the API reference was generated from the docstrings, not left empty
    api = (out / "api.html").read_text(encoding="utf-8")
    assert "CollisionManager.add_object" in api
