"""Sitemaps and robots.txt `Sitemap:` lines, read within limits.

A sitemap is untrusted input like any page: it can be a gzip bomb, list
millions of URLs, nest indexes without end or carry a DTD. `read_sitemap`
turns one fetched body into the URLs it lists, bounded in bytes (after
decompression) and in URLs; `SitemapBudget` bounds index depth and sitemaps
per host across the crawl. The defaults are the sitemaps.org protocol's own
limits (50,000 URLs and 50 MB uncompressed per file).

Parsing: lxml's incremental parser, no network, internal DTD entities expanded
(libxml2 stops an entity-amplification "billion laughs" by itself), external
ones never; XML, gzipped XML and plain-text sitemaps (one URL per line) are
read. A sitemap with an internal DTD keeps its URLs.
"""

from __future__ import annotations

import enum
import zlib
from collections import Counter
from dataclasses import dataclass
from io import BytesIO
from urllib.parse import urljoin, urlsplit

from lxml import etree

__all__ = [
    "ROBOTS_TXT_MAX_BYTES",
    "SitemapBudget",
    "SitemapContent",
    "SitemapKind",
    "SitemapLimits",
    "SitemapRefusal",
    "bounded_gunzip",
    "read_sitemap",
    "robots_sitemaps",
]

#: Google reads the first 500 KiB of a robots.txt and ignores the rest.
ROBOTS_TXT_MAX_BYTES = 500 * 1024

_GZIP_MAGIC = b"\x1f\x8b"


@dataclass(frozen=True, slots=True)
class SitemapLimits:
    #: Bytes of one sitemap after decompression; the rest is not read.
    max_bytes: int = 50 * 1024 * 1024
    #: URLs taken from one sitemap file.
    max_urls: int = 50_000
    #: Sitemap-index nesting: 0 reads only the sitemaps the crawl starts from.
    max_depth: int = 2
    #: Sitemaps fetched per host over the whole crawl.
    max_per_host: int = 1000


class SitemapKind(enum.Enum):
    URLSET = "urlset"
    INDEX = "sitemapindex"
    ROBOTS = "robots"
    TEXT = "text"
    INVALID = "invalid"


@dataclass(frozen=True, slots=True)
class SitemapContent:
    """What one sitemap (or robots.txt) lists."""

    kind: SitemapKind
    #: Absolute http(s) URLs, in document order: pages (urlset, text) or sitemaps (index, robots).
    urls: tuple[str, ...] = ()
    #: The file was cut at `max_bytes` or `max_urls`.
    truncated: bool = False

    @property
    def lists_sitemaps(self) -> bool:
        return self.kind in (SitemapKind.INDEX, SitemapKind.ROBOTS)


class SitemapRefusal(enum.Enum):
    """Why a sitemap is not fetched; counted under ``corpus/sitemaps/refused/<value>``."""

    TOO_DEEP = "too-deep"
    OVER_PER_HOST = "over-max-per-host"

    def __str__(self) -> str:
        return self.value


def bounded_gunzip(data: bytes, max_bytes: int) -> tuple[bytes, bool]:
    """Decompress gzip `data` to at most `max_bytes`; (bytes, cut). A damaged stream gives
    what could be decoded before the damage."""
    out: list[bytes] = []
    size = 0
    while data:
        decompressor = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            chunk = decompressor.decompress(data, max_bytes - size + 1)
        except zlib.error:
            break
        out.append(chunk)
        size += len(chunk)
        if size > max_bytes:
            return b"".join(out)[:max_bytes], True
        # concatenated gzip members are one file (RFC 1952)
        data = decompressor.unused_data if decompressor.eof else b""
    return b"".join(out), False


def _is_http(url: str) -> bool:
    return url[:8].lower().startswith(("http://", "https://"))


def robots_sitemaps(body: bytes, base_url: str) -> SitemapContent:
    """The `Sitemap:` lines of a robots.txt (its first 500 KiB, as Google reads it)."""
    text = body[:ROBOTS_TXT_MAX_BYTES].decode("utf-8", "replace")
    urls: list[str] = []
    for line in text.splitlines():
        name, sep, value = line.partition(":")
        if sep and name.strip().lower() == "sitemap":
            url = urljoin(base_url, value.split("#", 1)[0].strip())
            if _is_http(url):
                urls.append(url)
    return SitemapContent(SitemapKind.ROBOTS, tuple(dict.fromkeys(urls)), len(body) > len(text))


def _local_name(tag: object) -> str:
    if not isinstance(tag, str):  # comments, processing instructions, entities
        return ""
    return tag.rpartition("}")[2].lower()


def read_sitemap(body: bytes, url: str, limits: SitemapLimits = SitemapLimits()) -> SitemapContent:
    """The URLs one fetched sitemap lists (robots.txt by its path, gzip by its magic number)."""
    if urlsplit(url).path == "/robots.txt":
        return robots_sitemaps(body, url)
    truncated = False
    if body[:2] == _GZIP_MAGIC:
        body, truncated = bounded_gunzip(body, limits.max_bytes)
    elif len(body) > limits.max_bytes:
        body, truncated = body[: limits.max_bytes], True
    head = body[:4096].lstrip(b"\xef\xbb\xbf \t\r\n")
    if head.startswith(b"<"):
        return _read_xml(body, url, limits, truncated)
    return _read_text(body, url, limits, truncated)


def _read_xml(body: bytes, url: str, limits: SitemapLimits, truncated: bool) -> SitemapContent:
    parser = etree.iterparse(
        BytesIO(body),
        events=("start", "end"),
        recover=True,
        resolve_entities="internal",
        no_network=True,
        huge_tree=False,
        remove_comments=True,
        remove_pis=True,
        collect_ids=False,
    )
    kind = SitemapKind.INVALID
    urls: list[str] = []
    try:
        for event, element in parser:
            name = _local_name(element.tag)
            if kind is SitemapKind.INVALID:
                if event != "start":
                    continue
                if name == "urlset":
                    kind = SitemapKind.URLSET
                elif name == "sitemapindex":
                    kind = SitemapKind.INDEX
                else:
                    return SitemapContent(SitemapKind.INVALID)
                continue
            if event != "end":
                continue
            if name == "loc":
                parent = element.getparent()
                if parent is not None and _local_name(parent.tag) in ("url", "sitemap"):
                    loc = "".join(element.itertext()).strip()
                    absolute = urljoin(url, loc) if loc else ""
                    if _is_http(absolute):
                        urls.append(absolute)
                        if len(urls) >= limits.max_urls:
                            truncated = truncated or _more_follows(parser)
                            break
            elif name in ("url", "sitemap"):
                # keep memory flat: drop what was read
                element.clear(keep_tail=False)
                previous = element.getprevious()
                while previous is not None:
                    parent = previous.getparent()
                    if parent is None:
                        break
                    parent.remove(previous)
                    previous = element.getprevious()
    except etree.XMLSyntaxError:
        pass  # recover=True still raises on some damage: keep what was read before it
    return SitemapContent(kind, tuple(urls), truncated)


def _more_follows(parser: etree.iterparse) -> bool:
    try:
        for event, element in parser:
            if event == "end" and _local_name(element.tag) == "loc":
                return True
    except etree.XMLSyntaxError:
        return False
    return False


def _read_text(body: bytes, url: str, limits: SitemapLimits, truncated: bool) -> SitemapContent:
    """sitemaps.org's text format: one URL per line, nothing else."""
    urls: list[str] = []
    for line in body.decode("utf-8", "replace").splitlines():
        line = line.strip()
        if not line:
            continue
        if not _is_http(line) or " " in line:
            return SitemapContent(SitemapKind.INVALID)
        if len(urls) >= limits.max_urls:
            return SitemapContent(SitemapKind.TEXT, tuple(urls), True)
        urls.append(line)
    if not urls:
        return SitemapContent(SitemapKind.INVALID)
    return SitemapContent(SitemapKind.TEXT, tuple(urls), truncated)


class SitemapBudget:
    """Index depth and sitemaps per host, across one crawl."""

    __slots__ = ("_per_host", "limits")

    def __init__(self, limits: SitemapLimits) -> None:
        self.limits = limits
        self._per_host: Counter[str] = Counter()

    def admit(self, url: str, depth: int) -> SitemapRefusal | None:
        """None and the sitemap counted if it may be fetched at index `depth`, else why not."""
        if depth > self.limits.max_depth:
            return SitemapRefusal.TOO_DEEP
        host = (urlsplit(url).hostname or "").lower()
        if self._per_host[host] >= self.limits.max_per_host:
            return SitemapRefusal.OVER_PER_HOST
        self._per_host[host] += 1
        return None
