"""The layering of the package, as the import-linter contracts in pyproject.toml write it.

cli > report > pipeline > scene > mesh > engine > tolerances, errors: each layer imports only
those below it; renderers read the findings model, never the run; nothing below the CLI imports
click, nothing below the reports rich.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def lint_imports(cwd: Path) -> subprocess.CompletedProcess:
    exe = shutil.which("lint-imports") or str(Path(sys.executable).parent / "lint-imports")
    return subprocess.run([exe, "--no-cache"], cwd=cwd, capture_output=True, text=True, timeout=300)


def test_the_layers_hold():
    out = lint_imports(ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "0 broken" in out.stdout


def test_an_import_up_the_layers_breaks_the_contract(tmp_path):
    """The contract can fail: a copy of the package whose engine imports the pipeline is refused."""
    shutil.copytree(ROOT / "gjkcli", tmp_path / "gjkcli",
                    ignore=shutil.ignore_patterns("*.so", "*.c", "__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    query = tmp_path / "gjkcli" / "engine" / "query.py"
    query.write_text(query.read_text() + "\nfrom gjkcli.pipeline import findings  # noqa\n")
    out = lint_imports(tmp_path)
    assert out.returncode != 0 and "gjkcli.engine.query -> gjkcli.pipeline.findings" in out.stdout
