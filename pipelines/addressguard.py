"""The address guard: only http(s), only addresses the network policy allows.

Two downloader middlewares and the resolver they configure:

* `AddressGuardMiddleware` (55) refuses non-http(s) URLs and literal addresses
  the policy refuses (port included) before anything is sent, and hands the
  crawl's policy and DNS settings to the reactor's `PinnedResolver`, which
  filters every DNS answer before Twisted connects. Names are never resolved
  here: one lookup, in the resolver, decides where the connection goes.
* `RefusedAddressMiddleware` (940, before RetryMiddleware sees the error) turns
  the `DNSLookupError` of a name whose every address was refused into a counted
  refusal (`corpus/refused/<reason>`) instead of retries. On the way back (before
  RedirectMiddleware, 600) it refuses a redirect to a URL that is not http(s)
  (``ftp:``, ``file:``, ``data:``, ``javascript:``), counted as
  ``corpus/redirects/refused/scheme``: RedirectMiddleware passed such a 3xx on
  to the spider as an HTTP error, or failed on ``javascript:`` with a
  ``ValueError``, and neither was counted as a refusal. A redirect past
  REDIRECT_MAX_TIMES (or a robots.txt's own limit) is counted as
  ``corpus/redirects/refused/too-many`` before RedirectMiddleware discards it.
"""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import urljoin, urlsplit

import scrapy.exceptions
from scrapy import Request
from scrapy.crawler import Crawler
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.http import Response
from scrapy.settings import BaseSettings
from scrapy.utils.httpobj import urlparse_cached
from twisted.internet.error import DNSLookupError
from w3lib.url import safe_url_string

from corpus_crawler.addresses import AddressPolicy, literal_address
from pipelines.resolver import PinnedResolver, ResolverConfig, installed_resolver, parse_dns_server
from pipelines.settingtypes import at_least

__all__ = [
    "AddressGuardMiddleware",
    "AddressPolicy",
    "RefusedAddressMiddleware",
    "policy_from_settings",
]

logger = logging.getLogger(__name__)

_DEFAULT_PORTS = {"http": 80, "https": 443}
#: The statuses Scrapy's RedirectMiddleware follows.
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
# Scrapy 2.14+ wraps Twisted's DNSLookupError in its own CannotResolveHostError
_LOOKUP_ERRORS: tuple[type[Exception], ...] = (
    DNSLookupError,
    getattr(scrapy.exceptions, "CannotResolveHostError", DNSLookupError),
)


def _enabled(settings: BaseSettings) -> None:
    if not settings.getbool("CORPUS_NETWORK_ENABLED", True):
        raise NotConfigured(
            "the address guard is off (CORPUS_NETWORK_ENABLED=False): the crawler may"
            " reach private and loopback addresses; set CORPUS_NETWORK_ENABLED=True"
        )


def policy_from_settings(settings: BaseSettings) -> AddressPolicy:
    """`CORPUS_NETWORK_ALLOW_PRIVATE` and `CORPUS_NETWORK_ALLOWED_NETWORKS`."""
    try:
        return AddressPolicy.build(
            settings.getbool("CORPUS_NETWORK_ALLOW_PRIVATE"),
            settings.getlist("CORPUS_NETWORK_ALLOWED_NETWORKS"),
        )
    except ValueError as exc:
        raise ValueError(f"CORPUS_NETWORK_ALLOWED_NETWORKS: {exc}") from None


def resolver_config_from_settings(settings: BaseSettings) -> ResolverConfig:
    try:
        servers = tuple(parse_dns_server(s) for s in settings.getlist("CORPUS_NETWORK_DNS_SERVERS"))
    except ValueError as exc:
        raise ValueError(f"CORPUS_NETWORK_DNS_SERVERS: {exc}") from None
    defaults = ResolverConfig()
    return ResolverConfig(
        policy=policy_from_settings(settings),
        dns_servers=servers,
        cache_size=settings.getint("CORPUS_NETWORK_DNS_CACHE_SIZE", defaults.cache_size),
        cache_seconds=settings.getfloat("CORPUS_NETWORK_DNS_CACHE_SECONDS", defaults.cache_seconds),
        failure_seconds=settings.getfloat(
            "CORPUS_NETWORK_DNS_FAILURE_SECONDS", defaults.failure_seconds
        ),
        query_timeout=at_least(
            settings, "CORPUS_NETWORK_DNS_TIMEOUT", defaults.query_timeout, 0, above=True
        ),
    )


def _port(request: Request) -> int | None:
    parts = urlparse_cached(request)
    try:
        return parts.port or _DEFAULT_PORTS.get(parts.scheme)
    except ValueError:  # a port out of range: the download fails the usual way
        return None


class AddressGuardMiddleware:
    """Refuses non-http(s) URLs and refused literal addresses; configures the resolver."""

    def __init__(
        self, crawler: Crawler, policy: AddressPolicy, resolver: PinnedResolver | None = None
    ) -> None:
        self.crawler = crawler
        self.policy = policy
        self.stats = crawler.stats
        self.resolver = resolver

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> AddressGuardMiddleware:
        from twisted.internet import reactor

        if not crawler.settings.getbool("CORPUS_NETWORK_ENABLED", True):
            # the resolver would still refuse private answers with its strict default
            installed_resolver(reactor).configure(
                ResolverConfig(policy=AddressPolicy(allow_private=True)), crawler.stats
            )
        _enabled(crawler.settings)
        config = resolver_config_from_settings(crawler.settings)
        resolver = installed_resolver(reactor)
        resolver.configure(config, crawler.stats)
        return cls(crawler, config.policy, resolver)

    def _check_resolver(self) -> None:
        from twisted.internet import reactor

        if self.resolver is not None and reactor.nameResolver is not self.resolver:
            # another TWISTED_DNS_RESOLVER was installed when the reactor started:
            # without ours, connections would go to unchecked addresses
            logger.warning(
                "TWISTED_DNS_RESOLVER replaced pipelines.resolver.PinnedResolver: putting it"
                " back, so that connections only go to addresses the network policy allows"
            )
            self.resolver.reactor.installNameResolver(self.resolver)

    def _refuse(self, request: Request, why: str) -> IgnoreRequest:
        self.stats.inc_value(f"corpus/refused/{why}")
        logger.debug("refused %s: %s", request.url, why)
        return IgnoreRequest(f"refused ({why}): {request.url}")

    async def process_request(self, request: Request) -> None:
        self._check_resolver()
        parts = urlparse_cached(request)
        if parts.scheme not in ("http", "https"):
            raise self._refuse(request, "scheme")
        address = literal_address(parts.hostname or "")
        if address is not None:
            refusal = self.policy.refusal(address, _port(request))
            if refusal is not None:
                raise self._refuse(request, str(refusal))
        return None

    def process_response(self, request: Request, response: Response) -> Response:
        # The resolver already pinned the connection; this catches a download handler
        # that resolves names by itself (a proxy, a custom handler).
        address = response.ip_address
        if address is not None:
            refusal = self.policy.refusal(address, _port(request))
            if refusal is not None:
                raise self._refuse(request, str(refusal))
        return response


class RefusedAddressMiddleware:
    """A name whose every address the policy refused: counted and ignored, not retried."""

    def __init__(self, crawler: Crawler) -> None:
        self.stats = crawler.stats
        settings = crawler.settings
        self.redirects = settings.getbool("REDIRECT_ENABLED", True)
        self.max_redirects = settings.getint("REDIRECT_MAX_TIMES", 20)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RefusedAddressMiddleware:
        _enabled(crawler.settings)
        return cls(crawler)

    def process_response(self, request: Request, response: Response) -> Response:
        location = response.headers.get(b"Location")
        meta = request.meta
        if (
            not self.redirects
            or location is None
            or response.status not in _REDIRECTS
            or meta.get("dont_redirect")
            or meta.get("handle_httpstatus_all")
            or response.status in meta.get("handle_httpstatus_list", ())
        ):
            return response
        # as RedirectMiddleware resolves it
        target = safe_url_string(location)
        if location.startswith(b"//"):
            target = urlparse_cached(request).scheme + "://" + target.lstrip("/")
        target = urljoin(request.url, target)
        scheme = urlsplit(target).scheme.lower()
        if scheme not in ("http", "https"):
            self.stats.inc_value("corpus/redirects/refused/scheme")
            logger.info("refused the redirect of %s to %.200s: not http(s)", request.url, target)
            raise IgnoreRequest(f"redirect refused (scheme {scheme!r}): {target[:200]}")
        ttl = meta.get("redirect_ttl", self.max_redirects)
        if not ttl or meta.get("redirect_times", 0) + 1 > self.max_redirects:
            # RedirectMiddleware discards it (at debug level) after us
            self.stats.inc_value("corpus/redirects/refused/too-many")
            logger.info("too many redirects, not following %s to %.200s", request.url, target)
        return response

    def process_exception(self, request: Request, exception: Exception) -> Any:
        from twisted.internet import reactor

        if not isinstance(exception, _LOOKUP_ERRORS):
            return None
        resolver = reactor.nameResolver
        if not isinstance(resolver, PinnedResolver):
            return None
        refusal = resolver.refusal(urlparse_cached(request).hostname or "", _port(request))
        if refusal is None:
            return None
        # one count per page: the robots.txt fetched before it is counted apart
        robots = request.meta.get("dont_obey_robotstxt") and request.url.endswith("/robots.txt")
        self.stats.inc_value(f"corpus/{'robots/' if robots else ''}refused/{refusal}")
        raise IgnoreRequest(f"refused ({refusal}): {request.url}")
