"""Decompression bombs counted as `too-large`.

Scrapy's HttpCompressionMiddleware stops decoding a body that grows past
DOWNLOAD_MAXSIZE and ignores the response with IgnoreRequest, which reaches
only the request's errback: no stat says what happened. This subclass counts
it as ``corpus/dropped/too-large``, like a response aborted for its size.
"""

from __future__ import annotations

import logging

from scrapy import Request, Spider
from scrapy.downloadermiddlewares.httpcompression import HttpCompressionMiddleware
from scrapy.exceptions import IgnoreRequest
from scrapy.http import Response

from corpus_crawler.model import DropReason

__all__ = ["BoundedHttpCompressionMiddleware"]

logger = logging.getLogger(__name__)


class BoundedHttpCompressionMiddleware(HttpCompressionMiddleware):
    def process_response(
        self, request: Request, response: Response, spider: Spider | None = None
    ) -> Request | Response:
        try:
            return super().process_response(request, response)
        except IgnoreRequest:
            if self.stats is not None:
                self.stats.inc_value(f"corpus/dropped/{DropReason.TOO_LARGE}")
                self.stats.inc_value("corpus/too-large/decompression")
            raise
