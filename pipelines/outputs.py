"""Item pipelines that hand kept documents to the writer thread.

* `WarcDocumentPipeline` (`CORPUS_WARC_ENABLED`, `CORPUS_WARC_CONVERSION`): a
  ``conversion`` record with the clean text, referring to the page's response
  record (plus a ``metadata`` record with `CORPUS_WARC_METADATA`).
* `VerticalPipeline` (`CORPUS_PREVERTICAL_ENABLED`, `CORPUS_VERTICAL_ENABLED`):
  the document in the prevertical and/or vertical corpus files.
* `DocumentsPipeline` (`CORPUS_DOCUMENTS_JSONL`, `CORPUS_DOCUMENTS_PARQUET`): the
  document as a JSON Lines and/or Parquet record (`corpus_crawler.documents`).

Both only queue work; `pipelines.writer.OutputWriter` writes it, on its thread.
"""

from __future__ import annotations

from typing import Any

from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured

from pipelines.items import CorpusDocument
from pipelines.writer import OutputWriter

__all__ = ["DocumentsPipeline", "VerticalPipeline", "WarcDocumentPipeline"]


class WarcDocumentPipeline:
    def __init__(self, writer: OutputWriter) -> None:
        self.writer = writer

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> WarcDocumentPipeline:
        settings = crawler.settings
        if not settings.getbool("CORPUS_WARC_ENABLED", True):
            raise NotConfigured(
                "WARC output is off: set output.warc.enabled: true in the profile"
                " (or CORPUS_WARC_ENABLED=True)"
            )
        if not settings.getbool("CORPUS_WARC_CONVERSION", True):
            raise NotConfigured(
                "WARC conversion records are off: set output.warc.conversion_records: true"
                " (or CORPUS_WARC_CONVERSION=True)"
            )
        return cls(OutputWriter.for_crawler(crawler))

    def process_item(self, item: Any) -> Any:
        if isinstance(item, CorpusDocument):
            self.writer.submit_document(item, warc=True, vertical=False)
        return item


class VerticalPipeline:
    def __init__(self, writer: OutputWriter) -> None:
        self.writer = writer

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> VerticalPipeline:
        settings = crawler.settings
        if not (
            settings.getbool("CORPUS_PREVERTICAL_ENABLED", True)
            or settings.getbool("CORPUS_VERTICAL_ENABLED")
        ):
            raise NotConfigured(
                "corpus files are off: set output.prevertical.enabled or"
                " output.vertical.enabled in the profile (CORPUS_PREVERTICAL_ENABLED,"
                " CORPUS_VERTICAL_ENABLED)"
            )
        return cls(OutputWriter.for_crawler(crawler))

    def process_item(self, item: Any) -> Any:
        if isinstance(item, CorpusDocument):
            self.writer.submit_document(item, warc=False, vertical=True)
        return item


class DocumentsPipeline:
    def __init__(self, writer: OutputWriter) -> None:
        self.writer = writer

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> DocumentsPipeline:
        settings = crawler.settings
        if not (
            settings.getbool("CORPUS_DOCUMENTS_JSONL")
            or settings.getbool("CORPUS_DOCUMENTS_PARQUET")
        ):
            # off by default: no message, which Scrapy would print as a WARNING on
            # every crawl (output.documents.jsonl / .parquet turn it on)
            raise NotConfigured()
        return cls(OutputWriter.for_crawler(crawler))

    def process_item(self, item: Any) -> Any:
        if isinstance(item, CorpusDocument):
            self.writer.submit_document(item, warc=False, vertical=False, documents=True)
        return item
