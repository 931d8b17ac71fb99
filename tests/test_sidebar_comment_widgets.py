"""A comment section inside a sidebar is a widget, not this page's thread
(wrappers.sidebar_widgets, read by every preset through wrappers.page_furniture):
a "recent comments" box quotes other pages' threads. Its blocks stay furniture but
lose the COMMENTS mark, so `article-comments` does not lift them with the thread.
A sidebar that is a layout wrapper around the post and its thread, a sidebar that an
`<article>` ends, and a column inside the comment section itself are no such sidebar.

Each page test also runs with the rule taken out, to show the page needs it.
"""

from __future__ import annotations

import pytest

from corpus_crawler import ExtractConfig, Preset, dom, extract, wrappers
from corpus_crawler.elementmarks import ASIDE, COMMENTS, SIDEBAR, UNLIKELY
from corpus_crawler.segment import furniture, segment

POST = (
    "The committee said that it would meet again in the spring, and that the members were"
    " not yet sure whether the plan could go ahead as it was first written. "
)
REPLY = (
    "I was at the meeting and I think that they were right to wait, because the old plan"
    " would have cost the town more than it could pay for the school. "
)
QUOTE = (
    "we have been asking for a new crossing by the school for years and nobody at the"
    " council has ever listened to the parents who"
)


def _thread(replies: int = 4) -> str:
    items = "".join(
        f'<li class="comment"><div class="comment-author">Reader {i}</div><p>{REPLY}</p></li>'
        for i in range(replies)
    )
    return (
        f'<div id="comments"><h3>{replies} comments</h3><ol class="commentlist">{items}</ol></div>'
    )


def _widget() -> str:
    items = "".join(
        f'<li class="recentcomments">Parent {i} on <a href="/post/{i}">The crossing by the'
        f" school</a>: {QUOTE} {i}...</li>"
        for i in range(5)
    )
    return (
        f'<div class="widget"><h3>Recent comments</h3><ul id="recent-comments">{items}</ul></div>'
    )


def _blog(sidebar_names: str = 'id="sidebar"') -> bytes:
    """A post with its thread, and beside it a sidebar with a recent-comments widget."""
    return (
        "<html><body>"
        f'<div id="main"><div class="post"><h1>The plan for the school</h1>'
        f"<p>{POST * 3}</p><p>{POST * 2}</p></div>{_thread()}</div>"
        f"<div {sidebar_names}>{_widget()}</div>"
        "</body></html>"
    ).encode()


def _text(html: bytes, preset: Preset = Preset.ARTICLE_COMMENTS) -> str:
    return extract(html, config=ExtractConfig(preset=preset, language="en")).text


@pytest.fixture
def without_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(wrappers, "sidebar_widgets", lambda segments, marks, found: marks)


def test_the_thread_is_kept_and_the_sidebar_widget_is_not() -> None:
    text = _text(_blog())
    assert "committee said" in text
    assert text.count("I was at the meeting") == 4
    assert "nobody at the council" not in text


def test_without_the_rule_the_widget_is_lifted_as_comments(without_rule: None) -> None:
    text = _text(_blog())
    assert text.count("I was at the meeting") == 4
    assert "nobody at the council" in text


@pytest.mark.parametrize("names", ['class="sidebar-right"', 'id="primary-sidebar"'])
def test_any_name_of_a_sidebar_makes_a_widget(names: str) -> None:
    assert "nobody at the council" not in _text(_blog(names))


def test_the_widget_blocks_stay_furniture_without_the_comment_mark() -> None:
    html = _blog()
    segments = segment(dom.preprocess_seed(dom.parse(html.decode())), marked=True)
    paragraphs = extract(html, config=ExtractConfig(preset=Preset.ARTICLE, language="en"))
    marks = wrappers.page_furniture(segments, paragraphs.paragraphs, True)
    plain = furniture(segments)
    widget = [i for i, s in enumerate(segments) if "nobody at the council" in s.text]
    thread = [i for i, s in enumerate(segments) if "I was at the meeting" in s.text]
    assert widget and thread
    for i in widget:
        assert plain[i] & COMMENTS and segments[i].marks & SIDEBAR
        assert marks[i] == UNLIKELY | ASIDE
    for i in thread:
        assert marks[i] == plain[i] == UNLIKELY | ASIDE | COMMENTS


def _wrapped() -> bytes:
    """thechronicleherald's layout: the post and its thread in a column named
    `sidebar-left`, which also holds the real sidebar."""
    return (
        "<html><body>"
        f'<div id="center" class="sidebar-left">'
        f'<div class="post"><h1>The plan for the school</h1><p>{POST * 3}</p>'
        f"<p>{POST * 2}</p></div>{_thread()}"
        f'<div id="sidebar"><div class="block"><p>Subscribe to the paper today.</p></div></div>'
        "</div></body></html>"
    ).encode()


def test_a_layout_wrapper_named_sidebar_keeps_its_thread() -> None:
    text = _text(_wrapped())
    assert "committee said" in text
    assert text.count("I was at the meeting") == 4


def _ended() -> bytes:
    """A theme's column named after its sidebar (`penci_sidebar`), with the post in an
    `<article>` and its thread inside the article."""
    return (
        "<html><body>"
        f'<div class="container penci_sidebar"><article class="post">'
        f"<h1>The plan for the school</h1><p>{POST * 3}</p><p>{POST * 2}</p>"
        f"{_thread()}</article></div>"
        "</body></html>"
    ).encode()


def _thread_marks(html: bytes) -> list[tuple[int, int]]:
    """Per block of the thread, its walk marks and its furniture marks as the presets
    take them."""
    segments = segment(dom.preprocess_seed(dom.parse(html.decode())), marked=True)
    doc = extract(html, config=ExtractConfig(preset=Preset.ARTICLE, language="en"))
    marks = wrappers.page_furniture(segments, doc.paragraphs, True)
    found = [
        (segments[i].marks, marks[i])
        for i, s in enumerate(segments)
        if "I was at the meeting" in s.text
    ]
    assert found
    return found


def test_an_article_ends_the_sidebar_above_its_thread() -> None:
    assert _text(_ended()).count("I was at the meeting") == 4
    for walk, presets in _thread_marks(_ended()):
        assert not walk & SIDEBAR
        assert presets & COMMENTS


def test_a_column_inside_the_comment_section_is_not_a_sidebar_above_it() -> None:
    html = (
        "<html><body>"
        f'<div class="post"><h1>The plan for the school</h1><p>{POST * 3}</p></div>'
        f'<div id="comments"><div class="thread-sidebar">{_thread()}</div></div>'
        "</body></html>"
    ).encode()
    for walk, presets in _thread_marks(html):
        assert walk & SIDEBAR
        assert presets & COMMENTS
