"""corpus_crawler: web pages in, clean text corpora out.

The library never imports Scrapy; `spiders/` and `pipelines/` adapt it to a crawl.
"""

from __future__ import annotations

__version__ = "0.1.0"

from .config import ConfigError, ExtractConfig, JustextParams, Preset
from .extract import extract
from .model import Document, DropReason, Paragraph, ParagraphClass

__all__ = [
    "ConfigError",
    "Document",
    "DropReason",
    "ExtractConfig",
    "JustextParams",
    "Paragraph",
    "ParagraphClass",
    "Preset",
    "__version__",
    "extract",
]
