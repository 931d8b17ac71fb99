"""A Scrapy extension for the crawl benchmarks: how long the reactor stalls, and how long
the crawl takes to close.

`ReactorLagProbe` runs a `LoopingCall` every 10 ms on the crawl's reactor and records
how late each call comes (anything the reactor thread does between two calls, or
the GIL held by another thread, delays it); and the wall-clock moment of the last
response the engine received. At exit it writes them as JSON to the file named by
the environment variable ``CORPUS_BENCH_LAG_FILE``: the lags split into the crawl
(up to the last response) and the close (after it), and the last response's time, so
the benchmark gets the close time as its own clock at process exit minus that.

Enabled by `crawl_speed.py` (added to the tree's own ``EXTENSIONS``); not part of the
crawler.
"""

from __future__ import annotations

import atexit
import json
import os
import time
from typing import Any

INTERVAL = 0.010


def _stats(lags: list[float]) -> dict[str, float | int]:
    if not lags:
        return {"samples": 0, "max_ms": 0.0, "p99_ms": 0.0, "over_100ms": 0}
    ordered = sorted(lags)
    p99 = ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]
    return {
        "samples": len(ordered),
        "max_ms": round(1000 * ordered[-1], 1),
        "p99_ms": round(1000 * p99, 1),
        "over_100ms": sum(1 for lag in ordered if lag > 0.1),
    }


class ReactorLagProbe:
    def __init__(self, target: str) -> None:
        self.target = target
        self.samples: list[tuple[float, float]] = []  # (wall time, lag)
        self.last_response_wall = 0.0
        self.spider_closed_wall = 0.0
        self.idle_wall = 0.0
        self.idle_walls: list[float] = []
        self.last_item_wall = 0.0
        self.engine_stopped_wall = 0.0
        self._previous = 0.0
        self._task: Any = None
        atexit.register(self._dump)

    @classmethod
    def from_crawler(cls, crawler: Any) -> ReactorLagProbe:
        from scrapy import signals
        from scrapy.exceptions import NotConfigured

        target = os.environ.get("CORPUS_BENCH_LAG_FILE")
        if not target:
            raise NotConfigured("set CORPUS_BENCH_LAG_FILE to probe the reactor")
        probe = cls(target)
        crawler.signals.connect(probe.engine_started, signal=signals.engine_started)
        crawler.signals.connect(probe.response_received, signal=signals.response_received)
        crawler.signals.connect(probe.spider_closed, signal=signals.spider_closed)
        crawler.signals.connect(probe.spider_idle, signal=signals.spider_idle)
        crawler.signals.connect(probe.engine_stopped, signal=signals.engine_stopped)
        for item_signal in (signals.item_scraped, signals.item_dropped, signals.item_error):
            crawler.signals.connect(probe.item_done, signal=item_signal)
        return probe

    def engine_started(self) -> None:
        from twisted.internet.task import LoopingCall

        self._previous = time.monotonic()
        self._task = LoopingCall(self._tick)
        self._task.start(INTERVAL, now=False)

    def _tick(self) -> None:
        now = time.monotonic()
        self.samples.append((time.time(), max(0.0, now - self._previous - INTERVAL)))
        self._previous = now

    def response_received(self) -> None:
        self.last_response_wall = time.time()

    def spider_closed(self) -> None:
        self.spider_closed_wall = time.time()

    def spider_idle(self) -> None:
        # the last idle before the close: when the engine found nothing left to do
        self.idle_wall = time.time()
        self.idle_walls.append(self.idle_wall)

    def item_done(self) -> None:
        self.last_item_wall = time.time()

    def engine_stopped(self) -> None:
        # after every spider_closed handler (the final report, the writer's close)
        self.engine_stopped_wall = time.time()

    def _dump(self) -> None:
        last = self.last_response_wall
        crawl = [lag for moment, lag in self.samples if moment <= last]
        close = [lag for moment, lag in self.samples if moment > last]
        with open(self.target, "w", encoding="utf-8") as handle:
            json.dump(
                {
                    "last_response_wall": last,
                    "spider_closed_wall": self.spider_closed_wall,
                    "idle_wall": self.idle_wall,
                    "idle_walls": self.idle_walls,
                    "last_item_wall": self.last_item_wall,
                    "engine_stopped_wall": self.engine_stopped_wall,
                    "crawl": _stats(crawl),
                    "close": _stats(close),
                },
                handle,
            )
