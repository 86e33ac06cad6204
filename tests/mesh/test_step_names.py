"""STEP product names read as their author typed them: the encodings of ISO 10303-21 (`\\X\\`,
`\\X2\\`, `\\X4\\`, `\\S\\` with its `\\P?\\` page), which OpenCASCADE decodes, and the bytes of a
code page some writers put in the strings as they are (SolidWorks on a Russian Windows: CP1251),
whose code page gjk tells OpenCASCADE (`gjkcli.mesh.cad._codepage`)."""
import os
from pathlib import Path

import pytest

from stepfiles import box, write_step  # skips the module without OpenCASCADE

from gjkcli.mesh import cad
from gjkcli.mesh.load import read_objects

# OpenCASCADE's test file of the STEP corpus (benchmarks/step_corpus.json), where it is kept
CORPUS = Path(os.environ.get("GJK_STEP_CORPUS", Path(__file__).resolve().parents[3] / "corpus"
                             / "step")) / "bug31670_russian.stp"


def _named(tmp_path, encoded: list[bytes]) -> Path:
    """An assembly "asm" of one box per name, each product's name the given bytes as they
    stand between the quotes of the file's PRODUCT entity."""
    names = [f"NAME{k}X" for k in range(len(encoded))]
    path = write_step(tmp_path / "named.stp",
                      [(n, box(1, 1, 1, (3 * k, 0, 0))) for k, n in enumerate(names)],
                      assembly="asm", instances=[(n, (0, 0, 0)) for n in names])
    data = path.read_bytes()
    for name, raw in zip(names, encoded):
        assert f"'{name}'".encode() in data
        data = data.replace(f"'{name}'".encode(), b"'" + raw + b"'")
    path.write_bytes(data)
    return path


# (as written in the file, as the author typed it)
DIRECTIVES = [
    ("\\X2\\04210431043E0440043A0430\\X0\\1", "Сборка1"),  # \X2\: UTF-16 code units
    ("K\\X\\FChler", "Kühler"),  # \X\: one ISO 8859-1 byte in hex
    ("\\X2\\8EF853D7\\X0\\ \\X4\\0001F7CA\\X0\\", "軸受 \U0001F7CA"),  # \X4\: UTF-32
    ("Stra\\S\\_e", "Straße"),  # \S\: the ISO 8859-1 upper half (0x80 + '_' = 0xDF)
    ("\\PE\\\\S\\*\\S\\U\\S\\b", "Њет"),  # \PE\ selects ISO 8859-5 for \S\
    ("line\\X\\0Atwo", "line\ntwo"),
    ("it''s", "it's"),  # a quote is doubled
]


@pytest.mark.parametrize("raw, typed", DIRECTIVES)
def test_iso_10303_21_encodings_read_back_as_unicode(tmp_path, raw, typed):
    path = _named(tmp_path, [raw.encode()])
    assert cad._codepage(path) == "UTF8"  # all ASCII: nothing to guess
    assert [p.name for p in read_objects(path)] == [f"asm/{typed}"]


def test_every_encoding_in_one_assembly(tmp_path):
    path = _named(tmp_path, [raw.encode() for raw, _ in DIRECTIVES])
    assert sorted(p.name for p in read_objects(path)) == sorted(f"asm/{t}" for _, t in DIRECTIVES)


# names a Russian SolidWorks user types, as its STEP writer writes them: CP1251 bytes
CYRILLIC = ["Сборка1", "Дет1", "Дет2", "Скругление3", "Вырез-Вытянуть2", "Корпус", "Крышка"]


def test_cp1251_bytes_as_written_by_solidworks_read_as_typed(tmp_path):
    path = _named(tmp_path, [n.encode("cp1251") for n in CYRILLIC])
    assert cad._codepage(path) == "CP1251"
    assert sorted(p.name for p in read_objects(path)) == sorted(f"asm/{n}" for n in CYRILLIC)


def test_utf8_bytes_read_as_typed_and_the_code_page_is_reset_after_a_cp1251_file(tmp_path):
    """OpenCASCADE's code page is a global of the process: a UTF-8 file read after a CP1251
    one is read as UTF-8."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    cp1251 = _named(tmp_path / "a", [n.encode("cp1251") for n in CYRILLIC])
    utf8 = _named(tmp_path / "b", [n.encode("utf-8") for n in ["Вентиль 3/4", "Kühler"]])
    assert cad._codepage(utf8) == "UTF8"
    assert sorted(p.name for p in read_objects(cp1251)) == sorted(f"asm/{n}" for n in CYRILLIC)
    assert sorted(p.name for p in read_objects(utf8)) == ["asm/Kühler", "asm/Вентиль 3/4"]


@pytest.mark.skipif(not CORPUS.exists(), reason=f"{CORPUS} (OpenCASCADE's test file, SolidWorks "
                                                "2017 with Cyrillic names; GJK_STEP_CORPUS) is absent")
def test_solidworks_2017_file_with_cyrillic_names():
    assert cad._codepage(CORPUS) == "CP1251"
    names = {p.name for p in read_objects(CORPUS)}
    assert "Сборка1/Дет1" in names and not any("Ñ" in n for n in names)


def test_a_guessed_code_page_is_said_in_the_runs_notes(tmp_path):
    """A lenient read says what it assumed: the code page guessed for a file whose names hold
    CP1251 bytes is in the scan's notes, naming the file; a file of escaped names (ASCII) has no
    such note."""
    from gjkcli.pipeline import run

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    cp1251 = _named(tmp_path / "a", [n.encode("cp1251") for n in CYRILLIC])
    ascii_only = _named(tmp_path / "b", [raw.encode() for raw, _ in DIRECTIVES])
    found = run.scan([str(cp1251), str(ascii_only)], run.Options(jobs=1))
    said = [str(n) for n in found.notes if "code page" in str(n)]
    assert len(said) == 1
    assert said[0].startswith(f"{cp1251}: ") and "read as CP1251" in said[0]
