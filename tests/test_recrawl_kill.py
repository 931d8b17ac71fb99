"""A recrawl pass survives `kill -9`: run the same command again, and the pass is whole.

A loopback site of ~130 real pages sends ETag and Last-Modified and answers 304 to a
matching conditional GET. Pass 1 crawls it. Between the passes some pages change (some
of them gain links to new pages) and some are removed. The recrawl pass
(`crawl --recrawl`) is killed with SIGKILL twice, at points read from the server's
request log, and the same command is run again until the pass ends. Then every record
the pass wrote is counted: each changed and new page once as a response and once as a
document, each unchanged page once as a revisit, each removed page once as its 404;
every WARC passes `warcio check`; and the pass summary's new/changed/unchanged/gone
counts (over all the runs of the pass) equal what its files hold.
"""

from __future__ import annotations

import collections
import hashlib
import json
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from warcio.archiveiterator import ArchiveIterator

from corpus_crawler.testserver import Reply, RequestRecord, SiteServer, add_links, isolate_links
from corpus_crawler.vertical import read_vertical
from corpus_crawler.warc import RevisitProfile

ROOT = Path(__file__).resolve().parent.parent
#: A guard against a hung crawl, not a speed assertion.
TIMEOUT = 180
PAGES = 120
#: Seconds each answer waits in the runs to be killed (with 2 connections, a pass takes
#: some seconds: kills land in it); the others are answered at once.
DELAY = 0.04
LAST_MODIFIED = "Mon, 02 Nov 2026 10:00:00 GMT"
CHANGED = frozenset(range(3, PAGES, 7))
#: Removed between the passes (leaves, none of them changed).
GONE = frozenset(i for i in range(100, PAGES, 9) if i not in CHANGED)
#: New pages, each linked from one changed page.
NEW = tuple(f"/new/n{k}.html" for k in range(8))

PROFILE = """\
name: recrawl-kill
seeds:
  urls: ["{base}/tree/p0.html"]
politeness:
  concurrent_requests: 2
  concurrent_requests_per_domain: 2
  download_delay: 0
  autothrottle: false
network:
  allowed_networks: [127.0.0.1/32]
extraction:
  language: auto
  min_words: 30
  workers: 1
# the pages share their gold text: dedup would keep one of each
dedup:
  enabled: false
output:
  progress_interval: 0
  warc:
    prefix: rk
  prevertical:
    enabled: true
"""


class Site:
    """The pages by path (changed between the passes) and the route that serves them."""

    def __init__(self, gold: list[bytes]) -> None:
        self.gold = gold
        self.delay = 0.0
        self.pages: dict[str, bytes] = {}
        for number in range(PAGES):
            self.set_tree_page(number, "as first published")

    def set_tree_page(self, number: int, version: str, extra: bytes = b"") -> None:
        children = [c for c in range(10 * number + 1, 10 * number + 11) if c < PAGES]
        nav = "".join(f"<a href='/tree/p{c}.html'>page {c}</a> " for c in children)
        own = f"<p>Tree page number {number} of the recrawl kill test, {version}.</p>"
        body = (own + nav).encode() + extra
        self.pages[f"/tree/p{number}.html"] = add_links(self.gold[number % len(self.gold)], body)

    def route(self, request: RequestRecord) -> Reply:
        body = self.pages.get(request.path)
        if body is None:
            return Reply(status=404, headers=(("Content-Type", "text/plain"),), body=b"gone\n")
        etag = '"' + hashlib.sha1(body).hexdigest() + '"'
        headers = (("ETag", etag), ("Last-Modified", LAST_MODIFIED))
        if request.headers.get("if-none-match") == etag:
            return Reply(status=304, headers=headers, delay=self.delay)
        return Reply(
            headers=(("Content-Type", "text/html; charset=utf-8"), *headers),
            body=body,
            delay=self.delay,
        )


def _crawl_command(profile: Path, out: Path, *extra: str) -> list[str]:
    command = [sys.executable, "-m", "corpus_crawler.cli", "crawl", str(profile), "-o", str(out)]
    return [*command, *extra]


def _run(command: list[str]) -> None:
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT)
    assert done.returncode == 0, done.stderr[-3000:]


def _page_requests(server: SiteServer, since: int) -> int:
    return sum(1 for r in server.requests[since:] if r.path != "/robots.txt")


def _kill_when(server: SiteServer, since: int, count: int, command: list[str], log: Path) -> None:
    """Start the crawl, SIGKILL it once the server has answered `count` page requests."""
    with open(log, "ab") as handle:
        process = subprocess.Popen(command, cwd=ROOT, stdout=handle, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + TIMEOUT
    try:
        while _page_requests(server, since) < count:
            assert process.poll() is None, "the crawl ended before the kill point"
            assert time.monotonic() < deadline, "the crawl made no progress"
            time.sleep(0.005)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=TIMEOUT)


def _records(paths: list[Path]) -> list[tuple[str, str, int | None, dict[str, str]]]:
    """(type, path, HTTP status, WARC headers) of every response and revisit record."""
    found = []
    for path in paths:
        with open(path, "rb") as handle:
            for record in ArchiveIterator(handle, check_digests=True):
                if record.rec_type not in ("response", "revisit"):
                    continue
                record.content_stream().read()
                assert record.digest_checker.passed is not False
                uri = record.rec_headers.get_header("WARC-Target-URI") or ""
                http = record.http_headers
                status = int(http.get_statuscode()) if http is not None else None
                found.append(
                    (record.rec_type, _path(uri), status, dict(record.rec_headers.headers))
                )
    return found


def _path(url: str) -> str:
    rest = url.split("://", 1)[1]
    return "/" + rest.split("/", 1)[1] if "/" in rest else "/"


def test_a_recrawl_pass_killed_twice_ends_whole_and_counted(gold_dir: Path, tmp_path: Path) -> None:
    gold = [
        isolate_links(p.read_bytes()) for p in sorted((gold_dir / "cleaneval-dev").glob("html/*"))
    ][:30]
    site = Site(gold)
    log = tmp_path / "crawl.log"
    with SiteServer(fallback=site.route) as server:
        profile = tmp_path / "recrawl-kill.yaml"
        profile.write_text(PROFILE.format(base=server.base_url), encoding="utf-8")
        out = tmp_path / "out"
        _run(_crawl_command(profile, out))
        first_files = {p.name for p in out.iterdir()}
        first_pages = {r.path for r in server.requests if r.path != "/robots.txt"}
        assert len(first_pages) == PAGES

        # between the passes: pages change, some link to new pages, some are removed
        for position, number in enumerate(sorted(CHANGED)):
            extra = b""
            if position < len(NEW):
                extra = f"<a href='{NEW[position]}'>new</a>".encode()
            site.set_tree_page(number, "revised after the first pass", extra)
        for position, path in enumerate(NEW):
            body = f"<p>New page {position}, added between the passes.</p>".encode()
            site.pages[path] = add_links(gold[(position + 7) % len(gold)], body)
        for number in GONE:
            del site.pages[f"/tree/p{number}.html"]
        with sqlite3.connect(out / "campaign.sqlite") as db:
            db.execute("UPDATE urls SET next_due = 0")  # every page is due

        # the pass: killed at a third and at two thirds, then run to its end
        recrawl = _crawl_command(profile, out, "--recrawl")
        start = len(server.requests)
        expected_requests = PAGES + len(NEW)
        site.delay = DELAY
        for fraction in (1 / 3, 2 / 3):
            _kill_when(server, start, int(expected_requests * fraction), recrawl, log)
        site.delay = 0.0
        _run(recrawl)
        pass_requests = collections.Counter(
            r.path for r in server.requests[start:] if r.path != "/robots.txt"
        )

    # the killed runs' work was kept, not all done again
    assert sum(pass_requests.values()) < 2 * expected_requests
    pass_files = sorted(p for p in out.iterdir() if p.name not in first_files and p.is_file())
    assert not [p for p in pass_files if p.name.endswith(".open")], "a file was left unfinished"
    warcs = [p for p in pass_files if p.name.endswith((".warc.gz", ".warc.wet.gz"))]
    for warc in warcs:
        check = subprocess.run(
            [sys.executable, "-m", "warcio.cli", "check", str(warc)],
            capture_output=True, text=True, timeout=TIMEOUT, check=False,
        )  # fmt: skip
        assert check.returncode == 0, check.stdout + check.stderr

    records = [r for r in _records(warcs) if r[1] != "/robots.txt"]
    by_path = collections.Counter(path for _, path, _, _ in records)
    assert {path for path, n in by_path.items() if n != 1} == set(), "archived twice in the pass"
    tree = {f"/tree/p{n}.html" for n in range(PAGES)}
    assert set(by_path) == tree | set(NEW)
    kinds = {path: (kind, status, headers) for kind, path, status, headers in records}
    changed = {f"/tree/p{n}.html" for n in CHANGED}
    gone = {f"/tree/p{n}.html" for n in GONE}
    unchanged = tree - changed - gone
    for path in unchanged:
        kind, _, headers = kinds[path]
        assert kind == "revisit", path
        assert headers["WARC-Profile"] == str(RevisitProfile.SERVER_NOT_MODIFIED)
        assert headers["WARC-Refers-To-Target-URI"].endswith(path)
    for path in changed | set(NEW):
        assert kinds[path][:2] == ("response", 200), path
    for path in gone:
        assert kinds[path][:2] == ("response", 404), path

    # documents: only changed and new pages, each once, in the WET and the prevertical
    conversions = collections.Counter(
        _path(record.rec_headers.get_header("WARC-Target-URI"))
        for warc in warcs
        for record in ArchiveIterator(open(warc, "rb"))  # noqa: SIM115 - read to the end
        if record.rec_type == "conversion"
    )
    prevertical = collections.Counter(
        _path(attributes["final_url"])
        for file in pass_files
        if file.name.endswith(".prevert")
        for attributes, _ in read_vertical(file)
    )
    assert all(n == 1 for n in conversions.values()), conversions.most_common(3)
    assert prevertical == conversions
    assert set(conversions) <= changed | set(NEW)
    # the gold pages are long articles: the extractor keeps nearly all of them
    assert len(conversions) >= 0.8 * len(changed | set(NEW))

    # the pass summary counts the whole pass, as its files hold it
    summaries = sorted(out.glob("*-summary.json"), key=lambda p: p.stat().st_mtime)
    summary: dict[str, Any] = json.loads(summaries[-1].read_text(encoding="utf-8"))
    counts = summary["recrawl"]
    assert counts["pass_number"] == 1 and counts["pass_finished"] is True
    assert counts["pass_runs"] >= 2
    revisits = sum(1 for kind, _, _, _ in records if kind == "revisit")
    assert (counts["new"], counts["changed"], counts["unchanged"], counts["gone"]) == (
        len(NEW),
        len(changed),
        revisits,
        len(gone),
    )
    assert revisits == len(unchanged)
    assert counts["revisits"] == {"server_not_modified": revisits}
    # the last run alone did only part of the pass
    assert counts["this_run"]["unchanged"] < revisits
    assert summary["campaign"]["requests_left"] == 0
