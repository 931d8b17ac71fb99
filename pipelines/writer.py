"""The one writer path of a crawl: a thread that owns every output file.

Components hand it work (`submit_exchange` from the WARC capture middleware,
`submit_document` from the output pipelines, `finish` from the campaign) through
a queue and return at once, so file writes never run on the reactor thread.

Work that belongs to a scheduled request (its ``corpus_row``) is held back (on the
submitting thread, so the writer thread wakes once a page) until the request is
finished, then all of it is appended in one go: the request's
exchanges (a 500 and its retry are separate requests), then its document. With a
campaign store, the thread then marks the request done and, every
`commit_interval` seconds, commits the files' lengths with it
(`corpus_crawler.state`): so a crash never leaves half a page committed.

A write that fails with an `OSError` (a full disk, an I/O error), or ten write
errors in a row, stop the writer: nothing more is written or committed, and
`on_failure` is called (the campaign then stops the crawl). The next run cuts
the files back to their committed length and fetches the lost pages again.

Settings: CORPUS_OUTPUT_DIR, CORPUS_OUTPUT_KEEP_ALL_PARAGRAPHS,
CORPUS_OUTPUT_QUEUE_SIZE, CORPUS_WARC_* (ENABLED, PREFIX, MAX_FILE_BYTES,
CONVERSION, METADATA), CORPUS_PREVERTICAL_* (ENABLED, MAX_FILE_BYTES),
CORPUS_VERTICAL_* (ENABLED, SENTENCES, MAX_FILE_BYTES, CORPUS_TOOLS),
CORPUS_DOCUMENTS_* (JSONL, PARQUET, MAX_FILE_BYTES, ROW_GROUP_ROWS, GZIP).
"""

from __future__ import annotations

import errno
import logging
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scrapy.settings import BaseSettings
from twisted.internet.defer import Deferred

from corpus_crawler import faults
from corpus_crawler._files import OPEN_SUFFIX
from corpus_crawler.campaign_store import CampaignStoreProtocol
from corpus_crawler.documents import (
    DocumentsConfig,
    JsonlWriter,
    ParquetWriter,
    WarcLocation,
    document_record,
    recover_documents,
)
from corpus_crawler.recrawl import Change, Decision
from corpus_crawler.retries import DEFERRED, NETWORK, deferral_reason, exhausted_outcome

# the campaign folder's lock, as the tests know it
from corpus_crawler.state import _FolderLock as _Lock  # noqa: F401
from corpus_crawler.vertical import (
    Recovered,
    RecoveryAction,
    VerticalConfig,
    VerticalFormat,
    VerticalWriter,
)
from corpus_crawler.vertical import recover as recover_vertical
from corpus_crawler.warc import (
    CrawlInfo,
    Exchange,
    RobotsPolicy,
    WarcConfig,
    WarcWriter,
)
from corpus_crawler.warc import recover as recover_warc
from pipelines.glue import deferred_from_future
from pipelines.items import CorpusDocument, doc_meta
from pipelines.settingtypes import at_least, count_at_least

__all__ = ["CaptureFacts", "OutputFiles", "OutputSettings", "OutputWriter"]

logger = logging.getLogger(__name__)

#: Consecutive failed writes that stop the writer even without an OSError.
MAX_CONSECUTIVE_ERRORS = 10


@dataclass(frozen=True, slots=True)
class OutputSettings:
    directory: Path
    warc: WarcConfig | None
    warc_conversion: bool
    prevertical: VerticalConfig | None
    vertical: VerticalConfig | None
    queue_size: int
    #: Seconds between group commits of the campaign state.
    commit_interval: float = 0.5
    #: fsync the output files before each commit (survive power loss, not only a crash).
    fsync: bool = False
    #: Test only: the write after this many finished requests fails with ENOSPC.
    fault_enospc_after: int | None = None
    #: Kept documents as JSON Lines / Parquet (`corpus_crawler.documents`).
    jsonl: DocumentsConfig | None = None
    parquet: DocumentsConfig | None = None

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> OutputSettings:
        directory = Path(settings.get("CORPUS_OUTPUT_DIR") or "output")
        prefix = settings.get("CORPUS_WARC_PREFIX") or "corpus"
        keep_all = settings.getbool("CORPUS_OUTPUT_KEEP_ALL_PARAGRAPHS")
        warc: WarcConfig | None = None
        if settings.getbool("CORPUS_WARC_ENABLED", True):
            warc = WarcConfig(
                directory,
                prefix=prefix,
                max_bytes=settings.getint("CORPUS_WARC_MAX_FILE_BYTES", 1_000_000_000),
                info=CrawlInfo(
                    profile_name=settings.get("CORPUS_PROFILE_NAME") or "",
                    profile=settings.getdict("CORPUS_PROFILE_DATA") or None,
                    robots=RobotsPolicy.CLASSIC
                    if settings.getbool("ROBOTSTXT_OBEY")
                    else RobotsPolicy.IGNORE,
                    user_agent=settings.get("USER_AGENT") or "",
                    operator=settings.get("CORPUS_WARC_OPERATOR") or "",
                    publisher=settings.get("CORPUS_WARC_PUBLISHER") or "",
                    http_header_from=settings.get("CORPUS_WARC_HTTP_HEADER_FROM") or "",
                ),
                paragraph_metadata=settings.getbool("CORPUS_WARC_METADATA"),
                cdxj=settings.getbool("CORPUS_WARC_CDXJ", True),
            )
        prevertical: VerticalConfig | None = None
        if settings.getbool("CORPUS_PREVERTICAL_ENABLED", True):
            prevertical = VerticalConfig(
                directory,
                format=VerticalFormat.PREVERTICAL,
                prefix=prefix,
                max_bytes=settings.getint("CORPUS_PREVERTICAL_MAX_FILE_BYTES", 1_000_000_000),
                all_paragraphs=keep_all,
            )
        vertical: VerticalConfig | None = None
        if settings.getbool("CORPUS_VERTICAL_ENABLED"):
            vertical = VerticalConfig(
                directory,
                format=VerticalFormat.VERTICAL,
                prefix=prefix,
                max_bytes=settings.getint("CORPUS_VERTICAL_MAX_FILE_BYTES", 1_000_000_000),
                all_paragraphs=keep_all,
                sentences=settings.getbool("CORPUS_VERTICAL_SENTENCES"),
                corpus_tools=settings.getbool("CORPUS_VERTICAL_CORPUS_TOOLS", True),
            )
        documents = DocumentsConfig(
            directory,
            prefix=prefix,
            max_bytes=settings.getint("CORPUS_DOCUMENTS_MAX_FILE_BYTES", 1_000_000_000),
            row_group_rows=settings.getint("CORPUS_DOCUMENTS_ROW_GROUP_ROWS", 1000),
            gzip=settings.getbool("CORPUS_DOCUMENTS_GZIP"),
        )
        return cls(
            directory=directory,
            warc=warc,
            warc_conversion=settings.getbool("CORPUS_WARC_CONVERSION", True),
            prevertical=prevertical,
            vertical=vertical,
            # each queued exchange holds its body: 1000 pages is ~100 MB at most
            queue_size=count_at_least(settings, "CORPUS_OUTPUT_QUEUE_SIZE", 1000, 1),
            commit_interval=at_least(
                settings, "CORPUS_CAMPAIGN_COMMIT_INTERVAL", 0.5, 0, above=True
            ),
            fsync=settings.getbool("CORPUS_CAMPAIGN_FSYNC"),
            fault_enospc_after=_optional_int(settings, "CORPUS_OUTPUT_FAULT_ENOSPC_AFTER"),
            jsonl=documents if settings.getbool("CORPUS_DOCUMENTS_JSONL") else None,
            parquet=documents if settings.getbool("CORPUS_DOCUMENTS_PARQUET") else None,
        )


def _optional_int(settings: BaseSettings, name: str) -> int | None:
    value = settings.get(name)
    if value in (None, ""):
        return None
    return settings.getint(name)


@dataclass(frozen=True, slots=True)
class OutputFiles:
    """What the writer thread wrote, once it is closed."""

    warc: tuple[Path, ...] = ()
    #: The text (WET-like) files and the CDXJ indexes beside the WARC files.
    warc_text: tuple[Path, ...] = ()
    warc_index: tuple[Path, ...] = ()
    prevertical: tuple[Path, ...] = ()
    vertical: tuple[Path, ...] = ()
    counts: dict[str, int] = field(default_factory=dict)
    jsonl: tuple[Path, ...] = ()
    parquet: tuple[Path, ...] = ()
    errors: tuple[str, ...] = ()
    #: Why the writer stopped early (a full disk...), None if it did not.
    failure: str | None = None


@dataclass(frozen=True, slots=True)
class CaptureFacts:
    """What the capture middleware knows of an exchange for the recrawl state."""

    decision: Decision
    etag: str | None = None
    last_modified: str | None = None
    depth: int = 0


_Task = Callable[[], None]
_STOP = object()


@dataclass(frozen=True, slots=True)
class _Finish:
    row: int
    url: str
    outcome: str
    #: The request's work, in the order it was submitted.
    tasks: tuple[_Task, ...] = ()


class OutputWriter:
    """Owns the WARC and (pre)vertical writers; every write happens on its thread.

    One per crawl, owned by `pipelines.campaign.CampaignExtension`; components get
    it with ``crawler.get_extension(CampaignExtension).writer``.
    """

    def __init__(
        self,
        settings: OutputSettings,
        store: CampaignStoreProtocol | None = None,
        *,
        on_failure: Callable[[str], None] | None = None,
        on_decision: Callable[[str, str, float | None], None] | None = None,
    ) -> None:
        self.settings = settings
        self.store = store
        self._on_failure = on_failure
        #: Called on this thread with (url, outcome, due) when the writer, not the crawl,
        #: decides a request's outcome: ``deferred:<reason>`` (due: epoch seconds) or the
        #: drop a deferrable request ends in once its attempts are used up (the crawl log).
        self._on_decision = on_decision
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=settings.queue_size)
        self._thread = threading.Thread(target=self._loop, name="corpus-writer", daemon=True)
        self._closed: Future[OutputFiles] = Future()
        self._closing = False
        self._counts: dict[str, int] = {}
        #: Counts of the work done since the last commit (campaign totals).
        self._uncommitted: dict[str, int] = {}
        self._errors: list[str] = []
        self._consecutive_errors = 0
        self._failure: str | None = None
        #: Work of requests not finished yet, held on the submitting (reactor) thread
        #: and queued with the request's `finish`: one queue item and one wake-up of
        #: the writer thread a page instead of one for each of its parts.
        self._held: dict[int, list[_Task]] = {}
        #: Requests finished with a deferrable outcome (a network error, an unreachable
        #: robots.txt: `finish`, reactor thread) and how many of them the writer thread
        #: has finished or deferred in the state: until it has, the scheduler cannot
        #: know that one of them will be due again (`deferring`).
        self._deferrable_sent = 0
        self._deferrable_handled = 0
        #: WARC file of each response written for the request being finished (the
        #: JSONL/Parquet record names it); emptied after each request.
        self._locations: dict[str, str] = {}
        self._rows_written = 0
        self._dirty = False
        #: Closed files whose final length is committed already.
        self._committed_closed: set[str] = set()
        self._warc: WarcWriter | None = None
        self._prevertical: VerticalWriter | None = None
        self._vertical: VerticalWriter | None = None
        self._jsonl: JsonlWriter | None = None
        self._parquet: ParquetWriter | None = None

    # -- lifecycle (reactor thread) --------------------------------------------------------

    @classmethod
    def for_crawler(cls, crawler: Any) -> OutputWriter:
        """The crawl's writer: the one `pipelines.campaign.CampaignExtension` owns."""
        from pipelines.campaign import CampaignExtension

        campaign = crawler.get_extension(CampaignExtension)
        if campaign is None:
            raise RuntimeError(
                "no writer: add pipelines.campaign.CampaignExtension to EXTENSIONS"
                " (pipelines/settings.py has it)"
            )
        return campaign.writer

    @property
    def failure(self) -> str | None:
        return self._failure

    def start(self) -> None:
        settings = self.settings
        settings.directory.mkdir(parents=True, exist_ok=True)
        index = settings.warc is not None and settings.warc.cdxj  # WARCs left without a CDXJ
        for recovered in [
            *recover_warc(settings.directory, index=index),
            *recover_vertical(settings.directory),
            *recover_documents(settings.directory),
        ]:
            logger.warning("recovered a file left by an earlier crawl: %s", recovered)
            _finish_recovered_vertical(recovered, settings.vertical)
        if settings.warc is not None:
            self._warc = WarcWriter(settings.warc)
        if settings.prevertical is not None:
            self._prevertical = VerticalWriter(settings.prevertical)
        if settings.vertical is not None:
            self._vertical = VerticalWriter(settings.vertical)
        if settings.jsonl is not None:
            self._jsonl = JsonlWriter(settings.jsonl)
        if settings.parquet is not None:
            self._parquet = ParquetWriter(settings.parquet)
        self._thread.start()

    def close(self) -> Deferred[OutputFiles]:
        """Finish every file; the Deferred fires with the `OutputFiles`. Idempotent."""
        if not self._closing:
            self._closing = True
            self._queue.put(_STOP)
        return deferred_from_future(self._closed)

    # -- submissions (reactor thread) ------------------------------------------------------

    def _put(self, task: Any) -> None:
        if self._closing:
            logger.debug("output already closed; a late write is skipped")
            return
        try:
            self._queue.put_nowait(task)
        except queue.Full:
            # Back-pressure: the disk is slower than the crawl. Blocking here is rare
            # and bounded, and better than unbounded memory.
            logger.warning(
                "output queue full (%d): waiting for the writer", self.settings.queue_size
            )
            self._queue.put(task)

    def _submit(self, row: int | None, task: _Task) -> None:
        if row is None:
            self._put(task)
        elif self._closing:
            logger.debug("output already closed; a late write is skipped")
        else:
            self._held.setdefault(row, []).append(task)

    def submit_exchange(
        self,
        exchange: Exchange,
        *,
        row: int | None = None,
        request_id: str | None = None,
        response_id: str | None = None,
        capture: CaptureFacts | None = None,
    ) -> None:
        """Queue the request and response records of one exchange.

        `row`: the scheduled request it belongs to; its records are written when
        that request is finished. None (robots.txt, no campaign): written at once.
        `capture`: what `corpus_crawler.recrawl.decide` made of it (a ``revisit``
        record instead of a response; remembered in the campaign state once written).
        """
        warc = self._warc
        if warc is None:
            return
        store = self.store

        def task() -> None:
            decision = capture.decision if capture is not None else None
            if decision is not None and decision.revisit is not None:
                assert decision.refers_to is not None
                records = warc.write_revisit(
                    exchange,
                    profile=decision.revisit,
                    refers_to=decision.refers_to.record_id,
                    refers_to_uri=decision.refers_to.target_uri,
                    refers_to_date=decision.refers_to.date,
                    request_id=request_id,
                    revisit_id=response_id,
                )
                self._count(f"warc/revisits/{decision.revisit.name.lower()}")
            else:
                records = warc.write_exchange(
                    exchange, request_id=request_id, response_id=response_id
                )
                self._count("warc/exchanges")
            self._locations[records.response_id] = records.path.name
            if capture is not None and store is not None and decision is not None:
                assert exchange.date is not None
                store.record_capture(
                    exchange.url,
                    decision,
                    status=exchange.status,
                    record_id=records.response_id,
                    date=exchange.date,
                    etag=capture.etag,
                    last_modified=capture.last_modified,
                    depth=capture.depth,
                )
                if decision.change is not Change.OTHER:
                    self._count(f"recrawl/{decision.change}")

        self._submit(row, task)

    def submit_document(
        self, item: CorpusDocument, *, warc: bool, vertical: bool, documents: bool = False
    ) -> None:
        """Queue the conversion record, the (pre)vertical text and/or the JSONL/Parquet
        record of a kept document."""
        writers = [
            (name, writer)
            for name, writer in (("prevertical", self._prevertical), ("vertical", self._vertical))
            if writer is not None and vertical
        ]
        record_writers = [
            (name, writer)
            for name, writer in (("jsonl", self._jsonl), ("parquet", self._parquet))
            if writer is not None and documents
        ]
        warc_writer = self._warc if warc and self.settings.warc_conversion else None
        if warc_writer is None and not writers and not record_writers:
            return
        meta = doc_meta(item, item.doc_id)

        def task() -> None:
            if record_writers:
                self._write_record(item, meta, record_writers)
            if warc_writer is not None:
                if not item.response_id:
                    self._count("warc/conversions_without_response")
                else:
                    warc_writer.write_document(
                        item.document,
                        refers_to=item.response_id,
                        url=item.url,
                        date=meta.crawl_date,
                    )
                    self._count("warc/conversions")
            for name, writer in writers:
                if name == "vertical":
                    faults.reached("writer.mid_document")
                if name == "vertical" and item.vertical_text is not None:
                    # tokenised in the worker process already
                    written = writer.write_formatted(item.vertical_text)
                else:
                    written = writer.write(item.document, meta)
                if written:
                    self._count(f"{name}/documents")

        self._submit(item.row, task)

    def finish(self, row: int, url: str, outcome: str) -> None:
        """The request `row` is done: write what it produced and mark it done."""
        if deferral_reason(outcome) is not None:
            self._deferrable_sent += 1
        self._put(_Finish(row, url, outcome, tuple(self._held.pop(row, ()))))

    @property
    def deferring(self) -> bool:
        """Requests that failed with a network error (or whose robots.txt is unreachable)
        are on their way to the state, where they may be deferred (the crawl is not idle
        until they are there)."""
        return self._deferrable_handled < self._deferrable_sent

    def after_writes(self, task: Callable[[], None]) -> None:
        """Run `task` on the writer thread once everything submitted before it that is
        written at once (robots.txt exchanges) is written, before the next commit (a
        distributed crawl publishes a robots.txt entry with its capture's commit)."""
        self._put(task)

    # -- the thread ------------------------------------------------------------------------

    def _write_record(
        self,
        item: CorpusDocument,
        meta: Any,
        writers: list[tuple[str, JsonlWriter | ParquetWriter]],
    ) -> None:
        # the exchange of the same request was written just before, on this thread
        warc_file = self._locations.get(item.response_id) if item.response_id else None
        location = WarcLocation(warc_file, item.response_id) if warc_file else None
        keep_all = self.settings.prevertical.all_paragraphs if self.settings.prevertical else False
        record = document_record(item.document, meta, warc=location, all_paragraphs=keep_all)
        if record is None:
            return
        for name, writer in writers:
            writer.write(record)
            self._count(f"{name}/documents")

    def _count(self, key: str, amount: int = 1) -> None:
        self._counts[key] = self._counts.get(key, 0) + amount
        self._uncommitted[key] = self._uncommitted.get(key, 0) + amount

    def _error(self, error: BaseException) -> None:
        self._counts["errors"] = self._counts.get("errors", 0) + 1
        message = f"{type(error).__name__}: {error}"
        if len(self._errors) < 20:
            self._errors.append(message)
        # an OSError (a full disk) is a condition, not a bug: no traceback for it
        logger.error(
            "output write failed: %s",
            message,
            exc_info=None if isinstance(error, OSError) else error,
        )
        self._consecutive_errors += 1
        if isinstance(error, OSError):
            self._fail(f"cannot write to {self.settings.directory}: {_os_error(error)}")
        elif self._consecutive_errors >= MAX_CONSECUTIVE_ERRORS:
            self._fail(f"{self._consecutive_errors} writes failed in a row (last: {message})")

    def _fail(self, message: str) -> None:
        if self._failure is not None:
            return
        self._failure = message
        if self._on_failure is not None:
            self._on_failure(message)

    def _run(self, task: _Task) -> None:
        try:
            task()
        except Exception as exc:  # counted; an OSError or a run of them stops the writer
            self._error(exc)
        else:
            self._consecutive_errors = 0
        self._dirty = True

    def _handle(self, task: Any) -> None:
        try:
            self._handle_task(task)
        finally:
            if isinstance(task, _Finish) and deferral_reason(task.outcome) is not None:
                self._deferrable_handled += 1

    def _handle_task(self, task: Any) -> None:
        if self._failure is not None:
            return  # stopped: nothing more is written, nothing committed
        if isinstance(task, _Finish):
            fault = self.settings.fault_enospc_after
            if fault is not None and self._rows_written >= fault:
                self._run(self._injected_enospc)
                return
            for run in task.tasks:
                self._run(run)
                if self._failure is not None:
                    return
            faults.reached("writer.request_written")
            self._locations.clear()
            self._rows_written += 1
            if self.store is None:  # nothing is deferred without a campaign
                self._count(f"requests/{self._exhausted(task)}")
                return
            try:
                self._finish_in_store(task)
            except Exception as exc:  # the state is as vital as the files
                self._error(exc)
                self._fail(f"cannot update the campaign state: {exc}")
        else:
            self._run(task)

    def _finish_in_store(self, task: _Finish) -> None:
        """Mark the request done, or deferred (a network failure or an unreachable
        robots.txt, with attempts left: `corpus_crawler.retries`), in the state that the
        next commit makes durable."""
        store = self.store
        assert store is not None
        reason = deferral_reason(task.outcome)
        if reason is not None:
            due = store.defer(task.row, task.url, task.outcome)
            if due is not None:
                # ``requests/deferred`` stays the count of network failures deferred
                self._count(f"requests/{DEFERRED}" + ("" if reason == NETWORK else f":{reason}"))
                self._decided(task.url, f"{DEFERRED}:{reason}", due)
                return
        outcome = self._exhausted(task)
        self._count(f"requests/{outcome}")
        if store.finish(task.row, task.url, outcome):
            self._count(f"recrawl/{Change.GONE}")

    def _exhausted(self, task: _Finish) -> str:
        """The outcome a request is finished with (a deferrable one out of attempts
        becomes its final outcome, told to `on_decision` if it is a new one)."""
        outcome = exhausted_outcome(task.outcome)
        if outcome != task.outcome:
            self._decided(task.url, outcome, None)
        return outcome

    def _decided(self, url: str, outcome: str, due: float | None) -> None:
        if self._on_decision is None:
            return
        try:
            self._on_decision(url, outcome, due)
        except Exception:  # the crawl log's trouble, not the state's
            logger.exception("recording the outcome %s of %s failed", outcome, url)

    def _injected_enospc(self) -> None:
        # A torn record first, as a real full disk leaves one.
        if self._warc is not None and self._warc.current_path is not None:
            open_path = self._warc.current_path.with_name(
                self._warc.current_path.name + OPEN_SUFFIX
            )
            with open(open_path, "ab") as handle:
                handle.write(b"\x1f\x8b\x08\x00torn")
        raise OSError(errno.ENOSPC, "No space left on device (CORPUS_OUTPUT_FAULT_ENOSPC_AFTER)")

    def _writers(self) -> list[WarcWriter | VerticalWriter | JsonlWriter]:
        """The append-only writers, whose files the campaign commits and cuts back."""
        return [
            w for w in (self._warc, self._prevertical, self._vertical, self._jsonl) if w is not None
        ]

    def _closing_order(self) -> list[WarcWriter | VerticalWriter | JsonlWriter | ParquetWriter]:
        # Parquet last: a file with a footer cannot be cut back, so it is finished only
        # at the end of a run (a crash quarantines it; the JSONL keeps its documents).
        parquet = [self._parquet] if self._parquet is not None else []
        return [*self._writers(), *parquet]

    def _file_lengths(self) -> dict[str, int]:
        """Current length of every file written since the last commit."""
        lengths: dict[str, int] = {}
        for closed, current in self._streams():
            for path in closed:
                if path.name not in self._committed_closed:
                    lengths[path.name] = path.stat().st_size
            if current is not None:
                open_path = current.with_name(current.name + OPEN_SUFFIX)
                lengths[current.name] = open_path.stat().st_size
        return lengths

    def _streams(self) -> list[tuple[tuple[Path, ...], Path | None]]:
        """(closed files, file being written) of every output stream, text WARCs included."""
        streams: list[tuple[tuple[Path, ...], Path | None]] = []
        for writer in self._writers():
            streams.append((writer.files, writer.current_path))
            if isinstance(writer, WarcWriter):
                streams.append((writer.text_files, writer.current_text_path))
        return streams

    def _commit(self) -> None:
        if self.store is None or self._failure is not None:
            return
        if not (self._dirty or self.store.changed):
            return
        # kill point only: a commit that makes some document durable
        documents = faults.armed("writer.committed") and any(
            key.endswith("/documents") for key in self._uncommitted
        )
        try:
            lengths = self._file_lengths()
            fsync_paths = []
            if self.settings.fsync:
                for name in lengths:
                    path = self.settings.directory / name
                    fsync_paths.append(path if path.exists() else Path(str(path) + OPEN_SUFFIX))
            self.store.count(self._uncommitted)
            self.store.commit(lengths, fsync_files=fsync_paths)
        except Exception as exc:
            self._error(exc)
            self._fail(f"cannot commit the campaign state: {exc}")
            return
        if documents:
            faults.reached("writer.committed")
        for closed, _ in self._streams():
            self._committed_closed.update(path.name for path in closed)
        self._uncommitted = {}
        self._dirty = False

    def _loop(self) -> None:
        interval = self.settings.commit_interval
        last_commit = time.monotonic()
        while True:
            # wake up at least once an interval: the reactor thread changes the state
            # too (new requests), and those changes need a commit as well
            timeout = max(0.0, last_commit + interval - time.monotonic())
            try:
                task = self._queue.get(timeout=timeout)
            except queue.Empty:
                task = None
            if task is _STOP:
                break
            if task is not None:
                self._handle(task)
            if time.monotonic() - last_commit >= interval:
                self._commit()
                last_commit = time.monotonic()
        files = OutputFiles()
        try:
            if self._failure is None:
                # requests never finished (the crawl stopped first) are not written:
                # they are still in the frontier and will be fetched again
                # (the reactor submits nothing more once `close` was called)
                if self._held:
                    logger.info("%d unfinished request(s) left for the next run", len(self._held))
                self._held.clear()
                for writer in self._closing_order():
                    writer.close()
                self._dirty = True
                self._commit()
            files = OutputFiles(
                warc=self._warc.files if self._warc else (),
                warc_text=self._warc.text_files if self._warc else (),
                warc_index=self._warc.index_files if self._warc else (),
                prevertical=self._prevertical.files if self._prevertical else (),
                vertical=self._vertical.files if self._vertical else (),
                counts=dict(self._counts),
                errors=tuple(self._errors),
                failure=self._failure,
                jsonl=self._jsonl.files if self._jsonl else (),
                parquet=self._parquet.files if self._parquet else (),
            )
        except BaseException as exc:  # a close error must still release the crawl
            self._error(exc)
            files = OutputFiles(
                counts=dict(self._counts), errors=tuple(self._errors), failure=self._failure
            )
        finally:
            self._closed.set_result(files)


def _os_error(error: OSError) -> str:
    if error.errno == errno.ENOSPC:
        return "the disk is full (free some space, then run the same command again to resume)"
    return error.strerror or str(error)


def _finish_recovered_vertical(recovered: Recovered, config: VerticalConfig | None) -> None:
    """A vertical file finished by crash recovery gets its corpus tool files too."""
    destination = recovered.destination
    if (
        config is not None
        and config.corpus_tools
        and recovered.action in (RecoveryAction.RENAMED, RecoveryAction.TRUNCATED)
        and destination.name.removesuffix(".gz").endswith(".vert")
    ):
        from corpus_crawler.corpustools import write_corpus_tool_files

        write_corpus_tool_files(destination)
