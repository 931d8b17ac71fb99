"""How fast each host is asked for pages, beyond the profile's delay: what the site says.

Two things a site can say, both ignored by Scrapy:

* **robots.txt's ``Crawl-delay: N``** (honoured by Bing, Yandex and Heritrix, which takes
  up to 300 s). When a robots.txt is parsed (Scrapy's ``robots_parsed`` signal:
  `pipelines.robots` sends it for a fetched and for a shared robots.txt alike), the
  delay it asks of our user agent, capped at ``CORPUS_ROBOTS_MAX_CRAWL_DELAY`` (the
  profile's ``politeness.max_crawl_delay``, 30 s; 0 ignores the line), becomes the
  floor of that host's downloader slot: the slot's delay is raised to it without
  jitter (Scrapy's ±50 % would go below it), and so are the slot settings a slot is
  made from again after Scrapy's idle-slot clean-up. Capped delays are counted
  (``corpus/robots/crawl_delay/capped``) and logged; hosts with a floor are counted
  under ``corpus/robots/crawl_delay/hosts``.
* **``429 Too Many Requests`` or ``503 Service Unavailable``.** Scrapy's RetryMiddleware
  retried them at once (and AutoThrottle does not slow down on errors), so an
  overloaded site got the same rate, twice more. Now the host backs off: its delay
  becomes the ``Retry-After`` the answer names (seconds or an HTTP date), or, without
  one, 5 s doubling at each further 429/503, capped at ``CORPUS_RETRY_AFTER_MAX``
  (``politeness.max_retry_after``, 120 s; 0: no backoff). The retry and every other
  request to the host wait that long; the first answer that is neither ends the backoff
  and the host gets its delay back. Counted under ``corpus/pacing/backoff/<status>``
  and ``corpus/pacing/backoff/ended``, logged once an episode.

Slot delays are set here only. This extension comes after AutoThrottle (its
``response_downloaded`` handler runs later) and puts the floor or the backoff back when
AutoThrottle went below it. In a distributed crawl the host's rest after each response,
which spaces the requests of every process (`corpus_crawler.redis_state`), is `rest()`
when that is longer than the profile's delay (`pipelines.redis_politeness`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from typing import Any

from scrapy import Request, signals
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.http import Response
from scrapy.utils.httpobj import urlparse_cached

__all__ = [
    "DEFAULT_MAX_CRAWL_DELAY",
    "DEFAULT_MAX_RETRY_AFTER",
    "HostPacing",
    "retry_after_seconds",
]

logger = logging.getLogger(__name__)

#: Seconds: the largest Crawl-delay honoured when the profile does not say.
DEFAULT_MAX_CRAWL_DELAY = 30.0
#: Seconds: the longest backoff after a 429/503 when the profile does not say.
DEFAULT_MAX_RETRY_AFTER = 120.0
#: Statuses that mean "slow down".
_OVERLOADED = frozenset({429, 503})
#: The first backoff after a 429/503 without Retry-After (then doubled).
_FIRST_BACKOFF = 5.0


def retry_after_seconds(value: str | bytes | None, now: datetime | None = None) -> float | None:
    """Seconds a ``Retry-After`` header asks to wait (RFC 9110 10.2.3: delay-seconds or an
    HTTP date), or None when it says nothing usable."""
    if value is None:
        return None
    text = value.decode("latin-1") if isinstance(value, bytes) else value
    text = text.strip()
    if text.isdigit():
        return float(int(text))
    try:
        moment = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return max(0.0, (moment - (now or datetime.now(timezone.utc))).total_seconds())


@dataclass(slots=True)
class _Backoff:
    """A slot slowed down by 429/503 answers, with what it had before."""

    wait: float
    delay: float
    jitter: float


class HostPacing:
    def __init__(self, crawler: Crawler, max_crawl_delay: float, max_retry_after: float) -> None:
        self.crawler = crawler
        self.max_crawl_delay = max_crawl_delay
        self.max_retry_after = max_retry_after
        self.user_agent = crawler.settings.get("ROBOTSTXT_USER_AGENT") or crawler.settings.get(
            "USER_AGENT", ""
        )
        #: Host name (lower case, as the Redis campaign keys hosts) -> Crawl-delay floor.
        self._floors: dict[str, float] = {}
        #: Downloader slot key (the host name; its IP address with
        #: CONCURRENT_REQUESTS_PER_IP) -> the floor of that slot's delay.
        self._slot_floors: dict[str, float] = {}
        #: Slot key -> its backoff; host name -> the backoff's wait (for `rest`).
        self._backoffs: dict[str, _Backoff] = {}
        self._host_backoffs: dict[str, float] = {}

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> HostPacing:
        settings = crawler.settings
        max_crawl_delay = settings.getfloat(
            "CORPUS_ROBOTS_MAX_CRAWL_DELAY", DEFAULT_MAX_CRAWL_DELAY
        )
        max_retry_after = settings.getfloat("CORPUS_RETRY_AFTER_MAX", DEFAULT_MAX_RETRY_AFTER)
        for name, value in (
            ("CORPUS_ROBOTS_MAX_CRAWL_DELAY", max_crawl_delay),
            ("CORPUS_RETRY_AFTER_MAX", max_retry_after),
        ):
            if value < 0:
                raise ValueError(f"{name} must be >= 0 seconds, got {value}")
        if not settings.getbool("ROBOTSTXT_OBEY"):
            max_crawl_delay = 0.0  # robots.txt is not read: nor its Crawl-delay
        if max_crawl_delay == 0 and max_retry_after == 0:
            raise NotConfigured(
                "hosts are paced by the profile's delay only (politeness.max_crawl_delay"
                " and max_retry_after are 0, or robots.txt is not obeyed)"
            )
        pacing = cls(crawler, max_crawl_delay, max_retry_after)
        if max_crawl_delay > 0:
            crawler.signals.connect(pacing.robots_parsed, signal=signals.robots_parsed)
        crawler.signals.connect(pacing.response_downloaded, signal=signals.response_downloaded)
        return pacing

    # -- what others ask ------------------------------------------------------------------

    def floor(self, host: str) -> float:
        """The Crawl-delay of `host` (lower case) in seconds, 0 if none."""
        return self._floors.get(host, 0.0)

    def rest(self, host: str) -> float:
        """The least seconds between two requests to `host` now: its Crawl-delay, or its
        backoff while it answers 429/503."""
        return max(self._floors.get(host, 0.0), self._host_backoffs.get(host, 0.0))

    # -- Crawl-delay ----------------------------------------------------------------------

    def robots_parsed(self, robotparser: Any, request: Request) -> None:
        asked = robotparser.crawl_delay(self.user_agent) if robotparser is not None else None
        if not asked or asked <= 0:
            return
        host = (urlparse_cached(request).hostname or "").lower()
        stats = self.crawler.stats
        assert stats is not None
        delay = float(asked)
        if delay > self.max_crawl_delay:
            stats.inc_value("corpus/robots/crawl_delay/capped")
            logger.warning(
                "%s asks for Crawl-delay: %g s; honouring %g s (politeness.max_crawl_delay)",
                host, delay, self.max_crawl_delay,
            )  # fmt: skip
            delay = self.max_crawl_delay
        if delay <= self._floors.get(host, 0.0):
            return
        if host not in self._floors:
            stats.inc_value("corpus/robots/crawl_delay/hosts")
        self._floors[host] = delay
        logger.info("%s asks for Crawl-delay: %g s between requests", host, delay)
        engine = self.crawler.engine
        if engine is None:
            return
        downloader = engine.downloader
        key = downloader.get_slot_key(request)
        delay = max(delay, self._slot_floors.get(key, 0.0))  # hosts sharing an IP's slot
        self._slot_floors[key] = delay
        slot_settings = downloader.per_slot_settings.setdefault(key, {})
        slot_settings["delay"] = max(float(slot_settings.get("delay", 0.0)), delay)
        slot_settings["jitter"] = 0.0
        slot = downloader.slots.get(key)
        if slot is not None:
            slot.delay = max(slot.delay, delay)
            slot.jitter = 0.0

    # -- every response: backoff, and the floor after AutoThrottle -------------------------

    def response_downloaded(self, response: Response, request: Request) -> None:
        key = request.meta.get("download_slot")
        if not isinstance(key, str):
            return
        overloaded = response.status in _OVERLOADED and self.max_retry_after > 0
        if not overloaded and not self._backoffs and not self._slot_floors:
            return  # the common case: nothing to do
        engine = self.crawler.engine
        slot = engine.downloader.slots.get(key) if engine is not None else None
        if slot is None:
            return
        host = (urlparse_cached(request).hostname or "").lower()
        floor = self._slot_floors.get(key, 0.0)
        backoff = self._backoffs.get(key)
        if overloaded:
            self._back_off(key, host, slot, response, backoff, floor)
        elif backoff is not None and response.status < 500:
            del self._backoffs[key]
            self._host_backoffs.pop(host, None)
            slot.delay = max(backoff.delay, floor)
            slot.jitter = backoff.jitter
            self._stats.inc_value("corpus/pacing/backoff/ended")
            logger.info("%s answers again: back to %g s between its requests", host, slot.delay)
        elif backoff is not None:
            slot.delay = max(slot.delay, backoff.wait, floor)  # after AutoThrottle
        elif slot.delay < floor:
            slot.delay = floor  # AutoThrottle went below the Crawl-delay

    def _back_off(
        self,
        key: str,
        host: str,
        slot: Any,
        response: Response,
        backoff: _Backoff | None,
        floor: float,
    ) -> None:
        header = response.headers.get(b"Retry-After")
        asked = retry_after_seconds(header)
        if asked is None:
            asked = 2 * backoff.wait if backoff is not None else _FIRST_BACKOFF
        wait = min(max(asked, 1.0), self.max_retry_after)
        self._stats.inc_value(f"corpus/pacing/backoff/{response.status}")
        if backoff is None:
            backoff = _Backoff(wait, slot.delay, slot.jitter)
            self._backoffs[key] = backoff
            logger.warning(
                "%s answered %d: %g s between its requests until it answers again"
                " (Retry-After %s; politeness.max_retry_after %g s)",
                host, response.status, wait,
                header.decode("latin-1") if header else "none",
                self.max_retry_after,
            )  # fmt: skip
        backoff.wait = wait
        self._host_backoffs[host] = wait
        slot.delay = max(wait, floor)
        slot.jitter = 0.0

    @property
    def _stats(self) -> Any:
        return self.crawler.stats
