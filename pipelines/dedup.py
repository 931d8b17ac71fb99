"""DedupPipeline: kept documents through `corpus_crawler.dedup.Deduplicator`.

Between `ExtractPipeline` (100) and the writers (800). A document whose text
was kept before is dropped as `duplicate`, one mostly the same as a kept one
as `near-duplicate` (its page stays archived in the WARC; only the corpus
files skip it); paragraphs seen before or in another language are removed
from the document, or (``mark`` mode) kept and marked: in their `scores` and
in the corpus files, SpiderLing/onion style (``dup``: share of n-grams seen,
on every paragraph; ``langdiff``: the identifier's confidence in another
language, on the paragraphs long enough to judge; ``lang_diff`` on the
``<doc>``: the share of its words in another language).
The corpus stats (``corpus/docs_kept``, ``words``, ``bytes_clean``,
``paragraphs_good``, counted by ExtractPipeline) are corrected for what goes
here, so they keep describing the corpus files.

Off the reactor thread: the extraction workers compute each document's
fingerprint (`corpus_crawler.dedup.fingerprint`: normalising, hashing,
MinHash, paragraph language) and this pipeline runs the store lookups and
inserts on one thread of its own; the reactor only routes the items.

The stores are the campaign's: their tables live in the campaign database
(``campaign.sqlite``, ``dedup_*``) and are committed in the same transaction
as the files' lengths (`pipelines.campaign`), so a crash loses or doubles
nothing; the paragraph n-gram filter lives in ``CORPUS_DEDUP_STATE_DIR``
(default: ``CORPUS_OUTPUT_DIR/state/dedup``). Without a campaign the stores
are all in that folder, and so they are when ``CORPUS_DEDUP_STATE_DIR`` names
another folder (stores shared by several campaigns: committed on their own,
every document). The next crawl into the same folder reopens them.
A distributed crawl (`crawl --redis URL`) keeps them in the campaign's Redis
instead (`corpus_crawler.dedup.RedisDeduplicator`), shared by all its processes:
a page duplicated across processes is kept once.

Settings: CORPUS_DEDUP_ENABLED, EXACT, NEAR_DOCUMENTS, NEAR_THRESHOLD, NEAR_SEEN_SHARE,
PARAGRAPHS, PARAGRAPH_THRESHOLD, PARAGRAPH_NGRAM, PARAGRAPH_FILTER_MIB,
PARAGRAPH_LANGUAGE, PARAGRAPH_LANGUAGE_MIN_WORDS, STATE_DIR.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.settings import BaseSettings
from scrapy.utils.defer import maybe_deferred_to_future

from corpus_crawler.config import ConfigError
from corpus_crawler.dedup import DedupConfig
from corpus_crawler.model import DropReason
from corpus_crawler.redis_state import RedisCampaignStore
from corpus_crawler.state import CampaignStore
from pipelines.drops import drop_for
from pipelines.glue import deferred_from_future
from pipelines.items import CorpusDocument

# The stages (numpy, rensa: ~90 ms of imports) load when the pipeline opens: Scrapy
# imports this module for every crawl, also one with dedup off.
if TYPE_CHECKING:
    from corpus_crawler.dedup import Deduplicator, RedisDeduplicator, Verdict

__all__ = ["DedupPipeline", "DedupSettings"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class DedupSettings:
    config: DedupConfig
    directory: Path
    #: The tables go into the campaign database (the default folder); a folder of its
    #: own (CORPUS_DEDUP_STATE_DIR, e.g. shared by several campaigns) keeps them there.
    in_campaign: bool = True

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> DedupSettings:
        if not settings.getbool("CORPUS_DEDUP_ENABLED", True):
            raise NotConfigured(
                "dedup is off: set dedup.enabled: true in the profile (CORPUS_DEDUP_ENABLED=True)"
            )
        if not settings.getbool("CORPUS_EXTRACT_TEXT", True):
            raise NotConfigured("dedup needs text: extraction.enabled is false")
        output = Path(settings.get("CORPUS_OUTPUT_DIR") or "output")
        default = output / "state" / "dedup"
        directory = Path(settings.get("CORPUS_DEDUP_STATE_DIR") or default)
        try:
            config = DedupConfig(
                exact=settings.getbool("CORPUS_DEDUP_EXACT", True),
                near_documents=settings.getbool("CORPUS_DEDUP_NEAR_DOCUMENTS", True),
                near_threshold=settings.getfloat("CORPUS_DEDUP_NEAR_THRESHOLD", 0.8),
                near_seen_share=settings.getfloat("CORPUS_DEDUP_NEAR_SEEN_SHARE", 0.9),
                paragraphs=settings.get("CORPUS_DEDUP_PARAGRAPHS", "remove"),
                paragraph_threshold=settings.getfloat("CORPUS_DEDUP_PARAGRAPH_THRESHOLD", 0.5),
                paragraph_ngram=settings.getint("CORPUS_DEDUP_PARAGRAPH_NGRAM", 7),
                paragraph_filter_mib=settings.getint("CORPUS_DEDUP_PARAGRAPH_FILTER_MIB", 256),
                paragraph_language=settings.get("CORPUS_DEDUP_PARAGRAPH_LANGUAGE", "remove"),
                paragraph_language_min_words=settings.getint(
                    "CORPUS_DEDUP_PARAGRAPH_LANGUAGE_MIN_WORDS", 12
                ),
            )
        except ConfigError as exc:
            raise ConfigError(f"CORPUS_DEDUP_* settings: {exc}") from None
        return cls(
            config=config,
            directory=directory,
            in_campaign=directory.resolve() == default.resolve(),
        )


@dataclass(frozen=True, slots=True)
class _Judged:
    """What the dedup thread hands back to the reactor thread."""

    verdict: Verdict
    item: CorpusDocument | None = None
    removed: int = 0
    #: CPU seconds the dedup thread spent on the document.
    cpu_seconds: float = 0.0


class DedupPipeline:
    def __init__(self, crawler: Crawler, settings: DedupSettings) -> None:
        self.crawler = crawler
        self.stats = crawler.stats
        self.settings = settings
        self.dedup: Deduplicator | RedisDeduplicator | None = None
        self._thread: ThreadPoolExecutor | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> DedupPipeline:
        return cls(crawler, DedupSettings.from_settings(crawler.settings))

    def open_spider(self) -> None:
        from corpus_crawler.dedup import Deduplicator, RedisDeduplicator
        from pipelines.campaign import CampaignExtension

        campaign = self.crawler.get_extension(CampaignExtension)
        store = campaign.store if campaign is not None and self.settings.in_campaign else None
        # the dedup tables join the SQLite campaign's transaction; a distributed
        # campaign keeps them in its Redis, shared by all its processes
        database = store if isinstance(store, CampaignStore) else None
        if isinstance(store, RedisCampaignStore):
            self.dedup = RedisDeduplicator(self.settings.config, store, keep_same_name=True)
        else:
            self.dedup = Deduplicator(
                self.settings.config,
                self.settings.directory,
                keep_same_name=True,
                database=database,
            )
        # One thread: the stages judge documents in the order they come (the first
        # occurrence stays) and SQLite lookups release the GIL while they run.
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="corpus-dedup")
        stored = self.dedup.stored_documents
        logger.info(
            "dedup: state in %s (%d document(s) kept by earlier runs%s)",
            "the campaign's Redis"
            if isinstance(self.dedup, RedisDeduplicator)
            else f"{self.settings.directory}"
            + (" and the campaign database" if database is not None else ""),
            stored,
            " or other processes" if isinstance(self.dedup, RedisDeduplicator) else "",
        )

    def close_spider(self) -> None:
        from corpus_crawler.dedup import RedisDeduplicator

        if self._thread is not None:
            self._thread.shutdown(wait=True)
            self._thread = None
        if self.dedup is None:
            return
        counts = self.dedup.counts
        rate = self.dedup.filter_false_positive_rate()
        if isinstance(self.dedup, RedisDeduplicator):
            # the cost of sharing the stores: Redis calls per judged document
            self.stats.set_value("corpus/dedup/redis_round_trips", self.dedup.round_trips)
            self.stats.set_value("corpus/dedup/redis_conflicts", self.dedup.conflicts)
        self.dedup.close()
        self.dedup = None
        if rate is not None:
            self.stats.set_value("corpus/dedup/ngram_filter_fp_rate", rate)
        if counts.replayed:
            # kept again under the URL they were kept under: refetched after a crash
            # (or a killed worker) before their output was committed
            self.stats.set_value("corpus/dedup/replayed", counts.replayed)
        logger.info(
            "dedup: %d document(s) checked, %d kept, %d duplicate, %d near-duplicate,"
            " %d emptied; %d of %d paragraph(s) removed (%d seen before, %d in another"
            " language)",
            counts.documents,
            counts.kept,
            counts.exact,
            counts.near,
            counts.emptied,
            counts.paragraphs_removed,
            counts.paragraphs,
            counts.paragraphs_duplicate,
            counts.paragraphs_foreign,
        )

    async def process_item(self, item: Any) -> Any:
        if not isinstance(item, CorpusDocument) or self.dedup is None or self._thread is None:
            return item
        judged = await maybe_deferred_to_future(
            deferred_from_future(self._thread.submit(self._timed_judge, item))
        )
        return self.route(item, judged)

    def _timed_judge(self, item: CorpusDocument) -> _Judged:
        started = time.thread_time()
        judged = self.judge(item)
        return dataclasses.replace(judged, cpu_seconds=time.thread_time() - started)

    # -- on the dedup thread -------------------------------------------------------------

    def judge(self, item: CorpusDocument) -> _Judged:
        """The stages' verdict on `item` and the item to pass on (on the dedup thread)."""
        from corpus_crawler.dedup import RedisDeduplicator, fingerprint
        from corpus_crawler.dedup.verdicts import apply_verdict, document_marks

        dedup = self.dedup
        assert dedup is not None
        document = item.document
        print_ = item.fingerprint
        if print_ is None:  # fingerprinted here when the worker did not (dedup off there)
            good = document.good_paragraphs
            print_ = fingerprint([p.text for p in good], document.language, dedup.config)
        if isinstance(dedup, RedisDeduplicator):
            verdict = dedup.check_fingerprint(item.page.url, print_, request=item.row)
        else:
            verdict = dedup.check_fingerprint(item.page.url, print_)
        if verdict.drop is not None:
            return _Judged(verdict)
        marks = document_marks(document, verdict, dedup.config, print_.word_counts)
        if not verdict.changed and not marks:
            unchanged = (
                item if item.fingerprint is None else dataclasses.replace(item, fingerprint=None)
            )
            return _Judged(verdict, unchanged)
        new_document = apply_verdict(document, verdict)
        kept = new_document.good_paragraphs
        removed = len(document.good_paragraphs) - len(kept)
        return _Judged(
            verdict,
            dataclasses.replace(
                item,
                document=new_document,
                words=sum(p.word_count for p in kept),
                clean_bytes=len(new_document.text.encode("utf-8")),
                # a text formatted before the verdict lacks its changes: formatted again
                # (`pipelines.extract.VerticalFormatPipeline`; with dedup on, the workers
                # leave it to that pipeline anyway)
                vertical_text=None,
                fingerprint=None,
                lang_diff=marks.lang_diff,
                paragraph_lang_diffs=marks.paragraph_lang_diffs,
                paragraph_dups=marks.paragraph_dups,
            ),
            removed,
        )

    # -- back on the reactor thread ------------------------------------------------------

    def route(self, item: CorpusDocument, judged: _Judged) -> CorpusDocument:
        """Count what `judge` decided; the item to pass on, or its typed drop (raised)."""
        from corpus_crawler.dedup import ParagraphFate

        stats = self.stats
        verdict = judged.verdict
        good = len(item.document.good_paragraphs)
        stats.inc_value("corpus/dedup/documents")
        # what the stages cost the crawl process, off the reactor (microseconds: a
        # document takes well under a millisecond)
        stats.inc_value("corpus/dedup/thread_cpu_us", int(judged.cpu_seconds * 1e6))
        duplicates = sum(p.fate is ParagraphFate.DUPLICATE for p in verdict.paragraphs)
        foreign = sum(p.fate is ParagraphFate.FOREIGN for p in verdict.paragraphs)
        if duplicates:
            stats.inc_value("corpus/dedup/paragraphs_seen", duplicates)
        if foreign:
            stats.inc_value("corpus/dedup/paragraphs_foreign", foreign)
        if verdict.drop is not None or judged.item is None:
            reason = verdict.drop or DropReason.DUPLICATE
            stats.inc_value(f"corpus/dropped/{reason}")
            # ExtractPipeline counted it as kept: the corpus counts follow the corpus files
            stats.inc_value("corpus/docs_kept", -1)
            stats.inc_value("corpus/paragraphs_good", -good)
            stats.inc_value("corpus/words", -item.words)
            stats.inc_value("corpus/bytes_clean", -item.clean_bytes)
            raise drop_for(reason, verdict.detail, item.page.url)
        new_item = judged.item
        if judged.removed:
            stats.inc_value("corpus/dedup/paragraphs_removed", judged.removed)
            stats.inc_value("corpus/paragraphs_good", -judged.removed)
            stats.inc_value("corpus/words", new_item.words - item.words)
            stats.inc_value("corpus/bytes_clean", new_item.clean_bytes - item.clean_bytes)
        return new_item
