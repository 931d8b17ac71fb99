"""A figure's text is kept by its own class only (`ContainerOptions.figures_context_free`,
`figures.figure_pass`), on in `article` and `article-comments`.

A photo credit between two parts of an article was kept by jusText's
context-sensitive pass as a short sentence of the text (trafilatura's evaluation
pages: "Foto: Ricardo Correa", "Judy Eddy/WENN.com"); a caption that reads as prose
stays.
"""

from __future__ import annotations

import pytest
from container_kept import preset_text

from corpus_crawler import ExtractConfig, Preset, extract
from corpus_crawler.figures import figure_blocks, figure_pass
from corpus_crawler.model import Paragraph, ParagraphClass
from corpus_crawler.presets import container_options

GOOD, NEAR_GOOD, SHORT, BAD = (
    ParagraphClass.GOOD,
    ParagraphClass.NEAR_GOOD,
    ParagraphClass.SHORT,
    ParagraphClass.BAD,
)

PROSE = (
    "The old harbour town sits at the mouth of a wide river, and most of the people who"
    " live there have worked on the water for as long as anyone can remember. In the"
    " morning the boats go out before the sun is up, and in the evening they come back"
    " with whatever the sea was willing to give them on that particular day."
)
CAPTION = (
    "The boats of the harbour town come back in the evening with whatever the sea was"
    " willing to give them, and the people of the town are there to meet them."
)


def _page(figure: str) -> bytes:
    """An article whose text is split over two wrappers around a figure: the
    container is one wrapper, the figure is in the region around it (lifted one
    class step) and between good paragraphs."""
    paragraphs = "".join(f"<p>{PROSE} Part {i} of the story.</p>" for i in range(2))
    body = f"<div class='body'>{paragraphs}</div>"
    return (
        "<html lang='en'><body><div id='menu'><a href='/'>Home</a></div>"
        f"<article><h1>The harbour</h1>{body}{figure}{body}</article>"
        "<div id='footer'>Contact us</div></body></html>"
    ).encode()


CREDITED = _page(
    "<figure><img src='boats.jpg'><figcaption><p>The harbour at dawn</p>"
    "<p>Foto: Hans Meier</p></figcaption></figure>"
)
CAPTIONED = _page(
    f"<figure><img src='boats.jpg'><figcaption><p>{CAPTION}</p></figcaption></figure>"
)


def _kept(html: bytes, on: bool, monkeypatch: pytest.MonkeyPatch) -> str:
    """What `article` keeps of `html` with the option on or off."""
    return preset_text(html, Preset.ARTICLE, monkeypatch, figures_context_free=on)


def test_a_credit_between_paragraphs_is_not_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    kept = _kept(CREDITED, True, monkeypatch)
    assert "Foto: Hans Meier" not in kept and "The harbour at dawn" not in kept
    assert "Part 1 of the story" in kept
    # the context-sensitive pass keeps both without the option
    kept_off = _kept(CREDITED, False, monkeypatch)
    assert "Foto: Hans Meier" in kept_off and "The harbour at dawn" in kept_off


def test_a_caption_that_reads_as_prose_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    assert CAPTION in _kept(CAPTIONED, True, monkeypatch)


@pytest.mark.parametrize("preset", [Preset.ARTICLE, Preset.ARTICLE_COMMENTS])
def test_the_article_presets_leave_credits_out(preset: Preset) -> None:
    text = extract(CREDITED, config=ExtractConfig(preset=preset, language="en")).text
    assert "Part 1 of the story" in text
    assert "Foto: Hans Meier" not in text


def test_corpus_keeps_it_off() -> None:
    options = container_options(Preset.CORPUS)
    assert options is not None and not options.figures_context_free


def _block(path: str, cf: ParagraphClass, final: ParagraphClass) -> Paragraph:
    return Paragraph("text", cf, final, 4, dom_path=path)


def test_figure_blocks() -> None:
    paragraphs = [
        _block("html.body.div.figure.figcaption", SHORT, GOOD),
        _block("html.body.div.figure.div", SHORT, GOOD),
        _block("html.body.div.figcaption", SHORT, GOOD),
        _block("html.body.div.p", SHORT, GOOD),
        # names that only contain the word are no figure
        _block("html.body.figures.p", SHORT, GOOD),
        _block("html.body.div.configure", SHORT, GOOD),
    ]
    assert figure_blocks(paragraphs) == [True, True, True, False, False, False]


def test_figure_pass_moves_only_what_the_context_kept() -> None:
    paragraphs = [
        _block("html.body.figure.figcaption", SHORT, GOOD),  # kept by its neighbours
        _block("html.body.figure.figcaption", NEAR_GOOD, GOOD),
        _block("html.body.figure.figcaption", GOOD, GOOD),  # good by its own class
        _block("html.body.figure.figcaption", SHORT, BAD),
        _block("html.body.div.p", SHORT, GOOD),  # no figure
    ]
    passed = figure_pass(paragraphs)
    assert [p.final_class for p in passed] == [BAD, BAD, GOOD, BAD, GOOD]
    assert [p.cf_class for p in passed] == [p.cf_class for p in paragraphs]
