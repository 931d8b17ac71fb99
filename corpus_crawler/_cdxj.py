"""CDXJ index lines made by the WARC writer as it writes each record.

`index_line` gives, for a record the writer has just built, the line that
cdxj-indexer 1.5 (`CDXJIndexer` with its default fields and records, as
`corpus_crawler.warc.write_cdxj` runs it) would write for it when re-reading the
finished WARC: ``SURT TIMESTAMP {"url", "mime", "status", "digest", "length",
"offset", "filename"}``, for ``response`` and ``revisit`` records only (our
``request`` records and our ``application/warc-fields`` metadata records are not
indexed). `write_index` sorts the lines as the indexer's ``sort=True`` does and
writes the file crash-safe. `tests/test_cdxj_live.py` checks both against the
re-reading indexer on every kind of record the writer makes.

Why: re-reading the WARC at close decompressed and parsed every record again,
~0.3 ms a page on the crawl process, all of it at the end of the crawl (and at
every rotation) while the writer thread held the GIL against the reactor. Here a
line costs a parse of the HTTP header block the writer already holds.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from io import BytesIO
from pathlib import Path

import surt
from warcio.statusandheaders import StatusAndHeadersParser
from warcio.timeutils import iso_date_to_timestamp

from ._files import OPEN_SUFFIX, fsync_directory

__all__ = ["INDEXED_RECORD_TYPES", "index_line", "write_index"]

#: Our record types that cdxj-indexer's default selection indexes.
INDEXED_RECORD_TYPES = frozenset({"response", "revisit"})

# as warcio's record loader parses an HTTP header block (no status line check)
_HTTP_PARSER = StatusAndHeadersParser(["HTTP/1.0", "HTTP/1.1"], verify=False)
_HTTP_SCHEMES = ("http:", "https:")
_MIME_END = re.compile(r"[;\s]")


def _header(headers: Mapping[str, str], name: str) -> str | None:
    lowered = name.lower()
    for key, value in headers.items():
        if key.lower() == lowered:
            # warcio strips what it reads back
            return value.strip()
    return None


def _target_uri(headers: Mapping[str, str]) -> str | None:
    # warcio's fixes of what it reads: Wget's <URI> and spaces (percent-encoded)
    uri = _header(headers, "WARC-Target-URI")
    if uri is not None and uri.startswith("<") and uri.endswith(">"):
        uri = uri[1:-1]
    if uri is not None and " " in uri:
        uri = uri.replace(" ", "%20")
    return uri


def index_line(
    record_type: str,
    warc_headers: Mapping[str, str],
    http_block: bytes | None,
    *,
    offset: int,
    length: int,
    filename: str,
) -> str | None:
    """The CDXJ line (with its newline) of one record, or None if it is not indexed.

    `warc_headers` are the record's WARC headers as written (digests included),
    `http_block` its HTTP header block; `offset` and `length` are its gzip
    member's place in the file named `filename`.
    """
    if record_type not in INDEXED_RECORD_TYPES:
        return None
    url = _target_uri(warc_headers)
    http = None
    content_length = _header(warc_headers, "Content-Length")
    if (
        http_block
        and content_length not in (None, "0")
        and url is not None
        and url.startswith(_HTTP_SCHEMES)
    ):
        try:
            http = _HTTP_PARSER.parse(BytesIO(http_block))
        except EOFError:  # an empty revisit block: no HTTP headers
            http = None
    fields: dict[str, str] = {}
    if url is not None:
        fields["url"] = url
    if record_type == "revisit":
        fields["mime"] = "warc/revisit"
    elif http is not None:
        mime = http.get_header("content-type")
        if mime is not None:
            fields["mime"] = _MIME_END.split(mime, 1)[0].strip() if mime else mime
    if http is not None:
        fields["status"] = http.get_statuscode()
    digest = _header(warc_headers, "WARC-Payload-Digest")
    if digest is not None:
        fields["digest"] = digest
    fields["length"] = str(length)
    fields["offset"] = str(offset)
    fields["filename"] = filename
    if url is None:
        url = ""
    try:
        key = surt.surt(url)
    except Exception:  # cdxj-indexer keys an unparsable URL by itself
        key = url
    timestamp = iso_date_to_timestamp(_header(warc_headers, "WARC-Date") or "")
    return f"{key} {timestamp} {json.dumps(fields)}\n"


def write_index(lines: Iterable[str], target: Path) -> Path:
    """Write `lines` sorted to `target` (as ``*.open``, fsynced, renamed); returns it."""
    ordered = sorted(lines)
    partial = target.with_name(target.name + OPEN_SUFFIX)
    try:
        with open(partial, "w", encoding="utf-8") as handle:
            handle.writelines(ordered)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    os.replace(partial, target)
    fsync_directory(target.parent)
    return target
