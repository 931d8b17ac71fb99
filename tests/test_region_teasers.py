"""The `article` preset's region stops below a portal's lists of teasers
(ContainerOptions.region_stops_at_teasers, teasers.teaser_blocks), in both
container passes."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from container_kept import container_kept, kept_on_and_off

from corpus_crawler.config import ExtractConfig, Preset
from corpus_crawler.extract import extract
from corpus_crawler.model import Paragraph
from corpus_crawler.presets import container_options
from corpus_crawler.teasers import described_terms, repeated_items, teaser_blocks

STORY = (
    "The schools will open an hour later from September.",
    "Parents had asked for the change for several years.",
    "The teachers said that the pupils would sleep longer.",
    "The buses will run on the new timetable as well.",
)


def _teaser(n: int, paragraphs: int = 1) -> str:
    summary = "".join(
        f"<p>This is the summary of story {n}, and it tells the reader what happened"
        f" in the town hall when the mayor spoke to the council, part {k}.</p>"
        for k in range(paragraphs)
    )
    return f'<li><h3><a href="/story/{n}">Story {n} of the day</a></h3>{summary}</li>'


def article_beside_teasers() -> bytes:
    """A news page: the story, and beside it more summary text than the story holds,
    in a list of other stories under linked headlines (rus.ruvr.ru's shape)."""
    story = "".join(
        f"<p>{s} The council met on Monday evening, and the members agreed that the"
        " new rules would take effect at the start of the next school year.</p>"
        for s in STORY
    )
    teasers = "".join(_teaser(n) for n in range(10))
    return (
        "<html><body><div class='page'>"
        f"<div class='story'><h1>Schools open later</h1>{story}</div>"
        f"<div class='more'><ul>{teasers}</ul></div></div></body></html>"
    ).encode()


def section_front() -> bytes:
    """A page that is its teasers: the container is one of them (nytimes-5's shape)."""
    teasers = "".join(_teaser(n, 3 if n == 2 else 1) for n in range(8))
    return f"<html><body><section><ol>{teasers}</ol></section></body></html>".encode()


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "python"])
def test_the_region_does_not_climb_over_teasers(compiled: bool) -> None:
    """Without the rule the region climbs to the page's wrapper to reach half the
    page's points, and every summary beside the story is lifted with it."""
    html = article_beside_teasers()
    stopped, climbed = kept_on_and_off(html, "region_stops_at_teasers", compiled=compiled)
    assert "The schools will open an hour later" in stopped
    assert "summary of story" not in stopped
    assert "summary of story 5" in climbed


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "python"])
def test_a_section_front_keeps_its_teasers(compiled: bool) -> None:
    """The container lies in a linked list item: the page is a list of teasers, and
    its region grows over them as before (Mozilla's gold for nytimes-5 is the list)."""
    html = section_front()
    kept = container_kept(html, compiled=compiled, region_stops_at_teasers=True)
    assert kept == container_kept(html, compiled=compiled, region_stops_at_teasers=False)
    assert "summary of story 5" in kept and "summary of story 2, " in kept


def test_teasers_are_list_items_under_a_linked_headline() -> None:
    steps = "".join(
        f"<li><p>Step {n}: fold the paper in half, and then press the edge down firmly"
        " with the back of a spoon until it stays flat.</p></li>"
        for n in range(4)
    )
    html = f"<html><body><ol>{steps}</ol><ul>{_teaser(1)}</ul></body></html>".encode()
    paragraphs = extract(html, config=ExtractConfig(language="en")).paragraphs
    teaser, linked = teaser_blocks(paragraphs, 0.5)
    by_text = {p.text[:7]: t for p, t in zip(paragraphs, teaser, strict=True)}
    assert by_text["Step 0:"] is False  # a how-to's steps have no linked headline
    assert by_text["This is"] is True
    assert by_text["Story 1"] is False  # the headline itself is the link, not a teaser
    assert linked == {"/html[1]/body[1]/ul[1]/li[1]"}


@pytest.mark.parametrize(
    "field", ["region_stops_at_teasers", "repeated_teasers", "described_teasers"]
)
def test_the_article_presets_stop_at_teasers_and_corpus_does_not(field: str) -> None:
    for preset, expected in (
        (Preset.ARTICLE, True),
        (Preset.ARTICLE_COMMENTS, True),
        (Preset.CORPUS, False),
    ):
        options = container_options(preset)
        assert options is not None and getattr(options, field) is expected


# ------------------------------------------------------- teasers of a repeated template


def _div_teaser(n: int) -> str:
    """ria.ru's item: the linked headline two levels down, a date, the summary."""
    return (
        f"<div class='list_item'><div class='text'><h3><a href='/story/{n}'>Story {n} of the"
        f" day</a></h3><div class='date'>16:3{n % 10}</div><div class='announce'>This is the"
        f" summary of story {n}, and it tells the reader what happened in the town hall"
        " when the mayor spoke to the council.</div></div></div>"
    )


def _beside(more: str, copies: int = 1) -> bytes:
    """The story (its four paragraphs `copies` times), and beside it `more`."""
    story = "".join(
        f"<p>{s} The council met on Monday evening, and the members agreed that the"
        " new rules would take effect at the start of the next school year.</p>"
        for s in STORY * copies
    )
    return (
        "<html><body><div class='page'>"
        f"<div class='story'><h1>Schools open later</h1>{story}</div>"
        f"<div class='more'>{more}</div></div></body></html>"
    ).encode()


def article_beside_div_teasers(items: int = 10) -> bytes:
    """`article_beside_teasers` with the list written as <div>s."""
    return _beside("".join(_div_teaser(n) for n in range(items)))


def article_beside_described_teasers() -> bytes:
    """cbc.ca's shape: the other stories as a <dl>, each headline a linked term and
    its summary the description (the story longer than the list: the container)."""
    terms = "".join(
        f"<dt><a href='/story/{n}'>Story {n} of the day</a></dt><dd>This is the summary of"
        f" story {n}, and it tells the reader what happened in the town hall when the"
        " mayor spoke to the council.</dd>"
        for n in range(10)
    )
    return _beside(f"<div class='list'><dl>{terms}</dl></div>", copies=2)


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "python"])
@pytest.mark.parametrize(
    ("page", "field"),
    [
        (article_beside_div_teasers, "repeated_teasers"),
        (article_beside_described_teasers, "described_teasers"),
    ],
    ids=["repeated", "described"],
)
def test_the_region_does_not_climb_over_teasers_outside_list_items(
    page: Callable[[], bytes], field: str, compiled: bool
) -> None:
    html = page()
    # the description list's blocks score as readability's paragraphs would, so that
    # they pull the region up (description_lists_score_nothing, which `article` also
    # ships, keeps them from scoring at all: test_description_list_points.py)
    on = {"region_stops_at_teasers": True, "description_lists_score_nothing": False}
    climbed = container_kept(html, compiled=compiled, **on, **{field: False})
    stopped = container_kept(html, compiled=compiled, **on, **{field: True})
    assert "summary of story 5" in climbed  # no <li>: the region climbed over them
    assert "summary of story" not in stopped
    assert "The schools will open an hour later" in stopped


def _blocks(html: bytes) -> tuple[Paragraph, ...]:
    return extract(html, config=ExtractConfig(language="en")).paragraphs


def test_repeated_items_are_siblings_with_a_linked_heading_in_one_place() -> None:
    items = repeated_items(_blocks(article_beside_div_teasers()), 0.5)
    assert items == {f"/html[1]/body[1]/div[1]/div[2]/div[{n}]" for n in range(1, 11)}
    # three make a list; a pair does not
    assert len(repeated_items(_blocks(article_beside_div_teasers(3)), 0.5)) == 3
    assert not repeated_items(_blocks(article_beside_div_teasers(2)), 0.5)


def test_a_breadcrumb_above_a_short_article_is_no_template() -> None:
    """iatronet.gr: a linked <h2> (the breadcrumb) above an article of one paragraph,
    which a rule by size alone took for a teaser."""
    html = (
        b"<html><body><div class='main'><h2><a href='/'>Home</a> <a href='/news'>News</a>"
        b"</h2><p>The company announced on Monday that it would open a new plant in the"
        b" north of the country next year, with two hundred jobs.</p></div></body></html>"
    )
    teaser, linked = teaser_blocks(_blocks(html), 0.5, repeated=True)
    assert not any(teaser) and not linked


def test_a_description_of_a_linked_term_is_a_teaser() -> None:
    flags, lists = described_terms(_blocks(article_beside_described_teasers()), 0.5)
    assert sum(flags) == 10
    assert lists == {"/html[1]/body[1]/div[1]/div[2]/div[1]/dl[1]"}
    # a glossary: terms that are no links describe no other page
    glossary = (
        b"<html><body><dl><dt>Quorum</dt><dd>The smallest number of members who must be"
        b" present for the council to make a decision that counts.</dd></dl></body></html>"
    )
    flags, lists = described_terms(_blocks(glossary), 0.5)
    assert not any(flags) and not lists
