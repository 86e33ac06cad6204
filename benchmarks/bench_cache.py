"""A re-run with the cache against the same scan without it, whole processes side by side.

Each scenario has inputs "before" and "after" (the same files, or with a few parts changed). The
cache is filled by one untimed `gjk scan BEFORE` and kept as a snapshot; then, alternating:

    fresh    `gjk scan AFTER --format json --no-cache`
    cached   `gjk scan AFTER --format json --cache-dir COPY` on a fresh copy of the snapshot
             (copied untimed), so every cached run finds what the run on BEFORE left

The medians and their ratio (cached / fresh) are printed with the issue's target, and each cached
run's JSON is compared with the fresh run's: they must be equal byte for byte.

Scenarios:
    glb        a generated GLB of --parts parts (scripts/make_scan_scene.py), nothing changed;
    glb-moved  the same with 1% of its parts moved (their nodes' translations);
    step       each of the five STEP assemblies of tests/data/third_party (bench_step.py --real),
               nothing changed;
    step-moved, step-edited  (with --only step-changed, the default, or by name) the same files with one
               solid changed: one part instance placed elsewhere, or one solid's geometry
               edited (`step_scenarios`). A re-run that needs OpenCASCADE (the edited solid
               to tessellate; a moved part whose pairs only the exact solids decide: the AP214
               AS1's moved plate touches or crosses 14 parts, AS1_PE's nut crosses a bracket,
               box_sides' short side is decided on finer triangles; with them, the exact pairs
               of the products they meet: step_moved_pairs.py counts them) pays its import (0.6 s of
               CPU, numpy's 0.08 s aside) and the file's read (0.03 to 0.22 s) as a fresh run
               does, most of that run's time: beside it, only the tessellation of every solid
               (0.05 to 0.11 s) and the pairs the cache holds are saved;
    ifc-moved  an IFC model of GJK_IFC_CORPUS (default ../corpus/ifc/ISSUE_021_Mini_Project.ifc,
               2,636 elements; skipped without it) with 10 elements moved by IfcOpenShell's API;
    poses      the Panda of ../shared/robots/panda (with its SRDF; else samples/robot/arm.urdf)
               at each --poses count (default 10,000 and 100,000) random poses within its
               limits, then with 10% of them new (and the same table again, "unchanged"). What a robotics user runs
               again: a sampled set of thousands of poses (a workspace or reachability study, a
               learned collision checker's data set) or a planner's dense trajectory
               (bench_poses.py times 10,000 waypoints), re-sampled or re-planned in part. A
               Panda pose costs about 0.05 ms (one uniform pose in six collides, and those
               go to the triangles), so a fresh run of 10,000 poses takes about 0.8 s, of which
               about 0.2 s is the process (the interpreter, imports, the robot's meshes and
               hulls), and a table of 2,000 (this scenario's size before) is mostly that.
               At 100,000 poses the poses' own work is most of a fresh run.
               bench_cache_poses.py says where each run's CPU time goes.

Each side's CPU seconds (user and system, of the process and every process it started, its
OpenCASCADE reader included: this benchmark reaps the processes `gjk` kills without waiting for
them, `_subreaper`) are measured too, and their ratio printed: on a loaded machine a steadier
figure than the wall time's, though not the wall time's share (that reader works beside the
command, on another core). With --steps, the glb-moved
scenario's cached run is made once more with its steps timed (CPU seconds of each, the imports
aside) and the number of parts it scanned: where a re-run of a moved GLB spends its time.

Each scenario's cached run is made once more, untimed, to see what it needed (`observed`): the
modules its own process imported, and whether it needed OpenCASCADE (loaded its library, or
asked the process gjk forks to read STEP for work). From them the start floor (`start_floor`):
the wall time of a process that imports those modules alone and, where OpenCASCADE was needed,
one beside it that only loads its library as gjk does, until both ended; printed as a share of
the fresh run. A re-run that needs what it imported is not faster: where a target lies below
its floor, no work the cache saves reaches it.

Usage:
    python benchmarks/bench_cache.py [--parts 10000] [--poses 10000,100000] [--repeat 3]
                                     [--only glb,step-changed,ifc,poses] (or any of glb, glb-moved, step,
                                      step-moved, step-edited, step-changed: the three, ifc, poses)
                                     [--steps]
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

STEP_FILES = ("step/as1-oc-214.stp", "step/as1_pe_203.stp", "box_sides.STEP.gz",
              "step/eight_cyl.stp", "step/stp_multiple_shp_at_root.stp")
IFC_CORPUS = Path(os.environ.get("GJK_IFC_CORPUS", ROOT.parent / "corpus" / "ifc"))
IFC_MODEL = "ISSUE_021_Mini_Project.ifc"
TARGETS = {"glb": 0.1, "glb-moved": 0.2, "step": 0.2, "step-moved": 0.5, "step-edited": 0.5, "ifc-moved": 0.3,
           "poses": 0.2}


def gjk(args: list, cache: Path | None, cpu: list | None = None) -> tuple[float, int, bytes, bytes]:
    """(wall seconds, exit code, stdout, stderr) of one `gjk` process; its CPU seconds (user
    and system) appended to `cpu`."""
    import resource

    argv = [sys.executable, "-m", "gjkcli", *map(str, args), "--format", "json"]
    argv += ["--no-cache"] if cache is None else ["--cache-dir", str(cache)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("GJK_NO_CACHE", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, env=env)
    wall = time.perf_counter() - t0
    _reap_orphans()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if cpu is not None:
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    if done.returncode not in (0, 1):
        raise RuntimeError(f"gjk {' '.join(map(str, args))} failed: {done.stderr.decode()[-2000:]}")
    return wall, done.returncode, done.stdout, done.stderr


def _subreaper() -> bool:
    """Make this process the reaper of its descendants' orphans (Linux's
    PR_SET_CHILD_SUBREAPER), so that a process `gjk` forked and killed without waiting for it
    (its OpenCASCADE reader, `gjkcli.mesh.cad_process.stop`) is reaped here and its CPU time
    counted with the command's (RUSAGE_CHILDREN counts only the reaped). Whether it is."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        return False


# Set by `main` (not as the module is imported: the tests load it): whether `_subreaper` took.
SUBREAPER = False


def _reap_orphans() -> None:
    """Wait for every descendant left (killed, ending): its CPU time then counts."""
    if not SUBREAPER:
        return
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return
        except InterruptedError:
            continue


def measure(name: str, before: list, after: list, work: Path, repeat: int) -> dict:
    snapshot = work / f"{name}-snapshot"
    shutil.rmtree(snapshot, ignore_errors=True)
    gjk(before, snapshot)  # fills the cache (untimed)
    snapshot.mkdir(parents=True, exist_ok=True)  # a run may keep nothing
    fresh, cached, same, fresh_cpu, cached_cpu = [], [], True, [], []
    for r in range(repeat):
        copy = work / f"{name}-run"
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(snapshot, copy)
        t, code, out, _ = gjk(after, None, fresh_cpu)
        fresh.append(t)
        t, code2, out2, err2 = gjk(after, copy, cached_cpu)
        cached.append(t)
        same &= out == out2 and code == code2
    f, c = statistics.median(fresh), statistics.median(cached)
    fc, cc = statistics.median(fresh_cpu), statistics.median(cached_cpu)
    occ, modules = observed(after, snapshot, work / f"{name}-run")
    floor = statistics.median(start_floor(modules, occ) for _ in range(repeat))
    return {"scenario": name, "fresh": f, "cached": c, "ratio": c / f, "target": TARGETS[name.split(":")[0]],
            "same": same, "fresh_cpu": fc, "cached_cpu": cc, "cpu_ratio": cc / fc, "occ": occ,
            "floor": floor, "floor_ratio": floor / f}


# Runs `python -m gjkcli ARGS` and writes, in the file NOTES, the modules the command's own process
# imported (one a line, in the order they were imported, as sys.modules holds them as it ends),
# and makes the file NOTES.ocp where the command needed OpenCASCADE: its library loaded by its own
# process (the module OCP.OCP, which the package OCP and so each of its modules imports), or work
# asked of the process that a STEP scan forks to read with it (`gjkcli.mesh.cad_process.ask`; an
# IFC model read there is IfcOpenShell's). That process imports the library as it starts, before
# the command knows whether the cache spares it, and a run that asks nothing of it does not wait
# for it (eight_cyl.stp's moved part): not a need. Nor is a lookup that does not import
# (importlib.util.find_spec("OCP"), which gjk's extras check makes).
_OBSERVE = """
import os, runpy, sys
notes = sys.argv.pop(1)
me = os.getpid()
def noted():
    os.close(os.open(notes + ".ocp", os.O_CREAT | os.O_WRONLY, 0o600))
class Marks:
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name == "OCP.OCP" and os.getpid() == me:
            noted()
        return None
sys.meta_path.insert(0, Marks)
before = set(sys.modules)
from gjkcli.mesh import cad_process
asked = cad_process.ask
def ask(function, *args, **kwargs):
    if function.__module__ != "gjkcli.mesh.ifc":  # the same process reads IFC models ahead
        noted()
    return asked(function, *args, **kwargs)
cad_process.ask = ask
sys.argv[0] = "gjk"
try:
    runpy.run_module("gjkcli", run_name="__main__")
finally:
    if os.getpid() == me:
        with open(notes, "w") as f:
            f.write("".join(m + chr(10) for m in list(sys.modules) if m not in before or m == "gjkcli"))
"""


def observed(after: list, snapshot: Path, copy: Path) -> tuple[bool, list]:
    """(whether the cached run needs OpenCASCADE, the modules its own process imported)
    (`_OBSERVE`): one more run, untimed, on a fresh copy of the snapshot."""
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(snapshot, copy)
    notes = copy.parent / f"{copy.name}.modules"
    mark = Path(f"{notes}.ocp")
    notes.unlink(missing_ok=True)
    mark.unlink(missing_ok=True)
    argv = [sys.executable, "-c", _OBSERVE, str(notes), *map(str, after), "--format", "json",
            "--cache-dir", str(copy)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("GJK_NO_CACHE", None)
    subprocess.run(argv, capture_output=True, env=env)
    _reap_orphans()
    occ = mark.exists()
    modules = notes.read_text().split() if notes.exists() else ["gjkcli.cli"]
    notes.unlink(missing_ok=True)
    mark.unlink(missing_ok=True)
    return occ, modules


# OpenCASCADE's library loaded as `gjkcli.mesh.cad.available` loads it (`gjkcli.extras.binding_import`,
# one module of OCP: importing any of them loads all of it), then the process ends.
_LOAD_OCP = """
import os
from gjkcli import extras
with extras.binding_import():
    import OCP.STEPCAFControl
os._exit(0)
"""

# Imports the modules given one a line on stdin, in their order (a module that does not import
# alone, made by another as it ran, is passed over), then ends.
_IMPORT = """
import importlib, os, sys
for name in sys.stdin.read().split():
    if name.split(".")[0] != "OCP" and name != "gjkcli.__main__":
        try:
            importlib.import_module(name)
        except Exception:
            pass
os._exit(0)
"""


def start_floor(modules: list, occ: bool) -> float:
    """Wall seconds in which the cached run's imports alone are made: a process that imports
    the modules the run's own process imported (`observed`: the interpreter, NumPy, gjk's
    modules and what else the run read with), OpenCASCADE's library aside, and where `occ`, one
    beside it that only loads that library as gjk does (`_LOAD_OCP`; gjk loads it in a process
    of its own, `gjkcli.mesh.cad_process`), until both ended (os._exit as they imported: no
    teardown of what they made). A run that needs what it imported is not faster."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    codes = [_IMPORT] + ([_LOAD_OCP] if occ else [])
    t0 = time.perf_counter()
    started = [subprocess.Popen([sys.executable, "-c", code], env=env, stdin=subprocess.PIPE) for code in codes]
    started[0].stdin.write("\n".join(modules).encode())
    for process in started:
        process.stdin.close()
    for process in started:
        if process.wait():
            raise RuntimeError(f"python -c {codes[started.index(process)]!r} failed")
    return time.perf_counter() - t0


def glb_scenarios(work: Path, parts: int):
    from make_scan_scene import scene, write_glb

    doc, binary = scene(parts, 0)
    before = work / f"scan_{parts}.glb"
    write_glb(before, doc, binary)
    rng = np.random.default_rng(45)
    moved = rng.choice(parts, size=max(1, parts // 100), replace=False)
    for k in moved.tolist():
        t = doc["nodes"][k]["translation"]
        doc["nodes"][k]["translation"] = [t[0] + 0.05, t[1] - 0.03, t[2] + 0.02]
    after = work / f"scan_{parts}_moved.glb"
    write_glb(after, doc, binary)
    yield "glb", ["scan", before], ["scan", before]
    yield "glb-moved", ["scan", before], ["scan", after]


# The cached GLB re-run's steps (`glb_steps`): the function, in the module that calls it.
_STEPS = (("the whole report's key (the file's digest)", "gjkcli.pipeline.cache", "run_key"),
          ("the last scene and report read", "gjkcli.pipeline.rescan", "kept_scene"),
          ("the glTF JSON read, the nodes placed", "gjkcli.mesh.gltf", "layout"),
          ("the moved parts and their neighbours scanned", "gjkcli.pipeline.run", "scan"),
          ("the report patched", "gjkcli.report.patch", "patched"),
          ("the report and scene kept", "gjkcli.pipeline.cache", "put_run"),
          ("the report and scene kept", "gjkcli.pipeline.rescan", "keep_scene"))
_STEPS_CODE = """
import json, sys, time, importlib
spent, sizes = {}, {}
for label, module, name in %r:
    m = importlib.import_module(module)
    f = getattr(m, name)
    def timed(*a, _f=f, _label=label, **k):
        t = time.process_time()
        try:
            return _f(*a, **k)
        finally:
            spent[_label] = spent.get(_label, 0.0) + time.process_time() - t
    setattr(m, name, timed)
import gjkcli.pipeline.rescan as rescan
plain = rescan.rescan
def counted(*a, **k):
    got = plain(*a, **k)
    if got is not None:
        sizes.update(moved=int(got.changed.sum()), scanned=len(got.subset), parts=len(got.names))
    return got
rescan.rescan = counted
from gjkcli.cli import main
start = time.process_time()
try:
    main(sys.argv[1:], standalone_mode=False)
except SystemExit:
    pass
spent["all (imports aside)"] = time.process_time() - start
print(json.dumps({"spent": spent, **sizes}))
"""


def glb_steps(after: list, work: Path, name: str) -> str:
    """The CPU seconds of the cached re-run's steps (`_STEPS`, on a fresh copy of the cache)
    and how many parts it scanned, as a line."""
    import json

    copy = work / f"{name}-steps"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(work / f"{name}-snapshot", copy)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("GJK_NO_CACHE", None)
    argv = [sys.executable, "-c", _STEPS_CODE % (_STEPS,), *map(str, after), "--format", "json",
            "--cache-dir", str(copy)]
    done = subprocess.run(argv, capture_output=True, env=env)
    try:
        got = json.loads(done.stdout.decode().strip().splitlines()[-1])
    except (ValueError, IndexError):
        return f"not measured ({done.stderr.decode()[-300:]})"
    steps = ", ".join(f"{label} {seconds:.3f} s" for label, seconds in got["spent"].items())
    if "scanned" not in got:
        return steps + " (the file was scanned whole)"
    return f"{steps}; {got['moved']:,} parts moved, {got['scanned']:,} of {got['parts']:,} scanned"


def step_scenarios(work: Path, changed: bool = False, kinds=("step", "step-moved", "step-edited")):
    """Each STEP assembly unchanged; with `changed`, also one solid changed, both ways a file is
    edited: "step-moved" (one instance of a part placed elsewhere, `step_moved`; a file without
    an assembly's placements has none) and "step-edited" (one solid's geometry edited: every
    CARTESIAN_POINT only that MANIFOLD_SOLID_BREP refers to moved alike, so its B-rep stays
    valid and its entity text changes; every instance of its part changes with it). kinds: those
    of these three scenarios made."""
    import gzip

    for name in STEP_FILES:
        path = ROOT / "tests" / "data" / "third_party" / name
        if path.suffix == ".gz":  # committed compressed: the file as its writer wrote it
            unpacked = work / path.stem
            unpacked.write_bytes(gzip.decompress(path.read_bytes()))
            path = unpacked
        if "step" in kinds:
            yield f"step:{path.name}", ["scan", path], ["scan", path]
        if not changed:
            continue
        text = path.read_text(encoding="latin-1")
        for kind, edit in (("moved", step_moved), ("edited", step_edited)):
            if f"step-{kind}" not in kinds:
                continue
            edited = edit(text)
            if edited is None:
                what = "instance placement" if kind == "moved" else "MANIFOLD_SOLID_BREP"
                print(f"step-{kind}:{path.name}: skipped, the file has no {what} to {kind[:-1]}")
                continue
            after = work / f"{kind}-{path.name}"
            after.write_text(edited, encoding="latin-1")
            yield f"step-{kind}:{path.name}", ["scan", path], ["scan", after]


_ENTITY = None


def _step_entities(text: str) -> dict:
    """{id: (start, end, record text)} of a STEP file's DATA section (records end at ';' outside
    a string)."""
    import re

    global _ENTITY
    if _ENTITY is None:
        _ENTITY = re.compile(r"#(\d+)\s*=\s*((?:'(?:[^']|'')*'|[^;'])*);")
    data = text.index("DATA;")
    return {int(m.group(1)): (m.start(2), m.end(2), m.group(2)) for m in _ENTITY.finditer(text, data)}


def _step_refs(record: str) -> list:
    import re

    return [int(r) for r in re.findall(r"#(\d+)", re.sub(r"'(?:[^']|'')*'", "''", record))]


def _step_points(text: str, entities: dict, ids, offset) -> str:
    """The text with the CARTESIAN_POINTs `ids` moved by `offset`."""
    import re

    edits = []
    for i in ids:
        start, end, record = entities[i]
        m = re.match(r"CARTESIAN_POINT\s*\(\s*('(?:[^']|'')*')\s*,\s*\(([^)]*)\)\s*\)\s*$", record, re.S)
        xyz = [float(v) for v in m.group(2).replace("\n", "").split(",")]
        moved = [v + d for v, d in zip(xyz, offset)]
        edits.append((start, end, f"CARTESIAN_POINT({m.group(1)},({','.join(repr(v) for v in moved)}))"))
    for start, end, record in sorted(edits, reverse=True):
        text = text[:start] + record + text[end:]
    return text


def _step_size(entities: dict) -> float:
    import re

    points = [[float(v) for v in m.group(1).replace("\n", "").split(",")]
              for _, _, r in entities.values() if r.startswith("CARTESIAN_POINT")
              for m in [re.search(r"\(([^()]*)\)\s*\)\s*$", r)] if m and len(m.group(1).split(",")) == 3]
    a = np.array(points)
    return float(np.linalg.norm(a.max(axis=0) - a.min(axis=0)))


def step_moved(text: str, which: int = -1) -> str | None:
    """The file with one part instance placed elsewhere: of the assembly's occurrences
    (NEXT_ASSEMBLY_USAGE_OCCURRENCE) of a product that is not an assembly itself, the last one's
    (or the one numbered `which`, in the file's order) placement (its
    CONTEXT_DEPENDENT_SHAPE_REPRESENTATION's ITEM_DEFINED_TRANSFORMATION) gets a copy of its
    target placement with the location moved by 2% of the model's size; None without one."""
    import re

    entities = _step_entities(text)
    kinds = {i: r.lstrip("( ").split("(")[0].strip() for i, (_, _, r) in entities.items()}
    nauo = {i: _step_refs(entities[i][2]) for i, k in kinds.items() if k == "NEXT_ASSEMBLY_USAGE_OCCURRENCE"}
    assemblies = {refs[0] for refs in nauo.values()}
    leaves = {i for i, refs in nauo.items() if refs[1] not in assemblies}
    shapes = {i: _step_refs(entities[i][2]) for i, k in kinds.items() if k == "PRODUCT_DEFINITION_SHAPE"}
    moves = []
    for i, k in kinds.items():
        if k != "CONTEXT_DEPENDENT_SHAPE_REPRESENTATION":
            continue
        relation, shape = _step_refs(entities[i][2])[:2]
        if shapes.get(shape, [None])[0] in leaves:
            m = re.search(r"REPRESENTATION_RELATIONSHIP_WITH_TRANSFORMATION\s*\(\s*#(\d+)", entities[relation][2])
            if m:
                moves.append(int(m.group(1)))
    if not moves or not -len(moves) <= which < len(moves):
        return None
    idt = moves[which]
    target = _step_refs(entities[idt][2])[-1]  # ITEM_DEFINED_TRANSFORMATION(name, description, item 1, item 2)
    location = _step_refs(entities[target][2])[0]  # AXIS2_PLACEMENT_3D(name, location, axis, direction)
    point, placement = max(entities) + 1, max(entities) + 2
    start, end, record = entities[idt]
    text = text[:start] + re.sub(rf"#{target}\b", f"#{placement}", record) + text[end:]
    copy = re.sub(rf"#{location}\b", f"#{point}", entities[target][2], count=1)
    at = text.index("ENDSEC;", text.index("DATA;"))
    text = text[:at] + f"#{point}={entities[location][2]};\n#{placement}={copy};\n" + text[at:]
    entities = _step_entities(text)
    return _step_points(text, entities, [point], (0.02 * _step_size(entities), 0.0, 0.0))


def step_edited(text: str) -> str | None:
    """The file with the last MANIFOLD_SOLID_BREP's own points (those no entity outside its
    closure refers to) moved by 1% of the model's size; None without one (a file of shells or
    surfaces)."""
    entities = _step_entities(text)
    solids = [i for i, (_, _, r) in entities.items() if r.startswith("MANIFOLD_SOLID_BREP")]
    if not solids:
        return None
    closure, todo = set(), [solids[-1]]
    while todo:
        i = todo.pop()
        if i not in closure:
            closure.add(i)
            todo.extend(_step_refs(entities[i][2]))
    outside = {r for i, (_, _, rec) in entities.items() if i not in closure for r in _step_refs(rec)}
    own = [i for i in closure if entities[i][2].startswith("CARTESIAN_POINT") and i not in outside]
    return _step_points(text, entities, own, (0.01 * _step_size(entities), 0.0, 0.0))


def ifc_moved(model: Path, after: Path, count: int = 10, seed: int = 45) -> int:
    """Write `model` to `after` with `count` of its placed elements (seeded choice) moved along
    x by IfcOpenShell's API: by 50 of the file's length unit (50 mm in a model in millimetres, 50
    m in one in metres), or by 0.05 where the element's local x is past 1,000. How many were
    moved (fewer when it has fewer)."""
    import ifcopenshell
    import ifcopenshell.api
    import ifcopenshell.util.placement

    f = ifcopenshell.open(str(model))
    elements = [e for e in f.by_type("IfcElement") if e.ObjectPlacement is not None and e.Representation is not None]
    rng = np.random.default_rng(seed)
    chosen = rng.choice(len(elements), size=min(count, len(elements)), replace=False).tolist()
    for k in chosen:
        e = elements[k]
        m = ifcopenshell.util.placement.get_local_placement(e.ObjectPlacement).copy()
        m[:3, 3] += (0.05, 0.0, 0.0) if abs(m[0, 3]) > 1000 else (50.0, 0.0, 0.0)
        ifcopenshell.api.run("geometry.edit_object_placement", f, product=e, matrix=m, is_si=False)
    f.write(str(after))
    return len(chosen)


def ifc_scenario(work: Path):
    model = IFC_CORPUS / IFC_MODEL
    if not model.is_file():
        print(f"ifc-moved: skipped, {model} is not there (GJK_IFC_CORPUS)")
        return
    after = work / "moved.ifc"
    ifc_moved(model, after)
    yield "ifc-moved", ["scan", model, "--tolerance", "2mm"], ["scan", after, "--tolerance", "2mm"]


def poses_scenario(work: Path, count: int):
    """The Panda of ../shared (its meshes and SRDF, as benchmarks/bench_poses.py), else the
    sample arm, at `count` random poses within its limits, then with 10% of them new."""
    from gjkcli.scene import urdf

    rng = np.random.default_rng(45)
    work = work / f"poses-{count}"
    work.mkdir(parents=True, exist_ok=True)
    panda = ROOT.parent / "shared" / "robots" / "panda"
    if not panda.is_dir():
        panda = Path("/work/shared/robots/panda")
    if panda.is_dir():
        from bench_matrix import PACKAGE, package_tree

        path = package_tree(panda, work)
        robot = urdf.load(path, ((PACKAGE, str(path.parents[1])),))
        extra, name = ["--srdf", panda / "panda.srdf"], f"poses:panda {count}"
    else:
        path = ROOT / "samples" / "robot" / "arm.urdf"
        robot = urdf.load(path)
        extra, name = [], f"poses:arm {count}"
    Q = rng.uniform(robot.lower, robot.upper, size=(count, robot.dof))
    before, after = work / "poses.csv", work / "poses_new.csv"

    def table(out: Path, rows) -> None:
        out.write_text(",".join(robot.variables) + "\n"
                       + "".join(",".join(f"{v:.17g}" for v in q) + "\n" for q in rows.tolist()))

    table(before, Q)
    new = rng.choice(count, size=count // 10, replace=False)
    Q[new] = rng.uniform(robot.lower, robot.upper, size=(len(new), robot.dof))
    table(after, Q)
    yield name, ["scan", path, *extra, "--poses", before], ["scan", path, *extra, "--poses", after]
    yield f"{name} unchanged", ["scan", path, *extra, "--poses", before], ["scan", path, *extra, "--poses", before]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--parts", type=int, default=10000, help="parts of the generated GLB (default 10000)")
    parser.add_argument("--poses", default="10000,100000",
                        help="robot poses, one scenario per count (default 10000,100000)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs of each side (default 3)")
    parser.add_argument("--only", default="glb,step-changed,ifc,poses",
                        help="scenarios: glb (unchanged and glb-moved; or either by name), step (unchanged), step-moved, step-edited, step-changed "
                             "(all three: unchanged, and one solid moved or "
                             "edited), ifc, poses")
    parser.add_argument("--keep", type=Path, help="work here (default: a temporary folder)")
    parser.add_argument("--steps", action="store_true",
                        help="glb-moved: also the CPU seconds of the cached run's steps (one more run)")
    args = parser.parse_args(argv)
    only = set(args.only.split(","))
    global SUBREAPER
    SUBREAPER = sys.platform.startswith("linux") and _subreaper()
    from _common import markdown_table

    # the bytecode an installed package has (as bench_poses.py): neither side compiles gjk's modules
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "gjkcli")], env=env, capture_output=True)
    work = args.keep or Path(tempfile.mkdtemp(prefix="gjk-bench-cache-"))
    work.mkdir(parents=True, exist_ok=True)
    scenarios = []
    if only & {"glb", "glb-moved"}:
        scenarios += [s for s in glb_scenarios(work, args.parts) if s[0] in only or "glb" in only]
    kinds = {"step", "step-moved", "step-edited"} if "step-changed" in only else \
        only & {"step", "step-moved", "step-edited"}
    if kinds:
        scenarios += list(step_scenarios(work, bool(kinds - {"step"}), kinds))
    if "ifc" in only:
        scenarios += list(ifc_scenario(work))
    if "poses" in only:
        for count in args.poses.split(","):
            scenarios += list(poses_scenario(work, int(count)))
    rows = []
    for name, before, after in scenarios:
        got = measure(name, before, after, work, args.repeat)
        print(f"{name}: fresh {got['fresh']:.2f} s, cached {got['cached']:.2f} s, ratio {got['ratio']:.2f} "
              f"(target {got['target']}), CPU {got['fresh_cpu']:.2f} s against {got['cached_cpu']:.2f} s "
              f"(ratio {got['cpu_ratio']:.2f}), same JSON {got['same']}; needs OpenCASCADE {got['occ']}, "
              f"start floor {got['floor']:.2f} s ({got['floor_ratio']:.2f} of fresh)", flush=True)
        if name == "glb-moved" and args.steps:
            print(f"{name}: where the cached run's CPU goes: {glb_steps(after, work, name)}", flush=True)
        rows.append(got)
    print()
    print(f"Whole `gjk scan ... --format json` processes, medians of {args.repeat} alternating runs; "
          f"cached: a copy of the cache the run on the inputs before the change left. Start floor: "
          f"a process that only imports what the cached run's own process imported and, where the "
          f"cached run needed OpenCASCADE, one beside it that only loads its library (any module of "
          f"OCP loads all of it), until both ended, as a share of the fresh run: no run that needs "
          f"them is faster.")
    print()
    print(markdown_table(["scenario", "fresh (s)", "cached (s)", "cached / fresh", "target", "held",
                          "CPU cached / fresh", "same JSON", "cached run needs OCP", "start floor / fresh"],
                         [[r["scenario"], f"{r['fresh']:.2f}", f"{r['cached']:.2f}", f"{r['ratio']:.2f}",
                           f"{r['target']}", "yes" if r["ratio"] <= r["target"] else "no",
                           f"{r['cpu_ratio']:.2f}", "yes" if r["same"] else "NO", "yes" if r["occ"] else "no",
                           f"{r['floor_ratio']:.2f}"] for r in rows]))
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if all(r["same"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
