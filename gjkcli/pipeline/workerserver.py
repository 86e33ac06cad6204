"""The process a local cluster's workers and scheduler are forked from (multiprocessing's forkserver), started
as the command starts when it asks for one (`warm`), so that the server imports the workers'
modules on the other core while the command imports its own.

`gjkcli.pipeline.distributed` forks a `--dask local[:N]` cluster's worker processes (and a
nanny's restart of one) from one server process that imported WORKER_MODULES once, instead of
each worker started afresh importing Python, distributed, NumPy and gjk by itself. Started by
the cluster, that server's imports came after the command's own, one after the other: the
cluster took 0.55 s to have its two workers, 0.17 s once the server had started a second
before (ISSUE_021's scan on local:2). `warm` starts it from `gjkcli.__main__`, before anything
heavy is imported there; the cluster then finds it running. Where the command line names an IFC
model, the server imports IfcOpenShell too, once, instead of each worker at its first share.
ISSUE_021 on local:2, whole processes in alternating pairs: 0.89 of the wall time with the
server started early (6 pairs), and 0.89 again with IfcOpenShell in it (10 pairs), the same JSON.
The cluster's scheduler runs in a process forked from it too (`serve_scheduler`), not in the
command's. Only the standard library here (and gjk's command-line reader,
`gjkcli.mesh.cad_process`), but for what the scheduler's own process imports.
"""
from __future__ import annotations

import contextlib
import os
from pathlib import Path

__all__ = ["WORKER_MODULES", "IFC_MODULES", "asks_local_cluster", "server_env", "preload", "warm"]

# What a LocalCluster's worker processes import before their first task: distributed and the
# modules of the load and tile tasks.
WORKER_MODULES = ("distributed", "gjkcli.pipeline.worktasks", "gjkcli.scene.objects", "gjkcli.mesh.load",
                  "gjkcli.mesh.gltf", "gjkcli.pipeline.prepared", "gjkcli.engine.query",
                  "gjkcli.scene.broadphase")


# ... and, where the command line names an IFC model, IfcOpenShell and the IFC reader (about
# 0.3 s a worker otherwise, at its first share of the model). Not IfcOpenShell's selector
# (a third of IfcOpenShell's import, its grammar built): only a manifest's `select` queries
# read it, and the workers are forked only once the server has imported these.
IFC_MODULES = ("ifcopenshell", "ifcopenshell.geom", "ifcopenshell.util.unit", "ifcopenshell.util.schema",
               "gjkcli.mesh.ifc")
_IFC_SUFFIXES = (".ifc", ".ifczip")

# ... and last, the module that has the server end at once when the command does
# (`gjkcli.pipeline.serverend`).
SERVER_END = "gjkcli.pipeline.serverend"


def asks_local_cluster(argv: list) -> bool:
    """Whether the command line `argv` (without the program) scans on a LocalCluster:
    `--dask local` or `--dask local:N` (either spelling). A manifest's or settings file's
    `dask` is not read here: that cluster starts its server when it starts."""
    from gjkcli.mesh.cad_process import option_values

    return any(value.strip() == "local" or value.strip().startswith("local:")
               for value in option_values(argv, "--dask"))


@contextlib.contextmanager
def server_env():
    """Within the block, the environment a server started then is given: the gjk this process
    runs first on its path, so that the workers run the client's code, and no working folder
    before it (Python's `-c` puts one first, and a checkout's sources there, uncompiled, would
    be imported instead: PYTHONSAFEPATH, Python 3.11 on). The server imports from its own
    sys.path, not this process's."""
    import gjkcli

    root = str(Path(gjkcli.__file__).resolve().parents[1])
    before = os.environ.get("PYTHONPATH")
    safe = os.environ.get("PYTHONSAFEPATH")
    os.environ["PYTHONPATH"] = root if not before else root + os.pathsep + before
    os.environ["PYTHONSAFEPATH"] = "1"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = before
        if safe is None:
            os.environ.pop("PYTHONSAFEPATH", None)
        else:
            os.environ["PYTHONSAFEPATH"] = safe


def preload(context, argv: list = ()) -> None:
    """Have the server of the multiprocessing `context` import WORKER_MODULES when it starts,
    and IFC_MODULES when the command line `argv` names an IFC model, then SERVER_END (a server
    already running keeps what it imported; one that cannot import a module goes on without
    it)."""
    ifc = any(str(arg).lower().endswith(_IFC_SUFFIXES) for arg in argv)
    context.set_forkserver_preload([*WORKER_MODULES, *(IFC_MODULES if ifc else ()), SERVER_END])


def warm(argv: list) -> bool:
    """Start the server now when `argv` asks for a LocalCluster and forkserver is available
    here; whether it was started. The server imports WORKER_MODULES in its own process while
    this one goes on."""
    import multiprocessing

    if not asks_local_cluster(argv) or "forkserver" not in multiprocessing.get_all_start_methods():
        return False
    from multiprocessing import forkserver

    preload(multiprocessing.get_context("forkserver"), argv)
    with server_env():
        forkserver.ensure_running()
    return True


def serve_scheduler(conn, log_level: int) -> None:
    """A LocalCluster's scheduler in a process of its own, forked from the server
    (`gjkcli.pipeline.distributed.connect`): sends its address through the pipe end `conn`,
    then runs until the cluster closes it, or until the pipe's other end is closed (the command
    gone, however it ended). distributed's log lines below `log_level` stay in it."""
    import asyncio
    import logging

    from distributed import Scheduler

    for name in ["distributed", *(n for n in logging.root.manager.loggerDict if n.startswith("distributed."))]:
        logging.getLogger(name).setLevel(log_level)

    async def main() -> None:
        loop = asyncio.get_running_loop()
        # its HTTP routes (always served) on a free port: the default, 8787, may be taken
        async with Scheduler(host="127.0.0.1", port=0, dashboard=False, dashboard_address="127.0.0.1:0") as scheduler:
            gone = loop.create_future()
            loop.add_reader(conn.fileno(), lambda: gone.done() or gone.set_result(None))
            conn.send(scheduler.address)
            await asyncio.wait([gone, asyncio.ensure_future(scheduler.finished())],
                               return_when=asyncio.FIRST_COMPLETED)

    asyncio.run(main())
