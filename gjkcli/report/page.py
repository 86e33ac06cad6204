"""The page frame that the 3D page (`gjkcli.report.html`) and the 2D page
(`gjkcli.report.flathtml`) share: the HTML around the plot, the title and summary lines, the
findings table, each finding's data for the page's script, and the script that frames a clicked
pair (each page gives its own view: `page_script`).

Reads the findings model only.
"""
from __future__ import annotations

import html

import numpy as np

from gjkcli.engine.results import Status
from gjkcli.pipeline.findings import Finding, Findings
from gjkcli.report.pictures import caption, fmt, size_text, units_of
from gjkcli.report.lines import pair_notes
from gjkcli.report.trace import vec

# Witness segments are drawn for the first this many findings, normals' cones and planes for
# fewer (each costs the browser more than a triangle); any finding's witnesses are drawn when its
# row is clicked.
WITNESSES_UP_TO = 200
# The table lists at most this many findings, most severe first (JSON lists them all): a page
# of a large scan stays quick to open.
TABLE_ROWS_UP_TO = 1000

def rounded(x, digits: int = 6):
    """A float rounded to `digits` significant digits for the page's data (None for NaN/inf)."""
    if x is None:
        return None
    x = float(x)
    if not np.isfinite(x):
        return None
    return float(f"{x:.{digits}g}")


def vector(v):
    return None if v is None else [rounded(x) for x in np.asarray(v, dtype=float).ravel()]


def title(found: Findings) -> str:
    if found.command == "check" and found.objects:
        return f"gjk check: {' x '.join(o.name for o in found.objects[:2])}"
    return f"gjk {found.command}: {len(found.objects):,} objects"


def summary(found: Findings) -> str:
    counts = ", ".join([f"{n} {s}" for s, n in found.counts.items() if n and s != "undecided"]
                       + [f"{found.counts.get('undecided', 0)} undecided"])  # always (issue 40)
    return (f"{len(found.objects):,} objects, {found.checked:,} pair{'s' if found.checked != 1 else ''} checked"
            f"{': ' + counts if counts else ''}; {found.failure_count:,} failing; "
            f"exit {found.exit_code}; gjk {found.version}")


def pair_size(found: Findings, p: Finding) -> float:
    lo, hi = pair_box(found, p)
    return float(np.linalg.norm(np.asarray(hi) - np.asarray(lo))) or 1.0


def pair_box(found: Findings, p: Finding):
    """The box around both objects of a pair."""
    boxes = [found.object(n).bounds for n in (p.a, p.b) if found.object(n) is not None]
    if not boxes:
        pts = np.array([p.result.point_a, p.result.point_b], dtype=float)
        return pts.min(axis=0).tolist(), pts.max(axis=0).tolist()
    lo = np.min([b[0] for b in boxes], axis=0)
    hi = np.max([b[1] for b in boxes], axis=0)
    return lo.tolist(), hi.tolist()


def pair_data(found: Findings, k: int, p: Finding) -> dict:
    r = p.result
    lo, hi = pair_box(found, p)
    units = units_of(found, p)
    return {"a": p.a, "b": p.b, "caption": caption(p, units),
            "point_a": vector(r.point_a), "point_b": vector(r.point_b), "normal": vector(r.normal),
            "lo": vector(lo), "hi": vector(hi),
            "witness": f"witness A {point_text(r.point_a, units)}\nwitness B {point_text(r.point_b, units)}"
                       f"\nnormal {point_text(r.normal)}"}


def point_text(v, units: str = "") -> str:
    """A point (or direction) as the reader writes it: (x, y, z) mm; "none" if the query has none."""
    if v is None or not np.all(np.isfinite(np.asarray(v, dtype=float))):
        return "none"
    return vec(v) + units


def findings_table(found: Findings) -> str:
    if not found.pairs:
        return "<p>no findings: every checked pair is clear</p>" if found.checked else ""
    volumes = any(p.overlap_volume is not None or p.overlap_reason for p in found.pairs)
    listed = found.pairs[:TABLE_ROWS_UP_TO]
    units = [units_of(found, p) for p in listed]
    # each number with its unit; where no input states one, the header says so
    size_head = "depth / gap" if any(units) else "depth / gap (model units)"
    sets = any(p.clash_set is not None for p in found.pairs)
    grouped = any(p.group is not None for p in found.pairs)
    head = ["#", "status", "object A", "object B", size_head] + (["overlap volume"] if volumes else []) \
        + (["clash set"] if sets else []) + (["group"] if grouped else []) + ["mode", "note"]
    rows = []
    for k, (p, u) in enumerate(zip(listed, units)):
        status = Status(p.status)
        notes = pair_notes(p, fmt)
        volume = fmt(p.overlap_volume) + (f"{u}^3" if u and p.overlap_volume is not None else "")
        cells = [str(k + 1), status.value, p.a, p.b, size_text(p) + u] + \
            ([volume] if volumes else []) + ([p.clash_set or ""] if sets else []) + \
            ([str(p.group) if p.group is not None else ""] if grouped else []) + [p.mode, "; ".join(notes)]
        tds = "".join(f"<td>{html.escape(c)}</td>" for c in cells)
        muted = " muted" if p.allowed or (p.known and p.violation) else ""
        rows.append(f"<tr data-k='{k}' class='row {status.value}{muted}' tabindex='0'>{tds}</tr>")
    ths = "".join(f"<th>{html.escape(h)}</th>" for h in head)
    more = len(found.pairs) - TABLE_ROWS_UP_TO
    tail = (f"<p class='note'>... and {more:,} more findings, less severe (--format json lists "
            f"them all)</p>") if more > 0 else ""
    return (groups_table(found) +
            f"<table id='findings'><caption>{'Pairs' if found.all_pairs else 'Findings'}, most "
            f"severe first: click a row to frame the pair</caption><thead><tr>{ths}</tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>{tail}")


def groups_table(found: Findings) -> str:
    """The groups of clashes at one place (`gjkcli.pipeline.grouping`), "" when the run did not
    group: number, clash set, how many pairs, every element, the centre."""
    from gjkcli.pipeline.groups import groups

    found_groups = groups(found.pairs)
    if not found_groups:
        return ""
    head = "".join(f"<th>{h}</th>" for h in ("group", "clash set", "pairs", "elements", "centre"))
    rows = []
    for g in found_groups:
        cells = [str(g.number), g.clash_set or "", str(len(g.pairs)), "; ".join(g.elements),
                 ", ".join(fmt(x) for x in g.centre)]
        rows.append("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>")
    return (f"<table id='groups'><caption>{len(found_groups)} groups of clashes at one place"
            f"</caption><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>")


def page_script(view: str) -> str:
    """The page's script: a click (or Enter) on a finding's row frames its pair and shows its
    numbers; "show all" resets the view. `view` is the JavaScript of two functions for the plot's
    dimension: `look(p)`, which frames pair p's box and draws its witness segment, and
    `reset()`, which shows every part again."""
    return _SCRIPT_HEAD + view + _SCRIPT_TAIL


_SCRIPT_HEAD = r"""
(function () {
  const DATA = JSON.parse(document.getElementById('gjk-data').textContent);
  const gd = document.getElementById('gjk-scene');
  const detail = document.getElementById('detail');
"""

_SCRIPT_TAIL = r"""
  function frame(k) {
    const p = DATA.pairs[k];
    look(p);
    document.querySelectorAll('#findings tr.sel').forEach(r => r.classList.remove('sel'));
    const row = document.querySelector("#findings tr[data-k='" + k + "']");
    if (row) row.classList.add('sel');
    detail.textContent = '';
    const h = document.createElement('h3');
    h.textContent = (k + 1) + '. ' + p.a + ' x ' + p.b;
    const c1 = document.createElement('p');
    c1.textContent = p.caption;
    const c2 = document.createElement('p');
    c2.className = 'mono';
    c2.textContent = p.witness;
    detail.append(h, c1, c2);
    gd.dataset.framed = String(k);
    // the plot sits above the table: bring it back into view, or the click frames nothing seen
    const main = document.getElementById('main');
    const box = main.getBoundingClientRect();
    if (box.top < 0 || box.top > window.innerHeight / 2) main.scrollIntoView({block: 'start'});
  }
  document.querySelectorAll('#findings tr.row').forEach(function (row) {
    const k = Number(row.dataset.k);
    row.addEventListener('click', () => frame(k));
    row.addEventListener('keydown', e => { if (e.key === 'Enter') frame(k); });
  });
  const all = document.getElementById('show-all');
  if (all) all.addEventListener('click', reset);
  window.gjkFrame = frame;
})();
"""


PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 1em; color: #222; }}
h1 {{ font-size: 1.3em; margin: 0 0 .3em 0; }}
.note {{ color: #555; margin: .2em 0; }} .error {{ color: #b00; font-weight: bold; }}
#plotbox {{ border: 1px solid #ddd; }}
#detail {{ font-size: .9em; border-left: 4px solid #dde8f7; padding-left: .8em; }}
.mono {{ font-family: ui-monospace, monospace; white-space: pre-wrap; word-break: break-all; }}
table {{ border-collapse: collapse; margin-top: 1em; font-size: .9em; }}
caption {{ text-align: left; font-weight: bold; padding: .3em 0; }}
th, td {{ border-bottom: 1px solid #e4e4e4; padding: .25em .6em; text-align: left; }}
tr.row {{ cursor: pointer; }} tr.row:hover {{ background: #f3f6fb; }} tr.sel {{ background: #dde8f7; }}
tr.collision td:nth-child(2) {{ color: #d62728; font-weight: bold; }}
tr.touching td:nth-child(2) {{ color: #b08800; font-weight: bold; }}
tr.clearance td:nth-child(2) {{ color: #c03cc0; font-weight: bold; }}
tr.undecided td:nth-child(2) {{ color: #ff7f0e; font-weight: bold; }}
tr.clear td:nth-child(2) {{ color: #2ca02c; }}
tr.muted {{ color: #999; }}
button {{ margin: .4em 0; }}
.trace {{ margin-top: 2em; border-top: 2px solid #ddd; padding-top: 1em; }}
.trace pre {{ white-space: pre-wrap; font-size: .85em; background: #f7f7f7; padding: .6em; min-height: 6em; }}
</style></head>
<body>
<h1>{title}</h1>
<p>{summary}</p>
{notes}{errors}
<div id="main"><div id="plotbox">{plot}</div>
<aside id="detail"><p>Click a finding in the table to frame its pair.</p></aside></div>
<button id="show-all" type="button">show the whole scene</button>
{table}
{trace}
<script type="application/json" id="gjk-data">{data}</script>
<script>{script}</script>
</body></html>
"""
