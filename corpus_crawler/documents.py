"""Kept documents for NLP pipelines: JSON Lines and Parquet.

Usage, from the one writer path of a crawl::

    recover_documents(directory)                 # finish files left by a crash
    with JsonlWriter(DocumentsConfig(directory)) as out:
        out.write(document_record(document, meta, warc=WarcLocation(file, record_id)))

One record per kept document (`document_record`), the same in both formats:
``id``, ``url`` (requested), ``final_url``, ``title``, ``crawl_date`` and
``last_modified`` (UTC), ``published`` (the date the page declares, `pagedate`),
``language``, ``language_confidence``, ``lang_diff``, ``declared_encoding`` and
``encoding`` (used), ``extractor``, ``chars``,
``text`` (the paragraphs below, one per line), ``paragraphs`` (each with
``text``, ``class``, ``cf_class``, ``heading``, ``langdiff``, ``dup``), ``ip``, and
``warc_file`` / ``warc_record_id`` of the response record the text came from.

The paragraphs and text are exactly those of the prevertical written for the
same document (`vertical.selected_paragraphs`): good paragraphs only, or
every paragraph when ``all_paragraphs``; lines cleaned the same way.

Files are crash-safe like the other outputs: ``*.open`` while written,
renamed when closed, rotated by size. JSONL is written one line per document
(gzip: one member per document), so `recover_documents` keeps every complete
line of a crashed file. Parquet (`ParquetWriter`, needs pyarrow) buffers
`DocumentsConfig.row_group_rows` documents per row group under the fixed
`parquet_schema`; a Parquet file without its footer cannot be read, so a
crashed one is quarantined and its documents are recovered from the JSONL
written beside it (`jsonl_to_parquet`).
"""

from __future__ import annotations

import gzip
import json
import logging
import zlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._files import (
    Clock,
    Recovered,
    RecoveryAction,
    RotatingFile,
    as_utc,
    gzip_member_ends,
    recover_files,
    safe_name_part,
)
from .config import ConfigError
from .model import Document, ParagraphClass
from .vertical import DocMeta, paragraph_dup, paragraph_lang_diff, selected_paragraphs

if TYPE_CHECKING:
    import pyarrow

__all__ = [
    "DocumentsConfig",
    "JsonlWriter",
    "ParquetWriter",
    "WarcLocation",
    "document_record",
    "jsonl_to_parquet",
    "parquet_schema",
    "read_jsonl",
    "recover_documents",
]

logger = logging.getLogger(__name__)

#: The fields of every record, in order (JSON keys and Parquet columns).
FIELDS: tuple[str, ...] = (
    "id",
    "url",
    "final_url",
    "title",
    "crawl_date",
    "last_modified",
    "published",
    "language",
    "language_confidence",
    "lang_diff",
    "declared_encoding",
    "encoding",
    "extractor",
    "chars",
    "text",
    "paragraphs",
    "ip",
    "warc_file",
    "warc_record_id",
)


@dataclass(frozen=True, slots=True)
class WarcLocation:
    """Where the capture a document came from is archived."""

    file: str
    record_id: str


@dataclass(frozen=True, slots=True)
class DocumentsConfig:
    directory: Path
    prefix: str = "corpus"
    #: A file is closed once it holds this many bytes (checked after each document or
    #: row group).
    max_bytes: int = 1_000_000_000
    hostname: str = ""
    timestamp_digits: int = 17
    #: JSONL only: gzip, one member per document.
    gzip: bool = False
    #: Parquet only: documents per row group (memory held before a write).
    row_group_rows: int = 1000
    fsync: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "directory", Path(self.directory))
        for name in ("max_bytes", "row_group_rows"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ConfigError(f"{name} must be a whole number > 0, got {value!r}")
        if self.timestamp_digits not in (14, 17):
            raise ConfigError(f"timestamp_digits must be 14 or 17, got {self.timestamp_digits!r}")
        if not self.prefix or safe_name_part(self.prefix) != self.prefix:
            raise ConfigError(
                f"prefix {self.prefix!r} must be non-empty and use only letters, digits, "
                f"'.' and '-': try {safe_name_part(self.prefix) or 'corpus'!r}"
            )


# --- records ------------------------------------------------------------------------------


def _iso(moment: datetime | str | None) -> str | None:
    if moment is None:
        return None
    if isinstance(moment, str):
        from email.utils import parsedate_to_datetime

        try:
            moment = parsedate_to_datetime(moment)
        except (TypeError, ValueError, IndexError):
            return None
    return as_utc(moment).isoformat(timespec="seconds").replace("+00:00", "Z")


def document_record(
    document: Document,
    meta: DocMeta,
    *,
    warc: WarcLocation | None = None,
    all_paragraphs: bool = False,
) -> dict[str, Any] | None:
    """The record of one document (plain JSON data), or None if it has nothing to keep.

    None exactly when `vertical.format_document` writes nothing for it, so the
    documents files and the prevertical hold the same documents.
    """
    if document.drop_reason is not None:
        return None
    chosen = selected_paragraphs(document, all_paragraphs)
    good = ["\n".join(lines) for _, p, lines in chosen if p.final_class is ParagraphClass.GOOD]
    if not good:
        return None
    paragraphs = [
        {
            "text": "\n".join(lines),
            "class": str(paragraph.final_class),
            "cf_class": str(paragraph.cf_class),
            "heading": paragraph.heading,
            "langdiff": paragraph_lang_diff(meta, index),
            "dup": paragraph_dup(meta, index),
        }
        for index, paragraph, lines in chosen
    ]
    text = "\n".join(good)
    record: dict[str, Any] = {
        "id": meta.doc_id,
        "url": meta.url,
        "final_url": meta.final_url or document.url or meta.url,
        "title": document.title,
        "crawl_date": _iso(meta.crawl_date),
        "last_modified": _iso(meta.last_modified),
        "published": document.published,
        "language": document.language,
        "language_confidence": document.language_confidence,
        "lang_diff": meta.lang_diff,
        "declared_encoding": meta.declared_encoding or document.declared_encoding,
        "encoding": meta.encoding or document.encoding,
        "extractor": document.extractor,
        "chars": len(text),
        "text": text,
        "paragraphs": paragraphs,
        "ip": meta.ip or None,
        "warc_file": warc.file if warc else None,
        "warc_record_id": warc.record_id if warc else None,
    }
    return record


# --- JSONL --------------------------------------------------------------------------------


class JsonlWriter:
    """Appends records to rotating ``*.jsonl[.gz]`` files. One thread only."""

    def __init__(self, config: DocumentsConfig, *, clock: Clock | None = None) -> None:
        self._config = config
        self.written = 0
        self._file = RotatingFile.for_config(
            config, extension=".jsonl.gz" if config.gzip else ".jsonl", clock=clock
        )

    @property
    def files(self) -> tuple[Path, ...]:
        return self._file.closed_paths

    @property
    def current_path(self) -> Path | None:
        """The final name of the file being written, if one is open."""
        return self._file.final_path

    def write(self, record: Mapping[str, Any]) -> None:
        data = (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
        if self._config.gzip:
            compressor = zlib.compressobj(6, zlib.DEFLATED, zlib.MAX_WBITS | 16)
            data = compressor.compress(data) + compressor.flush()
        self._file.write(data)
        self.written += 1
        self._file.rotate_if_full()

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> JsonlWriter:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def read_jsonl(path: Path | str) -> Iterator[dict[str, Any]]:
    """The records of a ``*.jsonl[.gz]`` file."""
    path = Path(path)
    opener: Any = gzip.open if path.name.removesuffix(".open").endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                yield json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{number}: not a JSON record ({exc.msg})") from None


# --- Parquet ------------------------------------------------------------------------------


def _pyarrow() -> Any:
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError:
        raise ConfigError(
            "Parquet output needs pyarrow: pip install 'corpus-crawler[parquet]'"
            " (or pyarrow), or turn output.documents.parquet off"
        ) from None
    return pyarrow


def parquet_schema() -> pyarrow.Schema:
    """The fixed schema of every Parquet documents file (`FIELDS` order)."""
    pa = _pyarrow()
    timestamp = pa.timestamp("s", tz="UTC")
    paragraph = pa.struct(
        [
            ("text", pa.string()),
            ("class", pa.string()),
            ("cf_class", pa.string()),
            ("heading", pa.bool_()),
            ("langdiff", pa.float64()),
            ("dup", pa.float64()),
        ]
    )
    schema: pyarrow.Schema = pa.schema(
        [
            pa.field("id", pa.string(), nullable=False),
            ("url", pa.string()),
            ("final_url", pa.string()),
            ("title", pa.string()),
            ("crawl_date", timestamp),
            ("last_modified", timestamp),
            ("published", pa.date32()),
            ("language", pa.string()),
            ("language_confidence", pa.float64()),
            ("lang_diff", pa.float64()),
            ("declared_encoding", pa.string()),
            ("encoding", pa.string()),
            ("extractor", pa.string()),
            ("chars", pa.int64()),
            ("text", pa.string()),
            ("paragraphs", pa.list_(paragraph)),
            ("ip", pa.string()),
            ("warc_file", pa.string()),
            ("warc_record_id", pa.string()),
        ]
    )
    return schema


def _parquet_row(record: Mapping[str, Any]) -> dict[str, Any]:
    row = dict(record)
    for name in ("crawl_date", "last_modified"):
        value = row.get(name)
        if isinstance(value, str):
            row[name] = datetime.fromisoformat(value.replace("Z", "+00:00"))
    published = row.get("published")
    if isinstance(published, str):
        row["published"] = date.fromisoformat(published)
    return row


class ParquetWriter:
    """Writes records to rotating ``*.parquet`` files in row groups. One thread only."""

    def __init__(self, config: DocumentsConfig, *, clock: Clock | None = None) -> None:
        self._pa = _pyarrow()
        self._config = config
        self._schema = parquet_schema()
        self._rows: list[dict[str, Any]] = []
        self._writer: Any = None
        self.written = 0
        # RotatingFile names, creates and renames the file; pyarrow writes into its handle.
        self._file = RotatingFile.for_config(config, extension=".parquet", clock=clock)

    @property
    def files(self) -> tuple[Path, ...]:
        return self._file.closed_paths

    def write(self, record: Mapping[str, Any]) -> None:
        self._rows.append(_parquet_row(record))
        self.written += 1
        if len(self._rows) >= self._config.row_group_rows:
            self._flush_row_group()

    def _flush_row_group(self) -> None:
        if not self._rows:
            return
        table = self._pa.Table.from_pylist(self._rows, schema=self._schema)
        self._rows = []
        if self._writer is None:
            self._writer = self._pa.parquet.ParquetWriter(
                _RotatingSink(self._file), self._schema, compression="zstd"
            )
        self._writer.write_table(table, row_group_size=len(table))
        if self._file.size >= self._config.max_bytes:
            self._finish_file()

    def _finish_file(self) -> None:
        if self._writer is not None:
            self._writer.close()  # writes the footer through the sink
            self._writer = None
        self._file.close()

    def close(self) -> None:
        self._flush_row_group()
        self._finish_file()

    def __enter__(self) -> ParquetWriter:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class _RotatingSink:
    """A write-only file object over a `RotatingFile`, for pyarrow's ParquetWriter."""

    closed = False

    def __init__(self, file: RotatingFile) -> None:
        self._file = file
        file.ensure_open()

    def write(self, data: bytes) -> int:
        data = bytes(data)
        self._file.write(data)
        return len(data)

    def tell(self) -> int:
        return self._file.size

    def flush(self) -> None:
        pass

    def close(self) -> None:
        self.closed = True

    def writable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False


def jsonl_to_parquet(sources: Iterable[Path | str], target: Path | str) -> int:
    """Write the records of JSONL files to one Parquet file; returns how many."""
    pa = _pyarrow()
    schema = parquet_schema()
    target = Path(target)
    temporary = target.with_name(target.name + ".open")
    count = 0
    with pa.parquet.ParquetWriter(temporary, schema, compression="zstd") as writer:
        rows: list[dict[str, Any]] = []
        for source in sources:
            for record in read_jsonl(source):
                rows.append(_parquet_row(record))
                if len(rows) >= 1000:
                    writer.write_table(pa.Table.from_pylist(rows, schema=schema))
                    count, rows = count + len(rows), []
        if rows:
            writer.write_table(pa.Table.from_pylist(rows, schema=schema))
            count += len(rows)
    temporary.replace(target)
    return count


# --- recovery -----------------------------------------------------------------------------


def recover_documents(directory: Path | str) -> list[Recovered]:
    """Finish ``*.jsonl[.gz].open`` files (cut after the last whole record) and quarantine
    ``*.parquet.open`` files (unreadable without their footer; the JSONL holds their
    documents when both were written)."""
    directory = Path(directory)
    results = recover_files(directory, (".jsonl", ".jsonl.gz"), _valid_jsonl_prefix)
    parquet = recover_files(directory, (".parquet",), lambda _path: (0, 0))
    for recovered in parquet:
        if recovered.action is not RecoveryAction.QUARANTINED:
            continue  # an empty file, removed
        logger.warning(
            "a Parquet file was left unfinished by a crash and quarantined (%s); its"
            " documents are in the JSONL of the same crawl: convert them with"
            " corpus_crawler.documents.jsonl_to_parquet",
            recovered.destination,
        )
    return results + parquet


def _valid_jsonl_prefix(path: Path) -> tuple[int, int]:
    end = units = 0
    with open(path, "rb") as handle:
        if path.name.removesuffix(".open").endswith(".gz"):
            for member_end, tail in gzip_member_ends(handle):
                if not tail.endswith(b"\n"):
                    break
                end, units = member_end, units + 1
        else:
            offset = 0
            for line in handle:
                offset += len(line)
                if not line.endswith(b"\n"):
                    break
                end, units = offset, units + 1
    return end, units
