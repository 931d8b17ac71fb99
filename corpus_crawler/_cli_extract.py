"""`corpus-crawler extract PATH...`: the extractor on files, WARC files or standard input.

A WARC file (plain or gzip, recognised by its bytes, whatever its name) is read
with warcio and every HTML response record with a 2xx status is extracted with
the record's URL and HTTP charset. A gzip-compressed page (`page.html.gz`, as
archives and mirrors store them; recognised by its bytes too) is extracted as
`zcat` would print it. A page is read, and a gzip one decompressed, no further
than the extractor reads (`ExtractConfig.max_bytes`), so a huge file or a gzip
bomb costs no more than a large page.
Other input that is surely not a web page (PDF, images, archives, NUL bytes,
also inside a gzip file) is refused: counted as a ``not-html`` drop, named on
standard error, and never printed as text.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
import zlib
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, BinaryIO, TextIO

from ._cli_checks import url_argument_problem
from .config import EXTRACTORS, ConfigError, ExtractConfig, JustextParams, Preset
from .extract import extract
from .mediatype import HTML_TYPES, binary_signature, is_html, parse_content_type
from .model import Document, DropReason

FORMATS = ("text", "detailed", "json", "prevertical", "vertical", "html")
_HTML_SUFFIXES = {".html", ".htm", ".xhtml", ".shtml", ".php", ".asp", ".aspx", ".jsp"}
_WARC_SUFFIXES = {".warc", ".warc.gz"}
_GZIP_MAGIC = b"\x1f\x8b"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "extract",
        help="extract clean paragraphs from HTML or WARC files",
        description="Extract the main text of HTML pages: files, folders, WARC files (every"
        " HTML response record), or - for stdin.",
    )
    parser.add_argument(
        "paths",
        nargs="*",
        default=["-"],
        metavar="PATH",
        help="HTML files (plain or gzip-compressed: .html.gz), WARC files (.warc,"
        " .warc.gz), folders of them, or - for standard input (default)",
    )
    add_extractor_arguments(parser)
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default="text",
        help="text: good paragraphs; detailed: every paragraph with its"
        " classes and features; json: one JSON document per line;"
        " prevertical/vertical: corpus formats; html: declutter's cleaned HTML",
    )
    parser.add_argument(
        "--all-paragraphs",
        action="store_true",
        help="prevertical/vertical: keep bad paragraphs too, with their classes",
    )
    parser.add_argument(
        "--encoding", metavar="CHARSET", help="charset as an HTTP header would declare it"
    )
    parser.add_argument(
        "--url", help="the page's URL (recorded in json/vertical output; WARC records have theirs)"
    )
    parser.set_defaults(func=run)


def add_extractor_arguments(parser: argparse.ArgumentParser) -> None:
    """Options shared by `extract` and `evaluate`."""
    parser.add_argument("--extractor", choices=EXTRACTORS, default="justext")
    parser.add_argument(
        "--preset",
        choices=[p.value for p in Preset],
        default=Preset.SEED.value,
        help="seed: the algorithm of the specification (default); reference:"
        " output identical to jusText 3.0.2; language-independent: no stoplist;"
        " corpus: all running text of a page, comments and lists included, sidebars"
        " and footers left out (what a corpus wants, the crawl's default); article:"
        " the main article only; article-comments: the main article and its reader"
        " comments",
    )
    parser.add_argument(
        "--lang",
        default="auto",
        metavar="CODE|auto|none",
        help="stoplist language (ISO code or jusText name), 'auto' to detect"
        " per document (default), 'none' for no stoplist",
    )
    parser.add_argument("--stoplist", metavar="FILE", help="your own stoplist (text or YAML)")
    parser.add_argument(
        "--accept-lang",
        metavar="CODES",
        help="comma-separated languages to keep; others are dropped",
    )
    parser.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="override a jusText parameter, e.g. --param length_low=50",
    )


def config_from_args(args: argparse.Namespace) -> ExtractConfig:
    lang = None if args.lang.lower() in ("none", "") else args.lang
    if lang not in (None, "auto"):
        from .stoplists import resolve_language

        lang = resolve_language(lang)
    params = None
    if args.param:
        overrides: dict[str, Any] = {}
        for item in args.param:
            name, sep, value = item.partition("=")
            if not sep:
                raise ConfigError(f"--param {item!r}: write NAME=VALUE, e.g. length_low=50")
            overrides[name.strip()] = _parse_value(value.strip())
        base = JustextParams()
        if lang not in (None, "auto"):
            from .stoplists import load_language

            base = base.merged(load_language(lang).parameters, f"configs/languages/{lang}.yaml")
        params = base.merged(overrides, "--param")
    if args.stoplist:
        from .stoplists import load_stoplist_file

        # read once here: a missing or unreadable file is one line and exit 2, not a
        # warning with a traceback on every page
        load_stoplist_file(args.stoplist)
    accept = None
    if args.accept_lang:
        from .stoplists import accept_code

        accept = frozenset(accept_code(c.strip()) for c in args.accept_lang.split(",") if c.strip())
    return ExtractConfig(
        extractor=args.extractor,
        preset=Preset.parse(args.preset),
        language=lang,
        params=params,
        stoplist_path=args.stoplist,
        accept_languages=accept,
    ).checked()


def _parse_value(value: str) -> Any:
    lowered = value.lower()
    if lowered in ("true", "yes", "on"):
        return True
    if lowered in ("false", "no", "off"):
        return False
    for kind in (int, float):
        try:
            return kind(value)
        except ValueError:
            pass
    return value


@dataclass(frozen=True, slots=True)
class _Input:
    """One page to extract, or why there is none."""

    name: str
    data: bytes | None
    error: str | None = None
    #: The page's URL and HTTP charset (from a WARC record; else the command line's).
    url: str | None = None
    http_charset: str | None = None
    #: When the page was fetched (a WARC record's WARC-Date).
    fetched_at: datetime | None = None
    #: Not text: counted as a `not-html` drop and never extracted (binary is never
    #: printed as text).
    refused: str | None = None


def sniff(head: bytes) -> str | None:
    """What the leading bytes of an input are when it is not a web page, else None."""
    signature = binary_signature(head)
    if signature is not None:
        return signature.description
    sample = head[:4096]
    # UTF-16/32 pages start with a BOM; other NUL bytes mean binary data.
    if b"\x00" in sample and not sample.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "binary data (NUL bytes)"
    return None


def is_warc(head: bytes) -> bool:
    """True for the first bytes of a WARC file, plain or gzip-compressed (by content)."""
    if head.startswith(b"\x1f\x8b"):
        try:
            head = zlib.decompressobj(zlib.MAX_WBITS | 16).decompress(head, 16)
        except zlib.error:
            return False
    return head.startswith(b"WARC/")


#: What can be wrong in a gzip file once some of it has decompressed: the
#: summary's count for it, and the line that names the file on standard error.
GZIP_PROBLEMS = {
    "cut": ("gzip files cut short", "the gzip data is cut short: extracted as far as it goes"),
    "damaged": (
        "gzip files damaged",
        "the gzip data does not decompress past some point: extracted up to it",
    ),
    "trailing": (
        "gzip files with trailing bytes",
        "bytes that are no gzip member follow the data: ignored",
    ),
}
_CHUNK = 1 << 16


def gunzipped(stream: BinaryIO | _Rejoined, limit: int) -> tuple[bytes, str | None]:
    """The content of the gzip data `stream` holds, every member in turn as `zcat`
    reads them, at most `limit` + 1 bytes (one more than a reader of `limit` bytes
    needs, so that it can tell a page was cut; the stream is read no further than
    that takes); and what was wrong, a key of `GZIP_PROBLEMS`, if anything. Raises
    `zlib.error` when the data does not decompress before a byte of content."""
    out: list[bytes] = []
    size = 0
    problem = None
    inflater = zlib.decompressobj(zlib.MAX_WBITS | 16)
    pending = stream.read(_CHUNK)
    while size <= limit:
        if not pending:
            pending = stream.read(_CHUNK)
            if not pending:
                problem = "cut"  # the data ended inside a member
                break
        try:
            chunk = inflater.decompress(pending, limit + 1 - size)
        except zlib.error:
            if not size:
                raise
            problem = "damaged"  # keep what came before it
            break
        out.append(chunk)
        size += len(chunk)
        if not inflater.eof:
            pending = inflater.unconsumed_tail  # left over only when the limit is reached
            continue
        pending = inflater.unused_data
        while len(pending) < len(_GZIP_MAGIC):
            more = stream.read(_CHUNK)
            if not more:
                break
            pending += more
        if not pending:
            break  # the end of the last member: the data is whole
        if not pending.startswith(_GZIP_MAGIC):
            problem = "trailing"
            break
        inflater = zlib.decompressobj(zlib.MAX_WBITS | 16)
    return b"".join(out), problem


def _inputs(paths: Sequence[str], stats: Counter[str], limit: int) -> Iterator[_Input]:
    """Every input, folders expanded in sorted order, WARC files record by record,
    gzip-compressed pages decompressed up to `limit` bytes."""
    for name in paths:
        if name == "-":
            isatty = getattr(sys.stdin, "isatty", None)  # a stand-in stream may lack it
            if callable(isatty) and isatty():
                # `corpus-crawler extract` with no file waits on the keyboard: say so
                print(
                    "corpus-crawler extract: reading a page from standard input (end it with"
                    " Ctrl-D; give files or folders as arguments instead)",
                    file=sys.stderr,
                )
            yield from _from_stream("<stdin>", sys.stdin.buffer, stats, limit)
            continue
        path = Path(name)
        problem = url_argument_problem(name, "HTML and WARC files")
        if problem is not None:
            yield _Input(name, None, problem.removeprefix(f"{name}: "))
            continue
        if path.is_dir():
            files = sorted(p for p in path.rglob("*") if p.is_file() and _wanted(p))
            if not files:
                suffixes = ", ".join(sorted(_HTML_SUFFIXES | _WARC_SUFFIXES))
                yield _Input(
                    name, None, f"no HTML or WARC files ({suffixes}, and .html.gz) in folder"
                )
            for file in files:
                yield from _read(file, stats, limit)
        else:
            yield from _read(path, stats, limit)


def _wanted(path: Path) -> bool:
    name = path.name.lower()
    suffix = Path(name.removesuffix(".gz")).suffix
    return suffix in _HTML_SUFFIXES or name.endswith(tuple(_WARC_SUFFIXES))


def _read(path: Path, stats: Counter[str], limit: int) -> Iterator[_Input]:
    """A file's pages (`_from_stream`); a file that cannot be read is named with why."""
    try:
        with open(path, "rb") as handle:
            yield from _from_stream(str(path), handle, stats, limit)
    except OSError as exc:
        yield _Input(str(path), None, exc.strerror or str(exc))


class _Rejoined:
    """A stream whose first bytes were read to tell what it holds, served again in
    front of the rest: standard input cannot seek back to them. Only `read`, as
    `gunzipped` and warcio (which counts offsets itself then) read."""

    def __init__(self, head: bytes, rest: BinaryIO | None) -> None:
        self._head = head
        #: None: the head ended at the end of the input
        self._rest = rest

    def read(self, size: int | None = -1) -> bytes:
        if size is None:
            size = -1
        if not self._head:
            return b"" if self._rest is None else self._rest.read(size)
        if size < 0:
            data = self._head + (b"" if self._rest is None else self._rest.read())
            self._head = b""
            return data
        data, self._head = self._head[:size], self._head[size:]
        return data


#: The bytes read first to tell a WARC file, gzip data and a page apart.
_HEAD = 512


def _from_stream(name: str, stream: BinaryIO, stats: Counter[str], limit: int) -> Iterator[_Input]:
    """The pages of a file or of standard input, read in one pass: its WARC records
    (each payload read no further than `limit` + 1 bytes), or the page it holds,
    decompressed when it is gzip, read no further than `limit` + 1 bytes (the
    extractor reads `limit`: a larger page is cut as a crawl cuts a large response).
    A stream of gigabytes is never held whole. Raises OSError as reading does."""
    head = stream.read(_HEAD)
    # a short head is the end of the input; a terminal's Ctrl-D ends one read only,
    # and reading again would wait for more typing
    rest = stream if len(head) == _HEAD else None
    if is_warc(head):
        yield from _warc_records(name, _Rejoined(head, rest), stats, limit)
    elif head.startswith(_GZIP_MAGIC):
        yield _unpacked(name, _Rejoined(head, rest), stats, limit)
    elif rest is None:
        yield _judged(name, head)
    else:
        yield _judged(name, head + rest.read(max(0, limit + 1 - len(head))))


def _unpacked(name: str, stream: BinaryIO | _Rejoined, stats: Counter[str], limit: int) -> _Input:
    """The page a gzip stream holds, decompressed up to `limit` + 1 bytes, damage
    named; refused when nothing decompresses. Raises OSError as reading does."""
    try:
        data, problem = gunzipped(stream, limit)
    except zlib.error as exc:
        return _Input(name, b"", refused=f"gzip-compressed data that does not decompress ({exc})")
    stats["gzip-compressed pages"] += 1
    if problem is not None:
        count, line = GZIP_PROBLEMS[problem]
        stats[count] += 1
        print(f"corpus-crawler extract: {name}: {line}", file=sys.stderr)
    return _judged(name, data, ", gzip-compressed")


def _judged(name: str, data: bytes, packed: str = "") -> _Input:
    """A page to extract, or refused when its bytes are surely not a web page."""
    kind = sniff(data)
    if kind is not None:
        return _Input(name, data, refused=f"{kind}{packed}, not a web page")
    return _Input(name, data)


def _warc_records(
    name: str, stream: BinaryIO | _Rejoined, stats: Counter[str], limit: int
) -> Iterator[_Input]:
    """Each HTML response record of a WARC file, with its URL and HTTP charset, its
    payload read no further than `limit` + 1 bytes."""
    from warcio.archiveiterator import ArchiveIterator
    from warcio.exceptions import ArchiveLoadFailed

    from corpus_crawler.cut_records import cut_short

    html_records = 0
    try:
        for record in ArchiveIterator(stream):
            stats["warc records"] += 1
            if record.rec_headers.get_header("Content-Length") is None:
                # mandatory in WARC: without it the headers themselves were cut
                yield _Input(name, None, "a record without Content-Length: the file is damaged")
                return
            data = _html_payload(record, stats, limit)
            record_id = record.rec_headers.get_header("WARC-Record-ID") or ""
            problem = cut_short(record)
            if problem is not None:
                yield _Input(f"{name}#{record_id}", None, f"record cut short: {problem}")
                return
            if data is None:
                continue
            html_records += 1
            content_type = record.http_headers.get_header("Content-Type") or ""
            yield _Input(
                f"{name}#{record_id}",
                data,
                url=record.rec_headers.get_header("WARC-Target-URI"),
                http_charset=parse_content_type(content_type)[1],
                fetched_at=_warc_date(record.rec_headers.get_header("WARC-Date")),
            )
    except ArchiveLoadFailed as exc:
        yield _Input(name, None, f"not a readable WARC file past this point ({exc})")
        return
    if html_records == 0:
        yield _Input(
            name,
            None,
            f"a WARC file with no HTML response record ({stats['warc records']} records"
            " read): nothing to extract",
        )


def _html_payload(record: Any, stats: Counter[str], limit: int) -> bytes | None:
    """The decoded payload of a 2xx HTML response record, at most `limit` + 1 bytes
    (the rest is read past by `cut_short`), else None."""
    if record.rec_type != "response" or record.http_headers is None:
        return None
    media_type, _ = parse_content_type(record.http_headers.get_header("Content-Type") or "")
    status = record.http_headers.get_statuscode() or ""
    maybe_html = media_type in HTML_TYPES or media_type in ("", "application/octet-stream")
    if not maybe_html or not status.startswith("2"):
        stats["warc responses not HTML or not 2xx (skipped)"] += 1
        return None
    # content_stream() undoes chunking and Content-Encoding as a browser would
    data: bytes = record.content_stream().read(limit + 1)
    # the crawl's own test: a binary signature is never HTML, whatever the label says
    if not is_html(media_type, data):
        stats["warc responses not HTML or not 2xx (skipped)"] += 1
        return None
    return data


def _warc_date(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def run(args: argparse.Namespace) -> int:
    try:
        config = config_from_args(args)
    except ConfigError as exc:
        print(f"corpus-crawler extract: {exc}", file=sys.stderr)
        return 2
    out = sys.stdout
    failures = 0
    outcomes: Counter[str] = Counter()
    input_stats: Counter[str] = Counter()
    started = time.monotonic()
    last_report = started
    last_drop = ""
    for count, item in enumerate(_inputs(args.paths, input_stats, config.max_bytes), 1):
        name, data = item.name, item.data
        if data is None:
            print(f"corpus-crawler extract: {name}: {item.error}", file=sys.stderr)
            failures += 1
            continue
        url = item.url or args.url or None
        if item.refused is not None:
            print(f"corpus-crawler extract: {name}: refused: {item.refused}", file=sys.stderr)
            doc = Document(
                paragraphs=(),
                url=url,
                raw_size=len(data),
                drop_reason=DropReason.NOT_HTML,
                drop_detail=item.refused,
            )
        else:
            doc = extract(data, url, config, http_charset=item.http_charset or args.encoding)
        outcomes[str(doc.drop_reason) if doc.drop_reason else "kept"] += 1
        if doc.drop_reason is not None and item.refused is None:
            last_drop = f"{name}: no text kept: {doc.drop_reason}" + (
                f" ({doc.drop_detail})" if doc.drop_detail else ""
            )
        _write(out, name, data, doc, args, fetched_at=item.fetched_at)
        now = time.monotonic()
        if now - last_report > 5 and sys.stderr.isatty():
            last_report = now
            print(f"  {count} pages, {count / (now - started):.0f} pages/s", file=sys.stderr)
    if sum(outcomes.values()) == 1 and last_drop:
        # one page and no output: say why, or the silence looks like a bug
        print(f"corpus-crawler extract: {last_drop}", file=sys.stderr)
    elif args.verbose or sum(outcomes.values()) > 1 or input_stats:
        summary = ", ".join(
            f"{k}: {v}" for k, v in [*sorted(outcomes.items()), *sorted(input_stats.items())]
        )
        print(f"corpus-crawler extract: {summary}", file=sys.stderr)
    return 1 if failures else 0


def _write(
    out: TextIO,
    name: str,
    data: bytes,
    doc: Document,
    args: argparse.Namespace,
    *,
    fetched_at: datetime | None = None,
) -> None:
    fmt = args.format
    if fmt == "text":
        if doc.text:
            out.write(doc.text + "\n")
    elif fmt == "detailed":
        out.write(format_detailed(name, doc))
    elif fmt == "json":
        out.write(json.dumps(document_json(name, doc), ensure_ascii=False) + "\n")
    elif fmt == "html":
        if doc.html is None:
            raise SystemExit("corpus-crawler extract: --format html needs --extractor declutter")
        out.write(doc.html + "\n")
    else:
        from .vertical import DocMeta, VerticalFormat, format_document

        meta = DocMeta(
            doc_id=hashlib.sha1(data).hexdigest()[:16],
            crawl_date=fetched_at or _mtime(name),
            url=doc.url or name,
        )
        text = format_document(
            doc,
            meta,
            format=VerticalFormat.PREVERTICAL if fmt == "prevertical" else VerticalFormat.VERTICAL,
            all_paragraphs=args.all_paragraphs,
        )
        if text:
            out.write(text)


def _mtime(name: str) -> datetime:
    try:
        return datetime.fromtimestamp(Path(name).stat().st_mtime, tz=timezone.utc)
    except OSError:
        return datetime.now(timezone.utc)


def format_detailed(name: str, doc: Document) -> str:
    lines = [
        f"== {name}",
        f"   language={doc.language or '-'} confidence={_num(doc.language_confidence)}"
        f" encoding={doc.encoding} declared={doc.declared_encoding or '-'}"
        f" extractor={doc.extractor} preset={doc.preset}"
        f" kept={'yes' if doc.kept else 'no (' + str(doc.drop_reason) + ')'}",
        f"   title={doc.title or '-'} published={doc.published or '-'}",
        "   class     cf_class  head  chars  words  links  stopw  xpath",
    ]
    for p in doc.paragraphs:
        head = "h1" if p.headline else "h" if p.heading else "-"
        lines.append(
            f"   {p.final_class.value:<9} {p.cf_class.value:<9} {head:<5}"
            f" {p.length:>5} {p.word_count:>6} {p.link_density:>6.2f} {p.stopword_density:>6.2f}"
            f"  {p.xpath}"
        )
        lines.append("      " + p.text.replace("\n", "\n      "))
    return "\n".join(lines) + "\n"


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def document_json(name: str, doc: Document) -> dict[str, Any]:
    return {
        "source": name,
        "url": doc.url,
        "title": doc.title,
        "published": doc.published,
        "language": doc.language,
        "language_confidence": doc.language_confidence,
        "encoding": doc.encoding,
        "declared_encoding": doc.declared_encoding,
        "extractor": doc.extractor,
        "preset": doc.preset,
        "raw_size": doc.raw_size,
        "drop_reason": str(doc.drop_reason) if doc.drop_reason else None,
        "drop_detail": doc.drop_detail or None,
        "text": doc.text,
        "paragraphs": [
            {
                "text": p.text,
                "class": p.final_class.value,
                "cf_class": p.cf_class.value,
                "heading": p.heading,
                "headline": p.headline,
                "kind": p.kind,
                "length": p.length,
                "words": p.word_count,
                "link_density": round(p.link_density, 4),
                "stopword_density": round(p.stopword_density, 4),
                "dom_path": p.dom_path,
                "xpath": p.xpath,
                **({"scores": dict(p.scores)} if p.scores else {}),
            }
            for p in doc.paragraphs
        ],
    }
