"""Downloader middlewares of the corpus crawl.

* `AddressGuardMiddleware` (55): only http(s), and no private, loopback,
  link-local or otherwise non-public address unless the profile allows it.
* `ScopeGuardMiddleware` (60): redirect targets obey the spider's scope too.
* `WarcCaptureMiddleware` (950): hands every exchange that reached the
  downloader to the writer thread (redirects, 4xx/5xx, robots.txt, non-HTML).
* `SizeCapMiddleware` (960): counts responses aborted at DOWNLOAD_MAXSIZE.
"""

from __future__ import annotations

import ipaddress
import logging
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from scrapy import Request
from scrapy.crawler import Crawler
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.http import Response
from scrapy.settings import BaseSettings
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.httpobj import urlparse_cached

from corpus_crawler.model import DropReason
from corpus_crawler.warc import Exchange, header_pairs, new_record_id
from pipelines.writer import OutputWriter

__all__ = [
    "AddressGuardMiddleware",
    "AddressPolicy",
    "ScopeGuardMiddleware",
    "SizeCapMiddleware",
    "WarcCaptureMiddleware",
]

logger = logging.getLogger(__name__)

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


# -- addresses ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AddressPolicy:
    """`CORPUS_NETWORK_*`: which IP addresses the crawler may connect to."""

    allow_private: bool = False
    allowed_networks: tuple[IPNetwork, ...] = ()

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> AddressPolicy:
        if not settings.getbool("CORPUS_NETWORK_ENABLED", True):
            raise NotConfigured(
                "the address guard is off (CORPUS_NETWORK_ENABLED=False): the crawler may"
                " reach private and loopback addresses; set CORPUS_NETWORK_ENABLED=True"
            )
        networks: list[IPNetwork] = []
        for value in settings.getlist("CORPUS_NETWORK_ALLOWED_NETWORKS"):
            try:
                networks.append(ipaddress.ip_network(value, strict=False))
            except ValueError:
                raise ValueError(
                    f"CORPUS_NETWORK_ALLOWED_NETWORKS: {value!r} is not an IP network;"
                    " write e.g. 127.0.0.1/32"
                ) from None
        return cls(
            allow_private=settings.getbool("CORPUS_NETWORK_ALLOW_PRIVATE"),
            allowed_networks=tuple(networks),
        )

    def allows(self, address: IPAddress) -> bool:
        if self.allow_private:
            return True
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        if any(address in network for network in self.allowed_networks):
            return True
        return address.is_global and not address.is_multicast


def _literal_address(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


class AddressGuardMiddleware:
    """Refuses non-http(s) URLs and non-public addresses (unless allowed).

    The host is checked before the request is sent (the literal address, else
    its DNS answer through the reactor's caching resolver), and the address a
    response actually came from is checked again, which also catches a name
    that resolves differently the second time.
    """

    def __init__(self, crawler: Crawler, policy: AddressPolicy) -> None:
        self.crawler = crawler
        self.policy = policy
        self.stats = crawler.stats

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> AddressGuardMiddleware:
        return cls(crawler, AddressPolicy.from_settings(crawler.settings))

    def _refuse(self, request: Request, why: str) -> IgnoreRequest:
        self.stats.inc_value(f"corpus/refused/{why}")
        logger.debug("refused %s: %s", request.url, why)
        return IgnoreRequest(f"refused ({why}): {request.url}")

    async def process_request(self, request: Request) -> None:
        parts = urlparse_cached(request)
        if parts.scheme not in ("http", "https"):
            raise self._refuse(request, "scheme")
        host = parts.hostname or ""
        address = _literal_address(host)
        if address is None and not self.policy.allow_private:
            from twisted.internet import reactor

            try:
                resolved = await maybe_deferred_to_future(reactor.resolve(host))  # type: ignore[arg-type]
            except Exception:
                return None  # let the download fail (and be retried) the usual way
            address = _literal_address(str(resolved))
        if address is not None and not self.policy.allows(address):
            raise self._refuse(request, "private-address")
        return None

    def process_response(self, request: Request, response: Response) -> Response:
        address = response.ip_address
        if address is not None and not self.policy.allows(address):
            raise self._refuse(request, "private-address")
        return response


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
        now = datetime.now(timezone.utc)
        # plain data in the meta: the time as text, the record ids minted here
        request.meta["corpus_fetched_at"] = now.isoformat()
        response_id = new_record_id()
        request.meta["corpus_response_id"] = response_id
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
        self.writer.submit_exchange(
            exchange,
            row=request.meta.get("corpus_row"),
            request_id=new_record_id(),
            response_id=response_id,
        )
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
