"""The template caches (marks of attribute sets, flags of DOM paths) that extraction
keeps across pages, and `clear_template_caches`, which empties them for the cold rows
of benchmarks/extract_speed.py. A cache only saves time: a page extracted with every
cache empty gives what it gives after the pages before it."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from corpus_crawler import ExtractConfig, Preset, dom, extract
from corpus_crawler import classify as classify_module
from corpus_crawler import segment as segment_module
from corpus_crawler.decode import decode_html
from corpus_crawler.elementmarks import element_marks
from corpus_crawler.extract import clear_template_caches

GoldPages = Callable[[str], Iterator[tuple[str, bytes, str, dict[str, object]]]]

PAGE = (
    b"<html><body><div class='nav' id='top'><a href='/a'>Home</a> <a href='/b'>News</a></div>"
    b"<div class='content'><p class='lead'>The council met on Monday to talk about the new"
    b" bridge.</p><p style='display: none'>Hidden words here.</p><p>It will open in May.</p>"
    b"</div><div class='footer' role='contentinfo'>Copyright 2026</div></body></html>"
)


class CountingMarker:
    """element_marks, counting its calls: the compiled walker calls it on a miss only."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, *values: str | None) -> int:
        self.calls += 1
        return element_marks(*values)  # type: ignore[arg-type]


def _walk(marker: CountingMarker) -> list[int]:
    assert segment_module._fast is not None
    root = dom.parse(decode_html(PAGE).text)
    assert root is not None
    blocks = segment_module._fast.walk(root, False, 100_000, marker)
    assert blocks is not None
    return [block[5] for block in blocks]


def test_the_compiled_walker_asks_the_marker_again_only_after_the_caches_are_emptied() -> None:
    marker = CountingMarker()
    first = _walk(marker)
    asked = marker.calls
    assert asked > 0 and any(first)

    assert _walk(marker) == first
    assert marker.calls == asked  # every attribute set came from the cache

    clear_template_caches()
    assert _walk(marker) == first
    assert marker.calls == 2 * asked


def test_the_python_caches_are_emptied() -> None:
    root = dom.parse(decode_html(PAGE).text)
    assert root is not None
    for element in root.iter("div", "p"):
        segment_module._own_marks(element)
    classify_module._reference_path_flags("html.body.div.p")
    assert segment_module._cached_marks.cache_info().currsize > 0
    assert classify_module._cached_reference_flags.cache_info().currsize > 0

    clear_template_caches()

    assert segment_module._cached_marks.cache_info().currsize == 0
    assert segment_module._cached_furniture_marks.cache_info().currsize == 0
    assert classify_module._cached_reference_flags.cache_info().currsize == 0
    assert classify_module._cached_seed_flags.cache_info().currsize == 0


@pytest.mark.parametrize("preset", [Preset.CORPUS, Preset.ARTICLE, Preset.REFERENCE])
def test_a_page_extracted_cold_gives_what_it_gives_warm(
    gold_pages: GoldPages, preset: Preset
) -> None:
    config = ExtractConfig(preset=preset, language="en")
    pages = [
        (f"{name}/{page_id}", html)
        for name in ("cleaneval-dev", "cleanportaleval", "readability")
        for page_id, html, _gold, _record in gold_pages(name)
    ]

    def paragraphs(html: bytes) -> list[tuple[str, str, str]]:
        document = extract(html, None, config)
        return [(p.text, p.final_class.value, p.dom_path) for p in document.paragraphs]

    for _name, html in pages:  # every template seen once
        paragraphs(html)
    warm = [paragraphs(html) for _name, html in pages]
    cold = []
    for _name, html in pages:
        clear_template_caches()
        cold.append(paragraphs(html))

    differing = [name for (name, _), w, c in zip(pages, warm, cold, strict=True) if w != c]
    assert not differing
    assert sum(map(len, warm)) > 1000
