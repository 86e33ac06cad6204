"""Narrate a query's trace: GJK iteration by iteration, then EPA's expansions.

The trace is data recorded by the engine (`gjkcli.engine.results.TraceStep`); this module only reads it.
It writes for two readers. Someone learning GJK should be able to follow the search from the text
alone: which direction was searched, which vertex each shape gave, where the new point of the
Minkowski difference landed, which Voronoi region of the simplex holds the origin's nearest
point, which points were dropped, and how the distance bounds closed in. Someone chasing a wrong
answer should find the step where it went wrong: every step shows its numbers, and a step that
breaks an invariant of the algorithm (|v| grew, the bounds crossed, weights outside [0, 1], a
support point below EPA's face) is flagged with a warning.

Vocabulary (van den Bergen 2003, chapter 4; Ericson 2005, section 9.5):
- A - B = {a - b : a in A, b in B}, the Minkowski difference. The shapes intersect exactly when
  it contains the origin, and their distance is the distance from the origin to it.
- support: the point of a shape furthest along a direction. A's support along d and B's along
  -d give w = a - b, the point of A - B furthest along d.
- v: the point of the current simplex nearest the origin; |v| bounds the distance from above, and
  a support plane that leaves the origin outside bounds it from below.

In the plane (a trace of gjkcli.engine.plane, 2-vectors) the same story has a simplex of at most
three points, a triangle that holds the origin ends GJK, and EPA grows a polygon edge by edge.

Points of A - B are named after the iteration that found them: w3 is the point found at
iteration 3. The engine records simplices as coordinates, copied and never recomputed, so a
point keeps its name by exact coordinate match.
"""
from __future__ import annotations

import math

import numpy as np
from rich.console import Group
from rich.table import Table
from rich.text import Text

from gjkcli.engine.results import EXIT_NAMES, EXIT_NO_PROGRESS, EXIT_NONE
from gjkcli.report.numbers import fmt, vec  # noqa: F401 - read from here by the other reports

# What each exit reason means, for the sentence that closes a phase.
GJK_EXITS = {
    "separating axis": "a support plane separates the shapes by more than the touching band, so they cannot "
    "touch; a yes/no query needs nothing more",
    "converged": "the upper bound |v| and the lower bound met within the tolerance: v is the point of A - B "
    "nearest the origin, and |v| is the distance",
    "repeated support point": "the new support pair is already in the simplex, so no new point can bring v "
    "closer to the origin: v is the nearest point at this precision",
    "no progress (machine precision)": "|v| did not decrease: the search reached machine precision and keeps "
    "the best v it had",
    "origin enclosed": "the simplex is a tetrahedron that contains the origin, so A - B contains it and the "
    "shapes intersect",
    "origin on the simplex": "|v| is zero at the working precision: the origin lies on the simplex, so the "
    "shapes touch or overlap",
    "iteration cap": "the iteration cap was reached before the bounds met; the verdict is not certified",
}
EPA_EXITS = {
    "converged": "the nearest face of the polytope and the support point along its normal met within the "
    "tolerance: that face's distance is the penetration depth",
    "flat Minkowski difference": "A - B has no interior (the shapes are flat and lie in one plane), so the "
    "depth is 0",
    "iteration cap": "the iteration cap was reached; the depth is only known to lie between the bounds",
    "polytope capacity": "the polytope ran out of storage; the depth is only known to lie between the bounds",
    "degenerate face": "a new face had no normal at the working precision; the depth is only known to lie "
    "between the bounds",
}

# The 2D words where they differ (a trace whose vectors have two coordinates).
GJK_EXITS_2D = {**GJK_EXITS, "origin enclosed": "the simplex is a triangle that contains the origin, so A - B "
                "contains it and the parts overlap"}
EPA_EXITS_2D = {**EPA_EXITS, "converged": "the polygon's edge nearest the origin and the support point along "
                "its normal met within the tolerance: that edge's distance is the penetration depth",
                "degenerate face": "every edge of the polygon had zero length; the depth is not known"}

SIMPLEX_KIND = {1: "point", 2: "segment", 3: "triangle", 4: "tetrahedron"}
# Why -v is the next search direction, by the feature v lies on.
NEXT_DIRECTION = {
    "vertex": "straight from that vertex at the origin",
    "edge": "square to the edge, towards the origin",
    "face": "the triangle's normal on the origin's side",
}
NO_PROGRESS = EXIT_NAMES[EXIT_NO_PROGRESS]


def exit_name(exit) -> str | None:
    """Exit reason as a name, whether the step carries the name or the engine's code."""
    if exit is None or exit == "" or exit == EXIT_NONE:
        return None
    if isinstance(exit, (int, np.integer)):
        return EXIT_NAMES.get(int(exit), f"exit {int(exit)}")
    return str(exit)


def _points(a, dim: int = 3) -> np.ndarray:
    a = np.asarray(a if a is not None else (), dtype=float)
    return a.reshape(-1, dim) if a.size else np.zeros((0, dim))


def _dim(steps) -> int:
    """2 for a trace in the plane (2-vector directions), else 3."""
    return 2 if steps and np.asarray(steps[0].direction).size == 2 else 3


def _unit(d) -> np.ndarray:
    d = np.asarray(d, dtype=float)
    n = float(np.linalg.norm(d))
    return d / n if n > 0 else d


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _join(names) -> str:
    names = list(names)
    return "{" + ", ".join(names) + "}" if names else "{}"


class _Labels:
    """Names for the points of A - B, kept from step to step by exact coordinates."""

    def __init__(self):
        self.names: list[str] = []
        self.points: list[np.ndarray] = []
        self.unknown = 0

    def find(self, p) -> str | None:
        p = np.asarray(p, dtype=float)
        for name, q in zip(reversed(self.names), reversed(self.points)):
            if np.array_equal(p, q):
                return name
        return None

    def name(self, p, fresh: str | None = None) -> str:
        if fresh is None:
            found = self.find(p)
            if found is not None:
                return found
            # a point no traced step introduced (a starting simplex)
            self.unknown += 1
            fresh = f"s{self.unknown}"
        self.names.append(fresh)
        self.points.append(np.asarray(p, dtype=float).copy())
        return fresh


class _Supports:
    """How each shape's support point was found: hill climbing, a scan, or a smooth primitive.

    The engine scans hulls smaller than its `brute_force_below` threshold instead of climbing,
    and reports 0 steps then; knowing the hull sizes lets the text say which happened.
    """

    def __init__(self, hull_vertices=None, scan_below=None, vertex: str = "hull vertex"):
        self.vertex = vertex
        self.sizes = tuple(hull_vertices) if hull_vertices is not None else (None, None)
        self.scan_below = scan_below
        self.told = [False, False]  # the scan is explained once per shape, then named

    def scanned(self, which: int) -> bool:
        n = self.sizes[which]
        return n is not None and self.scan_below is not None and n < self.scan_below

    def cell(self, which: int, index, steps) -> Text:
        if index is None or int(index) < 0:
            return Text("smooth")
        if self.scanned(which):
            return Text(f"{int(index)} scan")
        return Text(f"{int(index)} ({int(steps)})")

    def phrase(self, which: int, index, steps, point, along: str) -> str:
        shape = "AB"[which]
        where = vec(point)
        if index is None or int(index) < 0:
            return f"{shape}'s support along {along} is {where} (a smooth surface, no vertex)"
        head = f"{shape}'s support along {along} is {self.vertex} {int(index)} at {where}"
        if self.scanned(which):
            if self.told[which]:
                return f"{head} (by a scan)"
            self.told[which] = True
            return f"{head}, found by scanning all {self.sizes[which]} hull vertices (too few to climb)"
        steps = int(steps)
        if steps <= 0:
            return f"{head}; the climb's starting vertex was already the furthest"
        return f"{head}, found in {steps} hill-climbing step{'' if steps == 1 else 's'}"


def _feature_phrase(feature, after: list[str]) -> str:
    """Where the origin's nearest point on the reduced simplex lies, in Voronoi terms."""
    if feature == "inside":
        return f"the origin lies inside the {SIMPLEX_KIND.get(len(after), 'simplex')} " + "-".join(after)
    if feature == "vertex" or len(after) == 1:
        return f"the origin is nearest the vertex {after[0]} (it lies in that vertex's Voronoi region)"
    if feature == "edge" or len(after) == 2:
        return f"the origin is nearest a point inside the edge {after[0]}-{after[1]} (the edge's Voronoi region)"
    if feature == "face" or len(after) == 3:
        return "the origin is nearest a point inside the triangle " + "-".join(after) + " (above or below its face)"
    return "the origin's nearest point is on " + _join(after)


def _gjk(steps, supports: _Supports, units: str):
    """Table rows, the stop caption and one paragraph per GJK step."""
    dim = _dim(steps)
    flat_word = "line" if dim == 2 else "plane"  # what separates in the plane, and in space
    labels = _Labels()
    rows, paragraphs, caption = [], [], None
    previous_upper = None
    for k, step in enumerate(steps):
        it = int(step.iteration)
        dhat = _unit(step.direction)
        w = np.asarray(step.w, dtype=float)
        wd = float(w @ dhat)
        before = [labels.name(p) for p in _points(step.simplex_before, dim)]
        after_points = _points(step.simplex_after, dim)
        in_before = any(np.array_equal(w, p) for p in _points(step.simplex_before, dim))
        w_name = labels.find(w) if in_before else labels.name(w, fresh=f"w{it}")
        candidates = before + [w_name]
        # Names in the engine's order of simplex_after (the order of the weights), by coordinates;
        # the kept mask only tells what was dropped.
        after = [labels.name(p) for p in after_points]
        kept = tuple(bool(x) for x in (step.kept or ()))
        if len(kept) == len(candidates):
            dropped = [n for n, x in zip(candidates, kept) if not x and n not in after]
        else:
            dropped = [n for n in candidates if n not in after]
        feature = step.feature
        exit = exit_name(step.exit)
        vnorm = float(step.vnorm)
        lam = np.asarray(step.lambdas if step.lambdas is not None else (), dtype=float).ravel()

        warnings = []
        if (previous_upper is not None and feature is not None and exit != NO_PROGRESS
                and vnorm > previous_upper * (1 + 1e-12)):
            warnings.append(f"|v| grew from {fmt(previous_upper, 9)} to {fmt(vnorm, 9)}: GJK must never move "
                            "away from the origin, so this step is suspect")
        slack = 1e-9 * max(abs(float(step.upper)) if math.isfinite(step.upper) else 0.0, float(np.linalg.norm(w)))
        if math.isfinite(step.lower) and math.isfinite(step.upper) and step.lower > step.upper + slack:
            warnings.append(f"the lower bound {fmt(step.lower, 9)} exceeds the upper bound {fmt(step.upper, 9)}")
        if lam.size and (np.any(lam < -1e-9) or abs(lam.sum() - 1.0) > 1e-6):
            warnings.append(f"the weights {vec(lam)} are not a convex combination")
        previous_upper = float(step.upper)
        if exit:
            caption = f"stopped at iteration {it}: {exit}"

        simplex = " ".join(after) + ("  -" + ",".join(dropped) if dropped and feature is not None else "")
        rows.append((
            Text(str(it)),
            supports.cell(0, step.index_a, step.steps_a),
            supports.cell(1, step.index_b, step.steps_b),
            Text(fmt(wd, 4), style="green" if step.passed else "red"),
            Text(simplex),
            Text(feature or "-"),
            Text(fmt(vnorm, 4)),
            Text(fmt(step.lower, 4) if step.lower > 0 else "-"),
        ))

        out = Text()
        out.append(f"{it}. ", style="bold")
        out.append(f"Search along d = {vec(dhat)}")
        if k == 0 and dim == 2:
            out.append(" (any first direction works: the one given by --start-direction, else from A's box "
                       "centre towards B's)")
        elif k == 0:
            out.append(" (any first direction works; this one points from A's centre towards B's)")
        out.append(". ")
        out.append(supports.phrase(0, step.index_a, step.steps_a, step.point_a, "d") + "; ")
        out.append(supports.phrase(1, step.index_b, step.steps_b, step.point_b, "-d") + ". ")
        out.append(f"Their difference {w_name} = a - b = {vec(w)} is the point of A - B furthest along d")
        if in_before:
            out.append(f"; it is {w_name} again, already in the simplex", style="yellow")
        out.append(". ")
        if step.passed:
            out.append(f"w.d = {fmt(wd)} > 0: ", style="green")
            out.append(f"{w_name} lies beyond the origin along d, so this direction does not rule out contact. ")
        elif wd < 0:
            out.append(f"w.d = {fmt(wd)} < 0: ", style="red")
            out.append(f"no point of A - B gets past the origin along d, so the {flat_word} through {w_name} normal "
                       f"to d leaves the origin outside: the shapes are at least {fmt(-wd)}{units} apart. ")
        else:
            out.append("w.d = 0: ", style="red")
            out.append("no point of A - B gets past the origin along d and the origin lies on the support "
                       f"{flat_word}: the shapes can at most touch. ")

        if feature is None:
            # The loop stopped on this support point without adding it: the simplex is unchanged.
            out.append(f"GJK stops without adding {w_name}; the simplex stays {_join(after)} with "
                       f"|v| = {fmt(step.upper)}{units}. ")
        else:
            if before:
                kind = SIMPLEX_KIND.get(len(before) + 1, "simplex")
                out.append(f"Adding {w_name} to {_join(before)} makes a {kind}; ")
            else:
                out.append(f"The simplex starts as the single point {w_name}; ")
            if exit == NO_PROGRESS:
                out.append(f"its nearest point has |v| = {fmt(vnorm, 9)}, no closer than before, so GJK keeps "
                           f"the previous simplex {_join(after)}. ")
            else:
                out.append(_feature_phrase(feature, after))
                if dropped:
                    out.append(f", so {', '.join(dropped)} {'is' if len(dropped) == 1 else 'are'} dropped")
                out.append(". ")
                if feature != "inside":
                    weights = ""
                    if lam.size == len(after) and lam.size > 1:
                        weights = " = " + " + ".join(f"{fmt(x, 4)} {n}" for x, n in zip(lam, after))
                    out.append(f"The nearest point v{weights} has |v| = {fmt(vnorm)}, ")
                    if step.lower > 0:
                        out.append(f"so the distance lies in [{fmt(step.lower)}, {fmt(step.upper)}]{units}")
                    else:
                        out.append(f"so the distance is at most {fmt(step.upper)}{units} (no {flat_word} has "
                                   "separated the shapes yet)")
                    why = NEXT_DIRECTION.get(feature, "towards the origin")
                    out.append("." if exit else f"; next, search along -v, {why}.")
        _close(out, warnings, exit, GJK_EXITS_2D if dim == 2 else GJK_EXITS)
        paragraphs.append(out)
    return rows, caption, paragraphs


def _epa(steps, supports: _Supports, units: str):
    """Table rows, the stop caption and one paragraph per EPA step."""
    flat = _dim(steps) == 2
    face_word, body = ("edge", "polygon") if flat else ("face", "polytope")
    rows, paragraphs, caption = [], [], None
    previous = None
    for step in steps:
        it = int(step.iteration)
        nhat = _unit(step.direction)
        face = float(step.vnorm)
        support = float(step.support)
        gap = support - face
        exit = exit_name(step.exit)
        warnings = []
        if gap < -1e-9 * max(abs(face), float(np.linalg.norm(step.w))):
            warnings.append(f"the support value {fmt(support, 9)} lies below the {face_word} distance "
                            f"{fmt(face, 9)}: a support point can never lie inside the {body}, so the support "
                            f"map or the {body} is wrong here")
        if previous is not None:
            if step.lower < previous.lower * (1 - 1e-12):
                warnings.append("the depth's lower bound decreased")
            if step.upper > previous.upper * (1 + 1e-12):
                warnings.append("the depth's upper bound increased")
        previous = step
        if exit:
            caption = f"stopped at expansion {it}: {exit}"

        rows.append((
            Text(str(it)),
            Text(fmt(face, 4)),
            supports.cell(0, step.index_a, step.steps_a),
            supports.cell(1, step.index_b, step.steps_b),
            Text(fmt(support, 4)),
            Text(fmt(gap, 4)),
            Text(str(int(step.faces))),
            Text(fmt(step.upper, 4)),
        ))

        out = Text()
        out.append(f"{it}. ", style="bold")
        out.append(f"The {body}'s {face_word} nearest the origin lies at {fmt(face)}{units}, normal n = {vec(nhat)}. ")
        out.append(supports.phrase(0, step.index_a, step.steps_a, step.point_a, "n") + "; ")
        out.append(supports.phrase(1, step.index_b, step.steps_b, step.point_b, "-n") + ". ")
        out.append(f"The new point w = {vec(step.w)} reaches {fmt(support)} along n, {fmt(gap)}{units} beyond "
                   f"that {face_word}")
        if exit:
            out.append(". ")
        elif flat:
            out.append(f"; w goes in between the edge's two ends, so the polygon grows to {int(step.faces)} "
                       "edges (still convex: w is the furthest point of A - B along the edge's normal). ")
        else:
            out.append(f"; the faces that w can see are replaced by faces joining w to their rim, "
                       f"so the polytope grows around w to {int(step.faces)} faces. ")
        out.append(f"The depth lies in [{fmt(step.lower)}, {fmt(step.upper)}]{units}.")
        _close(out, warnings, exit, EPA_EXITS_2D if flat else EPA_EXITS)
        paragraphs.append(out)
    return rows, caption, paragraphs


def _close(out: Text, warnings, exit, meanings) -> None:
    for warning in warnings:
        out.append("\n   warning: " + warning, style="bold red")
    if exit:
        out.append("\n   Stop: ", style="bold")
        out.append(f"{exit}: {meanings.get(exit, 'the loop ended')}.")


def _table(title: str, caption: str | None, columns, rows) -> Table:
    table = Table(title=title, title_justify="left", caption=caption, caption_justify="left",
                  show_edge=False, pad_edge=False)
    for name, justify in columns:
        table.add_column(name, justify=justify, overflow="fold")
    for row in rows:
        table.add_row(*row)
    return table


GJK_COLUMNS = [("it", "right"), ("A vtx", "right"), ("B vtx", "right"), ("w.d", "right"), ("simplex", "left"),
               ("nearest", "left"), ("|v|", "right"), ("lower", "right")]
EPA_COLUMNS = [("it", "right"), ("face", "right"), ("A vtx", "right"), ("B vtx", "right"), ("support", "right"),
               ("gap", "right"), ("faces", "right"), ("upper", "right")]
EPA_COLUMNS_2D = [(("edge", j) if n == "face" else ("edges", j) if n == "faces" else (n, j)) for n, j in EPA_COLUMNS]

INTRO = (
    "How to read this. GJK works on the Minkowski difference A - B, every a - b with a in A and b in B. "
    "The parts intersect exactly when A - B contains the origin; otherwise their distance is the "
    "distance from the origin to A - B. GJK never builds A - B. Each iteration asks A for its vertex "
    "furthest along a search direction d and B for its vertex furthest along -d, and their difference w "
    "is the point of A - B furthest along d. GJK keeps a simplex of up to four such points, cuts it down "
    "to the vertex, edge or triangle that holds its point v nearest the origin, and searches next along "
    "-v. |v| bounds the distance from above; a support plane with the origin outside bounds it from "
    "below. In the table, 'A vtx' is the hull vertex and, in brackets, the hill-climbing steps that found "
    "it ('scan' on hulls too small to climb); 'w.d' is how far w got along d (green: past the origin); "
    "'simplex' is what was kept, after '-' what was dropped; 'nearest' is the Voronoi feature holding v."
)
EPA_INTRO = (
    "GJK found the origin in or on its simplex, so the shapes touch or overlap; EPA (the expanding "
    "polytope algorithm) measures how deep. It grows the simplex into a polytope inside A - B: it "
    "takes the face nearest the origin, "
    "asks for the support point along that face's normal, and rebuilds the faces that point can see. "
    "When the support point no longer gets beyond the nearest face, that face's distance is the "
    "penetration depth and its normal the direction that separates the shapes. In the table, 'face' is "
    "the nearest face's distance (a lower bound of the depth), 'support' how far the support point "
    "reaches along its normal, 'gap' the difference, and 'upper' the least support value so far (an "
    "upper bound of the depth)."
)


INTRO_2D = (
    "How to read this. In the plane as in space, GJK works on the Minkowski difference A - B, every a - b "
    "with a in A and b in B: the parts overlap exactly when it contains the origin, and their distance is "
    "the distance from the origin to it. Each iteration asks A for its vertex furthest along a search "
    "direction d (climbing A's ring of vertices from the last one) and B for its vertex furthest along -d; "
    "their difference w is the point of A - B furthest along d. GJK keeps a simplex of up to three such "
    "points (a point, a segment, a triangle), cuts it down to the vertex or edge that holds its point v "
    "nearest the origin, and searches next along -v; a triangle holding the origin ends the search. "
    "In the table, 'A vtx' is the polygon's vertex (its row in the input) and, in brackets, the climbing "
    "steps; 'w.d' is how far w got along d (green: past the origin); 'simplex' is what was kept, after '-' "
    "what was dropped; 'nearest' is the Voronoi region holding v."
)
EPA_INTRO_2D = (
    "GJK found the origin in or on its triangle, so the parts touch or overlap; EPA measures how deep. It "
    "grows the triangle into a convex polygon inside A - B: it takes the edge nearest the origin, asks "
    "for the support point along that edge's outward normal and puts it in between the edge's ends. When "
    "the support point no longer gets beyond the nearest edge, that edge's distance is the penetration "
    "depth and its normal the direction that separates the parts. 'edge' is the nearest edge's distance "
    "(a lower bound of the depth), 'upper' the least support value so far (an upper bound)."
)


def render_trace(trace, a_name: str = "A", b_name: str = "B", units: str | None = None, *, intro: bool = True,
                 hull_vertices=None, scan_below: int | None = None):
    """The trace of one query as rich renderables: per phase a table and a paragraph per step.

    trace : sequence of `gjkcli.engine.results.TraceStep` (GJK steps, then EPA steps), or None
    a_name, b_name : the names of the two objects, for the header
    units : appended to lengths, when the files state them
    intro : explain the algorithm and the table columns before each phase
    hull_vertices : (n_a, n_b) hull vertex counts, and scan_below the engine's threshold under which
        a hull's support is a linear scan; with both, the text tells scans from hill climbing
    """
    suffix = f" {units}" if units else ""
    steps = list(trace or ())
    gjk = [s for s in steps if s.phase == "gjk"]
    epa = [s for s in steps if s.phase == "epa"]
    flat = _dim(steps) == 2
    # the plane always climbs its ring (no scan below a size): the counts do not apply there
    supports = (_Supports(None, None, "vertex") if flat else _Supports(hull_vertices, scan_below))
    header = Text()
    header.append("Trace", style="bold underline")
    header.append("  A = ")
    header.append(a_name)
    header.append(", B = ")
    header.append(b_name)
    parts = [header]
    if not steps:
        parts.append(Text("No steps were recorded (the query ran without a trace, or the pair was answered "
                          "on its triangles or edges, where there is no GJK to narrate)."))
        return Group(*parts)
    if intro:
        parts.append(Text(INTRO_2D if flat else INTRO, style="dim"))
    rows, caption, paragraphs = _gjk(gjk, supports, suffix)
    parts += [Text(""), _table(f"GJK: {_plural(len(gjk), 'iteration')}", caption, GJK_COLUMNS, rows), Text("")]
    parts += _spaced(paragraphs)
    if epa:
        rows, caption, paragraphs = _epa(epa, supports, suffix)
        parts.append(Text(""))
        if intro:
            parts.append(Text(EPA_INTRO_2D if flat else EPA_INTRO, style="dim"))
        parts += [Text(""), _table(f"EPA: {_plural(len(epa), 'expansion')}", caption,
                                   EPA_COLUMNS_2D if flat else EPA_COLUMNS, rows), Text("")]
        parts += _spaced(paragraphs)
    return Group(*parts)


def _spaced(paragraphs):
    """The step paragraphs with a blank line between them."""
    out = []
    for k, p in enumerate(paragraphs):
        if k:
            out.append(Text(""))
        out.append(p)
    return out


def step_texts(trace, units: str | None = None, *, hull_vertices=None, scan_below: int | None = None) -> list[str]:
    """The narration of each step, in the trace's order (GJK steps, then EPA's), as plain text:
    the paragraphs `render_trace` prints, one per step, for pictures that show a step at a time."""
    suffix = f" {units}" if units else ""
    steps = list(trace or ())
    supports = _Supports(None, None, "vertex") if _dim(steps) == 2 else _Supports(hull_vertices, scan_below)
    _, _, gjk = _gjk([s for s in steps if s.phase == "gjk"], supports, suffix)
    epa = [s for s in steps if s.phase == "epa"]
    out = [p.plain for p in gjk]
    if epa:
        out += [p.plain for p in _epa(epa, supports, suffix)[2]]
    return out
