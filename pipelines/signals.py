"""Signals of the corpus crawl (Scrapy signals are plain sentinel objects)."""

from __future__ import annotations

__all__ = ["links_extracted"]

#: Sent by `ExtractPipeline` when a worker has found the links of a page.
#: Arguments: ``page`` (`FetchedPage`), ``links`` (tuple of absolute URLs).
#: The `corpus` spider decides which of them to follow.
links_extracted = object()
