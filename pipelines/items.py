"""The items that flow from the spider through the item pipelines.

    Response --spider (awaits PageProcessor)--> CorpusDocument | DroppedPage | RequestDone

Every callback and errback of the `corpus` spider ends with exactly one of these,
carrying the scheduled request's ``row``: when the item pipelines are through with
it, the campaign finishes that request (writes what it produced, marks it done).

Plain frozen dataclasses of plain values (no bytes, no futures, no Scrapy
objects): Scrapy handles dataclass items through itemadapter, and the worker
processes and the tests can use them freely. Times are ISO 8601 strings.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from corpus_crawler.model import Document
from corpus_crawler.vertical import DocMeta

if TYPE_CHECKING:
    from corpus_crawler.dedup import DocumentFingerprint

__all__ = ["CorpusDocument", "DroppedPage", "FetchedPage", "RequestDone", "document_id"]


def plain(value: Any) -> Any:
    """`value` as JSON-ready data: dataclasses as dicts, enums as their values.

    The serializer of `CorpusDocument.document` for Scrapy's feed exports
    (`scrapy crawl corpus -o items.jsonl`): itemadapter reads it from the field's
    metadata, so a `Document` is exported as plain data, not as enum objects.
    """
    if isinstance(value, enum.Enum):
        return value.value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, datetime):
        return value.isoformat()
    return value


def document_id(url: str) -> str:
    """A stable id for a document: the SHA-1 of its final URL (hex)."""
    return hashlib.sha1(url.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True, slots=True)
class FetchedPage:
    """What the crawl knows about one response, without its body."""

    #: The URL of the response (after redirects).
    url: str
    #: The URL first requested (before redirects); equals `url` without redirects.
    request_url: str
    status: int
    #: When the response arrived (ISO 8601, UTC).
    fetched_at: str
    #: Link hops from a seed.
    depth: int
    #: Media type from Content-Type, lower case, without parameters ("" if none).
    content_type: str
    #: The charset parameter of Content-Type, if any.
    http_charset: str | None
    last_modified: str | None
    ip_address: str
    is_html: bool
    #: The body's length in bytes (the body itself goes to the worker, not in items).
    size: int = 0
    #: The scheduled request (frontier row) this response answers; None outside a campaign.
    row: int | None = None
    #: The WARC record id minted for the response record, "" when no WARC is written.
    response_id: str = ""


@dataclass(frozen=True, slots=True)
class CorpusDocument:
    """A kept page: its `Document` (with at least one good paragraph) and crawl facts."""

    page: FetchedPage
    document: Document = field(metadata={"serializer": plain})
    doc_id: str
    #: Words in good paragraphs.
    words: int
    #: UTF-8 bytes of the clean text (good paragraphs, one per line).
    clean_bytes: int
    #: The tokenised vertical text, formatted in a worker: with the page when dedup is
    #: off, else after its verdict (`pipelines.extract.VerticalFormatPipeline`). None:
    #: not yet, or the writer formats it.
    vertical_text: str | None = None
    #: What the dedup stages look up, computed in the worker (`corpus_crawler.dedup`);
    #: the dedup pipeline consumes it (None after it, or with dedup off).
    fingerprint: DocumentFingerprint | None = field(
        default=None, metadata={"serializer": lambda value: None}
    )
    #: Dedup marks (``mark`` mode) for the corpus files, as `DocMeta` has them.
    lang_diff: float | None = None
    paragraph_lang_diffs: tuple[float | None, ...] = ()
    paragraph_dups: tuple[float | None, ...] = ()

    @property
    def row(self) -> int | None:
        return self.page.row

    @property
    def url(self) -> str:
        return self.page.url

    @property
    def response_id(self) -> str:
        return self.page.response_id


@dataclass(frozen=True, slots=True)
class DroppedPage:
    """A page that yields no corpus text; `pipelines.extract.DropPipeline` drops it
    with the typed reason (`corpus_crawler.model.DropReason` value)."""

    url: str
    reason: str
    detail: str = ""
    row: int | None = None
    #: The body's length in bytes (a dropped page still cost its host's yield).
    size: int = 0


@dataclass(frozen=True, slots=True)
class RequestDone:
    """A request that produced no page item (a sitemap, a redirect refused, an error)."""

    url: str
    row: int | None = None
    outcome: str = "done"


def doc_meta(item: FetchedPage | CorpusDocument, doc_id: str) -> DocMeta:
    """The crawl facts a corpus file records about a page (one definition for all writers)."""
    page = item.page if isinstance(item, CorpusDocument) else item
    marks = item if isinstance(item, CorpusDocument) else None
    return DocMeta(
        doc_id=doc_id,
        crawl_date=datetime.fromisoformat(page.fetched_at),
        url=page.request_url,
        final_url=page.url,
        last_modified=page.last_modified,
        ip=page.ip_address,
        lang_diff=marks.lang_diff if marks else None,
        paragraph_lang_diffs=marks.paragraph_lang_diffs if marks else (),
        paragraph_dups=marks.paragraph_dups if marks else (),
    )
