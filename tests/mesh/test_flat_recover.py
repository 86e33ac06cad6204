"""Files that break the readers' rules: a DXF the strict read refuses is read by ezdxf's recover
mode (with a note), one whose table entry has no name (as some nesting programs write them:
`DXFTypeError: name has to be a string`) without its TABLES section; what neither library can
read is one line naming the file, exit 2, never an internal error. The parts read are checked
against shapely."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from shapely.geometry import Polygon, box

from gjkcli.cli import main
from gjkcli.errors import InputError
from gjkcli.mesh.flat import read_drawing, read_flat_objects

HEADER = ["0", "SECTION", "2", "HEADER", "9", "$ACADVER", "1", "AC1009", "9", "$INSUNITS", "70",
          "4", "0", "ENDSEC"]


def lines_of(squares, layer="CUT"):
    out = []
    for x0, s in squares:
        pts = [(x0, 0.0), (x0 + s, 0.0), (x0 + s, s), (x0, s)]
        for (ax, ay), (bx, by) in zip(pts, pts[1:] + pts[:1]):
            out += ["0", "LINE", "8", layer, "10", f"{ax}", "20", f"{ay}", "11", f"{bx}", "21", f"{by}"]
    return out


SQUARES = [(0.0, 10.0), (10.0, 10.0), (25.0, 10.0)]  # the first two share an edge


def write(path, codes):
    path.write_text("\n".join(codes) + "\n")
    return path


def gjk(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def agree_with_shapely(path):
    parts, _ = read_flat_objects(path)
    got = sorted((round(p.bounds[0, 0], 9), round(Polygon(p.rings[0]).area, 9)) for p in parts)
    want = sorted((x0, box(x0, 0, x0 + s, s).area) for x0, s in SQUARES)
    assert got == want
    r = gjk("scan", path, "--format", "json", "--all-pairs")
    doc = json.loads(r.stdout)
    statuses = sorted(p["status"] for p in doc["pairs"])
    # shapely: the squares at 0 and 10 share an edge (touching), the third is 5 away
    assert box(0, 0, 10, 10).distance(box(10, 0, 20, 10)) == 0
    assert statuses == ["touching"]  # the clear pairs are clear by their boxes, not listed
    return doc


def test_missing_endsec_is_read_in_recover_mode(tmp_path):
    path = write(tmp_path / "noendsec.dxf", HEADER + ["0", "SECTION", "2", "ENTITIES"]
                 + lines_of(SQUARES) + ["0", "EOF"])
    notes = read_drawing(path).notes
    assert any("strict read failed" in n and "recover mode" in n for n in notes), notes
    doc = agree_with_shapely(path)
    assert any("recover mode" in n for n in doc["notes"])


def test_a_table_entry_without_a_name_is_read_without_the_tables(tmp_path):
    tables = ["0", "SECTION", "2", "TABLES", "0", "TABLE", "2", "LAYER", "70", "2",
              "0", "LAYER", "70", "0", "62", "7", "6", "CONTINUOUS",  # no name (group 2)
              "0", "LAYER", "2", "CUT", "70", "0", "62", "7", "6", "CONTINUOUS",
              "0", "ENDTAB", "0", "ENDSEC"]
    path = write(tmp_path / "noname.dxf", HEADER + tables + ["0", "SECTION", "2", "ENTITIES"]
                 + lines_of(SQUARES) + ["0", "ENDSEC", "0", "EOF"])
    d = read_drawing(path)
    assert any("TABLES" in n for n in d.notes), d.notes
    assert {c.layer for c in d.contours} == {"CUT"} and d.units == "mm"
    agree_with_shapely(path)


def test_recover_mode_repairs_are_notes_not_stdout(tmp_path):
    codes = HEADER + ["0", "SECTION", "2", "ENTITIES"] + lines_of(SQUARES) + ["0", "ENDSEC", "0", "EOF"]
    k = len(codes) - 5  # the last LINE's end y: "10.0" written as "1O.0"
    assert codes[k - 1] == "21"
    codes[k] = "1O.0"
    path = write(tmp_path / "badfloat.dxf", codes)
    r = gjk("scan", path, "--format", "json")
    doc = json.loads(r.stdout)  # nothing printed into the report
    assert any("recovered invalid floating point value" in n for n in doc["notes"]), doc["notes"]


@pytest.mark.parametrize("name, text", [
    ("lwpoly.dxf", "\n".join(HEADER + ["0", "SECTION", "2", "ENTITIES", "0", "LWPOLYLINE", "8", "0",
                                        "90", "3", "10", "0", "20", "0", "0", "ENDSEC", "0", "EOF"])),
    ("transform.svg", '<svg xmlns="http://www.w3.org/2000/svg"><rect width="10" height="10" '
                      'transform="matrix(1 2)"/></svg>'),
])
def test_what_no_read_can_take_is_one_line(tmp_path, name, text):
    (tmp_path / name).write_text(text + "\n")
    with pytest.raises(InputError) as info:
        read_drawing(tmp_path / name)
    assert name in str(info.value) and "\n" not in info.value.message
    r = gjk("scan", tmp_path / name)
    assert r.exit_code == 2 and "internal error" not in r.output and "Traceback" not in r.output
    assert name in r.stderr and len(r.stderr.strip().splitlines()) == 1
