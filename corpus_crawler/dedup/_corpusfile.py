"""Streaming reader and writer of (pre)vertical files for the offline dedup.

Reads ours and SpiderLing's: ``<doc ...>`` ... ``</doc>`` around ``<p ...>`` ...
``</p>`` paragraphs; inside a paragraph, running text (prevertical) or one
token per line, possibly with tab-separated columns of which the first is the
word (vertical), with structure lines such as ``<s>``, ``</s>`` and ``<g/>``.
Every line is kept as read, so a document written back is byte for byte what
came in, minus the paragraphs removed, plus the attributes of marked ones.
Lines outside ``<p>`` inside a document are kept and never judged; lines
outside any document (corpus headers) are copied through.
"""

from __future__ import annotations

import gzip
import io
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, cast

__all__ = ["Block", "CorpusDocument", "CorpusParagraph", "open_corpus_text", "read_corpus"]

_ENTITIES = (("&lt;", "<"), ("&gt;", ">"), ("&quot;", '"'), ("&apos;", "'"), ("&amp;", "&"))


def _unescape(text: str) -> str:
    for entity, char in _ENTITIES:
        text = text.replace(entity, char)
    return text


@dataclass
class CorpusParagraph:
    tag: str
    #: The lines between ``<p ...>`` and ``</p>`` as read (no newline).
    lines: list[str] = field(default_factory=list)
    closed: bool = False

    def text(self, tokenized: bool) -> str:
        words = []
        for line in self.lines:
            if line.startswith("<") and line.endswith(">"):
                continue
            words.append(_unescape(line.split("\t", 1)[0] if tokenized else line))
        return (" " if tokenized else "\n").join(words)


@dataclass
class CorpusDocument:
    tag: str
    #: Paragraphs and other lines, in file order.
    parts: list[CorpusParagraph | str] = field(default_factory=list)
    #: Line number of the ``<doc>`` tag (for messages).
    line: int = 0

    @property
    def paragraphs(self) -> list[CorpusParagraph]:
        return [part for part in self.parts if isinstance(part, CorpusParagraph)]

    def attribute(self, name: str) -> str | None:
        marker = f' {name}="'
        start = self.tag.find(marker)
        if start < 0:
            return None
        start += len(marker)
        end = self.tag.find('"', start)
        return _unescape(self.tag[start:end]) if end >= 0 else None


#: One item of a corpus file: a document, or a line outside any document.
Block = CorpusDocument | str


def open_corpus_text(path: Path) -> tuple[IO[bytes], io.TextIOWrapper]:
    """(the raw byte stream, for progress; the decoded text stream)."""
    raw = open(path, "rb")  # noqa: SIM115 - closed by the caller
    stream = cast(IO[bytes], gzip.GzipFile(fileobj=raw)) if path.name.endswith(".gz") else raw
    return raw, io.TextIOWrapper(stream, encoding="utf-8", errors="strict", newline="\n")


def read_corpus(lines: Iterator[str], source: str) -> Iterator[Block]:
    """Documents and loose lines of a corpus file; a broken structure is a ValueError
    naming the file and line."""
    document: CorpusDocument | None = None
    paragraph: CorpusParagraph | None = None
    number = 0
    for number, raw in enumerate(lines, 1):
        line = raw.rstrip("\n")
        if line.startswith("<doc ") or line == "<doc>":
            if document is not None:
                raise ValueError(f"{source}:{number}: <doc> inside a <doc> (line {document.line})")
            document = CorpusDocument(line, line=number)
        elif line == "</doc>":
            if document is None:
                raise ValueError(f"{source}:{number}: </doc> without <doc>")
            if paragraph is not None:
                raise ValueError(f"{source}:{number}: </doc> inside an open <p>")
            yield document
            document = None
        elif document is None:
            yield line
        elif line.startswith("<p ") or line == "<p>":
            if paragraph is not None:
                raise ValueError(f"{source}:{number}: <p> inside a <p>")
            paragraph = CorpusParagraph(line)
        elif line == "</p>":
            if paragraph is None:
                raise ValueError(f"{source}:{number}: </p> without <p>")
            paragraph.closed = True
            document.parts.append(paragraph)
            paragraph = None
        elif paragraph is not None:
            paragraph.lines.append(line)
        else:
            document.parts.append(line)
    if document is not None:
        raise ValueError(
            f"{source}:{number}: the file ends inside the <doc> of line {document.line}"
            " (a truncated file: recover it first, or cut it after its last </doc>)"
        )


def with_attribute(tag: str, name: str, value: str) -> str:
    """A ``<p ...>`` tag with the attribute set (XML-escaped): added at the end, or its
    value replaced where the tag has it already (SpiderLing's prevertical has
    ``langdiff`` on every paragraph; a second one would make the tag invalid)."""
    escaped = value.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")
    existing = re.search(rf'\s{re.escape(name)}="[^"]*"', tag)
    if existing is not None:
        return f'{tag[: existing.start()]} {name}="{escaped}"{tag[existing.end() :]}'
    return f'{tag[:-1].rstrip()} {name}="{escaped}">'


def format_document(
    document: CorpusDocument, drop: set[int], marks: dict[int, tuple[str, str]]
) -> str:
    """The document as lines again, without the paragraphs at indexes `drop` and with
    ``marks[index] = (attribute, value)`` added to those paragraphs' tags."""
    out = [document.tag]
    index = 0
    for part in document.parts:
        if isinstance(part, str):
            out.append(part)
            continue
        if index not in drop:
            mark = marks.get(index)
            out.append(with_attribute(part.tag, *mark) if mark else part.tag)
            out.extend(part.lines)
            out.append("</p>")
        index += 1
    out.append("</doc>")
    return "\n".join(out) + "\n"
