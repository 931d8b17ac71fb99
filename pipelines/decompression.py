"""Content codings the crawl cannot use, counted instead of passed on.

Scrapy's HttpCompressionMiddleware stops decoding a body that grows past
DOWNLOAD_MAXSIZE and ignores the response with IgnoreRequest, which reaches
only the request's errback: no stat says what happened. This subclass counts
it as ``corpus/dropped/too-large``, like a response aborted for its size.

Two more ways a server's content coding breaks a page, both archived as sent
(`pipelines.capture.WarcCaptureMiddleware` sees the response first) and then
dropped as ``corpus/dropped/decode-error``:

* a broken stream (a gzip body that is not gzip, a truncated zstd frame):
  Scrapy lets the decoder's own exception (``EOFError``, ``zlib.error``,
  ``ZstdError``...) escape as a download error, logged with a traceback and
  counted nowhere (``corpus/undecodable/broken``);
* a coding Scrapy cannot undo (``compress``, ``bzip2``, ``zstd`` without its
  package): Scrapy warns and passes the still-encoded bytes on, and the
  extractor turned bzip2 bytes into "text" that reached the corpus
  (``corpus/undecodable/<coding>``).
"""

from __future__ import annotations

import logging
from typing import Any

from scrapy import Request, Spider
from scrapy.crawler import Crawler
from scrapy.downloadermiddlewares.httpcompression import HttpCompressionMiddleware
from scrapy.exceptions import IgnoreRequest
from scrapy.http import Response

from corpus_crawler.model import DropReason
from pipelines.drops import log_download_drop

__all__ = ["BoundedHttpCompressionMiddleware"]

logger = logging.getLogger(__name__)

#: Content-Encoding values that mean "not encoded" (RFC 9110 8.4.1 keeps "identity"
#: reserved for that; some servers still send it).
_NO_CODING = frozenset({b"", b"identity"})
#: Codings named in the stat of an undecodable response (the IANA HTTP Content Coding
#: Registry); any other value a server sends is counted as "other", so that a host
#: inventing a coding a page cannot grow the stats without bound.
_NAMED_CODINGS = frozenset(
    {"aes128gcm", "br", "compress", "dcb", "dcz", "deflate", "exi", "gzip", "pack200-gzip",
     "x-compress", "x-gzip", "zstd", "bzip2", "x-bzip2", "lzma", "xz"}
)  # fmt: skip


class BoundedHttpCompressionMiddleware(HttpCompressionMiddleware):
    def __init__(self, stats: Any = None, *, crawler: Crawler | None = None) -> None:
        super().__init__(stats, crawler=crawler)
        self._crawler = crawler

    def process_response(
        self, request: Request, response: Response, spider: Spider | None = None
    ) -> Request | Response:
        try:
            decoded = super().process_response(request, response)
        except IgnoreRequest:
            self._count(DropReason.TOO_LARGE, "corpus/too-large/decompression")
            log_download_drop(self._crawler, request, response, DropReason.TOO_LARGE)
            raise
        except Exception as exc:  # the decoder's own error: the stream is not what it says
            self._count(DropReason.DECODE_ERROR, "corpus/undecodable/broken")
            logger.info("cannot decode %s (%s: %s)", response.url, type(exc).__name__, exc)
            log_download_drop(self._crawler, request, response, DropReason.DECODE_ERROR)
            raise IgnoreRequest(f"{DropReason.DECODE_ERROR} (broken content coding)") from exc
        if not isinstance(decoded, Response):
            return decoded
        left = [
            coding.strip().lower()
            for value in decoded.headers.getlist("Content-Encoding")
            for coding in value.split(b",")
        ]
        left = [coding for coding in left if coding not in _NO_CODING]
        if not left:
            return decoded
        name = left[-1].decode("latin-1")
        name = name if name in _NAMED_CODINGS else "other"
        self._count(DropReason.DECODE_ERROR, f"corpus/undecodable/{name}")
        log_download_drop(self._crawler, request, response, DropReason.DECODE_ERROR)
        raise IgnoreRequest(f"{DropReason.DECODE_ERROR} (content coding {name!r} not supported)")

    def _count(self, reason: DropReason, detail: str) -> None:
        if self.stats is not None:
            self.stats.inc_value(f"corpus/dropped/{reason}")
            self.stats.inc_value(detail)
