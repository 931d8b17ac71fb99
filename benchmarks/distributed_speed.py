"""Distributed crawl speed: pages/s with 1 and 2 crawler processes sharing a Redis campaign.

A site of real pages (the gold pages, replicated, each with its own links) is
served from memory by this process on several loopback hosts (127.0.0.1 ...
127.0.0.N: several politeness queues, no delay), so that the crawl is CPU-bound
(extraction, WARC and corpus writing), not held back by one host. A real
`redis-server` is started on a free port. Then, in one run:

(a) ``sqlite-1``: one ordinary crawl process (the SQLite campaign): the baseline;
(b) ``redis-1``: one process of a Redis campaign (`crawl --redis`);
(c) ``redis-2``: two processes of one Redis campaign, on the whole machine;
(d) ``redis-1-pinned``: one Redis process (and its extraction workers) on CPU 0;
(e) ``redis-2-pinned``: two Redis processes, one on CPU 0 and one on CPU 1: the
    ratio e/d is what a second machine would give;
(f) ``sqlite-1-dedup`` and (g) ``redis-2-dedup``: dedup and yield pruning on (the
    profile defaults; the replicated gold pages make many duplicates): one SQLite
    process, and two Redis processes whose dedup stores and yield counts are the
    campaign's Redis. "dedup trips/p" and "yield trips/p" are the Redis calls of those
    two stages per page (``corpus/dedup/redis_round_trips`` and
    ``corpus/yield/redis_round_trips`` of the summaries), part of "trips/p".

pages/s is counted between the first and the last page request the site served
(process start-up left out). Redis round trips per page are the calls the
crawlers sent (EVALSHA/EVAL of the Lua scripts, MGET, HGETALL, PING, SCRIPT LOAD)
from ``INFO commandstats`` before and after each run; "commands per page" also
counts the commands the scripts ran inside Redis.

    python benchmarks/distributed_speed.py [--pages 1200] [--hosts 8] [--json OUT]
                                           [--dedup-only]   # (f) and (g) only

Ratios are measured in one run of this script; on a shared machine the absolute
figures move with the other load, so read the ratios (and say the machine was shared).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import socket
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_TARBALL = ROOT / "tests" / "data" / "gold.tar.xz"

sys.path.insert(0, str(ROOT))

from corpus_crawler.testserver import (  # noqa: E402
    Reply,
    RequestRecord,
    SiteServer,
    add_links,
    isolate_links,
)

PROFILE = """\
name: bench
seeds:
  urls: {seeds}
scope:
  max_depth: 20
politeness:
  obey_robots_txt: false
  concurrent_requests: 16
  concurrent_requests_per_domain: 2
  download_delay: 0
  autothrottle: false
network:
  allowed_networks: [127.0.0.0/8]
extraction:
  language: auto
  min_words: 60
dedup:
  enabled: {dedup}
  paragraph_filter_mib: 64
yield:
  preset: {yield_preset}
output:
  progress_interval: 0
  report: false
  prevertical:
    enabled: true
"""

#: Commands a crawler process sends itself (the others run inside the Lua scripts).
CLIENT_COMMANDS = ("evalsha", "eval", "mget", "hgetall", "ping", "script|load")


def gold_pages() -> list[bytes]:
    with tempfile.TemporaryDirectory() as tmp, tarfile.open(DEFAULT_TARBALL) as archive:
        archive.extractall(tmp, filter="data")
        return [isolate_links(p.read_bytes()) for p in sorted(Path(tmp).glob("gold/*/html/*"))]


class Site:
    """Page n on host n mod H; page n links to 10n+1 .. 10n+10, across hosts."""

    def __init__(self, gold: list[bytes], pages: int, hosts: int) -> None:
        self.pages = pages
        self.hosts = hosts
        self.lock = threading.Lock()
        self.arrivals: list[float] = []
        self.servers: list[SiteServer] = []
        self._gold = gold
        self._bodies: dict[int, bytes] = {}
        for index in range(hosts):
            self.servers.append(
                SiteServer(host=f"127.0.0.{index + 1}", fallback=self._route(index)).start()
            )

    def url(self, page: int) -> str:
        return self.servers[page % self.hosts].url(f"/p{page}.html")

    def _body(self, page: int) -> bytes:
        if page not in self._bodies:
            links = "".join(
                f"<a href='{self.url(c)}'>page {c}</a> "
                for c in range(10 * page + 1, 10 * page + 11)
                if c < self.pages
            )
            own = f"<p>Benchmark page {page} of the distributed crawl.</p>"
            self._bodies[page] = add_links(
                self._gold[page % len(self._gold)], (own + links).encode()
            )
        return self._bodies[page]

    def _route(self, index: int) -> Callable[[RequestRecord], Reply]:
        def route(request: RequestRecord) -> Reply:
            with self.lock:
                self.arrivals.append(time.monotonic())
            name = request.path.removeprefix("/p").removesuffix(".html")
            if not name.isdigit() or int(name) >= self.pages or int(name) % self.hosts != index:
                return Reply(status=404, body=b"not here")
            return Reply(headers=(("Content-Type", "text/html"),), body=self._body(int(name)))

        return route

    def seeds(self) -> list[str]:
        return [self.url(n) for n in range(len(self.servers))]

    def stop(self) -> None:
        for server in self.servers:
            server.stop()


class Redis:
    def __init__(self, directory: Path) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = int(probe.getsockname()[1])
        binary = shutil.which("redis-server")
        if binary is None:
            sys.exit("redis-server is not installed (apt-get install redis-server)")
        self.process = subprocess.Popen(
            [binary, "--bind", "127.0.0.1", "--port", str(self.port), "--dir", str(directory),
             "--appendonly", "yes", "--save", ""],
            stdout=subprocess.DEVNULL,
        )  # fmt: skip
        import redis

        self.client = redis.Redis(port=self.port)
        for _ in range(200):
            try:
                self.client.ping()
                break
            except redis.ConnectionError:
                time.sleep(0.05)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def command_calls(self) -> dict[str, int]:
        stats = self.client.info("commandstats")
        return {name.removeprefix("cmdstat_"): int(v["calls"]) for name, v in stats.items()}

    def stop(self) -> None:
        self.client.close()
        self.process.terminate()
        self.process.wait()


@dataclass
class Run:
    name: str
    processes: int
    pages: int
    seconds: float
    pages_per_second: float
    round_trips_per_page: float | None
    commands_per_page: float | None
    #: Responses archived by each process (from its summary): how the work was shared.
    per_process: list[int]
    #: CPU seconds of the crawlers and their extraction workers per page: what a page
    #: costs whatever else runs on the machine (equal for 1 and 2 processes = no
    #: overhead from sharing the campaign).
    cpu_ms_per_page: float
    #: Redis calls of the dedup stages and of the yield counts per page (their share of
    #: round_trips_per_page); None without dedup on a Redis campaign.
    dedup_trips_per_page: float | None = None
    yield_trips_per_page: float | None = None


def crawl(
    name: str,
    site: Site,
    redis: Redis,
    workdir: Path,
    processes: int,
    distributed: bool,
    cpus: list[set[int]] | None,
    dedup: bool = False,
) -> Run:
    profile = workdir / f"{name}.yaml"
    seeds = "[" + ", ".join(f'"{u}"' for u in site.seeds()) + "]"
    profile.write_text(
        PROFILE.format(
            seeds=seeds,
            dedup=str(dedup).lower(),
            yield_preset="permissive" if dedup else '"off"',
        ),
        encoding="utf-8",
    )
    out = workdir / name
    command = [sys.executable, "-m", "corpus_crawler.cli", "crawl", str(profile), "-o", str(out)]
    if distributed:
        command += ["--redis", redis.url, "-s", f"CORPUS_DISTRIBUTED_NAMESPACE={name}"]
    with site.lock:
        site.arrivals.clear()
    before = redis.command_calls()
    cpu_before = _children_cpu()
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    children = []
    for index in range(processes):
        affinity = cpus[index] if cpus else None

        def pin(affinity: set[int] | None = affinity) -> None:
            if affinity is not None:
                os.sched_setaffinity(0, affinity)  # its extraction workers inherit it

        log = open(workdir / f"{name}-{index}.log", "wb")  # noqa: SIM115
        children.append(
            subprocess.Popen(
                command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, preexec_fn=pin
            )
        )
    for child in children:
        if child.wait() != 0:
            sys.exit(f"{name}: a crawler failed; see {workdir}/{name}-*.log")
    after = redis.command_calls()
    cpu = _children_cpu() - cpu_before
    with site.lock:
        arrivals = sorted(site.arrivals)
    pages = len(arrivals)
    seconds = arrivals[-1] - arrivals[0]
    delta = {k: after.get(k, 0) - before.get(k, 0) for k in after}
    delta.pop("info", None)  # this script's own
    trips = sum(delta.get(k, 0) for k in CLIENT_COMMANDS)
    commands = sum(delta.values())
    shares = []
    stage_trips = {"dedup": 0, "yield": 0}
    for summary in sorted(out.rglob("*-summary.json")):
        data = json.loads(summary.read_text(encoding="utf-8"))
        shares.append(int(data["pages"]["responses"]))
        for stage in stage_trips:
            stage_trips[stage] += int(data["stats"].get(f"corpus/{stage}/redis_round_trips", 0))
    on_redis = distributed and dedup
    return Run(
        name=name,
        processes=processes,
        pages=pages,
        seconds=round(seconds, 2),
        pages_per_second=round(pages / seconds, 1),
        round_trips_per_page=round(trips / pages, 2) if distributed else None,
        commands_per_page=round(commands / pages, 2) if distributed else None,
        per_process=shares,
        cpu_ms_per_page=round(cpu * 1000 / pages, 1),
        dedup_trips_per_page=round(stage_trips["dedup"] / pages, 2) if on_redis else None,
        yield_trips_per_page=round(stage_trips["yield"] / pages, 2) if on_redis else None,
    )


def _children_cpu() -> float:
    # waited-for descendants: the crawlers, and through them their extraction workers
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=1200)
    parser.add_argument("--hosts", type=int, default=8)
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--dedup-only", action="store_true", help="only the runs with dedup and yield on"
    )
    args = parser.parse_args(argv)
    cores = sorted(os.sched_getaffinity(0))
    if len(cores) < 2:
        sys.exit("the pinned runs need 2 CPUs")
    site = Site(gold_pages(), args.pages, args.hosts)
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        (workdir / "redis").mkdir()
        redis = Redis(workdir / "redis")
        try:
            runs = []
            if not args.dedup_only:
                runs += [
                    crawl("sqlite-1", site, redis, workdir, 1, False, None),
                    crawl("redis-1", site, redis, workdir, 1, True, None),
                    crawl("redis-2", site, redis, workdir, 2, True, None),
                    crawl("redis-1-pinned", site, redis, workdir, 1, True, [{cores[0]}]),
                    crawl(
                        "redis-2-pinned", site, redis, workdir, 2, True, [{cores[0]}, {cores[1]}]
                    ),
                ]
            runs += [
                crawl("sqlite-1-dedup", site, redis, workdir, 1, False, None, dedup=True),
                crawl("redis-2-dedup", site, redis, workdir, 2, True, None, dedup=True),
            ]
        finally:
            redis.stop()
            site.stop()
    by_name = {run.name: run for run in runs}
    header = (
        "run", "procs", "pages", "s", "pages/s", "cpu ms/p", "trips/p", "cmds/p",
        "dedup trips/p", "yield trips/p", "shares",
    )  # fmt: skip
    print("{:16} {:>5} {:>6} {:>7} {:>8} {:>8} {:>8} {:>7} {:>13} {:>13}  {}".format(*header))
    for run in runs:
        print(
            f"{run.name:16} {run.processes:>5} {run.pages:>6} {run.seconds:>7.2f}"
            f" {run.pages_per_second:>8.1f} {run.cpu_ms_per_page:>8.1f}"
            f" {run.round_trips_per_page or 0:>8.2f}"
            f" {run.commands_per_page or 0:>7.2f}"
            f" {run.dedup_trips_per_page or 0:>13.2f} {run.yield_trips_per_page or 0:>13.2f}"
            f"  {'/'.join(map(str, run.per_process))}"
        )

    def ratio(a: str, b: str) -> float:
        return by_name[a].pages_per_second / by_name[b].pages_per_second

    def cpu_ratio(a: str, b: str) -> float:
        return by_name[a].cpu_ms_per_page / by_name[b].cpu_ms_per_page

    ratios = {}
    if not args.dedup_only:
        ratios.update(
            {
                "cpu/page redis-1 / sqlite-1": cpu_ratio("redis-1", "sqlite-1"),
                "cpu/page redis-2 / redis-1": cpu_ratio("redis-2", "redis-1"),
                "redis-1 / sqlite-1": ratio("redis-1", "sqlite-1"),
                "redis-2 / redis-1": ratio("redis-2", "redis-1"),
                "redis-2-pinned / redis-1-pinned": ratio("redis-2-pinned", "redis-1-pinned"),
            }
        )
    ratios["cpu/page redis-2-dedup / sqlite-1-dedup"] = cpu_ratio("redis-2-dedup", "sqlite-1-dedup")
    for label, value in ratios.items():
        print(f"{label:34} {value:.2f}x")
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} (shared?)")
    if args.json:
        args.json.write_text(
            json.dumps({"runs": [asdict(r) for r in runs], "ratios": ratios}, indent=2),
            encoding="utf-8",
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
