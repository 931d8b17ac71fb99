"""Kimatu never raises and stays bounded in time and memory on hostile input.

The bounds are generous guards against runaway (quadratic or recursive)
behaviour, not speed measurements: benchmarks measure speed.
"""

from __future__ import annotations

import random
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lxml import etree

from corpus_crawler.decode import decode_html
from corpus_crawler.kimatu import KimatuResult, kimatu
from corpus_crawler.model import ParagraphClass

# A guard against quadratic blow-ups and hangs, not a speed test: generous enough for a
# loaded 2-core CI machine (10 s was exceeded there while other jobs ran).
SECONDS = 60.0
T = TypeVar("T")


def parse(data: bytes, huge: bool = False) -> etree._Element | None:
    """Decode and parse as the extractor's caller does; None when libxml2 finds no tree."""
    text = decode_html(data).text
    if not text.strip():
        return None
    parser = etree.HTMLParser(encoding="utf-8", huge_tree=huge)
    try:
        root = etree.fromstring(text.encode("utf-8"), parser)
    except etree.ParserError:
        return None
    if root is None:
        return None
    for el in root.xpath("//head|//script|//style"):
        el.getparent().remove(el)
    return root


def bounded(work: Callable[[], T], max_megabytes: float) -> T:
    """Run `work`, asserting it takes under SECONDS and allocates under `max_megabytes`."""
    tracemalloc.start()
    start = time.perf_counter()
    try:
        result = work()
        elapsed = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1] / 1e6
    finally:
        tracemalloc.stop()
    assert elapsed < SECONDS, f"took {elapsed:.1f} s"
    assert peak < max_megabytes, f"peak {peak:.0f} MB"
    return result


def run(data: bytes, huge: bool = False) -> KimatuResult | None:
    root = parse(data, huge)
    return None if root is None else kimatu(root)


def check(result: KimatuResult | None) -> None:
    if result is None:
        return
    for paragraph in result.paragraphs:
        assert paragraph.text and paragraph.text == paragraph.text.strip()
        assert paragraph.final_class in (ParagraphClass.GOOD, ParagraphClass.BAD)
        assert paragraph.kind in ("h", "p", "l")
        assert 0 <= paragraph.link_density <= 1


@pytest.fixture(scope="module")
def gold_html(gold_dir: Path) -> list[bytes]:
    return [path.read_bytes() for path in sorted(gold_dir.glob("*/html/*.html"))]


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(page=st.integers(min_value=0), start=st.floats(0, 1), end=st.floats(0, 1))
def test_gold_pages_cut_at_random_points(
    gold_html: list[bytes], page: int, start: float, end: float
) -> None:
    data = gold_html[page % len(gold_html)]
    first, last = sorted((int(start * len(data)), int(end * len(data))))
    check(bounded(lambda: run(data[first:last]), 100))


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=4096))
def test_binary_garbage(data: bytes) -> None:
    check(bounded(lambda: run(data), 50))


def test_one_megabyte_of_random_bytes() -> None:
    data = random.Random(4).randbytes(1 << 20)
    check(bounded(lambda: run(data), 100))


@pytest.mark.parametrize("huge", [False, True])
def test_hundred_thousand_levels_of_nesting(huge: bool) -> None:
    levels = 100_000
    data = b"<html><body>" + b"<div class='x'>text " * levels + b"</div>" * levels
    result = bounded(lambda: run(data, huge), 100)
    assert result is not None
    check(result)
    # libxml2 stops nesting at 255 levels (2047 with huge_tree); the text it kept is seen.
    assert len(result.paragraphs) >= 250


def test_deep_inline_nesting() -> None:
    levels = 100_000
    data = b"<p>" + b"<b>word, " * levels + b"</b>" * levels + b"</p>"
    check(bounded(lambda: run(data, True), 50))


def test_twenty_megabyte_paragraph() -> None:
    sentence = b"Words of a long paragraph, with commas and points. "
    body = sentence * (20_000_000 // len(sentence))
    data = b"<html><body><p>" + body + b"</p><p>A short one.</p></body></html>"
    # libxml2 keeps a text node over 10 MB only with huge_tree.
    result = bounded(lambda: run(data, True), 200)
    assert result is not None
    check(result)
    assert result.paragraphs[0].length > 19_000_000
    assert result.paragraphs[0].final_class is ParagraphClass.GOOD


def test_many_tiny_elements() -> None:
    data = b"<body>" + b"<p class=a>x.</p><p class=b><a href=/>y</a></p>" * 10_000 + b"</body>"
    check(bounded(lambda: run(data), 100))


def test_many_quotes_stay_within_the_budget() -> None:
    post = b"<div class=post>" + b"the same long sentence of a forum post is here. " * 30
    quote = b"<blockquote>" + b"the same long sentence of a forum post is here. " * 30
    data = b"<body>" + (post + b"</div>" + quote + b"</blockquote>") * 500 + b"</body>"
    check(bounded(lambda: run(data), 50))


def test_comments_and_processing_instructions_left_in_the_tree() -> None:
    root = etree.fromstring(
        b"<html><body><p>One <!-- note --> two.<?php echo 1 ?> three.</p></body></html>",
        etree.HTMLParser(),
    )
    texts = [p.text for p in kimatu(root).paragraphs]
    assert texts == ["One two. three."]


def test_empty_tree() -> None:
    assert kimatu(etree.fromstring(b"<html><body></body></html>", etree.HTMLParser())) == (
        KimatuResult(())
    )
