"""Downloader middlewares of the corpus crawl.

* `AddressGuardMiddleware` (55): only http(s), and no private, loopback,
  link-local or otherwise non-public address unless the profile allows it.
* `ScopeGuardMiddleware` (60): redirect targets obey the spider's scope too.
* `WarcCaptureMiddleware`, `SizeCapMiddleware`: see `pipelines.capture`.
"""

from __future__ import annotations

import ipaddress
import logging
from dataclasses import dataclass

from scrapy import Request
from scrapy.crawler import Crawler
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.http import Response
from scrapy.settings import BaseSettings
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.httpobj import urlparse_cached

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


# -- WARC capture and size cap: in pipelines.capture (re-exported for old imports) ----------

from pipelines.capture import SizeCapMiddleware, WarcCaptureMiddleware  # noqa: E402
