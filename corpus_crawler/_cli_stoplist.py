"""`corpus-crawler stoplist`: list, show and build stop-word lists.

``build`` makes a list for a language jusText has none for (or a better one from
your own text): give it plain text in that language, ideally a few megabytes of
running prose, and it keeps the most frequent words that together make up half of
all tokens, as jusText's lists were made from Wikipedia.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from .config import ConfigError
from .stoplists import (
    DEFAULT_COVERAGE,
    DEFAULT_MIN_COUNT,
    LanguageConfig,
    StopwordFrequency,
    WordCounts,
    available_languages,
    count_words,
    load_language,
    render_language_yaml,
    select_stopwords,
)

#: exit status for bad input or settings (argparse uses the same)
_USAGE = 2


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "stoplist",
        help="list, show or build stop-word lists",
        description="Stop-word lists of the 100 shipped languages, and a builder for new ones.",
    )
    commands = parser.add_subparsers(dest="stoplist_command", metavar="ACTION")
    parser.set_defaults(func=lambda args: _help(parser))

    listing = commands.add_parser("list", help="print code, name and word count of every language")
    listing.set_defaults(func=handle_list)

    show = commands.add_parser("show", help="print the stop words of one language")
    show.add_argument("language", metavar="CODE", help="ISO code or jusText name, e.g. en, English")
    show.set_defaults(func=handle_show)

    build = commands.add_parser(
        "build",
        help="build a stoplist from sample text",
        description=(
            "Count the words of plain-text samples (lower-cased, numbers ignored) and keep"
            " the most frequent ones until together they make up --coverage of all tokens,"
            " the method jusText's lists were made with (from Wikipedia, coverage 0.5)."
        ),
    )
    build.add_argument(
        "samples",
        nargs="+",
        metavar="SAMPLE",
        help="UTF-8 text files, or - for standard input",
    )
    build.add_argument(
        "--coverage",
        type=_coverage,
        default=DEFAULT_COVERAGE,
        help=f"share of all tokens the kept words must cover (default {DEFAULT_COVERAGE})",
    )
    build.add_argument(
        "--max-words", type=_positive, metavar="N", help="keep at most N words (default: no limit)"
    )
    build.add_argument(
        "--min-count",
        type=_positive,
        default=DEFAULT_MIN_COUNT,
        metavar="N",
        help=f"never keep a word seen fewer than N times (default {DEFAULT_MIN_COUNT})",
    )
    build.add_argument("--code", help="language code written to a YAML output (default: its name)")
    build.add_argument("--name", help="language name written to a YAML output (default: the code)")
    build.add_argument(
        "-o",
        "--output",
        type=Path,
        metavar="OUT",
        help="write here: the language YAML layout if OUT ends in .yaml/.yml, else one word per"
        " line, most frequent first (default: words on standard output)",
    )
    build.set_defaults(func=handle_build)


def _help(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return _USAGE


def _coverage(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 < value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be in (0, 1], got {text} (jusText used 0.5)")
    return value


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _error(message: str) -> int:
    print(f"corpus-crawler stoplist: error: {message}", file=sys.stderr)
    return _USAGE


def handle_list(args: argparse.Namespace) -> int:
    languages = available_languages()
    width = max((len(code) for code in languages), default=4)
    for code, name in languages.items():
        count = len(load_language(code).stoplist)
        print(f"{code:<{width}}  {name:<24} {count:>6}")
    return 0


def handle_show(args: argparse.Namespace) -> int:
    try:
        config = load_language(args.language)
    except ConfigError as exc:
        return _error(str(exc))
    sys.stdout.write("".join(f"{word}\n" for word in sorted(config.stoplist)))
    return 0


class _Sample:
    """Lines of the samples, decoded as UTF-8; undecodable bytes are replaced and counted."""

    def __init__(self, names: list[str]) -> None:
        self.names = names
        self.replaced: dict[str, int] = {}

    def lines(self) -> Iterator[str]:
        for name in self.names:
            if name == "-":
                yield from self._decode("standard input", sys.stdin.buffer)
                continue
            with open(name, "rb") as stream:
                yield from self._decode(name, stream)

    def _decode(self, name: str, stream: BinaryIO) -> Iterator[str]:
        first = True
        # UTF-8 never has a newline byte inside a character, so decoding line by line is exact
        for raw in stream:
            if first:
                raw = raw.removeprefix(b"\xef\xbb\xbf")
                first = False
            try:
                yield raw.decode("utf-8")
            except UnicodeDecodeError:
                self.replaced[name] = self.replaced.get(name, 0) + 1
                yield raw.decode("utf-8", errors="replace")


def handle_build(args: argparse.Namespace) -> int:
    for name in args.samples:
        if name != "-" and not os.path.isfile(name):
            problem = "is a directory" if os.path.isdir(name) else "does not exist"
            return _error(f"sample {name} {problem}")
    sample = _Sample(args.samples)
    try:
        counts = count_words(sample.lines())
    except OSError as exc:
        return _error(f"cannot read {exc.filename or 'a sample'}: {exc.strerror or exc}")
    for name, lines in sample.replaced.items():
        print(
            f"warning: {name}: {lines} line(s) were not valid UTF-8; bad bytes became U+FFFD."
            " Convert the sample first, e.g. `iconv -f latin1 -t utf-8`.",
            file=sys.stderr,
        )
    if not any(any(ch.isalpha() for ch in word) for word in counts.counts):
        return _error("the samples contain no words: give plain text in the language")
    kept = select_stopwords(counts, args.coverage, args.max_words, args.min_count)
    if not kept:
        return _error(
            f"no word occurs {args.min_count} times or more: give a larger sample"
            " or lower --min-count"
        )
    try:
        _write(args, kept, counts)
    except OSError as exc:
        return _error(f"cannot write {args.output}: {exc.strerror or exc}")
    except ConfigError as exc:
        return _error(str(exc))
    _summary(args, kept, counts)
    return 0


def _write(args: argparse.Namespace, kept: list[StopwordFrequency], counts: WordCounts) -> None:
    output: Path | None = args.output
    if output is None:
        sys.stdout.write("".join(f"{entry.word}\n" for entry in kept))
        return
    if output.suffix.lower() in (".yaml", ".yml"):
        code = args.code or output.stem
        config = LanguageConfig(
            code=code,
            name=args.name or code,
            stoplist=frozenset(entry.word for entry in kept),
        )
        header = (
            f"# Built by `corpus-crawler stoplist build` from {counts.tokens} tokens:"
            f" the {len(kept)} most frequent words,\n# covering {kept[-1].cumulative:.1%}"
            f" of the sample (asked for {args.coverage:.0%}).\n"
        )
        text = render_language_yaml(config, header=header)
    else:
        text = "".join(f"{entry.word}\n" for entry in kept)
    _write_atomically(output, text)


def _write_atomically(path: Path, text: str) -> None:
    """Write beside `path`, then rename: a crash never leaves half a stoplist."""
    folder = path.parent if str(path.parent) else Path(".")
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".open", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as stream:
            stream.write(text)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


def _summary(args: argparse.Namespace, kept: list[StopwordFrequency], counts: WordCounts) -> None:
    reached = kept[-1].cumulative
    where = f" to {args.output}" if args.output else ""
    print(
        f"{counts.tokens} tokens read, {len(counts.counts)} distinct words,"
        f" {len(kept)} words kept{where}, coverage {reached:.1%}",
        file=sys.stderr,
    )
    if reached < args.coverage:
        limit = "--max-words" if args.max_words and len(kept) >= args.max_words else "--min-count"
        print(
            f"note: coverage {args.coverage:.0%} not reached ({limit} stopped it);"
            " a larger sample gives a list closer to jusText's",
            file=sys.stderr,
        )
