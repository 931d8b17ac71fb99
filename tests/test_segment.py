"""Segmentation (seed 000, "Introduction") and the seed/reference preprocessing.

Every behaviour is checked with both walkers: the compiled one
(`_segment_fast.pyx`) and the pure-Python `_walk_python`, which must agree.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree

from corpus_crawler import dom
from corpus_crawler import segment as segment_module
from corpus_crawler.config import ExtractConfig
from corpus_crawler.decode import decode_html, decode_like_justext
from corpus_crawler.extract import extract
from corpus_crawler.segment import SEED_BLOCK_TAGS, Segment, segment

GoldPages = Callable[[str], Iterator[tuple[str, bytes, str, dict[str, object]]]]

#: seed 000's list of block-level tags, as written there
SEED_LIST = (
    "BLOCKQUOTE, CAPTION, CENTER, COL, COLGROUP, DD, DIV, DL, DT, FIELDSET, FORM, H1, H2, H3,"
    " H4, H5, H6, LEGEND, LI, OPTGROUP, OPTION, P, PRE, TABLE, TD, TEXTAREA, TFOOT, TH, THEAD,"
    " TR, UL"
)
GOLD_SETS = ("cleaneval-dev", "cleanportaleval", "readability")


@pytest.fixture(params=[True, False], ids=["compiled", "python"])
def compiled(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)


def blocks(html: str, *, reference: bool = False, compiled: bool = True) -> list[Segment]:
    """Parse and preprocess as extract() does for the preset, then segment."""
    if reference:
        root = dom.parse_like_reference(html, html.encode("utf-8"))
        assert root is not None
        root = dom.preprocess_reference(root)
    else:
        root = dom.parse(html)
        assert root is not None
        root = dom.preprocess_seed(root)
    return segment(root, reference=reference, compiled=compiled)


def texts(html: str, *, reference: bool = False, compiled: bool = True) -> list[str]:
    return [b.text for b in blocks(html, reference=reference, compiled=compiled)]


def body(inner: str) -> str:
    return f"<html><body>{inner}</body></html>"


def test_the_compiled_walker_is_built() -> None:
    """Without it both parametrisations below would test the Python walker twice."""
    assert segment_module._fast is not None, "run `pip install -e .` with a C compiler"


def test_block_tags_are_the_seed_list_plus_body() -> None:
    seed = {tag.strip().lower() for tag in SEED_LIST.split(",")}
    assert seed | {"body"} == SEED_BLOCK_TAGS


# COL is a void element: it has no content to split off.
SPLITTING = sorted(SEED_BLOCK_TAGS - {"body", "col"})


@pytest.mark.parametrize("tag", SPLITTING)
def test_block_tags_split(tag: str, compiled: bool) -> None:
    html = body(f"<div>before<{tag}>inside</{tag}>after</div>")
    assert texts(html, compiled=compiled) == ["before", "inside", "after"]


INLINE_TAGS = (  # noqa: SIM905
    "span b i em strong a font small big sup sub code abbr label u s tt cite q kbd var mark"
    " time nobr"
).split()


@pytest.mark.parametrize("tag", INLINE_TAGS)
def test_inline_tags_do_not_split(tag: str, compiled: bool) -> None:
    html = body(f"<p>before<{tag}>inside</{tag}>after</p>")
    assert texts(html, compiled=compiled) == ["beforeinsideafter"]


def test_two_brs_split(compiled: bool) -> None:
    assert texts(body("<p>one<br><br>two</p>"), compiled=compiled) == ["one", "two"]


def test_one_br_does_not_split(compiled: bool) -> None:
    assert texts(body("<p>one<br>two</p>"), compiled=compiled) == ["one two"]


def test_brs_with_blank_between_split(compiled: bool) -> None:
    assert texts(body("<p>one<br> \n <br>two</p>"), compiled=compiled) == ["one", "two"]


def test_brs_with_an_element_between_do_not_split(compiled: bool) -> None:
    assert texts(body("<p>one<br><b></b><br>two</p>"), compiled=compiled) == ["one two"]


def test_brs_with_text_between_do_not_split(compiled: bool) -> None:
    assert texts(body("<p>one<br>two<br>three</p>"), compiled=compiled) == ["one two three"]


def test_many_brs_make_one_split_and_no_empty_block(compiled: bool) -> None:
    assert texts(body("<p>one<br><br><br><br>two</p>"), compiled=compiled) == ["one", "two"]


def test_br_split_block_path_ends_at_the_br(compiled: bool) -> None:
    second = blocks(body("<p>one<br><br>two</p>"), compiled=compiled)[1]
    assert second.dom_path == "html.body.p.br"
    assert second.xpath == "/html[1]/body[1]/p[1]/br[2]"


@pytest.mark.parametrize(
    ("inner", "expected"),
    [
        ("a \t  b", "a b"),
        ("a \n\t b", "a\nb"),
        ("a\r\nb", "a\nb"),
        ("a \n\n\n b", "a\nb"),
        ("   leading and trailing   ", "leading and trailing"),
        ("\n first line\n", "first line"),
        ("a&nbsp;&nbsp;b", "a b"),
        ("one  two\nthree   four", "one two\nthree four"),
    ],
)
def test_whitespace_normalisation(inner: str, expected: str, compiled: bool) -> None:
    assert texts(body(f"<p>{inner}</p>"), compiled=compiled) == [expected]


def test_whitespace_between_inline_elements_is_kept_in_seed(compiled: bool) -> None:
    """Only the reference preset glues `<b>a</b> <i>b</i>` into "ab" (jusText 3.0.2 skips
    whitespace-only text nodes); the seed's block text is the text a reader sees."""
    html = body("<p><b>bold</b> <i>italic</i> <a href='/'>link</a></p>")
    assert texts(html, reference=True, compiled=compiled) == ["bolditaliclink"]
    assert texts(html, compiled=compiled) == ["bold italic link"]


def test_blank_node_with_a_newline_between_inline_elements_is_a_newline(compiled: bool) -> None:
    """The normalisation rule holds for blank text nodes too: a run holding a line break
    becomes "\n", as it does inside a text node (`<p>a \n b</p>` gives "a\nb")."""
    html = body("<p><b>bold</b>\n  <i>italic</i></p>")
    assert texts(html, compiled=compiled) == ["bold\nitalic"]


def test_link_characters(compiled: bool) -> None:
    (block,) = blocks(body('<p>aaa <a href="/">bb</a> ccc</p>'), compiled=compiled)
    assert block.text == "aaa bb ccc"
    assert block.link_chars == 2


def test_link_characters_include_nested_inline_text(compiled: bool) -> None:
    (block,) = blocks(body('<p>x <a href="/"><b>bold</b>er link</a> y</p>'), compiled=compiled)
    assert block.link_chars == len("bolder link")


def test_link_characters_without_links(compiled: bool) -> None:
    (block,) = blocks(body("<p>no links here</p>"), compiled=compiled)
    assert block.link_chars == 0


def test_link_density_through_extract() -> None:
    config = ExtractConfig(language="en")
    doc = extract(body('<p>aaaa aaaa <a href="/">bbbb</a> cccc dddd</p>').encode(), config=config)
    (paragraph,) = doc.paragraphs
    assert paragraph.length == 24
    assert paragraph.link_chars == 4
    assert paragraph.link_density == 4 / 24


def test_link_density_is_a_proportion() -> None:
    """Seed: "the proportion of characters inside A tags" cannot exceed 1; blanks around the
    link text that normalisation strips from the block are not characters of it."""
    config = ExtractConfig(language="en")
    doc = extract(body('<p><a href="/"> Home </a></p>').encode(), config=config)
    (paragraph,) = doc.paragraphs
    assert paragraph.text == "Home"
    assert paragraph.link_density <= 1.0


def test_paths(compiled: bool) -> None:
    html = body("<div><p>a</p><p>b</p></div><div><p>c</p>tail</div><h2>d</h2>")
    result = [(b.text, b.dom_path, b.xpath) for b in blocks(html, compiled=compiled)]
    assert result == [
        ("a", "html.body.div.p", "/html[1]/body[1]/div[1]/p[1]"),
        ("b", "html.body.div.p", "/html[1]/body[1]/div[1]/p[2]"),
        ("c", "html.body.div.p", "/html[1]/body[1]/div[2]/p[1]"),
        ("tail", "html.body.div", "/html[1]/body[1]/div[2]"),
        ("d", "html.body.h2", "/html[1]/body[1]/h2[1]"),
    ]


def test_xpath_counts_only_same_tag_siblings(compiled: bool) -> None:
    html = body("<div>x</div><p>a</p><div>y</div><p>b</p>")
    result = [b.xpath for b in blocks(html, compiled=compiled)]
    assert result == [
        "/html[1]/body[1]/div[1]",
        "/html[1]/body[1]/p[1]",
        "/html[1]/body[1]/div[2]",
        "/html[1]/body[1]/p[2]",
    ]


def test_heading_and_headline_flags() -> None:
    config = ExtractConfig(language="en")
    html = body("<h1>top</h1><h2><span>sub</span></h2><h6>six</h6><p>para</p>")
    doc = extract(html.encode(), config=config)
    flags = [(p.text, p.heading, p.headline, p.kind) for p in doc.paragraphs]
    assert flags == [
        ("top", True, True, "h"),
        ("sub", True, False, "h"),
        ("six", True, False, "h"),
        ("para", False, False, "p"),
    ]


def test_select_flag() -> None:
    config = ExtractConfig(language="en")
    html = body("<p>before</p><select><option>one</option></select>")
    doc = extract(html.encode(), config=config)
    assert [(p.text, p.in_select) for p in doc.paragraphs] == [("before", False), ("one", True)]


def test_image_blocks_in_seed_only(compiled: bool) -> None:
    html = body('<p>text</p><div><img src="a.png"><img src="b.png"></div><p>more</p>')
    seed = blocks(html, compiled=compiled)
    assert [(b.text, b.images) for b in seed] == [("text", 0), ("", 2), ("more", 0)]
    reference = blocks(html, reference=True, compiled=compiled)
    assert [(b.text, b.images) for b in reference] == [("text", 0), ("more", 0)]


def test_image_in_a_text_block_is_counted_with_the_text(compiled: bool) -> None:
    (block,) = blocks(body('<p>text <img src="a.png"> more</p>'), compiled=compiled)
    assert block.text == "text more"
    assert block.images == 1


REMOVED = body(
    "<!-- a_comment --><p>kept<script>var script_text = 1;</script></p>"
    "<style>.style_text {}</style><p>also kept<!-- inline_comment --></p>"
    "<noscript>fallback stays</noscript>"
)
REMOVED_PAGE = (
    '<?xml version="1.0"?><!DOCTYPE html><html><head><title>title_text</title>'
    '<meta name="x" content="meta_text"><style>head_style</style>'
    "<script>head_script</script></head>" + REMOVED.removeprefix("<html>")
)


@pytest.mark.parametrize("reference", [False, True], ids=["seed", "reference"])
def test_removed_elements_never_appear(reference: bool, compiled: bool) -> None:
    result = texts(REMOVED_PAGE, reference=reference, compiled=compiled)
    joined = "\n".join(result)
    hidden = (
        "a_comment",
        "inline_comment",
        "script_text",
        "style_text",
        "title_text",
        "meta_text",
        "head_style",
        "head_script",
        "xml",
    )
    for word in hidden:
        assert word not in joined, (word, result)
    assert result == ["kept", "also kept", "fallback stays"]


def test_processing_instructions_are_removed_in_seed(compiled: bool) -> None:
    assert texts(body("<p>a<?php echo 'pi_text'; ?>b</p>"), compiled=compiled) == ["ab"]


def test_title_is_document_metadata_not_text() -> None:
    config = ExtractConfig(language="en")
    html = "<html><head><title>  The\n  title </title></head><body><p>text</p></body></html>"
    doc = extract(html.encode(), config=config)
    assert doc.title == "The title"
    assert [p.text for p in doc.paragraphs] == ["text"]


FORM = body(
    "<p>x<iframe src='/f'>iframe_text</iframe>y</p>"
    "<form>form_a<input name='q' value='input_value'>form_b</form>after_form"
    "<textarea>textarea_text</textarea>"
    "<button>button_text</button>"
    "<select><option>option_text</option></select>"
)


def test_seed_preprocessing_keeps_form_content(compiled: bool) -> None:
    result = texts(FORM, compiled=compiled)
    assert result == [
        "xiframe_texty",
        "form_aform_b",
        "after_form",
        "textarea_text",
        "button_text",
        "option_text",
    ]


def test_reference_preprocessing_is_jusText_cleaner(compiled: bool) -> None:
    """jusText 3.0.2's Cleaner kills textarea, button, select and input and unwraps form and
    iframe, so form text runs into the text after it."""
    result = texts(FORM, reference=True, compiled=compiled)
    assert result == ["xiframe_texty", "form_aform_bafter_form"]


def test_value_attributes_are_never_text(compiled: bool) -> None:
    joined = "".join(texts(FORM, compiled=compiled) + texts(FORM, reference=True))
    assert "input_value" not in joined


def test_body_splits_text_outside_it(compiled: bool) -> None:
    assert texts("<html>outside<body><p>inside</p></body></html>", compiled=compiled) == [
        "outside",
        "inside",
    ]


def test_empty_and_blank_blocks_are_dropped(compiled: bool) -> None:
    html = body("<p></p><div>  \n </div><p><b> </b></p><p>text</p><ul><li></li></ul>")
    assert texts(html, compiled=compiled) == ["text"]


def test_deep_nesting_does_not_recurse(compiled: bool) -> None:
    html = body("<div><span>" * 120 + "deep" + "</span></div>" * 120)
    result = blocks(html, compiled=compiled)
    assert [b.text for b in result] == ["deep"]
    assert result[0].dom_path.count("div") == 120


# --------------------------------------------------------------------------- both walkers, gold


def _seed_root(data: bytes) -> etree._Element | None:
    root = dom.parse(decode_html(data).text)
    return None if root is None else dom.preprocess_seed(root)


def _reference_root(data: bytes) -> etree._Element | None:
    root = dom.parse_like_reference(decode_like_justext(data).text, data)
    return None if root is None else dom.preprocess_reference(root)


@pytest.mark.parametrize("reference", [False, True], ids=["seed", "reference"])
@pytest.mark.parametrize("gold_set", GOLD_SETS)
def test_compiled_and_python_walkers_agree_on_gold_pages(
    gold_pages: GoldPages, gold_set: str, reference: bool
) -> None:
    assert segment_module._fast is not None, "the compiled walker is not built"
    differing = []
    pages = 0
    for page_id, html, _gold, _record in gold_pages(gold_set):
        root = _reference_root(html) if reference else _seed_root(html)
        if root is None:
            continue
        pages += 1
        fast = segment(root, reference=reference, compiled=True)
        slow = segment(root, reference=reference, compiled=False)
        if fast != slow:
            first = next(
                (i for i, (a, b) in enumerate(zip(fast, slow, strict=False)) if a != b),
                min(len(fast), len(slow)),
            )
            differing.append((page_id, first))
    assert pages >= 50
    assert differing == []


_WHITESPACE_ALPHABET = (
    " \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u2028\u2029\u3000ab\U0001f600é"
)


@settings(max_examples=2000, deadline=None)
@given(st.text(alphabet=_WHITESPACE_ALPHABET))
def test_compiled_whitespace_folding_equals_python(text: str) -> None:
    """The compiled block_text folds whitespace exactly like the regex definition."""
    from corpus_crawler.segment import _fast, block_text, normalize_whitespace

    assert _fast is not None
    assert _fast.block_text(text) == block_text(text) == normalize_whitespace(text).strip()


# ------------------------------------------------------------------------ both walkers, generated


def _distinct_sibling_names_page(names: int, rounds: int) -> str:
    """`rounds` passes over `names` differently named siblings, each holding a block."""
    inner = "".join(
        f"<x{k}><p>block {r} {k}</p>tail {r} {k}<br><br>after</x{k}>"
        for r in range(rounds)
        for k in range(names)
    )
    return body(f"<div>{inner}</div>")


@pytest.mark.parametrize("reference", [False, True], ids=["seed", "reference"])
def test_many_distinct_sibling_names_give_the_same_xpaths(reference: bool) -> None:
    """Over 32 distinct child names the compiled walker counts siblings in a dict."""
    html = _distinct_sibling_names_page(names=60, rounds=3)
    fast = blocks(html, reference=reference, compiled=True)
    slow = blocks(html, reference=reference, compiled=False)
    assert fast == slow
    by_text = {b.text: b.xpath for b in fast}
    assert by_text["block 2 59"] == "/html[1]/body[1]/div[1]/x59[3]/p[1]"
    assert by_text["block 0 0"] == "/html[1]/body[1]/div[1]/x0[1]/p[1]"


_TAGS = (
    "div",
    "p",
    "span",
    "a",
    "b",
    "br",
    "img",
    "td",
    "li",
    "select",
    "option",
    "h1",
    "h3",
    "x-custom",
    "table",
    "pre",
    "textarea",
    "em",
)
_WORDS = ("one", "two", " ", "\n", "  three ", "\u00a0", "&amp;", "&#4;", "&copy;", "\t")


@st.composite
def _html_trees(draw: st.DrawFn, depth: int = 0) -> str:
    parts = []
    for _ in range(draw(st.integers(0, 4 if depth < 4 else 0))):
        if draw(st.booleans()):
            parts.append(draw(st.sampled_from(_WORDS)))
        else:
            tag = draw(st.sampled_from(_TAGS))
            inner = draw(_html_trees(depth + 1))
            closed = draw(st.integers(0, 9)) > 0  # sometimes left for the parser to close
            parts.append(f"<{tag}>{inner}" + (f"</{tag}>" if closed else ""))
    return "".join(parts)


@settings(max_examples=1500, deadline=None)
@given(_html_trees(), st.booleans())
def test_compiled_and_python_walkers_agree_on_generated_pages(inner: str, reference: bool) -> None:
    """BR runs, links, images, SELECT edges, unclosed tags: every block and path equal."""
    html = body(inner)
    assert blocks(html, reference=reference, compiled=True) == blocks(
        html, reference=reference, compiled=False
    )
