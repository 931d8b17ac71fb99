"""The main process of `corpus-crawler process`: plans tasks, runs them, writes the outputs.

Each input file is a *unit* cut into byte-range tasks (`_task.ChunkTask`). Tasks
go to the engine in input order with a bounded number in flight; their results
are written in that same order, whatever order they finish in, so the output
files are identical whatever ``-j`` is. Only this process writes: the library
writers (`VerticalWriter`, `WarcWriter`) with one set of files per unit, named
after the input (``{input stem}-{timestamp}-{serial}-{host}.prevert``).

Crash safety (STYLE.md rule 12, and the "append, then act" state of
`_state.ProcessState`): a unit's files are ``*.open`` until the unit is
finished and recorded as done. A run that starts finds every unit that is not
done, deletes whatever it had written and does it again; done units are
skipped. So after ``kill -9`` at any moment, the next run gives every document
exactly once.

After the inputs, revisit records are resolved against the captures of every
done unit in the folder and processed as a last unit (``revisits-N``).

With dedup on, documents go through the dedup stages here, in the order they are
written, and the stores commit with the unit (see `_dedup`).
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import json
import logging
import os
import re
import time
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from pipelines.worker import VerticalTask

from .._files import safe_name_part
from ..dedup import DedupConfig, ParagraphFate
from ..dedup.verdicts import apply_verdict, document_marks
from ..model import Document
from ..state import FolderLock
from ..vertical import DocMeta, VerticalWriter
from ..warc import CrawlInfo, RobotsPolicy, WarcConfig, WarcWriter, new_record_id
from ._archive import ARCHIVE_SUFFIXES, ArchiveError, ArchiveKind, sniff_kind
from ._dedup import ArchiveDedup, document_fingerprint
from ._engines import Engine
from ._settings import DEFAULT_CHUNK_BYTES, ArchiveDrop, ProcessSettings
from ._state import ProcessState
from ._task import (
    ChunkTask,
    KeptDocument,
    PendingRevisit,
    ResolvedRevisit,
    RevisitTask,
    TaskResult,
    VerticalBatch,
    VerticalBatchResult,
    render_document,
    vertical_text,
)

__all__ = [
    "DocumentFilter",
    "ProcessError",
    "ProcessOptions",
    "ProcessSummary",
    "collect_inputs",
    "process_archives",
]

logger = logging.getLogger(__name__)

SUMMARY_NAME = "process-summary.json"
#: The dedup stores, under the output folder (where a crawl keeps them too).
DEDUP_DIR = Path("state") / "dedup"
#: The smallest byte range `chunk_bytes` is lowered to for load balance.
MIN_CHUNK_BYTES = 1024 * 1024
#: Revisits resolved and written per unit (one set of `revisits-N` files).
REVISITS_PER_UNIT = 20_000
#: Revisits processed per task.
REVISIT_BATCH = 200
#: Times a task is retried after its worker process died (then it is counted as failed).
TASK_RETRIES = 2
_OUTPUT_NAME = re.compile(r"-\d{14}(?:\d{3})?-\d{5}-[A-Za-z0-9._-]+\.(?:prevert|vert|warc\.gz)$")


class ProcessError(Exception):
    """Bad input to a run; the message names the file and the fix."""


class DocumentFilter(Protocol):
    """The dedup hook: True keeps a kept document, False drops it as `duplicate`.

    Called in the main process, in input order, once per document per
    attempt: a unit redone after a crash shows its documents again, so a
    filter with a persistent store should treat a `DocMeta.doc_id` it has
    already let through for the same URL as new, not as a duplicate.
    """

    def __call__(self, document: Document, meta: DocMeta) -> bool: ...


ProgressFactory = Callable[[int], "Progress"]


class Progress(Protocol):
    def update(self, n: int) -> Any: ...

    def set_postfix_str(self, text: str) -> Any: ...

    def close(self) -> Any: ...


@dataclass(frozen=True, slots=True)
class ProcessOptions:
    output: Path
    settings: ProcessSettings = field(default_factory=ProcessSettings)
    chunk_bytes: int = DEFAULT_CHUNK_BYTES
    #: Tasks sent to the engine and not yet written (running, queued or finished and
    #: waiting for their turn); 0: 3 per worker.
    max_in_flight: int = 0
    document_filter: DocumentFilter | None = None
    #: The crawl's dedup stages (a profile's ``dedup:`` section), run in the main process
    #: in archive order with their stores in ``OUT/state/dedup/``; None: off.
    dedup: DedupConfig | None = None
    #: Written into the ``warcinfo`` record of the conversion WARCs.
    profile_name: str = ""


@dataclass(slots=True)
class ProcessSummary:
    data: dict[str, Any]

    @property
    def documents(self) -> int:
        return int(self.data["documents"])

    @property
    def dropped(self) -> dict[str, int]:
        return dict(self.data["dropped"])


@dataclass(slots=True)
class _Unit:
    key: str
    kind: str  # "input" or "revisits"
    prefix: str
    description: str
    tasks: list[ChunkTask | RevisitTask]
    sizes: list[int]
    source_path: str = ""
    archive_kind: ArchiveKind | None = None
    revisit_ids: list[int] = field(default_factory=list)
    #: The id of the warcinfo record of the unit's text WARC, minted before its tasks
    #: so that the workers build its records whole ("" with the WARC off).
    warcinfo_id: str = ""


def collect_inputs(paths: list[Path]) -> list[Path]:
    """The archives named on the command line; a folder stands for the archives in it."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            inside = sorted(
                p for p in path.rglob("*") if p.is_file() and p.name.endswith(ARCHIVE_SUFFIXES)
            )
            if not inside:
                raise ProcessError(
                    f"{path}: no .warc, .warc.gz, .arc or .arc.gz files in this folder"
                )
            found.extend(inside)
        elif path.is_file():
            found.append(path)
        else:
            raise ProcessError(f"{path}: no such file or folder; check the path")
    unique = list(dict.fromkeys(p.resolve() for p in found))
    return unique


def process_archives(
    inputs: list[Path],
    options: ProcessOptions,
    engine: Engine,
    progress: ProgressFactory | None = None,
) -> ProcessSummary:
    """Reprocess `inputs` into `options.output`; see the module docstring."""
    needs_documents = options.document_filter is not None or options.dedup is not None
    if needs_documents and not options.settings.full_documents:
        settings = dataclasses.replace(options.settings, full_documents=True)
        options = dataclasses.replace(options, settings=settings)
    if options.dedup is not None:
        # the workers compute the fingerprints; the main process only looks them up
        settings = dataclasses.replace(options.settings, dedup=options.dedup)
        options = dataclasses.replace(options, settings=settings)
    runner = _Runner(inputs, options, engine, progress)
    return runner.run()


class _Runner:
    def __init__(
        self,
        inputs: list[Path],
        options: ProcessOptions,
        engine: Engine,
        progress: ProgressFactory | None,
    ) -> None:
        self.inputs = inputs
        self.options = options
        self.engine = engine
        self.progress_factory = progress
        self.out = options.output
        self.run_counts: collections.Counter[str] = collections.Counter()
        self.started = time.monotonic()
        self.started_cpu = time.process_time()
        self.worker_cpu = 0.0
        self.skipped_units: list[str] = []
        self.processed_units: list[str] = []
        self.failed_tasks: list[str] = []
        self.unresolved_revisits = 0
        self.dedup: ArchiveDedup | None = None

    # -- the run -------------------------------------------------------------------------------

    def run(self) -> ProcessSummary:
        kinds = self._check_inputs()
        self.out.mkdir(parents=True, exist_ok=True)
        out = self.out.resolve()
        inside = [str(p) for p in self.inputs if out in p.resolve().parents]
        if inside:
            # a redone unit deletes its outputs: never let them share a folder with inputs
            raise ProcessError(
                f"{inside[0]} is inside the output folder {self.out}: write to another folder"
            )
        lock = FolderLock(self.out)
        lock.acquire()
        state = ProcessState(self.out)
        try:
            self.state = state
            if self.options.dedup is not None:
                self.dedup = ArchiveDedup(self.options.dedup, self.out / DEDUP_DIR)
            self._finish_prepared()
            self._discard_open_files()
            self.chunk_bytes = self._chunk_bytes()
            units = [u for u in (self._plan(path, kinds[path]) for path in self.inputs) if u]
            self._run_units(units)
            for revisits in self._revisit_units():
                self._run_units([revisits])
            summary = self._summary()
            _write_json(self.out / SUMMARY_NAME, summary)
            return ProcessSummary(summary)
        finally:
            if self.dedup is not None:
                self.dedup.close()
            state.close()
            lock.release()

    def _finish_prepared(self) -> None:
        """The second phase of a unit commit a killed run began (see `_dedup`)."""
        for prepared in self.state.prepared_units():
            if self.dedup is not None and self.dedup.stored_documents == prepared.dedup_documents:
                self.dedup.roll_forward(prepared.ngrams)
                self.state.finish_unit(prepared.key, prepared.stats, prepared.resolved)
                logger.warning("%s: its commit, interrupted, is finished", prepared.key)
            else:
                # the stores never saw the unit: it is done again from its start
                self.state.forget_prepared(prepared.key)

    def _check_inputs(self) -> dict[Path, ArchiveKind]:
        kinds: dict[Path, ArchiveKind] = {}
        problems: list[str] = []
        for path in self.inputs:
            try:
                kinds[path] = sniff_kind(path)
            except ArchiveError as exc:
                problems.append(str(exc))
            except OSError as exc:
                problems.append(f"{path}: cannot read it ({exc.strerror})")
        if problems:
            raise ProcessError("; ".join(problems))
        return kinds

    def _chunk_bytes(self) -> int:
        # Enough tasks for every worker to stay busy to the end (a few per worker), but
        # never tiny ones: each task reopens the file and finds its first record.
        total = sum(path.stat().st_size for path in self.inputs)
        balanced = -(-total // (4 * max(1, self.engine.workers)))
        return min(self.options.chunk_bytes, max(MIN_CHUNK_BYTES, balanced))

    def _discard_open_files(self) -> None:
        # The folder is locked: an `*.open` file of one of our units was left by a run
        # that died. Only ours: a crashed crawl's `*.open` files are its own to recover.
        prefixes = [re.escape(unit.prefix) for unit in self.state.units()]
        if not prefixes:
            return
        ours = re.compile(
            "(?:" + "|".join(prefixes) + ")" + _OUTPUT_NAME.pattern.removesuffix("$") + r"\.open$"
        )
        for path in self.out.iterdir():
            if ours.match(path.name) and path.is_file():
                logger.warning("discarding %s, left unfinished by an interrupted run", path.name)
                path.unlink()

    def _plan(self, path: Path, kind: ArchiveKind) -> _Unit | None:
        state = self.state
        stat = path.stat()
        key = str(path)
        record = state.unit(key)
        if record is not None and record.done:
            if (record.size, record.mtime_ns) != (stat.st_size, stat.st_mtime_ns):
                raise ProcessError(
                    f"{path}: changed since it was processed into {self.out} (size"
                    f" {record.size} -> {stat.st_size}); process it into a new folder"
                )
            self.skipped_units.append(key)
            return None
        stem = _stem(path)
        prefix = state.add_unit(key, "input", key, stat.st_size, stat.st_mtime_ns, stem)
        if record is not None:
            self._restart(key, prefix)
        settings = self.options.settings
        warcinfo_id = new_record_id() if settings.outputs.warc else ""
        chunk = self.chunk_bytes
        if kind.splittable and stat.st_size > chunk:
            starts = list(range(0, stat.st_size, chunk))
        else:
            starts = [0]
        tasks: list[ChunkTask | RevisitTask] = []
        sizes: list[int] = []
        for index, start in enumerate(starts):
            end = starts[index + 1] if index + 1 < len(starts) else None
            tasks.append(ChunkTask(key, index, str(path), kind, start, end, settings, warcinfo_id))
            sizes.append((end if end is not None else stat.st_size) - start)
        return _Unit(
            key, "input", prefix, str(path), tasks, sizes, str(path), kind, warcinfo_id=warcinfo_id
        )

    def _restart(self, key: str, prefix: str) -> None:
        removed = self.state.restart_unit(key)
        pattern = re.compile(re.escape(prefix) + _OUTPUT_NAME.pattern)
        for path in self.out.iterdir():
            # a file renamed on close but not yet recorded when the run died
            if pattern.match(path.name) and path.is_file():
                path.unlink()
                removed.append(path)
        for path in removed:
            logger.warning("discarding %s: its input is processed again from the start", path)

    # -- tasks in order, bounded in flight ------------------------------------------------

    def _run_units(self, units: list[_Unit]) -> None:
        if not units:
            return
        total = sum(sum(u.sizes) for u in units)
        # one bar, over the input bytes; the revisits' short last phase has none
        show = self.progress_factory is not None and total > 0
        bar = self.progress_factory(total) if self.progress_factory and show else None
        order: list[tuple[_Unit, int]] = [(u, i) for u in units for i in range(len(u.tasks))]
        # Each result holds a range's documents (a few MB): three per worker keep them all
        # busy behind a slow range while bounding what waits to be written in order.
        limit = self.options.max_in_flight or 3 * self.engine.workers
        in_flight: dict[Future[TaskResult], tuple[int, int]] = {}
        results: dict[int, TaskResult | None] = {}
        #: results past the gate and the dedup verdict, in order (None: a failed task)
        judged: dict[int, _Judged | None] = {}
        attempts: collections.Counter[int] = collections.Counter()
        next_submit = 0
        next_judge = 0
        next_write = 0
        output: _UnitOutput | None = None
        unit_counts: collections.Counter[str] = collections.Counter()
        unit_damage: list[dict[str, Any]] = []
        try:
            while next_write < len(order):
                # results waiting to be written in order count too: memory stays bounded
                while (
                    next_submit < len(order) and len(in_flight) + len(results) + len(judged) < limit
                ):
                    unit, index = order[next_submit]
                    try:
                        future = self.engine.submit(unit.tasks[index])
                    except BrokenProcessPool:
                        # A worker died since the last wait and the pool noticed first:
                        # the tasks in flight fail with it and are retried below
                        # (`_retry`); with none in flight, a new pool starts here.
                        if in_flight:
                            break
                        self.engine.restart()
                        continue
                    in_flight[future] = (next_submit, 0)
                    next_submit += 1
                # (only those not done: a later one done early must not wake this up again)
                formatting: list[Future[Any]] = [
                    entry.vertical
                    for entry in judged.values()
                    if entry is not None and entry.vertical is not None and not entry.ready()
                ]
                waiting: list[Future[Any]] = [*in_flight, *formatting]
                done, _ = wait(waiting, return_when=FIRST_COMPLETED)
                for future in done:
                    if future not in in_flight:
                        continue  # failed with a broken pool and already resubmitted
                    position, _ = in_flight.pop(future)
                    try:
                        results[position] = future.result()
                    except BrokenProcessPool:
                        self._retry(position, order, in_flight, attempts, results)
                    except Exception:  # a failed task is counted and reported, never fatal
                        unit, index = order[position]
                        logger.exception("task %d of %s failed", index, unit.description)
                        results[position] = None
                while True:
                    # judged in archive order, and only within the unit being written:
                    # the dedup stores commit a unit's documents with its files
                    while next_judge in results and order[next_judge][0] is order[next_write][0]:
                        result = results.pop(next_judge)
                        judge_unit, _ = order[next_judge]
                        judged[next_judge] = (
                            None if result is None else self._judge(judge_unit, result)
                        )
                        next_judge += 1
                    if next_write not in judged:
                        break
                    entry = judged[next_write]
                    if entry is not None and not entry.ready():
                        break
                    del judged[next_write]
                    unit, index = order[next_write]
                    if index == 0:
                        output = _UnitOutput(unit, self.options, self.state, self.out)
                        unit_counts = collections.Counter()
                        unit_damage = []
                    assert output is not None
                    if entry is None:
                        unit_counts["tasks/failed"] += 1
                        self.failed_tasks.append(f"{unit.description} task {index}")
                    else:
                        self._write(unit, entry, output, unit_counts, unit_damage)
                    if bar is not None:
                        bar.update(unit.sizes[index])
                        bar.set_postfix_str(
                            f"docs={self.run_counts['documents']}"
                            f" dropped={sum(self._dropped(self.run_counts).values())}"
                        )
                    if index == len(unit.tasks) - 1:
                        output.close()
                        stats = {"counts": dict(unit_counts), "damage": unit_damage}
                        if self.dedup is not None:
                            documents, ngrams = self.dedup.prepared()
                            self.state.prepare_unit(
                                unit.key, stats, unit.revisit_ids, documents, ngrams
                            )
                            self.dedup.commit()
                        self.state.finish_unit(unit.key, stats, unit.revisit_ids)
                        self.processed_units.append(unit.key)
                        output = None
                    next_write += 1
        finally:
            if bar is not None:
                bar.close()

    def _retry(
        self,
        position: int,
        order: list[tuple[_Unit, int]],
        in_flight: dict[Future[TaskResult], tuple[int, int]],
        attempts: collections.Counter[int],
        results: dict[int, TaskResult | None],
    ) -> None:
        unit, index = order[position]
        attempts[position] += 1
        logger.error(
            "a worker died on %s (task %d, attempt %d)", unit.description, index, attempts[position]
        )
        # Every task in flight failed with the pool: start a new one and resubmit them.
        self.engine.restart()
        lost = list(in_flight.items())
        in_flight.clear()
        for _, (other, _) in lost:
            other_unit, other_index = order[other]
            in_flight[self.engine.submit(other_unit.tasks[other_index])] = (other, 0)
        if attempts[position] > TASK_RETRIES:
            results[position] = None
        else:
            in_flight[self.engine.submit(unit.tasks[index])] = (position, 0)

    def _judge(self, unit: _Unit, result: TaskResult) -> _Judged:
        """`result`'s documents past the document filter and the dedup stages; with dedup
        on, the vertical text of those kept is sent to a worker (`VerticalBatch`)."""
        gate = self.options.document_filter
        self.worker_cpu += result.cpu_seconds
        task_counts = collections.Counter(result.counts)
        kept_documents: list[KeptDocument] = []
        for kept in result.documents:
            if gate is not None:
                assert kept.document is not None and kept.meta is not None
                if not gate(kept.document, kept.meta):
                    task_counts["documents"] -= 1
                    task_counts["words"] -= kept.words
                    task_counts[f"dropped/{ArchiveDrop.DUPLICATE}"] += 1
                    continue
            if self.dedup is not None:
                deduplicated = self._deduplicate(kept, unit, task_counts)
                if deduplicated is None:
                    continue
                kept = deduplicated
            kept_documents.append(kept)
        judged = _Judged(result, kept_documents, task_counts)
        if self._vertical_after_dedup and kept_documents:
            batch = VerticalBatch(
                tuple(
                    VerticalTask.of(_url(kept), kept.document, kept.meta)  # type: ignore[arg-type]
                    for kept in kept_documents
                ),
                self.options.settings,
            )
            # (a broken pool: formatted here when written, `_vertical_texts`)
            with contextlib.suppress(BrokenProcessPool):
                judged.vertical = self.engine.submit_vertical(batch)
        return judged

    @property
    def _vertical_after_dedup(self) -> bool:
        # the chunk tasks left the vertical out (`_task._process`)
        return self.dedup is not None and self.options.settings.outputs.vertical

    def _vertical_texts(self, judged: _Judged) -> tuple[str | None, ...] | None:
        """The vertical texts of `judged`'s documents made after the dedup verdict, or None
        if the chunk tasks made them. A worker that failed or died (the pool restarts
        with the chunk tasks' retry) leaves them to this process: slower, never lost."""
        if not self._vertical_after_dedup or not judged.kept:
            return None
        counts = judged.counts
        if judged.vertical is not None:
            try:
                formatted: VerticalBatchResult = judged.vertical.result()
            except Exception as exc:
                logger.warning("tokenising the vertical in this process: %s", exc)
            else:
                self.worker_cpu += formatted.cpu_seconds
                counts["dedup/vertical_tokenised"] += len(formatted.texts)
                return formatted.texts
        counts["dedup/vertical_tokenised_here"] += len(judged.kept)
        settings = self.options.settings
        return tuple(
            vertical_text(kept.document, kept.meta, settings)  # type: ignore[arg-type]
            for kept in judged.kept
        )

    def _write(
        self,
        unit: _Unit,
        judged: _Judged,
        output: _UnitOutput,
        counts: collections.Counter[str],
        damage: list[dict[str, Any]],
    ) -> None:
        result = judged.result
        task_counts = judged.counts
        texts = self._vertical_texts(judged)
        if texts is None:
            for kept in judged.kept:
                output.write(kept)
        else:
            for kept, text in zip(judged.kept, texts, strict=True):
                output.write(dataclasses.replace(kept, vertical_text=text))
        output.note_files()
        counts.update(task_counts)
        self.run_counts.update(task_counts)
        for item in result.damage:
            entry = {
                "file": unit.source_path,
                "offset": item.offset,
                "error": item.message,
                "resumed_at": item.resumed_at,
            }
            logger.warning(
                "damaged record in %s at offset %d: %s", unit.source_path, item.offset, item.message
            )
            if len(damage) < 100:
                damage.append(entry)
        if unit.kind == "input" and unit.archive_kind is not None:
            self.state.add_task_rows(
                unit.key, unit.source_path, unit.archive_kind, result.captures, result.revisits
            )

    def _deduplicate(
        self, kept: KeptDocument, unit: _Unit, counts: collections.Counter[str]
    ) -> KeptDocument | None:
        """The document as the dedup stages leave it (rendered again if they changed
        it), or None if they drop it; `counts` follow the corpus files."""
        assert self.dedup is not None and kept.document is not None and kept.meta is not None
        document, meta = kept.document, kept.meta
        print_ = kept.fingerprint
        if print_ is None:  # (the workers make it whenever dedup is on)
            print_ = document_fingerprint(document, self.dedup.config)
        verdict = self.dedup.judge(document, meta.final_url or meta.url, print_)
        counts["dedup/documents"] += 1
        counts["dedup/paragraphs_seen"] += sum(
            p.fate is ParagraphFate.DUPLICATE for p in verdict.paragraphs
        )
        counts["dedup/paragraphs_foreign"] += sum(
            p.fate is ParagraphFate.FOREIGN for p in verdict.paragraphs
        )
        if verdict.drop is not None:
            counts["documents"] -= 1
            counts["words"] -= kept.words
            counts[f"dropped/{verdict.drop}"] += 1
            return None
        # ``mark`` mode's attributes, as the crawl writes them (pipelines/dedup.py)
        marks = document_marks(document, verdict, self.dedup.config, print_.word_counts)
        if not verdict.changed and not marks:
            return kept
        if marks:
            meta = dataclasses.replace(
                meta,
                lang_diff=marks.lang_diff,
                paragraph_lang_diffs=marks.paragraph_lang_diffs,
                paragraph_dups=marks.paragraph_dups,
            )
        changed = apply_verdict(document, verdict)
        counts["dedup/paragraphs_removed"] += len(document.good_paragraphs) - len(
            changed.good_paragraphs
        )
        rendered = render_document(
            changed,
            meta,
            kept.source_record_id,
            unit.warcinfo_id,
            self.options.settings,
            vertical=not self._vertical_after_dedup,
        )
        counts["words"] += rendered.words - kept.words
        # (the changed document is the one whose vertical is made: `_judge`)
        return dataclasses.replace(rendered, document=changed, meta=meta)

    # -- revisits ----------------------------------------------------------------------------

    def _revisit_units(self) -> Iterator[_Unit]:
        """Units of resolved revisits, a bounded number at a time (memory stays flat)."""
        self.unresolved_revisits = 0
        last_id = 0
        while True:
            pending = self.state.pending_revisits(after=last_id, limit=REVISITS_PER_UNIT)
            if not pending:
                return
            last_id = pending[-1][0]
            unit = self._revisit_unit(pending)
            if unit is not None:
                yield unit

    def _revisit_unit(self, pending: list[tuple[int, PendingRevisit]]) -> _Unit | None:
        state = self.state
        resolved: list[ResolvedRevisit] = []
        ids: list[int] = []
        unresolved = 0
        for row_id, revisit in pending:
            found = state.find_capture(revisit)
            if found is None:
                unresolved += 1
                continue
            path, offset, kind = found
            resolved.append(ResolvedRevisit(revisit, path, offset, kind))
            ids.append(row_id)
        self.run_counts[f"dropped/{ArchiveDrop.REVISIT_UNRESOLVED}"] += unresolved
        self.unresolved_revisits += unresolved
        if not resolved:
            return None
        done = sum(1 for u in state.units() if u.kind == "revisits" and u.done)
        key = f"revisits-{done + 1}"
        existed = state.unit(key) is not None
        prefix = state.add_unit(key, "revisits", "", 0, 0, key)
        if existed:
            self._restart(key, prefix)
        settings = self.options.settings
        warcinfo_id = new_record_id() if settings.outputs.warc else ""
        tasks: list[ChunkTask | RevisitTask] = [
            RevisitTask(key, index, tuple(resolved[i : i + REVISIT_BATCH]), settings, warcinfo_id)
            for index, i in enumerate(range(0, len(resolved), REVISIT_BATCH))
        ]
        unit = _Unit(key, "revisits", prefix, f"{len(resolved)} revisits", tasks, [0] * len(tasks))
        unit.revisit_ids = ids
        unit.warcinfo_id = warcinfo_id
        return unit

    # -- summary ---------------------------------------------------------------------------------

    @staticmethod
    def _dropped(counts: collections.Counter[str] | dict[str, int]) -> dict[str, int]:
        return {
            k.split("/", 1)[1]: v for k, v in sorted(counts.items()) if k.startswith("dropped/")
        }

    def _summary(self) -> dict[str, Any]:
        state = self.state
        total: collections.Counter[str] = collections.Counter()
        damage: list[dict[str, Any]] = []
        inputs: list[dict[str, Any]] = []
        files: dict[str, list[str]] = {"prevertical": [], "vertical": [], "warc": []}
        for unit in state.units():
            if not unit.done or unit.stats is None:
                continue
            counts = unit.stats.get("counts", {})
            total.update(counts)
            damage.extend(unit.stats.get("damage", []))
            if unit.kind == "input":
                inputs.append({"path": unit.path, "documents": counts.get("documents", 0)})
            for path in state.files(unit.key):
                if not path.exists():
                    continue
                if path.name.endswith(".cdxj"):
                    continue
                kind = (
                    "warc"
                    if path.name.endswith((".warc.gz", ".warc.wet.gz"))
                    else "vertical"
                    if path.name.endswith(".vert")
                    else "prevertical"
                )
                files[kind].append(path.name)
        unresolved = self.unresolved_revisits
        dropped = self._dropped(total)
        if unresolved:
            dropped[str(ArchiveDrop.REVISIT_UNRESOLVED)] = unresolved
        records = {
            k.split("/", 1)[1]: v for k, v in sorted(total.items()) if k.startswith("records/")
        }
        return {
            "output": str(self.out),
            "inputs": inputs,
            "documents": total.get("documents", 0),
            "words": total.get("words", 0),
            "pages_html": total.get("pages/html", 0),
            "records": records,
            "dropped": dropped,
            "revisits": {
                "resolved": total.get("revisits/resolved", 0),
                "unresolved": unresolved,
            },
            "dedup": {
                k.split("/", 1)[1]: v for k, v in sorted(total.items()) if k.startswith("dedup/")
            },
            "damaged_records": damage,
            "failed_tasks": self.failed_tasks,
            "files": files,
            "this_run": {
                "engine": self.engine.name,
                "workers": self.engine.workers,
                "units_processed": len(self.processed_units),
                "units_skipped": len(self.skipped_units),
                "documents": self.run_counts.get("documents", 0),
                "seconds": round(time.monotonic() - self.started, 3),
                # the main process's share bounds what more workers can give (it writes)
                "main_cpu_seconds": round(time.process_time() - self.started_cpu, 3),
                "worker_cpu_seconds": round(self.worker_cpu, 3),
            },
        }


class _UnitOutput:
    """The output files of one unit; each is recorded in the state before it is written."""

    def __init__(
        self, unit: _Unit, options: ProcessOptions, state: ProcessState, out: Path
    ) -> None:
        settings = options.settings
        self.unit = unit
        self.state = state
        self.recorded: set[Path] = set()
        self.warc: WarcWriter | None = None
        if settings.outputs.warc:
            self.warc = WarcWriter(
                WarcConfig(
                    out,
                    prefix=unit.prefix,
                    max_bytes=settings.outputs.max_file_bytes,
                    info=CrawlInfo(
                        profile_name=options.profile_name,
                        robots=RobotsPolicy.IGNORE,
                        description=f"clean text reprocessed from {unit.description}",
                    ),
                    paragraph_metadata=settings.outputs.warc_metadata,
                )
            )
        self.verticals: list[VerticalWriter] = []
        self.prevertical: VerticalWriter | None = None
        self.vertical: VerticalWriter | None = None
        config = settings.prevertical_config(out, unit.prefix)
        if config is not None:
            self.prevertical = VerticalWriter(config)
        config = settings.vertical_config(out, unit.prefix)
        if config is not None:
            self.vertical = VerticalWriter(config)

    def _note(self, paths: Iterator[Path | None]) -> None:
        for path in paths:
            if path is not None and path not in self.recorded:
                self.recorded.add(path)
                self.state.add_file(self.unit.key, path)

    def _watch(self, writer: WarcWriter | VerticalWriter) -> Iterator[Path | None]:
        yield writer.current_path
        yield from writer.files
        if isinstance(writer, WarcWriter):
            # conversion records go to the text WARC (*.warc.wet.gz) beside the WARC
            yield writer.current_text_path
            yield from writer.text_files
            yield from writer.index_files

    def note_files(self) -> None:
        for writer in (self.warc, self.prevertical, self.vertical):
            if writer is not None:
                self._note(self._watch(writer))

    def write(self, kept: KeptDocument) -> None:
        """Append what a worker rendered (every file records itself in `note_files`)."""
        if self.warc is not None and kept.warc_records is not None:
            self.warc.append_text_records(kept.warc_records, warcinfo_id=self.unit.warcinfo_id)
        if self.prevertical is not None:
            self.prevertical.write_formatted(kept.prevertical_text)
        if self.vertical is not None:
            self.vertical.write_formatted(kept.vertical_text)

    def close(self) -> None:
        for writer in (self.warc, self.prevertical, self.vertical):
            if writer is not None:
                writer.close()
                self._note(self._watch(writer))


@dataclass(slots=True)
class _Judged:
    """A task result past the document filter and the dedup verdict, to write."""

    result: TaskResult
    kept: list[KeptDocument]
    counts: collections.Counter[str]
    #: The vertical texts of `kept`, being tokenised in a worker (`_Runner._judge`).
    vertical: Future[VerticalBatchResult] | None = None

    def ready(self) -> bool:
        return self.vertical is None or self.vertical.done()


def _url(kept: KeptDocument) -> str:
    meta = kept.meta
    return "" if meta is None else meta.final_url or meta.url


def _stem(path: Path) -> str:
    name = path.name
    for suffix in (".gz", ".warc", ".arc"):
        name = name.removesuffix(suffix)
    return safe_name_part(name) or "archive"


def _write_json(path: Path, data: dict[str, Any]) -> None:
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(temporary, path)
