"""benchmarks/extractor_table.py's cross-validation of the `article-comments` preset:
tuned on a set of its own kind (posts with their comments in the gold) and on no
other, since the bundled golds drop comments."""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import ModuleType

from tool_loader import BENCHMARKS, load_tool

from corpus_crawler import Preset
from corpus_crawler.evaluate import load_gold_set

STORY = (
    "The committee met on Tuesday to discuss the new budget and the plans for the coming"
    " year, which were not accepted by all of the members who were there at the time. "
)
REPLIES = (
    "I agree with you, and I think that it is the best plan we have had in years.",
    "Thanks for writing this up, it was more than I had heard about it at the meeting.",
    "We were there too and it was not at all as the paper said it was on the day.",
)


def _extractor_table() -> ModuleType:
    return load_tool("extractor_table", BENCHMARKS)


def _posts(folder: Path, name: str, pages: int = 10) -> Path:
    """Posts whose gold is the story and its thread of short replies, each reply
    between its author's line and a Reply link (jusText alone drops most of them)."""
    gold_set = folder / name
    (gold_set / "html").mkdir(parents=True)
    (gold_set / "gold").mkdir()
    records = []
    for page in range(pages):
        thread = "".join(
            f'<li><div class="author">Reader {i} says:</div><p>{reply}</p>'
            f'<a href="/reply/{page}/{i}">Reply</a></li>'
            for i, reply in enumerate(REPLIES)
        )
        html = (
            f"<html><body><div class='post'><h1>Story {page}</h1><p>{STORY * 2}</p>"
            f"<p>{STORY}</p></div>"
            f'<div id="comments"><ol class="commentlist">{thread}</ol></div></body></html>'
        )
        (gold_set / "html" / f"{page}.html").write_text(html, encoding="utf-8")
        gold = "\n".join([STORY * 2, STORY, *REPLIES])
        (gold_set / "gold" / f"{page}.txt").write_text(gold, encoding="utf-8")
        records.append(json.dumps({"id": str(page), "url": None, "bytes": len(html)}))
    (gold_set / "manifest.jsonl").write_text("\n".join(records) + "\n", encoding="utf-8")
    return gold_set


def test_article_comments_is_cross_validated_on_posts_with_their_comments(
    tmp_path: Path,
) -> None:
    table = _extractor_table()
    gold_set = load_gold_set(_posts(tmp_path, "dragnet-with-comments"))
    lines = table.tuning_tables([gold_set], "en", [Preset.ARTICLE_COMMENTS])
    text = "\n".join(lines)
    chosen = re.search(r"chosen per fold: (.*)", text)
    assert chosen is not None, text
    folds = chosen.group(1).split("; ")
    assert len(folds) == 5
    # every fold lifts the thread: "as `article`" (None) keeps no reply
    assert all(fold in ("comments 1", "comments 2") for fold in folds), folds
    # and the lift is real (ties would go to the shipped point): the replies are kept,
    # where `article` keeps the story only (recall 0.63 on these pages)
    for row in ("in-sample, shipped values", "cross-validated (5-fold)"):
        cell = re.search(re.escape(row) + r" \| ([0-9.]+) \(([0-9.]+) / ([0-9.]+)\)", text)
        assert cell is not None, text
        assert float(cell.group(3)) > 0.9, text


def test_article_comments_is_not_tuned_on_sets_of_another_kind(tmp_path: Path) -> None:
    """On the bundled sets (or any set without comments in its gold) the grid would
    choose "no comments" by definition: the table says it did not tune, and why."""
    table = _extractor_table()
    gold_set = load_gold_set(_posts(tmp_path, "readability"))
    lines = table.tuning_tables([gold_set], "en", [Preset.ARTICLE_COMMENTS])
    assert lines[0] == "**article-comments**: not tuned here (its sets: dragnet-with-comments)"
    assert not any("chosen per fold" in line for line in lines)
