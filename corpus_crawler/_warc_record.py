"""One WARC/1.1 record as one gzip member, built without warcio's writer.

The bytes are those warcio 1.8's ``WARCWriter`` writes for the same arguments
(``create_warc_record`` then ``write_record``; `tests/test_warc_record.py`
compares them with warcio's on every record kind we write): the WARC headers in
the order given, then ``WARC-Payload-Digest`` (not for ``warcinfo`` and
``revisit`` records, nor when given), ``WARC-Block-Digest`` (over the HTTP
header block and the payload), ``Content-Type`` and ``Content-Length``; then
the HTTP header block, the payload (not for a ``revisit`` record) and two CRLFs.

Why not warcio: on the crawl's writer thread warcio's record building (header
objects, digesters over 16 KiB chunks, a ``BytesIO`` per record) cost ~0.6 ms
a page of Python holding the GIL against the reactor, and its gzip ran at
zlib's speed. Here a record is a few joins; SHA-1 (hashlib) and deflate
(zlib-ng when installed, else zlib) release the GIL on page-sized input.
`benchmarks/crawl_speed.py` and ``docs/performance.md`` have the figures.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping

try:
    # zlib-ng's deflate at the same level: members ~0.5% apart in size from zlib's,
    # built in about half the CPU (1.06 against 1.99 ms a gold page at level 6)
    from zlib_ng import zlib_ng as _deflate
except ImportError:  # pragma: no cover - a dependency; zlib's members are as valid
    import zlib as _deflate  # type: ignore[no-redef]

__all__ = [
    "DEFLATE_MODULE",
    "gzip_member",
    "record_bytes",
    "record_bytes_and_headers",
    "sha1_digest",
]

#: The deflate implementation in use ("zlib_ng.zlib_ng", else "zlib").
DEFLATE_MODULE: str = _deflate.__name__

_GZIP_WBITS = 31  # a gzip header and trailer around the deflate stream
_NO_PAYLOAD_DIGEST = ("warcinfo", "revisit")
_HEADERS_ONLY = "revisit"


def sha1_digest(*parts: bytes) -> str:
    """``sha1:<base32>`` of the concatenated parts, as warcio writes digests."""
    hasher = hashlib.sha1()
    for part in parts:
        hasher.update(part)
    return "sha1:" + base64.b32encode(hasher.digest()).decode("ascii")


def record_bytes(
    record_type: str,
    uri: str,
    warc_headers: Mapping[str, str],
    payload: bytes,
    content_type: str,
    http_block: bytes | None = None,
) -> bytes:
    """The uncompressed record: see the module docstring for the layout, and
    `record_bytes_and_headers` for the arguments."""
    return record_bytes_and_headers(
        record_type, uri, warc_headers, payload, content_type, http_block
    )[0]


def record_bytes_and_headers(
    record_type: str,
    uri: str,
    warc_headers: Mapping[str, str],
    payload: bytes,
    content_type: str,
    http_block: bytes | None = None,
) -> tuple[bytes, dict[str, str]]:
    """The uncompressed record and its WARC headers as written (digests, type and
    length included: what an index of the record needs).

    `warc_headers` start with ``WARC-Type`` (whose value `record_type` sets) and
    hold the record's own headers; `uri` sets ``WARC-Target-URI`` (appended when
    missing) unless empty. `http_block` is the HTTP header block, blank line
    included (given for every ``request``, ``response`` and ``revisit`` record:
    warcio would parse one out of the payload), else None.
    """
    headers = dict(warc_headers)
    _replace(headers, "WARC-Type", record_type)
    if uri:
        _replace(headers, "WARC-Target-URI", uri)
    block = http_block or b""
    if record_type not in _NO_PAYLOAD_DIGEST and not _has(headers, "WARC-Payload-Digest"):
        headers["WARC-Payload-Digest"] = sha1_digest(payload)
    if not _has(headers, "WARC-Block-Digest"):
        headers["WARC-Block-Digest"] = sha1_digest(block, payload)
    _replace(headers, "Content-Type", content_type)
    headers_only = record_type == _HEADERS_ONLY
    length = len(payload)
    if http_block:
        length = len(http_block) + (0 if headers_only else len(payload))
    _replace(headers, "Content-Length", str(length))
    head = "WARC/1.1\r\n" + "".join(f"{name}: {value}\r\n" for name, value in headers.items())
    parts = [head.encode("utf-8"), b"\r\n", block]
    if not headers_only:
        parts.append(payload)
    parts.append(b"\r\n\r\n")
    return b"".join(parts), headers


def gzip_member(data: bytes, level: int) -> bytes:
    """`data` as one gzip member (a whole record, so readers can seek to it)."""
    compressor = _deflate.compressobj(level, _deflate.DEFLATED, _GZIP_WBITS)
    return compressor.compress(data) + compressor.flush()


def _has(headers: dict[str, str], name: str) -> bool:
    lowered = name.lower()
    return any(key.lower() == lowered for key in headers)


def _replace(headers: dict[str, str], name: str, value: str) -> None:
    # warcio matches header names without case and keeps the first spelling's place
    lowered = name.lower()
    for key in headers:
        if key.lower() == lowered:
            headers[key] = value
            return
    headers[name] = value
