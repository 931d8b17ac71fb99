"""Campaign state: what its upkeep costs per page, and that the frontier stays on disk.

Two measurements, each with its baseline measured in the same run:

``upkeep`` (in this process): the state operations of one crawled page through
`corpus_crawler.state.CampaignStore` as the crawl makes them -- the request
leased (in batches), finished, its `links` new links queued (seen mark, budget,
frontier row, with real request JSON), and a group commit every 0.5 s of work --
timed per page, against the bare cost of building the same request JSON
(what any disk frontier must do). Printed: microseconds per page and the
share of a 1 ms budget.

``frontier`` (real crawls, each in its own process): a generated site on
127.0.0.1 where every page links to `--links` new pages; the crawl fetches
`--pages` pages (CLOSESPIDER_PAGECOUNT) breadth first and so discovers
pages x links URLs, all queued in the frontier. Baseline: the same crawl with
10 links a page. Printed: peak RSS of the crawl process (sampled from /proc),
URLs in the frontier at the end, and the RSS ratio; a frontier held in RAM would
grow by ~1 KB per URL (a Scrapy Request), here it should not grow at all.

    python benchmarks/campaign_state.py [--pages 1000] [--links 1000] [--only upkeep|frontier]

The machine may be shared: read the ratios, not the absolute times.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from corpus_crawler.state import BudgetLimits, CampaignStore  # noqa: E402
from corpus_crawler.testserver import Reply, RequestRecord, SiteServer  # noqa: E402

PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


# -- upkeep -----------------------------------------------------------------------------------


def _request_json(url: str, depth: int) -> str:
    # the shape pipelines.scheduler.request_to_json writes for a link of the spider
    return json.dumps(
        {
            "url": url,
            "callback": "parse",
            "errback": "_download_failed",
            "headers": {"Referer": ["http://example.org/"]},
            "method": "GET",
            "body": "",
            "cookies": {},
            "meta": {"depth": depth, "verbatim_url": True},
            "encoding": "utf-8",
            "priority": -depth,
            "dont_filter": False,
            "flags": [],
            "cb_kwargs": {},
        },
        separators=(",", ":"),
    )


def upkeep(pages: int, links: int, new: int) -> tuple[float, float]:
    """(microseconds of state upkeep per page, microseconds of the JSON baseline per page).

    Each page has `links` links of which `new` were not seen before (a site's
    navigation repeats on every page: most links of a page are duplicates)."""
    with tempfile.TemporaryDirectory() as tmp:
        store = CampaignStore(Path(tmp))
        limits = BudgetLimits(max_pages=None, max_pages_per_domain=10**9)
        # the pages to crawl, queued beforehand (their own queuing is a link of another page)
        for i in range(pages):
            store.enqueue(_request_json(f"http://h0.example/{i}", 0), 0, fingerprint=b"s%d" % i)
        store.commit({})
        counter = 0
        started = time.perf_counter()
        last_commit = started
        done = 0
        while done < pages:
            leased = store.lease(32)
            for row, _ in leased[: pages - done]:
                for link in range(links):
                    if link < new:
                        counter += 1
                    url = f"http://h{counter % 50}.example/p/{counter}.html"
                    store.enqueue(
                        lambda url=url: _request_json(url, 1),  # type: ignore[misc]
                        -1,
                        fingerprint=counter.to_bytes(20, "big"),
                        budget=f"h{counter % 50}.example",
                        limits=limits,
                    )
                store.finish(row, "http://h0.example/x", "kept")
                done += 1
                now = time.perf_counter()
                if now - last_commit >= 0.5:
                    store.count({"requests/kept": 1})
                    store.commit({"x.warc.gz": done})
                    last_commit = now
        store.commit({"x.warc.gz": done})
        elapsed = time.perf_counter() - started
        store.close("finished")
        started = time.perf_counter()
        for i in range(pages * new):
            _request_json(f"http://h{i % 50}.example/p/{i}.html", 1)
        baseline = time.perf_counter() - started
    return elapsed / pages * 1e6, baseline / pages * 1e6


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
    args = parser.parse_args()
    if args.only in (None, "upkeep"):
        for links, new in ((0, 0), (10, 10), (100, 10), (100, 100)):
            cost, baseline = upkeep(2000, links, new)
            print(
                f"upkeep, {links:3d} links a page, {new:3d} of them new: {cost:7.1f} us/page"
                f" ({cost / 1000:.1%} of 1 ms; building the request JSON alone:"
                f" {baseline:6.1f} us/page)"
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
