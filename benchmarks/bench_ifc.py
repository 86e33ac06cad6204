"""IFC models end to end: `gjk scan` beside IfcClash (IfcOpenShell's clash tool), whole processes
side by side in one run, and the two choices of gjkcli.mesh.ifc's reader that speed sets.

For each model (IfcOpenShell's test files, and any other .ifc given), `--runs` rounds, each
running both tools once, in alternating order, as fresh processes, each as a user runs it, on
every core of the machine:

    gjk       gjk scan MODEL --tolerance BAND --format json -o FILE -q: every physical element
              against every other, collisions deeper than the band, touching within it; its
              default jobs (every core: the hulls, the refine stage, the overlap volumes and
              the reasons a report lists run in forked workers)
    ifcclash  python -m ifcclash SETS.json -o FILE: one clash set, the model against itself,
              mode "intersection" at the same band (its tolerance, in metres: IfcClash reads in
              metres), check_all; its iterator runs one thread per core (cpu_count)

Printed per model: the median wall time of each (whole processes: Python's start, the imports,
the read, the clash, the report), the ratio gjk / IfcClash, the same for their CPU time (user +
system, every thread and every waited-for child process counted: the work each tool does,
whatever cores it spreads it on), each one's peak resident memory (GNU time's %M, the ru_maxrss
of the waited-for processes: the largest single process, not a sum; for gjk, the largest of
its own process, the forked child in which IfcOpenShell reads the model and its forked workers,
each of which starts as a copy-on-write copy of the process and counts the pages it touches),
and the pairs each reports (gjk: collisions at the band; IfcClash: its clashes). Targets (issue
24): the Great Court roof at most 0.7 of IfcClash's time, every other model at most 1.0, peak
memory no more than IfcClash's.

`--kernels` times IfcOpenShell's iterator over each model with OpenCASCADE alone and with the
hybrid kernel gjk uses (gjkcli.mesh.ifc.GEOMETRY_LIBRARY) and checks that both give the same
vertices; `--threads` times the iterator with 1 and 2 threads; `--maps` times the iterator in
world coordinates (each element placing a representation map meshed again) against gjk's reader
(such a map meshed once and placed), in this process.

IfcClash comes with the bench extra (`pip install ".[bench]"`). The models are not in the
repository: IfcOpenShell's test files (github.com/IfcOpenShell/IfcOpenShell, test/input/,
LGPL-3.0; geometrygym_great_court_roof.ifc, acad2010_objects.ifc, acad2010_walls.ifc,
revit2011_wall1.ifc, ...) and KIT's FZK-Haus (AC20-FZK-Haus.ifc, an ArchiCAD 20 export; the
folder tests/pipeline/test_ifc_fzk_haus.py reads through GJK_IFC_MODELS) in a folder given as
--models.

Usage:
    python benchmarks/bench_ifc.py --models DIR [--runs 3] [--band 0.002] [--only NAME ...]
                                   [--kernels] [--threads] [--maps] [--json FILE]
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# Timed runs are fresh runs: the gjk processes started here neither read nor write a cache
# (benchmarks/bench_cache.py times the cache).
os.environ.setdefault("GJK_NO_CACHE", "1")

# The gjk timed is this checkout's where its compiled core is built in place (an editable
# install, or `python setup.py build_ext --inplace`): its package first on the path, here and in
# the timed processes (the `gjk` script of an editable install made from another checkout would
# otherwise import that checkout's package); else the installed one (`pip install .`).
ROOT = Path(__file__).resolve().parents[1]


def _built_in_place() -> bool:
    from importlib.machinery import EXTENSION_SUFFIXES

    return any((ROOT / "gjkcli" / "engine" / f"_core{suffix}").exists() for suffix in EXTENSION_SUFFIXES)


GJK_ENV = dict(os.environ)
if _built_in_place():
    sys.path.insert(0, str(ROOT))
    GJK_ENV["PYTHONPATH"] = os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH"))))

ROOF = "geometrygym_great_court_roof"


def timed(command: list, env: dict | None = None) -> tuple:
    """(wall seconds, CPU seconds (user + system), peak resident MB, return code) of a child
    process.

    The peak and the CPU time are GNU time's (%M, %U, %S) when /usr/bin/time exists: a child
    forked from this process starts with this process's peak in its ru_maxrss (it grows with
    every report read here), a child of the small `time` process does not. The CPU time is the
    figure to compare on a shared machine: the wall time there counts the waits for a core."""
    gnu_time = Path("/usr/bin/time")
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as rss:
        prefix = [str(gnu_time), "-q", "-f", "%M %U %S", "-o", rss.name] if gnu_time.exists() else []
        start = time.perf_counter()
        child = subprocess.Popen(prefix + command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                 env=env)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
        text = rss.read().strip().splitlines() if prefix else []
    fields = text[-1].split() if text else []
    if len(fields) == 3 and fields[0].isdigit():
        peak_kb, cpu = float(fields[0]), float(fields[1]) + float(fields[2])
    else:
        peak_kb, cpu = usage.ru_maxrss, usage.ru_utime + usage.ru_stime
    return wall, cpu, peak_kb / 1024.0, os.waitstatus_to_exitcode(status)


def compile_gjk() -> None:
    """Byte-compile the package timed as `pip install` does (an editable install, or an
    environment with PYTHONDONTWRITEBYTECODE set, would otherwise compile every module in every
    timed run, where IfcClash's installed modules are read compiled)."""
    import compileall

    import gjkcli

    compileall.compile_dir(str(Path(gjkcli.__file__).parent), quiet=1)


def gjk_run(model: Path, band_m: float, out: Path) -> tuple:
    """(wall s, CPU s, peak MB, collisions, {"objects", "undecided", "pairs", "left_out"}) of one
    `gjk scan`: the objects it read, its undecided pairs and pairs checked, and the elements its
    notes say it left out for want of a 3D body. The `gjk` script beside this Python, as a user
    runs it, else `python -m gjkcli`; either imports this checkout's package where it is built
    in place (GJK_ENV)."""
    exe = Path(sys.executable).with_name("gjk")
    command = [*([str(exe)] if exe.exists() else [sys.executable, "-m", "gjkcli"]), "scan", str(model), "--tolerance", f"{band_m}m",
               "--format", "json", "-o", str(out), "-q"]
    wall, cpu, peak, code = timed(command, GJK_ENV)
    if code not in (0, 1):
        raise RuntimeError(f"gjk exited {code} on {model}")
    doc = json.loads(out.read_text())
    summary = doc["summary"]
    left = 0
    for note in doc.get("notes", ()):
        found = re.search(r"left out ([\d,]+) physical elements? with no 3D body", note)
        if found:
            left += int(found.group(1).replace(",", ""))
    read = {"objects": int(summary["objects"]), "undecided": int(summary["undecided"]),
            "pairs": int(summary["pairs"]), "left_out": left}
    return wall, cpu, peak, int(summary["collision"]), read


def ifcclash_run(model: Path, band_m: float, folder: Path) -> tuple:
    sets = folder / "sets.json"
    out = folder / "ifcclash.json"
    sets.write_text(json.dumps([{"name": model.stem, "a": [{"file": str(model)}], "mode": "intersection",
                                 "tolerance": band_m, "check_all": True}]))
    wall, cpu, peak, code = timed([sys.executable, "-m", "ifcclash", str(sets), "-o", str(out)])
    if code != 0:
        raise RuntimeError(f"ifcclash exited {code} on {model}")
    return wall, cpu, peak, len(json.loads(out.read_text())[0].get("clashes", {}))


def meshed(model: Path) -> int | None:
    """How many physical elements (IfcElement, not a feature or virtual element) IfcOpenShell's
    geometry iterator meshes with gjk's settings, in this process; None where it cannot read the
    model (an ifcZIP is not unpacked here)."""
    if model.suffix.lower() != ".ifc":
        return None
    import ifcopenshell
    import ifcopenshell.geom as geom

    from gjkcli.mesh.ifc import GEOMETRY_LIBRARY

    f = ifcopenshell.open(str(model))
    elements = [e for e in f.by_type("IfcElement")
                if not e.is_a("IfcFeatureElement") and not e.is_a("IfcVirtualElement") and e.Representation]
    settings = geom.settings()
    for name in ("use-world-coords", "convert-back-units", "weld-vertices"):
        settings.set(name, True)
    iterator = geom.iterator(settings, f, 1, include=elements, geometry_library=GEOMETRY_LIBRARY)
    ids = set()
    if elements and iterator.initialize():
        while True:
            shape = iterator.get()
            if len(shape.geometry.faces):
                ids.add(shape.id)
            if not iterator.next():
                break
    return len(ids)


def compare(models: list, runs: int, band_m: float, target: float | None = None) -> list:
    """One row per model; target: the wall-time ratio every model is held to (else 0.7 for the
    roof, 1.0 for the rest)."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for model in models:
            got = {"gjk": [], "ifcclash": []}
            for k in range(runs):
                order = ("gjk", "ifcclash") if k % 2 == 0 else ("ifcclash", "gjk")
                for tool in order:
                    if tool == "gjk":
                        got[tool].append(gjk_run(model, band_m, folder / "gjk.json"))
                    else:
                        got[tool].append(ifcclash_run(model, band_m, folder))
            row = {"model": model.stem, "runs": runs, **got["gjk"][-1][4], "meshed": meshed(model)}
            for tool, results in got.items():
                row[f"{tool}_s"] = [round(r[0], 3) for r in results]
                row[f"{tool}_median_s"] = statistics.median(r[0] for r in results)
                row[f"{tool}_cpu_s"] = [round(r[1], 3) for r in results]
                row[f"{tool}_median_cpu_s"] = statistics.median(r[1] for r in results)
                row[f"{tool}_peak_mb"] = max(r[2] for r in results)
                row[f"{tool}_pairs"] = results[-1][3]
            row["ratio"] = row["gjk_median_s"] / row["ifcclash_median_s"]
            row["cpu_ratio"] = row["gjk_median_cpu_s"] / row["ifcclash_median_cpu_s"]
            row["target"] = target if target is not None else 0.7 if model.stem == ROOF else 1.0
            rows.append(row)
            print_row(row)
    return rows


def print_row(row: dict) -> None:
    ok = "yes" if row["ratio"] <= row["target"] and row["gjk_peak_mb"] <= row["ifcclash_peak_mb"] else "no"
    # every element the iterator meshes is an object, or named in a note as left out
    meshed = "-" if row["meshed"] is None else f"{row['meshed']:,}"
    print(f"| {row['model']} | {row['objects']:,} | {meshed} | {row['left_out']:,} | "
          f"{row['undecided']} of {row['pairs']:,} | "
          f"{row['gjk_median_s']:.2f} ({', '.join(map(str, row['gjk_s']))}) | "
          f"{row['ifcclash_median_s']:.2f} ({', '.join(map(str, row['ifcclash_s']))}) | "
          f"{row['ratio']:.2f} (<= {row['target']}) | {row['gjk_median_cpu_s']:.2f} | "
          f"{row['ifcclash_median_cpu_s']:.2f} | {row['cpu_ratio']:.2f} | {row['gjk_peak_mb']:.0f} | "
          f"{row['ifcclash_peak_mb']:.0f} | {row['gjk_pairs']} | {row['ifcclash_pairs']} | {ok} |",
          flush=True)


def iterate(model: Path, library: str, threads: int) -> tuple:
    """(seconds, {element id: sorted vertex rows}) of IfcOpenShell's iterator over the model's
    elements with gjk's settings."""
    import ifcopenshell
    import ifcopenshell.geom as geom
    import numpy as np

    f = ifcopenshell.open(str(model))
    elements = [e for e in f.by_type("IfcElement") if not e.is_a("IfcFeatureElement") and e.Representation]
    settings = geom.settings()
    for name in ("use-world-coords", "convert-back-units", "weld-vertices"):
        settings.set(name, True)
    start = time.perf_counter()
    iterator = geom.iterator(settings, f, threads, include=elements, geometry_library=library)
    out = {}
    if iterator.initialize():
        while True:
            shape = iterator.get()
            v = np.frombuffer(shape.geometry.verts_buffer, dtype=np.float64).reshape(-1, 3)
            out[shape.id] = v[np.lexsort(v.T[::-1])]
            if not iterator.next():
                break
    return time.perf_counter() - start, out


def kernels(models: list) -> None:
    import numpy as np

    from gjkcli.mesh.ifc import GEOMETRY_LIBRARY

    print(f"| model | OpenCASCADE s | {GEOMETRY_LIBRARY} s | ratio | same vertices |")
    print("|---|---|---|---|---|")
    for model in models:
        t_occ, occ = iterate(model, "opencascade", 1)
        t_hyb, hyb = iterate(model, GEOMETRY_LIBRARY, 1)
        same = sum(1 for k in occ if k in hyb and occ[k].shape == hyb[k].shape
                   and np.allclose(occ[k], hyb[k], rtol=0, atol=1e-9))
        print(f"| {model.stem} | {t_occ:.2f} | {t_hyb:.2f} | {t_hyb / t_occ:.2f} | {same} of {len(occ)} |",
              flush=True)


def threads(models: list) -> None:
    from gjkcli.mesh.ifc import GEOMETRY_LIBRARY

    print("| model | 1 thread s | 2 threads s |")
    print("|---|---|---|")
    for model in models:
        one, _ = iterate(model, GEOMETRY_LIBRARY, 1)
        two, _ = iterate(model, GEOMETRY_LIBRARY, 2)
        print(f"| {model.stem} | {one:.2f} | {two:.2f} |", flush=True)


def maps(models: list, runs: int) -> None:
    """Per model: its elements meshed, those placing a representation map other elements place
    too, and the median seconds (of `runs`, alternating) of gjk's reader in this process
    (`gjkcli.mesh.ifc.read_here`, one reader: the file opened, every element meshed) as it reads
    (such a map meshed once, in its own frame, and placed by each element) and with every
    element meshed in world coordinates (its map meshed again for every element, as
    IfcOpenShell's iterator does in world coordinates)."""
    from unittest import mock

    from gjkcli.mesh import ifc

    print("| model | elements meshed | placing a shared map | every element in world coordinates s | "
          "maps meshed once s |")
    print("|---|---|---|---|---|")
    for model in models:
        times: dict = {"world": [], "maps": []}
        placed = count = 0
        for k in range(runs):
            for how in (("world", "maps") if k % 2 == 0 else ("maps", "world")):
                with mock.patch.object(ifc, "_mapped_uses", lambda *a: {}) if how == "world" else \
                        contextlib.nullcontext():
                    start = time.perf_counter()
                    read = ifc.read_here(model)
                    times[how].append(time.perf_counter() - start)
                if how == "maps":
                    placed = sum(1 for part in read.parts if part[4] is not None)
                    count = len(read.parts)
        print(f"| {model.stem} | {count:,} | {placed:,} | {statistics.median(times['world']):.2f} | "
              f"{statistics.median(times['maps']):.2f} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", type=Path, nargs="+", required=True,
                        help="folders of .ifc (and .ifczip) models")
    parser.add_argument("--target", type=float, default=None,
                        help="the wall-time ratio gjk / IfcClash every model is held to")
    parser.add_argument("--only", nargs="*", help="model names (stems) to run")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--band", type=float, default=0.002, help="touching band, metres")
    parser.add_argument("--kernels", action="store_true")
    parser.add_argument("--threads", action="store_true")
    parser.add_argument("--maps", action="store_true",
                        help="time the read of maps placed by several elements: once, or per element")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    models = sorted(m for folder in args.models if folder.is_dir() for m in folder.iterdir()
                    if m.suffix.lower() in (".ifc", ".ifczip"))
    if args.only:
        models = [m for m in models if m.stem in args.only]
    if not models:
        raise SystemExit(f"no .ifc model in {', '.join(map(str, args.models))}")
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
    if args.kernels:
        kernels(models)
        return
    if args.threads:
        threads(models)
        return
    if args.maps:
        maps(models, args.runs)
        return
    try:
        import ifcclash  # noqa: F401
    except ImportError:
        raise SystemExit('IfcClash is missing: pip install ".[bench]"') from None
    compile_gjk()
    print("| model | objects read | elements meshed | left out (note) | undecided of pairs | "
          "gjk s, median (runs) | IfcClash s, median (runs) | gjk / IfcClash | gjk CPU s | "
          "IfcClash CPU s | CPU gjk / IfcClash | gjk peak MB | IfcClash peak MB | gjk collisions | "
          "IfcClash clashes | targets met |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    rows = compare(models, args.runs, args.band, args.target)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
