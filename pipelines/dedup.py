"""DedupPipeline: kept documents through `corpus_crawler.dedup.Deduplicator`.

Between `ExtractPipeline` (100) and the writers (800). A document whose text
was kept before is dropped as `duplicate`, one mostly the same as a kept one
as `near-duplicate` (its page stays archived in the WARC; only the corpus
files skip it); paragraphs seen before or in another language are removed
from the document, or kept and marked in their `scores` (``dup``: share of
n-grams seen; ``langdiff``: the identifier's confidence in the other language).
The corpus stats (``corpus/docs_kept``, ``words``, ``bytes_clean``,
``paragraphs_good``, counted by ExtractPipeline) are corrected for what goes
here, so they keep describing the corpus files.

The stores live in ``CORPUS_DEDUP_STATE_DIR`` (default:
``CORPUS_OUTPUT_DIR/state/dedup``) and are reopened by the next crawl into
the same folder.

Settings: CORPUS_DEDUP_ENABLED, EXACT, NEAR_DOCUMENTS, NEAR_THRESHOLD, NEAR_SEEN_SHARE,
PARAGRAPHS, PARAGRAPH_THRESHOLD, PARAGRAPH_NGRAM, PARAGRAPH_FILTER_MIB,
PARAGRAPH_LANGUAGE, PARAGRAPH_LANGUAGE_MIN_WORDS, STATE_DIR.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.settings import BaseSettings

from corpus_crawler.config import ConfigError
from corpus_crawler.dedup import DedupConfig, Deduplicator, ParagraphFate, Verdict
from corpus_crawler.model import Document, Paragraph, ParagraphClass
from pipelines.drops import drop_for
from pipelines.items import CorpusDocument

__all__ = ["DedupPipeline", "DedupSettings"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class DedupSettings:
    config: DedupConfig
    directory: Path

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> DedupSettings:
        if not settings.getbool("CORPUS_DEDUP_ENABLED", True):
            raise NotConfigured(
                "dedup is off: set dedup.enabled: true in the profile (CORPUS_DEDUP_ENABLED=True)"
            )
        if not settings.getbool("CORPUS_EXTRACT_TEXT", True):
            raise NotConfigured("dedup needs text: extraction.enabled is false")
        output = Path(settings.get("CORPUS_OUTPUT_DIR") or "output")
        directory = settings.get("CORPUS_DEDUP_STATE_DIR") or output / "state" / "dedup"
        try:
            config = DedupConfig(
                exact=settings.getbool("CORPUS_DEDUP_EXACT", True),
                near_documents=settings.getbool("CORPUS_DEDUP_NEAR_DOCUMENTS", True),
                near_threshold=settings.getfloat("CORPUS_DEDUP_NEAR_THRESHOLD", 0.8),
                near_seen_share=settings.getfloat("CORPUS_DEDUP_NEAR_SEEN_SHARE", 0.9),
                paragraphs=settings.get("CORPUS_DEDUP_PARAGRAPHS", "remove"),
                paragraph_threshold=settings.getfloat("CORPUS_DEDUP_PARAGRAPH_THRESHOLD", 0.5),
                paragraph_ngram=settings.getint("CORPUS_DEDUP_PARAGRAPH_NGRAM", 7),
                paragraph_filter_mib=settings.getint("CORPUS_DEDUP_PARAGRAPH_FILTER_MIB", 256),
                paragraph_language=settings.get("CORPUS_DEDUP_PARAGRAPH_LANGUAGE", "remove"),
                paragraph_language_min_words=settings.getint(
                    "CORPUS_DEDUP_PARAGRAPH_LANGUAGE_MIN_WORDS", 12
                ),
            )
        except ConfigError as exc:
            raise ConfigError(f"CORPUS_DEDUP_* settings: {exc}") from None
        return cls(config=config, directory=Path(directory))


def _marked(paragraph: Paragraph, fate: ParagraphFate, value: float) -> Paragraph:
    key = "dup" if fate is ParagraphFate.DUPLICATE else "langdiff"
    return dataclasses.replace(paragraph, scores={**paragraph.scores, key: value})


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
        elif fate.fate is ParagraphFate.DUPLICATE:
            paragraphs.append(_marked(paragraph, fate.fate, fate.seen_share or 0.0))
        else:
            paragraphs.append(_marked(paragraph, fate.fate, 1.0))
    return dataclasses.replace(document, paragraphs=tuple(paragraphs))


class DedupPipeline:
    def __init__(self, crawler: Crawler, settings: DedupSettings) -> None:
        self.stats = crawler.stats
        self.settings = settings
        self.dedup: Deduplicator | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> DedupPipeline:
        return cls(crawler, DedupSettings.from_settings(crawler.settings))

    def open_spider(self) -> None:
        self.dedup = Deduplicator(
            self.settings.config, self.settings.directory, keep_same_name=True
        )
        stored = self.dedup.stored_documents
        logger.info(
            "dedup: state in %s (%d document(s) kept by earlier runs)",
            self.settings.directory,
            stored,
        )

    def close_spider(self) -> None:
        if self.dedup is None:
            return
        counts = self.dedup.counts
        rate = self.dedup.filter_false_positive_rate()
        self.dedup.close()
        self.dedup = None
        if rate is not None:
            self.stats.set_value("corpus/dedup/ngram_filter_fp_rate", rate)
        logger.info(
            "dedup: %d document(s) checked, %d kept, %d duplicate, %d near-duplicate,"
            " %d emptied; %d of %d paragraph(s) removed (%d seen before, %d in another"
            " language)",
            counts.documents,
            counts.kept,
            counts.exact,
            counts.near,
            counts.emptied,
            counts.paragraphs_removed,
            counts.paragraphs,
            counts.paragraphs_duplicate,
            counts.paragraphs_foreign,
        )

    def process_item(self, item: Any) -> Any:
        if not isinstance(item, CorpusDocument) or self.dedup is None:
            return item
        stats = self.stats
        document = item.document
        good = document.good_paragraphs
        verdict = self.dedup.check(item.page.url, [p.text for p in good], document.language)
        stats.inc_value("corpus/dedup/documents")
        duplicates = sum(p.fate is ParagraphFate.DUPLICATE for p in verdict.paragraphs)
        foreign = sum(p.fate is ParagraphFate.FOREIGN for p in verdict.paragraphs)
        if duplicates:
            stats.inc_value("corpus/dedup/paragraphs_seen", duplicates)
        if foreign:
            stats.inc_value("corpus/dedup/paragraphs_foreign", foreign)
        if verdict.drop is not None:
            stats.inc_value(f"corpus/dropped/{verdict.drop}")
            # ExtractPipeline counted it as kept: the corpus counts follow the corpus files
            stats.inc_value("corpus/docs_kept", -1)
            stats.inc_value("corpus/paragraphs_good", -len(good))
            stats.inc_value("corpus/words", -item.words)
            stats.inc_value("corpus/bytes_clean", -item.clean_bytes)
            raise drop_for(verdict.drop, verdict.detail, item.page.url)
        if not verdict.changed:
            return item
        new_document = apply_verdict(document, verdict)
        kept = new_document.good_paragraphs
        removed = len(good) - len(kept)
        words = sum(p.word_count for p in kept)
        clean_bytes = len(new_document.text.encode("utf-8"))
        if removed:
            stats.inc_value("corpus/dedup/paragraphs_removed", removed)
            stats.inc_value("corpus/paragraphs_good", -removed)
            stats.inc_value("corpus/words", words - item.words)
            stats.inc_value("corpus/bytes_clean", clean_bytes - item.clean_bytes)
        return dataclasses.replace(
            item,
            document=new_document,
            words=words,
            clean_bytes=clean_bytes,
            # the worker formatted the old paragraphs: the writer formats the new ones
            vertical_text=None if removed else item.vertical_text,
        )
