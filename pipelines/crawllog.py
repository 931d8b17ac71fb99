"""The crawl log (`corpus_crawler.crawllog`) fed from Scrapy: one line per fetch attempt.

* `CrawlLogExtension` (`CORPUS_CRAWL_LOG_ENABLED`, default on) owns the log
  file (``<prefix>-<timestamp>-00000-<host>.crawl.log`` in the output folder,
  then ``-00001-``... each time it reaches `CORPUS_CRAWL_LOG_MAX_FILE_BYTES`)
  and completes a page's line when its outcome is known: `item_scraped` (a
  kept document), `item_dropped` (with the typed drop reason), `spider_error`;
  what is still waiting when the spider closes is logged as ``no-item``.
  `request_dropped` (the scheduler's duplicate filter) for a redirect to a page
  already fetched is logged as ``refused:duplicate`` (repeated links are not).
* `CrawlLogMiddleware`, a downloader middleware next to the downloader, sees
  every response as received (redirects and HTTP errors included: they are
  logged at once) and every refused or failed request (`process_exception`:
  robots.txt, scope and address refusals, the size cap, network errors).
* The campaign's writer, deciding on its own thread that a request waits for a
  later attempt, writes ``deferred:<reason>`` (`decided`: ``network`` after a
  network error, ``robots-unreachable`` for a page not fetched because its
  host's robots.txt is unreachable), with ``due=`` the time it is due again;
  such a page whose attempts are used up gets ``dropped:robots-unreachable``.
  A page refused for an unreachable robots.txt has no line of its own: nothing
  was sent, and its robots.txt fetch has its line.

Lines are appended on the reactor thread (a list append) and written by the
log's own thread once a second.
"""

from __future__ import annotations

import collections
import logging
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from scrapy import Request, signals
from scrapy.crawler import Crawler
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.http import Response

from corpus_crawler.crawllog import (
    DEFAULT_MAX_BYTES,
    CrawlLogEntry,
    CrawlLogWriter,
    recover_crawl_logs,
)
from pipelines.drops import CorpusDrop
from pipelines.items import CorpusDocument
from pipelines.robots import RobotsTxtUnreachable

__all__ = ["CrawlLogExtension", "CrawlLogMiddleware", "CrawlLogSettings"]

logger = logging.getLogger(__name__)

#: Failed attempts whose discovery path is kept for the writer's decision on them
#: (a few hundred bytes each); the writer decides within a commit interval.
_MAX_FAILED = 10_000


@dataclass(frozen=True, slots=True)
class CrawlLogSettings:
    directory: Path
    prefix: str
    seeds: frozenset[str]
    #: The log goes on in a new file once one holds this many bytes.
    max_file_bytes: int = DEFAULT_MAX_BYTES

    @classmethod
    def from_settings(cls, settings: Any) -> CrawlLogSettings:
        max_file_bytes = settings.getint("CORPUS_CRAWL_LOG_MAX_FILE_BYTES", DEFAULT_MAX_BYTES)
        if max_file_bytes <= 0:
            raise ValueError(
                "CORPUS_CRAWL_LOG_MAX_FILE_BYTES (output.crawl_log_max_file_bytes) must be"
                f" a number of bytes > 0, got {max_file_bytes}"
            )
        return cls(
            directory=Path(settings.get("CORPUS_OUTPUT_DIR") or "output"),
            prefix=settings.get("CORPUS_WARC_PREFIX") or "corpus",
            seeds=frozenset(settings.getlist("CORPUS_SEEDS_URLS")),
            max_file_bytes=max_file_bytes,
        )


def _now() -> datetime:
    return datetime.now(timezone.utc)


def _header(response: Response, name: bytes) -> str | None:
    value = response.headers.get(name)
    return value.decode("latin-1") if value else None


def _mime(response: Response) -> str | None:
    content_type = _header(response, b"Content-Type")
    return content_type.partition(";")[0].strip().lower() or None if content_type else None


def discovery(
    request: Request, seeds: frozenset[str], sitemaps: frozenset[str] | set[str] = frozenset()
) -> tuple[str, str | None]:
    """(Heritrix-style hop path, via URL) of a request; `sitemaps`: sitemap URLs read."""
    meta = request.meta
    redirects = list(meta.get("redirect_urls") or [])
    first_url = redirects[0] if redirects else request.url
    referer = request.headers.get(b"Referer")
    via = referer.decode("latin-1") if referer else None
    if meta.get("dont_obey_robotstxt") and first_url.endswith("/robots.txt"):
        path = "P"
    elif meta.get("corpus_sitemap"):
        path = "S"
    elif via is not None and via in sitemaps:
        # Scrapy's RefererMiddleware names the sitemap a page was listed in
        path = "S"
    else:
        depth = int(meta.get("depth") or 0)
        if depth == 0:
            path = "" if first_url in seeds or first_url.partition("#")[0] in seeds else "S"
        else:
            path = "L" * depth
    path += "R" * len(redirects)
    if redirects:
        via = redirects[-1]
    # Heritrix keeps the last 50 hops
    return path[-50:], via


def _refusal(exception: Exception) -> str:
    message = str(exception)
    if "robots.txt" in message:
        return "refused:robots"
    if "offsite" in message.lower():
        return "refused:offsite"
    if message.startswith("refused (") or message.startswith("redirect out of scope ("):
        return "refused:" + message.split("(", 1)[1].split(")", 1)[0]
    return "refused:" + (message.split(":", 1)[0].strip().replace(" ", "-") or "ignored")


def _error(exception: BaseException) -> str:
    from scrapy.exceptions import DownloadCancelledError

    if isinstance(exception, DownloadCancelledError):
        return "refused:too-large"
    return f"error:{type(exception).__name__}"


@dataclass(slots=True)
class _Pending:
    request: Request
    entry: CrawlLogEntry


class CrawlLogExtension:
    def __init__(self, crawler: Crawler, settings: CrawlLogSettings) -> None:
        self.crawler = crawler
        self.settings = settings
        self.writer: CrawlLogWriter | None = None
        self._pending: dict[int, _Pending] = {}
        self._sitemaps: set[str] = set()
        #: URL -> (discovery path, via) of failed attempts the campaign's writer may
        #: still decide on (`decided`), so that its ``deferred:`` line says how the URL
        #: was found as the attempt's own line does. Bounded: an attempt that is not
        #: deferred leaves its entry until newer ones push it out.
        self._failed: collections.OrderedDict[str, tuple[str, str | None]] = (
            collections.OrderedDict()
        )

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> CrawlLogExtension:
        if not crawler.settings.getbool("CORPUS_CRAWL_LOG_ENABLED", True):
            raise NotConfigured(
                "the crawl log is off: set output.crawl_log: true in the profile"
                " (or CORPUS_CRAWL_LOG_ENABLED=True)"
            )
        extension = cls(crawler, CrawlLogSettings.from_settings(crawler.settings))
        connect = crawler.signals.connect
        connect(extension.spider_opened, signal=signals.spider_opened)
        connect(extension.item_scraped, signal=signals.item_scraped)
        connect(extension.item_dropped, signal=signals.item_dropped)
        connect(extension.spider_error, signal=signals.spider_error)
        connect(extension.item_error, signal=signals.item_error)
        connect(extension.request_dropped, signal=signals.request_dropped)
        connect(extension.spider_closed, signal=signals.spider_closed)
        return extension

    # -- lifecycle ---------------------------------------------------------------------------

    def spider_opened(self) -> None:
        directory = self.settings.directory
        directory.mkdir(parents=True, exist_ok=True)
        for recovered in recover_crawl_logs(directory):
            logger.warning("recovered a crawl log left by an earlier crawl: %s", recovered)
        self.writer = CrawlLogWriter(
            directory, prefix=self.settings.prefix, max_bytes=self.settings.max_file_bytes
        ).start()

    def spider_closed(self) -> None:
        for pending in list(self._pending.values()):
            self._write(pending.entry, "no-item")
        self._pending.clear()
        if self.writer is not None:
            self.writer.close()
            if self.writer.files:
                self.crawler.stats.set_value("corpus/crawl_log_path", str(self.writer.files[-1]))

    @property
    def path(self) -> Path | None:
        """The log file: the ``*.open`` one during the crawl, the final one after."""
        if self.writer is None:
            return None
        return self.writer.current_path or (self.writer.files[-1] if self.writer.files else None)

    @property
    def paths(self) -> tuple[Path, ...]:
        """Every file of this run's log in order (rotated at `max_file_bytes`), the
        ``*.open`` one being written last."""
        return self.writer.paths if self.writer is not None else ()

    # -- from the middleware -----------------------------------------------------------------

    def response(self, request: Request, response: Response, duration_ms: int | None) -> None:
        if request.meta.get("corpus_sitemap"):
            self._sitemaps.add(response.url)
        path, via = discovery(request, self.settings.seeds, self._sitemaps)
        entry = CrawlLogEntry(
            time=_now(),
            status=response.status,
            url=response.url,
            outcome="",
            size=len(response.body),
            discovery=path,
            via=via,
            mime=_mime(response),
            duration_ms=duration_ms,
        )
        status = response.status
        if 300 <= status < 400 and b"Location" in response.headers:
            self._write(entry, "redirect")
        elif status < 200 or status >= 300:
            self._write(entry, f"error:http-{status}")
        elif not _is_page(request):  # robots.txt and sitemaps: no item will follow
            self._write(entry, "fetched")
        else:
            self._pending[id(request)] = _Pending(request, entry)

    def failure(self, request: Request, exception: Exception, duration_ms: int | None) -> None:
        path, via = discovery(request, self.settings.seeds, self._sitemaps)
        if isinstance(exception, RobotsTxtUnreachable):
            # nothing was sent; the writer logs the deferral (`decided`)
            self._remember_failed(request.url, path, via)
            return
        if not isinstance(exception, IgnoreRequest):  # a network error: may be deferred
            self._remember_failed(request.url, path, via)
        outcome = _refusal(exception) if isinstance(exception, IgnoreRequest) else _error(exception)
        entry = CrawlLogEntry(
            time=_now(),
            status=0,
            url=request.url,
            outcome="",
            discovery=path,
            via=via,
            duration_ms=duration_ms,
            annotations={"detail": str(exception)[:200]} if outcome.startswith("error") else {},
        )
        self._write(entry, outcome)

    def decided(self, url: str, outcome: str, due: float | None) -> None:
        """The writer's decision on a request (called on its thread): ``deferred:<reason>``
        with the time it is due again, or the drop a deferred request ended in."""
        notes = {}
        if due is not None:
            moment = datetime.fromtimestamp(due, timezone.utc)
            notes["due"] = moment.isoformat(timespec="seconds").replace("+00:00", "Z")
        # a dict's pop is atomic under the GIL: the reactor thread may add meanwhile
        path, via = self._failed.pop(url, ("", None))  # unknown: written as "-"
        entry = CrawlLogEntry(time=_now(), status=0, url=url, outcome="", discovery=path, via=via)
        self._write(entry, outcome, notes)

    def _remember_failed(self, url: str, path: str, via: str | None) -> None:
        failed = self._failed
        # pop, then add at the end: each step one call, atomic against the writer's pop
        failed.pop(url, None)
        failed[url] = (path, via)
        while len(failed) > _MAX_FAILED:
            failed.popitem(last=False)

    def request_dropped(self, request: Request) -> None:
        if not request.meta.get("redirect_urls"):
            # A link to a page already seen: the campaign scheduler is the duplicate
            # filter of every link, and one line per repeated link is noise, not a URL's
            # outcome. A redirect to a page already fetched is an outcome of its own.
            return
        path, via = discovery(request, self.settings.seeds, self._sitemaps)
        entry = CrawlLogEntry(
            time=_now(), status=0, url=request.url, outcome="", discovery=path, via=via
        )
        self._write(entry, "refused:duplicate")

    # -- outcomes ----------------------------------------------------------------------------

    def _take(self, response: Response | None) -> CrawlLogEntry | None:
        request = getattr(response, "request", None)
        if request is None:
            return None
        pending = self._pending.pop(id(request), None)
        return pending.entry if pending is not None else None

    def item_scraped(self, item: Any, response: Response | None = None) -> None:
        entry = self._take(response)
        if entry is None:
            return
        if isinstance(item, CorpusDocument):
            document = item.document
            notes = {"doc": item.doc_id, "words": str(item.words), "clean": str(item.clean_bytes)}
            if document.language:
                notes["lang"] = document.language
            if document.published:
                notes["published"] = document.published
            self._write(entry, "kept", notes)
        else:  # a FetchedPage passed on without extraction (extraction.enabled: false)
            self._write(entry, "fetched")

    def item_dropped(
        self, item: Any, exception: BaseException, response: Response | None = None
    ) -> None:
        entry = self._take(response)
        if entry is None:
            return
        if isinstance(exception, CorpusDrop):
            reason = str(exception.reason)
        else:
            reason = type(exception).__name__
        self._write(entry, f"dropped:{reason}")

    def spider_error(self, failure: Any, response: Response | None = None) -> None:
        entry = self._take(response)
        if entry is not None:
            self._write(entry, f"error:callback-{failure.type.__name__}")

    def item_error(self, item: Any, response: Response | None, failure: Any) -> None:
        entry = self._take(response)
        if entry is not None:
            self._write(entry, f"error:pipeline-{failure.type.__name__}")

    def _write(
        self, entry: CrawlLogEntry, outcome: str, notes: dict[str, str] | None = None
    ) -> None:
        if self.writer is None:
            return
        annotations = {**entry.annotations, **(notes or {})}
        self.writer.append(
            CrawlLogEntry(
                time=_now(),
                status=entry.status,
                url=entry.url,
                outcome=outcome,
                size=entry.size,
                discovery=entry.discovery,
                via=entry.via,
                mime=entry.mime,
                duration_ms=entry.duration_ms,
                annotations=annotations,
            )
        )


def _is_page(request: Request) -> bool:
    return not (request.meta.get("corpus_sitemap") or request.meta.get("dont_obey_robotstxt"))


class CrawlLogMiddleware:
    """Downloader middleware: hands every response and failure to the crawl log."""

    def __init__(self, log: CrawlLogExtension) -> None:
        self.log = log

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> CrawlLogMiddleware:
        if not crawler.settings.getbool("CORPUS_CRAWL_LOG_ENABLED", True):
            raise NotConfigured("the crawl log is off (CORPUS_CRAWL_LOG_ENABLED)")
        log = crawler.get_extension(CrawlLogExtension)
        if log is None:
            raise NotConfigured(
                "CrawlLogMiddleware needs pipelines.crawllog.CrawlLogExtension in EXTENSIONS"
            )
        return cls(log)

    def process_request(self, request: Request) -> None:
        request.meta.setdefault("corpus_crawl_log_start", time.monotonic())
        return None

    def _duration(self, request: Request) -> int | None:
        latency = request.meta.get("download_latency")
        if latency is not None:
            return round(float(latency) * 1000)
        started = request.meta.get("corpus_crawl_log_start")
        return round((time.monotonic() - started) * 1000) if started is not None else None

    def process_response(self, request: Request, response: Response) -> Response:
        self.log.response(request, response, self._duration(request))
        request.meta.pop("corpus_crawl_log_start", None)
        return response

    def process_exception(self, request: Request, exception: Exception) -> None:
        self.log.failure(request, exception, self._duration(request))
        request.meta.pop("corpus_crawl_log_start", None)
        return None
