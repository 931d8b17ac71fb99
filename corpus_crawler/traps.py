"""Crawler-trap limits: pure checks over URL strings, and a per-domain ledger.

A trap is a site (hostile or merely badly built) that generates URLs without
end: a calendar whose "next month" never stops, a session id minted into every
link, relative links that grow the path (`a/b/a/b/...`), a wildcard DNS entry
answering every subdomain. No single rule catches them all, so, as Heritrix
and BUbiNG do, several cheap limits bound them together:

* URL length (2,083 characters: the longest URL Internet Explorer accepted, the
  de facto limit most sites respect);
* a path segment repeated too often (Heritrix's PathologicalPathDecideRule);
* too many query parameters;
* link hops inside one registered domain (calendar and session-id traps grow
  depth without bound even with a global `max_depth: null`);
* pages per registered domain, public-suffix aware (wildcard subdomains are one
  domain);
* links kept per page.

Session ids are also removed from the key a URL is remembered under
(`seen_key`), so `?sid=1` and `?sid=2` are one page.
"""

from __future__ import annotations

import enum
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from .domains import registered_domain

__all__ = ["DomainLedger", "TrapLimits", "TrapReason", "cap_links", "check_url", "seen_key"]


class TrapReason(enum.Enum):
    """Why a URL looks like a trap; counted under ``corpus/links/refused/<value>``."""

    URL_TOO_LONG = "url-too-long"
    REPEATED_SEGMENTS = "repeated-path-segments"
    TOO_MANY_PARAMETERS = "too-many-query-parameters"
    DOMAIN_TOO_DEEP = "domain-too-deep"
    OVER_DOMAIN_PAGES = "over-max-pages-per-domain"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, slots=True)
class TrapLimits:
    """The limits; None switches one off."""

    #: Characters of a whole URL.
    max_url_length: int | None = 2083
    #: Times one path segment may occur in a path (`/a/b/a/b/a/b/a/` has `a` 4 times).
    max_segment_repeats: int | None = 3
    #: Parameters in the query string.
    max_query_parameters: int | None = 16
    #: Link hops since the crawl first reached a registered domain.
    max_domain_depth: int | None = 50
    #: Pages scheduled per registered domain.
    max_pages_per_domain: int | None = None
    #: Links of one page that are considered (the rest are counted and ignored).
    max_links_per_page: int | None = 1000


def check_url(url: str, limits: TrapLimits) -> TrapReason | None:
    """None if `url` passes the per-URL limits, else which one it breaks."""
    if limits.max_url_length is not None and len(url) > limits.max_url_length:
        return TrapReason.URL_TOO_LONG
    path, _, query = url.partition("?")
    query = query.partition("#")[0]
    if limits.max_query_parameters is not None and query:
        count = query.count("&") + query.count(";") + 1
        if count > limits.max_query_parameters:
            return TrapReason.TOO_MANY_PARAMETERS
    if limits.max_segment_repeats is not None:
        # after "scheme://host": the path alone
        slash = path.find("/", path.find("//") + 2 if "//" in path else 0)
        segments = [s for s in path[slash:].split("/") if s] if slash != -1 else []
        if len(segments) > limits.max_segment_repeats:
            most = Counter(segments).most_common(1)[0][1]
            if most > limits.max_segment_repeats:
                return TrapReason.REPEATED_SEGMENTS
    return None


def cap_links(links: Sequence[str], limits: TrapLimits) -> tuple[Sequence[str], int]:
    """The links of one page that are kept, and how many were cut."""
    limit = limits.max_links_per_page
    if limit is None or len(links) <= limit:
        return links, 0
    return links[:limit], len(links) - limit


#: Query parameters that never change a page: session ids (Heritrix's and common
#: frameworks' names) and the click and campaign trackers that share buttons, mailings
#: and ads add to links of the same page (Google Analytics' utm_*, Facebook's fbclid,
#: Google Ads' gclid/dclid, Microsoft's msclkid, Yandex's yclid, Mailchimp's mc_cid and
#: mc_eid, Instagram's igshid, HubSpot's _hsenc/_hsmi, Marketo's mkt_tok).
_SESSION_PARAMETER = re.compile(
    r"^(?:jsessionid|phpsessid|aspsessionid[a-z]*|sid|sessionid|session_id|session|"
    r"cfid|cftoken|zenid|oscsid|"
    r"utm_[a-z_]+|fbclid|gclid|dclid|gbraid|wbraid|msclkid|yclid|mc_cid|mc_eid|igshid|"
    r"_hsenc|_hsmi|mkt_tok)$",
    re.IGNORECASE,
)
_PATH_SESSION = re.compile(r";jsessionid=[^/?#]*", re.IGNORECASE)


def seen_key(url: str) -> str:
    """The key a URL is remembered under: without its fragment, session ids and
    click or campaign trackers (``utm_source``, ``fbclid``...).

    The URL itself is fetched unchanged; only the duplicate check ignores these, so a
    page linked with a fresh id each time, or from a share button, is fetched once.
    """
    url = url.partition("#")[0]
    if ";" not in url and "?" not in url:
        return url
    url = _PATH_SESSION.sub("", url)
    base, sep, query = url.partition("?")
    if not sep:
        return url
    kept = [p for p in query.split("&") if not _SESSION_PARAMETER.match(p.partition("=")[0])]
    return base + ("?" + "&".join(kept) if kept else "")


class DomainLedger:
    """Pages scheduled and entry depth per registered domain (one small entry per domain).

    The crawl is breadth-first, so the depth at which a domain is first seen is
    (nearly) the least; a link's depth inside its domain is its depth minus that.
    """

    __slots__ = ("_entry_depth", "_pages", "limits")

    def __init__(self, limits: TrapLimits) -> None:
        self.limits = limits
        self._entry_depth: dict[str, int] = {}
        self._pages: Counter[str] = Counter()

    def admit(self, url: str, depth: int) -> TrapReason | None:
        """None and the page counted if `url` at link `depth` fits its domain's limits."""
        domain = registered_domain(urlsplit(url).hostname or "")
        entry = self._entry_depth.setdefault(domain, depth)
        limit = self.limits.max_domain_depth
        if limit is not None and depth - entry > limit:
            return TrapReason.DOMAIN_TOO_DEEP
        limit = self.limits.max_pages_per_domain
        if limit is not None and self._pages[domain] >= limit:
            return TrapReason.OVER_DOMAIN_PAGES
        self._pages[domain] += 1
        return None

    def pages(self, url_or_host: str) -> int:
        host = urlsplit(url_or_host).hostname if "//" in url_or_host else url_or_host
        return self._pages[registered_domain(host or "")]
