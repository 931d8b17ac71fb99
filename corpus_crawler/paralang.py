"""Paragraph language: is a paragraph in another language than its document?

A document's language is decided on all its text; a quotation, a comment or a
cookie notice in another language inside it is found here, paragraph by
paragraph, as SpiderLing's ``langdiff`` does. Short paragraphs are not judged
(a few words rarely tell a language apart), and a paragraph only counts as
foreign when the identifier is confident of the other language.

Method measured on short texts by ``benchmarks/paragraph_langid.py``: see
`DEFAULT_METHOD` there and in the README's dedup section.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from .config import ConfigError
from .langid import _VARIANTS, LanguageGuess, identify_by_model, identify_by_stopwords

__all__ = ["DEFAULT_METHOD", "ParagraphMethod", "foreign_language", "identify_paragraph"]


class ParagraphMethod(str, enum.Enum):
    STOPWORDS = "stopwords"
    CLD2 = "cld2"

    def __str__(self) -> str:
        return self.value


DEFAULT_METHOD = ParagraphMethod.STOPWORDS


@dataclass(frozen=True, slots=True)
class ForeignParagraph:
    language: str
    confidence: float


def identify_paragraph(text: str, method: ParagraphMethod | str = DEFAULT_METHOD) -> LanguageGuess:
    """The language of one paragraph of plain text (never raises)."""
    chosen = _parse(method)
    if chosen is ParagraphMethod.CLD2:
        return identify_by_model(text)
    return identify_by_stopwords(text)


def _base(code: str) -> str:
    return _VARIANTS.get(code, code)


def foreign_language(
    text: str,
    document_language: str | None,
    *,
    word_count: int,
    min_words: int = 12,
    min_confidence: float = 0.5,
    method: ParagraphMethod | str = DEFAULT_METHOD,
) -> ForeignParagraph | None:
    """The other language `text` is in, or None (same language, too short, unsure)."""
    if document_language is None or word_count < min_words:
        return None
    guess = identify_paragraph(text, method)
    if guess.code is None or guess.confidence < min_confidence:
        return None
    if _base(guess.code) == _base(document_language):
        return None
    return ForeignParagraph(guess.code, guess.confidence)


def _parse(method: ParagraphMethod | str) -> ParagraphMethod:
    if isinstance(method, ParagraphMethod):
        return method
    try:
        return ParagraphMethod(method)
    except ValueError:
        names = ", ".join(m.value for m in ParagraphMethod)
        raise ConfigError(f"unknown paragraph language method {method!r}: use {names}") from None
