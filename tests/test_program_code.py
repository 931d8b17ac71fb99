"""The `corpus` preset keeps no program code (`ContainerOptions.drop_program_code`,
`classify.code_pass`).

A `<pre>` block inside an article's container was moved two classes up like the
article's paragraphs, and the context-sensitive pass then kept every short listing
between two good paragraphs: on Mozilla's readability pages `corpus` kept 64.7k
characters of JavaScript, HTML, SQL and shell sessions on 9 pages (6.3% of its
text; `seed` 28.9k on 7). A corpus of a language wants sentences. Preformatted
text that reads as prose (an RFC, a mailing-list message) is kept.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from corpus_crawler import ExtractConfig, Preset, extract
from corpus_crawler.classify import code_pass, program_code
from corpus_crawler.language_setup import stoplist_and_params
from corpus_crawler.model import ParagraphClass
from corpus_crawler.presets import container_options

GOOD = ParagraphClass.GOOD
BAD = ParagraphClass.BAD

_PROSE = (
    "The old harbour town sits at the mouth of a wide river, and most of the people who"
    " live there have worked on the water for as long as anyone can remember. In the"
    " morning the boats go out before the sun is up, and in the evening they come back"
    " with whatever the sea was willing to give them on that particular day."
)

_LISTING = """function cow(name) {
  this.name = name || "Anon cow";
}
exports.Cow = cow;
var expect = chai.expect;
describe("Cow", function() { it("works", function() { expect(1).to.equal(1); }); });"""


def _page(*middle: str, lang: str = "en") -> bytes:
    paragraphs = "".join(f"<p>{_PROSE} Part {i} of the story.</p>" for i in range(4))
    body = (
        "<div id='menu'><a href='/'>Home</a> <a href='/news'>News</a></div>"
        f"<div class='article-body'><h1>The harbour</h1>{paragraphs}"
        + "".join(middle)
        + f"{paragraphs}</div><div id='footer'>Contact us</div>"
    )
    return f"<html lang='{lang}'><head><title>t</title></head><body>{body}</body></html>".encode()


def _kept(html: bytes, preset: Preset, language: str = "en") -> list[str]:
    doc = extract(html, "http://example.org/a", ExtractConfig(language=language, preset=preset))
    return [p.text for p in doc.paragraphs if p.final_class is GOOD]


def test_code_in_the_article_is_dropped_by_corpus_and_kept_by_article() -> None:
    html = _page(f"<pre><code>{_LISTING}</code></pre>", "<pre>npm install cow --save</pre>")
    corpus = _kept(html, Preset.CORPUS)
    assert len([t for t in corpus if t.startswith(_PROSE)]) == 8
    assert not [t for t in corpus if "function" in t or "npm install" in t], corpus
    # the article preset keeps an article's listings (its gold, Mozilla's, keeps them)
    article = _kept(html, Preset.ARTICLE)
    assert any("function cow" in t for t in article) and any("npm install" in t for t in article)


def test_seed_and_reference_are_unchanged_by_the_rule() -> None:
    """The short command between good paragraphs stays what jusText makes it: the
    context-sensitive pass keeps it in `seed` (exact to the specification)."""
    html = _page("<pre>npm install cow --save</pre>")
    assert "npm install cow --save" in _kept(html, Preset.SEED)
    assert "npm install cow --save" in _kept(html, Preset.REFERENCE)
    assert "npm install cow --save" not in _kept(html, Preset.CORPUS)


def test_prose_set_in_pre_is_kept() -> None:
    message = (
        "Hi all,\n\nI have been looking at the way the river floods in the spring, and I think"
        " that we should ask the council\nto build the wall on the other side of the bridge,"
        " where the water comes in first.\nWhat do you all think of it?\n\nThanks, Anna"
    )
    kept = _kept(_page(f"<pre>{message}</pre>"), Preset.CORPUS)
    assert any(t.startswith("Hi all,") for t in kept), kept


def test_without_a_stoplist_nothing_is_code() -> None:
    """Stop-word density is the test: a language with none (`stopwords_low` 0, as for
    Chinese) keeps what the container keeps."""
    html = _page(f"<pre>{_LISTING}</pre>")
    kept = _kept(html, Preset.CORPUS, language=None)  # type: ignore[arg-type]
    assert any("function cow" in t for t in kept), kept


def test_code_pass_only_moves_code_blocks_to_bad() -> None:
    html = _page(f"<pre>{_LISTING}</pre>", "<pre>npm install cow --save</pre>")
    options = container_options(Preset.CORPUS)
    assert options is not None and options.drop_program_code
    before = extract(
        html,
        "http://example.org/a",
        ExtractConfig(language="en", preset=Preset.CORPUS),
    )
    _, params = stoplist_and_params("en", ExtractConfig(language="en", preset=Preset.CORPUS))
    code = [program_code(p, params) for p in before.paragraphs]
    assert sum(code) == 2
    again = code_pass(before.paragraphs, params)
    assert again == before.paragraphs  # extract() ran it: nothing left to move
    # made GOOD again, the code blocks go back to BAD and nothing else moves
    lifted = tuple(
        dataclasses.replace(p, cf_class=GOOD, final_class=GOOD) if c else p
        for p, c in zip(before.paragraphs, code, strict=True)
    )
    result = code_pass(lifted, params)
    assert [p.final_class for p in result] == [p.final_class for p in before.paragraphs]
    assert all(
        p.cf_class is BAD and p.final_class is BAD for p, c in zip(result, code, strict=True) if c
    )


GoldPages = Callable[[str], Iterator[tuple[str, bytes, str, dict[str, Any]]]]


@pytest.fixture(scope="module")
def readability_pages(gold_pages: GoldPages) -> dict[str, tuple[bytes, str]]:
    return {
        page_id: (html, record.get("url") or "http://example.org/")
        for page_id, html, _, record in gold_pages("readability")
    }


def _pre_text(page: tuple[bytes, str], preset: Preset) -> tuple[int, int]:
    """Characters of kept `<pre>` text: (read as code, read as prose)."""
    html, url = page
    config = ExtractConfig(language="auto", preset=preset)
    doc = extract(html, url, config)
    _, params = stoplist_and_params(doc.language, config)
    code = prose = 0
    for p in doc.paragraphs:
        if p.final_class is GOOD and (p.dom_path.endswith(".pre") or ".pre." in p.dom_path):
            if program_code(p, params):
                code += p.length
            else:
                prose += p.length
    return code, prose


@pytest.mark.parametrize("page_id", ["001", "002", "lazy-image-1", "dropbox-blog", "v8-blog"])
def test_the_code_listings_of_mozillas_pages_are_not_in_the_corpus(
    readability_pages: dict[str, tuple[bytes, str]], page_id: str
) -> None:
    code, _ = _pre_text(readability_pages[page_id], Preset.CORPUS)
    assert code == 0
    # the same page as the article preset sees it: the listings are there to drop
    assert _pre_text(readability_pages[page_id], Preset.ARTICLE)[0] > 0


def test_an_rfc_set_in_pre_is_kept_whole(readability_pages: dict[str, tuple[bytes, str]]) -> None:
    code, prose = _pre_text(readability_pages["ietf-1"], Preset.CORPUS)
    assert code == 0 and prose > 25_000
