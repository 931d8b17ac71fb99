"""A Scrapy extension for tests: at every request the campaign finishes, which of the
links its page holds had not reached the scheduler yet.

It records, never changes: `request_scheduled` gives the URLs in the scheduler, and
`CampaignExtension.finish` (the one place a request is finished) is observed through
a wrapper that looks, then calls it. The tree site of the test names each page's links
in its own URL (`/pN.html` links `/p{F*N+1}` .. `/p{F*N+F}`), so the probe knows them
without parsing. At the close it writes `FINISH_PROBE_OUT` (a JSON list of
[finished URL, [links not yet scheduled]]).
"""

from __future__ import annotations

import json
import re
from typing import Any

from scrapy import signals
from scrapy.crawler import Crawler

from pipelines.campaign import CampaignExtension

_PAGE = re.compile(r"/p(\d+)\.html$")


class FinishProbe:
    def __init__(self, crawler: Crawler) -> None:
        settings = crawler.settings
        self.out = settings.get("FINISH_PROBE_OUT")
        self.fanout = settings.getint("FINISH_PROBE_FANOUT")
        self.pages = settings.getint("FINISH_PROBE_PAGES")
        self.scheduled: set[str] = set()
        self.early: list[tuple[str, list[str]]] = []
        self.finished = 0
        self.crawler = crawler
        crawler.signals.connect(self._started, signal=signals.engine_started)
        crawler.signals.connect(self._scheduled, signal=signals.request_scheduled)
        crawler.signals.connect(self._closed, signal=signals.spider_closed)

    def _started(self) -> None:
        # the extensions all exist by now (not yet while they are being made)
        campaign = self.crawler.get_extension(CampaignExtension)
        assert campaign is not None
        finish = campaign.finish

        def observed(row: int, url: str, outcome: str) -> None:
            self._look(url)
            finish(row, url, outcome)

        campaign.finish = observed  # type: ignore[method-assign]

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> FinishProbe:
        return cls(crawler)

    def _scheduled(self, request: Any, spider: Any) -> None:
        self.scheduled.add(request.url)

    def _look(self, url: str) -> None:
        match = _PAGE.search(url)
        if match is None:
            return
        self.finished += 1
        page = int(match.group(1))
        base = url[: match.start()]
        links = [
            f"{base}/p{c}.html"
            for c in range(self.fanout * page + 1, self.fanout * page + self.fanout + 1)
            if c < self.pages
        ]
        missing = [link for link in links if link not in self.scheduled]
        if missing:
            self.early.append((url, missing))

    def _closed(self, spider: Any) -> None:
        with open(self.out, "w", encoding="utf-8") as handle:
            json.dump({"finished": self.finished, "early": self.early}, handle)


class FinishProbeAddon:
    """`-s 'ADDONS={"finish_probe.FinishProbeAddon": 0}'`: the probe beside the project's
    own extensions (a plain `-s EXTENSIONS=...` would replace them)."""

    def update_settings(self, settings: Any) -> None:
        settings.set_in_component_priority_dict("EXTENSIONS", FinishProbe, 1000)
