"""A host whose robots.txt is unreachable is not crawled: its pages wait for a later run.

RFC 9309 (2.3.1.4): a robots.txt that answers 5xx (or 429), or not at all, means
"complete disallow" for now. Real `corpus-crawler crawl` processes against loopback
sites whose robots.txt answers 503, times out, answers 404, and later 200 with a
Disallow rule; the site's own request log is the witness of what was fetched. The
pages are deferred with the campaign's deferred retries (SQLite frontier or Redis),
each deferral is a ``deferred:<reason>`` line of the crawl log, the next run obeys
the file it gets, and attempts that run out end in a counted ``robots-unreachable``
drop. ``politeness.robots_unreachable: allow`` keeps Scrapy's "allow all".
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
import test_deferred_retries as deferred
from test_distributed import RedisServer

from corpus_crawler.crawllog import read_crawl_log
from corpus_crawler.profile import ProfileError, load_profile
from corpus_crawler.retries import deferral_reason, exhausted_outcome, is_transient
from corpus_crawler.state import CampaignStore
from corpus_crawler.testserver import Reply, RequestRecord, SiteServer

#: A real redis-server (tests/test_distributed.py's fixture).
redis_server = deferred.redis_server

PROFILE = """\
name: unreachable
seeds:
  urls: {seeds}
  sitemaps_from_robots: false
scope:
  max_depth: 0
politeness:
  obey_robots_txt: true
  robots_unreachable: {policy}
  concurrent_requests: 4
  concurrent_requests_per_domain: 4
  download_delay: 0
  autothrottle: false
  max_retry_after: 0
network:
  allowed_networks: [127.0.0.0/8]
limits:
  retry_times: 0
  download_timeout: 2
  deferred_retries: {retries}
  retry_delay: {delay}
extraction:
  language: auto
  min_words: 0
  workers: 1
dedup:
  enabled: false
output:
  progress_interval: 0
  report: false
  warc:
    prefix: unreachable
"""

PAGES = ("/a.html", "/b.html", "/private/c.html")
#: Seconds before a deferred page is due: long enough that the first run has ended
#: (it would lease a page due while it still runs), short enough to wait for.
RETRY_DELAY = 2.0
TEXT = (("Content-Type", "text/plain"),)
RULES = Reply(headers=TEXT, body=b"User-agent: *\nDisallow: /private/\n")
BUSY = Reply(status=503, headers=TEXT, body=b"busy\n")
#: Answered after the download timeout (2 s): no response.
SILENT = Reply(headers=TEXT, body=b"", delay=4.0)
GONE = Reply(status=404, headers=TEXT, body=b"no such file\n")


class Site:
    """Three pages and a robots.txt whose answer a test changes between runs."""

    def __init__(self, robots: Reply) -> None:
        self.robots = robots
        replies = deferred.site_pages("p", 3).values()
        self.server = SiteServer(
            pages=dict(zip(PAGES, replies, strict=True)),
            routes={"/robots.txt": self._robots},
        )

    def _robots(self, request: RequestRecord) -> Reply:
        return self.robots

    def __enter__(self) -> Site:
        self.server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.stop()

    def urls(self) -> list[str]:
        return [self.server.url(p) for p in PAGES]

    def fetched(self) -> dict[str, int]:
        """Path -> requests the server got for it."""
        return self.server.counts()


def write_profile(
    path: Path,
    seeds: list[str],
    *,
    policy: str = "defer",
    retries: int = 3,
    delay: float = RETRY_DELAY,
) -> Path:
    text = PROFILE.format(seeds=json.dumps(seeds), policy=policy, retries=retries, delay=delay)
    path.write_text(text, encoding="utf-8")
    return path


def crawl_log(out: Path) -> list[tuple[str, str]]:
    """(URL, outcome) of every line of every crawl log of `out`, in order."""
    lines: list[tuple[str, str]] = []
    for path in sorted(out.rglob("*.crawl.log")):
        lines += [(entry.url, entry.outcome) for entry in read_crawl_log(path)]
    return lines


def summary_of(out: Path) -> dict[str, Any]:
    return deferred.last_summary(out)


def test_a_503_robots_txt_defers_the_host_and_the_next_run_obeys_the_file(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    with Site(BUSY) as site:
        profile = write_profile(tmp_path / "p.yaml", site.urls())
        first = deferred.crawl(profile, out)
        assert first.returncode == 0, first.stderr[-4000:]
        # the site saw its robots.txt asked for, and no page
        assert site.fetched() == {"/robots.txt": 1}
        assert deferred.deferred_rows(out) == {url: 1 for url in site.urls()}
        summary = summary_of(out)
        assert summary["campaign"]["retries_pending"] == 3
        assert summary["campaign"]["totals"]["deferred_robots_unreachable"] == 3
        assert summary["campaign"]["totals"]["deferred"] == 0  # no network failure
        assert summary["pages"]["robots_unreachable"] == 3
        assert summary["stats"]["corpus/robots/unreachable/deferred"] == 3
        log = crawl_log(out)
        assert sorted(o for u, o in log if u in site.urls()) == ["deferred:robots-unreachable"] * 3
        assert (site.server.url("/robots.txt"), "error:http-503") in log
        assert "robots.txt of 127.0.0.1" in first.stderr and "deferred" in first.stderr
        assert "3 URLs wait for a retry (network errors or an unreachable robots.txt)" in (
            first.stdout
        )

        site.robots = RULES
        time.sleep(RETRY_DELAY + 0.3)
        second = deferred.crawl(profile, out)
        assert second.returncode == 0, second.stderr[-4000:]
        # the allowed pages fetched once, the disallowed one never
        assert site.fetched() == {"/robots.txt": 2, "/a.html": 1, "/b.html": 1}
    assert deferred.deferred_rows(out) == {}
    assert set(deferred.warc_responses(out)) == {
        site.server.url(p) for p in ("/robots.txt", "/a.html", "/b.html")
    }
    campaign = summary_of(out)["campaign"]
    assert campaign["retries_pending"] == 0 and campaign["requests_left"] == 0
    outcomes = dict(crawl_log(out)[-3:])
    assert outcomes[site.server.url("/private/c.html")] == "refused:robots"


def test_a_robots_txt_without_a_response_defers_the_host_as_well(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with Site(SILENT) as site:
        profile = write_profile(tmp_path / "p.yaml", site.urls()[:2])
        result = deferred.crawl(profile, out)
        # no response at all in this run (cli's exit code 6: is the network down?)
        assert result.returncode == 6, result.stderr[-4000:]
        assert "2 waited for a robots.txt that got none" in result.stderr
        assert site.fetched() == {"/robots.txt": 1}
    assert deferred.deferred_rows(out) == {url: 1 for url in site.urls()[:2]}
    log = crawl_log(out)
    assert (site.server.url("/robots.txt"), "error:DownloadTimeoutError") in log
    assert [o for u, o in log if u != site.server.url("/robots.txt")] == [
        "deferred:robots-unreachable"
    ] * 2
    assert "robots.txt of 127.0.0.1" in result.stderr and "got no response" in result.stderr


def test_a_robots_txt_on_a_closed_port_defers_and_a_run_with_no_response_exits_6(
    tmp_path: Path,
) -> None:
    down = f"http://127.0.0.1:{deferred.free_port()}"
    out = tmp_path / "out"
    profile = write_profile(tmp_path / "p.yaml", [f"{down}/a.html"], delay=3600)
    result = deferred.crawl(profile, out)
    # nothing answered at all: the network may be down (cli's exit code 6)
    assert result.returncode == 6, result.stderr[-4000:]
    assert "1 waited for a robots.txt that got none" in result.stderr
    assert deferred.deferred_rows(out) == {f"{down}/a.html": 1}
    assert (f"{down}/a.html", "deferred:robots-unreachable") in crawl_log(out)


def test_allow_crawls_the_host_of_an_unreachable_robots_txt_at_once(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with Site(BUSY) as site:
        profile = write_profile(tmp_path / "p.yaml", site.urls(), policy="allow")
        result = deferred.crawl(profile, out)
        assert result.returncode == 0, result.stderr[-4000:]
        assert site.fetched() == {"/robots.txt": 1, **{p: 1 for p in PAGES}}
    assert deferred.deferred_rows(out) == {}
    assert not [o for _, o in crawl_log(out) if o.startswith("deferred:")]


def test_a_404_robots_txt_allows_all(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with Site(GONE) as site:
        profile = write_profile(tmp_path / "p.yaml", site.urls())
        result = deferred.crawl(profile, out)
        assert result.returncode == 0, result.stderr[-4000:]
        assert site.fetched() == {"/robots.txt": 1, **{p: 1 for p in PAGES}}
    assert deferred.deferred_rows(out) == {}


def test_attempts_run_out_into_a_counted_robots_unreachable_drop(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with Site(BUSY) as site:
        # 0 s delay: each deferred attempt is due at once and leased again by this run;
        # the robots.txt is not asked again before its error TTL
        profile = write_profile(tmp_path / "p.yaml", site.urls()[:2], retries=2, delay=0)
        result = deferred.crawl(profile, out)
        assert result.returncode == 0, result.stderr[-4000:]
        assert site.fetched() == {"/robots.txt": 1}
    summary = summary_of(out)
    campaign = summary["campaign"]
    assert campaign["retries_pending"] == 0 and campaign["requests_left"] == 0
    assert campaign["totals"]["dropped"] == {"robots-unreachable": 2}
    assert campaign["totals"]["deferred_robots_unreachable"] == 4
    assert summary["dropped"]["robots-unreachable"] == 2
    assert summary["pages"]["robots_unreachable"] == 6
    store = CampaignStore(out)
    try:
        for url in site.urls()[:2]:
            history = [outcome for _, _, outcome in store.fetch_history(url)]
            assert history == ["dropped:robots-unreachable"], url
    finally:
        store.close()
    for url in site.urls()[:2]:
        outcomes = [o for u, o in crawl_log(out) if u == url]
        assert outcomes == ["deferred:robots-unreachable"] * 2 + ["dropped:robots-unreachable"]


def test_the_profile_key_is_checked(tmp_path: Path) -> None:
    profile = write_profile(tmp_path / "p.yaml", ["http://127.0.0.1/"], policy="ignore")
    with pytest.raises(ProfileError, match=r"robots_unreachable.*defer or allow"):
        load_profile(profile)


# -- a distributed crawl ----------------------------------------------------------------


def _redis_deferred(redis_url: str) -> dict[str, int]:
    import redis

    client = redis.Redis.from_url(redis_url)
    try:
        namespace = "cc:unreachable:"  # the profile's name
        found: dict[str, int] = {}
        for member in client.zrange(namespace + "deferred", 0, -1):
            row = str(int(member))
            data = json.loads(client.hget(namespace + "req", row))
            found[data.get("u") or data["url"]] = int(client.hget(namespace + "attempts", row))
        return found
    finally:
        client.close()


def test_a_shared_unreachable_entry_defers_the_host_in_another_process(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    with Site(BUSY) as site:
        profile = write_profile(tmp_path / "p.yaml", site.urls()[:2])
        ttl = "CORPUS_ROBOTS_ERROR_TTL=60"
        first = deferred.crawl(profile, tmp_path / "a", ttl, redis_url=redis_server.url)
        assert first.returncode == 0, first.stderr[-4000:]
        assert site.fetched() == {"/robots.txt": 1}
        assert _redis_deferred(redis_server.url) == {url: 1 for url in site.urls()[:2]}
        # The file answers now, but the campaign's entry says "unreachable" for its error
        # TTL: another process leases the deferred pages, reads the entry, defers again.
        site.robots = RULES
        time.sleep(RETRY_DELAY + 0.3)
        second = deferred.crawl(profile, tmp_path / "b", ttl, redis_url=redis_server.url)
        assert second.returncode == 0, second.stderr[-4000:]
        assert site.fetched() == {"/robots.txt": 1}
        assert _redis_deferred(redis_server.url) == {url: 2 for url in site.urls()[:2]}
    log = crawl_log(tmp_path / "b")
    assert sorted(o for _, o in log) == ["deferred:robots-unreachable"] * 2


def test_a_distributed_crawl_fetches_the_deferred_pages_once_the_file_answers(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    with Site(BUSY) as site:
        profile = write_profile(tmp_path / "p.yaml", site.urls())
        ttl = "CORPUS_ROBOTS_ERROR_TTL=0.5"
        first = deferred.crawl(profile, tmp_path / "a", ttl, redis_url=redis_server.url)
        assert first.returncode == 0, first.stderr[-4000:]
        assert site.fetched() == {"/robots.txt": 1}
        site.robots = RULES
        time.sleep(RETRY_DELAY + 0.3)  # the retry delay and the entry's error TTL
        second = deferred.crawl(profile, tmp_path / "b", ttl, redis_url=redis_server.url)
        assert second.returncode == 0, second.stderr[-4000:]
        assert site.fetched() == {"/robots.txt": 2, "/a.html": 1, "/b.html": 1}
    assert _redis_deferred(redis_server.url) == {}


def test_a_robots_deferral_is_no_network_failure() -> None:
    outcome = "failed:RobotsTxtUnreachable"  # the spider's outcome of the refusal
    assert deferral_reason(outcome) == "robots-unreachable"
    assert not is_transient(outcome)  # not in pages.network_failures
    assert exhausted_outcome(outcome) == "dropped:robots-unreachable"
    assert deferral_reason("failed:DNSLookupError") == "network"
    assert exhausted_outcome("failed:DNSLookupError") == "failed:DNSLookupError"
    assert deferral_reason("failed:IgnoreRequest") is None
