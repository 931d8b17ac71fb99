"""benchmarks/extractor_table.py's cross-validation of the `article-comments` preset:
tuned on a set of its own kind (posts with their comments in the gold) and on no
other, since the bundled golds drop comments."""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import ModuleType

import pytest
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


def test_speed_is_timed_in_interleaved_rounds_against_the_parse(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The speed columns come from their own rounds (page by page, the parse and
    each row in turn), not from the scoring pass: each row has one time per round
    and set, and x parse time is the median of the same-round ratios."""
    table = _extractor_table()
    gold = tmp_path / "gold"
    _posts(gold, "readability", pages=6)
    _posts(gold, "cleanportaleval", pages=4)
    out = tmp_path / "table.json"
    rows = ["justext (reference)", "justext (corpus)"]
    argv = ["--gold", str(gold), "--lang", "en", "--no-tuning", "--rounds", "3"]
    argv += [arg for row in rows for arg in ("--only", row)] + ["--json", str(out)]
    assert table.main(argv) == 0
    printed = capsys.readouterr().out
    assert "best of 3 interleaved rounds, cpu clock" in printed
    assert "| all sets | pages/s | x parse time | x parse in each of 3 rounds |" in printed
    data = json.loads(out.read_text(encoding="utf-8"))
    for row in rows:
        # the all-sets table: name, pages/s, x parse time, the ratio of each round
        speed_table = printed.split("x parse in each of 3 rounds")[1].splitlines()
        line = next(line for line in speed_table if line.startswith(f"| {row} | "))
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        each = [float(r) for r in cells[3].split()]
        assert len(each) == 3 and all(r > 0 for r in each), line
        assert float(cells[2]) == pytest.approx(sorted(each)[1], abs=0.051), line
        for set_name in ("readability", "cleanportaleval"):
            cell = data[row][set_name]
            assert len(cell["speed_seconds"]) == 3 and min(cell["speed_seconds"]) > 0
            assert cell["x_parse"] > 0


def test_speed_with_several_workers_reports_the_scoring_pass_without_a_ratio(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = _extractor_table()
    gold = tmp_path / "gold"
    _posts(gold, "readability", pages=4)
    argv = ["--gold", str(gold), "--lang", "en", "--no-tuning", "-j", "2"]
    assert table.main([*argv, "--only", "justext (corpus)"]) == 0
    printed = capsys.readouterr().out
    assert "speed: the scoring pass (several workers)" in printed
    assert "x parse time" not in printed


def test_the_template_caching_presets_are_timed_cold_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 13's 4x bound for a new site's pages: the `corpus` row is timed again with
    the template caches emptied before every call; `reference` caches nothing per
    template and has no cold row. `--no-cold` leaves the rows out."""
    table = _extractor_table()
    gold = tmp_path / "gold"
    _posts(gold, "readability", pages=4)
    out = tmp_path / "table.json"
    argv = ["--gold", str(gold), "--lang", "en", "--no-tuning", "--rounds", "2"]
    argv += ["--only", "justext (reference)", "--only", "justext (corpus)"]
    assert table.main([*argv, "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    cold = printed.split("| all sets, template caches emptied before every page |")[1]
    rows = [line for line in cold.splitlines() if line.startswith("| justext")]
    assert [line.split(" | ")[0] for line in rows] == ["| justext (corpus), cold"]
    cells = [cell.strip() for cell in rows[0].strip("|").split("|")]
    assert float(cells[1]) > 0 and float(cells[2]) > 0 and len(cells[3].split()) == 2
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["justext (corpus)"]["readability"]["cold_x_parse"] > 0
    assert "cold_x_parse" not in data["justext (reference)"]["readability"]
    assert table.main([*argv, "--no-cold"]) == 0
    assert "template caches emptied" not in capsys.readouterr().out


def test_cold_rounds_empty_the_caches_before_every_call(tmp_path: Path) -> None:
    table = _extractor_table()
    gold_set = load_gold_set(_posts(tmp_path, "readability", pages=3))
    calls: list[str] = []
    config = table.ExtractConfig(preset=Preset.CORPUS, language="en")
    speed = table.measure_speed(
        [gold_set], {"corpus": config}, 2, before=lambda: calls.append("emptied")
    )
    # before every timed call: 3 pages x 2 rounds x (the parse + the row)
    assert len(calls) == 3 * 2 * 2
    assert set(speed.seconds) == {table.PARSE, "corpus"}
