"""Layout wrappers named like asides (corpus_crawler.wrappers).

lanacion.com.ar holds its story in `div.lay-sidebar > div.sidebar__main` beside the
sidebar: the wrapper's name is an aside's, the furniture retry keeps asides out, and
the presets kept the app banner (trafilatura's evaluation pages). A wrapper holds a real
aside inside it and most of the page's good text outside that aside; a sidebar beside
a short post holds its text in its own widgets.
"""

from __future__ import annotations

import dataclasses

import pytest

import corpus_crawler.extractors as extractors
from corpus_crawler import ExtractConfig, Preset, dom, extract
from corpus_crawler.classify import classify_segments
from corpus_crawler.elementmarks import ASIDE, ASIDE_ELEMENT, COMMENTS, UNLIKELY
from corpus_crawler.extractors import visible
from corpus_crawler.language_setup import stoplist_and_params
from corpus_crawler.model import Paragraph, ParagraphClass
from corpus_crawler.segment import segment
from corpus_crawler.wrappers import page_furniture, unwrapped

STORY = (
    "The ruling coalition called the session for Thursday, an hour before the one the"
    " opposition had asked for, and if it gets the quorum it will move on with its own"
    " agenda, which leaves out the single paper ballot that the others wanted to discuss. "
)
BLURB = (
    "Thank you for stopping by! My name is Regan and I live in the north of the state"
    " with my husband, our two boys and a cat who thinks that he runs the house. "
)
BANNER = (
    "<div class='app-banner'><p>Download our app, which is fast and light and brings you"
    " the news of the day as soon as it is written, with a notice for each of the stories"
    " that you follow and a copy of the day's paper that you can read when you are not on"
    " the internet, on the train or on a plane, for as long as you like. It is free for"
    " the first month and costs less than a coffee a week after that, and you can stop"
    " whenever you want to from the settings of the app itself.</p></div>"
)
WIDGETS = (
    "<aside class='sidebar'><div class='widget'><h3>Most read</h3><ul>"
    + "".join(f"<li><a href='/n{i}'>Another story number {i} today</a></li>" for i in range(8))
    + "</ul></div></aside>"
)


#: A paragraph of the story that jusText finds near-good: the container lifts it, and
#: outside the container it falls.
DETAIL = (
    "The opposition said that it would go to the session anyway, and that its members"
    " would ask for the ballot there. "
)


def _wrapped_story() -> bytes:
    lead = "".join(f"<p>{STORY * 2}</p>" for _ in range(2))
    details = "".join(
        f"<p>{DETAIL}</p><div class='share'><a href='/s'>Share</a></div>" for _ in range(3)
    )
    return (
        f"<html><body>{BANNER}<div class='lay-sidebar'><div class='col-main'><h1>Session"
        f" called</h1>{lead}{details}</div>{WIDGETS}</div></body></html>"
    ).encode()


def _short_post_beside_a_sidebar() -> bytes:
    """A short post; the sidebar's text is in its widgets (asides inside it)."""
    return (
        f"<html><body><div class='post'><h1>Jam</h1><p>{BLURB}</p></div>"
        f"<div id='sidebar'><div class='sidebar-about'><p>{STORY * 2}</p></div>"
        "<div class='sidebar-ad'><p>Buy now</p></div></div></body></html>"
    ).encode()


def _furniture(html: bytes, unwrap: bool) -> list[int]:
    """The marks `extract` gives the container pass, as extractors._justext takes them."""
    root = dom.parse_page(html.decode(), scripting=True)
    segments = visible(segment(root, marked=True, stated=False))
    stoplist, params = stoplist_and_params("en", ExtractConfig(language="en"))
    paragraphs = classify_segments(segments, stoplist, params)
    return page_furniture(segments, paragraphs, unwrap)


@pytest.mark.parametrize("preset", [Preset.CORPUS, Preset.ARTICLE, Preset.ARTICLE_COMMENTS])
def test_a_story_in_a_layout_wrapper_named_like_an_aside_is_kept(preset: Preset) -> None:
    text = extract(_wrapped_story(), config=ExtractConfig(language="en", preset=preset)).text
    assert text.count(DETAIL.strip()) == 3


@pytest.mark.parametrize("preset", [Preset.CORPUS, Preset.ARTICLE, Preset.ARTICLE_COMMENTS])
def test_without_the_rule_the_story_was_lost(
    preset: Preset, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = extractors.container_options

    def without(preset: Preset):  # type: ignore[no-untyped-def]
        options = original(preset)
        return None if options is None else dataclasses.replace(options, unwrap_layouts=False)

    monkeypatch.setattr(extractors, "container_options", without)
    config = ExtractConfig(language="en", preset=preset)
    assert DETAIL.strip() not in extract(_wrapped_story(), config=config).text


def test_a_sidebar_beside_a_short_post_stays_furniture() -> None:
    page = _short_post_beside_a_sidebar()
    marks = _furniture(page, unwrap=False)
    assert sum(1 for m in marks if m & ASIDE) == 2  # the widget's text and the ad
    assert _furniture(page, unwrap=True) == marks
    wrapped = _wrapped_story()
    assert _furniture(wrapped, unwrap=True) != _furniture(wrapped, unwrap=False)


def _paragraph(length: int, good: bool = True) -> Paragraph:
    cls = ParagraphClass.GOOD if good else ParagraphClass.BAD
    return Paragraph(text="x" * length, cf_class=cls, final_class=cls, length=length)


def test_the_rule_on_the_chains() -> None:
    wrapper = ("/html/body/div[1]", UNLIKELY | ASIDE)
    inner = ("/html/body/div[1]/aside[1]", UNLIKELY | ASIDE | ASIDE_ELEMENT)
    paragraphs = [_paragraph(600), _paragraph(100), _paragraph(50)]
    marks = [UNLIKELY | ASIDE, UNLIKELY | ASIDE | ASIDE_ELEMENT, 0]
    chains = [(wrapper,), (wrapper, inner), ()]
    # the wrapper's own blocks lose its marks; the aside inside it keeps them
    assert unwrapped(paragraphs, marks, chains) == [0, marks[1], 0]
    # without an aside inside, an aside holding most of the text stays one
    assert unwrapped(paragraphs[:1], marks[:1], chains[:1]) == marks[:1]
    # nor does one holding less than half of the good text
    small = [_paragraph(100), _paragraph(100), _paragraph(500)]
    assert unwrapped(small, marks, chains) == marks
    # an <aside> or <footer> element, or a comment section, is never a wrapper
    tagged = ("/html/body/footer[1]", UNLIKELY | ASIDE | ASIDE_ELEMENT)
    assert unwrapped(paragraphs, marks, [(tagged,), (tagged, inner), ()]) == marks


def test_on_a_page_of_short_paragraphs_the_near_good_prose_is_weighed() -> None:
    """No block reaches length_high: the wrapper's near-good prose is the page's text."""
    wrapper = ("/html/body/div[1]", UNLIKELY | ASIDE)
    inner = ("/html/body/div[1]/aside[1]", UNLIKELY | ASIDE | ASIDE_ELEMENT)
    chains = [(wrapper,), (wrapper,), (wrapper, inner)]
    marks = [UNLIKELY | ASIDE, UNLIKELY | ASIDE, UNLIKELY | ASIDE | ASIDE_ELEMENT]

    def near(length: int) -> Paragraph:
        n = ParagraphClass.NEAR_GOOD
        return Paragraph(text="x" * length, cf_class=n, final_class=n, length=length)

    short = [near(150), near(150), near(100)]
    assert unwrapped(short, marks, chains) == [0, 0, marks[2]]
    # with a good block on the page, the near-good ones weigh nothing
    assert unwrapped([near(150), near(150), _paragraph(250)], marks, chains) == marks


@pytest.mark.parametrize("preset", [Preset.CORPUS, Preset.ARTICLE])
def test_a_tutorial_of_short_paragraphs_in_a_wrapper_is_kept(preset: Preset) -> None:
    """statisticsglobe.com: every paragraph shorter than length_high, between code
    listings, in a `section.for_sidebar` beside the sidebar; the page's only
    other prose is the site's tagline above. Both presets kept nothing of it."""
    step = (
        "In this step we set the size of the text with one more line of the code, and"
        " then we draw the plot again to see what has changed in it."
    )
    steps = "".join(f"<p>{step} ({i})</p><pre>plot(size = {i})</pre>" for i in range(8))
    top = (
        "<div class='top'><ul class='nav'>"
        + "".join(f"<li><a href='/m{i}'>Section {i}</a></li>" for i in range(8))
        + "</ul><p>Statistics and programming tutorials for everyone who works with"
        " data.</p></div>"
    )
    html = (
        f"<html><body>{top}<section class='l-section for_sidebar'><div class='l-col'>"
        f"<h1>Font sizes</h1>{steps}</div>{WIDGETS}</section></body></html>"
    ).encode()
    text = extract(html, config=ExtractConfig(language="en", preset=preset)).text
    assert text.count("we draw the plot again") == 8


COMMENT = (
    "I have waited eleven months for a test that my doctor ordered in the spring, and"
    " nobody at the hospital could tell me when my turn would come or why it takes so"
    " long, so I do not think that the new deal will change much for people like me. "
)


def _story_and_comments_in_a_wrapper() -> bytes:
    """thechronicleherald.ca: the article and a long comment thread, both in a
    column named `sidebar-left`; the comments hold most of the page's text."""
    story = "".join(f"<p>{STORY * 2}</p>" for _ in range(3))
    thread = "".join(
        f"<div class='comment'><p class='author'>Reader {i}</p><p>{COMMENT * 3}</p></div>"
        for i in range(6)
    )
    return (
        "<html><body><div id='center' class='sidebar-left clearfix'><div class='body-content'>"
        f"<h1>Session called</h1>{story}</div><div id='comments'>{thread}</div></div>"
        f"{WIDGETS}</body></html>"
    ).encode()


def test_a_comment_thread_in_the_wrapper_is_not_weighed_against_it() -> None:
    wrapper = ("/html/body/div[1]", UNLIKELY | ASIDE)
    thread = ("/html/body/div[1]/div[2]", UNLIKELY | ASIDE | COMMENTS)
    story, comments = _paragraph(600), _paragraph(1500)
    marks = [UNLIKELY | ASIDE, UNLIKELY | ASIDE | COMMENTS]
    assert unwrapped([story, comments], marks, [(wrapper,), (wrapper, thread)]) == [0, marks[1]]
    # a thread elsewhere on the page is not weighed either; a sidebar's widgets are
    widget = ("/html/body/div[1]/div[2]", UNLIKELY | ASIDE)
    assert unwrapped(
        [story, _paragraph(1500)], [marks[0], UNLIKELY | ASIDE], [(wrapper,), (wrapper, widget)]
    ) == [marks[0], UNLIKELY | ASIDE]


@pytest.mark.parametrize("preset", [Preset.ARTICLE, Preset.CORPUS, Preset.ARTICLE_COMMENTS])
def test_a_story_beside_a_longer_comment_thread_in_a_wrapper_is_kept(preset: Preset) -> None:
    doc = extract(
        _story_and_comments_in_a_wrapper(), config=ExtractConfig(language="en", preset=preset)
    )
    assert doc.text.count(STORY.strip()) == 6, doc.drop_detail
    if preset is Preset.ARTICLE:
        assert COMMENT.strip() not in doc.text


def test_page_furniture_needs_one_paragraph_per_block() -> None:
    with pytest.raises(ValueError, match="1 paragraphs for 0 blocks"):
        page_furniture([], [_paragraph(10)], unwrap=True)
