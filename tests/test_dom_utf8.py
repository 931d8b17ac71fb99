"""A UTF-8 page's own bytes go to the parser (`decode.Decoded.utf8`,
`dom.parse_page(utf8=)`): libxml2 reads them faster than the decoded str, and the
tree must be the one the str gives, repairs included."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import GoldPageTuple
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree

from corpus_crawler import ExtractConfig, Preset, dom, extract
from corpus_crawler.decode import decode_html

TEXT = (
    "The committee said that it would meet again in the spring, and that the members were"
    " not yet sure whether the plan could go ahead as it was first written. Zürich, naïve. "
)
BODY = f"<body><h1>The plan</h1><p>{TEXT * 2}</p><p>{TEXT * 2}</p></body></html>"


def _both(text: str, *, scripting: bool = True) -> tuple[bytes | None, bytes | None]:
    from_str = dom.parse_page(text, scripting=scripting)
    from_bytes = dom.parse_page(text, scripting=scripting, utf8=text.encode("utf-8"))
    return (
        None if from_str is None else etree.tostring(from_str),
        None if from_bytes is None else etree.tostring(from_bytes),
    )


@pytest.mark.parametrize(
    "page",
    [
        f"<html><head><title>t</title></head>{BODY}",
        # a meta charset that the bytes contradict: the decoded text wins, not the label
        f'<html><head><meta charset="iso-8859-1"><title>Zürich</title></head>{BODY}',
        f'<html><head><meta http-equiv="Content-Type" content="text/html; charset=koi8-r">'
        f"</head>{BODY}",
        # the repairs: an unclosed title, an end tag ignored behind a <div> (read from
        # the error log of the parser that parsed the page), a <noscript> left open
        f"<html><head><title>The plan\n{BODY}",
        "<html><body><div id=side><ul>\n<li><div class=widget>Follow us</li>\n"
        f"<li><div class=widget>Subscribe</li>\n</ul></div>\n<div id=post><p>{TEXT}</p></div>"
        "</body></html>",
        f"<html><body><noscript><div id=wrap></noscript><p>{TEXT}</p></body></html>",
        f"<html><body><p>{TEXT}</p></body></html><p>after the end {TEXT}</p>",
        # an XML declaration (parsed from the str, as lxml wants it removed)
        f'<?xml version="1.0" encoding="iso-8859-1"?><html>{BODY}',
        "plain text, no markup at all: Zürich",
        "   ",
    ],
)
def test_the_bytes_give_the_tree_the_str_gives(page: str) -> None:
    from_str, from_bytes = _both(page)
    assert from_bytes == from_str


def test_the_repairs_are_exercised() -> None:
    # the cases above would prove little if no repair changed their trees
    page = f"<html><head><title>The plan\n{BODY}"
    repaired = dom.parse_page(page, scripting=True, utf8=page.encode("utf-8"))
    assert repaired is not None and repaired.find("body/h1") is not None
    side = (
        "<html><body><div id=side><ul>\n<li><div class=widget>Follow us</li>\n"
        f"</ul></div>\n<div id=post><p>{TEXT}</p></div></body></html>"
    )
    root = dom.parse_page(side, scripting=False, utf8=side.encode("utf-8"))
    assert root is not None
    post = root.find(".//div[@id='post']")
    assert [el.tag for el in post.iterancestors()] == ["body", "html"]


def test_every_bundled_page_parses_the_same_from_its_bytes(
    gold_dir: Path, gold_pages: Callable[[str], Iterator[GoldPageTuple]]
) -> None:
    read_from_bytes = 0
    for name in sorted(p.name for p in gold_dir.iterdir()):
        for _, html, _, _ in gold_pages(name):
            decoded = decode_html(html)
            if decoded.utf8 is None:
                continue
            read_from_bytes += 1
            for scripting in (False, True):
                from_str = dom.parse_page(decoded.text, scripting=scripting)
                from_bytes = dom.parse_page(decoded.text, scripting=scripting, utf8=decoded.utf8)
                assert from_str is not None and from_bytes is not None
                assert etree.tostring(from_bytes) == etree.tostring(from_str)
    assert read_from_bytes >= 200  # of 245: the rest are legacy code pages


@pytest.mark.parametrize(
    ("data", "exact"),
    [
        (f"<p>{TEXT}</p>".encode(), True),
        (b"<p>plain ASCII</p>", True),
        (b"<p>a NUL\x00 and a \x01 control</p>", False),  # cleaned
        (f"<p>{TEXT * 20} caf\xe9</p>".encode()[:-5] + b"\xe9</p>", False),  # a stray byte
        (f"<p>{TEXT}</p>".encode()[:-6] + "ü".encode()[:1], False),  # cut in a character
        (f"<p>{TEXT}</p>".encode("cp1252"), False),
        (b"\xef\xbb\xbf" + f"<p>{TEXT}</p>".encode(), False),  # the BOM is not text
        (f"<p>{TEXT}</p>".encode("utf-16"), False),
    ],
)
def test_the_bytes_are_kept_only_when_they_are_the_text(data: bytes, exact: bool) -> None:
    decoded = decode_html(data)
    assert (decoded.utf8 is not None) is exact
    if exact:
        assert decoded.utf8 == decoded.text.encode("utf-8")


@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=300), st.sampled_from([None, "utf-8", "latin-1", "shift_jis"]))
def test_kept_bytes_are_always_the_text_in_utf8(data: bytes, http: str | None) -> None:
    decoded = decode_html(data, http)
    if decoded.utf8 is not None:
        assert decoded.utf8 == decoded.text.encode("utf-8")


@settings(max_examples=300, deadline=None)
@given(st.text(st.characters(blacklist_categories=("Cs",)), max_size=200))
def test_any_text_parses_the_same_from_its_bytes(body: str) -> None:
    page = f"<html><body><div>{body}</div><p>{body}</p></body></html>"
    from_str, from_bytes = _both(page)
    assert from_bytes == from_str


@pytest.mark.parametrize("html", [f"<html>{BODY}".encode(), f"<html>{BODY}"])
def test_extract_hands_the_parser_the_bytes(
    html: bytes | str, monkeypatch: pytest.MonkeyPatch
) -> None:
    read: list[bytes] = []
    fromstring = dom._fromstring

    def spy(source: str | bytes, parser: etree.HTMLParser) -> etree._Element | None:
        if isinstance(source, bytes):
            read.append(source)
        return fromstring(source, parser)

    monkeypatch.setattr(dom, "_fromstring", spy)
    doc = extract(html, None, ExtractConfig(preset=Preset.CORPUS, language="en"))
    assert read and doc.drop_reason is None
    assert "Zürich" in doc.text
