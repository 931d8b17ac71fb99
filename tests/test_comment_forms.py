"""A reply form is not a reader's comment (segment.furniture).

WordPress names its reply form's parts for the comments (`p.comment-notes`,
`p.comment-form-author`), and a thread's form sits inside the comment section:
`article-comments` lifted the form's notes and labels with the thread ("Your email
address will not be published", "Name *"). A block in a `<form>` loses its
COMMENTS mark and stays furniture, unless the form holds most of the page: ASP.NET
WebForms posts the whole page back through one `<form>`, and the comments in it
are comments.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import lxml.html
import pytest

from corpus_crawler import ExtractConfig, Preset, extract
from corpus_crawler.elementmarks import ASIDE, COMMENTS, UNLIKELY
from corpus_crawler.segment import furniture, segment

GoldPages = Callable[[str], Iterator[tuple[str, bytes, str, dict[str, object]]]]

SENTENCE = (
    "The committee said that it would meet again in the spring, and that the members were"
    " not yet sure whether the plan could go ahead as it was first written. "
)
REPLIES = (
    "I agree with you, and I think that it is the best plan we have had in years.",
    "Thanks for writing this up, it was more than I had heard about it at the meeting.",
    "We were there too and it was not at all as the paper said it was on the day.",
)
NOTES = (
    "Your email address will not be published. Required fields are marked with a star,"
    " and all of the comments are read by the editors before they are shown on the site."
)
LABELS = ("Name *", "Email *", "Website")


def _page(*, wrapped: bool) -> bytes:
    """A post, its thread and WordPress's reply form inside the comment section;
    `wrapped`: the whole body in one `<form>`, as ASP.NET WebForms writes it (the
    reply fields are then the wrapper's, as they are on such sites)."""
    article = "".join(f"<p>{SENTENCE * 2}</p>" for _ in range(3))
    thread = "".join(
        f'<li class="comment"><div class="comment-author">Reader {i} says:</div>'
        f'<p>{reply}</p><a href="/reply/{i}">Reply</a></li>'
        for i, reply in enumerate(REPLIES)
    )
    fields = "".join(
        f'<p class="comment-form-{name.split()[0].lower()}"><label>{name}</label>'
        f'<input name="{name.split()[0].lower()}"></p>'
        for name in LABELS
    )
    notes = f'<p class="comment-notes">{NOTES}</p>'
    reply_form = notes + fields if wrapped else f'<form id="commentform">{notes}{fields}</form>'
    body = (
        f'<div class="post"><h1>The plan</h1>{article}</div>'
        f'<div id="comments" class="comments-area"><ol class="commentlist">{thread}</ol>'
        f"{reply_form}</div>"
    )
    if wrapped:
        body = f'<form id="aspnetForm" method="post" action="post.aspx">{body}</form>'
    return f"<html><body>{body}</body></html>".encode()


def _marks(html: bytes) -> dict[str, int]:
    """Per block text, its furniture marks; the compiled and Python walks agree."""
    found = []
    for compiled in (True, False):
        segments = segment(lxml.html.fromstring(html), marked=True, stated=False, compiled=compiled)
        found.append({s.text: m for s, m in zip(segments, furniture(segments), strict=True)})
    assert found[0] == found[1]
    return found[0]


def test_the_reply_forms_blocks_are_furniture_and_the_thread_stays_comments() -> None:
    marks = _marks(_page(wrapped=False))
    for reply in REPLIES:
        assert marks[reply] & COMMENTS
    for text in (NOTES, *LABELS):
        assert marks[text] == UNLIKELY | ASIDE, text  # furniture, but no comment
    # the walk's own marks still name them comments: the rule is furniture()'s
    segments = segment(lxml.html.fromstring(_page(wrapped=False)), marked=True, stated=False)
    assert all(s.marks & COMMENTS for s in segments if s.text in (NOTES, *LABELS))


def test_a_form_that_wraps_the_page_keeps_its_comments() -> None:
    marks = _marks(_page(wrapped=True))
    for text in (*REPLIES, NOTES, *LABELS):
        assert marks[text] & COMMENTS, text
    assert not marks[SENTENCE.strip() + " " + SENTENCE.strip()] & COMMENTS


def _kept(preset: Preset, html: bytes) -> str:
    return extract(html, config=ExtractConfig(preset=preset, language="en")).text


def test_article_comments_keeps_the_thread_and_not_the_reply_form() -> None:
    kept = _kept(Preset.ARTICLE_COMMENTS, _page(wrapped=False))
    assert "The committee said" in kept
    assert all(reply in kept for reply in REPLIES)
    assert "Your email address" not in kept
    assert not any(label in kept.splitlines() for label in LABELS)


def test_article_comments_keeps_the_thread_of_a_page_in_a_form() -> None:
    kept = _kept(Preset.ARTICLE_COMMENTS, _page(wrapped=True))
    assert "The committee said" in kept
    assert all(reply in kept for reply in REPLIES)


@pytest.mark.parametrize(
    ("page_id", "form_text"),
    [
        # WSJ's blogs: the reply form's guidelines, in a fieldset in a form in the thread
        ("blogs.wsj.com_brussels_13", "We welcome thoughtful comments from readers"),
        # BBC News: "Have your say" form under the story
        ("bbc.co.uk_news_12", "If you are happy to be contacted by a BBC journalist"),
    ],
)
def test_article_comments_leaves_the_reply_form_of_news_pages_out(
    gold_pages: GoldPages, page_id: str, form_text: str
) -> None:
    """Two bundled CleanPortalEval pages whose reply forms `article-comments` kept
    (the set's `article-comments` F1 0.9151 -> 0.9202, 15 pages up, none down)."""
    html, gold = next((h, g) for i, h, g, _ in gold_pages("cleanportaleval") if i == page_id)
    assert form_text not in gold
    kept = _kept(Preset.ARTICLE_COMMENTS, html)
    assert form_text not in kept
    # the article is still there
    first_line = gold.strip().splitlines()[1]
    assert first_line in kept
