"""A campaign shared by three crawler processes through one real Redis (`crawl --redis URL`).

A real `redis-server` (append-only file on) is started on 127.0.0.1 at a free port
in a temporary folder; a loopback site of 240 pages is served by three hosts
(127.0.0.1, 127.0.0.2, 127.0.0.3: three politeness queues), its pages linking
across hosts. Real `corpus-crawler crawl` processes are started with the same
command and then counted from their files: every page is archived exactly once
(WARC response records, read back with warcio) over all processes' folders; the
union of their prevertical documents is the documents (URL and text) of a
single-process crawl of the same site; and the site's own clock shows two
requests to one host never closer than the profile's delay, across processes.
The fault tests kill one crawler with SIGKILL (it is restarted with the same
command and takes its slot back), and Redis itself with SIGKILL (restarted on
the same port from its append-only file), then count the same way.
"""

from __future__ import annotations

import collections
import dataclasses
import itertools
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from warcio.archiveiterator import ArchiveIterator

from corpus_crawler.redis_state import RedisCampaignStore, RedisConfig, WorkerFenced
from corpus_crawler.state import Admission, BudgetLimits
from corpus_crawler.testserver import Reply, RequestRecord, SiteServer, add_links, isolate_links
from corpus_crawler.vertical import read_vertical

ROOT = Path(__file__).resolve().parent.parent
#: A guard against a hung crawl, not a speed assertion.
TIMEOUT = 150
PAGES = 240
HOSTS = ("127.0.0.1", "127.0.0.2", "127.0.0.3")
#: The profile's delay between two requests to one host (seconds).
DELAY = 0.05
#: Seconds without a heartbeat after which a dead worker's leases go to the others.
LEASE_TIMEOUT = 5

PROFILE = """\
name: shared
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
limits:
  download_timeout: 30
extraction:
  language: auto
  min_words: 60
  workers: 1
# the pages share their gold text: dedup (and with it yield pruning) would drop them
dedup:
  enabled: false
distributed:
  lease_timeout: {lease_timeout}
output:
  progress_interval: 0
  report: false
  prevertical:
    enabled: true
"""


# -- Redis ------------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class RedisServer:
    """A real redis-server on 127.0.0.1 with its append-only file in `directory`,
    fsynced as `appendfsync` says (the README's `everysec` unless a test needs more)."""

    def __init__(self, directory: Path, appendfsync: str = "everysec") -> None:
        self.directory = directory
        self.port = _free_port()
        self.appendfsync = appendfsync
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        binary = shutil.which("redis-server")
        assert binary is not None
        log = open(self.directory / "redis.log", "ab")  # noqa: SIM115 - the server's stdout
        self.process = subprocess.Popen(
            [
                binary,
                "--bind", "127.0.0.1",
                "--port", str(self.port),
                "--dir", str(self.directory),
                "--appendonly", "yes",
                "--appendfsync", self.appendfsync,
                "--save", "",
                "--daemonize", "no",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
        log.close()
        deadline = time.monotonic() + 20
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as conn:
                    conn.sendall(b"PING\r\n")
                    if conn.recv(64).startswith(b"+PONG"):
                        return
            except OSError:
                pass
            assert self.process.poll() is None, (self.directory / "redis.log").read_text()
            assert time.monotonic() < deadline, "redis-server did not answer"
            time.sleep(0.05)

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=30)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=30)


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    yield from _redis_server(tmp_path, "everysec")


@pytest.fixture
def durable_redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    """Redis with `appendfsync always`: every write on disk before Redis answers it.
    With `everysec`, a write comes after its answer while the previous second's fsync
    is still running (a busy disk: Redis postpones the write up to 2 s), so a SIGKILL
    then can lose answered writes, as the README says. A full suite run on a busy
    machine once left two pages archived twice after this test's kill, with
    `everysec` (the likely cause: Redis's log does not show postponements under 2 s)."""
    yield from _redis_server(tmp_path, "always")


def _redis_server(tmp_path: Path, appendfsync: str) -> Iterator[RedisServer]:
    if shutil.which("redis-server") is None:
        message = (
            "redis-server is not installed: apt-get install redis-server (.ci/run installs"
            " it); the distributed crawl tests need a real Redis"
        )
        # CI installs redis-server (.ci/run), so there a missing binary is a failure; on a
        # developer's machine without Redis these tests cannot run at all, and say why.
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    directory = tmp_path / "redis"
    directory.mkdir()
    server = RedisServer(directory, appendfsync)
    server.start()
    yield server
    server.stop()


# -- the site ----------------------------------------------------------------------------------


@dataclasses.dataclass
class Site:
    servers: list[SiteServer]
    #: (host, path, monotonic arrival time) of every request, all hosts.
    arrivals: list[tuple[str, str, float]]
    lock: threading.Lock

    def url(self, page: int) -> str:
        return self.servers[page % len(HOSTS)].url(f"/p{page}.html")

    @property
    def seeds(self) -> list[str]:
        # p0, p1 and p2: one page on each host
        return [server.url(f"/p{i}.html") for i, server in enumerate(self.servers)]

    def requests(self) -> int:
        with self.lock:
            return len(self.arrivals)

    def pages_requested(self) -> collections.Counter[str]:
        with self.lock:
            return collections.Counter(
                f"{host}{path}" for host, path, _ in self.arrivals if path != "/robots.txt"
            )


@pytest.fixture(scope="module")
def site(gold_dir: Path) -> Iterator[Site]:
    gold = [
        isolate_links(p.read_bytes()) for p in sorted((gold_dir / "cleaneval-dev").glob("html/*"))
    ][:40]
    arrivals: list[tuple[str, str, float]] = []
    lock = threading.Lock()
    servers: list[SiteServer] = []
    bodies: dict[int, bytes] = {}

    def page_body(number: int) -> bytes:
        if number not in bodies:
            children = [c for c in range(3 * number + 1, 3 * number + 4) if c < PAGES]
            # the seeds are p0, p1 and p2 (one per host); children of n are 3n+1..3n+3
            links = "".join(
                f"<a href='{servers[c % len(HOSTS)].url(f'/p{c}.html')}'>page {c}</a> "
                for c in children
            )
            own = f"<p>Shared crawl page number {number}, served by one of three hosts.</p>"
            bodies[number] = add_links(gold[number % len(gold)], (own + links).encode())
        return bodies[number]

    def route_for(host: str) -> Callable[[RequestRecord], Reply]:
        def route(request: RequestRecord) -> Reply:
            with lock:
                arrivals.append((host, request.path, time.monotonic()))
            name = request.path.removeprefix("/p").removesuffix(".html")
            if request.path == "/robots.txt":
                return Reply(headers=(("Content-Type", "text/plain"),), body=b"User-agent: *\n")
            if not name.isdigit() or int(name) >= PAGES or int(name) % len(HOSTS) != index:
                return Reply(status=404, body=b"not here")
            return Reply(headers=(("Content-Type", "text/html"),), body=page_body(int(name)))

        index = HOSTS.index(host)
        return route

    for host in HOSTS:
        servers.append(SiteServer(host=host, fallback=route_for(host)).start())
    try:
        yield Site(servers=servers, arrivals=arrivals, lock=lock)
    finally:
        for server in servers:
            server.stop()


def _write_profile(directory: Path, site: Site) -> Path:
    seeds = "[" + ", ".join(f'"{url}"' for url in site.seeds) + "]"
    profile = directory / "shared.yaml"
    profile.write_text(
        PROFILE.format(seeds=seeds, delay=DELAY, lease_timeout=LEASE_TIMEOUT), encoding="utf-8"
    )
    return profile


# -- processes ---------------------------------------------------------------------------------


def crawl_command(profile: Path, out: Path, redis_url: str | None) -> list[str]:
    command = [sys.executable, "-m", "corpus_crawler.cli", "crawl", str(profile), "-o", str(out)]
    return command + (["--redis", redis_url] if redis_url else [])


def start(command: list[str], log: Path) -> subprocess.Popen[bytes]:
    with open(log, "ab") as handle:
        return subprocess.Popen(command, cwd=ROOT, stdout=handle, stderr=subprocess.STDOUT)


def wait_all(processes: list[subprocess.Popen[bytes]], logs: list[Path]) -> None:
    deadline = time.monotonic() + TIMEOUT
    for process, log in zip(processes, logs, strict=True):
        try:
            process.wait(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            for other in processes:
                other.kill()
            pytest.fail(f"a crawler hung; its log ends with:\n{log.read_text()[-3000:]}")
        assert process.returncode == 0, log.read_text(errors="replace")[-4000:]


def wait_for_requests(site: Site, count: int, processes: list[subprocess.Popen[bytes]]) -> None:
    deadline = time.monotonic() + TIMEOUT
    while site.requests() < count:
        assert all(p.poll() is None for p in processes), "a crawler ended before the fault"
        assert time.monotonic() < deadline, "the crawl made no progress"
        time.sleep(0.005)


def run_shared_crawl(
    site: Site,
    tmp_path: Path,
    redis: RedisServer,
    fault: Callable[[list[subprocess.Popen[bytes]], list[Path], list[str]], None] | None = None,
    workers: int = 3,
    settings: tuple[str, ...] = (),
) -> Path:
    """`workers` processes with one command; `fault` may act on them mid-crawl."""
    profile = _write_profile(tmp_path, site)
    out = tmp_path / "shared"
    command = crawl_command(profile, out, redis.url)
    for setting in settings:
        command += ["-s", setting]
    logs = [tmp_path / f"worker{i}.log" for i in range(workers)]
    processes = [start(command, log) for log in logs]
    try:
        if fault is not None:
            fault(processes, logs, command)
        wait_all(processes, logs)
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.wait()
    return out


# -- counting ----------------------------------------------------------------------------------


def responses(folders: list[Path]) -> collections.Counter[str]:
    """Target URI -> response records over every WARC of `folders` (robots.txt left out)."""
    counts: collections.Counter[str] = collections.Counter()
    for folder in folders:
        for path in sorted(folder.glob("*.warc.gz")):
            with open(path, "rb") as handle:
                for record in ArchiveIterator(handle, check_digests=True):
                    if record.rec_type != "response":
                        continue
                    uri = record.rec_headers.get_header("WARC-Target-URI")
                    record.content_stream().read()
                    assert record.digest_checker.passed is not False, uri
                    if not uri.endswith("/robots.txt"):
                        counts[uri] += 1
    return counts


def documents(folders: list[Path]) -> list[tuple[str, str]]:
    """(URL, text) of every prevertical document of `folders`."""
    found = []
    for folder in folders:
        for path in sorted(folder.glob("*.prevert")):
            for attributes, paragraphs in read_vertical(path):
                text = "\n".join(p_text for _, p_text in paragraphs)
                found.append((attributes["final_url"], text))
    return found


def worker_folders(out: Path) -> list[Path]:
    return sorted(p for p in out.iterdir() if p.is_dir())


def worker_of(log: Path) -> str:
    """The worker id a crawler process printed at its start."""
    deadline = time.monotonic() + TIMEOUT
    while "Worker " not in (text := log.read_text(errors="replace")):
        assert time.monotonic() < deadline, "the crawler never said which worker it is"
        time.sleep(0.05)
    return text.split("Worker ", 1)[1].split(" ", 1)[0]


def uncommitted_bytes(
    redis: RedisServer,
    folder: Path,
    worker: str,
    pattern: str = "*.warc.gz.open",
    *,
    new_files: bool = False,
) -> bool:
    """One of the worker's files being written (`pattern`) is longer than the length it
    committed; `new_files`: a file with no committed length yet counts too."""
    import redis as redis_client

    client = redis_client.Redis(port=redis.port)
    try:
        committed = client.hgetall(f"cc:shared:files:{worker}")
    finally:
        client.close()
    for path in folder.glob(pattern):
        name = path.name.removesuffix(".open").encode()
        try:
            size = path.stat().st_size
        except FileNotFoundError:
            continue
        if (new_files or name in committed) and size > int(committed.get(name, 0)):
            return True
    return False


def kill_when_uncommitted_and_restart(
    redis: RedisServer,
    processes: list[subprocess.Popen[bytes]],
    logs: list[Path],
    command: list[str],
    folder: Path,
    log_name: str,
    pattern: str = "*.warc.gz.open",
    *,
    new_files: bool = False,
) -> str:
    """`kill -9` the second process while its files in `folder` hold output it has not
    committed (`uncommitted_bytes`), then run the same command again, logging to
    `log_name`: it takes the killed process's slot and identity. Returns that identity.

    The process is stopped (SIGSTOP) and its files read again before the kill: between
    a first reading and the kill it could commit (the reading takes the committed
    lengths, then the files' sizes), and on a loaded machine it did, so the kill came
    after the commit it was meant to precede."""
    victim = processes[1]
    worker = worker_of(logs[1])
    deadline = time.monotonic() + TIMEOUT

    def uncommitted() -> bool:
        return uncommitted_bytes(redis, folder / worker, worker, pattern, new_files=new_files)

    while True:
        assert victim.poll() is None, "the crawler ended before the fault"
        assert time.monotonic() < deadline, "no uncommitted output seen"
        if uncommitted():
            victim.send_signal(signal.SIGSTOP)
            if uncommitted():
                break  # frozen with output past its commit: the moment the test wants
            victim.send_signal(signal.SIGCONT)
        time.sleep(0.002)
    victim.send_signal(signal.SIGKILL)
    victim.wait(timeout=30)
    log = logs[1].with_name(log_name)
    processes[1] = start(command, log)
    logs[1] = log
    return worker


def check_exactly_once(site: Site, out: Path, single: list[tuple[str, str]]) -> list[Path]:
    folders = [p for p in worker_folders(out) if any(p.glob("*.warc.gz"))]
    assert not [p for p in out.rglob("*.open") if "uncommitted" not in p.parts]
    archived = responses(folders)
    twice = {uri: n for uri, n in archived.items() if n != 1}
    assert not twice, f"archived more than once: {twice}"
    assert set(archived) == {site.url(n) for n in range(PAGES)}
    shared = documents(folders)
    urls = [url for url, _ in shared]
    assert len(urls) == len(set(urls)), "a document was written twice"
    assert sorted(shared) == sorted(single)
    return folders


#: Yield statistics counted but never acted on (no host gives 10**12 bytes): the shared
#: crawls' global counts can then be compared with an uninterrupted crawl's and with the
#: files. (The profile's dedup is off, which turns yield off too: these override it.)
COUNT_YIELD = ("CORPUS_YIELD_PRESET=normal", f"CORPUS_YIELD_MIN_BYTES={10**12}")

#: host -> (raw bytes, clean bytes, documents) of the yield statistics.
YieldCounts = dict[str, tuple[int, int, int]]


@dataclasses.dataclass(frozen=True)
class SingleCrawl:
    documents: list[tuple[str, str]]
    yield_counts: YieldCounts


@pytest.fixture(scope="module")
def single_process_crawl(site: Site, tmp_path_factory: pytest.TempPathFactory) -> SingleCrawl:
    """One ordinary (SQLite) crawl of the site: what the shared ones must equal."""
    tmp_path = tmp_path_factory.mktemp("single")
    profile = _write_profile(tmp_path, site)
    out = tmp_path / "single"
    log = tmp_path / "single.log"
    command = crawl_command(profile, out, None)
    for setting in COUNT_YIELD:
        command += ["-s", setting]
    process = start(command, log)
    wait_all([process], [log])
    assert set(responses([out])) == {site.url(n) for n in range(PAGES)}
    found = documents([out])
    assert len(found) > PAGES / 2
    counts = sqlite_yield(out)
    # the files account for the counts of an uninterrupted crawl too (what the shared
    # crawls are held to)
    assert counts == output_yield([out])
    return SingleCrawl(found, counts)


@pytest.fixture(scope="module")
def single_process_documents(single_process_crawl: SingleCrawl) -> list:
    return single_process_crawl.documents


def sqlite_yield(out: Path) -> YieldCounts:
    """The per-host yield counts a single-process crawl saved."""
    import sqlite3

    with sqlite3.connect(out / "state" / "yield.sqlite") as db:
        rows = db.execute("SELECT name, raw, clean, docs FROM yield WHERE kind = 'host'")
        return {name: (int(raw), int(clean), int(docs)) for name, raw, clean, docs in rows}


def redis_yield(redis: RedisServer) -> YieldCounts:
    """The global per-host yield counts of the campaign (``cc:shared:yield:h:<host>``)."""
    import redis as redis_client

    client = redis_client.Redis(port=redis.port)
    try:
        counts = {}
        for key in client.scan_iter(match="cc:shared:yield:h:*"):
            fields = client.hgetall(key)
            host = key.decode().removeprefix("cc:shared:yield:h:")
            counts[host] = tuple(int(fields.get(name, 0)) for name in (b"raw", b"clean", b"docs"))
        return counts  # type: ignore[return-value]
    finally:
        client.close()


def output_yield(folders: list[Path]) -> YieldCounts:
    """Per host, what the committed files hold: every page's response payload (raw bytes,
    documents) from the WARCs and every kept document's text (clean bytes: its good
    paragraphs, one a line) from the preverticals."""
    raw: collections.Counter[str] = collections.Counter()
    docs: collections.Counter[str] = collections.Counter()
    clean: collections.Counter[str] = collections.Counter()
    for folder in folders:
        for path in sorted(folder.glob("*.warc.gz")):
            with open(path, "rb") as handle:
                for record in ArchiveIterator(handle):
                    uri = record.rec_headers.get_header("WARC-Target-URI") or ""
                    if record.rec_type != "response" or uri.endswith("/robots.txt"):
                        continue
                    host = urlsplit(uri).hostname or ""
                    raw[host] += len(record.content_stream().read())
                    docs[host] += 1
    for url, text in documents(folders):
        clean[urlsplit(url).hostname or ""] += len(text.encode("utf-8"))
    return {host: (raw[host], clean[host], docs[host]) for host in docs}


def check_politeness(site: Site) -> None:
    """Start-to-start gaps between two page requests to one host, from any process."""
    with site.lock:
        arrivals = list(site.arrivals)
    for host in HOSTS:
        times = sorted(t for h, path, t in arrivals if h == host and path != "/robots.txt")
        assert len(times) >= PAGES // len(HOSTS)
        gaps = [b - a for a, b in itertools.pairwise(times)]
        assert min(gaps) >= DELAY, f"{host}: two requests {min(gaps):.4f} s apart"


# -- the tests ---------------------------------------------------------------------------------


def test_three_processes_fetch_every_page_once_politely_and_write_the_single_crawls_documents(
    site: Site, single_process_crawl: SingleCrawl, redis_server: RedisServer, tmp_path: Path
) -> None:
    with site.lock:
        site.arrivals.clear()
    out = run_shared_crawl(site, tmp_path, redis_server, settings=COUNT_YIELD)
    folders = check_exactly_once(site, out, single_process_crawl.documents)
    # the global yield counts of three processes: one uninterrupted crawl's
    assert redis_yield(redis_server) == output_yield(folders) == single_process_crawl.yield_counts
    # the work was shared: more than one process archived pages
    assert len(folders) >= 2, [p.name for p in folders]
    # each worker in its own folder, its slot and IIPC file names
    for folder in folders:
        assert all(p.name.startswith(f"corpus-{folder.name}-") for p in folder.glob("*.warc.gz"))
    check_politeness(site)
    # no page was even fetched twice (nothing was lost or retried)
    assert max(site.pages_requested().values()) == 1


def test_a_killed_process_rejoins_and_nothing_is_lost_or_archived_twice(
    site: Site, single_process_crawl: SingleCrawl, redis_server: RedisServer, tmp_path: Path
) -> None:
    with site.lock:
        site.arrivals.clear()
    restarted: list[str] = []

    def kill_one(
        processes: list[subprocess.Popen[bytes]], logs: list[Path], command: list[str]
    ) -> None:
        wait_for_requests(site, PAGES // 3, processes)
        # killed while its files hold pages it has not committed yet (the state to repair)
        restarted.append(
            kill_when_uncommitted_and_restart(
                redis_server,
                processes,
                logs,
                command,
                tmp_path / "shared",
                "worker1-restarted.log",
            )
        )

    # commits 2 s apart: the kill lands on uncommitted output, not on a commit's instant
    slow_commits = ("CORPUS_CAMPAIGN_COMMIT_INTERVAL=2", *COUNT_YIELD)
    out = run_shared_crawl(site, tmp_path, redis_server, fault=kill_one, settings=slow_commits)
    [worker] = restarted
    folders = check_exactly_once(site, out, single_process_crawl.documents)
    # the killed process had counted the pages of its uncommitted output in the global
    # yield statistics (a page's counts go in before its output is written); they were
    # taken back out when its requests returned to the frontier, so the refetches count
    # each page once: the counts are the files' and an uninterrupted crawl's
    assert redis_yield(redis_server) == output_yield(folders) == single_process_crawl.yield_counts
    # the restart took the killed one's slot and cut its files back
    assert worker_of(tmp_path / "worker1-restarted.log") == worker
    [summary_path] = (out / worker).glob("*-summary.json")
    campaign = json.loads(summary_path.read_text(encoding="utf-8"))["campaign"]
    assert campaign["resumed"] and campaign["run"] >= 2
    assert any("committed bytes" in change for change in campaign["files_cut_back_at_start"])
    check_politeness(site)


def test_redis_killed_and_restarted_from_its_append_only_file_loses_nothing(
    site: Site, single_process_documents: list, durable_redis_server: RedisServer, tmp_path: Path
) -> None:
    redis_server = durable_redis_server
    with site.lock:
        site.arrivals.clear()

    def restart_redis(
        processes: list[subprocess.Popen[bytes]], logs: list[Path], command: list[str]
    ) -> None:
        wait_for_requests(site, PAGES // 3, processes)
        redis_server.kill()
        time.sleep(1.0)  # the crawlers retry meanwhile
        redis_server.start()

    out = run_shared_crawl(site, tmp_path, redis_server, fault=restart_redis, workers=2)
    check_exactly_once(site, out, single_process_documents)
    logs = "".join((tmp_path / f"worker{i}.log").read_text() for i in range(2))
    assert "is unreachable" in logs
    check_politeness(site)


def test_a_process_presumed_dead_stops_with_exit_3_and_its_restart_finishes_the_campaign(
    site: Site, single_process_documents: list, redis_server: RedisServer, tmp_path: Path
) -> None:
    import redis as redis_client

    with site.lock:
        site.arrivals.clear()
    profile = _write_profile(tmp_path, site)
    out = tmp_path / "shared"
    command = crawl_command(profile, out, redis_server.url)
    log = tmp_path / "fenced.log"
    process = start(command, log)
    worker = worker_of(log)
    wait_for_requests(site, PAGES // 4, [process])
    # what another process does when this one's heartbeat expires: a new incarnation
    client = redis_client.Redis(port=redis_server.port)
    client.hincrby("cc:shared:workers", worker, 1)
    client.close()
    process.wait(timeout=TIMEOUT)
    assert process.returncode == 3, log.read_text()[-3000:]
    stopped = [line for line in log.read_text().splitlines() if line.startswith("corpus-crawler:")]
    assert len(stopped) == 1 and f"worker {worker} was presumed dead" in stopped[0]
    assert "run the same command again to rejoin" in stopped[0]
    # the same command again: the campaign ends with every page once
    again = tmp_path / "again.log"
    wait_all([start(command, again)], [again])
    check_exactly_once(site, out, single_process_documents)


# -- the store on its own ----------------------------------------------------------------------


def _store(redis: RedisServer, worker: str, **options: Any) -> RedisCampaignStore:
    return RedisCampaignStore(
        RedisConfig(url=redis.url, namespace="unit", worker=worker, **options)
    )


def _request(url: str) -> str:
    return json.dumps({"url": url, "meta": {}})


def _urls(leased: list[tuple[int, str]]) -> list[str]:
    return [json.loads(text)["url"] for _, text in leased]


def test_a_lease_hands_out_one_request_per_ready_host_and_a_released_host_rests(
    redis_server: RedisServer,
) -> None:
    store = _store(redis_server, "w-0", delay=0.3)
    try:
        for url, priority in [
            ("http://a.test/1", 0),
            ("http://a.test/2", -1),
            ("http://a.test/3", 0),
            ("http://b.test/1", 0),
        ]:
            assert store.enqueue(_request(url), priority, fingerprint=url.encode()) is (
                Admission.QUEUED
            )
        first = store.lease(10)
        assert sorted(_urls(first)) == ["http://a.test/1", "http://b.test/1"]
        # both hosts are held until their requests are released
        assert store.lease(10) == [] and store.lease_wait is None
        row_a = next(row for row, text in first if "a.test" in text)
        store.release(row_a)
        assert store.lease(10) == []
        assert store.lease_wait is not None and 0 < store.lease_wait <= 301  # ms, rounded up
        time.sleep(store.lease_wait / 1000 + 0.01)
        # then priority (depth) first within the host, FIFO within a priority
        assert _urls(store.lease(10)) == ["http://a.test/3"]
    finally:
        store.close()


def test_the_seen_set_and_the_budgets_are_shared_by_all_workers(
    redis_server: RedisServer,
) -> None:
    one, two = _store(redis_server, "w-0"), _store(redis_server, "w-1")
    limits = BudgetLimits(max_pages=2)
    try:
        assert one.enqueue(_request("http://a.test/"), 0, fingerprint=b"a") is Admission.QUEUED
        assert two.enqueue(_request("http://a.test/"), 0, fingerprint=b"a") is Admission.DUPLICATE
        admitted = [
            store.enqueue(_request(f"http://b.test/{n}"), 0, fingerprint=b"b%d" % n,
                          budget="b.test", limits=limits)
            for n, store in enumerate([one, two, one])
        ]  # fmt: skip
        assert admitted == [Admission.QUEUED, Admission.QUEUED, Admission.OVER_MAX_PAGES]
        assert one.pending() == 3
    finally:
        one.close()
        two.close()


def test_a_worker_presumed_dead_is_fenced_and_its_leases_go_to_the_others(
    redis_server: RedisServer,
) -> None:
    slow, other = _store(redis_server, "w-0"), _store(redis_server, "w-1")
    try:
        slow.enqueue(_request("http://a.test/"), 0, fingerprint=b"a")
        [(row, _)] = slow.lease(1)
        # its heartbeat expires (a long pause, a cut network): the others take over
        slow._client.delete("cc:unit:hb:w-0")
        assert other.reap_dead_workers() == 1
        assert _urls(other.lease(1)) == ["http://a.test/"]
        # the slow one comes back: its commit is refused, it leases nothing more
        slow.finish(row, "http://a.test/", "kept")
        with pytest.raises(WorkerFenced, match="presumed dead"):
            slow.commit({"x.warc.gz": 10})
        assert slow.lease(1) == []
        assert other.committed_files() == {}
    finally:
        slow.close()
        other.close()


def test_a_restarted_worker_takes_back_its_identity_its_leases_and_its_committed_lengths(
    redis_server: RedisServer,
) -> None:
    first = _store(redis_server, "w-0")
    for path in ("1", "2"):
        first.enqueue(_request(f"http://h{path}.test/"), 0, fingerprint=path.encode())
    leased = first.lease(2)
    assert len(leased) == 2
    first.finish(leased[0][0], "", "kept")
    first.commit({"x.warc.gz": 100}, fsync_files=())
    # killed here (no close): the same worker starts again
    again = _store(redis_server, "w-0")
    try:
        assert again.resumed and again.run == 2 and again.requeued == 1
        assert again.committed_files() == {"x.warc.gz": 100}
        assert _urls(again.lease(5)) == [json.loads(leased[1][1])["url"]]
        with pytest.raises(WorkerFenced):
            first.commit({"x.warc.gz": 200})
        assert again.committed_files() == {"x.warc.gz": 100}
    finally:
        again.close()
        first.close()


def test_crawl_stops_at_once_with_one_line_when_redis_cannot_be_reached(tmp_path: Path) -> None:
    profile = tmp_path / "p.yaml"
    profile.write_text("name: x\nseeds: {urls: ['http://127.0.0.1:9/']}\n", encoding="utf-8")
    url = f"redis://127.0.0.1:{_free_port()}/0"
    result = subprocess.run(
        crawl_command(profile, tmp_path / "out", url),
        cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT, check=False,
    )  # fmt: skip
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"corpus-crawler: cannot reach Redis at {url}")
    assert "start redis-server" in lines[0]


def test_a_hosts_crawl_delay_is_its_rest_when_longer_than_the_delay(
    redis_server: RedisServer,
) -> None:
    # `HostReleaseMiddleware` passes the host's robots.txt Crawl-delay floor as the rest
    store = _store(redis_server, "w-0", delay=0.1)
    try:
        for url in ("http://a.test/1", "http://a.test/2"):
            store.enqueue(_request(url), 0, fingerprint=url.encode())
        [(row, _)] = store.lease(10)
        store.release(row, rest=1.5)
        assert store.lease(10) == []
        assert store.lease_wait is not None and 1400 < store.lease_wait <= 1501  # ms
        # a rest shorter than the profile's delay does not shorten it
        time.sleep(store.lease_wait / 1000 + 0.01)
        [(row, _)] = store.lease(10)
        store.enqueue(_request("http://a.test/3"), 0, fingerprint=b"3")
        store.release(row, rest=0.01)
        assert store.lease(10) == [] and store.lease_wait is not None
        assert 50 < store.lease_wait <= 101
    finally:
        store.close()
