"""Run the benchmark scripts and write the tables the docs include.

Each script in this folder prints Markdown tables that set gjk beside its peer's lean path (coal,
python-fcl through trimesh, shapely, IfcClash), measured side by side in one run. This script runs
a selection of them, each as its own process, and writes what they print as data:

    docs/benchmarks/<name>.md    the tables the script printed, its other output in a text block,
                                 and the exact command that produced them
    docs/benchmarks/<name>-<k>.csv  each table as CSV
    docs/benchmarks/machine.md   the machine (CPU, cores, memory, load), Python and the versions
                                 of gjk and of every library the scripts compare against

Usage:
    python benchmarks/tables.py [--quick] [--only NAME ...] [--out docs/benchmarks]

--quick runs each script at the small size listed in SUITE (the docs page says which sizes); the
full sizes are each script's defaults. Scripts whose inputs are missing (../shared, a browser,
an extra) are listed in machine.md as skipped, with the reason, instead of failing the run.
"""
from __future__ import annotations

import argparse
import csv
import datetime as dt
import importlib.metadata
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
# the public STEP assemblies of benchmarks/step_corpus.json, kept outside the repository
# (`bench_step.py --make-corpus` puts them there)
STEP_CORPUS = Path(os.environ.get("GJK_STEP_CORPUS", ROOT.parent / "corpus" / "step"))
# IFC models of many authoring tools, gathered from public repositories as
# benchmarks/ifc_corpus.csv lists them (not in the repository): GJK_IFC_CORPUS, else ../corpus/ifc
IFC_CORPUS = Path(os.environ.get("GJK_IFC_CORPUS", ROOT.parent / "corpus" / "ifc"))
# bench_startup's core install (made on its first run, gjk reinstalled on later ones)
CORE_VENV = os.path.join(tempfile.gettempdir(), "gjk-core-venv")


@dataclass(frozen=True)
class Bench:
    name: str
    title: str
    script: str
    quick: tuple[str, ...]
    full: tuple[str, ...] = ()
    needs: tuple[str, ...] = ()  # importable modules, "shared" or "chromium"
    what: str = ""  # what is compared, for the docs page


SUITE = (
    Bench("engine", "The engine against coal", "bench_engine.py", ("--quick",), (), ("coal",),
          "Random hulls of 100 and 1,000 vertices at random rotations, about half of the pairs "
          "overlapping; microseconds per pair, gjk in one `batch()` call, coal called per pair from "
          "Python, interleaved chunk by chunk so that both see the same load. The verdicts, "
          "distances and depths are compared (second table)."),
    Bench("support", "Support maps against hull size", "bench_support.py", ("--quick",), (), (),
          "The cost of one support call on hulls of 100 to 100,000 vertices (warm walks as inside "
          "GJK, and cold calls), against a linear scan; where the scan beats hill climbing."),
    Bench("exact", "The triangle test against python-fcl", "bench_exact.py", ("--quick",), (),
          ("fcl", "shared"),
          "Real meshes of ../shared at random poses whose hulls overlap: the compiled core's "
          "intersection and distance queries and its hierarchy's build against FCL's OBBRSS "
          "BVHModel, each called from Python, median per call."),
    Bench("depth", "The exact verdict's depth search on long, thin triangles", "bench_depth.py",
          ("--pairs", "100", "--repeats", "1"), (), (),
          "Seeded crossings of two 4 m beams pressed a few millimetres into each other: "
          "`exact_query` as shipped (the search measures the depth with fewer triangles once a "
          "point deeper than the band proves the collision) against the same search kept as wide "
          "as while proving; CPU time, verdicts that differ (none) and the depth ratio."),
    Bench("primitive", "A primitive against a mesh, beside python-fcl", "bench_primitive.py",
          ("--poses", "50"), (), ("fcl", "shared"),
          "A sphere, capsule, cylinder, cone or box against a real mesh's triangles: gjk's "
          "`primitive_query` against FCL's own primitive against the mesh's BVHModel."),
    Bench("api", "The Python API against trimesh's CollisionManager", "bench_api.py",
          ("--objects", "300", "--repeats", "1", "--moving", "100", "--steps", "20"), (), ("fcl",),
          "(a) `gjkcli.CollisionManager` against trimesh's (python-fcl) on a scene of meshes from "
          "`trimesh.creation`: filling it, `in_collision_internal`, `in_collision_single` and "
          "`min_distance_single` with probes; (b) one pair, `query` against `coal.distance` from "
          "Python; (c) the managers under moves; (d) (a) with shared meshes; programs' own patterns: "
          "(e) a new manager of 30 boxes per step and `in_collision_other`, (f) trimesh's "
          "`test_random_spheres` (1,000 icospheres), (g) a grasp sampler's `min_distance_single` "
          "against a non-convex object, (h) `min_distance_*` of overlapping non-convex parts "
          "((g) and (h) need ../shared), (i) a sensed scene (one mesh of thousands of bodies) and "
          "an object's manager at 300 poses, `in_collision_other`."),
    Bench("scan", "gjk scan against trimesh + python-fcl", "bench_scan.py", ("--sizes", "1000"),
          ("--sizes", "1000,10000"), ("fcl",),
          "Generated GLB scenes of 40-point convex parts. trimesh's pipeline (`load_scene`, "
          "`add_object` per node, `in_collision_internal`) timed after `import trimesh`; `gjk scan "
          "--mode hull` end to end in a fresh process (interpreter and imports included), with "
          "JSON, the table and `-q`. Both must find the same pairs."),
    Bench("plane", "The plane's narrow phase against shapely", "bench_plane.py",
          ("--pairs", "1000"), (), ("shapely",),
          "Seeded pairs of 2D parts (convex polygons, plates with holes), about half overlapping, "
          "polygons built beforehand for both: `plane.batch` against `shapely.distance` (GEOS), "
          "vectorised. The distances must agree to 1e-9 of the parts' size."),
    Bench("nest", "A 2D nest against shapely", "bench_nest.py", ("--parts", "1000"), (),
          ("shapely", "ezdxf"),
          "A DXF nest written by scripts/make_nest.py, read once by gjk's reader (loading is out of "
          "every timing): which pairs are closer than the kerf. gjk from the packed parts to the "
          "findings; shapely with a `Polygon` per part, an STRtree and `distance`; and shapely "
          "given the same packed arrays (`from_ragged_array`). The pair sets must be equal."),
    Bench("matrix", "The self-collision matrix against trimesh + python-fcl", "bench_matrix.py",
          ("--samples", "2000"), (), ("fcl", "shared"),
          "The Panda at random poses, both sides from the parsed robot in one process: trimesh's "
          "`CollisionManager` checks every pair at every pose, as MoveIt's setup assistant does; "
          "gjk's matrix settles pairs as it goes (and is also timed checking every pair). The two "
          "matrices must agree."),
    Bench("check", "gjk check's wall time", "bench_check.py", ("--runs", "3"), (), (),
          "`gjk check` on the samples in fresh processes, the first run included, and importing the "
          "CLI, against budgets of 1 s and 0.3 s."),
    Bench("startup", "gjk check's start-up per mesh format", "bench_startup.py",
          ("--runs", "5", "--core-venv", CORE_VENV), (), (),
          "`gjk check` on a cube and a 642-vertex sphere written as ASCII and binary STL, OBJ, "
          "binary and ASCII PLY, OFF and GLB, and on files as tools write them (tests/data/written: "
          "OBJ as Blender, Fusion, FreeCAD and MeshLab write it, OBJ indexed back from the last "
          "vertex, binary PLY with colours, GLB of several meshes), the whole process 5 times per "
          "format in turn: median "
          "wall and CPU time, beside `python -c pass`, `import numpy` (as any program imports it, and "
          "with one OpenBLAS thread as gjk's command line does) and `import trimesh` (the floor of "
          "a reader built on trimesh). gjk and the references run in a core install (`pip install "
          ".` in a virtual environment of its own, as the README's first command), not in the test "
          "environment, whose extras add their own start to every Python process. Target: 0.3 s "
          "of wall time per format."),
    Bench("layer_hints", "What the DXF layer notes cost a read", "bench_layer_hints.py",
          ("--parts", "2000", "--repeat", "3"), (), ("ezdxf", "shapely"),
          "`read_drawing` on a generated nest with its sheet layer, with the layer notes (a layer "
          "that looks like a sheet, one that only marks parts) and without, alternating: medians "
          "and their ratio."),
    Bench("poses", "--poses against trimesh + python-fcl", "bench_poses.py",
          ("--poses", "300", "--waypoints", "1000"), (), ("fcl", "shared"),
          "Random Panda poses with its SRDF: trimesh + python-fcl in one process (`set_transform` "
          "per link and `in_collision_internal` per pose) against the whole `gjk scan panda.urdf "
          "--poses FILE` process; wall and CPU time."),
    Bench("html", "The HTML page of a large scan in headless Chromium", "bench_html.py",
          ("--parts", "2000", "--repeat", "1"), (), ("plotly", "playwright", "chromium"),
          "`gjk scan --mode hull --html` on the benchmark scene: the page's size, and how long "
          "headless Chromium (software WebGL) takes to draw it and to reframe a pair on a click."),
    Bench("dask", "One process against a Dask cluster", "bench_dask.py",
          ("--parts", "20000", "--files", "10", "--one-glb", "20000", "--workers", "2",
           "--check-workers", "4,8"), (), ("distributed", "psutil"),
          "`gjk scan -j 2` in one process against `--dask local:2` on (a) the scan scene over 10 GLB "
          "files, (b) one GLB the cluster reads in ranges of its nodes, (c) an IFC model of the "
          "corpus (the Great Court roof, 5,178 beams) meshed in shares of its elements "
          "and refined on the workers; (d) `local:4` and `local:8` on scene (a); (e) a STEP "
          "assembly of the corpus read in a task per worker, each meshing a share of its products, "
          "and again in one task. Wall time, the "
          "client's own peak memory (VmHWM, the workers apart) against the one process's, "
          "and the JSON reports, which must be equal; the targets of issue 46 beside them. A "
          "2-core machine cannot make a cluster faster; the script models the time and memory on "
          "8, 32 and 128 workers from Dask's task stream (tasks' sizes, bytes to the client)."),
    Bench("step", "A STEP assembly against trimesh, cascadio and python-fcl", "bench_step.py",
          ("--parts", "200"), (), ("OCP", "cascadio", "fcl"),
          "A generated assembly of instanced cylinders and boxes, end to end from the STEP file, "
          "each side in a fresh process: gjk (with and without overlap volumes) against trimesh's "
          "route through cascadio and FCL (collisions only)."),
    Bench("step_real", "STEP assemblies against trimesh, cascadio and python-fcl", "bench_step.py",
          ("--real", "--repeat", "1", "--check"), ("--real", "--repeat", "3", "--check"),
          ("OCP", "cascadio", "fcl"),
          "The five real assemblies committed under tests/data/third_party/step, each side a "
          "fresh process with its modules compiled (as installed packages have them) after one "
          "untimed run, alternating: `gjk scan FILE` against `trimesh.load_scene` (cascadio) + "
          "`CollisionManager.in_collision_internal`; `--check` holds every pair against "
          "OpenCASCADE's exact distance and common volume. Target: gjk at most 1.0 of the route."),
    Bench("step_corpus", "STEP assemblies of many writers against trimesh, cascadio and python-fcl",
          "bench_step.py",
          ("--real", "--corpus", str(STEP_CORPUS), "--repeat", "1", "--check", "--route-timeout", "150"),
          ("--real", "--corpus", str(STEP_CORPUS), "--repeat", "3", "--check", "--route-timeout", "150"),
          ("OCP", "cascadio", "fcl", "step_corpus"),
          "Eighteen public assemblies from OpenCASCADE's test data (benchmarks/step_corpus.json: "
          "SolidWorks, CATIA V4, Pro/ENGINEER, Unigraphics, Inventor, I-DEAS, Euclid, HiCAD, "
          "SolidDesigner, AutoCAD, MicroStation and Open CASCADE writers), kept outside the "
          "repository (`GJK_STEP_CORPUS`, made by `bench_step.py --make-corpus`): as step_real, "
          "each side a fresh process, the route bounded to 150 s and 4 GB a run; `--check` holds "
          "every pair against OpenCASCADE. Target: gjk at most 1.0 of the route on every file "
          "it finishes, 0.7 over the corpus."),
    Bench("refine_occ", "A STEP pair's refinement against OpenCASCADE's own calls", "bench_refine_occ.py",
          tuple(str(STEP_CORPUS / f) for f in ("bug31670_russian.stp", "tr10_r0901_ec.stp"))
          + ("--runs", "1"),
          tuple(str(STEP_CORPUS / f) for f in ("bug31670_russian.stp", "tr10_r0901_ec.stp",
                                               "trj4_pm2-ec-214.stp")) + ("--runs", "3"),
          ("OCP", "step_corpus"),
          "The pairs of three corpus assemblies that reach the exact solids (SolidWorks 2017's "
          "bug31670_russian, Euclid's r0901 and pm2): gjk's refinement of them in one process "
          "against a plain loop of OpenCASCADE's BRepAlgoAPI_Common (with volume and area) and "
          "BRepExtrema_DistShapeShape over the same pairs, CPU time."),
    Bench("ifc", "IFC models against IfcClash", "bench_ifc.py",
          ("--models", str(ROOT / "tests" / "data" / "third_party"), "--runs", "1"),
          ("--models", str(ROOT / "tests" / "data" / "third_party"), "--runs", "3"),
          ("ifcopenshell", "ifcclash"),
          "`gjk scan` and IfcClash side by side on IFC models at a 2 mm band, whole processes: "
          "median times and peak memory."),
    Bench("ifc_corpus", "IFC models of many authoring tools against IfcClash", "bench_ifc.py",
          ("--models", str(IFC_CORPUS), "--runs", "1", "--target", "0.7"),
          ("--models", str(IFC_CORPUS), "--runs", "3", "--target", "0.7"),
          ("ifcopenshell", "ifcclash", "ifc_corpus"),
          "`gjk scan` and IfcClash side by side at a 2 mm band on the models of "
          "benchmarks/ifc_corpus.csv (ArchiCAD 9, 11, 14, 20 and 24, Revit 2008, 2011 and 2021, "
          "VectorWorks 12.5 and 2013, Tekla 2019, IfcOpenShell and BlenderBIM; IFC2X3 and IFC4), "
          "whole processes. Per model: the "
          "objects gjk read, the physical elements IfcOpenShell's iterator meshes, those the run "
          "names in a note as left out (no 3D body), the undecided pairs, the wall-time ratio "
          "(target 0.7), CPU time and peak memory."),
    Bench("listing", "The memory of a long --all-pairs listing", "bench_listing.py",
          ("--parts", "300,600"), ("--parts", "300,600,1500"), (),
          "`gjk scan --all-pairs` of a generated scene of convex parts, every pair within the "
          "clearance (a listing of n x (n - 1) / 2 pairs), the JSON written to a file: the "
          "command's peak resident memory, CPU time and the JSON's size for each size, and the "
          "memory each further pair costs (the slope between the two largest)."),
    Bench("cache", "A re-run with the cache against the same scan without it", "bench_cache.py",
          ("--parts", "2000", "--poses", "500", "--repeat", "1"), ("--parts", "10000", "--repeat", "3"), (),
          "Whole `gjk scan --format json` processes, alternating: `--no-cache` against a run on a "
          "copy of the cache a run on the inputs before the change left: a generated GLB with "
          "nothing changed and with 1% of its parts moved, the five committed STEP assemblies "
          "with nothing changed, with one part instance placed elsewhere and with one solid's "
          "geometry edited, a Tekla IFC model of the corpus (2,636 elements) with 10 "
          "elements moved by IfcOpenShell's API (GJK_IFC_CORPUS; skipped without it), 10,000 and 100,000 "
          "random poses of the Panda (--poses) with 10% of them new. Medians, their ratio against the issue's targets, "
          "whether the cached run's JSON is the fresh run's byte for byte, whether the cached run needed "
          "OpenCASCADE, and its start floor: the imports it made (and OpenCASCADE's library beside them "
          "where it needed it) as a share of the fresh run."),
    Bench("cache-cold", "A first run with the cache against the same scan without it", "bench_cache_cold.py",
          ("--parts", "2000", "--poses", "500", "--repeat", "1"), ("--parts", "10000", "--repeat", "3"), (),
          "Whole `gjk scan --format json` processes, alternating: `--no-cache` against a run that "
          "fills a new, empty cache folder (what a CI job's first run, or a run after a change that "
          "touches most pairs, pays for writing the cache), on bench_cache.py's inputs before their "
          "change and on the Great Court roof (24,997 pairs refined on the triangles; "
          "GJK_IFC_CORPUS, skipped without it). Medians, their ratio, and whether the two JSON "
          "reports are the same bytes."),
    Bench("watch", "A re-run of `gjk scan --watch` against the same scan as a whole process", "bench_watch.py",
          ("--parts", "2000", "--poses", "500", "--repeat", "1"), ("--parts", "10000", "--repeat", "3"), (),
          "bench_cache.py's changed inputs saved over one file in place while `gjk scan FILE --watch` "
          "watches it (a new process and cache each time, its first run on the file before the "
          "change): the re-run's time as the command says it, against whole `gjk scan FILE "
          "--format json --no-cache` processes on the changed file. Medians, their ratio, and "
          "whether the reports are the same bytes."),
    Bench("reports", "Each CI report beside the JSON report of the same scan", "bench_reports.py",
          ("--parts", "2000", "--repeat", "1"), ("--parts", "20000", "--repeat", "3"), (),
          "`gjk scan INPUT --format FORMAT -o OUT` for JSON, SARIF, JUnit and GitHub annotations, "
          "whole processes without the cache, the formats in turn: a generated scene of thousands "
          "of colliding pairs and the Great Court roof (25,000 listed pairs; skipped without the "
          "gathered corpus). Wall and CPU seconds, peak memory and the report's size, each over the "
          "JSON run's."),
    Bench("digest", "The cache's hash of bulk bytes against BLAKE2b", "bench_digest.py",
          ("--repeat", "3"), ("--repeat", "7"), (),
          "BLAKE3 (its own binding: what gjk hashes input files and cache entries with) against "
          "BLAKE2b (CPython's, what it used before) and OpenSSL's SHA-256, in one process on one "
          "thread: seconds to hash 1, 20 and 100 MB of random bytes, and 10,000 hashes of 200 "
          "bytes (the per-call cost), medians."),
    Bench("cache-poses", "Where a cached poses run's time goes", "bench_cache_poses.py",
          ("--poses", "2000", "--repeat", "1"), ("--repeat", "3"), ("shared",),
          "The Panda at 10,000 and 100,000 random poses with 10% of the table's rows new, fresh "
          "(`--no-cache`) and with the cache the run on the table before left: each stage's CPU "
          "time inside the process, and the floor (Python's start, the imports a poses run needs)."),
)

# The libraries whose versions the tables depend on.
LIBRARIES = ("numpy", "scipy", "trimesh", "manifold3d", "coal", "python-fcl", "shapely", "ezdxf",
             "ifcopenshell", "cadquery-ocp-novtk", "dask", "plotly", "matplotlib")


def missing(bench: Bench) -> str | None:
    """Why the benchmark cannot run here, or None."""
    for need in bench.needs:
        if need == "shared":
            if not SHARED.is_dir():
                return f"{SHARED} (the real-world meshes and robots) is absent"
        elif need == "step_corpus":
            if not STEP_CORPUS.is_dir():
                return (f"{STEP_CORPUS} (the STEP corpus, GJK_STEP_CORPUS) is absent: "
                        "bench_step.py --make-corpus makes it")
        elif need == "ifc_corpus":
            if not IFC_CORPUS.is_dir():
                return f"{IFC_CORPUS} (the IFC corpus of benchmarks/ifc_corpus.csv; GJK_IFC_CORPUS) is absent"
        elif need == "chromium":
            if shutil.which("chromium") is None:
                return "no chromium on PATH"
        else:
            try:
                __import__(need)
            except ImportError:
                return f"{need} is not installed"
    return None


# Terminal colours, and OpenCASCADE's banners when a script writes a STEP file
ANSI = re.compile(r"\x1b\[[0-9;]*m")
CHATTER = re.compile(r"^(\*+|\*{2,}.*|Step File Name :.*)$")


def split_output(text: str) -> list[tuple[str, list[str]]]:
    """A script's output in order as ("table", lines), ("caption", [line]) and ("text", lines):
    Markdown tables, the `## ` headings scripts print above them, and everything else."""
    parts: list[tuple[str, list[str]]] = []
    for line in ANSI.sub("", text).splitlines():
        stripped = line.strip()
        if not stripped or CHATTER.match(stripped):
            continue
        kind = "table" if stripped.startswith("|") else "caption" if stripped.startswith("## ") else "text"
        if kind == "caption":
            parts.append((kind, [stripped[3:]]))
        elif parts and parts[-1][0] == kind:
            parts[-1][1].append(stripped if kind == "table" else line.rstrip())
        else:
            parts.append((kind, [stripped if kind == "table" else line.rstrip()]))
    return parts


def table_rows(table: list[str]) -> list[list[str]]:
    """A Markdown table's cells, the separator row left out."""
    rows = []
    for line in table:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if all(set(c) <= set("-: ") for c in cells):
            continue
        rows.append(cells)
    return rows


def run(bench: Bench, quick: bool, out: Path) -> tuple[str, float]:
    """Run one script, write its tables; return its status line and its wall time."""
    args = bench.quick if quick else bench.full
    cmd = [sys.executable, str(ROOT / "benchmarks" / bench.script), *args]
    shown = " ".join(["python", f"benchmarks/{bench.script}",
                      *(str(Path(x).relative_to(ROOT)) if x.startswith(str(ROOT)) else x for x in args)])
    before = load()
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=ROOT / "benchmarks", capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0 and "|" not in done.stdout:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return f"failed (exit {done.returncode}: {tail})", seconds
    page = [f"<!-- written by `python benchmarks/tables.py{' --quick' if quick else ''}`; do not edit -->",
            "", f"Command: `{shown}` ({seconds:.0f} s), run {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC,"
            f" load average {before} before and {load()} after (1, 5, 15 min).", ""]
    parts = split_output(done.stdout)
    k = 0
    for kind, lines in parts:
        if kind == "table":
            k += 1
            page += [*lines, ""]
            with open(out / f"{bench.name}-{k}.csv", "w", newline="", encoding="utf-8") as f:
                csv.writer(f).writerows(table_rows(lines))
        elif kind == "caption":
            page += [f"**{lines[0]}**", ""]
        else:
            page += ["```text", *lines, "```", ""]
    if done.returncode != 0:
        # the scripts exit 1 when a target is missed or the two sides' answers differ: the tables
        # stand, with that said beside them
        page += [f"The script exited with {done.returncode}: a target was not met or the answers "
                 "differed; its output above says which.", ""]
        (out / f"{bench.name}.md").write_text("\n".join(page), encoding="utf-8")
        return f"{k} table(s); exit {done.returncode}, a target not met (see its output)", seconds
    (out / f"{bench.name}.md").write_text("\n".join(page), encoding="utf-8")
    return f"{k} table(s)", seconds


@dataclass(frozen=True)
class Headline:
    """One row of the README's speed section: the figure a benchmark's page states."""
    bench: str
    pattern: str  # a regular expression whose first group is the figure, on the page
    task: str
    peer: str
    target: str


HEADLINES = (
    Headline("poses", r"\| gjk \(whole process\) \|(?: [^|]+ \|){3} ([0-9.]+) \|",
             "3,000 robot poses (the Panda, its SRDF): the whole `gjk scan --poses` process",
             "trimesh + python-fcl in process: `set_transform` per link, `in_collision_internal` "
             "per pose", "0.3"),
    Headline("api", r"manager ratio \(gjk / trimesh, total\): ([0-9.]+)",
             "`gjkcli.CollisionManager`, 1,000 distinct meshes: fill, then the queries",
             "trimesh's `CollisionManager` (python-fcl)", "0.25"),
    Headline("api", r"manager ratio \(shared meshes\) \(gjk / trimesh, total\): ([0-9.]+)",
             "the same, 1,000 objects made from 5 shared meshes",
             "trimesh's `CollisionManager` (python-fcl)", "0.25"),
    Headline("api", r"moves ratio \(gjk / trimesh\): ([0-9.]+)",
             "the manager under moves: 300 objects, 100 x `set_transform`, "
             "`in_collision_internal`, `min_distance_internal`",
             "trimesh's `CollisionManager` (python-fcl)", "0.5"),
    Headline("scan", r"n=10000: .*?ratio ([0-9.]+)",
             "`gjk scan` of 10,000 parts in one GLB: the whole process",
             "trimesh's scene and `CollisionManager.in_collision_internal`, in process", "0.1"),
    Headline("step_real", r"gjk / trimesh ([0-9.]+)",
             "five real STEP assemblies, every pair decided exactly: whole processes",
             "trimesh's STEP route (cascadio) and `in_collision_internal`, whole processes", "1.0"),
    Headline("step_corpus", r"gjk / trimesh ([0-9.]+)",
             "18 public STEP assemblies of 15 writers (those the route finishes), every pair "
             "decided exactly: whole processes",
             "trimesh's STEP route (cascadio) and `in_collision_internal`, whole processes", "0.7"),
)
SPEED_START = "<!-- speed: written by `python benchmarks/tables.py` from docs/benchmarks; do not edit -->"
SPEED_END = "<!-- /speed -->"


def speed_section(out: Path) -> str:
    """The README's speed section: per headline, gjk's time over its peer's as the benchmark's
    page in `out` states it ("not measured" where the page or the figure is missing)."""
    rows = []
    for h in HEADLINES:
        page = out / f"{h.bench}.md"
        found = re.search(h.pattern, page.read_text(encoding="utf-8")) if page.exists() else None
        rows.append(f"| {h.task} | {h.peer} | {found.group(1) if found else 'not measured'} | "
                    f"at most {h.target} |")
    page = out / "startup.md"
    found = re.search(r"slowest format: ([0-9.]+) s wall", page.read_text(encoding="utf-8")) \
        if page.exists() else None
    startup = f"{found.group(1)} s" if found else "not measured"
    return "\n".join([
        SPEED_START, "## Speed", "",
        "gjk's time as a share of the tool a user of each task would run instead, on the same inputs",
        "in the same run (below 1: gjk is faster). The tables, their commands and the machine are in",
        "[the benchmarks page](docs/benchmarks.md).", "",
        "| task | against | gjk / peer | target |", "|---|---|---|---|", *rows, "",
        "Start-up: `gjk check A B` on two small parts, the whole process in a core install, the "
        "slowest", f"of seven mesh formats and seven files as tools write them (median of 5 runs): "
        f"{startup} (target: at most 0.3 s).",
        SPEED_END])


def write_speed(readme: Path, out: Path) -> None:
    """Replace the README's speed section (between its markers) with `speed_section(out)`."""
    text = readme.read_text(encoding="utf-8")
    start, end = text.index(SPEED_START), text.index(SPEED_END) + len(SPEED_END)
    readme.write_text(text[:start] + speed_section(out) + text[end:], encoding="utf-8")


def write_results(out: Path, known: dict) -> None:
    """results.md: per benchmark, what it compares and the tables of its last run, or why none."""
    page = ["<!-- written by `python benchmarks/tables.py`; do not edit -->", ""]
    for bench in SUITE:
        page += [f"## {bench.title}", "", bench.what, ""]
        tables = out / f"{bench.name}.md"
        said = known.get(bench.name, {}).get("result", "not run yet")
        if tables.exists() and not said.startswith(("skipped", "failed", "not run")):
            page += [tables.read_text(encoding="utf-8").split("\n", 2)[2].strip(), ""]
        else:
            page += [f"No table here: {said}. Run `python benchmarks/{bench.script}` where it can.", ""]
    (out / "results.md").write_text("\n".join(page), encoding="utf-8")


def sizes_of(page: Path) -> str:
    """The sizes a benchmark's page was run at, from the line `run` writes first: "quick", or
    "defaults". Pages of runs with and without --quick sit side by side (`--only` reruns some)."""
    try:
        first = page.read_text(encoding="utf-8").split("\n", 1)[0]
    except OSError:
        return "-"
    return "quick" if "--quick" in first else "defaults"


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def memory_gb() -> str:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                return f"{int(line.split()[1]) / 2**20:.1f} GB"
    except OSError:
        pass
    return "unknown"


def load() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


def version(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def commit() -> str:
    done = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True)
    return done.stdout.strip() or "unknown"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the small sizes of SUITE")
    ap.add_argument("--only", nargs="*", choices=[b.name for b in SUITE], help="these benchmarks")
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "benchmarks")
    ap.add_argument("--note", default="", help="a line about the machine's state, written as given")
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    chosen = [b for b in SUITE if not a.only or b.name in a.only]
    load_before = load()
    status = []
    for bench in chosen:
        reason = missing(bench)
        if reason:
            status.append((bench, f"skipped: {reason}", 0.0))
            print(f"{bench.name}: skipped ({reason})", flush=True)
            continue
        said, seconds = run(bench, a.quick, a.out)
        status.append((bench, said, seconds))
        print(f"{bench.name}: {said}, {seconds:.0f} s", flush=True)
    lines = [f"<!-- written by `python benchmarks/tables.py{' --quick' if a.quick else ''}`; do not edit -->", "",
             "| | |", "|---|---|",
             f"| date (UTC) | {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} |",
             f"| gjk | {version('gjk')} (commit {commit()}) |",
             f"| CPU | {cpu_model()}, {os.cpu_count()} logical cores |",
             f"| memory | {memory_gb()} |",
             f"| load average (1, 5, 15 min) | before: {load_before}; after: {load()} |",
             f"| system | {platform.system()} {platform.release()} |",
             f"| Python | {platform.python_version()} ({platform.python_implementation()}) |",
             *[f"| {name} | {version(name)} |" for name in LIBRARIES],
             "| sizes | each benchmark's below: quick (the small arguments of SUITE) or the script's "
             "defaults, as its page's command line shows |"]
    if a.note:
        lines.append(f"| note | {a.note} |")
    # the status of every benchmark, those of earlier runs of this script kept (--only)
    record = a.out / "status.json"
    known = json.loads(record.read_text()) if record.exists() else {}
    known.update({b.name: {"result": said, "seconds": round(sec)} for b, said, sec in status})
    record.write_text(json.dumps(known, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    lines += ["", "| benchmark | sizes | result | wall time (s) |", "|---|---|---|---:|"]
    lines += [f"| {b.name} | {sizes_of(a.out / f'{b.name}.md')} | {known[b.name]['result']} | {known[b.name]['seconds']} |"
              for b in SUITE if b.name in known]
    (a.out / "machine.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    write_results(a.out, known)
    if a.out.resolve() == (ROOT / "docs" / "benchmarks").resolve():
        write_speed(ROOT / "README.md", a.out)
    return 0 if all(not s.startswith("failed") for _, s, _ in status) else 1


if __name__ == "__main__":
    sys.exit(main())
