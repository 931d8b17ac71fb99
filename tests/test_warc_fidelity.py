"""WARC writer fidelity, unit by unit: raw headers, truncation, fetch time, revisits,
payload types and languages, CDXJ files. (A real crawl: tests/test_warc_wire.py.)"""

from __future__ import annotations

import gzip
import zlib
from datetime import timedelta
from pathlib import Path

import pytest
from test_warc import (  # every_warc_passes_the_checker: warcio check after each test
    START,
    assert_golden,
    every_warc_passes_the_checker,  # noqa: F401
    fake_clock,
    fake_ids,
    make_config,
    records,
)

from corpus_crawler.warc import (
    Exchange,
    RevisitProfile,
    Truncation,
    WarcWriter,
    cdxj_path,
    header_pairs,
    identify_payload_type,
    iso639_3,
    payload_digest,
    recover,
    stored_response_headers,
)

HTML = b"<!DOCTYPE html><html><body><p>Ahoj sv\xc4\x9bte.</p></body></html>"
LOCATION = "/čeština/stránka.html".encode()


def fidelity_exchanges() -> list[Exchange]:
    sent = START + timedelta(minutes=1)
    received = sent + timedelta(milliseconds=250)
    return [
        Exchange(
            url="https://example.cz/",
            status=200,
            status_line="HTTP/1.1 200 Everything Fine",
            body=HTML,
            response_headers=header_pairs(
                [
                    (b"content-type", b"text/html; charset=utf-8"),
                    (b"ETag", b'"\xc3\xba"'),
                    (b"Set-Cookie", b"a=1"),
                    (b"X-Between", b"1"),
                    (b"Set-Cookie", b"b=2"),
                    (b"Connection", b"keep-alive"),
                    (b"Transfer-Encoding", b"chunked"),
                ]
            ),
            request_headers=(("User-Agent", "corpus-crawler/test"),),
            body_decoded=False,
            request_date=sent,
            date=received,
            fetch_time_ms=250,
        ),
        Exchange(
            url="https://example.cz/old",
            status=301,
            status_line="HTTP/1.1 301 Moved",
            response_headers=header_pairs([(b"Location", LOCATION), (b"Content-Length", b"0")]),
            body_decoded=False,
            request_date=sent,
            date=received,
            fetch_time_ms=3,
        ),
        Exchange(
            url="https://example.cz/big",
            status=200,
            body=HTML[:20],
            response_headers=(("Content-Type", "text/html"), ("Content-Length", "123456")),
            body_decoded=False,
            date=received,
            truncated=Truncation.LENGTH,
            fetch_time_ms=40,
        ),
    ]


def write_fidelity_sample(directory: Path) -> WarcWriter:
    writer = WarcWriter(make_config(directory), clock=fake_clock(), record_ids=fake_ids())
    with writer:
        first = writer.write_exchange(fidelity_exchanges()[0])
        for exchange in fidelity_exchanges()[1:]:
            writer.write_exchange(exchange)
        later = fidelity_exchanges()[0]
        writer.write_revisit(
            Exchange(
                url=later.url,
                status=200,
                body=HTML,
                response_headers=(("Content-Type", "text/html; charset=utf-8"),),
                date=START + timedelta(days=1),
            ),
            profile=RevisitProfile.IDENTICAL_PAYLOAD_DIGEST,
            refers_to=first.response_id,
            refers_to_uri=later.url,
            refers_to_date=START + timedelta(minutes=1, milliseconds=250),
        )
    return writer


def http_head(path: Path, record_id: str) -> bytes:
    text = gzip.decompress(path.read_bytes())
    start = text.index(b"WARC-Record-ID: " + record_id.encode())
    block = text[start:].split(b"\r\n\r\n", 2)
    return block[1]


def test_fidelity_golden_byte_for_byte(tmp_path: Path) -> None:
    writer = write_fidelity_sample(tmp_path)
    (path,) = writer.files
    assert_golden("fidelity.warc", gzip.decompress(path.read_bytes()))


def test_headers_are_stored_as_received(tmp_path: Path) -> None:
    (path,) = write_fidelity_sample(tmp_path).files
    recs = records(path)
    response = recs[2]
    head = http_head(path, response.rec_headers["WARC-Record-ID"])
    assert head.split(b"\r\n") == [
        b"HTTP/1.1 200 Everything Fine",
        b"content-type: text/html; charset=utf-8",
        b'ETag: "\xc3\xba"',
        b"Set-Cookie: a=1",
        b"X-Between: 1",
        b"Set-Cookie: b=2",
        b"Connection: keep-alive",
        b"X-Crawler-Transfer-Encoding: chunked",
    ]
    assert response.test_content == HTML
    assert response.rec_headers["WARC-Identified-Payload-Type"] == "text/html"


def test_request_and_response_have_their_own_dates_and_a_fetch_time(tmp_path: Path) -> None:
    (path,) = write_fidelity_sample(tmp_path).files
    info, request, response, metadata = records(path)[:4]
    assert request.rec_headers["WARC-Date"] == "2024-05-06T07:09:09.123456Z"
    assert response.rec_headers["WARC-Date"] == "2024-05-06T07:09:09.373456Z"
    # the warcinfo is dated no later than the first record of its file
    assert info.rec_headers["WARC-Date"] <= request.rec_headers["WARC-Date"]
    assert metadata.rec_type == "metadata"
    assert metadata.rec_headers["Content-Type"] == "application/warc-fields"
    assert metadata.rec_headers["WARC-Concurrent-To"] == response.rec_headers["WARC-Record-ID"]
    assert metadata.test_content == b"fetchTimeMs: 250\r\n"


def test_a_non_ascii_location_is_followable_and_kept_raw(tmp_path: Path) -> None:
    (path,) = write_fidelity_sample(tmp_path).files
    redirect = [r for r in records(path) if r.rec_type == "response"][1]
    head = http_head(path, redirect.rec_headers["WARC-Record-ID"])
    assert head.split(b"\r\n") == [
        b"HTTP/1.1 301 Moved",
        b"Location: /%C4%8De%C5%A1tina/str%C3%A1nka.html",
        b"X-Crawler-Location: " + LOCATION,
        b"Content-Length: 0",
    ]


def test_a_truncated_body_is_marked_and_its_length_renamed(tmp_path: Path) -> None:
    (path,) = write_fidelity_sample(tmp_path).files
    big = [r for r in records(path) if r.rec_type == "response"][2]
    assert big.rec_headers["WARC-Truncated"] == "length"
    assert big.test_content == HTML[:20]
    assert big.http_headers.get_header("Content-Length") is None
    assert big.http_headers.get_header("X-Crawler-Content-Length") == "123456"
    metadata = [r for r in records(path) if r.rec_type == "metadata"][2]
    assert metadata.test_content == b"fetchTimeMs: 40\r\ntruncated: length\r\n"


def test_a_revisit_names_what_it_repeats(tmp_path: Path) -> None:
    (path,) = write_fidelity_sample(tmp_path).files
    recs = records(path)
    first = recs[2]
    (revisit,) = [r for r in recs if r.rec_type == "revisit"]
    headers = revisit.rec_headers
    assert headers["WARC-Profile"] == str(RevisitProfile.IDENTICAL_PAYLOAD_DIGEST)
    assert headers["WARC-Refers-To"] == first.rec_headers["WARC-Record-ID"]
    assert headers["WARC-Refers-To-Target-URI"] == first.rec_headers["WARC-Target-URI"]
    assert headers["WARC-Refers-To-Date"] == first.rec_headers["WARC-Date"]
    assert headers["WARC-Payload-Digest"] == first.rec_headers["WARC-Payload-Digest"]
    assert headers["WARC-Payload-Digest"] == payload_digest(HTML)
    assert revisit.test_content == b""


def test_every_finished_file_gets_its_cdxj(tmp_path: Path) -> None:
    writer = write_fidelity_sample(tmp_path)
    (path,) = writer.files
    (index,) = writer.index_files
    assert index == cdxj_path(path) == tmp_path / (path.name.removesuffix(".warc.gz") + ".cdxj")
    lines = index.read_text().splitlines()
    # three responses and one revisit; requests and warc-fields metadata are not captures
    assert len(lines) == 4
    assert sum('"mime": "warc/revisit"' in line for line in lines) == 1
    assert lines == sorted(lines)


def test_recover_indexes_a_recovered_warc(tmp_path: Path) -> None:
    writer = write_fidelity_sample(tmp_path / "source")
    (path,) = writer.files
    out = tmp_path / "out"
    out.mkdir()
    (out / (path.name + ".open")).write_bytes(path.read_bytes())
    (result,) = recover(out)
    assert result.destination == out / path.name
    assert cdxj_path(out / path.name).read_text() == writer.index_files[0].read_text()


@pytest.mark.parametrize(
    ("body", "headers", "expected"),
    [
        (b"<!doctype html><p>x", [("Content-Type", "text/plain")], "text/html"),
        (b"  <HTML>\n<p>x", [], "text/html"),
        (gzip.compress(b"<html><p>x", mtime=0), [("Content-Encoding", "gzip")], "text/html"),
        (zlib.compress(b"<html><p>x"), [("Content-Encoding", "deflate")], "text/html"),
        (b"%PDF-1.7\n...", [("Content-Type", "text/html")], "application/pdf"),
        (b"\x89PNG\r\n\x1a\nrest", [], "image/png"),
        (b"<?xml?><rss/>", [("Content-Type", "application/rss+xml")], "application/rss+xml"),
        (b"<?xml version='1.0'?><urlset/>", [("Content-Type", "text/html")], "application/xml"),
        (b'{"a": 1}', [("Content-Type", "application/json; charset=utf-8")], "application/json"),
        (b"plain words", [], "text/plain"),
        (b"\x00\x01binary", [("Content-Type", "text/plain")], "application/octet-stream"),
        (b"", [("Content-Type", "text/html")], ""),
        (b"not gzip at all", [("Content-Encoding", "gzip")], ""),
    ],
)  # fmt: skip
def test_identify_payload_type(body: bytes, headers: list[tuple[str, str]], expected: str) -> None:
    assert identify_payload_type(body, headers) == expected


@pytest.mark.parametrize(
    ("code", "expected"),
    [("cs", "ces"), ("en", "eng"), ("sk-SK", "slk"), ("zh_Hant", "zho"), ("deu", "deu"),
     ("cze", "ces"), ("xx", ""), ("", ""), ("und-x-private", "")],
)  # fmt: skip
def test_iso639_3(code: str, expected: str) -> None:
    assert iso639_3(code) == expected


def test_only_the_framing_headers_of_a_raw_body_are_renamed() -> None:
    headers = [("Content-Encoding", "gzip"), ("Content-Length", "10"), ("X-A", "1")]
    assert stored_response_headers(headers, 10, body_decoded=False) == headers
    assert stored_response_headers(headers, 4, body_decoded=False, truncated=True) == [
        ("Content-Encoding", "gzip"),
        ("X-Crawler-Content-Length", "10"),
        ("X-A", "1"),
    ]


def test_exchange_rejects_a_status_line_without_version() -> None:
    with pytest.raises(ValueError, match="status_line"):
        Exchange(url="https://example.com/", status=200, status_line="200 OK")
