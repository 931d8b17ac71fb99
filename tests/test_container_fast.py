"""The compiled container pass (`_classify_fast.container_pass`) against the Python one.

`container.container_pass(..., compiled=True|False)` must give equal Paragraphs
(every field, so the same block classes and the same F1 on any gold set) on
every gold page, with the shipped `corpus` and `article` options and with
options that switch each rule off or push it to its edge, and on generated
pages: xpath trees with ties between candidates, commas of four scripts,
headings, link-heavy blocks, furniture flags, <article>/<main>/<header> frames,
what elements state about themselves (elementmarks.NEGATIVE, BODY) and every class.
"""

from __future__ import annotations

import dataclasses
import importlib
import random
from collections.abc import Callable, Iterator, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corpus_crawler import dom
from corpus_crawler.config import ExtractConfig, JustextParams, Preset
from corpus_crawler.container import (
    ContainerOptions,
    compiled_container_pass,
    container_pass,
    function_blocks,
)
from corpus_crawler.decode import decode_html
from corpus_crawler.elementmarks import ASIDE, BODY, COMMENTS, NEGATIVE, UNLIKELY
from corpus_crawler.extract import classify_segments, stoplist_and_params
from corpus_crawler.extractors import visible
from corpus_crawler.model import Paragraph, ParagraphClass
from corpus_crawler.presets import CONTAINER_PRESETS, container_options
from corpus_crawler.segment import furniture, segment, stated_elements

container_module = importlib.import_module("corpus_crawler.container")

GoldPages = Callable[[str], Iterator[tuple[str, bytes, str, dict[str, object]]]]
GOLD_SETS = ("cleaneval-dev", "cleanportaleval", "readability")

#: Changes to the shipped options that move every branch of the pass.
VARIANTS: dict[str, dict[str, object]] = {
    "shipped": {},
    "no-furniture-rule": {"skip_unlikely": False},
    # past what a C long holds: the compiled pass clamps it, with the same result
    "always-retry": {"min_container_chars": 10**30},
    "no-tag-scores-no-region": {"tag_scores": False, "region_share": 0.0},
    "whole-page-region": {"region_share": 1.0},
    # shares that are not binary fractions: the scores' rounding shows
    "odd-shares": {"grandparent_share": 0.3, "sibling_share": 0.07, "sibling_min_score": 3.3},
    "extreme-shifts": {"inside_shift": 3, "region_shift": -2, "outside_shift": -3},
    "small-points": {"min_block_length": 1, "length_per_point": 7, "max_length_points": 10**30},
    "no-templates": {"template_shift": 0},
    "strong-small-templates": {"template_shift": 2, "template_min_blocks": 2},
    # jusText's link test with the container's limit: off, inside only, region only,
    # and at a limit that is not a binary fraction
    "no-relaxed-links": {"container_link_density": False, "region_link_density": False},
    "relaxed-links-inside": {"container_link_density": True, "region_link_density": False},
    "relaxed-links-region": {"container_link_density": False, "region_link_density": True},
    "no-function-blocks": {"function_max_length": 0},
    "long-function-blocks": {"function_max_length": 10**30, "template_min_blocks": 2},
    "relaxed-links-odd-limit": {
        "container_link_density": True,
        "region_link_density": True,
        "max_link_density": 0.33,
    },
    # readability's conditional cleaning, ad labels and photo credits (corpus5):
    # off, cleaning everything with a link, and at a limit that is not a binary fraction
    "no-cleaning": {"clean_conditionally": False, "drop_ad_labels": False, "credits_inside": False},
    "clean-every-linked-element": {"clean_conditionally": True, "clean_link_density": 0.0},
    "clean-odd-limit": {"clean_conditionally": True, "clean_link_density": 0.33},
    "cleaning-without-furniture": {"clean_conditionally": True, "skip_unlikely": False},
    "no-linked-prose": {"linked_prose_inside": False},
    "linked-prose-at-any-link-limit": {"linked_prose_inside": True, "max_link_density": 0.0},
    # the furniture retry with comment sections kept out (article5): as shipped in
    # `article`, and on every page
    "retry-keeps-comments-out": {"retry_keeps_asides_out": True},
    "always-retry-comments-out": {"retry_keeps_asides_out": True, "min_container_chars": 10**30},
    "retry-takes-longest": {"retry_takes_longest": True},
    "retry-weighs-prose": {"retry_weighs_prose": True},
    "region-stops-at-teasers": {"region_stops_at_teasers": True},
    "repeated-teasers": {"region_stops_at_teasers": True, "repeated_teasers": True},
    "described-teasers": {"region_stops_at_teasers": True, "described_teasers": True},
    "repeated-teasers-all-the-way": {
        "region_stops_at_teasers": True,
        "repeated_teasers": True,
        "region_share": 1.0,
    },
    # readability's cleaning in the region too: as `article` ships it, off, with the
    # whole page as the region, and cleaning every linked element there
    "clean-region": {"clean_region": True},
    "no-clean-region": {"clean_region": False},
    "clean-whole-page-region": {"clean_region": True, "region_share": 1.0},
    "clean-region-every-link": {"clean_region": True, "clean_link_density": 0.0},
    "region-stops-at-teasers-all-the-way": {"region_stops_at_teasers": True, "region_share": 1.0},
    # and below a reader thread that nothing names (as `article` ships it), all the way up
    "region-stops-at-threads": {"region_stops_at_threads": True},
    "region-stops-at-threads-all-the-way": {"region_stops_at_threads": True, "region_share": 1.0},
    "always-retry-prose-longest": {
        "retry_weighs_prose": True,
        "retry_takes_longest": True,
        "min_container_chars": 10**30,
    },
    "select-scores-points": {"select_scores_nothing": False},
    "description-lists-score-points": {"description_lists_score_nothing": False},
    "list-items-weighed-alone": {"lists_weighed_whole": False},
    "every-list-weighed-whole": {"lists_weighed_whole": True, "max_link_density": 1.0},
    "always-retry-longest": {
        "retry_takes_longest": True,
        "retry_keeps_asides_out": True,
        "min_container_chars": 10**30,
    },
    # the `article` preset's readability rules (issue 13, article1-6), each off,
    # pushed to its edge, and all of them on in `corpus`
    "no-stated-marks": {"article_body": False, "clean_negative_names": False},
    "no-segments": {"join_segments": False},
    "every-segment": {
        "join_segments": True,
        "article_segment_share": 0.0,
        "segment_link_density": 1.0,
    },
    "no-sibling-paragraphs": {"join_sibling_paragraphs": False},
    "paragraphs-four-levels-up": {"join_sibling_paragraphs": True, "paragraph_levels": 4},
    "no-semantic-frames": {"article_region": False, "semantic_main": False},
    "furniture-inside-no-fallback": {
        "furniture_outside": False,
        "fallback_to_container": False,
        "linked_paragraphs_inside": False,
    },
    "no-scoring-items": {"item_link_density": 0.0},
    "article-rules-everywhere": {
        "join_segments": True,
        "join_sibling_paragraphs": True,
        "paragraph_levels": 3,
        "article_region": True,
        "semantic_main": True,
        "article_body": True,
        "clean_negative_names": True,
        "furniture_outside": True,
        "fallback_to_container": True,
        "linked_paragraphs_inside": True,
        "item_link_density": 0.25,
    },
}

Page = tuple[str, tuple[Paragraph, ...], JustextParams, list[int], dict[str, int]]


@pytest.fixture(scope="module")
def preset_pages(gold_pages: GoldPages) -> list[Page]:
    """Every gold page's visible blocks classified as the presets classify them,
    with their furniture flags and the marks its elements state about
    themselves: what `container_pass` gets in `extract()`."""
    config = ExtractConfig(preset=Preset.CORPUS, language="en")
    stoplist, params = stoplist_and_params("en", config)
    pages = []
    for gold_set in GOLD_SETS:
        for page_id, html, _gold, _record in gold_pages(gold_set):
            root = dom.parse(decode_html(html).text)
            if root is None:
                continue
            segments = visible(segment(dom.preprocess_seed(root), marked=True, stated=True))
            paragraphs = classify_segments(segments, stoplist, params)
            pages.append(
                (
                    f"{gold_set}/{page_id}",
                    paragraphs,
                    params,
                    furniture(segments),
                    stated_elements(segments),
                )
            )
    return pages


def both(
    paragraphs: tuple[Paragraph, ...],
    params: JustextParams,
    options: ContainerOptions,
    unlikely: Sequence[int] | None,
    stated: dict[str, int] | None = None,
) -> tuple[tuple[Paragraph, ...], tuple[Paragraph, ...]]:
    fast = container_pass(paragraphs, params, options, unlikely, compiled=True, stated=stated)
    slow = container_pass(paragraphs, params, options, unlikely, compiled=False, stated=stated)
    return fast, slow


#: The options each preset switches on that only the Python pass knows: none
#: since the article preset's readability rules (issue 13, article1-6) were
#: ported. A rule added in Python first is listed here until it is ported.
PYTHON_ONLY: dict[Preset, frozenset[str]] = {
    Preset.CORPUS: frozenset(),
    Preset.ARTICLE: frozenset(),
    Preset.ARTICLE_COMMENTS: frozenset(),
}


def python_only(options: ContainerOptions) -> frozenset[str]:
    # the walk options (page_links_only, drop_hidden_inline) are the walk's, not the pass's;
    # unwrap_layouts makes the marks the pass takes; drop_program_code is code_pass's, run after it
    known = (
        container_module._fast.CONTAINER_FIELDS
        | container_module.WALK_FIELDS
        | container_module.BEFORE_FIELDS
        | container_module.AFTER_FIELDS
    )
    return frozenset(
        f.name
        for f in dataclasses.fields(options)
        if f.name not in known and getattr(options, f.name) != f.default
    )


def compiled_part(options: ContainerOptions) -> ContainerOptions:
    """The options with what only the Python pass knows at its defaults."""
    defaults = {f.name: f.default for f in dataclasses.fields(options)}
    return dataclasses.replace(options, **{name: defaults[name] for name in python_only(options)})  # type: ignore[arg-type]


@pytest.mark.parametrize("preset", CONTAINER_PRESETS, ids=lambda p: p.value)
def test_the_compiled_container_pass_is_built_and_used_by_the_presets(preset: Preset) -> None:
    """Without it, the comparisons below compare the Python pass with itself, and
    the presets lose their speed. Fails when a preset switches on an option that
    only the Python pass knows and that is not listed in PYTHON_ONLY: port it to
    _classify_fast.pyx (CONTAINER_FIELDS), or list it there and say why."""
    assert container_module._fast is not None, "corpus_crawler._classify_fast was not compiled"
    options = container_options(preset)
    assert options is not None
    assert python_only(options) == PYTHON_ONLY[preset]
    assert compiled_container_pass(options) is not PYTHON_ONLY[preset]
    assert compiled_container_pass(compiled_part(options))


def test_forcing_the_compiled_pass_on_options_it_does_not_know_is_an_error(
    preset_pages: list[Page], monkeypatch: pytest.MonkeyPatch
) -> None:
    """It would ignore them silently: a comparison with the Python pass would then
    compare two different things. (A flag the compiled pass does not know yet is
    made here by taking one out of its list.)"""
    fast = container_module._fast
    assert fast is not None
    monkeypatch.setattr(fast, "CONTAINER_FIELDS", fast.CONTAINER_FIELDS - {"article_body"})
    compiled_container_pass.cache_clear()
    try:
        options = container_options(Preset.ARTICLE)
        assert options is not None and python_only(options) == {"article_body"}
        _page, paragraphs, params, unlikely, stated = preset_pages[0]
        with pytest.raises(ValueError, match="does not know"):
            container_pass(paragraphs, params, options, unlikely, compiled=True, stated=stated)
        # unforced, such options run in Python
        assert container_pass(
            paragraphs, params, options, unlikely, stated=stated
        ) == container_pass(paragraphs, params, options, unlikely, compiled=False, stated=stated)
    finally:
        compiled_container_pass.cache_clear()


@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.parametrize("preset", CONTAINER_PRESETS, ids=lambda p: p.value)
def test_compiled_and_python_container_passes_agree_on_gold_pages(
    preset_pages: list[Page],
    preset: Preset,
    variant: str,
) -> None:
    shipped = container_options(preset)
    assert shipped is not None
    # a preset's Python-only rules (PYTHON_ONLY) at their defaults: what the compiled pass runs
    options = dataclasses.replace(compiled_part(shipped), **VARIANTS[variant])  # type: ignore[arg-type]
    differing = []
    moved = 0
    for page_id, paragraphs, params, unlikely, stated in preset_pages:
        fast, slow = both(paragraphs, params, options, unlikely, stated)
        if fast != slow:
            differing.append(page_id)
        moved += sum(
            a.final_class is not b.final_class for a, b in zip(slow, paragraphs, strict=True)
        )
    assert len(preset_pages) == 245
    assert differing == []
    # the pass did something on these pages, so agreeing is not agreeing on nothing
    assert moved > 100


# --------------------------------------------------------------------------- generated pages

_STEPS = (
    "div[1]",
    "div[2]",
    "div[3]",
    "p[1]",
    "p[2]",
    "td[1]",
    "ul[1]",
    "li[2]",
    "h2[1]",
    "ol[1]",
    "table[1]",
    "section[1]",
    # a list's items, weighed together (lists_weighed_whole)
    "ol[1]/li[1]",
    "ul[2]/li[3]",
)
#: What readability.js calls an ad or a loading label, and near misses.
_LABELS = ("Advertisement", "  ad ", "Loading\u2026", "loading...", "Ads", "Werbung!")
_ALPHABET = "ab ,\uff0c\u3001\u060c\ufe50\u2e41\u00a9&copy;."
_CLASSES = list(ParagraphClass)


def _xpath(rng: random.Random, wrappers: list[str], steps: tuple[str, ...]) -> str:
    """Mostly a block in one of the page's wrappers (so wrappers compete, tie and
    join as siblings), sometimes anywhere, sometimes at the top of the tree."""
    draw = rng.randrange(30)
    if draw == 0:
        return rng.choice(["/", "/html[1]", "/html[1]/body[1]"])
    if draw < 20:
        return rng.choice(wrappers) + rng.choice(["", "/p[1]", "/p[2]", "/p[3]", "/div[1]/p[1]"])
    chosen = rng.choices(steps, k=rng.randrange(5))
    return "/html[1]/body[1]" + "".join("/" + step for step in chosen)


def _paragraphs(rng: random.Random, steps: tuple[str, ...] = _STEPS) -> tuple[Paragraph, ...]:
    """A page of blocks from a seeded generator (hypothesis draws the seed and the
    options: drawing each of a page's ~300 values through it cost ~80 ms an example)."""
    parent = rng.choice(["/html[1]/body[1]", "/html[1]/body[1]/div[1]"])
    wrappers = [f"{parent}/{rng.choice(steps)}" for _ in range(rng.randint(1, 4))]
    result = []
    for _ in range(rng.randint(1, 40)):
        text = "".join(rng.choices(_ALPHABET, k=rng.randrange(41))) * rng.randint(1, 12)
        if rng.random() < 0.05:
            text = rng.choice(_LABELS)
        length = len(text)
        link_chars = rng.randint(0, length)
        result.append(
            Paragraph(
                text,
                rng.choice(_CLASSES),
                rng.choice(_CLASSES),
                length,
                text.count(" ") + 1,
                link_chars,
                link_chars / length if length else 0.0,
                0,
                # stop-word density: linked_prose_inside reads it
                rng.choice([0.0, 0.2, 0.32, 0.6]),
                "",
                _xpath(rng, wrappers, steps),
                rng.random() < 0.2,
                False,
                rng.random() < 0.1,
                rng.random() < 0.1,
            )
        )
    return tuple(result)


# readability's own values half of the time, as the presets use them
_shares = st.one_of(st.sampled_from([0.0, 0.2, 0.5, 1.0, 0.3]), st.floats(0, 1))
_options = st.builds(
    ContainerOptions,
    min_block_length=st.sampled_from([1, 25, 60]),
    length_per_point=st.sampled_from([7, 100, 150]),
    max_length_points=st.integers(1, 5),
    grandparent_share=_shares,
    sibling_share=_shares,
    sibling_min_score=st.one_of(st.integers(0, 12), st.floats(0, 20)),
    max_link_density=_shares,
    region_share=_shares,
    inside_shift=st.integers(-3, 3),
    region_shift=st.integers(-3, 3),
    outside_shift=st.integers(-3, 3),
    skip_unlikely=st.booleans(),
    tag_scores=st.booleans(),
    min_container_chars=st.integers(1, 2000),
    template_shift=st.integers(0, 2),
    template_min_blocks=st.integers(1, 4),
    container_link_density=st.booleans(),
    region_link_density=st.booleans(),
    function_max_length=st.sampled_from([0, 30, 80, 10**30]),
    clean_conditionally=st.booleans(),
    clean_link_density=_shares,
    drop_ad_labels=st.booleans(),
    credits_inside=st.booleans(),
    linked_prose_inside=st.booleans(),
    lists_weighed_whole=st.booleans(),
)
_params = st.builds(
    JustextParams,
    max_heading_distance=st.one_of(st.integers(0, 400), st.just(2**70)),
    no_headings=st.booleans(),
    # 0: every template passes the pooled stop-word test (generated blocks have none)
    stopwords_low=st.sampled_from([0.0, 0.3]),
    length_low=st.just(1),
    length_high=st.sampled_from([1, 200]),
)


@settings(max_examples=500, deadline=None)
@given(st.integers(0, 2**32), _params, _options)
def test_compiled_and_python_container_passes_agree_on_generated_pages(
    seed: int, params: JustextParams, options: ContainerOptions
) -> None:
    rng = random.Random(seed)
    paragraphs = _paragraphs(rng)
    unlikely = None if rng.random() < 0.3 else [rng.random() < 0.3 for _ in paragraphs]
    fast, slow = both(paragraphs, params, options, unlikely)
    assert fast == slow


#: Steps the article rules look for: the semantic <article> and <main>, what an
#: article's region leaves out (header, footer, aside), list items, a step
#: without an index (no "/header[" to find), and one template two steps deep.
_ARTICLE_STEPS = (
    *_STEPS,
    "article[1]",
    "article[2]",
    "main[1]",
    "header[1]",
    "footer[1]",
    "aside[1]",
    "li[1]",
    "header",
    "section[2]/div[1]",
    # a description list's terms and descriptions (description_lists_score_nothing)
    "dl[1]",
    "dt[1]",
    "dd[2]",
)
_article_rules = st.fixed_dictionaries(
    {
        "join_segments": st.booleans(),
        "segment_link_density": _shares,
        "article_segment_share": _shares,
        "join_sibling_paragraphs": st.booleans(),
        "paragraph_levels": st.integers(1, 4),
        "article_region": st.booleans(),
        "linked_paragraphs_inside": st.booleans(),
        "item_link_density": _shares,
        "semantic_main": st.booleans(),
        "furniture_outside": st.booleans(),
        "furniture_unlifted": st.booleans(),
        "fallback_to_container": st.booleans(),
        "article_body": st.booleans(),
        "clean_negative_names": st.booleans(),
        "retry_keeps_asides_out": st.booleans(),
        "retry_takes_longest": st.booleans(),
        "retry_weighs_prose": st.booleans(),
        "region_stops_at_teasers": st.booleans(),
        "region_stops_at_threads": st.booleans(),
        "repeated_teasers": st.booleans(),
        "described_teasers": st.booleans(),
        "clean_region": st.booleans(),
        "select_scores_nothing": st.booleans(),
        "description_lists_score_nothing": st.booleans(),
        "comment_shift": st.none() | st.integers(-3, 3),
        "furniture_shift": st.integers(-3, 3),
    }
)
_NOT_GOOD = [ParagraphClass.BAD, ParagraphClass.SHORT, ParagraphClass.NEAR_GOOD]


def _stated(rng: random.Random, paragraphs: tuple[Paragraph, ...]) -> dict[str, int]:
    """Marks on some of the elements above the blocks (and on one that holds no
    block), in a random order: the order decides between equal bodies."""
    elements = set()
    for p in paragraphs:
        path = p.xpath
        while path:
            elements.add(path)
            path = path[: max(path.rfind("/"), 0)]
    marked = [e for e in sorted(elements) if rng.random() < 0.2]
    rng.shuffle(marked)
    stated = {e: rng.choice([NEGATIVE, BODY, NEGATIVE | BODY]) for e in marked}
    if rng.random() < 0.2:
        stated["/html[1]/body[1]/div[9]"] = rng.choice([NEGATIVE, BODY])
    return stated


@settings(max_examples=500, deadline=None)
@given(st.integers(0, 2**32), _params, _options, _article_rules)
def test_compiled_and_python_article_rules_agree_on_generated_pages(
    seed: int, params: JustextParams, options: ContainerOptions, rules: dict[str, object]
) -> None:
    """The `article` preset's rules on pages with semantic frames, stated marks,
    comment sections (elementmarks.ASIDE) and, often, nothing kept yet (where
    the fallback keeps the container)."""
    options = dataclasses.replace(options, **rules)  # type: ignore[arg-type]
    rng = random.Random(seed)
    paragraphs = _paragraphs(rng, _ARTICLE_STEPS)
    if rng.random() < 0.4:
        paragraphs = tuple(
            dataclasses.replace(
                p, cf_class=rng.choice(_NOT_GOOD), final_class=rng.choice(_NOT_GOOD)
            )
            for p in paragraphs
        )
    unlikely = (
        None
        if rng.random() < 0.3
        else [
            rng.choice([0, 0, UNLIKELY, UNLIKELY | ASIDE, UNLIKELY | ASIDE | COMMENTS])
            for _ in paragraphs
        ]
    )
    stated = None if rng.random() < 0.2 else _stated(rng, paragraphs)
    fast, slow = both(paragraphs, params, options, unlikely, stated)
    assert fast == slow


def test_paragraph_subclasses_take_the_attribute_path() -> None:
    """Paragraphs of a subclass are read by attribute, not by slot, and come back
    as plain Paragraphs, as the Python pass builds them."""

    @dataclasses.dataclass(frozen=True, slots=True)
    class Marked(Paragraph):
        note: str = ""

    text = "One sentence, with commas, in a story that runs on for a while. " * 3
    paragraphs = tuple(
        Marked(
            text,
            ParagraphClass.NEAR_GOOD,
            ParagraphClass.BAD,
            len(text),
            xpath=f"/html[1]/body[1]/div[1]/p[{i}]",
        )
        for i in range(1, 5)
    )
    options = ContainerOptions(inside_shift=2)
    fast, slow = both(paragraphs, JustextParams(), options, None)
    assert fast == slow
    assert all(p.final_class is ParagraphClass.GOOD for p in fast)


def test_furniture_flags_of_the_wrong_length_are_an_error_in_both() -> None:
    text = "A block of text, long enough to score a point or two in the pass. " * 2
    paragraphs = (
        Paragraph(
            text,
            ParagraphClass.SHORT,
            ParagraphClass.SHORT,
            len(text),
            xpath="/html[1]/body[1]/div[1]/p[1]",
        ),
    )
    options = ContainerOptions(inside_shift=1, skip_unlikely=True)
    for compiled in (True, False):
        with pytest.raises(ValueError):
            container_pass(paragraphs, JustextParams(), options, [True, True], compiled=compiled)


def test_an_option_the_compiled_pass_does_not_know_falls_back_to_python(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A flag added to ContainerOptions later (issue 13's decision work) runs in
    Python until the compiled pass learns it; at its default it changes nothing."""
    fast = container_module._fast
    assert fast is not None
    monkeypatch.setattr(fast, "CONTAINER_FIELDS", fast.CONTAINER_FIELDS - {"tag_scores"})
    compiled_container_pass.cache_clear()
    try:
        assert not compiled_container_pass(ContainerOptions(tag_scores=True))
        assert compiled_container_pass(ContainerOptions(tag_scores=False))
    finally:
        compiled_container_pass.cache_clear()


# --------------------------------------------------------------------------- function blocks


@pytest.mark.parametrize(
    ("max_length", "min_blocks"), [(80, 3), (100, 3), (10**30, 2), (30, 1), (200, 4)]
)
def test_compiled_and_python_function_blocks_agree_on_gold_pages(
    preset_pages: list[Page],
    max_length: int,
    min_blocks: int,
) -> None:
    """The compiled twin counts 64-bit hashes of the words; the flags must be
    the Python pass's on every gold page (thousands of function blocks)."""
    differing = []
    found = 0
    for page_id, paragraphs, params, _unlikely, _stated in preset_pages:
        fast = function_blocks(paragraphs, params, max_length, min_blocks, compiled=True)
        slow = function_blocks(paragraphs, params, max_length, min_blocks, compiled=False)
        if fast != slow:
            differing.append(page_id)
        found += sum(slow)
    assert differing == []
    assert found > 500


#: Letter words of several scripts, digits of two (ASCII and Arabic-Indic),
#: numerics that are letters to re (superscript two, a vulgar fraction),
#: underscores, and a capital whose lower case is two code points.
_WORD_PARTS = (
    "posted",
    "by",
    "Posts:",
    "2783",
    "\u0663\u0664",
    "x\u00b2",
    "\u00bd",
    "a_b",
    "\u0130",
    "\u00c9t\u00e9",
    "\u65e5\u672c",
    " ",
    " | ",
    "\n",
)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**32), st.sampled_from([0, 12, 40, 10**30]), st.integers(1, 4))
def test_compiled_and_python_function_blocks_agree_on_generated_pages(
    seed: int, max_length: int, min_blocks: int
) -> None:
    rng = random.Random(seed)
    paths = ["html.body.div.p", "html.body.td", "html.body.ul.li"]
    paragraphs = []
    for _ in range(rng.randint(0, 30)):
        text = "".join(rng.choices(_WORD_PARTS, k=rng.randint(0, 12)))
        paragraphs.append(
            Paragraph(
                text,
                ParagraphClass.SHORT,
                ParagraphClass.SHORT,
                len(text),
                dom_path=rng.choice(paths),
                heading=rng.random() < 0.1,
            )
        )
    params = JustextParams(length_low=1, length_high=rng.choice([1, 30, 200]))
    fast = function_blocks(paragraphs, params, max_length, min_blocks, compiled=True)
    slow = function_blocks(paragraphs, params, max_length, min_blocks, compiled=False)
    assert fast == slow


def test_a_relaxed_class_that_a_negative_shift_takes_back_is_no_change() -> None:
    """The case hypothesis found (seed 523700): inside blocks whose class the
    container's link limit relaxes and an inside shift of -3 takes back to BAD. The
    Python pass sees no change and keeps the given final classes; the compiled pass
    counted the relaxed class as a change and reran the later phases."""
    params = JustextParams(
        length_low=1, length_high=1, stopwords_low=0.0, max_link_density=0.2,
    )  # fmt: skip
    options = ContainerOptions(
        min_block_length=1, length_per_point=7, max_length_points=1, grandparent_share=0.0,
        sibling_share=0.0, sibling_min_score=0, max_link_density=1.0, region_share=0.0,
        inside_shift=-3, min_container_chars=1, template_min_blocks=1,
        container_link_density=True,
    )  # fmt: skip
    rng = random.Random(523700)
    paragraphs = _paragraphs(rng)
    unlikely = None if rng.random() < 0.3 else [rng.random() < 0.3 for _ in paragraphs]
    fast, slow = both(paragraphs, params, options, unlikely)
    assert fast == slow


def _block(xpath: str, text: str, cls: ParagraphClass = ParagraphClass.SHORT) -> Paragraph:
    return Paragraph(text, cls, cls, len(text), text.count(" ") + 1, xpath=xpath)


def test_two_blocks_of_one_sibling_paragraph_count_twice_for_the_region() -> None:
    """readability's sibling paragraphs are a list of xpaths, one per block: a
    <div> of text split in two blocks (by a <br> or an inline child) is there
    twice, and main_region sums its points twice. Here that keeps the region
    at the container (6 points of 10 once, 8 twice, against 7 needed), so the
    footer's paragraph is outside it, in both passes."""
    story = "A story that runs on for long enough to score every length point. " * 5
    line = "A short line of the story. And more."
    paragraphs = (
        _block("/html[1]/body[1]/div[1]/p[1]", story[:300]),
        _block("/html[1]/body[1]/div[2]", line),
        _block("/html[1]/body[1]/div[2]", line),
        _block("/html[1]/body[1]/footer[1]/p[1]", story[:300]),
    )
    options = ContainerOptions(
        grandparent_share=0.0, sibling_min_score=5, region_share=0.7,
        inside_shift=1, region_shift=1, join_sibling_paragraphs=True,
    )  # fmt: skip
    fast, slow = both(paragraphs, JustextParams(), options, None)
    assert fast == slow
    assert [p.cf_class for p in slow] == [ParagraphClass.NEAR_GOOD] * 3 + [ParagraphClass.SHORT]


def test_an_article_header_is_a_header_step_with_its_index() -> None:
    """container._in_trim looks for "/header[" below the <article>: a block under
    a header step without an index (which segment never writes) is in the
    article's region, one under header[1] is not, in both passes."""
    story = "A story that runs on for long enough to score every length point. " * 5
    paragraphs = (
        _block("/html[1]/body[1]/article[1]/div[1]/p[1]", story),
        _block("/html[1]/body[1]/article[1]/div[1]/p[2]", story),
        _block("/html[1]/body[1]/article[1]/header/p[1]", "A standfirst line."),
        _block("/html[1]/body[1]/article[1]/header[1]/p[1]", "A byline line."),
    )
    options = ContainerOptions(
        sibling_min_score=50, region_share=0.0, inside_shift=1, region_shift=1,
        article_region=True,
    )  # fmt: skip
    fast, slow = both(paragraphs, JustextParams(), options, None)
    assert fast == slow
    assert [p.cf_class for p in slow][2:] == [ParagraphClass.NEAR_GOOD, ParagraphClass.SHORT]


def test_the_fallback_without_a_container_in_both() -> None:
    """No block reaches readability's 25 characters, so nothing scores and no
    block is kept: `fallback_to_container` keeps a short note's lines (headings
    included), but not on a page with a link list or a copyright line, nor on
    one with furniture. Random pages seldom reach it: their link densities veto it."""
    lines = ("A short note.", "Back on Monday.", "Thanks, all.")
    paragraphs = tuple(
        _block(f"/html[1]/body[1]/div[1]/p[{i}]", text, ParagraphClass.SHORT)
        for i, text in enumerate(lines, start=1)
    )
    options = ContainerOptions(inside_shift=2, fallback_to_container=True)
    fast, slow = both(paragraphs, JustextParams(), options, None)
    assert fast == slow
    assert all(p.cf_class is p.final_class is ParagraphClass.GOOD for p in slow)
    # page furniture anywhere: a navigation page, nothing kept
    fast, slow = both(paragraphs, JustextParams(), options, [0, 0, 2])
    assert fast == slow == paragraphs
    # a link list or a copyright line: the same
    linked = dataclasses.replace(paragraphs[2], link_chars=10, link_density=10 / 12)
    for last in (linked, _block("/html[1]/body[1]/div[1]/p[3]", "\u00a9 2006 Me")):
        page = (*paragraphs[:2], last)
        fast, slow = both(page, JustextParams(), options, None)
        assert fast == slow == page


def test_the_fallback_takes_the_container_before_its_cleaning_in_both() -> None:
    """swap-stop.org's photo swap (trafilatura's pages): a post of short lines
    ("Shuji: Widelux.") in a wrapper that also holds a related-posts list, so
    readability's conditional cleaning drops the wrapper for its links and nothing
    is kept. readability then tries again without the cleaning; the fallback takes
    the container's blocks as that attempt does (the byline and the post's lines),
    the links and the furniture ("Share this post") still left out."""

    def block(xpath: str, text: str, cls: ParagraphClass, links: int = 0) -> Paragraph:
        return dataclasses.replace(
            _block(f"/html[1]/body[1]/div[1]/article[1]/{xpath}", text, cls),
            link_chars=links,
            link_density=links / len(text),
        )

    byline = "Posted on 11 April 2018, by Walter, from Aachen, in Swaps, Japan, Germany"
    lines = ("Shuji: Japan.", "Walter: Germany.", "Shuji: Widelux.")
    related = [f"Collaboration of Shuji and Walter, part {i}" for i in range(1, 5)]
    paragraphs = (
        block("p[1]", byline, ParagraphClass.BAD),
        *(block(f"div[1]/p[{i}]", t, ParagraphClass.SHORT) for i, t in enumerate(lines, 1)),
        *(
            block(f"div[1]/ul[1]/li[{i}]", t, ParagraphClass.BAD, links=len(t))
            for i, t in enumerate(related, 1)
        ),
        block("div[2]/p[1]", "Share this post", ParagraphClass.SHORT),
    )
    options = ContainerOptions(
        inside_shift=1, skip_unlikely=True, clean_conditionally=True, clean_link_density=0.3,
        fallback_to_container=True,
    )  # fmt: skip
    furniture = [0] * 8 + [UNLIKELY]
    fast, slow = both(paragraphs, JustextParams(), options, furniture)
    assert fast == slow
    assert [p.text for p in slow if p.final_class is ParagraphClass.GOOD] == [byline, *lines]
