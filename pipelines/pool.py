"""A process pool for pages, driven from the Twisted reactor without blocking it.

`PagePool.run(task)` is awaited by the extraction pipeline: it waits for a slot
(at most `max_in_flight` pages are in the pool), submits the page to a
`concurrent.futures.ProcessPoolExecutor` (forkserver or spawn context: never
fork a process that runs Twisted threads), and resumes on the reactor thread
when the worker answers (`reactor.callFromThread` from the future's callback).

Two limits protect the crawl: the worker's own per-page time cap
(`pipelines.worker`), and a guard on the reactor side in case a worker hangs
where SIGALRM cannot reach it; both end as a `DropReason.TIMEOUT` drop. A
worker that dies (out of memory, a crash in C code, `kill -9`) breaks the
executor and fails every page in flight; the pool then starts a new one and
tries each of those pages once more there. A page whose second try dies too is
counted as an extractor error. Results come back by file (`corpus_crawler.spool`),
so a worker killed while it answers cannot hang the pool.
"""

from __future__ import annotations

import logging
import math
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, overload

from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet import defer
from twisted.python.failure import Failure

from corpus_crawler.spool import ResultSpool
from pipelines.glue import deferred_from_future
from pipelines.worker import (
    DEDUP_MODULE,
    FormattedVertical,
    PageResult,
    PageTask,
    VerticalTask,
    WorkerConfig,
    init_worker,
    run_task,
)

__all__ = ["PagePool", "PoolCrashed", "PoolTimeout", "default_workers", "start_method_of"]

logger = logging.getLogger(__name__)


class PoolTimeout(Exception):
    """A page took longer than the reactor-side guard."""


class PoolCrashed(Exception):
    """The worker running a page died; the pool was restarted."""


def default_workers() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def start_method_of(requested: str) -> str:
    """The multiprocessing start method of the workers: `requested`
    (CORPUS_EXTRACT_START_METHOD), else forkserver where there is one."""
    available = multiprocessing.get_all_start_methods()
    if requested:
        if requested not in available:
            raise ValueError(
                f"CORPUS_EXTRACT_START_METHOD: {requested!r} is not available here: use one of"
                f" {', '.join(m for m in available if m != 'fork')}"
            )
        return requested
    return "forkserver" if "forkserver" in available else "spawn"


class PagePool:
    def __init__(
        self,
        config: WorkerConfig,
        *,
        workers: int,
        max_in_flight: int,
        start_method: str = "",
    ) -> None:
        self.config = config
        self.workers = workers
        self.max_in_flight = max_in_flight
        self.start_method = start_method_of(start_method)
        # A page may wait behind the others in flight before it runs.
        queued_rounds = math.ceil(max_in_flight / workers)
        self.guard_seconds = (
            config.page_timeout * (queued_rounds + 1) + 10.0 if config.page_timeout > 0 else 0.0
        )
        self._semaphore = defer.DeferredSemaphore(max_in_flight)
        self._executor: ProcessPoolExecutor | None = None
        # a page's result comes back by file: a worker killed while sending it through
        # the pool's pipe would hang the pool for good (corpus_crawler/spool.py)
        self._spool: ResultSpool | None = None
        self.restarts = 0
        #: The most tasks that ever waited for a slot at once (`waiting`).
        self.waiting_max = 0

    def start(self) -> None:
        if self._spool is None:
            self._spool = ResultSpool()
        context = multiprocessing.get_context(self.start_method)
        if self.start_method == "forkserver":
            # the fork server imports these once; each worker then forks ready to go
            preload = ["pipelines.worker"]
            if self.config.dedup is not None:
                preload.append(DEDUP_MODULE)
            context.set_forkserver_preload(preload)
        self._executor = ProcessPoolExecutor(
            max_workers=self.workers,
            mp_context=context,
            initializer=init_worker,
            initargs=(self.config,),
        )
        # Start the workers now, while the first pages download.
        for _ in range(self.workers):
            self._executor.submit(int)

    @overload
    async def run(self, task: PageTask) -> PageResult: ...
    @overload
    async def run(self, task: VerticalTask) -> FormattedVertical: ...
    async def run(self, task: PageTask | VerticalTask) -> PageResult | FormattedVertical:
        acquired = self._semaphore.acquire()
        self.waiting_max = max(self.waiting_max, self.waiting)
        await maybe_deferred_to_future(acquired)
        try:
            try:
                return await maybe_deferred_to_future(self._submit(task))
            except PoolCrashed:
                # A dying worker fails every page in flight in its pool, not only its
                # own: each gets one more try in the new pool. A page that kills its
                # worker again is the cause, and is dropped.
                logger.warning("retrying %s in the new pool", task.url)
                return await maybe_deferred_to_future(self._submit(task))
        finally:
            self._semaphore.release()

    @property
    def waiting(self) -> int:
        """Tasks waiting for a slot, behind the `max_in_flight` in the workers."""
        return len(self._semaphore.waiting)

    def _submit(self, task: PageTask | VerticalTask) -> defer.Deferred[Any]:
        from twisted.internet import reactor

        executor, spool = self._executor, self._spool
        if executor is None or spool is None:
            raise RuntimeError("PagePool.start() was not called")
        try:
            future = spool.submit(executor, run_task, task)
        except BrokenProcessPool:
            self._restart(executor)
            return defer.fail(PoolCrashed("the extraction workers had stopped"))
        result = deferred_from_future(future)

        def crashed(failure: Failure) -> Failure:
            if failure.check(BrokenProcessPool):
                self._restart(executor)
                return Failure(PoolCrashed(str(failure.value)))
            return failure

        result.addErrback(crashed)
        if self.guard_seconds:
            result.addTimeout(self.guard_seconds, reactor, onTimeoutCancel=_guard_timeout)
        return result

    def _restart(self, broken: ProcessPoolExecutor) -> None:
        if self._executor is not broken:
            return  # another page already restarted it
        self.restarts += 1
        logger.error("an extraction worker died; starting a new pool (restart %d)", self.restarts)
        broken.shutdown(wait=False, cancel_futures=True)
        self.start()

    def shutdown(self) -> defer.Deferred[None]:
        """Stop the workers (in a thread: joining them must not block the reactor)."""
        from twisted.internet.threads import deferToThread

        executor, self._executor = self._executor, None
        spool, self._spool = self._spool, None
        if executor is None:
            if spool is not None:
                spool.close()
            return defer.succeed(None)

        def stop() -> None:
            executor.shutdown(wait=True, cancel_futures=True)
            if spool is not None:
                spool.close()

        return deferToThread(stop)


def _guard_timeout(result: Any, timeout: float) -> Any:
    if isinstance(result, Failure) and result.check(defer.CancelledError):
        raise PoolTimeout(f"no answer from the extraction worker in {timeout:g} s")
    return result
