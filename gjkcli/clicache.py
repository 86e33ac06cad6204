"""The cache's part in one `gjk check` or `gjk scan` (`gjkcli.pipeline.cache`), as the command
calls it: `CachedRun`.

The command opens it, replays a whole report kept for the same inputs and options
(`replay_kept`), lets it prepare the readers (`start_reading`: STEP files placed from the cache)
and the options (`before_scan`: a GLB's moved parts re-checked, a poses run's kept lines), scans,
and hands it the report written (`after_report`: the run and the GLB's scene kept, the cache
trimmed). Only click and the standard library at module level, as `gjkcli.cli`.
"""
from __future__ import annotations

import contextlib
import os
import sys

import click

from gjkcli.clioutput import error_line, recorded, recording, to_stdout, with_settings, write_text


class CachedRun:
    """The cache's hooks of one command: `cache` (a `gjkcli.pipeline.cache.Cache`, or None:
    --no-cache), `report_key` (the key of its whole report, or None: not kept), `scene_key` (the
    key of the last scan of its one GLB, or None: no re-scan; known from `before_scan` on), and
    `stderr`, the lines the report keeps with it (the command appends its error lines)."""

    def __init__(self, cache, name: str, command: str, params: dict, settings_path):
        self.cache = cache
        self.report_key = _run_key(cache, name, params, settings_path)
        self.scene_key: str | None = None
        self.stderr: list = []
        self._name, self._command, self._params = name, command, params
        self._settings_path = settings_path
        self._read_layout = lambda: None
        self._recorder = None

    @classmethod
    def opened(cls, name: str, command: str, params: dict, file_limits, settings_path) -> CachedRun:
        """The command's cache (none with --no-cache, or GJK_NO_CACHE=1 without a --cache-dir
        given), for the command `name` (as typed) with the parameters `params`."""
        return cls(_opened_cache(params["no_cache"], params["cache_dir"], file_limits, settings_path),
                   name, command, params, settings_path)

    def replay_kept(self) -> int | None:
        """The kept report of the same inputs and options, written where this command writes
        its report (a report is the same bytes in a file or on stdout), and its exit code; None
        where none is kept."""
        if self.report_key is None:
            return None
        from gjkcli.pipeline.cache import opened_run

        with opened_run(self.cache, self.report_key) as kept:  # written out as it is read
            if kept is None or len(kept[1]) > 1:  # a run writes its report, or nothing (-q)
                return None
            _replay(*kept, self._params["output"])
            return kept[0]

    def start_reading(self, exact: bool) -> None:
        """STEP files placed from the cache without OpenCASCADE (`gjkcli.mesh.stepkeep`), their
        text read while the forked process imports it (`_steps_placed`); else the forked reader
        of STEP and IFC files may start (gjkcli.__main__). `exact`: the run reads the files
        whole (a --trace run keeps no tables; split bodies are read whole; a Dask cluster)."""
        from gjkcli.mesh import cad_process

        inputs = self._params["inputs"]
        if not exact and _all_step(self.cache, inputs):
            _steps_placed(self.cache, inputs)
        else:
            cad_process.go()

    def before_scan(self, options, scan, timings: bool) -> tuple[int | None, object]:
        """(exit code, options) where the report is written already: a GLB scanned before whose
        moved parts alone were re-checked (`_rescanned`, with `scan` the pipeline's); else (None,
        the options the scan takes): taking a poses run's kept lines (`_with_pose_lines`), or
        recording the GLB's scene for the next re-scan."""
        options = _with_pose_lines(options, self._command, self._params, timings)
        self.scene_key = _scene_key(self._name, self._command, self.report_key, self._params,
                                    self._settings_path)
        if self.scene_key is None:
            return None, options
        import dataclasses

        from gjkcli.pipeline import rescan

        code = _rescanned(self.cache, self.scene_key, self._params["inputs"][0], options, self._params["output"],
                          self.report_key, scan, self._settings_path)
        if code is not None:
            return code, options
        self._recorder = rescan.Recorder()  # the scan's parts, for `after_report`
        return None, dataclasses.replace(options, rescan=self._recorder)

    @contextlib.contextmanager
    def scanning(self):
        """While the scan runs: a GLB's nodes kept as the scan reads them, for its scene
        (`gjkcli.mesh.gltf.recording_layout`)."""
        if self.scene_key is None:
            yield
            return
        from gjkcli.mesh.gltf import recording_layout

        with recording_layout(self._params["inputs"][0]) as read_layout:
            self._read_layout = read_layout
            yield

    def recording(self):
        """What the report writes while the block runs, where the cache keeps it (`after_report`)."""
        return recording(self.report_key is not None)

    def spliced_poses(self, found, options, output) -> int | None:
        """The exit code of the JSON report of a `--poses` run whose kept poses' lines are spliced
        in (`gjkcli.report.poselines`), written as `_emit` writes a run's; None, writing nothing,
        where they do not fit its findings (pairs that are not a poses run's): the poses are to
        be scanned again without them."""
        got = options.pose_lines.spliced(found)
        if got is None:
            return None
        for problem in found.errors:
            click.echo(error_line(problem), err=True)
        code, data = got
        keeper = None
        if self.report_key is not None and not any(e.asks_install for e in found.errors):
            # kept while it is written: both mostly the kernel's copying
            import threading

            keeper = threading.Thread(target=_keep_run, args=(self.cache, self.report_key, code, [recorded(output, data)],
                                                              [error_line(e) for e in found.errors]))
            keeper.start()
        try:
            write_text(output, data, "the report")
        except BaseException:
            if keeper is not None:  # a report not written is not kept
                keeper.join()
                _forget_run(self.cache, self.report_key)
            raise
        if keeper is not None:
            keeper.join()
        self._trimmed()
        return code

    def after_report(self, found, writes: list) -> None:
        """The run's report kept (`writes`: what it wrote, none with -q), and the GLB's scene
        where its one report is all of it; then the cache trimmed."""
        if self.report_key is not None and not any(e.asks_install for e in found.errors):
            _keep_run(self.cache, self.report_key, found.exit_code, writes, self.stderr)
            from gjkcli.pipeline.cache import mark_inputs

            mark_inputs(self.cache, self._params["inputs"])  # for the next command's start
        if self.scene_key is not None and len(writes) == 1 and not found.unchecked and not found.errors:
            from gjkcli.pipeline import rescan

            recorder = self._recorder
            rescan.keep_scene(self.cache, self.scene_key, self._params["inputs"][0], recorder.parts,
                              recorder.used_extent, self.report_key, self._read_layout())
        self._trimmed()

    def _trimmed(self) -> None:
        if self.cache is not None and self.cache.wrote:
            self.cache.trim()


def _opened_cache(no_cache: bool, cache_dir, file_limits, settings_path):
    """The run's `gjkcli.pipeline.cache.Cache`, or None: --no-cache, or GJK_NO_CACHE=1 without a
    --cache-dir given."""
    if no_cache:
        return None
    if cache_dir is None and os.environ.get("GJK_NO_CACHE", "") not in ("", "0"):
        return None
    from gjkcli.pipeline.cache import Cache, located

    return Cache(located(settings_path, cache_dir), file_limits.cache)


def _run_key(cache, name: str, params: dict, settings_path) -> str | None:
    """The key of this command's whole report, or None where it is not kept: a report that
    holds the clock or pictures, inputs that are not whole files, a cluster's run (it keeps no
    robot's meshes as the report's dependencies)."""
    p = params
    if (cache is None or p["output_format"] not in ("json", "sarif", "github") or p["timings"]
            or p["verbose"] >= 2 or p["html_file"] or p["png_path"] or p["trace_json"]
            or p["write_baseline"] or p["dask"] is not None):
        return None
    from gjkcli.pipeline.cache import run_key

    robot = p["robot"]  # its SRDF and poses are files of the run too (its meshes: `depends`)
    files = () if robot is None else (robot.srdf, robot.poses, robot.trajectory)
    inputs = list(p["inputs"])
    if p["manifest"] is not None:
        read = _manifest_files(p["manifest"])
        if read is None:
            return None
        inputs += read[0]
        files += read[1]
    # not where the report goes (the replay writes it where this command does), but whether
    # it is written at all: -q without -o writes none
    params = {k: v for k, v in p.items() if k not in ("no_cache", "cache_dir", "output")}
    params["output"] = not (p["quiet"] and p["output"] in (None, "-"))
    return run_key(name, params, inputs, (settings_path, p["baseline"], *files))


def _manifest_files(path) -> tuple[list, tuple] | None:
    """([the files and folders a manifest scans], (the manifest, the SRDFs it reads)), its
    robots' meshes being the report's dependencies as a URDF's are; None where its report is not
    kept: a manifest that cannot be read (the run says why) or that names a Dask cluster."""
    from gjkcli.errors import GjkError
    from gjkcli.scene import manifest as manifests

    try:
        m = manifests.load(path)
    except (GjkError, OSError, ValueError):
        return None
    if m.dask is not None:
        return None
    scanned = [str(i.file) for i in m.includes] + [str(o.file) for o in m.objects if o.file is not None] \
        + [str(r.urdf) for r in m.robots]
    return scanned, (path, m.srdf, *(r.srdf for r in m.robots))


def _scene_key(name: str, command: str, report_key, params: dict, settings_path) -> str | None:
    """The key of the last scan of this one GLB with these options (`gjkcli.pipeline.rescan`),
    or None where a re-scan does not apply: anything but a JSON report of one GLB with the
    default listing (no baseline, manifest, robot, groups, allowed pairs, trace)."""
    p = params
    inputs = p["inputs"]
    if (report_key is None or command != "scan" or p["output_format"] != "json" or len(inputs) != 1
            or not str(inputs[0]).lower().endswith(".glb") or not os.path.isfile(inputs[0])
            or p["trace"] or p["all_pairs"] or p["show_allowed"] or p["baseline"] is not None
            or p["robot"] is not None or p["group_within"] is not None or p["allow"] or p["split_bodies"]
            or p["verbose"] or (p["quiet"] and p["output"] is None)):
        return None
    from gjkcli.pipeline.rescan import scene_key

    # nor where the report goes: a CI job writing each build's report to a file of its own
    # re-checks the moved parts as one writing to the same file does
    return scene_key(name, {k: v for k, v in p.items() if k not in ("no_cache", "cache_dir", "output")},
                     (settings_path,))


def _rescanned(cache, key: str, path, options, output, report_key, scan, settings_path) -> int | None:
    """The report of a GLB whose last scan the cache keeps, its moved parts re-checked and the
    last report patched (`gjkcli.pipeline.rescan`, `gjkcli.report.patch`), written as a scan
    writes it; its exit code, or None: the file is to be scanned whole."""
    import gc

    from gjkcli.pipeline import rescan
    from gjkcli.report.patch import patched

    # the document's and the report's hundreds of thousands of objects, made and read once:
    # collections meanwhile would walk them all, again and again (as `engine.shapes` pauses it)
    enabled = gc.isenabled()
    gc.disable()
    try:
        kept = rescan.kept_scene(cache, key)
        got = rescan.rescan(kept, path, options, scan) if kept is not None else None
        if got is None:
            return None
        notes = list(with_settings(got.found, settings_path, False).notes)
        done = patched(got, notes,
                       lambda names: rescan.scan_parts(path, names, options, scan, got.layout[6]))
    finally:
        if enabled:
            gc.enable()
    if done is None:
        return None
    code, data, listed = done
    with recording(report_key is not None) as writes:
        write_text(output, data, "the report")
    if report_key is not None:
        _keep_run(cache, report_key, code, writes, [])
        rescan.keep_scene(cache, key, path, {**got.scene, **listed}, got.extent, report_key, got.layout)
    if cache.wrote:
        cache.trim()
    return code


def _with_pose_lines(options, command: str, params: dict, timings: bool):
    """The options with a `gjkcli.report.poselines.PoseLines` for a robot's `--poses` scan
    with the cache whose report is JSON and nothing else (no clock, trace, pictures, baseline,
    listing of allowed pairs, groups, cluster): its kept poses' lines are spliced into the
    report (`CachedRun.spliced_poses`)."""
    p = params
    robot = options.robot
    if (options.cache is None or command != "scan" or p["output_format"] != "json" or timings
            or options.trace or p["html_file"] is not None or p["png_path"] is not None
            or options.baseline is not None or options.write_baseline is not None or options.all_pairs
            or options.show_allowed or options.group_within is not None or options.dask is not None
            or p["manifest"] is not None or (p["quiet"] and p["output"] is None) or robot is None
            or getattr(robot, "poses", None) is None or getattr(robot, "trajectory", None) is not None):
        return options
    import dataclasses

    from gjkcli.report.poselines import PoseLines

    return dataclasses.replace(options, pose_lines=PoseLines())


def _all_step(cache, inputs) -> bool:
    """A cache, and every input a STEP file (by its name)."""
    from gjkcli.mesh.cad_process import STEP_TYPES

    return cache is not None and bool(inputs) and all(
        str(p).lower().endswith(tuple(f".{t}" for t in STEP_TYPES)) for p in inputs)


def _steps_placed(cache, inputs) -> None:
    """The forked OpenCASCADE process (`gjkcli.mesh.cad_process`), where there is one, starts
    at once, importing OpenCASCADE and reading the files' exact solids, while this process
    reads their text (`_steps_kept`); then it tessellates them, or, where the cache places
    every file's parts, only serves the pairs that need the exact solids (killed with the
    command when none does). Without that process, a pair that needs them reads its file
    here."""
    from gjkcli.mesh import cad_process

    cad_process.go(verdict=True)
    kept = False
    try:
        kept = _steps_kept(cache, inputs)
    finally:
        cad_process.told(kept)


def _steps_kept(cache, inputs) -> bool:
    """Whether every input is a STEP file whose placements alone changed since a scan the cache
    kept (`gjkcli.mesh.stepkeep`)."""
    if not _all_step(cache, inputs):
        return False
    from gjkcli.mesh import stepkeep
    from gjkcli.pipeline.cache import Table, prefix

    with stepkeep.kept_solids(Table(cache, "step"), prefix()):
        return all(stepkeep.answerable(p) for p in inputs)


def _keep_run(cache, whole: str, code: int, writes: list, stderr: list) -> None:
    from gjkcli.pipeline.cache import put_run

    put_run(cache, whole, code, writes, stderr)


def _forget_run(cache, whole: str) -> None:
    try:
        cache.path("run", whole).unlink()
    except OSError:
        pass


def _replay(code: int, writes: list, stderr: list, output) -> None:
    """A kept report (`writes`: its bytes as `gjkcli.pipeline.cache.FileChunks`, or none),
    written to `output` (None or "-": stdout) a chunk at a time: stderr's lines first, as the
    run did."""
    for line in stderr:
        click.echo(line, err=True)
    path = None if output in (None, "-") else output
    for _, data in writes:
        if path is None:
            with to_stdout("the report"):
                sys.stdout.flush()
                for chunk in data.each():
                    sys.stdout.buffer.write(chunk)
                sys.stdout.flush()
        else:
            write_text(path, data.each(), "the report")
