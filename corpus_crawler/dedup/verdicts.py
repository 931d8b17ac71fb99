"""What a dedup verdict does to a document: the paragraphs it removes, the marks it
writes (``dup``, ``langdiff``, the document's ``lang_diff``). Pure functions, shared by
the crawl (``pipelines/dedup.py``) and ``corpus-crawler process``."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from ..model import Document, Paragraph, ParagraphClass
from ._config import DedupConfig, MarkAction
from ._stages import ParagraphFate, ParagraphVerdict, Verdict

__all__ = ["DocumentMarks", "apply_verdict", "document_marks"]


def _marked(paragraph: Paragraph, fate: ParagraphVerdict) -> Paragraph:
    if fate.fate is ParagraphFate.DUPLICATE:
        return dataclasses.replace(
            paragraph, scores={**paragraph.scores, "dup": fate.seen_share or 0.0}
        )
    return dataclasses.replace(
        paragraph, scores={**paragraph.scores, "langdiff": fate.lang_diff or 0.0}
    )


def apply_verdict(document: Document, verdict: Verdict) -> Document:
    """`document` with its good paragraphs removed or marked as `verdict` says (the
    verdict's paragraphs are the document's good ones, in order)."""
    fates = iter(verdict.paragraphs)
    paragraphs: list[Paragraph] = []
    for paragraph in document.paragraphs:
        if paragraph.final_class is not ParagraphClass.GOOD:
            paragraphs.append(paragraph)
            continue
        fate = next(fates)
        if fate.removed:
            continue
        if fate.fate is ParagraphFate.KEPT:
            paragraphs.append(paragraph)
        else:
            paragraphs.append(_marked(paragraph, fate))
    return dataclasses.replace(document, paragraphs=tuple(paragraphs))


@dataclass(frozen=True, slots=True)
class DocumentMarks:
    """The marks a kept document carries into the corpus files (`DocMeta` fields)."""

    lang_diff: float | None = None
    paragraph_lang_diffs: tuple[float | None, ...] = ()
    paragraph_dups: tuple[float | None, ...] = ()

    def __bool__(self) -> bool:
        return self.lang_diff is not None or any(
            v is not None for v in (*self.paragraph_lang_diffs, *self.paragraph_dups)
        )


def document_marks(
    document: Document, verdict: Verdict, config: DedupConfig, word_counts: Sequence[int]
) -> DocumentMarks:
    """The ``mark`` mode attributes of the paragraphs the verdict keeps, aligned with
    `apply_verdict`'s document (its non-good paragraphs get none).

    ``dup`` goes on every judged paragraph (0.00 when new, onion writes a mark on every
    line too) so a corpus user can pick another threshold later; ``langdiff`` on each
    paragraph long enough to judge; the document's ``lang_diff`` is the share of its
    words in paragraphs of another language.
    """
    mark_dups = config.paragraphs is MarkAction.MARK
    mark_language = config.paragraph_language is MarkAction.MARK
    if not (mark_dups or mark_language) or not verdict.paragraphs:
        return DocumentMarks()
    fates = iter(zip(verdict.paragraphs, word_counts, strict=True))
    dups: list[float | None] = []
    lang_diffs: list[float | None] = []
    words = foreign_words = 0
    for paragraph in document.paragraphs:
        if paragraph.final_class is not ParagraphClass.GOOD:
            dups.append(None)
            lang_diffs.append(None)
            continue
        fate, count = next(fates)
        if fate.removed:
            continue
        words += count
        foreign_words += count if fate.fate is ParagraphFate.FOREIGN else 0
        dups.append(fate.seen_share if mark_dups else None)
        lang_diffs.append(fate.lang_diff if mark_language else None)
    lang_diff = (foreign_words / words if words else 0.0) if mark_language else None
    return DocumentMarks(lang_diff, tuple(lang_diffs), tuple(dups))
