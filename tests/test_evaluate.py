"""The evaluation metric, gold-set loading and `corpus-crawler evaluate`.

Expected values are computed by hand in the comments; the jusText test checks
the implementation against the published reference scores of the gold sets.
"""

from __future__ import annotations

import json
import textwrap
from collections import Counter
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

import pytest

from corpus_crawler.cli import main
from corpus_crawler.evaluate import (
    GoldSetError,
    Overlap,
    Summary,
    bag_of_words,
    evaluate_set,
    find_gold_sets,
    format_pages,
    format_table,
    load_gold_set,
    page_scores,
    shingles,
    tokens,
)


def close(value: float | None, expected: Fraction | float) -> bool:
    return value is not None and abs(value - float(expected)) < 1e-12


# --------------------------------------------------------------------------- shingles


def test_shingles_are_4_token_windows() -> None:
    assert shingles("a b c d e") == Counter({("a", "b", "c", "d"): 1, ("b", "c", "d", "e"): 1})


def test_shingle_tokens_are_word_runs_and_ignore_punctuation_and_lines() -> None:
    assert shingles("a, b\n\nc. (d)") == shingles("a b c d")
    assert shingles("don't stop") == Counter({("don", "t", "stop"): 1})


def test_shingles_keep_case() -> None:
    assert shingles("The cat sat down") != shingles("the cat sat down")


def test_shingles_of_unicode_words() -> None:
    assert shingles("čeština je krásná řeč") == Counter({("čeština", "je", "krásná", "řeč"): 1})


def test_text_shorter_than_a_shingle_is_one_shingle() -> None:
    # the benchmark keeps the 1..3 tokens it has as one short shingle
    assert shingles("hello world") == Counter({("hello", "world"): 1})
    assert shingles("a b c d") == Counter({("a", "b", "c", "d"): 1})


def test_empty_or_wordless_text_has_no_shingle() -> None:
    assert shingles("") == Counter()
    assert shingles(" -- ... !! \n") == Counter()


def test_repeated_windows_are_counted() -> None:
    # a b c d a b c d -> abcd, bcda, cdab, dabc, abcd
    assert shingles("a b c d a b c d")[("a", "b", "c", "d")] == 2
    assert sum(shingles("a b c d a b c d").values()) == 5


def test_bag_of_words_is_lower_cased() -> None:
    assert bag_of_words("The cat, the HAT") == Counter({"the": 2, "cat": 1, "hat": 1})


def test_by_characters_han_and_kana_are_one_token_each() -> None:
    text = "中文网页，Web2 页面。ひらがな"
    assert tokens(text) == ["中文网页", "Web2", "页面", "ひらがな"]
    assert tokens(text, characters=True) == [*"中文网页", "Web2", *"页面", *"ひらがな"]
    # a gold wrapped in the middle of a clause still matches the page's unwrapped text
    gold, page = (
        "我在湖南张家界开一个全省教学研究\n会议。",
        "我在湖南张家界开一个全省教学研究会议。",
    )
    assert page_scores(page, gold, characters=True).f1 == 1.0
    assert page_scores(page, gold).f1 == 0.0
    # other scripts are split as before
    assert shingles("a b c d e", characters=True) == shingles("a b c d e")
    assert bag_of_words("Ab 中中", characters=True) == Counter({"ab": 1, "中": 2})


# --------------------------------------------------------------------------- page scores


def test_identical_texts_score_one() -> None:
    score = page_scores(
        "The quick brown fox jumps over\nthe lazy dog.",
        "The quick brown fox jumps over the lazy dog",
    )
    assert (score.precision, score.recall, score.f1, score.bow_f1) == (1.0, 1.0, 1.0, 1.0)


def test_disjoint_texts_score_zero() -> None:
    score = page_scores("one two three four five", "six seven eight nine ten")
    assert (score.precision, score.recall, score.f1, score.bow_f1) == (0.0, 0.0, 0.0, 0.0)


def test_partial_overlap_exact_fractions() -> None:
    # gold shingles: abcd bcde cdef; predicted: abcd bcde cdex dexy -> tp 2, fp 2, fn 1
    score = page_scores("a b c d e x y", "a b c d e f")
    assert score.shingles == Overlap(true_positives=2, false_positives=2, false_negatives=1)
    assert close(score.precision, Fraction(1, 2))
    assert close(score.recall, Fraction(2, 3))
    assert close(score.f1, Fraction(4, 7))
    # words: tp a b c d e = 5, fp x y = 2, fn f = 1 -> 2*5/(7+6)
    assert close(score.bow_f1, Fraction(10, 13))


def test_overlap_counts_multiset_copies() -> None:
    gold = "a b c d a b c d"  # abcd x2, bcda, cdab, dabc
    once = page_scores("a b c d", gold)
    assert once.shingles == Overlap(1, 0, 4)
    assert close(once.precision, 1)
    assert close(once.recall, Fraction(1, 5))
    assert close(once.f1, Fraction(1, 3))
    # abcd x3, bcda x2, cdab x2, dabc x2: only 2 + 1 + 1 + 1 of those 9 are in the gold
    thrice = page_scores("a b c d a b c d a b c d", gold)
    assert thrice.shingles == Overlap(5, 4, 0)
    assert close(thrice.precision, Fraction(5, 9))
    assert close(thrice.recall, 1)
    assert close(thrice.f1, Fraction(5, 7))


def test_case_matters_for_shingles_not_for_words() -> None:
    score = page_scores("The cat", "the cat sat")
    assert score.f1 == 0.0  # ("The", "cat") is not ("the", "cat", "sat")
    assert close(score.bow_f1, Fraction(4, 5))  # words tp 2, fp 0, fn 1


def test_empty_gold_with_output_scores_zero_precision_and_no_recall() -> None:
    score = page_scores("some boilerplate kept by mistake", "")
    assert score.precision == 0.0
    assert score.recall is None
    assert score.f1 == 0.0
    assert score.bow_f1 == 0.0


def test_empty_output_with_gold_scores_zero_recall_and_no_precision() -> None:
    score = page_scores("", "the article text that was missed")
    assert score.precision is None
    assert score.recall == 0.0
    assert score.f1 == 0.0


def test_empty_output_for_empty_gold_scores_one() -> None:
    score = page_scores("", "  ")
    assert (score.precision, score.recall, score.f1, score.bow_f1) == (None, None, 1.0, 1.0)


# --------------------------------------------------------------------------- set summary


def test_summary_averages_precision_and_recall_over_defined_pages() -> None:
    scores = [
        page_scores("a b c d e x y", "a b c d e f"),  # P 1/2, R 2/3, BOW F1 10/13
        page_scores("", "missed text here entirely"),  # P -, R 0, BOW F1 0
        page_scores("kept boilerplate words here", ""),  # P 0, R -, BOW F1 0
        page_scores("", ""),  # P -, R -, BOW F1 1
    ]
    summary = Summary.of(scores)
    assert summary.pages == 4
    assert close(summary.precision, Fraction(1, 4))  # (1/2 + 0) / 2
    assert close(summary.recall, Fraction(1, 3))  # (2/3 + 0) / 2
    assert close(summary.f1, Fraction(2, 7))  # 2 * 1/4 * 1/3 / (1/4 + 1/3)
    assert close(summary.bow_f1, Fraction(23, 52))  # (10/13 + 0 + 0 + 1) / 4


def test_summary_f1_is_not_the_mean_of_page_f1s() -> None:
    scores = [page_scores("a b c d", "a b c d e f g"), page_scores("a b c d e f g", "a b c d")]
    # P: (1 + 1/4) / 2 = 5/8, R: (1/4 + 1) / 2 = 5/8, F1 5/8; mean page F1 is 2/5
    assert close(Summary.of(scores).f1, Fraction(5, 8))


def test_summary_of_nothing_is_zero() -> None:
    assert Summary.of([]) == Summary(0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


# --------------------------------------------------------------------------- gold sets


ARTICLE = (
    "The committee met on Tuesday to discuss the new budget for the coming year, and after"
    " a long debate the members agreed that the money should go to the schools first."
)
ARTICLE_2 = (
    "Several of the members said that they had been waiting for this decision for a long"
    " time, and that they were happy with the way in which it had been reached."
)


def make_gold_set(root: Path, name: str = "tiny", with_manifest: bool = True) -> Path:
    """Two pages: an article with a menu, and a page that is all navigation (empty gold)."""
    set_dir = root / name
    (set_dir / "html").mkdir(parents=True)
    (set_dir / "gold").mkdir()
    menu = "".join(f'<li><a href="/{w}">{w.title()}</a></li>' for w in ("home", "news", "sport"))
    article = f"""<html><head><title>Budget</title></head><body>
        <ul>{menu}</ul><h1>Budget agreed</h1><p>{ARTICLE}</p><p>{ARTICLE_2}</p>
        <div class="footer"><a href="/c">Copyright 2024</a> | <a href="/p">Privacy</a></div>
        </body></html>"""
    (set_dir / "html" / "article.html").write_bytes(article.encode("utf-8"))
    (set_dir / "gold" / "article.txt").write_text(f"{ARTICLE}\n{ARTICLE_2}\n", encoding="utf-8")
    (set_dir / "html" / "menu.html").write_bytes(
        f"<html><body><ul>{menu}</ul></body></html>".encode()
    )
    (set_dir / "gold" / "menu.txt").write_text("", encoding="utf-8")
    if with_manifest:
        records = [
            {"id": "article", "url": "https://example.org/budget"},
            {"id": "menu", "url": "https://example.org/"},
        ]
        (set_dir / "manifest.jsonl").write_text(
            "".join(json.dumps(r) + "\n" for r in records), encoding="utf-8"
        )
    return set_dir


def paragraphs_of_p_tags(html: bytes, url: str | None) -> str:
    """A stand-in extractor: the text of <p> elements."""
    import lxml.html

    return "\n".join(p.text_content() for p in lxml.html.fromstring(html).iter("p"))


def test_load_gold_set_reads_manifest_order_urls_and_bytes(tmp_path: Path) -> None:
    gold = load_gold_set(make_gold_set(tmp_path))
    assert [p.id for p in gold.pages] == ["article", "menu"]
    assert gold.pages[0].url == "https://example.org/budget"
    assert gold.pages[0].gold.startswith("The committee met")
    assert gold.pages[0].html.startswith(b"<html>")


def test_gold_set_without_manifest_uses_html_file_names(tmp_path: Path) -> None:
    gold = load_gold_set(make_gold_set(tmp_path, with_manifest=False))
    assert [p.id for p in gold.pages] == ["article", "menu"]
    assert gold.pages[0].url is None


def test_folder_that_is_not_a_gold_set_is_explained(tmp_path: Path) -> None:
    (tmp_path / "html").mkdir()
    with pytest.raises(GoldSetError, match=r"no gold/ folder.*gold/<id>\.txt"):
        find_gold_sets(tmp_path)
    with pytest.raises(GoldSetError, match="no such folder"):
        find_gold_sets(tmp_path / "missing")


def test_folder_of_gold_sets_expands_to_its_sets(tmp_path: Path) -> None:
    make_gold_set(tmp_path, "b")
    make_gold_set(tmp_path, "a")
    (tmp_path / "notes").mkdir()
    assert [p.name for p in find_gold_sets(tmp_path)] == ["a", "b"]


def test_missing_gold_file_is_named(tmp_path: Path) -> None:
    set_dir = make_gold_set(tmp_path)
    (set_dir / "gold" / "menu.txt").unlink()
    with pytest.raises(GoldSetError, match=r"page 'menu' has no gold/menu\.txt"):
        load_gold_set(set_dir)


def test_bad_manifest_line_is_named(tmp_path: Path) -> None:
    set_dir = make_gold_set(tmp_path)
    with (set_dir / "manifest.jsonl").open("a") as manifest:
        manifest.write('{"url": "https://example.org/x"}\n')
    with pytest.raises(GoldSetError, match=r"manifest\.jsonl:3: .*string \"id\""):
        load_gold_set(set_dir)


def test_a_manifest_may_score_its_pages_by_characters(tmp_path: Path) -> None:
    set_dir = tmp_path / "zh"
    (set_dir / "html").mkdir(parents=True)
    (set_dir / "gold").mkdir()
    (set_dir / "html" / "a.html").write_bytes(
        "<meta charset=utf-8><p>我们在这里讨论问题。</p>".encode()
    )
    (set_dir / "gold" / "a.txt").write_text("我们在这里讨论\n问题。\n", encoding="utf-8")
    manifest = set_dir / "manifest.jsonl"
    manifest.write_text(json.dumps({"id": "a", "tokens": "characters"}) + "\n", encoding="utf-8")
    assert evaluate_set(set_dir, paragraphs_of_p_tags).summary.f1 == 1.0
    manifest.write_text(json.dumps({"id": "a"}) + "\n", encoding="utf-8")
    assert evaluate_set(set_dir, paragraphs_of_p_tags).summary.f1 == 0.0
    manifest.write_text(json.dumps({"id": "a", "tokens": "chars"}) + "\n", encoding="utf-8")
    with pytest.raises(GoldSetError, match=r"manifest\.jsonl:1: \"tokens\" must be one of"):
        load_gold_set(set_dir)


def test_bundled_gold_data_has_the_three_sets(gold_dir: Path, gold_pages: Callable) -> None:
    assert [p.name for p in find_gold_sets(gold_dir)] == [
        "cleaneval-dev",
        "cleanportaleval",
        "readability",
    ]
    counts = {
        name: len(list(gold_pages(name)))
        for name in ("cleaneval-dev", "cleanportaleval", "readability")
    }
    assert counts == {"cleaneval-dev": 58, "cleanportaleval": 71, "readability": 116}
    assert len(list((gold_dir / "cleaneval-dev" / "gold-marked").glob("*.txt"))) == 58
    page_id, html, gold, record = next(iter(gold_pages("cleanportaleval")))
    assert record["id"] == page_id
    assert len(html) == record["bytes"]  # bytes as served, untouched
    assert len(gold.strip()) == record["gold_chars"]


# --------------------------------------------------------------------------- evaluate_set


def test_evaluate_set_scores_each_page_with_a_function(tmp_path: Path) -> None:
    report = evaluate_set(make_gold_set(tmp_path), paragraphs_of_p_tags)
    assert [r.id for r in report.rows] == ["article", "menu"]
    article, menu = report.rows
    assert (article.score.f1, article.error) == (1.0, "")
    assert menu.predicted_chars == 0 and menu.score.f1 == 1.0  # nothing to keep, nothing kept
    assert (report.summary.precision, report.summary.recall, report.summary.f1) == (1.0, 1.0, 1.0)
    assert report.pages == 2 and report.seconds > 0 and report.pages_per_second > 0
    assert report.html_bytes == sum(len(p.read_bytes()) for p in (tmp_path / "tiny/html").iterdir())


def test_evaluate_set_passes_manifest_urls(tmp_path: Path) -> None:
    seen: list[str | None] = []

    def record_url(html: bytes, url: str | None) -> str:
        seen.append(url)
        return ""

    evaluate_set(make_gold_set(tmp_path), record_url)
    assert seen == ["https://example.org/budget", "https://example.org/"]


def test_a_raising_extractor_is_a_scored_error_row(tmp_path: Path) -> None:
    def broken(html: bytes, url: str | None) -> str:
        if b"committee" in html:
            raise RuntimeError("boom")
        return ""

    report = evaluate_set(make_gold_set(tmp_path), broken)
    assert report.errors == 1
    assert report.rows[0].error == "RuntimeError: boom"
    assert report.rows[0].score.recall == 0.0
    assert report.summary.recall == 0.0


def test_evaluate_set_with_worker_processes_matches_one_process(tmp_path: Path) -> None:
    set_dir = make_gold_set(tmp_path)
    serial = evaluate_set(set_dir, paragraphs_of_p_tags)
    parallel = evaluate_set(set_dir, paragraphs_of_p_tags, workers=2)
    assert [r.score for r in parallel.rows] == [r.score for r in serial.rows]
    assert parallel.workers == 2


def test_format_table_and_pages_show_scores_worst_first(tmp_path: Path) -> None:
    def only_first_paragraph(html: bytes, url: str | None) -> str:
        return paragraphs_of_p_tags(html, url).split("\n")[0]

    report = evaluate_set(make_gold_set(tmp_path), only_first_paragraph)
    table = format_table([report]).splitlines()
    assert table[0].split() == ["set", "pages", "P", "R", "F1", "BOW", "F1", "pages/s", "errors"]
    assert table[1].split()[:3] == ["tiny", "2", "1.000"]
    pages = format_pages(report).splitlines()
    assert pages[1].split()[0] == "article"  # the page with lost recall comes first
    assert pages[2].split()[:4] == ["menu", "-", "-", "1.000"]


def test_justext_reference_scores(gold_dir: Path) -> None:
    """Our metric reproduces the published jusText 3.0.2 scores (tests/data/README.md)."""
    import justext

    stoplist = justext.get_stoplist("English")

    def justext_text(html: bytes, url: str | None) -> str:
        return "\n".join(p.text for p in justext.justext(html, stoplist) if not p.is_boilerplate)

    reference = {"cleaneval-dev": 0.851, "cleanportaleval": 0.821, "readability": 0.649}
    measured = {name: evaluate_set(gold_dir / name, justext_text).summary.f1 for name in reference}
    for name, expected in reference.items():
        assert abs(measured[name] - expected) <= 0.002, (name, measured[name], expected)


# --------------------------------------------------------------------------- command line


FUNCTION_MODULE = textwrap.dedent(
    """
    import lxml.html

    def p_tags(html, url):
        return "\\n".join(p.text_content() for p in lxml.html.fromstring(html).iter("p"))
    """
)


def test_cli_evaluates_a_function_and_writes_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "mods").mkdir()
    (tmp_path / "mods" / "my_extractors.py").write_text(FUNCTION_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path / "mods"))
    set_dir = make_gold_set(tmp_path / "sets")
    out = tmp_path / "report.json"
    code = main(
        [
            "evaluate",
            str(set_dir),
            "--function",
            "my_extractors:p_tags",
            "--per-page",
            "--json",
            str(out),
            "-q",
        ]
    )
    captured = capsys.readouterr()
    assert code == 0, captured.err
    lines = captured.out.splitlines()
    assert lines[1].split()[:5] == ["tiny", "2", "1.000", "1.000", "1.000"]
    assert any(line.startswith("article ") for line in lines[3:])
    report = json.loads(out.read_text())
    assert report["config"]["function"] == "my_extractors:p_tags"
    (tiny,) = report["sets"]
    assert (tiny["set"], tiny["pages"], tiny["f1"]) == ("tiny", 2, 1.0)
    assert [row["id"] for row in tiny["rows"]] == ["article", "menu"]
    assert tiny["rows"][1]["shingles_tp_fp_fn"] == [0, 0, 0]


def test_cli_rejects_a_folder_that_is_not_a_gold_set(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "pages").mkdir()
    assert main(["evaluate", str(tmp_path / "pages")]) == 2
    assert "is not a gold set" in capsys.readouterr().err


def test_cli_rejects_bad_params(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    set_dir = make_gold_set(tmp_path)
    assert main(["evaluate", str(set_dir), "--param", "length_lo=50"]) == 2
    assert "did you mean 'length_low'" in capsys.readouterr().err
    assert main(["evaluate", str(set_dir), "--param", "length_low"]) == 2
    assert "NAME=VALUE" in capsys.readouterr().err
    assert main(["evaluate", str(set_dir), "--function", "no_such_module_x:f"]) == 2
    assert "cannot import" in capsys.readouterr().err


def test_cli_default_extractor_keeps_the_article(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """End to end through extract(): the article kept, the menus dropped."""
    set_dir = make_gold_set(tmp_path)
    out = tmp_path / "report.json"
    code = main(["evaluate", str(set_dir), "--lang", "en", "--json", str(out), "-q"])
    assert code == 0, capsys.readouterr().err
    rows = {row["id"]: row for row in json.loads(out.read_text())["sets"][0]["rows"]}
    assert rows["article"]["f1"] >= 0.9, rows["article"]
    assert rows["menu"]["predicted_chars"] == 0, rows["menu"]
