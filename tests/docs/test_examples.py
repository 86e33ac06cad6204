"""Every code block of the README and the docs pages runs, and exits as its page says.

A page's fenced blocks are read by their language:

- `console`: each line starting with `$ ` is a command; `sh`, `bash`: each line is one (comments
  after `#` dropped). Commands run against a copy of `samples/` and `tests/data/third_party/` in
  a temporary folder (the current directory there), `gjk` in-process through click's CliRunner. The exit code expected is
  the one the page states: `<!-- exit: N -->` just above the block, else `exit N` in a command's
  comment or in the block's printed output, else 0.
- `python`: executed, the current directory the same temporary folder.
- `toml`, `yaml`, `json`: parsed; a manifest's TOML is read by gjk's own manifest reader, a
  settings file's (`[tool.gjk]`, a gjk.toml) by its settings reader.
- `text` and blocks without a language are what a command prints, not run.

A block that needs what the tests cannot give (a file the reader supplies, a robot from
../shared, a cluster, the network) is marked `<!-- not run: REASON -->` just above it, and the
test skips it with that reason, so every block is either run or says why not. Blocks that build
on another (the robots page's package folder) are marked `<!-- setup: NAME -->` and
`<!-- shell: NAME -->` and run in bash, the setup first. A block that runs
but takes long (a Dask cluster started) is marked `<!-- slow: REASON -->` and runs with
GJK_DOCS_SLOW=1 set.
"""
from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from gjkcli.cli import main

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]
SHELL = {"console", "sh", "bash", "shell"}
PARSED = {"toml", "yaml", "json"}
OUTPUT = {"", "text"}
MARK = re.compile(r"<!--\s*(exit|not run|slow|setup|shell):\s*(.*?)\s*-->")
EXIT = re.compile(r"\bexit (\d)\b")


@dataclass(frozen=True)
class Block:
    page: Path
    line: int
    lang: str
    text: str
    marks: tuple[tuple[str, str], ...]

    @property
    def id(self) -> str:
        return f"{self.page.name}:{self.line}"

    def mark(self, key: str) -> str | None:
        return next((value for k, value in self.marks if k == key), None)


def read_blocks(page: Path) -> list[Block]:
    """The fenced blocks of a Markdown page, with the marks in the comments just above each."""
    lines = page.read_text(encoding="utf-8").splitlines()
    blocks = []
    k = 0
    while k < len(lines):
        opening = re.match(r"^(`{3,})(\S*)\s*$", lines[k])
        if not opening:
            k += 1
            continue
        fence, lang = opening.groups()
        end = next(j for j in range(k + 1, len(lines)) if lines[j].rstrip() == fence)
        marks = []
        above = k - 1
        while above >= 0 and (not lines[above].strip() or MARK.search(lines[above])):
            marks += MARK.findall(lines[above])
            above -= 1
        if not lang.startswith("{"):  # a MyST directive (toctree, eval-rst) is not an example
            blocks.append(Block(page, k + 1, lang, "\n".join(lines[k + 1:end]), tuple(marks)))
        k = end + 1
    return blocks


BLOCKS = [b for page in PAGES for b in read_blocks(page)]
RUN = [b for b in BLOCKS if b.lang not in OUTPUT]


def test_every_block_has_a_language_the_tests_know():
    unknown = [(b.id, b.lang) for b in BLOCKS if b.lang not in SHELL | PARSED | OUTPUT | {"python"}]
    assert not unknown, unknown
    assert len(RUN) >= 20  # the pages were read: the README and the docs hold dozens of examples


def test_no_command_hides_in_an_output_block():
    """A command written in a block without a language would never run: it must say `console`."""
    hidden = [b.id for b in BLOCKS if b.lang in OUTPUT
              and any(line.startswith(("$ gjk", "gjk ")) for line in b.text.splitlines())]
    assert not hidden, hidden


def commands(block: Block) -> list[tuple[str, int]]:
    """(command line, expected exit code) of a shell block."""
    stated = block.mark("exit")
    printed = [int(m) for line in block.text.splitlines() if not line.startswith("$ ")
               for m in EXIT.findall(line)]
    out = []
    for line in block.text.splitlines():
        if block.lang == "console":
            if not line.startswith("$ "):
                continue
            line = line[2:]
        command, _, comment = line.partition(" #")
        if line.lstrip().startswith("#") or not command.strip():
            continue
        said = EXIT.findall(comment)
        code = int(stated) if stated else int(said[0]) if said else printed[0] if printed else 0
        out.append((command.strip(), code))
    return out


SHARED = ROOT.parent / "shared"


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    work = tmp_path / "work"
    shutil.copytree(ROOT / "samples", work / "samples")
    # the real files committed with the tests (a STEP assembly, an IFC house), as the pages name them
    shutil.copytree(ROOT / "tests" / "data" / "third_party", work / "tests" / "data" / "third_party")
    shutil.copytree(DOCS / "schema", work / "docs" / "schema")
    if SHARED.is_dir():  # ../shared beside the checkout, as the robots page reaches it
        (tmp_path / "shared").symlink_to(SHARED, target_is_directory=True)
    monkeypatch.chdir(work)
    return work


@pytest.mark.parametrize("block", RUN, ids=[b.id for b in RUN])
def test_the_example_runs(block, workdir):
    reason = block.mark("not run")
    if reason:
        pytest.skip(f"{block.id} is not run: {reason}")
    slow = block.mark("slow")
    if slow and not os.environ.get("GJK_DOCS_SLOW"):
        pytest.skip(f"{block.id} takes long ({slow}); GJK_DOCS_SLOW=1 runs it")
    if block.mark("setup") or block.mark("shell"):
        run_bash(block, workdir)
    elif block.lang in SHELL:
        run_shell(block)
    elif block.lang == "python":
        exec(compile(block.text, block.id, "exec"), {"__name__": "__docs__"})
    elif block.lang == "toml":
        parsed = tomllib.loads(block.text)
        if "tool" in parsed or {"files", "together", "format", "limits"} & set(parsed):
            check_settings(block, parsed, workdir)
        elif {"object", "include", "robot", "group", "check", "allow"} & set(parsed):
            check_manifest(block, workdir)
    elif block.lang == "yaml":
        yaml.safe_load(block.text)
    else:
        json.loads(block.text)


def run_shell(block: Block) -> None:
    found = commands(block)
    assert found, f"{block.id}: no command in the block"
    for command, code in found:
        assert not re.search(r"[|&;<>$`]", command), (
            f"{block.id}: `{command}` needs a shell; write it for gjk alone or mark the block "
            "<!-- not run: REASON -->")
        argv = shlex.split(command)
        assert argv[0] == "gjk", f"{block.id}: `{command}` is not a gjk command"
        result = CliRunner(catch_exceptions=False).invoke(main, argv[1:], env={"COLUMNS": "100"})
        assert result.exit_code == code, (block.id, command, result.exit_code, result.stdout[-2000:],
                                          result.stderr[-2000:])
        if code == 2:
            assert result.stderr.startswith("gjk: error: "), result.stderr


def run_bash(block: Block, workdir: Path) -> None:
    """A block that builds on a setup block of its page (`<!-- setup: NAME -->`, variables and
    folders), marked `<!-- shell: NAME -->`: the setup and the block run in one bash, `set -eu`,
    with this Python's `gjk` first on PATH. Those that reach ../shared use its Panda."""
    name = block.mark("setup") or block.mark("shell")
    setup = next(b for b in BLOCKS if b.page == block.page and b.mark("setup") == name)
    script = setup.text if block is setup else f"{setup.text}\n{block.text}"
    if "shared" in script and not (SHARED / "robots" / "panda").is_dir():
        pytest.skip(f"{block.id} needs the Panda robot at {SHARED / 'robots' / 'panda'}")
    stated = block.mark("exit")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
           "COLUMNS": "100"}
    env.pop("AMENT_PREFIX_PATH", None)
    env.pop("ROS_PACKAGE_PATH", None)
    done = subprocess.run(["bash", "-euc", script], cwd=workdir, env=env, capture_output=True, text=True,
                          timeout=600)
    code = int(stated) if stated else 0
    assert done.returncode == code, (block.id, done.returncode, done.stdout[-2000:], done.stderr[-2000:])


def check_settings(block: Block, parsed: dict, workdir: Path) -> None:
    """A settings example (a pyproject.toml's [tool.gjk], or a gjk.toml) is read by gjk's settings
    reader: every key is one gjk knows, every value of its kind."""
    from gjkcli import config

    path = workdir / ("pyproject.toml" if "tool" in parsed else "gjk.toml")
    path.write_text(block.text, encoding="utf-8")
    try:
        assert config.load(path).path is not None
    finally:
        path.unlink()


def check_manifest(block: Block, workdir: Path) -> None:
    """A manifest example is read by gjk's manifest reader: every key is one gjk knows.

    The files it names are the reader's own (cell.glb, panda.srdf): each that the reader asks for
    is made in the folder, empty (an SRDF: a robot with no entries), and the manifest read again.
    """
    from gjkcli.scene import manifest

    path = workdir / "example.toml"
    made = set()
    while True:
        try:
            manifest.parse(block.text, path)
            return
        except manifest.ManifestError as error:
            name = re.search(r"no such file '([^']+)'", str(error))
            if not name or name.group(1) in made:
                raise
            made.add(name.group(1))
            target = workdir / name.group(1)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text('<robot name="r"/>\n' if target.suffix == ".srdf" else "", encoding="utf-8")
