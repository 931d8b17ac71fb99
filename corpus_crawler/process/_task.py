"""The work of one task, in a worker process: archive records in, kept documents out.

A task is a byte range of one input (`ChunkTask`) or a batch of revisits whose
earlier captures were found in the inputs (`RevisitTask`). Each page goes
through `pipelines.worker.process_page`, the very function a live crawl's
extraction workers run (extract(), the vertical formatting, the per-page time
cap), and then through the crawl's keep/drop rules (`page_verdict`), so a
reprocessed page gives exactly the document the crawl gave.

Tasks and results are plain frozen data, so they travel to a local process
pool or to Dask workers on other machines alike. No file is written here: the
main process writes every output, in input order (see `_runner`).
"""

from __future__ import annotations

import collections
import dataclasses
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin

from warcio.archiveiterator import ArchiveIterator
from warcio.recordloader import ArcWarcRecord
from warcio.timeutils import iso_date_to_datetime

from pipelines.items import document_id
from pipelines.worker import PageTask, VerticalTask, WorkerConfig, process_page

from ..cut_records import cut_short
from ..mediatype import HTML_TYPES, is_html, parse_content_type
from ..model import Document, DropReason
from ..vertical import DocMeta, VerticalFormat, format_document
from ..warc import document_records
from ._archive import ArchiveKind, RecordDamage, record_header, scan_records
from ._dedup import document_fingerprint

if TYPE_CHECKING:
    from ..dedup import DocumentFingerprint
from ._settings import ArchiveDrop, ProcessSettings

__all__ = [
    "Capture",
    "ChunkTask",
    "KeptDocument",
    "PendingRevisit",
    "ResolvedRevisit",
    "RevisitTask",
    "TaskResult",
    "VerticalBatch",
    "VerticalBatchResult",
    "format_verticals",
    "page_verdict",
    "render_document",
    "run_task",
    "vertical_text",
]

#: Damage reports kept per task (all are counted).
MAX_DAMAGE_REPORTS = 50
#: Redirect targets remembered per task to give a page the URL first requested.
MAX_REDIRECTS = 10_000


@dataclass(frozen=True, slots=True)
class ChunkTask:
    unit: str
    index: int
    path: str
    kind: ArchiveKind
    start: int
    #: None: to the end of the file.
    end: int | None
    settings: ProcessSettings
    #: The record id of the unit's text WARC's warcinfo record ("": no WARC output).
    warcinfo_id: str = ""


@dataclass(frozen=True, slots=True)
class Capture:
    """A 2xx HTML response, indexed so that revisits can find their payload."""

    offset: int
    record_id: str
    payload_digest: str
    uri: str
    date: str


@dataclass(frozen=True, slots=True)
class PendingRevisit:
    """A revisit record, kept until its earlier capture is found."""

    offset: int
    uri: str
    date: str
    ip: str
    record_id: str
    refers_to: str
    payload_digest: str
    refers_to_uri: str
    refers_to_date: str
    #: The revisit's own HTTP facts, if it stored headers (0 / "" if not).
    status: int
    media_type: str
    charset: str
    last_modified: str


@dataclass(frozen=True, slots=True)
class ResolvedRevisit:
    revisit: PendingRevisit
    original_path: str
    original_offset: int
    original_kind: ArchiveKind


@dataclass(frozen=True, slots=True)
class RevisitTask:
    unit: str
    index: int
    revisits: tuple[ResolvedRevisit, ...]
    settings: ProcessSettings
    warcinfo_id: str = ""


@dataclass(frozen=True, slots=True)
class VerticalBatch:
    """A task result's documents the dedup stages kept, to tokenise for the vertical, as
    they left them (paragraphs removed or marked). With dedup on the chunk tasks leave
    the vertical out: tokenising is most of the formatting's CPU (~1.5-3 ms a page), and
    a duplicate is never written (the crawl does the same: `VerticalFormatPipeline`)."""

    #: (paragraphs as plain tuples: they pickle in C, `VerticalTask`)
    documents: tuple[VerticalTask, ...]
    settings: ProcessSettings


@dataclass(frozen=True, slots=True)
class VerticalBatchResult:
    #: `vertical_text` of each document of the batch, in its order.
    texts: tuple[str | None, ...]
    cpu_seconds: float = 0.0


def format_verticals(batch: VerticalBatch) -> VerticalBatchResult:
    """The function the pool (or Dask) runs for a `VerticalBatch`."""
    started = time.process_time()
    texts = tuple(
        vertical_text(task.document(), task.meta, batch.settings) for task in batch.documents
    )
    return VerticalBatchResult(texts, time.process_time() - started)


@dataclass(frozen=True, slots=True)
class KeptDocument:
    """A kept document as the bytes and text of each output, rendered in the worker so
    that the main process, which writes every file of every worker, only appends."""

    #: Prevertical text (None if the prevertical is off).
    prevertical_text: str | None
    #: Tokenised vertical text (None if the vertical is off, or with dedup on until the
    #: dedup verdict: `VerticalBatch`).
    vertical_text: str | None
    #: Its conversion (and metadata) records as gzip members, built for the unit's text
    #: WARC (`ChunkTask.warcinfo_id`); None if the WARC is off.
    warc_records: bytes | None
    words: int
    #: The record the text comes from (``WARC-Refers-To`` of the conversion record).
    source_record_id: str
    #: The whole document and its metadata, only with `ProcessSettings.full_documents`
    #: (a `DocumentFilter` reads them, and renders again what it changes).
    document: Document | None = None
    meta: DocMeta | None = None
    #: The dedup stages' fingerprint of the document (`ProcessSettings.dedup`), if any.
    fingerprint: DocumentFingerprint | None = None


@dataclass(slots=True)
class TaskResult:
    unit: str
    index: int
    documents: list[KeptDocument] = field(default_factory=list)
    counts: collections.Counter[str] = field(default_factory=collections.Counter)
    damage: list[RecordDamage] = field(default_factory=list)
    captures: list[Capture] = field(default_factory=list)
    revisits: list[PendingRevisit] = field(default_factory=list)
    cpu_seconds: float = 0.0

    def drop(self, reason: DropReason | ArchiveDrop) -> None:
        self.counts[f"dropped/{reason}"] += 1


def run_task(task: ChunkTask | RevisitTask) -> TaskResult:
    """The function the pool (or Dask) runs."""
    started = time.process_time()
    result = _run_chunk(task) if isinstance(task, ChunkTask) else _run_revisits(task)
    result.cpu_seconds = time.process_time() - started
    return result


# -- the keep/drop rules of a crawl ------------------------------------------------------------


#: WARC-Truncated value -> the live crawl's drop reason (pipelines.capture).
_TRUNCATION_DROPS = {"time": DropReason.TIMEOUT, "disconnect": DropReason.DISCONNECTED}


def page_verdict(document: Document, min_words: int) -> DropReason | None:
    """Why a crawl would drop this page, or None to keep it (pipelines/extract.py's rules)."""
    if document.drop_reason is not None:
        return document.drop_reason
    good = document.good_paragraphs
    if not good:
        return DropReason.NO_GOOD_PARAGRAPH
    if sum(p.word_count for p in good) < min_words:
        return DropReason.TOO_SHORT
    return None


def _worker_config(settings: ProcessSettings) -> WorkerConfig:
    outputs = settings.outputs
    # the corpus texts are formatted by `render_document`, not by process_page
    return WorkerConfig(
        extract=settings.extract,
        page_timeout=settings.page_timeout,
        all_paragraphs=outputs.keep_all_paragraphs or outputs.warc_metadata,
        vertical=None,
    )


@dataclass(frozen=True, slots=True)
class _Page:
    url: str
    request_url: str
    body: bytes
    http_charset: str | None
    date: str
    ip: str
    last_modified: str | None
    record_id: str


def _process(
    page: _Page,
    settings: ProcessSettings,
    config: WorkerConfig,
    warcinfo_id: str,
    out: TaskResult,
) -> None:
    out.counts["pages/html"] += 1
    out.counts["bytes/raw"] += len(page.body)
    meta = DocMeta(
        doc_id=document_id(page.url),
        crawl_date=_parse_date(page.date),  # type: ignore[arg-type]
        url=page.request_url,
        final_url=page.url,
        last_modified=page.last_modified,
        ip=page.ip,
    )
    task = PageTask(
        url=page.url,
        body=page.body,
        http_charset=page.http_charset,
        links=False,
        meta=None,
        # the archive's date: a page dated after it was fetched declares no real date
        fetched=meta.crawl_date.date() if meta.crawl_date else None,
    )
    try:
        result = process_page(task, config)
    except Exception:  # a bad page is a counted drop, never a lost task
        out.drop(DropReason.EXTRACTOR_ERROR)
        return
    document = result.document
    assert document is not None  # text extraction is always on here
    reason = page_verdict(document, settings.min_words)
    if reason is not None:
        out.drop(reason)
        return
    try:
        rendered = render_document(
            # with dedup on, only what its verdict keeps is tokenised (`VerticalBatch`)
            document,
            meta,
            page.record_id,
            warcinfo_id,
            settings,
            vertical=settings.dedup is None,
        )
    except Exception:  # as in process_page: a page that cannot be formatted is a drop
        out.drop(DropReason.EXTRACTOR_ERROR)
        return
    out.counts["documents"] += 1
    out.counts["words"] += rendered.words
    if settings.full_documents:
        fingerprint = None
        if settings.dedup is not None:
            fingerprint = document_fingerprint(document, settings.dedup)
        rendered = dataclasses.replace(
            rendered, document=document, meta=meta, fingerprint=fingerprint
        )
    out.documents.append(rendered)


def render_document(
    document: Document,
    meta: DocMeta,
    source_record_id: str,
    warcinfo_id: str,
    settings: ProcessSettings,
    *,
    vertical: bool = True,
) -> KeptDocument:
    """What `VerticalWriter.write` and `WarcWriter.write_document` would write for a
    kept document, ready to append (the main process calls it too, for a document
    the dedup stages changed). `vertical` False: the vertical text is left out (None),
    to be made later (`format_verticals`)."""
    outputs = settings.outputs
    prevertical: str | None = None
    if outputs.prevertical:
        prevertical = format_document(
            document,
            meta,
            format=VerticalFormat.PREVERTICAL,
            all_paragraphs=outputs.keep_all_paragraphs,
        )
    vertical_doc: str | None = None
    if outputs.vertical and vertical:
        vertical_doc = vertical_text(document, meta, settings)
    records: bytes | None = None
    if outputs.warc and document.kept:
        records, _, _ = document_records(
            document,
            refers_to=source_record_id,
            url=meta.final_url or meta.url,
            date=meta.crawl_date or datetime.now(timezone.utc),
            warcinfo_id=warcinfo_id,
            paragraph_metadata=outputs.warc_metadata,
        )
    words = sum(p.word_count for p in document.good_paragraphs)
    return KeptDocument(prevertical, vertical_doc, records, words, source_record_id)


def vertical_text(document: Document, meta: DocMeta, settings: ProcessSettings) -> str | None:
    """The tokenised vertical text of a kept document (`VerticalWriter.write`'s)."""
    outputs = settings.outputs
    return format_document(
        document,
        meta,
        format=VerticalFormat.VERTICAL,
        all_paragraphs=outputs.keep_all_paragraphs,
        sentences=outputs.vertical_sentences,
    )


def _parse_date(value: str) -> datetime | None:
    if not value:
        return None
    try:
        return iso_date_to_datetime(value)
    except (ValueError, TypeError):
        return None


def _target_uri(record: ArcWarcRecord) -> str:
    # WARC/1.0 writers sometimes wrap the URI in angle brackets.
    return record_header(record, "WARC-Target-URI").strip().strip("<>")


def _read_body(record: ArcWarcRecord, cap: int) -> bytes:
    # content_stream() undoes chunking and the Content-Encoding (gzip, deflate, br).
    stream = record.content_stream()
    chunks: list[bytes] = []
    size = 0
    while size <= cap:
        chunk = stream.read(min(1 << 16, cap + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


class _ChunkReader:
    def __init__(self, task: ChunkTask, out: TaskResult) -> None:
        self.task = task
        self.settings = task.settings
        self.config = _worker_config(task.settings)
        self.out = out
        #: redirect target -> the URL first requested in its chain
        self.redirects: collections.OrderedDict[str, str] = collections.OrderedDict()
        #: Offset of the last response record, which on_record counted (a document or
        #: a drop): damage found in it later is reported, not counted again.
        self._settled: int | None = None

    def on_damage(self, damage: RecordDamage) -> None:
        self.out.counts["records/damaged"] += 1
        if damage.offset != self._settled:
            self.out.drop(ArchiveDrop.DAMAGED_RECORD)
        # else: a response record cut short, already counted as the drop it ended in
        if len(self.out.damage) < MAX_DAMAGE_REPORTS:
            self.out.damage.append(damage)

    def on_record(self, offset: int, record: ArcWarcRecord) -> None:
        out = self.out
        self._settled = None
        record_type = str(record.rec_type or "unknown")
        out.counts[f"records/{record_type}"] += 1
        if record_header(record, "WARC-Truncated"):
            out.counts["records/truncated"] += 1
        if record_type == "response":
            self._response(offset, record)
        elif record_type == "revisit":
            self._revisit(offset, record)

    def _response(self, offset: int, record: ArcWarcRecord) -> None:
        out = self.out
        self._settled = offset
        if record.format == "warc" and not record_header(record, "Content-Length"):
            out.drop(ArchiveDrop.DAMAGED_RECORD)  # cut inside its header block
            return
        http = record.http_headers
        url = _target_uri(record)
        if http is None or not url.startswith(("http://", "https://")):
            out.drop(ArchiveDrop.NO_HTTP_HEADERS)
            return
        status = _status(http)
        if status == 0:
            # warcio found no status line: an ARC record of a non-HTTP payload, say
            out.drop(ArchiveDrop.NO_HTTP_HEADERS)
            return
        truncated = record_header(record, "WARC-Truncated")
        if truncated:
            # a prefix cut at the size cap, the download timeout or the server's close:
            # the live crawl archives it and drops it the same way, never as a document
            out.drop(_TRUNCATION_DROPS.get(truncated, DropReason.TOO_LARGE))
            return
        if not 200 <= status < 300:
            if 300 <= status < 400:
                self._remember_redirect(url, http.get_header("Location") or "")
            out.drop(ArchiveDrop.HTTP_STATUS)
            return
        media, charset = parse_content_type(http.get_header("Content-Type") or "")
        maybe_html = media in HTML_TYPES or media in ("", "application/octet-stream")
        if not maybe_html:
            out.drop(DropReason.NOT_HTML)
            return
        cap = self.settings.max_page_bytes
        body = _read_body(record, cap)
        if len(body) > cap:
            out.drop(DropReason.TOO_LARGE)
            return
        if not is_html(media, body):
            out.drop(DropReason.NOT_HTML)
            return
        if cut_short(record) is not None:
            # the page's end is missing: its text would be a cut page (scan_records
            # reports the damage once the iterator has moved past it)
            out.drop(ArchiveDrop.DAMAGED_RECORD)
            return
        record_id = record_header(record, "WARC-Record-ID")
        date = record_header(record, "WARC-Date")
        out.captures.append(
            Capture(offset, record_id, record_header(record, "WARC-Payload-Digest"), url, date)
        )
        page = _Page(
            url=url,
            request_url=self.redirects.pop(url, url),
            body=body,
            http_charset=charset,
            date=date,
            ip=record_header(record, "WARC-IP-Address"),
            last_modified=http.get_header("Last-Modified"),
            record_id=record_id,
        )
        _process(page, self.settings, self.config, self.task.warcinfo_id, out)

    def _remember_redirect(self, url: str, location: str) -> None:
        location = location.strip()
        if not location:
            return
        target = urljoin(url, location).partition("#")[0]
        self.redirects[target] = self.redirects.pop(url, url)
        while len(self.redirects) > MAX_REDIRECTS:
            self.redirects.popitem(last=False)

    def _revisit(self, offset: int, record: ArcWarcRecord) -> None:
        out = self.out
        http = record.http_headers
        status = _status(http) if http is not None else 0
        media, charset = (
            parse_content_type(http.get_header("Content-Type") or "")
            if http is not None
            else ("", None)
        )
        # 304: the server said "not modified", so the page is the earlier capture's.
        if status and not (200 <= status < 300 or status == 304):
            out.drop(ArchiveDrop.HTTP_STATUS)
            return
        if media and media not in HTML_TYPES and media != "application/octet-stream":
            out.drop(DropReason.NOT_HTML)
            return
        out.counts["revisits/pending"] += 1
        out.revisits.append(
            PendingRevisit(
                offset=offset,
                uri=_target_uri(record),
                date=record_header(record, "WARC-Date"),
                ip=record_header(record, "WARC-IP-Address"),
                record_id=record_header(record, "WARC-Record-ID"),
                refers_to=record_header(record, "WARC-Refers-To"),
                payload_digest=record_header(record, "WARC-Payload-Digest"),
                refers_to_uri=record_header(record, "WARC-Refers-To-Target-URI").strip("<>"),
                refers_to_date=record_header(record, "WARC-Refers-To-Date"),
                status=status,
                media_type=media,
                charset=charset or "",
                last_modified=(http.get_header("Last-Modified") or "") if http is not None else "",
            )
        )


def _status(http: Any) -> int:
    try:
        return int(http.get_statuscode() or 0)
    except (TypeError, ValueError):
        return 0


def _run_chunk(task: ChunkTask) -> TaskResult:
    out = TaskResult(task.unit, task.index)
    reader = _ChunkReader(task, out)
    scan_records(
        Path(task.path), task.kind, task.start, task.end, reader.on_record, reader.on_damage
    )
    return out


def _run_revisits(task: RevisitTask) -> TaskResult:
    out = TaskResult(task.unit, task.index)
    settings = task.settings
    config = _worker_config(settings)
    for resolved in task.revisits:
        try:
            page = _revisited_page(resolved, settings.max_page_bytes)
        except Exception as exc:  # the original became unreadable: a counted drop
            out.counts["records/damaged"] += 1
            out.drop(ArchiveDrop.DAMAGED_RECORD)
            if len(out.damage) < MAX_DAMAGE_REPORTS:
                message = f"{resolved.original_path}: {type(exc).__name__}: {exc}"
                out.damage.append(RecordDamage(resolved.original_offset, message, None))
            continue
        if isinstance(page, (DropReason, ArchiveDrop)):
            out.drop(page)
            continue
        out.counts["revisits/resolved"] += 1
        _process(page, settings, config, task.warcinfo_id, out)
    return out


def _revisited_page(resolved: ResolvedRevisit, cap: int) -> _Page | DropReason | ArchiveDrop:
    revisit = resolved.revisit
    with open(resolved.original_path, "rb") as handle:
        handle.seek(resolved.original_offset)
        iterator = ArchiveIterator(
            handle, arc2warc=not resolved.original_kind.splittable, ensure_http_headers=False
        )
        record = next(iter(iterator))
        http = record.http_headers
        if record.rec_type != "response" or http is None:
            return ArchiveDrop.DAMAGED_RECORD
        media, charset = parse_content_type(http.get_header("Content-Type") or "")
        if revisit.media_type:
            media, charset = revisit.media_type, revisit.charset or None
        body = _read_body(record, cap)
        if len(body) > cap:
            return DropReason.TOO_LARGE
        if not is_html(media, body):
            return DropReason.NOT_HTML
        return _Page(
            url=revisit.uri,
            request_url=revisit.uri,
            body=body,
            http_charset=charset,
            date=revisit.date,
            ip=revisit.ip,
            last_modified=revisit.last_modified or http.get_header("Last-Modified"),
            record_id=revisit.record_id,
        )
