"""readability's conditional cleaning in the main region (ContainerOptions.clean_region).

The region around the container (container.main_region) lifts the blocks of an article
spread over sibling wrappers; on a news page whose article is short beside the rest of
the page it climbs over the site's list of linked headlines too (DAnIEL-ru 1obl.ru: 85
blocks kept where the article has 7). An element strictly inside the region that
readability's cleaning would drop from its article, and that neither holds the
container nor a block of prose, leaves the region, when the container holds prose.
"""

from __future__ import annotations

import dataclasses

import pytest
from container_kept import pass_text

from corpus_crawler import ExtractConfig, Preset, extract
from corpus_crawler.container import ContainerOptions
from corpus_crawler.model import Paragraph, ParagraphClass
from corpus_crawler.presets import container_options

STORY = (
    "The council voted on Monday to build the new bridge over the river, and the work will"
    " begin in the spring if the money from the region arrives in time, the mayor said. "
)
OTHER = (
    "In an interview the director of the theatre said that the new season would open with"
    " a play that has not been staged in the city for thirty years, and that tickets sell well. "
)
NEWS = "".join(
    f"<div><span>1{i % 10}:{i:02d}</span><p><a href='/n/{i}'>Headline number {i} about"
    " another story in the region today</a></p></div>"
    for i in range(20)
)
PAGE = (
    "<html><body><div id='wrap'><div class='col'>"
    f"<div class='story'><h1>A new bridge</h1><p>{STORY * 2}</p><p>{STORY * 2}</p></div>"
    f"<div class='news'>{NEWS}</div></div>"
    f"<div class='col2'><div class='interview'><p>{OTHER * 2}</p></div>"
    f"<div class='conf'><p>{OTHER}</p></div></div>"
    "</div></body></html>"
).encode()


def _options(**changes: object) -> ContainerOptions:
    """`article` as shipped, with the whole page as the region (the region climbs
    that far on a page whose article is short beside the rest)."""
    shipped = container_options(Preset.ARTICLE)
    assert shipped is not None
    return dataclasses.replace(shipped, region_share=1.0, **changes)  # type: ignore[arg-type]


def _blocks(html: bytes) -> tuple[Paragraph, ...]:
    doc = extract(html, config=ExtractConfig(preset=Preset.SEED, language="en"))
    return doc.paragraphs


def _kept(paragraphs: tuple[Paragraph, ...], options: ContainerOptions, compiled: bool) -> str:
    return pass_text(PAGE, options, compiled=compiled, paragraphs=paragraphs)


def test_the_article_preset_ships_it() -> None:
    article = container_options(Preset.ARTICLE)
    corpus = container_options(Preset.CORPUS)
    assert article is not None and corpus is not None
    assert article.clean_region and not corpus.clean_region


@pytest.mark.parametrize("compiled", [True, False])
def test_linked_headlines_in_the_region_are_cleaned_out(compiled: bool) -> None:
    blocks = _blocks(PAGE)
    before = _kept(blocks, _options(clean_region=False), compiled)
    after = _kept(blocks, _options(clean_region=True), compiled)
    assert before.count("Headline number") == 20  # what the region lifted
    assert after.count("Headline number") == 0
    # the article and the prose elsewhere in the region stay
    assert after.count("The council voted") == before.count("The council voted") == 4
    assert after.count("the director") == before.count("the director") == 3


@pytest.mark.parametrize("compiled", [True, False])
def test_nothing_is_cleaned_when_the_container_holds_no_prose(compiled: bool) -> None:
    """An index page: the container's blocks are teasers, not an article, and the
    links around them are the page's content as much as they are."""
    blocks = tuple(
        dataclasses.replace(p, cf_class=ParagraphClass.SHORT)
        if "The council voted" in p.text
        else p
        for p in _blocks(PAGE)
    )
    assert _kept(blocks, _options(clean_region=True), compiled) == _kept(
        blocks, _options(clean_region=False), compiled
    )


def test_the_shipped_preset_on_the_page() -> None:
    """With the preset's own region share the region stops at the story here: the
    rule changes nothing (it reaches only what the region reaches)."""
    text = extract(PAGE, config=ExtractConfig(preset=Preset.ARTICLE, language="en")).text
    assert "Headline number" not in text
    assert text.count("The council voted") == 4
