"""A request that got no response at all is deferred and tried again later, not lost.

Real crawls (`corpus-crawler crawl` processes) of loopback sites: one site is down
(a port nobody listens on) in the first run and up in the next. Its URLs stay in
the campaign, deferred with an attempt count and a due time; the next run fetches
each exactly once into the WARC and the prevertical file. Attempts run out into a
counted `failed:...`; 0 deferred retries is the old behaviour; a `kill -9` while
deferred rows exist loses none and fetches nothing twice; a run that got no
response at all exits 6; a campaign database of the schema before deferrals is
migrated in place and crawled on. The SQLite store itself is checked directly too.
"""

from __future__ import annotations

import collections
import json
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import test_distributed
from test_distributed import RedisServer
from warcio.archiveiterator import ArchiveIterator

from corpus_crawler.crawllog import read_crawl_log
from corpus_crawler.retries import RetryPolicy, is_transient
from corpus_crawler.state import DATABASE_NAME, SCHEMA_VERSION, BudgetLimits, CampaignStore
from corpus_crawler.testserver import Reply, SiteServer

ROOT = Path(__file__).resolve().parent.parent
#: A real redis-server for the distributed crawl (tests/test_distributed.py's fixture).
redis_server = test_distributed.redis_server
#: A guard against a hung crawl, not a speed assertion.
TIMEOUT = 180

PROFILE = """\
name: deferred
seeds:
  urls: {seeds}
  sitemaps_from_robots: false
scope:
  max_depth: 2
politeness:
  obey_robots_txt: false
  concurrent_requests: 4
  concurrent_requests_per_domain: 4
  download_delay: 0
  autothrottle: false
network:
  allowed_networks: [127.0.0.1/32]
limits:
  retry_times: 0
  download_timeout: 10
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
  warc:
    prefix: deferred
  prevertical:
    enabled: true
"""

_PROSE = (
    "The old harbour town sits at the mouth of a wide river, and most of the people who"
    " live there have worked on the water for as long as anyone can remember. In the"
    " morning the boats go out before the sun is up, and in the evening they come back"
    " with whatever the sea was willing to give them on that particular day."
)


def site_pages(prefix: str, count: int) -> dict[str, Reply]:
    """`count` pages of prose, each linking to the next; each one a kept document."""
    pages: dict[str, Reply] = {}
    for number in range(count):
        link = f"<p><a href='/{prefix}{number + 1}.html'>next</a></p>" if number + 1 < count else ""
        paragraphs = "".join(
            f"<p>{_PROSE} This is part {part} of page {prefix} {number}, and it tells the"
            f" story of the {number + part}th family that came to the town.</p>"
            for part in range(3)
        )
        title = f"<head><title>{prefix}{number}</title></head>"
        body = f"<html>{title}<body>{paragraphs}{link}</body></html>"
        pages[f"/{prefix}{number}.html"] = Reply(
            headers=(("Content-Type", "text/html; charset=utf-8"),), body=body.encode()
        )
    return pages


def free_port() -> int:
    """A loopback port nobody listens on (until a test starts a server there)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def write_profile(path: Path, seeds: list[str], *, retries: int = 3, delay: float = 1.0) -> Path:
    path.write_text(
        PROFILE.format(seeds=json.dumps(seeds), retries=retries, delay=delay), encoding="utf-8"
    )
    return path


def crawl_command(
    profile: Path, out: Path, *settings: str, redis_url: str | None = None
) -> list[str]:
    command = [sys.executable, "-m", "corpus_crawler.cli", "crawl", str(profile), "-o", str(out)]
    if redis_url is not None:
        command += ["--redis", redis_url]
    # the run does not wait for a deferred request unless a test says so
    for setting in ("CORPUS_CAMPAIGN_RETRY_WAIT=0", *settings):
        command += ["-s", setting]
    return command


def crawl(
    profile: Path, out: Path, *settings: str, redis_url: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        crawl_command(profile, out, *settings, redis_url=redis_url),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


def last_summary(out: Path) -> dict[str, Any]:
    newest = max(out.rglob("*-summary.json"), key=lambda p: p.stat().st_mtime_ns)
    summary: dict[str, Any] = json.loads(newest.read_text(encoding="utf-8"))
    return summary


def warc_responses(out: Path) -> collections.Counter[str]:
    found: collections.Counter[str] = collections.Counter()
    for path in sorted(out.rglob("*.warc.gz")):
        with open(path, "rb") as handle:
            for record in ArchiveIterator(handle, check_digests=True):
                if record.rec_type == "response":
                    found[record.rec_headers.get_header("WARC-Target-URI") or ""] += 1
    return found


def prevertical_documents(out: Path) -> collections.Counter[str]:
    found: collections.Counter[str] = collections.Counter()
    for path in sorted(out.rglob("*.prevert")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("<doc "):
                match = re.search(r' url="([^"]*)"', line)
                assert match is not None, line
                found[match.group(1)] += 1
    return found


def deferred_rows(out: Path) -> dict[str, int]:
    """URL -> attempts of every deferred frontier row, read from the database."""
    db = sqlite3.connect(out / DATABASE_NAME)
    try:
        rows = db.execute("SELECT request, attempts FROM frontier WHERE state = 2").fetchall()
    finally:
        db.close()
    deferred: dict[str, int] = {}
    for text, attempts in rows:
        data = json.loads(text)
        deferred[data.get("u") or data["url"]] = int(attempts)
    return deferred


def test_a_site_that_was_down_is_fetched_by_the_next_run_exactly_once(tmp_path: Path) -> None:
    up_pages = site_pages("a", 3)
    down_pages = site_pages("b", 3)
    down_port = free_port()
    down = f"http://127.0.0.1:{down_port}"
    out = tmp_path / "out"
    with SiteServer(pages=up_pages) as server:
        profile = write_profile(
            tmp_path / "p.yaml", [server.url("/a0.html"), f"{down}/b0.html", f"{down}/b1.html"]
        )
        first = crawl(profile, out)
        assert first.returncode == 0, first.stderr[-4000:]
        summary = last_summary(out)
        campaign = summary["campaign"]
        assert campaign["retries_pending"] == 2, campaign
        assert campaign["next_retry"] is not None
        assert summary["pages"]["network_failures"] == 2
        assert "2 URLs wait for a retry (network errors or an unreachable robots.txt)" in (
            first.stdout
        )
        assert deferred_rows(out) == {f"{down}/b0.html": 1, f"{down}/b1.html": 1}
        assert not [url for url in warc_responses(out) if url.startswith(down)]
        time.sleep(1.2)  # the retry delay of the profile
        with SiteServer(pages=down_pages, port=down_port):
            second = crawl(profile, out)
        assert second.returncode == 0, second.stderr[-4000:]
    responses = warc_responses(out)
    documents = prevertical_documents(out)
    expected = {server.url(p) for p in up_pages} | {f"{down}{p}" for p in down_pages}
    assert set(responses) == expected
    assert all(count == 1 for count in responses.values()), responses
    assert set(documents) == expected, documents
    assert all(count == 1 for count in documents.values()), documents
    campaign = last_summary(out)["campaign"]
    assert campaign["retries_pending"] == 0
    assert campaign["requests_left"] == 0
    assert campaign["totals"]["deferred"] == 2
    assert deferred_rows(out) == {}


def test_attempts_run_out_into_a_counted_failure(tmp_path: Path) -> None:
    down = f"http://127.0.0.1:{free_port()}"
    out = tmp_path / "out"
    # 0 s delay: each deferred attempt is due at once, and the run leases it again
    # itself (it waits for retries due within CORPUS_CAMPAIGN_RETRY_WAIT, 0 s here)
    profile = write_profile(tmp_path / "p.yaml", [f"{down}/x.html"], retries=2, delay=0)
    result = crawl(profile, out)
    assert result.returncode == 6, result.stderr[-3000:]
    summary = last_summary(out)
    campaign = summary["campaign"]
    assert campaign["retries_pending"] == 0
    assert campaign["requests_left"] == 0
    assert campaign["totals"]["deferred"] == 2
    assert summary["pages"]["network_failures"] == 3
    store = CampaignStore(out)
    try:
        outcomes = [outcome for _, _, outcome in store.fetch_history(f"{down}/x.html")]
        totals = store.counters()
    finally:
        store.close()
    assert outcomes == ["failed:DownloadConnectionRefusedError"]
    assert totals["requests/failed:DownloadConnectionRefusedError"] == 1
    assert totals["requests/deferred"] == 2
    # the crawl log: each attempt's error, and the campaign's decision to try again
    (log,) = out.glob("*.crawl.log")
    lines = [entry for entry in read_crawl_log(log) if entry.url == f"{down}/x.html"]
    error = "error:DownloadConnectionRefusedError"
    assert [entry.outcome for entry in lines] == [error, "deferred:network"] * 2 + [error]
    assert all("due" in entry.annotations for entry in lines[1::2])
    # a deferral says how the URL was found, as its attempt's line does (a seed: "-",
    # read back as ""; a linked page: test_a_deferral_line_says_how_its_url_was_found)
    assert [entry.discovery for entry in lines] == [""] * 5


def test_a_deferral_line_says_how_its_url_was_found(tmp_path: Path) -> None:
    """Heritrix's discovery path and via: a linked page's ``deferred:network`` line
    carries them as its attempt's line does (it had ``-`` and no via)."""
    down = f"http://127.0.0.1:{free_port()}"
    out = tmp_path / "out"
    link = Reply(
        headers=(("Content-Type", "text/html; charset=utf-8"),),
        body=f"<html><body><p>{_PROSE}</p><a href='{down}/b0.html'>b</a></body></html>".encode(),
    )
    with SiteServer(pages={"/a0.html": link}) as server:
        seed = server.url("/a0.html")
        profile = write_profile(tmp_path / "p.yaml", [seed], retries=2, delay=60)
        result = crawl(profile, out)
    assert result.returncode == 0, result.stderr[-3000:]
    (log,) = out.glob("*.crawl.log")
    lines = [entry for entry in read_crawl_log(log) if entry.url == f"{down}/b0.html"]
    assert [entry.outcome for entry in lines] == [
        "error:DownloadConnectionRefusedError",
        "deferred:network",
    ]
    assert [(entry.discovery, entry.via) for entry in lines] == [("L", seed), ("L", seed)]


def test_zero_deferred_retries_finish_a_network_failure_at_once(tmp_path: Path) -> None:
    down = f"http://127.0.0.1:{free_port()}"
    out = tmp_path / "out"
    profile = write_profile(tmp_path / "p.yaml", [f"{down}/x.html"], retries=0)
    result = crawl(profile, out)
    assert result.returncode == 6, result.stderr[-3000:]
    campaign = last_summary(out)["campaign"]
    assert campaign["retries_pending"] == 0
    assert campaign["requests_left"] == 0
    assert campaign["totals"]["deferred"] == 0
    assert deferred_rows(out) == {}


def test_a_run_without_any_response_exits_6_and_says_why(tmp_path: Path) -> None:
    down = f"http://127.0.0.1:{free_port()}"
    out = tmp_path / "out"
    profile = write_profile(tmp_path / "p.yaml", [f"{down}/"], delay=3600)
    result = crawl(profile, out)
    assert result.returncode == 6, result.stdout + result.stderr[-3000:]
    lines = [line for line in result.stderr.splitlines() if "no response at all" in line]
    assert len(lines) == 1, result.stderr[-3000:]
    assert "network" in lines[0]
    assert (
        "1 URL waits for a retry (a network error or an unreachable robots.txt), the first at"
        in result.stdout
    )
    # the next run, before the retry is due, fetches nothing and says when to come back
    again = crawl(profile, out)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "nothing to fetch yet: 1 URL waits for a retry" in again.stderr
    assert deferred_rows(out) == {f"{down}/": 1}


def test_a_run_waits_for_a_retry_due_soon_and_leases_it(tmp_path: Path) -> None:
    # The site comes up while the run waits: the deferred request is leased in the
    # same run once due (CORPUS_CAMPAIGN_RETRY_WAIT above the delay).
    port = free_port()
    down = f"http://127.0.0.1:{port}"
    out = tmp_path / "out"
    profile = write_profile(tmp_path / "p.yaml", [f"{down}/b0.html"], delay=4)
    process = subprocess.Popen(
        crawl_command(profile, out, "CORPUS_CAMPAIGN_RETRY_WAIT=60"),
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + TIMEOUT
        while not (out / DATABASE_NAME).is_file() or not _deferred_now(out):
            assert process.poll() is None, process.communicate()[1][-3000:]
            assert time.monotonic() < deadline, "no request was deferred"
            time.sleep(0.05)
        with SiteServer(pages=site_pages("b", 2), port=port):
            _, stderr = process.communicate(timeout=TIMEOUT)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0, stderr[-3000:]
    responses = warc_responses(out)
    assert responses == {f"{down}/b0.html": 1, f"{down}/b1.html": 1}, responses
    assert last_summary(out)["campaign"]["retries_pending"] == 0


def _deferred_now(out: Path) -> bool:
    try:
        return bool(deferred_rows(out))
    except sqlite3.Error:
        return False


def test_kill_9_with_deferred_rows_loses_none_and_fetches_nothing_twice(tmp_path: Path) -> None:
    pages = site_pages("a", 40)
    slow = {
        path: Reply(headers=reply.headers, body=reply.body, delay=0.05)
        for path, reply in pages.items()
    }
    down = f"http://127.0.0.1:{free_port()}"
    down_seeds = [f"{down}/d{number}.html" for number in range(4)]
    out = tmp_path / "out"
    log = tmp_path / "crawl.log"
    with SiteServer(pages=slow) as server:
        profile = write_profile(
            tmp_path / "p.yaml", [*down_seeds, server.url("/a0.html")], delay=3600
        )
        profile.write_text(
            profile.read_text(encoding="utf-8").replace("max_depth: 2", "max_depth: 100"),
            encoding="utf-8",
        )
        command = crawl_command(profile, out, "CORPUS_CAMPAIGN_COMMIT_INTERVAL=0.001")
        for fraction in (0.3, 0.6):
            with open(log, "ab") as handle:
                process = subprocess.Popen(command, cwd=ROOT, stdout=handle, stderr=handle)
            deadline = time.monotonic() + TIMEOUT
            while len(server.requests) < int(len(pages) * fraction):
                assert process.poll() is None, log.read_text(errors="replace")[-3000:]
                assert time.monotonic() < deadline, "the crawl made no progress"
                time.sleep(0.002)
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=TIMEOUT)
            # killed while deferred rows exist and pages are being fetched
            assert deferred_rows(out) == dict.fromkeys(down_seeds, 1)
        final = crawl(profile, out)
        assert final.returncode == 0, final.stderr[-4000:]
    responses = warc_responses(out)
    assert set(responses) == {server.url(p) for p in pages}
    assert all(count == 1 for count in responses.values()), responses
    documents = prevertical_documents(out)
    assert set(documents) == set(responses)
    assert all(count == 1 for count in documents.values()), documents
    # still deferred, each with the one attempt it had: the kills neither lost nor
    # counted an attempt again
    assert deferred_rows(out) == dict.fromkeys(down_seeds, 1)
    assert last_summary(out)["campaign"]["retries_pending"] == len(down_seeds)


# -- the store itself --------------------------------------------------------------------


def _queue(store: CampaignStore, url: str, budget: str | None = None) -> None:
    store.enqueue(
        json.dumps({"url": url}),
        0,
        fingerprint=url.encode().ljust(20, b"\0"),
        budget=budget,
        limits=BudgetLimits(max_pages=1),
        site="x",
    )


def test_a_deferred_row_is_leased_again_once_due_and_not_counted_against_the_budget(
    tmp_path: Path,
) -> None:
    store = CampaignStore(tmp_path, retries=RetryPolicy(retries=2, delay=100.0))
    url = "http://x.test/"
    try:
        _queue(store, url, budget="x.test")
        [(row, _)] = store.lease(10)
        now = time.time()
        due = store.defer(row, url, "failed:DNSLookupError", now=now)
        assert due == now + 100.0
        assert store.lease(10) == []  # not due yet
        assert store.retries_pending() == (1, due)
        assert store.in_frontier() == 1
        store.commit({})
    finally:
        store.close()
    # the next run: the row is still deferred, with its attempt
    store = CampaignStore(tmp_path, retries=RetryPolicy(retries=2, delay=100.0))
    try:
        assert store.queued == 0
        assert store.retries_pending() == (1, due)
        assert store.lease(10) == []
    finally:
        store.close()


def test_each_deferred_attempt_waits_twice_as_long_until_they_run_out(tmp_path: Path) -> None:
    store = CampaignStore(tmp_path, retries=RetryPolicy(retries=2, delay=100.0))
    url = "http://x.test/"
    past = time.time() - 1000  # failures long ago: every attempt is due now
    try:
        _queue(store, url, budget="x.test")
        [(row, _)] = store.lease(10)
        assert store.defer(row, url, "failed:DNSLookupError", now=past) == past + 100
        [(again, text)] = store.lease(10)
        assert again == row and json.loads(text)["url"] == url
        assert store.defer(row, url, "failed:DNSLookupError", now=past) == past + 200
        [(third, _)] = store.lease(10)
        # attempts used up: the caller finishes it
        assert store.defer(third, url, "failed:DNSLookupError", now=past) is None
        store.finish(third, url, "failed:DNSLookupError")
        store.commit({})
        assert store.retries_pending() == (0, None)
        assert store.in_frontier() == 0
        assert [o for _, _, o in store.fetch_history(url)] == ["failed:DNSLookupError"]
        # the retries took no page of the budget (max_pages 1: a second count would
        # refuse the next page)
        _queue(store, "http://y.test/", budget="y.test")
    finally:
        store.close()
    db = sqlite3.connect(tmp_path / DATABASE_NAME)
    try:
        budgets = dict(db.execute("SELECT key, pages FROM budgets").fetchall())
    finally:
        db.close()
    assert budgets == {"": 1, "x.test": 1}


def test_only_network_errors_are_transient() -> None:
    assert is_transient("failed:DNSLookupError")
    assert is_transient("failed:TCPTimedOutError")
    assert is_transient("failed:ResponseNeverReceived")
    assert is_transient("failed:CannotResolveHostError")
    assert is_transient("failed:DownloadConnectionRefusedError")
    assert is_transient("failed:DownloadTimeoutError")
    assert not is_transient("failed:IgnoreRequest")
    assert not is_transient("failed:DownloadCancelledError")
    assert not is_transient("dropped:disconnected")
    assert not is_transient("kept")


#: The frontier of a campaign of schema 3 (before deferrals), as it was created.
_SCHEMA_3_FRONTIER = """
CREATE TABLE frontier (
    id INTEGER PRIMARY KEY,
    priority INTEGER NOT NULL,
    state INTEGER NOT NULL DEFAULT 0,
    request TEXT NOT NULL,
    site TEXT NOT NULL DEFAULT ''
);
"""


def _as_schema_3(database: Path) -> None:
    """Turn a campaign database into what a corpus-crawler of schema 3 left: the frontier
    without the columns of deferred rows."""
    db = sqlite3.connect(database)
    try:
        db.executescript(
            _SCHEMA_3_FRONTIER.replace("frontier", "frontier_3")
            + "INSERT INTO frontier_3 SELECT id, priority, state, request, site FROM frontier;"
            " DROP TABLE frontier; ALTER TABLE frontier_3 RENAME TO frontier;"
            " PRAGMA user_version = 3;"
        )
        columns = [row[1] for row in db.execute("PRAGMA table_info(frontier)")]
    finally:
        db.close()
    assert columns == ["id", "priority", "state", "request", "site"]


def test_a_campaign_of_the_previous_schema_is_migrated_in_place(tmp_path: Path) -> None:
    db = sqlite3.connect(tmp_path / DATABASE_NAME)
    db.executescript(_SCHEMA_3_FRONTIER)
    db.execute(
        "INSERT INTO frontier (id, priority, state, request, site) VALUES (1, 0, 0, ?, 'x')",
        (json.dumps({"url": "http://x.test/"}),),
    )
    db.execute(
        "CREATE TABLE frontier_runs (id INTEGER PRIMARY KEY, priority INTEGER NOT NULL,"
        " site TEXT NOT NULL, head INTEGER NOT NULL, tail INTEGER NOT NULL)"
    )
    db.execute("INSERT INTO frontier_runs (priority, site, head, tail) VALUES (0, 'x', 1, 1)")
    db.execute("PRAGMA user_version = 3")
    db.commit()
    db.close()
    store = CampaignStore(tmp_path, retries=RetryPolicy(retries=1, delay=60.0))
    try:
        [(row, _)] = store.lease(10)
        assert store.defer(row, "http://x.test/", "failed:DNSLookupError") is not None
        store.commit({})
    finally:
        store.close()
    db = sqlite3.connect(tmp_path / DATABASE_NAME)
    try:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 4
        assert db.execute("SELECT id, state, attempts FROM frontier").fetchall() == [(1, 2, 1)]
    finally:
        db.close()


def test_a_crawl_goes_on_from_a_campaign_of_the_previous_schema(tmp_path: Path) -> None:
    pages = site_pages("a", 40)
    slow = {
        path: Reply(headers=reply.headers, body=reply.body, delay=0.05)
        for path, reply in pages.items()
    }
    out = tmp_path / "out"
    with SiteServer(pages=slow) as server:
        profile = write_profile(tmp_path / "p.yaml", [server.url("/a0.html")])
        profile.write_text(
            profile.read_text(encoding="utf-8").replace("max_depth: 2", "max_depth: 100"),
            encoding="utf-8",
        )
        command = crawl_command(profile, out, "CORPUS_CAMPAIGN_COMMIT_INTERVAL=0.001")
        process = subprocess.Popen(
            command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        deadline = time.monotonic() + TIMEOUT
        while len(server.requests) < len(pages) // 2:
            assert process.poll() is None
            assert time.monotonic() < deadline, "the crawl made no progress"
            time.sleep(0.002)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=TIMEOUT)
        _as_schema_3(out / DATABASE_NAME)
        result = crawl(profile, out)
        assert result.returncode == 0, result.stderr[-4000:]
    responses = warc_responses(out)
    assert set(responses) == {server.url(p) for p in pages}
    assert all(count == 1 for count in responses.values()), responses
    db = sqlite3.connect(out / DATABASE_NAME)
    try:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    finally:
        db.close()


# -- a distributed crawl ----------------------------------------------------------------


def _redis_deferred(redis_url: str) -> dict[str, int]:
    """URL -> attempts of every deferred request of the shared campaign, read from Redis."""
    import redis

    client = redis.Redis.from_url(redis_url)
    try:
        namespace = "cc:deferred:"  # the profile's name
        deferred: dict[str, int] = {}
        for member in client.zrange(namespace + "deferred", 0, -1):
            row = str(int(member))
            text = client.hget(namespace + "req", row)
            data = json.loads(text)
            deferred[data.get("u") or data["url"]] = int(client.hget(namespace + "attempts", row))
        return deferred
    finally:
        client.close()


def test_a_distributed_crawl_defers_in_redis_and_retries_in_the_next_run(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    down_port = free_port()
    down = f"http://127.0.0.1:{down_port}"
    down_pages = site_pages("b", 2)
    out = tmp_path / "out"
    with SiteServer(pages=site_pages("a", 2)) as server:
        profile = write_profile(tmp_path / "p.yaml", [server.url("/a0.html"), f"{down}/b0.html"])
        first = crawl(profile, out, redis_url=redis_server.url)
        assert first.returncode == 0, first.stderr[-4000:]
        assert _redis_deferred(redis_server.url) == {f"{down}/b0.html": 1}
        assert "1 URL waits for a retry (a network error or" in first.stdout
        assert not [url for url in warc_responses(out) if url.startswith(down)]
        time.sleep(1.2)  # the retry delay of the profile
        with SiteServer(pages=down_pages, port=down_port):
            second = crawl(profile, out, redis_url=redis_server.url)
        assert second.returncode == 0, second.stderr[-4000:]
    responses = warc_responses(out)
    expected = {server.url("/a0.html"), server.url("/a1.html")} | {
        f"{down}{path}" for path in down_pages
    }
    assert set(responses) == expected
    assert all(count == 1 for count in responses.values()), responses
    documents = prevertical_documents(out)
    assert set(documents) == expected and all(n == 1 for n in documents.values()), documents
    assert _redis_deferred(redis_server.url) == {}
