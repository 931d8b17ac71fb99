"""robots.txt fetched once per host for a whole distributed campaign (`crawl --redis`).

A real `redis-server` (test_distributed's fixture) and a loopback site on three hosts
(127.0.0.1/.2/.3), each with a robots.txt that disallows /private/ and pages that link
into it. Real `corpus-crawler crawl` processes share one campaign; the site's own
access log is the witness: each host's robots.txt is requested once over all
processes, no disallowed path ever, and one process archives each robots.txt. A
process killed with SIGKILL while it holds a host's robots.txt claim (its request
hangs on the server) does not stop the others: the claim expires and another process
fetches the file. A process killed after its robots.txt captures are in its WARC
and before its commit publishes nothing: each file is fetched and archived again,
once. The store-level tests run the claim, the wait, the status rules and the
publication with a commit on their own against the same Redis.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import itertools
import signal
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from test_distributed import (
    RedisServer,
    crawl_command,
    redis_server,
    responses,
    start,
    wait_all,
    worker_of,
)
from warcio.archiveiterator import ArchiveIterator

from corpus_crawler.redis_robots import (
    Claimed,
    RobotsEntry,
    SharedRobotsConfig,
    SharedRobotsTxt,
    Wait,
    rules_body,
)
from corpus_crawler.redis_state import RedisCampaignStore, RedisConfig, WorkerFenced
from corpus_crawler.testserver import Reply, RequestRecord, SiteServer, add_links, isolate_links

HOSTS = ("127.0.0.1", "127.0.0.2", "127.0.0.3")
#: Pages per host (p0..p19); each links to two pages of every host and to /private/.
PAGES_PER_HOST = 20
DELAY = 0.05
#: A guard against a hung crawl, not a speed assertion.
TIMEOUT = 150
ROBOTS = b"User-agent: *\nDisallow: /private/\n"

PROFILE = """\
name: robots
seeds:
  urls: {seeds}
scope:
  max_depth: 10
politeness:
  concurrent_requests: 8
  concurrent_requests_per_domain: 1
  download_delay: {delay}
  randomize_delay: false
  autothrottle: false
network:
  allowed_networks: [127.0.0.0/8]
extraction:
  language: auto
  min_words: 60
  workers: 1
dedup:
  enabled: false
distributed:
  lease_timeout: 5
output:
  progress_interval: 0
  report: false
"""

__all__ = ["redis_server"]  # the fixture (test_distributed), used by name


@dataclasses.dataclass
class Site:
    servers: list[SiteServer]
    #: (host, path, monotonic arrival time) of every request, all hosts.
    arrivals: list[tuple[str, str, float]]
    lock: threading.Lock
    #: Set to hold the first robots.txt request of 127.0.0.2 until it is cleared.
    hold_robots: threading.Event
    released: threading.Event

    @property
    def seeds(self) -> list[str]:
        return [server.url("/p0.html") for server in self.servers]

    def requested(self) -> collections.Counter[tuple[str, str]]:
        with self.lock:
            return collections.Counter((host, path) for host, path, _ in self.arrivals)

    def robots_fetches(self) -> dict[str, int]:
        counts = self.requested()
        return {host: counts[(host, "/robots.txt")] for host in HOSTS}

    def robots_origin(self, host: str) -> str:
        return self.servers[HOSTS.index(host)].base_url.removeprefix("http://")


@pytest.fixture
def site(gold_dir: Path) -> Iterator[Site]:
    gold = [
        isolate_links(p.read_bytes()) for p in sorted((gold_dir / "cleaneval-dev").glob("html/*"))
    ][:20]
    arrivals: list[tuple[str, str, float]] = []
    lock = threading.Lock()
    hold, released = threading.Event(), threading.Event()
    servers: list[SiteServer] = []

    def page(host_index: int, number: int) -> bytes:
        links = "".join(
            f"<a href='{server.url(f'/p{(2 * number + k) % PAGES_PER_HOST}.html')}'>more</a> "
            f"<a href='{server.url(f'/private/s{number}.html')}'>private</a> "
            for server in servers
            for k in (1, 2)
        )
        own = f"<p>Robots test page {number} of host {host_index}.</p>"
        return add_links(gold[(number + host_index) % len(gold)], (own + links).encode())

    def route_for(index: int, host: str) -> Callable[[RequestRecord], Reply]:
        def route(request: RequestRecord) -> Reply:
            with lock:
                arrivals.append((host, request.path, time.monotonic()))
            if request.path == "/robots.txt":
                if index == 1 and request.previous == 0 and hold.is_set():
                    # the first fetch of this file hangs until the test lets it go
                    released.wait(TIMEOUT)
                return Reply(headers=(("Content-Type", "text/plain"),), body=ROBOTS)
            name = request.path.removeprefix("/p").removesuffix(".html")
            if not name.isdigit() or int(name) >= PAGES_PER_HOST:
                return Reply(status=404, body=b"not here")
            return Reply(headers=(("Content-Type", "text/html"),), body=page(index, int(name)))

        return route

    for index, host in enumerate(HOSTS):
        servers.append(SiteServer(host=host, fallback=route_for(index, host)).start())
    try:
        yield Site(servers, arrivals, lock, hold, released)
    finally:
        released.set()
        for server in servers:
            server.stop()


def write_profile(directory: Path, site: Site) -> Path:
    seeds = "[" + ", ".join(f'"{url}"' for url in site.seeds) + "]"
    profile = directory / "robots.yaml"
    profile.write_text(PROFILE.format(seeds=seeds, delay=DELAY), encoding="utf-8")
    return profile


def robots_captures(out: Path) -> collections.Counter[str]:
    """robots.txt response records per URL over every worker's WARCs."""
    counts: collections.Counter[str] = collections.Counter()
    for path in sorted(out.glob("*/*.warc.gz")):
        with open(path, "rb") as handle:
            for record in ArchiveIterator(handle):
                uri = record.rec_headers.get_header("WARC-Target-URI") or ""
                if record.rec_type == "response" and uri.endswith("/robots.txt"):
                    counts[uri] += 1
    return counts


def check_allowed_and_disallowed(site: Site) -> None:
    requested = site.requested()
    private = sorted(f"{h}{p}" for (h, p) in requested if p.startswith("/private/"))
    assert not private, f"disallowed by robots.txt, yet fetched: {private}"
    for host in HOSTS:
        missing = [n for n in range(PAGES_PER_HOST) if (host, f"/p{n}.html") not in requested]
        assert not missing, f"{host}: pages never fetched: {missing}"


def check_politeness_with_robots(site: Site) -> None:
    """The robots.txt request keeps the delay with the pages of its host, from any process."""
    with site.lock:
        arrivals = list(site.arrivals)
    for host in HOSTS:
        times = sorted(t for h, _, t in arrivals if h == host)
        gaps = [b - a for a, b in itertools.pairwise(times)]
        assert min(gaps) >= DELAY, f"{host}: two requests {min(gaps):.4f} s apart"


def test_three_processes_fetch_each_robots_txt_once_and_obey_it(
    site: Site, redis_server: RedisServer, tmp_path: Path
) -> None:
    command = crawl_command(write_profile(tmp_path, site), tmp_path / "out", redis_server.url)
    logs = [tmp_path / f"worker{i}.log" for i in range(3)]
    processes = [start(command, log) for log in logs]
    try:
        wait_all(processes, logs)
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
    assert site.robots_fetches() == dict.fromkeys(HOSTS, 1)
    check_allowed_and_disallowed(site)
    # the one process that fetched a robots.txt archived it; the others never saw it
    captures = robots_captures(tmp_path / "out")
    assert captures == {f"{server.base_url}/robots.txt": 1 for server in site.servers}
    check_politeness_with_robots(site)


def test_a_claimer_killed_while_fetching_robots_txt_does_not_stop_the_others(
    site: Site, redis_server: RedisServer, tmp_path: Path
) -> None:
    import redis as redis_client

    site.hold_robots.set()
    command = crawl_command(write_profile(tmp_path, site), tmp_path / "out", redis_server.url)
    # a short claim: the test waits for it to expire (the lease timeout stays at 5 s,
    # so live processes keep their heartbeat under load)
    command += ["-s", "CORPUS_ROBOTS_CLAIM_TIMEOUT=2"]
    first_log = tmp_path / "claimer.log"
    claimer = start(command, first_log)
    client = redis_client.Redis(port=redis_server.port)
    shared = [f"cc:robots:robots:{site.robots_origin(h)}" for h in (HOSTS[0], HOSTS[2])]
    deadline = time.monotonic() + TIMEOUT
    try:
        # the claimer has stored two hosts' files and hangs on the third host's
        while not (site.robots_fetches()[HOSTS[1]] == 1 and all(client.exists(k) for k in shared)):
            assert claimer.poll() is None, first_log.read_text()[-3000:]
            assert time.monotonic() < deadline, "the first process never claimed robots.txt"
            time.sleep(0.01)
        claim = f"cc:robots:robotsclaim:{site.robots_origin(HOSTS[1])}"
        assert client.exists(claim), "the hanging fetch holds no claim"
        claimer.send_signal(signal.SIGKILL)
        claimer.wait(timeout=30)
    finally:
        client.close()
        if claimer.poll() is None:
            claimer.kill()
    logs = [tmp_path / f"worker{i}.log" for i in range(2)]
    others = [start(command, log) for log in logs]
    try:
        wait_all(others, logs)
    finally:
        site.released.set()
        for process in others:
            if process.poll() is None:
                process.kill()
    # the killed process's request, then one by whichever survivor took the claim over
    assert site.robots_fetches() == {HOSTS[0]: 1, HOSTS[1]: 2, HOSTS[2]: 1}
    # the survivor archived it; the killed one never had an answer to archive
    assert robots_captures(tmp_path / "out")[f"{site.servers[1].base_url}/robots.txt"] == 1
    check_allowed_and_disallowed(site)


def _robots_written(folder: Path) -> int:
    """robots.txt response records in the WARC a live process is writing (its torn
    last record, if any, left out)."""
    found = 0
    for path in folder.glob("*.warc.gz.open"):
        with open(path, "rb") as handle:
            try:
                for record in ArchiveIterator(handle):
                    uri = record.rec_headers.get_header("WARC-Target-URI") or ""
                    found += record.rec_type == "response" and uri.endswith("/robots.txt")
            except Exception:  # a record being written: read up to it
                pass
    return found


def test_a_process_killed_after_fetching_robots_txt_before_its_commit_leaves_no_entry_behind(
    site: Site, redis_server: RedisServer, tmp_path: Path
) -> None:
    import redis as redis_client

    out = tmp_path / "out"
    command = crawl_command(write_profile(tmp_path, site), out, redis_server.url)
    # a short claim: the others wait for the killed fetcher's to expire
    command += ["-s", "CORPUS_ROBOTS_CLAIM_TIMEOUT=2"]
    # the first process commits 10 s apart: the kill lands after its three robots.txt
    # fetches are archived in its WARC and before any commit covers them
    first_log = tmp_path / "fetcher.log"
    fetcher = start([*command, "-s", "CORPUS_CAMPAIGN_COMMIT_INTERVAL=10"], first_log)
    client = redis_client.Redis(port=redis_server.port)
    deadline = time.monotonic() + TIMEOUT
    try:
        worker = worker_of(first_log)
        while _robots_written(out / worker) < len(HOSTS):
            assert fetcher.poll() is None, first_log.read_text()[-3000:]
            assert time.monotonic() < deadline, "the first process never archived robots.txt"
            time.sleep(0.005)
        # frozen before the check, so no commit can come between it and the kill
        fetcher.send_signal(signal.SIGSTOP)
        assert not client.hgetall(f"cc:robots:files:{worker}"), "committed before the kill"
        fetcher.send_signal(signal.SIGKILL)
        fetcher.wait(timeout=30)
    finally:
        client.close()
        if fetcher.poll() is None:
            fetcher.kill()
    assert site.robots_fetches() == dict.fromkeys(HOSTS, 1)
    # the killed process again (it cuts back its uncommitted WARC) and a second one
    logs = [tmp_path / "restarted.log", tmp_path / "other.log"]
    processes = [start(command, logs[0])]
    try:
        # it takes its slot back before the other one starts
        assert worker_of(logs[0]) == worker
        processes.append(start(command, logs[1]))
        wait_all(processes, logs)
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
    # the killed process's capture was cut back with its output, and its rules were
    # never published: each robots.txt was fetched again and is archived once
    assert robots_captures(out) == {f"{server.base_url}/robots.txt": 1 for server in site.servers}
    assert site.robots_fetches() == dict.fromkeys(HOSTS, 2)
    check_allowed_and_disallowed(site)
    pages = {f"{server.base_url}/p{n}.html" for server in site.servers for n in range(20)}
    archived = responses(sorted(p for p in out.iterdir() if p.is_dir()))
    assert set(archived) == pages and set(archived.values()) == {1}


# -- the shared entries on their own -------------------------------------------------------------


def _shared(redis: RedisServer, worker: str, **options: float) -> SharedRobotsTxt:
    store = RedisCampaignStore(RedisConfig(url=redis.url, namespace="unit", worker=worker))
    return SharedRobotsTxt(store, SharedRobotsConfig(**options))  # type: ignore[arg-type]


def test_one_claim_at_a_time_and_an_unrenewed_claim_expires(redis_server: RedisServer) -> None:
    first = _shared(redis_server, "w-0", claim_timeout=0.3)
    second = _shared(redis_server, "w-1", claim_timeout=0.3)
    try:
        claim = first.look_up_or_claim("a.test")
        assert isinstance(claim, Claimed)
        assert isinstance(second.look_up_or_claim("a.test"), Wait)
        assert first.renew("a.test", claim)
        time.sleep(0.5)  # the claimer "died": no renewal
        taken = second.look_up_or_claim("a.test")
        assert isinstance(taken, Claimed)
        assert not first.renew("a.test", claim)  # its claim is gone
        second.publish("a.test", taken, 200, ROBOTS)
        # the late first claimer still publishes (its copy is as true): no claim left over
        first.publish("a.test", claim, 200, ROBOTS)
        entry = second.look_up_or_claim("a.test")
        assert isinstance(entry, RobotsEntry)
        assert (entry.status, entry.body, entry.worker) == (200, ROBOTS, "w-0")
    finally:
        first.store.close()
        second.store.close()


def test_status_rules_and_entry_lifetimes(redis_server: RedisServer) -> None:
    shared = _shared(redis_server, "w-0", ttl=100.0, error_ttl=5.0, max_bytes=10)
    try:
        for host, status in (("ok.test", 200), ("gone.test", 404), ("down.test", 503)):
            claim = shared.look_up_or_claim(host)
            assert isinstance(claim, Claimed)
            shared.publish(host, claim, status, b"Disallow: /everything\n")
        ok, gone, down = (shared.look_up_or_claim(h) for h in ("ok.test", "gone.test", "down.test"))
        assert isinstance(ok, RobotsEntry) and ok.body == b"Disallow: " and ok.truncated
        assert 95 < ok.expires_in <= 100
        # a 4xx is "allow all" for the full TTL; a 5xx too, but fetched again soon
        assert isinstance(gone, RobotsEntry) and gone.body == b"" and gone.expires_in > 95
        assert isinstance(down, RobotsEntry) and down.body == b"" and down.expires_in <= 5
        assert down.failed and not gone.failed
        claim = shared.look_up_or_claim("unreachable.test")
        assert isinstance(claim, Claimed)
        assert shared.publish("unreachable.test", claim, 0, b"").expires_in == 5.0
    finally:
        shared.store.close()


def test_only_a_2xx_body_holds_rules() -> None:
    assert rules_body(200, b"abcdef", 4) == (b"abcd", True)
    assert rules_body(204, b"", 4) == (b"", False)
    for status in (301, 403, 404, 429, 500, 503, 0):
        assert rules_body(status, b"Disallow: /", 100) == (b"", False)


def test_the_profile_key_reaches_the_setting_and_a_bad_value_names_the_key() -> None:
    from corpus_crawler.profile import ProfileError, parse_profile
    from pipelines.bridge import profile_settings

    profile = parse_profile({"distributed": {"robots_txt_ttl": 3600}})
    assert profile_settings(profile)["CORPUS_ROBOTS_TTL"] == 3600
    with pytest.raises(ProfileError, match=r"distributed\.robots_txt_ttl.*must be > 0"):
        parse_profile({"distributed": {"robots_txt_ttl": 0}})


def test_an_entry_published_with_a_commit_is_seen_only_once_that_commit_is_in(
    redis_server: RedisServer,
) -> None:
    shared = _shared(redis_server, "w-0")
    other = _shared(redis_server, "w-1")
    published: list[str] = []
    try:
        for host in ("a.test", "b.test"):
            claim = shared.look_up_or_claim(host)
            assert isinstance(claim, Claimed)
            publication = shared.publication(host, claim, 200, ROBOTS)
            shared.store.publish_robots_with_commit(
                publication, functools.partial(published.append, host)
            )
        # fetched, not committed: the others wait on the claim
        assert isinstance(other.look_up_or_claim("a.test"), Wait)
        assert shared.store.changed and not published
        shared.store.commit({"corpus.warc.gz": 1234})
        assert published == ["a.test", "b.test"]
        for host in ("a.test", "b.test"):
            entry = other.look_up_or_claim(host)
            assert isinstance(entry, RobotsEntry)
            assert (entry.status, entry.body, entry.worker) == (200, ROBOTS, "w-0")
        # a fenced worker's commit is refused, and publishes nothing
        claim = shared.look_up_or_claim("c.test")
        assert isinstance(claim, Claimed)
        publication = shared.publication("c.test", claim, 200, ROBOTS)
        shared.store.publish_robots_with_commit(publication, lambda: published.append("c.test"))
        _shared(redis_server, "w-0").store.close()  # its identity restarted elsewhere
        with pytest.raises(WorkerFenced):
            shared.store.commit({"corpus.warc.gz": 2345})
        assert "c.test" not in published
        assert isinstance(other.look_up_or_claim("c.test"), Wait)
    finally:
        shared.store.close()
        other.store.close()
