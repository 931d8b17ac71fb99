"""Cookies without a download of the public suffix list.

Scrapy's CookiesMiddleware asks `tldextract` whether a cookie's domain is a
public suffix, and tldextract's default extractor downloads the list from the
internet on first use: a request to a host the crawl never chose (and a long
traceback when the network is closed). This subclass asks
`corpus_crawler.domains`, which reads the snapshot bundled with tldextract and
never fetches.
"""

from __future__ import annotations

from collections.abc import Iterable
from http.cookiejar import Cookie

from scrapy import Request
from scrapy.downloadermiddlewares.cookies import CookiesMiddleware
from scrapy.http.cookies import CookieJar
from scrapy.utils.httpobj import urlparse_cached

from corpus_crawler.domains import is_public_suffix

__all__ = ["OfflineCookiesMiddleware"]


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
            jar.set_cookie_if_ok(cookie, request)
