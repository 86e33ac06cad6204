"""Start-up: the whole `gjk check A B` process on two small parts, per mesh format (issue 28).

Target: at most 0.3 s of wall time per format, the median of 5 runs. Each run is a fresh
process, as a user's at a terminal or in a pre-commit hook is. The two parts are a unit cube and
an icosphere of 642 vertices (trimesh's default) 0.2 away from it (verdict: clear, exit code 0), written by trimesh
into a temporary folder as ASCII STL, binary STL, OBJ, PLY (binary and ASCII), OFF and GLB.
Then the files as tools write them, in tests/data/written (scripts/make_written_samples.py): a cube
and a 32-sided cylinder 0.2 apart as Blender (`o`, `vn`, `vt`, `s`, `usemtl`, quads and 32-gon
caps), Fusion (`g`, triangles as v/vt/vn), FreeCAD (`o`, polygons), MeshLab (`vn` before each `v`,
v//vn) write OBJ, OBJ indexed back from the last vertex, MeshLab's binary PLY with normals and
colours, and GLB files of several meshes each (the cube and a plate; the cylinder and a block).
Formats are run in turn (one run of each, then the next round), so that a load on the machine
falls on all of them alike.

Reference lines, measured the same way: the bare interpreter (`python -c pass`, the floor of any
Python command), `import numpy` as any program imports it and as gjk's command line does (one
OpenBLAS thread, gjkcli.__main__), and `import trimesh` (the floor of a tool that reads its meshes
through trimesh, as the peer's lean path does).

    python benchmarks/bench_startup.py [--runs 5] [--core-venv DIR] [--gjk CMD] [--before CMD]

With --core-venv DIR, gjk and the reference lines run in the install a user makes as the README
says (`pip install .`, the core dependencies only), made in DIR on the first use and gjk
reinstalled from this checkout on every later one. Without it they run in this Python's
environment, whose other packages may cost every process its start: the test extras' coal
installs a `.pth` file that imports its loader (and certifi) in every Python process of the
environment, about 30 ms of `python -c pass` on this machine.

Prints a markdown table of medians (wall and CPU seconds) and, per format, the ratio to the target.
"""
from __future__ import annotations

import argparse
import os
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# Timed runs are fresh runs: the gjk processes started here neither read nor write a cache
# (benchmarks/bench_cache.py times the cache).
os.environ.setdefault("GJK_NO_CACHE", "1")

TARGET = 0.3  # seconds, whole process, median of the runs
ROOT = Path(__file__).resolve().parents[1]

# The processes' environment: bytecode cached, as after any install (PYTHONDONTWRITEBYTECODE
# would have every run compile gjk's modules again), in a folder of the run's own (main() sets
# PYTHONPYCACHEPREFIX) so that nothing is written beside the sources.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

# name shown, file suffix, trimesh's export type
FORMATS = (
    ("STL (ASCII)", "stl", "stl_ascii"),
    ("STL (binary)", "stl", "stl"),
    ("OBJ", "obj", "obj"),
    ("PLY (binary)", "ply", "ply"),
    ("PLY (ASCII)", "ply", "ply_ascii"),
    ("OFF", "off", "off"),
    ("GLB", "glb", "glb"),
)


# name shown, the two files in tests/data/written (scripts/make_written_samples.py)
WRITTEN = ROOT / "tests" / "data" / "written"
AS_WRITTEN = (
    ("OBJ (Blender: o, vn, vt, quads, 32-gons)", "blender_cube.obj", "blender_cylinder.obj"),
    ("OBJ (Fusion: g, v/vt/vn)", "fusion_a.obj", "fusion_b.obj"),
    ("OBJ (FreeCAD: o, polygons)", "freecad_a.obj", "freecad_b.obj"),
    ("OBJ (MeshLab: vn, v//vn)", "meshlab_a.obj", "meshlab_b.obj"),
    ("OBJ (negative indices)", "relative_a.obj", "relative_b.obj"),
    ("PLY (binary, normals and colours)", "colours_a.ply", "colours_b.ply"),
    ("GLB (several meshes)", "meshes_a.glb", "meshes_b.glb"),
)


def write_parts(folder: Path) -> dict:
    """{format name: (path A, path B)}: a unit cube and a sphere 0.2 away, per format; then the
    files as tools write them."""
    import trimesh

    cube = trimesh.creation.box(extents=(1.0, 1.0, 1.0))
    ball = trimesh.creation.icosphere(radius=0.5)  # trimesh's default: 642 vertices
    ball.apply_translation((1.2, 0.0, 0.0))
    out = {}
    for k, (name, suffix, export) in enumerate(FORMATS):
        paths = []
        for part, stem in ((cube, "cube"), (ball, "ball")):
            path = folder / f"{stem}{k}.{suffix}"
            if export == "ply_ascii":
                path.write_bytes(trimesh.exchange.ply.export_ply(part, encoding="ascii"))
            else:
                part.export(path, file_type=export)
            paths.append(path)
        out[name] = tuple(paths)
    for name, a, b in AS_WRITTEN:
        out[name] = (WRITTEN / a, WRITTEN / b)
    return out


def wall(cmd: list[str], expect: int | None = None, env: dict | None = None) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of the process; with `expect`, fail unless it exits with that
    code. CPU time (user + system, the process and its children) is what the wall time would be
    on an idle machine, near enough: on a loaded one the wall time also counts the waits."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd="/", stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False,
                          env={**ENV, **(env or {})})
    spent = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if expect is not None and done.returncode != expect:
        raise SystemExit(f"{' '.join(cmd)} exited {done.returncode}: {done.stderr.decode()[:300]}")
    return spent, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--core-venv", type=Path, metavar="DIR",
                        help="run gjk and the references in a core install in DIR (made there "
                             "with `pip install .` from this checkout if DIR does not exist)")
    parser.add_argument("--gjk", help="the gjk command (default: gjk beside this Python, else "
                                      "python -m gjkcli)")
    parser.add_argument("--before", help="another gjk command (an older install, say "
                                         "'/other/venv/bin/python -m gjkcli'), run in turn with "
                                         "the first: its medians and the ratio are printed too")
    args = parser.parse_args()
    python = core_install(args.core_venv) if args.core_venv else sys.executable
    gjk = shlex.split(args.gjk) if args.gjk else None
    if gjk is None:
        found = shutil.which("gjk", path=str(Path(python).parent)) or shutil.which("gjk")
        gjk = [found] if found else [python, "-m", "gjkcli"]
    references = {
        "python -c pass": [python, "-c", "pass"],
        "python -c 'import numpy'": [python, "-c", "import numpy"],
        "python -c 'import numpy', one OpenBLAS thread": [python, "-c", "import numpy"],
        "python -c 'import trimesh'": [python, "-c", "import trimesh"],
    }
    with tempfile.TemporaryDirectory() as tmp:
        files = write_parts(Path(tmp))
        ENV["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "bytecode")
        commands = {name: [*gjk, "check", str(a), str(b)] for name, (a, b) in files.items()}
        if args.before:
            commands.update({f"{name}, before": [*shlex.split(args.before), "check", str(a), str(b)]
                             for name, (a, b) in files.items()})
        for cmd in commands.values():  # once untimed: bytecode caches written, verdict checked
            wall(cmd, expect=0)
        for name, cmd in references.items():
            wall(cmd, env=_env(name))
        times: dict = {name: [] for name in (*commands, *references)}
        for _ in range(args.runs):  # one run of each, in turn
            for name, cmd in commands.items():
                times[name].append(wall(cmd, expect=0))
            for name, cmd in references.items():
                times[name].append(wall(cmd, env=_env(name)))

    where = (f"a core install (`pip install .`) in {args.core_venv}" if args.core_venv
             else f"the environment of {python}")
    print(f"`gjk check A B`, two small parts (a cube, a 642-vertex sphere; as tools write them, a "
          f"cube and a 32-sided cylinder), median of "
          f"{args.runs} runs; target {TARGET} s; gjk and the references run in {where}\n")
    print("| format | median wall (s) | min wall (s) | median CPU (s) | median wall / target |")
    print("|---|---|---|---|---|")
    for name in commands:
        print(f"| {name} | {_median(times[name], 0):.3f} | {min(t for t, _ in times[name]):.3f} | "
              f"{_median(times[name], 1):.3f} | {_median(times[name], 0) / TARGET:.2f} |")
    if args.before:
        print("\n| format | before / now, median wall | before / now, median CPU |")
        print("|---|---|---|")
        for name in files:
            was, now = times[f"{name}, before"], times[name]
            print(f"| {name} | {_median(was, 0) / _median(now, 0):.2f} | "
                  f"{_median(was, 1) / _median(now, 1):.2f} |")
    print("\n| reference | median wall (s) | min wall (s) | median CPU (s) |")
    print("|---|---|---|---|")
    for name in references:
        print(f"| {name} | {_median(times[name], 0):.3f} | {min(t for t, _ in times[name]):.3f} | "
              f"{_median(times[name], 1):.3f} |")
    worst = max(_median(times[name], 0) for name in files)
    print(f"\nslowest format: {worst:.3f} s wall ({'meets' if worst <= TARGET else 'misses'} the "
          f"{TARGET} s target); on a loaded machine read it against `python -c pass` and the CPU "
          f"column")


def core_install(folder: Path) -> str:
    """The Python of a core install of this checkout in `folder`, as the README makes it: a fresh
    virtual environment and `pip install .` the first time; later, gjk alone reinstalled from the
    checkout (its dependencies kept). Fails with pip's own message."""
    python = folder / "bin" / "python"
    steps = [[str(python), "-m", "pip", "install", "-q", "--no-deps", "--force-reinstall", str(ROOT)]]
    if not python.exists():
        steps = [[sys.executable, "-m", "venv", str(folder)],
                 [str(python), "-m", "pip", "install", "-q", str(ROOT)]]
    for step in steps:
        done = subprocess.run(step, capture_output=True, text=True, check=False)
        if done.returncode:
            raise SystemExit(f"{' '.join(step)} failed:\n{done.stdout}{done.stderr}")
    return str(python)


def _env(reference: str) -> dict:
    """The environment a reference line adds: gjk's own OpenBLAS setting for its numpy line."""
    return {"OPENBLAS_NUM_THREADS": "1"} if reference.endswith("one OpenBLAS thread") else {}


def _median(runs: list, k: int) -> float:
    return statistics.median(run[k] for run in runs)

if __name__ == "__main__":
    main()
