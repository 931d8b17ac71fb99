"""Is a response HTML? One definition for the live crawl and for archive reprocessing.

A page is HTML when its Content-Type says so, or when it names no useful type
(none, ``application/octet-stream``) and its first bytes look like HTML.
"""

from __future__ import annotations

__all__ = ["HTML_TYPES", "is_html", "looks_like_html", "parse_content_type"]

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


def is_html(media: str, body: bytes) -> bool:
    """Whether a response of media type `media` (from `parse_content_type`) is HTML."""
    return media in HTML_TYPES or (
        media in ("", "application/octet-stream") and looks_like_html(body)
    )
