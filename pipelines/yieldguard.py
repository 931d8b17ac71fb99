"""YieldGuardMiddleware: stop crawling hosts whose text yield is too low (SpiderLing).

Every page that finishes the item pipelines (kept, or dropped for any reason)
feeds `corpus_crawler.yieldrate.YieldTracker` with its raw bytes and the clean
bytes that reached the corpus (0 for a dropped page or a duplicate). Once a
host or its registered domain is pruned, every request to it that the
scheduler hands out is refused here with `LowYieldRequest`, counted under
``corpus/yield/refused`` with an estimate of the bytes saved (the host's mean
page size). The counts persist in ``CORPUS_OUTPUT_DIR/state/yield.sqlite``; in a
distributed crawl (`crawl --redis URL`) they live in the campaign's Redis
(`corpus_crawler.yieldrate.RedisYieldTracker`): every process decides from the
global counts, and a host pruned by one process is pruned for all.

Settings: CORPUS_YIELD_PRESET (off, permissive, normal, strict),
CORPUS_YIELD_MIN_DOCS, CORPUS_YIELD_MIN_BYTES.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from scrapy import Request, signals
from scrapy.crawler import Crawler
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.settings import BaseSettings
from scrapy.utils.httpobj import urlparse_cached

from corpus_crawler.config import ConfigError
from corpus_crawler.model import DropReason
from corpus_crawler.redis_state import RedisCampaignStore
from corpus_crawler.yieldrate import RedisYieldTracker, YieldConfig, YieldTracker
from pipelines.items import CorpusDocument, DroppedPage, FetchedPage

__all__ = ["LowYieldRequest", "YieldGuardMiddleware", "YieldSettings"]

logger = logging.getLogger(__name__)

#: Records between two saves of the counts.
_SAVE_EVERY = 50


class LowYieldRequest(IgnoreRequest):
    """A request to a host pruned for low yield (`DropReason.LOW_YIELD`)."""

    reason = DropReason.LOW_YIELD


@dataclass(frozen=True, slots=True)
class YieldSettings:
    config: YieldConfig
    path: Path

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> YieldSettings:
        preset = settings.get("CORPUS_YIELD_PRESET", "permissive")
        if preset == "off":
            raise NotConfigured(
                "yield pruning is off: set yield.preset to permissive, normal or strict"
                " (CORPUS_YIELD_PRESET)"
            )
        if not (
            settings.getbool("CORPUS_EXTRACT_ENABLED", True)
            and settings.getbool("CORPUS_EXTRACT_TEXT", True)
        ):
            raise NotConfigured("yield pruning needs text extraction (extraction.enabled)")
        try:
            config = YieldConfig(
                preset=preset,
                min_docs=settings.getint("CORPUS_YIELD_MIN_DOCS", 20),
                min_bytes=settings.getint("CORPUS_YIELD_MIN_BYTES", 512 * 1024),
            )
        except ConfigError as exc:
            raise ConfigError(f"CORPUS_YIELD_* settings: {exc}") from None
        output = Path(settings.get("CORPUS_OUTPUT_DIR") or "output")
        return cls(config=config, path=output / "state" / "yield.sqlite")


class YieldGuardMiddleware:
    def __init__(
        self, crawler: Crawler, settings: YieldSettings, shared: RedisCampaignStore | None = None
    ) -> None:
        """`shared`: the Redis campaign of a distributed crawl (the counts go there)."""
        self.stats = crawler.stats
        self.settings = settings
        self.tracker: YieldTracker | RedisYieldTracker
        if shared is not None:
            self.tracker = RedisYieldTracker(settings.config, shared)
        else:
            self.tracker = YieldTracker(settings.config, settings.path)
        self._records = 0
        crawler.signals.connect(self._item_scraped, signal=signals.item_scraped)
        crawler.signals.connect(self._item_dropped, signal=signals.item_dropped)
        crawler.signals.connect(self._spider_closed, signal=signals.spider_closed)
        already = self.tracker.pruned_hosts()
        if already:
            logger.info("yield: %d host(s) pruned by earlier runs", len(already))

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> YieldGuardMiddleware:
        from pipelines.campaign import CampaignExtension

        settings = YieldSettings.from_settings(crawler.settings)
        try:
            # the extensions are built before the downloader middlewares in a crawl
            campaign = crawler.get_extension(CampaignExtension)
        except RuntimeError:  # built outside a crawl (no extension manager yet)
            campaign = None
        store = campaign.store if campaign is not None else None
        shared = store if isinstance(store, RedisCampaignStore) else None
        return cls(crawler, settings, shared)

    def process_request(self, request: Request, spider: Any = None) -> None:
        host = urlparse_cached(request).hostname or ""
        if host and self.tracker.is_pruned(host):
            stats = self.tracker.hosts.get(host)
            self.stats.inc_value("corpus/yield/refused")
            if stats is not None and stats.docs:
                self.stats.inc_value("corpus/yield/bytes_saved", stats.raw // stats.docs)
            raise LowYieldRequest(f"refused ({DropReason.LOW_YIELD}): {request.url}")

    def _record(self, page: FetchedPage | DroppedPage, clean_bytes: int) -> None:
        host = urlsplit(page.url).hostname or ""
        if not host:
            return
        if self.tracker.record(host, page.size, clean_bytes, request=page.row):
            stats = self.tracker.hosts[host]
            self.stats.inc_value("corpus/yield/hosts_pruned")
            logger.info(
                "yield: pruned %s after %d document(s): %d of %d bytes kept (%.4f)",
                host,
                stats.docs,
                stats.clean,
                stats.raw,
                stats.rate,
            )
        self._records += 1
        if self._records % _SAVE_EVERY == 0:
            self.tracker.save()

    def _item_scraped(self, item: Any) -> None:
        if isinstance(item, CorpusDocument):
            self._record(item.page, item.clean_bytes)
        elif isinstance(item, FetchedPage):
            self._record(item, 0)

    def _item_dropped(self, item: Any) -> None:
        if isinstance(item, CorpusDocument):
            self._record(item.page, 0)
        elif isinstance(item, (FetchedPage, DroppedPage)):
            self._record(item, 0)

    def _spider_closed(self) -> None:
        pruned = self.tracker.pruned_hosts()
        self.stats.set_value("corpus/yield/hosts_pruned_total", len(pruned))
        if isinstance(self.tracker, RedisYieldTracker):
            self.stats.set_value("corpus/yield/redis_round_trips", self.tracker.round_trips)
        self.tracker.close()
