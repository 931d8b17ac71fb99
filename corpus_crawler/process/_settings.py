"""What a reprocessing run does with each page, read once (from a crawl profile or defaults)."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from pathlib import Path

from ..config import ExtractConfig
from ..dedup import DedupConfig
from ..profile import Profile
from ..vertical import VerticalConfig, VerticalFormat

__all__ = ["ArchiveDrop", "OutputChoice", "ProcessSettings"]


#: Input is cut into byte ranges of about this size, one task each.
DEFAULT_CHUNK_BYTES = 16 * 1024 * 1024


class ArchiveDrop(enum.Enum):
    """Why a capture in an archive yields no page, beyond `DropReason` (which covers pages)."""

    #: Not a 2xx response (a live crawl never passes these to extraction either).
    HTTP_STATUS = "http-status"
    #: A response record without an HTTP status line and headers (dns:, whois:, ...).
    NO_HTTP_HEADERS = "no-http-headers"
    #: A revisit whose earlier capture is in none of the inputs processed into this folder.
    REVISIT_UNRESOLVED = "revisit-unresolved"
    #: The record could not be read (corrupt gzip, torn or truncated record).
    DAMAGED_RECORD = "damaged-record"
    #: The dedup hook (`DocumentFilter`) dropped the document.
    DUPLICATE = "duplicate"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, slots=True)
class OutputChoice:
    """Which corpus files to write (the same switches a crawl profile's `output` has)."""

    prevertical: bool = True
    vertical: bool = False
    vertical_sentences: bool = False
    #: A WARC of ``conversion`` records (clean text), each referring to its source record.
    warc: bool = True
    warc_metadata: bool = False
    keep_all_paragraphs: bool = False
    max_file_bytes: int = 1_000_000_000


@dataclass(frozen=True, slots=True)
class ProcessSettings:
    """Everything a worker needs to turn a record into a document; sent with each task."""

    extract: ExtractConfig = field(default_factory=ExtractConfig)
    min_words: int = 0
    #: Decoded bodies larger than this are dropped as too-large (the crawl's size cap).
    max_page_bytes: int = 10 * 1024 * 1024
    page_timeout: float = 30.0
    outputs: OutputChoice = field(default_factory=OutputChoice)
    #: Send every kept `Document` back whole (a `DocumentFilter` needs its paragraphs).
    #: Off, workers send the formatted corpus text and a one-paragraph document with the
    #: same clean text: unpickling hundreds of `Paragraph`s per page would make the
    #: main process, which writes every file, the bottleneck of `-j N`.
    full_documents: bool = False
    #: The dedup stages' settings, for the fingerprint each kept document gets in the
    #: worker (`_dedup.document_fingerprint`); None: no fingerprints.
    dedup: DedupConfig | None = None

    @classmethod
    def from_profile(cls, profile: Profile) -> ProcessSettings:
        """The settings a crawl with `profile` used, so reprocessing its WARCs matches it."""
        extraction, output = profile.extraction, profile.output
        return cls(
            extract=extraction.extract_config(profile.limits.max_page_bytes),
            min_words=extraction.min_words,
            max_page_bytes=profile.limits.max_page_bytes,
            page_timeout=extraction.page_timeout,
            outputs=OutputChoice(
                prevertical=output.prevertical.enabled,
                vertical=output.vertical.enabled,
                vertical_sentences=output.vertical.sentences,
                warc=output.warc.enabled and output.warc.conversion_records,
                warc_metadata=output.warc.enabled and output.warc.metadata_records,
                keep_all_paragraphs=output.keep_all_paragraphs,
                max_file_bytes=min(
                    output.prevertical.max_file_bytes,
                    output.vertical.max_file_bytes,
                    output.warc.max_file_bytes,
                ),
            ),
        )

    def vertical_config(self, directory: Path, prefix: str) -> VerticalConfig | None:
        if not self.outputs.vertical:
            return None
        return VerticalConfig(
            directory,
            format=VerticalFormat.VERTICAL,
            prefix=prefix,
            max_bytes=self.outputs.max_file_bytes,
            all_paragraphs=self.outputs.keep_all_paragraphs,
            sentences=self.outputs.vertical_sentences,
        )

    def prevertical_config(self, directory: Path, prefix: str) -> VerticalConfig | None:
        if not self.outputs.prevertical:
            return None
        return VerticalConfig(
            directory,
            format=VerticalFormat.PREVERTICAL,
            prefix=prefix,
            max_bytes=self.outputs.max_file_bytes,
            all_paragraphs=self.outputs.keep_all_paragraphs,
        )
