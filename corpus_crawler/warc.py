"""WARC/1.1 output of a crawl: every HTTP exchange as received, plus WET-like text files.

Usage, from the one writer path of a crawl (the Scrapy pipeline; this module
never imports Scrapy)::

    config = WarcConfig(Path("out/warc"), prefix="crawl", info=CrawlInfo(profile_name="cs"))
    recover(config.directory)                      # finish files left by a crash
    with WarcWriter(config) as warc:
        ids = warc.write_exchange(Exchange(url=..., method="GET", status=200, ...))
        if document.kept:
            warc.write_document(document, refers_to=ids.response_id)

Files (IIPC names, ``{prefix}-{timestamp}-{serial:05d}-{hostname}``):

* ``*.warc.gz``: a ``warcinfo`` record first (software, hostname, format,
  conformsTo, robots policy, operator, publisher, ``http-header-from``, crawl
  profile), then per `Exchange` a ``request`` record (dated when the request was
  sent), a ``response`` record (dated when it was received; with
  ``WARC-Identified-Payload-Type`` and, for a cut body, ``WARC-Truncated``) and,
  when the fetch time is known, a ``metadata`` record in
  ``application/warc-fields`` with ``fetchTimeMs`` as Common Crawl writes it.
  Request and response name each other in ``WARC-Concurrent-To``; digests are
  SHA-1 base32, as warcio writes them.
* ``*.cdxj`` beside each finished WARC: its CDXJ index, which pywb and py-wacz
  read as it is. The writer makes each line as it writes the record
  (`corpus_crawler._cdxj`, the lines cdxj-indexer writes when it re-reads the
  file) and writes the sorted index when it closes the file; `write_cdxj`
  (cdxj-indexer over the file) indexes what a crash left, in `recover`.
* ``*.warc.wet.gz``: per kept `Document` a ``conversion`` record with its clean
  text (``WARC-Refers-To`` the response record, ``WARC-Identified-Content-Language``
  in ISO 639-3 as Common Crawl's WET files have it) and, with
  `WarcConfig.paragraph_metadata`, a ``metadata`` record (``application/warc-fields``)
  with the class and features of each paragraph. Keeping them out of the main
  WARC means replay tools never take the text or the metadata for a capture.

How the response is stored: the status line, header names (case), order,
repeats and raw bytes (non-ASCII values included, never percent-encoded) as the
server sent them, and the body with its content coding (gzip, br) as sent. The
one thing an HTTP client always undoes is the transfer coding: the body is
stored de-chunked, so ``Transfer-Encoding`` is renamed
``X-Crawler-Transfer-Encoding`` (and a ``Content-Length`` sent next to it, which
did not frame the message, ``X-Crawler-Content-Length``); no ``Content-Length``
is invented. A body cut at the size cap or the download timeout is stored as
far as it was received, with ``WARC-Truncated: length`` / ``time`` (its
``Content-Length``, which no longer describes the stored body, renamed
``X-Crawler-Content-Length``). A ``Location`` with non-ASCII bytes is stored
percent-encoded, the URL every client follows, with the raw bytes beside it as
``X-Crawler-Location`` (replay tools cannot send a non-Latin-1 header).

`Exchange.body_decoded` is for callers that only have a decoded body (the
headers are then rewritten as Common Crawl does, see `stored_response_headers`).

Records are built byte for byte as warcio's writer would write them, by
`corpus_crawler._warc_record` (one gzip member per record); the records of one
call are written with one ``write`` and flushed. See
`corpus_crawler._files` for the ``*.open`` naming and rotation, and `recover`
for restarts. The clock and the record-id factory are injectable so that tests
compare output byte for byte.
"""

from __future__ import annotations

import base64
import enum
import hashlib
import http
import io
import json
import logging
import uuid
import zlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import urldefrag, urlsplit

from warcio.archiveiterator import ArchiveIterator
from warcio.exceptions import ArchiveLoadFailed
from warcio.limitreader import LimitReader
from warcio.statusandheaders import StatusAndHeaders
from warcio.timeutils import datetime_to_iso_date

from ._cdxj import INDEXED_RECORD_TYPES, index_line, write_index
from ._files import (
    Clock,
    Recovered,
    RecoveryAction,
    RotatingFile,
    as_utc,
    default_hostname,
    gzip_member_ends,
    recover_files,
    safe_name_part,
    utc_now,
)
from ._warc_record import gzip_member, record_bytes, record_bytes_and_headers
from .config import ConfigError
from .mediatype import binary_signature
from .model import Document

__all__ = [
    "CDXJ_EXTENSION",
    "CONFORMS_TO",
    "TEXT_EXTENSION",
    "WARC_EXTENSION",
    "CrawlInfo",
    "DocumentRecords",
    "Exchange",
    "ExchangeRecords",
    "Recovered",
    "RecoveryAction",
    "RevisitProfile",
    "RobotsPolicy",
    "Truncation",
    "WarcConfig",
    "WarcWriter",
    "document_records",
    "header_pairs",
    "identify_payload_type",
    "iso639_3",
    "new_record_id",
    "payload_digest",
    "recover",
    "stored_response_headers",
    "write_cdxj",
]

logger = logging.getLogger(__name__)

WARC_VERSION = "1.1"
WARC_EXTENSION = ".warc.gz"
#: Common Crawl's name for the files of conversion (plain text) records.
TEXT_EXTENSION = ".warc.wet.gz"
CDXJ_EXTENSION = ".cdxj"
CONFORMS_TO = "https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/"
RENAMED_HEADER_PREFIX = "X-Crawler-"
WARC_FIELDS = "application/warc-fields"

RecordIds = Callable[[], str]


def new_record_id() -> str:
    return f"<urn:uuid:{uuid.uuid4()}>"


class RobotsPolicy(enum.Enum):
    """The ``robots`` field of ``warcinfo`` (WARC 1.1 annex: "classic" or "ignore")."""

    CLASSIC = "classic"
    IGNORE = "ignore"

    def __str__(self) -> str:
        return self.value


class Truncation(enum.Enum):
    """Why a stored body is shorter than the one sent (the WARC 1.1 ``WARC-Truncated`` values)."""

    #: Cut at the size cap (DOWNLOAD_MAXSIZE / ``limits.max_page_bytes``).
    LENGTH = "length"
    #: Cut at the download timeout.
    TIME = "time"
    DISCONNECT = "disconnect"
    UNSPECIFIED = "unspecified"

    def __str__(self) -> str:
        return self.value


class RevisitProfile(enum.Enum):
    """The ``WARC-Profile`` of a ``revisit`` record (WARC 1.1, section 6.7)."""

    #: The payload is byte for byte the one of an earlier capture (same payload digest).
    IDENTICAL_PAYLOAD_DIGEST = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"
    #: The server said so (304 Not Modified to a conditional request).
    SERVER_NOT_MODIFIED = "http://netpreserve.org/warc/1.1/revisit/server-not-modified"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, slots=True)
class CrawlInfo:
    """What the ``warcinfo`` record at the head of every file says about the crawl."""

    profile_name: str = ""
    #: The crawl profile (settings) as a JSON-serialisable mapping; written on one line.
    profile: Mapping[str, Any] | None = None
    robots: RobotsPolicy = RobotsPolicy.CLASSIC
    #: Who runs the crawl (a person or team and a contact), as in Heritrix's ``operator``.
    operator: str = ""
    #: The institution that publishes the archive (``publisher`` in Common Crawl's warcinfo).
    publisher: str = ""
    #: The ``From`` request header the crawler sends (a contact e-mail), if any.
    http_header_from: str = ""
    user_agent: str = ""
    description: str = ""
    #: Defaults to ``corpus-crawler/<version>``.
    software: str = ""


@dataclass(frozen=True, slots=True)
class WarcConfig:
    directory: Path
    prefix: str = "corpus"
    #: A file is closed once it holds this many bytes (checked before each exchange).
    max_bytes: int = 1_000_000_000
    #: The crawl host named in file names and ``warcinfo``; default: this machine's name.
    hostname: str = ""
    #: 14 (seconds) or 17 (milliseconds) digits in file names.
    timestamp_digits: int = 17
    info: CrawlInfo = field(default_factory=CrawlInfo)
    #: Also write a ``metadata`` record with the per-paragraph classes of each document.
    paragraph_metadata: bool = False
    #: zlib level of each record's gzip member. warcio uses 9; 6 is about as
    #: small and ~2x cheaper (the writer shares a CPU with Scrapy's reactor).
    compression_level: int = 6
    #: fsync after every record (survives power loss, costs a disk flush per record).
    fsync: bool = False
    #: Write a CDXJ index beside each finished WARC file.
    cdxj: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "directory", Path(self.directory))
        if isinstance(self.max_bytes, bool) or not isinstance(self.max_bytes, int):
            raise ConfigError(f"max_bytes must be a whole number of bytes, got {self.max_bytes!r}")
        if self.max_bytes <= 0:
            raise ConfigError(f"max_bytes must be > 0, got {self.max_bytes}")
        if self.compression_level not in range(1, 10):
            raise ConfigError(
                "compression_level must be 1 (fastest) to 9 (smallest),"
                f" got {self.compression_level!r}"
            )
        if self.timestamp_digits not in (14, 17):
            raise ConfigError(f"timestamp_digits must be 14 or 17, got {self.timestamp_digits!r}")
        if not self.prefix or safe_name_part(self.prefix) != self.prefix:
            raise ConfigError(
                f"prefix {self.prefix!r} must be non-empty and use only letters, digits, "
                f"'.' and '-': try {safe_name_part(self.prefix) or 'corpus'!r}"
            )
        if self.hostname and safe_name_part(self.hostname) != self.hostname:
            raise ConfigError(
                f"hostname {self.hostname!r} must use only letters, digits, '.' and '-': "
                f"try {safe_name_part(self.hostname)!r}"
            )


Headers = tuple[tuple[str, str], ...]


def header_pairs(pairs: Iterable[tuple[str | bytes, str | bytes]]) -> Headers:
    """Headers as (name, value) strings; bytes are decoded as ISO-8859-1 (byte-preserving).

    The writer encodes such strings back to the same bytes, so raw header bytes
    (UTF-8 in a ``Location``, say) are stored exactly as received. Scrapy keeps
    header names and values as bytes: pass
    ``[(k, v) for k, vs in response.headers.items() for v in vs]``.
    """

    def text(value: str | bytes) -> str:
        return value.decode("iso-8859-1") if isinstance(value, bytes) else value

    return tuple((text(name), text(value)) for name, value in pairs)


@dataclass(frozen=True, slots=True)
class Exchange:
    """One HTTP request and its response as they went over the wire.

    `response_headers` are the headers as received (names, order and repeats;
    raw bytes as ISO-8859-1 text, see `header_pairs`), before any middleware
    removed ``Content-Encoding``; `body` is the body as stored. With
    `body_decoded` false (what a capture at the downloader has: content coding
    kept, transfer coding undone) only the transfer-coding headers are renamed;
    with `body_decoded` true the headers are rewritten as `stored_response_headers`
    says. A ``Host`` header is added to the request when missing, as the HTTP
    client sends one.
    """

    url: str
    status: int
    body: bytes = b""
    method: str = "GET"
    request_headers: Headers = ()
    request_body: bytes = b""
    #: Empty: the standard phrase for `status` (unless `status_line` is given).
    reason: str = ""
    response_headers: Headers = ()
    http_version: str = "HTTP/1.1"
    ip_address: str | None = None
    #: When the response was received; default: the writer's clock.
    date: datetime | None = None
    body_decoded: bool = True
    #: The status line exactly as received (``HTTP/1.1 200 Everything Fine``, ISO-8859-1
    #: text); stored verbatim instead of `http_version`, `status` and `reason`.
    status_line: str = ""
    #: When the request was sent (the request record's ``WARC-Date``); default: `date`.
    request_date: datetime | None = None
    #: Milliseconds from sending the request to the end of the body (``fetchTimeMs``).
    fetch_time_ms: int | None = None
    #: Set when `body` is a prefix of what the server sent.
    truncated: Truncation | None = None

    def __post_init__(self) -> None:
        parts = urlsplit(self.url)
        if not parts.scheme or not parts.netloc:
            raise ValueError(f"Exchange.url must be an absolute URL, got {self.url!r}")
        if not 100 <= self.status <= 999:
            raise ValueError(f"Exchange.status must be an HTTP status code, got {self.status!r}")
        if not self.method or any(c.isspace() for c in self.method):
            raise ValueError(f"Exchange.method must be an HTTP method, got {self.method!r}")
        if self.status_line and not self.status_line.upper().startswith("HTTP/"):
            raise ValueError(
                f"Exchange.status_line must start with the HTTP version, got {self.status_line!r}"
            )
        if self.fetch_time_ms is not None and self.fetch_time_ms < 0:
            raise ValueError(f"Exchange.fetch_time_ms must be >= 0, got {self.fetch_time_ms!r}")
        object.__setattr__(self, "request_headers", header_pairs(self.request_headers))
        object.__setattr__(self, "response_headers", header_pairs(self.response_headers))


@dataclass(frozen=True, slots=True)
class ExchangeRecords:
    request_id: str
    response_id: str
    #: The file (final name) the records went to.
    path: Path
    #: The ``metadata`` record with ``fetchTimeMs``, when one was written.
    metadata_id: str | None = None


@dataclass(frozen=True, slots=True)
class DocumentRecords:
    conversion_id: str
    metadata_id: str | None
    #: The text file (``*.warc.wet.gz``, final name) the records went to.
    path: Path


def stored_response_headers(
    headers: Iterable[tuple[str, str]],
    body_length: int,
    *,
    body_decoded: bool = True,
    method: str = "GET",
    status: int = 200,
    truncated: bool = False,
) -> list[tuple[str, str]]:
    """The response headers as stored next to a body (see the module docstring).

    `body_decoded` false: the body is as sent but de-chunked, so only
    ``Transfer-Encoding`` (and a ``Content-Length`` beside it, which did not
    frame the message) get the ``X-Crawler-`` prefix; everything else stays as
    received and nothing is added. With `truncated` (the body is a prefix), the
    ``Content-Length`` that no longer describes it is renamed too.

    `body_decoded` true (de-chunked and decompressed, as Common Crawl stores
    bodies): ``Transfer-Encoding`` and ``Content-Encoding`` are renamed and
    ``Content-Length`` is the stored length, a differing original kept as
    ``X-Crawler-Content-Length``.

    Either way a ``Location`` or ``Content-Location`` with non-ASCII bytes is
    stored as the URL every client follows (those bytes percent-encoded, as
    WHATWG URL parsing does) with the raw value beside it as
    ``X-Crawler-Location``: replay tools cannot send a non-Latin-1 header, and
    pywb drops it, so the raw redirect would not replay.
    """
    headers = _ascii_locations(headers)
    if not body_decoded:
        chunked = any(name.lower() == "transfer-encoding" for name, _ in headers)
        framing = {"transfer-encoding"}
        if chunked or truncated:
            framing.add("content-length")
        return [
            (RENAMED_HEADER_PREFIX + _CANONICAL[name.lower()], value)
            if name.lower() in framing
            else (name, value)
            for name, value in headers
        ]
    out: list[tuple[str, str]] = []
    renamed = False
    length_at: int | None = None
    declared_length: str | None = None
    for name, value in headers:
        lower = name.lower()
        if lower == "transfer-encoding" or (
            lower == "content-encoding" and value.strip().lower() not in ("", "identity")
        ):
            out.append((RENAMED_HEADER_PREFIX + _CANONICAL[lower], value))
            renamed = True
        elif lower == "content-length":
            if length_at is None:
                length_at, declared_length = len(out), value
            # A repeated Content-Length is dropped: the stored one replaces them all.
        else:
            out.append((name, value))
    stored = str(body_length)
    no_body_expected = (
        method.upper() == "HEAD" or status in (204, 304) or 100 <= status < 200
    ) and body_length == 0
    if declared_length is not None and length_at is not None:
        if declared_length.strip() == stored or no_body_expected:
            out.insert(length_at, ("Content-Length", declared_length))
        else:
            out[length_at:length_at] = [
                (RENAMED_HEADER_PREFIX + "Content-Length", declared_length),
                ("Content-Length", stored),
            ]
    elif renamed:
        out.append(("Content-Length", stored))
    return out


_CANONICAL = {
    "transfer-encoding": "Transfer-Encoding",
    "content-encoding": "Content-Encoding",
    "content-length": "Content-Length",
}
_URL_HEADERS = {"location": "Location", "content-location": "Content-Location"}


def _ascii_locations(headers: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for name, value in headers:
        canonical = _URL_HEADERS.get(name.lower())
        if canonical is None or value.isascii():
            out.append((name, value))
            continue
        raw = _wire_bytes(value)
        encoded = "".join(chr(b) if b < 0x80 else f"%{b:02X}" for b in raw)
        out.append((name, encoded))
        out.append((RENAMED_HEADER_PREFIX + canonical, value))
    return out


def _one_line(value: str) -> str:
    return value.replace("\r", " ").replace("\n", " ")


def _clean_headers(headers: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    # A CR or LF inside a value would end the header block early and corrupt the record.
    return [(_one_line(name), _one_line(value)) for name, value in headers]


def _wire_bytes(text: str) -> bytes:
    # ISO-8859-1 gives back the bytes `header_pairs` decoded; text that is not
    # (a caller's own Unicode) is sent as UTF-8, as browsers and servers do.
    try:
        return text.encode("iso-8859-1")
    except UnicodeEncodeError:
        return text.encode("utf-8")


class _RawHttpHeaders(StatusAndHeaders):
    """warcio's header block, but with the bytes as received.

    warcio percent-encodes any non-ASCII value (RFC 8187 style), which turns a
    UTF-8 ``Location`` into a different URL that no longer replays.
    """

    def compute_headers_buffer(self, header_filter: Any = None) -> None:
        first = " ".join(part for part in (self.protocol, self.statusline) if part)
        lines = [_wire_bytes(first)] if first else []
        lines.extend(_wire_bytes(name) + b": " + _wire_bytes(value) for name, value in self.headers)
        self.headers_buff = b"".join(line + b"\r\n" for line in lines) + b"\r\n"


def _warc_date(moment: datetime) -> str:
    naive = as_utc(moment).replace(tzinfo=None)
    return str(datetime_to_iso_date(naive, use_micros=True))


# -- payload type and language ----------------------------------------------------------

_SNIFF_BYTES = 1024
#: How much of each content-coding layer is decoded to sniff the next one.
_SNIFF_INPUT = 64 * 1024
# The WHATWG MIME sniffing tags that mark HTML (mimesniff section 7.1), lower case.
_HTML_TAGS = (
    b"<!doctype html", b"<html", b"<head", b"<script", b"<iframe", b"<h1", b"<div",
    b"<font", b"<table", b"<a", b"<style", b"<title", b"<b", b"<body", b"<br", b"<p",
    b"<!--",
)  # fmt: skip


def _decoded_prefix(body: bytes, content_encoding: str) -> bytes:
    # Codings are listed in the order they were applied ("gzip, gzip"): undone from the
    # last; a prefix of each layer is enough to decode a prefix of the next.
    head = body
    for coding in reversed(content_encoding.lower().split(",")):
        head = _undo_coding(head, coding.strip())
        if not head:
            break
    return head[:_SNIFF_BYTES]


def _undo_coding(body: bytes, coding: str) -> bytes:
    try:
        if coding in ("gzip", "x-gzip"):
            return zlib.decompressobj(zlib.MAX_WBITS | 16).decompress(body, _SNIFF_INPUT)
        if coding == "deflate":
            try:
                return zlib.decompressobj().decompress(body, _SNIFF_INPUT)
            except zlib.error:  # raw deflate, as some servers send it
                return zlib.decompressobj(-zlib.MAX_WBITS).decompress(body, _SNIFF_INPUT)
        if coding == "br":
            import brotli  # Scrapy's own dependency for br

            # The output is bounded, not the input: 3 KB of brotli decoded 2 GB here
            # (4.2 GB peak RSS in the crawl process, tests/test_hostile_wire.py).
            return bytes(
                brotli.Decompressor().process(body[:_SNIFF_INPUT], output_buffer_limit=_SNIFF_INPUT)
            )[:_SNIFF_INPUT]
    except Exception:  # a broken coding: sniff nothing, fall back to the declared type
        return b""
    if coding in ("", "identity"):
        return body
    return b""  # a coding we cannot undo (zstd, compress...): its bytes say nothing


def identify_payload_type(body: bytes, headers: Iterable[tuple[str, str]]) -> str:
    """The media type of `body` by its first bytes (``WARC-Identified-Payload-Type``).

    Content coding (gzip, deflate, br) is undone on a prefix first. Magic
    numbers and the WHATWG HTML tags decide; XML, JSON and text keep the
    declared ``Content-Type`` when it is of their family; empty: unknown.
    """
    declared = ""
    coding = ""
    for name, value in headers:
        lower = name.lower()
        if lower == "content-type" and not declared:
            declared = value.split(";", 1)[0].strip().lower()
        elif lower == "content-encoding":
            coding = value
    head = _decoded_prefix(body, coding) if coding else body[:_SNIFF_BYTES]
    if not head:
        return ""
    signature = binary_signature(head)
    if signature is not None:
        return signature.media_type
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n\x0c").lower()
    if text.startswith(b"<?xml"):
        if declared.endswith(("+xml", "/xml")):
            return declared
        return "application/xml"
    for tag in _HTML_TAGS:
        if text.startswith(tag) and text[len(tag) : len(tag) + 1] in (b" ", b">", b"\t", b"\n"):
            return "text/html"
    if b"\x00" in head:
        return "application/octet-stream"
    if declared.startswith("text/") or declared.endswith(("json", "xml", "javascript")):
        return declared
    return "text/plain"


@lru_cache(maxsize=512)
def iso639_3(code: str) -> str:
    """The ISO 639-3 code of a language tag (``cs`` -> ``ces``, ``zh-Hant`` -> ``zho``).

    Common Crawl writes these in ``WARC-Identified-Content-Language``; empty
    when the tag names no ISO 639 language.
    """
    import pycountry

    primary = code.strip().replace("_", "-").split("-", 1)[0].lower()
    if primary == "und":  # "undetermined": no language identified
        return ""
    if len(primary) == 2:
        language = pycountry.languages.get(alpha_2=primary)
    elif len(primary) == 3:
        language = pycountry.languages.get(alpha_3=primary)
        if language is None:  # a bibliographic code (cze, ger)
            language = pycountry.languages.get(bibliographic=primary)
    else:
        return ""
    return str(language.alpha_3) if language is not None else ""


# -- CDXJ -------------------------------------------------------------------------------


def cdxj_path(warc_path: Path) -> Path:
    """The index beside a WARC: ``NAME.warc.gz`` -> ``NAME.cdxj``."""
    name = warc_path.name
    stem = name[: -len(WARC_EXTENSION)] if name.endswith(WARC_EXTENSION) else name
    return warc_path.with_name(stem + CDXJ_EXTENSION)


def write_cdxj(warc_path: Path) -> Path:
    """Index a finished WARC with cdxj-indexer (sorted, as pywb reads it); returns the index.

    The index names the WARC by its file name alone, so the two move together.
    Written as ``*.open`` and renamed, as the WARC files are.
    """
    from cdxj_indexer import CDXJIndexer

    lines = io.StringIO()
    CDXJIndexer(output=lines, inputs=[str(warc_path)], sort=True).process_all()
    return write_index(lines.getvalue().splitlines(keepends=True), cdxj_path(warc_path))


# -- the writer -------------------------------------------------------------------------


class WarcWriter:
    """Writes gzipped WARC/1.1 files and their text files; see the module docstring.

    One thread only.
    """

    def __init__(
        self,
        config: WarcConfig,
        *,
        clock: Clock | None = None,
        record_ids: RecordIds | None = None,
    ) -> None:
        self._config = config
        self._clock: Clock = clock or utc_now
        self._record_ids: RecordIds = record_ids or new_record_id
        self._hostname = config.hostname or default_hostname()
        self._warcinfo_id = ""
        self._text_warcinfo_id = ""
        self._next_text_warcinfo_id = ""
        # The date of the record that makes a new file start: its warcinfo is never later.
        self._first_record_date: datetime | None = None
        self._indexes: list[Path] = []
        # The CDXJ lines of the records in the open WARC file, made as they are written.
        self._index_lines: list[str] = []
        # What `_serialize` keeps of the last indexed record it built, for its line:
        # (record type, WARC headers as written, HTTP header block).
        self._last_indexed: tuple[str, dict[str, str], bytes | None] | None = None
        self._file = RotatingFile.for_config(
            config, extension=WARC_EXTENSION, clock=self._clock, header=self._warcinfo
        )
        # Closed with the WARC file (text is smaller than its HTML), so the text files
        # follow the WARC files one for one in time.
        self._text = RotatingFile.for_config(
            config, extension=TEXT_EXTENSION, clock=self._clock, header=self._text_warcinfo
        )

    # -- public API ---------------------------------------------------------------

    @property
    def files(self) -> tuple[Path, ...]:
        """Finished WARC files, in the order they were closed."""
        return self._file.closed_paths

    @property
    def text_files(self) -> tuple[Path, ...]:
        """Finished text (``*.warc.wet.gz``) files, in the order they were closed."""
        return self._text.closed_paths

    @property
    def index_files(self) -> tuple[Path, ...]:
        """The CDXJ indexes written so far, one per finished WARC file."""
        return tuple(self._indexes)

    @property
    def current_path(self) -> Path | None:
        """The final name of the WARC file being written, if one is open."""
        return self._file.final_path

    @property
    def current_text_path(self) -> Path | None:
        """The final name of the text (``*.warc.wet.gz``) file being written, if one is open."""
        return self._text.final_path

    def write_exchange(
        self,
        exchange: Exchange,
        *,
        request_id: str | None = None,
        response_id: str | None = None,
    ) -> ExchangeRecords:
        """Write the request, response (and fetch metadata) records of one exchange.

        `request_id`/`response_id`: record ids minted beforehand (`new_record_id`), so
        that a later record can refer to the response without waiting for this write.
        """
        return self._write_exchange_records(
            exchange,
            request_id,
            response_id,
            lambda date, own_id, request: self._response_record(exchange, date, own_id, request),
        )

    def write_revisit(
        self,
        exchange: Exchange,
        *,
        profile: RevisitProfile,
        refers_to: str,
        refers_to_uri: str,
        refers_to_date: datetime,
        request_id: str | None = None,
        revisit_id: str | None = None,
    ) -> ExchangeRecords:
        """Write the request and a ``revisit`` record (headers only) for a capture that
        repeats an earlier one: `refers_to` is that response's record id, with its
        target URI and date, so replay tools serve the earlier payload.

        With `RevisitProfile.IDENTICAL_PAYLOAD_DIGEST`, `exchange.body` is the
        payload received (only its digest is stored); with ``SERVER_NOT_MODIFIED``
        it is the (empty) body of the 304 response.
        """

        def revisit_record(date: str, own_id: str, request: str) -> bytes:
            headers = self._common_headers("revisit", exchange, date, own_id, request)
            headers["WARC-Refers-To"] = refers_to
            headers["WARC-Refers-To-Target-URI"] = refers_to_uri
            headers["WARC-Refers-To-Date"] = _warc_date(refers_to_date)
            headers["WARC-Profile"] = str(profile)
            if profile is RevisitProfile.IDENTICAL_PAYLOAD_DIGEST:
                headers["WARC-Payload-Digest"] = payload_digest(exchange.body)
            return self._serialize(
                "revisit",
                headers["WARC-Target-URI"],
                headers,
                b"",
                "application/http; msgtype=response",
                self._response_http_headers(exchange),
            )

        return self._write_exchange_records(exchange, request_id, revisit_id, revisit_record)

    def _write_exchange_records(
        self,
        exchange: Exchange,
        request_id: str | None,
        main_id: str | None,
        main_record: Callable[[str, str, str], bytes],
    ) -> ExchangeRecords:
        """Append an exchange's request, its main record (a response or a revisit, made by
        `main_record(warc_date, its_id, request_id)`) and its fetch metadata, rotating
        the file first when it is full. Ids not given are minted, the request's first."""
        if self._file.size >= self._config.max_bytes:
            self._close_files()
        response_moment = exchange.date if exchange.date is not None else self._clock()
        request_moment = exchange.request_date or response_moment
        self._first_record_date = request_moment
        self._file.ensure_open()
        request_id = request_id or self._record_ids()
        main_id = main_id or self._record_ids()
        data = self._request_record(exchange, _warc_date(request_moment), request_id, main_id)
        main_start = len(data)
        date = _warc_date(response_moment)
        self._last_indexed = None
        main = main_record(date, main_id, request_id)
        indexed, self._last_indexed = self._last_indexed, None
        data += main
        metadata_id: str | None = None
        if exchange.fetch_time_ms is not None:
            metadata_id = self._record_ids()
            data += self._fetch_metadata(exchange, date, metadata_id, main_id)
        # One write for the exchange, so that a crash rarely leaves a request without its response.
        offset = self._file.write(data)
        path = self._file.final_path
        assert path is not None
        if indexed is not None:
            # only once written: the index never names a record that is not in the file
            record_type, headers, http_block = indexed
            line = index_line(
                record_type,
                headers,
                http_block,
                offset=offset + main_start,
                length=len(main),
                filename=path.name,
            )
            if line is not None:
                self._index_lines.append(line)
        return ExchangeRecords(request_id, main_id, path, metadata_id)

    def write_document(
        self,
        document: Document,
        *,
        refers_to: str,
        url: str | None = None,
        date: datetime | None = None,
    ) -> DocumentRecords | None:
        """Write the conversion (and metadata) record of a kept document to the text file.

        `refers_to` is the response record's id from `write_exchange`; `url`
        defaults to ``document.url``; `date` should be the response's date (the
        text is of that capture). Returns None (and writes nothing) for a
        document that is not `Document.kept`.
        """
        if not document.kept:
            return None
        if not (url or document.url):
            raise ValueError("write_document needs a URL: pass url= or set Document.url")
        moment = date if date is not None else self._clock()
        self._first_record_date = moment
        self._text.ensure_open()
        data, conversion_id, metadata_id = document_records(
            document,
            refers_to=refers_to,
            url=url,
            date=moment,
            warcinfo_id=self._text_warcinfo_id,
            paragraph_metadata=self._config.paragraph_metadata,
            compression_level=self._config.compression_level,
            record_ids=self._record_ids,
        )
        self._text.write(data)
        path = self._text.final_path
        assert path is not None
        return DocumentRecords(conversion_id, metadata_id, path)

    def append_text_records(self, data: bytes, *, warcinfo_id: str) -> Path:
        """Append records `document_records` built elsewhere (in a worker process, so
        this thread only appends) with `warcinfo_id` as their ``WARC-Warcinfo-ID``.

        The text file is opened with `warcinfo_id` as its warcinfo record's id if none
        is open; a ValueError if the open one has another id (its records would
        point at a warcinfo record that is not in their file).
        """
        if self._text.final_path is None:
            self._next_text_warcinfo_id = warcinfo_id
            self._text.ensure_open()
        if warcinfo_id != self._text_warcinfo_id:
            raise ValueError(
                f"records built for warcinfo {warcinfo_id} cannot go to"
                f" {self._text.final_path} (warcinfo {self._text_warcinfo_id})"
            )
        self._text.write(data)
        path = self._text.final_path
        assert path is not None
        return path

    def close(self) -> None:
        """Finish the current files (rename ``*.open``, index the WARC); the next write
        starts new ones."""
        self._close_files()

    def __enter__(self) -> WarcWriter:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- files ----------------------------------------------------------------------

    def _close_files(self) -> None:
        finished = self._file.final_path
        self._file.close()
        self._text.close()
        lines, self._index_lines = self._index_lines, []
        if finished is not None and self._config.cdxj:
            try:
                self._indexes.append(write_index(lines, cdxj_path(finished)))
            except Exception as error:  # the WARC is whole; `recover` indexes it next start
                logger.error("could not index %s: %s", finished, error, exc_info=error)

    # -- record building ------------------------------------------------------------

    def _info_date(self) -> str:
        now = self._clock()
        first = self._first_record_date
        return _warc_date(first if first is not None and as_utc(first) < as_utc(now) else now)

    def _info_fields(self) -> list[tuple[str, str]]:
        info = self._config.info
        if info.software:
            software = info.software
        else:
            from . import __version__

            software = f"corpus-crawler/{__version__}"
        fields: list[tuple[str, str]] = [
            ("software", software),
            ("format", "WARC File Format 1.1"),
            ("conformsTo", CONFORMS_TO),
            ("hostname", self._hostname),
            ("robots", str(info.robots)),
            ("isPartOf", info.profile_name),
            ("operator", info.operator),
            ("publisher", info.publisher),
            ("http-header-user-agent", info.user_agent),
            ("http-header-from", info.http_header_from),
            ("description", info.description),
        ]
        return fields

    def _warcinfo(self, filename: str) -> bytes:
        info = self._config.info
        fields = self._info_fields()
        if info.profile is not None:
            profile = json.dumps(info.profile, sort_keys=True, ensure_ascii=False, default=str)
            fields.append(("crawl-profile", profile))
        self._warcinfo_id = self._record_ids()
        return self._info_record(filename, self._warcinfo_id, fields)

    def _text_warcinfo(self, filename: str) -> bytes:
        fields = self._info_fields()
        fields.append(("content", "clean text of kept pages (conversion records)"))
        # an id the records of `append_text_records` were built with, else a new one
        self._text_warcinfo_id = self._next_text_warcinfo_id or self._record_ids()
        self._next_text_warcinfo_id = ""
        return self._info_record(filename, self._text_warcinfo_id, fields)

    def _info_record(self, filename: str, record_id: str, fields: list[tuple[str, str]]) -> bytes:
        headers = {
            "WARC-Type": "warcinfo",
            "WARC-Record-ID": record_id,
            "WARC-Date": self._info_date(),
            "WARC-Filename": filename,
        }
        return self._serialize("warcinfo", "", headers, _warc_fields(fields), WARC_FIELDS)

    def _common_headers(
        self, record_type: str, exchange: Exchange, date: str, record_id: str, other_id: str
    ) -> dict[str, str]:
        headers = {
            "WARC-Type": record_type,
            "WARC-Record-ID": record_id,
            "WARC-Date": date,
            # The fragment is not sent to the server: it is no part of the capture.
            "WARC-Target-URI": urldefrag(exchange.url).url,
        }
        if exchange.ip_address:
            headers["WARC-IP-Address"] = exchange.ip_address
        headers["WARC-Concurrent-To"] = other_id
        headers["WARC-Warcinfo-ID"] = self._warcinfo_id
        return headers

    def _request_record(
        self, exchange: Exchange, date: str, record_id: str, response_id: str
    ) -> bytes:
        parts = urlsplit(exchange.url)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        headers = _clean_headers(exchange.request_headers)
        if not any(name.lower() == "host" for name, _ in headers):
            headers.insert(0, ("Host", parts.netloc.rpartition("@")[2]))
        http_headers = _RawHttpHeaders(
            f"{target} {_http_version(exchange.http_version)}",
            headers,
            protocol=exchange.method.upper(),
        )
        warc_headers = self._common_headers("request", exchange, date, record_id, response_id)
        return self._serialize(
            "request",
            warc_headers["WARC-Target-URI"],
            warc_headers,
            exchange.request_body,
            "application/http; msgtype=request",
            http_headers,
        )

    def _response_record(
        self, exchange: Exchange, date: str, record_id: str, request_id: str
    ) -> bytes:
        http_headers = self._response_http_headers(exchange)
        warc_headers = self._common_headers("response", exchange, date, record_id, request_id)
        payload_type = identify_payload_type(exchange.body, http_headers.headers)
        if payload_type:
            warc_headers["WARC-Identified-Payload-Type"] = payload_type
        if exchange.truncated is not None:
            warc_headers["WARC-Truncated"] = str(exchange.truncated)
        return self._serialize(
            "response",
            warc_headers["WARC-Target-URI"],
            warc_headers,
            exchange.body,
            "application/http; msgtype=response",
            http_headers,
        )

    def _response_http_headers(self, exchange: Exchange) -> _RawHttpHeaders:
        headers = stored_response_headers(
            _clean_headers(exchange.response_headers),
            len(exchange.body),
            body_decoded=exchange.body_decoded,
            method=exchange.method,
            status=exchange.status,
            truncated=exchange.truncated is not None,
        )
        if exchange.status_line:
            protocol, _, status_line = _one_line(exchange.status_line).partition(" ")
        else:
            reason = _one_line(exchange.reason) or _standard_reason(exchange.status)
            status_line = f"{exchange.status} {reason}".rstrip()
            protocol = _http_version(exchange.http_version)
        return _RawHttpHeaders(status_line, headers, protocol=protocol)

    def _fetch_metadata(
        self, exchange: Exchange, date: str, record_id: str, response_id: str
    ) -> bytes:
        # Common Crawl's per-capture metadata record; application/warc-fields keeps it
        # out of replay indexes (pywb and cdxj-indexer skip such records).
        target = urldefrag(exchange.url).url
        headers = {
            "WARC-Type": "metadata",
            "WARC-Record-ID": record_id,
            "WARC-Date": date,
            "WARC-Target-URI": target,
            "WARC-Concurrent-To": response_id,
            "WARC-Warcinfo-ID": self._warcinfo_id,
        }
        fields = [("fetchTimeMs", str(exchange.fetch_time_ms))]
        if exchange.truncated is not None:
            fields.append(("truncated", str(exchange.truncated)))
        return self._serialize("metadata", target, headers, _warc_fields(fields), WARC_FIELDS)

    def _serialize(
        self,
        record_type: str,
        uri: str,
        warc_headers: Mapping[str, str],
        payload: bytes,
        content_type: str,
        http_headers: StatusAndHeaders | None = None,
    ) -> bytes:
        if self._config.cdxj and record_type in INDEXED_RECORD_TYPES:
            http_block = _http_block(http_headers)
            data, headers = record_bytes_and_headers(
                record_type, uri, warc_headers, payload, content_type, http_block
            )
            self._last_indexed = (record_type, headers, http_block)
            return gzip_member(data, self._config.compression_level)
        return _serialize_record(
            record_type,
            uri,
            warc_headers,
            payload,
            content_type,
            http_headers,
            compression_level=self._config.compression_level,
        )


def _serialize_record(
    record_type: str,
    uri: str,
    warc_headers: Mapping[str, str],
    payload: bytes,
    content_type: str,
    http_headers: StatusAndHeaders | None = None,
    *,
    compression_level: int,
) -> bytes:
    """One record as one gzip member (`corpus_crawler._warc_record`: warcio's bytes)."""
    data = record_bytes(
        record_type, uri, warc_headers, payload, content_type, _http_block(http_headers)
    )
    return gzip_member(data, compression_level)


def _http_block(http_headers: StatusAndHeaders | None) -> bytes | None:
    if not http_headers:  # warcio leaves out an empty header block (no status line, no headers)
        return None
    http_headers.compute_headers_buffer()
    block: bytes = http_headers.headers_buff
    return block


def document_records(
    document: Document,
    *,
    refers_to: str,
    url: str | None,
    date: datetime,
    warcinfo_id: str,
    paragraph_metadata: bool,
    compression_level: int = 6,
    record_ids: RecordIds = new_record_id,
) -> tuple[bytes, str, str | None]:
    """The conversion (and, with `paragraph_metadata`, metadata) record of a kept
    document as gzip members, with their record ids: what `WarcWriter.write_document`
    writes, built without a writer so that a worker process can build it (pure)."""
    target = url or document.url
    if not target:
        raise ValueError("write_document needs a URL: pass url= or set Document.url")
    warc_date = _warc_date(date)
    conversion_id = record_ids()
    headers: dict[str, str] = {
        "WARC-Type": "conversion",
        "WARC-Record-ID": conversion_id,
        "WARC-Date": warc_date,
        "WARC-Target-URI": target,
        "WARC-Refers-To": refers_to,
        "WARC-Warcinfo-ID": warcinfo_id,
    }
    language = iso639_3(document.language) if document.language else ""
    if language:
        headers["WARC-Identified-Content-Language"] = language
    text = document.text.encode("utf-8", "replace")
    data = _serialize_record(
        "conversion",
        target,
        headers,
        text,
        "text/plain; charset=utf-8",
        compression_level=compression_level,
    )
    metadata_id: str | None = None
    if paragraph_metadata:
        metadata_id = record_ids()
        meta_headers = {
            "WARC-Type": "metadata",
            "WARC-Record-ID": metadata_id,
            "WARC-Date": warc_date,
            "WARC-Target-URI": target,
            "WARC-Refers-To": refers_to,
            "WARC-Warcinfo-ID": warcinfo_id,
        }
        body = _warc_fields(_paragraph_metadata(document, language))
        data += _serialize_record(
            "metadata",
            target,
            meta_headers,
            body,
            WARC_FIELDS,
            compression_level=compression_level,
        )
    return data, conversion_id, metadata_id


def payload_digest(payload: bytes) -> str:
    """``sha1:<base32>``, the payload digest warcio writes (and revisit records compare)."""
    return "sha1:" + base64.b32encode(hashlib.sha1(payload).digest()).decode("ascii")


def _warc_fields(fields: Iterable[tuple[str, str]]) -> bytes:
    """An ``application/warc-fields`` block: one ``name: value`` line per non-empty value."""
    return "".join(f"{name}: {_one_line(value)}\r\n" for name, value in fields if value).encode(
        "utf-8"
    )


def _http_version(version: str) -> str:
    version = version.strip()
    if not version:
        return "HTTP/1.1"
    if version.lower() in ("h2", "http/2.0"):
        return "HTTP/2"
    return version


def _standard_reason(status: int) -> str:
    try:
        return http.HTTPStatus(status).phrase
    except ValueError:
        return ""


def _paragraph_metadata(document: Document, language: str) -> list[tuple[str, str]]:
    fields = [
        ("title", document.title or ""),
        ("published", document.published or ""),
        ("language", language or (document.language or "")),
        (
            "language-confidence",
            "" if document.language_confidence is None else f"{document.language_confidence:.4f}",
        ),
        ("extractor", str(document.extractor or "")),
        ("preset", str(document.preset or "")),
    ]
    for p in document.paragraphs:
        features = {
            "class": str(p.final_class),
            "cf_class": str(p.cf_class),
            "heading": p.heading,
            "kind": p.kind,
            "xpath": p.xpath,
            "length": p.length,
            "link_density": round(p.link_density, 4),
            "stopword_density": round(p.stopword_density, 4),
        }
        # One JSON object per line: warc-fields values cannot span lines.
        fields.append(
            ("paragraph", json.dumps(features, ensure_ascii=False, separators=(",", ":")))
        )
    return fields


# --- recovery -------------------------------------------------------------------


def recover(directory: Path | str, *, index: bool = True) -> list[Recovered]:
    """Finish the ``*.warc.gz.open`` and ``*.warc.wet.gz.open`` files a crashed writer left.

    Each is cut after its last complete record (a whole gzip member that warcio
    reads with matching digests) and renamed to ``*.warc.gz`` / ``*.warc.wet.gz``;
    a file with no readable record goes to ``quarantine/``. With `index`, every
    finished WARC in `directory` without its CDXJ index gets one. Returns (and
    logs) what was done.
    """
    directory = Path(directory)
    recovered = recover_files(directory, (WARC_EXTENSION, TEXT_EXTENSION), _valid_warc_prefix)
    if index and directory.is_dir():
        _drop_stale_indexes(directory)
        for warc_path in sorted(directory.glob("*" + WARC_EXTENSION)):
            if cdxj_path(warc_path).exists():
                continue
            try:
                written = write_cdxj(warc_path)
            except Exception as error:  # an unreadable WARC: the file is kept as it is
                logger.error("could not index %s: %s", warc_path, error)
                continue
            if written.stat().st_size == 0:  # no WARC records: not ours to index
                written.unlink()
                logger.warning("%s holds no WARC record; not indexed", warc_path)
    return recovered


def _drop_stale_indexes(directory: Path) -> None:
    """Remove each CDXJ index that names a record its WARC no longer holds, so that
    `recover` makes it again from the file.

    The writer indexes a WARC when it closes it, and a campaign's restart cuts a
    closed WARC back to its committed length (or moves it out when nothing of it
    was committed: `corpus_crawler.state.reconcile_files`) after a crash that
    came before the commit. An index must never name a record that is not in
    the file.
    """
    for index in sorted(directory.glob("*" + CDXJ_EXTENSION)):
        warc_path = index.with_name(index.name[: -len(CDXJ_EXTENSION)] + WARC_EXTENSION)
        if not warc_path.exists():
            logger.warning("%s: its WARC %s is gone; index removed", index, warc_path.name)
            index.unlink()
            continue
        size = warc_path.stat().st_size
        if _index_end(index) > size:
            logger.warning(
                "%s names records past the end of %s (%d bytes, cut back); indexing it again",
                index,
                warc_path.name,
                size,
            )
            index.unlink()


def _index_end(index: Path) -> int:
    """The end (offset + length) of the last record a CDXJ index names; a line that
    cannot be read counts as past any end."""
    end = 0
    with open(index, encoding="utf-8") as handle:
        for line in handle:
            try:
                fields = json.loads(line.split(" ", 2)[2])
                end = max(end, int(fields["offset"]) + int(fields["length"]))
            except (IndexError, KeyError, ValueError):
                return 1 << 62
    return end


def _valid_warc_prefix(path: Path) -> tuple[int, int]:
    with open(path, "rb") as handle:
        ends = [end for end, _ in gzip_member_ends(handle)]
    if not ends:
        return 0, 0
    with open(path, "rb") as handle:
        valid = _count_valid_records(LimitReader(handle, ends[-1]))
    # The writer puts exactly one record in each gzip member.
    valid = min(valid, len(ends))
    if valid == 0:
        return 0, 0
    return ends[valid - 1], valid


def _count_valid_records(stream: Any) -> int:
    count = 0
    try:
        for record in ArchiveIterator(stream, check_digests=True):
            content = record.content_stream()
            while content.read(1 << 16):
                pass
            if record.digest_checker.passed is False:
                break
            count += 1
    except (ArchiveLoadFailed, EOFError, OSError, ValueError):
        pass
    return count
