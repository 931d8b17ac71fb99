"""The article's standfirst: prose between the page's title and its body."""

from __future__ import annotations

from dataclasses import replace

import pytest
from container_kept import page_marks, page_stated

from corpus_crawler import ExtractConfig, Preset, extract
from corpus_crawler.classify import ConfigError, ContainerOptions, preset_passes
from corpus_crawler.config import JustextParams
from corpus_crawler.model import ParagraphClass
from corpus_crawler.presets import container_options

SENTENCE = (
    "The committee said that it would meet again in the spring, and that the members were"
    " not yet sure whether the plan could go ahead as it was first written. "
)
STANDFIRST = (
    "The town council wants to rebuild the old bridge, but there is not enough money for it yet."
)
BLURB = (
    "This is the blog of a teacher who writes about the books that she reads and about her garden."
)
CAPTION = (
    "The old bridge over the river, which was built in the year of the great flood"
    " and is still used."
)
BODY = "".join(f"<p>{SENTENCE * 2}</p>" for _ in range(4))
MENU = '<ul class="menu"><li><a href="/">Home</a></li><li><a href="/news">News</a></li></ul>'

NEWS = (
    f'<html><body>{MENU}<main><div class="wrap"><div class="intro">'
    "<header><h1>Money for the bridge</h1>"
    f'<p class="standfirst">{STANDFIRST}</p>'
    '<div class="byline">By Anna Berg, 12 May 2024</div>'
    f'<figure><img src="bridge.jpg"><figcaption><p>{CAPTION}</p></figcaption></figure>'
    "</header></div>"
    f'<div class="content"><div class="story">{BODY}</div></div>'
    "</div></main></body></html>"
)


def _kept(html: str, preset: Preset) -> str:
    doc = extract(html.encode(), config=ExtractConfig(preset=preset, language="en"))
    assert doc.drop_reason is None, doc.drop_detail
    return doc.text


def _passed(html: str, levels: int) -> str:
    """The `article` preset's passes on the page's seed classes, with the rule at `levels`."""
    shipped = container_options(Preset.ARTICLE)
    assert shipped is not None
    options = replace(shipped, standfirst_levels=levels)
    doc = extract(html.encode(), config=ExtractConfig(preset=Preset.SEED, language="en"))
    passed = preset_passes(
        doc.paragraphs,
        JustextParams(),
        options,
        page_marks(html.encode()),
        page_stated(html.encode()),
    )
    return " ".join(p.text for p in passed if p.final_class is ParagraphClass.GOOD)


@pytest.mark.parametrize("preset", [Preset.CORPUS, Preset.ARTICLE, Preset.ARTICLE_COMMENTS])
def test_the_standfirst_beside_the_title_is_kept(preset: Preset) -> None:
    text = _kept(NEWS, preset)
    assert STANDFIRST in text
    assert text.count("The committee said") == 8


def test_the_container_alone_leaves_the_standfirst_out() -> None:
    """What the rule adds: the main container holds the story, not its header."""
    assert STANDFIRST not in _passed(NEWS, 0)
    assert STANDFIRST in _passed(NEWS, 2)


def test_a_byline_or_a_caption_beside_the_title_is_no_standfirst() -> None:
    """A byline is no prose; a caption is prose, but the figure's."""
    text = _passed(NEWS, 2)
    assert "By Anna Berg" not in text
    assert CAPTION not in text
    assert "By Anna Berg" not in _kept(NEWS, Preset.ARTICLE)
    assert CAPTION not in _kept(NEWS, Preset.ARTICLE)


def test_a_title_that_links_home_names_the_site() -> None:
    """A blog's <h1> is its name, linked to its home page; its tagline is not the post's."""
    html = (
        f'<html><body><div id="top"><h1><a href="/">Reading and gardens</a></h1>'
        f"<p>{BLURB}</p></div>{MENU}"
        f'<div class="post"><h2>Spring</h2>{BODY}</div></body></html>'
    )
    assert BLURB not in _passed(html, 2)
    assert BLURB not in _kept(html, Preset.ARTICLE)


def test_prose_far_from_the_title_is_not_its_standfirst() -> None:
    """The author's blurb in the column beside the post: between the title and the
    body in the page's order, but its common ancestor with the <h1> is the layout."""
    html = (
        '<html><body><div class="page"><div class="head"><div class="inner">'
        "<h1>Money for the bridge</h1></div></div>"
        '<div class="columns"><div class="left">'
        f'<div class="about"><p>{BLURB}</p></div>{MENU}</div>'
        f'<div class="right"><div class="story">{BODY}</div></div></div></div></body></html>'
    )
    assert BLURB not in _passed(html, 2)
    assert BLURB in _passed(html, 9)  # the limit is what leaves it out


def _beside_the_title(name: str) -> str:
    return (
        '<html><body><div class="page"><div class="top"><div class="title">'
        f'<h1>Money for the bridge</h1></div><div class="{name}"><p>{BLURB}</p>{MENU}</div></div>'
        f'<div class="main"><div class="story">{BODY}</div></div></div></body></html>'
    )


def test_prose_in_a_sidebar_beside_the_title_is_not_kept() -> None:
    assert BLURB in _passed(_beside_the_title("about"), 2)
    assert BLURB not in _passed(_beside_the_title("sidebar"), 2)


@pytest.mark.parametrize("value", [-1, 1.5, True, "2"])
def test_standfirst_levels_is_a_whole_number(value: object) -> None:
    with pytest.raises(ConfigError, match="standfirst_levels"):
        ContainerOptions(standfirst_levels=value)  # type: ignore[arg-type]
