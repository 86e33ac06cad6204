"""IFC models read ahead (`gjkcli.mesh.cad_process`, `gjkcli.mesh.ifc.read_here`): the `gjk`
command given an IFC model below IFC_SPLIT_FROM_BYTES forks, as it starts, the process that reads
it while the command imports its pipeline; the command asks it for the model and reports as it
does without it; where it cannot serve, the command reads the model itself."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from fresh import entry_then_imported

from gjkcli.mesh import cad_process

OPENINGS = Path(__file__).resolve().parents[1] / "data" / "third_party" / "project0-openings.ifc"

# gjk's entry, as the `gjk` script calls it; then whether this process imported IfcOpenShell itself
RUN = entry_then_imported('ifcopenshell')


@pytest.fixture
def model(tmp_path):
    """project0-openings.ifc (walls with openings, doors and windows) in tmp_path."""
    pytest.importorskip("ifcopenshell", reason="IFC needs IfcOpenShell (gjk[bim])")
    shutil.copy(OPENINGS, tmp_path / "house.ifc")
    return tmp_path


def test_who_starts_the_early_reader(tmp_path):
    """Started for a scan or check naming IFC models below IFC_SPLIT_FROM_BYTES (which one
    reader meshes), or one larger model and no other IFC model (meshed in a share per job by the
    reader and copies it forks) when the run does not use the cache (which a cached run's
    elements' meshes come from); not for two larger ones (each meshed by readers the command
    forks), ifcXML (refused), a missing file, or one core. Asked in a fresh process: one that
    imported OpenCASCADE (other tests here) never forks a reader."""
    from fresh import python_c

    big, other, xml = tmp_path / "big.ifc", tmp_path / "other.ifc", tmp_path / "a.ifcxml"
    for name in (big, other):
        with open(name, "wb") as f:
            f.truncate(cad_process.IFC_SPLIT_FROM_BYTES)
    xml.write_text("<ifcXML/>")
    out = python_c(
        "import sys\n"
        "from gjkcli.mesh import cad_process\n"
        "big, other, xml, none, openings = sys.argv[1:]\n"
        "for argv in (['scan', big, other], ['scan', xml], ['scan', none], ['scan', openings, '-j', '1'],\n"
        "             ['collision-matrix', openings]):\n"
        "    assert not cad_process.start(argv) and not cad_process.serving(), argv\n"
        "assert not cad_process.start(['scan', big, '-j', '2'], cached=True)\n"
        "for argv, ahead, not_ahead in ((['scan', big, '-j', '2'], big, openings),\n"
        "                               (['scan', big, openings], openings, big)):\n"
        "    assert cad_process.start(argv), argv\n"
        "    try:\n"
        "        assert cad_process.serves(ahead) and not cad_process.serves(not_ahead), argv\n"
        "    finally:\n"
        "        cad_process.stop()\n"
        "print('ok')\n", big, other, xml, tmp_path / "none.ifc", OPENINGS)
    assert out.split() == ["ok"]


def test_the_command_never_imports_ifcopenshell_and_reports_as_without_it(model):
    """`gjk scan house.ifc`: the early reader meshes the model, the command's process never
    imports IfcOpenShell, and its JSON is byte for byte that of `-j 1`, whose model is read by
    the reader child the command forks once its pipeline is imported. So for `gjk check` (against
    --debug, which reads in that child too)."""
    from fresh import python_c

    shutil.copy(model / "house.ifc", model / "copy.ifc")
    for command, files, alone in (("scan", ["house.ifc"], ["-j", "1"]),
                                  ("check", ["house.ifc", "copy.ifc"], ["--debug"])):
        served = python_c(RUN, command, *files, "--format", "json", "-o", f"{command}.json",
                          cwd=model)
        itself = python_c(RUN, command, *files, "--format", "json", "-o", f"{command}-alone.json",
                          *alone, cwd=model)
        assert served.split() == ["False"] and itself.split() == ["False"]
        report = (model / f"{command}.json").read_bytes()
        assert report == (model / f"{command}-alone.json").read_bytes()
    assert json.loads((model / "scan.json").read_bytes())["summary"]["objects"] == 9
    assert json.loads((model / "check.json").read_bytes())["summary"]["collision"] == 1


def test_a_model_read_ahead_takes_its_elements_from_the_cache_and_keeps_them(model):
    """`gjk scan house.ifc` with the cache: the early reader keeps the elements' meshes in the
    cache, as the command's own read of a larger model does. A re-run whose whole report the cache
    does not hold (its kept reports removed) meshes nothing (it writes no new pack of meshes);
    one with a wall renamed meshes that wall alone; each report is the --no-cache run's, byte for
    byte. A pack of meshes with a byte flipped is not believed, and the report says so."""
    from fresh import python_c

    from gjkcli.pipeline.cache import Cache, Table

    def scan(name, *args):
        python_c(RUN, "scan", name, "--format", "json", *args, cwd=model, env={"GJK_NO_CACHE": "0"})

    def packs():
        return sorted(p for p in (model / "c" / "ifc").rglob("*") if p.is_file())

    def no_kept_reports():  # a kept report is replayed to any output: the run reads the model
        shutil.rmtree(model / "c" / "run")

    scan("house.ifc", "-o", "first.json", "--cache-dir", "c")
    scan("house.ifc", "-o", "plain.json", "--no-cache")
    assert len(packs()) == 1 and len(Table(Cache(model / "c"), "ifc").rows) == 9
    no_kept_reports()
    scan("house.ifc", "-o", "again.json", "--cache-dir", "c")
    assert len(packs()) == 1
    text = (model / "house.ifc").read_text()
    assert text.count("'Wall',$,$,#1225") == 1
    (model / "renamed.ifc").write_text(text.replace("'Wall',$,$,#1225", "'Wall A',$,$,#1225"))
    scan("renamed.ifc", "-o", "renamed.json", "--cache-dir", "c")
    scan("renamed.ifc", "-o", "renamed-plain.json", "--no-cache")
    (new,) = set(packs()) - {packs()[0]} if len(packs()) == 2 else [None]
    assert new is not None and len(Table(Cache(model / "c"), "ifc").rows) == 10
    for got, plain in (("first", "plain"), ("again", "plain"), ("renamed", "renamed-plain")):
        assert (model / f"{got}.json").read_bytes() == (model / f"{plain}.json").read_bytes(), got
    for pack in packs():
        data = bytearray(pack.read_bytes())
        data[-3] ^= 1
        pack.write_bytes(bytes(data))
    no_kept_reports()
    scan("house.ifc", "-o", "damaged.json", "--cache-dir", "c")
    notes = json.loads((model / "damaged.json").read_bytes())["notes"]
    assert any("cache: ignored the entry" in str(n) for n in notes), notes


def test_an_ifc_scan_imports_neither_numpy_ma_nor_the_step_refinement(model):
    """The command imports, while the early reader meshes the house, what the run needs once the
    parts are read (`gjkcli.cli._import_ahead`), and no more: not numpy.ma (numpy's np.unique
    imports it on its first call; the run's steps count instead) nor the refinement with STEP
    files' exact solids, which an IFC model never asks for."""
    from fresh import python_c

    code = entry_then_imported("gjkcli.pipeline.refine", "numpy.ma", "gjkcli.pipeline.tessellated")
    for args in (["--format", "json", "-o", "scan.json"], []):
        out = python_c(code, "scan", "house.ifc", *args, cwd=model, env={"GJK_NO_CACHE": "1"})
        assert out.split()[-3:] == ["True", "False", "False"], out


def test_a_killed_reader_leaves_the_model_to_the_command(model):
    """Killed (as IfcOpenShell crashing in it would end it), the early reader no longer serves:
    the command reads the model itself (in a reader child), to the same parts."""
    from fresh import python_c

    out = python_c(
        "import os, signal, sys\n"
        "import numpy as np\n"
        "from gjkcli import forks\n"
        "from gjkcli.mesh import cad_process, ifc\n"
        "assert cad_process.start(['scan', 'house.ifc'])\n"
        "(pid,) = forks.running\n"
        "os.kill(pid, signal.SIGKILL)\n"
        "got = cad_process.ask(ifc.read, 'house.ifc')\n"
        "own = ifc.read('house.ifc')\n"
        "same = [a[0] == b[0] and np.array_equal(a[1], b[1]) and np.array_equal(a[2], b[2])\n"
        "        and a[3] == b[3] for a, b in zip(got.parts, own.parts)]\n"
        "print(len(got.parts), all(same), got.failed == own.failed, cad_process.serving(),\n"
        "      forks.running)\n", cwd=model)
    n, *rest = out.split()
    assert int(n) == 9 and rest == ["True", "True", "False", "set()"]


def test_the_reader_ends_once_it_gave_its_models(model):
    """With no STEP file to serve, the early reader is told to end once the command has its
    models (its IfcOpenShell holds no memory while the command checks); a later call runs here;
    the command's end reaps it (its CPU time and peak memory count as the command's)."""
    from fresh import python_c

    out = python_c(
        "import os\n"
        "from gjkcli import forks\n"
        "from gjkcli.mesh import cad_process, ifc\n"
        "assert cad_process.start(['scan', 'house.ifc'])\n"
        "(pid,) = forks.running\n"
        "assert cad_process.serves('house.ifc') and not cad_process.serves('other.ifc')\n"
        "model = cad_process.ask(ifc.read, 'house.ifc')\n"
        "print(model.schema, cad_process.serving(), cad_process.ask(os.getpid) == os.getpid())\n"
        "cad_process.stop()\n"
        "try:\n"
        "    os.waitpid(pid, os.WNOHANG)\n"
        "except ChildProcessError:\n"
        "    print('reaped', forks.running)\n", cwd=model)
    assert out.split() == ["IFC4", "False", "True", "reaped", "set()"]


def test_a_bad_model_read_ahead_is_the_same_one_line(model):
    """The InputError of the early reader is the line the command gives reading it itself."""
    (model / "bad.ifc").write_text("ISO-10303-21;\nHEADER;\nnot IFC at all\n")
    lines = []
    for extra in ([], ["-j", "1"]):
        done = subprocess.run([sys.executable, "-m", "gjkcli", "scan", "bad.ifc", *extra],
                              cwd=model, capture_output=True, text=True, check=False)
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
        lines.append([line for line in done.stderr.splitlines() if line.startswith("gjk: error:")])
    assert len(lines[0]) == 1 and "bad.ifc" in lines[0][0] and lines[0] == lines[1]


def test_modules_are_imported_meanwhile_only_once_the_reader_says_the_parts_need_them(model):
    """`meanwhile`, for IFC models: the modules are imported while the command waits for the
    model once the reader has said that its parts need qhull (here: every part, with the hulls'
    thresholds lowered to nothing), not for a model whose hulls the compiled core builds (the
    house's walls), and not once the reader has ended."""
    from fresh import python_c

    code = ("import os, signal, sys\n"
            "from gjkcli import forks\n"
            "from gjkcli.engine import shapes\n"
            "from gjkcli.mesh import cad_process, ifc\n"
            "if sys.argv[1] == 'large':\n"
            "    shapes.SMALL_HULL_POINTS = 0\n"
            "assert cad_process.start(['scan', 'house.ifc'])\n"
            "(pid,) = forks.running\n"
            "cad_process.meanwhile(['colorsys'])\n"
            "if sys.argv[1] == 'ended':\n"
            "    os.kill(pid, signal.SIGKILL)\n"
            "    while not forks.Worker.ready(cad_process._server[0], 1.0):\n"
            "        pass\n"
            "model = cad_process.ask(ifc.read, 'house.ifc')\n"
            "print(len(model.parts), 'colorsys' in sys.modules)\n")
    assert python_c(code, "large", cwd=model).split() == ["9", "True"]
    assert python_c(code, "small", cwd=model).split() == ["9", "False"]
    assert python_c(code, "ended", cwd=model).split() == ["9", "False"]


def test_a_reader_process_imports_ifcopenshell_without_lark(model):
    """A process that only reads models (`ifc.reading_only`: the early reader, a reader child)
    imports IfcOpenShell without lark (its header parsers' grammar, built as it is imported),
    reads the same model, prints nothing about it, and can still import lark after (a manifest's
    selector needs it); a process that does not say so imports IfcOpenShell as it is."""
    from fresh import python_c

    code = ("import sys\n"
            "from gjkcli.mesh import ifc\n"
            "if sys.argv[1] == 'reader':\n"
            "    ifc.reading_only()\n"
            "model = ifc.read_here('house.ifc')\n"
            "print(len(model.parts), 'lark' in sys.modules, end=' ')\n"
            "import lark\n"
            "print(lark.Lark is not None)\n")
    done = subprocess.run([sys.executable, "-c", code, "reader"], cwd=model, capture_output=True,
                          text=True, check=True)
    assert done.stdout.split() == ["9", "False", "True"] and done.stderr == ""
    assert python_c(code, "plain", cwd=model).split() == ["9", "True", "True"]


def test_a_model_named_alone_is_meshed_in_interleaved_shares_joined_in_the_file_s_order(model):
    """From IFC_SPLIT_AHEAD_FROM_BYTES (lowered here to nothing), a model named alone of
    ifc.SPLIT_FROM_ELEMENTS elements or more (lowered here too) is meshed by the early reader
    and a copy it forks (every other element each), and the parts come back in the file's
    order, the same as one reader's; under either, by one reader (the house's 9 elements are
    fewer than SPLIT_FROM_ELEMENTS: a fork buys nothing)."""
    from fresh import python_c

    code = ("import os, sys\n"
            "import numpy as np\n"
            "from gjkcli.mesh import cad_process, ifc\n"
            "if sys.argv[1] in ('split', 'few'):\n"
            "    cad_process.IFC_SPLIT_AHEAD_FROM_BYTES = 0\n"
            "if sys.argv[1] == 'split':\n"
            "    ifc.SPLIT_FROM_ELEMENTS = 0\n"
            "plain = ifc._read\n"
            "def logged(*args, **kwargs):\n"
            "    with open('read.pids', 'a') as f:\n"
            "        f.write(f'{os.getpid()} {kwargs.get(\"interleaved\", False)}\\n')\n"
            "    return plain(*args, **kwargs)\n"
            "ifc._read = logged\n"
            "assert cad_process.start(['scan', 'house.ifc', '-j', '2'])\n"
            "ahead = cad_process.ask(ifc.read, 'house.ifc')\n"
            "alone = ifc.read_here('house.ifc')\n"
            "same = [a[0] == b[0] and np.array_equal(a[1], b[1]) and np.array_equal(a[2], b[2])\n"
            "        for a, b in zip(ahead.parts, alone.parts)]\n"
            "print(len(ahead.parts), len(alone.parts), all(same))\n")
    assert python_c(code, "split", cwd=model).split() == ["9", "9", "True"]
    readers = (model / "read.pids").read_text().split("\n")[:2]
    assert len({line.split()[0] for line in readers}) == 2 and all(line.endswith("True") for line in readers)
    for one in ("one", "few"):
        (model / "read.pids").unlink()
        assert python_c(code, one, cwd=model).split() == ["9", "9", "True"]
        readers = (model / "read.pids").read_text().split("\n")[:1]
        assert readers[0].endswith("False")
