"""The server a LocalCluster's workers are forked from, started as the command starts
(`gjkcli.pipeline.workerserver.warm`): only for `--dask local[:N]`, and then a process forked
from it has the workers' modules imported before it imports anything itself (IfcOpenShell's
too for an IFC model), from the gjk the command runs."""
from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
from pathlib import Path

import pytest

import gjkcli
from gjkcli.pipeline import workerserver

# Where this process's gjk is: the checkout (an editable install) or site-packages (CI's)
HOME = Path(gjkcli.__file__).resolve().parents[1]


@pytest.mark.parametrize("argv, asks", [
    (["scan", "a.glb", "--dask", "local:2"], True),
    (["scan", "a.glb", "--dask=local"], True),
    (["check", "a.stl", "b.stl", "--dask", " local:3"], True),
    (["scan", "a.glb", "--dask", "tcp://scheduler:8786"], False),
    (["scan", "a.glb"], False),
    (["scan", "local:2"], False),  # a file so named, not the option's value
    (["scan", "a.glb", "--dask"], False),
])
def test_only_a_local_cluster_on_the_command_line_starts_the_server(argv, asks):
    assert workerserver.asks_local_cluster(argv) is asks


_CHILD = """
import json, multiprocessing, sys
from gjkcli.pipeline import workerserver

def imported(queue):
    import gjkcli
    wanted = workerserver.WORKER_MODULES + workerserver.IFC_MODULES
    queue.put([[m for m in wanted if m in sys.modules], gjkcli.__file__])

if __name__ == "__main__":
    started = workerserver.warm(sys.argv[1:])
    context = multiprocessing.get_context("forkserver")
    queue = context.Queue()
    child = context.Process(target=imported, args=(queue,))
    child.start()
    got = queue.get(timeout=120)
    child.join(timeout=120)
    print(json.dumps({"started": started, "modules": got[0], "gjk": got[1]}))
"""


@pytest.mark.parametrize("model", ["scene.glb", "model.IFC"])
def test_a_warm_server_forks_children_with_the_workers_modules_from_this_gjk(tmp_path, model):
    """In a fresh interpreter given `--dask local:2`: `warm` starts the server, and a child it
    forks has every module of WORKER_MODULES already (the server imported them), IfcOpenShell
    and the IFC reader too where an IFC model is named, and the gjk this process runs, even run
    from another folder."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        pytest.skip("no forkserver on this platform")
    ifc = model.lower().endswith(".ifc")
    if ifc:
        pytest.importorskip("ifcopenshell", reason="IFC needs IfcOpenShell (the ifc extra)")
    script = tmp_path / "child.py"
    script.write_text(_CHILD)
    done = subprocess.run([sys.executable, str(script), "scan", model, "--dask", "local:2"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(HOME)})
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["started"] is True
    assert got["modules"] == list(workerserver.WORKER_MODULES + (workerserver.IFC_MODULES if ifc else ()))
    assert Path(got["gjk"]).resolve().parents[1] == HOME


def test_without_a_local_cluster_nothing_is_started():
    if "forkserver" not in multiprocessing.get_all_start_methods():
        pytest.skip("no forkserver on this platform")
    assert workerserver.warm(["scan", "a.glb", "--dask", "tcp://scheduler:8786"]) is False
    assert workerserver.warm(["scan", "a.glb"]) is False


_ENDS = """
import multiprocessing, sys
from multiprocessing import forkserver
from gjkcli.pipeline import workerserver

if __name__ == "__main__":
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(sys.argv[1:])
    with workerserver.server_env():
        forkserver.ensure_running()
    child = context.Process(target=print, args=("forked",))
    child.start()
    child.join(timeout=120)
"""


@pytest.mark.parametrize("ends_at_once", [True, False])
def test_the_server_ends_with_the_command_without_finalizing_what_it_imported(tmp_path, ends_at_once):
    """With SERVER_END imported last, the server ends as soon as the command that started it
    does: an exit handler of a module it imported before never runs, and the command's output
    pipes close with the command (this test's run returns once they have). Without it, that
    handler runs: the server finalized everything it imported while it held the pipes."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        pytest.skip("no forkserver on this platform")
    mark = tmp_path / "finalized.mark"
    (tmp_path / "finalized_here.py").write_text(
        f"import atexit\natexit.register(lambda: open({str(mark)!r}, 'w').write('finalized'))\n")
    script = tmp_path / "ends.py"
    script.write_text(_ENDS)
    preload = ["finalized_here", *([workerserver.SERVER_END] if ends_at_once else [])]
    done = subprocess.run([sys.executable, str(script), *preload], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": f"{HOME}{os.pathsep}{tmp_path}"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["forked"]  # the server imported the modules and forked
    assert mark.exists() is not ends_at_once
