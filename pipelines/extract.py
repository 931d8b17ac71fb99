"""ExtractPipeline: every HTML page goes through `extract()` once, in a worker process.

The worker also returns the page's links (one parse, off the reactor); the
pipeline hands them to the spider with the `links_extracted` signal before it
decides the page's fate, so pages without corpus text still lead somewhere.
A page that yields no text is dropped with a typed reason (`pipelines.drops`)
counted under ``corpus/dropped/<reason>``; a kept one becomes a
`CorpusDocument` for the writers.

Settings (`CORPUS_EXTRACT_*`): ENABLED (the pipeline; off, the spider extracts
links itself), TEXT (text extraction; off, workers only find links),
EXTRACTOR, PRESET, LANGUAGE, ACCEPT_LANGUAGES, PARAMETERS, OPTIONS, MAX_BYTES,
MIN_WORDS, WORKERS (0: one per core), MAX_IN_FLIGHT (0: 4 per worker),
PAGE_TIMEOUT, START_METHOD ("" = forkserver where available).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.settings import BaseSettings

from corpus_crawler.config import ConfigError, ExtractConfig, JustextParams, Preset
from corpus_crawler.model import DropReason
from corpus_crawler.vertical import VerticalConfig
from pipelines.drops import CorpusDrop, drop_for
from pipelines.items import CorpusDocument, FetchedPage, doc_meta, document_id
from pipelines.pool import PagePool, PoolCrashed, PoolTimeout, default_workers
from pipelines.signals import links_extracted
from pipelines.worker import PageTask, WorkerConfig
from pipelines.writer import OutputSettings

__all__ = ["ExtractPipeline", "ExtractSettings"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ExtractSettings:
    text: bool
    extract: ExtractConfig
    min_words: int
    workers: int
    max_in_flight: int
    page_timeout: float
    start_method: str
    follow_links: bool
    #: Return every paragraph from the workers (the writers need the non-good ones).
    all_paragraphs: bool
    #: The vertical file's settings when it is written: the workers format it.
    vertical: VerticalConfig | None = None

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> ExtractSettings:
        if not settings.getbool("CORPUS_EXTRACT_ENABLED", True):
            raise NotConfigured(
                "the extraction pipeline is off (CORPUS_EXTRACT_ENABLED=False): pages are"
                " archived and links followed, but no text is extracted; set"
                " CORPUS_EXTRACT_ENABLED=True to turn it on"
            )
        parameters = settings.getdict("CORPUS_EXTRACT_PARAMETERS")
        try:
            extract = ExtractConfig(
                extractor=settings.get("CORPUS_EXTRACT_EXTRACTOR", "justext"),
                preset=Preset.parse(settings.get("CORPUS_EXTRACT_PRESET", "seed")),
                language=settings.get("CORPUS_EXTRACT_LANGUAGE", "auto") or None,
                params=JustextParams().merged(parameters, "CORPUS_EXTRACT_PARAMETERS")
                if parameters
                else None,
                accept_languages=frozenset(settings.getlist("CORPUS_EXTRACT_ACCEPT_LANGUAGES"))
                or None,
                extractor_options=settings.getdict("CORPUS_EXTRACT_OPTIONS"),
                max_bytes=settings.getint("CORPUS_EXTRACT_MAX_BYTES", 0)
                or max(settings.getint("DOWNLOAD_MAXSIZE"), 1),
            ).checked()
        except ConfigError as exc:
            raise ConfigError(f"CORPUS_EXTRACT_* settings: {exc}") from None
        workers = settings.getint("CORPUS_EXTRACT_WORKERS", 0) or default_workers()
        return cls(
            text=settings.getbool("CORPUS_EXTRACT_TEXT", True),
            extract=extract,
            min_words=settings.getint("CORPUS_EXTRACT_MIN_WORDS", 0),
            workers=workers,
            max_in_flight=settings.getint("CORPUS_EXTRACT_MAX_IN_FLIGHT", 0) or 4 * workers,
            page_timeout=settings.getfloat("CORPUS_EXTRACT_PAGE_TIMEOUT", 30.0),
            start_method=settings.get("CORPUS_EXTRACT_START_METHOD", ""),
            follow_links=settings.getbool("CORPUS_SCOPE_FOLLOW_LINKS", True),
            all_paragraphs=settings.getbool("CORPUS_OUTPUT_KEEP_ALL_PARAGRAPHS")
            or settings.getbool("CORPUS_WARC_METADATA"),
            vertical=OutputSettings.from_settings(settings).vertical,
        )

    def worker_config(self) -> WorkerConfig:
        return WorkerConfig(
            extract=self.extract if self.text else None,
            page_timeout=self.page_timeout,
            all_paragraphs=self.all_paragraphs,
            vertical=self.vertical,
        )


class ExtractPipeline:
    def __init__(self, crawler: Crawler, settings: ExtractSettings) -> None:
        self.crawler = crawler
        self.settings = settings
        self.stats = crawler.stats
        self.pool = PagePool(
            settings.worker_config(),
            workers=settings.workers,
            max_in_flight=settings.max_in_flight,
            start_method=settings.start_method,
        )

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ExtractPipeline:
        return cls(crawler, ExtractSettings.from_settings(crawler.settings))

    def open_spider(self) -> None:
        self.pool.start()
        logger.info(
            "extraction: %d worker(s) (%s), %d pages in flight at most, %g s per page",
            self.pool.workers,
            self.pool.start_method,
            self.pool.max_in_flight,
            self.settings.page_timeout,
        )

    async def close_spider(self) -> None:
        from scrapy.utils.defer import maybe_deferred_to_future

        await maybe_deferred_to_future(self.pool.shutdown())
        if self.pool.restarts:
            self.stats.set_value("corpus/worker_restarts", self.pool.restarts)

    def _drop(self, reason: DropReason, page: FetchedPage, detail: str = "") -> CorpusDrop:
        self.stats.inc_value(f"corpus/dropped/{reason}")
        return drop_for(reason, detail, page.url)

    async def process_item(self, item: Any) -> Any:
        if not isinstance(item, FetchedPage):
            return item
        stats = self.stats
        stats.inc_value("corpus/pages")
        if not item.is_html:
            raise self._drop(DropReason.NOT_HTML, item, item.content_type or "no Content-Type")
        stats.inc_value("corpus/pages_html")
        stats.inc_value("corpus/bytes_raw", item.size)
        doc_id = document_id(item.url)
        task = PageTask(
            url=item.url,
            body=item.body,
            http_charset=item.http_charset,
            links=self.settings.follow_links,
            meta=doc_meta(item, doc_id) if self.settings.vertical is not None else None,
        )
        try:
            result = await self.pool.run(task)
        except PoolTimeout as exc:
            raise self._drop(DropReason.TIMEOUT, item, str(exc)) from None
        except PoolCrashed as exc:
            raise self._drop(DropReason.EXTRACTOR_ERROR, item, str(exc)) from None
        except Exception as exc:  # a bad page is a counted drop, never a lost one
            logger.warning("extraction failed for %s: %r", item.url, exc)
            detail = f"{type(exc).__name__}: {exc}"[:300]
            raise self._drop(DropReason.EXTRACTOR_ERROR, item, detail) from None
        stats.inc_value("corpus/worker_cpu_ms", int(result.cpu_seconds * 1000))
        stats.inc_value("corpus/paragraphs_total", result.paragraph_count)
        if result.nofollow:
            stats.inc_value("corpus/links/nofollow_pages")
        if result.links:
            stats.inc_value("corpus/links/found", len(result.links))
            self.crawler.signals.send_catch_log(links_extracted, page=item, links=result.links)
        document = result.document
        if document is None:
            return item  # text extraction is off
        if document.drop_reason is not None:
            raise self._drop(document.drop_reason, item, document.drop_detail)
        good = document.good_paragraphs
        if not good:
            raise self._drop(DropReason.NO_GOOD_PARAGRAPH, item)
        words = sum(p.word_count for p in good)
        if words < self.settings.min_words:
            raise self._drop(
                DropReason.TOO_SHORT, item, f"{words} words < {self.settings.min_words}"
            )
        clean_bytes = len(document.text.encode("utf-8"))
        stats.inc_value("corpus/docs_kept")
        stats.inc_value("corpus/paragraphs_good", len(good))
        stats.inc_value("corpus/words", words)
        stats.inc_value("corpus/bytes_clean", clean_bytes)
        return CorpusDocument(
            page=item,
            document=document,
            doc_id=doc_id,
            words=words,
            clean_bytes=clean_bytes,
            vertical_text=result.vertical_text,
        )
