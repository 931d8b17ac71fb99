"""A spider middleware for tests: its `process_start` waits a moment before it hands on
the spider's start requests, as a middleware that first fetches a token or a URL list
does. Scrapy's engine leases requests from the scheduler meanwhile: for a resumed
campaign, requests an earlier run queued reach the downloader before the spider's
`start()` has run at all."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from scrapy.crawler import Crawler


class SlowStartMiddleware:
    def __init__(self, delay: float) -> None:
        self.delay = delay

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> SlowStartMiddleware:
        return cls(crawler.settings.getfloat("SLOW_START_DELAY", 1.0))

    async def process_start(self, start: AsyncIterator[Any]) -> AsyncIterator[Any]:
        await asyncio.sleep(self.delay)
        async for item_or_request in start:
            yield item_or_request
