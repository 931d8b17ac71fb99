"""Typed drop reasons: one `DropItem` subclass per `corpus_crawler.model.DropReason`.

Scrapy counts dropped items per exception class (``item_dropped_reasons_count/<Class>``);
`ExtractPipeline` also counts them under ``corpus/dropped/<reason>``. Drops are
ordinary events of a crawl, so they are logged at DEBUG, not WARNING.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar

from scrapy.exceptions import DropItem

from corpus_crawler.model import DropReason

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response

__all__ = [
    "DROPS",
    "CorpusDrop",
    "DecodeError",
    "Disconnected",
    "Duplicate",
    "Empty",
    "ExtractorError",
    "LowYield",
    "NearDuplicate",
    "NoGoodParagraph",
    "NotHtml",
    "RobotsUnreachable",
    "Timeout",
    "TooLarge",
    "TooShort",
    "WrongLanguage",
    "drop_for",
    "log_download_drop",
]


class CorpusDrop(DropItem):
    """A page that yields no corpus text, for the reason its class names."""

    reason: ClassVar[DropReason]

    def __init__(self, message: str = "") -> None:
        super().__init__(message or str(self.reason), log_level="DEBUG")


class NotHtml(CorpusDrop):
    reason = DropReason.NOT_HTML


class DecodeError(CorpusDrop):
    reason = DropReason.DECODE_ERROR


class Empty(CorpusDrop):
    reason = DropReason.EMPTY


class TooLarge(CorpusDrop):
    reason = DropReason.TOO_LARGE


class WrongLanguage(CorpusDrop):
    reason = DropReason.WRONG_LANGUAGE


class NoGoodParagraph(CorpusDrop):
    reason = DropReason.NO_GOOD_PARAGRAPH


class TooShort(CorpusDrop):
    reason = DropReason.TOO_SHORT


class Timeout(CorpusDrop):
    reason = DropReason.TIMEOUT


class ExtractorError(CorpusDrop):
    reason = DropReason.EXTRACTOR_ERROR


class Duplicate(CorpusDrop):
    reason = DropReason.DUPLICATE


class NearDuplicate(CorpusDrop):
    reason = DropReason.NEAR_DUPLICATE


class LowYield(CorpusDrop):
    """A page of a host pruned for low yield (requests to it are refused before
    fetching: `pipelines.yieldguard.LowYieldRequest`)."""

    reason = DropReason.LOW_YIELD


class Disconnected(CorpusDrop):
    """A body cut short by the server's close (`pipelines.download`)."""

    reason = DropReason.DISCONNECTED


class RobotsUnreachable(CorpusDrop):
    """A page never fetched: its host's robots.txt stayed unreachable until the page's
    deferred attempts were used up (`pipelines.robots`, `corpus_crawler.retries`)."""

    reason = DropReason.ROBOTS_UNREACHABLE


DROPS: Mapping[DropReason, type[CorpusDrop]] = {
    cls.reason: cls
    for cls in (
        NotHtml,
        DecodeError,
        Empty,
        TooLarge,
        WrongLanguage,
        NoGoodParagraph,
        TooShort,
        Timeout,
        ExtractorError,
        Duplicate,
        NearDuplicate,
        LowYield,
        Disconnected,
        RobotsUnreachable,
    )
}


def drop_for(reason: DropReason, detail: str = "", url: str = "") -> CorpusDrop:
    """The typed exception for `reason`; its message names the page and the detail."""
    message = str(reason)
    if detail:
        message += f" ({detail})"
    if url:
        message += f": {url}"
    return DROPS[reason](message)


def log_download_drop(
    crawler: Crawler | None, request: Request, response: Response, reason: DropReason
) -> None:
    """Completes the crawl log line of a response a downloader middleware drops.

    The crawl log's middleware (next to the downloader) holds a response's line
    until an item says how the page ended; a middleware that drops the response
    on its way to the spider (size cap, timeout, broken content coding) ends it
    with no item, so the line said ``no-item`` at the close and waited in memory
    until then.
    """
    if crawler is None:
        return
    from pipelines.crawllog import CrawlLogExtension

    log = crawler.get_extension(CrawlLogExtension)
    if log is not None:
        log.item_dropped(None, DROPS[reason](), response.replace(request=request))
