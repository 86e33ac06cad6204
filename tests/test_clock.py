"""gjkcli.clock: `--timings` books imports as a stage of their own, taken out of the stage that
first needed them. Each test runs in a fresh interpreter: the recorder wraps the import
machinery for the rest of its process, and the imports to time must not have happened yet."""
from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from fresh import python_c

SAMPLES = Path(__file__).resolve().parents[1] / "samples"


def run_python(code: str, cwd: Path) -> str:
    return python_c(textwrap.dedent(code), cwd=cwd)


def test_a_stage_s_imports_go_under_imports(tmp_path):
    """A module whose import takes at least 0.05 s (it sleeps), imported inside a stage: the
    stage keeps the rest, "imports" gets the import, and the two add up to the stage's time."""
    (tmp_path / "slow_module.py").write_text("import time\ntime.sleep(0.05)\n")
    out = run_python("""
        import sys, time
        sys.path.insert(0, ".")
        import builtins, importlib
        from gjkcli import clock
        originals = (builtins.__import__, importlib.import_module)
        timings = {}
        with clock.recorded():
            since = time.perf_counter()
            import slow_module
            now = clock.stage(timings, "load", since)
            after_load = dict(timings)
            import slow_module  # imported already: next to nothing to book
            clock.stage(timings, "hulls", now)
            imported = clock.imported()
        restored = (builtins.__import__, importlib.import_module) == originals
        print(repr((after_load, timings, now - since, imported, restored and not clock.recording())))
    """, tmp_path)
    after_load, timings, total, imported, restored = eval(out)
    assert restored  # the import machinery as it was
    assert after_load["imports"] >= 0.05 and after_load["load"] >= 0
    assert after_load["load"] + after_load["imports"] == pytest.approx(total, abs=1e-9)
    assert timings["hulls"] >= 0 and timings["imports"] - after_load["imports"] < 0.05
    assert imported == pytest.approx(timings["imports"], abs=1e-9)


def test_without_the_recorder_nothing_is_taken_out(tmp_path):
    (tmp_path / "slow_module.py").write_text("import time\ntime.sleep(0.05)\n")
    out = run_python("""
        import sys, time
        sys.path.insert(0, ".")
        from gjkcli import clock
        timings = {}
        since = time.perf_counter()
        import slow_module
        clock.stage(timings, "load", since)
        print(repr((timings, clock.recording())))
    """, tmp_path)
    timings, recording = eval(out)
    assert not recording and set(timings) == {"load"} and timings["load"] >= 0.05


@pytest.mark.parametrize("entry", [["-m", "gjkcli"], ["-c", "from gjkcli.__main__ import run; run()"]],
                         ids=["python -m gjkcli", "the gjk script"])
def test_timings_name_imports_first(entry, tmp_path):
    """`gjk check --timings` lists imports first, then the run's stages and the report."""
    done = subprocess.run([sys.executable, *entry, "check", str(SAMPLES / "clear_a.stl"),
                           str(SAMPLES / "clear_b.stl"), "--timings", "-q"], cwd=tmp_path,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    (line,) = [x for x in done.stderr.splitlines() if x.startswith("gjk: timings: ")]
    stages = dict(re.findall(r"(\w+) (\d+\.\d+) s", line))
    assert list(stages)[0] == "imports" and {"load", "hulls", "report"} <= set(stages)
    # the command line's own imports (click, gjk's modules, numpy) are most of a small check
    assert float(stages["imports"]) > 0
