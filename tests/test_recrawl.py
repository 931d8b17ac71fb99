"""Incremental recrawls: `corpus-crawler crawl PROFILE -o OUT --recrawl` over a real loopback site.

The site sends ETag and Last-Modified and answers 304 to a matching conditional
GET (except one page, which ignores it and sends the same bytes). Pass 1 crawls
it; between the passes two pages change (one of them gains a link to a new
page), one is removed, and one URL is made not due yet (its due time is set
in the campaign store, as if its interval had not elapsed). Pass 2 (`--recrawl`)
must archive revisit records (server-not-modified) for the unchanged pages, an
identical-payload-digest revisit for the page that ignores conditional GET, full
responses for the changed and new pages, put only changed and new documents in
its corpus files, count new/changed/unchanged/gone right, and leave WARCs that
pass `warcio check`.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from warcio.archiveiterator import ArchiveIterator

from corpus_crawler.recrawl import (
    Change,
    PreviousCapture,
    Schedule,
    decide,
    next_interval,
    parse_interval,
)
from corpus_crawler.testserver import add_links, isolate_links
from corpus_crawler.warc import RevisitProfile, payload_digest

ROOT = Path(__file__).resolve().parent.parent
#: A guard against a hung crawl, not a speed assertion.
TIMEOUT = 120
LAST_MODIFIED = "Mon, 02 Nov 2026 10:00:00 GMT"
#: Pages besides the index; `same` ignores conditional GET.
NAMES = ("a", "b", "c", "d", "e", "same", "later")

PROFILE = """\
name: recrawl
seeds:
  urls: ["{base}/"]
politeness:
  concurrent_requests: 4
  concurrent_requests_per_domain: 4
  download_delay: 0
  autothrottle: false
  # the 503 of a recrawl request is retried after 0.5 s, not the 5 s backoff a real
  # site gets (tests/test_backoff.py tests the backoff)
  max_retry_after: 0.5
network:
  allowed_networks: [127.0.0.1/32]
extraction:
  language: auto
  min_words: 30
  workers: 1
schedule:
  min_interval: 1h
  max_interval: 10d
  initial_interval: 1d
output:
  progress_interval: 0
  report: false  # the HTML report has tests of its own; nothing here reads it
  warc:
    prefix: recrawl
  prevertical:
    enabled: true
"""


class Site:
    """Pages by path; a log of (method, path, status) of every answer."""

    def __init__(self, gold: list[bytes]) -> None:
        self.pages: dict[str, bytes] = {}
        self.log: list[tuple[str, int]] = []
        #: Paths answered 503 once (then as usual): a recrawl request's retry.
        self.fail_once: set[str] = set()
        self.lock = threading.Lock()
        links = "".join(f"<a href='/{n}.html'>{n}</a> " for n in NAMES).encode()
        self.pages["/"] = add_links(gold[0], links)
        for i, name in enumerate(NAMES, start=1):
            self.set_page(name, gold[i], f"version one of {name}")

    def set_page(self, name: str, html: bytes, marker: str, extra: bytes = b"") -> None:
        own = f"<p>This is the page called {name}, {marker}.</p>".encode()
        self.pages[f"/{name}.html"] = add_links(html, own + extra)

    def paths(self) -> list[str]:
        with self.lock:
            return [path for path, _ in self.log]


def _handler(site: Site) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = site.pages.get(self.path)
            if self.path == "/robots.txt" or body is None:
                self._answer(404, b"not here", {})
                return
            if self.path in site.fail_once:
                site.fail_once.discard(self.path)
                self._answer(503, b"busy", {})
                return
            etag = '"' + hashlib.sha1(body).hexdigest() + '"'
            headers = {"ETag": etag, "Last-Modified": LAST_MODIFIED}
            if self.path != "/same.html" and self.headers.get("If-None-Match") == etag:
                self._answer(304, b"", headers)
                return
            self._answer(200, body, headers)

        def _answer(self, status: int, body: bytes, headers: dict[str, str]) -> None:
            with site.lock:
                site.log.append((self.path, status))
            self.send_response(status)
            if status != 304:
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
            for key, value in headers.items():
                self.send_header(key, value)
            self.end_headers()
            if status != 304:
                self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    return Handler


@pytest.fixture()
def site(gold_dir: Path) -> Iterator[tuple[Site, str]]:
    gold = [
        isolate_links(p.read_bytes()) for p in sorted((gold_dir / "cleaneval-dev").glob("html/*"))
    ][:20]
    served = Site(gold)
    served.gold = gold  # type: ignore[attr-defined]
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(served))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield served, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _crawl(profile: Path, out: Path, *extra: str) -> dict[str, Any]:
    command = [sys.executable, "-m", "corpus_crawler.cli", "crawl", str(profile), "-o", str(out)]
    done = subprocess.run(
        [*command, *extra], cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT
    )
    assert done.returncode == 0, done.stderr[-3000:]
    summaries = sorted(out.glob("*summary*.json"), key=lambda p: p.stat().st_mtime)
    assert summaries, f"no summary in {sorted(p.name for p in out.iterdir())}"
    return json.loads(summaries[-1].read_text(encoding="utf-8"))


def _records(out: Path, names: list[str]) -> list[tuple[str, str, dict[str, str]]]:
    """(type, target URI, headers) of every response/revisit record of these WARCs."""
    found = []
    for name in names:
        with open(out / name, "rb") as handle:
            for record in ArchiveIterator(handle):
                if record.rec_type in ("response", "revisit"):
                    headers = dict(record.rec_headers.headers)
                    found.append((record.rec_type, headers["WARC-Target-URI"], headers))
    return found


def _prevertical_urls(out: Path, names: list[str]) -> set[str]:
    urls = set()
    for name in names:
        for line in (out / name).read_text(encoding="utf-8").splitlines():
            if line.startswith("<doc "):
                start = line.index('url="') + 5
                urls.add(line[start : line.index('"', start)])
    return urls


def test_recrawl_pass_archives_revisits_and_writes_only_new_and_changed(
    site: tuple[Site, str], tmp_path: Path
) -> None:
    served, base = site
    gold: list[bytes] = served.gold  # type: ignore[attr-defined]
    profile = tmp_path / "recrawl.yaml"
    profile.write_text(PROFILE.format(base=base), encoding="utf-8")
    out = tmp_path / "out"

    first = _crawl(profile, out)
    first_warcs = list(first["files"]["warc"])
    first_records = _records(out, first_warcs)
    assert {t for t, _, _ in first_records} == {"response"}
    first_docs = _prevertical_urls(out, list(first["files"]["prevertical"]))
    assert len(first_docs) >= 6, first_docs  # the index and most pages are kept documents

    # between the passes: b and c change (b links to a new page), d is removed,
    # and `later` is not due yet
    served.set_page("b", gold[2], "version TWO of b", b"<a href='/new.html'>new</a>")
    served.set_page("c", gold[3], "version TWO of c")
    served.set_page("new", gold[10], "a page added between the passes")
    del served.pages["/d.html"]
    with sqlite3.connect(out / "campaign.sqlite") as db:
        db.execute("UPDATE urls SET next_due = 0")  # a day went by...
        db.execute(  # ...but not for this one
            "UPDATE urls SET next_due = 9e12 WHERE url = ?", (f"{base}/later.html",)
        )
    served.log.clear()
    served.fail_once.add("/e.html")

    second = _crawl(profile, out, "--recrawl")
    assert "/later.html" not in served.paths()
    assert served.log.count(("/e.html", 503)) == 1
    assert served.log.count(("/e.html", 304)) == 1  # the retry of a recrawl request
    second_warcs = [w for w in second["files"]["warc"] if w not in first_warcs]
    assert second_warcs, "the recrawl pass writes its own WARC"
    second_records = _records(out, second_warcs)
    records = {uri.removeprefix(base): (kind, headers) for kind, uri, headers in second_records}
    first_ids = {uri.removeprefix(base): h["WARC-Record-ID"] for _, uri, h in first_records}

    for path in ("/", "/a.html", "/e.html"):
        kind, headers = records[path]
        assert kind == "revisit", path
        assert headers["WARC-Profile"] == str(RevisitProfile.SERVER_NOT_MODIFIED)
        assert headers["WARC-Refers-To"] == first_ids[path]
        assert headers["WARC-Refers-To-Target-URI"] == base + path
        assert headers["WARC-Refers-To-Date"]
    kind, headers = records["/same.html"]
    assert kind == "revisit"
    assert headers["WARC-Profile"] == str(RevisitProfile.IDENTICAL_PAYLOAD_DIGEST)
    assert headers["WARC-Refers-To"] == first_ids["/same.html"]
    for path in ("/b.html", "/c.html", "/new.html"):
        assert records[path][0] == "response", path
    assert records["/d.html"][0] == "response"  # the 404, archived as it came

    second_docs = _prevertical_urls(out, list(second["files"]["prevertical"]))
    assert second_docs == {f"{base}/b.html", f"{base}/c.html", f"{base}/new.html"}

    counts = second["recrawl"]
    assert counts["pass"] is True
    assert (counts["new"], counts["changed"], counts["unchanged"], counts["gone"]) == (1, 2, 4, 1)
    assert counts["revisits"] == {"server_not_modified": 3, "identical_payload_digest": 1}

    with sqlite3.connect(out / "campaign.sqlite") as db:
        rows = dict(db.execute("SELECT url, interval FROM urls").fetchall())
    day = 86400.0
    assert rows[f"{base}/b.html"] == day / 2  # changed: sooner
    assert rows[f"{base}/a.html"] == day * 1.5  # unchanged: later
    assert rows[f"{base}/new.html"] == day  # new: the initial interval
    assert rows[f"{base}/later.html"] == day  # not visited

    check = subprocess.run(
        [sys.executable, "-m", "warcio.cli", "check", "-v", *(str(out / w) for w in second_warcs)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert check.returncode == 0, check.stdout + check.stderr

    # a third pass at once: nothing is due, nothing is fetched but robots.txt
    served.log.clear()
    third = _crawl(profile, out, "--recrawl")
    assert [p for p in served.paths() if p != "/robots.txt"] == []
    assert third["recrawl"]["due"] == 0


# -- the pure parts --------------------------------------------------------------------------


def _previous(digest: str | None, outcome: str = "new") -> PreviousCapture:
    from datetime import datetime, timezone

    return PreviousCapture(
        "<urn:uuid:1>",
        "http://x/",
        datetime(2026, 1, 1, tzinfo=timezone.utc),
        digest,
        outcome=outcome,
    )


def test_decide_response_or_revisit() -> None:
    digest = payload_digest(b"<html>same</html>")
    assert decide(200, digest, None, None).change is Change.NEW
    assert decide(200, digest, None, None).revisit is None
    unchanged = decide(200, digest, _previous(digest), None)
    assert (unchanged.change, unchanged.revisit) == (
        Change.UNCHANGED,
        RevisitProfile.IDENTICAL_PAYLOAD_DIGEST,
    )
    changed = decide(200, payload_digest(b"other"), _previous(digest), None)
    assert (changed.change, changed.revisit) == (Change.CHANGED, None)
    # byte-identical copy at another URL: a revisit of that capture, yet a new URL
    copy = decide(200, digest, None, _previous(digest))
    assert (copy.change, copy.revisit) == (Change.NEW, RevisitProfile.IDENTICAL_PAYLOAD_DIGEST)
    # back after being gone: changed, a full response
    back = decide(200, digest, _previous(digest, "gone"), None)
    assert (back.change, back.revisit) == (Change.CHANGED, None)
    not_modified = decide(304, None, _previous(digest), None)
    assert not_modified.revisit is RevisitProfile.SERVER_NOT_MODIFIED
    assert decide(304, None, None, None).change is Change.OTHER
    assert decide(404, None, _previous(digest), None).change is Change.GONE
    assert decide(404, None, _previous(digest, "gone"), None).change is Change.OTHER
    # a truncated body has no digest: never a revisit
    assert decide(200, None, _previous(digest), None).change is Change.OTHER


def test_intervals_adapt_within_bounds() -> None:
    schedule = Schedule(min_interval=100.0, max_interval=1000.0, initial_interval=400.0)
    assert next_interval(None, Change.NEW, schedule) == 400.0
    assert next_interval(400.0, Change.CHANGED, schedule) == 200.0
    assert next_interval(150.0, Change.CHANGED, schedule) == 100.0
    assert next_interval(400.0, Change.UNCHANGED, schedule) == 600.0
    assert next_interval(900.0, Change.UNCHANGED, schedule) == 1000.0
    assert parse_interval("12h", "k") == 43200.0
    assert parse_interval("1.5d", "k") == 1.5 * 86400
    assert parse_interval(2, "k") == 7200.0
    with pytest.raises(ValueError, match="k: expected a duration"):
        parse_interval("soon", "k")


def test_store_remembers_captures_with_the_files_and_queues_a_due_url_once(
    tmp_path: Path,
) -> None:
    from datetime import datetime, timezone

    from corpus_crawler.state import Admission, CampaignStore

    moment = datetime(2026, 11, 1, tzinfo=timezone.utc)
    body = b"<html>the same bytes</html>"
    schedule = Schedule(min_interval=10.0, max_interval=1000.0, initial_interval=100.0)
    store = CampaignStore(tmp_path, schedule=schedule)
    first = decide(200, payload_digest(body), None, None)
    store.record_capture(
        "http://x/a",
        first,
        status=200,
        record_id="<urn:uuid:a>",
        date=moment,
        etag='"e1"',
        last_modified=None,
        depth=2,
    )
    store.commit({})
    # the same bytes at another URL: a revisit of a's capture
    same = store.payload_capture(payload_digest(body))
    assert same is not None and (same.record_id, same.target_uri) == ("<urn:uuid:a>", "http://x/a")
    copy = decide(200, payload_digest(body), store.previous_capture("http://x/b"), same)
    assert copy.revisit is RevisitProfile.IDENTICAL_PAYLOAD_DIGEST
    store.record_capture(
        "http://x/b",
        copy,
        status=200,
        record_id="<urn:uuid:b>",
        date=moment,
        etag=None,
        last_modified=None,
        depth=1,
    )
    previous_b = store.previous_capture("http://x/b")
    assert previous_b is not None and previous_b.record_id == "<urn:uuid:a>"  # the full capture
    store.abandon()  # killed before b's capture was committed with its record

    store = CampaignStore(tmp_path, schedule=schedule)
    assert store.previous_capture("http://x/b") is None
    previous_a = store.previous_capture("http://x/a")
    assert previous_a is not None and previous_a.etag == '"e1"' and previous_a.interval == 100.0
    assert list(store.due_urls(now=0)) == []
    due = list(store.due_urls(now=9e12))
    assert due == [("http://x/a", '"e1"', None, 2)]
    recrawl = {"fingerprint": None, "priority": 0, "recrawl": "http://x/a"}
    assert store.enqueue("a", **recrawl) is Admission.QUEUED  # type: ignore[arg-type]
    assert store.enqueue("a", **recrawl) is Admission.DUPLICATE  # type: ignore[arg-type]
    assert list(store.due_urls(now=9e12)) == []  # queued: not due again
    ((row, _),) = store.lease(5)
    assert store.finish(row, "http://x/a", "failed:ConnectionRefusedError") is True  # gone
    gone = store.previous_capture("http://x/a")
    assert gone is not None and gone.outcome == "gone" and gone.interval == 150.0
    store.close()


def test_an_old_campaign_database_gains_the_recrawl_tables(tmp_path: Path) -> None:
    with sqlite3.connect(tmp_path / "campaign.sqlite") as db:
        db.execute("CREATE TABLE frontier (id INTEGER PRIMARY KEY, priority INTEGER NOT NULL,"
                   " state INTEGER NOT NULL DEFAULT 0, request TEXT NOT NULL)")  # fmt: skip
    from corpus_crawler.state import CampaignStore

    store = CampaignStore(tmp_path)
    assert store.previous_capture("http://x/") is None
    assert list(store.due_urls()) == []
    store.close()
