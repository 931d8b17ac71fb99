"""`corpus-crawler process`: archives in, the same corpus files a crawl writes out.

Real parts only: a real crawl of the loopback test site (tests/site/crawl_site.py)
whose WARCs are reprocessed and compared with its prevertical and vertical;
Common-Crawl-style WARCs written here with warcio (gzip and chunked bodies,
revisits, non-HTML, warcinfo, WET conversion and metadata records); damaged
archives; a real `kill -9` of a running process; a local Dask cluster.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
import zlib
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import crawl_site
import dup_site
import pytest
from warcio.archiveiterator import ArchiveIterator
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from corpus_crawler import extract
from corpus_crawler.config import ExtractConfig
from corpus_crawler.process import ArchiveKind, next_record_start, sniff_kind
from corpus_crawler.testserver import SiteServer
from corpus_crawler.vertical import read_vertical

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 240  # seconds: a guard against a hang, not a speed assertion


PROFILE = """\
name: reprocess
seeds:
  urls: ["{base}/"]
scope:
  max_depth: 3
politeness:
  concurrent_requests: 8
  concurrent_requests_per_domain: 8
  download_delay: 0
  autothrottle: false
network:
  allowed_networks: [127.0.0.1/32]
limits:
  max_page_bytes: 2000000
  retry_times: 2
extraction:
  language: auto
  min_words: 60
  workers: 2
output:
  progress_interval: 0
  report: false  # the HTML report has tests of its own; nothing here reads it
  warc:
    prefix: live
  vertical:
    enabled: true
    sentences: true
# `process` does not run the dedup stages yet (its document_filter hook is not
# connected): compare extraction alone
dedup:
  enabled: false
"""


def run_cli(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [sys.executable, "-m", "corpus_crawler.cli", *args],
        cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT, check=False,
    )  # fmt: skip
    if check:
        assert result.returncode == 0, result.stdout + result.stderr[-4000:]
    return result


Docs = dict[str, tuple[dict[str, str], list[tuple[dict[str, str], str]]]]


def documents(folder: Path, suffix: str = ".prevert", pattern: str = "[!r]*") -> Docs:
    """Documents by final URL (each must be there once); revisits-N files are left out."""
    docs: Docs = {}
    for path in sorted(folder.glob(f"{pattern}{suffix}")):
        for attrs, paragraphs in read_vertical(path):
            assert attrs["final_url"] not in docs, f"twice: {attrs['final_url']}"
            docs[attrs["final_url"]] = (attrs, paragraphs)
    return docs


def doc_list(folder: Path) -> list[str]:
    return [a["final_url"] for p in sorted(folder.glob("*.prevert")) for a, _ in read_vertical(p)]


def summary(folder: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((folder / "process-summary.json").read_text("utf-8"))
    return data


# -- a live crawl, reprocessed ------------------------------------------------------------------


@pytest.fixture(scope="module")
def live_crawl(gold_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    site = crawl_site.build_site(gold_dir)
    work = tmp_path_factory.mktemp("live")
    out = work / "crawl"
    with SiteServer(pages=site.pages, routes=site.routes) as server:
        profile = work / "profile.yaml"
        profile.write_text(PROFILE.format(base=server.base_url), encoding="utf-8")
        run_cli("crawl", str(profile), "-o", str(out))
    return profile, out


def test_reprocessing_a_crawls_warcs_gives_the_crawls_documents(
    live_crawl: tuple[Path, Path], tmp_path: Path
) -> None:
    profile, crawl_out = live_crawl
    warcs = sorted(crawl_out.glob("*.warc.gz"))
    assert warcs
    out = tmp_path / "out"
    result = run_cli("process", *map(str, warcs), "-o", str(out), "--profile", str(profile),
                     "-j", "2", "--no-progress")  # fmt: skip
    live = documents(crawl_out)
    again = documents(out)
    assert len(live) >= 8
    assert again.keys() == live.keys()
    for url, (attrs, paragraphs) in live.items():
        # every attribute (id, title, dates, language, url before redirects, encodings) and text
        assert again[url] == (attrs, paragraphs), url
    assert documents(out, ".vert") == documents(crawl_out, ".vert")
    data = summary(out)
    assert data["documents"] == len(live)
    live_summary = json.loads(next(crawl_out.glob("*-summary.json")).read_text("utf-8"))
    for reason in ("too-short", "no-good-paragraph"):
        assert data["dropped"].get(reason, 0) == live_summary["dropped"][reason], reason
    # robots.txt never reaches a crawl's pipelines; in an archive it is one more capture
    assert data["dropped"]["not-html"] == live_summary["dropped"]["not-html"] + 1
    assert "documents:" in result.stderr


def test_a_profiles_raw_settings_are_applied_as_the_crawl_applies_them(
    live_crawl: tuple[Path, Path], tmp_path: Path
) -> None:
    """`settings: {CORPUS_EXTRACT_PRESET: article}` is extraction.preset for a crawl;
    `process --profile` with that profile used to ignore it (and its refusals)."""
    profile, crawl_out = live_crawl
    text = profile.read_text(encoding="utf-8")
    assert "settings:" not in text and "extraction:\n" in text
    by_key = tmp_path / "by-key.yaml"
    by_key.write_text(text.replace("extraction:\n", "extraction:\n  preset: article\n"), "utf-8")
    by_setting = tmp_path / "by-setting.yaml"
    by_setting.write_text(text + "settings:\n  CORPUS_EXTRACT_PRESET: article\n", "utf-8")
    results = {}
    for name, path in (("key", by_key), ("setting", by_setting)):
        run_cli("process", str(crawl_out), "-o", str(tmp_path / name), "--profile", str(path),
                "--no-progress")  # fmt: skip
        results[name] = documents(tmp_path / name)
    assert results["setting"] == results["key"]
    # and the setting changed the documents: the crawl ran the default preset
    seed = documents(crawl_out)
    assert results["setting"] != seed
    assert any(
        url in seed and results["setting"][url][1] != seed[url][1] for url in results["setting"]
    )


def test_conversion_records_refer_to_the_archived_responses(
    live_crawl: tuple[Path, Path], tmp_path: Path
) -> None:
    profile, crawl_out = live_crawl
    out = tmp_path / "out"
    run_cli("process", str(crawl_out), "-o", str(out), "--profile", str(profile), "--no-progress")
    responses: dict[str, str] = {}
    live_text: dict[str, str] = {}
    # the crawl's conversion records are in its text WARCs, beside its WARCs
    for path in [*crawl_out.glob("*.warc.gz"), *crawl_out.glob("*.warc.wet.gz")]:
        with open(path, "rb") as handle:
            for record in ArchiveIterator(handle):
                headers = record.rec_headers
                if record.rec_type == "response":
                    responses[headers.get_header("WARC-Record-ID")] = headers.get_header(
                        "WARC-Target-URI"
                    )
                elif record.rec_type == "conversion":
                    url = headers.get_header("WARC-Target-URI")
                    live_text[url] = record.content_stream().read().decode("utf-8")
    texts: dict[str, str] = {}
    (warc,) = out.glob("*.warc.wet.gz")
    warcinfo_ids: list[str] = []
    with open(warc, "rb") as handle:
        for record in ArchiveIterator(handle, check_digests=True):
            if record.rec_type == "warcinfo":
                warcinfo_ids.append(record.rec_headers.get_header("WARC-Record-ID"))
            if record.rec_type != "conversion":
                continue
            # built in the workers for the file's warcinfo record, minted beforehand
            assert record.rec_headers.get_header("WARC-Warcinfo-ID") == warcinfo_ids[0]
            url = record.rec_headers.get_header("WARC-Target-URI")
            assert responses[record.rec_headers.get_header("WARC-Refers-To")] == url
            texts[url] = record.content_stream().read().decode("utf-8")
    assert texts == live_text
    assert len(warcinfo_ids) == 1


# -- Common-Crawl-style archives -----------------------------------------------------------------

HTML_TYPE = "text/html; charset=UTF-8"


class ArchiveBuilder:
    """Writes WARC records the way Common Crawl's files hold them (one gzip member each)."""

    def __init__(self, path: Path, gzip_records: bool = True) -> None:
        self.path = path
        self._handle = open(path, "wb")  # noqa: SIM115 - closed in close()
        self.writer = WARCWriter(self._handle, gzip=gzip_records, warc_version="WARC/1.1")
        self.ids: dict[str, str] = {}
        self.digests: dict[str, str] = {}
        self.writer.write_record(
            self.writer.create_warcinfo_record(
                path.name, {"software": "test", "isPartOf": "CC-MAIN-test"}
            )
        )

    def response(
        self,
        url: str,
        body: bytes,
        *,
        status: str = "200 OK",
        content_type: str = HTML_TYPE,
        headers: list[tuple[str, str]] | None = None,
        date: str = "2024-01-02T03:04:05Z",
        request: bool = True,
    ) -> None:
        http_headers = [("Content-Type", content_type), *(headers or [])]
        if not any(k.lower() in ("transfer-encoding", "content-length") for k, _ in http_headers):
            http_headers.append(("Content-Length", str(len(body))))
        record = self.writer.create_warc_record(
            url, "response", payload=io.BytesIO(body), length=len(body),
            http_headers=StatusAndHeaders(status, http_headers, protocol="HTTP/1.1"),
            warc_headers_dict={"WARC-Date": date, "WARC-IP-Address": "192.0.2.7"},
        )  # fmt: skip
        self.ids[url] = record.rec_headers.get_header("WARC-Record-ID")
        self.digests[url] = record.rec_headers.get_header("WARC-Payload-Digest")
        if request:
            req = self.writer.create_warc_record(
                url, "request", payload=io.BytesIO(b""), length=0,
                http_headers=StatusAndHeaders(
                    f"GET /{url.split('/', 3)[-1]} HTTP/1.1", [("Host", "example.org")],
                    is_http_request=True,
                ),
            )  # fmt: skip
            self.writer.write_record(req)
        self.writer.write_record(record)
        meta = self.writer.create_warc_record(
            url, "metadata", payload=io.BytesIO(b"fetchTimeMs: 12\r\n"), length=17,
            warc_content_type="application/warc-fields",
        )  # fmt: skip
        self.writer.write_record(meta)

    def revisit(self, url: str, digest: str, refers_uri: str, refers_date: str) -> None:
        record = self.writer.create_revisit_record(
            url, digest, refers_uri, refers_date,
            http_headers=StatusAndHeaders(
                "200 OK", [("Content-Type", HTML_TYPE)], protocol="HTTP/1.1"
            ),
        )  # fmt: skip
        record.rec_headers.replace_header("WARC-Date", "2024-02-02T03:04:05Z")
        self.writer.write_record(record)

    def raw(self, url: str, record_type: str, body: bytes, content_type: str) -> None:
        record = self.writer.create_warc_record(
            url, record_type, payload=io.BytesIO(body), length=len(body),
            warc_content_type=content_type,
        )  # fmt: skip
        self.writer.write_record(record)

    def close(self) -> None:
        self._handle.close()


def chunked(body: bytes, size: int = 700) -> bytes:
    parts = [body[i : i + size] for i in range(0, len(body), size)]
    return b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in parts) + b"0\r\n\r\n"


@pytest.fixture(scope="module")
def gold_html(gold_pages: Callable[[str], Iterator[Any]]) -> list[bytes]:
    pages = []
    config = ExtractConfig(language="auto")
    for _, html, _, _ in gold_pages("cleaneval-dev"):
        if extract(html, "http://example.org/", config).kept:
            pages.append(html)
        if len(pages) == 40:
            break
    return pages


def expected_text(body: bytes, url: str) -> str:
    return extract(body, url, ExtractConfig(language="auto", max_bytes=10 * 1024 * 1024)).text


def build_cc_pair(folder: Path, gold_html: list[bytes]) -> tuple[Path, Path, dict[str, bytes]]:
    """Two CC-style files; the second has revisits of captures in the first, and one unknown."""
    folder.mkdir(parents=True, exist_ok=True)
    pages: dict[str, bytes] = {}
    first = ArchiveBuilder(folder / "CC-MAIN-test-00000.warc.gz")
    first.response("http://example.org/old", b"", status="301 Moved Permanently",
                   headers=[("Location", "/page0.html")])  # fmt: skip
    for i in range(6):
        url = f"http://example.org/page{i}.html"
        pages[url] = gold_html[i]
        first.response(url, gold_html[i])
    gz = gzip.compress(gold_html[6])
    pages["http://example.org/gzipped.html"] = gold_html[6]
    gzip_headers = [("Content-Encoding", "gzip"), ("Content-Length", str(len(gz)))]
    first.response("http://example.org/gzipped.html", gz, headers=gzip_headers)
    pages["http://example.org/chunked.html"] = gold_html[7]
    first.response("http://example.org/chunked.html", chunked(gold_html[7]),
                   headers=[("Transfer-Encoding", "chunked")])  # fmt: skip
    first.response("http://example.org/logo.png", b"\x89PNG\r\n\x1a\n" + b"\0" * 300,
                   content_type="image/png")  # fmt: skip
    first.response("http://example.org/gone.html", b"<html>gone</html>", status="404 Not Found")
    # a PDF labelled text/html (with a page's text in it): the live crawl's test
    # (`mediatype.is_html`) says not HTML, and so must `process`
    first.response("http://example.org/paper.pdf", b"%PDF-1.4\n" + gold_html[9])
    first.response("dns:example.org", b"192.0.2.7", content_type="text/dns", request=False)
    first.raw("http://example.org/page0.html", "conversion", b"plain text of a WET record",
              "text/plain")  # fmt: skip
    first.close()
    second = ArchiveBuilder(folder / "CC-MAIN-test-00001.warc.gz")
    second.response("http://example.org/other.html", gold_html[8])
    pages["http://example.org/other.html"] = gold_html[8]
    second.revisit("http://example.org/page1.html", first.digests["http://example.org/page1.html"],
                   "http://example.org/page1.html", "2024-01-02T03:04:05Z")  # fmt: skip
    second.revisit("http://example.org/mirror.html", first.digests["http://example.org/page2.html"],
                   "http://example.org/page2.html", "2024-01-02T03:04:05Z")  # fmt: skip
    second.revisit("http://example.org/lost.html", "sha1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
                   "http://elsewhere.example/lost.html", "2023-01-01T00:00:00Z")  # fmt: skip
    pages["http://example.org/mirror.html"] = gold_html[2]
    second.close()
    return first.path, second.path, pages


def test_a_common_crawl_style_archive_is_handled(gold_html: list[bytes], tmp_path: Path) -> None:
    first, second, pages = build_cc_pair(tmp_path / "cc", gold_html)
    out = tmp_path / "out"
    run_cli("process", str(first), str(second), "-o", str(out), "--no-progress", "-j", "2")
    docs = documents(out)
    assert set(docs) == set(pages) - {"http://example.org/mirror.html"}
    # the revisits resolved to their captures: page1 again (a later capture) and a mirror
    revisits = documents(out, pattern="revisits-*")
    assert set(revisits) == {"http://example.org/page1.html", "http://example.org/mirror.html"}
    assert revisits["http://example.org/page1.html"][1] == docs["http://example.org/page1.html"][1]
    docs.update({"http://example.org/mirror.html": revisits["http://example.org/mirror.html"]})
    for url, (attrs, paragraphs) in docs.items():
        assert "\n".join(t for _, t in paragraphs) == expected_text(pages[url], url), url
        assert attrs["id"] == hashlib.sha1(url.encode()).hexdigest()
    assert docs["http://example.org/mirror.html"][0]["crawl_date"] == "2024-02-02 03:04"
    assert docs["http://example.org/page0.html"][0]["url"] == "http://example.org/old"
    data = summary(out)
    assert data["revisits"] == {"resolved": 2, "unresolved": 1}
    assert data["dropped"] == {
        "not-html": 2, "http-status": 2, "no-http-headers": 1, "revisit-unresolved": 1,
    }  # fmt: skip
    assert data["records"]["warcinfo"] == 2
    assert data["records"]["metadata"] == 14 and data["records"]["conversion"] == 1
    assert data["records"]["revisit"] == 3
    assert data["documents"] == len(pages) + 1


def test_revisits_are_resolved_a_bounded_number_at_a_time(
    gold_html: list[bytes], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from corpus_crawler.process import LocalEngine, ProcessOptions, _runner, process_archives

    monkeypatch.setattr(_runner, "REVISITS_PER_UNIT", 1)
    first, second, _ = build_cc_pair(tmp_path / "cc", gold_html)
    engine = LocalEngine(1)
    try:
        result = process_archives([first, second], ProcessOptions(tmp_path / "out"), engine)
    finally:
        engine.close()
    # three pending revisits, one per unit: two resolved (two units), one not
    assert result.data["revisits"] == {"resolved": 2, "unresolved": 1}
    assert len(list((tmp_path / "out").glob("revisits-*.prevert"))) == 2
    assert set(documents(tmp_path / "out", pattern="revisits-*")) == {
        "http://example.org/page1.html", "http://example.org/mirror.html",
    }  # fmt: skip


def test_uncompressed_warc_and_sync_points(gold_html: list[bytes], tmp_path: Path) -> None:
    plain = ArchiveBuilder(tmp_path / "plain.warc", gzip_records=False)
    for i in range(5):
        plain.response(f"http://example.org/p{i}.html", gold_html[i])
    plain.close()
    assert sniff_kind(plain.path) is ArchiveKind.WARC
    with open(plain.path, "rb") as handle:
        starts = [0]
        iterator = ArchiveIterator(handle)
        for _ in iterator:
            starts.append(iterator.get_record_offset())
        starts = sorted(set(starts))
        for start in starts:
            assert next_record_start(handle, start, ArchiveKind.WARC) == start
            # from inside a record: the next record's start
            following = [s for s in starts if s > start]
            assert next_record_start(handle, start + 1, ArchiveKind.WARC) == (
                following[0] if following else None
            )
    out = tmp_path / "out"
    run_cli("process", str(plain.path), "-o", str(out), "--no-progress", "--chunk-mb", "0.02")
    assert set(documents(out)) == {f"http://example.org/p{i}.html" for i in range(5)}


def test_a_publication_date_after_the_archive_date_is_not_believed(
    gold_html: list[bytes], tmp_path: Path
) -> None:
    # process judges a declared date against the record's WARC-Date, not today: a page
    # archived in 2015 that says 2020 declares no real date (a placeholder, a bad clock)
    archive = ArchiveBuilder(tmp_path / "dated.warc.gz")
    for name, declared in (("before", "2015-03-01"), ("after", "2020-01-01")):
        meta = f'<meta property="article:published_time" content="{declared}">'.encode()
        body = b"<html><head>" + meta + b"</head><body>" + gold_html[0] + b"</body></html>"
        archive.response(f"http://example.org/{name}.html", body, date="2015-06-01T12:00:00Z")
    archive.close()
    out = tmp_path / "out"
    run_cli("process", str(archive.path), "-o", str(out), "--no-progress")
    docs = documents(out)
    assert docs["http://example.org/before.html"][0]["published"] == "2015-03-01"
    assert docs["http://example.org/after.html"][0]["published"] == ""


def test_splitting_a_file_into_ranges_changes_nothing(
    gold_html: list[bytes], tmp_path: Path
) -> None:
    builder = ArchiveBuilder(tmp_path / "big.warc.gz")
    for i in range(60):
        builder.response(f"http://example.org/p{i}.html", gold_html[i % len(gold_html)])
    builder.close()
    whole, split = tmp_path / "whole", tmp_path / "split"
    run_cli("process", str(builder.path), "-o", str(whole), "--no-progress", "-j", "1")
    # ~40 KB ranges: dozens of tasks, most starting inside a record
    run_cli("process", str(builder.path), "-o", str(split), "--no-progress", "-j", "2",
            "--chunk-mb", "0.04")  # fmt: skip
    assert doc_list(split) == doc_list(whole)
    assert len(doc_list(whole)) == 60
    assert documents(split) == documents(whole)
    con = sqlite3.connect(split / "process-state.sqlite")
    assert con.execute("SELECT count(*) FROM captures").fetchone() == (60,)


# -- damage ---------------------------------------------------------------------------------------


def member_offsets(path: Path) -> list[int]:
    with open(path, "rb") as handle:
        iterator = ArchiveIterator(handle)
        offsets = []
        for _ in iterator:
            offsets.append(iterator.get_record_offset())
    return offsets


def test_corrupt_and_truncated_records_are_reported_and_skipped(
    gold_html: list[bytes], tmp_path: Path
) -> None:
    builder = ArchiveBuilder(tmp_path / "damaged.warc.gz")
    for i in range(10):
        builder.response(f"http://example.org/p{i}.html", gold_html[i], request=False)
    builder.close()
    offsets = member_offsets(builder.path)  # warcinfo, then (response, metadata) x 10
    data = bytearray(builder.path.read_bytes())
    # corrupt the deflate stream in the middle of p3's response record
    p3 = offsets[1 + 2 * 3]
    for k in range(40, 60):
        data[p3 + k] ^= 0x5A
    # garbage between two records (a torn write from another tool)
    p6 = offsets[1 + 2 * 6]
    data[p6:p6] = b"\x00garbage\x1f\x8b\x08 not a member"
    # cut the file in the middle of p9's response
    p9 = offsets[1 + 2 * 9] + 27
    cut = bytes(data[: p9 + 200])
    damaged = tmp_path / "in" / "damaged.warc.gz"
    damaged.parent.mkdir()
    damaged.write_bytes(cut)
    out = tmp_path / "out"
    result = run_cli("process", str(damaged), "-o", str(out), "--no-progress")
    docs = documents(out)
    assert set(docs) == {f"http://example.org/p{i}.html" for i in (0, 1, 2, 4, 5, 6, 7, 8)}
    data_summary = summary(out)
    damage = data_summary["damaged_records"]
    assert damage and all(d["file"] == str(damaged.resolve()) for d in damage)
    offsets_reported = {d["offset"] for d in damage}
    assert p3 in offsets_reported
    assert data_summary["dropped"]["damaged-record"] == len(damage) >= 3
    assert "damaged records" in result.stderr


@pytest.mark.parametrize("gzipped", [True, False], ids=["warc.gz", "warc"])
def test_a_record_cut_by_the_end_of_the_file_is_reported_not_extracted(
    gold_html: list[bytes], tmp_path: Path, gzipped: bool
) -> None:
    """warcio hands out the record a file ends inside of as if it were whole: process
    made a document of the half page it held, and said nothing (a crawl killed
    mid-write, or a partial download, left such files)."""
    name = "cut.warc.gz" if gzipped else "cut.warc"
    builder = ArchiveBuilder(tmp_path / name, gzip_records=gzipped)
    for i in range(3):
        builder.response(f"http://example.org/p{i}.html", gold_html[i], request=False)
    builder.close()
    offsets = member_offsets(builder.path)  # warcinfo, then (response, metadata) x 3
    last, after = offsets[1 + 2 * 2], offsets[2 + 2 * 2]
    data = builder.path.read_bytes()
    source = tmp_path / "in" / name
    source.parent.mkdir()
    # inside the payload of p2's response, past its WARC and HTTP headers
    source.write_bytes(data[: last + (after - last) * 2 // 3])
    out = tmp_path / "out"
    result = run_cli("process", str(source), "-o", str(out), "--no-progress")
    assert set(documents(out)) == {"http://example.org/p0.html", "http://example.org/p1.html"}
    report = summary(out)
    (damage,) = report["damaged_records"]
    assert damage["offset"] == last
    assert "the file ends" in damage["error"] and "before the end of the record" in damage["error"]
    assert report["dropped"]["damaged-record"] == 1  # counted once, not per finding
    assert "damaged records: 1" in result.stderr
    # cut inside a header block (the metadata record after p1's response)
    start, end = offsets[2 + 2 * 1], offsets[3 + 2 * 1]
    record = data[start:end]
    if gzipped:
        record = zlib.decompress(record, zlib.MAX_WBITS | 16)
    head = record[:60]  # WARC/1.1, WARC-Type and part of WARC-Record-ID
    cut_header = tmp_path / "in2" / name
    cut_header.parent.mkdir()
    cut_header.write_bytes(data[:start] + (gzip.compress(head) if gzipped else head))
    out2 = tmp_path / "out2"
    run_cli("process", str(cut_header), "-o", str(out2), "--no-progress")
    (damage,) = summary(out2)["damaged_records"]
    assert damage["offset"] == offsets[2 + 2 * 1]
    assert "header block" in damage["error"], damage
    assert set(documents(out2)) == {"http://example.org/p0.html", "http://example.org/p1.html"}


def test_a_file_damaged_from_its_start_is_reported(tmp_path: Path) -> None:
    source = tmp_path / "broken.warc.gz"
    source.write_bytes(b"\x1f\x8b\x08\x00garbage, not a gzip member")
    out = tmp_path / "out"
    result = run_cli("process", str(source), "-o", str(out), "--no-progress")
    (damage,) = summary(out)["damaged_records"]
    assert damage["offset"] == 0 and "damaged from its start" in damage["error"]
    assert "damaged records: 1" in result.stderr


def test_arc_files_are_read(gold_html: list[bytes], tmp_path: Path) -> None:
    def arc_record(url: str, content_type: str, payload: bytes) -> bytes:
        head = f"{url} 192.0.2.1 20050614070159 {content_type} {len(payload)}\n".encode()
        return head + payload + b"\n"

    header = b"1 0 test\nURL IP-address Archive-date Content-type Archive-length\n"
    body = gold_html[0]
    http = b"HTTP/1.0 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n" % len(body)
    records = [
        arc_record("filedesc://old.arc", "text/plain", header),
        arc_record("http://example.org/a.html", "text/html", http + body),
        arc_record("http://example.org/b.png", "image/png", b"0123456789"),
    ]
    (tmp_path / "old.arc").write_bytes(b"".join(records))
    # one gzip member per record, as ARC and WARC writers do
    (tmp_path / "old.arc.gz").write_bytes(b"".join(gzip.compress(r) for r in records))
    for name in ("old.arc", "old.arc.gz"):
        out = tmp_path / f"out-{name}"
        run_cli("process", str(tmp_path / name), "-o", str(out), "--no-progress")
        docs = documents(out)
        assert set(docs) == {"http://example.org/a.html"}
        text = "\n".join(t for _, t in docs["http://example.org/a.html"][1])
        assert text == expected_text(body, "http://example.org/a.html")
        assert docs["http://example.org/a.html"][0]["crawl_date"] == "2005-06-14 07:01"
        assert summary(out)["dropped"] == {"no-http-headers": 1}
    # gzipped as a whole (not per record): reported with the fix, not fatal
    (tmp_path / "whole.arc.gz").write_bytes(gzip.compress(b"".join(records)))
    result = run_cli("process", str(tmp_path / "whole.arc.gz"), "-o", str(tmp_path / "w"))
    (damage,) = summary(tmp_path / "w")["damaged_records"]
    assert "warcio recompress" in damage["error"] and "damaged records: 1" in result.stderr
    assert "process: 100%" in result.stderr  # the progress bar


def test_the_dedup_hook_sees_every_document_in_input_order(
    gold_html: list[bytes], tmp_path: Path
) -> None:
    from corpus_crawler.process import LocalEngine, ProcessOptions, process_archives

    builder = ArchiveBuilder(tmp_path / "dups.warc.gz")
    for i in range(12):
        builder.response(f"http://example.org/p{i}.html", gold_html[i % 4])
    builder.close()
    seen: list[str] = []
    texts: set[str] = set()

    def keep_first(document: Any, meta: Any) -> bool:
        seen.append(meta.final_url)
        # the hook gets whole documents, paragraphs and all
        assert document.paragraphs == tuple(p for p in document.paragraphs)
        new = document.text not in texts
        texts.add(document.text)
        return new

    engine = LocalEngine(2)
    try:
        result = process_archives(
            [builder.path],
            ProcessOptions(tmp_path / "out", document_filter=keep_first, chunk_bytes=50_000),
            engine,
        )
    finally:
        engine.close()
    assert seen == [f"http://example.org/p{i}.html" for i in range(12)]
    assert result.documents == 4 and result.dropped == {"duplicate": 8}
    assert doc_list(tmp_path / "out") == [f"http://example.org/p{i}.html" for i in range(4)]


def test_not_an_archive_is_a_clear_error(tmp_path: Path) -> None:
    bogus = tmp_path / "notes.warc.gz"
    bogus.write_bytes(b"hello, this is not a WARC file\n")
    result = run_cli("process", str(bogus), "-o", str(tmp_path / "out"), check=False)
    assert result.returncode == 2
    assert str(bogus) in result.stderr and "not a WARC or ARC" in result.stderr
    missing = run_cli("process", str(tmp_path / "nope.warc"), "-o", str(tmp_path / "o"),
                      check=False)  # fmt: skip
    assert missing.returncode == 2 and "no such file" in missing.stderr
    # an input inside the output folder: a redone input deletes outputs, so never there
    folder = tmp_path / "mixed"
    folder.mkdir()
    inside = ArchiveBuilder(folder / "x.warc.gz")
    inside.close()
    mixed = run_cli("process", str(inside.path), "-o", str(folder), check=False)
    assert mixed.returncode == 2 and "inside the output folder" in mixed.stderr
    assert sorted(p.name for p in folder.iterdir()) == ["x.warc.gz"]


# -- resume ---------------------------------------------------------------------------------


def test_resume_after_kill_9_gives_each_document_exactly_once(
    gold_html: list[bytes], tmp_path: Path
) -> None:
    inputs = []
    (tmp_path / "in").mkdir()
    for n in range(4):
        builder = ArchiveBuilder(tmp_path / "in" / f"part-{n}.warc.gz")
        for i in range(40):
            builder.response(f"http://example.org/{n}/p{i}.html", gold_html[i % len(gold_html)])
        builder.close()
        inputs.append(str(builder.path))
    reference = tmp_path / "reference"
    run_cli("process", *inputs, "-o", str(reference), "--no-progress", "-j", "2")
    expected = sorted(doc_list(reference))
    assert len(expected) == 160

    out = tmp_path / "out"
    command = [sys.executable, "-m", "corpus_crawler.cli", "process", *inputs, "-o", str(out),
               "--no-progress", "-j", "1", "--chunk-mb", "0.1"]  # fmt: skip
    process = subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True,
    )  # fmt: skip
    state = out / "process-state.sqlite"
    deadline = time.monotonic() + TIMEOUT
    try:
        # kill once the first input is finished and the second one has files open
        while time.monotonic() < deadline:
            if state.exists() and list(out.glob("part-1*.prevert.open")):
                break
            assert process.poll() is None, "the run ended before it could be killed"
            time.sleep(0.05)
        else:
            raise AssertionError("the run never reached its second input")
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=60)
    assert list(out.glob("*.open")), "killed while writing: a file should be left open"
    done_before = sqlite3.connect(state).execute("SELECT count(*) FROM units WHERE done=1")
    assert done_before.fetchone()[0] >= 1

    result = run_cli("process", *inputs, "-o", str(out), "--no-progress", "-j", "2",
                     "--chunk-mb", "0.1")  # fmt: skip
    assert not list(out.glob("*.open"))
    assert sorted(doc_list(out)) == expected  # each document exactly once
    assert documents(out) == documents(reference)
    data = summary(out)
    assert data["this_run"]["units_skipped"] >= 1
    assert data["documents"] == 160
    assert "already done" in result.stderr
    # a third run has nothing left to do
    again = run_cli("process", *inputs, "-o", str(out), "--no-progress")
    assert "0 processed, 4 already done" in again.stderr
    assert sorted(doc_list(out)) == expected


def test_a_worker_killed_mid_task_is_replaced_and_its_task_redone(
    gold_html: list[bytes], tmp_path: Path
) -> None:
    import psutil  # comes with distributed (the test extra)

    builder = ArchiveBuilder(tmp_path / "in.warc.gz")
    for i in range(80):
        builder.response(f"http://example.org/p{i}.html", gold_html[i % len(gold_html)])
    builder.close()
    out = tmp_path / "out"
    command = [sys.executable, "-m", "corpus_crawler.cli", "process", str(builder.path),
               "-o", str(out), "--no-progress", "-j", "1", "--chunk-mb", "0.1"]  # fmt: skip
    process = subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    killed = None
    deadline = time.monotonic() + TIMEOUT
    try:
        main = psutil.Process(process.pid)
        while killed is None and time.monotonic() < deadline:
            # the pool's workers: the fork server's children (grandchildren of the run)
            for child in main.children():
                workers = child.children()
                if workers and list(out.glob("*.prevert.open")):
                    killed = workers[0].pid
                    os.kill(killed, signal.SIGKILL)
                    break
            time.sleep(0.05)
        try:
            _, stderr = process.communicate(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            # stuck: the run's threads' stacks (faulthandler on SIGUSR1) say where
            process.send_signal(signal.SIGUSR1)
            time.sleep(2)
            process.kill()
            _, stderr = process.communicate()
            pytest.fail(f"process hung after worker {killed} was killed:\n{stderr[-6000:]}")
    finally:
        if process.poll() is None:
            process.kill()
    assert killed is not None, "no worker was found to kill"
    assert process.returncode == 0, stderr[-3000:]
    assert "a worker died" in stderr
    assert sorted(doc_list(out)) == sorted(f"http://example.org/p{i}.html" for i in range(80))
    assert summary(out)["failed_tasks"] == []


# -- Dask -----------------------------------------------------------------------------------


def test_a_local_dask_cluster_gives_the_same_documents(
    gold_html: list[bytes], tmp_path: Path
) -> None:
    first, second, _ = build_cc_pair(tmp_path / "cc", gold_html)
    local, dask = tmp_path / "local", tmp_path / "dask"
    run_cli("process", str(first), str(second), "-o", str(local), "--no-progress")
    result = run_cli("process", str(first), str(second), "-o", str(dask), "--no-progress",
                     "--dask", "-j", "2")  # fmt: skip
    assert documents(dask) == documents(local)
    assert documents(dask, pattern="revisits-*") == documents(local, pattern="revisits-*")
    assert summary(dask)["this_run"]["engine"] == "dask"
    assert Counter(summary(dask)["dropped"]) == Counter(summary(local)["dropped"])
    assert "dask" in result.stderr
    # the same command against a running cluster's scheduler (here one on 127.0.0.1)
    from distributed import LocalCluster

    with LocalCluster(
        n_workers=1, threads_per_worker=1, host="127.0.0.1", dashboard_address=None
    ) as cluster:
        remote = tmp_path / "remote"
        result = run_cli("process", str(first), str(second), "-o", str(remote), "--no-progress",
                         "--scheduler", cluster.scheduler_address)  # fmt: skip
    assert documents(remote) == documents(local)
    assert summary(remote)["this_run"]["engine"] == f"dask {cluster.scheduler_address}"


# -- the dedup stages -------------------------------------------------------------------------


DEDUP_PROFILE = """\
name: reprocess-dedup
seeds:
  urls: {seeds}
scope:
  max_depth: 2
politeness:
  obey_robots_txt: false
  concurrent_requests: 8
  concurrent_requests_per_domain: 4
  download_delay: 0
  autothrottle: false
network:
  allowed_networks: [127.0.0.0/8]
extraction:
  language: auto
  # one extraction worker: the crawl's dedup sees pages in the order its WARC holds them
  workers: 1
output:
  progress_interval: 0
  report: false  # the HTML report has tests of its own; nothing here reads it
  warc:
    prefix: live
dedup:
  enabled: true
  paragraph_filter_mib: 8
yield:
  preset: "off"
"""


def texts(folder: Path, pattern: str = "*") -> Counter[tuple[str, ...]]:
    """The documents of a folder's prevertical files as paragraph texts (a multiset)."""
    return Counter(
        tuple(" ".join(text.split()) for _, text in paragraphs)
        for path in sorted(folder.glob(f"{pattern}.prevert"))
        for _, paragraphs in read_vertical(path)
    )


@pytest.fixture(scope="module")
def dedup_crawl(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    site = dup_site.build_dup_site()
    work = tmp_path_factory.mktemp("dedup-live")
    out = work / "crawl"
    with dup_site.MultiHostServer(site.hosts) as server:
        seeds = [server.base_url(address) + "/" for address in site.hosts]
        profile = work / "profile.yaml"
        profile.write_text(DEDUP_PROFILE.format(seeds=json.dumps(seeds)), encoding="utf-8")
        run_cli("crawl", str(profile), "-o", str(out))
    return profile, out


def test_process_runs_the_crawls_dedup_stages(
    dedup_crawl: tuple[Path, Path], tmp_path: Path
) -> None:
    profile, crawl_out = dedup_crawl
    warcs = sorted(crawl_out.glob("*.warc.gz"))
    assert warcs
    live_summary = next(crawl_out.glob("*-summary.json"))
    live_dropped = json.loads(live_summary.read_text("utf-8"))["dropped"]
    # the site's planted copies: the crawl dropped some of each kind
    assert live_dropped.get("duplicate", 0) > 0 and live_dropped.get("near-duplicate", 0) > 0
    runs = {}
    for jobs in ("2", "1"):
        out = tmp_path / f"j{jobs}"
        result = run_cli("process", *map(str, warcs), "-o", str(out), "--profile", str(profile),
                         "-j", jobs, "--chunk-mb", "0.05", "--no-progress")  # fmt: skip
        runs[jobs] = out
        assert "dedup:" in result.stderr
    live = texts(crawl_out, "live*")
    assert sum(live.values()) >= 20
    # the same kept documents, text equal (paragraphs seen before removed alike) ...
    assert texts(runs["2"]) == live
    data = summary(runs["2"])
    assert data["documents"] == sum(live.values())
    # ... and the same number dropped as duplicates and near-duplicates
    for reason in ("duplicate", "near-duplicate"):
        assert data["dropped"].get(reason, 0) == live_dropped.get(reason, 0), reason
    assert data["dedup"]["paragraphs_removed"] > 0
    # archive order decides, whatever -j is: the very same files
    assert documents(runs["1"]) == documents(runs["2"])
    assert (out / "state" / "dedup" / "dedup.sqlite").is_file()


def _dedup_inputs(gold_html: list[bytes], folder: Path) -> list[str]:
    """Four archives of 20 gold pages each, half of them seen in the archive before, and
    three near copies (a paragraph added) per archive."""
    folder.mkdir()
    inputs = []
    for n in range(4):
        builder = ArchiveBuilder(folder / f"part-{n}.warc.gz")
        for k in range(20):
            i = (n * 10 + k) % 40
            builder.response(f"http://example.org/{n}/p{i}.html", gold_html[i])
            if k < 3:
                extra = (
                    f"<p>An added paragraph of copy {n}-{k}: the page was shared again"
                    " with one more sentence at the end of its text.</p></body>"
                ).encode()
                near = gold_html[i].replace(b"</body>", extra, 1)
                builder.response(f"http://example.org/{n}/near{i}.html", near)
        builder.close()
        inputs.append(str(builder.path))
    return inputs


def test_resume_after_kill_9_with_dedup_keeps_each_document_once(
    gold_html: list[bytes], tmp_path: Path
) -> None:
    inputs = _dedup_inputs(gold_html, tmp_path / "in")
    reference = tmp_path / "reference"
    run_cli("process", *inputs, "-o", str(reference), "--dedup", "--no-progress", "-j", "2")
    expected = sorted(doc_list(reference))
    reference_summary = summary(reference)
    assert reference_summary["dropped"]["duplicate"] >= 40
    assert len(expected) >= 35

    out = tmp_path / "out"
    command = [sys.executable, "-m", "corpus_crawler.cli", "process", *inputs, "-o", str(out),
               "--dedup", "--no-progress", "-j", "1", "--chunk-mb", "0.1"]  # fmt: skip
    process = subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True,
    )  # fmt: skip
    deadline = time.monotonic() + TIMEOUT
    try:
        # killed inside the second archive, whose new pages are kept but not committed
        while time.monotonic() < deadline:
            if list(out.glob("part-1*.prevert.open")):
                break
            assert process.poll() is None, "the run ended before it could be killed"
            time.sleep(0.05)
        else:
            raise AssertionError("the run never reached its second input")
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=60)
    assert list(out.glob("*.open")), "killed while writing: a file should be left open"

    run_cli("process", *inputs, "-o", str(out), "--dedup", "--no-progress", "-j", "2",
            "--chunk-mb", "0.1")  # fmt: skip
    # each document once, none lost: the stores forgot what the killed unit had added
    assert sorted(doc_list(out)) == expected
    assert documents(out) == documents(reference)
    data = summary(out)
    for reason in ("duplicate", "near-duplicate"):
        assert data["dropped"].get(reason, 0) == reference_summary["dropped"].get(reason, 0)


def test_a_commit_interrupted_between_the_stores_and_the_state_is_finished(
    gold_html: list[bytes], tmp_path: Path
) -> None:
    """The window of the two-phase commit, set up by hand: a unit prepared in the state
    whose dedup stores committed is finished, not redone (its documents would all be
    duplicates of themselves); one whose stores did not commit is redone."""
    inputs = _dedup_inputs(gold_html, tmp_path / "in")[:2]
    out = tmp_path / "out"
    run_cli("process", *inputs, "-o", str(out), "--dedup", "--no-progress", "-j", "2")
    expected = documents(out)
    state = sqlite3.connect(out / "process-state.sqlite", isolation_level=None)
    stores = sqlite3.connect(out / "state" / "dedup" / "dedup.sqlite")
    stored = stores.execute("SELECT count(*) FROM documents").fetchone()[0]
    stores.close()
    key = inputs[1]
    stats = state.execute("SELECT stats FROM units WHERE key=?", (key,)).fetchone()[0]
    state.execute("UPDATE units SET done=0 WHERE key=?", (key,))
    state.execute("INSERT INTO prepared VALUES (?, ?, '[]', ?, x'')", (key, stats, stored))
    result = run_cli("process", *inputs, "-o", str(out), "--dedup", "--no-progress")
    assert "0 processed, 2 already done" in result.stderr
    assert documents(out) == expected

    # the stores hold fewer documents than prepared: they never committed the unit
    state.execute("UPDATE units SET done=0 WHERE key=?", (key,))
    state.execute("INSERT INTO prepared VALUES (?, ?, '[]', ?, x'')", (key, stats, stored + 5))
    state.close()
    result = run_cli("process", *inputs, "-o", str(out), "--dedup", "--no-progress")
    assert "1 processed, 1 already done" in result.stderr
    # redone against stores that hold its documents: all of them are duplicates now
    assert not any(url.startswith("http://example.org/1/") for url in documents(out))


def test_records_built_in_a_worker_are_what_the_writer_writes(
    gold_html: list[bytes], tmp_path: Path
) -> None:
    from datetime import datetime, timezone

    from corpus_crawler.warc import WarcConfig, WarcWriter, document_records

    moment = datetime(2024, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
    document = extract(gold_html[0], "http://example.org/a.html", ExtractConfig(language="auto"))
    assert document.kept

    def counter() -> Callable[[], str]:
        numbers = iter(range(1, 100))
        return lambda: f"<urn:uuid:00000000-0000-4000-8000-{next(numbers):012d}>"

    def writer(folder: Path, ids: Callable[[], str]) -> WarcWriter:
        config = WarcConfig(folder, prefix="x", hostname="host", paragraph_metadata=True)
        return WarcWriter(config, clock=lambda: moment, record_ids=ids)

    written = writer(tmp_path / "written", counter())
    written.write_document(document, refers_to="<urn:uuid:source>", date=moment)
    written.close()
    ids = counter()
    warcinfo_id = ids()  # what the writer mints first, for its warcinfo record
    data, _, _ = document_records(
        document, refers_to="<urn:uuid:source>", url=None, date=moment,
        warcinfo_id=warcinfo_id, paragraph_metadata=True, record_ids=ids,
    )  # fmt: skip
    appended = writer(tmp_path / "appended", counter())
    appended.append_text_records(data, warcinfo_id=warcinfo_id)
    with pytest.raises(ValueError, match="cannot go to"):
        # records built for another file's warcinfo never land in this one
        appended.append_text_records(data, warcinfo_id="<urn:uuid:another>")
    appended.close()
    (first,) = (tmp_path / "written").glob("*.warc.wet.gz")
    (second,) = (tmp_path / "appended").glob("*.warc.wet.gz")
    assert first.name == second.name
    assert gzip.decompress(first.read_bytes()) == gzip.decompress(second.read_bytes())
