"""Where the CPU time of a robot's poses run goes, fresh (`--no-cache`) and cached, and the floor.

The scenario of bench_cache.py's "poses" rows: the Panda of ../shared/robots/panda with its SRDF
at --poses random poses (default 10,000 and 100,000), the cache filled by an untimed run on
them, then the table with 10% of its rows new run with a copy of that cache and without it.
Each run is a whole `gjk scan URDF --srdf SRDF --poses TABLE --format json` process started
by this script in a mode of its own (`--child`), which runs gjk's command line in itself and
times its stages by the process's CPU time (time.process_time, so that what others run on the
machine does not count):

    start + imports   the interpreter and the imports until the command runs (what the
                      process's CPU time holds beyond the command's)
    URDF + meshes     `gjkcli.scene.objects.scene_sources`: the URDF, its meshes
    pose table        `gjkcli.scene.urdf.read_pose_table`; with the cache, `pose_rows` and the rows
                      the run reads (`PoseRows.values`)
    prepare           `gjkcli.pipeline.poses.Prepared`: hulls, triangles, the pairs checked
    kept: read        `_KeptPoses.read`: the robot's packs (their index and report lines), their
                      checksums, the index; and the packs' data entries where a kept pose's
                      findings are decoded (`_KeptPoses._data`)
    kept: parsed      the JSON text of the kept poses' findings parsed (`poses._loads`): none
                      for a JSON report, which takes their lines (`gjkcli.report.poselines`)
    kept: decoded     `gjkcli.pipeline.cache.from_data` of the kept poses' findings
    new poses         `Prepared._chunk`: forward kinematics, the hulls' batch, the triangles
    new: kept         `to_data`, their report lines (`PoseLines.made`) and `_KeptPoses.write`
                      of the new poses
    merged            `gjkcli.pipeline.motion._merged`: every pose's findings into one report
    report            the JSON text (`gjkcli.report.jsonout.encoded`, or the kept poses' lines
                      spliced with the others', `PoseLines.spliced`)
    report kept       the whole report kept for an unchanged re-run (`cache.put_run`)
    other             the command's time that none of the above holds (the findings per pose,
                      the object records, click)

and the floor: `python -c pass`, and the imports a poses run needs (`python -c "import ..."`),
the same way (CPU time of the child, from resource.getrusage). Medians of --repeat runs. Then,
per table: the findings in the report, those at rows the table before had too (the kept poses'),
the report's size and the size of the robot's poses entries (their index and report lines, and
their data) the run on the table before wrote.

Usage:
    python benchmarks/bench_cache_poses.py [--poses 10000,100000] [--repeat 3]
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

STAGES = ("start + imports", "URDF + meshes", "pose table", "prepare", "kept: read", "kept: parsed",
          "kept: decoded", "new poses", "new: kept", "merged", "report", "report kept", "other")
# what a poses run imports before its first pose (the floor of any run that computes one)
POSES_IMPORTS = ("import numpy, gjkcli.cli, gjkcli.scene.urdf, gjkcli.scene.objects, gjkcli.pipeline.run, "
                 "gjkcli.pipeline.motion, gjkcli.pipeline.poses, gjkcli.pipeline.cache, gjkcli.engine.query, "
                 "gjkcli.report.jsonout")


def child(argv: list) -> None:
    """Run gjk's command line `argv` in this process and print the stages' CPU seconds as JSON."""
    import functools

    from gjkcli import cli
    from gjkcli.pipeline import cache, motion, poses
    from gjkcli.report import jsonout, poselines
    from gjkcli.scene import objects, urdf

    spent = dict.fromkeys(STAGES, 0.0)

    def timed(owner, name: str, stage: str) -> None:
        real = getattr(owner, name)

        @functools.wraps(real)
        def wrapper(*args, **kwargs):
            t = time.process_time()
            try:
                return real(*args, **kwargs)
            finally:
                spent[stage] += time.process_time() - t

        setattr(owner, name, wrapper)

    kept = poses._KeptPoses  # a benchmark times the cache's own steps
    for owner, name, stage in ((objects, "scene_sources", "URDF + meshes"), (urdf, "read_pose_table", "pose table"),
                               (urdf, "pose_rows", "pose table"), (urdf.PoseRows, "values", "pose table"),
                               (poses.Prepared, "__init__", "prepare"), (kept, "read", "kept: read"),
                               (cache, "from_data", "kept: decoded"), (poses.Prepared, "_chunk", "new poses"),
                               (cache, "to_data", "new: kept"), (kept, "write", "new: kept"),
                               (motion, "_merged", "merged"), (poses, "_loads", "kept: parsed"),
                               (cache, "put_run", "report kept"), (kept, "_data", "kept: read"),
                               (poselines.PoseLines, "made", "new: kept"),
                               (poselines.PoseLines, "spliced", "report")):
        timed(owner, name, stage)
    real_encoded = jsonout.encoded

    def encoded(*args, **kwargs):
        chunks = real_encoded(*args, **kwargs)
        while True:
            t = time.process_time()
            chunk = next(chunks, None)
            spent["report"] += time.process_time() - t
            if chunk is None:
                return
            yield chunk

    jsonout.encoded = encoded
    t = time.process_time()
    try:
        cli.main(argv, standalone_mode=False)
    except SystemExit:
        pass
    command = time.process_time() - t
    usage = resource.getrusage(resource.RUSAGE_SELF)
    total = usage.ru_utime + usage.ru_stime
    spent["start + imports"] = total - command
    spent["other"] = command - sum(v for k, v in spent.items() if k not in ("start + imports", "other"))
    print(json.dumps({"total": total, **spent}))


def kept_size(cache: Path) -> int:
    """The bytes of a cache's robot poses entries: their index and lines, and their data."""
    from gjkcli.pipeline.poses import DATA_KIND

    return sum(p.stat().st_size for kind in ("poses", DATA_KIND) for p in (cache / kind).rglob("*") if p.is_file())


def report_facts(before: Path, after: Path, report: Path) -> list:
    """[findings, findings at rows the table `before` had too, the report's MB]."""
    import numpy as np

    seen = {tuple(r) for r in np.loadtxt(before, delimiter=",", skiprows=1).tolist()}
    rows = np.loadtxt(after, delimiter=",", skiprows=1).tolist()
    pairs = json.loads(report.read_bytes())["pairs"]
    kept = sum(1 for p in pairs if tuple(rows[p["waypoint"]]) in seen)
    return [f"{len(pairs):,}", f"{kept:,}", f"{report.stat().st_size / 1e6:.1f}"]


def run_child(args: list) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("GJK_NO_CACHE", None)
    done = subprocess.run([sys.executable, __file__, "--child", *map(str, args)], capture_output=True, env=env)
    if done.returncode != 0:
        raise RuntimeError(done.stderr.decode()[-2000:])
    return json.loads(done.stdout.decode().strip().splitlines()[-1])


def cpu_of(argv: list) -> float:
    """CPU seconds (user + system) of one process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, check=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv=None) -> int:
    if argv is None and sys.argv[1:2] == ["--child"]:
        child(sys.argv[2:])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--poses", default="10000,100000", help="poses per table, comma-separated")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each side (default 3)")
    args = parser.parse_args(argv)
    from _common import markdown_table
    from bench_cache import poses_scenario

    work = Path(tempfile.mkdtemp(prefix="gjk-bench-cache-poses-"))
    floor = [statistics.median(cpu_of([sys.executable, "-c", code]) for _ in range(args.repeat))
             for code in ("pass", POSES_IMPORTS)]
    columns, totals, facts = {}, {}, []
    for count in map(int, args.poses.split(",")):
        name, before, after = next(iter(poses_scenario(work, count)))
        snapshot = work / f"snapshot-{count}"
        run_child([*before, "--format", "json", "-o", work / "out.json", "--cache-dir", snapshot])
        fresh, cached = [], []
        for _ in range(args.repeat):
            copy = work / "copy"
            shutil.rmtree(copy, ignore_errors=True)
            shutil.copytree(snapshot, copy)
            fresh.append(run_child([*after, "--format", "json", "-o", work / "fresh.json", "--no-cache"]))
            cached.append(run_child([*after, "--format", "json", "-o", work / "cached.json", "--cache-dir", copy]))
            if (work / "fresh.json").read_bytes() != (work / "cached.json").read_bytes():
                raise RuntimeError(f"{name}: the cached run's JSON is not the fresh run's")
        facts.append([f"{count:,}", *report_facts(before[-1], after[-1], work / "fresh.json"),
                      f"{kept_size(snapshot) / 1e6:.1f}"])
        for side, runs in (("fresh", fresh), ("cached", cached)):
            columns[f"{count:,} {side}"] = {k: statistics.median(r[k] for r in runs) for k in (*STAGES, "total")}
        totals[count] = columns[f"{count:,} cached"]["total"] / columns[f"{count:,} fresh"]["total"]
    print(f"CPU seconds of whole `gjk scan panda.urdf --srdf panda.srdf --poses TABLE --format json` processes "
          f"(the Panda, 10% of the table's rows new), medians of {args.repeat}; load average "
          f"{os.getloadavg()[0]:.2f} at the end.")
    print()
    print("## CPU seconds per stage")
    print()
    header = ["stage", *columns]
    rows = [[stage, *(f"{c[stage]:.3f}" for c in columns.values())] for stage in (*STAGES, "total")]
    rows.append(["cached / fresh", *(f"{totals[int(k.split()[0].replace(',', ''))]:.2f}" if k.endswith("cached")
                                     else "" for k in columns)])
    print(markdown_table(header, rows))
    print()
    print("## The reports and the cache")
    print()
    print(markdown_table(["poses", "findings in the report", "at rows seen before", "report (MB)",
                          "poses entries (MB)"], facts))
    print()
    print("## The floor: Python, and the imports of a poses run")
    print()
    print(markdown_table(["floor", "CPU (s)"], [["python -c pass", f"{floor[0]:.3f}"],
                                                ["the imports of a poses run", f"{floor[1]:.3f}"]]))
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
