"""A crawl whose pages finish without an item loses no link to `kill -9`.

With the extraction off (`CORPUS_EXTRACT_ENABLED=False`, a plain link-following
crawl that archives every exchange) and for sitemaps in any crawl, the spider
ends a callback with its follow-up requests and then a `RequestDone`, which
`pipelines.campaign.RequestDoneMiddleware` turns into the request's finish.
Scrapy (2.13+, asyncio reactor) hands a callback's output to its workers through
a queue that it fills ahead of them, so a finish taken while the output was
iterated could be committed before the page's links reached the scheduler; a
kill then lost them for good (the page was done, its children never queued).

Here a real crawl of a loopback tree of pages, extraction off, is killed with
SIGKILL at several points and resumed until the campaign ends; every page must
be in the WARC files exactly once with its 200.
"""

from __future__ import annotations

import collections
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from warcio.archiveiterator import ArchiveIterator

from corpus_crawler.testserver import Reply, SiteServer

ROOT = Path(__file__).resolve().parent.parent
#: A guard against a hung crawl, not a speed assertion.
TIMEOUT = 180
PAGES = 700
FANOUT = 6

PROFILE = """\
name: links-only
seeds:
  urls: ["{base}/p0.html"]
  sitemaps_from_robots: false
politeness:
  obey_robots_txt: false
  concurrent_requests: 8
  concurrent_requests_per_domain: 8
  download_delay: 0
  autothrottle: false
network:
  allowed_networks: [127.0.0.1/32]
limits:
  retry_times: 0
dedup:
  enabled: false
output:
  progress_interval: 0
  warc:
    prefix: links
"""


def tree_pages() -> dict[str, Reply]:
    pages: dict[str, Reply] = {}
    for i in range(PAGES):
        children = [c for c in range(FANOUT * i + 1, FANOUT * i + FANOUT + 1) if c < PAGES]
        links = "".join(f"<li><a href='/p{c}.html'>page {c}</a></li>" for c in children)
        body = f"<html><body><h1>Page {i}</h1><ul>{links}</ul></body></html>"
        pages[f"/p{i}.html"] = Reply(
            headers=(("Content-Type", "text/html; charset=utf-8"),),
            body=body.encode(),
            delay=0.005,
        )
    return pages


def responses_by_path(out: Path) -> collections.Counter[tuple[str, int]]:
    found: collections.Counter[tuple[str, int]] = collections.Counter()
    for path in sorted(out.glob("*.warc.gz")):
        with open(path, "rb") as handle:
            for record in ArchiveIterator(handle, check_digests=True):
                if record.rec_type != "response":
                    continue
                uri = record.rec_headers.get_header("WARC-Target-URI") or ""
                path = "/" + uri.split("://", 1)[1].split("/", 1)[1]
                found[path, int(record.http_headers.get_statuscode())] += 1
    return found


def test_kill_9_of_a_links_only_crawl_loses_no_link(tmp_path: Path) -> None:
    pages = tree_pages()
    log = tmp_path / "crawl.log"
    with SiteServer(pages=pages) as server:
        profile = tmp_path / "links.yaml"
        profile.write_text(PROFILE.format(base=server.base_url), encoding="utf-8")
        out = tmp_path / "out"
        command = [
            sys.executable, "-m", "corpus_crawler.cli", "crawl", str(profile), "-o", str(out),
            "-s", "CORPUS_EXTRACT_ENABLED=False",
            # a commit after (nearly) every page: a finish committed ahead of its page's
            # links is then the last commit before most kills
            "-s", "CORPUS_CAMPAIGN_COMMIT_INTERVAL=0.001",
        ]  # fmt: skip
        for fraction in (0.2, 0.35, 0.5, 0.65, 0.8):
            with open(log, "ab") as handle:
                process = subprocess.Popen(command, cwd=ROOT, stdout=handle, stderr=handle)
            deadline = time.monotonic() + TIMEOUT
            while len(server.requests) < int(PAGES * fraction):
                assert process.poll() is None, log.read_text(errors="replace")[-3000:]
                assert time.monotonic() < deadline, "the crawl made no progress"
                time.sleep(0.002)
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=TIMEOUT)
        result = subprocess.run(
            command, cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT, check=False
        )
        assert result.returncode == 0, result.stdout + result.stderr[-4000:]
    found = responses_by_path(out)
    twice = {key: n for key, n in found.items() if n != 1}
    assert not twice, f"archived more than once: {twice}"
    archived = {path for path, status in found if status == 200}
    never = sorted(set(pages) - archived, key=lambda p: int(p[2:-5]))
    assert not never, f"never fetched ({len(never)}): {never[:40]}"


def test_a_page_is_finished_only_once_its_links_are_scheduled(tmp_path: Path) -> None:
    # The ordering itself, observed in a real crawl (no kill: every page, every time):
    # tests/site/finish_probe.py looks at the scheduler when the campaign finishes each
    # page. Links-only, as above; the sitemap path ends its callbacks the same way.
    pages = tree_pages()
    probe = tmp_path / "probe.json"
    with SiteServer(pages=pages) as server:
        profile = tmp_path / "links.yaml"
        profile.write_text(PROFILE.format(base=server.base_url), encoding="utf-8")
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            [str(ROOT / "tests" / "site"), str(ROOT), env.get("PYTHONPATH", "")]
        )
        command = [
            sys.executable, "-m", "corpus_crawler.cli", "crawl", str(profile),
            "-o", str(tmp_path / "out"),
            "-s", "CORPUS_EXTRACT_ENABLED=False",
            "-s", 'ADDONS={"finish_probe.FinishProbeAddon": 0}',
            "-s", f"FINISH_PROBE_OUT={probe}",
            "-s", f"FINISH_PROBE_FANOUT={FANOUT}",
            "-s", f"FINISH_PROBE_PAGES={PAGES}",
        ]  # fmt: skip
        result = subprocess.run(
            command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=TIMEOUT,
            check=False,
        )  # fmt: skip
        assert result.returncode == 0, result.stdout + result.stderr[-4000:]
    seen = json.loads(probe.read_text(encoding="utf-8"))
    assert seen["finished"] == PAGES, seen["finished"]
    assert not seen["early"], f"{len(seen['early'])} pages finished before their links: " + str(
        seen["early"][:5]
    )
