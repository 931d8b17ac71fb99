"""429 / 503 answers slow their host down (`pipelines.pacing`): a real crawl of three
loopback hosts, each a different way of saying "too many requests".

* 127.0.0.1 answers 429 with ``Retry-After: 1`` to its page's first two requests;
* 127.0.0.2 answers 503 with ``Retry-After: 3600`` once (capped at the profile's 1.5 s);
* 127.0.0.3 answers 503 without Retry-After once (5 s, capped at 1.5 s).

The profile's delay is 0 and AutoThrottle is on, so every wait the servers see after
such an answer is the backoff's doing (Scrapy alone retries at once). Each page is kept
in the end, and the backoff ends with the first normal answer.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import pytest

from corpus_crawler.testserver import Reply, RequestRecord, SiteServer, html_reply
from pipelines.pacing import retry_after_seconds

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 180  # a guard against a hang, not a speed assertion
SLACK = 0.15  # server-side gaps may come out a little shorter than the client's

PROFILE = """\
name: backoff
seeds:
  urls: ["{one}/busy.html", "{two}/busy.html", "{three}/busy.html"]
scope:
  max_depth: 0
politeness:
  download_delay: 0
  autothrottle: true
  max_retry_after: 1.5
network:
  allowed_networks: [127.0.0.0/8]
limits:
  retry_times: 3
extraction:
  workers: 1
output:
  progress_interval: 0
  report: false
"""

TEXT = "<p>" + "A paragraph of running text about the rivers of the region. " * 12 + "</p>"


class BusySite:
    """A page answered `status` (with `retry_after`) `failures` times, then 200; every
    request of the page is timed."""

    def __init__(self, host: str, status: int, retry_after: str | None, failures: int) -> None:
        self.times: list[float] = []
        self._lock = threading.Lock()
        self.status, self.retry_after, self.failures = status, retry_after, failures
        self.server = SiteServer(routes={"/busy.html": self._busy}, host=host)

    def _busy(self, request: RequestRecord) -> Reply:
        with self._lock:
            self.times.append(time.monotonic())
        if request.previous < self.failures:
            headers = [("Content-Type", "text/plain")]
            if self.retry_after is not None:
                headers.append(("Retry-After", self.retry_after))
            return Reply(status=self.status, headers=tuple(headers), body=b"busy\n")
        return html_reply(f"<html><body><h1>Busy</h1>{TEXT}</body></html>".encode())


Crawled = tuple[list[BusySite], dict[str, Any]]


@pytest.fixture(scope="module")
def crawl(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Crawled]:
    sites = [
        BusySite("127.0.0.1", 429, "1", failures=2),
        BusySite("127.0.0.2", 503, "3600", failures=1),
        BusySite("127.0.0.3", 503, None, failures=1),
    ]
    work = tmp_path_factory.mktemp("backoff")
    for site in sites:
        site.server.__enter__()
    try:
        one, two, three = (site.server.base_url for site in sites)
        profile = work / "profile.yaml"
        profile.write_text(PROFILE.format(one=one, two=two, three=three), encoding="utf-8")
        result = subprocess.run(
            [sys.executable, "-m", "corpus_crawler.cli", "crawl", str(profile),
             "-o", str(work / "out")],
            cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT, check=False,
        )  # fmt: skip
        assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    finally:
        for site in sites:
            site.server.__exit__(None, None, None)
    (summary,) = (work / "out").glob("*-summary.json")
    yield sites, json.loads(summary.read_text(encoding="utf-8"))


def gaps(times: list[float]) -> list[float]:
    return [later - earlier for earlier, later in itertools.pairwise(times)]


def test_a_retry_after_is_waited_before_each_retry(crawl: Crawled) -> None:
    (one, _, _), _ = crawl
    assert len(one.times) == 3  # two 429s, then the page
    assert min(gaps(one.times)) >= 1.0 - SLACK, gaps(one.times)


def test_long_or_missing_retry_afters_are_capped(crawl: Crawled) -> None:
    (_, two, three), _ = crawl
    for site in (two, three):
        assert len(site.times) == 2  # one 503, then the page: not an hour later
        assert gaps(site.times)[0] >= 1.5 - SLACK, gaps(site.times)


def test_every_page_is_fetched_and_each_backoff_counted_and_ended(crawl: Crawled) -> None:
    _, summary = crawl
    # each page answered 200 in the end (the same text: one is kept, two are duplicates)
    assert summary["pages"]["html"] == 3, summary["pages"]
    stats = summary["stats"]
    assert stats["corpus/pacing/backoff/429"] == 2
    assert stats["corpus/pacing/backoff/503"] == 2
    assert stats["corpus/pacing/backoff/ended"] == 3


def test_retry_after_values() -> None:
    now = datetime(2026, 11, 24, 12, 0, 0, tzinfo=timezone.utc)
    later = format_datetime(now + timedelta(seconds=90), usegmt=True)
    assert retry_after_seconds(later, now) == 90.0
    assert retry_after_seconds(b"120") == 120.0
    assert retry_after_seconds(format_datetime(now - timedelta(hours=1), usegmt=True), now) == 0
    for nonsense in (None, "", "soon", "-5", "1.5"):
        assert retry_after_seconds(nonsense) is None, nonsense
