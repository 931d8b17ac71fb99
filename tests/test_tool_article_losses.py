"""tools/article_losses.py: either preset's figures on a gold set, and an option
overridden for a run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tool_loader import load_tool

from corpus_crawler.model import Paragraph, ParagraphClass

STORY = (
    "The committee met on Tuesday to discuss the new budget and the plans for the coming"
    " year, which were not accepted by all of the members who were there at the time."
)
REPLY = (
    "I think that the committee is wrong about this, and that the plan should have been"
    " put to the vote of all the members before it was sent to the town council. "
)


def _gold_set(folder: Path) -> Path:
    """One page: a short post, its share links, and a comment thread longer than the
    post (each comment with its "Reply" link); its gold is the post alone (an article
    gold)."""
    gold_set = folder / "gold" / "blogs"
    (gold_set / "html").mkdir(parents=True)
    (gold_set / "gold").mkdir()
    replies = "".join(
        f'<li><p>{REPLY * 2}</p><p><a href="/reply?to={i}">Reply</a></p></li>' for i in range(4)
    )
    share = "".join(f'<li><a href="/s{i}">Share on network {i}</a></li>' for i in range(4))
    html = (
        f'<html><body><div class="post"><h1>The plan</h1><p>{STORY}</p></div>'
        f'<ul class="share">{share}</ul>'
        f'<div id="comments"><ol class="commentlist">{replies}</ol></div></body></html>'
    )
    (gold_set / "html" / "1.html").write_text(html, encoding="utf-8")
    (gold_set / "gold" / "1.txt").write_text(f"The plan\n{STORY}\n", encoding="utf-8")
    record = {"id": "1", "url": None, "bytes": len(html)}
    (gold_set / "manifest.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")
    return folder / "gold"


def _figures(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    assert load_tool("article_losses").main(argv) == 0
    return capsys.readouterr().out.splitlines()[0]


def test_each_preset_and_an_overridden_option(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gold = str(_gold_set(tmp_path))
    article = _figures(capsys, ["--gold", gold, "--worst", "0"])
    assert article.startswith("blogs: F1 1.0000 P 1.0000 R 1.0000 (1 pages)"), article
    # corpus keeps the comments too: full recall, lower precision
    corpus = _figures(capsys, ["--gold", gold, "--preset", "corpus", "--worst", "0"])
    assert " R 1.0000 " in corpus and " P 1.0000 " not in corpus
    # the retry without its aside rule: the comments become the article (the post,
    # between the title and them, is kept as its standfirst)
    without = _figures(
        capsys, ["--gold", gold, "--worst", "0", "--option", "retry_keeps_asides_out=false"]
    )
    assert without.startswith("blogs: F1 0."), without
    assert float(without.split()[4]) < 0.2, without  # precision: the thread is kept


def test_the_block_oracle_keeps_the_blocks_in_the_gold(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--oracle` scores the best any decision over the page's blocks could do: here
    the post alone, whatever the preset kept (corpus keeps the comments too). Its
    recall is under 1: the gold's shingles across its heading and first sentence
    span two blocks."""
    gold = str(_gold_set(tmp_path))
    argv = ["--gold", gold, "--preset", "corpus", "--worst", "0", "--oracle"]
    assert load_tool("article_losses").main(argv) == 0
    preset, oracle = capsys.readouterr().out.splitlines()[:2]
    assert oracle.startswith("  block oracle: F1 ") and " P 1.0000 " in oracle, oracle
    assert " P 1.0000 " not in preset
    assert float(oracle.split()[3]) > float(preset.split()[2])


def test_the_oracle_keeps_a_block_only_when_most_of_it_is_in_the_gold() -> None:
    tool = load_tool("article_losses")
    bad = ParagraphClass.BAD
    words = "one two three four five six seven eight nine ten eleven twelve"
    paragraphs = [
        Paragraph(STORY, bad, bad),
        Paragraph(REPLY, bad, bad),
        Paragraph(words, bad, bad),
    ]
    # the third block has 9 shingles of 4 words: 5 of them in the gold is more than half
    kept = tool.oracle_text(paragraphs, f"{STORY}\none two three four five six seven eight")
    assert kept == f"{STORY}\n{words}"
    # 4 of 9 is not
    assert tool.oracle_text(paragraphs, f"{STORY}\none two three four five six seven") == STORY


def test_the_oracle_lists_the_pages_the_decisions_lose(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With `--oracle`, the pages farthest below their own oracle are listed: corpus
    keeps the thread beside the post, and the oracle keeps the post alone. article,
    which keeps the post alone, is not below it."""
    gold = str(_gold_set(tmp_path))
    argv = ["--gold", gold, "--worst", "1", "--blocks", "0", "--oracle"]
    assert load_tool("article_losses").main([*argv, "--preset", "corpus"]) == 0
    below = [line for line in capsys.readouterr().out.splitlines() if "below its oracle" in line]
    assert len(below) == 1 and ": 1: F1 0." in below[0], below
    gap = float(below[0].split("by ")[1].split()[0])
    assert gap > 0.3, below  # precision: the thread is 8 times the post
    assert load_tool("article_losses").main(argv) == 0
    assert "below its oracle" not in capsys.readouterr().out
