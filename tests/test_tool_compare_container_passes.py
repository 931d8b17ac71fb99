"""tools/compare_container_passes.py: both passes agree on a gold set, and a
compiled pass that disagrees is named and fails the run."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest
from tool_loader import load_tool

STORY = (
    "The committee met on Tuesday to discuss the new budget and the plans for the coming"
    " year, which were not accepted by all of the members who were there at the time. "
)


def _gold_set(folder: Path) -> Path:
    """One article page in an <article> with a byline header, a sidebar of links and
    a footer: every article rule has something to decide."""
    gold_set = folder / "gold" / "news"
    (gold_set / "html").mkdir(parents=True)
    (gold_set / "gold").mkdir()
    links = "".join(f'<li><a href="/s{i}">Another story number {i}</a></li>' for i in range(8))
    html = (
        "<html><body><main><article><header><p>By A. Writer, Tuesday</p></header>"
        f'<div itemprop="articleBody"><p>{STORY * 2}</p><p>{STORY}</p>'
        f'<div class="promo"><p>{STORY}</p></div>'
        # short for jusText on its own: the container moves it up
        "<p>The vote is next week.</p></div></article></main>"
        f'<aside class="sidebar"><ul>{links}</ul></aside><footer><p>Contact us</p></footer>'
        "</body></html>"
    )
    (gold_set / "html" / "1.html").write_text(html, encoding="utf-8")
    (gold_set / "gold" / "1.txt").write_text(STORY * 3, encoding="utf-8")
    record = {"id": "1", "url": None, "bytes": len(html)}
    (gold_set / "manifest.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")
    return folder / "gold"


def test_the_passes_agree_on_a_page_and_under_a_variant(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gold = str(_gold_set(tmp_path))
    argv = ["--gold", gold, "--variant", '{"join_segments": false}']
    assert load_tool("compare_container_passes").main(argv) == 0
    out = capsys.readouterr().out
    assert "corpus: 1 pages" in out and "article: 1 pages" in out
    assert "article-comments: 1 pages" in out
    # each of the three container presets, shipped and under the variant
    assert out.count(": 0 differ;") == 6, out
    # the pass moved blocks, so agreeing was not agreeing on nothing
    assert " 0 blocks moved" not in out, out


def test_a_compiled_pass_that_disagrees_fails_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    fast = importlib.import_module("corpus_crawler.classify")._fast
    assert fast is not None, "corpus_crawler._classify_fast was not compiled"
    # a compiled pass that moves nothing
    monkeypatch.setattr(fast, "container_pass", lambda paragraphs, *args: paragraphs)
    gold = str(_gold_set(tmp_path))
    assert load_tool("compare_container_passes").main(["--gold", gold, "--preset", "article"]) == 1
    assert "1 differ (news/1)" in capsys.readouterr().out


def test_a_variant_that_is_not_an_object_is_refused(tmp_path: Path) -> None:
    gold = str(_gold_set(tmp_path))
    with pytest.raises(SystemExit) as exc:
        load_tool("compare_container_passes").main(["--gold", gold, "--variant", "[1]"])
    assert exc.value.code == 2
