"""Cookies without a download of the public suffix list.

Scrapy's CookiesMiddleware asks `tldextract` whether a cookie's domain is a
public suffix, and tldextract's default extractor downloads the list from the
internet on first use: a request to a host the crawl never chose (and a long
traceback when the network is closed). This subclass asks
`corpus_crawler.domains`, which reads the snapshot bundled with tldextract and
never fetches.

It also keeps what a browser keeps (RFC 6265 6.1 asks for at least 4096 bytes a
cookie and 50 cookies a domain; browsers stop near there): `http.cookiejar`
has no limit, so a server that answered with 3,000 ``Set-Cookie`` lines made
every later request to its host (any port) carry a 323 KB ``Cookie`` header,
archived in each request record, and a jar that only grows. A cookie over
`MAX_COOKIE_BYTES` or past `MAX_COOKIES_PER_HOST` for its domain is not stored,
counted as ``corpus/cookies/refused/too-large`` or ``/too-many``.
"""

from __future__ import annotations

from collections.abc import Iterable
from http.cookiejar import Cookie
from typing import Any, cast

from scrapy import Request
from scrapy.downloadermiddlewares.cookies import CookiesMiddleware
from scrapy.http.cookies import CookieJar
from scrapy.utils.httpobj import urlparse_cached

from corpus_crawler.domains import is_public_suffix

__all__ = ["MAX_COOKIES_PER_HOST", "MAX_COOKIE_BYTES", "OfflineCookiesMiddleware"]

#: Name and value of one cookie (RFC 6265 6.1's minimum a client must keep).
MAX_COOKIE_BYTES = 4096
#: Cookies kept for one domain (RFC 6265 6.1: 50).
MAX_COOKIES_PER_HOST = 50


class OfflineCookiesMiddleware(CookiesMiddleware):
    def _process_cookies(
        self, cookies: Iterable[Cookie], *, jar: CookieJar, request: Request
    ) -> None:
        host = (urlparse_cached(request).hostname or "").lower()
        if not host:
            return
        for cookie in cookies:
            domain = cookie.domain.removeprefix(".")
            if domain and is_public_suffix(domain):
                # a cookie for a whole suffix (`co.uk`) would go to every site under it:
                # keep it only as a host cookie of the host that set it
                if domain != host:
                    continue
                cookie.domain = host
            refusal = self._refusal(cookie, jar)
            if refusal:
                self.crawler.stats.inc_value(f"corpus/cookies/refused/{refusal}")
                continue
            jar.set_cookie_if_ok(cookie, request)

    @staticmethod
    def _refusal(cookie: Cookie, jar: CookieJar) -> str:
        if len(cookie.name) + len(cookie.value or "") > MAX_COOKIE_BYTES:
            return "too-large"
        # The stdlib jar keeps domain -> path -> name -> Cookie; its public way to count
        # a domain's cookies walks every cookie of the crawl's one jar.
        store: dict[str, dict[str, dict[str, Cookie]]] = cast("Any", jar.jar)._cookies
        paths = store.get(cookie.domain, {})
        if sum(len(names) for names in paths.values()) >= MAX_COOKIES_PER_HOST:
            replaces = cookie.name in paths.get(cookie.path, {})
            return "" if replaces else "too-many"
        return ""
