"""The `article` preset's region stops below a reader thread that nothing names as
comments (ContainerOptions.region_stops_at_threads, threads.adds_a_thread), in both
container passes."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from container_kept import container_kept, kept_on_and_off

from corpus_crawler.config import ExtractConfig, Preset
from corpus_crawler.extract import extract
from corpus_crawler.model import Paragraph, ParagraphClass
from corpus_crawler.presets import container_options
from corpus_crawler.threads import DATED, adds_a_thread, section_front_item

STORY = (
    "The hospital will open a new ward for children in the spring.",
    "The doctors said that the waiting lists would be shorter.",
    "The nurses asked for more staff on the night shifts.",
    "The building work starts next month on the east side.",
)


def _story(paragraphs: int = len(STORY)) -> str:
    return "".join(
        f"<p>{s} The board met on Monday evening, and its members agreed that the"
        " money would come from the regional budget for the next two years.</p>"
        for s in STORY[:paragraphs]
    )


def _post(n: int, header: str | None = None) -> str:
    """One reader's post: a short header (who, when) and a long body, each at the
    same place in every post."""
    body = (
        f"This is what reader {n} thinks about the new ward, and it is a long opinion"
        " that goes on about the doctors, the nurses and the money that the board has"
        " spent on the building, which the reader finds far too much for what it is."
    )
    return (
        f"<div class='op'><div class='who'>{header or f'reader{n}, 12:{n:02d}'}</div>"
        f"<div class='what'><p>{body}</p></div></div>"
    )


def article_beside_a_thread(paragraphs: int = len(STORY), titled: bool = False) -> bytes:
    """A short story and a long thread of opinions under it, in a section that no
    comment word names (wp.pl calls it "opinie"); `titled`: the same sections with a
    title for a header and no time (an accordion of sections)."""
    posts = "".join(_post(n, f"Part {n} of the plan" if titled else None) for n in range(12))
    return (
        "<html><body><div class='page'>"
        f"<div class='story'><h1>A new ward</h1>{_story(paragraphs)}</div>"
        f"<div class='opinions'><div class='list'>{posts}</div></div>"
        "</div></body></html>"
    ).encode()


def blog_front_page() -> bytes:
    """Posts of one blog, each a wrapper with a title, its paragraphs and a short
    footer: the container is one post, the others repeat its paths."""
    posts = "".join(
        f"<div class='post'><h3>Post {n}</h3><div class='text'>"
        + "".join(
            f"<p>Post {n} says in paragraph {k} that the council, the mayor and the"
            " people of the town should talk about the new road before they vote.</p>"
            for k in range(3 if n else 6)
        )
        + "</div><div class='meta'>Permalink | Comments (3)</div></div>"
        for n in range(8)
    )
    return f"<html><body><div class='blog'>{posts}</div></body></html>".encode()


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "python"])
def test_the_region_does_not_climb_into_a_thread(compiled: bool) -> None:
    """Without the rule the region climbs to the page's wrapper to reach half the
    page's points, and every post beside the short story is lifted with it."""
    html = article_beside_a_thread()
    stopped, climbed = kept_on_and_off(html, "region_stops_at_threads", compiled=compiled)
    assert "The hospital will open a new ward" in stopped
    assert "what reader" not in stopped
    assert "what reader 7 thinks" in climbed


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "python"])
def test_sections_under_titles_are_no_thread(compiled: bool) -> None:
    """The same page with section titles where the posts state who and when: an
    accordion of sections, whose region climbs over them as before."""
    html = article_beside_a_thread(titled=True)
    kept = container_kept(html, compiled=compiled, region_stops_at_threads=True)
    assert kept == container_kept(html, compiled=compiled, region_stops_at_threads=False)
    assert "what reader 7 thinks" in kept


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "python"])
def test_a_thread_beside_no_article_is_the_page(compiled: bool) -> None:
    """A container with less prose than min_container_chars is no article of its own
    (a forum's side box): the region climbs over the thread as before."""
    html = article_beside_a_thread(paragraphs=1)
    kept = container_kept(html, compiled=compiled, region_stops_at_threads=True)
    assert kept == container_kept(html, compiled=compiled, region_stops_at_threads=False)
    assert "what reader 7 thinks" in kept


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "python"])
def test_posts_of_the_container_s_own_kind_are_no_thread(compiled: bool) -> None:
    """A blog's front page repeats the container's paths in every post: the region
    climbs over them as before."""
    html = blog_front_page()
    kept = container_kept(html, compiled=compiled, region_stops_at_threads=True)
    assert kept == container_kept(html, compiled=compiled, region_stops_at_threads=False)
    assert "Post 5 says" in kept


def test_a_thread_is_posts_with_a_header_and_a_body() -> None:
    html = article_beside_a_thread()
    paragraphs = extract(html, config=ExtractConfig(language="en")).paragraphs
    page, story = "/html[1]/body[1]/div[1]", "/html[1]/body[1]/div[1]/div[1]"
    assert adds_a_thread(paragraphs, 0.5, 500, [story], story, page)
    assert not adds_a_thread(paragraphs, 0.5, 1000, [story], story, page)  # too short
    # the posts' bodies without the headers beside them are no thread
    headless = [p for p in paragraphs if not p.text.startswith("reader")]
    assert len(headless) < len(paragraphs)
    assert not adds_a_thread(headless, 0.5, 500, [story], story, page)
    # nor is it one when the container is a post: the others are its own kind
    post = next(p.xpath for p in paragraphs if "what reader 3" in p.text)
    assert not adds_a_thread(paragraphs, 0.5, 200, [post], story, page)


def _block(xpath: str, length: int, text: str | None = None) -> Paragraph:
    tags = ".".join(step.partition("[")[0] for step in xpath.strip("/").split("/"))
    return Paragraph(
        text if text is not None else "x" * length,
        ParagraphClass.GOOD,
        ParagraphClass.GOOD,
        length,
        dom_path=tags,
        xpath=xpath,
    )


def _posts(page: str, headers: Sequence[str]) -> list[Paragraph]:
    """Posts under `page`/div[2], each its own wrapper: a short header with the given
    text and a long body."""
    return [
        block
        for k, header in enumerate(headers, 1)
        for block in (
            _block(f"{page}/div[2]/div[{k}]/span[1]", 20, header),
            _block(f"{page}/div[2]/div[{k}]/p[1]", 400),
        )
    ]


def test_sibling_paragraphs_of_one_wrapper_are_one_post() -> None:
    """The rest of an article in one wrapper, a byline beside it: the same paths as a
    thread's, but under one wrapper, not three."""
    story = "/html[1]/body[1]/div[1]/div[1]"
    page = "/html[1]/body[1]/div[1]"
    lead = [_block(f"{story}/p[{k}]", 300) for k in (1, 2)]
    rest = [_block(f"{page}/div[2]/div[1]/p[{k}]", 400) for k in range(1, 9)]
    byline = [_block(f"{page}/div[2]/div[1]/span[{k}]", 20) for k in range(1, 4)]
    assert not adds_a_thread([*lead, *rest, *byline], 0.5, 500, [story], story, page)
    # the same blocks as posts, each under its own wrapper, are a thread
    posts = _posts(page, [f"Anna, 1{k}:31" for k in range(1, 9)])
    assert adds_a_thread([*lead, *posts], 0.5, 500, [story], story, page)
    # unless the container is one item of a list of them (a section front)
    item = f"{page}/ul[1]/li[2]/div[1]"
    lead_item = [_block(f"{item}/p[{k}]", 300) for k in (1, 2)]
    assert not adds_a_thread([*lead_item, *posts], 0.5, 500, [item], item, page)


@pytest.mark.parametrize(
    ("headers", "thread"),
    [
        ([f"Anna, 1{k}:31" for k in range(8)], True),
        # an accordion's or a how-to's section titles state no time
        ([f"Step {k}: water the seeds" for k in range(8)], False),
        # dated headers in fewer than half the posts are titles that name a year
        ([f"Report 201{k}" if k < 4 else f"Part {k}" for k in range(9)], False),
        ([f"Report 201{k}" if k < 5 else f"Part {k}" for k in range(9)], True),
        # two dated posts are no thread, however few the posts
        (["12.01.12", "13.01.12", "Part 3"], False),
    ],
)
def test_a_post_header_states_a_time(headers: list[str], thread: bool) -> None:
    """The posts' headers state a time or date in more than half of the posts, and in
    at least THREAD_POSTS of them: what a thread's header (who, when) has and an
    accordion's section title lacks (trafilatura's dvgw.de page)."""
    story, page = "/html[1]/body[1]/div[1]/div[1]", "/html[1]/body[1]/div[1]"
    lead = [_block(f"{story}/p[{k}]", 300) for k in (1, 2)]
    posts = _posts(page, headers)
    assert adds_a_thread([*lead, *posts], 0.5, 500, [story], story, page) is thread


@pytest.mark.parametrize(
    ("text", "dated"),
    [
        ("reader7, 12:07", True),
        ("9:49pm January 08, 2008", True),
        ("(22 juin 2018 @11h13)", True),
        ("~zonek [2012-01-24 19:23]", True),
        ("Бармаглот, 12.01.12", True),
        ("24/1/2012", True),
        ("Stufe 1", False),
        ("1 : 5", False),
        ("5.00/ 1", False),
        ("tak 725 88.31%", False),
        ("id: 1705162", False),
        ("Chapter 12", False),
    ],
)
def test_dated(text: str, dated: bool) -> None:
    assert bool(DATED.search(text)) is dated


@pytest.mark.parametrize(
    ("container", "item"),
    [
        ("/html[1]/body[1]/div[1]/ol[1]/li[3]/article[1]/div[1]", True),
        ("/html[1]/body[1]/ul[1]/li[2]/div[1]", True),
        ("/html[1]/body[1]/div[1]/div[2]/div[1]", False),
        # an <li> far above the container is a layout, not an item
        ("/html[1]/body[1]/ul[1]/li[1]/div[1]/div[1]/div[1]/div[1]/div[1]", False),
    ],
)
def test_a_section_front_item(container: str, item: bool) -> None:
    assert section_front_item(container) is item


def test_only_the_article_preset_stops_at_threads() -> None:
    """`article-comments` keeps a thread (a corpus of comments wants the unnamed ones
    too); `corpus` keeps all running text."""
    for preset, expected in (
        (Preset.ARTICLE, True),
        (Preset.ARTICLE_COMMENTS, False),
        (Preset.CORPUS, False),
    ):
        options = container_options(preset)
        assert options is not None and options.region_stops_at_threads is expected
