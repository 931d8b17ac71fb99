"""tools/snippet_eval.py: our presets on trafilatura's snippet-annotated pages."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

import pytest
from tool_loader import load_tool

SENTENCE = (
    "The committee said that it would meet again in the spring, and that the members"
    " were not yet sure whether the plan could go ahead as it was first written. "
)
MENU = "<ul><li><a href='/a'>Home page</a></li><li><a href='/b'>All the news</a></li></ul>"


def _tool() -> ModuleType:
    return load_tool("snippet_eval")


def _folder(root: Path) -> Path:
    """trafilatura's layout: evaldata.json, and the pages under cache/ or eval/."""
    (root / "cache").mkdir()
    (root / "eval").mkdir()
    story = f"<html><body>{MENU}<article><p>{SENTENCE * 3}</p></article></body></html>"
    (root / "cache" / "story.html").write_text(story, encoding="utf-8")
    blurb = f"<html><body><article><p>{SENTENCE * 2}</p></article>{MENU}</body></html>"
    (root / "eval" / "blurb.html").write_text(blurb, encoding="utf-8")
    annotations = {
        "https://example.org/story": {
            "file": "story.html",
            "with": ["would meet again in   the spring", "as it was first written."],
            "without": ["Home page"],
        },
        "https://example.org/blurb": {
            "file": "blurb.html",
            "with": ["not yet sure whether"],
            "without": ["All the news", "Home page"],
        },
    }
    (root / "evaldata.json").write_text(json.dumps(annotations), encoding="utf-8")
    return root


def test_a_passage_counts_when_it_is_in_the_output_after_white_space_folds() -> None:
    tool = _tool()
    page = tool.SnippetPage("u", "f.html", b"", ("a  b\nc", "missing"), ("menu",))
    counts = tool.count(page, "x a b c y\nmenu")
    assert (counts.tp, counts.fp, counts.fn, counts.tn) == (1, 1, 1, 0)
    assert counts.precision == 0.5 and counts.recall == 0.5 and counts.f1 == 0.5
    assert tool.count(page, "").f1 == 0.0
    # a passage copied with soft hyphens matches the text without them, on either side
    hyphenated = tool.SnippetPage("u", "f.html", b"", ("Werk\u00adzeug\u00adtypen",), ("x",))
    assert tool.count(hyphenated, "Die Werkzeugtypen").tp == 1
    assert tool.count(hyphenated, "Die Werk\u00adzeugtypen").tp == 1


def test_the_table_and_the_pages_a_row_trails_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tool = _tool()
    folder = _folder(tmp_path)
    pages = tool.load_pages(folder)
    assert [p.file for p in pages] == ["blurb.html", "story.html"]
    assert {p.half for p in pages} <= {"read", "measured"}
    argv = [str(folder), "--row", "article", "--anchor", "seed", "--workers", "1"]
    assert tool.main(argv) == 0
    table = capsys.readouterr().out
    # the article preset finds the three passages and leaks no menu item
    assert "| article | 1.000 | 1.000 | **1.0000** | 3/3 | 0/3 | 0 |" in table
    assert "| seed |" in table
    # a row beside itself trails nowhere
    assert tool.main([*argv, "--versus", "article"]) == 0
    listed = capsys.readouterr().out.split("trails article most (found - leaked):")[1]
    assert listed.strip() == ""


def test_a_missing_page_is_named(tmp_path: Path) -> None:
    tool = _tool()
    folder = _folder(tmp_path)
    (folder / "eval" / "blurb.html").unlink()
    with pytest.raises(SystemExit, match=r"blurb\.html is in neither"):
        tool.load_pages(folder)
    with pytest.raises(SystemExit, match=r"evaldata\.json: not found"):
        tool.load_pages(tmp_path / "cache")
