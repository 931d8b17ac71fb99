"""A scope narrowed between runs holds for the requests an earlier run queued from the
very first lease, even when the spider's start() is held back.

The spider built its scope when Scrapy first iterated start(). A spider middleware
whose `process_start` awaits something first (tests/site/slow_start.py, as one that
fetches a token would) let the engine lease the queued frontier in the meantime, and
`ScopeGuardMiddleware` checked those requests against the empty scope: a resumed
crawl fetched and archived every queued URL the new profile denies. The scope is now
built at `spider_opened`, before the engine leases anything.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from warcio.archiveiterator import ArchiveIterator

from corpus_crawler.testserver import Reply, SiteServer

ROOT = Path(__file__).resolve().parent.parent
#: A guard against a hung crawl, not a speed assertion.
TIMEOUT = 120
DENIED, ALLOWED = 20, 10

PROFILE = """\
name: narrowed-frontier
seeds:
  urls: ["{base}/"]
politeness:
  obey_robots_txt: false
  download_delay: 0
  autothrottle: false
network:
  allowed_networks: [127.0.0.1/32]
extraction:
  workers: 1
output:
  progress_interval: 0
  report: false
"""


def _html(body: str) -> Reply:
    return Reply(
        headers=(("Content-Type", "text/html; charset=utf-8"),),
        body=f"<html><body>{body}</body></html>".encode(),
    )


def _site() -> dict[str, Reply]:
    links = [f"/deny/{i}.html" for i in range(DENIED)] + [f"/ok/{i}.html" for i in range(ALLOWED)]
    pages = {"/": _html("<p>The index.</p>" + "".join(f"<a href='{u}'>{u}</a> " for u in links))}
    for url in links:
        pages[url] = _html(f"<p>The page {url}.</p>")
    return pages


def _archived(out: Path) -> set[str]:
    found = set()
    for path in out.glob("*.warc.gz"):
        with open(path, "rb") as handle:
            for record in ArchiveIterator(handle):
                if record.rec_type == "response":
                    uri = record.rec_headers.get_header("WARC-Target-URI")
                    found.add("/" + uri.split("://", 1)[1].split("/", 1)[1])
    return found


def test_a_narrowed_scope_holds_for_requests_leased_before_start_runs(tmp_path: Path) -> None:
    profile = tmp_path / "p.yaml"
    out = tmp_path / "out"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT / "tests" / "site"), str(ROOT), env.get("PYTHONPATH", "")]
    )
    command = [sys.executable, "-m", "corpus_crawler.cli", "crawl", str(profile), "-o", str(out)]
    with SiteServer(pages=_site()) as site:
        profile.write_text(PROFILE.format(base=site.base_url), encoding="utf-8")
        # the index only: every link it holds stays queued in the campaign
        first = subprocess.run(
            [*command, "-s", "CLOSESPIDER_PAGECOUNT=1", "-s", "CONCURRENT_REQUESTS=1"],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=TIMEOUT, check=False,
        )  # fmt: skip
        assert first.returncode == 0, first.stderr[-3000:]
        assert _archived(out) == {"/"}
        profile.write_text(
            PROFILE.format(base=site.base_url) + 'scope:\n  deny_patterns: ["/deny/"]\n',
            encoding="utf-8",
        )
        resumed = subprocess.run(
            [*command, "-s", 'SPIDER_MIDDLEWARES={"slow_start.SlowStartMiddleware": 5}',
             "-s", "SLOW_START_DELAY=1"],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=TIMEOUT, check=False,
        )  # fmt: skip
        assert resumed.returncode == 0, resumed.stderr[-3000:]
        asked = {request.path for request in site.requests}
    archived = _archived(out)
    denied = sorted(path for path in archived | asked if path.startswith("/deny/"))
    assert not denied, f"fetched although the scope denies them: {denied}"
    assert {f"/ok/{i}.html" for i in range(ALLOWED)} <= archived  # the rest went on
    summaries = [json.loads(p.read_text(encoding="utf-8")) for p in out.glob("*-summary.json")]
    stats = max(summaries, key=lambda s: str(s["finished"]))["stats"]
    assert stats["corpus/frontier/refused/denied"] == DENIED, stats
