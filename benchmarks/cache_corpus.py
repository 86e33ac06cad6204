"""The cache against fresh runs over corpora of models nobody here chose: the same JSON, byte for
byte, after a change.

For each file of the folders given, in fresh processes of the installed command:

    IFC models   10 placed elements moved by IfcOpenShell's API (`bench_cache.ifc_moved`, seeded)
    GLB files    1% of the nodes (one at least; seeded) moved by a tenth of the meshes' largest
                 extent (`glb_moved`: their translation, or their matrix's, edited in the JSON
                 chunk), which a re-run with the cache scans by its scene entry
    STEP files   one part instance placed elsewhere and one solid's points moved
                 (`bench_cache.step_moved`, `bench_cache.step_edited`; a file without an
                 assembly's placements has no "moved" case, one without a MANIFOLD_SOLID_BREP
                 no "edited" case)
    each         the file unchanged

the cache is filled by `gjk scan BEFORE` in a folder of its own, then `gjk scan AFTER` is run
without the cache and with a copy of it, and the two reports and exit codes compared (and, for the
unchanged file, a second cached run: the whole report kept). Printed per case: the exit code,
whether the JSON is the same, both runs' wall seconds and their ratio. Exit 1 when any case's
JSON or exit code differs, or a run fails.

The corpora are kept outside the repository (benchmarks/ifc_corpus.csv and step_corpus.json say
where each file comes from).

Usage:
    python benchmarks/cache_corpus.py DIR_OR_FILE... [--tolerance BAND] [--seed 45]
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))

SUFFIXES = {".ifc", ".ifczip", ".step", ".stp", ".glb"}


def gjk(args: list, cache: Path | None) -> tuple[int, bytes, float, str]:
    """(exit code, stdout, wall seconds, stderr's last line) of one `gjk` process."""
    argv = [sys.executable, "-m", "gjkcli", *map(str, args), "--format", "json"]
    argv += ["--no-cache"] if cache is None else ["--cache-dir", str(cache)]
    env = {k: v for k, v in os.environ.items() if k != "GJK_NO_CACHE"}
    t = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, env=env, check=False)
    wall = time.perf_counter() - t
    lines = done.stderr.decode(errors="replace").strip().splitlines()
    return done.returncode, done.stdout, wall, lines[-1] if lines else ""


def glb_moved(path: Path, after: Path, seed: int) -> int:
    """Write the GLB `path` to `after` with 1% of its nodes that hold a mesh or children (one at
    least, a seeded choice) moved along x by a tenth of the largest extent of its meshes'
    positions (their accessors' min and max); how many were moved (0: none to move)."""
    import json
    import struct

    import numpy as np
    from make_scan_scene import write_glb

    data = path.read_bytes()
    n = struct.unpack_from("<I", data, 12)[0]
    doc = json.loads(data[20:20 + n])
    at = 20 + n
    binary = data[at + 8:at + 8 + struct.unpack_from("<I", data, at)[0]] if at + 8 <= len(data) else b""
    nodes = [k for k, node in enumerate(doc.get("nodes", [])) if "mesh" in node or node.get("children")]
    extent = [np.subtract(a["max"], a["min"]).max() for m in doc.get("meshes", []) for prim in m["primitives"]
              for a in [doc["accessors"][prim["attributes"]["POSITION"]]] if "min" in a and "max" in a]
    if not nodes or not extent:
        return 0
    step = 0.1 * float(max(extent))
    rng = np.random.default_rng(seed)
    chosen = rng.choice(len(nodes), size=max(1, len(nodes) // 100), replace=False).tolist()
    for k in chosen:
        node = doc["nodes"][nodes[k]]
        if "matrix" in node:
            node["matrix"][12] += step
        else:
            t = node.get("translation", [0.0, 0.0, 0.0])
            node["translation"] = [t[0] + step, t[1], t[2]]
    write_glb(after, doc, binary)
    return len(chosen)


def cases(path: Path, work: Path, seed: int):
    """(name, before, after) of the file: unchanged, then changed as its kind is."""
    import bench_cache

    yield "unchanged", path, path
    if path.suffix.lower() == ".glb":
        after = work / f"moved-{path.name}"
        moved = glb_moved(path, after, seed)
        if moved:
            yield f"{moved} moved", path, after
        return
    if path.suffix.lower() in (".ifc", ".ifczip"):
        after = work / f"moved-{path.stem}.ifc"  # written as text, whatever it was read from
        moved = bench_cache.ifc_moved(path, after, seed=seed)
        yield f"{moved} moved", path, after
        return
    text = path.read_text(encoding="latin-1")
    for name, edit in (("moved", bench_cache.step_moved), ("edited", bench_cache.step_edited)):
        changed = edit(text)
        if changed is not None:
            after = work / f"{name}-{path.name}"
            after.write_text(changed, encoding="latin-1")
            yield name, path, after


def check(path: Path, name: str, before: Path, after: Path, work: Path, extra: list) -> dict:
    snapshot, copy = work / "snapshot", work / "copy"
    for folder in (snapshot, copy):
        shutil.rmtree(folder, ignore_errors=True)
    gjk(["scan", before, *extra], snapshot)
    snapshot.mkdir(exist_ok=True)
    shutil.copytree(snapshot, copy)
    code, fresh, t_fresh, err = gjk(["scan", after, *extra], None)
    code2, cached, t_cached, _ = gjk(["scan", after, *extra], copy)
    same = fresh == cached and code == code2
    if name == "unchanged":  # the run just made is kept whole: a third run takes it
        code3, again, _, _ = gjk(["scan", after, *extra], copy)
        same &= again == fresh and code3 == code
    return {"file": path.name, "case": name, "exit": code, "same": same, "fresh": t_fresh,
            "cached": t_cached, "failed": code not in (0, 1), "error": err if code not in (0, 1) else ""}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+", help="folders of IFC models and STEP files, or files")
    parser.add_argument("--tolerance", help="the band (`gjk scan --tolerance`); default: gjk's own")
    parser.add_argument("--seed", type=int, default=45, help="the seed of the IFC elements and GLB nodes moved (default 45)")
    args = parser.parse_args(argv)
    from _common import markdown_table

    extra = ["--tolerance", args.tolerance] if args.tolerance else []
    found = []
    for p in map(Path, args.paths):
        found += sorted(f for f in p.iterdir() if f.suffix.lower() in SUFFIXES) if p.is_dir() else [p]
    rows, bad = [], 0
    with tempfile.TemporaryDirectory(prefix="gjk-cache-corpus-") as tmp:
        work = Path(tmp)
        for path in found:
            for name, before, after in cases(path, work, args.seed):
                r = check(path, name, before, after, work, extra)
                bad += (not r["same"]) or r["failed"]
                print(f"{r['file']} {r['case']}: exit {r['exit']}, same JSON {r['same']}, fresh {r['fresh']:.2f} s, "
                      f"cached {r['cached']:.2f} s {r['error']}", flush=True)
                rows.append([r["file"], r["case"], str(r["exit"]), "yes" if r["same"] else "NO",
                             f"{r['fresh']:.2f}", f"{r['cached']:.2f}", f"{r['cached'] / r['fresh']:.2f}"])
    print()
    print(markdown_table(["file", "case", "exit", "same JSON", "fresh (s)", "cached (s)", "cached / fresh"], rows))
    print()
    print(f"{len(rows)} cases over {len(found)} files: {bad} with a different report or a failed run")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
