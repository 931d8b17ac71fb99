"""Sites take turns in the campaign frontier's leases: a crawl of many sites keeps them all
busy, instead of handing the downloader a batch from the one site whose links came first
(where Scrapy's per-site politeness would leave the other sites idle)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from corpus_crawler.state import Admission, CampaignStore
from corpus_crawler.testserver import Reply, RequestRecord, SiteServer

ROOT = Path(__file__).resolve().parent.parent
#: A guard against a hung crawl, not a speed assertion.
TIMEOUT = 120


def _queue(store: CampaignStore, name: str, priority: int, site: str) -> None:
    admission = store.enqueue(name, priority, fingerprint=name.encode(), site=site)
    assert admission is Admission.QUEUED


def test_sites_take_turns_within_a_priority_and_keep_fifo_within_a_site(tmp_path: Path) -> None:
    store = CampaignStore(tmp_path)
    for site in ("a.example", "b.example", "c.example"):
        for number in range(4):
            _queue(store, f"{site[0]}{number}", -1, site)
    _queue(store, "seed", 0, "c.example")  # a higher priority goes first, whatever its site
    assert [text for _, text in store.lease(5)] == ["seed", "a0", "b0", "c0", "a1"]
    # the next lease goes on where this one stopped
    assert [text for _, text in store.lease(4)] == ["b1", "c1", "a2", "b2"]
    _queue(store, "a-late", -1, "a.example")
    assert [text for _, text in store.lease(10)] == ["c2", "a3", "b3", "c3", "a-late"]
    assert store.lease(10) == []
    store.close("finished")


def test_an_older_frontier_gains_its_site_column_and_keeps_its_order(tmp_path: Path) -> None:
    with sqlite3.connect(tmp_path / "campaign.sqlite") as db:
        db.execute(
            "CREATE TABLE frontier (id INTEGER PRIMARY KEY, priority INTEGER NOT NULL,"
            " state INTEGER NOT NULL DEFAULT 0, request TEXT NOT NULL)"
        )
        db.execute("CREATE INDEX frontier_queue ON frontier (priority DESC, id) WHERE state = 0")
        db.executemany(
            "INSERT INTO frontier (priority, request) VALUES (?, ?)",
            [(-1, "old1"), (0, "old0"), (-1, "old2")],
        )
    store = CampaignStore(tmp_path)
    _queue(store, "new", -1, "b.example")
    assert [text for _, text in store.lease(10)] == ["old0", "old1", "new", "old2"]
    store.close("finished")


PROFILE = """\
name: lease-order
seeds:
  files: [{seeds}]
politeness:
  concurrent_requests: 3
  concurrent_requests_per_domain: 1
  download_delay: 0
  autothrottle: false
  obey_robots_txt: false
network:
  allowed_networks: [127.0.0.0/8]
scope:
  follow_links: false
extraction:
  enabled: false
  workers: 1
output:
  progress_interval: 0
  report: false  # the HTML report has tests of its own; nothing here reads it
  warc: {{enabled: false}}
  prevertical: {{enabled: false}}
"""


def test_a_crawl_of_three_sites_fetches_from_all_of_them_from_the_start(tmp_path: Path) -> None:
    arrivals: list[str] = []
    lock = threading.Lock()

    def route_for(host: str) -> Callable[[RequestRecord], Reply]:
        def route(request: RequestRecord) -> Reply:
            with lock:
                arrivals.append(host)
            body = f"<html><body><p>{host} {request.path}</p></body></html>".encode()
            return Reply(headers=(("Content-Type", "text/html"),), body=body, delay=0.05)

        return route

    hosts = ("127.0.0.1", "127.0.0.2", "127.0.0.3")
    servers = [SiteServer(host=host, fallback=route_for(host)) for host in hosts]
    for server in servers:
        server.start()
    try:
        # a seed list sorted by site, as seed lists often are
        seeds = tmp_path / "seeds.txt"
        seeds.write_text(
            "".join(f"{server.base_url}/p{n}.html\n" for server in servers for n in range(12)),
            encoding="utf-8",
        )
        profile = tmp_path / "lease-order.yaml"
        profile.write_text(PROFILE.format(seeds=seeds), encoding="utf-8")
        command = [
            sys.executable, "-m", "corpus_crawler.cli", "crawl", str(profile),
            "-o", str(tmp_path / "out"),
        ]  # fmt: skip
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT)
        assert done.returncode == 0, done.stderr[-3000:]
    finally:
        for server in servers:
            server.stop()
    assert len(arrivals) == 36
    # the first requests (queued by the start as the seeds come) may all be the first
    # site's; from then on the sites take turns: FIFO would send the first site's twelve
    # pages before any of the second's
    early = arrivals[:9]
    assert all(early.count(host) >= 2 for host in hosts), arrivals
