"""Page processing: every HTML page goes through `extract()` once, in a worker process.

* `PageProcessor` (an extension; the spider gets it with
  ``crawler.get_extension(PageProcessor)``): owns the process pool. The spider's
  callback awaits `PageProcessor.process(page, body)`, which returns the page's
  links (found in the same worker pass, off the reactor) and its item: a
  `CorpusDocument` for the writers, or a `DroppedPage` with its typed reason. The
  callback then yields the link requests (through Scrapy's spider middlewares and
  scheduler, like any request) and the item.
* `DropPipeline`: drops a `DroppedPage` with its typed `DropItem`
  (`pipelines.drops`), counted under ``corpus/dropped/<reason>``.
* `VerticalFormatPipeline` (after the dedup stage): the tokenised vertical text
  of each document dedup kept, formatted in a worker. With dedup on, the workers
  do not format it with the page: on duplicate-heavy sites most of that work was
  thrown away (`benchmarks/crawl_speed.py`), and dedup changes the paragraphs
  and marks of what it keeps. With dedup off they do, saving the round trip.

Settings (`CORPUS_EXTRACT_*`): ENABLED (the processor; off, the spider extracts
links itself), TEXT (text extraction; off, workers only find links),
EXTRACTOR, PRESET, LANGUAGE, ACCEPT_LANGUAGES, PARAMETERS, OPTIONS, MAX_BYTES,
MIN_WORDS, WORKERS (0: one per core), MAX_IN_FLIGHT (0: 4 per worker),
MAX_WAITING (pages waiting for a worker before no request is leased; 0: 4 x
MAX_IN_FLIGHT), PAGE_TIMEOUT, START_METHOD ("" = forkserver where available).
"""

from __future__ import annotations

import dataclasses
import logging
import os
from dataclasses import dataclass
from typing import Any

from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.settings import BaseSettings

from corpus_crawler.config import ConfigError, ExtractConfig, JustextParams, Preset
from corpus_crawler.dedup import DedupConfig
from corpus_crawler.model import DropReason
from corpus_crawler.vertical import VerticalConfig
from pipelines.drops import drop_for
from pipelines.items import (
    CorpusDocument,
    DroppedPage,
    FetchedPage,
    RequestDone,
    doc_meta,
    document_id,
)
from pipelines.pool import PagePool, PoolCrashed, PoolTimeout, default_workers, start_method_of
from pipelines.settingtypes import count_at_least
from pipelines.worker import PageTask, VerticalTask, WorkerConfig
from pipelines.writer import OutputSettings

__all__ = ["DropPipeline", "ExtractSettings", "PageProcessor", "VerticalFormatPipeline"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ExtractSettings:
    text: bool
    extract: ExtractConfig
    min_words: int
    workers: int
    max_in_flight: int
    #: Pages (and vertical texts) waiting for a worker slot, at most, before the
    #: scheduler stops leasing requests (`PageProcessor.backlog_full`).
    max_waiting: int
    page_timeout: float
    start_method: str
    follow_links: bool
    #: Return every paragraph from the workers (the writers need the non-good ones).
    all_paragraphs: bool
    #: The vertical file's settings when it is written: the workers format it.
    vertical: VerticalConfig | None = None
    #: The dedup stages' config when they run: the workers fingerprint documents.
    dedup: DedupConfig | None = None

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> ExtractSettings:
        if not settings.getbool("CORPUS_EXTRACT_ENABLED", True):
            raise NotConfigured(
                "the extraction pipeline is off (CORPUS_EXTRACT_ENABLED=False): pages are"
                " archived and links followed, but no text is extracted; set"
                " CORPUS_EXTRACT_ENABLED=True to turn it on"
            )
        parameters = settings.getdict("CORPUS_EXTRACT_PARAMETERS")
        from corpus_crawler.stoplists import accept_code

        try:
            extract = ExtractConfig(
                extractor=settings.get("CORPUS_EXTRACT_EXTRACTOR", "justext"),
                preset=Preset.parse(settings.get("CORPUS_EXTRACT_PRESET", "seed")),
                language=settings.get("CORPUS_EXTRACT_LANGUAGE", "auto") or None,
                params=JustextParams().merged(parameters, "CORPUS_EXTRACT_PARAMETERS")
                if parameters
                else None,
                # resolved as the profile's (`Czech`, `cs-CZ` -> cs): a raw `-s` value
                # naming no language would drop every document
                accept_languages=frozenset(
                    accept_code(name)
                    for name in settings.getlist("CORPUS_EXTRACT_ACCEPT_LANGUAGES")
                    if name.strip()
                )
                or None,
                extractor_options=settings.getdict("CORPUS_EXTRACT_OPTIONS"),
                max_bytes=settings.getint("CORPUS_EXTRACT_MAX_BYTES", 0)
                or max(settings.getint("DOWNLOAD_MAXSIZE"), 1),
            ).checked()
        except ConfigError as exc:
            raise ConfigError(f"CORPUS_EXTRACT_* settings: {exc}") from None
        workers = settings.getint("CORPUS_EXTRACT_WORKERS", 0) or default_workers()
        max_in_flight = settings.getint("CORPUS_EXTRACT_MAX_IN_FLIGHT", 0) or 4 * workers
        return cls(
            text=settings.getbool("CORPUS_EXTRACT_TEXT", True),
            extract=extract,
            min_words=settings.getint("CORPUS_EXTRACT_MIN_WORDS", 0),
            workers=workers,
            max_in_flight=max_in_flight,
            max_waiting=count_at_least(settings, "CORPUS_EXTRACT_MAX_WAITING", 0, 0)
            or 4 * max_in_flight,
            page_timeout=settings.getfloat("CORPUS_EXTRACT_PAGE_TIMEOUT", 30.0),
            start_method=start_method_of(settings.get("CORPUS_EXTRACT_START_METHOD", "")),
            follow_links=settings.getbool("CORPUS_SCOPE_FOLLOW_LINKS", True),
            all_paragraphs=settings.getbool("CORPUS_OUTPUT_KEEP_ALL_PARAGRAPHS")
            or settings.getbool("CORPUS_WARC_METADATA"),
            vertical=OutputSettings.from_settings(settings).vertical,
            dedup=_dedup_config(settings),
        )

    @property
    def vertical_with_page(self) -> bool:
        """The workers format the vertical text with the page. Not when dedup runs: it
        drops duplicates (most pages of some sites) and changes the text and marks of
        what it keeps, so `VerticalFormatPipeline` formats it after the verdict."""
        return self.vertical is not None and self.dedup is None

    def worker_config(self) -> WorkerConfig:
        return WorkerConfig(
            extract=self.extract if self.text else None,
            # the workers exit by themselves if this process dies (no orphans)
            crawl_pid=os.getpid(),
            page_timeout=self.page_timeout,
            all_paragraphs=self.all_paragraphs,
            vertical=self.vertical,
            dedup=self.dedup if self.text else None,
        )


def _dedup_config(settings: BaseSettings) -> DedupConfig | None:
    """The dedup pipeline's config (one reading of its settings), None when it is off."""
    from pipelines.dedup import DedupSettings

    try:
        return DedupSettings.from_settings(settings).config
    except NotConfigured:
        return None


class PageProcessor:
    """The extraction workers, as a crawl component (see the module docstring)."""

    def __init__(self, crawler: Crawler, settings: ExtractSettings) -> None:
        self.crawler = crawler
        self.settings = settings
        self.pool = PagePool(
            settings.worker_config(),
            workers=settings.workers,
            max_in_flight=settings.max_in_flight,
            start_method=settings.start_method,
        )

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> PageProcessor:
        processor = cls(crawler, ExtractSettings.from_settings(crawler.settings))
        crawler.signals.connect(processor.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(processor.spider_closed, signal=signals.spider_closed)
        return processor

    @property
    def stats(self) -> Any:
        return self.crawler.stats

    def spider_opened(self) -> None:
        self.pool.start()
        logger.info(
            "extraction: %d worker(s) (%s), %d pages in flight at most, %g s per page",
            self.pool.workers,
            self.pool.start_method,
            self.pool.max_in_flight,
            self.settings.page_timeout,
        )

    async def spider_closed(self) -> None:
        from scrapy.utils.defer import maybe_deferred_to_future

        await maybe_deferred_to_future(self.pool.shutdown())
        self.stats.set_value("corpus/extract/waiting_max", self.pool.waiting_max)
        if self.pool.restarts:
            self.stats.set_value("corpus/worker_restarts", self.pool.restarts)

    def backlog_full(self) -> bool:
        """Enough pages wait for a worker: the scheduler leases no request meanwhile.

        Scrapy stops downloading only when its scraper holds SCRAPER_SLOT_MAX_ACTIVE_SIZE
        bytes of bodies (~57 MB here: room for a big sitemap), ~11,500 pages of 5 KB,
        each holding ~90 KB of callback state while it waits: when downloads outran
        the workers, the crawl process grew by ~1 GB (benchmarks/soak.py)."""
        return self.pool.waiting >= self.settings.max_waiting

    @staticmethod
    def _drop(reason: DropReason, page: FetchedPage, detail: str = "") -> DroppedPage:
        return DroppedPage(
            url=page.url, reason=str(reason), detail=detail, row=page.row, size=page.size
        )

    async def process(
        self, page: FetchedPage, body: bytes
    ) -> tuple[tuple[str, ...], CorpusDocument | DroppedPage | RequestDone]:
        """The links of a page and its item: kept (`CorpusDocument`) or dropped."""
        stats = self.stats
        stats.inc_value("corpus/pages")
        if not page.is_html:
            return (), self._drop(DropReason.NOT_HTML, page, page.content_type or "no Content-Type")
        stats.inc_value("corpus/pages_html")
        stats.inc_value("corpus/bytes_raw", len(body))
        doc_id = document_id(page.url)
        task = PageTask(
            url=page.url,
            body=body,
            http_charset=page.http_charset,
            links=self.settings.follow_links,
            meta=doc_meta(page, doc_id) if self.settings.vertical_with_page else None,
        )
        try:
            result = await self.pool.run(task)
        except PoolTimeout as exc:
            return (), self._drop(DropReason.TIMEOUT, page, str(exc))
        except PoolCrashed as exc:
            return (), self._drop(DropReason.EXTRACTOR_ERROR, page, str(exc))
        except Exception as exc:  # a bad page is a counted drop, never a lost one
            logger.warning("extraction failed for %s: %r", page.url, exc)
            detail = f"{type(exc).__name__}: {exc}"[:300]
            return (), self._drop(DropReason.EXTRACTOR_ERROR, page, detail)
        stats.inc_value("corpus/worker_cpu_ms", int(result.cpu_seconds * 1000))
        stats.inc_value("corpus/paragraphs_total", result.paragraph_count)
        if result.nofollow:
            stats.inc_value("corpus/links/nofollow_pages")
        if result.links:
            stats.inc_value("corpus/links/found", len(result.links))
        links = result.links
        document = result.document
        if document is None:  # text extraction is off
            return links, RequestDone(page.url, page.row, "links-only")
        if document.drop_reason is not None:
            return links, self._drop(document.drop_reason, page, document.drop_detail)
        good = document.good_paragraphs
        if not good:
            return links, self._drop(DropReason.NO_GOOD_PARAGRAPH, page)
        words = sum(p.word_count for p in good)
        if words < self.settings.min_words:
            detail = f"{words} words < {self.settings.min_words}"
            return links, self._drop(DropReason.TOO_SHORT, page, detail)
        clean_bytes = len(document.text.encode("utf-8"))
        stats.inc_value("corpus/docs_kept")
        stats.inc_value("corpus/paragraphs_good", len(good))
        stats.inc_value("corpus/words", words)
        stats.inc_value("corpus/bytes_clean", clean_bytes)
        return links, CorpusDocument(
            page=page,
            document=document,
            doc_id=doc_id,
            words=words,
            clean_bytes=clean_bytes,
            vertical_text=result.vertical_text,
            fingerprint=result.fingerprint,
        )

    async def format_vertical(self, item: CorpusDocument) -> CorpusDocument:
        """`item` with its vertical text, formatted in a worker (after the dedup verdict:
        the document and marks are final). The item as it is when the vertical is off or
        already formatted; on a worker's failure too, and the writer formats it then
        (slower, on its thread, but nothing is lost)."""
        if self.settings.vertical is None or item.vertical_text is not None:
            return item
        task = VerticalTask.of(item.url, item.document, doc_meta(item, item.doc_id))
        try:
            formatted = await self.pool.run(task)
        except Exception as exc:
            logger.warning(
                "vertical text of %s not formatted by a worker (%s: %s); the writer formats it",
                item.url,
                type(exc).__name__,
                exc,
            )
            self.stats.inc_value("corpus/vertical/formatted_by_writer")
            return item
        self.stats.inc_value("corpus/worker_cpu_ms", int(formatted.cpu_seconds * 1000))
        self.stats.inc_value("corpus/vertical/formatted_after_dedup")
        if formatted.text is None:
            # nothing to write: the writer counts it as skipped, as it always did
            return item
        return dataclasses.replace(item, vertical_text=formatted.text)


class VerticalFormatPipeline:
    """Formats the vertical text of kept documents the workers did not format with
    their page (dedup on: see the module docstring), off the reactor thread."""

    def __init__(self, processor: PageProcessor) -> None:
        self.processor = processor

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> VerticalFormatPipeline:
        # Off by default (and in links-only crawls): no message, which Scrapy would
        # print as a WARNING on every such crawl.
        if not crawler.settings.getbool("CORPUS_VERTICAL_ENABLED"):
            raise NotConfigured()
        processor = crawler.get_extension(PageProcessor)
        if processor is None:
            raise NotConfigured()
        return cls(processor)

    async def process_item(self, item: Any) -> Any:
        if isinstance(item, CorpusDocument):
            return await self.processor.format_vertical(item)
        return item


class DropPipeline:
    """Drops each `DroppedPage` with its typed reason, counted under corpus/dropped/."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> DropPipeline:
        return cls(crawler)

    def process_item(self, item: Any) -> Any:
        if not isinstance(item, DroppedPage):
            return item
        reason = DropReason(item.reason)
        assert self.crawler.stats is not None
        self.crawler.stats.inc_value(f"corpus/dropped/{reason}")
        raise drop_for(reason, item.detail, item.url)
