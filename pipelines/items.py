"""The items that flow from the spider through the item pipelines.

    Response --spider--> FetchedPage --ExtractPipeline--> CorpusDocument --writers

Plain frozen dataclasses (Scrapy handles dataclass items through itemadapter);
no Scrapy import, so the worker processes and the tests can use them freely.
"""

from __future__ import annotations

import hashlib
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from corpus_crawler.model import Document
from corpus_crawler.vertical import DocMeta

if TYPE_CHECKING:
    from corpus_crawler.warc import ExchangeRecords

__all__ = ["CorpusDocument", "FetchedPage", "document_id"]


def document_id(url: str) -> str:
    """A stable id for a document: the SHA-1 of its final URL (hex)."""
    return hashlib.sha1(url.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True, slots=True)
class FetchedPage:
    """One successful response the spider passed on, as received (body decompressed)."""

    #: The URL of the response (after redirects).
    url: str
    #: The URL first requested (before redirects); equals `url` without redirects.
    request_url: str
    status: int
    fetched_at: datetime
    #: Link hops from a seed.
    depth: int
    #: Media type from Content-Type, lower case, without parameters ("" if none).
    content_type: str
    #: The charset parameter of Content-Type, if any.
    http_charset: str | None
    last_modified: str | None
    ip_address: str
    is_html: bool
    body: bytes = field(repr=False)
    #: The WARC records of this response, once the writer thread has written them.
    exchange: Future[ExchangeRecords | None] | None = field(default=None, repr=False, compare=False)

    @property
    def size(self) -> int:
        return len(self.body)


@dataclass(frozen=True, slots=True)
class CorpusDocument:
    """A kept page: its `Document` (with at least one good paragraph) and crawl facts."""

    page: FetchedPage
    document: Document
    doc_id: str
    #: Words in good paragraphs.
    words: int
    #: UTF-8 bytes of the clean text (good paragraphs, one per line).
    clean_bytes: int
    #: The tokenised vertical text, formatted in the worker (None: format on writing).
    vertical_text: str | None = None


def doc_meta(page: FetchedPage, doc_id: str) -> DocMeta:
    """The crawl facts a corpus file records about a page (one definition for all writers)."""
    return DocMeta(
        doc_id=doc_id,
        crawl_date=page.fetched_at,
        url=page.request_url,
        final_url=page.url,
        last_modified=page.last_modified,
        ip=page.ip_address,
    )
