"""Issue 13, article6: what a page's elements state about themselves, as readability-lxml
reads it. An element with `itemprop="articleBody"` is the article (elementmarks.BODY,
ContainerOptions.article_body); an element inside the article whose class and id weigh
under zero by readability's class weight is not (elementmarks.NEGATIVE,
ContainerOptions.clean_negative_names). Both are on in the `article` preset only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from container_kept import container_kept, page_stated

from corpus_crawler import ExtractConfig, Preset, dom, extract
from corpus_crawler import container as container_module
from corpus_crawler.config import ConfigError
from corpus_crawler.container import ContainerOptions, compiled_container_pass
from corpus_crawler.decode import decode_html
from corpus_crawler.elementmarks import (
    BODY,
    NEGATIVE,
    STATED,
    UNLIKELY,
    WEIGHED_TAGS,
    element_marks,
)
from corpus_crawler.presets import container_options
from corpus_crawler.segment import segment, stated_elements

GoldPages = Callable[[str], Iterator[tuple[str, bytes, str, dict[str, object]]]]

STORY = (
    "The council met on Tuesday night and voted to keep the old bridge open to cyclists"
    " while the new one is built. "
)
SLIDE = (
    "In the first picture, taken from the north bank in 1952, the bridge is still painted"
    " green, with the mill, the church, the school and the station behind it, and the"
    " river, which had flooded that spring, is high. "
)
SECOND = (
    "In the second picture, taken from the south bank in 1960, the bridge is painted"
    " red, with the new school, the shops, the bus station and the houses behind it,"
    " and the river, which was low that summer, is calm. "
)


def _marks(tag: str = "div", class_: str | None = None, **attributes: str) -> int:
    names = ("id", "role", "hidden", "aria-hidden", "style", "itemprop")
    return element_marks(tag, class_, *(attributes.get(n.replace("-", "_")) for n in names))


def test_class_and_id_weigh_as_readability_weighs_them() -> None:
    assert _marks(class_="promo_holder clearfix") & NEGATIVE
    assert _marks(class_="byline-meta") & NEGATIVE
    # "entry" names content: entry-meta weighs zero
    assert not _marks(class_="entry-meta") & NEGATIVE
    assert _marks(id="share-box") & NEGATIVE
    # a name matching both patterns weighs zero: "post-meta" (post +25, meta -25)
    assert not _marks(class_="post-meta") & NEGATIVE
    # class and id are weighed each on its own and added: -25 + 25
    assert not _marks(class_="widget", id="story") & NEGATIVE
    assert _marks(class_="widget", id="slot") & NEGATIVE
    assert not _marks(class_="gallery") & NEGATIVE
    # readability's "hid" is a whole class name
    assert _marks(class_="box hid") & NEGATIVE
    assert not _marks(class_="hidef-video") & NEGATIVE
    # only the elements readability cleans are weighed: the page itself, links
    # and inline elements are not
    assert not _marks("body", class_="promo") & NEGATIVE
    assert not _marks("a", class_="share") & NEGATIVE
    assert not _marks("span", class_="promo") & NEGATIVE
    assert _marks("section", class_="promo") & NEGATIVE
    assert WEIGHED_TAGS == container_module._CLEANED_TAGS
    # NEGATIVE is not UNLIKELY: readability weighs these, it does not remove them
    assert not _marks(class_="byline-meta") & UNLIKELY


def test_articlebody_is_read_from_itemprop_as_schema_org_spells_it() -> None:
    assert _marks(itemprop="articleBody") == BODY
    assert _marks(itemprop="text articleBody") & BODY
    assert not _marks(itemprop="articlebody") & BODY
    assert not _marks(itemprop="articleBodyText") & BODY
    assert not _marks(itemprop="headline") & BODY


PAGE = (
    "<html><body><div class='wrap'>"
    "<div itemprop='articleBody' class='story'>"
    "<p>Lead.</p><div class='promo_holder'><ul><li>slide one</li></ul>"
    "<br>after a break</div></div>"
    "<div class='share'><p>tail</p></div></div></body></html>"
)


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "python"])
def test_blocks_list_the_elements_above_them_that_state_a_mark(compiled: bool) -> None:
    root = dom.preprocess_seed(dom.parse(PAGE))
    blocks = {b.text: b.stated for b in segment(root, compiled=compiled, marked=True)}
    body = ("/html[1]/body[1]/div[1]/div[1]", BODY)
    promo = ("/html[1]/body[1]/div[1]/div[1]/div[1]", NEGATIVE)
    share = ("/html[1]/body[1]/div[1]/div[2]", NEGATIVE)
    assert blocks == {
        "Lead.": (body,),
        # outermost first
        "slide one": (body, promo),
        # a block begun at a BR keeps the BR's
        "after a break": (body, promo),
        "tail": (share,),
    }
    assert stated_elements(segment(root, compiled=compiled, marked=True)) == dict(
        [body, promo, share]
    )
    # without `marked` nothing is read
    assert all(b.stated == () for b in segment(root, compiled=compiled))


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "python"])
def test_a_walk_without_stated_marks_weighs_no_names(compiled: bool) -> None:
    """`corpus` reads no stated mark: its walk skips them (and the class weights)
    and gives the same blocks with the same hidden and furniture marks."""
    root = dom.preprocess_seed(dom.parse(PAGE))
    full = segment(root, compiled=compiled, marked=True)
    plain = segment(root, compiled=compiled, marked=True, stated=False)
    assert [b.stated for b in plain] == [()] * len(plain)
    assert [b.marks for b in plain] == [b.marks & ~STATED for b in full]
    assert [b._replace(marks=0, stated=()) for b in plain] == [
        b._replace(marks=0, stated=()) for b in full
    ]
    assert any(b.stated for b in full)


def test_each_preset_walks_with_the_marks_it_reads() -> None:
    article = container_options(Preset.ARTICLE)
    corpus = container_options(Preset.CORPUS)
    assert article is not None and article.uses_stated
    assert corpus is not None and not corpus.uses_stated


@pytest.mark.parametrize("gold_set", ["readability", "cleanportaleval"])
def test_both_walkers_state_the_same_elements_on_gold_pages(
    gold_pages: GoldPages, gold_set: str
) -> None:
    differing = []
    bodies = negatives = 0
    for page_id, html, _gold, _record in gold_pages(gold_set):
        root = dom.parse(decode_html(html).text)
        if root is None:
            continue
        root = dom.preprocess_seed(root)
        fast = stated_elements(segment(root, compiled=True, marked=True))
        if fast != stated_elements(segment(root, compiled=False, marked=True)):
            differing.append(page_id)
        assert all(0 < marks <= STATED for marks in fast.values())
        bodies += any(marks & BODY for marks in fast.values())
        negatives += sum(1 for marks in fast.values() if marks & NEGATIVE)
    assert differing == []
    assert negatives > 0
    if gold_set == "readability":
        # 19 of its pages are schema.org articles
        assert bodies >= 10


def _slideshow_page(promo_class: str = "promo_holder") -> bytes:
    """A short story whose body holds a slideshow of long captions (HuffPost,
    2012): the slides' list outscores the story's paragraphs."""
    story = "".join(f"<p>{STORY * 2}</p>" for _ in range(3))
    slides = "".join(f"<li><h4>Slide {i}</h4><p>{SLIDE * 2}</p></li>" for i in range(8))
    return (
        "<html><body><h1>The old bridge stays open</h1>"
        f'<div class="articleBody" itemprop="articleBody">{story}'
        f'<div class="{promo_class}"><ul class="slides">{slides}</ul></div></div>'
        "</body></html>"
    ).encode()


def test_the_stated_article_body_is_the_container() -> None:
    html = _slideshow_page(promo_class="slideshow")
    assert any(marks & BODY for marks in page_stated(html).values())
    with_rule = container_kept(html, compiled=False, article_body=True)
    without = container_kept(html, compiled=False)
    assert "The council met" in with_rule
    assert "The council met" not in without
    assert "In the first picture" in without


def test_a_negatively_named_element_in_the_article_is_cleaned_out() -> None:
    html = _slideshow_page()
    cleaned = container_kept(html, compiled=False, article_body=True, clean_negative_names=True)
    assert "The council met" in cleaned
    assert "In the first picture" not in cleaned
    # the body alone holds the slides; a neutral name is not cleaned
    assert "In the first picture" in container_kept(html, compiled=False, article_body=True)
    neutral = _slideshow_page(promo_class="slideshow")
    kept = container_kept(neutral, compiled=False, article_body=True, clean_negative_names=True)
    assert "In the first picture" in kept


def test_paragraphs_scoring_a_negatively_named_element_back_up_keep_it() -> None:
    """readability-lxml keeps a weighed-down element inside its article when the
    element's own paragraphs score it past its weight (counted twice: 50 points): a
    theme's "meta-box" holding five paragraphs of the story stays, one holding a
    line goes."""
    own = "".join(f"<p>{SLIDE * 2}</p>" for _ in range(6))
    boxed = "".join(f"<p>{SECOND * 2}</p>" for _ in range(5))
    html = (
        f"<html><body><div class='page'><h1>A title</h1>{own}"
        f"<div class='meta-box'>{boxed}</div>"
        f"<div class='meta-box'><p>{STORY * 2}</p></div></div></body></html>"
    ).encode()
    assert sum(1 for marks in page_stated(html).values() if marks & NEGATIVE) == 2
    kept = container_kept(html, compiled=False, clean_negative_names=True)
    assert "In the first picture" in kept and "In the second picture" in kept
    assert "The council met" not in kept
    without = container_kept(html, compiled=False)
    assert "In the second picture" in without and "The council met" in without


def test_a_div_of_phrasing_content_is_a_paragraph_and_is_not_cleaned() -> None:
    """readability turns a <div> with no block inside it into a <p> before it cleans:
    a figure's caption in a "media-caption" div is the article's, a "media-box" div
    holding a paragraph is a wrapper and goes."""
    story = "".join(f"<p>{SLIDE * 2}</p>" for _ in range(4))
    html = (
        f"<html><body><div class='story'><h1>A title</h1>{story}"
        f"<div class='media-caption'>The bridge in <a href='/1952'>1952</a>, from the"
        " north bank, before the mill burnt down.</div>"
        f"<div class='media-box'><p>{STORY * 2}</p></div></div></body></html>"
    ).encode()
    assert sum(1 for marks in page_stated(html).values() if marks & NEGATIVE) == 2
    kept = container_kept(html, compiled=False, clean_negative_names=True)
    assert "before the mill burnt down" in kept
    assert "The council met" not in kept
    assert "The council met" in container_kept(html, compiled=False)


def test_the_article_preset_reads_both_and_the_corpus_preset_neither() -> None:
    article = container_options(Preset.ARTICLE)
    corpus = container_options(Preset.CORPUS)
    assert article is not None and article.article_body and article.clean_negative_names
    assert corpus is not None and not corpus.article_body and not corpus.clean_negative_names
    # the compiled pass knows them: the article preset runs compiled
    assert compiled_container_pass(article)
    html = _slideshow_page()
    kept = extract(html, config=ExtractConfig(preset=Preset.ARTICLE, language="en")).text
    assert "The council met" in kept
    assert "In the first picture" not in kept
    # a corpus keeps running text wherever it is
    corpus_text = extract(html, config=ExtractConfig(preset=Preset.CORPUS, language="en")).text
    assert "In the first picture" in corpus_text


def test_the_new_options_are_checked_and_clean_on_their_own() -> None:
    with pytest.raises(ConfigError, match="article_body must be true or false"):
        ContainerOptions(article_body="yes")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="clean_negative_names must be true or false"):
        ContainerOptions(clean_negative_names=1)  # type: ignore[arg-type]
    # the cleaning by name does not need readability's link-density cleaning
    html = _slideshow_page()
    kept = container_kept(
        html,
        compiled=False,
        article_body=True,
        clean_negative_names=True,
        clean_conditionally=False,
    )
    assert "The council met" in kept and "In the first picture" not in kept
