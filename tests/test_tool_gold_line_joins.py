"""tools/gold_line_joins.py: finds golds that join words at the HTML's line breaks."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

from tool_loader import load_tool

from corpus_crawler import ExtractConfig, Preset


def _tool() -> ModuleType:
    return load_tool("gold_line_joins")


LINES = [
    "The committee met on Tuesday to discuss the new budget and the plans for",
    "the coming year, which were not accepted by all of the members who were",
    "there. After a long debate the chairman said that the vote would take place",
    "in the spring, when the final figures of the accounts are known to all.",
]


def _page(body: str) -> bytes:
    return f"<html><body><div id='main'><p>{body}</p></div></body></html>".encode()


def test_join_keeps_preformatted_text_and_joins_running_text() -> None:
    tool = _tool()
    html = (
        b"<html><body><p>one\n  two</p><pre>three\nfour</pre>"
        b"<p>five <b>six</b>\nseven</p></body></html>"
    )
    joined = tool.join_line_breaks(html).decode()
    assert "<p>onetwo</p>" in joined
    assert "<pre>three\nfour</pre>" in joined
    # at a node's edge the rendering's choice is unknown: left as served
    assert "</b>\nseven" in joined


def test_names_the_page_whose_gold_joined_words(tmp_path: Path) -> None:
    tool = _tool()
    gold_set = tmp_path / "set"
    (gold_set / "html").mkdir(parents=True)
    (gold_set / "gold").mkdir()
    pages = {
        # the gold joined the words at the HTML's line breaks
        "joined": (_page("\n".join(LINES)), "".join(LINES)),
        # the gold spaced them, as a browser renders them
        "spaced": (_page("\n".join(LINES)), " ".join(LINES)),
    }
    with (gold_set / "manifest.jsonl").open("w") as manifest:
        for page_id, (html, gold) in pages.items():
            (gold_set / "html" / f"{page_id}.html").write_bytes(html)
            (gold_set / "gold" / f"{page_id}.txt").write_text(gold)
            manifest.write(json.dumps({"id": page_id}) + "\n")
    config = ExtractConfig(preset=Preset.CORPUS, language="en").checked()
    rows = {row.page_id: row for row in tool.score_pages(str(gold_set), config)}
    assert rows["joined"].joined.shingles.f1 == 1.0
    assert rows["joined"].gain() > 0.2  # the tool's default margin
    assert rows["spaced"].as_served.shingles.f1 > 0.95
    assert rows["spaced"].gain() < 0


def test_join_survives_control_characters_and_joins_after_comments() -> None:
    """A page of CleanEval's final set holds a control character that lxml parses but
    refuses to set again (the tool crashed on it); a comment's tail is rendered text."""
    tool = _tool()
    html = b"<html><body><p>one\x0b\n two<!-- c -->three\nfour</p></body></html>"
    joined = tool.join_line_breaks(html).decode()
    assert "onetwo<!-- c -->threefour" in joined
