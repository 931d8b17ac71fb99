"""`corpus-crawler report OUTDIR`: the HTML report of the crawl in an output folder."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ._cli_checks import output_file_problem
from .report import find_crawl_files, load_summary, write_report


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "report",
        help="write the HTML report of a crawl from its crawl log and summary",
        description=(
            "Read the crawl log (*.crawl.log) and JSON summary of the latest crawl in OUTDIR"
            " and write a self-contained HTML report with plots beside them."
        ),
    )
    parser.add_argument("outdir", metavar="OUTDIR", help="a crawl's output folder")
    parser.add_argument(
        "--log",
        action="append",
        default=[],
        metavar="FILE",
        help="crawl log(s) to read instead of the latest in OUTDIR (repeatable)",
    )
    parser.add_argument("-o", "--output", metavar="FILE", help="the report file to write")
    parser.add_argument("--title", default="", help="the report's title")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    directory = Path(args.outdir)
    if not directory.is_dir():
        print(f"corpus-crawler report: {directory} is not a folder", file=sys.stderr)
        return 2
    logs, summary_path = find_crawl_files(directory)
    if args.log:
        logs = [Path(name) for name in args.log]
    if not logs:
        print(
            f"corpus-crawler report: no crawl log (*.crawl.log) in {directory}: crawl with"
            " output.crawl_log: true (the default), or name one with --log",
            file=sys.stderr,
        )
        return 2
    name = logs[-1].name.removesuffix(".crawl.log")
    target = Path(args.output) if args.output else directory / f"{name}.report.html"
    problems = [f"--log {log}: no such file" for log in logs if not log.is_file()]
    problems.append(output_file_problem(target, "-o") or "")
    if any(problems):
        for problem in filter(None, problems):
            print(f"corpus-crawler report: {problem}", file=sys.stderr)
        return 2
    summary = load_summary(summary_path)
    title = args.title or f"Crawl report: {(summary or {}).get('profile') or directory.name}"
    try:
        write_report(logs, target, summary=summary, title=title)
    except (OSError, ValueError) as exc:
        print(f"corpus-crawler report: {exc}", file=sys.stderr)
        return 1
    print(target)
    return 0
