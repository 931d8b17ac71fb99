"""Reprocessing web archives: WARC/ARC files in, the corpus files of a crawl out.

    from corpus_crawler.process import LocalEngine, ProcessOptions, process_archives

    summary = process_archives(inputs, ProcessOptions(Path("out")), LocalEngine(workers=2))

The same `extract()`, language identification and keep/drop rules as a live
crawl (through `pipelines.worker.process_page`), the same prevertical,
vertical and conversion-WARC writers; in parallel (a local process pool or
Dask), resumable per input, with every dropped capture counted by reason.
`corpus-crawler process` is the command line (`corpus_crawler._cli_process`).

The crawl's dedup stages run with ``ProcessOptions(dedup=DedupConfig(...))``, in
archive order in the main process, committed with each input (`_dedup`); any other
keep/drop rule plugs in as a `DocumentFilter` (``ProcessOptions.document_filter``).
"""

from __future__ import annotations

from ._archive import ArchiveError, ArchiveKind, RecordDamage, next_record_start, sniff_kind
from ._engines import DaskEngine, Engine, LocalEngine, default_workers
from ._runner import (
    SUMMARY_NAME,
    DocumentFilter,
    ProcessError,
    ProcessOptions,
    ProcessSummary,
    collect_inputs,
    process_archives,
)
from ._settings import ArchiveDrop, OutputChoice, ProcessSettings
from ._task import page_verdict

__all__ = [
    "SUMMARY_NAME",
    "ArchiveDrop",
    "ArchiveError",
    "ArchiveKind",
    "DaskEngine",
    "DocumentFilter",
    "Engine",
    "LocalEngine",
    "OutputChoice",
    "ProcessError",
    "ProcessOptions",
    "ProcessSettings",
    "ProcessSummary",
    "RecordDamage",
    "collect_inputs",
    "default_workers",
    "next_record_start",
    "page_verdict",
    "process_archives",
    "sniff_kind",
]
