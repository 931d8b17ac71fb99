"""The headers every request of a crawl carries besides the User-Agent.

`Accept-Language` asks a site that negotiates its language (RFC 9110 section
12.5.4; `Vary: Accept-Language`) for the language the corpus is built in. Scrapy
sends `en` on every request, so a Czech crawl of a site that serves cs, de and en
from one URL got the English version, which language identification then dropped
as wrong-language: the Czech text was never fetched. Here the header names the
crawl's languages (the accept-list, else a fixed `extraction.language`), most wanted
first with falling q-values; a crawl that wants every language (`auto`) keeps `en`,
which is what sites have seen from Scrapy so far. A profile can set the header
itself (`politeness.accept_language`), or send none (`""`).

Pure functions of the profile; `pipelines/bridge.py` puts the result in Scrapy's
DEFAULT_REQUEST_HEADERS, so robots.txt and sitemap requests carry it too.
"""

from __future__ import annotations

from collections.abc import Sequence

from .profile import Profile

__all__ = ["DEFAULT_ACCEPT", "FALLBACK_ACCEPT_LANGUAGE", "accept_language", "request_headers"]

#: Scrapy's default Accept header (kept: what sites have seen from us so far).
DEFAULT_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
#: Accept-Language of a crawl that names no language (Scrapy's default).
FALLBACK_ACCEPT_LANGUAGE = "en"
#: The lowest q-value given to a wanted language (RFC 9110: 0 would mean "not this one").
_MIN_Q = 0.1


def accept_language(codes: Sequence[str]) -> str:
    """An Accept-Language value for language codes, most wanted first.

    ``["cs", "sk", "de"]`` -> ``"cs, sk;q=0.9, de;q=0.8"``. Private-use subtags
    (our `en-x-simple`) are cut to the language they belong to; repeats go; the
    q-values fall by 0.1 down to 0.1. ``[]`` -> ``""``.
    """
    tags: list[str] = []
    for code in codes:
        tag = code.split("-x-", 1)[0].strip()
        if tag and tag not in tags:
            tags.append(tag)
    parts = []
    for rank, tag in enumerate(tags):
        q = max(_MIN_Q, round(1.0 - rank / 10, 1))
        parts.append(tag if rank == 0 else f"{tag};q={q:g}")
    return ", ".join(parts)


def request_headers(profile: Profile) -> dict[str, str]:
    """DEFAULT_REQUEST_HEADERS for a crawl of `profile` (no User-Agent: Scrapy's own
    setting carries it)."""
    headers = {"Accept": DEFAULT_ACCEPT}
    chosen = profile.politeness.accept_language
    if chosen is None:
        chosen = accept_language(profile.extraction.target_languages())
        chosen = chosen or FALLBACK_ACCEPT_LANGUAGE
    if chosen:
        headers["Accept-Language"] = chosen
    if profile.output.warc.http_header_from:
        headers["From"] = profile.output.warc.http_header_from
    return headers
