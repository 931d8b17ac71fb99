"""WARC records built without warcio's writer (`corpus_crawler._warc_record`) are the
bytes warcio's writer builds: checked on random records, on every record kind the
WarcWriter writes (the old warcio-built writer as the reference), and on the WARC
files of a real crawl (`warcio check`, `warcio index`, digests, every member rebuilt
by warcio from its parts)."""

from __future__ import annotations

import gzip
import itertools
import random
import subprocess
import sys
import zlib
from collections import Counter
from collections.abc import Mapping
from datetime import datetime, timedelta, timezone
from io import BytesIO
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from warcio.archiveiterator import ArchiveIterator
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from corpus_crawler import warc
from corpus_crawler._files import gzip_member_ends
from corpus_crawler._warc_record import gzip_member, record_bytes, sha1_digest
from corpus_crawler.model import Document, Paragraph, ParagraphClass
from corpus_crawler.testserver import SiteServer
from corpus_crawler.warc import (
    CrawlInfo,
    Exchange,
    RevisitProfile,
    RobotsPolicy,
    Truncation,
    WarcConfig,
    WarcWriter,
)

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "corpus_crawler" / "demo_site"
CRAWL_TIMEOUT = 180  # a guard against a hung crawl, not a speed assertion
WARCIO_CLI = "import sys; from warcio.cli import main; sys.exit(main())"
START = datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=timezone.utc)
G, B = ParagraphClass.GOOD, ParagraphClass.BAD


class _VerbatimBlock(StatusAndHeaders):
    """An HTTP header block handed to warcio as bytes (as `warc._RawHttpHeaders` does)."""

    def __init__(self, block: bytes) -> None:
        super().__init__("x", [], protocol="")
        self._block = block

    def compute_headers_buffer(self, header_filter: Any = None) -> None:
        self.headers_buff = self._block


def warcio_record(
    record_type: str,
    uri: str,
    warc_headers: Mapping[str, str],
    payload: bytes,
    content_type: str,
    http_headers: StatusAndHeaders | None = None,
) -> bytes:
    """The reference: the record as warcio 1.8's writer builds it (the old code path)."""
    buffer = BytesIO()
    writer = WARCWriter(buffer, gzip=False, warc_version="1.1")
    record = writer.create_warc_record(
        uri,
        record_type,
        payload=BytesIO(payload),
        length=len(payload),
        warc_content_type=content_type,
        warc_headers_dict=dict(warc_headers),
        http_headers=http_headers,
    )
    writer.write_record(record)
    return buffer.getvalue()


def warcio_serialize(
    record_type: str,
    uri: str,
    warc_headers: Mapping[str, str],
    payload: bytes,
    content_type: str,
    http_headers: StatusAndHeaders | None = None,
    *,
    compression_level: int,
) -> bytes:
    """`warc._serialize_record` as it was before this module: warcio, then zlib."""
    data = warcio_record(record_type, uri, warc_headers, payload, content_type, http_headers)
    compressor = zlib.compressobj(compression_level, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    return compressor.compress(data) + compressor.flush()


def split_members(data: bytes) -> list[bytes]:
    """The gzip members of `data`, each decompressed on its own."""
    out = []
    while data:
        decompressor = zlib.decompressobj(zlib.MAX_WBITS | 16)
        out.append(decompressor.decompress(data))
        assert decompressor.eof, "a torn member"
        data = decompressor.unused_data
    return out


def members(path: Path) -> list[bytes]:
    """Every gzip member of `path`, decompressed."""
    return split_members(path.read_bytes())


# -- random records against warcio ---------------------------------------------------------

header_text = st.text(
    alphabet=st.characters(codec="utf-8", exclude_characters="\r\n"),
    max_size=30,
)
header_names = st.text(
    alphabet=st.characters(min_codepoint=0x21, max_codepoint=0x7E, exclude_characters=":"),
    min_size=1,
    max_size=20,
)


@settings(max_examples=300, deadline=None)
@given(
    record_type=st.sampled_from(
        ["request", "response", "revisit", "metadata", "conversion", "warcinfo", "resource"]
    ),
    uri=st.sampled_from(["", "http://example.com/a?b=c", "https://例え.jp/パス"]),
    extra=st.lists(st.tuples(header_names, header_text), max_size=4),
    payload=st.binary(max_size=5000),
    http=st.one_of(
        st.none(), st.lists(st.tuples(header_names, header_text), min_size=0, max_size=5)
    ),
    give_payload_digest=st.booleans(),
)
def test_random_records_are_warcio_bytes(
    record_type: str,
    uri: str,
    extra: list[tuple[str, str]],
    payload: bytes,
    http: list[tuple[str, str]] | None,
    give_payload_digest: bool,
) -> None:
    headers = {"WARC-Type": record_type, "WARC-Record-ID": "<urn:uuid:1>", "WARC-Date": "d"}
    for name, value in extra:
        if name.lower() not in {k.lower() for k in headers}:
            headers[name] = value
    if give_payload_digest:
        headers["WARC-Payload-Digest"] = sha1_digest(payload)
    if record_type in ("request", "response", "revisit") and http is None:
        # never written without one (warcio would parse the payload for a header block)
        http = []
    http_headers = None
    block = None
    if http is not None:
        http_headers = warc._RawHttpHeaders("200 OK", http, protocol="HTTP/1.1")
        http_headers.compute_headers_buffer()
        block = http_headers.headers_buff
    ours = record_bytes(record_type, uri, headers, payload, "application/x-test", block)
    reference = warcio_record(
        record_type, uri, headers, payload, "application/x-test", http_headers
    )
    assert ours == reference


def test_gzip_member_is_one_whole_member() -> None:
    data = record_bytes("metadata", "http://a/", {"WARC-Type": "metadata"}, b"x: y\r\n", "t")
    member = gzip_member(data, 6)
    assert gzip.decompress(member) == data
    assert split_members(member * 3) == [data, data, data]
    assert [end for end, _ in gzip_member_ends(BytesIO(member * 2))] == [
        len(member),
        2 * len(member),
    ]


# -- every record kind of the WarcWriter, against the old writer ----------------------------


# incompressible, past warcio's 16 KiB read chunks and the 40 kB rotation size below
BIG_BODY = random.Random(13).randbytes(60_000) + "čeština".encode() * 3000


def writer_exchanges() -> list[Exchange]:
    date = START + timedelta(minutes=1)
    return [
        Exchange(
            url="http://example.com/",
            status=301,
            response_headers=(("Location", "https://example.com/"), ("Content-Length", "0")),
            request_headers=(("User-Agent", "corpus-crawler/test"), ("Accept", "*/*")),
            ip_address="192.0.2.1",
            date=date,
            fetch_time_ms=12,
        ),
        Exchange(
            url="https://example.com/big#frag",
            status=200,
            body=BIG_BODY,
            response_headers=(
                ("Content-Type", "application/octet-stream"),
                ("Transfer-Encoding", "chunked"),
                ("Content-Encoding", "gzip"),
            ),
            body_decoded=False,
            date=date,
            request_date=date - timedelta(seconds=1),
            fetch_time_ms=250,
        ),
        Exchange(
            url="https://example.com/cut",
            status=200,
            body=b"<html><p>half",
            response_headers=(("Content-Type", "text/html"), ("Content-Length", "99999")),
            truncated=Truncation.LENGTH,
            date=date,
            fetch_time_ms=7,
        ),
        Exchange(
            url="https://example.com/moved",
            status=302,
            # raw Latin-1 / UTF-8 bytes as received, which warcio would percent-encode
            response_headers=(("Location", "/caf\xc3\xa9"), ("X-Note", "na\xefve")),
            status_line="HTTP/1.1 302 Found It Elsewhere",
            date=date,
        ),
        Exchange(
            url="https://example.com/search?q=1",
            method="POST",
            status=500,
            request_body=b"q=corpus&x=\xff",
            request_headers=(("Content-Type", "application/x-www-form-urlencoded"),),
            date=date,
        ),
    ]


def writer_document() -> Document:
    return Document(
        paragraphs=(
            Paragraph("Home | News", B, B, length=11, xpath="/html/body/div[1]", link_density=1.0),
            Paragraph("Hello world.", G, G, length=12, word_count=2, xpath="/html/body/p[1]"),
            Paragraph("Druhý odstavec: čeština & <b>.", B, G, length=30, stopword_density=0.25),
        ),
        url="https://example.com/big",
        title="Hello",
        language="cs",
    )


def write_everything(directory: Path) -> WarcWriter:
    ticks = itertools.count()
    counter = itertools.count(1)

    def clock() -> datetime:
        return START + timedelta(seconds=next(ticks))

    def ids() -> str:
        return f"<urn:uuid:00000000-0000-4000-8000-{next(counter):012d}>"

    config = WarcConfig(
        directory,
        prefix="eq",
        hostname="crawler1",
        max_bytes=40_000,  # rotation: several files, each with its warcinfo
        paragraph_metadata=True,
        info=CrawlInfo(
            profile_name="cs-news",
            profile={"language": "cs", "seeds": ["https://example.com/"]},
            robots=RobotsPolicy.CLASSIC,
            operator="Corpus Team <corpus@example.org>",
            user_agent="corpus-crawler/test",
            software="corpus-crawler/equivalence",
        ),
    )
    writer = WarcWriter(config, clock=clock, record_ids=ids)
    with writer:
        for _ in range(2):
            for exchange in writer_exchanges():
                records = writer.write_exchange(exchange)
                writer.write_document(writer_document(), refers_to=records.response_id)
                for profile in RevisitProfile:
                    writer.write_revisit(
                        exchange,
                        profile=profile,
                        refers_to=records.response_id,
                        refers_to_uri=exchange.url,
                        refers_to_date=START,
                    )
    return writer


def test_writer_records_are_the_old_writers_byte_for_byte(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    new = write_everything(tmp_path / "new")
    with monkeypatch.context() as patch:
        patch.setattr(warc, "_serialize_record", warcio_serialize)
        old = write_everything(tmp_path / "old")
    assert len(new.files) > 2 and len(new.text_files) >= 1
    for new_paths, old_paths in ((new.files, old.files), (new.text_files, old.text_files)):
        assert [p.name for p in new_paths] == [p.name for p in old_paths]
        for new_path, old_path in zip(new_paths, old_paths, strict=True):
            assert members(new_path) == members(old_path), new_path.name
    kinds = Counter(
        record.rec_type
        for path in (*new.files, *new.text_files)
        for record in ArchiveIterator(path.open("rb"), check_digests="raise")
    )
    exchanges = 2 * len(writer_exchanges())
    assert kinds["request"] == 3 * exchanges
    assert kinds["response"] == exchanges
    assert kinds["revisit"] == 2 * exchanges
    assert kinds["conversion"] == exchanges
    assert kinds["warcinfo"] == len(new.files) + len(new.text_files)


# -- a real crawl ------------------------------------------------------------------------

PROFILE = """\
name: record-check
seeds:
  urls: ["{base}/"]
scope:
  max_depth: 3
politeness:
  concurrent_requests: 4
  download_delay: 0
  autothrottle: false
network:
  allowed_networks: [127.0.0.1/32]
limits:
  retry_times: 0
output:
  directory: "{out}"
  progress_interval: 0
  report: false  # the HTML report has tests of its own; nothing here reads it
  warc:
    metadata_records: true
"""


def rebuilt_by_warcio(member: bytes) -> bytes:
    """The member's record rebuilt by warcio's writer from its own parts."""
    head, _, content = member.partition(b"\r\n\r\n")
    lines = head.decode("utf-8").split("\r\n")
    assert lines[0] == "WARC/1.1"
    pairs: list[tuple[str, str]] = []
    for line in lines[1:]:
        name, _, value = line.partition(": ")
        pairs.append((name, value))
    computed = {"WARC-Block-Digest", "Content-Type", "Content-Length"}
    record_type = dict(pairs)["WARC-Type"]
    if record_type != "revisit":
        computed.add("WARC-Payload-Digest")
    headers = {name: value for name, value in pairs if name not in computed}
    assert content.endswith(b"\r\n\r\n")
    content = content[:-4]
    http_headers = None
    if dict(pairs)["Content-Type"].startswith("application/http"):
        block, _, payload = content.partition(b"\r\n\r\n")
        http_headers = _VerbatimBlock(block + b"\r\n\r\n")
    else:
        payload = content
    return warcio_record(
        record_type,
        headers.get("WARC-Target-URI", ""),
        headers,
        payload,
        dict(pairs)["Content-Type"],
        http_headers,
    )


def test_a_crawls_warc_files_are_warcio_records(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with SiteServer(SITE) as server:
        profile = tmp_path / "p.yaml"
        profile.write_text(PROFILE.format(base=server.base_url, out=out), encoding="utf-8")
        done = subprocess.run(
            [sys.executable, "-m", "corpus_crawler.cli", "crawl", str(profile)],
            capture_output=True,
            text=True,
            timeout=CRAWL_TIMEOUT,
            cwd=ROOT,
            check=False,
        )
        pages = server.counts()
    assert done.returncode == 0, done.stderr[-3000:]
    warcs = sorted(out.glob("*.warc.gz"))
    texts = sorted(out.glob("*.warc.wet.gz"))
    assert len(warcs) == 1 and len(texts) == 1
    kinds: Counter[str] = Counter()
    for path in (*warcs, *texts):
        for member in members(path):
            assert rebuilt_by_warcio(member) == member
        with path.open("rb") as handle:
            for record in ArchiveIterator(handle, check_digests="raise"):
                kinds[record.rec_type] += 1
        for command in ("check", "index"):
            result = subprocess.run(
                [sys.executable, "-c", WARCIO_CLI, command, str(path)],
                capture_output=True,
                text=True,
                check=False,
            )
            assert result.returncode == 0, f"warcio {command} {path.name}: {result.stdout}"
    fetched = sum(pages.values())  # every request the server answered, robots.txt included
    assert kinds["request"] == kinds["response"] == fetched
    assert kinds["metadata"] >= fetched  # fetch metadata, and paragraph metadata per document
    assert kinds["conversion"] >= 5
    assert kinds["warcinfo"] == 2


def test_level_is_the_configured_one(tmp_path: Path) -> None:
    # level 1 and level 9 members differ in size, so the level reaches the compressor
    data = b"".join(b"<p>paragraph %d of running text</p>" % i for i in range(3000))
    fast, small = gzip_member(data, 1), gzip_member(data, 9)
    assert gzip.decompress(fast) == gzip.decompress(small) == data
    assert len(small) < len(fast)


def test_records_are_deflated_by_zlib_ng() -> None:
    # a dependency (pyproject.toml): the stdlib fallback would double the writer's gzip time
    from corpus_crawler._warc_record import DEFLATE_MODULE

    assert DEFLATE_MODULE == "zlib_ng.zlib_ng"
