"""`gjk collision-matrix`'s outputs: the SRDF's ``disable_collisions`` lines, and the audit's lines.

An existing SRDF keeps everything but its ``disable_collisions`` elements (and the comment gjk
wrote above them last time): groups, group states, end effectors, virtual joints stay as they
were. The new lines go at the end of the ``robot`` element, sorted by reason then links.
"""
from __future__ import annotations

__all__ = ["srdf_text", "audit_lines", "expected_to_collide", "REASON_ORDER"]

REASON_ORDER = ("Adjacent", "Default", "Always", "Never")
MARK = "gjk collision-matrix"


def srdf_text(matrix, existing: str | None = None, *, always: float, proven: dict | None = None) -> str:
    """The SRDF text: `existing` (an SRDF's text) with its disabled pairs replaced by the matrix's,
    or a new ``<robot>`` holding only them.

    proven : {(link, link): `gjkcli.pipeline.prove.Proof`} of the Never pairs `--prove` tried:
        the proven ones stay Never with a comment saying so; the others are left enabled and
        listed in a comment (a counterexample's pose, or "not proven")
    """
    from lxml import etree

    parser = etree.XMLParser(resolve_entities=False, load_dtd=False, no_network=True,
                             remove_blank_text=False)
    if existing is not None:
        root = etree.fromstring(existing.encode("utf-8"), parser)
        for e in list(root.iter("disable_collisions")):
            _remove(e)
        for c in list(root.iter(etree.Comment)):
            if c.text and c.text.strip().startswith(MARK):
                _remove(c)
    else:
        root = etree.Element("robot", name=matrix.robot)
        root.text = "\n  "
    proven = proven or {}
    children = list(root)
    if children:
        children[-1].tail = "\n  "
    else:
        root.text = "\n  "
    pct = f"{100 * always:g}%"
    summary = (f" {MARK}: {matrix.samples:,} random poses within the joint limits, seed {matrix.seed}; "
               f"Always: in collision in at least {pct} of them; Never: in none")
    if proven:
        ok = sum(1 for p in proven.values() if p.verdict == "proven")
        summary += (f"; branch and bound: {ok} of {len(proven)} Never pairs proven clear over the whole "
                    f"joint-limit box (marked 'proven'); the others are left enabled")
    comment = etree.Comment(summary + " ")
    root.append(comment)
    pairs = sorted(matrix.reasons.items(), key=lambda kv: (REASON_ORDER.index(kv[1]), kv[0]))
    last = comment
    for (a, b), reason in pairs:
        last.tail = "\n  "
        e = etree.SubElement(root, "disable_collisions", link1=a, link2=b, reason=reason)
        last = e
        if reason == "Never" and (a, b) in proven and proven[(a, b)].verdict == "proven":
            note = etree.Comment(f" proven: clear over the whole joint-limit box of "
                                 f"{', '.join(proven[(a, b)].joints)} ")
            last.tail = " "
            root.append(note)
            last = note
    for (a, b), proof in sorted(proven.items()):
        if proof.verdict == "proven":
            continue
        if proof.verdict == "collides":
            pose = ", ".join(f"{k}={v:.4f}" for k, v in proof.pose.items())
            why = f"never seen in the samples, yet collides at {pose}"
        else:
            why = f"not seen in the samples, not proven in {proof.boxes:,} boxes"
        last.tail = "\n  "
        last = etree.Comment(f" left enabled: {a} {b}: {why} ")
        root.append(last)
    last.tail = "\n"
    # the whole document: comments before <robot> (a generator's banner) stay too
    def text(nodes):
        return "".join(etree.tostring(n, encoding="unicode", with_tail=False) + "\n" for n in nodes)

    before = reversed(list(root.itersiblings(preceding=True)))
    return ('<?xml version="1.0" encoding="utf-8"?>\n' + text(before) + text([root])
            + text(root.itersiblings()))


def _remove(e) -> None:
    """Remove an element, keeping the text after it (lxml's tail) where it was."""
    parent = e.getparent()
    prev = e.getprevious()
    if e.tail and e.tail.strip():
        if prev is not None:
            prev.tail = (prev.tail or "") + e.tail
        else:
            parent.text = (parent.text or "") + e.tail
    parent.remove(e)


# Reasons that say a pair does collide (at the default pose, in nearly every pose): an audit that
# finds them colliding confirms them.
COLLIDING_REASONS = ("Default", "Always")


def expected_to_collide(reason: str | None) -> bool:
    return reason in COLLIDING_REASONS


def audit_lines(found, audited: dict, samples: int, seed: int, unchecked: int = 0) -> list[str]:
    """One line per disabled pair that collides though its reason says it does not (Never, no
    reason, any other), then the summary: the pairs by reason, those whose reason says they
    collide and do.

    audited : {(link, link): reason or None} every pair checked
    unchecked : pairs the SRDF disables whose links have no geometry (nothing to check)
    """
    out = []
    confirmed = 0
    for c in found:
        reason = audited.get((c.a, c.b), audited.get((c.b, c.a)))
        if expected_to_collide(reason):
            confirmed += 1
            continue
        pose = ", ".join(f"{k}={v:.4f}" for k, v in c.pose.items())
        depth = f"depth {c.depth:.4g}" if c.depth is not None else "depth unknown"
        why = f"disabled as {reason}" if reason else "disabled without a reason"
        out.append(f"{c.a} {c.b}: {why}, yet collides ({depth}) at sample {c.sample}: {pose}")
    counts: dict = {}
    for reason in audited.values():
        if not expected_to_collide(reason):
            counts[reason or "no reason"] = counts.get(reason or "no reason", 0) + 1
    by_reason = ", ".join(f"{n} {r}" for r, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
    failing, checked = len(found) - confirmed, sum(counts.values())
    verdict = (f"{failing} of {checked} disabled pairs collide" if failing
               else f"all {checked} disabled pairs stayed clear")
    line = f"{verdict} ({by_reason or 'none'}) in {samples:,} random poses (seed {seed})"
    colliding = len(audited) - checked
    if colliding:
        line += (f"; {confirmed} of {colliding} pairs disabled as Default or Always collide, as "
                 f"their reason says")
    if unchecked:
        line += f"; {unchecked} name a link without geometry (not checked)"
    out.append(line)
    return out
