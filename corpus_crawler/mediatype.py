"""Is a response HTML? One definition for the live crawl and for archive reprocessing.

A page is HTML when its Content-Type says so, or when it names no useful type
(none, ``application/octet-stream``) and its first bytes look like HTML; never
when its first bytes are the magic number of a binary format, whatever the
Content-Type says (servers label PDFs, images and archives ``text/html``, and
the extractor made "paragraphs" of their bytes).
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = [
    "HTML_TYPES",
    "SIGNATURES",
    "Signature",
    "binary_signature",
    "is_html",
    "looks_binary",
    "looks_like_html",
    "parse_content_type",
]

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


class Signature(NamedTuple):
    """The leading bytes of a binary format, with its media type and a name for people."""

    magic: bytes
    media_type: str
    description: str
    #: More bytes that must follow at `then_at` (RIFF's form type, bzip2's block magic).
    then: bytes = b""
    then_at: int = 0

    def matches(self, head: bytes) -> bool:
        return head.startswith(self.magic) and (
            not self.then or head[self.then_at : self.then_at + len(self.then)] == self.then
        )


#: The one table of binary signatures (WHATWG mimesniff 6.1-6.3, compression and
#: archive formats): no web page starts with one of these. It decides `is_html` (live
#: crawl and `process`), the ``WARC-Identified-Payload-Type`` of a record, and what
#: `corpus-crawler extract` names when it refuses a file.
SIGNATURES: tuple[Signature, ...] = (
    Signature(b"%PDF-", "application/pdf", "a PDF document"),
    Signature(b"\x89PNG\r\n\x1a\n", "image/png", "a PNG image"),
    Signature(b"GIF87a", "image/gif", "a GIF image"),
    Signature(b"GIF89a", "image/gif", "a GIF image"),
    Signature(b"\xff\xd8\xff", "image/jpeg", "a JPEG image"),
    Signature(b"RIFF", "image/webp", "a WebP image", then=b"WEBP", then_at=8),
    Signature(b"RIFF", "audio/wav", "a WAVE sound", then=b"WAVE", then_at=8),
    Signature(b"RIFF", "video/x-msvideo", "an AVI video", then=b"AVI ", then_at=8),
    Signature(b"RIFF", "application/octet-stream", "a RIFF file"),
    Signature(b"\x00\x00\x01\x00", "image/vnd.microsoft.icon", "an icon"),
    Signature(b"PK\x03\x04", "application/zip", "a ZIP archive (or DOCX/ODT/EPUB)"),
    Signature(b"\x1f\x8b\x08", "application/gzip", "gzip-compressed data"),
    Signature(b"BZh", "application/x-bzip2", "bzip2-compressed data", then=b"1AY&SY", then_at=4),
    Signature(b"\xfd7zXZ\x00", "application/x-xz", "xz-compressed data"),
    Signature(b"(\xb5/\xfd", "application/zstd", "zstd-compressed data"),
    Signature(b"7z\xbc\xaf\x27\x1c", "application/x-7z-compressed", "a 7-Zip archive"),
    Signature(b"Rar!\x1a\x07", "application/vnd.rar", "a RAR archive"),
    Signature(b"%!PS-Adobe-", "application/postscript", "a PostScript document"),
    Signature(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "application/x-ole-storage",
              "an old Microsoft Office document"),
    Signature(b"wOFF", "font/woff", "a web font"),
    Signature(b"wOF2", "font/woff2", "a web font"),
    Signature(b"OggS", "application/ogg", "Ogg audio or video"),
    Signature(b"\x1aE\xdf\xa3", "video/webm", "a WebM or Matroska video"),
    Signature(b"\x7fELF", "application/x-executable", "an executable"),
)  # fmt: skip


def binary_signature(body: bytes) -> Signature | None:
    """The binary format whose signature `body` starts with, else None."""
    for signature in SIGNATURES:
        if signature.matches(body):
            return signature
    return None


def looks_binary(body: bytes) -> bool:
    """Whether `body` starts with the signature of a binary format (PDF, image, archive)."""
    return binary_signature(body) is not None


def is_html(media: str, body: bytes) -> bool:
    """Whether a response of media type `media` (from `parse_content_type`) is HTML."""
    if looks_binary(body):
        return False
    return media in HTML_TYPES or (
        media in ("", "application/octet-stream") and looks_like_html(body)
    )
