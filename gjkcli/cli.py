"""The `gjk` command: parse, call the one pipeline, hand its findings to a renderer, map errors to
exit codes.

Exit codes: 0 no violation; 1 a violation (collision, closer than --clearance, undecided);
2 a usage or input error. An input error is one line on stderr naming the file and the cause;
--debug shows the traceback instead.

Only click and the standard library are imported here at module level: numpy, trimesh, scipy, rich
and the compiled engine are imported inside the commands, so `gjk --help` and `import gjkcli.cli`
stay fast.
"""
from __future__ import annotations

import contextlib
import math
import os
import sys

import click

from gjkcli.clicache import CachedRun
from gjkcli.clioutput import error_line, shown, to_stdout, with_settings, write_text
from gjkcli.errors import EXIT_INTERRUPTED, GjkError, InputError, one_line, write_whole
from gjkcli.report import console
from gjkcli.report.console import TABLE_ROWS

MODES = ("auto", "hull", "exact")
FORMATS = ("table", "json", "junit", "github", "sarif", "bcf")
COLORS = ("auto", "always", "never")
CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}

EXIT_OK, EXIT_VIOLATION, EXIT_ERROR = 0, 1, 2


# `--help` lists the options in these groups, in this order (by each option's parameter name); an
# option named in no group is listed under "Other options".
HELP_GROUPS = (
    ("Inputs", ("manifest", "together", "no_recurse", "split_bodies", "units", "limit", "config_file",
                "isolated")),
    ("Verdicts", ("tolerance", "clearance", "mode", "fail_on", "allow", "baseline", "write_baseline")),
    ("Reports", ("output_format", "output", "all_pairs", "show_allowed", "group_within", "color",
                 "quiet", "verbose", "timings")),
    ("Pictures", ("html_file", "png_path", "open_page")),
    ("The trace", ("trace", "trace_json", "start_direction")),
    ("Robots (URDF)", ("packages", "srdf", "joints", "poses", "trajectory", "skip_missing_meshes")),
    ("2D drawings (SVG, DXF)", ("sheet_layer", "layers", "ignore_layers", "join_tolerance")),
    ("Performance", ("jobs", "dask", "dask_timeout", "no_cache", "cache_dir", "watch")),
    ("The matrix (collision-matrix)", ("samples", "seed", "audit", "prove", "prove_boxes",
                                       "srdf_only")),
)


class GroupedCommand(click.Command):
    """A command whose --help lists its options in HELP_GROUPS and keeps its examples (the
    epilog) line by line."""

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = {p.name: p.get_help_record(ctx) for p in self.get_params(ctx)
                if isinstance(p, click.Option)}
        rows = {name: row for name, row in rows.items() if row is not None}
        for title, names in (*HELP_GROUPS, ("Other options", tuple(rows))):
            listed = [rows.pop(n) for n in names if n in rows]
            if listed:
                with formatter.section(title):
                    formatter.write_dl(listed)

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        if self.epilog:
            with formatter.section("Examples"):
                for line in self.epilog.strip().splitlines():  # never wrapped: copied as is
                    formatter.write(" " * formatter.current_indent + line.strip() + "\n")


class SettingsError(click.ClickException):
    """A settings file (or a setting) that cannot be used: one line, exit 2."""

    exit_code = EXIT_ERROR

    def show(self, file=None) -> None:
        click.echo(f"gjk: error: {self.message}", err=True)


class SettingsCommand(GroupedCommand):
    """A command whose options take their defaults from gjk's settings file (`gjkcli.config`):
    click's default_map, read once --config and --isolated are known; a setting that is not
    valid is one line naming the file, as a bad option is."""

    def make_context(self, info_name, args, parent=None, **extra):
        from gjkcli.config import Defaults

        extra.setdefault("default_map", Defaults())
        return super().make_context(info_name, args, parent, **extra)

    def get_help(self, ctx: click.Context) -> str:
        if hasattr(ctx.default_map, "lenient"):  # help shows the defaults it can read
            ctx.default_map.lenient = True
        return super().get_help(ctx)

    def parse_args(self, ctx: click.Context, args: list) -> list:
        from gjkcli.config import OPTIONS, ConfigError

        try:
            return super().parse_args(ctx, args)
        except ConfigError as e:
            raise SettingsError(f"{shown(e.source)}: {one_line(e.message)}") from None
        except click.BadParameter as e:
            name = e.param.name if e.param is not None else None
            if name is None or ctx.get_parameter_source(name) is not click.core.ParameterSource.DEFAULT_MAP:
                raise
            key = next(k for k, (n, _) in OPTIONS.items() if n == name)
            raise SettingsError(f"{shown(str(ctx.default_map.found.path))}: {key}: "
                                f"{one_line(e.message)}") from None


def _settings_flag(ctx: click.Context, param, value) -> None:
    """--config FILE and --isolated: where the settings come from (before any option's default)."""
    defaults = ctx.default_map
    if value in (None, False) or not hasattr(defaults, "isolated"):
        return
    if param.name == "isolated":
        defaults.isolated = True
    else:
        defaults.config = value
    if defaults.isolated and defaults.config is not None:
        raise click.UsageError("give --config FILE or --isolated, not both")


def settings_of(ctx: click.Context):
    """The run's `gjkcli.config.Settings` (none for a command without them)."""
    from gjkcli.config import Settings

    return getattr(ctx.default_map, "found", None) or Settings()


def _version() -> str:
    from gjkcli import __version__

    return __version__


def _print_version(ctx: click.Context, _param, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    click.echo(f"gjk {_version()}")
    ctx.exit(EXIT_OK)


def _length(_ctx, param, value):
    """A length option: a finite number >= 0 with an optional unit ("0.1mm", "0.004in", "2um"),
    as a gjkcli.units.Length; None when not given. Without a unit it is in the model's units."""
    if value is None:
        return None
    from gjkcli.units import UnitError, parse_length

    try:
        return parse_length(value)
    except UnitError as e:
        raise click.BadParameter(str(e), param=param) from None


def _globs(_ctx, param, value):
    """--layers / --ignore-layers: repeatable, each a comma-separated list of globs; None when
    not given."""
    if not value:
        return None
    globs = tuple(g.strip() for v in value for g in v.split(",") if g.strip())
    if not globs:
        raise click.BadParameter("give one or more layer names or globs (CUT,MARK*)", param=param)
    return globs


def _allows(_ctx, param, value):
    """--allow A,B[:REASON], repeatable: a tuple of gjkcli.scene.manifest.AllowSpec."""
    if not value:
        return ()
    from gjkcli.scene.manifest import allow_flag

    try:
        return tuple(allow_flag(v) for v in value)
    except ValueError as e:
        raise click.BadParameter(str(e), param=param) from None


def _unit(_ctx, param, value):
    """--units: a unit of gjkcli.units' table, in its short spelling."""
    if value is None:
        return None
    from gjkcli.units import METRES, canonical

    unit = canonical(value)
    if unit is None:
        raise click.BadParameter(f"{value!r}: not a length unit gjk knows; use one of "
                                 f"{', '.join(METRES)}", param=param)
    return unit


def _dask_address(_ctx, param, value):
    """--dask: "local", "local:N" or a scheduler address with its protocol (tcp://host:8786)."""
    if value is None:
        return None
    from gjkcli.scene.manifest import DASK_ADDRESS

    if not DASK_ADDRESS.fullmatch(value):
        raise click.BadParameter(f"{value!r}: give a scheduler address like tcp://host:8786, or "
                                 f"local or local:N", param=param)
    return value


def _options(f):
    """The options every command shares, in the order `--help` lists them."""
    shared = [
        click.option("--config", "config_file", metavar="FILE", is_eager=True, expose_value=False,
                     callback=_settings_flag,
                     help="Read the settings from FILE (a gjk.toml, or a pyproject.toml's "
                          "[tool.gjk]). Default: the nearest of those found from the working "
                          "folder up; options on the command line override them."),
        click.option("--isolated", is_flag=True, is_eager=True, expose_value=False,
                     callback=_settings_flag,
                     help="Read no settings file: the command line's options only."),
        click.option("--tolerance", callback=_length, metavar="LENGTH",
                     help="Touching band: parts whose distance or depth is within it touch. In "
                          "the model's units, or with a unit (0.01mm, 0.0004in, 10um, 1e-5m). "
                          "Default: 1e-7 of each pair's size (scan: the manifest's first)."),
        click.option("--clearance", callback=_length, metavar="LENGTH",
                     help="Required gap: a pair closer than this fails (status clearance; "
                          "touching fails too). In the model's units, or with a unit (0.1mm, "
                          "0.004in, 2um, 1e-3m). scan: in place of the manifest's top-level "
                          "clearance; a [[check]] that gives its own keeps it."),
        click.option("--mode", type=click.Choice(MODES), default="auto", show_default=True,
                     help="hull: the convex hulls' answer (marked conservative where a part is not "
                          "its hull); exact: the triangles wherever the hulls are not clear, and "
                          "for every listed pair; auto: the hulls where they are the parts (within "
                          "the touching band), the triangles elsewhere."),
        click.option("--split-bodies", is_flag=True,
                     help="Each connected body of an object is its own object (NAME#k)."),
        click.option("--format", "output_format", type=click.Choice(FORMATS), default="table",
                     show_default=True,
                     help="table for people (through a pipe or to a file: a finding per line, "
                          "unless --format table is given: the table to COLUMNS); json (the "
                          "documented schema); junit (every pair checked a test case, violations "
                          "as failures); github (::error workflow annotations); sarif (SARIF 2.1.0 for "
                          "code scanning); bcf (BCF 2.1 topics for BIM tools, IFC models only, "
                          "needs -o FILE.bcfzip)."),
        click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=str), metavar="FILE",
                     help="Write the report to FILE instead of stdout."),
        click.option("--html", "html_file", type=click.Path(dir_okay=False, path_type=str), metavar="FILE",
                     help="Also write a self-contained HTML page (works offline): the parts in 3D, "
                          "each finding's witness points, normal and overlap solid, the findings "
                          "table (a click frames the pair); with --trace, GJK and EPA step by step."),
        click.option("--png", "png_path", type=click.Path(path_type=str), metavar="PATH",
                     help="Also draw PNG pictures (no browser or display needed): check writes the "
                          "file PATH; scan writes one picture per violation into the folder PATH."),
        click.option("--open", "open_page", is_flag=True,
                     help="Open the --html page in the browser (only when stdout is a terminal)."),
        click.option("--trace", is_flag=True,
                     help="Narrate GJK and EPA step by step for the listed pairs (in JSON: a "
                          "'trace' list per pair)."),
        click.option("--trace-json", type=click.Path(dir_okay=False, path_type=str), metavar="FILE",
                     help="Write the trace steps to FILE as JSON lines, one object per step ('-' "
                          "for stdout)."),
        click.option("--layers", callback=_globs, multiple=True, metavar="GLOBS",
                     help="2D drawings (DXF): read only the layers matching these globs "
                          "(comma-separated or repeated; case-insensitive, as AutoCAD's layer "
                          "names). Default: every layer."),
        click.option("--ignore-layers", callback=_globs, multiple=True, metavar="GLOBS",
                     help="2D drawings (DXF): leave out the layers matching these globs "
                          "(engraving, marking, dimensions)."),
        click.option("--units", callback=_unit, metavar="UNIT",
                     help="The length unit of inputs whose files state none (an STL, an OBJ, a "
                          "DXF without a header, an SVG without a width): mm, in, m, ... "
                          "Default: none; they take the unit of the inputs that state one."),
        click.option("--join-tolerance", callback=_length, metavar="LENGTH",
                     help="2D drawings: join open pieces whose ends are this close into one "
                          "outline (micro-joints, tabs), closing each gap with a straight edge. "
                          "In the drawing's units, or with a unit. Default: 1e-6 of the "
                          "drawing's size."),
        click.option("--timings", is_flag=True,
                     help="Print where the time went (imports, load, hulls, broad, narrow, refine, "
                          "report) on stderr."),
        click.option("--limit", "limit", multiple=True, metavar="NAME=VALUE",
                     help="Raise or lower what a file may hold before gjk refuses it (repeatable): "
                          "file-bytes (1 GiB), triangles (20 million), archive-members (10,000), "
                          "archive-bytes (1 GiB inflated), ratio (1,000, compression); and "
                          "overlap-volumes (1,000: the deepest collisions that get a volume; 0: none); pngs (100: "
                          "the most severe violations that --png draws); cache (1 GiB: the "
                          "cache folder's size, the entries read least recently dropped first)."),
        click.option("--no-cache", is_flag=True,
                     help="Neither read nor write the cache (as GJK_NO_CACHE=1 or `cache = false` "
                          "in the settings). Default: a re-run reuses what did not change, from "
                          ".gjk_cache beside the settings file or in the working folder."),
        click.option("--cache-dir", type=click.Path(file_okay=False, path_type=str), metavar="DIR",
                     help="Keep the cache in DIR (as GJK_CACHE_DIR). `gjk clean` empties it."),
        click.option("--color", type=click.Choice(COLORS), default="auto", show_default=True,
                     help="Colour in the report on stdout: auto (on a terminal; through a pipe "
                          "too when FORCE_COLOR, CLICOLOR_FORCE or PY_COLORS=1 is set; never when "
                          "NO_COLOR or PY_COLORS=0 is), always (also through a pipe, as for a CI "
                          "log), never."),
        click.option("-q", "--quiet", is_flag=True, help="Print nothing; the exit code is the answer."),
        click.option("-v", "--verbose", count=True,
                     help="-v: every finding with its detail (the normal, the witness points, the "
                          "certificate, the iterations) and no row limit; -vv: the stages' "
                          "timings on stderr too (as --timings)."),
        click.option("--debug", is_flag=True, help="Show tracebacks instead of one-line errors."),
        click.option("--version", is_flag=True, expose_value=False, is_eager=True,
                     callback=_print_version, help="Show the version and exit."),
    ]
    for option in reversed(shared):
        f = option(f)
    return f


@click.group(context_settings=CONTEXT)
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_print_version,
              help="Show the version and exit.")
def main() -> None:
    """gjk: collision, touching and clearance checks between parts: 3D (meshes, scenes, STEP,
    IFC, URDF) and flat (SVG, DXF).

    GJK and EPA on convex hulls, the parts' triangles (in 2D their edges) where the hulls are not
    the parts, with a certificate behind every verdict. `gjk check -h` for two parts, `gjk scan
    -h` for scenes, nests and buildings.
    """


def _direction(_ctx, param, value):
    """--start-direction X,Y: two finite numbers, not both zero."""
    if value is None:
        return None
    try:
        x, y = (float(t) for t in value.split(","))
    except ValueError:
        raise click.BadParameter(f"{value!r}: give two numbers X,Y, e.g. 1,-1", param=param) from None
    if not (math.isfinite(x) and math.isfinite(y)) or (x == 0 and y == 0):
        raise click.BadParameter(f"{value!r}: give two finite numbers, not both zero", param=param)
    return (x, y)


@main.command(context_settings=CONTEXT, cls=SettingsCommand, epilog="""
    gjk check samples/pocket_box.stl samples/pocket_cube.stl
    gjk check bracket.step bolt.step --clearance 0.2mm --html pair.html
    gjk check samples/dyn4j/shape1.svg samples/dyn4j/shape2.svg --trace --start-direction 1,-1
    """)
@click.argument("a", metavar="A", type=click.Path(path_type=str))
@click.argument("b", metavar="B", type=click.Path(path_type=str))
@click.option("--start-direction", callback=_direction, metavar="X,Y",
              help="2D drawings: GJK's first search direction (as a tutorial starts it, e.g. 1,-1); "
                   "read with --trace. Default: from A's box centre towards B's.")
@_options
@click.pass_context
def check(ctx, a, b, start_direction, **opts):
    """Check two parts A and B: clear, touching, collision, or closer than --clearance.

    Each file is one object; every format trimesh reads (STL, OBJ, PLY, OFF, GLB/glTF, 3MF, ...)
    and STEP (OpenCASCADE: in the file's unit, verdicts bounded by the tessellation's error).
    Every pair is listed. Exit code 0: no violation; 1: collision, clearance violated or
    undecided; 2: usage or input error.
    """
    _command(ctx, "check", inputs=[a, b], start_direction=start_direction, **opts)


@main.command(context_settings=CONTEXT, cls=SettingsCommand, epilog="""
    gjk scan parts/ --clearance 0.1mm
    gjk scan assembly/ --together
    gjk scan --config ci/gjk.toml
    gjk scan --manifest gjk.toml --format sarif -o gjk.sarif
    gjk scan building.ifc --tolerance 2mm --format bcf -o clashes.bcfzip
    gjk scan panda.urdf --srdf panda.srdf --poses poses.csv
    gjk scan nest.dxf --sheet-layer SHEET --clearance 0.5
    """)
@click.argument("files", metavar="FILE...", nargs=-1, type=click.Path(path_type=str))
@click.option("--manifest", type=click.Path(dir_okay=False, path_type=str), metavar="FILE",
              help="A TOML (or JSON) manifest: includes, primitives, groups, checks, allowed pairs, "
                   "an SRDF, tolerance, clearance, fail_on.")
@click.option("--together", is_flag=True,
              help="The files are one world: every object of one file against every object of the "
                   "others (an assembly exported as one file per part). Default: each file by "
                   "itself, pairs within a file only; a manifest (or settings naming objects) is "
                   "one world.")
@click.option("--no-recurse", is_flag=True,
              help="A directory gives the files directly in it, not those of its subdirectories.")
@click.option("--fail-on", multiple=True, type=click.Choice(("collision", "touching", "clearance")),
              help="Findings that fail the scan (repeatable). Default: the manifest's, else collision "
                   "and clearance; undecided pairs always fail.")
@click.option("--all-pairs", is_flag=True,
              help="List every pair with its distance (up to 10,000 pairs: those whose boxes are "
                   "apart too, with their hulls' distance, a lower bound).")
@click.option("--show-allowed", is_flag=True,
              help="List the allowed pairs too (table and JSON; SARIF and JUnit always carry them, "
                   "as suppressed and skipped). Default: counted in the summary, not listed.")
@click.option("--allow", "allow", multiple=True, callback=_allows, metavar="A,B[:REASON]",
              help="Allow the pairs of objects A and B to touch or overlap, with REASON (repeatable): "
                   "names, globs or manifest groups, as a manifest's [[allow]] a and b; write [:] for "
                   "a ':' in a name. Adds to the manifest's [[allow]] tables (which give their "
                   "reason first): a manifest for a project, flags for one-offs.")
@click.option("--baseline", type=click.Path(dir_okay=False, path_type=str), metavar="FILE",
              help="Fail only on findings not recorded in FILE; report the recorded ones that are gone.")
@click.option("--write-baseline", type=click.Path(dir_okay=False, path_type=str), metavar="FILE",
              help="Record today's findings in FILE, keyed by (file, object, object).")
@click.option("-j", "--jobs", type=click.IntRange(min=1), metavar="N",
              help="Worker processes for loading, hulls, the triangle tests and overlap volumes. Default: all cores.")
@click.option("--dask", "dask", metavar="ADDRESS", callback=_dask_address,
              help="Scan on a Dask cluster: a scheduler (tcp://host:8786), or local[:N] for N "
                   "worker processes here (default 2). Default: the manifest's `dask`, else this "
                   "process. Needs gjk[dask].")
@click.option("--dask-timeout", type=click.FloatRange(min=0, min_open=True), default=10.0,
              show_default=True, metavar="SECONDS",
              help="How long to wait for the Dask scheduler and its first worker.")
@click.option("--package", "packages", multiple=True, metavar="NAME=DIR",
              help="URDF: where package://NAME/... lives (repeatable); then ROS_PACKAGE_PATH, the "
                   "ament index of AMENT_PREFIX_PATH, a folder called NAME above the URDF.")
@click.option("--srdf", type=click.Path(dir_okay=False, path_type=str), metavar="FILE",
              help="URDF: a MoveIt SRDF whose disabled pairs are allowed (with their reasons) and "
                   "whose group states name poses.")
@click.option("--joints", metavar="NAME=VALUE,...",
              help="URDF: the pose (radians, metres), or a group state of --srdf. Default: every "
                   "joint at 0 within its limits; a value outside the limits is an error.")
@click.option("--poses", type=click.Path(dir_okay=False, path_type=str), metavar="FILE",
              help="URDF: check every pose of a CSV (a header of joint names, one pose a row) or "
                   "a ROS trajectory (below); each finding carries its row as 'waypoint'.")
@click.option("--trajectory", type=click.Path(dir_okay=False, path_type=str), metavar="FILE",
              help="URDF: the waypoints of one motion: each waypoint, and the straight joint motion "
                   "between them continuously ('segment' and 't'). A CSV as --poses, or a "
                   "JointTrajectory or MoveIt RobotTrajectory as JSON or YAML (as `ros2 topic "
                   "echo` prints it): findings carry 'time_from_start' too.")
@click.option("--skip-missing-meshes", is_flag=True,
              help="URDF: a link whose mesh file is not there is checked without it and the run "
                   "passes on the rest (a note names it). Default: that geometry is not checked and "
                   "the run exits 1.")
@click.option("--sheet-layer", metavar="NAME",
              help="2D drawings: the layer whose outline is the sheet (DXF layer, SVG Inkscape "
                   "layer or group id; or one contour's own name: an SVG id, a DXF LAYER:HANDLE); "
                   "every part must lie inside it by --clearance (a part that leaves it collides "
                   "with 'sheet:NAME').")
@click.option("--group-within", callback=_length, metavar="LENGTH",
              help="Group the failing pairs of each clash set whose contacts lie within LENGTH of "
                   "each other (chained): groups in every report, one BCF topic per group. In the "
                   "model's units or with a unit (3m). Default: the manifest's group_within.")
@click.option("--watch", is_flag=True,
              help="Scan again each time an input (a file, a folder's files, the manifest, the "
                   "settings) is saved, with the cache: what did not change is not checked again. "
                   "Ctrl-C ends it.")
@_options
@click.pass_context
def scan(ctx, files, manifest, together, no_recurse, fail_on, allow, all_pairs, show_allowed, baseline, write_baseline,
         jobs, dask, dask_timeout, packages, srdf, joints, poses, trajectory, skip_missing_meshes, sheet_layer,
         group_within, watch=False, **opts):
    """Check every pair of objects across scene files (and a manifest); fail the build on a violation.

    Every node holding geometry is an object, named by its node name (prefixed by the file name
    when several files are given), moved by its full world transform. Each file is checked by
    itself (its own objects' pairs), all of them as one world with --together or a manifest.
    Directories expand to the files in them and their subdirectories of every format gjk reads
    (a note counts what was left out). Without FILE, what the settings name (a gjk.toml, or
    [tool.gjk] in pyproject.toml: files, and a manifest's tables) is scanned. Exit code 0: no
    violation; 1: a violation neither allowed nor in the baseline; 2: an input failed to load
    (after checking all the rest) or a usage error.
    """
    settings = settings_of(ctx)
    if not files and manifest is None:  # what the settings name (ruff's `include` without paths)
        files, manifest = settings.files, settings.manifest
    if not files and manifest is None:
        raise click.UsageError("give scene files, a directory or --manifest FILE (or name them in "
                               "a gjk.toml: files = [...])")
    together = together or manifest is not None and (isinstance(manifest, str) or settings.scene)

    def once():
        _command(ctx, "scan", inputs=list(files), manifest=manifest, fail_on=fail_on or None, together=together,
                 allow=allow, recurse=not no_recurse, all_pairs=all_pairs, show_allowed=show_allowed,
                 baseline=baseline, write_baseline=write_baseline, jobs=jobs,
                 dask=dask, dask_timeout=dask_timeout, sheet_layer=sheet_layer, group_within=group_within,
                 robot=_robot_options(packages, srdf, joints, poses, trajectory, skip_missing_meshes), **opts)

    if not watch:
        once()
        return
    watched = [*files, *(x for x in (manifest if isinstance(manifest, str) else None, baseline, srdf, poses,
                                     trajectory, settings.path) if x is not None)]
    _watch(once, watched, quiet=opts.get("quiet", False))


# How often --watch looks at its files' times and sizes (seconds).
WATCH_EVERY_S = 0.3


def _watch(once, paths, quiet: bool = False, runs: int | None = None) -> None:
    """`once()` (a scan), then again each time a file of `paths` (a folder: the files under it)
    changes its modification time or size, until Ctrl-C (or `runs` runs). Each run's exit code
    and wall time are said on stderr; the report on stdout is flushed after each run."""
    import time

    def snapshot() -> dict:
        seen = {}
        for p in map(str, paths):
            found = [p]
            if os.path.isdir(p):
                found = [os.path.join(d, f) for d, _, names in os.walk(p) for f in names
                         if not d.split(os.sep)[-1].startswith(".gjk_cache")]
            for f in found:
                try:
                    st = os.stat(f)
                except OSError:
                    seen[f] = None
                    continue
                seen[f] = (st.st_mtime_ns, st.st_size)
        return seen

    from gjkcli import clock

    done = 0
    try:
        while True:
            before = snapshot()
            started = time.perf_counter()
            if done:
                clock.again()  # this run's clock, not the process's
            try:
                once()
                code = EXIT_OK
            except click.exceptions.Exit as e:
                code = e.exit_code
            except click.ClickException as e:
                e.show()
                code = e.exit_code
            sys.stdout.flush()
            done += 1
            if runs is not None and done >= runs:
                return
            if not quiet:
                click.echo(f"gjk: exit {code}; scanned in {time.perf_counter() - started:.2f} s; watching "
                           f"{len(before):,} file{'s' if len(before) != 1 else ''} (Ctrl-C ends)", err=True)
            while True:
                time.sleep(WATCH_EVERY_S)
                now = snapshot()
                if now != before:
                    changed = sorted(f for f in set(now) | set(before) if now.get(f) != before.get(f))
                    time.sleep(WATCH_EVERY_S)  # a save in several writes: let it finish
                    if not quiet:
                        click.echo(f"gjk: {changed[0]}{f' and {len(changed) - 1} more' if len(changed) > 1 else ''} "
                                   f"changed: scanning again", err=True)
                    break
    finally:
        clock.again(False)


def _robot_options(packages, srdf, joints, poses, trajectory, skip_missing=False):
    """The URDF options as a gjkcli.scene.robotoptions.RobotOptions, or None when none is
    given."""
    if (not packages and srdf is None and joints is None and poses is None and trajectory is None
            and not skip_missing):
        return None
    if sum(x is not None for x in (joints, poses, trajectory)) > 1:
        raise click.UsageError("give one of --joints, --poses and --trajectory")
    pairs = []
    for item in packages:
        name, eq, folder = item.partition("=")
        if not eq or not name or not folder:
            raise click.BadParameter(f"{item!r} is not NAME=DIR", param_hint="--package")
        pairs.append((name, folder))
    from gjkcli.scene.robotoptions import RobotOptions

    return RobotOptions(packages=tuple(pairs), srdf=srdf, joints=joints, poses=poses,
                        trajectory=trajectory, skip_missing=skip_missing)


@main.command(context_settings=CONTEXT, cls=SettingsCommand)
@click.option("--config", "config_file", metavar="FILE", is_eager=True, expose_value=False,
              callback=_settings_flag, help="The settings file whose cache to empty (as scan's --config).")
@click.option("--isolated", is_flag=True, is_eager=True, expose_value=False, callback=_settings_flag,
              help="Read no settings file: the cache of the working folder.")
@click.option("--cache-dir", type=click.Path(file_okay=False, path_type=str), metavar="DIR",
              help="Empty this cache folder (as GJK_CACHE_DIR).")
@click.pass_context
def clean(ctx, cache_dir):
    """Empty gjk's cache: .gjk_cache beside the settings file, or in the working folder (or
    --cache-dir DIR). Only a folder gjk made (with its CACHEDIR.TAG) is removed."""
    from gjkcli.pipeline.cache import clear, located

    folder = located(settings_of(ctx).path, cache_dir)
    try:
        count = clear(folder)
    except (ValueError, OSError) as e:
        click.echo(f"gjk: error: {shown(str(folder))}: {one_line(str(e))}", err=True)
        ctx.exit(EXIT_ERROR)
    click.echo(f"gjk: removed {folder} ({count:,} entries)" if count else f"gjk: {folder} holds no cache")


MATRIX_FORMATS = ("srdf", "table", "json")


@main.command("collision-matrix", context_settings=CONTEXT, cls=GroupedCommand, epilog="""
    gjk collision-matrix panda.urdf -o panda.srdf
    gjk collision-matrix panda.urdf --samples 2000 --prove --format table
    gjk collision-matrix panda.urdf --audit panda.srdf --format json -o audit.json
    """)
@click.argument("urdf", metavar="ROBOT.urdf", type=click.Path(path_type=str))
@click.option("--samples", type=click.IntRange(min=1), default=10_000, show_default=True, metavar="N",
              help="Random poses within the joint limits.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the random poses.")
@click.option("--format", "output_format", type=click.Choice(MATRIX_FORMATS), default="srdf",
              show_default=True,
              help="srdf: <disable_collisions> lines for MoveIt (with --audit: one line per "
                   "failing pair and a summary); table: every pair with its reason (with --audit: "
                   "the pairs that collide), for people; json: the same as a document for scripts.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=str), metavar="FILE",
              help="Write the report to FILE (an existing SRDF keeps all but its disabled pairs). "
                   "Default: stdout.")
@click.option("--audit", type=click.Path(dir_okay=False, path_type=str), metavar="SRDF",
              help="Instead: check every pair SRDF disables but Adjacent ones (Never, unlabelled, "
                   "a disable_default_collisions link's; less enable_collisions) at random poses; "
                   "exit 1 with a pose for each that collides, unless its reason (Default, Always) "
                   "says it does.")
@click.option("--prove", is_flag=True,
              help="Certify each Never pair over the whole joint-limit box (branch and bound); "
                   "pairs neither proven nor refuted are left enabled, listed in a comment.")
@click.option("--prove-boxes", type=click.IntRange(min=1), default=20_000, show_default=True,
              metavar="N", help="--prove's budget: sub-boxes per pair before it says not proven.")
@click.option("--package", "packages", multiple=True, metavar="NAME=DIR",
              help="Where package://NAME/... lives (repeatable), as for scan.")
@click.option("--limit", "limit", multiple=True, metavar="NAME=VALUE",
              help="Raise or lower what a mesh file may hold before gjk refuses it (repeatable), as "
                   "for scan: file-bytes, triangles, archive-members, archive-bytes, ratio.")
@click.option("-j", "--jobs", type=click.IntRange(min=1), metavar="N",
              help="Worker processes the samples are split over. Default: all cores.")
@click.option("--dask", "dask", metavar="ADDRESS", callback=_dask_address,
              help="Split the samples over a Dask cluster's workers instead: a scheduler "
                   "(tcp://host:8786), or local[:N] (as for scan). Needs gjk[dask].")
@click.option("--dask-timeout", type=click.FloatRange(min=0, min_open=True), default=10.0,
              show_default=True, metavar="SECONDS",
              help="How long to wait for the Dask scheduler and its first worker.")
@click.option("--color", type=click.Choice(COLORS), default="auto", show_default=True,
              help="Colour in the table on stdout: auto, always, never (as for scan).")
@click.option("-q", "--quiet", is_flag=True,
              help="Print nothing (-o FILE is still written); the exit code is the answer, as for "
                   "check and scan.")
@click.option("--srdf-only", is_flag=True,
              help="Print the report and no summary line (what -q meant before it meant quiet).")
@click.option("--debug", is_flag=True, help="Show tracebacks instead of one-line errors.")
@click.option("--version", is_flag=True, expose_value=False, is_eager=True,
              callback=_print_version, help="Show the version and exit.")
@click.pass_context
def collision_matrix(ctx, urdf, samples, seed, output_format, output, audit, prove, prove_boxes,
                     packages, limit, jobs, dask, dask_timeout, color, quiet, srdf_only, debug):
    """The self-collision matrix of a robot, as MoveIt's setup assistant makes it.

    Pairs of links are Adjacent (joined by a joint), Default (in collision at the default pose),
    Always (in collision in at least 95% of the samples) or Never (in none of them); the others
    stay enabled. Writes SRDF <disable_collisions> lines with those reasons. With --audit, exit
    code 1 when a pair the SRDF disables, not as Adjacent, Default or Always, collides. Exit code
    2: an input error.
    """
    from gjkcli import limits

    try:
        file_limits = limits.parse(limit)
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--limit") from None
    if quiet and output is None and output_format == "srdf" and audit is None:
        # -q used to print the SRDF alone: say where that went rather than print nothing unasked
        click.echo("gjk: note: -q prints nothing now, as for check and scan; --srdf-only prints "
                   "the SRDF without the summary, as -q did", err=True)
    robot_options = _robot_options(packages, None, None, None, None)
    with _one_line_errors(ctx, debug, lambda: "computing the collision matrix"), \
            _quiet_libraries(debug), limits.active(file_limits):
        from pathlib import Path

        from gjkcli.pipeline import matrix as matrices
        from gjkcli.report import srdf as srdfs
        from gjkcli.scene import urdf as urdfs
        from gjkcli.scene.manifest import read_small_text

        robot = urdfs.load(urdf, robot_options.packages if robot_options else ())
        jobs = max(1, os.cpu_count() or 1) if jobs is None else jobs
        cluster = None if dask is None else (dask, dask_timeout)  # the samples on its workers
        _refuse_to_overwrite([urdf], None, audit, outputs=(output,))
        with _progress(quiet, "table", "scan") as tell:
            if audit is not None:
                # every pair the SRDF allows but adjacent links (joined, they touch by design)
                with_geometry = {c.link for c in robot.collisions}
                adjacent = {frozenset((a, b)) for a, b, _ in urdfs.adjacent_links(robot)}
                disabled = [(a, b, reason) for a, b, reason, _ in
                            urdfs.srdf_disabled(robot, urdfs.read_srdf_rules(audit))
                            if reason != "Adjacent" and frozenset((a, b)) not in adjacent]
                audited = {(a, b): reason for a, b, reason in disabled
                           if a in with_geometry and b in with_geometry}
                found = matrices.audit(robot, list(audited), samples=samples, seed=seed, progress=tell,
                                        jobs=jobs, dask=cluster)
            else:
                m = matrices.collision_matrix(robot, samples=samples, seed=seed, progress=tell, jobs=jobs,
                                              dask=cluster)
                proofs = None
                if prove:
                    m, proofs = matrices.prove_never(robot, m, max_boxes=prove_boxes, progress=tell)
        if audit is not None:
            failing = [c for c in found if not srdfs.expected_to_collide(audited.get((c.a, c.b),
                                                                               audited.get((c.b, c.a))))]
            code = EXIT_VIOLATION if failing else EXIT_OK
            if output_format == "srdf":
                if not quiet or output is not None:
                    lines = srdfs.audit_lines(found, audited, samples, seed,
                                              unchecked=len(disabled) - len(audited))
                    write_text(output, "\n".join(lines) + "\n", "the audit")
            else:
                from gjkcli.report.matrix import audit_document

                doc = audit_document(found, audited, audit=audit, robot=robot.name, samples=samples,
                                     seed=seed, unchecked=len(disabled) - len(audited),
                                     failing={tuple(sorted((c.a, c.b))) for c in failing},
                                     version=_version(), exit_code=code)
                _matrix_report(doc, output_format, output, quiet, color)
            ctx.exit(code)
        if output_format == "srdf":
            existing = None
            if output is not None and os.path.isfile(output):  # a device or a FIFO holds no SRDF to update
                try:
                    existing = read_small_text(Path(output), "SRDF")
                except (OSError, ValueError, UnicodeDecodeError) as e:
                    raise InputError(output, f"cannot read the SRDF to update: "
                                             f"{getattr(e, 'strerror', None) or e}") from None
            try:
                text = srdfs.srdf_text(m, existing, always=matrices.ALWAYS, proven=proofs)
            except SyntaxError as e:  # lxml's XMLSyntaxError: the SRDF to update is not XML
                raise InputError(output, f"is not an SRDF (XML) gjk can update: {e}") from None
            if not quiet or output is not None:
                write_text(output, text, "the SRDF")
        else:
            from gjkcli.report.matrix import matrix_document

            _matrix_report(matrix_document(m, proofs, version=_version()), output_format, output,
                           quiet, color)
        if not quiet and not srdf_only:
            counts = {r: sum(1 for v in m.reasons.values() if v == r) for r in srdfs.REASON_ORDER}
            line = (", ".join(f"{n} {r}" for r, n in counts.items()) + f"; {len(m.enabled)} pairs "
                    f"stay enabled ({samples:,} samples, seed {seed})")
            if proofs is not None:
                verdicts = [p.verdict for p in proofs.values()]
                line += (f"; --prove: {verdicts.count('proven')} Never proven, "
                         f"{verdicts.count('collides')} collide, {verdicts.count('not proven')} not proven "
                         f"(left enabled)")
            click.echo(f"gjk: {line}" + (f"; wrote {output}" if output else ""),
                       err=output is None or output == "-")
    ctx.exit(EXIT_OK)


def _matrix_report(doc: dict, output_format: str, output: str | None, quiet: bool, color: str) -> None:
    """A collision matrix or an audit as a table or JSON, to --output or stdout (nothing on
    stdout with -q)."""
    if quiet and output is None:
        return
    if output_format == "json":
        from gjkcli.report.jsonout import dumps

        write_text(output, dumps(doc) + "\n", "the report")
        return
    from gjkcli.report.matrix import render_audit, render_matrix

    table = render_audit(doc) if "audit" in doc else render_matrix(doc)
    on_stdout = output is None or output == "-"
    terminal = on_stdout and console.is_terminal(sys.stdout)
    colour = on_stdout and console.wants_colour(color, terminal)
    if terminal:
        with to_stdout("the report"):
            console.terminal_console(colour).print(table)
        return
    # a log or a file: as wide as COLUMNS says, plain frames (as the scan's report)
    write_text(output, console.recorded([table], colour), "the report")


def _command(ctx, command: str, *, inputs, tolerance, clearance, mode, split_bodies,
                 output_format, output, trace, trace_json, timings, limit, quiet, debug, color="auto",
                 verbose=0,
                 manifest=None, fail_on=None, all_pairs=False, show_allowed=False, baseline=None,
                 write_baseline=None, jobs=None,
                 html_file=None, png_path=None, open_page=False, dask=None, dask_timeout=10.0,
                 robot=None, sheet_layer=None, start_direction=None, layers=None,
                 ignore_layers=None, join_tolerance=None, group_within=None, allow=(),
                 recurse=True, together=True, units=None, no_cache=False, cache_dir=None) -> None:
    """The pipeline, then the report, then the exit code."""
    import dataclasses
    import time

    from gjkcli import clock, limits

    params = {k: v for k, v in locals().items() if k not in ("ctx", "dataclasses", "time", "clock", "limits")}
    try:
        file_limits = limits.parse(limit)
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--limit") from None
    # the cache (gjkcli.clicache): a whole report kept for the same inputs and options replayed,
    # else STEP files placed from it, or the forked reader of STEP and IFC files started
    run = CachedRun.opened(ctx.info_name or "", command, params, file_limits, settings_of(ctx).path)
    kept = run.replay_kept()
    if kept is not None:
        ctx.exit(kept)
    run.start_reading(exact=bool(trace or trace_json is not None or split_bodies or dask))

    timings = timings or verbose >= 2  # -vv: the stages' timings, as pytest's -vv says more
    # a table asked for (not the format's default) is a table through a pipe too
    table_asked = ctx.get_parameter_source("output_format") not in (None, click.core.ParameterSource.DEFAULT)
    # a log's line per finding lists every one (each with its overlap volume), as the table rows
    every_line = not table_asked and (output not in (None, "-") or not console.is_terminal(sys.stdout))
    stage = ["starting"]
    # with --timings, imports are a stage of their own, not part of the stage that first needs them
    with _one_line_errors(ctx, debug, lambda: stage[0]), _quiet_libraries(debug), clock.recorded(timings), \
            contextlib.ExitStack() as reporting:
        from gjkcli.pipeline import run as pipeline

        # what the run keeps up for its reports (a Dask cluster, whose workers hold the answers
        # the report writes) closes once they are written
        reporting.enter_context(pipeline.reporting())

        if open_page and html_file is None:
            raise click.UsageError("--open opens the --html page: give --html FILE too")
        if output_format == "bcf" and output in (None, "-"):
            raise click.UsageError("--format bcf writes a zip file: give -o FILE.bcfzip")
        manifest_file = getattr(manifest, "path", manifest)  # a file, or the settings' tables
        _refuse_to_overwrite(inputs, manifest_file, baseline,
                             outputs=(output, trace_json, write_baseline, html_file, png_path))
        # before the run: a picture whose library is missing fails now, not after a long scan
        if html_file is not None or png_path is not None:
            from gjkcli import extras
        if html_file is not None:
            extras.require("html", html_file, "writing the HTML page")
        if png_path is not None:
            extras.require("png", png_path, "drawing PNG pictures")
        options = pipeline.Options(
            mode=mode, tolerance=tolerance, clearance=clearance, fail_on=fail_on,
            all_pairs=all_pairs, trace=trace or trace_json is not None, split_bodies=split_bodies,
            jobs=jobs, baseline=baseline, write_baseline=write_baseline, strict=debug,
            limits=file_limits, dask=dask, dask_timeout=dask_timeout, robot=robot,
            sheet_layer=sheet_layer, start_direction=start_direction, layers=layers,
            ignore_layers=ignore_layers, join_tolerance=join_tolerance,
            shown=_shown(command, output_format, output, quiet, all_pairs or verbose > 0 or every_line,
                         html_file, png_path),
            show_allowed=show_allowed, group_within=group_within, allow=allow, recurse=recurse,
            together=together, list_passing=output_format == "junit", units=units,
            pictures=_pictures(html_file, png_path, file_limits.pngs, trace), cache=run.cache)
        _import_ahead(output_format, quiet)
        stage[0] = f"checking {' against '.join(inputs)}" if command == "check" else "scanning"
        # the cache: a GLB scanned before with some parts moved re-checks those; a poses run
        # takes its kept poses' lines
        code, options = run.before_scan(options, pipeline.scan, timings)
        if code is not None:
            ctx.exit(code)

        def scanned(options):
            with _progress(quiet, output_format, command) as tell, run.scanning():
                if command == "check":
                    found = pipeline.check(inputs[0], inputs[1], options, progress=tell)
                else:
                    found = pipeline.scan(inputs, options, manifest=manifest, progress=tell)
            return with_settings(found, settings_of(ctx).path, show_allowed)

        found = scanned(options)
        if options.pose_lines is not None and options.pose_lines.used:  # kept poses' lines spliced in
            stage[0] = "writing the report"
            code = run.spliced_poses(found, options, output)
            if code is not None:
                ctx.exit(code)
            # the kept lines did not fit the findings (`PoseLines.spliced`): the run's findings
            # lack the kept poses', so the poses are scanned again, all of them
            stage[0] = "scanning"
            found = scanned(dataclasses.replace(options, pose_lines=None))
        whole = clock.since_start()  # the summary's clock: the process's, where gjk started it
        if whole is not None:
            found = dataclasses.replace(found, elapsed=whole, timed="process")
        started = time.perf_counter()
        # each input error is one line on stderr, whatever the format, before the report: the
        # reason comes before what it led to ("only one object", the summary), and a CI log or
        # `gjk scan ... >/dev/null` shows it; a table on stdout leaves them to these lines
        for problem in found.errors:
            click.echo(error_line(problem), err=True)
            run.stderr.append(error_line(problem))
        if trace_json is not None:
            stage[0] = f"writing {trace_json}"
            _write_trace_json(trace_json, found)
        if not quiet or output is not None:
            stage[0] = "writing the report"
            with run.recording() as writes:
                _emit(found, output_format, output, trace=trace, quiet=quiet, timings=timings, color=color,
                      verbose=verbose, table_asked=table_asked)
            run.after_report(found, writes)
        else:
            run.after_report(found, [])  # -q: the run kept with no report
        if html_file is not None:
            stage[0] = f"writing {html_file}"
            _write_html(html_file, found, trace=trace, open_page=open_page)
        if png_path is not None:
            stage[0] = f"drawing {png_path}"
            _write_png(png_path, found, inputs=(*inputs, manifest_file, baseline), cap=file_limits.pngs,
                       progress=not quiet and sys.stderr.isatty())
        if timings:
            spent = dict(found.timings)
            clock.stage(spent, "report", started)
            # every import of the process: the command line's own, then those made on the way
            spent = {clock.IMPORTS: clock.startup() + clock.imported(),
                     **{k: v for k, v in spent.items() if k != clock.IMPORTS}}
            click.echo("gjk: timings: " + ", ".join(f"{k} {v:.3f} s" for k, v in spent.items()),
                       err=True)
    ctx.exit(found.exit_code)


def _pictures(html_file, png_path, pngs: int, trace: bool):
    """`Options.pictures`: what the asked pictures draw (a Dask scan fetches those parts'
    triangles from its workers), or None without a picture."""
    if html_file is None and png_path is None:
        return None
    import functools

    from gjkcli.report.pictures import read_by_pictures

    return functools.partial(read_by_pictures, html=html_file is not None,
                             pngs=pngs if png_path is not None else 0, trace=trace)


def _shown(command, output_format, output, quiet, all_pairs, html_file, png_path) -> int | None:
    """How many findings the run's reports show, most severe first (the overlap volumes are
    computed for those only): none for -q without a file to write, the table's rows for a scan's
    table, all of them otherwise."""
    if html_file is not None or png_path is not None:
        return None
    if quiet and output is None:
        return 0
    if output_format == "table" and command == "scan" and not all_pairs:
        return TABLE_ROWS
    return None


@contextlib.contextmanager
def _quiet_libraries(debug: bool):
    """The libraries' own chatter (numpy's RuntimeWarnings on degenerate input, trimesh's log
    lines) stays off stderr, where gjk's one line per problem is; --debug lets it through."""
    import logging
    import warnings

    if debug:
        yield
        return
    logger = logging.getLogger("trimesh")
    level, logger.level = logger.level, logging.CRITICAL + 1
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        logger.setLevel(level)


# What a run imports once its parts are read, by output format: imported before the run when
# a process of its own reads the STEP files or IFC models (gjkcli.mesh.cad_process), while this
# process would otherwise wait for it. For STEP files (OpenCASCADE's import alone takes 0.7 s)
# also the refinement with exact solids and numpy.ma, which numpy's `unique` imports on its
# first call (5 to 15 ms): an IFC run's steps need neither (they count where np.unique would
# import numpy.ma: gjkcli.engine.exact.distinct).
_AFTER_READING = ("gjkcli.engine.exact", "gjkcli.engine.query", "gjkcli.mesh.convexity",
                  "gjkcli.scene.broadphase", "gjkcli.pipeline.prepared", "gjkcli.pipeline.clashsets",
                  "gjkcli.pipeline.groups", "gjkcli.pipeline.refine", "gjkcli.engine.primitive",
                  "gjkcli.mesh.overlap")
_AFTER_READING_STEP = ("gjkcli.pipeline.tessellated", "numpy.ma")
_REPORTING = {"json": ("gjkcli.report.jsonout", "orjson"),
              "table": ("rich.console", "gjkcli.report.scan", "gjkcli.report.table",
                        "gjkcli.report.trace", "gjkcli.report.checktext")}


# What a run may import once its parts are read, as it finds it needs them: imported while the
# command waits for the parts that process reads, as long as it has not answered
# (cad_process.meanwhile). Not manifold3d: once imported, the command forks no more workers
# (gjkcli.engine.shapes.can_fork).
_WHILE_READING = ("scipy._lib._util", "scipy.sparse", "scipy.linalg", "scipy.special", "scipy.spatial")


def _import_ahead(output_format: str, quiet: bool) -> None:
    """`_AFTER_READING` (and `_AFTER_READING_STEP` for STEP files) and the report's modules
    (`_REPORTING`), when a process of its own reads the STEP files or IFC models
    (gjkcli.mesh.cad_process); `_WHILE_READING` while it reads them."""
    from gjkcli.mesh import cad_process

    if not cad_process.serving():
        return
    import importlib

    # -q quiets the terminal, not a report written to a file
    quieted = quiet and output_format == "table"
    step = _AFTER_READING_STEP if cad_process.reads_step() else ()
    for name in _AFTER_READING + step + (() if quieted else _REPORTING.get(output_format, ())):
        importlib.import_module(name)
    cad_process.meanwhile(_WHILE_READING)


@contextlib.contextmanager
def _progress(quiet: bool, output_format: str, command: str):
    """A progress bar on a terminal for long scans (a callback for the pipeline), else None."""
    if command != "scan" or quiet or not sys.stderr.isatty():  # no bar (wants_progress' rule):
        yield None  # the report module and rich are not imported for it (a robot's --poses run)
        return
    from gjkcli.report.scan import progress_callback, wants_progress

    if not wants_progress(quiet=quiet, output_format=output_format, stream=sys.stderr):
        yield None
        return
    from rich.console import Console

    with progress_callback(Console(stderr=True)) as tell:
        yield tell


@contextlib.contextmanager
def _one_line_errors(ctx: click.Context, debug: bool, stage):
    """Any error as one line on stderr and exit code 2; with --debug, the error and its traceback.

    stage() says what the command was doing, for errors gjk did not foresee.
    """
    try:
        yield
    except KeyboardInterrupt:  # Ctrl-C without the entry's handler (in-process callers)
        click.echo("gjk: interrupted", err=True)
        ctx.exit(EXIT_INTERRUPTED)
    except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException):
        raise
    except GjkError as e:
        if debug:
            raise
        for problem in getattr(e, "before", ()):  # the inputs refused first: they are the reason
            click.echo(f"gjk: error: {shown(problem.file)}: {one_line(problem.message)}", err=True)
        text = f"{shown(_source(ctx, e.source))}: {one_line(e.message)}" if isinstance(e, InputError) \
            else one_line(e)
        click.echo(f"gjk: error: {text}", err=True)
        ctx.exit(EXIT_ERROR)
    except Exception as e:  # the last line of defence: one line, not a traceback
        if debug:
            raise
        click.echo(f"gjk: internal error while {stage()}: {type(e).__name__}: {one_line(e)} "
                   "(run with --debug for the traceback)", err=True)
        ctx.exit(EXIT_ERROR)


def _source(ctx: click.Context, source: str) -> str:
    """What an error names: an option's value that came from the settings file is named by the
    file and its key ("gjk.toml: clearance 0.5mm"), not as an option the user never typed."""
    from gjkcli.config import OPTIONS

    option, _, value = str(source).partition(" ")
    name = option[2:].replace("-", "_") if option.startswith("--") else None
    key = next((k for k, (n, _) in OPTIONS.items() if n == name), None)
    if key is None or ctx.get_parameter_source(name) is not click.core.ParameterSource.DEFAULT_MAP:
        return source
    return f"{settings_of(ctx).path}: {key} {value}".rstrip()


def _refuse_to_overwrite(inputs, manifest, baseline, outputs) -> None:
    """No output may land on a file the run reads, whatever spelling or link leads there."""
    from pathlib import Path

    def exists(p) -> bool:  # a name the system refuses (too long, a NUL) reads nothing
        try:
            return Path(p).exists()
        except (OSError, ValueError):
            return False

    read = [Path(p) for p in (*inputs, manifest, baseline) if p is not None and exists(p)]
    for out in outputs:
        if out is None or out == "-" or not exists(out):
            continue
        for src in read:
            targets = [src] if not src.is_dir() else [c for c in src.iterdir() if c.is_file()]
            for t in targets:
                with contextlib.suppress(OSError):
                    if os.path.samefile(out, t):
                        raise InputError(out, f"is an input of this run ({t}); refusing to write "
                                              f"over it: name another output file")


def _emit(found, output_format: str, output: str | None, trace: bool, quiet: bool, timings: bool,
          color: str = "auto", verbose: int = 0, table_asked: bool = False) -> None:
    """Render the findings in their format, to --output or stdout (the JSON's clock only with
    --timings; the table's colour as --color and the environment say, `console.wants_colour`).
    The cyclic collector is paused meanwhile: a report of many findings (a SARIF result, a
    JUnit case, each a nest of dicts) made collections walk every object alive again and
    again (most of a large SARIF log's time)."""
    from gjkcli.collector import no_gc

    with no_gc():
        _render(found, output_format, output, trace, quiet, timings, color, verbose, table_asked)


def _render(found, output_format: str, output: str | None, trace: bool, quiet: bool, timings: bool,
            color: str, verbose: int, table_asked: bool) -> None:
    if output_format == "table":
        if found.command == "check" and found.errors and output is None:
            return  # the errors are on stderr; there is nothing to compare
        on_stdout = output is None or output == "-"
        terminal = on_stdout and console.is_terminal(sys.stdout)
        text = _table(found, trace, terminal=terminal, errors=not on_stdout,
                      colour=on_stdout and console.wants_colour(color, terminal), verbose=verbose,
                      asked=table_asked)
        if text is None:
            return
    elif output_format == "json":
        from gjkcli.report.jsonout import encoded

        # to a file as it is encoded (a large scan's document is never whole in memory)
        text = encoded(found, trace=trace, timings=timings)
        if output is None or output == "-":
            text = b"".join(text).decode()
    elif output_format == "junit":
        from gjkcli.report.ci import junit_encoded

        text = junit_encoded(found)  # to a file as it is written, as the JSON
        if output is None or output == "-":
            text = b"".join(text).decode()
    elif output_format == "github":
        from gjkcli.report.ci import github_annotations

        text = github_annotations(found)
    elif output_format == "bcf":
        from gjkcli.report.bcf import bcf_files, needs_ifc

        why = needs_ifc(found)
        if why is not None:
            raise InputError(output, f"cannot write BCF: {why}")
        files = bcf_files(found)
        if len(files) > 1:  # one BCF per clash set, beside the named one
            _write_per_set(output, files, quiet)
            return
        text = files[0][1]
    else:
        from gjkcli.report.sarif import sarif_encoded

        text = sarif_encoded(found)  # to a file as it is encoded, as the JSON
        if output is None or output == "-":
            text = b"".join(text).decode()
    write_text(output, text, "the report")


def _write_per_set(output: str, files: list, quiet: bool) -> None:
    """One BCF per clash set: OUT.bcfzip becomes OUT.<set>.bcfzip for each set (the name made
    safe for a file name; no input of a scan is a .bcfzip)."""
    import re
    from pathlib import Path

    out = Path(output)
    suffix = out.suffix or ".bcfzip"
    written = []
    for name, data in files:
        slug = re.sub(r"[^A-Za-z0-9._-]+", "-", name or "no-set").strip("-.") or "set"
        target = out.with_name(f"{out.stem}.{slug}{suffix}")
        write_text(str(target), data, "the report")
        written.append(str(target))
    if not quiet:
        click.echo(f"gjk: one BCF per clash set: {', '.join(written)}", err=True)


def _table(found, trace: bool, terminal: bool, errors: bool, colour: bool = False, verbose: int = 0,
           asked: bool = False) -> str | None:
    """Print the report on the terminal (None), or return its text for a file or a pipe
    (`gjkcli.report.console`, which says what each shows)."""
    if not terminal:
        return console.report_text(found, trace, errors=errors, colour=colour, verbose=verbose,
                                    asked=asked)
    shown = console.renderables(found, trace, errors=errors, verbose=verbose)
    terminal_console = console.terminal_console(colour)
    with to_stdout("the report"):
        for renderable in shown:
            terminal_console.print(renderable)
    return None


def _write_html(path: str, found, trace: bool, open_page: bool) -> None:
    """The HTML page, written whole; opened in the browser on request when stdout is a terminal."""
    from gjkcli.report.html import html_page

    if path == "-":
        write_text(None, html_page(found, trace=trace), "the HTML page")
        return
    write_text(path, html_page(found, trace=trace), "the HTML page")
    if open_page and sys.stdout.isatty():
        click.launch(os.path.abspath(path))


def _write_png(path: str, found, inputs, cap: int = 100, progress: bool = False) -> None:
    """check: one picture in the file `path`; scan: one per violation in the folder `path`, the
    `cap` most severe (report order), a note on stderr when some were left out.

    Each picture is written whole; until the last is, the pictures this run added (and the
    folders it made for them) are listed in `errors.provisional`, which the Ctrl-C handler
    removes: an interrupted run leaves the folder as it was, not a first few pictures."""
    import itertools

    from gjkcli import errors
    from gjkcli.report.png import check_png, scan_pngs

    try:
        if found.command == "check":
            write_whole(path, check_png(found))
            return
        violations = sum(1 for p in found.pairs if p.violation)
        drawn = min(cap, violations)
        made = []  # the folders this run creates, outermost first
        folder = os.path.abspath(path)
        while not os.path.isdir(folder) and folder != os.path.dirname(folder):
            made.insert(0, folder)
            folder = os.path.dirname(folder)
        errors.provisional.extend(made)
        os.makedirs(path, exist_ok=True)
        with _picture_progress(progress) as tell:
            for k, (name, data) in enumerate(itertools.islice(scan_pngs(found), drawn)):
                target = os.path.join(path, name)
                _refuse_to_overwrite([p for p in inputs if p is not None], None, None, outputs=(target,))
                new = not os.path.lexists(target)  # a picture of an earlier run is replaced, not removed
                write_whole(target, data)
                if new:
                    errors.provisional.append(os.path.abspath(target))
                tell(k + 1, drawn)
    except OSError as e:
        raise InputError(path, f"cannot write the pictures: {e.strerror or e}") from e
    except KeyboardInterrupt:  # an in-process caller (no entry handler): the same clean-up
        for done in reversed(errors.provisional):
            with contextlib.suppress(OSError):
                os.rmdir(done) if os.path.isdir(done) else os.unlink(done)
        raise
    finally:
        errors.provisional.clear()  # the run is over: what it wrote stays
    if drawn < violations:
        click.echo(f"gjk: note: drew {drawn:,} pictures of {violations:,} violations in {shown(path)}, "
                   f"the most severe first (--limit pngs=N draws more)", err=True)


@contextlib.contextmanager
def _picture_progress(shown_bar: bool):
    """tell(done, total) for the pictures being drawn: a bar on stderr when it is a terminal,
    from the first picture (asked for, they are the run's last stage: the scan's half-second wait
    would show it or not by how fast the machine draws)."""
    if not shown_bar:
        yield lambda done, total: None
        return
    from rich.console import Console

    from gjkcli.report.scan import progress_callback

    with progress_callback(Console(stderr=True), delay=0.0) as update:
        yield lambda done, total: update("drawing pictures", done, total)


def _write_trace_json(path: str, found) -> None:
    import json

    from gjkcli.report.jsonout import trace_lines

    lines = [json.dumps(rec, allow_nan=False) for pair in found.pairs for rec in trace_lines(pair)]
    write_text(path, "".join(line + "\n" for line in lines), "the trace")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
