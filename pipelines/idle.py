"""Tell the engine to look for work (or for its end) as soon as a page's item is done.

Scrapy's engine checks whether the crawl is idle when a download completes and
otherwise only on its 5-second heartbeat. Here the item of a page is finished
after its download (the callback awaits the extraction workers, then the item
pipelines run), so when the last page's item is done nothing asks again, and the
crawl sat idle for up to 5 s (4.1 s measured by ``benchmarks/crawl_speed.py``'s
close time: last response to idle) before it closed. `PromptIdleCheck` schedules
the engine's own next-request call when an item is scraped, dropped or fails:
what the heartbeat would do, only sooner. Scheduling it is idempotent (one
pending call at most), so a busy crawl pays one reactor call per item at most.
"""

from __future__ import annotations

from typing import Any

from scrapy import signals
from scrapy.crawler import Crawler

__all__ = ["PromptIdleCheck"]

#: After the item's signal, so that the scraper has let go of the page's response.
DELAY_SECONDS = 0.01


class PromptIdleCheck:
    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> PromptIdleCheck:
        extension = cls(crawler)
        for signal in (signals.item_scraped, signals.item_dropped, signals.item_error):
            crawler.signals.connect(extension.item_done, signal=signal)
        return extension

    def item_done(self, *args: Any, **kwargs: Any) -> None:
        engine = self.crawler.engine
        # the engine's slot is private; without it (another Scrapy) the heartbeat still ends
        # the crawl, only later
        slot = getattr(engine, "_slot", None) if engine is not None else None
        nextcall = getattr(slot, "nextcall", None)
        if nextcall is not None:
            nextcall.schedule(DELAY_SECONDS)
