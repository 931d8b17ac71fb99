"""WARC writer: golden output, warcio/cdxj-indexer compatibility, rotation, crash recovery."""

from __future__ import annotations

import gzip
import itertools
import json
import os
import re
import subprocess
import sys
import zlib
from collections.abc import Callable, Iterator
from contextlib import redirect_stdout
from datetime import datetime, timedelta, timezone
from io import BytesIO, StringIO
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from warcio.archiveiterator import ArchiveIterator
from warcio.checker import Checker

from corpus_crawler import __version__
from corpus_crawler._files import gzip_member_ends
from corpus_crawler.config import ConfigError
from corpus_crawler.model import Document, DropReason, Paragraph, ParagraphClass
from corpus_crawler.warc import (
    CrawlInfo,
    Exchange,
    RecoveryAction,
    RobotsPolicy,
    WarcConfig,
    WarcWriter,
    header_pairs,
    recover,
    stored_response_headers,
)

GOLDEN = Path(__file__).parent / "golden"
UPDATE_GOLDEN = os.environ.get("CORPUS_CRAWLER_UPDATE_GOLDEN") == "1"
START = datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=timezone.utc)
G, B = ParagraphClass.GOOD, ParagraphClass.BAD


@pytest.fixture(autouse=True)
def every_warc_passes_the_checker(tmp_path: Path) -> Iterator[None]:
    """After each test, warcio's checker (the code behind ``warcio check``) must pass
    on every finished WARC the test left, except the ones it damaged on purpose."""
    yield
    paths = [
        p
        for pattern in ("*.warc.gz", "*.warc.wet.gz")
        for p in sorted(tmp_path.rglob(pattern))
        if not p.name.startswith("damaged")
    ]
    if not paths:
        return
    output = StringIO()
    with redirect_stdout(output):
        status = Checker(SimpleNamespace(inputs=[str(p) for p in paths], verbose=False))
        exit_value = status.process_all()
    assert exit_value == 0, output.getvalue()


def assert_golden(name: str, data: bytes) -> None:
    """Compare with tests/golden/<name>; CORPUS_CRAWLER_UPDATE_GOLDEN=1 rewrites it."""
    path = GOLDEN / name
    if UPDATE_GOLDEN:
        path.write_bytes(data)
    assert path.exists(), f"{path} is missing: run with CORPUS_CRAWLER_UPDATE_GOLDEN=1 once"
    assert data == path.read_bytes()


def fake_clock() -> Callable[[], datetime]:
    """Each call one second later than the previous one."""
    ticks = itertools.count()
    return lambda: START + timedelta(seconds=next(ticks))


def fake_ids() -> Callable[[], str]:
    counter = itertools.count(1)
    return lambda: f"<urn:uuid:00000000-0000-4000-8000-{next(counter):012d}>"


def make_config(directory: Path, **overrides: object) -> WarcConfig:
    values: dict[str, object] = {
        "prefix": "test",
        "hostname": "crawler1",
        "info": CrawlInfo(
            profile_name="cs-news",
            profile={"language": "cs", "depth": 3},
            robots=RobotsPolicy.CLASSIC,
            operator="Corpus Team <corpus@example.org>",
            user_agent="corpus-crawler/test (+https://example.org/bot)",
            software="corpus-crawler/golden",
        ),
    }
    values.update(overrides)
    return WarcConfig(directory, **values)  # type: ignore[arg-type]


HTML = b"<html><head><title>Hello</title></head><body><p>Hello world.</p></body></html>"
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\r\n\r\nbinary\x00\xff"


def sample_exchanges() -> list[Exchange]:
    date = START + timedelta(minutes=1)
    return [
        Exchange(
            url="http://example.com/",
            status=301,
            response_headers=(("Location", "https://example.com/"), ("Content-Length", "0")),
            request_headers=header_pairs(
                [(b"User-Agent", b"corpus-crawler/test"), (b"Accept", b"*/*")]
            ),
            ip_address="192.0.2.1",
            date=date,
        ),
        Exchange(
            url="https://example.com/",
            status=200,
            body=HTML,
            request_headers=(("User-Agent", "corpus-crawler/test"),),
            response_headers=(
                ("Content-Type", "text/html; charset=utf-8"),
                ("Transfer-Encoding", "chunked"),
                ("Content-Encoding", "gzip"),
                ("Last-Modified", "Wed, 21 Oct 2015 07:28:00 GMT"),
            ),
            ip_address="192.0.2.1",
            date=date,
        ),
        Exchange(
            url="https://example.com/missing?q=1#frag",
            status=404,
            reason="Not Here",
            body=b"<p>gone</p>",
            response_headers=(("Content-Type", "text/html"), ("Content-Length", "999")),
            date=date,
        ),
        Exchange(
            url="https://example.com/logo.png",
            status=200,
            body=PNG,
            response_headers=(("Content-Type", "image/png"), ("Content-Length", str(len(PNG)))),
            ip_address="2001:db8::1",
            date=date,
        ),
        Exchange(
            url="https://example.com/search",
            method="POST",
            status=500,
            request_body=b"q=corpus",
            request_headers=(("Content-Type", "application/x-www-form-urlencoded"),),
            body=b"",
            date=date,
        ),
    ]


def sample_document() -> Document:
    return Document(
        paragraphs=(
            Paragraph("Home | News", B, B, length=11, xpath="/html/body/div[1]", link_density=1.0),
            Paragraph(
                "Hello world.", G, G, length=12, word_count=2, xpath="/html/body/p[1]", heading=True
            ),
            Paragraph("Druhý odstavec: čeština & <b>.", B, G, length=30, stopword_density=0.25),
        ),
        url="https://example.com/",
        title="Hello",
        language="cs",
        language_confidence=0.91,
    )


def write_sample(directory: Path, **overrides: object) -> WarcWriter:
    writer = WarcWriter(
        make_config(directory, **overrides), clock=fake_clock(), record_ids=fake_ids()
    )
    with writer:
        response_ids = [
            writer.write_exchange(exchange).response_id for exchange in sample_exchanges()
        ]
        writer.write_document(sample_document(), refers_to=response_ids[1])
    return writer


def records(path: Path) -> list[Any]:
    """Every record, content read through warcio with digests verified (raises if not)."""
    out = []
    with open(path, "rb") as handle:
        for record in ArchiveIterator(handle, check_digests="raise"):
            record.test_content = record.content_stream().read()
            out.append(record)
    return out


def decompressed(path: Path) -> bytes:
    with gzip.open(path, "rb") as handle:
        return handle.read()


def warcio_check(path: Path) -> subprocess.CompletedProcess[str]:
    code = "import sys; from warcio.cli import main; sys.exit(main())"
    return subprocess.run(
        [sys.executable, "-c", code, "check", "-v", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )


# --- golden output ------------------------------------------------------------------


def test_golden_records_byte_for_byte(tmp_path: Path) -> None:
    writer = write_sample(tmp_path, paragraph_metadata=True)
    (path,) = writer.files
    (text,) = writer.text_files
    assert path.name == "test-20240506070809123-00000-crawler1.warc.gz"
    assert text.name == "test-20240506070812123-00000-crawler1.warc.wet.gz"
    assert_golden("sample.warc", decompressed(path))
    assert_golden("sample.warc.wet", decompressed(text))
    (index,) = writer.index_files
    assert index.name == "test-20240506070809123-00000-crawler1.cdxj"
    assert_golden("sample.cdxj", index.read_bytes())


def test_each_record_is_one_gzip_member(tmp_path: Path) -> None:
    writer = write_sample(tmp_path, paragraph_metadata=True)
    # warcinfo + 5 x (request, response); warcinfo + conversion + metadata
    for path, count in ((writer.files[0], 1 + 10), (writer.text_files[0], 1 + 2)):
        with open(path, "rb") as handle:
            ends = [end for end, _ in gzip_member_ends(handle)]
        assert ends[-1] == path.stat().st_size
        assert len(ends) == len(records(path)) == count


# --- readers and checkers -------------------------------------------------------------


def test_warcio_check_passes(tmp_path: Path) -> None:
    writer = write_sample(tmp_path, paragraph_metadata=True)
    result = warcio_check(writer.files[0])
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("digest pass") == 11
    result = warcio_check(writer.text_files[0])
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("digest pass") == 3


def test_warcio_check_notices_a_damaged_record(tmp_path: Path) -> None:
    """The check above can fail: flip one payload byte inside a valid gzip member."""
    (path,) = write_sample(tmp_path).files
    damaged = tmp_path / "damaged.warc.gz"
    damaged.write_bytes(
        b"".join(forge(m) if HTML in zlib.decompress(m, 31) else m for m in members(path))
    )
    result = warcio_check(damaged)
    assert result.returncode == 1
    assert "payload digest failed" in result.stdout


def test_records_read_back_with_links_and_digests(tmp_path: Path) -> None:
    writer = write_sample(tmp_path, paragraph_metadata=True)
    recs = records(writer.files[0])
    text_recs = records(writer.text_files[0])
    types = [r.rec_type for r in recs]
    assert types == ["warcinfo"] + ["request", "response"] * 5
    assert [r.rec_type for r in text_recs] == ["warcinfo", "conversion", "metadata"]
    by_id = {r.rec_headers["WARC-Record-ID"]: r for r in recs}
    warcinfo_id = recs[0].rec_headers["WARC-Record-ID"]
    for request, response in zip(recs[1:11:2], recs[2:11:2], strict=True):
        assert request.rec_headers["WARC-Concurrent-To"] == response.rec_headers["WARC-Record-ID"]
        assert response.rec_headers["WARC-Concurrent-To"] == request.rec_headers["WARC-Record-ID"]
        assert request.rec_headers["WARC-Date"] == response.rec_headers["WARC-Date"]
        assert request.rec_headers["WARC-Target-URI"] == response.rec_headers["WARC-Target-URI"]
        assert response.rec_headers["WARC-Warcinfo-ID"] == warcinfo_id
        assert response.rec_headers["WARC-Date"] == "2024-05-06T07:09:09.123456Z"
        assert response.rec_headers["WARC-Payload-Digest"].startswith("sha1:")
        assert response.rec_headers["WARC-Block-Digest"].startswith("sha1:")
    exchanges = sample_exchanges()
    for exchange, response in zip(exchanges, recs[2:11:2], strict=True):
        assert response.test_content == exchange.body
        assert response.http_headers.get_statuscode() == str(exchange.status)
    conversion, metadata = text_recs[1:]
    assert by_id[conversion.rec_headers["WARC-Refers-To"]] is recs[4]
    assert by_id[metadata.rec_headers["WARC-Refers-To"]] is recs[4]
    assert conversion.rec_headers["WARC-Warcinfo-ID"] == text_recs[0].rec_headers["WARC-Record-ID"]
    assert conversion.test_content == "Hello world.\nDruhý odstavec: čeština & <b>.".encode()
    assert conversion.rec_headers["Content-Type"] == "text/plain; charset=utf-8"
    # ISO 639-3, as Common Crawl's WET files have it
    assert conversion.rec_headers["WARC-Identified-Content-Language"] == "ces"
    assert metadata.rec_headers["Content-Type"] == "application/warc-fields"
    fields = [line.split(": ", 1) for line in metadata.test_content.decode().splitlines()]
    assert dict(fields[:3]) == {
        "title": "Hello",
        "language": "ces",
        "language-confidence": "0.9100",
    }
    meta = [json.loads(value) for name, value in fields if name == "paragraph"]
    assert [p["class"] for p in meta] == ["bad", "good", "good"]
    assert [p["cf_class"] for p in meta] == ["bad", "good", "bad"]
    assert meta[1]["heading"] is True
    assert meta[1]["xpath"] == "/html/body/p[1]"
    assert meta[0]["link_density"] == 1.0
    assert meta[2]["stopword_density"] == 0.25
    assert meta[2]["length"] == 30


def test_warcinfo_describes_the_crawl(tmp_path: Path) -> None:
    (path,) = write_sample(tmp_path).files
    info = records(path)[0]
    assert info.rec_headers["WARC-Filename"] == path.name
    fields = dict(line.split(": ", 1) for line in info.test_content.decode().splitlines() if line)
    assert fields["software"] == "corpus-crawler/golden"
    assert fields["format"] == "WARC File Format 1.1"
    assert fields["conformsTo"].endswith("/warc-1.1/")
    assert fields["hostname"] == "crawler1"
    assert fields["robots"] == "classic"
    assert fields["isPartOf"] == "cs-news"
    assert fields["operator"] == "Corpus Team <corpus@example.org>"
    assert json.loads(fields["crawl-profile"]) == {"language": "cs", "depth": 3}


def test_request_records_hold_the_request_as_sent(tmp_path: Path) -> None:
    (path,) = write_sample(tmp_path).files
    requests = [r for r in records(path) if r.rec_type == "request"]
    first = requests[0].http_headers
    assert (first.protocol, first.statusline) == ("GET", "/ HTTP/1.1")
    assert first.headers[0] == ("Host", "example.com")
    assert ("User-Agent", "corpus-crawler/test") in first.headers
    assert requests[0].rec_headers["WARC-IP-Address"] == "192.0.2.1"
    assert requests[2].http_headers.statusline == "/missing?q=1 HTTP/1.1"
    # The fragment is never sent, so it is not part of the target URI.
    assert requests[2].rec_headers["WARC-Target-URI"] == "https://example.com/missing?q=1"
    assert requests[2].rec_headers.get_header("WARC-IP-Address") is None
    post = requests[4]
    assert post.http_headers.protocol == "POST"
    assert post.test_content == b"q=corpus"


def test_decoded_bodies_are_declared_like_common_crawl(tmp_path: Path) -> None:
    (path,) = write_sample(tmp_path).files
    responses = [r for r in records(path) if r.rec_type == "response"]
    ok = responses[1].http_headers
    assert ok.get_header("Transfer-Encoding") is None
    assert ok.get_header("Content-Encoding") is None
    assert ok.get_header("X-Crawler-Transfer-Encoding") == "chunked"
    assert ok.get_header("X-Crawler-Content-Encoding") == "gzip"
    assert ok.get_header("Content-Length") == str(len(HTML))
    assert ok.get_header("X-Crawler-Content-Length") is None
    not_found = responses[2].http_headers
    assert not_found.statusline == "404 Not Here"
    assert not_found.get_header("X-Crawler-Content-Length") == "999"
    assert not_found.get_header("Content-Length") == str(len(b"<p>gone</p>"))
    png = responses[3].http_headers
    assert png.get_header("Content-Length") == str(len(PNG))
    assert png.get_header("X-Crawler-Content-Length") is None
    assert responses[4].http_headers.statusline == "500 Internal Server Error"


def test_cdxj_indexer_finds_linked_pairs_and_conversions(tmp_path: Path) -> None:
    writer = write_sample(tmp_path, paragraph_metadata=True)
    (path,) = writer.files
    code = "import sys; from cdxj_indexer.main import main; sys.exit(main())"
    result = subprocess.run(
        [sys.executable, "-c", code, "--records", "all", str(path)],
        capture_output=True,
        text=True,
        check=True,
    )
    lines = [line for line in result.stdout.splitlines() if line]
    assert len(lines) == 11
    by_offset: dict[int, dict[str, str]] = {}
    for line in lines:
        match = re.match(r"(\S+) (\d{14}) (\{.*\})$", line)
        assert match, line
        entry = json.loads(match.group(3))
        assert entry["filename"] == path.name
        by_offset[int(entry["offset"])] = entry
    # Each index entry points at a whole record of the right kind.
    kinds: dict[str, list[dict[str, str]]] = {}
    ids: dict[str, str] = {}
    with open(path, "rb") as handle:
        for offset, entry in sorted(by_offset.items()):
            handle.seek(offset)
            raw = handle.read(int(entry["length"]))
            record = next(iter(ArchiveIterator(BytesIO(raw), check_digests="raise")))
            record.content_stream().read()
            headers = dict(record.rec_headers.headers)
            kinds.setdefault(record.rec_type, []).append(headers)
            ids[headers["WARC-Record-ID"]] = record.rec_type
    assert len(kinds["request"]) == len(kinds["response"]) == 5
    assert "conversion" not in kinds and "metadata" not in kinds
    for request in kinds["request"]:
        assert ids[request["WARC-Concurrent-To"]] == "response"
    for response in kinds["response"]:
        assert ids[response["WARC-Concurrent-To"]] == "request"
    (conversion,) = [r for r in records(writer.text_files[0]) if r.rec_type == "conversion"]
    assert ids[conversion.rec_headers["WARC-Refers-To"]] == "response"
    statuses = sorted(e.get("status", "") for e in by_offset.values() if "status" in e)
    assert statuses == ["200", "200", "301", "404", "500"]


# --- documents ---------------------------------------------------------------------


def test_document_not_kept_writes_nothing(tmp_path: Path) -> None:
    writer = WarcWriter(make_config(tmp_path), clock=fake_clock(), record_ids=fake_ids())
    with writer:
        ids = writer.write_exchange(sample_exchanges()[1])
        no_good = Document(paragraphs=(Paragraph("menu", B, B),), url="https://example.com/")
        dropped = Document(
            paragraphs=sample_document().paragraphs,
            url="https://example.com/",
            drop_reason=DropReason.WRONG_LANGUAGE,
        )
        assert writer.write_document(no_good, refers_to=ids.response_id) is None
        assert writer.write_document(dropped, refers_to=ids.response_id) is None
    assert [r.rec_type for r in records(writer.files[0])] == ["warcinfo", "request", "response"]
    assert writer.text_files == ()


def test_metadata_records_are_a_switch(tmp_path: Path) -> None:
    writer = write_sample(tmp_path)
    assert [r.rec_type for r in records(writer.text_files[0])] == ["warcinfo", "conversion"]


# --- files: naming, .open, rotation ------------------------------------------------


def test_file_is_open_while_written_and_renamed_on_close(tmp_path: Path) -> None:
    writer = WarcWriter(make_config(tmp_path), clock=fake_clock(), record_ids=fake_ids())
    assert list(tmp_path.iterdir()) == []  # nothing until the first record
    writer.write_exchange(sample_exchanges()[0])
    final = writer.current_path
    assert final is not None
    assert [p.name for p in tmp_path.iterdir()] == [final.name + ".open"]
    writer.close()
    index = final.name.removesuffix(".warc.gz") + ".cdxj"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([final.name, index])
    assert writer.files == (final,)
    writer.close()  # closing twice is harmless
    assert writer.files == (final,)


def test_rotation_by_size_makes_several_valid_files(tmp_path: Path) -> None:
    writer = WarcWriter(
        make_config(tmp_path, max_bytes=1500, timestamp_digits=14),
        clock=fake_clock(),
        record_ids=fake_ids(),
    )
    with writer:
        for exchange in sample_exchanges() * 2:
            ids = writer.write_exchange(exchange)
            writer.write_document(sample_document(), refers_to=ids.response_id)
    files = writer.files
    assert len(files) >= 3
    assert sorted(tmp_path.glob("*.warc.gz")) == sorted(files)
    # one text file and one index per WARC file: closed together
    assert len(writer.text_files) == len(writer.index_files) == len(files)
    assert {p.name.removesuffix(".cdxj") for p in writer.index_files} == {
        p.name.removesuffix(".warc.gz") for p in files
    }
    serials = []
    for path in files:
        match = re.fullmatch(r"test-(\d{14})-(\d{5})-crawler1\.warc\.gz", path.name)
        assert match, path.name
        serials.append(int(match.group(2)))
        recs = records(path)
        assert recs[0].rec_type == "warcinfo"
        assert recs[0].rec_headers["WARC-Filename"] == path.name
        assert warcio_check(path).returncode == 0
        # A request and its response never straddle two files.
        assert [r.rec_type for r in recs[1:3]] == ["request", "response"]
    assert serials == list(range(len(files)))
    total = sum(1 for path in files for r in records(path) if r.rec_type == "response")
    assert total == 10


def test_names_never_overwrite_an_existing_file(tmp_path: Path) -> None:
    frozen = lambda: START  # noqa: E731 - every file gets the same timestamp
    first = WarcWriter(make_config(tmp_path), clock=frozen, record_ids=fake_ids())
    with first:
        first.write_exchange(sample_exchanges()[0])
    second = WarcWriter(make_config(tmp_path), clock=frozen, record_ids=fake_ids())
    with second:
        second.write_exchange(sample_exchanges()[0])
    assert first.files[0] != second.files[0]
    assert second.files[0].name == "test-20240506070809123-00001-crawler1.warc.gz"


def test_defaults_real_clock_and_uuid_ids(tmp_path: Path) -> None:
    writer = WarcWriter(WarcConfig(tmp_path, prefix="live"))
    with writer:
        writer.write_exchange(sample_exchanges()[1])
    (path,) = writer.files
    assert re.fullmatch(r"live-\d{17}-00000-[A-Za-z0-9.\-_]+\.warc\.gz", path.name)
    recs = records(path)
    for record in recs:
        assert re.fullmatch(
            r"<urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}>",
            record.rec_headers["WARC-Record-ID"],
        )
    assert f"software: corpus-crawler/{__version__}\r\n".encode() in recs[0].test_content
    # The exchange's own date is kept, and the warcinfo is never dated after the
    # first record of its file.
    assert recs[2].rec_headers["WARC-Date"] == "2024-05-06T07:09:09.123456Z"
    assert recs[0].rec_headers["WARC-Date"] == "2024-05-06T07:09:09.123456Z"


# --- response headers ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("headers", "body_length", "kwargs", "expected"),
    [
        # Nothing to say: the length matches and nothing was decoded.
        ([("Content-Length", "5")], 5, {}, [("Content-Length", "5")]),
        # De-chunked and decoded without a length: one is added.
        (
            [("Transfer-Encoding", "chunked")],
            5,
            {},
            [("X-Crawler-Transfer-Encoding", "chunked"), ("Content-Length", "5")],
        ),
        # Only de-chunked (body as sent otherwise): renamed, nothing invented; a
        # Content-Length next to the chunking did not frame the message.
        (
            [
                ("transfer-encoding", "chunked"),
                ("Content-Encoding", "gzip"),
                ("Content-Length", "9"),
            ],
            5,
            {"body_decoded": False},
            [
                ("X-Crawler-Transfer-Encoding", "chunked"),
                ("Content-Encoding", "gzip"),
                ("X-Crawler-Content-Length", "9"),
            ],
        ),
        # Decompressed: the original length is kept under another name, in place.
        (
            [("content-encoding", "br"), ("content-length", "3"), ("Vary", "*")],
            5,
            {},
            [
                ("X-Crawler-Content-Encoding", "br"),
                ("X-Crawler-Content-Length", "3"),
                ("Content-Length", "5"),
                ("Vary", "*"),
            ],
        ),
        # identity is no encoding at all.
        ([("Content-Encoding", "identity")], 0, {}, [("Content-Encoding", "identity")]),
        # A HEAD response declares the length of the body it did not send.
        ([("Content-Length", "100")], 0, {"method": "HEAD"}, [("Content-Length", "100")]),
        # A raw body is stored with its headers untouched.
        (
            [("Content-Encoding", "gzip"), ("Content-Length", "3")],
            3,
            {"body_decoded": False},
            [("Content-Encoding", "gzip"), ("Content-Length", "3")],
        ),
    ],
)
def test_stored_response_headers(
    headers: list[tuple[str, str]],
    body_length: int,
    kwargs: dict[str, object],
    expected: list[tuple[str, str]],
) -> None:
    assert stored_response_headers(headers, body_length, **kwargs) == expected  # type: ignore[arg-type]


def test_header_values_cannot_break_the_record(tmp_path: Path) -> None:
    exchange = Exchange(
        url="https://example.com/",
        status=200,
        body=b"ok",
        response_headers=(("X-Evil", "a\r\nWARC-Type: forged"), ("X-Name", "Žluťoučký")),
    )
    writer = WarcWriter(make_config(tmp_path), clock=fake_clock(), record_ids=fake_ids())
    with writer:
        writer.write_exchange(exchange)
    response = records(writer.files[0])[2]
    assert response.http_headers.get_header("X-Evil") == "a  WARC-Type: forged"
    # Text that is not raw bytes (not ISO-8859-1) is stored as UTF-8, never percent-encoded.
    assert response.http_headers.get_header("X-Name") == "Žluťoučký"
    assert warcio_check(writer.files[0]).returncode == 0


# --- validation ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"max_bytes": 0}, "max_bytes must be > 0"),
        ({"timestamp_digits": 15}, "timestamp_digits must be 14 or 17"),
        ({"prefix": "a/b"}, "try 'a_b'"),
        ({"hostname": "my host"}, "try 'my_host'"),
    ],
)
def test_config_errors_name_the_fix(
    tmp_path: Path, overrides: dict[str, object], message: str
) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        make_config(tmp_path, **overrides)


def test_exchange_rejects_a_relative_url() -> None:
    with pytest.raises(ValueError, match="absolute URL"):
        Exchange(url="/relative", status=200)


# --- crash recovery ------------------------------------------------------------------------


def crashed_file(tmp_path: Path, tail: bytes) -> tuple[Path, int, int]:
    """A finished sample WARC renamed back to *.open with `tail` appended, as a crash leaves it.

    Returns (the .open path, its number of complete records, its valid length).
    """
    source = tmp_path / "source"
    (path,) = write_sample(source).files
    data = path.read_bytes()
    crashed = tmp_path / "out" / (path.name + ".open")
    crashed.parent.mkdir()
    crashed.write_bytes(data + tail)
    return crashed, len(records(path)), len(data)


def members(path: Path) -> list[bytes]:
    data = path.read_bytes()
    with open(path, "rb") as handle:
        ends = [end for end, _ in gzip_member_ends(handle)]
    return [data[start:end] for start, end in zip([0, *ends[:-1]], ends, strict=True)]


def html_response_member(tmp_path: Path) -> bytes:
    """The gzip member holding the sample's HTML response record."""
    (path,) = write_sample(tmp_path / "member").files
    (member,) = [m for m in members(path) if HTML in zlib.decompress(m, zlib.MAX_WBITS | 16)]
    return member


def forge(member: bytes) -> bytes:
    """The same record, one payload byte changed, digests left as they were."""
    body = zlib.decompress(member, zlib.MAX_WBITS | 16)
    return gzip.compress(body.replace(b"Hello world.</p>", b"Hello World.</p>", 1))


def test_recover_cuts_a_torn_record(tmp_path: Path) -> None:
    member = html_response_member(tmp_path)
    crashed, count, length = crashed_file(tmp_path, member[: len(member) // 2])
    (result,) = recover(crashed.parent)
    assert result.action is RecoveryAction.TRUNCATED
    assert result.units == count
    assert result.dropped_bytes == len(member) // 2
    final = crashed.with_name(crashed.name.removesuffix(".open"))
    assert result.destination == final
    assert not crashed.exists()
    assert final.stat().st_size == length
    assert len(records(final)) == count
    assert warcio_check(final).returncode == 0


def test_recover_cuts_garbage_after_the_last_record(tmp_path: Path) -> None:
    crashed, count, length = crashed_file(tmp_path, b"\x1f\x8b\x08garbage" + os.urandom(64))
    (result,) = recover(crashed.parent)
    assert result.action is RecoveryAction.TRUNCATED
    assert len(records(result.destination)) == count
    assert result.destination.stat().st_size == length


def test_recover_drops_a_complete_member_whose_digest_fails(tmp_path: Path) -> None:
    member = html_response_member(tmp_path)
    forged = forge(member)
    assert zlib.decompress(forged, 31) != zlib.decompress(member, 31)
    crashed, count, length = crashed_file(tmp_path, forged)
    (result,) = recover(crashed.parent)
    assert result.action is RecoveryAction.TRUNCATED
    assert result.units == count
    assert result.destination.stat().st_size == length


def test_recover_renames_a_complete_file(tmp_path: Path) -> None:
    crashed, count, length = crashed_file(tmp_path, b"")
    (result,) = recover(crashed.parent)
    assert result.action is RecoveryAction.RENAMED
    assert (result.units, result.kept_bytes, result.dropped_bytes) == (count, length, 0)


@pytest.mark.parametrize("content", [b"not a gzip member at all", b"\x1f\x8b\x08\x00\x00"])
def test_recover_quarantines_an_unreadable_file(tmp_path: Path, content: bytes) -> None:
    crashed = tmp_path / "x-20240101000000-00000-h.warc.gz.open"
    crashed.write_bytes(content)
    (result,) = recover(tmp_path)
    assert result.action is RecoveryAction.QUARANTINED
    assert result.destination == tmp_path / "quarantine" / crashed.name
    assert result.destination.read_bytes() == content
    assert not crashed.exists()


def test_recover_removes_an_empty_file(tmp_path: Path) -> None:
    """A writer killed between opening its file and its first byte leaves nothing to
    finish or to look at: the file goes, instead of filling quarantine/ at each kill."""
    crashed = tmp_path / "x-20240101000000-00000-h.warc.gz.open"
    crashed.write_bytes(b"")
    (result,) = recover(tmp_path)
    assert result.action is RecoveryAction.REMOVED
    assert str(result) == f"{crashed.name}: removed (empty)"
    assert list(tmp_path.iterdir()) == []


def test_recover_leaves_other_files_alone(tmp_path: Path) -> None:
    others = ["a.warc.gz", "b.vert.open", "c.txt.open"]
    for name in others:
        (tmp_path / name).write_bytes(b"x")
    assert recover(tmp_path) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(others)
    assert recover(tmp_path / "missing") == []


def test_writer_after_recovery_continues_in_a_new_file(tmp_path: Path) -> None:
    member = html_response_member(tmp_path)
    crashed, _, _ = crashed_file(tmp_path, member[:10])
    recover(crashed.parent)
    writer = WarcWriter(make_config(crashed.parent), clock=fake_clock(), record_ids=fake_ids())
    with writer:
        writer.write_exchange(sample_exchanges()[0])
    names = sorted(p.name for p in crashed.parent.glob("*.warc.gz"))
    assert len(names) == 2
    # the recovered file was indexed at recovery, the new one at close
    assert len(list(crashed.parent.glob("*.cdxj"))) == 2


KILLED_WRITER = """
import sys
from pathlib import Path
from corpus_crawler.warc import Exchange, WarcConfig, WarcWriter
writer = WarcWriter(WarcConfig(Path(sys.argv[1]), prefix="killed", hostname="h"))
body = bytes(range(256)) * 400
for number in range(100_000):
    writer.write_exchange(Exchange(url=f"https://example.com/{number}", status=200, body=body))
    print(number, flush=True)
"""


def test_recover_after_a_real_kill(tmp_path: Path) -> None:
    """A writer process is SIGKILLed while it writes; whatever it managed to flush survives."""
    process = subprocess.Popen(
        [sys.executable, "-c", KILLED_WRITER, str(tmp_path)],
        stdout=subprocess.PIPE,
        cwd=Path(__file__).parent.parent,
    )
    try:
        assert process.stdout is not None
        confirmed = 0
        for _ in range(30):
            if not process.stdout.readline():
                break
            confirmed += 1
    finally:
        process.kill()
        process.wait()
        if process.stdout is not None:
            process.stdout.close()
    assert confirmed == 30
    (leftover,) = tmp_path.iterdir()
    assert leftover.name.endswith(".warc.gz.open")
    (result,) = recover(tmp_path)
    assert result.action in (RecoveryAction.RENAMED, RecoveryAction.TRUNCATED)
    recs = records(result.destination)
    assert len(recs) == result.units >= 1 + 2 * confirmed
    assert [r.rec_type for r in recs[1:]] == ["request", "response"] * ((len(recs) - 1) // 2) + (
        ["request"] if len(recs) % 2 == 0 else []
    )
