"""Downloader middlewares that archive every exchange and account for cut responses.

* `WarcCaptureMiddleware` (950): hands every exchange that reached the
  downloader to the writer thread (redirects, 4xx/5xx, robots.txt, non-HTML,
  truncated bodies), with the status line and headers as received when
  `pipelines.download.CorpusDownloadHandler` fetched it.
* `SizeCapMiddleware` (945, so after the capture): a body the handler cut at
  DOWNLOAD_MAXSIZE is archived (``WARC-Truncated: length``), then counted as
  ``corpus/dropped/too-large`` and dropped; one cut at the download timeout as
  ``corpus/dropped/timeout``; one cut short by the server's close is retried
  like the download error it used to be (RETRY_TIMES; ``retry/reason_count/
  disconnected``), each attempt archived, and once the retries are spent counted
  as ``corpus/dropped/disconnected``. It also counts downloads another handler
  cancelled over the cap.
"""

from __future__ import annotations

import logging
from datetime import datetime, timezone
from typing import Any

from scrapy import Request
from scrapy.crawler import Crawler
from scrapy.downloadermiddlewares.retry import get_retry_request
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.http import Response

from corpus_crawler.model import DropReason
from corpus_crawler.recrawl import decide
from corpus_crawler.warc import Exchange, Truncation, header_pairs, new_record_id, payload_digest
from pipelines.download import WIRE_META_KEY, WireRecord, truncation_of
from pipelines.drops import log_download_drop
from pipelines.writer import CaptureFacts, OutputWriter

__all__ = ["SizeCapMiddleware", "WarcCaptureMiddleware", "exchange_of"]

logger = logging.getLogger(__name__)


def _header_pairs(headers: Any) -> list[tuple[bytes, bytes]]:
    return [(name, value) for name, values in headers.items() for value in values]


def _moment(epoch: float) -> datetime:
    return datetime.fromtimestamp(epoch, timezone.utc)


def exchange_of(request: Request, response: Response) -> Exchange:
    """The `Exchange` of a downloaded response: what went over the wire, as plain values."""
    wire: WireRecord | None = request.meta.get(WIRE_META_KEY)
    common: dict[str, Any] = {
        "url": response.url,
        "status": response.status,
        "body": response.body,
        "method": request.method,
        "request_headers": header_pairs(_header_pairs(request.headers)),
        "request_body": request.body,
        "http_version": response.protocol or "HTTP/1.1",
        "ip_address": str(response.ip_address) if response.ip_address else None,
        # the body is as sent (content coding kept), only de-chunked
        "body_decoded": False,
    }
    if wire is None:
        # Another download handler: Scrapy's view of the headers is all there is.
        cut = truncation_of(response)
        return Exchange(
            response_headers=header_pairs(_header_pairs(response.headers)),
            date=datetime.now(timezone.utc),
            truncated=Truncation(cut) if cut else None,
            **common,
        )
    sent, received = wire["sent_at"], wire["received_at"]
    if wire["request_headers"]:
        common["request_headers"] = header_pairs(wire["request_headers"])
    return Exchange(
        response_headers=header_pairs(wire["headers"]),
        status_line=wire["status_line"].decode("iso-8859-1"),
        date=_moment(received),
        request_date=_moment(sent),
        fetch_time_ms=max(0, round((received - sent) * 1000)),
        truncated=Truncation(wire["truncated"]) if wire["truncated"] else None,
        **common,
    )


class WarcCaptureMiddleware:
    """Queues each exchange for the WARC writer; its response record id goes in the meta.

    Closest to the downloader (order 950), so it sees every response before
    redirect, retry and decompression middlewares act on it, and every request
    with the headers the other middlewares added.
    """

    def __init__(self, writer: OutputWriter) -> None:
        self.writer = writer

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> WarcCaptureMiddleware:
        if not crawler.settings.getbool("CORPUS_WARC_ENABLED", True):
            raise NotConfigured(
                "WARC output is off: set output.warc.enabled: true in the profile"
                " (or CORPUS_WARC_ENABLED=True)"
            )
        return cls(OutputWriter.for_crawler(crawler))

    def process_response(self, request: Request, response: Response) -> Response:
        exchange = exchange_of(request, response)
        # Plain data only in the meta (a redirect or retry copies it into a request that
        # the campaign stores as JSON): the wire record goes, the time is text, and the
        # record ids are minted here so a conversion record can refer to the response.
        request.meta.pop(WIRE_META_KEY, None)
        assert exchange.date is not None
        request.meta["corpus_fetched_at"] = exchange.date.isoformat()
        response_id = new_record_id()
        request.meta["corpus_response_id"] = response_id
        row = request.meta.get("corpus_row")
        capture = self._capture(request, response, exchange) if row is not None else None
        self.writer.submit_exchange(
            exchange,
            row=row,
            request_id=new_record_id(),
            response_id=response_id,
            capture=capture,
        )
        return response

    def _capture(
        self, request: Request, response: Response, exchange: Exchange
    ) -> CaptureFacts | None:
        """Response or revisit: decided here, once, against the campaign's capture index;
        the spider reads ``corpus_change`` to skip pages that did not change."""
        store = self.writer.store
        if store is None or request.meta.get("corpus_sitemap"):
            return None
        previous = store.previous_capture(exchange.url)
        digest = same = None
        if 200 <= exchange.status < 300 and exchange.truncated is None:
            digest = payload_digest(exchange.body)
            same = store.payload_capture(digest)
        decision = decide(exchange.status, digest, previous, same)
        request.meta["corpus_change"] = decision.change.value
        etag = response.headers.get(b"ETag")
        modified = response.headers.get(b"Last-Modified")
        return CaptureFacts(
            decision,
            etag=etag.decode("latin-1") if etag else None,
            last_modified=modified.decode("latin-1") if modified else None,
            depth=int(request.meta.get("depth", 0)),
        )


_CUT_REASONS = {
    "length": DropReason.TOO_LARGE,
    "time": DropReason.TIMEOUT,
    "disconnect": DropReason.DISCONNECTED,
}


class SizeCapMiddleware:
    """Counts and drops cut responses (after their capture); see the module docstring."""

    def __init__(self, crawler: Crawler, maxsize: int) -> None:
        self.crawler = crawler
        self.stats = crawler.stats
        self.maxsize = maxsize

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> SizeCapMiddleware:
        return cls(crawler, crawler.settings.getint("DOWNLOAD_MAXSIZE"))

    def process_response(self, request: Request, response: Response) -> Request | Response:
        cut = truncation_of(response)
        if not cut:
            return response
        reason = _CUT_REASONS.get(cut, DropReason.TIMEOUT)
        self.stats.inc_value(f"corpus/truncated/{cut}")
        # this attempt's crawl log line; the page's outcome is the retry's
        log_download_drop(self.crawler, request, response, reason)
        spider = self.crawler.spider
        if reason is DropReason.DISCONNECTED and spider and not request.meta.get("dont_retry"):
            # Scrapy retried the ResponseDataLossError this was: a server restarting
            # mid-transfer deserves the same second chance
            retry = get_retry_request(request, spider=spider, reason=str(reason))
            if retry is not None:
                return retry
        self.stats.inc_value(f"corpus/dropped/{reason}")
        raise IgnoreRequest(f"{reason} (archived truncated at {len(response.body)} bytes)")

    def process_exception(self, request: Request, exception: Exception) -> None:
        from scrapy.exceptions import DownloadCancelledError

        if isinstance(exception, DownloadCancelledError):
            self.stats.inc_value(f"corpus/dropped/{DropReason.TOO_LARGE}")
            logger.info("aborted a response over %d bytes: %s", self.maxsize, request.url)
        return None
