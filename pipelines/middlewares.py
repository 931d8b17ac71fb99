"""Downloader middlewares of the corpus crawl.

* `AddressGuardMiddleware` (55): re-exported from `pipelines.addressguard`.
* `ScopeGuardMiddleware` (60): redirect targets obey the spider's scope too.
* `WarcCaptureMiddleware` (950): hands every exchange that reached the
  downloader to the writer thread (redirects, 4xx/5xx, robots.txt, non-HTML).
* `SizeCapMiddleware` (960): counts responses aborted at DOWNLOAD_MAXSIZE.
"""

from __future__ import annotations

import logging
from datetime import datetime, timezone
from typing import Any

from scrapy import Request
from scrapy.crawler import Crawler
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.http import Response

from corpus_crawler.model import DropReason
from corpus_crawler.warc import Exchange, header_pairs
from pipelines.addressguard import AddressGuardMiddleware, AddressPolicy
from pipelines.writer import OutputWriter

__all__ = [
    "AddressGuardMiddleware",
    "AddressPolicy",
    "ScopeGuardMiddleware",
    "SizeCapMiddleware",
    "WarcCaptureMiddleware",
]

logger = logging.getLogger(__name__)


class ScopeGuardMiddleware:
    """Redirects lead outside the crawl's scope only if the spider's scope allows the target."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ScopeGuardMiddleware:
        return cls(crawler)

    def process_request(self, request: Request) -> None:
        if "redirect_urls" not in request.meta:
            return
        scope = getattr(self.crawler.spider, "scope", None)
        if scope is None:
            return
        refusal = scope.check(request.url, page=not request.meta.get("corpus_sitemap"))
        if refusal is not None:
            self.crawler.stats.inc_value(f"corpus/redirects/refused/{refusal}")
            raise IgnoreRequest(f"redirect out of scope ({refusal}): {request.url}")


# -- WARC capture -------------------------------------------------------------------------


def _header_pairs(headers: Any) -> list[tuple[bytes, bytes]]:
    return [(name, value) for name, values in headers.items() for value in values]


def _as_stored(headers: list[tuple[bytes, bytes]], body_length: int) -> list[tuple[str, str]]:
    """Response headers for a body stored de-chunked but otherwise as received.

    Twisted's HTTP client (under Scrapy's HTTP/1.1 handler) keeps the
    connection-control headers (`Transfer-Encoding`, `Connection`, ...) to
    itself and removes the chunked coding; Scrapy restores `Content-Length`
    only when the server sent one. So, as Common Crawl does for a de-chunked
    body, the stored record says `Content-Length: <stored length>`; an original
    that differs is kept as `X-Crawler-Content-Length`, and a `Transfer-Encoding`
    that an other download handler passes on becomes `X-Crawler-Transfer-Encoding`.
    `Content-Encoding` stays: the body is captured before HttpCompressionMiddleware
    decodes it, so it is stored compressed, as it was sent.
    """
    out: list[tuple[str, str]] = []
    declared: str | None = None
    for raw_name, raw_value in headers:
        name, value = raw_name.decode("latin-1"), raw_value.decode("latin-1")
        lower = name.lower()
        if lower == "transfer-encoding":
            out.append(("X-Crawler-Transfer-Encoding", value))
        elif lower == "content-length":
            declared = value.strip()
        else:
            out.append((name, value))
    stored = str(body_length)
    if declared is not None and declared != stored:
        out.append(("X-Crawler-Content-Length", declared))
    out.append(("Content-Length", stored))
    return out


class WarcCaptureMiddleware:
    """Queues each exchange for the WARC writer; the future of its records goes in the meta.

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
        now = datetime.now(timezone.utc)
        request.meta["corpus_fetched_at"] = now
        body = response.body
        exchange = Exchange(
            url=response.url,
            status=response.status,
            body=body,
            method=request.method,
            request_headers=header_pairs(_header_pairs(request.headers)),
            request_body=request.body,
            response_headers=tuple(_as_stored(_header_pairs(response.headers), len(body))),
            http_version=response.protocol or "HTTP/1.1",
            ip_address=str(response.ip_address) if response.ip_address else None,
            date=now,
            body_decoded=False,
        )
        request.meta["corpus_exchange"] = self.writer.submit_exchange(exchange)
        return response


# -- size cap -----------------------------------------------------------------------------


class SizeCapMiddleware:
    """Counts downloads aborted over DOWNLOAD_MAXSIZE as ``corpus/dropped/too-large``.

    Scrapy's HTTP handler cancels a response whose announced or received size
    passes the cap, and reports it as `DownloadCancelledError` (with the size in
    the message when the Content-Length announced it, with none when the body
    grew past the cap); nothing else in this project cancels downloads.
    """

    def __init__(self, crawler: Crawler, maxsize: int) -> None:
        self.stats = crawler.stats
        self.maxsize = maxsize

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> SizeCapMiddleware:
        maxsize = crawler.settings.getint("DOWNLOAD_MAXSIZE")
        if maxsize <= 0:
            raise NotConfigured("no size cap: set limits.max_page_bytes (DOWNLOAD_MAXSIZE)")
        return cls(crawler, maxsize)

    def process_exception(self, request: Request, exception: Exception) -> None:
        from scrapy.exceptions import DownloadCancelledError

        if isinstance(exception, DownloadCancelledError):
            self.stats.inc_value(f"corpus/dropped/{DropReason.TOO_LARGE}")
            logger.info("aborted a response over %d bytes: %s", self.maxsize, request.url)
        return None
