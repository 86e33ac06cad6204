"""`gjk check` and `gjk scan`: what the user asked (`Options`) and the route the run takes.

A scan in this process is `gjkcli.pipeline.stages.Run` (inputs -> objects -> candidate pairs ->
narrow phase -> findings, each stage described there); on a Dask cluster it is
`gjkcli.pipeline.distributed`, at a robot's poses `gjkcli.pipeline.motion`, and on 2D drawings
`gjkcli.pipeline.flat`. Each imports the stages' public names from `gjkcli.pipeline.stages`,
never this module, so the pipeline has no import circle.
"""
from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path

from gjkcli.pipeline.findings import Findings
from gjkcli.pipeline.stages import LENGTHS, Progress, Run, plain_lengths, reporting, run_options, scan_here
from gjkcli.units import Length

__all__ = ["check", "scan", "Options", "run_options", "reporting"]

# `gjk check` lists every pair of an object of A and one of B up to this many pairs (with
# --split-bodies); beyond, the broad phase picks the pairs whose boxes come within reach, as a
# scan does, and the others are clear by their boxes (a soup of 5,000 triangles against itself
# is 12.5 million pairs).
CHECK_EVERY_PAIR_UP_TO = 10_000


@dataclass(frozen=True)
class Options:
    """What the user asked of a run (the options of `gjk check` and `gjk scan`).

    mode : "auto", "hull" or "exact" (see `gjkcli.pipeline.policy`)
    tolerance : touching band (None: 1e-7 of each pair's size): a float in the model's units,
        or a `gjkcli.units.Length` with a unit, converted into the scene's unit once the inputs
        are read (`gjkcli.pipeline.stages.Run.one_unit`)
    clearance : required gap (None: none), a float or a Length as `tolerance`
    fail_on : statuses that fail the run, of "collision", "touching", "clearance" (None: the
        manifest's, else collision and clearance); undecided always fails
    all_pairs : list every checked pair, not only the findings
    trace : record GJK and EPA step by step for the listed pairs
    split_bodies : each connected body of an object is its own object
    jobs : worker processes for loading, threads for the narrow phase (None: every core)
    baseline : a baseline file whose findings do not fail the run
    write_baseline : record the failing findings there
    strict : an input that cannot be read raises its InputError (for --debug) instead of
        becoming a Problem of the findings
    limits : gjkcli.limits.Limits on what a file may hold (None: the defaults)
    dask : scan on a Dask cluster: a scheduler address ("tcp://host:8786") or "local[:N]"
        (`gjkcli.pipeline.distributed`; None: in this process, the manifest's `dask` first)
    dask_timeout : seconds to reach the scheduler and its first worker
    robot : gjkcli.scene.urdf.RobotOptions for URDF inputs (packages, SRDF, joints; None: none)
    sheet_layer : 2D drawings: the DXF layer whose outline is the sheet every part must lie
        inside by the clearance (`gjkcli.pipeline.flat`; None: no sheet)
    start_direction : 2D drawings: GJK's first search direction (x, y) for the traced pairs
        (`gjkcli.engine.plane.query`'s `start`; None: from A's box centre towards B's)
    layers, ignore_layers : 2D drawings: DXF layers to read (globs; None: all) and to leave out
        (globs), case-insensitive (`gjkcli.mesh.flat.Layers`)
    join_tolerance : 2D drawings: how far apart the ends of open pieces may be and still be
        joined into one outline, a float in each drawing's units or a Length (None: `join_rel`
        of the drawing's size)
    show_allowed : the allowed pairs are listed too (--show-allowed), so each is checked where a
        prepared path would only count them
    shown : how many of the listed findings (most severe first) the report shows: overlap
        volumes are computed for those only (None: all of them; 0: none, as for -q)
    group_within : group the failing pairs of each clash set whose contacts lie within this
        distance of each other, chained (`gjkcli.pipeline.grouping`; None: the manifest's, else
        no grouping); a float or a Length as `tolerance`
    allow : pairs allowed by the command line (`gjkcli.scene.manifest.allow_flag`'s AllowSpecs),
        after the manifest's own [[allow]] tables
    recurse : a directory given expands into its subdirectories too (`gjkcli.mesh.load.expand_paths`)
    together : a scan's files are one world, every object of one file against every object of
        the others (an assembly exported as one file per part); False: each file is a world of
        its own, only pairs within a file are checked (a folder of unrelated parts, each
        modelled at the origin). The Python API's default is one world; `gjk scan`'s is each
        file by itself unless --together or a manifest says otherwise
    list_passing : list every checked pair, the passing ones too, as a report of one test case
        per pair asks (JUnit): `all_pairs` up to `gjkcli.pipeline.stages.ALL_PAIRS_UP_TO`
        checked pairs, the findings alone beyond (a note says so)
    units : the length unit of the inputs whose files state none (`--units mm`: a DXF without a
        header, an STL, an SVG without a width); None: they have none, and take the unit of the
        inputs that state one
    pictures : what the pictures of a scan draw, for a Dask scan (whose parts stay on the
        workers) to fetch those parts' triangles before its cluster closes: a function of the
        findings that reads the triangles of every object the pictures draw, as they draw them
        (`gjkcli.report.pictures.read_by_pictures`); None: no picture asked for, a Dask scan's
        client then receives no triangle. One process ignores it
    cache : a `gjkcli.pipeline.cache.Cache`: hulls and pairs whose content and options were seen
        before are taken from it, the others computed and kept (None: none; the command line's
        default is `.gjk_cache`)
    rescan : a `gjkcli.pipeline.rescan.Recorder`: the run tells it its parts and checked pairs
        (a later scan of the file then re-checks what moved), and gives the broad phase the
        extent of the parts a re-scan left out (None: neither)
    pose_lines : a `gjkcli.report.poselines.PoseLines`: a robot's `--poses` run with the cache
        keeps its poses' JSON report lines, and leaves the kept poses' findings undecoded,
        their lines for the report to splice in (None: it decodes them)
    """

    mode: str = "auto"
    tolerance: float | Length | None = None
    clearance: float | Length | None = None
    fail_on: tuple | None = None
    all_pairs: bool = False
    trace: bool = False
    split_bodies: bool = False
    jobs: int | None = None
    baseline: str | os.PathLike | None = None
    write_baseline: str | os.PathLike | None = None
    strict: bool = False
    limits: object = None
    dask: str | None = None
    dask_timeout: float = 10.0
    robot: object = None
    sheet_layer: str | None = None
    start_direction: tuple | None = None
    layers: tuple | None = None
    ignore_layers: tuple | None = None
    join_tolerance: float | Length | None = None
    shown: int | None = None
    show_allowed: bool = False
    group_within: float | Length | None = None
    allow: tuple = ()
    recurse: bool = True
    together: bool = True
    list_passing: bool = False
    units: str | None = None
    pictures: object = None
    cache: object = None
    rescan: object = None
    pose_lines: object = None


def check(path_a, path_b, options: Options = Options(), *, progress: Progress | None = None) -> Findings:
    """`gjk check A B`: each file one object (one per body with split_bodies), every pair of an
    object of A and an object of B listed; with split_bodies and A == B, the bodies of the one
    file against each other."""
    from gjkcli.pipeline.flat import FlatRun, FlatSource, is_flat_run
    from gjkcli.scene.objects import file_sources

    if is_flat_run([path_a, path_b]):  # 2D drawings: the plane's stages
        sources = [FlatSource(path=Path(p), shown=str(p)) for p in (path_a, path_b)]
        return FlatRun(options, "check", progress).findings(sources, (), None, across=True, every_pair=0)
    _no_sheet_in_3d(options)
    # two files: a worker pool costs more than it saves
    options = dataclasses.replace(options, all_pairs=True, jobs=1 if options.jobs is None else options.jobs)
    same = options.split_bodies and Path(path_a).resolve() == Path(path_b).resolve()
    sources = file_sources([path_a] if same else [path_a, path_b], options.split_bodies)
    return Run(options, "check", progress).findings(sources, (), None, across=not same,
                                                     every_pair=CHECK_EVERY_PAIR_UP_TO)


def scan(paths=(), options: Options = Options(), *, manifest=None,
         progress: Progress | None = None) -> Findings:
    """`gjk scan FILE...`: every object of the given files (and manifest) against every other,
    through the broad phase.

    manifest : a path or a `gjkcli.scene.manifest.Manifest`; its tolerance, clearance and
        fail_on apply where the options leave them None.

    Raises ManifestError (with its line) when the manifest cannot be used, InputError when the
    baseline cannot be read or written.
    """
    from gjkcli.pipeline.flat import FlatRun, drawings, is_flat_run

    paths_list = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    m = manifest
    if isinstance(manifest, (str, os.PathLike)):  # the manifest's reader only for a manifest
        from gjkcli.scene import manifest as manifests

        m = manifests.load(manifest)
    flat = is_flat_run(paths_list + [inc.file for inc in (m.includes if m is not None else ())],
                       recurse=options.recurse)
    if not flat:
        _no_sheet_in_3d(options)
    if m is not None:
        options = dataclasses.replace(
            options,
            tolerance=options.tolerance if options.tolerance is not None else m.tolerance,
            clearance=options.clearance if options.clearance is not None else m.clearance,
            fail_on=options.fail_on if options.fail_on is not None else m.fail_on,
            dask=options.dask if options.dask is not None else m.dask,
            group_within=options.group_within if options.group_within is not None else m.group_within)
    if flat:  # 2D drawings: the plane's stages, the same run
        for given, what in ((options.robot, "robot options"), (options.allow or None, "--allow")):
            if given is not None:
                from gjkcli.errors import InputError

                raise InputError(paths_list[0] if paths_list else m.path,
                                 f"is a 2D drawing: {what} applies to 3D scans; scan drawings "
                                 f"without it")
        run = FlatRun(options, "scan", progress)
        return run.findings(drawings(paths_list, m, recurse=options.recurse, run=run), (), m,
                            across=False, every_pair=0)
    if options.allow:
        from gjkcli.scene import manifest as manifests

        m = manifests.with_allows(m, options.allow)
    robot = options.robot
    motion = robot is not None and (robot.poses is not None or robot.trajectory is not None)
    if motion or options.dask is not None:
        options = _without_units(options, "--poses/--trajectory" if motion else "--dask")
    if motion:
        from gjkcli.pipeline.motion import scan_poses

        return scan_poses(paths, options, manifest=m, progress=progress,
                          trajectory=robot.trajectory is not None)
    if options.dask is not None:
        from gjkcli.pipeline.distributed import scan_on_cluster

        return scan_on_cluster(paths, options, m, progress)
    return scan_here(paths, options, m, progress)


def _without_units(options: Options, route: str) -> Options:
    """The options for a route that does not convert units: InputError for a length with one."""
    from gjkcli.errors import InputError

    options = plain_lengths(options)
    for what in LENGTHS:
        value = getattr(options, what)
        if isinstance(value, Length):
            raise InputError(f"--{what.replace('_', '-')} {value}", f"{route} takes lengths in the model's units; "
                                                  f"give the number without a unit")
    return options


def _no_sheet_in_3d(options: Options) -> None:
    if options.start_direction is not None:
        from gjkcli.errors import InputError

        raise InputError("--start-direction", "sets GJK's first direction in the plane: it applies to 2D "
                                              "drawings (.svg, .dxf), and the inputs are 3D files")
    if options.sheet_layer is not None:
        from gjkcli.errors import InputError

        raise InputError("--sheet-layer", "names a DXF layer: it applies to 2D drawings (.dxf), "
                                          "and the inputs are 3D files")
    for option, value in (("--layers", options.layers), ("--ignore-layers", options.ignore_layers),
                          ("--join-tolerance", options.join_tolerance)):
        if value is not None:
            from gjkcli.errors import InputError

            raise InputError(option, "applies to 2D drawings (.svg, .dxf), and the inputs are 3D "
                                     "files")


