"""repair: pages whose parse put the rest of the page inside one element."""

from __future__ import annotations

import time

import pytest
from lxml import etree

from corpus_crawler import ExtractConfig, Preset, dom, extract, repair

TEXT = (
    "The committee said that it would meet again in the spring, and that the members were"
    " not yet sure whether the plan could go ahead as it was first written. "
)
BODY = f"<body><h1>The plan</h1><p>{TEXT * 2}</p><p>{TEXT * 2}</p></body></html>"


def _tree(text: str) -> etree._Element:
    root = dom.parse(text)
    assert root is not None
    return root


def _parsed_as_libxml2_parses(html: str, *, scripting: bool) -> None:
    """`dom.parse_page` repaired nothing: its tree is libxml2's own."""
    root = dom.parse_page(html, scripting=scripting)
    assert root is not None
    assert etree.tostring(root) == etree.tostring(_tree(html))


def _title(root: etree._Element | None) -> str | None:
    assert root is not None
    return dom.title_of(root)


# ----------------------------------------------------------------------- <title>


def test_libxml2_reads_a_page_after_an_unclosed_title_as_its_text() -> None:
    """The premise: without </title> the whole page is the title's text."""
    html = f"<html><head><title>The plan\n{BODY}"
    root = _tree(html)
    assert root.find("body") is None
    assert "The committee said" in (root.find("head/title").text or "")


@pytest.mark.parametrize(
    "head",
    [
        "<title>The plan\n",
        # bytes lost in the middle of the head (pages of the L3S-GN1 set)
        "<TITLE>Gale to drive Nation'?' + OAS_query + '\"><\\/SCRIPT>');\n</SCRIPT>\n",
        '<title lang="en">The plan<meta name="x" content="y">',
    ],
)
def test_an_unclosed_title_ends_at_its_first_tag(head: str) -> None:
    html = f"<html><head>{head}</head>{BODY}"
    repaired = repair.unclosed_title(_tree(html), html)
    assert repaired is not None
    root = dom.parse_page(html, scripting=False)
    assert root is not None
    assert "The committee said" in "".join(root.find("body").itertext())
    title = _title(root)
    assert title is not None and "committee" not in title


@pytest.mark.parametrize(
    "html",
    [
        f"<html><head><title>The plan</title></head>{BODY}",
        # a literal < in a title is written &lt; and the title is closed
        f"<html><head><title>Use &lt;div&gt; for blocks</title></head>{BODY}",
        # a title without a tag after it
        "<html><head><title>The plan",
        f"<html>{BODY}",
    ],
)
def test_a_title_that_lost_nothing_is_left_alone(html: str) -> None:
    assert repair.unclosed_title(_tree(html), html) is None
    _parsed_as_libxml2_parses(html, scripting=False)


@pytest.mark.parametrize("preset", [Preset.SEED, Preset.CORPUS, Preset.ARTICLE])
def test_a_page_after_an_unclosed_title_is_extracted(preset: Preset) -> None:
    html = f"<html><head><title>The plan\n<link rel=stylesheet href=a.css></head>{BODY}"
    doc = extract(html.encode(), config=ExtractConfig(preset=preset, language="en"))
    assert doc.drop_reason is None, doc.drop_detail
    assert doc.text.count("The committee said") == 4
    assert doc.title == "The plan"


def test_the_reference_preset_parses_as_justext_does() -> None:
    """jusText 3.0.2 finds nothing on such a page; the reference preset agrees."""
    html = f"<html><head><title>The plan\n{BODY}"
    doc = extract(html.encode(), config=ExtractConfig(preset=Preset.REFERENCE, language="en"))
    assert doc.drop_reason is not None
    assert doc.text == ""


# -------------------------------------------------------------------- <noscript>

OPEN_IN_NOSCRIPT = (
    "<html><body><script>document.write('<div id=wrap>')</script>"
    f'<noscript><div id="wrap"> </noscript><p>{TEXT}</p></div></body></html>'
)


def test_a_tag_left_open_in_noscript_is_repaired_only_when_scripting() -> None:
    plain = dom.parse_page(OPEN_IN_NOSCRIPT, scripting=False)
    scripting = dom.parse_page(OPEN_IN_NOSCRIPT, scripting=True)
    assert plain is not None and scripting is not None
    assert "The committee" in "".join(plain.find(".//noscript").itertext())
    assert "".join(scripting.find(".//noscript").itertext()) == ""
    assert "The committee" in "".join(scripting.find("body").itertext())


@pytest.mark.parametrize(
    "noscript",
    [
        f"<noscript><p>{TEXT}</p></noscript>",
        '<noscript><img src="pixel.gif"><iframe src="x"></iframe></noscript>',
        # left open, but the close of its parent ends it: nothing swallowed
        "<div><noscript><span>Enable JavaScript</noscript></div>",
    ],
)
def test_a_noscript_that_ends_where_its_source_does_is_left_alone(noscript: str) -> None:
    html = f"<html><body><p>{TEXT}</p>{noscript}<p>{TEXT}</p></body></html>"
    assert repair.open_noscript(_tree(html), html) is None
    _parsed_as_libxml2_parses(html, scripting=True)


def test_a_noscript_never_closed_is_left_alone() -> None:
    """No </noscript> at all: a browser running scripts shows nothing after it either."""
    html = f"<html><body><p>{TEXT}</p><noscript><div><p>{TEXT}</p></body></html>"
    assert repair.open_noscript(_tree(html), html) is None


@pytest.mark.parametrize(
    ("script", "follows"),
    [
        ("<script type='text/template'><p>{t}</p></script>", True),
        ('<SCRIPT TYPE="text/x-handlebars-template">{t}</SCRIPT>\n  ', True),
        ("<script type=text/x-tmpl>{t}</script>", True),
        ("<script type='application/ld+json'>{{}}</script>", False),
        ("<script>var template = 1;</script>", False),
        ("<script type='text/template'>{t}</script><p>between</p>", False),
        ("", False),
    ],
)
def test_a_noscript_after_a_template_script_is_found_in_the_source(
    script: str, follows: bool
) -> None:
    html = f"<html><body>{script.format(t=TEXT)}<noscript><p>{TEXT}</p></noscript></body></html>"
    assert repair.follows_template(html, repair.noscript_sources(html)) is follows
    root = dom.parse_page(html, scripting=True)
    assert root is not None
    assert (root.find(".//noscript") is None) is follows


# ------------------------------------------------- end tags ignored behind a <div>

SIDEBAR_FIRST = (
    "<html><body><div id=side><ul>\n"
    "<li><div class=widget>Follow us</li>\n"
    "<li><div class=widget>Subscribe</li>\n"
    "</ul></div>\n"
    f'<div id="post"><h1>The plan</h1><p>{TEXT * 2}</p><p>{TEXT * 2}</p></div>\n'
    "</body></html>"
)


def _repaired(html: str) -> str | None:
    dom.parse(html)
    return repair.end_tags_behind_divs(html, repair.mismatches_of(dom._parser().error_log))


def test_libxml2_ignores_an_end_tag_while_a_div_is_open_inside_its_element() -> None:
    """The premise: the page after the sidebar's list ends up inside its first item."""
    root = _tree(SIDEBAR_FIRST)
    post = root.find(".//div[@id='post']")
    assert [el.tag for el in post.iterancestors()][:4] == ["li", "div", "li", "ul"]
    assert ("li", 2) in repair.mismatches_of(dom._parser().error_log)


def test_an_end_tag_closes_the_divs_left_open_inside_its_element() -> None:
    """As a browser parses it: the </li> closes the widget's <div> and the item."""
    assert _repaired(SIDEBAR_FIRST) == SIDEBAR_FIRST.replace("</li>", "</div></li>")
    root = dom.parse_page(SIDEBAR_FIRST, scripting=False)
    assert root is not None
    post = root.find(".//div[@id='post']")
    assert [el.tag for el in post.iterancestors()] == ["body", "html"]
    assert [len(li) for li in root.iter("li")] == [1, 1]


def test_a_sectioning_end_tag_closes_them_too() -> None:
    html = (
        f"<html><body><section><div>{TEXT}\n</section>\n"
        f"<article><p>{TEXT}</p></article></body></html>"
    )
    root = dom.parse_page(html, scripting=False)
    assert root is not None
    assert root.find("body/article") is not None


@pytest.mark.parametrize(
    "html",
    [
        # nothing left open
        SIDEBAR_FIRST.replace("</li>", "</div></li>"),
        # a stray end tag: no element to end, ignored by a browser too
        f"<html><body><div><p>{TEXT}</p></li></div><p>{TEXT}</p></body></html>",
        # a <span> is no list: a browser ignores its end tag behind a <div> too
        f"<html><body><span><div>{TEXT}</span><p>{TEXT}</p></div></body></html>",
        # an end tag does not reach out of a table cell, in a browser either
        f"<html><body><ul><li><table><tr><td><div>{TEXT}</li></ul></td></tr></table></body></html>",
        # markup in a script or a comment is no markup
        "<html><body><ul><li><script>document.write('<div>')</script>"
        f"<!-- <div> --><p>{TEXT}</p></li></ul></body></html>",
    ],
)
def test_end_tags_a_browser_ignores_as_well_are_left_alone(html: str) -> None:
    assert _repaired(html) is None
    _parsed_as_libxml2_parses(html, scripting=False)


def test_only_the_end_tags_libxml2_reported_are_rewritten() -> None:
    """The scan follows the source, not libxml2; an end tag it would close early
    on a line libxml2 reported nothing on is left as libxml2 read it."""
    assert repair.end_tags_behind_divs(SIDEBAR_FIRST, [("li", 3)]) == SIDEBAR_FIRST.replace(
        "Subscribe</li>", "Subscribe</div></li>"
    )
    assert repair.end_tags_behind_divs(SIDEBAR_FIRST, [("li", 9)]) is None
    assert repair.end_tags_behind_divs(SIDEBAR_FIRST, [("span", 2)]) is None
    assert repair.end_tags_behind_divs(SIDEBAR_FIRST, []) is None


def test_a_hostile_page_of_open_divs_and_stray_end_tags_costs_no_square() -> None:
    """20,000 <div>s never closed, then 20,000 end tags of lists never opened: the
    scan looks no deeper than libxml2 nests (256) and skips an end tag of nothing
    open at once. It took 24 s before either bound; the cap only catches a hang."""
    html = (
        "<html><body><ul><li><div>x</li></ul>"
        + "<div>" * 20_000
        + "</ul>" * 20_000
        + "<ul><li><table><tr><td>"
        + "<div>" * 20_000
        + "</li>" * 20_000
        + "</body></html>"
    )
    start = time.perf_counter()
    repaired = _repaired(html)
    assert time.perf_counter() - start < 10
    assert repaired is not None and repaired.startswith("<html><body><ul><li><div>x</div></li>")


@pytest.mark.parametrize("preset", [Preset.CORPUS, Preset.ARTICLE])
def test_a_post_after_an_aside_left_open_is_extracted(preset: Preset) -> None:
    """An ad slot's <div> never closed in a sidebar (Dragnet R831): libxml2 puts the
    post inside the <aside>, which the presets leave out, and keeps the blurb."""
    blurb = (
        "This blog is written by a small group of friends who like to write about food,"
        " travel and the city where they live, and about the people they meet there."
    )
    html = (
        f'<html><body><div class="intro"><p>{blurb}</p></div>\n'
        '<aside class="sidebar"><div class="ad-160"><script>slot(160)</script></aside>\n'
        f"<article><h1>The plan</h1><p>{TEXT}</p><p>{TEXT}</p></article>\n"
        "</body></html>"
    )
    doc = extract(html.encode(), config=ExtractConfig(preset=preset, language="en"))
    assert doc.drop_reason is None, doc.drop_detail
    assert doc.text.count("The committee said") == 2


# ------------------------------------------------------------- after </html>

INCLUDED_HEADER = (
    "<html><head><title>News</title></head><body>\n"
    '<div class="masthead"><a href="/">Home</a> | <a href="/news">News</a></div>\n'
    "</body></html>\n"
    "<html><head><title>The plan</title></head><body>\n"
    f"<h1>The plan</h1><p>{TEXT * 2}</p><p>{TEXT * 2}</p>\n"
    "<script>track()</script></body></html>\n"
)


def test_libxml2_drops_what_follows_the_documents_end() -> None:
    """The premise: after </html> libxml2 keeps nothing; a browser reads on."""
    root = _tree(INCLUDED_HEADER)
    assert "The committee" not in "".join(root.itertext())


def test_a_page_after_an_included_documents_end_is_parsed() -> None:
    repaired = repair.content_after_html_end(_tree(INCLUDED_HEADER), INCLUDED_HEADER)
    assert repaired is not None
    assert "</html>" not in repaired and "</body>" not in repaired
    root = dom.parse_page(INCLUDED_HEADER, scripting=True)
    assert root is not None
    body = root.find("body")
    assert body is not None and "The committee" in "".join(body.itertext())
    assert "Home" in "".join(body.itertext())


@pytest.mark.parametrize("preset", [Preset.SEED, Preset.CORPUS, Preset.ARTICLE])
def test_an_article_after_an_included_documents_end_is_extracted(preset: Preset) -> None:
    doc = extract(INCLUDED_HEADER.encode(), config=ExtractConfig(preset=preset, language="en"))
    assert doc.drop_reason is None, doc.drop_detail
    assert doc.text.count("The committee said") == 4


@pytest.mark.parametrize(
    "html",
    [
        f"<html><body><p>{TEXT}</p></body></html>\n",
        # scripts, comments and white space after the end show nothing
        f"<html><body><p>{TEXT}</p></body></html>\n"
        "<script>track('</html>')</script>\n<!-- 0.2 s -->",
        # an end written inside a script is no end
        "<html><body><script>document.write('<iframe></body></html>')</script>"
        f"<p>{TEXT}</p></body></html>",
        # an advert's own <html> and </html> inside the article: libxml2 keeps what follows
        f"<html><body><p>{TEXT}</p><div><html><body><ins></ins></body></html></div>"
        f"<p>{TEXT}</p></body></html>",
    ],
)
def test_a_page_parsed_to_its_end_is_left_alone(html: str) -> None:
    root = _tree(html)
    assert "".join(root.itertext()).count("The committee") == html.count("The committee")
    assert repair.content_after_html_end(root, html) is None


# ------------------------------------------------------ a body kept in <head>

# What libxml2 keeps in <head>: an element it does not know, with all after it.
STRAY_IN_HEAD = [
    # a template's own tag and no <body> tag at all (L3S-GN1 f3d9f7be)
    '<html><head><title>The plan</title><meta charset="utf-8"><mbox>'
    f"<h1>The plan</h1><p>{TEXT * 2}</p><p>{TEXT * 2}</p></mbox></html>",
    # Yandex's <noindex>, then the page's own <body class=...>
    '<html><head><title>The plan</title><noindex><div class="teaser">'
    f'<p>{TEXT * 2}</p></div></noindex><script>var a = "<noindex>";</script></head>'
    f'<body class="news"><p>{TEXT * 2}</p><h1>The plan</h1><p>{TEXT * 2}</p></body></html>',
    # a JSP's tag left in the page, and the same name in a comment before it
    "<html><head><!-- <c:if test=x> --><title>The plan</title><c:if test=y>"
    f"<p>{TEXT * 2}</p></c:if></head><body><h1>The plan</h1><p>{TEXT * 2}</p></body></html>",
]


@pytest.mark.parametrize("html", STRAY_IN_HEAD)
def test_libxml2_keeps_what_follows_an_unknown_tag_in_head(html: str) -> None:
    """The premise: the text after the stray tag is in <head>, which extractors leave out."""
    head = _tree(html).find("head")
    assert "The committee said" in "".join(head.itertext())


@pytest.mark.parametrize("html", STRAY_IN_HEAD)
def test_an_element_head_may_not_hold_opens_the_body(html: str) -> None:
    assert repair.body_in_head(_tree(html), html) is not None
    root = dom.parse_page(html, scripting=True)
    assert root is not None
    assert "The committee said" not in "".join(root.find("head").itertext())
    body = root.find("body")
    assert "".join(body.itertext()).count("The committee said") == html.count("The committee said")
    assert _title(root) == "The plan"
    if 'class="news"' in html:  # the page's own body tag, attributes and all
        assert body.get("class") == "news"
        assert "<noindex>" in "".join(root.find(".//script").itertext())


@pytest.mark.parametrize("preset", [Preset.SEED, Preset.CORPUS, Preset.ARTICLE])
def test_a_page_kept_in_head_is_extracted(preset: Preset) -> None:
    doc = extract(STRAY_IN_HEAD[0].encode(), config=ExtractConfig(preset=preset, language="en"))
    assert doc.drop_reason is None, doc.drop_detail
    assert doc.text.count("The committee said") == 4


@pytest.mark.parametrize(
    "html",
    [
        f"<html><head><title>The plan</title></head>{BODY}",
        # a stray tag that holds nothing shown: scripts, styles, a title
        "<html><head><wn></wn><title>The plan</title><script>var x = 1;</script>"
        f"<style>p {{}}</style></head>{BODY}",
        "<html><head><input type=hidden name=a value=b></head>" + BODY,
        # a start tag broken inside its attributes: libxml2's name is not in the source
        f'<html><head><meta c ontent="1"><title>The plan</title></head>{BODY}',
    ],
)
def test_a_head_that_holds_no_page_is_left_alone(html: str) -> None:
    assert repair.body_in_head(_tree(html), html) is None
    _parsed_as_libxml2_parses(html, scripting=True)


def test_the_reference_preset_keeps_libxml2s_head() -> None:
    """jusText 3.0.2 leaves such a page's text in <head>; the reference preset agrees."""
    doc = extract(
        STRAY_IN_HEAD[0].encode(), config=ExtractConfig(preset=Preset.REFERENCE, language="en")
    )
    assert doc.drop_reason is not None
    assert doc.text == ""
