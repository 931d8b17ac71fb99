"""Comment sections named in other languages than English (elementmarks).

readability's lists name a comment section in English ("comment", "disqus"), and
most templates do; but Polish portals write `div.komentarze`, Spanish and
Portuguese ones `comentarios`, German ones `kommentare`, and a Russian bank news
site `td.coment`. Each is furniture (elementmarks.UNLIKELY) and, as a whole part
of its name, a comment section (ASIDE | COMMENTS), as `comments` is: a thread
longer than the story no longer becomes the container, and `article-comments`
moves it by its comment step.
"""

from __future__ import annotations

import pytest
from container_kept import container_kept

from corpus_crawler import dom
from corpus_crawler.elementmarks import ASIDE, COMMENTS, UNLIKELY
from corpus_crawler.segment import segment

STORY = (
    "The town council met on Monday evening and agreed that the schools would open an"
    " hour later from September, after the parents had asked for it for two years. "
)
REPLY = (
    "I think that the council is wrong about this, and that the plan should have been"
    " put to the vote of all the parents before it was sent to the schools. "
)

#: The names of a comment section in several languages (and the Russian site's
#: misspelling), as whole class or id values.
NAMES = [
    "komentarze",  # Polish
    "kommentare",  # German
    "kommentarer",  # Swedish, Danish, Norwegian
    "komentare",  # Czech, Slovak
    "commentaires",  # French
    "commenti",  # Italian
    "comentarios",  # Spanish, Portuguese
    "comentarii",  # Romanian
    "reacties",  # Dutch
    "yorumlar",  # Turkish
    "coments",  # a misspelling of the English (bankfax.ru)
    "box-komentarze",  # a part of the name, at its end
]


def _page(name: str) -> bytes:
    """A three-paragraph story and a thread of eight replies, longer than it, in an
    element named `name`."""
    story = "".join(f"<p>{STORY}</p>" for _ in range(3))
    replies = "".join(f"<div class='item'><p>{REPLY * 2}</p></div>" for _ in range(8))
    return (
        "<html><body><div class='page'>"
        f"<div class='story'><h1>Schools open later</h1>{story}</div>"
        f"<div class='{name}'>{replies}</div>"
        "</div></body></html>"
    ).encode()


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "python"])
@pytest.mark.parametrize("name", NAMES)
def test_the_name_marks_a_comment_section(name: str, compiled: bool) -> None:
    root = dom.preprocess_seed(dom.parse(_page(name).decode()))
    marks = {b.text[:20]: b.marks for b in segment(root, compiled=compiled, marked=True)}
    assert marks[REPLY[:20]] & (UNLIKELY | ASIDE | COMMENTS) == UNLIKELY | ASIDE | COMMENTS
    assert marks[STORY[:20]] & (UNLIKELY | ASIDE | COMMENTS) == 0


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "python"])
@pytest.mark.parametrize("name", ["komentarze", "comentarios", "coments"])
def test_the_thread_no_longer_outscores_the_story(name: str, compiled: bool) -> None:
    """The thread is longer than the story: by readability's points it is the
    container unless it is known for furniture, as an English name makes it."""
    html = _page(name)
    kept = container_kept(html, compiled=compiled)
    assert STORY[:40] in kept and REPLY[:40] not in kept
    # the same page with the thread under a name that says nothing: the thread is the
    # container (and the story joins it as a sibling scoring a fifth of it)
    unnamed = container_kept(html.replace(name.encode(), b"box"), compiled=compiled)
    assert REPLY[:40] in unnamed


def test_a_word_that_only_begins_with_a_comment_word_is_no_comment_section() -> None:
    """Polish `komentowane` ("most commented": a list of other stories) is furniture
    by readability's substring test, but no comment section: the word is not one of
    the comment words."""
    root = dom.preprocess_seed(dom.parse(_page("komentowane").decode()))
    marks = {b.text[:20]: b.marks for b in segment(root, marked=True)}
    assert marks[REPLY[:20]] & (UNLIKELY | COMMENTS) == UNLIKELY
