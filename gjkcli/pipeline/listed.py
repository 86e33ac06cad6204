"""What a report's patch (`gjkcli.report.patch`) needs of each listed pair of a scan, as arrays:
kept in a GLB's scene entry (`gjkcli.pipeline.rescan`), so that a re-scan places the pairs it
keeps in the report's order without reading their lines. Made for the findings model alone
(no run, no reader), so that a renderer may import it."""
from __future__ import annotations

import numpy as np

__all__ = ["listed_arrays", "LISTED"]

# The arrays' names: the pair's parts, its place in the order, its flags and mode.
LISTED = ("la", "lb", "lsev", "lsize", "lplain", "lviolation", "lfails", "lmode")


def listed_arrays(listed, index) -> dict:
    """What a report's patch needs of each listed pair, as arrays (`gjkcli.report.patch`): its
    parts (la, lb, by `index`: name -> part), its place in the order
    (`gjkcli.pipeline.findings.severity_key`: lsev, lsize; lplain False for an allowed or known
    one, which a patch does not place), whether it is a violation and fails, its mode."""
    from gjkcli.pipeline.findings import severity_key

    keys = [severity_key(p) for p in listed]
    return {"la": np.array([index[p.a] for p in listed], dtype=np.int64),
            "lb": np.array([index[p.b] for p in listed], dtype=np.int64),
            "lsev": np.array([k[2] for k in keys], dtype=np.int64),
            "lsize": np.array([k[3] for k in keys], dtype=np.float64),
            "lplain": np.array([not (k[0] or k[1]) for k in keys], dtype=bool),
            "lviolation": np.array([bool(p.violation) for p in listed], dtype=bool),
            "lfails": np.array([bool(p.fails) for p in listed], dtype=bool),
            "lmode": [str(p.mode) for p in listed]}
