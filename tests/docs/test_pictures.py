"""docs/pictures.md's HTML picture quotes its page's summary line (scripts/make_pictures.py writes
it from the page it screenshots): the line must be what the same scan says today, or the picture
and its caption are stale (run the script again)."""
from __future__ import annotations

import re
from pathlib import Path

from gjkcli.pipeline import run as pipeline
from gjkcli.report.page import summary

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "pictures.md"


def test_the_html_pictures_caption_is_what_the_scan_says_today():
    made = re.search(r"<!-- made by scripts/make_pictures.py -->\n(.*?)\n<!-- /made -->",
                     DOC.read_text(encoding="utf-8"), re.S)
    assert made, "docs/pictures.md has lost its generated caption's markers"
    quoted = re.search(r"`gjk scan --manifest samples/cell.toml` \((.*?)\), its first finding", made.group(1))
    assert quoted, made.group(1)
    found = pipeline.scan([], pipeline.Options(jobs=1), manifest=ROOT / "samples" / "cell.toml")
    today = summary(found).rsplit("; gjk ", 1)[0]
    assert quoted.group(1) == today, "run python scripts/make_pictures.py (its pictures are stale)"
    assert (ROOT / "docs" / "html.png").is_file()
