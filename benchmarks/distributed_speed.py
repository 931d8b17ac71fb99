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
    ratio e/d is what a second machine would give.

The ratios printed, and what each answers:

* ``2 procs / 1 proc, 2 cores shared`` (c/b): a second crawler process on the same
  2-core machine. A process already runs one extraction worker per core it may use,
  so this is > 1 only where one process leaves the cores idle.
* ``2 procs on 1 core each / 1 proc on 1 core`` (e/d): each process has a core of
  its own, as on a second machine: the scale-out figure (2.0 = perfect).
* ``redis-1 / sqlite-1`` (b/a) and the CPU per page ratios: what the shared
  campaign costs one process against the single-process campaign.

Every run prints the 1-minute load average at its start and end, the cores its
crawlers kept busy (CPU seconds / wall seconds, "cores"), the CPU per page of the
load generators that share the machine with them (this script's site server and
redis-server) and the cores all of them kept busy ("machine"). "machine" near 2.0
means the 2-core machine set the pace (the site server and Redis take their share
of it: a second machine would not have to carry them); a load average above
"machine" means other work shared the machine and pages/s is low by that much.
``--repeat N`` runs the five configurations N times, interleaved, and prints each
ratio per round and its median (paired ratios from one round see the same
background load).

pages/s is counted between the first and the last page request the site served
(process start-up left out). Redis round trips per page are the calls the
crawlers sent (EVALSHA/EVAL of the Lua scripts, MGET, HGETALL, PING, SCRIPT LOAD)
from ``INFO commandstats`` before and after each run; "commands per page" also
counts the commands the scripts ran inside Redis.

    python benchmarks/distributed_speed.py [--pages 1200] [--hosts 8] [--repeat 1]
        [--obey-robots] [--dedup] [--json OUT]

``--obey-robots`` serves a robots.txt on every host and obeys it: the shared robots.txt
lookups (one per host and process) are then in the round trips per page. ``--dedup``
turns dedup and yield pruning on in every run (the profile defaults; the replicated
gold pages make many duplicates): the Redis runs keep their dedup stores and yield
counts in the campaign's Redis, and "dedup+yield trips/p" gives those two stages' Redis
calls per page (``corpus/dedup/redis_round_trips`` and ``corpus/yield/redis_round_trips``
of the summaries), part of "trips/p"; "redis-1 / sqlite-1" then prices the shared stores.

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
import statistics
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

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
  obey_robots_txt: {obey_robots}
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
            if request.path == "/robots.txt":
                return Reply(
                    headers=(("Content-Type", "text/plain"),),
                    body=b"User-agent: *\nDisallow: /private/\n",
                )
            with self.lock:  # pages only: pages/s counts pages
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
    def __init__(self, directory: Path, appendfsync: str = "everysec") -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = int(probe.getsockname()[1])
        binary = shutil.which("redis-server")
        if binary is None:
            sys.exit("redis-server is not installed (apt-get install redis-server)")
        self.process = subprocess.Popen(
            [binary, "--bind", "127.0.0.1", "--port", str(self.port), "--dir", str(directory),
             "--appendonly", "yes", "--appendfsync", appendfsync, "--save", ""],
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

    def cpu_seconds(self) -> float:
        """CPU time redis-server has used so far (user + system)."""
        stats = self.client.info("cpu")
        return float(stats["used_cpu_user"]) + float(stats["used_cpu_sys"])

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
    #: CPU seconds of the crawlers / wall seconds from their start to their exit: how
    #: many cores the run kept busy (2.0 on this machine: CPU-bound).
    cores_busy: float
    #: 1-minute load average at the start and at the end of the run (the machine's
    #: other work shows as load beyond `cores_busy`).
    load_start: float
    load_end: float
    #: CPU of the load generators per page: this script's site server and redis-server.
    #: They share the 2 cores with the crawlers; crawlers + these over the wall time is
    #: `machine_cores_busy` (2.0: the machine, not the crawler, sets the pace).
    site_cpu_ms_per_page: float
    redis_cpu_ms_per_page: float
    machine_cores_busy: float
    #: Redis calls of the dedup stages and of the yield counts per page (their share of
    #: round_trips_per_page); None without --dedup or on the SQLite campaign.
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
    obey_robots: bool = False,
    round_number: int = 1,
    dedup: bool = False,
) -> Run:
    # one folder, log and campaign (Redis namespace) per run and round
    label = f"{name}-r{round_number}"
    profile = workdir / f"{label}.yaml"
    seeds = "[" + ", ".join(f'"{u}"' for u in site.seeds()) + "]"
    profile.write_text(
        PROFILE.format(
            seeds=seeds,
            obey_robots=str(obey_robots).lower(),
            dedup=str(dedup).lower(),
            yield_preset="permissive" if dedup else '"off"',
        ),
        encoding="utf-8",
    )
    out = workdir / label
    command = [sys.executable, "-m", "corpus_crawler.cli", "crawl", str(profile), "-o", str(out)]
    if distributed:
        # a namespace per run: each run is a campaign of its own (robots.txt included)
        command += ["--redis", redis.url, "-s", f"CORPUS_DISTRIBUTED_NAMESPACE={label}"]
    with site.lock:
        site.arrivals.clear()
    load_start = os.getloadavg()[0]
    before = redis.command_calls()
    cpu_before = _children_cpu()
    site_before, redis_before = _own_cpu(), redis.cpu_seconds()
    started = time.monotonic()
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    children = []
    for index in range(processes):
        affinity = cpus[index] if cpus else None

        def pin(affinity: set[int] | None = affinity) -> None:
            if affinity is not None:
                os.sched_setaffinity(0, affinity)  # its extraction workers inherit it

        log = open(workdir / f"{label}-{index}.log", "wb")  # noqa: SIM115
        children.append(
            subprocess.Popen(
                command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, preexec_fn=pin
            )
        )
    for child in children:
        if child.wait() != 0:
            sys.exit(f"{label}: a crawler failed; see {workdir}/{label}-*.log")
    wall = time.monotonic() - started
    after = redis.command_calls()
    cpu = _children_cpu() - cpu_before
    site_cpu, redis_cpu = _own_cpu() - site_before, redis.cpu_seconds() - redis_before
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
        cores_busy=round(cpu / wall, 2),
        load_start=round(load_start, 2),
        load_end=round(os.getloadavg()[0], 2),
        site_cpu_ms_per_page=round(site_cpu * 1000 / pages, 1),
        redis_cpu_ms_per_page=round(redis_cpu * 1000 / pages, 1),
        machine_cores_busy=round((cpu + site_cpu + redis_cpu) / wall, 2),
        dedup_trips_per_page=round(stage_trips["dedup"] / pages, 2) if on_redis else None,
        yield_trips_per_page=round(stage_trips["yield"] / pages, 2) if on_redis else None,
    )


def _own_cpu() -> float:
    # this process: the site server's threads (and an idle main thread)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _children_cpu() -> float:
    # waited-for descendants: the crawlers, and through them their extraction workers
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


#: (label, numerator run, denominator run, what the ratio answers)
RATIOS = (
    ("2 procs / 1 proc, 2 cores shared", "redis-2", "redis-1",
     "a second crawler process on this 2-core machine"),
    ("2 procs on 1 core each / 1 proc on 1 core", "redis-2-pinned", "redis-1-pinned",
     "what a second machine gives (2.00 = perfect scale-out)"),
    ("redis-1 / sqlite-1", "redis-1", "sqlite-1",
     "one process: the shared campaign against the SQLite one"),
)  # fmt: skip

CONFIGURATIONS = ("sqlite-1", "redis-1", "redis-2", "redis-1-pinned", "redis-2-pinned")


def run_round(
    site: Site,
    redis: Redis,
    workdir: Path,
    cores: list[int],
    obey_robots: bool,
    number: int,
    dedup: bool = False,
) -> dict[str, Run]:
    one, two = {cores[0]}, {cores[1]}
    plans: dict[str, tuple[int, bool, list[set[int]] | None]] = {
        "sqlite-1": (1, False, None),
        "redis-1": (1, True, None),
        "redis-2": (2, True, None),
        "redis-1-pinned": (1, True, [one]),
        "redis-2-pinned": (2, True, [one, two]),
    }
    runs = {}
    for name in CONFIGURATIONS:
        processes, distributed, cpus = plans[name]
        runs[name] = crawl(
            name, site, redis, workdir, processes, distributed, cpus, obey_robots, number, dedup
        )
    return runs


def print_runs(rounds: list[dict[str, Run]]) -> None:
    header = (
        "run", "round", "procs", "pages", "s", "pages/s", "cpu ms/p", "cores", "site+redis ms/p",
        "machine", "load start-end", "trips/p", "cmds/p", "dedup+yield trips/p", "shares",
    )  # fmt: skip
    print(
        "{:15} {:>5} {:>5} {:>5} {:>6} {:>7} {:>8} {:>5} {:>15} {:>7} {:>14} {:>7} {:>6} {:>19}"
        "  {}".format(*header)
    )
    for number, runs in enumerate(rounds, 1):
        for run in runs.values():
            load = f"{run.load_start:.2f}-{run.load_end:.2f}"
            stages = (
                "-"
                if run.dedup_trips_per_page is None
                else f"{run.dedup_trips_per_page:.2f}+{run.yield_trips_per_page or 0:.2f}"
            )
            print(
                f"{run.name:15} {number:>5} {run.processes:>5} {run.pages:>5} {run.seconds:>6.2f}"
                f" {run.pages_per_second:>7.1f} {run.cpu_ms_per_page:>8.1f}"
                f" {run.cores_busy:>5.2f}"
                f" {f'{run.site_cpu_ms_per_page:.1f}+{run.redis_cpu_ms_per_page:.1f}':>15}"
                f" {run.machine_cores_busy:>7.2f} {load:>14}"
                f" {run.round_trips_per_page or 0:>7.2f} {run.commands_per_page or 0:>6.2f}"
                f" {stages:>19}"
                f"  {'/'.join(map(str, run.per_process))}"
            )


def ratios_of(rounds: list[dict[str, Run]]) -> dict[str, Any]:
    """Each ratio per round (pages/s, and CPU per page) and the medians."""
    result: dict[str, Any] = {}
    for label, top, bottom, meaning in RATIOS:
        speed = [r[top].pages_per_second / r[bottom].pages_per_second for r in rounds]
        cpu = [r[top].cpu_ms_per_page / r[bottom].cpu_ms_per_page for r in rounds]
        result[label] = {
            "meaning": meaning,
            "pages_per_second_ratio": speed,
            "median": statistics.median(speed),
            "cpu_per_page_ratio": cpu,
            "cpu_median": statistics.median(cpu),
            "load_average": [[r[name].load_start for name in (top, bottom)] for r in rounds],
        }
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=1200)
    parser.add_argument("--hosts", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=1, help="rounds of the five runs")
    parser.add_argument("--obey-robots", action="store_true", help="serve and obey robots.txt")
    parser.add_argument(
        "--dedup", action="store_true", help="dedup and yield pruning on in every run"
    )
    parser.add_argument(
        "--appendfsync",
        choices=("everysec", "always"),
        default="everysec",
        help="Redis's AOF fsync policy (always: no answered write lost when Redis is killed)",
    )
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    cores = sorted(os.sched_getaffinity(0))
    if len(cores) < 2:
        sys.exit("the pinned runs need 2 CPUs")
    if args.repeat < 1:
        sys.exit("--repeat must be 1 or more")
    site = Site(gold_pages(), args.pages, args.hosts)
    rounds: list[dict[str, Run]] = []
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        (workdir / "redis").mkdir()
        redis = Redis(workdir / "redis", args.appendfsync)
        print(f"redis-server with appendfsync {args.appendfsync}", flush=True)
        try:
            for number in range(1, args.repeat + 1):
                rounds.append(
                    run_round(site, redis, workdir, cores, args.obey_robots, number, args.dedup)
                )
        finally:
            redis.stop()
            site.stop()
    print_runs(rounds)
    ratios = ratios_of(rounds)
    print()
    print(f"{'ratio (pages/s)':42} {'median':>6}  per round; cpu/page median; what it answers")
    for label, found in ratios.items():
        per_round = " ".join(f"{v:.2f}" for v in found["pages_per_second_ratio"])
        print(
            f"{label:42} {found['median']:>5.2f}x  [{per_round}]; cpu/page"
            f" {found['cpu_median']:.2f}x; {found['meaning']}"
        )
    print(
        f"machine: {os.cpu_count()} CPUs; load average now {os.getloadavg()[0]:.2f}"
        " (each run's start and end above: above the run's own cores = shared machine)"
    )
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "rounds": [[asdict(run) for run in runs.values()] for runs in rounds],
                    "ratios": ratios,
                    "obey_robots": args.obey_robots,
                    "dedup": args.dedup,
                    "appendfsync": args.appendfsync,
                },
                indent=2,
            ),
            encoding="utf-8",
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
