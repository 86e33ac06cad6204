"""Sphinx configuration of gjk's docs: Markdown pages (MyST), the furo theme, autodoc for the API.

Build offline with warnings as errors, as CI and tests/docs/test_build.py do:

    sphinx-build -W -n --keep-going -b html docs docs/_build/html
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import gjkcli  # noqa: E402  (the path above first)

project = "gjk"
author = "the gjk authors"
copyright = "the gjk authors"
release = version = gjkcli.__version__

extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.napoleon"]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "README.md", "benchmarks/*.md"]

# GitHub-style anchors for headings down to ###, so that `page.md#a-heading` links resolve.
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]

html_theme = "furo"
html_title = f"gjk {release}"
html_static_path: list[str] = []

autodoc_member_order = "bysource"
autodoc_typehints = "description"
napoleon_numpy_docstring = True
napoleon_google_docstring = False
nitpicky = True
# Nitpicky references that Sphinx cannot resolve offline (no intersphinx: the build uses no
# network), each named with why it is left unresolved.
nitpick_ignore_regex: list[tuple[str, str]] = []
