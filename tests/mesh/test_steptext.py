"""A STEP file's assembly read from its text (gjkcli.mesh.steptext): the record reader, the
solids' digests, and the placements against OpenCASCADE's on the committed assemblies."""
import gzip
import importlib.util
import re
from pathlib import Path

import numpy as np
import pytest

from gjkcli.mesh import steptext

ROOT = Path(__file__).resolve().parents[2]
THIRD_PARTY = ROOT / "tests" / "data" / "third_party"
STEP_FILES = ("step/as1-oc-214.stp", "step/as1_pe_203.stp", "box_sides.STEP.gz",
              "step/eight_cyl.stp", "step/stp_multiple_shp_at_root.stp")


def _module(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _bytes(name: str) -> bytes:
    data = (THIRD_PARTY / name).read_bytes()
    return gzip.decompress(data) if name.endswith(".gz") else data


def test_records_and_values_read_strings_comments_and_complex_entities():
    data = (b"ISO-10303-21;\nHEADER;\nENDSEC;\nDATA;\n"
            b"#1 = PRODUCT('it''s; a (name)','#2 is text',''/* #9 = X(); */,(#2));\n"
            b"#2 = ( LENGTH_UNIT() NAMED_UNIT(*) SI_UNIT(.MILLI.,.METRE.) );\n"
            b"#3=CARTESIAN_POINT('',(1.,-2.5E-1,3));\nENDSEC;\nEND-ISO-10303-21;\n")
    recs = steptext.records(data)
    assert sorted(recs) == [1, 2, 3]
    name, args = steptext.parse(recs[1])
    assert name == "PRODUCT" and args[:3] == ["it's; a (name)", "#2 is text", ""]
    assert args[3] == [2] and isinstance(args[3][0], steptext.Ref)
    assert steptext.parse(recs[2]) == [("LENGTH_UNIT", []), ("NAMED_UNIT", ["*"]),
                                       ("SI_UNIT", ["MILLI", "METRE"])]
    assert steptext.parse(recs[3]) == ("CARTESIAN_POINT", ["", [1.0, -0.25, 3]])


def test_digests_ignore_ids_and_spacing_and_see_any_change():
    text = _bytes("step/as1-oc-214.stp")
    a = steptext.Assembly(text)
    # the same file renumbered (every id + 100000) and with its records' spacing changed
    renumbered = re.sub(rb"'(?:[^']|'')*'|#(\d+)", lambda m: m.group() if m.group(1) is None
                        else b"#%d" % (int(m.group(1)) + 100000), text)
    renumbered = renumbered.replace(b"=", b" =  ").replace(b"(#", b"( #")
    b = steptext.Assembly(renumbered)
    assert sorted(a.digests.values()) == sorted(b.digests.values())
    assert len(set(a.digests.values())) == len(a.digests) == 5
    assert a.structure() == b.structure()
    # a product's name changed: the structure changes, no solid's digest
    named = steptext.Assembly(text.replace(b"'nut'", b"'nut2'"))
    assert named.digests == a.digests and named.structure() != a.structure()
    # one solid's points moved: that solid's digest changes, no other's
    edited = steptext.Assembly(_module("bench_cache").step_edited(text.decode("latin-1")).encode("latin-1"))
    changed = set(edited.digests.values()) - set(a.digests.values())
    assert len(changed) == 1 and len(set(a.digests.values()) - set(edited.digests.values())) == 1


@pytest.mark.parametrize("name", STEP_FILES)
def test_every_record_is_made_canonical_as_piece_by_piece(name):
    """`_canonical` cuts most records with a few calls over the whole record (those whose strings
    hold no white space and no '#'), the others piece by piece: the same either way."""
    odd = [b"A ( #2 ,\n\t#30 , 1.5E+2 , (#4,#5) , * , $ , .T. )", b"B(# 8,#9 )", b"C ( )",
           b"D('',#1,'a b',#2)", b"E('#3',#4)", b"F('it''s',\t#5)", b"G('x''#6''',#7 , '')"]
    for record in list(steptext.records(_bytes(name)).values()) + odd:
        assert steptext._canonical(record) == steptext._by_pieces(record)
        assert steptext._refs_of(record) == steptext._by_pieces(record)[1]


@pytest.mark.parametrize("name", STEP_FILES)
def test_a_moved_placement_moves_one_instance_and_no_solid(name):
    text = _bytes(name)
    moved = _module("bench_cache").step_moved(text.decode("latin-1"))
    before = steptext.Assembly(text)
    if moved is None:  # a file of no assembly placement
        assert not before.by_kind.get("NEXT_ASSEMBLY_USAGE_OCCURRENCE")
        return
    after = steptext.Assembly(moved.encode("latin-1"))
    assert after.digests == before.digests and after.structure() == before.structure()
    assert [s for s, _ in after.instances] == [s for s, _ in before.instances]
    differ = [k for k, ((_, A), (_, B)) in enumerate(zip(before.instances, after.instances))
              if not np.array_equal(A, B)]
    assert len(differ) == 1


def test_what_is_not_read_is_unsupported():
    data = (b"DATA;\n#1 = SHAPE_REPRESENTATION('',(#2),#3);\n#2 = SHELL_BASED_SURFACE_MODEL('',());\n"
            b"#3 = ( GEOMETRIC_REPRESENTATION_CONTEXT(3) GLOBAL_UNIT_ASSIGNED_CONTEXT((#4)) "
            b"REPRESENTATION_CONTEXT('','') );\n"
            b"#4 = ( LENGTH_UNIT() NAMED_UNIT(*) SI_UNIT(.MILLI.,.METRE.) );\n"
            b"#5 = SHAPE_DEFINITION_REPRESENTATION(#6,#1);\n#6 = PRODUCT_DEFINITION_SHAPE('','',#7);\n"
            b"#7 = PRODUCT_DEFINITION('design','',#8,#9);\nENDSEC;\n")
    with pytest.raises(steptext.Unsupported, match="SHELL_BASED_SURFACE_MODEL"):
        steptext.Assembly(data)
    with pytest.raises(steptext.Unsupported, match="DATA"):
        steptext.Assembly(b"ISO-10303-21;\nHEADER;\nENDSEC;\n")


@pytest.mark.parametrize("name", STEP_FILES)
def test_placements_are_opencascades(name, tmp_path):
    pytest.importorskip("OCP")
    path = THIRD_PARTY / name
    if name.endswith(".gz"):
        path = tmp_path / Path(name).stem
        path.write_bytes(_bytes(name))
    got = _module("step_placements").compare(path)
    assert "unsupported" not in got
    assert got["occ"] == got["text"] == got["matched"]
    assert got["exact"] == got["occ"]  # every placement OpenCASCADE's to the last bit
