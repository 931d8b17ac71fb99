"""Corpus files: SpiderLing-style prevertical and tokenised vertical.

Usage, from the one writer path of a crawl::

    recover(directory)                            # finish files left by a crash
    with VerticalWriter(VerticalConfig(directory, format=VerticalFormat.VERTICAL)) as out:
        meta = DocMeta(doc_id="42", crawl_date=fetched_at, url=request_url,
                       final_url=response_url, last_modified=headers.get("Last-Modified"))
        if not out.write(document, meta):
            ...                                   # nothing to write: count it

Both formats wrap each document in ``<doc ...>`` ... ``</doc>`` and each
paragraph in ``<p class=".." cfclass=".." heading="0|1">`` ... ``</p>``:

* **prevertical** (``*.prevert``): the paragraph's text on its own line(s);
* **vertical** (``*.vert``): one token per line (`corpus_crawler.tokenize`), a
  ``<g/>`` line before a token that had no space before it, and optionally
  ``<s>`` ... ``</s>`` around sentences.

Every ``<doc>`` carries all of `DOC_ATTRIBUTES` in that order (an unknown value
is an empty string) so that corpus indexers see one uniform structure.
``length`` follows SpiderLing: the clean text's length in characters as a
bucket (``0-100``, ``100-500``, ``500-1k``, ``1k-5k``, ``5k-10k``,
``10k-100k``, ``100k-1M``, ``1M+``); ``chars`` has the exact count.
``crawl_date`` and ``last_modified`` are UTC ``YYYY-MM-DD HH:MM`` as in
SpiderLing. SpiderLing's language-difference scores are written when a later
stage computed them (`DocMeta.lang_diff`, `DocMeta.paragraph_lang_diffs`):
``lang_diff`` as the last ``<doc>`` attribute and ``langdiff`` as the last
``<p>`` attribute, with SpiderLing's names, so tools built for SpiderLing
corpora read them as they are (`OPTIONAL_DOC_ATTRIBUTES`,
`OPTIONAL_PARAGRAPH_ATTRIBUTES`); the dedup stage's ``mark`` mode adds onion-style
``dup`` (share of the paragraph's word n-grams seen before) after ``langdiff``
(`DocMeta.paragraph_dups`). ``class``/``cfclass`` are jusText's class names (``good``,
``neargood``, ``short``, ``bad``).

Text and attribute values are XML-escaped (``& < > "``), control characters
are removed, tabs and runs of whitespace become one space, blank lines go.
Only good paragraphs are written unless `VerticalConfig.all_paragraphs`; a
document with no good paragraph (or with a drop reason) is not written.

Files rotate by size and are crash-safe like the WARC files (``*.open`` while
written, one ``write`` per document; gzip output has one gzip member per
document); `read_vertical` parses them back.
"""

from __future__ import annotations

import enum
import gzip
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from email.utils import parsedate_to_datetime
from pathlib import Path

from . import faults
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
from .model import Document, Paragraph, ParagraphClass
from .tokenize import Tokenizer, split_sentences, tokenize

__all__ = [
    "DOC_ATTRIBUTES",
    "LENGTH_BUCKETS",
    "OPTIONAL_DOC_ATTRIBUTES",
    "OPTIONAL_PARAGRAPH_ATTRIBUTES",
    "PARAGRAPH_ATTRIBUTES",
    "DocMeta",
    "Recovered",
    "RecoveryAction",
    "VerticalConfig",
    "VerticalFormat",
    "VerticalWriter",
    "clean_lines",
    "doc_attributes",
    "escape",
    "format_document",
    "length_bucket",
    "mark_attributes",
    "paragraph_attributes",
    "paragraph_dup",
    "paragraph_lang_diff",
    "read_vertical",
    "recover",
    "selected_paragraphs",
    "unescape",
]

#: The attributes of every ``<doc>``, in output order.
DOC_ATTRIBUTES: tuple[str, ...] = (
    "id",
    "title",
    "length",
    "chars",
    "crawl_date",
    "last_modified",
    "published",
    "lang",
    "lang_conf",
    "ip",
    "url",
    "final_url",
    "file_type",
    "enc_meta",
    "enc_chared",
    "extractor",
)

#: The attributes of every ``<p>``, in output order.
PARAGRAPH_ATTRIBUTES: tuple[str, ...] = ("class", "cfclass", "heading")

#: ``<doc>`` attributes written after `DOC_ATTRIBUTES` when their value is known:
#: SpiderLing's ``lang_diff``, the document's language-difference score.
OPTIONAL_DOC_ATTRIBUTES: tuple[str, ...] = ("lang_diff",)

#: ``<p>`` attributes written after `PARAGRAPH_ATTRIBUTES` when known: SpiderLing's
#: ``langdiff``, the paragraph's language-difference score, and onion-style ``dup``, the
#: share of the paragraph's word n-grams seen before in the corpus (dedup ``mark`` mode).
OPTIONAL_PARAGRAPH_ATTRIBUTES: tuple[str, ...] = ("langdiff", "dup")

#: SpiderLing's document length buckets: (lower bound in characters, label).
LENGTH_BUCKETS: tuple[tuple[int, str], ...] = (
    (1_000_000, "1M+"),
    (100_000, "100k-1M"),
    (10_000, "10k-100k"),
    (5_000, "5k-10k"),
    (1_000, "1k-5k"),
    (500, "500-1k"),
    (100, "100-500"),
    (0, "0-100"),
)


class VerticalFormat(enum.Enum):
    PREVERTICAL = "prevert"
    VERTICAL = "vert"

    def __str__(self) -> str:
        return self.value

    @property
    def extension(self) -> str:
        return f".{self.value}"


@dataclass(frozen=True, slots=True)
class DocMeta:
    """Crawl facts about a document that `Document` does not hold."""

    doc_id: str
    crawl_date: datetime
    #: The URL that was requested (before redirects).
    url: str
    #: The URL of the response; default: ``Document.url``, else `url`.
    final_url: str = ""
    #: A datetime or an HTTP date string (``Last-Modified``); unparsable values are left out.
    last_modified: datetime | str | None = None
    ip: str = ""
    file_type: str = "html"
    #: Override ``Document.declared_encoding`` (``enc_meta``) when set.
    declared_encoding: str | None = None
    #: Override ``Document.encoding`` (``enc_chared``) when set.
    encoding: str | None = None
    #: SpiderLing's ``lang_diff`` of the document, when a language stage computed it.
    lang_diff: float | None = None
    #: SpiderLing's ``langdiff`` of each paragraph, aligned with ``Document.paragraphs``
    #: (None, or a shorter tuple, where unknown).
    paragraph_lang_diffs: tuple[float | None, ...] = ()
    #: onion-style ``dup`` of each paragraph (share of its n-grams seen before), aligned
    #: like `paragraph_lang_diffs`; written by the dedup stage in ``mark`` mode.
    paragraph_dups: tuple[float | None, ...] = ()


@dataclass(frozen=True, slots=True)
class VerticalConfig:
    directory: Path
    format: VerticalFormat = VerticalFormat.PREVERTICAL
    prefix: str = "corpus"
    #: A file is closed once it holds this many bytes (checked after each document).
    max_bytes: int = 1_000_000_000
    hostname: str = ""
    timestamp_digits: int = 17
    gzip: bool = False
    #: Write every paragraph with its class, not only the good ones.
    all_paragraphs: bool = False
    #: Vertical only: wrap sentences in ``<s>`` ... ``</s>``.
    sentences: bool = True
    fsync: bool = False
    #: Vertical only: write a Manatee registry and a CWB encode script beside each
    #: finished file (`corpus_crawler.corpustools`).
    corpus_tools: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "directory", Path(self.directory))
        if not isinstance(self.format, VerticalFormat):
            try:
                object.__setattr__(self, "format", VerticalFormat(self.format))
            except ValueError:
                choices = ", ".join(f.value for f in VerticalFormat)
                raise ConfigError(
                    f"unknown vertical format {self.format!r}: use one of {choices}"
                ) from None
        if isinstance(self.max_bytes, bool) or not isinstance(self.max_bytes, int):
            raise ConfigError(f"max_bytes must be a whole number of bytes, got {self.max_bytes!r}")
        if self.max_bytes <= 0:
            raise ConfigError(f"max_bytes must be > 0, got {self.max_bytes}")
        if self.timestamp_digits not in (14, 17):
            raise ConfigError(f"timestamp_digits must be 14 or 17, got {self.timestamp_digits!r}")
        if not self.prefix or safe_name_part(self.prefix) != self.prefix:
            raise ConfigError(
                f"prefix {self.prefix!r} must be non-empty and use only letters, digits, "
                f"'.' and '-': try {safe_name_part(self.prefix) or 'corpus'!r}"
            )
        if self.hostname and safe_name_part(self.hostname) != self.hostname:
            raise ConfigError(
                f"hostname {self.hostname!r} must use only letters, digits, '.' and '-': "
                f"try {safe_name_part(self.hostname)!r}"
            )

    @property
    def extension(self) -> str:
        return self.format.extension + (".gz" if self.gzip else "")


# --- text hygiene -----------------------------------------------------------------

_LINE_BREAKS = re.compile("\r\n|[\r\x85\u2028\u2029]")
# C0 and C1 controls (tab and newline are handled before), noncharacters, lone surrogates.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ufdd0-\ufdef\ufffe\uffff\ud800-\udfff]")
_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}
_ESCAPE = re.compile('[&<>"]')
_ENTITIES = {"amp": "&", "lt": "<", "gt": ">", "quot": '"', "apos": "'"}
_ENTITY = re.compile(r"&(amp|lt|gt|quot|apos);")


def escape(text: str) -> str:
    """XML-escape ``& < > "``."""
    return _ESCAPE.sub(lambda m: _ESCAPES[m.group()], text)


def unescape(text: str) -> str:
    return _ENTITY.sub(lambda m: _ENTITIES[m.group(1)], text)


def clean_lines(text: str) -> list[str]:
    """`text` as non-blank lines without control characters, whitespace runs as one space."""
    text = _LINE_BREAKS.sub("\n", text)
    text = _CONTROL.sub(lambda m: " " if m.group() in "\x0b\x0c\x1c\x1d\x1e\x1f" else "", text)
    lines = (" ".join(line.split()) for line in text.split("\n"))
    return [line for line in lines if line]


# --- formatting ---------------------------------------------------------------------


def length_bucket(chars: int) -> str:
    for lower, label in LENGTH_BUCKETS:
        if chars >= lower:
            return label
    return LENGTH_BUCKETS[-1][1]


def _date(value: datetime | str | None) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        try:
            value = parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return ""
    return as_utc(value).strftime("%Y-%m-%d %H:%M")


def doc_attributes(document: Document, meta: DocMeta, clean_text: str) -> dict[str, str]:
    """The ``<doc>`` attributes (unescaped), keys in `DOC_ATTRIBUTES` order."""
    confidence = document.language_confidence
    declared = meta.declared_encoding or document.declared_encoding
    values: dict[str, object] = {
        "id": meta.doc_id,
        "title": document.title,
        "length": length_bucket(len(clean_text)),
        "chars": len(clean_text),
        "crawl_date": _date(meta.crawl_date),
        "last_modified": _date(meta.last_modified),
        "published": document.published,
        "lang": document.language,
        "lang_conf": "" if confidence is None else f"{confidence:.2f}",
        "ip": meta.ip,
        "url": meta.url,
        "final_url": meta.final_url or document.url or meta.url,
        "file_type": meta.file_type,
        "enc_meta": declared,
        "enc_chared": meta.encoding or document.encoding,
        "extractor": document.extractor,
    }
    attributes = {
        name: " ".join(clean_lines("" if values[name] is None else str(values[name])))
        for name in DOC_ATTRIBUTES
    }
    if meta.lang_diff is not None:
        attributes["lang_diff"] = _score(meta.lang_diff)
    return attributes


def _score(value: float) -> str:
    return f"{value:.2f}"


def paragraph_lang_diff(meta: DocMeta, index: int) -> float | None:
    """The ``langdiff`` of paragraph `index` of the document, if known."""
    diffs = meta.paragraph_lang_diffs
    return diffs[index] if index < len(diffs) else None


def paragraph_dup(meta: DocMeta, index: int) -> float | None:
    """The ``dup`` mark of paragraph `index` of the document, if any."""
    dups = meta.paragraph_dups
    return dups[index] if index < len(dups) else None


def _tag(name: str, attributes: dict[str, str]) -> str:
    body = " ".join(f'{key}="{escape(value)}"' for key, value in attributes.items())
    return f"<{name} {body}>"


def paragraph_attributes(
    paragraph: Paragraph, lang_diff: float | None = None, dup: float | None = None
) -> dict[str, str]:
    """The ``<p>`` attributes (unescaped), `PARAGRAPH_ATTRIBUTES` order, then ``langdiff``
    and ``dup`` when known."""
    attributes = {
        "class": str(paragraph.final_class),
        "cfclass": str(paragraph.cf_class),
        "heading": "1" if paragraph.heading else "0",
    }
    attributes.update(mark_attributes(lang_diff, dup))
    return attributes


def mark_attributes(lang_diff: float | None, dup: float | None) -> dict[str, str]:
    """The optional ``<p>`` attributes (`OPTIONAL_PARAGRAPH_ATTRIBUTES`) that are known."""
    marks = {}
    if lang_diff is not None:
        marks["langdiff"] = _score(lang_diff)
    if dup is not None:
        marks["dup"] = _score(dup)
    return marks


def selected_paragraphs(
    document: Document, all_paragraphs: bool = False
) -> list[tuple[int, Paragraph, list[str]]]:
    """(index in the document, paragraph, its clean lines) of the paragraphs a corpus file
    holds: the good ones, or every non-blank one with `all_paragraphs`. Shared by the
    (pre)vertical and the JSONL/Parquet documents so they hold the same text."""
    chosen: list[tuple[int, Paragraph, list[str]]] = []
    for index, paragraph in enumerate(document.paragraphs):
        if not (paragraph.final_class is ParagraphClass.GOOD or all_paragraphs):
            continue
        lines = clean_lines(paragraph.text)
        if lines:
            chosen.append((index, paragraph, lines))
    return chosen


def format_document(
    document: Document,
    meta: DocMeta,
    *,
    format: VerticalFormat = VerticalFormat.PREVERTICAL,
    all_paragraphs: bool = False,
    sentences: bool = True,
    tokenizer: Tokenizer | None = None,
) -> str | None:
    """One document in the given format, or None when it has nothing to write."""
    if document.drop_reason is not None:
        return None
    chosen = selected_paragraphs(document, all_paragraphs)
    good_text = ["\n".join(lines) for _, p, lines in chosen if p.final_class is ParagraphClass.GOOD]
    if not good_text:
        return None
    out = [_tag("doc", doc_attributes(document, meta, "\n".join(good_text)))]
    for index, paragraph, lines in chosen:
        attributes = paragraph_attributes(
            paragraph, paragraph_lang_diff(meta, index), paragraph_dup(meta, index)
        )
        out.append(_tag("p", attributes))
        if format is VerticalFormat.PREVERTICAL:
            out.extend(escape(line) for line in lines)
        else:
            _append_tokens(out, " ".join(lines), sentences, tokenizer)
        out.append("</p>")
    out.append("</doc>")
    return "\n".join(out) + "\n"


def _append_tokens(out: list[str], text: str, sentences: bool, tokenizer: Tokenizer | None) -> None:
    tokens = tokenizer.tokenize(text) if tokenizer else tokenize(text)
    if sentences:
        groups = tokenizer.split_sentences(tokens) if tokenizer else split_sentences(tokens)
    else:
        groups = [tokens]
    for group in groups:
        if sentences:
            out.append("<s>")
        for token in group:
            # <g/> comes right before its glued token, even at a sentence start.
            if token.glue:
                out.append("<g/>")
            out.append(escape(token.text))
        if sentences:
            out.append("</s>")


# --- writer ---------------------------------------------------------------------------


class VerticalWriter:
    """Appends documents to rotating prevertical or vertical files. One thread only."""

    def __init__(
        self,
        config: VerticalConfig,
        *,
        clock: Clock | None = None,
        tokenizer: Tokenizer | None = None,
    ) -> None:
        self._config = config
        self._tokenizer = tokenizer
        self.written = 0
        #: Documents not written because they had no good paragraph (or a drop reason).
        self.skipped = 0
        #: How many of the closed files have had their corpus tool files written.
        self._finished = 0
        self._file = RotatingFile.for_config(config, extension=config.extension, clock=clock)

    @property
    def files(self) -> tuple[Path, ...]:
        return self._file.closed_paths

    @property
    def current_path(self) -> Path | None:
        return self._file.final_path

    def write(self, document: Document, meta: DocMeta) -> bool:
        """Append one document; False (and counted in `skipped`) if it had nothing to write."""
        text = format_document(
            document,
            meta,
            format=self._config.format,
            all_paragraphs=self._config.all_paragraphs,
            sentences=self._config.sentences,
            tokenizer=self._tokenizer,
        )
        return self.write_formatted(text)

    def write_formatted(self, text: str | None) -> bool:
        """Append a document `format_document` already formatted (in a worker process,
        say, so tokenising does not run on the writer thread); None counts as skipped."""
        if text is None:
            self.skipped += 1
            return False
        data = text.encode("utf-8")
        if self._config.gzip:
            compressor = zlib.compressobj(6, zlib.DEFLATED, zlib.MAX_WBITS | 16)
            data = compressor.compress(data) + compressor.flush()
        if faults.due("vertical.torn_document"):
            self._file.write(data[: len(data) // 2])  # flushed: a torn tail on disk
            faults.kill("vertical.torn_document")
        self._file.write(data)
        self.written += 1
        self._file.rotate_if_full()
        self._finish_closed_files()
        return True

    def close(self) -> None:
        self._file.close()
        self._finish_closed_files()

    def _finish_closed_files(self) -> None:
        closed = self._file.closed_paths
        if len(closed) == self._finished:
            return
        for path in closed[self._finished :]:
            if self._config.corpus_tools and self._config.format is VerticalFormat.VERTICAL:
                from .corpustools import write_corpus_tool_files

                write_corpus_tool_files(path)
        self._finished = len(closed)

    def __enter__(self) -> VerticalWriter:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


# --- reading and recovery -------------------------------------------------------------

_ATTRIBUTE = re.compile(r'([\w.:-]+)="([^"]*)"')

ParsedParagraph = tuple[dict[str, str], str]
ParsedDocument = tuple[dict[str, str], list[ParsedParagraph]]


def read_vertical(path: Path | str, *, tokenized: bool | None = None) -> Iterator[ParsedDocument]:
    """Documents of a (pre)vertical file as (doc attributes, [(p attributes, text)]).

    Prevertical paragraph lines are joined with newlines; vertical tokens are
    joined with one space, or none after ``<g/>``. `tokenized` defaults to
    whether the file name ends in ``.vert`` (optionally ``.gz``/``.open``).
    """
    path = Path(path)
    name = path.name.removesuffix(".open")
    if tokenized is None:
        tokenized = name.removesuffix(".gz").endswith(".vert")
    opener = gzip.open if name.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", newline="\n") as handle:
        doc: dict[str, str] | None = None
        paragraphs: list[ParsedParagraph] = []
        p_attrs: dict[str, str] | None = None
        lines: list[str] = []
        glue = False
        for number, raw in enumerate(handle, 1):
            line = raw.rstrip("\n")
            if line.startswith("<doc ") or line == "<doc>":
                doc, paragraphs = _attributes(line), []
            elif line == "</doc>":
                if doc is None:
                    raise ValueError(f"{path}:{number}: </doc> without <doc>")
                yield doc, paragraphs
                doc = None
            elif line.startswith("<p ") or line == "<p>":
                p_attrs, lines, glue = _attributes(line), [], False
            elif line == "</p>":
                if p_attrs is None:
                    raise ValueError(f"{path}:{number}: </p> without <p>")
                paragraphs.append((p_attrs, "".join(lines) if tokenized else "\n".join(lines)))
                p_attrs = None
            elif tokenized and line in ("<s>", "</s>"):
                continue
            elif tokenized and line == "<g/>":
                glue = True
            elif p_attrs is not None:
                text = unescape(line)
                if tokenized and lines and not glue:
                    text = " " + text
                lines.append(text)
                glue = False
            else:
                raise ValueError(f"{path}:{number}: text outside <p>: {line[:60]!r}")


def _attributes(tag_line: str) -> dict[str, str]:
    return {key: unescape(value) for key, value in _ATTRIBUTE.findall(tag_line)}


def recover(directory: Path | str) -> list[Recovered]:
    """Finish the ``*.prevert[.gz].open`` and ``*.vert[.gz].open`` files in `directory`.

    Each is cut after its last complete document (``</doc>`` line; for gzip,
    the last whole member) and renamed; one with no complete document goes to
    ``quarantine/``. Returns (and logs) what was done.
    """
    extensions = tuple(f.extension + gz for f in VerticalFormat for gz in ("", ".gz"))
    return recover_files(Path(directory), extensions, _valid_vertical_prefix)


def _valid_vertical_prefix(path: Path) -> tuple[int, int]:
    end = units = 0
    with open(path, "rb") as handle:
        if path.name.removesuffix(".open").endswith(".gz"):
            for member_end, tail in gzip_member_ends(handle):
                if not tail.endswith(b"</doc>\n"):
                    break
                end, units = member_end, units + 1
        else:
            offset = 0
            for line in handle:
                offset += len(line)
                if line == b"</doc>\n":
                    end, units = offset, units + 1
    return end, units
