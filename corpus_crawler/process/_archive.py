"""WARC and ARC files read record by record from any byte offset, surviving damage.

warcio parses the records (WARC 1.0/1.1, ARC through its ``arc2warc`` view,
gzipped per record or not, chunked and ``Content-Encoding`` bodies decoded);
this module adds what reprocessing at scale needs around it:

* **record sync points** (`next_record_start`): the first offset at or after a
  position where a record begins. In a gzipped WARC a record is a gzip member
  whose inflated head is a WARC header block; in a plain WARC it is a
  ``WARC/1.x`` line that starts a header block. With them a large file is cut
  into byte ranges that workers read independently (a record belongs to the
  range its first byte is in), the way Hadoop's WARC input formats split
  Common Crawl files;
* **damage recovery** (`scan_records`): a record that warcio cannot read
  (corrupt gzip, a torn or truncated tail, a broken header) is reported with
  its offset and skipped; reading goes on from the next sync point. A record the
  file ends inside of, which warcio hands out as if it were whole (a crawl killed
  mid-write, a partial copy), is reported too (`cut_short`).

A sync point is found by content, so a gzipped WARC stored *inside* a record
without compression could in theory be mistaken for a record start; each
candidate must inflate to a full WARC header block with ``WARC-Type`` and
``Content-Length``, which makes that vanishingly rare in practice.
"""

from __future__ import annotations

import enum
import re
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from warcio.archiveiterator import ArchiveIterator
from warcio.exceptions import ArchiveLoadFailed
from warcio.recordloader import ArcWarcRecord
from warcio.statusandheaders import StatusAndHeadersParserException

from corpus_crawler.cut_records import cut_short

__all__ = [
    "ARCHIVE_SUFFIXES",
    "ArchiveError",
    "ArchiveKind",
    "RecordDamage",
    "next_record_start",
    "record_header",
    "scan_records",
    "sniff_kind",
]

#: File names `corpus-crawler process DIR` picks up inside a folder.
ARCHIVE_SUFFIXES = (".warc.gz", ".warc", ".arc.gz", ".arc")

_GZIP_MAGIC = b"\x1f\x8b\x08"
_SCAN_BLOCK = 1 << 20
#: Compressed bytes inflated to check one gzip candidate; a WARC header block fits.
_PROBE_BYTES = 1 << 16
_WARC_LINE = re.compile(rb"WARC/1\.[01]\r?\n")

# What warcio (and zlib, brotli under it) raise on damaged input; warcio's parser
# also fails with AttributeError/TypeError/KeyError on headers missing a field.
_DAMAGE: tuple[type[BaseException], ...] = (
    AttributeError,
    TypeError,
    KeyError,
    ArchiveLoadFailed,
    StatusAndHeadersParserException,
    zlib.error,
    EOFError,
    ValueError,
    OSError,
    UnicodeDecodeError,
    IndexError,
)
try:  # warcio decodes brotli bodies when the module is there
    import brotli

    _DAMAGE = (*_DAMAGE, brotli.error)
except ImportError:  # pragma: no cover - brotli is optional
    pass


class ArchiveError(Exception):
    """The file is not a WARC or ARC archive at all."""


class ArchiveKind(enum.Enum):
    WARC_GZ = "warc.gz"
    WARC = "warc"
    ARC_GZ = "arc.gz"
    ARC = "arc"

    @property
    def gzipped(self) -> bool:
        return self in (ArchiveKind.WARC_GZ, ArchiveKind.ARC_GZ)

    @property
    def splittable(self) -> bool:
        """Whether records can be found from an arbitrary offset (ARC records cannot)."""
        return self in (ArchiveKind.WARC_GZ, ArchiveKind.WARC)

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, slots=True)
class RecordDamage:
    """A record that could not be read; reading resumed at `resumed_at` (None: at the end)."""

    offset: int
    message: str
    resumed_at: int | None


def sniff_kind(path: Path) -> ArchiveKind:
    """What kind of archive `path` is, from its first bytes (never from its name)."""
    with open(path, "rb") as handle:
        head = handle.read(_PROBE_BYTES)
    if not head:
        raise ArchiveError(f"{path}: the file is empty, not a WARC or ARC archive")
    gzipped = head.startswith(_GZIP_MAGIC)
    if gzipped:
        try:
            text = zlib.decompressobj(zlib.MAX_WBITS | 16).decompress(head, 256)
        except zlib.error:
            text = b""
        if not text:
            # A damaged first member: the name decides, the scan finds the first good record.
            return ArchiveKind.ARC_GZ if path.name.endswith(".arc.gz") else ArchiveKind.WARC_GZ
    else:
        text = head[:256]
    text = text.lstrip(b"\r\n")
    if text.startswith(b"WARC/"):
        return ArchiveKind.WARC_GZ if gzipped else ArchiveKind.WARC
    if text.startswith(b"filedesc://"):
        return ArchiveKind.ARC_GZ if gzipped else ArchiveKind.ARC
    raise ArchiveError(
        f"{path}: not a WARC or ARC archive (it starts with {text[:20]!r}); pass .warc,"
        " .warc.gz, .arc or .arc.gz files"
    )


def next_record_start(handle: BinaryIO, position: int, kind: ArchiveKind) -> int | None:
    """The offset of the first record that starts at or after `position`, or None."""
    if not kind.splittable:
        return position if position == 0 else None
    finder = _gzip_candidate if kind.gzipped else _plain_candidate
    pattern = _GZIP_MAGIC if kind.gzipped else b"WARC/1."
    block_start = position
    while True:
        handle.seek(block_start)
        block = handle.read(_SCAN_BLOCK + len(pattern))
        if len(block) < len(pattern):
            return None
        index = block.find(pattern)
        while index != -1 and index < _SCAN_BLOCK:
            candidate = block_start + index
            if finder(handle, candidate):
                return candidate
            index = block.find(pattern, index + 1)
        if len(block) < _SCAN_BLOCK + len(pattern):
            return None
        block_start += _SCAN_BLOCK


def _gzip_candidate(handle: BinaryIO, offset: int) -> bool:
    handle.seek(offset)
    data = handle.read(_PROBE_BYTES)
    try:
        head = zlib.decompressobj(zlib.MAX_WBITS | 16).decompress(data, _PROBE_BYTES)
    except zlib.error:
        return False
    return _is_warc_head(head)


def _plain_candidate(handle: BinaryIO, offset: int) -> bool:
    if offset > 0:
        handle.seek(offset - 1)
        if handle.read(1) != b"\n":
            return False
    handle.seek(offset)
    return _is_warc_head(handle.read(_PROBE_BYTES))


def _is_warc_head(head: bytes) -> bool:
    if _WARC_LINE.match(head) is None:
        return False
    end = head.find(b"\r\n\r\n")
    if end == -1:
        end = head.find(b"\n\n")
        if end == -1:
            return False
    block = head[:end].lower()
    return b"\nwarc-type:" in block and b"\ncontent-length:" in block


#: Called with each readable record and its offset; must read what it needs before returning.
RecordHandler = Callable[[int, ArcWarcRecord], None]


def scan_records(
    path: Path,
    kind: ArchiveKind,
    start: int,
    end: int | None,
    on_record: RecordHandler,
    on_damage: Callable[[RecordDamage], None],
) -> int:
    """Feed every record that starts in ``[start, end)`` to `on_record`.

    `end` None: to the end of the file. Damage is reported to `on_damage` and
    reading resumes at the next sync point; a record cut short by the end of the file
    is handed to `on_record` (which may check it with `cut_short` first) and then
    reported. Returns the number of records read.
    """
    count = 0
    with open(path, "rb") as handle:
        position: int | None = next_record_start(handle, start, kind)
        if position is None and start == 0 and not kind.splittable:
            position = 0
        if start == 0 and position != 0:
            # the file's head is no record (its first gzip member is corrupt, say)
            where = "no record in the whole file" if position is None else "no record"
            on_damage(RecordDamage(0, f"{where}: the file is damaged from its start", position))
        while position is not None and (end is None or position < end):
            handle.seek(position)
            iterator = ArchiveIterator(
                handle, arc2warc=not kind.splittable, ensure_http_headers=False
            )
            current = position
            #: the record handed out last: read to its end once the iterator moves on
            last: tuple[int, ArcWarcRecord] | None = None
            try:
                for record in iterator:
                    if last is not None:
                        _report_cut(*last, on_damage)
                        last = None
                    current = iterator.offset
                    if end is not None and current >= end:
                        return count
                    on_record(current, record)
                    last = (current, record)
                    count += 1
                if last is not None:
                    _report_cut(*last, on_damage)
                return count
            except _DAMAGE as exc:
                # The record being parsed, or the one handed out last if its tail was torn.
                damaged = max(current, iterator.offset)
                message = f"{type(exc).__name__}: {_first_line(exc)}"
                if "non-chunked gzip" in message:
                    message = (
                        "the file is gzipped as a whole, not one gzip member per record:"
                        " recompress it with `warcio recompress IN OUT` and process that"
                    )
                resume = _resume_point(handle, damaged, kind)
                on_damage(RecordDamage(damaged, message, resume))
                position = resume
    return count


def _report_cut(
    offset: int, record: ArcWarcRecord, on_damage: Callable[[RecordDamage], None]
) -> None:
    problem = cut_short(record)
    if problem is not None:
        on_damage(RecordDamage(offset, problem, None))


def _resume_point(handle: BinaryIO, failed_at: int, kind: ArchiveKind) -> int | None:
    if not kind.splittable:
        # ARC records carry no marker to find them by: the rest of the file is lost.
        return None
    return next_record_start(handle, failed_at + 1, kind)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0][:200] if text else ""


def record_header(record: ArcWarcRecord, name: str) -> str:
    value: Any = record.rec_headers.get_header(name)
    return str(value) if value is not None else ""
