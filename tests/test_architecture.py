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


# -- no private names across modules, no import circles in the pipeline ---------------------------


def private_imports(path: Path, text: str) -> list[str]:
    """The underscore names `text` (the source of gjkcli module `path`) takes from another gjkcli
    module: `from gjkcli.x import _name`, or `x._name` of a gjkcli module or class it imported.
    A package's own private submodule (the engine's compiled `_core`) is its own business."""
    import ast

    package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    tree = ast.parse(text)
    found, imported = [], set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("gjkcli"):
            for alias in node.names:
                name = alias.name
                private = name.startswith("_") and not name.startswith("__")
                folder = ROOT / package.replace(".", "/")
                own_module = node.module == package and ((folder / f"{name}.pyx").exists()
                                                         or (folder / f"{name}.py").exists())
                if private and not own_module:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.module}.{name}")
                imported.add(alias.asname or name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("gjkcli"):
                    imported.add(alias.asname or alias.name.split(".")[0])
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and node.value.id in imported and node.attr.startswith("_") \
                and not node.attr.startswith("__"):
            found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value.id}.{node.attr}")
    return found


def test_no_private_name_is_imported_across_modules():
    found = [hit for f in sorted((ROOT / "gjkcli").rglob("*.py"))
             for hit in private_imports(f, f.read_text(encoding="utf-8"))]
    assert not found, "private names used across modules:\n" + "\n".join(found)


def test_a_private_import_is_caught():
    """The check can fail: a private name taken from another module, or read off it."""
    where = ROOT / "gjkcli" / "pipeline" / "flat.py"
    assert private_imports(where, "from gjkcli.pipeline.stages import _Answers\n")
    assert private_imports(where, "from gjkcli.pipeline import stages\nstages._allowed(None)\n")
    assert not private_imports(where, "from gjkcli.pipeline.stages import Run\n")
    assert private_imports(where, "from gjkcli.engine import _core\n")  # another package's core


def circles(graph, prefix: str) -> list[list[str]]:
    """The import circles among the modules under `prefix` (strongly connected components of
    more than one module, function-level imports included), by Tarjan's algorithm."""
    modules = sorted(m for m in graph.modules if m.startswith(prefix))
    edges = {m: sorted(x for x in graph.find_modules_directly_imported_by(m) if x.startswith(prefix))
             for m in modules}
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(m):
        index[m] = low[m] = len(index)
        stack.append(m)
        on.add(m)
        for x in edges[m]:
            if x not in index:
                visit(x)
                low[m] = min(low[m], low[x])
            elif x in on:
                low[m] = min(low[m], index[x])
        if low[m] == index[m]:
            component = []
            while True:
                x = stack.pop()
                on.discard(x)
                component.append(x)
                if x == m:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for m in modules:
        if m not in index:
            visit(m)
    return out


def test_the_pipeline_has_no_import_circle():
    """Modules around the run share `gjkcli.pipeline.stages`' public names; none imports the
    module that dispatches to it."""
    import grimp

    graph = grimp.build_graph("gjkcli")
    assert circles(graph, "gjkcli.pipeline.") == []
    # the check can fail: the Dask route importing the dispatcher back is a circle
    graph.add_import(importer="gjkcli.pipeline.flat", imported="gjkcli.pipeline.run")
    assert ["gjkcli.pipeline.flat", "gjkcli.pipeline.run"] in circles(graph, "gjkcli.pipeline.")
