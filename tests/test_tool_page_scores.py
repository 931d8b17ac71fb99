"""tools/page_scores.py: per-page scores dumped, compared, and set beside an anchor."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

import pytest
from tool_loader import load_tool

from corpus_crawler import ExtractConfig
from corpus_crawler.config import JustextParams

SENTENCE = (
    "The committee said that it would meet again in the spring, and that the members"
    " were not yet sure whether the plan could go ahead as it was first written. "
)
MENU = "<ul><li><a href='/a'>Home</a></li><li><a href='/b'>News</a></li></ul>"


def _tool() -> ModuleType:
    return load_tool("page_scores")


def _gold_set(root: Path) -> Path:
    """Two pages: an article beside a menu, and a post above a page footer's blurb."""
    folder = root / "tiny"
    (folder / "html").mkdir(parents=True)
    (folder / "gold").mkdir()
    pages = {
        "story": (f"<html><body>{MENU}<article><p>{SENTENCE * 3}</p></article></body></html>",
                  SENTENCE * 3),
        "footer": (
            f"<html><body><article><p>{SENTENCE * 2}</p></article>"
            f"<footer><p>About us. {SENTENCE * 3}</p></footer></body></html>",
            SENTENCE * 2,
        ),
    }  # fmt: skip
    records = []
    for page_id, (html, gold) in pages.items():
        (folder / "html" / f"{page_id}.html").write_text(html, encoding="utf-8")
        (folder / "gold" / f"{page_id}.txt").write_text(gold, encoding="utf-8")
        records.append({"id": page_id, "url": f"http://example.org/{page_id}"})
    lines = "".join(json.dumps(r) + "\n" for r in records)
    (folder / "manifest.jsonl").write_text(lines, encoding="utf-8")
    return folder


def test_dump_scores_every_page_and_diff_names_what_moved(tmp_path: Path) -> None:
    tool = _tool()
    gold = _gold_set(tmp_path)
    found = tool.dump([gold], ["seed", "article"], workers=1)
    assert set(found["scores"]) == {"tiny|seed", "tiny|article"}
    assert set(found["scores"]["tiny|article"]) == {"story", "footer"}
    assert found["scores"]["tiny|article"]["story"] > 0.9
    # a made-up "after" where one page fell
    after = json.loads(json.dumps(found))
    after["scores"]["tiny|article"]["story"] -= 0.5
    after["summary"]["tiny|article"][0] -= 0.25
    lines = tool.diff(found, after, moved=0.02)
    assert lines[0].startswith("tiny|seed: F1") and "0 pages up, 0 down" in lines[0]
    assert "0 pages up, 1 down" in lines[1]
    assert lines[2].strip().startswith("-0.500 story:")
    # the command line writes the same JSON
    out = tmp_path / "dump.json"
    assert (
        tool.main(["dump", str(out), "--gold", str(gold), "--row", "seed", "--workers", "1"]) == 0
    )
    assert json.loads(out.read_text())["scores"]["tiny|seed"] == found["scores"]["tiny|seed"]


def test_versus_lists_the_pages_a_row_trails_most(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A row that keeps nothing (every block shorter than its length_low) trails
    `seed` on both pages, the page where `seed` scores higher first."""
    tool = _tool()
    too_short = JustextParams(length_low=10_000, length_high=20_000)
    nothing = ExtractConfig(language="en", params=too_short)
    monkeypatch.setitem(tool.OURS, "nothing", nothing)
    gold = _gold_set(tmp_path)
    cache = tmp_path / "cache.json"
    lines = tool.versus(gold, "nothing", "seed", worst=5, cache=cache, workers=1)
    assert lines[0] == "tiny: page mean nothing 0.0000, seed 0.7767"
    assert [line.split()[1] for line in lines[1:]] == ["story:", "footer:"]
    assert lines[1].startswith("  -1.000 story: 0.000") and lines[1].endswith("/story")
    assert (tmp_path / "cache-tiny-seed.json").is_file()
    # the cached anchor gives the same lines
    assert tool.versus(gold, "nothing", "seed", worst=5, cache=cache, workers=1) == lines


def test_an_unknown_row_is_named_before_any_page_is_scored(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="no row or anchor named 'artcle'"):
        _tool().main(["dump", str(tmp_path / "x.json"), "--gold", str(tmp_path), "--row", "artcle"])
