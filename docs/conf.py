"""Sphinx configuration of gjk's docs: Markdown pages (MyST), the furo theme, autodoc for the API.

Build offline with warnings as errors, as CI and tests/docs/test_build.py do:

    sphinx-build -W -n --keep-going -b html docs docs/_build/html
"""
from __future__ import annotations

# The API pages document the installed gjk (`pip install ".[test]"` or `-e`), whose compiled
# core is built: the source tree alone has no extension modules to import, so it is never put on
# the path here, and the build runs as `sphinx-build` (not `python -m sphinx` from the checkout,
# which would put the checkout first).
import gjkcli

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
# NumPy-style docstrings give array shapes in the type field (`vertices : (n, 3) float64`, as
# STYLE.md asks); those are for people, not class names: render them as text, not as references.
napoleon_use_param = False
napoleon_use_rtype = False
nitpicky = True
# Nitpicky references that Sphinx cannot resolve offline (no intersphinx: the build uses no
# network), each named with why it is left unresolved.
nitpick_ignore_regex = [
    # numpy and the standard library are documented elsewhere; intersphinx would fetch their
    # inventories over the network, which the build does not use
    ("py:class", r"(numpy|np)\.ndarray|os\.PathLike"),
    # array shapes and dtypes in NumPy-style attribute types: `(n, 3) float64`, `(n + 1,) int32`
    ("py:class", r"\d+|[a-z]|n \+ 1|float64|int32"),
    # the compiled core's own types and private helpers, which are not part of the API
    ("py:class", r"_core\..*"),
    # the prepared scene's geometry a managed object holds (gjkcli/pipeline/prepared.py), internal
    ("py:class", r"(gjkcli\.pipeline\.prepared\.)?Geometry"),
    # named in the API's signatures and documented in their modules (gjkcli/engine/results.py,
    # gjkcli/api/manager.py), not rendered on the API page
    ("py:class", r"(gjkcli\.engine\.results\.)?(Status|TraceStep|PointCertificate|PlaneCertificate)"),
    ("py:class", r"gjkcli\.api\.manager\.Transform"),
    # an attribute type written as prose (Result.trace: "tuple of TraceStep, or None when not
    # requested"), which Sphinx splits at "or" into would-be class names
    ("py:class", r"None when not requested"),
]


def _prose_first_line(self):
    """A property's docstring starts with prose here, never Google's inline `type: text`.

    napoleon reads the part of a property docstring's first line before a colon as its type
    ("Diagonal of the box, inflation included: the length scale" would give the type "Diagonal
    of the box"); this project's docstrings use the colon in sentences.
    """
    lines = [self._lines.next(), *self._consume_to_end()]
    return "", self.__class__(self._dedent(lines), self._config).lines()


from sphinx.ext.napoleon.docstring import NumpyDocstring  # noqa: E402

NumpyDocstring._consume_inline_attribute = _prose_first_line
