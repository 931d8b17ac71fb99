"""One test per rule and threshold of the jusText seed (seed 000, "Classification").

Pages are hand-built so that every feature is known exactly: the stoplist is a
file holding the single word `zz`, so a block's stop-word density is the share
of `zz` tokens in it, and its length is set to the character. The pure phases
of `corpus_crawler.classify` are also tested on hand-made class sequences, and
against jusText 3.0.2's own `revise_paragraph_classification`.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import justext
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from justext.core import revise_paragraph_classification

from corpus_crawler.classify import (
    Features,
    classify,
    classify_context_free,
    classify_context_sensitive,
    headings_post_pass,
    headings_pre_pass,
)
from corpus_crawler.config import ExtractConfig, JustextParams, Preset
from corpus_crawler.extract import extract
from corpus_crawler.model import Document, Paragraph, ParagraphClass

# the module, not the function `corpus_crawler.extract` that shadows it
extract_module = importlib.import_module("corpus_crawler.extract")
# The compiled classifier is chosen in classify.py (beside the phases it runs).
classify_module = importlib.import_module("corpus_crawler.classify")

GOOD = ParagraphClass.GOOD
NEAR_GOOD = ParagraphClass.NEAR_GOOD
SHORT = ParagraphClass.SHORT
BAD = ParagraphClass.BAD

STOP = "zz"
DEFAULTS = JustextParams()


# --------------------------------------------------------------------------- page builders


def make_text(length: int, stops: int, others: int) -> str:
    """`stops` stop words and `others` other words, exactly `length` characters long.

    The last non-stop word is stretched to reach the length.
    """
    assert others >= 1
    tokens = [STOP] * stops + ["qq"] * others
    base = len(" ".join(tokens))
    assert base <= length, f"{stops}+{others} words need at least {base} characters"
    last = max(i for i, t in enumerate(tokens) if t != STOP)
    tokens[last] = "q" * (2 + length - base)
    text = " ".join(tokens)
    assert len(text) == length
    return text


def good_text(length: int = 250) -> str:
    """A long block made only of stop words and one filler word: context-free GOOD."""
    return make_text(length, stops=(length - 10) // 3, others=1)


def page(*blocks: str, title: str = "") -> bytes:
    head = f"<head><title>{title}</title></head>" if title else ""
    return f"<html>{head}<body>{''.join(blocks)}</body></html>".encode()


@pytest.fixture(scope="module")
def stoplist_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("stoplist") / "stop.txt"
    path.write_text(f"# the only stop word of these tests\n{STOP}\n", encoding="utf-8")
    return path


@dataclass(frozen=True)
class Run:
    """extract() with the `zz` stoplist and the given parameters."""

    stoplist: Path

    def __call__(self, html: bytes, preset: Preset = Preset.SEED, **params: object) -> Document:
        config = ExtractConfig(
            language=None,
            stoplist_path=str(self.stoplist),
            preset=preset,
            params=JustextParams(**params),  # type: ignore[arg-type]
        )
        doc = extract(html, config=config)
        assert doc.drop_reason is None or doc.drop_reason.value != "extractor-error", (
            doc.drop_detail
        )
        return doc


@pytest.fixture(params=["compiled", "python"])
def run(
    request: pytest.FixtureRequest, stoplist_file: Path, monkeypatch: pytest.MonkeyPatch
) -> Run:
    """Every rule is checked with both classifiers: the compiled one and the Python one."""
    if request.param == "python":
        monkeypatch.setattr(classify_module, "_fast", None)
    else:
        assert classify_module._fast is not None, "the compiled classifier is not built"
    return Run(stoplist_file)


def only(doc: Document) -> Paragraph:
    assert len(doc.paragraphs) == 1, [p.text for p in doc.paragraphs]
    return doc.paragraphs[0]


def find(doc: Document, text: str) -> Paragraph:
    matches = [p for p in doc.paragraphs if p.text == text]
    assert len(matches) == 1, (text, [p.text for p in doc.paragraphs])
    return matches[0]


def test_builders_give_the_features_they_promise(run: Run) -> None:
    text = make_text(201, stops=8, others=17)
    p = only(run(page(f"<p>{text}</p>")))
    assert p.length == 201
    assert p.word_count == 25
    assert p.stopword_count == 8
    assert p.stopword_density == pytest.approx(0.32)


# --------------------------------------------------------------------------- context-free rules


def test_image_block_is_bad(run: Run) -> None:
    doc = run(page('<div><img src="a.png"></div>', f"<p>{good_text()}</p>"))
    image = doc.paragraphs[0]
    assert image.image
    assert image.text == ""
    assert image.cf_class is BAD
    assert image.final_class is BAD
    assert doc.paragraphs[1].cf_class is GOOD


def test_image_rule_comes_before_the_headline_rule(run: Run) -> None:
    doc = run(page('<h1><img src="logo.png"></h1>', f"<p>{good_text()}</p>"))
    assert doc.paragraphs[0].image
    assert doc.paragraphs[0].headline
    assert doc.paragraphs[0].cf_class is BAD


def test_image_inside_a_text_block_does_not_make_an_image_block(run: Run) -> None:
    p = only(run(page(f'<p><img src="a.png">{good_text()}</p>')))
    assert not p.image
    assert p.cf_class is GOOD


def test_reference_preset_has_no_image_blocks(run: Run) -> None:
    doc = run(page('<div><img src="a.png"></div>', f"<p>{good_text()}</p>"), Preset.REFERENCE)
    assert [p.image for p in doc.paragraphs] == [False]


def link_block(total: int, link: int) -> str:
    """A `total`-character block, high in stop words, whose last `link` characters are a link."""
    prefix = make_text(total - link - 1, stops=(total - link - 5) // 3, others=1)
    return f'<p>{prefix} <a href="/x">{"l" * link}</a></p>'


@pytest.mark.parametrize(
    ("link", "expected"),
    [(20, NEAR_GOOD), (21, BAD), (0, NEAR_GOOD), (90, BAD)],
)
def test_link_density_above_the_maximum_is_bad(
    run: Run, link: int, expected: ParagraphClass
) -> None:
    p = only(run(page(link_block(100, link) if link else f"<p>{make_text(100, 30, 1)}</p>")))
    assert p.length == 100
    assert p.link_chars == link
    assert p.link_density == link / 100
    assert p.cf_class is expected


def test_link_density_exactly_at_a_custom_maximum_is_not_bad(run: Run) -> None:
    at_max = only(run(page(link_block(100, 50)), max_link_density=0.5))
    above = only(run(page(link_block(100, 51)), max_link_density=0.5))
    assert at_max.link_density == 0.5
    assert at_max.cf_class is NEAR_GOOD
    assert above.cf_class is BAD


@pytest.mark.parametrize(
    "mark",
    ["\u00a9", "&copy;", "&#169;", "&#xa9;", "&amp;copy;"],
    ids=["sign", "entity", "decimal", "hex", "literal-code"],
)
def test_copyright_sign_or_code_is_bad(run: Run, mark: str) -> None:
    p = only(run(page(f"<p>{good_text()} {mark} 2024</p>")))
    assert "\u00a9" in p.text or "&copy;" in p.text
    assert p.cf_class is BAD


def test_copyright_beats_the_headline_rule(run: Run) -> None:
    doc = run(page("<h1>&copy; Example Corp</h1>", f"<p>{good_text()}</p>"))
    assert doc.paragraphs[0].headline
    assert doc.paragraphs[0].cf_class is BAD


def test_headline_is_good(run: Run) -> None:
    doc = run(page("<h1>Breaking news</h1>", f"<p>{good_text()}</p>"))
    headline = doc.paragraphs[0]
    assert headline.heading and headline.headline
    assert headline.length < DEFAULTS.length_low
    assert headline.cf_class is GOOD


def test_headline_rule_is_off_with_no_headlines(run: Run) -> None:
    doc = run(page("<h1>Breaking news</h1>", f"<p>{good_text()}</p>"), no_headlines=True)
    assert doc.paragraphs[0].headline
    assert doc.paragraphs[0].cf_class is SHORT


@pytest.mark.parametrize("tag", ["h2", "h3", "h4", "h5", "h6"])
def test_lower_headings_are_not_headlines(run: Run, tag: str) -> None:
    doc = run(page(f"<{tag}>Section</{tag}>", f"<p>{good_text()}</p>"))
    heading = doc.paragraphs[0]
    assert heading.heading and not heading.headline
    assert heading.cf_class is SHORT


def test_reference_preset_has_no_headline_rule(run: Run) -> None:
    doc = run(page("<h1>Breaking news</h1>", f"<p>{good_text()}</p>"), Preset.REFERENCE)
    assert doc.paragraphs[0].cf_class is SHORT


def test_link_density_beats_the_headline_rule(run: Run) -> None:
    doc = run(page('<h1><a href="/">Home</a></h1>', f"<p>{good_text()}</p>"))
    assert doc.paragraphs[0].cf_class is BAD


def test_select_content_is_bad_in_seed(run: Run) -> None:
    text = good_text()
    doc = run(page(f"<form><select><option>{text}</option><option>two</option></select></form>"))
    option = find(doc, text)
    assert option.in_select
    assert option.cf_class is BAD
    assert find(doc, "two").cf_class is BAD


def test_reference_preset_drops_select_content(run: Run) -> None:
    text = good_text()
    doc = run(
        page(f"<select><option>{text}</option></select><p>{good_text(260)}</p>"), Preset.REFERENCE
    )
    assert [p.text for p in doc.paragraphs] == [good_text(260)]


def test_text_after_a_closed_select_is_not_select_content(run: Run) -> None:
    """Seed: only "the contents of SELECT tags" are bad; the text after </select> is not."""
    text = good_text()
    doc = run(page(f"<div><select><option>a</option><option>b</option></select>{text}</div>"))
    after = find(doc, text)
    assert not after.in_select
    assert after.cf_class is GOOD


@pytest.mark.parametrize(("length", "expected"), [(69, SHORT), (70, NEAR_GOOD), (1, SHORT)])
def test_length_low_threshold(run: Run, length: int, expected: ParagraphClass) -> None:
    text = make_text(length, stops=(length - 2) // 3, others=1) if length > 3 else "q"
    p = only(run(page(f"<p>{text}</p>")))
    assert p.length == length
    assert p.cf_class is expected


def test_short_block_with_a_link_is_bad(run: Run) -> None:
    p = only(run(page(link_block(69, 1))))
    assert p.length == 69
    assert p.link_density <= DEFAULTS.max_link_density
    assert p.cf_class is BAD


def test_short_block_without_a_link_is_short(run: Run) -> None:
    p = only(run(page(f"<p>{make_text(69, stops=0, others=5)}</p>")))
    assert p.link_chars == 0
    assert p.cf_class is SHORT


def test_custom_length_low(run: Run) -> None:
    nine = only(run(page(f"<p>{make_text(9, 2, 1)}</p>"), length_low=9))
    eight = only(run(page(f"<p>{make_text(8, 2, 1)}</p>"), length_low=9))
    assert nine.cf_class is NEAR_GOOD
    assert eight.cf_class is SHORT


@pytest.mark.parametrize(
    ("length", "stops", "others", "expected"),
    [
        (201, 8, 17, GOOD),  # density 0.32 = stopwords_high, length > length_high
        (200, 8, 17, NEAR_GOOD),  # length = length_high: not long
        (300, 32, 68, GOOD),
        (300, 31, 69, NEAR_GOOD),  # between low and high
        (300, 30, 70, NEAR_GOOD),  # exactly stopwords_low
        (300, 29, 71, BAD),  # below stopwords_low
        (300, 0, 60, BAD),
        (70, 20, 1, NEAR_GOOD),  # medium, high density
        (150, 3, 7, NEAR_GOOD),  # medium, density 0.30
        (150, 2, 8, BAD),  # medium, low density
    ],
)
def test_stopword_and_length_thresholds(
    run: Run, length: int, stops: int, others: int, expected: ParagraphClass
) -> None:
    p = only(run(page(f"<p>{make_text(length, stops, others)}</p>")))
    assert (p.length, p.stopword_count, p.word_count) == (length, stops, stops + others)
    assert p.cf_class is expected


@pytest.mark.parametrize(
    ("stops", "others", "length", "expected"),
    [
        (6, 4, 120, GOOD),
        (5, 5, 120, NEAR_GOOD),
        (4, 6, 120, NEAR_GOOD),
        (3, 7, 120, BAD),
        (6, 4, 100, NEAR_GOOD),
    ],
)
def test_custom_stopword_and_length_thresholds(
    run: Run, stops: int, others: int, length: int, expected: ParagraphClass
) -> None:
    p = only(
        run(
            page(f"<p>{make_text(length, stops, others)}</p>"),
            stopwords_low=0.4,
            stopwords_high=0.6,
            length_high=100,
        )
    )
    assert p.cf_class is expected


def test_stopwords_are_matched_case_insensitively(run: Run) -> None:
    text = make_text(201, 8, 17).replace(STOP, "ZZ", 4)
    p = only(run(page(f"<p>{text}</p>")))
    assert p.stopword_count == 8
    assert p.cf_class is GOOD


# ----------------------------------------------------------------- context-free, pure function


def features(
    length: int = 100,
    *,
    link_chars: int = 0,
    link_density: float = 0.0,
    stopword_density: float = 0.5,
    copyright: bool = False,
    heading: bool = False,
    headline: bool = False,
    in_select: bool = False,
    image: bool = False,
) -> Features:
    return Features(
        length,
        link_chars,
        link_density,
        stopword_density,
        copyright,
        heading,
        headline,
        in_select,
        image,
    )


@pytest.mark.parametrize(
    ("block", "expected"),
    [
        (features(image=True, headline=True), BAD),
        (features(link_density=0.21, link_chars=21), BAD),
        (features(link_density=0.2, link_chars=20), NEAR_GOOD),
        (features(copyright=True, headline=True), BAD),
        (features(5, headline=True), GOOD),
        (features(5, headline=True, in_select=True), GOOD),
        (features(300, in_select=True), BAD),
        (features(69), SHORT),
        (features(69, link_chars=1, link_density=1 / 69), BAD),
        (features(70), NEAR_GOOD),
        (features(200, stopword_density=0.32), NEAR_GOOD),
        (features(201, stopword_density=0.32), GOOD),
        (features(201, stopword_density=0.31), NEAR_GOOD),
        (features(201, stopword_density=0.30), NEAR_GOOD),
        (features(201, stopword_density=0.2999), BAD),
    ],
)
def test_classify_context_free_rules(block: Features, expected: ParagraphClass) -> None:
    assert classify_context_free([block], DEFAULTS) == [expected]


def test_classify_context_free_headline_rule_switches() -> None:
    headline = features(5, headline=True, heading=True)
    assert classify_context_free([headline], JustextParams(no_headlines=True)) == [SHORT]
    assert classify_context_free([headline], DEFAULTS, headline_rule=False) == [SHORT]


def test_classify_context_free_keeps_order_and_length() -> None:
    blocks = [features(5), features(300), features(100, stopword_density=0.0)]
    assert classify_context_free(blocks, DEFAULTS) == [SHORT, GOOD, BAD]
    assert classify_context_free([], DEFAULTS) == []


# --------------------------------------------------------------------------- context-sensitive

G, N, S, B = GOOD, NEAR_GOOD, SHORT, BAD


@pytest.mark.parametrize(
    ("classes", "expected"),
    [
        # GOOD ... GOOD: all good
        ([G, S, N, S, G], [G, G, G, G, G]),
        # BAD ... BAD: all bad, NEAR_GOOD included
        ([B, S, N, S, B], [B, B, B, B, B]),
        # GOOD ... BAD: the NEAR_GOOD closest to BAD delimits; blocks past it are bad
        ([G, S, N, S, B], [G, G, G, B, B]),
        ([G, N, S, N, S, B], [G, G, G, G, B, B]),
        # BAD ... GOOD, mirrored
        ([B, S, N, S, G], [B, B, G, G, G]),
        ([B, S, N, S, N, G], [B, B, G, G, G, G]),
        # no NEAR_GOOD between GOOD and BAD: all bad
        ([G, S, S, B], [G, B, B, B]),
        ([B, S, S, G], [B, B, B, G]),
        # GOOD and BAD blocks never change
        ([B, G, B, G], [B, G, B, G]),
        # several runs
        ([G, S, G, S, B, N, B], [G, G, G, B, B, B, B]),
    ],
)
def test_context_sensitive_runs(
    classes: list[ParagraphClass], expected: list[ParagraphClass]
) -> None:
    assert classify_context_sensitive(classes) == expected


@pytest.mark.parametrize(
    ("classes", "expected"),
    [
        # start of the document counts as BAD
        ([S, G], [B, G]),
        ([N, G], [G, G]),
        ([S, N, G], [B, G, G]),
        ([N, S, G], [G, G, G]),
        # end of the document counts as BAD
        ([G, S], [G, B]),
        ([G, N], [G, G]),
        ([G, N, S], [G, G, B]),
        # both edges: BAD ... BAD
        ([N], [B]),
        ([S], [B]),
        ([S, N, S], [B, B, B]),
        ([], []),
    ],
)
def test_context_sensitive_document_edges_count_as_bad(
    classes: list[ParagraphClass], expected: list[ParagraphClass]
) -> None:
    assert classify_context_sensitive(classes) == expected


def test_context_sensitive_does_not_modify_its_input() -> None:
    classes = [G, S, B]
    classify_context_sensitive(classes)
    assert classes == [G, S, B]


def test_context_sensitive_on_a_page(run: Run) -> None:
    between_good = make_text(40, 0, 4)
    between_bad = make_text(41, 0, 4)
    doc = run(
        page(
            f"<p>{good_text()}</p>",
            f"<p>{between_good}</p>",
            f"<p>{good_text(260)}</p>",
            f"<p>{make_text(300, 0, 50)}</p>",
            f"<p>{between_bad}</p>",
            f"<p>{make_text(301, 0, 50)}</p>",
        )
    )
    assert [p.cf_class for p in doc.paragraphs] == [G, S, G, B, S, B]
    assert [p.final_class for p in doc.paragraphs] == [G, G, G, B, B, B]


def test_page_edges_count_as_bad(run: Run) -> None:
    near_good = make_text(100, 30, 1)
    short = make_text(30, 0, 3)
    doc = run(
        page(f"<p>{short}</p>", f"<p>{good_text()}</p>", f"<p>{near_good}</p>", f"<p>{short}x</p>")
    )
    assert [p.cf_class for p in doc.paragraphs] == [S, G, N, S]
    assert [p.final_class for p in doc.paragraphs] == [B, G, G, B]


def test_near_good_alone_between_the_edges_is_bad(run: Run) -> None:
    doc = run(page(f"<p>{make_text(100, 30, 1)}</p>"))
    assert only(doc).cf_class is NEAR_GOOD
    assert only(doc).final_class is BAD
    assert doc.drop_reason is not None and doc.drop_reason.value == "no-good-paragraph"


# --------------------------------------------------------------------------- heading pre-pass

NO_HEADING = False
HEADING = True


def test_pre_pass_short_heading_before_good_becomes_near_good() -> None:
    result = headings_pre_pass([S, G], [HEADING, NO_HEADING], [10, 300], DEFAULTS)
    assert result == [N, G]


@pytest.mark.parametrize(("between", "expected"), [(200, N), (201, S), (0, N)])
def test_pre_pass_max_heading_distance(between: int, expected: ParagraphClass) -> None:
    result = headings_pre_pass(
        [S, S, G], [HEADING, NO_HEADING, NO_HEADING], [10, between, 300], DEFAULTS
    )
    assert result[0] is expected


def test_pre_pass_distance_sums_every_block_in_between() -> None:
    headings = [HEADING, NO_HEADING, NO_HEADING, NO_HEADING]
    assert headings_pre_pass([S, B, S, G], headings, [5, 100, 100, 300], DEFAULTS)[0] is N
    assert headings_pre_pass([S, B, S, G], headings, [5, 100, 101, 300], DEFAULTS)[0] is S


def test_pre_pass_custom_distance() -> None:
    params = JustextParams(max_heading_distance=10)
    headings = [HEADING, NO_HEADING, NO_HEADING]
    assert headings_pre_pass([S, S, G], headings, [5, 10, 300], params)[0] is N
    assert headings_pre_pass([S, S, G], headings, [5, 11, 300], params)[0] is S


def test_pre_pass_touches_only_short_headings() -> None:
    classes = [S, N, B, S, G]
    headings = [NO_HEADING, HEADING, HEADING, NO_HEADING, NO_HEADING]
    assert headings_pre_pass(classes, headings, [5] * 5, DEFAULTS) == classes


def test_pre_pass_needs_a_good_block_after_the_heading() -> None:
    assert headings_pre_pass([G, S], [NO_HEADING, HEADING], [300, 5], DEFAULTS) == [G, S]
    assert headings_pre_pass([S, N, B], [HEADING] * 3, [5, 5, 5], DEFAULTS) == [S, N, B]


def test_pre_pass_disabled_by_no_headings() -> None:
    params = JustextParams(no_headings=True)
    assert headings_pre_pass([S, G], [HEADING, NO_HEADING], [5, 300], params) == [S, G]


def heading_page() -> bytes:
    """BAD, then a SHORT heading, a SHORT paragraph, and GOOD text."""
    return page(
        f"<p>{make_text(300, 0, 50)}</p>",
        "<h2>Section title</h2>",
        f"<p>{make_text(40, 0, 5)}</p>",
        f"<p>{good_text()}</p>",
    )


def test_pre_pass_keeps_the_short_block_after_a_heading(run: Run) -> None:
    """Seed: the pre-pass makes the heading NEAR_GOOD, which turns the run [heading, short]
    between BAD and GOOD into GOOD (without it, the run has no NEAR_GOOD and is all bad)."""
    doc = run(heading_page())
    assert [p.cf_class for p in doc.paragraphs] == [B, S, S, G]
    assert [p.final_class for p in doc.paragraphs] == [B, G, G, G]


def test_no_headings_turns_both_heading_passes_off(run: Run) -> None:
    doc = run(heading_page(), no_headings=True)
    assert [p.final_class for p in doc.paragraphs] == [B, B, B, G]


def test_heading_too_far_from_good_text_is_not_rescued(run: Run) -> None:
    doc = run(
        page(
            f"<p>{make_text(300, 0, 50)}</p>",
            "<h2>Section title</h2>",
            f"<p>{make_text(60, 0, 5)}</p>",
            f"<p>{make_text(60, 0, 6)}</p>",
            f"<p>{make_text(60, 0, 7)}</p>",
            f"<p>{make_text(60, 0, 8)}</p>",
            f"<p>{good_text()}</p>",
        )
    )
    assert [p.final_class for p in doc.paragraphs] == [B, B, B, B, B, B, G]


def test_reference_preset_pre_pass_has_no_effect(run: Run, stoplist_file: Path) -> None:
    """jusText 3.0.2 copies cf classes as its pre-pass loop reaches them, so the pre-pass
    never sees a GOOD block ahead; only the post-pass rescues the heading."""
    doc = run(heading_page(), Preset.REFERENCE)
    assert [p.cf_class for p in doc.paragraphs] == [B, S, S, G]
    assert [p.final_class for p in doc.paragraphs] == [B, G, B, G]
    # and jusText 3.0.2 itself agrees
    paragraphs = justext.justext(heading_page(), frozenset({STOP}))
    assert [p.class_type for p in paragraphs] == ["bad", "good", "bad", "good"]


def test_reference_classify_skips_the_pre_pass() -> None:
    blocks = [
        features(300, stopword_density=0.0),
        features(13, heading=True),
        features(40),
        features(250),
    ]
    cf_seed, final_seed = classify(blocks, DEFAULTS)
    cf_ref, final_ref = classify(blocks, DEFAULTS, reference=True)
    assert cf_seed == cf_ref == [B, S, S, G]
    assert final_seed == [B, G, G, G]
    assert final_ref == [B, G, B, G]


# --------------------------------------------------------------------------- heading post-pass


def test_post_pass_rescues_a_non_bad_heading_before_good() -> None:
    for cf in (S, N):
        result = headings_post_pass([B, G], [cf, G], [HEADING, NO_HEADING], [10, 300], DEFAULTS)
        assert result == [G, G]


def test_post_pass_keeps_context_free_bad_headings_bad() -> None:
    result = headings_post_pass([B, G], [B, G], [HEADING, NO_HEADING], [10, 300], DEFAULTS)
    assert result == [B, G]


def test_post_pass_ignores_non_headings() -> None:
    result = headings_post_pass([B, G], [S, G], [NO_HEADING, NO_HEADING], [10, 300], DEFAULTS)
    assert result == [B, G]


@pytest.mark.parametrize(("between", "expected"), [(200, G), (201, B)])
def test_post_pass_max_heading_distance(between: int, expected: ParagraphClass) -> None:
    result = headings_post_pass(
        [B, B, G], [S, B, G], [HEADING, NO_HEADING, NO_HEADING], [10, between, 300], DEFAULTS
    )
    assert result[0] is expected


def test_post_pass_is_not_iterative() -> None:
    """A heading made GOOD does not bring an earlier heading within reach of GOOD text."""
    classes = [B, B, B, G]
    cf = [S, S, B, G]
    headings = [HEADING, HEADING, NO_HEADING, NO_HEADING]
    lengths = [10, 150, 100, 300]
    result = headings_post_pass(classes, cf, headings, lengths, DEFAULTS)
    assert result == [B, G, B, G]


def test_post_pass_looks_at_final_classes() -> None:
    """The GOOD block may be one the context-sensitive pass made GOOD."""
    result = headings_post_pass([B, G], [S, S], [HEADING, NO_HEADING], [10, 30], DEFAULTS)
    assert result == [G, G]


def test_post_pass_disabled_by_no_headings() -> None:
    params = JustextParams(no_headings=True)
    assert headings_post_pass([B, G], [S, G], [HEADING, NO_HEADING], [10, 300], params) == [B, G]


def test_post_pass_rescues_a_near_good_heading_on_a_page(run: Run) -> None:
    """A NEAR_GOOD heading between BAD blocks ends BAD in the context-sensitive pass; the
    post-pass makes it GOOD because GOOD text (made GOOD by that pass) follows closely."""
    doc = run(
        page(
            f"<p>{make_text(300, 0, 50)}</p>",
            f"<h2>{make_text(100, 30, 1)}</h2>",
            f"<p>{make_text(80, 0, 10)}</p>",
            f"<p>{make_text(100, 31, 1)}</p>",
            f"<p>{good_text()}</p>",
        )
    )
    assert [p.cf_class for p in doc.paragraphs] == [B, N, B, N, G]
    assert [p.final_class for p in doc.paragraphs] == [B, G, B, G, G]


def test_post_pass_rescues_a_short_heading_with_the_reference_preset(run: Run) -> None:
    doc = run(
        page(f"<p>{make_text(300, 0, 50)}</p>", "<h3>A heading</h3>", f"<p>{good_text()}</p>"),
        Preset.REFERENCE,
    )
    heading = doc.paragraphs[1]
    assert heading.cf_class is SHORT
    assert heading.final_class is GOOD


# --------------------------------------------------------------------------- presets and results


def test_language_independent_preset_uses_no_stoplist(run: Run) -> None:
    long_text = make_text(250, 0, 30)
    medium_text = make_text(150, 0, 20)
    config = ExtractConfig(language=None, preset=Preset.LANGUAGE_INDEPENDENT)
    doc = extract(
        page(f"<p>{long_text}</p>", f"<p>{medium_text}</p>", "<p>short</p>"), config=config
    )
    assert [p.stopword_density for p in doc.paragraphs] == [0.0, 0.0, 0.0]
    assert [p.cf_class for p in doc.paragraphs] == [G, N, S]
    assert [p.final_class for p in doc.paragraphs] == [G, G, B]


def test_language_independent_preset_ignores_a_stoplist(stoplist_file: Path) -> None:
    config = ExtractConfig(
        language="en", stoplist_path=str(stoplist_file), preset=Preset.LANGUAGE_INDEPENDENT
    )
    doc = extract(page(f"<p>{good_text()}</p>"), config=config)
    assert only(doc).stopword_count == 0
    assert only(doc).cf_class is GOOD


def test_language_independent_thresholds_stay_zero_with_custom_parameters() -> None:
    """jusText's `-s None` sets both stop-word thresholds to 0 whatever else is given;
    with an empty stoplist any other threshold would make every long block BAD."""
    config = ExtractConfig(
        language=None, preset=Preset.LANGUAGE_INDEPENDENT, params=JustextParams(length_low=50)
    )
    doc = extract(page(f"<p>{make_text(250, 0, 30)}</p>"), config=config)
    assert only(doc).cf_class is GOOD


def test_paragraph_keeps_context_free_and_final_class(run: Run) -> None:
    short = make_text(30, 0, 3)
    doc = run(page(f"<p>{good_text()}</p>", f"<p>{short}</p>", f"<p>{good_text(260)}</p>"))
    middle = find(doc, short)
    assert middle.cf_class is SHORT
    assert middle.final_class is GOOD
    assert doc.text == "\n".join(p.text for p in doc.paragraphs)


# --------------------------------------------------------------------------- differential

CLASS_NAMES = {GOOD: "good", NEAR_GOOD: "neargood", SHORT: "short", BAD: "bad"}


class _JustextParagraph:
    """What jusText's revise_paragraph_classification reads and writes."""

    def __init__(self, cf: ParagraphClass, heading: bool, length: int, preset_class: bool) -> None:
        self.cf_class = CLASS_NAMES[cf]
        self.heading = heading
        self.text = "x" * length
        # jusText 3.0.2 starts from "" and copies cf_class as its pre-pass loop goes;
        # starting from cf_class gives the seed's pre-pass, which sees every cf class.
        self.class_type = self.cf_class if preset_class else ""


def justext_revise(
    cf: Sequence[ParagraphClass],
    headings: Sequence[bool],
    lengths: Sequence[int],
    *,
    seed: bool,
    max_heading_distance: int,
) -> list[str]:
    paragraphs = [
        _JustextParagraph(c, h, n, preset_class=seed)
        for c, h, n in zip(cf, headings, lengths, strict=True)
    ]
    revise_paragraph_classification(paragraphs, max_heading_distance)
    return [p.class_type for p in paragraphs]


def block_for(cls: ParagraphClass, length: int, heading: bool) -> Features:
    """Features whose context-free class is `cls` and whose length fits it."""
    if cls is GOOD:
        return features(201 + length, stopword_density=0.5, heading=heading)
    if cls is NEAR_GOOD:
        return features(70 + length % 131, stopword_density=0.5, heading=heading)
    if cls is SHORT:
        return features(length % 70, heading=heading)
    return features(length, copyright=True, heading=heading)


blocks_strategy = st.lists(
    st.tuples(st.sampled_from([GOOD, NEAR_GOOD, SHORT, BAD]), st.integers(0, 250), st.booleans()),
    max_size=14,
)


@settings(max_examples=400, deadline=None)
@given(blocks=blocks_strategy, distance=st.sampled_from([0, 50, 200]), seed=st.booleans())
def test_classify_equals_justext_revision(
    blocks: list[tuple[ParagraphClass, int, bool]], distance: int, seed: bool
) -> None:
    """Both presets against jusText 3.0.2's revise_paragraph_classification."""
    built = [block_for(cls, length, heading) for cls, length, heading in blocks]
    params = JustextParams(max_heading_distance=distance)
    cf, final = classify(built, params, reference=not seed)
    assert cf == [cls for cls, _, _ in blocks]
    expected = justext_revise(
        cf,
        [f.heading for f in built],
        [f.length for f in built],
        seed=seed,
        max_heading_distance=distance,
    )
    assert [CLASS_NAMES[c] for c in final] == expected
