"""The campaign scheduler of a distributed crawl (`crawl --redis URL`).

The same request flow as `pipelines.scheduler.CampaignScheduler` (seen set, budgets,
rows, follow-ups), on a `corpus_crawler.redis_state.RedisCampaignStore`. Two things
differ because the frontier is shared:

* A process with nothing to lease is not finished while any process still holds a
  lease (its pages may bring new links) or requests wait for a host that is resting:
  `has_pending_requests` asks the global counts.
* When no host is ready, the engine is woken when the first one will be (Scrapy's
  own heartbeat only ticks every 5 s).
"""

from __future__ import annotations

import logging

from scrapy import Request

from corpus_crawler.redis_state import RedisCampaignStore
from pipelines.scheduler import CampaignScheduler

__all__ = ["RedisCampaignScheduler"]

logger = logging.getLogger(__name__)

#: Seconds between two looks at the frontier when every host with queued requests is
#: busy (its release time is not known yet) or nothing is queued (others may add links).
_IDLE_POLL = 0.05


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

    def has_pending_requests(self) -> bool:
        return bool(self._leased) or self._redis.pending() > 0

    def __len__(self) -> int:
        return len(self._leased) + self._redis.pending()

    def next_request(self) -> Request | None:
        request = super().next_request()
        if request is None and self._redis.pending() > 0:
            wait = self._redis.lease_wait
            self._wake_engine_in(_IDLE_POLL if wait is None else min(wait / 1000, _IDLE_POLL))
        return request

    def _wake_engine_in(self, seconds: float) -> None:
        # Scrapy has no public "call me back" for a scheduler; its engine's own loop
        # (CallLaterOnce: a second schedule before the first fires is a no-op) is it.
        slot = getattr(self.crawler.engine, "_slot", None)
        nextcall = getattr(slot, "nextcall", None)
        if nextcall is not None:
            nextcall.schedule(max(seconds, 0.005))
