"""The crawl workers take a page's links from extract()'s own parse (one lxml parse a
page instead of two): the links and the nofollow flag are those of the separate
`extract_links` parse on every gold page and on odd pages, and the separate parse still
runs where the shared tree could miss links (a body past the extraction's byte cap,
the reference preset's fragment parse)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

import pipelines.worker as worker
from corpus_crawler.config import ExtractConfig, Preset
from corpus_crawler.extract import extract
from corpus_crawler.model import DropReason
from pipelines.worker import PageTask, WorkerConfig, extract_links, process_page


@pytest.fixture
def separate_parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """URLs for which the worker ran its own link parse (the real function, counted)."""
    calls: list[str] = []
    real = worker.extract_links

    def counted(body: bytes, url: str, *args: Any) -> tuple[tuple[str, ...], bool]:
        calls.append(url)
        return real(body, url, *args)

    monkeypatch.setattr(worker, "extract_links", counted)
    return calls


def test_gold_pages_links_from_the_shared_parse(
    gold_pages: Callable[[str], Iterator[tuple[str, bytes, str, dict[str, Any]]]],
    separate_parses: list[str],
) -> None:
    config = WorkerConfig(ExtractConfig(language="en"), page_timeout=0)
    pages = 0
    with_links = 0
    for set_name in ("cleaneval-dev", "cleanportaleval", "readability"):
        for page_id, html, _, _ in gold_pages(set_name):
            url = f"https://{set_name}.example/{page_id}/index.html"
            result = process_page(PageTask(url, html), config)
            assert result.document is not None
            expected = extract_links(html, url, None, result.document.encoding)
            assert (result.links, result.nofollow) == expected, page_id
            pages += 1
            with_links += bool(result.links)
    assert pages >= 200 and with_links >= pages // 2
    # every page's links came from extract()'s parse, none from a second one
    assert separate_parses == []


ODD_PAGES = {
    "xml declaration": b'<?xml version="1.0" encoding="utf-8"?><html><body>'
    b'<a href="/x">x</a><area href="map.html"></body></html>',
    "base and nofollow rel": b'<html><head><base href="http://other.example/dir/"></head>'
    b'<body><a href="a.html">a</a><a rel="nofollow" href="b.html">b</a>'
    b'<a href="javascript:void(0)">j</a><a href="mailto:x@y">m</a></body></html>',
    "robots nofollow": b'<html><head><meta name="robots" content="noindex, nofollow">'
    b'</head><body><a href="/x">x</a></body></html>',
    "meta refresh": b'<html><head><meta http-equiv="refresh" content="0; url=/next.html">'
    b"</head><body></body></html>",
    "windows-1250 hrefs": '<html><head><meta charset="windows-1250"></head><body>'
    '<a href="/čeština?q=žluť">č</a><p>Příliš žluťoučký kůň úpěl ďábelské ódy.</p>'
    "</body></html>".encode("cp1250"),
    "no html at all": b"just text, no markup <a href='/t'>",
    "comment and script": b'<html><body><!-- <a href="/hidden">h</a> -->'
    b"<script>document.write('<a href=\"/s\">s</a>')</script>"
    b'<a href="/shown#frag">s</a></body></html>',
    "empty": b"",
}


@pytest.mark.parametrize("name", sorted(ODD_PAGES))
def test_odd_pages_same_links_either_way(name: str) -> None:
    body = ODD_PAGES[name]
    url = "http://a.example/dir/page.html"
    result = process_page(PageTask(url, body), WorkerConfig(ExtractConfig(), page_timeout=0))
    encoding = result.document.encoding if result.document is not None else None
    assert (result.links, result.nofollow) == extract_links(body, url, None, encoding)


def test_a_body_past_the_byte_cap_is_parsed_whole_for_links(separate_parses: list[str]) -> None:
    filler = b"<p>" + b"Running text of the page. " * 400 + b"</p>"
    body = b"<html><body>" + filler + b'<a href="/late.html">late</a></body></html>'
    config = WorkerConfig(ExtractConfig(max_bytes=len(body) // 2), page_timeout=0)
    result = process_page(PageTask("http://a.example/", body), config)
    assert result.links == ("http://a.example/late.html",)
    assert separate_parses == ["http://a.example/"]


def test_the_reference_preset_keeps_its_own_link_parse(separate_parses: list[str]) -> None:
    # jusText's parse of a fragment keeps one element; the links need the whole page
    body = b'<head><base href="http://b.example/"></head><a href="x.html">x</a>'
    config = WorkerConfig(ExtractConfig(preset=Preset.REFERENCE), page_timeout=0)
    result = process_page(PageTask("http://a.example/", body), config)
    assert result.links == ("http://b.example/x.html",)
    assert separate_parses == ["http://a.example/"]


def test_a_failing_link_walk_falls_back_and_keeps_the_page(
    monkeypatch: pytest.MonkeyPatch, separate_parses: list[str]
) -> None:
    real = worker.links_in_tree
    calls: list[str] = []

    def fails_once(root: Any, url: str, encoding: str) -> tuple[tuple[str, ...], bool]:
        calls.append(url)
        if len(calls) == 1:
            raise RuntimeError("walk failed")
        return real(root, url, encoding)

    monkeypatch.setattr(worker, "links_in_tree", fails_once)
    body = b'<html><body><p>Some text here.</p><a href="/a">a</a></body></html>'
    result = process_page(PageTask("http://a.example/", body), WorkerConfig(ExtractConfig()))
    assert result.document is not None
    assert result.document.drop_reason is not DropReason.EXTRACTOR_ERROR
    assert result.paragraph_count == 2  # extracted as without the hook
    assert separate_parses == ["http://a.example/"]
    assert result.links == ("http://a.example/a",)


def test_extract_calls_on_tree_once_with_the_unstripped_page() -> None:
    seen: list[tuple[list[str], str]] = []
    body = b"<html><head><title>T</title><script>x</script></head><body><p>Hi</p></body></html>"

    def on_tree(root: Any, encoding: str) -> None:
        seen.append(([element.tag for element in root.iter()], encoding))

    document = extract(body, "http://a.example/", ExtractConfig(), on_tree=on_tree)
    assert len(seen) == 1
    tags, encoding = seen[0]
    assert "script" in tags and "title" in tags  # before preprocessing strips them
    assert encoding == document.encoding
