"""Paragraph language: is a paragraph in another language than its document?

A document's language is decided on all its text; a quotation, a comment or a
cookie notice in another language inside it is found here, paragraph by
paragraph, as SpiderLing's ``langdiff`` does. Short paragraphs are not judged
(a few words rarely tell a language apart), and a paragraph only counts as
foreign when the identifier is confident of the other language.

Measured with ``python benchmarks/paragraph_langid.py`` on 8 857 gold-text
paragraphs of 12-80 words (7 languages, mostly English; shared 2-core machine),
at the confidence each method needs to catch most foreign paragraphs:

    method      accuracy  false foreign  caught  us/paragraph  (confidence >= 0.2)
    stopwords      0.899         0.0517   0.880           113
    cld2           0.992         0.0003   0.990            21
    py3langid      0.977         0.0129   0.984           144

"false foreign": paragraphs called another language than their own (good text
that would be removed); "caught": paragraphs recognised as not German/English
when the document is said to be in that language. CLD2 (pycld2, model compiled
into the extension) is the most accurate and the fastest on short texts, so it
is `DEFAULT_METHOD`; the stop-word method, which wins on whole pages
(`corpus_crawler.langid`), mistakes short paragraphs for languages whose
stoplists share their few function words.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from .config import ConfigError
from .langid import _VARIANTS, LanguageGuess, identify_by_model, identify_by_stopwords

__all__ = [
    "DEFAULT_METHOD",
    "DEFAULT_MIN_CONFIDENCE",
    "ForeignParagraph",
    "ParagraphMethod",
    "foreign_language",
    "identify_paragraph",
]


class ParagraphMethod(str, enum.Enum):
    STOPWORDS = "stopwords"
    CLD2 = "cld2"

    def __str__(self) -> str:
        return self.value


DEFAULT_METHOD = ParagraphMethod.CLD2

#: CLD2's confidence (share of the text, halved when unreliable, scaled below 200
#: bytes) above which a paragraph's other language counts; see the table above.
DEFAULT_MIN_CONFIDENCE = 0.2


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
    min_confidence: float = DEFAULT_MIN_CONFIDENCE,
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
