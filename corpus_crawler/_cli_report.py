"""`corpus-crawler report OUTDIR`: every run of the campaign in an output folder.

Prints the runs (first crawl, resumes, recrawls) one line each with their totals, the
latest marked, as text or `--json`, and writes the HTML report over all their crawl
logs beside them. `--latest` keeps to the latest run (every file of its crawl log), as
the crawl's own report does.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ._cli_checks import output_file_problem
from .report import campaign_crawl_logs, find_crawl_files, load_summary, write_report


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "report",
        help="summarise every run of a crawl campaign and write its HTML report",
        description=(
            "Print every run of the campaign in OUTDIR (first crawl, resumes, recrawl"
            " passes: pages fetched, documents, words, drops by reason, duration; the"
            " latest marked) and their total, then write a self-contained HTML report with"
            " plots over the crawl logs of all runs beside them."
        ),
    )
    parser.add_argument("outdir", metavar="OUTDIR", help="a crawl's output folder")
    parser.add_argument(
        "--log",
        action="append",
        default=[],
        metavar="FILE",
        help="crawl log(s) to draw the HTML report from instead of OUTDIR's (repeatable)",
    )
    parser.add_argument(
        "--latest",
        action="store_true",
        help="only the latest run (its crawl log and summary), as the crawl's own report",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="print the runs and their totals as JSON instead of the text table",
    )
    parser.add_argument("-o", "--output", metavar="FILE", help="the report file to write")
    parser.add_argument("--title", default="", help="the report's title")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from .report_runs import campaign_report, render_text

    directory = Path(args.outdir)
    if not directory.is_dir():
        print(f"corpus-crawler report: {directory} is not a folder", file=sys.stderr)
        return 2
    latest_logs, summary_path = find_crawl_files(directory)
    logs = latest_logs if args.latest else campaign_crawl_logs(directory)
    if args.log:
        logs = [Path(name) for name in args.log]
    if not logs:
        message = (
            f"no crawl log (*.crawl.log) in {directory}: crawl with"
            " output.crawl_log: true (the default), or name one with --log"
        )
        campaign = campaign_report(directory)
        if not campaign.runs:
            print(f"corpus-crawler report: {message}", file=sys.stderr)
            return 2
        # the runs' summaries still tell pages, documents, words and drops
        if args.latest:
            campaign = type(campaign)(campaign.folder, campaign.profile, campaign.runs[-1:])
        if args.json:
            print(json.dumps(dict(campaign.to_json(), report=None), indent=2))
        else:
            print(render_text(campaign), end="")
        print(f"corpus-crawler report: no HTML report: {message}", file=sys.stderr)
        return 0
    # named after the run's first crawl-log file, as the crawl's own report
    name = (latest_logs or logs)[0].name.removesuffix(".open").removesuffix(".crawl.log")
    default_name = f"{name}.report.html" if args.latest else f"{name}.campaign-report.html"
    target = Path(args.output) if args.output else directory / default_name
    problems = [f"--log {log}: no such file" for log in logs if args.log and not log.is_file()]
    problems.append(output_file_problem(target, "-o") or "")
    if any(problems):
        for problem in filter(None, problems):
            print(f"corpus-crawler report: {problem}", file=sys.stderr)
        return 2
    try:
        summary = load_summary(summary_path)
    except (OSError, ValueError) as exc:
        print(f"corpus-crawler report: cannot read {summary_path}: {exc}", file=sys.stderr)
        return 1
    campaign = campaign_report(directory)
    if args.latest and campaign.runs:
        campaign = type(campaign)(campaign.folder, campaign.profile, campaign.runs[-1:])
    title = args.title or f"Crawl report: {(summary or {}).get('profile') or directory.name}"
    try:
        write_report(
            logs,
            target,
            summary=summary,
            title=title,
            campaign=campaign if campaign.runs else None,
        )
    except (OSError, ValueError) as exc:
        print(f"corpus-crawler report: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(dict(campaign.to_json(), report=str(target)), indent=2))
    else:
        print(render_text(campaign), end="")
        print(f"HTML report: {target}")
    return 0
