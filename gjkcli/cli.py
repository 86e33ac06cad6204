"""The `gjk` command: parse, call the library, hand the results to a renderer, map errors to exit codes.

Exit codes: 0 no violation; 1 a violation (collision, closer than --clearance, undecided);
2 a usage or input error. An input error is one line on stderr naming the file and the cause;
--debug shows the traceback instead.

Only click and the standard library are imported here at module level: numpy, trimesh, scipy, rich
and the compiled engine are imported inside the command, so `gjk --help` and `import gjkcli.cli`
stay fast.
"""
from __future__ import annotations

import contextlib
import os
import sys
import time

import click

from gjkcli.errors import GjkError, InputError, ShapeError

MODES = ("auto", "hull", "exact")
FORMATS = ("table", "json")
CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}

EXIT_OK, EXIT_VIOLATION, EXIT_ERROR = 0, 1, 2

# Spellings of one unit that files use (trimesh passes them through as written).
UNIT_ALIASES = {
    "millimeter": "mm", "millimeters": "mm", "millimetre": "mm", "millimetres": "mm",
    "centimeter": "cm", "centimeters": "cm", "centimetre": "cm", "centimetres": "cm",
    "meter": "m", "meters": "m", "metre": "m", "metres": "m",
    "inch": "in", "inches": "in", "foot": "ft", "feet": "ft",
    "micron": "um", "microns": "um", "micrometer": "um", "micrometers": "um",
}


def _version() -> str:
    from gjkcli import __version__

    return __version__


def _print_version(ctx: click.Context, _param, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    click.echo(f"gjk {_version()}")
    ctx.exit(EXIT_OK)


version_option = click.option(
    "--version", is_flag=True, expose_value=False, is_eager=True, callback=_print_version,
    help="Show the version and exit.",
)


def _length(_ctx, param, value):
    """A length option: a finite number >= 0, or None when not given."""
    if value is None:
        return None
    if not (value >= 0.0 and value != float("inf")):
        raise click.BadParameter(f"must be a finite number >= 0, got {value}", param=param)
    return value


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


@click.group(context_settings=CONTEXT)
@version_option
def main() -> None:
    """gjk: collision, touching and clearance checks between 3D parts.

    GJK and EPA on convex hulls, with a certificate behind every verdict.
    Run `gjk check -h` for the pair check.
    """


@main.command(context_settings=CONTEXT)
@click.argument("a", metavar="A", type=click.Path(path_type=str))
@click.argument("b", metavar="B", type=click.Path(path_type=str))
@click.option("--tolerance", type=float, callback=_length, metavar="FLOAT",
              help="Touching band in model units: parts whose distance or depth is within it touch. "
                   "Default: 1e-7 of the pair's size.")
@click.option("--clearance", type=float, callback=_length, metavar="FLOAT",
              help="Required gap in model units: a pair closer than this fails (status clearance; "
                   "touching fails too).")
@click.option("--mode", type=click.Choice(MODES), default="auto", show_default=True,
              help="hull: answer for the convex hulls (conservative for parts that are not convex); "
                   "exact: answer for the parts' triangles; auto: hulls first, then the triangles "
                   "where the hulls are not clear and a part is not convex.")
@click.option("--split-bodies", is_flag=True,
              help="Each connected body of a file is its own object (named FILE#k); every body of A "
                   "is checked against every body of B (against each other when A and B are one file).")
@click.option("--format", "output_format", type=click.Choice(FORMATS), default="table", show_default=True,
              help="table: a report for people; json: a stable document for scripts.")
@click.option("--trace", is_flag=True, help="Narrate GJK and EPA step by step (in JSON: a 'trace' list per pair).")
@click.option("--trace-json", type=click.Path(dir_okay=False, path_type=str), metavar="FILE",
              help="Write the trace steps to FILE as JSON lines, one object per step ('-' for stdout).")
@click.option("-q", "--quiet", is_flag=True, help="Print nothing; the exit code is the answer.")
@click.option("--debug", is_flag=True, help="Show tracebacks instead of one-line errors.")
@version_option
@click.pass_context
def check(ctx, a, b, tolerance, clearance, mode, split_bodies, output_format, trace, trace_json, quiet, debug):
    """Check two parts A and B: clear, touching, collision, or closer than --clearance.

    Each file is one object; every format trimesh reads (STL, OBJ, PLY, OFF, GLB/glTF, 3MF, ...).
    Exit code 0: no violation; 1: collision, clearance violated or undecided; 2: usage or input error.
    """
    run = _Run(mode=mode, tolerance=tolerance, clearance=clearance,
               trace=trace or trace_json is not None, split_bodies=split_bodies)

    def json_errors(e: GjkError) -> None:  # a JSON reader still gets a document
        if not quiet and output_format == "json":
            _emit_json(run.report(errors=(_problem(e),)), trace=False)

    with _one_line_errors(ctx, debug, lambda: run.stage, on_input_error=json_errors):
        report = run.check(a, b)
        if trace_json is not None:
            run.stage = f"writing {trace_json}"
            _write_trace_json(trace_json, report)
        if not quiet:
            run.stage = "writing the report"
            _emit(report, output_format, trace)
    ctx.exit(report.exit_code)


@contextlib.contextmanager
def _one_line_errors(ctx: click.Context, debug: bool, stage, on_input_error=None):
    """Any error as one line on stderr and exit code 2; with --debug, the error and its traceback.

    stage() says what the command was doing, for errors gjk did not foresee.
    """
    try:
        yield
    except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException):
        raise
    except GjkError as e:
        if debug:
            raise
        click.echo(f"gjk: error: {_one_line(e)}", err=True)
        if on_input_error is not None:
            on_input_error(e)
        ctx.exit(EXIT_ERROR)
    except Exception as e:  # the last line of defence: one line, not a traceback
        if debug:
            raise
        click.echo(f"gjk: internal error while {stage()}: {type(e).__name__}: {_one_line(e)} "
                   "(run with --debug for the traceback)", err=True)
        ctx.exit(EXIT_ERROR)


class _Run:
    """One `gjk check`: loads, hulls and queries, remembering how far it got for error reports."""

    def __init__(self, mode: str, tolerance: float | None, clearance: float | None, trace: bool,
                 split_bodies: bool = False):
        self.requested = mode
        self.split_bodies = split_bodies
        self.tolerance = tolerance
        self.clearance = clearance
        self.trace = trace
        self.stage = "starting"
        self.started = time.perf_counter()
        self.objects: list = []
        self.pairs: list = []
        self.meshes: dict = {}
        self.notes: list = []

    def report(self, errors=()):
        from gjkcli.pipeline.findings import CheckReport

        return CheckReport(objects=tuple(self.objects), pairs=tuple(self.pairs), errors=tuple(errors),
                           elapsed=time.perf_counter() - self.started, version=_version(),
                           notes=tuple(self.notes))

    def load(self, path: str) -> list:
        """File to [(ObjectInfo, Shape, Part)]: one object, or one per body with --split-bodies."""
        self.stage = f"loading {path}"
        from gjkcli.mesh.load import load_objects, load_part

        if not self.split_bodies:
            return [self.describe(load_part(path), path)]
        parts = load_objects(path, split_bodies=True)
        if len(parts) == 1:  # one body: the file's own name
            return [self.describe(load_part(path), path)]
        return [self.describe(part, path) for part in parts]

    def describe(self, part, path: str):
        """A part's ObjectInfo and hull. Geometry the engine refuses is an input error of its file."""
        from gjkcli.mesh.convexity import convexity
        from gjkcli.pipeline.findings import ObjectInfo
        from gjkcli.engine.shapes import Shape

        self.stage = f"building the hull of {path}"
        try:
            shape = Shape.hull(part.vertices)
        except ShapeError as e:
            raise InputError(part.source, f"unusable geometry: {_one_line(e)}") from e
        self.stage = f"testing whether {path} is convex"
        judged = convexity(part.vertices, part.faces, watertight=part.watertight, bodies=part.bodies)
        bounds = part.bounds
        name = part.name or path
        taken = {o.name for o in self.objects}
        if name in taken:  # two files with the same name: keep the names of a pair apart
            k = 2
            while f"{name}#{k}" in taken:
                k += 1
            name = f"{name}#{k}"
        info = ObjectInfo(
            name=name, file=str(part.source), vertices=int(len(part.vertices)), faces=int(len(part.faces)),
            hull_vertices=int(shape.n_vertices), convex=bool(judged.convex), watertight=bool(part.watertight),
            bounds=(tuple(float(x) for x in bounds[0]), tuple(float(x) for x in bounds[1])),
            units=part.units or None, bodies=int(part.bodies),
            dimension=int(shape.dimension), convexity=judged.reason,
        )
        self.objects.append(info)
        return info, shape, part

    def check(self, path_a: str, path_b: str):
        import itertools

        objects_a = self.load(path_a)
        objects_b = objects_a if self.split_bodies and path_a == path_b else self.load(path_b)
        units = {o.units: o.name for o, _, _ in objects_a + objects_b if o.units}
        spelled = {UNIT_ALIASES.get(u.lower(), u.lower()) for u in units}
        if len(spelled) > 1:
            stated = " and ".join(f"{name} states {u}" for u, name in units.items())
            self.notes.append(f"warning: {stated}; gjk does not convert units, so the numbers mix them")
        pairs = (itertools.combinations(objects_a, 2) if objects_b is objects_a
                 else itertools.product(objects_a, objects_b))
        for one, other in pairs:
            self.pairs.append(self.pair(one, other))
        return self.report()

    def pair(self, one, other):
        """The hull query, then the triangles where the mode asks for them."""
        from gjkcli.engine.query import query
        from gjkcli.engine.results import Status

        (info_a, shape_a, part_a), (info_b, shape_b, part_b) = one, other
        self.stage = f"querying {info_a.name} against {info_b.name}"
        result = query(shape_a, shape_b, tolerance=self.tolerance, trace=self.trace)
        exact = self.requested == "exact" or (
            self.requested == "auto" and result.status is not Status.CLEAR
            and not (info_a.convex and info_b.convex))
        if not exact:
            return self.judge(info_a, info_b, result, "hull")
        import dataclasses

        from gjkcli.engine.exact import exact_query

        self.stage = f"testing the triangles of {info_a.name} against {info_b.name}"
        refined = exact_query(self.mesh(part_a), self.mesh(part_b), tolerance=self.tolerance)
        # the trace stays the hull query's: GJK narrated on the hulls that led here
        refined = dataclasses.replace(refined, trace=result.trace)
        return self.judge(info_a, info_b, refined, "exact", note=refined.note or None)

    def mesh(self, part):
        """The part's triangle hierarchy, built once per part."""
        from gjkcli.engine.exact import Mesh

        key = id(part)
        if key not in self.meshes:
            self.meshes[key] = Mesh.from_part(part)
        return self.meshes[key]

    def judge(self, a, b, result, mode: str, note: str | None = None):
        """The command's verdict around the engine's answer: clearance, violation, conservativeness."""
        import dataclasses

        from gjkcli.pipeline.findings import PairReport, is_violation
        from gjkcli.engine.results import Status

        status = Status(result.status)
        if status is Status.CLEAR and self.clearance is not None and result.distance < self.clearance:
            result = dataclasses.replace(result, status=Status.CLEARANCE)
            status = Status.CLEARANCE
        conservative = mode == "hull" and not (a.convex and b.convex) and status is not Status.CLEAR
        return PairReport(a=a.name, b=b.name, result=result, mode=mode, requested=self.requested,
                          clearance=self.clearance, conservative=conservative,
                          violation=is_violation(status, self.clearance), note=note)


SCAN_FORMATS = ("table", "json", "junit", "github")


@main.command(context_settings=CONTEXT)
@click.argument("files", metavar="FILE...", nargs=-1, type=click.Path(path_type=str))
@click.option("--manifest", type=click.Path(dir_okay=False, path_type=str), metavar="FILE",
              help="A TOML (or JSON) manifest: includes, primitives, groups, checks, allowed pairs, "
                   "an SRDF, tolerance, clearance, fail_on.")
@click.option("--tolerance", type=float, callback=_length, metavar="FLOAT",
              help="Touching band in model units. Default: the manifest's, else 1e-7 of each pair's size.")
@click.option("--clearance", type=float, callback=_length, metavar="FLOAT",
              help="Required gap in model units: a pair closer than this fails (status clearance).")
@click.option("--mode", type=click.Choice(MODES), default="auto", show_default=True,
              help="hull: the convex hulls; exact: the triangles wherever the hulls are not clear; "
                   "auto: the triangles only where a part is not convex.")
@click.option("--split-bodies", is_flag=True, help="Each connected body of an object is its own object.")
@click.option("--fail-on", multiple=True, type=click.Choice(("collision", "touching", "clearance")),
              help="Findings that fail the scan (repeatable). Default: the manifest's, else collision "
                   "and clearance; undecided pairs always fail.")
@click.option("--format", "output_format", type=click.Choice(SCAN_FORMATS), default="table", show_default=True,
              help="table for people; json (the schema of gjk check); junit (violations as failures); "
                   "github (::error workflow annotations).")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=str), metavar="FILE",
              help="Write the report to FILE instead of stdout.")
@click.option("--all-pairs", is_flag=True, help="List every pair the narrow phase checked, with its distance.")
@click.option("--baseline", type=click.Path(dir_okay=False, path_type=str), metavar="FILE",
              help="Fail only on findings not recorded in FILE; report the recorded ones that are gone.")
@click.option("--write-baseline", type=click.Path(dir_okay=False, path_type=str), metavar="FILE",
              help="Record today's findings in FILE, keyed by (file, object, object).")
@click.option("-j", "--jobs", type=click.IntRange(min=1), metavar="N",
              help="Worker processes for loading and hull building. Default: all cores.")
@click.option("-q", "--quiet", is_flag=True, help="Print nothing; the exit code is the answer.")
@click.option("--debug", is_flag=True, help="Show tracebacks instead of one-line errors.")
@version_option
@click.pass_context
def scan(ctx, files, manifest, tolerance, clearance, mode, split_bodies, fail_on, output_format, output,
         all_pairs, baseline, write_baseline, jobs, quiet, debug):
    """Check every pair of objects across scene files (and a manifest); fail the build on a violation.

    Every node holding geometry is an object, named by its node name (prefixed by the file name
    when several files are given), moved by its full world transform. Directories expand to the
    mesh files in them. Exit code 0: no violation; 1: a violation neither allowed nor in the
    baseline; 2: an input failed to load (after checking all the rest) or a usage error.
    """
    if not files and manifest is None:
        raise click.UsageError("give scene files, a directory or --manifest FILE")
    stage = ["scanning"]
    with _one_line_errors(ctx, debug, lambda: stage[0]):
        from gjkcli.pipeline import run as scanning
        from gjkcli.report.scan import progress_callback, wants_progress

        refine = None if mode == "hull" else scanning.exact_refiner
        progress = contextlib.nullcontext(None)
        if wants_progress(quiet=quiet, output_format=output_format, stream=sys.stderr):
            from rich.console import Console

            progress = progress_callback(Console(stderr=True))
        with progress as tell:
            report = scanning.run(files, manifest=manifest, mode=mode, tolerance=tolerance,
                                  clearance=clearance, fail_on=fail_on or None, all_pairs=all_pairs,
                                  baseline=baseline,
                                  write_baseline=write_baseline, split_bodies=split_bodies, jobs=jobs,
                                  refine=refine, progress=tell)
        stage[0] = "writing the report"
        if not quiet or output is not None:
            _emit_scan(report, output_format, output)
    for problem in report.errors:  # also in the report; stderr keeps them visible in CI logs
        if quiet or output_format != "table":
            click.echo(f"gjk: error: {problem.file}: {problem.message}", err=True)
    ctx.exit(report.exit_code)


def _emit_scan(report, output_format: str, output: str | None) -> None:
    """Render the scan report in its format, to --output or stdout."""
    if output_format == "table":
        from rich.console import Console

        from gjkcli.report.scan import render_scan

        if output is None:
            Console().print(render_scan(report))
            return
        console = Console(record=True, width=120, file=open(os.devnull, "w"))
        console.print(render_scan(report))
        text = console.export_text()
    elif output_format == "json":
        from gjkcli.report.ci import scan_document
        from gjkcli.report.jsonout import dumps

        text = dumps(scan_document(report)) + "\n"
    elif output_format == "junit":
        from gjkcli.report.ci import junit_xml

        text = junit_xml(report)
    else:
        from gjkcli.report.ci import github_annotations

        text = github_annotations(report)
    _write_text(output, text, "the report")


def _write_text(path: str | None, text: str, what: str) -> None:
    """Text to the file a user named, or to stdout for None or '-'."""
    if path is None or path == "-":
        click.echo(text, nl=False)
        return
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        raise InputError(path, f"cannot write {what}: {e.strerror or e}") from e


def _problem(e: GjkError):
    from gjkcli.pipeline.findings import InputProblem

    return InputProblem(file=getattr(e, "source", ""), message=_one_line(getattr(e, "message", e)))


def _emit(report, output_format: str, trace: bool) -> None:
    try:
        if output_format == "json":
            _emit_json(report, trace=trace)
        else:
            _emit_table(report, trace=trace)
    except BrokenPipeError:  # `gjk check ... | head`: the reader left; the exit code still counts
        _silence_stdout()


def _emit_json(report, trace: bool) -> None:
    from gjkcli.report.jsonout import check_document, dumps

    click.echo(dumps(check_document(report, trace=trace)))


def _emit_table(report, trace: bool) -> None:
    from rich.console import Console

    from gjkcli.report.table import render_check
    from gjkcli.report.trace import render_trace

    console = Console()
    if trace:
        from gjkcli.tolerances import DEFAULT

        for pair in report.pairs:
            a, b = report.object(pair.a), report.object(pair.b)
            units = (a.units if a else None) or (b.units if b else None)
            console.print(render_trace(pair.result.trace, pair.a, pair.b, units=units,
                                       hull_vertices=(a.hull_vertices, b.hull_vertices),
                                       scan_below=DEFAULT.brute_force_below))
            console.print()
    console.print(render_check(report))


def _silence_stdout() -> None:
    """Point stdout at /dev/null so that the interpreter's final flush does not fail again."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def _write_trace_json(path: str, report) -> None:
    import json

    from gjkcli.report.jsonout import trace_lines

    lines = [json.dumps(rec, allow_nan=False) for pair in report.pairs for rec in trace_lines(pair)]
    _write_text(path, "".join(line + "\n" for line in lines), "the trace")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
