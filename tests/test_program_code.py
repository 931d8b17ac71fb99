"""The `corpus` preset keeps no program code (`ContainerOptions.drop_program_code`,
`program_code.code_pass`).

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
from corpus_crawler.language_setup import stoplist_and_params
from corpus_crawler.model import ParagraphClass
from corpus_crawler.presets import container_options
from corpus_crawler.program_code import code_pass, program_code_blocks

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


#: The words of a made page: its prose, "part N", menu, heading and footer.
_ENGLISH = (_PROSE, " Part {} of the story.", ("Home", "News"), "The harbour", "Contact us")


def _page(*middle: str, words: tuple[Any, ...] = _ENGLISH, lang: str = "en") -> bytes:
    """Four paragraphs, `middle`, four more, in an article between a menu and a footer."""
    prose, part, (home, news), heading, footer = words
    paragraphs = "".join(f"<p>{prose}{part.format(i)}</p>" for i in range(4))
    body = (
        f"<div id='menu'><a href='/'>{home}</a> <a href='/news'>{news}</a></div>"
        f"<div class='article-body'><h1>{heading}</h1>{paragraphs}"
        + "".join(middle)
        + f"{paragraphs}</div><div id='footer'>{footer}</div>"
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


def test_a_latin_script_page_without_a_stoplist_keeps_its_code() -> None:
    """Without stop words (`--lang none`) and in a Latin script, nothing tells code
    from the page's text: the container keeps what it keeps."""
    html = _page(f"<pre>{_LISTING}</pre>")
    kept = _kept(html, Preset.CORPUS, language=None)  # type: ignore[arg-type]
    assert any("function cow" in t for t in kept), kept


_CHINESE = (
    "这个城市位于一条大河的入海口，这里的大多数人世世代代都在水上工作。每天早上，"
    "渔船在太阳升起之前就出海了，到了晚上，它们带着大海在那一天愿意给予的一切回来。"
)


_CHINESE_WORDS = (_CHINESE, "第{}部分。", ("首页", "新闻"), "港口", "联系我们")


def _chinese_page(*middle: str) -> bytes:
    return _page(*middle, words=_CHINESE_WORDS, lang="zh")


def test_code_on_a_chinese_page_is_dropped_and_chinese_in_pre_kept() -> None:
    """Chinese has no stoplist (`stopwords_low` 0): on a page written in a non-Latin
    script, a <pre> block written in ASCII is code; one in the page's script is text.
    (Seed keeps the whole listing here: with no stop words, length alone makes it good.)"""
    poem = (
        "床前明月光，\n疑是地上霜。\n举头望明月，\n低头思故乡。这是一首很有名的诗，每个孩子都会背。"
    )
    html = _chinese_page(
        f"<pre><code>{_LISTING}</code></pre>", "<pre>pip install cow</pre>", f"<pre>{poem}</pre>"
    )
    doc = extract(html, "http://example.org/a", ExtractConfig(language="auto"))
    assert doc.language == "zh"
    kept = _kept(html, Preset.CORPUS, language="auto")
    assert len([t for t in kept if t.startswith(_CHINESE)]) == 8, kept
    assert not [t for t in kept if "function" in t or "pip install" in t], kept
    assert any(t.startswith("床前明月光") for t in kept), kept
    # a Chinese comment or two in a listing does not make it text
    commented = _LISTING.replace("var expect", "// 测试\nvar expect")
    kept = _kept(_chinese_page(f"<pre>{commented}</pre>"), Preset.CORPUS, language="auto")
    assert not [t for t in kept if "function" in t], kept
    # seed is exact: its context pass keeps the short command between good paragraphs
    assert "pip install cow" in _kept(html, Preset.SEED, language="auto")


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
    code = program_code_blocks(before.paragraphs, params)
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
    for p, is_code in zip(doc.paragraphs, program_code_blocks(doc.paragraphs, params), strict=True):
        if p.final_class is GOOD and (p.dom_path.endswith(".pre") or ".pre." in p.dom_path):
            if is_code:
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
