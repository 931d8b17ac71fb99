"""`corpus-crawler extract PATH...`: the extractor on files or standard input."""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TextIO

from .config import EXTRACTORS, ConfigError, ExtractConfig, JustextParams, Preset
from .extract import extract
from .model import Document

FORMATS = ("text", "detailed", "json", "prevertical", "vertical", "html")
_HTML_SUFFIXES = {".html", ".htm", ".xhtml", ".shtml", ".php", ".asp", ".aspx", ".jsp"}


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "extract",
        help="extract clean paragraphs from HTML files",
        description="Extract the main text of HTML pages (files, folders, or - for stdin).",
    )
    parser.add_argument(
        "paths",
        nargs="*",
        default=["-"],
        metavar="PATH",
        help="HTML files, folders of them, or - for standard input (default)",
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
    parser.add_argument("--url", help="the page's URL (recorded in json/vertical output)")
    parser.set_defaults(func=run)


def add_extractor_arguments(parser: argparse.ArgumentParser) -> None:
    """Options shared by `extract` and `evaluate`."""
    parser.add_argument("--extractor", choices=EXTRACTORS, default="justext")
    parser.add_argument(
        "--preset",
        choices=[p.value for p in Preset],
        default=Preset.SEED.value,
        help="seed: the algorithm of the specification (default); reference:"
        " output identical to jusText 3.0.2; language-independent: no stoplist",
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
    accept = None
    if args.accept_lang:
        from .stoplists import resolve_language

        accept = frozenset(
            _accept_code(c.strip(), resolve_language)
            for c in args.accept_lang.split(",")
            if c.strip()
        )
    return ExtractConfig(
        extractor=args.extractor,
        preset=Preset.parse(args.preset),
        language=lang,
        params=params,
        stoplist_path=args.stoplist,
        accept_languages=accept,
    ).checked()


def _accept_code(code: str, resolve: Any) -> str:
    """A stoplist language's code, or a plain ISO 639 code (ja, zh) langid can name."""
    try:
        return str(resolve(code))
    except ConfigError:
        if code.isascii() and code.isalpha() and len(code) in (2, 3):
            return code.lower()
        raise


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


def _inputs(paths: Sequence[str]) -> Iterator[tuple[str, bytes | None, str | None]]:
    """(name, bytes or None, error) for every input, folders expanded in sorted order."""
    for name in paths:
        if name == "-":
            yield "<stdin>", sys.stdin.buffer.read(), None
            continue
        path = Path(name)
        if path.is_dir():
            files = sorted(
                p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in _HTML_SUFFIXES
            )
            if not files:
                yield name, None, f"no HTML files ({', '.join(sorted(_HTML_SUFFIXES))}) in folder"
            for file in files:
                yield from _read(file)
        else:
            yield from _read(path)


def _read(path: Path) -> Iterator[tuple[str, bytes | None, str | None]]:
    try:
        yield str(path), path.read_bytes(), None
    except OSError as exc:
        yield str(path), None, exc.strerror or str(exc)


def run(args: argparse.Namespace) -> int:
    try:
        config = config_from_args(args)
    except ConfigError as exc:
        print(f"corpus-crawler extract: {exc}", file=sys.stderr)
        return 2
    out = sys.stdout
    failures = 0
    outcomes: Counter[str] = Counter()
    started = time.monotonic()
    last_report = started
    for count, (name, data, error) in enumerate(_inputs(args.paths), 1):
        if data is None:
            print(f"corpus-crawler extract: {name}: {error}", file=sys.stderr)
            failures += 1
            continue
        doc = extract(data, args.url or None, config, http_charset=args.encoding)
        outcomes[str(doc.drop_reason) if doc.drop_reason else "kept"] += 1
        _write(out, name, data, doc, args)
        now = time.monotonic()
        if now - last_report > 5 and sys.stderr.isatty():
            last_report = now
            print(f"  {count} pages, {count / (now - started):.0f} pages/s", file=sys.stderr)
    if args.verbose or sum(outcomes.values()) > 1:
        summary = ", ".join(f"{k}: {v}" for k, v in sorted(outcomes.items()))
        print(f"corpus-crawler extract: {summary}", file=sys.stderr)
    return 1 if failures else 0


def _write(out: TextIO, name: str, data: bytes, doc: Document, args: argparse.Namespace) -> None:
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
            crawl_date=_mtime(name),
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
        f"   title={doc.title or '-'}",
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
