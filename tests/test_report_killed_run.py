"""`corpus-crawler report` counts a run killed with `kill -9` by what its commits left.

A killed run writes no summary; its figures used to come from its crawl log, which
also holds the pages fetched after the last commit. The resume cuts those back out
of the output files and fetches them again, so they were counted twice: once in the
killed run, once in the resume. Here a real crawl is killed once a commit has been
made and a tail of pages is waiting for the next one, resumed to its end, and the
report's totals must equal what is in the files: WARC response records (read with
warcio), documents in the prevertical and the JSONL files.
"""

from __future__ import annotations

import gzip
import json
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from warcio.archiveiterator import ArchiveIterator

from corpus_crawler.testserver import Reply, SiteServer

ROOT = Path(__file__).resolve().parent.parent
#: A guard against a hung crawl, not a speed assertion.
TIMEOUT = 180
PAGES = 240
#: Pages fetched after the last commit when the crawl is killed (cut back, fetched again).
UNCOMMITTED_TAIL = 20
WORDS = [
    "river",
    "stone",
    "market",
    "winter",
    "garden",
    "letter",
    "window",
    "teacher",
    "harbour",
    "village",
    "morning",
    "evening",
    "bridge",
    "mountain",
    "kitchen",
    "station",
    "library",
    "forest",
    "summer",
    "island",
]

PROFILE = """\
name: killreport
seeds:
  urls: ["{base}/p0.html"]
  sitemaps_from_robots: false
politeness:
  obey_robots_txt: false
  concurrent_requests: 4
  concurrent_requests_per_domain: 4
  download_delay: 0
  autothrottle: false
network:
  allowed_networks: [127.0.0.1/32]
limits:
  retry_times: 0
extraction:
  workers: 1
dedup:
  enabled: false
output:
  progress_interval: 0
  report: false
  documents:
    jsonl: true
"""


def _paragraphs(page: int) -> str:
    rng = random.Random(page)
    return "".join(
        "<p>"
        + " ".join(
            f"The {rng.choice(WORDS)} of page {page} part {part} saw "
            + " ".join(rng.choice(WORDS) for _ in range(11))
            + "."
            for _ in range(5)
        )
        + "</p>"
        for part in range(5)
    )


def _site() -> dict[str, Reply]:
    pages = {}
    for i in range(PAGES):
        children = range(3 * i + 1, min(3 * i + 4, PAGES))
        links = "".join(f"<a href='/p{c}.html'>page {c}</a> " for c in children)
        body = (
            f"<html><head><title>Page {i}</title></head><body><h1>Page {i}</h1>"
            f"{_paragraphs(i)}<nav>{links}</nav></body></html>"
        )
        pages[f"/p{i}.html"] = Reply(
            headers=(("Content-Type", "text/html; charset=utf-8"),), body=body.encode(), delay=0.01
        )
    return pages


def _committed_pages(out: Path) -> int:
    database = out / "campaign.sqlite"
    if not database.is_file():
        return 0
    try:
        db = sqlite3.connect(f"{database.resolve().as_uri()}?mode=ro", uri=True, timeout=5)
        try:
            return int(db.execute("SELECT count(*) FROM fetches").fetchone()[0])
        finally:
            db.close()
    except sqlite3.Error:
        return 0  # the crawl is creating its tables


def _uncommitted_tail(out: Path, server: SiteServer) -> bool:
    """A commit was made, and at least UNCOMMITTED_TAIL fetched pages came after it."""
    committed = _committed_pages(out)
    return bool(committed) and len(server.requests) - committed >= UNCOMMITTED_TAIL


def _lines(path: Path) -> list[str]:
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as handle:
        return handle.readlines()


def test_report_of_a_killed_and_resumed_crawl_equals_its_files(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with SiteServer(pages=_site()) as server:
        profile = tmp_path / "p.yaml"
        profile.write_text(PROFILE.format(base=server.base_url), encoding="utf-8")
        command = [
            sys.executable, "-m", "corpus_crawler.cli", "crawl", str(profile), "-o", str(out),
            # commits far enough apart that the kill finds pages in the files and the
            # crawl log that no commit covers yet
            "-s", "CORPUS_CAMPAIGN_COMMIT_INTERVAL=2",
        ]  # fmt: skip
        log = tmp_path / "killed.log"
        with open(log, "wb") as handle:
            process = subprocess.Popen(command, cwd=ROOT, stdout=handle, stderr=handle)
        deadline = time.monotonic() + TIMEOUT
        while True:
            assert process.poll() is None, log.read_text(errors="replace")[-3000:]
            assert time.monotonic() < deadline, "the crawl made no commit"
            if _uncommitted_tail(out, server):
                # frozen, then read again: a commit between the reading and the kill
                # would cover the pages the kill must leave uncommitted
                process.send_signal(signal.SIGSTOP)
                if _uncommitted_tail(out, server):
                    break
                process.send_signal(signal.SIGCONT)
            time.sleep(0.01)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=TIMEOUT)
        resumed = subprocess.run(
            command, cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT, check=False
        )
        assert resumed.returncode == 0, resumed.stderr[-4000:]
        fetched_again = len(server.requests) - PAGES
    assert fetched_again > 0, "the kill left no uncommitted page: nothing was tested"

    responses = 0
    for path in out.glob("*.warc.gz"):
        with open(path, "rb") as handle:
            responses += sum(1 for r in ArchiveIterator(handle) if r.rec_type == "response")
    prevertical = sum(
        line.startswith("<doc ") for path in out.glob("*.prevert*") for line in _lines(path)
    )
    jsonl = sum(bool(line.strip()) for path in out.glob("*.jsonl*") for line in _lines(path))
    assert responses == prevertical == jsonl == PAGES  # every page once, nothing lost

    report = subprocess.run(
        [sys.executable, "-m", "corpus_crawler.cli", "report", str(out), "--json"],
        cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT, check=False,
    )  # fmt: skip
    assert report.returncode == 0, report.stderr[-3000:]
    data = json.loads(report.stdout)
    killed, resume = data["runs"]
    assert killed["summary"] is None and resume["kind"] == "resume"
    assert data["total"]["pages_fetched"] == responses, data["runs"]
    assert data["total"]["documents"] == prevertical == jsonl, data["runs"]
    assert killed["counted_from"] == "campaign store", killed
