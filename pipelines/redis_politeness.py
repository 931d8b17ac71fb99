"""Frees a host for the other processes of a distributed crawl as soon as its response
is in, rather than when the page has been extracted and written.

The Redis campaign holds a host from the lease of a request until its release, then
lets it rest for the profile's delay (`corpus_crawler.redis_state`); releasing at the
response, closest to the downloader (before any other middleware sees it), keeps a
host busy only for the time the server took. A request that never reaches the
downloader (refused by a guard, disallowed by robots.txt) is released when it is
finished. The rest is the host's robots.txt Crawl-delay, or its backoff after a
429/503, when that is longer (`pipelines.pacing`). Off (NotConfigured) unless the
campaign is in Redis.
"""

from __future__ import annotations

from typing import Any

from scrapy import Request
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.http import Response

from corpus_crawler.redis_state import RedisCampaignStore, host_key
from pipelines.campaign import CampaignExtension
from pipelines.pacing import HostPacing

__all__ = ["HostReleaseMiddleware"]


class HostReleaseMiddleware:
    def __init__(self, store: RedisCampaignStore, pacing: HostPacing | None) -> None:
        self.store = store
        #: What the hosts asked (Crawl-delay, Retry-After): their rest when longer.
        self.pacing = pacing

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> HostReleaseMiddleware:
        campaign = crawler.get_extension(CampaignExtension)
        store = campaign.store if campaign is not None else None
        if not isinstance(store, RedisCampaignStore):
            raise NotConfigured  # not a distributed crawl: nothing to say in the log
        return cls(store, crawler.get_extension(HostPacing))

    def _release(self, request: Request) -> None:
        row = request.meta.get("corpus_row")
        if row is not None:
            rest = self.pacing.rest(host_key(request.url)) if self.pacing else 0.0
            self.store.release(int(row), rest)

    def process_response(self, request: Request, response: Response) -> Response:
        self._release(request)
        return response

    def process_exception(self, request: Request, exception: BaseException) -> Any:
        self._release(request)
        return None
