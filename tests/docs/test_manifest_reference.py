"""The scan page's table of manifest keys names every key the manifest reader accepts, and no
other: a key added to gjkcli.scene.manifest without a line in the docs fails here."""
from __future__ import annotations

import re
from pathlib import Path

from gjkcli.scene import manifest

PAGE = Path(__file__).resolve().parents[2] / "docs" / "scan.md"


def documented() -> set[tuple[str, str]]:
    keys = set()
    for line in PAGE.read_text(encoding="utf-8").splitlines():
        row = re.match(r"^\| (top level|`\[\[(\w+)\]\]`) \| (.+?) \| .+ \|$", line)
        if row:
            table = row.group(2) or "top level"
            keys |= {(table, key) for key in re.findall(r"`(\w+)`", row.group(3))}
    return keys


def test_every_manifest_key_is_documented_and_no_other():
    tables = set(manifest.TABLE_KEYS)
    accepted = {("top level", k) for k in manifest.TOP_KEYS if k not in tables}
    accepted |= {(table, k) for table, keys in manifest.TABLE_KEYS.items() for k in keys}
    assert documented() == accepted, (documented() ^ accepted)
