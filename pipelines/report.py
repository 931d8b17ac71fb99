"""The HTML crawl report (`corpus_crawler.report`), refreshed during the crawl and at its end.

`ReportExtension` (`CORPUS_REPORT_ENABLED`, `CORPUS_REPORT_INTERVAL` seconds,
0 = only at the end) never renders on the reactor. A refresh during the crawl
renders in a process of its own (`RenderProcess`, started at the first refresh
and kept for the next ones): matplotlib holds the GIL for the whole render
(~1.5 s for a report of a few thousand pages, 80% of it in `Figure.savefig`),
which on a thread of the crawl process stalled the reactor for as long. The
final report waits for the crawl log to be closed and the JSON summary to be
written, so it shows the whole crawl; it renders in that process when a refresh
started one (it has matplotlib loaded), else on a thread (the crawl is over, and
a process would first have to import matplotlib). Its path is in the stats as
``corpus/report_path``. The report is the same, byte for byte, wherever it
renders (`tests/test_report_process.py`).

Every report covers every file of the run's crawl log (it rotates at
``CORPUS_CRAWL_LOG_MAX_FILE_BYTES``) and is named after the first one, so a
run has one report file. The render process keeps the run's figures between
refreshes and reads only the lines appended since the last one
(`corpus_crawler._report_refresh`).
"""

from __future__ import annotations

import json
import logging
import multiprocessing
import os
import time
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path
from typing import Any

from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.utils.defer import maybe_deferred_to_future

from pipelines.crawllog import CrawlLogExtension
from pipelines.extensions import SummaryExtension

__all__ = ["ReportExtension"]

logger = logging.getLogger(__name__)

#: How long the final report waits for the summary and the closed crawl log.
FINAL_WAIT_SECONDS = 60.0


class RenderProcess:
    """One process that renders reports (`corpus_crawler.report.write_report`), started
    on first use (spawned: nothing of the crawl process is copied into it)."""

    def __init__(self) -> None:
        self._executor: ProcessPoolExecutor | None = None

    @property
    def started(self) -> bool:
        return self._executor is not None

    def submit(self, *args: Any, **kwargs: Any) -> Future[Path]:
        """`write_report(*args, **kwargs)` in the render process, reading on from its
        last report of the same run (`corpus_crawler._report_refresh`)."""
        from corpus_crawler._report_refresh import write_run_report

        if self._executor is None:
            from pipelines.worker import _watch_crawl

            self._executor = ProcessPoolExecutor(
                max_workers=1,
                mp_context=multiprocessing.get_context("spawn"),
                # it exits by itself when this process dies, `kill -9` included: a
                # worker blocked on its task queue never sees the pipe close
                initializer=_watch_crawl,
                initargs=(os.getpid(),),
            )
        return self._executor.submit(write_run_report, *args, **kwargs)

    def shutdown(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None


def report_path(crawl_log: Path) -> Path:
    """``NAME.report.html`` beside ``NAME.crawl.log`` (a run's first crawl-log file)."""
    name = crawl_log.name.removesuffix(".open").removesuffix(".crawl.log")
    return crawl_log.with_name(name + ".report.html")


class ReportExtension:
    def __init__(self, crawler: Crawler, interval: float) -> None:
        self.crawler = crawler
        self.interval = interval
        self._task: Any = None
        self._busy = False
        self._renderer = RenderProcess()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ReportExtension:
        settings = crawler.settings
        if not settings.getbool("CORPUS_REPORT_ENABLED", True):
            raise NotConfigured(
                "the HTML report is off: set output.report: true in the profile"
                " (or CORPUS_REPORT_ENABLED=True)"
            )
        if not settings.getbool("CORPUS_CRAWL_LOG_ENABLED", True):
            raise NotConfigured(
                "the HTML report is drawn from the crawl log: set output.crawl_log: true"
            )
        extension = cls(crawler, settings.getfloat("CORPUS_REPORT_INTERVAL", 300.0))
        crawler.signals.connect(extension.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(extension.spider_closed, signal=signals.spider_closed)
        return extension

    def _log(self) -> CrawlLogExtension | None:
        return self.crawler.get_extension(CrawlLogExtension)

    def spider_opened(self) -> None:
        if self.interval > 0:
            from twisted.internet.task import LoopingCall

            self._task = LoopingCall(self._refresh)
            self._task.start(self.interval, now=False)

    def _refresh(self) -> None:
        log = self._log()
        paths = log.paths if log is not None else ()
        if not paths or self._busy:
            return
        from twisted.internet.threads import deferToThread

        self._busy = True
        self.crawler.stats.inc_value("corpus/report_refreshes")
        title = f"Crawl report: {self.crawler.settings.get('CORPUS_PROFILE_NAME') or 'crawl'}"
        future = self._renderer.submit(list(paths), report_path(paths[0]), title=title, final=False)
        # a thread that only waits for the render process (the GIL is free meanwhile)
        deferred = deferToThread(future.result)

        def done(result: Any) -> Any:
            self._busy = False
            return result

        deferred.addBoth(done)
        deferred.addErrback(lambda failure: logger.warning("report refresh failed: %s", failure))

    async def spider_closed(self) -> None:
        from twisted.internet import reactor
        from twisted.internet.task import deferLater
        from twisted.internet.threads import deferToThread

        from corpus_crawler.report import write_report

        if self._task is not None and self._task.running:
            self._task.stop()
        stats = self.crawler.stats
        deadline = time.monotonic() + FINAL_WAIT_SECONDS
        log = self._log()
        # the summary and the closed log come from other spider_closed handlers (and
        # for a refresh still drawing, which writes the same file); only those that
        # will come: no summary when it is off, no log when it never opened (a crawl
        # stopped as it started), else the close waited FINAL_WAIT_SECONDS for nothing
        awaited = [
            key
            for key, coming in (
                ("corpus/crawl_log_path", log is not None and log.writer is not None),
                ("corpus/summary_path", self.crawler.get_extension(SummaryExtension) is not None),
            )
            if coming
        ]
        while time.monotonic() < deadline and (
            self._busy or not all(stats.get_value(key) for key in awaited)
        ):
            await maybe_deferred_to_future(deferLater(reactor, 0.05, lambda: None))
        log_paths = list(log.paths) if log is not None else []
        if not stats.get_value("corpus/crawl_log_path") or not log_paths:
            logger.warning("no crawl log was written: no HTML report")
            self._renderer.shutdown()
            return
        target = report_path(log_paths[0])
        summary_value = stats.get_value("corpus/summary_path")
        summary = None
        if summary_value and Path(summary_value).is_file():
            summary = json.loads(Path(summary_value).read_text(encoding="utf-8"))
        title = f"Crawl report: {self.crawler.settings.get('CORPUS_PROFILE_NAME') or 'crawl'}"
        try:
            if self._renderer.started:
                future = self._renderer.submit(log_paths, target, summary=summary, title=title)
                path = await maybe_deferred_to_future(deferToThread(future.result))
            else:
                path = await maybe_deferred_to_future(
                    deferToThread(
                        write_report,
                        log_paths,
                        target,
                        summary=summary,
                        title=title,
                    )
                )
        except Exception as exc:  # a report is never worth failing a crawl for
            logger.error("could not write the HTML report: %s", exc, exc_info=exc)
            return
        finally:
            self._renderer.shutdown()
        stats.set_value("corpus/report_path", str(path))
        logger.info("report written to %s", path)
