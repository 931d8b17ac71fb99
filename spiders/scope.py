"""Which URLs a crawl may fetch: scheme, host (domains or TLD suffixes), deny patterns, file type,
and the per-URL trap limits (length, repeated path segments, query parameters).

Pure rules over URL strings, shared by the spider (links and seeds) and by
`ScopeGuardMiddleware` (redirect targets).
"""

from __future__ import annotations

import dataclasses
import enum
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from scrapy.linkextractors import IGNORED_EXTENSIONS

from corpus_crawler.traps import TrapLimits, TrapReason, check_url

__all__ = ["BINARY_EXTENSIONS", "Refusal", "UrlScope"]

#: Links to files with these extensions are not followed (Scrapy's list, plus a few).
BINARY_EXTENSIONS: frozenset[str] = frozenset(IGNORED_EXTENSIONS) | {
    "gz",
    "tgz",
    "epub",
    "woff",
    "woff2",
    "ttf",
    "otf",
    "avif",
    "heic",
}


class Refusal(enum.Enum):
    """Why a URL is out of scope; counted under ``corpus/links/refused/<value>``."""

    SCHEME = "scheme"
    HOST = "host"
    DENIED = "denied"
    BINARY = "binary"

    def __str__(self) -> str:
        return self.value


def _normalise_suffix(value: str) -> str:
    return value.strip().lower().lstrip("*").lstrip(".")


@dataclass(frozen=True, slots=True)
class UrlScope:
    """Scope rules; an empty `domains` and `suffixes` allows every host."""

    #: Hosts allowed, each with its subdomains.
    domains: frozenset[str] = frozenset()
    #: Host suffixes allowed (TLDs such as `cz`, or `co.uk`).
    suffixes: tuple[str, ...] = ()
    deny: tuple[re.Pattern[str], ...] = ()
    traps: TrapLimits = field(default_factory=TrapLimits)

    @classmethod
    def build(
        cls,
        domains: Iterable[str] = (),
        suffixes: Iterable[str] = (),
        deny_patterns: Iterable[str] = (),
        traps: TrapLimits | None = None,
    ) -> UrlScope:
        return cls(
            domains=frozenset(d.strip().lower().lstrip(".") for d in domains if d.strip()),
            suffixes=tuple(_normalise_suffix(s) for s in suffixes if _normalise_suffix(s)),
            deny=tuple(re.compile(p) for p in deny_patterns),
            traps=traps or TrapLimits(),
        )

    def with_host(self, host: str) -> UrlScope:
        """This scope with `host` (and its subdomains) allowed too."""
        return dataclasses.replace(self, domains=self.domains | {host.lower()})

    def allows_host(self, host: str) -> bool:
        if not self.domains and not self.suffixes:
            return True
        host = host.lower().rstrip(".")
        if host in self.domains:
            return True
        # a host matches a domain or suffix if it equals it or ends with ".<it>"
        labels = host.split(".")
        for start in range(1, len(labels)):
            parent = ".".join(labels[start:])
            if parent in self.domains or parent in self.suffixes:
                return True
        return host in self.suffixes

    def check(self, url: str, *, page: bool = True) -> Refusal | TrapReason | None:
        """None if `url` may be fetched, else why not. `page=False` skips the file-type rule
        (for sitemaps, which are often `.xml.gz`)."""
        # the length first: the other rules then never scan an 8,000-character URL
        trap = check_url(url, self.traps)
        if trap is not None:
            return trap
        split = _split(url)
        if split is None:
            return Refusal.SCHEME
        host, path = split
        if not self.allows_host(host):
            return Refusal.HOST
        if page:
            name = path.rsplit("/", 1)[-1]
            if "." in name and name.rsplit(".", 1)[1].lower() in BINARY_EXTENSIONS:
                return Refusal.BINARY
        for pattern in self.deny:
            if pattern.search(url):
                return Refusal.DENIED
        return None


def _split(url: str) -> tuple[str, str] | None:
    """(host, path) of an http(s) URL, or None. A fast path for the common shape:
    the spider checks every new link, and urlsplit() is most of that time."""
    scheme, sep, rest = url.partition("://")
    if not sep or scheme.lower() not in ("http", "https"):
        return None
    end = len(rest)
    for stop in "/?#":
        at = rest.find(stop)
        if at != -1 and at < end:
            end = at
    netloc = rest[:end]
    if "@" in netloc or "[" in netloc or "%" in netloc:
        parts = urlsplit(url)
        return (parts.hostname, parts.path) if parts.hostname else None
    host = netloc.rpartition(":")[0] if ":" in netloc else netloc
    if not host:
        return None
    path = rest[end:].partition("?")[0].partition("#")[0]
    return host.lower(), path
