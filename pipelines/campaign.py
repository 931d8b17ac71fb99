"""The campaign: the one owner of a crawl's state and of its writers.

`CampaignExtension` opens the campaign folder (``CORPUS_OUTPUT_DIR``): it locks
it, opens its state (`corpus_crawler.state.CampaignStore`), cuts the output files
back to what the state committed (a crash leaves nothing half-done), and starts
the writer thread (`pipelines.writer.OutputWriter`). Other components ask it::

    campaign = crawler.get_extension(CampaignExtension)
    campaign.writer.submit_exchange(...)      # the WARC capture middleware
    campaign.store.enqueue(...)               # the scheduler

When the item pipelines are through with the last item of a request (each
callback and errback of the spider ends with one, carrying ``row``), it tells
the writer to finish that request. A write failure (a full disk) stops the
crawl with finish reason ``write-failure``.

Settings: CORPUS_OUTPUT_DIR (the campaign folder), CORPUS_CAMPAIGN_FSYNC (fsync
the files and the state at each commit: survive power loss, not only a crash),
CORPUS_CAMPAIGN_COMMIT_INTERVAL (seconds between group commits, 0.5),
CORPUS_CAMPAIGN_LEASE_BATCH (requests taken from the frontier at a time, 32),
CORPUS_SCOPE_MAX_PAGES and CORPUS_SCOPE_MAX_PAGES_PER_DOMAIN (page budgets of
the whole campaign, over all its runs), CORPUS_RECRAWL_ENABLED (this run is a
recrawl pass: `crawl --recrawl`, the spider queues the URLs that are due) and
CORPUS_SCHEDULE_{MIN,MAX,INITIAL}_INTERVAL (seconds; the profile's `schedule:`).
A distributed crawl (`crawl --redis URL`) keeps the state in Redis instead
(`corpus_crawler.redis_state`): CORPUS_DISTRIBUTED_REDIS_URL, _NAMESPACE, _WORKER,
_LEASE_TIMEOUT and _RETRY_TIMEOUT (seconds).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scrapy import Request, signals
from scrapy.crawler import Crawler
from scrapy.settings import BaseSettings
from twisted.internet import defer

from corpus_crawler.campaign_store import CampaignStoreProtocol
from corpus_crawler.recrawl import Schedule
from corpus_crawler.redis_state import RedisCampaignStore, RedisConfig
from corpus_crawler.retries import WAIT_BOUND, RetryPolicy
from corpus_crawler.setting_keys import NO_LIMIT
from corpus_crawler.state import BudgetLimits, CampaignLocked, CampaignStore, reconcile_files
from pipelines.items import CorpusDocument, DroppedPage, RequestDone
from pipelines.settingtypes import exit_with
from pipelines.writer import OutputFiles, OutputSettings, OutputWriter

__all__ = ["WRITE_FAILURE", "CampaignExtension", "CampaignResult", "CampaignSettings"]

logger = logging.getLogger(__name__)

#: The finish reason of a crawl stopped by a write failure.
WRITE_FAILURE = "write-failure"
#: The campaign meta key of the current (or last) recrawl pass.
_RECRAWL_PASS = "recrawl_pass"
#: The campaign totals (counted by the writer) that a pass reports.
_PASS_COUNTS = ("recrawl/", "warc/revisits/")


def _limit(settings: BaseSettings, name: str) -> int | None:
    value = settings.getint(name, NO_LIMIT)
    return None if value < 0 else value


@dataclass(frozen=True, slots=True)
class CampaignSettings:
    directory: Path
    limits: BudgetLimits
    lease_batch: int
    #: Revisit interval bounds of recrawls (CORPUS_SCHEDULE_*_INTERVAL, seconds).
    schedule: Schedule = field(default_factory=Schedule)
    #: This run is a recrawl pass (`crawl --recrawl`, CORPUS_RECRAWL_ENABLED).
    recrawl: bool = False
    #: The shared campaign in Redis of a distributed crawl (None: the SQLite store).
    redis: RedisConfig | None = None
    #: Deferred retries of requests that failed with a network error
    #: (CORPUS_CAMPAIGN_DEFERRED_RETRIES, CORPUS_CAMPAIGN_RETRY_DELAY).
    retries: RetryPolicy = field(default_factory=RetryPolicy)
    #: Seconds a run with nothing else to fetch waits for a deferred request to fall
    #: due (CORPUS_CAMPAIGN_RETRY_WAIT; `corpus_crawler.retries.WAIT_BOUND`).
    retry_wait: float = WAIT_BOUND

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> CampaignSettings:
        lease_batch = settings.getint("CORPUS_CAMPAIGN_LEASE_BATCH", 32)
        if lease_batch < 1:
            raise ValueError(f"CORPUS_CAMPAIGN_LEASE_BATCH must be 1 or more, got {lease_batch}")
        return cls(
            directory=Path(settings.get("CORPUS_OUTPUT_DIR") or "output"),
            limits=BudgetLimits(
                max_pages=_limit(settings, "CORPUS_SCOPE_MAX_PAGES"),
                max_pages_per_domain=_limit(settings, "CORPUS_SCOPE_MAX_PAGES_PER_DOMAIN"),
            ),
            lease_batch=lease_batch,
            schedule=Schedule(
                min_interval=_seconds(settings, "CORPUS_SCHEDULE_MIN_INTERVAL", 3600.0),
                max_interval=_seconds(settings, "CORPUS_SCHEDULE_MAX_INTERVAL", 30 * 86400.0),
                initial_interval=_seconds(settings, "CORPUS_SCHEDULE_INITIAL_INTERVAL", 86400.0),
            ).checked("CORPUS_SCHEDULE_*_INTERVAL"),
            recrawl=settings.getbool("CORPUS_RECRAWL_ENABLED"),
            redis=_redis_config(settings),
            retries=_retry_policy(settings),
            retry_wait=_seconds(settings, "CORPUS_CAMPAIGN_RETRY_WAIT", WAIT_BOUND),
        )


def _retry_policy(settings: BaseSettings) -> RetryPolicy:
    retries = settings.getint("CORPUS_CAMPAIGN_DEFERRED_RETRIES", 0)
    if retries < 0:
        raise ValueError(f"CORPUS_CAMPAIGN_DEFERRED_RETRIES must be 0 or more, got {retries}")
    return RetryPolicy(
        retries=retries, delay=_seconds(settings, "CORPUS_CAMPAIGN_RETRY_DELAY", 600.0)
    )


def _redis_config(settings: BaseSettings) -> RedisConfig | None:
    url = settings.get("CORPUS_DISTRIBUTED_REDIS_URL")
    if not url:
        return None
    worker = settings.get("CORPUS_DISTRIBUTED_WORKER")
    if not worker:
        raise ValueError(
            "CORPUS_DISTRIBUTED_WORKER is not set: start a distributed crawl with"
            " `corpus-crawler crawl PROFILE -o OUT --redis URL`, which picks the worker slot"
        )
    return RedisConfig(
        url=str(url),
        namespace=settings.get("CORPUS_DISTRIBUTED_NAMESPACE") or "crawl",
        worker=str(worker),
        lease_timeout=_seconds(settings, "CORPUS_DISTRIBUTED_LEASE_TIMEOUT", 30.0),
        retry_timeout=_seconds(settings, "CORPUS_DISTRIBUTED_RETRY_TIMEOUT", 600.0),
        delay=settings.getfloat("DOWNLOAD_DELAY", 0.0),
        per_host=settings.getint("CONCURRENT_REQUESTS_PER_DOMAIN", 1),
    )


def _seconds(settings: BaseSettings, name: str, default: float) -> float:
    value = settings.getfloat(name, default)
    if not 0 <= value < math.inf:  # nan too
        raise ValueError(f"{name} must be 0 or more seconds (finite), got {value}")
    return value


@dataclass(frozen=True, slots=True)
class CampaignResult:
    """What a run of the campaign left behind, once its writer is closed."""

    files: OutputFiles
    #: Campaign totals over all runs, as committed (documents, responses, drops...).
    totals: dict[str, int] = field(default_factory=dict)
    run: int = 0
    resumed: bool = False
    #: Requests an earlier run had taken but not finished, queued again at start.
    requeued: int = 0
    #: Requests still in the frontier when this run stopped (deferred ones included).
    remaining: int = 0
    #: Requests deferred after a network failure, waiting for their retry, and the
    #: epoch time the first of them is due (None: none waits).
    retries_pending: int = 0
    next_retry: float | None = None
    #: Output files cut back to their committed length at start.
    reconciled: tuple[str, ...] = ()
    #: The recrawl pass this run belongs to, over all its runs (a pass killed and run
    #: again is one pass): ``pass_number``, ``pass_runs``, ``pass_finished`` and its
    #: new/changed/unchanged/gone counts and revisits, as committed with the files.
    #: None when the run is no part of a recrawl pass.
    recrawl_pass: dict[str, Any] | None = None


class CampaignExtension:
    def __init__(self, crawler: Crawler, settings: CampaignSettings, output: OutputSettings):
        self.crawler = crawler
        self.settings = settings
        directory = settings.directory
        directory.mkdir(parents=True, exist_ok=True)
        self.store: CampaignStoreProtocol
        if settings.redis is not None:
            self.store = RedisCampaignStore(settings.redis, retries=settings.retries)
        else:
            self.store = CampaignStore(
                directory,
                fsync=output.fsync,
                schedule=settings.schedule,
                retries=settings.retries,
            )
        self.reconciled: tuple[str, ...] = ()
        if self.store.resumed:
            self.reconciled = tuple(reconcile_files(directory, self.store.committed_files()))
            for change in self.reconciled:
                logger.warning("campaign %s: %s", directory, change)
            logger.info(
                "resuming the campaign in %s (run %d): %d requests queued, %d of them"
                " unfinished by the last run",
                directory,
                self.store.run,
                self.store.queued,
                self.store.requeued,
            )
        self._recrawl_pass = self._join_recrawl_pass()
        self.writer = OutputWriter(
            output,
            self.store,
            on_failure=self._write_failed,
            on_decision=self._decided,
        )
        self.writer.start()
        self.failure: str | None = None
        self._result: CampaignResult | None = None
        self._waiters: list[defer.Deferred[CampaignResult]] = []
        self._finishing = False
        #: Called before a request is finished (`before_finish`).
        self._before_finish: list[Callable[[], None]] = []

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> CampaignExtension:
        settings = crawler.settings
        try:
            extension = cls(
                crawler,
                CampaignSettings.from_settings(settings),
                OutputSettings.from_settings(settings),
            )
        except CampaignLocked as exc:
            # `scrapy crawl` as `corpus-crawler crawl`: one line and exit 4, no traceback
            from pipelines.cli import ExitCode

            exit_with(exc, code=ExitCode.LOCKED)
        for signal in (signals.item_scraped, signals.item_dropped, signals.item_error):
            crawler.signals.connect(extension.item_done, signal=signal)
        crawler.signals.connect(extension.spider_error, signal=signals.spider_error)
        crawler.signals.connect(extension.spider_closed, signal=signals.spider_closed)
        return extension

    def _join_recrawl_pass(self) -> dict[str, Any] | None:
        """The recrawl pass of this run: the unfinished one a killed run left (whatever the
        flags of this run: its requests are in the frontier), else a new one if this run
        is `--recrawl`. Kept in the campaign meta, committed with the first commit (a run
        killed before it leaves the pass as it found it)."""
        state: dict[str, Any] | None = self.store.get_meta(_RECRAWL_PASS)
        if state is not None and not state["finished"]:
            state["runs"] += 1
        elif self.settings.recrawl:
            totals = self.store.counters()
            state = {
                "number": state["number"] + 1 if state is not None else 1,
                "runs": 1,
                "finished": False,
                # the totals the pass's own counts are measured from
                "baseline": {k: v for k, v in totals.items() if k.startswith(_PASS_COUNTS)},
            }
        else:
            return None
        self.store.set_meta(_RECRAWL_PASS, state)
        return state

    def _recrawl_pass_counts(self, totals: dict[str, int]) -> dict[str, Any] | None:
        state = self._recrawl_pass
        if state is None:
            return None
        baseline: dict[str, int] = state["baseline"]

        def since_start(key: str) -> int:
            return int(totals.get(key, 0)) - int(baseline.get(key, 0))

        revisits = sorted(k for k in totals if k.startswith("warc/revisits/"))
        return {
            "pass_number": state["number"],
            "pass_runs": state["runs"],
            "pass_finished": state["finished"],
            **{c: since_start(f"recrawl/{c}") for c in ("new", "changed", "unchanged", "gone")},
            "revisits": {
                k.removeprefix("warc/revisits/"): since_start(k) for k in revisits if since_start(k)
            },
        }

    # -- requests done ----------------------------------------------------------------------

    def before_finish(self, hook: Callable[[], None]) -> None:
        """Have `hook` called before each request is finished: the scheduler gives the
        store the links it holds back (`CampaignScheduler.flush`), so a finished page's
        links are always in the state that commits its end."""
        self._before_finish.append(hook)

    def finish(self, row: int, url: str, outcome: str) -> None:
        """The request `row` is done: its links go to the store, then the writer finishes
        it (its output, then its mark in the state, on the writer thread)."""
        for hook in self._before_finish:
            hook()
        self.writer.finish(row, url, outcome)

    def item_done(self, item: Any, exception: BaseException | None = None) -> None:
        """`item_scraped` / `item_dropped` / `item_error`: the request's output is complete."""
        row = getattr(item, "row", None)
        if row is None:
            return
        if isinstance(item, CorpusDocument):
            outcome = "kept"
        elif isinstance(item, DroppedPage):
            outcome = f"dropped:{item.reason}"
        elif isinstance(item, RequestDone):
            outcome = item.outcome
        else:
            outcome = "done"
        if exception is not None and not isinstance(item, DroppedPage):
            outcome = f"error:{type(exception).__name__}"
        self.finish(row, item.url, outcome)

    def spider_error(self, failure: Any, response: Any) -> None:
        """A callback raised before its last item: finish the request all the same, or its
        exchange would wait unwritten and the request be fetched again by every run."""
        meta = getattr(response, "meta", None) or {}
        row = meta.get("corpus_row")
        if row is not None:
            error = getattr(failure, "type", None)
            name = error.__name__ if isinstance(error, type) else "error"
            self.finish(row, response.url, f"error:{name}")

    def _decided(self, url: str, outcome: str, due: float | None) -> None:
        """Called on the writer thread when it defers a request (``deferred:<reason>``)
        or drops one whose deferred attempts are used up: a crawl log line, and the drop
        counted as the pipelines count theirs."""
        if outcome.startswith("dropped:"):
            reason = outcome.removeprefix("dropped:")
            logger.debug("dropped (%s): %s", reason, url)
            stats = self.crawler.stats
            if stats is not None:
                # only the writer thread counts this key: no increment is lost
                stats.inc_value(f"corpus/dropped/{reason}")
        from pipelines.crawllog import CrawlLogExtension

        try:
            log = self.crawler.get_extension(CrawlLogExtension)
        except RuntimeError:  # no extension manager (a writer used outside a crawl)
            log = None
        if log is not None:
            log.decided(url, outcome, due)

    # -- failures ---------------------------------------------------------------------------

    def _write_failed(self, message: str) -> None:
        """Called on the writer thread: stop the crawl from the reactor thread."""
        from twisted.internet import reactor

        reactor.callFromThread(self._stop, message)

    def _stop(self, message: str) -> None:
        if self.failure is not None:
            return
        self.failure = message
        logger.error("stopping the crawl: %s", message)
        stats = self.crawler.stats
        if stats is not None:
            stats.set_value("corpus/write_failure", message)
        engine = self.crawler.engine
        if engine is not None and engine.spider is not None:
            from scrapy.utils.defer import deferred_from_coro

            deferred_from_coro(engine.close_spider_async(reason=WRITE_FAILURE))

    # -- the end ----------------------------------------------------------------------------

    def finished(self, reason: str | None = None) -> defer.Deferred[CampaignResult]:
        """Close the writer and the state (once); fires with the `CampaignResult`."""
        waiter: defer.Deferred[CampaignResult] = defer.Deferred()
        if self._result is not None:
            waiter.callback(self._result)
            return waiter
        self._waiters.append(waiter)
        if not self._finishing:
            self._finishing = True
            self.writer.close().addCallback(self._closed, reason)
        return waiter

    def _closed(self, files: OutputFiles, reason: str | None) -> None:
        store = self.store
        if files.failure is not None:
            # nothing after the last commit is trusted: the next run cuts it off
            totals = store.counters()
            remaining = store.in_frontier()
            pending, next_retry = store.retries_pending()
            store.abandon()
        else:
            totals = store.counters()
            remaining = store.in_frontier()
            pending, next_retry = store.retries_pending()
            if self._recrawl_pass is not None and reason == "finished" and remaining == 0:
                # every due URL of the pass was visited: the next --recrawl starts a new one
                self._recrawl_pass["finished"] = True
                store.set_meta(_RECRAWL_PASS, self._recrawl_pass)
            store.close(reason)
        self._result = CampaignResult(
            files=files,
            totals=totals,
            run=store.run,
            resumed=store.resumed,
            requeued=store.requeued,
            remaining=remaining,
            retries_pending=pending,
            next_retry=next_retry,
            reconciled=self.reconciled,
            recrawl_pass=self._recrawl_pass_counts(totals),
        )
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            waiter.callback(self._result)

    async def spider_closed(self, reason: str) -> None:
        from scrapy.utils.defer import maybe_deferred_to_future

        await maybe_deferred_to_future(self.finished(reason))


class RequestDoneMiddleware:
    """Finishes a request whose callback produced no page (a sitemap, an error, a
    links-only page) at the `RequestDone` the spider ends it with, and keeps that
    control item out of Scrapy's item flow: feed exports (`-o items.jsonl`), item
    pipelines and item stats see pages only.

    Closest to the engine (order 10), it also hands the callback's requests to the
    engine itself, in the order the callback made them, so that every follow-up
    request of the callback is in the scheduler when the request is finished (and its
    links go to the state in the commit that marks it done). Left to Scrapy, they
    would not be: with the asyncio reactor (Scrapy 2.13+) the scraper puts a
    callback's output in a queue ahead of the workers that schedule it, so a finish
    taken while the output is iterated ran before the page's links were scheduled,
    and a `kill -9` after that commit lost them (`tests/test_resume_links_only.py`).
    """

    def __init__(self, campaign: CampaignExtension, crawler: Crawler) -> None:
        self.campaign = campaign
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RequestDoneMiddleware:
        campaign = crawler.get_extension(CampaignExtension)
        if campaign is None:
            from scrapy.exceptions import NotConfigured

            raise NotConfigured("no campaign (pipelines.campaign.CampaignExtension is off)")
        return cls(campaign, crawler)

    def _passes(self, element: Any) -> bool:
        if isinstance(element, Request):
            # what the scraper does with a request, done now, in the callback's order
            engine = self.crawler.engine
            assert engine is not None
            engine.crawl(element)
            return False
        if isinstance(element, RequestDone):
            self.campaign.item_done(element)
            return False
        return True

    def process_spider_output(self, response: Any, result: Any) -> Any:
        for element in result:
            if self._passes(element):
                yield element

    async def process_spider_output_async(self, response: Any, result: Any) -> Any:
        async for element in result:
            if self._passes(element):
                yield element
