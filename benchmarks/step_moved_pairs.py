"""How many pairs of bench_cache.py's "step-moved" scenario need OpenCASCADE's exact solids on
the cached re-run: each committed assembly scanned with a cache, then its copy with one instance
moved (`bench_cache.step_moved`) scanned with the same cache, in this process (`--jobs 1`), the
tessellated pairs' decisions counted: those the triangles' interval decides, and those that go on
to OpenCASCADE (a finer tessellation of the solids, `tessellated._finer`, or their exact
distance or common part, `tessellated._exact`).

    python benchmarks/step_moved_pairs.py
"""
from __future__ import annotations

import gzip
import importlib.util
import os
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _bench_cache():
    spec = importlib.util.spec_from_file_location("bench_cache", ROOT / "benchmarks" / "bench_cache.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> None:
    from click.testing import CliRunner

    from gjkcli.cli import main as gjk
    from gjkcli.pipeline import tessellated

    os.environ.pop("GJK_NO_CACHE", None)
    bench = _bench_cache()
    counts = {"decide": 0, "finer": 0, "exact": 0}
    calls = {name: getattr(tessellated, name) for name in ("decide", "_finer", "_exact")}

    def counted(name, key):
        def call(*args, **kwargs):
            counts[key] += 1
            return calls[name](*args, **kwargs)
        return call

    tessellated.decide = counted("decide", "decide")
    tessellated._finer = counted("_finer", "finer")
    tessellated._exact = counted("_exact", "exact")
    work = Path(tempfile.mkdtemp(prefix="gjk-moved-pairs-"))
    for name in bench.STEP_FILES:
        path = ROOT / "tests" / "data" / "third_party" / name
        if path.suffix == ".gz":
            unpacked = work / path.stem
            unpacked.write_bytes(gzip.decompress(path.read_bytes()))
            path = unpacked
        moved = bench.step_moved(path.read_text(encoding="latin-1"))
        if moved is None:
            print(f"{path.name}: no instance placement to move")
            continue
        after = work / f"moved-{path.name}"
        after.write_text(moved, encoding="latin-1")
        cache = work / f"cache-{path.name}"
        runner = CliRunner()
        first = runner.invoke(gjk, ["scan", str(path), "--format", "json", "--jobs", "1",
                                    "--cache-dir", str(cache)], catch_exceptions=False)
        for key in counts:
            counts[key] = 0
        second = runner.invoke(gjk, ["scan", str(after), "--format", "json", "--jobs", "1",
                                     "--cache-dir", str(cache)], catch_exceptions=False)
        print(f"{path.name}: exit {first.exit_code}, {second.exit_code}; the re-run decided "
              f"{counts['decide']} tessellated pairs past their hulls, {counts['finer']} tessellated "
              f"again, {counts['exact']} on the exact solids")


if __name__ == "__main__":
    main()
