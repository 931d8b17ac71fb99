"""Campaign state: what its upkeep costs per page, and that the frontier stays on disk.

Two measurements, each with its baseline measured in the same run:

``upkeep`` (in this process): the campaign-state work of one crawled page
through the crawl's own `pipelines.scheduler.CampaignScheduler` on a
`corpus_crawler.state.CampaignStore`, with the crawl's spider and Scrapy's
default fingerprinter: the page's request leased (in batches) and rebuilt from
its JSON, each of its `links` links scheduled as the spider yields it (held by
the scheduler, or refused at once when the recent-link set knows it), the page
finished as `pipelines.campaign.CampaignExtension.finish` does it (the held
links first, in one store call: request fingerprint, seen check, page budget,
serialisation, frontier row), and a group commit every 32 pages (0.5 s of a
~60 pages/s crawl).
Only that work is timed, as CPU time of the thread (stable on a shared
machine) and as wall-clock time. Baseline, in the same run: the CPU time of
building the same link requests (the spider's part, not timed as upkeep).
Each row is run `--repeat` times and the least CPU time is kept (other
processes only ever add time). Printed per page: microseconds and the share of
a 1 ms budget, for pages with
0, 10 and 100 links of which 10 or 100 are new; the links seen before are
either the same menu on every page or links to pages anywhere in the crawl.
A last row (`--seen-keys`, 10^6 by default, 0: none) runs the 100-new-links
page on a campaign whose seen set already holds that many keys, as a campaign
of that size resumed: the keys are written into the fresh campaign database with
SQLite directly before the store opens (set-up, not timed); what is timed is
the same real path as in the other rows.

``frontier`` (real crawls, each in its own process): a generated site on
127.0.0.1 where every page links to `--links` new pages; the crawl fetches
`--pages` pages (CLOSESPIDER_PAGECOUNT) breadth first and so discovers
pages x links URLs, all queued in the frontier. Baseline: the same crawl with
10 links a page. Printed: peak RSS of the crawl process (sampled from /proc),
URLs in the frontier at the end, and the RSS ratio; a frontier held in RAM would
grow by ~1 KB per URL (a Scrapy Request), here it should not grow at all.

    python benchmarks/campaign_state.py [--pages 1000] [--links 1000] [--only upkeep|frontier]
                                        [--upkeep-pages 2000] [--repeat 3] [--seen-keys 1000000]

The machine may be shared: read the ratios, not the absolute times.
"""

from __future__ import annotations

import argparse
import os
import random
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scrapy import Request  # noqa: E402
from scrapy.utils.test import get_crawler  # noqa: E402

from corpus_crawler.profile import Profile  # noqa: E402
from corpus_crawler.state import BudgetLimits, CampaignStore  # noqa: E402
from corpus_crawler.testserver import Reply, RequestRecord, SiteServer  # noqa: E402
from pipelines.bridge import profile_settings  # noqa: E402
from pipelines.campaign import CampaignSettings  # noqa: E402
from pipelines.scheduler import CampaignScheduler  # noqa: E402
from spiders.corpus import CorpusSpider  # noqa: E402

PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


# -- upkeep ---------------------------------------------------------------------------------

#: Pages a run commits together: the crawl commits every 0.5 s and fetches ~60 pages/s
#: on this machine (benchmarks/crawl_speed.py), so ~32 pages share one commit.
PAGES_PER_COMMIT = 32


class _Writer:
    """The part of the writer thread the scheduler calls (a redirect or retry finishing
    its parent request); the benchmark schedules neither, so this is never timed."""

    def __init__(self, store: CampaignStore) -> None:
        self.store = store

    def finish(self, row: int, url: str, outcome: str) -> None:
        self.store.finish(row, url, outcome)


@dataclass
class _Campaign:
    """What the scheduler asks of `pipelines.campaign.CampaignExtension`; `finish` does
    what the extension's does (the scheduler's held links first), with the writer
    thread's part done here so that it is timed."""

    store: CampaignStore
    settings: CampaignSettings
    writer: _Writer
    hooks: list[Callable[[], None]] = field(default_factory=list)

    def before_finish(self, hook: Callable[[], None]) -> None:
        self.hooks.append(hook)

    def finish(self, row: int, url: str, outcome: str) -> None:
        for hook in self.hooks:
            hook()
        self.writer.finish(row, url, outcome)


def _scheduler(directory: Path) -> tuple[CampaignScheduler, CorpusSpider, _Campaign]:
    """The crawl's scheduler on a campaign store, with the crawl's spider (its callbacks
    are what a request names) and Scrapy's default request fingerprinter."""
    crawler = get_crawler(CorpusSpider, profile_settings(Profile()))
    spider = CorpusSpider.from_crawler(crawler)
    store = CampaignStore(directory)
    settings = CampaignSettings(
        directory=directory,
        limits=BudgetLimits(max_pages=None, max_pages_per_domain=10**9),
        lease_batch=32,
    )
    campaign = _Campaign(store, settings, _Writer(store))
    scheduler = CampaignScheduler(crawler, campaign)  # type: ignore[arg-type]
    scheduler.open(spider)
    return scheduler, spider, campaign


def _link(spider: CorpusSpider, url: str, referer: str, depth: int) -> Request:
    # what reaches the scheduler for a link: the spider's request (CorpusSpider._page_request)
    # after Scrapy's spider middlewares (DepthMiddleware, RefererMiddleware)
    return Request(
        url,
        callback=spider.parse,
        errback=spider._download_failed,
        headers={"Referer": referer},
        meta={"depth": depth, "corpus_budget": True, "verbatim_url": True},
        priority=-depth,
    )


@dataclass(frozen=True)
class Upkeep:
    """Microseconds per page of one upkeep measurement."""

    #: CPU time of the thread doing the state work (what the page costs on a core of
    #: its own; other processes on a shared machine barely change it).
    cpu: float
    #: Wall-clock time of the same work (inflated when the machine is busy).
    wall: float
    #: Baseline, same run: CPU time of building the page's link requests (the
    #: spider's part, which any scheduler receives).
    building: float


def _fill_seen_set(directory: Path, keys: int) -> None:
    """A campaign database whose seen set holds `keys` random 64-bit keys."""
    CampaignStore(directory).close("finished")
    generator = random.Random(8)
    with sqlite3.connect(directory / "campaign.sqlite") as db:
        for start in range(0, keys, 100_000):
            count = min(100_000, keys - start)
            db.executemany(
                "INSERT OR IGNORE INTO seen_keys (key) VALUES (?)",
                ((generator.getrandbits(64) - 2**63,) for _ in range(count)),
            )
        db.commit()
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def upkeep(
    pages: int, links: int, new: int, *, navigation: bool = True, seen_keys: int = 0
) -> Upkeep:
    """Campaign-state work per crawled page, through the crawl's own `CampaignScheduler`:
    the page's request taken from the frontier (leased in batches, rebuilt from its
    JSON), its `links` links scheduled, the page finished (its held links flushed
    first: fingerprint, seen check, page budget, serialisation, frontier row), and a
    group commit every `PAGES_PER_COMMIT` pages.

    `new` of a page's links were never seen; the others are links seen before:
    `navigation` True, the same menu on every page (a site's navigation); False,
    links to pages anywhere in the crawl so far (no recent-URL cache helps).
    `seen_keys`: keys in the seen set before the run starts (`_fill_seen_set`)."""
    with tempfile.TemporaryDirectory() as tmp:
        if seen_keys:
            _fill_seen_set(Path(tmp), seen_keys)
        scheduler, spider, campaign = _scheduler(Path(tmp))
        store = campaign.store
        seeds = [f"http://h0.example/seed/{i}" for i in range(pages)]
        menu = [f"http://h0.example/menu/{k}" for k in range(links - new)]
        for url in seeds + menu:
            scheduler.enqueue_request(_link(spider, url, "http://h0.example/", 0))
        scheduler.flush()
        store.commit({})
        discovered = 0
        cpu = wall = building = 0.0
        done = 0
        while done < pages:
            cpu_started, wall_started = time.thread_time(), time.perf_counter()
            request = scheduler.next_request()
            cpu += time.thread_time() - cpu_started
            wall += time.perf_counter() - wall_started
            assert request is not None
            row = request.meta["corpus_row"]
            urls = []
            for link in range(links):
                if link < new:
                    discovered += 1
                    urls.append(f"http://h{discovered % 50}.example/p/{discovered}.html")
                elif navigation:
                    urls.append(menu[link - new])
                else:
                    # a page discovered earlier, spread over the whole crawl so far
                    old = (discovered * 7919 + link) % discovered + 1
                    urls.append(f"http://h{old % 50}.example/p/{old}.html")
            cpu_started = time.thread_time()
            requests = [_link(spider, url, request.url, 1) for url in urls]
            building += time.thread_time() - cpu_started
            cpu_started, wall_started = time.thread_time(), time.perf_counter()
            for link_request in requests:
                scheduler.enqueue_request(link_request)
            # the page's item: its held links go to the store, then it is finished
            campaign.finish(row, request.url, "kept")
            done += 1
            if done % PAGES_PER_COMMIT == 0:
                store.count({"requests/kept": PAGES_PER_COMMIT})
                store.commit({"x.warc.gz": done})
            cpu += time.thread_time() - cpu_started
            wall += time.perf_counter() - wall_started
        store.close("finished")
    return Upkeep(cpu / pages * 1e6, wall / pages * 1e6, building / pages * 1e6)


# -- frontier ---------------------------------------------------------------------------------


def generated_site(links: int) -> dict[str, object]:
    def route(request: RequestRecord) -> Reply:
        number = int(request.query.partition("=")[2] or 0)
        first = number * links + 1
        anchors = "".join(f'<a href="/g?n={k}">{k}</a> ' for k in range(first, first + links))
        body = (
            f"<!DOCTYPE html><html><head><title>Page {number}</title></head><body>"
            f"<h1>Page {number}</h1><p>{anchors}</p></body></html>"
        ).encode()
        return Reply(headers=(("Content-Type", "text/html"),), body=body)

    return {"/g": route}


PROFILE = """\
name: frontier-{links}
seeds:
  urls: ["{base}/g?n=0"]
politeness: {{concurrent_requests: 16, concurrent_requests_per_domain: 16,
              download_delay: 0, autothrottle: false, obey_robots_txt: false}}
network:
  allowed_networks: [127.0.0.1/32]
extraction:
  enabled: false
  workers: 1
output:
  progress_interval: 0
  warc: {{enabled: false}}
  prevertical: {{enabled: false}}
"""


def _rss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return int(handle.read().rsplit(b")", 1)[1].split()[21]) * PAGE_SIZE
    except OSError:
        return 0


def frontier(pages: int, links: int, workdir: Path) -> tuple[float, int, float]:
    """(peak RSS MB of the crawl process, URLs in the frontier at the end, seconds)."""
    with SiteServer(routes=generated_site(links)) as server:  # type: ignore[arg-type]
        profile = workdir / f"frontier-{links}.yaml"
        profile.write_text(PROFILE.format(base=server.base_url, links=links), encoding="utf-8")
        out = workdir / f"out-{links}"
        command = [
            sys.executable, "-m", "corpus_crawler.cli", "crawl", str(profile), "-o", str(out),
            "-s", f"CLOSESPIDER_PAGECOUNT={pages}",
        ]  # fmt: skip
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        started = time.monotonic()
        process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        peak = 0
        stop = threading.Event()

        def sample() -> None:
            nonlocal peak
            while not stop.is_set():
                peak = max(peak, _rss(process.pid))
                stop.wait(0.05)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        _, stderr = process.communicate()
        stop.set()
        sampler.join()
        seconds = time.monotonic() - started
        if process.returncode != 0:
            raise SystemExit(f"crawl failed ({process.returncode}):\n{stderr.decode()[-3000:]}")
    with sqlite3.connect(out / "campaign.sqlite") as db:
        queued = int(db.execute("SELECT count(*) FROM frontier").fetchone()[0])
    return peak / 1e6, queued, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=1000, help="pages fetched per crawl")
    parser.add_argument("--links", type=int, default=1000, help="new links on every page")
    parser.add_argument("--only", choices=("upkeep", "frontier"))
    parser.add_argument(
        "--upkeep-pages", type=int, default=2000, help="pages of each upkeep measurement"
    )
    parser.add_argument(
        "--repeat", type=int, default=3, help="upkeep runs per row (the least CPU time counts)"
    )
    parser.add_argument(
        "--seen-keys",
        type=int,
        default=1_000_000,
        help="keys in the seen set before the last upkeep row (0: no such row)",
    )
    args = parser.parse_args()
    if args.only in (None, "upkeep"):
        print(
            "upkeep per page: CPU us of the state work (share of 1 ms) | wall us |"
            " CPU us building the page's link requests (spider's part) | ratio"
        )
        rows = [
            (0, 0, True, 0),
            (10, 10, True, 0),
            (100, 10, True, 0),
            (100, 10, False, 0),
            (100, 100, True, 0),
        ]
        if args.seen_keys:
            rows.append((100, 100, True, args.seen_keys))
        for links, new, navigation, seen_keys in rows:
            # the least of a few runs: other processes on a shared machine only add time
            runs = [
                upkeep(args.upkeep_pages, links, new, navigation=navigation, seen_keys=seen_keys)
                for _ in range(args.repeat)
            ]
            cost = min(runs, key=lambda run: run.cpu)
            seen = "" if new == links else (", seen: menu" if navigation else ", seen: anywhere")
            if seen_keys:
                seen = f", {seen_keys:.0e} seen"
            ratio = f"{cost.cpu / cost.building:5.2f}x" if cost.building else "    -"
            print(
                f"  {links:3d} links, {new:3d} new{seen:16s}: {cost.cpu:7.1f} us"
                f" ({cost.cpu / 1000:6.1%}) | {cost.wall:7.1f} us | {cost.building:7.1f} us"
                f" | {ratio}"
            )
    if args.only in (None, "frontier"):
        with tempfile.TemporaryDirectory() as tmp:
            base_rss, base_queued, base_seconds = frontier(args.pages, 10, Path(tmp))
            print(
                f"frontier, {args.pages} pages x 10 links: peak RSS {base_rss:.0f} MB,"
                f" {base_queued:,} URLs queued on disk ({base_seconds:.0f} s)"
            )
            rss, queued, seconds = frontier(args.pages, args.links, Path(tmp))
            print(
                f"frontier, {args.pages} pages x {args.links} links: peak RSS {rss:.0f} MB,"
                f" {queued:,} URLs queued on disk ({seconds:.0f} s)"
            )
            print(f"peak RSS ratio (many links / 10 links): {rss / base_rss:.2f}")


if __name__ == "__main__":
    main()
