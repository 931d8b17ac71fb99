"""Element marks (hidden elements, page furniture) and what the presets do with them.

The marks are read from attributes during the one segmentation walk; both
walkers (compiled and pure Python) must give the same marks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace

import pytest
from container_kept import container_kept, page_marks, page_stated, preset_text

from corpus_crawler import ExtractConfig, Preset, dom, extract
from corpus_crawler import segment as segment_module
from corpus_crawler.config import ConfigError, JustextParams
from corpus_crawler.container import ContainerOptions, container_pass
from corpus_crawler.decode import decode_html
from corpus_crawler.elementmarks import (
    ARTICLE,
    ASIDE,
    ASIDE_ELEMENT,
    COMMENTS,
    HIDDEN,
    SIDEBAR,
    STATED,
    UNLIKELY,
    element_marks,
    inherited,
)
from corpus_crawler.model import ParagraphClass
from corpus_crawler.presets import container_options
from corpus_crawler.segment import segment

GoldPages = Callable[[str], Iterator[tuple[str, bytes, str, dict[str, object]]]]

SENTENCE = (
    "The committee said that it would meet again in the spring, and that the members were"
    " not yet sure whether the plan could go ahead as it was first written. "
)
REPLY = (
    "I think that the committee is wrong about this, and that the plan should have been"
    " put to the vote of all the members before it was sent to the town council. "
)


def _marks(tag: str = "div", **attributes: str) -> int:
    """The hidden and furniture marks (the marks an element states about itself,
    elementmarks.STATED, are test_presets_article6's)."""
    names = ("class", "id", "role", "hidden", "aria-hidden", "style")
    return element_marks(tag, *(attributes.get(n.replace("-", "_")) for n in names)) & ~STATED


def test_hidden_attributes_and_styles_mark_an_element_hidden() -> None:
    assert _marks(hidden="") == HIDDEN
    assert _marks(aria_hidden="true") == HIDDEN
    assert _marks(aria_hidden=" TRUE ") == HIDDEN
    assert _marks(style="color: red; display : none") == HIDDEN
    assert _marks(style="visibility:hidden") == HIDDEN
    assert _marks(aria_hidden="false") == 0
    assert _marks(style="display: block") == 0


def test_furniture_names_and_roles_mark_an_element_unlikely() -> None:
    assert _marks(**{"class": "comment-list"}) == UNLIKELY | ASIDE | COMMENTS
    assert _marks(id="site-footer") == UNLIKELY | ASIDE
    assert _marks(id="site-header") == UNLIKELY
    assert _marks(role="navigation") == UNLIKELY
    assert _marks("aside", **{"class": "sidebar widget"}) == (
        UNLIKELY | ASIDE | SIDEBAR | ASIDE_ELEMENT
    )
    # a name that also says content is not furniture (readability's okMaybe)
    assert _marks(**{"class": "main-comments"}) == 0
    assert _marks(**{"class": "sidebar"}, id="content") == 0
    # the page itself and links never are
    assert _marks("body", **{"class": "has-sidebar"}) == 0
    assert _marks("a", **{"class": "comment-link"}) == 0
    assert _marks(**{"class": "story"}) == 0
    assert _marks(**{"class": "comments"}, hidden="") == HIDDEN | UNLIKELY | ASIDE | COMMENTS


def test_asides_are_marked_by_the_first_or_last_word_of_their_names() -> None:
    """ASIDE: furniture whose class or id begins or ends with comment(s),
    commentlist, disqus, replies, sidebar or footer; not a word inside a longer
    name (a layout's), nor a word that merely contains one."""
    for names in ("comments", "commentlist", "comment-list", "js_replies", "disqus_thread"):
        assert _marks(**{"class": f"x {names}"}) == UNLIKELY | ASIDE | COMMENTS, names
    for names in ("primary-sidebar", "sidebar-right"):
        assert _marks(**{"class": f"x {names}"}) == UNLIKELY | ASIDE | SIDEBAR, names
    for names in ("site-footer", "footer-widgets"):
        assert _marks(**{"class": f"x {names}"}) == UNLIKELY | ASIDE, names
    assert _marks(**{"class": "sidebar-footer"}) == UNLIKELY | ASIDE | SIDEBAR
    assert _marks(id="comments") == UNLIKELY | ASIDE | COMMENTS
    # a comment word at either end of any one name makes the comment section
    assert _marks(**{"class": "site-footer comments-wrap"}) == UNLIKELY | ASIDE | COMMENTS
    assert _marks(**{"class": "comments-in-sidebar"}) == UNLIKELY | ASIDE | COMMENTS
    assert _marks(**{"class": "sidebar-comments-x"}) == UNLIKELY | ASIDE | SIDEBAR
    # furniture of other kinds, layout names and words that only contain the letters
    assert _marks(**{"class": "menu"}) == UNLIKELY
    assert _marks(**{"class": "panel-two-col-sidebar-right-mix"}) == UNLIKELY
    assert _marks(**{"class": "commented-post header"}) == UNLIKELY
    # a URL used as an id is not a name (gold sets wrap pages in <text id=URL>)
    assert _marks("text", id="http://x.org/read-comments extra") == UNLIKELY
    assert _marks("text", id="http://x.org/read-comments") == 0
    assert _marks("text", id="http://nfapp.east.asu.edu/Newsletters/1997/oct97.htm") == 0
    # a newsletter's sign-up box (a word readability's list predates)
    assert _marks(**{"class": "newsletter-signup"}) == UNLIKELY
    assert _marks(**{"class": "NewsletterModule"}) == UNLIKELY
    assert _marks(**{"class": "newsletter-content"}) == 0
    # a box about the writer under the article (newer than readability's list too)
    assert _marks(**{"class": "author-box"}) == UNLIKELY
    assert _marks(**{"class": "bmg-author-bio"}) == UNLIKELY
    assert _marks(id="aboutAuthor") == UNLIKELY
    assert _marks(**{"class": "contributor-bio contributor-bio--align-left"}) == UNLIKELY
    assert _marks(**{"class": "author-box--content"}) == 0
    # a cookie or consent banner, named so by the plugins that make them; a post
    # filed under cookies is no banner
    assert _marks(id="cookie-law-info-bar") == UNLIKELY
    assert _marks(**{"class": "cookie-notice-container"}) == UNLIKELY
    assert _marks(**{"class": "borlabs-cookie_youtube"}) == UNLIKELY
    assert _marks(**{"class": "consent_manager-cookie-provider"}) == UNLIKELY
    assert _marks(**{"class": "cc-window cookieconsent"}) == UNLIKELY
    assert _marks(**{"class": "post category-cookies tag-baking"}) == 0
    # a byline's author name is no box: only the names of one are furniture
    assert _marks(**{"class": "author vcard"}) == 0
    # not furniture at all (readability's okMaybe words): no aside mark either
    assert _marks(**{"class": "comment-content"}) == 0
    assert _marks(**{"class": "sidebar-column"}) == 0


def test_articles_and_main_content_are_marked_unless_named_as_furniture() -> None:
    assert _marks("article") == ARTICLE
    assert _marks("main", id="main") == ARTICLE
    assert _marks("div", role="main") == ARTICLE
    assert _marks("article", **{"class": "post type-post hentry"}) == ARTICLE
    # named as furniture, or with an aside's word at the end of a name
    assert _marks("article", **{"class": "related-post"}) == UNLIKELY
    assert _marks("article", **{"class": "sidebar-post"}) == UNLIKELY | ASIDE | SIDEBAR
    assert _marks("article", **{"class": "comment-body"}) == 0
    assert _marks("article", id="div-comment-2", **{"class": "comment-body"}) == 0
    # an aside by its tag and its name; not by an <aside>'s tag alone (sites write
    # their posts in <aside class="blogPost">), nor by a name alone
    assert _marks("aside", **{"class": "sidebar"}) == UNLIKELY | ASIDE | SIDEBAR | ASIDE_ELEMENT
    assert _marks("aside") == 0
    assert _marks("div", id="sidebar") == UNLIKELY | ASIDE | SIDEBAR
    # a <footer> is one by its tag (HTML's contentinfo), unless its names say content
    for names in ({}, {"class": "site-footer"}, {"class": "grid_24 ft"}):
        assert _marks("footer", **names) == UNLIKELY | ASIDE | ASIDE_ELEMENT, names
    assert _marks("footer", **{"class": "entry-content"}) == 0
    # a <form> is furniture by its tag (comment, search, login, sign-up forms)
    assert _marks("form") == UNLIKELY
    assert _marks("form", id="aspnetForm") == UNLIKELY
    assert (
        _marks("form", id="commentform", **{"class": "comment-form"}) == UNLIKELY | ASIDE | COMMENTS
    )
    assert _marks("form", **{"class": "main-content"}) == 0


def test_an_article_ends_the_aside_above_it_but_not_a_comment_section_or_aside_element() -> None:
    layout = _marks(**{"class": "container penci_sidebar"})
    assert layout == UNLIKELY | ASIDE | SIDEBAR
    # the sidebar mark ends with the aside (a thread in the post is not a widget)
    assert inherited(layout, ARTICLE) == UNLIKELY | ARTICLE
    # a comment section inside the article marks its own blocks again
    assert inherited(inherited(layout, ARTICLE), _marks(id="comments")) == (
        UNLIKELY | ARTICLE | ASIDE | COMMENTS
    )
    thread = _marks(**{"class": "comment-list"})
    assert inherited(thread, ARTICLE) == thread | ARTICLE
    sidebar = _marks("aside", id="sidebar")
    assert inherited(sidebar, ARTICLE) == sidebar | ARTICLE
    assert inherited(0, ARTICLE) == ARTICLE
    assert inherited(layout, 0) == layout


PAGE = (
    "<html><body>"
    '<div class="comments"><p>one two</p><div id="x" style="display: none"><p>hid</p></div></div>'
    '<nav role="navigation"><br><br>after two brs</nav>'
    "<p hidden>h2</p>"
    '<div class="main-comment"><p>ok</p></div>'
    'text<a class="comment">link</a>'
    "</body></html>"
)


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "python"])
def test_blocks_carry_the_marks_of_their_element_and_its_ancestors(compiled: bool) -> None:
    root = dom.preprocess_seed(dom.parse(PAGE))
    found = {b.text: b.marks & ~STATED for b in segment(root, compiled=compiled, marked=True)}
    assert found == {
        "one two": UNLIKELY | ASIDE | COMMENTS,
        "hid": UNLIKELY | ASIDE | COMMENTS | HIDDEN,
        "after two brs": UNLIKELY,  # a block begun at a BR keeps the BR's marks
        "h2": HIDDEN,
        "ok": 0,
        "textlink": 0,
    }
    # without `marked` nothing is read
    assert {b.marks for b in segment(root, compiled=compiled)} == {0}


@pytest.mark.parametrize("gold_set", ["cleaneval-dev", "cleanportaleval", "readability"])
def test_compiled_and_python_walkers_give_the_same_marks_on_gold_pages(
    gold_pages: GoldPages, gold_set: str
) -> None:
    assert segment_module._fast is not None, "the compiled walker is not built"
    differing = []
    marked_blocks = 0
    for page_id, html, _gold, _record in gold_pages(gold_set):
        root = dom.parse(decode_html(html).text)
        if root is None:
            continue
        root = dom.preprocess_seed(root)
        fast = segment(root, compiled=True, marked=True)
        if fast != segment(root, compiled=False, marked=True):
            differing.append(page_id)
        marked_blocks += sum(1 for b in fast if b.marks)
    assert differing == []
    assert marked_blocks > 0


def _article_page(hidden: str = "", comments: int = 0) -> bytes:
    article = "".join(f"<p>{SENTENCE * 2}</p>" for _ in range(3))
    replies = "".join(f"<p>{REPLY * 2}</p>" for _ in range(comments))
    share = "".join(f'<li><a href="/s{i}">Share on network {i}</a></li>' for i in range(6))
    return (
        "<html><body>"
        f'<div class="post"><h1>The plan</h1>{article}{hidden}</div>'
        f'<ul class="share">{share}</ul>'
        f'<div id="comments" class="comments-area">{replies}</div>'
        "</body></html>"
    ).encode()


def _kept(preset: Preset, html: bytes) -> str:
    doc = extract(html, config=ExtractConfig(preset=preset, language="en"))
    return doc.text


@pytest.mark.parametrize("preset", [Preset.CORPUS, Preset.ARTICLE])
def test_hidden_text_is_not_kept_by_the_presets(preset: Preset) -> None:
    secret = "This hidden note is never shown to a reader of the page but it is long. " * 3
    html = _article_page(hidden=f'<div style="display:none"><p>{secret}</p></div>')
    assert "hidden note" in _kept(Preset.SEED, html)
    kept = _kept(preset, html)
    assert "hidden note" not in kept
    assert "The committee said" in kept


def test_a_comment_section_longer_than_the_article_does_not_become_the_container() -> None:
    """Readability removes page furniture before it scores; without that, six long
    comments outscore a three-paragraph article and the article preset keeps the
    comments. The corpus preset keeps both (CleanEval keeps comments)."""
    html = _article_page(comments=6)
    article = _kept(Preset.ARTICLE, html)
    assert "The committee said" in article
    assert "I think that the committee" not in article
    corpus = _kept(Preset.CORPUS, html)
    assert "The committee said" in corpus
    assert "I think that the committee" in corpus


SHORT_REPLIES = (
    "I agree with you, and I think that it is the best plan we have had in years.",
    "Thanks for writing this up, it was more than I had heard about it at the meeting.",
    "We were there too and it was not at all as the paper said it was on the day.",
)


def _discussed_page() -> bytes:
    """An article, a sidebar of running text, and a thread of short replies, each
    between its author's name and a Reply link (what a blog's comments look like)."""
    article = "".join(f"<p>{SENTENCE * 2}</p>" for _ in range(3))
    thread = "".join(
        f'<li><div class="author">Reader {i} says:</div><p>{reply}</p>'
        f'<a href="/reply/{i}">Reply</a></li>'
        for i, reply in enumerate(SHORT_REPLIES)
    )
    links = "".join(f'<li><a href="/t{i}">Town news {i}</a></li>' for i in range(4))
    about = f"<ul>{links}</ul><p>{REPLY * 2}</p><ul>{links}</ul>"
    return (
        "<html><body>"
        f'<div class="sidebar"><h3>About the town</h3>{about}</div>'
        f'<div class="post"><h1>The plan</h1>{article}</div>'
        f'<div id="comments" class="comments-area"><ol class="commentlist">{thread}</ol></div>'
        "</body></html>"
    ).encode()


def test_the_article_comments_preset_keeps_the_thread_and_not_the_sidebar() -> None:
    """`article-comments` is `article` with the reader comments under the article
    kept (configs/extractors/presets.yaml): a short reply between its byline and a
    Reply link is NEAR_GOOD alone and BAD in jusText's context (two of the three
    here); one class step up keeps it, with its byline and Reply link, which
    Dragnet's comment golds keep too. The sidebar is not in a comment section
    and stays out, as in `article` (here between link lists and apart from the
    thread: jusText's context pass carries a NEAR_GOOD block next to a kept one,
    in any preset)."""
    html = _discussed_page()
    article = _kept(Preset.ARTICLE, html)
    assert "The committee said" in article
    assert not any(reply in article for reply in SHORT_REPLIES)
    # jusText alone drops most short replies, so the preset's step is what keeps them
    seed = _kept(Preset.SEED, html)
    assert sum(reply in seed for reply in SHORT_REPLIES) == 1
    discussed = _kept(Preset.ARTICLE_COMMENTS, html)
    assert "The committee said" in discussed
    assert all(reply in discussed for reply in SHORT_REPLIES)
    assert "I think that the committee" not in discussed  # the sidebar
    assert "I think that the committee" not in article
    assert "I think that the committee" in seed


def test_corpus_leaves_page_furniture_out_and_keeps_the_comments() -> None:
    """`corpus` moves a block outside the container one class step down when it lies
    in page furniture (furniture_shift -1: a sidebar's blurb, a footer), and judges a
    comment section as jusText does (comment_shift 0): CleanEval keeps comments, and a
    site's blurb is on every page of the site. Without the step the blurb is kept."""

    html = _discussed_page()
    corpus = _kept(Preset.CORPUS, html)
    seed = _kept(Preset.SEED, html)
    assert "The committee said" in corpus
    assert "I think that the committee" in seed
    assert "I think that the committee" not in corpus  # the sidebar's blurb
    # the comment thread as jusText judges it
    assert [r in corpus for r in SHORT_REPLIES] == [r in seed for r in SHORT_REPLIES]
    assert any(r in corpus for r in SHORT_REPLIES)
    shipped = container_options(Preset.CORPUS)
    assert shipped is not None and shipped.furniture_shift == -1
    doc = extract(html, config=ExtractConfig(language="en"))
    for compiled in (True, False):
        kept = {
            step: " ".join(
                p.text
                for p in container_pass(
                    doc.paragraphs,
                    JustextParams(),
                    replace(shipped, furniture_shift=step),
                    page_marks(html),
                    compiled=compiled,
                    stated=page_stated(html),
                )
                if p.final_class is ParagraphClass.GOOD
            )
            for step in (0, -1)
        }
        assert "I think that the committee" in kept[0]
        assert "I think that the committee" not in kept[-1]


def test_without_the_furniture_rule_the_comments_win() -> None:
    """The page above is a fair test: the container pass alone picks the comments,
    and with furniture left out of the scoring it picks the article."""
    from corpus_crawler.container import _Subtrees, main_containers
    from corpus_crawler.segment import furniture

    html = _article_page(comments=6)
    doc = extract(html, config=ExtractConfig(language="en"))
    root = dom.preprocess_seed(dom.parse(html.decode()))
    segments = segment(root, marked=True)
    assert [s.text for s in segments] == [p.text for p in doc.paragraphs]
    options = ContainerOptions(tag_scores=True, skip_unlikely=True)
    assert options.uses_marks
    everything = _Subtrees(doc.paragraphs, options)
    assert main_containers(doc.paragraphs, options, everything)[0].startswith(
        "/html[1]/body[1]/div[2]"
    )
    without = _Subtrees(doc.paragraphs, options, furniture(segments))
    assert main_containers(doc.paragraphs, options, without) == ["/html[1]/body[1]/div[1]"]


def test_bad_mark_options_name_the_key() -> None:
    with pytest.raises(ConfigError, match="drop_hidden must be true or false"):
        ContainerOptions(drop_hidden="yes")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="did you mean 'skip_unlikely'"):
        ContainerOptions.from_mapping({"skip_unlikly": True}, "presets.yaml article")


def test_noscript_text_is_hidden() -> None:
    """A browser that runs scripts never shows NOSCRIPT (cookie walls live there)."""
    assert _marks("noscript") == HIDDEN
    html = _article_page(hidden=f"<noscript><p>{REPLY * 3}</p></noscript>")
    assert "I think that the committee" in _kept(Preset.SEED, html)
    assert "I think that the committee" not in _kept(Preset.ARTICLE, html)


# Google's blogs (security.googleblog.com on trafilatura's evaluation pages): the
# post is a template a script renders, and its <noscript> fallback is the one copy
# of the post a parse can read.
_TEMPLATE_POST = (
    "<html><body><div class='blog-title'><p>News and insights on security</p></div>"
    "<div class='post-content'><script type='text/template'>"
    f"<p>{SENTENCE * 2}</p><p>{SENTENCE * 2}</p></script>"
    f"<noscript><p>{SENTENCE * 2}</p><p>{SENTENCE * 2}</p></noscript></div>"
    "<script type='application/ld+json'>{}</script>"
    f"<noscript><p>{REPLY * 3}</p></noscript>"
    "</body></html>"
)


@pytest.mark.parametrize("preset", [Preset.CORPUS, Preset.ARTICLE])
def test_a_template_fallback_in_noscript_is_the_page_text(preset: Preset) -> None:
    """A browser running scripts shows the rendered template where its <noscript>
    stands: the same text. Another <noscript> stays hidden, even after a script
    that is no template."""
    root = dom.parse_page(_TEMPLATE_POST, scripting=True)
    assert root is not None
    assert [el.tag for el in root.iter("noscript")] == ["noscript"]
    kept = _kept(preset, _TEMPLATE_POST.encode())
    assert kept.count("The committee said") == 4
    assert "I think that the committee" not in kept


@pytest.mark.parametrize("preset", [Preset.CORPUS, Preset.ARTICLE])
def test_iframe_fallback_text_is_hidden(preset: Preset) -> None:
    """An IFRAME's content is shown by no current browser (it shows the framed
    page); libxml2 keeps it as text, so an ad's fallback markup became words of
    the page (`<a href="http://ads...">` on CleanEval and L3S-GN1 pages)."""
    assert _marks("iframe") == HIDDEN
    assert _marks("iframe", **{"class": "comments"}) == HIDDEN | UNLIKELY | ASIDE | COMMENTS
    fallback = (
        '<a href="http://ads.example.com/click?id=1"><img src="http://ads.example.com/i"></a>'
    )
    paragraph = (
        f"<p>{SENTENCE}<iframe src='/ad'>{fallback} Your browser shows no frames.</iframe></p>"
    )
    html = _article_page(hidden=paragraph)
    assert "ads.example.com" in _kept(Preset.SEED, html)
    kept = _kept(preset, html)
    assert "ads.example.com" not in kept and "no frames" not in kept
    assert kept.count("The committee said") == 7


@pytest.mark.parametrize("preset", [Preset.CORPUS, Preset.ARTICLE, Preset.ARTICLE_COMMENTS])
def test_a_textarea_is_a_form_field_not_page_text(preset: Preset) -> None:
    """1tv.ru: a "code to paste in your blog" box, a TEXTAREA holding the article's
    HTML as its default value, was kept as 212 shingles of markup. readability.js
    cleans TEXTAREA out of its article; the seed keeps it as jusText does."""
    assert _marks("textarea") == HIDDEN
    embed = (
        '&lt;div style="border: 1px solid #DDD"&gt;&lt;a href="http://www.example.com/news/1"&gt;'
        f"{SENTENCE * 2}&lt;/a&gt;&lt;/div&gt;"
    )
    html = _article_page(hidden=f"<div class='embed'><textarea rows=4>{embed}</textarea></div>")
    assert 'style="border' in _kept(Preset.SEED, html)
    kept = _kept(preset, html)
    assert 'style="border' not in kept
    assert kept.count("The committee said") == 6


# A fallback for a `document.write` that opens the page's wrapper: the <div> is
# left open inside the <noscript>, so libxml2 ignores the </noscript> (a page of
# the CleanEval final set was lost whole this way).
_OPEN_IN_NOSCRIPT = (
    "<html><body><p>Skip to content</p>"
    "<script>document.write('<div id=wrap>')</script>"
    '<noscript><div id="wrap"> </noscript>'
    "<h1>The plan</h1>" + "".join(f"<p>{SENTENCE * 2}</p>" for _ in range(3)) + "</div>"
    "<noscript><p>Please enable JavaScript to see the comments.</p></noscript>"
    "</body></html>"
)


def test_libxml2_puts_the_page_after_a_tag_left_open_in_noscript_inside_it() -> None:
    """The premise of repair.open_noscript: the plain parse hides the article."""
    root = dom.parse(_OPEN_IN_NOSCRIPT)
    assert root is not None
    inside = "".join(root.find(".//noscript").itertext())
    assert "The committee said" in inside


@pytest.mark.parametrize(
    ("extractor", "preset"),
    [
        ("justext", Preset.CORPUS),
        ("justext", Preset.ARTICLE),
        ("combined", Preset.CORPUS),
        ("kimatu", Preset.SEED),
        ("declutter", Preset.SEED),
    ],
)
def test_a_tag_left_open_in_noscript_does_not_hide_the_rest_of_the_page(
    extractor: str, preset: Preset
) -> None:
    """Extractors that leave <noscript> out read it as a browser running scripts
    does: its content ends at </noscript>, whatever it left open."""
    config = ExtractConfig(extractor=extractor, preset=preset, language="en")
    doc = extract(_OPEN_IN_NOSCRIPT.encode(), config=config)
    assert doc.drop_reason is None, doc.drop_detail
    assert doc.text.count("The committee said") == 6
    assert "enable JavaScript" not in doc.text


def test_the_seed_preset_still_walks_noscript_content() -> None:
    """The seed keeps <noscript> text, so its parse is the plain one."""
    doc = extract(_OPEN_IN_NOSCRIPT.encode(), config=ExtractConfig(language="en"))
    assert doc.text.count("The committee said") == 6


def test_furniture_is_ignored_when_it_leaves_too_little_for_a_container() -> None:
    """readability's retry: a site that names its whole page wrapper `header-...`
    would leave no article; with less than `min_container_chars` in the container
    chosen without the furniture, the container is chosen with it."""

    article = "".join(f"<p>{SENTENCE * 2}</p>" for _ in range(4))
    links = "".join(f'<li><a href="/r{i}">Related story number {i}</a></li>' for i in range(8))
    html = (
        '<html><body><div class="header-wrap">'
        f'<div class="story">{article}</div></div>'
        f"<div><p>A short note at the bottom of the page, and a line.</p><ul>{links}</ul></div>"
        "</body></html>"
    )
    root = dom.preprocess_seed(dom.parse(html))
    segments = segment(root, marked=True)
    doc = extract(html.encode(), config=ExtractConfig(language="en"))
    unlikely = [bool(s.marks & UNLIKELY) for s in segments]
    assert sum(unlikely) == 4
    options = ContainerOptions(skip_unlikely=True, inside_shift=2, outside_shift=-3)
    retried = container_pass(doc.paragraphs, JustextParams(), options, unlikely)
    kept = [p.text for p in retried if p.final_class is ParagraphClass.GOOD]
    assert len(kept) == 4 and all(t.startswith("The committee") for t in kept)

    no_retry = container_pass(
        doc.paragraphs, JustextParams(), replace(options, min_container_chars=1), unlikely
    )
    assert not any(
        p.text.startswith("The committee") for p in no_retry if p.final_class is ParagraphClass.GOOD
    )


def _short_post_page(comments: int) -> bytes:
    """A post of two short lines and a photo, its comments longer than it."""
    replies = "".join(f"<li><p>{REPLY * 2}</p></li>" for _ in range(comments))
    return (
        '<html><body><div class="post"><h1>The new bridge at dawn</h1>'
        "<p>Taken from the north bank this morning, as the fog lifted.</p>"
        '<img src="/bridge.jpg"></div>'
        f'<div id="comments"><h2>Comments</h2><ol class="commentlist">{replies}</ol></div>'
        "</body></html>"
    ).encode()


def _with_and_without_asides_rule(html: bytes, compiled: bool) -> tuple[str, str]:
    """What the container pass keeps of `html` with `retry_keeps_asides_out` on, off."""
    with_rule = container_kept(html, compiled=compiled, retry_keeps_asides_out=True)
    without = container_kept(html, compiled=compiled, retry_keeps_asides_out=False)
    return with_rule, without


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "python"])
def test_the_furniture_retry_keeps_comment_sections_out(compiled: bool) -> None:
    """A short post holds fewer than min_container_chars, so the container is chosen
    again with the furniture: without `retry_keeps_asides_out` the comments win and
    an extractor of the main text keeps a reader's reply instead of the post; with it
    the post stays the container. Both container passes."""
    html = _short_post_page(comments=4)
    # the heading, the caption and the image block; the comments heading and 4 replies
    assert [bool(m & ASIDE) for m in page_marks(html)] == [False] * 3 + [True] * 5
    with_rule, without = _with_and_without_asides_rule(html, compiled)
    assert "Taken from the north bank" in with_rule
    assert "I think that the committee" not in with_rule
    assert "I think that the committee" in without
    assert "Taken from the north bank" not in without


def _article_in_a_banner_page() -> bytes:
    """pravda.ru's shape: the article in a div whose name holds readability's
    "banner", beside a news column of two teasers and a long list of headline links."""
    article = "".join(
        f"<p>{sentence} The report was published by the commission on Monday, and it"
        " compares the figures that the national offices collected in the last two"
        " years with the figures of the years before them.</p>"
        for sentence in (
            "Britain has the highest share of overweight women in Europe.",
            "Malta has the highest share of overweight men, the survey found.",
            "Romania has the lowest share of all the countries in the survey.",
            "The share grows with age and falls with the years spent in school.",
        )
    )
    teasers = "".join(
        f"<div class='teaser'>{text}, and the ministry said that it would answer"
        " the questions of the deputies in the next session of the committee.</div>"
        for text in ("The new budget was sent to parliament", "The airport will close")
    )
    headlines = "".join(
        f'<li><a href="/news/{n}">Headline number {n} of the day in the news column</a></li>'
        for n in range(20)
    )
    return (
        "<html><body><div class='page'>"
        f"<div class='_ga1_on_ _reachbanner_'><h2>Europe's weight survey</h2>{article}</div>"
        f"<div class='column'>{teasers}<ul>{headlines}</ul></div>"
        "</div></body></html>"
    ).encode()


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "python"])
def test_the_furniture_retry_weighs_prose_not_link_lists(compiled: bool) -> None:
    """The article's div is furniture by its name, so the container is chosen without
    it: the news column. Its headline links make it look long enough, and the retry
    with the furniture never ran; weighed by its prose (the blocks within the link
    limit, what readability's cleaning leaves) it is two teasers, and the retry finds
    the article. Both container passes."""
    html = _article_in_a_banner_page()
    marks = page_marks(html)
    assert marks[0] and not marks[-1]  # the article is furniture, the headlines are not
    weighed = container_kept(html, compiled=compiled, retry_weighs_prose=True)
    counted = container_kept(html, compiled=compiled, retry_weighs_prose=False)
    assert "Britain has the highest share" in weighed
    assert "Britain has the highest share" not in counted
    assert "The new budget was sent" in counted


def test_the_article_preset_keeps_a_short_post_and_not_its_comments() -> None:
    """End to end as a crawl extracts a page: both shipped presets run the rule; the
    corpus preset still keeps the comments (it demotes nothing outside the container,
    and jusText keeps them), the article preset does not."""

    article = container_options(Preset.ARTICLE)
    corpus = container_options(Preset.CORPUS)
    assert article is not None and article.retry_keeps_asides_out
    assert corpus is not None and corpus.retry_keeps_asides_out
    html = _short_post_page(comments=4)
    kept = _kept(Preset.ARTICLE, html)
    assert "Taken from the north bank" in kept
    assert "I think that the committee" not in kept
    assert "I think that the committee" in _kept(Preset.CORPUS, html)


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "python"])
def test_comment_sections_are_not_in_a_container_chosen_again_around_them(
    compiled: bool,
) -> None:
    """A page wrapper named like furniture holds the story and its comments: the
    retry chooses the wrapper (the story's paragraphs are its children), and the
    comment section inside it is still not part of the article."""
    replies = "".join(f"<li><p>{REPLY * 2}</p></li>" for _ in range(4))
    story = "".join(f"<p>{SENTENCE * 2}</p>" for _ in range(3))
    html = (
        '<html><body><div class="header-wrap"><h1>The plan</h1>'
        f'{story}<div id="comments"><ol class="commentlist">{replies}</ol></div>'
        "</div></body></html>"
    ).encode()
    marks = page_marks(html)
    assert all(marks) and sum(bool(m & ASIDE) for m in marks) == 4
    with_rule, without = _with_and_without_asides_rule(html, compiled)
    assert "The committee said" in with_rule
    assert "I think that the committee" not in with_rule
    assert "The committee said" in without and "I think that the committee" in without


def test_the_article_preset_keeps_a_short_post_and_not_the_sidebar_beside_it() -> None:
    """The same retry with a sidebar (an about-the-author box longer than the post):
    a sidebar is an aside, and the post stays the article."""
    about = "".join(f"<p>{REPLY * 2}</p>" for _ in range(3))
    html = (
        '<html><body><div class="post"><h1>The new bridge at dawn</h1>'
        "<p>Taken from the north bank this morning, as the fog lifted.</p>"
        f'<img src="/bridge.jpg"></div><div id="primary-sidebar">{about}</div>'
        "</body></html>"
    ).encode()
    kept = _kept(Preset.ARTICLE, html)
    assert "Taken from the north bank" in kept
    assert "I think that the committee" not in kept


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "python"])
def test_the_retry_keeps_the_first_container_when_it_held_more(compiled: bool) -> None:
    """readability.js keeps each attempt and, when none reaches its threshold, returns
    the longest: a 300-character post is not given up for a shorter blurb in the
    page header that the retry (furniture counted again) prefers."""
    post = "".join(f"<p>{SENTENCE.replace(',', '')}</p>" for _ in range(2))
    blurb = "Every day I write about doctors, nurses, patients, plans, networks, and wards."
    html = (
        f'<html><body><div class="site-header"><p>{blurb} {blurb}</p></div>'
        f'<div class="post"><h3>In town this week</h3>{post}</div></body></html>'
    ).encode()

    def kept(longest: bool) -> str:
        # no region: what is kept is what the container holds
        return container_kept(
            html,
            compiled=compiled,
            region_share=0.0,
            retry_keeps_asides_out=True,
            retry_takes_longest=longest,
        )

    assert "The committee said" in kept(True)
    assert "Every day I write" not in kept(True)
    assert "Every day I write" in kept(False)
    assert "The committee said" not in kept(False)


def _marks_by_start(html: bytes, compiled: bool) -> dict[str, int]:
    """Each block's marks by the first 12 characters of its text."""
    root = dom.preprocess_seed(dom.parse(html.decode()))
    return {b.text[:12]: b.marks for b in segment(root, compiled=compiled, marked=True)}


def _post_and_footer_page() -> bytes:
    """Dragnet R978's shape: a short post, and a page footer with the publisher's
    blurb, longer than the post, in a `<footer>` that no name calls one."""
    blurb = "".join(f"<p>{REPLY * 2}</p>" for _ in range(2))
    return (
        "<html><body><article><h1>Portrait of a craftsman</h1>"
        "<p>Take a visit inside the leather works studio in Massachusetts, where the"
        " bags are still cut and stitched by hand.</p></article>"
        f"<footer><div><h4>About the publisher</h4>{blurb}</div></footer>"
        "</body></html>"
    ).encode()


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "python"])
def test_a_page_footer_is_furniture_by_its_tag(compiled: bool) -> None:
    html = _post_and_footer_page()
    marks = _marks_by_start(html, compiled)
    assert marks["About the pu"] & (UNLIKELY | ASIDE) == UNLIKELY | ASIDE
    assert not marks["Take a visit"] & (UNLIKELY | ASIDE)
    kept = _kept(Preset.ARTICLE, html)
    assert "Take a visit inside" in kept
    assert "I think that the committee" not in kept


def _post_and_newsletter_page() -> bytes:
    """Dragnet R298's shape: a post, and a newsletter sign-up box that slides up at
    the bottom of the page, its description longer than the post."""
    post = (
        "Earlier today, we showcased the fashion team's pick of the designer's runway"
        " looks, celebrating their favourite outfits as proposed by the designer. "
    )
    pitch = (
        "Twice a week we will send you a selection of our stories, covering fashion, music,"
        " arts, culture and photography news and interviews, and we promise that we will"
        " not share your address with anyone else. "
    )
    return (
        "<html><body><div class='page'><h1>An archive of editorials</h1>"
        f"<p>{post * 2}</p><p>{post * 2}</p></div>"
        "<section class='newsletter-slideup'><div class='newsletter-slideup-title'>Sign up"
        f" for our newsletter</div><p>{pitch * 5}</p></section>"
        "</body></html>"
    ).encode()


def _post_and_author_box_page() -> bytes:
    """A post and, under it, the box about its writer that every post of the
    writer repeats, in prose as long as the post's (backenmachtgluecklich.de,
    wired.com, cicero.de on trafilatura's evaluation pages)."""
    post = (
        "The lemon cake stays moist for days when you brush it with the syrup while it is"
        " still warm, and the glaze sets in about an hour on the kitchen table. "
    )
    bio = (
        "Hello, I am a food blogger from Hamburg and I have been baking for my family and"
        " my friends since I was a child, and here I share the recipes that worked. "
    )
    return (
        "<html><body><article class='post'><h1>Lemon cake</h1>"
        f"<p>{post * 2}</p><p>{post * 2}</p>"
        f"<section class='site-author-box'><h3>About me</h3><p>{bio * 3}</p></section>"
        "</article></body></html>"
    ).encode()


@pytest.mark.parametrize(
    ("page", "post_block", "post", "box"),
    [
        (
            _post_and_newsletter_page,
            0,
            "Earlier today, we showcased",
            "Twice a week we will send you",
        ),
        (_post_and_author_box_page, 1, "The lemon cake stays moist", "I am a food blogger"),
    ],
    ids=["newsletter", "author-box"],
)
def test_a_furniture_box_does_not_become_the_article(
    page: Callable[[], bytes], post_block: int, post: str, box: str
) -> None:
    """A newsletter box and a box about the writer, each longer than the post's
    paragraphs: furniture by their names, so not the article."""
    html = page()
    marks = page_marks(html)
    assert marks[post_block] == 0 and marks[-1] & UNLIKELY
    kept = _kept(Preset.ARTICLE, html)
    assert post in kept
    assert box not in kept


# A sign-up box that the post's wrapper holds: furniture by its name, short, and
# followed by the site's links.
_SIGN_UP = "Get the best of our stories every week in your inbox"


def _post_with_a_box_inside(*, wrapped: bool) -> bytes:
    """A post whose `<article>` ends with a newsletter box; `wrapped`: the whole body
    in one `<form>`, as ASP.NET WebForms writes it (every block is then furniture,
    and readability's retry chooses the container with it)."""
    post = "".join(f"<p>{SENTENCE * 2}</p>" for _ in range(3))
    box = f"<div class='newsletter-signup'><p>{_SIGN_UP}</p><input name='email'></div>"
    links = " | ".join(f"<a href='/s{i}'>Section {i}</a>" for i in range(8))
    body = (
        f"<div class='menu'><a href='/'>Home</a></div>"
        f"<article class='post'><h1>The plan</h1>{post}{box}</article><div>{links}</div>"
    )
    if wrapped:
        body = f"<form id='aspnetForm' action='post.aspx'>{body}</form>"
    return f"<html><body>{body}</body></html>".encode()


def test_corpus_does_not_lift_the_furniture_its_container_holds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`furniture_unlifted`: the sign-up box keeps jusText's class (SHORT, then BAD
    beside the site's links) instead of moving up two steps with the post."""
    assert container_options(Preset.CORPUS).furniture_unlifted  # type: ignore[union-attr]
    html = _post_with_a_box_inside(wrapped=False)
    kept = preset_text(html, Preset.CORPUS, monkeypatch)
    assert "The committee said" in kept and _SIGN_UP not in kept
    assert _SIGN_UP in preset_text(html, Preset.CORPUS, monkeypatch, furniture_unlifted=False)
    # a page wrapped in one form: the retry chose the container with the furniture,
    # and its blocks are lifted as before
    wrapped = preset_text(_post_with_a_box_inside(wrapped=True), Preset.CORPUS, monkeypatch)
    assert "The committee said" in wrapped and _SIGN_UP in wrapped


def _post_and_form_page() -> bytes:
    """A news story, and a form after it: a portal's search box whose help reads like
    text (DAnIEL's wnp.pl pages keep their whole sidebar in forms)."""
    story = (
        "The mines of the region produced less coal in December than a year before,"
        " the statistics office said on Monday, because two of them were closed. "
    )
    help_text = (
        "Enter the name of the company or the product that you are looking for, and we"
        " will send you the list of the offers that match it. "
    )
    return (
        "<html><body><div class='page'><h1>Coal output fell in December</h1>"
        f"<p>{story * 2}</p><p>{story * 2}</p></div>"
        f"<form action='/search'><p>{help_text}</p><p>{help_text}</p>"
        "<input name='q'></form><div><a href='/'>Home</a> | <a href='/c'>Contact</a></div>"
        "</body></html>"
    ).encode()


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "python"])
def test_a_form_is_furniture_by_its_tag(compiled: bool) -> None:
    html = _post_and_form_page()
    marks = _marks_by_start(html, compiled)
    assert marks["Enter the na"] & UNLIKELY and not marks["The mines of"] & UNLIKELY
    # `corpus` judges blocks outside the container as jusText does, but demotes
    # furniture a step (furniture_shift): the form's help goes, the story stays
    for preset in (Preset.CORPUS, Preset.ARTICLE):
        kept = _kept(preset, html)
        assert "The mines of the region" in kept, preset
        assert "Enter the name of the company" not in kept, preset


#: A cookie banner's text: prose, with stop words, as long as a paragraph.
_COOKIES = (
    "We use cookies to give you the best experience on our website and to show you"
    " content that is relevant to you. If you continue to use this site we will assume"
    " that you are happy with it, and you can change your settings at any time."
)


def test_a_cookie_banner_is_furniture_in_corpus() -> None:
    """A consent banner at the top of the page (scrapinghub's news pages, EU sites)
    reads as prose, so jusText keeps it, and `corpus` takes all running text; its
    plugin's names make it page furniture, which `corpus` moves a step down (its
    neighbours, a menu, then drop it). `article` leaves it out as outside its
    container either way."""
    preset = Preset.CORPUS
    post = "".join(f"<p>{SENTENCE * 2}</p>" for _ in range(3))

    def page(banner_id: str) -> bytes:
        menu = " | ".join(f"<a href='/s{i}'>Section {i}</a>" for i in range(6))
        return (
            f"<html><body><div id='{banner_id}'><p>{_COOKIES}</p><a href='#'>Accept</a></div>"
            f"<div class='nav'>{menu}</div>"
            f"<article class='post'><h1>The harbour</h1>{post}</article></body></html>"
        ).encode()

    # the same banner under a name that says nothing is kept: the name is the evidence
    assert "We use cookies" in _kept(preset, page("bottom-bar"))
    kept = _kept(preset, page("cookie-law-info-bar"))
    assert "We use cookies" not in kept and SENTENCE.strip()[:40] in kept
