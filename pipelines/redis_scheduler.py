"""The campaign scheduler of a distributed crawl (`crawl --redis URL`).

The same request flow as `pipelines.scheduler.CampaignScheduler` (seen set, budgets,
rows, follow-ups), on a `corpus_crawler.redis_state.RedisCampaignStore`. Two things
differ because the frontier is shared:

* A process with nothing to lease is not finished while any process still holds a
  lease (its pages may bring new links) or requests wait for a host that is resting:
  `has_pending_requests` asks the global counts.
* When no host is ready, the engine is woken when the first one will be (Scrapy's
  own heartbeat only ticks every 5 s).
* A process takes work only as fast as it gets through it: no lease while its engine
  has CONCURRENT_REQUESTS requests in progress (downloading or being scraped, which
  includes waiting for the extraction workers), and a lease never takes more than the
  room left. Otherwise the process that answers first would lease every host it
  releases again at once and pile pages up in front of its own extraction pool while
  the others starve.
"""

from __future__ import annotations

import logging

from scrapy import Request

from corpus_crawler.redis_state import RedisCampaignStore, host_key
from pipelines.scheduler import CampaignScheduler

__all__ = ["RedisCampaignScheduler"]

logger = logging.getLogger(__name__)

#: Seconds between two looks at the frontier when every host with queued requests is
#: busy (its release time is not known yet) or nothing is queued (others may add links).
_IDLE_POLL = 0.05
#: Seconds between two looks while only deferred requests wait (another worker may
#: lease them first).
_RETRY_POLL = 1.0


class RedisCampaignScheduler(CampaignScheduler):
    @property
    def _redis(self) -> RedisCampaignStore:
        store = self.store
        if not isinstance(store, RedisCampaignStore):
            raise RuntimeError(
                "pipelines.redis_scheduler.RedisCampaignScheduler needs a Redis campaign"
                " (crawl --redis URL or distributed.redis_url in the profile)"
            )
        return store

    def enqueue_request(self, request: Request) -> bool:
        store = self._redis
        store.enqueue_host = host_key(request.url)
        try:
            return super().enqueue_request(request)
        finally:
            store.enqueue_host = None

    def has_pending_requests(self) -> bool:
        return bool(self._leased) or self._redis.pending() > 0 or self._retry_wait() is not None

    def __len__(self) -> int:
        return len(self._leased) + self._redis.pending()

    def _room(self) -> int:
        """Requests this process can start now (see the module docstring)."""
        # Scrapy has no public count of the requests in progress; the engine's slot
        # (requests from scheduling until their callback's output is handled) is it.
        slot = getattr(self.crawler.engine, "_slot", None)
        busy = len(getattr(slot, "inprogress", ()))
        return max(0, self._concurrency - busy)

    @property
    def _concurrency(self) -> int:
        return max(1, self.crawler.settings.getint("CONCURRENT_REQUESTS", 16))

    def next_request(self) -> Request | None:
        store = self._redis
        if store.fenced:
            # others took this worker's requests: stop as a write failure does (exit 3),
            # even when there is nothing left to commit that would raise it
            self.campaign._stop(store.fenced_message)
            return None
        if not self._leased:
            room = self._room()
            if room == 0:
                return None  # the engine asks again when one of its requests is done
            self._leased.extend(self._redis.lease(min(room, self.settings.lease_batch)))
            if not self._leased:
                if self._redis.pending() > 0:
                    wait = self._redis.lease_wait
                    self._wake_engine_in(
                        _IDLE_POLL if wait is None else min(wait / 1000, _IDLE_POLL)
                    )
                else:
                    retry = self._retry_wait()
                    if retry is not None:
                        # a deferred request of the campaign falls due soon (any worker's)
                        self._wake_engine_in(min(retry, _RETRY_POLL))
                return None
        return super().next_request()
