"""OpenCASCADE in a process of its own (`gjkcli.mesh.cad_process`): the `gjk` command given STEP
files forks it as it starts, asks it for the parts, the refinement and the common volumes, and
gives the report it gives without it; where it cannot serve, the command does the work."""
from __future__ import annotations

import gzip
import json
import os
import pickle
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from fresh import entry_then_imported

from gjkcli.engine.exact import Mesh, exact_query
from gjkcli.mesh import cad_process

STEP_DIR = Path(__file__).resolve().parents[1] / "data" / "third_party" / "step"
BOX_SIDES = STEP_DIR.parent / "box_sides.STEP.gz"

# gjk's entry, as the `gjk` script calls it; then whether this process imported OpenCASCADE itself
RUN = entry_then_imported('OCP.OCP')


@pytest.mark.parametrize("argv, wanted", [
    (["scan", "a.step"], True),
    (["check", "a.step", "b.stp"], True),
    (["scan", "a.step", "-j", "2"], True),
    (["scan", "a.step", "-j", "1"], False),
    (["scan", "a.step", "-j1"], False),
    (["scan", "a.step", "--jobs", "1"], False),
    (["scan", "a.step", "--jobs=1"], False),
    (["scan", "a.step", "--dask", "tcp://host:8786"], False),
    (["scan", "a.step", "--debug"], False),
    (["collision-matrix", "robot.urdf"], False),
    (["--version"], False),
    ([], False),
])
def test_the_process_is_wanted_for_scan_and_check_on_more_than_one_core(argv, wanted):
    assert cad_process.wanted(argv) is wanted


def test_no_step_file_among_the_arguments_starts_nothing(tmp_path):
    (tmp_path / "a.stl").write_text("solid a\nendsolid a\n")
    assert not cad_process.start(["scan", str(tmp_path / "a.stl"), str(tmp_path / "missing.step")])
    assert not cad_process.serving()


def test_a_mesh_pickles_as_its_arrays_and_answers_alike():
    """The refinement's pairs go to the OpenCASCADE process pickled: a Mesh as its vertices,
    faces, watertightness and name, its hierarchy built again there."""
    rng = np.random.default_rng(7)
    box = np.array([[x, y, z] for x in (0, 1) for y in (0, 1) for z in (0, 1)], dtype=float)
    faces = np.array([[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
                      [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]])
    a = Mesh(box, faces, name="a")
    back = pickle.loads(pickle.dumps(a))
    assert back.name == "a" and back.watertight == a.watertight and back.solid
    assert np.array_equal(back.vertices, a.vertices) and np.array_equal(back.faces, a.faces)
    for _ in range(5):
        b = Mesh(box * 0.5 + rng.uniform(-2, 2, 3), faces, name="b")
        got, want = exact_query(back, b), exact_query(a, b)
        assert got.status is want.status and got.distance == want.distance


@pytest.fixture
def assemblies(tmp_path):
    """box_sides (collisions: common volumes) and the AP214 AS1 (touching pairs: the
    refinement), plain files in tmp_path."""
    pytest.importorskip("OCP", reason="STEP needs cadquery-ocp (OpenCASCADE)")
    (tmp_path / "box_sides.STEP").write_bytes(gzip.decompress(BOX_SIDES.read_bytes()))
    (tmp_path / "as1.stp").write_bytes((STEP_DIR / "as1-oc-214.stp").read_bytes())
    return tmp_path


def test_the_command_never_imports_opencascade_and_reports_as_without_its_process(assemblies):
    """`gjk scan box_sides.STEP as1.stp`: OpenCASCADE's process reads both, refines the AS1's
    touching pairs (forking its own worker) and measures box_sides' common volumes; the command's
    process never imports OCP, and its JSON is byte for byte that of `-j 1`, which runs all of
    it in the command's process."""
    from fresh import python_c

    files = ["box_sides.STEP", "as1.stp"]
    served = python_c(RUN, "scan", *files, "--format", "json", "-o", "served.json", cwd=assemblies)
    alone = python_c(RUN, "scan", *files, "--format", "json", "-o", "alone.json", "-j", "1",
                     cwd=assemblies)
    assert served.split() == ["False"] and alone.split() == ["True"]
    report = (assemblies / "served.json").read_bytes()
    assert report == (assemblies / "alone.json").read_bytes()
    summary = json.loads(report)["summary"]
    assert (summary["collision"], summary["touching"], summary["clear"]) == (8, 40, 4)


def test_a_check_of_two_step_files_reports_as_without_its_process(assemblies):
    """`gjk check as1.stp box_sides.STEP` (box_sides in inches, converted to the AS1's mm): the
    same JSON as with --debug, which runs everything in the command's process."""
    from fresh import python_c

    files = ["as1.stp", "box_sides.STEP"]
    served = python_c(RUN, "check", *files, "--format", "json", "-o", "served.json", cwd=assemblies)
    alone = python_c(RUN, "check", *files, "--format", "json", "-o", "alone.json", "--debug",
                     cwd=assemblies)
    assert served.split() == ["False"] and alone.split() == ["True"]
    report = (assemblies / "served.json").read_bytes()
    assert report == (assemblies / "alone.json").read_bytes()
    assert json.loads(report)["summary"]["clear"] == 1


def test_a_bad_step_file_is_one_line_and_the_others_are_still_read(assemblies):
    """The InputError raised in OpenCASCADE's process is the command's one line, exit 2."""
    (assemblies / "bad.step").write_text("ISO-10303-21;\nHEADER;\nnot STEP at all\n")
    done = subprocess.run([sys.executable, "-m", "gjkcli", "scan", "bad.step", "as1.stp"],
                          cwd=assemblies, capture_output=True, text=True, check=False)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("gjk: error:")]
    assert len(errors) == 1 and "bad.step" in errors[0], done.stderr
    assert "18 objects, 32 pairs checked (each file by itself; --together pairs them): 0 undecided, 32 touching" in done.stdout + done.stderr


def test_a_process_that_ended_leaves_its_work_to_the_command(assemblies):
    """Killed (as OpenCASCADE crashing in it would end it), the process no longer serves: the
    command reads the file itself, to the same parts."""
    from fresh import python_c

    out = python_c(
        "import os, signal, sys\n"
        "from gjkcli import forks\n"
        "from gjkcli.mesh import cad, cad_process\n"
        "assert cad_process.start(['scan', 'as1.stp'])\n"
        "(pid,) = forks.running\n"
        "os.kill(pid, signal.SIGKILL)\n"
        "parts = cad_process.ask(cad.read_step, 'as1.stp')\n"
        "print(len(parts), cad_process.serving(), 'OCP.OCP' in sys.modules, forks.running)\n",
        cwd=assemblies)
    assert out.split() == ["18", "False", "True", "set()"]


def test_only_the_command_s_own_process_asks_it(assemblies):
    """A process forked from the command (a loader, a refinement worker) does its own work:
    the pipe to OpenCASCADE's process is the command's."""
    from fresh import python_c

    out = python_c(
        "from gjkcli import forks\n"
        "from gjkcli.mesh import cad_process\n"
        "assert cad_process.start(['scan', 'as1.stp'])\n"
        "print(cad_process.serving(), forks.Worker(lambda parent: cad_process.serving()).result())\n"
        "cad_process.stop()\n"
        "print(cad_process.serving(), forks.running)\n", cwd=assemblies)
    assert out.split() == ["True", "False", "False", "set()"]


def test_ctrl_c_ends_opencascade_s_process_with_the_command(assemblies):
    """Ctrl-C sent to the command alone: the handler of `gjkcli.__main__` ends the process with
    the run (it is one of the `forks.running`)."""
    from fresh import python_c, wait_gone

    out = python_c(
        "import os, signal, time\n"
        "import gjkcli.__main__\n"
        "from gjkcli import forks\n"
        "from gjkcli.mesh import cad_process\n"
        "assert cad_process.start(['scan', 'as1.stp'])\n"
        "print(*forks.running, flush=True)\n"
        "os.kill(os.getpid(), signal.SIGINT)\n"
        "time.sleep(5)\n", cwd=assemblies, exits=130)
    wait_gone(int(out.split()[0]), "OpenCASCADE's process")


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc to see a process's files")
def test_the_process_holds_neither_stdout_nor_stderr_of_the_command(assemblies):
    """A caller reading the command's output to its end is not kept waiting for OpenCASCADE's
    process, which the command does not wait for either (`forks.Worker.close(wait=False)`)."""
    from fresh import python_c

    out = python_c(
        "import os\n"
        "from gjkcli import forks\n"
        "from gjkcli.mesh import cad_process\n"
        "assert cad_process.start(['scan', 'as1.stp'])\n"
        "(pid,) = forks.running\n"
        "print(*(cad_process.ask(os.readlink, f'/proc/self/fd/{fd}') for fd in (1, 2)))\n"
        "cad_process.stop()\n"
        "done, status = os.waitpid(pid, 0)\n"
        "print(os.WIFSIGNALED(status) and os.WTERMSIG(status), forks.running)\n", cwd=assemblies)
    assert out.split() == [os.devnull, os.devnull, str(int(signal.SIGKILL)), "set()"]


@pytest.fixture
def spheres(tmp_path):
    """Spheres of radius 10 mm (1,447 points each at gjk's deflection, more than the compiled
    core builds the hull of alone, SMALL_HULL_POINTS, and fewer than it builds for a mesh several
    parts place, SHARED_HULL_POINTS): `twice.stp` places one product twice, `two.stp` holds two
    products placed once each."""
    pytest.importorskip("OCP", reason="STEP needs cadquery-ocp (OpenCASCADE)")
    from OCP.BRepPrimAPI import BRepPrimAPI_MakeSphere
    from OCP.gp import gp_Pnt
    from stepfiles import write_step

    ball = BRepPrimAPI_MakeSphere(10.0).Shape()
    write_step(tmp_path / "twice.stp", [("ball", ball)], assembly="pair",
               instances=[("ball", (0.0, 0.0, 0.0)), ("ball", (30.0, 0.0, 0.0))])
    other = BRepPrimAPI_MakeSphere(gp_Pnt(30.0, 0.0, 0.0), 10.0).Shape()
    write_step(tmp_path / "two.stp", [("a", ball), ("b", other)])
    return tmp_path


def test_the_meshed_products_say_whether_several_instances_share_them(spheres):
    """`read_step`'s `points` is told, with each product's vertices, whether several instances
    place it rigidly (the hint to the command then allows for the core's larger limit)."""
    from gjkcli.engine.shapes import SHARED_HULL_POINTS, SMALL_HULL_POINTS, goes_to_qhull
    from gjkcli.mesh import cad

    for name, shared in (("twice.stp", True), ("two.stp", False)):
        told = []
        parts = cad.read_step(spheres / name, points=lambda v, shared=False: told.append((v, shared)))
        assert len(parts) == 2 and len(told) == (1 if shared else 2)
        assert all(s is shared for _, s in told)
        assert all(SMALL_HULL_POINTS < len(v) <= SHARED_HULL_POINTS for v, _ in told)
        assert all(goes_to_qhull(v, SHARED_HULL_POINTS if s else None) is not shared for v, s in told)


def test_a_sphere_placed_twice_needs_no_scipy_and_two_spheres_say_so_from_the_text(spheres):
    """The command given one sphere placed twice imports no SciPy (the core builds the shared
    mesh's hull, and the process does not hint otherwise); given two spheres, the file's text
    says so before OpenCASCADE is imported (`_dense_surfaces`), and the run does need qhull. Both
    report as with `-j 1`."""
    from fresh import python_c

    run = entry_then_imported("scipy.spatial")
    for name, needed in (("twice.stp", "False"), ("two.stp", "True")):
        served = python_c(run, "scan", name, "--format", "json", "-o", "served.json", cwd=spheres)
        alone = python_c(run, "scan", name, "--format", "json", "-o", "alone.json", "-j", "1",
                         cwd=spheres)
        assert served.split() == [needed] and alone.split() == [needed]
        assert (spheres / "served.json").read_bytes() == (spheres / "alone.json").read_bytes()
    assert not cad_process._dense_surfaces([spheres / "twice.stp"])
    assert cad_process._dense_surfaces([spheres / "two.stp"])
    assert cad_process._dense_surfaces([spheres / "twice.stp", spheres / "twice.stp"])
    assert not cad_process._dense_surfaces([spheres / "missing.stp"])


@pytest.mark.parametrize("kept, read_ahead", [(True, "False"), (False, "True")])
def test_a_process_told_the_cache_places_the_parts_reads_no_parts(assemblies, kept, read_ahead):
    """Started at once beside the command's read of the text (`go(verdict=True)`): the
    process imports OpenCASCADE and reads the exact solids, then, told that the cache places
    the parts (`told(True)`), tessellates nothing (nothing `recorded` there) but still answers
    what needs the solids; told otherwise, it reads the parts ahead as a process told `go`."""
    from fresh import python_c

    out = python_c(
        "import sys\n"
        "from gjkcli.mesh import cad, cad_process\n"
        "assert cad_process.start(['scan', 'as1.stp'], gated=True)\n"
        "cad_process.go(verdict=True)\n"
        f"cad_process.told({kept})\n"
        "print(cad_process.serves('as1.stp'))\n"
        "print(cad_process.ask(cad.recorded, 'as1.stp') is not None)\n"
        "print(len(cad_process.ask(cad.read_step, 'as1.stp')))\n"
        "print(cad_process.serving(), 'OCP.OCP' in sys.modules)\n"
        "cad_process.stop()\n", cwd=assemblies)
    assert out.split() == [str(not kept), read_ahead, "18", "True", "False"]


def test_a_process_never_told_its_verdict_ends_with_the_command(assemblies):
    """A process waiting for the verdict (`told`) ends when the command closes its pipe."""
    from fresh import python_c

    out = python_c(
        "from gjkcli import forks\n"
        "from gjkcli.mesh import cad_process\n"
        "assert cad_process.start(['scan', 'as1.stp'], gated=True)\n"
        "cad_process.go(verdict=True)\n"
        "cad_process.stop()\n"
        "print(cad_process.serving(), forks.running)\n", cwd=assemblies)
    assert out.split() == ["False", "set()"]


def test_a_report_the_cache_keeps_is_replayed_without_opencascade_or_numpy(assemblies):
    """`gjk scan as1.stp` again, the cache holding its whole report: the command's process
    imports neither OpenCASCADE nor NumPy (the process it forked waits for a `go` that never
    comes; NumPy, which it needs once it goes, it imports itself), and writes the same bytes."""
    from fresh import python_c

    run = entry_then_imported("OCP.OCP", "numpy")
    args = ("scan", "as1.stp", "--format", "json", "--cache-dir", "c")
    first = python_c(run, *args, "-o", "first.json", cwd=assemblies)
    again = python_c(run, *args, "-o", "again.json", cwd=assemblies)
    assert first.split() == ["False", "True"] and again.split() == ["False", "False"]
    assert (assemblies / "again.json").read_bytes() == (assemblies / "first.json").read_bytes()
