"""The combined extractor: alignment, the voting rules, extract() and the gold-set claim."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corpus_crawler import extract
from corpus_crawler.combined import (
    CombinedOptions,
    Evidence,
    Run,
    block_evidence,
    load_combined_options,
    matching_runs,
    shifted,
    squeeze,
    vote,
    vote_shift,
)
from corpus_crawler.config import ConfigError, ExtractConfig, JustextParams
from corpus_crawler.evaluate import SetReport
from corpus_crawler.model import DropReason, Paragraph, ParagraphClass

#: conftest.py's session fixture `gold_report`: a gold set scored once a session
GoldReport = Callable[[str, ExtractConfig], SetReport]

GOOD = ParagraphClass.GOOD
NEAR_GOOD = ParagraphClass.NEAR_GOOD
SHORT = ParagraphClass.SHORT
BAD = ParagraphClass.BAD

PARAMS = JustextParams()
OPTIONS = CombinedOptions()


def para(text: str, cf: ParagraphClass, final: ParagraphClass | None = None) -> Paragraph:
    return Paragraph(text, cf, cf if final is None else final, length=len(text))


def kept(text: str) -> Paragraph:
    return para(text, GOOD)


def dropped(text: str) -> Paragraph:
    return para(text, BAD)


# --------------------------------------------------------------------------- alignment


def covered(runs: list[Run]) -> int:
    return sum(run.length for run in runs)


def test_squeeze_drops_whitespace_and_records_where_each_text_ends() -> None:
    assert squeeze(["a b", "", " cd\n e "]) == ("abcde", [2, 2, 5])


def test_identical_streams_are_one_run() -> None:
    text = "Thequickbrownfox" * 50
    assert matching_runs(text, text) == [Run(0, 0, len(text))]


def test_text_only_one_side_has_is_skipped_on_that_side() -> None:
    before = "Thearticlebeginshereandgoesonforawhile"
    hidden = "Pleaseenablejavascripttoseethispage"  # e.g. <noscript>, which Kimatu skips
    after = "andthearticleendshereafterall"
    a = before + hidden + after
    b = before + after
    assert matching_runs(a, b) == [
        Run(0, 0, len(before)),
        Run(len(before + hidden), len(before), len(after)),
    ]
    # and the other way round
    assert matching_runs(b, a) == [
        Run(0, 0, len(before)),
        Run(len(before), len(before + hidden), len(after)),
    ]


def test_text_moved_by_one_extractor_loses_only_the_moved_piece() -> None:
    # declutter reports a removed inline <span class="promo"> after its paragraph's text.
    a = "Firstpartofthesentence" + "BUYNOW" + "secondpartofthesentence"
    b = "Firstpartofthesentence" + "secondpartofthesentence" + "BUYNOW"
    runs = matching_runs(a, b)
    assert covered(runs) == len(a) - len("BUYNOW")


@settings(max_examples=200, deadline=None)
@given(
    st.text(alphabet="abcxyz", max_size=300),
    st.text(alphabet="abcxyz", max_size=300),
)
def test_runs_are_common_text_in_order_in_both_streams(a: str, b: str) -> None:
    runs = matching_runs(a, b)
    end_a = end_b = 0
    for run in runs:
        assert run.length > 0
        assert run.a_start >= end_a and run.b_start >= end_b
        assert (
            a[run.a_start : run.a_start + run.length] == b[run.b_start : run.b_start + run.length]
        )
        end_a, end_b = run.a_start + run.length, run.b_start + run.length


def test_an_exhausted_budget_leaves_the_rest_unaligned() -> None:
    rng = random.Random(4)
    a = "".join(rng.choice("ab") for _ in range(20_000))
    b = "".join(rng.choice("ab") for _ in range(20_000))
    assert covered(matching_runs(a, b, budget=0)) == 0
    bounded = matching_runs(a, b, budget=1_000)
    assert covered(bounded) <= covered(matching_runs(a, b))


def test_evidence_maps_finer_and_coarser_cuts_onto_the_blocks() -> None:
    # jusText joins "foo" into the first block; the other extractor cut it off.
    blocks = ["Hello world foo", "bar baz"]
    other = [kept("Hello world"), dropped("foo bar baz")]
    first, second = block_evidence(blocks, other)
    assert first == Evidence(aligned=13, kept=10, source=0)
    assert second == Evidence(aligned=6, kept=0, source=1)
    assert first.share == pytest.approx(10 / 13)
    assert second.share == 0.0


def test_a_block_the_other_extractor_never_saw_has_no_share() -> None:
    blocks = ["Welcome to the site", "Please enable JavaScript", "The end"]
    other = [kept("Welcome to the site"), kept("The end")]
    evidence = block_evidence(blocks, other)
    assert evidence[1] == Evidence(0, 0, -1)
    assert evidence[1].share is None
    assert [e.share for e in (evidence[0], evidence[2])] == [1.0, 1.0]


def test_evidence_of_an_empty_page_is_empty() -> None:
    assert block_evidence([], [kept("text")]) == []
    assert block_evidence(["text"], []) == [Evidence(0, 0, -1)]


# --------------------------------------------------------------------------- voting rules


@pytest.mark.parametrize(
    ("declutter_keeps", "kimatu_keeps", "steps"),
    [
        (True, True, 3),
        (False, False, -2),
        (False, True, 1),
        (True, False, 0),
        (None, True, 1),
        (None, False, -2),
        (True, None, 0),
        (None, None, 0),
    ],
)
def test_vote_shift_of_each_pair_of_votes(
    declutter_keeps: bool | None, kimatu_keeps: bool | None, steps: int
) -> None:
    assert vote_shift(declutter_keeps, kimatu_keeps, OPTIONS) == steps


def test_shift_is_clipped_to_the_class_scale() -> None:
    assert shifted(BAD, 1) is SHORT
    assert shifted(SHORT, 1) is NEAR_GOOD
    assert shifted(BAD, 3) is GOOD
    assert shifted(NEAR_GOOD, 3) is GOOD
    assert shifted(GOOD, -2) is SHORT
    assert shifted(SHORT, -2) is BAD
    assert shifted(GOOD, 0) is GOOD


ARTICLE_1 = "The first paragraph of the article is long enough to read."
ARTICLE_2 = "The second paragraph of the article continues the story."
ARTICLE_3 = "The third paragraph of the article ends the story here."


def test_a_bad_block_both_others_keep_becomes_good() -> None:
    justext = [para(ARTICLE_1, BAD)]  # say, too few stop words
    [result] = vote(justext, [kept(ARTICLE_1)], [kept(ARTICLE_1)], PARAMS)
    assert result.cf_class is GOOD and result.final_class is GOOD
    assert result.scores["shift"] == 3
    assert result.scores["justext_cf"] == 0  # BAD on jusText's own scale
    assert result.scores["declutter_share"] == 1.0 and result.scores["kimatu_share"] == 1.0


def test_votes_do_not_lift_a_block_the_copyright_rule_made_bad() -> None:
    footer = "Copyright \u00a9 2024 The Town Paper. All rights reserved."
    justext = [para(ARTICLE_1, GOOD), para(footer, BAD)]
    others = [kept(ARTICLE_1), kept(footer)]
    result = vote(justext, others, others, PARAMS)
    assert [p.final_class for p in result] == [GOOD, BAD]
    assert result[1].scores["shift"] == 0
    # a vote down still applies, and the rule can be switched off
    assert vote(justext, [dropped(footer)], [dropped(footer)], PARAMS)[1].scores["shift"] == -2
    lifted = vote(justext, others, others, PARAMS, replace(OPTIONS, promote_copyright=True))
    assert [p.final_class for p in lifted] == [GOOD, GOOD]


def test_a_good_block_both_others_drop_falls_two_steps_and_its_neighbours_decide() -> None:
    texts = [ARTICLE_1, "Related: ten things you did not know", ARTICLE_2]
    justext = [para(t, GOOD) for t in texts]
    others = [kept(texts[0]), dropped(texts[1]), kept(texts[2])]
    between = vote(justext, others, others, PARAMS)
    assert [p.cf_class for p in between] == [GOOD, SHORT, GOOD]
    assert [p.final_class for p in between] == [GOOD, GOOD, GOOD]  # SHORT between GOODs

    at_the_end = vote(justext[:2], others[:2], others[:2], PARAMS)
    assert [p.final_class for p in at_the_end] == [GOOD, BAD]  # SHORT before the page edge


def test_only_kimatu_keeping_a_bad_block_makes_it_short() -> None:
    texts = [ARTICLE_1, "posted in news by admin", ARTICLE_2]
    justext = [para(texts[0], GOOD), para(texts[1], BAD), para(texts[2], GOOD)]
    decluttered = [kept(texts[0]), dropped(texts[1]), kept(texts[2])]
    kimatu = [kept(t) for t in texts]
    result = vote(justext, decluttered, kimatu, PARAMS)
    assert [p.cf_class for p in result] == [GOOD, SHORT, GOOD]
    assert [p.final_class for p in result] == [GOOD, GOOD, GOOD]


def test_only_declutter_keeping_a_block_leaves_it_alone() -> None:
    texts = [ARTICLE_1, "Share this on social media", ARTICLE_2]
    justext = [para(texts[0], GOOD), para(texts[1], BAD), para(texts[2], GOOD)]
    decluttered = [kept(t) for t in texts]
    kimatu = [kept(texts[0]), dropped(texts[1]), kept(texts[2])]
    result = vote(justext, decluttered, kimatu, PARAMS)
    assert [p.cf_class for p in result] == [GOOD, BAD, GOOD]
    assert [p.final_class for p in result] == [GOOD, BAD, GOOD]


def test_a_block_neither_other_extractor_saw_keeps_its_class() -> None:
    texts = [ARTICLE_1, "Please enable JavaScript to comment", ARTICLE_2]
    justext = [para(texts[0], GOOD), para(texts[1], NEAR_GOOD), para(texts[2], GOOD)]
    others = [kept(texts[0]), kept(texts[2])]
    result = vote(justext, others, others, PARAMS)
    assert result[1].cf_class is NEAR_GOOD
    assert result[1].scores["shift"] == 0
    assert result[1].scores["kimatu_aligned"] == 0.0
    assert "kimatu_share" not in result[1].scores


def test_the_scores_carry_the_other_extractors_numbers() -> None:
    justext = [para(ARTICLE_1, NEAR_GOOD, GOOD)]
    decluttered = [replace(kept(ARTICLE_1), scores={"score": 7.0})]
    kimatu = [replace(kept(ARTICLE_1), scores={"relevance": 0.42})]
    [result] = vote(justext, decluttered, kimatu, PARAMS)
    assert result.scores["declutter_score"] == 7.0
    assert result.scores["kimatu_relevance"] == 0.42
    assert result.scores["justext_cf"] == 2 and result.scores["justext_final"] == 3
    assert result.scores["kimatu_fallback"] == 0.0
    # everything else is jusText's paragraph
    assert (result.text, result.length, result.heading) == (ARTICLE_1, len(ARTICLE_1), False)


def teaser_list() -> tuple[list[Paragraph], list[Paragraph], list[Paragraph]]:
    """A list of linked teasers: jusText and declutter see links, Kimatu sees a block."""
    texts = [ARTICLE_1, ARTICLE_2, ARTICLE_3]
    return [para(t, BAD) for t in texts], [dropped(t) for t in texts], [kept(t) for t in texts]


def test_a_page_the_vote_empties_takes_kimatus_decisions() -> None:
    justext, decluttered, kimatu = teaser_list()
    result = vote(justext, decluttered, kimatu, PARAMS)
    # each block only Kimatu keeps: BAD -> SHORT, and a run of SHORT alone is BAD
    assert [p.cf_class for p in result] == [SHORT, SHORT, SHORT]
    assert [p.final_class for p in result] == [GOOD, GOOD, GOOD]
    assert all(p.scores["kimatu_fallback"] == 1.0 for p in result)


def test_without_the_fallback_such_a_page_keeps_nothing() -> None:
    justext, decluttered, kimatu = teaser_list()
    options = replace(OPTIONS, kimatu_fallback=False)
    result = vote(justext, decluttered, kimatu, PARAMS, options)
    assert [p.final_class for p in result] == [BAD, BAD, BAD]


def test_headings_are_not_running_text_for_the_fallback() -> None:
    heading = replace(para("Teasers", GOOD), heading=True)
    justext, decluttered, kimatu = teaser_list()
    result = vote(
        [heading, *justext], [kept("Teasers"), *decluttered], [kept("Teasers"), *kimatu], PARAMS
    )
    assert result[0].scores["kimatu_fallback"] == 1.0
    assert [p.final_class for p in result[1:]] == [GOOD, GOOD, GOOD]


def test_nothing_to_vote_on_is_nothing() -> None:
    assert vote([], [kept("a")], [kept("a")], PARAMS) == ()


# --------------------------------------------------------------------------- options


def test_shipped_yaml_equals_the_built_in_defaults() -> None:
    assert load_combined_options() == CombinedOptions()
    assert CombinedOptions().declutter.blessed_words == ()


def test_unknown_option_names_the_closest_one() -> None:
    with pytest.raises(ConfigError, match="did you mean 'kimatu_only'"):
        OPTIONS.merged({"kimatu_onyl": 1}, "test")


def test_nested_options_reach_the_other_extractors() -> None:
    merged = OPTIONS.merged({"declutter": {"min_score": 5}, "kimatu": {"block_gap": 3}}, "test")
    assert merged.declutter.min_score == 5
    assert merged.kimatu.block_gap == 3
    assert merged.declutter.blessed_words == ()  # the combined default stays
    with pytest.raises(ConfigError, match="min_score"):
        OPTIONS.merged({"declutter": {"min_scor": 5}}, "test")
    with pytest.raises(ConfigError, match="must map kimatu option names"):
        OPTIONS.merged({"kimatu": [1, 2]}, "test")


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"both_keep": 4}, "between -3 and 3"),
        ({"both_drop": 1.5}, "whole number"),
        ({"kimatu_only": True}, "whole number"),
        ({"keep_share": 0}, r"keep_share must be a number in \(0, 1\]"),
        ({"keep_share": "half"}, "keep_share"),
        ({"kimatu_fallback": "yes"}, "kimatu_fallback must be true or false"),
        ({"promote_copyright": 1}, "promote_copyright must be true or false"),
    ],
)
def test_bad_values_are_refused_with_the_fix(changes: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        OPTIONS.merged(changes, "test")


def test_a_missing_options_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read combined options"):
        load_combined_options(tmp_path / "nope.yaml")
    (tmp_path / "bad.yaml").write_text("both_keep: [", encoding="utf-8")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_combined_options(tmp_path / "bad.yaml")


# --------------------------------------------------------------------------- through extract()

ARTICLE = " ".join(
    [
        "The council said on Tuesday that the new bridge over the river would be opened",
        "to traffic in the spring, after a long delay that was caused by the floods of",
        "last year and by a shortage of the steel that the builders had ordered for it.",
    ]
)
MORE = " ".join(
    [
        "Residents of the town have waited for the bridge for more than ten years, and many",
        "of them told us that they were glad it would finally be finished before the summer.",
    ]
)
PAGE = f"""<!doctype html><html><head><title>Bridge</title></head><body>
<div class="menu"><a href="/">Home</a> | <a href="/news">News</a> | <a href="/sport">Sport</a>
 | <a href="/weather">Weather</a> | <a href="/contact">Contact us</a></div>
<div class="story"><h1>New bridge to open in spring</h1>
<p>{ARTICLE}</p><p>{MORE}</p><p>{ARTICLE} {MORE}</p></div>
<div class="footer">Copyright &copy; 2024 The Town Paper. All rights reserved.</div>
</body></html>""".encode()


def test_extract_with_the_combined_extractor_keeps_the_story_only() -> None:
    doc = extract(PAGE, "http://example.com/bridge", ExtractConfig(extractor="combined"))
    assert doc.drop_reason is None, doc.drop_detail
    assert doc.extractor == "combined"
    assert doc.language == "en"
    assert ARTICLE in doc.text and MORE in doc.text
    assert "Home" not in doc.text and "Copyright" not in doc.text
    for paragraph in doc.paragraphs:
        assert {"shift", "justext_cf", "declutter_aligned", "kimatu_aligned"} <= set(
            paragraph.scores
        )


def test_extract_passes_combined_options_through() -> None:
    # Every vote at -3 steps: nothing can be GOOD, and no fallback either.
    options = {
        "both_keep": -3,
        "both_drop": -3,
        "kimatu_only": -3,
        "declutter_only": -3,
        "kimatu_fallback": False,
    }
    doc = extract(PAGE, None, ExtractConfig(extractor="combined", extractor_options=options))
    assert doc.drop_reason is DropReason.NO_GOOD_PARAGRAPH


@pytest.mark.parametrize(
    "html",
    [
        b"",
        b"\x00\xff\xfe" + bytes(range(256)) * 40,
        random.Random(7).randbytes(50_000),
        b"<div>" * 10_000 + b"deep text " * 30 + b"</div>" * 10_000,
        b"<p>" + b"<a href=x>link</a> words " * 5_000,
        b"<html><body><noscript>" + b"hidden words here " * 500 + b"</noscript></body></html>",
        b"<p>shown text</p><noscript>hidden text</noscript><math>x</math>" * 3_000,
        "<p>\ud800 lone surrogate and text of a page</p>",
    ],
    ids=[
        "empty",
        "binary",
        "random",
        "nested-divs",
        "many-links",
        "noscript-only",
        "skipped-text-everywhere",
        "surrogate",
    ],
)
def test_hostile_input_never_raises(html: bytes | str) -> None:
    doc = extract(html, None, ExtractConfig(extractor="combined"))
    assert doc.drop_reason is not DropReason.EXTRACTOR_ERROR, doc.drop_detail


# --------------------------------------------------------------------------- gold sets

EXTRACTORS = ("justext", "declutter", "kimatu")


@pytest.mark.parametrize("set_name", ["cleaneval-dev", "cleanportaleval", "readability"])
def test_combined_beats_each_extractor_alone_on_every_gold_set(
    gold_report: GoldReport, set_name: str
) -> None:
    # Issue 4's condition for offering it. Measured (--lang auto): combined
    # 0.922 / 0.894 / 0.915, best single (Kimatu) 0.910 / 0.870 / 0.890.
    combined = gold_report(set_name, ExtractConfig(extractor="combined"))
    assert combined.errors == 0
    for name in EXTRACTORS:
        alone = gold_report(set_name, ExtractConfig(extractor=name))
        assert combined.summary.f1 > alone.summary.f1, (name, alone.summary, combined.summary)
