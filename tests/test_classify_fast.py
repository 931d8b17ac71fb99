"""The compiled classifier (`_classify_fast.pyx`) against the Python one.

`extract.classify_segments(..., compiled=True|False)` must give equal
Paragraphs (every field) on every gold page, for each preset and for
parameters that switch rules off, and on generated blocks that probe the
features: Unicode whitespace and case, copyright marks, stop words, link
characters, heading and SELECT paths, image blocks. The Paragraphs it builds
without the dataclass constructor must behave like constructed ones.
"""

from __future__ import annotations

import copy
import dataclasses
import importlib
import pickle
from collections.abc import Callable, Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corpus_crawler import dom
from corpus_crawler.config import ExtractConfig, JustextParams, Preset
from corpus_crawler.decode import decode_html, decode_like_justext
from corpus_crawler.extract import classify_segments, stoplist_and_params
from corpus_crawler.model import Paragraph, ParagraphClass
from corpus_crawler.segment import Segment, segment

# the module, not the function `corpus_crawler.extract` that shadows it
extract_module = importlib.import_module("corpus_crawler.extract")
# The compiled classifier is chosen in classify.py (beside the phases it runs).
classify_module = importlib.import_module("corpus_crawler.classify")

GoldPages = Callable[[str], Iterator[tuple[str, bytes, str, dict[str, object]]]]
GOLD_SETS = ("cleaneval-dev", "cleanportaleval", "readability")

PARAMS = {
    "defaults": None,
    "no-headings": JustextParams(no_headings=True),
    "no-headlines-far-headings": JustextParams(no_headlines=True, max_heading_distance=10**30),
    "language-independent": JustextParams(stopwords_low=0.0, stopwords_high=0.0),
    "loose": JustextParams(length_low=0, length_high=10, max_link_density=1.0),
}


def both(
    segments: list[Segment], stoplist: frozenset[str], params: JustextParams, reference: bool
) -> tuple[tuple[Paragraph, ...], tuple[Paragraph, ...]]:
    fast = classify_segments(segments, stoplist, params, reference=reference, compiled=True)
    slow = classify_segments(segments, stoplist, params, reference=reference, compiled=False)
    return fast, slow


def test_the_compiled_classifier_is_built() -> None:
    """Without it, the comparisons below would compare the Python classifier with itself."""
    fast = classify_module._fast
    assert fast is not None, "corpus_crawler._classify_fast was not compiled: pip install -e ."
    assert fast.FAST_PARAGRAPHS, "Paragraph's slot layout changed: update _classify_fast.pyx"


@pytest.mark.parametrize("params_name", list(PARAMS))
@pytest.mark.parametrize("reference", [False, True], ids=["seed", "reference"])
@pytest.mark.parametrize("gold_set", GOLD_SETS)
def test_compiled_and_python_classifiers_agree_on_gold_pages(
    gold_pages: GoldPages, gold_set: str, reference: bool, params_name: str
) -> None:
    preset = Preset.REFERENCE if reference else Preset.SEED
    config = ExtractConfig(preset=preset, language="en")
    stoplist, default_params = stoplist_and_params("en", config)
    params = PARAMS[params_name] or default_params
    differing = []
    pages = 0
    for page_id, html, _gold, _record in gold_pages(gold_set):
        if reference:
            root = dom.parse_like_reference(decode_like_justext(html).text, html)
            root = None if root is None else dom.preprocess_reference(root)
        else:
            root = dom.parse(decode_html(html).text)
            root = None if root is None else dom.preprocess_seed(root)
        if root is None:
            continue
        segments = segment(root, reference=reference)
        fast, slow = both(segments, stoplist, params, reference)
        pages += 1
        if fast != slow:
            differing.append(page_id)
    assert pages >= 50
    assert differing == []


_ALPHABET = "abzZ \t\n\u00a0\u2003ΣσςİIı©&copy;ÉéßẞﬁǅÅ.,"
_PATHS = (
    "html.body.div",
    "html.body.h1",
    "html.body.div.h2.span",
    "html.body.form.select.option",
    "html.body.h1x",
    "html.body.th1.h10",
    "select",
    "",
)


@st.composite
def _segments(draw: st.DrawFn) -> list[Segment]:
    count = draw(st.integers(0, 25))
    result = []
    for i in range(count):
        text = draw(st.text(alphabet=_ALPHABET, max_size=120))
        if draw(st.booleans()):
            text = " ".join(["the", "a", "of", text, "and", "zz"] * draw(st.integers(1, 40)))
        links = draw(st.integers(0, len(text) + 3))
        images = draw(st.integers(0, 2))
        path = draw(st.sampled_from(_PATHS))
        result.append(Segment(text, links, path, f"/x[{i}]", images))
    return result


_params = st.builds(
    lambda low, span, sw_low, sw_span, link, distance, no_headings, no_headlines: JustextParams(
        length_low=low,
        length_high=low + span,
        stopwords_low=sw_low,
        stopwords_high=min(1.0, sw_low + sw_span),
        max_link_density=link,
        max_heading_distance=distance,
        no_headings=no_headings,
        no_headlines=no_headlines,
    ),
    st.integers(0, 300),
    st.integers(0, 300),
    st.floats(0, 1),
    st.floats(0, 0.5),
    st.floats(0, 1),
    st.one_of(st.integers(0, 400), st.just(2**70)),
    st.booleans(),
    st.booleans(),
)


@settings(max_examples=1500, deadline=None)
@given(
    _segments(),
    st.sampled_from([frozenset(), frozenset({"zz", "the", "a", "of", "and", "σς", "i̇", "ß"})]),
    _params,
    st.booleans(),
)
def test_compiled_and_python_classifiers_agree_on_generated_blocks(
    segments: list[Segment], stoplist: frozenset[str], params: JustextParams, reference: bool
) -> None:
    fast, slow = both(segments, stoplist, params, reference)
    assert fast == slow


def test_stop_words_are_counted_after_full_unicode_lowercasing() -> None:
    """`str.lower` turns final capital sigma into ς and İ into two code points."""
    segments = [Segment("ΟΔΟΣ İ x", 0, "html.body.p", "/p[1]", 0)]
    stoplist = frozenset({"οδος", "i̇"})
    fast, slow = both(segments, stoplist, JustextParams(), False)
    assert fast == slow
    assert fast[0].word_count == 3
    assert fast[0].stopword_count == 2  # "οδος" (final ς) and "i̇"


def test_paragraphs_built_by_the_compiled_classifier_behave_like_constructed_ones() -> None:
    segments = [Segment("Some text with the words in it. " * 5, 4, "html.body.p", "/p[1]", 0)]
    (fast,), (slow,) = both(segments, frozenset({"the", "with", "in"}), JustextParams(), False)
    assert type(fast) is Paragraph
    assert fast == slow
    assert repr(fast) == repr(slow)
    assert pickle.loads(pickle.dumps(fast)) == slow
    assert copy.deepcopy(fast) == slow
    assert dataclasses.replace(fast, text="x").text == "x"
    assert dataclasses.asdict(fast) == dataclasses.asdict(slow)
    with pytest.raises(dataclasses.FrozenInstanceError):
        fast.text = "changed"  # type: ignore[misc]
    assert fast.scores == {} and fast.scores is not slow.scores
    assert fast.final_class is ParagraphClass.GOOD or fast.final_class in ParagraphClass


def test_an_empty_page_gives_no_paragraphs() -> None:
    assert both([], frozenset(), JustextParams(), False) == ((), ())


@pytest.mark.parametrize("preset", list(Preset))
def test_extract_gives_the_same_documents_without_the_compiled_core(
    gold_pages: GoldPages, preset: Preset, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a user without a C compiler gets: the same Documents, field for field."""
    segment_module = importlib.import_module("corpus_crawler.segment")
    assert classify_module._fast is not None and segment_module._fast is not None
    config = ExtractConfig(preset=preset, language="auto")
    pages = [
        (page_id, html) for gold_set in GOLD_SETS for page_id, html, _, _ in gold_pages(gold_set)
    ]
    compiled = [extract_module.extract(html, config=config) for _, html in pages]
    monkeypatch.setattr(classify_module, "_fast", None)
    monkeypatch.setattr(segment_module, "_fast", None)
    python = [extract_module.extract(html, config=config) for _, html in pages]
    differing = [
        page_id for (page_id, _), a, b in zip(pages, compiled, python, strict=True) if a != b
    ]
    assert len(pages) == 245
    assert differing == []
