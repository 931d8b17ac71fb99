"""robots.txt within bounds: the first 500 KiB, parsed off the reactor thread.

A hostile or broken host can serve a robots.txt of many megabytes. Parsed on
the reactor thread, one 10 MB file took ~7 s of CPU and 660 MB of memory, and
every other host of the crawl waited. Google reads the first 500 KiB and
ignores the rest (https://developers.google.com/search/docs/crawling-indexing/
robots/robots_txt#file-format); so does this middleware, and it parses that
prefix in the reactor's thread pool, so the reactor keeps serving other hosts.
"""

from __future__ import annotations

from scrapy import Request, signals
from scrapy.crawler import Crawler
from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware
from scrapy.http import Response
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.misc import build_from_crawler
from twisted.internet.defer import Deferred
from twisted.internet.threads import deferToThread

from corpus_crawler.sitemaps import ROBOTS_TXT_MAX_BYTES

__all__ = ["BoundedRobotsTxtMiddleware"]


class BoundedRobotsTxtMiddleware(RobotsTxtMiddleware):
    """Scrapy's RobotsTxtMiddleware, reading at most `CORPUS_ROBOTS_MAX_BYTES` in a thread."""

    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler)
        self.max_bytes = crawler.settings.getint("CORPUS_ROBOTS_MAX_BYTES", ROBOTS_TXT_MAX_BYTES)

    async def _parse_robots(self, response: Response, netloc: str, request: Request) -> None:
        stats = self.crawler.stats
        assert stats is not None
        stats.inc_value("robotstxt/response_count")
        stats.inc_value(f"robotstxt/response_status_count/{response.status}")
        body = response.body
        if len(body) > self.max_bytes:
            stats.inc_value("corpus/robots/truncated")
            body = body[: self.max_bytes]
        parser = await maybe_deferred_to_future(
            deferToThread(build_from_crawler, self._parserimpl, self.crawler, body)
        )
        await self.crawler.signals.send_catch_log_async(
            signal=signals.robots_parsed, robotparser=parser, request=request
        )
        waiting = self._parsers[netloc]
        self._parsers[netloc] = parser
        if isinstance(waiting, Deferred):
            waiting.callback(parser)
