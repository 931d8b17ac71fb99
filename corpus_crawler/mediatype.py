"""Is a response HTML? One definition for the live crawl and for archive reprocessing.

A page is HTML when its Content-Type says so, or when it names no useful type
(none, ``application/octet-stream``) and its first bytes look like HTML; never
when its first bytes are the magic number of a binary format, whatever the
Content-Type says (servers label PDFs, images and archives ``text/html``, and
the extractor made "paragraphs" of their bytes).
"""

from __future__ import annotations

__all__ = ["HTML_TYPES", "is_html", "looks_binary", "looks_like_html", "parse_content_type"]

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})


def parse_content_type(value: str) -> tuple[str, str | None]:
    """The media type (lower case, no parameters; "" if none) and the charset parameter."""
    media, _, params = value.partition(";")
    charset: str | None = None
    for param in params.split(";"):
        key, _, val = param.partition("=")
        if key.strip().lower() == "charset" and val.strip():
            charset = val.strip().strip("\"'")
    return media.strip().lower(), charset


def looks_like_html(body: bytes) -> bool:
    """The sniff for responses without a useful Content-Type."""
    head = body[:1024].lstrip().lower()
    return head.startswith((b"<!doctype html", b"<html")) or b"<html" in head


#: Signatures of binary formats (WHATWG mimesniff 6.1-6.3 and common archives): no
#: HTML document starts with one of these bytes.
_BINARY_MAGIC = (
    b"%PDF-", b"\x89PNG\r\n\x1a\n", b"GIF87a", b"GIF89a", b"\xff\xd8\xff", b"PK\x03\x04",
    b"\x1f\x8b\x08", b"\xfd7zXZ\x00", b"7z\xbc\xaf\x27\x1c", b"Rar!\x1a\x07",
    b"%!PS-Adobe-", b"wOFF", b"wOF2", b"OggS", b"\x1aE\xdf\xa3", b"RIFF",
    b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", b"\x7fELF",
)  # fmt: skip


def looks_binary(body: bytes) -> bool:
    """Whether `body` starts with the signature of a binary format (PDF, image, archive)."""
    return body.startswith(_BINARY_MAGIC)


def is_html(media: str, body: bytes) -> bool:
    """Whether a response of media type `media` (from `parse_content_type`) is HTML."""
    if looks_binary(body):
        return False
    return media in HTML_TYPES or (
        media in ("", "application/octet-stream") and looks_like_html(body)
    )
