"""Downloader middlewares of the corpus crawl.

* `AddressGuardMiddleware` (55): re-exported from `pipelines.addressguard`.
* `ScopeGuardMiddleware` (60): redirect targets obey the spider's scope too.
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
