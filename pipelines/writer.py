"""The one writer path of a crawl: a thread that owns every output file.

Components hand it work (`submit_exchange` from the WARC capture middleware,
`submit_document` from the output pipelines) through a queue and return at
once, so file writes never run on the reactor thread. The thread writes in
submission order, which is what lets a conversion record name the response
record it comes from: the exchange is always written first.

The output folder is locked (``.corpus-crawler.lock``) for the crawl, so that
the crash recovery run at start-up (`corpus_crawler.warc.recover`,
`corpus_crawler.vertical.recover`) never touches files another live crawl is
writing.

Settings: CORPUS_OUTPUT_DIR, CORPUS_OUTPUT_KEEP_ALL_PARAGRAPHS,
CORPUS_OUTPUT_QUEUE_SIZE, CORPUS_WARC_* (ENABLED, PREFIX, MAX_FILE_BYTES,
CONVERSION, METADATA), CORPUS_PREVERTICAL_* (ENABLED, MAX_FILE_BYTES),
CORPUS_VERTICAL_* (ENABLED, SENTENCES, MAX_FILE_BYTES).
"""

from __future__ import annotations

import logging
import queue
import threading
import weakref
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.settings import BaseSettings
from twisted.internet.defer import Deferred

from corpus_crawler.vertical import VerticalConfig, VerticalFormat, VerticalWriter
from corpus_crawler.vertical import recover as recover_vertical
from corpus_crawler.warc import (
    CrawlInfo,
    Exchange,
    ExchangeRecords,
    RobotsPolicy,
    WarcConfig,
    WarcWriter,
)
from corpus_crawler.warc import recover as recover_warc
from pipelines.glue import deferred_from_future
from pipelines.items import CorpusDocument, doc_meta

__all__ = ["OutputFiles", "OutputSettings", "OutputWriter"]

logger = logging.getLogger(__name__)

LOCK_NAME = ".corpus-crawler.lock"


@dataclass(frozen=True, slots=True)
class OutputSettings:
    directory: Path
    warc: WarcConfig | None
    warc_conversion: bool
    prevertical: VerticalConfig | None
    vertical: VerticalConfig | None
    queue_size: int

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> OutputSettings:
        directory = Path(settings.get("CORPUS_OUTPUT_DIR") or "output")
        prefix = settings.get("CORPUS_WARC_PREFIX") or "corpus"
        keep_all = settings.getbool("CORPUS_OUTPUT_KEEP_ALL_PARAGRAPHS")
        warc: WarcConfig | None = None
        if settings.getbool("CORPUS_WARC_ENABLED", True):
            warc = WarcConfig(
                directory,
                prefix=prefix,
                max_bytes=settings.getint("CORPUS_WARC_MAX_FILE_BYTES", 1_000_000_000),
                info=CrawlInfo(
                    profile_name=settings.get("CORPUS_PROFILE_NAME") or "",
                    profile=settings.getdict("CORPUS_PROFILE_DATA") or None,
                    robots=RobotsPolicy.CLASSIC
                    if settings.getbool("ROBOTSTXT_OBEY")
                    else RobotsPolicy.IGNORE,
                    user_agent=settings.get("USER_AGENT") or "",
                    operator=settings.get("CORPUS_WARC_OPERATOR") or "",
                    publisher=settings.get("CORPUS_WARC_PUBLISHER") or "",
                    http_header_from=settings.get("CORPUS_WARC_HTTP_HEADER_FROM") or "",
                ),
                paragraph_metadata=settings.getbool("CORPUS_WARC_METADATA"),
                cdxj=settings.getbool("CORPUS_WARC_CDXJ", True),
            )
        prevertical: VerticalConfig | None = None
        if settings.getbool("CORPUS_PREVERTICAL_ENABLED", True):
            prevertical = VerticalConfig(
                directory,
                format=VerticalFormat.PREVERTICAL,
                prefix=prefix,
                max_bytes=settings.getint("CORPUS_PREVERTICAL_MAX_FILE_BYTES", 1_000_000_000),
                all_paragraphs=keep_all,
            )
        vertical: VerticalConfig | None = None
        if settings.getbool("CORPUS_VERTICAL_ENABLED"):
            vertical = VerticalConfig(
                directory,
                format=VerticalFormat.VERTICAL,
                prefix=prefix,
                max_bytes=settings.getint("CORPUS_VERTICAL_MAX_FILE_BYTES", 1_000_000_000),
                all_paragraphs=keep_all,
                sentences=settings.getbool("CORPUS_VERTICAL_SENTENCES"),
            )
        return cls(
            directory=directory,
            warc=warc,
            warc_conversion=settings.getbool("CORPUS_WARC_CONVERSION", True),
            prevertical=prevertical,
            vertical=vertical,
            # each queued exchange holds its body: 1000 pages is ~100 MB at most
            queue_size=settings.getint("CORPUS_OUTPUT_QUEUE_SIZE", 1000),
        )


@dataclass(frozen=True, slots=True)
class OutputFiles:
    """What the writer thread wrote, once it is closed."""

    warc: tuple[Path, ...] = ()
    #: The text (WET-like) files and the CDXJ indexes beside the WARC files.
    warc_text: tuple[Path, ...] = ()
    warc_index: tuple[Path, ...] = ()
    prevertical: tuple[Path, ...] = ()
    vertical: tuple[Path, ...] = ()
    counts: dict[str, int] = field(default_factory=dict)
    errors: tuple[str, ...] = ()


class _Lock:
    """An exclusive lock on the output folder, held for the whole crawl."""

    def __init__(self, directory: Path) -> None:
        self.path = directory / LOCK_NAME
        self._handle: IO[str] | None = None

    def acquire(self) -> None:
        handle = open(self.path, "a+", encoding="utf-8")  # noqa: SIM115 - held until release()
        try:
            import fcntl
        except ImportError:  # not POSIX: no locking, recovery still runs
            self._handle = handle
            return
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()
            raise RuntimeError(
                f"another crawl is writing to {self.path.parent}: give this one its own"
                " output folder (-o OUTDIR or output.directory in the profile)"
            ) from None
        self._handle = handle

    def release(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None
            self.path.unlink(missing_ok=True)


_Task = Callable[[], None]
_STOP = object()
_writers: weakref.WeakKeyDictionary[Crawler, OutputWriter] = weakref.WeakKeyDictionary()


class OutputWriter:
    """Owns the WARC and (pre)vertical writers; every write happens on its thread."""

    def __init__(self, settings: OutputSettings) -> None:
        self.settings = settings
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=settings.queue_size)
        self._thread = threading.Thread(target=self._loop, name="corpus-writer", daemon=True)
        self._lock = _Lock(settings.directory)
        self._closed: Future[OutputFiles] = Future()
        self._closing = False
        self._counts: dict[str, int] = {}
        self._errors: list[str] = []
        self._warc: WarcWriter | None = None
        self._prevertical: VerticalWriter | None = None
        self._vertical: VerticalWriter | None = None

    # -- lifecycle (reactor thread) --------------------------------------------------------

    @classmethod
    def for_crawler(cls, crawler: Crawler) -> OutputWriter:
        """The crawl's writer, created and started on first use; closed at spider_closed."""
        writer = _writers.get(crawler)
        if writer is None:
            writer = cls(OutputSettings.from_settings(crawler.settings))
            writer.start()
            _writers[crawler] = writer
            crawler.signals.connect(writer._on_spider_closed, signal=signals.spider_closed)
        return writer

    @classmethod
    def existing(cls, crawler: Crawler) -> OutputWriter | None:
        return _writers.get(crawler)

    def start(self) -> None:
        settings = self.settings
        settings.directory.mkdir(parents=True, exist_ok=True)
        self._lock.acquire()
        index = settings.warc is not None and settings.warc.cdxj  # WARCs left without a CDXJ
        recovered_files = recover_warc(settings.directory, index=index)
        for recovered in [*recovered_files, *recover_vertical(settings.directory)]:
            logger.warning("recovered a file left by an earlier crawl: %s", recovered)
        if settings.warc is not None:
            self._warc = WarcWriter(settings.warc)
        if settings.prevertical is not None:
            self._prevertical = VerticalWriter(settings.prevertical)
        if settings.vertical is not None:
            self._vertical = VerticalWriter(settings.vertical)
        self._thread.start()

    async def _on_spider_closed(self) -> None:
        from scrapy.utils.defer import maybe_deferred_to_future

        await maybe_deferred_to_future(self.close())

    def close(self) -> Deferred[OutputFiles]:
        """Finish every file; the Deferred fires with the `OutputFiles`. Idempotent."""
        if not self._closing:
            self._closing = True
            self._queue.put(_STOP)
        return deferred_from_future(self._closed)

    # -- submissions (reactor thread) ------------------------------------------------------

    def _put(self, task: _Task) -> None:
        if self._closing:
            logger.debug("output already closed; a late write is skipped")
            return
        try:
            self._queue.put_nowait(task)
        except queue.Full:
            # Back-pressure: the disk is slower than the crawl. Blocking here is rare
            # and bounded, and better than unbounded memory.
            logger.warning(
                "output queue full (%d): waiting for the writer", self.settings.queue_size
            )
            self._queue.put(task)

    def submit_exchange(self, exchange: Exchange) -> Future[ExchangeRecords | None]:
        """Queue the request and response records of one exchange."""
        future: Future[ExchangeRecords | None] = Future()
        warc = self._warc
        if warc is None:
            future.set_result(None)
            return future

        def task() -> None:
            records = warc.write_exchange(exchange)
            self._count("warc/exchanges")
            future.set_result(records)

        self._put(_guarded(task, future, self._fail))
        return future

    def submit_document(self, item: CorpusDocument, *, warc: bool, vertical: bool) -> None:
        """Queue the conversion record and/or the (pre)vertical text of a kept document."""
        page = item.page
        writers = [
            (name, writer)
            for name, writer in (("prevertical", self._prevertical), ("vertical", self._vertical))
            if writer is not None and vertical
        ]
        warc_writer = self._warc if warc and self.settings.warc_conversion else None
        if warc_writer is None and not writers:
            return
        meta = doc_meta(page, item.doc_id)

        def task() -> None:
            if warc_writer is not None:
                exchange = page.exchange
                # done already: this thread wrote the exchange before it got here
                records = exchange.result() if exchange is not None and exchange.done() else None
                if records is None:
                    self._count("warc/conversions_without_response")
                else:
                    warc_writer.write_document(
                        item.document,
                        refers_to=records.response_id,
                        url=page.url,
                        date=page.fetched_at,
                    )
                    self._count("warc/conversions")
            for name, writer in writers:
                if name == "vertical" and item.vertical_text is not None:
                    # tokenised in the worker process already
                    written = writer.write_formatted(item.vertical_text)
                else:
                    written = writer.write(item.document, meta)
                if written:
                    self._count(f"{name}/documents")

        self._put(_guarded(task, None, self._fail))

    # -- the thread ------------------------------------------------------------------------

    def _count(self, key: str) -> None:
        self._counts[key] = self._counts.get(key, 0) + 1

    def _fail(self, error: BaseException) -> None:
        self._count("errors")
        message = f"{type(error).__name__}: {error}"
        if len(self._errors) < 20:
            self._errors.append(message)
        logger.error("output write failed: %s", message, exc_info=error)

    def _loop(self) -> None:
        while True:
            task = self._queue.get()
            if task is _STOP:
                break
            task()
        files = OutputFiles()
        try:
            for writer in (self._warc, self._prevertical, self._vertical):
                if writer is not None:
                    writer.close()
            files = OutputFiles(
                warc=self._warc.files if self._warc else (),
                warc_text=self._warc.text_files if self._warc else (),
                warc_index=self._warc.index_files if self._warc else (),
                prevertical=self._prevertical.files if self._prevertical else (),
                vertical=self._vertical.files if self._vertical else (),
                counts=dict(self._counts),
                errors=tuple(self._errors),
            )
        except BaseException as exc:  # a close error must still release the crawl
            self._fail(exc)
            files = OutputFiles(counts=dict(self._counts), errors=tuple(self._errors))
        finally:
            self._lock.release()
            self._closed.set_result(files)


def _guarded(
    task: _Task, future: Future[Any] | None, fail: Callable[[BaseException], None]
) -> _Task:
    def run() -> None:
        try:
            task()
        except BaseException as exc:  # a failed write is logged and counted, never fatal
            fail(exc)
            if future is not None and not future.done():
                future.set_exception(exc)

    return run
