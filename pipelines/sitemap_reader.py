"""Sitemaps read in a process of their own, so that the rest of the crawl does not feel them.

A sitemap may hold 50 MB of XML: seconds of CPU. Parsed on the reactor thread it
stalled every host of the crawl; in a thread of the crawl process it still took the
GIL from the reactor, and a host crawled page by page next to a 30 MB sitemap ran at
0.20x its speed alone while the sitemap was parsed (benchmarks/sitemap_stall.py, on a
shared machine). Here one worker process (forkserver or spawn: never fork a process
that runs Twisted threads), started at the crawl's first sitemap, reads the sitemaps
one at a time with `corpus_crawler.sitemaps.read_sitemap` and its limits; the reactor
only hands over the bytes and gets the URLs back.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.defer import DeferredSemaphore

from corpus_crawler.sitemaps import SitemapContent, SitemapLimits, read_sitemap
from corpus_crawler.spool import ResultSpool
from pipelines.glue import deferred_from_future
from pipelines.worker import _watch_crawl

__all__ = ["SitemapReader"]

logger = logging.getLogger(__name__)


class SitemapReader:
    """`await reader.read(body, url)`: what the sitemap lists, or None if the worker died
    (out of memory, a crash in C code); the next sitemap gets a new worker."""

    def __init__(self, limits: SitemapLimits) -> None:
        self.limits = limits
        # one sitemap at a time: bounds the memory of the worker and of the bodies sent
        self._turn = DeferredSemaphore(1)
        self._executor: ProcessPoolExecutor | None = None
        # the sitemap's content comes back by file: a worker killed while sending it
        # through the pool's pipe would hang the reader (corpus_crawler/spool.py)
        self._spool: ResultSpool | None = None

    def _worker(self) -> ProcessPoolExecutor:
        if self._executor is None:
            methods = multiprocessing.get_all_start_methods()
            method = "forkserver" if "forkserver" in methods else "spawn"
            self._executor = ProcessPoolExecutor(
                max_workers=1,
                mp_context=multiprocessing.get_context(method),
                # as the extraction workers: exit when the crawl dies, even by kill -9
                initializer=_watch_crawl,
                initargs=(os.getpid(),),
            )
        return self._executor

    async def read(self, body: bytes, url: str) -> SitemapContent | None:
        await maybe_deferred_to_future(self._turn.acquire())
        try:
            executor = self._worker()
            try:
                if self._spool is None:
                    self._spool = ResultSpool()
                future = self._spool.submit(executor, read_sitemap, body, url, self.limits)
                return await maybe_deferred_to_future(deferred_from_future(future))
            except BrokenProcessPool as exc:
                logger.warning("the sitemap worker stopped (%s) reading %s", exc, url)
                executor.shutdown(wait=False, cancel_futures=True)
                self._executor = None
                return None
        finally:
            self._turn.release()

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None
        if self._spool is not None:
            self._spool.close()
            self._spool = None
