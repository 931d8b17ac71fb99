"""Crawl extensions: a progress line every few seconds, and a JSON summary at the end.

* `ProgressExtension` (`CORPUS_PROGRESS_ENABLED`, `CORPUS_PROGRESS_INTERVAL`,
  `CORPUS_PROGRESS_STREAM` = "log" or "stderr"): pages fetched, documents kept,
  good paragraphs, words, raw MB -> clean MB and the yield. On "stderr" that is
  a terminal, a progress bar (`corpus_crawler.progress`) instead of the lines.
* `SummaryExtension` (`CORPUS_SUMMARY_ENABLED`): when the spider closes, waits
  for the writer thread to finish its files, then writes
  ``<prefix>-<timestamp>-summary.json`` beside them (counts per drop reason,
  files written, the crawl's stats). Its path is in the stats as
  ``corpus/summary_path``.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.statscollectors import StatsCollector
from scrapy.utils.defer import maybe_deferred_to_future

from corpus_crawler.model import DropReason
from corpus_crawler.retries import DEFERRED, is_transient
from pipelines.campaign import CampaignExtension, CampaignResult
from pipelines.writer import OutputFiles, OutputSettings

__all__ = ["ProgressExtension", "SummaryExtension", "progress_line"]

logger = logging.getLogger("corpus.progress")

MB = 1024 * 1024


def progress_line(stats: dict[str, Any], elapsed: float) -> str:
    """One line of crawl progress from a stats mapping."""
    pages = int(stats.get("downloader/response_count", 0))
    kept = int(stats.get("corpus/docs_kept", 0))
    good = int(stats.get("corpus/paragraphs_good", 0))
    words = int(stats.get("corpus/words", 0))
    raw = int(stats.get("corpus/bytes_raw", 0))
    clean = int(stats.get("corpus/bytes_clean", 0))
    rate = pages / elapsed if elapsed > 0 else 0.0
    yield_percent = 100.0 * clean / raw if raw else 0.0
    return (
        f"{int(elapsed) // 60:02d}:{int(elapsed) % 60:02d}"
        f" | pages {pages:,} ({rate:.1f}/s) | kept {kept:,} | good paragraphs {good:,}"
        f" | words {words:,} | {raw / MB:.1f} MB -> {clean / MB:.2f} MB"
        f" (yield {yield_percent:.1f}%)"
    )


class ProgressExtension:
    def __init__(self, stats: StatsCollector, interval: float, stream: str) -> None:
        self.stats = stats
        self.interval = interval
        self.stream = stream
        self.started = time.monotonic()
        self._task: Any = None
        self._bar: Any = None
        self.max_pages = 0

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ProgressExtension:
        settings = crawler.settings
        interval = settings.getfloat("CORPUS_PROGRESS_INTERVAL", 5.0)
        if not settings.getbool("CORPUS_PROGRESS_ENABLED", True) or interval <= 0:
            raise NotConfigured(
                "progress lines are off: set output.progress_interval to a number of"
                " seconds in the profile (CORPUS_PROGRESS_ENABLED / CORPUS_PROGRESS_INTERVAL)"
            )
        stream = settings.get("CORPUS_PROGRESS_STREAM", "log")
        if stream not in ("log", "stderr"):
            raise ValueError(f"CORPUS_PROGRESS_STREAM must be 'log' or 'stderr', got {stream!r}")
        extension = cls(crawler.stats, interval, stream)
        extension.max_pages = max(0, settings.getint("CORPUS_SCOPE_MAX_PAGES", -1))
        crawler.signals.connect(extension.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(extension.spider_closed, signal=signals.spider_closed)
        return extension

    def spider_opened(self) -> None:
        from twisted.internet.task import LoopingCall

        self.started = time.monotonic()
        if self.stream == "stderr" and sys.stderr.isatty():
            from corpus_crawler.progress import Progress

            self._bar = Progress(
                total=self.max_pages or None, description="crawl", unit="pages", tty=True
            )
            # a bar is cheap to redraw: refresh it more often than the log line
            interval = min(self.interval, 1.0)
        else:
            interval = self.interval
        self._task = LoopingCall(self.report)
        self._task.start(interval, now=False)

    def report(self) -> None:
        if self._bar is not None:
            stats = self.stats.get_stats()
            raw = int(stats.get("corpus/bytes_raw", 0))
            clean = int(stats.get("corpus/bytes_clean", 0))
            self._bar.update_to(
                int(stats.get("downloader/response_count", 0)),
                kept=int(stats.get("corpus/docs_kept", 0)),
                words=int(stats.get("corpus/words", 0)),
                yield_percent=round(100.0 * clean / raw, 1) if raw else 0.0,
            )
            return
        line = progress_line(self.stats.get_stats(), time.monotonic() - self.started)
        if self.stream == "stderr":
            print(line, file=sys.stderr, flush=True)
        else:
            logger.info(line)

    def spider_closed(self) -> None:
        if self._task is not None and self._task.running:
            self._task.stop()
        if self._bar is not None:
            self.report()
            self._bar.close()


def _relative(paths: tuple[Path, ...], base: Path) -> list[str]:
    out = []
    for path in paths:
        try:
            out.append(str(path.relative_to(base)))
        except ValueError:
            out.append(str(path))
    return out


class SummaryExtension:
    def __init__(self, crawler: Crawler, settings: OutputSettings) -> None:
        self.crawler = crawler
        self.settings = settings
        self.started = datetime.now(timezone.utc)
        self.started_clock = time.monotonic()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> SummaryExtension:
        if not crawler.settings.getbool("CORPUS_SUMMARY_ENABLED", True):
            raise NotConfigured(
                "the JSON summary is off: set CORPUS_SUMMARY_ENABLED=True to write it"
            )
        extension = cls(crawler, OutputSettings.from_settings(crawler.settings))
        crawler.signals.connect(extension.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(extension.spider_closed, signal=signals.spider_closed)
        return extension

    def spider_opened(self) -> None:
        self.started = datetime.now(timezone.utc)
        self.started_clock = time.monotonic()

    async def spider_closed(self, reason: str) -> None:
        campaign = self.crawler.get_extension(CampaignExtension)
        result = CampaignResult(OutputFiles())
        if campaign is not None:
            result = await maybe_deferred_to_future(campaign.finished(reason))
        files = result.files
        stats = self.crawler.stats
        summary = self.summary(stats.get_stats(), files, reason)
        summary["campaign"] = campaign_summary(result)
        if result.recrawl_pass is not None:
            # a recrawl pass killed and run again is one pass: its counts over all its runs
            recrawl = summary["recrawl"]
            this_run = {k: recrawl[k] for k in ("new", "changed", "unchanged", "gone", "revisits")}
            summary["recrawl"] = {**recrawl, **result.recrawl_pass, "this_run": this_run}
        directory = self.settings.directory
        directory.mkdir(parents=True, exist_ok=True)
        prefix = self.crawler.settings.get("CORPUS_WARC_PREFIX") or "corpus"
        path = directory / f"{prefix}-{self.started.strftime('%Y%m%d%H%M%S')}-summary.json"
        temporary = path.with_name(path.name + ".open")
        temporary.write_text(
            json.dumps(summary, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8"
        )
        os.replace(temporary, path)
        stats.set_value("corpus/summary_path", str(path))
        logger.info("summary written to %s", path)

    def summary(self, stats: dict[str, Any], files: OutputFiles, reason: str) -> dict[str, Any]:
        def count(key: str) -> int:
            return int(stats.get(key, 0))

        elapsed = time.monotonic() - self.started_clock
        # every response: redirects, errors and robots.txt included
        responses = count("downloader/response_count")
        raw, clean = count("corpus/bytes_raw"), count("corpus/bytes_clean")
        base = self.settings.directory
        settings = self.crawler.settings
        return {
            "profile": settings.get("CORPUS_PROFILE_NAME") or "",
            "profile_path": settings.get("CORPUS_PROFILE_PATH") or "",
            "output_dir": str(base),
            "started": self.started.isoformat(timespec="seconds"),
            "finished": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "elapsed_seconds": round(elapsed, 3),
            "finish_reason": reason,
            "pages": {
                "responses": responses,
                # this run's requests that got no response at all (corpus_crawler.retries)
                "network_failures": network_failures(files.counts),
                # this run's pages not fetched because their robots.txt was unreachable
                # (deferred, or dropped once out of attempts: pipelines.robots)
                "robots_unreachable": robots_unreachable(files.counts),
                # ... those of them whose robots.txt got no response at all
                "robots_no_response": count("corpus/robots/unreachable/no_response"),
                "items": count("corpus/pages"),
                "html": count("corpus/pages_html"),
                "kept": count("corpus/docs_kept"),
                "pages_per_second": round(responses / elapsed, 2) if elapsed > 0 else 0.0,
            },
            "dropped": {str(r): count(f"corpus/dropped/{r}") for r in DropReason},
            "text": {
                "paragraphs_good": count("corpus/paragraphs_good"),
                "paragraphs_total": count("corpus/paragraphs_total"),
                "words": count("corpus/words"),
                "bytes_raw": raw,
                "bytes_clean": clean,
                "yield_percent": round(100.0 * clean / raw, 3) if raw else 0.0,
            },
            "files": {
                "warc": _relative(files.warc, base),
                "warc_text": _relative(files.warc_text, base),
                "warc_index": _relative(files.warc_index, base),
                "prevertical": _relative(files.prevertical, base),
                "vertical": _relative(files.vertical, base),
                "jsonl": _relative(files.jsonl, base),
                "parquet": _relative(files.parquet, base),
            },
            "writer": {"counts": files.counts, "errors": list(files.errors)},
            # this run's pages against their last capture (a recrawl pass: what changed)
            "recrawl": {
                "pass": bool(settings.getbool("CORPUS_RECRAWL_ENABLED")),
                "due": count("corpus/recrawl/due"),
                **{
                    c: int(files.counts.get(f"recrawl/{c}", 0))
                    for c in ("new", "changed", "unchanged", "gone")
                },
                "revisits": {
                    key.removeprefix("warc/revisits/"): value
                    for key, value in sorted(files.counts.items())
                    if key.startswith("warc/revisits/")
                },
            },
            "stats": {
                key: value
                for key, value in sorted(stats.items())
                if isinstance(value, (int, float, str))
            },
        }


def network_failures(counts: dict[str, int]) -> int:
    """Requests of a run (writer counts) that failed with a network error, deferred or not."""
    return int(counts.get(f"requests/{DEFERRED}", 0)) + sum(
        int(value) for key, value in counts.items() if is_transient(key.removeprefix("requests/"))
    )


def robots_unreachable(counts: dict[str, int]) -> int:
    """Pages of a run (writer counts) refused for an unreachable robots.txt, deferred or
    dropped."""
    reason = DropReason.ROBOTS_UNREACHABLE
    return int(counts.get(f"requests/{DEFERRED}:{reason}", 0)) + int(
        counts.get(f"requests/dropped:{reason}", 0)
    )


def campaign_summary(result: CampaignResult) -> dict[str, Any]:
    """The campaign part of the summary: totals over all runs, as committed with the files."""
    totals = result.totals

    def total(key: str) -> int:
        return int(totals.get(key, 0))

    dropped = {
        key.removeprefix("requests/dropped:"): value
        for key, value in sorted(totals.items())
        if key.startswith("requests/dropped:")
    }
    return {
        "run": result.run,
        "resumed": result.resumed,
        "requeued_at_start": result.requeued,
        "requests_left": result.remaining,
        # deferred after a network failure (part of requests_left), and when the first
        # is due: the next run of the campaign from then on tries them again
        "retries_pending": result.retries_pending,
        "next_retry": (
            None
            if result.next_retry is None
            else datetime.fromtimestamp(result.next_retry, timezone.utc).isoformat(
                timespec="seconds"
            )
        ),
        "files_cut_back_at_start": list(result.reconciled),
        "write_failure": result.files.failure,
        "totals": {
            "warc_exchanges": total("warc/exchanges"),
            "documents_kept": total("requests/kept"),
            "warc_conversions": total("warc/conversions"),
            "prevertical_documents": total("prevertical/documents"),
            "vertical_documents": total("vertical/documents"),
            "dropped": dropped,
            # deferred attempts (each a request that got no response, tried again later)
            "deferred": total(f"requests/{DEFERRED}"),
            # deferred attempts of pages whose host's robots.txt was unreachable
            "deferred_robots_unreachable": total(
                f"requests/{DEFERRED}:{DropReason.ROBOTS_UNREACHABLE}"
            ),
        },
    }
