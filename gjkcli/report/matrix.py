"""`gjk collision-matrix` in the formats other than the SRDF: a table for people and a JSON
document for scripts, from the same records (`gjkcli.pipeline.matrix.Matrix` and its proofs, or
an audit's counterexamples).

JSON, version 1 (keys stable; new keys may be added)::

    {"schema_version": 1, "command": "collision-matrix", "tool": {"name": "gjk", "version": str},
     "robot": str, "samples": int, "seed": int,
     "pairs": [{"a", "b", "reason": "Adjacent" | "Default" | "Always" | "Never" | null (enabled),
                "collisions": int (samples in collision before the pair was settled),
                ["proof": "proven" | "collides" | "not proven", "boxes": int: with --prove]}],
     "summary": {"Adjacent", "Default", "Always", "Never", "enabled", "exit_code"}}

and for --audit::

    {"schema_version": 1, "command": "collision-matrix", "tool": ..., "audit": str (the SRDF),
     "robot", "samples", "seed",
     "pairs": [{"a", "b", "reason": str | null, "collides": bool, "fails": bool,
                ["depth": float | null, "sample": int, "pose": {joint: value}]: when it collides}],
     "summary": {"checked", "collide", "failing", "unchecked", "exit_code"}}

Pairs are sorted by (a, b), each pair's links in name order, so two runs of one seed give the
same bytes.
"""
from __future__ import annotations

from rich.table import Table
from rich.text import Text

from gjkcli.report.srdf import REASON_ORDER

__all__ = ["matrix_document", "audit_document", "render_matrix", "render_audit"]

SCHEMA_VERSION = 1


def _pair(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a <= b else (b, a)


def _head(version: str) -> dict:
    return {"schema_version": SCHEMA_VERSION, "command": "collision-matrix",
            "tool": {"name": "gjk", "version": version}}


def matrix_document(m, proofs: dict | None, *, version: str, exit_code: int = 0) -> dict:
    """The matrix `m` (and --prove's proofs, {pair: Proof}) as the JSON document above."""
    rows = []
    pairs = sorted({_pair(*p) for p in (*m.reasons, *m.enabled)})
    reasons = {_pair(*p): r for p, r in m.reasons.items()}
    hits = {_pair(*p): n for p, n in m.hits.items()}
    proved = {_pair(*p): v for p, v in (proofs or {}).items()}
    for a, b in pairs:
        row = {"a": a, "b": b, "reason": reasons.get((a, b)), "collisions": int(hits.get((a, b), 0))}
        if (a, b) in proved:
            row["proof"] = proved[(a, b)].verdict
            row["boxes"] = int(proved[(a, b)].boxes)
        rows.append(row)
    counts = {r: sum(1 for row in rows if row["reason"] == r) for r in REASON_ORDER}
    return {**_head(version), "robot": m.robot, "samples": int(m.samples), "seed": int(m.seed),
            "pairs": rows,
            "summary": {**counts, "enabled": sum(1 for row in rows if row["reason"] is None),
                        "exit_code": exit_code}}


def audit_document(found, audited: dict, *, audit: str, robot: str, samples: int, seed: int,
                   unchecked: int, failing: set, version: str, exit_code: int) -> dict:
    """An --audit as the JSON document above. found : the counterexamples; audited : {(a, b):
    reason or None} every pair checked; failing : the pairs whose collision fails the audit."""
    hit = {_pair(c.a, c.b): c for c in found}
    rows = []
    for a, b in sorted({_pair(*p): None for p in audited}):
        reason = audited.get((a, b), audited.get((b, a)))
        c = hit.get((a, b))
        row = {"a": a, "b": b, "reason": reason, "collides": c is not None,
               "fails": (a, b) in failing}
        if c is not None:
            row.update(depth=None if c.depth is None else float(c.depth), sample=int(c.sample),
                       pose={k: float(v) for k, v in c.pose.items()})
        rows.append(row)
    return {**_head(version), "audit": audit, "robot": robot, "samples": int(samples),
            "seed": int(seed), "pairs": rows,
            "summary": {"checked": len(rows), "collide": len(hit),
                        "failing": sum(1 for row in rows if row["fails"]), "unchecked": unchecked,
                        "exit_code": exit_code}}


def render_matrix(doc: dict) -> Table:
    """The matrix document as a table: one row per pair, the disabled ones with their reason."""
    proofs = any("proof" in row for row in doc["pairs"])
    table = Table(title=f"Collision matrix of {doc['robot']} ({doc['samples']:,} samples, seed "
                        f"{doc['seed']})", title_justify="left", show_edge=False, pad_edge=False)
    table.add_column("link A", overflow="fold")
    table.add_column("link B", overflow="fold")
    table.add_column("reason", no_wrap=True)
    table.add_column("in collision", justify="right", no_wrap=True)
    if proofs:
        table.add_column("--prove", no_wrap=True)
    for row in doc["pairs"]:
        cells = [Text(row["a"]), Text(row["b"]),
                 Text(row["reason"] or "enabled", style="" if row["reason"] else "bold"),
                 f"{row['collisions']:,}"]
        if proofs:
            cells.append(row.get("proof", ""))
        table.add_row(*cells)
    return table


def render_audit(doc: dict) -> Table:
    """An audit document as a table: the pairs that collide, failing ones first."""
    table = Table(title=f"Audit of {doc['audit']} ({doc['samples']:,} samples, seed {doc['seed']})",
                  title_justify="left", show_edge=False, pad_edge=False)
    table.add_column("link A", overflow="fold")
    table.add_column("link B", overflow="fold")
    table.add_column("disabled as", no_wrap=True)
    table.add_column("verdict", no_wrap=True)
    table.add_column("depth", justify="right", no_wrap=True)
    table.add_column("pose", overflow="fold")
    rows = sorted((r for r in doc["pairs"] if r["collides"]), key=lambda r: (not r["fails"], r["a"], r["b"]))
    for r in rows:
        depth = "-" if r.get("depth") is None else f"{r['depth']:.6g}"
        pose = ", ".join(f"{k}={v:.4f}" for k, v in r["pose"].items())
        verdict = Text("collides: fails", style="bold red") if r["fails"] else \
            Text("collides, as its reason says", style="yellow")
        table.add_row(Text(r["a"]), Text(r["b"]), Text(r["reason"] or "no reason"), verdict,
                      depth, Text(pose))
    return table
