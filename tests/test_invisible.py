"""Paragraphs that show nothing, and soft hyphens (corpus_crawler.invisible).

Editors leave paragraphs holding only a zero-width space (`<p>&#8203;</p>`, 19 of
them in one post of scrapinghub's set) or a byte-order mark. jusText keeps such a
block between good ones, and the vertical file got a `<p>` without a token. A soft
hyphen split "Donau&shy;dampf&shy;schiff" into five tokens.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from corpus_crawler import ExtractConfig, Preset, extract
from corpus_crawler.invisible import shows_nothing, without_soft_hyphens
from corpus_crawler.model import ParagraphClass

SENTENCE = (
    "The committee said that it would meet again in the spring, and that the members"
    " were not yet sure whether the plan could go ahead as it was first written. "
)
EMPTY_LOOKING = ("\u200b", "&#8203;", "\ufeff \u2060", "&shy;", "\u200e\u200f")


def _page(between: tuple[str, ...] = EMPTY_LOOKING) -> str:
    body = f"<p>{SENTENCE * 2}</p>" + "".join(f"<p>{b}</p><p>{SENTENCE * 2}</p>" for b in between)
    return f"<html><body><article><h1>The plan</h1>{body}</article></body></html>"


def test_what_shows_nothing() -> None:
    for text in ("", " ", "\u200b", " \u200b\n\ufeff ", "\u00ad", "\u200e\u200f", "\u2066\u2069"):
        assert shows_nothing(text), repr(text)
    for text in ("a", " a", "\u200ba", "ไทย\u200bภาษา", "\u00ad-", "—"):
        assert not shows_nothing(text), repr(text)
    assert without_soft_hyphens("Donau\u00addampf\u00adschiff") == "Donaudampfschiff"
    assert without_soft_hyphens("plain") == "plain"


CONFIGS = {
    "seed": ExtractConfig(preset=Preset.SEED, language="en"),
    "corpus": ExtractConfig(preset=Preset.CORPUS, language="en"),
    "article": ExtractConfig(preset=Preset.ARTICLE, language="en"),
    "declutter": ExtractConfig(extractor="declutter", language="en"),
    "kimatu": ExtractConfig(extractor="kimatu", language="en"),
    "combined": ExtractConfig(extractor="combined", language="en"),
}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_no_extractor_keeps_a_paragraph_that_shows_nothing(name: str) -> None:
    doc = extract(_page(), config=CONFIGS[name])
    good = [p for p in doc.paragraphs if p.final_class is ParagraphClass.GOOD]
    assert sum(p.text.startswith("The committee") for p in good) == len(EMPTY_LOOKING) + 1
    assert not [p.text for p in doc.paragraphs if shows_nothing(p.text)]


def test_the_reference_preset_keeps_them_as_justext_does() -> None:
    doc = extract(_page(), config=ExtractConfig(preset=Preset.REFERENCE, language="en"))
    kept = [p.text for p in doc.paragraphs if p.final_class is ParagraphClass.GOOD]
    assert "\u200b" in kept


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_soft_hyphens_leave_the_text(name: str) -> None:
    word = "Donau&shy;dampf&shy;schiff&shy;fahrt"
    paragraph = f"{SENTENCE} The {word} went on. {SENTENCE}"
    page = f"<html><body><article><p>{paragraph}</p></article></body></html>"
    text = extract(page, config=CONFIGS[name]).text
    assert "The Donaudampfschifffahrt went on." in text
    assert "\u00ad" not in text


def test_the_vertical_file_has_no_empty_paragraph(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from corpus_crawler.cli import main

    page = tmp_path / "page.html"
    page.write_text(_page(), encoding="utf-8")
    assert main(["extract", str(page), "--format", "vertical", "--lang", "en"]) == 0
    vertical = capsys.readouterr().out
    assert vertical.count("<p ") == len(EMPTY_LOOKING) + 2  # the heading and the text
    assert re.search(r"<p [^>]*>\n</p>", vertical) is None


# NHK's news for learners (trafilatura's evaluation page nhk.or.jp.k100) sets a
# reading over every kanji: as text, each reading fell between the characters it
# reads, and every annotated word was split (子こども, 虐ぎゃく待たい).
RUBY_SENTENCE = (
    "<ruby>子<rp>(</rp><rt>こ</rt><rp>)</rp></ruby>どもへの<ruby>虐<rt>ぎゃく</rt>待<rt>たい</rt></ruby>"
    "をなくすための<ruby>法律<rtc>ほうりつ</rtc></ruby>ができて、親が子どもを教育するために、"
    "たたいたり蹴ったりする体罰を禁止することになりました。"
)
PLAIN_SENTENCE = (
    "子どもへの虐待をなくすための法律ができて、親が子どもを教育するために、"
    "たたいたり蹴ったりする体罰を禁止することになりました。"
)


@pytest.mark.parametrize("name", ["corpus", "article", "declutter", "kimatu", "combined"])
def test_ruby_readings_are_not_the_text(name: str) -> None:
    page = f"<html><body><article><p>{RUBY_SENTENCE * 4}</p></article></body></html>"
    config = CONFIGS[name]
    config = ExtractConfig(preset=config.preset, extractor=config.extractor, language="auto")
    if name == "combined":  # the preset's walk: combined runs with `corpus` in a crawl
        config = ExtractConfig(extractor="combined", preset=Preset.CORPUS, language="auto")
    text = extract(page, config=config).text
    assert PLAIN_SENTENCE * 4 in text.replace("\n", "")
    assert not re.search("[()]|ぎゃく|ほうりつ", text)


def test_the_seed_keeps_ruby_readings_as_the_specification_walk_does() -> None:
    page = f"<html><body><article><p>{RUBY_SENTENCE * 4}</p></article></body></html>"
    text = extract(page, config=ExtractConfig(preset=Preset.SEED, language="auto")).text
    assert "子(こ)ども" in text
