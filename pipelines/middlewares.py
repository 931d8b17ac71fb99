"""Downloader middlewares of the corpus crawl.

* `AddressGuardMiddleware` (55): re-exported from `pipelines.addressguard`.
* `ScopeGuardMiddleware` (60): redirect targets obey the spider's scope too (a seed's
  redirect brings its host into a scope made of the seeds' hosts).
* `WarcCaptureMiddleware`, `SizeCapMiddleware`: see `pipelines.capture`.
"""

from __future__ import annotations

import logging

from scrapy import Request
from scrapy.crawler import Crawler
from scrapy.exceptions import IgnoreRequest

from pipelines.addressguard import AddressGuardMiddleware, AddressPolicy

__all__ = [
    "AddressGuardMiddleware",
    "AddressPolicy",
    "ScopeGuardMiddleware",
    "SizeCapMiddleware",
    "WarcCaptureMiddleware",
]

logger = logging.getLogger(__name__)


#: `spiders.scope.Refusal` values: what the profile's scope says of a URL (hosts, TLDs,
#: deny patterns, schemes, file extensions), as opposed to its trap limits.
_SCOPE_REFUSALS = frozenset({"host", "denied", "scheme", "binary"})


class ScopeGuardMiddleware:
    """Redirects lead outside the crawl's scope only if the spider's scope allows the target;
    and a request queued by an earlier run of the campaign is fetched only if the scope
    of this run allows it (a scope narrowed between runs, to stop a trap or leave a
    site, applies to the frontier too, not only to links found from now on)."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self._told = False

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ScopeGuardMiddleware:
        return cls(crawler)

    def process_request(self, request: Request) -> None:
        if request.meta.get("dont_obey_robotstxt"):
            return  # a robots.txt fetch: the host's rules, whatever the page scope says
        scope = getattr(self.crawler.spider, "scope", None)
        if scope is None:
            return
        refusal = scope.check(request.url, page=not request.meta.get("corpus_sitemap"))
        if refusal is None:
            return
        admit = getattr(self.crawler.spider, "admit_seed_redirect", None)
        if str(refusal) == "host" and admit is not None and admit(request):
            return  # a seed's redirect (or a request queued for its host): in scope now
        if "redirect_urls" in request.meta:
            self.crawler.stats.inc_value(f"corpus/redirects/refused/{refusal}")
            raise IgnoreRequest(f"redirect out of scope ({refusal}): {request.url}")
        if str(refusal) not in _SCOPE_REFUSALS:
            # a trap limit (URL length, repeated segments...) measured on the URL as the
            # spider wrote it; the request's escaped form may measure otherwise
            return
        # the spider checks every link against this scope before it is queued: a refusal
        # here is a request an earlier run queued under another scope
        self.crawler.stats.inc_value(f"corpus/frontier/refused/{refusal}")
        if not self._told:
            self._told = True
            logger.warning(
                "requests queued by an earlier run are out of this profile's scope (%s: %s):"
                " they are skipped, counted as corpus/frontier/refused/<reason>",
                refusal, request.url,
            )  # fmt: skip
        raise IgnoreRequest(f"refused ({refusal}): {request.url}")


# -- WARC capture and size cap: in pipelines.capture (re-exported for old imports) ----------

from pipelines.capture import SizeCapMiddleware, WarcCaptureMiddleware  # noqa: E402
