"""The article's standfirst: prose between the page's title and its body."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from container_kept import page_leads, page_marks, page_stated
from hypothesis import given, settings
from hypothesis import strategies as st

from corpus_crawler import ExtractConfig, Preset, elementmarks, extract
from corpus_crawler.config import ConfigError, JustextParams
from corpus_crawler.container import ContainerOptions, preset_passes
from corpus_crawler.elementmarks import LEAD, element_marks, furniture_marks
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


def _passed(html: str, levels: int, named: bool = False) -> str:
    """The `article` preset's passes on the page's seed classes, with the rule at
    `levels`, and with or without the lead elements' names."""
    shipped = container_options(Preset.ARTICLE)
    assert shipped is not None
    options = replace(shipped, standfirst_levels=levels, standfirst_named=named)
    doc = extract(html.encode(), config=ExtractConfig(preset=Preset.SEED, language="en"))
    passed = preset_passes(
        doc.paragraphs,
        JustextParams(),
        options,
        page_marks(html.encode()),
        page_stated(html.encode()),
        page_leads(html.encode()),
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


# ---------------------------------------------------------------- a lead named as one


#: A template that sets its lead far from the title: the <h1> in the header's
#: title row, the lead in a band of its own below it (four levels up), a share bar
#: between it and the story.
def _far(lead: str, body: str = BODY) -> str:
    return (
        '<html><body><div class="page"><div class="top"><div class="row"><div class="cell">'
        "<h1>Money for the bridge</h1></div></div></div>"
        f'<div class="band"><div class="col"><div class="inner">{lead}</div></div>{MENU}</div>'
        f'<div class="main"><div class="story">{body}</div></div></div></body></html>'
    )


@pytest.mark.parametrize(
    "attributes",
    [
        'class="article-lead"',
        'class="c-dek"',
        'class="leadIn"',  # camelCase parts
        'class="field field--name-field-perex"',
        'class="content__standfirst"',
        'itemprop="description"',
    ],
)
def test_a_lead_the_page_names_is_kept_farther_from_the_title(attributes: str) -> None:
    html = _far(f"<p {attributes}>{STANDFIRST}</p>")
    assert STANDFIRST not in _passed(html, 2)  # four levels up: too far by position
    assert STANDFIRST in _passed(html, 2, named=True)
    assert STANDFIRST in _kept(html, Preset.ARTICLE)  # the shipped preset names it


@pytest.mark.parametrize(
    "attributes",
    [
        'class="article-body"',
        'class="leader-board"',  # a word that holds "lead" is another word
        'class="lead-asset-caption"',  # the lead picture's caption
        'class="media__description"',
        'class="printSummary"',  # "summary" is no lead word
    ],
)
def test_names_that_do_not_name_a_lead_let_nothing_in(attributes: str) -> None:
    html = _far(f"<p {attributes}>{STANDFIRST}</p>")
    assert STANDFIRST not in _passed(html, 2, named=True)


def test_a_name_over_several_elements_names_teasers() -> None:
    """An article has one standfirst; three "lead" elements are teasers of three stories."""
    teasers = "".join(
        f'<div class="teaser"><p class="lead">{STANDFIRST.replace("bridge", w)}</p></div>'
        for w in ("school", "library", "harbour")
    )
    html = _far(teasers)
    text = _passed(html, 2, named=True)
    assert "old school" not in text and "old harbour" not in text
    one = _far(f'<div class="teaser"><p class="lead">{STANDFIRST}</p></div>')
    assert STANDFIRST in _passed(one, 2, named=True)


def test_a_lead_element_that_holds_the_title_names_nothing_below_it() -> None:
    """A header named "with-abstract" holds the <h1>: its name says nothing of the
    other blocks in it."""
    html = (
        '<html><body><div class="page"><header class="header--with-abstract">'
        '<div class="a"><div class="b"><h1>Money for the bridge</h1></div></div>'
        f'<div class="c"><div class="d"><div class="e"><p>{BLURB}</p></div></div></div>'
        f'{MENU}</header><div class="story">{BODY}</div></div></body></html>'
    )
    assert BLURB not in _passed(html, 2, named=True)
    assert BLURB in _passed(html, 9)  # only its place leaves it out


def test_a_standfirst_repeated_as_the_first_paragraph_is_said_once() -> None:
    """Some templates print the lead above the story and again as its first paragraph."""
    body = f"<p>{STANDFIRST} {SENTENCE}</p>" + BODY
    near = (
        "<html><body><main><header><h1>Money for the bridge</h1>"
        f"<p>{STANDFIRST}</p>{MENU}</header>"
        f'<div class="story">{body}</div></main></body></html>'
    )
    assert _passed(near, 2).count(STANDFIRST) == 1
    other = near.replace(f"<p>{STANDFIRST}</p>", f"<p>{BLURB}</p>")
    assert BLURB not in _passed(other, 0)
    assert _passed(other, 2).count(BLURB) == 1


@pytest.mark.parametrize("marker", [element_marks, furniture_marks])
def test_lead_marks(marker: object) -> None:
    def marks(class_name: str | None, itemprop: str | None = None) -> int:
        return marker("p", class_name, None, None, None, None, None, itemprop)  # type: ignore[operator]

    assert marks("a-article-header__lead") & LEAD
    assert marks("storyDek") & LEAD
    assert marks(None, "description") & LEAD
    assert marks(None, "name description") & LEAD
    assert not marks("leading") & LEAD
    assert not marks("lead-image") & LEAD
    assert not marks(None, "articleBody") & LEAD
    assert not marks("http://example.com/lead") & LEAD  # a URL as a name names nothing


_LEAD_ALPHABET = "aAdDeEkKlLcC-_ 0é"


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.sampled_from(sorted(elementmarks._LEAD_WORDS)),
            st.sampled_from(["Lead", "Dek", "DEK", "storyDek", "image", "Deck2", "http://x/lead"]),
            st.text(_LEAD_ALPHABET, max_size=6),
        ),
        max_size=5,
    ).map("".join)
)
def test_lead_names_reads_whole_name_parts(names: str) -> None:
    """`_lead_names` skips splitting names that hold no lead word at all; it must
    answer as the rule reads: some class or id value, split at camelCase and at
    characters that are not ASCII letters or digits, has a lead word as a whole part, and
    no picture word is anywhere in the names."""
    values = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "-", names).lower().split()
    parts = [p for v in values if "://" not in v for p in re.split(r"[^a-z0-9]+", v)]
    expected = any(p in elementmarks._LEAD_WORDS for p in parts) and not any(
        w in names.lower() for w in elementmarks._PICTURE_WORDS
    )
    assert elementmarks._lead_names(names) is expected
