"""WARC/1.1 output of a crawl: every HTTP exchange, plus the clean text of kept pages.

Usage, from the one writer path of a crawl (the Scrapy pipeline; this module
never imports Scrapy)::

    config = WarcConfig(Path("out/warc"), prefix="crawl", info=CrawlInfo(profile_name="cs"))
    recover(config.directory)                      # finish files left by a crash
    with WarcWriter(config) as warc:
        ids = warc.write_exchange(Exchange(url=..., method="GET", status=200, ...))
        if document.kept:
            warc.write_document(document, refers_to=ids.response_id)

What is written, per file (``{prefix}-{timestamp}-{serial:05d}-{hostname}.warc.gz``):

* a ``warcinfo`` record first (software, hostname, format, conformsTo, robots
  policy, crawl profile, operator);
* per `Exchange`: a ``request`` then a ``response`` record, each naming the
  other in ``WARC-Concurrent-To``, with block and payload digests (SHA-1,
  base32, computed by warcio) and ``WARC-IP-Address`` when known;
* per kept `Document`: a ``conversion`` record with its clean text
  (``WARC-Refers-To`` the response) and, if `WarcConfig.paragraph_metadata`,
  a ``metadata`` record with the class and features of every paragraph.

Scrapy hands over bodies de-chunked and decompressed. As Common Crawl does, the
stored response then renames ``Transfer-Encoding``/``Content-Encoding`` to
``X-Crawler-Transfer-Encoding``/``X-Crawler-Content-Encoding`` and sets
``Content-Length`` to the stored body length, keeping a differing original as
``X-Crawler-Content-Length``; so WARC readers do not try to de-chunk or
decompress the payload again. Header values that are not ASCII are
percent-encoded by warcio (RFC 8187).

Records are built and gzipped by warcio (one gzip member per record); the
records of one call (a request and its response; a conversion and its
metadata) are written with one ``write`` and flushed. See
`corpus_crawler._files` for the ``*.open`` naming and rotation, and `recover`
for restarts. The clock and the record-id factory are injectable so that tests
compare output byte for byte.

``WARC-Identified-Content-Language`` carries ``Document.language`` as the
extractor gives it (not mapped to ISO 639-3).
"""

from __future__ import annotations

import enum
import http
import json
import uuid
import zlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from io import BytesIO
from pathlib import Path
from typing import Any
from urllib.parse import urldefrag, urlsplit

from warcio.archiveiterator import ArchiveIterator
from warcio.exceptions import ArchiveLoadFailed
from warcio.limitreader import LimitReader
from warcio.statusandheaders import StatusAndHeaders
from warcio.timeutils import datetime_to_iso_date
from warcio.warcwriter import WARCWriter

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
from .config import ConfigError
from .model import Document

__all__ = [
    "CONFORMS_TO",
    "CrawlInfo",
    "DocumentRecords",
    "Exchange",
    "ExchangeRecords",
    "Recovered",
    "RecoveryAction",
    "RobotsPolicy",
    "WarcConfig",
    "WarcWriter",
    "header_pairs",
    "new_record_id",
    "recover",
    "stored_response_headers",
]

WARC_VERSION = "1.1"
WARC_EXTENSION = ".warc.gz"
CONFORMS_TO = "https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/"
RENAMED_HEADER_PREFIX = "X-Crawler-"

RecordIds = Callable[[], str]


def new_record_id() -> str:
    return f"<urn:uuid:{uuid.uuid4()}>"


class RobotsPolicy(enum.Enum):
    """The ``robots`` field of ``warcinfo`` (WARC 1.1 annex: "classic" or "ignore")."""

    CLASSIC = "classic"
    IGNORE = "ignore"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, slots=True)
class CrawlInfo:
    """What the ``warcinfo`` record at the head of every file says about the crawl."""

    profile_name: str = ""
    #: The crawl profile (settings) as a JSON-serialisable mapping; written on one line.
    profile: Mapping[str, Any] | None = None
    robots: RobotsPolicy = RobotsPolicy.CLASSIC
    operator: str = ""
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

    Scrapy keeps header names and values as bytes: pass
    ``[(k, v) for k, vs in response.headers.items() for v in vs]``.
    """

    def text(value: str | bytes) -> str:
        return value.decode("iso-8859-1") if isinstance(value, bytes) else value

    return tuple((text(name), text(value)) for name, value in pairs)


@dataclass(frozen=True, slots=True)
class Exchange:
    """One HTTP request and its response as they went over the wire.

    `response_headers` are the headers as received (before any middleware
    removed ``Content-Encoding``); `body` is the body as stored. When
    `body_decoded` is true (Scrapy's default: de-chunked and decompressed) the
    headers are rewritten as the module docstring says. A ``Host`` header is
    added to the request when missing, as the HTTP client sends one.
    """

    url: str
    status: int
    body: bytes = b""
    method: str = "GET"
    request_headers: Headers = ()
    request_body: bytes = b""
    #: Empty: the standard phrase for `status`.
    reason: str = ""
    response_headers: Headers = ()
    http_version: str = "HTTP/1.1"
    ip_address: str | None = None
    #: When the response was received; default: the writer's clock.
    date: datetime | None = None
    body_decoded: bool = True

    def __post_init__(self) -> None:
        parts = urlsplit(self.url)
        if not parts.scheme or not parts.netloc:
            raise ValueError(f"Exchange.url must be an absolute URL, got {self.url!r}")
        if not 100 <= self.status <= 999:
            raise ValueError(f"Exchange.status must be an HTTP status code, got {self.status!r}")
        if not self.method or any(c.isspace() for c in self.method):
            raise ValueError(f"Exchange.method must be an HTTP method, got {self.method!r}")
        object.__setattr__(self, "request_headers", header_pairs(self.request_headers))
        object.__setattr__(self, "response_headers", header_pairs(self.response_headers))


@dataclass(frozen=True, slots=True)
class ExchangeRecords:
    request_id: str
    response_id: str
    #: The file (final name) the records went to.
    path: Path


@dataclass(frozen=True, slots=True)
class DocumentRecords:
    conversion_id: str
    metadata_id: str | None
    path: Path


def stored_response_headers(
    headers: Iterable[tuple[str, str]],
    body_length: int,
    *,
    body_decoded: bool = True,
    method: str = "GET",
    status: int = 200,
) -> list[tuple[str, str]]:
    """The response headers as stored next to a decoded body (see the module docstring)."""
    headers = list(headers)
    if not body_decoded:
        return headers
    out: list[tuple[str, str]] = []
    renamed = False
    length_at: int | None = None
    declared_length: str | None = None
    for name, value in headers:
        lower = name.lower()
        if lower == "transfer-encoding" or (
            lower == "content-encoding" and value.strip().lower() not in ("", "identity")
        ):
            canonical = "Transfer-Encoding" if lower == "transfer-encoding" else "Content-Encoding"
            out.append((RENAMED_HEADER_PREFIX + canonical, value))
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


def _one_line(value: str) -> str:
    return value.replace("\r", " ").replace("\n", " ")


def _clean_headers(headers: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    # A CR or LF inside a value would end the header block early and corrupt the record.
    return [(_one_line(name), _one_line(value)) for name, value in headers]


def _warc_date(moment: datetime) -> str:
    naive = as_utc(moment).replace(tzinfo=None)
    return str(datetime_to_iso_date(naive, use_micros=True))


class WarcWriter:
    """Writes gzipped WARC/1.1 files; see the module docstring. One thread only."""

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
        self._file = RotatingFile(
            config.directory,
            prefix=config.prefix,
            extension=WARC_EXTENSION,
            max_bytes=config.max_bytes,
            hostname=self._hostname,
            timestamp_digits=config.timestamp_digits,
            clock=self._clock,
            header=self._warcinfo,
            fsync=config.fsync,
        )

    # -- public API ---------------------------------------------------------------

    @property
    def files(self) -> tuple[Path, ...]:
        """Finished files, in the order they were closed."""
        return self._file.closed_paths

    @property
    def current_path(self) -> Path | None:
        """The final name of the file being written, if one is open."""
        return self._file.final_path

    def write_exchange(
        self,
        exchange: Exchange,
        *,
        request_id: str | None = None,
        response_id: str | None = None,
    ) -> ExchangeRecords:
        """Write the request and response records of one exchange (same file, same date).

        `request_id`/`response_id`: record ids minted beforehand (`new_record_id`), so
        that a later record can refer to the response without waiting for this write.
        """
        self._file.rotate_if_full()
        self._file.ensure_open()
        date = _warc_date(exchange.date if exchange.date is not None else self._clock())
        request_id = request_id or self._record_ids()
        response_id = response_id or self._record_ids()
        request = self._request_record(exchange, date, request_id, response_id)
        response = self._response_record(exchange, date, response_id, request_id)
        # One write for the pair, so that a crash rarely leaves a request without its response.
        self._file.write(request + response)
        path = self._file.final_path
        assert path is not None
        return ExchangeRecords(request_id, response_id, path)

    def write_document(
        self,
        document: Document,
        *,
        refers_to: str,
        url: str | None = None,
        date: datetime | None = None,
    ) -> DocumentRecords | None:
        """Write the conversion (and metadata) record of a kept document.

        `refers_to` is the response record's id from `write_exchange`; `url`
        defaults to ``document.url``. Returns None (and writes nothing) for a
        document that is not `Document.kept`.
        """
        if not document.kept:
            return None
        target = url or document.url
        if not target:
            raise ValueError("write_document needs a URL: pass url= or set Document.url")
        self._file.ensure_open()
        warc_date = _warc_date(date if date is not None else self._clock())
        conversion_id = self._record_ids()
        headers: dict[str, str] = {
            "WARC-Type": "conversion",
            "WARC-Record-ID": conversion_id,
            "WARC-Date": warc_date,
            "WARC-Target-URI": target,
            "WARC-Refers-To": refers_to,
            "WARC-Warcinfo-ID": self._warcinfo_id,
        }
        if document.language:
            headers["WARC-Identified-Content-Language"] = document.language
        text = document.text.encode("utf-8", "replace")
        data = self._serialize("conversion", target, headers, text, "text/plain; charset=utf-8")
        metadata_id: str | None = None
        if self._config.paragraph_metadata:
            metadata_id = self._record_ids()
            body = json.dumps(
                _paragraph_metadata(document, target), ensure_ascii=False, separators=(",", ":")
            ).encode("utf-8", "replace")
            meta_headers = {
                "WARC-Type": "metadata",
                "WARC-Record-ID": metadata_id,
                "WARC-Date": warc_date,
                "WARC-Target-URI": target,
                "WARC-Refers-To": refers_to,
                "WARC-Warcinfo-ID": self._warcinfo_id,
            }
            data += self._serialize("metadata", target, meta_headers, body, "application/json")
        self._file.write(data)
        path = self._file.final_path
        assert path is not None
        return DocumentRecords(conversion_id, metadata_id, path)

    def close(self) -> None:
        """Finish the current file (rename ``*.open``); the next write starts a new one."""
        self._file.close()

    def __enter__(self) -> WarcWriter:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- record building ------------------------------------------------------------

    def _warcinfo(self, filename: str) -> bytes:
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
            ("http-header-user-agent", info.user_agent),
            ("description", info.description),
        ]
        if info.profile is not None:
            profile = json.dumps(info.profile, sort_keys=True, ensure_ascii=False, default=str)
            fields.append(("crawl-profile", profile))
        body = "".join(f"{name}: {_one_line(value)}\r\n" for name, value in fields if value)
        self._warcinfo_id = self._record_ids()
        headers = {
            "WARC-Type": "warcinfo",
            "WARC-Record-ID": self._warcinfo_id,
            "WARC-Date": _warc_date(self._clock()),
            "WARC-Filename": filename,
        }
        return self._serialize(
            "warcinfo", "", headers, body.encode("utf-8"), "application/warc-fields"
        )

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
        http_headers = StatusAndHeaders(
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
        headers = stored_response_headers(
            _clean_headers(exchange.response_headers),
            len(exchange.body),
            body_decoded=exchange.body_decoded,
            method=exchange.method,
            status=exchange.status,
        )
        reason = _one_line(exchange.reason) or _standard_reason(exchange.status)
        status_line = f"{exchange.status} {reason}".rstrip()
        http_headers = StatusAndHeaders(
            status_line, headers, protocol=_http_version(exchange.http_version)
        )
        warc_headers = self._common_headers("response", exchange, date, record_id, request_id)
        return self._serialize(
            "response",
            warc_headers["WARC-Target-URI"],
            warc_headers,
            exchange.body,
            "application/http; msgtype=response",
            http_headers,
        )

    def _serialize(
        self,
        record_type: str,
        uri: str,
        warc_headers: Mapping[str, str],
        payload: bytes,
        content_type: str,
        http_headers: StatusAndHeaders | None = None,
    ) -> bytes:
        """One record as one gzip member: built and digested by warcio, then gzipped."""
        buffer = BytesIO()
        writer = WARCWriter(buffer, gzip=False, warc_version=WARC_VERSION)
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
        compressor = zlib.compressobj(
            self._config.compression_level, zlib.DEFLATED, zlib.MAX_WBITS | 16
        )
        return compressor.compress(buffer.getvalue()) + compressor.flush()


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


def _paragraph_metadata(document: Document, url: str) -> dict[str, Any]:
    return {
        "url": url,
        "title": document.title,
        "language": document.language,
        "language_confidence": document.language_confidence,
        "extractor": document.extractor,
        "preset": document.preset,
        "paragraphs": [
            {
                "class": str(p.final_class),
                "cf_class": str(p.cf_class),
                "heading": p.heading,
                "kind": p.kind,
                "xpath": p.xpath,
                "length": p.length,
                "link_density": round(p.link_density, 4),
                "stopword_density": round(p.stopword_density, 4),
            }
            for p in document.paragraphs
        ],
    }


# --- recovery -------------------------------------------------------------------


def recover(directory: Path | str) -> list[Recovered]:
    """Finish the ``*.warc.gz.open`` files a crashed writer left in `directory`.

    Each is cut after its last complete record (a whole gzip member that warcio
    reads with matching digests) and renamed to ``*.warc.gz``; a file with no
    readable record goes to ``quarantine/``. Returns (and logs) what was done.
    """
    return recover_files(Path(directory), (WARC_EXTENSION,), _valid_warc_prefix)


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
