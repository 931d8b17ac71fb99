"""The `article` preset's fourth step (issue 13, article4): two walk options and a
fallback.

- `page_links_only`: an <a> is link text only when it links to a page;
- `drop_hidden_inline`: an inline element a browser hides leaves its block's text;
- `fallback_to_container`: when no block is kept, the container's are;
- `paragraph_levels`: readability's sibling paragraphs one wrapper further up;
- `article_region`: the <article> around the container is its region;
- `linked_paragraphs_inside`: a <p> in the container moves with it whatever its links.

Each is off by default (the `reference`, `seed` and `corpus` presets walk and
classify as before); the tests run the real walkers, both of them, and show each
option changing what is kept.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace

import pytest

from corpus_crawler import ExtractConfig, Preset, dom, extract
from corpus_crawler import segment as segment_module
from corpus_crawler.container import WALK_FIELDS, ContainerOptions
from corpus_crawler.decode import decode_html
from corpus_crawler.elementmarks import links_elsewhere
from corpus_crawler.presets import container_options
from corpus_crawler.segment import segment

GoldPages = Callable[[str], Iterator[tuple[str, bytes, str, dict[str, object]]]]

SENTENCE = (
    "The committee said that it would meet again in the spring, and that the members were"
    " not yet sure whether the plan could go ahead as it was first written. "
)
NEW_FLAGS = ("fallback_to_container", *sorted(WALK_FIELDS))


def _root(html: str) -> object:
    root = dom.parse(decode_html(html.encode(), None).text)
    assert root is not None
    return dom.preprocess_seed(root)


def _article(html: str, **changes: object) -> list[str]:
    """The article preset's kept blocks, with `changes` to its options."""
    shipped = container_options(Preset.ARTICLE)
    assert shipped is not None
    options = replace(shipped, **changes)  # type: ignore[arg-type]
    # extract reads the preset's options from presets.container_options
    original = container_options.__wrapped__  # type: ignore[attr-defined]
    container_options.cache_clear()
    try:
        import corpus_crawler.extractors as extractors_module

        saved = extractors_module.container_options
        extractors_module.container_options = lambda preset: (  # type: ignore[assignment]
            options if preset is Preset.ARTICLE else original(preset)
        )
        try:
            doc = extract(html.encode(), config=ExtractConfig(preset=Preset.ARTICLE, language="en"))
        finally:
            extractors_module.container_options = saved  # type: ignore[assignment]
    finally:
        container_options.cache_clear()
    return [p.text for p in doc.good_paragraphs]


def test_the_new_options_are_off_by_default_and_on_for_article_only() -> None:
    defaults = ContainerOptions()
    corpus = container_options(Preset.CORPUS)
    article = container_options(Preset.ARTICLE)
    assert corpus is not None and article is not None
    for name in NEW_FLAGS:
        assert getattr(defaults, name) is False, name
        # corpus5 cross-validated drop_hidden_inline for corpus (presets.yaml)
        assert getattr(corpus, name) is (name == "drop_hidden_inline"), name
        assert getattr(article, name) is True, name
    assert article.uses_marks


@pytest.mark.parametrize(
    ("href", "expected"),
    [
        ("/page", True),
        ("https://example.org/", True),
        ("#section-2", True),  # another place of the page: still a way out of the text
        ("page.html#top", True),
        (None, False),  # a named anchor
        ("", False),
        ("  ", False),
        ("#", False),
        ("javascript:void(0)", False),
        (" JavaScript:openGallery()", False),
    ],
)
def test_which_hrefs_link_to_a_page(href: str | None, expected: bool) -> None:
    assert links_elsewhere(href) is expected


@pytest.mark.parametrize("compiled", [True, False])
def test_script_links_are_not_link_text_with_page_links_only(compiled: bool) -> None:
    root = _root(
        "<html><body><p>Read <a href='javascript:show()'>the whole story here</a>,"
        " <a>an anchor</a>, <a href='#'>a button</a> and <a href='/x'>a link</a>.</p>"
        "</body></html>"
    )
    jus = segment(root, compiled=compiled)  # type: ignore[arg-type]
    ours = segment(root, compiled=compiled, page_links_only=True)  # type: ignore[arg-type]
    assert [b.text for b in jus] == [b.text for b in ours]
    assert jus[0].link_chars == len("the whole story here") + len("an anchor") + len(
        "a button"
    ) + len("a link")
    assert ours[0].link_chars == len("a link")


@pytest.mark.parametrize("compiled", [True, False])
def test_hidden_inline_elements_leave_their_text_and_keep_their_tail(compiled: bool) -> None:
    root = _root(
        "<html><body><p>The area is <span style='display: none'>{\\pi r^2}</span>"
        "<span>pi r squared</span><noscript>Enable scripts</noscript>, as"
        " <b hidden>secret</b>shown <a href='/m' aria-hidden='true'>skip</a>above.</p>"
        "<p><span>x</span><span>y</span><i>in the second</i></p></body></html>"
    )
    jus = segment(root, compiled=compiled, marked=True)  # type: ignore[arg-type]
    ours = segment(root, compiled=compiled, marked=True, drop_hidden_inline=True)  # type: ignore[arg-type]
    assert "{\\pi r^2}" in jus[0].text and "Enable scripts" in jus[0].text
    assert ours[0].text == "The area is pi r squared, as shown above."
    assert ours[0].link_chars == 0
    # the sibling order of later elements (their xpaths) is the walk's, not the skip's
    assert [b.xpath for b in ours] == [b.xpath for b in jus]
    assert ours[1].text == jus[1].text


def test_hidden_inline_needs_the_marks() -> None:
    root = _root("<html><body><p>text</p></body></html>")
    with pytest.raises(ValueError, match="marked=True"):
        segment(root, drop_hidden_inline=True)  # type: ignore[arg-type]


@pytest.mark.parametrize("gold_set", ["cleanportaleval", "readability"])
def test_compiled_and_python_walkers_agree_with_the_article_walk_options(
    gold_pages: GoldPages, gold_set: str
) -> None:
    assert segment_module._fast is not None, "the compiled walker is not built"
    differing = []
    changed = 0
    for page_id, html, _gold, _record in gold_pages(gold_set):
        root = dom.parse(decode_html(html).text)
        if root is None:
            continue
        root = dom.preprocess_seed(root)
        options = {"marked": True, "page_links_only": True, "drop_hidden_inline": True}
        fast = segment(root, compiled=True, **options)
        if fast != segment(root, compiled=False, **options):
            differing.append(page_id)
        changed += fast != segment(root, compiled=True, marked=True)
    assert differing == []
    assert changed > 0  # the options did something on these pages


def _script_link_page() -> str:
    # readability.js's js-link-replacement fixture, in kind: all text in script links
    return "<html><body><a href='javascript:void(0)'><p>abc</p><p>def</p>ghi</a></body></html>"


def test_a_page_of_script_links_keeps_its_text_with_both_rules() -> None:
    assert _article(_script_link_page()) == ["abc", "def", "ghi"]
    assert _article(_script_link_page(), page_links_only=False) == []
    assert _article(_script_link_page(), fallback_to_container=False) == []


def test_the_fallback_keeps_the_container_when_its_blocks_read_as_no_text() -> None:
    # a product page: specification lines without stop words are BAD to jusText,
    # the container lifts them to NEAR_GOOD only, and the context (no GOOD
    # block anywhere) makes them BAD again
    items = [
        f"Weight {i}.2 kg, colour blue, size XL, model 20{i}4, battery 4000 mAh, screen 6.1 inch"
        for i in range(6)
    ]
    html = (
        "<html><body><div class='product'>"
        + "".join(f"<p>{item}</p>" for item in items)
        + "</div></body></html>"
    )
    assert _article(html) == items
    assert _article(html, fallback_to_container=False) == []


def test_the_fallback_keeps_no_link_list() -> None:
    # a page of nothing but links (an archive page): the right answer is no text
    # (no block scores a container: the fallback would take the whole body)
    links = "".join(f"<p><a href='/{i}'>Month {i} of the archive</a></p>" for i in range(8))
    html = f"<html><body><h2>Blog archive</h2><div>{links}</div></body></html>"
    assert _article(html) == []
    # the same page without its link lists is a short note, and kept
    assert _article(html.replace(links, "<p>Back in May.</p>")) == ["Blog archive", "Back in May."]


def test_the_fallback_does_not_touch_a_page_that_keeps_text() -> None:
    article = "".join(f"<p>{SENTENCE}{SENTENCE}</p>" for _ in range(3))
    html = f"<html><body><div>{article}</div><div><p>Short note.</p></div></body></html>"
    assert _article(html) == _article(html, fallback_to_container=False)
    assert "Short note." not in _article(html)


def test_lead_paragraphs_one_wrapper_up_join_the_article() -> None:
    # a news page: the lead paragraphs in the story wrapper, the body one level down
    lead = "".join(f"<p>{SENTENCE}</p>" for _ in range(2))
    story = "".join(f"<p>{SENTENCE}{SENTENCE}</p>" for _ in range(6))
    menu = "".join(f"<li><a href='/s{i}'>Section {i}</a></li>" for i in range(12))
    teasers = "".join(f"<p><a href='/t{i}'>Another story number {i}</a></p>" for i in range(8))
    html = (
        f"<html><body><ul>{menu}</ul><div class='page'><div class='story'>{lead}"
        f"<div class='tools'><div class='text'>{story}</div></div></div>"
        f"<div class='more'>{teasers}</div></div></body></html>"
    )
    assert _article(html).count(SENTENCE.strip()) == 2
    assert _article(html, paragraph_levels=1).count(SENTENCE.strip()) == 0
    assert ContainerOptions().paragraph_levels == 1
    corpus = container_options(Preset.CORPUS)
    assert corpus is not None and corpus.paragraph_levels == 1


def test_the_article_element_around_the_container_is_its_region() -> None:
    # a slideshow caption beside the body's wrapper, in the same <article>; the
    # article's footer stays out
    caption = (
        "In this photo taken on Tuesday the rocket is installed on the launch pad, a few"
        " days before the launch that failed."
    )
    footer = "Filed under space, rockets and the launches of this year, in the news."
    story = "".join(f"<p>{SENTENCE}{SENTENCE}</p>" for _ in range(6))
    menu = "".join(f"<li><a href='/s{i}'>Section {i}</a></li>" for i in range(12))
    html = (
        f"<html><body><ul>{menu}</ul><div><article><h1>The launch</h1>"
        f"<div class='gallery'><div><div>1 / 5</div><div>{caption}</div></div></div>"
        f"<div class='body'>{story}</div><footer><p>{footer}</p></footer>"
        "</article></div></body></html>"
    )
    assert caption in _article(html)
    # (the standfirst rule would keep it too, as prose beside the title)
    assert caption not in _article(html, article_region=False, standfirst_levels=0)
    assert footer not in _article(html)
    assert ContainerOptions().article_region is False


def test_a_linked_paragraph_inside_the_article_moves_with_it() -> None:
    related = "Related: the council will vote on the harbour plan next week"
    story = "".join(f"<p>{SENTENCE}{SENTENCE}</p>" for _ in range(3))
    menu = "".join(f"<li><a href='/s{i}'>Section {i}</a></li>" for i in range(12))
    html = (
        f"<html><body><ul>{menu}</ul><div class='story'>{story}"
        f"<p><a href='/r'>{related}</a></p>{story}"
        "<ul><li><a href='/a'>Share this story on a network</a></li>"
        "<li><a href='/b'>Share this story on another one</a></li></ul>"
        "</div></body></html>"
    )
    assert related in _article(html)
    assert related not in _article(html, linked_paragraphs_inside=False)
    # lists are not paragraphs: link lines in a list stay out
    assert not any("Share this story" in text for text in _article(html))
    assert ContainerOptions().linked_paragraphs_inside is False
