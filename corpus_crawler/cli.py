"""`corpus-crawler` command line.

Each subcommand lives in its own module with two functions,
`register(subparsers)` and the handler it sets as `func`. Modules are imported
only when their subcommand is named (or for `--help`), so the library side
never pulls in Scrapy: `crawl` and `demo` are implemented in `pipelines/`.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Sequence

from . import __version__

#: subcommand -> module that registers it
SUBCOMMANDS: dict[str, str] = {
    "extract": "corpus_crawler._cli_extract",
    "evaluate": "corpus_crawler._cli_evaluate",
    "stoplist": "corpus_crawler._cli_stoplist",
    "report": "corpus_crawler._cli_report",
    "dedup": "corpus_crawler._cli_dedup",
    "crawl": "pipelines.cli",
    "demo": "pipelines.cli",
    "process": "corpus_crawler._cli_process",
}


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="corpus-crawler",
        description="Crawl the web into clean text corpora (WARC + vertical files).",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more log output")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    seen: set[str] = set()
    for name, module_name in SUBCOMMANDS.items():
        if only is not None and name != only:
            continue
        if module_name in seen:
            continue
        seen.add(module_name)
        module = importlib.import_module(module_name)
        module.register(subparsers)
    return parser


#: What a subcommand exits with when Ctrl-C stops it (`crawl` documents 5 for any
#: interruption, also one that comes before the crawl has started).
INTERRUPTED_EXIT: dict[str, int] = {"crawl": 5}


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    command = next((a for a in args_list if not a.startswith("-")), None)
    try:
        return _run(args_list, command)
    except KeyboardInterrupt:
        program = f"corpus-crawler {command}" if command in SUBCOMMANDS else "corpus-crawler"
        print(f"{program}: interrupted", file=sys.stderr)
        return INTERRUPTED_EXIT.get(command or "", 130)


def _run(args_list: list[str], command: str | None) -> int:
    parser = build_parser(only=command if command in SUBCOMMANDS else None)
    args = parser.parse_args(args_list)
    logging.basicConfig(
        level=logging.WARNING - 10 * min(args.verbose, 2),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except BrokenPipeError:
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
