"""Kimatu's text elements: the compiled walk (`_kimatu_fast.pyx`) and the Python
one (`kimatu._segment._text_elements_python`) must give the same elements, every
field, on real and generated pages and under every aspect option."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree

from corpus_crawler import dom
from corpus_crawler.decode import decode_html
from corpus_crawler.kimatu import _segment as kimatu_segment
from corpus_crawler.kimatu._options import KimatuOptions, load_kimatu_options
from corpus_crawler.kimatu._segment import MAX_PATH_STEPS, text_elements

GoldPages = Callable[[str], Iterator[tuple[str, bytes, str, dict[str, object]]]]
GOLD_SETS = ("cleaneval-dev", "cleanportaleval", "readability")
SHIPPED = load_kimatu_options()
VARIANTS = {
    "shipped": SHIPPED,
    "no-inline": dataclasses.replace(SHIPPED, aspect_inline=False),
    "no-ancestors": dataclasses.replace(SHIPPED, aspect_ancestor_levels=0),
    "five-ancestors-ids": dataclasses.replace(
        SHIPPED, aspect_ancestor_levels=5, aspect_attributes=("id", "class", "href")
    ),
}


def _both(root: etree._Element, options: KimatuOptions) -> None:
    python = text_elements(root, options, compiled=False)
    compiled = text_elements(root, options, compiled=True)
    assert compiled == python
    assert [type(e) for e in compiled] == [type(e) for e in python]


def _tree(html: str) -> etree._Element:
    root = dom.parse(html)
    assert root is not None
    return dom.preprocess_seed(root)


def test_the_compiled_walk_is_built() -> None:
    """Without it every comparison below would compare the Python walk with itself."""
    assert kimatu_segment._fast is not None, "run `pip install -e .` with a C compiler"


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize("gold_set", GOLD_SETS)
def test_both_walks_agree_on_the_gold_pages(
    gold_pages: GoldPages, gold_set: str, variant: str
) -> None:
    pages = 0
    for _, html, _, _ in gold_pages(gold_set):
        root = dom.parse_page(decode_html(html).text, scripting=True)
        if root is None:
            continue
        _both(dom.preprocess_seed(root), VARIANTS[variant])
        pages += 1
    assert pages > 50


@pytest.mark.parametrize(
    "html",
    [
        # the root itself: a block, an inline element, a skipped one
        "<p>One <b>two</b> three.</p>",
        "<b>Loose <i>inline</i> text.</b>",
        "<script>var x = 1;</script>",
        # comments and processing instructions split text runs; their tails are text
        "<html><body><p>Before<!-- a note -->after <?php echo 1 ?>the end.</p></body></html>",
        # skipped subtrees keep their tails, and are no position of their tag
        "<div><p>a</p><iframe>frame text</iframe> tail <p>b</p><svg><p>c</p></svg><p>d</p></div>",
        # double <br> ends a text element, one does not; a <br> opening a block
        "<div>line one<br>line two<br><br>line three<br> <br>four</div>",
        "<p><br><br>after two breaks</p>",
        # links with and without href, link text inside inline formatting
        '<p>See <a href="/x">this <b>link</b></a> and <a name="y">this anchor</a>.</p>',
        # headings and selects flag their elements; text after them is the parent's
        "<div><h2>A <i>head</i></h2>between<select><option>one</option></select>after</div>",
        # inline aspect narrowing: common prefix of the elements around every word
        '<p><b class="x"><i>all</i> bold</b></p><p><b>part</b> plain</p><p> <b> </b>x</p>',
        # aspect attributes: normalised and lower-cased, first of duplicates
        '<div class=" Side  BAR " style="COLOR:Red"><p align=center class=a class=b>t</p></div>',
        # positions among same-tag siblings, text in the root's tail is not read
        "<html><body><div>1</div><p>2</p><div>3<div>4</div>5</div></body></html>tail",
        # CDATA and entity text
        "<p>AT&amp;T &lt;tag&gt; &nbsp; &#x263A; caf&eacute;</p>",
        # whitespace-only text elements are no elements
        "<div>   <p>\n\t</p>  <span> </span></div>",
    ],
)
def test_both_walks_agree_on_edge_cases(html: str) -> None:
    root = dom.parse(html)
    assert root is not None
    for options in VARIANTS.values():
        _both(root, options)
        _both(dom.preprocess_seed(root), options)


def test_both_walks_agree_on_a_page_deeper_than_the_path_window() -> None:
    """Past MAX_PATH_STEPS open elements a path keeps only its last steps (built
    with lxml: libxml2's parser caps nesting below that)."""
    root = etree.Element("html")
    node = etree.SubElement(root, "body")
    for _ in range(MAX_PATH_STEPS + 40):
        node = etree.SubElement(node, "div", {"class": "x"})
        node.text = " "
    node.text = "deep text"
    etree.SubElement(root[0], "p").text = "after"
    elements = text_elements(root, SHIPPED, compiled=True)
    assert any(e.xpath.startswith("//") for e in elements)
    _both(root, SHIPPED)


def test_both_walks_agree_on_a_tree_built_with_upper_case_tags() -> None:
    """A tree not from the HTML parser: tag names are read lower-cased by both."""
    root = etree.Element("HTML")
    body = etree.SubElement(root, "Body")
    for tag in ("P", "Div", "H2", "p"):
        etree.SubElement(body, tag, {"class": "Mixed Case"}).text = f"text in {tag}"
    _both(root, SHIPPED)
    assert [e.tag for e in text_elements(root, SHIPPED, compiled=True)] == ["p", "div", "h2", "p"]


def test_both_walks_agree_on_a_subtree() -> None:
    """A walk from an element that is not the document root (its tail unread)."""
    root = _tree("<html><body><div id=a><p>in</p>tail text</div><p>out</p></body></html>")
    div = root.find(".//div")
    assert div is not None
    _both(div, SHIPPED)
    assert [e.text for e in text_elements(div, SHIPPED, compiled=True)] == ["in", "tail text"]


_TAGS = (
    "div", "p", "span", "b", "i", "a", "td", "tr", "table", "li", "ul", "h2", "h3", "br",
    "select", "option", "textarea", "pre", "font", "center", "script", "noscript", "svg",
    "iframe", "blockquote", "section", "em",
)  # fmt: skip
_ATTRIBUTES = ("", ' class="post"', ' href="/x"', ' style="color: red"', ' align="left"')
_WORDS = ("", " ", "word", "Two words.", "  spaced \n out\t", "end, (start", "U.S.A. 10:30")


@st.composite
def _html_trees(draw: st.DrawFn, depth: int = 0) -> str:
    parts = []
    for _ in range(draw(st.integers(0, 4 if depth < 5 else 0))):
        kind = draw(st.integers(0, 9))
        if kind < 4:
            parts.append(draw(st.sampled_from(_WORDS)))
        elif kind == 4:
            parts.append(draw(st.sampled_from(("<!-- c -->", "<br>", "<br><br>"))))
        else:
            tag = draw(st.sampled_from(_TAGS))
            attributes = draw(st.sampled_from(_ATTRIBUTES))
            inner = draw(_html_trees(depth + 1))
            closed = draw(st.integers(0, 9)) > 0  # sometimes left for the parser to close
            parts.append(f"<{tag}{attributes}>{inner}" + (f"</{tag}>" if closed else ""))
    return "".join(parts)


@settings(max_examples=1500, deadline=None)
@given(_html_trees(), st.sampled_from(sorted(VARIANTS)))
def test_both_walks_agree_on_generated_pages(inner: str, variant: str) -> None:
    root = dom.parse(f"<html><body>{inner}</body></html>")
    if root is None:
        return
    _both(dom.preprocess_seed(root), VARIANTS[variant])
