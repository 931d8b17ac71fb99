"""robots.txt's Crawl-delay (`pipelines.pacing`): a real crawl of two loopback hosts.

127.0.0.1 asks for 0.8 s, 127.0.0.2 for 100 s (capped at the profile's 1.0 s). The
profile's own delay is 0 and AutoThrottle is on, so every gap the servers see at or
above the floor is the Crawl-delay's doing (without it the gaps are ~0: AutoThrottle
brings the delay down to the profile's minimum on fast local answers).
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from scrapy.exceptions import NotConfigured
from scrapy.utils.test import get_crawler

from corpus_crawler.profile import ProfileError, parse_profile
from corpus_crawler.testserver import Reply, RequestRecord, SiteServer, html_reply

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 180  # a guard against a hang, not a speed assertion
#: Server-side gaps may come out a little shorter than the client's (thread scheduling).
SLACK = 0.15
PAGES = 4

PROFILE = """\
name: crawl-delay
seeds:
  urls: ["{a}/", "{b}/"]
scope:
  max_depth: 1
politeness:
  download_delay: 0
  randomize_delay: true
  autothrottle: true
  max_crawl_delay: 1.0
network:
  allowed_networks: [127.0.0.0/8]
extraction:
  workers: 1
output:
  progress_interval: 0
  report: false
"""


class TimedSite:
    """A site whose every request (robots.txt included) is timed on arrival."""

    def __init__(self, host: str, robots: str) -> None:
        self.times: list[float] = []
        self._lock = threading.Lock()
        links = "".join(f'<a href="/p{n}.html">page {n}</a> ' for n in range(PAGES))
        pages = {"/": html_reply(f"<html><body>{links}</body></html>".encode())}
        pages |= {
            f"/p{n}.html": html_reply(f"<html><body><p>Page {n}.</p></body></html>".encode())
            for n in range(PAGES)
        }
        pages["/robots.txt"] = Reply(
            body=robots.encode(), headers=(("Content-Type", "text/plain"),)
        )
        replies = pages
        routes = {path: self._timed(reply) for path, reply in replies.items()}
        self.server = SiteServer(routes=routes, host=host)

    def _timed(self, reply: Reply) -> Callable[[RequestRecord], Reply]:
        def route(request: RequestRecord) -> Reply:
            with self._lock:
                self.times.append(time.monotonic())
            return reply

        return route

    def gaps(self) -> list[float]:
        times = sorted(self.times)
        return [later - earlier for earlier, later in itertools.pairwise(times)]


Crawled = tuple[TimedSite, TimedSite, dict[str, Any]]


@pytest.fixture(scope="module")
def crawl(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Crawled]:
    a = TimedSite("127.0.0.1", "User-agent: *\nCrawl-delay: 0.8\nDisallow: /private/\n")
    b = TimedSite("127.0.0.2", "User-agent: *\nCrawl-delay: 100\n")
    work = tmp_path_factory.mktemp("crawl-delay")
    with a.server as server_a, b.server as server_b:
        profile = work / "profile.yaml"
        profile.write_text(PROFILE.format(a=server_a.base_url, b=server_b.base_url))
        result = subprocess.run(
            [sys.executable, "-m", "corpus_crawler.cli", "crawl", str(profile),
             "-o", str(work / "out")],
            cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT, check=False,
        )  # fmt: skip
        assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    (summary,) = (work / "out").glob("*-summary.json")
    yield a, b, json.loads(summary.read_text(encoding="utf-8"))


def test_every_request_to_a_host_waits_its_crawl_delay(crawl: Crawled) -> None:
    a, _, _ = crawl
    # robots.txt, the index and its pages: all fetched, never closer than 0.8 s
    assert len(a.times) == PAGES + 2
    assert min(a.gaps()) >= 0.8 - SLACK, a.gaps()


def test_a_crawl_delay_above_the_cap_is_capped_and_counted(crawl: Crawled) -> None:
    _, b, summary = crawl
    assert len(b.times) == PAGES + 2  # finished: not 100 s a page
    assert min(b.gaps()) >= 1.0 - SLACK, b.gaps()
    stats = summary["stats"]
    assert stats["corpus/robots/crawl_delay/hosts"] == 2
    assert stats["corpus/robots/crawl_delay/capped"] == 1


def test_max_crawl_delay_is_validated_and_zero_switches_it_off() -> None:
    with pytest.raises(ProfileError, match="max_crawl_delay: must be >= 0 seconds"):
        parse_profile({"politeness": {"max_crawl_delay": -1}})
    from pipelines.pacing import HostPacing

    for settings in (
        {"ROBOTSTXT_OBEY": True, "CORPUS_ROBOTS_MAX_CRAWL_DELAY": 0, "CORPUS_RETRY_AFTER_MAX": 0},
        {"ROBOTSTXT_OBEY": False, "CORPUS_RETRY_AFTER_MAX": 0},
    ):
        with pytest.raises(NotConfigured):
            HostPacing.from_crawler(get_crawler(settings_dict=settings))
    on = HostPacing.from_crawler(get_crawler(settings_dict={"ROBOTSTXT_OBEY": True}))
    assert (on.max_crawl_delay, on.max_retry_after) == (30.0, 120.0)
    no_robots = get_crawler(settings_dict={"ROBOTSTXT_OBEY": False})
    assert HostPacing.from_crawler(no_robots).max_crawl_delay == 0
