"""The placements gjk composes from a STEP file's text (`gjkcli.mesh.steptext`) against
OpenCASCADE's (the XCAF reader's locations as `gjkcli.mesh.cad` reads them), on the five committed assemblies and on a folder of others.

Each OpenCASCADE solid is matched to a solid of the text by its vertices' bounding box in its
own frame (in mm), then to one of that solid's instances by the nearest placement; printed per
file: the instances of each side, those matched, how many placements are the same to the bit,
and the largest difference of a placement's entry (its rotation's, and its translation's over
the file's size). A file the text reader does not read says why.

    python benchmarks/step_placements.py [--corpus /work/corpus/step]
"""
from __future__ import annotations

import argparse
import gzip
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

STEP_FILES = ("step/as1-oc-214.stp", "step/as1_pe_203.stp", "box_sides.STEP.gz",
              "step/eight_cyl.stp", "step/stp_multiple_shp_at_root.stp")


def occ_instances(path: Path) -> list:
    """[((2, 3) bounding box of the solid's B-rep vertices in its own frame, (4, 4) placement)]
    in mm, as gjk's STEP reader has them (`gjkcli.mesh.cad.recorded`: the XCAF location of each
    instance; a solid placed within its product by a MAPPED_ITEM has that placement in its
    own frame, so such files are compared on the text's MAPPED_ITEM-free instances only)."""
    from gjkcli.mesh import cad

    cad.read_step(path)
    _, placed, products = cad.recorded(path)
    return [(products[k][3], T) for _, k, T in placed]


def compare(path: Path) -> dict:
    """The comparison of one file (see the module's docstring)."""
    from gjkcli.mesh import steptext

    try:
        text = steptext.read_text(path)
    except steptext.Unsupported as e:
        return {"unsupported": str(e)}
    occ = occ_instances(path)
    boxes = {}
    for solid in {s for s, _ in text.instances}:
        v = text.vertices(solid)
        boxes[solid] = np.array([v.min(axis=0), v.max(axis=0)]) if len(v) else None
    free = list(range(len(text.instances)))
    size = max((float(np.abs(T[:3, 3]).max()) for _, T in text.instances), default=1.0) or 1.0
    diag = max((float(np.ptp(b, axis=0).max()) for b in boxes.values() if b is not None), default=1.0)
    size = max(size, diag)
    matched = exact = 0
    rot = trans = 0.0
    for box, T in occ:
        best = None
        for n in free:
            solid, M = text.instances[n]
            b = boxes[solid]
            if (box is None) != (b is None) or (box is not None and np.abs(box - b).max() > 1e-6 * size):
                continue
            d = np.abs(M - T).max()
            if best is None or d < best[0]:
                best = (d, n, M)
        if best is None:
            continue
        free.remove(best[1])
        matched += 1
        M = best[2]
        exact += bool(np.array_equal(M, T))
        rot = max(rot, float(np.abs(M[:3, :3] - T[:3, :3]).max()))
        trans = max(trans, float(np.abs(M[:3, 3] - T[:3, 3]).max()) / size)
    return {"occ": len(occ), "text": len(text.instances), "matched": matched, "exact": exact,
            "rotation": rot, "translation": trans}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default=None, help="a folder of more STEP files")
    args = parser.parse_args()
    paths = []
    work = Path(tempfile.mkdtemp(prefix="gjk-placements-"))
    for name in STEP_FILES:
        path = ROOT / "tests" / "data" / "third_party" / name
        if path.suffix == ".gz":
            unpacked = work / path.stem
            unpacked.write_bytes(gzip.decompress(path.read_bytes()))
            path = unpacked
        paths.append(path)
    if args.corpus:
        paths += sorted(p for p in Path(args.corpus).iterdir() if p.suffix.lower() in (".stp", ".step"))
    for path in paths:
        got = compare(path)
        if "unsupported" in got:
            print(f"{path.name}: not read from its text ({got['unsupported']})")
            continue
        print(f"{path.name}: {got['occ']} instances (text {got['text']}), {got['matched']} matched, "
              f"{got['exact']} to the bit; largest difference: rotation {got['rotation']:.2e}, "
              f"translation {got['translation']:.2e} of the model's size")


if __name__ == "__main__":
    main()
