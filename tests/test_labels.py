"""Dangling labels are dropped (`ContainerOptions.drop_dangling_labels`,
`labels.label_pass`), on in `corpus`, `article` and `article-comments`; and the title
of a comment section (`ContainerOptions.drop_comment_titles`,
`labels.comment_title_pass`), on in `corpus` and `article-comments`.

"Mehr zum Thema:" over a list of links that the presets drop was kept alone by the
container's lift (trafilatura's evaluation pages: 22 such lines in `corpus`).
"""

from __future__ import annotations

import pytest
from container_kept import preset_text

from corpus_crawler import ExtractConfig, Preset, extract
from corpus_crawler.elementmarks import ASIDE, COMMENTS, UNLIKELY
from corpus_crawler.labels import (
    LABEL_WORDS,
    comment_title_pass,
    comment_titles,
    dangling_labels,
    label_pass,
)
from corpus_crawler.model import Paragraph, ParagraphClass
from corpus_crawler.presets import container_options

GOOD, SHORT, BAD = ParagraphClass.GOOD, ParagraphClass.SHORT, ParagraphClass.BAD

PROSE = (
    "The old harbour town sits at the mouth of a wide river, and most of the people who"
    " live there have worked on the water for as long as anyone can remember. In the"
    " morning the boats go out before the sun is up, and in the evening they come back"
    " with whatever the sea was willing to give them on that particular day."
)


def _page(after_text: str, label: str = "<p>More on this:</p>") -> bytes:
    paragraphs = "".join(f"<p>{PROSE} Part {i} of the story.</p>" for i in range(4))
    return (
        "<html lang='en'><body><div id='menu'><a href='/'>Home</a></div>"
        f"<div class='article-body'><h1>The harbour</h1>{paragraphs}"
        f"{label}{after_text}</div>"
        "<div id='footer'>Contact us</div></body></html>"
    ).encode()


#: A list of linked headlines, which every preset drops.
LINKS = (
    "<ul>"
    + "".join(
        f"<li><a href='/s{i}'>Another story about boats number {i}</a></li>" for i in range(4)
    )
    + "</ul>"
)
#: The label over the list.
OVER_LINKS = _page(LINKS)
#: The label over a paragraph that is kept.
OVER_PROSE = _page(f"<p>{PROSE} The end of the story.</p>")
#: A section heading over the list.
HEADED_LINKS = _page(LINKS, label="<h2>Related stories</h2>")


def _text(html: bytes, preset: Preset, on: bool, monkeypatch: pytest.MonkeyPatch) -> str:
    return preset_text(html, preset, monkeypatch, drop_dangling_labels=on)


@pytest.mark.parametrize("preset", [Preset.CORPUS, Preset.ARTICLE])
@pytest.mark.parametrize(
    ("html", "label"), [(OVER_LINKS, "More on this:"), (HEADED_LINKS, "Related stories")]
)
def test_a_label_or_heading_over_dropped_links_is_dropped(
    preset: Preset, html: bytes, label: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert label in _text(html, preset, False, monkeypatch)
    text = _text(html, preset, True, monkeypatch)
    assert label not in text
    assert "The harbour" in text and "Part 3 of the story" in text


@pytest.mark.parametrize("preset", [Preset.CORPUS, Preset.ARTICLE])
def test_a_label_over_kept_text_stays(preset: Preset, monkeypatch: pytest.MonkeyPatch) -> None:
    text = _text(OVER_PROSE, preset, True, monkeypatch)
    assert "More on this:" in text and "The end of the story" in text


@pytest.mark.parametrize("preset", [Preset.CORPUS, Preset.ARTICLE, Preset.ARTICLE_COMMENTS])
def test_the_presets_drop_dangling_labels(preset: Preset) -> None:
    options = container_options(preset)
    assert options is not None and options.drop_dangling_labels
    text = extract(OVER_LINKS, config=ExtractConfig(preset=preset, language="en")).text
    assert "More on this:" not in text and "Part 3 of the story" in text


def _block(
    text: str, final: ParagraphClass = GOOD, heading: bool = False, h1: bool = False
) -> Paragraph:
    return Paragraph(text, SHORT, final, len(text), heading=heading, headline=h1)


def _heading(text: str, h1: bool = False) -> Paragraph:
    return _block(text, GOOD, heading=True, h1=h1)


@pytest.mark.parametrize(
    ("blocks", "dangling"),
    [
        # a section heading over dropped links, to the end of the page or the next heading
        ([_heading("Related stories"), _block("Links", BAD)], [True, False]),
        (
            [_heading("Related"), _block("Links", BAD), _heading("Comments"), _block("Text")],
            [True, False, False, False],
        ),
        # the page's title never
        ([_heading("The harbour", h1=True), _block("Links", BAD)], [False, False]),
        # a later <h1> heads a section like any heading (a sidebar box's "Most read")
        (
            [
                _heading("The harbour", h1=True),
                _block("Date", BAD),
                _block("Text"),
                _heading("Most read", h1=True),
                _block("Links", BAD),
            ],
            [False, False, False, True, False],
        ),
        # the title is the first <h1> with text
        ([_heading(" ", h1=True), _heading("Most read", h1=True), _block("x", BAD)], [False] * 3),
        # a section that keeps text after a dropped first block (a "Main article:" line)
        ([_heading("History"), _block("Main article", BAD), _block("Text")], [False, False, False]),
        # a heading over a kept subheading
        ([_heading("Firefox"), _heading("Firefox Mobile"), _block("Text")], [False, False, False]),
        # a long heading is a title, not a label
        ([_heading("A heading of more than six words in it"), _block("x", BAD)], [False, False]),
    ],
)
def test_dangling_section_headings(blocks: list[Paragraph], dangling: list[bool]) -> None:
    assert dangling_labels(blocks, 70) == dangling


@pytest.mark.parametrize(
    ("blocks", "dangling"),
    [
        # a label before a dropped block, and at the end of the page
        ([("Mehr zum Thema:", GOOD), ("Links", BAD)], [True, False]),
        ([("Read more:", GOOD)], [True]),
        # before a kept block, or itself not kept
        ([("Ingredients:", GOOD), ("Two eggs", GOOD)], [False, False]),
        ([("Mehr zum Thema:", BAD), ("Links", BAD)], [False, False]),
        # blocks without text are passed over
        ([("Related:", GOOD), ("  ", GOOD), ("Links", BAD)], [True, False, False]),
        ([("Related:", GOOD), ("", BAD), ("Story", GOOD)], [False, False, False]),
        # no colon at the end, or a sentence of more words
        ([("Mehr zum Thema", GOOD), ("Links", BAD)], [False, False]),
        (
            [("To see the game in action, check out the video:", GOOD), ("", BAD)],
            [False, False],
        ),
        # a label written without spaces, and a sentence written without spaces
        ([("责任编辑：", GOOD), ("张三", BAD)], [True, False]),
        ([("近日" * 40 + "：", GOOD), ("张三", BAD)], [False, False]),
    ],
)
def test_dangling_labels(blocks: list[tuple[str, ParagraphClass]], dangling: list[bool]) -> None:
    paragraphs = [_block(text, final) for text, final in blocks]
    assert dangling_labels(paragraphs, 70) == dangling


def test_the_word_limit() -> None:
    words = " ".join(["word"] * LABEL_WORDS)
    assert dangling_labels([_block(words + ":")], 70) == [True]
    assert dangling_labels([_block(words + " more:")], 70) == [False]


def test_label_pass_keeps_the_context_free_class() -> None:
    paragraphs = [_block("Mehr zum Thema:"), _block("Links", BAD), _block("Story")]
    passed = label_pass(paragraphs, 70)
    assert [p.final_class for p in passed] == [BAD, BAD, GOOD]
    assert [p.cf_class for p in passed] == [SHORT, SHORT, SHORT]


#: The marks of a block in a comment section (COMMENTS is a kind of aside).
IN_THREAD = UNLIKELY | ASIDE | COMMENTS


@pytest.mark.parametrize(
    ("blocks", "marks", "titles"),
    [
        # the thread's title, first in the section; the comments and their names stay
        (
            [_heading("2 Comments"), _heading("Anna says:"), _block("A reply")],
            [IN_THREAD] * 3,
            [True, False, False],
        ),
        # blocks without text are passed over; a second thread has its own title
        (
            [_block(" "), _heading("Comments"), _block("Story"), _heading("Reactions")],
            [IN_THREAD, IN_THREAD, 0, IN_THREAD],
            [False, True, False, True],
        ),
        # a first block that is no heading, is not kept, or is as long as a paragraph
        ([_block("2 Comments"), _heading("Anna")], [IN_THREAD] * 2, [False, False]),
        ([_block("2 Comments", BAD, heading=True)], [IN_THREAD], [False]),
        ([_heading("x" * 200)], [IN_THREAD], [False]),
        # a heading outside a comment section (another aside is not one)
        ([_heading("Related stories")], [UNLIKELY | ASIDE], [False]),
    ],
)
def test_comment_section_titles(
    blocks: list[Paragraph], marks: list[int], titles: list[bool]
) -> None:
    assert comment_titles(blocks, marks, 200) == titles


def test_comment_title_pass_keeps_the_context_free_class() -> None:
    paragraphs = [_heading("3 Kommentare zu „Der Hafen“"), _block("Eine Antwort")]
    passed = comment_title_pass(paragraphs, [IN_THREAD] * 2, 200)
    assert [p.final_class for p in passed] == [BAD, GOOD]
    assert [p.cf_class for p in passed] == [SHORT, SHORT]


REPLY = (
    "I grew up in a town like this one, and the part about the boats going out before"
    " the sun is up took me straight back to the mornings with my father on the water."
)
#: A post with a WordPress comment section: its title, then the thread.
THREAD = (
    "<html lang='en'><body><div class='article-body'><h1>The harbour</h1>"
    + "".join(f"<p>{PROSE} Part {i} of the story.</p>" for i in range(4))
    + "</div><div id='comments' class='comments-area'>"
    "<h2 class='comments-title'>3 thoughts on the harbour</h2><ol class='comment-list'>"
    + "".join(f"<li class='comment'><p>{REPLY} Reply number {i}.</p></li>" for i in range(3))
    + "</ol></div></body></html>"
).encode()


@pytest.mark.parametrize("preset", [Preset.CORPUS, Preset.ARTICLE_COMMENTS])
def test_the_presets_that_keep_comments_drop_the_thread_title(
    preset: Preset, monkeypatch: pytest.MonkeyPatch
) -> None:
    options = container_options(preset)
    assert options is not None and options.drop_comment_titles
    before = preset_text(THREAD, preset, monkeypatch, drop_comment_titles=False)
    assert "3 thoughts on the harbour" in before
    text = extract(THREAD, config=ExtractConfig(preset=preset, language="en")).text
    assert "3 thoughts on the harbour" not in text
    assert "Part 3 of the story" in text and "Reply number 2" in text
