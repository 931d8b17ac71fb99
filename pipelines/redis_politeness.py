"""Frees a host for the other processes of a distributed crawl as soon as its response
is in, rather than when the page has been extracted and written.

The Redis campaign holds a host from the lease of a request until its release, then
lets it rest for the profile's delay (`corpus_crawler.redis_state`); releasing at the
response, closest to the downloader (before any other middleware sees it), keeps a
host busy only for the time the server took. A request that never reaches the
downloader (refused by a guard, disallowed by robots.txt) is released when it is
finished. Off (NotConfigured) unless the campaign is in Redis.
"""

from __future__ import annotations

from typing import Any

from scrapy import Request
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.http import Response

from corpus_crawler.redis_state import RedisCampaignStore
from pipelines.campaign import CampaignExtension

__all__ = ["HostReleaseMiddleware"]


class HostReleaseMiddleware:
    def __init__(self, store: RedisCampaignStore) -> None:
        self.store = store

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> HostReleaseMiddleware:
        campaign = crawler.get_extension(CampaignExtension)
        store = campaign.store if campaign is not None else None
        if not isinstance(store, RedisCampaignStore):
            raise NotConfigured  # not a distributed crawl: nothing to say in the log
        return cls(store)

    def _release(self, request: Request) -> None:
        row = request.meta.get("corpus_row")
        if row is not None:
            self.store.release(int(row))

    def process_response(self, request: Request, response: Response) -> Response:
        self._release(request)
        return response

    def process_exception(self, request: Request, exception: BaseException) -> Any:
        self._release(request)
        return None
