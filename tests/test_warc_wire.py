"""The WARC of a real crawl holds the exchanges as they went over the wire.

One crawl (a `corpus-crawler crawl` subprocess) of tests/site/wire_site.py, a
loopback server that writes exact bytes: an odd reason phrase, mixed header
case, repeated ``Set-Cookie``, raw UTF-8 header values, a chunked page, a gzip
page, a redirect whose ``Location`` is raw UTF-8, a page over the size cap and
one that stalls mid-body. The files are read back with warcio, FastWARC and
cdxj-indexer.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import wire_site
from warcio.archiveiterator import ArchiveIterator

PAGES = wire_site.PAGES


@dataclass
class Record:
    type: str
    headers: dict[str, str]
    #: The HTTP head exactly as stored (status line and header lines), for requests/responses.
    head: bytes
    #: The stored payload, undecoded (content coding as sent).
    payload: bytes
    path: Path
    offset: int


def read_records(path: Path) -> list[Record]:
    data = path.read_bytes()
    out: list[Record] = []
    with open(path, "rb") as handle:
        iterator = ArchiveIterator(handle, check_digests="raise")
        for record in iterator:
            record.content_stream().read()  # digests are checked as the content is read
            offset, length = iterator.get_record_offset(), iterator.get_record_length()
            block = zlib.decompress(data[offset : offset + length], zlib.MAX_WBITS | 16)
            block = block.split(b"\r\n\r\n", 1)[1]  # after the WARC headers
            head, payload = b"", block
            if record.rec_type in ("request", "response", "revisit"):
                head, _, payload = block.partition(b"\r\n\r\n")
            out.append(
                Record(
                    type=record.rec_type,
                    headers=dict(record.rec_headers.headers),
                    head=head,
                    payload=payload.removesuffix(b"\r\n\r\n"),
                    path=path,
                    offset=offset,
                )
            )
    return out


@dataclass
class Crawl:
    out: Path
    base_url: str
    stdout: str
    request_heads: dict[str, bytes]
    warcs: list[Path]
    texts: list[Path]
    records: list[Record]
    text_records: list[Record]
    summary: dict[str, Any]

    def response(self, path: str) -> Record:
        (found,) = [
            r
            for r in self.records
            if r.type == "response" and r.headers["WARC-Target-URI"] == self.base_url + path
        ]
        return found


@pytest.fixture(scope="module")
def crawl(tmp_path_factory: pytest.TempPathFactory) -> Crawl:
    result = wire_site.crawl(tmp_path_factory.mktemp("wire"), extra_args=("--wacz",))
    warcs = sorted(result.out.glob("*.warc.gz"))
    texts = sorted(result.out.glob("*.warc.wet.gz"))
    (summary,) = result.out.glob("*-summary.json")
    return Crawl(
        out=result.out,
        base_url=result.base_url,
        stdout=result.stdout,
        request_heads=result.request_heads,
        warcs=warcs,
        texts=texts,
        records=[r for path in warcs for r in read_records(path)],
        text_records=[r for path in texts for r in read_records(path)],
        summary=json.loads(summary.read_text(encoding="utf-8")),
    )


def test_status_line_and_headers_are_stored_byte_for_byte(crawl: Crawl) -> None:
    page = PAGES["/"]
    response = crawl.response("/")
    # the reason phrase, header case and order, both Set-Cookie lines around another
    # header, raw UTF-8 values and Connection: exactly the bytes the server sent
    assert response.head == page.status_line + b"\r\n" + b"\r\n".join(page.header_lines)
    assert response.payload == page.payload


def test_chunked_body_is_stored_dechunked_with_the_coding_renamed(crawl: Crawl) -> None:
    page = PAGES["/chunked.html"]
    response = crawl.response("/chunked.html")
    assert response.payload == page.payload
    lines = response.head.split(b"\r\n")
    assert lines[0] == page.status_line
    # nothing invented: the server sent no Content-Length, and the record has none
    assert lines[1:] == [
        b"Content-Type: text/html; charset=utf-8",
        b"X-Crawler-Transfer-Encoding: chunked",
        b"Connection: close",
    ]


def test_gzip_body_is_stored_as_sent(crawl: Crawl) -> None:
    page = PAGES["/gzip.html"]
    response = crawl.response("/gzip.html")
    assert response.head == page.status_line + b"\r\n" + b"\r\n".join(page.header_lines)
    assert response.payload == page.payload
    assert gzip.decompress(response.payload).startswith(b"<!DOCTYPE html>")
    # identified from the decoded bytes, not the gzip wrapper
    assert response.headers["WARC-Identified-Payload-Type"] == "text/html"


def test_non_ascii_redirect_keeps_its_bytes_and_a_followable_location(crawl: Crawl) -> None:
    response = crawl.response("/redirect")
    raw = wire_site.NON_ASCII_PATH_TEXT.encode("utf-8")
    lines = response.head.split(b"\r\n")
    assert lines[0] == b"HTTP/1.1 302 Found"
    assert b"Location: " + wire_site.NON_ASCII_PATH.encode() in lines
    assert b"X-Crawler-Location: " + raw in lines
    target = crawl.response(wire_site.NON_ASCII_PATH)
    assert target.payload == PAGES[wire_site.NON_ASCII_PATH].payload


def test_a_page_over_the_size_cap_is_archived_truncated_and_counted(crawl: Crawl) -> None:
    page = PAGES["/big.html"]
    assert len(page.payload) > wire_site.CAP
    response = crawl.response("/big.html")
    assert response.headers["WARC-Truncated"] == "length"
    assert response.payload == page.payload[: wire_site.CAP]
    assert b"X-Crawler-Content-Length: %d" % len(page.payload) in response.head.split(b"\r\n")
    assert crawl.summary["dropped"]["too-large"] == 1
    assert crawl.summary["stats"]["corpus/truncated/length"] == 1
    # a prefix is no document
    urls = {r.headers.get("WARC-Target-URI") for r in crawl.text_records}
    assert crawl.base_url + "/big.html" not in urls


def test_a_download_that_times_out_mid_body_keeps_its_prefix(crawl: Crawl) -> None:
    page = PAGES["/slow.html"]
    response = crawl.response("/slow.html")
    assert response.headers["WARC-Truncated"] == "time"
    assert response.payload == page.payload[: page.stall_after]
    assert crawl.summary["stats"]["corpus/truncated/time"] == 1


def test_request_is_dated_at_send_time_and_fetch_time_is_recorded(crawl: Crawl) -> None:
    by_id = {r.headers["WARC-Record-ID"]: r for r in crawl.records}
    responses = [r for r in crawl.records if r.type == "response"]
    fetch_times = {}
    for response in responses:
        request = by_id[response.headers["WARC-Concurrent-To"]]
        assert request.headers["WARC-Date"] < response.headers["WARC-Date"]
        (metadata,) = [
            r
            for r in crawl.records
            if r.type == "metadata"
            and r.headers.get("WARC-Concurrent-To") == response.headers["WARC-Record-ID"]
        ]
        assert metadata.headers["Content-Type"] == "application/warc-fields"
        fields = dict(line.split(": ", 1) for line in metadata.payload.decode().splitlines())
        fetch_times[response.headers["WARC-Target-URI"]] = int(fields["fetchTimeMs"])
    # the stalled page waited for the 2 s download timeout
    assert fetch_times[crawl.base_url + "/slow.html"] >= 1900
    assert min(fetch_times.values()) >= 0


def test_request_records_hold_the_request_head_the_server_received(crawl: Crawl) -> None:
    requests = [r for r in crawl.records if r.type == "request"]
    assert len(requests) == len(crawl.request_heads)
    for request in requests:
        path = request.headers["WARC-Target-URI"].removeprefix(crawl.base_url)
        # the request line, Host first, header case and order: as written to the socket
        assert request.head == crawl.request_heads[path], path


def test_the_request_sends_and_archives_the_from_header(crawl: Crawl) -> None:
    (request,) = [
        r
        for r in crawl.records
        if r.type == "request" and r.headers["WARC-Target-URI"] == crawl.base_url + "/"
    ]
    assert b"From: corpus@example.org" in request.head.split(b"\r\n")


def test_every_file_starts_with_a_warcinfo_naming_the_operator(crawl: Crawl) -> None:
    for path in crawl.warcs + crawl.texts:
        records = read_records(path)
        info = records[0]
        assert info.type == "warcinfo"
        assert info.headers["WARC-Filename"] == path.name
        fields = dict(line.split(": ", 1) for line in info.payload.decode().splitlines())
        assert fields["operator"] == "Corpus Team <corpus@example.org>"
        assert fields["publisher"] == "Example Institute"
        assert fields["http-header-from"] == "corpus@example.org"
        assert all(info.headers["WARC-Date"] <= r.headers["WARC-Date"] for r in records)


def test_text_records_live_in_their_own_files_and_refer_to_their_response(crawl: Crawl) -> None:
    assert crawl.texts
    assert not [r for r in crawl.records if r.type == "conversion"]
    responses = {r.headers["WARC-Record-ID"]: r for r in crawl.records if r.type == "response"}
    conversions = [r for r in crawl.text_records if r.type == "conversion"]
    assert len(conversions) == crawl.summary["pages"]["kept"] >= 4
    for conversion in conversions:
        response = responses[conversion.headers["WARC-Refers-To"]]
        assert response.headers["WARC-Target-URI"] == conversion.headers["WARC-Target-URI"]
        assert conversion.headers["WARC-Identified-Content-Language"] == "ces"
    for metadata in (r for r in crawl.text_records if r.type == "metadata"):
        assert metadata.headers["Content-Type"] == "application/warc-fields"
        assert metadata.headers["WARC-Refers-To"] in responses


def test_warcio_check_passes_on_every_file(crawl: Crawl) -> None:
    code = "import sys; from warcio.cli import main; sys.exit(main())"
    for path in crawl.warcs + crawl.texts:
        result = subprocess.run(
            [sys.executable, "-c", code, "check", "-v", str(path)],
            capture_output=True,
            text=True,
            check=False,
        )
        assert result.returncode == 0, result.stdout + result.stderr


def test_fastwarc_reads_every_record_with_valid_digests(crawl: Crawl) -> None:
    from fastwarc.warc import ArchiveIterator as FastIterator
    from fastwarc.warc import WarcRecordType

    for path in crawl.warcs + crawl.texts:
        expected = [r.headers["WARC-Record-ID"] for r in read_records(path)]
        # block digests over the unparsed block; payload digests after FastWARC's HTTP parse
        with open(path, "rb") as handle:
            blocks = [
                (record.headers["WARC-Record-ID"], record.verify_block_digest())
                for record in FastIterator(
                    handle, record_types=WarcRecordType.any_type, parse_http=False
                )
            ]
        assert blocks == [(record_id, True) for record_id in expected]
        with open(path, "rb") as handle:
            payloads = [
                record.verify_payload_digest()
                for record in FastIterator(handle, record_types=WarcRecordType.response)
            ]
        assert len(payloads) == sum(1 for r in read_records(path) if r.type == "response")
        assert all(payloads)


def test_a_cdxj_index_lies_beside_each_warc_and_matches_cdxj_indexer(crawl: Crawl) -> None:
    for path in crawl.warcs:
        index = path.with_name(path.name.removesuffix(".warc.gz") + ".cdxj")
        lines = index.read_text(encoding="utf-8").splitlines()
        result = subprocess.run(
            ["cdxj-indexer", "--sort", str(path)], capture_output=True, text=True, check=True
        )
        assert lines == result.stdout.splitlines()
        entries = [json.loads(line.split(" ", 2)[2]) for line in lines]
        # captures only: requests and warc-fields metadata are never replay targets
        responses = [r for r in read_records(path) if r.type == "response"]
        assert len(entries) == len(responses)
        assert {int(e["offset"]) for e in entries} == {r.offset for r in responses}
        assert {e["filename"] for e in entries} == {path.name}


def test_wacz_packages_the_warcs_with_an_index_and_pages(crawl: Crawl) -> None:
    package = crawl.out / "wire.wacz"
    assert f"WACZ:        {package}" in crawl.stdout
    with zipfile.ZipFile(package) as archive:
        names = set(archive.namelist())
        assert {f"archive/{p.name}" for p in crawl.warcs} <= names
        assert "datapackage.json" in names and "pages/pages.jsonl" in names
        assert any(name.startswith("indexes/") for name in names)
        for path in crawl.warcs:
            assert archive.read(f"archive/{path.name}") == path.read_bytes()
        pages = [json.loads(line) for line in archive.read("pages/pages.jsonl").splitlines()]
        urls = {page.get("url") for page in pages}
        assert crawl.base_url + "/" in urls
    result = subprocess.run(
        [sys.executable, "-m", "wacz", "validate", "-f", str(package)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_https_exchanges_are_stored_as_received_too(tmp_path: Path) -> None:
    result = wire_site.crawl(tmp_path, tls=True)
    assert result.base_url.startswith("https://")
    records = [r for path in sorted(result.out.glob("*.warc.gz")) for r in read_records(path)]

    def response(path: str) -> Record:
        (found,) = [
            r
            for r in records
            if r.type == "response" and r.headers["WARC-Target-URI"] == result.base_url + path
        ]
        return found

    page = PAGES["/"]
    assert response("/").head == page.status_line + b"\r\n" + b"\r\n".join(page.header_lines)
    assert response("/chunked.html").payload == PAGES["/chunked.html"].payload
    assert b"X-Crawler-Transfer-Encoding: chunked" in response("/chunked.html").head
    big = response("/big.html")
    assert big.headers["WARC-Truncated"] == "length"
    assert big.payload == PAGES["/big.html"].payload[: wire_site.CAP]
    assert response("/slow.html").headers["WARC-Truncated"] == "time"
