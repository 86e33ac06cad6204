"""A STEP assembly of 1,000 parts end to end (load, tessellate, scan): gjk beside trimesh +
cascadio + python-fcl, in one run.

The assembly is written here with OpenCASCADE (XCAF, so every product has a name): a grid of
n cells, each holding a cylinder (radius 4 mm, its seam turned by a random angle) or a box, with
random gaps to its +x neighbour drawn from [-0.5, 1.0] mm, so that about a third of the
neighbours overlap; products are instanced as they are in real assemblies (a few products,
many placements). Then, each in a fresh Python process, timed from after the imports (each side imports the
modules its work loads, OpenCASCADE and scipy for gjk, cascadio and python-fcl for trimesh) and
also as the whole process (Python's start, the imports, the work, the exit):

    gjk       gjkcli.pipeline.run.scan([FILE], Options(clearance=0.05)): STEP read with
              OpenCASCADE's XCAF reader, every solid tessellated with its error bound, broad and
              narrow phase, the touching band and the clearance decided on the exact solids
              where the tessellation cannot decide them (BRepExtrema / BRepAlgoAPI_Common), and
              each collision's overlap volume on the exact solids (BRepAlgoAPI_Common; for
              two solids of planar faces, which are their triangles, manifold3d's boolean)
    gjk -vol  the same with no overlap volume (the overlap-volumes limit at 0), the job trimesh does plus
              the clearance and the exact touching band
    trimesh   trimesh.load_scene (STEP through cascadio: OpenCASCADE tessellates and writes a
              GLB in memory), trimesh.collision.CollisionManager with every node (python-fcl),
              in_collision_internal(return_names=True): collisions of the meshes only, no
              distances, no clearance, no tessellation bound

The pair counts are printed for both, with the ratio gjk / trimesh of the wall times.

Needs cascadio and python-fcl besides gjk: `pip install ".[bench]"` (or `pip install cascadio
python-fcl`).

Real assemblies (`--real`): the five STEP files of issue 29 committed under
tests/data/third_party/ (AS1 in AP214 with its cylinders as B-spline surfaces and in AP203,
box_sides, eight cylinders, several shapes at the root). Each side as a whole process, `repeat`
times per file (median): `python -m gjkcli scan FILE --format json` (every core: `-j` as the
user gets it) against the trimesh worker above, the two alternating, after one untimed run of
each; both sides keep Python's compiled modules (`bytecode_env`: an installed gjk has them, as
the installed trimesh has; `--no-bytecode` runs in the environment as it is). The timed runs
are the command as a user runs it: `--timings` times every import statement through a wrapper
of `__import__` (4,566 of them in the AP214 AS1's scan), so gjk's stages come from one more run
with it, after the timed ones and not timed. They are the command's process's: OpenCASCADE is
imported and the file read in a process the command forks as it starts
(`gjkcli.mesh.cad_process`), so its `imports` are its own modules' and its `load` includes
waiting for OpenCASCADE's import in the other process. Printed per file: both medians, those
stages and gjk's pair counts; then the totals over the five and their ratio, gjk / trimesh (the
issue's target: at most 1.0). `--check` then holds every pair of each file against
OpenCASCADE (`oracle`: its distance and common volume on the file's own solids).

Usage:
    python benchmarks/bench_step.py [--parts 1000] [--seed 0] [--deflection REL] [--keep DIR]
                                    [--json FILE]
    python benchmarks/bench_step.py --real [--repeat 3] [--check] [--no-bytecode] [--json FILE]
                                    [--corpus DIR [--route-timeout S] [--route-memory GB]]
                                    [--only NAME ...]
"""
from __future__ import annotations

import argparse
import os
import json
import math
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# Timed runs are fresh runs: the gjk processes started here neither read nor write a cache
# (benchmarks/bench_cache.py times the cache).
os.environ.setdefault("GJK_NO_CACHE", "1")

GJK_WORKER = """
import dataclasses, json, sys, time
t0 = time.perf_counter()
from gjkcli import limits, tolerances
from gjkcli.pipeline import run
# the modules the scan imports when it first needs them (as trimesh's side imports cascadio)
import OCP.STEPCAFControl, OCP.BRepMesh, OCP.BRepExtrema, OCP.BRepAlgoAPI, scipy.spatial, manifold3d
t1 = time.perf_counter()
if sys.argv[4] != "default":  # --deflection: gjkcli.mesh.cad reads the tolerance when it meshes
    tolerances.DEFAULT = dataclasses.replace(tolerances.DEFAULT, cad_deflection_rel=float(sys.argv[4]))
lim = dataclasses.replace(limits.DEFAULT, overlap_volumes=int(sys.argv[3]))
found = run.scan([sys.argv[1]], run.Options(clearance=float(sys.argv[2]), jobs=1, limits=lim))
t2 = time.perf_counter()
print(json.dumps({"imports": t1 - t0, "total": t2 - t1, "stages": found.timings,
                  "counts": found.counts, "checked": found.checked, "modes": found.modes,
                  "collision_pairs": sorted([p.a, p.b] for p in found.pairs
                                            if p.status.value == "collision"),
                  "units": found.units}))
"""

TRIMESH_WORKER = """
import json, sys, time
t0 = time.perf_counter()
import trimesh, fcl, cascadio
t1 = time.perf_counter()
scene = trimesh.load_scene(sys.argv[1])
t2 = time.perf_counter()
manager = trimesh.collision.CollisionManager()
for node in scene.graph.nodes_geometry:
    transform, geometry = scene.graph[node]
    if not hasattr(scene.geometry[geometry], "faces"):  # a curve cascadio exported: no volume
        continue
    manager.add_object(node, scene.geometry[geometry], transform=transform)
t3 = time.perf_counter()
_, names = manager.in_collision_internal(return_names=True)
t4 = time.perf_counter()
print(json.dumps({"imports": t1 - t0, "total": t4 - t1, "load": t2 - t1, "add": t3 - t2,
                  "collide": t4 - t3, "objects": len(scene.graph.nodes_geometry),
                  "collision_pairs": len(names), "units": str(scene.units)}))
"""


def make_assembly(path: Path, parts: int, seed: int) -> dict:
    """Write the grid assembly; returns what it holds."""
    import numpy as np
    from OCP.BRepBuilderAPI import BRepBuilderAPI_Transform
    from OCP.BRepPrimAPI import BRepPrimAPI_MakeBox, BRepPrimAPI_MakeCylinder
    from OCP.gp import gp_Ax1, gp_Ax2, gp_Dir, gp_Pnt, gp_Trsf, gp_Vec
    from OCP.IFSelect import IFSelect_RetDone
    from OCP.STEPCAFControl import STEPCAFControl_Writer
    from OCP.STEPControl import STEPControl_AsIs
    from OCP.TCollection import TCollection_ExtendedString
    from OCP.TDataStd import TDataStd_Name
    from OCP.TDocStd import TDocStd_Document
    from OCP.TopLoc import TopLoc_Location
    from OCP.XCAFDoc import XCAFDoc_DocumentTool

    rng = np.random.default_rng(seed)
    doc = TDocStd_Document(TCollection_ExtendedString("bench"))
    tool = XCAFDoc_DocumentTool.ShapeTool_s(doc.Main())
    products = []
    for k in range(6):  # three cylinders with their seams turned, three boxes
        if k < 3:
            shape = BRepPrimAPI_MakeCylinder(gp_Ax2(gp_Pnt(0, 0, 0), gp_Dir(0, 0, 1)), 4.0, 8.0).Shape()
            t = gp_Trsf()
            t.SetRotation(gp_Ax1(gp_Pnt(0, 0, 0), gp_Dir(0, 0, 1)), 2 * math.pi * k / 3 + 0.1)
            shape = BRepBuilderAPI_Transform(shape, t, True).Shape()
            name, half = f"pin_{k}", 4.0
        else:
            shape = BRepPrimAPI_MakeBox(gp_Pnt(-4, -4, 0), 8.0, 8.0, 8.0).Shape()
            name, half = f"block_{k - 3}", 4.0
        label = tool.AddShape(shape, False)
        TDataStd_Name.Set_s(label, TCollection_ExtendedString(name))
        products.append((label, half))
    root = tool.NewShape()
    TDataStd_Name.Set_s(root, TCollection_ExtendedString("grid"))
    side = math.ceil(math.sqrt(parts))
    x_at = 0.0
    count = 0
    for row in range(side):
        x_at = 0.0
        for col in range(side):
            if count == parts:
                break
            label, half = products[int(rng.integers(len(products)))]
            t = gp_Trsf()
            t.SetTranslation(gp_Vec(x_at + half, row * 20.0, 0.0))
            tool.AddComponent(root, label, TopLoc_Location(t))
            x_at += 2 * half + float(rng.uniform(-0.5, 1.0))
            count += 1
    tool.UpdateAssemblies()
    writer = STEPCAFControl_Writer()
    writer.SetNameMode(True)
    assert writer.Transfer(doc, STEPControl_AsIs)
    assert writer.Write(str(path)) == IFSelect_RetDone
    return {"parts": count, "bytes": path.stat().st_size}


def _tree(root: int) -> list:
    """The pids of `root` and all its descendants (Linux's /proc)."""
    import os

    children: dict = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(children.get(pid, ()))
    return out


def _memory(pids) -> int:
    """The memory of the processes `pids` together, in bytes: each one's private pages, and the
    pages it shares counted once for all of them (per mapping, the largest resident share among
    the processes: a forked process keeps its parent's mappings at the same addresses), from
    /proc/PID/smaps. For one process it is its resident set size. Pages shared with programs
    outside `pids` count whole, so that neither side's number moves with what other programs
    on the machine map, as a proportional set size would."""
    private, shared = 0, {}
    for pid in pids:
        try:
            with open(f"/proc/{pid}/smaps") as f:
                key = None
                for line in f:
                    head = line.split(None, 1)[0]
                    if "-" in head and not head.endswith(":"):  # a mapping's first line
                        key = line.split(None, 5)[0::5] if line.count(" ") >= 5 else head
                        key = tuple(key) if isinstance(key, list) else key
                    elif head in ("Private_Clean:", "Private_Dirty:"):
                        private += int(line.split()[1]) * 1024
                    elif head in ("Shared_Clean:", "Shared_Dirty:"):
                        kb = int(line.split()[1]) * 1024
                        shared.setdefault((pid, key), 0)
                        shared[pid, key] += kb
        except OSError:
            continue
    once: dict = {}
    for (_, key), size in shared.items():
        once[key] = max(once.get(key, 0), size)
    return private + sum(once.values())


def _unique(pids) -> int | None:
    """The memory of the processes `pids` together, in bytes, counted page by page: the
    physical pages (page frame numbers, /proc/PID/pagemap) resident in any of them, each once.
    What `_memory` estimates from /proc/PID/smaps, exactly: a page the processes share counts
    once, whatever their mappings (`_memory` keys shared pages by mapping, and a forked process
    whose heap or an anonymous mapping has since grown or shrunk holds it under another range
    than its parent's, so the pages they still share count twice there: 70 MB of the AS1's
    scan, whose refinement forks a worker); a page shared with programs outside `pids` counts
    whole, as there. For one process it is its resident set size. None where the frame numbers
    cannot be read (Linux shows them to root only)."""
    import struct

    frames: set = set()
    for pid in pids:
        try:
            with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/pagemap", "rb") as pagemap:
                for line in maps:
                    lo, hi = (int(x, 16) for x in line.split(None, 1)[0].split("-"))
                    if line.rstrip().endswith("[vsyscall]"):  # outside the page tables
                        continue
                    pagemap.seek(lo // 4096 * 8)
                    for (entry,) in struct.iter_unpack("Q", pagemap.read((hi - lo) // 4096 * 8)):
                        if entry >> 63:  # present
                            frames.add(entry & ((1 << 55) - 1))
        except OSError:
            continue
    if frames == {0}:  # present pages without their frame numbers: not root
        return None
    return len(frames) * 4096


def run_measured(argv: list, env: dict | None = None, timeout: float | None = None,
                 preexec_fn=None, sample: bool = True):
    """(CompletedProcess, wall seconds, peak memory in bytes, peak memory page by page in bytes)
    of `argv`, or None when it did not finish within `timeout`. The peak memory is the largest
    memory of the process and all its descendants together (`_memory`: gjk forks the process
    that reads the STEP file, and that one a worker), sampled every 100 ms while it runs; the
    other the largest `_unique` of them at the same samples (None where it cannot be read);
    both 0 where there is no /proc, or without `sample`. Reading every process's /proc/PID/smaps ten times a second costs CPU (more for
    the side with more processes), so timed runs are not sampled (`real`)."""
    import os
    import threading

    peak, pages = [0], [0]
    started = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, preexec_fn=preexec_fn)
    done = threading.Event()

    def sampler_loop():
        if not sample or not os.path.exists(f"/proc/{os.getpid()}/smaps"):
            return
        while not done.wait(0.1):
            pids = _tree(proc.pid)
            peak[0] = max(peak[0], _memory(pids))
            got = _unique(pids)
            pages[0] = None if got is None or pages[0] is None else max(pages[0], got)

    sampler = threading.Thread(target=sampler_loop, daemon=True)
    sampler.start()
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return None
    finally:
        done.set()
        sampler.join()
    wall = time.perf_counter() - started
    return subprocess.CompletedProcess(argv, proc.returncode, stdout, stderr), wall, peak[0], pages[0]


def run_worker(code: str, *args, env: dict | None = None, timeout: float | None = None,
               memory: int | None = None, sample: bool = True) -> dict | None:
    """The worker's JSON line, its wall time and peak memory (`run_measured`); None when it
    did not finish within `timeout` seconds or `memory` bytes of address space (then it is
    killed, or fails to allocate)."""
    def limit():
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    got = run_measured([sys.executable, "-c", code, *map(str, args)], env=env, timeout=timeout,
                       preexec_fn=limit if memory else None, sample=sample)
    if got is None:
        return None
    out, wall, peak, pages = got
    if out.returncode != 0:
        if timeout is not None:  # a bounded run (the corpus): said as not finished
            return None
        raise SystemExit(f"worker failed:\n{out.stderr[-3000:]}")
    line = [l for l in out.stdout.splitlines() if l.startswith("{")][-1]
    got = json.loads(line)
    got["wall"], got["peak"], got["pages"] = wall, peak, pages
    return got


REAL = Path(__file__).resolve().parents[1] / "tests" / "data" / "third_party"
# The corpus of public assemblies (`--corpus DIR`): where each file comes from, its writer and
# sha256; the files themselves are kept outside the repository (`--make-corpus`).
CORPUS = Path(__file__).resolve().with_name("step_corpus.json")
REAL_FILES = ("step/as1-oc-214.stp", "step/as1_pe_203.stp", "box_sides.STEP.gz",
              "step/eight_cyl.stp", "step/stp_multiple_shp_at_root.stp")


def run_gjk_scan(path: Path, env: dict | None = None, timings: bool = False,
                 sample: bool = True) -> dict:
    """`gjk scan FILE --format json` as a whole process: its wall time, counts, its peak memory
    when `sample`d (`run_measured`), and with `timings` its stages (`--timings`)."""
    out, wall, peak, pages = run_measured([sys.executable, "-m", "gjkcli", "scan", str(path),
                                    "--format", "json", *(["--timings"] if timings else [])],
                                   env=env, sample=sample)
    if out.returncode not in (0, 1):
        raise SystemExit(f"gjk scan {path.name} failed:\n{out.stderr[-3000:]}")
    timings = [l for l in out.stderr.splitlines() if "timings:" in l]
    report = json.loads(out.stdout)
    return {"wall": wall, "peak": peak, "pages": pages,
            "timings": timings[-1].split("timings: ", 1)[-1] if timings else "",
            "counts": {k: report["summary"][k] for k in
                       ("clear", "touching", "collision", "clearance", "undecided")}}


def oracle(path: Path) -> tuple[int, list]:
    """Every pair of the file's solids held against OpenCASCADE on the file's own solids:
    (pairs compared, [disagreements]). gjk's verdicts come from `gjk scan FILE --all-pairs
    --format json -j 1`; a pair it does not list is clear (its boxes or hulls are apart).
    OpenCASCADE's verdict: BRepExtrema_DistShapeShape's distance d against the pair's band
    (gjk's, or 1e-7 x the larger diagonal for an unlisted pair), then for d within the band
    BRepAlgoAPI_Common's solid: a collision when its mean thickness, 2 x volume / area,
    exceeds the band, else touching (gjk's definition, docs/step.md: a common part thinner
    than the band is parts pressed together within it, not an overlap). A distance of 0 that
    BRepExtrema_DistShapeShape gives for one solid inside the other (it classifies a point of
    each) where the common part is empty is the classification's error, and the faces'
    distance stands instead (the spaceships' head and main body: 48 of the body's vertices
    classified inside the head, faces 0.08 and 0.6 mm apart); pairs whose bounding boxes lie
    farther apart than 1e-3 x the larger diagonal are clear without a call (the boxes'
    distance bounds the solids' from below)."""
    import itertools

    import numpy as np
    from OCP.Bnd import Bnd_Box
    from OCP.BRepAlgoAPI import BRepAlgoAPI_Common
    from OCP.BRepBndLib import BRepBndLib
    from OCP.BRepExtrema import BRepExtrema_DistShapeShape
    from OCP.BRepGProp import BRepGProp
    from OCP.GProp import GProp_GProps

    from gjkcli.mesh import cad
    from gjkcli.units import factor

    out = subprocess.run([sys.executable, "-m", "gjkcli", "scan", str(path), "--all-pairs",
                          "--format", "json", "-j", "1"], capture_output=True, text=True,
                         check=False)
    report = json.loads(out.stdout)
    listed = {frozenset((p["a"], p["b"])): p for p in report["pairs"]}
    parts = cad.read_step(path)
    unit = parts[0].units
    k = factor("mm", unit)
    solids = {part.name: cad.placed_solid(part.brep[0]) for part in parts}
    boxes = {}
    for name, solid in solids.items():
        box = Bnd_Box()
        BRepBndLib.Add_s(solid, box, False)
        lo, hi = box.CornerMin(), box.CornerMax()
        boxes[name] = (box, float(np.linalg.norm([hi.X() - lo.X(), hi.Y() - lo.Y(),
                                                  hi.Z() - lo.Z()])))
    wrong, compared = [], 0
    for a, b in itertools.combinations(sorted(solids), 2):
        compared += 1
        got = listed.get(frozenset((a, b)))
        status = got["status"] if got is not None else "clear"
        size = max(boxes[a][1], boxes[b][1])
        if boxes[a][0].Distance(boxes[b][0]) > 1e-3 * size:
            want = "clear"
        else:
            tol = got["tolerance"] if got is not None else 1e-7 * size * k
            measured = BRepExtrema_DistShapeShape(solids[a], solids[b])
            d = measured.Value() * k
            if d <= tol and measured.InnerSolution() and _common_volume(solids[a], solids[b]) == 0:
                # "inside" from classifying a point, which a common part of none contradicts
                # (one solid inside the other shares its whole volume): the faces' distance
                d = BRepExtrema_DistShapeShape(_faces(solids[a]), _faces(solids[b])).Value() * k
            clearance = (got or {}).get("clearance") or 0.0
            if d > tol:
                want = "clearance" if d < clearance else "clear"
            else:
                common = BRepAlgoAPI_Common(solids[a], solids[b]).Shape()
                volume, area = GProp_GProps(), GProp_GProps()
                BRepGProp.VolumeProperties_s(common, volume)
                BRepGProp.SurfaceProperties_s(common, area)
                thick = (2 * abs(volume.Mass()) / abs(area.Mass()) * k if abs(area.Mass()) > 0
                         else 0.0)
                want = "collision" if thick > tol else "touching"
        if want != status:
            wrong.append((a, b, status, want))
    return compared, wrong


def _faces(solid):
    """A compound of the solid's faces (OpenCASCADE)."""
    from OCP.BRep import BRep_Builder
    from OCP.TopAbs import TopAbs_FACE
    from OCP.TopExp import TopExp_Explorer
    from OCP.TopoDS import TopoDS_Compound

    compound, builder = TopoDS_Compound(), BRep_Builder()
    builder.MakeCompound(compound)
    explorer = TopExp_Explorer(solid, TopAbs_FACE)
    while explorer.More():
        builder.Add(compound, explorer.Current())
        explorer.Next()
    return compound


def _common_volume(a, b) -> float:
    """The volume of two solids' common part (BRepAlgoAPI_Common), in mm3."""
    from OCP.BRepAlgoAPI import BRepAlgoAPI_Common
    from OCP.BRepGProp import BRepGProp
    from OCP.GProp import GProp_GProps

    props = GProp_GProps()
    BRepGProp.VolumeProperties_s(BRepAlgoAPI_Common(a, b).Shape(), props)
    return abs(props.Mass())


def bytecode_env(cache: Path | None) -> dict | None:
    """The environment of both sides' processes: with `cache`, Python's compiled modules kept
    there (PYTHONPYCACHEPREFIX, PYTHONDONTWRITEBYTECODE unset), as an installed package has
    them (pip compiles a wheel's modules as it installs it; trimesh's, cascadio's and python-fcl's
    are compiled in site-packages), so that neither side compiles its modules on every run;
    None: this process's environment as it is (a checkout installed editable under
    PYTHONDONTWRITEBYTECODE=1 compiles every gjk module in every run)."""
    import os

    if cache is None:
        return None
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(cache)
    return env


# What each side imports, each alone in a fresh process (`--real` prints their medians): where a
# run's time goes before it reads anything. gjk's command imports its pipeline while the process
# it forks imports OpenCASCADE (`gjkcli.mesh.cad_process`); trimesh's route imports its three.
IMPORTS = (("OCP (OpenCASCADE's Python binding)", "import OCP.OCP"),
           # as gjk imports it: the garbage collector paused, its libraries bound lazily
           ("OCP as gjk imports it", "from gjkcli import extras\n"
                                     "with extras.binding_import(): import OCP.OCP"),
           ("gjk's scan, without OCP", "import gjkcli.cli, gjkcli.pipeline.run, gjkcli.report.jsonout"),
           ("trimesh + python-fcl + cascadio", "import trimesh, fcl, cascadio"))


def imports(repeat: int, env: dict | None) -> dict:
    """{what: (median wall time, median peak resident memory in bytes) of a fresh
    `python -c IMPORT`}, alternating: the memory any run that imports it holds at least."""
    import statistics

    # VmHWM, the process's own peak: getrusage's ru_maxrss keeps the peak of the process that
    # forked it (this one, which holds OpenCASCADE and the files by then) across the exec
    peak = ("\nprint(next(line.split()[1] for line in open('/proc/self/status') "
            "if line.startswith('VmHWM:')))")
    times: dict = {what: [] for what, _ in IMPORTS}
    sizes: dict = {what: [] for what, _ in IMPORTS}
    for _ in range(repeat):
        for what, code in IMPORTS:
            started = time.perf_counter()
            done = subprocess.run([sys.executable, "-c", code + peak], check=True, env=env,
                                  capture_output=True, text=True)
            times[what].append(time.perf_counter() - started)
            sizes[what].append(int(done.stdout.split()[-1]) * 1024)  # kB on Linux
    return {what: (statistics.median(times[what]), statistics.median(sizes[what]))
            for what in times}


def corpus_files(directory: Path) -> list[tuple[Path, str]]:
    """[(path, writer)] of the corpus's files found in `directory` with their sha256; the ones
    missing or changed are said on stderr and left out."""
    import hashlib

    manifest = json.loads(CORPUS.read_text())
    found = []
    for entry in manifest["files"]:
        path = directory / entry["file"]
        if not path.is_file():
            print(f"corpus: {path} is missing (--make-corpus extracts it)", file=sys.stderr)
        elif hashlib.sha256(path.read_bytes()).hexdigest() != entry["sha256"]:
            print(f"corpus: {path} is not the listed file (its sha256 differs)", file=sys.stderr)
        else:
            found.append((path, entry["writer"]))
    return found


def make_corpus(git_dir: Path, directory: Path) -> None:
    """Extract the corpus's files from a clone of the manifest's repository (`git show
    COMMIT:PATH`) into `directory`, each checked against its sha256."""
    import hashlib

    manifest = json.loads(CORPUS.read_text())
    directory.mkdir(parents=True, exist_ok=True)
    for entry in manifest["files"]:
        data = subprocess.run(["git", f"--git-dir={git_dir}", "show",
                               f"{manifest['commit']}:{entry['path']}"], capture_output=True,
                              check=True).stdout
        if hashlib.sha256(data).hexdigest() != entry["sha256"]:
            raise SystemExit(f"{entry['path']}: not the listed file (its sha256 differs)")
        (directory / entry["file"]).write_bytes(data)
    print(f"{len(manifest['files'])} files in {directory}")


def real(repeat: int, json_out: Path | None, check: bool = False, compiled: bool = True,
         corpus: Path | None = None, route_timeout: float = 300.0,
         route_memory: float = 4.0, only: list | None = None) -> None:
    """The committed five (or with `corpus`, the corpus's files in that directory), each side
    `repeat` times, alternating. With a corpus the route gets `route_timeout` seconds and
    `route_memory` GB of address space per run (cascadio took 6.5 GB and more than 600 s on
    the motor of OpenCASCADE's test data); a file it does not finish is reported so and left
    out of the totals, and only the first file has the untimed first runs (Python's compiled
    modules; the files are in the page cache from their checksums). `only`: the files whose
    names contain one of these strings (all when None). The timed runs are not sampled for
    memory; each side's peak memory is that of one more run of it, untimed (`run_measured`)."""
    import gzip
    import shutil
    import statistics

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        env = bytecode_env(Path(tmp) / "pycache" if compiled else None)
        files = ([(REAL / name, "") for name in REAL_FILES] if corpus is None
                 else corpus_files(corpus))
        if only:
            files = [(p, w) for p, w in files if any(o in p.name for o in only)]
        bound = {} if corpus is None else {"timeout": route_timeout,
                                           "memory": int(route_memory * 2 ** 30)}
        for index, (path, writer) in enumerate(files):
            if path.name.endswith(".gz"):  # committed compressed; both sides read the STEP file
                plain = Path(tmp) / path.stem
                with gzip.open(path, "rb") as src, open(plain, "wb") as dst:
                    shutil.copyfileobj(src, dst)
                path = plain
            gjk, tm = [], []
            if compiled and (corpus is None or index == 0):
                # one untimed run each: the modules compiled, the file in the page cache
                run_gjk_scan(path, env)
                run_worker(TRIMESH_WORKER, path, env=env, **bound)
            for _ in range(repeat):  # alternating, so that both see the machine's same load
                gjk.append(run_gjk_scan(path, env, sample=False))
                tm.append(run_worker(TRIMESH_WORKER, path, env=env, sample=False, **bound))
            # not timed: the stages, and each side's peak memory
            stages = run_gjk_scan(path, env, timings=True)["timings"]
            g_mem = run_gjk_scan(path, env)
            g_peak, g_pages = g_mem["peak"], g_mem["pages"]
            t_mem = run_worker(TRIMESH_WORKER, path, env=env, **bound)
            gjk.sort(key=lambda r: r["wall"])
            g = gjk[len(gjk) // 2]
            g_wall = statistics.median(r["wall"] for r in gjk)
            finished = [r for r in tm if r is not None]
            t_wall = statistics.median(r["wall"] for r in finished) if len(finished) == len(tm) \
                else None
            t = sorted(finished, key=lambda r: r["wall"])[len(finished) // 2] if t_wall else None
            t_peak = t_mem["peak"] if t_wall and t_mem is not None else None
            t_pages = t_mem["pages"] if t_wall and t_mem is not None else None
            rows.append({"file": path.name, "writer": writer, "gjk": g_wall, "trimesh": t_wall,
                         "gjk_peak": g_peak, "trimesh_peak": t_peak,
                         "gjk_pages": g_pages, "trimesh_pages": t_pages,
                         "gjk_timings": stages, "counts": g["counts"],
                         "trimesh_collisions": t["collision_pairs"] if t else None})
            counts = ", ".join(f"{v} {k}" for k, v in g["counts"].items() if v)
            if t_wall is None:
                print(f"{path.name:30s} gjk {g_wall:6.2f} s  trimesh did not finish (in "
                      f"{route_timeout:.0f} s and {route_memory:g} GB)  | gjk: {counts or 'no pair'}")
            else:
                print(f"{path.name:30s} gjk {g_wall:6.2f} s  trimesh {t_wall:6.2f} s  ratio "
                      f"{g_wall / t_wall:5.2f}  | gjk: {counts or 'no pair'}; trimesh: "
                      f"{t['collision_pairs']} colliding pairs")
            print(f"{'':30s} peak memory (one more run each, untimed; with its forks): gjk "
                  f"{g_peak / 2 ** 20:.0f} MB, trimesh "
                  + ("did not finish" if t_peak is None else f"{t_peak / 2 ** 20:.0f} MB")
                  + f"; page by page: gjk {_mb(g_pages)}, trimesh "
                  + ("did not finish" if t_peak is None else _mb(t_pages)))
            print(f"{'':30s} gjk's stages (one more run, with --timings): {stages}")
            if check:
                compared, wrong = oracle(path)
                rows[-1]["oracle"] = {"pairs": compared, "disagree": wrong}
                print(f"{'':30s} against OpenCASCADE: {compared - len(wrong)} of {compared} pairs "
                      f"agree" + "".join(f"\n{'':32s}{w}" for w in wrong))
        alone = imports(repeat, env)
    if corpus is not None:
        corpus_table(rows, check)
    every = rows
    rows = [r for r in rows if r["trimesh"] is not None]  # the totals: files both finished
    total_g, total_t = sum(r["gjk"] for r in rows), sum(r["trimesh"] for r in rows)
    print("imports alone, whole processes (medians of %d; their peak resident memory): " % repeat
          + ", ".join(f"{what} {t:.2f} s ({m / 2**20:.0f} MB)" for what, (t, m) in alone.items()))
    first = "per file" if corpus is None else "on the first file"
    print(f"compiled modules: {f'kept, one untimed run of each side {first} first' if compiled else 'as the environment says (PYTHONDONTWRITEBYTECODE)'}")
    print(f"total over {len(rows)} files (medians of {repeat}, whole processes): "
          f"gjk {total_g:.2f} s, trimesh+cascadio+fcl {total_t:.2f} s; "
          f"gjk / trimesh {total_g / total_t:.2f}")
    if check:
        pairs = sum(r["oracle"]["pairs"] for r in every)
        wrong = sum(len(r["oracle"]["disagree"]) for r in every)
        print(f"verdicts against OpenCASCADE: {pairs - wrong} of {pairs} pairs agree")
    if json_out:
        json_out.write_text(json.dumps({"files": every, "gjk": total_g, "trimesh": total_t,
                                        "ratio": total_g / total_t, "repeat": repeat,
                                        "imports": alone}, indent=2))


def corpus_table(rows: list, check: bool) -> None:
    """The corpus's files as a Markdown table (tables.py keeps it as CSV too)."""
    print("\n## Per file: gjk scan against trimesh, cascadio and python-fcl\n")
    print("| file | writer | gjk (s) | route (s) | gjk / route | gjk's peak (MB) | route's peak "
          "(MB) | gjk's peak, page by page | route's peak, page by page | gjk's verdicts | route's collisions |"
          + (" agree with OpenCASCADE |" if check else ""))
    print("|---|---|---|---|---|---|---|---|---|---|---|" + ("---|" if check else ""))
    for r in rows:
        counts = ", ".join(f"{v} {k}" for k, v in r["counts"].items() if v) or "no pair"
        route = "did not finish" if r["trimesh"] is None else f"{r['trimesh']:.2f}"
        ratio = "" if r["trimesh"] is None else f"{r['gjk'] / r['trimesh']:.2f}"
        peak = "" if r["trimesh_peak"] is None else f"{r['trimesh_peak'] / 2 ** 20:.0f}"
        pages = "" if r["trimesh"] is None else _mb(r["trimesh_pages"])
        line = (f"| {r['file']} | {r['writer']} | {r['gjk']:.2f} | {route} | {ratio} "
                f"| {r['gjk_peak'] / 2 ** 20:.0f} | {peak} | {_mb(r['gjk_pages'])} | {pages} "
                f"| {counts} "
                f"| {'' if r['trimesh_collisions'] is None else r['trimesh_collisions']} |")
        if check:
            o = r["oracle"]
            line += f" {o['pairs'] - len(o['disagree'])} of {o['pairs']} |"
        print(line)
    both = [r for r in rows if r["trimesh"] is not None]
    if both:
        worst = max(both, key=lambda r: r["gjk"] / r["trimesh"])
        print(f"\nfiles the route finished: {len(both)} of {len(rows)}; the highest ratio "
              f"{worst['gjk'] / worst['trimesh']:.2f} ({worst['file']}); gjk's peak memory below "
              f"the route's on {sum(r['gjk_peak'] < r['trimesh_peak'] for r in both)} of "
              f"{len(both)}"
              + ("" if any(r["gjk_pages"] is None or r["trimesh_pages"] is None for r in both) else
                 f", counted page by page on "
                 f"{sum(r['gjk_pages'] < r['trimesh_pages'] for r in both)} of {len(both)}")
              + "\n")


def _mb(size: int | None) -> str:
    """A size in MB, or "n/a" (`_unique` could not read it)."""
    return "n/a" if size is None else f"{size / 2 ** 20:.0f} MB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--parts", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--clearance", type=float, default=0.05)
    parser.add_argument("--deflection", type=float, help="gjk's cad_deflection_rel (the "
                        "tessellation's deflection / the solid's diagonal; default 1e-3)")
    parser.add_argument("--keep", type=Path, help="write the STEP file here and keep it")
    parser.add_argument("--json", type=Path, help="write the numbers as JSON")
    parser.add_argument("--real", action="store_true", help="the five committed real assemblies")
    parser.add_argument("--repeat", type=int, default=3, help="runs per file with --real (median)")
    parser.add_argument("--check", action="store_true", help="with --real: every pair of each "
                        "file against OpenCASCADE's distance and common volume (after the timings)")
    parser.add_argument("--no-bytecode", action="store_true", help="with --real: both sides in "
                        "this process's environment as it is, with no untimed first run (a "
                        "checkout under PYTHONDONTWRITEBYTECODE=1 compiles gjk's modules in "
                        "every run)")
    parser.add_argument("--corpus", type=Path, help="with --real: the corpus's files "
                        "(benchmarks/step_corpus.json) in this directory instead of the five")
    parser.add_argument("--make-corpus", type=Path, metavar="GIT_DIR", help="extract the "
                        "corpus's files from this clone of OpenCASCADE's repository (its .git "
                        "directory) into --corpus, and stop")
    parser.add_argument("--route-timeout", type=float, default=300.0, help="with --corpus: "
                        "seconds the route gets per run (default 300)")
    parser.add_argument("--only", action="append", metavar="NAME", help="with --real: only "
                        "the files whose names contain NAME (repeatable)")
    parser.add_argument("--route-memory", type=float, default=4.0, help="with --corpus: GB of "
                        "address space the route gets per run (default 4)")
    args = parser.parse_args()
    if args.make_corpus:
        if args.corpus is None:
            parser.error("--make-corpus needs --corpus DIR")
        make_corpus(args.make_corpus, args.corpus)
        return
    if args.real:
        real(args.repeat, args.json, args.check, compiled=not args.no_bytecode,
             corpus=args.corpus, route_timeout=args.route_timeout, route_memory=args.route_memory,
             only=args.only)
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = (args.keep or Path(tmp)) / f"grid_{args.parts}.step"
        path.parent.mkdir(parents=True, exist_ok=True)
        made = make_assembly(path, args.parts, args.seed)
        print(f"assembly: {made['parts']} parts, {made['bytes'] / 1e6:.1f} MB STEP ({path.name})")
        deflection = "default" if args.deflection is None else args.deflection
        gjk = run_worker(GJK_WORKER, path, args.clearance, 1000, deflection)
        novol = run_worker(GJK_WORKER, path, args.clearance, 0, deflection)
        tm = run_worker(TRIMESH_WORKER, path)
    print(f"gjk      {gjk['total']:.2f} s after imports ({gjk['imports']:.2f} s imports); "
          f"stages: " + ", ".join(f"{k} {v:.2f}" for k, v in gjk["stages"].items()))
    print(f"         {gjk['checked']} pairs checked: "
          + ", ".join(f"{v} {k}" for k, v in gjk["counts"].items() if v)
          + f"; answered by {gjk['modes']}; units {gjk['units']}")
    print(f"trimesh  {tm['total']:.2f} s after imports ({tm['imports']:.2f} s imports): load "
          f"(cascadio) {tm['load']:.2f}, add_object {tm['add']:.2f}, collide {tm['collide']:.2f}; "
          f"{tm['objects']} objects, {tm['collision_pairs']} colliding pairs; units {tm['units']}")
    print(f"gjk -vol {novol['total']:.2f} s after imports (no overlap volumes); stages: "
          + ", ".join(f"{k} {v:.2f}" for k, v in novol["stages"].items()))
    ratio = gjk["total"] / tm["total"]
    ratio_novol = novol["total"] / tm["total"]
    print(f"gjk / trimesh+cascadio+fcl (after imports): {ratio:.2f}; without overlap volumes: "
          f"{ratio_novol:.2f}")
    print(f"whole processes: gjk {gjk['wall']:.2f} s, gjk -vol {novol['wall']:.2f} s, trimesh "
          f"{tm['wall']:.2f} s; gjk / trimesh {gjk['wall'] / tm['wall']:.2f}, without overlap "
          f"volumes {novol['wall'] / tm['wall']:.2f}")
    if args.json:
        args.json.write_text(json.dumps({"parts": made, "gjk": gjk, "gjk_no_volumes": novol,
                                         "trimesh": tm, "ratio": ratio,
                                         "ratio_no_volumes": ratio_novol}, indent=2))


if __name__ == "__main__":
    main()
