"""An article inside a wrapper named like an aside (elementmarks.ARTICLE).

WordPress themes name the column that holds the post and the sidebar beside it
for the layout ("container penci_sidebar"). The name ends in "sidebar", so the
wrapper is an aside, and the furniture retry, which keeps asides out, kept the
whole post out with it: on the theme's pages the presets kept only the cookie
notice (scrapinghub's article-extraction-benchmark, two pages of 181). An
`<article>` or `<main>` ends the aside above it; a comment section, and an
`<aside>` or `<footer>` element, are not ended by the articles inside them.
"""

from __future__ import annotations

import pytest
from container_kept import container_kept

from corpus_crawler import ExtractConfig, Preset, dom, extract
from corpus_crawler.elementmarks import ARTICLE, ASIDE, COMMENTS, UNLIKELY
from corpus_crawler.segment import segment

POST = (
    "Is there anything better than a piece of toast topped with a jam that you made"
    " yourself? This year I cooked the pears of our old tree with honey and spices, and"
    " the jars went to our friends and neighbours as gifts for the holidays. "
)
REPLY = (
    "I made this jam today and it turned out really good, but it was runnier than"
    " I expected after the jars had cooled down for the whole of the night. "
)
ABOUT = (
    "Thank you for stopping by! My name is Regan and I live in the north of the state"
    " with my husband, our two boys and a cat who thinks that he runs the house. "
)
TEASER = "Ten gifts from the kitchen that cost less than five dollars each"


def _theme_page() -> bytes:
    """The theme's shape: the layout wrapper holds the post (with its comments) and
    the sidebar (an `<aside>` with teaser articles); the cookie notice is outside it."""
    body = "".join(f"<p>{POST}</p>" for _ in range(4))
    replies = "".join(
        f'<li class="comment"><article class="comment-body"><p>{REPLY}</p></article></li>'
        for _ in range(2)
    )
    teasers = "".join(f'<article><h4><a href="/t{n}">{TEASER}</a></h4></article>' for n in range(3))
    return (
        '<html><body><div class="container container-single penci_sidebar">'
        '<div id="main"><div class="theiaStickySidebar">'
        '<article class="post type-post hentry"><h1>Spiced Honey Pear Jam</h1>'
        f'<div class="post-entry">{body}</div>'
        f'<div class="post-comments" id="comments"><ol class="commentlist">{replies}</ol></div>'
        "</article></div></div>"
        f'<aside id="sidebar" class="penci-sidebar-right"><p>{ABOUT}</p>{teasers}</aside>'
        "</div>"
        # the theme's notice, under a name that is no furniture (a cookie plugin's
        # name would make it furniture: elementmarks' cookie words)
        "<div class='site-notice'><p>This website uses cookies to improve your experience."
        " We'll assume you're ok with this, but you can opt out if you wish.</p></div>"
        "</body></html>"
    ).encode()


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "python"])
def test_the_article_ends_the_layout_aside_and_not_the_comments_or_the_sidebar(
    compiled: bool,
) -> None:
    root = dom.preprocess_seed(dom.parse(_theme_page().decode()))
    marks = {b.text[:20]: b.marks for b in segment(root, compiled=compiled, marked=True)}
    aside_bits = ASIDE | COMMENTS
    # the post: in furniture (the wrapper's name), but no aside
    assert marks["Spiced Honey Pear Ja"] & (UNLIKELY | ARTICLE | aside_bits) == UNLIKELY | ARTICLE
    assert marks[POST[:20]] & (UNLIKELY | aside_bits) == UNLIKELY
    # its comments, and the sidebar's teasers, are still asides
    assert marks[REPLY[:20]] & aside_bits == aside_bits
    assert marks[TEASER[:20]] & ASIDE and marks[ABOUT[:20]] & ASIDE
    assert marks["This website uses co"] & (UNLIKELY | ASIDE) == 0


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "python"])
def test_the_furniture_retry_finds_the_post_in_the_layout_wrapper(compiled: bool) -> None:
    """Chosen without the furniture, the container is the cookie notice; the retry
    keeps the asides out and now finds the post, and still not its comments."""
    kept = container_kept(_theme_page(), compiled=compiled)
    assert POST[:40] in kept
    assert REPLY[:40] not in kept and ABOUT[:40] not in kept


@pytest.mark.parametrize("preset", [Preset.ARTICLE, Preset.CORPUS, Preset.ARTICLE_COMMENTS])
def test_the_presets_keep_the_post_in_the_layout_wrapper(preset: Preset) -> None:
    text = extract(_theme_page(), config=ExtractConfig(preset=preset, language="en")).text
    assert POST[:40] in text
    assert "This website uses cookies" not in text
    if preset is Preset.ARTICLE:
        assert REPLY[:40] not in text and ABOUT[:40] not in text
