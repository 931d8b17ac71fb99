"""A Scrapy scheduler whose frontier, seen set and page budgets live in the campaign state.

Every request the engine schedules (seeds, links the spider yields after the
spider middlewares, sitemaps, redirects, retries) is written to the campaign's
SQLite frontier as JSON (`corpus_crawler.state`), never held in RAM beyond a
small batch: a crawl that discovers millions of URLs keeps a flat memory. Order:
priority (the spider gives -depth: breadth first), then FIFO.

* Seen set: the request fingerprint (Scrapy's `REQUEST_FINGERPRINTER`), a unique
  key on disk; `dont_filter` requests (retries) are never filtered.
* Page budgets: a request the spider marks ``meta["corpus_budget"]`` counts
  against CORPUS_SCOPE_MAX_PAGES and, per `corpus_crawler.state.budget_key`,
  CORPUS_SCOPE_MAX_PAGES_PER_DOMAIN, over the whole campaign.
* Rows: a dequeued request carries its frontier row in ``meta["corpus_row"]``.
  A request scheduled with a row in its meta is a follow-up of that request (a
  redirect or a retry copies the meta): the new request gets its own row and the
  old one is finished, so its exchange is archived exactly once.
"""

from __future__ import annotations

import json
import logging
from collections import deque
from typing import Any

from scrapy import Request, Spider
from scrapy.core.scheduler import BaseScheduler
from scrapy.crawler import Crawler
from scrapy.utils.request import request_from_dict

from corpus_crawler.campaign_store import CampaignStoreProtocol
from corpus_crawler.state import Admission, budget_key
from corpus_crawler.traps import seen_key
from pipelines.campaign import CampaignExtension, CampaignSettings

__all__ = ["CampaignScheduler", "request_from_json", "request_to_json"]

logger = logging.getLogger(__name__)

ROW = "corpus_row"
ROW_URL = "corpus_row_url"
BUDGET = "corpus_budget"
#: The URL of a recrawl request (a known URL queued again when due).
RECRAWL = "corpus_recrawl"


def request_to_json(request: Request, spider: Spider | None) -> str:
    """A request as JSON text (headers and body as ISO-8859-1 text: byte-exact)."""
    data = request.to_dict(spider=spider)
    data["headers"] = {
        key.decode("latin-1"): [value.decode("latin-1") for value in values]
        for key, values in request.headers.items()
    }
    data["body"] = request.body.decode("latin-1")
    try:
        return json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    except TypeError as exc:
        bad = sorted(k for k, v in request.meta.items() if not _plain(v))
        raise TypeError(
            f"request meta must be plain data to go to the campaign frontier: {exc}"
            f" (keys {bad} of {request.url})"
        ) from None


def request_from_json(text: str, spider: Spider | None) -> Request:
    data: dict[str, Any] = json.loads(text)
    data["body"] = data["body"].encode("latin-1")
    data["headers"] = {
        key.encode("latin-1"): [value.encode("latin-1") for value in values]
        for key, values in data["headers"].items()
    }
    return request_from_dict(data, spider=spider)


def _plain(value: Any) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


class CampaignScheduler(BaseScheduler):
    def __init__(self, crawler: Crawler, campaign: CampaignExtension) -> None:
        self.crawler = crawler
        self.campaign = campaign
        self.store: CampaignStoreProtocol = campaign.store
        self.settings: CampaignSettings = campaign.settings
        self.fingerprinter = crawler.request_fingerprinter
        self.stats = crawler.stats
        self.spider: Spider | None = None
        self._leased: deque[tuple[int, str]] = deque()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> CampaignScheduler:
        campaign = crawler.get_extension(CampaignExtension)
        if campaign is None:
            raise RuntimeError(
                "pipelines.scheduler.CampaignScheduler needs pipelines.campaign."
                "CampaignExtension in EXTENSIONS (pipelines/settings.py has it)"
            )
        return cls(crawler, campaign)

    def open(self, spider: Spider) -> None:
        self.spider = spider

    def close(self, reason: str) -> None:
        # Leased requests stay leased in the state: the next run queues them again.
        self._leased.clear()

    def has_pending_requests(self) -> bool:
        return bool(self._leased) or self.store.queued > 0

    def __len__(self) -> int:
        return len(self._leased) + self.store.queued

    def enqueue_request(self, request: Request) -> bool:
        meta = request.meta
        parent = meta.pop(ROW, None)
        parent_url = meta.pop(ROW_URL, request.url)
        budget = meta.pop(BUDGET, None)
        # a recrawl of a known URL (spiders/corpus.py): not in the seen set's hands; the
        # mark stays in the meta, so its retries and redirects are known as such
        recrawl = meta.get(RECRAWL)
        if recrawl is not None and parent is not None:
            # a retry or redirect of a recrawl request (queued already, once)
            if recrawl != request.url:
                # redirected: the validators were the old URL's, not this one's
                for header in (b"If-None-Match", b"If-Modified-Since"):
                    request.headers.pop(header, None)
            recrawl = None
        fingerprint = None if request.dont_filter else self._fingerprint(request)
        if recrawl is not None:
            fingerprint, budget = None, None
        try:
            admission = self.store.enqueue(
                # serialised only if it is queued: most links of a page were seen before
                lambda: request_to_json(request, self.spider),
                request.priority,
                fingerprint=fingerprint,
                # a redirect or retry of a page does not count against the budget again
                budget=budget_key(request.url) if budget and parent is None else None,
                limits=self.settings.limits,
                recrawl=recrawl,
            )
        finally:
            if parent is not None:
                outcome = "retried" if parent_url == request.url else "redirected"
                self.campaign.writer.finish(int(parent), str(parent_url), outcome)
        stats = self.stats
        assert stats is not None
        if admission is Admission.QUEUED:
            stats.inc_value("scheduler/enqueued/disk")
            stats.inc_value("scheduler/enqueued")
            return True
        if admission is Admission.DUPLICATE:
            stats.inc_value("dupefilter/filtered")
        else:
            stats.inc_value(f"corpus/links/{admission.value}")
        return False

    def _fingerprint(self, request: Request) -> bytes:
        # Session ids do not make a page new (corpus_crawler.traps.seen_key): the
        # request keeps its URL, the seen set remembers it without them.
        key = seen_key(request.url)
        if key != request.url:
            request = request.replace(url=key)
        return self.fingerprinter.fingerprint(request)

    def next_request(self) -> Request | None:
        if not self._leased:
            self._leased.extend(self.store.lease(self.settings.lease_batch))
            if not self._leased:
                return None
        row, text = self._leased.popleft()
        request = request_from_json(text, self.spider)
        request.meta[ROW] = row
        request.meta[ROW_URL] = request.url
        stats = self.stats
        assert stats is not None
        stats.inc_value("scheduler/dequeued/disk")
        stats.inc_value("scheduler/dequeued")
        return request
