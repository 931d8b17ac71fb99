"""robots.txt's ``Crawl-delay``, honoured up to a cap: the seconds a site asks between two
requests become the floor of its download delay.

Bing, Yandex and Heritrix (up to 300 s by default) honour ``Crawl-delay: N``; Scrapy
reads it (`RobotParser.crawl_delay`) but does nothing with it, so a site asking for 10 s
got the profile's 1 s. When a robots.txt is parsed (Scrapy's ``robots_parsed`` signal:
`pipelines.robots` sends it for a fetched and for a shared robots.txt alike), the delay
it asks of our user agent, capped at ``CORPUS_ROBOTS_MAX_CRAWL_DELAY`` (the profile's
``politeness.max_crawl_delay``, 30 s; 0 ignores the line), becomes the floor of that
host's downloader slot:

* the slot's delay is raised to it, without jitter (Scrapy's ±50 % would go below it),
  and so are the slot settings a slot is made from again after Scrapy's idle-slot
  clean-up;
* AutoThrottle may raise the delay further but never below the floor: this extension
  comes after AutoThrottle (its ``response_downloaded`` handler runs later) and puts
  the floor back;
* in a distributed crawl the host's rest after each response, which spaces requests
  from every process (`corpus_crawler.redis_state`), is the floor when it is longer
  than the profile's delay (`floor()`, read by `pipelines.redis_politeness`).

A delay above the cap is counted (``corpus/robots/crawl_delay/capped``) and logged: a
``Crawl-delay: 3600`` would make a site uncrawlable. Hosts with a floor are counted
under ``corpus/robots/crawl_delay/hosts``.
"""

from __future__ import annotations

import logging
from typing import Any

from scrapy import Request, signals
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.http import Response
from scrapy.utils.httpobj import urlparse_cached

__all__ = ["DEFAULT_MAX_CRAWL_DELAY", "CrawlDelayExtension"]

logger = logging.getLogger(__name__)

#: Seconds: the largest Crawl-delay honoured when the profile does not say.
DEFAULT_MAX_CRAWL_DELAY = 30.0


class CrawlDelayExtension:
    def __init__(self, crawler: Crawler, cap: float) -> None:
        self.crawler = crawler
        self.cap = cap
        self.user_agent = crawler.settings.get("ROBOTSTXT_USER_AGENT") or crawler.settings.get(
            "USER_AGENT", ""
        )
        #: Host name (lower case, as the Redis campaign keys hosts) -> the floor in seconds.
        self._floors: dict[str, float] = {}
        #: Downloader slot key (the host name; its IP address with
        #: CONCURRENT_REQUESTS_PER_IP) -> the floor of that slot's delay.
        self._slot_floors: dict[str, float] = {}

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> CrawlDelayExtension:
        settings = crawler.settings
        if not settings.getbool("ROBOTSTXT_OBEY"):
            raise NotConfigured("robots.txt is not obeyed: its Crawl-delay is not read either")
        cap = settings.getfloat("CORPUS_ROBOTS_MAX_CRAWL_DELAY", DEFAULT_MAX_CRAWL_DELAY)
        if cap < 0:
            raise ValueError(f"CORPUS_ROBOTS_MAX_CRAWL_DELAY must be >= 0 seconds, got {cap}")
        if cap == 0:
            raise NotConfigured("Crawl-delay is ignored (politeness.max_crawl_delay: 0)")
        extension = cls(crawler, cap)
        crawler.signals.connect(extension.robots_parsed, signal=signals.robots_parsed)
        crawler.signals.connect(extension.response_downloaded, signal=signals.response_downloaded)
        return extension

    def floor(self, host: str) -> float:
        """The least seconds between two requests to `host` (lower case), 0 if none."""
        return self._floors.get(host, 0.0)

    def robots_parsed(self, robotparser: Any, request: Request) -> None:
        asked = robotparser.crawl_delay(self.user_agent) if robotparser is not None else None
        if not asked or asked <= 0:
            return
        host = (urlparse_cached(request).hostname or "").lower()
        stats = self.crawler.stats
        assert stats is not None
        delay = float(asked)
        if delay > self.cap:
            stats.inc_value("corpus/robots/crawl_delay/capped")
            logger.warning(
                "%s asks for Crawl-delay: %g s; honouring %g s (politeness.max_crawl_delay)",
                host, delay, self.cap,
            )  # fmt: skip
            delay = self.cap
        if delay <= self._floors.get(host, 0.0):
            return
        if host not in self._floors:
            stats.inc_value("corpus/robots/crawl_delay/hosts")
        self._floors[host] = delay
        logger.info("%s asks for Crawl-delay: %g s between requests", host, delay)
        engine = self.crawler.engine
        if engine is not None:
            self._apply(engine.downloader, engine.downloader.get_slot_key(request), delay)

    def _apply(self, downloader: Any, key: str, delay: float) -> None:
        delay = max(delay, self._slot_floors.get(key, 0.0))  # hosts sharing an IP's slot
        self._slot_floors[key] = delay
        slot_settings = downloader.per_slot_settings.setdefault(key, {})
        slot_settings["delay"] = max(float(slot_settings.get("delay", 0.0)), delay)
        slot_settings["jitter"] = 0.0
        slot = downloader.slots.get(key)
        if slot is not None:
            slot.delay = max(slot.delay, delay)
            slot.jitter = 0.0

    def response_downloaded(self, response: Response, request: Request) -> None:
        """After AutoThrottle's adjustment: never below the floor."""
        if not self._slot_floors:
            return
        key = request.meta.get("download_slot")
        floor = self._slot_floors.get(key) if isinstance(key, str) else None
        if floor is None:
            return
        engine = self.crawler.engine
        slot = engine.downloader.slots.get(str(key)) if engine is not None else None
        if slot is not None and slot.delay < floor:
            slot.delay = floor
