"""The CDXJ index the WARC writer makes as it writes equals cdxj-indexer's re-reading.

`corpus_crawler._cdxj` makes each record's line when the writer writes it, and the
writer writes the sorted index when it closes the WARC, instead of re-reading the
file. Here the index of every finished WARC is compared, byte for byte, with the
one cdxj-indexer makes from the same file (`write_cdxj`): for every kind of
record the writer makes (odd headers, revisits, rotation), after a campaign's
restart cut a closed WARC back, and after a real crawl killed with SIGKILL and
resumed. An index must never name a record that is not in its WARC.
"""

from __future__ import annotations

import itertools
import json
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path

from corpus_crawler._files import gzip_member_ends
from corpus_crawler.testserver import Reply, SiteServer
from corpus_crawler.warc import (
    Exchange,
    RevisitProfile,
    Truncation,
    WarcConfig,
    WarcWriter,
    cdxj_path,
    recover,
    write_cdxj,
)

ROOT = Path(__file__).resolve().parent.parent
START = datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=timezone.utc)
#: A guard against a hung crawl, not a speed assertion.
TIMEOUT = 180


def fake_clock() -> Callable[[], datetime]:
    ticks = itertools.count()
    return lambda: START + timedelta(seconds=next(ticks))


def reread_index(warc_path: Path, scratch: Path) -> bytes:
    """cdxj-indexer's index of a copy of `warc_path` (same file name)."""
    scratch.mkdir(parents=True, exist_ok=True)
    copy = scratch / warc_path.name
    shutil.copyfile(warc_path, copy)
    return write_cdxj(copy).read_bytes()


def assert_index_names_only_whole_records(warc_path: Path) -> None:
    with open(warc_path, "rb") as handle:
        members = {start: end - start for start, end in _member_spans(handle)}
    for line in cdxj_path(warc_path).read_text(encoding="utf-8").splitlines():
        fields = json.loads(line.split(" ", 2)[2])
        assert fields["filename"] == warc_path.name
        assert members.get(int(fields["offset"])) == int(fields["length"]), line


def _member_spans(handle: object) -> list[tuple[int, int]]:
    spans, start = [], 0
    for end, _ in gzip_member_ends(handle):  # type: ignore[arg-type]
        spans.append((start, end))
        start = end
    return spans


def every_kind_of_exchange(writer: WarcWriter) -> None:
    html = b"<html><body><p>Hello</p></body></html>"
    writer.write_exchange(
        Exchange(
            url="https://example.com/",
            status=200,
            body=html,
            response_headers=(("Content-Type", "text/html; charset=utf-8"),),
            ip_address="127.0.0.1",
            fetch_time_ms=12,
        )
    )
    # a redirect without a content type, a URL with a fragment and a query
    writer.write_exchange(
        Exchange(
            url="http://example.com/a?b=1&c=%C3%A9#frag",
            status=301,
            response_headers=(("Location", "https://example.com/"),),
        )
    )
    # odd content types: spaces, upper case, empty, a repeated header
    for number, content_type in enumerate(
        ("TEXT/HTML ;charset=latin-1", "  application/pdf  ", "", "text/plain\tx")
    ):
        writer.write_exchange(
            Exchange(
                url=f"http://example.com/odd/{number}",
                status=200,
                body=b"x" * number,
                response_headers=(("content-type", content_type), ("Content-Type", "a/b")),
            )
        )
    # non-ASCII header bytes (ISO-8859-1 text), a status line as received, HTTP/2
    writer.write_exchange(
        Exchange(
            url="http://example.com/\u010dau",
            status=404,
            body=b"missing",
            response_headers=(("Content-Type", "text/html"), ("X-Name", "\xc4\x8dau")),
            status_line="HTTP/1.1 404 Nenalezeno",
        )
    )
    writer.write_exchange(
        Exchange(
            url="https://example.com/h2",
            status=200,
            body=html,
            http_version="h2",
            response_headers=(("content-type", "text/html"),),
        )
    )
    # a cut body, an empty 204, a POST
    writer.write_exchange(
        Exchange(
            url="http://example.com/big",
            status=200,
            body=b"y" * 5000,
            response_headers=(("Content-Type", "application/octet-stream"),),
            truncated=Truncation.LENGTH,
        )
    )
    writer.write_exchange(Exchange(url="http://example.com/empty", status=204))
    writer.write_exchange(
        Exchange(
            url="http://example.com/form",
            status=200,
            method="POST",
            request_body=b"q=1",
            body=html,
            response_headers=(("Content-Type", "text/html"),),
        )
    )
    # both kinds of revisit
    first = writer.write_exchange(Exchange(url="http://example.com/again", status=200, body=html))
    writer.write_revisit(
        Exchange(
            url="http://example.com/again",
            status=200,
            body=html,
            response_headers=(("Content-Type", "text/html"),),
        ),
        profile=RevisitProfile.IDENTICAL_PAYLOAD_DIGEST,
        refers_to=first.response_id,
        refers_to_uri="http://example.com/again",
        refers_to_date=START,
    )
    writer.write_revisit(
        Exchange(url="http://example.com/again", status=304),
        profile=RevisitProfile.SERVER_NOT_MODIFIED,
        refers_to=first.response_id,
        refers_to_uri="http://example.com/again",
        refers_to_date=START,
    )


def test_the_index_made_while_writing_equals_cdxj_indexer_on_the_file(tmp_path: Path) -> None:
    out = tmp_path / "warc"
    # small files: every few exchanges a rotation, each file with its own index
    config = WarcConfig(out, prefix="live", hostname="h", max_bytes=2500)
    with WarcWriter(config, clock=fake_clock()) as writer:
        for _ in range(3):
            every_kind_of_exchange(writer)
    assert len(writer.files) > 3
    assert [cdxj_path(p) for p in writer.files] == list(writer.index_files)
    lines = 0
    for warc_path in writer.files:
        live = cdxj_path(warc_path).read_bytes()
        assert live == reread_index(warc_path, tmp_path / "reread"), warc_path.name
        assert_index_names_only_whole_records(warc_path)
        lines += live.count(b"\n")
    assert lines == 3 * 14  # 12 responses and 2 revisits per round


def test_no_index_when_cdxj_is_off(tmp_path: Path) -> None:
    config = WarcConfig(tmp_path, prefix="off", hostname="h", cdxj=False)
    with WarcWriter(config, clock=fake_clock()) as writer:
        every_kind_of_exchange(writer)
    assert writer.files and not writer.index_files
    assert not list(tmp_path.glob("*.cdxj"))


def test_restart_indexes_again_a_warc_cut_back_under_its_index(tmp_path: Path) -> None:
    # A closed WARC cut back to its committed length (a crash before the commit) keeps
    # the index written at close; the next start must make it again from the file.
    config = WarcConfig(tmp_path, prefix="cut", hostname="h")
    with WarcWriter(config, clock=fake_clock()) as writer:
        every_kind_of_exchange(writer)
    warc_path = writer.files[0]
    with open(warc_path, "rb") as handle:
        spans = _member_spans(handle)
    cut_at = spans[len(spans) // 2][1]
    with open(warc_path, "r+b") as handle:
        handle.truncate(cut_at)
    # and a WARC moved away whole (nothing of it committed) leaves its index behind
    with WarcWriter(WarcConfig(tmp_path, prefix="gone", hostname="h"), clock=fake_clock()) as other:
        every_kind_of_exchange(other)
    other.files[0].rename(tmp_path / "moved-away.bin")
    before = cdxj_path(warc_path).read_bytes()

    recover(tmp_path)

    after = cdxj_path(warc_path).read_bytes()
    assert after != before and after.count(b"\n") < before.count(b"\n")
    assert after == reread_index(warc_path, tmp_path / "reread")
    assert_index_names_only_whole_records(warc_path)
    assert not cdxj_path(other.files[0]).exists()


def test_restart_keeps_an_index_that_matches_its_warc(tmp_path: Path) -> None:
    config = WarcConfig(tmp_path, prefix="keep", hostname="h")
    with WarcWriter(config, clock=fake_clock()) as writer:
        every_kind_of_exchange(writer)
    index = writer.index_files[0]
    stamp = index.stat().st_mtime_ns
    recover(tmp_path)
    assert index.stat().st_mtime_ns == stamp


PROFILE = """\
name: cdxj-kill
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
  report: false
  warc:
    prefix: kill
    max_file_bytes: 60000
"""
PAGES = 400
FANOUT = 5


def test_kill_9_and_resume_leave_every_index_equal_to_its_warc(tmp_path: Path) -> None:
    pages: dict[str, Reply] = {}
    for i in range(PAGES):
        children = [c for c in range(FANOUT * i + 1, FANOUT * i + FANOUT + 1) if c < PAGES]
        links = "".join(f"<li><a href='/p{c}.html'>page {c}</a></li>" for c in children)
        body = f"<html><body><h1>Page {i}</h1><ul>{links}</ul>{'text ' * 200}</body></html>"
        pages[f"/p{i}.html"] = Reply(
            headers=(("Content-Type", "text/html; charset=utf-8"),), body=body.encode()
        )
    log = tmp_path / "crawl.log"
    out = tmp_path / "out"
    with SiteServer(pages=pages) as server:
        profile = tmp_path / "kill.yaml"
        profile.write_text(PROFILE.format(base=server.base_url), encoding="utf-8")
        command = [
            sys.executable, "-m", "corpus_crawler.cli", "crawl", str(profile), "-o", str(out),
            "-s", "CORPUS_EXTRACT_ENABLED=False",
            "-s", "CORPUS_CAMPAIGN_COMMIT_INTERVAL=0.2",
        ]  # fmt: skip
        for fraction in (0.25, 0.5, 0.75):
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
    warcs = sorted(out.glob("*.warc.gz"))
    assert len(warcs) > 3  # rotated, and files finished by the restarts' recovery
    assert sorted(out.glob("*.cdxj")) == sorted(cdxj_path(p) for p in warcs)
    indexed = set()
    for warc_path in warcs:
        index = cdxj_path(warc_path).read_bytes()
        assert index == reread_index(warc_path, tmp_path / "reread"), warc_path.name
        assert_index_names_only_whole_records(warc_path)
        for line in index.decode().splitlines():
            indexed.add(json.loads(line.split(" ", 2)[2])["url"].rsplit("/", 1)[1])
    assert indexed >= {f"p{i}.html" for i in range(PAGES)}
